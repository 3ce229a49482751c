/* Kernels: TRANSPOSE, TILE, MIRROR_PAD, UNPACK, REVERSE_V2 and BROADCAST_TO, as TensorFlow
 * Lite's reference kernels (transpose.cc, tile.cc, mirror_pad.cc, unpack.cc, reverse.cc,
 * broadcast_to.cc), plus mp_permute (movement.h), the transpose the other kernels reuse. All only
 * move elements: any dtype with a fixed element size (float32, int8, uint8, int16, int32, int64,
 * bool), quantized output with the input's scale and zero point (TensorFlow Lite requires it).
 *
 * TRANSPOSE (input, perm): output dimension j is input dimension perm[j]; perm is an int32
 * (or int64) vector of the input's rank whose entries may be negative (counted from the end,
 * as newer TensorFlow Lite releases accept), each dimension once. This XNNPACK (2022) has no
 * transpose operator, so it is plain C: dimensions of size 1 dropped and dimensions that stay
 * adjacent merged, then whole rows copied when the last dimension stays last, else one strided
 * read per element in output order.
 * TILE (input, multiples): output dimension i is dims[i] * multiples[i] (int32 or int64,
 * >= 0): each innermost row is copied once, then every block is replicated with memcpy.
 * TILE also takes a string input (tile.cc version 2): output element o is input element
 * o mod dims in each dimension; the output's size, prod(multiples) times the input's
 * characters, waits for the run (mp_node_in_run), where the input's buffer is checked.
 * Both defer their output shape (MP_ERR_DEFERRED) while perm or multiples are not known.
 * MIRROR_PAD (input, paddings [rank, 2]) as mirror_pad.cc: REFLECT repeats without the edge
 * (pads up to dims - 1), SYMMETRIC with it (pads up to dims); each output index maps to one
 * input index per dimension.
 * UNPACK (num, axis): one output per slice along axis (num = dims[axis]), axis negative from
 * the end; REVERSE_V2 (input, axes): the elements reversed along each listed axis (negative
 * from the end, each once); BROADCAST_TO (input, shape): NumPy broadcasting of the input to
 * the given shape (at least the input's rank, each input dimension 1 or equal).
 * MIRROR_PAD and BROADCAST_TO defer their shape while paddings / shape are not known. */
#include "engine/kernels/movement.h"

#include <string.h>

#include "engine/kernels/broadcast.h"
#include "engine/kernels/kernel.h"
#include "engine/kernels/quant_layout.h"
#include "engine/kernels/strings.h"
#include "engine/session_resources.h"

#define SHAPE_STR(t, buf) mp_shape_str((t)->rank, (t)->dims, (buf), sizeof(buf))

void mp_copy_strided(uint8_t *dst, const uint8_t *src, size_t count, ptrdiff_t stride,
                     size_t es)
{
    switch (es) { /* the common sizes: a fixed-size memcpy the compiler makes one move */
    case 1:
        for (size_t j = 0; j < count; j++, src += stride)
            dst[j] = *src;
        break;
    case 2:
        for (size_t j = 0; j < count; j++, src += stride)
            memcpy(dst + j * 2, src, 2);
        break;
    case 4:
        for (size_t j = 0; j < count; j++, src += stride)
            memcpy(dst + j * 4, src, 4);
        break;
    case 8:
        for (size_t j = 0; j < count; j++, src += stride)
            memcpy(dst + j * 8, src, 8);
        break;
    default:
        for (size_t j = 0; j < count; j++, src += stride)
            memcpy(dst + j * es, src, es);
    }
}

