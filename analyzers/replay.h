/* Replay: walk a trace's events in order and keep the memory state they describe.
 *
 * The core every memory analysis builds on. After each mp_replay_step() the replay knows the
 * live blocks (an open-addressing hash table keyed by block id, O(1) per event), the live
 * bytes per kind and in total, the live planned arenas with their slots, and where the trace
 * is: phase, run number, innermost operator. The step also describes what the event changed
 * (mp_replay_change: the block allocated, freed or resized, the slot planned or replaced, the
 * slots that died with a freed arena, the phase that ended), so an analysis can keep its own
 * state next to the replay's without re-deriving it.
 *
 * The replay is tolerant of damaged traces (for example one cut short or recorded with
 * recording switched off for a while): an event that contradicts the state (a free of an
 * unknown block, an allocation of a live id, a plan into no arena, a tensor out of range,
 * an unknown event type) is ignored or repaired as documented at mp_replay_step, and counted
 * as an anomaly, whose first description is kept for the report. */
#ifndef MP_REPLAY_H
#define MP_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/status.h"
#include "trace/trace.h"

/* A live heap block (or mapped const region). */
typedef struct mp_replay_block {
    uint64_t id;
    uint64_t bytes;   /* current size */
    uint64_t seq;     /* index of the event that allocated it (a realloc keeps it) */
    int32_t tensor;   /* owner tensor, -1 = none */
    int32_t op;       /* owner operator, -1 = none */
    int32_t arena;    /* index in the live arena table (mp_replay_arena_at), -1 = not an arena */
    uint8_t kind;     /* MP_KIND_* */
} mp_replay_block;

/* A planned slot inside an arena: a tensor's (kind STATIC), or an operator's scratch
 * (tensor -1, kind SCRATCH, op_first == op_last == the operator). */
typedef struct mp_replay_slot {
    int32_t tensor;
    int32_t op_first, op_last; /* operator steps during which the tensor lives */
    uint64_t offset, bytes;
    uint64_t seq;              /* index of the PLAN event */
    uint8_t kind;              /* MP_KIND_STATIC (tensor), MP_KIND_SCRATCH, or a training
                                  tensor's category (MP_KIND_TRAIN_*) */
} mp_replay_slot;

/* A live planned arena: an owner-less STATIC block, and the slots planned in it (at most one
 * per tensor or per operator's scratch: a later PLAN for the same tensor, or the same
 * operator's scratch, replaces the earlier slot in place). */
typedef struct mp_replay_arena {
    uint64_t id;               /* the arena's block id */
    uint64_t bytes;            /* the arena block's size */
    size_t n_slots;
    mp_replay_slot *slots;
} mp_replay_arena;

/* A phase instance (reported when it ends). */
typedef struct mp_replay_phase {
    int32_t kind;              /* mp_phase_kind */
    uint32_t index;            /* 0-based order of its PHASE_BEGIN */
    uint64_t run;              /* run number for MP_PHASE_RUN, else 0 */
    uint64_t begin_ns, end_ns;
} mp_replay_phase;

/* Where the replay stands (after the last step). */
typedef struct mp_replay_pos {
    size_t event;              /* index of the last event stepped (SIZE_MAX before any) */
    uint64_t t_ns;             /* its time */
    int32_t phase_kind;        /* mp_phase_kind of the open phase, -1 = none open */
    uint32_t phase;            /* index of the open phase instance, UINT32_MAX = none */
    uint64_t run;              /* run number when inside a run phase, else 0 */
    int32_t op;                /* innermost open operator, -1 = none */
} mp_replay_pos;

typedef enum mp_replay_what {
    MP_REPLAY_NOTHING = 0,     /* no effect (an ignored event) */
    MP_REPLAY_ALLOC,
    MP_REPLAY_FREE,
    MP_REPLAY_REALLOC,
    MP_REPLAY_PLAN,
    MP_REPLAY_COPY,
    MP_REPLAY_PHASE_BEGIN,
    MP_REPLAY_PHASE_END,
    MP_REPLAY_OP_BEGIN,
    MP_REPLAY_OP_END,
    MP_REPLAY_RSS              /* a process sample (no effect on the state) */
} mp_replay_what;

