/* A small harness for kernel tests: build one operator node by hand (tensors with shapes,
 * dtypes, optional constant data, options), then infer / allocate outputs / prepare / run it
 * the way the session does, so each kernel can be checked against a plain reference. */
#ifndef MP_KERNEL_HARNESS_H
#define MP_KERNEL_HARNESS_H

#include "engine/kernels/kernel.h"
#include "engine/session.h"

#define KH_MAX_TENSORS 64 /* BIDIRECTIONAL_SEQUENCE_LSTM: 48 inputs and 2 outputs */

typedef struct kh_case {
    mp_node node;
    mp_op_options opt;
    mp_tensor tensors[KH_MAX_TENSORS];
    mp_tensor_info infos[KH_MAX_TENSORS];
    mp_tensor *in[KH_MAX_TENSORS], *out[KH_MAX_TENSORS];
    int n_tensors;
    mp_mem *mem;
    mp_error err;
    const mp_kernel *kernel;
} kh_case;

/* Start a case for a builtin operator (options zeroed, then schema defaults: dilation 1,
 * stride 1, beta 1, out_type INT32, in/out_data_type -1). pool may be NULL. */
void kh_init(kh_case *c, int32_t opcode, pthreadpool_t pool);
/* Add an input. data != NULL makes it constant (value known, data used in place);
 * data == NULL allocates a zeroed buffer the test fills through ->data.
 * Pass NULL dims for rank 0. Returns the tensor. */
mp_tensor *kh_input(kh_case *c, mp_dtype dt, int32_t rank, const int32_t *dims, const void *data);
/* Add an omitted optional input (-1). */
void kh_omit_input(kh_case *c);
/* Add an output of the given dtype (shape comes from infer). */
mp_tensor *kh_output(kh_case *c, mp_dtype dt);
/* Attach per-tensor quantization to a tensor added before (count scales / zero points). */
void kh_quant(kh_case *c, mp_tensor *t, int32_t count, const float *scale, const int64_t *zp,
              int32_t dim);
/* infer, allocate outputs (with XNN_EXTRA_BYTES slack), prepare, run. Returns the first
 * failing status; the message is in c->err.msg. */
mp_status kh_run(kh_case *c);
/* Run again (prepare only when `reprepare`), e.g. after changing input data. */
mp_status kh_rerun(kh_case *c, bool reprepare);
/* ---- helpers shared by the kernel tests ---- */
/* Deterministic pseudo-random float in [-scale, scale) (an LCG; advances *seed). */
float kh_frand(uint32_t *seed, float scale);
/* A pseudo-random index in [0, n) drawn with kh_frand. */
int32_t kh_irand(uint32_t *seed, int32_t n);
/* Flat (row-major) index of the multi-index idx in dims; kh_next steps idx to the next one,
 * back to all zeros after the last. For references written from an operator's definition. */
size_t kh_flat(int32_t rank, const int32_t *dims, const int32_t *idx);
void kh_next(int32_t rank, const int32_t *dims, int32_t *idx);
/* Fill n floats with kh_frand from `seed`. */
void kh_fill(float *x, size_t n, uint32_t seed, float scale);
/* Fill a tensor's bytes with a deterministic pattern (for dtype-agnostic data movement). */
void kh_fill_bytes(mp_tensor *t, unsigned seed);
/* NumPy broadcasting written out for references: the flat index in t of the element that
 * output position `flat` (of shape out_rank / out_dims) reads, t's dimensions aligned to the
 * trailing ones and each of extent 1 repeated. */
size_t kh_bc_offset(const mp_tensor *t, int32_t out_rank, const int32_t *out_dims, size_t flat);
/* Reference fused activation, written from the TFLite definitions. */
double kh_ref_act(double x, int act);
/* Convolutions and pools, restated from TensorFlow Lite: the output size of one dimension
 * (SAME: ceil(in / stride); VALID: (in - effective window) / stride + 1, the window
 * (k - 1) * dil + 1), and SAME's padding before it (the smaller half of the total
 * (out - 1) * stride + window - in, at least 0; 0 for VALID). */
int32_t kh_conv_out_size(int32_t in, int32_t k, int32_t stride, int32_t dil, int32_t padding);
int32_t kh_conv_pad_before(int32_t in, int32_t k, int32_t stride, int32_t dil, int32_t padding);
/* TensorFlow Lite's CalculateActivationRangeQuantized, restated: the quantized 0 and 6 (or -1
 * and 1) as zp + round(v / scale), clamped to the dtype's range [qmin, qmax]. */
void kh_q_act_range(int act, float scale, int32_t zp, int32_t qmin, int32_t qmax, int32_t *lo,
                    int32_t *hi);
/* Fail unless every |got-want| / max(|want|, lo) <= 1e-5. Pass lo ~ sqrt(terms summed) so
 * that cancellation in long sums (which XNNPACK reorders) is judged fairly. */
void kh_expect_close(const float *got, const float *want, size_t n, double lo);
/* Fail with the kernel's message unless st is MP_OK. */
void kh_expect_ok(kh_case *c, mp_status st);
/* Fail unless got == want and the message mentions `needle` (NULL: any message). */
void kh_expect_fail(kh_case *c, mp_status got, mp_status want, const char *needle);
/* Run the case and expect status `want` with a message mentioning needle (NULL: any). */
void kh_expect_error(kh_case *c, mp_status want, const char *needle);

/* A session of `mode` over the model bytes (freed here), loaded as `label` and prepared;
 * fails the test with the session's message otherwise. (Writer-built model tests.) */
struct mp_session *kh_session(int mode, void *bytes, size_t size, const char *label);
/* A writer-built model run in one memory mode: fills out[i] with a malloc'd copy of output i
 * and sizes[i] with its bytes. */
typedef void (*kh_model_run)(mp_memory_mode mode, void **out, size_t *sizes);
/* Run the model in static and in dynamic mode and fail unless each of its n (<= 16) outputs
 * has the same bytes in both; frees the copies. */
void kh_expect_modes_equal(kh_model_run run, int n);
/* A kh_model_run of a one-input model: kh_session over the bytes (freed), input 0 set to the
 * in_bytes at in, one run, out[0] / sizes[0] a malloc'd copy of output 0 and its bytes. */
void kh_run_single_input(int mode, void *bytes, size_t size, const char *label, const void *in,
                         size_t in_bytes, void **out, size_t *sizes);
/* The same with the first n_out outputs copied into out[i] / sizes[i]. */
void kh_run_single_input_n(int mode, void *bytes, size_t size, const char *label,
                           const void *in, size_t in_bytes, int n_out, void **out, size_t *sizes);

/* TensorFlow Lite's string layout (int32 count, count + 1 offsets, the bytes) of the n strings
 * s into buf (cap bytes); returns its size. kh_expect_strings fails unless the `bytes` at data
 * are exactly that layout of the n strings want. (Text and hash-table tests.) */
size_t kh_pack_strings(uint8_t *buf, size_t cap, int n, const char *const *s);
void kh_expect_strings(const void *data, size_t bytes, int n, const char *const *want);

/* Release kernel state and all buffers; asserts every byte allocated was freed. */
void kh_free(kh_case *c);

#endif
