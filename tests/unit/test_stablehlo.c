/* Tests of the StableHLO operators (schema codes 162..209): their names, the reader's
 * builtin_options_2 (written by the tflite writer, read back, and every fault refused in one
 * line with its exit status), and the kernels memprof runs (engine/kernels/stablehlo.c,
 * stablehlo_gather.c, control_flow.c's STABLEHLO_COMPOSITE) against values worked out by hand
 * from the StableHLO spec's definitions, on nodes of the kernel harness and on whole models
 * run in the static and dynamic memory modes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/kernels/kernel.h"
#include "engine/model/model.h"
#include "engine/model/ops.h"
#include "engine/model/tflite_writer.h"
#include "engine/session.h"
#include "tests/util/kernel_harness.h"
#include "tests/util/testutil.h"

/* ---- names -------------------------------------------------------------------------------- */

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(mp_op_name(MP_OP_RIGHT_SHIFT), "RIGHT_SHIFT");
    assert_string_equal(mp_op_name(162), "STABLEHLO_LOGISTIC");
    assert_string_equal(mp_op_name(163), "STABLEHLO_ADD");
    assert_string_equal(mp_op_name(190), "STABLEHLO_SCATTER");
    assert_string_equal(mp_op_name(203), "DILATE");
    assert_string_equal(mp_op_name(205), "REDUCE_WINDOW");
    assert_string_equal(mp_op_name(206), "STABLEHLO_COMPOSITE");
    assert_string_equal(mp_op_name(207), "STABLEHLO_SHIFT_LEFT");
    assert_string_equal(mp_op_name(209), "STABLEHLO_CASE");
    assert_int_equal(MP_OP_CODE_COUNT, 210);
    for (int c = 0; c < MP_OP_CODE_COUNT; c++)
        assert_non_null(mp_op_name(c));
    assert_null(mp_op_name(MP_OP_CODE_COUNT));
    /* what runs: every StableHLO operator TensorFlow Lite's BuiltinOpResolver registers; the
     * ones without a runtime kernel there are not run either */
    const int runs[] = {MP_OP_STABLEHLO_ADD, MP_OP_STABLEHLO_MULTIPLY, MP_OP_STABLEHLO_MAXIMUM,
                        MP_OP_STABLEHLO_MINIMUM, MP_OP_STABLEHLO_AND, MP_OP_STABLEHLO_SHIFT_LEFT,
                        MP_OP_STABLEHLO_PAD, MP_OP_DILATE, MP_OP_STABLEHLO_REDUCE_WINDOW,
                        MP_OP_REDUCE_WINDOW, MP_OP_STABLEHLO_GATHER, MP_OP_STABLEHLO_SCATTER,
                        MP_OP_STABLEHLO_COMPOSITE, MP_OP_STABLEHLO_CASE,
                        MP_OP_STABLEHLO_RNG_BIT_GENERATOR};
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++)
        assert_non_null(mp_kernel_find(runs[k]));
    assert_null(mp_kernel_find(MP_OP_STABLEHLO_LOGISTIC));
    assert_null(mp_kernel_find(MP_OP_STABLEHLO_CONVOLUTION));
    assert_true(mp_op_calls_subgraphs(MP_OP_STABLEHLO_COMPOSITE));
    assert_true(mp_op_calls_subgraphs(MP_OP_STABLEHLO_CASE));
    assert_false(mp_op_calls_subgraphs(MP_OP_STABLEHLO_SCATTER));
}

/* ---- models ------------------------------------------------------------------------------- */

static mp_model *load(mp_test_model b, mp_status want, const char *needle)
{
    mp_model *m = NULL;
    mp_error err = {0};
    mp_status st = mp_model_load_memory(b.bytes, b.size, "shlo.tflite", &m, &err);
    free(b.bytes);
    if (st != want || (needle && !strstr(err.msg, needle)))
        fail_msg("expected %s containing '%s', got %s: %s", mp_status_name(want), needle ? needle : "",
                 mp_status_name(st), err.msg);
    if (want != MP_OK) {
        assert_null(m);
        assert_null(strchr(err.msg, '\n'));
        assert_non_null(strstr(err.msg, "shlo.tflite"));
    }
    return m;
}

static mp_shlo_list list(int n, const int64_t *v)
{
    mp_shlo_list l = {.n = n};
    memcpy(l.v, v, sizeof(int64_t) * (size_t)n);
    return l;
}

/* A body subgraph of two float [] inputs and one output, computed by `code` (-1: the output
 * is the second input, no operator). */
static void body_subgraph(mp_tfw *w, int code)
{
    mp_tfw_subgraph(w, "body");
    int a = mp_tfw_tensor(w, "a", MP_DT_FLOAT32, 0, NULL, 0, NULL);
    int b = mp_tfw_tensor(w, "b", MP_DT_FLOAT32, 0, NULL, 0, NULL);
    if (code < 0) {
        mp_tfw_io(w, 2, (int32_t[]){a, b}, 1, &b);
        return;
    }
    int c = mp_tfw_tensor(w, "c", MP_DT_FLOAT32, 0, NULL, 0, NULL);
    mp_tfw_op(w, code, 2, (int32_t[]){a, b}, 1, &c, NULL);
    mp_tfw_io(w, 2, (int32_t[]){a, b}, 1, &c);
}

/* The spec's scatter example (restated in TensorFlow Lite's stablehlo_scatter_test): operand
 * x float [3, 4, 2] (input), indices int64 [2, 3, 2] and updates float [2, 3, 2, 2] constants
 * (updates all `upd`), update_window_dims [2, 3], inserted_window_dims [0],
 * scatter_dims_to_operand_dims [1, 0], index_vector_dim 2, body subgraph `body` (1 is an ADD
 * written after subgraph 0; bodycode the body's operator, -1 none). */
static const int64_t k_scatter_idx[12] = {0, 2, 1, 0, 2, 1, 0, 1, 1, 0, 0, 9};

static mp_test_model scatter_model(mp_shlo_options *s, int body, int bodycode, float upd)
{
    mp_tfw *w = mp_tfw_create();
    float u[24];
    for (int k = 0; k < 24; k++)
        u[k] = upd;
    int x = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 3, (int32_t[]){3, 4, 2}, 0, NULL);
    int i = mp_tfw_tensor(w, "idx", MP_DT_INT64, 3, (int32_t[]){2, 3, 2},
                          mp_tfw_buffer(w, k_scatter_idx, sizeof k_scatter_idx), NULL);
    int up = mp_tfw_tensor(w, "upd", MP_DT_FLOAT32, 4, (int32_t[]){2, 3, 2, 2},
                           mp_tfw_buffer(w, u, sizeof u), NULL);
    int y = mp_tfw_tensor(w, "y", MP_DT_FLOAT32, 3, (int32_t[]){3, 4, 2}, 0, NULL);
    *s = (mp_shlo_options){.a = list(2, (int64_t[]){2, 3}), .b = list(1, (int64_t[]){0}),
                           .c = list(2, (int64_t[]){1, 0}), .index_vector_dim = 2, .body = body};
    mp_op_options o = mp_tfw_options_default();
    o.shlo = s;
    mp_tfw_op(w, MP_OP_STABLEHLO_SCATTER, 3, (int32_t[]){x, i, up}, 1, &y, &o);
    mp_tfw_io(w, 1, &x, 1, &y);
    body_subgraph(w, bodycode);
    return mp_test_tfw_finish(w);
}

