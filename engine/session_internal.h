/* Private state of a session, shared by session.c (the call sequence, shapes, kernels) and
 * session_memory.c (the static and dynamic tensor memory managers). Nothing outside these
 * two files includes it. */
#ifndef MP_SESSION_INTERNAL_H
#define MP_SESSION_INTERNAL_H

#include "engine/kernels/kernel.h"
#include "engine/memory/plan.h"
#include "engine/session.h"

typedef struct node_rt {
    const mp_kernel *kernel;
    bool folded;      /* evaluated at prepare time; runs skip it */
    bool deferred;    /* output shape known only while running */
    bool created;     /* kernel prepare ran at least once */
    uint64_t seen;    /* sum of the versions of its tensors at its last prepare */
    uint8_t scratch_home;     /* tensor_home of nodes[i].scratch: NONE, OWN (a block for the
                                 step), ARENA (a slot, or the separate scratch block) */
    uint32_t scratch_version; /* bumped when the scratch pointer changes */
} node_rt;

/* Where a non-constant tensor's bytes are. */
typedef enum tensor_home {
    HOME_NONE = 0,
    HOME_OWN,    /* its own mp_mem block (dynamic buffer, or a folded value: engine) */
    HOME_ARENA,  /* a slot of the current arena */
    HOME_CALLER  /* a buffer the caller bound with set_input_buffer / set_output_buffer */
} tensor_home;

typedef struct tensor_rt {
    uint32_t version;   /* bumped when shape or storage changes */
    uint8_t home;       /* tensor_home */
    bool used;          /* read or written by some operator, or a graph input/output */
    bool producer_deferred;
    bool folded;        /* written by a folded operator: engine storage, never planned */
    bool persistent;    /* variable (state): storage kept from prepare to teardown */
    bool model_output;
    bool model_input;   /* one of the model's inputs (set by mp_sm_classify) */
    bool dynamic;       /* gets a buffer before its producer runs, freed after its last reader */
    int32_t shares;     /* >= 0: the planned tensor whose slot it shares (an output in place:
                           session_memory.c, "In place"); -1 */
    mp_mem_kind kind;   /* of an own buffer */
    int32_t first, last;/* operator steps using it (runs only; folded operators excluded) */
    size_t caller_cap;  /* capacity of the caller's buffer, when HOME_CALLER */
    void *released;     /* the dynamic block it gave back after its last reader (the pointer
                           its operators were set up with; compared, never dereferenced) */
    bool was_set;       /* a model input copied in by set_input ... */
    uint32_t set_version; /* ... at this version: a later change of storage lost its bytes */
} tensor_rt;

/* A plan kept for input shapes seen before (auto mode). */
typedef struct plan_entry {
    int32_t *key;       /* every input's rank and dims */
    uint64_t *offsets;  /* per tensor, then per node (its scratch); UINT64_MAX = not in it */
    uint64_t total, lower_bound, naive;
    int32_t n_planned;  /* tensors and scratch buffers in the plan */
    uint64_t scratch_max; /* separate scratch: the largest scratch of the plan's nodes */
    uint64_t stamp;     /* last use, for eviction */
} plan_entry;

#define MP_PLAN_CACHE 8

struct mp_session {
    mp_session_options opt;
    const mp_planner *planner;
    mp_trace *trace;
    mp_mem *mem;
    pthreadpool_t pool;
    bool pool_owned;       /* created by the session (not the caller's opt.threadpool) */
    mp_model *model;
    int32_t n_tensors, n_nodes;
    mp_tensor *tensors;
    tensor_rt *trt;
    mp_node *nodes;
    node_rt *nrt;
    mp_tensor **slots; /* node in/out pointer arrays */
    mp_error node_err;
    bool prepared;
    bool shapes_dirty;
    bool plan_dirty;       /* the arena does not match the current shapes or bindings */
    bool in_phase;         /* a public call opened a trace phase */
    uint64_t runs;         /* runs started */
    /* the static manager */
    char *arena;
    uint64_t arena_bytes, arena_lower_bound, arena_naive;
    int32_t n_planned;
    char *scratch_block;   /* scratch_separate: every planned operator's scratch */
    int32_t n_scratch;     /* nodes whose scratch the plan holds */
    bool stale_kept;       /* keep_stale_arena: the arena outlived its shapes */
    plan_entry cache[MP_PLAN_CACHE];
    uint64_t cache_clock;
    uint64_t plans_made, plans_reused;
    mp_plan_at plan_at;    /* resolved: PREPARE or FIRST_RUN */
    bool plan_deferred;    /* prepare left the static plan to the first run (FIRST_RUN) */
    bool arena_used;       /* a run started with the current arena */
    uint64_t arenas_made, arenas_unused;
    /* run timing: work done for the next run before it starts (set_input's re-plan) */
    uint64_t pre_run_ns, last_run_ns;
    /* an arena of the caller's (mp_session_use_external_arena, mp_session_place_arena) */
    bool ext_on;           /* no arena of the session's own */
    bool ext_valid;        /* ext_off places the current plan's items */
    char *ext_base;
    size_t ext_cap;
    uint64_t *ext_off;     /* per item of mp_sm_plan_items */
    int32_t ext_n;
    /* a model of several subgraphs (session_subgraph.c): every subgraph a WHILE or IF calls
     * runs in a session of its own (a "child": the model's view of that subgraph, the root's
     * options, mp_mem, trace and thread pool, no phases of its own), made at load */
    mp_session *root;      /* the session of subgraph 0 (itself there) */
    int32_t subgraph;      /* the subgraph this session runs */
    mp_session **subs;     /* root: the child of each subgraph (n_subgraphs entries, [0] NULL) */
    int32_t *tensor_base;  /* root: each subgraph's first tensor in the trace's tables ... */
    int32_t *op_base;      /* ... and its first operator */
    int32_t *caller_at;    /* root: the operators calling subgraph k (WHILE, IF, CALL_ONCE) are
                              callers[caller_at[k] .. caller_at[k + 1]) (made at load) */
    struct sg_caller { int32_t subgraph, op; } *callers;
    uint64_t iterations;   /* root: WHILE iterations since the current run or prepare began */
    struct mp_res_store *resources; /* root: resource variables and CALL_ONCE marks (NULL: none yet) */
};

