/* Kernel: BATCH_MATMUL, as TensorFlow Lite's batch_matmul.cc (float32).
 *
 * lhs [..., M, K] (adj_x: [..., K, M]) times rhs [..., K, N] (adj_y: [..., N, K]) gives
 * [..., M, N]; the batch dimensions (all but the last two) broadcast NumPy-style, the shorter
 * rank padded with leading 1s; output rank = the larger rank. lhs and output are float32; rhs
 * float32, or, when constant, int8 / uint8 / float16 dequantized once (hybrid models).
 *
 * Two paths:
 *  - constant rhs: XNNPACK fully connected operators, one per rhs batch, weights packed once
 *    at the first prepare (XNN_FLAG_TRANSPOSE_WEIGHTS reads [K, N]; adj_y's [N, K] is
 *    XNNPACK's default). lhs rows are the operator's batch; adj_x's lhs is transposed first into
 *    the node's scratch (declared by infer). One rhs batch and an unbroadcast lhs are a single
 *    operator over all B*M rows, bound at prepare, so run is xnn_run_operator alone; otherwise
 *    run binds it per output batch.
 *  - rhs computed at run time: this XNNPACK (2022) has no batch matrix multiply and packs
 *    fully-connected weights only at creation (which allocates), so a blocked C GEMM: rhs
 *    packed into panels of NR columns (the node's scratch: every rhs batch, K * NR floats per
 *    panel, zero-padded), then MR x NR register tiles, each a k-loop of vector multiply-adds
 *    reading lhs directly through strides (adj_x needs no copy). The tile kernel is compiled
 *    for AVX-512, AVX2+FMA and baseline SSE and picked at run time; tiles run on the
 *    session's thread pool. Each output is one float sum in k order, rounded once per
 *    multiply-add when FMA is used.
 * int8 (lhs, rhs and output int8, one scale and zero point each; TensorFlow Lite's
 * batch_matmul.cc EvalInt8Int8, bit for bit): each output is the int32 sum over k of
 * (lhs - zp_lhs) * (rhs - zp_rhs), then MultiplyByQuantizedMultiplier with the multiplier of
 * lhs_scale * rhs_scale / out_scale (in double, QuantizeMultiplier) plus zp_out, saturated.
 * Plain C: both operands are packed at run, centred, as int16 rows along k into the node's
 * scratch (lhs [batch][M][K], rhs [batch][N][K], adj_x / adj_y folded into the packing), so
 * each output is one contiguous int16 dot product, four columns at a time sharing the lhs
 * loads (pmaddwd on AVX2 or SSE2, picked at run time); rows of the output run on the
 * session's thread pool. With an int32 output (EvalInt8Int32) the output is the raw int32
 * sum of the stored values' products, zero points and scales ignored, as there. int16
 * (16x8): int16_linear.c (EvalInt16). uint8 is refused.
 * A fused activation is not part of BATCH_MATMUL. */
#include "engine/kernels/kernel.h"

#include <math.h>
#include <pthreadpool.h>
#include <string.h>
#include <xnnpack.h>

#include "engine/kernels/int16.h"
#include "engine/kernels/movement.h"
#include "engine/kernels/quant_math.h"
#include "engine/kernels/quant_tensor.h"

#define SHAPE_STR(t, buf) mp_shape_str((t)->rank, (t)->dims, (buf), sizeof(buf))

/* ---- geometry --------------------------------------------------------------------------- */

typedef struct mm_geom {
    size_t m, k, n;
    size_t batches, lhs_batches, rhs_batches;
    int32_t brank;                       /* batch dimensions of the output */
    size_t bdims[MP_MAX_RANK];
    size_t lstride[MP_MAX_RANK], rstride[MP_MAX_RANK]; /* in batches; 0 = broadcast */
    int32_t out_rank, out_dims[MP_MAX_RANK];
} mm_geom;

