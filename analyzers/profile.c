/* Profile: every analysis `memprof report` lays out, computed from a trace (see profile.h).
 *
 * The summary (two passes) comes first: it gives the number of events (so the by-event
 * timeline can be bucketed), the heap peak and the runs (so the reference run is known
 * before the profile's own pass). Then one more replay keeps, next to the replay's state:
 *  - two timelines, each point holding the highest-heap moment of its events (by event:
 *    buckets of a fixed number of events; by step: buckets of operator steps whose width
 *    doubles, merging neighbours, whenever there would be more than max_points);
 *  - per tensor, the homes held during the reference run and the operators it was live in
 *    (a tensor allocated between two operators waits in a pending list for the next one);
 *  - per operator, steps, time, allocations, live scratch and kernel bytes;
 *  - each planned arena from allocation to free (its slots come with the replay's FREE
 *    change), reduced at its end to lower bound, naive size and free bytes per operator;
 *  - blocks alive during no operator step (compared with the last event at which some
 *    operator was running).
 * Everything kept is sized by the model, max_points, max_arenas or max_unused.
 *
 * The timeline builder is in profile_timeline.c, the layout figures of an arena in
 * profile_arena.c, two profiles compared in profile_diff.c. */
#include "analyzers/profile.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/checked.h"
#include "analyzers/profile_internal.h"
#include "analyzers/replay.h"
#include "trace/grow.h"

/* ---- names -------------------------------------------------------------------------- */

const char *mp_manager_name(int m)
{
    static const char *names[MP_MGR_COUNT] = {"none", "arena", "dynamic", "own", "io", "const"};
    return m >= 0 && m < MP_MGR_COUNT ? names[m] : "?";
}

/* ---- per tensor (reference run) ------------------------------------------------------ */

typedef struct tstate {
    bool has;              /* a home was held in the window */
    uint64_t seq;          /* the newest home's event */
    uint8_t manager;
    uint64_t bytes;
    int64_t offset;
    uint64_t arena_id;
    int32_t slot_first, slot_last;
    int32_t blk_first, blk_last; /* steps during which one of its blocks was live */
    int32_t live_blocks;   /* home blocks live now (in the window) */
    bool pending;          /* in the pending list: live, waiting for the next operator */
} tstate;

/* ---- arenas ------------------------------------------------------------------------- */

typedef struct arena_info {
    uint64_t id;
    uint64_t alloc_event;
    uint64_t runs_at_alloc;
    bool in_run;           /* allocated inside a run */
    bool in_ref;           /* live during the reference run */
} arena_info;

/* ---- phases since an operator last ran ------------------------------------------------ */

/* The phase kind after each phase change since the last event at which an operator was
 * running: enough to tell the phase an unused block was allocated in (its allocation
 * came after that event). At most PH_KEEP changes are kept; older ones are forgotten. */
#define PH_KEEP 256

typedef struct ph_change {
    uint64_t event;
    int32_t kind;
} ph_change;

/* ---- the walk ----------------------------------------------------------------------- */

typedef struct walk {
    const char *src_name;    /* for messages */
    const mp_trace_meta *meta;
    int32_t n_tensors, n_ops;
    const mp_profile_options *opt;
    mp_profile *p;
    mp_replay *r;
    int32_t *producer;
    int32_t *last_reader;    /* the last operator reading each tensor, -1 = none */

    mp_tl_builder by_event, by_step;
    uint64_t steps;          /* OP_BEGIN events so far */
    uint64_t rss, rss_hwm;
    uint64_t run_begins;
    int64_t last_running;    /* last event after which an operator was running, -1 = none */
    ph_change ph[PH_KEEP];   /* phase changes after last_running */
    size_t n_ph;
    int32_t ph_base;         /* phase kind at last_running (-1 before any event) */
    uint64_t ph_lost;        /* changes before this event were forgotten (0 = none) */

    /* operator stack with begin times (mirrors the replay's) */
    int32_t *op_stack;
    uint64_t *op_t0;
    size_t n_stack, cap_stack;
    uint64_t *scratch_live, *kernel_live; /* per operator */

    /* reference window */
    bool by_phase;           /* the window is the phase instance ref_phase */
    uint32_t ref_phase;
    uint64_t ref_run;
    bool window_all;         /* no run: the whole trace is the window */
    bool in_window;
    int32_t last_begun_op;
    tstate *ts;
    int32_t *pending;
    size_t n_pending;

    arena_info *live_arenas;
    size_t n_live_arenas, cap_live_arenas;
    size_t cap_arenas, cap_unused;
} walk;

static bool valid_tensor(const walk *w, int32_t t)
{
    return t >= 0 && t < w->n_tensors;
}

