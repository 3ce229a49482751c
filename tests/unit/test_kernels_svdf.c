/* Tests of SVDF (engine/kernels/svdf.c): one filter worked out by hand, random float32 and
 * hybrid cases against the definition restated here (the state's window shifted left, the
 * newest column the feature product, the time product summed over rank filters per unit, the
 * bias and activation; hybrid: TensorFlow Lite's row quantization, tests/util/quant_ref.h),
 * the int8 form bit for bit against a C restatement of TensorFlow Lite's integer arithmetic
 * (two requantizations, int16 state), the state carried from run to run, the refusals, and a
 * writer-built model of a float32 and an int8 SVDF run by the session in static and dynamic
 * modes (a second run continuing the state, a reset restarting it). */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model/tflite_writer.h"
#include "engine/session.h"
#include "tests/util/kernel_harness.h"
#include "tests/util/quant_ref.h"

enum { MB = 3, MI = 5, MF = 6, MM = 4 };

typedef struct scfg {
    int batch, n_input, filters, rank, memory, act;
    bool bias;
    int wdt; /* weights: MP_DT_FLOAT32, or MP_DT_INT8 / MP_DT_UINT8 (hybrid) */
    bool asym;
} scfg;

typedef struct svdf_case {
    kh_case c;
    mp_tensor *x, *state, *y;
    float wf[MF * MI], wt[MF * MM], b[MF];
    uint8_t qwf[MF * MI], qwt[MF * MM];
    float swf, swt;
    int64_t zp;
} svdf_case;

static int units(const scfg *s)
{
    return s->filters / s->rank;
}

static void quantize_weights(const scfg *s, const float *v, int n, uint8_t *q, float *sc)
{
    float m = 0;
    for (int i = 0; i < n; i++)
        m = fmaxf(m, fabsf(v[i]));
    *sc = m / 127.0f;
    for (int i = 0; i < n; i++) {
        int k = (int)lrintf(v[i] / *sc);
        q[i] = s->wdt == MP_DT_UINT8 ? (uint8_t)(k + 128) : (uint8_t)(int8_t)k;
    }
}

static int stored(const scfg *s, const uint8_t *q, int i)
{
    return s->wdt == MP_DT_UINT8 ? (int)q[i] - 128 : (int)(int8_t)q[i];
}

static void build(svdf_case *S, const scfg *s, uint32_t seed)
{
    memset(S, 0, sizeof *S);
    kh_case *c = &S->c;
    kh_init(c, MP_OP_SVDF, NULL);
    c->opt.svdf_rank = s->rank;
    c->opt.activation = s->act;
    c->opt.asymmetric_quantize_inputs = s->asym;
    kh_fill(S->wf, MF * MI, seed, 0.9f);
    kh_fill(S->wt, MF * MM, seed + 1, 0.7f);
    kh_fill(S->b, MF, seed + 2, 0.4f);
    S->x = kh_input(c, MP_DT_FLOAT32, 2, (int32_t[]){s->batch, s->n_input}, NULL);
    const int32_t dwf[2] = {s->filters, s->n_input}, dwt[2] = {s->filters, s->memory};
    if (s->wdt == MP_DT_FLOAT32) {
        kh_input(c, MP_DT_FLOAT32, 2, dwf, S->wf);
        kh_input(c, MP_DT_FLOAT32, 2, dwt, S->wt);
    } else {
        quantize_weights(s, S->wf, s->filters * s->n_input, S->qwf, &S->swf);
        quantize_weights(s, S->wt, s->filters * s->memory, S->qwt, &S->swt);
        S->zp = s->wdt == MP_DT_UINT8 ? 128 : 0;
        kh_quant(c, kh_input(c, (mp_dtype)s->wdt, 2, dwf, S->qwf), 1, &S->swf, &S->zp, 0);
        kh_quant(c, kh_input(c, (mp_dtype)s->wdt, 2, dwt, S->qwt), 1, &S->swt, &S->zp, 0);
    }
    if (s->bias)
        kh_input(c, MP_DT_FLOAT32, 1, (int32_t[]){units(s)}, S->b);
    else
        kh_omit_input(c);
    S->state = kh_input(c, MP_DT_FLOAT32, 2, (int32_t[]){s->batch, s->memory * s->filters},
                        NULL);
    ((mp_tensor_info *)S->state->info)->is_variable = true;
    S->y = kh_output(c, MP_DT_FLOAT32);
}

