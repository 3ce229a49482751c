/* The tensor lifetimes chart (mp_svg_lifetimes of svg_charts.h): one row per tensor of
 * the reference run, from its first to its last operator, largest first. Layout only; text
 * escaped. */
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

    mp_svg_open_chart(f, x, y, lo.h, "lifetimes", "Tensor lifetimes");
    mp_svg_heading(f, "Tensor lifetimes");
    mp_svg_subtitle_open(f, 48);
    if (p && p->reference_run >= 0)
        mp_svg_xprintf(f, "run %" PRId64 ": ", p->reference_run);
    mp_svg_xprintf(f,
                   "%zu tensors, one bar each over the operators it is alive for, coloured by "
                   "memory manager",
                   lo.n_bars + lo.n_left_out);
    if (lo.lanes)
        mp_svg_xprintf(f, "; tensors never alive together share a row");
    fputs("</text>\n", f);

    if (lo.n_bars == 0 || lo.n_cols <= 0) {
        mp_svg_no_data(f, ML, T, W - MR - ML, lo.ph, "no data: no tensor was held during a run");
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
    mp_svg_note(f, L + PW / 2, T + lo.ph + 36, "middle",
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
        mp_svg_xprintf_nl(f, "tensor #%" PRId32 ", %s (%" PRIu64 " bytes), %s", l->tensor,
                          mp_svg_fmtb(b1, sizeof b1, l->bytes), l->bytes,
                          mp_svg_manager_label(l->manager));
        if (l->manager == MP_MGR_ARENA && l->offset >= 0)
            mp_svg_xprintf_nl(f, "offset %" PRId64 " in arena %" PRIu64, l->offset, l->arena_id);
        mp_svg_xprintf_nl(f, "alive from op %s to op %s",
                          mp_svg_op_label(ob, sizeof ob, meta, l->first_op),
                          mp_svg_op_label(ob2, sizeof ob2, meta, l->last_op));
        if (l->producer >= 0)
            mp_svg_xprintf_nl(f, "written by op %s",
                              mp_svg_op_label(ob, sizeof ob, meta, l->producer));
        fputs("</title></rect>\n", f);
    }

    /* Legend and notes. */
    double lx = L, ly = T + lo.ph + 60;
    for (int m = 1; m < 6; m++)
        if (count[m]) {
            char lab[64];
            snprintf(lab, sizeof lab, "%s (%zu)", mp_svg_manager_label(m), count[m]);
            lx = mp_svg_legend_item(f, lx, ly, mp_svg_manager_color(m), false, NULL, lab);
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
                 lo.n_left_out, mp_svg_fmtb(b1, sizeof b1, lo.left_out_bytes));
    if (nb[0])
        mp_svg_note(f, R, ly, "end", nb);
    fputs("</svg>\n", f);
    lt_free(&lo);
    return lo.h;
}
