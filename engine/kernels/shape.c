/* Kernels: shape operators (SHAPE, STRIDED_SLICE, SLICE, PACK). Dynamic-shape graphs compute
 * shapes at run time with these (e.g. SHAPE -> STRIDED_SLICE -> PACK -> arithmetic ->
 * paddings), so they are dtype-generic (bytes are moved, never interpreted) and cheap.
 *
 * STRIDED_SLICE follows TensorFlow Lite: begin / end / strides int32 vectors (int64 accepted),
 * begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask and the offset option
 * (end is then a size relative to begin). Masks and the ellipsis expand the sparse
 * specification into one (start, step, count) per input dimension, like NumPy's x[1:-1:2, ...,
 * None, 3]; indices are clamped, negative ones count from the end. SLICE (begin, size) is
 * the same copy with a plan of unit steps (see tfl_slice_plan).
 *
 * Quantized tensors move unchanged: STRIDED_SLICE takes the output's parameters as the
 * input's (TensorFlow Lite checks nothing either); SLICE and PACK require every input to have
 * the output's scale and zero point, as TensorFlow Lite does (it does not requantize).
 *
 * STRIDED_SLICE and SLICE also take string tensors (strided_slice.cc version 5, slice.cc
 * version 3): the output holds the selected strings in order, its size known from their
 * lengths only, so the node waits for the run (mp_node_in_run), where the input's buffer is
 * checked and the plan walked twice (the size, then the strings). */
#include "engine/kernels/kernel.h"
#include "engine/kernels/movement.h"
#include "engine/kernels/quant_layout.h"
#include "engine/kernels/strings.h"
#include "engine/session_resources.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ---- shared helpers -------------------------------------------------------------------- */

#define SHAPE_STR(t, buf) mp_shape_str((t)->rank, (t)->dims, (buf), sizeof(buf))

/* ---- SHAPE ------------------------------------------------------------------------------ */

static mp_status shape_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 1, 1, 0);
    if (st != MP_OK)
        return st;
    mp_tensor *out = n->out[0];
    /* out_type chooses int32 or int64; the output tensor's dtype says which one the model
     * was built with, so that is what we write. */
    if (out->dtype != MP_DT_INT32 && out->dtype != MP_DT_INT64)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "output '%s' must be int32 or int64, is %s",
                            mp_tname(out), mp_dtype_name(out->dtype));
    int32_t dims[1] = {n->in[0]->rank};
    if (!mp_tensor_set_shape(out, 1, dims))
        return mp_node_fail(n, MP_ERR_SHAPE, "invalid output shape for '%s'", mp_tname(out));
    return MP_OK;
}

/* Reads only the input's shape, never its data: the session may run it at prepare. */
static mp_status shape_run(mp_node *n)
{
    const mp_tensor *in = n->in[0];
    mp_tensor *out = n->out[0];
    if (out->rank != 1 || out->dims[0] != in->rank)
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' must have %d elements", mp_tname(out),
                            in->rank);
    for (int32_t i = 0; i < in->rank; i++) {
        if (out->dtype == MP_DT_INT64)
            ((int64_t *)out->data)[i] = in->dims[i];
        else
            ((int32_t *)out->data)[i] = in->dims[i];
    }
    return MP_OK;
}

/* ---- STRIDED_SLICE ---------------------------------------------------------------------- */

/* The dense form of a slice: for every input dimension, the first index, the step and the
 * number of elements taken; plus the output shape (without shrunk axes, with new axes). */
typedef struct slice_plan {
    int32_t rank;
    int64_t start[MP_MAX_RANK], step[MP_MAX_RANK], count[MP_MAX_RANK];
    int32_t out_rank;
    int32_t out_dims[MP_MAX_RANK];
} slice_plan;

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : (v > hi ? hi : v);
}

/* ceil(a / b) for b != 0, 0 when negative (an empty slice). */
static int64_t slice_len(int64_t a, int64_t b)
{
    if (a == 0 || (a < 0) != (b < 0))
        return 0;
    if (a < 0) {
        a = -a;
        b = -b;
    }
    return (a + b - 1) / b;
}