void mp_permute(const void *src, void *dst, int32_t rank, const int32_t *dims,
                const int32_t *perm, size_t es)
{
    size_t total = 1;
    for (int32_t i = 0; i < rank; i++)
        total *= (size_t)dims[i];
    if (total == 0)
        return;
    /* keep the input dimensions larger than 1, renumbered */
    int32_t newid[MP_MAX_RANK], r = 0, kd[MP_MAX_RANK];
    for (int32_t i = 0; i < rank; i++)
        newid[i] = dims[i] > 1 ? r++ : -1;
    for (int32_t i = 0; i < rank; i++)
        if (newid[i] >= 0)
            kd[newid[i]] = dims[i];
    int32_t p[MP_MAX_RANK], pr = 0;
    for (int32_t j = 0; j < rank; j++)
        if (newid[perm[j]] >= 0)
            p[pr++] = newid[perm[j]];
    /* merge runs of output dimensions that are consecutive input dimensions: group g starts at
     * input dimension first[g]; start[i] marks the input dimensions that start a group */
    bool start[MP_MAX_RANK] = {false};
    for (int32_t j = 0; j < pr; j++)
        if (j == 0 || p[j] != p[j - 1] + 1)
            start[p[j]] = true;
    int32_t gid[MP_MAX_RANK], g = -1;
    size_t gdim[MP_MAX_RANK];
    for (int32_t i = 0; i < r; i++) { /* groups numbered in input order */
        if (start[i]) {
            gid[i] = ++g;
            gdim[g] = 1;
        } else {
            gid[i] = g;
        }
        gdim[g] *= (size_t)kd[i];
    }
    int32_t m = g + 1;
    if (m <= 1) {
        memcpy(dst, src, total * es);
        return;
    }
    size_t istride[MP_MAX_RANK], s = es; /* bytes */
    for (int32_t i = m - 1; i >= 0; i--) {
        istride[i] = s;
        s *= gdim[i];
    }
    /* output order of the groups */
    size_t od[MP_MAX_RANK], os[MP_MAX_RANK];
    int32_t q = 0;
    for (int32_t j = 0; j < pr; j++)
        if (j == 0 || p[j] != p[j - 1] + 1) {
            od[q] = gdim[gid[p[j]]];
            os[q] = istride[gid[p[j]]];
            q++;
        }
    const uint8_t *in = src;
    uint8_t *out = dst;
    size_t inner = od[m - 1], rows = total / inner;
    bool rowcopy = os[m - 1] == es; /* the last input group stays last */
    size_t idx[MP_MAX_RANK] = {0}, off = 0;
    for (size_t row = 0; row < rows; row++) {
        if (rowcopy)
            memcpy(out, in + off, inner * es);
        else
            mp_copy_strided(out, in + off, inner, (ptrdiff_t)os[m - 1], es);
        out += inner * es;
        for (int32_t d = m - 2; d >= 0; d--) { /* odometer over the outer output dimensions */
            off += os[d];
            if (++idx[d] < od[d])
                break;
            off -= os[d] * od[d];
            idx[d] = 0;
        }
    }
}

mp_status mp_node_check_move_io(mp_node *n, int32_t n_in)
{
    mp_status st = mp_node_check_io(n, n_in, n_in, 0);
    if (st == MP_OK)
        st = mp_node_check_same_dtype(n, n->in[0], n->out[0]);
    if (st == MP_OK)
        st = mp_node_check_same_qparams(n, n->in[0], n->out[0]);
    return st;
}

void mp_index_next(int32_t *idx, const int32_t *dims, int32_t last)
{
    for (int32_t d = last - 1; d >= 0; d--) {
        if (++idx[d] < dims[d])
            return;
        idx[d] = 0;
    }
}

/* Checks both kernels share: the output has the input's dtype and quantization; input 1
 * (`what`: perm, multiples) is an int32 / int64 vector with one entry per input dimension.
 * MP_ERR_DEFERRED while its value is not known. */
static mp_status move_check(mp_node *n, const char *what)
{
    mp_status st;
    if (n->opcode == MP_OP_TILE) { /* strings too */
        st = mp_node_check_io(n, 2, 2, 0);
        if (st == MP_OK)
            st = mp_node_check_same_dtype_or_string(n, n->in[0], n->out[0]);
        if (st == MP_OK)
            st = mp_node_check_same_qparams(n, n->in[0], n->out[0]);
    } else {
        st = mp_node_check_move_io(n, 2);
    }
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0], *v = n->in[1];
    char b1[96], b2[96];
    if (!mp_dtype_is_index(v->dtype) || v->rank != 1 || v->dims[0] != in->rank)
        return mp_node_fail(n, MP_ERR_SHAPE,
                            "%s '%s' must be an int32 vector of %d entries for '%s' %s, is %s %s",
                            what, mp_tname(v), in->rank, mp_tname(in), SHAPE_STR(in, b1),
                            mp_dtype_name(v->dtype), SHAPE_STR(v, b2));
    return v->value_known && v->data ? MP_OK : MP_ERR_DEFERRED;
}

