/* Forward and backward kernels of the training step: matrix products (fully connected, and
 * convolutions as im2col products) on XNNPACK through mp_tr_gemm, everything else in plain C
 * (hot loops compiled for AVX-512, AVX2 and baseline x86-64, chosen at load time). Each
 * backward writes its input's back-prop (or adds to it when another consumer wrote it first)
 * and its weights' gradients; a fused activation's derivative is applied to dY in place. */
#include <math.h>
#include <string.h>

#include "engine/train/train_internal.h"

#if defined(__x86_64__) && !defined(__clang__)
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

static void transpose(float *restrict dst, const float *restrict src, size_t rows, size_t cols)
{
    const size_t T = 32;
    for (size_t i0 = 0; i0 < rows; i0 += T)
        for (size_t j0 = 0; j0 < cols; j0 += T)
            for (size_t i = i0; i < rows && i < i0 + T; i++)
                for (size_t j = j0; j < cols && j < j0 + T; j++)
                    dst[j * rows + i] = src[i * cols + j];
}

HOT static void col_sums(float *restrict db, const float *restrict dy, size_t rows, size_t cols)
{
    memset(db, 0, cols * sizeof *db);
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++)
            db[j] += dy[i * cols + j];
}

static void im2col(const tr_node *n, const float *x, float *cols)
{
    size_t C = (size_t)n->C;
    for (int32_t b = 0; b < n->B; b++)
        for (int32_t oh = 0; oh < n->OH; oh++)
            for (int32_t ow = 0; ow < n->OW; ow++) {
                float *row = cols + (((size_t)b * n->OH + oh) * n->OW + ow) * n->K;
                for (int32_t ki = 0; ki < n->kh; ki++) {
                    int32_t ih = oh * n->sh - n->pt + ki * n->dh;
                    for (int32_t kj = 0; kj < n->kw; kj++, row += C) {
                        int32_t iw = ow * n->sw - n->pl + kj * n->dw_;
                        if (ih < 0 || ih >= n->H || iw < 0 || iw >= n->W)
                            memset(row, 0, C * sizeof *row);
                        else
                            memcpy(row, x + (((size_t)b * n->H + ih) * n->W + iw) * C,
                                   C * sizeof *row);
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

HOT static void dw_forward(const tr_node *n, const float *restrict x, const float *restrict w,
                           const float *restrict bias, float *restrict y)
{
    size_t OC = (size_t)n->OC, C = (size_t)n->C, mult = (size_t)n->mult;
    for (int32_t b = 0; b < n->B; b++)
        for (int32_t oh = 0; oh < n->OH; oh++)
            for (int32_t ow = 0; ow < n->OW; ow++) {
                float *out = y + (((size_t)b * n->OH + oh) * n->OW + ow) * OC;
                for (size_t oc = 0; oc < OC; oc++)
                    out[oc] = bias ? bias[oc] : 0.0f;
                for (int32_t ki = 0; ki < n->kh; ki++) {
                    int32_t ih = oh * n->sh - n->pt + ki * n->dh;
                    if (ih < 0 || ih >= n->H)
                        continue;
                    for (int32_t kj = 0; kj < n->kw; kj++) {
                        int32_t iw = ow * n->sw - n->pl + kj * n->dw_;
                        if (iw < 0 || iw >= n->W)
                            continue;
                        const float *in = x + (((size_t)b * n->H + ih) * n->W + iw) * C;
                        const float *wk = w + ((size_t)ki * n->kw + kj) * OC;
                        if (mult == 1)
                            for (size_t c = 0; c < OC; c++)
                                out[c] += in[c] * wk[c];
                        else
                            for (size_t oc = 0; oc < OC; oc++)
                                out[oc] += in[oc / mult] * wk[oc];
                    }
                }
            }
}

HOT static void dw_backward(const tr_node *n, const float *restrict x, const float *restrict w,
                            const float *restrict dy, float *restrict dx, float *restrict dw,
                            float *restrict db)
{
    size_t OC = (size_t)n->OC, C = (size_t)n->C, mult = (size_t)n->mult;
    memset(dw, 0, (size_t)n->kh * n->kw * OC * sizeof *dw);
    if (db)
        memset(db, 0, OC * sizeof *db);
    for (int32_t b = 0; b < n->B; b++)
        for (int32_t oh = 0; oh < n->OH; oh++)
            for (int32_t ow = 0; ow < n->OW; ow++) {
                const float *g = dy + (((size_t)b * n->OH + oh) * n->OW + ow) * OC;
                if (db)
                    for (size_t oc = 0; oc < OC; oc++)
                        db[oc] += g[oc];
                for (int32_t ki = 0; ki < n->kh; ki++) {
                    int32_t ih = oh * n->sh - n->pt + ki * n->dh;
                    if (ih < 0 || ih >= n->H)
                        continue;
                    for (int32_t kj = 0; kj < n->kw; kj++) {
                        int32_t iw = ow * n->sw - n->pl + kj * n->dw_;
                        if (iw < 0 || iw >= n->W)
                            continue;
                        size_t at = (((size_t)b * n->H + ih) * n->W + iw) * C;
                        const float *in = x + at;
                        const float *wk = w + ((size_t)ki * n->kw + kj) * OC;
                        float *dwk = dw + ((size_t)ki * n->kw + kj) * OC;
                        if (mult == 1) {
                            for (size_t c = 0; c < OC; c++)
                                dwk[c] += in[c] * g[c];
                            if (dx)
                                for (size_t c = 0; c < OC; c++)
                                    dx[at + c] += wk[c] * g[c];
                        } else {
                            for (size_t oc = 0; oc < OC; oc++) {
                                dwk[oc] += in[oc / mult] * g[oc];
                                if (dx)
                                    dx[at + oc / mult] += wk[oc] * g[oc];
                            }
                        }
                    }
                }
            }
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
        dw_forward(n, x, w, b, y);
        clamp(y, ny, n->lo, n->hi);
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
        act_mask(dy, y, ny, n->lo, n->hi);
        const float *a = x;
        if (n->opcode == MP_OP_CONV_2D && !n->direct) {
            im2col(n, x, TD(t, n->colsb));
            a = TD(t, n->colsb);
        }
        if (dw) {
            /* dW[N,K] = dZ^T[N,M] . A[M,K] */
            transpose(TD(t, n->tr), dy, n->M, n->N);
            st = mp_tr_gemm(t, TD(t, n->packb), pool_bytes(t, n->packb), n->N, n->K, n->M,
                         TD(t, n->tr), n->M, a, true, NULL, dw, n->K, -INFINITY, INFINITY, err);
            if (st != MP_OK)
                return st;
        }
        if (db)
            col_sums(db, dy, n->M, n->N);
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
        act_mask(dy, y, ny, n->lo, n->hi);
        if (dx && !n->dx_acc)
            memset(dx, 0, nx * sizeof *dx);
        dw_backward(n, x, w, dy, dx, dw, db);
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
