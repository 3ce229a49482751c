/* memprof scenarios' driver (see scenarios_driver.h). */
#include "cli/scenarios_driver.h"

#include <stdio.h>
#include <string.h>

#include "analyzers/summary.h"
#include "cli/cli.h"

/* The shape lists of each case from the user's lists u and the model's shapes f (one per
 * input: f->n[k] = 1). */
void mp_scenario_case_shapes(int c, const mp_shape_args *u, const mp_shape_args *f, int n_in,
                             mp_shape_args *sp, mp_shape_at *at)
{
    memset(sp->n, 0, sizeof sp->n);
    *at = c == 0 || c == 1 ? MP_SHAPE_AT_PREPARE : c == 3 ? MP_SHAPE_AT_EACH_RUN : MP_SHAPE_AT_RUN;
    for (int k = 0; k < n_in && k < MP_CLI_MAX_INPUTS; k++) {
        if (c == 0 || !u->n[k])
            continue;
        /* the list: S1 [, S2 or F] [, S3...] */
        int want = c == 1 || c == 2 ? 1 : c == 4 ? 2 : (u->n[k] >= 2 ? u->n[k] : 2);
        for (int j = 0; j < want; j++) {
            const mp_shape_args *from = j < u->n[k] ? u : f;
            int jj = j < u->n[k] ? j : 0;
            sp->rank[k][j] = from->rank[k][jj];
            memcpy(sp->dims[k][j], from->dims[k][jj], sizeof sp->dims[k][j]);
        }
        sp->n[k] = want;
    }
}

/* Play one case in a fresh session. */
int mp_scenario_play(const mp_sc_args *a, const void *bytes, size_t size, mp_cli_inputs *in,
                     mp_sc_case *cs, uint64_t *times, mp_progress *pg)
{
    mp_error err = {0};
    mp_trace *tr = mp_trace_create();
    if (!tr) {
        fprintf(stderr, "memprof scenarios: out of memory\n");
        return MP_EXIT_RUNTIME;
    }
    mp_session_options so = {.threads = (int)a->m.threads, .mode = cs->mode, .trace = tr,
                             .keep_stale_arena = a->keep_stale, .plan_at = cs->plan_at};
    mp_session *s = NULL;
    int rc = mp_cli_session_open(a->model, bytes, size, &so, &s, NULL);
    if (rc == MP_EXIT_OK)
        rc = mp_shapes_before_prepare(s, cs->sp, cs->at);
    if (rc == MP_EXIT_OK && mp_session_prepare(s, &err) != MP_OK)
        rc = mp_report_error(&err);
    if (rc == MP_EXIT_OK)
        rc = mp_shapes_after_prepare(s, cs->sp, cs->at);
    long total = 1 + a->m.warmup + a->m.runs;
    for (long r = 0; r < total && rc == MP_EXIT_OK; r++) {
        mp_progress_step(pg, r, "scenarios: case %c, run %ld of %ld", cs->r.name, r + 1, total);
        rc = mp_shapes_before_run(s, cs->sp, cs->at, r);
        if (rc == MP_EXIT_OK)
            rc = mp_cli_inputs_feed(s, in);
        if (rc != MP_EXIT_OK)
            break;
        uint64_t dt = 0;
        if (mp_cli_timed_run(s, &dt, &err) != MP_OK) {
            rc = mp_report_error(&err);
            break;
        }
        if (r == 0)
            cs->r.first_ns = dt;
        else if (r > a->m.warmup)
            times[r - 1 - a->m.warmup] = dt;
    }
    if (rc == MP_EXIT_OK) {
        mp_session_memory mi;
        mp_session_memory_info(s, &mi);
        cs->r.plans_made = mi.plans_made;
        cs->r.plans_reused = mi.plans_reused;
        cs->r.arenas_made = mi.arenas_made;
        cs->r.arenas_unused = mi.arenas_unused;
        cs->r.mode = mp_memory_mode_name(cs->mode);
        cs->r.plan_at = cs->mode == MP_MEMORY_DYNAMIC ? NULL : mp_plan_at_name(mi.plan_at);
    }
    mp_session_destroy(s);
    if (rc == MP_EXIT_OK) {
        mp_summary sum;
        if (mp_summary_compute(tr, &sum, &err) != MP_OK) {
            rc = mp_report_error(&err);
        } else {
            mp_stats_compute(times, (size_t)a->m.runs, &cs->r.later);
            cs->r.static_bytes = sum.static_bytes;
            cs->r.dynamic_bytes = sum.dynamic_bytes;
            cs->r.peak_bytes = sum.peak_heap;
            cs->r.dup_bytes = sum.dup_bytes;
            cs->r.first_allocs = sum.first_run.n_alloc;
            cs->r.first_bytes = sum.first_run.bytes_alloc;
            cs->r.later_allocs = sum.later_max.n_alloc;
            cs->r.later_bytes = sum.later_max.bytes_alloc;
            cs->r.n_runs = sum.n_runs;
            cs->r.flag_dup = sum.dup_bytes > 0;
            cs->r.flag_alloc = cs->mode != MP_MEMORY_DYNAMIC && cs->r.name != 'D' &&
                             sum.later_max.n_alloc > 0;
            mp_summary_free(&sum);
        }
    }
    mp_trace_destroy(tr);
    return rc;
}

