/* Replay: the memory state a trace describes, event by event (see replay.h).
 *
 * Live blocks sit in an open-addressing hash table (linear probing, backward-shift deletion,
 * so no tombstones pile up over millions of events). Live arenas sit in a small array; each
 * block that is an arena knows its index there, and each arena maps tensor -> slot through
 * an index array (when the number of tensors is known), so every event costs O(1). */
#include "analyzers/replay.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/checked.h"
#include "trace/grow.h"

typedef struct arena_rec {
    mp_replay_arena a;
    size_t cap;        /* capacity of a.slots */
    uint64_t slot_bytes; /* bytes of all its slots (checked: at most MP_SUM_MAX) */
    int32_t *slot_of;  /* tensor -> index in a.slots, -1 = none (NULL until the first plan) */
} arena_rec;

struct mp_replay {
    int32_t n_tensors;

    mp_replay_block *tab;  /* hash table of live blocks */
    uint8_t *used;
    size_t cap, count;     /* cap is a power of two (or 0) */

    arena_rec *arenas;
    size_t n_arenas, cap_arenas;
    mp_replay_slot *dead;  /* slots of the arena freed by the last step */

    uint64_t live[MP_KIND_COUNT];
    uint64_t heap;
    uint64_t slot_total;   /* bytes of the slots of all live arenas */
    /* Training slots (memprof train's planned tensors, each of its category): while an
     * operator runs, the bytes of the training slots alive at that operator count as their
     * category and not as the arena's static (see mp_replay_live). */
    size_t n_train_slots;  /* training slots in live arenas */
    uint64_t attr[MP_KIND_COUNT]; /* bytes moved from STATIC to each category now */
    uint64_t attr_total;
    int32_t attr_op;       /* operator the attribution was computed for, -1 = none */
    bool attr_dirty;       /* a plan or an arena changed since */

    mp_replay_pos pos;
    uint64_t phase_begin_ns;
    uint64_t n_phase_begins;
    int32_t *ops;          /* stack of open operators */
    size_t n_ops, cap_ops;

    uint64_t n_anomalies;
    char anomaly[200];
    char malformed[200];   /* why the last failed step failed, "" = out of memory */
};

/* ---- hash table ---------------------------------------------------------------------- */

static size_t hash_id(uint64_t id)
{
    /* splitmix64 finalizer: block ids are often sequential, this spreads them. */
    id += 0x9e3779b97f4a7c15ULL;
    id = (id ^ (id >> 30)) * 0xbf58476d1ce4e5b9ULL;
    id = (id ^ (id >> 27)) * 0x94d049bb133111ebULL;
    return (size_t)(id ^ (id >> 31));
}

/* Slot of id, or SIZE_MAX. */
static size_t tab_find(const mp_replay *r, uint64_t id)
{
    if (r->cap == 0)
        return SIZE_MAX;
    size_t mask = r->cap - 1;
    for (size_t i = hash_id(id) & mask; r->used[i]; i = (i + 1) & mask)
        if (r->tab[i].id == id)
            return i;
    return SIZE_MAX;
}

static void tab_put(mp_replay_block *tab, uint8_t *used, size_t cap, const mp_replay_block *b)
{
    size_t mask = cap - 1;
    size_t i = hash_id(b->id) & mask;
    while (used[i])
        i = (i + 1) & mask;
    tab[i] = *b;
    used[i] = 1;
}

/* Make room for one more block (load factor kept under 5/8). */
static bool tab_reserve(mp_replay *r)
{
    if (r->cap != 0 && (r->count + 1) * 8 <= r->cap * 5)
        return true;
    size_t ncap = r->cap ? r->cap * 2 : 64;
    mp_replay_block *ntab = malloc(ncap * sizeof *ntab);
    uint8_t *nused = calloc(ncap, 1);
    if (!ntab || !nused) {
        free(ntab);
        free(nused);
        return false;
    }
    for (size_t i = 0; i < r->cap; i++)
        if (r->used[i])
            tab_put(ntab, nused, ncap, &r->tab[i]);
    free(r->tab);
    free(r->used);
    r->tab = ntab;
    r->used = nused;
    r->cap = ncap;
    return true;
}

