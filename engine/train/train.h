/* Training: one forward-and-backward step of a float32 TensorFlow Lite model, with every
 * training tensor in one of seven memory categories (after Samsung ONE's training backend).
 *
 *   mp_trainer_create (model, options) -> [fill mp_trainer_input / mp_trainer_labels]
 *   -> mp_trainer_step ... -> [mp_trainer_write_model] -> mp_trainer_destroy
 *
 * The step is a timeline: the forward operators, the loss, then the backward of the trainable
 * operators (the last K) in reverse order, each followed at once by its optimizer update (so a
 * weight gradient lives within one backward step). Every tensor the step needs gets a category
 * and a first and last step of that timeline; memory is then given by policy:
 *   PLANNED  every non-persistent tensor (activations, back-prop, gradients, extra, disposable)
 *            planned by lifetime into one arena with the engine's planners (engine/memory);
 *            a step allocates nothing;
 *   HELD     each category one block for the session, no sharing (ONE's old behaviour);
 *   DYNAMIC  each tensor allocated at its first step and freed after its last.
 * Trainable weights and optimizer variables persist in every policy. Every block is recorded
 * in the trace with its category as its kind (MP_MEM_TRAIN_*); a planned tensor's PLAN event
 * carries its category too. */
#ifndef MP_TRAIN_H
#define MP_TRAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/memory/mem.h"
#include "engine/model/model.h"
#include "trace/status.h"
#include "trace/trace.h"

/* The categories, in ONE's order. */
typedef enum mp_train_cat {
    MP_TCAT_ACTIVATION = 0, /* forward tensors (non-const), kept for backward where needed */
    MP_TCAT_TRAINABLE,      /* weights and biases of the trainable operators */
    MP_TCAT_BACKPROP,       /* dL/d activation */
    MP_TCAT_GRADIENT,       /* dL/d weight */
    MP_TCAT_OPTIMIZER,      /* optimizer variables (Adam's m and v) */
    MP_TCAT_DISPOSABLE,     /* temporaries within one operator's step (im2col, packed operands) */
    MP_TCAT_EXTRA,          /* per-layer auxiliaries of the backward (ONE: transposed operands;
                               none here: the weight gradient reads its operands in place) */
    MP_TCAT_COUNT
} mp_train_cat;

const char *mp_train_cat_name(int cat);
/* The memory kind a category is recorded with. */
mp_mem_kind mp_train_cat_kind(int cat);

typedef enum mp_loss_kind { MP_LOSS_MSE = 0, MP_LOSS_CCE } mp_loss_kind;
typedef enum mp_optim_kind { MP_OPTIM_SGD = 0, MP_OPTIM_ADAM } mp_optim_kind;
typedef enum mp_train_policy { MP_TRAIN_PLANNED = 0, MP_TRAIN_HELD, MP_TRAIN_DYNAMIC } mp_train_policy;

const char *mp_train_policy_name(int p);

typedef struct mp_train_options {
    int batch;                 /* samples per step (>= 1) */
    int trainable_ops;         /* train the last K operators; 0 = all */
    mp_loss_kind loss;         /* CCE: the model must end in SOFTMAX (fused into the loss) */
    mp_optim_kind optimizer;
    float learning_rate;
    float beta1, beta2, epsilon; /* Adam (0 = 0.9, 0.999, 1e-7) */
    mp_train_policy policy;
    const char *planner;       /* NULL = the default planner */
    int threads;               /* XNNPACK's thread pool (1 = none) */
    mp_trace *trace;           /* NULL = none; the caller owns it */
    /* Tests: gradients are kept after the step (persistent, not applied), and the model
     * inputs get back-prop tensors too. */
    bool keep_grads;
} mp_train_options;

typedef struct mp_trainer mp_trainer;

