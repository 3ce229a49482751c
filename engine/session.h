/* The public call sequence of the engine (after Samsung ONE's nnfw API):
 *
 *   mp_session_create -> mp_session_load -> [mp_session_set_input_shape]* -> mp_session_prepare
 *   -> ([mp_session_set_input_shape]* [set_input | set_input_buffer | set_output_buffer]
 *       mp_session_run [get_output])* -> mp_session_destroy
 *
 * Every order of DESIGN.md's cases A-E is legal. prepare infers every shape, creates every
 * operator once and gives every tensor storage (one planned arena in the auto and static
 * modes); a shape change after prepare releases that arena at once, and the next call that
 * needs memory plans for the new shapes; a run sets up only what changed. Variable tensors
 * (recurrent state) persist across runs until mp_session_reset_variables. With a trace in
 * the options, every allocation, plan, copy, phase and operator is recorded (trace.h). */
#ifndef MP_SESSION_H
#define MP_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/graph/tensor.h"
#include "engine/memory/mem.h"
#include "engine/model/model.h"
#include "trace/status.h"
#include "trace/trace.h"

typedef struct mp_session mp_session;

/* How non-constant tensors get memory (docs/memory.md):
 *   AUTO    plan every tensor whose shape is known into one arena; a shape change releases
 *           the arena at once and the next prepare or run plans for the new shapes (plans
 *           are cached per input shapes, so shapes seen before are not planned again).
 *   STATIC  as AUTO but without the plan cache: every shape change plans again.
 *   DYNAMIC nothing planned: each tensor is allocated right before its producer runs and
 *           freed after its last reader (what a runtime that cannot plan does).
 * In every mode a tensor whose shape is known only while running is dynamic. */
typedef enum mp_memory_mode { MP_MEMORY_AUTO = 0, MP_MEMORY_STATIC, MP_MEMORY_DYNAMIC } mp_memory_mode;

/* When the static manager first plans (docs/memory.md, "Plan at prepare or at the first run"):
 *   PREPARE    mp_session_prepare plans and allocates the arena for the shapes it sees; a
 *              shape change after it frees that arena, even if no run used it (case C).
 *   FIRST_RUN  when an input's shape may still change (a free dimension), prepare infers the
 *              shapes and plans nothing; the first run (or the set_input before it) plans for
 *              the shapes it meets, and later runs reuse that plan while shapes stay. Inputs
 *              whose shapes cannot change are planned at prepare as with PREPARE.
 *              The first run then also creates the operators (XNNPACK packs weights when an
 *              operator is first set up, which needs storage): it wastes no arena, but its
 *              first run costs more than the re-plan it avoids.
 *   DEFAULT    PREPARE in every mode (mp_plan_at_resolve; docs/memory.md has the table). */
typedef enum mp_plan_at { MP_PLAN_AT_DEFAULT = 0, MP_PLAN_AT_PREPARE, MP_PLAN_AT_FIRST_RUN } mp_plan_at;

