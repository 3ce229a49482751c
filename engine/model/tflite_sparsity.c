/* Sparse constant tensors (part of the reader, see tflite_reader.c): TensorFlow Lite's
 * SparsityParameters read, verified against the tensor's shape and its stored values, and
 * expanded at load time into the dense row-major tensor, held in model memory, so every kernel
 * sees an ordinary dense constant (DENSIFY is then a copy).
 *
 * The format (schema.fbs; TensorFlow Lite's sparsity_format_converter.cc turns it back into
 * the dense tensor the same way): a tensor of rank n, cut into blocks along k of its
 * dimensions (block_map[j] is the dimension that block dimension n + j divides), is stored as
 * n + k levels; level L traverses dimension traversal_order[L], the first n levels the
 * tensor's dimensions (a permutation of 0..n-1; a dimension cut into blocks counts its
 * blocks there), the last k the block dimensions (a permutation of n..n+k-1; always DENSE,
 * their dense_size is the block size). A level is DENSE (dense_size positions under each
 * position of the level above) or SPARSE_CSR (position p of the level above owns the
 * positions array_segments[p] .. array_segments[p + 1] - 1, each naming its coordinate in
 * array_indices; both are an Int32Vector, Uint16Vector or Uint8Vector). The positions of the
 * last level are the stored values, in order; every element not stored is zero.
 *
 * Checked before anything is written: traversal_order and block_map as above (block_map
 * naming distinct dimensions), one dim_metadata per level, every DENSE level's dense_size
 * equal to the extent of what it traverses, block sizes at least 1 and dividing their
 * dimension; for a SPARSE_CSR level one segment bound more than the positions above it,
 * starting at 0, never decreasing and ending at the count of indices, the indices inside the
 * dimension's extent and increasing within a segment; the buffer holding exactly the values
 * the last level counts. Every count is a size_t bounded by the file or the tensor's element
 * count (at most MP_MAX_TENSOR_BYTES), products checked. A fault is MP_ERR_FORMAT naming the
 * tensor and the fault; a sparse tensor of a dtype without a fixed size is MP_ERR_UNSUPPORTED.
 *
 * The dense copy is zeroed model memory (mp_tfl_alloc, with MP_MODEL_TAIL_SLACK readable
 * bytes after it as after the file's constants): heap the model holds, so it counts in
 * heap_bytes (and in dense_bytes), never in const_bytes, as a misaligned constant's copy.
 * All dense copies of a model together stay under dense_limit. */
#include "engine/model/tflite_reader_internal.h"

#include <stdio.h>
#include <string.h>

#include "engine/model/flatbuf.h"
#include "engine/model/model.h"

/* Field ids (schema.fbs order; a union takes two ids, type then value). */
enum { SP_TRAVERSAL_ORDER = 0, SP_BLOCK_MAP = 1, SP_DIM_METADATA = 2 };
enum { DM_FORMAT = 0, DM_DENSE_SIZE = 1, DM_SEGMENTS_TYPE = 2, DM_SEGMENTS = 3,
       DM_INDICES_TYPE = 4, DM_INDICES = 5 };
enum { DIM_DENSE = 0, DIM_SPARSE_CSR = 1 };
/* SparseIndexVector union members; their tables hold one vector, `values` (id 0). */
enum { SIV_INT32 = 1, SIV_UINT16 = 2, SIV_UINT8 = 3 };

#define SP_MAX_LEVELS (2 * MP_MAX_RANK)

/* array_segments or array_indices of a level: n entries of `width` bytes at p. */
typedef struct sp_ivec {
    const uint8_t *p;
    uint32_t n;
    uint8_t width;
} sp_ivec;

typedef struct sp_level {
    int32_t dim;      /* traversed: a dimension (< rank) or a block dimension (rank + j) */
    bool sparse;      /* SPARSE_CSR */
    size_t extent;    /* positions along what it traverses */
    size_t stride;    /* dense elements one step along it moves */
    sp_ivec seg, idx; /* SPARSE_CSR only */
} sp_level;

typedef struct sp_plan {
    int32_t n_levels;
    sp_level lv[SP_MAX_LEVELS];
    size_t count[SP_MAX_LEVELS + 1]; /* positions at each level (count[0] = 1, the root);
                                        count[n_levels]: the stored values */
} sp_plan;

