/* The self-contained HTML report (see html_report.h): layout only, every figure comes from
 * the profile. The page frame and the data island the charts are drawn from are in
 * html_page.c and html_data.c, the drawing in reports/html/report.js; escaping from markup.c. */
#include "reports/html_report.h"

#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "reports/chart_style.h"
#include "reports/html_internal.h"
#include "reports/markup.h"
#include "reports/units.h"

static const char *op_name(const mp_trace_meta *m, int32_t op)
{
    if (!m || op < 0 || op >= m->n_ops || !m->ops || !m->ops[op].name)
        return NULL;
    return m->ops[op].name;
}

static const char *tensor_name(const mp_trace_meta *m, int32_t t)
{
    if (!m || t < 0 || t >= m->n_tensors || !m->tensors || !m->tensors[t].name)
        return NULL;
    return m->tensors[t].name;
}



static void td_snum(FILE *f, int64_t v)
{
    if (v < 0)
        fprintf(f, "<td class=\"n muted\" data-v=\"-1\">-</td>");
    else
        fprintf(f, "<td class=\"n\" data-v=\"%" PRId64 "\">%" PRId64 "</td>", v, v);
}

static void td_ns(FILE *f, uint64_t ns)
{
    char b[48];
    fprintf(f, "<td class=\"n\" data-v=\"%" PRIu64 "\">%s</td>", ns, mp_fmt_ns(b, sizeof b, ns));
}


static void td_op(FILE *f, const mp_trace_meta *m, int32_t op)
{
    if (op < 0) {
        fputs("<td class=\"muted\" data-v=\"-1\">-</td>", f);
        return;
    }
    fprintf(f, "<td data-v=\"%" PRId32 "\">#%" PRId32 " ", op, op);
    mp_xml_text(f, op_name(m, op), 60);
    fputs("</td>", f);
}

static void td_swatch(FILE *f, const char *color, const char *label)
{
    fprintf(f, "<td><span class=\"sw\" style=\"background:%s\"></span>", color);
    mp_xml_text(f, label, 0);
    fputs("</td>", f);
}



static void when_text(char *buf, size_t n, const mp_summary_when *w, const mp_trace_meta *m)
{
    size_t o = 0;
    buf[0] = '\0';
    if (w->event < 0) {
        snprintf(buf, n, "never");
        return;
    }
    if (w->run > 0)
        o += (size_t)snprintf(buf + o, n - o, "run %" PRIu64, w->run);
    else if (w->phase_kind >= 0)
        o += (size_t)snprintf(buf + o, n - o, "%s", mp_phase_kind_name(w->phase_kind));
    else
        o += (size_t)snprintf(buf + o, n - o, "outside any phase");
    if (o < n && w->op >= 0) {
        const char *on = w->op_name ? w->op_name : op_name(m, w->op);
        o += (size_t)snprintf(buf + o, n - o, ", op #%" PRId32 "%s%s", w->op, on ? " " : "",
                              on ? on : "");
    }
    if (o < n)
        snprintf(buf + o, n - o, " (event %" PRId64 ")", w->event);
}


static const char *home_label(int h)
{
    switch (h) {
    case MP_SUMMARY_BLOCK: return "tensor block";
    case MP_SUMMARY_SLOT: return "arena slot";
    case MP_SUMMARY_OP_BUFFERS: return "operator buffers";
    case MP_SUMMARY_OWNERLESS: return "owner-less blocks";
    case MP_SUMMARY_ARENA_FREE: return "arena bytes no live slot holds";
    case MP_SUMMARY_ARENA: return "planned arena";
    default: return "?";
    }
}

static const mp_arena_report *ref_arena(const mp_profile *p)
{
    if (!p->arenas || p->n_arenas == 0)
        return NULL;
    if (p->reference_arena >= 0 && (size_t)p->reference_arena < p->n_arenas)
        return &p->arenas[p->reference_arena];
    return &p->arenas[0];
}

