/* The XNNPACK peer (peers/xnnpack_runtime.h): XNNPACK's own subgraph runtime, built from our
 * graph, judged against our engine and against figures this file derives on its own.
 *
 * For every model: both run on the oracle's reference input and their outputs must agree
 * within float tolerance, quantized outputs within one step with their largest value at the
 * same element (our engine is an independent implementation here: its MEAN,
 * TANH, padding and 1x1-pool paths are its own code, its operators are created one by one);
 * the runtime's workspace must be at least the live-set lower bound of the internal tensors,
 * computed here from the model's operator list (first writer to last reader) and the shapes
 * the session reports; every byte XNNPACK allocated for the peer must be freed when it is
 * destroyed, and runs allocate nothing. Models the peer cannot express must be refused with
 * the operator named, and that operator must be one of the model's own.
 *
 * Covered: the zoo, a hand-written graph exercising every operator mapping (SAME padding with
 * stride above the kernel, depth multiplier, pooling, PAD, RESIZE_BILINEAR, broadcasting,
 * standalone activations, MEAN without keep_dims, FULLY_CONNECTED over a 4D input, RESHAPE,
 * an output read by another operator), a graph of the float32 operators mapped to this
 * XNNPACK's other nodes (HARD_SWISH, TRANSPOSE_CONV with and without XNNPACK's adjustment,
 * MediaPipe's Convolution2DTransposeBias, PRELU, DEPTH_TO_SPACE, the elementwise ones, a
 * hybrid convolution of int8 weights dequantized once),
 * refusals built here (TANH, fused TANH), a quantized
 * graph (QUANTIZE, per-channel int8 convolutions, max pooling, ADD, whole-map average
 * pooling, RESHAPE, FULLY_CONNECTED, SOFTMAX, DEQUANTIZE) and its refusals (per-channel
 * FULLY_CONNECTED weights, a partial quantized average pool), and every model in
 * ../shared/models (skipped with a message when absent). The memory table per shared model
 * the peer runs is printed for quoting. */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model/ops.h"
#include "engine/model/reference_input.h"
#include "engine/model/tflite_writer.h"
#include "engine/model/zoo.h"
#include "engine/session.h"
#include "peers/xnnpack_runtime.h"

#define REL_TOL 1e-4
#define ABS_TOL 1e-5 /* times max(1, largest |reference|) */
#define Q_TOL 1.0    /* quantized outputs: steps of their scale */

/* ---- sessions ------------------------------------------------------------------------ */

/* A prepared session on a model spec or bytes; NULL (and err set) when the engine refuses. */
static mp_session *open_session(const char *spec, const void *bytes, size_t size, int threads,
                                mp_error *err)
{
    mp_session_options so = {.threads = threads};
    mp_session *s = NULL;
    assert_int_equal(mp_session_create(&so, &s, err), MP_OK);
    mp_status st = bytes ? mp_session_load_memory(s, bytes, size, spec, err)
                         : mp_session_load(s, spec, err);
    if (st == MP_OK)
        st = mp_session_prepare(s, err);
    if (st != MP_OK) {
        mp_session_destroy(s);
        return NULL;
    }
    return s;
}

/* Fill both runtimes' inputs with the reference formula (input k uses offset k). */
static void feed_reference(mp_session *s, mp_xnn_peer *p)
{
    mp_error err;
    for (int k = 0; k < mp_session_input_count(s); k++) {
        const mp_tensor *x = mp_session_input(s, k);
        size_t n = mp_tensor_elements(x);
        void *buf = calloc(x->bytes + 16, 1);
        assert_non_null(buf);
        assert_true(mp_reference_input(buf, x->dtype, n, k));
        assert_int_equal(mp_session_set_input(s, k, buf, x->bytes, &err), MP_OK);
        if (p) {
            assert_int_equal(mp_xnn_peer_input_bytes(p, k), x->bytes);
            assert_int_equal(mp_xnn_peer_set_input(p, k, buf, x->bytes, &err), MP_OK);
        }
        free(buf);
    }
}

/* Largest |peer - engine| of a quantized output over Q_TOL (raw integers, steps of the scale).
 * *same_top: both put their largest value at the same element. */
static double compare_quantized(const mp_tensor *o, const void *ref, const void *got, int j,
                                const char *label, bool *same_top)
{
    size_t n = mp_tensor_elements(o), top_r = 0, top_g = 0;
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        int r = o->dtype == MP_DT_INT8 ? ((const int8_t *)ref)[i] : ((const uint8_t *)ref)[i];
        int g = o->dtype == MP_DT_INT8 ? ((const int8_t *)got)[i] : ((const uint8_t *)got)[i];
        int rt = o->dtype == MP_DT_INT8 ? ((const int8_t *)ref)[top_r] : ((const uint8_t *)ref)[top_r];
        int gt = o->dtype == MP_DT_INT8 ? ((const int8_t *)got)[top_g] : ((const uint8_t *)got)[top_g];
        top_r = r > rt ? i : top_r;
        top_g = g > gt ? i : top_g;
        double e = fabs((double)(g - r)) / Q_TOL;
        if (e > worst) {
            worst = e;
            if (worst > 1)
                print_message("  %s: output %d element %zu: peer %d engine %d\n", label, j, i, g,
                              r);
        }
    }
    *same_top = top_r == top_g;
    return worst;
}

/* Largest |peer - engine| / (REL_TOL |engine| + ABS_TOL scale) over every output: <= 1 passes.
 * Quantized (int8, uint8) outputs: the largest difference in steps over Q_TOL; their largest
 * values must sit at the same element. */
static double compare_outputs(mp_session *s, mp_xnn_peer *p, const char *label)
{
    double worst = 0;
    assert_int_equal(mp_xnn_peer_output_count(p), mp_session_output_count(s));
    for (int j = 0; j < mp_session_output_count(s); j++) {
        const mp_tensor *o = mp_session_output(s, j);
        if (o->dtype == MP_DT_INT8 || o->dtype == MP_DT_UINT8) {
            assert_int_equal(mp_xnn_peer_output_bytes(p, j), o->bytes);
            void *ref = malloc(o->bytes + 4), *got = malloc(o->bytes + 4);
            assert_true(ref && got);
            mp_error err;
            assert_int_equal(mp_session_get_output(s, j, ref, o->bytes, &err), MP_OK);
            assert_int_equal(mp_xnn_peer_get_output(p, j, got, o->bytes, &err), MP_OK);
            bool same_top;
            double e = compare_quantized(o, ref, got, j, label, &same_top);
            if (!same_top)
                print_message("  %s: output %d: the largest values sit at different elements\n",
                              label, j);
            assert_true(same_top);
            worst = fmax(worst, e);
            free(ref);
            free(got);
            continue;
        }
        assert_int_equal(o->dtype, MP_DT_FLOAT32);
        assert_int_equal(mp_xnn_peer_output_bytes(p, j), o->bytes);
        size_t n = mp_tensor_elements(o);
        float *ref = malloc(o->bytes + 4), *got = malloc(o->bytes + 4);
        assert_non_null(ref);
        assert_non_null(got);
        mp_error err;
        assert_int_equal(mp_session_get_output(s, j, ref, o->bytes, &err), MP_OK);
        assert_int_equal(mp_xnn_peer_get_output(p, j, got, o->bytes, &err), MP_OK);
        double scale = 1;
        for (size_t i = 0; i < n; i++)
            if (fabs(ref[i]) > scale)
                scale = fabs(ref[i]);
        for (size_t i = 0; i < n; i++) {
            double d = fabs((double)got[i] - (double)ref[i]);
            double e = d / (REL_TOL * fabs((double)ref[i]) + ABS_TOL * scale);
            if (!(e <= worst)) {
                worst = isnan(e) ? INFINITY : e;
                if (worst > 1)
                    print_message("  %s: output %d element %zu: peer %.9g engine %.9g\n", label,
                                  j, i, (double)got[i], (double)ref[i]);
            }
        }
        free(ref);
        free(got);
    }
    return worst;
}

