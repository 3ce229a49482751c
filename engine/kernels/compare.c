/* Kernels: comparisons, logical operators and selection, the operators of bool tensors
 * (EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER, GREATER_EQUAL, LOGICAL_AND, LOGICAL_OR,
 * LOGICAL_NOT, SELECT, SELECT_V2), after TensorFlow Lite's comparisons.cc, logical.cc and
 * select.cc, in plain C over broadcast.h's plan (NumPy broadcasting). A bool is one byte,
 * 0 or 1 when written; any non-zero byte reads as true.
 *
 * Comparisons take two inputs of one dtype (float32, int32, int64, and for EQUAL / NOT_EQUAL
 * bool; EQUAL, LESS and GREATER_EQUAL also int16, its stored values compared unscaled as in
 * TensorFlow Lite, whose other three take none) and give bool. int8 / uint8 inputs are
 * compared as TensorFlow Lite's ComparisonWithScaling: each centred value shifted left by 8
 * and scaled by its tensor's scale as an integer multiplier (MultiplyByQuantizedMultiplier),
 * so values of different
 * scales compare by their real values, at the resolution that rounding leaves (equal on both
 * sides of a tie as TensorFlow Lite finds them). The scaled value depends on the byte only,
 * so each input's 256 scaled values are tabulated once at prepare.
 * EQUAL and NOT_EQUAL also compare strings (comparisons.cc's ComparisonString: equal length
 * and bytes), with broadcasting; both buffers are checked when running (strings.h). LESS also
 * compares float16 (LessEval's Comparison<Eigen::half>: both values widened to float).
 * LOGICAL_AND / LOGICAL_OR broadcast two bool inputs; LOGICAL_NOT maps one.
 * SELECT_V2 broadcasts condition, x and y together; SELECT (version 1) takes a condition of
 * the shape of x and y (equal shapes), a scalar, or a vector with one entry per row of x
 * (dimension 0). The values are copied whatever their dtype (any fixed-size one, quantized
 * ones included, as TensorFlow Lite does). */
#include "engine/kernels/kernel.h"

#include <stddef.h>
#include <string.h>

#include "engine/kernels/broadcast.h"
#include "engine/kernels/quant_math.h"
#include "engine/kernels/quant_tensor.h"
#include "engine/kernels/strings.h"

/* ---- comparisons ------------------------------------------------------------------------ */

typedef struct cmp_state {
    mp_bc_plan plan;
    int32_t scaled[2][256]; /* int8 / uint8: each input's scaled value per stored byte */
} cmp_state;

typedef void (*cmp_fn)(const mp_bc_plan *p, const void *a, const void *b, uint8_t *y,
                       const cmp_state *s);

#define CMP_KERNEL(NAME, T, EXPR)                                                         \
    static void NAME(const mp_bc_plan *p, const void *va, const void *vb,                 \
                     uint8_t *restrict y, const cmp_state *s)                             \
    {                                                                                     \
        const T *restrict a = va, *restrict b = vb;                                       \
        (void)s;                                                                          \
        MP_BC_LOOP2(T, T, (uint8_t)(EXPR));                                               \
    }
