/* DEPTHWISE_CONV_2D in plain C (dwconv.h), float32 and 8-bit: the filters this XNNPACK has
 * no depthwise microkernel for (float: any window but 3, 4, 9 or 25 taps; int8 / uint8: any
 * but 9 or 25), which it would run as a grouped GEMM of one channel per group.
 *
 * For each output pixel, the taps whose input pixel lies inside (the window clipped at the
 * borders: padding contributes nothing) in the outer loop, the channels contiguous in the
 * inner one: float32 sixty-four channels in four vector accumulators, then sixteen, then one
 * at a time; 8-bit sixteen int32 sums at a time, requantized as TensorFlow Lite's reference
 * kernels do (in integers, bit for bit; XNNPACK's path, in float, is within one unit).
 * The filter [KH,KW,C*M] is read in place. Compiled for AVX-512, AVX2 and baseline x86-64,
 * chosen at load time (target_clones). Rows of the output in tasks on the thread pool. With
 * a depth multiplier M, output channel c*M+m reads input channel c: for M = 2 to 8, blocks of
 * sixteen input channels loaded once per tap and spread over the M output vectors they feed
 * by a lane permutation (DW_MULT_BLOCK, one function per M, 8-bit on the float sums too),
 * the channels left as whole overlapping vectors (dw_tail); other multipliers gather their
 * inputs lane by lane. */
#include "engine/kernels/dwconv.h"

#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "engine/kernels/quant_math.h"

#if defined(__x86_64__) && !defined(__clang__)
/* products and sums fused into one instruction where the processor has it */
#pragma GCC optimize("fp-contract=fast")
#define DW_HOT __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define DW_HOT
#endif

#define DW_MULT_MAX 8 /* the largest depth multiplier with blocks of its own (DW_MULT_BLOCK) */
#define DW_V 16       /* lanes of a vector */

static _Atomic int g_policy = MP_DWCONV_AUTO;

void mp_dwconv_set_policy(mp_dwconv_policy p)
{
    atomic_store(&g_policy, (int)p);
}

mp_dwconv_policy mp_dwconv_get_policy(void)
{
    return (mp_dwconv_policy)atomic_load(&g_policy);
}

/* The choice under the policy: XNNPACK or C where it forces one, else AUTO's (`auto_c`). */
static bool dw_choose(bool auto_c)
{
    mp_dwconv_policy p = mp_dwconv_get_policy();
    return p == MP_DWCONV_C || (p == MP_DWCONV_AUTO && auto_c);
}

/* Depth multipliers: XNNPACK runs any as a GEMM of one input and M output channels per
 * group; at 1x56x56x32, 3x3 and 5x5, strides 1 and 2 (docs/benchmarks.md, bench_dwconv --set
 * mult, 1 thread), float32 at 5-8 GFLOP/s for M = 2, 12-16 for 4, 24-31 for 8, where the
 * blocks here (DW_MULT_BLOCK) run at 25-34, 38-51 and 44-51 (1.6-4.6 times faster); 8-bit
 * at 1.6-2.1, 3.2-4.4 and 6.5-8.7 GOP/s against 9-19, 12-25 and 14-27 here (1.9-9.7 times),
 * TensorFlow Lite's integers and all. Where there are fewer than sixteen input channels the
 * blocks have nothing to take (3 channels, M = 8: XNNPACK 27 GFLOP/s float, 7.7 GOP/s int8,
 * here 3.4 and 2.7), and above M = 8 there are none (M = 16: XNNPACK 51, here 4): XNNPACK's
 * GEMM keeps those. So does a processor without AVX-512: the blocks' permutation of sixteen
 * lanes is one instruction there (vpermps), but GCC builds the AVX2 and baseline clones' lane
 * by lane (this file built for AVX2 alone: 2.5-3.5 GFLOP/s at 3x3, M = 2-8; two eight-lane
 * permutations instead, 4.8-8.3, and AVX-512 down to 13-16). */
static bool dw_mult_wanted(int32_t in_c, int32_t mult)
{
#if defined(__x86_64__) && !defined(__clang__)
    bool perm16 = __builtin_cpu_supports("avx512f");
#else
    bool perm16 = false;
#endif
    return perm16 && mult >= 2 && mult <= DW_MULT_MAX && in_c >= DW_V;
}

bool mp_dwconv_wanted(int32_t k_h, int32_t k_w, int32_t in_c, int32_t mult)
{
    /* XNNPACK's float depthwise microkernels (primary tiles of 3, 4, 9 and 25 taps, one
     * output channel per group) run at 30-40 GFLOP/s, above this kernel's 15-35; its GEMM
     * fall-back for other windows at 1-4, where this one is 8-14 times faster
     * (docs/benchmarks.md). Multipliers: dw_mult_wanted. */
    int64_t taps = (int64_t)k_h * k_w;
    return dw_choose((mult == 1 && taps != 3 && taps != 4 && taps != 9 && taps != 25) ||
                     dw_mult_wanted(in_c, mult));
}

bool mp_dwconv_wanted_q8(int32_t k_h, int32_t k_w, int32_t in_c, int32_t mult)
{
    /* XNNPACK's 8-bit depthwise microkernels: 9 and 25 taps (22-35 GOP/s, this kernel's
     * 11-16 with TensorFlow Lite's requantization); the fall-back under 1.2 GOP/s, where
     * this one is 8-20 times faster. Multipliers: dw_mult_wanted (windows whose sums could
     * pass 2^24 take the integer gathers, about as fast as XNNPACK's GEMM). */
    int64_t taps = (int64_t)k_h * k_w;
    return dw_choose((mult == 1 && taps != 9 && taps != 25) || dw_mult_wanted(in_c, mult));
}

