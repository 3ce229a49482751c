/* Models of several subgraphs: the child sessions that run the subgraphs a WHILE or IF calls,
 * and the calls themselves (engine/session_call.h).
 *
 * The root session (subgraph 0) makes, at load, one child per further subgraph: the model's
 * view of it (model.h), the root's options, mp_mem, trace and thread pool. A child opens no
 * phase (it runs inside its caller's: in_phase stays set), has no trace tables of its own (the
 * root's tables hold every subgraph's tensors and operators, one subgraph after another) and
 * records through a trace scope (trace.h) that maps its numbers into those tables while it
 * works: its blocks, plans and operator marks name the right tensors and operators, and its
 * operator marks carry the loop iteration. A child's memory is managed as the root's is
 * (session_memory.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/session_call.h"
#include "engine/session_internal.h"

void mp_ss_trace_bases(const mp_model *m, int32_t *tensor_base, int32_t *op_base,
                       int32_t *n_tensors, int32_t *n_ops)
{
    int32_t nt = 0, no = 0, n = m->n_subgraphs > 0 ? m->n_subgraphs : 1;
    for (int32_t k = 0; k < n; k++) {
        const mp_model *g = mp_model_subgraph(m, k);
        if (tensor_base)
            tensor_base[k] = nt;
        if (op_base)
            op_base[k] = no;
        nt += g->n_tensors;
        no += g->n_ops;
    }
    *n_tensors = nt;
    *n_ops = no;
}

/* Record as subgraph k of the root (iteration: 0 keeps the current one). */
static mp_trace_scope scope_enter(mp_session *root, int32_t k, uint64_t iteration)
{
    if (!root->trace)
        return (mp_trace_scope){0, 0, 0};
    mp_trace_scope was = mp_trace_set_scope(root->trace, (mp_trace_scope){0, 0, 0});
    mp_trace_scope sc = {root->tensor_base[k], root->op_base[k],
                         iteration ? iteration : was.iteration};
    mp_trace_set_scope(root->trace, sc);
    return was;
}

static void scope_leave(mp_session *root, mp_trace_scope was)
{
    if (root->trace)
        mp_trace_set_scope(root->trace, was);
}

/* The child running subgraph k: its session shares the root's everything but the model. */
static mp_status child_create(mp_session *root, int32_t k, mp_error *err)
{
    mp_session *c = mp_mem_calloc(root->mem, sizeof *c, 0, MP_MEM_ENGINE, MP_OWNER_NONE);
    if (!c)
        return mp_fail(err, MP_ERR_NOMEM, "out of memory loading %s", root->model->path);
    c->opt = root->opt;
    c->planner = root->planner;
    c->trace = root->trace;
    c->mem = root->mem;
    c->pool = root->pool;
    c->pool_owned = false;
    c->plan_at = MP_PLAN_AT_PREPARE;
    c->in_phase = true; /* runs inside its caller's phases */
    c->root = root;
    c->subgraph = k;
    root->subs[k] = c;
    mp_trace_scope was = scope_enter(root, k, 0);
    mp_status st = mp_ss_attach(c, (mp_model *)mp_model_subgraph(root->model, k), err);
    scope_leave(root, was);
    if (st != MP_OK) {
        root->subs[k] = NULL;
        mp_mem_free(root->mem, c);
    }
    return st;
}

/* The subgraph operator op calls as its q-th callee (model.h's mp_op_callee), or -1 when it
 * called it already as an earlier one (counted once). The reader checked every index. */
static int32_t callee_of(const mp_op_info *op, int32_t q)
{
    int32_t k = mp_op_callee(op, q);
    for (int32_t e = 0; e < q; e++)
        if (mp_op_callee(op, e) == k)
            return -1;
    return k;
}

/* caller_at and callers: every calling operator by the subgraph it calls (two passes). */
static mp_status callers_index(mp_session *s, mp_error *err)
{
    const mp_model *m = s->model;
    int32_t n = m->n_subgraphs, total = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int32_t g = 0; g < n; g++) {
            const mp_model *sg = mp_model_subgraph(m, g);
            for (int32_t i = 0; i < sg->n_ops; i++)
                for (int32_t q = 0; q < mp_op_n_callees(&sg->ops[i]); q++) {
                    int32_t k = callee_of(&sg->ops[i], q);
                    if (k <= 0 || k >= n)
                        continue;
                    if (pass == 0)
                        s->caller_at[k + 1]++;
                    else
                        s->callers[s->caller_at[k]++] = (struct sg_caller){g, i};
                }
        }
        if (pass == 0) {
            for (int32_t k = 0; k < n; k++)
                s->caller_at[k + 1] += s->caller_at[k];
            total = s->caller_at[n];
            s->callers = mp_mem_calloc(s->mem, sizeof *s->callers * ((size_t)total + 1), 0,
                                       MP_MEM_ENGINE, MP_OWNER_NONE);
            if (!s->callers)
                return mp_fail(err, MP_ERR_NOMEM, "out of memory loading %s", m->path);
        }
    }
    /* the fill advanced caller_at[k] to the end of k's callers, the start of k + 1's */
    for (int32_t k = n; k > 0; k--)
        s->caller_at[k] = s->caller_at[k - 1];
    s->caller_at[0] = 0;
    return MP_OK;
}

