/* Every model in ../shared/models either runs (finite outputs of the right shape) or is
 * refused cleanly: float, hybrid and quantized (int8 / uint8) models run unless an operator
 * is missing, and then the error names that operator; the three malformed models are
 * refused with the right status. Expectations come from
 * ../shared/models/MODELS.md, not from memprof's output. */
#include "tests/util/testutil.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model/reference_input.h"
#include "engine/session.h"

typedef enum { RUNS, NO_OPERATOR, BAD_FORMAT, BAD_CUSTOM } expect;

static const struct {
    const char *name;
    expect want;
    const char *ops; /* NO_OPERATOR: all the missing operators, each must be named */
} k_models[] = {
    {"alankrantas_mnist", RUNS, NULL},
    {"litert_mobilenet_like_model", RUNS, NULL},
    {"litert_simple_add_dynamic_shape", RUNS, NULL},
    {"litert_tfl_testdata_add", RUNS, NULL},
    {"litert_tfl_testdata_multi_add", RUNS, NULL},
    {"mpromonet_mnist", RUNS, NULL},
    {"tfex_add", RUNS, NULL},
    {"tfex_mobilenet_v2_035_96_embedder", RUNS, NULL},
    {"tfmicro_hello_world_float", RUNS, NULL},
    {"tfsupport_dilated_conv", RUNS, NULL},
    {"tfsupport_mobilenet_v1_0.25_224_float", RUNS, NULL},
    {"tiny_ad01_fp32", RUNS, NULL},
    {"tiny_ic_resnet8_float", RUNS, NULL},
    {"litert_torchaudio_conformer", RUNS, NULL},
    {"tfmicro_mnist_lstm_float", RUNS, NULL},
    {"coral_mobilenet_v1_0.25_128_quant", RUNS, NULL},
    {"litert_tfl_testdata_add_quantized", RUNS, NULL},
    {"litert_tfl_testdata_add_quantized_int8", RUNS, NULL},
    {"tfmicro_hello_world_int8", RUNS, NULL},
    {"tfmicro_person_detect_int8", RUNS, NULL},
    {"tfmicro_simple_add", RUNS, NULL},
    {"tfsupport_mobilenet_v1_0.25_224_quant", RUNS, NULL},
    {"tiny_ad01_int8", RUNS, NULL},
    {"tiny_ic_resnet8_quant", RUNS, NULL},
    {"coral_invalid_model_invoking_error", BAD_CUSTOM, NULL},
    {"litert_tfl_testdata_empty_model", BAD_FORMAT, NULL},
    {"litert_tfl_testdata_test_model_broken", BAD_FORMAT, NULL},
};

/* Load, prepare, set reference inputs, run. Returns the first failing status. */
static mp_status try_model(const char *path, mp_error *err, bool check_outputs)
{
    mp_session *s = NULL;
    mp_session_options so = {.threads = 1};
    assert_int_equal(mp_session_create(&so, &s, err), MP_OK);
    mp_status st = mp_session_load(s, path, err);
    if (st == MP_OK)
        st = mp_session_prepare(s, err);
    for (int k = 0; st == MP_OK && k < mp_session_input_count(s); k++) {
        const mp_tensor *t = mp_session_input(s, k);
        void *buf = malloc(t->bytes + 1);
        assert_true(mp_reference_input(buf, t->dtype, mp_tensor_elements(t), k));
        st = mp_session_set_input(s, k, buf, t->bytes, err);
        free(buf);
    }
    if (st == MP_OK)
        st = mp_session_run(s, err);
    if (st == MP_OK)
        st = mp_session_run(s, err); /* a second run must work too */
    if (st == MP_OK && check_outputs) {
        for (int j = 0; j < mp_session_output_count(s); j++) {
            const mp_tensor *t = mp_session_output(s, j);
            assert_true(t->bytes > 0);
            if (t->dtype == MP_DT_FLOAT32)
                for (size_t i = 0; i < mp_tensor_elements(t); i++)
                    if (!isfinite(((const float *)t->data)[i]))
                        fail_msg("%s: output %d element %zu is not finite", path, j, i);
        }
    }
    mp_session_destroy(s);
    return st;
}