static mp_status slice_check(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 4, 4, 0);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0];
    if ((st = mp_node_check_same_dtype_or_string(n, in, n->out[0])) != MP_OK)
        return st;
    char b1[96], b2[96];
    for (int32_t i = 1; i < 4; i++) {
        const mp_tensor *t = n->in[i];
        if (!mp_dtype_is_index(t->dtype) || t->rank != 1)
            return mp_node_fail(n, MP_ERR_SHAPE, "%s '%s' must be an int32 vector, is %s %s",
                                i == 1 ? "begin" : i == 2 ? "end" : "strides", mp_tname(t),
                                mp_dtype_name(t->dtype), SHAPE_STR(t, b1));
        if (t->dims[0] != n->in[1]->dims[0])
            return mp_node_fail(n, MP_ERR_SHAPE, "begin '%s' %s and '%s' %s differ in length",
                                mp_tname(n->in[1]), SHAPE_STR(n->in[1], b1), mp_tname(t),
                                SHAPE_STR(t, b2));
    }
    if (n->in[1]->dims[0] > 32)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "slice of %d indices (masks hold 32)",
                            n->in[1]->dims[0]);
    return MP_OK;
}

/* Expand the sparse specification (the begin/end/strides entries and the masks) against the
 * input shape. have_begin = false computes the shape only, which with the offset option
 * does not depend on begin. */
static mp_status slice_build(mp_node *n, bool have_begin, slice_plan *p)
{
    const mp_tensor *in = n->in[0], *tb = n->in[1], *te = n->in[2], *ts = n->in[3];
    const mp_op_options *o = n->opt;
    int32_t len = tb->dims[0], rank = in->rank;
    uint32_t low = len >= 32 ? 0xffffffffu : ((1u << len) - 1);
    uint32_t ell = (uint32_t)o->ellipsis_mask & low, nax = (uint32_t)o->new_axis_mask & low;
    uint32_t shr = (uint32_t)o->shrink_axis_mask & low, bm = (uint32_t)o->begin_mask & low;
    uint32_t em = (uint32_t)o->end_mask & low;
    char b[96];
    if (ell & (ell - 1))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "ellipsis_mask 0x%x has several ellipses",
                            (unsigned)o->ellipsis_mask);
    /* Without an ellipsis, dimensions past the given indices are taken whole: that is an
     * implicit ellipsis after the last entry. */
    int32_t ell_pos = len, sparse = len + 1;
    if (ell) {
        ell_pos = __builtin_ctz(ell);
        sparse = len;
    }
    int32_t add_after = 0;
    for (int32_t i = ell_pos + 1; i < len; i++)
        add_after += (nax >> i) & 1;

    p->rank = rank;
    p->out_rank = 0;
    int32_t full = 0; /* next input dimension */
    for (int32_t i = 0; i < sparse; i++) {
        if (i == ell_pos) {
            /* the ellipsis covers the input dimensions the entries after it do not use */
            int32_t next = rank - (sparse - i) + 1 + add_after;
            if (next > rank)
                next = rank;
            for (; full < next; full++) {
                p->start[full] = 0;
                p->step[full] = 1;
                p->count[full] = in->dims[full];
                if (p->out_rank >= MP_MAX_RANK)
                    goto too_many;
                p->out_dims[p->out_rank++] = in->dims[full];
            }
            continue;
        }
        if ((nax >> i) & 1) { /* a new axis of size 1 in the output, no input dimension */
            if (p->out_rank >= MP_MAX_RANK)
                goto too_many;
            p->out_dims[p->out_rank++] = 1;
            continue;
        }
        if (full >= rank)
            return mp_node_fail(n, MP_ERR_SHAPE, "slice has more indices than input '%s' %s has "
                                "dimensions", mp_tname(in), SHAPE_STR(in, b));
        int64_t size = in->dims[full];
        int64_t s = mp_tensor_index_at(ts, (size_t)i);
        if (s == 0)
            return mp_node_fail(n, MP_ERR_SHAPE, "stride %d of '%s' is zero", i, mp_tname(ts));
        int64_t e = mp_tensor_index_at(te, (size_t)i);
        int64_t start = 0, count;
        if (have_begin) {
            int64_t bv = mp_tensor_index_at(tb, (size_t)i);
            if ((bm >> i) & 1)
                start = s > 0 ? 0 : size - 1;
            else if ((shr >> i) & 1)
                start = bv < 0 ? bv + size : bv;
            else
                start = s > 0 ? clamp64(bv < 0 ? bv + size : bv, 0, size)
                              : clamp64(bv < 0 ? bv + size : bv, -1, size - 1);
        }
        if ((shr >> i) & 1) {
            /* x[i]: exactly one element, which must exist (TensorFlow checks it; TFLite
             * would read out of bounds) */
            if (have_begin && (start < 0 || start >= size))
                return mp_node_fail(n, MP_ERR_SHAPE, "index %lld out of range for dimension %d "
                                    "of '%s' %s", (long long)mp_tensor_index_at(tb, (size_t)i), full,
                                    mp_tname(in), SHAPE_STR(in, b));
            s = 1;
            count = 1;
        } else if (o->offset) {
            /* end is the extent from begin; TFLite sizes the output from it alone */
            count = slice_len(e, s);
        } else {
            int64_t stop;
            if ((em >> i) & 1)
                stop = s > 0 ? size : -1;
            else
                stop = s > 0 ? clamp64(e < 0 ? e + size : e, 0, size)
                             : clamp64(e < 0 ? e + size : e, -1, size - 1);
            count = slice_len(stop - start, s);
        }
        if (count > INT32_MAX)
            return mp_node_fail(n, MP_ERR_SHAPE, "slice of '%s' too large", mp_tname(in));
        p->start[full] = start;
        p->step[full] = s;
        p->count[full] = count;
        if (!((shr >> i) & 1)) {
            if (p->out_rank >= MP_MAX_RANK)
                goto too_many;
            p->out_dims[p->out_rank++] = (int32_t)count;
        }
        full++;
    }
    return MP_OK;
