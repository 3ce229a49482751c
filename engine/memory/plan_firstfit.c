/* The "firstfit" planner: Samsung ONE's FirstFit.
 *
 * Buffers are taken in order of first use (ties: larger first, then lower index). Each goes
 * at the lowest offset where it overlaps none of the already placed buffers whose lifetimes
 * meet its own: the first gap between them that can hold it, or else just above the highest
 * of them. Sizes are rounded up to the alignment, so every offset is a multiple of it.
 * Buffers of size 0 take offset 0 and no space. O(n log n + P log n) for P pairs of
 * buffers alive together: each placement finds its placed neighbours in the tree of
 * plan_slots.h. */
#include "engine/memory/plan.h"
#include "engine/memory/plan_slots.h"
#include "engine/memory/planners.h"

/* In order of first use (ties: larger first, then lower index). */
static int ff_item_cmp(const void *a, const void *b)
{
    const mp_plan_item *x = a, *y = b;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static mp_status firstfit_plan(const mp_plan_buf *bufs, int32_t n, uint64_t align,
                               uint64_t *offsets, uint64_t *total, mp_mem *mem)
{
    return mp_plan_slots_run(bufs, n, align, offsets, total, mem, ff_item_cmp, NULL, 0);
}

const mp_planner mp_planner_firstfit = {
    .name = "firstfit",
    .about = "in order of first use, each at the lowest offset that fits (Samsung ONE)",
    .plan = firstfit_plan,
};
