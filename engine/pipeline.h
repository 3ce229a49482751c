/* A pipeline: models run one after another, each model's outputs feeding later models'
 * inputs (memprof pipeline), on the public session API.
 *
 * Every place where bytes pass from one owner to another is an edge: the caller's buffer to
 * a chain input (an input of the first model, or an input of a later model that no output
 * feeds: a decoder's mask, a second stage's image), an output of model a to an input of
 * model b (a < b), an output of the last model to the caller's buffer. Under MP_PIPE_COPY an edge copies as a
 * runtime that always copies inputs in and outputs out does (caller -> model: one copy in;
 * model -> model: one copy out and one copy in; model -> caller: one copy out), so a chain of
 * N models with one input and one output each makes 2 x N copies per run. Under MP_PIPE_BIND
 * the bytes stay where they are written: a model's output is bound to the very buffer the
 * next model reads, and the chain's first inputs and last outputs are the caller's buffers,
 * with no copy at all, unless something forbids it; then the edge falls back to one copy (or
 * one conversion) and says why (mp_pipe_why): other dtypes or quantization, other shapes,
 * a caller's buffer that is misaligned or lacks XNNPACK's MP_INPUT_SLACK, an output whose
 * shape is known only while running, an output that is also its model's input, a reader's
 * input that is state its model writes in place.
 *
 * Fan-out: an output feeding several inputs of later models has one edge per reader. Under
 * copy it is copied out once per run (counted on its first edge) and copied in once per
 * reader; under bind the writer writes one buffer every reader is bound to, and each reader
 * that cannot be bound copies (or converts) from it on its own, with its reason, while the
 * others stay bound. Every reader takes its bytes right before its model runs.
 *
 * Chain inputs: model 1's inputs, then, model by model, every input of a later model that
 * no output feeds (past the outputs of the model before when connected by position, or made
 * the caller's by mp_pipeline_connect_caller), numbered in that order (chain input c is edge
 * c). Each is fed as model 1's are: copied in (right before its model runs) or bound to the
 * caller's buffer, with the same fallbacks (alignment, slack).
 *
 * Shapes: the caller changes a chain input's shape on its model's session
 * (mp_pipeline_session(p, k)) at any point of the call orders A-E; the next prepare or run
 * propagates them: each later model's inputs fed by a model take the shapes of the outputs
 * feeding them.
 *
 * One recorder (options.trace) records every model's events; mp_pipeline_close gives the
 * chain's trace: the models' tensors, operators and blocks numbered one after another, with
 * the table of which model each range belongs to (mp_trace_meta.models).
 *
 * share_arena: the models never run at once, so one arena serves the chain: every model's
 * planned buffers and every bound model-to-model buffer (alive from its producer in one model
 * to its last reader in the chain, whichever later model that is) are planned together, with the models' operators as one
 * sequence of steps, by the sessions' planner (engine/memory/plan.h), and each session runs in
 * its part of that arena (mp_session_place_arena). */
#ifndef MP_PIPELINE_H
#define MP_PIPELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/session.h"
#include "trace/status.h"
#include "trace/trace.h"

#define MP_PIPE_MAX_MODELS 64

typedef enum mp_pipe_io { MP_PIPE_COPY = 0, MP_PIPE_BIND } mp_pipe_io;

/* Why an edge copies (MP_WHY_NONE: it does not, or it copies because copy was asked). */
typedef enum mp_pipe_why {
    MP_WHY_NONE = 0,
    MP_WHY_COPY_ASKED, /* MP_PIPE_COPY */
    MP_WHY_DTYPE,      /* other dtypes or quantization: converted element by element */
    MP_WHY_SHAPE,      /* other shapes (as many elements): copied into the reader's input */
    MP_WHY_ALIGN,      /* the caller's buffer is not aligned to the element size */
    MP_WHY_SLACK,      /* the caller's input buffer lacks MP_INPUT_SLACK past its bytes */
    MP_WHY_DYNAMIC,    /* the output's shape is known only while its model runs */
    MP_WHY_PASSTHROUGH,/* the output is also its model's input */
    MP_WHY_WRITES,     /* the reader's input is state its model writes in place */
    MP_WHY_COUNT
} mp_pipe_why;
const char *mp_pipe_why_name(int why);

typedef struct mp_pipe_edge {
    int32_t from_model, from_output; /* from_model -1: chain input number from_output */
    int32_t to_model, to_input;      /* to_model -1: the caller's output number to_input */
    int32_t from_tensor, to_tensor;  /* tensor indices in their models (-1: the caller) */
    mp_pipe_io io;                   /* asked */
    bool bound;                      /* no copy now */
    int why;                         /* mp_pipe_why */
    char reason[240];                /* the fallback, in words ("" when bound) */
    uint64_t copies, copy_bytes;     /* copies made over all runs (a conversion counts one) */
    uint64_t runs;                   /* runs it took part in */
} mp_pipe_edge;

typedef struct mp_pipe_options {
    int threads;              /* per session (1 = none); ignored with threadpool */
    void *threadpool;         /* a pthreadpool_t shared by the sessions (not owned), or NULL */
    mp_memory_mode mode;
    const char *planner;      /* NULL = the default planner */
    mp_trace *trace;          /* one recorder for every model (owned by the caller), or NULL */
    mp_pipe_io io;            /* of every edge (mp_pipeline_set_edge_io changes one) */
    bool share_arena;
} mp_pipe_options;