typedef float v16 __attribute__((vector_size(64)));
#define DW_LOAD(v, p) memcpy(&(v), (p), sizeof(v16))
#define DW_STORE(p, v) memcpy((p), &(v), sizeof(v16))

/* The taps k in [0, k_count) of one dimension whose input position base + k * dil lies in
 * [0, in): [*k0, *k1). */
static void tap_range(int64_t base, int32_t in, int32_t k_count, int32_t dil, int32_t *k0,
                      int32_t *k1)
{
    int64_t lo = base < 0 ? (-base + dil - 1) / dil : 0;
    int64_t hi = base >= in ? 0 : ((int64_t)in - base + dil - 1) / dil;
    hi = hi < k_count ? hi : k_count;
    lo = lo < hi ? lo : hi;
    *k0 = (int32_t)lo;
    *k1 = (int32_t)hi;
}

/* One output pixel's window: where the taps inside the input start, in elements of the
 * input and the filter, and the steps between them. */
typedef struct dw_window {
    size_t x;                /* input pixel of tap (ky0, kx0), channel 0 */
    size_t w;                /* filter tap (ky0, kx0), output channel 0 */
    size_t x_row, x_col;     /* input elements between taps down and across */
    size_t w_row;            /* filter elements between tap rows (KW * OC) */
    int32_t rows, cols;      /* taps inside */
} dw_window;

/* out[c .. c + 16 * NV) of a multiplier-1 window, NV vectors at a time */
#define DW_BLOCK(NV)                                                                           \
    for (; c + (NV) * DW_V <= oc; c += (NV) * DW_V) {                                          \
        v16 a[NV], xv, wv;                                                                     \
        for (int v = 0; v < (NV); v++) {                                                       \
            if (bias)                                                                          \
                DW_LOAD(a[v], bias + c + v * DW_V);                                            \
            else                                                                               \
                a[v] = (v16){0};                                                               \
        }                                                                                      \
        for (int32_t i = 0; i < win->rows; i++) {                                              \
            const float *xp = x + i * win->x_row + c, *wp = w + i * win->w_row + c;            \
            for (int32_t j = 0; j < win->cols; j++, xp += win->x_col, wp += oc)                \
                for (int v = 0; v < (NV); v++) {                                               \
                    DW_LOAD(xv, xp + v * DW_V);                                                \
                    DW_LOAD(wv, wp + v * DW_V);                                                \
                    a[v] += xv * wv;                                                           \
                }                                                                              \
        }                                                                                      \
        for (int v = 0; v < (NV); v++)                                                         \
            DW_STORE(out + c + v * DW_V, a[v]);                                                \
    }

/* out[0 .. oc) of one pixel of a multiplier-1 convolution, before the clamp (x and w at the
 * window's first tap). */
DW_HOT static void dw_pixel_m1(const dw_window *win, const float *x, const float *w,
                               const float *bias, float *out, size_t oc)
{
    size_t c = 0;
    DW_BLOCK(4)
    DW_BLOCK(1)
    for (; c < oc; c++) {
        float acc = bias ? bias[c] : 0.0f;
        for (int32_t i = 0; i < win->rows; i++) {
            const float *xp = x + i * win->x_row + c, *wp = w + i * win->w_row + c;
            for (int32_t j = 0; j < win->cols; j++, xp += win->x_col, wp += oc)
                acc += *xp * *wp;
        }
        out[c] = acc;
    }
}

/* ---- depth multipliers 2 to 8 ---- */

typedef int32_t v16i __attribute__((vector_size(64)));

/* r = lanes of float vector v picked by index vector m (every index in [0, 16)) */
#if defined(__GNUC__) && !defined(__clang__)
#define DW_PERM(r, v, m) ((r) = __builtin_shuffle((v), (m)))
#else
#define DW_PERM(r, v, m)                                                                       \
    do {                                                                                       \
        for (int l_ = 0; l_ < DW_V; l_++)                                                      \
            (r)[l_] = (v)[(m)[l_] & (DW_V - 1)];                                               \
    } while (0)
#endif

/* The output channels DW_MULT_BLOCK leaves (those of the inputs past the last whole sixteen,
 * or of all the inputs when there are fewer than sixteen), as n whole vectors of sixteen
 * output channels: vector v from output channel o0[v] (the last one ending at the last
 * channel, overlapping the one before it, whose values it stores again), its lanes picked by
 * perm[v] from the sixteen inputs from channel base[v] on, or (copy: fewer than sixteen
 * input channels) from all the inputs copied one by one. Made once per run (dw_tail_plan) for
 * multipliers 2-8 and sixteen output channels or more; n is at most the multiplier. */
typedef struct dw_tail {
    int32_t n;
    bool copy;
    int32_t o0[DW_MULT_MAX], base[DW_MULT_MAX];
    int32_t perm[DW_MULT_MAX * DW_V];
} dw_tail;

static void dw_tail_plan(int32_t in_c, int32_t mult, dw_tail *t)
{
    int64_t oc = (int64_t)in_c * mult, o = (int64_t)(in_c - in_c % DW_V) * mult;
    t->n = 0;
    t->copy = in_c < DW_V;
    if (mult < 2 || mult > DW_MULT_MAX || oc < DW_V)
        return;
    for (; o < oc && t->n < DW_MULT_MAX; o += DW_V, t->n++) {
        int64_t o0 = o + DW_V <= oc ? o : oc - DW_V;
        int64_t base = t->copy ? 0 : o0 / mult < in_c - DW_V ? o0 / mult : in_c - DW_V;
        t->o0[t->n] = (int32_t)o0;
        t->base[t->n] = (int32_t)base;
        for (int l = 0; l < DW_V; l++)
            t->perm[t->n * DW_V + l] = (int32_t)((o0 + l) / mult - base);
    }
}

