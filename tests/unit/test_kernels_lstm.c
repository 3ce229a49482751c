/* Tests of the LSTM and UNIDIRECTIONAL_SEQUENCE_LSTM kernel (engine/kernels/lstm.c) against a
 * plain float64 recurrence written from the LSTM equations (tests/util/lstm_ref.h): a small
 * LSTM (2 inputs, 3 cells, batch 2, 3 steps) plain, with peephole, with projection, CIFG,
 * cell clip, layer norm, both time layouts, the state carried over to the next run, the
 * one-step LSTM operator, and the refusals. */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/util/kernel_harness.h"
#include "tests/util/lstm_ref.h"

typedef struct lstm_case {
    kh_case c;
    mp_tensor *x, *h, *cs, *y;
} lstm_case;

static mp_tensor *opt_input(kh_case *c, bool present, int32_t rank, const int32_t *dims,
                            const float *data)
{
    if (!present) {
        kh_omit_input(c);
        return NULL;
    }
    return kh_input(c, MP_DT_FLOAT32, rank, dims, data);
}

/* The node of cf with weights w (sequence operator unless `one_step`); the state zero. */
static void build(lstm_case *L, const lr_cfg *cf, const lr_weights *w, bool one_step)
{
    kh_case *c = &L->c;
    kh_init(c, one_step ? MP_OP_LSTM : MP_OP_UNIDIRECTIONAL_SEQUENCE_LSTM, NULL);
    c->opt.activation = cf->act;
    c->opt.cell_clip = cf->cell_clip;
    c->opt.proj_clip = cf->proj_clip;
    c->opt.time_major = cf->time_major;
    int32_t B = cf->batch, T = cf->time, I = cf->n_input, C = cf->n_cell, O = cf->n_output;
    int32_t dx[3] = {cf->time_major ? T : B, cf->time_major ? B : T, I};
    if (one_step)
        L->x = kh_input(c, MP_DT_FLOAT32, 2, (int32_t[]){B, I}, NULL);
    else
        L->x = kh_input(c, MP_DT_FLOAT32, 3, dx, NULL);
    for (int k = 0; k < 4; k++)
        opt_input(c, k > 0 || !cf->cifg, 2, (int32_t[]){C, I}, w->wx[k]);
    for (int k = 0; k < 4; k++)
        opt_input(c, k > 0 || !cf->cifg, 2, (int32_t[]){C, O}, w->wh[k]);
    for (int k = 0; k < 3; k++)
        opt_input(c, cf->peephole && (k > 0 || !cf->cifg), 1, (int32_t[]){C}, w->peep[k]);
    for (int k = 0; k < 4; k++)
        opt_input(c, k > 0 || !cf->cifg, 1, (int32_t[]){C}, w->bias[k]);
    opt_input(c, cf->projection, 2, (int32_t[]){O, C}, w->pw);
    opt_input(c, cf->projection && cf->proj_bias, 1, (int32_t[]){O}, w->pb);
    L->h = kh_input(c, MP_DT_FLOAT32, 2, (int32_t[]){B, O}, NULL);
    L->cs = kh_input(c, MP_DT_FLOAT32, 2, (int32_t[]){B, C}, NULL);
    ((mp_tensor_info *)L->h->info)->is_variable = true;
    ((mp_tensor_info *)L->cs->info)->is_variable = true;
    if (cf->layer_norm)
        for (int k = 0; k < 4; k++)
            opt_input(c, k > 0 || !cf->cifg, 1, (int32_t[]){C}, w->ln[k]);
    L->y = kh_output(c, MP_DT_FLOAT32);
}

static void fill_input(float *x, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        x[i] = lr_val(&seed, 1.5f);
}

static void expect_near(const float *got, const double *want, size_t n)
{
    float w[64];
    assert_true(n <= 64);
    for (size_t i = 0; i < n; i++)
        w[i] = (float)want[i];
    kh_expect_close(got, w, n, 1.0);
}

/* Three runs of cf's sequence: the state carries over from run to run, and each run's output
 * and state equal the reference continued from the state the run before left. */
static void check_cfg(const lr_cfg *cf, unsigned seed)
{
    lr_weights w;
    lr_fill_weights(&w, seed);
    lstm_case L;
    build(&L, cf, &w, false);
    size_t nx = (size_t)(cf->batch * cf->time * cf->n_input);
    size_t ny = (size_t)(cf->batch * cf->time * cf->n_output);
    double h[LR_MAX * LR_MAX] = {0}, c[LR_MAX * LR_MAX] = {0}, y[64];
    for (int run = 0; run < 3; run++) {
        fill_input(L.x->data, nx, seed + 100u * (unsigned)run);
        kh_expect_ok(&L.c, run == 0 ? kh_run(&L.c) : kh_rerun(&L.c, false));
        assert_int_equal(L.y->rank, 3);
        assert_int_equal(L.y->dims[2], cf->n_output);
        lr_run(cf, &w, L.x->data, h, c, y);
        expect_near(L.y->data, y, ny);
        expect_near(L.h->data, h, (size_t)(cf->batch * cf->n_output));
        expect_near(L.cs->data, c, (size_t)(cf->batch * cf->n_cell));
    }
    kh_free(&L.c);
}

