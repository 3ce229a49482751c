/* Kernels: the StableHLO operators TensorFlow Lite's BuiltinOpResolver runs that compute
 * elementwise or over windows, in plain C after the StableHLO spec and TensorFlow Lite's
 * stablehlo_elementwise.cc, stablehlo_pad.cc, dilate.cc and reduce_window.cc.
 *
 * STABLEHLO_ADD, _MULTIPLY, _MAXIMUM, _MINIMUM, _AND, _SHIFT_LEFT: two inputs of one dtype and
 * one shape (no broadcasting: StableHLO has none), the output theirs (mp_shlo_binary says
 * which dtypes: float16 too, as TensorFlow Lite's).
 * STABLEHLO_PAD: operand and padding_value (one element of its dtype); edge_padding_low / high
 * (negative: elements removed) and interior_padding (>= 0) per dimension. Output dimension
 * low + high + d + (d - 1) * interior (low + high when d is 0), at least 0.
 * DILATE: input, dilations (an int32 vector, one factor >= 1 per dimension) and padding_value:
 * STABLEHLO_PAD with interior padding factor - 1 and no edges. Dilations not known before
 * running: deferred.
 * STABLEHLO_REDUCE_WINDOW: input and init_value (one element); the input dilated by
 * base_dilations and padded by padding (both filled with init_value), then every window of
 * window_dimensions, window_dilations apart inside, window_strides apart, reduced from
 * init_value by the body's computation (ADD, MUL, MAXIMUM, MINIMUM, AND, OR: the reader
 * found it in the body subgraph). Output dimension (padded - dilated window) / stride + 1, 0
 * when the window does not fit.
 * REDUCE_WINDOW (TensorFlow Lite's own): input, init_value, window_shape, window_strides,
 * window_dilations (int64 vectors of the input's rank) and ReduceWindowOptions'
 * reduce_function; no base dilation and no padding.
 * The reductions take bool, int8, int16, int32, int64, uint8, float32 and float64 (bool with
 * AND, OR, MAXIMUM and MINIMUM only), as TensorFlow Lite's reduce_window.cc. */
#include "engine/kernels/stablehlo.h"

#include <stdint.h>
#include <string.h>

#include "engine/kernels/movement.h"

#define SHAPE_STR(t, buf) mp_shape_str((t)->rank, (t)->dims, (buf), sizeof(buf))

/* ---- elementwise arithmetic ------------------------------------------------------------ */

#define SHLO_LOOP(NAME, T, EXPR)                                                   \
    static void NAME(const void *a_, const void *b_, void *o_, size_t count)       \
    {                                                                              \
        const T *a = a_, *b = b_;                                                  \
        T *o = o_;                                                                 \
        for (size_t i = 0; i < count; i++) {                                       \
            const T p = a[i], q = b[i];                                            \
            o[i] = (EXPR);                                                         \
        }                                                                          \
    }

