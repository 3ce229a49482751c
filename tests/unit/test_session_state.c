/* Session tests of variable tensors (the state of recurrent operators, issue 16): an LSTM
 * model written by hand keeps its hidden and cell state from one run to the next (the second
 * run's output is the float64 recurrence of tests/util/lstm_ref.h continued from the first
 * run's state), mp_session_reset_variables brings back the first run's output, the state
 * survives a shape change, and in every memory mode the state is memory of kind variable:
 * one block per state tensor for the whole session, never a slot of the arena. The shared
 * MNIST LSTM model shows the same on a real model. */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model/tflite_writer.h"
#include "engine/session.h"
#include "tests/util/lstm_ref.h"

enum { B = 2, T = 3, I = 2, C = 3 };

typedef struct model_bytes {
    void *bytes;
    size_t size;
    int32_t h, c; /* the state tensors */
} model_bytes;

/* UNIDIRECTIONAL_SEQUENCE_LSTM, batch-major x [B, time, I] -> y [B, time, C], peephole, no
 * projection, 20 inputs; the time dimension is free. */
static model_bytes write_model(const lr_weights *w)
{
    mp_tfw *tw = mp_tfw_create();
    int32_t ins[20];
    ins[0] = mp_tfw_tensor(tw, "x", MP_DT_FLOAT32, 3, (int32_t[]){B, T, I}, 0, NULL);
    for (int k = 0; k < 4; k++)
        ins[1 + k] = mp_tfw_tensor(tw, "wx", MP_DT_FLOAT32, 2, (int32_t[]){C, I},
                                   mp_tfw_buffer(tw, w->wx[k], sizeof(float) * C * I), NULL);
    for (int k = 0; k < 4; k++)
        ins[5 + k] = mp_tfw_tensor(tw, "wh", MP_DT_FLOAT32, 2, (int32_t[]){C, C},
                                   mp_tfw_buffer(tw, w->wh[k], sizeof(float) * C * C), NULL);
    for (int k = 0; k < 3; k++)
        ins[9 + k] = mp_tfw_tensor(tw, "peep", MP_DT_FLOAT32, 1, (int32_t[]){C},
                                   mp_tfw_buffer(tw, w->peep[k], sizeof(float) * C), NULL);
    for (int k = 0; k < 4; k++)
        ins[12 + k] = mp_tfw_tensor(tw, "bias", MP_DT_FLOAT32, 1, (int32_t[]){C},
                                    mp_tfw_buffer(tw, w->bias[k], sizeof(float) * C), NULL);
    ins[16] = ins[17] = -1;
    ins[18] = mp_tfw_tensor_variable(tw, mp_tfw_tensor(tw, "h", MP_DT_FLOAT32, 2,
                                                       (int32_t[]){B, C}, 0, NULL));
    ins[19] = mp_tfw_tensor_variable(tw, mp_tfw_tensor(tw, "c", MP_DT_FLOAT32, 2,
                                                       (int32_t[]){B, C}, 0, NULL));
    int32_t y = mp_tfw_tensor(tw, "y", MP_DT_FLOAT32, 3, (int32_t[]){B, T, C}, 0, NULL);
    mp_op_options o = mp_tfw_options_default();
    o.activation = MP_ACT_TANH;
    o.time_major = false;
    mp_tfw_op(tw, MP_OP_UNIDIRECTIONAL_SEQUENCE_LSTM, 20, ins, 1, &y, &o);
    mp_tfw_io(tw, 1, &ins[0], 1, &y);
    model_bytes m = {.h = ins[18], .c = ins[19]};
    mp_error err = {0};
    assert_int_equal(mp_tfw_finish(tw, &m.bytes, &m.size, &err), MP_OK);
    mp_tfw_free(tw);
    return m;
}

static lr_cfg cfg(int time)
{
    return (lr_cfg){.batch = B, .time = time, .n_input = I, .n_cell = C, .n_output = C,
                    .peephole = true, .act = MP_ACT_TANH, .time_major = false};
}

static void run_with(mp_session *s, const float *x, size_t nx, float *y, size_t ny)
{
    mp_error err = {0};
    if (mp_session_set_input(s, 0, x, nx * sizeof(float), &err) != MP_OK ||
        mp_session_run(s, &err) != MP_OK ||
        mp_session_get_output(s, 0, y, ny * sizeof(float), &err) != MP_OK)
        fail_msg("%s", err.msg);
}

static void expect_ref(const float *got, const double *want, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (fabs(got[i] - want[i]) > 1e-5)
            fail_msg("element %zu: got %.7f, the recurrence gives %.7f", i, got[i], want[i]);
}

