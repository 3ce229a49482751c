/* memprof plan's driver: the model loaded (names recorded, not events) and shaped, its
 * buffers (tensors and kernel scratch) compared with every planner (engine/memory/
 * plan_compare.h) on all of them, on the tensors alone and on them but the inputs and
 * outputs, for every subgraph the session plans, and XNNPACK's runtime built beside with
 * --peer xnnpack. */
#ifndef MP_PLAN_DRIVER_H
#define MP_PLAN_DRIVER_H

#include <stdbool.h>
#include <stdint.h>

#include "cli/options.h"
#include "engine/memory/plan.h"
#include "engine/memory/plan_compare.h"
#include "engine/session.h"
#include "peers/xnnpack_runtime.h"
#include "trace/trace.h"

typedef enum mp_plan_format { MP_PFMT_TEXT, MP_PFMT_JSON, MP_PFMT_SVG } mp_plan_format;

typedef struct mp_plan_args {
    const char *model, *out;
    mp_model_opts m; /* --shape, --threads, --planner (NULL: all) */
    mp_plan_format format;
    bool peer, exact;
} mp_plan_args;

/* The buffers to plan: all items, the tensors alone, or the tensors but the model's inputs
 * and outputs. */
typedef enum { MP_SET_ALL, MP_SET_TENSORS, MP_SET_INTERNAL } mp_set_kind;

/* One subgraph's buffers and the planners on them (subgraph 0 the model's; a model of
 * several has one per subgraph: docs/plan.md). */
typedef struct mp_plan_set {
    int32_t subgraph;
    mp_subgraph_when when;           /* planned at prepare, at the first run, or not */
    uint64_t session_arena;          /* the arena the session allocates for it */
    char called_by[96];              /* "WHILE (op #0 of subgraph 0)[ and N more]", or "" */
    mp_plan_item *items;
    int32_t n_items, n_scratch;
    int32_t n_in_place;              /* tensors in place in a slot of the plan */
    uint64_t scratch_max;
    mp_plan_buf *bufs[3];            /* by mp_set_kind */
    int32_t n_bufs[3];
    mp_plan_compare cmp;             /* the planners on every buffer */
    uint64_t lb_tensors, lb_internal;
    mp_plan_result tensors_res, internal_res; /* the chosen planner on the other sets */
} mp_plan_set;

typedef struct mp_plan_ctx {
    const mp_plan_args *a;
    mp_trace *tr;
    mp_session *s;
    uint64_t align;
    mp_plan_set *sets;               /* one per subgraph, [0] the model's */
    int32_t n_sets;
    bool peer_ok;
    char peer_why[512];
    mp_xnn_peer_memory peer_mem;
} mp_plan_ctx;

/* Load and shape the model; errors printed; returns the exit code. */
int mp_cli_plan_prepare(mp_plan_ctx *c);
/* Compare the planners on the buffer sets of every subgraph planned. */
int mp_cli_plan_compare(mp_plan_ctx *c);
/* Build XNNPACK's runtime and take its memory (a refusal is kept in peer_why, exit 0). */
int mp_cli_plan_peer(mp_plan_ctx *c);
void mp_cli_plan_free(mp_plan_ctx *c);

#endif
