/* The planners compared on one set of buffers (memprof plan): every planner (or one) run on
 * the set, each timed (the median of repeats), its plan checked, against the live-set lower
 * bound (no plan can be smaller) and naive (every buffer apart, no reuse). */
#ifndef MP_PLAN_COMPARE_H
#define MP_PLAN_COMPARE_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/memory/plan.h"
#include "trace/status.h"

/* One planner's result on a set. */
typedef struct mp_plan_result {
    const mp_planner *planner;
    uint64_t arena;
    uint64_t time_ns; /* median planning time */
    int reps;
    bool valid;       /* mp_plan_check passed; else why says what is wrong */
    char why[160];
    uint64_t *offsets; /* per buffer of the set */
} mp_plan_result;

/* Plan the n buffers with p, repeating for a median time while less than about 50 ms were
 * spent (once at least, 25 times at most: a slow plan of a large model is made once), and
 * check the plan. Free r with mp_plan_result_free (also after a failure). */
mp_status mp_plan_measure(const mp_planner *p, const mp_plan_buf *bufs, int32_t n,
                          uint64_t align, mp_plan_result *r, mp_error *err);
void mp_plan_result_free(mp_plan_result *r);

typedef struct mp_plan_compare {
    uint64_t lower_bound, naive;
    int32_t lower_bound_step; /* the step where the bound is reached; -1 for none */
    mp_plan_result *res;      /* one per planner compared, in mp_planner_list order */
    int n_res;
    int chosen;               /* index in res of the chosen planner */
} mp_plan_compare;

/* Compare every planner on the n buffers (only `chosen` when `only`); chosen is the
 * planner whose result is res[out->chosen]. Free out with mp_plan_compare_free (also
 * after a failure). */
mp_status mp_plan_compare_run(const mp_plan_buf *bufs, int32_t n, uint64_t align,
                              const mp_planner *chosen, bool only, mp_plan_compare *out,
                              mp_error *err);
void mp_plan_compare_free(mp_plan_compare *c);

#endif