/* The definition, on float state st [batch][filters][memory] (updated) into y. */
static void ref_float(const scfg *s, const svdf_case *S, const float *x, float *st, float *y)
{
    int F = s->filters, M = s->memory, I = s->n_input, U = units(s);
    for (int b = 0; b < s->batch; b++) {
        float act[MF];
        if (s->wdt == MP_DT_FLOAT32) {
            for (int f = 0; f < F; f++) {
                double a = 0;
                for (int i = 0; i < I; i++)
                    a += (double)S->wf[f * I + i] * x[b * I + i];
                act[f] = (float)a;
            }
        } else {
            int8_t q[MI];
            int32_t zp;
            float sc = qref_hybrid_row(x + b * I, I, q, s->asym, &zp) * S->swf;
            for (int f = 0; f < F; f++) {
                long dot = 0;
                for (int i = 0; i < I; i++)
                    dot += (long)stored(s, S->qwf, f * I + i) * (q[i] - zp);
                act[f] = (float)dot * sc;
            }
        }
        double tsum[MF];
        for (int f = 0; f < F; f++) {
            float *row = st + (b * F + f) * M;
            for (int m = 0; m + 1 < M; m++)
                row[m] = row[m + 1];
            row[M - 1] = act[f];
            tsum[f] = 0;
            for (int m = 0; m < M; m++) {
                double w = s->wdt == MP_DT_FLOAT32 ? S->wt[f * M + m]
                                                   : (double)(stored(s, S->qwt, f * M + m) * S->swt);
                tsum[f] += w * row[m];
            }
        }
        for (int u = 0; u < U; u++) {
            double o = s->bias ? S->b[u] : 0;
            for (int r = 0; r < s->rank; r++)
                o += tsum[u * s->rank + r];
            y[b * U + u] = (float)kh_ref_act(o, s->act);
        }
    }
}

static void check_cfg(const scfg *s, uint32_t seed)
{
    svdf_case S;
    build(&S, s, seed);
    float st[MB * MF * MM] = {0}, want[MB * MF];
    int n_st = s->batch * s->filters * s->memory;
    for (int run = 0; run < s->memory + 2; run++) { /* past a full window */
        kh_fill(S.x->data, (size_t)(s->batch * s->n_input), seed + 50u + (uint32_t)run, 1.3f);
        kh_expect_ok(&S.c, run == 0 ? kh_run(&S.c) : kh_rerun(&S.c, false));
        assert_int_equal(S.y->rank, 2);
        assert_int_equal(S.y->dims[0], s->batch);
        assert_int_equal(S.y->dims[1], units(s));
        ref_float(s, &S, S.x->data, st, want);
        kh_expect_close(S.y->data, want, (size_t)(s->batch * units(s)), 1.0);
        kh_expect_close(S.state->data, st, (size_t)n_st, 1.0);
    }
    kh_free(&S.c);
}

/* One filter, rank 1, memory 2: wf = 2, wt = (0.5 oldest, 1 newest), b = 0.1.
 * x = 1: state (0, 2), y = 0.1 + 0 + 2 = 2.1; x = -1: state (2, -2), y = 0.1 + 1 - 2 = -0.9
 * (RELU: 0). */
