/* Tests of HASHTABLE_LOOKUP, LSH_PROJECTION, SKIP_GRAM and EMBEDDING_LOOKUP_SPARSE (text.c)
 * and of farmhash's Fingerprint64 they hash with: the fingerprint on published values (the
 * TensorFlow fingerprint test's, BigQuery's and Redshift's documented FARM_FINGERPRINT
 * results, Guava's FarmHashFingerprint64Test with its every-length check up to 3200 bytes),
 * LSH projections on TensorFlow Lite's own test vectors and against sign bits
 * restated here from the definition, lookups, n-grams and sparse embeddings worked out by
 * hand, refusals with their messages, the options written by the writer and read back (and
 * refused when invalid), and one model of all four run through a session in static and
 * dynamic modes with equal outputs. */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model/tflite_writer.h"
#include "engine/session.h"
#include "tests/util/kernel_harness.h"

/* ---- string buffers --------------------------------------------------------------------- */

/* A constant string input of the given shape holding the strings. */
static mp_tensor *string_input(kh_case *c, int32_t rank, const int32_t *dims, uint8_t *buf,
                               size_t cap, int n, const char *const *s)
{
    const size_t bytes = kh_pack_strings(buf, cap, n, s);
    mp_tensor *t = kh_input(c, MP_DT_STRING, rank, dims, buf);
    t->bytes = bytes;
    ((mp_tensor_info *)t->info)->data_bytes = bytes;
    return t;
}

/* ---- Fingerprint64 ---------------------------------------------------------------------- */

static void test_fingerprint(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        uint64_t h;
    } v[] = {
        {"", UINT64_C(0x9ae16a3b2f90404f)},           /* k2: the empty input's definition */
        {"Hello", UINT64_C(15404698994557526151)},     /* TensorFlow's fingerprint_test.cc */
        {"World", UINT64_C(18308117990299812472)},
        {"alphabet", (uint64_t)INT64_C(-2427165924636348523)}, /* FARM_FINGERPRINT, signed */
        {"1footrue", (uint64_t)INT64_C(-1541654101129638711)},
        {"2applefalse", UINT64_C(2794438866806483259)},
        {"3true", (uint64_t)INT64_C(-4880158226897771312)},
        {"Amazon Redshift", UINT64_C(8085098817162212970)}, /* Redshift's farmFingerprint64 */
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (mp_fingerprint64(v[i].s, strlen(v[i].s)) != v[i].h)
            fail_msg("Fingerprint64('%s') = %llu, want %llu", v[i].s,
                     (unsigned long long)mp_fingerprint64(v[i].s, strlen(v[i].s)),
                     (unsigned long long)v[i].h);
    /* Guava's FarmHashFingerprint64Test: "test", repeated to 32 and 256 bytes */
    char t[257] = "";
    for (int i = 0; i < 64; i++)
        memcpy(t + 4 * i, "test", 4);
    assert_true(mp_fingerprint64(t, 4) == UINT64_C(8581389452482819506));
    assert_true(mp_fingerprint64(t, 32) == (uint64_t)INT64_C(-4196240717365766262));
    assert_true(mp_fingerprint64(t, 256) == UINT64_C(3500507768004279527));
    /* and its testMultipleLengths, restated: prefixes of every length up to 3200 bytes of a
     * buffer grown from the hashes (all four branches of the definition), folded into one
     * value that the C++ reference gives as 0x7a1d67c50ec7e167 */
    static uint8_t buf[800 * 4];
    size_t len = 0;
    uint64_t h = 0;
    for (int i = 0; i < 800; i++) {
        for (int k = 0; k < 4; k++) {
            const size_t n = k == 0   ? (size_t)i
                             : k == 1 ? (size_t)(i * i) % len
                             : k == 2 ? (size_t)(i * i * i) % len
                                      : len;
            h ^= mp_fingerprint64(buf, n);
            h ^= h >> 41;
            h *= 949921979u;
            buf[len++] = (uint8_t)('a' + (h & 0xfffff) % 26);
        }
        const int x0 = buf[len - 1], x1 = buf[len - 2], x2 = buf[len - 3], x3 = buf[len / 2];
        buf[(size_t)((x0 << 16) + (x1 << 8) + x2) % len] ^= (uint8_t)x3;
        buf[(size_t)((x1 << 16) + (x2 << 8) + x3) % len] ^= (uint8_t)(i % 256);
    }
    assert_true(h == UINT64_C(0x7a1d67c50ec7e167));
}

