/* Kernels: operators that write given values at given positions of an output, in plain C after
 * TensorFlow Lite's scatter_nd.cc, sparse_to_dense.cc and dynamic_update_slice.cc.
 *
 * SCATTER_ND: indices [..., K] (int32 / int64), updates [..., shape[K:]] and shape (a vector of
 * the indices' dtype): an output of `shape`, zero, to which every update slice is added at
 * the position its index row names (duplicates summed, integers wrapping as two's
 * complement); updates of float32, uint8, int8, int32 or int64. An index outside its
 * dimension fails the run. The shape not known before running: deferred.
 * SPARSE_TO_DENSE: indices (a scalar, a vector of positions of a 1-D output, or [n, rank]),
 * output_shape (int32 / int64 vector), values (one for all, or one per index) and
 * default_value: an output of output_shape filled with default_value, each indexed element
 * set to its value (a later duplicate wins); float32, int32, int64, int8 or uint8. An index
 * outside the output fails the run. validate_indices (order and repeats) is read and, as in
 * TensorFlow Lite, not enforced. output_shape not known before running: deferred.
 * DYNAMIC_UPDATE_SLICE: the operand with `update` written at start_indices (int32 / int64, one
 * per dimension), each start clamped to [0, operand - update] (XLA's semantics); any dtype of
 * a fixed size. */
#include "engine/kernels/kernel.h"
#include "engine/kernels/movement.h"

#include <stdio.h>
#include <string.h>

/* ---- helpers ---------------------------------------------------------------------------- */

/* The output shape held by the int32 / int64 vector t: each entry 0 to INT32_MAX, at most
 * MP_MAX_RANK of them. */
static mp_status sc_shape_of(mp_node *n, const mp_tensor *t, const char *what, int32_t *rank,
                             int32_t *dims)
{
    const size_t len = mp_tensor_elements(t);
    if (len > MP_MAX_RANK)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "%s '%s' has %zu dimensions (at most %d)",
                            what, mp_tname(t), len, MP_MAX_RANK);
    for (size_t i = 0; i < len; i++) {
        const int64_t v = mp_tensor_index_at(t, i);
        if (v < 0 || v > INT32_MAX)
            return mp_node_fail(n, MP_ERR_SHAPE, "%s '%s' entry %zu is %lld", what,
                                mp_tname(t), i, (long long)v);
        dims[i] = (int32_t)v;
    }
    *rank = (int32_t)len;
    return MP_OK;
}

/* The flat position in out of the index row at element `at` of idx (k entries, for the first
 * k dimensions of out), each checked against its dimension; `row` names it in messages. */
static mp_status sc_position(mp_node *n, const mp_tensor *idx, size_t at, int32_t k,
                             const mp_tensor *out, size_t row, size_t *pos)
{
    size_t p = 0;
    for (int32_t j = 0; j < k; j++) {
        const int64_t v = mp_tensor_index_at(idx, at + (size_t)j);
        if (v < 0 || v >= out->dims[j])
            return mp_node_fail(n, MP_ERR_ARG, "index %lld (row %zu, entry %d of '%s') is out "
                                "of range: dimension %d of '%s' has 0 to %d", (long long)v,
                                row, j, mp_tname(idx), j, mp_tname(out), out->dims[j] - 1);
        p = p * (size_t)out->dims[j] + (size_t)v;
    }
    *pos = p;
    return MP_OK;
}

/* ---- SCATTER_ND ------------------------------------------------------------------------- */

static bool scatter_dtype(mp_dtype dt)
{
    return dt == MP_DT_FLOAT32 || dt == MP_DT_UINT8 || dt == MP_DT_INT8 || dt == MP_DT_INT32 ||
           dt == MP_DT_INT64;
}

