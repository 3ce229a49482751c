/* Tests of the shape kernels (SHAPE, STRIDED_SLICE, PACK). STRIDED_SLICE is checked against a
 * reference written from NumPy's indexing rules (x[1:-1:2], x[::-1], x[..., None, 0], ...),
 * each index expression converted to begin/end/strides and masks the way the TensorFlow
 * converter does; plus hand-computed cases, offset, deferred values and errors. */
#include "tests/util/testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/util/kernel_harness.h"

static void expect_shape(const mp_tensor *t, int32_t rank, const int32_t *dims)
{
    char a[96], b[96];
    mp_shape_str(t->rank, t->dims, a, sizeof a);
    mp_shape_str(rank, dims, b, sizeof b);
    if (strcmp(a, b) != 0)
        fail_msg("shape %s, expected %s", a, b);
}

/* ---- SHAPE ------------------------------------------------------------------------------ */

static void test_shape(void **state)
{
    (void)state;
    kh_case c;
    kh_init(&c, MP_OP_SHAPE, NULL);
    mp_tensor *in = kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, 7, 5, 3}, NULL);
    mp_tensor *out = kh_output(&c, MP_DT_INT32);
    /* run needs the shape only: the input has no data yet */
    free(in->data);
    in->data = NULL;
    assert_int_equal(kh_run(&c), MP_OK);
    expect_shape(out, 1, (int32_t[]){4});
    assert_memory_equal(out->data, ((const int32_t[]){1, 7, 5, 3}), 16);
    /* the input shape changes */
    assert_true(mp_tensor_set_shape(in, 2, (int32_t[]){9, 2}));
    assert_int_equal(kh_run(&c), MP_OK);
    expect_shape(out, 1, (int32_t[]){2});
    assert_memory_equal(out->data, ((const int32_t[]){9, 2}), 8);
    kh_free(&c);

    kh_init(&c, MP_OP_SHAPE, NULL);
    kh_input(&c, MP_DT_UINT8, 3, (int32_t[]){2, 3, 4}, NULL);
    out = kh_output(&c, MP_DT_INT64);
    c.opt.out_type = MP_DT_INT64;
    assert_int_equal(kh_run(&c), MP_OK);
    assert_memory_equal(out->data, ((const int64_t[]){2, 3, 4}), 24);
    kh_free(&c);

    /* a scalar has shape [] : output [0] */
    kh_init(&c, MP_OP_SHAPE, NULL);
    kh_input(&c, MP_DT_INT32, 0, NULL, NULL);
    out = kh_output(&c, MP_DT_INT32);
    assert_int_equal(kh_run(&c), MP_OK);
    expect_shape(out, 1, (int32_t[]){0});
    kh_free(&c);

    kh_init(&c, MP_OP_SHAPE, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){3}, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "'t1'");
    kh_free(&c);
}

/* ---- STRIDED_SLICE: NumPy reference ----------------------------------------------------- */

#define NONE_IX INT32_MIN /* "absent" start or stop, like Python's None */

typedef enum { IX_SLICE, IX_INDEX, IX_NEW, IX_ELLIPSIS } ix_kind;

typedef struct ix {
    ix_kind kind;
    int32_t start, stop, step; /* IX_SLICE (NONE_IX = absent) */
    int32_t index;             /* IX_INDEX */
} ix;

#define SL(a, b, s) ((ix){IX_SLICE, (a), (b), (s), 0})
#define IDX(i) ((ix){IX_INDEX, 0, 0, 1, (i)})
#define NEWAX ((ix){IX_NEW, 0, 0, 1, 0})
#define ELL ((ix){IX_ELLIPSIS, 0, 0, 1, 0})
#define N NONE_IX

/* NumPy basic indexing: per input dimension (start, step, count) and the result shape.
 * Slices follow Python's slice.indices(len). Returns false for an index out of range. */
