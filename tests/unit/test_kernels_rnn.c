/* Tests of RNN, UNIDIRECTIONAL_SEQUENCE_RNN and BIDIRECTIONAL_SEQUENCE_RNN
 * (engine/kernels/rnn.c): a one-unit recurrence worked out by hand, random cells against a
 * plain recurrence restated here from the definition h_t = act(W x_t + W_aux aux_t + R h_{t-1}
 * + b) (float64 for float weights; for hybrid weights TensorFlow Lite's per-row quantization
 * of x, aux and h and int8 products, restated), both time layouts, the backward direction,
 * merged outputs, the two aux input modes, the state carried from run to run, the refusals,
 * and a writer-built model run by the session in static and dynamic modes (state continued
 * by a second run, reset by mp_session_reset_variables). */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model/ops.h"
#include "engine/model/tflite_writer.h"
#include "engine/session.h"
#include "tests/util/kernel_harness.h"
#include "tests/util/quant_ref.h"

enum { MU = 4, MI = 5, MT = 4, MB = 3 };

typedef struct rcfg {
    int opcode, time, batch, n_x, n_aux, units[2], act;
    bool time_major, merge;
    bool aux_weights; /* bidirectional: aux input with aux weights (cross links) */
    bool aux_bw;      /* bidirectional: aux input without weights (the backward cell's input) */
    int wdt;          /* weights: MP_DT_FLOAT32, MP_DT_INT8 or MP_DT_UINT8 (hybrid) */
    bool asym;
} rcfg;

/* One direction's weights: float values, or the stored 8-bit values and their scale. */
typedef struct rdir {
    float w[MU * MI], r[MU * MU], b[MU], wa[MU * MI];
    uint8_t qw[MU * MI], qr[MU * MU], qwa[MU * MI]; /* int8 or uint8 bytes */
    float sw, sr, swa;
    int64_t zp;                                     /* 0 (int8) or 128 (uint8) */
} rdir;

/* Symmetric 8-bit weights from random floats: q = round(v / s), s = max|v| / 127. */
static void quantize_weights(const rcfg *c, const float *v, int n, uint8_t *q, float *s)
{
    float m = 0;
    for (int i = 0; i < n; i++)
        m = fmaxf(m, fabsf(v[i]));
    *s = m > 0 ? m / 127.0f : 1.0f;
    for (int i = 0; i < n; i++) {
        int k = (int)lrintf(v[i] / *s);
        q[i] = c->wdt == MP_DT_UINT8 ? (uint8_t)(k + 128) : (uint8_t)(int8_t)k;
    }
}

static void fill_dir(const rcfg *c, rdir *d, int k, uint32_t seed)
{
    int u = c->units[k];
    memset(d, 0, sizeof *d);
    kh_fill(d->w, (size_t)(u * c->n_x), seed, 0.8f);
    kh_fill(d->r, (size_t)(u * u), seed + 1, 0.6f);
    kh_fill(d->b, (size_t)u, seed + 2, 0.3f);
    kh_fill(d->wa, (size_t)(u * c->n_aux), seed + 3, 0.7f);
    if (c->wdt != MP_DT_FLOAT32) {
        quantize_weights(c, d->w, u * c->n_x, d->qw, &d->sw);
        quantize_weights(c, d->r, u * u, d->qr, &d->sr);
        quantize_weights(c, d->wa, u * c->n_aux, d->qwa, &d->swa);
        d->zp = c->wdt == MP_DT_UINT8 ? 128 : 0;
    }
}

/* ---- the reference ----------------------------------------------------------------------- */

static int stored(const rcfg *c, const uint8_t *q, int i)
{
    return c->wdt == MP_DT_UINT8 ? (int)q[i] - 128 : (int)(int8_t)q[i];
}

