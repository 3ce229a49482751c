/* The text report of a profile and of two profiles compared (see text_profile.h): layout
 * only, every figure comes from mp_profile / mp_profile_diff. Lines go through
 * mp_text_line (units.h), which makes names safe and cuts at 80 columns. */
#include "reports/text_profile.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "reports/text_summary.h"
#include "reports/units.h"

#define out(...) mp_text_line(__VA_ARGS__)
#define LABEL "%-22s"

/* ---- pieces ------------------------------------------------------------------------- */

static const char *plural(uint64_t n)
{
    return n == 1 ? "" : "s";
}

static const char *op_name(const mp_profile *p, int32_t op)
{
    return op >= 0 && (size_t)op < p->n_ops ? p->ops[op].name : NULL;
}

/* "op #12 CONV_2D" (name cut to 20 columns), "-" for none. */
static const char *op_str(char *buf, size_t n, const mp_profile *p, int32_t op)
{
    if (op < 0) {
        snprintf(buf, n, "-");
        return buf;
    }
    char name[96];
    mp_text_fit(name, sizeof name, op_name(p, op), 20);
    snprintf(buf, n, "op #%" PRId32 " %s", op, name);
    return buf;
}

/* "12-15", "12", "-". */
static const char *ops_range(char *buf, size_t n, int32_t first, int32_t last)
{
    if (first < 0 && last < 0)
        snprintf(buf, n, "-");
    else if (first == last)
        snprintf(buf, n, "%" PRId32, first);
    else
        snprintf(buf, n, "%" PRId32 "-%" PRId32, first, last);
    return buf;
}

/* Where a timeline point's moment is: "run 3, op #12 CONV_2D", "prepare". */
static const char *where_str(char *buf, size_t n, const mp_profile *p, const mp_tl_point *pt)
{
    char ops[128];
    if (pt->phase_kind < 0)
        snprintf(buf, n, "outside phases");
    else if (pt->phase_kind == MP_PHASE_RUN && pt->op >= 0)
        snprintf(buf, n, "run %" PRIu64 ", %s", pt->run, op_str(ops, sizeof ops, p, pt->op));
    else if (pt->phase_kind == MP_PHASE_RUN)
        snprintf(buf, n, "run %" PRIu64 ", between operators", pt->run);
    else if (pt->op >= 0)
        snprintf(buf, n, "%s, %s", mp_phase_label(pt->phase_kind),
                 op_str(ops, sizeof ops, p, pt->op));
    else
        snprintf(buf, n, "%s", mp_phase_label(pt->phase_kind));
    return buf;
}

static const char *ratio(char *buf, size_t n, uint64_t num, uint64_t den)
{
    if (den == 0)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.2fx", (double)num / (double)den);
    return buf;
}

/* ---- header ------------------------------------------------------------------------- */

static void section_header(FILE *f, const mp_profile *p)
{
    const mp_trace_meta *m = p->meta;
    mp_text_title(f, "memprof report", m && m->model ? m->model : "?");
    if (m)
        out(f, "  mode %s, planner %s, %" PRId32 " thread%s, %zu events",
            m->mode ? m->mode : "?", m->planner ? m->planner : "?", m->threads,
            plural((uint64_t)(m->threads > 0 ? m->threads : 0)), p->summary.n_events);
    char ref[48] = "no run";
    if (p->reference_run >= 0)
        snprintf(ref, sizeof ref, "reference run %" PRId64, p->reference_run);
    out(f, "  %zu operators, %zu tensors, %" PRIu64 " operator step%s, %s", p->n_ops,
        p->n_lifetimes, p->n_steps, plural(p->n_steps), ref);
}

/* ---- timeline ----------------------------------------------------------------------- */

/* One character per group of points, from the lowest value (lowest block) to the highest
 * (full block); a flat line is drawn at half height. */
