/* In place: the output of a RESHAPE, SQUEEZE or EXPAND_DIMS shares its input's arena slot,
 * and the output of an ADD, SUB, MUL or DIV the slot of an input nobody reads after it
 * (engine/session_memory.c, docs/memory.md "In place"); --in-place off (no_in_place) gives
 * each a slot of its own. Models written with the writer, arenas and lifetimes worked
 * out by hand below, the trace's PLAN events and the tensors' pointers checked, and the
 * outputs equal to a reference and across the memory modes. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analyzers/profile.h"
#include "analyzers/source.h"
#include "engine/model/ops.h"
#include "engine/model/tflite_writer.h"
#include "engine/session.h"
#include "tests/util/kernel_harness.h"
#include "tests/util/testutil.h"
#include "trace/trace.h"
#include "tui/index.h"

#define N 1024
#define ALIGNED(b) (((b) + 63) / 64 * 64)

/* Tensors of the chain model, by their writer index. */
enum { T_X, T_K, T_A, T_SHP, T_B, T_C, T_W, T_BIAS, T_OUT };

/* x [1] (input) + k [1, 1024] (constant) -> a [1, 1024]      op 0 ADD
 * a -> b [1, 32, 32]                                            op 1 RESHAPE
 * b -> c [32, 32]                                               op 2 SQUEEZE (axis 0)
 * c x w [1, 32] + bias [1] -> out [32, 1] (output)              op 3 FULLY_CONNECTED
 * Steps each tensor is alive (first writer or model input .. last reader; the output to the
 * end): x 0..0, a 0..1, b 1..2, c 2..3, out 3..3. */
static float g_k[N], g_w[32], g_bias[1];

static mp_test_model chain_model(void)
{
    kh_fill(g_k, N, 5, 1.0f);
    kh_fill(g_w, 32, 6, 0.5f);
    g_bias[0] = 0.25f;
    const int32_t shp[3] = {1, 32, 32};
    mp_tfw *w = mp_tfw_create();
    assert_non_null(w);
    mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 1, (int32_t[]){1}, 0, NULL);
    mp_tfw_tensor(w, "k", MP_DT_FLOAT32, 2, (int32_t[]){1, N}, mp_tfw_buffer(w, g_k, sizeof g_k),
                  NULL);
    mp_tfw_tensor(w, "a", MP_DT_FLOAT32, 2, (int32_t[]){1, N}, 0, NULL);
    mp_tfw_tensor(w, "shape", MP_DT_INT32, 1, (int32_t[]){3}, mp_tfw_buffer(w, shp, sizeof shp),
                  NULL);
    mp_tfw_tensor(w, "b", MP_DT_FLOAT32, 3, shp, 0, NULL);
    mp_tfw_tensor(w, "c", MP_DT_FLOAT32, 2, (int32_t[]){32, 32}, 0, NULL);
    mp_tfw_tensor(w, "w", MP_DT_FLOAT32, 2, (int32_t[]){1, 32}, mp_tfw_buffer(w, g_w, sizeof g_w),
                  NULL);
    mp_tfw_tensor(w, "bias", MP_DT_FLOAT32, 1, (int32_t[]){1},
                  mp_tfw_buffer(w, g_bias, sizeof g_bias), NULL);
    mp_tfw_tensor(w, "out", MP_DT_FLOAT32, 2, (int32_t[]){32, 1}, 0, NULL);
    mp_op_options o = mp_tfw_options_default();
    mp_tfw_op(w, MP_OP_ADD, 2, (int32_t[]){T_X, T_K}, 1, (int32_t[]){T_A}, &o);
    mp_tfw_op(w, MP_OP_RESHAPE, 2, (int32_t[]){T_A, T_SHP}, 1, (int32_t[]){T_B}, &o);
    o.n_squeeze_dims = 1;
    o.squeeze_dims[0] = 0;
    mp_tfw_op(w, MP_OP_SQUEEZE, 1, (int32_t[]){T_B}, 1, (int32_t[]){T_C}, &o);
    o = mp_tfw_options_default();
    mp_tfw_op(w, MP_OP_FULLY_CONNECTED, 3, (int32_t[]){T_C, T_W, T_BIAS}, 1, (int32_t[]){T_OUT},
              &o);
    mp_tfw_io(w, 1, (int32_t[]){T_X}, 1, (int32_t[]){T_OUT});
    return mp_test_tfw_finish(w);
}

