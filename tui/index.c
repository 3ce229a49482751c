/* The index behind `memprof tui` (see index.h): one pass over the events builds compact
 * events, chart buckets, replay checkpoints and the operator starts; afterwards every query
 * restores a checkpoint into a fresh replay (by feeding it synthetic events that rebuild
 * the saved state) and steps at most K events. */
#include "tui/index.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/replay.h"
#include "trace/grow.h"

#define DEFAULT_K 4096
#define DEFAULT_BUCKETS 65536
#define DEFAULT_BUDGET ((size_t)1 << 20)
#define DEFAULT_EXACT 8192

/* An event as kept in memory: what the replay needs, and the time. x: the PLAN side-table
 * index (offset, last operator) for PLAN events, the phase kind for PHASE_BEGIN. */
typedef struct tev {
    uint64_t id, bytes, t_ns;
    int32_t tensor, op;
    uint32_t x;
    uint8_t type, kind;
} tev;

typedef struct plan_x {
    uint64_t offset;
    int32_t op_last;
} plan_x;

typedef struct cp_arena {
    uint64_t id;
    size_t n_slots;
    mp_replay_slot *slots;
} cp_arena;

/* The replay's state before event `event`. */
typedef struct checkpoint {
    size_t event;
    int32_t phase_kind;
    uint64_t run;
    size_t n_ops, n_blocks, n_arenas;
    int32_t *ops;                 /* open operators, outermost first */
    mp_replay_block *blocks;
    cp_arena *arenas;
    size_t weight;                /* blocks + slots held */
} checkpoint;

struct mp_tui_index {
    const mp_trace_meta *meta;
    int32_t n_tensors, n_ops;

    size_t n;
    tev *ev;
    size_t cap_ev;
    plan_x *plans;
    size_t n_plans, cap_plans;

    mp_tui_column *buckets;
    size_t n_buckets, cap_buckets, B, max_buckets;
    size_t exact_events;          /* windows this short are charted exactly */

    checkpoint *cps;
    size_t n_cps, cap_cps, K, budget, cp_weight;

    size_t *op_begins;
    size_t n_op_begins, cap_op_begins;

    uint64_t peak;
    size_t peak_event;
    uint64_t kind_peak[MP_KIND_COUNT];

    /* the working replay: the state after events 0..pos-1 (NULL: none yet) */
    mp_replay *r;
    size_t pos;

    /* the alive list of the last mp_tui_state_at */
    mp_summary_alive *items;
    size_t n_items;
};

/* ---- small helpers ---------------------------------------------------------------------- */

static mp_status nomem(mp_error *err)
{
    return mp_fail(err, MP_ERR_NOMEM, "out of memory while indexing the trace");
}

static mp_event to_event(const mp_tui_index *m, size_t i)
{
    const tev *t = &m->ev[i];
    mp_event e;
    memset(&e, 0, sizeof e);
    e.t_ns = t->t_ns;
    e.bytes = t->bytes;
    e.id = t->id;
    e.tensor = t->tensor;
    e.op = t->op;
    e.op_last = -1;
    e.type = t->type;
    e.kind = t->kind;
    if (t->type == MP_EV_PLAN) {
        e.aux = m->plans[t->x].offset;
        e.op_last = m->plans[t->x].op_last;
    } else if (t->type == MP_EV_PHASE_BEGIN) {
        e.aux = t->x;
    }
    return e;
}

static void kinds_now(const mp_replay *r, uint64_t *live)
{
    for (int k = 0; k < MP_KIND_COUNT; k++)
        live[k] = mp_replay_live(r, k);
}

static void column_take(mp_tui_column *c, bool first, uint64_t heap, const uint64_t *live,
                        size_t at)
{
    if (first) {
        c->heap = heap;
        memcpy(c->live, live, sizeof c->live);
        memcpy(c->kind_max, live, sizeof c->kind_max);
        c->at = at;
        return;
    }
    if (heap > c->heap) {
        c->heap = heap;
        memcpy(c->live, live, sizeof c->live);
        c->at = at;
    }
    for (int k = 0; k < MP_KIND_COUNT; k++)
        if (live[k] > c->kind_max[k])
            c->kind_max[k] = live[k];
}