mp_status mp_ss_children_create(mp_session *s, mp_error *err)
{
    const mp_model *m = s->model;
    if (m->n_subgraphs <= 1)
        return MP_OK;
    size_t n = (size_t)m->n_subgraphs;
    s->subs = mp_mem_calloc(s->mem, sizeof(mp_session *) * n, 0, MP_MEM_ENGINE, MP_OWNER_NONE);
    s->tensor_base = mp_mem_calloc(s->mem, sizeof(int32_t) * n, 0, MP_MEM_ENGINE, MP_OWNER_NONE);
    s->op_base = mp_mem_calloc(s->mem, sizeof(int32_t) * n, 0, MP_MEM_ENGINE, MP_OWNER_NONE);
    s->caller_at = mp_mem_calloc(s->mem, sizeof(int32_t) * (n + 1), 0, MP_MEM_ENGINE,
                                 MP_OWNER_NONE);
    if (!s->subs || !s->tensor_base || !s->op_base || !s->caller_at)
        return mp_fail(err, MP_ERR_NOMEM, "out of memory loading %s", m->path);
    int32_t nt, no;
    mp_ss_trace_bases(m, s->tensor_base, s->op_base, &nt, &no);
    mp_status st = callers_index(s, err);
    if (st != MP_OK)
        return st;
    for (int32_t k = 1; k < m->n_subgraphs && st == MP_OK; k++)
        st = child_create(s, k, err);
    return st;
}

void mp_ss_children_destroy(mp_session *s)
{
    if (s->root != s)
        return;
    mp_mem_free(s->mem, s->caller_at);
    mp_mem_free(s->mem, s->callers);
    s->caller_at = NULL;
    s->callers = NULL;
    if (!s->subs)
        return;
    for (int32_t k = 1; k < s->model->n_subgraphs; k++) {
        mp_session *c = s->subs[k];
        if (!c)
            continue;
        mp_trace_scope was = scope_enter(s, k, 0);
        /* its unload frees its tables, memory and operators, never the model (a view) */
        mp_ss_destroy_child(c);
        scope_leave(s, was);
        s->subs[k] = NULL;
    }
    mp_mem_free(s->mem, s->subs);
    mp_mem_free(s->mem, s->tensor_base);
    mp_mem_free(s->mem, s->op_base);
    s->subs = NULL;
    s->tensor_base = s->op_base = NULL;
}

/* ---- calls (session_call.h) ---------------------------------------------------------- */

static mp_session *callee(const mp_node *n, int32_t k)
{
    mp_session *root = n->session->root;
    return root->subs && k > 0 && k < root->model->n_subgraphs ? root->subs[k] : NULL;
}

/* The callee's input shapes from in[], then its prepare. */
static mp_status call_prepare(mp_session *c, int32_t n_in, mp_tensor *const *in, mp_error *err)
{
    const mp_model *g = c->model;
    if (n_in != g->n_inputs)
        return mp_fail(err, MP_ERR_FORMAT, "%s: called with %d inputs; it takes %d", g->path,
                       (int)n_in, (int)g->n_inputs);
    for (int32_t i = 0; i < n_in; i++) {
        mp_status st = mp_ss_set_shape(c, g->inputs[i], in[i]->rank, in[i]->dims, err);
        if (st != MP_OK)
            return st;
    }
    return mp_ss_prepare(c, err);
}

mp_status mp_call_prepare(mp_node *n, int32_t subgraph, int32_t n_in, mp_tensor *const *in,
                          mp_error *err)
{
    mp_session *c = callee(n, subgraph);
    if (!c)
        return mp_fail(err, MP_ERR_FORMAT, "%s: no subgraph %d", n->model_path, (int)subgraph);
    mp_trace_scope was = scope_enter(c->root, subgraph, 0);
    mp_status st = call_prepare(c, n_in, in, err);
    scope_leave(c->root, was);
    mp_mem_set_current(n->mem, n->index);
    return st;
}

static mp_status call_run(mp_session *c, int32_t n_in, mp_tensor *const *in, mp_error *err)
{
    mp_status st = call_prepare(c, n_in, in, err);
    const mp_model *g = c->model;
    for (int32_t i = 0; i < n_in && st == MP_OK; i++) {
        int32_t ti = g->inputs[i];
        mp_tensor *t = &c->tensors[ti];
        /* dynamic mode: the input's own block, sized again when this call's shape differs
         * from the last one's (a block kept from a smaller shape would be written past) */
        if (!t->data || c->trt[ti].home == HOME_OWN)
            st = mp_sm_give_own(c, ti, MP_MEM_DYNAMIC, -1, err);
        if (st != MP_OK)
            break;
        if (t->bytes != in[i]->bytes || (t->bytes && !in[i]->data))
            return mp_fail(err, MP_ERR_SHAPE, "%s: input '%s' takes %zu bytes; the caller has %zu",
                           g->path, t->info->name, t->bytes, in[i]->bytes);
        if (t->data != in[i]->data && t->bytes)
            memcpy(t->data, in[i]->data, t->bytes); /* not a copy event: no caller's buffer */
        c->trt[ti].was_set = true;
        c->trt[ti].set_version = c->trt[ti].version;
    }
    return st == MP_OK ? mp_ss_run(c, err) : st;
}

