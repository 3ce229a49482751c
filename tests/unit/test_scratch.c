/* Tests of kernel scratch in the memory plan: a kernel's temporaries (SOFTMAX with beta != 1
 * writes beta * x into its scratch) are planned in the arena beside the tensors for one
 * operator, or apart in one block, or allocated for the step in dynamic mode; the figures
 * are derived by hand below, and the outputs checked against a double-precision softmax. */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xnnpack.h>

#include "analyzers/profile.h"
#include "analyzers/source.h"
#include "engine/model/tflite_writer.h"
#include "engine/session.h"

/* The graph:  x [2,256] -> op0 SOFTMAX beta 2 -> a -> op1 SOFTMAX beta 1 -> b
 *             op2 ADD(a, b) -> y (output)
 * Every tensor is 2*256*4 = 2048 bytes. Lifetimes (first writer or step 0 for the input, last
 * reader; the output to the end): x [0,0], a [0,2], b [1,2], y [2,2]. Op0's scratch holds
 * beta * x plus XNNPACK's slack: 2048 + XNN_EXTRA_BYTES, alive at step 0 only.
 * With 64-byte slots (2048 stays, 2048 + 16 = 2064 rounds to 2112):
 *   together: step 0 holds x, a, scratch = 2048 + 2048 + 2112 = 6208; step 1 a, b = 4096;
 *             step 2 a, b, y = 6144: the lower bound is 6208;
 *   apart:    the tensors alone peak at step 2 (6144), plus a 2064-byte scratch block. */
enum { ROWS = 2, COLS = 256, TBYTES = ROWS * COLS * 4 };
#define SCRATCH_BYTES ((uint64_t)TBYTES + XNN_EXTRA_BYTES)
#define BOUND_TOGETHER (2048u + 2048u + 2112u)
#define BOUND_TENSORS (3u * 2048u)

static void *model_bytes(size_t *size)
{
    mp_tfw *w = mp_tfw_create();
    assert_non_null(w);
    int32_t dims[2] = {ROWS, COLS};
    int32_t x = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 2, dims, 0, NULL);
    int32_t a = mp_tfw_tensor(w, "a", MP_DT_FLOAT32, 2, dims, 0, NULL);
    int32_t b = mp_tfw_tensor(w, "b", MP_DT_FLOAT32, 2, dims, 0, NULL);
    int32_t y = mp_tfw_tensor(w, "y", MP_DT_FLOAT32, 2, dims, 0, NULL);
    mp_op_options o = mp_tfw_options_default();
    o.beta = 2.0f;
    mp_tfw_op(w, MP_OP_SOFTMAX, 1, &x, 1, &a, &o);
    o.beta = 1.0f;
    mp_tfw_op(w, MP_OP_SOFTMAX, 1, &a, 1, &b, &o);
    o = mp_tfw_options_default();
    mp_tfw_op(w, MP_OP_ADD, 2, (int32_t[]){a, b}, 1, &y, &o);
    mp_tfw_io(w, 1, &x, 1, &y);
    void *bytes = NULL;
    mp_error err = {0};
    assert_int_equal(mp_tfw_finish(w, &bytes, size, &err), MP_OK);
    mp_tfw_free(w);
    return bytes;
}

static void softmax_ref(const double *x, double *y, double beta)
{
    for (int r = 0; r < ROWS; r++) {
        const double *xr = x + r * COLS;
        double m = -INFINITY, sum = 0;
        for (int i = 0; i < COLS; i++)
            m = fmax(m, beta * xr[i]);
        for (int i = 0; i < COLS; i++)
            sum += exp(beta * xr[i] - m);
        for (int i = 0; i < COLS; i++)
            y[r * COLS + i] = exp(beta * xr[i] - m) / sum;
    }
}

