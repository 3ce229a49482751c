/* Tests of the StableHLO operators (schema codes 162..209): their names, the reader's
 * builtin_options_2 (written by the tflite writer, read back, and every fault refused in one
 * line with its exit status). */
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
    assert_true(mp_op_calls_subgraphs(MP_OP_STABLEHLO_COMPOSITE));
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_reader_options),
        cmocka_unit_test(test_reader_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