/* Output channels [ci * MM, (ci + 16 * NB) * MM) of a window with depth multiplier MM, NB
 * blocks of sixteen input channels at a time, while they last: each tap's sixteen inputs of
 * a block loaded once (XLOAD, as floats) and spread over the MM output vectors they feed by
 * permutation (pm[k], lane l: input (16k + l) / MM of the block), times the filter's MM
 * vectors read in place; INIT starts an accumulator of output channel o and STORE ends it.
 * NB * MM accumulators (6 to 8) hide the multiply-add's latency, as multiplier 1's four
 * vectors do. */
#define DW_MULT_BLOCK(T, MM, NB, XLOAD, INIT, STORE)                                           \
    for (; ci + (NB) * DW_V <= in_c; ci += (NB) * DW_V) {                                      \
        v16 a[(NB) * (MM)];                                                                    \
        for (int k = 0; k < (NB) * (MM); k++)                                                  \
            INIT(a[k], ci * (MM) + (size_t)k * DW_V);                                          \
        for (int32_t i = 0; i < win->rows; i++) {                                              \
            const T *xp = x + i * win->x_row + ci;                                             \
            const float *wp = w + i * win->w_row + ci * (MM);                                  \
            for (int32_t j = 0; j < win->cols; j++, xp += win->x_col, wp += oc)                \
                for (int b = 0; b < (NB); b++) {                                               \
                    v16 xv, wv, pv;                                                            \
                    XLOAD(xv, xp + b * DW_V);                                                  \
                    for (int k = 0; k < (MM); k++) {                                           \
                        DW_LOAD(wv, wp + (size_t)(b * (MM) + k) * DW_V);                       \
                        DW_PERM(pv, xv, pm[k]);                                                \
                        a[b * (MM) + k] += pv * wv;                                            \
                    }                                                                          \
                }                                                                              \
        }                                                                                      \
        for (int k = 0; k < (NB) * (MM); k++)                                                  \
            STORE(a[k], ci * (MM) + (size_t)k * DW_V);                                         \
    }

/* The blocks after NB at a time: two (when NB is 4), then one */
#define DW_NB2(NB) ((NB) > 2 ? 2 : 1)

#define DW_F32_XLOAD(v, p) DW_LOAD(v, p)
#define DW_F32_INIT(v, o)                                                                      \
    do {                                                                                       \
        if (bias)                                                                              \
            DW_LOAD(v, bias + (o));                                                            \
        else                                                                                   \
            (v) = (v16){0};                                                                    \
    } while (0)
#define DW_F32_STORE(v, o) DW_STORE(out + (o), v)

/* The float32 blocks of multiplier MM, NB input blocks at a time, then fewer: out[0 ..
 * returned * MM), the returned input channels a multiple of sixteen. perm: MM index vectors
 * (dw_job's). */
#define DW_MULT_F32(MM, NB)                                                                    \
    DW_HOT static size_t dw_mult_f32_##MM(const dw_window *win, const float *x, const float *w,\
                                          const float *bias, float *out, size_t in_c,          \
                                          const int32_t *perm)                                 \
    {                                                                                          \
        size_t oc = in_c * (MM), ci = 0;                                                       \
        v16i pm[MM];                                                                           \
        memcpy(pm, perm, sizeof pm);                                                           \
        DW_MULT_BLOCK(float, MM, NB, DW_F32_XLOAD, DW_F32_INIT, DW_F32_STORE)                  \
        DW_MULT_BLOCK(float, MM, DW_NB2(NB), DW_F32_XLOAD, DW_F32_INIT, DW_F32_STORE)          \
        DW_MULT_BLOCK(float, MM, 1, DW_F32_XLOAD, DW_F32_INIT, DW_F32_STORE)                   \
        return ci;                                                                             \
    }

DW_MULT_F32(2, 4)
DW_MULT_F32(3, 2)
DW_MULT_F32(4, 2)
DW_MULT_F32(5, 1)
DW_MULT_F32(6, 1)
DW_MULT_F32(7, 1)
DW_MULT_F32(8, 1)

typedef size_t (*dw_mult_f32_fn)(const dw_window *, const float *, const float *,
                                 const float *, float *, size_t, const int32_t *);
static const dw_mult_f32_fn k_mult_f32[DW_MULT_MAX + 1] = {
    NULL, NULL, dw_mult_f32_2, dw_mult_f32_3, dw_mult_f32_4,
    dw_mult_f32_5, dw_mult_f32_6, dw_mult_f32_7, dw_mult_f32_8};

/* Any depth multiplier from output channel c on: sixteen output channels at a time, their
 * inputs (channel c / mult) gathered into a vector tap by tap, then one at a time. */
DW_HOT static void dw_pixel_mult(const dw_window *win, const float *x, const float *w,
                                 const float *bias, float *out, size_t in_c, size_t mult,
                                 size_t c)
{
    size_t oc = in_c * mult;
    for (; c + DW_V <= oc; c += DW_V) {
        size_t idx[DW_V];
        for (int l = 0; l < DW_V; l++)
            idx[l] = (c + (size_t)l) / mult;
        v16 a, xv = {0}, wv;
        if (bias)
            DW_LOAD(a, bias + c);
        else
            a = (v16){0};
        for (int32_t i = 0; i < win->rows; i++) {
            const float *xp = x + i * win->x_row, *wp = w + i * win->w_row + c;
            for (int32_t j = 0; j < win->cols; j++, xp += win->x_col, wp += oc) {
                for (int l = 0; l < DW_V; l++)
                    xv[l] = xp[idx[l]];
                DW_LOAD(wv, wp);
                a += xv * wv;
            }
        }
        DW_STORE(out + c, a);
    }
    for (; c < oc; c++) {
        float acc = bias ? bias[c] : 0.0f;
        for (int32_t i = 0; i < win->rows; i++) {
            const float *xp = x + i * win->x_row + c / mult, *wp = w + i * win->w_row + c;
            for (int32_t j = 0; j < win->cols; j++, xp += win->x_col, wp += oc)
                acc += *xp * *wp;
        }
        out[c] = acc;
    }
}

