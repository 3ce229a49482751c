/* The planners behind the interface of plan.h (private to engine/memory).
 *
 * To add a planner: write engine/memory/plan_<name>.c defining a `const mp_planner`,
 * declare it here, and list it in the registry array at the top of plan.c. */
#ifndef MP_PLANNERS_H
#define MP_PLANNERS_H

#include "engine/memory/plan.h"

/* Name of the planner mp_planner_default() returns. */
#define MP_PLANNER_DEFAULT "best"

/* Greedy by size, best-fit gaps (TensorFlow Lite's ArenaPlanner): plan_greedy.c. */
extern const mp_planner mp_planner_greedy;
/* No reuse, buffers one after another (the naive total): plan_bump.c. */
extern const mp_planner mp_planner_bump;
/* In order of first use, lowest offset that fits (Samsung ONE's FirstFit): plan_firstfit.c. */
extern const mp_planner mp_planner_firstfit;
/* Greedy by breadth, best-fit gaps (Pisarchyk & Lee 2020): plan_breadth.c. */
extern const mp_planner mp_planner_breadth;
/* Greedy by conflicts: most lifetime conflicts first, lowest offset that fits (TVM's unified
 * static memory planner, greedy_by_conflicts): plan_conflicts.c. */
extern const mp_planner mp_planner_conflicts;
/* The smallest of greedy, firstfit, breadth and conflicts, then a short search; never worse than any
 * of them: plan_best.c. */
extern const mp_planner mp_planner_best;
/* As best, with a longer search: plan_best.c. */
extern const mp_planner mp_planner_search;

/* Search budgets, in units of work (one per neighbour looked at while placing a buffer,
 * about 2-3 ns each): best's is about 1.5 ms of search, so a 1000-buffer graph takes a few
 * milliseconds in all; search's is twenty times larger. */
#define MP_SEARCH_BUDGET_BEST 500000ull
#define MP_SEARCH_BUDGET_DEEP 10000000ull
/* The search lists who meets whom first (O(P) for P pairs of buffers alive together); over
 * this many pairs it does not search, and the heuristics' plan stands. */
#define MP_SEARCH_MAX_PAIRS (1 << 20)

/* Greedy, firstfit and breadth (stopping at the lower bound), then, unless one reached
 * it, mp_plan_search_improve with `budget`. As mp_planner.plan: plan_best.c. */
mp_status mp_plan_best_run(const mp_plan_buf *bufs, int32_t n, uint64_t align,
                           uint64_t *offsets, uint64_t *total, mp_mem *mem, uint64_t budget);
/* Improve the valid plan (offsets, *total) in place: a search over the orders in which a
 * first-fit placer takes the buffers, seeded with the order of the plan's offsets, exact
 * for small problems (branch and bound), else hill climbing, within `budget` units of
 * work. Deterministic. The total never grows; when it shrinks, every offset may change
 * (buffers of size 0 go to 0). Leaves the plan as it is when its working memory (from
 * mem, kind engine) is refused, so it always returns MP_OK: plan_search.c. */
mp_status mp_plan_search_improve(const mp_plan_buf *bufs, int32_t n, uint64_t align,
                                 uint64_t *offsets, uint64_t *total, mp_mem *mem,
                                 uint64_t budget);

#endif
