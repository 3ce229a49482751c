/* What every memory planner shares (see plan.h): the registry of planners, alignment,
 * the live-set lower bound, the naive total, and the validity check of a plan.
 *
 * A buffer with last < first is malformed: the lower bound counts it as never alive and
 * mp_plan_check rejects it. Working memory comes from mp_mem_alloc with no accountant;
 * should it fail, the lower bound and the check fall back to slower loops that need none. */
#include "engine/memory/plan.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/memory/planners.h"

/* ---- registry --------------------------------------------------------------------------- */

/* Every planner, in the order --help lists them. Add new ones here (and in planners.h). */
static const mp_planner *const planners[] = {
    &mp_planner_best,
    &mp_planner_greedy,
    &mp_planner_firstfit,
    &mp_planner_breadth,
    &mp_planner_conflicts,
    &mp_planner_search,
    &mp_planner_bump,
    NULL,
};

const mp_planner *const *mp_planner_list(void)
{
    return planners;
}

const mp_planner *mp_planner_find(const char *name)
{
    if (!name)
        return NULL;
    for (const mp_planner *const *p = planners; *p; p++) {
        if (strcmp((*p)->name, name) == 0)
            return *p;
    }
    return NULL;
}

const mp_planner *mp_planner_default(void)
{
    return mp_planner_find(MP_PLANNER_DEFAULT);
}

/* ---- sizes ------------------------------------------------------------------------------ */

/* Works for any align > 0 (0 and 1 leave the size as it is). A size so large that rounding
 * it up would wrap saturates to UINT64_MAX, which no plan can hold. */
uint64_t mp_plan_align_up(uint64_t size, uint64_t align)
{
    if (align <= 1)
        return size;
    uint64_t rem = size % align;
    if (rem == 0)
        return size;
    if (size > UINT64_MAX - (align - rem))
        return UINT64_MAX;
    return size + (align - rem);
}

uint64_t mp_plan_naive(const mp_plan_buf *bufs, int32_t n, uint64_t align)
{
    uint64_t sum = 0;
    for (int32_t i = 0; i < n; i++)
        sum += mp_plan_align_up(bufs[i].size, align);
    return sum;
}

static void *work_alloc(size_t bytes)
{
    return mp_mem_alloc(NULL, bytes, 0, MP_MEM_ENGINE, MP_OWNER_NONE);
}

/* ---- lower bound ------------------------------------------------------------------------ */

/* A buffer's size enters the live sum at its first step and leaves after its last. */
typedef struct lb_event {
    int64_t step;
    uint64_t size;
    int starts; /* 1: enters at step; 0: left at step (its last step was step - 1) */
} lb_event;

static int lb_event_cmp(const void *a, const void *b)
{
    const lb_event *x = a, *y = b;
    if (x->step != y->step)
        return x->step < y->step ? -1 : 1;
    return 0;
}

/* The maximum is always reached at some buffer's first step, so summing the buffers alive
 * at each first step finds it: O(n^2), used only when the event array cannot be had. */
static uint64_t lower_bound_slow(const mp_plan_buf *bufs, int32_t n, uint64_t align,
                                 int32_t *step_out)
{
    uint64_t best = 0;
    int32_t best_step = -1;
    for (int32_t i = 0; i < n; i++) {
        int32_t s = bufs[i].first;
        if (bufs[i].last < s)
            continue;
        uint64_t live = 0;
        for (int32_t j = 0; j < n; j++) {
            if (bufs[j].first <= s && s <= bufs[j].last)
                live += mp_plan_align_up(bufs[j].size, align);
        }
        if (best_step < 0 || live > best || (live == best && s < best_step)) {
            best = live;
            best_step = s;
        }
    }
    *step_out = best_step;
    return best;
}

/* A sweep over the sorted start and end events: O(n log n) whatever the step numbers.
 * The step reported is the earliest one where the maximum is reached. */