static mp_status mm_geometry(mp_node *n, mm_geom *g)
{
    const mp_tensor *a = n->in[0], *b = n->in[1];
    bool ax = n->opt->adj_x, ay = n->opt->adj_y;
    char b1[96], b2[96];
    if (a->rank < 2 || b->rank < 2)
        return mp_node_fail(n, MP_ERR_SHAPE, "inputs '%s' %s and '%s' %s must have rank 2 or more",
                            mp_tname(a), SHAPE_STR(a, b1), mp_tname(b), SHAPE_STR(b, b2));
    g->m = (size_t)a->dims[a->rank - (ax ? 1 : 2)];
    g->k = (size_t)a->dims[a->rank - (ax ? 2 : 1)];
    size_t kb = (size_t)b->dims[b->rank - (ay ? 1 : 2)];
    g->n = (size_t)b->dims[b->rank - (ay ? 2 : 1)];
    if (kb != g->k)
        return mp_node_fail(n, MP_ERR_SHAPE,
                            "'%s' %s (adj_x %d) and '%s' %s (adj_y %d) differ in the inner "
                            "dimension (%zu and %zu)", mp_tname(a), SHAPE_STR(a, b1), (int)ax,
                            mp_tname(b), SHAPE_STR(b, b2), (int)ay, g->k, kb);
    g->out_rank = a->rank > b->rank ? a->rank : b->rank;
    g->brank = g->out_rank - 2;
    g->batches = g->lhs_batches = g->rhs_batches = 1;
    for (int32_t d = 0; d < g->brank; d++) {
        int32_t ia = d - (g->out_rank - a->rank), ib = d - (g->out_rank - b->rank);
        int32_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return mp_node_fail(n, MP_ERR_SHAPE,
                                "batch dimensions of '%s' %s and '%s' %s do not broadcast",
                                mp_tname(a), SHAPE_STR(a, b1), mp_tname(b), SHAPE_STR(b, b2));
        g->out_dims[d] = da == 1 ? db : da;
        g->bdims[d] = (size_t)g->out_dims[d];
        g->batches *= g->bdims[d];
        g->lhs_batches *= (size_t)da;
        g->rhs_batches *= (size_t)db;
    }
    size_t ls = 1, rs = 1;
    for (int32_t d = g->brank - 1; d >= 0; d--) {
        int32_t ia = d - (g->out_rank - a->rank), ib = d - (g->out_rank - b->rank);
        int32_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        g->lstride[d] = da == 1 ? 0 : ls;
        g->rstride[d] = db == 1 ? 0 : rs;
        ls *= (size_t)da;
        rs *= (size_t)db;
    }
    if (g->m > INT32_MAX || g->n > INT32_MAX)
        return mp_node_fail(n, MP_ERR_SHAPE, "output too large");
    g->out_dims[g->brank] = (int32_t)g->m;
    g->out_dims[g->brank + 1] = (int32_t)g->n;
    return MP_OK;
}

/* The lhs and rhs batch of output batch ob. */
static void mm_batch(const mm_geom *g, size_t ob, size_t *lb, size_t *rb)
{
    *lb = *rb = 0;
    for (int32_t d = g->brank - 1; d >= 0; d--) {
        size_t i = ob % g->bdims[d];
        ob /= g->bdims[d];
        *lb += i * g->lstride[d];
        *rb += i * g->rstride[d];
    }
}

/* mm_batch for int16_linear.c (mp_i16_matmul_shape). */
static void mm_batch_of(const void *g, size_t ob, size_t *lb, size_t *rb)
{
    mm_batch(g, ob, lb, rb);
}

/* ---- blocked C GEMM --------------------------------------------------------------------- */

/* A tile kernel: c[MR x NR] (ldc apart, only mr x nr written) = sum over k of
 * a(i, k) * bp[k][j], a(i, k) = a[i * ars + k * acs], bp a packed panel of K rows of NR. */
typedef void (*mm_tile_fn)(size_t k, const float *a, size_t ars, size_t acs, const float *bp,
                           float *c, size_t ldc, size_t mr, size_t nr);

#define MM_TILE(NAME, ATTR, VW, MR, NV)                                                      \
    typedef float NAME##_v __attribute__((vector_size((VW) * 4)));                             \
    ATTR static void NAME(size_t k, const float *a, size_t ars,                                \
                          size_t acs, const float *bp, float *c, size_t ldc, size_t mr,        \
                          size_t nr)                                                           \
    {                                                                                          \
        const float *row[MR];                                                                  \
        for (size_t i = 0; i < (MR); i++) /* rows past mr repeat the last: read, not kept */   \
            row[i] = a + (i < mr ? i : mr - 1) * ars;                                          \
        NAME##_v acc[MR][NV];                                                                  \
        memset(acc, 0, sizeof acc);                                                            \
        for (size_t kk = 0; kk < k; kk++, bp += (VW) * (NV)) {                                 \
            NAME##_v b[NV];                                                                    \
            memcpy(b, bp, sizeof b);                                                           \
            size_t at = kk * acs;                                                              \
            _Pragma("GCC unroll 16") for (size_t i = 0; i < (MR); i++) {                       \
                float s = row[i][at];                                                          \
                _Pragma("GCC unroll 4") for (size_t j = 0; j < (NV); j++)                      \
                    acc[i][j] += s * b[j];                                                     \
            }                                                                                  \
        }                                                                                      \
        for (size_t i = 0; i < mr; i++) {                                                      \
            float out[(VW) * (NV)];                                                            \
            memcpy(out, acc[i], sizeof out);                                                   \
            memcpy(c + i * ldc, out, nr * sizeof(float));                                      \
        }                                                                                      \
    }

