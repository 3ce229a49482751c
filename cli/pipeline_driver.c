/* memprof pipeline's driver (see pipeline_driver.h). */
#include "cli/pipeline_driver.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/bench_stats.h"
#include "cli/call_orders.h"
#include "cli/run_outputs.h"
#include "engine/memory/plan.h"

/* The caller's side of the chain's inputs, per model with chain inputs (NULL for others):
 * its --shape lists and its input buffers (call_orders.h). */
typedef struct chain_feed {
    mp_shape_args *sp[MP_PIPE_MAX_MODELS];
    mp_cli_inputs *in[MP_PIPE_MAX_MODELS];
} chain_feed;

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

/* "K.IN": input IN of model K is the caller's (--chain-input). */
static int chain_input_one(mp_pipeline *p, const char *spec)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", spec);
    char *dot = strchr(buf, '.');
    long k;
    if (!dot || !dot[1])
        return mp_usage_error("pipeline", "--chain-input takes K.INPUT (models numbered from "
                                          "1), got '%s'", spec);
    *dot = 0;
    if (!mp_parse_int(buf, 1, mp_pipeline_model_count(p), &k))
        return mp_usage_error("pipeline", "--chain-input '%s': models are numbered 1..%d", spec,
                              mp_pipeline_model_count(p));
    mp_error err = {0};
    if (mp_pipeline_connect_caller(p, (int)k - 1, dot + 1, &err) != MP_OK)
        return mp_usage_error("pipeline", "--chain-input '%s': %s", spec, err.msg);
    return MP_EXIT_OK;
}

/* The model whose input the argument NAME=VALUE of flag names, and the argument for that
 * model's session: model 1's input NAME (a name or an index), as before chain inputs; else,
 * K.NAME (K.INDEX), chain input NAME of model K. A K.NAME naming an input an output feeds is
 * refused. */
static int route(mp_pipeline *p, const char *flag, const char *spec, int *model,
                 const char **arg)
{
    const char *eq = strrchr(spec, '=');
    char name[512];
    snprintf(name, sizeof name, "%.*s", (int)(eq ? eq - spec : (ptrdiff_t)strlen(spec)), spec);
    *model = 0;
    *arg = spec;
    char *dot = strchr(name, '.');
    long k;
    if (mp_session_find_input(mp_pipeline_session(p, 0), name) >= 0)
        return MP_EXIT_OK;
    for (int c = 0; !dot && c < mp_pipeline_input_count(p); c++) { /* a later model's name */
        int m, i;
        mp_pipeline_input_at(p, c, &m, &i);
        const char *nm = mp_session_input(mp_pipeline_session(p, m), i)->info->name;
        if (m > 0 && strcmp(nm, name) == 0)
            return mp_usage_error("pipeline", "%s '%s': model 1 has no input '%s'; model %d's "
                                  "chain input is named %d.%s", flag, spec, name, m + 1, m + 1,
                                  nm);
    }
    if (!dot)
        return MP_EXIT_OK;
    *dot = 0;
    if (!mp_parse_int(name, 0, 100000, &k))
        return MP_EXIT_OK; /* model 1's name, or none: its resolution says which */
    int n = mp_pipeline_model_count(p);
    if (k < 1 || k > n)
        return mp_usage_error("pipeline", "%s '%s': models are numbered 1..%d", flag, spec, n);
    mp_session *s = mp_pipeline_session(p, (int)k - 1);
    int i = mp_session_find_input(s, dot + 1);
    if (i < 0) {
        fprintf(stderr, "memprof pipeline: %s '%s': model %ld (%s) has no input '%s' (inputs:",
                flag, spec, k, mp_pipeline_model_name(p, (int)k - 1), dot + 1);
        for (int j = 0; j < mp_session_input_count(s); j++)
            fprintf(stderr, " %s", mp_session_input(s, j)->info->name);
        fprintf(stderr, ")\n");
        return MP_EXIT_USAGE;
    }
    if (mp_pipeline_input_index(p, (int)k - 1, i) < 0) {
        const mp_pipe_edge *e = mp_pipeline_edges(p);
        for (int j = 0; j < mp_pipeline_edge_count(p); j++)
            if (e[j].to_model == k - 1 && e[j].to_input == i && e[j].from_model >= 0)
                return mp_usage_error(
                    "pipeline", "%s '%s': model %ld input '%s' is fed by model %d output '%s', "
                    "not by the caller (--chain-input %ld.%s makes it a chain input)", flag,
                    spec, k, mp_session_input(s, i)->info->name, e[j].from_model + 1,
                    mp_session_output(mp_pipeline_session(p, e[j].from_model),
                                      e[j].from_output)->info->name,
                    k, mp_session_input(s, i)->info->name);
    }
    if (i >= MP_CLI_MAX_INPUTS)
        return mp_usage_error("pipeline", "%s '%s': memprof takes the first %d inputs of a "
                                          "model", flag, spec, MP_CLI_MAX_INPUTS);
    *model = (int)k - 1;
    *arg = spec + (dot + 1 - name);
    return MP_EXIT_OK;
}