/* ---- the live-set lower bound, from the operator list ---------------------------------- */

/* Internal tensors: not constant, not a model input or output, written by an operator that
 * runs (not computed at prepare: SHAPE, or every input constant or such a result). Alive from
 * their writer to their last reader. A tensor read only by a standalone RELU / RELU6 /
 * RELU_N1_TO_1 may be fused away by XNNPACK (the activation becomes its writer's output
 * bounds): left out, which can only lower the bound. */
static uint64_t internal_lower_bound(const mp_session *s)
{
    const mp_model *m = mp_session_model(s);
    int32_t nt = m->n_tensors, no = m->n_ops;
    bool *known = calloc((size_t)nt + 1, 1), *internal = calloc((size_t)nt + 1, 1);
    int32_t *first = malloc(sizeof(int32_t) * ((size_t)nt + 1));
    int32_t *last = malloc(sizeof(int32_t) * ((size_t)nt + 1));
    int32_t *readers = calloc((size_t)nt + 1, sizeof(int32_t));
    bool *folded = calloc((size_t)no + 1, 1);
    assert_true(known && internal && first && last && readers && folded);
    for (int32_t t = 0; t < nt; t++) {
        known[t] = m->tensors[t].data != NULL;
        first[t] = INT32_MAX;
        last[t] = -1;
    }
    for (int32_t i = 0; i < no; i++) {
        const mp_op_info *o = &m->ops[i];
        bool all = true;
        for (int32_t j = 0; j < o->n_inputs; j++)
            if (o->inputs[j] >= 0 && !known[o->inputs[j]])
                all = false;
        folded[i] = o->opcode == MP_OP_SHAPE || all;
        for (int32_t j = 0; j < o->n_outputs; j++) {
            int32_t t = o->outputs[j];
            if (folded[i]) {
                known[t] = true;
            } else {
                internal[t] = true;
                if (i < first[t])
                    first[t] = i;
            }
        }
        if (folded[i])
            continue;
        for (int32_t j = 0; j < o->n_inputs; j++) {
            int32_t t = o->inputs[j];
            if (t >= 0 && !known[t]) {
                readers[t]++;
                if (i > last[t])
                    last[t] = i;
            }
        }
    }
    for (int32_t k = 0; k < m->n_inputs + m->n_outputs; k++)
        internal[k < m->n_inputs ? m->inputs[k] : m->outputs[k - m->n_inputs]] = false;
    for (int32_t i = 0; i < no; i++) {
        const mp_op_info *o = &m->ops[i];
        bool act = o->opcode == MP_OP_RELU || o->opcode == MP_OP_RELU6 ||
                   o->opcode == MP_OP_RELU_N1_TO_1;
        if (!folded[i] && act && o->inputs[0] >= 0 && readers[o->inputs[0]] == 1)
            internal[o->inputs[0]] = false;
    }
    uint64_t best = 0;
    for (int32_t step = 0; step < no; step++) {
        uint64_t sum = 0;
        for (int32_t t = 0; t < nt; t++) {
            if (!internal[t] || first[t] == INT32_MAX)
                continue;
            int32_t end = last[t] < first[t] ? first[t] : last[t];
            if (first[t] <= step && step <= end) {
                const mp_tensor *x = mp_session_tensor(s, t);
                uint64_t n = 1;
                for (int32_t d = 0; d < x->rank; d++)
                    n *= (uint64_t)x->dims[d];
                sum += n * mp_dtype_size(x->dtype);
            }
        }
        if (sum > best)
            best = sum;
    }
    free(known);
    free(internal);
    free(first);
    free(last);
    free(readers);
    free(folded);
    return best;
}

/* ---- one model through both ---------------------------------------------------------- */

typedef struct outcome {
    bool engine_ok, peer_ok;
    mp_status engine_status, peer_status;
    char msg[512];
    mp_xnn_peer_memory mem;
    uint64_t lower_bound;
    double err;
} outcome;

/* Run engine and peer on the reference input, compare, check memory invariants. */
static outcome check_model(const char *label, const char *spec, const void *bytes, size_t size,
                           int threads)
{
    outcome r;
    memset(&r, 0, sizeof r);
    mp_error err;
    mp_session *s = open_session(spec, bytes, size, threads, &err);
    if (!s) {
        r.engine_status = err.status;
        snprintf(r.msg, sizeof r.msg, "%s", err.msg);
        return r;
    }
    r.engine_ok = true;
    mp_xnn_peer_options po = {.threads = threads};
    mp_xnn_peer *p = NULL;
    r.peer_status = mp_xnn_peer_create(s, &po, &p, &err);
    if (r.peer_status != MP_OK) {
        assert_null(p);
        snprintf(r.msg, sizeof r.msg, "%s", err.msg);
        mp_session_destroy(s);
        return r;
    }
    r.peer_ok = true;
    for (int round = 0; round < 2; round++) { /* a second run must give the same */
        feed_reference(s, p);
        assert_int_equal(mp_session_run(s, &err), MP_OK);
        assert_int_equal(mp_xnn_peer_run(p, &err), MP_OK);
        double e = compare_outputs(s, p, label);
        if (e > r.err)
            r.err = e;
    }
    mp_xnn_peer_memory_info(p, &r.mem);
    r.lower_bound = internal_lower_bound(s);

    const mp_xnn_peer_memory *mm = &r.mem;
    if (!mm->workspace_found || mm->workspace_bytes < r.lower_bound)
        print_message("  %s: workspace %llu (found %d, bound %llu) lower bound %llu\n", label,
                      (unsigned long long)mm->workspace_bytes, (int)mm->workspace_found,
                      (unsigned long long)mm->workspace_upper_bound,
                      (unsigned long long)r.lower_bound);
    assert_true(mm->workspace_found);
    assert_true(mm->workspace_bytes >= r.lower_bound);
    assert_true(mm->workspace_bytes <= mm->workspace_upper_bound);
    assert_int_equal(mm->run_allocations, 0);
    assert_int_equal(mm->runs, 2);
    assert_int_equal(mm->live_bytes, mm->workspace_bytes + mm->other_bytes);
    assert_true(mm->peak_bytes >= mm->live_bytes);
    assert_true(mm->operator_count >= 1);
    /* the peer's I/O buffers hold exactly the model's inputs and outputs */
    uint64_t io = 0;
    for (int k = 0; k < mp_session_input_count(s); k++)
        io += mp_session_input(s, k)->bytes;
    for (int k = 0; k < mp_session_output_count(s); k++)
        io += mp_session_output(s, k)->bytes;
    assert_true(mm->external_bytes <= io);

    mp_xnn_peer_memory fin;
    mp_xnn_peer_destroy(p, &fin);
    assert_int_equal(fin.live_bytes, 0);
    assert_int_equal(fin.live_count, 0);
    assert_int_equal(fin.bytes_allocated, fin.bytes_freed);
    assert_int_equal(fin.n_alloc, fin.n_free);
    assert_true(fin.bytes_allocated > 0);
    mp_session_destroy(s);
    return r;
}

