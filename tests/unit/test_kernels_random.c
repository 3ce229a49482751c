/* Tests of RANDOM_UNIFORM, RANDOM_STANDARD_NORMAL, MULTINOMIAL (random.c) and BITCAST
 * (bitcast.c): Philox4x32-10 against Random123's known-answer vectors; the operators' values for
 * fixed seeds equal to TensorFlow's distribution formulas, restated here, applied to the
 * Philox blocks of TensorFlow's seed set-up (also restated); the generator advancing across
 * runs (run 2 is the next blocks of the stream); mean and variance of 100k samples; MULTINOMIAL
 * on one-hot rows, on two classes (frequencies, and the exact draws of a restated reference,
 * the second run after TensorFlow's skip); BITCAST by hand on each shape rule, and refusals with
 * their messages; RandomOptions written and read back; one writer-built model run through a
 * session in static and dynamic modes with equal outputs. */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/kernels/random.h"
#include "engine/model/tflite_writer.h"
#include "engine/session.h"
#include "tests/util/kernel_harness.h"

/* ---- references restated from the definitions ---------------------------------------------- */

/* The stream of seed, seed2: block b is Philox on counter {b lo, b hi, seed2 lo, seed2 hi}
 * under key {seed lo, seed hi} (TensorFlow's PhiloxRandom(seed, seed2)). */
static void ref_block(uint64_t seed, uint64_t seed2, uint64_t b, uint32_t w[4])
{
    const uint32_t ctr[4] = {(uint32_t)b, (uint32_t)(b >> 32), (uint32_t)seed2,
                             (uint32_t)(seed2 >> 32)};
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    mp_philox4x32_10(ctr, key, w);
}

/* 1.m (m the word's low 23 bits) minus 1: m / 2^23. */
static float ref_uniform(uint32_t x)
{
    return (float)(x & 0x7fffffu) / 8388608.0f;
}

/* Box-Muller with TensorFlow's clamp of u1 to 1e-7. */
static void ref_normal(uint32_t x0, uint32_t x1, float *a, float *b)
{
    float u1 = ref_uniform(x0);
    if (u1 < 1e-7f)
        u1 = 1e-7f;
    const float theta = (float)(2.0 * M_PI * (double)ref_uniform(x1));
    const float r = sqrtf(-2.0f * logf(u1));
    *a = sinf(theta) * r;
    *b = cosf(theta) * r;
}

/* ---- Philox ------------------------------------------------------------------------------ */