/* Fold column b into a (a holds earlier events: ties keep a's moment). */
static void column_merge(mp_tui_column *a, const mp_tui_column *b)
{
    if (b->heap > a->heap) {
        a->heap = b->heap;
        memcpy(a->live, b->live, sizeof a->live);
        a->at = b->at;
    }
    for (int k = 0; k < MP_KIND_COUNT; k++)
        if (b->kind_max[k] > a->kind_max[k])
            a->kind_max[k] = b->kind_max[k];
}

/* ---- checkpoints ------------------------------------------------------------------------ */

static void cp_free(checkpoint *c)
{
    for (size_t i = 0; i < c->n_arenas; i++)
        free(c->arenas[i].slots);
    free(c->arenas);
    free(c->blocks);
    free(c->ops);
    memset(c, 0, sizeof *c);
}

static bool cp_take(const mp_replay *r, const int32_t *ops, size_t n_ops, size_t event,
                    checkpoint *c)
{
    memset(c, 0, sizeof *c);
    c->event = event;
    const mp_replay_pos *p = mp_replay_where(r);
    c->phase_kind = p->phase_kind;
    c->run = p->run;
    c->n_blocks = mp_replay_n_blocks(r);
    c->n_arenas = mp_replay_n_arenas(r);
    c->n_ops = n_ops;
    c->ops = malloc((n_ops + 1) * sizeof *c->ops);
    c->blocks = malloc((c->n_blocks + 1) * sizeof *c->blocks);
    c->arenas = calloc(c->n_arenas + 1, sizeof *c->arenas);
    if (!c->ops || !c->blocks || !c->arenas) {
        cp_free(c);
        return false;
    }
    if (n_ops)
        memcpy(c->ops, ops, n_ops * sizeof *ops);
    size_t cur = 0, k = 0;
    const mp_replay_block *b;
    while ((b = mp_replay_next_block(r, &cur)) != NULL && k < c->n_blocks)
        c->blocks[k++] = *b;
    c->n_blocks = k;
    c->weight = k + 1;
    for (size_t i = 0; i < c->n_arenas; i++) {
        const mp_replay_arena *a = mp_replay_arena_at(r, i);
        c->arenas[i].id = a->id;
        c->arenas[i].n_slots = a->n_slots;
        c->arenas[i].slots = malloc((a->n_slots + 1) * sizeof *a->slots);
        if (!c->arenas[i].slots) {
            cp_free(c);
            return false;
        }
        if (a->n_slots)
            memcpy(c->arenas[i].slots, a->slots, a->n_slots * sizeof *a->slots);
        c->weight += a->n_slots;
    }
    return true;
}

/* Drop every other checkpoint and double K (when they hold more than the budget). */
static void cp_thin(mp_tui_index *m)
{
    size_t j = 0;
    m->cp_weight = 0;
    for (size_t i = 0; i < m->n_cps; i++) {
        if (i % 2 == 0) {
            m->cps[j++] = m->cps[i];
            m->cp_weight += m->cps[i].weight;
        } else {
            cp_free(&m->cps[i]);
        }
    }
    m->n_cps = j;
    m->K *= 2;
}

