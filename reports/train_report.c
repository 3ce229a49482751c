/* memprof train's report: as text, the run, then the category table (held, each category
 * planned alone, and the shared planned arena's split at its peak step) with the lower bound;
 * as JSON, the same figures (memprof-train). */
#include "reports/train_report.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>

#include "reports/bench_report.h"

/* "11,360,128" */
static const char *grouped(char *buf, size_t n, uint64_t v)
{
    char raw[32];
    int len = snprintf(raw, sizeof raw, "%" PRIu64, v), k = 0;
    for (int i = 0; i < len && (size_t)k + 2 < n; i++) {
        if (i && (len - i) % 3 == 0)
            buf[k++] = ',';
        buf[k++] = raw[i];
    }
    buf[k] = 0;
    return buf;
}

static double mb(uint64_t v)
{
    return (double)v / 1e6;
}

static void run_part(FILE *f, const mp_train_report *r)
{
    fprintf(f, "  data         %s, %" PRId64 " samples; %" PRId64 " steps in %" PRId64
            " epoch%s\n", r->synthetic ? "synthetic (labels from a fixed teacher)" : "files",
            r->samples, r->steps, r->epochs, r->epochs == 1 ? "" : "s");
    for (int64_t e = 0; e < r->n_epoch_loss; e++)
        if (r->n_epoch_loss <= 12 || e < 5 || e >= r->n_epoch_loss - 5)
            fprintf(f, "  epoch %-6" PRId64 " mean loss %.6f\n", e + 1, r->epoch_loss[e]);
        else if (e == 5)
            fprintf(f, "  ...\n");
    fprintf(f, "  first batch  loss %.6f before training, %.6f after (%s)\n", r->loss_before,
            r->loss_after, r->loss_after < r->loss_before ? "fell" : "did not fall");
    double gs = r->step_ms > 0 ? (double)r->step_flops / (r->step_ms * 1e6) : 0;
    double gf = r->forward_ms > 0 ? (double)r->forward_flops / (r->forward_ms * 1e6) : 0;
    fprintf(f, "  step         %.2f ms (median), %.3f GFLOP: %.1f GFLOP/s\n", r->step_ms,
            (double)r->step_flops / 1e9, gs);
    fprintf(f, "  forward      %.2f ms (median of 3), %.3f GFLOP: %.1f GFLOP/s\n", r->forward_ms,
            (double)r->forward_flops / 1e9, gf);
}

void mp_train_report_text(FILE *f, const mp_train_report *r)
{
    char a[32], b[32], c[32], d[32];
    fprintf(f, "memprof train: %s\n", r->model);
    fprintf(f, "  batch %" PRId64 ", %" PRId64 " forward and %" PRId64 " backward steps, "
            "trainable: %s%" PRId64 " operators, loss %s, optimizer %s (learning rate %g)\n",
            r->batch, r->n_forward, r->n_backward, r->trainable_ops ? "last " : "all ",
            r->trainable_ops ? r->trainable_ops : r->n_forward, r->loss, r->optimizer,
            r->learning_rate);
    if (r->trained)
        run_part(f, r);
    fprintf(f, "\nMemory by category (bytes; memory %s, planner %s)\n", r->policy, r->planner);
    fprintf(f, "  %-11s %15s %15s %15s %15s\n", "category", "held", "planned alone",
            "at bound step", r->trained ? "measured peak" : "");
    for (int k = 0; k < MP_TRAIN_REPORT_CATS; k++) {
        fprintf(f, "  %-11s %15s %15s %15s", r->cat_names[k], grouped(a, sizeof a, r->held[k]),
                grouped(b, sizeof b, r->alone[k]), grouped(c, sizeof c, r->at_bound[k]));
        if (r->trained)
            fprintf(f, " %15s", grouped(d, sizeof d, r->measured[k]));
        fprintf(f, "\n");
    }
    uint64_t alone = 0;
    for (int k = 0; k < MP_TRAIN_REPORT_CATS; k++)
        alone += r->alone[k];
    uint64_t bound = r->persistent + r->lower_bound;
    fprintf(f, "  %-11s %15s %15s %15s\n", "total", grouped(a, sizeof a, r->held_total),
            grouped(b, sizeof b, alone), grouped(c, sizeof c, bound));
    fprintf(f, "  %-11s %15.1f %15.1f %15.1f  (MB)\n", "", mb(r->held_total), mb(alone),
            mb(bound));
    fprintf(f, "\n  held        every category whole for the session: %s bytes (%.1f MB)\n",
            grouped(a, sizeof a, r->held_total), mb(r->held_total));
    fprintf(f, "  planned     %" PRId64 " tensors in one arena of %s bytes + %s persistent = "
            "%s bytes (%.1f MB)\n", r->n_planned, grouped(a, sizeof a, r->arena),
            grouped(b, sizeof b, r->persistent), grouped(c, sizeof c, r->planned_total),
            mb(r->planned_total));
    fprintf(f, "  lower bound live set at step %s: %s bytes + %s persistent = %s bytes "
            "(%.1f MB)\n", r->lower_bound_step, grouped(a, sizeof a, r->lower_bound),
            grouped(b, sizeof b, r->persistent), grouped(c, sizeof c, bound), mb(bound));
    fprintf(f, "  planned / lower bound %.4f; planned / held %.3f\n",
            bound ? (double)r->planned_total / (double)bound : 0,
            r->held_total ? (double)r->planned_total / (double)r->held_total : 0);
    if (r->trained)
        fprintf(f, "  heap peak   %s bytes measured while training (memory %s, every kind)\n",
                grouped(a, sizeof a, r->heap_peak), r->policy);
    if (r->out)
        fprintf(f, "  model       trained weights written to %s\n", r->out);
    if (r->trace)
        fprintf(f, "  trace       %s\n", r->trace);
}