/* The refusal names an operator of the model by index and name. */
static void assert_names_operator(const char *msg, const void *bytes, size_t size,
                                  const char *spec, const char *expect_op)
{
    const char *at = strstr(msg, "has no equivalent of operator ");
    if (!at)
        print_message("  message: %s\n", msg);
    assert_non_null(at);
    int idx = -1;
    char name[64] = "";
    assert_int_equal(sscanf(at, "has no equivalent of operator %d (%63[^)])", &idx, name), 2);
    mp_error err;
    mp_model *m = NULL;
    mp_status st = bytes ? mp_model_load_memory(bytes, size, spec, &m, &err)
                         : mp_model_open(spec, &m, &err);
    assert_int_equal(st, MP_OK);
    assert_true(idx >= 0 && idx < m->n_ops);
    const char *real = mp_op_name(m->ops[idx].opcode);
    assert_non_null(real);
    assert_string_equal(name, real);
    if (expect_op)
        assert_string_equal(name, expect_op);
    mp_model_free(m);
}

/* ---- the zoo ------------------------------------------------------------------------- */

static void test_zoo(void **state)
{
    (void)state;
    for (int i = 0; i < mp_zoo_count(); i++) {
        char spec[128];
        snprintf(spec, sizeof spec, "zoo:%s", mp_zoo_entry_at(i)->name);
        outcome r = check_model(spec, spec, NULL, 0, 1);
        print_message("  %-28s %s  max error %.3f of tolerance  workspace %llu >= %llu\n", spec,
                      r.peer_ok ? "ok" : r.msg, r.err,
                      (unsigned long long)r.mem.workspace_bytes,
                      (unsigned long long)r.lower_bound);
        assert_true(r.engine_ok);
        assert_true(r.peer_ok);
        assert_true(r.err <= 1.0);
    }
}

static void test_zoo_threads(void **state)
{
    (void)state;
    outcome r = check_model("zoo:mobilenet_v1 (4 threads)", "zoo:mobilenet_v1", NULL, 0, 4);
    assert_true(r.peer_ok);
    assert_true(r.err <= 1.0);
}

/* ---- hand-written graphs ------------------------------------------------------------- */

static uint32_t g_seed = 12345;

static float rnd(void)
{
    g_seed = g_seed * 1664525u + 1013904223u;
    return (float)((g_seed >> 8) & 0xffff) / 65536.0f - 0.5f;
}

static int const_f32(mp_tfw *w, const char *name, int rank, const int32_t *dims, float scale)
{
    size_t n = 1;
    for (int d = 0; d < rank; d++)
        n *= (size_t)dims[d];
    float *v = malloc(n * sizeof(float));
    assert_non_null(v);
    for (size_t i = 0; i < n; i++)
        v[i] = rnd() * scale;
    int b = mp_tfw_buffer(w, v, n * sizeof(float));
    free(v);
    return mp_tfw_tensor(w, name, MP_DT_FLOAT32, rank, dims, b, NULL);
}

static int const_i32(mp_tfw *w, const char *name, int rank, const int32_t *dims,
                     const int32_t *v, size_t n)
{
    int b = mp_tfw_buffer(w, v, n * sizeof(int32_t));
    return mp_tfw_tensor(w, name, MP_DT_INT32, rank, dims, b, NULL);
}

static int act_tensor(mp_tfw *w, const char *name, int rank, const int32_t *dims)
{
    return mp_tfw_tensor(w, name, MP_DT_FLOAT32, rank, dims, 0, NULL);
}

static void *finish(mp_tfw *w, size_t *size)
{
    void *bytes = NULL;
    mp_error err;
    mp_status st = mp_tfw_finish(w, &bytes, size, &err);
    if (st != MP_OK)
        print_message("writer: %s\n", err.msg);
    assert_int_equal(st, MP_OK);
    mp_tfw_free(w);
    return bytes;
}