/* A fresh working replay in the state of checkpoint c. */
static bool cp_restore(mp_tui_index *m, const checkpoint *c)
{
    mp_replay_destroy(m->r);
    m->pos = 0;
    m->r = mp_replay_create(m->n_tensors);
    if (!m->r)
        return false;
    mp_event e;
    memset(&e, 0, sizeof e);
    e.tensor = e.op = e.op_last = -1;
    if (c->phase_kind >= 0) {
        e.type = MP_EV_PHASE_BEGIN;
        e.aux = (uint64_t)c->phase_kind;
        e.id = c->run;
        if (!mp_replay_step(m->r, &e, NULL))
            return false;
    }
    for (size_t i = 0; i < c->n_ops; i++) {
        memset(&e, 0, sizeof e);
        e.type = MP_EV_OP_BEGIN;
        e.tensor = e.op_last = -1;
        e.op = c->ops[i];
        if (!mp_replay_step(m->r, &e, NULL))
            return false;
    }
    for (size_t i = 0; i < c->n_blocks; i++) {
        const mp_replay_block *b = &c->blocks[i];
        memset(&e, 0, sizeof e);
        e.type = MP_EV_ALLOC;
        e.id = b->id;
        e.bytes = b->bytes;
        e.kind = b->kind;
        e.tensor = b->tensor;
        e.op = b->op;
        e.op_last = -1;
        if (!mp_replay_step(m->r, &e, NULL))
            return false;
    }
    for (size_t i = 0; i < c->n_arenas; i++)
        for (size_t s = 0; s < c->arenas[i].n_slots; s++) {
            const mp_replay_slot *sl = &c->arenas[i].slots[s];
            memset(&e, 0, sizeof e);
            e.type = MP_EV_PLAN;
            e.id = c->arenas[i].id;
            e.tensor = sl->tensor;
            e.op = sl->op_first;
            e.op_last = sl->op_last;
            e.aux = sl->offset;
            e.bytes = sl->bytes;
            e.kind = sl->kind;
            if (!mp_replay_step(m->r, &e, NULL))
                return false;
        }
    m->pos = c->event;
    return true;
}

/* Put the working replay at pos (the state after events 0..pos-1). */
static bool seek(mp_tui_index *m, size_t pos)
{
    if (!m->r || pos < m->pos || pos - m->pos > m->K) {
        size_t j = pos / m->K;
        if (j >= m->n_cps)
            j = m->n_cps - 1;
        if (!cp_restore(m, &m->cps[j]))
            return false;
    }
    while (m->pos < pos) {
        mp_event e = to_event(m, m->pos);
        if (!mp_replay_step(m->r, &e, NULL))
            return false;
        m->pos++;
    }
    return true;
}

/* ---- building --------------------------------------------------------------------------- */

typedef struct builder {
    mp_replay *r;
    int32_t *stack;
    size_t n_stack, cap_stack;
} builder;

static bool add_event(mp_tui_index *m, const mp_event *e)
{
    if (!mp_grow((void **)&m->ev, &m->cap_ev, m->n, sizeof *m->ev, 4096))
        return false;
    tev *t = &m->ev[m->n];
    t->id = e->id;
    t->bytes = e->bytes;
    t->t_ns = e->t_ns;
    t->tensor = e->tensor;
    t->op = e->op;
    t->type = e->type;
    t->kind = e->kind;
    t->x = 0;
    if (e->type == MP_EV_PLAN) {
        if (!mp_grow((void **)&m->plans, &m->cap_plans, m->n_plans, sizeof *m->plans, 256) ||
            m->n_plans >= UINT32_MAX)
            return false;
        m->plans[m->n_plans].offset = e->aux;
        m->plans[m->n_plans].op_last = e->op_last;
        t->x = (uint32_t)m->n_plans++;
    } else if (e->type == MP_EV_PHASE_BEGIN) {
        t->x = e->aux > UINT32_MAX ? UINT32_MAX : (uint32_t)e->aux;
    }
    return true;
}

static bool add_bucket_value(mp_tui_index *m, size_t i, uint64_t heap, const uint64_t *live)
{
    size_t b = i / m->B;
    if (b >= m->n_buckets) {
        if (b >= m->max_buckets) { /* halve the resolution */
            size_t j = 0;
            for (size_t k = 0; k < m->n_buckets; k += 2, j++) {
                mp_tui_column c = m->buckets[k];
                if (k + 1 < m->n_buckets)
                    column_merge(&c, &m->buckets[k + 1]);
                m->buckets[j] = c;
            }
            m->n_buckets = j;
            m->B *= 2;
            b = i / m->B;
        }
        if (b >= m->n_buckets) {
            if (!mp_grow((void **)&m->buckets, &m->cap_buckets, m->n_buckets,
                         sizeof *m->buckets, 1024))
                return false;
            column_take(&m->buckets[m->n_buckets++], true, heap, live, i);
            return true;
        }
    }
    column_take(&m->buckets[b], false, heap, live, i);
    return true;
}

