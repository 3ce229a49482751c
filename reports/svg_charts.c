/* SVG charts of a profile (see svg_charts.h): timeline, lifetimes, arena layout, and the
 * standalone documents. Layout only; all text goes through mp_xml_text. */
#include "reports/svg_charts.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "reports/chart_style.h"
#include "reports/markup.h"
#include "reports/units.h"

/* ---- layout constants ----------------------------------------------------------------------- */

#define W MP_SVG_WIDTH
#define ML 84.0          /* left margin (y tick labels) */
#define MR 28.0          /* right margin */
#define TOP 76.0         /* title, subtitle, room for labels above the plot */
#define TEXT "#222222"
#define TEXT2 "#5F5F5F"
#define GRID "#ECECEC"
#define AXIS "#9A9A9A"
#define PEAK "#B2182B"

/* Heap kinds from bottom to top of the stacked timeline: steady ones first. */
static const int stack_order[] = {MP_KIND_STATIC, MP_KIND_KERNEL, MP_KIND_ENGINE,
                                  MP_KIND_IO,     MP_KIND_DYNAMIC, MP_KIND_SCRATCH};
#define N_STACK ((int)(sizeof stack_order / sizeof stack_order[0]))

/* ---- small writers ------------------------------------------------------------------------- */

/* printf into a buffer, then escaped: for text that may contain names. */
static void xprintf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void xprintf(FILE *f, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    mp_xml_text(f, buf, 0);
}

/* The same on a new line (in a <title>: a line of its tooltip). */
static void xprintf_nl(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void xprintf_nl(FILE *f, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fputc('\n', f);
    mp_xml_text(f, buf, 0);
}

static const char *fmtb(char *buf, size_t n, uint64_t v)
{
    return mp_fmt_bytes(buf, n, v);
}

static const char *op_name(const mp_trace_meta *m, int32_t op)
{
    if (!m || op < 0 || op >= m->n_ops || !m->ops || !m->ops[op].name)
        return NULL;
    return m->ops[op].name;
}

/* "#3 CONV_2D" (raw: escape when writing). */
static const char *op_label(char *buf, size_t n, const mp_trace_meta *m, int32_t op)
{
    const char *name = op_name(m, op);
    if (op < 0)
        snprintf(buf, n, "-");
    else if (name)
        snprintf(buf, n, "#%" PRId32 " %s", op, name);
    else
        snprintf(buf, n, "#%" PRId32, op);
    return buf;
}

static void svg_open(FILE *f, double x, double y, double h, const char *cls, const char *label)
{
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"mp-chart %s\" x=\"%.0f\" "
            "y=\"%.0f\" width=\"%d\" height=\"%.0f\" viewBox=\"0 0 %d %.0f\" "
            "font-family=\"%s\" font-size=\"12\" role=\"img\" aria-label=\"",
            cls, x, y, W, h, W, h, MP_SVG_FONT);
    mp_xml_text(f, label, 0);
    fprintf(f, "\">\n<rect class=\"bg\" width=\"%d\" height=\"%.0f\" fill=\"#FFFFFF\"/>\n", W, h);
}

static void heading(FILE *f, const char *title)
{
    fprintf(f, "<text x=\"24\" y=\"28\" font-size=\"16\" font-weight=\"600\" fill=\"%s\">",
            TEXT);
    mp_xml_text(f, title, 0);
    fputs("</text>\n", f);
}

/* Opens the subtitle's <text>; the caller writes its content and closes it. */
static void subtitle_open(FILE *f, double y)
{
    fprintf(f, "<text x=\"24\" y=\"%.0f\" font-size=\"12\" fill=\"%s\">", y, TEXT2);
}

static void note(FILE *f, double x, double y, const char *anchor, const char *msg)
{
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"12\" fill=\"%s\">",
            x, y, anchor, TEXT2);
    mp_xml_text(f, msg, 0);
    fputs("</text>\n", f);
}

/* A "no data" box filling the plot area. */
static void no_data(FILE *f, double x0, double y0, double w, double h, const char *msg)
{
    fprintf(f,
            "<rect class=\"no-data\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
            "fill=\"#FAFAFA\" stroke=\"#E0E0E0\" stroke-dasharray=\"4 3\" rx=\"6\"/>\n",
            x0, y0, w, h);
    note(f, x0 + w / 2, y0 + h / 2 + 4, "middle", msg);
}

