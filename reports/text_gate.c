/* The text of memprof check and of memprof diff on baselines (see text_gate.h). Lines go
 * through mp_text_line (units.h): names made safe, cut at 80 columns. */
#include "reports/text_gate.h"

#include <inttypes.h>
#include <string.h>

#include "reports/units.h"

#define out(...) mp_text_line(__VA_ARGS__)

/* "+12.5%" of b over a, "new" when a is 0, "" when equal. */
static const char *ratio(char *buf, size_t n, uint64_t a, uint64_t b)
{
    if (a == b)
        snprintf(buf, n, "%s", "");
    else if (a == 0)
        snprintf(buf, n, "new");
    else
        snprintf(buf, n, "%+.1f%%", ((double)b - (double)a) * 100.0 / (double)a);
    return buf;
}

/* name fitted into w columns (a longer one loses its middle: "MobilenetV2/...u6", the
 * end of a tensor name telling most) and padded with spaces to w columns. */
static const char *pad_name(char *buf, size_t n, const char *name, size_t w)
{
    mp_text_fit_middle(buf, n, name, w);
    size_t len = strlen(buf), cols = 0;
    for (const char *c = buf; *c; c++)
        cols += ((unsigned char)*c & 0xC0) != 0x80;
    while (cols < w && len + 1 < n) {
        buf[len++] = ' ';
        buf[len] = 0;
        cols++;
    }
    return buf;
}

const char *mp_fmt_tolerance(char *buf, size_t n, const mp_tolerance *t, bool exact)
{
    if (t->percent)
        snprintf(buf, n, "%g%%", t->pct);
    else if (exact)
        snprintf(buf, n, "%" PRIu64 " B", t->bytes);
    else
        mp_fmt_bytes(buf, n, t->bytes);
    return buf;
}

static void identity_notes(FILE *f, const mp_baseline *a, const mp_baseline *b,
                           const char *what_a, const char *what_b)
{
    if (a->model && b->model && strcmp(a->model, b->model) != 0)
        out(f, "  note: %s is of model %s, %s of %s", what_a, a->model, what_b, b->model);
    else if (a->sha256 && b->sha256 && strcmp(a->sha256, b->sha256) != 0)
        out(f, "  note: model changed (sha256 %.8s in %s, %.8s in %s)", a->sha256, what_a,
            b->sha256, what_b);
    if (a->mode && b->mode && strcmp(a->mode, b->mode) != 0)
        out(f, "  note: memory mode %s in %s, %s in %s", a->mode, what_a, b->mode, what_b);
    if (a->planner && b->planner && strcmp(a->planner, b->planner) != 0)
        out(f, "  note: planner %s in %s, %s in %s", a->planner, what_a, b->planner, what_b);
    bool inputs_differ = a->n_inputs && b->n_inputs && a->n_inputs != b->n_inputs;
    for (size_t i = 0; i < a->n_inputs && i < b->n_inputs && !inputs_differ; i++)
        inputs_differ = strcmp(a->inputs[i].dims, b->inputs[i].dims) != 0 ||
                        strcmp(a->inputs[i].name, b->inputs[i].name) != 0;
    if (inputs_differ)
        for (size_t i = 0; i < a->n_inputs || i < b->n_inputs; i++) {
            if (i < a->n_inputs && i < b->n_inputs &&
                strcmp(a->inputs[i].name, b->inputs[i].name) == 0)
                out(f, "  note: input %s is %s in %s, %s in %s", a->inputs[i].name,
                    a->inputs[i].dims, what_a, b->inputs[i].dims, what_b);
            else
                out(f, "  note: input %zu is %s %s in %s, %s %s in %s", i,
                    i < a->n_inputs ? a->inputs[i].name : "-",
                    i < a->n_inputs ? a->inputs[i].dims : "-", what_a,
                    i < b->n_inputs ? b->inputs[i].name : "-",
                    i < b->n_inputs ? b->inputs[i].dims : "-", what_b);
        }
    if (a->truncated)
        out(f, "  note: %s was recorded from a truncated trace: its figures are partial",
            what_a);
    if (b->truncated)
        out(f, "  note: %s was recorded from a truncated trace: its figures are partial",
            what_b);
}

