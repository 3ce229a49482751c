/* The look of the charts (svg_charts.c, html_report.c): the font stack, the colour palette
 * (Okabe-Ito, safe for colour-blind readers) and axis ticks in human units. */
#ifndef MP_CHART_STYLE_H
#define MP_CHART_STYLE_H

#include <stddef.h>
#include <stdint.h>

/* The font stack of every chart and of the HTML report: the system's sans-serif. */
#define MP_SVG_FONT \
    "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"

/* Colours. Kinds of memory (MP_KIND_*) and memory managers (mp_manager of
 * analyzers/profile.h); out-of-range values get grey. */
const char *mp_svg_kind_color(int kind);
const char *mp_svg_manager_color(int manager);
/* "none", "arena", "dynamic", "own", "io", "const" (the names of mp_manager_name, here so
 * that renderers do not need the profile analyzer linked); "?" out of range. */
const char *mp_svg_manager_label(int manager);
/* A categorical colour for the i-th of many neighbouring shapes (Tableau 10, cycled). */
const char *mp_svg_cycle_color(size_t i);

/* Axis ticks: a "nice" step so that [0, max] gets about `target` ticks (target >= 1; the
 * step is never 0). Counts: 1, 2 or 5 times a power of ten. Bytes: 1, 2, 5, 10, 20, 50,
 * 100, 200 or 500 times a power of 1024 (B, KiB, MiB...), so that labels in that unit are
 * whole numbers. */
uint64_t mp_nice_step(uint64_t max, unsigned target);
uint64_t mp_nice_bytes_step(uint64_t max, unsigned target);
/* A byte tick label: v in the unit of step (the largest power of 1024 not above it), as
 * "0", "512 KiB", "1500 KiB", "2 MiB". Returns buf. */
const char *mp_svg_fmt_tick(char *buf, size_t n, uint64_t v, uint64_t step);

#endif