static bool build_step(mp_tui_index *m, builder *bd, const mp_event *e)
{
    size_t i = m->n;
    if (i % m->K == 0) {
        if (!mp_grow((void **)&m->cps, &m->cap_cps, m->n_cps, sizeof *m->cps, 64) ||
            !cp_take(bd->r, bd->stack, bd->n_stack, i, &m->cps[m->n_cps]))
            return false;
        m->cp_weight += m->cps[m->n_cps++].weight;
        if (m->cp_weight > m->budget && m->n_cps > 2)
            cp_thin(m);
    }
    if (!add_event(m, e))
        return false;
    mp_replay_change chg;
    if (!mp_replay_step(bd->r, e, &chg))
        return false;
    switch (chg.what) {
    case MP_REPLAY_PHASE_BEGIN:
    case MP_REPLAY_PHASE_END:
        bd->n_stack = 0;
        break;
    case MP_REPLAY_OP_BEGIN:
        if (!mp_grow((void **)&bd->stack, &bd->cap_stack, bd->n_stack, sizeof *bd->stack, 16))
            return false;
        bd->stack[bd->n_stack++] = e->op;
        if (!mp_grow((void **)&m->op_begins, &m->cap_op_begins, m->n_op_begins,
                     sizeof *m->op_begins, 1024))
            return false;
        m->op_begins[m->n_op_begins++] = i;
        break;
    case MP_REPLAY_OP_END: {
        size_t k = bd->n_stack;
        while (k > 0 && bd->stack[k - 1] != e->op)
            k--;
        bd->n_stack = k > 0 ? k - 1 : bd->n_stack;
        break;
    }
    default:
        break;
    }
    uint64_t heap = mp_replay_heap(bd->r), live[MP_KIND_COUNT];
    kinds_now(bd->r, live);
    if (heap > m->peak) {
        m->peak = heap;
        m->peak_event = i;
    }
    for (int k = 0; k < MP_KIND_COUNT; k++)
        if (live[k] > m->kind_peak[k])
            m->kind_peak[k] = live[k];
    if (!add_bucket_value(m, i, heap, live))
        return false;
    m->n++;
    return true;
}

mp_status mp_tui_index_build(mp_source *src, const mp_tui_options *opt, mp_tui_index **out,
                             mp_error *err)
{
    *out = NULL;
    if (!src)
        return mp_fail(err, MP_ERR_ARG, "no trace");
    mp_status st = mp_source_rewind(src, err);
    if (st != MP_OK)
        return st;
    mp_tui_index *m = calloc(1, sizeof *m);
    builder bd = {0};
    if (!m)
        return nomem(err);
    m->meta = mp_source_meta(src);
    m->n_tensors = m->meta && m->meta->n_tensors > 0 ? m->meta->n_tensors : 0;
    m->n_ops = m->meta && m->meta->n_ops > 0 ? m->meta->n_ops : 0;
    m->K = opt && opt->checkpoint_every ? opt->checkpoint_every : DEFAULT_K;
    m->max_buckets = opt && opt->max_buckets ? opt->max_buckets : DEFAULT_BUCKETS;
    if (m->max_buckets < 2)
        m->max_buckets = 2;
    m->budget = opt && opt->checkpoint_budget ? opt->checkpoint_budget : DEFAULT_BUDGET;
    m->exact_events = opt && opt->exact_events ? opt->exact_events : DEFAULT_EXACT;
    m->B = 1;
    m->peak_event = SIZE_MAX;
    bd.r = mp_replay_create(m->n_tensors);
    if (!bd.r) {
        st = nomem(err);
        goto fail;
    }
    mp_event e;
    int got;
    while ((got = mp_source_next(src, &e, err)) == 1) {
        if (!build_step(m, &bd, &e)) {
            st = mp_replay_fail(bd.r, mp_source_name(src), "tui", err);
            goto fail;
        }
    }
    if (got < 0) {
        st = err ? err->status : MP_ERR_IO;
        goto fail;
    }
    if (m->n_cps == 0) { /* no events: one empty checkpoint */
        if (!mp_grow((void **)&m->cps, &m->cap_cps, 0, sizeof *m->cps, 1) ||
            !cp_take(bd.r, NULL, 0, 0, &m->cps[0])) {
            st = nomem(err);
            goto fail;
        }
        m->n_cps = 1;
    }
    mp_replay_destroy(bd.r);
    free(bd.stack);
    *out = m;
    return MP_OK;
fail:
    mp_replay_destroy(bd.r);
    free(bd.stack);
    mp_tui_index_free(m);
    return st;
}