/* The dense copies of one model may take at most 64 times its file plus 64 MiB: far beyond
 * what pruned models compress (a 98%-sparse model needs 50 times), yet a hostile file of a few
 * bytes cannot make the reader fill gigabytes of zeros. */
static size_t dense_limit(size_t file_bytes)
{
    size_t b;
    if (__builtin_mul_overflow(file_bytes, (size_t)64, &b) ||
        __builtin_add_overflow(b, (size_t)64 << 20, &b))
        return SIZE_MAX;
    return b;
}

static int64_t ivec_at(const sp_ivec *v, size_t k)
{
    const uint8_t *q = v->p + k * v->width;
    if (v->width == 4) {
        int32_t x;
        memcpy(&x, q, 4);
        return x;
    }
    if (v->width == 2) {
        uint16_t x;
        memcpy(&x, q, 2);
        return x;
    }
    return *q;
}

/* "[0,1,2,3]" of a verified int32 vector (cut short when long). */
static const char *list_str(const mp_fb_reader *fb, const mp_fb_vec *v, char *buf, size_t cap)
{
    size_t at = 0;
    buf[at++] = '[';
    for (uint32_t k = 0; k < v->n && at + 16 < cap; k++)
        at += (size_t)snprintf(buf + at, cap - at, "%s%d", k ? "," : "", mp_fb_vec_i32(fb, v, k));
    snprintf(buf + at, cap - at, "]");
    return buf;
}

/* The SparseIndexVector union at ids type_id / type_id + 1 of level L's table dm. */
static mp_status read_ivec(rd *r, int32_t i, const char *nm, int32_t L, const mp_fb_table *dm,
                           unsigned type_id, const char *what, sp_ivec *v)
{
    mp_fb_reader *fb = &r->fb;
    uint8_t type;
    mp_fb_table t;
    mp_fb_vec vec;
    TRY_FB(mp_fb_u8(fb, dm, type_id, 0, what, &type));
    if (type < SIV_INT32 || type > SIV_UINT8)
        return mp_tfl_fail(r, MP_ERR_FORMAT,
                           "tensor %d '%s': sparsity level %d is SPARSE_CSR but its %s has union "
                           "type %u (expected 1 Int32Vector, 2 Uint16Vector or 3 Uint8Vector)",
                           i, nm, L, what, type);
    TRY_FB(mp_fb_sub_table(fb, dm, type_id + 1, what, &t));
    if (!t.present)
        return mp_tfl_fail(r, MP_ERR_FORMAT, "tensor %d '%s': sparsity level %d has no %s", i,
                           nm, L, what);
    v->width = type == SIV_INT32 ? 4 : type == SIV_UINT16 ? 2 : 1;
    TRY_FB(mp_fb_vector(fb, &t, 0, v->width, what, &vec));
    v->n = vec.n;
    v->p = mp_fb_vec_data(fb, &vec);
    return MP_OK;
}

/* traversal_order and block_map against the rank; then each level's table: what it traverses,
 * its format, its extent and stride in the dense tensor, its index vectors. */
