/* Summary: the figures of `memprof run`, computed from a trace (see summary.h).
 *
 * Pass 1 replays the whole trace and keeps running figures: phase and run times, counts,
 * the heap peak and each kind's peak, copies, and the duplicated bytes (each tensor's homes
 * are tracked so that an event updates them in O(homes of that tensor)). Pass 2 replays up
 * to the two remarkable moments (the heap peak, the duplication peak) and lists what is
 * alive / held twice there; this avoids snapshotting the whole state each time a running
 * maximum grows. */
#include "analyzers/summary.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/checked.h"
#include "analyzers/replay.h"
#include "trace/grow.h"

/* ---- tensor homes (for duplicated bytes) ----------------------------------------------- */

typedef struct home {
    uint64_t key;   /* block id, or arena id for a slot */
    uint64_t seq;   /* event that made it a home: newest = largest */
    uint64_t bytes;
    bool slot;
} home;

typedef struct tensor_homes {
    home *h;
    size_t n, cap;
    uint64_t dup;   /* bytes of all homes but the newest (0 with fewer than two) */
} tensor_homes;

typedef struct walker {
    const mp_trace_meta *meta;
    int32_t n_tensors;      /* meta's, 0 when unknown */
    int32_t n_ops;
    mp_replay *r;
    tensor_homes *th;       /* n_tensors entries, NULL when n_tensors is 0 */
    uint64_t dup_total;
} walker;

/* A walker that only names tensors and operators (no replay, no homes). */
static void walker_names(walker *w, const mp_trace_meta *meta)
{
    memset(w, 0, sizeof *w);
    w->meta = meta;
    w->n_tensors = (meta && meta->n_tensors > 0 && meta->tensors) ? meta->n_tensors : 0;
    w->n_ops = (meta && meta->n_ops > 0 && meta->ops) ? meta->n_ops : 0;
}

static bool walker_init(walker *w, const mp_trace_meta *meta)
{
    walker_names(w, meta);
    w->r = mp_replay_create(w->n_tensors);
    if (!w->r)
        return false;
    if (w->n_tensors > 0) {
        w->th = calloc((size_t)w->n_tensors, sizeof *w->th);
        if (!w->th) {
            mp_replay_destroy(w->r);
            return false;
        }
    }
    return true;
}

static void walker_free(walker *w)
{
    if (w->th)
        for (int32_t t = 0; t < w->n_tensors; t++)
            free(w->th[t].h);
    free(w->th);
    mp_replay_destroy(w->r);
    memset(w, 0, sizeof *w);
}

static void recompute_dup(walker *w, tensor_homes *th)
{
    uint64_t dup = 0;
    if (th->n >= 2) {
        uint64_t sum = 0;
        uint32_t newest = 0;
        for (uint32_t i = 0; i < th->n; i++) {
            sum += th->h[i].bytes;
            if (th->h[i].seq > th->h[newest].seq)
                newest = i;
        }
        dup = sum - th->h[newest].bytes;
    }
    w->dup_total = w->dup_total - th->dup + dup;
    th->dup = dup;
}

static bool valid_tensor(const walker *w, int32_t t)
{
    return t >= 0 && t < w->n_tensors;
}

static bool is_home_block(const walker *w, const mp_replay_block *b)
{
    return valid_tensor(w, b->tensor) &&
           (b->kind == MP_KIND_STATIC || b->kind == MP_KIND_DYNAMIC || b->kind == MP_KIND_IO);
}

static home *home_find(tensor_homes *th, uint64_t key, bool slot)
{
    for (uint32_t i = 0; i < th->n; i++)
        if (th->h[i].key == key && th->h[i].slot == slot)
            return &th->h[i];
    return NULL;
}

/* Add or update a home. */
static bool home_set(walker *w, int32_t t, uint64_t key, bool slot, uint64_t seq, uint64_t bytes)
{
    tensor_homes *th = &w->th[t];
    home *h = home_find(th, key, slot);
    if (!h) {
        if (!mp_grow((void **)&th->h, &th->cap, th->n, sizeof *th->h, 2))
            return false;
        h = &th->h[th->n++];
        h->key = key;
        h->slot = slot;
    }
    h->seq = seq;
    h->bytes = bytes;
    recompute_dup(w, th);
    return true;
}

static void home_remove(walker *w, int32_t t, uint64_t key, bool slot)
{
    tensor_homes *th = &w->th[t];
    home *h = home_find(th, key, slot);
    if (!h)
        return;
    *h = th->h[--th->n];
    recompute_dup(w, th);
}