static void test_hand(void **state)
{
    (void)state;
    static const float wf = 2, wt[2] = {0.5f, 1}, b = 0.1f;
    for (int act = MP_ACT_NONE; act <= MP_ACT_RELU; act++) {
        kh_case c;
        kh_init(&c, MP_OP_SVDF, NULL);
        c.opt.svdf_rank = 1;
        c.opt.activation = act;
        mp_tensor *x = kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){1, 1}, NULL);
        kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){1, 1}, &wf);
        kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){1, 2}, wt);
        kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){1}, &b);
        mp_tensor *st = kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){1, 2}, NULL);
        ((mp_tensor_info *)st->info)->is_variable = true;
        mp_tensor *y = kh_output(&c, MP_DT_FLOAT32);
        *(float *)x->data = 1;
        kh_expect_ok(&c, kh_run(&c));
        kh_expect_close(y->data, (float[]){2.1f}, 1, 1.0);
        kh_expect_close(st->data, (float[]){0, 2}, 2, 1.0);
        *(float *)x->data = -1;
        kh_expect_ok(&c, kh_rerun(&c, false));
        kh_expect_close(y->data, (float[]){act == MP_ACT_RELU ? 0.0f : -0.9f}, 1, 1.0);
        kh_expect_close(st->data, (float[]){2, -2}, 2, 1.0);
        kh_free(&c);
    }
}

static scfg base(void)
{
    return (scfg){.batch = 2, .n_input = 3, .filters = 4, .rank = 2, .memory = 3,
                  .act = MP_ACT_NONE, .bias = true, .wdt = MP_DT_FLOAT32};
}

static void test_float_random(void **state)
{
    (void)state;
    scfg s = base();
    check_cfg(&s, 1);
    s.bias = false;
    s.act = MP_ACT_RELU;
    check_cfg(&s, 2);
    s = (scfg){.batch = 3, .n_input = 5, .filters = 6, .rank = 1, .memory = 4,
               .act = MP_ACT_TANH, .bias = true, .wdt = MP_DT_FLOAT32};
    check_cfg(&s, 3);
    s.rank = 3;
    s.memory = 1;
    s.act = MP_ACT_RELU6;
    check_cfg(&s, 4);
}

static void test_hybrid(void **state)
{
    (void)state;
    for (int form = 0; form < 3; form++) {
        scfg s = base();
        s.wdt = form == 2 ? MP_DT_UINT8 : MP_DT_INT8;
        s.asym = form == 1;
        check_cfg(&s, 10u + (uint32_t)form);
        s.batch = 3;
        s.n_input = 5;
        s.filters = 6;
        s.rank = 3;
        s.act = MP_ACT_TANH;
        s.bias = form != 1;
        check_cfg(&s, 20u + (uint32_t)form);
    }
}

/* ---- int8 ------------------------------------------------------------------------------- */

typedef struct qcfg {
    int batch, n_input, filters, rank, memory;
    bool bias;
    float in_s, wf_s, wt_s, st_s, out_s;
    int32_t in_zp, out_zp;
} qcfg;

typedef struct qdata {
    int8_t wf[MF * MI];
    int16_t wt[MF * MM];
    int32_t b[MF];
} qdata;

/* TensorFlow Lite's EvalIntegerSVDF, restated: st [batch][filters][memory] int16 (updated). */
static void ref_int(const qcfg *q, const qdata *d, const int8_t *x, int16_t *st, int8_t *y)
{
    int32_t m1, m2;
    int s1, s2;
    qref_quantize_multiplier((double)(q->in_s * q->wf_s / q->st_s), &m1, &s1);
    qref_quantize_multiplier((double)(q->st_s * q->wt_s / q->out_s), &m2, &s2);
    int F = q->filters, M = q->memory, I = q->n_input, U = F / q->rank;
    for (int b = 0; b < q->batch; b++) {
        int32_t t[MF];
        for (int f = 0; f < F; f++) {
            int16_t *row = st + (b * F + f) * M;
            memmove(row, row + 1, sizeof(int16_t) * (size_t)(M - 1));
            int32_t dot = 0;
            for (int i = 0; i < I; i++)
                dot += d->wf[f * I + i] * (x[b * I + i] - q->in_zp);
            int32_t v = qref_mbqm(dot, m1, s1);
            row[M - 1] = (int16_t)(v > 32767 ? 32767 : v < -32768 ? -32768 : v);
            t[f] = 0;
            for (int m = 0; m < M; m++)
                t[f] += d->wt[f * M + m] * row[m];
        }
        for (int u = 0; u < U; u++) {
            int32_t a = q->bias ? d->b[u] : 0;
            for (int r = 0; r < q->rank; r++)
                a += t[u * q->rank + r];
            int32_t v = qref_mbqm(a, m2, s2) + q->out_zp;
            y[b * U + u] = (int8_t)(v > 127 ? 127 : v < -128 ? -128 : v);
        }
    }
}