static json_t *ju(uint64_t v)
{
    return json_integer(v > (uint64_t)INT64_MAX ? INT64_MAX : (json_int_t)v);
}

static json_t *jstr(const char *s)
{
    json_t *v = s ? json_string(s) : NULL;
    return v ? v : json_null();
}

/* Milliseconds (a median of doubles) as integer nanoseconds. */
static json_t *ns_of_ms(double ms)
{
    return json_integer(ms > 0 ? (json_int_t)llround(ms * 1e6) : 0);
}

/* The training run: data, losses, times; null with --memory-only. */
static json_t *run_json(const mp_train_report *r)
{
    if (!r->trained)
        return json_null();
    json_t *o = json_object(), *losses = json_array();
    for (int64_t e = 0; e < r->n_epoch_loss; e++)
        json_array_append_new(losses, json_real(r->epoch_loss[e]));
    json_object_set_new(o, "data", json_string(r->synthetic ? "synthetic" : "files"));
    json_object_set_new(o, "samples", json_integer(r->samples));
    json_object_set_new(o, "steps", json_integer(r->steps));
    json_object_set_new(o, "epochs", json_integer(r->epochs));
    json_object_set_new(o, "epoch_loss", losses);
    json_object_set_new(o, "loss_before", json_real(r->loss_before));
    json_object_set_new(o, "loss_after", json_real(r->loss_after));
    json_object_set_new(o, "step_ns", ns_of_ms(r->step_ms));
    json_object_set_new(o, "forward_ns", ns_of_ms(r->forward_ms));
    json_object_set_new(o, "step_flops", ju(r->step_flops));
    json_object_set_new(o, "forward_flops", ju(r->forward_flops));
    json_object_set_new(o, "heap_peak_bytes", ju(r->heap_peak));
    return o;
}

mp_status mp_train_report_json(FILE *f, const mp_train_report *r, mp_error *err)
{
    json_t *root = json_object(), *cats = json_array();
    uint64_t alone = 0;
    for (int k = 0; k < MP_TRAIN_REPORT_CATS; k++) {
        json_t *c = json_object();
        json_object_set_new(c, "name", jstr(r->cat_names[k]));
        json_object_set_new(c, "held_bytes", ju(r->held[k]));
        json_object_set_new(c, "planned_alone_bytes", ju(r->alone[k]));
        json_object_set_new(c, "at_bound_bytes", ju(r->at_bound[k]));
        json_object_set_new(c, "measured_peak_bytes", r->trained ? ju(r->measured[k]) : json_null());
        json_array_append_new(cats, c);
        alone += r->alone[k];
    }
    json_object_set_new(root, "format", json_string(MP_TRAIN_FORMAT));
    json_object_set_new(root, "version", json_integer(MP_TRAIN_VERSION));
    json_object_set_new(root, "model", jstr(r->model));
    json_object_set_new(root, "memory", jstr(r->policy));
    json_object_set_new(root, "planner", jstr(r->planner));
    json_object_set_new(root, "batch", json_integer(r->batch));
    json_object_set_new(root, "trainable_ops", json_integer(r->trainable_ops));
    json_object_set_new(root, "forward_steps", json_integer(r->n_forward));
    json_object_set_new(root, "backward_steps", json_integer(r->n_backward));
    json_object_set_new(root, "loss", jstr(r->loss));
    json_object_set_new(root, "optimizer", jstr(r->optimizer));
    json_object_set_new(root, "learning_rate", json_real(r->learning_rate));
    json_object_set_new(root, "training", run_json(r));
    json_object_set_new(root, "categories", cats);
    json_object_set_new(root, "held_bytes", ju(r->held_total));
    json_object_set_new(root, "planned_alone_bytes", ju(alone));
    json_object_set_new(root, "planned", json_pack("{s:I, s:o, s:o, s:o}", "tensors",
                                                   (json_int_t)r->n_planned, "arena_bytes",
                                                   ju(r->arena), "persistent_bytes",
                                                   ju(r->persistent), "total_bytes",
                                                   ju(r->planned_total)));
    json_object_set_new(root, "lower_bound", json_pack("{s:o, s:o, s:o}", "step",
                                                       jstr(r->lower_bound_step), "live_bytes",
                                                       ju(r->lower_bound), "total_bytes",
                                                       ju(r->persistent + r->lower_bound)));
    json_object_set_new(root, "output", jstr(r->out));
    json_object_set_new(root, "trace", jstr(r->trace));
    return mp_report_timing_json(f, root, err);
}
