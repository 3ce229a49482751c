/* The session's tensor memory managers.
 *
 * Static manager: every non-constant tensor whose shape is known before running, and which
 * the caller did not bind to a buffer of its own, gets a slot in one arena laid out by a
 * planner (engine/memory/plan.h) from the tensors' lifetimes: first writer to last reader in
 * execution order, model inputs from step 0, model outputs to the last step. Runs then
 * allocate nothing. A shape change releases the arena at once; the next prepare or run
 * plans again, or (auto mode) reuses the plan cached for input shapes seen before.
 *
 * Dynamic manager: a tensor whose shape is known only while running (and, in dynamic mode,
 * every non-constant tensor) gets its own buffer right before its producer runs and loses it
 * after its last reader; model inputs get theirs when the caller sets them.
 *
 * Variable tensors (is_variable: the state a recurrent operator keeps, e.g. LSTM's hidden and
 * cell state) are neither: each gets a block of its own (kind variable) at the first prepare,
 * set to its initial value (the model's constant, else zeros), kept across runs, re-plans and
 * shape changes until teardown, and set to its initial value again only by
 * mp_session_reset_variables. They are never in the arena: their bytes must outlive every run.
 *
 * In place, as TensorFlow Lite's arena planner does since 2.14 (IdentifyInPlaceTensors):
 * the output of a RESHAPE, SQUEEZE, EXPAND_DIMS or BITCAST (operators that only relabel the
 * bytes; BITCAST's dtypes differ) shares its input's bytes, and the output of an ADD, SUB, MUL or DIV the bytes of an input
 * that nobody reads after it (elementwise: each output element is written after the input
 * elements at its index were read, and an input of the output's size is never broadcast),
 * and the output of a SOFTMAX the bytes of its input on the same terms (TensorFlow Lite
 * registers it in place: every kernel of ours reads a row's element before writing the
 * output at its index), and a DYNAMIC_UPDATE_SLICE's those of its operand (it then writes
 * the update's bytes only), when the static manager plans both: not for a model input or output, a variable, or a
 * dynamic tensor. The input's slot then lives from its producer to the last reader of any
 * tensor sharing it, the output has no slot of its own (no PLAN event: the trace's slot is
 * the input's), and a RESHAPE copies nothing. Chains share one slot.
 *
 * Every buffer is an mp_mem block, so the trace sees each one; the arena's layout is
 * recorded as one PLAN event per tensor (per slot: a shared slot's event names its root). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xnnpack.h>

#include "engine/kernels/strings.h"
#include "engine/session_internal.h"

/* Each slot is aligned to a cache line (MP_SLOT_ALIGN), which is also what XNNPACK prefers. */
#define SLOT_ALIGN MP_SLOT_ALIGN

static bool managed(const mp_session *s, int32_t t)
{
    const tensor_rt *r = &s->trt[t];
    return r->used && !s->tensors[t].is_const && !r->folded;
}

/* The static manager gives tensor t arena bytes (for the current classification) ... */
static bool arena_held(const mp_session *s, int32_t t)
{
    const tensor_rt *r = &s->trt[t];
    return managed(s, t) && !r->dynamic && !r->persistent && r->home != HOME_CALLER &&
           r->first != INT32_MAX;
}

/* ... in a slot of its own (not sharing another's). */
static bool in_static_plan(const mp_session *s, int32_t t)
{
    return arena_held(s, t) && s->trt[t].shares < 0;
}

/* The root of t's group (the tensor whose slot the group shares) while find_shared links
 * them: `shares` is then each tensor's parent, -1 at a root (paths halved on the way). */
static int32_t group_root(mp_session *s, int32_t t)
{
    while (s->trt[t].shares >= 0) {
        int32_t p = s->trt[t].shares;
        if (s->trt[p].shares >= 0)
            s->trt[t].shares = s->trt[p].shares;
        t = p;
    }
    return t;
}

/* Tensor b (written at step i) joins the group of tensor a: its slot is a's root's, which
 * then lives to the last step of either. */
static void join(mp_session *s, int32_t a, int32_t b)
{
    int32_t ra = group_root(s, a), rb = group_root(s, b);
    if (ra == rb)
        return;
    s->trt[rb].shares = ra;
    if (s->trt[rb].last > s->trt[ra].last)
        s->trt[ra].last = s->trt[rb].last;
}

/* Output b of node i may take input a's slot: both in the arena, a no model input, b no model
 * output, the same bytes and (unless any_dtype: BITCAST) the same dtype. */
static bool may_share_as(const mp_session *s, int32_t i, int32_t a, int32_t b, bool any_dtype)
{
    const mp_tensor *x = &s->tensors[a], *y = &s->tensors[b];
    return a != b && arena_held(s, a) && arena_held(s, b) && !s->trt[b].model_output &&
           !s->trt[a].model_input && !s->trt[b].model_input &&
           (any_dtype || x->dtype == y->dtype) && x->bytes == y->bytes && s->trt[b].first == i;
}

static bool may_share(const mp_session *s, int32_t i, int32_t a, int32_t b)
{
    return may_share_as(s, i, a, b, false);
}

/* How many leading inputs of an operator with opcode op its output may overwrite in place
 * (TensorFlow Lite's kTfLiteInplaceOpInput0Shared / Input1Shared): either of the arithmetic
 * operators' two, a SOFTMAX's one, a DYNAMIC_UPDATE_SLICE's operand (the slice then writes
 * only the update's bytes); 0 for the rest. *n_inputs: the inputs the operator must have. */
