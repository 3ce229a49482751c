/* JSON of a profile and of a diff (see json_profile.h; fields documented in docs/json.md).
 * Every value goes through put()/push(), which remember a failed allocation, so a document
 * is either complete or not returned at all. */
#include "reports/json_profile.h"

#include <stdlib.h>
#include <string.h>

typedef struct jb {
    bool ok;
} jb;

static void put(jb *b, json_t *obj, const char *key, json_t *v)
{
    if (!v || !obj || json_object_set_new(obj, key, v) != 0)
        b->ok = false;
}

static void push(jb *b, json_t *arr, json_t *v)
{
    if (!v || !arr || json_array_append_new(arr, v) != 0)
        b->ok = false;
}

static json_t *ju(uint64_t v)
{
    return json_integer(v > (uint64_t)INT64_MAX ? INT64_MAX : (json_int_t)v);
}

static json_t *ji(int64_t v)
{
    return json_integer((json_int_t)v);
}

/* An index or number where a negative value means "none": null then. */
static json_t *jopt(int64_t v)
{
    return v < 0 ? json_null() : json_integer((json_int_t)v);
}

/* A name: null when absent; bytes that are not UTF-8 become '?'. */
static json_t *jname(const char *s)
{
    if (!s)
        return json_null();
    json_t *j = json_string(s);
    if (j)
        return j;
    size_t n = strlen(s);
    char *c = malloc(n + 1);
    if (!c)
        return NULL;
    /* keep well-formed sequences of 1-4 bytes, replace every other byte */
    const unsigned char *p = (const unsigned char *)s;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        size_t len = p[i] < 0x80 ? 1 : (p[i] >> 5) == 6 ? 2 : (p[i] >> 4) == 14 ? 3
                                     : (p[i] >> 3) == 30 ? 4 : 0;
        bool good = len > 0 && i + len <= n;
        for (size_t k = 1; good && k < len; k++)
            good = (p[i + k] & 0xC0) == 0x80;
        if (good) {
            memcpy(c + o, p + i, len);
            o += len;
            i += len;
        } else {
            c[o++] = '?';
            i++;
        }
    }
    c[o] = '\0';
    j = json_string(c);
    if (!j) {
        /* overlong forms or surrogates: ASCII only */
        for (size_t i = 0; i < o; i++)
            if ((unsigned char)c[i] >= 0x80)
                c[i] = '?';
        j = json_string(c);
    }
    free(c);
    return j;
}

static json_t *jstr(const char *s)
{
    return s ? json_string(s) : json_null();
}

static const char *kind_key(int k)
{
    static const char *names[MP_KIND_COUNT] = {"const",  "static", "dynamic", "scratch",
                                               "kernel", "io",     "engine",
                                               [MP_KIND_VARIABLE] = "variable",
    [MP_KIND_TRAIN_ACTIVATION] = "activation", [MP_KIND_TRAIN_TRAINABLE] = "trainable",
    [MP_KIND_TRAIN_BACKPROP] = "backprop", [MP_KIND_TRAIN_GRADIENT] = "gradient",
    [MP_KIND_TRAIN_OPTIMIZER] = "optimizer", [MP_KIND_TRAIN_DISPOSABLE] = "disposable",
    [MP_KIND_TRAIN_EXTRA] = "extra"};
    return k >= 0 && k < MP_KIND_COUNT && names[k] ? names[k] : "?";
}

static const char *phase_key(int k)
{
    static const char *names[MP_PHASE_KIND_COUNT] = {"load", "prepare", "shape",
                                                     "io",   "run",     "teardown"};
    return k >= 0 && k < MP_PHASE_KIND_COUNT ? names[k] : NULL;
}

static json_t *jphase(int k)
{
    return jstr(phase_key(k));
}

/* {"const":N, "static":N, ...} */
static json_t *kinds(jb *b, const uint64_t *v)
{
    json_t *o = json_object();
    for (int k = 0; k < MP_KIND_COUNT; k++)
        put(b, o, kind_key(k), ju(v[k]));
    return o;
}

