/* The layout figures of one planned arena (mp_arena_report_layout of profile.h): bytes
 * used, bytes without reuse, the lower bound (most bytes live at once) and where it is
 * reached, and the free bytes at every operator. */
#include "analyzers/profile.h"

#include <stdlib.h>
#include <string.h>

typedef struct sweep_pt {
    int64_t at;
    int64_t delta;
} sweep_pt;

static int cmp_sweep(const void *pa, const void *pb)
{
    const sweep_pt *a = pa, *b = pb;
    if (a->at != b->at)
        return a->at < b->at ? -1 : 1;
    return (a->delta > b->delta) - (a->delta < b->delta); /* ends before starts */
}

static int cmp_slot(const void *pa, const void *pb)
{
    const mp_arena_slot *a = pa, *b = pb;
    if (a->offset != b->offset)
        return a->offset < b->offset ? -1 : 1;
    if (a->first_op != b->first_op)
        return a->first_op < b->first_op ? -1 : 1;
    return (a->tensor > b->tensor) - (a->tensor < b->tensor);
}

bool mp_arena_report_layout(mp_arena_report *a, uint64_t bytes, const mp_arena_slot *slots,
                            size_t n, int32_t n_ops)
{
    a->bytes = bytes;
    a->used = a->naive = a->lower_bound = a->frag_max = 0;
    a->lower_bound_op = -1;
    a->frag_max_op = -1;
    a->n_slots = n;
    a->slots = malloc((n + 1) * sizeof *a->slots);
    sweep_pt *sw = malloc((2 * n + 1) * sizeof *sw);
    a->n_ops = n_ops > 0 ? n_ops : 0;
    a->free_at_op = a->n_ops > 0 ? calloc((size_t)a->n_ops + 1, sizeof *a->free_at_op) : NULL;
    int64_t *diff = a->n_ops > 0 ? calloc((size_t)a->n_ops + 1, sizeof *diff) : NULL;
    if (!a->slots || !sw || (a->n_ops > 0 && (!a->free_at_op || !diff))) {
        free(sw);
        free(diff);
        mp_arena_report_free(a);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        const mp_arena_slot *d = &slots[i];
        int32_t last = d->last_op < d->first_op ? d->first_op : d->last_op;
        a->slots[i] = *d;
        if (d->offset + d->bytes > a->used)
            a->used = d->offset + d->bytes;
        a->naive += d->bytes;
        sw[2 * i] = (sweep_pt){d->first_op, (int64_t)d->bytes};
        sw[2 * i + 1] = (sweep_pt){(int64_t)last + 1, -(int64_t)d->bytes};
        if (diff) {
            int64_t lo = d->first_op < 0 ? 0 : d->first_op;
            int64_t hi = last >= a->n_ops ? a->n_ops - 1 : last;
            if (lo <= hi) {
                diff[lo] += (int64_t)d->bytes;
                diff[hi + 1] -= (int64_t)d->bytes;
            }
        }
    }
    qsort(a->slots, n, sizeof *a->slots, cmp_slot);
    qsort(sw, 2 * n, sizeof *sw, cmp_sweep);
    int64_t live = 0;
    for (size_t i = 0; i < 2 * n; i++) {
        live += sw[i].delta;
        if (live > 0 && (uint64_t)live > a->lower_bound) {
            a->lower_bound = (uint64_t)live;
            a->lower_bound_op = (int32_t)sw[i].at;
        }
    }
    if (diff) {
        live = 0;
        for (int32_t o = 0; o < a->n_ops; o++) {
            live += diff[o];
            uint64_t l = live > 0 ? (uint64_t)live : 0;
            a->free_at_op[o] = bytes > l ? bytes - l : 0;
            if (a->frag_max_op < 0 || a->free_at_op[o] > a->frag_max) {
                a->frag_max = a->free_at_op[o];
                a->frag_max_op = o;
            }
        }
    }
    free(sw);
    free(diff);
    return true;
}

void mp_arena_report_free(mp_arena_report *a)
{
    free(a->slots);
    free(a->free_at_op);
    memset(a, 0, sizeof *a);
}