/* ---- TRANSPOSE -------------------------------------------------------------------------- */

/* The permutation from the perm tensor, normalized to 0..rank-1 and checked. */
static mp_status transpose_perm(mp_node *n, int32_t *perm)
{
    const mp_tensor *in = n->in[0], *pt = n->in[1];
    char b1[96];
    int32_t rank = in->rank;
    bool seen[MP_MAX_RANK] = {false};
    for (int32_t j = 0; j < rank; j++) {
        int64_t v = mp_tensor_index_at(pt, (size_t)j);
        if (v < -rank || v >= rank)
            return mp_node_fail(n, MP_ERR_SHAPE, "perm '%s'[%d] = %lld is out of range for '%s' %s",
                                mp_tname(pt), j, (long long)v, mp_tname(in), SHAPE_STR(in, b1));
        if (v < 0)
            v += rank;
        if (seen[v])
            return mp_node_fail(n, MP_ERR_SHAPE, "perm '%s' names dimension %lld twice",
                                mp_tname(pt), (long long)v);
        seen[v] = true;
        perm[j] = (int32_t)v;
    }
    return MP_OK;
}

static mp_status transpose_infer(mp_node *n)
{
    mp_status st = move_check(n, "perm");
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0];
    int32_t perm[MP_MAX_RANK], dims[MP_MAX_RANK];
    if ((st = transpose_perm(n, perm)) != MP_OK)
        return st;
    for (int32_t j = 0; j < in->rank; j++)
        dims[j] = in->dims[perm[j]];
    return mp_node_set_output_shape(n, in->rank, dims);
}

static mp_status transpose_run(mp_node *n)
{
    const mp_tensor *in = n->in[0];
    mp_tensor *out = n->out[0];
    int32_t perm[MP_MAX_RANK];
    mp_status st = transpose_perm(n, perm);
    if (st != MP_OK)
        return st;
    bool ok = out->rank == in->rank;
    for (int32_t j = 0; ok && j < in->rank; j++)
        ok = out->dims[j] == in->dims[perm[j]];
    char b1[96];
    if (!ok)
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' %s does not match the permutation",
                            mp_tname(out), SHAPE_STR(out, b1));
    mp_permute(in->data, out->data, in->rank, in->dims, perm, mp_dtype_size(in->dtype));
    return MP_OK;
}

/* ---- TILE ------------------------------------------------------------------------------- */

static mp_status tile_shape(mp_node *n, int32_t *dims)
{
    const mp_tensor *in = n->in[0], *mt = n->in[1];
    char b1[96];
    for (int32_t i = 0; i < in->rank; i++) {
        int64_t m = mp_tensor_index_at(mt, (size_t)i);
        int64_t v = m * in->dims[i];
        if (m < 0 || v > INT32_MAX)
            return mp_node_fail(n, MP_ERR_SHAPE,
                                "multiples '%s'[%d] = %lld is not valid for dimension %d of "
                                "'%s' %s",
                                mp_tname(mt), i, (long long)m, i, mp_tname(in), SHAPE_STR(in, b1));
        dims[i] = (int32_t)v;
    }
    return MP_OK;
}

/* A checked string input tiled into the output of dimensions dims: its strings written in
 * the output's order. */
static void tile_write_strings(const mp_tensor *in, const int32_t *dims, mp_str_writer *w)
{
    const int32_t rank = in->rank;
    size_t count = 1, stride[MP_MAX_RANK], el = 1;
    for (int32_t d = rank - 1; d >= 0; d--) {
        stride[d] = el;
        el *= (size_t)in->dims[d];
        count *= (size_t)dims[d];
    }
    int32_t idx[MP_MAX_RANK] = {0};
    for (size_t e = 0; e < count; e++) {
        size_t at = 0, len;
        for (int32_t d = 0; d < rank; d++)
            at += (size_t)(idx[d] % in->dims[d]) * stride[d];
        const char *str = mp_str_at(in, (int32_t)at, &len);
        if (!mp_str_append(w, str, len) || !mp_str_next(w))
            return;
        for (int32_t d = rank - 1; d >= 0; d--) { /* odometer, last dimension fastest */
            if (++idx[d] < dims[d])
                break;
            idx[d] = 0;
        }
    }
}

