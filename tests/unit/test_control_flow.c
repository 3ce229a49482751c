/* Tests of models of several subgraphs (issue 16): WHILE and IF written by hand with the
 * tflite writer, run in the auto, static and dynamic modes against results computed here.
 * A loop that keeps its shapes (x = 2x + 1 while i < N) has planned outputs; a loop whose
 * variable grows by CONCATENATION each iteration is deferred (its outputs' shapes known only
 * after it ran). The trace shows each iteration (the body's operator marks carry it), every
 * byte allocated is freed by teardown, and malformed calls between subgraphs (an index out of
 * range, counts or dtypes that do not fit, a cond that is not bool, recursion) are refused at
 * load with MP_ERR_FORMAT naming the operator. A loop in a loop's body runs; a loop that does
 * not end stops at the session's cap. */
#include "tests/util/testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model/tflite_writer.h"
#include "engine/session.h"
#include "tests/util/cf_models.h"

enum { X = 4 };

typedef mp_test_model built;

/* IF c with inputs c (bool [1]) and x (float [X]), output y, calling subgraphs then_sg and
 * else_sg. */
static void main_if(mp_tfw *w, int then_sg, int else_sg)
{
    int c = mp_tfw_tensor(w, "c", MP_DT_BOOL, 1, (int32_t[]){1}, 0, NULL);
    int x = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 1, (int32_t[]){X}, 0, NULL);
    int y = mp_tfw_tensor(w, "y", MP_DT_FLOAT32, 1, (int32_t[]){X}, 0, NULL);
    mp_op_options o = mp_tfw_options_default();
    o.subgraph_a = then_sg;
    o.subgraph_b = else_sg;
    mp_tfw_op(w, MP_OP_IF, 2, (int32_t[]){c, x}, 1, &y, &o);
    mp_tfw_io(w, 2, (int32_t[]){c, x}, 1, &y);
}

/* IF c: then x * 2, else x + 10 (x float [X]); grow: else CONCATENATION(x, x), [2X]. */
static built if_model(bool grow)
{
    mp_tfw *w = mp_tfw_create();
    main_if(w, 1, 2);

    mp_tfw_subgraph(w, "then");
    int tx = mp_tfw_tensor(w, "tx", MP_DT_FLOAT32, 1, (int32_t[]){X}, 0, NULL);
    int two = mp_cf_const_f32(w, "two", 2.0f);
    int ty = mp_tfw_tensor(w, "ty", MP_DT_FLOAT32, 1, (int32_t[]){X}, 0, NULL);
    mp_tfw_op(w, MP_OP_MUL, 2, (int32_t[]){tx, two}, 1, &ty, NULL);
    mp_tfw_io(w, 1, &tx, 1, &ty);

    mp_tfw_subgraph(w, "else");
    int ex = mp_tfw_tensor(w, "ex", MP_DT_FLOAT32, 1, (int32_t[]){X}, 0, NULL);
    int ey;
    if (grow) {
        ey = mp_tfw_tensor(w, "ey", MP_DT_FLOAT32, 1, (int32_t[]){2 * X}, 0, NULL);
        mp_tfw_op(w, MP_OP_CONCATENATION, 2, (int32_t[]){ex, ex}, 1, &ey, NULL);
    } else {
        int ten = mp_cf_const_f32(w, "ten", 10.0f);
        ey = mp_tfw_tensor(w, "ey", MP_DT_FLOAT32, 1, (int32_t[]){X}, 0, NULL);
        mp_tfw_op(w, MP_OP_ADD, 2, (int32_t[]){ex, ten}, 1, &ey, NULL);
    }
    mp_tfw_io(w, 1, &ex, 1, &ey);
    return mp_test_tfw_finish(w);
}

/* ---- running ------------------------------------------------------------------------------ */

static const mp_memory_mode k_modes[] = {MP_MEMORY_AUTO, MP_MEMORY_STATIC, MP_MEMORY_DYNAMIC};