/* ---- session.c, for session_subgraph.c ---- */
/* Build the runtime view of a verified model (or subgraph view, for a child). */
mp_status mp_ss_attach(mp_session *s, mp_model *m, mp_error *err);
/* Infer, place and set up what changed (prepare_all with the plan never deferred). */
mp_status mp_ss_prepare(mp_session *s, mp_error *err);
/* Run every operator once (what mp_session_run does inside its phase). */
mp_status mp_ss_run(mp_session *s, mp_error *err);
/* Give input tensor t of s the shape rank/dims (a change invalidates the plan). */
mp_status mp_ss_set_shape(mp_session *s, int32_t t, int32_t rank, const int32_t *dims,
                          mp_error *err);
/* Unload a child and free it (its model is the root's view: not freed). */
void mp_ss_destroy_child(mp_session *c);

/* ---- session_subgraph.c ---- */
/* Make the children of a model of several subgraphs and its trace bases (at load). */
mp_status mp_ss_children_create(mp_session *s, mp_error *err);
/* Destroy them (root teardown). */
void mp_ss_children_destroy(mp_session *s);
/* Total tensors and operators of every subgraph, with subgraph k's first at base[k]. */
void mp_ss_trace_bases(const mp_model *m, int32_t *tensor_base, int32_t *op_base,
                       int32_t *n_tensors, int32_t *n_ops);

/* ---- session_memory.c ----------------------------------------------------------- */
/* Lifetimes and roles of every tensor for the current folded/deferred marking. */
void mp_sm_classify(mp_session *s);
/* Give the static manager's tensors their slots: plan (or take a cached plan) and
 * allocate one arena (defer_plan: neither; the plan stays due, nothing gets storage for it). Variable (persistent) tensors get blocks of their own (kind variable),
 * kept when they have one, else set to their initial value. */
mp_status mp_sm_place(mp_session *s, bool defer_plan, mp_error *err);
/* Release the arena (its tensors lose their storage). */
void mp_sm_release_arena(mp_session *s);
/* A shape changed or a binding changed: nothing planned for the old state may stay. */
void mp_sm_invalidate(mp_session *s, bool forget_cached_plans);
/* Own buffer of the current size for tensor t (kept when already right), owned by
 * tensor t and operator op (-1 = none). */
mp_status mp_sm_give_own(mp_session *s, int32_t t, mp_mem_kind kind, int32_t op, mp_error *err);
void mp_sm_free_own(mp_session *s, int32_t t);
/* Set variable tensor t (with its own block) to its initial value: the model's constant for
 * it when it has one, else zeros (an int8 tensor: its zero point). */
void mp_sm_reset_variable(mp_session *s, int32_t t);
/* Scratch of node i that is not planned (dynamic mode, deferred or folded nodes): a block
 * of its own for one step. */
mp_status mp_sm_scratch_own(mp_session *s, int32_t i, mp_error *err);
void mp_sm_scratch_free(mp_session *s, int32_t i);
/* Dynamic manager around running node i (its scratch included). */
mp_status mp_sm_before_node(mp_session *s, int32_t i, mp_error *err);
void mp_sm_after_node(mp_session *s, int32_t i);
/* Check bound caller buffers against the current sizes. */
mp_status mp_sm_check_bound(mp_session *s, mp_error *err);
/* String input t given as `cap` bytes at data (a copy's bytes; a bound buffer's capacity,
 * whose strings end at their last offset, before MP_INPUT_SLACK): checked against the
 * input's element count (MP_ERR_FORMAT naming it otherwise), and the tensor sized by it. */
mp_status mp_sm_string_input(mp_session *s, int32_t t, const void *data, size_t cap, bool bound,
                              mp_error *err);
/* Free everything the managers hold (teardown). */
void mp_sm_release_all(mp_session *s);
/* What the static manager plans for the current classification (mp_session_plan_items). */
mp_status mp_sm_plan_items(const mp_session *s, mp_plan_item **items, int32_t *n,
                           mp_error *err);
/* Take the caller's layout of the current plan's items (mp_session_place_arena). */
mp_status mp_sm_set_external(mp_session *s, char *base, size_t capacity, const uint64_t *offsets,
                             int32_t n, mp_error *err);
/* ---- session_resources.c (the root's store; engine/session_resources.h) ---- */
/* Free every resource variable's bytes (they have no value until assigned again) and forget
 * every CALL_ONCE's initialization; free the whole store (teardown); count the variables
 * holding bytes and those bytes (added to *n, *bytes). */
void mp_res_reset(mp_session *s);
void mp_res_destroy(mp_session *s);
void mp_res_count(const mp_session *s, int32_t *n, uint64_t *bytes);

/* The alignment of every planned slot. */
#define MP_SLOT_ALIGN 64

#endif
