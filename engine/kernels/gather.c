/* Kernels: GATHER and GATHER_ND, as TensorFlow Lite's reference kernels (gather.cc,
 * gather_nd.cc). Both only move elements, so any dtype with a fixed element size works
 * (float32, int8, uint8, int16, int32, int64, bool); quantized params and output must have
 * the same scale and zero point, as TensorFlow Lite requires. Indices are int32 or int64, or
 * int16 (gather.cc and gather_nd.cc take them since versions 6 and 4).
 * GATHER also takes a rank-1 string params (gather.cc's GatherStrings), GATHER_ND string
 * params of any rank (gather_nd.cc's GatherNdString, version 2): the output holds the picked
 * strings, its size known only from their lengths, so the node is deferred to the run
 * (mp_node_in_run), where the params' buffer and the indices are checked, then the strings
 * written (strings.h).
 *
 * GATHER (params, indices; options axis, batch_dims): negative axis counts from the end of
 * params, negative batch_dims from the end of indices; batch_dims <= axis, and the first
 * batch_dims dimensions of params and indices are equal. Output shape
 *   params[:axis] + indices[batch_dims:] + params[axis+1:]
 * read as [batch][outer][coords][inner]: out[b][o][c] = params[b][o][indices[b][c]].
 * GATHER_ND (params, indices [..., nd]): out[i] = params[indices[i, 0..nd-1]], output shape
 * indices[:-1] + params[nd:].
 *
 * The output shape depends on the shapes only, never on index values, so infer never defers
 * on the indices' values. Every index is checked at run time: one outside its dimension is an
 * error naming the operator, the index and where it is, never a read out of bounds (newer
 * TensorFlow Lite releases refuse them too; older ones read out of bounds). */
#include "engine/kernels/kernel.h"
#include "engine/kernels/quant_layout.h"
#include "engine/kernels/strings.h"
#include "engine/session_resources.h"

#include <string.h>

#define SHAPE_STR(t, buf) mp_shape_str((t)->rank, (t)->dims, (buf), sizeof(buf))

/* The checks both gathers share: two inputs, one output of the params' dtype and quantization,
 * int32 / int64 indices, or int16 (TensorFlow Lite's GATHER version 6, GATHER_ND version 4). */
static mp_status gather_check_io(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 2, 2, 0);
    if (st != MP_OK)
        return st;
    const mp_tensor *p = n->in[0], *ix = n->in[1];
    if (p->dtype == MP_DT_STRING) {
        if (n->out[0]->dtype != MP_DT_STRING)
            return mp_node_fail(n, MP_ERR_UNSUPPORTED, "output '%s' is %s but params '%s' are "
                                "string", mp_tname(n->out[0]), mp_dtype_name(n->out[0]->dtype),
                                mp_tname(p));
        if (n->opcode == MP_OP_GATHER && p->rank != 1)
            return mp_node_fail(n, MP_ERR_UNSUPPORTED, "string params '%s' have rank %d; "
                                "TensorFlow Lite gathers strings of rank 1 only", mp_tname(p),
                                p->rank);
    } else if ((st = mp_node_check_same_dtype(n, p, n->out[0])) != MP_OK ||
               (st = mp_node_check_same_qparams(n, p, n->out[0])) != MP_OK) {
        return st;
    }
    if (!mp_dtype_is_index(ix->dtype) && ix->dtype != MP_DT_INT16)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "indices '%s' are %s (supported: i16, i32, i64)",
                            mp_tname(ix), mp_dtype_name(ix->dtype));
    return MP_OK;
}

/* ---- GATHER ----------------------------------------------------------------------------- */

typedef struct gather_geom {
    int32_t axis, batch_dims;
    size_t batch, outer, axis_size, coords, inner; /* inner in bytes */
} gather_geom;