MM_TILE(mm_tile_base, , 4, 4, 2)

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

/* The x86 tile kernels with one named accumulator per register (the generic vectors above
 * stay in memory there): AVX-512 8 x 32 (16 accumulators of 32 registers), AVX2 + FMA 6 x 16
 * (12 of 16). A partial tile goes through a local buffer. */
#define MM_ROWS(MR)                                                                            \
    const float *row[MR];                                                                      \
    for (size_t i = 0; i < (MR); i++)                                                          \
        row[i] = a + (i < mr ? i : mr - 1) * ars;

#define MM_STORE(MR, NR, STORE)                                                                \
    float tmp[(MR) * (NR)];                                                                    \
    bool full = mr == (MR) && nr == (NR);                                                      \
    float *dst = full ? c : tmp;                                                               \
    size_t ld = full ? ldc : (NR);                                                             \
    STORE;                                                                                     \
    if (!full)                                                                                 \
        for (size_t i = 0; i < mr; i++)                                                        \
            memcpy(c + i * ldc, tmp + i * (NR), nr * sizeof(float));

__attribute__((target("avx512f,fma"))) static void
mm_tile_avx512(size_t k, const float *a, size_t ars, size_t acs, const float *bp, float *c,
               size_t ldc, size_t mr, size_t nr)
{
    MM_ROWS(8)
    __m512 c00 = _mm512_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    __m512 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00, c60 = c00;
    __m512 c61 = c00, c70 = c00, c71 = c00;
    for (size_t kk = 0; kk < k; kk++, bp += 32) {
        const __m512 b0 = _mm512_loadu_ps(bp), b1 = _mm512_loadu_ps(bp + 16);
        const size_t at = kk * acs;
#define MM_R512(i)                                                                             \
    {                                                                                          \
        const __m512 x = _mm512_set1_ps(row[i][at]);                                           \
        c##i##0 = _mm512_fmadd_ps(x, b0, c##i##0);                                             \
        c##i##1 = _mm512_fmadd_ps(x, b1, c##i##1);                                             \
    }
        MM_R512(0) MM_R512(1) MM_R512(2) MM_R512(3) MM_R512(4) MM_R512(5) MM_R512(6) MM_R512(7)
#undef MM_R512
    }
#define MM_S512(i)                                                                             \
    _mm512_storeu_ps(dst + (i) * ld, c##i##0);                                                 \
    _mm512_storeu_ps(dst + (i) * ld + 16, c##i##1);
    MM_STORE(8, 32, MM_S512(0) MM_S512(1) MM_S512(2) MM_S512(3) MM_S512(4) MM_S512(5)
                        MM_S512(6) MM_S512(7))
#undef MM_S512
}

__attribute__((target("avx2,fma"))) static void
mm_tile_avx2(size_t k, const float *a, size_t ars, size_t acs, const float *bp, float *c,
             size_t ldc, size_t mr, size_t nr)
{
    MM_ROWS(6)
    __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    for (size_t kk = 0; kk < k; kk++, bp += 16) {
        const __m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8);
        const size_t at = kk * acs;
#define MM_R256(i)                                                                             \
    {                                                                                          \
        const __m256 x = _mm256_set1_ps(row[i][at]);                                           \
        c##i##0 = _mm256_fmadd_ps(x, b0, c##i##0);                                             \
        c##i##1 = _mm256_fmadd_ps(x, b1, c##i##1);                                             \
    }
        MM_R256(0) MM_R256(1) MM_R256(2) MM_R256(3) MM_R256(4) MM_R256(5)
#undef MM_R256
    }
#define MM_S256(i)                                                                             \
    _mm256_storeu_ps(dst + (i) * ld, c##i##0);                                                 \
    _mm256_storeu_ps(dst + (i) * ld + 8, c##i##1);
    MM_STORE(6, 16, MM_S256(0) MM_S256(1) MM_S256(2) MM_S256(3) MM_S256(4) MM_S256(5))
#undef MM_S256
}
#endif

typedef struct mm_variant {
    mm_tile_fn fn;
    size_t mr, nr;
} mm_variant;

static mm_variant mm_pick(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        return (mm_variant){mm_tile_avx512, 8, 32};
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return (mm_variant){mm_tile_avx2, 6, 16};
#endif
    return (mm_variant){mm_tile_base, 4, 8};
}

/* Floats of packed rhs: every rhs batch, every panel of nr columns, K rows. */
static size_t mm_packed_floats(const mm_geom *g, size_t nr)
{
    return g->rhs_batches * ((g->n + nr - 1) / nr) * nr * g->k;
}

typedef struct mm_job {
    const mm_geom *g;
    mm_variant v;
    const float *a, *b;
    float *c, *bp;
    bool adj_x, adj_y;
    size_t mtiles, panels;
} mm_job;

/* Pack panel p of rhs batch r: bp[k][j] = B(k, p * nr + j), 0 past N. */
static void mm_pack(void *ctx, size_t i)
{
    const mm_job *j = ctx;
    const mm_geom *g = j->g;
    size_t r = i / j->panels, p = i % j->panels, nr = j->v.nr;
    const float *b = j->b + r * g->k * g->n;
    float *dst = j->bp + i * g->k * nr;
    size_t n0 = p * nr, w = g->n - n0 < nr ? g->n - n0 : nr;
    for (size_t kk = 0; kk < g->k; kk++, dst += nr) {
        if (j->adj_y) /* B is [N, K] */
            for (size_t c = 0; c < w; c++)
                dst[c] = b[(n0 + c) * g->k + kk];
        else
            memcpy(dst, b + kk * g->n + n0, w * sizeof(float));
        for (size_t c = w; c < nr; c++)
            dst[c] = 0.0f;
    }
}

static void mm_tile_task(void *ctx, size_t i, size_t p)
{
    const mm_job *j = ctx;
    const mm_geom *g = j->g;
    size_t ob = i / j->mtiles, m0 = (i % j->mtiles) * j->v.mr, lb, rb;
    mm_batch(g, ob, &lb, &rb);
    size_t mr = g->m - m0 < j->v.mr ? g->m - m0 : j->v.mr;
    size_t n0 = p * j->v.nr, nr = g->n - n0 < j->v.nr ? g->n - n0 : j->v.nr;
    const float *a = j->a + lb * g->m * g->k;
    size_t ars = j->adj_x ? 1 : g->k, acs = j->adj_x ? g->m : 1;
    j->v.fn(g->k, a + m0 * ars, ars, acs, j->bp + (rb * j->panels + p) * g->k * j->v.nr,
            j->c + ob * g->m * g->n + m0 * g->n + n0, g->n, mr, nr);
}

/* ---- kernel ----------------------------------------------------------------------------- */

typedef struct mm_state {
    xnn_operator_t *ops;     /* constant rhs: one per rhs batch (NULL on the C path) */
    size_t n_ops, k, n;      /* what the operators were created for */
    bool single;             /* one operator over all rows, bound at prepare */
} mm_state;

static bool mm_const_rhs(const mp_node *n)
{
    const mp_tensor *b = n->in[1];
    return b->is_const && b->data;
}

/* ---- int8 ------------------------------------------------------------------------------- */

/* The integer parameters of an int8 product (TensorFlow Lite's Prepare). */
typedef struct mm_q8 {
    int32_t za, zb, zo;
    int32_t mult;
    int shift;
} mm_q8;

static mp_status mm_q8_params(mp_node *n, mm_q8 *q)
{
    const mp_tensor *a = n->in[0], *b = n->in[1], *out = n->out[0];
    if (b->dtype != MP_DT_INT8)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "lhs '%s' is i8 but rhs '%s' is %s (both i8)",
                            mp_tname(a), mp_tname(b), mp_dtype_name(b->dtype));
    if (out->dtype == MP_DT_INT32) { /* raw products: no zero points, no requantization */
        *q = (mm_q8){0, 0, 0, 0, 0};
        return MP_OK;
    }
    if (out->dtype != MP_DT_INT8)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "output '%s' is %s (supported with i8 inputs: "
                            "i8, i32)", mp_tname(out), mp_dtype_name(out->dtype));
    float sa, sb, so;
    mp_status st = mp_node_qparams(n, a, &sa, &q->za);
    if (st == MP_OK)
        st = mp_node_qparams(n, b, &sb, &q->zb);
    if (st == MP_OK)
        st = mp_node_qparams(n, out, &so, &q->zo);
    if (st != MP_OK)
        return st;
    if (!mp_quantize_multiplier((double)sa * (double)sb / (double)so, &q->mult, &q->shift))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "the scales of '%s', '%s' and '%s' give no "
                            "finite multiplier", mp_tname(a), mp_tname(b), mp_tname(out));
    return MP_OK;
}

