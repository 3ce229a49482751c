/* Tests of MEAN and SUM on int8 / uint8 / int16 against TensorFlow Lite's reference
 * QuantizedMeanOrSum written here from its definition: int32 sums of the raw values, the
 * multiplier of in_scale / out_scale (QuantizeMultiplier) folded with 1 / count (shift
 * s = min(floor(log2 count), 32, 31 + shift), multiplier << s / count truncated), then
 * MultiplyByQuantizedMultiplier(sum - zp_in * count) + zp_out saturated, its fixed-point
 * steps in 64-bit arithmetic as gemmlowp states them; SUM (compute_sum) without the fold.
 * Hand cases, random shapes and axes, the scratch declared by infer, empty axes and inputs,
 * errors. And REDUCE_PROD on int8 / int16 against its QuantizedReduceProd restated (a
 * rescale at every step). */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/kernels/quant_math.h"
#include "tests/util/kernel_harness.h"
#include "tests/util/quant_ref.h"

static uint32_t g_seed = 777;
static uint32_t rnd(void)
{
    g_seed = g_seed * 1664525u + 1013904223u;
    return g_seed >> 8;
}

/* The reference mean (or sum): sums by flat index (reduced coordinates dropped), then the
 * fold (a mean only). */
static void ref_mean_or_sum_q(mp_dtype dt, int32_t rank, const int32_t *dims, const bool *red,
                              const void *x, float is, int32_t iz, float os, int32_t oz,
                              int32_t *want, size_t outputs, bool compute_sum)
{
    size_t n = 1;
    int64_t count = 1;
    for (int32_t i = 0; i < rank; i++) {
        n *= (size_t)dims[i];
        if (red[i])
            count *= dims[i];
    }
    int64_t *sum = calloc(outputs, sizeof(int64_t));
    for (size_t f = 0; f < n; f++) {
        size_t rem = f, idx[MP_MAX_RANK], o = 0;
        for (int32_t i = rank - 1; i >= 0; i--) {
            idx[i] = rem % (size_t)dims[i];
            rem /= (size_t)dims[i];
        }
        for (int32_t i = 0; i < rank; i++)
            if (!red[i])
                o = o * (size_t)dims[i] + idx[i];
        sum[o] += qref_load(dt, x, f);
    }
    int32_t m, lo, hi;
    int shift;
    assert_true(mp_quantize_multiplier((double)is / (double)os, &m, &shift));
    int s = 0;
    while (!compute_sum && (2LL << s) <= count) /* floor(log2(count)) */
        s++;
    if (s > 32)
        s = 32;
    if (s > 31 + shift)
        s = 31 + shift;
    int32_t m2 = compute_sum ? m : (int32_t)(((int64_t)m << s) / count);
    qref_range(dt, &lo, &hi);
    for (size_t o = 0; o < outputs; o++) {
        int32_t shifted = (int32_t)(sum[o] - (int64_t)iz * count);
        int64_t v = (int64_t)qref_mbqm(shifted, m2, shift - s) + oz;
        want[o] = v < lo ? lo : (v > hi ? hi : (int32_t)v);
    }
    free(sum);
}

static void ref_mean_q(mp_dtype dt, int32_t rank, const int32_t *dims, const bool *red,
                       const void *x, float is, int32_t iz, float os, int32_t oz, int32_t *want,
                       size_t outputs)
{
    ref_mean_or_sum_q(dt, rank, dims, red, x, is, iz, os, oz, want, outputs, false);
}