static int32_t shareable_inputs(int op, int32_t *n_inputs)
{
    switch (op) {
    case MP_OP_ADD: case MP_OP_SUB: case MP_OP_MUL: case MP_OP_DIV: *n_inputs = 2; return 2;
    case MP_OP_SOFTMAX: *n_inputs = 1; return 1;
    case MP_OP_DYNAMIC_UPDATE_SLICE: *n_inputs = 3; return 1;
    default: *n_inputs = 0; return 0;
    }
}

/* Which outputs share their input's slot (the header: "In place"), and the lifetime of
 * each shared slot: its root's first step to the last step of any tensor sharing it. First
 * the operators that leave the data unmodified (every one of them: the whole life of each
 * group is then known), then the elementwise ones and SOFTMAX in execution order, each
 * taking the slot of an input whose group nobody reads after it. */
static void find_shared(mp_session *s)
{
    for (int32_t t = 0; t < s->n_tensors; t++)
        s->trt[t].shares = -1;
    if (s->opt.no_in_place || s->opt.mode == MP_MEMORY_DYNAMIC)
        return;
    for (int32_t i = 0; i < s->n_nodes; i++) {
        const mp_node *n = &s->nodes[i];
        int op = n->opcode;
        if ((op == MP_OP_RESHAPE || op == MP_OP_SQUEEZE || op == MP_OP_EXPAND_DIMS ||
             op == MP_OP_BITCAST) &&
            !s->nrt[i].folded && n->n_in >= 1 && n->n_out == 1 && n->in[0] &&
            may_share_as(s, i, n->in[0]->index, n->out[0]->index, op == MP_OP_BITCAST))
            join(s, n->in[0]->index, n->out[0]->index);
    }
    for (int32_t i = 0; i < s->n_nodes; i++) {
        const mp_node *n = &s->nodes[i];
        int32_t n_inputs, n_shareable = shareable_inputs(n->opcode, &n_inputs);
        if (n_shareable == 0 || s->nrt[i].folded || n->n_in != n_inputs || n->n_out != 1)
            continue;
        int32_t b = n->out[0]->index;
        for (int32_t j = 0; j < n_shareable; j++) {
            if (!n->in[j])
                continue;
            int32_t a = n->in[j]->index, ra = group_root(s, a);
            /* a scalar stays apart (TensorFlow Lite: kScalarTensorBytes), and the input's
             * group may hold no model output and be read by nobody after this step */
            if (may_share(s, i, a, b) && s->tensors[a].bytes > 8 &&
                !s->trt[ra].model_output && s->trt[ra].last == i) {
                join(s, a, b);
                break;
            }
        }
    }
    for (int32_t t = 0; t < s->n_tensors; t++)
        if (s->trt[t].shares >= 0)
            s->trt[t].shares = group_root(s, t);
}

/* The static manager plans node i's scratch (a slot, or the separate scratch block). */
static bool scratch_planned(const mp_session *s, int32_t i)
{
    const node_rt *r = &s->nrt[i];
    return s->opt.mode != MP_MEMORY_DYNAMIC && !s->stale_kept && !r->folded && !r->deferred &&
           s->nodes[i].scratch_bytes > 0;
}

static void set_scratch(mp_session *s, int32_t i, void *p, tensor_home home)
{
    if (s->nodes[i].scratch != p)
        s->nrt[i].scratch_version++;
    s->nodes[i].scratch = p;
    s->nrt[i].scratch_home = (uint8_t)home;
}

void mp_sm_classify(mp_session *s)
{
    const mp_model *m = s->model;
    int32_t end = s->n_nodes > 0 ? s->n_nodes - 1 : 0;
    for (int32_t t = 0; t < s->n_tensors; t++) {
        tensor_rt *r = &s->trt[t];
        r->first = INT32_MAX;
        r->last = -1;
        r->folded = false;
        r->persistent = s->tensors[t].info->is_variable && !s->tensors[t].is_const;
        r->model_output = false;
        r->model_input = false;
        if (r->persistent) {
            r->first = 0;
            r->last = end;
        }
    }
    for (int32_t i = 0; i < m->n_inputs; i++) {
        s->trt[m->inputs[i]].first = 0;
        s->trt[m->inputs[i]].model_input = true;
    }
    for (int32_t i = 0; i < s->n_nodes; i++) {
        const mp_node *n = &s->nodes[i];
        if (s->nrt[i].folded) {
            for (int32_t j = 0; j < n->n_out; j++)
                s->trt[n->out[j]->index].folded = true;
            continue;
        }
        for (int32_t j = 0; j < n->n_in + n->n_out; j++) {
            const mp_tensor *x = j < n->n_in ? n->in[j] : n->out[j - n->n_in];
            if (!x)
                continue;
            tensor_rt *r = &s->trt[x->index];
            if (i < r->first)
                r->first = i;
            if (i > r->last)
                r->last = i;
        }
    }
    for (int32_t i = 0; i < m->n_outputs; i++) {
        tensor_rt *r = &s->trt[m->outputs[i]];
        r->model_output = true;
        if (r->first == INT32_MAX)
            r->first = 0;
        r->last = end;
    }
    for (int32_t t = 0; t < s->n_tensors; t++) {
        tensor_rt *r = &s->trt[t];
        if (r->first != INT32_MAX && r->last < r->first)
            r->last = r->first; /* model input nobody reads, or output nobody reads */
        /* a string tensor's size is known only from its contents (a string input's when it
         * is set): never planned at the zero bytes its shape gives */
        r->dynamic = managed(s, t) && !r->persistent && r->home != HOME_CALLER &&
                     (s->opt.mode == MP_MEMORY_DYNAMIC || r->producer_deferred || s->stale_kept ||
                      s->tensors[t].dtype == MP_DT_STRING);
    }
    find_shared(s);
}

