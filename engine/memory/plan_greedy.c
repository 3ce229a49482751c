/* The "greedy" planner: greedy by size with best-fit gaps, as TensorFlow Lite's
 * ArenaPlanner and SimpleMemoryArena place tensors.
 *
 * Buffers are taken largest first (ties: earlier first step, then lower index). Each goes
 * into the smallest gap, between the already placed buffers whose lifetimes meet its own,
 * that can hold it (the lowest such gap on ties), or else just above the highest of them.
 * Sizes are rounded up to the alignment, so every offset is a multiple of it. Buffers of
 * size 0 take offset 0 and no space. O(n log n + P log n) for P pairs of buffers alive
 * together: each placement finds its placed neighbours in the tree of plan_slots.h. */
#include "engine/memory/plan.h"
#include "engine/memory/plan_slots.h"
#include "engine/memory/planners.h"

static mp_status greedy_plan(const mp_plan_buf *bufs, int32_t n, uint64_t align,
                             uint64_t *offsets, uint64_t *total, mp_mem *mem)
{
    return mp_plan_slots_run(bufs, n, align, offsets, total, mem, mp_plan_slots_by_size, NULL, 1);
}

const mp_planner mp_planner_greedy = {
    .name = "greedy",
    .about = "largest first, each into the smallest gap that fits (TensorFlow Lite's arena)",
    .plan = greedy_plan,
};