/* Every mapping of the peer in one graph (shapes in the comments). */
static void *graph_all_ops(size_t *size)
{
    mp_tfw *w = mp_tfw_create();
    assert_non_null(w);
    mp_op_options o;
    int x = act_tensor(w, "x", 4, (int32_t[]){1, 9, 9, 3});
    /* CONV_2D 3x3 stride 2 SAME, RELU6 -> [1,5,5,4] */
    int f1 = const_f32(w, "f1", 4, (int32_t[]){4, 3, 3, 3}, 0.8f);
    int b1 = const_f32(w, "b1", 1, (int32_t[]){4}, 0.2f);
    int t1 = act_tensor(w, "t1", 4, (int32_t[]){1, 5, 5, 4});
    o = mp_tfw_options_default();
    o.padding = MP_PAD_SAME;
    o.stride_h = o.stride_w = 2;
    o.activation = MP_ACT_RELU6;
    mp_tfw_op(w, MP_OP_CONV_2D, 3, (int32_t[]){x, f1, b1}, 1, &t1, &o);
    /* DEPTHWISE 3x3 multiplier 2, SAME, dilation 2, no bias -> [1,5,5,8] */
    int f2 = const_f32(w, "f2", 4, (int32_t[]){1, 3, 3, 8}, 0.8f);
    int t2 = act_tensor(w, "t2", 4, (int32_t[]){1, 5, 5, 8});
    o = mp_tfw_options_default();
    o.padding = MP_PAD_SAME;
    o.stride_h = o.stride_w = 1;
    o.dilation_h = o.dilation_w = 2;
    o.depth_multiplier = 2;
    mp_tfw_op(w, MP_OP_DEPTHWISE_CONV_2D, 3, (int32_t[]){t1, f2, -1}, 1, &t2, &o);
    /* AVERAGE_POOL 2x2 stride 2 SAME -> [1,3,3,8] */
    int t3 = act_tensor(w, "t3", 4, (int32_t[]){1, 3, 3, 8});
    o = mp_tfw_options_default();
    o.padding = MP_PAD_SAME;
    o.stride_h = o.stride_w = 2;
    o.filter_h = o.filter_w = 2;
    mp_tfw_op(w, MP_OP_AVERAGE_POOL_2D, 1, &t2, 1, &t3, &o);
    /* PAD H and W by 1 -> [1,5,5,8] */
    int pads = const_i32(w, "pads", 2, (int32_t[]){4, 2}, (int32_t[]){0, 0, 1, 1, 1, 1, 0, 0}, 8);
    int t4 = act_tensor(w, "t4", 4, (int32_t[]){1, 5, 5, 8});
    mp_tfw_op(w, MP_OP_PAD, 2, (int32_t[]){t3, pads}, 1, &t4, NULL);
    /* MAX_POOL 3x3 stride 1 VALID -> [1,3,3,8] */
    int t5 = act_tensor(w, "t5", 4, (int32_t[]){1, 3, 3, 8});
    o = mp_tfw_options_default();
    o.padding = MP_PAD_VALID;
    o.stride_h = o.stride_w = 1;
    o.filter_h = o.filter_w = 3;
    mp_tfw_op(w, MP_OP_MAX_POOL_2D, 1, &t4, 1, &t5, &o);
    /* RESIZE_BILINEAR to 6x6, half-pixel centers -> [1,6,6,8] */
    int sz = const_i32(w, "size", 1, (int32_t[]){2}, (int32_t[]){6, 6}, 2);
    int t6 = act_tensor(w, "t6", 4, (int32_t[]){1, 6, 6, 8});
    o = mp_tfw_options_default();
    o.half_pixel_centers = true;
    mp_tfw_op(w, MP_OP_RESIZE_BILINEAR, 2, (int32_t[]){t5, sz}, 1, &t6, &o);
    /* MUL by a constant [8] (broadcast) */
    int cm = const_f32(w, "cm", 1, (int32_t[]){8}, 2.0f);
    int t7 = act_tensor(w, "t7", 4, (int32_t[]){1, 6, 6, 8});
    mp_tfw_op(w, MP_OP_MUL, 2, (int32_t[]){t6, cm}, 1, &t7, NULL);
    /* SUB, RELU_N1_TO_1 fused: t7 - t6 (an output, read again below) */
    int t8 = act_tensor(w, "t8", 4, (int32_t[]){1, 6, 6, 8});
    o = mp_tfw_options_default();
    o.activation = MP_ACT_RELU_N1_TO_1;
    mp_tfw_op(w, MP_OP_SUB, 2, (int32_t[]){t7, t6}, 1, &t8, &o);
    /* DIV by a constant scalar, LOGISTIC, RELU6 (standalone) */
    const float divisor = 2.5f;
    int cd = mp_tfw_tensor(w, "cd", MP_DT_FLOAT32, 0, NULL,
                           mp_tfw_buffer(w, &divisor, sizeof divisor), NULL);
    int t8b = act_tensor(w, "t8b", 4, (int32_t[]){1, 6, 6, 8});
    mp_tfw_op(w, MP_OP_DIV, 2, (int32_t[]){t8, cd}, 1, &t8b, NULL);
    int t9 = act_tensor(w, "t9", 4, (int32_t[]){1, 6, 6, 8});
    mp_tfw_op(w, MP_OP_LOGISTIC, 1, &t8b, 1, &t9, NULL);
    int t10 = act_tensor(w, "t10", 4, (int32_t[]){1, 6, 6, 8});
    mp_tfw_op(w, MP_OP_RELU6, 1, &t9, 1, &t10, NULL);
    /* MEAN over H, W without keep_dims -> [1,8] */
    int axes = const_i32(w, "axes", 1, (int32_t[]){2}, (int32_t[]){1, 2}, 2);
    int t11 = act_tensor(w, "t11", 2, (int32_t[]){1, 8});
    o = mp_tfw_options_default();
    o.keep_dims = false;
    mp_tfw_op(w, MP_OP_MEAN, 2, (int32_t[]){t10, axes}, 1, &t11, &o);
    /* FULLY_CONNECTED [5,8] + bias, RELU -> [1,5]; RESHAPE -> [5]; SOFTMAX */
    int w12 = const_f32(w, "w12", 2, (int32_t[]){5, 8}, 1.0f);
    int b12 = const_f32(w, "b12", 1, (int32_t[]){5}, 0.5f);
    int t12 = act_tensor(w, "t12", 2, (int32_t[]){1, 5});
    o = mp_tfw_options_default();
    o.activation = MP_ACT_RELU;
    mp_tfw_op(w, MP_OP_FULLY_CONNECTED, 3, (int32_t[]){t11, w12, b12}, 1, &t12, &o);
    int shp = const_i32(w, "shape", 1, (int32_t[]){1}, (int32_t[]){5}, 1);
    int t13 = act_tensor(w, "t13", 1, (int32_t[]){5});
    mp_tfw_op(w, MP_OP_RESHAPE, 2, (int32_t[]){t12, shp}, 1, &t13, NULL);
    int y1 = act_tensor(w, "y1", 1, (int32_t[]){5});
    o = mp_tfw_options_default();
    o.beta = 1.0f;
    mp_tfw_op(w, MP_OP_SOFTMAX, 1, &t13, 1, &y1, &o);
    /* FULLY_CONNECTED over the 4D t5 (flattened, no bias) -> [1,4] */
    int w14 = const_f32(w, "w14", 2, (int32_t[]){4, 72}, 0.3f);
    int y2 = act_tensor(w, "y2", 2, (int32_t[]){1, 4});
    mp_tfw_op(w, MP_OP_FULLY_CONNECTED, 3, (int32_t[]){t5, w14, -1}, 1, &y2, NULL);
    /* CONV_2D 1x1 stride 2 SAME (stride above the kernel), no bias -> [1,3,3,2]; ADD */
    int f15 = const_f32(w, "f15", 4, (int32_t[]){2, 1, 1, 4}, 1.0f);
    int t15 = act_tensor(w, "t15", 4, (int32_t[]){1, 3, 3, 2});
    o = mp_tfw_options_default();
    o.padding = MP_PAD_SAME;
    o.stride_h = o.stride_w = 2;
    mp_tfw_op(w, MP_OP_CONV_2D, 3, (int32_t[]){t1, f15, -1}, 1, &t15, &o);
    int y3 = act_tensor(w, "y3", 4, (int32_t[]){1, 3, 3, 2});
    mp_tfw_op(w, MP_OP_ADD, 2, (int32_t[]){t15, t15}, 1, &y3, NULL);
    mp_tfw_io(w, 1, &x, 4, (int32_t[]){y1, t8, y2, y3});
    return finish(w, size);
}

static void test_all_ops(void **state)
{
    (void)state;
    size_t size = 0;
    void *bytes = graph_all_ops(&size);
    outcome r = check_model("all_ops", "all_ops", bytes, size, 1);
    if (!r.peer_ok)
        print_message("  %s\n", r.msg);
    assert_true(r.engine_ok);
    assert_true(r.peer_ok);
    print_message("  all_ops: max error %.3f of tolerance, %llu XNNPACK nodes, workspace %llu >= "
                  "%llu\n",
                  r.err, (unsigned long long)r.mem.xnn_nodes,
                  (unsigned long long)r.mem.workspace_bytes, (unsigned long long)r.lower_bound);
    assert_true(r.err <= 1.0);
    /* one node per operator (18), plus the reshape after MEAN */
    assert_int_equal(r.mem.xnn_nodes, 19);
    free(bytes);
}

/* The float32 operators mapped to this XNNPACK's other nodes (shapes in the comments):
 * HARD_SWISH, TRANSPOSE_CONV (SAME, and VALID with an adjustment), MediaPipe's
 * Convolution2DTransposeBias, LEAKY_RELU, PRELU, DEPTH_TO_SPACE, MAXIMUM, MINIMUM,
 * SQUARED_DIFFERENCE, ABS, SQRT, NEG, FLOOR, CEIL, ROUND, SQUARE, ELU, and a hybrid CONV_2D
 * (float32 input, int8 weights of one scale per output channel, a float16 bias: the
 * weights dequantized once): 19 operators. */