/* The PLAN event of tensor t in the trace (NULL: none). */
static const mp_event *plan_of(const mp_trace *tr, int32_t t)
{
    const mp_event *ev = mp_trace_events(tr);
    for (size_t i = 0; i < mp_trace_count(tr); i++)
        if (ev[i].type == MP_EV_PLAN && ev[i].tensor == t && ev[i].kind != MP_KIND_SCRATCH)
            return &ev[i];
    return NULL;
}

/* Run the chain model once in `mode`, in place or not; the output in out[32]. */
static void run_chain(mp_memory_mode mode, bool no_in_place, float x, float *out,
                      mp_session_memory *mi, mp_trace **tr_out, mp_session **s_out)
{
    mp_test_model m = chain_model();
    mp_trace *tr = mp_trace_create();
    assert_non_null(tr);
    mp_session_options o = {.threads = 1, .mode = mode, .trace = tr, .no_in_place = no_in_place};
    mp_session *s = mp_test_session(&m, &o, "chain");
    mp_test_set_input(s, 0, &x, sizeof x);
    mp_test_run(s);
    mp_test_get_output(s, 0, out, 32 * sizeof(float));
    if (mi)
        mp_session_memory_info(s, mi);
    free(m.bytes);
    if (s_out) {
        *s_out = s;
    } else {
        mp_session_destroy(s);
    }
    if (tr_out)
        *tr_out = tr;
    else
        mp_trace_destroy(tr);
}

static void test_chain_shares_one_slot(void **state)
{
    (void)state;
    const float x = 0.75f;
    float out[32];
    mp_session_memory mi;
    mp_trace *tr;
    mp_session *s;
    run_chain(MP_MEMORY_STATIC, false, x, out, &mi, &tr, &s);
    /* the reference: out[r] = sum_c w[c] * (x + k[32 r + c]) + bias */
    for (int r = 0; r < 32; r++) {
        double want = g_bias[0];
        for (int c = 0; c < 32; c++)
            want += (double)g_w[c] * ((double)x + (double)g_k[32 * r + c]);
        assert_true(fabs(out[r] - want) <= 1e-4 * fmax(1.0, fabs(want)));
    }
    /* b and c are a's bytes, relabelled */
    const mp_tensor *a = mp_session_tensor(s, T_A), *b = mp_session_tensor(s, T_B),
                    *c = mp_session_tensor(s, T_C);
    assert_non_null(a->data);
    assert_ptr_equal(b->data, a->data);
    assert_ptr_equal(c->data, a->data);
    /* the plan: x, a (alive 0..3, to c's last reader) and out; b and c have no slot */
    const mp_event *pa = plan_of(tr, T_A);
    assert_non_null(pa);
    assert_int_equal(pa->op, 0);
    assert_int_equal(pa->op_last, 3);
    assert_null(plan_of(tr, T_B));
    assert_null(plan_of(tr, T_C));
    assert_non_null(plan_of(tr, T_X));
    assert_non_null(plan_of(tr, T_OUT));
    assert_int_equal(mi.n_planned, 3);
    /* most bytes alive at one step: step 0 x + a = 64 + 4096, step 3 a + out = 4096 + 128 */
    assert_int_equal(mi.lower_bound, ALIGNED(N * 4) + ALIGNED(32 * 4));
    assert_true(mi.arena_bytes >= mi.lower_bound + MP_INPUT_SLACK);
    mp_session_destroy(s);
    mp_trace_destroy(tr);
}

static void test_off_gives_own_slots(void **state)
{
    (void)state;
    float on[32], off[32], dyn[32];
    mp_session_memory mi;
    mp_trace *tr;
    mp_session *s;
    run_chain(MP_MEMORY_STATIC, true, 0.75f, off, &mi, &tr, &s);
    const mp_tensor *a = mp_session_tensor(s, T_A), *b = mp_session_tensor(s, T_B);
    assert_true(a->data != b->data);
    assert_int_equal(mi.n_planned, 5);
    /* a and b both alive at step 1 (the copy), b and c at step 2: 4096 + 4096 */
    assert_int_equal(mi.lower_bound, 2 * ALIGNED(N * 4));
    const mp_event *pa = plan_of(tr, T_A), *pb = plan_of(tr, T_B), *pc = plan_of(tr, T_C);
    assert_true(pa && pb && pc);
    assert_int_equal(pa->op_last, 1);
    assert_int_equal(pb->op, 1);
    assert_int_equal(pb->op_last, 2);
    assert_int_equal(pc->op_last, 3);
    mp_session_destroy(s);
    mp_trace_destroy(tr);
    /* the same values in place, copied, and in dynamic mode */
    run_chain(MP_MEMORY_STATIC, false, 0.75f, on, NULL, NULL, NULL);
    run_chain(MP_MEMORY_DYNAMIC, false, 0.75f, dyn, NULL, NULL, NULL);
    assert_memory_equal(on, off, sizeof on);
    assert_memory_equal(on, dyn, sizeof on);
}

