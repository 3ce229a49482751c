/* Kernels: operators along one axis or over one table of rows, in plain C after TensorFlow
 * Lite's cumsum.cc, one_hot.cc, topk_v2.cc and embedding_lookup.cc.
 *
 * CUMSUM (float32, int32, int64): the running sum along `axis` (input 1, one int32, negative
 * counted from the end), accumulated in the dtype (int32 / int64 wrap as two's complement);
 * `exclusive` writes the sum before the element (the first gets 0), `reverse` runs from the
 * end of the axis.
 * ONE_HOT: indices (int32 / int64), depth (one int32, >= 0), on_value and off_value (one
 * element each, of the output's dtype: float32, int16, int32, int64, int8, uint8 or bool);
 * the output is the indices' shape with a new dimension of extent depth at `axis` (-1: last),
 * on_value where the index equals the position along it, off_value elsewhere (an index
 * outside [0, depth) gives a row of off_value). depth not known before running: deferred.
 * TOPK_V2: the k (one int32 or int16, 0..last dimension) largest values of each row of the
 * last axis, sorted descending, and their int32 (or int16) positions; equal values keep the
 * lower position first
 * (TensorFlow Lite's order). Values of float32, uint8, int8, int16, int32 or int64, compared
 * as stored. k not known before running: deferred. The sort is a merge sort of positions in
 * the operator's scratch (two int32 per element of a row).
 * EMBEDDING_LOOKUP: ids (int32, rank 1) pick rows (dimension 0) of value (rank >= 2): a copy
 * when the output has value's dtype (float32, int8, uint8), or, for an int8 / uint8 table
 * and a float32 output, TensorFlow Lite's hybrid form: each byte read as int8 (uint8 too, as
 * TensorFlow Lite's EvalHybrid reads it; no zero point) times the row's scale (one scale per
 * row when the table has one per row along dimension 0, else the tensor's), in double. An id
 * outside [0, rows) fails the run naming it. */
#include "engine/kernels/kernel.h"

#include <string.h>

/* ---- helpers ---------------------------------------------------------------------------- */

/* The int32 scalar (one element) input i, checked in dtype and size; *known when its value
 * is there before running. */
static mp_status seq_scalar_i32(mp_node *n, int32_t i, const char *what, bool *known)
{
    const mp_tensor *t = n->in[i];
    const bool i16_ok = n->opcode == MP_OP_TOPK_V2; /* its k may be int16 too */
    if (t->dtype != MP_DT_INT32 && !(i16_ok && t->dtype == MP_DT_INT16))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "%s '%s' is %s; expected i32%s", what,
                            mp_tname(t), mp_dtype_name(t->dtype), i16_ok ? " or i16" : "");
    if (mp_tensor_elements(t) != 1)
        return mp_node_fail(n, MP_ERR_SHAPE, "%s '%s' must hold one value, has %zu", what,
                            mp_tname(t), mp_tensor_elements(t));
    *known = t->value_known && t->data;
    return MP_OK;
}

static int32_t seq_i32(const mp_tensor *t)
{
    return (int32_t)mp_tensor_index_at(t, 0);
}

/* outer x extent x inner around dimension axis. */
static void seq_split(const mp_tensor *t, int32_t axis, size_t *outer, size_t *extent,
                      size_t *inner)
{
    *outer = *inner = 1;
    for (int32_t d = 0; d < axis; d++)
        *outer *= (size_t)t->dims[d];
    *extent = (size_t)t->dims[axis];
    for (int32_t d = axis + 1; d < t->rank; d++)
        *inner *= (size_t)t->dims[d];
}

/* ---- CUMSUM ----------------------------------------------------------------------------- */

static mp_status cumsum_axis(mp_node *n, int32_t *axis)
{
    const mp_tensor *in = n->in[0];
    int32_t a = seq_i32(n->in[1]);
    if (a < -in->rank || a >= in->rank || in->rank == 0)
        return mp_node_fail(n, MP_ERR_SHAPE, "axis %d is out of range for '%s' of rank %d", a,
                            mp_tname(in), in->rank);
    *axis = a < 0 ? a + in->rank : a;
    return MP_OK;
}