static bool valid_op(const walk *w, int32_t op)
{
    return op >= 0 && op < w->n_ops;
}

static const char *tensor_name(const walk *w, int32_t t)
{
    return valid_tensor(w, t) ? w->meta->tensors[t].name : NULL;
}

static const char *op_name(const walk *w, int32_t op)
{
    return valid_op(w, op) ? w->meta->ops[op].name : NULL;
}

static int32_t imin(int32_t a, int32_t b)
{
    return a < 0 ? b : (b < 0 ? a : (a < b ? a : b));
}

static int32_t imax(int32_t a, int32_t b)
{
    return a > b ? a : b;
}

/* Manager of a tensor's own block by kind, MP_MGR_NONE when the block is not a home. */
static uint8_t block_manager(uint8_t kind)
{
    switch (kind) {
    case MP_KIND_STATIC:
        return MP_MGR_OWN;
    case MP_KIND_DYNAMIC:
        return MP_MGR_DYNAMIC;
    case MP_KIND_IO:
        return MP_MGR_IO;
    case MP_KIND_CONST:
        return MP_MGR_CONST;
    default:
        return MP_MGR_NONE;
    }
}

static bool is_home_block(const walk *w, const mp_replay_block *b)
{
    return valid_tensor(w, b->tensor) && b->arena < 0 && block_manager(b->kind) != MP_MGR_NONE;
}

static void home_block(tstate *s, const mp_replay_block *b)
{
    if (s->has && b->seq == s->seq && s->manager == block_manager(b->kind)) {
        if (b->bytes > s->bytes)
            s->bytes = b->bytes; /* the same block, reallocated */
        return;
    }
    if (s->has && b->seq < s->seq)
        return;
    s->has = true;
    s->seq = b->seq;
    s->manager = block_manager(b->kind);
    s->bytes = b->bytes;
    s->offset = -1;
    s->arena_id = 0;
}

static void home_slot(tstate *s, uint64_t arena_id, const mp_replay_slot *sl)
{
    if (s->has && sl->seq < s->seq)
        return;
    s->has = true;
    s->seq = sl->seq;
    s->manager = MP_MGR_ARENA;
    s->bytes = sl->bytes;
    s->offset = sl->offset > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)sl->offset;
    s->arena_id = arena_id;
    s->slot_first = sl->op_first;
    s->slot_last = sl->op_last;
}

/* A home block of tensor t is live in the window (allocated there, or live at its start). */
static void block_enter(walk *w, int32_t t, const mp_replay_block *b)
{
    tstate *s = &w->ts[t];
    home_block(s, b);
    s->live_blocks++;
    int32_t op = mp_replay_where(w->r)->op;
    if (op >= 0) {
        s->blk_first = imin(s->blk_first, op);
        s->blk_last = imax(s->blk_last, op);
    } else if (!s->pending) {
        s->pending = true;
        w->pending[w->n_pending++] = t;
    }
}

static void block_leave(walk *w, int32_t t)
{
    tstate *s = &w->ts[t];
    int32_t op = mp_replay_where(w->r)->op;
    if (op >= 0)
        s->blk_last = imax(s->blk_last, op);
    else if (!s->pending && w->last_begun_op >= 0)
        s->blk_last = imax(s->blk_last, w->last_begun_op);
    if (s->live_blocks > 0)
        s->live_blocks--;
}

static void window_op_begin(walk *w, int32_t op)
{
    w->last_begun_op = op;
    for (size_t i = 0; i < w->n_pending; i++) {
        tstate *s = &w->ts[w->pending[i]];
        if (s->live_blocks > 0) {
            s->blk_first = imin(s->blk_first, op);
            s->blk_last = imax(s->blk_last, op);
        }
        s->pending = false;
    }
    w->n_pending = 0;
}

static arena_info *arena_find(walk *w, uint64_t id)
{
    for (size_t i = 0; i < w->n_live_arenas; i++)
        if (w->live_arenas[i].id == id)
            return &w->live_arenas[i];
    return NULL;
}

static arena_info *arena_track(walk *w, uint64_t id, uint64_t alloc_event)
{
    arena_info *a = arena_find(w, id);
    if (a)
        return a;
    if (!mp_grow((void **)&w->live_arenas, &w->cap_live_arenas, w->n_live_arenas,
                 sizeof *w->live_arenas, 4))
        return NULL;
    a = &w->live_arenas[w->n_live_arenas++];
    memset(a, 0, sizeof *a);
    a->id = id;
    a->alloc_event = alloc_event;
    a->runs_at_alloc = w->run_begins;
    a->in_run = mp_replay_where(w->r)->phase_kind == MP_PHASE_RUN;
    a->in_ref = w->in_window && !w->window_all;
    return a;
}

