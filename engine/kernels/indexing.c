/* Kernels: operators that find, count or place elements by their positions, in plain C after
 * TensorFlow Lite's where.cc, unique.cc, bucketize.cc, reverse_sequence.cc, matrix_diag.cc,
 * matrix_set_diag.cc, rank.cc and broadcast_args.cc.
 *
 * WHERE: the int64 coordinates [count, rank] of the condition's nonzero (true) elements in
 * row-major order; the condition is bool, float32, int32, int64, int8, uint8 or uint32 (the
 * newest where.cc's types; int16 and the others refused as there). count depends on the
 * values: computed at prepare for a constant condition, otherwise deferred.
 * UNIQUE: a vector's distinct values in the order of their first occurrence (values of
 * float32, int8, uint8, int16, int32 or int64) and, for every element, the position of its
 * value among them (int32 or int64 as idx_out_type says). The count is deferred unless the
 * input is known at prepare; the run sorts positions (mp_sort_positions) in two int32 per
 * element of scratch.
 * BUCKETIZE: for every element (float32, float64, int32, int64) the int32 number of
 * boundaries not above it (std::upper_bound over the ascending float32 boundaries option).
 * REVERSE_SEQUENCE: along seq_dim, the first seq_lengths[b] elements of batch b (batch_dim)
 * reversed, the rest copied (float32, uint8, int16, int32, int64); a length outside
 * [0, extent] fails the run.
 * MATRIX_DIAG: [..., N] -> [..., N, N] with the input on the diagonal, zeros elsewhere;
 * MATRIX_SET_DIAG: the input [..., M, N] with its diagonal replaced by [..., min(M, N)].
 * RANK: the input's rank as an int32 scalar (reads only the shape: known at prepare).
 * BROADCAST_ARGS: the broadcast shape of two int32 / int64 shape vectors (NumPy rules). */
#include "engine/kernels/kernel.h"
#include "engine/kernels/movement.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- helpers ---------------------------------------------------------------------------- */

static bool ix_known(const mp_tensor *t)
{
    return t->value_known && t->data;
}

static mp_status ix_unsupported(mp_node *n, const char *what, const mp_tensor *t,
                                const char *supported)
{
    return mp_node_fail(n, MP_ERR_UNSUPPORTED, "%s '%s' has dtype %s (supported: %s)", what,
                        mp_tname(t), mp_dtype_name(t->dtype), supported);
}

/* ---- WHERE ------------------------------------------------------------------------------ */

static bool where_dtype(mp_dtype dt)
{
    return dt == MP_DT_BOOL || dt == MP_DT_FLOAT32 || dt == MP_DT_INT32 ||
           dt == MP_DT_INT64 || dt == MP_DT_INT8 || dt == MP_DT_UINT8 || dt == MP_DT_UINT32;
}

static bool where_true(const mp_tensor *t, size_t i)
{
    const uint8_t *p = (const uint8_t *)t->data;
    switch (t->dtype) {
    case MP_DT_FLOAT32: {
        float v;
        memcpy(&v, p + 4 * i, 4);
        return v != 0.0f;
    }
    case MP_DT_INT32: return mp_tensor_index_at(t, i) != 0;
    case MP_DT_INT64: return mp_tensor_index_at(t, i) != 0;
    case MP_DT_UINT32: {
        uint32_t v;
        memcpy(&v, p + 4 * i, 4);
        return v != 0;
    }
    default: return p[i] != 0; /* bool, int8, uint8 */
    }
}

static mp_status where_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 1, 1, 0);
    if (st != MP_OK)
        return st;
    const mp_tensor *c = n->in[0];
    if (!where_dtype(c->dtype))
        return ix_unsupported(n, "condition", c, "bool, f32, i32, i64, i8, u8, u32");
    if (n->out[0]->dtype != MP_DT_INT64)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "output '%s' is %s; expected i64",
                            mp_tname(n->out[0]), mp_dtype_name(n->out[0]->dtype));
    if (!ix_known(c))
        return MP_ERR_DEFERRED;
    const size_t count = mp_tensor_elements(c);
    size_t found = 0;
    for (size_t i = 0; i < count; i++)
        found += where_true(c, i);
    if (found > INT32_MAX)
        return mp_node_fail(n, MP_ERR_SHAPE, "%zu true elements are too many", found);
    const int32_t dims[2] = {(int32_t)found, c->rank};
    return mp_node_set_output_shape(n, 2, dims);
}