static mp_status cumsum_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 2, 2, 0);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0];
    if (in->dtype != MP_DT_FLOAT32 && in->dtype != MP_DT_INT32 && in->dtype != MP_DT_INT64)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "input '%s' has dtype %s (supported: f32, "
                            "i32, i64)", mp_tname(in), mp_dtype_name(in->dtype));
    if ((st = mp_node_check_same_dtype(n, in, n->out[0])) != MP_OK)
        return st;
    bool known;
    if ((st = seq_scalar_i32(n, 1, "axis", &known)) != MP_OK)
        return st;
    int32_t axis = 0;
    if (known && (st = cumsum_axis(n, &axis)) != MP_OK)
        return st;
    return mp_node_set_output_shape(n, in->rank, in->dims);
}

#define CUMSUM_LOOP(T, UT)                                                                \
    do {                                                                                  \
        const T *x = in->data;                                                            \
        T *y = n->out[0]->data;                                                           \
        for (size_t o = 0; o < outer; o++)                                                \
            for (size_t i = 0; i < inner; i++) {                                          \
                UT acc = 0;                                                               \
                for (size_t k = 0; k < extent; k++) {                                     \
                    const size_t e = reverse ? extent - 1 - k : k;                        \
                    const size_t at = (o * extent + e) * inner + i;                       \
                    const UT v = (UT)x[at];                                               \
                    if (exclusive) {                                                      \
                        y[at] = (T)acc;                                                   \
                        acc += v;                                                         \
                    } else {                                                              \
                        acc += v;                                                         \
                        y[at] = (T)acc;                                                   \
                    }                                                                     \
                }                                                                         \
            }                                                                             \
    } while (0)

static mp_status cumsum_run(mp_node *n)
{
    const mp_tensor *in = n->in[0];
    int32_t axis = 0;
    mp_status st = cumsum_axis(n, &axis);
    if (st != MP_OK)
        return st;
    size_t outer, extent, inner;
    seq_split(in, axis, &outer, &extent, &inner);
    const bool exclusive = n->opt->exclusive, reverse = n->opt->reverse;
    switch (in->dtype) {
    case MP_DT_FLOAT32: CUMSUM_LOOP(float, float); break;
    case MP_DT_INT32: CUMSUM_LOOP(int32_t, uint32_t); break;
    default: CUMSUM_LOOP(int64_t, uint64_t); break;
    }
    return MP_OK;
}

/* ---- ONE_HOT ---------------------------------------------------------------------------- */

static bool one_hot_dtype(mp_dtype dt)
{
    switch (dt) {
    case MP_DT_FLOAT32: case MP_DT_INT16: case MP_DT_INT32: case MP_DT_INT64: case MP_DT_INT8:
    case MP_DT_UINT8: case MP_DT_BOOL: return true;
    default: return false;
    }
}

