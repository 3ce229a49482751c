/* Tests of quantized ADD, SUB and MUL (int8 and uint8, issue 15), and uint8 DIV: hand-computed cases whose
 * integers are exact (no rounding ties), then random inputs over broadcast shapes, scales and
 * zero points and every integer fused activation, compared with a restatement of TensorFlow
 * Lite's integer reference (add.cc / sub.cc / mul.cc Prepare and the reference integer
 * kernels) on quant_math.h: bit for bit where the kernel runs TensorFlow Lite's arithmetic in
 * C (scales XNNPACK refuses, broadcasts deeper than it takes), within 1 and at least 95 %
 * exact where XNNPACK runs (its own requantization). Which of the two runs is asked of
 * XNNPACK itself (does it create the operator). Errors: dtypes, missing or per-channel
 * quantization, operators without an 8-bit path, TANH fused. */
#include "tests/util/testutil.h"

#include <math.h>
#include <pthreadpool.h>
#include <stdlib.h>
#include <string.h>
#include <xnnpack.h>

#include "engine/kernels/quant_math.h"
#include "tests/util/kernel_harness.h"
#include "tests/util/quant_ref.h"

/* One quantized binary case: operator, dtype, the three tensors' scales and zero points. */
typedef struct qbin {
    int32_t op;
    mp_dtype dt;
    float scale[3];   /* a, b, output */
    int64_t zp[3];
    int32_t act;
} qbin;

static uint32_t g_seed = 2024;
static uint32_t rnd(void)
{
    g_seed = g_seed * 1664525u + 1013904223u;
    return g_seed >> 8;
}

static int32_t dt_min(mp_dtype dt) { return dt == MP_DT_INT8 ? -128 : 0; }
static int32_t dt_max(mp_dtype dt) { return dt == MP_DT_INT8 ? 127 : 255; }

static int32_t get_q(const void *p, mp_dtype dt, size_t i)
{
    return dt == MP_DT_INT8 ? ((const int8_t *)p)[i] : ((const uint8_t *)p)[i];
}
static void set_q(void *p, mp_dtype dt, size_t i, int32_t v)
{
    if (dt == MP_DT_INT8)
        ((int8_t *)p)[i] = (int8_t)v;
    else
        ((uint8_t *)p)[i] = (uint8_t)v;
}

/* ---- reference: TensorFlow Lite's formulas ---------------------------------------------- */

/* CalculateActivationRangeQuantized: the output's quantized 0, 6, -1, 1, clamped. */
static void ref_range(const qbin *q, int32_t *lo, int32_t *hi)
{
    float s = q->scale[2];
    int32_t z = (int32_t)q->zp[2], qmin = dt_min(q->dt), qmax = dt_max(q->dt);
    *lo = qmin;
    *hi = qmax;
    if (q->act == MP_ACT_RELU || q->act == MP_ACT_RELU6)
        *lo = z;
    if (q->act == MP_ACT_RELU6)
        *hi = z + (int32_t)roundf(6.0f / s);
    if (q->act == MP_ACT_RELU_N1_TO_1) {
        *lo = z + (int32_t)roundf(-1.0f / s);
        *hi = z + (int32_t)roundf(1.0f / s);
    }
    *lo = *lo < qmin ? qmin : *lo;
    *hi = *hi > qmax ? qmax : *hi;
}

/* gemmlowp's RoundingDivideByPOT for any exponent 0..62: to nearest, ties away from zero. */
static int32_t ref_rdpot_any(int32_t x, int e)
{
    const int64_t d = INT64_C(1) << e, q = x / d, rem = x - q * d;
    return (int32_t)(2 * (rem < 0 ? -rem : rem) >= d && e > 0 ? q + (x < 0 ? -1 : 1) : q);
}

/* TensorFlow Lite's uint8 DIV of one pair (div.cc Prepare, reference DivElementwise),
 * restated on quant_ref.h's gemmlowp steps: the multiplier of in1_scale / (in2_scale *
 * out_scale) in float; the centred divisor made positive (both signs flipped); its
 * reciprocal (GetReciprocal: normalized by its leading zeros into [1, 2), 1 / (1 + excess)
 * by gemmlowp's Newton-Raphson in Q2.29: 48/17 - 32/17 d, three steps, halved into Q0.31);
 * the dividend shifted left by its leading sign bits (the most that keep it in 32 bits)
 * times it; then times the multiplier and divided by 2^(those two shifts - the multiplier's
 * shift). */
