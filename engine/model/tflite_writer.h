/* A small .tflite writer: a FlatBuffers serializer of our own, specialised to the TensorFlow
 * Lite schema (Model version 3, file identifier "TFL3"), one subgraph or several.
 *
 * Use: create a writer, add constant buffers, tensors and operators (in execution order),
 * name the subgraph inputs and outputs, then finish to get the file bytes:
 *
 *     mp_tfw *w = mp_tfw_create();
 *     int b = mp_tfw_buffer(w, weights, sizeof weights);
 *     int x = mp_tfw_tensor(w, "input", MP_DT_FLOAT32, 4, (int32_t[]){1, 8, 8, 3}, 0, NULL);
 *     ...
 *     mp_tfw_op(w, MP_OP_CONV_2D, 3, (int32_t[]){x, wt, bias}, 1, &y, &opt);
 *     mp_tfw_io(w, 1, &x, 1, &y);
 *     mp_status st = mp_tfw_finish(w, &bytes, &size, &err);   // bytes: free() them
 *     mp_tfw_free(w);
 *
 * A model of several subgraphs (WHILE, IF and CALL_ONCE call them by index) is collected one
 * subgraph at a time: mp_tfw_subgraph ends the one being collected and starts the next;
 * tensors, operators and io lists are the current subgraph's (tensor indices are its own),
 * buffers and operator codes are shared.
 *
 * Adding functions return the new index (>= 0), or -1 on a bad argument or out of memory;
 * the first such fault is remembered and reported by mp_tfw_finish, so callers may check
 * only at the end. All memory is plain malloc/free: this is a build-time tool, not part of
 * the engine's measured runtime.
 *
 * Layout of the produced file: root offset and "TFL3" first, then tables in top-down order
 * (every child after its parent, vtables shared between identical tables), constant data
 * last, each buffer's bytes 16-byte aligned within the file. Scalar fields equal to their
 * schema default are omitted, as the standard FlatBuffers builder does. */
#ifndef MP_TFLITE_WRITER_H
#define MP_TFLITE_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "trace/status.h"
#include "engine/model/model.h"

typedef struct mp_tfw mp_tfw;

/* New empty model (buffer 0, the empty sentinel, already present). NULL when out of memory. */
mp_tfw *mp_tfw_create(void);
void mp_tfw_free(mp_tfw *w);

/* Model description string (default "memprof tflite writer"); the current subgraph's name
 * (default "main"). */
void mp_tfw_description(mp_tfw *w, const char *text);
void mp_tfw_subgraph_name(mp_tfw *w, const char *name);

/* End the subgraph being collected (it must have tensors) and start subgraph k + 1, named
 * `name`; returns its index (>= 1), or -1. */
int mp_tfw_subgraph(mp_tfw *w, const char *name);

/* Add a constant buffer holding a copy of `bytes` bytes of `data`; returns its index (>= 1). */
int mp_tfw_buffer(mp_tfw *w, const void *data, size_t bytes);

/* Add a tensor; returns its index. `buffer` 0 means no constant data; otherwise the buffer's
 * size must equal the shape's element count times the dtype size (when the dtype has a fixed
 * size). `signature` (rank entries, -1 = dynamic) is written as shape_signature when non-NULL. */
int mp_tfw_tensor(mp_tfw *w, const char *name, mp_dtype dtype, int rank, const int32_t *dims,
                  int buffer, const int32_t *signature);

/* Attach quantization parameters to a tensor: `count` scales (1 = per tensor), zero points
 * (NULL = all zero) and the quantized dimension. Returns the tensor index. */
int mp_tfw_tensor_quant(mp_tfw *w, int tensor, int count, const float *scale,
                        const int64_t *zero_point, int quantized_dimension);

/* One level of a sparse tensor's SparsityParameters (TensorFlow Lite's DimensionMetadata):
 * DENSE with dense_size positions, or SPARSE_CSR with its segments and indices written as an
 * Int32Vector, Uint16Vector or Uint8Vector (index_bits 32, 16 or 8; values cut to that width). */
