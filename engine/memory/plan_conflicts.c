/* The "conflicts" planner: greedy by conflicts, one of the three algorithms of TVM's unified
 * static memory planner (USMP; beside greedy by size, our "greedy", and hill climbing, our
 * "search").
 *
 * A buffer's conflicts are the other buffers (of nonzero size) whose step ranges meet its
 * own: the ones it can never share bytes with. Buffers are taken most conflicts first (ties:
 * larger first, then earlier first step, then lower index), each at the lowest offset where
 * it overlaps none of the placed buffers it conflicts with, as USMP's greedy placement does.
 * Buffers of size 0 take offset 0 and no space. The conflicts are counted in O(n log n) (a
 * buffer over [a, b] meets every other one except those starting after b and those ending
 * before a, counted by binary search in the sorted first and last steps), the placement in
 * O(n log n + P log n) for P pairs of buffers alive together (plan_slots.h). */
#include <stdlib.h>

#include "engine/memory/plan.h"
#include "engine/memory/plan_slots.h"
#include "engine/memory/planners.h"

static int cf_i32_cmp(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return x < y ? -1 : x > y;
}

/* How many of the k sorted values are below v (strictly). */
static int32_t cf_count_below(const int32_t *v, int32_t k, int64_t x)
{
    int32_t lo = 0, hi = k;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (v[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int cf_item_cmp(const void *a, const void *b)
{
    const mp_plan_item *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank > y->rank ? -1 : 1;
    return mp_plan_slots_by_size(a, b);
}

static mp_status conflicts_plan(const mp_plan_buf *bufs, int32_t n, uint64_t align,
                                uint64_t *offsets, uint64_t *total, mp_mem *mem)
{
    *total = 0;
    if (n <= 0)
        return MP_OK;
    int32_t *firsts = mp_mem_alloc(mem, sizeof(int32_t) * (size_t)n, 0, MP_MEM_ENGINE,
                                   MP_OWNER_NONE);
    int32_t *lasts = mp_mem_alloc(mem, sizeof(int32_t) * (size_t)n, 0, MP_MEM_ENGINE,
                                  MP_OWNER_NONE);
    uint64_t *rank = mp_mem_alloc(mem, sizeof(uint64_t) * (size_t)n, 0, MP_MEM_ENGINE,
                                  MP_OWNER_NONE);
    if (!firsts || !lasts || !rank) {
        mp_mem_free(mem, firsts);
        mp_mem_free(mem, lasts);
        mp_mem_free(mem, rank);
        return MP_ERR_NOMEM;
    }
    /* buffers that take space and are alive at some step meet others */
    int32_t k = 0;
    for (int32_t i = 0; i < n; i++)
        if (bufs[i].size > 0 && bufs[i].first <= bufs[i].last) {
            firsts[k] = bufs[i].first;
            lasts[k++] = bufs[i].last;
        }
    qsort(firsts, (size_t)k, sizeof *firsts, cf_i32_cmp);
    qsort(lasts, (size_t)k, sizeof *lasts, cf_i32_cmp);
    for (int32_t i = 0; i < n; i++) {
        const mp_plan_buf *b = &bufs[i];
        rank[i] = 0;
        if (b->size == 0 || b->first > b->last)
            continue;
        int32_t after = k - cf_count_below(firsts, k, (int64_t)b->last + 1);
        int32_t before = cf_count_below(lasts, k, b->first);
        rank[i] = (uint64_t)(k - 1 - after - before); /* itself meets itself: not counted */
    }
    mp_mem_free(mem, firsts);
    mp_mem_free(mem, lasts);
    mp_status st = mp_plan_slots_run(bufs, n, align, offsets, total, mem, cf_item_cmp, rank, 0);
    mp_mem_free(mem, rank);
    return st;
}

const mp_planner mp_planner_conflicts = {
    .name = "conflicts",
    .about = "most lifetime conflicts first, each at the lowest offset that fits (TVM USMP)",
    .plan = conflicts_plan,
};