typedef struct qcase {
    kh_case c;
    qdata d;
    mp_tensor *x, *st, *y;
    float sc[5];
    int64_t zp[5];
} qcase;

static void build_q(qcase *Q, const qcfg *q, uint32_t seed)
{
    memset(Q, 0, sizeof *Q);
    kh_case *c = &Q->c;
    for (int i = 0; i < MF * MI; i++)
        Q->d.wf[i] = (int8_t)(kh_irand(&seed, 255) - 127);
    for (int i = 0; i < MF * MM; i++)
        Q->d.wt[i] = (int16_t)(kh_irand(&seed, 4001) - 2000);
    for (int i = 0; i < MF; i++)
        Q->d.b[i] = kh_irand(&seed, 200001) - 100000;
    const float sc[5] = {q->in_s, q->wf_s, q->wt_s, q->st_s, q->out_s};
    memcpy(Q->sc, sc, sizeof sc);
    Q->zp[0] = q->in_zp;
    Q->zp[4] = q->out_zp;
    kh_init(c, MP_OP_SVDF, NULL);
    c->opt.svdf_rank = q->rank;
    c->opt.activation = MP_ACT_RELU;
    Q->x = kh_input(c, MP_DT_INT8, 2, (int32_t[]){q->batch, q->n_input}, NULL);
    kh_quant(c, Q->x, 1, &Q->sc[0], &Q->zp[0], 0);
    kh_quant(c, kh_input(c, MP_DT_INT8, 2, (int32_t[]){q->filters, q->n_input}, Q->d.wf), 1,
             &Q->sc[1], &Q->zp[1], 0);
    kh_quant(c, kh_input(c, MP_DT_INT16, 2, (int32_t[]){q->filters, q->memory}, Q->d.wt), 1,
             &Q->sc[2], &Q->zp[2], 0);
    if (q->bias)
        kh_input(c, MP_DT_INT32, 1, (int32_t[]){q->filters / q->rank}, Q->d.b);
    else
        kh_omit_input(c);
    Q->st = kh_input(c, MP_DT_INT16, 2, (int32_t[]){q->batch, q->memory * q->filters}, NULL);
    kh_quant(c, Q->st, 1, &Q->sc[3], &Q->zp[3], 0);
    ((mp_tensor_info *)Q->st->info)->is_variable = true;
    Q->y = kh_output(c, MP_DT_INT8);
    kh_quant(c, Q->y, 1, &Q->sc[4], &Q->zp[4], 0);
}

static void check_q(const qcfg *q, uint32_t seed)
{
    qcase Q;
    build_q(&Q, q, seed);
    int16_t st[MB * MF * MM] = {0};
    int8_t want[MB * MF];
    int U = q->filters / q->rank;
    for (int run = 0; run < q->memory + 2; run++) {
        int8_t *x = Q.x->data;
        for (int i = 0; i < q->batch * q->n_input; i++)
            x[i] = (int8_t)(kh_irand(&seed, 256) - 128);
        kh_expect_ok(&Q.c, run == 0 ? kh_run(&Q.c) : kh_rerun(&Q.c, false));
        ref_int(q, &Q.d, x, st, want);
        assert_memory_equal(Q.y->data, want, (size_t)(q->batch * U));
        assert_memory_equal(Q.st->data, st, sizeof(int16_t) * (size_t)(q->batch * q->filters *
                                                                        q->memory));
    }
    kh_free(&Q.c);
}