DW_HOT static void dw_clamp(float *y, size_t n, float lo, float hi)
{
    for (size_t i = 0; i < n; i++)
        y[i] = y[i] < lo ? lo : y[i] > hi ? hi : y[i];
}

/* ---- 8-bit quantized ---- */

typedef uint32_t v16u __attribute__((vector_size(64)));
typedef int16_t v16s16 __attribute__((vector_size(32)));
typedef uint16_t v16u16 __attribute__((vector_size(32)));
typedef int8_t v16s8 __attribute__((vector_size(16)));
typedef uint8_t v16u8 __attribute__((vector_size(16)));

/* TensorFlow Lite's requantization of one channel's sum (reference_integer_ops::
 * DepthwiseConvPerChannel, reference_ops::DepthwiseConv): MultiplyByQuantizedMultiplier by
 * the channel's multiplier and shift, plus the output zero point, clamped to the activation's
 * range. */
static inline int32_t dw_requant(const mp_dwconv *d, uint32_t sum, size_t c)
{
    int32_t v = mp_multiply_by_quantized_multiplier((int32_t)sum, d->q_mult[c],
                                                    d->q_left[c] - d->q_right[c]);
    /* clamped less the zero point, then the zero point added: the same as TensorFlow Lite's
     * order (zero point, clamp) without its overflow near the int32 bounds */
    int32_t lo = d->out_lo - d->out_zp, hi = d->out_hi - d->out_zp;
    return (v < lo ? lo : v > hi ? hi : v) + d->out_zp;
}

typedef uint64_t v8ul __attribute__((vector_size(64)));

/* mp_multiply_by_quantized_multiplier on sixteen lanes, bit for bit, into v16i r, for
 * multipliers in [0, 2^31) (as mp_quantize_multiplier makes them from positive scales).
 * x shifted left (wrapping); then SaturatingRoundingDoublingHighMul, floor((x * m + 2^30) /
 * 2^31) (only INT32_MIN * INT32_MIN would saturate, a negative multiplier): x's bits times m
 * as unsigned 32 x 32 -> 64 bits (even lanes and odd ones), which is x * m + 2^32 * m where x
 * is negative, plus 2^30, bits 31..62 taken, less 2 * m where x is negative (exact modulo
 * 2^32, and the result fits); then RoundingDivideByPOT (floor shift, plus one where the
 * remainder passes half, ties away from zero). Shifts left and right in [0, 31]. Only 32-bit
 * lanes and unsigned 64-bit ones, signs by shifts, not compares: no 64-bit arithmetic shift,
 * which AVX2 lacks, and nothing GCC splits lane by lane on AVX2. (A macro: vectors passed by
 * value would change the ABI between the target clones.) */
#define DW_REQUANT_V(r, x, m, left, right)                                                     \
    do {                                                                                       \
        const v8ul lo_ = (v8ul){0} + 0xFFFFFFFFu, c_ = (v8ul){0} + (1u << 30);                 \
        v16i xs_ = (v16i)((v16u)(x) << (v16u)(left));                                          \
        v8ul a_ = (v8ul)xs_, b_ = (v8ul)(m);                                                   \
        v8ul pe_ = ((a_ & lo_) * (b_ & lo_) + c_) >> 31;                                       \
        v8ul po_ = ((a_ >> 32) * (b_ >> 32) + c_) << 1;                                        \
        v16i hi_ = (v16i)((pe_ & lo_) | (po_ & ~lo_));                                         \
        hi_ = (v16i)((v16u)hi_ - ((v16u)(xs_ >> 31) & ((v16u)(m) << 1)));                      \
        v16i mask_ = (v16i)((((v16u){0} + 1u) << (v16u)(right)) - 1u);                         \
        v16i thr_ = (mask_ >> 1) - (hi_ >> 31);                                                \
        (r) = (hi_ >> (right)) - ((thr_ - (hi_ & mask_)) >> 31); /* + (remainder > thr_) */    \
    } while (0)

DW_HOT void mp_dwconv_requant16(const int32_t *x, const int32_t *multiplier,
                                const int32_t *left, const int32_t *right, int32_t *out)
{
    v16i xv, m, l, r, q;
    memcpy(&xv, x, sizeof xv);
    memcpy(&m, multiplier, sizeof m);
    memcpy(&l, left, sizeof l);
    memcpy(&r, right, sizeof r);
    DW_REQUANT_V(q, xv, m, l, r);
    memcpy(out, &q, sizeof q);
}

bool mp_dwconv_requant_params(double real, int32_t *multiplier, int32_t *left, int32_t *right)
{
    int shift;
    bool ok = mp_quantize_multiplier(real, multiplier, &shift);
    if (shift > 31) { /* every bit shifted out: 0, as a multiplier of 0 gives */
        *multiplier = 0;
        shift = 0;
    }
    *left = shift > 0 ? shift : 0;
    *right = shift < 0 ? -shift : 0;
    return ok;
}

/* Lanes of a or b by a comparison mask m (integer lanes). */
#define DW_ISEL(m, a, b) (((a) & (m)) | ((b) & ~(m)))

/* dw_requant of sixteen channels k.. at once, their int32 sums (bias included) in si,
 * stored into out narrowed through VH to VB. */
