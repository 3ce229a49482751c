/* Profile: every analysis of a trace that `memprof report` lays out (timeline, lifetimes,
 * peak, plan quality, per operator, waste), and the comparison of two profiles.
 *
 * Computed from an event source (source.h) in a bounded number of passes and bounded memory:
 * what a profile holds grows with the model (tensors, operators, arenas kept) and with the
 * number of timeline points asked for, never with the number of events. Names point into the
 * source's metadata: a profile is valid as long as its source is open.
 *
 * Terms used throughout:
 *  - heap: live bytes of every kind but MP_KIND_CONST (as in summary.h);
 *  - step: one execution of one operator (an OP_BEGIN .. OP_END pair); steps are numbered
 *    0, 1, 2... over the whole trace, so with N runs of an M-operator model there are N*M;
 *  - operator index: the operator's place in the model (0..n_ops-1), the same in every run;
 *  - reference run: the run whose operators the lifetime chart and the arena layout show:
 *    the run during which the heap peaked, or else the last run, or -1 when there is none. */
#ifndef MP_PROFILE_H
#define MP_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyzers/source.h"
#include "analyzers/summary.h"
#include "trace/status.h"
#include "trace/trace.h"

/* ---- timeline ------------------------------------------------------------------------- */

/* One point of a timeline: a run of consecutive events (or steps) summarised by the moment
 * of highest heap among them, so that a peak is never averaged away. */
typedef struct mp_tl_point {
    uint64_t ev_first, ev_last;   /* events the point covers (inclusive) */
    uint64_t step_first, step_last; /* steps begun up to ev_first, up to ev_last (x axis in
                                       operators: a point between steps has first == last) */
    uint64_t t_ns;                /* time of the highest-heap moment */
    uint64_t heap;                /* heap then (the maximum within the point) */
    uint64_t live[MP_KIND_COUNT]; /* live bytes per kind then (const included) */
    int32_t phase_kind;           /* mp_phase_kind then, -1 = none */
    uint64_t run;                 /* run number then, 0 = outside runs */
    int32_t op;                   /* innermost running operator index then, -1 = none */
    uint64_t rss, rss_hwm;        /* last MP_EV_RSS sample at or before ev_last, 0 = none yet */
} mp_tl_point;

typedef struct mp_timeline {
    size_t n;
    mp_tl_point *pts;             /* in trace order */
    size_t peak;                  /* index of the point holding the heap peak (0 if n == 0) */
    uint64_t per_point;           /* events per point (by event) or steps per point (by step);
                                     1 = every event / step has its own point */
    bool has_rss;                 /* the trace has RSS samples */
} mp_timeline;

/* ---- lifetimes -------------------------------------------------------------------------- */

typedef enum mp_manager {
    MP_MGR_NONE = 0,   /* never held during the reference run (folded, unused) */
    MP_MGR_ARENA,      /* a slot of a planned arena (static manager) */
    MP_MGR_DYNAMIC,    /* a block of its own, allocated while running (dynamic manager) */
    MP_MGR_OWN,        /* a block of its own that outlives runs (kind STATIC with an owner) */
    MP_MGR_IO,         /* a caller's buffer or an engine I/O block (kind IO) */
    MP_MGR_CONST,      /* model constant (mapped or kept by the engine) */
    MP_MGR_COUNT
} mp_manager;

const char *mp_manager_name(int m); /* "none", "arena", "dynamic", "own", "io", "const" */

/* How a lifetime is read from the trace: the tensor's homes held at any moment of the
 * reference run (or of the whole trace when there is no run) are its slots in live arenas
 * and its own blocks of kind static (MP_MGR_OWN), dynamic, io or const; the newest of them
 * (latest PLAN or allocation) gives manager, bytes and offset. A slot's operators are its
 * PLAN event's; a block's are the first and last operator steps of the reference run during
 * which one of the tensor's blocks was live (-1 when none was). A tensor in place (meta
 * shares, no home of its own) takes the slot of the tensor it shared, for the operators from
 * its producer to its last reader. */