static void tab_remove_at(mp_replay *r, size_t i)
{
    size_t mask = r->cap - 1;
    r->used[i] = 0;
    r->count--;
    /* Backward shift: move later entries of the probe run into the hole when their home
     * slot does not lie cyclically in (hole, their position]. */
    for (size_t j = (i + 1) & mask; r->used[j]; j = (j + 1) & mask) {
        size_t k = hash_id(r->tab[j].id) & mask;
        bool stays = (i <= j) ? (i < k && k <= j) : (i < k || k <= j);
        if (stays)
            continue;
        r->tab[i] = r->tab[j];
        r->used[i] = 1;
        r->used[j] = 0;
        i = j;
    }
}

/* ---- helpers ------------------------------------------------------------------------- */

static void anomaly(mp_replay *r, mp_replay_change *chg, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void anomaly(mp_replay *r, mp_replay_change *chg, const char *fmt, ...)
{
    if (r->n_anomalies++ == 0) {
        int n = snprintf(r->anomaly, sizeof r->anomaly, "event %zu: ", r->pos.event);
        if (n < 0 || (size_t)n >= sizeof r->anomaly)
            n = 0;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->anomaly + n, sizeof r->anomaly - (size_t)n, fmt, ap);
        va_end(ap);
    }
    chg->anomaly = true;
}

static bool too_big(mp_replay *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A step refused because a sum would pass MP_SUM_MAX: describe it and fail. */
static bool too_big(mp_replay *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->malformed, sizeof r->malformed, fmt, ap);
    va_end(ap);
    return false;
}

/* Live bytes of kind change from old to now (a block's size): checked, then applied. The
 * heap and the slots of live arenas together stay within MP_SUM_MAX, so that any sum of
 * live blocks and slots an analysis makes (a tensor's homes, say) does too. */
static bool live_change(mp_replay *r, const mp_event *ev, int kind, uint64_t old, uint64_t now)
{
    uint64_t live = r->live[kind], heap = r->heap, all = r->heap + r->slot_total;
    if (!mp_sum_replace(&live, old, now) ||
        (kind != MP_KIND_CONST &&
         (!mp_sum_replace(&heap, old, now) || !mp_sum_replace(&all, old, now))))
        return too_big(r, "%s of %" PRIu64 " bytes (block %" PRIu64 ") makes the live bytes "
                       "exceed 2^63-1", mp_ev_type_name(ev->type), ev->bytes, ev->id);
    r->live[kind] = live;
    r->heap = heap;
    return true;
}

static bool is_train_kind(uint8_t kind)
{
    return kind >= MP_KIND_TRAIN_ACTIVATION && kind < MP_KIND_COUNT;
}

/* Recompute the training slots' attribution for the innermost running operator: in each
 * live arena, the bytes of its training slots alive at that operator (at most the arena's
 * bytes, for a malformed plan), by category. */
static void attribute_train_slots(mp_replay *r)
{
    memset(r->attr, 0, sizeof r->attr);
    r->attr_total = 0;
    r->attr_op = r->pos.op;
    r->attr_dirty = false;
    if (r->n_train_slots == 0 || r->pos.op < 0)
        return;
    for (size_t a = 0; a < r->n_arenas; a++) {
        const mp_replay_arena *ar = &r->arenas[a].a;
        uint64_t room = ar->bytes;
        for (size_t i = 0; i < ar->n_slots && room > 0; i++) {
            const mp_replay_slot *sl = &ar->slots[i];
            if (!is_train_kind(sl->kind) || sl->op_first > r->pos.op || sl->op_last < r->pos.op)
                continue;
            uint64_t b = sl->bytes < room ? sl->bytes : room;
            room -= b;
            r->attr[sl->kind] += b;
            r->attr_total += b;
        }
    }
    /* the arenas are STATIC blocks: never move more than the static bytes live */
    if (r->attr_total > r->live[MP_KIND_STATIC]) {
        memset(r->attr, 0, sizeof r->attr);
        r->attr_total = 0;
    }
}

static bool is_arena_block(uint8_t kind, int32_t tensor, int32_t op)
{
    return kind == MP_KIND_STATIC && tensor < 0 && op < 0;
}

