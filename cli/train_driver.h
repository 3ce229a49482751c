/* The driver of memprof train: opens the model, builds the trainer, makes the data set (the
 * caller's files, or a synthetic task whose labels come from a fixed teacher), runs the steps,
 * measures them, writes the trained model and the trace. */
#ifndef MP_TRAIN_DRIVER_H
#define MP_TRAIN_DRIVER_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/train/train.h"
#include "trace/status.h"

#define MP_TRAIN_MAX_INPUTS 16

typedef struct mp_train_args {
    const char *model;
    const char *out;            /* -o: the trained .tflite */
    const char *trace;          /* --trace FILE */
    const char *inputs[MP_TRAIN_MAX_INPUTS]; /* NAME=FILE */
    int n_inputs;
    const char *labels;         /* --labels FILE */
    long batch, epochs, steps, samples, trainable_ops, threads;
    double learning_rate;       /* < 0: the optimizer's default */
    int optimizer, loss, policy; /* loss -1: CCE when the model ends in SOFTMAX, else MSE */
    const char *planner;
    bool memory_only;           /* --memory-only: the table without training */
    bool exact;
    bool json;                  /* --format json: the report as JSON on stdout */
    struct mp_progress *progress; /* its line after each step (bench_stats.h; NULL: none) */
} mp_train_args;

typedef struct mp_train_run {
    mp_train_memory mem;
    int64_t samples, steps_done, epochs_done;
    double loss_before, loss_after; /* on the first batch, before and after training */
    double *epoch_loss;         /* mean loss of each epoch (malloc'd) */
    int64_t n_epoch_loss;
    double step_ms;             /* median time of a training step */
    double forward_ms;          /* median time of the forward alone (eval) */
    char lb_step[64];           /* the name of the step where the lower bound is reached */
    uint64_t heap_peak;         /* the engine's heap peak (all kinds) */
    uint64_t kind_peak[MP_TCAT_COUNT]; /* each category's own peak, as measured */
    bool synthetic;
    int loss;                   /* the loss used (auto resolved) */
} mp_train_run;

mp_status mp_train_drive(const mp_train_args *a, mp_train_run *r, mp_error *err);
void mp_train_run_free(mp_train_run *r);

#endif
