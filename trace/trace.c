/* The in-memory trace recorder (see trace.h): an event buffer that grows geometrically,
 * the model's names, and the current phase.
 *
 * The recorder's memory is the profiler's overhead, not the engine's, and
 * mp_trace_memory() reports it. The event buffer is mapped directly (mmap, grown with
 * mremap) rather than taken from malloc, so that a heap measurement of the process (the
 * "unaccounted" check of memprof run) does not see the recorder growing; its pages become
 * resident a little ahead of the events that fill them (POPULATE_AHEAD bytes at a time, in
 * one call, so that a run does not take a page fault every 73 events).
 *
 * Reading the clock is most of what an event costs (about 25 ns; a run of a model of a few
 * small operators is a few hundred): an operator's begin mark that directly follows the
 * previous operator's end mark, or its phase's begin, takes that event's time, and so does a
 * phase's end that directly follows an operator's end (see mp_trace_op_mark). */
#include "trace/trace.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define INITIAL_EVENTS 65536
#define POPULATE_AHEAD ((size_t)64 << 10) /* bytes of the buffer made resident at once */

struct mp_trace {
    mp_event *ev;
    size_t n, cap;
    bool enabled;
    bool truncated;
    uint64_t t0;
    uint32_t phase;      /* current phase instance, UINT32_MAX before the first */
    uint32_t n_phases;
    size_t meta_heap;    /* bytes requested from malloc for the metadata, live */
    mp_trace_meta meta;
    mp_trace_scope scope; /* the subgraph recording (mp_trace_set_scope) */
    size_t resident;      /* bytes at the buffer's start known resident (populated ahead) */
};

/* The metadata's heap allocations, counted so that a heap measurement of the process can
 * tell the recorder's bytes from the engine's. */
static void *meta_calloc(mp_trace *tr, size_t n, size_t size)
{
    void *p = calloc(n, size);
    if (p)
        tr->meta_heap += n * size;
    return p;
}

