/* The "best" planner, the default, and the "search" planner.
 *
 * "best" runs "greedy", "firstfit", "breadth" and "conflicts" and keeps the plan with the
 * smallest total
 * (ties: the first of them in that order), stopping as soon as one reaches the live-set
 * lower bound, which no plan can beat. When none does, the search of plan_search.c starts
 * from that plan (the order of its offsets) and keeps whatever smaller plan it finds within
 * a fixed budget of work (MP_SEARCH_BUDGET_BEST).
 *
 * So its total is never larger than any of those four planners' totals on the same input.
 * It costs the four of them (O(n log n + P log n) for P pairs of buffers alive together)
 * plus the search: listing who meets whom (O(P), skipped over MP_SEARCH_MAX_PAIRS) and the
 * budget, whatever the graph's size. "search" is the same with a larger budget
 * (MP_SEARCH_BUDGET_DEEP). The search is plan_search.c's mp_plan_search_improve, which
 * calls no planner: this file calls it, not the other way round. */
#include <assert.h>
#include <string.h>

#include "engine/memory/plan.h"
#include "engine/memory/planners.h"

/* The caps' phrases below spell these numbers out. */
_Static_assert(MP_SEARCH_BUDGET_BEST == 500000 && MP_SEARCH_BUDGET_DEEP == 10000000 &&
                   MP_SEARCH_MAX_PAIRS == 1048576,
               "update the planners' .cap phrases");

mp_status mp_plan_best_run(const mp_plan_buf *bufs, int32_t n, uint64_t align,
                           uint64_t *offsets, uint64_t *total, mp_mem *mem, uint64_t budget)
{
    static const mp_planner *const tries[] = {&mp_planner_greedy, &mp_planner_firstfit,
                                              &mp_planner_breadth, &mp_planner_conflicts};
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
    if (st != MP_OK)
        return st;
    if (*total > lb)
        st = mp_plan_search_improve(bufs, n, align, offsets, total, mem, budget);
#ifndef NDEBUG
    /* Debug builds check every plan they hand out (the check needs no mp_mem). */
    assert(mp_plan_check(bufs, n, align, offsets, *total, NULL, 0));
#endif
    return st;
}

static mp_status best_plan(const mp_plan_buf *bufs, int32_t n, uint64_t align,
                           uint64_t *offsets, uint64_t *total, mp_mem *mem)
{
    return mp_plan_best_run(bufs, n, align, offsets, total, mem, MP_SEARCH_BUDGET_BEST);
}

const mp_planner mp_planner_best = {
    .name = "best",
    .about = "the smallest of greedy, firstfit, breadth and conflicts, then a short search "
             "(the default)",
    .cap = "search capped at 500000 units of work (a few ns each), none above 1048576 "
           "overlapping pairs",
    .plan = best_plan,
};

static mp_status search_plan(const mp_plan_buf *bufs, int32_t n, uint64_t align,
                             uint64_t *offsets, uint64_t *total, mp_mem *mem)
{
    return mp_plan_best_run(bufs, n, align, offsets, total, mem, MP_SEARCH_BUDGET_DEEP);
}

const mp_planner mp_planner_search = {
    .name = "search",
    .about = "best's heuristics, then a long search over placement orders (exact if small)",
    .cap = "search capped at 10000000 units of work (a few ns each), none above 1048576 "
           "overlapping pairs",
    .plan = search_plan,
};