/* One event: replay it and keep the homes in step. False when out of memory. */
static bool walk_step(walker *w, const mp_event *ev, mp_replay_change *chg)
{
    if (!mp_replay_step(w->r, ev, chg))
        return false;
    if (!w->th)
        return true;
    switch (chg->what) {
    case MP_REPLAY_ALLOC:
    case MP_REPLAY_REALLOC:
        if (is_home_block(w, &chg->block))
            return home_set(w, chg->block.tensor, chg->block.id, false, chg->block.seq,
                            chg->block.bytes);
        break;
    case MP_REPLAY_FREE:
        if (is_home_block(w, &chg->block))
            home_remove(w, chg->block.tensor, chg->block.id, false);
        for (size_t i = 0; i < chg->n_dead_slots; i++)
            if (valid_tensor(w, chg->dead_slots[i].tensor))
                home_remove(w, chg->dead_slots[i].tensor, chg->block.id, true);
        break;
    case MP_REPLAY_PLAN:
        if (valid_tensor(w, chg->slot.tensor))
            return home_set(w, chg->slot.tensor, chg->arena_id, true, chg->slot.seq,
                            chg->slot.bytes);
        break;
    default:
        break;
    }
    return true;
}

/* ---- names ----------------------------------------------------------------------------- */

static const char *tensor_name(const walker *w, int32_t t)
{
    return valid_tensor(w, t) ? w->meta->tensors[t].name : NULL;
}

static const char *op_name(const walker *w, int32_t op)
{
    return (op >= 0 && op < w->n_ops) ? w->meta->ops[op].name : NULL;
}

static mp_summary_when when_now(const walker *w)
{
    const mp_replay_pos *p = mp_replay_where(w->r);
    mp_summary_when wh = {
        .event = (int64_t)p->event,
        .t_ns = p->t_ns,
        .phase_kind = p->phase_kind,
        .phase = p->phase,
        .run = p->run,
        .op = p->op,
        .op_name = op_name(w, p->op),
    };
    return wh;
}

static void when_never(mp_summary_when *wh)
{
    memset(wh, 0, sizeof *wh);
    wh->event = -1;
    wh->phase_kind = -1;
    wh->phase = UINT32_MAX;
    wh->op = -1;
}

/* ---- pass 1: running figures ----------------------------------------------------------- */

/* Run numbers to their index in s->runs: an open-addressing table (linear probing, at most
 * half full), so that a trace of a million runs is summarised in time linear in its events
 * (a run can appear in any order in a damaged trace, so searching the list would not do). */
typedef struct run_index {
    uint64_t *run;  /* key of each slot */
    size_t *at;     /* index in s->runs + 1, 0 = empty slot */
    size_t cap;     /* a power of two, or 0 */
} run_index;

static size_t run_slot(const run_index *ix, uint64_t run)
{
    uint64_t h = run * 0x9e3779b97f4a7c15ULL; /* Fibonacci hashing spreads sequential runs */
    size_t i = (size_t)(h ^ (h >> 32)) & (ix->cap - 1);
    while (ix->at[i] != 0 && ix->run[i] != run)
        i = (i + 1) & (ix->cap - 1);
    return i;
}

/* Index in s->runs of run, SIZE_MAX when it has none. */
static size_t run_find(const run_index *ix, uint64_t run)
{
    if (ix->cap == 0)
        return SIZE_MAX;
    size_t i = run_slot(ix, run);
    return ix->at[i] ? ix->at[i] - 1 : SIZE_MAX;
}

/* Record that run has index `at` (n: entries after this one). False when out of memory. */
static bool run_put(run_index *ix, uint64_t run, size_t at, size_t n)
{
    if (2 * n > ix->cap) {
        run_index big = {NULL, NULL, ix->cap ? 2 * ix->cap : 64};
        if (big.cap < ix->cap || big.cap > SIZE_MAX / sizeof *big.at)
            return false;
        big.run = malloc(big.cap * sizeof *big.run);
        big.at = calloc(big.cap, sizeof *big.at);
        if (!big.run || !big.at) {
            free(big.run);
            free(big.at);
            return false;
        }
        for (size_t i = 0; i < ix->cap; i++) {
            if (ix->at[i]) {
                size_t k = run_slot(&big, ix->run[i]);
                big.run[k] = ix->run[i];
                big.at[k] = ix->at[i];
            }
        }
        free(ix->run);
        free(ix->at);
        *ix = big;
    }
    size_t k = run_slot(ix, run);
    ix->run[k] = run;
    ix->at[k] = at + 1;
    return true;
}

