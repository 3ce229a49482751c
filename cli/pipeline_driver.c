/* memprof pipeline's driver (see pipeline_driver.h). */
#include "cli/pipeline_driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/bench_stats.h"
#include "cli/call_orders.h"
#include "engine/memory/plan.h"

/* "A.OUT=B.IN": models numbered from 1, OUT and IN a name or an index. */
static int connect_one(mp_pipeline *p, const char *spec)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", spec);
    char *eq = strchr(buf, '=');
    char *d1 = strchr(buf, '.');
    char *d2 = eq ? strchr(eq + 1, '.') : NULL;
    long a, b;
    if (!eq || !d1 || d1 > eq || !d2)
        return mp_usage_error("pipeline", "--connect takes A.OUTPUT=B.INPUT (models numbered "
                                          "from 1), got '%s'", spec);
    *eq = *d1 = *d2 = 0;
    if (!mp_parse_int(buf, 1, MP_PIPE_MAX_MODELS, &a) || !mp_parse_int(eq + 1, 1, MP_PIPE_MAX_MODELS, &b))
        return mp_usage_error("pipeline", "--connect '%s': models are numbered 1..%d", spec,
                              mp_pipeline_model_count(p));
    mp_error err = {0};
    if (mp_pipeline_connect(p, (int)a - 1, d1 + 1, (int)b - 1, d2 + 1, &err) != MP_OK)
        return mp_usage_error("pipeline", "--connect '%s': %s", spec, err.msg);
    return MP_EXIT_OK;
}

/* Fill and hand over the first model's inputs for its current shapes. */
static int feed(mp_pipeline *p, mp_cli_inputs *in)
{
    mp_session *s0 = mp_pipeline_session(p, 0);
    mp_error err = {0};
    for (int k = 0; k < mp_session_input_count(s0); k++) {
        int rc = mp_cli_inputs_fill(s0, in, k);
        if (rc != MP_EXIT_OK)
            return rc;
        if (mp_pipeline_set_input(p, k, in->buf[k].p, in->buf[k].cap, &err) != MP_OK)
            return mp_report_error(&err);
    }
    return MP_EXIT_OK;
}

/* The call order of --shape-at, timed (the shared player's steps, on the chain). */
static int play(mp_pipeline *p, const mp_pipe_args *a, mp_shape_args *sp, mp_cli_inputs *in,
                uint64_t *times, mp_trace *tr)
{
    mp_session *s0 = mp_pipeline_session(p, 0);
    mp_error err = {0};
    int rc = mp_shapes_before_prepare(s0, sp, a->m.at);
    if (rc == MP_EXIT_OK)
        rc = feed(p, in);
    if (rc != MP_EXIT_OK)
        return rc;
    if (mp_pipeline_prepare(p, &err) != MP_OK)
        return mp_report_error(&err);
    mp_trace_rss_sample(tr);
    rc = mp_shapes_after_prepare(s0, sp, a->m.at);
    long total = a->m.warmup + a->m.runs;
    if (a->progress)
        a->progress->total = total;
    for (long r = 0; r < total && rc == MP_EXIT_OK; r++) {
        rc = mp_shapes_before_run(s0, sp, a->m.at, r);
        if (rc == MP_EXIT_OK)
            rc = feed(p, in);
        if (rc != MP_EXIT_OK)
            break;
        uint64_t t0 = mp_now_ns();
        if (mp_pipeline_run(p, &err) != MP_OK)
            return mp_report_error(&err);
        if (r >= a->m.warmup)
            times[r - a->m.warmup] = mp_now_ns() - t0;
        mp_trace_rss_sample(tr);
        if (a->progress)
            mp_progress_step(a->progress, r + 1, "pipeline: run %ld of %ld", r + 1, total);
    }
    return rc;
}

/* Describe an edge's two ends for the report. */
static void ends(mp_pipeline *p, const mp_pipe_edge *e, mp_pipe_report_edge *re)
{
    if (e->from_model < 0)
        snprintf(re->from, sizeof re->from, "caller input %d", e->from_output);
    else
        snprintf(re->from, sizeof re->from, "model %d output %d '%s'", e->from_model + 1,
                 e->from_output,
                 mp_session_output(mp_pipeline_session(p, e->from_model), e->from_output)->info->name);
    if (e->to_model < 0)
        snprintf(re->to, sizeof re->to, "caller output %d", e->to_input);
    else
        snprintf(re->to, sizeof re->to, "model %d input %d '%s'", e->to_model + 1, e->to_input,
                 mp_session_input(mp_pipeline_session(p, e->to_model), e->to_input)->info->name);
}