/* Register block at table slot i as a new arena. */
static bool arena_add(mp_replay *r, size_t i)
{
    if (!mp_grow((void **)&r->arenas, &r->cap_arenas, r->n_arenas, sizeof *r->arenas, 4))
        return false;
    arena_rec *ar = &r->arenas[r->n_arenas];
    memset(ar, 0, sizeof *ar);
    ar->a.id = r->tab[i].id;
    ar->a.bytes = r->tab[i].bytes;
    r->tab[i].arena = (int32_t)r->n_arenas;
    r->n_arenas++;
    return true;
}

/* Arena idx died with its block: keep its slots for the change, drop the record. */
static void arena_kill(mp_replay *r, int32_t idx, mp_replay_change *chg)
{
    arena_rec *ar = &r->arenas[idx];
    r->slot_total -= ar->slot_bytes;
    for (size_t i = 0; i < ar->a.n_slots; i++)
        if (is_train_kind(ar->a.slots[i].kind)) {
            r->n_train_slots--;
            r->attr_dirty = true;
        }
    free(r->dead);
    r->dead = ar->a.slots;
    chg->dead_slots = ar->a.slots;
    chg->n_dead_slots = ar->a.n_slots;
    free(ar->slot_of);
    size_t last = r->n_arenas - 1;
    if ((size_t)idx != last) {
        r->arenas[idx] = r->arenas[last];
        size_t j = tab_find(r, r->arenas[idx].a.id);
        if (j != SIZE_MAX)
            r->tab[j].arena = idx;
    }
    r->n_arenas--;
}

static void set_op_top(mp_replay *r)
{
    r->pos.op = r->n_ops ? r->ops[r->n_ops - 1] : -1;
}

static void close_phase(mp_replay *r, uint64_t end_ns, mp_replay_change *chg)
{
    chg->phase_ended = true;
    chg->ended.kind = r->pos.phase_kind;
    chg->ended.index = r->pos.phase;
    chg->ended.run = r->pos.run;
    chg->ended.begin_ns = r->phase_begin_ns;
    chg->ended.end_ns = end_ns;
    r->pos.phase_kind = -1;
    r->pos.phase = UINT32_MAX;
    r->pos.run = 0;
    r->n_ops = 0;
    set_op_top(r);
}

/* ---- events -------------------------------------------------------------------------- */

static bool do_alloc(mp_replay *r, const mp_event *ev, mp_replay_change *chg)
{
    if (ev->kind >= MP_KIND_COUNT) {
        anomaly(r, chg, "allocation of block %" PRIu64 " with unknown kind %u", ev->id,
                (unsigned)ev->kind);
        return true;
    }
    if (tab_find(r, ev->id) != SIZE_MAX) {
        anomaly(r, chg, "allocation of block %" PRIu64 ", which is already live", ev->id);
        return true;
    }
    if (!live_change(r, ev, ev->kind, 0, ev->bytes) || !tab_reserve(r)) {
        if (!r->malformed[0])
            live_change(r, ev, ev->kind, ev->bytes, 0); /* out of memory: undo */
        return false;
    }
    bool arena = is_arena_block(ev->kind, ev->tensor, ev->op);
    /* Grow the arena table first so that a failure leaves the state unchanged. */
    if (arena && !mp_grow((void **)&r->arenas, &r->cap_arenas, r->n_arenas, sizeof *r->arenas, 4)) {
        live_change(r, ev, ev->kind, ev->bytes, 0); /* undo */
        return false;
    }
    mp_replay_block b = {
        .id = ev->id,
        .bytes = ev->bytes,
        .seq = r->pos.event,
        .tensor = ev->tensor,
        .op = ev->op,
        .arena = -1,
        .kind = ev->kind,
    };
    tab_put(r->tab, r->used, r->cap, &b);
    r->count++;
    if (arena)
        arena_add(r, tab_find(r, ev->id)); /* cannot fail: room reserved above */
    chg->what = MP_REPLAY_ALLOC;
    chg->block = r->tab[tab_find(r, ev->id)];
    return true;
}