static void window_begin(walk *w)
{
    w->in_window = true;
    w->last_begun_op = -1;
    w->n_pending = 0;
    for (int32_t t = 0; t < w->n_tensors; t++) {
        memset(&w->ts[t], 0, sizeof w->ts[t]);
        w->ts[t].offset = -1;
        w->ts[t].slot_first = w->ts[t].slot_last = -1;
        w->ts[t].blk_first = w->ts[t].blk_last = -1;
    }
    size_t cursor = 0;
    const mp_replay_block *b;
    while ((b = mp_replay_next_block(w->r, &cursor)) != NULL)
        if (is_home_block(w, b))
            block_enter(w, b->tensor, b);
    for (size_t i = 0; i < mp_replay_n_arenas(w->r); i++) {
        const mp_replay_arena *ar = mp_replay_arena_at(w->r, i);
        for (size_t k = 0; k < ar->n_slots; k++)
            if (valid_tensor(w, ar->slots[k].tensor) && ar->slots[k].kind != MP_KIND_SCRATCH)
                home_slot(&w->ts[ar->slots[k].tensor], ar->id, &ar->slots[k]);
    }
}

static void window_end(walk *w)
{
    if (!w->in_window)
        return;
    w->in_window = false;
    for (int32_t t = 0; t < w->n_tensors; t++) {
        tstate *s = &w->ts[t];
        if (s->live_blocks > 0 && !s->pending && w->last_begun_op >= 0)
            s->blk_last = imax(s->blk_last, w->last_begun_op);
    }
}

/* ---- arena reports ------------------------------------------------------------------ */

/* Fill a report from an arena's slots. False when out of memory. */
static bool arena_report_make(const walk *w, mp_arena_report *a, const arena_info *info,
                              uint64_t bytes, const mp_replay_slot *slots, size_t n,
                              uint64_t free_event)
{
    memset(a, 0, sizeof *a);
    mp_arena_slot *v = malloc((n + 1) * sizeof *v);
    if (!v)
        return false;
    for (size_t i = 0; i < n; i++) {
        const mp_replay_slot *s = &slots[i];
        v[i] = (mp_arena_slot){.tensor = s->tensor,
                               .name = tensor_name(w, s->tensor),
                               .offset = s->offset,
                               .bytes = s->bytes,
                               .first_op = s->op_first,
                               .last_op = s->op_last,
                               .kind = s->kind};
    }
    bool ok = mp_arena_report_layout(a, bytes, v, n, w->n_ops);
    free(v);
    if (!ok)
        return false;
    a->id = info->id;
    a->alloc_event = info->alloc_event;
    a->free_event = free_event;
    a->runs = w->run_begins - info->runs_at_alloc + (info->in_run ? 1 : 0);
    a->in_reference_run = info->in_ref;
    return true;
}

/* An arena ended (freed, or live at the end of the trace): report it if kept. */
static bool arena_done(walk *w, uint64_t id, uint64_t bytes, const mp_replay_slot *slots,
                       size_t n, uint64_t free_event)
{
    arena_info *info = arena_find(w, id);
    arena_info local = {.id = id, .alloc_event = free_event};
    if (!info)
        info = &local;
    bool ok = true;
    if (n > 0) {
        mp_profile *p = w->p;
        p->n_arenas_total++;
        size_t at = SIZE_MAX;
        if (p->n_arenas < w->opt->max_arenas) {
            if (mp_grow((void **)&p->arenas, &w->cap_arenas, p->n_arenas, sizeof *p->arenas, 4))
                at = p->n_arenas++;
            else
                ok = false;
        } else if (info->in_ref) {
            /* the reference run's arena replaces the last kept one that is not */
            for (size_t i = p->n_arenas; i > 0 && at == SIZE_MAX; i--)
                if (!p->arenas[i - 1].in_reference_run)
                    at = i - 1;
            if (at != SIZE_MAX)
                mp_arena_report_free(&p->arenas[at]);
        }
        if (ok && at != SIZE_MAX && !arena_report_make(w, &p->arenas[at], info, bytes, slots, n,
                                                       free_event)) {
            /* drop the entry: move the last one into its place */
            p->arenas[at] = p->arenas[--p->n_arenas];
            ok = false;
        }
    }
    if (info != &local)
        *info = w->live_arenas[--w->n_live_arenas];
    return ok;
}

/* ---- unused blocks ------------------------------------------------------------------ */