/* What one step changed. Pointers stay valid until the next step. */
typedef struct mp_replay_change {
    mp_replay_what what;
    bool anomaly;                   /* the event contradicted the state (see mp_replay_step) */
    mp_replay_block block;          /* ALLOC, REALLOC: the block now; FREE: the block freed */
    uint64_t old_bytes;             /* REALLOC: its size before */
    uint64_t arena_id;              /* PLAN: the arena */
    mp_replay_slot slot;            /* PLAN: the new slot */
    bool replaced;                  /* PLAN: it replaced an earlier slot of the tensor */
    mp_replay_slot old_slot;        /* ... which was this */
    const mp_replay_slot *dead_slots; /* FREE of an arena: its slots, now dead */
    size_t n_dead_slots;
    bool phase_ended;               /* a phase ended (PHASE_END, or a PHASE_BEGIN while */
    mp_replay_phase ended;          /* one was open, or mp_replay_finish) */
} mp_replay_change;

typedef struct mp_replay mp_replay;

/* A replay of an empty state. n_tensors bounds the tensor indices PLAN events may name
 * (meta.n_tensors; 0 or less = unknown, then any index >= 0 is accepted). NULL when out of
 * memory. */
mp_replay *mp_replay_create(int32_t n_tensors);
void mp_replay_destroy(mp_replay *r);

/* Apply one event (the events must be given in trace order); describe the change in *chg
 * (may be NULL). Returns false only when out of memory (the event is then not applied).
 * Anomalies (counted, the event otherwise handled as said):
 *   ALLOC of a live id: ignored.  FREE or REALLOC of an unknown id: a FREE is ignored, a
 *   REALLOC counts as an ALLOC of its new size.  PLAN into an id that is not live, or of a
 *   tensor out of range: ignored.  A PHASE_BEGIN while a phase is open: closes it first.
 *   An OP_END with no matching OP_BEGIN: ignored.  An unknown event type: ignored.
 * A FREE repeating another size than the table's, or a PLAN into a live block that is not
 * an owner-less STATIC block, is accepted as is (the table's size counts; the block becomes
 * an arena). Operators still open at a PHASE_END are closed. */
bool mp_replay_step(mp_replay *r, const mp_event *ev, mp_replay_change *chg);
/* Byte counts are checked (analyzers/checked.h): a step also fails, without being applied,
 * when it would make the live bytes of a kind or of the heap, a plan's end (offset + bytes)
 * or the bytes of an arena's slots exceed 2^63-1: such a trace is malformed.
 * After a failed step: MP_ERR_FORMAT "SOURCE: event N: what" for that, else MP_ERR_NOMEM
 * "WHO: out of memory at event N" (N: the index of the event not applied). */
mp_status mp_replay_fail(const mp_replay *r, const char *source, const char *who,
                         mp_error *err);
/* At the end of the trace: close a phase left open (at the last event's time), reporting
 * it in *chg (what = MP_REPLAY_PHASE_END) and returning true; false when none was open. */
bool mp_replay_finish(mp_replay *r, mp_replay_change *chg);

/* ---- state ------------------------------------------------------------------------------ */
const mp_replay_pos *mp_replay_where(const mp_replay *r);
/* Live bytes of every kind but MP_KIND_CONST. */
uint64_t mp_replay_heap(const mp_replay *r);
/* Live bytes of one kind (0 for a kind out of range). A planned arena is a STATIC block;
 * while an operator runs, the slots of training tensors (memprof train's categories, kinds
 * MP_KIND_TRAIN_*) alive at that operator count as their category instead of STATIC, so
 * that every report shows the categories of a planned training step; outside operators the
 * arena counts whole as STATIC. The heap is the same either way. */
uint64_t mp_replay_live(const mp_replay *r, int kind);
/* Begin time of the open phase (meaningful when where()->phase_kind >= 0). */
uint64_t mp_replay_phase_begin_ns(const mp_replay *r);

size_t mp_replay_n_blocks(const mp_replay *r);
/* The live block with this id, or NULL. Valid until the next step. */
const mp_replay_block *mp_replay_find(const mp_replay *r, uint64_t id);
/* Iterate the live blocks in no particular order: start with *cursor = 0; NULL at the end. */
const mp_replay_block *mp_replay_next_block(const mp_replay *r, size_t *cursor);

size_t mp_replay_n_arenas(const mp_replay *r);
/* Live arena i (0 <= i < n_arenas), in no particular order. Valid until the next step. */
const mp_replay_arena *mp_replay_arena_at(const mp_replay *r, size_t i);

uint64_t mp_replay_n_anomalies(const mp_replay *r);
/* The first anomaly's description ("event 12: free of unknown block 7"), "" if none. */
const char *mp_replay_first_anomaly(const mp_replay *r);

#endif