static bool do_free(mp_replay *r, const mp_event *ev, mp_replay_change *chg)
{
    size_t i = tab_find(r, ev->id);
    if (i == SIZE_MAX) {
        anomaly(r, chg, "free of unknown block %" PRIu64, ev->id);
        return true;
    }
    mp_replay_block b = r->tab[i];
    r->live[b.kind] -= b.bytes;
    if (b.kind != MP_KIND_CONST)
        r->heap -= b.bytes;
    tab_remove_at(r, i);
    if (b.arena >= 0)
        arena_kill(r, b.arena, chg);
    b.arena = -1;
    chg->what = MP_REPLAY_FREE;
    chg->block = b;
    return true;
}

static bool do_realloc(mp_replay *r, const mp_event *ev, mp_replay_change *chg)
{
    size_t i = tab_find(r, ev->id);
    if (i == SIZE_MAX) {
        if (!do_alloc(r, ev, chg))
            return false;
        anomaly(r, chg, "reallocation of unknown block %" PRIu64 " (counted as allocated)",
                ev->id);
        return true;
    }
    mp_replay_block *b = &r->tab[i];
    uint64_t old = b->bytes;
    if (!live_change(r, ev, b->kind, old, ev->bytes))
        return false;
    b->bytes = ev->bytes;
    if (b->arena >= 0)
        r->arenas[b->arena].a.bytes = ev->bytes;
    chg->what = MP_REPLAY_REALLOC;
    chg->block = *b;
    chg->old_bytes = old;
    return true;
}

static bool do_plan(mp_replay *r, const mp_event *ev, mp_replay_change *chg)
{
    size_t i = tab_find(r, ev->id);
    if (i == SIZE_MAX) {
        anomaly(r, chg, "plan of tensor %" PRId32 " into arena %" PRIu64 ", which is not live",
                ev->tensor, ev->id);
        return true;
    }
    bool scratch = ev->tensor == -1 && ev->kind == MP_KIND_SCRATCH;
    if (scratch && ev->op < 0) {
        anomaly(r, chg, "plan of scratch of no operator");
        return true;
    }
    if (!scratch && (ev->tensor < 0 || (r->n_tensors > 0 && ev->tensor >= r->n_tensors))) {
        anomaly(r, chg, "plan of tensor %" PRId32 ", out of range", ev->tensor);
        return true;
    }
    uint64_t end;
    if (__builtin_add_overflow(ev->aux, ev->bytes, &end) || end > MP_SUM_MAX)
        return too_big(r, "plan of %" PRIu64 " bytes at offset %" PRIu64 " ends beyond 2^63-1",
                       ev->bytes, ev->aux);
    if (r->tab[i].arena < 0 && !arena_add(r, i))
        return false;
    arena_rec *ar = &r->arenas[r->tab[i].arena];
    if (r->n_tensors > 0 && !ar->slot_of) {
        ar->slot_of = malloc((size_t)r->n_tensors * sizeof *ar->slot_of);
        if (!ar->slot_of)
            return false;
        for (int32_t t = 0; t < r->n_tensors; t++)
            ar->slot_of[t] = -1;
    }
    size_t at = SIZE_MAX;
    uint64_t slot_bytes = ar->slot_bytes;
    if (scratch) { /* an operator's scratch: few per arena, found by its operator */
        for (size_t s = 0; s < ar->a.n_slots; s++)
            if (ar->a.slots[s].tensor == -1 && ar->a.slots[s].op_first == ev->op)
                at = s;
    } else if (ar->slot_of) {
        if (ar->slot_of[ev->tensor] >= 0)
            at = (size_t)ar->slot_of[ev->tensor];
    } else {
        for (size_t s = 0; s < ar->a.n_slots; s++)
            if (ar->a.slots[s].tensor == ev->tensor)
                at = s;
    }
    uint64_t old = at == SIZE_MAX ? 0 : ar->a.slots[at].bytes;
    uint64_t all = r->heap + r->slot_total;
    if (!mp_sum_replace(&slot_bytes, old, ev->bytes) || !mp_sum_replace(&all, old, ev->bytes))
        return too_big(r, "plan of %" PRIu64 " bytes (arena %" PRIu64 ") makes the live and "
                       "planned bytes exceed 2^63-1", ev->bytes, ev->id);
    if (at == SIZE_MAX) {
        if (!mp_grow((void **)&ar->a.slots, &ar->cap, ar->a.n_slots, sizeof *ar->a.slots, 16))
            return false;
        at = ar->a.n_slots++;
        if (ar->slot_of && !scratch)
            ar->slot_of[ev->tensor] = (int32_t)at;
    } else {
        chg->replaced = true;
        chg->old_slot = ar->a.slots[at];
        if (is_train_kind(chg->old_slot.kind)) {
            r->n_train_slots--;
            r->attr_dirty = true;
        }
    }
    mp_replay_slot s = {
        .tensor = ev->tensor,
        .op_first = ev->op,
        .op_last = ev->op_last,
        .offset = ev->aux,
        .bytes = ev->bytes,
        .seq = r->pos.event,
        /* a training tensor's slot keeps its category (memprof train) */
        .kind = scratch                                 ? MP_KIND_SCRATCH
                : ev->kind >= MP_KIND_TRAIN_ACTIVATION &&
                          ev->kind < MP_KIND_COUNT ? ev->kind
                                                   : MP_KIND_STATIC,
    };
    ar->a.slots[at] = s;
    if (is_train_kind(s.kind)) {
        r->n_train_slots++;
        r->attr_dirty = true;
    }
    ar->slot_bytes = slot_bytes;
    r->slot_total = r->slot_total - old + ev->bytes;
    chg->what = MP_REPLAY_PLAN;
    chg->arena_id = ev->id;
    chg->slot = s;
    return true;
}

