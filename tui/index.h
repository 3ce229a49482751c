/* The index behind `memprof tui`: an index over a trace's events that answers what the
 * terminal timeline asks for, quickly, at any cursor position. Pure (no terminal, no
 * ncurses), so that every figure is unit-tested (tests/unit/test_tui_index.c).
 *
 * Built in one pass over an event source (analyzers/source.h), replaying the events with
 * analyzers/replay.h so that every figure agrees with `memprof run` and `memprof report`:
 *  - the events themselves, in a compact form (40 bytes each), to replay any stretch again;
 *  - per-bucket maxima of the heap (the live bytes of every kind but const) and of each kind,
 *    buckets of B consecutive events, B doubling so that there are never more than
 *    max_buckets of them (the chart of a zoomed-out window reads these);
 *  - checkpoints of the replay's state (live blocks, planned arenas and their slots, open
 *    phase and operators) every K events, K doubling when they would hold more than a
 *    budget of blocks: the state after any event is one checkpoint restored plus at most K
 *    events stepped, so "what is alive at the cursor" never replays the whole trace;
 *  - the OP_BEGIN events (moving by operator), the heap peak and each kind's own peak.
 *
 * Positions are event indices (0..n_events-1); "at event e" means the state after e. */
#ifndef MP_TUI_INDEX_H
#define MP_TUI_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyzers/source.h"
#include "analyzers/summary.h"
#include "trace/status.h"
#include "trace/trace.h"

typedef struct mp_tui_index mp_tui_index;

typedef struct mp_tui_options {
    size_t checkpoint_every;   /* K to start with (0 = 4096) */
    size_t max_buckets;        /* most chart buckets (0 = 65536; at least 2) */
    size_t checkpoint_budget;  /* most blocks and slots held by all checkpoints together
                                  before K doubles (0 = 1M) */
    size_t exact_events;       /* windows of at most this many events are charted exactly
                                  (0 = 8192) */
} mp_tui_options;

/* Build the index over every event of src (one pass; rewinds it first). On error *out is
 * NULL: MP_ERR_IO / MP_ERR_FORMAT from a file source, MP_ERR_NOMEM. Names point into the
 * source's metadata: the index is valid while src is open. */
mp_status mp_tui_index_build(mp_source *src, const mp_tui_options *opt, mp_tui_index **out,
                             mp_error *err);
void mp_tui_index_free(mp_tui_index *m);

const mp_trace_meta *mp_tui_meta(const mp_tui_index *m);
size_t mp_tui_n_events(const mp_tui_index *m);
/* The heap peak and the event where it is first reached (SIZE_MAX when the heap is never
 * above 0); each kind's own peak. */
uint64_t mp_tui_peak_heap(const mp_tui_index *m);
size_t mp_tui_peak_event(const mp_tui_index *m);
uint64_t mp_tui_kind_peak(const mp_tui_index *m, int kind);
/* Current bucket size B and checkpoint interval K (for tests and the help line). */
size_t mp_tui_bucket_size(const mp_tui_index *m);
size_t mp_tui_checkpoint_every(const mp_tui_index *m);
/* Name of tensor t / operator o ("?" when unknown or out of range). */
const char *mp_tui_tensor_name(const mp_tui_index *m, int32_t t);
const char *mp_tui_op_name(const mp_tui_index *m, int32_t o);

/* ---- the state at an event -------------------------------------------------------------- */

/* What is alive is listed as in the summary's "largest alive at peak" (summary.h): tensors'
 * own blocks, their slots in live arenas when inside an operator (else whole arenas), the
 * bytes of an arena no alive slot covers, non-tensor blocks summed per operator and kind,
 * and owner-less blocks summed per kind. */
typedef struct mp_tui_at {
    size_t event;
    uint64_t t_ns;
    uint8_t type;                 /* the event's mp_ev_type */
    int32_t phase_kind;           /* -1 = outside any phase */
    uint64_t run;                 /* 0 = not in a run */
    int32_t op;                   /* innermost running operator, -1 = none */
    uint64_t heap;
    uint64_t live[MP_KIND_COUNT];
    size_t n_alive;
    const mp_summary_alive *alive;/* largest first; valid until the next mp_tui_state_at */
} mp_tui_at;

