/* The "greedy" planner: greedy by size with best-fit gaps, as TensorFlow Lite's
 * ArenaPlanner and SimpleMemoryArena place tensors.
 *
 * Buffers are taken largest first (ties: earlier first step, then lower index). Each goes
 * into the smallest gap, between the already placed buffers whose lifetimes meet its own,
 * that can hold it (the lowest such gap on ties), or else just above the highest of them.
 * Sizes are rounded up to the alignment, so every offset is a multiple of it. Buffers of
 * size 0 take offset 0 and no space. O(n^2): each placement scans the placed buffers
 * (about half a millisecond for 1000 buffers at -O2). */
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "planners.h"

/* A buffer waiting to be placed, with its sort keys. */
typedef struct greedy_item {
    uint64_t size;
    int32_t first;
    int32_t idx;
} greedy_item;

/* A placed buffer: [off, end) over steps [first, last]. Kept sorted by off. */
typedef struct greedy_slot {
    uint64_t off, end;
    int32_t first, last;
} greedy_slot;

static int greedy_item_cmp(const void *a, const void *b)
{
    const greedy_item *x = a, *y = b;
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Where a buffer of `size` bytes over steps [first, last] goes among the ns placed slots.
 * hits (room for ns) receives the slots alive with it, in order of offset: a branch-free
 * first pass, since in real graphs most placed buffers are not alive at the same time. */
static uint64_t greedy_offset(const greedy_slot *slots, int32_t ns, int32_t *hits,
                              uint64_t size, int32_t first, int32_t last)
{
    int32_t nh = 0;
    for (int32_t j = 0; j < ns; j++) {
        hits[nh] = j;
        nh += (slots[j].last >= first) & (slots[j].first <= last);
    }

    uint64_t cur = 0;           /* lowest free offset above the slots seen so far */
    uint64_t best = UINT64_MAX; /* offset of the best gap found */
    uint64_t best_gap = UINT64_MAX;
    for (int32_t h = 0; h < nh; h++) {
        const greedy_slot *s = &slots[hits[h]];
        if (s->off >= cur && s->off - cur >= size && s->off - cur < best_gap) {
            best = cur;
            best_gap = s->off - cur;
            if (best_gap == size)
                break; /* an exact fit: no later gap can be better */
        }
        if (s->end > cur)
            cur = s->end;
    }
    return best != UINT64_MAX ? best : cur;
}

/* Index at which a slot at `off` is inserted: after every slot at or below it. */
static int32_t greedy_insert_pos(const greedy_slot *slots, int32_t ns, uint64_t off)
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

static mp_status greedy_plan(const mp_plan_buf *bufs, int32_t n, uint64_t align,
                             uint64_t *offsets, uint64_t *total, mp_mem *mem)
{
    *total = 0;
    if (n <= 0)
        return MP_OK;
    greedy_item *items = mp_mem_alloc(mem, sizeof(greedy_item) * (size_t)n, 0, MP_MEM_ENGINE,
                                      MP_OWNER_NONE);
    greedy_slot *slots = mp_mem_alloc(mem, sizeof(greedy_slot) * (size_t)n, 0, MP_MEM_ENGINE,
                                      MP_OWNER_NONE);
    int32_t *hits = mp_mem_alloc(mem, sizeof(int32_t) * (size_t)n, 0, MP_MEM_ENGINE,
                                 MP_OWNER_NONE);
    if (!items || !slots || !hits) {
        mp_mem_free(mem, items);
        mp_mem_free(mem, slots);
        mp_mem_free(mem, hits);
        return MP_ERR_NOMEM;
    }

    int32_t m = 0;
    for (int32_t i = 0; i < n; i++) {
        offsets[i] = 0;
        if (bufs[i].size > 0)
            items[m++] = (greedy_item){bufs[i].size, bufs[i].first, i};
    }
    qsort(items, (size_t)m, sizeof(greedy_item), greedy_item_cmp);

    uint64_t top = 0;
    for (int32_t k = 0; k < m; k++) {
        const mp_plan_buf *b = &bufs[items[k].idx];
        uint64_t size = mp_plan_align_up(b->size, align);
        uint64_t off = greedy_offset(slots, k, hits, size, b->first, b->last);
        int32_t p = greedy_insert_pos(slots, k, off);
        memmove(slots + p + 1, slots + p, sizeof(greedy_slot) * (size_t)(k - p));
        slots[p] = (greedy_slot){off, off + size, b->first, b->last};
        offsets[items[k].idx] = off;
        if (off + size > top)
            top = off + size;
    }
    *total = top;

    mp_mem_free(mem, items);
    mp_mem_free(mem, slots);
    mp_mem_free(mem, hits);
    return MP_OK;
}

const mp_planner mp_planner_greedy = {
    .name = "greedy",
    .about = "largest first, each into the smallest gap that fits (TensorFlow Lite's arena)",
    .plan = greedy_plan,
};
