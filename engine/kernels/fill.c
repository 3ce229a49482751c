/* Kernels: tensors generated from values rather than computed from inputs elementwise
 * (ZEROS_LIKE, FILL, RANGE), after TensorFlow Lite's zeros_like.cc, fill.cc and range.cc.
 *
 * ZEROS_LIKE: zeros of the input's shape and dtype (float32, int32, int64).
 * FILL: input 0 the output's dimensions (int32 or int64 vector, each >= 0), input 1 a scalar
 * whose value (any fixed-size dtype; the output's) fills the output; a string value fills a
 * string output (fill.cc's FillString), whose size, known from the value's length, waits for
 * the run (mp_node_in_run).
 * RANGE: scalars start, limit, delta of one dtype (int32, int64, float32; the output's) give
 * start, start + delta, ... while short of limit: ceil(|limit - start| / |delta|) elements
 * (integers without overflow; float32 as TensorFlow Lite, in float), each the previous plus
 * delta (accumulated, as TensorFlow Lite, not start + i * delta). delta 0, or a delta
 * pointing away from limit, is an error; start == limit gives an empty vector.
 * FILL's and RANGE's output shapes come from input values: when those are known at prepare
 * (constants, folded shape arithmetic) the shape is too; otherwise infer returns
 * MP_ERR_DEFERRED and runs again while running, once the values exist. */
#include "engine/kernels/kernel.h"

#include <math.h>
#include <string.h>

#include "engine/kernels/strings.h"
#include "engine/session_resources.h"

/* ---- ZEROS_LIKE ------------------------------------------------------------------------- */

static mp_status zeros_like_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 1, 1, 0);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0];
    if (in->dtype != MP_DT_FLOAT32 && !mp_dtype_is_index(in->dtype))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "input '%s' has dtype %s (supported: f32, i32, "
                            "i64)", mp_tname(in), mp_dtype_name(in->dtype));
    if ((st = mp_node_check_same_dtype(n, in, n->out[0])) != MP_OK)
        return st;
    return mp_node_set_output_shape(n, in->rank, in->dims);
}

static mp_status zeros_like_run(mp_node *n)
{
    if (n->out[0]->bytes)
        memset(n->out[0]->data, 0, n->out[0]->bytes); /* 0.0f is all zero bits */
    return MP_OK;
}

/* ---- FILL ------------------------------------------------------------------------------- */

static mp_status fill_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 2, 2, 0);
    if (st != MP_OK)
        return st;
    const mp_tensor *dims = n->in[0], *value = n->in[1];
    if (!mp_dtype_is_index(dims->dtype) || dims->rank != 1)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "dims '%s' must be an int32 or int64 vector, is "
                            "%s of rank %d", mp_tname(dims), mp_dtype_name(dims->dtype),
                            dims->rank);
    if (value->rank != 0)
        return mp_node_fail(n, MP_ERR_SHAPE, "value '%s' must be a scalar, has rank %d",
                            mp_tname(value), value->rank);
    const bool str = value->dtype == MP_DT_STRING;
    if (str && n->out[0]->dtype != MP_DT_STRING)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "output '%s' is %s but value '%s' is string",
                            mp_tname(n->out[0]), mp_dtype_name(n->out[0]->dtype), mp_tname(value));
    if (!str && (st = mp_node_check_same_dtype(n, value, n->out[0])) != MP_OK)
        return st;
    if (dims->dims[0] > MP_MAX_RANK)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "dims '%s' asks for rank %d (at most %d)",
                            mp_tname(dims), dims->dims[0], MP_MAX_RANK);
    if (!dims->value_known || !dims->data)
        return MP_ERR_DEFERRED;
    int32_t out[MP_MAX_RANK];
    for (int32_t i = 0; i < dims->dims[0]; i++) {
        int64_t d = mp_tensor_index_at(dims, (size_t)i);
        if (d < 0 || d > INT32_MAX)
            return mp_node_fail(n, MP_ERR_SHAPE, "dimension %d of '%s' is %lld (must be 0 to %d)",
                                i, mp_tname(dims), (long long)d, INT32_MAX);
        out[i] = (int32_t)d;
    }
    if ((st = mp_node_set_output_shape(n, dims->dims[0], out)) != MP_OK || !str)
        return st;
    /* a string value: count copies of it, sized while running */
    if (!mp_node_in_run(n) || !value->data)
        return MP_ERR_DEFERRED;
    if ((st = mp_str_check(n, value)) != MP_OK)
        return st;
    size_t len;
    mp_str_at(value, 0, &len);
    const size_t count = mp_tensor_elements(n->out[0]);
    if ((len && count > (size_t)INT32_MAX / len) ||
        !mp_str_bytes(count, count * len, &n->out[0]->bytes))
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' would exceed 2 GiB of strings",
                            mp_tname(n->out[0]));
    return MP_OK;
}

/* A string value written count times (infer sized the output). */
static mp_status fill_run_string(mp_node *n, size_t count)
{
    mp_tensor *out = n->out[0];
    size_t len;
    const char *str = mp_str_at(n->in[1], 0, &len);
    mp_str_writer w;
    mp_str_begin(&w, out->data, out->bytes, (int32_t)count);
    for (size_t i = 0; i < count; i++)
        if (!mp_str_append(&w, str, len) || !mp_str_next(&w))
            break;
    if (!mp_str_done(&w))
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' does not hold %zu copies of the value",
                            mp_tname(out), count);
    return MP_OK;
}