mp_status mp_call_run(mp_node *n, int32_t subgraph, int32_t n_in, mp_tensor *const *in,
                      uint64_t iteration, mp_error *err)
{
    mp_session *c = callee(n, subgraph);
    if (!c)
        return mp_fail(err, MP_ERR_FORMAT, "%s: no subgraph %d", n->model_path, (int)subgraph);
    mp_trace_scope was = scope_enter(c->root, subgraph, iteration);
    mp_status st = call_run(c, n_in, in, err);
    scope_leave(c->root, was);
    mp_mem_set_current(n->mem, n->index);
    return st;
}

void mp_call_release(mp_node *n, int32_t subgraph)
{
    mp_session *c = callee(n, subgraph);
    if (!c)
        return;
    mp_trace_scope was = scope_enter(c->root, subgraph, 0);
    mp_sm_release_arena(c);
    scope_leave(c->root, was);
    mp_mem_set_current(n->mem, n->index);
}

bool mp_call_next_iteration(const mp_node *n, uint64_t *cap)
{
    mp_session *root = n->session->root;
    *cap = root->opt.max_iterations ? root->opt.max_iterations : MP_WHILE_MAX_ITERATIONS;
    return ++root->iterations <= *cap;
}

const mp_tensor *mp_call_output(const mp_node *n, int32_t subgraph, int32_t i)
{
    const mp_session *c = callee(n, subgraph);
    return c && i >= 0 && i < c->model->n_outputs ? &c->tensors[c->model->outputs[i]] : NULL;
}

bool mp_call_output_deferred(const mp_node *n, int32_t subgraph, int32_t i)
{
    const mp_session *c = callee(n, subgraph);
    return c && i >= 0 && i < c->model->n_outputs && c->trt[c->model->outputs[i]].producer_deferred;
}

/* ---- what is planned for each subgraph (mp_session_subgraph_plan_items) ------------------ */

mp_status mp_session_subgraph_plan_items(mp_session *s, int32_t k, mp_plan_item **items,
                                         int32_t *n, mp_subgraph_when *when,
                                         uint64_t *arena_bytes, mp_error *err)
{
    *items = NULL;
    *n = 0;
    *when = MP_SG_NONE;
    *arena_bytes = 0;
    if (!s->model)
        return mp_fail(err, MP_ERR_ARG, "no model loaded");
    int32_t count = s->model->n_subgraphs > 0 ? s->model->n_subgraphs : 1;
    if (k < 0 || k >= count)
        return mp_fail(err, MP_ERR_ARG, "%s: no subgraph %d (the model has %d)", s->model->path,
                       (int)k, (int)count);
    if (k == 0) {
        mp_status st = mp_session_plan_items(s, items, n, NULL, err);
        *when = st == MP_OK && s->opt.mode != MP_MEMORY_DYNAMIC ? MP_SG_AT_PREPARE : MP_SG_NONE;
        *arena_bytes = s->arena_bytes;
        return st;
    }
    /* the root's prepare, when due, plans the subgraphs it calls */
    mp_status st = !s->prepared || s->shapes_dirty || s->plan_dirty ? mp_session_prepare(s, err)
                                                                     : MP_OK;
    if (st != MP_OK)
        return st;
    mp_session *c = s->subs ? s->subs[k] : NULL;
    if (!c || s->opt.mode == MP_MEMORY_DYNAMIC)
        return MP_OK;
    bool once = false, again = false;
    for (int32_t j = s->caller_at[k]; j < s->caller_at[k + 1]; j++) {
        const struct sg_caller *w = &s->callers[j];
        const mp_session *cs = w->subgraph == 0 ? s : s->subs[w->subgraph];
        if (!cs)
            continue;
        once |= cs->model->ops[w->op].opcode == MP_OP_CALL_ONCE;
        /* a caller whose outputs are known only while running: the shapes it passes change */
        again |= cs->prepared && cs->nrt[w->op].deferred;
    }
    if (!once || c->model->n_inputs != 0) {
        if (!c->prepared)
            return MP_OK; /* no prepare called it */
        *when = again ? MP_SG_AGAIN : MP_SG_AT_PREPARE;
        *arena_bytes = c->arena_bytes;
        return mp_sm_plan_items(c, items, n, err);
    }
    /* a CALL_ONCE's: planned as its first call plans it (its shapes are the model's, no
     * caller gives any), then its arena freed as after that call */
    mp_trace_scope was = scope_enter(s, k, 0);
    st = mp_ss_prepare(c, err);
    if (st == MP_OK) {
        *when = MP_SG_AT_RUN;
        *arena_bytes = c->arena_bytes;
        st = mp_sm_plan_items(c, items, n, err);
    }
    mp_sm_release_arena(c);
    scope_leave(s, was);
    return st;
}
