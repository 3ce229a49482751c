/* The report of memprof train: the run (data, loss per epoch, step time and throughput) and
 * the training memory by category, held against planned, beside the step's live-set lower
 * bound. Plain figures in, text or JSON (format memprof-train, docs/json.md) out: the
 * command fills the struct from the engine's. */
#ifndef MP_TRAIN_REPORT_H
#define MP_TRAIN_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "trace/status.h"

#define MP_TRAIN_FORMAT "memprof-train"
#define MP_TRAIN_VERSION 1

#define MP_TRAIN_REPORT_CATS 7

typedef struct mp_train_report {
    const char *model, *policy, *planner, *loss, *optimizer;
    double learning_rate;
    int64_t batch, trainable_ops, n_forward, n_backward;
    bool trained;               /* false: --memory-only */
    bool synthetic;
    int64_t samples, steps, epochs;
    const double *epoch_loss;
    int64_t n_epoch_loss;
    double loss_before, loss_after;
    double step_ms, forward_ms;
    uint64_t step_flops, forward_flops;
    const char *cat_names[MP_TRAIN_REPORT_CATS];
    uint64_t held[MP_TRAIN_REPORT_CATS], alone[MP_TRAIN_REPORT_CATS];
    uint64_t at_bound[MP_TRAIN_REPORT_CATS], measured[MP_TRAIN_REPORT_CATS];
    uint64_t held_total, persistent, arena, lower_bound, planned_total;
    const char *lower_bound_step;
    int64_t n_planned;
    uint64_t heap_peak;
    const char *out;            /* -o, or NULL */
    const char *trace;          /* --trace, or NULL */
} mp_train_report;

void mp_train_report_text(FILE *f, const mp_train_report *r);
/* The same figures as one JSON document (times as integer nanoseconds, bytes as integers
 * named *_bytes); MP_ERR_IO when it cannot be written. */
mp_status mp_train_report_json(FILE *f, const mp_train_report *r, mp_error *err);

#endif