static void *graph_float_ops(size_t *size)
{
    mp_tfw *w = mp_tfw_create();
    assert_non_null(w);
    mp_op_options o;
    int x = act_tensor(w, "x", 4, (int32_t[]){1, 6, 6, 4});
    int h = act_tensor(w, "h", 4, (int32_t[]){1, 6, 6, 4});
    mp_tfw_op(w, MP_OP_HARD_SWISH, 1, &x, 1, &h, NULL);
    /* TRANSPOSE_CONV 3x3 stride 2 SAME to [1,12,12,3] (padding 0 before, 1 after) */
    int os1 = const_i32(w, "os1", 1, (int32_t[]){4}, (int32_t[]){1, 12, 12, 3}, 4);
    int w1 = const_f32(w, "w1", 4, (int32_t[]){3, 3, 3, 4}, 0.8f);
    int b1 = const_f32(w, "b1", 1, (int32_t[]){3}, 0.3f);
    int t1 = act_tensor(w, "t1", 4, (int32_t[]){1, 12, 12, 3});
    o = mp_tfw_options_default();
    o.padding = MP_PAD_SAME;
    o.stride_h = o.stride_w = 2;
    mp_tfw_op(w, MP_OP_TRANSPOSE_CONV, 4, (int32_t[]){os1, w1, h, b1}, 1, &t1, &o);
    /* TRANSPOSE_CONV 2x2 stride 2 VALID to [1,13,13,2]: 2 * 5 + 2 = 12, one more row and
     * column by XNNPACK's adjustment; no bias */
    int os2 = const_i32(w, "os2", 1, (int32_t[]){4}, (int32_t[]){1, 13, 13, 2}, 4);
    int w2 = const_f32(w, "w2", 4, (int32_t[]){2, 2, 2, 4}, 0.8f);
    int t2 = act_tensor(w, "t2", 4, (int32_t[]){1, 13, 13, 2});
    o.padding = MP_PAD_VALID;
    mp_tfw_op(w, MP_OP_TRANSPOSE_CONV, 3, (int32_t[]){os2, w2, h}, 1, &t2, &o);
    /* MediaPipe's Convolution2DTransposeBias, SAME stride 2 (TfLiteTransposeConvParams),
     * 3x3: total padding 3 - 5 % 2 - 1 = 1, so [1,12,12,2] */
    static const int32_t mp_opts[3] = {1, 2, 2};
    int w3 = const_f32(w, "w3", 4, (int32_t[]){2, 3, 3, 4}, 0.8f);
    int b3 = const_f32(w, "b3", 1, (int32_t[]){2}, 0.3f);
    int y1 = act_tensor(w, "y1", 4, (int32_t[]){1, 12, 12, 2});
    mp_tfw_custom_op(w, "Convolution2DTransposeBias", mp_opts, sizeof mp_opts, 3,
                     (int32_t[]){h, w3, b3}, 1, &y1);
    /* LEAKY_RELU (alpha 0.2), PRELU with [1,1,3] slopes */
    int t4 = act_tensor(w, "t4", 4, (int32_t[]){1, 12, 12, 3});
    o = mp_tfw_options_default();
    o.alpha = 0.2f;
    mp_tfw_op(w, MP_OP_LEAKY_RELU, 1, &t1, 1, &t4, &o);
    int al = const_f32(w, "alpha", 3, (int32_t[]){1, 1, 3}, 1.0f);
    int t5 = act_tensor(w, "t5", 4, (int32_t[]){1, 12, 12, 3});
    mp_tfw_op(w, MP_OP_PRELU, 2, (int32_t[]){t4, al}, 1, &t5, NULL);
    /* DEPTH_TO_SPACE block 2: [1,6,6,4] -> [1,12,12,1] */
    int y2 = act_tensor(w, "y2", 4, (int32_t[]){1, 12, 12, 1});
    o = mp_tfw_options_default();
    o.block_size = 2;
    mp_tfw_op(w, MP_OP_DEPTH_TO_SPACE, 1, &x, 1, &y2, &o);
    /* MAXIMUM with [3] (broadcast), MINIMUM with a scalar, SQUARED_DIFFERENCE with t1 */
    int cmax = const_f32(w, "cmax", 1, (int32_t[]){3}, 0.5f);
    int t6 = act_tensor(w, "t6", 4, (int32_t[]){1, 12, 12, 3});
    mp_tfw_op(w, MP_OP_MAXIMUM, 2, (int32_t[]){t5, cmax}, 1, &t6, NULL);
    const float lim = 0.7f;
    int cmin = mp_tfw_tensor(w, "cmin", MP_DT_FLOAT32, 0, NULL, mp_tfw_buffer(w, &lim, sizeof lim),
                             NULL);
    int t7 = act_tensor(w, "t7", 4, (int32_t[]){1, 12, 12, 3});
    mp_tfw_op(w, MP_OP_MINIMUM, 2, (int32_t[]){t6, cmin}, 1, &t7, NULL);
    int t8 = act_tensor(w, "t8", 4, (int32_t[]){1, 12, 12, 3});
    mp_tfw_op(w, MP_OP_SQUARED_DIFFERENCE, 2, (int32_t[]){t7, t1}, 1, &t8, NULL);
    /* ABS of t1 - (its own square difference is >= 0 already), SQRT, NEG, FLOOR */
    int t9 = act_tensor(w, "t9", 4, (int32_t[]){1, 12, 12, 3});
    mp_tfw_op(w, MP_OP_ABS, 1, &t1, 1, &t9, NULL);
    int t10 = act_tensor(w, "t10", 4, (int32_t[]){1, 12, 12, 3});
    mp_tfw_op(w, MP_OP_SQRT, 1, &t9, 1, &t10, NULL);
    int t11 = act_tensor(w, "t11", 4, (int32_t[]){1, 12, 12, 3});
    mp_tfw_op(w, MP_OP_NEG, 1, &t10, 1, &t11, NULL);
    int y3 = act_tensor(w, "y3", 4, (int32_t[]){1, 12, 12, 3});
    mp_tfw_op(w, MP_OP_FLOOR, 1, &t11, 1, &y3, NULL);
    /* CEIL, ROUND, SQUARE, ELU of earlier values */
    int y4 = act_tensor(w, "y4", 4, (int32_t[]){1, 12, 12, 3});
    mp_tfw_op(w, MP_OP_CEIL, 1, &t8, 1, &y4, NULL);
    int y5 = act_tensor(w, "y5", 4, (int32_t[]){1, 12, 12, 3});
    mp_tfw_op(w, MP_OP_ROUND, 1, &t1, 1, &y5, NULL);
    int y6 = act_tensor(w, "y6", 4, (int32_t[]){1, 13, 13, 2});
    mp_tfw_op(w, MP_OP_SQUARE, 1, &t2, 1, &y6, NULL);
    int y7 = act_tensor(w, "y7", 4, (int32_t[]){1, 12, 12, 3});
    mp_tfw_op(w, MP_OP_ELU, 1, &t7, 1, &y7, NULL);
    /* hybrid CONV_2D 1x1 over x: int8 weights [2,1,1,4] per output channel, float16 bias */
    const int8_t wq[8] = {-128, -3, 7, 127, 64, -64, 1, 0};
    int w8 = mp_tfw_tensor(w, "w8", MP_DT_INT8, 4, (int32_t[]){2, 1, 1, 4},
                           mp_tfw_buffer(w, wq, sizeof wq), NULL);
    mp_tfw_tensor_quant(w, w8, 2, (float[]){0.01f, 0.02f}, NULL, 0);
    const uint16_t b16[2] = {0x3C00, 0xB800}; /* 1.0, -0.5 */
    int bh = mp_tfw_tensor(w, "b16", MP_DT_FLOAT16, 1, (int32_t[]){2},
                           mp_tfw_buffer(w, b16, sizeof b16), NULL);
    int y8 = act_tensor(w, "y8", 4, (int32_t[]){1, 6, 6, 2});
    o = mp_tfw_options_default();
    o.padding = MP_PAD_VALID;
    o.stride_h = o.stride_w = 1;
    mp_tfw_op(w, MP_OP_CONV_2D, 3, (int32_t[]){x, w8, bh}, 1, &y8, &o);
    mp_tfw_io(w, 1, &x, 8, (int32_t[]){y1, y2, y3, y4, y5, y6, y7, y8});
    return finish(w, size);
}