static mp_status tile_infer(mp_node *n)
{
    mp_status st = move_check(n, "multiples");
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0];
    int32_t dims[MP_MAX_RANK];
    if ((st = tile_shape(n, dims)) != MP_OK)
        return st;
    if ((st = mp_node_set_output_shape(n, in->rank, dims)) != MP_OK || in->dtype != MP_DT_STRING)
        return st;
    /* strings: the output's bytes while running */
    if (!mp_node_in_run(n) || !in->data)
        return MP_ERR_DEFERRED;
    if ((st = mp_str_check(n, in)) != MP_OK)
        return st;
    size_t chars = 0, in_chars = 0, len, reps = 1;
    for (size_t i = 0; i < mp_tensor_elements(in); i++) {
        mp_str_at(in, (int32_t)i, &len);
        in_chars += len;
    }
    for (int32_t d = 0; d < in->rank; d++)
        reps *= (size_t)mp_tensor_index_at(n->in[1], (size_t)d);
    if (in_chars && reps > (size_t)INT32_MAX / in_chars)
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' would exceed 2 GiB of strings",
                            mp_tname(n->out[0]));
    chars = reps * in_chars; /* every input string appears prod(multiples) times */
    if (!mp_str_bytes(mp_tensor_elements(n->out[0]), chars, &n->out[0]->bytes))
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' would exceed 2 GiB of strings",
                            mp_tname(n->out[0]));
    return MP_OK;
}

typedef struct tile_geom {
    int32_t rank;
    size_t in_dim[MP_MAX_RANK], mult[MP_MAX_RANK];
    size_t in_sub[MP_MAX_RANK], out_sub[MP_MAX_RANK]; /* bytes of one slice below dimension d */
} tile_geom;

/* Write the output block of dimensions d.. for the input block at src. */
static void tile_block(const tile_geom *g, int32_t d, const uint8_t *src, uint8_t *dst)
{
    if (d == g->rank - 1) {
        memcpy(dst, src, g->in_dim[d] * g->in_sub[d]);
    } else {
        for (size_t i = 0; i < g->in_dim[d]; i++)
            tile_block(g, d + 1, src + i * g->in_sub[d], dst + i * g->out_sub[d]);
    }
    size_t block = g->in_dim[d] * g->out_sub[d];
    for (size_t k = 1; k < g->mult[d]; k++)
        memcpy(dst + k * block, dst, block);
}

static mp_status tile_run(mp_node *n)
{
    const mp_tensor *in = n->in[0];
    mp_tensor *out = n->out[0];
    int32_t dims[MP_MAX_RANK];
    mp_status st = tile_shape(n, dims);
    if (st != MP_OK)
        return st;
    char b1[96];
    if (out->rank != in->rank || memcmp(out->dims, dims, sizeof(int32_t) * (size_t)in->rank))
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' %s does not match the multiples",
                            mp_tname(out), SHAPE_STR(out, b1));
    if (in->dtype == MP_DT_STRING) {
        mp_str_writer w;
        mp_str_begin(&w, out->data, out->bytes, (int32_t)mp_tensor_elements(out));
        tile_write_strings(in, dims, &w);
        if (!mp_str_done(&w))
            return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' does not hold the tiled strings",
                                mp_tname(out));
        return MP_OK;
    }
    if (out->bytes == 0)
        return MP_OK;
    size_t es = mp_dtype_size(in->dtype);
    if (in->rank == 0) {
        memcpy(out->data, in->data, es);
        return MP_OK;
    }
    tile_geom g = {.rank = in->rank};
    size_t si = es, so = es;
    for (int32_t d = in->rank - 1; d >= 0; d--) {
        g.in_dim[d] = (size_t)in->dims[d];
        g.mult[d] = (size_t)mp_tensor_index_at(n->in[1], (size_t)d);
        g.in_sub[d] = si;
        g.out_sub[d] = so;
        si *= g.in_dim[d];
        so *= (size_t)dims[d];
    }
    tile_block(&g, 0, in->data, out->data);
    return MP_OK;
}

/* ---- MIRROR_PAD ------------------------------------------------------------------------- */

/* Input, paddings and output checked (input 1 an int32 / int64 [rank, 2] of pads within what
 * the mode allows); pads[2d], pads[2d+1] the before / after pads. MP_ERR_DEFERRED while the
 * paddings are not known. */