/* ---- summary ------------------------------------------------------------------------ */

static json_t *when(jb *b, const mp_summary_when *w)
{
    if (w->event < 0)
        return json_null();
    json_t *o = json_object();
    put(b, o, "event", ji(w->event));
    put(b, o, "t_ns", ju(w->t_ns));
    put(b, o, "phase", jphase(w->phase_kind));
    put(b, o, "phase_index", w->phase == UINT32_MAX ? json_null() : ju(w->phase));
    put(b, o, "run", w->run ? ju(w->run) : json_null());
    put(b, o, "op", jopt(w->op));
    put(b, o, "op_name", jname(w->op_name));
    return o;
}

static json_t *run_figures(jb *b, const mp_summary_run *r, bool with_run)
{
    json_t *o = json_object();
    if (with_run)
        put(b, o, "run", ju(r->run));
    put(b, o, "t_ns", ju(r->t_ns));
    put(b, o, "n_alloc", ju(r->n_alloc));
    put(b, o, "alloc_bytes", ju(r->bytes_alloc));
    put(b, o, "n_free", ju(r->n_free));
    put(b, o, "freed_bytes", ju(r->bytes_freed));
    return o;
}

static const char *home_key(mp_summary_home h)
{
    switch (h) {
    case MP_SUMMARY_BLOCK:
        return "block";
    case MP_SUMMARY_SLOT:
        return "slot";
    case MP_SUMMARY_OP_BUFFERS:
        return "op_buffers";
    case MP_SUMMARY_OWNERLESS:
        return "ownerless";
    case MP_SUMMARY_ARENA_FREE:
        return "arena_free";
    case MP_SUMMARY_ARENA:
        return "arena";
    case MP_SUMMARY_SCRATCH:
        return "scratch";
    }
    return "?";
}

