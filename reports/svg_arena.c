/* The arena layout chart (mp_svg_arena of svg_charts.h): the planned slots of one arena
 * by offset and operator, and its figures against the lower bound. Layout only; text escaped. */
#include "reports/svg_charts.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "reports/chart_style.h"
#include "reports/markup.h"
#include "reports/svg_internal.h"
#include "reports/units.h"

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

/* What every part of the arena chart needs: the plot area, operator columns, the y scale. */
typedef struct ar_chart {
    FILE *f;
    const mp_arena_report *ar;
    const mp_trace_meta *meta;
    double L, R, PW, T; /* the plot area: left, right, width, top */
    int32_t n_cols;     /* operator columns */
    double cw;          /* a column's width */
    uint64_t top;       /* bytes at the top of the plot */
} ar_chart;

static double ar_y(const ar_chart *c, uint64_t v)
{
    return c->T + AR_PH - (double)v / (double)c->top * AR_PH;
}

/* The subtitle: the arena's bytes, tensors and scratch buffers, lower bound, bytes without
 * reuse and runs. */
static void ar_subtitle(FILE *f, const mp_arena_report *ar)
{
    char b1[64], b2[64], b3[64];
    size_t n_scratch = 0;
    for (size_t i = 0; ar->slots && i < ar->n_slots; i++)
        n_scratch += ar->slots[i].tensor < 0 || ar->slots[i].kind == MP_KIND_SCRATCH;
    mp_svg_subtitle_open(f, 48);
    mp_svg_xprintf(f, "arena %" PRIu64 ": %s for %zu tensors", ar->id,
                   mp_svg_fmtb(b1, sizeof b1, ar->bytes), ar->n_slots - n_scratch);
    if (n_scratch)
        mp_svg_xprintf(f, " and %zu scratch buffers", n_scratch);
    mp_svg_xprintf(f, "; lower bound %s", mp_svg_fmtb(b2, sizeof b2, ar->lower_bound));
    if (ar->lower_bound > 0 && ar->bytes >= ar->lower_bound) {
        double over = (double)(ar->bytes - ar->lower_bound) * 100.0 / (double)ar->lower_bound;
        mp_svg_xprintf(f, " (arena %+.*f %%)", over < 1 ? 2 : 1, over);
    }
    mp_svg_xprintf(f, "; without reuse %s", mp_svg_fmtb(b3, sizeof b3, ar->naive));
    if (ar->runs)
        mp_svg_xprintf(f, "; used by %" PRIu64 " run%s", ar->runs, ar->runs == 1 ? "" : "s");
    fputs("</text>\n", f);
}

/* The slots drawn, as indices in offset order: the MP_SVG_MAX_SHAPES largest when there are
 * more (*left_out of them, *left_bytes, are not drawn). NULL (and *n = 0) out of memory. */
static size_t *ar_pick_slots(const mp_arena_report *ar, size_t *n, size_t *left_out,
                             uint64_t *left_bytes)
{
    *n = ar->n_slots;
    *left_out = 0;
    *left_bytes = 0;
    size_t *ix = malloc(*n * sizeof *ix);
    if (!ix) {
        *n = 0;
        return NULL;
    }
    for (size_t i = 0; i < *n; i++)
        ix[i] = i;
    sort_ar = ar;
    if (*n > MP_SVG_MAX_SHAPES) {
        qsort(ix, *n, sizeof *ix, slot_by_bytes_desc);
        *left_out = *n - MP_SVG_MAX_SHAPES;
        for (size_t i = MP_SVG_MAX_SHAPES; i < *n; i++)
            *left_bytes += ar->slots[ix[i]].bytes;
        *n = MP_SVG_MAX_SHAPES;
    }
    qsort(ix, *n, sizeof *ix, slot_by_offset);
    return ix;
}

/* One slot, the k-th drawn: a rectangle from its first to its last operator over its bytes,
 * neighbours coloured apart (an operator's scratch in the scratch colour), with a tooltip and
 * its name when it fits. */