/* ---- LSH_PROJECTION --------------------------------------------------------------------- */

static void run_lsh(int type, const int32_t *hdims, const float *hash, int32_t in_rank,
                    const int32_t *in_dims, const int32_t *in, const float *weight, int32_t *out,
                    size_t n_out)
{
    kh_case c;
    kh_init(&c, MP_OP_LSH_PROJECTION, NULL);
    c.opt.lsh_type = type;
    kh_input(&c, MP_DT_FLOAT32, 2, hdims, hash);
    kh_input(&c, MP_DT_INT32, in_rank, in_dims, in);
    if (weight)
        kh_input(&c, MP_DT_FLOAT32, 1, in_dims, weight);
    mp_tensor *o = kh_output(&c, MP_DT_INT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(o->bytes, n_out * 4);
    memcpy(out, o->data, o->bytes);
    kh_free(&c);
}

/* The cases of TensorFlow Lite's lsh_projection_test.cc (little-endian results). */
static void test_lsh_tflite_vectors(void **state)
{
    (void)state;
    const int32_t hd[2] = {3, 2}, d5 = 5, d522[3] = {5, 2, 2};
    const float hash[6] = {0.123f, 0.456f, -0.321f, 1.234f, 5.678f, -4.321f};
    const int32_t in5[5] = {12345, 54321, 67890, 9876, -12345678};
    const float ones[5] = {1, 1, 1, 1, 1};
    int32_t out[6];
    run_lsh(2, hd, hash, 1, &d5, in5, ones, out, 6);
    assert_memory_equal(out, ((int32_t[]){0, 0, 0, 1, 0, 0}), 24);
    run_lsh(1, hd, hash, 1, &d5, in5, NULL, out, 3);
    assert_memory_equal(out, ((int32_t[]){0 + 0, 4 + 1, 8 + 0}), 12);
    const int32_t in3d[20] = {1234, 2345, 3456, 1234, 4567, 5678, 6789, 4567, 7891, 8912,
                              9123, 7890, -987, -876, -765, -987, -543, -432, -321, -543};
    const float w5[5] = {0.12f, 0.34f, 0.56f, 0.67f, 0.78f};
    run_lsh(1, hd, hash, 3, d522, in3d, w5, out, 3);
    assert_memory_equal(out, ((int32_t[]){0 + 2, 4 + 1, 8 + 1}), 12);
}

/* Sign bits restated from the definition with the verified fingerprint: for seed s, 1 when
 * sum_i w_i * (int64)Fingerprint64(s bytes ++ item i bytes) > 0. */
static int ref_bit(float seed, const int32_t *items, int n_items, int per_item, const float *w)
{
    double score = 0;
    for (int i = 0; i < n_items; i++) {
        uint8_t key[64];
        memcpy(key, &seed, 4);
        memcpy(key + 4, items + i * per_item, 4 * (size_t)per_item);
        const double v = (double)(int64_t)mp_fingerprint64(key, 4 + 4 * (size_t)per_item);
        score += w ? (double)w[i] * v : v;
    }
    return score > 0;
}

static void test_lsh_reference(void **state)
{
    (void)state;
    /* 4 hash functions of 3 bits on 3 items of 10 int32 (44-byte keys: the 33..64 branch) */
    const int32_t hd[2] = {4, 3}, id[2] = {3, 10};
    float hash[12], w[3] = {0.5f, -2.0f, 1.25f};
    int32_t items[30], dense[12], sparse[4];
    for (int i = 0; i < 12; i++)
        hash[i] = 0.37f * (float)i - 1.9f;
    for (int i = 0; i < 30; i++)
        items[i] = i * 7919 - 100000;
    run_lsh(2, hd, hash, 2, id, items, w, dense, 12);
    run_lsh(1, hd, hash, 2, id, items, w, sparse, 4);
    for (int h = 0; h < 4; h++) {
        int sig = 0;
        for (int b = 0; b < 3; b++) {
            const int bit = ref_bit(hash[h * 3 + b], items, 3, 10, w);
            assert_int_equal(dense[h * 3 + b], bit);
            sig = sig * 2 + bit;
        }
        assert_int_equal(sparse[h], sig + h * 8);
    }
}

static void test_lsh_errors(void **state)
{
    (void)state;
    kh_case c;
    const int32_t d6 = 6, hd[2] = {1, 33}, d2 = 2, d3 = 3;
    kh_init(&c, MP_OP_LSH_PROJECTION, NULL);
    c.opt.lsh_type = 1;
    kh_input(&c, MP_DT_FLOAT32, 1, &d6, NULL);
    kh_input(&c, MP_DT_INT32, 1, &d2, NULL);
    kh_output(&c, MP_DT_INT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "has rank 1; expected 2");
    kh_free(&c);
    kh_init(&c, MP_OP_LSH_PROJECTION, NULL);
    c.opt.lsh_type = 2;
    kh_input(&c, MP_DT_FLOAT32, 2, hd, NULL);
    kh_input(&c, MP_DT_INT32, 1, &d2, NULL);
    kh_output(&c, MP_DT_INT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "asks 33 bits per function; at most 32");
    kh_free(&c);
    const int32_t h2[2] = {2, 2};
    kh_init(&c, MP_OP_LSH_PROJECTION, NULL);
    c.opt.lsh_type = 1;
    kh_input(&c, MP_DT_FLOAT32, 2, h2, NULL);
    kh_input(&c, MP_DT_INT32, 1, &d2, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, &d3, NULL);
    kh_output(&c, MP_DT_INT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "has 3 entries; input 't1' has 2 items");
    kh_free(&c);
    kh_init(&c, MP_OP_LSH_PROJECTION, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, h2, NULL);
    kh_input(&c, MP_DT_INT32, 1, &d2, NULL);
    kh_output(&c, MP_DT_INT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "projection type 0 is not SPARSE (1) or DENSE (2)");
    kh_free(&c);
}

/* ---- HASHTABLE_LOOKUP ------------------------------------------------------------------- */

static void test_hashtable_lookup(void **state)
{
    (void)state;
    kh_case c;
    const int32_t d4 = 4, dv[2] = {4, 2};
    const int32_t keys[4] = {1, 3, 5, 7}, look[4] = {3, 4, 7, -1};
    const float values[8] = {10, 11, 30, 31, 50, 51, 70, 71};
    kh_init(&c, MP_OP_HASHTABLE_LOOKUP, NULL);
    kh_input(&c, MP_DT_INT32, 1, &d4, look);
    kh_input(&c, MP_DT_INT32, 1, &d4, keys);
    kh_input(&c, MP_DT_FLOAT32, 2, dv, values);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32), *hits = kh_output(&c, MP_DT_UINT8);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->dims[0], 4);
    assert_int_equal(out->dims[1], 2);
    assert_memory_equal(out->data, ((float[]){30, 31, 0, 0, 70, 71, 0, 0}), 32);
    assert_memory_equal(hits->data, ((uint8_t[]){1, 0, 1, 0}), 4);
    kh_free(&c);
    /* string values: a miss is the empty string */
    const int32_t d3 = 3, skeys[3] = {1, 2, 3}, slook[3] = {2, 9, 1};
    const char *const words[3] = {"one", "two", "three"};
    uint8_t buf[64];
    kh_init(&c, MP_OP_HASHTABLE_LOOKUP, NULL);
    kh_input(&c, MP_DT_INT32, 1, &d3, slook);
    kh_input(&c, MP_DT_INT32, 1, &d3, skeys);
    string_input(&c, 1, &d3, buf, sizeof buf, 3, words);
    out = kh_output(&c, MP_DT_STRING);
    hits = kh_output(&c, MP_DT_UINT8);
    kh_expect_ok(&c, kh_run(&c));
    kh_expect_strings(out->data, out->bytes, 3, (const char *const[]){"two", "", "one"});
    assert_memory_equal(hits->data, ((uint8_t[]){1, 0, 1}), 3);
    kh_free(&c);
    /* refusals: keys of another dtype, values with a row count of their own */
    kh_init(&c, MP_OP_HASHTABLE_LOOKUP, NULL);
    kh_input(&c, MP_DT_INT32, 1, &d4, look);
    kh_input(&c, MP_DT_INT64, 1, &d4, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, dv, values);
    kh_output(&c, MP_DT_FLOAT32);
    kh_output(&c, MP_DT_UINT8);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "keys 't1' is i64; expected i32");
    kh_free(&c);
    kh_init(&c, MP_OP_HASHTABLE_LOOKUP, NULL);
    kh_input(&c, MP_DT_INT32, 1, &d4, look);
    kh_input(&c, MP_DT_INT32, 1, &d3, skeys);
    kh_input(&c, MP_DT_FLOAT32, 2, dv, values);
    kh_output(&c, MP_DT_FLOAT32);
    kh_output(&c, MP_DT_UINT8);
    kh_expect_error(&c, MP_ERR_SHAPE, "must have one row per key (3)");
    kh_free(&c);
}