too_many:
    return mp_node_fail(n, MP_ERR_UNSUPPORTED, "slice output of '%s' exceeds rank %d", mp_tname(in),
                        MP_MAX_RANK);
}

static mp_status slice_string_bytes(mp_node *n, const slice_plan *p);

static mp_status slice_infer(mp_node *n)
{
    mp_status st = slice_check(n);
    if (st != MP_OK)
        return st;
    const mp_tensor *tb = n->in[1], *te = n->in[2], *ts = n->in[3];
    bool ends = te->value_known && ts->value_known && te->data && ts->data;
    bool begins = tb->value_known && tb->data;
    if (!ends || (!begins && !n->opt->offset))
        return MP_ERR_DEFERRED;
    slice_plan p;
    if ((st = slice_build(n, begins, &p)) != MP_OK)
        return st;
    if ((st = mp_node_set_output_shape(n, p.out_rank, p.out_dims)) != MP_OK)
        return st;
    if (n->in[0]->dtype != MP_DT_STRING)
        return MP_OK;
    if (!begins) /* the offset option: the strings need the begin */
        return MP_ERR_DEFERRED;
    return slice_string_bytes(n, &p);
}

/* Every index a dense slice plan reads exists in the input (with offset, the shape was made
 * without begin); *total the elements it selects. */
static mp_status slice_check_reads(mp_node *n, const slice_plan *p, size_t *total)
{
    const mp_tensor *in = n->in[0];
    char b1[96];
    *total = 1;
    for (int32_t d = 0; d < p->rank; d++) {
        *total *= (size_t)p->count[d];
        int64_t last = p->start[d] + (p->count[d] - 1) * p->step[d];
        if (p->count[d] > 0 && (p->start[d] < 0 || p->start[d] >= in->dims[d] || last < 0 ||
                                last >= in->dims[d]))
            return mp_node_fail(n, MP_ERR_SHAPE, "slice of dimension %d of '%s' %s is out of "
                                "range", d, mp_tname(in), SHAPE_STR(in, b1));
    }
    return MP_OK;
}

/* The strings a checked dense slice plan selects from a checked string input, in order: their
 * bytes added to *chars, or, with w, written. */