static void test_philox_known_answers(void **state)
{
    (void)state;
    /* Random123's kat_vectors for philox4x32 with 10 rounds */
    static const struct {
        uint32_t ctr[4], key[2], out[4];
    } kat[3] = {
        {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
        {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff},
         {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
        {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0},
         {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
    };
    for (int i = 0; i < 3; i++) {
        uint32_t out[4];
        mp_philox4x32_10(kat[i].ctr, kat[i].key, out);
        assert_memory_equal(out, kat[i].out, sizeof out);
    }
    /* the set-up from two seeds, and the 128-bit counter's carries */
    uint32_t ctr[4], key[2];
    mp_philox_seed(INT64_C(0x1122334455667788), -2, ctr, key);
    assert_memory_equal(key, ((uint32_t[]){0x55667788, 0x11223344}), sizeof key);
    assert_memory_equal(ctr, ((uint32_t[]){0, 0, 0xfffffffe, 0xffffffff}), sizeof ctr);
    uint32_t c[4] = {0xffffffff, 0xfffffffe, 5, 0};
    mp_philox_skip(c, 1);
    assert_memory_equal(c, ((uint32_t[]){0, 0xffffffff, 5, 0}), sizeof c);
    mp_philox_skip(c, UINT64_C(0x100000001));
    assert_memory_equal(c, ((uint32_t[]){1, 0, 6, 0}), sizeof c);
    uint32_t d[4] = {0xffffffff, 0xffffffff, 0xffffffff, 0};
    mp_philox_skip(d, 1);
    assert_memory_equal(d, ((uint32_t[]){0, 0, 0, 1}), sizeof d);
    /* the conversions: 1.0 - 1 and the largest mantissa */
    assert_true(mp_philox_float(0xff800000u) == 0.0f);
    assert_true(mp_philox_float(0x007fffffu) == 1.0f - 1.0f / 8388608.0f);
    assert_true(mp_philox_double(0xfff00000u, 0) == 0.0);
    assert_true(mp_philox_double(0x000fffffu, 0xffffffffu) == 1.0 - ldexp(1.0, -52));
    assert_true(mp_philox_double(0x00080000u, 0) == 0.5);
}

/* ---- RANDOM_UNIFORM / RANDOM_STANDARD_NORMAL ----------------------------------------------- */

/* A case of op with a constant shape input of dtype dt (n dims) and seeds. */
static mp_tensor *random_case(kh_case *c, int32_t op, mp_dtype dt, int32_t n, const void *dims,
                              int64_t seed, int64_t seed2)
{
    kh_init(c, op, NULL);
    c->opt.random_seed = seed;
    c->opt.random_seed2 = seed2;
    kh_input(c, dt, 1, &n, dims);
    return kh_output(c, MP_DT_FLOAT32);
}

static void test_uniform_values(void **state)
{
    (void)state;
    kh_case c;
    const int32_t dims[2] = {2, 5};
    mp_tensor *out = random_case(&c, MP_OP_RANDOM_UNIFORM, MP_DT_INT32, 2, dims, 42, 7);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->rank, 2);
    assert_int_equal(out->dims[0], 2);
    assert_int_equal(out->dims[1], 5);
    float first[10];
    memcpy(first, out->data, sizeof first);
    /* run 1: blocks 0, 1, 2 (the last one's words 2 and 3 unused); run 2 starts at block 3 */
    for (int run = 0; run < 3; run++) {
        if (run > 0)
            kh_expect_ok(&c, kh_rerun(&c, run == 2));
        const float *y = out->data;
        for (int i = 0; i < 10; i++) {
            uint32_t w[4];
            ref_block(42, 7, (uint64_t)(3 * run + i / 4), w);
            assert_true(y[i] == ref_uniform(w[i % 4]));
            assert_true(y[i] >= 0.0f && y[i] < 1.0f);
        }
    }
    assert_memory_not_equal(first, out->data, sizeof first);
    kh_free(&c);

    /* an int64 shape and a large negative seed: the key holds its two words */
    const int64_t d64[1] = {6};
    const int64_t s = -INT64_C(81985529216486896), s2 = INT64_C(0x7fffffff00000001);
    out = random_case(&c, MP_OP_RANDOM_UNIFORM, MP_DT_INT64, 1, d64, s, s2);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->rank, 1);
    assert_int_equal(out->dims[0], 6);
    for (int i = 0; i < 6; i++) {
        uint32_t w[4];
        ref_block((uint64_t)s, (uint64_t)s2, (uint64_t)(i / 4), w);
        assert_true(((const float *)out->data)[i] == ref_uniform(w[i % 4]));
    }
    kh_free(&c);
}

static void test_normal_values(void **state)
{
    (void)state;
    kh_case c;
    const int32_t n = 7; /* odd: the last pair gives one value */
    mp_tensor *out = random_case(&c, MP_OP_RANDOM_STANDARD_NORMAL, MP_DT_INT32, 1, &n, 3, 1000);
    kh_expect_ok(&c, kh_run(&c));
    for (int run = 0; run < 2; run++) {
        if (run > 0)
            kh_expect_ok(&c, kh_rerun(&c, false));
        const float *y = out->data;
        for (int i = 0; i < 7; i += 2) {
            uint32_t w[4];
            ref_block(3, 1000, (uint64_t)(2 * run + i / 4), w);
            float a, b;
            ref_normal(w[i % 4], w[i % 4 + 1], &a, &b);
            assert_true(y[i] == a);
            if (i + 1 < 7)
                assert_true(y[i + 1] == b);
        }
    }
    kh_free(&c);
}

static void moments(const float *x, size_t n, double *mean, double *var)
{
    double s = 0, s2 = 0;
    for (size_t i = 0; i < n; i++)
        s += x[i];
    *mean = s / (double)n;
    for (size_t i = 0; i < n; i++)
        s2 += ((double)x[i] - *mean) * ((double)x[i] - *mean);
    *var = s2 / (double)n;
}

static void test_statistics(void **state)
{
    (void)state;
    const int32_t n = 100000;
    double mean, var;
    kh_case c;
    /* seeds 0, 0: memprof's own seed, the same on every run of the same operator */
    mp_tensor *out = random_case(&c, MP_OP_RANDOM_UNIFORM, MP_DT_INT32, 1, &n, 0, 0);
    kh_expect_ok(&c, kh_run(&c));
    moments(out->data, (size_t)n, &mean, &var);
    assert_true(fabs(mean - 0.5) < 0.005);         /* sd of the mean 0.0009 */
    assert_true(fabs(var - 1.0 / 12.0) < 0.002);   /* sd of the variance 0.0002 */
    float *again = malloc((size_t)n * sizeof *again);
    assert_non_null(again);
    memcpy(again, out->data, (size_t)n * sizeof *again);
    kh_free(&c);
    out = random_case(&c, MP_OP_RANDOM_UNIFORM, MP_DT_INT32, 1, &n, 0, 0);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(again, out->data, (size_t)n * sizeof *again);
    free(again);
    kh_free(&c);

    out = random_case(&c, MP_OP_RANDOM_STANDARD_NORMAL, MP_DT_INT32, 1, &n, 11, 12);
    kh_expect_ok(&c, kh_run(&c));
    moments(out->data, (size_t)n, &mean, &var);
    assert_true(fabs(mean) < 0.015);               /* sd of the mean 0.003 */
    assert_true(fabs(var - 1.0) < 0.03);           /* sd of the variance 0.0045 */
    kh_free(&c);
}

static void test_random_deferred_and_errors(void **state)
{
    (void)state;
    kh_case c;
    /* a shape known only while running */
    const int32_t two = 2;
    kh_init(&c, MP_OP_RANDOM_UNIFORM, NULL);
    mp_tensor *shape = kh_input(&c, MP_DT_INT32, 1, &two, NULL);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    assert_int_equal(kh_run(&c), MP_ERR_DEFERRED);
    ((int32_t *)shape->data)[0] = 3;
    ((int32_t *)shape->data)[1] = 1;
    shape->value_known = true;
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->rank, 2);
    assert_int_equal(out->dims[0], 3);
    assert_int_equal(out->dims[1], 1);
    kh_free(&c);

    const int32_t neg[2] = {2, -1}, d22[2] = {2, 2};
    random_case(&c, MP_OP_RANDOM_UNIFORM, MP_DT_INT32, 2, neg, 1, 1);
    kh_expect_error(&c, MP_ERR_SHAPE, "dimension 1 of shape");
    kh_free(&c);
    kh_init(&c, MP_OP_RANDOM_STANDARD_NORMAL, NULL);
    kh_input(&c, MP_DT_INT32, 2, d22, (const int32_t[]){1, 1, 1, 1});
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "must have rank 1");
    kh_free(&c);
    kh_init(&c, MP_OP_RANDOM_UNIFORM, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, &two, (const float[]){1, 1});
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "expected i32 or i64");
    kh_free(&c);
    kh_init(&c, MP_OP_RANDOM_UNIFORM, NULL);
    kh_input(&c, MP_DT_INT32, 1, &two, d22);
    kh_output(&c, MP_DT_INT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "(supported: f32)");
    kh_free(&c);
    const int32_t over = MP_MAX_RANK + 1;
    int32_t ones[MP_MAX_RANK + 1];
    for (int i = 0; i < over; i++)
        ones[i] = 1;
    kh_init(&c, MP_OP_RANDOM_UNIFORM, NULL);
    kh_input(&c, MP_DT_INT32, 1, &over, ones);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "asks for rank");
    kh_free(&c);
    /* elements beyond what a tensor holds */
    const int32_t huge[3] = {INT32_MAX, INT32_MAX, INT32_MAX};
    random_case(&c, MP_OP_RANDOM_UNIFORM, MP_DT_INT32, 3, huge, 1, 1);
    kh_expect_error(&c, MP_ERR_SHAPE, "too large");
    kh_free(&c);
}