typedef struct mp_lifetime {
    int32_t tensor;
    const char *name;             /* NULL when the trace has none */
    int32_t first_op, last_op;    /* operator indices of the reference run, -1 = unknown */
    uint64_t bytes;               /* 0 when never held */
    uint8_t manager;              /* mp_manager */
    int64_t offset;               /* arena offset (MP_MGR_ARENA), else -1 */
    uint64_t arena_id;            /* arena block id (MP_MGR_ARENA), else 0 */
    int32_t producer;             /* operator writing it, -1 = none (input, constant) */
    const char *producer_name;
    bool in_place;                /* no slot of its own: its bytes, offset and arena are those
                                     of the tensor whose slot it shared (meta shares) */
} mp_lifetime;

/* ---- plan quality ------------------------------------------------------------------------ */

typedef struct mp_arena_slot {
    int32_t tensor;               /* -1 for an operator's scratch slot */
    const char *name;
    uint64_t offset, bytes;
    int32_t first_op, last_op;    /* operator indices the slot is alive for */
    uint8_t kind;                 /* added: MP_KIND_STATIC (a tensor's slot) or MP_KIND_SCRATCH
                                     (operator first_op's scratch, tensor -1) */
} mp_arena_slot;

/* One planned arena (an owner-less STATIC block that received PLAN events), from its
 * allocation to its free. */
typedef struct mp_arena_report {
    uint64_t id;                  /* block id */
    uint64_t bytes;               /* the block's size */
    uint64_t used;                /* max over slots of offset + bytes */
    uint64_t lower_bound;         /* max over operator indices of the bytes of the slots
                                     alive there (no plan of these slots can be smaller) */
    int32_t lower_bound_op;       /* first operator index where it is reached, -1 if none */
    uint64_t naive;               /* sum of slot bytes (no reuse) */
    uint64_t alloc_event, free_event; /* event indices; free_event = UINT64_MAX if never */
    uint64_t runs;                /* runs that happened while it was live (0 = never used) */
    size_t n_slots;
    mp_arena_slot *slots;         /* by offset, then by first_op */
    /* Fragmentation: bytes of the arena not holding a live slot, per operator index
     * (n_ops entries: bytes - live slot bytes at that operator). */
    int32_t n_ops;
    uint64_t *free_at_op;
    /* Added: the worst of free_at_op and the first operator index where it is reached
     * (-1 when n_ops is 0); true when the arena was live during the reference run. */
    uint64_t frag_max;
    int32_t frag_max_op;
    bool in_reference_run;
} mp_arena_report;

/* Lay out an arena report from its slots (copied, then sorted by offset): sets bytes, used,
 * naive, lower bound, free bytes per operator (n_ops operators) and the worst of them; the
 * other fields are left as they are. For a plan made without a trace (memprof plan). False
 * when out of memory (the report is then empty). */
bool mp_arena_report_layout(mp_arena_report *a, uint64_t bytes, const mp_arena_slot *slots,
                            size_t n, int32_t n_ops);
/* Free what mp_arena_report_layout allocated. */
void mp_arena_report_free(mp_arena_report *a);

/* ---- per operator ------------------------------------------------------------------------ */

typedef struct mp_op_report {
    int32_t op;
    const char *name;             /* builtin name from the metadata */
    uint64_t n_exec;              /* steps of this operator */
    uint64_t time_ns, min_ns, max_ns; /* summed over its steps; shortest, longest step */
    uint64_t n_alloc, bytes_alloc;/* heap allocations attributed to it (owner op, or made
                                     while it was running), all phases; n_alloc counts
                                     ALLOC and REALLOC events, bytes_alloc the ALLOC bytes
                                     and REALLOC growth (as summary.bytes_alloc) */
    uint64_t scratch_bytes;       /* max live bytes of kind SCRATCH owned by it: its blocks,
                                     or its scratch slot in a planned arena (the larger) */
    uint64_t kernel_bytes;        /* max live bytes of kind KERNEL owned by it (XNNPACK's) */
    uint64_t output_bytes;        /* bytes of its output tensors (reference run) */
} mp_op_report;

