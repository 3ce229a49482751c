/* memprof bench's driver (see bench_driver.h). */
#include "cli/bench_driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/summary.h"
#include "cli/cli.h"

const mp_memory_mode mp_bench_modes[MP_BENCH_MODES] = {MP_MEMORY_STATIC, MP_MEMORY_DYNAMIC,
                                                MP_MEMORY_AUTO};

/* Bytes the sessions and the peer have allocated now. */
static uint64_t recorded_now(mp_bench *b)
{
    uint64_t sum = 0;
    for (int i = 0; i < b->n; i++) {
        if (b->c[i].s)
            sum += mp_mem_get_stats(mp_session_mem(b->c[i].s))->live_total;
        if (b->c[i].p) {
            mp_xnn_peer_memory m;
            mp_xnn_peer_memory_info(b->c[i].p, &m);
            sum += m.live_bytes;
        }
    }
    return sum;
}

static void rss_sample(mp_bench *b, const char *what, const char *who)
{
    if (b->n_rss == MP_BENCH_RSS_STEPS)
        return;
    mp_bench_rss *r = &b->rss[b->n_rss];
    if (!mp_proc_rss(&r->rss, &r->hwm)) {
        b->rss_ok = false;
        return;
    }
    snprintf(r->label, sizeof r->label, "%s%s%s", what, who ? " " : "", who ? who : "");
    r->recorded = recorded_now(b);
    b->n_rss++;
}

/* Give the peer the inputs the auto session was fed (same shapes). */
static int peer_feed(mp_bench *b, mp_contestant *pc)
{
    mp_error err = {0};
    for (int k = 0; k < mp_xnn_peer_input_count(pc->p) && k < MP_CLI_MAX_INPUTS; k++)
        if (mp_xnn_peer_set_input(pc->p, k, b->in->buf[k].p, mp_xnn_peer_input_bytes(pc->p, k),
                                  &err) != MP_OK)
            return mp_report_error(&err);
    return MP_EXIT_OK;
}

/* Run contestant i once as round r; the time goes where the round says. */
static int run_once(mp_bench *b, mp_contestant *c, long r)
{
    mp_error err = {0};
    int rc;
    mp_xnn_peer_memory m0, m1;
    if (c->is_peer) {
        rc = peer_feed(b, c);
        mp_xnn_peer_memory_info(c->p, &m0);
    } else {
        rc = mp_shapes_before_run(c->s, b->sp, b->a->m.at, r);
        if (rc == MP_EXIT_OK)
            rc = mp_cli_inputs_feed(c->s, b->in);
    }
    if (rc != MP_EXIT_OK)
        return rc;
    uint64_t t0 = mp_now_ns(), dt = 0;
    mp_status st = c->is_peer ? mp_xnn_peer_run(c->p, &err) : mp_cli_timed_run(c->s, &dt, &err);
    if (c->is_peer)
        dt = mp_now_ns() - t0;
    if (st != MP_OK)
        return mp_report_error(&err);
    if (r == 0)
        c->first_ns = dt;
    else if (r > b->a->m.warmup)
        c->later[r - 1 - b->a->m.warmup] = dt;
    if (c->is_peer) { /* the peer's allocations per run, from its capture */
        mp_xnn_peer_memory_info(c->p, &m1);
        uint64_t n = (m1.n_alloc + m1.n_realloc) - (m0.n_alloc + m0.n_realloc);
        uint64_t bytes = m1.bytes_allocated - m0.bytes_allocated;
        mp_bench_row *w = &b->rows[c - b->c];
        if (r == 0) {
            w->first_allocs = n;
            w->first_bytes = bytes;
        } else {
            w->later_allocs = n > w->later_allocs ? n : w->later_allocs;
            w->later_bytes = bytes > w->later_bytes ? bytes : w->later_bytes;
        }
    }
    return MP_EXIT_OK;
}

static int make_peer(mp_bench *b)
{
    mp_error err = {0};
    mp_contestant *pc = &b->c[MP_BENCH_MODES];
    mp_xnn_peer_options o = {.threads = (int)b->a->m.threads, .threadpool = b->pool};
    uint64_t t0 = mp_now_ns();
    /* from the auto session after its first run: its shapes are those of the runs */
    if (mp_xnn_peer_create(b->c[MP_BENCH_MODES - 1].s, &o, &pc->p, &err) != MP_OK) {
        fprintf(stderr, "memprof bench: --peer xnnpack: %s\n", err.msg);
        return mp_exit_for(err.status);
    }
    pc->prepare_ns = mp_now_ns() - t0;
    return MP_EXIT_OK;
}