/* ---- SKIP_GRAM -------------------------------------------------------------------------- */

static void run_skip_gram(const char *sentence, int32_t ngram, int32_t skip, bool all, int n,
                          const char *const *want)
{
    kh_case c;
    uint8_t buf[256];
    const int32_t d1 = 1;
    kh_init(&c, MP_OP_SKIP_GRAM, NULL);
    c.opt.ngram_size = ngram;
    c.opt.max_skip_size = skip;
    c.opt.include_all_ngrams = all;
    string_input(&c, 1, &d1, buf, sizeof buf, 1, &sentence);
    mp_tensor *out = kh_output(&c, MP_DT_STRING);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->rank, 1);
    assert_int_equal(out->dims[0], n);
    kh_expect_strings(out->data, out->bytes, n, want);
    kh_free(&c);
}

static void test_skip_gram(void **state)
{
    (void)state;
    const char *s = "The quick brown fox jumps";
    /* trigrams without skips: the three runs of three words */
    run_skip_gram(s, 3, 0, false, 3,
                  (const char *const[]){"The quick brown", "quick brown fox", "brown fox jumps"});
    /* bigrams skipping at most one word, from each first word in turn, nearest second first */
    run_skip_gram(s, 2, 1, false, 7,
                  (const char *const[]){"The quick", "The brown", "quick brown", "quick fox",
                                        "brown fox", "brown jumps", "fox jumps"});
    /* all n-grams up to 2: a gram after the longer ones that extend it */
    run_skip_gram("a b  c", 2, 0, true, 5, (const char *const[]){"a b", "a", "b c", "b", "c"});
    /* fewer words than ngram_size: nothing */
    run_skip_gram("only two", 3, 2, true, 0, NULL);
    /* tabs and newlines split words too; a word after leading white space is dropped, as
     * TensorFlow Lite's split drops it (it keeps a word only when it starts on a non-space
     * and looks for ends from position 1): words "y", "z" */
    run_skip_gram(" x\ty\nz", 2, 0, false, 1, (const char *const[]){"y z"});
    run_skip_gram("x\ty\nz", 2, 0, false, 2, (const char *const[]){"x y", "y z"});
}

