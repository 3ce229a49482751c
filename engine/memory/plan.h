/* Memory planning: the small planner interface (after TensorFlow Lite Micro's), the
 * live-set lower bound, and the validity check every plan passes.
 *
 * A planner receives buffers, each with a size and the first and last operator step that
 * uses it (inclusive), and returns an offset for each and the arena's total size. Two
 * buffers whose step ranges intersect may not overlap in the arena; every offset is a
 * multiple of the alignment. */
#ifndef MP_PLAN_H
#define MP_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/status.h"
#include "engine/memory/mem.h"

typedef struct mp_plan_buf {
    uint64_t size;   /* bytes (0 allowed: takes no space) */
    int32_t first;   /* first step using it */
    int32_t last;    /* last step using it (>= first) */
} mp_plan_buf;

typedef struct mp_planner {
    const char *name;  /* "greedy", ... (the --planner flag) */
    const char *about; /* one line for --help */
    const char *cap;   /* NULL, or how it caps its work (a phrase for memprof plan) */
    /* Fill offsets[n] and *total. Working memory comes from mem (kind engine; mem may be
     * NULL). MP_ERR_NOMEM is the only failure. */
    mp_status (*plan)(const mp_plan_buf *bufs, int32_t n, uint64_t align, uint64_t *offsets,
                      uint64_t *total, mp_mem *mem);
} mp_planner;

/* The planner used when none is named. */
const mp_planner *mp_planner_default(void);
/* A planner by name, or NULL. */
const mp_planner *mp_planner_find(const char *name);
/* All planners, NULL-terminated. */
const mp_planner *const *mp_planner_list(void);

/* Size rounded up to the alignment (align a power of two). */
uint64_t mp_plan_align_up(uint64_t size, uint64_t align);
/* The live-set lower bound: the largest sum of aligned sizes of buffers alive at one step.
 * If step_out is not NULL it receives a step where that sum is reached (-1 when n == 0). */
uint64_t mp_plan_lower_bound(const mp_plan_buf *bufs, int32_t n, uint64_t align,
                             int32_t *step_out);
/* Sum of all aligned sizes: the arena of a planner that never reuses bytes. */
uint64_t mp_plan_naive(const mp_plan_buf *bufs, int32_t n, uint64_t align);
/* True when the plan is valid: offsets aligned, every buffer inside total, and no two
 * buffers alive at a common step overlap. Otherwise writes the first violation to why. */
bool mp_plan_check(const mp_plan_buf *bufs, int32_t n, uint64_t align, const uint64_t *offsets,
                   uint64_t total, char *why, size_t why_size);

#endif