/* COMPOSITE "my.affine" (version 2) of x float [4] calling subgraph `decomp`, whose
 * decomposition is y = x * 2 + 1 in STABLEHLO_MULTIPLY and STABLEHLO_ADD on constants [4];
 * `extra_in` gives the decomposition a second input (a count fault). */
static mp_test_model composite_model(int decomp, bool extra_in, const mp_shlo_options *s)
{
    mp_tfw *w = mp_tfw_create();
    int x = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 1, (int32_t[]){4}, 0, NULL);
    int y = mp_tfw_tensor(w, "y", MP_DT_FLOAT32, 1, (int32_t[]){4}, 0, NULL);
    mp_op_options o = mp_tfw_options_default();
    o.subgraph_a = decomp;
    o.shlo = s;
    mp_tfw_op(w, MP_OP_STABLEHLO_COMPOSITE, 1, &x, 1, &y, &o);
    mp_tfw_io(w, 1, &x, 1, &y);

    mp_tfw_subgraph(w, "decomposition");
    static const float two[4] = {2, 2, 2, 2}, one[4] = {1, 1, 1, 1};
    int dx = mp_tfw_tensor(w, "dx", MP_DT_FLOAT32, 1, (int32_t[]){4}, 0, NULL);
    int t = mp_tfw_tensor(w, "two", MP_DT_FLOAT32, 1, (int32_t[]){4}, mp_tfw_buffer(w, two, sizeof two), NULL);
    int c = mp_tfw_tensor(w, "one", MP_DT_FLOAT32, 1, (int32_t[]){4}, mp_tfw_buffer(w, one, sizeof one), NULL);
    int p = mp_tfw_tensor(w, "p", MP_DT_FLOAT32, 1, (int32_t[]){4}, 0, NULL);
    int dy = mp_tfw_tensor(w, "dy", MP_DT_FLOAT32, 1, (int32_t[]){4}, 0, NULL);
    mp_tfw_op(w, MP_OP_STABLEHLO_MULTIPLY, 2, (int32_t[]){dx, t}, 1, &p, NULL);
    mp_tfw_op(w, MP_OP_STABLEHLO_ADD, 2, (int32_t[]){p, c}, 1, &dy, NULL);
    if (extra_in) {
        int e = mp_tfw_tensor(w, "extra", MP_DT_FLOAT32, 1, (int32_t[]){4}, 0, NULL);
        mp_tfw_io(w, 2, (int32_t[]){dx, e}, 1, &dy);
    } else {
        mp_tfw_io(w, 1, &dx, 1, &dy);
    }
    return mp_test_tfw_finish(w);
}

/* CASE of index i (int32 [1], or float with bad_index) over x float [4] with the n_br
 * branches `br`, from subgraphs 1: x * 2, 2: x + 10, 3: max(x, 0) (each on constants [4]). */
static mp_test_model case_model(int n_br, const int32_t *br, bool bad_index, mp_shlo_options *s)
{
    mp_tfw *w = mp_tfw_create();
    int i = mp_tfw_tensor(w, "i", bad_index ? MP_DT_FLOAT32 : MP_DT_INT32, 1, (int32_t[]){1}, 0, NULL);
    int x = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 1, (int32_t[]){4}, 0, NULL);
    int y = mp_tfw_tensor(w, "y", MP_DT_FLOAT32, 1, (int32_t[]){4}, 0, NULL);
    *s = (mp_shlo_options){.n_branches = n_br, .branches = br};
    mp_op_options o = mp_tfw_options_default();
    o.shlo = s;
    mp_tfw_op(w, MP_OP_STABLEHLO_CASE, 2, (int32_t[]){i, x}, 1, &y, &o);
    mp_tfw_io(w, 2, (int32_t[]){i, x}, 1, &y);
    static const float two[4] = {2, 2, 2, 2}, ten[4] = {10, 10, 10, 10}, zero[4] = {0, 0, 0, 0};
    const struct { const char *name; int code; const float *c; } b[3] = {
        {"times2", MP_OP_STABLEHLO_MULTIPLY, two}, {"plus10", MP_OP_STABLEHLO_ADD, ten},
        {"relu", MP_OP_STABLEHLO_MAXIMUM, zero}};
    for (int k = 0; k < 3; k++) {
        mp_tfw_subgraph(w, b[k].name);
        int bx = mp_tfw_tensor(w, "bx", MP_DT_FLOAT32, 1, (int32_t[]){4}, 0, NULL);
        int bc = mp_tfw_tensor(w, "bc", MP_DT_FLOAT32, 1, (int32_t[]){4}, mp_tfw_buffer(w, b[k].c, sizeof two), NULL);
        int by = mp_tfw_tensor(w, "by", MP_DT_FLOAT32, 1, (int32_t[]){4}, 0, NULL);
        mp_tfw_op(w, b[k].code, 2, (int32_t[]){bx, bc}, 1, &by, NULL);
        mp_tfw_io(w, 1, &bx, 1, &by);
    }
    return mp_test_tfw_finish(w);
}

/* One operator `code` on x float [2, 3] with options s (and a padding value constant when
 * `pad_value`), output y of `out_dims`. */
static mp_test_model one_op_model(int code, const mp_shlo_options *s, int n_out_dims, const int32_t *out_dims)
{
    mp_tfw *w = mp_tfw_create();
    static const float zero = 0.0f;
    int x = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 2, (int32_t[]){2, 3}, 0, NULL);
    int v = mp_tfw_tensor(w, "v", MP_DT_FLOAT32, 0, NULL, mp_tfw_buffer(w, &zero, sizeof zero), NULL);
    int y = mp_tfw_tensor(w, "y", MP_DT_FLOAT32, n_out_dims, out_dims, 0, NULL);
    mp_op_options o = mp_tfw_options_default();
    o.shlo = s;
    mp_tfw_op(w, code, 2, (int32_t[]){x, v}, 1, &y, &o);
    mp_tfw_io(w, 1, &x, 1, &y);
    return mp_test_tfw_finish(w);
}

