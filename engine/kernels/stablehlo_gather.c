/* Kernels: STABLEHLO_GATHER and STABLEHLO_SCATTER, in plain C after the StableHLO spec's gather
 * and scatter (the forms TensorFlow Lite's schema carries: no batching dimensions) and
 * TensorFlow Lite's stablehlo_gather.cc / stablehlo_scatter.cc.
 *
 * Both read start indices (int32 or int64) whose dimension index_vector_dim holds an index
 * vector (index_vector_dim equal to their rank: an implicit trailing dimension of size 1).
 * GATHER: operand and start_indices; options offset_dims, collapsed_slice_dims,
 * start_index_map, index_vector_dim, slice_sizes. The output has the indices' batch dimensions
 * (all but index_vector_dim) at the positions not in offset_dims, and the slice's dimensions
 * that are not collapsed (each of size 1) at offset_dims. Each start index vector is placed
 * into the operand's dimensions by start_index_map and clamped to [0, dim - slice_size].
 * SCATTER: operand, scatter_indices and updates (one of each); options update_window_dims,
 * inserted_window_dims, scatter_dims_to_operand_dims, index_vector_dim; the output is the
 * operand with every update element combined into the element it lands on by the update
 * computation (the body subgraph, found by the reader: ADD, MUL, MAXIMUM, MINIMUM, AND, OR, or
 * the update itself), in the updates' order; an element that lands outside the operand is
 * skipped (the spec's, not an error). Any dtype of a fixed size for GATHER and a replacing
 * SCATTER; the computing ones take mp_shlo_binary's. */
#include "engine/kernels/stablehlo.h"

#include <stdint.h>
#include <string.h>

#include "engine/kernels/movement.h"

#define SHAPE_STR(t, buf) mp_shape_str((t)->rank, (t)->dims, (buf), sizeof(buf))

/* A dimension list of the options: each value in [0, limit), no repeats (`sorted`: ascending,
 * as the spec asks of offset_dims, collapsed_slice_dims, update_window_dims and
 * inserted_window_dims). */
static mp_status check_dims(mp_node *n, const mp_shlo_list *l, int64_t limit, bool sorted, const char *what)
{
    for (int32_t k = 0; k < l->n; k++) {
        if (l->v[k] < 0 || l->v[k] >= limit)
            return mp_node_fail(n, MP_ERR_FORMAT, "%s value %lld is not a dimension (0 to %lld)",
                                what, (long long)l->v[k], (long long)limit - 1);
        for (int32_t j = 0; j < k; j++)
            if (sorted ? l->v[j] >= l->v[k] : l->v[j] == l->v[k])
                return mp_node_fail(n, MP_ERR_FORMAT, "%s must be %s (%lld after %lld)", what,
                                    sorted ? "ascending, without repeats" : "without repeats",
                                    (long long)l->v[k], (long long)l->v[j]);
    }
    return MP_OK;
}

static bool in_list(const mp_shlo_list *l, int64_t v)
{
    for (int32_t k = 0; k < l->n; k++)
        if (l->v[k] == v)
            return true;
    return false;
}

/* The indices tensor idx (input 1): int32 / int64; index_vector_dim in [0, rank]; its index
 * vectors `want` long. *vec_len gets that length (1 when the dimension is implicit). */
static mp_status check_indices(mp_node *n, int64_t ivd, int32_t want, const char *what)
{
    const mp_tensor *idx = n->in[1];
    char b[96];
    if (!mp_dtype_is_index(idx->dtype))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "%s '%s' is %s, not int32 or int64", what, mp_tname(idx),
                            mp_dtype_name(idx->dtype));
    if (ivd < 0 || ivd > idx->rank)
        return mp_node_fail(n, MP_ERR_FORMAT, "index_vector_dim %lld is not in 0..%d ('%s' is %s)",
                            (long long)ivd, idx->rank, mp_tname(idx), SHAPE_STR(idx, b));
    const int32_t len = ivd == idx->rank ? 1 : idx->dims[ivd];
    if (len != want)
        return mp_node_fail(n, MP_ERR_FORMAT, "the index vectors of '%s' %s have %d entries; the operator maps %d",
                            mp_tname(idx), SHAPE_STR(idx, b), len, want);
    return MP_OK;
}

/* Entry j of the index vector at batch position bi (the indices' dimensions without
 * index_vector_dim, in order). */
static int64_t index_entry(const mp_tensor *idx, int64_t ivd, const int32_t *bi, int32_t j)
{
    size_t at = 0;
    for (int32_t d = 0, b = 0; d < idx->rank; d++) {
        const int32_t v = d == ivd ? j : bi[b++];
        at = at * (size_t)idx->dims[d] + (size_t)v;
    }
    return mp_tensor_index_at(idx, at);
}

/* ---- GATHER ----------------------------------------------------------------------------- */