static mp_status where_run(mp_node *n)
{
    const mp_tensor *c = n->in[0], *out = n->out[0];
    const size_t count = mp_tensor_elements(c), rows = (size_t)out->dims[0];
    if (out->rank != 2 || out->dims[1] != c->rank)
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' must have %d columns", mp_tname(out),
                            c->rank);
    int32_t idx[MP_MAX_RANK] = {0};
    int64_t *y = out->data;
    size_t row = 0;
    for (size_t i = 0; i < count; i++) {
        if (where_true(c, i)) {
            if (row == rows)
                return mp_node_fail(n, MP_ERR_SHAPE, "condition '%s' has more true elements "
                                    "than the %zu rows of '%s'", mp_tname(c), rows,
                                    mp_tname(out));
            for (int32_t d = 0; d < c->rank; d++)
                y[row * (size_t)c->rank + (size_t)d] = idx[d];
            row++;
        }
        mp_index_next(idx, c->dims, c->rank);
    }
    if (row != rows)
        return mp_node_fail(n, MP_ERR_SHAPE, "condition '%s' has %zu true elements, '%s' %zu "
                            "rows", mp_tname(c), row, mp_tname(out), rows);
    return MP_OK;
}

/* ---- UNIQUE ----------------------------------------------------------------------------- */

static bool unique_dtype(mp_dtype dt)
{
    return dt == MP_DT_FLOAT32 || dt == MP_DT_INT8 || dt == MP_DT_UINT8 || dt == MP_DT_INT16 ||
           dt == MP_DT_INT32 || dt == MP_DT_INT64;
}

typedef struct unique_vec {
    const void *x;
    mp_dtype dt;
} unique_vec;

/* -1, 0, 1 as element a is below, equal to or above element b (NaN above every number and
 * equal to NaN, so the order is total). */
static int unique_cmp(const unique_vec *v, int32_t a, int32_t b)
{
#define UQ_CMP(T)                                                                         \
    do {                                                                                  \
        const T va = ((const T *)v->x)[a], vb = ((const T *)v->x)[b];                     \
        return va < vb ? -1 : (vb < va ? 1 : 0);                                          \
    } while (0)
    switch (v->dt) {
    case MP_DT_FLOAT32: {
        const float va = ((const float *)v->x)[a], vb = ((const float *)v->x)[b];
        if (isnan(va) || isnan(vb))
            return (isnan(va) != 0) - (isnan(vb) != 0);
        return va < vb ? -1 : (vb < va ? 1 : 0);
    }
    case MP_DT_INT8: UQ_CMP(int8_t);
    case MP_DT_UINT8: UQ_CMP(uint8_t);
    case MP_DT_INT16: UQ_CMP(int16_t);
    case MP_DT_INT32: UQ_CMP(int32_t);
    default: UQ_CMP(int64_t);
    }
#undef UQ_CMP
}

static bool unique_before(const void *ctx, int32_t a, int32_t b)
{
    return unique_cmp(ctx, a, b) < 0;
}

/* Sort the positions of x (count elements) into a (b: count more as the merge buffer), then
 * leave in b, for every position, the first position holding its value; returns the number
 * of distinct values. */
static size_t unique_group(const unique_vec *v, int32_t *a, int32_t *b, size_t count)
{
    for (size_t i = 0; i < count; i++)
        a[i] = (int32_t)i;
    mp_sort_positions(a, b, count, unique_before, v);
    size_t groups = 0;
    int32_t first = 0;
    for (size_t k = 0; k < count; k++) {
        if (k == 0 || unique_cmp(v, a[k - 1], a[k]) != 0) {
            first = a[k]; /* the sort is stable: the lowest position of its value */
            groups++;
        }
        b[a[k]] = first;
    }
    return groups;
}