/* ---- MULTINOMIAL --------------------------------------------------------------------------- */

static mp_tensor *multinomial_case(kh_case *c, int32_t batch, int32_t classes,
                                   const float *logits, const int32_t *samples, mp_dtype out_dt,
                                   int64_t seed, int64_t seed2)
{
    kh_init(c, MP_OP_MULTINOMIAL, NULL);
    c->opt.random_seed = seed;
    c->opt.random_seed2 = seed2;
    const int32_t d[2] = {batch, classes};
    kh_input(c, MP_DT_FLOAT32, 2, d, logits);
    kh_input(c, MP_DT_INT32, 0, NULL, samples); /* used in place: the caller's */
    return kh_output(c, out_dt);
}

static int64_t sample_at(const mp_tensor *t, size_t i)
{
    return t->dtype == MP_DT_INT64 ? ((const int64_t *)t->data)[i]
                                   : ((const int32_t *)t->data)[i];
}

static void test_multinomial_one_hot(void **state)
{
    (void)state;
    const float ninf = -INFINITY;
    /* row r allows only class (2r + 1) % 4 */
    const float logits[12] = {ninf, 0.5f, ninf, ninf, ninf, ninf, ninf, -30.0f,
                              ninf, 7.0f, ninf, ninf};
    const int64_t want[3] = {1, 3, 1};
    const int32_t thousand = 1000;
    for (int wide = 0; wide < 2; wide++) {
        kh_case c;
        mp_tensor *out = multinomial_case(&c, 3, 4, logits, &thousand,
                                          wide ? MP_DT_INT64 : MP_DT_INT32, 5, 6);
        kh_expect_ok(&c, kh_run(&c));
        assert_int_equal(out->rank, 2);
        assert_int_equal(out->dims[0], 3);
        assert_int_equal(out->dims[1], 1000);
        for (int run = 0; run < 2; run++) {
            if (run)
                kh_expect_ok(&c, kh_rerun(&c, false));
            for (size_t i = 0; i < 3000; i++)
                assert_int_equal(sample_at(out, i), want[i / 1000]);
        }
        kh_free(&c);
    }
}

