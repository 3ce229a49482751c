/* The trace: memprof's contract between the engine and everything above it.
 *
 * The engine records one mp_event for every allocation, free and reallocation (through
 * engine/memory/mem.c, XNNPACK's allocator hook included), every planned arena slot, every
 * copy between the caller's buffers and the engine's, and the begin and end of every phase
 * (load, prepare, shape change, input/output, run K, teardown) and of every operator run.
 * Analyzers and reports read only this header: a trace saved as JSON on one machine can be
 * analysed on another.
 *
 * Recording appends to a preallocated buffer that grows geometrically; it never does I/O.
 * A session without a trace (or with recording switched off) records nothing. */
#ifndef MP_TRACE_H
#define MP_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/status.h"

/* Tensor dtype codes a trace may hold (TensorFlow Lite's TensorType, INT4 the last the engine
 * knows): the engine checks at build time that its mp_dtype fits (engine/model/dtype.c). */
#define MP_TRACE_DTYPE_COUNT 18

/* Name and version of the saved format (trace_io.c). Readers accept versions <= current. */
#define MP_TRACE_FORMAT "memprof-trace"
#define MP_TRACE_VERSION 3

typedef enum mp_ev_type {
    MP_EV_ALLOC = 0,   /* id, bytes, align, kind, owner (tensor/op) */
    MP_EV_FREE,        /* id, bytes, kind, owner of the freed block */
    MP_EV_REALLOC,     /* id keeps its number; bytes = new size, aux = previous size */
    MP_EV_PLAN,        /* tensor placed in arena `id` at offset aux, bytes, ops op..op_last;
                          kind SCRATCH with tensor -1: operator op's scratch (op_last == op) */
    MP_EV_COPY,        /* tensor, bytes; aux = MP_COPY_IN or MP_COPY_OUT */
    MP_EV_PHASE_BEGIN, /* aux = mp_phase_kind, id = run number (runs, 1-based) */
    MP_EV_PHASE_END,
    MP_EV_OP_BEGIN,    /* op; aux = loop iteration (1-based) of a subgraph a WHILE runs, else 0 */
    MP_EV_OP_END,      /* op; aux as OP_BEGIN */
    MP_EV_RSS,         /* a sample of the process: bytes = resident set size (RSS),
                          aux = its high-water mark (VmHWM); format version 2 */
    MP_EV_TYPE_COUNT
} mp_ev_type;

/* Kinds of memory: the same numbering as mp_mem_kind (engine/memory/mem.h). */
enum {
    MP_KIND_CONST = 0, /* mapped from the model file: counted, but not heap */
    MP_KIND_STATIC,
    MP_KIND_DYNAMIC,
    MP_KIND_SCRATCH,
    MP_KIND_KERNEL,
    MP_KIND_IO,
    MP_KIND_ENGINE,
    MP_KIND_VARIABLE, /* variable tensors (recurrent state): persistent, outside the arena */
    /* training (engine/train, memprof train): one kind per category of training tensor */
    MP_KIND_TRAIN_ACTIVATION, /* forward activations, kept for the backward where needed */
    MP_KIND_TRAIN_TRAINABLE,  /* trainable weights */
    MP_KIND_TRAIN_BACKPROP,   /* dL/d activations */
    MP_KIND_TRAIN_GRADIENT,   /* dL/d weights */
    MP_KIND_TRAIN_OPTIMIZER,  /* optimizer variables */
    MP_KIND_TRAIN_DISPOSABLE, /* temporaries within one operator's step */
    MP_KIND_TRAIN_EXTRA,      /* per-layer auxiliaries of the backward */
    MP_KIND_COUNT
};

typedef enum mp_phase_kind {
    MP_PHASE_LOAD = 0,
    MP_PHASE_PREPARE,
    MP_PHASE_SHAPE,    /* an input shape change (set_input_tensorinfo) */
    MP_PHASE_IO,       /* set_input / get_output: copies between caller and engine */
    MP_PHASE_RUN,
    MP_PHASE_TEARDOWN,
    MP_PHASE_KIND_COUNT
} mp_phase_kind;

enum { MP_COPY_IN = 0, MP_COPY_OUT = 1 };

/* Block ids from MP_TRACE_CALLER_ID up are the caller's own heap buffers, recorded by the
 * command line (not the engine) so that the process heap reconciles: memprof run's copies of
 * the outputs it reads, the text of the files it writes. Kind MP_KIND_IO, no tensor nor
 * operator (tensor and op -1): heap, but no tensor's home and no part of a kind's peak
 * (summary.h caller_peak). The engine numbers its blocks from 1 up, far below. */