static lr_cfg small(void)
{
    return (lr_cfg){.batch = 2, .time = 3, .n_input = 2, .n_cell = 3, .n_output = 3,
                    .act = MP_ACT_TANH, .time_major = true};
}

static void test_plain(void **state)
{
    (void)state;
    lr_cfg cf = small();
    check_cfg(&cf, 1);
    cf.time_major = false;
    check_cfg(&cf, 2);
}

static void test_peephole(void **state)
{
    (void)state;
    lr_cfg cf = small();
    cf.peephole = true;
    check_cfg(&cf, 3);
    cf.time_major = false;
    check_cfg(&cf, 4);
}

static void test_projection(void **state)
{
    (void)state;
    lr_cfg cf = small();
    cf.projection = true;
    cf.n_output = 2;
    check_cfg(&cf, 5); /* no projection bias */
    cf.proj_bias = true;
    cf.peephole = true;
    check_cfg(&cf, 6);
    cf.proj_clip = 0.05f; /* tight: most outputs clipped */
    check_cfg(&cf, 7);
}

static void test_cifg(void **state)
{
    (void)state;
    lr_cfg cf = small();
    cf.cifg = true;
    check_cfg(&cf, 8);
    cf.peephole = true;
    cf.time_major = false;
    check_cfg(&cf, 9);
}

static void test_cell_clip(void **state)
{
    (void)state;
    lr_cfg cf = small();
    cf.cell_clip = 0.1f;
    check_cfg(&cf, 10);
    cf.peephole = true;
    cf.projection = true;
    cf.proj_bias = true;
    cf.n_output = 4;
    check_cfg(&cf, 11);
}

static void test_layer_norm_and_activations(void **state)
{
    (void)state;
    lr_cfg cf = small();
    cf.layer_norm = true;
    check_cfg(&cf, 12);
    cf.cifg = true;
    cf.peephole = true;
    check_cfg(&cf, 13);
    cf = small();
    cf.act = MP_ACT_RELU6;
    check_cfg(&cf, 14);
    cf.act = MP_ACT_NONE;
    check_cfg(&cf, 15);
}

/* The one-step LSTM operator run three times is the sequence of three steps. */
static void test_one_step(void **state)
{
    (void)state;
    lr_cfg cf = small();
    cf.peephole = true;
    lr_weights w;
    lr_fill_weights(&w, 16);
    lstm_case L;
    build(&L, &cf, &w, true);
    float x[3][2 * 2];
    for (int t = 0; t < 3; t++)
        fill_input(x[t], 4, 20u + (unsigned)t);
    double h[8] = {0}, c[8] = {0}, y[3][6]; /* [time][batch * n_output] */
    lr_cfg seq = cf;
    seq.time = 3;
    lr_run(&seq, &w, &x[0][0], h, c, &y[0][0]); /* time-major: step t is x[t] */
    for (int t = 0; t < 3; t++) {
        memcpy(L.x->data, x[t], sizeof x[t]);
        kh_expect_ok(&L.c, t == 0 ? kh_run(&L.c) : kh_rerun(&L.c, false));
        assert_int_equal(L.y->rank, 2);
        expect_near(L.y->data, y[t], 6);
    }
    kh_free(&L.c);
}

static void test_refusals(void **state)
{
    (void)state;
    lr_cfg cf = small();
    lr_weights w;
    lr_fill_weights(&w, 17);
    lstm_case L;
    /* the state must be variable tensors */
    build(&L, &cf, &w, false);
    ((mp_tensor_info *)L.cs->info)->is_variable = false;
    kh_expect_error(&L.c, MP_ERR_FORMAT, "not a variable tensor");
    kh_free(&L.c);
    /* the BASIC kernel */
    build(&L, &cf, &w, true);
    L.c.opt.lstm_kernel_type = 1;
    kh_expect_error(&L.c, MP_ERR_UNSUPPORTED, "BASIC");
    kh_free(&L.c);
    /* a state of the wrong batch */
    cf.batch = 1;
    build(&L, &cf, &w, false);
    L.c.opt.time_major = false; /* [1,3,2] read as batch 1... */
    L.x->dims[0] = 2;           /* ...made batch 2 */
    L.x->dims[1] = 3;
    kh_expect_error(&L.c, MP_ERR_SHAPE, "output state");
    kh_free(&L.c);
    /* CIFG must omit the input gate's recurrent weights too */
    cf = small();
    cf.cifg = true;
    build(&L, &cf, &w, false);
    L.c.in[5] = L.c.in[6];
    kh_expect_error(&L.c, MP_ERR_FORMAT, "CIFG");
    kh_free(&L.c);
    /* a signed-bit activation */
    cf = small();
    cf.act = MP_ACT_SIGN_BIT;
    build(&L, &cf, &w, false);
    kh_expect_error(&L.c, MP_ERR_UNSUPPORTED, "activation");
    kh_free(&L.c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain),
        cmocka_unit_test(test_peephole),
        cmocka_unit_test(test_projection),
        cmocka_unit_test(test_cifg),
        cmocka_unit_test(test_cell_clip),
        cmocka_unit_test(test_layer_norm_and_activations),
        cmocka_unit_test(test_one_step),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