static mp_session *open_session(const built *b, mp_memory_mode mode, mp_trace *tr,
                                uint64_t max_iterations)
{
    mp_session_options o = {.threads = 1, .mode = mode, .trace = tr,
                             .max_iterations = max_iterations};
    return mp_test_session(b, &o, "cf.tflite");
}

/* Every byte allocated in the trace was freed (reallocations counted at their sizes). */
static void assert_balanced(const mp_trace *tr)
{
    assert_int_equal(mp_test_trace_live(tr), 0);
    assert_false(mp_trace_truncated(tr));
}

/* Blocks of kind `kind` allocated inside runs. */
static int allocs_in_runs(const mp_trace *tr, int kind)
{
    const mp_event *ev = mp_trace_events(tr);
    bool in_run = false;
    int count = 0;
    for (size_t k = 0; k < mp_trace_count(tr); k++) {
        if (ev[k].type == MP_EV_PHASE_BEGIN)
            in_run = ev[k].aux == MP_PHASE_RUN;
        if (in_run && ev[k].type == MP_EV_ALLOC && ev[k].kind == kind)
            count++;
    }
    return count;
}

/* PLAN events of tensors from table index `first_tensor` on (a subgraph's and those after). */
static int plans_from(const mp_trace *tr, int32_t first_tensor)
{
    const mp_event *ev = mp_trace_events(tr);
    int count = 0;
    for (size_t k = 0; k < mp_trace_count(tr); k++)
        count += ev[k].type == MP_EV_PLAN && ev[k].tensor >= first_tensor;
    return count;
}

/* Iterations the trace shows for operator `op` (of the tables of every subgraph) in run
 * `run`: how many times it began, checking that its marks carry 1, 2, ... in order. */
static int iterations_in_run(const mp_trace *tr, int32_t op, uint64_t run)
{
    const mp_event *ev = mp_trace_events(tr);
    uint64_t cur = 0;
    int count = 0;
    for (size_t k = 0; k < mp_trace_count(tr); k++) {
        if (ev[k].type == MP_EV_PHASE_BEGIN)
            cur = ev[k].aux == MP_PHASE_RUN ? ev[k].id : 0;
        if (cur == run && ev[k].type == MP_EV_OP_BEGIN && ev[k].op == op) {
            count++;
            assert_int_equal(ev[k].aux, (uint64_t)count);
        }
    }
    return count;
}

/* The loop models' inputs i (one int32) and x (X floats). */
static void set_loop_inputs(mp_session *s, int32_t i, const float *x)
{
    mp_test_set_input(s, 0, &i, sizeof i);
    mp_test_set_input(s, 1, x, sizeof(float) * X);
}