static void test_reader_options(void **state)
{
    (void)state;
    /* PAD: the three lists come back as written */
    mp_shlo_options pad = {.a = list(2, (int64_t[]){0, -1}), .b = list(2, (int64_t[]){2, 1}),
                           .c = list(2, (int64_t[]){1, 2})};
    mp_model *m = load(one_op_model(MP_OP_STABLEHLO_PAD, &pad, 2, (int32_t[]){5, 7}), MP_OK, NULL);
    const mp_shlo_options *s = m->ops[0].opt.shlo;
    assert_non_null(s);
    assert_int_equal(s->a.n, 2);
    assert_int_equal(s->a.v[1], -1);
    assert_int_equal(s->b.v[0], 2);
    assert_int_equal(s->c.v[1], 2);
    mp_model_free(m);

    /* SCATTER: lists, index_vector_dim and the body's computation (an ADD: MP_OP_ADD; a
     * STABLEHLO_MAXIMUM: MP_OP_MAXIMUM; none: -1, the update replaces) */
    mp_shlo_options sc;
    m = load(scatter_model(&sc, 1, MP_OP_ADD, 2.0f), MP_OK, NULL);
    s = m->ops[0].opt.shlo;
    assert_int_equal(s->a.n, 2);
    assert_int_equal(s->a.v[1], 3);
    assert_int_equal(s->c.v[0], 1);
    assert_int_equal(s->index_vector_dim, 2);
    assert_int_equal(s->body, 1);
    assert_int_equal(s->body_op, MP_OP_ADD);
    mp_model_free(m);
    m = load(scatter_model(&sc, 1, MP_OP_STABLEHLO_MAXIMUM, 2.0f), MP_OK, NULL);
    assert_int_equal(m->ops[0].opt.shlo->body_op, MP_OP_MAXIMUM);
    mp_model_free(m);
    m = load(scatter_model(&sc, 1, -1, 2.0f), MP_OK, NULL);
    assert_int_equal(m->ops[0].opt.shlo->body_op, -1);
    mp_model_free(m);

    /* COMPOSITE: name, version, the decomposition in subgraph_a and _b */
    mp_shlo_options cs = {.name = "my.affine", .version = 2};
    m = load(composite_model(1, false, &cs), MP_OK, NULL);
    s = m->ops[0].opt.shlo;
    assert_string_equal(s->name, "my.affine");
    assert_int_equal(s->version, 2);
    assert_int_equal(m->ops[0].opt.subgraph_a, 1);
    assert_int_equal(m->ops[0].opt.subgraph_b, 1);
    mp_model_free(m);

    /* an operator the resolver does not run loads (inspect names it); running refuses it */
    m = load(one_op_model(MP_OP_STABLEHLO_LOGISTIC, NULL, 2, (int32_t[]){2, 3}), MP_OK, NULL);
    assert_string_equal(mp_op_name(m->ops[0].opcode), "STABLEHLO_LOGISTIC");
    mp_model_free(m);
}

static void test_reader_refusals(void **state)
{
    (void)state;
    mp_shlo_options bad = {.a = list(2, (int64_t[]){0, 0}), .b = list(2, (int64_t[]){0, 0}),
                           .c = list(2, (int64_t[]){0, -3})};
    load(one_op_model(MP_OP_STABLEHLO_PAD, &bad, 2, (int32_t[]){2, 3}), MP_ERR_FORMAT,
         "operator 0 (STABLEHLO_PAD): interior_padding -3 of dimension 1 is negative");
    mp_shlo_options many = {.a = {.n = MP_SHLO_LIST + 1}};
    load(one_op_model(MP_OP_STABLEHLO_PAD, &many, 2, (int32_t[]){2, 3}), MP_ERR_FORMAT,
         "edge_padding_low has 17 values, more than 16");
    mp_shlo_options rf = {.reduce_function = 9};
    load(one_op_model(MP_OP_REDUCE_WINDOW, &rf, 2, (int32_t[]){2, 3}), MP_ERR_FORMAT,
         "reduce_function 9 is not valid");
    mp_shlo_options rng = {.rng_algorithm = 7};
    load(one_op_model(MP_OP_STABLEHLO_RNG_BIT_GENERATOR, &rng, 2, (int32_t[]){2, 3}), MP_ERR_FORMAT,
         "algorithm 7 is not valid");
    mp_shlo_options cases = {.n_branches = 2, .branches = (int32_t[]){0, 5}};
    load(one_op_model(MP_OP_STABLEHLO_CASE, &cases, 2, (int32_t[]){2, 3}), MP_ERR_FORMAT,
         "branch 1's subgraph 5 is out of range (1 subgraphs)");
    /* CASE: an index that is not int32, a branch calling the CASE's own subgraph */
    mp_shlo_options cs2;
    load(case_model(3, (int32_t[]){1, 2, 3}, true, &cs2), MP_ERR_FORMAT,
         "operator 0 (STABLEHLO_CASE): input 0 (the branch index) must be an int32 tensor");
    load(case_model(2, (int32_t[]){1, 0}, false, &cs2), MP_ERR_FORMAT,
         "branch 1's subgraph 0 takes 2 inputs and gives 1 outputs; the operator passes 1 and takes 1");

    /* the subgraphs named: out of range, negative, a body that is not one arithmetic
     * operator (exit 5: a computation memprof and TensorFlow Lite do not run) */
    mp_shlo_options sc;
    load(scatter_model(&sc, 4, MP_OP_ADD, 1.0f), MP_ERR_FORMAT,
         "operator 0 (STABLEHLO_SCATTER): body subgraph 4 is out of range (2 subgraphs)");
    load(scatter_model(&sc, -2, MP_OP_ADD, 1.0f), MP_ERR_FORMAT,
         "update_computation_subgraph_index -2 is negative");
    load(scatter_model(&sc, 1, MP_OP_SUB, 1.0f), MP_ERR_UNSUPPORTED,
         "body subgraph 1 is not one ADD, MUL, MAXIMUM, MINIMUM, AND or OR");
    load(scatter_model(&sc, 0, MP_OP_ADD, 1.0f), MP_ERR_FORMAT,
         "body subgraph 0 takes 1 inputs and gives 1 outputs");

    /* COMPOSITE: the decomposition out of range, not fitting the call, calling itself */
    mp_shlo_options cs = {.name = "c"};
    load(composite_model(3, false, &cs), MP_ERR_FORMAT,
         "operator 0 (STABLEHLO_COMPOSITE): decomposition subgraph 3 is out of range (2 subgraphs)");
    load(composite_model(1, true, &cs), MP_ERR_FORMAT,
         "decomposition subgraph 1 takes 2 inputs and gives 1 outputs; the operator passes 1 and takes 1");
    load(composite_model(0, false, &cs), MP_ERR_FORMAT, "calls subgraph 0, which is running already: itself");
}

/* ---- kernels on harness nodes ------------------------------------------------------------- */

/* A new case for `code` in c, the one before (if any) freed. */
static void start(kh_case *c, int code)
{
    if (c->mem)
        kh_free(c);
    kh_init(c, code, NULL);
}

static void binary_case(kh_case *c, int code, mp_dtype dt, int32_t n, const void *a, const void *b)
{
    start(c, code);
    kh_input(c, dt, 1, &n, a);
    kh_input(c, dt, 1, &n, b);
    kh_output(c, dt);
}

