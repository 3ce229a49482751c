/* Tests of the engine's limits (engine/engine_limits.h): models built with the writer at a
 * limit are read, one past it are refused with MP_ERR_FORMAT and a one-line message naming
 * the limit, and memprof itself exits 4 on such a file. Every shared model is within the
 * limits. */
#include "tests/util/testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "engine/engine_limits.h"
#include "engine/model/model.h"
#include "engine/model/ops.h"
#include "engine/model/tflite_writer.h"

static int setup(void **state)
{
    (void)state;
    return mp_test_tmpdir_make("mp-test-limits");
}

static int teardown(void **state)
{
    (void)state;
    return mp_test_tmpdir_remove();
}

/* A model of n_ops operators without tensors (RELU, no inputs or outputs; the writer wants
 * one at least) and n_tensors float tensors of shape dims (rank given) beside one [1] input
 * and output; malloc'd bytes. */
static void *build(long n_ops, long n_tensors, int rank, const int32_t *dims, size_t *size)
{
    mp_tfw *w = mp_tfw_create();
    assert_non_null(w);
    int x = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 1, (int32_t[]){1}, 0, NULL);
    for (long i = 0; i < n_tensors; i++)
        mp_tfw_tensor(w, "", MP_DT_FLOAT32, rank, dims, 0, NULL);
    for (long i = 0; i < n_ops; i++)
        mp_tfw_op(w, MP_OP_RELU, 0, NULL, 0, NULL, NULL);
    mp_tfw_io(w, 1, &x, 1, &x);
    mp_test_model built = mp_test_tfw_finish(w);
    *size = built.size;
    return built.bytes;
}

/* Read the bytes; returns the status, with the message in err. */
static mp_status load(const void *bytes, size_t size, mp_error *err)
{
    mp_model *m = NULL;
    mp_status st = mp_model_load_memory(bytes, size, "limits.tflite", &m, err);
    mp_model_free(m);
    return st;
}

/* Refused as malformed, in one line that names the limit. */
static void assert_refused(const void *bytes, size_t size, const char *limit)
{
    mp_error err = {0};
    assert_int_equal(load(bytes, size, &err), MP_ERR_FORMAT);
    assert_non_null(strstr(err.msg, limit));
    assert_null(strchr(err.msg, '\n'));
}

static void test_operators(void **state)
{
    (void)state;
    size_t size;
    void *at = build(MP_MAX_OPS, 0, 0, NULL, &size);
    mp_error err = {0};
    assert_int_equal(load(at, size, &err), MP_OK);
    free(at);
    void *over = build(MP_MAX_OPS + 1L, 0, 0, NULL, &size);
    assert_refused(over, size, "MP_MAX_OPS");
    free(over);
}

static void test_tensors(void **state)
{
    (void)state;
    size_t size;
    /* x is one of them */
    void *at = build(1, MP_MAX_TENSORS - 1L, 1, (int32_t[]){1}, &size);
    mp_error err = {0};
    assert_int_equal(load(at, size, &err), MP_OK);
    free(at);
    void *over = build(1, MP_MAX_TENSORS, 1, (int32_t[]){1}, &size);
    assert_refused(over, size, "MP_MAX_TENSORS");
    free(over);
}

static void test_tensor_bytes(void **state)
{
    (void)state;
    /* float32: 4 bytes an element */
    int32_t at_limit = (int32_t)(MP_MAX_TENSOR_BYTES / 4);
    size_t size;
    void *at = build(1, 1, 1, (int32_t[]){at_limit}, &size);
    mp_error err = {0};
    assert_int_equal(load(at, size, &err), MP_OK);
    free(at);
    void *over = build(1, 1, 1, (int32_t[]){at_limit + 1}, &size);
    assert_refused(over, size, "MP_MAX_TENSOR_BYTES");
    free(over);
    /* far past it: 2^48 elements, whose bytes overflow 32 bits many times over */
    void *huge = build(1, 1, 3, (int32_t[]){65536, 65536, 65536}, &size);
    assert_refused(huge, size, "MP_MAX_TENSOR_BYTES");
    free(huge);
}

/* memprof exits 4 with one line on stderr naming the limit. */
static void test_cli_exit(void **state)
{
    (void)state;
    size_t size;
    void *over = build(MP_MAX_OPS + 1L, 0, 0, NULL, &size);
    const char *model = mp_test_tmp_path("over.tflite");
    mp_test_write_bytes(model, over, size);
    free(over);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s/memprof' plan '%s' >/dev/null 2>'%s'", MP_BINARY_DIR, model,
             mp_test_tmp_path("stderr.txt"));
    int rc = system(cmd);
    assert_true(WIFEXITED(rc));
    assert_int_equal(WEXITSTATUS(rc), 4);
    size_t n;
    char *text = mp_test_read_file(mp_test_tmp_path("stderr.txt"), &n);
    assert_non_null(text);
    char *nl = memchr(text, '\n', n);
    assert_non_null(nl);
    assert_true(nl == text + n - 1); /* one line */
    assert_non_null(strstr(text, "MP_MAX_OPS"));
    free(text);
}

/* Every shared model is read: the limits leave room for real models. */
static void test_shared_models_within(void **state)
{
    (void)state;
    if (!mp_test_shared_dir()) {
        printf("SKIP: no shared models\n");
        skip();
    }
    char **names = NULL;
    int n = mp_test_shared_model_names(&names);
    for (int i = 0; i < n; i++) {
        mp_model *m = NULL;
        mp_error err = {0};
        if (mp_model_load_file(mp_test_path("models", names[i]), &m, &err) != MP_OK)
            assert_null(strstr(err.msg, "MP_MAX_"));
        mp_model_free(m);
    }
    mp_test_free_names(names, n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_operators),
        cmocka_unit_test(test_tensors),
        cmocka_unit_test(test_tensor_bytes),
        cmocka_unit_test(test_cli_exit),
        cmocka_unit_test(test_shared_models_within),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
