/* The text summary of a session (see text_summary.h): layout only, every figure comes from
 * mp_summary. Each line goes through out() (mp_text_line, units.h), which replaces control
 * characters (names come from model files) and cuts what would pass 80 columns, so the
 * report always fits. */
#include "reports/text_summary.h"

#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "reports/units.h"

#define COLS MP_TEXT_COLS
#define LABEL "%-22s" /* the label column */

/* the shared line output of units.h */
#define fit mp_text_fit
#define out(...) mp_text_line(__VA_ARGS__)

/* ---- pieces ----------------------------------------------------------------------------- */

/* "1.2 MiB", or with exact "1.2 MiB (1258291 B)". */
static const char *bytes_str(char *buf, size_t n, uint64_t b, bool exact)
{
    char h[32];
    mp_fmt_bytes(h, sizeof h, b);
    if (exact && b >= 1024)
        snprintf(buf, n, "%s (%" PRIu64 " B)", h, b);
    else
        snprintf(buf, n, "%s", h);
    return buf;
}

static const char *phase_label(int kind)
{
    static const char *labels[MP_PHASE_KIND_COUNT] = {"load",         "prepare", "shape change",
                                                      "input/output", "run",     "teardown"};
    return kind >= 0 && kind < MP_PHASE_KIND_COUNT ? labels[kind] : "?";
}

static const char *kind_label(int kind)
{
    static const char *labels[MP_KIND_COUNT] = {"const",  "static", "dynamic", "scratch",
                                                "kernel", "io",     "engine",
                                                [MP_KIND_VARIABLE] = "variable",
    [MP_KIND_TRAIN_ACTIVATION] = "activation", [MP_KIND_TRAIN_TRAINABLE] = "trainable",
    [MP_KIND_TRAIN_BACKPROP] = "backprop", [MP_KIND_TRAIN_GRADIENT] = "gradient",
    [MP_KIND_TRAIN_OPTIMIZER] = "optimizer", [MP_KIND_TRAIN_DISPOSABLE] = "disposable",
    [MP_KIND_TRAIN_EXTRA] = "extra"};
    return kind >= 0 && kind < MP_KIND_COUNT && labels[kind] ? labels[kind] : "?";
}

/* "run 1, op #12 CONV_2D", "prepare", "run 2, between operators", "outside any phase". */
static const char *when_str(char *buf, size_t n, const mp_summary_when *w)
{
    char where[64];
    if (w->phase_kind < 0)
        snprintf(where, sizeof where, "outside any phase");
    else if (w->phase_kind == MP_PHASE_RUN)
        snprintf(where, sizeof where, "run %" PRIu64, w->run);
    else
        snprintf(where, sizeof where, "%s", phase_label(w->phase_kind));
    char opname[40];
    fit(opname, sizeof opname, w->op_name, 24);
    if (w->op >= 0)
        snprintf(buf, n, "%s, op #%" PRId32 " %s", where, w->op, opname);
    else if (w->phase_kind == MP_PHASE_RUN)
        snprintf(buf, n, "%s, between operators", where);
    else
        snprintf(buf, n, "%s", where);
    return buf;
}

static bool is_model_input(const mp_trace_meta *m, int32_t t)
{
    if (!m || !m->inputs)
        return false;
    for (int32_t i = 0; i < m->n_inputs; i++)
        if (m->inputs[i] == t)
            return true;
    return false;
}

/* The bytes column of item lists: "   1.2 MiB", with exact "   1.2 MiB   (1258291 B)". */
static int bytes_col(char *buf, size_t n, uint64_t b, bool exact)
{
    char h[32], x[32] = "";
    mp_fmt_bytes(h, sizeof h, b);
    if (exact && b >= 1024)
        snprintf(x, sizeof x, "(%" PRIu64 " B)", b);
    if (exact)
        snprintf(buf, n, "%10s %15s", h, x);
    else
        snprintf(buf, n, "%10s", h);
    return exact ? 26 : 10;
}

static const char *plural(uint64_t n)
{
    return n == 1 ? "" : "s";
}