static mp_status mirror_pads(mp_node *n, int64_t *pads)
{
    mp_status st = mp_node_check_move_io(n, 2);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0], *p = n->in[1];
    char b1[96], b2[96];
    if (!mp_dtype_is_index(p->dtype) || p->rank != 2 || p->dims[0] != in->rank || p->dims[1] != 2)
        return mp_node_fail(n, MP_ERR_SHAPE,
                            "paddings '%s' must be an int32 [%d, 2] for '%s' %s, is %s %s",
                            mp_tname(p), in->rank, mp_tname(in), SHAPE_STR(in, b1),
                            mp_dtype_name(p->dtype), SHAPE_STR(p, b2));
    if (n->opt->mirror_pad_mode != 0 && n->opt->mirror_pad_mode != 1)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "mode %d is not REFLECT (0) or SYMMETRIC (1)",
                            n->opt->mirror_pad_mode);
    if (!p->value_known || !p->data)
        return MP_ERR_DEFERRED;
    int64_t reflect = n->opt->mirror_pad_mode == 0;
    for (int32_t d = 0; d < in->rank; d++)
        for (int k = 0; k < 2; k++) {
            int64_t v = mp_tensor_index_at(p, (size_t)(2 * d + k));
            if (v < 0 || v > in->dims[d] - reflect)
                return mp_node_fail(n, MP_ERR_SHAPE,
                                    "paddings '%s'[%d][%d] = %lld is not valid for dimension %d "
                                    "of '%s' %s in %s mode (0 to %lld)",
                                    mp_tname(p), d, k, (long long)v, d, mp_tname(in),
                                    SHAPE_STR(in, b1), reflect ? "REFLECT" : "SYMMETRIC",
                                    (long long)(in->dims[d] - reflect));
            pads[2 * d + k] = v;
        }
    return MP_OK;
}

static mp_status mirror_pad_infer(mp_node *n)
{
    int64_t pads[2 * MP_MAX_RANK];
    mp_status st = mirror_pads(n, pads);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0];
    int32_t dims[MP_MAX_RANK];
    for (int32_t d = 0; d < in->rank; d++) {
        int64_t v = in->dims[d] + pads[2 * d] + pads[2 * d + 1];
        if (v > INT32_MAX)
            return mp_node_fail(n, MP_ERR_SHAPE, "padded dimension %d is too large", d);
        dims[d] = (int32_t)v;
    }
    return mp_node_set_output_shape(n, in->rank, dims);
}

/* The input index output index i of a dimension of size len (pads lo before) reads. */
static int64_t mirror_index(int64_t i, int64_t lo, int64_t len, int64_t reflect)
{
    if (i < lo)
        return lo - i - 1 + reflect;
    i -= lo;
    if (i < len)
        return i;
    return len - 1 - reflect - (i - len);
}

static mp_status mirror_pad_run(mp_node *n)
{
    int64_t pads[2 * MP_MAX_RANK];
    mp_status st = mirror_pads(n, pads);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0];
    mp_tensor *out = n->out[0];
    int32_t rank = in->rank;
    bool ok = out->rank == rank;
    for (int32_t d = 0; ok && d < rank; d++)
        ok = out->dims[d] == in->dims[d] + pads[2 * d] + pads[2 * d + 1];
    char b1[96];
    if (!ok)
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' %s does not match the paddings",
                            mp_tname(out), SHAPE_STR(out, b1));
    size_t es = mp_dtype_size(in->dtype), total = mp_tensor_elements(out);
    if (total == 0)
        return MP_OK;
    if (rank == 0) {
        memcpy(out->data, in->data, es);
        return MP_OK;
    }
    int64_t reflect = n->opt->mirror_pad_mode == 0;
    size_t istride[MP_MAX_RANK], s = es;
    for (int32_t d = rank - 1; d >= 0; d--) {
        istride[d] = s;
        s *= (size_t)in->dims[d];
    }
    /* one row of the innermost dimension at a time: the middle part copied whole */
    int32_t last = rank - 1;
    int64_t lo = pads[2 * last], len = in->dims[last];
    size_t row = (size_t)out->dims[last], rows = total / row;
    int32_t idx[MP_MAX_RANK] = {0};
    const uint8_t *src = in->data;
    uint8_t *dst = out->data;
    for (size_t r = 0; r < rows; r++) {
        size_t off = 0;
        for (int32_t d = 0; d < last; d++)
            off += (size_t)mirror_index(idx[d], pads[2 * d], in->dims[d], reflect) * istride[d];
        const uint8_t *s_row = src + off;
        for (int64_t i = 0; i < (int64_t)row; i++) {
            if (i == lo) { /* the middle part in one copy */
                memcpy(dst + (size_t)lo * es, s_row, (size_t)len * es);
                i += len - 1;
                continue;
            }
            memcpy(dst + (size_t)i * es, s_row + (size_t)mirror_index(i, lo, len, reflect) * es,
                   es);
        }
        dst += row * es;
        mp_index_next(idx, out->dims, last);
    }
    return MP_OK;
}