static void test_multinomial_two_classes(void **state)
{
    (void)state;
    /* p = 1/4, 3/4 */
    const float logits[2] = {0.0f, logf(3.0f)};
    const int32_t samples = 100000;
    kh_case c;
    mp_tensor *out = multinomial_case(&c, 1, 2, logits, &samples, MP_DT_INT64, 99, 100);
    kh_expect_ok(&c, kh_run(&c));
    size_t ones = 0;
    for (int32_t i = 0; i < samples; i++) {
        const int64_t k = sample_at(out, (size_t)i);
        assert_true(k == 0 || k == 1);
        ones += (size_t)k;
    }
    assert_true(fabs((double)ones / samples - 0.75) < 0.006); /* sd 0.0014 */
    kh_free(&c);

    /* the exact draws, restated: two words per sample from block 0 on, x = double(w0, w1)
     * times the total exp(l - max); class 1 when x >= cdf[0]. Run 2 starts after the skip of
     * batch * round_up(samples, 4) * 2 * 256 blocks. */
    const float l2[4] = {1.0f, 2.0f, -0.5f, 0.25f};
    const int32_t ns = 5, batch = 2;
    out = multinomial_case(&c, batch, 2, l2, &ns, MP_DT_INT32, 8, 9);
    kh_expect_ok(&c, kh_run(&c));
    for (int run = 0; run < 2; run++) {
        if (run)
            kh_expect_ok(&c, kh_rerun(&c, true));
        const uint64_t base = run ? (uint64_t)batch * 8 * 2 * 256 : 0;
        size_t word = 0;
        for (int32_t b = 0; b < batch; b++) {
            const double m = fmax(l2[2 * b], l2[2 * b + 1]);
            const double c0 = exp(l2[2 * b] - m), total = c0 + exp(l2[2 * b + 1] - m);
            for (int32_t j = 0; j < ns; j++, word += 2) {
                uint32_t w[4];
                ref_block(8, 9, base + word / 4, w);
                const uint64_t bits = (uint64_t)(w[word % 4] & 0xfffffu) << 32 | w[word % 4 + 1];
                const double x = (double)bits / 4503599627370496.0 * total;
                assert_int_equal(sample_at(out, (size_t)(b * ns + j)), x >= c0 ? 1 : 0);
            }
        }
    }
    kh_free(&c);
}

