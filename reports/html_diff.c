/* The comparison page of two traces (mp_report_diff_html of html_report.h): what
 * `memprof report A B` prints (heap peak, per kind at the peak and at each kind's own peak,
 * the reference arena, every tensor whose bytes or manager changed), and both memory
 * timelines drawn on one operator-step axis, zoomed together (reports/html/report.js).
 * Layout only: every figure comes from the profiles and their diff. */
#include "reports/html_report.h"

#include <inttypes.h>
#include <string.h>

#include "reports/chart_style.h"
#include "reports/html_internal.h"
#include "reports/markup.h"
#include "reports/units.h"

static const char *model_of(const mp_profile *p)
{
    return p->meta && p->meta->model ? p->meta->model : "trace";
}

static void td_change(FILE *f, uint64_t a, uint64_t b)
{
    char buf[64];
    double v = (double)b - (double)a;
    fprintf(f, "<td class=\"n%s\" data-v=\"%.0f\" title=\"%+.0f bytes\">%s</td>",
            b > a ? " bad" : (b < a ? " good" : ""), v, v,
            mp_fmt_change(buf, sizeof buf, a, b, false));
}

static void side(FILE *f, const char *label, const mp_profile *p)
{
    const mp_trace_meta *m = p->meta;
    fprintf(f, "<dt>%s</dt><dd>", label);
    mp_html_printf(f, "%s (mode %s, planner %s, %zu events, peak ", model_of(p),
                   m && m->mode ? m->mode : "?", m && m->planner ? m->planner : "?",
                   p->summary.n_events);
    char b[64];
    mp_html_printf(f, "%s)", mp_fmt_bytes(b, sizeof b, p->summary.peak_heap));
    fputs("</dd>\n", f);
}

static void section_kinds(FILE *f, const mp_profile_diff *d)
{
    fputs("<section id=\"kinds\"><h2>Per kind of memory</h2>\n<p class=\"lead\">Live bytes "
          "of each kind at the heap peak of each trace, and each kind's own peak.</p>\n",
          f);
    static const char *const cols[] = {"kind", "#at peak a", "#b", "#change", "#own peak a",
                                       "#b", "#change"};
    mp_html_table_open(f, cols, 7);
    for (int k = 0; k < MP_KIND_COUNT; k++) {
        fprintf(f, "<tr><td><span class=\"sw\" style=\"background:%s\"></span>%s</td>",
                mp_svg_kind_color(k), mp_kind_name(k));
        mp_html_td_bytes(f, d->live_a[k]);
        mp_html_td_bytes(f, d->live_b[k]);
        td_change(f, d->live_a[k], d->live_b[k]);
        mp_html_td_bytes(f, d->kind_peak_a[k]);
        mp_html_td_bytes(f, d->kind_peak_b[k]);
        td_change(f, d->kind_peak_a[k], d->kind_peak_b[k]);
        fputs("</tr>\n", f);
    }
    mp_html_table_close(f, MP_KIND_COUNT, MP_KIND_COUNT);
    fputs("</section>\n", f);
}

static void td_side(FILE *f, int32_t t, uint8_t mgr, uint64_t bytes)
{
    if (t < 0) {
        fputs("<td class=\"muted\">absent</td><td class=\"n muted\" data-v=\"-1\">-</td>", f);
        return;
    }
    fprintf(f, "<td><span class=\"sw\" style=\"background:%s\"></span>%s</td>",
            mp_svg_manager_color(mgr), mp_svg_manager_label(mgr));
    mp_html_td_bytes(f, bytes);
}