static void test_shared_models(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof k_models / sizeof k_models[0]; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s.tflite", mp_test_path("models", k_models[i].name));
        mp_error err = {0};
        mp_status st = try_model(path, &err, true);
        printf("  %-40s %-12s %s\n", k_models[i].name, mp_status_name(st), st ? err.msg : "");
        switch (k_models[i].want) {
        case RUNS:
            if (st != MP_OK)
                fail_msg("%s should run: %s", k_models[i].name, err.msg);
            break;
        case NO_OPERATOR: {
            assert_int_equal(st, MP_ERR_UNSUPPORTED);
            assert_non_null(strstr(err.msg, k_models[i].name));
            /* the message names every operator of the model that memprof lacks */
            char ops[256];
            snprintf(ops, sizeof ops, "%s", k_models[i].ops);
            for (char *tok = strtok(ops, " "); tok; tok = strtok(NULL, " ")) {
                const char *at = strstr(err.msg, tok);
                size_t n = strlen(tok);
                bool word = at && at[-1] == ' ' && (at[n] == ',' || at[n] == 0);
                if (!word)
                    fail_msg("%s: refusal does not name missing operator %s: %s",
                             k_models[i].name, tok, err.msg);
            }
            break;
        }
        case BAD_CUSTOM:
            assert_int_equal(st, MP_ERR_UNSUPPORTED);
            assert_non_null(strstr(err.msg, "fake-op-double"));
            break;
        case BAD_FORMAT:
            assert_int_equal(st, MP_ERR_FORMAT);
            assert_non_null(strstr(err.msg, k_models[i].name));
            break;
        }
    }
}

/* The MNIST LSTM (no oracle): its SOFTMAX gives finite probabilities summing to 1. */
static void test_mnist_lstm_probabilities(void **state)
{
    (void)state;
    mp_session *s = NULL;
    mp_error err = {0};
    mp_session_options so = {.threads = 1};
    assert_int_equal(mp_session_create(&so, &s, &err), MP_OK);
    assert_int_equal(mp_session_load(s, mp_test_path("models", "tfmicro_mnist_lstm_float.tflite"),
                                     &err), MP_OK);
    assert_int_equal(mp_session_prepare(s, &err), MP_OK);
    const mp_tensor *in = mp_session_input(s, 0);
    void *buf = malloc(in->bytes + 1);
    assert_true(mp_reference_input(buf, in->dtype, mp_tensor_elements(in), 0));
    assert_int_equal(mp_session_set_input(s, 0, buf, in->bytes, &err), MP_OK);
    free(buf);
    assert_int_equal(mp_session_run(s, &err), MP_OK);
    const mp_tensor *out = mp_session_output(s, 0);
    assert_int_equal(mp_tensor_elements(out), 10);
    double sum = 0;
    for (int i = 0; i < 10; i++) {
        float p = ((const float *)out->data)[i];
        assert_true(isfinite(p) && p >= 0 && p <= 1);
        sum += p;
    }
    assert_true(fabs(sum - 1.0) < 1e-5);
    mp_session_destroy(s);
}

/* The movie-review classifier (GATHER of embeddings; no oracle): token ids set before each
 * of two runs (its input's bytes do not survive a run: the arena reuses them once GATHER has
 * read them), two probabilities summing to 1. */
static void test_movie_review_runs(void **state)
{
    (void)state;
    mp_session *s = NULL;
    mp_error err = {0};
    mp_session_options so = {.threads = 1};
    assert_int_equal(mp_session_create(&so, &s, &err), MP_OK);
    assert_int_equal(mp_session_load(s, mp_test_path("models", "tfsupport_movie_review.tflite"),
                                     &err), MP_OK);
    assert_int_equal(mp_session_prepare(s, &err), MP_OK);
    const mp_tensor *in = mp_session_input(s, 0);
    void *buf = malloc(in->bytes + 1);
    assert_true(mp_reference_input(buf, in->dtype, mp_tensor_elements(in), 0));
    for (int r = 0; r < 2; r++) {
        assert_int_equal(mp_session_set_input(s, 0, buf, in->bytes, &err), MP_OK);
        if (mp_session_run(s, &err) != MP_OK)
            fail_msg("%s", err.msg);
        const mp_tensor *out = mp_session_output(s, 0);
        const float *p = out->data;
        assert_int_equal(mp_tensor_elements(out), 2);
        assert_true(isfinite(p[0]) && isfinite(p[1]) && fabs(p[0] + p[1] - 1.0) < 1e-5);
    }
    free(buf);
    mp_session_destroy(s);
}

/* Models added to ../shared later: whatever they are, no crash and a clean status. */
static void test_every_file_is_handled(void **state)
{
    (void)state;
    DIR *d = opendir(mp_test_path("models", ""));
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 8 || strcmp(e->d_name + n - 7, ".tflite") != 0)
            continue;
        mp_error err = {0};
        mp_status st = try_model(mp_test_path("models", e->d_name), &err, false);
        assert_true(st == MP_OK || err.msg[0] != 0);
    }
    closedir(d);
}

int main(void)
{
    mp_test_require_shared();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shared_models),
        cmocka_unit_test(test_movie_review_runs),
        cmocka_unit_test(test_mnist_lstm_probabilities),
        cmocka_unit_test(test_every_file_is_handled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