static void test_int8(void **state)
{
    (void)state;
    qcfg q = {.batch = 2, .n_input = 3, .filters = 4, .rank = 2, .memory = 3, .bias = true,
              .in_s = 0.02f, .wf_s = 0.01f, .wt_s = 0.0005f, .st_s = 0.001f, .out_s = 0.5f,
              .in_zp = 5, .out_zp = -3};
    check_q(&q, 1);
    q.bias = false;
    q.out_s = 0.05f; /* many outputs saturate */
    check_q(&q, 2);
    q = (qcfg){.batch = 3, .n_input = 5, .filters = 6, .rank = 3, .memory = 4, .bias = true,
               .in_s = 0.1f, .wf_s = 0.02f, .wt_s = 0.001f, .st_s = 0.05f, .out_s = 0.3f,
               .in_zp = -20, .out_zp = 10};
    check_q(&q, 3);
    q.st_s = 0.0001f; /* the state saturates at int16 */
    check_q(&q, 4);
}

static void test_refusals(void **state)
{
    (void)state;
    svdf_case S;
    scfg s = base();
    build(&S, &s, 40);
    S.c.opt.svdf_rank = 3; /* 4 filters */
    kh_expect_error(&S.c, MP_ERR_SHAPE, "multiple of the rank");
    kh_free(&S.c);
    build(&S, &s, 41);
    S.c.opt.svdf_rank = 0;
    kh_expect_error(&S.c, MP_ERR_FORMAT, "rank 0");
    kh_free(&S.c);
    build(&S, &s, 42);
    ((mp_tensor_info *)S.state->info)->is_variable = false;
    kh_expect_error(&S.c, MP_ERR_FORMAT, "not a variable tensor");
    kh_free(&S.c);
    build(&S, &s, 43);
    S.state->dims[1] = 11; /* not memory x filters */
    kh_expect_error(&S.c, MP_ERR_SHAPE, "state");
    kh_free(&S.c);
    build(&S, &s, 44);
    S.x->dims[1] = 4;
    kh_expect_error(&S.c, MP_ERR_SHAPE, "weights_feature");
    kh_free(&S.c);
    build(&S, &s, 45);
    S.c.in[3]->dims[0] = 4; /* the bias has one value per unit (2) */
    kh_expect_error(&S.c, MP_ERR_SHAPE, "bias");
    kh_free(&S.c);

    qcase Q;
    qcfg q = {.batch = 1, .n_input = 2, .filters = 2, .rank = 1, .memory = 2, .bias = true,
              .in_s = 0.1f, .wf_s = 0.1f, .wt_s = 0.1f, .st_s = 0.1f, .out_s = 0.1f};
    build_q(&Q, &q, 46);
    Q.c.opt.activation = MP_ACT_NONE;
    kh_expect_error(&Q.c, MP_ERR_UNSUPPORTED, "RELU");
    kh_free(&Q.c);
    build_q(&Q, &q, 47);
    Q.zp[3] = 4;
    kh_expect_error(&Q.c, MP_ERR_UNSUPPORTED, "zero point 4");
    kh_free(&Q.c);
    build_q(&Q, &q, 48);
    Q.st->dtype = MP_DT_INT8;
    kh_expect_error(&Q.c, MP_ERR_UNSUPPORTED, "takes i16");
    kh_free(&Q.c);
}

/* ---- a model through the session ------------------------------------------------------- */

enum { SB = 2, SI = 3, SF = 4, SR = 2, SM = 3, SU = SF / SR };

static const float k_wf[SF * SI] = {0.5f, -0.2f, 0.1f, 0.3f, 0.3f, -0.6f,
                                    -0.1f, 0.7f, 0.2f, 0.4f, -0.5f, 0.2f};
static const float k_wt[SF * SM] = {0.2f, 0.5f, 1.0f, -0.3f, 0.1f, 0.8f,
                                    0.6f, -0.2f, 0.4f, 0.1f, 0.9f, -0.7f};