static void set_data(mp_session *s, int32_t t, void *data, tensor_home home)
{
    if (s->tensors[t].data != data)
        s->trt[t].version++;
    s->tensors[t].data = data;
    s->trt[t].home = (uint8_t)home;
}

void mp_sm_free_own(mp_session *s, int32_t t)
{
    if (s->trt[t].home != HOME_OWN)
        return;
    mp_mem_free(s->mem, s->tensors[t].data);
    s->tensors[t].data = NULL;
    s->trt[t].home = HOME_NONE;
    s->trt[t].released = NULL;
    s->trt[t].version++;
}

/* Every tensor sharing a slot at its root's bytes (after the roots are placed). */
static void place_shared(mp_session *s)
{
    for (int32_t t = 0; t < s->n_tensors; t++) {
        int32_t root = s->trt[t].shares;
        if (root >= 0 && s->trt[root].home == HOME_ARENA) {
            mp_sm_free_own(s, t); /* never two homes */
            set_data(s, t, s->tensors[root].data, HOME_ARENA);
            if (s->trace) /* the trace says whose slot, beside the root's PLAN event */
                mp_trace_set_shares(s->trace, t, root);
        }
    }
}

/* A dynamic tensor's block after its last reader: freed, but its version is not bumped, and
 * the pointer is remembered. When the next run gives it a block at the same address (what
 * malloc does when a run asks for the sizes of the run before in the same order), the
 * operators set up with that pointer are not set up again (session.c prepare_node, which
 * also sets up again any operator it prepared while one of its tensors had no storage). */
static void release_dynamic(mp_session *s, int32_t t)
{
    tensor_rt *r = &s->trt[t];
    if (r->home != HOME_OWN)
        return;
    void *p = s->tensors[t].data;
    mp_mem_free(s->mem, p);
    s->tensors[t].data = NULL;
    r->home = HOME_NONE;
    r->released = p;
}

/* A tensor larger than the session's limit is refused, never attempted. */
static mp_status check_size(const mp_session *s, int32_t t, mp_error *err)
{
    const mp_tensor *x = &s->tensors[t];
    if (x->bytes <= s->opt.max_tensor_bytes)
        return MP_OK;
    char sh[128];
    return mp_fail(err, MP_ERR_SHAPE, "%s: tensor '%s' %s would need %zu bytes (limit %zu)",
                   s->model->path, x->info->name, mp_shape_str(x->rank, x->dims, sh, sizeof sh),
                   x->bytes, s->opt.max_tensor_bytes);
}

mp_status mp_sm_give_own(mp_session *s, int32_t t, mp_mem_kind kind, int32_t op, mp_error *err)
{
    mp_tensor *x = &s->tensors[t];
    tensor_rt *r = &s->trt[t];
    if (x->is_const || r->home == HOME_CALLER)
        return MP_OK;
    size_t want = x->bytes + XNN_EXTRA_BYTES;
    if (r->home == HOME_OWN && r->kind == kind && mp_mem_size(x->data) == want)
        return MP_OK;
    mp_status st = check_size(s, t, err);
    if (st != MP_OK)
        return st;
    /* a kernel sets up again only when the pointer really moved */
    uintptr_t was = (uintptr_t)(x->data ? x->data : r->released);
    r->released = NULL;
    if (r->home == HOME_OWN)
        mp_mem_free(s->mem, x->data);
    x->data = NULL;
    r->home = HOME_NONE;
    mp_owner own = {t, op};
    /* dynamic buffers are written in full by their producer; zeroing them would only add
     * to the cost of allocating while running */
    void *p = kind == MP_MEM_DYNAMIC ? mp_mem_alloc(s->mem, want, 0, kind, own)
                                     : mp_mem_calloc(s->mem, want, 0, kind, own);
    if (!p) {
        r->version++;
        return mp_fail(err, MP_ERR_NOMEM, "%s: out of memory for tensor '%s' (%zu bytes)",
                       s->model->path, x->info->name, x->bytes);
    }
    x->data = p;
    r->home = HOME_OWN;
    r->kind = kind;
    if ((uintptr_t)p != was)
        r->version++;
    return MP_OK;
}

void mp_sm_release_arena(mp_session *s)
{
    for (int32_t t = 0; t < s->n_tensors; t++)
        if (s->trt[t].home == HOME_ARENA)
            set_data(s, t, NULL, HOME_NONE);
    for (int32_t i = 0; i < s->n_nodes; i++)
        if (s->nrt[i].scratch_home == HOME_ARENA)
            set_scratch(s, i, NULL, HOME_NONE);
    if (s->arena && !s->stale_kept) {
        if (!s->arena_used)
            s->arenas_unused++; /* planned for shapes no run met (case C planned at prepare) */
        mp_mem_free(s->mem, s->arena);
    }
    if (!s->stale_kept)
        s->arena = NULL;
    mp_mem_free(s->mem, s->scratch_block);
    s->scratch_block = NULL;
    s->arena_bytes = s->arena_lower_bound = s->arena_naive = 0;
    s->n_planned = s->n_scratch = 0;
    s->plan_dirty = true;
}