static void section_tensors(FILE *f, const mp_profile_diff *d)
{
    size_t grew = 0, shrank = 0;
    for (size_t i = 0; i < d->n_tensors; i++) {
        grew += d->tensors[i].bytes_b > d->tensors[i].bytes_a;
        shrank += d->tensors[i].bytes_b < d->tensors[i].bytes_a;
    }
    fputs("<section id=\"tensors\"><h2>Tensors that changed</h2>\n<p class=\"lead\">", f);
    if (d->n_tensors == 0) {
        fputs("No tensor changed bytes or manager.</p></section>\n", f);
        return;
    }
    mp_html_printf(f, "%zu changed: %zu grew, %zu shrank, %zu changed manager only; matched "
                      "by name (by index when unnamed), largest change first. Click a row for "
                      "the tensor in both traces.",
                   d->n_tensors, grew, shrank, d->n_tensors - grew - shrank);
    fputs("</p>\n", f);
    static const char *const cols[] = {"#change", "#tensor", "name", "manager a", "#bytes a",
                                       "manager b", "#bytes b"};
    mp_html_table_open(f, cols, 7);
    size_t shown = d->n_tensors < MP_HTML_MAX_ROWS ? d->n_tensors : MP_HTML_MAX_ROWS;
    for (size_t i = 0; i < shown; i++) {
        const mp_diff_tensor *t = &d->tensors[i];
        int32_t idx = t->tensor_a >= 0 ? t->tensor_a : t->tensor_b;
        fprintf(f, "<tr data-ta=\"%" PRId32 "\" data-tb=\"%" PRId32 "\">", t->tensor_a,
                t->tensor_b);
        td_change(f, t->bytes_a, t->bytes_b);
        mp_html_td_num(f, (uint64_t)(idx >= 0 ? idx : 0));
        mp_html_td_name(f, t->name, idx);
        td_side(f, t->tensor_a, t->manager_a, t->bytes_a);
        td_side(f, t->tensor_b, t->manager_b, t->bytes_b);
        fputs("</tr>\n", f);
    }
    mp_html_table_close(f, shown, d->n_tensors);
    fputs("</section>\n", f);
}

void mp_report_diff_html(FILE *f, const mp_profile *a, const mp_profile *b,
                         const mp_profile_diff *d)
{
    char title[600], sub[96], v[96], det[256], b1[64], b2[64];
    snprintf(title, sizeof title, "memprof diff: %s vs %s", model_of(a), model_of(b));
    snprintf(sub, sizeof sub, "a = before, b = after");
    static const char *const links[] = {"timelines", "Timelines", "kinds", "Per kind",
                                        "tensors", "Tensors"};
    mp_html_page_open(f, title, sub, links, 3);
    mp_html_data_open(f, "diff");
    mp_html_data_trace(f, a, "a", true);
    mp_html_data_trace(f, b, "b", false);
    mp_html_data_close(f);

    fputs("<section id=\"sides\"><dl class=\"kv\">\n", f);
    side(f, "a", a);
    side(f, "b", b);
    fputs("</dl></section>\n<div class=\"cards\">\n", f);
    snprintf(det, sizeof det, "%s -> %s", mp_fmt_bytes(b1, sizeof b1, d->peak_a),
             mp_fmt_bytes(b2, sizeof b2, d->peak_b));
    mp_html_card(f, "heap peak", mp_fmt_change(v, sizeof v, d->peak_a, d->peak_b, false), det,
                 d->peak_b > d->peak_a ? "bad" : (d->peak_b < d->peak_a ? "good" : NULL));
    snprintf(det, sizeof det, "%s -> %s",
             d->arena_a ? mp_fmt_bytes(b1, sizeof b1, d->arena_a) : "none",
             d->arena_b ? mp_fmt_bytes(b2, sizeof b2, d->arena_b) : "none");
    mp_html_card(f, "reference arena", mp_fmt_change(v, sizeof v, d->arena_a, d->arena_b, false),
                 det, d->arena_b > d->arena_a ? "bad" : (d->arena_b < d->arena_a ? "good" : NULL));
    snprintf(v, sizeof v, "%zu", d->n_tensors);
    mp_html_card(f, "tensors changed", v, "bytes or manager", NULL);
    fputs("</div>\n", f);

    fputs("<section id=\"timelines\"><h2>Memory over time</h2>\n<p class=\"lead\">Both heaps "
          "on one axis of operator steps, zoomed together: drag across either chart to zoom, "
          "shift-drag or the wheel to pan, double-click to reset.</p>\n"
          "<div class=\"tl-name\">a</div><div class=\"timeline\" data-trace=\"0\"></div>\n"
          "<div class=\"tl-name\">b</div><div class=\"timeline\" data-trace=\"1\"></div>\n"
          "</section>\n",
          f);
    section_kinds(f, d);
    section_tensors(f, d);
    mp_html_page_close(f);
}
