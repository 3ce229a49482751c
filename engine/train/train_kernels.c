/* Forward and backward kernels of the training step: matrix products (fully connected, and
 * convolutions as im2col products) on XNNPACK through mp_tr_gemm, weight gradients through
 * the blocked C product mp_tr_gemm_tn, everything else in plain C (hot loops compiled for
 * AVX-512, AVX2 and baseline x86-64, chosen at load time; depthwise convolutions sixteen
 * channels at a time in a register). Each backward writes its input's back-prop (or adds to
 * it when another consumer wrote it first) and its weights' gradients; a fused activation's
 * derivative is applied to dY in place. */
#include <math.h>
#include <string.h>

#include "engine/train/train_internal.h"

#if defined(__x86_64__) && !defined(__clang__)
/* products and sums fused into one instruction where the processor has it (ISO C mode turns
 * GCC's contraction off) */
#pragma GCC optimize("fp-contract=fast")
#define HOT __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define HOT
#endif

static size_t pool_bytes(mp_trainer *t, int32_t i)
{
    return t->t[i].bytes;
}

HOT static void put(float *restrict dst, const float *restrict src, size_t n, bool acc)
{
    if (acc)
        for (size_t i = 0; i < n; i++)
            dst[i] += src[i];
    else
        memcpy(dst, src, n * sizeof *dst);
}

HOT static void clamp(float *restrict y, size_t n, float lo, float hi)
{
    if (lo == -INFINITY && hi == INFINITY)
        return;
    for (size_t i = 0; i < n; i++)
        y[i] = y[i] < lo ? lo : y[i] > hi ? hi : y[i];
}

/* dY *= the fused activation's derivative, read from Y. */
HOT static void act_mask(float *restrict dy, const float *restrict y, size_t n, float lo,
                         float hi)
{
    if (lo == -INFINITY && hi == INFINITY)
        return;
    for (size_t i = 0; i < n; i++)
        dy[i] = y[i] > lo && y[i] < hi ? dy[i] : 0.0f;
}

/* One row of dY: the fused activation's derivative applied in place (from Y's row), and the
 * row added to db when there is one. */
HOT static void mask_row(float *restrict dy, const float *restrict y, float *restrict db,
                         size_t n, float lo, float hi)
{
    if (lo != -INFINITY || hi != INFINITY)
        for (size_t j = 0; j < n; j++)
            dy[j] = y[j] > lo && y[j] < hi ? dy[j] : 0.0f;
    if (db)
        for (size_t j = 0; j < n; j++)
            db[j] += dy[j];
}

typedef struct mask_job {
    float *dy;
    const float *y;
    size_t rows, cols;
    float lo, hi;
} mask_job;

#define MASK_ROWS 64 /* rows per task */

static void mask_task(void *ctx, size_t k)
{
    const mask_job *j = ctx;
    size_t r1 = (k + 1) * MASK_ROWS < j->rows ? (k + 1) * MASK_ROWS : j->rows;
    for (size_t r = k * MASK_ROWS; r < r1; r++)
        mask_row(j->dy + r * j->cols, j->y + r * j->cols, NULL, j->cols, j->lo, j->hi);
}

/* dY [rows, cols] masked by the fused activation (nothing to do without one), rows in tasks
 * on the pool. */
static void mask_rows(pthreadpool_t pool, float *dy, const float *y, size_t rows, size_t cols,
                      float lo, float hi)
{
    if (lo == -INFINITY && hi == INFINITY)
        return;
    mask_job j = {dy, y, rows, cols, lo, hi};
    pthreadpool_parallelize_1d(pool, mask_task, &j, (rows + MASK_ROWS - 1) / MASK_ROWS, 0);
}

/* dY [rows, cols] masked by the fused activation, and its column sums in db (when not NULL):
 * one pass. */
static void mask_sums(float *dy, const float *y, float *db, size_t rows, size_t cols, float lo,
                      float hi)
{
    if (db)
        memset(db, 0, cols * sizeof *db);
    for (size_t i = 0; i < rows; i++)
        mask_row(dy + i * cols, y + i * cols, db, cols, lo, hi);
}

/* The columns of the convolution's product: for each output pixel, its window's rows of kw
 * taps of C channels (zeros outside the input). Without dilation a filter row is one run of
 * the input row, copied by a loop (a few floats for a first layer of 3 channels, where a
 * call per tap cost more than the copy). */
HOT static void im2col(const tr_node *n, const float *restrict x, float *restrict cols)
{
    size_t C = (size_t)n->C, run = (size_t)n->kw * C;
    for (int32_t b = 0; b < n->B; b++)
        for (int32_t oh = 0; oh < n->OH; oh++)
            for (int32_t ow = 0; ow < n->OW; ow++) {
                float *row = cols + (((size_t)b * n->OH + oh) * n->OW + ow) * n->K;
                int32_t iw0 = ow * n->sw - n->pl;
                for (int32_t ki = 0; ki < n->kh; ki++, row += run) {
                    int32_t ih = oh * n->sh - n->pt + ki * n->dh;
                    const float *xr = x + ((size_t)b * n->H + ih) * n->W * C;
                    for (int32_t kj = 0; kj < n->kw;) {
                        int32_t iw = iw0 + kj * n->dw_;
                        size_t at = (size_t)kj * C, len = C;
                        if (ih < 0 || ih >= n->H || iw < 0 || iw >= n->W) {
                            for (size_t i = 0; i < C; i++)
                                row[at + i] = 0.0f;
                            kj++;
                            continue;
                        }
                        int32_t k1 = kj + 1; /* taps up to k1 lie inside and, undilated, next */
                        while (n->dw_ == 1 && k1 < n->kw && iw0 + k1 < n->W)
                            k1++;
                        len = (size_t)(k1 - kj) * C;
                        const float *src = xr + (size_t)iw * C;
                        for (size_t i = 0; i < len; i++)
                            row[at + i] = src[i];
                        kj = k1;
                    }
                }
            }
}