/* Load the model in a session of the given mode; run it on a fixed input and check y. */
static mp_session *run_model(mp_memory_mode mode, bool separate, mp_trace *tr)
{
    size_t size;
    void *bytes = model_bytes(&size);
    mp_session_options o = {.mode = mode, .trace = tr, .scratch_separate = separate};
    mp_session *s = NULL;
    mp_error err = {0};
    assert_int_equal(mp_session_create(&o, &s, &err), MP_OK);
    assert_int_equal(mp_session_load_memory(s, bytes, size, "scratch", &err), MP_OK);
    free(bytes);
    assert_int_equal(mp_session_prepare(s, &err), MP_OK);
    float in[ROWS * COLS];
    double xd[ROWS * COLS], ad[ROWS * COLS], bd[ROWS * COLS];
    for (int i = 0; i < ROWS * COLS; i++) {
        in[i] = (float)((i * 37 % 101) - 50) / 16.0f;
        xd[i] = in[i];
    }
    for (int k = 0; k < 2; k++) { /* two runs: the second reuses everything */
        assert_int_equal(mp_session_set_input(s, 0, in, sizeof in, &err), MP_OK);
        if (mp_session_run(s, &err) != MP_OK)
            fail_msg("run: %s", err.msg);
    }
    softmax_ref(xd, ad, 2.0);
    softmax_ref(ad, bd, 1.0);
    const float *y = mp_session_output(s, 0)->data;
    for (int i = 0; i < ROWS * COLS; i++) {
        double want = ad[i] + bd[i];
        if (fabs(y[i] - want) > 1e-5 + 1e-4 * fabs(want))
            fail_msg("y[%d] = %.9g, want %.9g", i, (double)y[i], want);
    }
    return s;
}

static void test_plan_items(void **state)
{
    (void)state;
    mp_session *s = run_model(MP_MEMORY_AUTO, false, NULL);
    mp_plan_item *items = NULL;
    int32_t n = 0;
    uint64_t align = 0;
    mp_error err = {0};
    assert_int_equal(mp_session_plan_items(s, &items, &n, &align, &err), MP_OK);
    assert_int_equal(align, 64);
    assert_int_equal(n, 5); /* x, a, b, y and op 0's scratch */
    int scratch = 0;
    for (int32_t i = 0; i < n; i++) {
        if (items[i].tensor >= 0) {
            assert_int_equal(items[i].bytes, TBYTES);
            continue;
        }
        scratch++;
        assert_int_equal(items[i].op, 0);
        assert_int_equal(items[i].first, 0);
        assert_int_equal(items[i].last, 0);
        assert_int_equal(items[i].bytes, SCRATCH_BYTES);
        assert_false(items[i].io);
    }
    assert_int_equal(scratch, 1);
    free(items);
    mp_session_destroy(s);
}

static void test_together_and_apart(void **state)
{
    (void)state;
    mp_session_memory m;
    mp_session *s = run_model(MP_MEMORY_AUTO, false, NULL);
    mp_session_memory_info(s, &m);
    assert_int_equal(m.n_scratch, 1);
    assert_int_equal(m.scratch_block, 0);
    assert_int_equal(m.lower_bound, BOUND_TOGETHER);
    /* the default planner reaches the bound here; the arena adds XNNPACK's read slack */
    assert_int_equal(m.arena_bytes, BOUND_TOGETHER + XNN_EXTRA_BYTES);
    mp_session_destroy(s);

    s = run_model(MP_MEMORY_AUTO, true, NULL);
    mp_session_memory_info(s, &m);
    assert_int_equal(m.n_scratch, 1);
    assert_int_equal(m.scratch_block, SCRATCH_BYTES);
    assert_int_equal(m.lower_bound, BOUND_TENSORS);
    assert_int_equal(m.arena_bytes, BOUND_TENSORS + XNN_EXTRA_BYTES);
    /* together saves the scratch block minus what it added to the arena */
    assert_true(BOUND_TOGETHER < BOUND_TENSORS + SCRATCH_BYTES);
    mp_session_destroy(s);
}

