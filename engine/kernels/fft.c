/* Kernels: the signal operators of audio models (spectrograms), in plain C after TensorFlow
 * Lite's rfft2d.cc, real.cc and complex_support.cc.
 *
 * RFFT2D: the two-dimensional discrete Fourier transform of real input [..., H, W] (float32)
 * over its last two dimensions, with fft_length (int32 [2]: fft_h, fft_w, each >= 1): the
 * input is cropped or zero-padded to fft_h x fft_w, and the output (complex64) is
 * [..., fft_h, fft_w / 2 + 1], the non-negative frequencies of the last dimension:
 *     out[u][v] = sum over y < fft_h, x < fft_w of in[y][x] * exp(-2 pi i (u y / fft_h + v x / fft_w)).
 * Computed in double as TensorFlow Lite's fft2d is (rows, then columns), rounded to float32
 * at the end. Any length runs: a radix-2 FFT for powers of two, a direct DFT otherwise
 * (TensorFlow Lite takes powers of two only), that one below MP_FFT_DFT_LIMIT (its length^2
 * steps per line would otherwise let a crafted model run for hours). fft_length not known
 * before running: deferred.
 * The rows' transforms, the column buffers and the twiddle tables are the operator's scratch.
 * REAL, IMAG: the real and the imaginary part of complex64 (complex128) values, as float32
 * (float64). COMPLEX_ABS: their magnitude, sqrt(re^2 + im^2) without overflow (hypot, as
 * std::abs). */
#include <math.h>
#include <string.h>

#include "engine/kernels/fft.h"
#include "engine/kernels/kernel.h"

/* ---- the one-dimensional transform (fft.h) ------------------------------------------------- */

bool mp_fft_pow2(size_t n)
{
    return n > 0 && (n & (n - 1)) == 0;
}

/* A length that is not a power of two runs as a direct DFT below this. */
#define MP_FFT_DFT_LIMIT 512

void mp_fft_twiddles(double *tw, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        const double a = -2.0 * M_PI * (double)k / (double)n;
        tw[2 * k] = cos(a);
        tw[2 * k + 1] = sin(a);
    }
}

void mp_fft_1d(double *z, size_t n, const double *tw, double *tmp)
{
    if (n <= 1)
        return;
    if (!mp_fft_pow2(n)) {
        for (size_t k = 0; k < n; k++) {
            double re = 0.0, im = 0.0;
            size_t at = 0; /* j * k mod n */
            for (size_t j = 0; j < n; j++) {
                const double wr = tw[2 * at], wi = tw[2 * at + 1];
                re += z[2 * j] * wr - z[2 * j + 1] * wi;
                im += z[2 * j] * wi + z[2 * j + 1] * wr;
                at += k;
                if (at >= n)
                    at -= n;
            }
            tmp[2 * k] = re;
            tmp[2 * k + 1] = im;
        }
        memcpy(z, tmp, 2 * n * sizeof *z);
        return;
    }
    /* bit-reversed order, then log2(n) stages of butterflies */
    for (size_t i = 1, j = 0; i < n; i++) {
        size_t bit = n >> 1;
        for (; j & bit; bit >>= 1)
            j ^= bit;
        j |= bit;
        if (i < j) {
            const double r = z[2 * i], m = z[2 * i + 1];
            z[2 * i] = z[2 * j];
            z[2 * i + 1] = z[2 * j + 1];
            z[2 * j] = r;
            z[2 * j + 1] = m;
        }
    }
    for (size_t len = 2; len <= n; len <<= 1) {
        const size_t half = len / 2, step = n / len;
        for (size_t s = 0; s < n; s += len)
            for (size_t k = 0; k < half; k++) {
                const double wr = tw[2 * k * step], wi = tw[2 * k * step + 1];
                double *a = z + 2 * (s + k), *b = z + 2 * (s + k + half);
                const double br = b[0] * wr - b[1] * wi, bi = b[0] * wi + b[1] * wr;
                b[0] = a[0] - br;
                b[1] = a[1] - bi;
                a[0] += br;
                a[1] += bi;
            }
    }
}

/* ---- RFFT2D ---------------------------------------------------------------------------------- */

/* The scratch of one node, in doubles: the rows' transforms [fft_h][fft_w / 2 + 1] complex,
 * one line of max(fft_h, fft_w) complex and its DFT buffer, the twiddles of both lengths. */
typedef struct rfft_layout {
    size_t fh, fw, wc;      /* fft_h, fft_w, fft_w / 2 + 1 */
    size_t work, line, tmp, tw_h, tw_w, total; /* offsets and total, in doubles */
} rfft_layout;

static bool rfft_add(size_t *at, size_t complex_count, size_t *off)
{
    size_t d;
    *off = *at;
    return !__builtin_mul_overflow(complex_count, (size_t)2, &d) &&
           !__builtin_add_overflow(*at, d, at);
}