static void test_while_fixed(void **state)
{
    (void)state;
    enum { N = 5 };
    built b = mp_cf_while_model(N, X);
    for (size_t m = 0; m < sizeof k_modes / sizeof k_modes[0]; m++) {
        mp_trace *tr = mp_trace_create();
        mp_session *s = open_session(&b, k_modes[m], tr, 0);
        const mp_model *md = mp_session_model(s);
        assert_int_equal(md->n_subgraphs, 3);
        assert_false(mp_session_output_deferred(s, 0)); /* the loop keeps its shapes */
        for (int32_t start = 0; start <= N + 2; start += N + 2) { /* 5 iterations, then none */
            const float x0[X] = {0.0f, 1.0f, -2.5f, 3.0f};
            float x[X];
            set_loop_inputs(s, start, x0);
            mp_test_run(s);
            int32_t i_end;
            mp_test_get_output(s, 0, &i_end, sizeof i_end);
            mp_test_get_output(s, 1, x, sizeof x);
            int iters = start < N ? N - start : 0;
            assert_int_equal(i_end, start + iters);
            for (int k = 0; k < X; k++) {
                float want = x0[k];
                for (int it = 0; it < iters; it++)
                    want = want * 2.0f + 1.0f;
                assert_float_equal(x[k], want, 1e-5);
            }
            /* the body's first operator (table index: subgraph 0's 1 + cond's 1), and the
             * cond, which runs once more */
            uint64_t run = start == 0 ? 1 : 2;
            assert_int_equal(iterations_in_run(tr, 2, run), iters);
            assert_int_equal(iterations_in_run(tr, 1, run), iters + 1);
        }
        mp_session_memory mi;
        mp_session_memory_info(s, &mi);
        const mp_trace_meta *tm = mp_trace_get_meta(tr);
        assert_int_equal(tm->n_ops, 1 + 1 + 3); /* every subgraph's operators */
        assert_string_equal(tm->ops[2].name, "MUL");
        assert_int_equal(tm->n_tensors, 4 + 4 + 8);
        if (k_modes[m] != MP_MEMORY_DYNAMIC) {
            /* each subgraph planned at prepare, its arena reused by every iteration */
            assert_true(mi.arena_bytes > 0);
            assert_true(plans_from(tr, 4 + 4) > 0); /* the body's tensors */
            assert_int_equal(allocs_in_runs(tr, MP_KIND_STATIC), 0);
            assert_int_equal(allocs_in_runs(tr, MP_KIND_DYNAMIC), 0);
        } else {
            /* the body's two intermediate tensors per iteration at least */
            assert_true(allocs_in_runs(tr, MP_KIND_DYNAMIC) >= 2 * N);
            assert_int_equal(plans_from(tr, 0), 0);
        }
        mp_session_destroy(s);
        assert_balanced(tr);
        mp_trace_destroy(tr);
    }
    free(b.bytes);
}

static void test_while_grows(void **state)
{
    (void)state;
    enum { N = 6 };
    built b = mp_cf_grow_model(N);
    for (size_t m = 0; m < sizeof k_modes / sizeof k_modes[0]; m++) {
        mp_trace *tr = mp_trace_create();
        mp_session *s = open_session(&b, k_modes[m], tr, 0);
        assert_true(mp_session_output_deferred(s, 0)); /* known only after the loop */
        for (int r = 0; r < 2; r++) {
            int32_t i0 = r; /* N iterations, then N - 1 */
            float y0 = 5.0f;
            mp_test_set_input(s, 0, &i0, sizeof i0);
            mp_test_set_input(s, 1, &y0, sizeof y0);
            mp_test_run(s);
            int iters = N - r;
            /* y = [y + 1, 1] per iteration, computed here */
            float want[N + 1];
            int len = 1;
            want[0] = y0;
            for (int it = 0; it < iters; it++) {
                for (int k = 0; k < len; k++)
                    want[k] += 1.0f;
                want[len++] = 1.0f;
            }
            const mp_tensor *out = mp_session_output(s, 0);
            assert_int_equal(out->rank, 2);
            assert_int_equal(out->dims[0], 1);
            assert_int_equal(out->dims[1], len);
            float got[N + 1];
            mp_test_get_output(s, 0, got, sizeof(float) * (size_t)len);
            for (int k = 0; k < len; k++)
                assert_float_equal(got[k], want[k], 1e-6);
            assert_int_equal(iterations_in_run(tr, 2, (uint64_t)r + 1), iters);
        }
        /* shapes change every iteration: the body's memory follows them while running (its
         * arena made again for new shapes, or its buffers per iteration), the loop variables
         * in blocks of their own */
        if (k_modes[m] != MP_MEMORY_DYNAMIC)
            assert_true(allocs_in_runs(tr, MP_KIND_STATIC) >= N);
        assert_true(allocs_in_runs(tr, MP_KIND_DYNAMIC) >= 2 * N);
        mp_session_destroy(s);
        assert_balanced(tr);
        mp_trace_destroy(tr);
    }
    free(b.bytes);
}