#define MP_TRACE_CALLER_ID (UINT64_C(1) << 62)
static inline bool mp_trace_id_is_caller(uint64_t id)
{
    return id >= MP_TRACE_CALLER_ID;
}

typedef struct mp_event {
    uint64_t t_ns;    /* monotonic nanoseconds since the trace was created */
    uint64_t bytes;
    uint64_t id;      /* block id (alloc/free/realloc), arena block id (plan), run (phase) */
    uint64_t aux;     /* see mp_ev_type */
    int32_t tensor;   /* -1 = none */
    int32_t op;       /* owner or current operator; plan: first operator; -1 = none */
    int32_t op_last;  /* plan: last operator; otherwise -1 */
    uint32_t phase;   /* index of the phase instance (order of PHASE_BEGIN events) */
    uint8_t type;     /* mp_ev_type */
    uint8_t kind;     /* MP_KIND_* (alloc/free/realloc/plan) */
    uint8_t align_log2;
    uint8_t flags;    /* reserved, 0 */
} mp_event;

/* What the trace knows about the model, so that analyzers need no model file. */
typedef struct mp_trace_tensor {
    char *name;
    int32_t dtype;     /* mp_dtype: a TensorFlow Lite TensorType code, 0..MP_TRACE_DTYPE_COUNT-1 */
    bool is_const;
    /* In place (engine/session_memory.c): the tensor had no slot of its own but the arena slot
     * of tensor `shares` (its PLAN event's tensor), from its producer to its last reader. */
    bool in_place;
    int32_t shares;
} mp_trace_tensor;

typedef struct mp_trace_op {
    char *name;        /* builtin operator name, e.g. "CONV_2D" */
    int32_t n_inputs, n_outputs;
    int32_t *inputs;   /* tensor indices, -1 = omitted */
    int32_t *outputs;
} mp_trace_op;

typedef struct mp_trace_meta {
    char *model;       /* path or zoo:NAME */
    char *mode;        /* memory mode: "auto", "static", "dynamic" */
    char *planner;     /* planner name */
    int32_t threads;
    int32_t n_tensors, n_ops, n_inputs, n_outputs;
    mp_trace_tensor *tensors;
    mp_trace_op *ops;
    int32_t *inputs, *outputs;
    /* Measured outside the engine by the process (-1 = not measured): the heap's peak
     * during the session, and the allocator's own per-block overhead at that moment. */
    int64_t process_heap_peak;
    int64_t allocator_overhead;
    /* The process heap live when the measured window opened (session creation), so that the
     * heap peak since process start is process_heap_base + process_heap_peak (what an outside
     * tool such as heaptrack reports); -1 = not measured (older traces). */
    int64_t process_heap_base;
    /* Bytes of the model held on the heap by the caller (a zoo: model built in memory), 0 when
     * the model is a file mapped from disk: then the const blocks are heap, and counted in it. */
    int64_t model_heap_bytes;
    /* A trace of several models run as a chain (memprof pipeline): their tensors, operators
     * and blocks are numbered one after another, and this table says which ranges belong to
     * which model; inputs are the chain's (the first model's, then a later model's inputs
     * no output feeds), outputs the last model's. 0: one model. */
    int32_t n_models;
    struct mp_trace_model *models;
} mp_trace_meta;

typedef struct mp_trace_model {
    char *name;                    /* path or zoo:NAME */
    int32_t first_tensor, n_tensors; /* its tensors: first_tensor .. + n_tensors - 1 */
    int32_t first_op, n_ops;         /* its operators */
    uint64_t first_id, n_ids;        /* its blocks' ids: first_id + 1 .. first_id + n_ids */
} mp_trace_model;

typedef struct mp_trace mp_trace;

mp_trace *mp_trace_create(void);
void mp_trace_destroy(mp_trace *tr);
/* Recording on (default) or off; off records nothing and costs one branch per call. */
void mp_trace_set_enabled(mp_trace *tr, bool on);
bool mp_trace_enabled(const mp_trace *tr);

/* ---- read side (analyzers, reports) ----------------------------------------------- */
size_t mp_trace_count(const mp_trace *tr);
const mp_event *mp_trace_events(const mp_trace *tr);
const mp_trace_meta *mp_trace_get_meta(const mp_trace *tr);
/* Bytes the recorder holds (event buffer capacity, mapped outside the heap, + metadata). */
size_t mp_trace_memory(const mp_trace *tr);
const char *mp_ev_type_name(int type);
const char *mp_phase_kind_name(int kind);
const char *mp_kind_name(int kind);