static json_t *summary_json(jb *b, const mp_profile *p)
{
    const mp_summary *s = &p->summary;
    const mp_trace_meta *m = p->meta;
    json_t *o = json_object();

    json_t *time = json_object();
    json_t *ph = json_object();
    for (int k = 0; k < MP_PHASE_KIND_COUNT; k++) {
        json_t *e = json_object();
        put(b, e, "time_ns", ju(s->phase_ns[k]));
        put(b, e, "count", ju(s->phase_count[k]));
        put(b, ph, phase_key(k), e);
    }
    put(b, time, "phases", ph);
    json_t *runs = json_array();
    for (size_t i = 0; i < s->n_runs; i++)
        push(b, runs, run_figures(b, &s->runs[i], true));
    put(b, time, "runs", runs);
    put(b, time, "first_run_ns", ju(s->first_run_ns));
    json_t *later = json_object();
    put(b, later, "count", ju(s->n_later));
    put(b, later, "median_ns", ju(s->later_median_ns));
    put(b, later, "mean_ns", ju(s->later_mean_ns));
    put(b, later, "min_ns", ju(s->later_min_ns));
    put(b, later, "max_ns", ju(s->later_max_ns));
    put(b, time, "later_runs", later);
    put(b, o, "time", time);

    json_t *peak = json_object();
    put(b, peak, "heap_bytes", ju(s->peak_heap));
    put(b, peak, "when", when(b, &s->peak));
    put(b, peak, "live_bytes", kinds(b, s->peak_live));
    put(b, peak, "kind_peak_bytes", kinds(b, s->kind_peak));
    put(b, peak, "const_bytes", ju(s->const_bytes));
    put(b, peak, "slots_by_op", json_boolean(s->peak_slots_by_op));
    json_t *alive = json_array();
    for (size_t i = 0; i < s->n_alive; i++) {
        const mp_summary_alive *a = &s->alive[i];
        json_t *e = json_object();
        put(b, e, "home", json_string(home_key(a->home)));
        put(b, e, "tensor", jopt(a->tensor));
        put(b, e, "name", jname(a->name));
        put(b, e, "kind", json_string(kind_key(a->kind)));
        put(b, e, "bytes", ju(a->bytes));
        put(b, e, "id", ju(a->id));
        put(b, e, "op", jopt(a->op));
        put(b, e, "op_name", jname(a->op_name));
        put(b, e, "n_blocks", ju(a->n_blocks));
        if (a->home == MP_SUMMARY_ARENA) {
            put(b, e, "n_in_place", ju(a->n_in_place));
            put(b, e, "n_scratch", ju(a->n_scratch));
        }
        push(b, alive, e);
    }
    put(b, peak, "alive", alive);
    put(b, o, "peak", peak);

    json_t *al = json_object();
    put(b, al, "first_run", s->n_runs ? run_figures(b, &s->first_run, true) : json_null());
    put(b, al, "later_max", s->n_later ? run_figures(b, &s->later_max, false) : json_null());
    put(b, o, "allocations_per_run", al);

    put(b, o, "static_bytes", ju(s->static_bytes));
    put(b, o, "dynamic_bytes", ju(s->dynamic_bytes));

    json_t *dup = json_object();
    put(b, dup, "bytes", ju(s->dup_bytes));
    put(b, dup, "when", when(b, &s->dup));
    json_t *dups = json_array();
    for (size_t i = 0; i < s->n_dups; i++) {
        json_t *e = json_object();
        put(b, e, "tensor", ji(s->dups[i].tensor));
        put(b, e, "name", jname(s->dups[i].name));
        put(b, e, "bytes", ju(s->dups[i].bytes));
        put(b, e, "homes", ju(s->dups[i].homes));
        push(b, dups, e);
    }
    put(b, dup, "tensors", dups);
    put(b, o, "duplicated", dup);

    json_t *cp = json_object(), *ci = json_object(), *co = json_object();
    put(b, ci, "count", ju(s->n_copy_in));
    put(b, ci, "bytes", ju(s->bytes_copy_in));
    put(b, co, "count", ju(s->n_copy_out));
    put(b, co, "bytes", ju(s->bytes_copy_out));
    put(b, cp, "in", ci);
    put(b, cp, "out", co);
    put(b, o, "copies", cp);

    json_t *bal = json_object();
    put(b, bal, "n_alloc", ju(s->n_alloc));
    put(b, bal, "n_realloc", ju(s->n_realloc));
    put(b, bal, "n_free", ju(s->n_free));
    put(b, bal, "alloc_bytes", ju(s->bytes_alloc));
    put(b, bal, "freed_bytes", ju(s->bytes_freed));
    put(b, bal, "live_end_bytes", ju(s->live_end));
    put(b, bal, "live_end_kind_bytes", kinds(b, s->live_end_kind));
    put(b, o, "balance", bal);

    json_t *un = json_object();
    put(b, un, "measured", json_boolean(s->unaccounted_measured));
    put(b, un, "bytes", s->unaccounted_measured ? ji(s->unaccounted) : json_null());
    put(b, un, "process_heap_peak_bytes",
        m && m->process_heap_peak >= 0 ? ji(m->process_heap_peak) : json_null());
    put(b, un, "allocator_overhead_bytes",
        m && m->allocator_overhead >= 0 ? ji(m->allocator_overhead) : json_null());
    /* optional: the heap live before the measured window (peak since process start =
     * this + process_heap_peak_bytes); the caller's buffers and a model held on the heap */
    if (m && m->process_heap_base >= 0)
        put(b, un, "process_heap_base_bytes", ji(m->process_heap_base));
    put(b, un, "caller_peak_bytes", ju(s->caller_peak));
    put(b, un, "model_heap_bytes", ju(s->model_heap));
    put(b, o, "unaccounted", un);

    json_t *health = json_object();
    put(b, health, "truncated", json_boolean(s->truncated));
    put(b, health, "anomalies", ju(s->n_anomalies));
    put(b, health, "first_anomaly", s->n_anomalies ? jname(s->anomaly) : json_null());
    put(b, o, "health", health);
    return o;
}

/* ---- profile ------------------------------------------------------------------------ */