/* Scratch of an int8 product: both operands as centred int16 rows along k. */
static size_t mm_q8_scratch(const mm_geom *g)
{
    return (g->lhs_batches * g->m + g->rhs_batches * g->n) * g->k * sizeof(int16_t);
}

/* Four dot products of k int16: a against b, b + ldb, b + 2 ldb, b + 3 ldb, summed in
 * int32 wrapping (a pair of products of centred 8-bit values stays below 2^17). */
typedef void (*mm_dot4_fn)(const int16_t *a, const int16_t *b, size_t ldb, size_t k,
                           int32_t out[4]);

static void mm_dot4_tail(const int16_t *a, const int16_t *b, size_t ldb, size_t i, size_t k,
                         uint32_t s[4])
{
    for (; i < k; i++)
        for (size_t c = 0; c < 4; c++)
            s[c] += (uint32_t)((int32_t)a[i] * (int32_t)b[c * ldb + i]);
}

#if defined(__x86_64__) || defined(__i386__)
/* Horizontal sum of the int32 lanes of a 128-bit vector, wrapping. */
static uint32_t mm_hsum128(__m128i v)
{
    uint32_t l[4];
    memcpy(l, &v, sizeof l);
    return l[0] + l[1] + l[2] + l[3];
}

__attribute__((target("avx2"))) static void mm_dot4_avx2(const int16_t *a, const int16_t *b,
                                                         size_t ldb, size_t k, int32_t out[4])
{
    __m256i c[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
                    _mm256_setzero_si256()};
    size_t i = 0;
    for (; i + 16 <= k; i += 16) {
        const __m256i x = _mm256_loadu_si256((const __m256i *)(const void *)(a + i));
        for (size_t j = 0; j < 4; j++)
            c[j] = _mm256_add_epi32(
                c[j], _mm256_madd_epi16(
                          x, _mm256_loadu_si256((const __m256i *)(const void *)(b + j * ldb + i))));
    }
    uint32_t s[4];
    for (size_t j = 0; j < 4; j++)
        s[j] = mm_hsum128(_mm_add_epi32(_mm256_castsi256_si128(c[j]),
                                        _mm256_extracti128_si256(c[j], 1)));
    mm_dot4_tail(a, b, ldb, i, k, s);
    for (size_t j = 0; j < 4; j++)
        out[j] = (int32_t)s[j];
}