static void sparkline(FILE *f, const char *label, const mp_timeline *t, bool rss)
{
    static const char *blocks[8] = {"\u2581", "\u2582", "\u2583", "\u2584",
                                    "\u2585", "\u2586", "\u2587", "\u2588"};
    size_t cols = t->n < MP_REPORT_SPARK_COLS ? t->n : MP_REPORT_SPARK_COLS;
    if (cols == 0)
        return;
    uint64_t max = 0, min = UINT64_MAX;
    for (size_t i = 0; i < t->n; i++) {
        uint64_t v = rss ? t->pts[i].rss : t->pts[i].heap;
        if (v > max)
            max = v;
        if (v < min)
            min = v;
    }
    char line[MP_REPORT_SPARK_COLS * 4 + 32];
    size_t o = (size_t)snprintf(line, sizeof line, "  %-6s", label);
    for (size_t c = 0; c < cols; c++) {
        size_t lo = c * t->n / cols, hi = (c + 1) * t->n / cols;
        uint64_t v = 0;
        for (size_t i = lo; i < hi; i++) {
            uint64_t x = rss ? t->pts[i].rss : t->pts[i].heap;
            if (x > v)
                v = x;
        }
        const char *s = blocks[3];
        if (max > min) {
            uint64_t level = (uint64_t)((double)(v - min) * 7.0 / (double)(max - min) + 0.5);
            s = blocks[level > 7 ? 7 : level];
        }
        size_t len = strlen(s);
        memcpy(line + o, s, len);
        o += len;
    }
    line[o] = '\0';
    out(f, "%s", line);
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

static void section_timeline(FILE *f, const mp_profile *p, bool exact)
{
    bool by_step = p->n_steps > 0;
    const mp_timeline *t = by_step ? &p->by_step : &p->by_event;
    char b1[64], b2[64], w[160];
    if (t->n == 0) {
        out(f, LABEL "no events", "Timeline");
        return;
    }
    out(f, LABEL "heap by %s, %zu point%s (%" PRIu64 " %s%s each)", "Timeline",
        by_step ? "operator step" : "event", t->n, plural(t->n), t->per_point,
        by_step ? "step" : "event", plural(t->per_point));
    sparkline(f, "heap", t, false);
    if (t->has_rss)
        sparkline(f, "rss", t, true);
    const mp_tl_point *pk = &t->pts[t->peak];
    uint64_t low = UINT64_MAX;
    for (size_t i = 0; i < t->n; i++)
        if (t->pts[i].heap < low)
            low = t->pts[i].heap;
    out(f, "  lowest %s, peak %s: %s (event %" PRId64 ")", mp_fmt_bytes(b2, sizeof b2, low),
        mp_fmt_bytes_x(b1, sizeof b1, pk->heap, exact), where_str(w, sizeof w, p, pk),
        p->summary.peak.event);

    /* a few points evenly spread, and the peak */
    size_t all[MP_REPORT_TIMELINE_ROWS + 1], n = 0;
    size_t want = t->n < MP_REPORT_TIMELINE_ROWS ? t->n : MP_REPORT_TIMELINE_ROWS;
    bool has_peak = false;
    for (size_t i = 0; i < want; i++) {
        size_t at = want == 1 ? 0 : i * (t->n - 1) / (want - 1);
        if (n > 0 && all[n - 1] == at)
            continue;
        all[n++] = at;
        has_peak = has_peak || at == t->peak;
    }
    if (!has_peak)
        all[n++] = t->peak;
    qsort(all, n, sizeof *all, cmp_size);
    out(f, "  %-13s %-39s %10s %10s", by_step ? "steps" : "events", "where (highest heap)",
        "heap", t->has_rss ? "rss" : "");
    for (size_t i = 0; i < n; i++) {
        const mp_tl_point *pt = &t->pts[all[i]];
        char x[40];
        uint64_t lo = by_step ? pt->step_first : pt->ev_first;
        uint64_t hi = by_step ? pt->step_last : pt->ev_last;
        if (lo == hi)
            snprintf(x, sizeof x, "%" PRIu64, lo);
        else
            snprintf(x, sizeof x, "%" PRIu64 "-%" PRIu64, lo, hi);
        char wh[48];
        mp_text_fit(wh, sizeof wh, where_str(w, sizeof w, p, pt), 37);
        out(f, "  %-13s %-37s %s %10s %10s", x, wh, all[i] == t->peak ? "*" : " ",
            mp_fmt_cell(b1, sizeof b1, pt->heap, exact),
            t->has_rss ? (pt->rss ? mp_fmt_cell(b2, sizeof b2, pt->rss, exact) : "-") : "");
    }
    if (p->n_rss > 0)
        out(f, "  process: %" PRIu64 " RSS sample%s, at most %s; high-water mark %s", p->n_rss,
            plural(p->n_rss), mp_fmt_bytes_x(b1, sizeof b1, p->rss_max, exact),
            mp_fmt_bytes_x(b2, sizeof b2, p->rss_hwm, exact));
}

/* ---- lifetimes ---------------------------------------------------------------------- */

static int cmp_life(const void *pa, const void *pb)
{
    const mp_lifetime *a = *(const mp_lifetime *const *)pa, *b = *(const mp_lifetime *const *)pb;
    if (a->bytes != b->bytes)
        return a->bytes > b->bytes ? -1 : 1;
    return (a->tensor > b->tensor) - (a->tensor < b->tensor);
}

static void section_lifetimes(FILE *f, const mp_profile *p, bool exact)
{
    size_t per_mgr[MP_MGR_COUNT] = {0}, shared = 0;
    const mp_lifetime **v = malloc((p->n_lifetimes + 1) * sizeof *v);
    if (!v)
        return;
    size_t n = 0;
    for (size_t i = 0; i < p->n_lifetimes; i++) {
        const mp_lifetime *l = &p->lifetimes[i];
        if (l->manager < MP_MGR_COUNT)
            per_mgr[l->manager]++;
        shared += l->in_place;
        if (l->manager != MP_MGR_NONE && (l->manager != MP_MGR_CONST || l->bytes > 0))
            v[n++] = l;
    }
    char when[48];
    if (p->reference_run >= 0)
        snprintf(when, sizeof when, "run %" PRId64, p->reference_run);
    else
        snprintf(when, sizeof when, "whole trace (no run)");
    /* the managers that hold some tensor, in mp_manager order, "none" last */
    char counts[160] = "";
    size_t len = 0;
    for (int m = 1; m <= MP_MGR_COUNT && len < sizeof counts; m++) {
        int g = m == MP_MGR_COUNT ? MP_MGR_NONE : m;
        if (per_mgr[g] == 0)
            continue;
        len += (size_t)snprintf(counts + len, sizeof counts - len, "%s%zu %s", len ? ", " : "",
                                per_mgr[g], mp_manager_name(g));
        if (g == MP_MGR_ARENA && shared > 0 && len < sizeof counts) /* "shared" below */
            len += (size_t)snprintf(counts + len, sizeof counts - len, " (%zu shared)", shared);
    }
    out(f, LABEL "%s: %s", "Lifetimes", when, len ? counts : "no tensor");
    if (n == 0) {
        out(f, "  no tensor was held");
        free(v);
        return;
    }
    qsort(v, n, sizeof *v, cmp_life);
    size_t top = exact || n <= MP_REPORT_LIFETIMES_TOP ? n : MP_REPORT_LIFETIMES_TOP;
    /* 2 + 7 + name + 8 + 10 + 11 + 11 = 80 */
    enum { NAME_W = 31 };
    out(f, "  %-6s %-*s %-7s %-9s %10s %10s", "tensor", NAME_W, "name", "manager", "ops",
        "offset", "bytes");
    for (size_t i = 0; i < top; i++) {
        const mp_lifetime *l = v[i];
        char idx[16], name[NAME_W * 4 + 8], ops[32], off[32], b[32];
        snprintf(idx, sizeof idx, "#%" PRId32, l->tensor);
        mp_text_fit(name, sizeof name, l->name, NAME_W);
        if (l->offset >= 0)
            snprintf(off, sizeof off, "%" PRId64, l->offset);
        else
            snprintf(off, sizeof off, "-");
        /* names are cut by code points: pad by hand so that the columns stay aligned */
        size_t cols = 0;
        for (const char *c = name; *c; c++)
            cols += ((unsigned char)*c & 0xC0) != 0x80;
        out(f, "  %-6s %s%*s %-7s %-9s %10s %10s", idx, name, (int)(NAME_W - cols), "",
            l->in_place ? "shared" : mp_manager_name(l->manager), ops_range(ops, sizeof ops, l->first_op, l->last_op), off,
            mp_fmt_cell(b, sizeof b, l->bytes, exact));
    }
    if (n > top)
        out(f, "  ... %zu more (--exact lists every tensor)", n - top);
    free(v);
}

/* ---- plan quality ------------------------------------------------------------------- */

static void arena_block(FILE *f, const mp_profile *p, const mp_arena_report *a, bool exact)
{
    char b1[64], r[32], o[128], ev[64];
    if (a->free_event == UINT64_MAX)
        snprintf(ev, sizeof ev, "events %" PRIu64 "-end", a->alloc_event);
    else
        snprintf(ev, sizeof ev, "events %" PRIu64 "-%" PRIu64, a->alloc_event, a->free_event);
    size_t scratch = 0;
    for (size_t i = 0; i < a->n_slots; i++)
        scratch += a->slots[i].kind == MP_KIND_SCRATCH;
    char sc[48] = "";
    if (scratch)
        snprintf(sc, sizeof sc, " + %zu scratch", scratch);
    out(f, "  arena %" PRIu64 "%s: %zu tensor%s%s, used by %" PRIu64 " run%s, %s", a->id,
        a->in_reference_run ? " (reference run)" : "", a->n_slots - scratch,
        plural(a->n_slots - scratch), sc, a->runs, plural(a->runs), ev);
    out(f, LABEL "%s", "    size", mp_fmt_bytes_x(b1, sizeof b1, a->bytes, exact));
    out(f, LABEL "%s at %s; size %s", "    lower bound",
        mp_fmt_bytes_x(b1, sizeof b1, a->lower_bound, exact),
        op_str(o, sizeof o, p, a->lower_bound_op), ratio(r, sizeof r, a->bytes, a->lower_bound));
    out(f, LABEL "%s (no reuse); size %s", "    naive", mp_fmt_bytes_x(b1, sizeof b1, a->naive,
        exact), ratio(r, sizeof r, a->bytes, a->naive));
    out(f, LABEL "%s (end of the highest slot)", "    used",
        mp_fmt_bytes_x(b1, sizeof b1, a->used, exact));
    if (a->n_ops > 0)
        out(f, LABEL "%s at most (%s), %s at least", "    free bytes",
            mp_fmt_bytes_x(b1, sizeof b1, a->frag_max, exact),
            op_str(o, sizeof o, p, a->frag_max_op),
            mp_fmt_bytes_x(r, sizeof r, a->bytes > a->lower_bound ? a->bytes - a->lower_bound : 0,
                           false));
}

static void section_plan(FILE *f, const mp_profile *p, bool exact)
{
    if (p->n_arenas_total == 0) {
        out(f, LABEL "no arena was planned", "Plan quality");
        return;
    }
    out(f, LABEL "%zu arena%s planned (%zu kept)", "Plan quality", p->n_arenas_total,
        plural(p->n_arenas_total), p->n_arenas);
    size_t shown = 0, limit = exact ? p->n_arenas : MP_REPORT_ARENAS_TOP;
    if (p->reference_arena >= 0) {
        arena_block(f, p, &p->arenas[p->reference_arena], exact);
        shown++;
    }
    for (size_t i = 0; i < p->n_arenas && shown < limit; i++) {
        if ((int64_t)i == p->reference_arena)
            continue;
        arena_block(f, p, &p->arenas[i], exact);
        shown++;
    }
    if (p->n_arenas_total > shown)
        out(f, "  ... %zu more arena%s", p->n_arenas_total - shown,
            plural(p->n_arenas_total - shown));
}

/* ---- per operator ------------------------------------------------------------------- */

static int cmp_op(const void *pa, const void *pb)
{
    const mp_op_report *a = *(const mp_op_report *const *)pa;
    const mp_op_report *b = *(const mp_op_report *const *)pb;
    if (a->bytes_alloc != b->bytes_alloc)
        return a->bytes_alloc > b->bytes_alloc ? -1 : 1;
    if (a->time_ns != b->time_ns)
        return a->time_ns > b->time_ns ? -1 : 1;
    return (a->op > b->op) - (a->op < b->op);
}

static void section_ops(FILE *f, const mp_profile *p, bool exact)
{
    if (p->n_ops == 0) {
        out(f, LABEL "no operators", "Per operator");
        return;
    }
    const mp_op_report **v = malloc(p->n_ops * sizeof *v);
    if (!v)
        return;
    for (size_t i = 0; i < p->n_ops; i++)
        v[i] = &p->ops[i];
    qsort(v, p->n_ops, sizeof *v, cmp_op);
    size_t top = exact || p->n_ops <= MP_REPORT_OPS_TOP ? p->n_ops : MP_REPORT_OPS_TOP;
    out(f, LABEL "%s%zu operators, by bytes allocated, then time", "Per operator",
        top < p->n_ops ? "top of " : "", p->n_ops);
    out(f, "  %-5s %-12s %5s %9s %10s %10s %10s %10s", "op", "name", "steps", "time",
        "allocated", "scratch", "kernel", "outputs");
    for (size_t i = 0; i < top; i++) {
        const mp_op_report *o = v[i];
        char idx[16], name[64], t[32], b1[32], b2[32], b3[32], b4[32], steps[24];
        snprintf(idx, sizeof idx, "#%" PRId32, o->op);
        mp_text_fit(name, sizeof name, o->name, 12);
        snprintf(steps, sizeof steps, "%" PRIu64, o->n_exec);
        out(f, "  %-5s %-12s %5s %9s %10s %10s %10s %10s", idx, name, steps,
            mp_fmt_ns(t, sizeof t, o->time_ns), mp_fmt_cell(b1, sizeof b1, o->bytes_alloc, exact),
            mp_fmt_cell(b2, sizeof b2, o->scratch_bytes, exact),
            mp_fmt_cell(b3, sizeof b3, o->kernel_bytes, exact),
            mp_fmt_cell(b4, sizeof b4, o->output_bytes, exact));
    }
    if (p->n_ops > top) {
        uint64_t bytes = 0, ns = 0;
        for (size_t i = top; i < p->n_ops; i++) {
            bytes += v[i]->bytes_alloc;
            ns += v[i]->time_ns;
        }
        char t[32], b[32];
        out(f, "  ... %zu more: %s, %s allocated (--exact lists every operator)",
            p->n_ops - top, mp_fmt_ns(t, sizeof t, ns), mp_fmt_bytes(b, sizeof b, bytes));
    }
    free(v);
}

/* ---- waste -------------------------------------------------------------------------- */

static void section_waste(FILE *f, const mp_profile *p, bool exact)
{
    const mp_summary *s = &p->summary;
    char b1[64], b2[64];
    out(f, "Waste");
    if (s->dup_bytes == 0)
        out(f, LABEL "0 B: no tensor was held twice", "  duplicated");
    else
        out(f, LABEL "%s at most (event %" PRId64 ", %zu tensor%s)", "  duplicated",
            mp_fmt_bytes_x(b1, sizeof b1, s->dup_bytes, exact), s->dup.event, s->n_dups,
            plural(s->n_dups));
    if (p->n_unused == 0) {
        out(f, LABEL "0 B: every block was live during an operator", "  never used");
    } else {
        out(f, LABEL "%s in %" PRIu64 " block%s no operator ran with", "  never used",
            mp_fmt_bytes_x(b1, sizeof b1, p->unused_bytes, exact), p->n_unused,
            plural(p->n_unused));
        size_t top = exact || p->n_unused_listed <= MP_REPORT_UNUSED_TOP ? p->n_unused_listed
                                                                          : MP_REPORT_UNUSED_TOP;
        for (size_t i = 0; i < top; i++) {
            const mp_unused_block *u = &p->unused[i];
            char owner[96] = "", name[64];
            if (u->tensor >= 0) {
                mp_text_fit(name, sizeof name, u->name, 24);
                snprintf(owner, sizeof owner, " of #%" PRId32 " %s", u->tensor, name);
            }
            out(f, "    %10s  %s block %" PRIu64 "%s, %s (event %" PRIu64 ")",
                mp_fmt_cell(b1, sizeof b1, u->bytes, exact), mp_kind_label(u->kind), u->id, owner,
                u->phase_kind >= 0 ? mp_phase_label(u->phase_kind) : "?", u->alloc_event);
        }
        if (p->n_unused > top)
            out(f, "    ... %" PRIu64 " more", p->n_unused - top);
    }
    out(f, LABEL "%" PRIu64 " in, %s; %" PRIu64 " out, %s", "  copies", s->n_copy_in,
        mp_fmt_bytes_x(b1, sizeof b1, s->bytes_copy_in, exact), s->n_copy_out,
        mp_fmt_bytes_x(b2, sizeof b2, s->bytes_copy_out, exact));
}

void mp_report_profile_text(FILE *f, const mp_profile *p, bool exact)
{
    section_header(f, p);
    mp_report_summary_body_text(f, p->meta, &p->summary, exact);
    section_timeline(f, p, exact);
    section_lifetimes(f, p, exact);
    section_plan(f, p, exact);
    section_ops(f, p, exact);
    section_waste(f, p, exact);
}

/* ---- two profiles ------------------------------------------------------------------- */

static void diff_side(FILE *f, const char *tag, const mp_profile *p)
{
    const mp_trace_meta *m = p->meta;
    char model[MP_TEXT_COLS * 4 + 8];
    mp_text_fit_middle(model, sizeof model, m ? m->model : NULL, 36);
    out(f, "  %s  %s (mode %s, planner %s, %zu events)", tag, model,
        m && m->mode ? m->mode : "?", m && m->planner ? m->planner : "?", p->summary.n_events);
}

void mp_report_diff_text(FILE *f, const mp_profile *a, const mp_profile *b,
                         const mp_profile_diff *d, bool exact)
{
    char b1[64], b2[64], b3[64], b4[64], b5[64], b6[64];
    out(f, "memprof diff (a = before, b = after)");
    diff_side(f, "a", a);
    diff_side(f, "b", b);
    /* with exact counts the line would pass 80 columns: the change goes on its own line */
    if (exact) {
        out(f, LABEL "%s -> %s", "Heap peak", mp_fmt_bytes_x(b1, sizeof b1, d->peak_a, exact),
            mp_fmt_bytes_x(b2, sizeof b2, d->peak_b, exact));
        out(f, LABEL "%s", "  change", mp_fmt_change(b3, sizeof b3, d->peak_a, d->peak_b, exact));
    } else {
        out(f, LABEL "%s -> %s (%s)", "Heap peak",
            mp_fmt_bytes_x(b1, sizeof b1, d->peak_a, exact),
            mp_fmt_bytes_x(b2, sizeof b2, d->peak_b, exact),
            mp_fmt_change(b3, sizeof b3, d->peak_a, d->peak_b, exact));
    }
    out(f, "  %-8s %10s %10s %11s %10s %10s %11s", "kind", "at peak a", "b", "change",
        "own peak a", "b", "change");
    for (int k = 0; k < MP_KIND_COUNT; k++) {
        if (k >= MP_KIND_TRAIN_ACTIVATION && !d->live_a[k] && !d->live_b[k] &&
            !d->kind_peak_a[k] && !d->kind_peak_b[k])
            continue; /* training kinds: only when a trace has them */
        out(f, "  %-8s %10s %10s %11s %10s %10s %11s", mp_kind_label(k),
            mp_fmt_cell(b1, sizeof b1, d->live_a[k], exact), mp_fmt_cell(b2, sizeof b2, d->live_b[k], exact),
            mp_fmt_change(b3, sizeof b3, d->live_a[k], d->live_b[k], exact),
            mp_fmt_cell(b4, sizeof b4, d->kind_peak_a[k], exact),
            mp_fmt_cell(b5, sizeof b5, d->kind_peak_b[k], exact),
            mp_fmt_change(b6, sizeof b6, d->kind_peak_a[k], d->kind_peak_b[k], exact));
    }
    out(f, LABEL "%s -> %s (%s)", "Reference arena",
        d->arena_a ? mp_fmt_bytes_x(b1, sizeof b1, d->arena_a, exact) : "none",
        d->arena_b ? mp_fmt_bytes_x(b2, sizeof b2, d->arena_b, exact) : "none",
        mp_fmt_change(b3, sizeof b3, d->arena_a, d->arena_b, exact));
    if (d->n_tensors == 0) {
        out(f, LABEL "no tensor changed bytes or manager", "Tensors");
        return;
    }
    size_t grew = 0, shrank = 0;
    for (size_t i = 0; i < d->n_tensors; i++) {
        grew += d->tensors[i].bytes_b > d->tensors[i].bytes_a;
        shrank += d->tensors[i].bytes_b < d->tensors[i].bytes_a;
    }
    out(f, LABEL "%zu changed: %zu grew, %zu shrank, %zu changed manager only", "Tensors",
        d->n_tensors, grew, shrank, d->n_tensors - grew - shrank);
    /* 2 + 11 + 1 + name + 1 + 18 + 1 + 18 = 80 */
    enum { NAME_W = 28 };
    out(f, "  %11s %-*s %-18s %-18s", "change", NAME_W, "tensor", "a", "b");
    size_t top = exact || d->n_tensors <= MP_REPORT_DIFF_TOP ? d->n_tensors : MP_REPORT_DIFF_TOP;
    for (size_t i = 0; i < top; i++) {
        const mp_diff_tensor *t = &d->tensors[i];
        char label[160], name[NAME_W * 4 + 8], sa[96], sb[96];
        int32_t idx = t->tensor_a >= 0 ? t->tensor_a : t->tensor_b;
        snprintf(label, sizeof label, "#%" PRId32 " %s", idx, t->name ? t->name : "");
        mp_text_fit(name, sizeof name, label, NAME_W);
        size_t cols = 0;
        for (const char *c = name; *c; c++)
            cols += ((unsigned char)*c & 0xC0) != 0x80;
        if (t->tensor_a >= 0)
            snprintf(sa, sizeof sa, "%s %s", mp_manager_name(t->manager_a),
                     mp_fmt_cell(b1, sizeof b1, t->bytes_a, exact));
        else
            snprintf(sa, sizeof sa, "absent");
        if (t->tensor_b >= 0)
            snprintf(sb, sizeof sb, "%s %s", mp_manager_name(t->manager_b),
                     mp_fmt_cell(b2, sizeof b2, t->bytes_b, exact));
        else
            snprintf(sb, sizeof sb, "absent");
        out(f, "  %11s %s%*s %-18s %-18s", mp_fmt_change(b3, sizeof b3, t->bytes_a, t->bytes_b, exact),
            name, (int)(NAME_W - cols), "", sa, sb);
    }
    if (d->n_tensors > top)
        out(f, "  ... %zu more (--exact lists every tensor)", d->n_tensors - top);
}
