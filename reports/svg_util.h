/* Helpers shared by the picture renderers (svg_charts.c, html_report.c, chrome_trace.c): the
 * one place that escapes text for XML, HTML and JSON, decodes UTF-8 tolerantly, holds the
 * colour palette (Okabe-Ito, safe for colour-blind readers) and picks axis ticks in human
 * units. */
#ifndef MP_SVG_UTIL_H
#define MP_SVG_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The font stack of every chart and of the HTML report: the system's sans-serif. */
#define MP_SVG_FONT \
    "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"

/* Decode one UTF-8 character at s (s[0] != 0): store it in *cp and return the bytes it
 * takes. A byte that does not start a complete, valid, shortest-form sequence (stray
 * continuation, truncated, overlong, surrogate, beyond U+10FFFF) takes 1 byte and decodes
 * as U+FFFD. Never reads past a NUL. */
size_t mp_utf8_next(const char *s, uint32_t *cp);

/* Write s as XML / HTML text or attribute value: & < > " ' as character references,
 * control characters (C0 including tab and newline, DEL, C1), U+FFFE / U+FFFF and invalid
 * UTF-8 as U+FFFD. At most max_chars characters (0 = no limit): a longer text is cut and
 * ends with an ellipsis (U+2026), within max_chars. NULL writes nothing. */
void mp_xml_text(FILE *f, const char *s, size_t max_chars);

/* The same for JSON string contents (no quotes written): " \ and control characters
 * escaped, invalid UTF-8 and U+FFFE / U+FFFF as \ufffd. NULL writes nothing. */
void mp_json_text(FILE *f, const char *s);

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