/* Hand, uint8 (0.5, 10) -> (0.5, 10), [1,2,2,1] mean over {1,2}: values 10, 12, 14, 17, sum
 * 53, count 4. QuantizeMultiplier(1.0) = (2^30, 1); s = 2, multiplier 2^32 / 4 = 2^30, shift
 * -1. 53 - 40 = 13; high multiply round(13 / 2) = 7 (6.5 ties up); 7 / 2 = 3.5 -> 4; + 10 =
 * 14 (the real mean 1.625 is 13.25 on the scale: TFLite's two roundings give 14).
 * Hand, int8 (0.1, -3) -> (0.2, 5), [3] over {0}: -3, 7, 27, sum 31, count 3.
 * QuantizeMultiplier(0.5) = (2^30, 0); s = 1, multiplier 2^31 / 3 = 715827882, shift -1.
 * 31 + 9 = 40; 40 * 715827882 / 2^31 = 13.33 -> 13 (with the 2^30 nudge: 13.83 -> 13);
 * 13 / 2 = 6.5 -> 7; + 5 = 12. */
static void test_hand(void **state)
{
    (void)state;
    kh_case c;
    kh_init(&c, MP_OP_MEAN, NULL);
    c.opt.keep_dims = true;
    mp_tensor *in = kh_input(&c, MP_DT_UINT8, 4, (int32_t[]){1, 2, 2, 1}, NULL);
    static const int32_t axes[2] = {1, 2};
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, axes);
    mp_tensor *out = kh_output(&c, MP_DT_UINT8);
    float s = 0.5f;
    int64_t z = 10;
    kh_quant(&c, in, 1, &s, &z, 0);
    kh_quant(&c, out, 1, &s, &z, 0);
    memcpy(in->data, (uint8_t[]){10, 12, 14, 17}, 4);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->rank, 4);
    assert_int_equal(((uint8_t *)out->data)[0], 14);
    assert_int_equal(c.node.scratch_bytes, sizeof(int32_t)); /* one accumulator */
    kh_free(&c);

    kh_init(&c, MP_OP_MEAN, NULL);
    in = kh_input(&c, MP_DT_INT8, 1, (int32_t[]){3}, NULL);
    static const int32_t axis0[1] = {0};
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, axis0);
    out = kh_output(&c, MP_DT_INT8);
    float is = 0.1f, os = 0.2f;
    int64_t iz = -3, oz = 5;
    kh_quant(&c, in, 1, &is, &iz, 0);
    kh_quant(&c, out, 1, &os, &oz, 0);
    memcpy(in->data, (int8_t[]){-3, 7, 27}, 3);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->rank, 0);
    assert_int_equal(((int8_t *)out->data)[0], 12);
    kh_free(&c);
}

/* A random shape of rank 1 to max_rank, extents 1 to ext (1 to ext_high above rank 3), and
 * 1 to rank axes on it (none when no_axes; negative or not, repeats allowed), the reduced
 * dimensions marked in red. Returns the element count. */
typedef struct reduction {
    int32_t rank, dims[MP_MAX_RANK], naxes, axes[8];
    bool red[MP_MAX_RANK];
} reduction;

static size_t random_reduction(reduction *r, int32_t max_rank, uint32_t ext, uint32_t ext_high,
                               bool no_axes)
{
    r->rank = 1 + (int32_t)(rnd() % (uint32_t)max_rank);
    size_t n = 1;
    for (int32_t i = 0; i < r->rank; i++) {
        r->dims[i] = 1 + (int32_t)(rnd() % (r->rank > 3 ? ext_high : ext));
        n *= (size_t)r->dims[i];
    }
    r->naxes = no_axes ? 0 : 1 + (int32_t)(rnd() % (uint32_t)r->rank);
    memset(r->red, 0, sizeof r->red);
    for (int32_t k = 0; k < r->naxes; k++) {
        int32_t a = (int32_t)(rnd() % (uint32_t)r->rank);
        r->red[a] = true;
        r->axes[k] = rnd() % 2 ? a - r->rank : a;
    }
    return n;
}