#define DW_REQ16_I(VB, VH, si, k)                                                              \
    do {                                                                                       \
        v16i m_, l_, r_;                                                                       \
        memcpy(&m_, d->q_mult + (k), sizeof m_);                                               \
        memcpy(&l_, d->q_left + (k), sizeof l_);                                               \
        memcpy(&r_, d->q_right + (k), sizeof r_);                                              \
        v16i q_;                                                                               \
        DW_REQUANT_V(q_, si, m_, l_, r_);                                                      \
        q_ = DW_ISEL(q_ < olo, olo, q_); /* as dw_requant: clamped, then the zero point */     \
        q_ = DW_ISEL(q_ > ohi, ohi, q_) + d->out_zp;                                           \
        VB o_ = __builtin_convertvector(__builtin_convertvector(q_, VH), VB);                  \
        memcpy(out + (k), &o_, sizeof o_);                                                     \
    } while (0)

/* The taps of sixteen channels' sums a[], input l read by XEXPR (xp at the tap's pixel). */
#define DW_Q8_TAPS(T, XEXPR)                                                                   \
    for (int32_t i = 0; i < win->rows; i++) {                                                  \
        const T *xp = x + i * win->x_row, *wp = w + i * win->w_row + c;                        \
        for (int32_t j = 0; j < win->cols; j++, xp += win->x_col, wp += oc)                    \
            for (int l = 0; l < DW_V; l++)                                                     \
                a[l] += (uint32_t)(((int32_t)(XEXPR) - xz) * ((int32_t)wp[l] - wz));           \
    }

/* One output pixel of an 8-bit convolution of element type T: sixteen channels at a time
 * (inputs gathered with a depth multiplier), then one at a time; each requantized into out.
 * Sums in uint32: they wrap where TensorFlow Lite's int32 ones would overflow. */
#define DW_Q8_PIXEL(NAME, T, VB, VH)                                                           \
    DW_HOT static void NAME(const mp_dwconv *d, const dw_window *win, const T *x, const T *w,  \
                            T *out)                                                            \
    {                                                                                          \
        size_t mult = (size_t)d->mult, oc = (size_t)d->in_c * mult, c = 0;                     \
        const int32_t xz = d->in_zp, wz = d->w_zp;                                             \
        const v16i olo = (v16i){0} + (d->out_lo - d->out_zp);                                  \
        const v16i ohi = (v16i){0} + (d->out_hi - d->out_zp);                                  \
        for (; c + DW_V <= oc; c += DW_V) {                                                    \
            uint32_t a[DW_V];                                                                  \
            size_t idx[DW_V];                                                                  \
            for (int l = 0; l < DW_V; l++) {                                                   \
                a[l] = d->bias_q ? (uint32_t)d->bias_q[c + (size_t)l] : 0;                     \
                idx[l] = (c + (size_t)l) / mult;                                               \
            }                                                                                  \
            if (mult == 1)                                                                     \
                DW_Q8_TAPS(T, xp[c + (size_t)l])                                               \
            else                                                                               \
                DW_Q8_TAPS(T, xp[idx[l]])                                                      \
            v16i s_;                                                                           \
            memcpy(&s_, a, sizeof s_);                                                         \
            DW_REQ16_I(VB, VH, s_, c);                                                         \
        }                                                                                      \
        for (; c < oc; c++) {                                                                  \
            uint32_t a = d->bias_q ? (uint32_t)d->bias_q[c] : 0;                               \
            for (int32_t i = 0; i < win->rows; i++) {                                          \
                const T *xp = x + i * win->x_row + c / mult, *wp = w + i * win->w_row + c;     \
                for (int32_t j = 0; j < win->cols; j++, xp += win->x_col, wp += oc)            \
                    a += (uint32_t)(((int32_t)*xp - xz) * ((int32_t)*wp - wz));                \
            }                                                                                  \
            out[c] = (T)dw_requant(d, a, c);                                                   \
        }                                                                                      \
    }

DW_Q8_PIXEL(dw_pixel_s8, int8_t, v16s8, v16s16)
DW_Q8_PIXEL(dw_pixel_u8, uint8_t, v16u8, v16u16)

/* The requantization of sixteen channels k.. at once, their sums of products (exact
 * integers in float) plus the bias (in the integers, wrapping), into out. */
#define DW_REQ16(VB, VH, sumf, k)                                                              \
    do {                                                                                       \
        v16i si = __builtin_convertvector(sumf, v16i), bi;                                     \
        if (bias) {                                                                            \
            memcpy(&bi, bias + (k), sizeof bi);                                                \
            si = (v16i)((v16u)si + (v16u)bi);                                                  \
        }                                                                                      \
        DW_REQ16_I(VB, VH, si, k);                                                             \
    } while (0)

/* The same, multiplier 1, the sums of products in float (exact: every one an integer below
 * 2^24, mp_dwconv_q8_float_filter), NV vectors at a time: the inputs converted tap by tap,
 * the filter less its zero point prepared. The bias is added in the integers. */
#define DW_QF_BLOCK(T, VB, VH, NV)                                                             \
    for (; c + (NV) * DW_V <= oc; c += (NV) * DW_V) {                                          \
        v16 a[NV], xv, wv;                                                                     \
        for (int v = 0; v < (NV); v++)                                                         \
            a[v] = (v16){0};                                                                   \
        for (int32_t i = 0; i < win->rows; i++) {                                              \
            const T *xp = x + i * win->x_row + c;                                              \
            const float *wp = w + i * win->w_row + c;                                          \
            for (int32_t j = 0; j < win->cols; j++, xp += win->x_col, wp += oc)                \
                for (int v = 0; v < (NV); v++) {                                               \
                    VB xb; /* widened a step at a time: GCC vectorizes each */                 \
                    memcpy(&xb, xp + v * DW_V, sizeof xb);                                     \
                    xv = __builtin_convertvector(                                              \
                        __builtin_convertvector(__builtin_convertvector(xb, VH), v16i), v16);  \
                    DW_LOAD(wv, wp + v * DW_V);                                                \
                    a[v] += (xv - xz) * wv;                                                    \
                }                                                                              \
        }                                                                                      \
        for (int v = 0; v < (NV); v++)                                                         \
            DW_REQ16(VB, VH, a[v], c + (size_t)v * DW_V);                                      \
    }