uint64_t mp_plan_lower_bound(const mp_plan_buf *bufs, int32_t n, uint64_t align,
                             int32_t *step_out)
{
    uint64_t best = 0;
    int32_t best_step = -1;
    lb_event *ev = n > 0 ? work_alloc((size_t)n * 2 * sizeof(*ev)) : NULL;

    if (n > 0 && !ev) {
        best = lower_bound_slow(bufs, n, align, &best_step);
    } else if (n > 0) {
        int32_t m = 0;
        for (int32_t i = 0; i < n; i++) {
            if (bufs[i].last < bufs[i].first)
                continue;
            uint64_t size = mp_plan_align_up(bufs[i].size, align);
            ev[m++] = (lb_event){bufs[i].first, size, 1};
            ev[m++] = (lb_event){(int64_t)bufs[i].last + 1, size, 0};
        }
        qsort(ev, (size_t)m, sizeof(*ev), lb_event_cmp);

        uint64_t live = 0;
        int32_t i = 0;
        while (i < m) {
            int64_t step = ev[i].step;
            int starts = 0;
            for (; i < m && ev[i].step == step; i++) {
                if (ev[i].starts) {
                    live += ev[i].size;
                    starts = 1;
                } else {
                    live -= ev[i].size;
                }
            }
            /* Only a step where something starts can be a new maximum. */
            if (starts && (best_step < 0 || live > best)) {
                best = live;
                best_step = (int32_t)step;
            }
        }
        mp_mem_free(NULL, ev);
    }
    if (step_out)
        *step_out = best_step;
    return best;
}

/* ---- check ------------------------------------------------------------------------------ */

