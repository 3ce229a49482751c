/* memprof pipeline's report as text and as JSON (see pipeline_report.h). */
#include "reports/pipeline_report.h"

#include <jansson.h>

#include "reports/bench_report.h"
#include "reports/units.h"

static uint64_t per_run(uint64_t v, uint64_t runs)
{
    return runs ? v / runs : 0;
}

void mp_report_pipeline_text(FILE *f, const mp_pipe_report *r, bool exact)
{
    char a[64], b[64], c[64], d[64];
    fprintf(f, "pipeline %d models  (io %s, memory %s, planner %s, threads %ld%s)\n",
            r->n_models, r->io, r->mode, r->planner, r->threads,
            r->share_arena ? ", one arena for the chain" : "");
    for (int k = 0; k < r->n_models; k++) {
        const mp_pipe_report_model *m = &r->models[k];
        fprintf(f, "model %-3d%s  (%d operators, %d inputs, %d outputs)\n", k + 1, m->name,
                (int)m->n_ops, (int)m->n_inputs, (int)m->n_outputs);
    }
    fprintf(f, "inputs  ");
    for (int i = 0; i < r->n_inputs; i++)
        fprintf(f, "%s %d '%s' of model %d", i ? "," : "", i, r->inputs[i].name,
                (int)r->inputs[i].model + 1);
    fprintf(f, " (the caller's)\n");
    fprintf(f, "\nedges    (copies and bytes copied per run)\n");
    uint64_t copies = 0, bytes = 0;
    for (int i = 0; i < r->n_edges; i++) {
        const mp_pipe_report_edge *e = &r->edges[i];
        uint64_t n = per_run(e->copies, e->runs), nb = per_run(e->copy_bytes, e->runs);
        copies += n;
        bytes += nb;
        fprintf(f, "  %-3d %s -> %s\n      %-5s %s  %llu %s  %s\n", i, e->from, e->to,
                e->bound ? "bound" : "copy", e->bound ? "zero copy" : e->reason,
                (unsigned long long)n, n == 1 ? "copy " : "copies", mp_fmt_bytes_x(a, sizeof a, nb, exact));
    }
    fprintf(f, "copies   %llu per run, %s per run  (%ld runs after %ld warm-up)\n",
            (unsigned long long)copies, mp_fmt_bytes_x(a, sizeof a, bytes, exact), r->runs,
            r->warmup);
    if (r->arena_planned) {
        fprintf(f, "arena    one for the chain %s; one per model %s (%s of it the bound\n"
                   "         buffers between models); the chain's live-set lower bound %s\n",
                mp_fmt_bytes_x(a, sizeof a, r->chain_arena_bytes, exact),
                mp_fmt_bytes_x(b, sizeof b, r->separate_arena_bytes, exact),
                mp_fmt_bytes_x(c, sizeof c, r->boundary_bytes, exact),
                mp_fmt_bytes_x(d, sizeof d, r->chain_lower_bound_bytes, exact));
    } else if (r->share_arena) {
        fprintf(f, "arena    nothing planned (memory mode %s)\n", r->mode);
    } else {
        uint64_t sum = 0;
        for (int k = 0; k < r->n_models; k++)
            sum += r->models[k].arena_bytes;
        fprintf(f, "arena    one per model, %s in all (--share-arena plans one for the chain)\n",
                mp_fmt_bytes_x(a, sizeof a, sum, exact));
    }
    if (r->chain) {
        const mp_chain_figures *ch = r->chain;
        fprintf(f, "peak     %s across the chain (heap), while model %d held the most\n",
                mp_fmt_bytes_x(a, sizeof a, ch->peak_bytes, exact), (int)ch->peak_model + 1);
        for (int k = 0; k < ch->n_models && k < r->n_models; k++) {
            const mp_chain_model *m = &ch->models[k];
            fprintf(f, "  model %-3d peak %s  allocations %llu (%s)  copies in %llu, out %llu\n",
                    k + 1, mp_fmt_bytes_x(a, sizeof a, m->peak_bytes, exact),
                    (unsigned long long)m->n_alloc, mp_fmt_bytes_x(b, sizeof b, m->alloc_bytes, exact),
                    (unsigned long long)m->copies_in, (unsigned long long)m->copies_out);
        }
    }
    fprintf(f, "time     first timed run %s", mp_fmt_ns(a, sizeof a, r->first_run_ns));
    if (r->runs > 1)
        fprintf(f, "  median %s  min %s  mean %s", mp_fmt_ns(a, sizeof a, r->median_ns),
                mp_fmt_ns(b, sizeof b, r->min_ns), mp_fmt_ns(c, sizeof c, r->mean_ns));
    fprintf(f, "  (the whole chain)\n");
    if (r->trace_path)
        fprintf(f, "trace    %s\n", r->trace_path);
}

static json_t *u64(uint64_t v)
{
    return json_integer((json_int_t)v);
}