/* One output pixel on the float path from output channel c on: multiplier 1 in blocks, then
 * (any multiplier: the channels DW_MULT_QF left) one channel at a time. */
#define DW_QF_PIXEL(NAME, T, VB, VH)                                                           \
    DW_HOT static void NAME(const mp_dwconv *d, const dw_window *win, const T *x,              \
                            const float *w, T *out, size_t c)                                  \
    {                                                                                          \
        size_t mult = (size_t)d->mult, oc = (size_t)d->in_c * mult;                            \
        const int32_t *bias = d->bias_q;                                                       \
        const v16 xz = (v16){0} + (float)d->in_zp;                                             \
        const v16i olo = (v16i){0} + (d->out_lo - d->out_zp);                                  \
        const v16i ohi = (v16i){0} + (d->out_hi - d->out_zp);                                  \
        if (mult == 1) {                                                                       \
            DW_QF_BLOCK(T, VB, VH, 4)                                                          \
            DW_QF_BLOCK(T, VB, VH, 1)                                                          \
        }                                                                                      \
        for (; c < oc; c++) {                                                                  \
            uint32_t a = bias ? (uint32_t)bias[c] : 0;                                         \
            for (int32_t i = 0; i < win->rows; i++) {                                          \
                const T *xp = x + i * win->x_row + c / mult;                                   \
                const float *wp = w + i * win->w_row + c;                                      \
                for (int32_t j = 0; j < win->cols; j++, xp += win->x_col, wp += oc)            \
                    a += (uint32_t)(((int32_t)*xp - d->in_zp) * (int32_t)*wp);                 \
            }                                                                                  \
            out[c] = (T)dw_requant(d, a, c);                                                   \
        }                                                                                      \
    }

DW_QF_PIXEL(dw_pixel_s8f, int8_t, v16s8, v16s16)
DW_QF_PIXEL(dw_pixel_u8f, uint8_t, v16u8, v16u16)

/* The 8-bit blocks of multiplier MM on the float path (sums exact in float, as
 * DW_QF_BLOCK's): the inputs less their zero point converted tap by tap, each block
 * requantized as multiplier 1's; out[0 .. returned * MM) as DW_MULT_F32. */
#define DW_QF_XLOAD(v, p)                                                                      \
    do {                                                                                       \
        dw_vb xb_;                                                                             \
        memcpy(&xb_, (p), sizeof xb_);                                                         \
        (v) = __builtin_convertvector(                                                         \
                  __builtin_convertvector(__builtin_convertvector(xb_, dw_vh), v16i), v16) -   \
              xz;                                                                              \
    } while (0)
#define DW_QF_INIT(v, o) ((v) = (v16){0})
#define DW_QF_STORE(v, o) DW_REQ16(dw_vb, dw_vh, v, o)

#define DW_MULT_QF(NAME, T, VB, VH, MM, NB)                                                    \
    DW_HOT static size_t NAME##_##MM(const mp_dwconv *d, const dw_window *win, const T *x,    \
                                     const float *w, T *out, const int32_t *perm)              \
    {                                                                                          \
        size_t in_c = (size_t)d->in_c, oc = in_c * (MM), ci = 0;                               \
        const int32_t *bias = d->bias_q;                                                       \
        const v16 xz = (v16){0} + (float)d->in_zp;                                             \
        const v16i olo = (v16i){0} + (d->out_lo - d->out_zp);                                  \
        const v16i ohi = (v16i){0} + (d->out_hi - d->out_zp);                                  \
        typedef VB dw_vb; /* the element vectors, for DW_QF_XLOAD and DW_QF_STORE */           \
        typedef VH dw_vh;                                                                      \
        v16i pm[MM];                                                                           \
        memcpy(pm, perm, sizeof pm);                                                           \
        DW_MULT_BLOCK(T, MM, NB, DW_QF_XLOAD, DW_QF_INIT, DW_QF_STORE)                         \
        DW_MULT_BLOCK(T, MM, DW_NB2(NB), DW_QF_XLOAD, DW_QF_INIT, DW_QF_STORE)                 \
        DW_MULT_BLOCK(T, MM, 1, DW_QF_XLOAD, DW_QF_INIT, DW_QF_STORE)                          \
        return ci;                                                                             \
    }

#define DW_MULT_QF_ALL(NAME, T, VB, VH)                                                        \
    DW_MULT_QF(NAME, T, VB, VH, 2, 4)                                                          \
    DW_MULT_QF(NAME, T, VB, VH, 3, 2)                                                          \
    DW_MULT_QF(NAME, T, VB, VH, 4, 2)                                                          \
    DW_MULT_QF(NAME, T, VB, VH, 5, 1)                                                          \
    DW_MULT_QF(NAME, T, VB, VH, 6, 1)                                                          \
    DW_MULT_QF(NAME, T, VB, VH, 7, 1)                                                          \
    DW_MULT_QF(NAME, T, VB, VH, 8, 1)                                                          \
    typedef size_t (*NAME##_fn)(const mp_dwconv *, const dw_window *, const T *,               \
                                const float *, T *, const int32_t *);                          \
    static const NAME##_fn k_##NAME[DW_MULT_MAX + 1] = {                                       \
        NULL, NULL, NAME##_2, NAME##_3, NAME##_4, NAME##_5, NAME##_6, NAME##_7, NAME##_8};

DW_MULT_QF_ALL(dw_mult_s8f, int8_t, v16s8, v16s16)
DW_MULT_QF_ALL(dw_mult_u8f, uint8_t, v16u8, v16u16)