/* Integers: sums and products in uint64_t, cut to the type (two's complement wrap). */
#define SHLO_INT(S, T)                                                             \
    SHLO_LOOP(add_##S, T, (T)((uint64_t)p + (uint64_t)q))                          \
    SHLO_LOOP(mul_##S, T, (T)((uint64_t)p * (uint64_t)q))                          \
    SHLO_LOOP(max_##S, T, p < q ? q : p)                                           \
    SHLO_LOOP(min_##S, T, q < p ? q : p)                                           \
    SHLO_LOOP(and_##S, T, (T)(p & q))                                              \
    SHLO_LOOP(or_##S, T, (T)(p | q))
#define SHLO_FLOAT(S, T)                                                           \
    SHLO_LOOP(add_##S, T, p + q)                                                   \
    SHLO_LOOP(mul_##S, T, p * q)                                                   \
    SHLO_LOOP(max_##S, T, p < q ? q : p)                                           \
    SHLO_LOOP(min_##S, T, q < p ? q : p)
/* A shift by the count read as unsigned of the type's width: 0 from `bits` on. */
#define SHLO_SHL(S, T, U, BITS)                                                    \
    SHLO_LOOP(shl_##S, T, (U)q >= (BITS) ? (T)0 : (T)(U)((U)p << (U)q))

SHLO_INT(i8, int8_t)
SHLO_INT(i16, int16_t)
SHLO_INT(i32, int32_t)
SHLO_INT(i64, int64_t)
SHLO_INT(u8, uint8_t)
SHLO_INT(u16, uint16_t)
SHLO_INT(u32, uint32_t)
SHLO_INT(u64, uint64_t)
SHLO_FLOAT(f32, float)
SHLO_FLOAT(f64, double)
SHLO_SHL(i8, int8_t, uint32_t, 8u)
SHLO_SHL(i16, int16_t, uint32_t, 16u)
SHLO_SHL(i32, int32_t, uint32_t, 32u)
/* float16 as Eigen::half computes: in float32, the result rounded to the nearest half */
#define H2F(x) mp_half_to_float(x)
SHLO_LOOP(add_f16, uint16_t, mp_float_to_half(H2F(p) + H2F(q)))
SHLO_LOOP(mul_f16, uint16_t, mp_float_to_half(H2F(p) * H2F(q)))
SHLO_LOOP(max_f16, uint16_t, H2F(p) < H2F(q) ? q : p)
SHLO_LOOP(min_f16, uint16_t, H2F(q) < H2F(p) ? q : p)
SHLO_LOOP(and_b, uint8_t, (uint8_t)(p && q))
SHLO_LOOP(or_b, uint8_t, (uint8_t)(p || q))

/* The integer shift reads a negative count as a large one: (uint32_t) of an int8 -1 is
 * 0xffffffff, at least the width, so 0 as the spec says. */

typedef struct shlo_entry {
    int op;
    mp_dtype dt;
    mp_shlo_fn fn;
} shlo_entry;

#define SHLO_ARITH_ROWS(S, DT)                                                     \
    {MP_OP_ADD, DT, add_##S}, {MP_OP_MUL, DT, mul_##S}, {MP_OP_MAXIMUM, DT, max_##S}, \
    {MP_OP_MINIMUM, DT, min_##S}
#define SHLO_INT_ROWS(S, DT)                                                       \
    SHLO_ARITH_ROWS(S, DT), {MP_OP_LOGICAL_AND, DT, and_##S}, {MP_OP_LOGICAL_OR, DT, or_##S}

static const shlo_entry k_fns[] = {
    SHLO_INT_ROWS(i8, MP_DT_INT8),     SHLO_INT_ROWS(i16, MP_DT_INT16),
    SHLO_INT_ROWS(i32, MP_DT_INT32),   SHLO_INT_ROWS(i64, MP_DT_INT64),
    SHLO_INT_ROWS(u8, MP_DT_UINT8),    SHLO_INT_ROWS(u16, MP_DT_UINT16),
    SHLO_INT_ROWS(u32, MP_DT_UINT32),  SHLO_INT_ROWS(u64, MP_DT_UINT64),
    SHLO_ARITH_ROWS(f32, MP_DT_FLOAT32), SHLO_ARITH_ROWS(f64, MP_DT_FLOAT64),
    SHLO_ARITH_ROWS(f16, MP_DT_FLOAT16),
    {MP_OP_STABLEHLO_SHIFT_LEFT, MP_DT_INT8, shl_i8},
    {MP_OP_STABLEHLO_SHIFT_LEFT, MP_DT_INT16, shl_i16},
    {MP_OP_STABLEHLO_SHIFT_LEFT, MP_DT_INT32, shl_i32},
    {MP_OP_LOGICAL_AND, MP_DT_BOOL, and_b}, {MP_OP_MINIMUM, MP_DT_BOOL, and_b},
    {MP_OP_LOGICAL_OR, MP_DT_BOOL, or_b},   {MP_OP_MAXIMUM, MP_DT_BOOL, or_b},
};

mp_shlo_fn mp_shlo_binary(int op, mp_dtype dt)
{
    for (size_t k = 0; k < sizeof k_fns / sizeof k_fns[0]; k++)
        if (k_fns[k].op == op && k_fns[k].dt == dt)
            return k_fns[k].fn;
    return NULL;
}

const mp_shlo_options *mp_shlo_opts(const mp_node *n)
{
    static const mp_shlo_options none = {.body = -1, .body_op = -1, .name = ""};
    return n->opt && n->opt->shlo ? n->opt->shlo : &none;
}

/* The arithmetic a STABLEHLO_ elementwise code computes. */
static int ew_op(int32_t opcode)
{
    switch (opcode) {
    case MP_OP_STABLEHLO_ADD: return MP_OP_ADD;
    case MP_OP_STABLEHLO_MULTIPLY: return MP_OP_MUL;
    case MP_OP_STABLEHLO_MAXIMUM: return MP_OP_MAXIMUM;
    case MP_OP_STABLEHLO_MINIMUM: return MP_OP_MINIMUM;
    case MP_OP_STABLEHLO_AND: return MP_OP_LOGICAL_AND;
    default: return opcode; /* STABLEHLO_SHIFT_LEFT */
    }
}

static bool same_shape(const mp_tensor *a, const mp_tensor *b)
{
    return a->rank == b->rank && memcmp(a->dims, b->dims, sizeof(int32_t) * (size_t)a->rank) == 0;
}

static mp_status ew_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 2, 2, 0);
    if (st != MP_OK)
        return st;
    const mp_tensor *a = n->in[0], *b = n->in[1];
    char x[96], y[96];
    if (a->dtype != b->dtype)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "inputs '%s' and '%s' are %s and %s; they must have one dtype",
                            mp_tname(a), mp_tname(b), mp_dtype_name(a->dtype), mp_dtype_name(b->dtype));
    if (!mp_shlo_binary(ew_op(n->opcode), a->dtype))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "dtype %s of '%s' is not supported",
                            mp_dtype_name(a->dtype), mp_tname(a));
    if (!same_shape(a, b))
        return mp_node_fail(n, MP_ERR_SHAPE, "inputs '%s' %s and '%s' %s differ in shape (StableHLO does not broadcast)",
                            mp_tname(a), SHAPE_STR(a, x), mp_tname(b), SHAPE_STR(b, y));
    n->out[0]->dtype = a->dtype;
    return mp_node_set_output_shape(n, a->rank, a->dims);
}

static mp_status ew_run(mp_node *n)
{
    mp_shlo_binary(ew_op(n->opcode), n->in[0]->dtype)(n->in[0]->data, n->in[1]->data, n->out[0]->data,
                                                      mp_tensor_elements(n->out[0]));
    return MP_OK;
}

/* ---- PAD and DILATE --------------------------------------------------------------------- */

/* Padding of a rank-`rank` tensor: edges (low may be negative) and interior, per dimension. */
typedef struct pad_geom {
    int32_t rank;
    int64_t low[MP_MAX_RANK], high[MP_MAX_RANK], interior[MP_MAX_RANK];
} pad_geom;

/* The padded shape of in into dims: each at least 0 and at most INT32_MAX. */
static mp_status pad_shape(mp_node *n, const pad_geom *g, const mp_tensor *in, int32_t *dims)
{
    for (int32_t d = 0; d < g->rank; d++) {
        const int64_t k = in->dims[d];
        const int64_t v = g->low[d] + g->high[d] + (k > 0 ? k + (k - 1) * g->interior[d] : 0);
        if (v < 0 || v > INT32_MAX)
            return mp_node_fail(n, MP_ERR_SHAPE, "dimension %d of '%s' (%lld) padded by %lld, %lld and %lld inside is %lld",
                                (int)d, mp_tname(in), (long long)k, (long long)g->low[d],
                                (long long)g->high[d], (long long)g->interior[d], (long long)v);
        dims[d] = (int32_t)v;
    }
    return MP_OK;
}

/* out = in padded by g with the element at `value` (es bytes). */
static void pad_run(const pad_geom *g, const mp_tensor *in, const void *value, mp_tensor *out, size_t es)
{
    uint8_t *o = out->data;
    const uint8_t *src = in->data;
    const size_t total = mp_tensor_elements(out), count = mp_tensor_elements(in);
    for (size_t k = 0; k < total; k++)
        memcpy(o + k * es, value, es);
    int32_t idx[MP_MAX_RANK] = {0};
    for (size_t k = 0; k < count; k++, mp_index_next(idx, in->dims, in->rank)) {
        size_t at = 0;
        bool inside = true;
        for (int32_t d = 0; d < g->rank && inside; d++) {
            const int64_t p = g->low[d] + (int64_t)idx[d] * (g->interior[d] + 1);
            inside = p >= 0 && p < out->dims[d];
            at = at * (size_t)out->dims[d] + (size_t)p;
        }
        if (inside)
            memcpy(o + at * es, src + k * es, es);
    }
}

/* Input `k` holds one element of input 0's dtype (the padding or init value). */
static mp_status check_scalar(mp_node *n, int32_t k, const char *what)
{
    const mp_tensor *v = n->in[k];
    if (v->dtype != n->in[0]->dtype || mp_tensor_elements(v) != 1)
        return mp_node_fail(n, MP_ERR_SHAPE, "%s '%s' must be one %s element, is %s with %zu elements",
                            what, mp_tname(v), mp_dtype_name(n->in[0]->dtype), mp_dtype_name(v->dtype),
                            mp_tensor_elements(v));
    return MP_OK;
}

/* A list of the options: one value per dimension of '%s' (rank r). */
static mp_status check_list(mp_node *n, const mp_shlo_list *l, int32_t want, const char *what)
{
    if (l->n != want)
        return mp_node_fail(n, MP_ERR_FORMAT, "%s has %d values; the input '%s' needs %d",
                            what, (int)l->n, mp_tname(n->in[0]), (int)want);
    return MP_OK;
}

static mp_status pad_geometry(mp_node *n, pad_geom *g)
{
    const mp_tensor *in = n->in[0];
    g->rank = in->rank;
    if (n->opcode == MP_OP_STABLEHLO_PAD) {
        const mp_shlo_options *s = mp_shlo_opts(n);
        mp_status st = check_list(n, &s->a, in->rank, "edge_padding_low");
        if (st == MP_OK)
            st = check_list(n, &s->b, in->rank, "edge_padding_high");
        if (st == MP_OK)
            st = check_list(n, &s->c, in->rank, "interior_padding");
        if (st != MP_OK)
            return st;
        for (int32_t d = 0; d < in->rank; d++) {
            g->low[d] = s->a.v[d];
            g->high[d] = s->b.v[d];
            g->interior[d] = s->c.v[d];
            /* bounded so the shape arithmetic cannot overflow: a padding beyond INT32_MAX
             * makes a dimension no tensor has */
            if (g->low[d] < -(int64_t)INT32_MAX || g->low[d] > INT32_MAX || g->high[d] < -(int64_t)INT32_MAX ||
                g->high[d] > INT32_MAX || g->interior[d] > INT32_MAX)
                return mp_node_fail(n, MP_ERR_SHAPE, "padding of dimension %d (%lld, %lld, %lld inside) is out of range",
                                    (int)d, (long long)g->low[d], (long long)g->high[d],
                                    (long long)g->interior[d]);
        }
        return MP_OK;
    }
    /* DILATE: the dilations tensor */
    const mp_tensor *f = n->in[1];
    char b[96];
    if (f->dtype != MP_DT_INT32 || f->rank != 1 || f->dims[0] != in->rank)
        return mp_node_fail(n, MP_ERR_SHAPE, "dilations '%s' must be an int32 vector of %d entries, is %s %s",
                            mp_tname(f), in->rank, mp_dtype_name(f->dtype), SHAPE_STR(f, b));
    if (!f->value_known || !f->data)
        return MP_ERR_DEFERRED;
    for (int32_t d = 0; d < in->rank; d++) {
        const int64_t v = mp_tensor_index_at(f, (size_t)d);
        if (v < 1)
            return mp_node_fail(n, MP_ERR_ARG, "dilation %lld of dimension %d is not >= 1", (long long)v, (int)d);
        g->low[d] = g->high[d] = 0;
        g->interior[d] = v - 1;
    }
    return MP_OK;
}

/* The input holding the padding value: 1 (STABLEHLO_PAD) or 2 (DILATE). */
static int32_t pad_value_input(const mp_node *n)
{
    return n->opcode == MP_OP_DILATE ? 2 : 1;
}

static mp_status pad_infer(mp_node *n)
{
    mp_status st = mp_node_check_move_io(n, pad_value_input(n) + 1);
    if (st == MP_OK)
        st = check_scalar(n, pad_value_input(n), "padding value");
    pad_geom g;
    if (st == MP_OK)
        st = pad_geometry(n, &g);
    int32_t dims[MP_MAX_RANK];
    if (st == MP_OK)
        st = pad_shape(n, &g, n->in[0], dims);
    return st == MP_OK ? mp_node_set_output_shape(n, n->in[0]->rank, dims) : st;
}

static mp_status pad_exec(mp_node *n)
{
    pad_geom g;
    mp_status st = pad_geometry(n, &g);
    if (st != MP_OK)
        return st;
    pad_run(&g, n->in[0], n->in[pad_value_input(n)]->data, n->out[0], mp_dtype_size(n->in[0]->dtype));
    return MP_OK;
}

/* ---- REDUCE_WINDOW ---------------------------------------------------------------------- */

/* Most window elements a reduction reads in one run (output elements times window size). */
#define RW_MAX_WORK 4294967296.0

typedef struct rw_geom {
    int32_t rank;
    int64_t win[MP_MAX_RANK], stride[MP_MAX_RANK], base[MP_MAX_RANK], wdil[MP_MAX_RANK];
    int64_t low[MP_MAX_RANK], high[MP_MAX_RANK];
    int op;
} rw_geom;

/* TensorFlow Lite's ReduceWindowFunction numbering (ADD 1 ... ANY 6) as operator codes. */
static int rw_function(int32_t f)
{
    static const int ops[] = {-1, MP_OP_ADD, MP_OP_MUL, MP_OP_MINIMUM, MP_OP_MAXIMUM,
                              MP_OP_LOGICAL_AND, MP_OP_LOGICAL_OR};
    return f >= 1 && f <= 6 ? ops[f] : -1;
}

/* Vector input k: int64, one entry per input dimension, known (else deferred). */
static mp_status rw_vector(mp_node *n, int32_t k, const char *what, int64_t *v)
{
    const mp_tensor *t = n->in[k], *in = n->in[0];
    char b[96];
    if (t->dtype != MP_DT_INT64 || t->rank != 1 || t->dims[0] != in->rank)
        return mp_node_fail(n, MP_ERR_SHAPE, "%s '%s' must be an int64 vector of %d entries, is %s %s",
                            what, mp_tname(t), in->rank, mp_dtype_name(t->dtype), SHAPE_STR(t, b));
    if (!t->value_known || !t->data)
        return MP_ERR_DEFERRED;
    for (int32_t d = 0; d < in->rank; d++)
        v[d] = mp_tensor_index_at(t, (size_t)d);
    return MP_OK;
}

static mp_status rw_geometry(mp_node *n, rw_geom *g)
{
    const mp_tensor *in = n->in[0];
    mp_status st = MP_OK;
    g->rank = in->rank;
    if (n->opcode == MP_OP_STABLEHLO_REDUCE_WINDOW) {
        const mp_shlo_options *s = mp_shlo_opts(n);
        const int32_t r = in->rank;
        /* absent lists take the spec's defaults: strides, dilations 1, padding 0 */
        st = check_list(n, &s->a, r, "window_dimensions");
        if (st == MP_OK && s->b.n)
            st = check_list(n, &s->b, r, "window_strides");
        if (st == MP_OK && s->c.n)
            st = check_list(n, &s->c, r, "base_dilations");
        if (st == MP_OK && s->d.n)
            st = check_list(n, &s->d, r, "window_dilations");
        if (st == MP_OK && s->e.n)
            st = check_list(n, &s->e, 2 * r, "padding");
        if (st != MP_OK)
            return st;
        for (int32_t d = 0; d < r; d++) {
            g->win[d] = s->a.v[d];
            g->stride[d] = s->b.n ? s->b.v[d] : 1;
            g->base[d] = s->c.n ? s->c.v[d] : 1;
            g->wdil[d] = s->d.n ? s->d.v[d] : 1;
            g->low[d] = s->e.n ? s->e.v[2 * d] : 0;
            g->high[d] = s->e.n ? s->e.v[2 * d + 1] : 0;
        }
        g->op = s->body_op;
    } else {
        st = rw_vector(n, 2, "window_shape", g->win);
        if (st == MP_OK)
            st = rw_vector(n, 3, "window_strides", g->stride);
        if (st == MP_OK)
            st = rw_vector(n, 4, "window_dilations", g->wdil);
        if (st != MP_OK)
            return st;
        for (int32_t d = 0; d < in->rank; d++) {
            g->base[d] = 1;
            g->low[d] = g->high[d] = 0;
        }
        g->op = rw_function(mp_shlo_opts(n)->reduce_function);
    }
    for (int32_t d = 0; d < in->rank; d++) {
        const int64_t lim = INT32_MAX;
        if (g->win[d] < 1 || g->stride[d] < 1 || g->base[d] < 1 || g->wdil[d] < 1 || g->win[d] > lim ||
            g->stride[d] > lim || g->base[d] > lim || g->wdil[d] > lim || g->low[d] < -lim || g->low[d] > lim ||
            g->high[d] < -lim || g->high[d] > lim)
            return mp_node_fail(n, MP_ERR_FORMAT, "dimension %d: window %lld, stride %lld, base dilation %lld, "
                                "window dilation %lld (each 1 to 2^31-1) or padding %lld, %lld out of range",
                                (int)d, (long long)g->win[d], (long long)g->stride[d], (long long)g->base[d],
                                (long long)g->wdil[d], (long long)g->low[d], (long long)g->high[d]);
    }
    if (!mp_shlo_binary(g->op, in->dtype) || in->dtype == MP_DT_UINT16 || in->dtype == MP_DT_UINT32 ||
        in->dtype == MP_DT_UINT64 || in->dtype == MP_DT_FLOAT16)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "dtype %s of '%s' is not supported by its reduction %s",
                            mp_dtype_name(in->dtype), mp_tname(in), g->op >= 0 ? mp_op_name(g->op) : "(none)");
    return MP_OK;
}

static mp_status rw_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, n->opcode == MP_OP_REDUCE_WINDOW ? 5 : 2,
                                     n->opcode == MP_OP_REDUCE_WINDOW ? 5 : 2, 0);
    if (st == MP_OK)
        st = check_scalar(n, 1, "init value");
    rw_geom g;
    if (st == MP_OK)
        st = rw_geometry(n, &g);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0];
    int32_t dims[MP_MAX_RANK];
    for (int32_t d = 0; d < in->rank; d++) {
        const int64_t k = in->dims[d];
        const int64_t padded = g.low[d] + g.high[d] + (k > 0 ? (k - 1) * g.base[d] + 1 : 0);
        const int64_t window = (g.win[d] - 1) * g.wdil[d] + 1;
        if (padded < 0)
            return mp_node_fail(n, MP_ERR_SHAPE, "dimension %d of '%s' (%lld) padded by %lld and %lld is negative",
                                (int)d, mp_tname(in), (long long)k, (long long)g.low[d], (long long)g.high[d]);
        const int64_t out = padded < window ? 0 : (padded - window) / g.stride[d] + 1;
        dims[d] = (int32_t)out;
    }
    /* the work: every output element reads a whole window; bounded so that a crafted window
     * cannot make a run that never ends (no model comes near) */
    double work = 1.0;
    for (int32_t d = 0; d < in->rank; d++)
        work *= (double)dims[d] * (double)g.win[d];
    if (work > RW_MAX_WORK)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "its windows read %.3g elements in all, more than memprof's "
                            "limit of %.3g", work, RW_MAX_WORK);
    n->out[0]->dtype = in->dtype;
    return mp_node_set_output_shape(n, in->rank, dims);
}

static mp_status rw_run(mp_node *n)
{
    rw_geom g;
    mp_status st = rw_geometry(n, &g);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0];
    mp_tensor *out = n->out[0];
    const size_t es = mp_dtype_size(in->dtype), total = mp_tensor_elements(out);
    const uint8_t *src = in->data, *init = n->in[1]->data;
    uint8_t *o = out->data;
    const mp_shlo_fn f = mp_shlo_binary(g.op, in->dtype);
    int32_t wdims[MP_MAX_RANK];
    size_t wcount = 1;
    for (int32_t d = 0; d < g.rank; d++) {
        wdims[d] = (int32_t)g.win[d];
        wcount *= (size_t)g.win[d];
    }
    int32_t oi[MP_MAX_RANK] = {0};
    for (size_t k = 0; k < total; k++, mp_index_next(oi, out->dims, out->rank)) {
        uint8_t *acc = o + k * es;
        memcpy(acc, init, es);
        int32_t wi[MP_MAX_RANK] = {0};
        for (size_t w = 0; w < wcount; w++, mp_index_next(wi, wdims, g.rank)) {
            /* the position in the dilated and padded input, and back in the input */
            size_t at = 0;
            bool real = true;
            for (int32_t d = 0; d < g.rank && real; d++) {
                const int64_t p = (int64_t)oi[d] * g.stride[d] + (int64_t)wi[d] * g.wdil[d] - g.low[d];
                real = p >= 0 && p % g.base[d] == 0 && p / g.base[d] < in->dims[d];
                at = at * (size_t)in->dims[d] + (size_t)(p / g.base[d]);
            }
            f(acc, real ? src + at * es : init, acc, 1);
        }
    }
    return MP_OK;
}

const mp_kernel mp_kernels_stablehlo[] = {
    {.opcode = MP_OP_STABLEHLO_ADD, .min_inputs = 2, .max_inputs = 2, .n_outputs = 1,
     .infer = ew_infer, .run = ew_run},
    {.opcode = MP_OP_STABLEHLO_MULTIPLY, .min_inputs = 2, .max_inputs = 2, .n_outputs = 1,
     .infer = ew_infer, .run = ew_run},
    {.opcode = MP_OP_STABLEHLO_MAXIMUM, .min_inputs = 2, .max_inputs = 2, .n_outputs = 1,
     .infer = ew_infer, .run = ew_run},
    {.opcode = MP_OP_STABLEHLO_MINIMUM, .min_inputs = 2, .max_inputs = 2, .n_outputs = 1,
     .infer = ew_infer, .run = ew_run},
    {.opcode = MP_OP_STABLEHLO_AND, .min_inputs = 2, .max_inputs = 2, .n_outputs = 1,
     .infer = ew_infer, .run = ew_run},
    {.opcode = MP_OP_STABLEHLO_SHIFT_LEFT, .min_inputs = 2, .max_inputs = 2, .n_outputs = 1,
     .infer = ew_infer, .run = ew_run},
    {.opcode = MP_OP_STABLEHLO_PAD, .min_inputs = 2, .max_inputs = 2, .n_outputs = 1,
     .infer = pad_infer, .run = pad_exec},
    {.opcode = MP_OP_DILATE, .min_inputs = 3, .max_inputs = 3, .n_outputs = 1,
     .infer = pad_infer, .run = pad_exec},
    {.opcode = MP_OP_STABLEHLO_REDUCE_WINDOW, .min_inputs = 2, .max_inputs = 2, .n_outputs = 1,
     .infer = rw_infer, .run = rw_run},
    {.opcode = MP_OP_REDUCE_WINDOW, .min_inputs = 5, .max_inputs = 5, .n_outputs = 1,
     .infer = rw_infer, .run = rw_run},
    {.opcode = -1},
};
