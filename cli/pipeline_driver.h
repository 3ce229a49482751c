/* memprof pipeline's driver: the models made a pipeline (engine/pipeline.h), connected as
 * --connect says, played through the call order of --shape-at on the first model's inputs
 * (the caller's buffers of call_orders.h), timed, and closed into the chain's trace; the
 * figures gathered for reports/pipeline_report.h. */
#ifndef MP_PIPELINE_DRIVER_H
#define MP_PIPELINE_DRIVER_H

#include <stdbool.h>

#include "analyzers/chain.h"
#include "cli/options.h"
#include "engine/pipeline.h"
#include "reports/pipeline_report.h"

#define MP_PIPE_MAX_CONNECT 256

typedef struct mp_pipe_args {
    const char *models[MP_PIPE_MAX_MODELS];
    int n_models;
    const char *connect[MP_PIPE_MAX_CONNECT]; /* "A.OUT=B.IN" */
    int n_connect;
    mp_model_opts m;                         /* the first model's shapes and inputs, ... */
    mp_pipe_io io;
    int io_edge[MP_PIPE_MAX_CONNECT];        /* --io E=MODE: edge E gets io_edge_mode */
    mp_pipe_io io_edge_mode[MP_PIPE_MAX_CONNECT];
    int n_io_edge;
    bool share_arena, record;
    struct mp_progress *progress;            /* a line per run (bench_stats.h; NULL: none) */
} mp_pipe_args;

/* What the report needs (the strings live as long as the result). */
typedef struct mp_pipe_result {
    mp_pipe_report rep;
    mp_pipe_report_model models[MP_PIPE_MAX_MODELS];
    mp_pipe_report_edge *edges;
    char (*reasons)[240];
    mp_chain_figures chain;
    bool have_chain;
    mp_trace *trace;                         /* the chain's trace (NULL: not recorded) */
    uint64_t *times;
} mp_pipe_result;

/* Run the pipeline as a says; errors printed; returns the exit code. */
int mp_cli_pipeline_drive(const mp_pipe_args *a, mp_pipe_result *r);
void mp_cli_pipeline_result_free(mp_pipe_result *r);

#endif
