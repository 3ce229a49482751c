/* memprof pipeline's report: the chain's models and inputs, every edge (copied or bound, why, copies
 * and bytes per run), the shared arena against one arena per model, the times, and per model
 * the heap its blocks held (from the chain's trace, analyzers/chain.h); as text or as the
 * JSON document "memprof-pipeline" (docs/json.md). */
#ifndef MP_PIPELINE_REPORT_H
#define MP_PIPELINE_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "analyzers/chain.h"
#include "trace/status.h"

typedef struct mp_pipe_report_edge {
    char from[200], to[200];      /* "input 0 'x' (caller)", "model 1 output 0 'y'" */
    const char *io;               /* asked: "copy" or "bind" */
    bool bound;
    const char *why;              /* mp_pipe_why_name: "none", "copy", "dtype", ... */
    const char *reason;           /* the fallback in words ("" when bound) */
    uint64_t copies, copy_bytes;  /* over all runs */
    uint64_t runs;
} mp_pipe_report_edge;

/* A chain input: the caller's buffer c feeding input `input` of model `model` (0-based). */
typedef struct mp_pipe_report_input {
    int32_t model, input;
    char name[200];
} mp_pipe_report_input;

typedef struct mp_pipe_report_model {
    const char *name;
    int32_t n_ops, n_inputs, n_outputs;
    uint64_t arena_bytes;         /* its own arena now (0 with the shared arena) */
} mp_pipe_report_model;

typedef struct mp_pipe_report {
    int n_models;
    const mp_pipe_report_model *models;
    int n_edges;
    const mp_pipe_report_edge *edges;
    int n_inputs;                     /* the chain's inputs (edge c is input c's) */
    const mp_pipe_report_input *inputs;
    const char *mode, *planner, *io;  /* io: "copy", "bind" or "mixed" */
    long threads, runs, warmup;
    uint64_t first_run_ns, median_ns, min_ns, mean_ns;
    bool share_arena;
    bool arena_planned;
    uint64_t chain_arena_bytes, chain_lower_bound_bytes, separate_arena_bytes,
        boundary_bytes, arena_plans;
    const mp_chain_figures *chain;    /* from the trace (NULL: not recorded) */
    const char *trace_path;           /* where the chain's trace was saved, or NULL */
} mp_pipe_report;

void mp_report_pipeline_text(FILE *f, const mp_pipe_report *r, bool exact);
mp_status mp_report_pipeline_json(FILE *f, const mp_pipe_report *r, mp_error *err);

#define MP_PIPELINE_FORMAT "memprof-pipeline"
#define MP_PIPELINE_VERSION 1

#endif
