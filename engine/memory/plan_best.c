/* The "best" planner, the default: runs "greedy", "firstfit" and "breadth" and keeps the
 * plan with the smallest total (ties: the first of them in that order). It stops early
 * when a plan reaches the live-set lower bound, which no plan can beat.
 *
 * So its total is never larger than any of those three planners' totals on the same input
 * (and it is their minimum exactly). It costs at most the three of them together: O(n^2).
 * (A search over more orders could be added here later.) */
#include <string.h>

#include "plan.h"
#include "planners.h"

static mp_status best_plan(const mp_plan_buf *bufs, int32_t n, uint64_t align,
                           uint64_t *offsets, uint64_t *total, mp_mem *mem)
{
    static const mp_planner *const tries[] = {&mp_planner_greedy, &mp_planner_firstfit,
                                              &mp_planner_breadth};
    *total = 0;
    if (n <= 0)
        return MP_OK;

    /* The first plan goes straight into offsets. */
    mp_status st = tries[0]->plan(bufs, n, align, offsets, total, mem);
    if (st != MP_OK)
        return st;
    uint64_t lb = mp_plan_lower_bound(bufs, n, align, NULL);
    if (*total <= lb)
        return MP_OK;

    uint64_t *cand =
        mp_mem_alloc(mem, sizeof(uint64_t) * (size_t)n, 0, MP_MEM_ENGINE, MP_OWNER_NONE);
    if (!cand)
        return MP_ERR_NOMEM;
    for (size_t t = 1; t < sizeof tries / sizeof tries[0] && *total > lb; t++) {
        uint64_t cand_total = 0;
        st = tries[t]->plan(bufs, n, align, cand, &cand_total, mem);
        if (st != MP_OK)
            break;
        if (cand_total < *total) {
            memcpy(offsets, cand, sizeof(uint64_t) * (size_t)n);
            *total = cand_total;
        }
    }
    mp_mem_free(mem, cand);
    return st;
}

const mp_planner mp_planner_best = {
    .name = "best",
    .about = "the smallest of greedy, firstfit and breadth (stops at the lower bound)",
    .plan = best_plan,
};