static mp_summary_run *run_entry(mp_summary *s, size_t *cap, run_index *ix, uint64_t run)
{
    size_t at = run_find(ix, run);
    if (at != SIZE_MAX)
        return &s->runs[at];
    if (!mp_grow((void **)&s->runs, cap, s->n_runs, sizeof *s->runs, 8) ||
        !run_put(ix, run, s->n_runs, s->n_runs + 1))
        return NULL;
    mp_summary_run *e = &s->runs[s->n_runs++];
    memset(e, 0, sizeof *e);
    e->run = run;
    return e;
}

/* A phase's time into its kind's sum (and its run's, a part of it); NULL, or what would add
 * up beyond MP_SUM_MAX (times that go back make phases overlap). */
static const char *phase_ended(mp_summary *s, const run_index *ix, const mp_replay_phase *ph)
{
    if (ph->kind < 0 || ph->kind >= MP_PHASE_KIND_COUNT)
        return NULL;
    uint64_t ns = ph->end_ns > ph->begin_ns ? ph->end_ns - ph->begin_ns : 0;
    if (!mp_sum_add(&s->phase_ns[ph->kind], ns))
        return "the phase times";
    s->phase_count[ph->kind]++;
    if (ph->kind == MP_PHASE_RUN) {
        size_t at = run_find(ix, ph->run);
        if (at != SIZE_MAX)
            s->runs[at].t_ns += ns;
    }
    return NULL;
}

/* Allocation counts of one memory change (heap kinds only) into a run and the balance. */
/* Allocation counts of one memory change (heap kinds only) into a run and the balance.
 * NULL, or what would add up beyond MP_SUM_MAX (then nothing is counted). A run's sums are
 * parts of the whole trace's, so checking these checks them. */