/* The --shape, --input and --fill arguments routed to their models, each model's resolved
 * on its session as memprof run resolves them. */
static int collect(mp_pipeline *p, const mp_pipe_args *a, chain_feed *cf)
{
    const char *const *lists[3] = {(const char *const *)a->m.shapes,
                                   (const char *const *)a->m.inputs,
                                   (const char *const *)a->m.fills};
    const int counts[3] = {a->m.n_shapes, a->m.n_inputs, a->m.n_fills};
    static const char *const flags[3] = {"--shape", "--input", "--fill"};
    const char *mine[MP_MODEL_OPTS_MAX];
    int rc = MP_EXIT_OK;
    for (int w = 0; w < 3 && rc == MP_EXIT_OK; w++) {
        int model[MP_MODEL_OPTS_MAX];
        const char *arg[MP_MODEL_OPTS_MAX];
        for (int i = 0; i < counts[w] && rc == MP_EXIT_OK; i++)
            rc = route(p, flags[w], lists[w][i], &model[i], &arg[i]);
        for (int k = 0; k < mp_pipeline_model_count(p) && rc == MP_EXIT_OK; k++) {
            if (!cf->in[k])
                continue;
            int n = 0;
            for (int i = 0; i < counts[w]; i++)
                if (model[i] == k)
                    mine[n++] = arg[i];
            mp_session *s = mp_pipeline_session(p, k);
            if (w == 0)
                rc = mp_cli_collect_shapes(s, "pipeline", mine, n, cf->sp[k]);
            else if (w == 1)
                rc = mp_cli_inputs_files(s, "pipeline", mine, n, cf->in[k]);
            else
                rc = mp_cli_inputs_fills(s, "pipeline", mine, n, cf->in[k]);
            if (rc == MP_EXIT_OK && w == 0)
                rc = mp_shape_at_check("pipeline", cf->sp[k], a->m.at);
        }
    }
    return rc;
}

/* Fill and hand over the chain's inputs for their current shapes. */
static int feed(mp_pipeline *p, chain_feed *cf)
{
    mp_error err = {0};
    for (int c = 0; c < mp_pipeline_input_count(p); c++) {
        int k, i;
        mp_pipeline_input_at(p, c, &k, &i);
        if (i >= MP_CLI_MAX_INPUTS) {
            fprintf(stderr, "memprof pipeline: model %d input %d: memprof feeds the first %d "
                            "inputs of a model\n", k + 1, i, MP_CLI_MAX_INPUTS);
            return MP_EXIT_USAGE;
        }
        mp_cli_inputs *in = cf->in[k];
        int rc = mp_cli_inputs_fill(mp_pipeline_session(p, k), in, i);
        if (rc != MP_EXIT_OK)
            return rc;
        if (mp_pipeline_set_input(p, c, in->buf[i].p, in->buf[i].cap, &err) != MP_OK)
            return mp_report_error(&err);
    }
    return MP_EXIT_OK;
}

/* The shapes due at one point of the call order (0 before prepare, 1 after, 2 before run
 * r), on every model's chain inputs. */
static int shapes_at(mp_pipeline *p, const mp_pipe_args *a, chain_feed *cf, int when, long r)
{
    int rc = MP_EXIT_OK;
    for (int k = 0; k < mp_pipeline_model_count(p) && rc == MP_EXIT_OK; k++) {
        mp_session *s = mp_pipeline_session(p, k);
        if (!cf->sp[k])
            continue;
        rc = when == 0 ? mp_shapes_before_prepare(s, cf->sp[k], a->m.at)
             : when == 1 ? mp_shapes_after_prepare(s, cf->sp[k], a->m.at)
                         : mp_shapes_before_run(s, cf->sp[k], a->m.at, r);
    }
    return rc;
}