/* Auto mode after a run: the plan is kept, a second run gives the same output, and every
 * byte allocated is freed at teardown (the shared slot is freed once, with the arena). */
static void test_runs_again_and_balances(void **state)
{
    (void)state;
    float first[32], again[32];
    mp_trace *tr;
    mp_session *s;
    run_chain(MP_MEMORY_AUTO, false, -1.5f, first, NULL, &tr, &s);
    float x = -1.5f;
    mp_test_set_input(s, 0, &x, sizeof x);
    mp_test_run(s);
    mp_test_get_output(s, 0, again, sizeof again);
    assert_memory_equal(first, again, sizeof first);
    mp_session_destroy(s);
    assert_int_equal(mp_test_trace_live(tr), 0);
    mp_trace_destroy(tr);
}

/* A RESHAPE of a model input and a RESHAPE whose output is a model output keep their own
 * slots (TensorFlow Lite's rule too: the caller's buffers are never another tensor's bytes);
 * an ADD whose input nobody reads after it takes that input's slot.
 * in [4, 4] (input) -> y [16] (op 0 RESHAPE: own slot); y + y -> z [16] (op 1 ADD: y's
 * slot, y read by nobody after); z -> out [2, 8] (op 2 RESHAPE, output: own slot). */
static void test_model_inputs_and_outputs_keep_their_bytes(void **state)
{
    (void)state;
    const int32_t s16[1] = {16}, s28[2] = {2, 8};
    mp_tfw *w = mp_tfw_create();
    assert_non_null(w);
    int in = mp_tfw_tensor(w, "in", MP_DT_FLOAT32, 2, (int32_t[]){4, 4}, 0, NULL);
    int sh1 = mp_tfw_tensor(w, "s16", MP_DT_INT32, 1, (int32_t[]){1}, mp_tfw_buffer(w, s16, 4), NULL);
    int y = mp_tfw_tensor(w, "y", MP_DT_FLOAT32, 1, s16, 0, NULL);
    int z = mp_tfw_tensor(w, "z", MP_DT_FLOAT32, 1, s16, 0, NULL);
    int sh2 = mp_tfw_tensor(w, "s28", MP_DT_INT32, 1, (int32_t[]){2}, mp_tfw_buffer(w, s28, 8), NULL);
    int out = mp_tfw_tensor(w, "out", MP_DT_FLOAT32, 2, s28, 0, NULL);
    mp_op_options o = mp_tfw_options_default();
    mp_tfw_op(w, MP_OP_RESHAPE, 2, (int32_t[]){in, sh1}, 1, &y, &o);
    mp_tfw_op(w, MP_OP_ADD, 2, (int32_t[]){y, y}, 1, &z, &o);
    mp_tfw_op(w, MP_OP_RESHAPE, 2, (int32_t[]){z, sh2}, 1, &out, &o);
    mp_tfw_io(w, 1, &in, 1, &out);
    mp_test_model m = mp_test_tfw_finish(w);
    mp_trace *tr = mp_trace_create();
    assert_non_null(tr);
    mp_session_options so = {.threads = 1, .mode = MP_MEMORY_STATIC, .trace = tr};
    mp_session *s = mp_test_session(&m, &so, "io");
    float x[16], got[16];
    for (int i = 0; i < 16; i++)
        x[i] = (float)i - 5.0f;
    mp_test_set_input(s, 0, x, sizeof x);
    mp_test_run(s);
    mp_test_get_output(s, 0, got, sizeof got);
    for (int i = 0; i < 16; i++)
        assert_true(got[i] == 2.0f * x[i]);
    assert_non_null(plan_of(tr, in));
    assert_non_null(plan_of(tr, y));
    assert_null(plan_of(tr, z));
    assert_non_null(plan_of(tr, out));
    assert_int_equal(plan_of(tr, y)->op_last, 2); /* z's life: read by op 2 */
    assert_true(mp_session_tensor(s, y)->data != mp_session_tensor(s, in)->data);
    assert_ptr_equal(mp_session_tensor(s, z)->data, mp_session_tensor(s, y)->data);
    assert_true(mp_session_tensor(s, out)->data != mp_session_tensor(s, z)->data);
    mp_session_destroy(s);
    mp_trace_destroy(tr);
    free(m.bytes);
}