/* fft_length checked and the scratch laid out; MP_ERR_DEFERRED when fft_length is unknown. */
static mp_status rfft_plan(mp_node *n, rfft_layout *L)
{
    const mp_tensor *len = n->in[1];
    if (!len->value_known || !len->data)
        return MP_ERR_DEFERRED;
    const int64_t fh = mp_tensor_index_at(len, 0), fw = mp_tensor_index_at(len, 1);
    if (fh < 1 || fw < 1)
        return mp_node_fail(n, MP_ERR_SHAPE, "fft_length [%lld, %lld] of '%s' must be positive",
                            (long long)fh, (long long)fw, mp_tname(len));
    if ((!mp_fft_pow2((size_t)fh) && fh >= MP_FFT_DFT_LIMIT) ||
        (!mp_fft_pow2((size_t)fw) && fw >= MP_FFT_DFT_LIMIT))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "fft_length [%lld, %lld] of '%s': a length "
                            "that is not a power of two must be below %d", (long long)fh,
                            (long long)fw, mp_tname(len), MP_FFT_DFT_LIMIT);
    memset(L, 0, sizeof *L);
    L->fh = (size_t)fh;
    L->fw = (size_t)fw;
    L->wc = L->fw / 2 + 1;
    size_t cells, at = 0;
    const size_t longest = L->fh > L->fw ? L->fh : L->fw;
    if (__builtin_mul_overflow(L->fh, L->wc, &cells) || !rfft_add(&at, cells, &L->work) ||
        !rfft_add(&at, longest, &L->line) || !rfft_add(&at, longest, &L->tmp) ||
        !rfft_add(&at, L->fh, &L->tw_h) || !rfft_add(&at, L->fw, &L->tw_w) ||
        at > SIZE_MAX / sizeof(double))
        return mp_node_fail(n, MP_ERR_SHAPE, "fft_length [%lld, %lld] needs more scratch than "
                            "can be addressed", (long long)fh, (long long)fw);
    L->total = at;
    return MP_OK;
}

static mp_status rfft_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 2, 2, 0);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0], *len = n->in[1];
    mp_tensor *out = n->out[0];
    if (in->dtype != MP_DT_FLOAT32)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "input '%s' has dtype %s (supported: f32)",
                            mp_tname(in), mp_dtype_name(in->dtype));
    if (out->dtype != MP_DT_COMPLEX64)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "output '%s' is %s; expected c64",
                            mp_tname(out), mp_dtype_name(out->dtype));
    if (in->rank < 2)
        return mp_node_fail(n, MP_ERR_SHAPE, "input '%s' has rank %d; needs rank >= 2",
                            mp_tname(in), in->rank);
    if (len->dtype != MP_DT_INT32)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "fft_length '%s' is %s; expected i32",
                            mp_tname(len), mp_dtype_name(len->dtype));
    if (len->rank != 1 || len->dims[0] != 2)
        return mp_node_fail(n, MP_ERR_SHAPE, "fft_length '%s' must be [2] (height, width)",
                            mp_tname(len));
    rfft_layout L;
    if ((st = rfft_plan(n, &L)) != MP_OK)
        return st;
    if (L.fh > INT32_MAX || L.wc > INT32_MAX)
        return mp_node_fail(n, MP_ERR_SHAPE, "fft_length is too large");
    int32_t dims[MP_MAX_RANK];
    memcpy(dims, in->dims, sizeof dims);
    dims[in->rank - 2] = (int32_t)L.fh;
    dims[in->rank - 1] = (int32_t)L.wc;
    if ((st = mp_node_set_output_shape(n, in->rank, dims)) != MP_OK)
        return st;
    n->scratch_bytes = L.total * sizeof(double);
    return MP_OK;
}