/* out[u] += W v for `units` rows of n columns: float64 sums, or the hybrid product. */
static void ref_matvec(const rcfg *c, int units, int n, const float *w, const uint8_t *qw,
                       float sw, const float *v, float *out)
{
    if (c->wdt == MP_DT_FLOAT32) {
        for (int u = 0; u < units; u++) {
            double a = 0;
            for (int i = 0; i < n; i++)
                a += (double)w[u * n + i] * v[i];
            out[u] = (float)((double)out[u] + a);
        }
        return;
    }
    int8_t q[MU > MI ? MU : MI];
    int32_t zp;
    float s = qref_hybrid_row(v, n, q, c->asym, &zp) * sw;
    for (int u = 0; u < units; u++) {
        long dot = 0;
        for (int i = 0; i < n; i++)
            dot += (long)stored(c, qw, u * n + i) * (q[i] - zp);
        out[u] += (float)dot * s;
    }
}

/* Run direction k over the sequence from state h (updated), writing y (row stride ys,
 * offset yo). x has n_x values a row, aux n_aux (NULL without aux weights). */
static void ref_dir(const rcfg *c, const rdir *d, int k, const float *x, int nx,
                    const float *aux, float *h, float *y, int ys, int yo)
{
    int U = c->units[k], T = c->time, B = c->batch;
    for (int s = 0; s < T; s++) {
        int t = k == 1 ? T - 1 - s : s;
        for (int b = 0; b < B; b++) {
            int row = c->time_major ? t * B + b : b * T + t;
            float o[MU];
            memcpy(o, d->b, sizeof o);
            ref_matvec(c, U, nx, d->w, d->qw, d->sw, x + row * nx, o);
            if (aux)
                ref_matvec(c, U, c->n_aux, d->wa, d->qwa, d->swa, aux + row * c->n_aux, o);
            ref_matvec(c, U, U, d->r, d->qr, d->sr, h + b * U, o);
            for (int u = 0; u < U; u++) {
                o[u] = (float)kh_ref_act(o[u], c->act);
                h[b * U + u] = o[u];
                y[row * ys + yo + u] = o[u];
            }
        }
    }
}

/* ---- the node ---------------------------------------------------------------------------- */

typedef struct rnn_case {
    kh_case c;
    rdir d[2];
    mp_tensor *x, *aux, *h[2], *y[2];
    float scale[2][3];
    int64_t zp[2][3];
} rnn_case;

static mp_tensor *weights(rnn_case *R, const rcfg *c, int k, int which, int rows, int cols,
                          const float *f, const uint8_t *q, float s)
{
    const int32_t dims[2] = {rows, cols};
    if (c->wdt == MP_DT_FLOAT32)
        return kh_input(&R->c, MP_DT_FLOAT32, 2, dims, f);
    mp_tensor *t = kh_input(&R->c, (mp_dtype)c->wdt, 2, dims, q);
    R->scale[k][which] = s;
    R->zp[k][which] = R->d[k].zp;
    kh_quant(&R->c, t, 1, &R->scale[k][which], &R->zp[k][which], 0);
    return t;
}

static void add_dir(rnn_case *R, const rcfg *c, int k)
{
    rdir *d = &R->d[k];
    int U = c->units[k];
    int nx = k == 1 && c->aux_bw ? c->n_aux : c->n_x;
    weights(R, c, k, 0, U, nx, d->w, d->qw, d->sw);
    weights(R, c, k, 1, U, U, d->r, d->qr, d->sr);
    kh_input(&R->c, MP_DT_FLOAT32, 1, (int32_t[]){U}, d->b);
    R->h[k] = kh_input(&R->c, MP_DT_FLOAT32, 2, (int32_t[]){c->batch, U}, NULL);
    ((mp_tensor_info *)R->h[k]->info)->is_variable = true;
}