static mp_status one_hot_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 4, 4, 0);
    if (st != MP_OK)
        return st;
    const mp_tensor *idx = n->in[0], *on = n->in[2], *off = n->in[3];
    mp_tensor *out = n->out[0];
    if (!mp_dtype_is_index(idx->dtype))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "indices '%s' are %s; expected i32 or i64",
                            mp_tname(idx), mp_dtype_name(idx->dtype));
    if (!one_hot_dtype(out->dtype))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "output '%s' has dtype %s (supported: f32, "
                            "i16, i32, i64, i8, u8, bool)", mp_tname(out),
                            mp_dtype_name(out->dtype));
    if (on->dtype != out->dtype || off->dtype != out->dtype)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "on_value '%s' (%s) and off_value '%s' (%s) "
                            "must have the output's dtype %s", mp_tname(on),
                            mp_dtype_name(on->dtype), mp_tname(off), mp_dtype_name(off->dtype),
                            mp_dtype_name(out->dtype));
    if (mp_tensor_elements(on) != 1 || mp_tensor_elements(off) != 1)
        return mp_node_fail(n, MP_ERR_SHAPE, "on_value '%s' and off_value '%s' must hold one "
                            "value each", mp_tname(on), mp_tname(off));
    const int32_t rank = idx->rank + 1, axis = n->opt->axis;
    if (rank > MP_MAX_RANK)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "output rank %d is above %d", rank,
                            MP_MAX_RANK);
    if (axis < -1 || axis >= rank)
        return mp_node_fail(n, MP_ERR_FORMAT, "axis %d is out of range for an output of rank %d "
                            "(-1 to %d)", axis, rank, rank - 1);
    bool known;
    if ((st = seq_scalar_i32(n, 1, "depth", &known)) != MP_OK)
        return st;
    if (!known)
        return MP_ERR_DEFERRED;
    const int32_t depth = seq_i32(n->in[1]);
    if (depth < 0)
        return mp_node_fail(n, MP_ERR_SHAPE, "depth %d of '%s' is negative", depth,
                            mp_tname(n->in[1]));
    const int32_t at = axis < 0 ? rank - 1 : axis;
    int32_t dims[MP_MAX_RANK];
    for (int32_t d = 0, s = 0; d < rank; d++)
        dims[d] = d == at ? depth : idx->dims[s++];
    return mp_node_set_output_shape(n, rank, dims);
}

static mp_status one_hot_run(mp_node *n)
{
    const mp_tensor *idx = n->in[0];
    const mp_tensor *out = n->out[0];
    const int32_t rank = out->rank, at = n->opt->axis < 0 ? rank - 1 : n->opt->axis;
    size_t prefix, depth, suffix;
    seq_split(out, at, &prefix, &depth, &suffix);
    const size_t es = mp_dtype_size(out->dtype);
    const uint8_t *on = n->in[2]->data, *off = n->in[3]->data;
    uint8_t *y = out->data;
    for (size_t p = 0; p < prefix; p++)
        for (size_t d = 0; d < depth; d++)
            for (size_t s = 0; s < suffix; s++, y += es) {
                const int64_t v = mp_tensor_index_at(idx, p * suffix + s);
                memcpy(y, v >= 0 && (uint64_t)v == d ? on : off, es);
            }
    return MP_OK;
}

/* ---- TOPK_V2 ---------------------------------------------------------------------------- */

static bool topk_dtype(mp_dtype dt)
{
    switch (dt) {
    case MP_DT_FLOAT32: case MP_DT_UINT8: case MP_DT_INT8: case MP_DT_INT16: case MP_DT_INT32:
    case MP_DT_INT64: return true;
    default: return false;
    }
}

static mp_status topk_infer(mp_node *n)
{
    if (n->n_in != 2 || !n->in[0] || !n->in[1])
        return mp_node_fail(n, MP_ERR_FORMAT, "expects 2 inputs, has %d", n->n_in);
    if (n->n_out != 2 || !n->out[0] || !n->out[1])
        return mp_node_fail(n, MP_ERR_FORMAT, "expects 2 outputs (values, indices), has %d",
                            n->n_out);
    const mp_tensor *in = n->in[0];
    mp_tensor *vals = n->out[0], *idx = n->out[1];
    if (!topk_dtype(in->dtype))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "input '%s' has dtype %s (supported: f32, u8, "
                            "i8, i16, i32, i64)", mp_tname(in), mp_dtype_name(in->dtype));
    mp_status st = mp_node_check_same_dtype(n, in, vals);
    if (st != MP_OK)
        return st;
    if (idx->dtype != MP_DT_INT32 && idx->dtype != MP_DT_INT16)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "indices output '%s' is %s; expected i32 "
                            "or i16", mp_tname(idx), mp_dtype_name(idx->dtype));
    if (in->rank < 1)
        return mp_node_fail(n, MP_ERR_SHAPE, "input '%s' is a scalar; needs rank >= 1",
                            mp_tname(in));
    bool known;
    if ((st = seq_scalar_i32(n, 1, "k", &known)) != MP_OK)
        return st;
    if (!known)
        return MP_ERR_DEFERRED;
    const int32_t k = seq_i32(n->in[1]), last = in->dims[in->rank - 1];
    if (k < 0 || k > last)
        return mp_node_fail(n, MP_ERR_SHAPE, "k %d is out of range for '%s' whose last dimension "
                            "is %d", k, mp_tname(in), last);
    int32_t dims[MP_MAX_RANK];
    memcpy(dims, in->dims, sizeof dims);
    dims[in->rank - 1] = k;
    if ((st = mp_node_set_output_shape(n, in->rank, dims)) != MP_OK)
        return st;
    if (!mp_tensor_set_shape(idx, in->rank, dims))
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' is too large", mp_tname(idx));
    n->scratch_bytes = k > 0 ? 2 * (size_t)last * sizeof(int32_t) : 0;
    return MP_OK;
}