static const float k_b[SU] = {0.1f, -0.2f};
static const qcfg k_q = {.batch = SB, .n_input = SI, .filters = SF, .rank = SR, .memory = SM,
                         .bias = true, .in_s = 0.05f, .wf_s = 0.01f, .wt_s = 0.001f,
                         .st_s = 0.002f, .out_s = 0.1f, .in_zp = 3, .out_zp = -5};

static qdata model_qdata(void)
{
    qdata d;
    uint32_t seed = 90;
    for (int i = 0; i < SF * SI; i++)
        d.wf[i] = (int8_t)(kh_irand(&seed, 255) - 127);
    for (int i = 0; i < SF * SM; i++)
        d.wt[i] = (int16_t)(kh_irand(&seed, 2001) - 1000);
    for (int i = 0; i < SU; i++)
        d.b[i] = kh_irand(&seed, 20001) - 10000;
    return d;
}

/* x [2,3] f32 -> SVDF (rank 2, memory 3, TANH) -> y [2,2]; xq [2,3] i8 -> SVDF (int8, RELU)
 * -> yq [2,2] i8. Two variable states. */
static void *svdf_model(size_t *size)
{
    mp_tfw *w = mp_tfw_create();
    assert_non_null(w);
    qdata d = model_qdata();
    const int32_t dx[2] = {SB, SI}, dwf[2] = {SF, SI}, dwt[2] = {SF, SM}, db[1] = {SU};
    const int32_t dst[2] = {SB, SF * SM}, dy[2] = {SB, SU};
    int x = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 2, dx, 0, NULL);
    int wf = mp_tfw_tensor(w, "wf", MP_DT_FLOAT32, 2, dwf, mp_tfw_buffer(w, k_wf, sizeof k_wf),
                           NULL);
    int wt = mp_tfw_tensor(w, "wt", MP_DT_FLOAT32, 2, dwt, mp_tfw_buffer(w, k_wt, sizeof k_wt),
                           NULL);
    int b = mp_tfw_tensor(w, "b", MP_DT_FLOAT32, 1, db, mp_tfw_buffer(w, k_b, sizeof k_b), NULL);
    int st = mp_tfw_tensor_variable(w, mp_tfw_tensor(w, "st", MP_DT_FLOAT32, 2, dst, 0, NULL));
    int y = mp_tfw_tensor(w, "y", MP_DT_FLOAT32, 2, dy, 0, NULL);
    int64_t zin = k_q.in_zp, zout = k_q.out_zp;
    int xq = mp_tfw_tensor_quant(w, mp_tfw_tensor(w, "xq", MP_DT_INT8, 2, dx, 0, NULL), 1,
                                 &k_q.in_s, &zin, 0);
    int wfq = mp_tfw_tensor_quant(
        w, mp_tfw_tensor(w, "wfq", MP_DT_INT8, 2, dwf, mp_tfw_buffer(w, d.wf, SF * SI), NULL),
        1, &k_q.wf_s, NULL, 0);
    int wtq = mp_tfw_tensor_quant(
        w, mp_tfw_tensor(w, "wtq", MP_DT_INT16, 2, dwt, mp_tfw_buffer(w, d.wt, SF * SM * 2), NULL),
        1, &k_q.wt_s, NULL, 0);
    int bq = mp_tfw_tensor(w, "bq", MP_DT_INT32, 1, db, mp_tfw_buffer(w, d.b, SU * 4), NULL);
    int stq = mp_tfw_tensor_quant(
        w, mp_tfw_tensor_variable(w, mp_tfw_tensor(w, "stq", MP_DT_INT16, 2, dst, 0, NULL)), 1,
        &k_q.st_s, NULL, 0);
    int yq = mp_tfw_tensor_quant(w, mp_tfw_tensor(w, "yq", MP_DT_INT8, 2, dy, 0, NULL), 1,
                                 &k_q.out_s, &zout, 0);
    mp_op_options o = mp_tfw_options_default();
    o.svdf_rank = SR;
    o.activation = MP_ACT_TANH;
    mp_tfw_op(w, MP_OP_SVDF, 5, (int32_t[]){x, wf, wt, b, st}, 1, &y, &o);
    o.activation = MP_ACT_RELU;
    mp_tfw_op(w, MP_OP_SVDF, 5, (int32_t[]){xq, wfq, wtq, bq, stq}, 1, &yq, &o);
    mp_tfw_io(w, 2, (int32_t[]){x, xq}, 2, (int32_t[]){y, yq});
    mp_test_model built = mp_test_tfw_finish(w);
    *size = built.size;
    return built.bytes;
}

