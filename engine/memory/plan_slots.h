/* Placed slots for the offset planners (greedy, firstfit, breadth; private to
 * engine/memory), and the gap scans the search shares.
 *
 * A planner that places buffers one at a time asks, for a new buffer, for an offset among
 * the placed buffers whose steps meet its own: the lowest one where it fits (first fit) or
 * the start of the smallest gap that can hold it, the lowest such gap on ties (best fit);
 * either way, when no gap between them will do, just above the highest of them.
 *
 * The placed buffers are found without looking at the others: the buffers are sorted once
 * by first step, and a tree over that order keeps, per subtree, the latest last step of
 * its placed buffers. The placed buffers meeting steps [a, b] are those among the ones
 * whose first step is at most b with a last step of at least a: a descent that skips every
 * subtree whose latest last step is before a finds the k of them in O((k + 1) log n). A
 * second tree of the same kind holds the buffers still waiting (breadth asks which of them
 * are alive at a step). So a whole plan costs O(n log n + P log n) for P pairs of buffers
 * alive together (at most n times the most buffers alive at one step), not O(n^2).
 *
 * When most pairs of buffers are alive together (P above n^2 / 16, as in small random
 * tests), sorting each buffer's many neighbours costs more than a scan of all placed
 * buffers: the placed ones are then kept in an array sorted by offset instead (an O(n)
 * insert), and a fit scans it, O(n^2) in all but with a small constant. Both ways give the
 * same offsets. */
#ifndef MP_PLAN_SLOTS_H
#define MP_PLAN_SLOTS_H

#include <stdint.h>

#include "trace/status.h"
#include "engine/memory/mem.h"
#include "engine/memory/plan.h"

/* A placed buffer's bytes [off, end). */
typedef struct mp_plan_iv {
    uint64_t off, end;
} mp_plan_iv;

/* Sort k intervals by offset (not stable; no comparator calls). */
void mp_plan_iv_sort(mp_plan_iv *iv, int32_t k);
/* Over k intervals sorted by offset: the lowest offset where `size` bytes overlap none. */
uint64_t mp_plan_iv_first_fit(const mp_plan_iv *iv, int32_t k, uint64_t size);
/* Over k intervals sorted by offset: the start of the smallest gap that holds `size` bytes
 * (the lowest on ties), or else the end of the highest of them. */
uint64_t mp_plan_iv_best_fit(const mp_plan_iv *iv, int32_t k, uint64_t size);

/* A placed buffer over steps [first, last] (the dense way). */
typedef struct mp_plan_slot {
    uint64_t off, end;
    int32_t first, last;
} mp_plan_slot;

/* The buffers of a plan, indexed by first step, with the placed and waiting ones. Every
 * buffer of nonzero size takes part (one with last < first meets nothing, as before). */
typedef struct mp_plan_slots {
    const mp_plan_buf *bufs;
    int32_t n;          /* buffers */
    int32_t m;          /* of nonzero size */
    int32_t leaves;     /* a power of two >= m */
    int32_t *order;     /* m: position -> buffer, by (first step, index) */
    int32_t *firsts;    /* m: first step by position */
    int32_t *at;        /* n: buffer -> position (-1: size 0) */
    int64_t *placed;    /* 2 leaves: the tree of placed buffers' last steps */
    int64_t *waiting;   /* 2 leaves: the same for buffers not placed yet */
    uint64_t *off, *end; /* n: a placed buffer's bytes */
    int dense;          /* most pairs alive together: scan `slot` instead of the tree */
    mp_plan_slot *slot; /* m (dense only): the placed buffers, sorted by offset */
    int32_t nslot;
    mp_plan_iv *iv;     /* m: scratch for one fit */
    int32_t *hits;      /* m: scratch for one query */
    mp_mem *mem;
} mp_plan_slots;

/* Index the n buffers, none placed, all waiting; working memory from mem (kind engine; mem
 * may be NULL). MP_ERR_NOMEM is the only failure, and leaves nothing to free. */
mp_status mp_plan_slots_init(mp_plan_slots *s, const mp_plan_buf *bufs, int32_t n,
                             mp_mem *mem);
/* Free what init took (also after a failed init). */
void mp_plan_slots_free(mp_plan_slots *s);
/* The first fit (best_fit 0) or best fit (1) of `size` bytes over steps [first, last]
 * among the placed buffers alive then. */
uint64_t mp_plan_slots_fit(mp_plan_slots *s, uint64_t size, int32_t first, int32_t last,
                           int best_fit);
/* Place buffer b (of nonzero size) at [off, off + size): no longer waiting. */
void mp_plan_slots_place(mp_plan_slots *s, int32_t b, uint64_t off, uint64_t size);
/* The waiting buffers alive at `step` into s->hits (buffer indices, by first step then
 * index); returns how many. */
int32_t mp_plan_slots_waiting_at(mp_plan_slots *s, int32_t step);


/* A buffer waiting to be placed, with its sort keys. */
typedef struct mp_plan_item {
    uint64_t size;
    int32_t first;
    int32_t idx;
    uint64_t rank;      /* a planner's own key (conflicts: how many buffers it meets) */
} mp_plan_item;

/* qsort order of items: largest first (ties: earlier first step, then lower index). */
int mp_plan_slots_by_size(const void *a, const void *b);

/* A whole plan, one buffer at a time: the buffers of nonzero size sorted by cmp (over
 * mp_plan_item, whose rank is rank[buffer], or 0 when rank is NULL), each at the first fit
 * or the best fit (best_fit) of its aligned size, and *total the highest end. Buffers of
 * size 0 take offset 0. As mp_planner.plan. */
mp_status mp_plan_slots_run(const mp_plan_buf *bufs, int32_t n, uint64_t align,
                            uint64_t *offsets, uint64_t *total, mp_mem *mem,
                            int (*cmp)(const void *, const void *), const uint64_t *rank,
                            int best_fit);

#endif