/* The models of the sharing tests below: x [1] (the input) + k [1, 1024] -> a (op 0 ADD),
 * then the test's own operators, then its last tensor t -> r [32, 32] (RESHAPE) and r x w +
 * bias -> out [32, 1] (FULLY_CONNECTED, the output). k and w are filled from the seeds. */
typedef struct fc_chain {
    mp_tfw *w;
    int x, k, a;
    mp_op_options o;
} fc_chain;

/* A [1, 1024] float32 activation of the chain. */
static int chain_act(fc_chain *c, const char *name)
{
    return mp_tfw_tensor(c->w, name, MP_DT_FLOAT32, 2, (int32_t[]){1, N}, 0, NULL);
}

static fc_chain chain_begin(unsigned k_seed, float k_scale, unsigned w_seed)
{
    kh_fill(g_k, N, k_seed, k_scale);
    kh_fill(g_w, 32, w_seed, 0.5f);
    g_bias[0] = 0.25f;
    fc_chain c = {.w = mp_tfw_create(), .o = mp_tfw_options_default()};
    assert_non_null(c.w);
    c.x = mp_tfw_tensor(c.w, "x", MP_DT_FLOAT32, 1, (int32_t[]){1}, 0, NULL);
    c.k = mp_tfw_tensor(c.w, "k", MP_DT_FLOAT32, 2, (int32_t[]){1, N},
                        mp_tfw_buffer(c.w, g_k, sizeof g_k), NULL);
    c.a = chain_act(&c, "a");
    mp_tfw_op(c.w, MP_OP_ADD, 2, (int32_t[]){c.x, c.k}, 1, &c.a, &c.o);
    return c;
}

/* The RESHAPE of t and the FULLY_CONNECTED; *r: the RESHAPE's output. */
static mp_test_model chain_end(fc_chain *c, int t, int *r)
{
    static const int32_t shp[2] = {32, 32};
    int sh = mp_tfw_tensor(c->w, "shape", MP_DT_INT32, 1, (int32_t[]){2},
                           mp_tfw_buffer(c->w, shp, sizeof shp), NULL);
    *r = mp_tfw_tensor(c->w, "r", MP_DT_FLOAT32, 2, shp, 0, NULL);
    int wt = mp_tfw_tensor(c->w, "w", MP_DT_FLOAT32, 2, (int32_t[]){1, 32},
                           mp_tfw_buffer(c->w, g_w, sizeof g_w), NULL);
    int bs = mp_tfw_tensor(c->w, "bias", MP_DT_FLOAT32, 1, (int32_t[]){1},
                           mp_tfw_buffer(c->w, g_bias, sizeof g_bias), NULL);
    int out = mp_tfw_tensor(c->w, "out", MP_DT_FLOAT32, 2, (int32_t[]){32, 1}, 0, NULL);
    mp_tfw_op(c->w, MP_OP_RESHAPE, 2, (int32_t[]){t, sh}, 1, r, &c->o);
    mp_tfw_op(c->w, MP_OP_FULLY_CONNECTED, 3, (int32_t[]){*r, wt, bs}, 1, &out, &c->o);
    mp_tfw_io(c->w, 1, &c->x, 1, &out);
    return mp_test_tfw_finish(c->w);
}

/* A static-mode session on md (in place unless `off`) recording into *tr, run once on the
 * input x, its output in got[32]. The caller destroys both. */
static mp_session *chain_run(const mp_test_model *md, bool off, float x, float *got,
                             mp_trace **tr, const char *label)
{
    *tr = mp_trace_create();
    assert_non_null(*tr);
    mp_session_options so = {.threads = 1, .mode = MP_MEMORY_STATIC, .trace = *tr,
                             .no_in_place = off};
    mp_session *s = mp_test_session(md, &so, label);
    mp_test_set_input(s, 0, &x, sizeof x);
    mp_test_run(s);
    mp_test_get_output(s, 0, got, 32 * sizeof(float));
    return s;
}