static mp_status gather_geometry(mp_node *n, gather_geom *g, int32_t *rank, int32_t *dims)
{
    const mp_tensor *p = n->in[0], *ix = n->in[1];
    char b1[96], b2[96];
    int32_t axis = n->opt->axis, bd = n->opt->batch_dims;
    if (axis < -p->rank || axis >= p->rank)
        return mp_node_fail(n, MP_ERR_SHAPE, "axis %d is out of range for params '%s' %s",
                            n->opt->axis, mp_tname(p), SHAPE_STR(p, b1));
    if (axis < 0)
        axis += p->rank;
    if (bd < -ix->rank || bd > ix->rank)
        return mp_node_fail(n, MP_ERR_SHAPE, "batch_dims %d is out of range for indices '%s' %s",
                            n->opt->batch_dims, mp_tname(ix), SHAPE_STR(ix, b1));
    if (bd < 0)
        bd += ix->rank;
    if (bd > axis)
        return mp_node_fail(n, MP_ERR_SHAPE, "batch_dims %d must not exceed axis %d", bd, axis);
    for (int32_t i = 0; i < bd; i++)
        if (p->dims[i] != ix->dims[i])
            return mp_node_fail(n, MP_ERR_SHAPE,
                                "params '%s' %s and indices '%s' %s differ in batch dimension %d",
                                mp_tname(p), SHAPE_STR(p, b1), mp_tname(ix), SHAPE_STR(ix, b2), i);
    int32_t r = p->rank - 1 + ix->rank - bd;
    if (r > MP_MAX_RANK)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "output rank %d exceeds %d", r, MP_MAX_RANK);
    g->axis = axis;
    g->batch_dims = bd;
    g->batch = g->outer = g->coords = 1;
    g->inner = mp_dtype_size(p->dtype);
    g->axis_size = (size_t)p->dims[axis];
    *rank = 0;
    for (int32_t i = 0; i < axis; i++) {
        dims[(*rank)++] = p->dims[i];
        if (i < bd)
            g->batch *= (size_t)p->dims[i];
        else
            g->outer *= (size_t)p->dims[i];
    }
    for (int32_t i = bd; i < ix->rank; i++) {
        dims[(*rank)++] = ix->dims[i];
        g->coords *= (size_t)ix->dims[i];
    }
    for (int32_t i = axis + 1; i < p->rank; i++) {
        dims[(*rank)++] = p->dims[i];
        g->inner *= (size_t)p->dims[i];
    }
    return MP_OK;
}

/* Every index within the gathered axis; else the error naming the first one outside. */
static mp_status gather_check_indices(mp_node *n, const gather_geom *g)
{
    const mp_tensor *p = n->in[0], *ix = n->in[1];
    char b1[96];
    size_t count = mp_tensor_elements(ix);
    for (size_t i = 0; i < count; i++) {
        int64_t v = mp_tensor_index_at(ix, i);
        if (v < 0 || (uint64_t)v >= g->axis_size)
            return mp_node_fail(n, MP_ERR_SHAPE,
                                "index %lld (element %zu of indices '%s') is out of range [0, %zu) "
                                "for axis %d of params '%s' %s",
                                (long long)v, i, mp_tname(ix), g->axis_size, g->axis, mp_tname(p),
                                SHAPE_STR(p, b1));
    }
    return MP_OK;
}

/* String params, the output's shape set: its bytes, from the picked strings' lengths (while
 * running, the params' buffer and the indices checked). */
static mp_status gather_string_bytes(mp_node *n, const gather_geom *g)
{
    const mp_tensor *p = n->in[0], *ix = n->in[1];
    if (!mp_node_in_run(n) || !p->data || !ix->data)
        return MP_ERR_DEFERRED;
    mp_status st = mp_str_check(n, p);
    if (st == MP_OK)
        st = gather_check_indices(n, g);
    if (st != MP_OK)
        return st;
    size_t chars = 0, len, count = mp_tensor_elements(ix);
    for (size_t i = 0; i < count && chars <= (size_t)INT32_MAX; i++) {
        mp_str_at(p, (int32_t)mp_tensor_index_at(ix, i), &len);
        chars += len;
    }
    if (chars > (size_t)INT32_MAX || !mp_str_bytes(count, chars, &n->out[0]->bytes))
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' would exceed 2 GiB of strings",
                            mp_tname(n->out[0]));
    return MP_OK;
}

static mp_status gather_infer(mp_node *n)
{
    mp_status st = gather_check_io(n);
    if (st != MP_OK)
        return st;
    gather_geom g;
    int32_t rank, dims[MP_MAX_RANK];
    if ((st = gather_geometry(n, &g, &rank, dims)) != MP_OK)
        return st;
    if ((st = mp_node_set_output_shape(n, rank, dims)) != MP_OK)
        return st;
    return n->in[0]->dtype == MP_DT_STRING ? gather_string_bytes(n, &g) : MP_OK;
}

/* String params: the picked strings written in the indices' order (infer sized them). */
static mp_status gather_run_strings(mp_node *n)
{
    const mp_tensor *p = n->in[0], *ix = n->in[1];
    mp_tensor *out = n->out[0];
    const size_t count = mp_tensor_elements(ix);
    mp_str_writer w;
    mp_str_begin(&w, out->data, out->bytes, (int32_t)count);
    for (size_t i = 0; i < count; i++) {
        size_t len;
        const char *str = mp_str_at(p, (int32_t)mp_tensor_index_at(ix, i), &len);
        if (!mp_str_append(&w, str, len) || !mp_str_next(&w))
            break;
    }
    if (!mp_str_done(&w))
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' does not hold the gathered strings",
                            mp_tname(out));
    return MP_OK;
}