static bool numpy_plan(int32_t rank, const int32_t *dims, int n, const ix *spec, int64_t *start,
                       int64_t *step, int64_t *count, int32_t *out_rank, int32_t *out_dims)
{
    int used = 0;
    bool has_ell = false;
    for (int i = 0; i < n; i++) {
        used += spec[i].kind == IX_SLICE || spec[i].kind == IX_INDEX;
        has_ell = has_ell || spec[i].kind == IX_ELLIPSIS;
    }
    int32_t d = 0;
    *out_rank = 0;
    for (int i = 0; i <= n; i++) {
        bool ell = i < n ? spec[i].kind == IX_ELLIPSIS : !has_ell;
        if (i == n && !ell)
            break;
        if (ell) {
            int32_t cover = rank - used;
            for (int32_t k = 0; k < cover; k++, d++) {
                start[d] = 0;
                step[d] = 1;
                count[d] = dims[d];
                out_dims[(*out_rank)++] = dims[d];
            }
            continue;
        }
        const ix *e = &spec[i];
        if (e->kind == IX_NEW) {
            out_dims[(*out_rank)++] = 1;
            continue;
        }
        int64_t len = dims[d];
        if (e->kind == IX_INDEX) {
            int64_t v = e->index < 0 ? e->index + len : e->index;
            if (v < 0 || v >= len)
                return false;
            start[d] = v;
            step[d] = 1;
            count[d] = 1;
            d++;
            continue;
        }
        int64_t s = e->step, b, t;
        if (s > 0) {
            b = e->start == N ? 0 : (e->start < 0 ? e->start + len : e->start);
            t = e->stop == N ? len : (e->stop < 0 ? e->stop + len : e->stop);
            b = b < 0 ? 0 : (b > len ? len : b);
            t = t < 0 ? 0 : (t > len ? len : t);
            count[d] = t > b ? (t - b + s - 1) / s : 0;
        } else {
            b = e->start == N ? len - 1 : (e->start < 0 ? e->start + len : e->start);
            t = e->stop == N ? -1 : (e->stop < 0 ? e->stop + len : e->stop);
            b = b < -1 ? -1 : (b > len - 1 ? len - 1 : b);
            if (e->stop != N)
                t = t < -1 ? -1 : (t > len - 1 ? len - 1 : t);
            count[d] = b > t ? (b - t + (-s) - 1) / (-s) : 0;
        }
        start[d] = b;
        step[d] = s;
        out_dims[(*out_rank)++] = (int32_t)count[d];
        d++;
    }
    return true;
}

/* Gather the planned elements, in order. */
static void numpy_gather(int32_t rank, const int32_t *dims, const int64_t *start,
                         const int64_t *step, const int64_t *count, const uint8_t *in, size_t es,
                         uint8_t *out)
{
    size_t total = 1;
    for (int32_t d = 0; d < rank; d++)
        total *= (size_t)count[d];
    for (size_t f = 0; f < total; f++) {
        size_t r = f, src = 0, mul = 1;
        for (int32_t d = rank - 1; d >= 0; d--) {
            int64_t i = (int64_t)(r % (size_t)count[d]);
            r /= (size_t)count[d];
            src += (size_t)(start[d] + i * step[d]) * mul;
            mul *= (size_t)dims[d];
        }
        memcpy(out + f * es, in + src * es, es);
    }
}

/* The TensorFlow converter's encoding of an index expression. */
static void encode(int n, const ix *spec, int32_t *begin, int32_t *end, int32_t *strides,
                   mp_op_options *o)
{
    o->begin_mask = o->end_mask = o->ellipsis_mask = o->new_axis_mask = o->shrink_axis_mask = 0;
    for (int i = 0; i < n; i++) {
        begin[i] = end[i] = 0;
        strides[i] = 1;
        switch (spec[i].kind) {
        case IX_SLICE:
            strides[i] = spec[i].step;
            if (spec[i].start == N)
                o->begin_mask |= 1 << i;
            else
                begin[i] = spec[i].start;
            if (spec[i].stop == N)
                o->end_mask |= 1 << i;
            else
                end[i] = spec[i].stop;
            break;
        case IX_INDEX:
            begin[i] = spec[i].index;
            end[i] = spec[i].index + 1;
            o->shrink_axis_mask |= 1 << i;
            break;
        case IX_NEW: o->new_axis_mask |= 1 << i; break;
        case IX_ELLIPSIS: o->ellipsis_mask |= 1 << i; break;
        }
    }
}