HOT static void col2im_add(const tr_node *n, const float *restrict cols, float *restrict dx)
{
    size_t C = (size_t)n->C;
    for (int32_t b = 0; b < n->B; b++)
        for (int32_t oh = 0; oh < n->OH; oh++)
            for (int32_t ow = 0; ow < n->OW; ow++) {
                const float *row = cols + (((size_t)b * n->OH + oh) * n->OW + ow) * n->K;
                for (int32_t ki = 0; ki < n->kh; ki++) {
                    int32_t ih = oh * n->sh - n->pt + ki * n->dh;
                    for (int32_t kj = 0; kj < n->kw; kj++, row += C) {
                        int32_t iw = ow * n->sw - n->pl + kj * n->dw_;
                        if (ih < 0 || ih >= n->H || iw < 0 || iw >= n->W)
                            continue;
                        float *d = dx + (((size_t)b * n->H + ih) * n->W + iw) * C;
                        for (size_t c = 0; c < C; c++)
                            d[c] += row[c];
                    }
                }
            }
}

/* Depthwise convolutions. The forward and the input gradient are sums over a pixel's taps of
 * products of two rows (input and weights; weights and dY): the taps are listed, DW_TAPS at a
 * time, and dw_dot sums them sixteen channels at a time in one vector accumulator, four such
 * at once where the channels allow (GCC's generic vectors, loaded and stored through memcpy:
 * no alignment assumed); channels past a multiple of sixteen, and depth multipliers above 1,
 * go one at a time. The forward clamps each output pixel to the fused activation's range
 * while it is in cache. */
typedef float v16 __attribute__((vector_size(64)));
#define V16 16
#define VLOAD(v, p) memcpy(&(v), (p), sizeof(v16))
#define VSTORE(p, v) memcpy((p), &(v), sizeof(v16))
#define DW_TAPS 32 /* taps listed at a time */

/* out[c] = init[c] (0 when init is NULL; init may be out) + sum over k < nt of p[k][c] q[k][c],
 * for c < n. */
HOT static void dw_dot(float *out, const float *init, int nt, const float *const *p,
                       const float *const *q, size_t n)
{
    size_t c = 0;
    for (; c + 4 * V16 <= n; c += 4 * V16) {
        v16 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, p0, p1, p2, p3, q0, q1, q2, q3;
        if (init) {
            VLOAD(a0, init + c), VLOAD(a1, init + c + 16);
            VLOAD(a2, init + c + 32), VLOAD(a3, init + c + 48);
        }
        for (int k = 0; k < nt; k++) {
            const float *pk = p[k] + c, *qk = q[k] + c;
            VLOAD(p0, pk), VLOAD(p1, pk + 16), VLOAD(p2, pk + 32), VLOAD(p3, pk + 48);
            VLOAD(q0, qk), VLOAD(q1, qk + 16), VLOAD(q2, qk + 32), VLOAD(q3, qk + 48);
            a0 += p0 * q0, a1 += p1 * q1, a2 += p2 * q2, a3 += p3 * q3;
        }
        VSTORE(out + c, a0), VSTORE(out + c + 16, a1);
        VSTORE(out + c + 32, a2), VSTORE(out + c + 48, a3);
    }
    for (; c + V16 <= n; c += V16) {
        v16 a0 = {0}, a1 = {0}, pv, qv; /* even and odd taps: two chains of sums */
        if (init)
            VLOAD(a0, init + c);
        int k = 0;
        for (; k + 2 <= nt; k += 2) {
            VLOAD(pv, p[k] + c);
            VLOAD(qv, q[k] + c);
            a0 += pv * qv;
            VLOAD(pv, p[k + 1] + c);
            VLOAD(qv, q[k + 1] + c);
            a1 += pv * qv;
        }
        if (k < nt) {
            VLOAD(pv, p[k] + c);
            VLOAD(qv, q[k] + c);
            a0 += pv * qv;
        }
        a0 += a1;
        VSTORE(out + c, a0);
    }
    for (; c < n; c++) {
        float acc = init ? init[c] : 0.0f;
        for (int k = 0; k < nt; k++)
            acc += p[k][c] * q[k][c];
        out[c] = acc;
    }
}

/* A pixel's listed taps: the row each reads of the first operand and of the second. */
typedef struct dw_list {
    int nt;
    bool first;      /* nothing summed into the output yet */
    const float *p[DW_TAPS], *q[DW_TAPS];
} dw_list;