static void build(rnn_case *R, const rcfg *c, uint32_t seed)
{
    memset(R, 0, sizeof *R);
    kh_init(&R->c, c->opcode, NULL);
    R->c.opt.activation = c->act;
    R->c.opt.time_major = c->time_major;
    R->c.opt.merge_outputs = c->merge;
    R->c.opt.asymmetric_quantize_inputs = c->asym;
    bool bidi = c->opcode == MP_OP_BIDIRECTIONAL_SEQUENCE_RNN;
    int T = c->time, B = c->batch;
    if (c->opcode == MP_OP_RNN)
        R->x = kh_input(&R->c, MP_DT_FLOAT32, 2, (int32_t[]){B, c->n_x}, NULL);
    else
        R->x = kh_input(&R->c, MP_DT_FLOAT32, 3,
                        (int32_t[]){c->time_major ? T : B, c->time_major ? B : T, c->n_x}, NULL);
    for (int k = 0; k < (bidi ? 2 : 1); k++) {
        fill_dir(c, &R->d[k], k, seed + 10u * (uint32_t)k);
        add_dir(R, c, k);
    }
    if (bidi) {
        if (c->aux_weights || c->aux_bw)
            R->aux = kh_input(&R->c, MP_DT_FLOAT32, 3,
                              (int32_t[]){c->time_major ? T : B, c->time_major ? B : T, c->n_aux},
                              NULL);
        else
            kh_omit_input(&R->c);
        for (int k = 0; k < 2; k++) {
            if (c->aux_weights)
                weights(R, c, k, 2, c->units[k], c->n_aux, R->d[k].wa, R->d[k].qwa, R->d[k].swa);
            else
                kh_omit_input(&R->c);
        }
    }
    R->y[0] = kh_output(&R->c, MP_DT_FLOAT32);
    if (bidi && !c->merge)
        R->y[1] = kh_output(&R->c, MP_DT_FLOAT32);
}

/* Three runs of a random case: each run's outputs and states equal the reference continued
 * from the state the run before left. */
static void check_cfg(const rcfg *c, uint32_t seed)
{
    rnn_case R;
    build(&R, c, seed);
    bool bidi = c->opcode == MP_OP_BIDIRECTIONAL_SEQUENCE_RNN;
    int n_dir = bidi ? 2 : 1, T = c->opcode == MP_OP_RNN ? 1 : c->time, B = c->batch;
    rcfg rc = *c;
    rc.time = T;
    rc.time_major = c->opcode == MP_OP_RNN || c->time_major;
    float h[2][MB * MU] = {{0}};
    int ys = c->merge ? c->units[0] + c->units[1] : 0;
    for (int run = 0; run < 3; run++) {
        kh_fill(R.x->data, (size_t)(T * B * c->n_x), seed + 100u + (uint32_t)run, 1.5f);
        if (R.aux)
            kh_fill(R.aux->data, (size_t)(T * B * c->n_aux), seed + 200u + (uint32_t)run, 1.2f);
        kh_expect_ok(&R.c, run == 0 ? kh_run(&R.c) : kh_rerun(&R.c, false));
        float want[2][MT * MB * (2 * MU)];
        for (int k = 0; k < n_dir; k++) {
            const float *x = k == 1 && c->aux_bw ? R.aux->data : R.x->data;
            int nx = k == 1 && c->aux_bw ? c->n_aux : c->n_x;
            int stride = ys ? ys : c->units[k];
            ref_dir(&rc, &R.d[k], k, x, nx, c->aux_weights ? R.aux->data : NULL, h[k],
                    want[ys ? 0 : k], stride, ys && k == 1 ? c->units[0] : 0);
            kh_expect_close(R.h[k]->data, h[k], (size_t)(B * c->units[k]), 1.0);
        }
        for (int k = 0; k < (ys ? 1 : n_dir); k++) {
            int units = ys ? ys : c->units[k];
            assert_int_equal(R.y[k]->dims[R.y[k]->rank - 1], units);
            assert_int_equal(R.y[k]->dims[0], c->opcode == MP_OP_RNN || !c->time_major ? B : T);
            kh_expect_close(R.y[k]->data, want[k], (size_t)(T * B * units), 1.0);
        }
    }
    kh_free(&R.c);
}

/* ---- the tests --------------------------------------------------------------------------- */

/* One unit, W = 0.5, R = -1, b = 0.1, x = (1, -2) from h = 0: h1 = 0.5 + 0.1 = 0.6,
 * h2 = -1 - 0.6 + 0.1 = -1.5 (RELU: 0). As a sequence of two steps, and as two runs of RNN. */