static mp_status unique_infer(mp_node *n)
{
    if (n->n_in != 1 || !n->in[0])
        return mp_node_fail(n, MP_ERR_FORMAT, "expects 1 input, has %d", n->n_in);
    if (n->n_out != 2 || !n->out[0] || !n->out[1])
        return mp_node_fail(n, MP_ERR_FORMAT, "expects 2 outputs (values, indices), has %d",
                            n->n_out);
    const mp_tensor *in = n->in[0];
    mp_tensor *vals = n->out[0], *idx = n->out[1];
    if (!unique_dtype(in->dtype))
        return ix_unsupported(n, "input", in, "f32, i8, u8, i16, i32, i64");
    mp_status st = mp_node_check_same_dtype(n, in, vals);
    if (st != MP_OK)
        return st;
    if (!mp_dtype_is_index(idx->dtype) || idx->dtype != (mp_dtype)n->opt->out_type)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "indices output '%s' is %s; idx_out_type "
                            "says %s (i32 or i64)", mp_tname(idx), mp_dtype_name(idx->dtype),
                            mp_dtype_name((mp_dtype)n->opt->out_type));
    if (in->rank != 1)
        return mp_node_fail(n, MP_ERR_SHAPE, "input '%s' must have rank 1, has %d",
                            mp_tname(in), in->rank);
    if (!mp_tensor_set_shape(idx, 1, in->dims))
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' is too large", mp_tname(idx));
    const size_t count = (size_t)in->dims[0];
    n->scratch_bytes = 2 * count * sizeof(int32_t);
    if (!ix_known(in))
        return MP_ERR_DEFERRED;
    size_t groups = 0;
    if (count > 0) {
        /* the count of distinct values is the output's shape: sorted here in a temporary of
         * our own (the scratch exists only once the shapes are known) */
        int32_t *tmp = mp_mem_alloc(n->mem, n->scratch_bytes, 0, MP_MEM_SCRATCH,
                                    MP_OWNER_OP(n->index));
        if (!tmp)
            return mp_node_fail(n, MP_ERR_NOMEM, "out of memory counting the values of '%s'",
                                mp_tname(in));
        const unique_vec v = {in->data, in->dtype};
        groups = unique_group(&v, tmp, tmp + count, count);
        mp_mem_free(n->mem, tmp);
    }
    const int32_t dims[1] = {(int32_t)groups};
    return mp_node_set_output_shape(n, 1, dims);
}

static mp_status unique_run(mp_node *n)
{
    const mp_tensor *in = n->in[0], *vals = n->out[0], *idx = n->out[1];
    const size_t count = (size_t)in->dims[0], es = mp_dtype_size(in->dtype);
    if (count == 0)
        return MP_OK;
    if (!n->scratch)
        return mp_node_fail(n, MP_ERR_ARG, "run without its scratch");
    int32_t *a = n->scratch, *b = a + count;
    const unique_vec v = {in->data, in->dtype};
    const size_t groups = unique_group(&v, a, b, count);
    if (vals->rank != 1 || (size_t)vals->dims[0] != groups)
        return mp_node_fail(n, MP_ERR_SHAPE, "input '%s' has %zu distinct values, output '%s' "
                            "room for %d", mp_tname(in), groups, mp_tname(vals),
                            vals->rank == 1 ? vals->dims[0] : -1);
    /* In order of first occurrence: a position that is the first of its value opens the
     * next distinct value (its number kept in a[position]); the others take their first's. */
    const uint8_t *x = in->data;
    uint8_t *y = vals->data;
    int32_t next = 0;
    for (size_t i = 0; i < count; i++) {
        int32_t u;
        if ((size_t)b[i] == i) {
            u = next++;
            memcpy(y + (size_t)u * es, x + i * es, es);
            a[i] = u;
        } else {
            u = a[b[i]];
        }
        if (idx->dtype == MP_DT_INT64)
            ((int64_t *)idx->data)[i] = u;
        else
            ((int32_t *)idx->data)[i] = u;
    }
    return MP_OK;
}