/* Position a comes before position b of row x: a larger value, or an equal one at a lower
 * position (NaN compares equal to everything, as in TensorFlow Lite's comparison). */
typedef struct topk_row {
    const void *x;  /* the row */
    mp_dtype dt;
} topk_row;

static bool topk_before(const void *ctx, int32_t a, int32_t b)
{
    const void *x = ((const topk_row *)ctx)->x;
    const mp_dtype dt = ((const topk_row *)ctx)->dt;
#define TK_CMP(T)                                                                         \
    do {                                                                                  \
        const T va = ((const T *)x)[a], vb = ((const T *)x)[b];                           \
        if (vb < va)                                                                      \
            return true;                                                                  \
        if (vb > va)                                                                      \
            return false;                                                                 \
        return a < b;                                                                     \
    } while (0)
    switch (dt) {
    case MP_DT_FLOAT32: TK_CMP(float);
    case MP_DT_UINT8: TK_CMP(uint8_t);
    case MP_DT_INT8: TK_CMP(int8_t);
    case MP_DT_INT16: TK_CMP(int16_t);
    case MP_DT_INT32: TK_CMP(int32_t);
    default: TK_CMP(int64_t);
    }
#undef TK_CMP
}

static mp_status topk_run(mp_node *n)
{
    const mp_tensor *in = n->in[0];
    const int32_t k = n->out[0]->dims[in->rank - 1], last = in->dims[in->rank - 1];
    if (k == 0 || mp_tensor_elements(in) == 0)
        return MP_OK;
    if (!n->scratch)
        return mp_node_fail(n, MP_ERR_ARG, "run without its scratch");
    const size_t es = mp_dtype_size(in->dtype), rows = mp_tensor_elements(in) / (size_t)last;
    int32_t *a = n->scratch, *b = a + last;
    const uint8_t *x = in->data;
    uint8_t *yv = n->out[0]->data;
    int32_t *yi = n->out[1]->data;
    int16_t *yi16 = n->out[1]->data; /* an int16 indices output (wrapping past 32767, as
                                        TensorFlow Lite's copy into int16_t) */
    const bool i16 = n->out[1]->dtype == MP_DT_INT16;
    for (size_t r = 0; r < rows; r++, x += (size_t)last * es) {
        for (int32_t i = 0; i < last; i++)
            a[i] = i;
        const topk_row row = {x, in->dtype};
        mp_sort_positions(a, b, (size_t)last, topk_before, &row);
        for (int32_t i = 0; i < k; i++, yv += es) {
            memcpy(yv, x + (size_t)a[i] * es, es);
            if (i16)
                *yi16++ = (int16_t)a[i];
            else
                *yi++ = a[i];
        }
    }
    return MP_OK;
}

/* ---- EMBEDDING_LOOKUP ------------------------------------------------------------------- */

static bool emb_hybrid(const mp_node *n)
{
    return n->in[1]->dtype != MP_DT_FLOAT32 && n->out[0]->dtype == MP_DT_FLOAT32;
}