static void test_hand(void **state)
{
    (void)state;
    static const float w = 0.5f, r = -1.0f, b = 0.1f;
    for (int act = MP_ACT_NONE; act <= MP_ACT_RELU; act++) {
        kh_case c;
        kh_init(&c, MP_OP_UNIDIRECTIONAL_SEQUENCE_RNN, NULL);
        c.opt.activation = act;
        c.opt.time_major = true;
        mp_tensor *x = kh_input(&c, MP_DT_FLOAT32, 3, (int32_t[]){2, 1, 1}, NULL);
        kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){1, 1}, &w);
        kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){1, 1}, &r);
        kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){1}, &b);
        mp_tensor *h = kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){1, 1}, NULL);
        ((mp_tensor_info *)h->info)->is_variable = true;
        mp_tensor *y = kh_output(&c, MP_DT_FLOAT32);
        ((float *)x->data)[0] = 1;
        ((float *)x->data)[1] = -2;
        kh_expect_ok(&c, kh_run(&c));
        float h2 = act == MP_ACT_RELU ? 0.0f : -1.5f;
        kh_expect_close(y->data, (float[]){0.6f, h2}, 2, 1.0);
        kh_expect_close(h->data, &h2, 1, 1.0);
        kh_free(&c);

        kh_init(&c, MP_OP_RNN, NULL);
        c.opt.activation = act;
        x = kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){1, 1}, NULL);
        kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){1, 1}, &w);
        kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){1, 1}, &r);
        kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){1}, &b);
        h = kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){1, 1}, NULL);
        ((mp_tensor_info *)h->info)->is_variable = true;
        y = kh_output(&c, MP_DT_FLOAT32);
        ((float *)x->data)[0] = 1;
        kh_expect_ok(&c, kh_run(&c));
        kh_expect_close(y->data, (float[]){0.6f}, 1, 1.0);
        ((float *)x->data)[0] = -2;
        kh_expect_ok(&c, kh_rerun(&c, false)); /* the state carried over */
        kh_expect_close(y->data, &h2, 1, 1.0);
        kh_free(&c);
    }
}

static rcfg base(int opcode)
{
    return (rcfg){.opcode = opcode, .time = 3, .batch = 2, .n_x = 3, .n_aux = 2,
                  .units = {4, 3}, .act = MP_ACT_TANH, .time_major = true,
                  .wdt = MP_DT_FLOAT32};
}

static void test_float_random(void **state)
{
    (void)state;
    rcfg c = base(MP_OP_RNN);
    check_cfg(&c, 1);
    c.act = MP_ACT_RELU;
    c.batch = 3;
    check_cfg(&c, 2);
    c = base(MP_OP_UNIDIRECTIONAL_SEQUENCE_RNN);
    check_cfg(&c, 3);
    c.time_major = false;
    c.act = MP_ACT_NONE;
    check_cfg(&c, 4);
    c.act = MP_ACT_RELU6;
    c.time = 4;
    check_cfg(&c, 5);
}

static void test_bidirectional(void **state)
{
    (void)state;
    rcfg c = base(MP_OP_BIDIRECTIONAL_SEQUENCE_RNN);
    check_cfg(&c, 11); /* two outputs */
    c.merge = true;
    check_cfg(&c, 12);
    c.time_major = false;
    check_cfg(&c, 13);
    c.aux_weights = true; /* cross links: both cells add W_aux aux */
    check_cfg(&c, 14);
    c.merge = false;
    c.time_major = true;
    check_cfg(&c, 15);
    c.aux_weights = false; /* no aux weights: the backward cell reads the aux input */
    c.aux_bw = true;
    check_cfg(&c, 16);
    c.act = MP_ACT_RELU_N1_TO_1;
    c.merge = true;
    check_cfg(&c, 17);
}