/* Random shapes (rank 1-5), axis sets (negative, repeated), keep_dims, dtypes, parameters. */
static void test_random(void **state)
{
    (void)state;
    const mp_dtype types[] = {MP_DT_INT8, MP_DT_UINT8, MP_DT_INT16};
    for (int trial = 0; trial < 300; trial++) {
        mp_dtype dt = types[trial % 3];
        int32_t lo, hi;
        qref_range(dt, &lo, &hi);
        reduction r;
        const size_t n = random_reduction(&r, 5, 9, 4, false);
        const int32_t rank = r.rank, *dims = r.dims, naxes = r.naxes, *axes = r.axes;
        const bool *red = r.red;
        bool keep = rnd() % 2;
        float is = ldexpf(1.0f + (float)(rnd() % 1000) / 1000.0f, -(int)(rnd() % 8));
        float os = trial % 7 == 0 ? is : ldexpf(1.0f + (float)(rnd() % 1000) / 1000.0f, -(int)(rnd() % 8));
        int64_t iz = dt == MP_DT_INT16 ? 0 : lo + (int64_t)(rnd() % 256);
        int64_t oz = dt == MP_DT_INT16 ? 0 : trial % 7 == 0 ? iz : lo + (int64_t)(rnd() % 256);
        kh_case c;
        kh_init(&c, MP_OP_MEAN, NULL);
        c.opt.keep_dims = keep;
        mp_tensor *in = kh_input(&c, dt, rank, dims, NULL);
        kh_input(&c, MP_DT_INT32, 1, (int32_t[]){naxes}, axes);
        mp_tensor *out = kh_output(&c, dt);
        kh_quant(&c, in, 1, &is, &iz, 0);
        kh_quant(&c, out, 1, &os, &oz, 0);
        for (size_t i = 0; i < n; i++)
            qref_store(dt, in->data, i, lo + (int32_t)(rnd() % (uint32_t)(hi - lo + 1)));
        kh_expect_ok(&c, kh_run(&c));
        size_t outputs = 1;
        int32_t orank = 0;
        for (int32_t i = 0; i < rank; i++) {
            if (!red[i])
                outputs *= (size_t)dims[i];
            orank += !red[i] || keep;
        }
        assert_int_equal(out->rank, orank);
        assert_int_equal(mp_tensor_elements(out), outputs);
        assert_int_equal(c.node.scratch_bytes, outputs * sizeof(int32_t));
        int32_t *want = malloc(outputs * sizeof(int32_t));
        ref_mean_q(dt, rank, dims, red, in->data, is, (int32_t)iz, os, (int32_t)oz, want, outputs);
        for (size_t o = 0; o < outputs; o++)
            if (qref_load(dt, out->data, o) != want[o])
                fail_msg("trial %d (%s, rank %d): output %zu is %d, want %d", trial,
                         mp_dtype_name(dt), rank, o, qref_load(dt, out->data, o), want[o]);
        /* a rerun with the scratch refilled with garbage gives the same */
        memset(c.node.scratch, 0x5A, c.node.scratch_bytes);
        kh_expect_ok(&c, kh_rerun(&c, false));
        for (size_t o = 0; o < outputs; o++)
            assert_int_equal(qref_load(dt, out->data, o), want[o]);
        free(want);
        kh_free(&c);
    }
}

/* Large reductions (65536 int8 values of 127 into one int32 sum; count 2^16 folds the whole
 * shift) still match the reference. */
static void test_large_count(void **state)
{
    (void)state;
    kh_case c;
    kh_init(&c, MP_OP_MEAN, NULL);
    mp_tensor *in = kh_input(&c, MP_DT_INT8, 2, (int32_t[]){256, 256}, NULL);
    static const int32_t axes[2] = {0, 1};
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, axes);
    mp_tensor *out = kh_output(&c, MP_DT_INT8);
    float is = 0.05f, os = 0.02f;
    int64_t iz = -128, oz = -100;
    kh_quant(&c, in, 1, &is, &iz, 0);
    kh_quant(&c, out, 1, &os, &oz, 0);
    for (size_t i = 0; i < 65536; i++)
        ((int8_t *)in->data)[i] = (int8_t)(i % 3 ? 127 : -90);
    kh_expect_ok(&c, kh_run(&c));
    int32_t want;
    ref_mean_q(MP_DT_INT8, 2, (int32_t[]){256, 256}, (bool[]){true, true}, in->data, is, -128, os,
               -100, &want, 1);
    assert_int_equal(((int8_t *)out->data)[0], want);
    kh_free(&c);
}

