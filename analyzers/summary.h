/* Summary: every figure `memprof run` prints about one recorded session.
 *
 * Time per phase and per run, the heap peak (when, per kind, and what is alive then), the
 * allocations per run, static / dynamic / duplicated bytes, copies, the allocation balance
 * and the heap the engine did not account for. Computed from the trace alone (two replays:
 * one for the figures, one to the peak moments to list what is alive there).
 *
 * Heap means every kind but MP_KIND_CONST (model constants, reported as const_bytes), the
 * caller's own buffers recorded in the trace (trace.h MP_TRACE_CALLER_ID) included.
 * Names (tensor and operator names) point into the trace's metadata: a summary is valid as
 * long as the trace it was computed from. */
#ifndef MP_SUMMARY_H
#define MP_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyzers/source.h"
#include "trace/status.h"
#include "trace/trace.h"

/* A moment in the trace. */
typedef struct mp_summary_when {
    int64_t event;          /* event index, -1 = never (nothing happened) */
    uint64_t t_ns;
    int32_t phase_kind;     /* mp_phase_kind, -1 = outside any phase */
    uint32_t phase;         /* phase instance index, UINT32_MAX = outside any phase */
    uint64_t run;           /* run number, 0 = not inside a run */
    int32_t op;             /* innermost running operator, -1 = none */
    const char *op_name;    /* its name, NULL when op is -1 or unknown */
} mp_summary_when;

/* Where an item alive at the peak lives. */
typedef enum mp_summary_home {
    MP_SUMMARY_BLOCK = 0,   /* a tensor's own block (dynamic, standalone static, io) */
    MP_SUMMARY_SLOT,        /* a tensor's slot in a live planned arena */
    MP_SUMMARY_OP_BUFFERS,  /* non-tensor blocks of one operator and kind, summed */
    MP_SUMMARY_OWNERLESS,   /* blocks with no owner of one kind (engine bookkeeping...), summed */
    MP_SUMMARY_ARENA_FREE,  /* bytes of a live arena that no alive slot covers (peak in an op) */
    MP_SUMMARY_ARENA,       /* a whole live arena (peak outside any operator) */
    MP_SUMMARY_SCRATCH      /* an operator's scratch slot in a live arena (op: the operator) */
} mp_summary_home;

/* Something alive at the heap peak. Tensor items have tensor >= 0. The caller's own buffers
 * are one MP_SUMMARY_OWNERLESS item of kind io. Summed over all items, bytes equal the heap peak (for a valid plan, whose slots alive at one operator do not
 * overlap). */
typedef struct mp_summary_alive {
    mp_summary_home home;
    int32_t tensor;         /* -1 for non-tensor items */
    const char *name;       /* tensor name (NULL when unknown or not a tensor) */
    uint8_t kind;           /* MP_KIND_* of the block or arena */
    uint64_t bytes;
    uint64_t id;            /* block id (BLOCK) or arena id (SLOT, ARENA_FREE, ARENA); else 0 */
    int32_t op;             /* tensor: producing operator, -1 = none (model input, const);
                               OP_BUFFERS: the operator; else -1 */
    const char *op_name;    /* name of op, NULL when op is -1 */
    uint32_t n_blocks;      /* blocks summed (1 for BLOCK, 0 for SLOT and ARENA_FREE);
                               ARENA: its slots (a tensor's or an operator's scratch) */
    uint32_t n_in_place;    /* ARENA: tensors in place in its tensors' slots (no slot of
                               their own, meta shares); else 0 */
    uint32_t n_scratch;     /* ARENA: its slots that are an operator's scratch; else 0 */
} mp_summary_alive;

/* A tensor held twice at the moment duplication peaked. */
typedef struct mp_summary_dup {
    int32_t tensor;
    const char *name;
    uint64_t bytes;         /* bytes of its homes but the newest */
    uint32_t homes;         /* homes it had (>= 2) */
} mp_summary_dup;

/* Allocation activity of one run (heap kinds). */
typedef struct mp_summary_run {
    uint64_t run;           /* run number from the trace (1-based) */
    uint64_t t_ns;          /* time inside the run */
    uint64_t n_alloc;       /* ALLOC + REALLOC events */
    uint64_t bytes_alloc;   /* bytes of ALLOCs + growth of REALLOCs */
    uint64_t n_free;        /* FREE events */
    uint64_t bytes_freed;   /* bytes of FREEs + shrinkage of REALLOCs */
} mp_summary_run;

