/* The trainer as a whole: SGD and Adam steps against updates computed by hand on a one-weight
 * fully connected model; training zoo:mnist_mlp lowers the loss in every memory policy, with
 * the invariants of the memory figures (planned >= the live-set lower bound, held >= planned,
 * every byte allocated freed, a planned step allocating nothing); the model written back runs
 * in an inference session and gives the trainer's outputs. */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model/tflite_writer.h"
#include "engine/session.h"
#include "engine/train/train.h"

/* y = x . W^T + b with W = [0.5, -0.25], b = 0.1, one input of 2. */
static mp_model *fc_model(void)
{
    mp_tfw *w = mp_tfw_create();
    float W[2] = {0.5f, -0.25f}, b[1] = {0.1f};
    int x = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 2, (int32_t[]){1, 2}, 0, NULL);
    int wt = mp_tfw_tensor(w, "w", MP_DT_FLOAT32, 2, (int32_t[]){1, 2},
                           mp_tfw_buffer(w, W, sizeof W), NULL);
    int bt = mp_tfw_tensor(w, "b", MP_DT_FLOAT32, 1, (int32_t[]){1},
                           mp_tfw_buffer(w, b, sizeof b), NULL);
    int y = mp_tfw_tensor(w, "y", MP_DT_FLOAT32, 2, (int32_t[]){1, 1}, 0, NULL);
    mp_tfw_op(w, MP_OP_FULLY_CONNECTED, 3, (int32_t[]){x, wt, bt}, 1, &y, NULL);
    mp_tfw_io(w, 1, &x, 1, &y);
    void *bytes;
    size_t size;
    mp_error err;
    assert_int_equal(mp_tfw_finish(w, &bytes, &size, &err), MP_OK);
    mp_tfw_free(w);
    mp_model *m;
    assert_int_equal(mp_model_load_memory(bytes, size, "fc", &m, &err), MP_OK);
    free(bytes);
    return m;
}

static void set_data(mp_trainer *t)
{
    size_t n;
    float *x = mp_trainer_input(t, 0, &n);
    x[0] = 1.0f, x[1] = 2.0f;
    mp_trainer_labels(t, &n)[0] = 1.0f;
}

static void test_sgd_step(void **state)
{
    (void)state;
    mp_model *m = fc_model();
    mp_train_options o = {.batch = 1, .loss = MP_LOSS_MSE, .optimizer = MP_OPTIM_SGD,
                          .learning_rate = 0.1f, .threads = 1};
    mp_trainer *t;
    mp_error err;
    assert_int_equal(mp_trainer_create(m, "fc", &o, &t, &err), MP_OK);
    set_data(t);
    double L;
    assert_int_equal(mp_trainer_step(t, &L, &err), MP_OK);
    /* y = 0.5 - 0.5 + 0.1 = 0.1; L = 0.81; dL/dy = -1.8; dW = -1.8 x; db = -1.8 */
    assert_float_equal(L, 0.81, 1e-6);
    size_t n;
    const float *W = mp_trainer_value(t, 1, &n), *b = mp_trainer_value(t, 2, &n);
    assert_float_equal(W[0], 0.5 + 0.1 * 1.8, 1e-6);
    assert_float_equal(W[1], -0.25 + 0.1 * 3.6, 1e-6);
    assert_float_equal(b[0], 0.1 + 0.1 * 1.8, 1e-6);
    mp_trainer_destroy(t);
    mp_model_free(m);
}

static void adam(double *w, double *m, double *v, double g, int k)
{
    double b1 = 0.9, b2 = 0.999, eps = 1e-7, lr = 0.1;
    *m = b1 * *m + (1 - b1) * g;
    *v = b2 * *v + (1 - b2) * g * g;
    double lr_t = lr * sqrt(1 - pow(b2, k)) / (1 - pow(b1, k));
    *w -= lr_t * *m / (sqrt(*v) + eps);
}