/* ---- sections ------------------------------------------------------------------------------ */

static void cards(FILE *f, const mp_profile *p)
{
    const mp_summary *s = &p->summary;
    char v[96], d[512], b[64], b2[64];
    fputs("<div class=\"cards\">\n", f);
    when_text(d, sizeof d, &s->peak, p->meta);
    mp_html_card(f, "heap peak", mp_fmt_bytes(v, sizeof v, s->peak_heap), d, NULL);

    const mp_arena_report *ar = ref_arena(p);
    if (ar) {
        const char *cls = NULL;
        if (ar->lower_bound == 0) {
            snprintf(d, sizeof d, "no tensor planned in it");
        } else if (ar->bytes > ar->lower_bound) {
            double over = (double)(ar->bytes - ar->lower_bound) * 100.0 / (double)ar->lower_bound;
            snprintf(d, sizeof d, "%+.*f %% above the lower bound, %s", over < 1 ? 2 : 1, over,
                     mp_fmt_bytes(b, sizeof b, ar->lower_bound));
        } else if (ar->bytes == ar->lower_bound) {
            snprintf(d, sizeof d, "equal to the lower bound: the plan is tight");
            cls = "good";
        } else {
            snprintf(d, sizeof d, "below the lower bound %s: tensors alive together overlap",
                     mp_fmt_bytes(b, sizeof b, ar->lower_bound));
            cls = "bad";
        }
        mp_html_card(f, "planned arena", mp_fmt_bytes(v, sizeof v, ar->bytes), d, cls);
    } else {
        mp_html_card(f, "planned arena", "none", "nothing was planned", NULL);
    }

    snprintf(v, sizeof v, "%zu", s->n_runs);
    if (s->n_later)
        snprintf(d, sizeof d, "first %s, later median %s", mp_fmt_ns(b, sizeof b, s->first_run_ns),
                 mp_fmt_ns(b2, sizeof b2, s->later_median_ns));
    else if (s->n_runs)
        snprintf(d, sizeof d, "first %s", mp_fmt_ns(b, sizeof b, s->first_run_ns));
    else
        snprintf(d, sizeof d, "no run recorded");
    mp_html_card(f, "runs", v, d, NULL);

    mp_html_card(f, "duplicated bytes", mp_fmt_bytes(v, sizeof v, s->dup_bytes),
         s->dup_bytes ? "a tensor held twice: a memory manager bug" : "no tensor was held twice",
         s->dup_bytes ? "bad" : "good");
    snprintf(d, sizeof d, "%" PRIu64 " block%s that no operator used", p->n_unused,
             p->n_unused == 1 ? "" : "s");
    mp_html_card(f, "unused blocks", mp_fmt_bytes(v, sizeof v, p->unused_bytes), d,
         p->unused_bytes ? "bad" : NULL);
    mp_html_card(f, "constants", mp_fmt_bytes(v, sizeof v, s->const_bytes), "mapped from the model",
         NULL);
    fputs("</div>\n", f);
}

