/* Matrix products of the training step on XNNPACK's fully connected operator. Weights change
 * at every step, so each product creates its operator (which packs the right-hand operand),
 * runs it and deletes it; every allocation XNNPACK makes meanwhile comes from a pool tensor
 * of the step (a disposable buffer planned with the others) through a bump allocator, so a
 * planned step allocates nothing. */
#include <string.h>
#include <xnnpack.h>

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