/* got is the FULLY_CONNECTED of the [1, 1024] values v it reshaped: bias + sum_c w[c] *
 * v[32 row + c] per row, within 1e-4. */
static void expect_fc_of(const float *got, const double *v)
{
    for (int row = 0; row < 32; row++) {
        double want = g_bias[0];
        for (int c = 0; c < 32; c++)
            want += (double)g_w[c] * v[32 * row + c];
        assert_true(fabs(got[row] - want) <= 1e-4 * fmax(1.0, fabs(want)));
    }
}

/* Elementwise in place: x [1] (input) + k [1, 1024] -> a (op 0 ADD); a * k -> m (op 1 MUL:
 * a is read again at op 2, so m has its own slot); m + a -> t (op 2 ADD: m's slot, nobody
 * reads m after); t -> r [32, 32] (op 3 RESHAPE: m's slot too); r x w + bias -> out [32, 1]
 * (op 4, output). Alive: x 0..0, a 0..2, m's slot 1..4 (to r's reader), out 4..4. Most
 * bytes alive at once: a and m at steps 1-2, 2 x 4096; without sharing a, m and t at step 2,
 * 3 x 4096. */
static void test_elementwise_takes_a_dead_input(void **state)
{
    (void)state;
    for (int off = 0; off <= 1; off++) {
        fc_chain c = chain_begin(5, 1.0f, 6);
        int m = chain_act(&c, "m"), t = chain_act(&c, "t"), r;
        mp_tfw_op(c.w, MP_OP_MUL, 2, (int32_t[]){c.a, c.k}, 1, &m, &c.o);
        mp_tfw_op(c.w, MP_OP_ADD, 2, (int32_t[]){m, c.a}, 1, &t, &c.o);
        mp_test_model md = chain_end(&c, t, &r);
        const float xv = 0.5f;
        float got[32];
        mp_trace *tr;
        mp_session *s = chain_run(&md, off, xv, got, &tr, "elementwise");
        double v[N];
        for (int e = 0; e < N; e++) {
            double av = (double)xv + g_k[e];
            v[e] = av * g_k[e] + av;
        }
        expect_fc_of(got, v);
        mp_session_memory mi;
        mp_session_memory_info(s, &mi);
        const mp_event *pa = plan_of(tr, c.a), *pm = plan_of(tr, m);
        assert_true(pa && pm);
        assert_int_equal(pa->op_last, 2);
        if (!off) {
            assert_int_equal(pm->op_last, 4);
            assert_null(plan_of(tr, t));
            assert_null(plan_of(tr, r));
            assert_ptr_equal(mp_session_tensor(s, t)->data, mp_session_tensor(s, m)->data);
            assert_true(mp_session_tensor(s, m)->data != mp_session_tensor(s, c.a)->data);
            assert_int_equal(mi.lower_bound, 2 * ALIGNED(N * 4));
        } else {
            assert_int_equal(pm->op_last, 2);
            assert_non_null(plan_of(tr, t));
            assert_non_null(plan_of(tr, r));
            assert_int_equal(mi.lower_bound, 3 * ALIGNED(N * 4));
        }
        mp_session_destroy(s);
        mp_trace_destroy(tr);
        free(md.bytes);
    }
}

/* SOFTMAX in place: x [1] (input) + k [1, 1024] -> a (op 0 ADD); softmax(a) -> p (op 1: a's
 * slot when nobody reads a after it); p -> r [32, 32] (RESHAPE), r x w + bias -> out [32, 1]
 * (FULLY_CONNECTED, the output). With `reread`, an ADD p + a -> q comes between (op 2) and
 * reads a after the softmax, so p keeps a slot of its own (and q takes p's). Expected: shared,
 * a's slot lives 0..3 and the most bytes alive at once are that 4 KiB slot and out's 128 at
 * the last step; reread, a 0..2 and p from 1, both 4 KiB slots alive at ops 1 and 2. The
 * output is the reference softmax (plus a) either way. */