static void section_peak(FILE *f, const mp_profile *p)
{
    const mp_summary *s = &p->summary;
    char d[512], b[64];
    fputs("<section id=\"peak\"><h2>Alive at the heap peak</h2>\n<p class=\"lead\">", f);
    when_text(d, sizeof d, &s->peak, p->meta);
    mp_html_printf(f, "%s at %s, largest first.", mp_fmt_bytes(b, sizeof b, s->peak_heap), d);
    if (s->n_alive && !s->peak_slots_by_op)
        mp_html_printf(f, " The peak is outside any operator: planned arenas count whole.");
    fputs("</p>\n", f);
    if (!s->alive || s->n_alive == 0) {
        fputs("<p class=\"muted\">No data: nothing was allocated.</p></section>\n", f);
        return;
    }
    static const char *const cols[] = {"#bytes", "kind", "home", "tensor", "operator",
                                       "#blocks"};
    mp_html_table_open(f, cols, 6);
    size_t shown = s->n_alive < MP_HTML_MAX_ROWS ? s->n_alive : MP_HTML_MAX_ROWS;
    for (size_t i = 0; i < shown; i++) {
        const mp_summary_alive *a = &s->alive[i];
        if (a->tensor >= 0)
            fprintf(f, "<tr data-t=\"%" PRId32 "\">", a->tensor);
        else if (a->op >= 0)
            fprintf(f, "<tr data-op=\"%" PRId32 "\">", a->op);
        else
            fputs("<tr>", f);
        mp_html_td_bytes(f, a->bytes);
        td_swatch(f, mp_svg_kind_color(a->kind), mp_kind_name(a->kind));
        fputs("<td>", f);
        mp_xml_text(f, home_label(a->home), 0);
        if (a->home == MP_SUMMARY_ARENA || a->home == MP_SUMMARY_SLOT ||
            a->home == MP_SUMMARY_ARENA_FREE)
            fprintf(f, " %" PRIu64, a->id);
        fputs("</td>", f);
        mp_html_td_name(f, a->name, a->tensor);
        td_op(f, p->meta, a->op);
        mp_html_td_num(f, a->n_blocks);
        fputs("</tr>\n", f);
    }
    mp_html_table_close(f, shown, s->n_alive);
    fputs("</section>\n", f);
}

static void section_lifetimes(FILE *f, const mp_profile *p)
{
    fputs("<section id=\"lifetimes\"><h2>Tensor lifetimes</h2>\n<p class=\"lead\">", f);
    if (p->reference_run >= 0)
        mp_html_printf(f, "Run %" PRId64 " (the run during which the heap peaked, or else the last). ",
                p->reference_run);
    fputs("A bar per tensor from the first operator that needs it to the last, coloured by "
          "manager. Click a bar or a row for the tensor.</p>\n"
          "<div class=\"chart lifetimes\" data-trace=\"0\"></div>\n",
          f);
    if (!p->lifetimes || p->n_lifetimes == 0) {
        fputs("</section>\n", f);
        return;
    }
    fputs("<h3>Every tensor</h3>\n", f);
    static const char *const cols[] = {"#tensor", "name", "#bytes", "manager", "#first op",
                                       "#last op", "#offset", "producer"};
    mp_html_table_open(f, cols, 8);
    size_t shown = p->n_lifetimes < MP_HTML_MAX_ROWS ? p->n_lifetimes : MP_HTML_MAX_ROWS;
    for (size_t i = 0; i < shown; i++) {
        const mp_lifetime *l = &p->lifetimes[i];
        if (l->tensor >= 0)
            fprintf(f, "<tr data-t=\"%" PRId32 "\">", l->tensor);
        else
            fputs("<tr>", f);
        mp_html_td_num(f, (uint64_t)(l->tensor >= 0 ? l->tensor : 0));
        mp_html_td_name(f, l->name, l->tensor);
        mp_html_td_bytes(f, l->bytes);
        td_swatch(f, mp_svg_manager_color(l->manager), mp_svg_manager_label(l->manager));
        td_snum(f, l->first_op);
        td_snum(f, l->last_op);
        td_snum(f, l->offset);
        td_op(f, p->meta, l->producer);
        fputs("</tr>\n", f);
    }
    mp_html_table_close(f, shown, p->n_lifetimes);
    fputs("</section>\n", f);
}