void mp_tui_index_free(mp_tui_index *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n_cps; i++)
        cp_free(&m->cps[i]);
    free(m->cps);
    free(m->ev);
    free(m->plans);
    free(m->buckets);
    free(m->op_begins);
    mp_replay_destroy(m->r);
    free(m->items);
    free(m);
}

/* ---- figures ---------------------------------------------------------------------------- */

const mp_trace_meta *mp_tui_meta(const mp_tui_index *m) { return m->meta; }
size_t mp_tui_n_events(const mp_tui_index *m) { return m->n; }
uint64_t mp_tui_peak_heap(const mp_tui_index *m) { return m->peak; }
size_t mp_tui_peak_event(const mp_tui_index *m) { return m->peak_event; }
size_t mp_tui_bucket_size(const mp_tui_index *m) { return m->B; }
size_t mp_tui_checkpoint_every(const mp_tui_index *m) { return m->K; }

uint64_t mp_tui_kind_peak(const mp_tui_index *m, int kind)
{
    return kind >= 0 && kind < MP_KIND_COUNT ? m->kind_peak[kind] : 0;
}

const char *mp_tui_tensor_name(const mp_tui_index *m, int32_t t)
{
    const char *s = t >= 0 && t < m->n_tensors ? m->meta->tensors[t].name : NULL;
    return s ? s : "?";
}

const char *mp_tui_op_name(const mp_tui_index *m, int32_t o)
{
    const char *s = o >= 0 && o < m->n_ops ? m->meta->ops[o].name : NULL;
    return s ? s : "?";
}

/* ---- the state at an event -------------------------------------------------------------- */

mp_status mp_tui_state_at(mp_tui_index *m, size_t e, int kind_filter, mp_tui_at *out,
                          mp_error *err)
{
    memset(out, 0, sizeof *out);
    if (e >= m->n)
        return mp_fail(err, MP_ERR_ARG, "event %zu is out of range (%zu events)", e, m->n);
    const mp_replay_pos *p;
    if (!seek(m, e + 1))
        return nomem(err);
    p = mp_replay_where(m->r);
    out->event = e;
    out->t_ns = m->ev[e].t_ns;
    out->type = m->ev[e].type;
    out->phase_kind = p->phase_kind;
    out->run = p->run;
    out->op = p->op;
    out->heap = mp_replay_heap(m->r);
    kinds_now(m->r, out->live);
    free(m->items);
    m->items = NULL;
    m->n_items = 0;
    if (!mp_summary_alive_now(m->r, m->meta, p->op, kind_filter, &m->items, &m->n_items))
        return nomem(err);
    out->n_alive = m->n_items;
    out->alive = m->items;
    return MP_OK;
}

/* ---- operators -------------------------------------------------------------------------- */

/* Index of the first element of v[0..n) greater than e. */
static size_t upper(const size_t *v, size_t n, size_t e)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] <= e)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

size_t mp_tui_next_op(const mp_tui_index *m, size_t e)
{
    size_t i = upper(m->op_begins, m->n_op_begins, e);
    return i < m->n_op_begins ? m->op_begins[i] : SIZE_MAX;
}

size_t mp_tui_prev_op(const mp_tui_index *m, size_t e)
{
    if (e == 0)
        return SIZE_MAX;
    size_t i = upper(m->op_begins, m->n_op_begins, e - 1);
    return i > 0 ? m->op_begins[i - 1] : SIZE_MAX;
}

/* ---- search ----------------------------------------------------------------------------- */