void mp_report_arena_contents(const mp_summary_alive *a, char *buf, size_t n)
{
    uint32_t own = a->n_blocks - (a->n_scratch < a->n_blocks ? a->n_scratch : a->n_blocks);
    uint64_t tensors = (uint64_t)own + a->n_in_place;
    if (a->n_in_place == 0 && a->n_scratch == 0) {
        snprintf(buf, n, "%" PRIu32 " tensor%s planned", own, plural(own));
        return;
    }
    int k = snprintf(buf, n, "%" PRIu64 " tensor%s in %" PRIu32 " slot%s", tensors,
                     tensors == 1 ? "" : "s", a->n_blocks, plural(a->n_blocks));
    if (k >= 0 && (size_t)k < n && a->n_in_place > 0)
        k += snprintf(buf + k, n - (size_t)k, ", %" PRIu32 " in place", a->n_in_place);
    if (k >= 0 && (size_t)k < n && a->n_scratch > 0)
        snprintf(buf + k, n - (size_t)k, ", %" PRIu32 " scratch", a->n_scratch);
}

/* One "largest alive at peak" line. */
static void alive_line(FILE *f, const mp_trace_meta *m, const mp_summary_alive *a, bool exact)
{
    char b[64], desc[512], name[256], opname[40];
    int bw = bytes_col(b, sizeof b, a->bytes, exact);
    fit(opname, sizeof opname, a->op_name, 20);
    switch (a->home) {
    case MP_SUMMARY_BLOCK:
    case MP_SUMMARY_SLOT: {
        char from[64];
        if (a->op >= 0)
            snprintf(from, sizeof from, "op #%" PRId32 " %s", a->op, opname);
        else
            snprintf(from, sizeof from, "%s",
                     is_model_input(m, a->tensor) ? "model input" : "no producer");
        char tail[96];
        snprintf(tail, sizeof tail, " (%s; %s)",
                 a->home == MP_SUMMARY_SLOT ? "planned" : kind_label(a->kind), from);
        char head[24];
        snprintf(head, sizeof head, "#%" PRId32 " ", a->tensor);
        int used = 2 + bw + 2 + (int)strlen(head) + (int)strlen(tail);
        int room = COLS - used;
        fit(name, sizeof name, a->name, room > 8 ? (size_t)room : 8);
        snprintf(desc, sizeof desc, "%s%s%s", head, name, tail);
        break;
    }
    case MP_SUMMARY_OP_BUFFERS:
        snprintf(desc, sizeof desc, "%s buffers of op #%" PRId32 " %s (%" PRIu32 " block%s)",
                 kind_label(a->kind), a->op, opname, a->n_blocks, plural(a->n_blocks));
        break;
    case MP_SUMMARY_OWNERLESS:
        if (a->kind == MP_KIND_IO) /* the engine's io blocks all have a tensor */
            snprintf(desc, sizeof desc, "the caller's own buffers (%" PRIu32 " block%s)",
                     a->n_blocks, plural(a->n_blocks));
        else
            snprintf(desc, sizeof desc, "%s buffers, no owner (%" PRIu32 " block%s)",
                     kind_label(a->kind), a->n_blocks, plural(a->n_blocks));
        break;
    case MP_SUMMARY_ARENA_FREE:
        snprintf(desc, sizeof desc, "arena %" PRIu64 ": bytes no alive tensor uses", a->id);
        break;
    case MP_SUMMARY_ARENA:
        if (a->n_blocks == 0) /* allocated, its plan not recorded yet */
            snprintf(desc, sizeof desc, "arena %" PRIu64 ", allocated before its plan", a->id);
        else {
            char what[96];
            mp_report_arena_contents(a, what, sizeof what);
            snprintf(desc, sizeof desc, "planned arena %" PRIu64 " (%s)", a->id, what);
        }
        break;
    case MP_SUMMARY_SCRATCH:
        snprintf(desc, sizeof desc, "scratch of op #%" PRId32 " %s (planned)", a->op, opname);
        break;
    }
    out(f, "  %s  %s", b, desc);
}

/* ---- sections --------------------------------------------------------------------------- */

static void section_header(FILE *f, const mp_trace_meta *m, const mp_summary *s)
{
    if (!m) {
        out(f, "memprof summary (%zu events)", s->n_events);
        return;
    }
    mp_text_title(f, "memprof summary", m->model ? m->model : "?");
    out(f, "  mode %s, planner %s, %" PRId32 " thread%s, %zu events", m->mode ? m->mode : "?",
        m->planner ? m->planner : "?", m->threads, m->threads == 1 ? "" : "s", s->n_events);
}

