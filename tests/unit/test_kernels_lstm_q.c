/* Tests of the full-integer (int8, TensorFlow Lite's 8x8_16) LSTM and
 * UNIDIRECTIONAL_SEQUENCE_LSTM (engine/kernels/lstm_int.c): the int16 sigmoid and tanh bit for
 * bit on TensorFlow Lite's own test vectors and against their real definitions (exact at 0,
 * odd / complementary symmetry, within a few units in the last place everywhere); the whole
 * step bit for bit against a restatement here of TensorFlow Lite's integer step (lstm.cc's
 * effective scales, lstm_eval.cc's gate, cell and output arithmetic, the zero points applied
 * to the inputs rather than folded) on random small cases: plain, peephole, projection (with
 * and without bias, clipped), layer norm, CIFG, cell clip, both time layouts and the one-step
 * LSTM, each over two runs so the state carries over; an empty sequence; the refusals
 * (intermediates missing or of the 8x8_8 form, dtypes, activation, cell scale,
 * bidirectional); and a writer-built int8 model run by the session in static and dynamic
 * modes, equal, a reset giving the first run's output again. */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/kernels/lstm_int.h"
#include "engine/kernels/quant_math.h"
#include "engine/model/tflite_writer.h"
#include "engine/session.h"
#include "tests/util/kernel_harness.h"

#define QM 8 /* largest size of a dimension here */

typedef struct qcfg {
    int B, T, I, C, O;
    bool cifg, peep, proj, proj_bias, ln, time_major, one_step;
    float cell_clip, proj_clip;
} qcfg;

/* The quantized parameters of a case. */
typedef struct qparams {
    int8_t wx[4][QM * QM], wh[4][QM * QM], wp[QM * QM];
    int32_t bias[4][QM], pb[QM];
    int16_t peep[3][QM], ln[4][QM];
    float s_x, s_wx[4], s_wh[4], s_wp, s_peep[3], s_ln[4], s_h, s_c, s_y, s_inter[5];
    int64_t zp_x, zp_h, zp_y, zp_inter[5];
} qparams;

