/* The "bump" planner: no reuse at all. Buffers are laid out one after another in index
 * order, each at the running sum of the aligned sizes before it, so the total is always
 * mp_plan_naive(). A baseline for the other planners (and what a runtime without a planner
 * costs). Buffers of size 0 take no space (their offset is the running sum). O(n), and it
 * needs no working memory. */
#include "engine/memory/plan.h"
#include "engine/memory/planners.h"

static mp_status bump_plan(const mp_plan_buf *bufs, int32_t n, uint64_t align,
                           uint64_t *offsets, uint64_t *total, mp_mem *mem)
{
    (void)mem;
    uint64_t top = 0;
    for (int32_t i = 0; i < n; i++) {
        offsets[i] = top;
        top += mp_plan_align_up(bufs[i].size, align);
    }
    *total = top;
    return MP_OK;
}

const mp_planner mp_planner_bump = {
    .name = "bump",
    .about = "no reuse: every buffer after the previous one (the naive total)",
    .plan = bump_plan,
};