static void test_float_ops(void **state)
{
    (void)state;
    size_t size = 0;
    void *bytes = graph_float_ops(&size);
    outcome r = check_model("float_ops", "float_ops", bytes, size, 1);
    if (!r.peer_ok)
        print_message("  %s\n", r.msg);
    assert_true(r.engine_ok);
    assert_true(r.peer_ok);
    print_message("  float_ops: max error %.3f of tolerance, %llu XNNPACK nodes\n", r.err,
                  (unsigned long long)r.mem.xnn_nodes);
    assert_true(r.err <= 1.0);
    assert_int_equal(r.mem.xnn_nodes, 19); /* one node per operator */
    free(bytes);
}

/* x [1,4] -> FULLY_CONNECTED (fused activation `act`) -> TANH when `tanh_op`. */
static void *graph_refused(bool tanh_op, int act, size_t *size)
{
    mp_tfw *w = mp_tfw_create();
    assert_non_null(w);
    int x = act_tensor(w, "x", 2, (int32_t[]){1, 4});
    int wt = const_f32(w, "w", 2, (int32_t[]){3, 4}, 1.0f);
    int h = act_tensor(w, "h", 2, (int32_t[]){1, 3});
    mp_op_options o = mp_tfw_options_default();
    o.activation = act;
    mp_tfw_op(w, MP_OP_FULLY_CONNECTED, 3, (int32_t[]){x, wt, -1}, 1, &h, &o);
    int y = h;
    if (tanh_op) {
        y = act_tensor(w, "y", 2, (int32_t[]){1, 3});
        mp_tfw_op(w, MP_OP_TANH, 1, &h, 1, &y, NULL);
    }
    mp_tfw_io(w, 1, &x, 1, &y);
    return finish(w, size);
}

static void test_refusals(void **state)
{
    (void)state;
    size_t size;
    void *bytes = graph_refused(true, MP_ACT_NONE, &size);
    outcome r = check_model("tanh", "tanh", bytes, size, 1);
    assert_true(r.engine_ok);
    assert_false(r.peer_ok);
    assert_int_equal(r.peer_status, MP_ERR_UNSUPPORTED);
    print_message("  refused: %s\n", r.msg);
    assert_names_operator(r.msg, bytes, size, "tanh", "TANH");
    assert_non_null(strstr(r.msg, "operator 1 (TANH)"));
    free(bytes);

    bytes = graph_refused(false, MP_ACT_TANH, &size);
    r = check_model("fused tanh", "fused tanh", bytes, size, 1);
    assert_true(r.engine_ok);
    assert_false(r.peer_ok);
    assert_int_equal(r.peer_status, MP_ERR_UNSUPPORTED);
    print_message("  refused: %s\n", r.msg);
    assert_names_operator(r.msg, bytes, size, "fused tanh", "FULLY_CONNECTED");
    assert_non_null(strstr(r.msg, "fused activation TANH"));
    free(bytes);
}

/* ---- a quantized graph ------------------------------------------------------------- */

/* An int8 activation [dims] with one scale and zero point. */
static int act_q(mp_tfw *w, const char *name, int rank, const int32_t *dims, float scale,
                 int64_t zp)
{
    int t = mp_tfw_tensor(w, name, MP_DT_INT8, rank, dims, 0, NULL);
    return mp_tfw_tensor_quant(w, t, 1, &scale, &zp, 0);
}

/* Constant int8 weights of `nch` scales along qdim (zero points 0), values in [-127, 127]. */
static int weights_q(mp_tfw *w, const char *name, int rank, const int32_t *dims, int nch,
                     int qdim, float base, float *scales)
{
    size_t n = 1;
    for (int d = 0; d < rank; d++)
        n *= (size_t)dims[d];
    int8_t *v = malloc(n);
    assert_non_null(v);
    for (size_t i = 0; i < n; i++)
        v[i] = (int8_t)(int)(rnd() * 254.0f);
    for (int c = 0; c < nch; c++)
        scales[c] = base * (1.0f + 0.1f * (float)c);
    int b = mp_tfw_buffer(w, v, n);
    free(v);
    int t = mp_tfw_tensor(w, name, MP_DT_INT8, rank, dims, b, NULL);
    return mp_tfw_tensor_quant(w, t, nch, scales, NULL, qdim);
}

/* An int32 bias of n values, scale in_scale * w_scales[c] (one scale when per_tensor). */
static int bias_q(mp_tfw *w, const char *name, int n, float in_scale, const float *w_scales,
                  bool per_tensor)
{
    int32_t v[64];
    float s[64];
    assert_true(n <= 64);
    for (int c = 0; c < n; c++) {
        v[c] = (int32_t)(rnd() * 2000.0f);
        s[c] = in_scale * w_scales[per_tensor ? 0 : c];
    }
    int b = mp_tfw_buffer(w, v, (size_t)n * sizeof(int32_t));
    int t = mp_tfw_tensor(w, name, MP_DT_INT32, 1, (int32_t[]){n}, b, NULL);
    return mp_tfw_tensor_quant(w, t, per_tensor ? 1 : n, s, NULL, 0);
}

/* x float [1,8,8,4] -> QUANTIZE -> CONV_2D 3x3 (per-channel int8 filter, RELU6) ->
 * DEPTHWISE_CONV_2D 3x3 / 2 (per channel, bias omitted) -> MAX_POOL_2D 2x2 / 1 -> ADD (its own
 * scale) -> AVERAGE_POOL_2D over the whole 3x3 map (`avg_window` 2: a 2x2 window instead) ->
 * RESHAPE [1,6] -> FULLY_CONNECTED (int8 weights with one scale, or per channel when
 * `fc_per_channel`) -> SOFTMAX (1/256, -128) and DEQUANTIZE of the logits. */