static mp_status read_levels(rd *r, int32_t i, const char *nm, const mp_fb_table *sp,
                             const mp_tensor_info *ti, sp_plan *p)
{
    mp_fb_reader *fb = &r->fb;
    mp_fb_vec order, bmap, dims;
    char lb[120];
    mp_fb_where(fb, "tensor %d sparsity", i);
    TRY_FB(mp_fb_vector(fb, sp, SP_TRAVERSAL_ORDER, 4, "traversal_order", &order) &&
           mp_fb_vector(fb, sp, SP_BLOCK_MAP, 4, "block_map", &bmap) &&
           mp_fb_vector(fb, sp, SP_DIM_METADATA, 4, "dim_metadata", &dims));
    const int32_t rank = ti->rank;
    if (bmap.n > (uint32_t)rank)
        return mp_tfl_fail(r, MP_ERR_FORMAT,
                           "tensor %d '%s': sparsity block_map has %u entries for a tensor of rank %d",
                           i, nm, bmap.n, rank);
    const int32_t nb = (int32_t)bmap.n, n = rank + nb;
    int32_t block_of[MP_MAX_RANK], block_size[MP_MAX_RANK];
    for (int32_t d = 0; d < rank; d++)
        block_of[d] = -1;
    for (int32_t j = 0; j < nb; j++) {
        int32_t d = mp_fb_vec_i32(fb, &bmap, (uint32_t)j);
        if (d < 0 || d >= rank || block_of[d] >= 0)
            return mp_tfl_fail(r, MP_ERR_FORMAT,
                               "tensor %d '%s': sparsity block_map %s must name distinct dimensions "
                               "of the tensor (rank %d)", i, nm, list_str(fb, &bmap, lb, sizeof lb), rank);
        block_of[d] = j;
    }
    bool seen[SP_MAX_LEVELS] = {false};
    bool perm = order.n == (uint32_t)n;
    for (int32_t L = 0; perm && L < n; L++) {
        int32_t e = mp_fb_vec_i32(fb, &order, (uint32_t)L);
        int32_t lo = L < rank ? 0 : rank, hi = L < rank ? rank : n;
        perm = e >= lo && e < hi && !seen[e];
        if (perm)
            seen[e] = true;
    }
    if (!perm)
        return mp_tfl_fail(r, MP_ERR_FORMAT,
                           "tensor %d '%s': sparsity traversal_order %s is not a permutation of the "
                           "dimensions 0..%d followed by one of the %d block dimensions",
                           i, nm, list_str(fb, &order, lb, sizeof lb), rank - 1, nb);
    if (dims.n != (uint32_t)n)
        return mp_tfl_fail(r, MP_ERR_FORMAT,
                           "tensor %d '%s': sparsity dim_metadata has %u levels but traversal_order has %d",
                           i, nm, dims.n, n);

    /* Each level's table; the block levels give the block sizes. */
    mp_fb_table dm[SP_MAX_LEVELS];
    int32_t dense_size[SP_MAX_LEVELS];
    p->n_levels = n;
    for (int32_t L = 0; L < n; L++) {
        sp_level *l = &p->lv[L];
        uint8_t format;
        memset(l, 0, sizeof *l);
        l->dim = mp_fb_vec_i32(fb, &order, (uint32_t)L);
        mp_fb_where(fb, "tensor %d sparsity level %d", i, L);
        TRY_FB(mp_fb_vec_table(fb, &dims, (uint32_t)L, "dim_metadata", &dm[L]) &&
               mp_fb_u8(fb, &dm[L], DM_FORMAT, DIM_DENSE, "format", &format) &&
               mp_fb_i32(fb, &dm[L], DM_DENSE_SIZE, 0, "dense_size", &dense_size[L]));
        if (format != DIM_DENSE && format != DIM_SPARSE_CSR)
            return mp_tfl_fail(r, MP_ERR_FORMAT,
                               "tensor %d '%s': sparsity level %d has format %u (0 DENSE or 1 SPARSE_CSR)",
                               i, nm, L, format);
        l->sparse = format == DIM_SPARSE_CSR;
        if (L < rank)
            continue;
        const int32_t j = l->dim - rank, d = mp_fb_vec_i32(fb, &bmap, (uint32_t)j);
        if (l->sparse)
            return mp_tfl_fail(r, MP_ERR_FORMAT,
                               "tensor %d '%s': sparsity level %d (block dimension %d) is SPARSE_CSR; "
                               "blocks are stored dense", i, nm, L, l->dim);
        if (dense_size[L] < 1 || ti->shape[d] % dense_size[L] != 0)
            return mp_tfl_fail(r, MP_ERR_FORMAT,
                               "tensor %d '%s': sparsity block size %d (level %d) does not divide "
                               "dimension %d (%d)", i, nm, dense_size[L], L, d, ti->shape[d]);
        block_size[j] = dense_size[L];
    }

    /* Extents and strides: a blocked dimension moves a whole block per step. */
    size_t row[MP_MAX_RANK];
    size_t s = 1;
    for (int32_t d = rank - 1; d >= 0; d--) {
        row[d] = s;
        s *= (size_t)ti->shape[d]; /* the element count fits: checked by the caller */
    }
    for (int32_t L = 0; L < n; L++) {
        sp_level *l = &p->lv[L];
        if (l->dim < rank) {
            int32_t j = block_of[l->dim];
            size_t bs = j >= 0 ? (size_t)block_size[j] : 1;
            l->extent = (size_t)ti->shape[l->dim] / bs;
            l->stride = row[l->dim] * bs;
        } else {
            int32_t j = l->dim - rank;
            l->extent = (size_t)block_size[j];
            l->stride = row[mp_fb_vec_i32(fb, &bmap, (uint32_t)j)];
        }
        if (!l->sparse) {
            if (dense_size[L] < 0 || (size_t)dense_size[L] != l->extent)
                return mp_tfl_fail(r, MP_ERR_FORMAT,
                                   "tensor %d '%s': sparsity level %d is DENSE with dense_size %d but "
                                   "dimension %d has %zu positions there", i, nm, L, dense_size[L],
                                   l->dim, l->extent);
            continue;
        }
        mp_fb_where(fb, "tensor %d sparsity level %d", i, L);
        TRY(read_ivec(r, i, nm, L, &dm[L], DM_SEGMENTS_TYPE, "array_segments", &l->seg));
        TRY(read_ivec(r, i, nm, L, &dm[L], DM_INDICES_TYPE, "array_indices", &l->idx));
    }
    return MP_OK;
}