static void section_time(FILE *f, const mp_summary *s)
{
    static const int order[] = {MP_PHASE_LOAD, MP_PHASE_PREPARE, MP_PHASE_SHAPE, MP_PHASE_IO,
                                MP_PHASE_TEARDOWN};
    char t1[32], t2[32], t3[32], t4[32];
    out(f, "Time");
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        int k = order[i];
        char label[48];
        snprintf(label, sizeof label, "  %s", phase_label(k));
        if (s->phase_count[k] == 0)
            out(f, LABEL "%s", label, "-");
        else if (s->phase_count[k] == 1)
            out(f, LABEL "%s", label, mp_fmt_ns(t1, sizeof t1, s->phase_ns[k]));
        else
            out(f, LABEL "%s in all (%" PRIu32 " times)", label,
                mp_fmt_ns(t1, sizeof t1, s->phase_ns[k]), s->phase_count[k]);
    }
    out(f, LABEL "%zu", "  runs", s->n_runs);
    if (s->n_runs == 0)
        return;
    out(f, LABEL "%s", "  first run", mp_fmt_ns(t1, sizeof t1, s->first_run_ns));
    if (s->n_later == 0)
        return;
    char label[48];
    snprintf(label, sizeof label, "  later runs (%zu)", s->n_later);
    out(f, LABEL "%s median, %s mean", label, mp_fmt_ns(t1, sizeof t1, s->later_median_ns),
        mp_fmt_ns(t2, sizeof t2, s->later_mean_ns));
    out(f, LABEL "%s min, %s max", "", mp_fmt_ns(t3, sizeof t3, s->later_min_ns),
        mp_fmt_ns(t4, sizeof t4, s->later_max_ns));
}

static void section_peak(FILE *f, const mp_summary *s, bool exact)
{
    char b1[64], b2[64], w[160];
    if (s->peak.event < 0) {
        out(f, LABEL "%s", "Heap peak", "0 B: nothing was allocated");
    } else {
        out(f, LABEL "%s", "Heap peak", bytes_str(b1, sizeof b1, s->peak_heap, exact));
        out(f, LABEL "%s (event %" PRId64 ")", "  when", when_str(w, sizeof w, &s->peak),
            s->peak.event);
    }
    int cw = exact ? 27 : 12;
    out(f, LABEL "%-*s%s", "  kind", cw, "at peak", "own peak");
    for (int k = 0; k < MP_KIND_COUNT; k++) {
        if (k == MP_KIND_CONST ||
            (k >= MP_KIND_TRAIN_ACTIVATION && s->kind_peak[k] == 0)) /* training: when used */
            continue;
        char label[48];
        snprintf(label, sizeof label, "  %s", kind_label(k));
        out(f, LABEL "%-*s%s", label, cw, bytes_str(b1, sizeof b1, s->peak_live[k], exact),
            bytes_str(b2, sizeof b2, s->kind_peak[k], exact));
    }
    if (s->caller_peak > 0)
        out(f, LABEL "%-*s%s", "  of io: caller's", cw,
            bytes_str(b1, sizeof b1, s->peak_caller, exact),
            bytes_str(b2, sizeof b2, s->caller_peak, exact));
    if (s->model_heap > 0) /* the model's own bytes: the reconciliation and JSON's model_heap */
        out(f, LABEL "%s, in the model held on the heap", "  const",
            bytes_str(b1, sizeof b1, s->const_bytes, exact));
    else
        out(f, LABEL "%s, mapped from the model (not heap)", "  const",
            bytes_str(b1, sizeof b1, s->const_bytes, exact));
}

static void section_alive(FILE *f, const mp_trace_meta *m, const mp_summary *s, bool exact)
{
    if (s->n_alive == 0)
        return;
    out(f, "Largest alive at peak");
    bool arenas = false;
    for (size_t i = 0; i < s->n_alive; i++)
        arenas = arenas || s->alive[i].home == MP_SUMMARY_SLOT ||
                 s->alive[i].home == MP_SUMMARY_ARENA || s->alive[i].home == MP_SUMMARY_ARENA_FREE;
    if (arenas && s->peak_slots_by_op) {
        char opname[40];
        fit(opname, sizeof opname, s->peak.op_name, 24);
        out(f, "  (planned tensors: those live at op #%" PRId32 " %s)", s->peak.op, opname);
    } else if (arenas) {
        out(f, "  (outside operators: planned arenas count whole)");
    }
    size_t top = s->n_alive < MP_REPORT_SUMMARY_TOP ? s->n_alive : MP_REPORT_SUMMARY_TOP;
    for (size_t i = 0; i < top; i++)
        alive_line(f, m, &s->alive[i], exact);
    if (s->n_alive > top) {
        uint64_t rest = 0;
        for (size_t i = top; i < s->n_alive; i++)
            rest += s->alive[i].bytes;
        char b[64];
        bytes_col(b, sizeof b, rest, exact);
        out(f, "  %s  ... and %zu more", b, s->n_alive - top);
    }
}