static void test_softmax_takes_its_dead_input(void **state)
{
    (void)state;
    for (int reread = 0; reread <= 1; reread++) {
        fc_chain c = chain_begin(7, 2.0f, 8);
        int p = chain_act(&c, "p"), q = reread ? chain_act(&c, "q") : p, r;
        c.o.beta = 1.0f;
        mp_tfw_op(c.w, MP_OP_SOFTMAX, 1, &c.a, 1, &p, &c.o);
        c.o = mp_tfw_options_default();
        if (reread)
            mp_tfw_op(c.w, MP_OP_ADD, 2, (int32_t[]){p, c.a}, 1, &q, &c.o);
        mp_test_model md = chain_end(&c, q, &r);
        const float xv = -0.25f;
        float got[32];
        mp_trace *tr;
        mp_session *s = chain_run(&md, false, xv, got, &tr, "softmax");
        double mx = -INFINITY, sum = 0, v[N];
        for (int e = 0; e < N; e++)
            mx = fmax(mx, (double)xv + g_k[e]);
        for (int e = 0; e < N; e++)
            sum += exp((double)xv + g_k[e] - mx);
        for (int e = 0; e < N; e++) {
            double av = (double)xv + g_k[e], pv = exp(av - mx) / sum;
            v[e] = reread ? pv + av : pv;
        }
        expect_fc_of(got, v);
        mp_session_memory mi;
        mp_session_memory_info(s, &mi);
        const mp_event *pa = plan_of(tr, c.a);
        assert_non_null(pa);
        if (!reread) {
            assert_null(plan_of(tr, p));
            assert_ptr_equal(mp_session_tensor(s, p)->data, mp_session_tensor(s, c.a)->data);
            assert_int_equal(pa->op_last, 3);
            assert_int_equal(mi.lower_bound, ALIGNED(N * 4) + ALIGNED(32 * 4));
        } else {
            const mp_event *pp = plan_of(tr, p);
            assert_non_null(pp);
            assert_int_equal(pa->op_last, 2);
            assert_int_equal(pp->op, 1);
            assert_true(mp_session_tensor(s, p)->data != mp_session_tensor(s, c.a)->data);
            assert_int_equal(mi.lower_bound, 2 * ALIGNED(N * 4));
        }
        mp_session_destroy(s);
        mp_trace_destroy(tr);
        free(md.bytes);
    }
}

/* DYNAMIC_UPDATE_SLICE in place: x [1] (input) + k [1, 1024] -> a (op 0 ADD); a with the
 * constant update u [1, 4] written at [0, 1020] (the start [0, 1022] clamped so that the
 * update fits, TensorFlow Lite's rule) -> d (op 1: a's slot, nobody reads a after it); d -> r
 * [32, 32] (RESHAPE), r x w + bias -> out [32, 1]. One 4 KiB slot from op 0 to op 3, no PLAN
 * event for d; the output is the reference with elements 1020..1023 of a replaced, on two
 * runs (the second starts from the first's bytes). */
static void test_update_slice_takes_its_operand(void **state)
{
    (void)state;
    static const int32_t start[2] = {0, 1022};
    static const float upd[4] = {10.0f, -20.0f, 30.0f, -40.0f};
    fc_chain c = chain_begin(9, 1.0f, 10);
    int u = mp_tfw_tensor(c.w, "u", MP_DT_FLOAT32, 2, (int32_t[]){1, 4},
                          mp_tfw_buffer(c.w, upd, sizeof upd), NULL);
    int st = mp_tfw_tensor(c.w, "start", MP_DT_INT32, 1, (int32_t[]){2},
                           mp_tfw_buffer(c.w, start, sizeof start), NULL);
    int d = chain_act(&c, "d"), r;
    mp_tfw_op(c.w, MP_OP_DYNAMIC_UPDATE_SLICE, 3, (int32_t[]){c.a, u, st}, 1, &d, &c.o);
    mp_test_model md = chain_end(&c, d, &r);
    const float xv = 0.125f;
    float got[32];
    mp_trace *tr;
    mp_session *s = chain_run(&md, false, xv, got, &tr, "update slice");
    double v[N];
    for (int e = 0; e < N; e++)
        v[e] = e >= N - 4 ? (double)upd[e - (N - 4)] : (double)xv + g_k[e];
    expect_fc_of(got, v);
    mp_test_set_input(s, 0, &xv, sizeof xv); /* again, from the first run's bytes */
    mp_test_run(s);
    mp_test_get_output(s, 0, got, sizeof got);
    expect_fc_of(got, v);
    const mp_event *pa = plan_of(tr, c.a);
    assert_non_null(pa);
    assert_int_equal(pa->op_last, 3);
    assert_null(plan_of(tr, d));
    assert_ptr_equal(mp_session_tensor(s, d)->data, mp_session_tensor(s, c.a)->data);
    mp_session_destroy(s);
    mp_trace_destroy(tr);
    free(md.bytes);
}