static bool contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t k = 0;
        while (k < n && hay[k] &&
               tolower((unsigned char)hay[k]) == tolower((unsigned char)needle[k]))
            k++;
        if (k == n)
            return true;
    }
    return false;
}

int32_t mp_tui_find_tensor(const mp_tui_index *m, const char *query, int32_t after)
{
    if (!query || !*query || m->n_tensors == 0)
        return -1;
    int32_t n = m->n_tensors;
    if (after < -1 || after >= n)
        after = -1;
    for (int pass = 0; pass < 2; pass++)
        for (int32_t k = 1; k <= n; k++) {
            int32_t t = (int32_t)(((int64_t)after + k + n) % n);
            const char *name = m->meta->tensors[t].name;
            if (!name)
                continue;
            if (pass == 0 ? strcmp(name, query) == 0 : contains_nocase(name, query))
                return t;
        }
    return -1;
}

static bool push(size_t **v, size_t *n, size_t *cap, size_t x)
{
    if (!mp_grow((void **)v, cap, *n, sizeof **v, 16))
        return false;
    (*v)[(*n)++] = x;
    return true;
}

mp_status mp_tui_tensor_find_events(const mp_tui_index *m, int32_t tensor,
                                    mp_tui_tensor_events *out, mp_error *err)
{
    memset(out, 0, sizeof *out);
    size_t cap_a = 0, cap_f = 0, n_ar = 0, cap_ar = 0;
    uint64_t *arenas = NULL; /* live arenas holding a slot of the tensor */
    bool ok = true;
    for (size_t i = 0; ok && i < m->n; i++) {
        const tev *t = &m->ev[i];
        if (t->type == MP_EV_ALLOC && t->tensor == tensor) {
            ok = push(&out->alloc, &out->n_alloc, &cap_a, i);
        } else if (t->type == MP_EV_PLAN && t->tensor == tensor && t->kind != MP_KIND_SCRATCH) {
            ok = push(&out->alloc, &out->n_alloc, &cap_a, i);
            bool known = false;
            for (size_t k = 0; k < n_ar; k++)
                known |= arenas[k] == t->id;
            if (ok && !known) {
                ok = mp_grow((void **)&arenas, &cap_ar, n_ar, sizeof *arenas, 4);
                if (ok)
                    arenas[n_ar++] = t->id;
            }
        } else if (t->type == MP_EV_FREE) {
            bool hit = t->tensor == tensor;
            for (size_t k = 0; k < n_ar; k++)
                if (arenas[k] == t->id) {
                    arenas[k] = arenas[--n_ar];
                    hit = true;
                    break;
                }
            if (hit)
                ok = push(&out->free, &out->n_free, &cap_f, i);
        }
    }
    free(arenas);
    if (!ok) {
        mp_tui_tensor_events_free(out);
        return nomem(err);
    }
    return MP_OK;
}

void mp_tui_tensor_events_free(mp_tui_tensor_events *te)
{
    free(te->alloc);
    free(te->free);
    memset(te, 0, sizeof *te);
}

size_t mp_tui_next_after(const size_t *v, size_t n, size_t e)
{
    if (n == 0)
        return SIZE_MAX;
    size_t i = upper(v, n, e);
    return i < n ? v[i] : v[0];
}

/* ---- window ----------------------------------------------------------------------------- */

static size_t min_len(size_t n, int cols)
{
    size_t c = cols > 0 ? (size_t)cols : 1;
    return n < c ? n : c;
}

static void clamp(mp_tui_window *w, size_t n)
{
    if (w->len > n)
        w->len = n;
    if (w->first > n - w->len)
        w->first = n - w->len;
}

mp_tui_window mp_tui_window_all(size_t n_events)
{
    mp_tui_window w = {0, n_events};
    return w;
}

void mp_tui_window_fit(mp_tui_window *w, size_t n_events, int cols)
{
    if (w->len < min_len(n_events, cols))
        w->len = min_len(n_events, cols);
    clamp(w, n_events);
}