static void slice_walk_strings(const mp_tensor *in, const slice_plan *p, size_t total,
                               mp_str_writer *w, size_t *chars)
{
    size_t stride[MP_MAX_RANK];
    size_t el = 1;
    for (int32_t d = p->rank - 1; d >= 0; d--) {
        stride[d] = el;
        el *= (size_t)in->dims[d];
    }
    int64_t idx[MP_MAX_RANK] = {0};
    for (size_t e = 0; e < total; e++) {
        size_t at = 0, len;
        for (int32_t d = 0; d < p->rank; d++)
            at += (size_t)(p->start[d] + idx[d] * p->step[d]) * stride[d];
        const char *str = mp_str_at(in, (int32_t)at, &len);
        if (w) {
            if (!mp_str_append(w, str, len) || !mp_str_next(w))
                return;
        } else {
            *chars += len;
        }
        for (int32_t d = p->rank - 1; d >= 0; d--) { /* odometer, last dimension fastest */
            if (++idx[d] < p->count[d])
                break;
            idx[d] = 0;
        }
    }
}

/* A string input, the output's shape set from plan p: the output's bytes, while running. */
static mp_status slice_string_bytes(mp_node *n, const slice_plan *p)
{
    const mp_tensor *in = n->in[0];
    if (!mp_node_in_run(n) || !in->data)
        return MP_ERR_DEFERRED;
    size_t total, chars = 0;
    mp_status st = mp_str_check(n, in);
    if (st == MP_OK)
        st = slice_check_reads(n, p, &total);
    if (st != MP_OK)
        return st;
    slice_walk_strings(in, p, total, NULL, &chars); /* each below the input's bytes */
    if (chars > (size_t)INT32_MAX || !mp_str_bytes(total, chars, &n->out[0]->bytes))
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' would exceed 2 GiB of strings",
                            mp_tname(n->out[0]));
    return MP_OK;
}

/* Copy the elements a dense slice plan selects into output 0 (STRIDED_SLICE and SLICE),
 * after checking every index read exists and the output has the plan's shape. */
static mp_status slice_copy(mp_node *n, const slice_plan *pp)
{
    const mp_tensor *in = n->in[0];
    mp_tensor *out = n->out[0];
    const slice_plan p = *pp;
    size_t total;
    char b1[96], b2[96];
    mp_status st = slice_check_reads(n, &p, &total);
    if (st != MP_OK)
        return st;
    if (total != mp_tensor_elements(out) || p.out_rank != out->rank ||
        memcmp(p.out_dims, out->dims, sizeof(int32_t) * (size_t)out->rank) != 0)
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' %s does not match the slice %s",
                            mp_tname(out), SHAPE_STR(out, b1),
                            mp_shape_str(p.out_rank, p.out_dims, b2, sizeof b2));
    if (in->dtype == MP_DT_STRING) {
        mp_str_writer w;
        mp_str_begin(&w, out->data, out->bytes, (int32_t)total);
        slice_walk_strings(in, &p, total, &w, NULL);
        if (!mp_str_done(&w))
            return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' does not hold the sliced strings",
                                mp_tname(out));
        return MP_OK;
    }
    if (total == 0)
        return MP_OK;
    size_t es = mp_dtype_size(in->dtype);
    if (p.rank == 0) {
        memcpy(out->data, in->data, es);
        return MP_OK;
    }
    /* Trailing dimensions taken whole merge into one contiguous block per element of the
     * last partial dimension k. */
    size_t stride[MP_MAX_RANK] = {0};
    size_t blk = es;
    for (int32_t d = p.rank - 1; d >= 0; d--) {
        stride[d] = blk;
        blk *= (size_t)in->dims[d];
    }
    int32_t k = p.rank - 1;
    while (k > 0 && p.start[k] == 0 && p.step[k] == 1 && p.count[k] == in->dims[k])
        k--;
    size_t block = stride[k];
    size_t rows = 1;
    for (int32_t d = 0; d < k; d++)
        rows *= (size_t)p.count[d];
    const uint8_t *src = in->data;
    uint8_t *dst = out->data;
    int64_t idx[MP_MAX_RANK] = {0};
    size_t row_bytes = (size_t)p.count[k] * block;
    for (size_t r = 0; r < rows; r++) {
        int64_t off = 0;
        for (int32_t d = 0; d < k; d++)
            off += (p.start[d] + idx[d] * p.step[d]) * (int64_t)stride[d];
        const uint8_t *s = src + off + p.start[k] * (int64_t)block;
        if (p.step[k] == 1)
            memcpy(dst, s, row_bytes);
        else
            mp_copy_strided(dst, s, (size_t)p.count[k],
                            (ptrdiff_t)(p.step[k] * (int64_t)block), block);
        dst += row_bytes;
        for (int32_t d = k - 1; d >= 0; d--) { /* odometer over the outer dimensions */
            if (++idx[d] < p.count[d])
                break;
            idx[d] = 0;
        }
    }
    return MP_OK;
}