static mp_status emb_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 2, 2, 0);
    if (st != MP_OK)
        return st;
    const mp_tensor *ids = n->in[0], *val = n->in[1];
    mp_tensor *out = n->out[0];
    if (ids->dtype != MP_DT_INT32)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "ids '%s' are %s; expected i32", mp_tname(ids),
                            mp_dtype_name(ids->dtype));
    if (val->dtype != MP_DT_FLOAT32 && val->dtype != MP_DT_INT8 && val->dtype != MP_DT_UINT8)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "value '%s' has dtype %s (supported: f32, i8, "
                            "u8)", mp_tname(val), mp_dtype_name(val->dtype));
    if (out->dtype != val->dtype && !emb_hybrid(n))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "output '%s' is %s for a %s table '%s' "
                            "(expected %s, or f32 from an 8-bit table)", mp_tname(out),
                            mp_dtype_name(out->dtype), mp_dtype_name(val->dtype), mp_tname(val),
                            mp_dtype_name(val->dtype));
    if (emb_hybrid(n)) {
        const mp_quant *q = &val->info->quant;
        if (q->count < 1)
            return mp_node_fail(n, MP_ERR_UNSUPPORTED, "8-bit table '%s' has no scale",
                                mp_tname(val));
        if (q->count > 1 && q->quantized_dimension != 0)
            return mp_node_fail(n, MP_ERR_UNSUPPORTED, "table '%s' has %d scales along dimension "
                                "%d; a hybrid lookup takes one per row (dimension 0)",
                                mp_tname(val), q->count, q->quantized_dimension);
    }
    if (ids->rank != 1)
        return mp_node_fail(n, MP_ERR_SHAPE, "ids '%s' must have rank 1, has %d", mp_tname(ids),
                            ids->rank);
    if (val->rank < 2)
        return mp_node_fail(n, MP_ERR_SHAPE, "value '%s' must have rank >= 2, has %d",
                            mp_tname(val), val->rank);
    int32_t dims[MP_MAX_RANK];
    memcpy(dims, val->dims, sizeof dims);
    dims[0] = ids->dims[0];
    return mp_node_set_output_shape(n, val->rank, dims);
}

static mp_status emb_run(mp_node *n)
{
    const mp_tensor *ids = n->in[0], *val = n->in[1];
    const int32_t rows = val->dims[0];
    const size_t cols = rows > 0 ? mp_tensor_elements(val) / (size_t)rows : 0;
    const size_t row_bytes = cols * mp_dtype_size(val->dtype);
    const bool hybrid = emb_hybrid(n);
    const mp_quant *q = &val->info->quant;
    const int32_t *id = ids->data;
    uint8_t *y = n->out[0]->data;
    for (int32_t i = 0; i < ids->dims[0]; i++) {
        const int32_t r = id[i];
        if (r < 0 || r >= rows)
            return mp_node_fail(n, MP_ERR_ARG, "id %d (element %d of '%s') is out of range: "
                                "'%s' has rows 0 to %d", r, i, mp_tname(ids), mp_tname(val),
                                rows - 1);
        const uint8_t *row = (const uint8_t *)val->data + (size_t)r * row_bytes;
        if (!hybrid) {
            memcpy(y + (size_t)i * row_bytes, row, row_bytes);
            continue;
        }
        const double scale = q->scale[q->count > 1 ? r : 0];
        float *yf = (float *)y + (size_t)i * cols;
        for (size_t c = 0; c < cols; c++)
            yf[c] = (float)((double)(int8_t)row[c] * scale);
    }
    return MP_OK;
}

const mp_kernel mp_kernels_sequence[] = {
    {.opcode = MP_OP_CUMSUM, .min_inputs = 2, .max_inputs = 2, .n_outputs = 1,
     .infer = cumsum_infer, .run = cumsum_run},
    {.opcode = MP_OP_ONE_HOT, .min_inputs = 4, .max_inputs = 4, .n_outputs = 1,
     .infer = one_hot_infer, .run = one_hot_run},
    {.opcode = MP_OP_TOPK_V2, .min_inputs = 2, .max_inputs = 2, .n_outputs = 2,
     .infer = topk_infer, .run = topk_run},
    {.opcode = MP_OP_EMBEDDING_LOOKUP, .min_inputs = 2, .max_inputs = 2, .n_outputs = 1,
     .infer = emb_infer, .run = emb_run},
    {.opcode = -1},
};