/* Forward: out (OC channels) += the listed taps (x row, weight row), from the bias at first. */
static void dw_fwd_flush(const tr_node *n, dw_list *l, float *out, const float *bias)
{
    size_t OC = (size_t)n->OC, mult = (size_t)n->mult;
    const float *init = l->first ? bias : out;
    if (mult == 1) {
        dw_dot(out, init, l->nt, l->p, l->q, OC);
    } else {
        for (size_t oc = 0; oc < OC; oc++) {
            float acc = init ? init[oc] : 0.0f;
            for (int k = 0; k < l->nt; k++)
                acc += l->p[k][oc / mult] * l->q[k][oc];
            out[oc] = acc;
        }
    }
    l->nt = 0;
    l->first = false;
}

/* Input gradient: d (C channels) += the listed taps (weight row, dY row), over d's old value
 * when acc_into or after the first list. */
static void dw_dx_flush(const tr_node *n, dw_list *l, float *d, bool acc_into)
{
    size_t C = (size_t)n->C, mult = (size_t)n->mult;
    const float *init = acc_into || !l->first ? d : NULL;
    if (mult == 1) {
        dw_dot(d, init, l->nt, l->p, l->q, C);
    } else {
        for (size_t c = 0; c < C; c++) {
            float acc = init ? init[c] : 0.0f;
            for (int k = 0; k < l->nt; k++)
                for (size_t j = 0; j < mult; j++)
                    acc += l->p[k][c * mult + j] * l->q[k][c * mult + j];
            d[c] = acc;
        }
    }
    l->nt = 0;
    l->first = false;
}

/* The common depthwise filter, 3 x 3 undilated, one output channel per input channel, and
 * channels a multiple of sixteen, has row runs of its own: where all nine taps lie inside, a
 * run of pixels is done sixteen channels at a time with the nine weight vectors held in
 * registers (one load per product instead of two). */
static bool dw3(const tr_node *n)
{
    return n->kh == 3 && n->kw == 3 && n->dh == 1 && n->dw_ == 1 && n->mult == 1 &&
           n->C % V16 == 0;
}

/* The nine weight vectors of channels c.. (w [9][C]). */
#define DW3_WEIGHTS(w, C, c)                                                                   \
    v16 w0, w1, w2, w3, w4, w5, w6, w7, w8;                                                    \
    VLOAD(w0, (w) + 0 * (C) + (c)), VLOAD(w1, (w) + 1 * (C) + (c));                            \
    VLOAD(w2, (w) + 2 * (C) + (c)), VLOAD(w3, (w) + 3 * (C) + (c));                            \
    VLOAD(w4, (w) + 4 * (C) + (c)), VLOAD(w5, (w) + 5 * (C) + (c));                            \
    VLOAD(w6, (w) + 6 * (C) + (c)), VLOAD(w7, (w) + 7 * (C) + (c));                            \
    VLOAD(w8, (w) + 8 * (C) + (c))

/* acc += the row of three vectors at p, p + step, p + 2 step times wa, wb, wc. */
#define DW3_ROW(acc, p, step, wa, wb, wc)                                                      \
    {                                                                                          \
        v16 t_;                                                                                \
        VLOAD(t_, (p)), acc += t_ * (wa);                                                      \
        VLOAD(t_, (p) + (step)), acc += t_ * (wb);                                             \
        VLOAD(t_, (p) + 2 * (step)), acc += t_ * (wc);                                         \
    }

/* Forward, output row (b, oh) whose three input rows lie inside, columns [f0, f1) whose
 * three input columns do. */
HOT static void dw3_fwd_run(const tr_node *n, const float *x, const float *w,
                            const float *bias, float *y, int32_t b, int32_t oh, int32_t f0,
                            int32_t f1)
{
    size_t C = (size_t)n->C, row = (size_t)n->W * C;
    const float *r0 = x + ((size_t)b * n->H + (size_t)(oh * n->sh - n->pt)) * row;
    float *out = y + ((size_t)b * n->OH + oh) * n->OW * C;
    for (size_t c = 0; c < C; c += V16) {
        DW3_WEIGHTS(w, C, c);
        v16 bv = {0};
        if (bias)
            VLOAD(bv, bias + c);
        for (int32_t ow = f0; ow < f1; ow++) {
            const float *p = r0 + (size_t)(ow * n->sw - n->pl) * C + c;
            v16 acc = bv;
            DW3_ROW(acc, p, C, w0, w1, w2);
            DW3_ROW(acc, p + row, C, w3, w4, w5);
            DW3_ROW(acc, p + 2 * row, C, w6, w7, w8);
            VSTORE(out + (size_t)ow * C + c, acc);
        }
    }
    if (f1 > f0)
        clamp(out + (size_t)f0 * C, (size_t)(f1 - f0) * C, n->lo, n->hi);
}

/* Input gradient at stride 1, input row (b, ih) whose three dY rows lie inside, columns
 * [f0, f1) whose three dY columns do: dX = sum over the taps of w(ki, kj) dY(ih + pt - ki,
 * iw + pl - kj). */
HOT static void dw3_dx_run(const tr_node *n, const float *w, const float *dy, float *dx,
                           bool acc_into, int32_t b, int32_t ih, int32_t f0, int32_t f1)
{
    size_t C = (size_t)n->C, row = (size_t)n->OW * C;
    /* g points at dY(ih + pt, iw + pl): tap (ki, kj) reads g - ki row - kj C */
    const float *g0 = dy + ((size_t)b * n->OH + (size_t)(ih + n->pt)) * row;
    float *d = dx + ((size_t)b * n->H + ih) * n->W * C;
    for (size_t c = 0; c < C; c += V16) {
        DW3_WEIGHTS(w, C, c);
        for (int32_t iw = f0; iw < f1; iw++) {
            const float *g = g0 + (size_t)(iw + n->pl) * C + c;
            v16 acc = {0};
            if (acc_into)
                VLOAD(acc, d + (size_t)iw * C + c);
            DW3_ROW(acc, g - 2 * C, C, w2, w1, w0);
            DW3_ROW(acc, g - row - 2 * C, C, w5, w4, w3);
            DW3_ROW(acc, g - 2 * row - 2 * C, C, w8, w7, w6);
            VSTORE(d + (size_t)iw * C + c, acc);
        }
    }
}