bool mp_dwconv_q8_float_filter(const mp_dwconv *d, float *wf)
{
    size_t n = (size_t)d->k_h * (size_t)d->k_w * (size_t)d->in_c * (size_t)d->mult;
    int64_t wmax = 0;
    for (size_t i = 0; i < n; i++) {
        int32_t q = d->q_uint8 ? ((const uint8_t *)d->filter_q)[i]
                               : ((const int8_t *)d->filter_q)[i];
        if (wf)
            wf[i] = (float)(q - d->w_zp);
        int64_t m = q - d->w_zp < 0 ? d->w_zp - q : q - d->w_zp;
        wmax = m > wmax ? m : wmax;
    }
    int64_t lo = d->q_uint8 ? 0 : -128, hi = d->q_uint8 ? 255 : 127;
    int64_t xmax = hi - d->in_zp > d->in_zp - lo ? hi - d->in_zp : d->in_zp - lo;
    int64_t taps = (int64_t)d->k_h * d->k_w; /* below 2^31 each: the product fits */
    return taps <= (1 << 24) && taps * xmax * wmax < ((int64_t)1 << 24);
}

/* The tail of a pixel (dw_tail t, after the blocks), for element type T: XLOAD loads
 * sixteen inputs as floats, XCONV converts one; INIT and STORE as DW_MULT_BLOCK's. */
#define DW_TAIL_BODY(T, XLOAD, XCONV, INIT, STORE)                                             \
    size_t oc = (size_t)d->in_c * (size_t)d->mult;                                             \
    int32_t n = t->n;                                                                          \
    v16 a[DW_MULT_MAX], xv, wv, pv;                                                            \
    v16i pm;                                                                                   \
    for (int32_t v = 0; v < n; v++)                                                            \
        INIT(a[v], (size_t)t->o0[v]);                                                          \
    for (int32_t i = 0; i < win->rows; i++) {                                                  \
        const T *xp = x + i * win->x_row;                                                      \
        const float *wp = w + i * win->w_row;                                                  \
        for (int32_t j = 0; j < win->cols; j++, xp += win->x_col, wp += oc) {                  \
            if (t->copy) {                                                                     \
                xv = (v16){0};                                                                 \
                for (int32_t l = 0; l < d->in_c; l++)                                          \
                    xv[l] = XCONV(xp[l]);                                                      \
            }                                                                                  \
            for (int32_t v = 0; v < n; v++) {                                                  \
                if (!t->copy)                                                                  \
                    XLOAD(xv, xp + t->base[v]);                                                \
                memcpy(&pm, t->perm + v * DW_V, sizeof pm);                                    \
                DW_PERM(pv, xv, pm);                                                           \
                DW_LOAD(wv, wp + t->o0[v]);                                                    \
                a[v] += pv * wv;                                                               \
            }                                                                                  \
        }                                                                                      \
    }                                                                                          \
    for (int32_t v = 0; v < n; v++)                                                            \
        STORE(a[v], (size_t)t->o0[v]);

#define DW_F32_XCONV(e) (e)
DW_HOT static void dw_tail_f32(const mp_dwconv *d, const dw_tail *t, const dw_window *win,
                               const float *x, const float *w, float *out)
{
    const float *bias = d->bias;
    DW_TAIL_BODY(float, DW_F32_XLOAD, DW_F32_XCONV, DW_F32_INIT, DW_F32_STORE)
}

#define DW_QF_XCONV(e) ((float)((int32_t)(e) - d->in_zp))
#define DW_TAIL_QF(NAME, T, VB, VH)                                                            \
    DW_HOT static void NAME(const mp_dwconv *d, const dw_tail *t, const dw_window *win,        \
                            const T *x, const float *w, T *out)                                \
    {                                                                                          \
        typedef VB dw_vb;                                                                      \
        typedef VH dw_vh;                                                                      \
        const int32_t *bias = d->bias_q;                                                       \
        const v16 xz = (v16){0} + (float)d->in_zp;                                             \
        const v16i olo = (v16i){0} + (d->out_lo - d->out_zp);                                  \
        const v16i ohi = (v16i){0} + (d->out_hi - d->out_zp);                                  \
        DW_TAIL_BODY(T, DW_QF_XLOAD, DW_QF_XCONV, DW_QF_INIT, DW_QF_STORE)                     \
    }

DW_TAIL_QF(dw_tail_s8f, int8_t, v16s8, v16s16)
DW_TAIL_QF(dw_tail_u8f, uint8_t, v16u8, v16u16)

/* ---- rows of the output ---- */

typedef struct dw_job {
    const mp_dwconv *d;
    const void *x;
    void *y;
    bool q8;
    int32_t perm[DW_MULT_MAX * DW_V]; /* multiplier 2-8: DW_MULT_BLOCK's index vectors */
    dw_tail tail;                     /* and what the blocks leave */
} dw_job;

/* dw_pixel's 8-bit float path for element type T: the multiplier's blocks (BLOCKS[mult]),
 * then what they leave as whole vectors (TAIL) or one channel at a time (PIXEL, which also
 * does multiplier 1 whole). */
#define DW_QF_DISPATCH(T, BLOCKS, TAIL, PIXEL)                                                 \
    do {                                                                                       \
        const T *x_ = (const T *)j->x + win->x;                                                \
        const float *w_ = d->filter_qf + win->w;                                               \
        T *out_ = (T *)j->y + pix * oc;                                                        \
        size_t ci_ = blocks ? BLOCKS[mult](d, win, x_, w_, out_, j->perm) : 0;                 \
        if (ci_ < in_c && j->tail.n)                                                           \
            TAIL(d, &j->tail, win, x_, w_, out_);                                              \
        else                                                                                   \
            PIXEL(d, win, x_, w_, out_, ci_ * mult);                                           \
    } while (0)