/* Tensor rows: 2 + 42 + 3 x 12 = 80 columns. */
enum { NAME_W = 42 };

static void tensor_header(FILE *f, const char *title, const char *ca, const char *cb)
{
    out(f, "%s", title);
    out(f, "  %-*s %11s %11s %11s", NAME_W, "tensor", ca, cb, "change");
}

static void tensor_row(FILE *f, const mp_gate_change *c, bool exact)
{
    char name[NAME_W * 4 + 8], b1[40], b2[40], b3[40];
    out(f, "  %s %11s %11s %11s", pad_name(name, sizeof name, c->name, NAME_W),
        c->in_a ? mp_fmt_cell(b1, sizeof b1, c->a, exact) : "absent",
        c->in_b ? mp_fmt_cell(b2, sizeof b2, c->b, exact) : "absent",
        mp_fmt_change(b3, sizeof b3, c->a, c->b, exact));
}

static void figure_row(FILE *f, const char *label, bool in_a, uint64_t a, bool in_b, uint64_t b,
                       bool exact)
{
    char b1[40], b2[40], b3[40], b4[40];
    out(f, "  %-24s %12s %12s %12s %8s", label, in_a ? mp_fmt_cell(b1, sizeof b1, a, exact) : "-",
        in_b ? mp_fmt_cell(b2, sizeof b2, b, exact) : "-",
        in_a && in_b ? mp_fmt_change(b3, sizeof b3, a, b, exact) : "",
        in_a && in_b ? ratio(b4, sizeof b4, a, b) : "");
}

static const char *figure_label(char *buf, size_t n, int fig)
{
    snprintf(buf, n, "%s%s", mp_figure_name(fig),
             fig == MP_FIG_TENSORS ? " (tensor memory)"
             : mp_figure_machine_dependent(fig) ? " (machine dep.)" : "");
    return buf;
}

/* Every gated figure beside the heap peak, so that nobody mistakes one for the other:
 *   heap peak  20.9 MiB (not gated), as memprof run and report print it
 *   gated      tensors 5.7 MiB, kernel 15.0 MiB
 * the list wrapped at 80 columns. */
static void gated_beside_heap(FILE *f, const mp_baseline *now, const mp_gate_result *r,
                              bool exact)
{
    char b1[40], b2[40], b3[40];
    bool heap_gated = false;
    for (size_t i = 0; i < r->n_checks; i++)
        heap_gated |= r->checks[i].figure == MP_FIG_HEAP;
    const char *gated = heap_gated ? "gated" : "not gated";
    if (!now->has[MP_FIG_HEAP]) {
        out(f, "  heap peak  not known (a baseline holds no heap figure)");
    } else if (now->model_heap) {
        out(f, "  heap peak  %s (%s): memprof run's Heap peak %s",
            mp_fmt_cell(b1, sizeof b1, now->fig[MP_FIG_HEAP], exact), gated,
            mp_fmt_cell(b2, sizeof b2, now->run_heap_peak, exact));
        out(f, "             + %s of the model, held on the heap",
            mp_fmt_cell(b3, sizeof b3, now->model_heap, exact));
    } else {
        out(f, "  heap peak  %s (%s), as memprof run and report print it",
            mp_fmt_cell(b1, sizeof b1, now->fig[MP_FIG_HEAP], exact), gated);
    }
    char line[MP_TEXT_COLS + 1];
    size_t len = (size_t)snprintf(line, sizeof line, "  gated      ");
    bool seen[MP_FIG_COUNT] = {false}, first = true;
    for (size_t i = 0; i < r->n_checks; i++) {
        int fig = r->checks[i].figure;
        if (seen[fig])
            continue;
        seen[fig] = true;
        char item[64];
        int n = snprintf(item, sizeof item, "%s%s %s", first ? "" : ", ", mp_figure_name(fig),
                         mp_fmt_cell(b1, sizeof b1, r->checks[i].value, exact));
        if (!first && len + (size_t)n > MP_TEXT_COLS - 1) { /* room for the comma */
            out(f, "%s,", line);
            len = (size_t)snprintf(line, sizeof line, "             %s", item + 2);
        } else {
            len += (size_t)snprintf(line + len, sizeof line - len, "%s", item);
        }
        first = false;
    }
    if (!first)
        out(f, "%s", line);
}

