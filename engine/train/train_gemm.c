/* Matrix products of the training step. Forward and dL/dX products run on XNNPACK's fully
 * connected operator: weights change at every step, so each product creates its operator
 * (which packs the weights, the small operand), runs it and deletes it; every allocation
 * XNNPACK makes meanwhile comes from a pool tensor of the step (a disposable buffer planned
 * with the others) through a bump allocator, so a planned step allocates nothing. The weight
 * gradient dW = dZ^T A reduces over the rows of both operands, which XNNPACK's operator
 * cannot read in place (its reduction runs along the rows of its input): a blocked C product
 * here reads dZ and A where they are, with no transposed copy and no packing of A. */
#include <string.h>
#include <xnnpack.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "engine/train/train_internal.h"

#define POOL_HDR 64

typedef struct bump {
    char *base;
    size_t size, used;
    bool overflow;
} bump;

static void *bump_aligned(void *ctx, size_t align, size_t size)
{
    bump *b = ctx;
    if (align < POOL_HDR)
        align = POOL_HDR;
    size_t at = (b->used + POOL_HDR + align - 1) & ~(align - 1);
    if (at + size > b->size || at < b->used) {
        b->overflow = true;
        return NULL;
    }
    memcpy(b->base + at - sizeof(size_t), &size, sizeof size);
    b->used = at + size;
    return b->base + at;
}

static void *bump_alloc(void *ctx, size_t size)
{
    return bump_aligned(ctx, POOL_HDR, size);
}

static void *bump_realloc(void *ctx, void *p, size_t size)
{
    void *q = bump_aligned(ctx, POOL_HDR, size);
    if (q && p) {
        size_t old;
        memcpy(&old, (char *)p - sizeof old, sizeof old);
        memcpy(q, p, old < size ? old : size);
    }
    return q;
}

static void bump_free(void *ctx, void *p)
{
    (void)ctx, (void)p; /* the pool is reset after each product */
}

size_t mp_tr_gemm_pool_bytes(size_t in_ch, size_t out_ch)
{
    /* packed weights: output channels rounded up to the widest tile (XNNPACK's nr <= 64),
     * input channels to kr * sr <= 8, one bias per output channel; then the operator's own
     * structure and alignment headers */
    size_t nc = (out_ch + 63) & ~(size_t)63;
    size_t kc = (in_ch + 7) & ~(size_t)7;
    return (nc * (kc + 1) + 64) * sizeof(float) + 16384;
}

mp_status mp_tr_gemm(mp_trainer *t, float *pool, size_t pool_bytes, size_t M, size_t N, size_t K,
                  const float *A, size_t lda, const float *B, bool b_kn, const float *bias,
                  float *C, size_t ldc, float lo, float hi, mp_error *err)
{
    if (M == 0 || N == 0)
        return MP_OK;
    if (K == 0) {
        for (size_t i = 0; i < M; i++)
            for (size_t j = 0; j < N; j++) {
                float v = bias ? bias[j] : 0.0f;
                C[i * ldc + j] = v < lo ? lo : v > hi ? hi : v;
            }
        return MP_OK;
    }
    bump b = {(char *)pool, pool_bytes, 0, false};
    struct xnn_allocator a = {&b, bump_alloc, bump_realloc, bump_free, bump_aligned, bump_free};
    mp_mem_xnn_redirect(&a);
    xnn_operator_t op = NULL;
    enum xnn_status xs = xnn_create_fully_connected_nc_f32(
        K, N, lda, ldc, B, bias, lo, hi, b_kn ? XNN_FLAG_TRANSPOSE_WEIGHTS : 0, &op);
    if (xs == xnn_status_success)
        xs = xnn_setup_fully_connected_nc_f32(op, M, A, C, t->pool);
    if (xs == xnn_status_success)
        xs = xnn_run_operator(op, t->pool);
    if (op)
        xnn_delete_operator(op);
    mp_mem_xnn_redirect(NULL);
    if (b.overflow)
        return mp_fail(err, MP_ERR_BACKEND, "%s: XNNPACK fully connected %zux%zu: its packed "
                       "operand outgrew the pool of %zu bytes", t->label, K, N, pool_bytes);
    if (xs != xnn_status_success)
        return mp_fail(err, MP_ERR_BACKEND, "%s: XNNPACK fully connected %zux%zu (batch %zu) "
                       "failed (status %d)", t->label, K, N, M, (int)xs);
    return MP_OK;
}

/* ---- dW = dZ^T A, blocked C ------------------------------------------------------------ */

/* Rows of the reduction per block: a tile's strip of A (TN_MB x 32 floats, 16 KB) stays in
 * L1 while the tiles of one task walk down dW; dW rows per task (parallel unit). */
