/* The planners behind the interface of plan.h (private to engine/memory).
 *
 * To add a planner: write engine/memory/plan_<name>.c defining a `const mp_planner`,
 * declare it here, and list it in the registry array at the top of plan.c. */
#ifndef MP_PLANNERS_H
#define MP_PLANNERS_H

#include "plan.h"

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
/* The smallest of greedy, firstfit and breadth; never worse than any of them: plan_best.c. */
extern const mp_planner mp_planner_best;

#endif