static void mm_dot4_sse2(const int16_t *a, const int16_t *b, size_t ldb, size_t k,
                         int32_t out[4])
{
    __m128i c[4] = {_mm_setzero_si128(), _mm_setzero_si128(), _mm_setzero_si128(),
                    _mm_setzero_si128()};
    size_t i = 0;
    for (; i + 8 <= k; i += 8) {
        const __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(a + i));
        for (size_t j = 0; j < 4; j++)
            c[j] = _mm_add_epi32(
                c[j], _mm_madd_epi16(x, _mm_loadu_si128(
                                            (const __m128i *)(const void *)(b + j * ldb + i))));
    }
    uint32_t s[4];
    for (size_t j = 0; j < 4; j++)
        s[j] = mm_hsum128(c[j]);
    mm_dot4_tail(a, b, ldb, i, k, s);
    for (size_t j = 0; j < 4; j++)
        out[j] = (int32_t)s[j];
}
#else
static void mm_dot4_plain(const int16_t *a, const int16_t *b, size_t ldb, size_t k,
                          int32_t out[4])
{
    uint32_t s[4] = {0, 0, 0, 0};
    mm_dot4_tail(a, b, ldb, 0, k, s);
    for (size_t j = 0; j < 4; j++)
        out[j] = (int32_t)s[j];
}
#endif

static mm_dot4_fn mm_pick_dot4(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2"))
        return mm_dot4_avx2;
    return mm_dot4_sse2;
#else
    return mm_dot4_plain;
#endif
}