static void free_entry(mp_session *s, plan_entry *e)
{
    mp_mem_free(s->mem, e->key);
    mp_mem_free(s->mem, e->offsets);
    memset(e, 0, sizeof *e);
}

void mp_sm_invalidate(mp_session *s, bool forget_cached_plans)
{
    s->ext_valid = false; /* a layout of the caller's was for the old shapes or bindings */
    if (s->opt.keep_stale_arena && s->arena && s->prepared) {
        /* Samsung ONE's behaviour, on purpose: the arena stays while tensors go dynamic */
        s->stale_kept = true;
    }
    mp_sm_release_arena(s);
    if (forget_cached_plans)
        for (int i = 0; i < MP_PLAN_CACHE; i++)
            free_entry(s, &s->cache[i]);
}

/* The cache key: every input's rank and dimensions. */
static size_t key_len(const mp_session *s)
{
    return (size_t)s->model->n_inputs * (1 + MP_MAX_RANK);
}

static void make_key(const mp_session *s, int32_t *key)
{
    memset(key, 0, sizeof(int32_t) * key_len(s));
    for (int32_t i = 0; i < s->model->n_inputs; i++) {
        const mp_tensor *x = &s->tensors[s->model->inputs[i]];
        int32_t *k = key + (size_t)i * (1 + MP_MAX_RANK);
        k[0] = x->rank;
        memcpy(k + 1, x->dims, sizeof(int32_t) * (size_t)x->rank);
    }
}

static plan_entry *cache_find(mp_session *s, const int32_t *key)
{
    for (int i = 0; i < MP_PLAN_CACHE; i++)
        if (s->cache[i].key && memcmp(s->cache[i].key, key, sizeof(int32_t) * key_len(s)) == 0)
            return &s->cache[i];
    return NULL;
}

static plan_entry *cache_slot(mp_session *s)
{
    plan_entry *victim = &s->cache[0];
    for (int i = 0; i < MP_PLAN_CACHE; i++) {
        if (!s->cache[i].key)
            return &s->cache[i];
        if (s->cache[i].stamp < victim->stamp)
            victim = &s->cache[i];
    }
    free_entry(s, victim);
    return victim;
}

/* Run the planner over the tensors flagged in `in_plan`; fill a cache entry. */
static mp_status make_plan(mp_session *s, const bool *in_plan, plan_entry *e, mp_error *err)
{
    /* the tensors, then (unless planned apart) the scratch of each operator, alive for its
     * own step only */
    bool together = !s->opt.scratch_separate;
    int32_t n = 0;
    for (int32_t t = 0; t < s->n_tensors; t++)
        n += in_plan[t];
    e->scratch_max = 0;
    for (int32_t i = 0; i < s->n_nodes; i++) {
        if (!scratch_planned(s, i))
            continue;
        n += together;
        if (s->nodes[i].scratch_bytes > e->scratch_max)
            e->scratch_max = s->nodes[i].scratch_bytes;
    }
    size_t n_off = (size_t)s->n_tensors + (size_t)s->n_nodes;
    mp_owner none = MP_OWNER_NONE;
    mp_plan_buf *bufs = mp_mem_alloc(s->mem, sizeof(mp_plan_buf) * ((size_t)n + 1), 0,
                                     MP_MEM_ENGINE, none);
    uint64_t *off = mp_mem_alloc(s->mem, sizeof(uint64_t) * ((size_t)n + 1), 0, MP_MEM_ENGINE, none);
    e->offsets = mp_mem_alloc(s->mem, sizeof(uint64_t) * (n_off + 1), 0, MP_MEM_ENGINE, none);
    mp_status st = MP_OK;
    if (!bufs || !off || !e->offsets) {
        st = mp_fail(err, MP_ERR_NOMEM, "%s: out of memory planning the arena", s->model->path);
        goto out;
    }
    n = 0;
    for (int32_t t = 0; t < s->n_tensors; t++)
        if (in_plan[t])
            bufs[n++] = (mp_plan_buf){s->tensors[t].bytes, s->trt[t].first, s->trt[t].last};
    for (int32_t i = 0; i < s->n_nodes; i++)
        if (together && scratch_planned(s, i))
            bufs[n++] = (mp_plan_buf){s->nodes[i].scratch_bytes, i, i};
    st = s->planner->plan(bufs, n, SLOT_ALIGN, off, &e->total, s->mem);
    if (st != MP_OK) {
        st = mp_fail(err, st, "%s: planner '%s': %s", s->model->path, s->planner->name,
                     st == MP_ERR_NOMEM ? "out of memory" : mp_status_name(st));
        goto out;
    }
    char why[256];
    if (!mp_plan_check(bufs, n, SLOT_ALIGN, off, e->total, why, sizeof why)) {
        /* a planner bug must never become overlapping tensors */
        st = mp_fail(err, MP_ERR_BACKEND, "%s: planner '%s' produced an invalid plan: %s",
                     s->model->path, s->planner->name, why);
        goto out;
    }
    e->lower_bound = mp_plan_lower_bound(bufs, n, SLOT_ALIGN, NULL);
    e->naive = mp_plan_naive(bufs, n, SLOT_ALIGN);
    e->n_planned = n;
    n = 0;
    for (int32_t t = 0; t < s->n_tensors; t++)
        e->offsets[t] = in_plan[t] ? off[n++] : UINT64_MAX;
    for (int32_t i = 0; i < s->n_nodes; i++)
        e->offsets[s->n_tensors + i] = together && scratch_planned(s, i) ? off[n++] : UINT64_MAX;
    s->plans_made++;
out:
    mp_mem_free(s->mem, bufs);
    mp_mem_free(s->mem, off);
    return st;
}