static void test_elementwise(void **state)
{
    (void)state;
    kh_case c = {0};
    /* int8: 100 + 100 wraps to -56, 100 * 3 = 300 - 256 = 44 */
    const int8_t a8[4] = {100, -128, 7, -1}, b8[4] = {100, -1, -7, 3};
    binary_case(&c, MP_OP_STABLEHLO_ADD, MP_DT_INT8, 4, a8, b8);
    kh_expect_ok(&c, kh_run(&c));
    const int8_t add8[4] = {-56, 127, 0, 2};
    assert_memory_equal(c.out[0]->data, add8, sizeof add8);
    const int8_t m3[4] = {3, 3, 3, 3};
    binary_case(&c, MP_OP_STABLEHLO_MULTIPLY, MP_DT_INT8, 4, a8, m3);
    kh_expect_ok(&c, kh_run(&c));
    const int8_t mul8[4] = {44, -128, 21, -3}; /* -384 + 512 = 128 -> -128 */
    assert_memory_equal(c.out[0]->data, mul8, sizeof mul8);

    /* float max / min */
    const float fa[3] = {1.5f, -2.0f, 0.0f}, fb[3] = {-1.0f, 3.0f, -0.5f};
    binary_case(&c, MP_OP_STABLEHLO_MAXIMUM, MP_DT_FLOAT32, 3, fa, fb);
    kh_expect_ok(&c, kh_run(&c));
    const float mx[3] = {1.5f, 3.0f, 0.0f};
    assert_memory_equal(c.out[0]->data, mx, sizeof mx);
    binary_case(&c, MP_OP_STABLEHLO_MINIMUM, MP_DT_FLOAT32, 3, fa, fb);
    kh_expect_ok(&c, kh_run(&c));
    const float mn[3] = {-1.0f, -2.0f, -0.5f};
    assert_memory_equal(c.out[0]->data, mn, sizeof mn);

    /* float16 (bits): 1.5 + 0.25 = 1.75 (0x3f00); 2048 + 1 = 2049 is a tie between 2048 and
     * 2050, to even: 2048 (0x6800); 3 * 0.5 = 1.5 (0x3e00); max(-2, 1) = 1 (0x3c00) */
    const uint16_t h1[3] = {0x3e00, 0x6800, 0x4200}, h2[3] = {0x3400, 0x3c00, 0x3800};
    binary_case(&c, MP_OP_STABLEHLO_ADD, MP_DT_FLOAT16, 2, h1, h2);
    kh_expect_ok(&c, kh_run(&c));
    const uint16_t hadd[2] = {0x3f00, 0x6800};
    assert_memory_equal(c.out[0]->data, hadd, sizeof hadd);
    binary_case(&c, MP_OP_STABLEHLO_MULTIPLY, MP_DT_FLOAT16, 3, h1, h2);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(((const uint16_t *)c.out[0]->data)[2], 0x3e00);
    const uint16_t hm1[1] = {0xc000}, hm2[1] = {0x3c00};
    binary_case(&c, MP_OP_STABLEHLO_MAXIMUM, MP_DT_FLOAT16, 1, hm1, hm2);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(((const uint16_t *)c.out[0]->data)[0], 0x3c00);

    /* uint16 products wrap at 2^16: 300 * 300 = 90000 - 65536 = 24464 */
    const uint16_t u1[2] = {300, 65535}, u2[2] = {300, 2};
    binary_case(&c, MP_OP_STABLEHLO_MULTIPLY, MP_DT_UINT16, 2, u1, u2);
    kh_expect_ok(&c, kh_run(&c));
    const uint16_t um[2] = {24464, 65534};
    assert_memory_equal(c.out[0]->data, um, sizeof um);

    /* AND: bitwise on int32, logical on bool */
    const int32_t i1[2] = {0x0f0f, -1}, i2[2] = {0x00ff, 6};
    binary_case(&c, MP_OP_STABLEHLO_AND, MP_DT_INT32, 2, i1, i2);
    kh_expect_ok(&c, kh_run(&c));
    const int32_t ia[2] = {0x000f, 6};
    assert_memory_equal(c.out[0]->data, ia, sizeof ia);
    const uint8_t b1[4] = {1, 1, 0, 0}, b2[4] = {1, 0, 1, 0};
    binary_case(&c, MP_OP_STABLEHLO_AND, MP_DT_BOOL, 4, b1, b2);
    kh_expect_ok(&c, kh_run(&c));
    const uint8_t ba[4] = {1, 0, 0, 0};
    assert_memory_equal(c.out[0]->data, ba, sizeof ba);

    /* SHIFT_LEFT: 1 << 3 = 8; int8 64 << 1 = 128 -> -128; a count of 8 or more, or negative
     * (read unsigned: 2^32 - 1), gives 0 */
    const int8_t s1[5] = {1, 64, 1, 5, -3}, s2[5] = {3, 1, 8, -1, 2};
    binary_case(&c, MP_OP_STABLEHLO_SHIFT_LEFT, MP_DT_INT8, 5, s1, s2);
    kh_expect_ok(&c, kh_run(&c));
    const int8_t sl[5] = {8, -128, 0, 0, -12};
    assert_memory_equal(c.out[0]->data, sl, sizeof sl);

    /* refusals: no broadcasting (exit 6), mixed dtypes and float SHIFT_LEFT (exit 5) */
    start(&c, MP_OP_STABLEHLO_ADD);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){3}, fa);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){1}, fb);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "differ in shape (StableHLO does not broadcast)");
    start(&c, MP_OP_STABLEHLO_ADD);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){2}, fa);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, i1);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "they must have one dtype");
    binary_case(&c, MP_OP_STABLEHLO_SHIFT_LEFT, MP_DT_FLOAT32, 3, fa, fb);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "dtype f32 of");
    kh_free(&c);
}

/* operand [[1, 2, 3], [4, 5, 6]] (float) and a padding value */
static const float k_x23[6] = {1, 2, 3, 4, 5, 6};

