/* The "breadth" planner: greedy by breadth (Pisarchyk & Lee 2020, "Efficient Memory
 * Management for Deep Neural Net Inference").
 *
 * The breadth of a step is the sum of the aligned sizes of the buffers alive at it. Steps
 * are taken widest first (ties: earlier step first); at each, its buffers not yet placed
 * are taken largest first (ties: earlier first step, then lower index) and each goes into
 * the smallest gap, between the placed buffers whose lifetimes meet its own, that can hold
 * it (the lowest such gap on ties), or else just above the highest of them.
 *
 * Only the steps where some buffer starts are visited: the buffers alive at any other step
 * are alive at the last such step before it too, which is at least as wide and earlier, so
 * it has placed them already. Every buffer is alive at its own first step, so every one is
 * placed. Buffers of size 0 take offset 0 and no space. O(n log n + P log n) for P pairs of
 * buffers alive together: the breadths take a sorted sweep, each visited step asks the
 * waiting buffers' tree of plan_slots.h for those alive at it, and each placement asks the
 * placed buffers' tree for its neighbours. */
#include <stdlib.h>
#include <string.h>

#include "engine/memory/plan.h"
#include "engine/memory/plan_slots.h"
#include "engine/memory/planners.h"

typedef struct br_step {
    uint64_t breadth;
    int32_t step;
} br_step;

static int br_step_by_step(const void *a, const void *b)
{
    const br_step *x = a, *y = b;
    return x->step < y->step ? -1 : x->step > y->step;
}

static int br_step_by_breadth(const void *a, const void *b)
{
    const br_step *x = a, *y = b;
    if (x->breadth != y->breadth)
        return x->breadth > y->breadth ? -1 : 1;
    return x->step < y->step ? -1 : x->step > y->step;
}

/* The index of the first of the nsteps sorted steps that is above `step`. */
static int32_t br_step_find(const br_step *steps, int32_t nsteps, int64_t step)
{
    int32_t lo = 0, hi = nsteps;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (steps[mid].step <= step)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static mp_status breadth_plan(const mp_plan_buf *bufs, int32_t n, uint64_t align,
                              uint64_t *offsets, uint64_t *total, mp_mem *mem)
{
    *total = 0;
    if (n <= 0)
        return MP_OK;
    mp_plan_item *items =
        mp_mem_alloc(mem, sizeof(mp_plan_item) * (size_t)n, 0, MP_MEM_ENGINE, MP_OWNER_NONE);
    br_step *steps =
        mp_mem_alloc(mem, sizeof(br_step) * (size_t)n, 0, MP_MEM_ENGINE, MP_OWNER_NONE);
    mp_plan_slots slots;
    if (!items || !steps || mp_plan_slots_init(&slots, bufs, n, mem) != MP_OK) {
        mp_mem_free(mem, items);
        mp_mem_free(mem, steps);
        return MP_ERR_NOMEM;
    }

    /* The buffers that take space; the distinct steps where one starts. */
    int32_t m = 0;
    for (int32_t i = 0; i < n; i++) {
        offsets[i] = 0;
        if (bufs[i].size > 0 && bufs[i].first <= bufs[i].last) {
            items[m] = (mp_plan_item){bufs[i].size, bufs[i].first, i, 0};
            steps[m] = (br_step){0, bufs[i].first};
            m++;
        }
    }
    qsort(steps, (size_t)m, sizeof(br_step), br_step_by_step);
    int32_t nsteps = 0;
    for (int32_t k = 0; k < m; k++) {
        if (nsteps == 0 || steps[nsteps - 1].step != steps[k].step)
            steps[nsteps++] = steps[k];
    }
    /* Breadths by a difference sweep: a buffer adds its size from the step of its first use
     * up to (not including) the first listed step after its last. Unsigned wrap-around
     * cancels out in the prefix sums. */
    for (int32_t k = 0; k < m; k++) {
        const mp_plan_buf *b = &bufs[items[k].idx];
        uint64_t size = mp_plan_align_up(b->size, align);
        steps[br_step_find(steps, nsteps, (int64_t)b->first - 1)].breadth += size;
        int32_t after = br_step_find(steps, nsteps, b->last);
        if (after < nsteps)
            steps[after].breadth -= size;
    }
    for (int32_t t = 1; t < nsteps; t++)
        steps[t].breadth += steps[t - 1].breadth;
    qsort(steps, (size_t)nsteps, sizeof(br_step), br_step_by_breadth);

    /* At each step, its waiting buffers, largest first. */
    uint64_t top = 0;
    for (int32_t t = 0; t < nsteps; t++) {
        int32_t k = mp_plan_slots_waiting_at(&slots, steps[t].step);
        for (int32_t h = 0; h < k; h++) {
            const mp_plan_buf *b = &bufs[slots.hits[h]];
            items[h] = (mp_plan_item){b->size, b->first, slots.hits[h], 0};
        }
        qsort(items, (size_t)k, sizeof(mp_plan_item), mp_plan_slots_by_size);
        for (int32_t h = 0; h < k; h++) {
            const mp_plan_buf *b = &bufs[items[h].idx];
            uint64_t size = mp_plan_align_up(b->size, align);
            uint64_t off = mp_plan_slots_fit(&slots, size, b->first, b->last, 1);
            mp_plan_slots_place(&slots, items[h].idx, off, size);
            offsets[items[h].idx] = off;
            if (off + size > top)
                top = off + size;
        }
    }
    *total = top;

    mp_mem_free(mem, items);
    mp_mem_free(mem, steps);
    mp_plan_slots_free(&slots);
    return MP_OK;
}

const mp_planner mp_planner_breadth = {
    .name = "breadth",
    .about = "widest step first, its buffers largest first into best-fit gaps (Pisarchyk & Lee)",
    .plan = breadth_plan,
};