/* The operands of a depthwise kernel's tasks (rows or channel ranges, on the pool). */
typedef struct dw_job {
    const tr_node *n;
    const float *x, *w, *bias, *y;
    float *out, *dy, *dw, *db;
    bool acc_into;
    int32_t f0, f1; /* the dw3 columns */
    size_t chunk;   /* weight gradient: channels per task */
} dw_job;

/* Forward of output row r (image r / OH, row r % OH). */
HOT static void dw_fwd_row(void *ctx, size_t r)
{
    const dw_job *j = ctx;
    const tr_node *n = j->n;
    const float *x = j->x, *w = j->w, *bias = j->bias;
    size_t OC = (size_t)n->OC, C = (size_t)n->C;
    int32_t b = (int32_t)(r / (size_t)n->OH), oh = (int32_t)(r % (size_t)n->OH);
    int32_t ih0 = oh * n->sh - n->pt;
    bool run = dw3(n) && ih0 >= 0 && ih0 + 2 < n->H && j->f1 > j->f0;
    dw_list l;
    if (run)
        dw3_fwd_run(n, x, w, bias, j->out, b, oh, j->f0, j->f1);
    for (int32_t ow = 0; ow < n->OW; ow++) {
        if (run && ow == j->f0)
            ow = j->f1;
        if (ow >= n->OW)
            break;
        float *out = j->out + (((size_t)b * n->OH + oh) * n->OW + ow) * OC;
        l.nt = 0;
        l.first = true;
        for (int32_t ki = 0; ki < n->kh; ki++) {
            int32_t ih = ih0 + ki * n->dh;
            for (int32_t kj = 0; ih >= 0 && ih < n->H && kj < n->kw; kj++) {
                int32_t iw = ow * n->sw - n->pl + kj * n->dw_;
                if (iw < 0 || iw >= n->W)
                    continue;
                l.p[l.nt] = x + (((size_t)b * n->H + ih) * n->W + iw) * C;
                l.q[l.nt] = w + ((size_t)ki * n->kw + kj) * OC;
                if (++l.nt == DW_TAPS)
                    dw_fwd_flush(n, &l, out, bias);
            }
        }
        if (l.nt || l.first)
            dw_fwd_flush(n, &l, out, bias);
        clamp(out, OC, n->lo, n->hi);
    }
}

static void dw_forward(pthreadpool_t pool, const tr_node *n, const float *x, const float *w,
                       const float *bias, float *y)
{
    /* the columns whose three input columns lie inside, for dw3 rows */
    int32_t f0 = (n->pl + n->sw - 1) / n->sw;
    int32_t f1 = n->W - 3 + n->pl < 0 ? 0 : (n->W - 3 + n->pl) / n->sw + 1;
    f1 = f1 > n->OW ? n->OW : f1;
    f0 = f0 > f1 ? f1 : f0;
    dw_job j = {.n = n, .x = x, .w = w, .bias = bias, .out = y, .f0 = f0, .f1 = f1};
    pthreadpool_parallelize_1d(pool, dw_fwd_row, &j, (size_t)n->B * n->OH, 0);
}

/* dW[tap][oc] = sum over output pixels of x(tap's input pixel) dY; row by row of the output
 * (first masked by the fused activation and added to db), tap by tap, the output pixels
 * whose tap lies inside the input in one accumulator per sixteen channels, four at once. */
