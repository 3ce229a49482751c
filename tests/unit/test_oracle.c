/* Numerical correctness against an independent engine: every model in ../shared/models that
 * has a folder in ../shared/oracle (Arm NN's reference backend) must reproduce the oracle
 * outputs: float models within a relative tolerance of 1e-4; quantized (int8 / uint8) models
 * within 2 least significant bits per element (Arm NN requantizes in float, TensorFlow Lite
 * and memprof in fixed point, so an exact match is not expected), with the share of elements
 * differing at all reported. Also checks that our reference input formula reproduces the
 * oracle's input files byte for byte. */
#include "tests/util/testutil.h"

#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model/reference_input.h"
#include "engine/session.h"

/* Tolerance: relative to the element, with a floor of 1e-3 of the output's largest
 * magnitude so that near-zero softmax probabilities compare on an absolute scale. */
#define REL_TOL 1e-4
/* Quantized outputs: at most this many steps of the output's integer from the oracle's. */
#define LSB_TOL 2

/* What one model's outputs showed against the oracle. */
typedef struct oracle_diff {
    double worst_rel;          /* float outputs: largest relative error */
    long worst_lsb;            /* integer outputs: largest |got - oracle| */
    size_t differing, compared; /* integer outputs: elements that differ at all, of all */
} oracle_diff;

static long int_at(const mp_tensor *t, const void *data, size_t i)
{
    switch (t->dtype) {
    case MP_DT_INT8: return ((const int8_t *)data)[i];
    case MP_DT_UINT8: return ((const uint8_t *)data)[i];
    case MP_DT_INT16: return ((const int16_t *)data)[i];
    case MP_DT_INT32: return ((const int32_t *)data)[i];
    default: fail_msg("output '%s' has dtype %s", t->info->name, mp_dtype_name(t->dtype));
    }
    return 0;
}

/* Integer output j of model `name` against the oracle's: every element within LSB_TOL. */
static void compare_int(const char *name, int j, const mp_tensor *t, const void *want,
                        size_t size, oracle_diff *d)
{
    size_t n = size / mp_dtype_size(t->dtype);
    for (size_t i = 0; i < n; i++) {
        long got = int_at(t, t->data, i), w = int_at(t, want, i);
        long diff = labs(got - w);
        if (diff > LSB_TOL)
            fail_msg("%s output %d: element %zu is %ld, the oracle's %ld (more than %d LSB)",
                     name, j, i, got, w, LSB_TOL);
        d->worst_lsb = diff > d->worst_lsb ? diff : d->worst_lsb;
        d->differing += diff != 0;
    }
    d->compared += n;
}

/* Float output j against the oracle's: relative error within REL_TOL. */
static void compare_float(const char *name, int j, const mp_tensor *t, const float *want,
                          size_t size, oracle_diff *d)
{
    size_t n = size / sizeof(float), at = 0;
    double maxabs = 0;
    for (size_t i = 0; i < n; i++)
        maxabs = fmax(maxabs, fabs(want[i]));
    double e = mp_test_max_rel_err(t->data, want, n, fmax(maxabs * 1e-3, 1e-30), &at);
    if (!(e <= REL_TOL))
        fail_msg("%s output %d: relative error %.3g at element %zu (got %.9g, oracle %.9g)",
                 name, j, e, at, (double)((const float *)t->data)[at], (double)want[at]);
    d->worst_rel = fmax(d->worst_rel, e);
}

