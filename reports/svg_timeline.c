/* The memory timeline chart (mp_svg_timeline of svg_charts.h): heap by kind of memory
 * over operator steps or events, stacked, with the heap outline, RSS, runs, the peak and a
 * tooltip per column. Layout only; text escaped. */
#include "reports/svg_charts.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "reports/chart_style.h"
#include "reports/markup.h"
#include "reports/svg_internal.h"
#include "reports/units.h"

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
    for (int i = 0; i < MP_SVG_N_STACK; i++)
        s += pt->live[mp_svg_stack_order[i]];
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
                              mp_svg_op_label(ob, sizeof ob, m, pt->op));
    if (o == 0)
        snprintf(buf, n, "outside any phase");
}

/* What every part of the timeline needs: the plot area, the points grouped into segments at
 * least a pixel wide, and the y scale. */
typedef struct tl_chart {
    FILE *f;
    const mp_profile *p;
    const mp_timeline *tl;
    const mp_trace_meta *meta;
    bool by_step;
    double L, R, PW, T; /* the plot area: left, right, width, top */
    tl_seg *segs;
    size_t ns;
    double total; /* width of all points, in steps (or events) */
    double wz;    /* width given to a point in which no step begins */
    uint64_t top; /* bytes at the top of the plot */
} tl_chart;

static double tl_y(const tl_chart *c, uint64_t v)
{
    return c->T + TL_PH - (double)v / (double)c->top * TL_PH;
}

/* Pixel extents: points cumulate their widths; points narrower than a pixel merge. Points
 * between steps get 2.5 % of the steps' width each (20 % at most in all), so that load and
 * prepare stay visible. */
static void tl_segments(tl_chart *c)
{
    const mp_timeline *tl = c->tl;
    double total = 0, wz = 1;
    size_t n_zero = 0;
    for (size_t i = 0; i < tl->n; i++) {
        uint64_t u0, u1;
        double w = pt_units(tl, i, c->by_step, 0, &u0, &u1);
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
        double w = pt_units(tl, i, c->by_step, wz, &u0, &u1);
        double x0 = c->L + pos / total * c->PW, x1 = c->L + (pos + w) / total * c->PW;
        pos += w;
        if (ns > 0 && c->segs[ns - 1].x1 - c->segs[ns - 1].x0 < 1.0) {
            tl_seg *s = &c->segs[ns - 1];
            s->x1 = x1;
            s->last = i;
            if (s->pt != tl->peak && (i == tl->peak || tl->pts[i].heap > tl->pts[s->pt].heap))
                s->pt = i;
        } else {
            c->segs[ns++] = (tl_seg){x0, x1, i, i, i};
        }
    }
    c->ns = ns;
    c->total = total;
    c->wz = wz;
}

/* The y scale: the highest heap, stack or RSS shown, a tenth more on top (room for the
 * peak's label above the curve), rounded up to a tick. Sets c->top, returns the tick step. */
static uint64_t tl_scale(tl_chart *c)
{
    uint64_t ymax = 0;
    for (size_t s = 0; s < c->ns; s++) {
        const mp_tl_point *pt = &c->tl->pts[c->segs[s].pt];
        uint64_t v = pt->heap > stacked(pt) ? pt->heap : stacked(pt);
        if (c->tl->has_rss && pt->rss > v)
            v = pt->rss;
        if (v > ymax)
            ymax = v;
    }
    uint64_t room = ymax + ymax / 10;
    uint64_t step = ymax ? mp_nice_bytes_step(room, 5) : 1024;
    c->top = ymax ? mp_svg_round_up(room, step) : 1024;
    return step;
}

/* Phases other than runs, shaded and named (load and prepare often hold the peak). */
static void tl_phases(const tl_chart *c)
{
    for (size_t s = 0; s < c->ns;) {
        int32_t k = c->tl->pts[c->segs[s].pt].phase_kind;
        size_t e = s;
        while (e + 1 < c->ns && c->tl->pts[c->segs[e + 1].pt].phase_kind == k)
            e++;
        if (k >= 0 && k != MP_PHASE_RUN) {
            double x0 = c->segs[s].x0, x1 = c->segs[e].x1;
            fprintf(c->f,
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                    "fill=\"#F5F5F2\"/>\n",
                    x0, c->T, x1 - x0, TL_PH);
            if (x1 - x0 >= 44)
                fprintf(c->f,
                        "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" "
                        "fill=\"#8A8A8A\">%s</text>\n",
                        x0 + 3, c->T - 6, mp_phase_kind_name(k));
        }
        s = e + 1;
    }
}

/* Run boundaries: a line where each run begins, labelled where there is room (none when
 * there are more runs than a line per 4 pixels). */
