/* Backward kernels of the training engine against central finite differences: for each
 * trainable operator, a one-operator model (written with the .tflite writer) is trained for
 * one step with gradients kept (MSE loss against random labels); the gradients of the input(s)
 * and of the weights must match the finite differences of the loss computed here in float64
 * by a forward written independently in this file. Also checks the loss value itself. A
 * "residual" case adds the operator's input to its output (ADD), so that the input's
 * back-prop is written by the ADD and then added to by the operator. The weight-gradient
 * product (dW = dZ^T A) is checked on its own against float64 sums, with every kernel the
 * processor has, partial tiles, row strides and a thread pool. The convolution, depthwise
 * and fully connected cases run again on a trainer of 3 threads (products, depthwise rows and
 * channel ranges, masks in tasks). */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model/tflite_writer.h"
#include "engine/train/train.h"
#include "engine/train/train_internal.h"

#define MAXN 4096

typedef struct tcase {
    const char *name;
    int opcode;
    mp_op_options opt;
    int xr, xd[4];            /* input shape (batch 1 in the model) */
    bool two;                 /* a second input of the same shape */
    int wr, wd[4];            /* weights (0 = none) */
    bool bias;
    int yr, yd[4];            /* output shape (batch 1) */
    int32_t ints[8];          /* MEAN axes / PAD paddings */
    int n_ints;
} tcase;

static bool g_residual; /* the case's model outputs op(x) + x */
static int g_threads = 1; /* the trainer's threads */

/* ---- float64 reference forwards ------------------------------------------------------- */

static double act(const tcase *c, double v)
{
    if (c->opt.activation == MP_ACT_RELU)
        return v > 0 ? v : 0;
    if (c->opt.activation == MP_ACT_RELU6)
        return v < 0 ? 0 : v > 6 ? 6 : v;
    return v;
}

static int pad_before(int padding, int in, int out, int k, int s)
{
    int total = (out - 1) * s + k - in;
    return padding == MP_PAD_SAME && total > 0 ? total / 2 : 0;
}