static json_t *timeline(jb *b, const mp_timeline *t)
{
    json_t *o = json_object();
    put(b, o, "per_point", ju(t->per_point));
    put(b, o, "peak", t->n ? ju(t->peak) : json_null());
    put(b, o, "has_rss", json_boolean(t->has_rss));
    json_t *pts = json_array();
    for (size_t i = 0; i < t->n; i++) {
        const mp_tl_point *pt = &t->pts[i];
        json_t *e = json_object();
        put(b, e, "ev_first", ju(pt->ev_first));
        put(b, e, "ev_last", ju(pt->ev_last));
        put(b, e, "step_first", ju(pt->step_first));
        put(b, e, "step_last", ju(pt->step_last));
        put(b, e, "t_ns", ju(pt->t_ns));
        put(b, e, "heap_bytes", ju(pt->heap));
        put(b, e, "live_bytes", kinds(b, pt->live));
        put(b, e, "phase", jphase(pt->phase_kind));
        put(b, e, "run", pt->run ? ju(pt->run) : json_null());
        put(b, e, "op", jopt(pt->op));
        put(b, e, "rss_bytes", pt->rss ? ju(pt->rss) : json_null());
        put(b, e, "rss_hwm_bytes", pt->rss_hwm ? ju(pt->rss_hwm) : json_null());
        push(b, pts, e);
    }
    put(b, o, "points", pts);
    return o;
}

static json_t *arena_json(jb *b, const mp_arena_report *a)
{
    json_t *o = json_object();
    put(b, o, "id", ju(a->id));
    put(b, o, "bytes", ju(a->bytes));
    put(b, o, "used_bytes", ju(a->used));
    put(b, o, "lower_bound_bytes", ju(a->lower_bound));
    put(b, o, "lower_bound_op", jopt(a->lower_bound_op));
    put(b, o, "naive_bytes", ju(a->naive));
    put(b, o, "alloc_event", ju(a->alloc_event));
    put(b, o, "free_event", a->free_event == UINT64_MAX ? json_null() : ju(a->free_event));
    put(b, o, "runs", ju(a->runs));
    put(b, o, "reference_run", json_boolean(a->in_reference_run));
    put(b, o, "frag_max_bytes", ju(a->frag_max));
    put(b, o, "frag_max_op", jopt(a->frag_max_op));
    json_t *fr = json_array();
    for (int32_t i = 0; i < a->n_ops && a->free_at_op; i++)
        push(b, fr, ju(a->free_at_op[i]));
    put(b, o, "free_at_op_bytes", fr);
    json_t *slots = json_array();
    for (size_t i = 0; i < a->n_slots; i++) {
        const mp_arena_slot *s = &a->slots[i];
        json_t *e = json_object();
        put(b, e, "kind", json_string(kind_key(s->kind)));
        put(b, e, "tensor", jopt(s->tensor));
        put(b, e, "name", jname(s->name));
        put(b, e, "offset", ju(s->offset));
        put(b, e, "bytes", ju(s->bytes));
        put(b, e, "first_op", ji(s->first_op));
        put(b, e, "last_op", ji(s->last_op));
        push(b, slots, e);
    }
    put(b, o, "slots", slots);
    return o;
}