/* The static tensors and scratch at the places the caller gave (mp_session_place_arena);
 * without a layout, nothing (a run then fails in mp_sm_check_bound). */
static mp_status place_external(mp_session *s, mp_error *err)
{
    if (!s->ext_valid)
        return MP_OK;
    uint64_t arena_id = mp_mem_block_id(s->ext_base);
    int32_t k = 0;
    for (int32_t t = 0; t < s->n_tensors; t++) {
        if (!in_static_plan(s, t))
            continue;
        if (k >= s->ext_n || s->ext_off[k] + s->tensors[t].bytes + XNN_EXTRA_BYTES > s->ext_cap)
            return mp_fail(err, MP_ERR_BACKEND, "%s: the caller's arena layout no longer fits "
                           "tensor '%s'", s->model->path, s->tensors[t].info->name);
        mp_sm_free_own(s, t); /* never two homes */
        set_data(s, t, s->ext_base + s->ext_off[k], HOME_ARENA);
        if (s->trace)
            mp_trace_plan(s->trace, arena_id, t, s->ext_off[k], s->tensors[t].bytes,
                          s->trt[t].first, s->trt[t].last);
        k++;
    }
    place_shared(s);
    for (int32_t i = 0; i < s->n_nodes; i++) {
        if (!scratch_planned(s, i))
            continue;
        if (k >= s->ext_n ||
            s->ext_off[k] + s->nodes[i].scratch_bytes + XNN_EXTRA_BYTES > s->ext_cap)
            return mp_fail(err, MP_ERR_BACKEND, "%s: the caller's arena layout no longer fits "
                           "the scratch of operator #%d", s->model->path, (int)i);
        mp_sm_scratch_free(s, i);
        set_scratch(s, i, s->ext_base + s->ext_off[k], HOME_ARENA);
        s->n_scratch++;
        if (s->trace)
            mp_trace_plan_scratch(s->trace, arena_id, i, s->ext_off[k], s->nodes[i].scratch_bytes);
        k++;
    }
    s->n_planned = k;
    return MP_OK;
}

mp_status mp_sm_set_external(mp_session *s, char *base, size_t capacity, const uint64_t *offsets,
                             int32_t n, mp_error *err)
{
    mp_plan_item *items = NULL;
    int32_t m = 0;
    mp_status st = mp_sm_plan_items(s, &items, &m, err);
    if (st != MP_OK)
        return st;
    if (m != n)
        st = mp_fail(err, MP_ERR_ARG, "%s: the arena layout places %d buffers; the plan has %d",
                     s->model->path, (int)n, (int)m);
    if (st == MP_OK && m > 0 && (!base || (uintptr_t)base % SLOT_ALIGN != 0))
        st = mp_fail(err, MP_ERR_ARG, "%s: the caller's arena is not aligned to %d bytes",
                     s->model->path, SLOT_ALIGN);
    for (int32_t k = 0; k < m && st == MP_OK; k++)
        if (offsets[k] % SLOT_ALIGN != 0 || offsets[k] > capacity ||
            items[k].bytes + XNN_EXTRA_BYTES > capacity - offsets[k])
            st = mp_fail(err, MP_ERR_ARG, "%s: buffer %d of the arena layout (offset %llu, %llu "
                         "bytes) is misaligned or beyond the %zu bytes of the arena",
                         s->model->path, (int)k, (unsigned long long)offsets[k],
                         (unsigned long long)items[k].bytes, capacity);
    free(items);
    if (st != MP_OK)
        return st;
    mp_mem_free(s->mem, s->ext_off);
    s->ext_off = mp_mem_alloc(s->mem, sizeof(uint64_t) * ((size_t)n + 1), 0, MP_MEM_ENGINE,
                              MP_OWNER_NONE);
    if (!s->ext_off) {
        s->ext_valid = false;
        return mp_fail(err, MP_ERR_NOMEM, "%s: out of memory taking the arena layout",
                       s->model->path);
    }
    if (n > 0)
        memcpy(s->ext_off, offsets, sizeof(uint64_t) * (size_t)n);
    s->ext_base = base;
    s->ext_cap = capacity;
    s->ext_n = n;
    mp_sm_release_arena(s); /* storage from the old layout goes; the next prepare places */
    s->ext_valid = true;
    return MP_OK;
}