static void phase_change(walk *w, uint64_t i, int32_t kind)
{
    if (w->n_ph == PH_KEEP) {
        memmove(w->ph, w->ph + PH_KEEP / 2, (PH_KEEP / 2) * sizeof *w->ph);
        w->n_ph = PH_KEEP / 2;
        w->ph_lost = w->ph[0].event;
    }
    w->ph[w->n_ph++] = (ph_change){i, kind};
}

/* An operator runs after event i: forget the phase changes before. */
static void op_running(walk *w, uint64_t i, int32_t phase_kind)
{
    w->last_running = (int64_t)i;
    w->n_ph = 0;
    w->ph_lost = 0;
    w->ph_base = phase_kind;
}

/* Phase kind after event seq (> last_running), -1 when forgotten or outside phases. */
static int32_t phase_at(const walk *w, uint64_t seq)
{
    if (w->ph_lost && seq < w->ph_lost)
        return -1;
    int32_t kind = w->ph_base;
    for (size_t k = 0; k < w->n_ph && w->ph[k].event <= seq; k++)
        kind = w->ph[k].kind;
    return kind;
}

static bool judged_kind(uint8_t kind)
{
    return kind == MP_KIND_STATIC || kind == MP_KIND_DYNAMIC || kind == MP_KIND_SCRATCH ||
           kind == MP_KIND_KERNEL || kind == MP_KIND_IO;
}

static void unused_check(walk *w, const mp_replay_block *b)
{
    if (!judged_kind(b->kind) || w->last_running >= (int64_t)b->seq)
        return;
    mp_profile *p = w->p;
    p->n_unused++;
    p->unused_bytes += b->bytes;
    mp_unused_block u = {
        .id = b->id,
        .bytes = b->bytes,
        .kind = b->kind,
        .tensor = valid_tensor(w, b->tensor) ? b->tensor : -1,
        .name = tensor_name(w, b->tensor),
        .phase_kind = phase_at(w, b->seq),
        .alloc_event = b->seq,
    };
    size_t at = p->n_unused_listed;
    if (at == w->cap_unused) {
        /* full: replace the smallest when this one is larger */
        size_t min = 0;
        for (size_t i = 1; i < at; i++)
            if (p->unused[i].bytes < p->unused[min].bytes)
                min = i;
        if (at == 0 || p->unused[min].bytes >= u.bytes)
            return;
        at = min;
    } else {
        p->n_unused_listed++;
    }
    p->unused[at] = u;
}

static int cmp_unused(const void *pa, const void *pb)
{
    const mp_unused_block *a = pa, *b = pb;
    if (a->bytes != b->bytes)
        return a->bytes > b->bytes ? -1 : 1;
    return (a->alloc_event > b->alloc_event) - (a->alloc_event < b->alloc_event);
}

/* ---- the pass ----------------------------------------------------------------------- */

static bool push_op(walk *w, int32_t op, uint64_t t)
{
    if (w->n_stack == w->cap_stack) {
        size_t ncap = w->cap_stack ? w->cap_stack * 2 : 8;
        int32_t *s = realloc(w->op_stack, ncap * sizeof *s);
        if (!s)
            return false;
        w->op_stack = s;
        uint64_t *t0 = realloc(w->op_t0, ncap * sizeof *t0);
        if (!t0)
            return false;
        w->op_t0 = t0;
        w->cap_stack = ncap;
    }
    w->op_stack[w->n_stack] = op;
    w->op_t0[w->n_stack] = t;
    w->n_stack++;
    return true;
}

/* An operator's step ends at time t. False when its steps' times add up beyond MP_SUM_MAX
 * (times that go back make steps overlap). */
static bool pop_op(walk *w, int32_t op, uint64_t t)
{
    size_t k = w->n_stack;
    while (k > 0 && w->op_stack[k - 1] != op)
        k--;
    if (k == 0)
        return true;
    w->n_stack = k - 1;
    if (!valid_op(w, op))
        return true;
    mp_op_report *o = &w->p->ops[op];
    uint64_t ns = t > w->op_t0[k - 1] ? t - w->op_t0[k - 1] : 0;
    if (!mp_sum_add(&o->time_ns, ns))
        return false;
    if (ns < o->min_ns)
        o->min_ns = ns; /* UINT64_MAX until the first timed step */
    if (ns > o->max_ns)
        o->max_ns = ns;
    return true;
}

