/* memprof pipeline's driver: the models made a pipeline (engine/pipeline.h), connected as
 * --connect and --chain-input say, played through the call order of --shape-at on the
 * chain's inputs (model 1's, and a later model's inputs no output feeds, named K.NAME in
 * --shape, --input and --fill; the caller's buffers of call_orders.h), timed, and closed
 * into the chain's trace; the figures gathered for reports/pipeline_report.h. */
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
    const char *chain_input[MP_PIPE_MAX_CONNECT]; /* "K.IN": fed by the caller */
    int n_chain_input;
    mp_model_opts m;                         /* the chain inputs' shapes and values, ... */
    mp_pipe_io io;
    int io_edge[MP_PIPE_MAX_CONNECT];        /* --io E=MODE: edge E gets io_edge_mode */
    mp_pipe_io io_edge_mode[MP_PIPE_MAX_CONNECT];
    int n_io_edge;
    bool share_arena, record;
    const char *outdir;                      /* --output-dir: the chain's outputs (NULL: none) */
    struct mp_progress *progress;            /* a line per run (bench_stats.h; NULL: none) */
} mp_pipe_args;

/* What the report needs (the strings live as long as the result). */
typedef struct mp_pipe_result {
    mp_pipe_report rep;
    mp_pipe_report_model models[MP_PIPE_MAX_MODELS];
    mp_pipe_report_edge *edges;
    mp_pipe_report_input *inputs;
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