typedef struct mp_session_options {
    int threads;             /* 1 = no thread pool */
    /* A pthreadpool_t to run on instead of a pool of the session's own (not owned; it must
     * outlive the session; `threads` is then ignored). Sessions that take turns on one
     * machine share one pool, so that the idle workers of one do not spin against the
     * running workers of another (memprof bench). */
    void *threadpool;
    size_t max_tensor_bytes; /* refuse a tensor larger than this (0 = MP_DEFAULT_MAX_TENSOR) */
    mp_memory_mode mode;
    const char *planner;     /* planner name (NULL = the default planner) */
    mp_trace *trace;         /* recorder, owned by the caller, outliving the session; NULL = none */
    /* Debug switch reproducing Samsung ONE's behaviour: after a shape change following
     * prepare the old arena is kept and changed tensors get dynamic buffers beside it.
     * Exists so that tests can prove the trace shows the duplicated bytes. */
    bool keep_stale_arena;
    /* Kernel scratch (temporaries of plain-C kernels, one operator long) planned apart from
     * the tensors: one block the size of the largest, instead of slots in the arena beside
     * the tensors (the default). Exists to compare the two (memprof plan, --scratch). */
    bool scratch_separate;
    /* The arena and XNNPACK's packed weights from malloc's ordinary pages instead of the
     * transparent-huge-page pool (engine/memory/huge_pool.h): exists to measure the pool
     * (memprof bench --no-huge-pages). */
    bool no_huge_pages;
    /* Every output planned in a slot of its own, instead of the outputs of RESHAPE, SQUEEZE
     * and EXPAND_DIMS taking their input's slot and those of ADD, SUB, MUL and DIV the slot of
     * an input nobody reads after them (the default, as TensorFlow Lite's arena planner does
     * since 2.14; session_memory.c): exists to measure what sharing saves (--in-place off). */
    bool no_in_place;
    mp_plan_at plan_at;      /* when the static manager first plans (DEFAULT: the mode's) */
    /* WHILE iterations one run (or prepare) may make, all loops together, nested ones
     * included: the loop that would make one more is stopped with an error naming it (0 =
     * MP_WHILE_MAX_ITERATIONS). TensorFlow Lite has no bound, but a model whose loop never
     * ends, or whose nested loops multiply, must not hang memprof (docs/memory.md). */
    uint64_t max_iterations;
} mp_session_options;

#define MP_WHILE_MAX_ITERATIONS ((uint64_t)10 * 1000 * 1000)

/* Name of a mode ("auto", ...) and back (-1 when unknown). */
const char *mp_memory_mode_name(mp_memory_mode m);
int mp_memory_mode_parse(const char *name);
/* "prepare", "first-run" (DEFAULT: "default") and back (-1 when unknown); and the policy a
 * mode uses for DEFAULT. */
const char *mp_plan_at_name(mp_plan_at p);
int mp_plan_at_parse(const char *name);
mp_plan_at mp_plan_at_resolve(mp_memory_mode mode, mp_plan_at p);

/* A model asking for a bigger tensor is refused with MP_ERR_SHAPE instead of exhausting memory. */
#define MP_DEFAULT_MAX_TENSOR ((size_t)4 << 30)

mp_status mp_session_create(const mp_session_options *opt, mp_session **out, mp_error *err);
void mp_session_destroy(mp_session *s);

/* Load a model: a path, or "zoo:NAME" for a built-in model. The session owns it. */
mp_status mp_session_load(mp_session *s, const char *path, mp_error *err);
/* Load from bytes already in memory (copied once). */
mp_status mp_session_load_memory(mp_session *s, const void *bytes, size_t size, const char *label,
                                 mp_error *err);

/* Change the shape of input number `input` (subgraph input order). Dimensions must agree
 * with the shape signature (-1 = free). Legal before or after prepare. */
mp_status mp_session_set_input_shape(mp_session *s, int input, int32_t rank, const int32_t *dims,
                                     mp_error *err);
mp_status mp_session_prepare(mp_session *s, mp_error *err);
/* Copy caller data into input `input` (bytes must equal the input's current size); the
 * copy is recorded. A later set_input replaces a buffer bound by set_input_buffer. */
mp_status mp_session_set_input(mp_session *s, int input, const void *data, size_t bytes,
                               mp_error *err);
/* Run on the caller's buffer for input `input`, without copying. capacity must be at least
 * the input's size plus MP_INPUT_SLACK (XNNPACK may read, never use, that far past the
 * end); checked again at every run, since shapes can change. NULL unbinds. */
mp_status mp_session_set_input_buffer(mp_session *s, int input, void *buf, size_t capacity,
                                      mp_error *err);
/* Let runs write output `output` straight into the caller's buffer (capacity >= its size
 * at each run). NULL unbinds. A bound output is not in the arena. */
mp_status mp_session_set_output_buffer(mp_session *s, int output, void *buf, size_t capacity,
                                       mp_error *err);