static mp_status scatter_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 3, 3, 0);
    if (st != MP_OK)
        return st;
    const mp_tensor *idx = n->in[0], *upd = n->in[1], *shp = n->in[2];
    if (!mp_dtype_is_index(idx->dtype) || shp->dtype != idx->dtype)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "indices '%s' (%s) and shape '%s' (%s) must "
                            "both be i32 or both i64", mp_tname(idx), mp_dtype_name(idx->dtype),
                            mp_tname(shp), mp_dtype_name(shp->dtype));
    if (!scatter_dtype(upd->dtype))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "updates '%s' have dtype %s (supported: f32, "
                            "u8, i8, i32, i64)", mp_tname(upd), mp_dtype_name(upd->dtype));
    if ((st = mp_node_check_same_dtype(n, upd, n->out[0])) != MP_OK)
        return st;
    if (idx->rank < 1 || upd->rank < 1 || shp->rank != 1)
        return mp_node_fail(n, MP_ERR_SHAPE, "indices '%s' and updates '%s' need rank >= 1 and "
                            "shape '%s' rank 1 (ranks %d, %d, %d)", mp_tname(idx), mp_tname(upd),
                            mp_tname(shp), idx->rank, upd->rank, shp->rank);
    if (!shp->value_known || !shp->data)
        return MP_ERR_DEFERRED;
    int32_t rank, dims[MP_MAX_RANK];
    if ((st = sc_shape_of(n, shp, "shape", &rank, dims)) != MP_OK)
        return st;
    /* updates = indices.shape[:-1] + shape[K:], K = indices.shape[-1] */
    const int32_t outer = idx->rank - 1, k = idx->dims[outer];
    bool ok = upd->rank >= outer && k <= rank && upd->rank - outer == rank - k;
    for (int32_t i = 0; ok && i < outer; i++)
        ok = upd->dims[i] == idx->dims[i];
    for (int32_t i = 0; ok && i + outer < upd->rank; i++)
        ok = upd->dims[outer + i] == dims[k + i];
    if (!ok) {
        char b1[96], b2[96], b3[96];
        return mp_node_fail(n, MP_ERR_SHAPE, "updates '%s' %s do not fit indices '%s' %s and "
                            "shape %s (expected indices.shape[:-1] + shape[indices.shape[-1]:])",
                            mp_tname(upd), mp_shape_str(upd->rank, upd->dims, b1, sizeof b1),
                            mp_tname(idx), mp_shape_str(idx->rank, idx->dims, b2, sizeof b2),
                            mp_shape_str(rank, dims, b3, sizeof b3));
    }
    return mp_node_set_output_shape(n, rank, dims);
}

/* y[pos..pos+len) += u[0..len), integers wrapping (added as their unsigned type). */
#define SCATTER_ADD(T, UT)                                                                \
    do {                                                                                  \
        T *y_ = (T *)out->data + pos;                                                     \
        const T *u_ = (const T *)upd->data + s * slice;                                   \
        for (size_t e = 0; e < slice; e++)                                                \
            y_[e] = (T)((UT)y_[e] + (UT)u_[e]);                                           \
    } while (0)

static mp_status scatter_run(mp_node *n)
{
    const mp_tensor *idx = n->in[0], *upd = n->in[1], *out = n->out[0];
    const int32_t k = idx->dims[idx->rank - 1];
    size_t slice = 1, rows = 1; /* rows: the index rows, indices.shape[:-1] */
    for (int32_t d = k; d < out->rank; d++)
        slice *= (size_t)out->dims[d];
    for (int32_t d = 0; d < idx->rank - 1; d++)
        rows *= (size_t)idx->dims[d];
    memset(out->data, 0, out->bytes);
    if (mp_tensor_elements(upd) == 0)
        return MP_OK; /* nothing to add (and no index row to read when K is 0) */
    for (size_t s = 0; s < rows; s++) {
        size_t pos = 0;
        mp_status st = sc_position(n, idx, s * (size_t)k, k, out, s, &pos);
        if (st != MP_OK)
            return st;
        pos *= slice;
        switch (upd->dtype) {
        case MP_DT_FLOAT32: SCATTER_ADD(float, float); break;
        case MP_DT_UINT8: SCATTER_ADD(uint8_t, uint8_t); break;
        case MP_DT_INT8: SCATTER_ADD(int8_t, uint8_t); break;
        case MP_DT_INT32: SCATTER_ADD(int32_t, uint32_t); break;
        default: SCATTER_ADD(int64_t, uint64_t); break;
        }
    }
    return MP_OK;
}