static bool push_op(mp_replay *r, int32_t op)
{
    if (!mp_grow((void **)&r->ops, &r->cap_ops, r->n_ops, sizeof *r->ops, 8))
        return false;
    r->ops[r->n_ops++] = op;
    set_op_top(r);
    return true;
}

bool mp_replay_step(mp_replay *r, const mp_event *ev, mp_replay_change *chg)
{
    mp_replay_change local;
    if (!chg)
        chg = &local;
    memset(chg, 0, sizeof *chg);
    mp_replay_pos saved = r->pos;
    r->malformed[0] = '\0';
    r->pos.event = (r->pos.event == SIZE_MAX) ? 0 : r->pos.event + 1;
    r->pos.t_ns = ev->t_ns;
    bool ok = true;

    switch (ev->type) {
    case MP_EV_ALLOC:
        ok = do_alloc(r, ev, chg);
        break;
    case MP_EV_FREE:
        ok = do_free(r, ev, chg);
        break;
    case MP_EV_REALLOC:
        ok = do_realloc(r, ev, chg);
        break;
    case MP_EV_PLAN:
        ok = do_plan(r, ev, chg);
        break;
    case MP_EV_COPY:
        chg->what = MP_REPLAY_COPY;
        break;
    case MP_EV_PHASE_BEGIN: {
        uint64_t index = r->n_phase_begins++;
        if (ev->aux >= MP_PHASE_KIND_COUNT) {
            anomaly(r, chg, "phase of unknown kind %" PRIu64, ev->aux);
            break;
        }
        if (r->pos.phase_kind >= 0) {
            anomaly(r, chg, "phase begins while phase %" PRIu32 " is open", r->pos.phase);
            close_phase(r, ev->t_ns, chg);
        }
        chg->what = MP_REPLAY_PHASE_BEGIN;
        r->pos.phase_kind = (int32_t)ev->aux;
        r->pos.phase = index >= UINT32_MAX ? UINT32_MAX - 1 : (uint32_t)index;
        r->pos.run = ev->aux == MP_PHASE_RUN ? ev->id : 0;
        r->phase_begin_ns = ev->t_ns;
        r->n_ops = 0;
        set_op_top(r);
        break;
    }
    case MP_EV_PHASE_END:
        if (r->pos.phase_kind < 0) {
            anomaly(r, chg, "phase end with no phase open");
            break;
        }
        chg->what = MP_REPLAY_PHASE_END;
        close_phase(r, ev->t_ns, chg);
        break;
    case MP_EV_OP_BEGIN:
        ok = push_op(r, ev->op);
        if (ok)
            chg->what = MP_REPLAY_OP_BEGIN;
        break;
    case MP_EV_OP_END: {
        size_t k = r->n_ops;
        while (k > 0 && r->ops[k - 1] != ev->op)
            k--;
        if (k == 0) {
            anomaly(r, chg, "end of operator %" PRId32 ", which is not running", ev->op);
            break;
        }
        r->n_ops = k - 1;
        set_op_top(r);
        chg->what = MP_REPLAY_OP_END;
        break;
    }
    case MP_EV_RSS:
        chg->what = MP_REPLAY_RSS;
        break;
    default:
        anomaly(r, chg, "unknown event type %u", (unsigned)ev->type);
        break;
    }
    if (!ok) {
        r->pos = saved;
        memset(chg, 0, sizeof *chg);
    }
    if (r->attr_dirty || r->attr_op != r->pos.op || chg->what == MP_REPLAY_FREE ||
        chg->what == MP_REPLAY_REALLOC)
        if (r->n_train_slots > 0 || r->attr_total > 0)
            attribute_train_slots(r);
    return ok;
}