/* y = f(x, x2, w, b) for batch B; shapes from the case with dim 0 = B. */
static void ref(const tcase *c, int B, const double *x, const double *x2, const double *w,
                const double *b, double *y)
{
    int H = c->xd[1], W = c->xd[2], C = c->xd[3], OH = c->yd[1], OW = c->yd[2], OC = c->yd[3];
    size_t nx = (size_t)B, ny = (size_t)B;
    for (int d = 1; d < c->xr; d++)
        nx *= (size_t)c->xd[d];
    for (int d = 1; d < c->yr; d++)
        ny *= (size_t)c->yd[d];
    switch (c->opcode) {
    case MP_OP_FULLY_CONNECTED: {
        int K = c->wd[1], N = c->wd[0];
        for (int m = 0; m < B; m++)
            for (int n = 0; n < N; n++) {
                double s = b ? b[n] : 0;
                for (int k = 0; k < K; k++)
                    s += x[m * K + k] * w[n * K + k];
                y[m * N + n] = act(c, s);
            }
        return;
    }
    case MP_OP_CONV_2D:
    case MP_OP_DEPTHWISE_CONV_2D: {
        bool dw = c->opcode == MP_OP_DEPTHWISE_CONV_2D;
        int KH = c->wd[1], KW = c->wd[2], sh = c->opt.stride_h, sw = c->opt.stride_w;
        int pt = pad_before(c->opt.padding, H, OH, KH, sh), pl = pad_before(c->opt.padding, W, OW, KW, sw);
        int mult = dw ? OC / C : 1;
        for (int bb = 0; bb < B; bb++)
            for (int oh = 0; oh < OH; oh++)
                for (int ow = 0; ow < OW; ow++)
                    for (int oc = 0; oc < OC; oc++) {
                        double s = b ? b[oc] : 0;
                        for (int i = 0; i < KH; i++)
                            for (int j = 0; j < KW; j++) {
                                int ih = oh * sh - pt + i, iw = ow * sw - pl + j;
                                if (ih < 0 || ih >= H || iw < 0 || iw >= W)
                                    continue;
                                const double *in = x + ((size_t)(bb * H + ih) * W + iw) * C;
                                if (dw)
                                    s += in[oc / mult] * w[(i * KW + j) * OC + oc];
                                else
                                    for (int ic = 0; ic < C; ic++)
                                        s += in[ic] * w[((oc * KH + i) * KW + j) * C + ic];
                            }
                        y[((size_t)(bb * OH + oh) * OW + ow) * OC + oc] = act(c, s);
                    }
        return;
    }
    case MP_OP_MAX_POOL_2D:
    case MP_OP_AVERAGE_POOL_2D: {
        int KH = c->opt.filter_h, KW = c->opt.filter_w, sh = c->opt.stride_h, sw = c->opt.stride_w;
        int pt = pad_before(c->opt.padding, H, OH, KH, sh), pl = pad_before(c->opt.padding, W, OW, KW, sw);
        for (int bb = 0; bb < B; bb++)
            for (int oh = 0; oh < OH; oh++)
                for (int ow = 0; ow < OW; ow++)
                    for (int ch = 0; ch < C; ch++) {
                        double s = c->opcode == MP_OP_MAX_POOL_2D ? -INFINITY : 0;
                        int cnt = 0;
                        for (int i = 0; i < KH; i++)
                            for (int j = 0; j < KW; j++) {
                                int ih = oh * sh - pt + i, iw = ow * sw - pl + j;
                                if (ih < 0 || ih >= H || iw < 0 || iw >= W)
                                    continue;
                                double v = x[((size_t)(bb * H + ih) * W + iw) * C + ch];
                                s = c->opcode == MP_OP_MAX_POOL_2D ? fmax(s, v) : s + v;
                                cnt++;
                            }
                        if (c->opcode == MP_OP_AVERAGE_POOL_2D)
                            s /= cnt;
                        y[((size_t)(bb * OH + oh) * OW + ow) * C + ch] = act(c, s);
                    }
        return;
    }
    case MP_OP_MEAN: /* axes 1 and 2 of NHWC, keep_dims as the output shape says */
        for (int bb = 0; bb < B; bb++)
            for (int ch = 0; ch < C; ch++) {
                double s = 0;
                for (int i = 0; i < H * W; i++)
                    s += x[((size_t)bb * H * W + i) * C + ch];
                y[bb * C + ch] = s / (H * W);
            }
        return;
    case MP_OP_RESHAPE:
        for (size_t i = 0; i < nx; i++)
            y[i] = x[i];
        return;
    case MP_OP_SOFTMAX: {
        int N = c->xd[c->xr - 1];
        for (size_t r = 0; r < nx / (size_t)N; r++) {
            double mx = -INFINITY, s = 0;
            for (int j = 0; j < N; j++)
                mx = fmax(mx, x[r * N + j]);
            for (int j = 0; j < N; j++)
                s += exp(c->opt.beta * (x[r * N + j] - mx));
            for (int j = 0; j < N; j++)
                y[r * N + j] = exp(c->opt.beta * (x[r * N + j] - mx)) / s;
        }
        return;
    }
    case MP_OP_RELU:
    case MP_OP_RELU6:
        for (size_t i = 0; i < nx; i++)
            y[i] = x[i] < 0 ? 0 : c->opcode == MP_OP_RELU6 && x[i] > 6 ? 6 : x[i];
        return;
    case MP_OP_ADD:
    case MP_OP_SUB:
    case MP_OP_MUL:
        for (size_t i = 0; i < nx; i++)
            y[i] = act(c, c->opcode == MP_OP_ADD   ? x[i] + x2[i]
                          : c->opcode == MP_OP_SUB ? x[i] - x2[i]
                                                   : x[i] * x2[i]);
        return;
    case MP_OP_PAD: /* rank 4, paddings in ints */
        for (size_t i = 0; i < ny; i++)
            y[i] = 0;
        for (int bb = 0; bb < B; bb++)
            for (int h = 0; h < H; h++)
                for (int ww = 0; ww < W; ww++)
                    for (int ch = 0; ch < C; ch++)
                        y[((size_t)(bb * OH + h + c->ints[2]) * OW + ww + c->ints[4]) * OC + ch +
                          c->ints[6]] = x[((size_t)(bb * H + h) * W + ww) * C + ch];
        return;
    }
    fail_msg("no reference for %s", c->name);
}