HOT static void dw_wg_task(void *ctx, size_t k)
{
    const dw_job *j = ctx;
    const tr_node *n = j->n;
    const float *x = j->x, *y = j->y;
    float *dy = j->dy, *dw = j->dw, *db = j->db;
    size_t OC = (size_t)n->OC, C = (size_t)n->C, mult = (size_t)n->mult;
    size_t c0 = k * j->chunk, c1 = c0 + j->chunk < OC ? c0 + j->chunk : OC;
    for (size_t t = 0; t < (size_t)n->kh * n->kw; t++)
        memset(dw + t * OC + c0, 0, (c1 - c0) * sizeof *dw);
    if (db)
        memset(db + c0, 0, (c1 - c0) * sizeof *db);
    for (int32_t b = 0; b < n->B; b++)
        for (int32_t oh = 0; oh < n->OH; oh++) {
            size_t row = ((size_t)b * n->OH + oh) * n->OW * OC;
            float *g = dy + row;
            for (int32_t ow = 0; ow < n->OW; ow++) /* the row masked and summed, then read hot */
                mask_row(g + (size_t)ow * OC + c0, y + row + (size_t)ow * OC + c0,
                         db ? db + c0 : NULL, c1 - c0, n->lo, n->hi);
            for (int32_t ki = 0; ki < n->kh; ki++) {
                int32_t ih = oh * n->sh - n->pt + ki * n->dh;
                if (ih < 0 || ih >= n->H)
                    continue;
                const float *xr = x + ((size_t)b * n->H + ih) * n->W * C;
                for (int32_t kj = 0; kj < n->kw; kj++) {
                    /* output columns whose input column iw = ow sw - pl + kj dw lies inside */
                    int32_t off = kj * n->dw_ - n->pl, o0 = 0, o1 = n->OW;
                    while (o0 < o1 && o0 * n->sw + off < 0)
                        o0++;
                    while (o1 > o0 && (o1 - 1) * n->sw + off >= n->W)
                        o1--;
                    float *dwk = dw + ((size_t)ki * n->kw + kj) * OC;
                    size_t c = c0;
                    for (; mult == 1 && c + 4 * V16 <= c1; c += 4 * V16) {
                        v16 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, x0, x1, x2, x3, g0, g1, g2, g3;
                        for (int32_t ow = o0; ow < o1; ow++) {
                            const float *xp = xr + (size_t)(ow * n->sw + off) * C + c;
                            const float *gp = g + (size_t)ow * OC + c;
                            VLOAD(x0, xp), VLOAD(x1, xp + 16), VLOAD(x2, xp + 32);
                            VLOAD(x3, xp + 48);
                            VLOAD(g0, gp), VLOAD(g1, gp + 16), VLOAD(g2, gp + 32);
                            VLOAD(g3, gp + 48);
                            a0 += x0 * g0, a1 += x1 * g1, a2 += x2 * g2, a3 += x3 * g3;
                        }
                        VLOAD(x0, dwk + c), VLOAD(x1, dwk + c + 16);
                        VLOAD(x2, dwk + c + 32), VLOAD(x3, dwk + c + 48);
                        x0 += a0, x1 += a1, x2 += a2, x3 += a3;
                        VSTORE(dwk + c, x0), VSTORE(dwk + c + 16, x1);
                        VSTORE(dwk + c + 32, x2), VSTORE(dwk + c + 48, x3);
                    }
                    for (; mult == 1 && c + V16 <= c1; c += V16) {
                        /* four accumulators over the columns: the sums' latency overlaps */
                        v16 a[4] = {{0}, {0}, {0}, {0}}, xv, gv, dv;
                        int32_t ow = o0;
                        for (; ow + 4 <= o1; ow += 4)
                            for (int u = 0; u < 4; u++) {
                                VLOAD(xv, xr + (size_t)((ow + u) * n->sw + off) * C + c);
                                VLOAD(gv, g + (size_t)(ow + u) * OC + c);
                                a[u] += xv * gv;
                            }
                        for (; ow < o1; ow++) {
                            VLOAD(xv, xr + (size_t)(ow * n->sw + off) * C + c);
                            VLOAD(gv, g + (size_t)ow * OC + c);
                            a[0] += xv * gv;
                        }
                        VLOAD(dv, dwk + c);
                        dv += (a[0] + a[1]) + (a[2] + a[3]);
                        VSTORE(dwk + c, dv);
                    }
                    for (; c < c1; c++) {
                        float acc = 0.0f;
                        for (int32_t ow = o0; ow < o1; ow++)
                            acc += xr[(size_t)(ow * n->sw + off) * C + c / mult] *
                                   g[(size_t)ow * OC + c];
                        dwk[c] += acc;
                    }
                }
            }
        }
}

/* The weight gradient in tasks of channel ranges (each masks, sums and reduces its own
 * channels over every row): 64 channels a task, fewer when the pool has threads to feed. */
static void dw_weight_grad(pthreadpool_t pool, const tr_node *n, const float *x, const float *y,
                           float *dy, float *dw, float *db)
{
    size_t OC = (size_t)n->OC, threads = pool ? pthreadpool_get_threads_count(pool) : 1;
    size_t chunk = 4 * V16;
    while (threads > 1 && chunk > V16 && (OC + chunk - 1) / chunk < 2 * threads)
        chunk /= 2;
    dw_job j = {.n = n, .x = x, .y = y, .dy = dy, .dw = dw, .db = db, .chunk = chunk};
    pthreadpool_parallelize_1d(pool, dw_wg_task, &j, (OC + chunk - 1) / chunk, 0);
}

/* r / s into q when s divides r (r >= 0); strides 1 and 2 without a division. */
static inline bool dw_div(int32_t r, int32_t s, int32_t *q)
{
    if (s == 1) {
        *q = r;
        return true;
    }
    if (s == 2) {
        *q = r >> 1;
        return !(r & 1);
    }
    *q = r / s;
    return r % s == 0;
}

/* dX[input pixel][c] = sum over the output pixels whose window holds it of w(tap) dY: each
 * input pixel gathers its taps (the transposed convolution: ih = oh sh - pt + ki dh,
 * iw = ow sw - pl + kj dw), added to dX when acc_into. Input row r (image r / H, row r % H). */