/* No axes: the bytes are copied (TFLite's ReduceIsCopy), whatever the parameters. An empty
 * input gives zeros. */
static void test_copy_and_empty(void **state)
{
    (void)state;
    kh_case c;
    kh_init(&c, MP_OP_MEAN, NULL);
    mp_tensor *in = kh_input(&c, MP_DT_UINT8, 2, (int32_t[]){2, 3}, NULL);
    static const int32_t none[1] = {0};
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){0}, none);
    mp_tensor *out = kh_output(&c, MP_DT_UINT8);
    float is = 0.5f, os = 0.25f;
    int64_t iz = 1, oz = 2;
    kh_quant(&c, in, 1, &is, &iz, 0);
    kh_quant(&c, out, 1, &os, &oz, 0);
    memcpy(in->data, (uint8_t[]){1, 2, 3, 250, 251, 252}, 6);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(out->data, in->data, 6);
    kh_free(&c);

    kh_init(&c, MP_OP_MEAN, NULL);
    in = kh_input(&c, MP_DT_INT8, 2, (int32_t[]){0, 3}, NULL);
    static const int32_t ax0[1] = {0};
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, ax0);
    out = kh_output(&c, MP_DT_INT8);
    kh_quant(&c, in, 1, &is, &iz, 0);
    kh_quant(&c, out, 1, &os, &oz, 0);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(mp_tensor_elements(out), 3);
    assert_memory_equal(out->data, ((int8_t[]){0, 0, 0}), 3);
    kh_free(&c);
}

/* A reducer op (SUM, REDUCE_PROD) of dtype dt over an input of shape rank / dims along
 * axes. */
static void op_case(kh_case *c, int32_t op, mp_dtype dt, int32_t rank, const int32_t *dims,
                    const int32_t *axes, int32_t naxes, float is, int64_t iz, float os,
                    int64_t oz, bool keep)
{
    static float s_is, s_os; /* the tensors keep pointers to their parameters */
    static int64_t s_iz, s_oz;
    s_is = is, s_os = os, s_iz = iz, s_oz = oz;
    kh_init(c, op, NULL);
    c->opt.keep_dims = keep;
    mp_tensor *in = kh_input(c, dt, rank, dims, NULL);
    kh_input(c, MP_DT_INT32, 1, (int32_t[]){naxes}, axes);
    mp_tensor *out = kh_output(c, dt);
    kh_quant(c, in, 1, &s_is, &s_iz, 0);
    kh_quant(c, out, 1, &s_os, &s_oz, 0);
}

static void sum_case(kh_case *c, mp_dtype dt, int32_t rank, const int32_t *dims,
                     const int32_t *axes, int32_t naxes, float is, int64_t iz, float os,
                     int64_t oz, bool keep)
{
    op_case(c, MP_OP_SUM, dt, rank, dims, axes, naxes, is, iz, os, oz, keep);
}

/* SUM int8 / uint8 (reduce.cc EvalSum -> QuantizedMeanOrSum with compute_sum):
 * int8 (0.1, -3) -> (0.5, 5), [3] over {0}: -3, 7, 27 sum 31, + 3 * 3 = 40 (4.0 real);
 * QuantizeMultiplier(0.2) = (1717986918, -2): 40 * 0.8 = 32 (31.99.. + nudge), 32 / 4 = 8;
 * + 5 = 13. uint8 (0.5, 10) -> (1, 0), [2,2] over {1}: rows 10 12 and 14 17 give 2 -> 1 and
 * 11 -> 5.5 -> 6 (the high multiply's nudge rounds the tie up), 250 255: 485 -> 242.5 -> 243;
 * on output scale 0.25 the last, 970, saturates to 255.
 * Then random shapes and axes against the reference, and no axes: each element requantized
 * (no copy). */