static void meta_free(mp_trace *tr, void *p, size_t bytes)
{
    if (p) {
        tr->meta_heap -= bytes;
        free(p);
    }
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

mp_trace *mp_trace_create(void)
{
    mp_trace *tr = calloc(1, sizeof *tr);
    if (!tr)
        return NULL;
    void *p = mmap(NULL, sizeof(mp_event) * INITIAL_EVENTS, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        free(tr);
        return NULL;
    }
    tr->ev = p;
    tr->cap = INITIAL_EVENTS;
    tr->enabled = true;
    tr->t0 = now_ns();
    tr->phase = UINT32_MAX;
    tr->meta.threads = 1;
    tr->meta.process_heap_peak = -1;
    tr->meta.allocator_overhead = -1;
    tr->meta.process_heap_base = -1;
    return tr;
}

static void free_str(mp_trace *tr, char **s)
{
    if (*s)
        meta_free(tr, *s, strlen(*s) + 1);
    *s = NULL;
}

static void free_tables(mp_trace *tr)
{
    mp_trace_meta *m = &tr->meta;
    for (int32_t i = 0; i < m->n_tensors; i++)
        free_str(tr, &m->tensors[i].name);
    for (int32_t i = 0; i < m->n_ops; i++) {
        free_str(tr, &m->ops[i].name);
        meta_free(tr, m->ops[i].inputs, sizeof(int32_t) * ((size_t)m->ops[i].n_inputs + 1));
        meta_free(tr, m->ops[i].outputs, sizeof(int32_t) * ((size_t)m->ops[i].n_outputs + 1));
    }
    if (m->tensors) {
        meta_free(tr, m->tensors, sizeof *m->tensors * ((size_t)m->n_tensors + 1));
        meta_free(tr, m->ops, sizeof *m->ops * ((size_t)m->n_ops + 1));
        meta_free(tr, m->inputs, sizeof *m->inputs * ((size_t)m->n_inputs + 1));
        meta_free(tr, m->outputs, sizeof *m->outputs * ((size_t)m->n_outputs + 1));
    }
    m->tensors = NULL;
    m->ops = NULL;
    m->inputs = m->outputs = NULL;
    m->n_tensors = m->n_ops = m->n_inputs = m->n_outputs = 0;
}

void mp_trace_destroy(mp_trace *tr)
{
    if (!tr)
        return;
    mp_trace_set_models(tr, 0, NULL);
    free_tables(tr);
    free_str(tr, &tr->meta.model);
    free_str(tr, &tr->meta.mode);
    free_str(tr, &tr->meta.planner);
    munmap(tr->ev, tr->cap * sizeof(mp_event));
    free(tr);
}

void mp_trace_set_enabled(mp_trace *tr, bool on)
{
    tr->enabled = on;
}

bool mp_trace_enabled(const mp_trace *tr)
{
    return tr && tr->enabled && !tr->truncated;
}

size_t mp_trace_count(const mp_trace *tr)
{
    return tr->n;
}

const mp_event *mp_trace_events(const mp_trace *tr)
{
    return tr->ev;
}

const mp_trace_meta *mp_trace_get_meta(const mp_trace *tr)
{
    return &tr->meta;
}

mp_trace_meta *mp_trace_meta_mut(mp_trace *tr)
{
    return &tr->meta;
}

size_t mp_trace_memory(const mp_trace *tr)
{
    return sizeof *tr + tr->cap * sizeof(mp_event) + tr->meta_heap;
}

size_t mp_trace_meta_heap(const mp_trace *tr)
{
    return tr->meta_heap;
}

bool mp_trace_set_models(mp_trace *tr, int32_t n, const mp_trace_model *models)
{
    mp_trace_meta *m = &tr->meta;
    for (int32_t k = 0; k < m->n_models; k++)
        free_str(tr, &m->models[k].name);
    if (m->models)
        meta_free(tr, m->models, sizeof *m->models * ((size_t)m->n_models + 1));
    m->models = NULL;
    m->n_models = 0;
    if (n <= 0)
        return true;
    m->models = meta_calloc(tr, (size_t)n + 1, sizeof *m->models);
    if (!m->models)
        return false;
    m->n_models = n;
    for (int32_t k = 0; k < n; k++) {
        m->models[k] = models[k];
        m->models[k].name = NULL;
        if (!mp_trace_set_str(tr, &m->models[k].name, models[k].name))
            return false;
    }
    return true;
}

int32_t mp_trace_event_model(const mp_trace_meta *m, const mp_event *e)
{
    for (int32_t k = 0; k < m->n_models; k++) {
        const mp_trace_model *x = &m->models[k];
        if ((e->tensor >= x->first_tensor && e->tensor - x->first_tensor < x->n_tensors) ||
            (e->op >= x->first_op && e->op - x->first_op < x->n_ops))
            return k;
        bool block = e->type == MP_EV_ALLOC || e->type == MP_EV_FREE || e->type == MP_EV_REALLOC;
        if (block && e->id > x->first_id && e->id - x->first_id <= x->n_ids)
            return k;
    }
    return -1;
}

bool mp_trace_set_str(mp_trace *tr, char **field, const char *value)
{
    char *c = NULL;
    if (value) {
        size_t n = strlen(value) + 1;
        c = meta_calloc(tr, n, 1);
        if (!c)
            return false;
        memcpy(c, value, n);
    }
    free_str(tr, field);
    *field = c;
    return true;
}

void mp_trace_set_shares(mp_trace *tr, int32_t tensor, int32_t root)
{
    mp_trace_meta *m = &tr->meta;
    int64_t t = (int64_t)tensor + tr->scope.tensor_base, r = (int64_t)root + tr->scope.tensor_base;
    if (tensor < 0 || root < 0 || t == r || t >= m->n_tensors || r >= m->n_tensors)
        return;
    m->tensors[t].in_place = true;
    m->tensors[t].shares = (int32_t)r;
}

bool mp_trace_set_op(mp_trace *tr, int32_t i, const char *name, int32_t n_inputs,
                     const int32_t *inputs, int32_t n_outputs, const int32_t *outputs)
{
    mp_trace_meta *m = &tr->meta;
    if (i < 0 || i >= m->n_ops || n_inputs < 0 || n_outputs < 0)
        return false;
    mp_trace_op *o = &m->ops[i];
    free_str(tr, &o->name);
    meta_free(tr, o->inputs, sizeof(int32_t) * ((size_t)o->n_inputs + 1));
    meta_free(tr, o->outputs, sizeof(int32_t) * ((size_t)o->n_outputs + 1));
    o->n_inputs = o->n_outputs = 0;
    o->inputs = meta_calloc(tr, (size_t)n_inputs + 1, sizeof(int32_t));
    o->outputs = meta_calloc(tr, (size_t)n_outputs + 1, sizeof(int32_t));
    if (!o->inputs || !o->outputs || !mp_trace_set_str(tr, &o->name, name)) {
        meta_free(tr, o->inputs, sizeof(int32_t) * ((size_t)n_inputs + 1));
        meta_free(tr, o->outputs, sizeof(int32_t) * ((size_t)n_outputs + 1));
        o->inputs = o->outputs = NULL;
        return false;
    }
    o->n_inputs = n_inputs;
    o->n_outputs = n_outputs;
    if (n_inputs)
        memcpy(o->inputs, inputs, sizeof(int32_t) * (size_t)n_inputs);
    if (n_outputs)
        memcpy(o->outputs, outputs, sizeof(int32_t) * (size_t)n_outputs);
    return true;
}

bool mp_trace_alloc_tables(mp_trace *tr, int32_t n_tensors, int32_t n_ops, int32_t n_inputs,
                           int32_t n_outputs)
{
    mp_trace_meta *m = &tr->meta;
    free_tables(tr);
    if (n_tensors < 0 || n_ops < 0 || n_inputs < 0 || n_outputs < 0)
        return false;
    m->tensors = meta_calloc(tr, (size_t)n_tensors + 1, sizeof *m->tensors);
    m->ops = meta_calloc(tr, (size_t)n_ops + 1, sizeof *m->ops);
    m->inputs = meta_calloc(tr, (size_t)n_inputs + 1, sizeof *m->inputs);
    m->outputs = meta_calloc(tr, (size_t)n_outputs + 1, sizeof *m->outputs);
    if (!m->tensors || !m->ops || !m->inputs || !m->outputs) {
        meta_free(tr, m->tensors, sizeof *m->tensors * ((size_t)n_tensors + 1));
        meta_free(tr, m->ops, sizeof *m->ops * ((size_t)n_ops + 1));
        meta_free(tr, m->inputs, sizeof *m->inputs * ((size_t)n_inputs + 1));
        meta_free(tr, m->outputs, sizeof *m->outputs * ((size_t)n_outputs + 1));
        m->tensors = NULL;
        m->ops = NULL;
        m->inputs = m->outputs = NULL;
        return false;
    }
    m->n_tensors = n_tensors;
    m->n_ops = n_ops;
    m->n_inputs = n_inputs;
    m->n_outputs = n_outputs;
    return true;
}

/* Slow path: double the buffer. On failure recording stops for good (truncated). */
static bool grow(mp_trace *tr)
{
    size_t cap = tr->cap * 2;
    void *e = cap > tr->cap && cap < SIZE_MAX / sizeof(mp_event)
                  ? mremap(tr->ev, tr->cap * sizeof(mp_event), cap * sizeof(mp_event),
                           MREMAP_MAYMOVE)
                  : MAP_FAILED;
    if (e == MAP_FAILED) {
        tr->truncated = true;
        return false;
    }
    tr->ev = e;
    tr->cap = cap;
    return true;
}

/* Make the next POPULATE_AHEAD bytes of the buffer resident in one call (no fault per page).
 * Where the kernel cannot (before Linux 5.14), the pages fault in one by one as before. */
static void populate_ahead(mp_trace *tr, size_t end)
{
    size_t cap = tr->cap * sizeof(mp_event), page = 4096;
    size_t from = tr->resident & ~(page - 1);
    size_t to = (end + POPULATE_AHEAD + page - 1) & ~(page - 1);
    if (end >= cap - (cap < POPULATE_AHEAD + page ? cap : POPULATE_AHEAD + page) || to > cap)
        to = cap;
    if (to > from) {
#ifdef MADV_POPULATE_WRITE
        madvise((char *)tr->ev + from, to - from, MADV_POPULATE_WRITE);
#endif
        tr->resident = to;
    }
}

bool mp_trace_append_raw(mp_trace *tr, const mp_event *ev)
{
    if (tr->n == tr->cap && !grow(tr))
        return false;
    size_t end = (tr->n + 1) * sizeof(mp_event);
    if (end > tr->resident)
        populate_ahead(tr, end);
    tr->ev[tr->n++] = *ev;
    return true;
}

/* The time of the event before, for an operator's begin right after the operator before it
 * ended (or its phase began) and for a phase's end right after an operator's: 0 otherwise. */
static uint64_t shared_time(const mp_trace *tr, int type)
{
    if (tr->n == 0)
        return 0;
    int last = tr->ev[tr->n - 1].type;
    if (type == MP_EV_OP_BEGIN && (last == MP_EV_OP_END || last == MP_EV_PHASE_BEGIN))
        return tr->ev[tr->n - 1].t_ns;
    if (type == MP_EV_PHASE_END && last == MP_EV_OP_END)
        return tr->ev[tr->n - 1].t_ns;
    return 0;
}

bool mp_trace_add(mp_trace *tr, mp_event ev)
{
    if (!tr->enabled || tr->truncated)
        return true;
    if (ev.t_ns == 0)
        ev.t_ns = shared_time(tr, ev.type);
    if (ev.t_ns == 0)
        ev.t_ns = now_ns() - tr->t0;
    ev.phase = tr->phase;
    if (ev.tensor >= 0)
        ev.tensor += tr->scope.tensor_base;
    if (ev.op >= 0)
        ev.op += tr->scope.op_base;
    if (ev.op_last >= 0)
        ev.op_last += tr->scope.op_base;
    if (ev.type == MP_EV_OP_BEGIN || ev.type == MP_EV_OP_END)
        ev.aux = tr->scope.iteration;
    return mp_trace_append_raw(tr, &ev);
}

mp_trace_scope mp_trace_set_scope(mp_trace *tr, mp_trace_scope scope)
{
    if (!tr)
        return (mp_trace_scope){0, 0, 0};
    mp_trace_scope was = tr->scope;
    tr->scope = scope;
    return was;
}

void mp_trace_mark_truncated(mp_trace *tr)
{
    tr->truncated = true;
}

bool mp_trace_truncated(const mp_trace *tr)
{
    return tr->truncated;
}

static mp_event blank(int type)
{
    mp_event e;
    memset(&e, 0, sizeof e);
    e.type = (uint8_t)type;
    e.tensor = e.op = e.op_last = -1;
    return e;
}

void mp_trace_phase_begin(mp_trace *tr, mp_phase_kind kind, uint64_t run)
{
    if (!tr || !tr->enabled)
        return;
    tr->phase = tr->n_phases++;
    mp_event e = blank(MP_EV_PHASE_BEGIN);
    e.aux = (uint64_t)kind;
    e.id = run;
    mp_trace_add(tr, e);
}

void mp_trace_phase_end(mp_trace *tr)
{
    if (!tr || !tr->enabled)
        return;
    mp_trace_add(tr, blank(MP_EV_PHASE_END));
}

uint32_t mp_trace_current_phase(const mp_trace *tr)
{
    return tr->phase;
}

void mp_trace_op_mark(mp_trace *tr, int type, int32_t op)
{
    if (!tr || !tr->enabled)
        return;
    mp_event e = blank(type);
    e.op = op;
    mp_trace_add(tr, e);
}

static void plan_event(mp_trace *tr, uint8_t kind, uint64_t arena_id, int32_t tensor,
                       uint64_t offset, uint64_t bytes, int32_t first, int32_t last)
{
    if (!tr || !tr->enabled)
        return;
    mp_event e = blank(MP_EV_PLAN);
    e.kind = kind;
    e.id = arena_id;
    e.tensor = tensor;
    e.aux = offset;
    e.bytes = bytes;
    e.op = first;
    e.op_last = last;
    mp_trace_add(tr, e);
}

void mp_trace_plan(mp_trace *tr, uint64_t arena_id, int32_t tensor, uint64_t offset,
                   uint64_t bytes, int32_t first, int32_t last)
{
    plan_event(tr, MP_KIND_STATIC, arena_id, tensor, offset, bytes, first, last);
}

void mp_trace_plan_scratch(mp_trace *tr, uint64_t arena_id, int32_t op, uint64_t offset,
                           uint64_t bytes)
{
    plan_event(tr, MP_KIND_SCRATCH, arena_id, -1, offset, bytes, op, op);
}

void mp_trace_copy(mp_trace *tr, int32_t tensor, uint64_t bytes, int direction)
{
    if (!tr || !tr->enabled)
        return;
    mp_event e = blank(MP_EV_COPY);
    e.tensor = tensor;
    e.bytes = bytes;
    e.aux = (uint64_t)direction;
    mp_trace_add(tr, e);
}

void mp_trace_rss(mp_trace *tr, uint64_t rss, uint64_t hwm)
{
    if (!tr || !tr->enabled)
        return;
    mp_event e = blank(MP_EV_RSS);
    e.bytes = rss;
    e.aux = hwm;
    mp_trace_add(tr, e);
}

const char *mp_ev_type_name(int type)
{
    static const char *names[MP_EV_TYPE_COUNT] = {"alloc",       "free",      "realloc",
                                                  "plan",        "copy",      "phase_begin",
                                                  "phase_end",   "op_begin",  "op_end",
                                                  "rss"};
    return type >= 0 && type < MP_EV_TYPE_COUNT ? names[type] : "?";
}

const char *mp_phase_kind_name(int kind)
{
    static const char *names[MP_PHASE_KIND_COUNT] = {"load", "prepare", "shape",
                                                     "io",   "run",     "teardown"};
    return kind >= 0 && kind < MP_PHASE_KIND_COUNT ? names[kind] : "?";
}

const char *mp_kind_name(int kind)
{
    static const char *names[MP_KIND_COUNT] = {"const",  "static", "dynamic", "scratch",
                                               "kernel", "io",     "engine",
                                               [MP_KIND_VARIABLE] = "variable",
    [MP_KIND_TRAIN_ACTIVATION] = "activation", [MP_KIND_TRAIN_TRAINABLE] = "trainable",
    [MP_KIND_TRAIN_BACKPROP] = "backprop", [MP_KIND_TRAIN_GRADIENT] = "gradient",
    [MP_KIND_TRAIN_OPTIMIZER] = "optimizer", [MP_KIND_TRAIN_DISPOSABLE] = "disposable",
    [MP_KIND_TRAIN_EXTRA] = "extra"};
    return kind >= 0 && kind < MP_KIND_COUNT && names[kind] ? names[kind] : "?";
}