/* ---- BUCKETIZE -------------------------------------------------------------------------- */

static float bucket_bound(const mp_op_options *o, int32_t i)
{
    float b;
    memcpy(&b, (const uint8_t *)o->boundaries + 4 * (size_t)i, 4);
    return b;
}

static mp_status bucketize_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 1, 1, 0);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0];
    const mp_op_options *o = n->opt;
    if (in->dtype != MP_DT_FLOAT32 && in->dtype != MP_DT_FLOAT64 && in->dtype != MP_DT_INT32 &&
        in->dtype != MP_DT_INT64)
        return ix_unsupported(n, "input", in, "f32, f64, i32, i64");
    if (n->out[0]->dtype != MP_DT_INT32)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "output '%s' is %s; expected i32",
                            mp_tname(n->out[0]), mp_dtype_name(n->out[0]->dtype));
    if (o->n_boundaries < 0 || (o->n_boundaries > 0 && !o->boundaries))
        return mp_node_fail(n, MP_ERR_FORMAT, "has no boundaries");
    for (int32_t i = 0; i < o->n_boundaries; i++) {
        const float b = bucket_bound(o, i);
        if (isnan(b) || (i > 0 && b < bucket_bound(o, i - 1)))
            return mp_node_fail(n, MP_ERR_FORMAT, "boundaries must be sorted ascending: "
                                "boundary %d is %g", i, (double)b);
    }
    return mp_node_set_output_shape(n, in->rank, in->dims);
}

/* The number of boundaries b with !(x < b), i.e. the position of the first boundary above x
 * (a binary search, as std::upper_bound). LESS(x, b) compares in the input's arithmetic. */
#define BUCKET_LOOP(T, LESS)                                                              \
    do {                                                                                  \
        const T *x = in->data;                                                            \
        for (size_t i = 0; i < count; i++) {                                              \
            int32_t lo = 0, hi = nb;                                                      \
            while (lo < hi) {                                                             \
                const int32_t mid = lo + (hi - lo) / 2;                                   \
                if (LESS(x[i], bucket_bound(o, mid)))                                     \
                    hi = mid;                                                             \
                else                                                                      \
                    lo = mid + 1;                                                         \
            }                                                                             \
            y[i] = lo;                                                                    \
        }                                                                                 \
    } while (0)
#define BK_LESS(v, b) ((v) < (b))
#define BK_LESS_F(v, b) ((float)(v) < (b))

static mp_status bucketize_run(mp_node *n)
{
    const mp_tensor *in = n->in[0];
    const mp_op_options *o = n->opt;
    const size_t count = mp_tensor_elements(in);
    const int32_t nb = o->n_boundaries;
    int32_t *y = n->out[0]->data;
    switch (in->dtype) {
    case MP_DT_FLOAT32: BUCKET_LOOP(float, BK_LESS); break;
    case MP_DT_FLOAT64: BUCKET_LOOP(double, BK_LESS); break;
    case MP_DT_INT32: BUCKET_LOOP(int32_t, BK_LESS_F); break; /* int < float: as float */
    default: BUCKET_LOOP(int64_t, BK_LESS_F); break;
    }
    return MP_OK;
}

/* ---- REVERSE_SEQUENCE ------------------------------------------------------------------- */