static void test_sum(void **state)
{
    (void)state;
    static const int32_t ax0[1] = {0}, ax1[1] = {1};
    kh_case c;
    sum_case(&c, MP_DT_INT8, 1, (int32_t[]){3}, ax0, 1, 0.1f, -3, 0.5f, 5, false);
    memcpy(c.in[0]->data, (int8_t[]){-3, 7, 27}, 3);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(((int8_t *)c.out[0]->data)[0], 13);
    assert_int_equal(c.node.scratch_bytes, sizeof(int32_t));
    kh_free(&c);
    sum_case(&c, MP_DT_UINT8, 2, (int32_t[]){3, 2}, ax1, 1, 0.5f, 10, 1.0f, 0, false);
    memcpy(c.in[0]->data, (uint8_t[]){10, 12, 14, 17, 250, 255}, 6);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(c.out[0]->data, ((uint8_t[]){1, 6, 243}), 3);
    kh_free(&c);
    sum_case(&c, MP_DT_UINT8, 2, (int32_t[]){3, 2}, ax1, 1, 0.5f, 10, 0.25f, 0, false);
    memcpy(c.in[0]->data, (uint8_t[]){10, 12, 14, 17, 250, 255}, 6);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(c.out[0]->data, ((uint8_t[]){4, 22, 255}), 3);
    kh_free(&c);
    /* int16 (zero points 0), 0.5 -> 1, [2,4] over {1}: 100 - 3 + 7 + 1 = 105 times
     * QuantizeMultiplier(0.5) = (2^30, 0): 52.5, the tie rounded up to 53; four 32767s
     * (131068 -> 65534) saturate at 32767, four -32768s at -32768 */
    sum_case(&c, MP_DT_INT16, 2, (int32_t[]){3, 4}, ax1, 1, 0.5f, 0, 1.0f, 0, false);
    memcpy(c.in[0]->data,
           (int16_t[]){100, -3, 7, 1, 32767, 32767, 32767, 32767, -32768, -32768, -32768,
                       -32768},
           24);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(c.out[0]->data, ((int16_t[]){53, 32767, -32768}), 6);
    kh_free(&c);

    for (int trial = 0; trial < 300; trial++) {
        mp_dtype dt = trial % 3 == 0 ? MP_DT_INT8 : trial % 3 == 1 ? MP_DT_UINT8 : MP_DT_INT16;
        int32_t lo, hi;
        qref_range(dt, &lo, &hi);
        reduction r;
        const size_t n = random_reduction(&r, 4, 7, 7, trial % 13 == 0);
        const int32_t rank = r.rank, *dims = r.dims, naxes = r.naxes, *axes = r.axes;
        const bool *red = r.red;
        float is = ldexpf(1.0f + (float)(rnd() % 1000) / 1000.0f, -(int)(rnd() % 8));
        float os = trial % 5 == 0 ? is : ldexpf(1.0f + (float)(rnd() % 1000) / 1000.0f, -(int)(rnd() % 4));
        int64_t iz = lo + (int64_t)(rnd() % 256), oz = trial % 5 == 0 ? iz : lo + (int64_t)(rnd() % 256);
        if (dt == MP_DT_INT16)
            iz = oz = 0;
        sum_case(&c, dt, rank, dims, axes, naxes, is, iz, os, oz, rnd() % 2);
        for (size_t i = 0; i < n; i++)
            qref_store(dt, c.in[0]->data, i, lo + (int32_t)(rnd() % (uint32_t)(hi - lo + 1)));
        kh_expect_ok(&c, kh_run(&c));
        size_t outputs = mp_tensor_elements(c.out[0]);
        int32_t *want = malloc(outputs * sizeof(int32_t));
        ref_mean_or_sum_q(dt, rank, dims, red, c.in[0]->data, is, (int32_t)iz, os, (int32_t)oz,
                          want, outputs, true);
        for (size_t o = 0; o < outputs; o++)
            if (qref_load(dt, c.out[0]->data, o) != want[o])
                fail_msg("sum trial %d (%s, rank %d, %d axes): output %zu is %d, want %d", trial,
                         mp_dtype_name(dt), rank, naxes, o, qref_load(dt, c.out[0]->data, o),
                         want[o]);
        free(want);
        kh_free(&c);
    }
}