static mp_status slice_run(mp_node *n)
{
    slice_plan p;
    mp_status st = slice_build(n, true, &p);
    return st != MP_OK ? st : slice_copy(n, &p);
}

/* ---- SLICE ------------------------------------------------------------------------------ */

/* SLICE (input, begin, size), as TensorFlow Lite's slice.cc: begin and size are int32 / int64
 * vectors of the input's rank; size -1 takes the rest of the dimension; otherwise
 * 0 <= begin and begin + size <= the dimension. The output shape is the sizes, so infer defers
 * while begin or size are not known. */
static mp_status tfl_slice_plan(mp_node *n, slice_plan *p)
{
    const mp_tensor *in = n->in[0], *tb = n->in[1], *tsz = n->in[2];
    char b1[96];
    p->rank = p->out_rank = in->rank;
    for (int32_t d = 0; d < in->rank; d++) {
        int64_t b = mp_tensor_index_at(tb, (size_t)d), sz = mp_tensor_index_at(tsz, (size_t)d);
        int64_t dim = in->dims[d];
        if (sz == -1)
            sz = dim - b;
        if (b < 0 || b > dim || sz < 0 || b + sz > dim)
            return mp_node_fail(n, MP_ERR_SHAPE,
                                "begin %lld and size %lld of dimension %d (begin '%s', size '%s') "
                                "do not fit '%s' %s", (long long)b,
                                (long long)mp_tensor_index_at(tsz, (size_t)d), d, mp_tname(tb),
                                mp_tname(tsz), mp_tname(in), SHAPE_STR(in, b1));
        p->start[d] = b;
        p->step[d] = 1;
        p->count[d] = sz;
        p->out_dims[d] = (int32_t)sz;
    }
    return MP_OK;
}

static mp_status tfl_slice_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 3, 3, 0);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0];
    if ((st = mp_node_check_same_dtype_or_string(n, in, n->out[0])) != MP_OK ||
        (st = mp_node_check_same_qparams(n, in, n->out[0])) != MP_OK)
        return st;
    char b1[96], b2[96];
    for (int32_t i = 1; i < 3; i++) {
        const mp_tensor *t = n->in[i];
        if (!mp_dtype_is_index(t->dtype) || t->rank != 1 || t->dims[0] != in->rank)
            return mp_node_fail(n, MP_ERR_SHAPE,
                                "%s '%s' must be an int32 vector of %d entries for '%s' %s, "
                                "is %s %s",
                                i == 1 ? "begin" : "size", mp_tname(t), in->rank, mp_tname(in),
                                SHAPE_STR(in, b1), mp_dtype_name(t->dtype), SHAPE_STR(t, b2));
    }
    for (int32_t i = 1; i < 3; i++)
        if (!n->in[i]->value_known || !n->in[i]->data)
            return MP_ERR_DEFERRED;
    slice_plan p;
    if ((st = tfl_slice_plan(n, &p)) != MP_OK)
        return st;
    if ((st = mp_node_set_output_shape(n, p.out_rank, p.out_dims)) != MP_OK)
        return st;
    return in->dtype == MP_DT_STRING ? slice_string_bytes(n, &p) : MP_OK;
}

static mp_status tfl_slice_run(mp_node *n)
{
    slice_plan p;
    mp_status st = tfl_slice_plan(n, &p);
    return st != MP_OK ? st : slice_copy(n, &p);
}

/* ---- PACK ------------------------------------------------------------------------------- */

static mp_status pack_axis(mp_node *n, int32_t rank, int32_t *axis)
{
    int32_t a = n->opt->axis;
    if (a < -(rank + 1) || a > rank)
        return mp_node_fail(n, MP_ERR_SHAPE, "axis %d out of range for inputs of rank %d", a,
                            rank);
    *axis = a < 0 ? a + rank + 1 : a;
    return MP_OK;
}