/* ---- UNPACK ----------------------------------------------------------------------------- */

/* Checks and the normalized axis: num outputs, each the input's dtype (and quantization). */
static mp_status unpack_axis(mp_node *n, int32_t *axis)
{
    if (n->n_in != 1 || !n->in[0])
        return mp_node_fail(n, MP_ERR_FORMAT, "expects 1 input, has %d", n->n_in);
    const mp_tensor *in = n->in[0];
    char b1[96];
    int32_t a = n->opt->axis, rank = in->rank;
    if (rank < 1 || a < -rank || a >= rank)
        return mp_node_fail(n, MP_ERR_SHAPE, "axis %d is out of range for '%s' %s", a,
                            mp_tname(in), SHAPE_STR(in, b1));
    if (a < 0)
        a += rank;
    if (n->opt->values_count != in->dims[a] || n->n_out != in->dims[a])
        return mp_node_fail(n, MP_ERR_SHAPE,
                            "num is %d and the operator has %d outputs, but dimension %d of "
                            "'%s' %s is %d",
                            n->opt->values_count, n->n_out, a, mp_tname(in), SHAPE_STR(in, b1),
                            in->dims[a]);
    for (int32_t j = 0; j < n->n_out; j++) {
        if (!n->out[j])
            return mp_node_fail(n, MP_ERR_FORMAT, "output %d is omitted", j);
        mp_status st = mp_node_check_same_dtype(n, in, n->out[j]);
        if (st == MP_OK)
            st = mp_node_check_same_qparams(n, in, n->out[j]);
        if (st != MP_OK)
            return st;
    }
    *axis = a;
    return MP_OK;
}

static mp_status unpack_infer(mp_node *n)
{
    int32_t axis;
    mp_status st = unpack_axis(n, &axis);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0];
    int32_t dims[MP_MAX_RANK], r = 0;
    for (int32_t d = 0; d < in->rank; d++)
        if (d != axis)
            dims[r++] = in->dims[d];
    for (int32_t j = 0; j < n->n_out; j++)
        if (!mp_tensor_set_shape(n->out[j], r, dims))
            return mp_node_fail(n, MP_ERR_SHAPE, "invalid output shape for '%s'",
                                mp_tname(n->out[j]));
    return MP_OK;
}

static mp_status unpack_run(mp_node *n)
{
    int32_t axis;
    mp_status st = unpack_axis(n, &axis);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0];
    size_t es = mp_dtype_size(in->dtype), outer = 1, inner = es;
    for (int32_t d = 0; d < axis; d++)
        outer *= (size_t)in->dims[d];
    for (int32_t d = axis + 1; d < in->rank; d++)
        inner *= (size_t)in->dims[d];
    size_t num = (size_t)n->n_out;
    for (size_t j = 0; j < num; j++) {
        mp_tensor *o = n->out[j];
        if (o->bytes != outer * inner)
            return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' does not match input '%s'",
                                mp_tname(o), mp_tname(in));
        const uint8_t *src = (const uint8_t *)in->data + j * inner;
        uint8_t *dst = o->data;
        for (size_t k = 0; k < outer; k++)
            memcpy(dst + k * inner, src + k * num * inner, inner);
    }
    return MP_OK;
}

/* ---- REVERSE_V2 ------------------------------------------------------------------------- */