/* Live bytes of one kind owned by an operator: update and keep the maximum. */
static void op_live(walk *w, const mp_replay_block *b, int64_t delta)
{
    if (!valid_op(w, b->op) || (b->kind != MP_KIND_SCRATCH && b->kind != MP_KIND_KERNEL))
        return;
    bool scratch = b->kind == MP_KIND_SCRATCH;
    uint64_t *live = scratch ? &w->scratch_live[b->op] : &w->kernel_live[b->op];
    if (delta < 0 && (uint64_t)-delta > *live)
        *live = 0;
    else
        *live = (uint64_t)((int64_t)*live + delta);
    uint64_t *max = scratch ? &w->p->ops[b->op].scratch_bytes : &w->p->ops[b->op].kernel_bytes;
    if (*live > *max)
        *max = *live;
}

static void count_alloc(walk *w, const mp_replay_change *c, int32_t running)
{
    const mp_replay_block *b = &c->block;
    if (b->kind == MP_KIND_CONST)
        return;
    int32_t op = valid_op(w, b->op) ? b->op : running;
    uint64_t grow = 0;
    if (c->what == MP_REPLAY_ALLOC)
        grow = b->bytes;
    else if (b->bytes > c->old_bytes)
        grow = b->bytes - c->old_bytes;
    if (c->what == MP_REPLAY_ALLOC)
        op_live(w, b, (int64_t)b->bytes);
    else
        op_live(w, b, (int64_t)b->bytes - (int64_t)c->old_bytes);
    if (!valid_op(w, op))
        return;
    w->p->ops[op].n_alloc++;
    w->p->ops[op].bytes_alloc += grow;
}

/* The window opens at the reference run's PHASE_BEGIN. */
static bool is_ref_begin(const walk *w)
{
    const mp_replay_pos *pos = mp_replay_where(w->r);
    if (w->window_all || pos->phase_kind != MP_PHASE_RUN)
        return false;
    return w->by_phase ? pos->phase == w->ref_phase : pos->run == w->ref_run;
}

static mp_status step_event(walk *w, const mp_event *ev, uint64_t i, mp_error *err)
{
    mp_replay_change c;
    int32_t running = mp_replay_where(w->r)->op; /* before the event */
    if (!mp_replay_step(w->r, ev, &c))
        return mp_replay_fail(w->r, w->src_name, "profile", err);
    const mp_replay_pos *pos = mp_replay_where(w->r);
    if (pos->op >= 0)
        op_running(w, i, pos->phase_kind);

    if (c.phase_ended) {
        w->n_stack = 0;
        if (w->in_window && !w->window_all && c.ended.kind == MP_PHASE_RUN &&
            (w->by_phase ? c.ended.index == w->ref_phase : c.ended.run == w->ref_run))
            window_end(w);
        phase_change(w, i, -1);
    }
    switch (c.what) {
    case MP_REPLAY_ALLOC:
    case MP_REPLAY_REALLOC:
        count_alloc(w, &c, running);
        if (c.what == MP_REPLAY_ALLOC && c.block.arena >= 0 &&
            !arena_track(w, c.block.id, c.block.seq))
            return mp_fail(err, MP_ERR_NOMEM, "profile: out of memory");
        if (w->in_window && is_home_block(w, &c.block)) {
            if (c.what == MP_REPLAY_ALLOC)
                block_enter(w, c.block.tensor, &c.block);
            else
                home_block(&w->ts[c.block.tensor], &c.block);
        }
        break;
    case MP_REPLAY_FREE:
        op_live(w, &c.block, -(int64_t)c.block.bytes);
        if (w->in_window && is_home_block(w, &c.block))
            block_leave(w, c.block.tensor);
        unused_check(w, &c.block);
        if ((c.n_dead_slots > 0 || arena_find(w, c.block.id)) &&
            !arena_done(w, c.block.id, c.block.bytes, c.dead_slots, c.n_dead_slots, i))
            return mp_fail(err, MP_ERR_NOMEM, "profile: out of memory");
        break;
    case MP_REPLAY_PLAN: {
        const mp_replay_block *b = mp_replay_find(w->r, c.arena_id);
        if (!arena_track(w, c.arena_id, b ? b->seq : i))
            return mp_fail(err, MP_ERR_NOMEM, "profile: out of memory");
        if (w->in_window && valid_tensor(w, c.slot.tensor) && c.slot.kind != MP_KIND_SCRATCH)
            home_slot(&w->ts[c.slot.tensor], c.arena_id, &c.slot);
        if (c.slot.kind == MP_KIND_SCRATCH && valid_op(w, c.slot.op_first) &&
            c.slot.bytes > w->p->ops[c.slot.op_first].scratch_bytes)
            w->p->ops[c.slot.op_first].scratch_bytes = c.slot.bytes;
        break;
    }
    case MP_REPLAY_PHASE_BEGIN:
        w->n_stack = 0;
        if (pos->phase_kind == MP_PHASE_RUN)
            w->run_begins++;
        phase_change(w, i, pos->phase_kind);
        if (is_ref_begin(w)) {
            window_begin(w);
            w->p->reference_phase = pos->phase;
            for (size_t k = 0; k < mp_replay_n_arenas(w->r); k++) {
                const mp_replay_arena *ar = mp_replay_arena_at(w->r, k);
                const mp_replay_block *b = mp_replay_find(w->r, ar->id);
                arena_info *a = arena_track(w, ar->id, b ? b->seq : i);
                if (!a)
                    return mp_fail(err, MP_ERR_NOMEM, "profile: out of memory");
                a->in_ref = true;
            }
        }
        break;
    case MP_REPLAY_OP_BEGIN:
        w->steps++;
        if (valid_op(w, ev->op))
            w->p->ops[ev->op].n_exec++;
        if (!push_op(w, ev->op, ev->t_ns))
            return mp_fail(err, MP_ERR_NOMEM, "profile: out of memory");
        if (w->in_window)
            window_op_begin(w, ev->op);
        break;
    case MP_REPLAY_OP_END:
        if (!pop_op(w, ev->op, ev->t_ns))
            return mp_fail(err, MP_ERR_FORMAT, "%s: event %" PRIu64 ": the times of operator "
                           "%" PRId32 " add up to more than 2^63-1", w->src_name, i, ev->op);
        break;
    case MP_REPLAY_RSS:
        w->rss = ev->bytes;
        w->rss_hwm = ev->aux;
        w->p->n_rss++;
        if (ev->bytes > w->p->rss_max)
            w->p->rss_max = ev->bytes;
        if (ev->aux > w->p->rss_hwm)
            w->p->rss_hwm = ev->aux;
        break;
    default:
        break;
    }

    mp_tl_moment m = {
        .event = i,
        .steps = w->steps,
        .t_ns = pos->t_ns,
        .heap = mp_replay_heap(w->r),
        .phase_kind = pos->phase_kind,
        .op = pos->op,
        .run = pos->run,
        .rss = w->rss,
        .rss_hwm = w->rss_hwm,
    };
    for (int k = 0; k < MP_KIND_COUNT; k++)
        m.live[k] = mp_replay_live(w->r, k);
    mp_tl_builder_add(&w->by_event, i, &m);
    mp_tl_builder_add(&w->by_step, w->steps, &m);
    return MP_OK;
}