/* Load, prepare and run every contestant. */
int mp_bench_drive(mp_bench *b, const void *bytes, size_t size, mp_progress *pg)
{
    const mp_bench_args *a = b->a;
    int rc = MP_EXIT_OK;
    mp_error err = {0};
    rss_sample(b, "start", NULL);
    for (int i = 0; i < MP_BENCH_MODES && rc == MP_EXIT_OK; i++) {
        mp_contestant *c = &b->c[i];
        mp_session_options so = {.threads = (int)a->m.threads, .threadpool = b->pool,
                                 .mode = mp_bench_modes[i], .trace = c->tr,
                                 .no_huge_pages = a->no_huge_pages, .plan_at = a->plan_at,
                                 .no_in_place = a->m.no_in_place};
        rc = mp_cli_session_open(a->model, bytes, size, &so, &c->s, &c->load_ns);
        if (rc != MP_EXIT_OK)
            break;
        rss_sample(b, "load", c->name);
        if (i == 0) { /* names of inputs, and shapes that the call order can play */
            rc = mp_cli_collect_shapes(c->s, "bench", (const char *const *)a->m.shapes,
                                       a->m.n_shapes, b->sp);
            if (rc == MP_EXIT_OK)
                rc = mp_shape_at_check("bench", b->sp, a->m.at);
            if (rc == MP_EXIT_OK)
                rc = mp_cli_inputs_files(c->s, "bench", (const char *const *)a->m.inputs,
                                         a->m.n_inputs, b->in);
            if (rc == MP_EXIT_OK)
                rc = mp_cli_inputs_fills(c->s, "bench", (const char *const *)a->m.fills,
                                         a->m.n_fills, b->in);
        }
    }
    for (int i = 0; i < MP_BENCH_MODES && rc == MP_EXIT_OK; i++) {
        mp_contestant *c = &b->c[i];
        rc = mp_shapes_before_prepare(c->s, b->sp, a->m.at);
        if (rc != MP_EXIT_OK)
            break;
        uint64_t t0 = mp_now_ns();
        if (mp_session_prepare(c->s, &err) != MP_OK) {
            rc = mp_report_error(&err);
            break;
        }
        c->prepare_ns = mp_now_ns() - t0;
        rss_sample(b, "prepare", c->name);
        rc = mp_shapes_after_prepare(c->s, b->sp, a->m.at);
    }
    long total = 1 + a->m.warmup + a->m.runs;
    pg->total = total;
    /* round 0, the first runs, in order (the peer is made from the auto session after its
     * first run); later rounds in the balanced order of mp_bench_order */
    for (int i = 0; i < b->n && rc == MP_EXIT_OK; i++) {
        mp_contestant *c = &b->c[i];
        if (c->is_peer) {
            rc = make_peer(b);
            if (rc != MP_EXIT_OK)
                break;
            rss_sample(b, "create", c->name);
        }
        rc = run_once(b, c, 0);
        if (rc == MP_EXIT_OK)
            rss_sample(b, "first run", c->name);
    }
    for (long r = 1; r < total && rc == MP_EXIT_OK; r++) {
        mp_progress_step(pg, r, "bench: round %ld of %ld", r + 1, total);
        for (int j = 0; j < b->n && rc == MP_EXIT_OK; j++)
            rc = run_once(b, &b->c[mp_bench_order(b->n, r - 1, j)], r);
    }
    if (rc == MP_EXIT_OK)
        rss_sample(b, "later runs", "(all)");
    return rc;
}

/* Statistics and memory figures, once the runs are over (sessions and peer destroyed). */
int mp_bench_conclude(mp_bench *b)
{
    mp_error err = {0};
    for (int i = 0; i < b->n; i++) {
        mp_contestant *c = &b->c[i];
        mp_bench_row *w = &b->rows[i];
        w->name = c->name;
        w->is_peer = c->is_peer;
        uint64_t one[3] = {c->load_ns, c->prepare_ns, c->first_ns};
        if (c->has_load)
            mp_stats_compute(&one[0], 1, &w->st[0]);
        mp_stats_compute(&one[1], 1, &w->st[1]);
        mp_stats_compute(&one[2], 1, &w->st[2]);
        mp_stats_compute(c->later, (size_t)b->a->m.runs, &w->st[3]);
        if (c->is_peer) {
            const mp_xnn_peer_memory *m = &c->pm;
            w->peak = m->peak_bytes;
            w->workspace = m->workspace_bytes;
            w->other = m->other_bytes;
            w->live = m->live_bytes;
            w->external = m->external_bytes;
            w->static_copy = m->static_copy_bytes;
            w->run_allocations = m->run_allocations;
            continue;
        }
        mp_summary sum;
        if (mp_summary_compute(c->tr, &sum, &err) != MP_OK)
            return mp_report_error(&err);
        w->first_allocs = sum.first_run.n_alloc;
        w->first_bytes = sum.first_run.bytes_alloc;
        w->later_allocs = sum.later_max.n_alloc;
        w->later_bytes = sum.later_max.bytes_alloc;
        w->peak = sum.peak_heap;
        w->static_bytes = sum.static_bytes;
        w->dynamic_bytes = sum.dynamic_bytes;
        w->dup_bytes = sum.dup_bytes;
        mp_summary_free(&sum);
    }
    return MP_EXIT_OK;
}