void mp_tui_window_zoom(mp_tui_window *w, size_t n_events, int cols, size_t cursor, int dir)
{
    mp_tui_window_fit(w, n_events, cols);
    size_t old = w->len;
    if (old == 0)
        return;
    /* out: doubled, or the whole trace when that is within an eighth of it (so that zooming
     * out always comes back to it, halving having rounded down) */
    size_t len = old / 2;
    if (dir <= 0)
        len = old > n_events / 2 || n_events - old * 2 <= n_events / 8 ? n_events : old * 2;
    if (len < min_len(n_events, cols))
        len = min_len(n_events, cols);
    if (cursor >= n_events)
        cursor = n_events - 1;
    /* the cursor's offset in the window, scaled: it stays in the same column */
    size_t off = cursor >= w->first && cursor < w->first + old ? cursor - w->first : old / 2;
    size_t noff = (size_t)((uint64_t)off * len / old);
    w->len = len;
    w->first = cursor >= noff ? cursor - noff : 0;
    clamp(w, n_events);
}

void mp_tui_window_pan(mp_tui_window *w, size_t n_events, int cols, long cols_delta)
{
    mp_tui_window_fit(w, n_events, cols);
    size_t per = w->len / (size_t)(cols > 0 ? cols : 1);
    if (per == 0)
        per = 1;
    size_t step = per * (size_t)(cols_delta < 0 ? -cols_delta : cols_delta);
    if (cols_delta < 0)
        w->first = w->first > step ? w->first - step : 0;
    else
        w->first += step;
    clamp(w, n_events);
}

void mp_tui_window_follow(mp_tui_window *w, size_t n_events, size_t e)
{
    if (e >= n_events || w->len == 0)
        return;
    if (e < w->first)
        w->first = e;
    else if (e >= w->first + w->len)
        w->first = e - w->len + 1;
    clamp(w, n_events);
}

size_t mp_tui_col_first(const mp_tui_window *w, int cols, int c)
{
    return w->first + (size_t)((uint64_t)c * w->len / (uint64_t)cols);
}

size_t mp_tui_col_last(const mp_tui_window *w, int cols, int c)
{
    return w->first + (size_t)((uint64_t)(c + 1) * w->len / (uint64_t)cols) - 1;
}

int mp_tui_col_of(const mp_tui_window *w, int cols, size_t e)
{
    if (cols <= 0 || w->len == 0 || e < w->first || e >= w->first + w->len)
        return -1;
    uint64_t x = e - w->first;
    return (int)(((x + 1) * (uint64_t)cols - 1) / w->len);
}

/* ---- chart columns ---------------------------------------------------------------------- */

mp_status mp_tui_columns(mp_tui_index *m, const mp_tui_window *w, int cols, mp_tui_column *out,
                         mp_error *err)
{
    if (cols <= 0)
        return MP_OK;
    memset(out, 0, (size_t)cols * sizeof *out);
    for (int c = 0; c < cols; c++)
        out[c].at = SIZE_MAX;
    if (w->len == 0 || w->first >= m->n)
        return MP_OK;
    size_t len = w->len < m->n - w->first ? w->len : m->n - w->first;
    mp_tui_window win = {w->first, len};
    bool exact = len <= m->exact_events || len < 2 * (size_t)cols * m->B;
    if (exact) {
        if (!seek(m, win.first))
            return nomem(err);
        uint64_t live[MP_KIND_COUNT];
        for (size_t i = win.first; i < win.first + len; i++) {
            mp_event e = to_event(m, i);
            if (!mp_replay_step(m->r, &e, NULL))
                return nomem(err);
            m->pos++;
            int c = mp_tui_col_of(&win, cols, i);
            kinds_now(m->r, live);
            column_take(&out[c], out[c].at == SIZE_MAX, mp_replay_heap(m->r), live, i);
        }
        return MP_OK;
    }
    size_t b0 = (win.first + m->B - 1) / m->B;
    for (size_t b = b0; b < m->n_buckets && b * m->B < win.first + len; b++) {
        int c = mp_tui_col_of(&win, cols, b * m->B);
        if (out[c].at == SIZE_MAX)
            out[c] = m->buckets[b];
        else
            column_merge(&out[c], &m->buckets[b]);
    }
    return MP_OK;
}