static void test_hybrid(void **state)
{
    (void)state;
    for (int form = 0; form < 3; form++) {
        int wdt = form == 2 ? MP_DT_UINT8 : MP_DT_INT8;
        bool asym = form == 1;
        uint32_t s = 30u + 10u * (uint32_t)form;
        rcfg c = base(MP_OP_RNN);
        c.wdt = wdt;
        c.asym = asym;
        check_cfg(&c, s);
        c = base(MP_OP_UNIDIRECTIONAL_SEQUENCE_RNN);
        c.wdt = wdt;
        c.asym = asym;
        c.time_major = false;
        check_cfg(&c, s + 1);
        c = base(MP_OP_BIDIRECTIONAL_SEQUENCE_RNN);
        c.wdt = wdt;
        c.asym = asym;
        c.aux_weights = true;
        c.merge = form == 0;
        check_cfg(&c, s + 2);
    }
}

/* A float input row of zeros quantizes to zeros with scale 1 (no contribution): a hybrid
 * RNN fed zeros from a zero state outputs act(b). Non-finite rows run. */
static void test_hybrid_zero_row(void **state)
{
    (void)state;
    rcfg c = base(MP_OP_RNN);
    c.wdt = MP_DT_INT8;
    c.asym = true;
    c.act = MP_ACT_NONE;
    rnn_case R;
    build(&R, &c, 50);
    kh_expect_ok(&R.c, kh_run(&R.c)); /* x is all zeros */
    for (int b = 0; b < c.batch; b++)
        assert_memory_equal((float *)R.y[0]->data + b * c.units[0], R.d[0].b,
                            sizeof(float) * (size_t)c.units[0]);
    /* rows with NaN and infinities quantize without undefined conversions (both forms) */
    float *x = R.x->data;
    x[0] = NAN;
    x[4] = INFINITY;
    x[5] = -INFINITY;
    kh_expect_ok(&R.c, kh_rerun(&R.c, false));
    R.c.opt.asymmetric_quantize_inputs = false;
    kh_expect_ok(&R.c, kh_rerun(&R.c, false));
    kh_free(&R.c);
}

static void test_refusals(void **state)
{
    (void)state;
    rnn_case R;
    rcfg c = base(MP_OP_UNIDIRECTIONAL_SEQUENCE_RNN);
    build(&R, &c, 60);
    ((mp_tensor_info *)R.h[0]->info)->is_variable = false;
    kh_expect_error(&R.c, MP_ERR_FORMAT, "not a variable tensor");
    kh_free(&R.c);

    build(&R, &c, 61); /* a state of the wrong batch */
    R.h[0]->dims[0] = 3;
    kh_expect_error(&R.c, MP_ERR_SHAPE, "hidden state");
    kh_free(&R.c);

    build(&R, &c, 62); /* the input's size is not the weights' */
    R.x->dims[2] = 2;
    kh_expect_error(&R.c, MP_ERR_SHAPE, "input weights");
    kh_free(&R.c);

    build(&R, &c, 63); /* a bias of the wrong length */
    R.c.in[3]->dims[0] = 3;
    kh_expect_error(&R.c, MP_ERR_SHAPE, "bias");
    kh_free(&R.c);

    build(&R, &c, 64); /* a rank-2 input for a sequence */
    R.x->rank = 2;
    kh_expect_error(&R.c, MP_ERR_SHAPE, "expected rank 3");
    kh_free(&R.c);

    c.wdt = MP_DT_INT8; /* hybrid weights must be symmetric */
    build(&R, &c, 65);
    R.zp[0][1] = 3;
    kh_expect_error(&R.c, MP_ERR_UNSUPPORTED, "zero point 3");
    kh_free(&R.c);

    c = base(MP_OP_BIDIRECTIONAL_SEQUENCE_RNN);
    c.merge = true;
    build(&R, &c, 66); /* merge_outputs has one output */
    R.c.opt.merge_outputs = false;
    kh_expect_error(&R.c, MP_ERR_FORMAT, "expected 2");
    kh_free(&R.c);

    c = base(MP_OP_BIDIRECTIONAL_SEQUENCE_RNN);
    c.aux_weights = true;
    build(&R, &c, 67); /* aux weights without the aux input */
    R.c.in[9] = NULL;
    kh_expect_error(&R.c, MP_ERR_FORMAT, "aux input weights");
    kh_free(&R.c);

    build(&R, &c, 68); /* an aux input of another time length */
    R.aux->dims[0] = 2;
    kh_expect_error(&R.c, MP_ERR_SHAPE, "aux input");
    kh_free(&R.c);
}

