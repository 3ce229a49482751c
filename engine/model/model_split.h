/* Model surgery for pipelines: a model cut into consecutive parts, each a valid .tflite file
 * (written with tflite_writer.h), so that any real model can be run as a chain of models
 * (memprof split, memprof pipeline).
 *
 * Part p holds the operators [cut[p-1], cut[p]) in their order. What crosses a cut c is
 * every non-constant tensor made before c (or a model input) and needed from c on (read by
 * a later operator, or a model output): it becomes an output of the part before and an input
 * of the part after, in that order on both sides (tensor index order; the first part's
 * inputs are the model's inputs and the last part's outputs the model's outputs, in their
 * order), so that connecting the parts' outputs to the next parts' inputs by position
 * rebuilds the model. A tensor made before a part and needed after it passes through it (an
 * input and an output of it). Constants a part reads are copied into it (duplicated when
 * several parts read them); names, shapes, shape signatures and quantization are kept, so
 * that the parts run as a chain give the whole model's outputs bit for bit. */
#ifndef MP_MODEL_SPLIT_H
#define MP_MODEL_SPLIT_H

#include <stddef.h>
#include <stdint.h>

#include "engine/model/model.h"
#include "trace/status.h"

#define MP_SPLIT_MAX_PARTS 64

typedef struct mp_split_part {
    void *bytes;        /* the .tflite file (malloc'd) */
    size_t size;
    int32_t first_op, n_ops;        /* its operators in the whole model */
    int32_t n_inputs, n_outputs;    /* tensors it takes and gives */
} mp_split_part;

/* Cut m before each operator of cuts[0..n_cuts) (strictly increasing, 1..n_ops-1) into
 * n_cuts + 1 parts (parts[] has room for them). Errors: MP_ERR_ARG (a cut out of range or
 * not increasing, too many parts), MP_ERR_UNSUPPORTED (an operator the writer cannot write:
 * custom, or with intermediate tensors; a variable tensor used on both sides of a cut),
 * MP_ERR_NOMEM. On failure no part is left allocated. */
mp_status mp_model_split(const mp_model *m, const int32_t *cuts, int n_cuts, mp_split_part *parts,
                         mp_error *err);
void mp_model_split_free(mp_split_part *parts, int n_parts);

#endif