/* The state after event e (e < n_events). kind_filter: -1 lists every heap kind (not
 * const), else only items of that kind. MP_ERR_ARG when e is out of range, MP_ERR_NOMEM. */
mp_status mp_tui_state_at(mp_tui_index *m, size_t e, int kind_filter, mp_tui_at *out,
                          mp_error *err);

/* ---- moving by operator ----------------------------------------------------------------- */

/* The first OP_BEGIN event after e / the last one before e; SIZE_MAX when none. */
size_t mp_tui_next_op(const mp_tui_index *m, size_t e);
size_t mp_tui_prev_op(const mp_tui_index *m, size_t e);

/* ---- searching a tensor ----------------------------------------------------------------- */

/* The tensor a query names: among tensors after `after` (wrapping around; -1 starts at 0),
 * the first whose name equals query, else the first whose name contains it ignoring case;
 * -1 when none does (or query is empty). */
int32_t mp_tui_find_tensor(const mp_tui_index *m, const char *query, int32_t after);

/* Where a tensor gets and loses memory: allocations are ALLOC events of blocks it owns and
 * PLAN events of its slots; frees are FREE events of its blocks, and the FREE of an arena
 * holding a slot of it (the slot dies with the arena). Event indices, ascending. */
typedef struct mp_tui_tensor_events {
    size_t n_alloc, n_free;
    size_t *alloc, *free;
} mp_tui_tensor_events;
mp_status mp_tui_tensor_find_events(const mp_tui_index *m, int32_t tensor,
                                    mp_tui_tensor_events *out, mp_error *err);
void mp_tui_tensor_events_free(mp_tui_tensor_events *te);
/* The first of v[0..n) after e, wrapping to v[0]; SIZE_MAX when n is 0. */
size_t mp_tui_next_after(const size_t *v, size_t n, size_t e);

/* ---- the window shown, and its columns -------------------------------------------------- */

/* Events first..first+len-1 shown across cols columns; column c covers
 * first + floor(c*len/cols) .. first + floor((c+1)*len/cols) - 1, so that every column covers
 * at least one event once len >= cols (len is never made smaller than min(n, cols)). */
typedef struct mp_tui_window {
    size_t first, len;
} mp_tui_window;

/* The whole trace. */
mp_tui_window mp_tui_window_all(size_t n_events);
/* Zoom in (dir > 0: len halved) or out (dir < 0: doubled, or the whole trace when that is
 * within an eighth of it), keeping the cursor's event at the
 * same place on screen as far as the trace's ends allow; len stays in [min(n, cols), n]. */
void mp_tui_window_zoom(mp_tui_window *w, size_t n_events, int cols, size_t cursor, int dir);
/* Shift by `cols_delta` columns' worth of events (negative: left), kept inside the trace. */
void mp_tui_window_pan(mp_tui_window *w, size_t n_events, int cols, long cols_delta);
/* Scroll the least so that event e is shown. */
void mp_tui_window_follow(mp_tui_window *w, size_t n_events, size_t e);
/* Clamp a window after the number of columns changed (a resize). */
void mp_tui_window_fit(mp_tui_window *w, size_t n_events, int cols);
size_t mp_tui_col_first(const mp_tui_window *w, int cols, int c);
size_t mp_tui_col_last(const mp_tui_window *w, int cols, int c);
/* Column showing event e (-1 when e is outside the window). */
int mp_tui_col_of(const mp_tui_window *w, int cols, size_t e);

/* One chart column: the highest heap among its events (and each kind's bytes then, so that
 * the stack adds up to it), and each kind's own highest. */
typedef struct mp_tui_column {
    uint64_t heap;
    uint64_t live[MP_KIND_COUNT];
    uint64_t kind_max[MP_KIND_COUNT];
    size_t at;                    /* an event where heap is reached */
} mp_tui_column;

/* Fill cols columns for window w. Exact (every event of the window replayed) when the
 * window has at most exact_events events or fewer than 2*B per column; otherwise from the buckets, each bucket counted in the column holding its
 * first event (a column's maximum may then come from up to B-1 events beyond its right edge;
 * the peak is shown in exactly one column). MP_ERR_NOMEM. */
mp_status mp_tui_columns(mp_tui_index *m, const mp_tui_window *w, int cols, mp_tui_column *out,
                         mp_error *err);

#endif