/* ---- the check ------------------------------------------------------------------------- */

static size_t count(int r, const int *d, int B)
{
    size_t n = 1;
    for (int i = 0; i < r; i++)
        n *= (size_t)(i == 0 && B ? B : d[i]);
    return n;
}

static uint32_t g_seed = 12345;
static double rnd(void)
{
    g_seed = g_seed * 1664525u + 1013904223u;
    return (double)(g_seed >> 8) / 16777216.0 * 2.0 - 1.0;
}

static double loss_ref(const tcase *c, int B, const double *x, const double *x2, const double *w,
                       const double *b, const double *T, size_t ny)
{
    static double y[MAXN];
    ref(c, B, x, x2, w, b, y);
    for (size_t i = 0; g_residual && i < ny; i++)
        y[i] += x[i];
    double L = 0;
    for (size_t i = 0; i < ny; i++)
        L += (y[i] - T[i]) * (y[i] - T[i]);
    return L / (double)ny;
}

static void check_grad(const char *what, const tcase *c, double *v, size_t n, const float *g,
                       int B, double *x, double *x2, double *w, double *b, const double *T,
                       size_t ny)
{
    assert_non_null(g);
    for (size_t i = 0; i < n; i++) {
        double keep = v[i], h = 1e-4;
        v[i] = keep + h;
        double lp = loss_ref(c, B, x, x2, w, b, T, ny);
        v[i] = keep - h;
        double lm = loss_ref(c, B, x, x2, w, b, T, ny);
        v[i] = keep;
        double fd = (lp - lm) / (2 * h);
        if (fabs(fd - g[i]) > 2e-3 * fabs(fd) + 2e-4)
            fail_msg("%s: d%s[%zu]: engine %.7g, finite differences %.7g", c->name, what, i,
                     (double)g[i], fd);
    }
}