static mp_status revseq_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 2, 2, 0);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0], *len = n->in[1];
    if (in->dtype != MP_DT_FLOAT32 && in->dtype != MP_DT_UINT8 && in->dtype != MP_DT_INT16 &&
        in->dtype != MP_DT_INT32 && in->dtype != MP_DT_INT64)
        return ix_unsupported(n, "input", in, "f32, u8, i16, i32, i64");
    if ((st = mp_node_check_same_dtype(n, in, n->out[0])) != MP_OK)
        return st;
    if (!mp_dtype_is_index(len->dtype))
        return ix_unsupported(n, "seq_lengths", len, "i32, i64");
    const int32_t sd = n->opt->seq_dim, bd = n->opt->batch_dim;
    if (sd < 0 || bd < 0 || sd == bd || sd >= in->rank || bd >= in->rank)
        return mp_node_fail(n, MP_ERR_SHAPE, "seq_dim %d and batch_dim %d must be two "
                            "different dimensions of '%s' (rank %d)", sd, bd, mp_tname(in),
                            in->rank);
    if (len->rank != 1 || len->dims[0] != in->dims[bd])
        return mp_node_fail(n, MP_ERR_SHAPE, "seq_lengths '%s' must be a vector of %d (the "
                            "extent of batch_dim %d)", mp_tname(len), in->dims[bd], bd);
    return mp_node_set_output_shape(n, in->rank, in->dims);
}

static mp_status revseq_run(mp_node *n)
{
    const mp_tensor *in = n->in[0], *len = n->in[1];
    const int32_t sd = n->opt->seq_dim, bd = n->opt->batch_dim, rank = in->rank;
    const int32_t steps = in->dims[sd];
    for (int32_t b = 0; b < in->dims[bd]; b++) {
        const int64_t l = mp_tensor_index_at(len, (size_t)b);
        if (l < 0 || l > steps)
            return mp_node_fail(n, MP_ERR_ARG, "seq_lengths '%s' element %d is %lld, outside "
                                "0 to %d (the extent of seq_dim %d)", mp_tname(len), b,
                                (long long)l, steps, sd);
    }
    const size_t count = mp_tensor_elements(in), es = mp_dtype_size(in->dtype);
    size_t stride[MP_MAX_RANK];
    size_t s = 1;
    for (int32_t d = rank - 1; d >= 0; d--) {
        stride[d] = s;
        s *= (size_t)in->dims[d];
    }
    int32_t idx[MP_MAX_RANK] = {0};
    const uint8_t *x = in->data;
    uint8_t *y = n->out[0]->data;
    for (size_t i = 0; i < count; i++, y += es) {
        const int64_t l = mp_tensor_index_at(len, (size_t)idx[bd]);
        size_t src = i;
        if (idx[sd] < l)
            src = i - (size_t)idx[sd] * stride[sd] + (size_t)(l - 1 - idx[sd]) * stride[sd];
        memcpy(y, x + src * es, es);
        mp_index_next(idx, in->dims, rank);
    }
    return MP_OK;
}

/* ---- MATRIX_DIAG, MATRIX_SET_DIAG ------------------------------------------------------- */

static bool diag_dtype(mp_dtype dt)
{
    return dt == MP_DT_FLOAT32 || dt == MP_DT_INT8 || dt == MP_DT_UINT8 || dt == MP_DT_INT16 ||
           dt == MP_DT_INT32 || dt == MP_DT_INT64 || dt == MP_DT_BOOL;
}

/* n_in inputs, the first of a dtype the diagonal kernels move, the output of its dtype. */
static mp_status diag_check(mp_node *n, int32_t n_in)
{
    mp_status st = mp_node_check_io(n, n_in, n_in, 0);
    if (st != MP_OK)
        return st;
    if (!diag_dtype(n->in[0]->dtype))
        return ix_unsupported(n, "input", n->in[0], "f32, i8, u8, i16, i32, i64, bool");
    return mp_node_check_same_dtype(n, n->in[0], n->out[0]);
}

/* The diagonals x ([batches, min(rows, cols)]) onto the matrices y ([batches, rows, cols]). */
static void diag_place(uint8_t *y, const uint8_t *x, size_t batches, size_t rows, size_t cols,
                       size_t es)
{
    const size_t side = rows < cols ? rows : cols;
    for (size_t b = 0; b < batches; b++)
        for (size_t i = 0; i < side; i++)
            memcpy(y + ((b * rows + i) * cols + i) * es, x + (b * side + i) * es, es);
}