/* Horizontal gridlines and y labels for bytes [0, top] by step. */
static void y_axis_bytes(FILE *f, double l, double r, double t, double ph, uint64_t top,
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

static uint64_t round_up(uint64_t v, uint64_t step)
{
    uint64_t q = v / step + (v % step != 0);
    return q ? q * step : step;
}

/* A legend entry: swatch (square or line) and label; returns the x after it. */
static double legend_item(FILE *f, double x, double y, const char *color, bool line,
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

/* ---- timeline ---------------------------------------------------------------------------- */

#define TL_PH 260.0

typedef struct tl_seg {
    double x0, x1;
    size_t pt;       /* the point shown: highest heap (the timeline's peak when inside) */
    size_t first, last;
} tl_seg;

static const mp_timeline *pick_timeline(const mp_profile *p, bool *by_step)
{
    *by_step = false;
    if (!p)
        return NULL;
    if (p->by_step.n > 0 && p->by_step.pts && p->n_steps > 0) {
        *by_step = true;
        return &p->by_step;
    }
    if (p->by_event.n > 0 && p->by_event.pts)
        return &p->by_event;
    if (p->by_step.n > 0 && p->by_step.pts) {
        *by_step = true;
        return &p->by_step;
    }
    return NULL;
}

/* Point i's extent on the x axis, [u0, u1) in steps (or events), and the width it is drawn
 * with. By step: the steps begun within the point, from the previous point's step_last to its
 * own (step s, 0-based, is begun when s + 1 steps are); a point in which no step begins (load,
 * prepare, between runs) has no extent and is drawn wz wide. */
static double pt_units(const mp_timeline *tl, size_t i, bool by_step, double wz, uint64_t *u0,
                       uint64_t *u1)
{
    const mp_tl_point *pt = &tl->pts[i];
    if (by_step) {
        *u1 = pt->step_last;
        *u0 = i ? tl->pts[i - 1].step_last : pt->step_first;
        if (*u0 > *u1)
            *u0 = *u1;
    } else {
        *u0 = pt->ev_first;
        *u1 = (pt->ev_last >= pt->ev_first ? pt->ev_last : pt->ev_first) + 1;
    }
    return *u1 > *u0 ? (double)(*u1 - *u0) : wz;
}

static uint64_t stacked(const mp_tl_point *pt)
{
    uint64_t s = 0;
    for (int i = 0; i < N_STACK; i++)
        s += pt->live[stack_order[i]];
    return s;
}

static void point_where(char *buf, size_t n, const mp_tl_point *pt, const mp_trace_meta *m)
{
    char ob[256];
    size_t o = 0;
    buf[0] = '\0';
    if (pt->run > 0)
        o += (size_t)snprintf(buf + o, n - o, "run %" PRIu64, pt->run);
    else if (pt->phase_kind >= 0)
        o += (size_t)snprintf(buf + o, n - o, "%s", mp_phase_kind_name(pt->phase_kind));
    if (o < n && pt->op >= 0)
        o += (size_t)snprintf(buf + o, n - o, "%sop %s", o ? ", " : "",
                              op_label(ob, sizeof ob, m, pt->op));
    if (o == 0)
        snprintf(buf, n, "outside any phase");
}

double mp_svg_timeline(FILE *f, const mp_profile *p, double x, double y)
{
    const double h = TOP + TL_PH + 84;
    if (!f)
        return h;
    const double L = ML, R = W - MR, PW = R - L, T = TOP;
    bool by_step;
    const mp_timeline *tl = pick_timeline(p, &by_step);
    const mp_trace_meta *meta = p ? p->meta : NULL;
    char b1[64], b2[64], where[512];

    svg_open(f, x, y, h, "timeline", "Memory over time");
    heading(f, "Memory over time");

    tl_seg *segs = tl ? calloc(tl->n, sizeof *segs) : NULL;
    if (!tl || !segs) {
        subtitle_open(f, 48);
        fputs("heap by kind of memory</text>\n", f);
        no_data(f, L, T, PW, TL_PH, tl ? "no data (out of memory)" : "no data: the trace has no events");
        fputs("</svg>\n", f);
        free(segs);
        return h;
    }

    /* Pixel extents: points cumulate their widths; points narrower than a pixel merge. */
    /* Points between steps get 2.5 % of the steps' width each (20 % at most in all), so that
     * load and prepare stay visible. */
    double total = 0, wz = 1;
    size_t n_zero = 0;
    for (size_t i = 0; i < tl->n; i++) {
        uint64_t u0, u1;
        double w = pt_units(tl, i, by_step, 0, &u0, &u1);
        total += w;
        n_zero += w == 0;
    }
    if (n_zero) {
        wz = total * 0.025;
        if ((double)n_zero * wz > total * 0.2)
            wz = total * 0.2 / (double)n_zero;
        if (wz < 1)
            wz = 1;
        total += (double)n_zero * wz;
    }
    size_t ns = 0;
    double pos = 0;
    for (size_t i = 0; i < tl->n; i++) {
        uint64_t u0, u1;
        double w = pt_units(tl, i, by_step, wz, &u0, &u1);
        double x0 = L + pos / total * PW, x1 = L + (pos + w) / total * PW;
        pos += w;
        if (ns > 0 && segs[ns - 1].x1 - segs[ns - 1].x0 < 1.0) {
            tl_seg *s = &segs[ns - 1];
            s->x1 = x1;
            s->last = i;
            if (s->pt != tl->peak && (i == tl->peak || tl->pts[i].heap > tl->pts[s->pt].heap))
                s->pt = i;
        } else {
            segs[ns++] = (tl_seg){x0, x1, i, i, i};
        }
    }

    uint64_t ymax = 0;
    for (size_t s = 0; s < ns; s++) {
        const mp_tl_point *pt = &tl->pts[segs[s].pt];
        uint64_t v = pt->heap > stacked(pt) ? pt->heap : stacked(pt);
        if (tl->has_rss && pt->rss > v)
            v = pt->rss;
        if (v > ymax)
            ymax = v;
    }
    /* A tenth more on top: room for the peak's label above the curve. */
    uint64_t room = ymax + ymax / 10;
    uint64_t step = ymax ? mp_nice_bytes_step(room, 5) : 1024;
    uint64_t top = ymax ? round_up(room, step) : 1024;
#define YV(v) (T + TL_PH - (double)(v) / (double)top * TL_PH)

    size_t peak = tl->peak < tl->n ? tl->peak : 0;
    const mp_tl_point *pk = &tl->pts[peak];
    point_where(where, sizeof where, pk, meta);
    subtitle_open(f, 48);
    xprintf(f, "heap by kind of memory over %s; peak %s (%s)",
            by_step ? "operator steps" : "events", fmtb(b1, sizeof b1, pk->heap), where);
    fputs("</text>\n", f);

    /* Phases other than runs, shaded and named (load and prepare often hold the peak). */
    for (size_t s = 0; s < ns;) {
        int32_t k = tl->pts[segs[s].pt].phase_kind;
        size_t e = s;
        while (e + 1 < ns && tl->pts[segs[e + 1].pt].phase_kind == k)
            e++;
        if (k >= 0 && k != MP_PHASE_RUN) {
            double x0 = segs[s].x0, x1 = segs[e].x1;
            fprintf(f,
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                    "fill=\"#F5F5F2\"/>\n",
                    x0, T, x1 - x0, TL_PH);
            if (x1 - x0 >= 44)
                fprintf(f,
                        "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" "
                        "fill=\"#8A8A8A\">%s</text>\n",
                        x0 + 3, T - 6, mp_phase_kind_name(k));
        }
        s = e + 1;
    }

    y_axis_bytes(f, L, R, T, TL_PH, top, step, "heap");

    /* Run boundaries. */
    {
        size_t n_bound = 0;
        uint64_t prev = 0;
        for (size_t s = 0; s < ns; s++) {
            uint64_t r = tl->pts[segs[s].pt].run;
            if (r && r != prev)
                n_bound++;
            if (r)
                prev = r;
        }
        prev = 0;
        double last_label = -1e9;
        if (n_bound <= (size_t)(PW / 4))
            for (size_t s = 0; s < ns; s++) {
                uint64_t r = tl->pts[segs[s].pt].run;
                if (r && r != prev) {
                    double bx = segs[s].x0;
                    fprintf(f,
                            "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                            "stroke=\"#D5D5D5\" stroke-width=\"1\"/>\n",
                            bx, bx, T - 4, T + TL_PH);
                    if (bx - last_label >= 52 && bx < R - 30) {
                        fprintf(f,
                                "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" "
                                "fill=\"#8A8A8A\">run %" PRIu64 "</text>\n",
                                bx + 3, T - 6, r);
                        last_label = bx;
                    }
                }
                if (r)
                    prev = r;
            }
    }

    /* Stacked areas, one path per kind present. */
    uint64_t *base = calloc(ns, sizeof *base);
    for (int k = 0; base && k < N_STACK; k++) {
        int kind = stack_order[k];
        bool any = false;
        for (size_t s = 0; s < ns && !any; s++)
            any = tl->pts[segs[s].pt].live[kind] > 0;
        if (!any)
            continue;
        fprintf(f, "<path class=\"area kind-%s\" fill=\"%s\" fill-opacity=\"0.88\" d=\"",
                mp_kind_name(kind), mp_svg_kind_color(kind));
        for (size_t s = 0; s < ns; s++) {
            double ty = YV(base[s] + tl->pts[segs[s].pt].live[kind]);
            if (s == 0)
                fprintf(f, "M%.1f,%.1fH%.1f", segs[s].x0, ty, segs[s].x1);
            else
                fprintf(f, "V%.1fH%.1f", ty, segs[s].x1);
        }
        for (size_t s = ns; s-- > 0;)
            fprintf(f, "V%.1fH%.1f", YV(base[s]), segs[s].x0);
        fputs("Z\"><title>", f);
        fputs(mp_kind_name(kind), f);
        fputs("</title></path>\n", f);
        for (size_t s = 0; s < ns; s++)
            base[s] += tl->pts[segs[s].pt].live[kind];
    }
    free(base);

    /* Heap outline and RSS. */
    fprintf(f, "<polyline class=\"heap-outline\" fill=\"none\" stroke=\"%s\" "
               "stroke-width=\"1.4\" stroke-linejoin=\"round\" points=\"", TEXT);
    for (size_t s = 0; s < ns; s++) {
        double hy = YV(tl->pts[segs[s].pt].heap);
        fprintf(f, "%s%.1f,%.1f %.1f,%.1f", s ? " " : "", segs[s].x0, hy, segs[s].x1, hy);
    }
    fputs("\"/>\n", f);
    if (tl->has_rss) {
        bool open = false;
        for (size_t s = 0; s < ns; s++) {
            uint64_t rss = tl->pts[segs[s].pt].rss;
            if (!rss)
                continue;
            if (!open)
                fputs("<polyline class=\"rss\" fill=\"none\" stroke=\"#6A3D9A\" "
                      "stroke-width=\"1.4\" stroke-dasharray=\"5 3\" points=\"", f);
            fprintf(f, "%s%.1f,%.1f %.1f,%.1f", open ? " " : "", segs[s].x0, YV(rss),
                    segs[s].x1, YV(rss));
            open = true;
        }
        if (open)
            fputs("\"/>\n", f);
    }

    /* X axis: ticks in steps (or events), placed through the points' extents. */
    {
        uint64_t u0, u1, umax;
        double w;
        pt_units(tl, tl->n - 1, by_step, wz, &u0, &u1);
        umax = u1;
        uint64_t xs = mp_nice_step(umax, 8);
        size_t i = 0;
        double cpos = 0;
        double last_x = -1e9;
        for (uint64_t v = 0; v <= umax; v += xs) {
            double px = -1;
            /* Step v starts in the first point reaching past it (after zero-width points). */
            while (i < tl->n) {
                w = pt_units(tl, i, by_step, wz, &u0, &u1);
                if (u1 > v) {
                    double off = v > u0 ? (double)(v - u0) : 0;
                    px = L + (cpos + (off < w ? off : w)) / total * PW;
                    break;
                }
                cpos += w;
                i++;
            }
            if (px < 0 && v == umax)
                px = R;
            if (px < 0)
                break;
            if (px - last_x >= 30) {
                fprintf(f,
                        "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n"
                        "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"11\" "
                        "fill=\"%s\">%" PRIu64 "</text>\n",
                        px, px, T + TL_PH, T + TL_PH + 4, AXIS, px, T + TL_PH + 17, TEXT2, v);
                last_x = px;
            }
            if (UINT64_MAX - v < xs)
                break;
        }
        char axis[160];
        if (by_step)
            snprintf(axis, sizeof axis,
                     "operator steps (every operator executed, in order; %zu operators per run)",
                     p->n_ops);
        else
            snprintf(axis, sizeof axis, "events");
        note(f, L + PW / 2, T + TL_PH + 36, "middle", axis);
    }

    /* Peak marker. */
    size_t ps = 0;
    for (size_t s = 0; s < ns; s++)
        if (segs[s].first <= peak && peak <= segs[s].last)
            ps = s;
    double px = (segs[ps].x0 + segs[ps].x1) / 2, py = YV(pk->heap);
    fprintf(f,
            "<line class=\"peak-line\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
            "stroke=\"%s\" stroke-width=\"1.2\" stroke-dasharray=\"4 3\"/>\n"
            "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\" stroke=\"#FFFFFF\" "
            "stroke-width=\"1.5\"/>\n",
            px, px, T - 2, T + TL_PH, PEAK, px, py, PEAK);
    bool right = px > L + PW * 0.62;
    fprintf(f,
            "<text class=\"peak-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"12\" "
            "fill=\"%s\" stroke=\"#FFFFFF\" stroke-width=\"4\" paint-order=\"stroke\">"
            "<tspan font-weight=\"600\">peak %s</tspan> ",
            right ? px - 8 : px + 8, T + 14, right ? "end" : "start", PEAK,
            fmtb(b1, sizeof b1, pk->heap));
    mp_xml_text(f, where, 0);
    fputs("</text>\n", f);

    /* Hover: a transparent column per group of segments, telling what it shows. */
    {
        double min_w = PW / 240;
        for (size_t s = 0; s < ns;) {
            size_t e = s, best = segs[s].pt;
            while (e + 1 < ns && segs[e].x1 - segs[s].x0 < min_w) {
                e++;
                if (tl->pts[segs[e].pt].heap > tl->pts[best].heap)
                    best = segs[e].pt;
            }
            const mp_tl_point *a = &tl->pts[segs[s].first], *z = &tl->pts[segs[e].last];
            const mp_tl_point *bp = &tl->pts[best];
            uint64_t a0, a1, z0, z1;
            pt_units(tl, segs[s].first, by_step, wz, &a0, &a1);
            pt_units(tl, segs[e].last, by_step, wz, &z0, &z1);
            fprintf(f,
                    "<rect class=\"hover\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                    "height=\"%.1f\" fill=\"#000000\" fill-opacity=\"0\"><title>",
                    segs[s].x0, T, segs[e].x1 - segs[s].x0, TL_PH);
            point_where(where, sizeof where, bp, meta);
            if (by_step && z1 <= a0)
                mp_xml_text(f, where, 0); /* between steps */
            else if (by_step && z1 == a0 + 1)
                xprintf(f, "step %" PRIu64 ": %s", a0, where);
            else if (by_step)
                xprintf(f, "steps %" PRIu64 "-%" PRIu64 ", highest in %s", a0, z1 - 1, where);
            else
                xprintf(f, "events %" PRIu64 "-%" PRIu64 ", highest in %s", a->ev_first,
                        z->ev_last, where);
            char tb[48];
            xprintf(f, " at %s", mp_fmt_ns(tb, sizeof tb, bp->t_ns));
            xprintf_nl(f, "heap %s", fmtb(b1, sizeof b1, bp->heap));
            for (int k = N_STACK; k-- > 0;)
                if (bp->live[stack_order[k]])
                    xprintf_nl(f, "  %s %s", mp_kind_name(stack_order[k]),
                            fmtb(b1, sizeof b1, bp->live[stack_order[k]]));
            if (tl->has_rss && bp->rss)
                xprintf_nl(f, "process RSS %s", fmtb(b1, sizeof b1, bp->rss));
            fputs("</title></rect>\n", f);
            s = e + 1;
        }
    }

    /* Legend. */
    {
        double lx = L, ly = T + TL_PH + 64;
        for (int k = N_STACK; k-- > 0;) {
            int kind = stack_order[k];
            if (!p->summary.kind_peak[kind]) {
                bool any = false;
                for (size_t s = 0; s < ns && !any; s++)
                    any = tl->pts[segs[s].pt].live[kind] > 0;
                if (!any)
                    continue;
            }
            char lab[96];
            if (p->summary.kind_peak[kind])
                snprintf(lab, sizeof lab, "%s (own peak %s)", mp_kind_name(kind),
                         fmtb(b1, sizeof b1, p->summary.kind_peak[kind]));
            else
                snprintf(lab, sizeof lab, "%s", mp_kind_name(kind));
            lx = legend_item(f, lx, ly, mp_svg_kind_color(kind), false, NULL, lab);
        }
        lx = legend_item(f, lx, ly, TEXT, true, NULL, "heap");
        if (tl->has_rss)
            lx = legend_item(f, lx, ly, "#6A3D9A", true, "5 3", "process RSS");
        lx = legend_item(f, lx, ly, PEAK, true, "4 3", "peak");
        if (p->summary.const_bytes > 0) {
            char nb[96];
            snprintf(nb, sizeof nb, "constants: %s mapped, not drawn",
                     fmtb(b2, sizeof b2, p->summary.const_bytes));
            if (lx + 6.2 * (double)strlen(nb) < R)
                note(f, R, ly, "end", nb);
        }
    }
#undef YV
    fputs("</svg>\n", f);
    free(segs);
    return h;
}

/* ---- lifetimes ---------------------------------------------------------------------------- */

#define LT_ROWS 240      /* most tensors given a row each */
#define LT_MAX_ROWS 700  /* beyond: 1 px rows */
#define LT_LABEL_ROWS 48

typedef struct lt_layout {
    size_t n_bars;
    size_t *bars;        /* indices into p->lifetimes, drawn order */
    uint32_t *row;       /* row of each bar */
    size_t rows;
    double rh;           /* row height */
    bool labels;         /* names at the left */
    bool lanes;          /* rows shared by tensors never alive together */
    int32_t n_cols;      /* operator indices on the x axis */
    size_t n_const, n_unknown, n_left_out;
    uint64_t left_out_bytes;
    double ph, h;
} lt_layout;

static const mp_profile *sort_p;

static int by_bytes_desc(const void *a, const void *b)
{
    const mp_lifetime *x = &sort_p->lifetimes[*(const size_t *)a];
    const mp_lifetime *y = &sort_p->lifetimes[*(const size_t *)b];
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    return x->tensor < y->tensor ? -1 : x->tensor > y->tensor;
}

static int by_first_op(const void *a, const void *b)
{
    const mp_lifetime *x = &sort_p->lifetimes[*(const size_t *)a];
    const mp_lifetime *y = &sort_p->lifetimes[*(const size_t *)b];
    if (x->first_op != y->first_op)
        return x->first_op < y->first_op ? -1 : 1;
    if (x->last_op != y->last_op)
        return x->last_op < y->last_op ? -1 : 1;
    return x->tensor < y->tensor ? -1 : x->tensor > y->tensor;
}

static bool lt_drawable(const mp_lifetime *l)
{
    return l->manager != MP_MGR_NONE && l->manager != MP_MGR_CONST && l->bytes > 0 &&
           l->first_op >= 0 && l->last_op >= l->first_op;
}

static void lt_free(lt_layout *lo)
{
    free(lo->bars);
    free(lo->row);
}

static void lt_compute(const mp_profile *p, lt_layout *lo)
{
    memset(lo, 0, sizeof *lo);
    lo->n_cols = p ? (int32_t)(p->n_ops < INT32_MAX ? p->n_ops : INT32_MAX) : 0;
    size_t n = (p && p->lifetimes) ? p->n_lifetimes : 0;
    size_t cnt = 0;
    for (size_t i = 0; i < n; i++) {
        const mp_lifetime *l = &p->lifetimes[i];
        if (l->manager == MP_MGR_CONST)
            lo->n_const++;
        else if (lt_drawable(l)) {
            cnt++;
            if (l->last_op >= lo->n_cols)
                lo->n_cols = l->last_op + 1;
        } else if (l->bytes > 0 && l->manager != MP_MGR_NONE)
            lo->n_unknown++;
    }
    if (cnt) {
        lo->bars = malloc(cnt * sizeof *lo->bars);
        lo->row = malloc(cnt * sizeof *lo->row);
        if (!lo->bars || !lo->row) {
            lt_free(lo);
            lo->bars = NULL;
            lo->row = NULL;
            cnt = 0;
        }
    }
    for (size_t i = 0, k = 0; i < n && cnt; i++)
        if (lt_drawable(&p->lifetimes[i]))
            lo->bars[k++] = i;
    sort_p = p;
    if (cnt > MP_SVG_MAX_SHAPES) {
        qsort(lo->bars, cnt, sizeof *lo->bars, by_bytes_desc);
        lo->n_left_out = cnt - MP_SVG_MAX_SHAPES;
        for (size_t i = MP_SVG_MAX_SHAPES; i < cnt; i++)
            lo->left_out_bytes += p->lifetimes[lo->bars[i]].bytes;
        cnt = MP_SVG_MAX_SHAPES;
    }
    if (cnt)
        qsort(lo->bars, cnt, sizeof *lo->bars, by_first_op);
    lo->n_bars = cnt;

    /* One row per tensor; lanes shared by tensors never alive together when that is too many
     * rows to read. */
    if (cnt <= LT_ROWS) {
        for (size_t i = 0; i < cnt; i++)
            lo->row[i] = (uint32_t)i;
        lo->rows = cnt;
    } else {
        int32_t *lane_end = malloc(cnt * sizeof *lane_end);
        size_t lanes = 0;
        for (size_t i = 0; i < cnt; i++) {
            const mp_lifetime *l = &p->lifetimes[lo->bars[i]];
            size_t j = 0;
            if (lane_end)
                while (j < lanes && lane_end[j] >= l->first_op)
                    j++;
            else
                j = lanes;
            if (j == lanes)
                lanes++;
            if (lane_end)
                lane_end[j] = l->last_op;
            lo->row[i] = (uint32_t)j;
        }
        free(lane_end);
        lo->rows = lanes;
    }
    lo->lanes = cnt > LT_ROWS;
    if (lo->rows == 0)
        lo->rh = 0;
    else if (lo->rows > LT_MAX_ROWS)
        lo->rh = 1;
    else {
        lo->rh = floor(720.0 / (double)lo->rows);
        lo->rh = lo->rh < 2 ? 2 : lo->rh > 18 ? 18 : lo->rh;
    }
    lo->labels = cnt > 0 && cnt <= LT_LABEL_ROWS && lo->rows == cnt;
    lo->ph = lo->rows ? (double)lo->rows * lo->rh : 160;
    lo->h = TOP + lo->ph + 84;
}

double mp_svg_lifetimes(FILE *f, const mp_profile *p, double x, double y)
{
    lt_layout lo;
    lt_compute(p, &lo);
    if (!f) {
        lt_free(&lo);
        return lo.h;
    }
    const mp_trace_meta *meta = p ? p->meta : NULL;
    const double L = lo.labels ? 220.0 : ML, R = W - MR, PW = R - L, T = TOP;
    char b1[64], ob[256], ob2[256];

    svg_open(f, x, y, lo.h, "lifetimes", "Tensor lifetimes");
    heading(f, "Tensor lifetimes");
    subtitle_open(f, 48);
    if (p && p->reference_run >= 0)
        xprintf(f, "run %" PRId64 ": ", p->reference_run);
    xprintf(f, "%zu tensors, one bar each over the operators it is alive for, coloured by "
               "memory manager", lo.n_bars + lo.n_left_out);
    if (lo.lanes)
        xprintf(f, "; tensors never alive together share a row");
    fputs("</text>\n", f);

    if (lo.n_bars == 0 || lo.n_cols <= 0) {
        no_data(f, ML, T, W - MR - ML, lo.ph,
                "no data: no tensor was held during a run");
        fputs("</svg>\n", f);
        lt_free(&lo);
        return lo.h;
    }
    const double cw = PW / (double)lo.n_cols;

    /* Row stripes and names. */
    if (lo.labels)
        for (size_t i = 0; i < lo.n_bars; i++) {
            double ry = T + (double)i * lo.rh;
            if (i % 2)
                fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                           "fill=\"#FAFAFA\"/>\n", 16.0, ry, R - 16, lo.rh);
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"%.0f\" "
                       "fill=\"%s\">", L - 8, ry + lo.rh / 2 + 4, lo.rh >= 14 ? 11.0 : 10.0, TEXT);
            const mp_lifetime *l = &p->lifetimes[lo.bars[i]];
            if (l->name)
                mp_xml_text(f, l->name, 30);
            else
                fprintf(f, "tensor #%" PRId32, l->tensor);
            fputs("</text>\n", f);
        }

    /* Operator gridlines and ticks. */
    uint64_t xs = lo.n_cols <= 32 ? 1 : mp_nice_step((uint64_t)lo.n_cols, 10);
    for (uint64_t v = 0; v < (uint64_t)lo.n_cols; v += xs) {
        double gx = L + ((double)v + 0.5) * cw;
        fprintf(f,
                "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"11\" "
                "fill=\"%s\">%" PRIu64 "</text>\n",
                gx, gx, T, T + lo.ph + 4, GRID, gx, T + lo.ph + 17, TEXT2, v);
    }
    fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", L, R,
            T + lo.ph, T + lo.ph, AXIS);
    note(f, L + PW / 2, T + lo.ph + 36, "middle",
         p->reference_run >= 0 ? "operator index (reference run)" : "operator index");
    if (!lo.labels && lo.ph >= 150)
        fprintf(f,
                "<text x=\"16\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"11\" "
                "fill=\"%s\" transform=\"rotate(-90 16 %.1f)\">%s</text>\n",
                T + lo.ph / 2, TEXT2, T + lo.ph / 2,
                lo.lanes ? "tensors by first operator, in lanes" : "tensors, by first operator");

    /* Heap peak, when it happened inside an operator of this run. */
    const mp_summary_when *pw = &p->summary.peak;
    if (pw->event >= 0 && pw->op >= 0 && pw->op < lo.n_cols && p->reference_run > 0 &&
        pw->run == (uint64_t)p->reference_run) {
        double gx = L + ((double)pw->op + 0.5) * cw;
        fprintf(f,
                "<line class=\"peak-line\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                "stroke=\"%s\" stroke-width=\"1.2\" stroke-dasharray=\"4 3\"/>\n"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"11\" fill=\"%s\">"
                "heap peak</text>\n",
                gx, gx, T - 12, T + lo.ph, PEAK, gx + (gx > L + PW * 0.8 ? -4 : 4), T - 4,
                gx > L + PW * 0.8 ? "end" : "start", PEAK);
    }

    /* Bars. */
    double gap = lo.rh >= 6 ? 2 : lo.rh >= 4 ? 1 : 0;
    size_t count[8] = {0};
    for (size_t i = 0; i < lo.n_bars; i++) {
        const mp_lifetime *l = &p->lifetimes[lo.bars[i]];
        /* Inset a little, so that neighbours in a lane stay apart. */
        double in = cw * 0.12 < 0.6 ? cw * 0.12 : 0.6;
        double bx = L + (double)l->first_op * cw + in;
        double bw = (double)(l->last_op - l->first_op + 1) * cw - 2 * in;
        double by = T + (double)lo.row[i] * lo.rh + gap / 2;
        double bh = lo.rh - gap;
        count[l->manager < 8 ? l->manager : 0]++;
        fprintf(f,
                "<rect class=\"bar\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"%s "
                "fill=\"%s\"><title>",
                bx, by, bw, bh, lo.rh >= 8 ? " rx=\"2\"" : "", mp_svg_manager_color(l->manager));
        if (l->name)
            mp_xml_text(f, l->name, 400);
        else
            fprintf(f, "tensor #%" PRId32, l->tensor);
        xprintf_nl(f, "tensor #%" PRId32 ", %s (%" PRIu64 " bytes), %s", l->tensor,
                fmtb(b1, sizeof b1, l->bytes), l->bytes, mp_svg_manager_label(l->manager));
        if (l->manager == MP_MGR_ARENA && l->offset >= 0)
            xprintf_nl(f, "offset %" PRId64 " in arena %" PRIu64, l->offset, l->arena_id);
        xprintf_nl(f, "alive from op %s to op %s", op_label(ob, sizeof ob, meta, l->first_op),
                op_label(ob2, sizeof ob2, meta, l->last_op));
        if (l->producer >= 0)
            xprintf_nl(f, "written by op %s", op_label(ob, sizeof ob, meta, l->producer));
        fputs("</title></rect>\n", f);
    }

    /* Legend and notes. */
    double lx = L, ly = T + lo.ph + 60;
    for (int m = 1; m < 6; m++)
        if (count[m]) {
            char lab[64];
            snprintf(lab, sizeof lab, "%s (%zu)", mp_svg_manager_label(m), count[m]);
            lx = legend_item(f, lx, ly, mp_svg_manager_color(m), false, NULL, lab);
        }
    char nb[256];
    size_t o = 0;
    nb[0] = '\0';
    if (lo.n_const)
        o += (size_t)snprintf(nb + o, sizeof nb - o, "%zu constant%s not drawn", lo.n_const,
                              lo.n_const == 1 ? "" : "s");
    if (lo.n_unknown && o < sizeof nb)
        o += (size_t)snprintf(nb + o, sizeof nb - o, "%s%zu tensors alive outside the run",
                              o ? "; " : "", lo.n_unknown);
    if (lo.n_left_out && o < sizeof nb)
        snprintf(nb + o, sizeof nb - o, "%s%zu smallest (%s) left out", o ? "; " : "",
                 lo.n_left_out, fmtb(b1, sizeof b1, lo.left_out_bytes));
    if (nb[0])
        note(f, R, ly, "end", nb);
    fputs("</svg>\n", f);
    lt_free(&lo);
    return lo.h;
}

