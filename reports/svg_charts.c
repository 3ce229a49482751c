/* SVG charts of a profile (see svg_charts.h): the small writers every chart uses
 * (svg_internal.h) and the standalone documents. The charts themselves are in
 * svg_timeline.c, svg_lifetimes.c and svg_arena.c. Layout only; all text goes through
 * mp_xml_text. */
#include "reports/svg_charts.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "reports/chart_style.h"
#include "reports/markup.h"
#include "reports/svg_internal.h"
#include "reports/units.h"

const int mp_svg_stack_order[MP_SVG_N_STACK] = {MP_KIND_STATIC, MP_KIND_KERNEL,  MP_KIND_ENGINE,
                                                MP_KIND_IO,     MP_KIND_DYNAMIC, MP_KIND_SCRATCH};

/* ---- small writers ------------------------------------------------------------------------- */

/* printf into a buffer, then escaped: for text that may contain names. */
void mp_svg_xprintf(FILE *f, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    mp_xml_text(f, buf, 0);
}

/* The same on a new line (in a <title>: a line of its tooltip). */
void mp_svg_xprintf_nl(FILE *f, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fputc('\n', f);
    mp_xml_text(f, buf, 0);
}

const char *mp_svg_fmtb(char *buf, size_t n, uint64_t v)
{
    return mp_fmt_bytes(buf, n, v);
}

const char *mp_svg_op_name(const mp_trace_meta *m, int32_t op)
{
    if (!m || op < 0 || op >= m->n_ops || !m->ops || !m->ops[op].name)
        return NULL;
    return m->ops[op].name;
}

/* "#3 CONV_2D" (raw: escape when writing). */
const char *mp_svg_op_label(char *buf, size_t n, const mp_trace_meta *m, int32_t op)
{
    const char *name = mp_svg_op_name(m, op);
    if (op < 0)
        snprintf(buf, n, "-");
    else if (name)
        snprintf(buf, n, "#%" PRId32 " %s", op, name);
    else
        snprintf(buf, n, "#%" PRId32, op);
    return buf;
}

void mp_svg_open_chart(FILE *f, double x, double y, double h, const char *cls, const char *label)
{
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"mp-chart %s\" x=\"%.0f\" "
            "y=\"%.0f\" width=\"%d\" height=\"%.0f\" viewBox=\"0 0 %d %.0f\" "
            "font-family=\"%s\" font-size=\"12\" role=\"img\" aria-label=\"",
            cls, x, y, W, h, W, h, MP_SVG_FONT);
    mp_xml_text(f, label, 0);
    fprintf(f, "\">\n<rect class=\"bg\" width=\"%d\" height=\"%.0f\" fill=\"#FFFFFF\"/>\n", W, h);
}

void mp_svg_heading(FILE *f, const char *title)
{
    fprintf(f, "<text x=\"24\" y=\"28\" font-size=\"16\" font-weight=\"600\" fill=\"%s\">",
            TEXT);
    mp_xml_text(f, title, 0);
    fputs("</text>\n", f);
}

/* Opens the subtitle's <text>; the caller writes its content and closes it. */
void mp_svg_subtitle_open(FILE *f, double y)
{
    fprintf(f, "<text x=\"24\" y=\"%.0f\" font-size=\"12\" fill=\"%s\">", y, TEXT2);
}

void mp_svg_note(FILE *f, double x, double y, const char *anchor, const char *msg)
{
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"12\" fill=\"%s\">",
            x, y, anchor, TEXT2);
    mp_xml_text(f, msg, 0);
    fputs("</text>\n", f);
}

/* A "no data" box filling the plot area. */
void mp_svg_no_data(FILE *f, double x0, double y0, double w, double h, const char *msg)
{
    fprintf(f,
            "<rect class=\"no-data\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
            "fill=\"#FAFAFA\" stroke=\"#E0E0E0\" stroke-dasharray=\"4 3\" rx=\"6\"/>\n",
            x0, y0, w, h);
    mp_svg_note(f, x0 + w / 2, y0 + h / 2 + 4, "middle", msg);
}

/* Horizontal gridlines and y labels for bytes [0, top] by step. */
void mp_svg_y_axis_bytes(FILE *f, double l, double r, double t, double ph, uint64_t top,
                         uint64_t step, const char *title)
{
    char b[48];
    for (uint64_t v = 0; v <= top; v += step) {
        double y = t + ph - (double)v / (double)top * ph;
        fprintf(f,
                "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                "stroke-width=\"1\"/>\n",
                l, r, y, y, v == 0 ? AXIS : GRID);
        fprintf(f,
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"11\" "
                "fill=\"%s\">%s</text>\n",
                l - 8, y + 4, TEXT2, mp_svg_fmt_tick(b, sizeof b, v, step));
        if (top - v < step)
            break;
    }
    fprintf(f,
            "<text x=\"16\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"11\" fill=\"%s\" "
            "transform=\"rotate(-90 16 %.1f)\">",
            t + ph / 2, TEXT2, t + ph / 2);
    mp_xml_text(f, title, 0);
    fputs("</text>\n", f);
}

