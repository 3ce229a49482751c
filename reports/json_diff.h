/* The JSON of memprof diff when a baseline is on a side (format memprof-baseline-diff,
 * docs/json.md): each side's identity, every figure memprof check compares and every tensor
 * whose bytes changed, as on the text page (reports/text_gate.h). Two traces compared are
 * json_profile.h's memprof-diff. */
#ifndef MP_JSON_DIFF_H
#define MP_JSON_DIFF_H

#include <stdbool.h>
#include <stdio.h>

#include "analyzers/baseline.h"
#include "analyzers/gate.h"
#include "trace/status.h"

#define MP_BASELINE_DIFF_FORMAT "memprof-baseline-diff"
/* 2: figure "peak" named "tensors"; rss, variable and the training categories */
#define MP_BASELINE_DIFF_VERSION 2

/* One side: the file as given, and whether it was a trace (else a baseline file). */
typedef struct mp_diff_side {
    const char *path;
    bool trace;
    const mp_baseline *base;
} mp_diff_side;

/* Write a (before) against b (after) to f; MP_ERR_IO when it cannot be written. */
mp_status mp_report_baseline_diff_json(FILE *f, const mp_diff_side *a, const mp_diff_side *b,
                                       const mp_baseline_diff *d, mp_error *err);

#endif