/* ---- write side (the engine) ------------------------------------------------------ */
/* Metadata setters copy their arguments. Returns false when out of memory. */
mp_trace_meta *mp_trace_meta_mut(mp_trace *tr);
/* Set a string of tr's metadata (a field of mp_trace_meta_mut(tr) or of its tables). */
bool mp_trace_set_str(mp_trace *tr, char **field, const char *value);
/* Describe operator i (tables allocated first). */
/* Tensor `tensor` shares the arena slot of tensor `root` (both numbered as the current scope
 * numbers them, like events); ignored outside the tables. */
void mp_trace_set_shares(mp_trace *tr, int32_t tensor, int32_t root);
bool mp_trace_set_op(mp_trace *tr, int32_t i, const char *name, int32_t n_inputs,
                     const int32_t *inputs, int32_t n_outputs, const int32_t *outputs);
/* Describe the models of a chain (copied; replaces any table; n 0 removes it). */
bool mp_trace_set_models(mp_trace *tr, int32_t n, const mp_trace_model *models);
/* The model an event belongs to in a chain's trace (by its tensor, operator or block), or
 * -1 when it names none of them (or the trace has no models table). */
int32_t mp_trace_event_model(const mp_trace_meta *m, const mp_event *e);
/* Heap bytes the metadata holds (names, tables), as requested from malloc. */
size_t mp_trace_meta_heap(const mp_trace *tr);
/* Allocate tensor and op tables (zeroed); frees previous ones. */
bool mp_trace_alloc_tables(mp_trace *tr, int32_t n_tensors, int32_t n_ops, int32_t n_inputs,
                           int32_t n_outputs);
/* Append an event; t_ns and phase are filled in here (when t_ns is 0). Returns false only
 * when the buffer cannot grow (then recording stops and mp_trace_truncated() says so). */
bool mp_trace_add(mp_trace *tr, mp_event ev);
bool mp_trace_truncated(const mp_trace *tr);
/* Mark a trace read from a file whose recorder had run out of memory (recording stops). */
void mp_trace_mark_truncated(mp_trace *tr);
void mp_trace_phase_begin(mp_trace *tr, mp_phase_kind kind, uint64_t run);
void mp_trace_phase_end(mp_trace *tr);
/* Index of the current phase instance (UINT32_MAX before the first). */
uint32_t mp_trace_current_phase(const mp_trace *tr);
/* An operator's begin (OP_BEGIN) or end (OP_END). A begin that directly follows the operator
 * before's end, or its phase's begin, with no event between, takes that event's time (the
 * session's bookkeeping between two operators counts in the second), as does a phase's end
 * right after an operator's end: one clock read per operator instead of two. */
void mp_trace_op_mark(mp_trace *tr, int type, int32_t op);
/* A model of several subgraphs (WHILE, IF: engine/session_subgraph.c) has one tensor and one
 * operator table for all of them, subgraph 0's first, then subgraph 1's, ... While a called
 * subgraph runs, its session records with its own numbers and the scope maps them: every
 * event added from now on has tensor_base added to its tensor and op_base to its op and
 * op_last (those that are not -1), and operator marks (OP_BEGIN, OP_END) carry `iteration` in
 * aux: the 1-based iteration of the innermost WHILE loop running them, 0 outside loops.
 * Returns the scope before, which the caller restores. */
typedef struct mp_trace_scope {
    int32_t tensor_base, op_base;
    uint64_t iteration;
} mp_trace_scope;
mp_trace_scope mp_trace_set_scope(mp_trace *tr, mp_trace_scope scope);
void mp_trace_plan(mp_trace *tr, uint64_t arena_id, int32_t tensor, uint64_t offset,
                   uint64_t bytes, int32_t first, int32_t last);
/* Operator op's kernel scratch placed in arena arena_id (a PLAN event of kind SCRATCH). */
void mp_trace_plan_scratch(mp_trace *tr, uint64_t arena_id, int32_t op, uint64_t offset,
                           uint64_t bytes);
void mp_trace_copy(mp_trace *tr, int32_t tensor, uint64_t bytes, int direction);
/* Record a sample of the process's resident memory (bytes) and its high-water mark. */
void mp_trace_rss(mp_trace *tr, uint64_t rss, uint64_t hwm);
/* Append a fully formed event (t_ns and phase as given): for readers of saved traces. */
bool mp_trace_append_raw(mp_trace *tr, const mp_event *ev);

/* ---- saving and reading (trace_io.c) ---------------------------------------------- */
/* Write the trace as JSON to path, atomically (no partial file on failure). */
mp_status mp_trace_save(const mp_trace *tr, const char *path, mp_error *err);
/* Read a saved trace; a malformed file gets MP_ERR_FORMAT naming what is wrong. */
mp_status mp_trace_load(const char *path, mp_trace **out, mp_error *err);

#endif