typedef struct model_out {
    float y[SB * SU];
    int8_t yq[SB * SU];
} model_out;

/* Runs 1 and 2, a reset, runs 3 and 4 with run 1 and 2's inputs. */
static void run_svdf_model(mp_memory_mode mode, model_out out[4])
{
    size_t size;
    void *bytes = svdf_model(&size);
    mp_session *s = kh_session(mode, bytes, size, "svdf");
    mp_error err = {0};
    scfg sc = {.batch = SB, .n_input = SI, .filters = SF, .rank = SR, .memory = SM,
               .act = MP_ACT_TANH, .bias = true, .wdt = MP_DT_FLOAT32};
    svdf_case ref = {0};
    memcpy(ref.wf, k_wf, sizeof k_wf);
    memcpy(ref.wt, k_wt, sizeof k_wt);
    memcpy(ref.b, k_b, sizeof k_b);
    qdata d = model_qdata();
    float st[SB * SF * SM] = {0};
    int16_t stq[SB * SF * SM] = {0};
    for (int r = 0; r < 4; r++) {
        float x[SB * SI];
        int8_t xq[SB * SI];
        uint32_t seed = 100u + (uint32_t)(r % 2);
        kh_fill(x, SB * SI, seed, 1.0f);
        for (int i = 0; i < SB * SI; i++)
            xq[i] = (int8_t)(kh_irand(&seed, 256) - 128);
        if (r == 2) {
            assert_int_equal(mp_session_reset_variables(s, &err), MP_OK);
            memset(st, 0, sizeof st);
            memset(stq, 0, sizeof stq);
        }
        assert_int_equal(mp_session_set_input(s, 0, x, sizeof x, &err), MP_OK);
        assert_int_equal(mp_session_set_input(s, 1, xq, sizeof xq, &err), MP_OK);
        if (mp_session_run(s, &err) != MP_OK)
            fail_msg("run (%s): %s", mp_memory_mode_name(mode), err.msg);
        memcpy(out[r].y, mp_session_output(s, 0)->data, sizeof out[r].y);
        memcpy(out[r].yq, mp_session_output(s, 1)->data, sizeof out[r].yq);
        float want[SB * SU];
        int8_t wantq[SB * SU];
        ref_float(&sc, &ref, x, st, want);
        ref_int(&k_q, &d, xq, stq, wantq);
        kh_expect_close(out[r].y, want, SB * SU, 1.0);
        assert_memory_equal(out[r].yq, wantq, sizeof wantq);
    }
    assert_memory_equal(&out[2], &out[0], sizeof out[0]);
    assert_memory_equal(&out[3], &out[1], sizeof out[1]);
    assert_true(memcmp(out[0].y, out[1].y, sizeof out[0].y) != 0);
    mp_session_destroy(s);
}

static void test_model_static_dynamic(void **state)
{
    (void)state;
    model_out a[4], b[4];
    run_svdf_model(MP_MEMORY_STATIC, a);
    run_svdf_model(MP_MEMORY_DYNAMIC, b);
    assert_memory_equal(a, b, sizeof a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand),
        cmocka_unit_test(test_float_random),
        cmocka_unit_test(test_hybrid),
        cmocka_unit_test(test_int8),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_model_static_dynamic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