static void test_errors(void **state)
{
    (void)state;
    static const int32_t ax0[1] = {0};
    float s1 = 0.5f, s2[2] = {0.5f, 0.25f};
    int64_t z0 = 0, z3 = 3, z2[2] = {0, 0};
    kh_case c;
    /* one scale per channel */
    kh_init(&c, MP_OP_MEAN, NULL);
    mp_tensor *in = kh_input(&c, MP_DT_INT8, 2, (int32_t[]){2, 2}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, ax0);
    mp_tensor *out = kh_output(&c, MP_DT_INT8);
    kh_quant(&c, in, 2, s2, z2, 1);
    kh_quant(&c, out, 1, &s1, &z0, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "i8 tensor 't0' has one scale per channel");
    kh_free(&c);
    /* int16 needs zero points 0 */
    kh_init(&c, MP_OP_MEAN, NULL);
    in = kh_input(&c, MP_DT_INT16, 1, (int32_t[]){4}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, ax0);
    out = kh_output(&c, MP_DT_INT16);
    kh_quant(&c, in, 1, &s1, &z3, 0);
    kh_quant(&c, out, 1, &s1, &z0, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "zero point 0");
    kh_free(&c);
    /* dtypes differ (MEAN, SUM) */
    for (int op = 0; op < 2; op++) {
        kh_init(&c, op ? MP_OP_SUM : MP_OP_MEAN, NULL);
        in = kh_input(&c, MP_DT_INT8, 1, (int32_t[]){4}, NULL);
        kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, ax0);
        out = kh_output(&c, MP_DT_UINT8);
        kh_quant(&c, in, 1, &s1, &z0, 0);
        kh_quant(&c, out, 1, &s1, &z0, 0);
        kh_expect_error(&c, MP_ERR_UNSUPPORTED, "output 't2' is u8 but input 't0' is i8");
        kh_free(&c);
    }
    /* no quantization */
    kh_init(&c, MP_OP_MEAN, NULL);
    kh_input(&c, MP_DT_UINT8, 1, (int32_t[]){4}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, ax0);
    kh_output(&c, MP_DT_UINT8);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "no quantization parameters");
    kh_free(&c);
    /* bool data is unsupported (int32 and int64 MEAN: test_kernels_dtype_gaps.c) */
    kh_init(&c, MP_OP_MEAN, NULL);
    kh_input(&c, MP_DT_BOOL, 1, (int32_t[]){4}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, ax0);
    kh_output(&c, MP_DT_BOOL);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "input 't0' has dtype bool");
    kh_free(&c);
    /* int16 SUM needs zero points 0 */
    sum_case(&c, MP_DT_INT16, 1, (int32_t[]){4}, ax0, 1, 0.5f, 0, 0.5f, 3, false);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "zero point 0");
    kh_free(&c);
    /* REDUCE_PROD: a quantized uint8 product (TensorFlow Lite: "Unsupported quantized data
     * type"), an int16 zero point, a step rescale of 2^14 or more (1 / 2^-15) */
    op_case(&c, MP_OP_REDUCE_PROD, MP_DT_UINT8, 1, (int32_t[]){4}, ax0, 1, 0.5f, 0, 0.5f, 0,
            false);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "has dtype u8 (supported: f32, i32, i64, i8, i16)");
    kh_free(&c);
    op_case(&c, MP_OP_REDUCE_PROD, MP_DT_INT16, 1, (int32_t[]){4}, ax0, 1, 0.5f, 2, 0.5f, 0,
            false);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "int16 't0' and 't2' must have zero point 0, have 2");
    kh_free(&c);
    op_case(&c, MP_OP_REDUCE_PROD, MP_DT_INT8, 1, (int32_t[]){1}, ax0, 1, 1.0f, 0, 0x1p-15f, 0,
            false);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "which the int64 requantization cannot take");
    kh_free(&c);
}

