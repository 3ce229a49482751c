/* The operator (kernel) interface, after XNNPACK's create / setup / run / delete.
 *
 * One mp_kernel per builtin operator. The session calls, per node:
 *   infer   : compute output dtypes and shapes from input shapes (and from input *values*
 *             when they are known at prepare time: constants and shape arithmetic).
 *             Returns MP_ERR_DEFERRED when an output shape needs a value that is only
 *             known while running; the session then calls infer again at run time.
 *             A reason recorded with mp_node_fail before returning it is the run's error
 *             when the shape is still unknown then (READ_VARIABLE: a variable never assigned).
 *   prepare : called after infer whenever shapes or tensor storage changed: create the
 *             backend operator once (weights packed or dequantized once), then bind
 *             shapes and pointers (xnn_setup_*). Not called by a run whose shapes and
 *             pointers did not change.
 *   run     : execute. May not allocate.
 *   release : free node->state (all of it, through the node's mp_mem).
 * Kernels allocate only through mp_mem (kind MP_MEM_KERNEL for what they keep), owner
 * MP_OWNER_OP(node->index). Temporaries a run needs are not allocated by the kernel: infer
 * declares them (mp_node.scratch_bytes) and the session places them with the tensors, so
 * the planner can share their bytes (kind MP_MEM_SCRATCH when not in the arena). Errors name
 * the operator through mp_node_fail(). */
#ifndef MP_KERNEL_H
#define MP_KERNEL_H

#include <pthreadpool.h>
#include <xnnpack.h>

#include "engine/graph/tensor.h"
#include "engine/memory/mem.h"
#include "engine/model/model.h"
#include "trace/status.h"

typedef struct mp_node {
    int32_t index;              /* operator index in execution order */
    int32_t opcode;             /* mp_op_code */
    const mp_op_options *opt;
    int32_t n_in, n_out;
    mp_tensor **in;             /* n_in entries; NULL for an omitted optional input */
    mp_tensor **out;
    void *state;                /* kernel-private, allocated through mem */
    /* Temporaries: infer sets scratch_bytes (0 = none) for the current shapes; the session
     * then provides `scratch` (that many bytes, 64-byte aligned, contents undefined) before
     * prepare and run, as a slot of the arena (static) or a block of its own for the
     * operator's step (dynamic). The pointer may change between prepares. */
    size_t scratch_bytes;
    void *scratch;
    mp_mem *mem;
    pthreadpool_t pool;         /* NULL = single-threaded */
    mp_error *err;
    const char *model_path;     /* for messages */
    struct mp_session *session; /* the session running the node: WHILE and IF run the
                                   subgraphs they call through it (engine/session_call.h) */
    /* The operator's intermediate tensors (integer LSTMs: the quantization of their gates
     * and hidden state): n_inter indices into tensor_infos, the model's tensors. */
    int32_t n_inter;
    const int32_t *inter;
    const mp_tensor_info *tensor_infos;
} mp_node;

typedef struct mp_kernel {
    int32_t opcode;
    /* Inputs that may be -1 (omitted) in the model: bit i set = input i optional. */
    uint32_t optional_inputs;
    /* run() reads only the shapes of its inputs, never their data (SHAPE): its output
     * value is known at prepare as soon as the input shapes are. */
    bool reads_shapes_only;
    /* n_outputs: exactly that many; -1 = one or more, the kernel checks how many (SPLIT). */
    int32_t min_inputs, max_inputs, n_outputs;
    mp_status (*infer)(mp_node *n);
    mp_status (*prepare)(mp_node *n); /* NULL: nothing to create or bind */
    mp_status (*run)(mp_node *n);
    void (*release)(mp_node *n);      /* NULL: the kernel keeps no state */
} mp_kernel;

/* The kernel for a builtin code, or NULL when memprof does not run that operator. */
const mp_kernel *mp_kernel_find(int32_t opcode);
/* The operator's run reads or writes state outside its tensors (READ_VARIABLE, ASSIGN_VARIABLE,
 * CALL_ONCE: resource.c; HASHTABLE_IMPORT, _FIND, _SIZE: hashtable.c): never evaluated at prepare, even on known inputs; it runs in every
 * run. */
bool mp_op_stateful(int32_t opcode);

