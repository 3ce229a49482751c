/* The JSON of memprof check (format memprof-check, docs/json.md): the figures now, every
 * check with its bytes, the heap peak's parts, and what changed against the baseline. */
#ifndef MP_JSON_GATE_H
#define MP_JSON_GATE_H

#include <stdio.h>

#include "analyzers/baseline.h"
#include "analyzers/gate.h"
#include "trace/status.h"

#define MP_CHECK_FORMAT "memprof-check"
/* 2: figure "peak" renamed "tensors"; rss, variable and the training categories; the heap
 * figure's parts (run_heap_peak_bytes, model_heap_bytes) */
#define MP_CHECK_VERSION 2

/* Write it to f; baseline_path NULL without a baseline. */
mp_status mp_report_gate_json(FILE *f, const char *subject, const mp_baseline *now,
                              const mp_gate_options *o, const char *baseline_path,
                              const mp_gate_result *r, mp_error *err);

#endif