static void ar_slot(const ar_chart *c, size_t k, const mp_arena_slot *s)
{
    FILE *f = c->f;
    char b1[64], ob[256], ob2[256];
    int32_t fo = s->first_op >= 0 ? s->first_op : 0;
    int32_t lo = s->last_op >= fo ? s->last_op : fo;
    double rx = c->L + (double)fo * c->cw, rw = (double)(lo - fo + 1) * c->cw;
    double ry = ar_y(c, s->offset + s->bytes), rh = ar_y(c, s->offset) - ry;
    if (rh < 1) {
        ry -= (1 - rh) / 2;
        rh = 1;
    }
    bool scratch = s->tensor < 0 || s->kind == MP_KIND_SCRATCH;
    const char *col = scratch ? mp_svg_kind_color(MP_KIND_SCRATCH) : mp_svg_cycle_color(k);
    fprintf(f,
            "<rect class=\"slot%s\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
            "height=\"%.2f\" fill=\"%s\"%s><title>",
            scratch ? " scratch" : "", rx, ry, rw, rh, col,
            rw > 3 && rh > 3 ? " stroke=\"#FFFFFF\" stroke-width=\"0.75\"" : "");
    if (scratch) {
        mp_svg_xprintf(f, "scratch of op %s",
                       mp_svg_op_label(ob, sizeof ob, c->meta, s->first_op));
        mp_svg_xprintf_nl(f, "%s (%" PRIu64 " bytes)", mp_svg_fmtb(b1, sizeof b1, s->bytes),
                          s->bytes);
    } else {
        if (s->name)
            mp_xml_text(f, s->name, 400);
        else
            fprintf(f, "tensor #%" PRId32, s->tensor);
        mp_svg_xprintf_nl(f, "tensor #%" PRId32 ", %s (%" PRIu64 " bytes)", s->tensor,
                          mp_svg_fmtb(b1, sizeof b1, s->bytes), s->bytes);
    }
    mp_svg_xprintf_nl(f, "offset %" PRIu64 " to %" PRIu64, s->offset, s->offset + s->bytes);
    mp_svg_xprintf_nl(f, "ops %s to %s", mp_svg_op_label(ob, sizeof ob, c->meta, s->first_op),
                      mp_svg_op_label(ob2, sizeof ob2, c->meta, s->last_op));
    fputs("</title></rect>\n", f);
    if (rw >= 64 && rh >= 15) {
        size_t chars = (size_t)((rw - 8) / 6.4);
        static const bool light[10] = {0, 1, 0, 0, 1, 1, 0, 1, 0, 1};
        fprintf(f,
                "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"%s\" "
                "pointer-events=\"none\">",
                rx + 4, ry + rh / 2 + 3.5, scratch || light[k % 10] ? "#1E1E1E" : "#FFFFFF");
        if (scratch)
            mp_xml_text(f, "scratch", chars);
        else if (s->name)
            mp_xml_text(f, s->name, chars);
        else
            fprintf(f, "#%" PRId32, s->tensor);
        fputs("</text>\n", f);
    }
}

/* The operator where the lower bound is reached (its live slots fill the outlined column),
 * the arena's size and the lower bound, as lines across. */