static void check_slice(mp_dtype dt, int32_t rank, const int32_t *dims, int n, const ix *spec,
                        const char *label)
{
    int32_t begin[16], end[16], strides[16];
    kh_case c;
    kh_init(&c, MP_OP_STRIDED_SLICE, NULL);
    encode(n, spec, begin, end, strides, &c.opt);
    mp_tensor *in = kh_input(&c, dt, rank, dims, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){n}, begin);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){n}, end);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){n}, strides);
    mp_tensor *out = kh_output(&c, dt);
    kh_fill_bytes(in, (unsigned)n * 7);
    mp_status st = kh_run(&c);
    if (st != MP_OK)
        fail_msg("%s: status %d: %s", label, st, c.err.msg);
    int64_t start[MP_MAX_RANK], step[MP_MAX_RANK], count[MP_MAX_RANK];
    int32_t out_rank, out_dims[MP_MAX_RANK];
    assert_true(numpy_plan(rank, dims, n, spec, start, step, count, &out_rank, out_dims));
    char a[96], b[96];
    mp_shape_str(out->rank, out->dims, a, sizeof a);
    mp_shape_str(out_rank, out_dims, b, sizeof b);
    if (strcmp(a, b) != 0)
        fail_msg("%s: shape %s, expected %s", label, a, b);
    uint8_t *want = calloc(1, out->bytes + 1);
    numpy_gather(rank, dims, start, step, count, in->data, mp_dtype_size(dt), want);
    if (memcmp(out->data, want, out->bytes) != 0)
        fail_msg("%s: values differ", label);
    /* second run with other data */
    kh_fill_bytes(in, 200);
    assert_int_equal(kh_rerun(&c, false), MP_OK);
    numpy_gather(rank, dims, start, step, count, in->data, mp_dtype_size(dt), want);
    if (memcmp(out->data, want, out->bytes) != 0)
        fail_msg("%s: values differ on the second run", label);
    free(want);
    kh_free(&c);
}