typedef struct mm_q8_job {
    const mm_geom *g;
    const int16_t *pa, *pb; /* packed lhs [lb][m][k], rhs [rb][n][k] */
    void *c;       /* int8, or int32 (raw sums) when wide */
    bool wide;
    mm_q8 q;
    mm_dot4_fn dot4;
} mm_q8_job;

/* One output row: row = ob * m + i. */
static void mm_q8_row(void *ctx, size_t row)
{
    const mm_q8_job *j = ctx;
    const mm_geom *g = j->g;
    const size_t ob = row / g->m, i = row % g->m, k = g->k;
    size_t lb, rb;
    mm_batch(g, ob, &lb, &rb);
    const int16_t *a = j->pa + (lb * g->m + i) * k;
    int8_t *c = (int8_t *)j->c + row * g->n;
    int32_t *c32 = (int32_t *)j->c + row * g->n;
    for (size_t col = 0; col < g->n; col += 4) {
        const size_t w = g->n - col < 4 ? g->n - col : 4;
        const int16_t *b = j->pb + (rb * g->n + col) * k;
        int32_t acc[4];
        if (w == 4)
            j->dot4(a, b, k, k, acc);
        else /* the last columns one at a time (the four sums of one column) */
            for (size_t t = 0; t < w; t++) {
                int32_t one[4];
                j->dot4(a, b + t * k, 0, k, one);
                acc[t] = one[0];
            }
        for (size_t t = 0; t < w && j->wide; t++)
            c32[col + t] = acc[t];
        for (size_t t = 0; t < w && !j->wide; t++) {
            int32_t v = mp_multiply_by_quantized_multiplier(acc[t], j->q.mult, j->q.shift) +
                        j->q.zo;
            c[col + t] = (int8_t)(v < -128 ? -128 : (v > 127 ? 127 : v));
        }
    }
}

static mp_status mm_run_q8(mp_node *n, const mm_geom *g)
{
    mm_q8_job j = {.g = g, .c = n->out[0]->data, .wide = n->out[0]->dtype == MP_DT_INT32,
                   .dot4 = mm_pick_dot4()};
    mp_status st = mm_q8_params(n, &j.q);
    if (st != MP_OK)
        return st;
    if (mm_q8_scratch(g) > 0 && (!n->scratch || n->scratch_bytes < mm_q8_scratch(g)))
        return mp_node_fail(n, MP_ERR_BACKEND, "no scratch for the packed operands");
    const size_t m = g->m, k = g->k, nn = g->n;
    int16_t *pa = n->scratch, *pb = pa + g->lhs_batches * m * k;
    const int8_t *a = n->in[0]->data, *b = n->in[1]->data;
    for (size_t lb = 0; lb < g->lhs_batches; lb++, a += m * k)
        for (size_t i = 0; i < m; i++)
            for (size_t kk = 0; kk < k; kk++)
                *pa++ = (int16_t)((n->opt->adj_x ? a[kk * m + i] : a[i * k + kk]) - j.q.za);
    for (size_t rb = 0; rb < g->rhs_batches; rb++, b += k * nn)
        for (size_t col = 0; col < nn; col++)
            for (size_t kk = 0; kk < k; kk++)
                *pb++ = (int16_t)((n->opt->adj_y ? b[col * k + kk] : b[kk * nn + col]) - j.q.zb);
    j.pa = n->scratch;
    j.pb = j.pa + g->lhs_batches * m * k;
    pthreadpool_parallelize_1d(n->pool, mm_q8_row, &j, g->batches * m, 0);
    return MP_OK;
}