static mp_status rfft_run(mp_node *n)
{
    rfft_layout L;
    mp_status st = rfft_plan(n, &L);
    if (st == MP_ERR_DEFERRED)
        return mp_node_fail(n, MP_ERR_ARG, "fft_length '%s' has no value while running",
                            mp_tname(n->in[1]));
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0];
    mp_tensor *out = n->out[0];
    const size_t h = (size_t)in->dims[in->rank - 2], w = (size_t)in->dims[in->rank - 1];
    size_t slices = 1;
    for (int32_t d = 0; d < in->rank - 2; d++)
        slices *= (size_t)in->dims[d];
    if (out->rank != in->rank || (size_t)out->dims[in->rank - 2] != L.fh ||
        (size_t)out->dims[in->rank - 1] != L.wc || mp_tensor_elements(out) != slices * L.fh * L.wc)
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' does not have the inferred shape",
                            mp_tname(out));
    if (!n->scratch || n->scratch_bytes < L.total * sizeof(double))
        return mp_node_fail(n, MP_ERR_ARG, "run without the %zu bytes of scratch infer declared",
                            L.total * sizeof(double));
    double *s = n->scratch;
    double *work = s + L.work, *line = s + L.line, *tmp = s + L.tmp;
    double *tw_h = s + L.tw_h, *tw_w = s + L.tw_w;
    mp_fft_twiddles(tw_h, L.fh);
    mp_fft_twiddles(tw_w, L.fw);
    const size_t rows = h < L.fh ? h : L.fh, cols = w < L.fw ? w : L.fw;
    const float *x = in->data;
    float *y = out->data;
    for (size_t sl = 0; sl < slices; sl++, x += h * w, y += 2 * L.fh * L.wc) {
        /* each row: cropped or zero-padded to fft_w, transformed, its first wc kept */
        for (size_t r = 0; r < L.fh; r++) {
            double *dst = work + 2 * r * L.wc;
            if (r >= rows) {
                memset(dst, 0, 2 * L.wc * sizeof *dst);
                continue;
            }
            memset(line, 0, 2 * L.fw * sizeof *line);
            for (size_t c = 0; c < cols; c++)
                line[2 * c] = x[r * w + c];
            mp_fft_1d(line, L.fw, tw_w, tmp);
            memcpy(dst, line, 2 * L.wc * sizeof *dst);
        }
        /* each kept column: transformed over the rows, rounded into the output */
        for (size_t v = 0; v < L.wc; v++) {
            for (size_t r = 0; r < L.fh; r++) {
                line[2 * r] = work[2 * (r * L.wc + v)];
                line[2 * r + 1] = work[2 * (r * L.wc + v) + 1];
            }
            mp_fft_1d(line, L.fh, tw_h, tmp);
            for (size_t u = 0; u < L.fh; u++) {
                y[2 * (u * L.wc + v)] = (float)line[2 * u];
                y[2 * (u * L.wc + v) + 1] = (float)line[2 * u + 1];
            }
        }
    }
    return MP_OK;
}

/* ---- REAL, IMAG, COMPLEX_ABS ----------------------------------------------------------------- */

static mp_status cplx_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 1, 1, 0);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0], *out = n->out[0];
    if (in->dtype != MP_DT_COMPLEX64 && in->dtype != MP_DT_COMPLEX128)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "input '%s' has dtype %s (supported: c64, "
                            "c128)", mp_tname(in), mp_dtype_name(in->dtype));
    const mp_dtype want = in->dtype == MP_DT_COMPLEX64 ? MP_DT_FLOAT32 : MP_DT_FLOAT64;
    if (out->dtype != want)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "output '%s' is %s; a %s input gives %s",
                            mp_tname(out), mp_dtype_name(out->dtype), mp_dtype_name(in->dtype),
                            mp_dtype_name(want));
    return mp_node_set_output_shape(n, in->rank, in->dims);
}

static mp_status cplx_run(mp_node *n)
{
    const mp_tensor *in = n->in[0];
    const size_t count = mp_tensor_elements(in);
    if (mp_tensor_elements(n->out[0]) != count)
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' does not have the input's shape",
                            mp_tname(n->out[0]));
    const int32_t op = n->opcode;
#define CPLX_LOOP(T, HYPOT)                                                               \
    do {                                                                                  \
        const T *z = in->data;                                                            \
        T *y = n->out[0]->data;                                                           \
        for (size_t i = 0; i < count; i++)                                                \
            y[i] = op == MP_OP_REAL   ? z[2 * i]                                          \
                   : op == MP_OP_IMAG ? z[2 * i + 1]                                      \
                                      : HYPOT(z[2 * i], z[2 * i + 1]);                    \
    } while (0)
    if (in->dtype == MP_DT_COMPLEX64)
        CPLX_LOOP(float, hypotf);
    else
        CPLX_LOOP(double, hypot);
#undef CPLX_LOOP
    return MP_OK;
}

const mp_kernel mp_kernels_signal[] = {
    {.opcode = MP_OP_RFFT2D, .min_inputs = 2, .max_inputs = 2, .n_outputs = 1,
     .infer = rfft_infer, .run = rfft_run},
    {.opcode = MP_OP_REAL, .min_inputs = 1, .max_inputs = 1, .n_outputs = 1,
     .infer = cplx_infer, .run = cplx_run},
    {.opcode = MP_OP_IMAG, .min_inputs = 1, .max_inputs = 1, .n_outputs = 1,
     .infer = cplx_infer, .run = cplx_run},
    {.opcode = MP_OP_COMPLEX_ABS, .min_inputs = 1, .max_inputs = 1, .n_outputs = 1,
     .infer = cplx_infer, .run = cplx_run},
    {.opcode = -1},
};