static void test_pad_dilate(void **state)
{
    (void)state;
    kh_case c = {0};
    const float pv = 0.0f;
    /* the spec's pad example: low [0, 1], high [2, 1], interior [1, 2]: dimension 0 is
     * 0 + 2 + 2 + 1 * 1 = 5, dimension 1 is 1 + 1 + 3 + 2 * 2 = 9; row i at 2i, column j at
     * 1 + 3j */
    mp_shlo_options s = {.a = list(2, (int64_t[]){0, 1}), .b = list(2, (int64_t[]){2, 1}),
                         .c = list(2, (int64_t[]){1, 2})};
    start(&c, MP_OP_STABLEHLO_PAD);
    c.opt.shlo = &s;
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 3}, k_x23);
    kh_input(&c, MP_DT_FLOAT32, 0, NULL, &pv);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(c.out[0]->dims[0], 5);
    assert_int_equal(c.out[0]->dims[1], 9);
    const float want[45] = {0, 1, 0, 0, 2, 0, 0, 3, 0, /**/ 0, 0, 0, 0, 0, 0, 0, 0, 0,
                            0, 4, 0, 0, 5, 0, 0, 6, 0, /**/ 0, 0, 0, 0, 0, 0, 0, 0, 0,
                            0, 0, 0, 0, 0, 0, 0, 0, 0};
    assert_memory_equal(c.out[0]->data, want, sizeof want);

    /* negative edges remove: low [-1, 0], high [0, -2] keeps [[4]] */
    mp_shlo_options crop = {.a = list(2, (int64_t[]){-1, 0}), .b = list(2, (int64_t[]){0, -2}),
                            .c = list(2, (int64_t[]){0, 0})};
    start(&c, MP_OP_STABLEHLO_PAD);
    c.opt.shlo = &crop;
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 3}, k_x23);
    kh_input(&c, MP_DT_FLOAT32, 0, NULL, &pv);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(mp_tensor_elements(c.out[0]), 1);
    assert_float_equal(((float *)c.out[0]->data)[0], 4.0f, 0);

    /* too much cropping (exit 6), lists of another rank (exit 4) */
    mp_shlo_options neg = {.a = list(2, (int64_t[]){-3, 0}), .b = list(2, (int64_t[]){0, 0}),
                           .c = list(2, (int64_t[]){0, 0})};
    start(&c, MP_OP_STABLEHLO_PAD);
    c.opt.shlo = &neg;
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 3}, k_x23);
    kh_input(&c, MP_DT_FLOAT32, 0, NULL, &pv);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "padded by -3, 0 and 0 inside is -1");
    mp_shlo_options r1 = {.a = list(1, (int64_t[]){0}), .b = list(1, (int64_t[]){0}), .c = list(1, (int64_t[]){0})};
    start(&c, MP_OP_STABLEHLO_PAD);
    c.opt.shlo = &r1;
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 3}, k_x23);
    kh_input(&c, MP_DT_FLOAT32, 0, NULL, &pv);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_FORMAT, "edge_padding_low has 1 values; the input 't0' needs 2");

    /* DILATE, dilate.cc's example: 3x3 by [2, 3] -> 5x7, A(i, j) at (2i, 3j), holes -1 */
    const int32_t a33[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, dil[2] = {2, 3}, hole = -1;
    start(&c, MP_OP_DILATE);
    kh_input(&c, MP_DT_INT32, 2, (int32_t[]){3, 3}, a33);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, dil);
    kh_input(&c, MP_DT_INT32, 0, NULL, &hole);
    kh_output(&c, MP_DT_INT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(c.out[0]->dims[0], 5);
    assert_int_equal(c.out[0]->dims[1], 7);
    const int32_t *d = c.out[0]->data;
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 7; j++)
            assert_int_equal(d[i * 7 + j], i % 2 == 0 && j % 3 == 0 ? a33[(i / 2) * 3 + j / 3] : -1);
    const int32_t zero_dil[2] = {1, 0};
    start(&c, MP_OP_DILATE);
    kh_input(&c, MP_DT_INT32, 2, (int32_t[]){3, 3}, a33);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, zero_dil);
    kh_input(&c, MP_DT_INT32, 0, NULL, &hole);
    kh_output(&c, MP_DT_INT32);
    kh_expect_error(&c, MP_ERR_ARG, "dilation 0 of dimension 1 is not >= 1");
    kh_free(&c);
}

static void test_reduce_window(void **state)
{
    (void)state;
    kh_case c = {0};
    /* the spec's reduce_window example: input [[1, 2], [3, 4], [5, 6]], init 0, window [2, 1],
     * strides [4, 1], base dilations [2, 1], window dilations [3, 1], padding [[2, 1], [0, 0]],
     * ADD. Rows dilated: 1 _ 3 _ 5 (5 rows), padded: 0 0 1 0 3 0 5 0 (8 rows); a window is
     * rows r and r + 3, r = 0 and 4: (0 + 0) and (3 + 0) per column -> [[0, 0], [3, 4]]. */
    const int32_t x[6] = {1, 2, 3, 4, 5, 6}, init = 0;
    mp_shlo_options s = {.a = list(2, (int64_t[]){2, 1}), .b = list(2, (int64_t[]){4, 1}),
                         .c = list(2, (int64_t[]){2, 1}), .d = list(2, (int64_t[]){3, 1}),
                         .e = list(4, (int64_t[]){2, 1, 0, 0}), .body_op = MP_OP_ADD};
    start(&c, MP_OP_STABLEHLO_REDUCE_WINDOW);
    c.opt.shlo = &s;
    kh_input(&c, MP_DT_INT32, 2, (int32_t[]){3, 2}, x);
    kh_input(&c, MP_DT_INT32, 0, NULL, &init);
    kh_output(&c, MP_DT_INT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(c.out[0]->dims[0], 2);
    assert_int_equal(c.out[0]->dims[1], 2);
    const int32_t want[4] = {0, 0, 3, 4};
    assert_memory_equal(c.out[0]->data, want, sizeof want);

    /* TensorFlow Lite's REDUCE_WINDOW as a 2x2 max pool, stride 2, on 4x4 floats
     * x[i][j] = 4i + j - 8: each window's maximum is its bottom right element */
    float f[16];
    for (int k = 0; k < 16; k++)
        f[k] = (float)k - 8.0f;
    const float finit = -1e30f;
    const int64_t win[2] = {2, 2}, str[2] = {2, 2}, wd[2] = {1, 1};
    mp_shlo_options rf = {.reduce_function = 4}; /* MAXIMUM */
    start(&c, MP_OP_REDUCE_WINDOW);
    c.opt.shlo = &rf;
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){4, 4}, f);
    kh_input(&c, MP_DT_FLOAT32, 0, NULL, &finit);
    kh_input(&c, MP_DT_INT64, 1, (int32_t[]){2}, win);
    kh_input(&c, MP_DT_INT64, 1, (int32_t[]){2}, str);
    kh_input(&c, MP_DT_INT64, 1, (int32_t[]){2}, wd);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_ok(&c, kh_run(&c));
    const float fw[4] = {5 - 8, 7 - 8, 13 - 8, 15 - 8};
    assert_memory_equal(c.out[0]->data, fw, sizeof fw);

    /* a window of 0 (exit 4), bool ADD (exit 5) */
    const int64_t win0[2] = {0, 2};
    start(&c, MP_OP_REDUCE_WINDOW);
    c.opt.shlo = &rf;
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){4, 4}, f);
    kh_input(&c, MP_DT_FLOAT32, 0, NULL, &finit);
    kh_input(&c, MP_DT_INT64, 1, (int32_t[]){2}, win0);
    kh_input(&c, MP_DT_INT64, 1, (int32_t[]){2}, str);
    kh_input(&c, MP_DT_INT64, 1, (int32_t[]){2}, wd);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_FORMAT, "dimension 0: window 0");
    const uint8_t bx[4] = {1, 0, 1, 1}, bi = 0;
    mp_shlo_options badd = {.a = list(1, (int64_t[]){2}), .body_op = MP_OP_ADD};
    start(&c, MP_OP_STABLEHLO_REDUCE_WINDOW);
    c.opt.shlo = &badd;
    kh_input(&c, MP_DT_BOOL, 1, (int32_t[]){4}, bx);
    kh_input(&c, MP_DT_BOOL, 0, NULL, &bi);
    kh_output(&c, MP_DT_BOOL);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "not supported by its reduction ADD");
    kh_free(&c);
}