/* ---- SPARSE_TO_DENSE -------------------------------------------------------------------- */

static mp_status s2d_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 4, 4, 0);
    if (st != MP_OK)
        return st;
    const mp_tensor *idx = n->in[0], *shp = n->in[1], *val = n->in[2], *def = n->in[3];
    if (!mp_dtype_is_index(idx->dtype) || !mp_dtype_is_index(shp->dtype))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "indices '%s' (%s) and output_shape '%s' (%s) "
                            "must be i32 or i64", mp_tname(idx), mp_dtype_name(idx->dtype),
                            mp_tname(shp), mp_dtype_name(shp->dtype));
    if (!scatter_dtype(val->dtype))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "values '%s' have dtype %s (supported: f32, "
                            "i32, i64, i8, u8)", mp_tname(val), mp_dtype_name(val->dtype));
    if (def->dtype != val->dtype)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "default_value '%s' is %s but values '%s' are "
                            "%s", mp_tname(def), mp_dtype_name(def->dtype), mp_tname(val),
                            mp_dtype_name(val->dtype));
    if ((st = mp_node_check_same_dtype(n, val, n->out[0])) != MP_OK)
        return st;
    if (idx->rank > 2 || shp->rank != 1 || val->rank > 1 || mp_tensor_elements(def) != 1)
        return mp_node_fail(n, MP_ERR_SHAPE, "indices '%s' need rank 0 to 2, output_shape '%s' "
                            "rank 1, values '%s' rank 0 or 1 and default_value '%s' one element "
                            "(ranks %d, %d, %d; %zu elements)", mp_tname(idx), mp_tname(shp),
                            mp_tname(val), mp_tname(def), idx->rank, shp->rank, val->rank,
                            mp_tensor_elements(def));
    const int32_t width = idx->rank == 2 ? idx->dims[1] : 1;
    const size_t count = idx->rank == 0 ? 1 : (size_t)idx->dims[0];
    if ((size_t)shp->dims[0] != (size_t)width)
        return mp_node_fail(n, MP_ERR_SHAPE, "output_shape '%s' has %d entries but each index "
                            "of '%s' has %d", mp_tname(shp), shp->dims[0], mp_tname(idx), width);
    if (val->rank == 1 && (size_t)val->dims[0] != count)
        return mp_node_fail(n, MP_ERR_SHAPE, "values '%s' hold %d elements for %zu indices",
                            mp_tname(val), val->dims[0], count);
    if (!shp->value_known || !shp->data)
        return MP_ERR_DEFERRED;
    int32_t rank, dims[MP_MAX_RANK];
    if ((st = sc_shape_of(n, shp, "output_shape", &rank, dims)) != MP_OK)
        return st;
    return mp_node_set_output_shape(n, rank, dims);
}

static mp_status s2d_run(mp_node *n)
{
    const mp_tensor *idx = n->in[0], *val = n->in[2], *def = n->in[3], *out = n->out[0];
    const size_t es = mp_dtype_size(out->dtype), total = mp_tensor_elements(out);
    const int32_t width = idx->rank == 2 ? idx->dims[1] : 1;
    const size_t count = idx->rank == 0 ? 1 : (size_t)idx->dims[0];
    uint8_t *y = out->data;
    for (size_t i = 0; i < total; i++)
        memcpy(y + i * es, def->data, es);
    for (size_t i = 0; i < count; i++) {
        size_t pos = 0;
        mp_status st = sc_position(n, idx, i * (size_t)width, width, out, i, &pos);
        if (st != MP_OK)
            return st;
        memcpy(y + pos * es, (const uint8_t *)val->data + (val->rank == 0 ? 0 : i * es), es);
    }
    return MP_OK;
}

/* ---- DYNAMIC_UPDATE_SLICE --------------------------------------------------------------- */