static void test_skip_gram_errors(void **state)
{
    (void)state;
    kh_case c;
    uint8_t buf[64];
    const int32_t d1 = 1, d2 = 2;
    const char *s = "a b";
    kh_init(&c, MP_OP_SKIP_GRAM, NULL);
    c.opt.ngram_size = 0;
    string_input(&c, 1, &d1, buf, sizeof buf, 1, &s);
    kh_output(&c, MP_DT_STRING);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "ngram_size 0 / max_skip_size 0 is not valid");
    kh_free(&c);
    kh_init(&c, MP_OP_SKIP_GRAM, NULL);
    c.opt.ngram_size = 1;
    kh_input(&c, MP_DT_INT32, 1, &d1, NULL);
    kh_output(&c, MP_DT_STRING);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "expected strings");
    kh_free(&c);
    /* a buffer whose count disagrees with the shape, and one whose offsets leave it */
    kh_init(&c, MP_OP_SKIP_GRAM, NULL);
    c.opt.ngram_size = 1;
    string_input(&c, 1, &d2, buf, sizeof buf, 1, &s);
    kh_output(&c, MP_DT_STRING);
    kh_expect_error(&c, MP_ERR_FORMAT, "holds 1 strings in 15 bytes; its shape has 2");
    kh_free(&c);
    kh_init(&c, MP_OP_SKIP_GRAM, NULL);
    c.opt.ngram_size = 1;
    mp_tensor *t = string_input(&c, 1, &d1, buf, sizeof buf, 1, &s);
    const int32_t far = 1000;
    memcpy(buf + 8, &far, 4);
    kh_output(&c, MP_DT_STRING);
    kh_expect_error(&c, MP_ERR_FORMAT, "offset 1 is 1000");
    (void)t;
    kh_free(&c);
}