/* The figures of the report, taken before the sessions go. */
static int gather(mp_pipeline *p, const mp_pipe_args *a, mp_pipe_result *r)
{
    int n = mp_pipeline_edge_count(p);
    r->edges = calloc((size_t)n + 1, sizeof *r->edges);
    r->reasons = calloc((size_t)n + 1, sizeof *r->reasons);
    if (!r->edges || !r->reasons) {
        fprintf(stderr, "memprof: out of memory\n");
        return MP_EXIT_RUNTIME;
    }
    const mp_pipe_edge *e = mp_pipeline_edges(p);
    bool all_bind = true, all_copy = true;
    for (int i = 0; i < n; i++) {
        mp_pipe_report_edge *re = &r->edges[i];
        ends(p, &e[i], re);
        snprintf(r->reasons[i], sizeof r->reasons[i], "%s", e[i].reason);
        re->io = e[i].io == MP_PIPE_BIND ? "bind" : "copy";
        re->bound = e[i].bound;
        re->why = mp_pipe_why_name(e[i].why);
        re->reason = r->reasons[i];
        re->copies = e[i].copies;
        re->copy_bytes = e[i].copy_bytes;
        re->runs = e[i].runs;
        all_bind &= e[i].io == MP_PIPE_BIND;
        all_copy &= e[i].io == MP_PIPE_COPY;
    }
    for (int k = 0; k < a->n_models; k++) {
        mp_session *s = mp_pipeline_session(p, k);
        const mp_model *m = mp_session_model(s);
        mp_session_memory mi;
        mp_session_memory_info(s, &mi);
        r->models[k] = (mp_pipe_report_model){a->models[k], m->n_ops,
                                              m->n_inputs, m->n_outputs, mi.arena_bytes};
    }
    mp_pipe_arena ar;
    mp_pipeline_arena(p, &ar);
    mp_pipe_report *rep = &r->rep;
    rep->n_models = a->n_models;
    rep->models = r->models;
    rep->n_edges = n;
    rep->edges = r->edges;
    rep->mode = mp_memory_mode_name(a->m.mode);
    rep->planner = a->m.planner ? a->m.planner : mp_planner_default()->name;
    rep->io = all_bind ? "bind" : all_copy ? "copy" : "mixed";
    rep->threads = a->m.threads;
    rep->runs = a->m.runs;
    rep->warmup = a->m.warmup;
    rep->share_arena = a->share_arena;
    rep->arena_planned = ar.planned;
    rep->chain_arena_bytes = ar.chain_bytes;
    rep->chain_lower_bound_bytes = ar.chain_lower_bound;
    rep->separate_arena_bytes = ar.separate_bytes;
    rep->boundary_bytes = ar.boundary_bytes;
    rep->arena_plans = ar.plans;
    rep->first_run_ns = r->times[0];
    mp_stats st;
    mp_stats_compute(r->times, (size_t)a->m.runs, &st);
    rep->median_ns = (uint64_t)st.median_ns;
    rep->min_ns = (uint64_t)st.min_ns;
    rep->mean_ns = (uint64_t)st.mean_ns;
    return MP_EXIT_OK;
}

int mp_cli_pipeline_drive(const mp_pipe_args *a, mp_pipe_result *r)
{
    memset(r, 0, sizeof *r);
    mp_error err = {0};
    mp_trace *tr = a->record ? mp_trace_create() : NULL;
    mp_shape_args *sp = calloc(1, sizeof *sp);
    mp_cli_inputs *in = calloc(1, sizeof *in);
    r->times = calloc((size_t)a->m.runs + 1, sizeof *r->times);
    mp_pipeline *p = NULL;
    int rc = MP_EXIT_OK;
    if (!sp || !in || !r->times || (a->record && !tr)) {
        fprintf(stderr, "memprof: out of memory\n");
        rc = MP_EXIT_RUNTIME;
        goto done;
    }
    mp_pipe_options o = {.threads = (int)a->m.threads, .mode = a->m.mode,
                         .planner = a->m.planner, .trace = tr, .io = a->io,
                         .share_arena = a->share_arena};
    if (mp_pipeline_create(&o, a->n_models, a->models, &p, &err) != MP_OK) {
        rc = mp_report_error(&err);
        goto done;
    }
    for (int i = 0; i < a->n_connect && rc == MP_EXIT_OK; i++)
        rc = connect_one(p, a->connect[i]);
    for (int i = 0; i < a->n_io_edge && rc == MP_EXIT_OK; i++)
        if (mp_pipeline_set_edge_io(p, a->io_edge[i], a->io_edge_mode[i], &err) != MP_OK)
            rc = err.status == MP_ERR_ARG ? mp_usage_error("pipeline", "--io: %s", err.msg)
                                          : mp_report_error(&err);
    mp_session *s0 = rc == MP_EXIT_OK ? mp_pipeline_session(p, 0) : NULL;
    if (rc == MP_EXIT_OK)
        rc = mp_cli_collect_shapes(s0, "pipeline", (const char *const *)a->m.shapes,
                                   a->m.n_shapes, sp);
    if (rc == MP_EXIT_OK)
        rc = mp_shape_at_check("pipeline", sp, a->m.at);
    if (rc == MP_EXIT_OK)
        rc = mp_cli_inputs_files(s0, "pipeline", (const char *const *)a->m.inputs,
                                 a->m.n_inputs, in);
    if (rc == MP_EXIT_OK)
        rc = mp_cli_inputs_fills(s0, "pipeline", (const char *const *)a->m.fills,
                                 a->m.n_fills, in);
    if (rc == MP_EXIT_OK)
        rc = play(p, a, sp, in, r->times, tr);
    if (rc == MP_EXIT_OK)
        rc = gather(p, a, r);
    if (rc == MP_EXIT_OK && mp_pipeline_close(p, tr ? &r->trace : NULL, &err) != MP_OK)
        rc = mp_report_error(&err);
    if (rc == MP_EXIT_OK && r->trace) {
        mp_source *src = mp_source_of_trace(r->trace);
        if (!src || mp_chain_analyze(src, &r->chain, &err) != MP_OK) {
            fprintf(stderr, "memprof: %s\n", src ? err.msg : "out of memory");
            rc = MP_EXIT_RUNTIME;
        } else {
            r->have_chain = true;
            r->rep.chain = &r->chain;
        }
        mp_source_close(src);
    }
done:
    mp_pipeline_free(p);
    mp_trace_destroy(tr);
    if (in)
        mp_cli_inputs_release(in);
    free(in);
    free(sp);
    return rc;
}

void mp_cli_pipeline_result_free(mp_pipe_result *r)
{
    mp_chain_free(&r->chain);
    mp_trace_destroy(r->trace);
    free(r->edges);
    free(r->reasons);
    free(r->times);
    memset(r, 0, sizeof *r);
}