/* Level L (SPARSE_CSR) under p->count[L] positions: its segments and indices. */
static mp_status check_sparse_level(rd *r, int32_t i, const char *nm, sp_plan *p, int32_t L)
{
    const sp_level *l = &p->lv[L];
    const size_t above = p->count[L], n_idx = l->idx.n;
    if (above >= UINT32_MAX || l->seg.n != above + 1)
        return mp_tfl_fail(r, MP_ERR_FORMAT,
                           "tensor %d '%s': sparsity level %d has %u array_segments but the %zu "
                           "positions above it need %zu", i, nm, L, l->seg.n, above, above + 1);
    int64_t prev = ivec_at(&l->seg, 0);
    if (prev != 0)
        return mp_tfl_fail(r, MP_ERR_FORMAT,
                           "tensor %d '%s': sparsity level %d: array_segments starts at %lld, not 0",
                           i, nm, L, (long long)prev);
    for (size_t q = 1; q <= above; q++) {
        int64_t end = ivec_at(&l->seg, q);
        if (end < prev)
            return mp_tfl_fail(r, MP_ERR_FORMAT,
                               "tensor %d '%s': sparsity level %d: array_segments decreases at entry "
                               "%zu (%lld after %lld)", i, nm, L, q, (long long)end, (long long)prev);
        if ((uint64_t)end > n_idx)
            return mp_tfl_fail(r, MP_ERR_FORMAT,
                               "tensor %d '%s': sparsity level %d: array_segments[%zu] = %lld is past "
                               "the %zu array_indices", i, nm, L, q, (long long)end, n_idx);
        for (size_t k = (size_t)prev; k < (size_t)end; k++) {
            int64_t x = ivec_at(&l->idx, k);
            if (x < 0 || (uint64_t)x >= l->extent)
                return mp_tfl_fail(r, MP_ERR_FORMAT,
                                   "tensor %d '%s': sparsity level %d: array_indices[%zu] = %lld is "
                                   "out of range for dimension %d (%zu positions)", i, nm, L, k,
                                   (long long)x, l->dim, l->extent);
            if (k > (size_t)prev && x <= ivec_at(&l->idx, k - 1))
                return mp_tfl_fail(r, MP_ERR_FORMAT,
                                   "tensor %d '%s': sparsity level %d: array_indices[%zu] = %lld does "
                                   "not increase within its segment", i, nm, L, k, (long long)x);
        }
        prev = end;
    }
    if ((uint64_t)prev != n_idx)
        return mp_tfl_fail(r, MP_ERR_FORMAT,
                           "tensor %d '%s': sparsity level %d: array_segments ends at %lld but there "
                           "are %zu array_indices", i, nm, L, (long long)prev, n_idx);
    p->count[L + 1] = n_idx;
    return MP_OK;
}