static void test_if(void **state)
{
    (void)state;
    for (int grow = 0; grow <= 1; grow++) {
        built b = if_model(grow);
        for (size_t m = 0; m < sizeof k_modes / sizeof k_modes[0]; m++) {
            mp_trace *tr = mp_trace_create();
            mp_session *s = open_session(&b, k_modes[m], tr, 0);
            assert_int_equal(mp_session_output_deferred(s, 0), grow);
            for (int c = 1; c >= 0; c--) {
                bool cb = c;
                float x[X] = {1.0f, -2.0f, 0.5f, 4.0f}, y[2 * X];
                mp_test_set_input(s, 0, &cb, sizeof cb);
                mp_test_set_input(s, 1, x, sizeof x);
                mp_test_run(s);
                int len = c || !grow ? X : 2 * X;
                assert_int_equal(mp_session_output(s, 0)->dims[0], len);
                mp_test_get_output(s, 0, y, sizeof(float) * (size_t)len);
                for (int k = 0; k < len; k++) {
                    float want = c ? x[k] * 2.0f : grow ? x[k % X] : x[k] + 10.0f;
                    assert_float_equal(y[k], want, 1e-6);
                }
            }
            mp_session_destroy(s);
            assert_balanced(tr);
            mp_trace_destroy(tr);
        }
        free(b.bytes);
    }
}

/* ---- malformed models -------------------------------------------------------------------- */

static void expect_refused(built b, const char *needle)
{
    mp_model *m = NULL;
    mp_error err = {0};
    mp_status st = mp_model_load_memory(b.bytes, b.size, "bad.tflite", &m, &err);
    free(b.bytes);
    if (st != MP_ERR_FORMAT || !strstr(err.msg, needle))
        fail_msg("expected MP_ERR_FORMAT containing '%s', got %s: %s", needle, mp_status_name(st),
                 err.msg);
    assert_null(m);
    assert_null(strchr(err.msg, '\n'));
}

/* A WHILE in subgraph 0 calling cond_sg and body_sg; subgraph 1 a cond (i < 3, or one giving
 * an int32 with bad_cond), subgraph 2 a body (i + 1, RELU x) or, with inner_a >= 0, a WHILE
 * calling inner_a and inner_b. */
static built calls_model(int cond_sg, int body_sg, int inner_a, int inner_b, bool bad_cond)
{
    mp_tfw *w = mp_tfw_create();
    mp_cf_main_while(w, X, cond_sg, body_sg);

    mp_tfw_subgraph(w, "cond");
    if (bad_cond) {
        int ci = mp_tfw_tensor(w, "ci", MP_DT_INT32, 1, (int32_t[]){1}, 0, NULL);
        int cx = mp_tfw_tensor(w, "cx", MP_DT_FLOAT32, 1, (int32_t[]){X}, 0, NULL);
        int one = mp_cf_const_i32(w, "one", 1);
        int cy = mp_tfw_tensor(w, "cy", MP_DT_INT32, 1, (int32_t[]){1}, 0, NULL);
        mp_tfw_op(w, MP_OP_ADD, 2, (int32_t[]){ci, one}, 1, &cy, NULL);
        mp_tfw_io(w, 2, (int32_t[]){ci, cx}, 1, &cy);
    } else {
        mp_cf_cond_less(w, 3, MP_DT_FLOAT32, 1, (int32_t[]){X});
    }

    mp_tfw_subgraph(w, "body");
    int v[4];
    mp_cf_loop_vars(w, "b", X, v);
    if (inner_a >= 0) {
        mp_cf_while_op(w, v, inner_a, inner_b);
    } else {
        int one_i = mp_cf_const_i32(w, "one_i", 1);
        mp_tfw_op(w, MP_OP_ADD, 2, (int32_t[]){v[0], one_i}, 1, &v[2], NULL);
        mp_tfw_op(w, MP_OP_RELU, 1, &v[1], 1, &v[3], NULL);
    }
    mp_cf_body_io(w, v);
    return mp_test_tfw_finish(w);
}

