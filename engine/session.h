/* The public call sequence of the engine (after Samsung ONE's nnfw API):
 *
 *   mp_session_create -> mp_session_load -> [mp_session_set_input_shape]* -> mp_session_prepare
 *   -> ([mp_session_set_input_shape]* [mp_session_set_input/_output] mp_session_run)* -> destroy
 *
 * prepare infers every shape, creates every operator once and gives every tensor storage;
 * a run after a shape change infers again and sets up only what changed. */
#ifndef MP_SESSION_H
#define MP_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph/tensor.h"
#include "memory/mem.h"
#include "model/model.h"
#include "status.h"

typedef struct mp_session mp_session;

typedef struct mp_session_options {
    int threads;             /* 1 = no thread pool */
    size_t max_tensor_bytes; /* refuse a tensor larger than this (0 = MP_DEFAULT_MAX_TENSOR) */
} mp_session_options;

/* A model asking for a bigger tensor is refused with MP_ERR_SHAPE instead of exhausting memory. */
#define MP_DEFAULT_MAX_TENSOR ((size_t)4 << 30)

mp_status mp_session_create(const mp_session_options *opt, mp_session **out, mp_error *err);
void mp_session_destroy(mp_session *s);

/* Load a model: a path, or "zoo:NAME" for a built-in model. The session owns it. */
mp_status mp_session_load(mp_session *s, const char *path, mp_error *err);
/* Load from bytes already in memory (copied once). */
mp_status mp_session_load_memory(mp_session *s, const void *bytes, size_t size, const char *label,
                                 mp_error *err);

/* Change the shape of input number `input` (subgraph input order). Dimensions must agree
 * with the shape signature (-1 = free). Legal before or after prepare. */
mp_status mp_session_set_input_shape(mp_session *s, int input, int32_t rank, const int32_t *dims,
                                     mp_error *err);
mp_status mp_session_prepare(mp_session *s, mp_error *err);
/* Copy caller data into input `input` (bytes must equal the input's current size). */
mp_status mp_session_set_input(mp_session *s, int input, const void *data, size_t bytes,
                               mp_error *err);
mp_status mp_session_run(mp_session *s, mp_error *err);

const mp_model *mp_session_model(const mp_session *s);
int mp_session_input_count(const mp_session *s);
int mp_session_output_count(const mp_session *s);
/* Runtime view of input/output i (current shape, data after a run). */
const mp_tensor *mp_session_input(const mp_session *s, int i);
const mp_tensor *mp_session_output(const mp_session *s, int i);
const mp_tensor *mp_session_tensor(const mp_session *s, int32_t index);
/* Find an input by name or decimal index; -1 when none. */
int mp_session_find_input(const mp_session *s, const char *name_or_index);

mp_mem *mp_session_mem(mp_session *s);

#endif
