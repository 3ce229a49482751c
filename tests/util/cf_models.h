/* Models of several subgraphs written with the tflite writer, for the tests of control flow
 * (test_control_flow.c) and of the plans of every subgraph (test_plan_subgraphs.c): the pieces
 * of a WHILE loop over a counter i (int32 [1]) and a float vector x (float [len]), the loop
 * model x = 2x + 1, i = i + 1 while i < n, and a loop whose variable grows. */
#ifndef MP_TEST_CF_MODELS_H
#define MP_TEST_CF_MODELS_H

#include <stdint.h>

#include "engine/model/tflite_writer.h"
#include "tests/util/testutil.h"

/* Constants of one int32 / one float ([1]) in the current subgraph. */
int mp_cf_const_i32(mp_tfw *w, const char *name, int32_t v);
int mp_cf_const_f32(mp_tfw *w, const char *name, float v);
/* The cond subgraph: inputs (i int32 [1], a second one of dtype `second` and shape dims2,
 * ignored), output i < n (bool [1]). */
void mp_cf_cond_less(mp_tfw *w, int32_t n, mp_dtype second, int rank2, const int32_t *dims2);
/* The loop variables' tensors in the current subgraph: v[0] the counter i (int32 [1]), v[1]
 * x (float [len]), v[2] and v[3] their next values, named PREFIX i, x, i_next, x_next. */
void mp_cf_loop_vars(mp_tfw *w, const char *prefix, int32_t len, int v[4]);
/* WHILE(cond, body) from (v[0], v[1]) to (v[2], v[3]) in the current subgraph. */
void mp_cf_while_op(mp_tfw *w, const int v[4], int cond, int body);
/* A subgraph's inputs (v[0], v[1]) and outputs (v[2], v[3]). */
void mp_cf_body_io(mp_tfw *w, const int v[4]);
/* Subgraph 0 of the loop models: inputs i and x [len], a WHILE(cond, body), outputs i and x. */
void mp_cf_main_while(mp_tfw *w, int32_t len, int cond, int body);
/* WHILE i < n: i = i + 1, x = 2x + 1 (x float [len]). Subgraph 1 is cond (LESS), 2 body (MUL
 * x by 2 into 'twice', ADD 1 into x_next, ADD 1 to i into i_next, in that order). */
mp_test_model mp_cf_while_model(int32_t n, int32_t len);
/* WHILE i < n: i = i + 1, y = CONCATENATION(y + 1, [1]) along axis 1 (y float [1, L], from
 * input y0 [1, 1]): y grows by one element per iteration, so the WHILE's outputs are known
 * only after the loop (deferred). Subgraph 1 is cond, 2 body (ADD -> plus, CONCATENATION ->
 * by2, ADD -> bi2). */
mp_test_model mp_cf_grow_model(int32_t n);

#endif