mp_status mp_replay_fail(const mp_replay *r, const char *source, const char *who,
                         mp_error *err)
{
    size_t at = r->pos.event == SIZE_MAX ? 0 : r->pos.event + 1; /* the step not applied */
    if (r->malformed[0])
        return mp_fail(err, MP_ERR_FORMAT, "%s: event %zu: %s", source, at, r->malformed);
    return mp_fail(err, MP_ERR_NOMEM, "%s: out of memory at event %zu", who, at);
}

bool mp_replay_finish(mp_replay *r, mp_replay_change *chg)
{
    mp_replay_change local;
    if (!chg)
        chg = &local;
    memset(chg, 0, sizeof *chg);
    if (r->pos.phase_kind < 0)
        return false;
    chg->what = MP_REPLAY_PHASE_END;
    close_phase(r, r->pos.t_ns, chg);
    return true;
}

/* ---- lifecycle and state ------------------------------------------------------------- */

mp_replay *mp_replay_create(int32_t n_tensors)
{
    mp_replay *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->n_tensors = n_tensors > 0 ? n_tensors : 0;
    r->pos.event = SIZE_MAX;
    r->pos.phase_kind = -1;
    r->pos.phase = UINT32_MAX;
    r->pos.op = -1;
    r->attr_op = -1;
    return r;
}

void mp_replay_destroy(mp_replay *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_arenas; i++) {
        free(r->arenas[i].a.slots);
        free(r->arenas[i].slot_of);
    }
    free(r->arenas);
    free(r->dead);
    free(r->tab);
    free(r->used);
    free(r->ops);
    free(r);
}

const mp_replay_pos *mp_replay_where(const mp_replay *r)
{
    return &r->pos;
}

uint64_t mp_replay_heap(const mp_replay *r)
{
    return r->heap;
}

uint64_t mp_replay_live(const mp_replay *r, int kind)
{
    if (kind < 0 || kind >= MP_KIND_COUNT)
        return 0;
    if (kind == MP_KIND_STATIC)
        return r->live[kind] - r->attr_total;
    return r->live[kind] + r->attr[kind];
}

uint64_t mp_replay_phase_begin_ns(const mp_replay *r)
{
    return r->phase_begin_ns;
}

size_t mp_replay_n_blocks(const mp_replay *r)
{
    return r->count;
}

const mp_replay_block *mp_replay_find(const mp_replay *r, uint64_t id)
{
    size_t i = tab_find(r, id);
    return i == SIZE_MAX ? NULL : &r->tab[i];
}

const mp_replay_block *mp_replay_next_block(const mp_replay *r, size_t *cursor)
{
    for (size_t i = *cursor; i < r->cap; i++) {
        if (r->used[i]) {
            *cursor = i + 1;
            return &r->tab[i];
        }
    }
    *cursor = r->cap;
    return NULL;
}

size_t mp_replay_n_arenas(const mp_replay *r)
{
    return r->n_arenas;
}

const mp_replay_arena *mp_replay_arena_at(const mp_replay *r, size_t i)
{
    return i < r->n_arenas ? &r->arenas[i].a : NULL;
}

uint64_t mp_replay_n_anomalies(const mp_replay *r)
{
    return r->n_anomalies;
}

const char *mp_replay_first_anomaly(const mp_replay *r)
{
    return r->anomaly;
}