static int32_t ref_div(const qbin *q, int32_t x, int32_t w)
{
    int32_t m;
    int sh;
    qref_quantize_multiplier((double)(q->scale[0] / (q->scale[1] * q->scale[2])), &m, &sh);
    int32_t a = x - (int32_t)q->zp[0], b = w - (int32_t)q->zp[1];
    if (b < 0) {
        a = -a;
        b = -b;
    }
    int lz = 0;
    while (((uint32_t)b << lz) < 0x80000000u)
        lz++;
    const int bits_over_unit = 31 - lz;
    const int32_t excess = (int32_t)(((uint32_t)b << lz) - 0x80000000u);
    const int64_t sum = (int64_t)excess + INT32_MAX;
    const int32_t half_d = (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
    int32_t r = 1515870810 + qref_srdhm(half_d, -1010580540);
    for (int i = 0; i < 3; i++)
        r += qref_sat_pot(qref_srdhm(r, (1 << 29) - qref_srdhm(half_d, r)), 2);
    r = qref_sat_pot(r, 1);
    int head = 0;
    while (head < 31 && (int64_t)a * (INT64_C(2) << head) >= INT32_MIN &&
           (int64_t)a * (INT64_C(2) << head) <= INT32_MAX)
        head++;
    const int32_t unscaled = qref_srdhm((int32_t)((int64_t)a * (INT64_C(1) << head)), r);
    return ref_rdpot_any(qref_srdhm(unscaled, m), bits_over_unit + head - sh);
}

/* One output element from the quantized inputs x and w. */
static int32_t ref_elem(const qbin *q, int32_t x, int32_t w)
{
    int32_t lo, hi, m, m1, m2;
    int sh, sh1, sh2;
    ref_range(q, &lo, &hi);
    int64_t v;
    if (q->op == MP_OP_DIV) {
        v = ref_div(q, x, w);
    } else if (q->op == MP_OP_MUL) {
        float real = q->scale[0] * q->scale[1] / q->scale[2]; /* in float, as mul.cc */
        assert_true(mp_quantize_multiplier(real, &m, &sh));
        int32_t prod = (x - (int32_t)q->zp[0]) * (w - (int32_t)q->zp[1]);
        v = mp_multiply_by_quantized_multiplier(prod, m, sh);
    } else {
        /* left_shift 20, input multipliers s_i / (2 max s), output (2 max s) / (2^20 s_out) */
        double twice = 2.0 * (q->scale[0] > q->scale[1] ? q->scale[0] : q->scale[1]);
        assert_true(mp_quantize_multiplier(q->scale[0] / twice, &m1, &sh1));
        assert_true(mp_quantize_multiplier(q->scale[1] / twice, &m2, &sh2));
        assert_true(mp_quantize_multiplier(twice / (1048576.0 * q->scale[2]), &m, &sh));
        if (q->op == MP_OP_SUB)
            m2 = -m2; /* sub.cc: the second input's multiplier negated, then ADD's kernel */
        int32_t s1 = mp_multiply_by_quantized_multiplier((x - (int32_t)q->zp[0]) * 1048576, m1, sh1);
        int32_t s2 = mp_multiply_by_quantized_multiplier((w - (int32_t)q->zp[1]) * 1048576, m2, sh2);
        v = mp_multiply_by_quantized_multiplier(s1 + s2, m, sh);
    }
    v += q->zp[2];
    return (int32_t)(v < lo ? lo : (v > hi ? hi : v));
}

/* Does XNNPACK take these parameters (else the kernel runs TensorFlow Lite's C)? */
static bool xnn_takes(const qbin *q)
{
    if (q->op == MP_OP_DIV) /* no quantized divide in XNNPACK */
        return false;
    int32_t lo, hi;
    ref_range(q, &lo, &hi);
    xnn_operator_t op = NULL;
    enum xnn_status xs;
    const float *s = q->scale;
    const int64_t *z = q->zp;
    if (q->dt == MP_DT_INT8)
        xs = (q->op == MP_OP_MUL ? xnn_create_multiply_nd_qs8 : xnn_create_add_nd_qs8)(
            (int8_t)z[0], s[0], (int8_t)z[1], s[1], (int8_t)z[2], s[2], (int8_t)lo, (int8_t)hi, 0,
            &op);
    else
        xs = (q->op == MP_OP_MUL ? xnn_create_multiply_nd_qu8 : xnn_create_add_nd_qu8)(
            (uint8_t)z[0], s[0], (uint8_t)z[1], s[1], (uint8_t)z[2], s[2], (uint8_t)lo,
            (uint8_t)hi, 0, &op);
    if (op)
        xnn_delete_operator(op);
    return xs == xnn_status_success;
}

/* ---- harness ---------------------------------------------------------------------------- */

/* Build a case; inputs a (ra, da) and b (rb, db) allocated for the test to fill. */
static void build(kh_case *c, const qbin *q, int32_t ra, const int32_t *da, int32_t rb,
                  const int32_t *db, pthreadpool_t pool)
{
    kh_init(c, q->op, pool);
    c->opt.activation = q->act;
    mp_tensor *a = kh_input(c, q->dt, ra, da, NULL);
    mp_tensor *b = kh_input(c, q->dt, rb, db, NULL);
    mp_tensor *y = kh_output(c, q->dt);
    kh_quant(c, a, 1, &q->scale[0], &q->zp[0], 0);
    kh_quant(c, b, 1, &q->scale[1], &q->zp[1], 0);
    kh_quant(c, y, 1, &q->scale[2], &q->zp[2], 0);
}

/* Run a hand case of 1-D inputs (b of length nb: nb == 1 broadcasts) and expect `want`. */
static void hand(const qbin *q, size_t n, const int32_t *av, size_t nb, const int32_t *bv,
                 const int32_t *want)
{
    kh_case c;
    build(&c, q, 1, (int32_t[]){(int32_t)n}, 1, (int32_t[]){(int32_t)nb}, NULL);
    for (size_t i = 0; i < n; i++)
        set_q(c.in[0]->data, q->dt, i, av[i]);
    for (size_t i = 0; i < nb; i++)
        set_q(c.in[1]->data, q->dt, i, bv[i]);
    kh_expect_ok(&c, kh_run(&c));
    for (size_t i = 0; i < n; i++) {
        int32_t got = get_q(c.out[0]->data, q->dt, i);
        if (got != want[i])
            fail_msg("op %d element %zu: got %d, want %d", q->op, i, got, want[i]);
        /* the reference agrees with the hand arithmetic too */
        assert_int_equal(ref_elem(q, av[i], bv[nb == 1 ? 0 : i]), want[i]);
    }
    kh_free(&c);
}

static void test_hand_cases(void **state)
{
    (void)state;
    /* int8 ADD, a: scale 1/2 zp 1, b: 1/4 zp -2, out: 1 zp 3.
     * a=11 -> 5, b=6 -> 2: 7 -> q 10. a=1 -> 0, b=-2 -> 0: q 3. a=-9 -> -5, b=2 -> 1: -4 -> q -1.
     * a=127 -> 63, b=126 -> 32: 95 -> q 98. a=-128 -> -64.5, b=-128 -> -31.5: -96 -> -93.
     * In integers: (a-1)<<20 scaled by 1/2 (multiplier 2^30, shift 0), (b+2)<<20 by 1/4,
     * the sum by 2^-20 / 1: every product a multiple of 2^20 until the last, exact. */
    qbin add = {MP_OP_ADD, MP_DT_INT8, {0.5f, 0.25f, 1.0f}, {1, -2, 3}, MP_ACT_NONE};
    hand(&add, 5, (int32_t[]){11, 1, -9, 127, -128}, 5, (int32_t[]){6, -2, 2, 126, -128},
         (int32_t[]){10, 3, -1, 98, -93});
    /* the same with RELU (lo = zp 3) and RELU_N1_TO_1 (2..4): 10 3 3 98 3 / 4 3 2 4 2 */
    add.act = MP_ACT_RELU;
    hand(&add, 5, (int32_t[]){11, 1, -9, 127, -128}, 5, (int32_t[]){6, -2, 2, 126, -128},
         (int32_t[]){10, 3, 3, 98, 3});
    add.act = MP_ACT_RELU_N1_TO_1;
    hand(&add, 5, (int32_t[]){11, 1, -9, 127, -128}, 5, (int32_t[]){6, -2, 2, 126, -128},
         (int32_t[]){4, 3, 2, 4, 2});
    /* SUB, same scales, b broadcast (b=6 -> 2): 5-2=3 -> 6; 0-2 -> 1; -5-2 -> -4; 63-2 -> 64 */
    qbin sub = {MP_OP_SUB, MP_DT_INT8, {0.5f, 0.25f, 1.0f}, {1, -2, 3}, MP_ACT_NONE};
    hand(&sub, 4, (int32_t[]){11, 1, -9, 127}, 1, (int32_t[]){6}, (int32_t[]){6, 1, -4, 64});
    /* MUL, out scale 1/8 zp -4: 5*2=10 -> 76; 0*0 -> -4; -5*1=-5 -> -44; 63*32 saturates 127;
     * -64.5*-31.5 saturates; 3*-2 = -6 -> -52. Multiplier 1/2*1/4/(1/8) = 1 exactly. */
    qbin mul = {MP_OP_MUL, MP_DT_INT8, {0.5f, 0.25f, 0.125f}, {1, -2, -4}, MP_ACT_NONE};
    hand(&mul, 6, (int32_t[]){11, 1, -9, 127, -128, 7}, 6, (int32_t[]){6, -2, 2, 126, -128, -10},
         (int32_t[]){76, -4, -44, 127, 127, -52});
    /* uint8 ADD, a: 1/16 zp 128, b: 1/16 zp 100, out 1/8 zp 64: a=144 -> 1, b=108 -> 0.5:
     * 1.5 -> 12 + 64 = 76; a=0 -> -8, b=0 -> -6.25: -14.25 -> -114 -> 0 (saturated);
     * a=255 -> 7.9375, b=255 -> 9.6875: 17.625 -> 141 + 64 = 205 */
    qbin addu = {MP_OP_ADD, MP_DT_UINT8, {0.0625f, 0.0625f, 0.125f}, {128, 100, 64}, MP_ACT_NONE};
    hand(&addu, 3, (int32_t[]){144, 0, 255}, 3, (int32_t[]){108, 0, 255},
         (int32_t[]){76, 0, 205});
    /* uint8 MUL with RELU6, out 1/16 zp 10 (6 -> 96 + 10 = 106): 1*0.5 = 0.5 -> 18;
     * 7.9375*9.6875 -> 106 (RELU6); -8*-6.25 = 50 -> 106; -8*0.5 = -4 -> 10 (RELU) */
    qbin mulu = {MP_OP_MUL, MP_DT_UINT8, {0.0625f, 0.0625f, 0.0625f}, {128, 100, 10}, MP_ACT_RELU6};
    hand(&mulu, 4, (int32_t[]){144, 255, 0, 0}, 4, (int32_t[]){108, 255, 0, 108},
         (int32_t[]){18, 106, 106, 10});
}

/* Scales XNNPACK refuses (and TensorFlow Lite accepts) run as TensorFlow Lite's C. */
static void test_hand_refused_by_xnnpack(void **state)
{
    (void)state;
    /* ADD with a's scale 1/2048 of the output's (XNNPACK wants >= 2^-10): a contributes at
     * most 128/2048 < 0.07 of an output step, so the output is b's value: b - zp(b) + zp(out) */
    qbin add = {MP_OP_ADD, MP_DT_INT8, {1.0f / 2048, 1.0f, 1.0f}, {0, 5, -7}, MP_ACT_NONE};
    assert_false(xnn_takes(&add));
    hand(&add, 4, (int32_t[]){64, -128, 127, 0}, 4, (int32_t[]){8, 5, -100, 127},
         (int32_t[]){-4, -7, -112, 115});
    /* MUL whose scale ratio is 256 (XNNPACK wants < 2^8): any non-zero product saturates. */
    qbin mul = {MP_OP_MUL, MP_DT_UINT8, {1.0f, 1.0f, 1.0f / 256}, {10, 20, 100}, MP_ACT_NONE};
    assert_false(xnn_takes(&mul));
    hand(&mul, 4, (int32_t[]){10, 11, 9, 200}, 4, (int32_t[]){77, 20, 21, 21},
         (int32_t[]){100, 100, 0, 255});
}

/* ---- random comparisons ----------------------------------------------------------------- */

typedef struct shape_pair {
    int32_t ra, da[MP_MAX_RANK], rb, db[MP_MAX_RANK];
} shape_pair;

static const shape_pair k_shapes[] = {
    {3, {2, 3, 17}, 3, {2, 3, 17}},               /* equal */
    {4, {1, 5, 5, 8}, 1, {8}},                    /* NHWC by channel */
    {0, {0}, 2, {7, 9}},                          /* scalar by tensor */
    {3, {4, 1, 3}, 2, {5, 1}},                    /* both broadcast */
    {4, {2, 1, 3, 1}, 4, {1, 4, 1, 5}},           /* alternating */
    {8, {2, 1, 2, 1, 2, 1, 2, 1}, 8, {1, 2, 1, 2, 1, 2, 1, 3}}, /* 8 merged dims: plain C */
};

static size_t numel(int32_t r, const int32_t *d)
{
    size_t n = 1;
    for (int32_t i = 0; i < r; i++)
        n *= (size_t)d[i];
    return n;
}

/* Offset in an input of the output element at multi-index oi (rank ro). */
static size_t in_offset(int32_t ro, const size_t *oi, int32_t r, const int32_t *d)
{
    size_t off = 0;
    for (int32_t i = 0; i < r; i++)
        off = off * (size_t)d[i] + (d[i] == 1 ? 0 : oi[ro - r + i]);
    return off;
}

typedef struct tally {
    size_t n, exact, off_by_one;
} tally;

/* Run q on shapes sp with random inputs; compare every element with the reference. */
static void compare(const qbin *q, const shape_pair *sp, tally *t, bool *bit_exact,
                    pthreadpool_t pool)
{
    kh_case c;
    build(&c, q, sp->ra, sp->da, sp->rb, sp->db, pool);
    mp_tensor *a = c.in[0], *b = c.in[1], *y = c.out[0];
    int32_t span = dt_max(q->dt) - dt_min(q->dt) + 1;
    for (size_t i = 0; i < numel(sp->ra, sp->da); i++)
        set_q(a->data, q->dt, i, dt_min(q->dt) + (int32_t)(rnd() % (uint32_t)span));
    for (size_t i = 0; i < numel(sp->rb, sp->db); i++) {
        int32_t v = dt_min(q->dt) + (int32_t)(rnd() % (uint32_t)span);
        if (q->op == MP_OP_DIV && v == q->zp[1]) /* a zero divisor fails the run */
            v = v == dt_max(q->dt) ? v - 1 : v + 1;
        set_q(b->data, q->dt, i, v);
    }
    kh_expect_ok(&c, kh_run(&c));
    int32_t ro = y->rank;
    size_t oi[MP_MAX_RANK] = {0};
    *bit_exact = !xnn_takes(q) || ro > XNN_MAX_TENSOR_DIMS;
    for (size_t e = 0, n = numel(ro, y->dims); e < n; e++) {
        int32_t want = ref_elem(q, get_q(a->data, q->dt, in_offset(ro, oi, sp->ra, sp->da)),
                                get_q(b->data, q->dt, in_offset(ro, oi, sp->rb, sp->db)));
        int32_t got = get_q(y->data, q->dt, e);
        int32_t d = abs(got - want);
        if (d > (*bit_exact ? 0 : 1))
            fail_msg("op %d dt %s element %zu: got %d, want %d (%s)", q->op,
                     mp_dtype_name(q->dt), e, got, want, *bit_exact ? "plain C" : "XNNPACK");
        t->n++;
        t->exact += d == 0;
        t->off_by_one += d == 1;
        for (int32_t k = ro - 1; k >= 0 && ++oi[k] == (size_t)y->dims[k]; k--)
            oi[k] = 0;
    }
    kh_free(&c);
}

static void test_random(void **state)
{
    (void)state;
    static const float scales[][3] = {
        {0.05f, 0.05f, 0.1f},       /* equal inputs */
        {0.02f, 0.3f, 0.17f},       /* mixed */
        {0.5f, 0.01f, 0.003f},      /* output finer than the inputs */
        {0.0001f, 0.2f, 0.25f},     /* ADD: a below 2^-10 of the output: XNNPACK refuses */
        {0.9f, 0.7f, 0.002f},       /* ADD: above 2^8 (450); MUL: 315 */
        {3e-5f, 2e-4f, 0.5f},       /* MUL: product far below 2^-16 */
    };
    static const int64_t zps8[][3] = {{0, 0, 0}, {-3, 17, -128}, {127, -128, 40}};
    static const int64_t zpsu[][3] = {{128, 128, 128}, {0, 255, 3}, {77, 140, 250}};
    static const int32_t ops[] = {MP_OP_ADD, MP_OP_SUB, MP_OP_MUL};
    static const int32_t acts[] = {MP_ACT_NONE, MP_ACT_RELU, MP_ACT_RELU6, MP_ACT_RELU_N1_TO_1};
    tally xnn = {0, 0, 0}, plain = {0, 0, 0};
    size_t cases = 0;
    for (int d = 0; d < 2; d++)
        for (size_t o = 0; o < 3; o++)
            for (size_t s = 0; s < sizeof scales / sizeof scales[0]; s++)
                for (size_t z = 0; z < 3; z++) {
                    qbin q = {ops[o], d ? MP_DT_UINT8 : MP_DT_INT8, {0}, {0}, acts[(s + z) % 4]};
                    memcpy(q.scale, scales[s], sizeof q.scale);
                    memcpy(q.zp, d ? zpsu[z] : zps8[z], sizeof q.zp);
                    const shape_pair *sp = &k_shapes[(o + s + z) % 6];
                    bool exact;
                    tally t = {0, 0, 0};
                    compare(&q, sp, &t, &exact, NULL);
                    tally *sum = exact ? &plain : &xnn;
                    sum->n += t.n;
                    sum->exact += t.exact;
                    sum->off_by_one += t.off_by_one;
                    cases++;
                }
    print_message("quantized binary: %zu cases; XNNPACK %zu elements, %zu exact, %zu off by 1; "
                  "plain C %zu elements, all exact\n",
                  cases, xnn.n, xnn.exact, xnn.off_by_one, plain.n);
    assert_true(xnn.n > 1000 && plain.n > 1000);
    assert_true(xnn.exact * 100 >= xnn.n * 95);
}

/* A 2-thread pool, a rerun on new data without prepare, then a shape change. */
static void test_threads_rerun_reshape(void **state)
{
    (void)state;
    pthreadpool_t pool = pthreadpool_create(2);
    qbin q = {MP_OP_ADD, MP_DT_INT8, {0.1f, 0.1f, 0.2f}, {0, 0, 0}, MP_ACT_NONE};
    kh_case c;
    build(&c, &q, 2, (int32_t[]){64, 33}, 1, (int32_t[]){33}, pool);
    mp_tensor *a = c.in[0], *b = c.in[1], *y = c.out[0];
    memset(b->data, 0, 33);
    for (int i = 0; i < 64 * 33; i++)
        ((int8_t *)a->data)[i] = (int8_t)(i % 61 * 2 - 60); /* even: x/2 exact */
    kh_expect_ok(&c, kh_run(&c));
    for (int i = 0; i < 64 * 33; i++)
        assert_int_equal(((int8_t *)y->data)[i], (i % 61 * 2 - 60) / 2);
    ((int8_t *)a->data)[5] = 100; /* rerun, no prepare: 50 */
    kh_expect_ok(&c, kh_rerun(&c, false));
    assert_int_equal(((int8_t *)y->data)[5], 50);
    assert_true(mp_tensor_set_shape(a, 2, (int32_t[]){3, 33})); /* shape change, fewer rows */
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(y->dims[0], 3);
    assert_int_equal(((int8_t *)y->data)[5], 50);
    kh_free(&c);
    pthreadpool_destroy(pool);
}

/* uint8 DIV (div.cc): exact quotients by hand, all scales 1 and zero points 0: 6 / 3 = 2,
 * 255 / 5 = 51, 7 / 7 = 1, 0 / 9 = 0, 9 / 2 = 4.5 -> 5 (the last rounding, ties away from
 * zero); on an output of scale 1/4 (multiplier 4) 200 / 1 = 800 saturates at 255. With
 * zero points 20, 10 and 100: (10 - 20) / (5 - 10) = 2 -> 102, (30 - 20) / (5 - 10) = -2
 * -> 98, 0 / 2 -> 100, and RELU clamps the -2 at the zero point 100. The divisor broadcast.
 * Then random shapes, scales, zero points and activations against the restatement (bit for
 * bit: plain C), and a divisor holding its zero point (the real 0) failing the run. */
static void test_div(void **state)
{
    (void)state;
    qbin d = {MP_OP_DIV, MP_DT_UINT8, {1.0f, 1.0f, 1.0f}, {0, 0, 0}, MP_ACT_NONE};
    hand(&d, 5, (int32_t[]){6, 255, 7, 0, 9}, 5, (int32_t[]){3, 5, 7, 9, 2},
         (int32_t[]){2, 51, 1, 0, 5});
    d.scale[2] = 0.25f;
    hand(&d, 2, (int32_t[]){200, 12}, 1, (int32_t[]){1}, (int32_t[]){255, 48});
    qbin z = {MP_OP_DIV, MP_DT_UINT8, {1.0f, 1.0f, 1.0f}, {20, 10, 100}, MP_ACT_NONE};
    hand(&z, 3, (int32_t[]){10, 30, 20}, 3, (int32_t[]){5, 5, 12}, (int32_t[]){102, 98, 100});
    z.act = MP_ACT_RELU;
    hand(&z, 3, (int32_t[]){10, 30, 20}, 3, (int32_t[]){5, 5, 12}, (int32_t[]){102, 100, 100});

    static const float scales[][3] = {
        {0.05f, 0.05f, 0.1f}, {0.02f, 0.3f, 0.17f}, {0.5f, 0.01f, 0.003f},
        {0.0001f, 0.2f, 0.25f}, {0.9f, 0.7f, 0.002f}, {3e-5f, 2e-4f, 0.5f},
    };
    static const int64_t zps[][3] = {{128, 128, 128}, {0, 255, 3}, {77, 140, 250}, {0, 0, 0}};
    static const int32_t acts[] = {MP_ACT_NONE, MP_ACT_RELU, MP_ACT_RELU6, MP_ACT_RELU_N1_TO_1};
    for (size_t s = 0; s < sizeof scales / sizeof scales[0]; s++)
        for (size_t k = 0; k < 4; k++) {
            qbin q = {MP_OP_DIV, MP_DT_UINT8, {0}, {0}, acts[(s + k) % 4]};
            memcpy(q.scale, scales[s], sizeof q.scale);
            memcpy(q.zp, zps[k], sizeof q.zp);
            tally t = {0, 0, 0};
            bool exact;
            compare(&q, &k_shapes[(s + k) % 6], &t, &exact, NULL);
            assert_true(exact && t.n > 0 && t.exact == t.n);
        }

    kh_case c;
    build(&c, &z, 1, (int32_t[]){3}, 1, (int32_t[]){3}, NULL);
    memcpy(c.in[1]->data, (uint8_t[]){5, 10, 12}, 3);
    kh_expect_error(&c, MP_ERR_ARG, "division by zero: divisor 't1' holds its zero point 10");
    kh_free(&c);
}

static void expect_error(const qbin *q, mp_dtype da, mp_dtype db, mp_dtype dy, int per_channel,
                         mp_status want, const char *needle)
{
    static const float sc2[2] = {0.5f, 0.25f};
    static const int64_t zp2[2] = {0, 0};
    kh_case c;
    kh_init(&c, q->op, NULL);
    c.opt.activation = q->act;
    mp_tensor *t[3];
    t[0] = kh_input(&c, da, 2, (int32_t[]){4, 2}, NULL);
    t[1] = kh_input(&c, db, 2, (int32_t[]){4, 2}, NULL);
    t[2] = kh_output(&c, dy);
    for (int i = 0; i < 3; i++)
        if (per_channel != i + 10) /* 10 + i: leave tensor i without quantization */
            kh_quant(&c, t[i], 1, &q->scale[i], &q->zp[i], 0);
    if (per_channel >= 0 && per_channel < 3)
        kh_quant(&c, t[per_channel], 2, sc2, zp2, 1);
    kh_expect_error(&c, want, needle);
    kh_free(&c);
}

static void test_errors(void **state)
{
    (void)state;
    qbin q = {MP_OP_ADD, MP_DT_INT8, {0.5f, 0.5f, 0.5f}, {0, 0, 0}, MP_ACT_NONE};
    expect_error(&q, MP_DT_INT8, MP_DT_UINT8, MP_DT_INT8, -1, MP_ERR_UNSUPPORTED, "differ in dtype");
    expect_error(&q, MP_DT_INT8, MP_DT_INT8, MP_DT_UINT8, -1, MP_ERR_UNSUPPORTED, "'t2' is u8");
    /* int16 runs as 16x8 (test_kernels_int16), with an int16 output only */
    expect_error(&q, MP_DT_INT16, MP_DT_INT16, MP_DT_INT8, -1, MP_ERR_UNSUPPORTED,
                 "output 't2' is i8; with i16 input 't0' it must be i16");
    expect_error(&q, MP_DT_INT8, MP_DT_INT8, MP_DT_INT8, 1, MP_ERR_UNSUPPORTED,
                 "'t1' has one scale per channel");
    expect_error(&q, MP_DT_UINT8, MP_DT_UINT8, MP_DT_UINT8, 12, MP_ERR_UNSUPPORTED,
                 "'t2' has no quantization parameters");
    q.act = MP_ACT_TANH;
    expect_error(&q, MP_DT_INT8, MP_DT_INT8, MP_DT_INT8, -1, MP_ERR_UNSUPPORTED, "TANH");
    q.act = MP_ACT_NONE;
    q.op = MP_OP_DIV; /* TensorFlow Lite's div.cc has uint8 only */
    expect_error(&q, MP_DT_INT8, MP_DT_INT8, MP_DT_INT8, -1, MP_ERR_UNSUPPORTED,
                 "only ADD, SUB and MUL (and DIV on u8) take 8-bit");
    /* a multiplier of 2^23 or more: the reference's final shift would be a left one */
    q.dt = MP_DT_UINT8;
    q.scale[2] = 1e-8f;
    expect_error(&q, MP_DT_UINT8, MP_DT_UINT8, MP_DT_UINT8, -1, MP_ERR_UNSUPPORTED,
                 "is 2^23 or more");
    q.scale[2] = 0.5f;
    q.op = MP_OP_FLOOR_MOD; /* floor_mod.cc: int8 and int16 (test_kernels_dtype_gaps), no uint8 */
    expect_error(&q, MP_DT_UINT8, MP_DT_UINT8, MP_DT_UINT8, -1, MP_ERR_UNSUPPORTED, "u8");
    q.dt = MP_DT_INT8;
    /* An output declared float32 with one scale and zero point becomes uint8 like its inputs
     * (TensorFlow Lite's Prepare); the reader did not check its zero point against uint8
     * (found by fuzzing: 251658240 overflowed the integer ADD), so the kernel does. */
    q.op = MP_OP_ADD;
    q.zp[2] = 300;
    expect_error(&q, MP_DT_UINT8, MP_DT_UINT8, MP_DT_FLOAT32, -1, MP_ERR_FORMAT,
                 "'t2' has zero point 300, outside 0..255");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_cases),   cmocka_unit_test(test_hand_refused_by_xnnpack),
        cmocka_unit_test(test_random),       cmocka_unit_test(test_threads_rerun_reshape),
        cmocka_unit_test(test_div),          cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