/* The six comparisons of one stored type; SCALE maps a stored value to what is compared. */
#define CMP_KERNELS(SUFFIX, T, SA, SB)                                                    \
    CMP_KERNEL(eq_##SUFFIX, T, SA == SB)                                                  \
    CMP_KERNEL(ne_##SUFFIX, T, SA != SB)                                                  \
    CMP_KERNEL(lt_##SUFFIX, T, SA < SB)                                                   \
    CMP_KERNEL(le_##SUFFIX, T, SA <= SB)                                                  \
    CMP_KERNEL(gt_##SUFFIX, T, SA > SB)                                                   \
    CMP_KERNEL(ge_##SUFFIX, T, SA >= SB)

CMP_KERNELS(f32, float, x, w)
CMP_KERNELS(i32, int32_t, x, w)
CMP_KERNELS(i64, int64_t, x, w)
CMP_KERNEL(eq_bool, uint8_t, (x != 0) == (w != 0))
CMP_KERNEL(ne_bool, uint8_t, (x != 0) != (w != 0))
CMP_KERNELS(q8, uint8_t, s->scaled[0][x], s->scaled[1][w])
/* int16: the stored values, unscaled (comparisons.cc's Comparison<int16_t>), for the three
 * comparisons TensorFlow Lite takes int16 in */
CMP_KERNEL(eq_i16, int16_t, x == w)
CMP_KERNEL(lt_i16, int16_t, x < w)
CMP_KERNEL(ge_i16, int16_t, x >= w)
/* float16: LESS only, as comparisons.cc */
CMP_KERNEL(lt_f16, uint16_t, mp_half_to_float(x) < mp_half_to_float(w))

/* Columns of cmp_op.fn. */
enum { CMP_F32, CMP_I32, CMP_I64, CMP_BOOL, CMP_Q8, CMP_I16, CMP_F16, CMP_NDT };

#define CMP_ROW(OP, SUFFIX, I16, F16)                                                     \
    {OP##_f32, OP##_i32, OP##_i64, SUFFIX, OP##_q8, I16, F16}

typedef struct cmp_op {
    int32_t opcode;
    cmp_fn fn[CMP_NDT];
} cmp_op;

static const cmp_op cmp_ops[] = {
    {MP_OP_EQUAL, CMP_ROW(eq, eq_bool, eq_i16, NULL)},
    {MP_OP_NOT_EQUAL, CMP_ROW(ne, ne_bool, NULL, NULL)},
    {MP_OP_LESS, CMP_ROW(lt, NULL, lt_i16, lt_f16)},
    {MP_OP_LESS_EQUAL, CMP_ROW(le, NULL, NULL, NULL)},
    {MP_OP_GREATER, CMP_ROW(gt, NULL, NULL, NULL)},
    {MP_OP_GREATER_EQUAL, CMP_ROW(ge, NULL, ge_i16, NULL)},
};

static const cmp_op *cmp_find(int32_t opcode)
{
    for (size_t i = 0; i < sizeof cmp_ops / sizeof cmp_ops[0]; i++)
        if (cmp_ops[i].opcode == opcode)
            return &cmp_ops[i];
    return NULL;
}

static int cmp_dtype_index(mp_dtype dt)
{
    switch (dt) {
    case MP_DT_FLOAT32: return CMP_F32;
    case MP_DT_INT32: return CMP_I32;
    case MP_DT_INT64: return CMP_I64;
    case MP_DT_BOOL: return CMP_BOOL;
    case MP_DT_INT8: case MP_DT_UINT8: return CMP_Q8;
    case MP_DT_INT16: return CMP_I16;
    case MP_DT_FLOAT16: return CMP_F16;
    default: return -1;
    }
}

/* Output 0 must be bool. */
static mp_status check_bool_output(mp_node *n)
{
    if (n->out[0]->dtype != MP_DT_BOOL)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "output '%s' is %s, expected bool",
                            mp_tname(n->out[0]), mp_dtype_name(n->out[0]->dtype));
    return MP_OK;
}

/* The scaled values of an 8-bit input, TensorFlow Lite's ComparisonWithScaling: the centred
 * value shifted left by 8, times the tensor's scale as a quantized multiplier. */
static mp_status cmp_scale_table(mp_node *n, const mp_tensor *t, int32_t *table)
{
    float scale;
    int32_t zp, mult, lo, hi;
    int shift;
    mp_status st = mp_node_qparams(n, t, &scale, &zp);
    if (st != MP_OK)
        return st;
    if (!mp_quantize_multiplier((double)scale, &mult, &shift))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "scale %g of '%s' is not finite",
                            (double)scale, mp_tname(t));
    mp_quant_dtype_range(t->dtype, &lo, &hi);
    for (int32_t v = lo; v <= hi; v++)
        table[(uint8_t)v] = mp_multiply_by_quantized_multiplier((v - zp) * (1 << 8), mult, shift);
    return MP_OK;
}

/* EQUAL and NOT_EQUAL compare strings too (ComparisonPrepareStringAllowed). */
static bool cmp_takes_strings(const mp_node *n)
{
    return n->opcode == MP_OP_EQUAL || n->opcode == MP_OP_NOT_EQUAL;
}

/* String ia of a against string ib of b: equal length and bytes (StringRefEqualFn). */
static bool str_equal(const mp_tensor *a, size_t ia, const mp_tensor *b, size_t ib)
{
    size_t la, lb;
    const char *sa = mp_str_at(a, (int32_t)ia, &la), *sb = mp_str_at(b, (int32_t)ib, &lb);
    return la == lb && (la == 0 || memcmp(sa, sb, la) == 0);
}

/* EQUAL / NOT_EQUAL of two string tensors over the plan (both buffers checked first). */
static mp_status cmp_run_strings(mp_node *n, const mp_bc_plan *p)
{
    const mp_tensor *a = n->in[0], *b = n->in[1];
    mp_status st = mp_str_check(n, a);
    if (st == MP_OK)
        st = mp_str_check(n, b);
    if (st != MP_OK)
        return st;
    const uint8_t want = n->opcode == MP_OP_EQUAL;
    uint8_t *y = n->out[0]->data;
    const int32_t last = p->rank - 1;
    const size_t len = p->dims[last], rows = p->elements / len;
    const size_t sa = p->stride[0][last] ? 1 : 0, sb = p->stride[1][last] ? 1 : 0;
    size_t idx[MP_MAX_RANK] = {0}, o[MP_BC_MAX_OPERANDS] = {0};
    for (size_t r = 0; r < rows; r++, y += len) {
        for (size_t i = 0; i < len; i++)
            y[i] = str_equal(a, o[0] + i * sa, b, o[1] + i * sb) == want;
        mp_bc_next_row(p, idx, o);
    }
    return MP_OK;
}

static mp_status cmp_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 2, 2, 0);
    if (st != MP_OK)
        return st;
    const mp_tensor *a = n->in[0], *b = n->in[1];
    int di = cmp_dtype_index(a->dtype);
    const bool str = a->dtype == MP_DT_STRING && cmp_takes_strings(n);
    if (!str && (di < 0 || !cmp_find(n->opcode)->fn[di]))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "input '%s' has dtype %s (supported: f32, i32, "
                            "i64, i8, u8%s%s%s)", mp_tname(a), mp_dtype_name(a->dtype),
                            cmp_find(n->opcode)->fn[CMP_I16] ? ", i16" : "",
                            cmp_find(n->opcode)->fn[CMP_F16] ? ", f16" : "",
                            cmp_find(n->opcode)->fn[CMP_BOOL] ? ", bool, string" : "");
    if (b->dtype != a->dtype)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "inputs '%s' (%s) and '%s' (%s) differ in dtype",
                            mp_tname(a), mp_dtype_name(a->dtype), mp_tname(b),
                            mp_dtype_name(b->dtype));
    if ((st = check_bool_output(n)) != MP_OK)
        return st;
    float scale;
    int32_t zp;
    for (int i = 0; i < 2 && di == CMP_Q8; i++)
        if ((st = mp_node_qparams(n, n->in[i], &scale, &zp)) != MP_OK)
            return st;
    return mp_node_broadcast_output(n, 2, (const mp_tensor *const *)n->in);
}

static mp_status cmp_prepare(mp_node *n)
{
    const bool q8 = cmp_dtype_index(n->in[0]->dtype) == CMP_Q8;
    cmp_state *s = mp_node_state(n, q8 ? sizeof *s : offsetof(cmp_state, scaled));
    if (!s)
        return MP_ERR_NOMEM;
    mp_bc_plan_init(&s->plan, 2, (const mp_tensor *const *)n->in);
    mp_status st = MP_OK;
    for (int i = 0; i < 2 && q8 && st == MP_OK; i++)
        st = cmp_scale_table(n, n->in[i], s->scaled[i]);
    return st;
}

static mp_status cmp_run(mp_node *n)
{
    const cmp_state *s = n->state;
    if (!s)
        return mp_node_fail(n, MP_ERR_ARG, "run before prepare");
    if (s->plan.elements == 0)
        return MP_OK;
    if (n->in[0]->dtype == MP_DT_STRING)
        return cmp_run_strings(n, &s->plan);
    cmp_find(n->opcode)->fn[cmp_dtype_index(n->in[0]->dtype)](&s->plan, n->in[0]->data,
                                                              n->in[1]->data, n->out[0]->data, s);
    return MP_OK;
}

/* ---- LOGICAL_AND, LOGICAL_OR, LOGICAL_NOT -------------------------------------------------- */

CMP_KERNEL(and_bool, uint8_t, x != 0 && w != 0)
CMP_KERNEL(or_bool, uint8_t, x != 0 || w != 0)

/* Every input and the output bool. */
static mp_status check_all_bool(mp_node *n)
{
    for (int32_t i = 0; i < n->n_in; i++)
        if (n->in[i]->dtype != MP_DT_BOOL)
            return mp_node_fail(n, MP_ERR_UNSUPPORTED, "input '%s' is %s, expected bool",
                                mp_tname(n->in[i]), mp_dtype_name(n->in[i]->dtype));
    return check_bool_output(n);
}

static mp_status logical_infer(mp_node *n)
{
    const int32_t count = n->opcode == MP_OP_LOGICAL_NOT ? 1 : 2;
    mp_status st = mp_node_check_io(n, count, count, 0);
    if (st == MP_OK)
        st = check_all_bool(n);
    if (st != MP_OK)
        return st;
    return count == 1 ? mp_node_set_output_shape(n, n->in[0]->rank, n->in[0]->dims)
                      : mp_node_broadcast_output(n, 2, (const mp_tensor *const *)n->in);
}

static mp_status logical_prepare(mp_node *n)
{
    if (n->opcode == MP_OP_LOGICAL_NOT)
        return MP_OK;
    cmp_state *s = mp_node_state(n, offsetof(cmp_state, scaled));
    if (!s)
        return MP_ERR_NOMEM;
    mp_bc_plan_init(&s->plan, 2, (const mp_tensor *const *)n->in);
    return MP_OK;
}

static mp_status logical_run(mp_node *n)
{
    if (n->opcode == MP_OP_LOGICAL_NOT) {
        const uint8_t *x = n->in[0]->data;
        uint8_t *y = n->out[0]->data;
        for (size_t i = 0, count = mp_tensor_elements(n->in[0]); i < count; i++)
            y[i] = x[i] == 0;
        return MP_OK;
    }
    const cmp_state *s = n->state;
    if (!s)
        return mp_node_fail(n, MP_ERR_ARG, "run before prepare");
    if (s->plan.elements > 0)
        (n->opcode == MP_OP_LOGICAL_AND ? and_bool : or_bool)(&s->plan, n->in[0]->data,
                                                              n->in[1]->data, n->out[0]->data, s);
    return MP_OK;
}

static void cmp_release(mp_node *n)
{
    if (n->state)
        mp_node_free_state(n, NULL);
}

/* ---- SELECT, SELECT_V2 ------------------------------------------------------------------ */

/* SELECT's condition as the plan sees it: a vector selecting rows of x becomes [N,1,..,1]. */
static mp_tensor select_condition(const mp_node *n)
{
    mp_tensor c = *n->in[0];
    const mp_tensor *x = n->in[1];
    if (n->opcode == MP_OP_SELECT && c.rank == 1 && x->rank > 1) {
        c.rank = x->rank;
        for (int32_t i = 1; i < x->rank; i++)
            c.dims[i] = 1;
    }
    return c;
}

static mp_status select_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 3, 3, 0);
    if (st != MP_OK)
        return st;
    const mp_tensor *c = n->in[0], *x = n->in[1], *y = n->in[2];
    if (c->dtype != MP_DT_BOOL)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "condition '%s' is %s, expected bool",
                            mp_tname(c), mp_dtype_name(c->dtype));
    if (y->dtype != x->dtype)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "inputs '%s' (%s) and '%s' (%s) differ in dtype",
                            mp_tname(x), mp_dtype_name(x->dtype), mp_tname(y),
                            mp_dtype_name(y->dtype));
    if ((st = mp_node_check_same_dtype(n, x, n->out[0])) != MP_OK)
        return st;
    if (n->opcode == MP_OP_SELECT_V2)
        return mp_node_broadcast_output(n, 3, (const mp_tensor *const *)n->in);
    char sc[96], sx[96], sy[96];
    if (!mp_tensor_same_shape(x, y))
        return mp_node_fail(n, MP_ERR_SHAPE, "'%s' %s and '%s' %s must have the same shape",
                            mp_tname(x), mp_shape_str(x->rank, x->dims, sx, sizeof sx), mp_tname(y),
                            mp_shape_str(y->rank, y->dims, sy, sizeof sy));
    if (!mp_tensor_same_shape(c, x) && c->rank != 0 &&
        !(c->rank == 1 && x->rank >= 1 && c->dims[0] == x->dims[0]))
        return mp_node_fail(n, MP_ERR_SHAPE, "condition '%s' %s is neither of the shape of '%s' %s, "
                            "a scalar, nor one entry per row", mp_tname(c),
                            mp_shape_str(c->rank, c->dims, sc, sizeof sc), mp_tname(x),
                            mp_shape_str(x->rank, x->dims, sx, sizeof sx));
    return mp_node_set_output_shape(n, x->rank, x->dims);
}