/* Copy output `output` of the last run into dst (bytes must equal its size); recorded. */
mp_status mp_session_get_output(mp_session *s, int output, void *dst, size_t bytes,
                                mp_error *err);
mp_status mp_session_run(mp_session *s, mp_error *err);
/* The last run's time in ns, with the work that belongs to it but was done before it
 * started: after a shape change, mp_session_set_input must re-plan (and allocate the new
 * arena) to have somewhere to copy into; that work is recorded in the trace inside the run
 * it serves (a phase `run N` opened for it) and its time is added here, so that a run after
 * a shape change costs the same whether its inputs were copied or bound. 0 before a run. */
uint64_t mp_session_last_run_ns(const mp_session *s);
/* Variable tensors (is_variable in the model: the hidden and cell state of LSTM and other
 * recurrent operators) keep their values from one run to the next, in blocks of their own
 * (memory kind variable), never in the arena. This sets every one (those of the subgraphs a
 * WHILE or IF calls included) back to its initial value:
 * the model's constant for it, else zeros (int8: its zero point), as TensorFlow Lite's
 * ResetVariableTensors. Before the first prepare there is nothing to reset (prepare gives
 * them their initial value). It also frees the model's resource variables (ASSIGN_VARIABLE's)
 * and makes every CALL_ONCE run its subgraph again in the next run, as a new interpreter would
 * (TensorFlow Lite's reset leaves those: docs/memory.md). */
mp_status mp_session_reset_variables(mp_session *s, mp_error *err);

const mp_model *mp_session_model(const mp_session *s);
int mp_session_input_count(const mp_session *s);
int mp_session_output_count(const mp_session *s);
/* Runtime view of input/output i (current shape, data after a run). */
const mp_tensor *mp_session_input(const mp_session *s, int i);
const mp_tensor *mp_session_output(const mp_session *s, int i);
const mp_tensor *mp_session_tensor(const mp_session *s, int32_t index);
/* The tensor whose arena slot tensor `index` shares in place in the current plan
 * (docs/memory.md, "In place"); -1 when it has a home of its own, or none. */
int32_t mp_session_shared_slot(const mp_session *s, int32_t index);
/* Output i's shape is known only while running (its producer's shape depends on data), so
 * its size before a run is a guess (pipelines copy such an output instead of binding it). */
bool mp_session_output_deferred(const mp_session *s, int i);
/* A shape or binding changed since the last prepare: the outputs' shapes and sizes are those
 * of before until the next prepare (or the run that prepares). */
bool mp_session_needs_prepare(const mp_session *s);
/* Find an input by name or decimal index; -1 when none. */
int mp_session_find_input(const mp_session *s, const char *name_or_index);

mp_mem *mp_session_mem(mp_session *s);

/* Slack a caller's input buffer needs past the input's bytes (XNN_EXTRA_BYTES). */
extern const size_t MP_INPUT_SLACK;

/* The memory managers' state now (for tests and reports; the trace has the history). */
typedef struct mp_session_memory {
    uint64_t arena_bytes;     /* the current arena (0 = none) */
    uint64_t lower_bound;     /* live-set lower bound of the current plan's tensors */
    uint64_t naive_bytes;     /* their aligned sizes summed */
    int32_t n_planned;        /* tensors in the current plan */
    int32_t n_dynamic;        /* tensors with a dynamic buffer now */
    uint64_t dynamic_live;    /* bytes of those buffers */
    uint64_t plans_made;      /* planner calls so far */
    uint64_t plans_reused;    /* plans taken from the cache instead */
    int32_t n_scratch;        /* operators whose scratch the current plan holds */
    uint64_t scratch_block;   /* bytes of the separate scratch block (scratch_separate) */
    int32_t n_variable;       /* variable tensors with their block (kept across runs), and
                                 resource variables holding a value */
    uint64_t variable_bytes;  /* bytes of those blocks */
    uint64_t arenas_made;     /* arenas the static manager allocated so far */
    uint64_t arenas_unused;   /* of those, freed before any run used them */
    mp_plan_at plan_at;       /* the policy in force (never DEFAULT) */
} mp_session_memory;
void mp_session_memory_info(const mp_session *s, mp_session_memory *out);

