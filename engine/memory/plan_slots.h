/* Placed slots for the offset planners (greedy, firstfit, breadth; private to
 * engine/memory).
 *
 * A planner that places buffers one at a time keeps the ones already placed as slots
 * sorted by offset, each [off, end) over steps [first, last]. For a new buffer it asks for
 * an offset among the slots whose steps meet its own: the lowest one where it fits
 * (first fit) or the start of the smallest gap that can hold it, the lowest such gap on
 * ties (best fit); either way, when no gap between them will do, just above the highest
 * of them. Then it inserts the new slot, keeping the order. */
#ifndef MP_PLAN_SLOTS_H
#define MP_PLAN_SLOTS_H

#include <stdint.h>

#include "../status.h"
#include "mem.h"
#include "plan.h"

/* A placed buffer: [off, end) over steps [first, last]. */
typedef struct mp_plan_slot {
    uint64_t off, end;
    int32_t first, last;
} mp_plan_slot;

typedef struct mp_plan_slots {
    mp_plan_slot *slot; /* n of them, sorted by off (equal offsets in order of insertion) */
    int32_t *hits;      /* scratch for best fit: the slots alive with the new buffer */
    int32_t n;
    mp_mem *mem;
} mp_plan_slots;

/* Room for cap slots, none placed; working memory from mem (kind engine; mem may be NULL).
 * MP_ERR_NOMEM is the only failure, and leaves nothing to free. */
mp_status mp_plan_slots_init(mp_plan_slots *s, int32_t cap, mp_mem *mem);
/* Free what init took (also after a failed init). */
void mp_plan_slots_free(mp_plan_slots *s);
/* The lowest offset where `size` bytes over [first, last] overlap no slot alive with them. */
uint64_t mp_plan_slots_first_fit(const mp_plan_slots *s, uint64_t size, int32_t first,
                                 int32_t last);
/* The start of the smallest gap between the slots alive over [first, last] that holds
 * `size` bytes (the lowest on ties), or else the end of the highest of them. */
uint64_t mp_plan_slots_best_fit(const mp_plan_slots *s, uint64_t size, int32_t first,
                                int32_t last);
/* Place [off, off + size) over [first, last], after every slot at or below off. At most cap
 * slots in all. */
void mp_plan_slots_insert(mp_plan_slots *s, uint64_t off, uint64_t size, int32_t first,
                          int32_t last);


/* A buffer waiting to be placed, with its sort keys. */
typedef struct mp_plan_item {
    uint64_t size;
    int32_t first;
    int32_t idx;
} mp_plan_item;

/* qsort order of items: largest first (ties: earlier first step, then lower index). */
int mp_plan_slots_by_size(const void *a, const void *b);

/* A whole plan, one buffer at a time: the buffers of nonzero size sorted by cmp (over
 * mp_plan_item), each at the first fit or the best fit (best_fit) of its aligned size, and
 * *total the highest end. Buffers of size 0 take offset 0. As mp_planner.plan. */
mp_status mp_plan_slots_run(const mp_plan_buf *bufs, int32_t n, uint64_t align,
                            uint64_t *offsets, uint64_t *total, mp_mem *mem,
                            int (*cmp)(const void *, const void *), int best_fit);

#endif