/* ---- options through the writer and the reader ------------------------------------------- */

/* A model of one operator `code` on a [1,1] tensor (inputs all that tensor, as the reader
 * does not check the operator's tensors) with options o; loaded, its options in *got.
 * Returns the load status, the message in err. */
static mp_status options_roundtrip(int code, int n_in, const mp_op_options *o,
                                   mp_op_options *got, mp_error *err)
{
    mp_tfw *w = mp_tfw_create();
    assert_non_null(w);
    int x = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 2, (int32_t[]){1, 1}, 0, NULL);
    int32_t ins[48];
    for (int i = 0; i < n_in; i++)
        ins[i] = x;
    mp_tfw_op(w, code, n_in, ins, 1, &x, o);
    mp_tfw_io(w, 1, &x, 1, &x);
    void *bytes = NULL;
    size_t size;
    if (mp_tfw_finish(w, &bytes, &size, err) != MP_OK)
        fail_msg("writer: %s", err->msg);
    mp_tfw_free(w);
    mp_model *m = NULL;
    mp_status st = mp_model_load_memory(bytes, size, "opts", &m, err);
    free(bytes);
    if (st == MP_OK)
        *got = m->ops[0].opt;
    mp_model_free(m);
    return st;
}

/* Every field of RNNOptions, SequenceRNNOptions, BidirectionalSequenceRNNOptions, SVDFOptions
 * and BidirectionalSequenceLSTMOptions written and read back, the non-default values and the
 * defaults (BidirectionalSequenceLSTMOptions' time_major: true); SVDF's rank 0 refused. */
static void test_options(void **state)
{
    (void)state;
    static const int codes[5] = {MP_OP_RNN, MP_OP_UNIDIRECTIONAL_SEQUENCE_RNN,
                                 MP_OP_BIDIRECTIONAL_SEQUENCE_RNN, MP_OP_SVDF,
                                 MP_OP_BIDIRECTIONAL_SEQUENCE_LSTM};
    static const int n_in[5] = {5, 5, 12, 5, 48};
    mp_error err = {0};
    for (int k = 0; k < 5; k++) {
        for (int set = 0; set < 2; set++) {
            mp_op_options o = mp_tfw_options_default(), got = {0};
            o.svdf_rank = 1;
            o.time_major = codes[k] == MP_OP_BIDIRECTIONAL_SEQUENCE_LSTM;
            if (set) {
                o.activation = MP_ACT_RELU6;
                o.asymmetric_quantize_inputs = true;
                o.time_major = !o.time_major;
                o.merge_outputs = true;
                o.svdf_rank = 3;
                o.cell_clip = 2.5f;
                o.proj_clip = 0.75f;
            }
            if (options_roundtrip(codes[k], n_in[k], &o, &got, &err) != MP_OK)
                fail_msg("%s: %s", mp_op_name(codes[k]), err.msg);
            assert_int_equal(got.activation, o.activation);
            assert_int_equal(got.asymmetric_quantize_inputs, o.asymmetric_quantize_inputs);
            if (codes[k] != MP_OP_RNN && codes[k] != MP_OP_SVDF)
                assert_int_equal(got.time_major, o.time_major);
            if (codes[k] == MP_OP_BIDIRECTIONAL_SEQUENCE_RNN ||
                codes[k] == MP_OP_BIDIRECTIONAL_SEQUENCE_LSTM)
                assert_int_equal(got.merge_outputs, o.merge_outputs);
            if (codes[k] == MP_OP_SVDF)
                assert_int_equal(got.svdf_rank, o.svdf_rank);
            if (codes[k] == MP_OP_BIDIRECTIONAL_SEQUENCE_LSTM) {
                assert_true(got.cell_clip == o.cell_clip && got.proj_clip == o.proj_clip);
            }
        }
    }
    mp_op_options o = mp_tfw_options_default(), got = {0};
    assert_int_equal(options_roundtrip(MP_OP_SVDF, 5, &o, &got, &err), MP_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "rank 0 is not valid"));
}