/* BITCAST in place (it relabels bytes, as RESHAPE; TensorFlow Lite registers it
 * kTfLiteInplaceOpDataUnmodified): x [1] + k [1, 1024] -> a (ADD, float32); a -> i (BITCAST
 * to int32 [1, 1024]); i -> f (BITCAST back to float32); f -> r [32, 32] (RESHAPE); r x w +
 * bias -> out. a, i, f and r are one slot (no PLAN event for the last three), alive from
 * the ADD to the FULLY_CONNECTED, and the output is the reference's: the bits came back. */
static void test_bitcast_shares_across_dtypes(void **state)
{
    (void)state;
    fc_chain c = chain_begin(11, 1.0f, 12);
    int i = mp_tfw_tensor(c.w, "i", MP_DT_INT32, 2, (int32_t[]){1, N}, 0, NULL);
    int f = chain_act(&c, "f"), r;
    mp_tfw_op(c.w, MP_OP_BITCAST, 1, &c.a, 1, &i, NULL);
    mp_tfw_op(c.w, MP_OP_BITCAST, 1, &i, 1, &f, NULL);
    mp_test_model md = chain_end(&c, f, &r);
    const float xv = -0.375f;
    float got[32];
    mp_trace *tr;
    mp_session *s = chain_run(&md, false, xv, got, &tr, "bitcast");
    double v[N];
    for (int e = 0; e < N; e++)
        v[e] = (double)xv + g_k[e];
    expect_fc_of(got, v);
    const mp_event *pa = plan_of(tr, c.a);
    assert_non_null(pa);
    assert_int_equal(pa->op_last, 4);
    assert_null(plan_of(tr, i));
    assert_null(plan_of(tr, f));
    assert_null(plan_of(tr, r));
    assert_ptr_equal(mp_session_tensor(s, i)->data, mp_session_tensor(s, c.a)->data);
    assert_ptr_equal(mp_session_tensor(s, f)->data, mp_session_tensor(s, c.a)->data);
    mp_session_destroy(s);
    mp_trace_destroy(tr);
    free(md.bytes);
}

/* The lifetimes of a profile of tr, checked for the chain model: b and c in place in a's slot
 * for their own operators (b 1..2, c 2..3), a's slot (its PLAN event) 0..3. */
static void expect_chain_lifetimes(mp_source *src)
{
    mp_profile p;
    mp_error err = {0};
    mp_profile_options po = {0};
    assert_int_equal(mp_profile_compute(src, &po, &p, &err), MP_OK);
    const mp_lifetime *a = &p.lifetimes[T_A], *b = &p.lifetimes[T_B], *c = &p.lifetimes[T_C];
    assert_int_equal(a->manager, MP_MGR_ARENA);
    assert_false(a->in_place);
    assert_int_equal(a->first_op, 0);
    assert_int_equal(a->last_op, 3);
    const mp_lifetime *shared[2] = {b, c};
    for (int k = 0; k < 2; k++) {
        assert_int_equal(shared[k]->manager, MP_MGR_ARENA);
        assert_true(shared[k]->in_place);
        assert_int_equal(shared[k]->offset, a->offset);
        assert_int_equal(shared[k]->arena_id, a->arena_id);
        assert_int_equal(shared[k]->bytes, N * 4);
        assert_int_equal(shared[k]->first_op, 1 + k);
        assert_int_equal(shared[k]->last_op, 2 + k);
    }
    assert_false(p.lifetimes[T_OUT].in_place);
    mp_profile_free(&p);
}

/* The trace says which slot a tensor in place used (meta tensors[].shares), in memory and
 * saved and read back, and the profile gives such a tensor that slot for its own operators;
 * without sharing, nothing is in place. */