static void test_malformed(void **state)
{
    (void)state;
    expect_refused(calls_model(1, 7, -1, -1, false),
                   "operator 0 (WHILE): body subgraph 7 is out of range (3 subgraphs)");
    expect_refused(calls_model(1, 2, -1, -1, true),
                   "operator 0 (WHILE): cond subgraph 1's output is i32, not bool");
    /* the cond as the body: it gives 1 output for 2 variables */
    expect_refused(calls_model(1, 1, -1, -1, false),
                   "operator 0 (WHILE): body subgraph 1 takes 2 inputs and gives 1 outputs");
    /* the body's WHILE calls the body itself */
    expect_refused(calls_model(1, 2, 1, 2, false),
                   "subgraph 2: operator 0 (WHILE) calls subgraph 2, which is running already: itself");
    /* subgraph 0 called back */
    expect_refused(calls_model(1, 2, 1, 0, false), "which is running already: a cycle of calls");
    /* a cond whose input is a constant (a call writes its callee's inputs) */
    mp_tfw *wc = mp_tfw_create();
    mp_cf_main_while(wc, X, 1, 2);
    mp_tfw_subgraph(wc, "cond");
    float zeros[X] = {0};
    int ci = mp_tfw_tensor(wc, "ci", MP_DT_INT32, 1, (int32_t[]){1}, 0, NULL);
    int cx = mp_tfw_tensor(wc, "cx", MP_DT_FLOAT32, 1, (int32_t[]){X},
                           mp_tfw_buffer(wc, zeros, sizeof zeros), NULL);
    int cn = mp_cf_const_i32(wc, "n", 3);
    int cb = mp_tfw_tensor(wc, "go", MP_DT_BOOL, 1, (int32_t[]){1}, 0, NULL);
    mp_tfw_op(wc, MP_OP_LESS, 2, (int32_t[]){ci, cn}, 1, &cb, NULL);
    mp_tfw_io(wc, 2, (int32_t[]){ci, cx}, 1, &cb);
    mp_tfw_subgraph(wc, "body");
    int v[4];
    mp_cf_loop_vars(wc, "b", X, v);
    mp_tfw_op(wc, MP_OP_ADD, 2, (int32_t[]){v[0], v[0]}, 1, &v[2], NULL);
    mp_tfw_op(wc, MP_OP_RELU, 1, &v[1], 1, &v[3], NULL);
    mp_cf_body_io(wc, v);
    expect_refused(mp_test_tfw_finish(wc),
                   "operator 0 (WHILE) calls subgraph 1, whose input 1 is a constant");
    /* an IF whose branch takes another count */
    mp_tfw *w = mp_tfw_create();
    main_if(w, 1, 1);
    mp_tfw_subgraph(w, "branch");
    int a = mp_tfw_tensor(w, "a", MP_DT_FLOAT32, 1, (int32_t[]){X}, 0, NULL);
    int b2 = mp_tfw_tensor(w, "b", MP_DT_FLOAT32, 1, (int32_t[]){X}, 0, NULL);
    int s = mp_tfw_tensor(w, "s", MP_DT_FLOAT32, 1, (int32_t[]){X}, 0, NULL);
    mp_tfw_op(w, MP_OP_ADD, 2, (int32_t[]){a, b2}, 1, &s, NULL);
    mp_tfw_io(w, 2, (int32_t[]){a, b2}, 1, &s);
    expect_refused(mp_test_tfw_finish(w),
                   "operator 0 (IF): then subgraph 1 takes 2 inputs and gives 1 outputs; "
                   "the operator passes 1 and takes 1");
}