/* ---- EMBEDDING_LOOKUP_SPARSE ------------------------------------------------------------ */

static const float k_params[8] = {1, 2, 3, 4, 5, 6, 7, 8}; /* 4 rows of 2 */

/* TensorFlow Lite's documented example: [0,0] id 1 w 2, [0,1] id 3 w 0.5, [1,0] id 0 w 1,
 * [2,3] id 1 w 3, dense shape [3, 4]. */
static mp_status run_els(kh_case *cp, int combiner, const int32_t *ids,
                         const int32_t *dense_shape, float *out)
{
    kh_case c_, *pc = cp ? cp : &c_;
#define c (*pc)
    const int32_t d4 = 4, di[2] = {4, 2}, d2 = 2, dp[2] = {4, 2};
    static const int32_t idx[8] = {0, 0, 0, 1, 1, 0, 2, 3};
    static const float w[4] = {2.0f, 0.5f, 1.0f, 3.0f};
    kh_init(&c, MP_OP_EMBEDDING_LOOKUP_SPARSE, NULL);
    c.opt.combiner = combiner;
    kh_input(&c, MP_DT_INT32, 1, &d4, ids);
    kh_input(&c, MP_DT_INT32, 2, di, idx);
    kh_input(&c, MP_DT_INT32, 1, &d2, dense_shape);
    kh_input(&c, MP_DT_FLOAT32, 1, &d4, w);
    kh_input(&c, MP_DT_FLOAT32, 2, dp, k_params);
    mp_tensor *o = kh_output(&c, MP_DT_FLOAT32);
    mp_status st = kh_run(&c);
    if (st == MP_OK) {
        assert_int_equal(o->rank, 2);
        assert_int_equal(o->dims[0], 3);
        assert_int_equal(o->dims[1], 2);
        memcpy(out, o->data, 24);
    }
#undef c
    if (!cp)
        kh_free(pc);
    return st;
}

static void test_els_combiners(void **state)
{
    (void)state;
    const int32_t ids[4] = {1, 3, 0, 1}, ds[2] = {3, 4};
    float out[6];
    /* SUM: row 0 = 2 * [3, 4] + 0.5 * [7, 8]; row 1 = [1, 2]; row 2 = 3 * [3, 4] */
    assert_int_equal(run_els(NULL, 0, ids, ds, out), MP_OK);
    assert_memory_equal(out, ((float[]){9.5f, 12, 1, 2, 9, 12}), 24);
    /* MEAN: divided by the weights' sums 2.5, 1 and 3 */
    assert_int_equal(run_els(NULL, 1, ids, ds, out), MP_OK);
    const float mean[6] = {9.5f / 2.5f, 12 / 2.5f, 1, 2, 3, 4};
    kh_expect_close(out, mean, 6, 1);
    /* SQRTN: by the roots of the squares' sums 4.25, 1 and 9 */
    assert_int_equal(run_els(NULL, 2, ids, ds, out), MP_OK);
    const float r = sqrtf(4.25f);
    const float sqrtn[6] = {9.5f / r, 12 / r, 1, 2, 3, 4};
    kh_expect_close(out, sqrtn, 6, 1);
}