static void check_model(const char *name, int threads, oracle_diff *diff)
{
    char meta_path[4096], model_path[4096];
    snprintf(meta_path, sizeof meta_path, "%s", mp_test_path("oracle", name));
    strncat(meta_path, "/meta.json", sizeof meta_path - strlen(meta_path) - 1);
    snprintf(model_path, sizeof model_path, "%s", mp_test_path("models", name));
    strncat(model_path, ".tflite", sizeof model_path - strlen(model_path) - 1);

    json_error_t jerr;
    json_t *meta = json_load_file(meta_path, 0, &jerr);
    assert_non_null(meta);
    json_t *outs = json_object_get(meta, "outputs");
    json_t *ins = json_object_get(meta, "inputs");
    assert_true(json_is_array(outs) && json_is_array(ins));

    mp_session_options so = {.threads = threads};
    mp_session *s = NULL;
    mp_error err = {0};
    assert_int_equal(mp_session_create(&so, &s, &err), MP_OK);
    mp_status st = mp_session_load(s, model_path, &err);
    if (st != MP_OK)
        fail_msg("%s: load failed: %s", name, err.msg);
    st = mp_session_prepare(s, &err);
    if (st != MP_OK)
        fail_msg("%s: prepare failed: %s", name, err.msg);
    assert_int_equal(mp_session_input_count(s), (int)json_array_size(ins));
    for (int k = 0; k < mp_session_input_count(s); k++) {
        const mp_tensor *t = mp_session_input(s, k);
        char file[64];
        snprintf(file, sizeof file, "%s/input_%d.bin", name, k);
        size_t size = 0;
        void *want = mp_test_read_file(mp_test_path("oracle", file), &size);
        assert_non_null(want);
        assert_int_equal(size, t->bytes);
        void *mine = malloc(t->bytes);
        assert_true(mp_reference_input(mine, t->dtype, mp_tensor_elements(t), k));
        assert_memory_equal(mine, want, size); /* the formula, reproduced independently */
        assert_int_equal(mp_session_set_input(s, k, want, size, &err), MP_OK);
        free(mine);
        free(want);
    }
    st = mp_session_run(s, &err);
    if (st != MP_OK)
        fail_msg("%s: run failed: %s", name, err.msg);
    assert_int_equal(mp_session_output_count(s), (int)json_array_size(outs));
    for (int j = 0; j < mp_session_output_count(s); j++) {
        const mp_tensor *t = mp_session_output(s, j);
        json_t *o = json_array_get(outs, (size_t)j);
        json_t *shape = json_object_get(o, "shape");
        assert_int_equal(t->rank, (int)json_array_size(shape));
        for (int32_t d = 0; d < t->rank; d++)
            assert_int_equal(t->dims[d], json_integer_value(json_array_get(shape, (size_t)d)));
        char file[64];
        snprintf(file, sizeof file, "%s/output_%d.bin", name, j);
        size_t size = 0;
        void *want = mp_test_read_file(mp_test_path("oracle", file), &size);
        assert_non_null(want);
        assert_int_equal(size, t->bytes);
        if (t->dtype == MP_DT_FLOAT32)
            compare_float(name, j, t, want, size, diff);
        else
            compare_int(name, j, t, want, size, diff);
        free(want);
    }
    mp_session_destroy(s);
    json_decref(meta);
}

static bool is_float_oracle(const char *name)
{
    char meta_path[4096];
    snprintf(meta_path, sizeof meta_path, "%s/meta.json", mp_test_path("oracle", name));
    json_error_t jerr;
    json_t *meta = json_load_file(meta_path, 0, &jerr);
    if (!meta)
        return false;
    bool f = true;
    json_t *o;
    size_t i;
    json_array_foreach(json_object_get(meta, "outputs"), i, o)
        f &= strcmp(json_string_value(json_object_get(o, "dtype")), "float32") == 0;
    json_array_foreach(json_object_get(meta, "inputs"), i, o)
        f &= strcmp(json_string_value(json_object_get(o, "dtype")), "float32") == 0;
    json_decref(meta);
    return f;
}

/* Check every oracle folder whose model is float (float_models) or quantized (the others). */
static int check_oracles(bool float_models)
{
    DIR *d = opendir(mp_test_path("oracle", ""));
    if (!d)
        skip();
    struct dirent *e;
    int checked = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || strstr(e->d_name, ".md") ||
            is_float_oracle(e->d_name) != float_models)
            continue;
        for (int threads = 1; threads <= 2; threads++) {
            oracle_diff diff = {0};
            check_model(e->d_name, threads, &diff);
            if (float_models)
                printf("  %-45s threads %d  max relative error %.2e\n", e->d_name, threads,
                       diff.worst_rel);
            else
                printf("  %-45s threads %d  max %ld LSB, %zu of %zu elements differ (%.2f %%)\n",
                       e->d_name, threads, diff.worst_lsb, diff.differing, diff.compared,
                       100.0 * (double)diff.differing / (double)(diff.compared ? diff.compared : 1));
        }
        checked++;
    }
    closedir(d);
    return checked;
}

static void test_float_models_match_oracle(void **state)
{
    (void)state;
    /* MODELS.md lists 10 float32 models with an oracle folder */
    assert_true(check_oracles(true) >= 10);
}

static void test_quantized_models_match_oracle(void **state)
{
    (void)state;
    /* MODELS.md lists 6 int8 / uint8 models with an oracle folder */
    assert_true(check_oracles(false) >= 6);
}

int main(void)
{
    mp_test_require_shared();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_float_models_match_oracle),
        cmocka_unit_test(test_quantized_models_match_oracle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