/* Checks; when the axes are known, rev[d] says whether dimension d is reversed. */
static mp_status reverse_axes(mp_node *n, bool *rev)
{
    mp_status st = mp_node_check_move_io(n, 2);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0], *ax = n->in[1];
    char b1[96], b2[96];
    if (!mp_dtype_is_index(ax->dtype) || ax->rank != 1 || ax->dims[0] > in->rank)
        return mp_node_fail(n, MP_ERR_SHAPE,
                            "axis '%s' must be an int32 vector of at most %d entries, is %s %s",
                            mp_tname(ax), in->rank, mp_dtype_name(ax->dtype), SHAPE_STR(ax, b2));
    if (!ax->value_known || !ax->data)
        return MP_ERR_DEFERRED;
    for (int32_t d = 0; d < in->rank; d++)
        rev[d] = false;
    for (int32_t k = 0; k < ax->dims[0]; k++) {
        int64_t a = mp_tensor_index_at(ax, (size_t)k);
        if (a < -in->rank || a >= in->rank)
            return mp_node_fail(n, MP_ERR_SHAPE, "axis '%s'[%d] = %lld is out of range for '%s' %s",
                                mp_tname(ax), k, (long long)a, mp_tname(in), SHAPE_STR(in, b1));
        if (a < 0)
            a += in->rank;
        if (rev[a])
            return mp_node_fail(n, MP_ERR_SHAPE, "axis '%s' names dimension %lld twice",
                                mp_tname(ax), (long long)a);
        rev[a] = true;
    }
    return MP_OK;
}

static mp_status reverse_infer(mp_node *n)
{
    bool rev[MP_MAX_RANK];
    mp_status st = reverse_axes(n, rev);
    if (st != MP_OK && st != MP_ERR_DEFERRED)
        return st;
    /* the shape is the input's whatever the axes: never deferred */
    return mp_node_set_output_shape(n, n->in[0]->rank, n->in[0]->dims);
}

static mp_status reverse_run(mp_node *n)
{
    bool rev[MP_MAX_RANK];
    mp_status st = reverse_axes(n, rev);
    if (st == MP_ERR_DEFERRED)
        return mp_node_fail(n, MP_ERR_SHAPE, "axis '%s' has no value", mp_tname(n->in[1]));
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0];
    mp_tensor *out = n->out[0];
    if (!mp_tensor_same_shape(in, out))
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' does not match input '%s'",
                            mp_tname(out), mp_tname(in));
    size_t es = mp_dtype_size(in->dtype), total = mp_tensor_elements(in);
    if (total == 0)
        return MP_OK;
    int32_t rank = in->rank;
    if (rank == 0) {
        memcpy(out->data, in->data, es);
        return MP_OK;
    }
    /* source offset per output element, walked as an odometer; the innermost dimension is a
     * row copied whole or read backwards */
    ptrdiff_t stride[MP_MAX_RANK];
    size_t s = es;
    for (int32_t d = rank - 1; d >= 0; d--) {
        stride[d] = (ptrdiff_t)s;
        s *= (size_t)in->dims[d];
    }
    int32_t last = rank - 1, idx[MP_MAX_RANK] = {0};
    size_t row = (size_t)in->dims[last], rows = total / row;
    const uint8_t *src = in->data;
    uint8_t *dst = out->data;
    for (size_t r = 0; r < rows; r++) {
        ptrdiff_t off = 0;
        for (int32_t d = 0; d < last; d++)
            off += (rev[d] ? in->dims[d] - 1 - idx[d] : idx[d]) * stride[d];
        if (rev[last])
            mp_copy_strided(dst, src + off + (ptrdiff_t)(row - 1) * (ptrdiff_t)es, row,
                            -(ptrdiff_t)es, es);
        else
            memcpy(dst, src + off, row * es);
        dst += row * es;
        mp_index_next(idx, in->dims, last);
    }
    return MP_OK;
}

/* ---- BROADCAST_TO ----------------------------------------------------------------------- */