/* Build the training graph of a float32 model (the caller keeps the model alive for the
 * trainer's life; constants of non-trainable operators are used in place). Errors name the
 * operator: MP_ERR_UNSUPPORTED (operator, dtype, fused activation, broadcast), MP_ERR_SHAPE,
 * MP_ERR_ARG (options), MP_ERR_NOMEM, MP_ERR_BACKEND. */
mp_status mp_trainer_create(const mp_model *m, const char *label, const mp_train_options *opt,
                            mp_trainer **out, mp_error *err);
void mp_trainer_destroy(mp_trainer *t);

/* The step's batch of input i (subgraph order) and of the labels (batch x the model output's
 * elements): writable, floats; valid for the trainer's life. */
float *mp_trainer_input(mp_trainer *t, int i, size_t *n_floats);
float *mp_trainer_labels(mp_trainer *t, size_t *n_floats);

/* One training step on the current input and labels: forward, loss, backward, update. */
mp_status mp_trainer_step(mp_trainer *t, double *loss, mp_error *err);
/* Forward only (the model's output for the current input, loss against the labels). */
mp_status mp_trainer_eval(mp_trainer *t, double *loss, mp_error *err);
/* The model output of the last step or eval (batch x elements). */
const float *mp_trainer_output(const mp_trainer *t, size_t *n_floats);

/* Tests: the current value of model tensor `tensor` (a weight or an activation, NULL when
 * it has no storage now), and its gradient or back-prop (keep_grads only; else NULL). */
const float *mp_trainer_value(const mp_trainer *t, int32_t tensor, size_t *n_floats);
const float *mp_trainer_grad(const mp_trainer *t, int32_t tensor, size_t *n_floats);

/* Replace the weights of the last trainable FULLY_CONNECTED or CONV_2D operator by
 * deterministic pseudo-random values (seed) of the same scale; returns false if none. For
 * a synthetic task's teacher. mp_trainer_restore_weights puts the originals back. */
bool mp_trainer_perturb_last(mp_trainer *t, uint32_t seed);
void mp_trainer_restore_weights(mp_trainer *t);

/* The memory of the step, by category (bytes; alignment included). */
typedef struct mp_train_memory {
    uint64_t held[MP_TCAT_COUNT];     /* each category whole: every tensor's bytes summed */
    uint64_t alone[MP_TCAT_COUNT];    /* each category planned on its own (ONE's "after"):
                                         persistent ones as held */
    uint64_t at_bound[MP_TCAT_COUNT]; /* bytes of each category alive at the step where the
                                         live set is largest (persistent ones as held) */
    uint64_t held_total;              /* sum of held[] */
    uint64_t persistent;              /* trainable + optimizer (+ gradients with keep_grads) */
    uint64_t arena;                   /* the planned arena (0 when not planned yet) */
    uint64_t lower_bound;             /* live-set lower bound of the planned tensors */
    int32_t lower_bound_step;         /* a step where it is reached */
    uint64_t planned_total;           /* persistent + arena */
    int32_t n_planned;                /* tensors in the arena */
    int32_t n_steps;                  /* forward + loss + backward steps */
    int32_t n_forward, n_backward;
    const char *planner;              /* the planner used */
    uint64_t step_flops;              /* floating-point operations of one step (2 x MACs) */
    uint64_t forward_flops;           /* of the forward alone */
} mp_train_memory;
mp_status mp_trainer_memory(mp_trainer *t, mp_train_memory *out, mp_error *err);

/* A step's name ("FULLY_CONNECTED", "loss", "FULLY_CONNECTED'" for its backward). */
const char *mp_trainer_step_name(const mp_trainer *t, int32_t step, char *buf, size_t n);

/* The trainer's allocator (its running totals per kind). */
mp_mem *mp_trainer_mem(mp_trainer *t);

/* Write the model with its trained weights as .tflite bytes (malloc'd; free() them). */
mp_status mp_trainer_write_model(const mp_trainer *t, void **bytes, size_t *size, mp_error *err);

#endif