/* After the last event: close the window and the arenas, judge the blocks still live. */
static mp_status finish(walk *w, mp_error *err)
{
    mp_replay_finish(w->r, NULL);
    window_end(w); /* a window still open ends with the trace */
    size_t cursor = 0;
    const mp_replay_block *b;
    while ((b = mp_replay_next_block(w->r, &cursor)) != NULL)
        unused_check(w, b);
    for (size_t k = 0; k < mp_replay_n_arenas(w->r); k++) {
        const mp_replay_arena *ar = mp_replay_arena_at(w->r, k);
        if (!arena_done(w, ar->id, ar->bytes, ar->slots, ar->n_slots, UINT64_MAX))
            return mp_fail(err, MP_ERR_NOMEM, "profile: out of memory");
    }
    return MP_OK;
}

/* Lifetimes, operator outputs and the reference arena, from the walk's final state.
 * MP_ERR_FORMAT when a sum would pass MP_SUM_MAX. */
static mp_status conclude(walk *w, mp_error *err)
{
    mp_profile *p = w->p;
    for (int32_t t = 0; t < w->n_tensors; t++) {
        mp_lifetime *l = &p->lifetimes[t];
        const tstate *s = &w->ts[t];
        l->tensor = t;
        l->name = tensor_name(w, t);
        l->first_op = l->last_op = -1;
        l->offset = -1;
        l->producer = w->producer[t];
        l->producer_name = op_name(w, l->producer);
        if (s->has) {
            l->manager = s->manager;
            l->bytes = s->bytes;
            if (s->manager == MP_MGR_ARENA) {
                l->offset = s->offset;
                l->arena_id = s->arena_id;
                l->first_op = s->slot_first;
                l->last_op = s->slot_last;
            } else {
                l->first_op = s->blk_first;
                l->last_op = s->blk_last;
            }
        } else if (w->meta->tensors[t].is_const) {
            l->manager = MP_MGR_CONST;
        }
    }
    /* a tensor in place: its root's slot (bytes, offset, arena), from its producer to its last
     * reader (the slot's PLAN event spans the whole group) */
    for (int32_t t = 0; t < w->n_tensors; t++) {
        mp_lifetime *l = &p->lifetimes[t];
        const mp_trace_tensor *mt = &w->meta->tensors[t];
        if (l->manager != MP_MGR_NONE || !mt->in_place || !valid_tensor(w, mt->shares))
            continue;
        const mp_lifetime *root = &p->lifetimes[mt->shares];
        if (root->manager != MP_MGR_ARENA)
            continue;
        l->manager = MP_MGR_ARENA;
        l->bytes = root->bytes;
        l->offset = root->offset;
        l->arena_id = root->arena_id;
        l->in_place = true;
        l->first_op = l->producer;
        l->last_op = w->last_reader[t] > l->first_op ? w->last_reader[t] : l->first_op;
    }
    for (int32_t o = 0; o < w->n_ops; o++) {
        const mp_trace_op *op = &w->meta->ops[o];
        mp_op_report *r = &p->ops[o];
        r->op = o;
        if (r->min_ns == UINT64_MAX)
            r->min_ns = 0;
        r->name = op->name;
        for (int32_t j = 0; op->outputs && j < op->n_outputs; j++)
            if (valid_tensor(w, op->outputs[j]) &&
                !mp_sum_add(&r->output_bytes, p->lifetimes[op->outputs[j]].bytes))
                return mp_fail(err, MP_ERR_FORMAT, "%s: the outputs of operator %" PRId32
                               " add up to more than 2^63-1 bytes", w->src_name, o);
    }
    /* arenas in order of allocation */
    for (size_t i = 1; i < p->n_arenas; i++) {
        mp_arena_report a = p->arenas[i];
        size_t j = i;
        for (; j > 0 && p->arenas[j - 1].alloc_event > a.alloc_event; j--)
            p->arenas[j] = p->arenas[j - 1];
        p->arenas[j] = a;
    }
    p->reference_arena = -1;
    for (size_t i = 0; i < p->n_arenas; i++)
        if (p->arenas[i].in_reference_run)
            p->reference_arena = (int64_t)i; /* the newest one live in the run */
    qsort(p->unused, p->n_unused_listed, sizeof *p->unused, cmp_unused);
    return MP_OK;
}