#define CHECK(dt, dimsv, ...)                                                                  \
    do {                                                                                       \
        const int32_t dims_[] = dimsv;                                                         \
        const ix spec_[] = {__VA_ARGS__};                                                      \
        check_slice(dt, (int32_t)(sizeof dims_ / sizeof dims_[0]), dims_,                      \
                    (int)(sizeof spec_ / sizeof spec_[0]), spec_, #dimsv " " #__VA_ARGS__);   \
    } while (0)

#define D1 {10}
#define D2 {4, 5}
#define D3 {3, 4, 5}
#define D4 {2, 3, 4, 5}

static void test_slice_numpy(void **state)
{
    (void)state;
    /* 1-D */
    CHECK(MP_DT_FLOAT32, D1, SL(1, -1, 2));   /* x[1:-1:2] */
    CHECK(MP_DT_FLOAT32, D1, SL(N, N, -1));   /* x[::-1] */
    CHECK(MP_DT_INT32, D1, SL(N, N, -2));     /* x[::-2] */
    CHECK(MP_DT_INT32, D1, IDX(-1));          /* x[-1] */
    CHECK(MP_DT_INT32, D1, IDX(0));           /* x[0] */
    CHECK(MP_DT_FLOAT32, D1, SL(-100, 100, 1)); /* clamped */
    CHECK(MP_DT_FLOAT32, D1, SL(5, 1, 1));    /* empty */
    CHECK(MP_DT_FLOAT32, D1, SL(3, 0, -1));   /* x[3:0:-1] */
    CHECK(MP_DT_FLOAT32, D1, SL(-1, -5, -2)); /* x[-1:-5:-2] */
    CHECK(MP_DT_FLOAT32, D1, SL(8, 2, -3));
    CHECK(MP_DT_FLOAT32, D1, SL(100, -100, -1)); /* clamped backwards */
    CHECK(MP_DT_FLOAT32, D1, SL(N, 3, -1));   /* x[:3:-1] */
    CHECK(MP_DT_FLOAT32, D1, SL(2, N, -1));   /* x[2::-1] */
    CHECK(MP_DT_UINT8, D1, NEWAX, SL(2, N, 1)); /* x[None, 2:] */
    CHECK(MP_DT_UINT8, D1, ELL);              /* x[...] */
    CHECK(MP_DT_UINT8, D1, ELL, NEWAX);       /* x[..., None] */
    CHECK(MP_DT_INT64, D1, SL(-3, N, 1));     /* x[-3:] */
    /* 2-D */
    CHECK(MP_DT_FLOAT32, D2, SL(1, 3, 1), SL(N, N, -1)); /* x[1:3, ::-1] */
    CHECK(MP_DT_FLOAT32, D2, IDX(1));                  /* x[1] */
    CHECK(MP_DT_FLOAT32, D2, SL(N, N, 1), SL(1, 2, 1)); /* x[:, 1:2] */
    CHECK(MP_DT_INT32, D2, IDX(-1), SL(1, 4, 1));       /* x[-1, 1:4] */
    CHECK(MP_DT_INT32, D2, SL(N, N, 2), IDX(-2));       /* x[::2, -2] */
    CHECK(MP_DT_INT32, D2, NEWAX, SL(1, N, 1), ELL);    /* x[None, 1:, ...] */
    CHECK(MP_DT_BOOL, D2, SL(N, N, 1), NEWAX, SL(N, N, 2)); /* x[:, None, ::2] */
    CHECK(MP_DT_BOOL, D2, ELL, IDX(1));                 /* x[..., 1] */
    CHECK(MP_DT_INT16, D2, IDX(1), ELL, SL(N, N, -1));  /* x[1, ..., ::-1] */
    CHECK(MP_DT_INT16, D2, ELL, NEWAX, IDX(0));         /* x[..., None, 0] */
    CHECK(MP_DT_FLOAT32, D2, SL(-2, N, -1), SL(N, -2, -2)); /* x[-2::-1, :-2:-2] */
    CHECK(MP_DT_FLOAT32, D2, SL(1, 3, 1));              /* x[1:3] */
    /* 3-D */
    CHECK(MP_DT_FLOAT32, D3, IDX(0), IDX(0), IDX(0));   /* scalar */
    CHECK(MP_DT_FLOAT32, D3, IDX(2), IDX(-1), IDX(4));
    CHECK(MP_DT_FLOAT32, D3, ELL, IDX(1));              /* x[..., 1] */
    CHECK(MP_DT_FLOAT32, D3, SL(1, N, 1), ELL, SL(N, N, -2)); /* x[1:, ..., ::-2] */
    CHECK(MP_DT_FLOAT32, D3, SL(N, N, 1), SL(-1, 0, -1), NEWAX, IDX(3));
    CHECK(MP_DT_INT32, D3, NEWAX, ELL, NEWAX);          /* x[None, ..., None] */
    CHECK(MP_DT_INT32, D3, SL(2, 3, 1));                /* x[2:3] */
    CHECK(MP_DT_INT32, D3, ELL, SL(1, 3, 1), NEWAX);    /* x[..., 1:3, None] */
    CHECK(MP_DT_INT32, D3, NEWAX, NEWAX, IDX(1), ELL, IDX(2)); /* x[None, None, 1, ..., 2] */
    CHECK(MP_DT_INT64, D3, SL(N, N, -1), SL(N, N, -1), SL(N, N, -1));
    /* 4-D */
    CHECK(MP_DT_FLOAT32, D4, SL(N, N, 1), SL(1, 3, 1), SL(N, N, 1), SL(N, N, 2));
    CHECK(MP_DT_FLOAT32, D4, IDX(1), ELL, IDX(2));      /* x[1, ..., 2] */
    CHECK(MP_DT_FLOAT32, D4, ELL, SL(N, N, -1));        /* x[..., ::-1] */
    CHECK(MP_DT_UINT8, D4, SL(N, N, 1), SL(N, N, 1), SL(1, 3, 1)); /* x[:, :, 1:3] */
    CHECK(MP_DT_UINT8, D4, IDX(-1), SL(N, N, 1), SL(N, N, 1), SL(1, 4, 2));
}

static void test_slice_hand(void **state)
{
    (void)state;
    float x[20];
    for (int i = 0; i < 20; i++)
        x[i] = (float)i;
    /* arange(10)[1:-1:2] = [1,3,5,7] */
    kh_case c;
    kh_init(&c, MP_OP_STRIDED_SLICE, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){10}, x);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, (int32_t[]){1});
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, (int32_t[]){-1});
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, (int32_t[]){2});
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    assert_int_equal(kh_run(&c), MP_OK);
    expect_shape(out, 1, (int32_t[]){4});
    assert_memory_equal(out->data, ((const float[]){1, 3, 5, 7}), 16);
    kh_free(&c);

    /* arange(20).reshape(4,5)[1:3, ::-1] = [[9,8,7,6,5],[14,13,12,11,10]] */
    static const int32_t b[] = {1, 0}, e[] = {3, 0}, s[] = {1, -1};
    kh_init(&c, MP_OP_STRIDED_SLICE, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){4, 5}, x);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, b);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, e);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, s);
    out = kh_output(&c, MP_DT_FLOAT32);
    c.opt.begin_mask = 2;
    c.opt.end_mask = 2;
    assert_int_equal(kh_run(&c), MP_OK);
    expect_shape(out, 2, (int32_t[]){2, 5});
    assert_memory_equal(out->data, ((const float[]){9, 8, 7, 6, 5, 14, 13, 12, 11, 10}), 40);
    kh_free(&c);

    /* the dynamic-shape idiom: shape[1:3] of an int32 shape vector, and shape[0] shrunk */
    static const int32_t shp[] = {1, 224, 160, 3};
    kh_init(&c, MP_OP_STRIDED_SLICE, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){4}, shp);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, (int32_t[]){0});
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, (int32_t[]){1});
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, (int32_t[]){1});
    out = kh_output(&c, MP_DT_INT32);
    c.opt.shrink_axis_mask = 1;
    assert_int_equal(kh_run(&c), MP_OK);
    assert_int_equal(out->rank, 0);
    assert_int_equal(*(int32_t *)out->data, 1);
    kh_free(&c);

    /* ellipsis and new axis on the same entry: the ellipsis wins (x[...]) */
    static const int32_t z1[] = {0};
    kh_init(&c, MP_OP_STRIDED_SLICE, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){4, 5}, x);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, z1);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, z1);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, (int32_t[]){1});
    out = kh_output(&c, MP_DT_FLOAT32);
    c.opt.ellipsis_mask = 1;
    c.opt.new_axis_mask = 1;
    assert_int_equal(kh_run(&c), MP_OK);
    expect_shape(out, 2, (int32_t[]){4, 5});
    assert_memory_equal(out->data, x, 80);
    kh_free(&c);
}