static void say(char *why, size_t why_size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void say(char *why, size_t why_size, const char *fmt, ...)
{
    if (!why || why_size == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, why_size, fmt, ap);
    va_end(ap);
}

static bool lives_meet(const mp_plan_buf *a, const mp_plan_buf *b)
{
    return a->first <= b->last && b->first <= a->last;
}

/* Report buffers a and b (sizes > 0, alive together at step) as overlapping. */
static bool overlap_found(const mp_plan_buf *bufs, const uint64_t *offsets, int32_t a,
                          int32_t b, int32_t step, char *why, size_t why_size)
{
    if (a > b) {
        int32_t t = a;
        a = b;
        b = t;
    }
    say(why, why_size,
        "buffers %d and %d overlap at step %d: [%" PRIu64 ", %" PRIu64 ") and [%" PRIu64
        ", %" PRIu64 ")",
        (int)a, (int)b, (int)step, offsets[a], offsets[a] + bufs[a].size, offsets[b],
        offsets[b] + bufs[b].size);
    return false;
}

/* Every pair: O(n^2), used only when the sweep's arrays cannot be had. */
static bool check_pairs(const mp_plan_buf *bufs, int32_t n, const uint64_t *offsets,
                        char *why, size_t why_size)
{
    for (int32_t i = 0; i < n; i++) {
        if (bufs[i].size == 0)
            continue;
        for (int32_t j = i + 1; j < n; j++) {
            if (bufs[j].size == 0 || !lives_meet(&bufs[i], &bufs[j]))
                continue;
            if (offsets[i] < offsets[j] + bufs[j].size && offsets[j] < offsets[i] + bufs[i].size) {
                int32_t step = bufs[i].first > bufs[j].first ? bufs[i].first : bufs[j].first;
                return overlap_found(bufs, offsets, i, j, step, why, why_size);
            }
        }
    }
    return true;
}

/* A buffer index with the step it is sorted by (ties by index: deterministic). */
typedef struct chk_key {
    int32_t step;
    int32_t idx;
} chk_key;

static int chk_key_cmp(const void *a, const void *b)
{
    const chk_key *x = a, *y = b;
    if (x->step != y->step)
        return x->step < y->step ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Position of (off, idx) in act, the live buffers sorted by (offset, index). */
static int32_t active_pos(const int32_t *act, int32_t na, const uint64_t *offsets,
                          uint64_t off, int32_t idx)
{
    int32_t lo = 0, hi = na;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        int32_t j = act[mid];
        if (offsets[j] < off || (offsets[j] == off && j < idx))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Sweep the steps in order, keeping the buffers alive at the current step sorted by offset.
 * They never overlap (the sweep stops at the first overlap), so a buffer entering overlaps
 * one of them exactly when it overlaps its neighbour below or above: O(n log n) searches
 * plus array moves. Returns -1 when memory is short, else 1 (valid) or 0. */
static int check_sweep(const mp_plan_buf *bufs, int32_t n, const uint64_t *offsets,
                       char *why, size_t why_size)
{
    chk_key *by_first = work_alloc((size_t)n * sizeof(chk_key));
    chk_key *by_last = work_alloc((size_t)n * sizeof(chk_key));
    int32_t *act = work_alloc((size_t)n * sizeof(int32_t));
    int ok = -1;
    if (!by_first || !by_last || !act)
        goto done;

    int32_t m = 0;
    for (int32_t i = 0; i < n; i++) {
        if (bufs[i].size == 0)
            continue; /* takes no bytes: never conflicts */
        by_first[m] = (chk_key){bufs[i].first, i};
        by_last[m] = (chk_key){bufs[i].last, i};
        m++;
    }
    qsort(by_first, (size_t)m, sizeof(chk_key), chk_key_cmp);
    qsort(by_last, (size_t)m, sizeof(chk_key), chk_key_cmp);

    ok = 1;
    int32_t na = 0, gone = 0;
    for (int32_t k = 0; k < m && ok; k++) {
        int32_t b = by_first[k].idx;
        int32_t step = by_first[k].step;
        /* Drop the buffers whose last step is before this one (all were inserted: their
         * first step is earlier still). */
        for (; gone < m && by_last[gone].step < step; gone++) {
            int32_t d = by_last[gone].idx;
            int32_t p = active_pos(act, na, offsets, offsets[d], d);
            memmove(act + p, act + p + 1, sizeof(int32_t) * (size_t)(na - p - 1));
            na--;
        }
        uint64_t lo = offsets[b], hi = lo + bufs[b].size; /* inside total: no wrap */
        int32_t p = active_pos(act, na, offsets, lo, b);
        if (p > 0 && offsets[act[p - 1]] + bufs[act[p - 1]].size > lo)
            ok = overlap_found(bufs, offsets, act[p - 1], b, step, why, why_size);
        else if (p < na && offsets[act[p]] < hi)
            ok = overlap_found(bufs, offsets, act[p], b, step, why, why_size);
        memmove(act + p + 1, act + p, sizeof(int32_t) * (size_t)(na - p));
        act[p] = b;
        na++;
    }
done:
    mp_mem_free(NULL, by_first);
    mp_mem_free(NULL, by_last);
    mp_mem_free(NULL, act);
    return ok;
}

bool mp_plan_check(const mp_plan_buf *bufs, int32_t n, uint64_t align, const uint64_t *offsets,
                   uint64_t total, char *why, size_t why_size)
{
    say(why, why_size, "%s", "");
    /* Each buffer alone first, in index order. */
    for (int32_t i = 0; i < n; i++) {
        const mp_plan_buf *b = &bufs[i];
        uint64_t size = mp_plan_align_up(b->size, align);
        if (b->last < b->first) {
            say(why, why_size, "buffer %d: last step %d before first step %d", (int)i,
                (int)b->last, (int)b->first);
            return false;
        }
        if (align > 1 && offsets[i] % align != 0) {
            say(why, why_size, "buffer %d: offset %" PRIu64 " not a multiple of %" PRIu64,
                (int)i, offsets[i], align);
            return false;
        }
        if (size > total || offsets[i] > total - size) {
            say(why, why_size,
                "buffer %d: offset %" PRIu64 " + size %" PRIu64 " past total %" PRIu64, (int)i,
                offsets[i], size, total);
            return false;
        }
    }
    /* Then the pairs alive together. */
    if (n <= 0)
        return true;
    int ok = check_sweep(bufs, n, offsets, why, why_size);
    if (ok < 0)
        return check_pairs(bufs, n, offsets, why, why_size);
    return ok == 1;
}
