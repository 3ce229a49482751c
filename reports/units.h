/* Human units for reports: bytes as B / KiB / MiB / GiB / TiB and durations as ns / us / ms / s,
 * with one decimal; and the line output of the text reports (80 columns, names from model
 * files made safe). Shared by every report format that prints for people. */
#ifndef MP_UNITS_H
#define MP_UNITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

/* "[1,224,224,3]" (rank 0: "[]"). */
const char *mp_fmt_dims(char *buf, size_t n, int32_t rank, const int32_t *dims);

/* "512 B", "1.5 KiB", "12.3 MiB" (the unit is chosen so that the number stays below 1024
 * after rounding). Writes at most n bytes (n >= 16 always suffices) and returns buf. */
const char *mp_fmt_bytes(char *buf, size_t n, uint64_t bytes);
/* The same for a signed amount: "-1.5 KiB". */
const char *mp_fmt_sbytes(char *buf, size_t n, int64_t bytes);
/* "850 ns", "12.5 us", "3.2 ms", "1.5 s". Returns buf. */
const char *mp_fmt_ns(char *buf, size_t n, uint64_t ns);
/* The unit of a table of times whose shortest typical time (a run's median) is fastest_ns:
 * "ms", or "us" under 0.1 ms so that runs of microseconds do not print as 0.000; *div turns
 * nanoseconds into it. */
const char *mp_time_unit(double fastest_ns, double *div);

/* "1.2 MiB", or with exact "1.2 MiB (1258291 B)" (exact below 1 KiB adds nothing). */
const char *mp_fmt_bytes_x(char *buf, size_t n, uint64_t bytes, bool exact);

/* A table cell of bytes: "1.5 KiB", or with exact the count alone: "1536". */
const char *mp_fmt_cell(char *buf, size_t n, uint64_t bytes, bool exact);
/* The change from a to b: "+1.5 KiB", "-3 B", "0 B" (exact: "+1536 B"). */
const char *mp_fmt_change(char *buf, size_t n, uint64_t a, uint64_t b, bool exact);

/* ---- text reports ----------------------------------------------------------------------- */

#define MP_TEXT_COLS 80

/* Copy src into dst (size n) keeping at most max_cols columns (code points): a longer text
 * ends with "...". Control characters become '?'. NULL prints as "?". */
void mp_text_fit(char *dst, size_t n, const char *src, size_t max_cols);
/* Like mp_text_fit, but a longer text loses its middle: its first third, "...", then its
 * end (a path keeps its file name, a tensor name its last part). */
void mp_text_fit_middle(char *dst, size_t n, const char *src, size_t max_cols);
/* Print a report's title "WHAT: SUBJECT" (for example "memprof bench: model.tflite")
 * within MP_TEXT_COLS columns, a long subject (a path) losing its middle. */
void mp_text_title(FILE *f, const char *what, const char *subject);
/* Print one line (printf-style): control characters replaced, cut at MP_TEXT_COLS columns,
 * trailing spaces dropped, then a newline. */
void mp_text_line(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Labels people read: "shape change", "input/output" for phases; "static"... for kinds. */
const char *mp_phase_label(int kind);
const char *mp_kind_label(int kind);

#endif