static void ar_bounds(const ar_chart *c)
{
    FILE *f = c->f;
    const mp_arena_report *ar = c->ar;
    char b1[64], ob[256];
    if (ar->lower_bound_op >= 0 && ar->lower_bound_op < c->n_cols && ar->lower_bound > 0)
        fprintf(f,
                "<rect class=\"lower-bound-op\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                "height=\"%.1f\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" "
                "pointer-events=\"none\"/>\n",
                c->L + (double)ar->lower_bound_op * c->cw, ar_y(c, ar->lower_bound), c->cw,
                ar_y(c, 0) - ar_y(c, ar->lower_bound), PEAK);
    double ya = ar_y(c, ar->bytes), yl = ar_y(c, ar->lower_bound);
    bool tight = ar->bytes == ar->lower_bound;
    fprintf(f,
            "<line class=\"arena-size\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
            "stroke=\"%s\" stroke-width=\"1.5\"/>\n",
            c->L, c->R, ya, ya, TEXT);
    fprintf(f,
            "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"11\" fill=\"%s\" "
            "stroke=\"#FFFFFF\" stroke-width=\"3\" paint-order=\"stroke\">",
            c->R - 4, ya - 5, TEXT);
    if (tight)
        mp_svg_xprintf(f, "arena %s = lower bound: the plan is tight",
                       mp_svg_fmtb(b1, sizeof b1, ar->bytes));
    else
        mp_svg_xprintf(f, "arena %s", mp_svg_fmtb(b1, sizeof b1, ar->bytes));
    fputs("</text>\n", f);
    fprintf(f,
            "<line class=\"lower-bound\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
            "stroke=\"%s\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>\n",
            c->L, c->R, yl, yl, PEAK);
    if (tight)
        return;
    fprintf(f,
            "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"11\" fill=\"%s\" "
            "stroke=\"#FFFFFF\" stroke-width=\"3\" paint-order=\"stroke\">",
            c->R - 4, yl + 14, PEAK);
    mp_svg_xprintf(f, "lower bound %s", mp_svg_fmtb(b1, sizeof b1, ar->lower_bound));
    if (ar->lower_bound_op >= 0)
        mp_svg_xprintf(f, " (at op %s)",
                       mp_svg_op_label(ob, sizeof ob, c->meta, ar->lower_bound_op));
    fputs("</text>\n", f);
}

/* X axis: operator indices. */
static void ar_x_axis(const ar_chart *c)
{
    const double T = c->T;
    uint64_t xs = c->n_cols <= 32 ? 1 : mp_nice_step((uint64_t)c->n_cols, 10);
    for (uint64_t v = 0; v < (uint64_t)c->n_cols; v += xs) {
        double gx = c->L + ((double)v + 0.5) * c->cw;
        fprintf(c->f,
                "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"11\" "
                "fill=\"%s\">%" PRIu64 "</text>\n",
                gx, gx, T + AR_PH, T + AR_PH + 4, AXIS, gx, T + AR_PH + 17, TEXT2, v);
    }
    mp_svg_note(c->f, c->L + c->PW / 2, T + AR_PH + 34, "middle", "operator index");
}

/* Fragmentation strip: free bytes of the arena per operator (the most of each group of
 * operators sharing a pixel). Returns the strip's bottom. */
static double ar_free_strip(const ar_chart *c)
{
    FILE *f = c->f;
    const mp_arena_report *ar = c->ar;
    char b1[64], ob[256];
    double st = c->T + AR_PH + 56, sb = st + AR_SH;
    fprintf(f,
            "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"%s\">free bytes per operator "
            "(arena bytes no live tensor holds: fragmentation and slack)</text>\n",
            c->L, st - 6, TEXT2);
    fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", c->L,
            c->R, sb, sb, AXIS);
    if (!ar->free_at_op || ar->n_ops <= 0 || ar->bytes == 0)
        return sb;
    size_t per = (size_t)ceil((double)ar->n_ops / c->PW);
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
                c->L + (double)i * c->cw, sb - bh, (double)(e - i) * c->cw * (per > 1 ? 1 : 0.92),
                bh);
        mp_svg_xprintf(f, "op %s: %s free (%.1f %% of the arena)",
                       mp_svg_op_label(ob, sizeof ob, c->meta, at),
                       mp_svg_fmtb(b1, sizeof b1, mx), fr * 100.0);
        fputs("</title></rect>\n", f);
    }
    return sb;
}