static void test_multinomial_errors(void **state)
{
    (void)state;
    kh_case c;
    const float l[4] = {0, 0, 0, 0};
    const int32_t minus1 = -1, three = 3;
    multinomial_case(&c, 2, 2, l, &minus1, MP_DT_INT64, 1, 1);
    kh_expect_error(&c, MP_ERR_SHAPE, "num_samples -1");
    kh_free(&c);
    multinomial_case(&c, 2, 2, l, &three, MP_DT_FLOAT32, 1, 1);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "expected i32 or i64");
    kh_free(&c);
    multinomial_case(&c, 4, 0, l, &three, MP_DT_INT32, 1, 1);
    kh_expect_error(&c, MP_ERR_SHAPE, "have no class");
    kh_free(&c);
    kh_init(&c, MP_OP_MULTINOMIAL, NULL);
    const int32_t four = 4, s = 2;
    kh_input(&c, MP_DT_FLOAT32, 1, &four, l);
    kh_input(&c, MP_DT_INT32, 0, NULL, &s);
    kh_output(&c, MP_DT_INT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "must have rank 2");
    kh_free(&c);
    /* num_samples known only while running */
    kh_init(&c, MP_OP_MULTINOMIAL, NULL);
    const int32_t d[2] = {2, 2};
    kh_input(&c, MP_DT_FLOAT32, 2, d, l);
    mp_tensor *ns = kh_input(&c, MP_DT_INT32, 0, NULL, NULL);
    mp_tensor *out = kh_output(&c, MP_DT_INT32);
    assert_int_equal(kh_run(&c), MP_ERR_DEFERRED);
    *(int32_t *)ns->data = 3;
    ns->value_known = true;
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->dims[0], 2);
    assert_int_equal(out->dims[1], 3);
    kh_free(&c);
}

/* ---- BITCAST ------------------------------------------------------------------------------- */

static mp_tensor *bitcast_case(kh_case *c, mp_dtype in_dt, int32_t rank, const int32_t *dims,
                               const void *x, mp_dtype out_dt)
{
    kh_init(c, MP_OP_BITCAST, NULL);
    kh_input(c, in_dt, rank, dims, x);
    return kh_output(c, out_dt);
}