static mp_status gather_run(mp_node *n)
{
    const mp_tensor *p = n->in[0], *ix = n->in[1];
    mp_tensor *out = n->out[0];
    gather_geom g;
    int32_t rank, dims[MP_MAX_RANK];
    mp_status st = gather_geometry(n, &g, &rank, dims);
    if (st != MP_OK)
        return st;
    char b1[96];
    if (out->rank != rank || memcmp(out->dims, dims, sizeof(int32_t) * (size_t)rank) != 0)
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' %s does not match the gather",
                            mp_tname(out), SHAPE_STR(out, b1));
    /* every index first: nothing is written when one is out of range */
    if ((st = gather_check_indices(n, &g)) != MP_OK)
        return st;
    if (p->dtype == MP_DT_STRING)
        return gather_run_strings(n);
    if (out->bytes == 0)
        return MP_OK;
    const uint8_t *src = p->data;
    uint8_t *dst = out->data;
    for (size_t b = 0; b < g.batch; b++)
        for (size_t o = 0; o < g.outer; o++) {
            const uint8_t *row = src + ((b * g.outer + o) * g.axis_size) * g.inner;
            for (size_t c = 0; c < g.coords; c++, dst += g.inner) {
                int64_t v = mp_tensor_index_at(ix, b * g.coords + c);
                memcpy(dst, row + (size_t)v * g.inner, g.inner);
            }
        }
    return MP_OK;
}

/* ---- GATHER_ND -------------------------------------------------------------------------- */

/* The index depth nd, the output shape, and the bytes of one gathered slice. */
static mp_status gather_nd_geometry(mp_node *n, int32_t *nd, int32_t *rank, int32_t *dims,
                                    size_t *slice)
{
    const mp_tensor *p = n->in[0], *ix = n->in[1];
    char b1[96], b2[96];
    if (ix->rank < 1)
        return mp_node_fail(n, MP_ERR_SHAPE, "indices '%s' must have rank 1 or more",
                            mp_tname(ix));
    *nd = ix->dims[ix->rank - 1];
    if (*nd > p->rank)
        return mp_node_fail(n, MP_ERR_SHAPE,
                            "indices '%s' %s index %d dimensions but params '%s' %s has %d",
                            mp_tname(ix), SHAPE_STR(ix, b1), *nd, mp_tname(p), SHAPE_STR(p, b2),
                            p->rank);
    int32_t r = ix->rank - 1 + p->rank - *nd;
    if (r > MP_MAX_RANK)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "output rank %d exceeds %d", r, MP_MAX_RANK);
    *rank = 0;
    *slice = mp_dtype_size(p->dtype);
    for (int32_t i = 0; i < ix->rank - 1; i++)
        dims[(*rank)++] = ix->dims[i];
    for (int32_t i = *nd; i < p->rank; i++) {
        dims[(*rank)++] = p->dims[i];
        *slice *= (size_t)p->dims[i];
    }
    return MP_OK;
}

/* The index tuples of indices [..., nd] (every dimension but the last). */
static size_t gather_nd_tuples(const mp_tensor *ix)
{
    size_t tuples = 1;
    for (int32_t d = 0; d < ix->rank - 1; d++)
        tuples *= (size_t)ix->dims[d];
    return tuples;
}

/* Every index of every tuple within its dimension of params; else the error naming it. */
static mp_status gather_nd_check_indices(mp_node *n, int32_t nd)
{
    const mp_tensor *p = n->in[0], *ix = n->in[1];
    const size_t tuples = gather_nd_tuples(ix);
    char b1[96];
    for (size_t t = 0; t < tuples; t++)
        for (int32_t d = 0; d < nd; d++) {
            int64_t v = mp_tensor_index_at(ix, t * (size_t)nd + (size_t)d);
            if (v < 0 || v >= p->dims[d])
                return mp_node_fail(n, MP_ERR_SHAPE,
                                    "index %lld (tuple %zu, position %d of indices '%s') is out "
                                    "of range [0, %d) for params '%s' %s",
                                    (long long)v, t, d, mp_tname(ix), p->dims[d], mp_tname(p),
                                    SHAPE_STR(p, b1));
        }
    return MP_OK;
}

/* String params, indices checked: the strings of each tuple's slice, in order, their bytes
 * added to *chars, or, with w, written. */