/* Plan (or reuse a plan) and allocate the arena for every static tensor. */
static mp_status place_static(mp_session *s, mp_error *err)
{
    if (s->ext_on)
        return place_external(s, err);
    mp_owner none = MP_OWNER_NONE;
    bool *in_plan = mp_mem_calloc(s->mem, (size_t)s->n_tensors + 1, 0, MP_MEM_ENGINE, none);
    int32_t *key = mp_mem_alloc(s->mem, sizeof(int32_t) * (key_len(s) + 1), 0, MP_MEM_ENGINE, none);
    mp_status st = MP_OK;
    plan_entry scratch = {0}, *e = NULL;
    if (!in_plan || !key) {
        st = mp_fail(err, MP_ERR_NOMEM, "%s: out of memory planning the arena", s->model->path);
        goto out;
    }
    for (int32_t t = 0; t < s->n_tensors && st == MP_OK; t++) {
        in_plan[t] = in_static_plan(s, t);
        if (in_plan[t])
            mp_sm_free_own(s, t); /* e.g. a dynamic buffer from before: never two homes */
        if (in_plan[t])
            st = check_size(s, t, err);
    }
    if (st != MP_OK)
        goto out;
    make_key(s, key);
    bool cached = s->opt.mode == MP_MEMORY_AUTO;
    e = cached ? cache_find(s, key) : NULL;
    if (e) {
        s->plans_reused++;
    } else {
        e = cached ? cache_slot(s) : &scratch;
        st = make_plan(s, in_plan, e, err);
        if (st != MP_OK) {
            free_entry(s, e);
            e = NULL;
            goto out;
        }
        if (cached) {
            e->key = key;
            key = NULL;
        }
    }
    e->stamp = ++s->cache_clock;
    if (e->n_planned > 0) {
        s->arena = mp_mem_alloc_long(s->mem, e->total + XNN_EXTRA_BYTES, SLOT_ALIGN,
                                     MP_MEM_STATIC, none);
        if (!s->arena) {
            st = mp_fail(err, MP_ERR_NOMEM, "%s: out of memory for an arena of %llu bytes",
                         s->model->path, (unsigned long long)e->total);
            goto out;
        }
        s->arenas_made++;
        s->arena_used = false;
    }
    if (s->opt.scratch_separate && e->scratch_max > 0) {
        s->scratch_block = mp_mem_alloc(s->mem, e->scratch_max, SLOT_ALIGN, MP_MEM_SCRATCH, none);
        if (!s->scratch_block) {
            st = mp_fail(err, MP_ERR_NOMEM, "%s: out of memory for %llu bytes of scratch",
                         s->model->path, (unsigned long long)e->scratch_max);
            goto out;
        }
    }
    uint64_t arena_id = mp_mem_block_id(s->arena);
    for (int32_t t = 0; t < s->n_tensors; t++) {
        if (e->offsets[t] == UINT64_MAX)
            continue;
        set_data(s, t, s->arena + e->offsets[t], HOME_ARENA);
        if (s->trace)
            mp_trace_plan(s->trace, arena_id, t, e->offsets[t], s->tensors[t].bytes,
                          s->trt[t].first, s->trt[t].last);
    }
    place_shared(s);
    for (int32_t i = 0; i < s->n_nodes; i++) {
        if (!scratch_planned(s, i))
            continue;
        mp_sm_scratch_free(s, i); /* a block from a dynamic step before: never two homes */
        uint64_t o = e->offsets[s->n_tensors + i];
        set_scratch(s, i, o == UINT64_MAX ? s->scratch_block : s->arena + o, HOME_ARENA);
        s->n_scratch++;
        if (s->trace && o != UINT64_MAX)
            mp_trace_plan_scratch(s->trace, arena_id, i, o, s->nodes[i].scratch_bytes);
    }
    s->arena_bytes = s->arena ? e->total + XNN_EXTRA_BYTES : 0;
    s->arena_lower_bound = e->lower_bound;
    s->arena_naive = e->naive;
    s->n_planned = e->n_planned;
out:
    if (e == &scratch)
        free_entry(s, &scratch);
    mp_mem_free(s->mem, key);
    mp_mem_free(s->mem, in_plan);
    return st;
}

mp_status mp_sm_place(mp_session *s, bool defer_plan, mp_error *err)
{
    mp_status st;
    bool planning = s->opt.mode != MP_MEMORY_DYNAMIC && !s->stale_kept && s->plan_dirty;
    defer_plan = defer_plan && planning;
    if (planning && !defer_plan) {
        mp_sm_release_arena(s);
        st = place_static(s, err);
        if (st != MP_OK)
            return st;
    }
    /* deferred (plan at the first run): the plan stays due, and its tensors stay without
     * storage until the call that plans */
    s->plan_dirty = defer_plan;
    s->plan_deferred = defer_plan;
    /* own buffers: variable tensors (kept, or new and set to their initial value), and
     * tensors left without storage (an unplanned input that a run will need) */
    for (int32_t t = 0; t < s->n_tensors; t++) {
        tensor_rt *r = &s->trt[t];
        if (!managed(s, t) || r->home == HOME_ARENA || r->home == HOME_CALLER ||
            r->shares >= 0)
            continue; /* (a tensor sharing a slot has its root's bytes, or none yet) */
        if (r->persistent) {
            bool kept = r->home == HOME_OWN && r->kind == MP_MEM_VARIABLE &&
                        mp_mem_size(s->tensors[t].data) == s->tensors[t].bytes + XNN_EXTRA_BYTES;
            st = mp_sm_give_own(s, t, MP_MEM_VARIABLE, -1, err);
            if (st != MP_OK)
                return st;
            if (!kept)
                mp_sm_reset_variable(s, t);
        } else if (!r->dynamic && r->first != INT32_MAX && !s->ext_on &&
                   !(defer_plan && in_static_plan(s, t))) {
            st = mp_sm_give_own(s, t, MP_MEM_STATIC, -1, err);
            if (st != MP_OK)
                return st;
        } else if (r->home == HOME_OWN && r->kind != MP_MEM_DYNAMIC) {
            mp_sm_free_own(s, t);
        }
    }
    return MP_OK;
}