static mp_status gather_check(mp_node *n, int32_t *rank, int32_t *dims)
{
    const mp_shlo_options *s = mp_shlo_opts(n);
    const mp_tensor *op = n->in[0], *idx = n->in[1];
    mp_status st = mp_node_check_io(n, 2, 2, 0);
    if (st == MP_OK)
        st = mp_node_check_same_dtype(n, op, n->out[0]);
    if (st == MP_OK)
        st = check_indices(n, s->index_vector_dim, s->c.n, "start_indices");
    if (st != MP_OK)
        return st;
    const int32_t batch = idx->rank - (s->index_vector_dim < idx->rank ? 1 : 0);
    const int32_t out_rank = batch + s->a.n;
    if (s->d.n != op->rank)
        return mp_node_fail(n, MP_ERR_FORMAT, "slice_sizes has %d values; operand '%s' has %d dimensions",
                            (int)s->d.n, mp_tname(op), op->rank);
    if (out_rank > MP_MAX_RANK || s->a.n + s->b.n != op->rank)
        return mp_node_fail(n, MP_ERR_FORMAT, "%d offset_dims and %d collapsed_slice_dims do not cover the %d "
                            "dimensions of operand '%s' (or make an output above rank %d)",
                            (int)s->a.n, (int)s->b.n, op->rank, mp_tname(op), MP_MAX_RANK);
    st = check_dims(n, &s->a, out_rank, true, "offset_dims");
    if (st == MP_OK)
        st = check_dims(n, &s->b, op->rank, true, "collapsed_slice_dims");
    if (st == MP_OK)
        st = check_dims(n, &s->c, op->rank, false, "start_index_map");
    if (st != MP_OK)
        return st;
    for (int32_t d = 0; d < op->rank; d++)
        if (s->d.v[d] < 0 || s->d.v[d] > op->dims[d] || (in_list(&s->b, d) && s->d.v[d] != 1))
            return mp_node_fail(n, MP_ERR_FORMAT, "slice size %lld of dimension %d does not fit '%s' (%d)%s",
                                (long long)s->d.v[d], (int)d, mp_tname(op), op->dims[d],
                                in_list(&s->b, d) ? " or is collapsed and not 1" : "");
    /* output: batch dimensions where offset_dims are not, slice dimensions at offset_dims */
    for (int32_t d = 0, b = 0, o = 0; d < out_rank; d++) {
        if (in_list(&s->a, d)) {
            while (in_list(&s->b, o))
                o++;
            dims[d] = (int32_t)s->d.v[o++];
        } else {
            if (b == s->index_vector_dim)
                b++;
            dims[d] = idx->dims[b++];
        }
    }
    *rank = out_rank;
    return MP_OK;
}

static mp_status gather_infer(mp_node *n)
{
    int32_t rank = 0, dims[MP_MAX_RANK];
    mp_status st = gather_check(n, &rank, dims);
    return st == MP_OK ? mp_node_set_output_shape(n, rank, dims) : st;
}

static mp_status gather_run(mp_node *n)
{
    const mp_shlo_options *s = mp_shlo_opts(n);
    const mp_tensor *op = n->in[0], *idx = n->in[1];
    mp_tensor *out = n->out[0];
    const size_t es = mp_dtype_size(op->dtype), total = mp_tensor_elements(out);
    const uint8_t *src = op->data;
    uint8_t *o = out->data;
    int32_t ri[MP_MAX_RANK] = {0};
    for (size_t k = 0; k < total; k++, mp_index_next(ri, out->dims, out->rank)) {
        int32_t bi[MP_MAX_RANK], nb = 0;
        int64_t full[MP_MAX_RANK] = {0};
        for (int32_t d = 0; d < out->rank; d++)
            if (!in_list(&s->a, d))
                bi[nb++] = ri[d];
        for (int32_t j = 0; j < s->c.n; j++) { /* the start, clamped so the slice fits */
            const int64_t dim = s->c.v[j], hi = op->dims[dim] - s->d.v[dim];
            int64_t v = index_entry(idx, s->index_vector_dim, bi, j);
            full[dim] = v < 0 ? 0 : v > hi ? hi : v;
        }
        size_t at = 0;
        for (int32_t d = 0, off = 0; d < op->rank; d++) {
            int64_t p = full[d];
            if (!in_list(&s->b, d)) { /* the next offset dimension of the output */
                while (off < out->rank && !in_list(&s->a, off))
                    off++;
                p += ri[off++];
            }
            at = at * (size_t)op->dims[d] + (size_t)p;
        }
        memcpy(o + k * es, src + at * es, es);
    }
    return MP_OK;
}

/* ---- SCATTER ---------------------------------------------------------------------------- */