static void run_case(const tcase *c)
{
    const int B = 2;
    mp_tfw *wr = mp_tfw_create();
    size_t nw = c->wr ? count(c->wr, c->wd, 0) : 0, nb = c->bias ? (size_t)c->wd[0] : 0;
    if (c->bias && c->opcode == MP_OP_DEPTHWISE_CONV_2D)
        nb = (size_t)c->wd[3];
    size_t nx = count(c->xr, c->xd, B), ny = count(c->yr, c->yd, B);
    assert_true(nx <= MAXN && ny <= MAXN);
    static double x[MAXN], x2[MAXN], w[MAXN], b[MAXN], T[MAXN];
    float wf[MAXN], bf[MAXN];
    for (size_t i = 0; i < nx; i++)
        x[i] = rnd() * 2, x2[i] = rnd() * 2;
    for (size_t i = 0; i < nw; i++)
        wf[i] = (float)(rnd() * 0.5), w[i] = wf[i];
    for (size_t i = 0; i < nb; i++)
        bf[i] = (float)(rnd() * 0.5), b[i] = bf[i];
    for (size_t i = 0; i < ny; i++)
        T[i] = rnd();
    int xi = mp_tfw_tensor(wr, "x", MP_DT_FLOAT32, c->xr, c->xd, 0, NULL);
    int x2i = c->two ? mp_tfw_tensor(wr, "x2", MP_DT_FLOAT32, c->xr, c->xd, 0, NULL) : -1;
    int ins[3] = {xi, x2i, -1}, n_in = c->two ? 2 : 1;
    int wi = -1, bi = -1;
    if (c->wr) {
        wi = mp_tfw_tensor(wr, "w", MP_DT_FLOAT32, c->wr, c->wd,
                           mp_tfw_buffer(wr, wf, nw * sizeof(float)), NULL);
        ins[1] = wi;
        n_in = 2;
        if (c->bias) {
            bi = mp_tfw_tensor(wr, "b", MP_DT_FLOAT32, 1, (int32_t[]){(int32_t)nb},
                               mp_tfw_buffer(wr, bf, nb * sizeof(float)), NULL);
            ins[2] = bi;
            n_in = 3;
        }
    }
    if (c->n_ints) {
        int32_t dims[2] = {c->n_ints, 1};
        int r = c->opcode == MP_OP_PAD ? 2 : 1;
        if (r == 2)
            dims[0] = c->n_ints / 2, dims[1] = 2;
        ins[1] = mp_tfw_tensor(wr, "ints", MP_DT_INT32, r, dims,
                               mp_tfw_buffer(wr, c->ints, (size_t)c->n_ints * 4), NULL);
        n_in = 2;
    }
    int yi = mp_tfw_tensor(wr, "y", MP_DT_FLOAT32, c->yr, c->yd, 0, NULL);
    if (g_residual) { /* z = op(x); y = z + x */
        int zi = mp_tfw_tensor(wr, "z", MP_DT_FLOAT32, c->yr, c->yd, 0, NULL);
        mp_tfw_op(wr, c->opcode, n_in, ins, 1, &zi, &c->opt);
        mp_op_options add = mp_tfw_options_default();
        mp_tfw_op(wr, MP_OP_ADD, 2, (int32_t[]){zi, xi}, 1, &yi, &add);
    } else {
        mp_tfw_op(wr, c->opcode, n_in, ins, 1, &yi, &c->opt);
    }
    int model_in[2] = {xi, x2i};
    mp_tfw_io(wr, c->two ? 2 : 1, model_in, 1, &yi);
    void *bytes;
    size_t size;
    mp_error err = {0};
    assert_int_equal(mp_tfw_finish(wr, &bytes, &size, &err), MP_OK);
    mp_tfw_free(wr);
    mp_model *m;
    assert_int_equal(mp_model_load_memory(bytes, size, c->name, &m, &err), MP_OK);
    free(bytes);
    mp_train_options o = {.batch = B, .loss = MP_LOSS_MSE, .optimizer = MP_OPTIM_SGD,
                          .learning_rate = 0.1f, .threads = g_threads, .keep_grads = true};
    mp_trainer *t;
    mp_status st = mp_trainer_create(m, c->name, &o, &t, &err);
    if (st != MP_OK)
        fail_msg("%s: %s", c->name, err.msg);
    size_t n;
    float *in = mp_trainer_input(t, 0, &n);
    assert_int_equal(n, nx);
    for (size_t i = 0; i < nx; i++)
        in[i] = (float)x[i], x[i] = in[i];
    if (c->two) {
        in = mp_trainer_input(t, 1, &n);
        for (size_t i = 0; i < nx; i++)
            in[i] = (float)x2[i], x2[i] = in[i];
    }
    float *lab = mp_trainer_labels(t, &n);
    assert_int_equal(n, ny);
    for (size_t i = 0; i < ny; i++)
        lab[i] = (float)T[i], T[i] = lab[i];
    double L, *bp = c->bias ? b : NULL;
    assert_int_equal(mp_trainer_step(t, &L, &err), MP_OK);
    double Lref = loss_ref(c, B, x, x2, w, bp, T, ny);
    if (fabs(L - Lref) > 1e-4 * fabs(Lref) + 1e-6)
        fail_msg("%s: loss %.8g, reference %.8g", c->name, L, Lref);
    check_grad("x", c, x, nx, mp_trainer_grad(t, xi, &n), B, x, x2, w, bp, T, ny);
    if (c->two)
        check_grad("x2", c, x2, nx, mp_trainer_grad(t, x2i, &n), B, x, x2, w, bp, T, ny);
    if (wi >= 0)
        check_grad("w", c, w, nw, mp_trainer_grad(t, wi, &n), B, x, x2, w, bp, T, ny);
    if (bi >= 0)
        check_grad("b", c, b, nb, mp_trainer_grad(t, bi, &n), B, x, x2, w, bp, T, ny);
    mp_trainer_destroy(t);
    mp_model_free(m);
}