json_t *mp_profile_json(const mp_profile *p)
{
    jb b = {true};
    const mp_trace_meta *m = p->meta;
    json_t *o = json_object();
    put(&b, o, "format", json_string(MP_REPORT_FORMAT));
    put(&b, o, "version", json_integer(MP_REPORT_VERSION));

    json_t *meta = json_object();
    put(&b, meta, "model", jname(m ? m->model : NULL));
    put(&b, meta, "mode", jname(m ? m->mode : NULL));
    put(&b, meta, "planner", jname(m ? m->planner : NULL));
    put(&b, meta, "threads", ji(m ? m->threads : 0));
    put(&b, meta, "tensors", ju(p->n_lifetimes));
    put(&b, meta, "ops", ju(p->n_ops));
    put(&b, meta, "events", ju(p->summary.n_events));
    put(&b, meta, "steps", ju(p->n_steps));
    put(&b, o, "meta", meta);

    put(&b, o, "summary", summary_json(&b, p));

    json_t *tl = json_object();
    put(&b, tl, "by_event", timeline(&b, &p->by_event));
    put(&b, tl, "by_step", timeline(&b, &p->by_step));
    json_t *rss = json_object();
    put(&b, rss, "samples", ju(p->n_rss));
    put(&b, rss, "max_bytes", p->n_rss ? ju(p->rss_max) : json_null());
    put(&b, rss, "hwm_bytes", p->n_rss ? ju(p->rss_hwm) : json_null());
    put(&b, tl, "rss", rss);
    put(&b, o, "timeline", tl);

    json_t *ref = json_object();
    put(&b, ref, "run", jopt(p->reference_run));
    put(&b, ref, "phase_index", jopt(p->reference_phase));
    put(&b, ref, "arena", jopt(p->reference_arena));
    put(&b, o, "reference", ref);

    json_t *lives = json_array();
    for (size_t i = 0; i < p->n_lifetimes; i++) {
        const mp_lifetime *l = &p->lifetimes[i];
        json_t *e = json_object();
        put(&b, e, "tensor", ji(l->tensor));
        put(&b, e, "name", jname(l->name));
        put(&b, e, "first_op", jopt(l->first_op));
        put(&b, e, "last_op", jopt(l->last_op));
        put(&b, e, "bytes", ju(l->bytes));
        put(&b, e, "manager", json_string(mp_manager_name(l->manager)));
        put(&b, e, "offset", jopt(l->offset));
        put(&b, e, "arena", l->manager == MP_MGR_ARENA ? ju(l->arena_id) : json_null());
        put(&b, e, "producer", jopt(l->producer));
        put(&b, e, "producer_name", jname(l->producer_name));
        put(&b, e, "in_place", json_boolean(l->in_place));
        push(&b, lives, e);
    }
    put(&b, o, "lifetimes", lives);

    json_t *ar = json_object();
    put(&b, ar, "total", ju(p->n_arenas_total));
    json_t *list = json_array();
    for (size_t i = 0; i < p->n_arenas; i++)
        push(&b, list, arena_json(&b, &p->arenas[i]));
    put(&b, ar, "list", list);
    put(&b, o, "arenas", ar);

    json_t *ops = json_array();
    for (size_t i = 0; i < p->n_ops; i++) {
        const mp_op_report *r = &p->ops[i];
        json_t *e = json_object();
        put(&b, e, "op", ji(r->op));
        put(&b, e, "name", jname(r->name));
        put(&b, e, "n_exec", ju(r->n_exec));
        put(&b, e, "time_ns", ju(r->time_ns));
        put(&b, e, "min_ns", ju(r->min_ns));
        put(&b, e, "max_ns", ju(r->max_ns));
        put(&b, e, "n_alloc", ju(r->n_alloc));
        put(&b, e, "alloc_bytes", ju(r->bytes_alloc));
        put(&b, e, "scratch_bytes", ju(r->scratch_bytes));
        put(&b, e, "kernel_bytes", ju(r->kernel_bytes));
        put(&b, e, "output_bytes", ju(r->output_bytes));
        push(&b, ops, e);
    }
    put(&b, o, "ops", ops);

    json_t *waste = json_object();
    put(&b, waste, "duplicated_bytes", ju(p->summary.dup_bytes));
    json_t *un = json_object();
    put(&b, un, "bytes", ju(p->unused_bytes));
    put(&b, un, "count", ju(p->n_unused));
    json_t *blocks = json_array();
    for (size_t i = 0; i < p->n_unused_listed; i++) {
        const mp_unused_block *u = &p->unused[i];
        json_t *e = json_object();
        put(&b, e, "id", ju(u->id));
        put(&b, e, "bytes", ju(u->bytes));
        put(&b, e, "kind", json_string(kind_key(u->kind)));
        put(&b, e, "tensor", jopt(u->tensor));
        put(&b, e, "name", jname(u->name));
        put(&b, e, "phase", jphase(u->phase_kind));
        put(&b, e, "alloc_event", ju(u->alloc_event));
        push(&b, blocks, e);
    }
    put(&b, un, "blocks", blocks);
    put(&b, waste, "unused", un);
    put(&b, waste, "copy_in_bytes", ju(p->summary.bytes_copy_in));
    put(&b, waste, "copy_out_bytes", ju(p->summary.bytes_copy_out));
    put(&b, waste, "copies", ju(p->summary.n_copy_in + p->summary.n_copy_out));
    put(&b, o, "waste", waste);

    if (!b.ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* ---- diff --------------------------------------------------------------------------- */

static json_t *side(jb *b, const mp_profile *p)
{
    const mp_trace_meta *m = p->meta;
    json_t *o = json_object();
    put(b, o, "model", jname(m ? m->model : NULL));
    put(b, o, "mode", jname(m ? m->mode : NULL));
    put(b, o, "planner", jname(m ? m->planner : NULL));
    put(b, o, "events", ju(p->summary.n_events));
    return o;
}

static json_t *pair(jb *b, uint64_t x, uint64_t y)
{
    json_t *o = json_object();
    put(b, o, "a", ju(x));
    put(b, o, "b", ju(y));
    put(b, o, "change", ji(y >= x ? (int64_t)(y - x) : -(int64_t)(x - y)));
    return o;
}

json_t *mp_profile_diff_json(const mp_profile *a, const mp_profile *b, const mp_profile_diff *d)
{
    jb k = {true};
    json_t *o = json_object();
    put(&k, o, "format", json_string(MP_DIFF_FORMAT));
    put(&k, o, "version", json_integer(MP_DIFF_VERSION));
    put(&k, o, "a", side(&k, a));
    put(&k, o, "b", side(&k, b));
    put(&k, o, "peak_bytes", pair(&k, d->peak_a, d->peak_b));
    json_t *kd = json_object();
    for (int i = 0; i < MP_KIND_COUNT; i++) {
        json_t *e = json_object();
        put(&k, e, "at_peak_bytes", pair(&k, d->live_a[i], d->live_b[i]));
        put(&k, e, "own_peak_bytes", pair(&k, d->kind_peak_a[i], d->kind_peak_b[i]));
        put(&k, kd, kind_key(i), e);
    }
    put(&k, o, "kinds", kd);
    put(&k, o, "reference_arena_bytes", pair(&k, d->arena_a, d->arena_b));
    json_t *ts = json_array();
    for (size_t i = 0; i < d->n_tensors; i++) {
        const mp_diff_tensor *t = &d->tensors[i];
        json_t *e = json_object();
        put(&k, e, "name", jname(t->name));
        put(&k, e, "tensor_a", jopt(t->tensor_a));
        put(&k, e, "tensor_b", jopt(t->tensor_b));
        put(&k, e, "bytes", pair(&k, t->bytes_a, t->bytes_b));
        put(&k, e, "manager_a",
            t->tensor_a >= 0 ? json_string(mp_manager_name(t->manager_a)) : json_null());
        put(&k, e, "manager_b",
            t->tensor_b >= 0 ? json_string(mp_manager_name(t->manager_b)) : json_null());
        push(&k, ts, e);
    }
    put(&k, o, "tensors", ts);
    if (!k.ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static mp_status dump(FILE *f, json_t *j, mp_error *err)
{
    if (!j)
        return mp_fail(err, MP_ERR_NOMEM, "report: out of memory building the JSON");
    int rc = json_dumpf(j, f, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(j);
    if (rc != 0 || fputc('\n', f) == EOF || ferror(f))
        return mp_fail(err, MP_ERR_IO, "report: cannot write the JSON");
    return MP_OK;
}

mp_status mp_report_profile_json(FILE *f, const mp_profile *p, mp_error *err)
{
    return dump(f, mp_profile_json(p), err);
}

mp_status mp_report_diff_json(FILE *f, const mp_profile *a, const mp_profile *b,
                              const mp_profile_diff *d, mp_error *err)
{
    return dump(f, mp_profile_diff_json(a, b, d), err);
}