/* A loop inside a loop's body runs too (nested calls, each with its iterations). */
static void test_nested(void **state)
{
    (void)state;
    /* subgraph 0: WHILE(cond 1, body 2); body 2: WHILE(cond 1, body 3); body 3: i + 1, RELU x:
     * the inner loop runs from the outer's i to 3, so the outer body runs once */
    mp_tfw *w = mp_tfw_create();
    mp_cf_main_while(w, X, 1, 2);
    mp_tfw_subgraph(w, "cond");
    mp_cf_cond_less(w, 3, MP_DT_FLOAT32, 1, (int32_t[]){X});
    mp_tfw_subgraph(w, "outer_body");
    int v[4];
    mp_cf_loop_vars(w, "o", X, v);
    mp_cf_while_op(w, v, 1, 3);
    mp_cf_body_io(w, v);
    mp_tfw_subgraph(w, "inner_body");
    mp_cf_loop_vars(w, "n", X, v);
    int one = mp_cf_const_i32(w, "one", 1);
    mp_tfw_op(w, MP_OP_ADD, 2, (int32_t[]){v[0], one}, 1, &v[2], NULL);
    mp_tfw_op(w, MP_OP_RELU, 1, &v[1], 1, &v[3], NULL);
    mp_cf_body_io(w, v);
    built b = mp_test_tfw_finish(w);
    for (size_t m = 0; m < sizeof k_modes / sizeof k_modes[0]; m++) {
        mp_trace *tr = mp_trace_create();
        mp_session *s = open_session(&b, k_modes[m], tr, 0);
        const float x[X] = {-1.0f, 2.0f, -3.0f, 4.0f};
        float y[X];
        int32_t i_end;
        set_loop_inputs(s, 0, x);
        mp_test_run(s);
        mp_test_get_output(s, 0, &i_end, sizeof i_end);
        mp_test_get_output(s, 1, y, sizeof y);
        assert_int_equal(i_end, 3);
        for (int k = 0; k < X; k++)
            assert_float_equal(y[k], x[k] > 0 ? x[k] : 0.0f, 0);
        /* the inner body's ADD: table index 1 + 1 + 1 = 3, three iterations */
        assert_int_equal(iterations_in_run(tr, 3, 1), 3);
        mp_session_destroy(s);
        assert_balanced(tr);
        mp_trace_destroy(tr);
    }
    /* the cap counts the outer and inner loops together: 1 + 3 iterations do not fit in 3 */
    mp_session *s = open_session(&b, MP_MEMORY_AUTO, NULL, 3);
    const float x[X] = {0};
    set_loop_inputs(s, 0, x);
    mp_error err = {0};
    assert_int_equal(mp_session_run(s, &err), MP_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.msg, "cf.tflite (subgraph 2): operator #0 WHILE: iteration 3 would "
                                    "make the run's loops go past 3 iterations"));
    mp_session_destroy(s);
    free(b.bytes);
}

/* A loop that does not end within the session's cap (a run's iterations, all loops together)
 * fails naming the operator, and the session holds nothing afterwards that teardown does not
 * free. */
static void test_cap(void **state)
{
    (void)state;
    built b = mp_cf_while_model(1000 * 1000 * 1000, X);
    mp_trace *tr = mp_trace_create();
    mp_session *s = open_session(&b, MP_MEMORY_AUTO, tr, 50);
    const float x0[X] = {0};
    set_loop_inputs(s, 0, x0);
    mp_error err = {0};
    assert_int_equal(mp_session_run(s, &err), MP_ERR_UNSUPPORTED);
    assert_string_equal(err.msg, "cf.tflite: operator #0 WHILE: iteration 51 would make the run's "
                                 "loops go past 50 iterations (memprof's cap)");
    assert_int_equal(iterations_in_run(tr, 2, 1), 50);
    /* the budget is per run: the next run gets it whole again */
    assert_int_equal(mp_session_run(s, &err), MP_ERR_UNSUPPORTED);
    assert_int_equal(iterations_in_run(tr, 2, 2), 50);
    mp_session_destroy(s);
    assert_balanced(tr);
    mp_trace_destroy(tr);
    free(b.bytes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_while_fixed),
        cmocka_unit_test(test_while_grows),
        cmocka_unit_test(test_if),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_nested),
        cmocka_unit_test(test_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