static mp_status fill_run(mp_node *n)
{
    const mp_tensor *value = n->in[1];
    mp_tensor *out = n->out[0];
    const size_t es = mp_dtype_size(value->dtype), count = mp_tensor_elements(out);
    uint8_t *y = out->data;
    if (value->dtype == MP_DT_STRING)
        return fill_run_string(n, count);
    if (count == 0)
        return MP_OK;
    memcpy(y, value->data, es);
    /* doubling copies: the filled prefix is copied after itself */
    for (size_t done = 1; done < count;) {
        size_t k = done < count - done ? done : count - done;
        memcpy(y + done * es, y, k * es);
        done += k;
    }
    return MP_OK;
}

/* ---- RANGE ------------------------------------------------------------------------------ */

static mp_status range_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 3, 3, 0);
    if (st != MP_OK)
        return st;
    static const char *const role[3] = {"start", "limit", "delta"};
    const mp_dtype dt = n->in[0]->dtype;
    for (int i = 0; i < 3; i++) {
        const mp_tensor *t = n->in[i];
        if (t->dtype != MP_DT_FLOAT32 && !mp_dtype_is_index(t->dtype))
            return mp_node_fail(n, MP_ERR_UNSUPPORTED, "%s '%s' has dtype %s (supported: f32, "
                                "i32, i64)", role[i], mp_tname(t), mp_dtype_name(t->dtype));
        if (t->dtype != dt)
            return mp_node_fail(n, MP_ERR_UNSUPPORTED, "%s '%s' is %s but start '%s' is %s",
                                role[i], mp_tname(t), mp_dtype_name(t->dtype),
                                mp_tname(n->in[0]), mp_dtype_name(dt));
        if (mp_tensor_elements(t) != 1)
            return mp_node_fail(n, MP_ERR_SHAPE, "%s '%s' must be a scalar", role[i], mp_tname(t));
    }
    if ((st = mp_node_check_same_dtype(n, n->in[0], n->out[0])) != MP_OK)
        return st;
    for (int i = 0; i < 3; i++)
        if (!n->in[i]->value_known || !n->in[i]->data)
            return MP_ERR_DEFERRED;
    double size; /* exact: an integer below 2^64, or a float32 */
    bool bad_sign;
    if (dt == MP_DT_FLOAT32) {
        float start, limit, delta;
        memcpy(&start, n->in[0]->data, 4);
        memcpy(&limit, n->in[1]->data, 4);
        memcpy(&delta, n->in[2]->data, 4);
        if (delta == 0.0f)
            return mp_node_fail(n, MP_ERR_ARG, "delta '%s' is 0", mp_tname(n->in[2]));
        bad_sign = (start < limit && delta < 0.0f) || (start > limit && delta > 0.0f);
        size = (double)ceilf(fabsf((limit - start) / delta));
        if (!isfinite(size) && !bad_sign)
            return mp_node_fail(n, MP_ERR_ARG, "start %g, limit %g and delta %g give no finite "
                                "length", (double)start, (double)limit, (double)delta);
    } else {
        int64_t start = mp_tensor_index_at(n->in[0], 0), limit = mp_tensor_index_at(n->in[1], 0);
        int64_t delta = mp_tensor_index_at(n->in[2], 0);
        if (delta == 0)
            return mp_node_fail(n, MP_ERR_ARG, "delta '%s' is 0", mp_tname(n->in[2]));
        bad_sign = (start < limit && delta < 0) || (start > limit && delta > 0);
        uint64_t span = start < limit ? (uint64_t)limit - (uint64_t)start
                                      : (uint64_t)start - (uint64_t)limit;
        uint64_t step = delta < 0 ? 0u - (uint64_t)delta : (uint64_t)delta;
        size = (double)(span / step + (span % step != 0));
    }
    if (bad_sign)
        return mp_node_fail(n, MP_ERR_ARG, "delta '%s' points away from limit '%s'",
                            mp_tname(n->in[2]), mp_tname(n->in[1]));
    if (size > INT32_MAX)
        return mp_node_fail(n, MP_ERR_SHAPE, "range of %.0f elements is too long", size);
    const int32_t len = (int32_t)size;
    return mp_node_set_output_shape(n, 1, &len);
}

/* value = start; each element the value, then value += delta (wrapping for integers). */
#define RANGE_LOOP(T, U)                                                                  \
    do {                                                                                  \
        T v, d;                                                                           \
        memcpy(&v, n->in[0]->data, sizeof v);                                             \
        memcpy(&d, n->in[2]->data, sizeof d);                                             \
        T *y = n->out[0]->data;                                                           \
        for (size_t i = 0; i < count; i++, v = (T)((U)v + (U)d))                          \
            y[i] = v;                                                                     \
    } while (0)

static mp_status range_run(mp_node *n)
{
    const size_t count = mp_tensor_elements(n->out[0]);
    switch (n->out[0]->dtype) {
    case MP_DT_FLOAT32: RANGE_LOOP(float, float); break;
    case MP_DT_INT32: RANGE_LOOP(int32_t, uint32_t); break;
    default: RANGE_LOOP(int64_t, uint64_t); break;
    }
    return MP_OK;
}

/* ---- table ------------------------------------------------------------------------------ */

const mp_kernel mp_kernels_fill[] = {
    {.opcode = MP_OP_ZEROS_LIKE, .min_inputs = 1, .max_inputs = 1, .n_outputs = 1,
     .reads_shapes_only = true, .infer = zeros_like_infer, .run = zeros_like_run},
    {.opcode = MP_OP_FILL, .min_inputs = 2, .max_inputs = 2, .n_outputs = 1, .infer = fill_infer,
     .run = fill_run},
    {.opcode = MP_OP_RANGE, .min_inputs = 3, .max_inputs = 3, .n_outputs = 1,
     .infer = range_infer, .run = range_run},
    {.opcode = -1},
};