void mp_report_gate_text(FILE *f, const char *subject, const mp_baseline *now,
                         const mp_gate_options *o, const char *baseline_path,
                         const mp_gate_result *r, bool exact)
{
    char b1[64], b2[64], b3[64], label[64];
    mp_text_title(f, "memprof check", subject);
    char model[MP_TEXT_COLS * 4 + 8], base[MP_TEXT_COLS * 4 + 8];
    mp_text_fit_middle(model, sizeof model, now->model, 40);
    out(f, "  model %s, mode %s, planner %s", model, now->mode ? now->mode : "?",
        now->planner ? now->planner : "?");
    if (baseline_path && o->baseline) {
        mp_text_fit_middle(base, sizeof base, baseline_path, 48);
        out(f, "  baseline %s, tolerance %s", base,
            mp_fmt_tolerance(b1, sizeof b1, &o->tol, exact));
        identity_notes(f, o->baseline, now, "the baseline", "this run");
    } else if (now->truncated) {
        out(f, "  note: the trace is truncated: its figures are partial");
    }
    if (r->n_checks)
        gated_beside_heap(f, now, r, exact);
    /* 2 + 30 + 3 x 12 + 8 = 76 columns */
    out(f, "  %-30s %11s %11s %11s  %s", "check", "now", "allowed", "over", "result");
    for (size_t i = 0; i < r->n_checks; i++) {
        const mp_gate_check *c = &r->checks[i];
        snprintf(label, sizeof label, "%s %s", mp_figure_name(c->figure),
                 c->against == MP_GATE_LIMIT ? "<= limit" : "vs baseline");
        out(f, "  %-30s %11s %11s %11s  %s", label, mp_fmt_cell(b1, sizeof b1, c->value, exact),
            mp_fmt_cell(b2, sizeof b2, c->allowed, exact),
            c->value > c->allowed ? mp_fmt_change(b3, sizeof b3, c->allowed, c->value, exact) : "-",
            c->passed ? "ok" : "FAIL");
    }
    if (r->n_failed == 0) {
        out(f, "PASS: %zu check%s within limits", r->n_checks, r->n_checks == 1 ? "" : "s");
        return;
    }
    out(f, "FAIL: %zu of %zu checks exceeded", r->n_failed, r->n_checks);
    if (r->has_baseline) {
        out(f, "Grew by kind of memory");
        out(f, "  %-24s %12s %12s %12s %8s", "figure", "baseline", "now", "change", "");
        size_t shown = 0;
        for (size_t i = 0; i < r->diff.n_figures; i++) {
            const mp_gate_change *c = &r->diff.figures[i];
            if (!(c->in_a && c->in_b && c->b > c->a))
                continue;
            figure_row(f, figure_label(label, sizeof label, mp_figure_parse(c->name)), true,
                       c->a, true, c->b, exact);
            shown++;
        }
        if (!shown)
            out(f, "  none (the limits alone failed)");
        tensor_header(f, r->diff.n_grown ? "Grew by tensor, largest first"
                                         : "Grew by tensor: none", "baseline", "now");
        size_t rows = 0;
        for (size_t i = 0; i < r->diff.n_tensors; i++) {
            const mp_gate_change *c = &r->diff.tensors[i];
            if (!(c->b > c->a || (c->in_b && !c->in_a)))
                continue;
            if (!exact && rows == MP_GATE_TENSORS_TOP) {
                out(f, "  ... and %zu more (--exact lists them all)", r->diff.n_grown - rows);
                break;
            }
            tensor_row(f, c, exact);
            rows++;
        }
        size_t shrank = r->diff.n_tensors - r->diff.n_grown;
        if (shrank)
            out(f, "  (%zu tensor%s shrank or went away: memprof diff lists them)", shrank,
                shrank == 1 ? "" : "s");
        return;
    }
    /* limits only: what the figures are made of now */
    out(f, "By kind of memory now (own peaks; no baseline to compare with)");
    for (int k = MP_FIG_STATIC; k < MP_FIG_COUNT; k++)
        if (now->has[k] && k != MP_FIG_HEAP && k != MP_FIG_CONST && k != MP_FIG_RSS &&
            (now->fig[k] || !mp_figure_optional(k)))
            out(f, "  %-24s %12s", figure_label(label, sizeof label, k),
                mp_fmt_cell(b1, sizeof b1, now->fig[k], exact));
    /* the largest tensors, largest first (a small selection, no allocation) */
    size_t top = exact ? now->n_tensors : MP_GATE_TENSORS_TOP;
    out(f, "Largest tensors now");
    uint64_t last = UINT64_MAX;
    size_t last_i = SIZE_MAX, rows = 0;
    while (rows < top) {
        size_t best = SIZE_MAX;
        for (size_t i = 0; i < now->n_tensors; i++) {
            const mp_baseline_tensor *t = &now->tensors[i];
            bool after = t->bytes < last || (t->bytes == last && i > last_i);
            if (after && (best == SIZE_MAX || t->bytes > now->tensors[best].bytes))
                best = i;
        }
        if (best == SIZE_MAX)
            break;
        char name[NAME_W * 4 + 8];
        out(f, "  %s %11s", pad_name(name, sizeof name, now->tensors[best].name, NAME_W),
            mp_fmt_cell(b1, sizeof b1, now->tensors[best].bytes, exact));
        last = now->tensors[best].bytes;
        last_i = best;
        rows++;
    }
    if (rows < now->n_tensors)
        out(f, "  ... and %zu more (--exact lists them all)", now->n_tensors - rows);
}