static void section_arenas(FILE *f, const mp_profile *p)
{
    fputs("<section id=\"arenas\"><h2>Arena plan</h2>\n<p class=\"lead\">Offset against "
          "operators: a rectangle per planned tensor. The lower bound is the most bytes alive "
          "at any one operator: no plan of these tensors can be smaller. Worst free: the most "
          "arena bytes no live tensor holds at one operator.</p>\n"
          "<div class=\"chart arena\" data-trace=\"0\"></div>\n",
          f);
    if (!p->arenas || p->n_arenas == 0) {
        fputs("</section>\n", f);
        return;
    }
    fputs("<h3>Every arena</h3>\n", f);
    static const char *const cols[] = {"#arena", "#bytes", "#used", "#lower bound",
                                       "#above bound", "#no reuse", "#reuse", "#worst free",
                                       "#tensors", "#runs"};
    mp_html_table_open(f, cols, 10);
    size_t shown = p->n_arenas < MP_HTML_MAX_ROWS ? p->n_arenas : MP_HTML_MAX_ROWS;
    for (size_t i = 0; i < shown; i++) {
        const mp_arena_report *a = &p->arenas[i];
        fputs("<tr>", f);
        fprintf(f, "<td class=\"n\" data-v=\"%" PRIu64 "\">%" PRIu64 "%s</td>", a->id, a->id,
                (int64_t)i == p->reference_arena ? " (shown)" : "");
        mp_html_td_bytes(f, a->bytes);
        mp_html_td_bytes(f, a->used);
        mp_html_td_bytes(f, a->lower_bound);
        if (a->lower_bound > 0) {
            double over = ((double)a->bytes - (double)a->lower_bound) * 100.0 /
                          (double)a->lower_bound;
            fprintf(f, "<td class=\"n%s\" data-v=\"%.4f\">%+.*f %%</td>",
                    a->bytes <= a->lower_bound ? " good" : "", over,
                    over < 1 && over > -1 ? 2 : 1, over);
        } else {
            fputs("<td class=\"n muted\" data-v=\"0\">-</td>", f);
        }
        mp_html_td_bytes(f, a->naive);
        if (a->bytes > 0)
            fprintf(f, "<td class=\"n\" data-v=\"%.3f\">%.2fx</td>",
                    (double)a->naive / (double)a->bytes, (double)a->naive / (double)a->bytes);
        else
            fputs("<td class=\"n muted\" data-v=\"0\">-</td>", f);
        mp_html_td_bytes(f, a->frag_max);
        mp_html_td_num(f, a->n_slots);
        mp_html_td_num(f, a->runs);
        fputs("</tr>\n", f);
    }
    mp_html_table_close(f, shown, p->n_arenas);
    if (p->n_arenas_total > p->n_arenas)
        fprintf(f, "<p class=\"muted\">%zu arenas were planned in all; %zu are reported.</p>\n",
                p->n_arenas_total, p->n_arenas);
    fputs("</section>\n", f);
}

static void section_ops(FILE *f, const mp_profile *p)
{
    fputs("<section id=\"ops\"><h2>Per operator</h2>\n<p class=\"lead\">Time over all its "
          "executions, heap allocations attributed to it (all phases), its scratch and "
          "XNNPACK buffers at most, and its outputs' bytes.</p>\n",
          f);
    if (!p->ops || p->n_ops == 0) {
        fputs("<p class=\"muted\">No data: the trace names no operator.</p></section>\n", f);
        return;
    }
    static const char *const cols[] = {"#op", "operator", "#runs", "#time", "#mean",
                                       "#min", "#max", "#allocations", "#allocated",
                                       "#scratch", "#kernel", "#outputs"};
    mp_html_table_open(f, cols, 12);
    size_t shown = p->n_ops < MP_HTML_MAX_ROWS ? p->n_ops : MP_HTML_MAX_ROWS;
    for (size_t i = 0; i < shown; i++) {
        const mp_op_report *o = &p->ops[i];
        if (o->op >= 0)
            fprintf(f, "<tr data-op=\"%" PRId32 "\">", o->op);
        else
            fputs("<tr>", f);
        mp_html_td_num(f, (uint64_t)(o->op >= 0 ? o->op : 0));
        mp_html_td_name(f, o->name ? o->name : op_name(p->meta, o->op), o->op);
        mp_html_td_num(f, o->n_exec);
        td_ns(f, o->time_ns);
        td_ns(f, o->n_exec ? o->time_ns / o->n_exec : 0);
        td_ns(f, o->min_ns);
        td_ns(f, o->max_ns);
        mp_html_td_num(f, o->n_alloc);
        mp_html_td_bytes(f, o->bytes_alloc);
        mp_html_td_bytes(f, o->scratch_bytes);
        mp_html_td_bytes(f, o->kernel_bytes);
        mp_html_td_bytes(f, o->output_bytes);
        fputs("</tr>\n", f);
    }
    mp_html_table_close(f, shown, p->n_ops);
    fputs("</section>\n", f);
}