static const char *count_change(mp_summary *s, mp_summary_run *run, const mp_replay_change *c)
{
    if (c->block.kind == MP_KIND_CONST)
        return NULL;
    uint64_t grow = 0, shrink = 0;
    if (c->what == MP_REPLAY_ALLOC) {
        s->n_alloc++;
        grow = c->block.bytes;
    } else if (c->what == MP_REPLAY_REALLOC) {
        s->n_realloc++;
        if (c->block.bytes > c->old_bytes)
            grow = c->block.bytes - c->old_bytes;
        else
            shrink = c->old_bytes - c->block.bytes;
    } else {
        s->n_free++;
        shrink = c->block.bytes;
    }
    if (!mp_sum_add(&s->bytes_alloc, grow))
        return "the bytes allocated";
    if (!mp_sum_add(&s->bytes_freed, shrink))
        return "the bytes freed";
    if (run) {
        if (c->what == MP_REPLAY_FREE)
            run->n_free++;
        else
            run->n_alloc++;
        run->bytes_alloc += grow;
        run->bytes_freed += shrink;
    }
    return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static bool run_stats(mp_summary *s)
{
    if (s->n_runs == 0)
        return true;
    s->first_run = s->runs[0];
    s->first_run_ns = s->runs[0].t_ns;
    s->n_later = s->n_runs - 1;
    if (s->n_later == 0)
        return true;
    uint64_t *t = malloc(s->n_later * sizeof *t);
    if (!t)
        return false;
    uint64_t sum = 0;
    mp_summary_run *m = &s->later_max;
    for (size_t i = 0; i < s->n_later; i++) {
        const mp_summary_run *r = &s->runs[i + 1];
        t[i] = r->t_ns;
        sum += r->t_ns;
        if (r->t_ns > m->t_ns)
            m->t_ns = r->t_ns;
        if (r->n_alloc > m->n_alloc)
            m->n_alloc = r->n_alloc;
        if (r->bytes_alloc > m->bytes_alloc)
            m->bytes_alloc = r->bytes_alloc;
        if (r->n_free > m->n_free)
            m->n_free = r->n_free;
        if (r->bytes_freed > m->bytes_freed)
            m->bytes_freed = r->bytes_freed;
    }
    qsort(t, s->n_later, sizeof *t, cmp_u64);
    size_t n = s->n_later;
    s->later_min_ns = t[0];
    s->later_max_ns = t[n - 1];
    s->later_mean_ns = sum / n;
    if (n % 2)
        s->later_median_ns = t[n / 2];
    else
        s->later_median_ns = t[n / 2 - 1] + (t[n / 2] - t[n / 2 - 1]) / 2;
    free(t);
    return true;
}

static mp_status pass1(mp_source *src, mp_summary *s, mp_error *err)
{
    mp_status st = mp_source_rewind(src, err);
    if (st != MP_OK)
        return st;
    walker w;
    if (!walker_init(&w, mp_source_meta(src)))
        return mp_fail(err, MP_ERR_NOMEM, "summary: out of memory");
    size_t runs_cap = 0;
    run_index ix = {NULL, NULL, 0};
    size_t cur = SIZE_MAX; /* index in s->runs of the run being replayed, SIZE_MAX outside */
    uint64_t caller_live = 0; /* bytes of the caller's own buffers live now */
    mp_replay_change c;
    mp_event event;
    const mp_event *ev = &event;
    size_t i = 0;
    int got;

    for (; (got = mp_source_next(src, &event, err)) > 0; i++) {
        if (!walk_step(&w, ev, &c)) {
            st = mp_replay_fail(w.r, mp_source_name(src), "summary", err);
            break;
        }
        const char *too_big = NULL;
        if (c.phase_ended) {
            too_big = phase_ended(s, &ix, &c.ended);
            cur = SIZE_MAX;
        }
        switch (c.what) {
        case MP_REPLAY_ALLOC:
        case MP_REPLAY_REALLOC:
        case MP_REPLAY_FREE:
            if (!too_big)
                too_big = count_change(s, cur == SIZE_MAX ? NULL : &s->runs[cur], &c);
            break;
        case MP_REPLAY_COPY:
            if (ev->aux == MP_COPY_IN) {
                s->n_copy_in++;
                if (!mp_sum_add(&s->bytes_copy_in, ev->bytes))
                    too_big = "the bytes copied in";
            } else if (ev->aux == MP_COPY_OUT) {
                s->n_copy_out++;
                if (!mp_sum_add(&s->bytes_copy_out, ev->bytes))
                    too_big = "the bytes copied out";
            }
            break;
        case MP_REPLAY_PHASE_BEGIN:
            if (mp_replay_where(w.r)->phase_kind == MP_PHASE_RUN) {
                mp_summary_run *e = run_entry(s, &runs_cap, &ix, mp_replay_where(w.r)->run);
                if (!e) {
                    st = mp_fail(err, MP_ERR_NOMEM, "summary: out of memory at event %zu", i);
                    goto done;
                }
                cur = (size_t)(e - s->runs);
            }
            break;
        default:
            break;
        }
        if (too_big) {
            st = mp_fail(err, MP_ERR_FORMAT, "%s: event %zu: %s add up to more than 2^63-1",
                         mp_source_name(src), i, too_big);
            break;
        }
        /* the caller's own buffers (trace.h MP_TRACE_CALLER_ID): heap, apart from io */
        if ((c.what == MP_REPLAY_ALLOC || c.what == MP_REPLAY_REALLOC ||
             c.what == MP_REPLAY_FREE) && mp_trace_id_is_caller(c.block.id)) {
            uint64_t before = c.what == MP_REPLAY_ALLOC ? 0 : c.what == MP_REPLAY_REALLOC
                                                                  ? c.old_bytes
                                                                  : c.block.bytes;
            uint64_t after = c.what == MP_REPLAY_FREE ? 0 : c.block.bytes;
            caller_live = caller_live - (before < caller_live ? before : caller_live) + after;
            if (caller_live > s->caller_peak)
                s->caller_peak = caller_live;
        }
        uint64_t heap = mp_replay_heap(w.r);
        if (heap > s->peak_heap) {
            s->peak_heap = heap;
            s->peak = when_now(&w);
            for (int k = 0; k < MP_KIND_COUNT; k++)
                s->peak_live[k] = mp_replay_live(w.r, k);
            s->peak_caller = caller_live < s->peak_live[MP_KIND_IO] ? caller_live
                                                                     : s->peak_live[MP_KIND_IO];
        }
        for (int k = 0; k < MP_KIND_COUNT; k++) {
            uint64_t v = mp_replay_live(w.r, k);
            if (k == MP_KIND_IO)
                v -= caller_live < v ? caller_live : v;
            if (v > s->kind_peak[k])
                s->kind_peak[k] = v;
        }
        if (w.dup_total > s->dup_bytes) {
            s->dup_bytes = w.dup_total;
            s->dup = when_now(&w);
        }
    }
    if (st == MP_OK && got < 0)
        st = err ? err->status : MP_ERR_FORMAT;
    s->n_events = i;
    if (st == MP_OK) {
        const char *too_big = NULL;
        if (mp_replay_finish(w.r, &c))
            too_big = phase_ended(s, &ix, &c.ended);
        if (too_big)
            st = mp_fail(err, MP_ERR_FORMAT, "%s: event %zu: %s add up to more than 2^63-1",
                         mp_source_name(src), i - 1, too_big);
        for (int k = 0; k < MP_KIND_COUNT; k++) {
            s->live_end_kind[k] = mp_replay_live(w.r, k);
        }
        s->live_end = mp_replay_heap(w.r);
        s->n_anomalies = mp_replay_n_anomalies(w.r);
        snprintf(s->anomaly, sizeof s->anomaly, "%s", mp_replay_first_anomaly(w.r));
        if (!run_stats(s))
            st = mp_fail(err, MP_ERR_NOMEM, "summary: out of memory");
    }
done:
    free(ix.run);
    free(ix.at);
    walker_free(&w);
    return st;
}

/* ---- pass 2: what is alive at the peaks ------------------------------------------------ */

typedef struct item_list {
    mp_summary_alive *v;
    size_t n, cap;
} item_list;

static mp_summary_alive *item_add(item_list *l)
{
    if (!mp_grow((void **)&l->v, &l->cap, l->n, sizeof *l->v, 32))
        return NULL;
    mp_summary_alive *a = &l->v[l->n++];
    memset(a, 0, sizeof *a);
    a->tensor = -1;
    a->op = -1;
    return a;
}

static int cmp_alive(const void *pa, const void *pb)
{
    const mp_summary_alive *a = pa, *b = pb;
    if (a->bytes != b->bytes)
        return a->bytes > b->bytes ? -1 : 1;
    if (a->home != b->home)
        return (int)a->home - (int)b->home;
    if (a->tensor != b->tensor)
        return a->tensor < b->tensor ? -1 : 1;
    if (a->op != b->op)
        return a->op < b->op ? -1 : 1;
    if (a->kind != b->kind)
        return (int)a->kind - (int)b->kind;
    return (a->id > b->id) - (a->id < b->id);
}

typedef struct interval {
    uint64_t lo, hi;
} interval;

static int cmp_interval(const void *pa, const void *pb)
{
    const interval *a = pa, *b = pb;
    return (a->lo > b->lo) - (a->lo < b->lo);
}

/* Producer of each tensor: the first operator listing it as an output, else -1. */
static int32_t *producers(const walker *w)
{
    int32_t *p = malloc(((size_t)w->n_tensors + 1) * sizeof *p);
    if (!p)
        return NULL;
    for (int32_t t = 0; t < w->n_tensors; t++)
        p[t] = -1;
    for (int32_t o = 0; o < w->n_ops; o++) {
        const mp_trace_op *op = &w->meta->ops[o];
        for (int32_t j = 0; op->outputs && j < op->n_outputs; j++) {
            int32_t t = op->outputs[j];
            if (valid_tensor(w, t) && p[t] < 0)
                p[t] = o;
        }
    }
    return p;
}

/* Which tensor holds each shared slot's bytes at operator op: among the tensors in place in
 * the slot of tensor r (meta shares), the one written last at or before op; -1 for r itself
 * (none written yet, or no tensor shares r's slot). NULL when out of memory. */
static int32_t *slot_holders(const walker *w, const int32_t *prod, int32_t op)
{
    int32_t *h = malloc(((size_t)w->n_tensors + 1) * sizeof *h);
    if (!h)
        return NULL;
    for (int32_t t = 0; t < w->n_tensors; t++)
        h[t] = -1;
    for (int32_t t = 0; t < w->n_tensors; t++) {
        const mp_trace_tensor *mt = &w->meta->tensors[t];
        if (!mt->in_place || !valid_tensor(w, mt->shares) || prod[t] < 0 || prod[t] > op)
            continue;
        int32_t *cur = &h[mt->shares];
        if (*cur < 0 || prod[*cur] <= prod[t])
            *cur = t;
    }
    return h;
}

static void tensor_item(const walker *w, const int32_t *prod, mp_summary_alive *a, int32_t t)
{
    a->tensor = t;
    a->name = tensor_name(w, t);
    a->op = prod[t];
    a->op_name = op_name(w, a->op);
}

/* The scratch slots of arena ar and the tensors in place in its tensors' slots, into a. */
static bool arena_counts(const walker *w, const mp_replay_arena *ar, mp_summary_alive *a)
{
    uint8_t *here = calloc((size_t)w->n_tensors + 1, 1);
    if (!here)
        return false;
    for (size_t i = 0; i < ar->n_slots; i++) {
        const mp_replay_slot *sl = &ar->slots[i];
        if (sl->kind == MP_KIND_SCRATCH)
            a->n_scratch += a->n_scratch < UINT32_MAX;
        else if (valid_tensor(w, sl->tensor))
            here[sl->tensor] = 1;
    }
    for (int32_t t = 0; t < w->n_tensors; t++) {
        const mp_trace_tensor *mt = &w->meta->tensors[t];
        if (mt->in_place && valid_tensor(w, mt->shares) && here[mt->shares])
            a->n_in_place += a->n_in_place < UINT32_MAX;
    }
    free(here);
    return true;
}

/* One live arena at the peak: its slots alive at peak_op and its uncovered bytes, or the
 * whole arena when peak_op is -1 (see mp_summary.peak_slots_by_op). */
static bool arena_items(const walker *w, const mp_replay_arena *ar, uint8_t kind,
                        int32_t peak_op, const int32_t *prod, const int32_t *holder,
                        item_list *l)
{
    if (peak_op < 0) {
        mp_summary_alive *a = item_add(l);
        if (!a)
            return false;
        a->home = MP_SUMMARY_ARENA;
        a->kind = kind;
        a->bytes = ar->bytes;
        a->id = ar->id;
        a->n_blocks = ar->n_slots > UINT32_MAX ? UINT32_MAX : (uint32_t)ar->n_slots;
        return arena_counts(w, ar, a);
    }
    interval *iv = malloc((ar->n_slots + 1) * sizeof *iv);
    if (!iv)
        return false;
    size_t n_iv = 0;
    for (size_t i = 0; i < ar->n_slots; i++) {
        const mp_replay_slot *sl = &ar->slots[i];
        if (!(sl->op_first <= peak_op && peak_op <= sl->op_last))
            continue;
        mp_summary_alive *a = item_add(l);
        if (!a) {
            free(iv);
            return false;
        }
        a->home = MP_SUMMARY_SLOT;
        a->kind = kind;
        a->bytes = sl->bytes;
        a->id = ar->id;
        if (sl->kind == MP_KIND_SCRATCH) {
            a->home = MP_SUMMARY_SCRATCH;
            a->tensor = -1;
            a->op = sl->op_first;
            a->op_name = op_name(w, a->op);
        } else if (valid_tensor(w, sl->tensor)) /* the tensor holding a shared slot now */
            tensor_item(w, prod, a, holder && holder[sl->tensor] >= 0 ? holder[sl->tensor]
                                                                       : sl->tensor);
        else
            a->tensor = sl->tensor;
        if (sl->offset < ar->bytes) {
            uint64_t room = ar->bytes - sl->offset;
            iv[n_iv].lo = sl->offset;
            iv[n_iv].hi = sl->offset + (sl->bytes < room ? sl->bytes : room);
            n_iv++;
        }
    }
    qsort(iv, n_iv, sizeof *iv, cmp_interval);
    uint64_t covered = 0, end = 0;
    for (size_t i = 0; i < n_iv; i++) {
        uint64_t lo = iv[i].lo > end ? iv[i].lo : end;
        if (iv[i].hi > lo)
            covered += iv[i].hi - lo;
        if (iv[i].hi > end)
            end = iv[i].hi;
    }
    free(iv);
    if (covered < ar->bytes) {
        mp_summary_alive *a = item_add(l);
        if (!a)
            return false;
        a->home = MP_SUMMARY_ARENA_FREE;
        a->kind = kind;
        a->bytes = ar->bytes - covered;
        a->id = ar->id;
    }
    return true;
}

/* Blocks of kind `kind` are listed: filter -1 = every kind but const, else that kind. */
static bool kind_shown(int filter, uint8_t kind)
{
    return kind < MP_KIND_COUNT && (filter < 0 ? kind != MP_KIND_CONST : kind == filter);
}

/* What is alive in r now (see mp_summary_alive_now); w names tensors and operators. */
static bool list_alive(const walker *w, const mp_replay *r, int32_t op, int filter,
                       mp_summary_alive **items, size_t *n_items)
{
    item_list l = {0};
    int32_t *prod = producers(w);
    /* Group index of (op, kind) for op buffers, and of kind for owner-less blocks. */
    size_t n_groups = (size_t)w->n_ops * MP_KIND_COUNT;
    int64_t *group = malloc((n_groups + MP_KIND_COUNT) * sizeof *group);
    bool ok = prod && group;
    if (ok)
        for (size_t g = 0; g < n_groups + MP_KIND_COUNT; g++)
            group[g] = -1;

    size_t cursor = 0;
    const mp_replay_block *b;
    while (ok && (b = mp_replay_next_block(r, &cursor)) != NULL) {
        if (b->arena >= 0 || !kind_shown(filter, b->kind))
            continue;
        if (valid_tensor(w, b->tensor)) {
            mp_summary_alive *a = item_add(&l);
            if (!a) {
                ok = false;
                break;
            }
            a->home = MP_SUMMARY_BLOCK;
            a->kind = b->kind;
            a->bytes = b->bytes;
            a->id = b->id;
            a->n_blocks = 1;
            tensor_item(w, prod, a, b->tensor);
            continue;
        }
        bool by_op = b->op >= 0 && b->op < w->n_ops;
        size_t g = by_op ? (size_t)b->op * MP_KIND_COUNT + b->kind : n_groups + b->kind;
        if (group[g] < 0) {
            mp_summary_alive *a = item_add(&l);
            if (!a) {
                ok = false;
                break;
            }
            a->home = by_op ? MP_SUMMARY_OP_BUFFERS : MP_SUMMARY_OWNERLESS;
            a->kind = b->kind;
            if (by_op) {
                a->op = b->op;
                a->op_name = op_name(w, b->op);
            }
            group[g] = (int64_t)(l.n - 1);
        }
        l.v[group[g]].bytes += b->bytes;
        l.v[group[g]].n_blocks++;
    }
    int32_t *holder = ok && op >= 0 ? slot_holders(w, prod, op) : NULL;
    ok = ok && (op < 0 || holder);
    for (size_t i = 0; ok && i < mp_replay_n_arenas(r); i++) {
        const mp_replay_arena *ar = mp_replay_arena_at(r, i);
        const mp_replay_block *blk = mp_replay_find(r, ar->id);
        uint8_t kind = blk ? blk->kind : MP_KIND_STATIC;
        if (kind_shown(filter, kind))
            ok = arena_items(w, ar, kind, op, prod, holder, &l);
    }

    free(holder);
    free(prod);
    free(group);
    if (!ok) {
        free(l.v);
        return false;
    }
    if (l.n > 1)
        qsort(l.v, l.n, sizeof *l.v, cmp_alive);
    *items = l.v;
    *n_items = l.n;
    return true;
}

bool mp_summary_alive_now(const mp_replay *r, const mp_trace_meta *meta, int32_t op,
                          int kind_filter, mp_summary_alive **items, size_t *n)
{
    walker w;
    walker_names(&w, meta);
    *items = NULL;
    *n = 0;
    return list_alive(&w, r, op, kind_filter, items, n);
}

static bool snapshot_alive(const walker *w, mp_summary *s)
{
    s->peak_slots_by_op = s->peak.op >= 0;
    return list_alive(w, w->r, s->peak.op, -1, &s->alive, &s->n_alive);
}

static int cmp_dup(const void *pa, const void *pb)
{
    const mp_summary_dup *a = pa, *b = pb;
    if (a->bytes != b->bytes)
        return a->bytes > b->bytes ? -1 : 1;
    return (a->tensor > b->tensor) - (a->tensor < b->tensor);
}

static bool snapshot_dups(const walker *w, mp_summary *s)
{
    size_t n = 0;
    for (int32_t t = 0; t < w->n_tensors; t++)
        if (w->th[t].dup > 0)
            n++;
    if (n == 0)
        return true;
    s->dups = calloc(n, sizeof *s->dups);
    if (!s->dups)
        return false;
    for (int32_t t = 0; t < w->n_tensors; t++) {
        if (w->th[t].dup == 0)
            continue;
        mp_summary_dup *d = &s->dups[s->n_dups++];
        d->tensor = t;
        d->name = tensor_name(w, t);
        d->bytes = w->th[t].dup;
        d->homes = w->th[t].n;
    }
    qsort(s->dups, s->n_dups, sizeof *s->dups, cmp_dup);
    return true;
}

static mp_status pass2(mp_source *src, mp_summary *s, mp_error *err)
{
    int64_t last = s->peak.event > s->dup.event ? s->peak.event : s->dup.event;
    if (last < 0)
        return MP_OK;
    mp_status st = mp_source_rewind(src, err);
    if (st != MP_OK)
        return st;
    walker w;
    if (!walker_init(&w, mp_source_meta(src)))
        return mp_fail(err, MP_ERR_NOMEM, "summary: out of memory");
    mp_replay_change c;
    mp_event ev;
    for (int64_t i = 0; st == MP_OK && i <= last; i++) {
        int got = mp_source_next(src, &ev, err);
        if (got <= 0) {
            /* The first pass read these events: the file changed under us. */
            st = got < 0 ? (err ? err->status : MP_ERR_IO)
                         : mp_fail(err, MP_ERR_IO, "%s: the trace file changed while being read",
                                   mp_source_name(src));
            break;
        }
        if (!walk_step(&w, &ev, &c) || (i == s->peak.event && !snapshot_alive(&w, s)) ||
            (i == s->dup.event && !snapshot_dups(&w, s)))
            st = mp_fail(err, MP_ERR_NOMEM, "summary: out of memory");
    }
    walker_free(&w);
    return st;
}

/* ---- public ---------------------------------------------------------------------------- */

mp_status mp_summary_compute(const mp_trace *tr, mp_summary *out, mp_error *err)
{
    if (!out)
        return mp_fail(err, MP_ERR_ARG, "summary: no output given");
    mp_source *src = tr ? mp_source_of_trace(tr) : NULL;
    if (!src) {
        memset(out, 0, sizeof *out);
        when_never(&out->peak);
        when_never(&out->dup);
        return tr ? mp_fail(err, MP_ERR_NOMEM, "summary: out of memory")
                  : mp_fail(err, MP_ERR_ARG, "summary: no trace given");
    }
    mp_status st = mp_summary_compute_source(src, out, err);
    mp_source_close(src);
    return st;
}

mp_status mp_summary_compute_source(mp_source *src, mp_summary *out, mp_error *err)
{
    if (!out)
        return mp_fail(err, MP_ERR_ARG, "summary: no output given");
    memset(out, 0, sizeof *out);
    when_never(&out->peak);
    when_never(&out->dup);
    if (!src)
        return mp_fail(err, MP_ERR_ARG, "summary: no trace given");
    out->truncated = mp_source_truncated(src);

    const mp_trace_meta *mh = mp_source_meta(src);
    mp_status st = pass1(src, out, err);
    /* a model held on the heap by the caller (zoo:), live for the whole session */
    if (st == MP_OK && mh && mh->model_heap_bytes > 0)
        out->model_heap = (uint64_t)mh->model_heap_bytes;
    if (st == MP_OK)
        st = pass2(src, out, err);
    if (st != MP_OK) {
        mp_summary_free(out);
        return st;
    }
    out->static_bytes = out->kind_peak[MP_KIND_STATIC];
    out->dynamic_bytes = out->kind_peak[MP_KIND_DYNAMIC];
    out->const_bytes = out->kind_peak[MP_KIND_CONST];
    const mp_trace_meta *m = mp_source_meta(src);
    if (m && m->process_heap_peak >= 0 && m->allocator_overhead >= 0) {
        /* Saturate instead of overflowing on absurd figures from a damaged trace. */
        int64_t peak = out->peak_heap > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)out->peak_heap;
        int64_t v;
        int64_t model = out->model_heap > (uint64_t)INT64_MAX ? INT64_MAX
                                                                : (int64_t)out->model_heap;
        if (__builtin_sub_overflow(m->process_heap_peak, peak, &v) ||
            __builtin_sub_overflow(v, m->allocator_overhead, &v) ||
            __builtin_sub_overflow(v, model, &v))
            v = INT64_MIN;
        out->unaccounted_measured = true;
        out->unaccounted = v;
    }
    return MP_OK;
}

void mp_summary_free(mp_summary *s)
{
    if (!s)
        return;
    free(s->runs);
    free(s->alive);
    free(s->dups);
    memset(s, 0, sizeof *s);
    when_never(&s->peak);
    when_never(&s->dup);
}