mp_status mp_report_pipeline_json(FILE *f, const mp_pipe_report *r, mp_error *err)
{
    json_t *root = json_object(), *models = json_array(), *edges = json_array();
    json_object_set_new(root, "format", json_string(MP_PIPELINE_FORMAT));
    json_object_set_new(root, "version", json_integer(MP_PIPELINE_VERSION));
    json_object_set_new(root, "io", json_string(r->io));
    json_object_set_new(root, "mode", json_string(r->mode));
    json_object_set_new(root, "planner", json_string(r->planner));
    json_object_set_new(root, "threads", json_integer(r->threads));
    json_object_set_new(root, "runs", json_integer(r->runs));
    json_object_set_new(root, "warmup", json_integer(r->warmup));
    json_object_set_new(root, "share_arena", json_boolean(r->share_arena));
    for (int k = 0; k < r->n_models; k++) {
        const mp_pipe_report_model *m = &r->models[k];
        json_t *o = json_pack("{s:i, s:s, s:i, s:i, s:i}", "model", k + 1, "name", m->name,
                              "ops", (int)m->n_ops, "inputs", (int)m->n_inputs, "outputs",
                              (int)m->n_outputs);
        json_object_set_new(o, "arena_bytes", u64(m->arena_bytes));
        if (r->chain && k < r->chain->n_models) {
            const mp_chain_model *c = &r->chain->models[k];
            json_object_set_new(o, "peak_bytes", u64(c->peak_bytes));
            json_object_set_new(o, "allocations", u64(c->n_alloc));
            json_object_set_new(o, "alloc_bytes", u64(c->alloc_bytes));
            json_object_set_new(o, "copies_in", u64(c->copies_in));
            json_object_set_new(o, "copies_out", u64(c->copies_out));
            json_object_set_new(o, "copy_in_bytes", u64(c->copy_in_bytes));
            json_object_set_new(o, "copy_out_bytes", u64(c->copy_out_bytes));
        }
        json_array_append_new(models, o);
    }
    json_t *inputs = json_array();
    for (int c = 0; c < r->n_inputs; c++)
        json_array_append_new(inputs, json_pack("{s:i, s:i, s:i, s:s}", "input", c, "model",
                                                (int)r->inputs[c].model + 1, "model_input",
                                                (int)r->inputs[c].input, "name",
                                                r->inputs[c].name));
    uint64_t copies = 0, bytes = 0;
    for (int i = 0; i < r->n_edges; i++) {
        const mp_pipe_report_edge *e = &r->edges[i];
        json_t *o = json_pack("{s:i, s:s, s:s, s:s, s:b, s:s}", "edge", i, "from", e->from, "to",
                              e->to, "io", e->io, "bound", e->bound, "why", e->why);
        json_object_set_new(o, "reason", e->bound ? json_null() : json_string(e->reason));
        json_object_set_new(o, "copies", u64(e->copies));
        json_object_set_new(o, "copy_bytes", u64(e->copy_bytes));
        json_object_set_new(o, "copies_per_run", u64(per_run(e->copies, e->runs)));
        json_object_set_new(o, "copy_bytes_per_run", u64(per_run(e->copy_bytes, e->runs)));
        copies += per_run(e->copies, e->runs);
        bytes += per_run(e->copy_bytes, e->runs);
        json_array_append_new(edges, o);
    }
    json_object_set_new(root, "models", models);
    json_object_set_new(root, "inputs", inputs);
    json_object_set_new(root, "edges", edges);
    json_object_set_new(root, "copies_per_run", u64(copies));
    json_object_set_new(root, "copy_bytes_per_run", u64(bytes));
    json_t *ar = json_object();
    json_object_set_new(ar, "planned", json_boolean(r->arena_planned));
    json_object_set_new(ar, "chain_bytes", r->arena_planned ? u64(r->chain_arena_bytes) : json_null());
    json_object_set_new(ar, "lower_bound_bytes",
                        r->arena_planned ? u64(r->chain_lower_bound_bytes) : json_null());
    json_object_set_new(ar, "separate_bytes",
                        r->arena_planned ? u64(r->separate_arena_bytes) : json_null());
    json_object_set_new(ar, "boundary_bytes", r->arena_planned ? u64(r->boundary_bytes) : json_null());
    json_object_set_new(ar, "plans", u64(r->arena_plans));
    json_object_set_new(root, "arena", ar);
    json_object_set_new(root, "peak_bytes", r->chain ? u64(r->chain->peak_bytes) : json_null());
    json_t *t = json_object();
    json_object_set_new(t, "first_run_ns", u64(r->first_run_ns));
    json_object_set_new(t, "median_ns", u64(r->median_ns));
    json_object_set_new(t, "min_ns", u64(r->min_ns));
    json_object_set_new(t, "mean_ns", u64(r->mean_ns));
    json_object_set_new(root, "time", t);
    return mp_report_timing_json(f, root, err);
}