void mp_report_baseline_diff_text(FILE *f, const char *name_a, const mp_baseline *a,
                                  const char *name_b, const mp_baseline *b,
                                  const mp_baseline_diff *d, bool exact)
{
    char label[64];
    out(f, "memprof diff (a = before, b = after)");
    out(f, "  a  %s: %s, mode %s, planner %s", name_a, a->model, a->mode, a->planner);
    out(f, "  b  %s: %s, mode %s, planner %s", name_b, b->model, b->mode, b->planner);
    identity_notes(f, a, b, "a", "b");
    out(f, "  %-24s %12s %12s %12s %8s", "figure", "a", "b", "change", "");
    for (size_t i = 0; i < d->n_figures; i++) {
        const mp_gate_change *c = &d->figures[i];
        figure_row(f, figure_label(label, sizeof label, mp_figure_parse(c->name)), c->in_a,
                   c->a, c->in_b, c->b, exact);
    }
    if (d->n_tensors == 0) {
        out(f, "Tensors: no tensor changed bytes");
        return;
    }
    char title[96];
    snprintf(title, sizeof title, "Tensors: %zu changed, %zu grew; largest change first",
             d->n_tensors, d->n_grown);
    tensor_header(f, title, "a", "b");
    size_t top = exact || d->n_tensors <= MP_GATE_TENSORS_TOP * 2 ? d->n_tensors
                                                                  : MP_GATE_TENSORS_TOP * 2;
    for (size_t i = 0; i < top; i++)
        tensor_row(f, &d->tensors[i], exact);
    if (top < d->n_tensors)
        out(f, "  ... and %zu more (--exact lists them all)", d->n_tensors - top);
}