static void walk_free(walk *w)
{
    mp_replay_destroy(w->r);
    free(w->producer);
    free(w->last_reader);
    free(w->op_stack);
    free(w->op_t0);
    free(w->scratch_live);
    free(w->kernel_live);
    free(w->ts);
    free(w->pending);
    free(w->live_arenas);
    mp_tl_builder_free(&w->by_event);
    mp_tl_builder_free(&w->by_step);
}

static mp_status walk_init(walk *w, mp_source *src, const mp_profile_options *opt,
                           mp_profile *p, mp_error *err)
{
    memset(w, 0, sizeof *w);
    const mp_trace_meta *m = mp_source_meta(src);
    w->src_name = mp_source_name(src);
    w->meta = m;
    w->n_tensors = (m && m->n_tensors > 0 && m->tensors) ? m->n_tensors : 0;
    w->n_ops = (m && m->n_ops > 0 && m->ops) ? m->n_ops : 0;
    w->opt = opt;
    w->p = p;
    w->last_running = -1;
    w->ph_base = -1;
    w->last_begun_op = -1;
    w->cap_unused = opt->max_unused;
    size_t nt = (size_t)w->n_tensors + 1, no = (size_t)w->n_ops + 1;
    w->r = mp_replay_create(w->n_tensors);
    w->producer = malloc(nt * sizeof *w->producer);
    w->last_reader = malloc(nt * sizeof *w->last_reader);
    w->scratch_live = calloc(no, sizeof *w->scratch_live);
    w->kernel_live = calloc(no, sizeof *w->kernel_live);
    w->ts = calloc(nt, sizeof *w->ts);
    w->pending = malloc(nt * sizeof *w->pending);
    p->lifetimes = calloc(nt, sizeof *p->lifetimes);
    p->ops = calloc(no, sizeof *p->ops);
    p->unused = malloc((opt->max_unused + 1) * sizeof *p->unused);
    size_t n_events = p->summary.n_events;
    size_t per = n_events / opt->max_points + (n_events % opt->max_points != 0);
    if (per == 0)
        per = 1;
    size_t n_pts = n_events / per + (n_events % per != 0);
    bool ok = mp_tl_builder_init(&w->by_event, n_pts, per);
    ok = mp_tl_builder_init(&w->by_step, opt->max_points, 1) && ok;
    if (!ok || !w->r || !w->producer || !w->last_reader || !w->scratch_live || !w->kernel_live || !w->ts ||
        !w->pending || !p->lifetimes || !p->ops || !p->unused)
        return mp_fail(err, MP_ERR_NOMEM, "profile: out of memory");
    p->n_lifetimes = (size_t)w->n_tensors;
    p->n_ops = (size_t)w->n_ops;
    for (int32_t t = 0; t < w->n_tensors; t++)
        w->producer[t] = w->last_reader[t] = -1;
    for (int32_t o = 0; o < w->n_ops; o++)
        p->ops[o].min_ns = UINT64_MAX;
    for (int32_t o = 0; o < w->n_ops; o++) {
        const mp_trace_op *op = &m->ops[o];
        for (int32_t j = 0; op->outputs && j < op->n_outputs; j++)
            if (valid_tensor(w, op->outputs[j]) && w->producer[op->outputs[j]] < 0)
                w->producer[op->outputs[j]] = o;
        for (int32_t j = 0; op->inputs && j < op->n_inputs; j++)
            if (valid_tensor(w, op->inputs[j]))
                w->last_reader[op->inputs[j]] = o;
    }
    for (int32_t t = 0; t < w->n_tensors; t++) {
        w->ts[t].offset = -1;
        w->ts[t].slot_first = w->ts[t].slot_last = -1;
        w->ts[t].blk_first = w->ts[t].blk_last = -1;
    }

    /* the reference run: the one the heap peaked in, else the last one */
    const mp_summary *s = &p->summary;
    p->reference_run = -1;
    p->reference_phase = -1;
    if (s->peak.event >= 0 && s->peak.phase_kind == MP_PHASE_RUN) {
        w->by_phase = true;
        w->ref_phase = s->peak.phase;
        w->ref_run = s->peak.run;
        p->reference_run = (int64_t)s->peak.run;
        p->reference_phase = s->peak.phase;
    } else if (s->n_runs > 0) {
        w->ref_run = s->runs[s->n_runs - 1].run;
        p->reference_run = (int64_t)w->ref_run;
    } else {
        w->window_all = true;
        window_begin(w);
    }
    return MP_OK;
}