/* ---- a model through the session ------------------------------------------------------- */

enum { ST = 3, SB = 2, SI = 2, SU = 3 };

static const float k_w[SU * SI] = {0.5f, -0.3f, 0.2f, 0.8f, -0.6f, 0.1f};
static const float k_r[SU * SU] = {0.1f, -0.2f, 0.3f, 0.0f, 0.4f, -0.1f, 0.2f, 0.2f, -0.3f};
static const float k_b[SU] = {0.05f, -0.1f, 0.2f};
static const float k_bw_w[SU * SI] = {-0.4f, 0.3f, 0.7f, -0.2f, 0.1f, 0.5f};

/* x [3,2,2] time-major -> UNIDIRECTIONAL_SEQUENCE_RNN (TANH) -> ys [3,2,3];
 * BIDIRECTIONAL_SEQUENCE_RNN (merged, RELU, no aux) of x -> yb [3,2,6]; RNN (no activation)
 * of xs [2,2] -> y1 [2,3]. Four variable hidden states h0..h3. */
static void *rnn_model(size_t *size)
{
    mp_tfw *w = mp_tfw_create();
    assert_non_null(w);
    const int32_t dx[3] = {ST, SB, SI}, dw[2] = {SU, SI}, dr[2] = {SU, SU}, db[1] = {SU};
    const int32_t dh[2] = {SB, SU}, dxs[2] = {SB, SI};
    int x = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 3, dx, 0, NULL);
    int xs = mp_tfw_tensor(w, "xs", MP_DT_FLOAT32, 2, dxs, 0, NULL);
    int wt = mp_tfw_tensor(w, "w", MP_DT_FLOAT32, 2, dw, mp_tfw_buffer(w, k_w, sizeof k_w), NULL);
    int bwt = mp_tfw_tensor(w, "bw_w", MP_DT_FLOAT32, 2, dw,
                            mp_tfw_buffer(w, k_bw_w, sizeof k_bw_w), NULL);
    int rt = mp_tfw_tensor(w, "r", MP_DT_FLOAT32, 2, dr, mp_tfw_buffer(w, k_r, sizeof k_r), NULL);
    int bt = mp_tfw_tensor(w, "b", MP_DT_FLOAT32, 1, db, mp_tfw_buffer(w, k_b, sizeof k_b), NULL);
    int h[4];
    for (int i = 0; i < 4; i++) {
        char name[8];
        snprintf(name, sizeof name, "h%d", i);
        h[i] = mp_tfw_tensor_variable(w, mp_tfw_tensor(w, name, MP_DT_FLOAT32, 2, dh, 0, NULL));
    }
    int ys = mp_tfw_tensor(w, "ys", MP_DT_FLOAT32, 3, (int32_t[]){ST, SB, SU}, 0, NULL);
    int yb = mp_tfw_tensor(w, "yb", MP_DT_FLOAT32, 3, (int32_t[]){ST, SB, 2 * SU}, 0, NULL);
    int y1 = mp_tfw_tensor(w, "y1", MP_DT_FLOAT32, 2, dh, 0, NULL);
    mp_op_options o = mp_tfw_options_default();
    o.activation = MP_ACT_TANH;
    o.time_major = true;
    mp_tfw_op(w, MP_OP_UNIDIRECTIONAL_SEQUENCE_RNN, 5, (int32_t[]){x, wt, rt, bt, h[0]}, 1, &ys,
              &o);
    o.activation = MP_ACT_RELU;
    o.merge_outputs = true;
    mp_tfw_op(w, MP_OP_BIDIRECTIONAL_SEQUENCE_RNN, 12,
              (int32_t[]){x, wt, rt, bt, h[1], bwt, rt, bt, h[2], -1, -1, -1}, 1, &yb, &o);
    o = mp_tfw_options_default();
    mp_tfw_op(w, MP_OP_RNN, 5, (int32_t[]){xs, bwt, rt, bt, h[3]}, 1, &y1, &o);
    mp_tfw_io(w, 2, (int32_t[]){x, xs}, 3, (int32_t[]){ys, yb, y1});
    mp_test_model built = mp_test_tfw_finish(w);
    *size = built.size;
    return built.bytes;
}