static mp_status mm_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 2, 2, 0);
    if (st != MP_OK)
        return st;
    if (n->in[0]->dtype == MP_DT_INT8) {
        mm_q8 q;
        mm_geom g;
        if ((st = mm_q8_params(n, &q)) != MP_OK || (st = mm_geometry(n, &g)) != MP_OK ||
            (st = mp_node_set_output_shape(n, g.out_rank, g.out_dims)) != MP_OK)
            return st;
        n->scratch_bytes = mm_q8_scratch(&g);
        return MP_OK;
    }
    if (n->in[0]->dtype == MP_DT_INT16) { /* 16x8: int16_linear.c */
        mm_geom g;
        if ((st = mp_i16_matmul_check(n)) != MP_OK || (st = mm_geometry(n, &g)) != MP_OK)
            return st;
        return mp_node_set_output_shape(n, g.out_rank, g.out_dims);
    }
    if (n->in[0]->dtype != MP_DT_FLOAT32)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "lhs '%s' is %s (supported: f32, i8, i16)",
                            mp_tname(n->in[0]), mp_dtype_name(n->in[0]->dtype));
    if ((st = mp_node_check_f32_io(n)) != MP_OK)
        return st;
    const mp_tensor *b = n->in[1];
    bool hybrid = b->dtype == MP_DT_INT8 || b->dtype == MP_DT_UINT8 || b->dtype == MP_DT_FLOAT16;
    if (b->dtype != MP_DT_FLOAT32 && !(hybrid && mm_const_rhs(n)))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "rhs '%s' is %s (supported: f32; i8, u8, f16 when constant)",
                            mp_tname(b), mp_dtype_name(b->dtype));
    if (n->opt->asymmetric_quantize_inputs && hybrid)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "asymmetric_quantize_inputs is not supported");
    mm_geom g;
    if ((st = mm_geometry(n, &g)) != MP_OK)
        return st;
    if ((st = mp_node_set_output_shape(n, g.out_rank, g.out_dims)) != MP_OK)
        return st;
    /* scratch: adj_x's transposed lhs (XNNPACK path) or the packed rhs (C path) */
    if (mm_const_rhs(n))
        n->scratch_bytes = n->opt->adj_x ? mp_tensor_elements(n->in[0]) * sizeof(float) : 0;
    else
        n->scratch_bytes = mm_packed_floats(&g, mm_pick().nr) * sizeof(float);
    return MP_OK;
}

static void mm_release(mp_node *n)
{
    mm_state *s = n->state;
    if (!s)
        return;
    for (size_t i = 0; i < s->n_ops; i++)
        mp_xnn_delete(&s->ops[i]);
    mp_mem_free(n->mem, s->ops);
    mp_node_free_state(n, NULL);
}

/* The lhs rows XNNPACK reads: the input, or its transpose in scratch for adj_x. */
static const float *mm_lhs_rows(const mp_node *n)
{
    return n->opt->adj_x ? n->scratch : n->in[0]->data;
}

static mp_status mm_prepare(mp_node *n)
{
    if (!mm_const_rhs(n) || n->in[0]->dtype != MP_DT_FLOAT32)
        return MP_OK; /* C paths: run reads the current shapes and pointers */
    mm_geom g;
    mp_status st = mm_geometry(n, &g);
    if (st != MP_OK)
        return st;
    mm_state *s = mp_node_state(n, sizeof *s);
    if (!s)
        return MP_ERR_NOMEM;
    if (s->ops && (s->k != g.k || s->n != g.n || s->n_ops != g.rhs_batches)) {
        for (size_t i = 0; i < s->n_ops; i++)
            mp_xnn_delete(&s->ops[i]);
        mp_mem_free(n->mem, s->ops);
        s->ops = NULL;
        s->n_ops = 0;
    }
    if (!s->ops && g.k > 0 && g.n > 0) {
        s->ops = mp_mem_calloc(n->mem, g.rhs_batches * sizeof(xnn_operator_t), 0, MP_MEM_KERNEL,
                               MP_OWNER_OP(n->index));
        if (!s->ops)
            return mp_node_fail(n, MP_ERR_NOMEM, "out of memory for %zu operators",
                                g.rhs_batches);
        s->n_ops = g.rhs_batches;
        s->k = g.k;
        s->n = g.n;
        const float *w;
        void *owned;
        if ((st = mp_const_as_f32(n, n->in[1], &w, &owned)) != MP_OK)
            return st;
        uint32_t flags = n->opt->adj_y ? 0 : XNN_FLAG_TRANSPOSE_WEIGHTS;
        for (size_t r = 0; r < g.rhs_batches && st == MP_OK; r++) {
            enum xnn_status xs = xnn_create_fully_connected_nc_f32(
                g.k, g.n, g.k, g.n, w + r * g.k * g.n, NULL, -INFINITY, INFINITY, flags,
                &s->ops[r]);
            xs = mp_xnn_created(xs, s->ops[r]);
            if (xs != xnn_status_success)
                st = mp_node_xnn_fail(n, xs, "create fully_connected_nc_f32");
        }
        if (owned) /* packed by XNNPACK: the dequantized copy is not needed any more */
            mp_mem_free(n->mem, owned);
        if (st != MP_OK)
            return st;
    }
    s->single = s->ops && g.rhs_batches == 1 && g.lhs_batches == g.batches;
    if (s->single && g.batches * g.m > 0) {
        enum xnn_status xs = xnn_setup_fully_connected_nc_f32(
            s->ops[0], g.batches * g.m, mm_lhs_rows(n), n->out[0]->data, n->pool);
        if (xs != xnn_status_success)
            return mp_node_xnn_fail(n, xs, "setup fully_connected_nc_f32");
    }
    return MP_OK;
}

