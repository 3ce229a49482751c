/* SVG charts of a profile (analyzers/profile.h): the memory timeline, the tensor lifetime
 * chart and the arena layout, each written as one <svg> element (so that it can be inlined
 * in HTML or stacked into one SVG document), and the standalone documents `memprof report
 * --format svg` and `memprof plan --format svg` write.
 *
 * Layout only: every figure comes from the profile. Output stays bounded whatever the size
 * of the trace or model: the timeline merges points that would share a pixel column
 * (keeping each column's highest-heap moment, so the peak is never averaged away), the
 * lifetime chart and the arena layout draw at most MP_SVG_MAX_SHAPES tensors (the largest,
 * saying how many were left out). Every name is escaped (markup.h). */
#ifndef MP_SVG_CHARTS_H
#define MP_SVG_CHARTS_H

#include <stdio.h>

#include "analyzers/profile.h"
#include "trace/trace.h"

/* Width of every chart, in px (height depends on the content). */
#define MP_SVG_WIDTH 960
/* Most tensor bars (lifetimes) or slot rectangles (arena) drawn in one chart. */
#define MP_SVG_MAX_SHAPES 2000

/* Each chart function writes one <svg> element (with its xmlns) of width MP_SVG_WIDTH at
 * (x, y) (the position matters only when nested in another <svg>) and returns its height
 * in px. f == NULL writes nothing and only returns the height. Shapes carry a class for
 * tests and styling: timeline "heap-outline" (polyline), "peak-line" (line); lifetimes
 * "bar" (rect, one per tensor drawn, its <title> first: name, bytes, manager, offset,
 * operators); arena "slot" (rect per slot, <title> likewise), "lower-bound" and
 * "arena-size" (lines). An empty input draws a "no data" note. */

/* Heap over operator steps (p->by_step; p->by_event when the trace has no steps), stacked
 * by kind of memory, the peak marked, RSS as a dashed line when sampled. */
double mp_svg_timeline(FILE *f, const mp_profile *p, double x, double y);

/* One bar per tensor of the reference run over the operator indices it is alive for,
 * coloured by memory manager, sorted by first operator. Constants are left out (noted). */
double mp_svg_lifetimes(FILE *f, const mp_profile *p, double x, double y);

/* The layout of one planned arena: operator index across, offset up, one rectangle per
 * slot, the lower bound (dashed) and the arena's size, and below it the free bytes per
 * operator (fragmentation). meta (may be NULL) names the operators; ar NULL = no arena. */
double mp_svg_arena(FILE *f, const mp_arena_report *ar, const mp_trace_meta *meta, double x,
                    double y);

/* A standalone SVG document: a title, then the timeline, the lifetimes and the reference
 * arena's layout (or the first arena's) stacked. */
void mp_report_svg(FILE *f, const mp_profile *p);

/* A standalone SVG document of one arena layout, for a plan made without a trace. meta and
 * title may be NULL. */
void mp_svg_arena_document(FILE *f, const mp_arena_report *ar, const mp_trace_meta *meta,
                           const char *title);

#endif
