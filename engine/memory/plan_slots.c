/* Placed slots for the offset planners: the sorted list, the first-fit and best-fit scans
 * and the sorted insert that plan_greedy.c, plan_firstfit.c and plan_breadth.c share (see
 * plan_slots.h), and the one-at-a-time driver of greedy and firstfit. Each scan is O(n) in the placed slots, each insert O(n) for the move. */
#include "plan_slots.h"

#include <stdlib.h>
#include <string.h>

mp_status mp_plan_slots_init(mp_plan_slots *s, int32_t cap, mp_mem *mem)
{
    size_t c = cap > 0 ? (size_t)cap : 1;
    s->n = 0;
    s->mem = mem;
    s->slot = mp_mem_alloc(mem, sizeof(mp_plan_slot) * c, 0, MP_MEM_ENGINE, MP_OWNER_NONE);
    s->hits = mp_mem_alloc(mem, sizeof(int32_t) * c, 0, MP_MEM_ENGINE, MP_OWNER_NONE);
    if (!s->slot || !s->hits) {
        mp_plan_slots_free(s);
        return MP_ERR_NOMEM;
    }
    return MP_OK;
}

void mp_plan_slots_free(mp_plan_slots *s)
{
    mp_mem_free(s->mem, s->slot);
    mp_mem_free(s->mem, s->hits);
    s->slot = NULL;
    s->hits = NULL;
    s->n = 0;
}

uint64_t mp_plan_slots_first_fit(const mp_plan_slots *s, uint64_t size, int32_t first,
                                 int32_t last)
{
    uint64_t cur = 0; /* lowest free offset above the live slots seen so far */
    for (int32_t j = 0; j < s->n; j++) {
        const mp_plan_slot *t = &s->slot[j];
        if (t->last < first || t->first > last)
            continue;
        if (t->off >= cur && t->off - cur >= size)
            return cur;
        if (t->end > cur)
            cur = t->end;
    }
    return cur;
}

uint64_t mp_plan_slots_best_fit(const mp_plan_slots *s, uint64_t size, int32_t first,
                                int32_t last)
{
    /* First the slots alive with the buffer, in order of offset: a branch-free pass, since
     * in real graphs most placed buffers are not alive at the same time. */
    int32_t *hits = s->hits;
    int32_t nh = 0;
    for (int32_t j = 0; j < s->n; j++) {
        hits[nh] = j;
        nh += (s->slot[j].last >= first) & (s->slot[j].first <= last);
    }

    uint64_t cur = 0;           /* lowest free offset above the slots seen so far */
    uint64_t best = UINT64_MAX; /* offset of the best gap found */
    uint64_t best_gap = UINT64_MAX;
    for (int32_t h = 0; h < nh; h++) {
        const mp_plan_slot *t = &s->slot[hits[h]];
        if (t->off >= cur && t->off - cur >= size && t->off - cur < best_gap) {
            best = cur;
            best_gap = t->off - cur;
            if (best_gap == size)
                break; /* an exact fit: no later gap can be better */
        }
        if (t->end > cur)
            cur = t->end;
    }
    return best != UINT64_MAX ? best : cur;
}

void mp_plan_slots_insert(mp_plan_slots *s, uint64_t off, uint64_t size, int32_t first,
                          int32_t last)
{
    int32_t lo = 0, hi = s->n;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (s->slot[mid].off <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    memmove(s->slot + lo + 1, s->slot + lo, sizeof(mp_plan_slot) * (size_t)(s->n - lo));
    s->slot[lo] = (mp_plan_slot){off, off + size, first, last};
    s->n++;
}

int mp_plan_slots_by_size(const void *a, const void *b)
{
    const mp_plan_item *x = a, *y = b;
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

mp_status mp_plan_slots_run(const mp_plan_buf *bufs, int32_t n, uint64_t align,
                            uint64_t *offsets, uint64_t *total, mp_mem *mem,
                            int (*cmp)(const void *, const void *), int best_fit)
{
    *total = 0;
    if (n <= 0)
        return MP_OK;
    mp_plan_item *items = mp_mem_alloc(mem, sizeof(mp_plan_item) * (size_t)n, 0, MP_MEM_ENGINE,
                                       MP_OWNER_NONE);
    mp_plan_slots slots;
    if (!items || mp_plan_slots_init(&slots, n, mem) != MP_OK) {
        mp_mem_free(mem, items);
        return MP_ERR_NOMEM;
    }

    int32_t m = 0;
    for (int32_t i = 0; i < n; i++) {
        offsets[i] = 0;
        if (bufs[i].size > 0)
            items[m++] = (mp_plan_item){bufs[i].size, bufs[i].first, i};
    }
    qsort(items, (size_t)m, sizeof(mp_plan_item), cmp);

    uint64_t top = 0;
    for (int32_t k = 0; k < m; k++) {
        const mp_plan_buf *b = &bufs[items[k].idx];
        uint64_t size = mp_plan_align_up(b->size, align);
        uint64_t off = best_fit ? mp_plan_slots_best_fit(&slots, size, b->first, b->last)
                                : mp_plan_slots_first_fit(&slots, size, b->first, b->last);
        mp_plan_slots_insert(&slots, off, size, b->first, b->last);
        offsets[items[k].idx] = off;
        if (off + size > top)
            top = off + size;
    }
    *total = top;

    mp_mem_free(mem, items);
    mp_plan_slots_free(&slots);
    return MP_OK;
}