static mp_op_options opts(int act)
{
    mp_op_options o = mp_tfw_options_default();
    o.activation = act;
    o.stride_h = o.stride_w = 1;
    return o;
}

static void test_fully_connected(void **state)
{
    (void)state;
    tcase c = {"fc", MP_OP_FULLY_CONNECTED, opts(MP_ACT_NONE), 2, {1, 7}, false, 2, {5, 7}, true,
               2, {1, 5}, {0}, 0};
    run_case(&c);
    c.opt.activation = MP_ACT_RELU;
    c.name = "fc relu";
    run_case(&c);
}

static void test_conv(void **state)
{
    (void)state;
    tcase c = {"conv 3x3 same s2", MP_OP_CONV_2D, opts(MP_ACT_RELU6), 4, {1, 5, 6, 3}, false, 4,
               {4, 3, 3, 3}, true, 4, {1, 3, 3, 4}, {0}, 0};
    c.opt.stride_h = c.opt.stride_w = 2;
    c.opt.padding = MP_PAD_SAME;
    run_case(&c);
    tcase d = {"conv 1x1", MP_OP_CONV_2D, opts(MP_ACT_NONE), 4, {1, 3, 4, 5}, false, 4,
               {6, 1, 1, 5}, true, 4, {1, 3, 4, 6}, {0}, 0};
    run_case(&d);
    tcase e = {"conv 2x2 valid", MP_OP_CONV_2D, opts(MP_ACT_NONE), 4, {1, 4, 4, 2}, false, 4,
               {3, 2, 2, 2}, false, 4, {1, 3, 3, 3}, {0}, 0};
    e.opt.padding = MP_PAD_VALID;
    run_case(&e);
}

static void test_depthwise(void **state)
{
    (void)state;
    tcase c = {"depthwise 3x3 same", MP_OP_DEPTHWISE_CONV_2D, opts(MP_ACT_RELU6), 4,
               {1, 5, 5, 4}, false, 4, {1, 3, 3, 4}, true, 4, {1, 5, 5, 4}, {0}, 0};
    c.opt.padding = MP_PAD_SAME;
    c.opt.depth_multiplier = 1;
    run_case(&c);
    tcase d = {"depthwise mult 2 s2", MP_OP_DEPTHWISE_CONV_2D, opts(MP_ACT_NONE), 4,
               {1, 5, 5, 2}, false, 4, {1, 3, 3, 4}, true, 4, {1, 3, 3, 4}, {0}, 0};
    d.opt.padding = MP_PAD_SAME;
    d.opt.depth_multiplier = 2;
    d.opt.stride_h = d.opt.stride_w = 2;
    run_case(&d);
    /* 88 channels: four vectors of sixteen, one, and eight one at a time */
    tcase e = {"depthwise 3x3 same, 88 channels", MP_OP_DEPTHWISE_CONV_2D, opts(MP_ACT_RELU6), 4,
               {1, 4, 4, 88}, false, 4, {1, 3, 3, 88}, true, 4, {1, 4, 4, 88}, {0}, 0};
    e.opt.padding = MP_PAD_SAME;
    e.opt.depth_multiplier = 1;
    run_case(&e);
    tcase f = {"depthwise 3x3 valid s2, 80 channels", MP_OP_DEPTHWISE_CONV_2D,
               opts(MP_ACT_NONE), 4, {1, 5, 5, 80}, false, 4, {1, 3, 3, 80}, false, 4,
               {1, 2, 2, 80}, {0}, 0};
    f.opt.padding = MP_PAD_VALID;
    f.opt.depth_multiplier = 1;
    f.opt.stride_h = f.opt.stride_w = 2;
    run_case(&f);
    /* 32 and 48 channels (multiples of sixteen): the 3 x 3 runs inside, the others at the
     * edges */
    tcase e2 = {"depthwise 3x3 same, 32 channels", MP_OP_DEPTHWISE_CONV_2D, opts(MP_ACT_RELU6),
                4, {1, 5, 5, 32}, false, 4, {1, 3, 3, 32}, true, 4, {1, 5, 5, 32}, {0}, 0};
    e2.opt.padding = MP_PAD_SAME;
    e2.opt.depth_multiplier = 1;
    run_case(&e2);
    tcase g = {"depthwise 3x3 same + residual, 48 channels", MP_OP_DEPTHWISE_CONV_2D,
               opts(MP_ACT_RELU), 4, {1, 4, 4, 48}, false, 4, {1, 3, 3, 48}, true, 4,
               {1, 4, 4, 48}, {0}, 0};
    g.opt.padding = MP_PAD_SAME;
    g.opt.depth_multiplier = 1;
    g_residual = true;
    run_case(&g);
    tcase h = {"conv 1x1 + residual", MP_OP_CONV_2D, opts(MP_ACT_NONE), 4, {1, 3, 3, 5}, false, 4,
               {5, 1, 1, 5}, true, 4, {1, 3, 3, 5}, {0}, 0};
    run_case(&h);
    g_residual = false;
}