/* Checks; the target shape into dims / *rank. MP_ERR_DEFERRED while it is not known. */
static mp_status broadcast_to_shape(mp_node *n, int32_t *rank, int32_t *dims)
{
    mp_status st = mp_node_check_move_io(n, 2);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0], *sh = n->in[1];
    char b1[96], b2[96];
    if (!mp_dtype_is_index(sh->dtype) || sh->rank != 1 || sh->dims[0] < in->rank ||
        sh->dims[0] > MP_MAX_RANK)
        return mp_node_fail(n, MP_ERR_SHAPE,
                            "shape '%s' must be an int32 vector of %d to %d entries for '%s' %s, "
                            "is %s %s",
                            mp_tname(sh), in->rank, MP_MAX_RANK, mp_tname(in), SHAPE_STR(in, b1),
                            mp_dtype_name(sh->dtype), SHAPE_STR(sh, b2));
    if (!sh->value_known || !sh->data)
        return MP_ERR_DEFERRED;
    int32_t r = sh->dims[0];
    for (int32_t d = 0; d < r; d++) {
        int64_t v = mp_tensor_index_at(sh, (size_t)d);
        int32_t id = d - (r - in->rank); /* the input dimension aligned to it, or < 0 */
        if (v < 0 || v > INT32_MAX || (id >= 0 && in->dims[id] != 1 && in->dims[id] != v))
            return mp_node_fail(n, MP_ERR_SHAPE,
                                "cannot broadcast '%s' %s to shape '%s'[%d] = %lld", mp_tname(in),
                                SHAPE_STR(in, b1), mp_tname(sh), d, (long long)v);
        dims[d] = (int32_t)v;
    }
    *rank = r;
    return MP_OK;
}

static mp_status broadcast_to_infer(mp_node *n)
{
    int32_t rank, dims[MP_MAX_RANK];
    mp_status st = broadcast_to_shape(n, &rank, dims);
    if (st != MP_OK)
        return st;
    return mp_node_set_output_shape(n, rank, dims);
}

static mp_status broadcast_to_run(mp_node *n)
{
    int32_t rank, dims[MP_MAX_RANK];
    mp_status st = broadcast_to_shape(n, &rank, dims);
    if (st == MP_ERR_DEFERRED)
        return mp_node_fail(n, MP_ERR_SHAPE, "shape '%s' has no value", mp_tname(n->in[1]));
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0];
    mp_tensor *out = n->out[0];
    char b1[96];
    if (out->rank != rank || memcmp(out->dims, dims, sizeof(int32_t) * (size_t)rank))
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' %s does not match the shape",
                            mp_tname(out), SHAPE_STR(out, b1));
    size_t es = mp_dtype_size(in->dtype);
    const mp_tensor *ts[2] = {out, in};
    mp_bc_plan plan;
    mp_bc_plan_init(&plan, 2, ts);
    if (plan.elements == 0)
        return MP_OK;
    const mp_bc_plan *p = &plan;
    const int32_t last = p->rank - 1;
    const size_t len = p->dims[last], rows = p->elements / len;
    size_t idx[MP_MAX_RANK] = {0}, o[MP_BC_MAX_OPERANDS] = {0};
    const uint8_t *src = in->data;
    uint8_t *dst = out->data;
    for (size_t r = 0; r < rows; r++) {
        const uint8_t *row = src + o[1] * es;
        if (p->stride[1][last])
            memcpy(dst, row, len * es);
        else
            for (size_t j = 0; j < len; j++)
                memcpy(dst + j * es, row, es);
        dst += len * es;
        mp_bc_next_row(p, idx, o);
    }
    return MP_OK;
}

/* ---- table ------------------------------------------------------------------------------ */

const mp_kernel mp_kernels_movement[] = {
    {.opcode = MP_OP_TRANSPOSE, .min_inputs = 2, .max_inputs = 2, .n_outputs = 1,
     .infer = transpose_infer, .run = transpose_run},
    {.opcode = MP_OP_TILE, .min_inputs = 2, .max_inputs = 2, .n_outputs = 1,
     .infer = tile_infer, .run = tile_run},
    {.opcode = MP_OP_MIRROR_PAD, .min_inputs = 2, .max_inputs = 2, .n_outputs = 1,
     .infer = mirror_pad_infer, .run = mirror_pad_run},
    {.opcode = MP_OP_UNPACK, .min_inputs = 1, .max_inputs = 1, .n_outputs = -1,
     .infer = unpack_infer, .run = unpack_run},
    {.opcode = MP_OP_REVERSE_V2, .min_inputs = 2, .max_inputs = 2, .n_outputs = 1,
     .infer = reverse_infer, .run = reverse_run},
    {.opcode = MP_OP_BROADCAST_TO, .min_inputs = 2, .max_inputs = 2, .n_outputs = 1,
     .infer = broadcast_to_infer, .run = broadcast_to_run},
    {.opcode = -1},
};
