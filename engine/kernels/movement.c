/* Kernels: TRANSPOSE and TILE, as TensorFlow Lite's reference kernels (transpose.cc,
 * tile.cc), plus mp_permute (movement.h), the transpose the other kernels reuse. Both only move
 * elements: any dtype with a fixed element size (float32, int8, uint8, int16, int32, int64,
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
 * Both defer their output shape (MP_ERR_DEFERRED) while perm or multiples are not known. */
#include "engine/kernels/movement.h"

#include <string.h>

#include "engine/kernels/kernel.h"
#include "engine/kernels/quant_layout.h"

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

/* Checks both kernels share: the output has the input's dtype and quantization; input 1
 * (`what`: perm, multiples) is an int32 / int64 vector with one entry per input dimension.
 * MP_ERR_DEFERRED while its value is not known. */
static mp_status move_check(mp_node *n, const char *what)
{
    mp_status st = mp_node_check_io(n, 2, 2, 0);
    if (st == MP_OK)
        st = mp_node_check_same_dtype(n, n->in[0], n->out[0]);
    if (st == MP_OK)
        st = mp_node_check_same_qparams(n, n->in[0], n->out[0]);
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

static mp_status tile_infer(mp_node *n)
{
    mp_status st = move_check(n, "multiples");
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0];
    int32_t dims[MP_MAX_RANK];
    if ((st = tile_shape(n, dims)) != MP_OK)
        return st;
    return mp_node_set_output_shape(n, in->rank, dims);
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

/* ---- table ------------------------------------------------------------------------------ */

const mp_kernel mp_kernels_movement[] = {
    {.opcode = MP_OP_TRANSPOSE, .min_inputs = 2, .max_inputs = 2, .n_outputs = 1,
     .infer = transpose_infer, .run = transpose_run},
    {.opcode = MP_OP_TILE, .min_inputs = 2, .max_inputs = 2, .n_outputs = 1,
     .infer = tile_infer, .run = tile_run},
    {.opcode = -1},
};