static void tl_runs(const tl_chart *c)
{
    size_t n_bound = 0;
    uint64_t prev = 0;
    for (size_t s = 0; s < c->ns; s++) {
        uint64_t r = c->tl->pts[c->segs[s].pt].run;
        if (r && r != prev)
            n_bound++;
        if (r)
            prev = r;
    }
    if (n_bound > (size_t)(c->PW / 4))
        return;
    prev = 0;
    double last_label = -1e9;
    for (size_t s = 0; s < c->ns; s++) {
        uint64_t r = c->tl->pts[c->segs[s].pt].run;
        if (r && r != prev) {
            double bx = c->segs[s].x0;
            fprintf(c->f,
                    "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                    "stroke=\"#D5D5D5\" stroke-width=\"1\"/>\n",
                    bx, bx, c->T - 4, c->T + TL_PH);
            if (bx - last_label >= 52 && bx < c->R - 30) {
                fprintf(c->f,
                        "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" "
                        "fill=\"#8A8A8A\">run %" PRIu64 "</text>\n",
                        bx + 3, c->T - 6, r);
                last_label = bx;
            }
        }
        if (r)
            prev = r;
    }
}

/* Whether any segment shows live bytes of kind. */
static bool tl_kind_shown(const tl_chart *c, int kind)
{
    for (size_t s = 0; s < c->ns; s++)
        if (c->tl->pts[c->segs[s].pt].live[kind] > 0)
            return true;
    return false;
}

/* Stacked areas, one path per kind present. */
static void tl_areas(const tl_chart *c)
{
    FILE *f = c->f;
    uint64_t *base = calloc(c->ns, sizeof *base);
    for (int k = 0; base && k < MP_SVG_N_STACK; k++) {
        int kind = mp_svg_stack_order[k];
        if (!tl_kind_shown(c, kind))
            continue;
        fprintf(f, "<path class=\"area kind-%s\" fill=\"%s\" fill-opacity=\"0.88\" d=\"",
                mp_kind_name(kind), mp_svg_kind_color(kind));
        for (size_t s = 0; s < c->ns; s++) {
            double ty = tl_y(c, base[s] + c->tl->pts[c->segs[s].pt].live[kind]);
            if (s == 0)
                fprintf(f, "M%.1f,%.1fH%.1f", c->segs[s].x0, ty, c->segs[s].x1);
            else
                fprintf(f, "V%.1fH%.1f", ty, c->segs[s].x1);
        }
        for (size_t s = c->ns; s-- > 0;)
            fprintf(f, "V%.1fH%.1f", tl_y(c, base[s]), c->segs[s].x0);
        fputs("Z\"><title>", f);
        fputs(mp_kind_name(kind), f);
        fputs("</title></path>\n", f);
        for (size_t s = 0; s < c->ns; s++)
            base[s] += c->tl->pts[c->segs[s].pt].live[kind];
    }
    free(base);
}

/* Heap outline and RSS. */
static void tl_lines(const tl_chart *c)
{
    FILE *f = c->f;
    fprintf(f, "<polyline class=\"heap-outline\" fill=\"none\" stroke=\"%s\" "
               "stroke-width=\"1.4\" stroke-linejoin=\"round\" points=\"", TEXT);
    for (size_t s = 0; s < c->ns; s++) {
        double hy = tl_y(c, c->tl->pts[c->segs[s].pt].heap);
        fprintf(f, "%s%.1f,%.1f %.1f,%.1f", s ? " " : "", c->segs[s].x0, hy, c->segs[s].x1,
                hy);
    }
    fputs("\"/>\n", f);
    if (!c->tl->has_rss)
        return;
    bool open = false;
    for (size_t s = 0; s < c->ns; s++) {
        uint64_t rss = c->tl->pts[c->segs[s].pt].rss;
        if (!rss)
            continue;
        if (!open)
            fputs("<polyline class=\"rss\" fill=\"none\" stroke=\"#6A3D9A\" "
                  "stroke-width=\"1.4\" stroke-dasharray=\"5 3\" points=\"", f);
        fprintf(f, "%s%.1f,%.1f %.1f,%.1f", open ? " " : "", c->segs[s].x0, tl_y(c, rss),
                c->segs[s].x1, tl_y(c, rss));
        open = true;
    }
    if (open)
        fputs("\"/>\n", f);
}