/* The positions of every level, down to the count of stored values. A DENSE level multiplies
 * them by its extent (bounded by the element count: each position is a distinct prefix of
 * coordinates); a SPARSE_CSR level has as many as it has indices. */
static mp_status count_positions(rd *r, int32_t i, const char *nm, sp_plan *p)
{
    p->count[0] = 1;
    for (int32_t L = 0; L < p->n_levels; L++) {
        if (p->lv[L].sparse) {
            TRY(check_sparse_level(r, i, nm, p, L));
        } else if (__builtin_mul_overflow(p->count[L], p->lv[L].extent, &p->count[L + 1])) {
            return mp_tfl_fail(r, MP_ERR_FORMAT, "tensor %d '%s': sparsity level %d: positions overflow",
                               i, nm, L);
        }
    }
    return MP_OK;
}

/* Write the values under position `pos` of level L (dense offset `off` so far) into dst, taking
 * them from src in order (*next: the next value). Depth at most SP_MAX_LEVELS; every offset
 * stays below the element count (each coordinate is below its level's extent). */
static void expand(const sp_plan *p, int32_t L, size_t pos, size_t off, const uint8_t *src,
                   uint8_t *dst, size_t es, size_t *next)
{
    if (L == p->n_levels) {
        memcpy(dst + off * es, src + *next * es, es);
        (*next)++;
        return;
    }
    const sp_level *l = &p->lv[L];
    if (!l->sparse) {
        for (size_t c = 0; c < l->extent; c++)
            expand(p, L + 1, pos * l->extent + c, off + c * l->stride, src, dst, es, next);
        return;
    }
    const size_t end = (size_t)ivec_at(&l->seg, pos + 1);
    for (size_t k = (size_t)ivec_at(&l->seg, pos); k < end; k++)
        expand(p, L + 1, k, off + (size_t)ivec_at(&l->idx, k) * l->stride, src, dst, es, next);
}

mp_status mp_tfl_read_sparse(rd *r, int32_t i, const char *nm, const mp_fb_table *sp,
                             const uint8_t *data, size_t bytes, size_t elements,
                             mp_tensor_info *ti)
{
    const size_t es = mp_dtype_size(ti->dtype);
    if (es == 0)
        return mp_tfl_fail(r, MP_ERR_UNSUPPORTED, "tensor %d '%s': sparse %s tensors are not supported",
                           i, nm, mp_dtype_name(ti->dtype));
    if (!data)
        return mp_tfl_fail(r, MP_ERR_FORMAT,
                           "tensor %d '%s' is sparse but has no data (a sparse tensor is a constant)",
                           i, nm);
    sp_plan p;
    TRY(read_levels(r, i, nm, sp, ti, &p));
    TRY(count_positions(r, i, nm, &p));
    const size_t values = p.count[p.n_levels];
    if (bytes % es != 0 || bytes / es != values)
        return mp_tfl_fail(r, MP_ERR_FORMAT,
                           "tensor %d '%s': sparse data is %zu bytes but its sparsity stores %zu %s "
                           "values (%zu bytes)", i, nm, bytes, values, mp_dtype_name(ti->dtype),
                           values * es);

    /* The dense copy, checked against the limit of all of them, then outside the bookkeeping
     * budget (it is data, not tables). */
    size_t dense, total;
    const size_t limit = dense_limit(r->fb.size);
    if (__builtin_mul_overflow(elements, es, &dense) ||
        __builtin_add_overflow(r->densified, dense, &total) || total > limit)
        return mp_tfl_fail(r, MP_ERR_UNSUPPORTED,
                           "tensor %d '%s': its dense form would bring the model's densified sparse "
                           "tensors past %zu bytes, memprof's limit for a %zu-byte file (64 times "
                           "the file plus 64 MiB)", i, nm, limit, r->fb.size);
    uint8_t *out = mp_tfl_data(r->im, dense);
    if (!out)
        return mp_tfl_nomem(r);
    r->densified = total;
    r->m->dense_bytes += dense;

    size_t next = 0;
    expand(&p, 0, 0, 0, data, out, es, &next);
    ti->data = out;
    ti->data_bytes = dense;
    return MP_OK;
}