HOT static void dw_dx_row(void *ctx, size_t r)
{
    const dw_job *j = ctx;
    const tr_node *n = j->n;
    const float *w = j->w;
    size_t OC = (size_t)n->OC, C = (size_t)n->C;
    int32_t b = (int32_t)(r / (size_t)n->H), ih = (int32_t)(r % (size_t)n->H);
    const float *gb = j->dy + (size_t)b * n->OH * n->OW * OC;
    bool run = dw3(n) && n->sh == 1 && n->sw == 1 && ih + n->pt - 2 >= 0 &&
               ih + n->pt < n->OH && j->f1 > j->f0;
    dw_list l;
    if (run)
        dw3_dx_run(n, w, j->dy, j->out, j->acc_into, b, ih, j->f0, j->f1);
    for (int32_t iw = 0; iw < n->W; iw++) {
        if (run && iw == j->f0)
            iw = j->f1;
        if (iw >= n->W)
            break;
        float *d = j->out + (((size_t)b * n->H + ih) * n->W + iw) * C;
        l.nt = 0;
        l.first = true;
        for (int32_t ki = 0; ki < n->kh; ki++) {
            int32_t rr = ih + n->pt - ki * n->dh, oh;
            if (rr < 0 || !dw_div(rr, n->sh, &oh) || oh >= n->OH)
                continue;
            for (int32_t kj = 0; kj < n->kw; kj++) {
                int32_t q = iw + n->pl - kj * n->dw_, ow;
                if (q < 0 || !dw_div(q, n->sw, &ow) || ow >= n->OW)
                    continue;
                l.p[l.nt] = w + ((size_t)ki * n->kw + kj) * OC;
                l.q[l.nt] = gb + ((size_t)oh * n->OW + ow) * OC;
                if (++l.nt == DW_TAPS)
                    dw_dx_flush(n, &l, d, j->acc_into);
            }
        }
        if (l.nt || l.first)
            dw_dx_flush(n, &l, d, j->acc_into);
    }
}

static void dw_input_grad(pthreadpool_t pool, const tr_node *n, const float *w,
                          const float *dy, float *dx, bool acc_into)
{
    /* stride 1: the columns whose three dY columns lie inside, for dw3 rows */
    int32_t f0 = 2 - n->pl < 0 ? 0 : 2 - n->pl, f1 = n->OW - n->pl < n->W ? n->OW - n->pl : n->W;
    f0 = f0 > f1 ? f1 : f0;
    dw_job j = {.n = n, .w = w, .dy = (float *)dy, .out = dx, .acc_into = acc_into,
                .f0 = f0, .f1 = f1};
    pthreadpool_parallelize_1d(pool, dw_dx_row, &j, (size_t)n->B * n->H, 0);
}

/* Pools: for each output, its window; max remembers the first largest input. */
static void pool_forward(const tr_node *n, const float *x, float *y, bool max)
{
    size_t C = (size_t)n->C;
    for (int32_t b = 0; b < n->B; b++)
        for (int32_t oh = 0; oh < n->OH; oh++)
            for (int32_t ow = 0; ow < n->OW; ow++) {
                float *out = y + (((size_t)b * n->OH + oh) * n->OW + ow) * C;
                int32_t h0 = oh * n->sh - n->pt, w0 = ow * n->sw - n->pl, cnt = 0;
                for (size_t c = 0; c < C; c++)
                    out[c] = max ? -INFINITY : 0.0f;
                for (int32_t ih = h0 < 0 ? 0 : h0; ih < h0 + n->kh && ih < n->H; ih++)
                    for (int32_t iw = w0 < 0 ? 0 : w0; iw < w0 + n->kw && iw < n->W; iw++) {
                        const float *in = x + (((size_t)b * n->H + ih) * n->W + iw) * C;
                        cnt++;
                        for (size_t c = 0; c < C; c++)
                            out[c] = max ? (in[c] > out[c] ? in[c] : out[c]) : out[c] + in[c];
                    }
                if (!max)
                    for (size_t c = 0; c < C; c++)
                        out[c] = cnt ? out[c] / (float)cnt : 0.0f;
            }
}

static void pool_backward(const tr_node *n, const float *x, const float *dy, float *dx, bool max)
{
    size_t C = (size_t)n->C;
    for (int32_t b = 0; b < n->B; b++)
        for (int32_t oh = 0; oh < n->OH; oh++)
            for (int32_t ow = 0; ow < n->OW; ow++) {
                const float *g = dy + (((size_t)b * n->OH + oh) * n->OW + ow) * C;
                int32_t h0 = oh * n->sh - n->pt, w0 = ow * n->sw - n->pl;
                int32_t ha = h0 < 0 ? 0 : h0, wa = w0 < 0 ? 0 : w0;
                int32_t hb = h0 + n->kh < n->H ? h0 + n->kh : n->H;
                int32_t wb = w0 + n->kw < n->W ? w0 + n->kw : n->W;
                if (hb <= ha || wb <= wa)
                    continue;
                if (!max) {
                    float inv = 1.0f / (float)((hb - ha) * (wb - wa));
                    for (int32_t ih = ha; ih < hb; ih++)
                        for (int32_t iw = wa; iw < wb; iw++) {
                            float *d = dx + (((size_t)b * n->H + ih) * n->W + iw) * C;
                            for (size_t c = 0; c < C; c++)
                                d[c] += g[c] * inv;
                        }
                    continue;
                }
                for (size_t c = 0; c < C; c++) {
                    size_t best = 0;
                    float bv = -INFINITY;
                    for (int32_t ih = ha; ih < hb; ih++)
                        for (int32_t iw = wa; iw < wb; iw++) {
                            size_t at = (((size_t)b * n->H + ih) * n->W + iw) * C + c;
                            if (x[at] > bv || (best == 0 && bv == -INFINITY)) {
                                bv = x[at];
                                best = at;
                            }
                        }
                    dx[best] += g[c];
                }
            }
}