/* operand [3, 4, 2] holding 1..24 (the spec's gather and scatter examples) */
static void operand_324(float *x)
{
    for (int k = 0; k < 24; k++)
        x[k] = (float)(k + 1);
}

static void test_gather(void **state)
{
    (void)state;
    kh_case c = {0};
    float x[24];
    operand_324(x);
    /* the spec's gather example: start_indices [2, 3, 2], offset_dims [2, 3],
     * collapsed_slice_dims [0], start_index_map [1, 0], index_vector_dim 2, slice_sizes
     * [1, 2, 2]: index (a, b) starts the slice at operand [b, a, 0], a clamped to 0..2;
     * the last index (3, 0) is clamped to a = 2 */
    const int32_t idx[12] = {0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 3, 0};
    mp_shlo_options s = {.a = list(2, (int64_t[]){2, 3}), .b = list(1, (int64_t[]){0}),
                         .c = list(2, (int64_t[]){1, 0}), .index_vector_dim = 2,
                         .d = list(3, (int64_t[]){1, 2, 2})};
    start(&c, MP_OP_STABLEHLO_GATHER);
    c.opt.shlo = &s;
    kh_input(&c, MP_DT_FLOAT32, 3, (int32_t[]){3, 4, 2}, x);
    kh_input(&c, MP_DT_INT32, 3, (int32_t[]){2, 3, 2}, idx);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(c.out[0]->rank, 4);
    const int32_t want_dims[4] = {2, 3, 2, 2};
    assert_memory_equal(c.out[0]->dims, want_dims, sizeof want_dims);
    const float *y = c.out[0]->data;
    for (int p = 0; p < 6; p++) {
        int a = idx[2 * p], b = idx[2 * p + 1];
        if (a > 2)
            a = 2;
        for (int r = 0; r < 2; r++)
            for (int q = 0; q < 2; q++)
                assert_float_equal(y[p * 4 + r * 2 + q], x[b * 8 + (a + r) * 2 + q], 0);
    }
    /* by hand, two of them: (0, 0) -> [[1, 2], [3, 4]]; (1, 1) -> operand[1, 1:3] =
     * [[11, 12], [13, 14]] */
    assert_float_equal(y[0], 1, 0);
    assert_float_equal(y[3], 4, 0);
    assert_float_equal(y[16], 11, 0);
    assert_float_equal(y[19], 14, 0);

    /* a collapsed dimension whose slice is not 1 (exit 4) */
    mp_shlo_options bad = s;
    bad.d = list(3, (int64_t[]){2, 2, 2});
    start(&c, MP_OP_STABLEHLO_GATHER);
    c.opt.shlo = &bad;
    kh_input(&c, MP_DT_FLOAT32, 3, (int32_t[]){3, 4, 2}, x);
    kh_input(&c, MP_DT_INT32, 3, (int32_t[]){2, 3, 2}, idx);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_FORMAT, "or is collapsed and not 1");
    kh_free(&c);
}

/* The scatter example's result with ADD of updates all 2, worked out by hand: index vector
 * (a, b) puts the 2x2 window at operand [b, a:a+2, :]; the six vectors are (0, 2), (1, 0),
 * (2, 1), (0, 1), (1, 0), (0, 9), the last outside the operand (skipped). Plane 0 gets rows 1
 * and 2 twice (+4), plane 1 rows 2, 3 and 0, 1 once (+2), plane 2 rows 0 and 1 (+2). */
static const float k_scatter_add2[24] = {1,  2,  7,  8,  9,  10, 7,  8,  11, 12, 13, 14,
                                         15, 16, 17, 18, 19, 20, 21, 22, 21, 22, 23, 24};

static void test_scatter(void **state)
{
    (void)state;
    kh_case c = {0};
    float x[24], u[24];
    operand_324(x);
    for (int k = 0; k < 24; k++)
        u[k] = 2.0f;
    mp_shlo_options s = {.a = list(2, (int64_t[]){2, 3}), .b = list(1, (int64_t[]){0}),
                         .c = list(2, (int64_t[]){1, 0}), .index_vector_dim = 2, .body_op = MP_OP_ADD};
    start(&c, MP_OP_STABLEHLO_SCATTER);
    c.opt.shlo = &s;
    kh_input(&c, MP_DT_FLOAT32, 3, (int32_t[]){3, 4, 2}, x);
    kh_input(&c, MP_DT_INT64, 3, (int32_t[]){2, 3, 2}, k_scatter_idx);
    kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){2, 3, 2, 2}, u);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(c.out[0]->data, k_scatter_add2, sizeof k_scatter_add2);

    /* replacing (no computation): every element a window reaches becomes 2 */
    s.body_op = -1;
    start(&c, MP_OP_STABLEHLO_SCATTER);
    c.opt.shlo = &s;
    kh_input(&c, MP_DT_FLOAT32, 3, (int32_t[]){3, 4, 2}, x);
    kh_input(&c, MP_DT_INT64, 3, (int32_t[]){2, 3, 2}, k_scatter_idx);
    kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){2, 3, 2, 2}, u);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_ok(&c, kh_run(&c));
    const float *y = c.out[0]->data;
    for (int k = 0; k < 24; k++)
        assert_float_equal(y[k], k_scatter_add2[k] != x[k] ? 2.0f : x[k], 0);

    /* updates whose batch dimensions are not the indices' (exit 6) */
    start(&c, MP_OP_STABLEHLO_SCATTER);
    c.opt.shlo = &s;
    kh_input(&c, MP_DT_FLOAT32, 3, (int32_t[]){3, 4, 2}, x);
    kh_input(&c, MP_DT_INT64, 3, (int32_t[]){2, 3, 2}, k_scatter_idx);
    kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){3, 2, 2, 2}, u);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "do not match the batch dimensions");
    kh_free(&c);
}

/* STABLEHLO_RNG_BIT_GENERATOR on a uint64 state of `len` values (two 32-bit words each, low
 * first: w), algorithm alg, bits of dtype dt and `count` elements; the words and the state it
 * gives into bits / st. */