/* adj_x: the lhs batches transposed into scratch ([K, M] -> [M, K] each). */
static void mm_transpose_lhs(mp_node *n, const mm_geom *g)
{
    int32_t dims[3] = {(int32_t)g->lhs_batches, (int32_t)g->k, (int32_t)g->m};
    static const int32_t perm[3] = {0, 2, 1};
    mp_permute(n->in[0]->data, n->scratch, 3, dims, perm, sizeof(float));
}

static mp_status mm_run(mp_node *n)
{
    mm_geom g;
    mp_status st = mm_geometry(n, &g);
    if (st != MP_OK)
        return st;
    mp_tensor *out = n->out[0];
    char b1[96];
    if (out->rank != g.out_rank ||
        memcmp(out->dims, g.out_dims, sizeof(int32_t) * (size_t)g.out_rank) != 0)
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' %s does not match the product",
                            mp_tname(out), SHAPE_STR(out, b1));
    size_t total = g.batches * g.m * g.n;
    if (total == 0)
        return MP_OK;
    if (n->in[0]->dtype == MP_DT_INT8)
        return mm_run_q8(n, &g); /* (k = 0: sums of nothing, the output zero point) */
    if (n->in[0]->dtype == MP_DT_INT16)
        return mp_i16_matmul_run(n, &(mp_i16_matmul_shape){
            g.m, g.k, g.n, g.batches, g.lhs_batches, g.rhs_batches, n->opt->adj_x,
            n->opt->adj_y, mm_batch_of, &g});
    if (g.k == 0) { /* empty sums */
        memset(out->data, 0, total * sizeof(float));
        return MP_OK;
    }
    if (n->opt->adj_x && mm_const_rhs(n) && !n->scratch)
        return mp_node_fail(n, MP_ERR_BACKEND, "no scratch for the transposed lhs");
    mm_state *s = n->state;
    if (mm_const_rhs(n)) {
        if (!s || !s->ops)
            return mp_node_fail(n, MP_ERR_BACKEND, "run before prepare");
        if (n->opt->adj_x)
            mm_transpose_lhs(n, &g);
        if (s->single) {
            enum xnn_status xs = xnn_run_operator(s->ops[0], n->pool);
            return xs == xnn_status_success ? MP_OK
                                            : mp_node_xnn_fail(n, xs, "run fully_connected");
        }
        const float *rows = mm_lhs_rows(n);
        for (size_t ob = 0; ob < g.batches; ob++) {
            size_t lb, rb;
            mm_batch(&g, ob, &lb, &rb);
            enum xnn_status xs = xnn_setup_fully_connected_nc_f32(
                s->ops[rb], g.m, rows + lb * g.m * g.k, (float *)out->data + ob * g.m * g.n,
                n->pool);
            if (xs == xnn_status_success)
                xs = xnn_run_operator(s->ops[rb], n->pool);
            if (xs != xnn_status_success)
                return mp_node_xnn_fail(n, xs, "run fully_connected");
        }
        return MP_OK;
    }
    mm_job j = {.g = &g, .v = mm_pick(), .a = n->in[0]->data, .b = n->in[1]->data,
                .c = out->data, .bp = n->scratch, .adj_x = n->opt->adj_x,
                .adj_y = n->opt->adj_y};
    if (!j.bp || n->scratch_bytes < mm_packed_floats(&g, j.v.nr) * sizeof(float))
        return mp_node_fail(n, MP_ERR_BACKEND, "no scratch for the packed rhs");
    j.mtiles = (g.m + j.v.mr - 1) / j.v.mr;
    j.panels = (g.n + j.v.nr - 1) / j.v.nr;
    pthreadpool_parallelize_1d(n->pool, mm_pack, &j, g.rhs_batches * j.panels, 0);
    pthreadpool_parallelize_2d(n->pool, mm_tile_task, &j, g.batches * j.mtiles, j.panels, 0);
    return MP_OK;
}

const mp_kernel mp_kernels_matmul[] = {
    {.opcode = MP_OP_BATCH_MATMUL, .min_inputs = 2, .max_inputs = 2, .n_outputs = 1,
     .infer = mm_infer, .prepare = mm_prepare, .run = mm_run, .release = mm_release},
    {.opcode = -1},
};