#define TN_MB 128
#define TN_NG 64
#define TN_RMAX 8
#define TN_KMAX 32

/* c[R][KC] (row stride lc) += sum over m < mb of z[m * lz + r] * a[m * la + j]: a full tile. */
typedef void (*tn_tile_fn)(size_t mb, const float *z, size_t lz, const float *a, size_t la,
                           float *c, size_t lc);

static void tn_tile_c(size_t mb, const float *z, size_t lz, const float *a, size_t la, float *c,
                      size_t lc)
{
    float acc[4][8] = {{0}};
    for (size_t m = 0; m < mb; m++, z += lz, a += la)
        for (size_t r = 0; r < 4; r++)
            for (size_t j = 0; j < 8; j++)
                acc[r][j] += z[r] * a[j];
    for (size_t r = 0; r < 4; r++)
        for (size_t j = 0; j < 8; j++)
            c[r * lc + j] += acc[r][j];
}

#if defined(__x86_64__)
/* One named accumulator per register: AVX-512 8 x 32 (16 of 32 registers), AVX2 4 x 16
 * (8 of 16). Per reduction row: the tile's strip of A in registers, one broadcast of dZ per
 * row of the tile, one fused multiply-add per accumulator. */
__attribute__((target("avx512f,fma"))) static void
tn_tile_avx512(size_t mb, const float *z, size_t lz, const float *a, size_t la, float *c,
               size_t lc)
{
    __m512 c00 = _mm512_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    __m512 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00, c60 = c00;
    __m512 c61 = c00, c70 = c00, c71 = c00;
    for (size_t m = 0; m < mb; m++, z += lz, a += la) {
        const __m512 b0 = _mm512_loadu_ps(a), b1 = _mm512_loadu_ps(a + 16);
#define TN_ROW(i)                                                                              \
    {                                                                                          \
        const __m512 s = _mm512_set1_ps(z[i]);                                                 \
        c##i##0 = _mm512_fmadd_ps(s, b0, c##i##0);                                             \
        c##i##1 = _mm512_fmadd_ps(s, b1, c##i##1);                                             \
    }
        TN_ROW(0) TN_ROW(1) TN_ROW(2) TN_ROW(3) TN_ROW(4) TN_ROW(5) TN_ROW(6) TN_ROW(7)
#undef TN_ROW
    }
#define TN_ADD(i)                                                                              \
    _mm512_storeu_ps(c + (i) * lc, _mm512_add_ps(_mm512_loadu_ps(c + (i) * lc), c##i##0));    \
    _mm512_storeu_ps(c + (i) * lc + 16,                                                        \
                     _mm512_add_ps(_mm512_loadu_ps(c + (i) * lc + 16), c##i##1));
    TN_ADD(0) TN_ADD(1) TN_ADD(2) TN_ADD(3) TN_ADD(4) TN_ADD(5) TN_ADD(6) TN_ADD(7)
#undef TN_ADD
}

__attribute__((target("avx2,fma"))) static void
tn_tile_avx2(size_t mb, const float *z, size_t lz, const float *a, size_t la, float *c,
             size_t lc)
{
    __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    __m256 c30 = c00, c31 = c00;
    for (size_t m = 0; m < mb; m++, z += lz, a += la) {
        const __m256 b0 = _mm256_loadu_ps(a), b1 = _mm256_loadu_ps(a + 8);
#define TN_ROW(i)                                                                              \
    {                                                                                          \
        const __m256 s = _mm256_broadcast_ss(z + (i));                                         \
        c##i##0 = _mm256_fmadd_ps(s, b0, c##i##0);                                             \
        c##i##1 = _mm256_fmadd_ps(s, b1, c##i##1);                                             \
    }
        TN_ROW(0) TN_ROW(1) TN_ROW(2) TN_ROW(3)
#undef TN_ROW
    }
#define TN_ADD(i)                                                                              \
    _mm256_storeu_ps(c + (i) * lc, _mm256_add_ps(_mm256_loadu_ps(c + (i) * lc), c##i##0));    \
    _mm256_storeu_ps(c + (i) * lc + 8, _mm256_add_ps(_mm256_loadu_ps(c + (i) * lc + 8), c##i##1));
    TN_ADD(0) TN_ADD(1) TN_ADD(2) TN_ADD(3)
#undef TN_ADD
}
#endif

typedef struct tn_variant {
    tn_tile_fn fn;
    size_t r, kc; /* tile: rows of dW, columns */
} tn_variant;

static int g_tn_cap = 2; /* tests: the widest kernel allowed (0 C, 1 AVX2, 2 AVX-512) */

int mp_tr_gemm_tn_limit(int level)
{
    int old = g_tn_cap;
    g_tn_cap = level;
    return old;
}

static tn_variant tn_pick(int *level)
{
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (g_tn_cap >= 2 && __builtin_cpu_supports("avx512f")) {
        *level = 2;
        return (tn_variant){tn_tile_avx512, 8, 32};
    }
    if (g_tn_cap >= 1 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        *level = 1;
        return (tn_variant){tn_tile_avx2, 4, 16};
    }
#endif
    *level = 0;
    return (tn_variant){tn_tile_c, 4, 8};
}

typedef struct tn_job {
    size_t M, N, K, ldz, lda, ldw;
    const float *z, *a;
    float *w, *db;
    tn_variant v;
} tn_job;

/* An operand block of rows x w floats at src (rows *ld apart) as the kernel reads it, width
 * wide: src itself when w is the width, else a copy in pad zero-padded to the width (and *ld
 * set to the width). */
static const float *tn_operand(float *pad, size_t width, const float *src, size_t *ld,
                               size_t rows, size_t w)
{
    if (w == width)
        return src;
    for (size_t m = 0; m < rows; m++) {
        memcpy(pad + m * width, src + m * *ld, w * sizeof(float));
        memset(pad + m * width + w, 0, (width - w) * sizeof(float));
    }
    *ld = width;
    return pad;
}

#if defined(__x86_64__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static void tn_add_row(float *restrict d, const float *restrict z, size_t n)
{
    for (size_t i = 0; i < n; i++)
        d[i] += z[i];
}

/* Task (k strip ks, group ng of dW rows): zero its part of dW, then add every block of the
 * reduction. A partial strip of A or group of dZ columns is copied, zero-padded, to a local
 * buffer, and a partial tile is computed into a local tile and its valid part added. */
static void tn_task(void *ctx, size_t ks, size_t ng)
{
    const tn_job *j = ctx;
    const size_t R = j->v.r, KC = j->v.kc;
    size_t k0 = ks * KC, kr = j->K - k0 < KC ? j->K - k0 : KC;
    size_t n_lo = ng * TN_NG, n_hi = n_lo + TN_NG < j->N ? n_lo + TN_NG : j->N;
    float apad[TN_MB * TN_KMAX], zpad[TN_MB * TN_RMAX], tile[TN_RMAX * TN_KMAX];
    float *db = ks == 0 ? j->db : NULL; /* the first strip's tasks sum dZ's columns */
    for (size_t n = n_lo; n < n_hi; n++)
        memset(j->w + n * j->ldw + k0, 0, kr * sizeof(float));
    if (db)
        memset(db + n_lo, 0, (n_hi - n_lo) * sizeof(float));
    for (size_t m0 = 0; m0 < j->M; m0 += TN_MB) {
        size_t mb = j->M - m0 < TN_MB ? j->M - m0 : TN_MB;
        for (size_t m = 0; db && m < mb; m++) /* the block is in cache for the tiles */
            tn_add_row(db + n_lo, j->z + (m0 + m) * j->ldz + n_lo, n_hi - n_lo);
        size_t las = j->lda;
        const float *as = tn_operand(apad, KC, j->a + m0 * j->lda + k0, &las, mb, kr);
        for (size_t n0 = n_lo; n0 < n_hi; n0 += R) {
            size_t nr = n_hi - n0 < R ? n_hi - n0 : R, lzs = j->ldz;
            const float *zs = tn_operand(zpad, R, j->z + m0 * j->ldz + n0, &lzs, mb, nr);
            float *c = j->w + n0 * j->ldw + k0;
            if (nr == R && kr == KC) {
                j->v.fn(mb, zs, lzs, as, las, c, j->ldw);
                continue;
            }
            memset(tile, 0, R * KC * sizeof(float));
            j->v.fn(mb, zs, lzs, as, las, tile, KC);
            for (size_t r = 0; r < nr; r++)
                for (size_t k = 0; k < kr; k++)
                    c[r * j->ldw + k] += tile[r * KC + k];
        }
    }
}

void mp_tr_gemm_tn(pthreadpool_t pool, size_t M, size_t N, size_t K, const float *dz,
                   size_t ldz, const float *a, size_t lda, float *dw, size_t ldw, float *db)
{
    if (N == 0)
        return;
    if (K == 0) { /* no weight gradient to make; the column sums still */
        for (size_t n = 0; db && n < N; n++)
            db[n] = 0.0f;
        for (size_t m = 0; db && m < M; m++)
            tn_add_row(db, dz + m * ldz, N);
        return;
    }
    int level;
    tn_job j = {M, N, K, ldz, lda, ldw, dz, a, dw, db, tn_pick(&level)};
    size_t strips = (K + j.v.kc - 1) / j.v.kc, groups = (N + TN_NG - 1) / TN_NG;
    pthreadpool_parallelize_2d(pool, tn_task, &j, strips, groups, 0);
}