static void section_waste(FILE *f, const mp_profile *p)
{
    const mp_summary *s = &p->summary;
    char b[64], b2[64], d[512];
    fputs("<section id=\"waste\"><h2>Waste</h2>\n<dl class=\"kv\">\n", f);
    fputs("<dt>duplicated bytes</dt><dd>", f);
    if (s->dup_bytes) {
        when_text(d, sizeof d, &s->dup, p->meta);
        fprintf(f, "<span class=\"bad\">%s</span> ", mp_fmt_bytes(b, sizeof b, s->dup_bytes));
        mp_html_printf(f, "at most, %s: a tensor held in two homes at once", d);
    } else {
        fputs("<span class=\"good\">0 B</span>: no tensor was held twice", f);
    }
    fputs("</dd>\n<dt>unused blocks</dt><dd>", f);
    mp_html_printf(f, "%s in %" PRIu64 " block%s allocated and freed with no operator in between",
            mp_fmt_bytes(b, sizeof b, p->unused_bytes), p->n_unused, p->n_unused == 1 ? "" : "s");
    fputs("</dd>\n<dt>copies in</dt><dd>", f);
    mp_html_printf(f, "%" PRIu64 " copies, %s", s->n_copy_in, mp_fmt_bytes(b, sizeof b, s->bytes_copy_in));
    fputs("</dd>\n<dt>copies out</dt><dd>", f);
    mp_html_printf(f, "%" PRIu64 " copies, %s", s->n_copy_out,
            mp_fmt_bytes(b, sizeof b, s->bytes_copy_out));
    fputs("</dd>\n<dt>live at end</dt><dd>", f);
    if (s->live_end)
        fprintf(f, "<span class=\"bad\">%s</span> never freed", mp_fmt_bytes(b, sizeof b, s->live_end));
    else
        fputs("0 B: every byte allocated was freed", f);
    fputs("</dd>\n", f);
    if (s->unaccounted_measured) {
        fputs("<dt>unaccounted heap</dt><dd>", f);
        mp_html_printf(f, "%s (process heap peak minus engine heap peak minus allocator overhead)",
                mp_fmt_sbytes(b2, sizeof b2, s->unaccounted));
        fputs("</dd>\n", f);
    }
    fputs("</dl>\n", f);

    if (s->dups && s->n_dups) {
        fputs("<h3>Held twice when duplication peaked</h3>\n", f);
        static const char *const cols[] = {"#tensor", "name", "#bytes", "#homes"};
        mp_html_table_open(f, cols, 4);
        size_t shown = s->n_dups < MP_HTML_MAX_ROWS ? s->n_dups : MP_HTML_MAX_ROWS;
        for (size_t i = 0; i < shown; i++) {
            const mp_summary_dup *u = &s->dups[i];
            if (u->tensor >= 0)
                fprintf(f, "<tr data-t=\"%" PRId32 "\">", u->tensor);
            else
                fputs("<tr>", f);
            mp_html_td_num(f, (uint64_t)(u->tensor >= 0 ? u->tensor : 0));
            mp_html_td_name(f, u->name ? u->name : tensor_name(p->meta, u->tensor), u->tensor);
            mp_html_td_bytes(f, u->bytes);
            mp_html_td_num(f, u->homes);
            fputs("</tr>\n", f);
        }
        mp_html_table_close(f, shown, s->n_dups);
    }
    if (p->unused && p->n_unused_listed) {
        fputs("<h3>Unused blocks, largest first</h3>\n", f);
        static const char *const cols[] = {"#bytes", "kind", "tensor", "phase", "#block",
                                           "#event"};
        mp_html_table_open(f, cols, 6);
        for (size_t i = 0; i < p->n_unused_listed; i++) {
            const mp_unused_block *u = &p->unused[i];
            if (u->tensor >= 0)
                fprintf(f, "<tr data-t=\"%" PRId32 "\">", u->tensor);
            else
                fputs("<tr>", f);
            mp_html_td_bytes(f, u->bytes);
            td_swatch(f, mp_svg_kind_color(u->kind), mp_kind_name(u->kind));
            mp_html_td_name(f, u->name ? u->name : tensor_name(p->meta, u->tensor), u->tensor);
            fputs("<td>", f);
            mp_xml_text(f, u->phase_kind >= 0 ? mp_phase_kind_name(u->phase_kind) : "-", 0);
            fputs("</td>", f);
            mp_html_td_num(f, u->id);
            mp_html_td_num(f, u->alloc_event);
            fputs("</tr>\n", f);
        }
        mp_html_table_close(f, p->n_unused_listed,
                    p->n_unused > p->n_unused_listed ? (size_t)p->n_unused : p->n_unused_listed);
    }
    fputs("</section>\n", f);
}