/* Error naming the operator: "<model>: operator #12 CONV_2D: <message>". */
mp_status mp_node_fail(mp_node *n, mp_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Name of a tensor for messages ("?" when unnamed or NULL). */
const char *mp_tname(const mp_tensor *t);
/* Between min_in and max_in inputs, each present unless its bit is set in `optional`, and
 * exactly one output; otherwise MP_ERR_FORMAT naming the operator. */
mp_status mp_node_check_io(mp_node *n, int32_t min_in, int32_t max_in, uint32_t optional);
/* The output has the input's dtype, which has a fixed element size (MP_ERR_UNSUPPORTED). */
mp_status mp_node_check_same_dtype(mp_node *n, const mp_tensor *in, const mp_tensor *out);
/* The same, or input and output both string tensors (the operators that move strings whole:
 * RESHAPE, SQUEEZE, EXPAND_DIMS, SLICE, STRIDED_SLICE). */
mp_status mp_node_check_same_dtype_or_string(mp_node *n, const mp_tensor *in,
                                             const mp_tensor *out);
/* Stable sort of the positions idx[0..count): afterwards before(ctx, idx[i], idx[j]) never
 * holds for i < j (an element goes ahead only when strictly before; a tie keeps the earlier
 * one first). Bottom-up merge sort, no allocation: tmp has count entries. */
void mp_sort_positions(int32_t *idx, int32_t *tmp, size_t count,
                       bool (*before)(const void *ctx, int32_t a, int32_t b), const void *ctx);
/* IoU of two boxes [y1, x1, y2, x2] (two opposite corners, either order), TensorFlow Lite's:
 * 0 when either has no area (detection.c; TFLite_Detection_PostProcess and NMS V4 / V5). */
float mp_box_iou(const float *a, const float *b);
/* Input 0 and output 0 are float32 (MP_ERR_UNSUPPORTED naming the tensor otherwise). */
mp_status mp_node_check_f32_io(mp_node *n);
/* The dtypes of a node with weights (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED) on a float32
 * input: input 1 float32, or int8 / uint8 / float16 (hybrid models, dequantized once); the
 * bias (input 2, when present) float32 or float16; output 0 float32. MP_ERR_UNSUPPORTED naming
 * the tensor otherwise, input 1 as weights_word ("filter", "weights": a word ending in 's' is
 * plural). The quantized counterpart is quant_tensor.h's mp_node_weighted_q. */
mp_status mp_node_check_f32_weighted(mp_node *n, const char *weights_word);
/* int32 or int64: the dtypes of shape, axis and index tensors. */
bool mp_dtype_is_index(mp_dtype dt);
/* Element i of an int32 / int64 tensor, or of an int16 one (GATHER's, GATHER_ND's and
 * TOPK_V2's int16 indices) (memcpy: constants may sit unaligned in the file). */
int64_t mp_tensor_index_at(const mp_tensor *t, size_t i);
/* The position of the first element of integer tensor t equal to 0 (all its bytes zero), or
 * SIZE_MAX when none is: integer divisors are checked with it before a division runs. */
size_t mp_tensor_find_int_zero(const mp_tensor *t);

/* Output range [lo, hi] of a fused activation; false for ones we cannot fuse (TANH,
 * SIGN_BIT) so the caller reports it. */
bool mp_activation_range(int32_t act, float *lo, float *hi);

/* Apply a fused activation in place (for plain-C kernels). */
void mp_apply_activation_f32(float *x, size_t n, int32_t act);
/* Constant t dequantized into f[mp_tensor_elements(t)]: float16 exactly, int8 / uint8 as
 * scale * (q - zero point), per tensor or per channel along quantized_dimension. False (f
 * untouched) for another dtype or quantization parameters that do not fit t. */
bool mp_dequantize_to_f32(const mp_tensor *t, float *f);

/* A constant float32 view of a weight tensor: the data itself when it is float32, or a
 * float32 copy dequantized once (int8/uint8 with per-tensor or per-channel scale along
 * quantized_dimension; float16) allocated as MP_MEM_KERNEL for this node. *owned is set
 * when the caller must mp_mem_free the result. */
mp_status mp_const_as_f32(mp_node *n, const mp_tensor *t, const float **out, void **owned);
/* An IEEE half's bits as float32, exactly (NumericVerify's float16 input). */
float mp_half_to_float(uint16_t h);
/* An IEEE half's bits for f, rounded to nearest even (the FP16 library's
 * fp16_ieee_from_fp32_value): overflow to infinity, a NaN to the quiet NaN 0x7E00 (convert.c;
 * CAST, and the StableHLO elementwise operators on float16). */
uint16_t mp_float_to_half(float f);

/* The node's state: n->state, or a new zeroed block of `size` bytes (kind kernel, owned by
 * the operator) on the first call. NULL after recording MP_ERR_NOMEM with mp_node_fail. */
void *mp_node_state(mp_node *n, size_t size);

/* Give output 0 the shape rank/dims; MP_ERR_SHAPE naming it when the shape cannot be held
 * (too many elements). */
mp_status mp_node_set_output_shape(mp_node *n, int32_t rank, const int32_t *dims);

/* The one mapping of XNNPACK's statuses to the engine's (kernels and peers/ alike): out of
 * memory -> MP_ERR_NOMEM; invalid or unsupported parameters, unsupported hardware ->
 * MP_ERR_UNSUPPORTED (the model asks for what this XNNPACK does not take); anything else
 * (uninitialized, invalid state) -> MP_ERR_BACKEND. And its words for messages. */
mp_status mp_xnn_status(enum xnn_status xs);
const char *mp_xnn_status_text(enum xnn_status xs);
/* The status of an xnn_create_* call that should have set *obj: out of memory when it
 * reported success but set nothing (this XNNPACK, 2022-02, does so when an allocation of
 * xnn_create_runtime_v2 after its operators' creation fails), else xs. */
enum xnn_status mp_xnn_created(enum xnn_status xs, const void *obj);
/* mp_node_fail for a failed XNNPACK call: "XNNPACK <what>: <status text> (status N)" with
 * mp_xnn_status(xs). */
mp_status mp_node_xnn_fail(mp_node *n, enum xnn_status xs, const char *what);

/* Delete an XNNPACK operator (a NULL handle is fine) and clear the handle. */
void mp_xnn_delete(xnn_operator_t *op);
/* The release of a kernel whose state is one mp_mem block holding an XNNPACK operator at
 * *op (NULL when it holds none): delete the operator, free the state, clear n->state.
 * Kernels free their other buffers first. */
void mp_node_free_state(mp_node *n, xnn_operator_t *op);

/* Kernel families register themselves in registry.c by exporting tables: */
extern const mp_kernel mp_kernels_conv[];        /* CONV_2D, DEPTHWISE_CONV_2D */
extern const mp_kernel mp_kernels_fc[];          /* FULLY_CONNECTED */
extern const mp_kernel mp_kernels_pool[];        /* AVERAGE_POOL_2D, MAX_POOL_2D, L2_POOL_2D */
extern const mp_kernel mp_kernels_binary[];      /* ADD, SUB, MUL, DIV, FLOOR_MOD */
extern const mp_kernel mp_kernels_unary[];       /* LOGISTIC, TANH, RELU, RELU6, RELU_N1_TO_1 */
extern const mp_kernel mp_kernels_softmax[];     /* SOFTMAX, LOG_SOFTMAX */
extern const mp_kernel mp_kernels_layout[];      /* RESHAPE, SQUEEZE, EXPAND_DIMS, CONCATENATION, PAD,
                                                    SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND, SPLIT,
                                                    SPLIT_V */
extern const mp_kernel mp_kernels_reduce[];      /* MEAN, SUM, REDUCE_MAX, REDUCE_MIN,
                                                    REDUCE_PROD, REDUCE_ANY, REDUCE_ALL,
                                                    ARG_MAX, ARG_MIN,
                                                    L2_NORMALIZATION */
extern const mp_kernel mp_kernels_resize[];      /* RESIZE_BILINEAR, RESIZE_NEAREST_NEIGHBOR */
extern const mp_kernel mp_kernels_convert[];     /* CAST, DEQUANTIZE, QUANTIZE, DENSIFY */
extern const mp_kernel mp_kernels_shape[];       /* SHAPE, STRIDED_SLICE, SLICE, PACK */
extern const mp_kernel mp_kernels_gather[];      /* GATHER, GATHER_ND */
extern const mp_kernel mp_kernels_movement[];    /* TRANSPOSE, TILE, MIRROR_PAD, UNPACK,
                                                    REVERSE_V2, BROADCAST_TO */
extern const mp_kernel mp_kernels_matmul[];      /* BATCH_MATMUL */
extern const mp_kernel mp_kernels_activation_lut[]; /* HARD_SWISH */
extern const mp_kernel mp_kernels_fill[];        /* ZEROS_LIKE, FILL, RANGE */
extern const mp_kernel mp_kernels_compare[];     /* EQUAL, NOT_EQUAL, LESS(_EQUAL), GREATER(_EQUAL), LOGICAL_*, SELECT(_V2) */
extern const mp_kernel mp_kernels_binary_math[]; /* MAXIMUM, MINIMUM, SQUARED_DIFFERENCE, POW, PRELU,
                                                    FLOOR_DIV, ATAN2, BITWISE_XOR,
                                                    RIGHT_SHIFT, ADD_N */
extern const mp_kernel mp_kernels_unary_math[];  /* ABS, NEG, SQUARE, SQRT, RSQRT, EXP, LOG, LEAKY_RELU, GELU,
                                                    FLOOR, CEIL, ROUND, SIN, COS, ELU,
                                                    SIGN, RELU_0_TO_1 */
extern const mp_kernel mp_kernels_sequence[];    /* CUMSUM, ONE_HOT, TOPK_V2, EMBEDDING_LOOKUP */
extern const mp_kernel mp_kernels_text[];        /* HASHTABLE_LOOKUP, LSH_PROJECTION, SKIP_GRAM,
                                                    EMBEDDING_LOOKUP_SPARSE */
/* farmhash's Fingerprint64 of len bytes (LSH_PROJECTION's hash; text.c). */
uint64_t mp_fingerprint64(const void *data, size_t len);
extern const mp_kernel mp_kernels_hashtable[];   /* HASHTABLE, HASHTABLE_IMPORT, HASHTABLE_FIND,
                                                    HASHTABLE_SIZE */
extern const mp_kernel mp_kernels_normalization[]; /* LOCAL_RESPONSE_NORMALIZATION */
extern const mp_kernel mp_kernels_conv3d[];      /* CONV_3D, CONV_3D_TRANSPOSE */
extern const mp_kernel mp_kernels_lstm[];        /* LSTM, UNIDIRECTIONAL_SEQUENCE_LSTM,
                                                    BIDIRECTIONAL_SEQUENCE_LSTM */
extern const mp_kernel mp_kernels_detection[];   /* TFLite_Detection_PostProcess (custom) */
extern const mp_kernel mp_kernels_audio[];       /* AudioSpectrogram, Mfcc (custom) */
extern const mp_kernel mp_kernels_numeric_verify[]; /* NumericVerify (custom) */
extern const mp_kernel mp_kernels_control_flow[]; /* WHILE, IF, STABLEHLO_COMPOSITE, _CASE */
extern const mp_kernel mp_kernels_resource[];    /* VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE,
                                                    CALL_ONCE */
extern const mp_kernel mp_kernels_transpose_conv[]; /* TRANSPOSE_CONV, Convolution2DTransposeBias */
extern const mp_kernel mp_kernels_space[];       /* DEPTH_TO_SPACE, SPACE_TO_DEPTH */
extern const mp_kernel mp_kernels_nms[];         /* NON_MAX_SUPPRESSION_V4, _V5 */
extern const mp_kernel mp_kernels_signal[];      /* RFFT2D, REAL, IMAG, COMPLEX_ABS */
extern const mp_kernel mp_kernels_fake_quant[];  /* FAKE_QUANT */
extern const mp_kernel mp_kernels_rnn[];         /* RNN, UNIDIRECTIONAL_SEQUENCE_RNN,
                                                    BIDIRECTIONAL_SEQUENCE_RNN */
extern const mp_kernel mp_kernels_svdf[];        /* SVDF */
extern const mp_kernel mp_kernels_indexing[];    /* WHERE, UNIQUE, BUCKETIZE, REVERSE_SEQUENCE,
                                                    MATRIX_DIAG, MATRIX_SET_DIAG, RANK,
                                                    BROADCAST_ARGS */
extern const mp_kernel mp_kernels_scatter[];     /* SCATTER_ND, SPARSE_TO_DENSE,
                                                    DYNAMIC_UPDATE_SLICE */
extern const mp_kernel mp_kernels_segment[];     /* SEGMENT_SUM, UNSORTED_SEGMENT_SUM / _PROD /
                                                    _MAX / _MIN */
extern const mp_kernel mp_kernels_random[];      /* RANDOM_UNIFORM, RANDOM_STANDARD_NORMAL,
                                                    MULTINOMIAL */
extern const mp_kernel mp_kernels_bitcast[];     /* BITCAST */
extern const mp_kernel mp_kernels_pool_argmax[]; /* MaxPoolingWithArgmax2D, MaxUnpooling2D
                                                    (MediaPipe, custom) */
extern const mp_kernel mp_kernels_stablehlo[];   /* STABLEHLO_ADD, _MULTIPLY, _MAXIMUM, _MINIMUM,
                                                    _AND, _SHIFT_LEFT, _PAD, _REDUCE_WINDOW,
                                                    DILATE, REDUCE_WINDOW */
extern const mp_kernel mp_kernels_stablehlo_gather[]; /* STABLEHLO_GATHER, STABLEHLO_SCATTER */
extern const mp_kernel mp_kernels_stablehlo_rng[]; /* STABLEHLO_RNG_BIT_GENERATOR */
/* each table ends with an entry whose opcode is -1 */

#endif