/* X axis: ticks in steps (or events), placed through the points' extents. */
static void tl_x_axis(const tl_chart *c)
{
    const mp_timeline *tl = c->tl;
    const double T = c->T;
    uint64_t u0, u1, umax;
    double w;
    pt_units(tl, tl->n - 1, c->by_step, c->wz, &u0, &u1);
    umax = u1;
    uint64_t xs = mp_nice_step(umax, 8);
    size_t i = 0;
    double cpos = 0;
    double last_x = -1e9;
    for (uint64_t v = 0; v <= umax; v += xs) {
        double px = -1;
        /* Step v starts in the first point reaching past it (after zero-width points). */
        while (i < tl->n) {
            w = pt_units(tl, i, c->by_step, c->wz, &u0, &u1);
            if (u1 > v) {
                double off = v > u0 ? (double)(v - u0) : 0;
                px = c->L + (cpos + (off < w ? off : w)) / c->total * c->PW;
                break;
            }
            cpos += w;
            i++;
        }
        if (px < 0 && v == umax)
            px = c->R;
        if (px < 0)
            break;
        if (px - last_x >= 30) {
            fprintf(c->f,
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
    if (c->by_step)
        snprintf(axis, sizeof axis,
                 "operator steps (every operator executed, in order; %zu operators per run)",
                 c->p->n_ops);
    else
        snprintf(axis, sizeof axis, "events");
    mp_svg_note(c->f, c->L + c->PW / 2, T + TL_PH + 36, "middle", axis);
}

/* Peak marker: a dashed line and a dot on the segment holding point peak, labelled with the
 * peak's bytes and where it happened. */
static void tl_peak(const tl_chart *c, size_t peak, const char *where)
{
    FILE *f = c->f;
    const mp_tl_point *pk = &c->tl->pts[peak];
    char b1[64];
    size_t ps = 0;
    for (size_t s = 0; s < c->ns; s++)
        if (c->segs[s].first <= peak && peak <= c->segs[s].last)
            ps = s;
    double px = (c->segs[ps].x0 + c->segs[ps].x1) / 2, py = tl_y(c, pk->heap);
    fprintf(f,
            "<line class=\"peak-line\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
            "stroke=\"%s\" stroke-width=\"1.2\" stroke-dasharray=\"4 3\"/>\n"
            "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\" stroke=\"#FFFFFF\" "
            "stroke-width=\"1.5\"/>\n",
            px, px, c->T - 2, c->T + TL_PH, PEAK, px, py, PEAK);
    bool right = px > c->L + c->PW * 0.62;
    fprintf(f,
            "<text class=\"peak-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"12\" "
            "fill=\"%s\" stroke=\"#FFFFFF\" stroke-width=\"4\" paint-order=\"stroke\">"
            "<tspan font-weight=\"600\">peak %s</tspan> ",
            right ? px - 8 : px + 8, c->T + 14, right ? "end" : "start", PEAK,
            mp_svg_fmtb(b1, sizeof b1, pk->heap));
    mp_xml_text(f, where, 0);
    fputs("</text>\n", f);
}

/* The tooltip of segments s..e: which steps (or events), where the highest point is, its heap
 * and each kind's bytes. */
static void tl_hover_title(const tl_chart *c, size_t s, size_t e, size_t best)
{
    FILE *f = c->f;
    const mp_timeline *tl = c->tl;
    const mp_tl_point *a = &tl->pts[c->segs[s].first], *z = &tl->pts[c->segs[e].last];
    const mp_tl_point *bp = &tl->pts[best];
    char where[512], b1[64], tb[48];
    uint64_t a0, a1, z0, z1;
    pt_units(tl, c->segs[s].first, c->by_step, c->wz, &a0, &a1);
    pt_units(tl, c->segs[e].last, c->by_step, c->wz, &z0, &z1);
    point_where(where, sizeof where, bp, c->meta);
    if (c->by_step && z1 <= a0)
        mp_xml_text(f, where, 0); /* between steps */
    else if (c->by_step && z1 == a0 + 1)
        mp_svg_xprintf(f, "step %" PRIu64 ": %s", a0, where);
    else if (c->by_step)
        mp_svg_xprintf(f, "steps %" PRIu64 "-%" PRIu64 ", highest in %s", a0, z1 - 1, where);
    else
        mp_svg_xprintf(f, "events %" PRIu64 "-%" PRIu64 ", highest in %s", a->ev_first,
                       z->ev_last, where);
    mp_svg_xprintf(f, " at %s", mp_fmt_ns(tb, sizeof tb, bp->t_ns));
    mp_svg_xprintf_nl(f, "heap %s", mp_svg_fmtb(b1, sizeof b1, bp->heap));
    for (int k = MP_SVG_N_STACK; k-- > 0;)
        if (bp->live[mp_svg_stack_order[k]])
            mp_svg_xprintf_nl(f, "  %s %s", mp_kind_name(mp_svg_stack_order[k]),
                              mp_svg_fmtb(b1, sizeof b1, bp->live[mp_svg_stack_order[k]]));
    if (tl->has_rss && bp->rss)
        mp_svg_xprintf_nl(f, "process RSS %s", mp_svg_fmtb(b1, sizeof b1, bp->rss));
}

/* Hover: a transparent column per group of segments, telling what it shows. */
static void tl_hover(const tl_chart *c)
{
    double min_w = c->PW / 240;
    for (size_t s = 0; s < c->ns;) {
        size_t e = s, best = c->segs[s].pt;
        while (e + 1 < c->ns && c->segs[e].x1 - c->segs[s].x0 < min_w) {
            e++;
            if (c->tl->pts[c->segs[e].pt].heap > c->tl->pts[best].heap)
                best = c->segs[e].pt;
        }
        fprintf(c->f,
                "<rect class=\"hover\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                "height=\"%.1f\" fill=\"#000000\" fill-opacity=\"0\"><title>",
                c->segs[s].x0, c->T, c->segs[e].x1 - c->segs[s].x0, TL_PH);
        tl_hover_title(c, s, e, best);
        fputs("</title></rect>\n", c->f);
        s = e + 1;
    }
}

/* Legend: each kind shown (with its own peak), heap, RSS, peak, and the constants not drawn. */
static void tl_legend(const tl_chart *c)
{
    const mp_profile *p = c->p;
    double lx = c->L, ly = c->T + TL_PH + 64;
    char b1[64], b2[64];
    for (int k = MP_SVG_N_STACK; k-- > 0;) {
        int kind = mp_svg_stack_order[k];
        if (!p->summary.kind_peak[kind] && !tl_kind_shown(c, kind))
            continue;
        char lab[96];
        if (p->summary.kind_peak[kind])
            snprintf(lab, sizeof lab, "%s (own peak %s)", mp_kind_name(kind),
                     mp_svg_fmtb(b1, sizeof b1, p->summary.kind_peak[kind]));
        else
            snprintf(lab, sizeof lab, "%s", mp_kind_name(kind));
        lx = mp_svg_legend_item(c->f, lx, ly, mp_svg_kind_color(kind), false, NULL, lab);
    }
    lx = mp_svg_legend_item(c->f, lx, ly, TEXT, true, NULL, "heap");
    if (c->tl->has_rss)
        lx = mp_svg_legend_item(c->f, lx, ly, "#6A3D9A", true, "5 3", "process RSS");
    lx = mp_svg_legend_item(c->f, lx, ly, PEAK, true, "4 3", "peak");
    if (p->summary.const_bytes > 0) {
        char nb[96];
        snprintf(nb, sizeof nb, "constants: %s mapped, not drawn",
                 mp_svg_fmtb(b2, sizeof b2, p->summary.const_bytes));
        if (lx + 6.2 * (double)strlen(nb) < c->R)
            mp_svg_note(c->f, c->R, ly, "end", nb);
    }
}

double mp_svg_timeline(FILE *f, const mp_profile *p, double x, double y)
{
    const double h = TOP + TL_PH + 84;
    if (!f)
        return h;
    tl_chart c = {.f = f, .p = p, .L = ML, .R = W - MR, .PW = W - MR - ML, .T = TOP};
    c.tl = pick_timeline(p, &c.by_step);
    c.meta = p ? p->meta : NULL;
    const mp_timeline *tl = c.tl;
    char b1[64], where[512];

    mp_svg_open_chart(f, x, y, h, "timeline", "Memory over time");
    mp_svg_heading(f, "Memory over time");

    c.segs = tl ? calloc(tl->n, sizeof *c.segs) : NULL;
    if (!tl || !c.segs) {
        mp_svg_subtitle_open(f, 48);
        fputs("heap by kind of memory</text>\n", f);
        mp_svg_no_data(f, c.L, c.T, c.PW, TL_PH,
                       tl ? "no data (out of memory)" : "no data: the trace has no events");
        fputs("</svg>\n", f);
        free(c.segs);
        return h;
    }
    tl_segments(&c);
    uint64_t step = tl_scale(&c);

    size_t peak = tl->peak < tl->n ? tl->peak : 0;
    const mp_tl_point *pk = &tl->pts[peak];
    point_where(where, sizeof where, pk, c.meta);
    mp_svg_subtitle_open(f, 48);
    mp_svg_xprintf(f, "heap by kind of memory over %s; peak %s (%s)",
                   c.by_step ? "operator steps" : "events",
                   mp_svg_fmtb(b1, sizeof b1, pk->heap), where);
    fputs("</text>\n", f);

    tl_phases(&c);
    mp_svg_y_axis_bytes(f, c.L, c.R, c.T, TL_PH, c.top, step, "heap");
    tl_runs(&c);
    tl_areas(&c);
    tl_lines(&c);
    tl_x_axis(&c);
    tl_peak(&c, peak, where);
    tl_hover(&c);
    tl_legend(&c);
    fputs("</svg>\n", f);
    free(c.segs);
    return h;
}