static void test_slice_offset_and_deferred(void **state)
{
    (void)state;
    float x[20];
    for (int i = 0; i < 20; i++)
        x[i] = (float)i;
    /* offset: end holds sizes. begin known only while running: the shape comes from the
     * sizes alone (x[b0:b0+2, b1:b1+3]) */
    kh_case c;
    kh_init(&c, MP_OP_STRIDED_SLICE, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){4, 5}, x);
    mp_tensor *tb = kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, (int32_t[]){2, 3});
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, (int32_t[]){1, 1});
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    c.opt.offset = true;
    int32_t *bv = tb->data;
    bv[0] = 1;
    bv[1] = 2;
    assert_int_equal(kh_run(&c), MP_OK);
    expect_shape(out, 2, (int32_t[]){2, 3});
    assert_memory_equal(out->data, ((const float[]){7, 8, 9, 12, 13, 14}), 24);
    bv[0] = 2;
    bv[1] = 0;
    assert_int_equal(kh_rerun(&c, false), MP_OK);
    assert_memory_equal(out->data, ((const float[]){10, 11, 12, 15, 16, 17}), 24);
    /* a window past the end is refused at run time */
    bv[0] = 3;
    assert_int_equal(kh_rerun(&c, false), MP_ERR_SHAPE);
    assert_non_null(strstr(c.err.msg, "'t0' [4,5]"));
    kh_free(&c);

    /* no offset: begin unknown defers */
    kh_init(&c, MP_OP_STRIDED_SLICE, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){4, 5}, x);
    tb = kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, NULL);
    mp_tensor *te = kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, (int32_t[]){1, 2});
    out = kh_output(&c, MP_DT_FLOAT32);
    assert_int_equal(kh_run(&c), MP_ERR_DEFERRED);
    tb->value_known = true;
    assert_int_equal(kh_run(&c), MP_ERR_DEFERRED);
    te->value_known = true;
    bv = tb->data;
    int32_t *ev = te->data;
    bv[0] = -3;
    bv[1] = 1;
    ev[0] = 3;
    ev[1] = 5;
    assert_int_equal(kh_run(&c), MP_OK); /* x[-3:3, 1:5:2] */
    expect_shape(out, 2, (int32_t[]){2, 2});
    assert_memory_equal(out->data, ((const float[]){6, 8, 11, 13}), 16);
    kh_free(&c);
}

