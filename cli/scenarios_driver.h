/* memprof scenarios' driver: the shape lists of each call order A-E from the user's shapes
 * and the model's own, and one case played in a fresh recorded session (first run, warm-up,
 * timed runs), its figures taken from the trace. */
#ifndef MP_SCENARIOS_DRIVER_H
#define MP_SCENARIOS_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/bench_stats.h"
#include "cli/call_orders.h"
#include "cli/options.h"
#include "reports/scenarios_report.h"

typedef struct mp_sc_args {
    const char *model, *out_path;
    mp_model_opts m; /* --shape, -r, -w, --threads */
    bool keep_stale, strict, exact, json;
    /* --memory MODE|all: the modes played, in the table's order (static, dynamic, auto) */
    mp_memory_mode modes[3];
    int n_modes;
    bool all_modes;
    /* --plan-at prepare|first-run|both (DEFAULT: each mode's own) */
    mp_plan_at plans[2];
    int n_plans;
    const char *plan_at_arg; /* as given: "default", "prepare", "first-run" or "both" */
} mp_sc_args;

/* One case in one mode and plan-at policy: what the report shows, and the shapes it plays. */
typedef struct mp_sc_case {
    mp_scenario_case r;
    mp_shape_args *sp; /* its shape lists */
    mp_shape_at at;
    mp_memory_mode mode;
    mp_plan_at plan_at;
} mp_sc_case;

/* The shape lists of case c (0 = A) from the user's lists u and the model's shapes f (one
 * per input: f->n[k] = 1), and where they change. */
void mp_scenario_case_shapes(int c, const mp_shape_args *u, const mp_shape_args *f, int n_in,
                             mp_shape_args *sp, mp_shape_at *at);
/* Play case cs in a fresh session (the model from bytes, or its file when NULL); times has
 * room for the timed runs. Errors printed; returns the exit code. */
int mp_scenario_play(const mp_sc_args *a, const void *bytes, size_t size, mp_cli_inputs *in,
                     mp_sc_case *cs, uint64_t *times, mp_progress *pg);

#endif