static void *graph_quantized(bool fc_per_channel, int avg_window, size_t *size)
{
    mp_tfw *w = mp_tfw_create();
    assert_non_null(w);
    float sc[8];
    int x = act_tensor(w, "x", 4, (int32_t[]){1, 8, 8, 4});
    int xq = act_q(w, "xq", 4, (int32_t[]){1, 8, 8, 4}, 1.0f / 128.0f, 3);
    mp_tfw_op(w, MP_OP_QUANTIZE, 1, &x, 1, &xq, NULL);

    int f1 = weights_q(w, "f1", 4, (int32_t[]){6, 3, 3, 4}, 6, 0, 0.004f, sc);
    int b1 = bias_q(w, "b1", 6, 1.0f / 128.0f, sc, false);
    int t1 = act_q(w, "t1", 4, (int32_t[]){1, 8, 8, 6}, 6.0f / 255.0f, -128);
    mp_op_options o = mp_tfw_options_default();
    o.padding = MP_PAD_SAME;
    o.stride_h = o.stride_w = 1;
    o.activation = MP_ACT_RELU6;
    mp_tfw_op(w, MP_OP_CONV_2D, 3, (int32_t[]){xq, f1, b1}, 1, &t1, &o);

    int f2 = weights_q(w, "f2", 4, (int32_t[]){1, 3, 3, 6}, 6, 3, 0.01f, sc);
    int t2 = act_q(w, "t2", 4, (int32_t[]){1, 4, 4, 6}, 0.05f, -10);
    o = mp_tfw_options_default();
    o.padding = MP_PAD_SAME;
    o.stride_h = o.stride_w = 2;
    mp_tfw_op(w, MP_OP_DEPTHWISE_CONV_2D, 3, (int32_t[]){t1, f2, -1}, 1, &t2, &o);

    int t3 = act_q(w, "t3", 4, (int32_t[]){1, 3, 3, 6}, 0.05f, -10);
    o = mp_tfw_options_default();
    o.padding = MP_PAD_VALID;
    o.stride_h = o.stride_w = 1;
    o.filter_h = o.filter_w = 2;
    mp_tfw_op(w, MP_OP_MAX_POOL_2D, 1, &t2, 1, &t3, &o);
    int t4 = act_q(w, "t4", 4, (int32_t[]){1, 3, 3, 6}, 0.08f, 4);
    mp_tfw_op(w, MP_OP_ADD, 2, (int32_t[]){t3, t3}, 1, &t4, NULL);

    int pooled = 3 - avg_window + 1;
    int t5 = act_q(w, "t5", 4, (int32_t[]){1, pooled, pooled, 6}, 0.08f, 4);
    o = mp_tfw_options_default();
    o.padding = MP_PAD_VALID;
    o.stride_h = o.stride_w = 1;
    o.filter_h = o.filter_w = avg_window;
    mp_tfw_op(w, MP_OP_AVERAGE_POOL_2D, 1, &t4, 1, &t5, &o);
    int n_in = pooled * pooled * 6;
    int t6 = act_q(w, "t6", 2, (int32_t[]){1, n_in}, 0.08f, 4);
    int shape = const_i32(w, "shape", 1, (int32_t[]){2}, (int32_t[]){1, n_in}, 2);
    o = mp_tfw_options_default();
    o.has_new_shape = true;
    o.n_new_shape = 2;
    o.new_shape[0] = 1;
    o.new_shape[1] = n_in;
    mp_tfw_op(w, MP_OP_RESHAPE, 2, (int32_t[]){t5, shape}, 1, &t6, &o);

    int f3 = weights_q(w, "f3", 2, (int32_t[]){5, n_in}, fc_per_channel ? 5 : 1, 0, 0.02f, sc);
    int b3 = bias_q(w, "b3", 5, 0.08f, sc, !fc_per_channel);
    int t7 = act_q(w, "t7", 2, (int32_t[]){1, 5}, 0.1f, 0);
    mp_tfw_op(w, MP_OP_FULLY_CONNECTED, 3, (int32_t[]){t6, f3, b3}, 1, &t7, NULL);
    int y = act_q(w, "y", 2, (int32_t[]){1, 5}, 1.0f / 256.0f, -128);
    o = mp_tfw_options_default();
    o.beta = 1.0f;
    mp_tfw_op(w, MP_OP_SOFTMAX, 1, &t7, 1, &y, &o);
    int yf = act_tensor(w, "yf", 2, (int32_t[]){1, 5});
    mp_tfw_op(w, MP_OP_DEQUANTIZE, 1, &t7, 1, &yf, NULL);
    mp_tfw_io(w, 1, &x, 2, (int32_t[]){y, yf});
    return finish(w, size);
}

/* The peer runs the quantized graph as the engine does (int8 outputs within a step; the
 * dequantized logits within float tolerance), and refuses, naming the operator, what this
 * XNNPACK's quantized nodes cannot take. */
static void test_quantized(void **state)
{
    (void)state;
    size_t size;
    void *bytes = graph_quantized(false, 3, &size);
    outcome r = check_model("quantized", "quantized", bytes, size, 1);
    if (!r.peer_ok)
        print_message("  %s\n", r.msg);
    assert_true(r.engine_ok);
    assert_true(r.peer_ok);
    print_message("  quantized: max error %.3f of tolerance, %llu XNNPACK nodes\n", r.err,
                  (unsigned long long)r.mem.xnn_nodes);
    assert_true(r.err <= 1.0);
    /* one node per operator (10), the softmax three (convert, softmax, convert) */
    assert_int_equal(r.mem.xnn_nodes, 12);
    outcome t = check_model("quantized, 2 threads", "quantized", bytes, size, 2);
    assert_true(t.peer_ok);
    assert_true(t.err <= 1.0);
    free(bytes);

    static const struct {
        bool fc_per_channel;
        int avg_window;
        const char *op, *why;
    } refused[] = {
        {true, 3, "FULLY_CONNECTED", "quantized per channel"},
        {false, 2, "AVERAGE_POOL_2D", "quantized average pooling with a 2x2 window"},
    };
    for (size_t k = 0; k < sizeof refused / sizeof refused[0]; k++) {
        bytes = graph_quantized(refused[k].fc_per_channel, refused[k].avg_window, &size);
        r = check_model(refused[k].op, refused[k].op, bytes, size, 1);
        if (!r.engine_ok)
            print_message("  engine: %s\n", r.msg);
        assert_true(r.engine_ok);
        assert_false(r.peer_ok);
        assert_int_equal(r.peer_status, MP_ERR_UNSUPPORTED);
        print_message("  refused: %s\n", r.msg);
        assert_names_operator(r.msg, bytes, size, refused[k].op, refused[k].op);
        assert_non_null(strstr(r.msg, refused[k].why));
        free(bytes);
    }
}

/* ---- the shared models --------------------------------------------------------------- */

/* What the peer must do with the shared float models our engine runs (others: refused with
 * an operator named, or not run by our engine at all). */