static mp_status mdiag_infer(mp_node *n)
{
    mp_status st = diag_check(n, 1);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0];
    if (in->rank < 1 || in->rank + 1 > MP_MAX_RANK)
        return mp_node_fail(n, MP_ERR_SHAPE, "input '%s' has rank %d (1 to %d)", mp_tname(in),
                            in->rank, MP_MAX_RANK - 1);
    int32_t dims[MP_MAX_RANK];
    memcpy(dims, in->dims, sizeof(int32_t) * (size_t)in->rank);
    dims[in->rank] = in->dims[in->rank - 1];
    return mp_node_set_output_shape(n, in->rank + 1, dims);
}

static mp_status mdiag_run(mp_node *n)
{
    const mp_tensor *in = n->in[0], *out = n->out[0];
    const size_t es = mp_dtype_size(in->dtype), side = (size_t)in->dims[in->rank - 1];
    memset(out->data, 0, out->bytes); /* zero bits are 0, 0.0 and false alike */
    if (side > 0)
        diag_place(out->data, in->data, mp_tensor_elements(in) / side, side, side, es);
    return MP_OK;
}

static mp_status msetdiag_infer(mp_node *n)
{
    mp_status st = diag_check(n, 2);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0], *dg = n->in[1];
    if (dg->dtype != in->dtype)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "diagonal '%s' is %s but input '%s' is %s",
                            mp_tname(dg), mp_dtype_name(dg->dtype), mp_tname(in),
                            mp_dtype_name(in->dtype));
    char b1[96], b2[96];
    bool ok = in->rank >= 2 && dg->rank == in->rank - 1;
    for (int32_t d = 0; ok && d < dg->rank - 1; d++)
        ok = dg->dims[d] == in->dims[d];
    if (ok) {
        const int32_t m = in->dims[in->rank - 2], k = in->dims[in->rank - 1];
        ok = dg->dims[dg->rank - 1] == (m < k ? m : k);
    }
    if (!ok)
        return mp_node_fail(n, MP_ERR_SHAPE, "diagonal '%s' %s does not fit input '%s' %s "
                            "(expected [..., min(M, N)] for [..., M, N])", mp_tname(dg),
                            mp_shape_str(dg->rank, dg->dims, b1, sizeof b1), mp_tname(in),
                            mp_shape_str(in->rank, in->dims, b2, sizeof b2));
    return mp_node_set_output_shape(n, in->rank, in->dims);
}

static mp_status msetdiag_run(mp_node *n)
{
    const mp_tensor *in = n->in[0], *dg = n->in[1], *out = n->out[0];
    const size_t es = mp_dtype_size(in->dtype);
    const size_t rows = (size_t)in->dims[in->rank - 2], cols = (size_t)in->dims[in->rank - 1];
    const size_t side = rows < cols ? rows : cols;
    if (out->data != in->data)
        memcpy(out->data, in->data, in->bytes);
    if (side > 0)
        diag_place(out->data, dg->data, mp_tensor_elements(in) / (rows * cols), rows, cols, es);
    return MP_OK;
}

/* ---- RANK ------------------------------------------------------------------------------- */

static mp_status rank_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 1, 1, 0);
    if (st != MP_OK)
        return st;
    if (n->out[0]->dtype != MP_DT_INT32)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "output '%s' is %s; expected i32",
                            mp_tname(n->out[0]), mp_dtype_name(n->out[0]->dtype));
    return mp_node_set_output_shape(n, 0, NULL);
}

/* Reads only the input's shape: the session runs it at prepare. */
static mp_status rank_run(mp_node *n)
{
    const int32_t r = n->in[0]->rank;
    memcpy(n->out[0]->data, &r, sizeof r);
    return MP_OK;
}

/* ---- BROADCAST_ARGS --------------------------------------------------------------------- */