static void rng_case(kh_case *c, int alg, const uint32_t *w, int32_t len, mp_dtype dt, int32_t count,
                     void *bits, uint64_t *st)
{
    static mp_shlo_options s;
    s = (mp_shlo_options){.rng_algorithm = alg};
    uint64_t state[3];
    for (int32_t k = 0; k < len; k++)
        state[k] = (uint64_t)w[2 * k] | (uint64_t)w[2 * k + 1] << 32;
    start(c, MP_OP_STABLEHLO_RNG_BIT_GENERATOR);
    c->opt.shlo = &s;
    kh_input(c, MP_DT_UINT64, 1, &len, state);
    kh_output(c, MP_DT_UINT64);
    mp_tensor *o = kh_output(c, dt);
    /* the bits' shape is the model's: the harness's tensor infos hold it */
    c->infos[o->index].rank = 1;
    c->infos[o->index].shape[0] = count;
    kh_expect_ok(c, kh_run(c));
    memcpy(bits, c->out[1]->data, c->out[1]->bytes);
    memcpy(st, c->out[0]->data, c->out[0]->bytes);
}

static void test_rng_bit_generator(void **state)
{
    (void)state;
    kh_case c = {0};
    uint32_t bits[8];
    uint64_t st[3];
    /* THREEFRY: Random123's known answers for threefry2x32 with 20 rounds (counter, key ->
     * words), the state being the key's two words then the counter's; the counter's word 0
     * steps once (carrying into word 1) */
    static const struct {
        uint32_t key[2], ctr[2], out[2];
    } tf[3] = {
        {{0, 0}, {0, 0}, {0x6b200159, 0x99ba4efe}},
        {{0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}, {0x1cb996fc, 0xbb002be7}},
        {{0x13198a2e, 0x03707344}, {0x243f6a88, 0x85a308d3}, {0xc4923a9c, 0x483df7a0}},
    };
    for (int k = 0; k < 3; k++) {
        const uint32_t w[4] = {tf[k].key[0], tf[k].key[1], tf[k].ctr[0], tf[k].ctr[1]};
        rng_case(&c, 2, w, 2, MP_DT_UINT32, 2, bits, st);
        assert_memory_equal(bits, tf[k].out, sizeof tf[k].out);
        uint64_t key = (uint64_t)tf[k].key[0] | (uint64_t)tf[k].key[1] << 32;
        uint64_t ctr = ((uint64_t)tf[k].ctr[0] | (uint64_t)tf[k].ctr[1] << 32) + 1; /* +1 with carry */
        assert_true(st[0] == key && st[1] == ctr);
    }
    /* PHILOX, u64[3]: key words 0, 1, counter words 2..5 (Random123's philox4x32_10 answers,
     * also test_kernels_random's): one block of four words; as int64, two elements of two
     * words each, low first */
    const uint32_t pw[6] = {0xa4093822, 0x299f31d0, 0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344};
    const uint32_t pout[4] = {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1};
    rng_case(&c, 1, pw, 3, MP_DT_INT64, 2, bits, st);
    assert_memory_equal(bits, pout, sizeof pout);
    assert_true(st[0] == ((uint64_t)pw[1] << 32 | pw[0]) && st[1] == ((uint64_t)pw[3] << 32 | (pw[2] + 1u)) &&
                st[2] == ((uint64_t)pw[5] << 32 | pw[4]));
    /* PHILOX (DEFAULT), u64[2] of zeros: counter words 2, 3 then the key's again, all 0:
     * the first block is {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}; five int32 take it
     * and one word of the next block, and the counter stepped twice */
    const uint32_t zw[4] = {0, 0, 0, 0};
    int32_t five[5];
    rng_case(&c, 0, zw, 2, MP_DT_INT32, 5, five, st);
    const uint32_t z4[4] = {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8};
    assert_memory_equal(five, z4, sizeof z4);
    assert_true(st[0] == 0 && st[1] == 2);
    /* THREEFRY takes a u64[2] only (exit 6), bits of float32 are refused (exit 5) */
    const uint32_t w3[6] = {0};
    uint64_t s3[3] = {0};
    static mp_shlo_options thr = {.rng_algorithm = 2};
    start(&c, MP_OP_STABLEHLO_RNG_BIT_GENERATOR);
    c.opt.shlo = &thr;
    kh_input(&c, MP_DT_UINT64, 1, (int32_t[]){3}, s3);
    kh_output(&c, MP_DT_UINT64);
    kh_output(&c, MP_DT_UINT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "has 3 values; THREEFRY takes 2");
    (void)w3;
    start(&c, MP_OP_STABLEHLO_RNG_BIT_GENERATOR);
    kh_input(&c, MP_DT_UINT64, 1, (int32_t[]){2}, s3);
    kh_output(&c, MP_DT_UINT64);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "it may be int32, uint32, int64 or uint64");
    kh_free(&c);
}

/* ---- whole models in the static and dynamic modes ----------------------------------------- */

static const mp_memory_mode k_modes[] = {MP_MEMORY_AUTO, MP_MEMORY_STATIC, MP_MEMORY_DYNAMIC};