static void section_runs(FILE *f, const mp_summary *s, bool exact)
{
    if (s->n_runs == 0) {
        out(f, LABEL "%s", "Allocations per run", "no runs");
        return;
    }
    /* Rows are figures, columns the first run and the maximum over later runs. */
    int cw = exact ? 29 : 18;
    bool later = s->n_later > 0;
    const mp_summary_run *r1 = &s->first_run, *rm = &s->later_max;
    char h1[48], b1[64], b2[64];
    snprintf(h1, sizeof h1, "first (run %" PRIu64 ")", r1->run);
    out(f, LABEL "%-*s%s", "Allocations per run", cw, h1, later ? "later runs, max" : "");
    char n1[32], n2[32];
    snprintf(n1, sizeof n1, "%" PRIu64, r1->n_alloc);
    snprintf(n2, sizeof n2, "%" PRIu64, rm->n_alloc);
    out(f, LABEL "%-*s%s", "  allocations", cw, n1, later ? n2 : "");
    out(f, LABEL "%-*s%s", "  bytes allocated", cw,
        bytes_str(b1, sizeof b1, r1->bytes_alloc, exact),
        later ? bytes_str(b2, sizeof b2, rm->bytes_alloc, exact) : "");
    snprintf(n1, sizeof n1, "%" PRIu64, r1->n_free);
    snprintf(n2, sizeof n2, "%" PRIu64, rm->n_free);
    out(f, LABEL "%-*s%s", "  frees", cw, n1, later ? n2 : "");
    out(f, LABEL "%-*s%s", "  bytes freed", cw, bytes_str(b1, sizeof b1, r1->bytes_freed, exact),
        later ? bytes_str(b2, sizeof b2, rm->bytes_freed, exact) : "");
}

static void section_static_dynamic(FILE *f, const mp_summary *s, bool exact)
{
    char b[64], w[160];
    out(f, LABEL "%s, peak live", "Static bytes", bytes_str(b, sizeof b, s->static_bytes, exact));
    out(f, LABEL "%s, peak live", "Dynamic bytes",
        bytes_str(b, sizeof b, s->dynamic_bytes, exact));
    if (s->dup_bytes == 0) {
        out(f, LABEL "0 B: no tensor was held twice", "Duplicated bytes");
        return;
    }
    out(f, LABEL "%s at most", "Duplicated bytes", bytes_str(b, sizeof b, s->dup_bytes, exact));
    out(f, LABEL "%s (event %" PRId64 ")", "  when", when_str(w, sizeof w, &s->dup),
        s->dup.event);
    size_t top = s->n_dups < MP_REPORT_SUMMARY_TOP_DUPS ? s->n_dups : MP_REPORT_SUMMARY_TOP_DUPS;
    for (size_t i = 0; i < top; i++) {
        const mp_summary_dup *d = &s->dups[i];
        char tail[96], name[256];
        snprintf(tail, sizeof tail, ": %s in %" PRIu32 " homes", bytes_str(b, sizeof b, d->bytes,
                 exact), d->homes);
        char head[24];
        snprintf(head, sizeof head, "  #%" PRId32 " ", d->tensor);
        int room = COLS - (int)strlen(head) - (int)strlen(tail);
        fit(name, sizeof name, d->name, room > 8 ? (size_t)room : 8);
        out(f, "%s%s%s", head, name, tail);
    }
    if (s->n_dups > top)
        out(f, "  ... and %zu more tensors", s->n_dups - top);
}

static void section_copies(FILE *f, const mp_summary *s, bool exact)
{
    char b1[64], b2[64];
    out(f, LABEL "%" PRIu64 " cop%s, %s", "Copies in", s->n_copy_in,
        s->n_copy_in == 1 ? "y" : "ies", bytes_str(b1, sizeof b1, s->bytes_copy_in, exact));
    out(f, LABEL "%" PRIu64 " cop%s, %s", "Copies out", s->n_copy_out,
        s->n_copy_out == 1 ? "y" : "ies", bytes_str(b2, sizeof b2, s->bytes_copy_out, exact));
}