/* One buffer the static manager plans for the current shapes: a tensor or an operator's
 * scratch. */
typedef struct mp_plan_item {
    int32_t tensor;           /* -1 = the scratch of operator `op` */
    int32_t op;               /* scratch: its operator; tensor: its producer (-1 = none) */
    uint64_t bytes;
    int32_t first, last;      /* operator steps it lives for (inclusive) */
    bool io;                  /* a model input or output */
} mp_plan_item;
/* What the static manager plans for the current shapes (prepares first when needed), in
 * tensor order then scratch in operator order: *items is malloc'd, the caller frees it.
 * Empty in dynamic mode. The planner's alignment is *align. */
mp_status mp_session_plan_items(mp_session *s, mp_plan_item **items, int32_t *n,
                                uint64_t *align, mp_error *err);
/* A model of several subgraphs (docs/memory.md, "Control flow"): what the static manager
 * plans for subgraph k (0 the model's, as mp_session_plan_items; k >= 1 a subgraph a WHILE, IF
 * or CALL_ONCE calls, its items' tensors and operators numbered in that subgraph) and when:
 *   AT_PREPARE  planned by the prepare (made first when needed) for the shapes its caller
 *               passed; its arena, of arena_bytes, held with the others' until teardown (as
 *               TensorFlow Lite allocates every subgraph's);
 *   AGAIN       as AT_PREPARE for the shapes its caller passed first, but a caller is
 *               deferred (a WHILE whose body changes a shape: outputs known only while
 *               running): the run plans it again as those shapes change;
 *   AT_RUN      a CALL_ONCE's: planned when the first run calls it, its arena freed once it
 *               ran (TensorFlow Lite's ReleaseNonPersistentMemory); planned here as that run
 *               plans it, for the listing, its arena (arena_bytes) freed again;
 *   NONE        nothing planned (nothing listed): no prepare calls it (an IF's branch its
 *               constant condition does not take, a subgraph no operator calls), or dynamic
 *               mode. */
typedef enum mp_subgraph_when {
    MP_SG_NONE = 0, MP_SG_AT_PREPARE, MP_SG_AT_RUN, MP_SG_AGAIN
} mp_subgraph_when;
mp_status mp_session_subgraph_plan_items(mp_session *s, int32_t k, mp_plan_item **items,
                                         int32_t *n, mp_subgraph_when *when,
                                         uint64_t *arena_bytes, mp_error *err);

/* An arena of the caller's, shared by sessions that run one after another (memprof
 * pipeline --share-arena plans one arena for a chain of models). With use_external_arena
 * on, the static manager allocates no arena of its own: its buffers (the items of
 * mp_session_plan_items) get storage only from mp_session_place_arena, item k at
 * base + offsets[k] (n items, in that order, for the current shapes and bindings; each
 * offset a multiple of the plan's alignment; capacity at least every offset + bytes plus
 * MP_INPUT_SLACK; base aligned as the offsets, not owned, outliving its use). The caller
 * answers for buffers of several sessions that overlap (its own plan, checked with
 * mp_plan_check). A shape or binding change drops the layout: runs fail with MP_ERR_ARG until
 * the next place_arena. Off: the session plans arenas of its own again. Dynamic mode plans
 * nothing, so there is nothing to place. */
mp_status mp_session_use_external_arena(mp_session *s, bool on, mp_error *err);
mp_status mp_session_place_arena(mp_session *s, void *base, size_t capacity,
                                 const uint64_t *offsets, int32_t n, mp_error *err);

/* Multiply-accumulates of operator `op` (or of a whole run) at the current shapes: convolution,
 * depthwise convolution and fully connected operators; 0 for any other (macs.c). */
uint64_t mp_session_op_macs(const mp_session *s, int32_t op);
uint64_t mp_session_macs(const mp_session *s);

#endif