static void test_els_errors(void **state)
{
    (void)state;
    kh_case c;
    float out[6];
    const int32_t ds[2] = {3, 4};
    /* an id outside the params' rows, an index outside the dense shape: refused at run */
    assert_int_equal(run_els(&c, 0, (const int32_t[]){1, 4, 0, 1}, ds, out), MP_ERR_ARG);
    kh_expect_fail(&c, MP_ERR_ARG, MP_ERR_ARG, "id 4 (entry 1) is outside [0, 4)");
    kh_free(&c);
    assert_int_equal(run_els(&c, 0, (const int32_t[]){1, 3, 0, 1}, (const int32_t[]){2, 4}, out),
                     MP_ERR_ARG);
    kh_expect_fail(&c, MP_ERR_ARG, MP_ERR_ARG,
                   "index 2 of entry 3 (coordinate 0) is outside [0, 2)");
    kh_free(&c);
    /* dense_shape with an entry too many for the indices' coordinates */
    const int32_t d4 = 4, di[2] = {4, 2}, d3 = 3, dp[2] = {4, 2};
    kh_init(&c, MP_OP_EMBEDDING_LOOKUP_SPARSE, NULL);
    kh_input(&c, MP_DT_INT32, 1, &d4, NULL);
    kh_input(&c, MP_DT_INT32, 2, di, NULL);
    kh_input(&c, MP_DT_INT32, 1, &d3, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, &d4, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, dp, k_params);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "has 3 entries; indices have 2 coordinates");
    kh_free(&c);
    /* dense_shape not known before running: deferred */
    const int32_t d2 = 2;
    kh_init(&c, MP_OP_EMBEDDING_LOOKUP_SPARSE, NULL);
    kh_input(&c, MP_DT_INT32, 1, &d4, NULL);
    kh_input(&c, MP_DT_INT32, 2, di, NULL);
    kh_input(&c, MP_DT_INT32, 1, &d2, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, &d4, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, dp, k_params);
    kh_output(&c, MP_DT_FLOAT32);
    assert_int_equal(kh_run(&c), MP_ERR_DEFERRED);
    kh_free(&c);
}

/* ---- options: written, read back, refused ----------------------------------------------- */

/* A one-operator model of opcode with options o on the given tensors. */
static void *one_op_model(int opcode, const mp_op_options *o, size_t *size)
{
    mp_tfw *w = mp_tfw_create();
    const int32_t d1 = 1, hd[2] = {1, 2};
    int t0, t1, t2;
    if (opcode == MP_OP_LSH_PROJECTION) {
        t0 = mp_tfw_tensor(w, "hash", MP_DT_FLOAT32, 2, hd, 0, NULL);
        t1 = mp_tfw_tensor(w, "x", MP_DT_INT32, 1, &d1, 0, NULL);
        t2 = mp_tfw_tensor(w, "y", MP_DT_INT32, 1, &d1, 0, NULL);
        mp_tfw_op(w, opcode, 2, (int32_t[]){t0, t1}, 1, &t2, o);
        mp_tfw_io(w, 2, (int32_t[]){t0, t1}, 1, &t2);
    } else {
        t0 = mp_tfw_tensor(w, "x", MP_DT_STRING, 1, &d1, 0, NULL);
        t1 = mp_tfw_tensor(w, "y", MP_DT_STRING, 1, &d1, 0, NULL);
        mp_tfw_op(w, opcode, 1, &t0, 1, &t1, o);
        mp_tfw_io(w, 1, &t0, 1, &t1);
    }
    mp_test_model built = mp_test_tfw_finish(w);
    *size = built.size;
    return built.bytes;
}

static mp_status load_one(int opcode, const mp_op_options *o, mp_model **m, mp_error *err)
{
    size_t size;
    void *bytes = one_op_model(opcode, o, &size);
    mp_status st = mp_model_load_memory(bytes, size, "opt", m, err);
    free(bytes);
    return st;
}