/* ---- waste ---------------------------------------------------------------------------- */

/* A block allocated and freed (or still live at the end) without any step in between:
 * memory that no operator could have used. Blocks of kinds static, dynamic, scratch,
 * kernel and io are judged (engine bookkeeping and mapped constants are not). */
typedef struct mp_unused_block {
    uint64_t id, bytes;
    uint8_t kind;
    int32_t tensor;               /* owner, -1 = none */
    const char *name;             /* tensor name or NULL */
    int32_t phase_kind;           /* phase it was allocated in */
    uint64_t alloc_event;
} mp_unused_block;

/* ---- the profile ------------------------------------------------------------------------ */

typedef struct mp_profile_options {
    size_t max_points;            /* most points per timeline (0 = 2000) */
    size_t max_arenas;            /* most arenas reported with their slots (0 = 64; the
                                     first ones planned, and always the reference run's) */
    size_t max_unused;            /* most unused blocks listed (0 = 20; largest first) */
} mp_profile_options;

typedef struct mp_profile {
    const mp_trace_meta *meta;
    mp_summary summary;           /* time, heap peak and what is alive then, copies, dup... */

    mp_timeline by_event;
    mp_timeline by_step;
    uint64_t n_steps;

    int64_t reference_run;        /* run number, -1 = no run */
    size_t n_lifetimes;           /* = meta->n_tensors */
    mp_lifetime *lifetimes;       /* by tensor index */

    size_t n_arenas_total;        /* arenas planned in the whole trace */
    size_t n_arenas;              /* reported below */
    mp_arena_report *arenas;      /* in order of allocation */
    int64_t reference_arena;      /* index in arenas of the one live in the reference run,
                                     -1 = none */

    size_t n_ops;                 /* = meta->n_ops */
    mp_op_report *ops;            /* by operator index */

    uint64_t unused_bytes;        /* all blocks never used by a step, summed */
    uint64_t n_unused;
    size_t n_unused_listed;
    mp_unused_block *unused;      /* largest first */

    /* Added: process samples (MP_EV_RSS events). */
    uint64_t n_rss;               /* samples in the trace */
    uint64_t rss_max;             /* largest resident set size sampled (0 = none) */
    uint64_t rss_hwm;             /* largest high-water mark sampled (0 = none) */
    int64_t reference_phase;      /* phase instance index of the reference run, -1 = none */
} mp_profile;

/* Compute the profile of the events of src (passes rewind it). On error *out is left empty
 * (safe to free): MP_ERR_FORMAT / MP_ERR_IO from a file source, MP_ERR_NOMEM. */
mp_status mp_profile_compute(mp_source *src, const mp_profile_options *opt, mp_profile *out,
                             mp_error *err);
void mp_profile_free(mp_profile *p);

/* ---- two profiles compared ---------------------------------------------------------------- */

typedef struct mp_diff_tensor {
    const char *name;             /* tensors are matched by name (index when unnamed) */
    int32_t tensor_a, tensor_b;   /* -1 = absent on that side */
    uint64_t bytes_a, bytes_b;
    uint8_t manager_a, manager_b;
} mp_diff_tensor;

typedef struct mp_profile_diff {
    uint64_t peak_a, peak_b;                         /* heap peaks */
    uint64_t live_a[MP_KIND_COUNT], live_b[MP_KIND_COUNT];       /* per kind at the peak */
    uint64_t kind_peak_a[MP_KIND_COUNT], kind_peak_b[MP_KIND_COUNT]; /* each kind's peak */
    uint64_t arena_a, arena_b;                       /* reference arenas' bytes (0 = none) */
    size_t n_tensors;
    mp_diff_tensor *tensors;      /* those whose bytes or manager differ, largest change
                                     first (growth before shrinkage at equal size) */
} mp_profile_diff;

mp_status mp_profile_diff_compute(const mp_profile *a, const mp_profile *b,
                                  mp_profile_diff *out, mp_error *err);
void mp_profile_diff_free(mp_profile_diff *d);

#endif