static uint32_t lcg(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

static int32_t irange(uint32_t *s, int32_t lo, int32_t hi)
{
    return lo + (int32_t)(lcg(s) % (uint32_t)(hi - lo + 1));
}

static void fill_params(qparams *p, const qcfg *cf, uint32_t seed)
{
    memset(p, 0, sizeof *p);
    for (int k = 0; k < 4; k++) {
        for (int i = 0; i < QM * QM; i++) {
            p->wx[k][i] = (int8_t)irange(&seed, -127, 127);
            p->wh[k][i] = (int8_t)irange(&seed, -127, 127);
        }
        for (int i = 0; i < QM; i++) {
            p->bias[k][i] = irange(&seed, -3000, 3000);
            p->ln[k][i] = (int16_t)irange(&seed, 1000, 3000);
        }
        p->s_wx[k] = 0.004f + 0.001f * (float)k;
        p->s_wh[k] = 0.005f - 0.0005f * (float)k;
        p->s_ln[k] = 0.0005f;
    }
    for (int i = 0; i < QM * QM; i++)
        p->wp[i] = (int8_t)irange(&seed, -127, 127);
    for (int i = 0; i < QM; i++) {
        p->pb[i] = irange(&seed, -500, 500);
        for (int k = 0; k < 3; k++)
            p->peep[k][i] = (int16_t)irange(&seed, -4000, 4000);
    }
    for (int k = 0; k < 3; k++)
        p->s_peep[k] = 0.0001f;
    p->s_x = 0.02f;
    p->zp_x = -3;
    p->s_h = 0.008f;
    p->zp_h = 2;
    p->s_y = p->s_h; /* the output is the output state */
    p->zp_y = p->zp_h;
    p->s_c = 0x1p-11f;
    p->s_wp = 0.006f;
    for (int k = 0; k < 4; k++) {
        p->s_inter[k] = 0.0004f + 0.0001f * (float)k;
        p->zp_inter[k] = 0;
    }
    p->s_inter[4] = 0.007f;
    p->zp_inter[4] = cf->proj ? -1 : p->zp_h; /* without projection hidden is the output */
    if (!cf->proj)
        p->s_inter[4] = p->s_h;
}

/* ---- the reference: TensorFlow Lite's integer step restated ---- */

static int16_t sat16(int64_t v)
{
    return (int16_t)(v < INT16_MIN ? INT16_MIN : v > INT16_MAX ? INT16_MAX : v);
}

static int8_t sat8(int64_t v)
{
    return (int8_t)(v < INT8_MIN ? INT8_MIN : v > INT8_MAX ? INT8_MAX : v);
}

/* acc (taken modulo 2^32, as TensorFlow Lite's int32 sums) times the real multiplier */
static int32_t requant(int64_t acc, double real)
{
    int32_t m;
    int s;
    if (!mp_quantize_multiplier(real, &m, &s))
        m = s = 0;
    return mp_multiply_by_quantized_multiplier((int32_t)(uint32_t)(uint64_t)acc, m, s);
}

static int32_t div_pot(int32_t x, int e)
{
    return mp_rounding_divide_by_pot(x, e);
}

typedef struct qref {
    const qcfg *cf;
    const qparams *p;
    float inter[4];
    int cell_scale;
} qref;

/* PortableApplyLayerNorm on one row */
static void ref_ln(int16_t *row, int C, const int16_t *w, const int32_t *bias, float scale)
{
    int64_t sum = 0, sq = 0;
    for (int j = 0; j < C; j++) {
        sum += row[j];
        sq += (int64_t)row[j] * row[j];
    }
    int32_t mean = (int32_t)(sum * 1024 / C);
    int64_t var = sq * ((1 << 20) / C) - (int64_t)mean * mean;
    int32_t v2 = (int32_t)(var / (1 << 20));
    if (v2 < 1) {
        v2 = (int32_t)(10000 * scale);
        if (v2 < 1)
            v2 = 1;
    }
    int32_t im;
    int is;
    mp_inv_sqrt_quantized_multiplier(v2, &im, &is);
    int32_t lm;
    int ls;
    mp_quantize_multiplier(scale, &lm, &ls);
    for (int j = 0; j < C; j++) {
        int32_t r = mp_multiply_by_quantized_multiplier(1024 * row[j] - mean, im, is);
        int64_t v3 = (int32_t)(uint32_t)((int64_t)r * w[j] + bias[j]);
        int32_t v4 = (int32_t)((v3 > 0 ? v3 + 512 : v3 - 512) / 1024);
        row[j] = sat16(mp_multiply_by_quantized_multiplier(v4, lm, ls + 12));
    }
}

/* gate k over nb rows: x rows [nb][I], h rows [nb][O], c [nb][C] */
static void ref_gate(const qref *r, int k, const int8_t *x, const int8_t *h, const int16_t *c,
                     int nb, int16_t *g)
{
    const qcfg *cf = r->cf;
    const qparams *p = r->p;
    int C = cf->C, I = cf->I, O = cf->O;
    float s_inter = cf->ln ? r->inter[k] : 0x1p-12f;
    float ex = p->s_wx[k] * p->s_x / s_inter, eh = p->s_wh[k] * p->s_h / s_inter;
    for (int b = 0; b < nb; b++)
        for (int i = 0; i < C; i++) {
            int64_t ax = cf->ln ? 0 : p->bias[k][i], ah = 0;
            for (int j = 0; j < I; j++)
                ax += (x[b * I + j] - p->zp_x) * p->wx[k][i * I + j];
            for (int j = 0; j < O; j++)
                ah += (h[b * O + j] - p->zp_h) * p->wh[k][i * O + j];
            int16_t v = sat16(requant(ax, ex));
            g[b * C + i] = sat16((int64_t)requant(ah, eh) + v);
        }
    if (cf->peep && k != 2) {
        int pk = k == 0 ? 0 : k == 1 ? 1 : 2;
        float ec = (float)(ldexp(1.0, r->cell_scale) * p->s_peep[pk] / s_inter);
        for (int i = 0; i < nb * O; i++) /* n_output weights, as TensorFlow Lite */
            g[i] = sat16((int64_t)requant((int32_t)p->peep[pk][i % O] * c[i], ec) + g[i]);
    }
    if (cf->ln)
        for (int b = 0; b < nb; b++)
            ref_ln(g + b * C, C, p->ln[k], p->bias[k], p->s_ln[k]);
    for (int i = 0; i < nb * C; i++)
        g[i] = k == 2 ? mp_fx16_tanh(3, g[i]) : mp_fx16_logistic(g[i]);
}

static void ref_step(const qref *r, const int8_t *x, int nb, int8_t *h, int16_t *c, int8_t *y)
{
    const qcfg *cf = r->cf;
    const qparams *p = r->p;
    int C = cf->C, O = cf->O, n = nb * C;
    int16_t g[4][QM * QM];
    int8_t hid[QM * QM];
    for (int k = cf->cifg ? 1 : 0; k < 3; k++)
        ref_gate(r, k, x, h, c, nb, g[k]);
    int16_t clip = 0;
    if (cf->cell_clip > 0)
        clip = (int16_t)fminf(fmaxf(cf->cell_clip / p->s_c, -32768.f), 32767.f);
    for (int i = 0; i < n; i++) {
        int32_t in_gate = cf->cifg ? 32767 - g[1][i] : g[0][i];
        int32_t v = (int16_t)div_pot(g[1][i] * c[i], 15) +
                    (int16_t)div_pot(in_gate * g[2][i], 30 + r->cell_scale);
        v = sat16(v);
        if (clip > 0)
            v = v > clip ? clip : v < -clip ? -clip : v;
        c[i] = (int16_t)v;
    }
    ref_gate(r, 3, x, h, c, nb, g[3]);
    double hidden_scale = (float)(0x1p-15 / p->s_inter[4] * 0x1p-15);
    for (int i = 0; i < n; i++) {
        int32_t t = mp_fx16_tanh(15 + r->cell_scale, c[i]);
        hid[i] = sat8((int64_t)requant((int64_t)g[3][i] * t, hidden_scale) - p->zp_inter[4]);
    }
    if (cf->proj) {
        int8_t pclip = 0;
        if (cf->proj_clip > 0)
            pclip = (int8_t)fminf(fmaxf(cf->proj_clip / p->s_y, -128.f), 127.f);
        for (int b = 0; b < nb; b++)
            for (int o = 0; o < O; o++) {
                int64_t acc = cf->proj_bias ? p->pb[o] : 0;
                for (int j = 0; j < C; j++)
                    acc += (hid[b * C + j] + p->zp_inter[4]) * p->wp[o * C + j];
                int8_t v = sat8((int64_t)requant(acc, p->s_wp * p->s_inter[4] / p->s_h) + p->zp_h);
                if (pclip > 0)
                    v = v > pclip ? pclip : v < -pclip ? (int8_t)-pclip : v;
                h[b * O + o] = v;
            }
    } else {
        memcpy(h, hid, (size_t)n);
    }
    memcpy(y, h, (size_t)(nb * O));
}

/* the whole sequence, in the operator's layout */
static void ref_run(const qcfg *cf, const qparams *p, const int8_t *x, int8_t *h, int16_t *c,
                    int8_t *y)
{
    qref r = {cf, p, {p->s_inter[0], p->s_inter[1], p->s_inter[2], p->s_inter[3]}, -11};
    int B = cf->B, T = cf->one_step ? 1 : cf->T, I = cf->I, O = cf->O, C = cf->C;
    if (cf->time_major || cf->one_step) {
        for (int t = 0; t < T; t++)
            ref_step(&r, x + t * B * I, B, h, c, y + t * B * O);
    } else {
        for (int b = 0; b < B; b++)
            for (int t = 0; t < T; t++)
                ref_step(&r, x + (b * T + t) * I, 1, h + b * O, c + b * C, y + (b * T + t) * O);
    }
}

/* ---- the kernel through the harness ---- */

typedef struct qcase {
    kh_case c;
    mp_tensor *x, *h, *cs, *y;
    mp_tensor_info inter[5];
    int32_t inter_idx[5];
    float one;
    int64_t zero;
} qcase;

static void qin(qcase *q, bool present, mp_dtype dt, int32_t rank, const int32_t *dims,
                const void *data, const float *scale)
{
    if (!present) {
        kh_omit_input(&q->c);
        return;
    }
    mp_tensor *t = kh_input(&q->c, dt, rank, dims, data);
    if (scale)
        kh_quant(&q->c, t, 1, scale, &q->zero, 0);
}

static void build_q(qcase *q, const qcfg *cf, qparams *p)
{
    kh_case *c = &q->c;
    kh_init(c, cf->one_step ? MP_OP_LSTM : MP_OP_UNIDIRECTIONAL_SEQUENCE_LSTM, NULL);
    q->one = 1.0f;
    q->zero = 0;
    c->opt.activation = MP_ACT_TANH;
    c->opt.cell_clip = cf->cell_clip;
    c->opt.proj_clip = cf->proj_clip;
    c->opt.time_major = cf->time_major;
    int32_t B = cf->B, T = cf->T, I = cf->I, C = cf->C, O = cf->O;
    if (cf->one_step)
        q->x = kh_input(c, MP_DT_INT8, 2, (int32_t[]){B, I}, NULL);
    else
        q->x = kh_input(c, MP_DT_INT8, 3,
                        (int32_t[]){cf->time_major ? T : B, cf->time_major ? B : T, I}, NULL);
    kh_quant(c, q->x, 1, &p->s_x, &p->zp_x, 0);
    for (int k = 0; k < 4; k++)
        qin(q, k > 0 || !cf->cifg, MP_DT_INT8, 2, (int32_t[]){C, I}, p->wx[k], &p->s_wx[k]);
    for (int k = 0; k < 4; k++)
        qin(q, k > 0 || !cf->cifg, MP_DT_INT8, 2, (int32_t[]){C, O}, p->wh[k], &p->s_wh[k]);
    for (int k = 0; k < 3; k++)
        qin(q, cf->peep && (k > 0 || !cf->cifg), MP_DT_INT16, 1, (int32_t[]){C}, p->peep[k],
            &p->s_peep[k]);
    for (int k = 0; k < 4; k++)
        qin(q, k > 0 || !cf->cifg, MP_DT_INT32, 1, (int32_t[]){C}, p->bias[k], NULL);
    qin(q, cf->proj, MP_DT_INT8, 2, (int32_t[]){O, C}, p->wp, &p->s_wp);
    qin(q, cf->proj && cf->proj_bias, MP_DT_INT32, 1, (int32_t[]){O}, p->pb, NULL);
    q->h = kh_input(c, MP_DT_INT8, 2, (int32_t[]){B, O}, NULL);
    kh_quant(c, q->h, 1, &p->s_h, &p->zp_h, 0);
    q->cs = kh_input(c, MP_DT_INT16, 2, (int32_t[]){B, C}, NULL);
    kh_quant(c, q->cs, 1, &p->s_c, &q->zero, 0);
    ((mp_tensor_info *)q->h->info)->is_variable = true;
    ((mp_tensor_info *)q->cs->info)->is_variable = true;
    if (cf->ln)
        for (int k = 0; k < 4; k++)
            qin(q, k > 0 || !cf->cifg, MP_DT_INT16, 1, (int32_t[]){C}, p->ln[k], &p->s_ln[k]);
    q->y = kh_output(c, MP_DT_INT8);
    kh_quant(c, q->y, 1, &p->s_y, &p->zp_y, 0);
    for (int k = 0; k < 5; k++) {
        memset(&q->inter[k], 0, sizeof q->inter[k]);
        q->inter[k].name = "inter";
        q->inter[k].dtype = k == 4 ? MP_DT_INT8 : MP_DT_INT16;
        q->inter[k].quant.count = 1;
        q->inter[k].quant.scale = &p->s_inter[k];
        q->inter[k].quant.zero_point = &p->zp_inter[k];
        q->inter_idx[k] = k;
    }
    c->node.n_inter = 5;
    c->node.inter = q->inter_idx;
    c->node.tensor_infos = q->inter;
}

static void fill_x(int8_t *x, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (int8_t)irange(&seed, -128, 127);
}

/* Two runs with different inputs, the state carried over, bit for bit with the reference. */
static void check_q(const qcfg *cf, uint32_t seed)
{
    qparams *p = malloc(sizeof *p);
    assert_non_null(p);
    fill_params(p, cf, seed);
    qcase *q = malloc(sizeof *q);
    assert_non_null(q);
    build_q(q, cf, p);
    int T = cf->one_step ? 1 : cf->T;
    size_t nx = (size_t)T * cf->B * cf->I, ny = (size_t)T * cf->B * cf->O;
    int8_t x[QM * QM * QM], h[QM * QM] = {0}, y[QM * QM * QM];
    int16_t c[QM * QM] = {0};
    for (int run = 0; run < 2; run++) {
        fill_x(x, nx, seed * 7u + (uint32_t)run);
        memcpy(q->x->data, x, nx);
        kh_expect_ok(&q->c, run == 0 ? kh_run(&q->c) : kh_rerun(&q->c, false));
        ref_run(cf, p, x, h, c, y);
        assert_int_equal(q->y->bytes, ny);
        assert_memory_equal(q->y->data, y, ny);
        assert_memory_equal(q->h->data, h, (size_t)cf->B * cf->O);
        assert_memory_equal(q->cs->data, c, (size_t)cf->B * cf->C * 2);
    }
    kh_free(&q->c);
    free(q);
    free(p);
}

static qcfg base(void)
{
    return (qcfg){.B = 2, .T = 3, .I = 3, .C = 4, .O = 4, .time_major = true};
}

static void test_gate_functions(void **state)
{
    (void)state;
    /* TensorFlow Lite's own expectations (portable tensor utils' QuantSigmoidTest,
     * QuantTanh3Test, QuantTanh4Test): bit for bit */
    static const int16_t sig_in[30] = {
        -10500, 1398, -6963, -7404, 485, -5401, -1757, -7668, -19248, -9692,
        -24249, -17923, -15840, -10026, 5249, -89, 1787, -16178, -6691, -19524,
        -13439, -24048, -1123, 32767, -17267, -3378, 823, 11482, -11139, 7508};
    static const int16_t sig_out[30] = {
        2339, 19152, 5063, 4617, 17350, 6917, 12921, 4371, 299, 2813,
        89, 409, 673, 2605, 25646, 16207, 19904, 615, 5353, 273,
        1187, 91, 14153, 32756, 475, 9983, 18026, 30898, 2023, 28246};
    static const int16_t t3_in[30] = {
        -145, 899, -176, -35, 264, 289, 8, 27, -37, -1310, -120, 127, -16, 106, 370,
        -583, -299, 93, -548, 548, 653, -29, -53, 1058, -52, -164, -149, -635, 201, -1297};
    static const int16_t t3_out[30] = {
        -1156, 7076, -1412, -276, 2104, 2308, 64, 220, -288, -10132,
        -964, 1016, -120, 844, 2944, -4640, -2392, 736, -4352, 4352,
        5180, -232, -428, 8276, -412, -1308, -1196, -5044, 1612, -10044};
    static const int16_t t4_in[30] = {
        -5, 163, -31, -5, 54, 90, 1, 2, -4, -42, -8, 29, 0, 47, 150,
        -26, -36, 9, -73, 25, 14, -2, -1, 29, -10, -12, -18, -29, 51, -92};
    static const int16_t t4_out[30] = {
        -76, 2596, -496, -76, 856, 1436, 24, 36, -64, -672,
        -120, 456, 0, 752, 2400, -412, -576, 148, -1168, 400,
        216, -36, -24, 456, -164, -192, -292, -456, 820, -1476};
    for (int i = 0; i < 30; i++) {
        assert_int_equal(mp_fx16_logistic(sig_in[i]), sig_out[i]);
        assert_int_equal(mp_fx16_tanh(3, t3_in[i]), t3_out[i]);
        assert_int_equal(mp_fx16_tanh(4, t4_in[i]), t4_out[i]);
    }
    /* exact points: 0, and the symmetries of the definitions */
    assert_int_equal(mp_fx16_logistic(0), 16384);
    for (int b = 0; b <= 6; b++)
        assert_int_equal(mp_fx16_tanh(b, 0), 0);
    for (int32_t a = 1; a < 32768; a += 97) {
        assert_int_equal(mp_fx16_logistic((int16_t)-a), 32767 - mp_fx16_logistic((int16_t)a));
        assert_int_equal(mp_fx16_tanh(3, (int16_t)-a), -mp_fx16_tanh(3, (int16_t)a));
    }
    /* every input within a few units of the real function (Q3.12 in, Q0.15 out): gemmlowp's
     * 16-bit Newton-Raphson division is good to about 4e-4 */
    for (int32_t a = -32768; a < 32768; a++) {
        double xs = a / 4096.0;
        double want = 32768.0 / (1.0 + exp(-xs));
        assert_true(fabs(mp_fx16_logistic((int16_t)a) - fmin(want, 32767.0)) <= 8.0);
        for (int b = 0; b <= 6; b += 3) {
            double xt = ldexp(a, b - 15);
            double wt = fmax(fmin(32768.0 * tanh(xt), 32767.0), -32768.0);
            assert_true(fabs(mp_fx16_tanh(b, (int16_t)a) - wt) <= 14.0);
        }
    }
    /* hand-checked points: 1.0 in Q3.12 (4096) -> 1 / (1 + e^-1) = 0.7311 -> 23955.6;
     * tanh(0.5) = 0.46212 -> 15142.7 (0.5 in Q0.15 is 16384) */
    assert_true(abs(mp_fx16_logistic(4096) - 23956) <= 8);
    assert_true(abs(mp_fx16_tanh(0, 16384) - 15143) <= 8);
}

static void test_plain(void **state)
{
    (void)state;
    qcfg cf = base();
    check_q(&cf, 1);
    cf.time_major = false;
    check_q(&cf, 2);
    cf.one_step = true;
    check_q(&cf, 3);
}

static void test_peephole_cifg_clip(void **state)
{
    (void)state;
    qcfg cf = base();
    cf.peep = true;
    check_q(&cf, 4);
    cf.cifg = true;
    cf.cell_clip = 0.5f;
    check_q(&cf, 5);
    cf.time_major = false;
    check_q(&cf, 6);
}

static void test_projection(void **state)
{
    (void)state;
    qcfg cf = base();
    cf.proj = true;
    cf.O = 2;
    check_q(&cf, 7);
    cf.proj_bias = true;
    cf.proj_clip = 0.3f;
    check_q(&cf, 8);
    cf.peep = true; /* fewer outputs than cells: the peephole reads n_output weights */
    cf.O = 3;
    check_q(&cf, 9);
    cf.time_major = false;
    check_q(&cf, 10);
}

static void test_layer_norm(void **state)
{
    (void)state;
    qcfg cf = base();
    cf.ln = true;
    check_q(&cf, 11);
    cf.cifg = true;
    cf.peep = true;
    cf.proj = true;
    cf.proj_bias = true;
    cf.O = 3;
    cf.cell_clip = 1.0f;
    check_q(&cf, 12);
    cf.time_major = false;
    check_q(&cf, 13);
}

/* An empty sequence runs and writes nothing. */
static void test_empty_sequence(void **state)
{
    (void)state;
    qcfg cf = base();
    cf.T = 0;
    qparams *p = malloc(sizeof *p);
    qcase *q = malloc(sizeof *q);
    assert_non_null(p);
    assert_non_null(q);
    fill_params(p, &cf, 21);
    build_q(q, &cf, p);
    kh_expect_ok(&q->c, kh_run(&q->c));
    assert_int_equal(q->y->bytes, 0);
    kh_free(&q->c);
    free(q);
    free(p);
}

static void test_refusals(void **state)
{
    (void)state;
    qcfg cf = base();
    qparams *p = malloc(sizeof *p);
    qcase *q = malloc(sizeof *q);
    assert_non_null(p);
    assert_non_null(q);
    fill_params(p, &cf, 20);
    build_q(q, &cf, p);
    q->c.node.n_inter = 0;
    kh_expect_error(&q->c, MP_ERR_FORMAT, "has 0 intermediate tensors; an int8 LSTM needs 5");
    kh_free(&q->c);
    build_q(q, &cf, p);
    q->c.node.n_inter = 12;
    kh_expect_error(&q->c, MP_ERR_UNSUPPORTED, "8x8_8");
    kh_free(&q->c);
    build_q(q, &cf, p);
    q->cs->dtype = MP_DT_INT8;
    kh_expect_error(&q->c, MP_ERR_UNSUPPORTED, "is i8; an int8 LSTM needs i16");
    kh_free(&q->c);
    build_q(q, &cf, p);
    q->c.in[13]->dtype = MP_DT_FLOAT32; /* the forget gate bias */
    kh_expect_error(&q->c, MP_ERR_UNSUPPORTED, "forget gate bias");
    kh_free(&q->c);
    build_q(q, &cf, p);
    q->c.opt.activation = MP_ACT_RELU;
    kh_expect_error(&q->c, MP_ERR_UNSUPPORTED, "runs TANH only");
    kh_free(&q->c);
    build_q(q, &cf, p);
    p->s_c = 0.001f; /* not a power of two */
    kh_expect_error(&q->c, MP_ERR_UNSUPPORTED, "needs 2^-15 .. 2^-9");
    kh_free(&q->c);
    p->s_c = 0x1p-11f;
    build_q(q, &cf, p);
    p->s_inter[4] = 0; /* the hidden intermediate without a scale */
    kh_expect_error(&q->c, MP_ERR_FORMAT, "intermediate 4");
    kh_free(&q->c);
    p->s_inter[4] = 0.008f;
    build_q(q, &cf, p);
    q->y->dtype = MP_DT_INT16;
    kh_expect_error(&q->c, MP_ERR_UNSUPPORTED, "an int8 LSTM writes i8");
    kh_free(&q->c);
    /* an int8 BIDIRECTIONAL_SEQUENCE_LSTM: TensorFlow Lite has no integer form */
    kh_case *c = &q->c;
    kh_init(c, MP_OP_BIDIRECTIONAL_SEQUENCE_LSTM, NULL);
    kh_input(c, MP_DT_INT8, 3, (int32_t[]){3, 2, 3}, NULL);
    for (int i = 1; i < 48; i++)
        kh_input(c, MP_DT_INT8, 2, (int32_t[]){4, 4}, NULL);
    kh_output(c, MP_DT_INT8);
    kh_expect_error(c, MP_ERR_UNSUPPORTED, "float32 (and hybrid) only");
    kh_free(c);
    free(q);
    free(p);
}

/* ---- a writer-built model through the session ---- */

static void *q_model(const qcfg *cf, const qparams *p, size_t *size)
{
    mp_tfw *w = mp_tfw_create();
    assert_non_null(w);
    int B = cf->B, T = cf->T, I = cf->I, C = cf->C, O = cf->O;
    int32_t ins[24];
    for (int i = 0; i < 24; i++)
        ins[i] = -1;
    const int64_t zero = 0;
#define QT(name, dt, rank, dims, data, bytes, scale, zp)                                   \
    mp_tfw_tensor_quant(w, mp_tfw_tensor(w, name, dt, rank, dims,                         \
                                         (data) ? mp_tfw_buffer(w, data, bytes) : 0, NULL), \
                        1, scale, zp, 0)
    ins[0] = QT("x", MP_DT_INT8, 3, ((int32_t[]){T, B, I}), NULL, 0, &p->s_x, &p->zp_x);
    for (int k = 0; k < 4; k++) {
        ins[1 + k] = QT("wx", MP_DT_INT8, 2, ((int32_t[]){C, I}), p->wx[k], (size_t)(C * I),
                        &p->s_wx[k], &zero);
        ins[5 + k] = QT("wh", MP_DT_INT8, 2, ((int32_t[]){C, O}), p->wh[k], (size_t)(C * O),
                        &p->s_wh[k], &zero);
        ins[12 + k] = mp_tfw_tensor(w, "b", MP_DT_INT32, 1, (int32_t[]){C},
                                    mp_tfw_buffer(w, p->bias[k], 4 * (size_t)C), NULL);
        ins[20 + k] = QT("ln", MP_DT_INT16, 1, ((int32_t[]){C}), p->ln[k], 2 * (size_t)C,
                         &p->s_ln[k], &zero);
    }
    ins[18] = mp_tfw_tensor_variable(
        w, QT("h", MP_DT_INT8, 2, ((int32_t[]){B, O}), NULL, 0, &p->s_h, &p->zp_h));
    ins[19] = mp_tfw_tensor_variable(
        w, QT("c", MP_DT_INT16, 2, ((int32_t[]){B, C}), NULL, 0, &p->s_c, &zero));
    int y = QT("y", MP_DT_INT8, 3, ((int32_t[]){T, B, O}), NULL, 0, &p->s_y, &p->zp_y);
    int32_t inter[5];
    for (int k = 0; k < 5; k++)
        inter[k] = QT("inter", k == 4 ? MP_DT_INT8 : MP_DT_INT16, 1, ((int32_t[]){1}), NULL, 0,
                      &p->s_inter[k], &p->zp_inter[k]);
#undef QT
    mp_op_options o = mp_tfw_options_default();
    o.activation = MP_ACT_TANH;
    o.time_major = true;
    int op = mp_tfw_op(w, MP_OP_UNIDIRECTIONAL_SEQUENCE_LSTM, 24, ins, 1, &y, &o);
    assert_int_equal(mp_tfw_op_intermediates(w, op, 5, inter), op);
    mp_tfw_io(w, 1, ins, 1, &y);
    mp_test_model built = mp_test_tfw_finish(w);
    *size = built.size;
    return built.bytes;
}

enum { QM_Y = 3 * 2 * 4 };

/* Runs 1 and 2, a reset, run 3 with run 1's input. */
static void run_q_model(mp_memory_mode mode, int8_t out[3][QM_Y])
{
    qcfg cf = base();
    cf.ln = true;
    qparams p;
    fill_params(&p, &cf, 30);
    size_t size;
    void *bytes = q_model(&cf, &p, &size);
    mp_session *s = kh_session(mode, bytes, size, "lstm_q");
    mp_error err = {0};
    int8_t h[QM * QM], want[QM_Y];
    int16_t c[QM * QM] = {0};
    memset(h, (int)p.zp_h, sizeof h); /* an int8 state starts at its zero point (real 0) */
    for (int r = 0; r < 3; r++) {
        int8_t x[3 * 2 * 3];
        fill_x(x, sizeof x, 40u + (uint32_t)(r % 2));
        if (r == 2) {
            assert_int_equal(mp_session_reset_variables(s, &err), MP_OK);
            memset(h, (int)p.zp_h, sizeof h);
            memset(c, 0, sizeof c);
        }
        assert_int_equal(mp_session_set_input(s, 0, x, sizeof x, &err), MP_OK);
        if (mp_session_run(s, &err) != MP_OK)
            fail_msg("run (%s): %s", mp_memory_mode_name(mode), err.msg);
        const mp_tensor *y = mp_session_output(s, 0);
        assert_int_equal(y->bytes, QM_Y);
        memcpy(out[r], y->data, QM_Y);
        ref_run(&cf, &p, x, h, c, want);
        assert_memory_equal(out[r], want, QM_Y);
    }
    assert_memory_equal(out[2], out[0], QM_Y);
    assert_memory_not_equal(out[1], out[0], QM_Y);
    mp_session_destroy(s);
}

static void test_model_static_dynamic(void **state)
{
    (void)state;
    int8_t a[3][QM_Y], b[3][QM_Y];
    run_q_model(MP_MEMORY_STATIC, a);
    run_q_model(MP_MEMORY_DYNAMIC, b);
    assert_memory_equal(a, b, sizeof a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gate_functions),
        cmocka_unit_test(test_plain),
        cmocka_unit_test(test_peephole_cifg_clip),
        cmocka_unit_test(test_projection),
        cmocka_unit_test(test_layer_norm),
        cmocka_unit_test(test_empty_sequence),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_model_static_dynamic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