static void gather_nd_walk_strings(const mp_node *n, int32_t nd, mp_str_writer *w,
                                   size_t *chars)
{
    const mp_tensor *p = n->in[0], *ix = n->in[1];
    size_t slice = 1, stride[MP_MAX_RANK];
    for (int32_t d = nd; d < p->rank; d++)
        slice *= (size_t)p->dims[d];
    size_t s = slice;
    for (int32_t d = nd - 1; d >= 0; d--) {
        stride[d] = s;
        s *= (size_t)p->dims[d];
    }
    const size_t tuples = gather_nd_tuples(ix);
    for (size_t t = 0; t < tuples; t++) {
        size_t at = 0, len;
        for (int32_t d = 0; d < nd; d++)
            at += (size_t)mp_tensor_index_at(ix, t * (size_t)nd + (size_t)d) * stride[d];
        for (size_t j = 0; j < slice; j++) {
            const char *str = mp_str_at(p, (int32_t)(at + j), &len);
            if (!w)
                *chars += len;
            else if (!mp_str_append(w, str, len) || !mp_str_next(w))
                return;
        }
    }
}

static mp_status gather_nd_infer(mp_node *n)
{
    mp_status st = gather_check_io(n);
    if (st != MP_OK)
        return st;
    int32_t nd, rank, dims[MP_MAX_RANK];
    size_t slice;
    if ((st = gather_nd_geometry(n, &nd, &rank, dims, &slice)) != MP_OK)
        return st;
    if ((st = mp_node_set_output_shape(n, rank, dims)) != MP_OK || n->in[0]->dtype != MP_DT_STRING)
        return st;
    /* string params: the output's bytes while running, the buffer and the indices checked */
    const mp_tensor *p = n->in[0], *ix = n->in[1];
    if (!mp_node_in_run(n) || !p->data || !ix->data)
        return MP_ERR_DEFERRED;
    if ((st = mp_str_check(n, p)) != MP_OK || (st = gather_nd_check_indices(n, nd)) != MP_OK)
        return st;
    size_t chars = 0; /* at most the elements' count times the params' bytes: in size_t */
    gather_nd_walk_strings(n, nd, NULL, &chars);
    if (chars > (size_t)INT32_MAX ||
        !mp_str_bytes(mp_tensor_elements(n->out[0]), chars, &n->out[0]->bytes))
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' would exceed 2 GiB of strings",
                            mp_tname(n->out[0]));
    return MP_OK;
}

static mp_status gather_nd_run(mp_node *n)
{
    const mp_tensor *p = n->in[0], *ix = n->in[1];
    mp_tensor *out = n->out[0];
    int32_t nd, rank, dims[MP_MAX_RANK];
    size_t slice;
    mp_status st = gather_nd_geometry(n, &nd, &rank, dims, &slice);
    if (st != MP_OK)
        return st;
    char b1[96];
    if (out->rank != rank || memcmp(out->dims, dims, sizeof(int32_t) * (size_t)rank) != 0)
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' %s does not match the gather",
                            mp_tname(out), SHAPE_STR(out, b1));
    if ((st = gather_nd_check_indices(n, nd)) != MP_OK)
        return st;
    if (p->dtype == MP_DT_STRING) {
        mp_str_writer w;
        mp_str_begin(&w, out->data, out->bytes, (int32_t)mp_tensor_elements(out));
        gather_nd_walk_strings(n, nd, &w, NULL);
        if (!mp_str_done(&w))
            return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' does not hold the gathered "
                                "strings", mp_tname(out));
        return MP_OK;
    }
    /* strides (in slices) of the indexed dimensions */
    size_t stride[MP_MAX_RANK], s = 1;
    for (int32_t d = nd - 1; d >= 0; d--) {
        stride[d] = s;
        s *= (size_t)p->dims[d];
    }
    const size_t tuples = gather_nd_tuples(ix);
    if (out->bytes == 0)
        return MP_OK;
    uint8_t *dst = out->data;
    for (size_t t = 0; t < tuples; t++, dst += slice) {
        size_t at = 0;
        for (int32_t d = 0; d < nd; d++)
            at += (size_t)mp_tensor_index_at(ix, t * (size_t)nd + (size_t)d) * stride[d];
        memcpy(dst, (const uint8_t *)p->data + at * slice, slice);
    }
    return MP_OK;
}

/* ---- table ------------------------------------------------------------------------------ */

const mp_kernel mp_kernels_gather[] = {
    {.opcode = MP_OP_GATHER, .min_inputs = 2, .max_inputs = 2, .n_outputs = 1,
     .infer = gather_infer, .run = gather_run},
    {.opcode = MP_OP_GATHER_ND, .min_inputs = 2, .max_inputs = 2, .n_outputs = 1,
     .infer = gather_nd_infer, .run = gather_nd_run},
    {.opcode = -1},
};