static void test_bitcast(void **state)
{
    (void)state;
    kh_case c;
    /* same size: f32 [2, 1] -> i32 [2, 1]; 1.0f is 0x3f800000, -2.0f 0xc0000000 */
    const int32_t d21[2] = {2, 1};
    mp_tensor *out = bitcast_case(&c, MP_DT_FLOAT32, 2, d21, (const float[]){1.0f, -2.0f},
                                  MP_DT_INT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->rank, 2);
    assert_int_equal(out->dims[0], 2);
    assert_int_equal(out->dims[1], 1);
    assert_int_equal(((int32_t *)out->data)[0], 0x3f800000);
    assert_int_equal((uint32_t)((int32_t *)out->data)[1], 0xc0000000u);
    kh_free(&c);
    /* larger to smaller: i32 [2] -> u8 [2, 4] (little-endian bytes) */
    const int32_t two = 2;
    out = bitcast_case(&c, MP_DT_INT32, 1, &two, (const int32_t[]){0x04030201, -2}, MP_DT_UINT8);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->rank, 2);
    assert_int_equal(out->dims[0], 2);
    assert_int_equal(out->dims[1], 4);
    assert_memory_equal(out->data, ((uint8_t[]){1, 2, 3, 4, 0xfe, 0xff, 0xff, 0xff}), 8);
    kh_free(&c);
    /* a scalar i64 -> i16 [4] */
    out = bitcast_case(&c, MP_DT_INT64, 0, NULL, (const int64_t[]){INT64_C(0x0004000300020001)},
                       MP_DT_INT16);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->rank, 1);
    assert_int_equal(out->dims[0], 4);
    assert_memory_equal(out->data, ((int16_t[]){1, 2, 3, 4}), 8);
    kh_free(&c);
    /* smaller to larger: u8 [3, 4] -> f32 [3]; i16 [1, 4] -> i64 [1] */
    const int32_t d34[2] = {3, 4};
    const uint8_t bytes[12] = {0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 0, 0, 0xc0, 0xff};
    out = bitcast_case(&c, MP_DT_UINT8, 2, d34, bytes, MP_DT_FLOAT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->rank, 1);
    assert_int_equal(out->dims[0], 3);
    const float *f = out->data;
    assert_true(f[0] == 1.0f && f[1] == 2.0f && isnan(f[2]));
    kh_free(&c);
    const int32_t d14[2] = {1, 4};
    out = bitcast_case(&c, MP_DT_INT16, 2, d14, (const int16_t[]){-1, 0, 0, 0}, MP_DT_INT64);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->rank, 1);
    assert_int_equal(out->dims[0], 1);
    assert_true(((int64_t *)out->data)[0] == 0xffff);
    kh_free(&c);
}

static void test_bitcast_errors(void **state)
{
    (void)state;
    kh_case c;
    const int32_t d23[2] = {2, 3};
    bitcast_case(&c, MP_DT_UINT8, 2, d23, (const uint8_t[]){0, 0, 0, 0, 0, 0}, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "must end in a dimension of 4 to make one f32 element, "
                                      "has last dimension 3");
    kh_free(&c);
    bitcast_case(&c, MP_DT_INT8, 0, NULL, (const int8_t[]){1}, MP_DT_INT16);
    kh_expect_error(&c, MP_ERR_SHAPE, "has rank 0");
    kh_free(&c);
    const int32_t one = 1;
    bitcast_case(&c, MP_DT_INT32, 1, &one, (const int32_t[]){1}, MP_DT_STRING);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "has dtype string, which has no fixed element size");
    kh_free(&c);
    const int32_t d8[MP_MAX_RANK] = {1, 1, 1, 1, 1, 1, 1, 1};
    bitcast_case(&c, MP_DT_INT32, MP_MAX_RANK, d8, (const int32_t[]){1}, MP_DT_INT8);
    char msg[64];
    snprintf(msg, sizeof msg, "output rank %d is above %d", MP_MAX_RANK + 1, MP_MAX_RANK);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, msg);
    kh_free(&c);
}

/* ---- RandomOptions and a model through a session ------------------------------------------ */

/* shape const [2, 3] -> RANDOM_UNIFORM (seeds 21, 22) -> u; dims (input, i64 [2]) ->
 * RANDOM_STANDARD_NORMAL (seeds -5, 2^40) -> nrm (shape known only while running);
 * logits (input [2, 3]) and num_samples const 4 -> MULTINOMIAL (seeds 0, 0) -> mn (i64);
 * u -> BITCAST -> ub (i32); ub -> BITCAST -> bytes (u8 [2, 3, 4]). */