static void test_options_round_trip(void **state)
{
    (void)state;
    mp_model *m = NULL;
    mp_error err = {0};
    mp_op_options o = mp_tfw_options_default();
    o.lsh_type = 2;
    assert_int_equal(load_one(MP_OP_LSH_PROJECTION, &o, &m, &err), MP_OK);
    assert_int_equal(m->ops[0].opt.lsh_type, 2);
    mp_model_free(m);
    o = mp_tfw_options_default();
    o.ngram_size = 3;
    o.max_skip_size = 2;
    o.include_all_ngrams = true;
    assert_int_equal(load_one(MP_OP_SKIP_GRAM, &o, &m, &err), MP_OK);
    assert_int_equal(m->ops[0].opt.ngram_size, 3);
    assert_int_equal(m->ops[0].opt.max_skip_size, 2);
    assert_true(m->ops[0].opt.include_all_ngrams);
    mp_model_free(m);
    /* refusals: LSH type UNKNOWN (the default), a SkipGram of ngram_size 0 */
    o = mp_tfw_options_default();
    assert_int_equal(load_one(MP_OP_LSH_PROJECTION, &o, &m, &err), MP_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "type 0 is not valid (SPARSE or DENSE)"));
    o.ngram_size = 0;
    o.max_skip_size = 1;
    assert_int_equal(load_one(MP_OP_SKIP_GRAM, &o, &m, &err), MP_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "ngram_size 0 / max_skip_size 1 is not valid"));
}

/* ---- one model in a session ------------------------------------------------------------- */

/* ids (input) -> EMBEDDING_LOOKUP_SPARSE (MEAN) and HASHTABLE_LOOKUP of the same ids in
 * sorted keys; x (input) -> LSH_PROJECTION (DENSE); a constant sentence -> SKIP_GRAM. */
static void *text_model(size_t *size)
{
    mp_tfw *w = mp_tfw_create();
    const int32_t d4 = 4, di[2] = {4, 2}, d2 = 2, dp[2] = {4, 2}, hd[2] = {2, 3}, d3 = 3;
    static const int32_t idx[8] = {0, 0, 0, 1, 1, 0, 2, 3}, ds[2] = {3, 4};
    static const float wt[4] = {2.0f, 0.5f, 1.0f, 3.0f};
    static const float hash[6] = {0.5f, -1.5f, 2.25f, 3.0f, -0.75f, 9.0f};
    static const int32_t keys[3] = {0, 1, 3};
    static const float vals[6] = {100, 101, 110, 111, 130, 131};
    uint8_t sent[64];
    const char *s = "to be or not";
    const size_t sb = kh_pack_strings(sent, sizeof sent, 1, &s);
    const int32_t dv[2] = {3, 2}, d1 = 1;
    int ids = mp_tfw_tensor(w, "ids", MP_DT_INT32, 1, &d4, 0, NULL);
    int x = mp_tfw_tensor(w, "x", MP_DT_INT32, 1, &d3, 0, NULL);
    int ix = mp_tfw_tensor(w, "indices", MP_DT_INT32, 2, di, mp_tfw_buffer(w, idx, 32), NULL);
    int dsh = mp_tfw_tensor(w, "dense_shape", MP_DT_INT32, 1, &d2, mp_tfw_buffer(w, ds, 8), NULL);
    int wts = mp_tfw_tensor(w, "weights", MP_DT_FLOAT32, 1, &d4, mp_tfw_buffer(w, wt, 16), NULL);
    int par = mp_tfw_tensor(w, "params", MP_DT_FLOAT32, 2, dp, mp_tfw_buffer(w, k_params, 32),
                            NULL);
    int hs = mp_tfw_tensor(w, "hash", MP_DT_FLOAT32, 2, hd, mp_tfw_buffer(w, hash, 24), NULL);
    int ks = mp_tfw_tensor(w, "keys", MP_DT_INT32, 1, &d3, mp_tfw_buffer(w, keys, 12), NULL);
    int vs = mp_tfw_tensor(w, "values", MP_DT_FLOAT32, 2, dv, mp_tfw_buffer(w, vals, 24), NULL);
    int st = mp_tfw_tensor(w, "sentence", MP_DT_STRING, 1, &d1, mp_tfw_buffer(w, sent, sb), NULL);
    int emb = mp_tfw_tensor(w, "emb", MP_DT_FLOAT32, 2, (const int32_t[]){3, 2}, 0, NULL);
    int lk = mp_tfw_tensor(w, "lk", MP_DT_FLOAT32, 2, (const int32_t[]){4, 2}, 0, NULL);
    int hits = mp_tfw_tensor(w, "hits", MP_DT_UINT8, 1, &d4, 0, NULL);
    int lsh = mp_tfw_tensor(w, "lsh", MP_DT_INT32, 1, (const int32_t[]){6}, 0, NULL);
    int grams = mp_tfw_tensor(w, "grams", MP_DT_STRING, 1, &d1, 0, NULL);
    mp_op_options o = mp_tfw_options_default();
    o.combiner = 1;
    mp_tfw_op(w, MP_OP_EMBEDDING_LOOKUP_SPARSE, 5, (int32_t[]){ids, ix, dsh, wts, par}, 1, &emb,
              &o);
    mp_tfw_op(w, MP_OP_HASHTABLE_LOOKUP, 3, (int32_t[]){ids, ks, vs}, 2, (int32_t[]){lk, hits},
              NULL);
    o = mp_tfw_options_default();
    o.lsh_type = 2;
    mp_tfw_op(w, MP_OP_LSH_PROJECTION, 2, (int32_t[]){hs, x}, 1, &lsh, &o);
    o = mp_tfw_options_default();
    o.ngram_size = 2;
    o.max_skip_size = 1;
    mp_tfw_op(w, MP_OP_SKIP_GRAM, 1, &st, 1, &grams, &o);
    mp_tfw_io(w, 2, (int32_t[]){ids, x}, 5, (int32_t[]){emb, lk, hits, lsh, grams});
    mp_test_model built = mp_test_tfw_finish(w);
    *size = built.size;
    return built.bytes;
}