/* The trace: a PLAN of kind SCRATCH for op 0 in the arena; the profile shows the slot. */
static void test_trace_and_profile(void **state)
{
    (void)state;
    mp_trace *tr = mp_trace_create();
    mp_session *s = run_model(MP_MEMORY_AUTO, false, tr);
    mp_session_destroy(s);
    size_t plans = 0;
    for (size_t i = 0; i < mp_trace_count(tr); i++) {
        const mp_event *e = &mp_trace_events(tr)[i];
        if (e->type == MP_EV_PLAN && e->kind == MP_KIND_SCRATCH) {
            plans++;
            assert_int_equal(e->tensor, -1);
            assert_int_equal(e->op, 0);
            assert_int_equal(e->op_last, 0);
            assert_int_equal(e->bytes, SCRATCH_BYTES);
        }
        /* nothing of kind scratch is allocated on its own: it lives in the arena */
        if (e->type == MP_EV_ALLOC)
            assert_int_not_equal(e->kind, MP_KIND_SCRATCH);
    }
    assert_int_equal(plans, 1);
    mp_source *src = mp_source_of_trace(tr);
    mp_profile p;
    mp_error err = {0};
    assert_int_equal(mp_profile_compute(src, NULL, &p, &err), MP_OK);
    assert_true(p.reference_arena >= 0);
    const mp_arena_report *ar = &p.arenas[p.reference_arena];
    int found = 0;
    for (size_t i = 0; i < ar->n_slots; i++)
        if (ar->slots[i].kind == MP_KIND_SCRATCH) {
            found++;
            assert_int_equal(ar->slots[i].tensor, -1);
            assert_int_equal(ar->slots[i].first_op, 0);
            assert_int_equal(ar->slots[i].bytes, SCRATCH_BYTES);
        }
    assert_int_equal(found, 1);
    assert_int_equal(p.ops[0].scratch_bytes, SCRATCH_BYTES);
    assert_int_equal(p.ops[1].scratch_bytes, 0);
    mp_profile_free(&p);
    mp_source_close(src);
    mp_trace_destroy(tr);
}

/* Dynamic mode: op 0's scratch is its own block for the step, allocated after OP_BEGIN and
 * freed before OP_END of op 0, in every run; no other operator gets one. */
static void test_dynamic_steps(void **state)
{
    (void)state;
    mp_trace *tr = mp_trace_create();
    mp_session *s = run_model(MP_MEMORY_DYNAMIC, false, tr);
    mp_session_memory m;
    mp_session_memory_info(s, &m);
    assert_int_equal(m.n_scratch, 0);
    mp_session_destroy(s);
    int32_t running = -1;
    int allocs = 0, frees = 0;
    uint64_t live_id = 0;
    for (size_t i = 0; i < mp_trace_count(tr); i++) {
        const mp_event *e = &mp_trace_events(tr)[i];
        if (e->type == MP_EV_OP_BEGIN)
            running = e->op;
        else if (e->type == MP_EV_OP_END)
            running = -1;
        if (e->kind != MP_KIND_SCRATCH)
            continue;
        assert_int_not_equal(e->type, MP_EV_PLAN);
        if (e->type == MP_EV_ALLOC) {
            assert_int_equal(running, 0);
            assert_int_equal(e->op, 0);
            assert_int_equal(e->bytes, SCRATCH_BYTES);
            live_id = e->id;
            allocs++;
        } else if (e->type == MP_EV_FREE) {
            assert_int_equal(running, 0);
            assert_int_equal(e->id, live_id);
            frees++;
        }
    }
    assert_int_equal(allocs, 2); /* one per run */
    assert_int_equal(frees, 2);
    mp_trace_destroy(tr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_items),
        cmocka_unit_test(test_together_and_apart),
        cmocka_unit_test(test_trace_and_profile),
        cmocka_unit_test(test_dynamic_steps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