static void test_models_run(void **state)
{
    (void)state;
    mp_shlo_options cs = {.name = "my.affine", .version = 2}, sc;
    mp_test_model comp = composite_model(1, false, &cs);
    mp_test_model scat = scatter_model(&sc, 1, MP_OP_STABLEHLO_ADD, 2.0f);
    for (size_t m = 0; m < sizeof k_modes / sizeof k_modes[0]; m++) {
        mp_trace *tr = mp_trace_create();
        mp_session_options o = {.threads = 1, .mode = k_modes[m], .trace = tr};
        /* COMPOSITE: the decomposition x * 2 + 1 */
        mp_session *s = mp_test_session(&comp, &o, "composite.tflite");
        const float x[4] = {1.0f, -2.0f, 0.5f, 10.0f};
        float y[4];
        for (int r = 0; r < 2; r++) {
            mp_test_set_input(s, 0, x, sizeof x);
            mp_test_run(s);
            mp_test_get_output(s, 0, y, sizeof y);
            for (int k = 0; k < 4; k++)
                assert_float_equal(y[k], x[k] * 2.0f + 1.0f, 0);
        }
        mp_session_destroy(s);
        /* SCATTER whose body subgraph is one STABLEHLO_ADD */
        s = mp_test_session(&scat, &o, "scatter.tflite");
        float op[24], out[24];
        operand_324(op);
        mp_test_set_input(s, 0, op, sizeof op);
        mp_test_run(s);
        mp_test_get_output(s, 0, out, sizeof out);
        assert_memory_equal(out, k_scatter_add2, sizeof out);
        mp_session_destroy(s);
        assert_int_equal(mp_test_trace_live(tr), 0);
        mp_trace_destroy(tr);
    }
    free(comp.bytes);
    free(scat.bytes);

    /* CASE of four branches, subgraphs 1, 2, 3, 2 (x * 2, x + 10, max(x, 0), x + 10): each
     * index picks its own, one outside 0..3 the last (the spec's) */
    mp_shlo_options cso;
    const int32_t br[4] = {1, 2, 3, 2};
    mp_test_model cm = case_model(4, br, false, &cso);
    for (size_t m = 0; m < sizeof k_modes / sizeof k_modes[0]; m++) {
        mp_trace *tr = mp_trace_create();
        mp_session_options o = {.threads = 1, .mode = k_modes[m], .trace = tr};
        mp_session *s = mp_test_session(&cm, &o, "case.tflite");
        const float x[4] = {1.0f, -2.0f, 0.5f, -10.0f};
        const int32_t picks[6] = {0, 1, 2, 3, 7, -1};
        for (int p = 0; p < 6; p++) {
            float y[4];
            mp_test_set_input(s, 0, &picks[p], sizeof picks[p]);
            mp_test_set_input(s, 1, x, sizeof x);
            mp_test_run(s);
            mp_test_get_output(s, 0, y, sizeof y);
            int b = br[picks[p] < 0 || picks[p] > 3 ? 3 : picks[p]] - 1; /* 0 *2, 1 +10, 2 max */
            for (int k = 0; k < 4; k++) {
                float want = b == 0 ? x[k] * 2 : b == 1 ? x[k] + 10 : x[k] > 0 ? x[k] : 0;
                assert_float_equal(y[k], want, 0);
            }
        }
        mp_session_destroy(s);
        assert_int_equal(mp_test_trace_live(tr), 0);
        mp_trace_destroy(tr);
    }
    free(cm.bytes);

    /* STABLEHLO_REDUCE_WINDOW whose body subgraph (read by the reader) is one MAXIMUM: a 2x2
     * max pool, stride 2, of x [4, 4] = 4i + j - 8: each window's bottom right element */
    mp_tfw *rw = mp_tfw_create();
    static const float ninf = -1e30f;
    int rx = mp_tfw_tensor(rw, "x", MP_DT_FLOAT32, 2, (int32_t[]){4, 4}, 0, NULL);
    int ri = mp_tfw_tensor(rw, "init", MP_DT_FLOAT32, 0, NULL, mp_tfw_buffer(rw, &ninf, sizeof ninf), NULL);
    int ry = mp_tfw_tensor(rw, "y", MP_DT_FLOAT32, 2, (int32_t[]){2, 2}, 0, NULL);
    static mp_shlo_options pool = {.a = {.n = 2, .v = {2, 2}}, .b = {.n = 2, .v = {2, 2}}, .body = 1};
    mp_op_options po = mp_tfw_options_default();
    po.shlo = &pool;
    mp_tfw_op(rw, MP_OP_STABLEHLO_REDUCE_WINDOW, 2, (int32_t[]){rx, ri}, 1, &ry, &po);
    mp_tfw_io(rw, 1, &rx, 1, &ry);
    body_subgraph(rw, MP_OP_MAXIMUM);
    mp_test_model pm = mp_test_tfw_finish(rw);
    for (size_t m = 0; m < sizeof k_modes / sizeof k_modes[0]; m++) {
        mp_session_options o = {.threads = 1, .mode = k_modes[m]};
        mp_session *s = mp_test_session(&pm, &o, "rw.tflite");
        float xin[16], yout[4];
        for (int k = 0; k < 16; k++)
            xin[k] = (float)k - 8.0f;
        mp_test_set_input(s, 0, xin, sizeof xin);
        mp_test_run(s);
        mp_test_get_output(s, 0, yout, sizeof yout);
        const float want[4] = {5 - 8, 7 - 8, 13 - 8, 15 - 8};
        assert_memory_equal(yout, want, sizeof want);
        mp_session_destroy(s);
    }
    free(pm.bytes);

    /* RNG_BIT_GENERATOR (THREEFRY) on an input state of zeros: bits uint32 [4] whose first
     * two words are threefry2x32-20's answer for counter 0 under key 0; the same bits in every
     * mode, the state out with its counter stepped twice */
    mp_tfw *w = mp_tfw_create();
    int si = mp_tfw_tensor(w, "state", MP_DT_UINT64, 1, (int32_t[]){2}, 0, NULL);
    int so = mp_tfw_tensor(w, "state_out", MP_DT_UINT64, 1, (int32_t[]){2}, 0, NULL);
    int bo = mp_tfw_tensor(w, "bits", MP_DT_UINT32, 1, (int32_t[]){4}, 0, NULL);
    static mp_shlo_options thr = {.rng_algorithm = 2};
    mp_op_options ro = mp_tfw_options_default();
    ro.shlo = &thr;
    mp_tfw_op(w, MP_OP_STABLEHLO_RNG_BIT_GENERATOR, 1, &si, 2, (int32_t[]){so, bo}, &ro);
    mp_tfw_io(w, 1, &si, 2, (int32_t[]){so, bo});
    mp_test_model rm = mp_test_tfw_finish(w);
    uint32_t first[4] = {0};
    for (size_t m = 0; m < sizeof k_modes / sizeof k_modes[0]; m++) {
        mp_session_options o = {.threads = 1, .mode = k_modes[m]};
        mp_session *s = mp_test_session(&rm, &o, "rng.tflite");
        const uint64_t zero[2] = {0, 0};
        uint64_t sout[2];
        uint32_t bits[4];
        mp_test_set_input(s, 0, zero, sizeof zero);
        mp_test_run(s);
        mp_test_get_output(s, 0, sout, sizeof sout);
        mp_test_get_output(s, 1, bits, sizeof bits);
        assert_true(sout[0] == 0 && sout[1] == 2);
        assert_true(bits[0] == 0x6b200159 && bits[1] == 0x99ba4efe);
        if (m == 0)
            memcpy(first, bits, sizeof bits);
        assert_memory_equal(bits, first, sizeof bits);
        mp_session_destroy(s);
    }
    free(rm.bytes);

    /* an operator without a kernel: the session refuses it (exit 5), naming it */
    mp_test_model lg = one_op_model(MP_OP_STABLEHLO_LOGISTIC, NULL, 2, (int32_t[]){2, 3});
    mp_session *s = NULL;
    mp_error err = {0};
    mp_session_options o = {.threads = 1};
    assert_int_equal(mp_session_create(&o, &s, &err), MP_OK);
    mp_status st = mp_session_load_memory(s, lg.bytes, lg.size, "lg.tflite", &err);
    if (st == MP_OK)
        st = mp_session_prepare(s, &err);
    assert_int_equal(st, MP_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.msg, "STABLEHLO_LOGISTIC"));
    mp_session_destroy(s);
    free(lg.bytes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_reader_options),
        cmocka_unit_test(test_reader_refusals),
        cmocka_unit_test(test_elementwise),
        cmocka_unit_test(test_pad_dilate),
        cmocka_unit_test(test_reduce_window),
        cmocka_unit_test(test_gather),
        cmocka_unit_test(test_scatter),
        cmocka_unit_test(test_rng_bit_generator),
        cmocka_unit_test(test_models_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