/* The call order of --shape-at, timed (the shared player's steps, on the chain). */
static int play(mp_pipeline *p, const mp_pipe_args *a, chain_feed *cf, uint64_t *times,
                mp_trace *tr)
{
    mp_error err = {0};
    int rc = shapes_at(p, a, cf, 0, 0);
    if (rc == MP_EXIT_OK)
        rc = feed(p, cf);
    if (rc != MP_EXIT_OK)
        return rc;
    if (mp_pipeline_prepare(p, &err) != MP_OK)
        return mp_report_error(&err);
    mp_trace_rss_sample(tr);
    rc = shapes_at(p, a, cf, 1, 0);
    long total = a->m.warmup + a->m.runs;
    if (a->progress)
        a->progress->total = total;
    uint64_t last_rss = 0;
    for (long r = 0; r < total && rc == MP_EXIT_OK; r++) {
        rc = shapes_at(p, a, cf, 2, r);
        if (rc == MP_EXIT_OK)
            rc = feed(p, cf);
        if (rc != MP_EXIT_OK)
            break;
        uint64_t t0 = mp_now_ns();
        if (mp_pipeline_run(p, &err) != MP_OK)
            return mp_report_error(&err);
        if (r >= a->m.warmup)
            times[r - a->m.warmup] = mp_now_ns() - t0;
        mp_trace_rss_sample_run(tr, r, total, &last_rss);
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
    int n = mp_pipeline_edge_count(p), ni = mp_pipeline_input_count(p);
    r->edges = calloc((size_t)n + 1, sizeof *r->edges);
    r->reasons = calloc((size_t)n + 1, sizeof *r->reasons);
    r->inputs = calloc((size_t)ni + 1, sizeof *r->inputs);
    if (!r->edges || !r->reasons || !r->inputs) {
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
    for (int c = 0; c < ni; c++) {
        mp_pipe_report_input *ri = &r->inputs[c];
        int k, i;
        mp_pipeline_input_at(p, c, &k, &i);
        *ri = (mp_pipe_report_input){k, i, ""};
        snprintf(ri->name, sizeof ri->name, "%s",
                 mp_session_input(mp_pipeline_session(p, k), i)->info->name);
    }
    mp_pipe_arena ar;
    mp_pipeline_arena(p, &ar);
    mp_pipe_report *rep = &r->rep;
    rep->n_inputs = ni;
    rep->inputs = r->inputs;
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
    chain_feed cf = {0};
    r->times = calloc((size_t)a->m.runs + 1, sizeof *r->times);
    mp_pipeline *p = NULL;
    int rc = MP_EXIT_OK;
    if (!r->times || (a->record && !tr)) {
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
    for (int i = 0; i < a->n_chain_input && rc == MP_EXIT_OK; i++)
        rc = chain_input_one(p, a->chain_input[i]);
    if (rc == MP_EXIT_OK && mp_pipeline_resolve(p, &err) != MP_OK)
        rc = mp_report_error(&err);
    for (int i = 0; i < a->n_io_edge && rc == MP_EXIT_OK; i++)
        if (mp_pipeline_set_edge_io(p, a->io_edge[i], a->io_edge_mode[i], &err) != MP_OK)
            rc = err.status == MP_ERR_ARG ? mp_usage_error("pipeline", "--io: %s", err.msg)
                                          : mp_report_error(&err);
    /* the caller's side of every model that has chain inputs */
    for (int c = 0; rc == MP_EXIT_OK && c < mp_pipeline_input_count(p); c++) {
        int k, i;
        mp_pipeline_input_at(p, c, &k, &i);
        if (!cf.in[k]) {
            cf.in[k] = calloc(1, sizeof *cf.in[k]);
            cf.sp[k] = calloc(1, sizeof *cf.sp[k]);
        }
        if (!cf.in[k] || !cf.sp[k]) {
            fprintf(stderr, "memprof: out of memory\n");
            rc = MP_EXIT_RUNTIME;
        }
    }
    if (rc == MP_EXIT_OK)
        rc = collect(p, a, &cf);
    if (rc == MP_EXIT_OK)
        rc = play(p, a, &cf, r->times, tr);
    if (rc == MP_EXIT_OK && a->outdir)
        rc = mp_cli_write_outputs(mp_pipeline_session(p, a->n_models - 1), NULL, a->outdir);
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
    for (int k = 0; k < MP_PIPE_MAX_MODELS; k++) {
        if (cf.in[k])
            mp_cli_inputs_release(cf.in[k]);
        free(cf.in[k]);
        free(cf.sp[k]);
    }
    return rc;
}

void mp_cli_pipeline_result_free(mp_pipe_result *r)
{
    mp_chain_free(&r->chain);
    mp_trace_destroy(r->trace);
    free(r->edges);
    free(r->inputs);
    free(r->reasons);
    free(r->times);
    memset(r, 0, sizeof *r);
}