static mp_status scatter_infer(mp_node *n)
{
    const mp_shlo_options *s = mp_shlo_opts(n);
    mp_status st = mp_node_check_io(n, 3, 3, 0);
    if (st == MP_OK)
        st = mp_node_check_same_dtype(n, n->in[0], n->out[0]);
    if (st == MP_OK)
        st = check_indices(n, s->index_vector_dim, s->c.n, "scatter_indices");
    if (st != MP_OK)
        return st;
    const mp_tensor *op = n->in[0], *idx = n->in[1], *up = n->in[2];
    char b1[96], b2[96];
    if (up->dtype != op->dtype)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "updates '%s' are %s; operand '%s' is %s", mp_tname(up),
                            mp_dtype_name(up->dtype), mp_tname(op), mp_dtype_name(op->dtype));
    if (s->body_op >= 0 && !mp_shlo_binary(s->body_op, op->dtype))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "dtype %s of '%s' is not supported by its update computation %s",
                            mp_dtype_name(op->dtype), mp_tname(op), mp_op_name(s->body_op));
    const int32_t batch = idx->rank - (s->index_vector_dim < idx->rank ? 1 : 0);
    if (s->a.n + s->b.n != op->rank || up->rank != batch + s->a.n)
        return mp_node_fail(n, MP_ERR_FORMAT, "%d update_window_dims and %d inserted_window_dims do not fit operand '%s' %s "
                            "and updates '%s' %s", (int)s->a.n, (int)s->b.n, mp_tname(op), SHAPE_STR(op, b1),
                            mp_tname(up), SHAPE_STR(up, b2));
    st = check_dims(n, &s->a, up->rank, true, "update_window_dims");
    if (st == MP_OK)
        st = check_dims(n, &s->b, op->rank, true, "inserted_window_dims");
    if (st == MP_OK)
        st = check_dims(n, &s->c, op->rank, false, "scatter_dims_to_operand_dims");
    if (st != MP_OK)
        return st;
    /* updates: the scatter dimensions are the indices' batch dimensions; each window
     * dimension at most the operand dimension it lands in */
    for (int32_t d = 0, b = 0, w = 0; d < up->rank; d++) {
        if (in_list(&s->a, d)) {
            while (in_list(&s->b, w))
                w++;
            if (up->dims[d] > op->dims[w])
                return mp_node_fail(n, MP_ERR_SHAPE, "updates '%s' %s: window dimension %d is larger than the operand's %d",
                                    mp_tname(up), SHAPE_STR(up, b1), (int)d, (int)w);
            w++;
        } else {
            if (b == s->index_vector_dim)
                b++;
            if (up->dims[d] != idx->dims[b])
                return mp_node_fail(n, MP_ERR_SHAPE, "updates '%s' %s do not match the batch dimensions of '%s' %s",
                                    mp_tname(up), SHAPE_STR(up, b1), mp_tname(idx), SHAPE_STR(idx, b2));
            b++;
        }
    }
    return mp_node_set_output_shape(n, op->rank, op->dims);
}

static mp_status scatter_run(mp_node *n)
{
    const mp_shlo_options *s = mp_shlo_opts(n);
    const mp_tensor *op = n->in[0], *idx = n->in[1], *up = n->in[2];
    mp_tensor *out = n->out[0];
    const size_t es = mp_dtype_size(op->dtype), total = mp_tensor_elements(up);
    const mp_shlo_fn f = s->body_op >= 0 ? mp_shlo_binary(s->body_op, op->dtype) : NULL;
    const uint8_t *u = up->data;
    uint8_t *o = out->data;
    if (out->data != op->data && out->bytes)
        memcpy(out->data, op->data, out->bytes);
    int32_t ui[MP_MAX_RANK] = {0};
    for (size_t k = 0; k < total; k++, mp_index_next(ui, up->dims, up->rank)) {
        int32_t bi[MP_MAX_RANK], nb = 0;
        int64_t full[MP_MAX_RANK] = {0};
        for (int32_t d = 0; d < up->rank; d++)
            if (!in_list(&s->a, d))
                bi[nb++] = ui[d];
        for (int32_t j = 0; j < s->c.n; j++)
            full[s->c.v[j]] = index_entry(idx, s->index_vector_dim, bi, j);
        size_t at = 0;
        bool inside = true;
        for (int32_t d = 0, w = 0; d < op->rank && inside; d++) {
            int64_t p = full[d];
            if (!in_list(&s->b, d)) { /* the next window dimension of the updates */
                while (w < up->rank && !in_list(&s->a, w))
                    w++;
                p += ui[w++];
            }
            inside = p >= 0 && p < op->dims[d];
            at = at * (size_t)op->dims[d] + (size_t)p;
        }
        if (!inside)
            continue;
        if (f)
            f(o + at * es, u + k * es, o + at * es, 1);
        else
            memcpy(o + at * es, u + k * es, es);
    }
    return MP_OK;
}

const mp_kernel mp_kernels_stablehlo_gather[] = {
    {.opcode = MP_OP_STABLEHLO_GATHER, .min_inputs = 2, .max_inputs = 2, .n_outputs = 1,
     .infer = gather_infer, .run = gather_run},
    {.opcode = MP_OP_STABLEHLO_SCATTER, .min_inputs = 3, .max_inputs = 3, .n_outputs = 1,
     .infer = scatter_infer, .run = scatter_run},
    {.opcode = -1},
};