/* ---- the document -------------------------------------------------------------------------- */

void mp_report_html(FILE *f, const mp_profile *p)
{
    static const mp_profile empty = {.reference_run = -1, .reference_arena = -1,
                                     .summary = {.peak = {.event = -1, .op = -1,
                                                          .phase_kind = -1}}};
    if (!p)
        p = &empty;
    const mp_trace_meta *m = p->meta;
    char title[512], sub[512], b[64];
    snprintf(title, sizeof title, "memprof: %s", m && m->model ? m->model : "trace");
    snprintf(sub, sizeof sub,
             "memory %s, planner %s, %d thread%s, %zu operators, %zu tensors, %zu events",
             m && m->mode ? m->mode : "?", m && m->planner ? m->planner : "?",
             m ? m->threads : 0, m && m->threads == 1 ? "" : "s", p->n_ops, p->n_lifetimes,
             p->summary.n_events);
    static const char *const links[] = {"timeline", "Timeline", "peak", "Peak",
                                        "lifetimes", "Lifetimes", "arenas", "Arenas",
                                        "ops", "Operators", "waste", "Waste"};
    mp_html_page_open(f, title, sub, links, 6);
    mp_html_data_open(f, "report");
    mp_html_data_trace(f, p, NULL, true);
    mp_html_data_close(f);
    if (p->summary.truncated)
        fputs("<div class=\"warn\">The recorder ran out of memory: the trace is a prefix of the "
              "session and every figure is partial.</div>\n",
              f);
    if (p->summary.n_anomalies) {
        fputs("<div class=\"warn\">", f);
        mp_html_printf(f, "%" PRIu64 " events contradicted the memory state; the first: %s",
                       p->summary.n_anomalies, p->summary.anomaly);
        fputs("</div>\n", f);
    }
    cards(f, p);

    fputs("<section id=\"timeline\"><h2>Memory over time</h2>\n<p class=\"lead\">", f);
    mp_html_printf(f, "Heap by kind of memory over operator steps (load and prepare before "
                      "them); the peak (%s) is marked. Drag across the chart to zoom, "
                      "shift-drag or the wheel to pan, double-click to reset; click a kind in "
                      "the legend to hide it.",
                   mp_fmt_bytes(b, sizeof b, p->summary.peak_heap));
    fputs("</p>\n<div class=\"timeline\" data-trace=\"0\"></div>\n</section>\n", f);

    section_peak(f, p);
    section_lifetimes(f, p);
    section_arenas(f, p);
    section_ops(f, p);
    section_waste(f, p);

    mp_html_page_close(f);
}