void mp_sm_reset_variable(mp_session *s, int32_t t)
{
    mp_tensor *x = &s->tensors[t];
    const mp_tensor_info *ti = x->info;
    if (s->trt[t].home != HOME_OWN || !x->data)
        return;
    if (ti->data && ti->data_bytes == x->bytes) {
        memcpy(x->data, ti->data, x->bytes);
        return;
    }
    /* TensorFlow Lite resets an int8 state to its zero point (the real value 0) */
    int fill = 0;
    if (x->dtype == MP_DT_INT8 && ti->quant.count > 0 && ti->quant.zero_point)
        fill = (int)(int8_t)ti->quant.zero_point[0];
    memset(x->data, fill, x->bytes);
}

mp_status mp_sm_scratch_own(mp_session *s, int32_t i, mp_error *err)
{
    mp_node *n = &s->nodes[i];
    node_rt *r = &s->nrt[i];
    if (r->scratch_home == HOME_ARENA)
        return MP_OK;
    if (r->scratch_home == HOME_OWN && mp_mem_size(n->scratch) == n->scratch_bytes)
        return MP_OK;
    mp_sm_scratch_free(s, i);
    if (n->scratch_bytes == 0)
        return MP_OK;
    if (n->scratch_bytes > s->opt.max_tensor_bytes)
        return mp_fail(err, MP_ERR_SHAPE, "%s: operator #%d would need %zu bytes of scratch "
                       "(limit %zu)", s->model->path, (int)i, n->scratch_bytes,
                       s->opt.max_tensor_bytes);
    mp_owner own = {-1, i};
    void *p = mp_mem_alloc(s->mem, n->scratch_bytes, SLOT_ALIGN, MP_MEM_SCRATCH, own);
    if (!p)
        return mp_fail(err, MP_ERR_NOMEM, "%s: out of memory for %zu bytes of scratch of "
                       "operator #%d", s->model->path, n->scratch_bytes, (int)i);
    set_scratch(s, i, p, HOME_OWN);
    return MP_OK;
}

void mp_sm_scratch_free(mp_session *s, int32_t i)
{
    if (s->nrt[i].scratch_home != HOME_OWN)
        return;
    mp_mem_free(s->mem, s->nodes[i].scratch);
    set_scratch(s, i, NULL, HOME_NONE);
}

mp_status mp_sm_before_node(mp_session *s, int32_t i, mp_error *err)
{
    const mp_node *n = &s->nodes[i];
    if (n->scratch_bytes > 0) {
        mp_status st = mp_sm_scratch_own(s, i, err);
        if (st != MP_OK)
            return st;
    }
    for (int32_t j = 0; j < n->n_out; j++) {
        int32_t t = n->out[j]->index;
        if (s->trt[t].dynamic) {
            mp_status st = mp_sm_give_own(s, t, MP_MEM_DYNAMIC, i, err);
            if (st != MP_OK)
                return st;
        }
        /* a variable tensor keeps the block of the shape it had at prepare: an operator
         * that has just inferred a larger one (a value-dependent output written into a
         * variable, as only a malformed model asks) is refused before it writes */
        if (s->trt[t].persistent && s->trt[t].home != HOME_CALLER &&
            (!s->tensors[t].data ||
             mp_mem_size(s->tensors[t].data) < s->tensors[t].bytes + XNN_EXTRA_BYTES))
            return mp_fail(err, MP_ERR_SHAPE,
                           "%s: variable tensor '%s' has no room for the %zu bytes operator #%d "
                           "makes it in this run", s->model->path, s->tensors[t].info->name,
                           s->tensors[t].bytes, (int)i);
        /* a caller's buffer was checked before the run against the shape known then; an
         * output whose shape its operator has just inferred is checked again here, before
         * the operator writes it */
        if (s->trt[t].home == HOME_CALLER && s->trt[t].caller_cap < s->tensors[t].bytes)
            return mp_fail(err, MP_ERR_ARG,
                           "%s: the buffer bound to output '%s' holds %zu bytes; operator #%d "
                           "makes it %zu bytes in this run",
                           s->model->path, s->tensors[t].info->name, s->trt[t].caller_cap,
                           (int)i, s->tensors[t].bytes);
    }
    /* a dynamic input nobody set (the caller skipped set_input): give it zeros */
    for (int32_t j = 0; j < n->n_in; j++) {
        const mp_tensor *x = n->in[j];
        if (x && s->trt[x->index].dynamic && !x->data) {
            mp_status st = mp_sm_give_own(s, x->index, MP_MEM_DYNAMIC, i, err);
            if (st != MP_OK)
                return st;
            memset(x->data, 0, x->bytes);
        }
    }
    return MP_OK;
}

void mp_sm_after_node(mp_session *s, int32_t i)
{
    const mp_node *n = &s->nodes[i];
    mp_sm_scratch_free(s, i);
    for (int32_t j = 0; j < n->n_in + n->n_out; j++) {
        const mp_tensor *x = j < n->n_in ? n->in[j] : n->out[j - n->n_in];
        if (!x)
            continue;
        const tensor_rt *r = &s->trt[x->index];
        if (r->dynamic && r->last == i && !r->model_output)
            release_dynamic(s, x->index);
    }
}