typedef struct mp_tfw_sparse_dim {
    int sparse;                /* 0 DENSE, 1 SPARSE_CSR (another value is written as it is) */
    int32_t dense_size;
    int index_bits;
    int n_segments, n_indices;
    const int32_t *segments, *indices;
} mp_tfw_sparse_dim;

typedef struct mp_tfw_sparsity {
    int n_order, n_block_map, n_dims; /* block_map is written only when n_block_map > 0 */
    const int32_t *traversal_order, *block_map;
    const mp_tfw_sparse_dim *dims;
} mp_tfw_sparsity;

/* Make a tensor added with buffer 0 sparse: SparsityParameters `s` (copied) and the buffer of
 * its stored values, both written as given, unchecked, so tests can write faults too (the
 * reader verifies them). Returns the tensor index. */
int mp_tfw_tensor_sparsity(mp_tfw *w, int tensor, int buffer, const mp_tfw_sparsity *s);

/* Add an operator (builtin code from ops.h, version 1) after those already added; returns its
 * index. Input indices may be -1 (optional input omitted). The builtin options table that the
 * schema defines for `opcode` is written from `opt` (NULL: all defaults, see
 * mp_tfw_options_default); operators without an options table get none. BUCKETIZE's
 * boundaries are read from opt->boundaries by mp_tfw_finish: keep them until then.
 * VAR_HANDLE's container and shared_name are copied at once (NULL: not written). The
 * StableHLO operators' builtin_options_2 table is written from opt->shlo (NULL: all defaults)
 * and, for STABLEHLO_COMPOSITE, opt->subgraph_a (the decomposition), unchecked so tests can
 * write faults: keep opt->shlo (and its name and branches) until mp_tfw_finish. */
int mp_tfw_op(mp_tfw *w, int opcode, int n_in, const int32_t *ins, int n_out, const int32_t *outs,
              const mp_op_options *opt);

/* Add a CUSTOM operator: operator code CUSTOM with `custom_code` (one code table entry per
 * custom code), and `size` bytes of raw custom_options (FLEXBUFFERS; none when size is 0)
 * written as they are. Returns its index, as mp_tfw_op. */
int mp_tfw_custom_op(mp_tfw *w, const char *custom_code, const void *options, size_t size,
                     int n_in, const int32_t *ins, int n_out, const int32_t *outs);

/* Give operator `op` (of the current subgraph) the intermediate tensors tensors[0..n) (an
 * integer LSTM's gate and hidden-state quantization), replacing any earlier list. Returns
 * op, or -1. */
int mp_tfw_op_intermediates(mp_tfw *w, int op, int n, const int32_t *tensors);

/* Options with schema defaults: dilations 1, depth_multiplier 1, CAST types absent (-1),
 * SHAPE out_type INT32, everything else 0/false. */
mp_op_options mp_tfw_options_default(void);

/* Flag a tensor is_variable (state an operator keeps across runs). Returns its index. */
int mp_tfw_tensor_variable(mp_tfw *w, int tensor);

/* Set the subgraph inputs and outputs (replacing any earlier call). Returns 0, or -1. */
int mp_tfw_io(mp_tfw *w, int n_in, const int32_t *ins, int n_out, const int32_t *outs);

/* Serialize. On success *bytes (malloc'd, free() it) and *size hold the file. Errors:
 * MP_ERR_ARG (an earlier call failed, or indices out of range; the message says which),
 * MP_ERR_NOMEM. The writer stays usable (finish may be called again). */
mp_status mp_tfw_finish(mp_tfw *w, void **bytes, size_t *size, mp_error *err);

/* Schema BuiltinOptions union type the writer uses for an operator (0 = NONE). */
int mp_tfw_options_type(int opcode);
/* Schema BuiltinOptions2 union type the writer uses for an operator (0 = NONE). */
int mp_tfw_options2_type(int opcode);

#endif