static void *random_model(size_t *size)
{
    mp_tfw *w = mp_tfw_create();
    assert_non_null(w);
    const int32_t shape[2] = {2, 3}, n2 = 2, d23[2] = {2, 3}, d24[2] = {2, 4};
    const int32_t d234[3] = {2, 3, 4}, dyn2[2] = {-1, -1}, four = 4;
    int sh = mp_tfw_tensor(w, "shape", MP_DT_INT32, 1, &n2, mp_tfw_buffer(w, shape, 8), NULL);
    int dims = mp_tfw_tensor(w, "dims", MP_DT_INT64, 1, &n2, 0, NULL);
    int lg = mp_tfw_tensor(w, "logits", MP_DT_FLOAT32, 2, d23, 0, NULL);
    int ns = mp_tfw_tensor(w, "num_samples", MP_DT_INT32, 0, NULL, mp_tfw_buffer(w, &four, 4),
                           NULL);
    int u = mp_tfw_tensor(w, "u", MP_DT_FLOAT32, 2, d23, 0, NULL);
    int nrm = mp_tfw_tensor(w, "nrm", MP_DT_FLOAT32, 2, d23, 0, dyn2);
    int mn = mp_tfw_tensor(w, "mn", MP_DT_INT64, 2, d24, 0, NULL);
    int ub = mp_tfw_tensor(w, "ub", MP_DT_INT32, 2, d23, 0, NULL);
    int by = mp_tfw_tensor(w, "bytes", MP_DT_UINT8, 3, d234, 0, NULL);
    mp_op_options o = mp_tfw_options_default();
    o.random_seed = 21;
    o.random_seed2 = 22;
    mp_tfw_op(w, MP_OP_RANDOM_UNIFORM, 1, &sh, 1, &u, &o);
    o.random_seed = -5;
    o.random_seed2 = INT64_C(1) << 40;
    mp_tfw_op(w, MP_OP_RANDOM_STANDARD_NORMAL, 1, &dims, 1, &nrm, &o);
    o = mp_tfw_options_default();
    mp_tfw_op(w, MP_OP_MULTINOMIAL, 2, (int32_t[]){lg, ns}, 1, &mn, &o);
    mp_tfw_op(w, MP_OP_BITCAST, 1, &u, 1, &ub, &o);
    mp_tfw_op(w, MP_OP_BITCAST, 1, &ub, 1, &by, &o);
    mp_tfw_io(w, 2, (int32_t[]){dims, lg}, 5, (int32_t[]){u, nrm, mn, ub, by});
    mp_test_model built = mp_test_tfw_finish(w);
    *size = built.size;
    return built.bytes;
}

static void test_options_round_trip(void **state)
{
    (void)state;
    size_t size;
    void *bytes = random_model(&size);
    mp_model *m = NULL;
    mp_error err = {0};
    if (mp_model_load_memory(bytes, size, "random", &m, &err) != MP_OK)
        fail_msg("load: %s", err.msg);
    free(bytes);
    assert_int_equal(m->n_ops, 5);
    assert_int_equal(m->ops[0].opcode, MP_OP_RANDOM_UNIFORM);
    assert_true(m->ops[0].opt.random_seed == 21 && m->ops[0].opt.random_seed2 == 22);
    assert_int_equal(m->ops[1].opcode, MP_OP_RANDOM_STANDARD_NORMAL);
    assert_true(m->ops[1].opt.random_seed == -5);
    assert_true(m->ops[1].opt.random_seed2 == INT64_C(1) << 40);
    assert_int_equal(m->ops[2].opcode, MP_OP_MULTINOMIAL);
    assert_true(m->ops[2].opt.random_seed == 0 && m->ops[2].opt.random_seed2 == 0);
    assert_int_equal(m->ops[3].opcode, MP_OP_BITCAST);
    mp_model_free(m);
}

#define RUNS 2
#define OUTS 5