/* dW = dZ^T A and db = dZ's column sums against float64 sums: every kernel the processor
 * has, on the caller's thread and on a pool of 3, for sizes with partial tiles and blocks,
 * and row strides past the widths; the product overwrites whatever dW and db held. */
static void test_weight_grad_product(void **state)
{
    (void)state;
    static const size_t sizes[][6] = {
        /* M, N, K, extra columns of dZ, A, dW */
        {300, 70, 45, 3, 5, 2}, {1, 1, 1, 0, 0, 0}, {129, 8, 32, 0, 0, 0},
        {257, 130, 100, 1, 0, 7}, {5, 3, 17, 2, 1, 1},
    };
    pthreadpool_t pool = pthreadpool_create(3);
    assert_non_null(pool);
    int widest = mp_tr_gemm_tn_limit(2);
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        size_t M = sizes[s][0], N = sizes[s][1], K = sizes[s][2];
        size_t ldz = N + sizes[s][3], lda = K + sizes[s][4], ldw = K + sizes[s][5];
        float *z = malloc(M * ldz * sizeof *z), *a = malloc(M * lda * sizeof *a);
        float *w = malloc(N * ldw * sizeof *w), *db = malloc(N * sizeof *db);
        assert_true(z && a && w && db);
        for (size_t i = 0; i < M * ldz; i++)
            z[i] = (float)rnd();
        for (size_t i = 0; i < M * lda; i++)
            a[i] = (float)rnd();
        for (int level = 0; level <= 2; level++)
            for (int threaded = 0; threaded < 2; threaded++) {
                mp_tr_gemm_tn_limit(level);
                for (size_t i = 0; i < N * ldw; i++)
                    w[i] = 1e6f; /* overwritten in dW, kept past it */
                for (size_t n = 0; n < N; n++)
                    db[n] = 1e6f;
                mp_tr_gemm_tn(threaded ? pool : NULL, M, N, K, z, ldz, a, lda, w, ldw, db);
                for (size_t n = 0; n < N; n++) {
                    double sum = 0, mag = 0;
                    for (size_t m = 0; m < M; m++)
                        sum += z[m * ldz + n], mag += fabs(z[m * ldz + n]);
                    if (fabs(db[n] - sum) > 1e-5 * mag + 1e-6)
                        fail_msg("db %zux%zu kernel %d%s: [%zu] %.7g, float64 %.7g", M, N, level,
                                 threaded ? " threaded" : "", n, (double)db[n], sum);
                }
                for (size_t n = 0; n < N; n++)
                    for (size_t k = 0; k < ldw; k++) {
                        if (k >= K) {
                            assert_true(w[n * ldw + k] == 1e6f);
                            continue;
                        }
                        double sum = 0, mag = 0;
                        for (size_t m = 0; m < M; m++) {
                            sum += (double)z[m * ldz + n] * a[m * lda + k];
                            mag += fabs((double)z[m * ldz + n] * a[m * lda + k]);
                        }
                        if (fabs(w[n * ldw + k] - sum) > 1e-5 * mag + 1e-6)
                            fail_msg("dW %zux%zux%zu kernel %d%s: [%zu,%zu] %.7g, float64 %.7g",
                                     M, N, K, level, threaded ? " threaded" : "", n, k,
                                     (double)w[n * ldw + k], sum);
                    }
            }
        free(z), free(a), free(w), free(db);
    }
    mp_tr_gemm_tn_limit(widest);
    pthreadpool_destroy(pool);
}

