/* NumPy broadcasting shared by the elementwise kernels (see broadcast.h). */
#include "engine/kernels/broadcast.h"

mp_status mp_node_broadcast_output(mp_node *n, int32_t count, const mp_tensor *const *ts)
{
    int32_t r = 0;
    for (int32_t k = 0; k < count; k++)
        r = ts[k]->rank > r ? ts[k]->rank : r;
    int32_t dims[MP_MAX_RANK];
    int32_t from[MP_MAX_RANK]; /* the tensor that set dims[i] (-1: none yet, all 1) */
    for (int32_t i = 0; i < r; i++) {
        dims[i] = 1;
        from[i] = -1;
        for (int32_t k = 0; k < count; k++) {
            int32_t j = i - (r - ts[k]->rank);
            int32_t d = j >= 0 ? ts[k]->dims[j] : 1;
            if (d == 1)
                continue;
            if (dims[i] != 1 && dims[i] != d) {
                const mp_tensor *a = ts[from[i]], *b = ts[k];
                char sa[96], sb[96];
                return mp_node_fail(n, MP_ERR_SHAPE, "cannot broadcast '%s' %s with '%s' %s",
                                    mp_tname(a), mp_shape_str(a->rank, a->dims, sa, sizeof sa),
                                    mp_tname(b), mp_shape_str(b->rank, b->dims, sb, sizeof sb));
            }
            dims[i] = d;
            from[i] = k;
        }
    }
    if (!mp_tensor_set_shape(n->out[0], r, dims)) {
        char so[96];
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' shape %s is too large",
                            mp_tname(n->out[0]), mp_shape_str(r, dims, so, sizeof so));
    }
    return MP_OK;
}

void mp_bc_plan_init(mp_bc_plan *p, int32_t count, const mp_tensor *const *ts)
{
    int32_t r = 0;
    for (int32_t k = 0; k < count; k++)
        r = ts[k]->rank > r ? ts[k]->rank : r;
    bool bc[MP_BC_MAX_OPERANDS][MP_MAX_RANK];
    p->n = count;
    p->rank = 0;
    p->elements = 1;
    for (int32_t i = 0; i < r; i++) {
        size_t ext[MP_BC_MAX_OPERANDS], d = 1;
        for (int32_t k = 0; k < count; k++) {
            int32_t j = i - (r - ts[k]->rank);
            ext[k] = j >= 0 ? (size_t)ts[k]->dims[j] : 1;
            if (ext[k] != 1)
                d = ext[k];
        }
        p->elements *= d;
        if (d == 1)
            continue;
        int32_t last = p->rank - 1;
        bool same = last >= 0;
        for (int32_t k = 0; k < count && same; k++)
            same = bc[k][last] == (ext[k] == 1);
        if (same) {
            p->dims[last] *= d;
        } else {
            p->dims[p->rank] = d;
            for (int32_t k = 0; k < count; k++)
                bc[k][p->rank] = ext[k] == 1;
            p->rank++;
        }
    }
    if (p->rank == 0) { /* every dimension is 1: a single element */
        p->rank = 1;
        p->dims[0] = 1;
        for (int32_t k = 0; k < count; k++)
            bc[k][0] = false;
    }
    for (int32_t k = 0; k < count; k++) {
        size_t step = 1;
        for (int32_t i = p->rank - 1; i >= 0; i--) {
            p->stride[k][i] = bc[k][i] ? 0 : step;
            if (!bc[k][i])
                step *= p->dims[i];
        }
    }
}