typedef struct mp_summary {
    size_t n_events;

    /* ---- time ---- */
    uint64_t phase_ns[MP_PHASE_KIND_COUNT];    /* summed over the instances of each kind */
    uint32_t phase_count[MP_PHASE_KIND_COUNT]; /* instances of each kind */
    size_t n_runs;
    mp_summary_run *runs;         /* one per run number, in order of first appearance */
    uint64_t first_run_ns;        /* runs[0].t_ns, 0 without runs */
    size_t n_later;               /* runs 2..N */
    uint64_t later_median_ns;     /* even count: mean of the two middle ones */
    uint64_t later_mean_ns, later_min_ns, later_max_ns; /* 0 without later runs */

    /* ---- heap peak ---- */
    uint64_t peak_heap;               /* bytes, first reached at `peak` */
    mp_summary_when peak;             /* event -1 when nothing was ever allocated */
    uint64_t peak_live[MP_KIND_COUNT];/* live bytes per kind at the peak (const included) */
    uint64_t kind_peak[MP_KIND_COUNT];/* each kind's own peak */
    uint64_t const_bytes;             /* model constants (peak live of MP_KIND_CONST) */
    /* The model's bytes held on the heap by the caller (meta model_heap_bytes: a zoo: model
     * built in memory; 0 for a file mapped from disk), live for the whole session: part of
     * the process heap (meta process_heap_peak) and of the reconciliation below, not of
     * peak_heap (the heap of the session's events; the constants are then within them). */
    uint64_t model_heap;
    /* The caller's own buffers (trace.h MP_TRACE_CALLER_ID, kind io): counted in peak_heap
     * and peak_live[MP_KIND_IO], but not in kind_peak[MP_KIND_IO] (the engine's io). */
    uint64_t peak_caller;             /* live at the peak (part of peak_live[MP_KIND_IO]) */
    uint64_t caller_peak;             /* their own peak */
    /* Planned arenas at the peak. When the peak is inside operator P (peak_slots_by_op
     * true), each live arena is split into the slots whose range op_first..op_last covers P
     * (MP_SUMMARY_SLOT items, one per tensor) and the bytes none of them covers (one
     * MP_SUMMARY_ARENA_FREE item). When it is outside any operator (load, prepare, between
     * two operators), no planned tensor is being computed and slots that share bytes cannot
     * be told apart, so each arena is one MP_SUMMARY_ARENA item (listing every slot would
     * count shared bytes several times). */
    bool peak_slots_by_op;
    size_t n_alive;
    mp_summary_alive *alive;          /* largest first */

    /* ---- allocations per run (heap kinds) ---- */
    mp_summary_run first_run;         /* zero without runs */
    mp_summary_run later_max;         /* each field's maximum over runs 2..N (run = 0) */

    /* ---- static, dynamic, duplicated ---- */
    uint64_t static_bytes;            /* peak live of MP_KIND_STATIC */
    uint64_t dynamic_bytes;           /* peak live of MP_KIND_DYNAMIC */
    /* A tensor's homes: its live blocks of kind STATIC, DYNAMIC or IO, and its slots in live
     * arenas. Duplicated bytes at a moment: for each tensor with two homes or more, the bytes
     * of all its homes but the newest. dup_bytes is the maximum over the trace, first
     * reached at `dup`; dups lists the tensors held twice then, largest first. */
    uint64_t dup_bytes;
    mp_summary_when dup;
    size_t n_dups;
    mp_summary_dup *dups;

    /* ---- copies ---- */
    uint64_t n_copy_in, bytes_copy_in, n_copy_out, bytes_copy_out;

    /* ---- balance (heap kinds) ---- */
    uint64_t n_alloc;                 /* ALLOC events */
    uint64_t n_realloc;               /* REALLOC events */
    uint64_t n_free;                  /* FREE events */
    uint64_t bytes_alloc;             /* ALLOC bytes + REALLOC growth */
    uint64_t bytes_freed;             /* FREE bytes + REALLOC shrinkage */
    uint64_t live_end;                /* heap still live at the end (0 = all freed) */
    uint64_t live_end_kind[MP_KIND_COUNT]; /* per kind (const included: unmapped or not) */

    /* ---- heap not accounted for by the engine ---- */
    bool unaccounted_measured;        /* process_heap_peak and allocator_overhead known */
    int64_t unaccounted;              /* process_heap_peak - peak_heap - allocator_overhead
                                         - model_heap */

    /* ---- trace health ---- */
    bool truncated;                   /* the recorder ran out of memory: figures are partial */
    uint64_t n_anomalies;             /* events contradicting the state (see replay.h) */
    char anomaly[200];                /* the first one, "" if none */
} mp_summary;

/* Compute the summary of a trace. On error (MP_ERR_NOMEM, MP_ERR_ARG for a NULL argument),
 * *out is left empty (safe to free). */
mp_status mp_summary_compute(const mp_trace *tr, mp_summary *out, mp_error *err);
/* The same over any event source (two passes; rewinds it). A file source's read or format
 * error is returned as is (MP_ERR_IO, MP_ERR_FORMAT). */
mp_status mp_summary_compute_source(mp_source *src, mp_summary *out, mp_error *err);
void mp_summary_free(mp_summary *s);

/* What is alive in a replay's state now, listed as mp_summary.alive lists the peak: blocks
 * of every kind but const (kind_filter -1) or of one kind (kind_filter = MP_KIND_*), tensor
 * blocks one by one, other blocks summed per operator and kind or per kind, and each live
 * arena split into its slots alive at operator `op` plus the bytes none of them covers (the
 * whole arena when op is -1). Largest first; *items is malloc'd (NULL when nothing is
 * alive), names point into meta. False when out of memory. */
typedef struct mp_replay mp_replay;
bool mp_summary_alive_now(const mp_replay *r, const mp_trace_meta *meta, int32_t op,
                          int kind_filter, mp_summary_alive **items, size_t *n);

#endif