/* TensorFlow Lite's QuantizedReduceProd, restated from reduce.h: the input walked in row-major
 * order, each element's output found by dropping its reduced coordinates; the first element
 * an output meets (all its reduced coordinates 0) gives q - zp_in, every later one
 * MultiplyByQuantizedMultiplier(int64 (current * (q - zp_in))) on the int64 path; then each
 * output rescaled once more, plus zp_out, saturated. The multiplier is QuantizeMultiplier of
 * in_scale / out_scale^(1 / count), count the input's elements over the output's. */
static void ref_prod_q(mp_dtype dt, int32_t rank, const int32_t *dims, const bool *red,
                       const void *x, float is, int32_t iz, float os, int32_t oz, int32_t *want,
                       size_t outputs)
{
    size_t n = 1;
    for (int32_t i = 0; i < rank; i++)
        n *= (size_t)dims[i];
    int32_t m;
    int shift;
    qref_quantize_multiplier((double)is / pow((double)os, 1.0 / (double)(n / outputs)), &m,
                             &shift);
    int32_t idx[MP_MAX_RANK] = {0};
    int32_t *acc = calloc(outputs, sizeof(int32_t));
    for (size_t f = 0; f < n; f++) {
        size_t o = 0;
        bool first = true;
        for (int32_t d = 0; d < rank; d++) {
            if (!red[d])
                o = o * (size_t)dims[d] + (size_t)idx[d];
            else if (idx[d] != 0)
                first = false;
        }
        const int32_t v = qref_load(dt, x, f) - iz;
        acc[o] = first ? v : qref_mbqm64((int64_t)acc[o] * v, m, shift);
        for (int32_t d = rank - 1; d >= 0 && ++idx[d] == dims[d]; d--)
            idx[d] = 0;
    }
    int32_t lo, hi;
    qref_range(dt, &lo, &hi);
    for (size_t o = 0; o < outputs; o++) {
        int64_t q = (int64_t)qref_mbqm64(acc[o], m, shift) + oz;
        want[o] = (int32_t)(q < lo ? lo : (q > hi ? hi : q));
    }
    free(acc);
}

/* REDUCE_PROD of int8 and int16 (reduce.cc EvalQuantizedProd). By hand:
 * int8 0.5 -> 1, [2] over {0}: the step multiplier 0.5 / 1^(1/2) = 0.5 = (2^30, 0), its int64
 * form floor(x / 2 + 1/2): (3, 5) -> 15 / 2 = 7.5 -> 8, rescaled once more 4 (real 3.75);
 * (3, -5) -> -7.5 -> -7, then -3.5 -> -3 (real -3.75: the reference's two roundings, half
 * up). With zero points 2 in and -1 out the stored (5, -3) are (3, -5): -3 - 1 = -4.
 * 0.5 -> 0.25 over two: 0.5 / sqrt(0.25) = 1 = (2^30, 1), exact: (10, -3) -> -30; (100, 100)
 * -> 10000 saturates at 127.
 * int16 0.5 -> 1 over three (multiplier 0.5): (2, 3, 4): 2, then 6 -> 3, 12 -> 6, then 3.
 * Then random shapes, axes (none: each element rescaled), keep_dims and scales against the
 * restatement, and an empty input (zeros). */
