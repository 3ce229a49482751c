/* What the SVG chart files share (svg_charts.c, svg_timeline.c, svg_lifetimes.c,
 * svg_arena.c), private to them: layout constants, the stacking order of kinds, and the small
 * writers (escaped printf, headings, notes, axes, legend entries). Not for other reports. */
#ifndef MP_SVG_INTERNAL_H
#define MP_SVG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyzers/profile.h"
#include "trace/trace.h"

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
#define MP_SVG_N_STACK 6
extern const int mp_svg_stack_order[MP_SVG_N_STACK];

/* ---- small writers (svg_charts.c) ---- */

/* printf into a buffer, then escaped: for text that may contain names. */
void mp_svg_xprintf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same on a new line (in a <title>: a line of its tooltip). */
void mp_svg_xprintf_nl(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *mp_svg_fmtb(char *buf, size_t n, uint64_t v);
const char *mp_svg_op_name(const mp_trace_meta *m, int32_t op);
/* "#3 CONV_2D" (raw: escape when writing). */
const char *mp_svg_op_label(char *buf, size_t n, const mp_trace_meta *m, int32_t op);
void mp_svg_open_chart(FILE *f, double x, double y, double h, const char *cls, const char *label);
void mp_svg_heading(FILE *f, const char *title);
/* Opens the subtitle's <text>; the caller writes its content and closes it. */
void mp_svg_subtitle_open(FILE *f, double y);
void mp_svg_note(FILE *f, double x, double y, const char *anchor, const char *msg);
/* A "no data" box filling the plot area. */
void mp_svg_no_data(FILE *f, double x0, double y0, double w, double h, const char *msg);
/* Horizontal gridlines and y labels for bytes [0, top] by step. */
void mp_svg_y_axis_bytes(FILE *f, double l, double r, double t, double ph, uint64_t top,
                         uint64_t step, const char *title);
uint64_t mp_svg_round_up(uint64_t v, uint64_t step);
/* A legend entry: swatch (square or line) and label; returns the x after it. */
double mp_svg_legend_item(FILE *f, double x, double y, const char *color, bool line,
                          const char *dash, const char *label);

#endif