/* The chain's arena with share_arena (figures of the last plan). */
typedef struct mp_pipe_arena {
    bool planned;              /* a chain plan exists (share_arena, a planning mode) */
    uint64_t chain_bytes;      /* the one arena (planner total, without MP_INPUT_SLACK) */
    uint64_t chain_lower_bound;/* live-set lower bound of the chain's buffers */
    uint64_t separate_bytes;   /* one arena per model, each planned alone, plus the bound
                                  model-to-model buffers, each alone */
    uint64_t boundary_bytes;   /* those buffers' aligned bytes */
    int32_t n_buffers, n_boundary;
    uint64_t plans;            /* chain plans made (one per shape change) */
} mp_pipe_arena;

typedef struct mp_pipeline mp_pipeline;

/* Create one session per model (a path or zoo:NAME) and load it; connect each model's
 * inputs to the previous model's outputs by position (inputs past that model's outputs are
 * chain inputs). Errors name the model. */
mp_status mp_pipeline_create(const mp_pipe_options *o, int n_models, const char *const *models,
                             mp_pipeline **out, mp_error *err);
/* Feed input `input` of model to_model (>= 1) from output `output` of from_model (<
 * to_model), each a name or a decimal index; replaces the connection by position (and any
 * earlier one of that input); refused for an input made a chain input by
 * mp_pipeline_connect_caller. Before the first prepare or set_input. An output may feed any
 * number of inputs of later models (fan-out). */
mp_status mp_pipeline_connect(mp_pipeline *p, int from_model, const char *output, int to_model,
                              const char *input, mp_error *err);
/* Make input `input` (a name or an index) of model to_model a chain input, fed by the
 * caller, even where the connection by position would feed it from the model before (a
 * decoder whose first input is a mask); model 0's inputs are already. Refused for an input
 * an mp_pipeline_connect feeds. Before the first prepare or set_input. */
mp_status mp_pipeline_connect_caller(mp_pipeline *p, int to_model, const char *input,
                                     mp_error *err);
/* Fix the connections and number the chain's inputs (the first prepare or set_input does it
 * too); later connections are refused. */
mp_status mp_pipeline_resolve(mp_pipeline *p, mp_error *err);
/* The chain's inputs once resolved (0 before): chain input c feeds input *input of model
 * *model (0-based; false: no input c); and the chain input feeding input `input` of model
 * `model` (-1: an output feeds it). */
int mp_pipeline_input_count(const mp_pipeline *p);
bool mp_pipeline_input_at(const mp_pipeline *p, int c, int *model, int *input);
int mp_pipeline_input_index(const mp_pipeline *p, int model, int input);
/* Copy or bind edge e (mp_pipeline_edges order; after the first prepare). */
mp_status mp_pipeline_set_edge_io(mp_pipeline *p, int e, mp_pipe_io io, mp_error *err);
/* Check the connections (dtypes that cannot be converted, element counts that differ),
 * propagate shapes, bind and prepare every model. Run calls it when needed. */
mp_status mp_pipeline_prepare(mp_pipeline *p, mp_error *err);
/* The caller's buffer of chain input i (mp_pipeline_input_at; resolves the connections):
 * its bytes for the current shape, capacity bytes in all. Bound when the edge binds and may
 * (its bytes then must stay until the run), else copied in at each run, right before its
 * model runs. Call again after changing its shape. */
mp_status mp_pipeline_set_input(mp_pipeline *p, int i, void *buf, size_t capacity, mp_error *err);
/* The caller's buffer for chain output j (the last model's output j); NULL: one of the
 * pipeline's own. */
mp_status mp_pipeline_set_output(mp_pipeline *p, int j, void *buf, size_t capacity,
                                 mp_error *err);
mp_status mp_pipeline_run(mp_pipeline *p, mp_error *err);
/* Chain output j after a run (in the caller's buffer or the pipeline's), and its tensor. */
const void *mp_pipeline_output(const mp_pipeline *p, int j);
const mp_tensor *mp_pipeline_output_tensor(const mp_pipeline *p, int j);

int mp_pipeline_model_count(const mp_pipeline *p);
mp_session *mp_pipeline_session(mp_pipeline *p, int k);
const char *mp_pipeline_model_name(const mp_pipeline *p, int k);
int mp_pipeline_edge_count(const mp_pipeline *p);
const mp_pipe_edge *mp_pipeline_edges(const mp_pipeline *p);
void mp_pipeline_arena(const mp_pipeline *p, mp_pipe_arena *out);
/* Runs made, and copies (bytes) per run of the last run. */
uint64_t mp_pipeline_runs(const mp_pipeline *p);

/* Free the pipeline's buffers and destroy the sessions (their teardown recorded); with a
 * recorder, *combined (may be NULL) gets the chain's trace (the caller destroys it). The
 * pipeline then answers only the figure getters, until mp_pipeline_free. */
mp_status mp_pipeline_close(mp_pipeline *p, mp_trace **combined, mp_error *err);
void mp_pipeline_free(mp_pipeline *p);

#endif
