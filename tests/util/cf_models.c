/* Models of several subgraphs for the tests (see cf_models.h). */
#include "tests/util/cf_models.h"

#include <stdio.h>

int mp_cf_const_i32(mp_tfw *w, const char *name, int32_t v)
{
    return mp_tfw_tensor(w, name, MP_DT_INT32, 1, (int32_t[]){1}, mp_tfw_buffer(w, &v, sizeof v),
                         NULL);
}

int mp_cf_const_f32(mp_tfw *w, const char *name, float v)
{
    return mp_tfw_tensor(w, name, MP_DT_FLOAT32, 1, (int32_t[]){1}, mp_tfw_buffer(w, &v, sizeof v),
                         NULL);
}

void mp_cf_cond_less(mp_tfw *w, int32_t n, mp_dtype second, int rank2, const int32_t *dims2)
{
    int ci = mp_tfw_tensor(w, "ci", MP_DT_INT32, 1, (int32_t[]){1}, 0, NULL);
    int cx = mp_tfw_tensor(w, "cx", second, rank2, dims2, 0, NULL);
    int cn = mp_cf_const_i32(w, "n", n);
    int cb = mp_tfw_tensor(w, "go", MP_DT_BOOL, 1, (int32_t[]){1}, 0, NULL);
    mp_tfw_op(w, MP_OP_LESS, 2, (int32_t[]){ci, cn}, 1, &cb, NULL);
    mp_tfw_io(w, 2, (int32_t[]){ci, cx}, 1, &cb);
}

void mp_cf_loop_vars(mp_tfw *w, const char *prefix, int32_t len, int v[4])
{
    static const char *const what[4] = {"i", "x", "i_next", "x_next"};
    for (int k = 0; k < 4; k++) {
        char nm[32];
        snprintf(nm, sizeof nm, "%s%s", prefix, what[k]);
        v[k] = k % 2 ? mp_tfw_tensor(w, nm, MP_DT_FLOAT32, 1, (int32_t[]){len}, 0, NULL)
                     : mp_tfw_tensor(w, nm, MP_DT_INT32, 1, (int32_t[]){1}, 0, NULL);
    }
}

void mp_cf_while_op(mp_tfw *w, const int v[4], int cond, int body)
{
    mp_op_options o = mp_tfw_options_default();
    o.subgraph_a = cond;
    o.subgraph_b = body;
    mp_tfw_op(w, MP_OP_WHILE, 2, (int32_t[]){v[0], v[1]}, 2, (int32_t[]){v[2], v[3]}, &o);
}

void mp_cf_body_io(mp_tfw *w, const int v[4])
{
    mp_tfw_io(w, 2, (int32_t[]){v[0], v[1]}, 2, (int32_t[]){v[2], v[3]});
}

void mp_cf_main_while(mp_tfw *w, int32_t len, int cond, int body)
{
    int v[4];
    mp_cf_loop_vars(w, "", len, v);
    mp_cf_while_op(w, v, cond, body);
    mp_cf_body_io(w, v);
}

mp_test_model mp_cf_while_model(int32_t n, int32_t len)
{
    mp_tfw *w = mp_tfw_create();
    mp_cf_main_while(w, len, 1, 2);

    mp_tfw_subgraph(w, "cond");
    mp_cf_cond_less(w, n, MP_DT_FLOAT32, 1, (int32_t[]){len});

    mp_tfw_subgraph(w, "body");
    int v[4];
    mp_cf_loop_vars(w, "b", len, v);
    int one_i = mp_cf_const_i32(w, "one_i", 1), two = mp_cf_const_f32(w, "two", 2.0f),
        one_f = mp_cf_const_f32(w, "one_f", 1.0f);
    int t = mp_tfw_tensor(w, "twice", MP_DT_FLOAT32, 1, (int32_t[]){len}, 0, NULL);
    mp_tfw_op(w, MP_OP_MUL, 2, (int32_t[]){v[1], two}, 1, &t, NULL);
    mp_tfw_op(w, MP_OP_ADD, 2, (int32_t[]){t, one_f}, 1, &v[3], NULL);
    mp_tfw_op(w, MP_OP_ADD, 2, (int32_t[]){v[0], one_i}, 1, &v[2], NULL);
    mp_cf_body_io(w, v);
    return mp_test_tfw_finish(w);
}

/* WHILE i < n: i = i + 1, y = CONCATENATION(y + 1, [1]) along axis 1 (y float [1, L]): y grows
 * by one element per iteration. */
mp_test_model mp_cf_grow_model(int32_t n)
{
    mp_tfw *w = mp_tfw_create();
    int i0 = mp_tfw_tensor(w, "i0", MP_DT_INT32, 1, (int32_t[]){1}, 0, NULL);
    int y0 = mp_tfw_tensor(w, "y0", MP_DT_FLOAT32, 2, (int32_t[]){1, 1}, 0, (int32_t[]){1, -1});
    int i1 = mp_tfw_tensor(w, "i_end", MP_DT_INT32, 1, (int32_t[]){1}, 0, NULL);
    int y1 = mp_tfw_tensor(w, "y_end", MP_DT_FLOAT32, 2, (int32_t[]){1, 1}, 0, (int32_t[]){1, -1});
    mp_cf_while_op(w, (int[]){i0, y0, i1, y1}, 1, 2);
    mp_tfw_io(w, 2, (int32_t[]){i0, y0}, 1, &y1);

    mp_tfw_subgraph(w, "cond");
    mp_cf_cond_less(w, n, MP_DT_FLOAT32, 2, (int32_t[]){1, 1});

    mp_tfw_subgraph(w, "body");
    int bi = mp_tfw_tensor(w, "bi", MP_DT_INT32, 1, (int32_t[]){1}, 0, NULL);
    int by = mp_tfw_tensor(w, "by", MP_DT_FLOAT32, 2, (int32_t[]){1, 1}, 0, (int32_t[]){1, -1});
    int one_i = mp_cf_const_i32(w, "one_i", 1), one_f = mp_cf_const_f32(w, "one_f", 1.0f);
    float onev = 1.0f;
    int tail = mp_tfw_tensor(w, "tail", MP_DT_FLOAT32, 2, (int32_t[]){1, 1},
                             mp_tfw_buffer(w, &onev, sizeof onev), NULL);
    int p = mp_tfw_tensor(w, "plus", MP_DT_FLOAT32, 2, (int32_t[]){1, 1}, 0, NULL);
    int by2 = mp_tfw_tensor(w, "by2", MP_DT_FLOAT32, 2, (int32_t[]){1, 2}, 0, NULL);
    int bi2 = mp_tfw_tensor(w, "bi2", MP_DT_INT32, 1, (int32_t[]){1}, 0, NULL);
    mp_tfw_op(w, MP_OP_ADD, 2, (int32_t[]){by, one_f}, 1, &p, NULL);
    mp_op_options c = mp_tfw_options_default();
    c.axis = 1;
    mp_tfw_op(w, MP_OP_CONCATENATION, 2, (int32_t[]){p, tail}, 1, &by2, &c);
    mp_tfw_op(w, MP_OP_ADD, 2, (int32_t[]){bi, one_i}, 1, &bi2, NULL);
    mp_cf_body_io(w, (int[]){bi, by, bi2, by2});
    return mp_test_tfw_finish(w);
}