static void test_adam_steps(void **state)
{
    (void)state;
    mp_model *m = fc_model();
    mp_train_options o = {.batch = 1, .loss = MP_LOSS_MSE, .optimizer = MP_OPTIM_ADAM,
                          .learning_rate = 0.1f, .threads = 1};
    mp_trainer *t;
    mp_error err;
    assert_int_equal(mp_trainer_create(m, "fc", &o, &t, &err), MP_OK);
    set_data(t);
    double w[3] = {0.5, -0.25, 0.1}, mm[3] = {0}, vv[3] = {0}, x[2] = {1, 2};
    for (int k = 1; k <= 3; k++) {
        double y = w[0] * x[0] + w[1] * x[1] + w[2], gy = 2 * (y - 1.0), L;
        assert_int_equal(mp_trainer_step(t, &L, &err), MP_OK);
        assert_float_equal(L, (y - 1) * (y - 1), 1e-5);
        adam(&w[0], &mm[0], &vv[0], gy * x[0], k);
        adam(&w[1], &mm[1], &vv[1], gy * x[1], k);
        adam(&w[2], &mm[2], &vv[2], gy, k);
        size_t n;
        const float *W = mp_trainer_value(t, 1, &n), *b = mp_trainer_value(t, 2, &n);
        assert_float_equal(W[0], w[0], 1e-5);
        assert_float_equal(W[1], w[1], 1e-5);
        assert_float_equal(b[0], w[2], 1e-5);
    }
    mp_trainer_destroy(t);
    mp_model_free(m);
}

static uint32_t g_s = 99;
static float rnd(void)
{
    g_s = g_s * 1664525u + 1013904223u;
    return (float)(g_s >> 8) / 16777216.0f * 2.0f - 1.0f;
}

/* Train zoo:mnist_mlp on one random batch: the loss falls; the figures hold their invariants;
 * the trace balances; a planned step allocates nothing. */
static void train_mnist(mp_train_policy policy)
{
    mp_model *m;
    mp_error err;
    assert_int_equal(mp_model_open("zoo:mnist_mlp", &m, &err), MP_OK);
    mp_trace *tr = mp_trace_create();
    mp_train_options o = {.batch = 8, .loss = MP_LOSS_CCE, .optimizer = MP_OPTIM_ADAM,
                          .learning_rate = 0.01f, .threads = 1, .policy = policy, .trace = tr};
    mp_trainer *t;
    assert_int_equal(mp_trainer_create(m, "zoo:mnist_mlp", &o, &t, &err), MP_OK);
    size_t n;
    float *x = mp_trainer_input(t, 0, &n);
    for (size_t i = 0; i < n; i++)
        x[i] = rnd();
    float *lab = mp_trainer_labels(t, &n);
    memset(lab, 0, n * sizeof *lab);
    for (size_t r = 0; r < 8; r++)
        lab[r * 10 + (r * 7) % 10] = 1.0f;
    double before, after, L;
    assert_int_equal(mp_trainer_eval(t, &before, &err), MP_OK);
    for (int k = 0; k < 15; k++)
        assert_int_equal(mp_trainer_step(t, &L, &err), MP_OK);
    assert_int_equal(mp_trainer_eval(t, &after, &err), MP_OK);
    assert_true(after < 0.5 * before);
    mp_train_memory mem;
    assert_int_equal(mp_trainer_memory(t, &mem, &err), MP_OK);
    assert_true(mem.arena >= mem.lower_bound);
    assert_true(mem.planned_total >= mem.persistent + mem.lower_bound);
    assert_true(mem.held_total >= mem.planned_total);
    uint64_t sum = 0;
    for (int c = 0; c < MP_TCAT_COUNT; c++)
        sum += mem.held[c];
    assert_int_equal(sum, mem.held_total);
    /* 784 x 128 + 128 + 128 x 10 + 10 floats, each tensor rounded up to 64 bytes */
    assert_int_equal(mem.held[MP_TCAT_TRAINABLE], 401408 + 512 + 5120 + 64);
    assert_int_equal(mem.held[MP_TCAT_OPTIMIZER], 2 * (401408 + 512 + 5120 + 64));
    mp_trainer_destroy(t);
    /* every byte allocated was freed; in planned mode no allocation inside a step */
    const mp_event *ev = mp_trace_events(tr);
    int64_t live = 0, in_run = 0, run_allocs = 0;
    for (size_t i = 0; i < mp_trace_count(tr); i++) {
        if (ev[i].type == MP_EV_PHASE_BEGIN)
            in_run = ev[i].aux == MP_PHASE_RUN;
        if (ev[i].type == MP_EV_PHASE_END)
            in_run = 0;
        if (ev[i].type == MP_EV_ALLOC) {
            live += (int64_t)ev[i].bytes;
            run_allocs += in_run;
        }
        if (ev[i].type == MP_EV_FREE)
            live -= (int64_t)ev[i].bytes;
        if (ev[i].type == MP_EV_REALLOC)
            live += (int64_t)ev[i].bytes - (int64_t)ev[i].aux;
    }
    assert_int_equal(live, 0);
    if (policy != MP_TRAIN_DYNAMIC)
        assert_int_equal(run_allocs, 0);
    else
        assert_true(run_allocs > 0);
    mp_trace_destroy(tr);
    mp_model_free(m);
}