/* Index of element i of the input in MEAN's output (reduced axes dropped). */
static size_t mean_out_index(const tr_node *n, size_t i)
{
    size_t out = 0, mul = 1;
    for (int32_t d = n->rank - 1; d >= 0; d--) {
        size_t dim = (size_t)n->in_dims[d], c = i % dim;
        i /= dim;
        if (!(n->axes_mask >> d & 1)) {
            out += c * mul;
            mul *= dim;
        }
    }
    return out;
}

/* Index of input element i in PAD's output. */
static size_t pad_out_index(const tr_node *n, size_t i)
{
    size_t out = 0, mul = 1;
    for (int32_t d = n->rank - 1; d >= 0; d--) {
        size_t dim = (size_t)n->in_dims[d], c = i % dim;
        i /= dim;
        out += (c + (size_t)n->pad_before[d]) * mul;
        mul *= (size_t)n->out_dims[d];
    }
    return out;
}

static void gemm_dx(mp_trainer *t, tr_node *n, const float *dz, const float *w, float *dst,
                    mp_status *st, mp_error *err)
{
    /* dX[M,K] = dZ[M,N] . W[N,K] */
    *st = mp_tr_gemm(t, TD(t, n->packb), pool_bytes(t, n->packb), n->M, n->K, n->N, dz, n->N, w,
                  true, NULL, dst, n->K, -INFINITY, INFINITY, err);
}

mp_status mp_tr_forward(mp_trainer *t, tr_node *n, mp_error *err)
{
    float *x = TD(t, n->x), *y = TD(t, n->y), *w = TD(t, n->w), *b = TD(t, n->b);
    size_t ny = t->t[n->y].n, nx = t->t[n->x].n;
    switch (n->opcode) {
    case MP_OP_FULLY_CONNECTED:
        return mp_tr_gemm(t, TD(t, n->packf), pool_bytes(t, n->packf), n->M, n->N, n->K, x, n->K, w,
                       false, b, y, n->N, n->lo, n->hi, err);
    case MP_OP_CONV_2D: {
        const float *a = x;
        if (!n->direct) {
            im2col(n, x, TD(t, n->cols));
            a = TD(t, n->cols);
        }
        return mp_tr_gemm(t, TD(t, n->packf), pool_bytes(t, n->packf), n->M, n->N, n->K, a, n->K, w,
                       false, b, y, n->N, n->lo, n->hi, err);
    }
    case MP_OP_DEPTHWISE_CONV_2D:
        dw_forward(t->pool, n, x, w, b, y);
        return MP_OK;
    case MP_OP_MAX_POOL_2D:
    case MP_OP_AVERAGE_POOL_2D:
        pool_forward(n, x, y, n->opcode == MP_OP_MAX_POOL_2D);
        clamp(y, ny, n->lo, n->hi);
        return MP_OK;
    case MP_OP_MEAN: {
        size_t cnt = ny ? nx / ny : 0;
        memset(y, 0, ny * sizeof *y);
        for (size_t i = 0; i < nx; i++)
            y[mean_out_index(n, i)] += x[i];
        for (size_t i = 0; i < ny; i++)
            y[i] /= (float)cnt;
        return MP_OK;
    }
    case MP_OP_RESHAPE:
        memcpy(y, x, ny * sizeof *y);
        return MP_OK;
    case MP_OP_SOFTMAX: {
        float beta = n->opt->beta;
        for (size_t r = 0; r < ny / n->N; r++) {
            const float *xr = x + r * n->N;
            float *yr = y + r * n->N, mx = -INFINITY, sum = 0.0f;
            for (size_t j = 0; j < n->N; j++)
                mx = xr[j] > mx ? xr[j] : mx;
            for (size_t j = 0; j < n->N; j++)
                sum += yr[j] = expf(beta * (xr[j] - mx));
            for (size_t j = 0; j < n->N; j++)
                yr[j] /= sum;
        }
        return MP_OK;
    }
    case MP_OP_RELU:
    case MP_OP_RELU6:
        memcpy(y, x, ny * sizeof *y);
        clamp(y, ny, 0.0f, n->opcode == MP_OP_RELU ? INFINITY : 6.0f);
        return MP_OK;
    case MP_OP_ADD:
    case MP_OP_SUB:
    case MP_OP_MUL: {
        const float *x2 = TD(t, n->x2);
        for (size_t i = 0; i < ny; i++)
            y[i] = n->opcode == MP_OP_ADD   ? x[i] + x2[i]
                   : n->opcode == MP_OP_SUB ? x[i] - x2[i]
                                            : x[i] * x2[i];
        clamp(y, ny, n->lo, n->hi);
        return MP_OK;
    }
    case MP_OP_PAD:
        memset(y, 0, ny * sizeof *y);
        for (size_t i = 0; i < nx; i++)
            y[pad_out_index(n, i)] = x[i];
        return MP_OK;
    default:
        return mp_fail(err, MP_ERR_UNSUPPORTED, "%s: operator #%d %s has no training kernel",
                       t->label, (int)n->op, mp_op_name(n->opcode));
    }
}

