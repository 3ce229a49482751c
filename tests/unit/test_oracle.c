/* Numerical correctness against an independent engine: every float model in ../shared/models
 * that has a folder in ../shared/oracle (Arm NN's reference backend) must reproduce the
 * oracle outputs within a relative tolerance of 1e-4. Also checks that our reference input
 * formula reproduces the oracle's input files byte for byte. */
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

static void check_model(const char *name, int threads, double *worst_out)
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
        float *want = mp_test_read_file(mp_test_path("oracle", file), &size);
        assert_non_null(want);
        assert_int_equal(size, t->bytes);
        size_t n = size / sizeof(float), at = 0;
        double maxabs = 0;
        for (size_t i = 0; i < n; i++)
            maxabs = fmax(maxabs, fabs(want[i]));
        double e = mp_test_max_rel_err(t->data, want, n, fmax(maxabs * 1e-3, 1e-30), &at);
        if (!(e <= REL_TOL))
            fail_msg("%s output %d: relative error %.3g at element %zu (got %.9g, oracle %.9g)",
                     name, j, e, at, (double)((const float *)t->data)[at], (double)want[at]);
        if (e > *worst_out)
            *worst_out = e;
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

static void test_float_models_match_oracle(void **state)
{
    (void)state;
    DIR *d = opendir(mp_test_path("oracle", ""));
    if (!d)
        skip();
    struct dirent *e;
    int checked = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || strstr(e->d_name, ".md") || !is_float_oracle(e->d_name))
            continue;
        for (int threads = 1; threads <= 2; threads++) {
            double worst = 0;
            check_model(e->d_name, threads, &worst);
            printf("  %-45s threads %d  max relative error %.2e\n", e->d_name, threads, worst);
        }
        checked++;
    }
    closedir(d);
    /* MODELS.md lists 10 float32 models with an oracle folder */
    assert_true(checked >= 10);
}

int main(void)
{
    mp_test_require_shared();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_float_models_match_oracle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