uint64_t mp_svg_round_up(uint64_t v, uint64_t step)
{
    uint64_t q = v / step + (v % step != 0);
    return q ? q * step : step;
}

/* A legend entry: swatch (square or line) and label; returns the x after it. */
double mp_svg_legend_item(FILE *f, double x, double y, const char *color, bool line,
                          const char *dash, const char *label)
{
    if (line)
        fprintf(f,
                "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                "stroke-width=\"2\"%s%s%s/>\n",
                x, x + 14, y - 4, y - 4, color, dash ? " stroke-dasharray=\"" : "",
                dash ? dash : "", dash ? "\"" : "");
    else
        fprintf(f,
                "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" rx=\"2\" fill=\"%s\"/>\n",
                x, y - 10, color);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" fill=\"%s\">", x + 18, y, TEXT);
    mp_xml_text(f, label, 0);
    fputs("</text>\n", f);
    uint32_t cp;
    size_t chars = 0;
    for (const char *p = label; *p; p += mp_utf8_next(p, &cp))
        chars++;
    return x + 18 + 6.6 * (double)chars + 18;
}

/* ---- documents ------------------------------------------------------------------------------ */

static void doc_open(FILE *f, double h, const char *title)
{
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" "
            "viewBox=\"0 0 %d %.0f\" font-family=\"%s\">\n<title>",
            W, h, W, h, MP_SVG_FONT);
    mp_xml_text(f, title, 0);
    fprintf(f, "</title>\n<rect width=\"%d\" height=\"%.0f\" fill=\"#FFFFFF\"/>\n", W, h);
}

#define DOC_HEAD 72.0

static void doc_heading(FILE *f, const char *title, const char *sub)
{
    fprintf(f, "<text x=\"24\" y=\"34\" font-size=\"20\" font-weight=\"700\" fill=\"%s\">",
            TEXT);
    mp_xml_text(f, title, 0);
    fprintf(f, "</text>\n<text x=\"24\" y=\"56\" font-size=\"12\" fill=\"%s\">", TEXT2);
    mp_xml_text(f, sub, 0);
    fprintf(f, "</text>\n<line x1=\"24\" x2=\"%d\" y1=\"%.0f\" y2=\"%.0f\" stroke=\"%s\"/>\n",
            W - 24, DOC_HEAD - 4, DOC_HEAD - 4, GRID);
}

static const mp_arena_report *reference_arena(const mp_profile *p)
{
    if (!p || !p->arenas || p->n_arenas == 0)
        return NULL;
    if (p->reference_arena >= 0 && (size_t)p->reference_arena < p->n_arenas)
        return &p->arenas[p->reference_arena];
    return &p->arenas[0];
}

void mp_report_svg(FILE *f, const mp_profile *p)
{
    const mp_arena_report *ar = reference_arena(p);
    const mp_trace_meta *meta = p ? p->meta : NULL;
    double h1 = mp_svg_timeline(NULL, p, 0, 0), h2 = mp_svg_lifetimes(NULL, p, 0, 0);
    double h3 = mp_svg_arena(NULL, ar, meta, 0, 0);
    char title[512], sub[512], b1[64];
    snprintf(title, sizeof title, "memprof: %s", meta && meta->model ? meta->model : "trace");
    snprintf(sub, sizeof sub, "memory %s, planner %s, %d thread%s; heap peak %s; %zu events",
             meta && meta->mode ? meta->mode : "?", meta && meta->planner ? meta->planner : "?",
             meta ? meta->threads : 0, meta && meta->threads == 1 ? "" : "s",
             mp_svg_fmtb(b1, sizeof b1, p ? p->summary.peak_heap : 0), p ? p->summary.n_events : 0);
    doc_open(f, DOC_HEAD + h1 + h2 + h3, title);
    doc_heading(f, title, sub);
    mp_svg_timeline(f, p, 0, DOC_HEAD);
    mp_svg_lifetimes(f, p, 0, DOC_HEAD + h1);
    mp_svg_arena(f, ar, meta, 0, DOC_HEAD + h1 + h2);
    fputs("</svg>\n", f);
}

void mp_svg_arena_document(FILE *f, const mp_arena_report *ar, const mp_trace_meta *meta,
                           const char *title)
{
    double h = mp_svg_arena(NULL, ar, meta, 0, 0);
    char t[512], sub[512], b1[64], b2[64];
    if (!title)
        snprintf(t, sizeof t, "memprof plan: %s", meta && meta->model ? meta->model : "arena");
    if (ar)
        snprintf(sub, sizeof sub, "planner %s; arena %s, lower bound %s, %zu tensors",
                 meta && meta->planner ? meta->planner : "?", mp_svg_fmtb(b1, sizeof b1, ar->bytes),
                 mp_svg_fmtb(b2, sizeof b2, ar->lower_bound), ar->n_slots);
    else
        snprintf(sub, sizeof sub, "no arena");
    doc_open(f, DOC_HEAD + h, title ? title : t);
    doc_heading(f, title ? title : t, sub);
    mp_svg_arena(f, ar, meta, 0, DOC_HEAD);
    fputs("</svg>\n", f);
}
