/* memprof scenarios' output: one row per call order A-E and memory mode / plan-at policy
 * (first run, later runs' median, allocations per run, static, peak and duplicated bytes;
 * then dynamic bytes, plans made and reused, arenas made and unused, flags), the calls and
 * shapes of each case, and what was flagged; as text or JSON (format memprof-scenarios,
 * docs/json.md). The command fills the plain structs below. */
#ifndef MP_SCENARIOS_REPORT_H
#define MP_SCENARIOS_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "reports/bench_report.h"
#include "trace/status.h"

#define MP_SCENARIO_MAX_SHAPES 64

/* What one case measured. */
typedef struct mp_scenario_case {
    char name;                /* 'A'..'E' */
    const char *calls;        /* "prepare, set shape, run..." */
    const char *shape_at;     /* where its shapes change: prepare, run or each-run */
    mp_bench_shape shapes[MP_SCENARIO_MAX_SHAPES]; /* its shape lists, by input */
    int n_shapes;
    size_t n_runs;
    uint64_t first_ns;
    mp_stats later;
    uint64_t static_bytes, dynamic_bytes, peak_bytes, dup_bytes;
    uint64_t first_allocs, first_bytes, later_allocs, later_bytes;
    uint64_t plans_made, plans_reused;
    uint64_t arenas_made, arenas_unused; /* arenas allocated; of those, freed unused by a run */
    const char *mode;         /* static, dynamic, auto */
    const char *plan_at;      /* prepare, first-run; NULL in dynamic mode (nothing planned) */
    bool flag_dup, flag_alloc; /* a tensor held twice; a later run allocated unasked */
} mp_scenario_case;

typedef struct mp_scenarios_report {
    const char *model, *mode; /* mode: as given (static, dynamic, auto, or all) */
    const char *plan_at;      /* as given: default, prepare, first-run or both */
    long threads, runs, warmup;
    bool keep_stale, exact;
    const mp_scenario_case *cases;
    int n_cases;
} mp_scenarios_report;

/* "dup,alloc", "dup", "alloc" or "". */
const char *mp_scenario_flags(const mp_scenario_case *c);
void mp_report_scenarios_text(FILE *f, const mp_scenarios_report *r);
mp_status mp_report_scenarios_json(FILE *f, const mp_scenarios_report *r, mp_error *err);

#endif