static void run_text_model(mp_memory_mode mode, void *out[5], size_t sizes[5])
{
    size_t size;
    void *bytes = text_model(&size);
    mp_session *s = kh_session(mode, bytes, size, "text");
    mp_error err = {0};
    const int32_t ids[4] = {1, 3, 0, 1}, x[3] = {7, -8, 9};
    for (int r = 0; r < 2; r++) {
        assert_int_equal(mp_session_set_input(s, 0, ids, sizeof ids, &err), MP_OK);
        assert_int_equal(mp_session_set_input(s, 1, x, sizeof x, &err), MP_OK);
        if (mp_session_run(s, &err) != MP_OK)
            fail_msg("run: %s", err.msg);
    }
    for (int i = 0; i < 5; i++) {
        const mp_tensor *t = mp_session_output(s, i);
        sizes[i] = t->bytes;
        out[i] = malloc(t->bytes + 1);
        memcpy(out[i], t->data, t->bytes);
    }
    const float mean[6] = {9.5f / 2.5f, 12 / 2.5f, 1, 2, 3, 4};
    kh_expect_close(out[0], mean, 6, 1);
    assert_memory_equal(out[1], ((float[]){110, 111, 130, 131, 100, 101, 110, 111}), 32);
    assert_memory_equal(out[2], ((uint8_t[]){1, 1, 1, 1}), 4);
    for (int h = 0; h < 2; h++)
        for (int b = 0; b < 3; b++) {
            static const float hash[6] = {0.5f, -1.5f, 2.25f, 3.0f, -0.75f, 9.0f};
            assert_int_equal(((int32_t *)out[3])[h * 3 + b], ref_bit(hash[h * 3 + b], x, 3, 1,
                                                                     NULL));
        }
    kh_expect_strings(out[4], sizes[4], 5,
                   (const char *const[]){"to be", "to or", "be or", "be not", "or not"});
    mp_session_destroy(s);
}

static void test_model_static_dynamic(void **state)
{
    (void)state;
    kh_expect_modes_equal(run_text_model, 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fingerprint),
        cmocka_unit_test(test_lsh_tflite_vectors),
        cmocka_unit_test(test_lsh_reference),
        cmocka_unit_test(test_lsh_errors),
        cmocka_unit_test(test_hashtable_lookup),
        cmocka_unit_test(test_skip_gram),
        cmocka_unit_test(test_skip_gram_errors),
        cmocka_unit_test(test_els_combiners),
        cmocka_unit_test(test_els_errors),
        cmocka_unit_test(test_options_round_trip),
        cmocka_unit_test(test_model_static_dynamic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
