/* memprof plan's output: the planners compared on a model's buffers (arena against the
 * lower bound and naive, time, validity), where the bound is reached, the kernels' scratch
 * planned with the tensors or apart, and XNNPACK's runtime beside ours; for a model of
 * several subgraphs, the same for each and how their arenas add up; as text, JSON
 * (format memprof-plan, docs/json.md) or the chosen plan's arena as SVG. The command fills
 * the plain structs below; names of tensors and operators come from the trace's meta. */
#ifndef MP_PLAN_REPORT_H
#define MP_PLAN_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "trace/status.h"
#include "trace/trace.h"

/* A buffer planned: a tensor, or the scratch of operator op (tensor -1). */
typedef struct mp_plan_report_item {
    int32_t tensor, op;
    uint64_t bytes;
    int32_t first, last; /* operator steps it lives for (inclusive) */
    bool io;             /* a model input or output */
} mp_plan_report_item;

/* One planner's result on every buffer. */
typedef struct mp_plan_report_result {
    const char *name, *cap; /* cap: what keeps it from the bound, or NULL */
    bool is_default, valid;
    const char *why;        /* when not valid */
    uint64_t arena, time_ns;
} mp_plan_report_result;

typedef struct mp_plan_report_input {
    const char *name;
    int32_t rank;
    const int32_t *dims;
} mp_plan_report_input;

/* XNNPACK's runtime on the same model (bytes). */
typedef struct mp_plan_report_peer {
    bool ok;
    const char *refused; /* when not ok: why */
    uint64_t workspace, external, other, operators, weights, tables, setup, peak;
} mp_plan_report_peer;

/* When the session plans a subgraph (a model of several: docs/plan.md). */
typedef enum mp_plan_report_when {
    MP_PRW_NONE = 0, /* never: no prepare calls it */
    MP_PRW_PREPARE,  /* at prepare; its arena held with the others' until teardown */
    MP_PRW_RUN,      /* by the CALL_ONCE that calls it in the first run, freed after it */
    MP_PRW_AGAIN     /* at prepare, and again while running as its caller's shapes change */
} mp_plan_report_when;

typedef struct mp_plan_report mp_plan_report;

struct mp_plan_report {
    const char *model;
    const mp_trace_meta *meta; /* tensor and operator names */
    bool exact;
    const mp_plan_report_input *inputs;
    int n_inputs;
    const mp_plan_report_item *items; /* every buffer planned, tensors then scratch */
    int32_t n_items, n_scratch;
    int32_t n_in_place;               /* tensors in the slot of one of the items, in place */
    uint64_t align, scratch_max;
    uint64_t lower_bound, naive, lower_bound_tensors, lower_bound_internal;
    int32_t lower_bound_step; /* -1: none */
    const mp_plan_report_result *res;
    int n_res;
    int chosen;                        /* index in res of the chosen planner */
    const uint64_t *chosen_offsets;    /* the chosen plan: offset of each item */
    uint64_t tensors_arena;            /* the chosen planner on the tensors alone */
    uint64_t internal_arena;           /* ... and on them but the inputs and outputs */
    bool has_peer;
    long peer_threads;
    mp_plan_report_peer peer;
    /* The subgraph these figures are of: 0 the model's; in a model of several, subs are the
     * others' reports (their own buffers and planners; no inputs, no peer), each numbering
     * its tensors and operators from tensor_base and op_base in meta's tables. */
    int32_t subgraph, n_subgraphs;    /* n_subgraphs: the model's (1: one) */
    const char *subgraph_name;
    const char *called_by;            /* "WHILE (op #0 of subgraph 0)" ...; NULL: none */
    int32_t tensor_base, op_base;
    mp_plan_report_when when;
    uint64_t session_arena;           /* the arena the session allocates for it */
    const mp_plan_report *subs;       /* subgraphs 1 ... (n_subgraphs - 1 of them) */
};

void mp_report_plan_text(FILE *f, const mp_plan_report *r);
/* The JSON document, or the SVG of the chosen plan's arena; MP_ERR_NOMEM when memory is
 * short (f may then hold part of it). */
mp_status mp_report_plan_json(FILE *f, const mp_plan_report *r, mp_error *err);
mp_status mp_report_plan_svg(FILE *f, const mp_plan_report *r, mp_error *err);

#endif
