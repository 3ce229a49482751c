/* The planners behind the interface of plan.h (private to engine/memory).
 *
 * To add a planner: write engine/memory/plan_<name>.c defining a `const mp_planner`,
 * declare it here, and list it in the registry array at the top of plan.c. */
#ifndef MP_PLANNERS_H
#define MP_PLANNERS_H

#include "plan.h"

/* Name of the planner mp_planner_default() returns. */
#define MP_PLANNER_DEFAULT "greedy"

/* Greedy by size, best-fit gaps (TensorFlow Lite's ArenaPlanner): plan_greedy.c. */
extern const mp_planner mp_planner_greedy;

#endif
