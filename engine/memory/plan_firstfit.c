/* The "firstfit" planner: Samsung ONE's FirstFit.
 *
 * Buffers are taken in order of first use (ties: larger first, then lower index). Each goes
 * at the lowest offset where it overlaps none of the already placed buffers whose lifetimes
 * meet its own: the first gap between them that can hold it, or else just above the highest
 * of them. Sizes are rounded up to the alignment, so every offset is a multiple of it.
 * Buffers of size 0 take offset 0 and no space. O(n^2): each placement scans the placed
 * buffers. */
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "planners.h"

typedef struct ff_item {
    uint64_t size;
    int32_t first;
    int32_t idx;
} ff_item;

/* A placed buffer: [off, end) over steps [first, last]. Kept sorted by off. */
typedef struct ff_slot {
    uint64_t off, end;
    int32_t first, last;
} ff_slot;

static int ff_item_cmp(const void *a, const void *b)
{
    const ff_item *x = a, *y = b;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The lowest offset where `size` bytes over [first, last] fit among the ns placed slots
 * (sorted by offset): the first gap, scanning upwards, that is large enough. */
static uint64_t ff_offset(const ff_slot *slots, int32_t ns, uint64_t size, int32_t first,
                          int32_t last)
{
    uint64_t cur = 0; /* lowest free offset above the live slots seen so far */
    for (int32_t j = 0; j < ns; j++) {
        const ff_slot *s = &slots[j];
        if (s->last < first || s->first > last)
            continue;
        if (s->off >= cur && s->off - cur >= size)
            return cur;
        if (s->end > cur)
            cur = s->end;
    }
    return cur;
}

static int32_t ff_insert_pos(const ff_slot *slots, int32_t ns, uint64_t off)
{
    int32_t lo = 0, hi = ns;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (slots[mid].off <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static mp_status firstfit_plan(const mp_plan_buf *bufs, int32_t n, uint64_t align,
                               uint64_t *offsets, uint64_t *total, mp_mem *mem)
{
    *total = 0;
    if (n <= 0)
        return MP_OK;
    ff_item *items =
        mp_mem_alloc(mem, sizeof(ff_item) * (size_t)n, 0, MP_MEM_ENGINE, MP_OWNER_NONE);
    ff_slot *slots =
        mp_mem_alloc(mem, sizeof(ff_slot) * (size_t)n, 0, MP_MEM_ENGINE, MP_OWNER_NONE);
    if (!items || !slots) {
        mp_mem_free(mem, items);
        mp_mem_free(mem, slots);
        return MP_ERR_NOMEM;
    }

    int32_t m = 0;
    for (int32_t i = 0; i < n; i++) {
        offsets[i] = 0;
        if (bufs[i].size > 0)
            items[m++] = (ff_item){bufs[i].size, bufs[i].first, i};
    }
    qsort(items, (size_t)m, sizeof(ff_item), ff_item_cmp);

    uint64_t top = 0;
    for (int32_t k = 0; k < m; k++) {
        const mp_plan_buf *b = &bufs[items[k].idx];
        uint64_t size = mp_plan_align_up(b->size, align);
        uint64_t off = ff_offset(slots, k, size, b->first, b->last);
        int32_t p = ff_insert_pos(slots, k, off);
        memmove(slots + p + 1, slots + p, sizeof(ff_slot) * (size_t)(k - p));
        slots[p] = (ff_slot){off, off + size, b->first, b->last};
        offsets[items[k].idx] = off;
        if (off + size > top)
            top = off + size;
    }
    *total = top;

    mp_mem_free(mem, items);
    mp_mem_free(mem, slots);
    return MP_OK;
}

const mp_planner mp_planner_firstfit = {
    .name = "firstfit",
    .about = "in order of first use, each at the lowest offset that fits (Samsung ONE)",
    .plan = firstfit_plan,
};