static void test_trace_names_the_shared_slot(void **state)
{
    (void)state;
    float out[32];
    mp_trace *tr;
    run_chain(MP_MEMORY_STATIC, false, 0.5f, out, NULL, &tr, NULL);
    const mp_trace_meta *m = mp_trace_get_meta(tr);
    for (int32_t t = 0; t < m->n_tensors; t++) {
        bool want = t == T_B || t == T_C;
        assert_int_equal(m->tensors[t].in_place, want);
        if (want)
            assert_int_equal(m->tensors[t].shares, T_A);
    }
    mp_source *src = mp_source_of_trace(tr);
    assert_non_null(src);
    expect_chain_lifetimes(src);
    mp_source_close(src);
    assert_int_equal(mp_test_tmpdir_make("mp_inplace"), 0);
    const char *path = mp_test_tmp_path("chain.json");
    mp_error err = {0};
    assert_int_equal(mp_trace_save(tr, path, &err), MP_OK);
    assert_int_equal(mp_source_open(path, &src, &err), MP_OK);
    expect_chain_lifetimes(src);
    mp_source_close(src);
    mp_trace_destroy(tr);
    /* a saved "shares" naming the tensor itself or no tensor is refused */
    size_t size;
    char *text = mp_test_read_file(path, &size);
    assert_non_null(text);
    char *at = strstr(text, "\"shares\":2");
    assert_non_null(at);
    at[9] = '4'; /* tensor 4 (b) sharing itself */
    mp_test_write_bytes(path, text, size);
    assert_int_not_equal(mp_source_open(path, &src, &err), MP_OK);
    assert_non_null(strstr(err.msg, "shares names the tensor itself"));
    free(text);
    assert_int_equal(mp_test_tmpdir_remove(), 0);

    run_chain(MP_MEMORY_STATIC, true, 0.5f, out, NULL, &tr, NULL);
    m = mp_trace_get_meta(tr);
    for (int32_t t = 0; t < m->n_tensors; t++)
        assert_false(m->tensors[t].in_place);
    mp_trace_destroy(tr);
}

/* What is alive at each operator names the tensor holding a shared slot then (the TUI and
 * the summary's "alive at the peak"): a's slot is a at op 0, b at op 1 (the RESHAPE wrote
 * it), c at ops 2 and 3 (the SQUEEZE wrote it, the FULLY_CONNECTED reads it). */
static void test_alive_names_the_holder(void **state)
{
    (void)state;
    float out[32];
    mp_trace *tr;
    run_chain(MP_MEMORY_STATIC, false, 0.5f, out, NULL, &tr, NULL);
    mp_source *src = mp_source_of_trace(tr);
    assert_non_null(src);
    mp_tui_index *m = NULL;
    mp_error err = {0};
    mp_tui_options o = {0};
    assert_int_equal(mp_tui_index_build(src, &o, &m, &err), MP_OK);
    const int32_t want[4] = {T_A, T_B, T_C, T_C};
    int seen = 0;
    for (size_t e = mp_tui_next_op(m, 0); e != SIZE_MAX && seen < 4; e = mp_tui_next_op(m, e)) {
        mp_tui_at at;
        assert_int_equal(mp_tui_state_at(m, e, -1, &at, &err), MP_OK);
        if (at.run != 1 || at.op < 0)
            continue;
        assert_int_equal(at.op, seen);
        bool found = false;
        for (size_t i = 0; i < at.n_alive; i++) {
            const mp_summary_alive *a = &at.alive[i];
            if (a->home == MP_SUMMARY_SLOT && a->bytes == N * 4) {
                assert_int_equal(a->tensor, want[seen]);
                found = true;
            }
        }
        assert_true(found);
        seen++;
    }
    assert_int_equal(seen, 4);
    mp_tui_index_free(m);
    mp_source_close(src);
    mp_trace_destroy(tr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chain_shares_one_slot),
        cmocka_unit_test(test_off_gives_own_slots),
        cmocka_unit_test(test_runs_again_and_balances),
        cmocka_unit_test(test_model_inputs_and_outputs_keep_their_bytes),
        cmocka_unit_test(test_elementwise_takes_a_dead_input),
        cmocka_unit_test(test_softmax_takes_its_dead_input),
        cmocka_unit_test(test_update_slice_takes_its_operand),
        cmocka_unit_test(test_bitcast_shares_across_dtypes),
        cmocka_unit_test(test_trace_names_the_shared_slot),
        cmocka_unit_test(test_alive_names_the_holder),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