mp_status mp_tr_backward(mp_trainer *t, tr_node *n, mp_error *err)
{
    float *x = TD(t, n->x), *y = TD(t, n->y), *w = TD(t, n->w);
    float *dy = TD(t, n->dy), *dx = TD(t, n->dx), *dw = TD(t, n->dw), *db = TD(t, n->db);
    size_t ny = t->t[n->y].n, nx = t->t[n->x].n;
    mp_status st = MP_OK;
    switch (n->opcode) {
    case MP_OP_FULLY_CONNECTED:
    case MP_OP_CONV_2D: {
        mask_rows(t->pool, dy, y, n->M, n->N, n->lo, n->hi);
        const float *a = x;
        if (n->opcode == MP_OP_CONV_2D && !n->direct) {
            im2col(n, x, TD(t, n->colsb));
            a = TD(t, n->colsb);
        }
        if (dw) /* dW[N,K] = dZ^T[N,M] . A[M,K], db the column sums of dZ */
            mp_tr_gemm_tn(t->pool, n->M, n->N, n->K, dy, n->N, a, n->K, dw, n->K, db);
        else if (db)
            mask_sums(dy, y, db, n->M, n->N, -INFINITY, INFINITY);
        if (!dx)
            return MP_OK;
        if (n->dcols >= 0) {
            gemm_dx(t, n, dy, w, TD(t, n->dcols), &st, err);
            if (st != MP_OK)
                return st;
            if (!n->dx_acc)
                memset(dx, 0, nx * sizeof *dx);
            col2im_add(n, TD(t, n->dcols), dx);
            return MP_OK;
        }
        gemm_dx(t, n, dy, w, n->dx_acc ? TD(t, n->tmp) : dx, &st, err);
        if (st == MP_OK && n->dx_acc)
            put(dx, TD(t, n->tmp), nx, true);
        return st;
    }
    case MP_OP_DEPTHWISE_CONV_2D:
        if (dw)
            dw_weight_grad(t->pool, n, x, y, dy, dw, db);
        else
            mask_sums(dy, y, db, n->M, n->N, n->lo, n->hi);
        if (dx)
            dw_input_grad(t->pool, n, w, dy, dx, n->dx_acc);
        return MP_OK;
    case MP_OP_MAX_POOL_2D:
    case MP_OP_AVERAGE_POOL_2D:
        act_mask(dy, y, ny, n->lo, n->hi);
        if (!dx)
            return MP_OK;
        if (!n->dx_acc)
            memset(dx, 0, nx * sizeof *dx);
        pool_backward(n, x, dy, dx, n->opcode == MP_OP_MAX_POOL_2D);
        return MP_OK;
    case MP_OP_MEAN:
        if (dx) {
            float inv = ny ? (float)ny / (float)nx : 0.0f;
            for (size_t i = 0; i < nx; i++) {
                float g = dy[mean_out_index(n, i)] * inv;
                dx[i] = n->dx_acc ? dx[i] + g : g;
            }
        }
        return MP_OK;
    case MP_OP_RESHAPE:
        if (dx)
            put(dx, dy, nx, n->dx_acc);
        return MP_OK;
    case MP_OP_SOFTMAX:
        if (dx) {
            float beta = n->opt->beta;
            for (size_t r = 0; r < ny / n->N; r++) {
                const float *yr = y + r * n->N, *g = dy + r * n->N;
                float *d = dx + r * n->N, s = 0.0f;
                for (size_t j = 0; j < n->N; j++)
                    s += g[j] * yr[j];
                for (size_t j = 0; j < n->N; j++) {
                    float v = beta * yr[j] * (g[j] - s);
                    d[j] = n->dx_acc ? d[j] + v : v;
                }
            }
        }
        return MP_OK;
    case MP_OP_RELU:
    case MP_OP_RELU6:
        act_mask(dy, y, ny, 0.0f, n->opcode == MP_OP_RELU ? INFINITY : 6.0f);
        if (dx)
            put(dx, dy, nx, n->dx_acc);
        return MP_OK;
    case MP_OP_ADD:
    case MP_OP_SUB:
    case MP_OP_MUL: {
        act_mask(dy, y, ny, n->lo, n->hi);
        float *dx2 = TD(t, n->dx2);
        const float *x2 = TD(t, n->x2);
        if (n->opcode == MP_OP_MUL) {
            /* both products first: dx and dx2 may be one tensor (x * x) */
            for (size_t i = 0; i < nx; i++) {
                float g = dy[i], a = x[i], c = x2[i];
                if (dx)
                    dx[i] = n->dx_acc ? dx[i] + g * c : g * c;
                if (dx2)
                    dx2[i] = (n->dx2_acc ? dx2[i] : 0.0f) + g * a;
            }
            return MP_OK;
        }
        if (dx)
            put(dx, dy, nx, n->dx_acc);
        if (dx2)
            for (size_t i = 0; i < nx; i++) {
                float g = n->opcode == MP_OP_SUB ? -dy[i] : dy[i];
                dx2[i] = n->dx2_acc ? dx2[i] + g : g;
            }
        return MP_OK;
    }
    case MP_OP_PAD:
        if (dx)
            for (size_t i = 0; i < nx; i++) {
                float g = dy[pad_out_index(n, i)];
                dx[i] = n->dx_acc ? dx[i] + g : g;
            }
        return MP_OK;
    default:
        return mp_fail(err, MP_ERR_UNSUPPORTED, "%s: operator #%d %s has no backward kernel",
                       t->label, (int)n->op, mp_op_name(n->opcode));
    }
}