static void state_in_mode(mp_memory_mode mode)
{
    lr_weights w;
    lr_fill_weights(&w, 41);
    model_bytes m = write_model(&w);
    mp_trace *tr = mp_trace_create();
    mp_session_options so = {.threads = 1, .mode = mode, .trace = tr};
    mp_session *s = NULL;
    mp_error err = {0};
    assert_int_equal(mp_session_create(&so, &s, &err), MP_OK);
    assert_int_equal(mp_session_load_memory(s, m.bytes, m.size, "lstm.tflite", &err), MP_OK);
    assert_int_equal(mp_session_reset_variables(s, &err), MP_OK); /* before prepare: nothing */
    assert_int_equal(mp_session_prepare(s, &err), MP_OK);

    enum { NX = B * T * I, NY = B * T * C };
    float x1[NX], x2[NX], y1[NY], y2[NY], y3[NY];
    unsigned seed = 7;
    for (int i = 0; i < NX; i++) {
        x1[i] = lr_val(&seed, 1.5f);
        x2[i] = lr_val(&seed, 1.5f);
    }
    double h[B * C] = {0}, c[B * C] = {0}, want[NY];
    lr_cfg cf = cfg(T);
    run_with(s, x1, NX, y1, NY);
    lr_run(&cf, &w, x1, h, c, want);
    expect_ref(y1, want, NY);
    /* the second run starts from the state the first one left */
    double h1[B * C], c1[B * C];
    memcpy(h1, h, sizeof h);
    memcpy(c1, c, sizeof c);
    run_with(s, x2, NX, y2, NY);
    lr_run(&cf, &w, x2, h, c, want);
    expect_ref(y2, want, NY);
    assert_true(memcmp(y1, y2, sizeof y1) != 0);
    /* reset: the first run's output again, to the bit */
    assert_int_equal(mp_session_reset_variables(s, &err), MP_OK);
    run_with(s, x1, NX, y3, NY);
    assert_memory_equal(y1, y3, sizeof y1);
    /* a shape change (2 steps) re-plans the arena; the state stays */
    assert_int_equal(mp_session_set_input_shape(s, 0, 3, (int32_t[]){B, 2, I}, &err), MP_OK);
    float y4[B * 2 * C];
    double want4[B * 2 * C];
    run_with(s, x2, B * 2 * I, y4, B * 2 * C);
    lr_cfg cf2 = cfg(2);
    lr_run(&cf2, &w, x2, h1, c1, want4); /* the state after x1, as after the reset run */
    expect_ref(y4, want4, B * 2 * C);

    mp_session_memory mi;
    mp_session_memory_info(s, &mi);
    assert_int_equal(mi.n_variable, 2);
    assert_true(mi.variable_bytes >= 2 * B * C * sizeof(float));
    mp_session_destroy(s);

    /* the trace: one block of kind variable per state tensor, allocated once and freed at
     * teardown, never planned in the arena */
    int allocs[2] = {0}, frees[2] = {0};
    const mp_event *ev = mp_trace_events(tr);
    for (size_t i = 0; i < mp_trace_count(tr); i++) {
        const mp_event *e = &ev[i];
        bool state = e->tensor == m.h || e->tensor == m.c;
        if (e->type == MP_EV_PLAN)
            assert_false(state);
        if ((e->type == MP_EV_ALLOC || e->type == MP_EV_FREE) && e->kind == MP_KIND_VARIABLE) {
            assert_true(state);
            (e->type == MP_EV_ALLOC ? allocs : frees)[e->tensor == m.c]++;
        }
        if (e->type == MP_EV_ALLOC && state)
            assert_int_equal(e->kind, MP_KIND_VARIABLE);
    }
    for (int k = 0; k < 2; k++) {
        assert_int_equal(allocs[k], 1);
        assert_int_equal(frees[k], 1);
    }
    assert_string_equal(mp_kind_name(MP_KIND_VARIABLE), "variable");
    mp_trace_destroy(tr);
    free(m.bytes);
}

static void test_state_auto(void **state)
{
    (void)state;
    state_in_mode(MP_MEMORY_AUTO);
}

static void test_state_static(void **state)
{
    (void)state;
    state_in_mode(MP_MEMORY_STATIC);
}

static void test_state_dynamic(void **state)
{
    (void)state;
    state_in_mode(MP_MEMORY_DYNAMIC);
}

/* The shared MNIST LSTM (RESHAPE, UNIDIRECTIONAL_SEQUENCE_LSTM, FULLY_CONNECTED, SOFTMAX):
 * as in TensorFlow Lite, the same input twice gives two answers (the state carried over);
 * the reset call brings back the first. */
static void test_mnist_lstm_state(void **state)
{
    (void)state;
    mp_session *s = NULL;
    mp_error err = {0};
    mp_session_options so = {.threads = 1};
    assert_int_equal(mp_session_create(&so, &s, &err), MP_OK);
    if (mp_session_load(s, mp_test_path("models", "tfmicro_mnist_lstm_float.tflite"), &err) !=
        MP_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(mp_session_prepare(s, &err), MP_OK);
    const mp_tensor *in = mp_session_input(s, 0);
    size_t n = mp_tensor_elements(in);
    float *x = malloc(in->bytes);
    unsigned seed = 3;
    for (size_t i = 0; i < n; i++)
        x[i] = (lr_val(&seed, 1.0f) + 1.0f) / 2.0f;
    float a[10], b[10], c[10];
    run_with(s, x, n, a, 10);
    run_with(s, x, n, b, 10);
    assert_int_equal(mp_session_reset_variables(s, &err), MP_OK);
    run_with(s, x, n, c, 10);
    assert_true(memcmp(a, b, sizeof a) != 0);
    assert_memory_equal(a, c, sizeof a);
    free(x);
    mp_session_destroy(s);
}

int main(void)
{
    mp_test_require_shared();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_state_auto),
        cmocka_unit_test(test_state_static),
        cmocka_unit_test(test_state_dynamic),
        cmocka_unit_test(test_mnist_lstm_state),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