static mp_status select_prepare(mp_node *n)
{
    mp_bc_plan *p = mp_node_state(n, sizeof *p);
    if (!p)
        return MP_ERR_NOMEM;
    const mp_tensor c = select_condition(n);
    const mp_tensor *ts[3] = {&c, n->in[1], n->in[2]};
    mp_bc_plan_init(p, 3, ts);
    return MP_OK;
}

/* The three-operand loop: the row's strides are 0 or 1 per operand. */
#define SELECT_LOOP(T)                                                                    \
    do {                                                                                  \
        const T *restrict a = n->in[1]->data, *restrict b = n->in[2]->data;               \
        T *restrict y = n->out[0]->data;                                                  \
        for (size_t row = 0; row < rows; row++) {                                         \
            const uint8_t *rc = cond + o[0];                                              \
            const T *ra = a + o[1], *rb = b + o[2];                                       \
            for (size_t i = 0; i < len; i++)                                              \
                y[i] = rc[i * sc] ? ra[i * sa] : rb[i * sb];                              \
            y += len;                                                                     \
            mp_bc_next_row(p, idx, o);                                                    \
        }                                                                                 \
    } while (0)

static mp_status select_run(mp_node *n)
{
    const mp_bc_plan *p = n->state;
    if (!p)
        return mp_node_fail(n, MP_ERR_ARG, "run before prepare");
    if (p->elements == 0)
        return MP_OK;
    const int32_t last = p->rank - 1;
    const size_t len = p->dims[last], rows = p->elements / len;
    const size_t sc = p->stride[0][last], sa = p->stride[1][last], sb = p->stride[2][last];
    const uint8_t *cond = n->in[0]->data;
    size_t idx[MP_MAX_RANK] = {0}, o[MP_BC_MAX_OPERANDS] = {0};
    switch (mp_dtype_size(n->in[1]->dtype)) {
    case 1: SELECT_LOOP(uint8_t); break;
    case 2: SELECT_LOOP(uint16_t); break;
    case 4: SELECT_LOOP(uint32_t); break;
    default: SELECT_LOOP(uint64_t); break;
    }
    return MP_OK;
}