static mp_status pack_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 1, INT32_MAX, 0);
    if (st != MP_OK)
        return st;
    const mp_tensor *in0 = n->in[0];
    mp_tensor *out = n->out[0];
    if ((st = mp_node_check_same_dtype(n, in0, out)) != MP_OK)
        return st;
    if (n->opt->values_count > 0 && n->opt->values_count != n->n_in)
        return mp_node_fail(n, MP_ERR_FORMAT, "values_count %d but %d inputs",
                            n->opt->values_count, n->n_in);
    char b1[96], b2[96];
    if (in0->rank + 1 > MP_MAX_RANK)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "'%s' %s: output rank exceeds %d", mp_tname(in0),
                            SHAPE_STR(in0, b1), MP_MAX_RANK);
    for (int32_t i = 1; i < n->n_in; i++) {
        const mp_tensor *t = n->in[i];
        if (t->dtype != in0->dtype)
            return mp_node_fail(n, MP_ERR_UNSUPPORTED, "input '%s' is %s but '%s' is %s", mp_tname(t),
                                mp_dtype_name(t->dtype), mp_tname(in0), mp_dtype_name(in0->dtype));
        if (!mp_tensor_same_shape(t, in0))
            return mp_node_fail(n, MP_ERR_SHAPE, "input '%s' %s differs from '%s' %s", mp_tname(t),
                                SHAPE_STR(t, b1), mp_tname(in0), SHAPE_STR(in0, b2));
    }
    for (int32_t i = 0; i < n->n_in; i++)
        if ((st = mp_node_check_same_qparams(n, n->in[i], out)) != MP_OK)
            return st;
    int32_t axis = 0;
    if ((st = pack_axis(n, in0->rank, &axis)) != MP_OK)
        return st;
    int32_t dims[MP_MAX_RANK], rank = 0;
    for (int32_t d = 0; d <= in0->rank; d++) {
        if (d == axis)
            dims[rank++] = n->n_in;
        if (d < in0->rank)
            dims[rank++] = in0->dims[d];
    }
    if (!mp_tensor_set_shape(out, rank, dims))
        return mp_node_fail(n, MP_ERR_SHAPE, "invalid output shape for '%s'", mp_tname(out));
    return MP_OK;
}

static mp_status pack_run(mp_node *n)
{
    const mp_tensor *in0 = n->in[0];
    mp_tensor *out = n->out[0];
    int32_t axis = 0;
    mp_status st = pack_axis(n, in0->rank, &axis);
    if (st != MP_OK)
        return st;
    if (out->bytes != in0->bytes * (size_t)n->n_in)
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' does not hold %d inputs", mp_tname(out),
                            n->n_in);
    size_t outer = 1, chunk = mp_dtype_size(in0->dtype);
    for (int32_t d = 0; d < axis; d++)
        outer *= (size_t)in0->dims[d];
    for (int32_t d = axis; d < in0->rank; d++)
        chunk *= (size_t)in0->dims[d];
    if (out->bytes == 0)
        return MP_OK;
    uint8_t *dst = out->data;
    for (size_t o = 0; o < outer; o++)
        for (int32_t i = 0; i < n->n_in; i++, dst += chunk)
            memcpy(dst, (const uint8_t *)n->in[i]->data + o * chunk, chunk);
    return MP_OK;
}

/* ---- table ------------------------------------------------------------------------------ */

const mp_kernel mp_kernels_shape[] = {
    {.opcode = MP_OP_SHAPE, .reads_shapes_only = true, .min_inputs = 1, .max_inputs = 1,
     .n_outputs = 1,
     .infer = shape_infer, .run = shape_run},
    {.opcode = MP_OP_STRIDED_SLICE, .min_inputs = 4, .max_inputs = 4, .n_outputs = 1,
     .infer = slice_infer, .run = slice_run},
    {.opcode = MP_OP_SLICE, .min_inputs = 3, .max_inputs = 3, .n_outputs = 1,
     .infer = tfl_slice_infer, .run = tfl_slice_run},
    {.opcode = MP_OP_PACK, .min_inputs = 1, .max_inputs = 1 << 20, .n_outputs = 1,
     .infer = pack_infer, .run = pack_run},
    {.opcode = -1},
};
