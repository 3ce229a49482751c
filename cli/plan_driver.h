/* memprof plan's driver: the model loaded (names recorded, not events) and shaped, its
 * buffers (tensors and kernel scratch) compared with every planner (engine/memory/
 * plan_compare.h) on all of them, on the tensors alone and on them but the inputs and
 * outputs, and XNNPACK's runtime built beside with --peer xnnpack. */
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

typedef enum fmt { FMT_TEXT, FMT_JSON, FMT_SVG } fmt;

typedef struct plan_args {
    const char *model, *out;
    mp_model_opts m; /* --shape, --threads, --planner (NULL: all) */
    fmt format;
    bool peer, exact;
} plan_args;

/* The buffers to plan: all items, the tensors alone, or the tensors but the model's inputs
 * and outputs. */
typedef enum { SET_ALL, SET_TENSORS, SET_INTERNAL } set_kind;

typedef struct plan_ctx {
    const plan_args *a;
    mp_trace *tr;
    mp_session *s;
    mp_plan_item *items;
    int32_t n_items, n_scratch;
    uint64_t align, scratch_max;
    mp_plan_buf *bufs[3];            /* by set_kind */
    int32_t n_bufs[3];
    mp_plan_compare cmp;             /* the planners on every buffer */
    uint64_t lb_tensors, lb_internal;
    mp_plan_result tensors_res, internal_res; /* the chosen planner on the other sets */
    bool peer_ok;
    char peer_why[512];
    mp_xnn_peer_memory peer_mem;
} plan_ctx;

/* Load and shape the model; errors printed; returns the exit code. */
int mp_cli_plan_prepare(plan_ctx *c);
/* Compare the planners on the buffer sets. */
int mp_cli_plan_compare(plan_ctx *c);
/* Build XNNPACK's runtime and take its memory (a refusal is kept in peer_why, exit 0). */
int mp_cli_plan_peer(plan_ctx *c);
void mp_cli_plan_free(plan_ctx *c);

#endif