/* ---- table ------------------------------------------------------------------------------ */

#define CMP_TABLE_KERNEL(code, nin, inf, prep, run_)                                      \
    {                                                                                     \
        .opcode = (code), .min_inputs = (nin), .max_inputs = (nin), .n_outputs = 1,       \
        .infer = (inf), .prepare = (prep), .run = (run_), .release = cmp_release          \
    }
#define COMPARISON(code) CMP_TABLE_KERNEL(code, 2, cmp_infer, cmp_prepare, cmp_run)
#define LOGICAL(code, nin) CMP_TABLE_KERNEL(code, nin, logical_infer, logical_prepare, logical_run)
#define SELECT(code) CMP_TABLE_KERNEL(code, 3, select_infer, select_prepare, select_run)

const mp_kernel mp_kernels_compare[] = {
    COMPARISON(MP_OP_EQUAL),      COMPARISON(MP_OP_NOT_EQUAL),     COMPARISON(MP_OP_LESS),
    COMPARISON(MP_OP_LESS_EQUAL), COMPARISON(MP_OP_GREATER),       COMPARISON(MP_OP_GREATER_EQUAL),
    LOGICAL(MP_OP_LOGICAL_AND, 2), LOGICAL(MP_OP_LOGICAL_OR, 2),   LOGICAL(MP_OP_LOGICAL_NOT, 1),
    SELECT(MP_OP_SELECT),         SELECT(MP_OP_SELECT_V2),         {.opcode = -1},
};