static mp_status pass(mp_source *src, mp_profile *p, const mp_profile_options *opt,
                      mp_error *err)
{
    mp_status st = mp_source_rewind(src, err);
    if (st != MP_OK)
        return st;
    walk w;
    st = walk_init(&w, src, opt, p, err);
    mp_event ev;
    uint64_t i = 0;
    int got = 0;
    while (st == MP_OK && (got = mp_source_next(src, &ev, err)) > 0) {
        st = step_event(&w, &ev, i, err);
        i++;
    }
    if (st == MP_OK && got < 0)
        st = err ? err->status : MP_ERR_FORMAT;
    if (st == MP_OK && i != p->summary.n_events)
        st = mp_fail(err, MP_ERR_IO, "%s: the trace file changed while being read",
                     mp_source_name(src));
    if (st == MP_OK)
        st = finish(&w, err);
    if (st == MP_OK) {
        p->n_steps = w.steps;
        mp_tl_builder_finish(&w.by_event, &p->by_event, p->n_rss > 0);
        mp_tl_builder_finish(&w.by_step, &p->by_step, p->n_rss > 0);
        st = conclude(&w, err);
    }
    walk_free(&w);
    return st;
}

/* ---- public ------------------------------------------------------------------------- */

static void profile_clear(mp_profile *p)
{
    memset(p, 0, sizeof *p);
    p->reference_run = -1;
    p->reference_arena = -1;
    p->reference_phase = -1;
}

mp_status mp_profile_compute(mp_source *src, const mp_profile_options *opt, mp_profile *out,
                             mp_error *err)
{
    if (!out)
        return mp_fail(err, MP_ERR_ARG, "profile: no output given");
    profile_clear(out);
    if (!src)
        return mp_fail(err, MP_ERR_ARG, "profile: no trace given");
    mp_profile_options o = {0};
    if (opt)
        o = *opt;
    if (o.max_points == 0)
        o.max_points = 2000;
    if (o.max_arenas == 0)
        o.max_arenas = 64;
    if (o.max_unused == 0)
        o.max_unused = 20;
    out->meta = mp_source_meta(src);
    mp_status st = mp_summary_compute_source(src, &out->summary, err);
    if (st == MP_OK)
        st = pass(src, out, &o, err);
    if (st != MP_OK)
        mp_profile_free(out);
    return st;
}

void mp_profile_free(mp_profile *p)
{
    if (!p)
        return;
    mp_summary_free(&p->summary);
    free(p->by_event.pts);
    free(p->by_step.pts);
    free(p->lifetimes);
    for (size_t i = 0; i < p->n_arenas; i++)
        mp_arena_report_free(&p->arenas[i]);
    free(p->arenas);
    free(p->ops);
    free(p->unused);
    profile_clear(p);
}