static void section_balance(FILE *f, const mp_summary *s, bool exact)
{
    char b1[64], b2[64];
    out(f, LABEL "%" PRIu64 " allocation%s, %" PRIu64 " reallocation%s, %" PRIu64 " free%s",
        "Balance", s->n_alloc, plural(s->n_alloc), s->n_realloc, plural(s->n_realloc), s->n_free,
        plural(s->n_free));
    out(f, LABEL "%s", "  allocated", bytes_str(b1, sizeof b1, s->bytes_alloc, exact));
    out(f, LABEL "%s", "  freed", bytes_str(b2, sizeof b2, s->bytes_freed, exact));
    if (s->live_end == 0) {
        out(f, LABEL "0 B: every byte allocated has been freed", "  live at end");
    } else {
        out(f, LABEL "%s NOT FREED", "  live at end", bytes_str(b1, sizeof b1, s->live_end, exact));
        for (int k = 0; k < MP_KIND_COUNT; k++) {
            if (k == MP_KIND_CONST || s->live_end_kind[k] == 0)
                continue;
            char label[48];
            snprintf(label, sizeof label, "    %s", kind_label(k));
            out(f, LABEL "%s", label, bytes_str(b1, sizeof b1, s->live_end_kind[k], exact));
        }
    }
    if (s->live_end_kind[MP_KIND_CONST] != 0)
        out(f, LABEL "%s", "  const still mapped",
            bytes_str(b1, sizeof b1, s->live_end_kind[MP_KIND_CONST], exact));
}

static void section_unaccounted(FILE *f, const mp_trace_meta *m, const mp_summary *s, bool exact)
{
    char b1[64], b2[64], b3[64];
    if (!s->unaccounted_measured) {
        out(f, LABEL "not measured", "Unaccounted heap");
        return;
    }
    mp_fmt_sbytes(b1, sizeof b1, s->unaccounted);
    if (exact)
        out(f, LABEL "%s (%" PRId64 " B)", "Unaccounted heap", b1, s->unaccounted);
    else
        out(f, LABEL "%s", "Unaccounted heap", b1);
    if (m && m->process_heap_peak >= 0 && m->allocator_overhead >= 0) {
        out(f, LABEL "= process heap peak %s", "",
            bytes_str(b1, sizeof b1, (uint64_t)m->process_heap_peak, exact));
        out(f, LABEL "- recorded heap peak %s", "", bytes_str(b2, sizeof b2, s->peak_heap, exact));
        out(f, LABEL "- allocator overhead %s", "",
            bytes_str(b3, sizeof b3, (uint64_t)m->allocator_overhead, exact));
        if (s->model_heap > 0)
            out(f, LABEL "- model held on the heap %s", "",
                bytes_str(b3, sizeof b3, s->model_heap, exact));
    }
}

static void section_health(FILE *f, const mp_summary *s)
{
    if (s->truncated)
        out(f, "Warning: the trace was cut short (recorder out of memory); figures are partial");
    if (s->n_anomalies > 0) {
        out(f, "Warning: %" PRIu64 " inconsistent event%s in the trace; the first:",
            s->n_anomalies, s->n_anomalies == 1 ? "" : "s");
        out(f, "  %s", s->anomaly);
    }
}

void mp_report_summary_body_text(FILE *f, const mp_trace_meta *m, const mp_summary *s,
                                  bool exact)
{
    section_health(f, s);
    section_time(f, s);
    section_peak(f, s, exact);
    section_alive(f, m, s, exact);
    section_runs(f, s, exact);
    section_static_dynamic(f, s, exact);
    section_copies(f, s, exact);
    section_balance(f, s, exact);
    section_unaccounted(f, m, s, exact);
}

void mp_report_summary_text_meta(FILE *f, const mp_trace_meta *m, const mp_summary *s,
                                 bool exact)
{
    section_header(f, m, s);
    mp_report_summary_body_text(f, m, s, exact);
}

void mp_report_summary_text(FILE *f, const mp_trace *tr, const mp_summary *s, bool exact)
{
    mp_report_summary_text_meta(f, tr ? mp_trace_get_meta(tr) : NULL, s, exact);
}