static void test_mnist_planned(void **state)
{
    (void)state;
    train_mnist(MP_TRAIN_PLANNED);
}

static void test_mnist_held_dynamic(void **state)
{
    (void)state;
    train_mnist(MP_TRAIN_HELD);
    train_mnist(MP_TRAIN_DYNAMIC);
}

/* The written model, run by an inference session, gives the trainer's output. */
static void test_written_model(void **state)
{
    (void)state;
    mp_model *m;
    mp_error err;
    assert_int_equal(mp_model_open("zoo:mnist_mlp", &m, &err), MP_OK);
    mp_train_options o = {.batch = 2, .loss = MP_LOSS_CCE, .optimizer = MP_OPTIM_SGD,
                          .learning_rate = 0.05f, .threads = 1, .trainable_ops = 2};
    mp_trainer *t;
    assert_int_equal(mp_trainer_create(m, "zoo:mnist_mlp", &o, &t, &err), MP_OK);
    size_t n;
    float *x = mp_trainer_input(t, 0, &n);
    for (size_t i = 0; i < n; i++)
        x[i] = rnd();
    float *lab = mp_trainer_labels(t, &n);
    lab[3] = lab[17] = 1.0f;
    double L;
    for (int k = 0; k < 3; k++)
        assert_int_equal(mp_trainer_step(t, &L, &err), MP_OK);
    assert_int_equal(mp_trainer_eval(t, &L, &err), MP_OK);
    const float *y = mp_trainer_output(t, &n);
    void *bytes;
    size_t size;
    assert_int_equal(mp_trainer_write_model(t, &bytes, &size, &err), MP_OK);
    mp_session *s;
    mp_session_options so = {.threads = 1};
    assert_int_equal(mp_session_create(&so, &s, &err), MP_OK);
    assert_int_equal(mp_session_load_memory(s, bytes, size, "trained", &err), MP_OK);
    assert_int_equal(mp_session_prepare(s, &err), MP_OK);
    float out[10];
    for (int r = 0; r < 2; r++) {
        assert_int_equal(mp_session_set_input(s, 0, x + r * 784, 784 * sizeof(float), &err), MP_OK);
        assert_int_equal(mp_session_run(s, &err), MP_OK);
        assert_int_equal(mp_session_get_output(s, 0, out, sizeof out, &err), MP_OK);
        for (int j = 0; j < 10; j++)
            assert_float_equal(out[j], y[r * 10 + j], 1e-5);
    }
    /* the first two operators were not trainable: only the last FULLY_CONNECTED changed */
    const float *w0 = mp_trainer_value(t, 3, &n);
    assert_memory_equal(w0, m->tensors[3].data, n * sizeof(float));
    const float *w1 = mp_trainer_value(t, 6, &n);
    assert_true(memcmp(w1, m->tensors[6].data, n * sizeof(float)) != 0);
    mp_session_destroy(s);
    free(bytes);
    mp_trainer_destroy(t);
    mp_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sgd_step),       cmocka_unit_test(test_adam_steps),
        cmocka_unit_test(test_mnist_planned),  cmocka_unit_test(test_mnist_held_dynamic),
        cmocka_unit_test(test_written_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