static void test_prod(void **state)
{
    (void)state;
    static const int32_t ax0[1] = {0};
    const int32_t d2[1] = {2}, d3[1] = {3};
    kh_case c;
    struct {
        mp_dtype dt;
        const int32_t *dims;
        float is, os;
        int64_t iz, oz;
        int16_t x[3];
        int32_t want;
    } hand[] = {
        {MP_DT_INT8, d2, 0.5f, 1.0f, 0, 0, {3, 5}, 4},
        {MP_DT_INT8, d2, 0.5f, 1.0f, 0, 0, {3, -5}, -3},
        {MP_DT_INT8, d2, 0.5f, 1.0f, 2, -1, {5, -3}, -4},
        {MP_DT_INT8, d2, 0.5f, 0.25f, 0, 0, {10, -3}, -30},
        {MP_DT_INT8, d2, 0.5f, 0.25f, 0, 0, {100, 100}, 127},
        {MP_DT_INT16, d3, 0.5f, 1.0f, 0, 0, {2, 3, 4}, 3},
    };
    for (size_t k = 0; k < sizeof hand / sizeof hand[0]; k++) {
        op_case(&c, MP_OP_REDUCE_PROD, hand[k].dt, 1, hand[k].dims, ax0, 1, hand[k].is,
                hand[k].iz, hand[k].os, hand[k].oz, false);
        for (int32_t i = 0; i < hand[k].dims[0]; i++)
            qref_store(hand[k].dt, c.in[0]->data, (size_t)i, hand[k].x[i]);
        kh_expect_ok(&c, kh_run(&c));
        assert_int_equal(mp_tensor_elements(c.out[0]), 1);
        assert_int_equal(qref_load(hand[k].dt, c.out[0]->data, 0), hand[k].want);
        kh_free(&c);
    }
    for (int trial = 0; trial < 300; trial++) {
        mp_dtype dt = trial % 2 ? MP_DT_INT8 : MP_DT_INT16;
        int32_t lo, hi;
        qref_range(dt, &lo, &hi);
        reduction r;
        const size_t n = random_reduction(&r, 4, 5, 4, trial % 11 == 0);
        float is = ldexpf(1.0f + (float)(rnd() % 1000) / 1000.0f, -(int)(rnd() % 10));
        float os = ldexpf(1.0f + (float)(rnd() % 1000) / 1000.0f, -(int)(rnd() % 10));
        int64_t iz = dt == MP_DT_INT8 ? lo + (int64_t)(rnd() % 256) : 0;
        int64_t oz = dt == MP_DT_INT8 ? lo + (int64_t)(rnd() % 256) : 0;
        op_case(&c, MP_OP_REDUCE_PROD, dt, r.rank, r.dims, r.axes, r.naxes, is, iz, os, oz,
                rnd() % 2);
        for (size_t i = 0; i < n; i++)
            qref_store(dt, c.in[0]->data, i, lo + (int32_t)(rnd() % (uint32_t)(hi - lo + 1)));
        kh_expect_ok(&c, kh_run(&c));
        size_t outputs = mp_tensor_elements(c.out[0]);
        int32_t *want = malloc(outputs * sizeof(int32_t));
        ref_prod_q(dt, r.rank, r.dims, r.red, c.in[0]->data, is, (int32_t)iz, os, (int32_t)oz,
                   want, outputs);
        for (size_t o = 0; o < outputs; o++)
            if (qref_load(dt, c.out[0]->data, o) != want[o])
                fail_msg("prod trial %d (%s, rank %d, %d axes): output %zu is %d, want %d",
                         trial, mp_dtype_name(dt), r.rank, r.naxes, o,
                         qref_load(dt, c.out[0]->data, o), want[o]);
        free(want);
        kh_free(&c);
    }
    /* [2,0] over {1}: two outputs of nothing, zeros */
    static const int32_t ax1[1] = {1};
    op_case(&c, MP_OP_REDUCE_PROD, MP_DT_INT8, 2, (int32_t[]){2, 0}, ax1, 1, 0.5f, 0, 0.5f, 3,
            false);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(mp_tensor_elements(c.out[0]), 2);
    assert_memory_equal(c.out[0]->data, ((int8_t[]){0, 0}), 2);
    kh_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand),           cmocka_unit_test(test_random),
        cmocka_unit_test(test_large_count),    cmocka_unit_test(test_copy_and_empty),
        cmocka_unit_test(test_sum),            cmocka_unit_test(test_errors),
        cmocka_unit_test(test_prod),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