static void run_random_model(mp_memory_mode mode, void *out[RUNS][OUTS], size_t sizes[OUTS])
{
    size_t size;
    void *bytes = random_model(&size);
    mp_session *s = kh_session(mode, bytes, size, "random");
    mp_error err = {0};
    const int64_t dims[2] = {3, 3};
    const float logits[6] = {0, -INFINITY, -INFINITY, -INFINITY, -INFINITY, 2};
    for (int r = 0; r < RUNS; r++) {
        assert_int_equal(mp_session_set_input(s, 0, dims, sizeof dims, &err), MP_OK);
        assert_int_equal(mp_session_set_input(s, 1, logits, sizeof logits, &err), MP_OK);
        if (mp_session_run(s, &err) != MP_OK)
            fail_msg("run (%s): %s", mp_memory_mode_name(mode), err.msg);
        assert_int_equal(mp_session_output_count(s), OUTS);
        for (int i = 0; i < OUTS; i++) {
            const mp_tensor *t = mp_session_output(s, i);
            sizes[i] = t->bytes;
            out[r][i] = malloc(t->bytes + 1);
            memcpy(out[r][i], t->data, t->bytes);
        }
        /* u: blocks 2r and 2r + 1 of (21, 22) */
        const float *u = out[r][0];
        for (int i = 0; i < 6; i++) {
            uint32_t w[4];
            ref_block(21, 22, (uint64_t)(2 * r + i / 4), w);
            assert_true(u[i] == ref_uniform(w[i % 4]));
        }
        /* nrm: [3, 3] from the dims input, blocks 3r .. 3r + 2 of (-5, 2^40) */
        const mp_tensor *nt = mp_session_output(s, 1);
        assert_int_equal(nt->rank, 2);
        assert_int_equal(nt->dims[0], 3);
        assert_int_equal(nt->dims[1], 3);
        const float *nv = out[r][1];
        for (int i = 0; i < 9; i += 2) {
            uint32_t w[4];
            ref_block((uint64_t)-5, UINT64_C(1) << 40, (uint64_t)(3 * r + i / 4), w);
            float a, b;
            ref_normal(w[i % 4], w[i % 4 + 1], &a, &b);
            assert_true(nv[i] == a);
            if (i + 1 < 9)
                assert_true(nv[i + 1] == b);
        }
        /* mn: rows allowing only class 0, then only class 2 */
        const int64_t *mv = out[r][2];
        for (int i = 0; i < 8; i++)
            assert_true(mv[i] == (i < 4 ? 0 : 2));
        /* ub and bytes: u's bytes */
        assert_memory_equal(out[r][3], u, 24);
        assert_memory_equal(out[r][4], u, 24);
    }
    assert_memory_not_equal(out[0][0], out[1][0], sizes[0]);
    mp_session_destroy(s);
}

static void test_model_static_dynamic(void **state)
{
    (void)state;
    void *a[RUNS][OUTS], *b[RUNS][OUTS];
    size_t sa[OUTS], sb[OUTS];
    run_random_model(MP_MEMORY_STATIC, a, sa);
    run_random_model(MP_MEMORY_DYNAMIC, b, sb);
    for (int r = 0; r < RUNS; r++)
        for (int i = 0; i < OUTS; i++) {
            assert_int_equal(sa[i], sb[i]);
            assert_memory_equal(a[r][i], b[r][i], sa[i]);
            free(a[r][i]);
            free(b[r][i]);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_philox_known_answers),
        cmocka_unit_test(test_uniform_values),
        cmocka_unit_test(test_normal_values),
        cmocka_unit_test(test_statistics),
        cmocka_unit_test(test_random_deferred_and_errors),
        cmocka_unit_test(test_multinomial_one_hot),
        cmocka_unit_test(test_multinomial_two_classes),
        cmocka_unit_test(test_multinomial_errors),
        cmocka_unit_test(test_bitcast),
        cmocka_unit_test(test_bitcast_errors),
        cmocka_unit_test(test_options_round_trip),
        cmocka_unit_test(test_model_static_dynamic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