/* One output pixel, its window at win, into element pix of the output. */
static void dw_pixel(const dw_job *j, const dw_window *win, size_t pix)
{
    const mp_dwconv *d = j->d;
    size_t in_c = (size_t)d->in_c, mult = (size_t)d->mult, oc = in_c * mult;
    /* DW_MULT_BLOCK's, then the rest; other multipliers above 1 gather (8-bit: in the
     * integers, sixteen lanes at a time) */
    bool blocks = mult >= 2 && mult <= DW_MULT_MAX;
    if (!j->q8) {
        const float *x = (const float *)j->x + win->x, *w = d->filter + win->w;
        float *out = (float *)j->y + pix * oc;
        if (mult == 1) {
            dw_pixel_m1(win, x, w, d->bias, out, oc);
        } else {
            size_t ci = blocks ? k_mult_f32[mult](win, x, w, d->bias, out, in_c, j->perm) : 0;
            if (ci < in_c && j->tail.n)
                dw_tail_f32(d, &j->tail, win, x, w, out);
            else if (ci < in_c)
                dw_pixel_mult(win, x, w, d->bias, out, in_c, mult, ci * mult);
        }
        if (d->lo != -INFINITY || d->hi != INFINITY)
            dw_clamp(out, oc, d->lo, d->hi);
    } else if (d->filter_qf && (mult == 1 || blocks) && d->q_uint8) {
        DW_QF_DISPATCH(uint8_t, k_dw_mult_u8f, dw_tail_u8f, dw_pixel_u8f);
    } else if (d->filter_qf && (mult == 1 || blocks)) {
        DW_QF_DISPATCH(int8_t, k_dw_mult_s8f, dw_tail_s8f, dw_pixel_s8f);
    } else if (d->q_uint8) {
        dw_pixel_u8(d, win, (const uint8_t *)j->x + win->x, (const uint8_t *)d->filter_q + win->w,
                    (uint8_t *)j->y + pix * oc);
    } else {
        dw_pixel_s8(d, win, (const int8_t *)j->x + win->x, (const int8_t *)d->filter_q + win->w,
                    (int8_t *)j->y + pix * oc);
    }
}

/* Output rows [r0, r0 + count) (row r: image r / out_h, row r % out_h). */
static void dw_rows(void *ctx, size_t r0, size_t count)
{
    const dw_job *j = ctx;
    const mp_dwconv *d = j->d;
    size_t in_c = (size_t)d->in_c, oc = in_c * (size_t)d->mult;
    for (size_t r = r0; r < r0 + count; r++) {
        size_t b = r / (size_t)d->out_h;
        int32_t oh = (int32_t)(r % (size_t)d->out_h);
        int64_t ih0 = (int64_t)oh * d->stride_h - d->pad_top;
        int32_t ky0, ky1;
        tap_range(ih0, d->in_h, d->k_h, d->dil_h, &ky0, &ky1);
        for (int32_t ow = 0; ow < d->out_w; ow++) {
            int64_t iw0 = (int64_t)ow * d->stride_w - d->pad_left;
            int32_t kx0, kx1;
            tap_range(iw0, d->in_w, d->k_w, d->dil_w, &kx0, &kx1);
            dw_window win = {.x_row = (size_t)d->dil_h * (size_t)d->in_w * in_c,
                             .x_col = (size_t)d->dil_w * in_c,
                             .w_row = (size_t)d->k_w * oc,
                             .rows = ky1 - ky0,
                             .cols = kx1 - kx0};
            if (win.rows > 0 && win.cols > 0) {
                size_t ih = (size_t)(ih0 + (int64_t)ky0 * d->dil_h);
                size_t iw = (size_t)(iw0 + (int64_t)kx0 * d->dil_w);
                win.x = ((b * (size_t)d->in_h + ih) * (size_t)d->in_w + iw) * in_c;
                win.w = ((size_t)ky0 * (size_t)d->k_w + (size_t)kx0) * oc;
            } else {
                win.rows = win.cols = 0; /* the window lies in the padding: the bias alone */
            }
            dw_pixel(j, &win, r * (size_t)d->out_w + (size_t)ow);
        }
    }
}

static void dw_run(const mp_dwconv *d, const void *x, void *y, bool q8, pthreadpool_t pool)
{
    size_t rows = (size_t)d->batch * (size_t)d->out_h;
    if (rows == 0 || d->out_w == 0)
        return;
    /* rows per task: some 64K multiply-adds each, so that small rows do not cost a task
     * apiece */
    size_t per_row = 1;
    const int32_t factors[5] = {d->out_w, d->in_c, d->mult, d->k_h, d->k_w};
    for (int i = 0; i < 5 && per_row < 65536; i++)
        per_row *= (size_t)factors[i]; /* stops growing at 2^16 * 2^31: no overflow */
    size_t tile = per_row >= 65536 ? 1 : 65536 / (per_row ? per_row : 1);
    dw_job j = {d, x, y, q8, {0}, {0}};
    dw_tail_plan(d->in_c, d->mult, &j.tail);
    for (int32_t k = 0; d->mult <= DW_MULT_MAX && k < d->mult * DW_V; k++)
        j.perm[k] = k / d->mult; /* vector k / 16, lane k % 16: input (16 (k / 16) + l) / M */
    pthreadpool_parallelize_1d_tile_1d(pool, dw_rows, &j, rows, tile, 0);
}

void mp_dwconv_run_f32(const mp_dwconv *d, const float *x, float *y, pthreadpool_t pool)
{
    dw_run(d, x, y, false, pool);
}

void mp_dwconv_run_q8(const mp_dwconv *d, const void *x, void *y, pthreadpool_t pool)
{
    dw_run(d, x, y, true, pool);
}
