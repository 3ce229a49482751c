/* The text of memprof check (the checks, and on failure what grew, by kind of memory and by
 * tensor) and of memprof diff on baselines: lays out mp_gate_result / mp_baseline_diff
 * (analyzers/gate.h) in at most 80 columns, computing nothing. */
#ifndef MP_TEXT_GATE_H
#define MP_TEXT_GATE_H

#include <stdbool.h>
#include <stdio.h>

#include "analyzers/gate.h"

/* Rows of the tensor tables (all rows with exact). */
#define MP_GATE_TENSORS_TOP 10

/* The result of memprof check on `now` (subject: what was checked, a model or trace path;
 * baseline_path: NULL without a baseline). exact: exact byte counts in the tables and every
 * row. */
void mp_report_gate_text(FILE *f, const char *subject, const mp_baseline *now,
                         const mp_gate_options *o, const char *baseline_path,
                         const mp_gate_result *r, bool exact);

/* Two baselines compared (memprof diff): identity, every figure, the tensors that changed. */
void mp_report_baseline_diff_text(FILE *f, const char *name_a, const mp_baseline *a,
                                  const char *name_b, const mp_baseline *b,
                                  const mp_baseline_diff *d, bool exact);

/* "5%", "1.5 MiB" (exact: "1572864 B"). Returns buf. */
const char *mp_fmt_tolerance(char *buf, size_t n, const mp_tolerance *t, bool exact);

#endif