enum { NY = ST * SB * SU + ST * SB * 2 * SU + SB * SU };

/* Want of one run from states h (updated): the three outputs concatenated. */
static void model_ref(const float *x, const float *xs, float h[4][SB * SU], float *want)
{
    rcfg c = {.opcode = MP_OP_UNIDIRECTIONAL_SEQUENCE_RNN, .time = ST, .batch = SB, .n_x = SI,
              .units = {SU, SU}, .act = MP_ACT_TANH, .time_major = true,
              .wdt = MP_DT_FLOAT32};
    rdir f = {0}, bw = {0};
    memcpy(f.w, k_w, sizeof k_w);
    memcpy(f.r, k_r, sizeof k_r);
    memcpy(f.b, k_b, sizeof k_b);
    bw = f;
    memcpy(bw.w, k_bw_w, sizeof k_bw_w);
    ref_dir(&c, &f, 0, x, SI, NULL, h[0], want, SU, 0);
    c.act = MP_ACT_RELU;
    float *yb = want + ST * SB * SU;
    ref_dir(&c, &f, 0, x, SI, NULL, h[1], yb, 2 * SU, 0);
    ref_dir(&c, &bw, 1, x, SI, NULL, h[2], yb, 2 * SU, SU);
    c.act = MP_ACT_NONE;
    c.time = 1;
    ref_dir(&c, &bw, 0, xs, SI, NULL, h[3], yb + ST * SB * 2 * SU, SU, 0);
}

/* Runs 1 and 2, a reset, run 3 (= run 1): every output of all four, concatenated. */
static void run_rnn_model(mp_memory_mode mode, float out[4][NY])
{
    size_t size;
    void *bytes = rnn_model(&size);
    mp_session *s = kh_session(mode, bytes, size, "rnn");
    mp_error err = {0};
    float x[ST * SB * SI], xs[SB * SI], h[4][SB * SU] = {{0}}, want[NY];
    for (int r = 0; r < 4; r++) {
        kh_fill(x, ST * SB * SI, 70u + (uint32_t)(r % 2), 1.0f);
        kh_fill(xs, SB * SI, 80u + (uint32_t)(r % 2), 1.0f);
        if (r == 2) {
            assert_int_equal(mp_session_reset_variables(s, &err), MP_OK);
            memset(h, 0, sizeof h);
        }
        assert_int_equal(mp_session_set_input(s, 0, x, sizeof x, &err), MP_OK);
        assert_int_equal(mp_session_set_input(s, 1, xs, sizeof xs, &err), MP_OK);
        if (mp_session_run(s, &err) != MP_OK)
            fail_msg("run (%s): %s", mp_memory_mode_name(mode), err.msg);
        size_t at = 0;
        for (int i = 0; i < 3; i++) {
            const mp_tensor *t = mp_session_output(s, i);
            memcpy(out[r] + at, t->data, t->bytes);
            at += t->bytes / sizeof(float);
        }
        assert_int_equal(at, NY);
        model_ref(x, xs, h, want);
        kh_expect_close(out[r], want, NY, 1.0);
    }
    /* after the reset the runs repeat the first two exactly */
    assert_memory_equal(out[2], out[0], sizeof out[0]);
    assert_memory_equal(out[3], out[1], sizeof out[1]);
    assert_true(memcmp(out[0], out[1], sizeof out[0]) != 0);
    mp_session_destroy(s);
}

static void test_model_static_dynamic(void **state)
{
    (void)state;
    static float a[4][NY], b[4][NY];
    run_rnn_model(MP_MEMORY_STATIC, a);
    run_rnn_model(MP_MEMORY_DYNAMIC, b);
    assert_memory_equal(a, b, sizeof a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand),
        cmocka_unit_test(test_float_random),
        cmocka_unit_test(test_bidirectional),
        cmocka_unit_test(test_hybrid),
        cmocka_unit_test(test_hybrid_zero_row),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_model_static_dynamic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