double mp_svg_arena(FILE *f, const mp_arena_report *ar, const mp_trace_meta *meta, double x,
                    double y)
{
    const double h = arena_height(ar);
    if (!f)
        return h;
    ar_chart c = {.f = f, .ar = ar, .meta = meta, .L = ML + 8, .R = W - MR,
                  .PW = W - MR - (ML + 8), .T = TOP + 12};
    char b1[64];

    mp_svg_open_chart(f, x, y, h, "arena", "Arena layout");
    mp_svg_heading(f, "Arena layout");
    if (!ar) {
        mp_svg_subtitle_open(f, 48);
        fputs("offset against operators, one rectangle per planned tensor</text>\n", f);
        mp_svg_no_data(f, c.L, c.T, c.PW, 72, "no data: nothing was planned in an arena");
        fputs("</svg>\n", f);
        return h;
    }

    c.n_cols = ar->n_ops > 0 ? ar->n_ops : 0;
    for (size_t i = 0; ar->slots && i < ar->n_slots; i++)
        if (ar->slots[i].last_op >= c.n_cols && ar->slots[i].last_op < INT32_MAX)
            c.n_cols = ar->slots[i].last_op + 1;
    uint64_t ymax = ar->bytes;
    if (ar->used > ymax)
        ymax = ar->used;
    if (ar->lower_bound > ymax)
        ymax = ar->lower_bound;
    ar_subtitle(f, ar);
    if (c.n_cols <= 0 || ymax == 0 || !ar->slots || ar->n_slots == 0) {
        mp_svg_no_data(f, c.L, c.T, c.PW, AR_PH, "no data: the arena has no planned tensor");
        fputs("</svg>\n", f);
        return h;
    }
    c.cw = c.PW / (double)c.n_cols;
    uint64_t step = mp_nice_bytes_step(ymax, 5);
    c.top = mp_svg_round_up(ymax, step);

    /* The arena's bytes, hatched: what shows through is not held by a live tensor. */
    unsigned pid = ++pattern_serial;
    fprintf(f,
            "<defs><pattern id=\"mp-free-%u\" width=\"6\" height=\"6\" "
            "patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
            "<rect width=\"6\" height=\"6\" fill=\"#F6F6F4\"/>"
            "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#DCDCD8\" stroke-width=\"2\"/>"
            "</pattern></defs>\n",
            pid);
    mp_svg_y_axis_bytes(f, c.L, c.R, c.T, AR_PH, c.top, step, "offset in the arena");
    fprintf(f,
            "<rect class=\"arena-box\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
            "fill=\"url(#mp-free-%u)\" stroke=\"#C8C8C8\"/>\n",
            c.L, ar_y(&c, ar->bytes), c.PW, ar_y(&c, 0) - ar_y(&c, ar->bytes), pid);

    size_t n, left_out;
    uint64_t left_bytes;
    size_t *ix = ar_pick_slots(ar, &n, &left_out, &left_bytes);
    for (size_t k = 0; k < n; k++)
        ar_slot(&c, k, &ar->slots[ix[k]]);
    free(ix);
    ar_bounds(&c);
    ar_x_axis(&c);
    double sb = ar_free_strip(&c);

    char nb[256];
    if (left_out)
        snprintf(nb, sizeof nb, "%zu smallest slots (%s) not drawn", left_out,
                 mp_svg_fmtb(b1, sizeof b1, left_bytes));
    else
        snprintf(nb, sizeof nb, "each rectangle: a tensor's slot (offset up, operators across)");
    mp_svg_note(f, c.L, sb + 30, "start", nb);
    double lx = c.R - 290, ly = sb + 30;
    lx = mp_svg_legend_item(f, lx, ly, "#DCDCD8", false, NULL, "free");
    lx = mp_svg_legend_item(f, lx, ly, TEXT, true, NULL, "arena size");
    mp_svg_legend_item(f, lx, ly, PEAK, true, "6 4", "lower bound");
    fputs("</svg>\n", f);
    return h;
}