static mp_status bargs_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 2, 2, 0);
    if (st != MP_OK)
        return st;
    const mp_tensor *a = n->in[0], *b = n->in[1], *out = n->out[0];
    if (!mp_dtype_is_index(a->dtype) || b->dtype != a->dtype || out->dtype != a->dtype)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "shapes '%s' (%s), '%s' (%s) and output "
                            "'%s' (%s) must all be i32 or all i64", mp_tname(a),
                            mp_dtype_name(a->dtype), mp_tname(b), mp_dtype_name(b->dtype),
                            mp_tname(out), mp_dtype_name(out->dtype));
    if (a->rank != 1 || b->rank != 1)
        return mp_node_fail(n, MP_ERR_SHAPE, "shapes '%s' and '%s' must be vectors (ranks %d "
                            "and %d)", mp_tname(a), mp_tname(b), a->rank, b->rank);
    const int32_t len[1] = {a->dims[0] > b->dims[0] ? a->dims[0] : b->dims[0]};
    return mp_node_set_output_shape(n, 1, len);
}

static mp_status bargs_run(mp_node *n)
{
    const mp_tensor *a = n->in[0], *b = n->in[1], *out = n->out[0];
    const int32_t la = a->dims[0], lb = b->dims[0], lo = out->dims[0];
    for (int32_t i = 0; i < lo; i++) {
        /* trailing dimensions aligned; a shorter shape counts as 1 in front */
        const int32_t ia = i - (lo - la), ib = i - (lo - lb);
        const int64_t da = ia >= 0 ? mp_tensor_index_at(a, (size_t)ia) : 1;
        const int64_t db = ib >= 0 ? mp_tensor_index_at(b, (size_t)ib) : 1;
        if (da < 0 || db < 0 || (da != db && da != 1 && db != 1))
            return mp_node_fail(n, MP_ERR_SHAPE, "shapes '%s' and '%s' do not broadcast: "
                                "dimension %d is %lld and %lld", mp_tname(a), mp_tname(b), i,
                                (long long)da, (long long)db);
        const int64_t d = da == 1 ? db : da;
        if (out->dtype == MP_DT_INT64)
            ((int64_t *)out->data)[i] = d;
        else
            ((int32_t *)out->data)[i] = (int32_t)d;
    }
    return MP_OK;
}

const mp_kernel mp_kernels_indexing[] = {
    {.opcode = MP_OP_WHERE, .min_inputs = 1, .max_inputs = 1, .n_outputs = 1,
     .infer = where_infer, .run = where_run},
    {.opcode = MP_OP_UNIQUE, .min_inputs = 1, .max_inputs = 1, .n_outputs = 2,
     .infer = unique_infer, .run = unique_run},
    {.opcode = MP_OP_BUCKETIZE, .min_inputs = 1, .max_inputs = 1, .n_outputs = 1,
     .infer = bucketize_infer, .run = bucketize_run},
    {.opcode = MP_OP_REVERSE_SEQUENCE, .min_inputs = 2, .max_inputs = 2, .n_outputs = 1,
     .infer = revseq_infer, .run = revseq_run},
    {.opcode = MP_OP_MATRIX_DIAG, .min_inputs = 1, .max_inputs = 1, .n_outputs = 1,
     .infer = mdiag_infer, .run = mdiag_run},
    {.opcode = MP_OP_MATRIX_SET_DIAG, .min_inputs = 2, .max_inputs = 2, .n_outputs = 1,
     .infer = msetdiag_infer, .run = msetdiag_run},
    {.opcode = MP_OP_RANK, .reads_shapes_only = true, .min_inputs = 1, .max_inputs = 1,
     .n_outputs = 1, .infer = rank_infer, .run = rank_run},
    {.opcode = MP_OP_BROADCAST_ARGS, .min_inputs = 2, .max_inputs = 2, .n_outputs = 1,
     .infer = bargs_infer, .run = bargs_run},
    {.opcode = -1},
};