static const char *const k_must_run[] = {
    "litert_mobilenet_like_model.tflite", "litert_tfl_testdata_add.tflite",
    "litert_tfl_testdata_multi_add.tflite", "tfex_add.tflite",
    "tfsupport_mobilenet_v1_0.25_224_float.tflite", "tiny_ad01_fp32.tflite",
    "tiny_ic_resnet8_float.tflite", "tfmicro_hello_world_float.tflite",
    "litert_simple_add_dynamic_shape.tflite",
    "tfex_mobilenet_v2_035_96_embedder.tflite", /* int8 weights (hybrid): dequantized */
};
static const struct {
    const char *file, *op;
} k_must_refuse[] = {
    {"mpromonet_mnist.tflite", "TANH"},
    {"alankrantas_mnist.tflite", "CAST"},
};

static void test_shared_models(void **state)
{
    (void)state;
    char **names = NULL;
    int n = mp_test_shared_model_names(&names);
    if (n == 0) {
        print_message("SKIP: shared models not found (MP_SHARED_DIR chooses the folder)\n");
        skip();
    }
    int ran = 0;
    char table[8192];
    size_t tl = 0;
    tl += (size_t)snprintf(table + tl, sizeof table - tl,
                           "  %-46s %12s %12s %12s %12s %12s\n", "model (peer, 1 thread)",
                           "workspace", "other", "peak", "lower bound", "external");
    for (int i = 0; i < n; i++) {
        const char *file = mp_test_path("models", names[i]);
        outcome r = check_model(names[i], file, NULL, 0, 1);
        bool must_run = false;
        for (size_t k = 0; k < sizeof k_must_run / sizeof k_must_run[0]; k++)
            must_run = must_run || strcmp(names[i], k_must_run[k]) == 0;
        const char *must_refuse = NULL;
        for (size_t k = 0; k < sizeof k_must_refuse / sizeof k_must_refuse[0]; k++)
            if (strcmp(names[i], k_must_refuse[k].file) == 0)
                must_refuse = k_must_refuse[k].op;
        if (!r.engine_ok) {
            print_message("  %-46s engine refuses: %.120s\n", names[i], r.msg);
            assert_false(must_run);
            assert_null(must_refuse);
        } else if (!r.peer_ok) {
            print_message("  %-46s peer refuses: %s\n", names[i], r.msg);
            assert_false(must_run);
            assert_int_equal(r.peer_status, MP_ERR_UNSUPPORTED);
            assert_names_operator(r.msg, NULL, 0, file, must_refuse);
        } else {
            print_message("  %-46s ok, max error %.3f of tolerance\n", names[i], r.err);
            assert_null(must_refuse);
            assert_true(r.err <= 1.0);
            ran++;
            if (tl < sizeof table - 200)
                tl += (size_t)snprintf(
                    table + tl, sizeof table - tl, "  %-46s %12llu %12llu %12llu %12llu %12llu\n",
                    names[i], (unsigned long long)r.mem.workspace_bytes,
                    (unsigned long long)r.mem.other_bytes, (unsigned long long)r.mem.peak_bytes,
                    (unsigned long long)r.lower_bound, (unsigned long long)r.mem.external_bytes);
        }
    }
    mp_test_free_names(names, n);
    for (char *line = table; *line;) { /* print_message has a short buffer: line by line */
        char *nl = strchr(line, '\n');
        if (!nl)
            break;
        *nl = '\0';
        print_message("%s\n", line);
        line = nl + 1;
    }
    assert_true(ran >= (int)(sizeof k_must_run / sizeof k_must_run[0]));
}

/* The peer's XNNPACK blocks never reach the engine's accounting, and the engine's keep going
 * there: a session's kernel bytes are the same with and without a peer beside it. */
static void test_attribution(void **state)
{
    (void)state;
    mp_error err;
    mp_session *s = open_session("zoo:mnist_mlp", NULL, 0, 1, &err);
    assert_non_null(s);
    const mp_mem_stats *st = mp_mem_get_stats(mp_session_mem(s));
    uint64_t kernel = st->live[MP_MEM_KERNEL], allocs = st->n_alloc, frees = st->n_free;
    mp_xnn_peer *p = NULL;
    assert_int_equal(mp_xnn_peer_create(s, NULL, &p, &err), MP_OK);
    feed_reference(s, p);
    assert_int_equal(mp_xnn_peer_run(p, &err), MP_OK);
    mp_xnn_peer_memory mm;
    mp_xnn_peer_memory_info(p, &mm);
    assert_true(mm.weights_bytes > 0); /* packed weights of the two FC layers */
    mp_xnn_peer_destroy(p, NULL);
    assert_int_equal(st->live[MP_MEM_KERNEL], kernel);
    assert_int_equal(st->n_free, frees);
    assert_true(st->n_alloc >= allocs); /* set_input may copy through the engine */
    assert_int_equal(mp_session_run(s, &err), MP_OK);
    mp_session_destroy(s);
}

/* Out of memory at every allocation of the peer's creation (the engine's failure injection,
 * engine/memory/mem.h), once and from then on: creation either succeeds (a failure XNNPACK's
 * unchecked planner tables met in the peer's reserve) and then runs and agrees with the
 * engine, or says out of memory (MP_ERR_NOMEM, no peer); never another status, a crash or,
 * under ASan, a leak. The session beside it is untouched and still runs. */
static void test_out_of_memory(void **state)
{
    (void)state;
    mp_error err;
    mp_session *s = open_session("zoo:mnist_mlp", NULL, 0, 1, &err);
    assert_non_null(s);
    mp_xnn_peer *p = NULL;
    mp_mem_fail_set(&(mp_mem_fail){.max_bytes = UINT64_MAX}); /* count only */
    assert_int_equal(mp_xnn_peer_create(s, NULL, &p, &err), MP_OK);
    uint64_t total = mp_mem_fail_count();
    mp_mem_fail_set(NULL);
    mp_xnn_peer_destroy(p, NULL);
    assert_true(total > 10);
    int nomem = 0;
    for (int later = 0; later < 2; later++)
        for (uint64_t n = 1; n <= total; n++) {
            p = NULL;
            err = (mp_error){0};
            mp_mem_fail_set(&(mp_mem_fail){.nth = n, .and_later = later});
            mp_status st = mp_xnn_peer_create(s, NULL, &p, &err);
            mp_mem_fail_set(NULL);
            if (st == MP_OK) {
                feed_reference(s, p);
                assert_int_equal(mp_xnn_peer_run(p, &err), MP_OK);
                assert_int_equal(mp_session_run(s, &err), MP_OK);
                compare_outputs(s, p, "mnist_mlp after an allocation failure");
                mp_xnn_peer_destroy(p, NULL);
                continue;
            }
            if (st != MP_ERR_NOMEM || p || !strstr(err.msg, "out of memory"))
                fail_msg("allocation %llu%s: status %s, '%s'", (unsigned long long)n,
                         later ? "+" : "", mp_status_name(st), err.msg);
            nomem++;
        }
    assert_true(nomem > (int)total); /* most failures are fatal */
    assert_int_equal(mp_session_run(s, &err), MP_OK);
    mp_session_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zoo),          cmocka_unit_test(test_zoo_threads),
        cmocka_unit_test(test_all_ops),      cmocka_unit_test(test_float_ops),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_quantized),
        cmocka_unit_test(test_attribution),  cmocka_unit_test(test_shared_models),
        cmocka_unit_test(test_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