mp_status mp_sm_check_bound(mp_session *s, mp_error *err)
{
    if (s->ext_on && !s->ext_valid)
        for (int32_t t = 0; t < s->n_tensors; t++)
            if (in_static_plan(s, t))
                return mp_fail(err, MP_ERR_ARG, "%s: tensor '%s' has no place: the session runs "
                               "in the caller's arena, and no layout fits the current shapes "
                               "and bindings (mp_session_place_arena)", s->model->path,
                               s->tensors[t].info->name);
    for (int32_t i = 0; i < s->model->n_inputs + s->model->n_outputs; i++) {
        bool input = i < s->model->n_inputs;
        int32_t t = input ? s->model->inputs[i] : s->model->outputs[i - s->model->n_inputs];
        const tensor_rt *r = &s->trt[t];
        if (r->home != HOME_CALLER)
            continue;
        if (input && s->tensors[t].dtype == MP_DT_STRING) {
            mp_status st = mp_sm_string_input(s, t, s->tensors[t].data, r->caller_cap, true, err);
            if (st != MP_OK)
                return st;
        }
        size_t need = s->tensors[t].bytes + (input ? XNN_EXTRA_BYTES : 0);
        if (r->caller_cap < need)
            return mp_fail(err, MP_ERR_ARG,
                           "%s: the buffer bound to %s '%s' holds %zu bytes; it needs %zu%s",
                           s->model->path, input ? "input" : "output", s->tensors[t].info->name,
                           r->caller_cap, need, input ? " (its bytes + MP_INPUT_SLACK)" : "");
    }
    return MP_OK;
}

mp_status mp_sm_string_input(mp_session *s, int32_t t, const void *data, size_t cap, bool bound,
                              mp_error *err)
{
    mp_tensor *x = &s->tensors[t];
    size_t bytes = cap;
    if (bound) { /* the buffer's end is its last offset, if the header fits before the slack */
        const uint8_t *p = data;
        size_t room = cap > XNN_EXTRA_BYTES ? cap - XNN_EXTRA_BYTES : 0;
        int32_t count = -1, end = -1;
        if (p && room >= 8)
            memcpy(&count, p, 4);
        if (count >= 0 && (size_t)count <= (room - 8) / 4)
            memcpy(&end, p + 4 + 4 * (size_t)count, 4);
        bytes = end >= 0 && (size_t)end <= room ? (size_t)end : room;
    }
    char why[128];
    if (!mp_str_layout(data, bytes, mp_tensor_elements(x), why, sizeof why))
        return mp_fail(err, MP_ERR_FORMAT, "%s: string input '%s'%s", s->model->path,
                       x->info->name, why);
    if (x->bytes != bytes) {
        x->bytes = bytes;
        s->trt[t].version++;
    }
    return check_size(s, t, err);
}

void mp_sm_release_all(mp_session *s)
{
    for (int32_t i = 0; i < s->n_nodes; i++)
        mp_sm_scratch_free(s, i);
    for (int32_t t = 0; t < s->n_tensors; t++) {
        mp_sm_free_own(s, t);
        if (s->trt[t].home == HOME_CALLER)
            set_data(s, t, NULL, HOME_NONE);
    }
    s->stale_kept = false;
    mp_sm_release_arena(s);
    mp_mem_free(s->mem, s->ext_off);
    s->ext_off = NULL;
    s->ext_valid = false;
    for (int i = 0; i < MP_PLAN_CACHE; i++)
        free_entry(s, &s->cache[i]);
}

mp_status mp_sm_plan_items(const mp_session *s, mp_plan_item **items, int32_t *n_out,
                           mp_error *err)
{
    *items = NULL;
    *n_out = 0;
    if (s->opt.mode == MP_MEMORY_DYNAMIC)
        return MP_OK;
    int32_t n = 0;
    for (int32_t t = 0; t < s->n_tensors; t++)
        n += in_static_plan(s, t);
    for (int32_t i = 0; i < s->n_nodes; i++)
        n += scratch_planned(s, i);
    mp_plan_item *v = mp_mem_fail_now(((size_t)n + 1) * sizeof *v) ? NULL
                                                                    : calloc((size_t)n + 1, sizeof *v);
    if (!v)
        return mp_fail(err, MP_ERR_NOMEM, "out of memory listing the plan's buffers");
    /* the first operator writing each tensor (-1: none) */
    int32_t *producer = malloc(sizeof(int32_t) * ((size_t)s->n_tensors + 1));
    if (!producer) {
        free(v);
        return mp_fail(err, MP_ERR_NOMEM, "out of memory listing the plan's buffers");
    }
    for (int32_t t = 0; t < s->n_tensors; t++)
        producer[t] = -1;
    for (int32_t i = s->n_nodes - 1; i >= 0; i--)
        for (int32_t j = 0; j < s->nodes[i].n_out; j++)
            producer[s->nodes[i].out[j]->index] = i;
    int32_t k = 0;
    for (int32_t t = 0; t < s->n_tensors; t++) {
        if (!in_static_plan(s, t))
            continue;
        mp_plan_item *it = &v[k++];
        *it = (mp_plan_item){t, -1, s->tensors[t].bytes, s->trt[t].first, s->trt[t].last,
                             s->trt[t].model_output || s->trt[t].model_input};
        it->op = producer[t];
    }
    free(producer);
    for (int32_t i = 0; i < s->n_nodes; i++)
        if (scratch_planned(s, i))
            v[k++] = (mp_plan_item){-1, i, s->nodes[i].scratch_bytes, i, i, false};
    *items = v;
    *n_out = n;
    return MP_OK;
}