static void test_slice_errors(void **state)
{
    (void)state;
    kh_case c;
    kh_init(&c, MP_OP_STRIDED_SLICE, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){4, 5}, NULL);
    mp_tensor *tb = kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, NULL);
    mp_tensor *te = kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, NULL);
    mp_tensor *ts = kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    tb->value_known = te->value_known = ts->value_known = true;
    int32_t *bv = tb->data, *ev = te->data, *sv = ts->data;
    ev[0] = ev[1] = 2;
    sv[0] = 1;
    sv[1] = 0;
    kh_expect_error(&c, MP_ERR_SHAPE, "stride");
    sv[1] = 1;
    c.opt.shrink_axis_mask = 1;
    bv[0] = 4; /* x[4] of 4 rows */
    kh_expect_error(&c, MP_ERR_SHAPE, "'t0' [4,5]");
    bv[0] = -5;
    kh_expect_error(&c, MP_ERR_SHAPE, "out of range");
    bv[0] = -4;
    assert_int_equal(kh_run(&c), MP_OK);
    c.opt.ellipsis_mask = 3;
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "ellipses");
    kh_free(&c);

    /* more indices than dimensions */
    static const int32_t three[] = {0, 0, 0}, ones[] = {1, 1, 1};
    kh_init(&c, MP_OP_STRIDED_SLICE, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){4, 5}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){3}, three);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){3}, ones);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){3}, ones);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "more indices");
    kh_free(&c);

    /* begin and end lengths differ; bad dtype */
    kh_init(&c, MP_OP_STRIDED_SLICE, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){4, 5}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){3}, three);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, ones);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){3}, ones);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "'t2' [2]");
    kh_free(&c);

    kh_init(&c, MP_OP_STRIDED_SLICE, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){4, 5}, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){3}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){3}, ones);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){3}, ones);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "begin 't1'");
    kh_free(&c);
}

/* ---- PACK ------------------------------------------------------------------------------- */

static void test_pack(void **state)
{
    (void)state;
    /* three int32 scalars -> [3] (how dynamic graphs build shapes) */
    static const int32_t a = 1, b = 224, d = 3;
    kh_case c;
    kh_init(&c, MP_OP_PACK, NULL);
    kh_input(&c, MP_DT_INT32, 0, NULL, &a);
    kh_input(&c, MP_DT_INT32, 0, NULL, &b);
    kh_input(&c, MP_DT_INT32, 0, NULL, &d);
    mp_tensor *out = kh_output(&c, MP_DT_INT32);
    c.opt.values_count = 3;
    assert_int_equal(kh_run(&c), MP_OK);
    expect_shape(out, 1, (int32_t[]){3});
    assert_memory_equal(out->data, ((const int32_t[]){1, 224, 3}), 12);
    kh_free(&c);

    /* [2,3] x 3 along every axis, against out[..., i, ...] = in_i[...] */
    for (int32_t axis = -3; axis <= 2; axis++) {
        kh_init(&c, MP_OP_PACK, NULL);
        mp_tensor *ins[3];
        for (int i = 0; i < 3; i++) {
            ins[i] = kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 3}, NULL);
            for (int k = 0; k < 6; k++)
                ((float *)ins[i]->data)[k] = (float)(i * 10 + k);
        }
        out = kh_output(&c, MP_DT_FLOAT32);
        c.opt.axis = axis;
        c.opt.values_count = 3;
        assert_int_equal(kh_run(&c), MP_OK);
        int32_t ax = axis < 0 ? axis + 3 : axis;
        int32_t want_dims[3], r = 0;
        for (int32_t k = 0; k < 3; k++)
            want_dims[k] = k == ax ? 3 : (int32_t[]){2, 3}[r++];
        expect_shape(out, 3, want_dims);
        const float *y = out->data;
        for (int32_t f = 0; f < 18; f++) {
            int32_t idx[3] = {f / (want_dims[1] * want_dims[2]), (f / want_dims[2]) % want_dims[1],
                              f % want_dims[2]};
            int32_t which = idx[ax], rest[2], q = 0;
            for (int32_t k = 0; k < 3; k++)
                if (k != ax)
                    rest[q++] = idx[k];
            assert_true(y[f] == (float)(which * 10 + rest[0] * 3 + rest[1]));
        }
        kh_free(&c);
    }

    /* errors */
    kh_init(&c, MP_OP_PACK, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){3}, NULL);
    kh_output(&c, MP_DT_INT32);
    c.opt.values_count = 2;
    kh_expect_error(&c, MP_ERR_SHAPE, "'t1' [3]");
    c.opt.values_count = 3;
    kh_expect_error(&c, MP_ERR_FORMAT, "values_count");
    kh_free(&c);

    kh_init(&c, MP_OP_PACK, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, NULL);
    kh_output(&c, MP_DT_INT32);
    c.opt.axis = 2;
    kh_expect_error(&c, MP_ERR_SHAPE, "axis 2");
    kh_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shape),
        cmocka_unit_test(test_slice_numpy),
        cmocka_unit_test(test_slice_hand),
        cmocka_unit_test(test_slice_offset_and_deferred),
        cmocka_unit_test(test_slice_errors),
        cmocka_unit_test(test_pack),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