static void test_pools(void **state)
{
    (void)state;
    tcase c = {"max pool", MP_OP_MAX_POOL_2D, opts(MP_ACT_NONE), 4, {1, 4, 5, 3}, false, 0, {0},
               false, 4, {1, 2, 3, 3}, {0}, 0};
    c.opt.filter_h = c.opt.filter_w = 2;
    c.opt.stride_h = c.opt.stride_w = 2;
    c.opt.padding = MP_PAD_SAME;
    run_case(&c);
    c.name = "average pool";
    c.opcode = MP_OP_AVERAGE_POOL_2D;
    c.opt.filter_h = c.opt.filter_w = 3;
    run_case(&c);
}

static void test_shape_ops(void **state)
{
    (void)state;
    tcase mean = {"mean", MP_OP_MEAN, opts(MP_ACT_NONE), 4, {1, 3, 4, 5}, false, 0, {0}, false,
                  2, {1, 5}, {1, 2}, 2};
    run_case(&mean);
    tcase rs = {"reshape", MP_OP_RESHAPE, opts(MP_ACT_NONE), 4, {1, 2, 3, 4}, false, 0, {0},
                false, 2, {1, 24}, {0}, 0};
    run_case(&rs);
    tcase pad = {"pad", MP_OP_PAD, opts(MP_ACT_NONE), 4, {1, 2, 3, 2}, false, 0, {0}, false, 4,
                 {1, 5, 4, 3}, {0, 0, 1, 2, 0, 1, 1, 0}, 8};
    run_case(&pad);
}

static void test_activations(void **state)
{
    (void)state;
    tcase sm = {"softmax", MP_OP_SOFTMAX, opts(MP_ACT_NONE), 2, {1, 6}, false, 0, {0}, false, 2,
                {1, 6}, {0}, 0};
    sm.opt.beta = 1.5f;
    run_case(&sm);
    tcase r = {"relu", MP_OP_RELU, opts(MP_ACT_NONE), 2, {1, 40}, false, 0, {0}, false, 2,
               {1, 40}, {0}, 0};
    run_case(&r);
    r.name = "relu6";
    r.opcode = MP_OP_RELU6;
    run_case(&r);
}

static void test_binary(void **state)
{
    (void)state;
    int ops[3] = {MP_OP_ADD, MP_OP_SUB, MP_OP_MUL};
    const char *names[3] = {"add relu", "sub", "mul"};
    for (int k = 0; k < 3; k++) {
        tcase c = {names[k], ops[k], opts(k == 0 ? MP_ACT_RELU : MP_ACT_NONE), 2, {1, 12}, true,
                   0, {0}, false, 2, {1, 12}, {0}, 0};
        run_case(&c);
    }
}

/* The products, the depthwise kernels and the masks split into tasks on a pool of 3. */
static void test_threaded(void **state)
{
    g_threads = 3;
    test_fully_connected(state);
    test_conv(state);
    test_depthwise(state);
    g_threads = 1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fully_connected), cmocka_unit_test(test_conv),
        cmocka_unit_test(test_depthwise),       cmocka_unit_test(test_pools),
        cmocka_unit_test(test_shape_ops),       cmocka_unit_test(test_activations),
        cmocka_unit_test(test_binary),          cmocka_unit_test(test_weight_grad_product),
        cmocka_unit_test(test_threaded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