static mp_status dus_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 3, 3, 0);
    if (st != MP_OK)
        return st;
    const mp_tensor *op = n->in[0], *upd = n->in[1], *start = n->in[2];
    if ((st = mp_node_check_same_dtype(n, op, n->out[0])) != MP_OK)
        return st;
    if (upd->dtype != op->dtype)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "update '%s' is %s but operand '%s' is %s",
                            mp_tname(upd), mp_dtype_name(upd->dtype), mp_tname(op),
                            mp_dtype_name(op->dtype));
    if (!mp_dtype_is_index(start->dtype))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "start_indices '%s' are %s; expected i32 or "
                            "i64", mp_tname(start), mp_dtype_name(start->dtype));
    if (start->rank != 1 || start->dims[0] != op->rank)
        return mp_node_fail(n, MP_ERR_SHAPE, "start_indices '%s' must be a vector of %d (the "
                            "operand's rank)", mp_tname(start), op->rank);
    bool ok = upd->rank == op->rank;
    for (int32_t d = 0; ok && d < op->rank; d++)
        ok = upd->dims[d] <= op->dims[d];
    if (!ok) {
        char b1[96], b2[96];
        return mp_node_fail(n, MP_ERR_SHAPE, "update '%s' %s does not fit in operand '%s' %s",
                            mp_tname(upd), mp_shape_str(upd->rank, upd->dims, b1, sizeof b1),
                            mp_tname(op), mp_shape_str(op->rank, op->dims, b2, sizeof b2));
    }
    return mp_node_set_output_shape(n, op->rank, op->dims);
}

static mp_status dus_run(mp_node *n)
{
    const mp_tensor *op = n->in[0], *upd = n->in[1], *start = n->in[2], *out = n->out[0];
    const int32_t rank = op->rank;
    const size_t es = mp_dtype_size(op->dtype);
    if (out->data != op->data)
        memcpy(out->data, op->data, op->bytes);
    if (mp_tensor_elements(upd) == 0)
        return MP_OK;
    if (rank == 0) {
        memcpy(out->data, upd->data, es);
        return MP_OK;
    }
    int32_t at[MP_MAX_RANK];
    size_t stride[MP_MAX_RANK], s = 1;
    for (int32_t d = rank - 1; d >= 0; d--) {
        const int64_t v = mp_tensor_index_at(start, (size_t)d), hi = op->dims[d] - upd->dims[d];
        at[d] = (int32_t)(v < 0 ? 0 : v > hi ? hi : v);
        stride[d] = s;
        s *= (size_t)op->dims[d];
    }
    /* rows of the update's last dimension, each one copy */
    const int32_t last = rank - 1;
    const size_t row = (size_t)upd->dims[last] * es, rows = mp_tensor_elements(upd) /
                                                            (size_t)upd->dims[last];
    int32_t idx[MP_MAX_RANK] = {0};
    const uint8_t *u = upd->data;
    uint8_t *y = out->data;
    for (size_t r = 0; r < rows; r++, u += row) {
        size_t off = (size_t)at[last];
        for (int32_t d = 0; d < last; d++)
            off += (size_t)(at[d] + idx[d]) * stride[d];
        if (y + off * es != u) /* an update in the output's own bytes is in place already */
            memcpy(y + off * es, u, row);
        mp_index_next(idx, upd->dims, last);
    }
    return MP_OK;
}

const mp_kernel mp_kernels_scatter[] = {
    {.opcode = MP_OP_SCATTER_ND, .min_inputs = 3, .max_inputs = 3, .n_outputs = 1,
     .infer = scatter_infer, .run = scatter_run},
    {.opcode = MP_OP_SPARSE_TO_DENSE, .min_inputs = 4, .max_inputs = 4, .n_outputs = 1,
     .infer = s2d_infer, .run = s2d_run},
    {.opcode = MP_OP_DYNAMIC_UPDATE_SLICE, .min_inputs = 3, .max_inputs = 3, .n_outputs = 1,
     .infer = dus_infer, .run = dus_run},
    {.opcode = -1},
};