/* ---- arena layout ------------------------------------------------------------------------ */

#define AR_PH 320.0
#define AR_SH 56.0

static unsigned pattern_serial;

static double arena_height(const mp_arena_report *ar)
{
    return ar ? TOP + 12 + AR_PH + 56 + AR_SH + 52 : TOP + 12 + 96;
}

static const mp_arena_report *sort_ar;

static int slot_by_bytes_desc(const void *a, const void *b)
{
    const mp_arena_slot *x = &sort_ar->slots[*(const size_t *)a];
    const mp_arena_slot *y = &sort_ar->slots[*(const size_t *)b];
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

static int slot_by_offset(const void *a, const void *b)
{
    const mp_arena_slot *x = &sort_ar->slots[*(const size_t *)a];
    const mp_arena_slot *y = &sort_ar->slots[*(const size_t *)b];
    if (x->offset != y->offset)
        return x->offset < y->offset ? -1 : 1;
    if (x->first_op != y->first_op)
        return x->first_op < y->first_op ? -1 : 1;
    return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

double mp_svg_arena(FILE *f, const mp_arena_report *ar, const mp_trace_meta *meta, double x,
                    double y)
{
    const double h = arena_height(ar);
    if (!f)
        return h;
    const double L = ML + 8, R = W - MR, PW = R - L, T = TOP + 12;
    char b1[64], b2[64], b3[64], ob[256], ob2[256];

    svg_open(f, x, y, h, "arena", "Arena layout");
    heading(f, "Arena layout");
    if (!ar) {
        subtitle_open(f, 48);
        fputs("offset against operators, one rectangle per planned tensor</text>\n", f);
        no_data(f, L, T, PW, 72, "no data: nothing was planned in an arena");
        fputs("</svg>\n", f);
        return h;
    }

    int32_t n_cols = ar->n_ops > 0 ? ar->n_ops : 0;
    for (size_t i = 0; ar->slots && i < ar->n_slots; i++)
        if (ar->slots[i].last_op >= n_cols && ar->slots[i].last_op < INT32_MAX)
            n_cols = ar->slots[i].last_op + 1;
    uint64_t ymax = ar->bytes;
    if (ar->used > ymax)
        ymax = ar->used;
    if (ar->lower_bound > ymax)
        ymax = ar->lower_bound;

    size_t n_scratch = 0;
    for (size_t i = 0; ar->slots && i < ar->n_slots; i++)
        n_scratch += ar->slots[i].tensor < 0 || ar->slots[i].kind == MP_KIND_SCRATCH;
    subtitle_open(f, 48);
    xprintf(f, "arena %" PRIu64 ": %s for %zu tensors", ar->id, fmtb(b1, sizeof b1, ar->bytes),
            ar->n_slots - n_scratch);
    if (n_scratch)
        xprintf(f, " and %zu scratch buffers", n_scratch);
    xprintf(f, "; lower bound %s", fmtb(b2, sizeof b2, ar->lower_bound));
    if (ar->lower_bound > 0 && ar->bytes >= ar->lower_bound)
    {
        double over = (double)(ar->bytes - ar->lower_bound) * 100.0 / (double)ar->lower_bound;
        xprintf(f, " (arena %+.*f %%)", over < 1 ? 2 : 1, over);
    }
    xprintf(f, "; without reuse %s", fmtb(b3, sizeof b3, ar->naive));
    if (ar->runs)
        xprintf(f, "; used by %" PRIu64 " run%s", ar->runs, ar->runs == 1 ? "" : "s");
    fputs("</text>\n", f);

    if (n_cols <= 0 || ymax == 0 || !ar->slots || ar->n_slots == 0) {
        no_data(f, L, T, PW, AR_PH, "no data: the arena has no planned tensor");
        fputs("</svg>\n", f);
        return h;
    }
    const double cw = PW / (double)n_cols;
    uint64_t step = mp_nice_bytes_step(ymax, 5);
    uint64_t top = round_up(ymax, step);
#define YA(v) (T + AR_PH - (double)(v) / (double)top * AR_PH)

    /* The arena's bytes, hatched: what shows through is not held by a live tensor. */
    unsigned pid = ++pattern_serial;
    fprintf(f,
            "<defs><pattern id=\"mp-free-%u\" width=\"6\" height=\"6\" "
            "patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
            "<rect width=\"6\" height=\"6\" fill=\"#F6F6F4\"/>"
            "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#DCDCD8\" stroke-width=\"2\"/>"
            "</pattern></defs>\n",
            pid);
    y_axis_bytes(f, L, R, T, AR_PH, top, step, "offset in the arena");
    fprintf(f,
            "<rect class=\"arena-box\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
            "fill=\"url(#mp-free-%u)\" stroke=\"#C8C8C8\"/>\n",
            L, YA(ar->bytes), PW, YA(0) - YA(ar->bytes), pid);

    /* Slots: the largest when there are too many; drawn by offset, neighbours coloured apart. */
    size_t n = ar->n_slots, left_out = 0;
    uint64_t left_bytes = 0;
    size_t *ix = malloc(n * sizeof *ix);
    if (ix) {
        for (size_t i = 0; i < n; i++)
            ix[i] = i;
        sort_ar = ar;
        if (n > MP_SVG_MAX_SHAPES) {
            qsort(ix, n, sizeof *ix, slot_by_bytes_desc);
            left_out = n - MP_SVG_MAX_SHAPES;
            for (size_t i = MP_SVG_MAX_SHAPES; i < n; i++)
                left_bytes += ar->slots[ix[i]].bytes;
            n = MP_SVG_MAX_SHAPES;
        }
        qsort(ix, n, sizeof *ix, slot_by_offset);
    } else {
        n = 0;
    }
    for (size_t k = 0; k < n; k++) {
        const mp_arena_slot *s = &ar->slots[ix[k]];
        int32_t fo = s->first_op >= 0 ? s->first_op : 0;
        int32_t lo = s->last_op >= fo ? s->last_op : fo;
        double rx = L + (double)fo * cw, rw = (double)(lo - fo + 1) * cw;
        double ry = YA(s->offset + s->bytes), rh = YA(s->offset) - ry;
        if (rh < 1) {
            ry -= (1 - rh) / 2;
            rh = 1;
        }
        /* An operator's scratch slot (no tensor) in the scratch colour, apart. */
        bool scratch = s->tensor < 0 || s->kind == MP_KIND_SCRATCH;
        const char *col = scratch ? mp_svg_kind_color(MP_KIND_SCRATCH) : mp_svg_cycle_color(k);
        fprintf(f,
                "<rect class=\"slot%s\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
                "height=\"%.2f\" fill=\"%s\"%s><title>",
                scratch ? " scratch" : "", rx, ry, rw, rh, col,
                rw > 3 && rh > 3 ? " stroke=\"#FFFFFF\" stroke-width=\"0.75\"" : "");
        if (scratch) {
            xprintf(f, "scratch of op %s", op_label(ob, sizeof ob, meta, s->first_op));
            xprintf_nl(f, "%s (%" PRIu64 " bytes)", fmtb(b1, sizeof b1, s->bytes), s->bytes);
        } else {
            if (s->name)
                mp_xml_text(f, s->name, 400);
            else
                fprintf(f, "tensor #%" PRId32, s->tensor);
            xprintf_nl(f, "tensor #%" PRId32 ", %s (%" PRIu64 " bytes)", s->tensor,
                    fmtb(b1, sizeof b1, s->bytes), s->bytes);
        }
        xprintf_nl(f, "offset %" PRIu64 " to %" PRIu64, s->offset, s->offset + s->bytes);
        xprintf_nl(f, "ops %s to %s", op_label(ob, sizeof ob, meta, s->first_op),
                op_label(ob2, sizeof ob2, meta, s->last_op));
        fputs("</title></rect>\n", f);
        if (rw >= 64 && rh >= 15) {
            size_t chars = (size_t)((rw - 8) / 6.4);
            static const bool light[10] = {0, 1, 0, 0, 1, 1, 0, 1, 0, 1};
            fprintf(f,
                    "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"%s\" "
                    "pointer-events=\"none\">",
                    rx + 4, ry + rh / 2 + 3.5,
                    scratch || light[k % 10] ? "#1E1E1E" : "#FFFFFF");
            if (scratch)
                mp_xml_text(f, "scratch", chars);
            else if (s->name)
                mp_xml_text(f, s->name, chars);
            else
                fprintf(f, "#%" PRId32, s->tensor);
            fputs("</text>\n", f);
        }
    }
    free(ix);

    /* The operator where the lower bound is reached: its live slots fill the outlined column. */
    if (ar->lower_bound_op >= 0 && ar->lower_bound_op < n_cols && ar->lower_bound > 0)
        fprintf(f,
                "<rect class=\"lower-bound-op\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                "height=\"%.1f\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" "
                "pointer-events=\"none\"/>\n",
                L + (double)ar->lower_bound_op * cw, YA(ar->lower_bound), cw,
                YA(0) - YA(ar->lower_bound), PEAK);

    /* Arena size and lower bound. */
    double ya = YA(ar->bytes), yl = YA(ar->lower_bound);
    bool tight = ar->bytes == ar->lower_bound;
    fprintf(f,
            "<line class=\"arena-size\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
            "stroke=\"%s\" stroke-width=\"1.5\"/>\n",
            L, R, ya, ya, TEXT);
    fprintf(f,
            "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"11\" fill=\"%s\" "
            "stroke=\"#FFFFFF\" stroke-width=\"3\" paint-order=\"stroke\">",
            R - 4, ya - 5, TEXT);
    if (tight)
        xprintf(f, "arena %s = lower bound: the plan is tight", fmtb(b1, sizeof b1, ar->bytes));
    else
        xprintf(f, "arena %s", fmtb(b1, sizeof b1, ar->bytes));
    fputs("</text>\n", f);
    fprintf(f,
            "<line class=\"lower-bound\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
            "stroke=\"%s\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>\n",
            L, R, yl, yl, PEAK);
    if (!tight) {
        fprintf(f,
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"11\" fill=\"%s\" "
                "stroke=\"#FFFFFF\" stroke-width=\"3\" paint-order=\"stroke\">",
                R - 4, yl + 14, PEAK);
        xprintf(f, "lower bound %s", fmtb(b1, sizeof b1, ar->lower_bound));
        if (ar->lower_bound_op >= 0)
            xprintf(f, " (at op %s)", op_label(ob, sizeof ob, meta, ar->lower_bound_op));
        fputs("</text>\n", f);
    }

    /* X axis. */
    uint64_t xs = n_cols <= 32 ? 1 : mp_nice_step((uint64_t)n_cols, 10);
    for (uint64_t v = 0; v < (uint64_t)n_cols; v += xs) {
        double gx = L + ((double)v + 0.5) * cw;
        fprintf(f,
                "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"11\" "
                "fill=\"%s\">%" PRIu64 "</text>\n",
                gx, gx, T + AR_PH, T + AR_PH + 4, AXIS, gx, T + AR_PH + 17, TEXT2, v);
    }
    note(f, L + PW / 2, T + AR_PH + 34, "middle", "operator index");

    /* Fragmentation strip: free bytes of the arena per operator. */
    double st = T + AR_PH + 56, sb = st + AR_SH;
    fprintf(f,
            "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"%s\">free bytes per operator "
            "(arena bytes no live tensor holds: fragmentation and slack)</text>\n",
            L, st - 6, TEXT2);
    fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", L, R,
            sb, sb, AXIS);
    if (ar->free_at_op && ar->n_ops > 0 && ar->bytes > 0) {
        size_t per = (size_t)ceil((double)ar->n_ops / PW);
        if (per < 1)
            per = 1;
        for (int32_t i = 0; i < ar->n_ops; i += (int32_t)per) {
            int32_t e = i + (int32_t)per <= ar->n_ops ? i + (int32_t)per : ar->n_ops;
            uint64_t mx = 0;
            int32_t at = i;
            for (int32_t j = i; j < e; j++)
                if (ar->free_at_op[j] > mx) {
                    mx = ar->free_at_op[j];
                    at = j;
                }
            double fr = (double)(mx > ar->bytes ? ar->bytes : mx) / (double)ar->bytes;
            double bh = fr * AR_SH;
            fprintf(f,
                    "<rect class=\"free\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
                    "fill=\"#A8A8A8\"><title>",
                    L + (double)i * cw, sb - bh, (double)(e - i) * cw * (per > 1 ? 1 : 0.92), bh);
            xprintf(f, "op %s: %s free (%.1f %% of the arena)", op_label(ob, sizeof ob, meta, at),
                    fmtb(b1, sizeof b1, mx), fr * 100.0);
            fputs("</title></rect>\n", f);
        }
    }

    char nb[256];
    if (left_out)
        snprintf(nb, sizeof nb, "%zu smallest slots (%s) not drawn", left_out,
                 fmtb(b1, sizeof b1, left_bytes));
    else
        snprintf(nb, sizeof nb, "each rectangle: a tensor's slot (offset up, operators across)");
    note(f, L, sb + 30, "start", nb);
    {
        double lx = R - 290, ly = sb + 30;
        lx = legend_item(f, lx, ly, "#DCDCD8", false, NULL, "free");
        lx = legend_item(f, lx, ly, TEXT, true, NULL, "arena size");
        legend_item(f, lx, ly, PEAK, true, "6 4", "lower bound");
    }
#undef YA
    fputs("</svg>\n", f);
    return h;
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
             fmtb(b1, sizeof b1, p ? p->summary.peak_heap : 0), p ? p->summary.n_events : 0);
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
                 meta && meta->planner ? meta->planner : "?", fmtb(b1, sizeof b1, ar->bytes),
                 fmtb(b2, sizeof b2, ar->lower_bound), ar->n_slots);
    else
        snprintf(sub, sizeof sub, "no arena");
    doc_open(f, DOC_HEAD + h, title ? title : t);
    doc_heading(f, title ? title : t, sub);
    mp_svg_arena(f, ar, meta, 0, DOC_HEAD);
    fputs("</svg>\n", f);
}
