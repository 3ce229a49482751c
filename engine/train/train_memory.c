/* Memory of the training step by policy: persistent tensors (trainable weights, optimizer
 * variables) one block each; the others planned into one arena by lifetime over the step's
 * timeline (PLANNED, with the engine's planners), held as one block per category (HELD), or
 * allocated at their first step and freed after their last (DYNAMIC). Every block carries its
 * category's memory kind, every planned slot its category in the PLAN event. */
#include <stdlib.h>
#include <string.h>

#include "engine/memory/plan.h"
#include "engine/train/train_internal.h"

static bool planned_tensor(const tr_tensor *x)
{
    return !x->is_const && !x->persistent && x->first >= 0;
}

static void plan_event(mp_trainer *t, uint64_t arena_id, int32_t i, uint64_t offset)
{
    if (!t->trace)
        return;
    const tr_tensor *x = &t->t[i];
    mp_event e;
    memset(&e, 0, sizeof e);
    e.type = MP_EV_PLAN;
    e.kind = (uint8_t)mp_train_cat_kind(x->cat);
    e.id = arena_id;
    e.tensor = i;
    e.aux = offset;
    e.bytes = x->bytes;
    e.op = x->first;
    e.op_last = x->last;
    mp_trace_add(t->trace, e);
}

/* The buffers of the non-persistent tensors (index map in idx); n_out of them. */
static mp_status collect(mp_trainer *t, mp_plan_buf **bufs, int32_t **idx, int32_t *n_out,
                         int cat, mp_error *err)
{
    *bufs = malloc(((size_t)t->n_tensors + 1) * sizeof **bufs);
    *idx = malloc(((size_t)t->n_tensors + 1) * sizeof **idx);
    if (!*bufs || !*idx) {
        free(*bufs), free(*idx);
        *bufs = NULL, *idx = NULL;
        return mp_fail(err, MP_ERR_NOMEM, "out of memory");
    }
    int32_t n = 0;
    for (int32_t i = 0; i < t->n_tensors; i++) {
        const tr_tensor *x = &t->t[i];
        if (!planned_tensor(x) || (cat >= 0 && (int)x->cat != cat))
            continue;
        (*bufs)[n] = (mp_plan_buf){x->bytes, x->first, x->last};
        (*idx)[n++] = i;
    }
    *n_out = n;
    return MP_OK;
}

static const mp_planner *planner(mp_trainer *t)
{
    const mp_planner *p = t->opt.planner ? mp_planner_find(t->opt.planner) : NULL;
    return p ? p : mp_planner_default();
}

static mp_status plan(mp_trainer *t, int cat, uint64_t **offsets, uint64_t *total,
                      uint64_t *bound, int32_t *bound_step, int32_t **idx, int32_t *n,
                      mp_error *err)
{
    mp_plan_buf *bufs;
    mp_status st = collect(t, &bufs, idx, n, cat, err);
    if (st != MP_OK)
        return st;
    *offsets = malloc(((size_t)*n + 1) * sizeof **offsets);
    if (!*offsets) {
        free(bufs);
        return mp_fail(err, MP_ERR_NOMEM, "out of memory");
    }
    st = planner(t)->plan(bufs, *n, TR_ALIGN, *offsets, total, t->mem);
    char why[160];
    if (st == MP_OK && !mp_plan_check(bufs, *n, TR_ALIGN, *offsets, *total, why, sizeof why))
        st = mp_fail(err, MP_ERR_BACKEND, "%s: planner %s made an invalid plan: %s", t->label,
                     planner(t)->name, why);
    else if (st != MP_OK)
        st = mp_fail(err, st, "%s: out of memory planning", t->label);
    if (bound)
        *bound = mp_plan_lower_bound(bufs, *n, TR_ALIGN, bound_step);
    free(bufs);
    return st;
}

mp_status mp_tr_memory_prepare(mp_trainer *t, mp_error *err)
{
    t->planner_name = planner(t)->name;
    /* persistent tensors: one block each */
    for (int32_t i = 0; i < t->n_tensors; i++) {
        tr_tensor *x = &t->t[i];
        if (!x->persistent)
            continue;
        x->data = mp_mem_alloc_long(t->mem, x->bytes, TR_ALIGN, mp_train_cat_kind(x->cat),
                                    MP_OWNER_TENSOR(i));
        if (!x->data)
            return mp_fail(err, MP_ERR_NOMEM, "%s: out of memory for %s (%zu bytes)", t->label,
                           x->name, x->bytes);
        if (x->cat == MP_TCAT_TRAINABLE)
            memcpy(x->data, x->cdata, x->bytes);
        else
            memset(x->data, 0, x->bytes);
    }
    if (t->opt.policy == MP_TRAIN_DYNAMIC)
        return MP_OK;
    if (t->opt.policy == MP_TRAIN_HELD) {
        for (int c = 0; c < MP_TCAT_COUNT; c++) {
            uint64_t sum = 0;
            for (int32_t i = 0; i < t->n_tensors; i++)
                if (planned_tensor(&t->t[i]) && (int)t->t[i].cat == c)
                    sum += mp_plan_align_up(t->t[i].bytes, TR_ALIGN);
            if (!sum)
                continue;
            t->held[c] = mp_mem_alloc_long(t->mem, sum, TR_ALIGN, mp_train_cat_kind(c),
                                           MP_OWNER_NONE);
            if (!t->held[c])
                return mp_fail(err, MP_ERR_NOMEM, "%s: out of memory for the %s category "
                               "(%llu bytes)", t->label, mp_train_cat_name(c),
                               (unsigned long long)sum);
            uint64_t at = 0;
            for (int32_t i = 0; i < t->n_tensors; i++)
                if (planned_tensor(&t->t[i]) && (int)t->t[i].cat == c) {
                    t->t[i].data = (float *)((char *)t->held[c] + at);
                    at += mp_plan_align_up(t->t[i].bytes, TR_ALIGN);
                }
        }
        return MP_OK;
    }
    uint64_t *off = NULL, total = 0;
    int32_t *idx = NULL, n = 0;
    mp_status st = plan(t, -1, &off, &total, &t->lower_bound, &t->lb_step, &idx, &n, err);
    if (st == MP_OK) {
        t->arena = mp_mem_alloc_long(t->mem, total ? total : 1, TR_ALIGN, MP_MEM_STATIC,
                                     MP_OWNER_NONE);
        if (!t->arena)
            st = mp_fail(err, MP_ERR_NOMEM, "%s: out of memory for the planned arena (%llu "
                         "bytes)", t->label, (unsigned long long)total);
    }
    if (st == MP_OK) {
        t->arena_bytes = total;
        uint64_t id = mp_mem_block_id(t->arena);
        for (int32_t k = 0; k < n; k++) {
            t->t[idx[k]].data = (float *)((char *)t->arena + off[k]);
            plan_event(t, id, idx[k], off[k]);
        }
    }
    free(off);
    free(idx);
    return st;
}

mp_status mp_tr_memory_step_begin(mp_trainer *t, int32_t step, mp_error *err)
{
    if (t->opt.policy != MP_TRAIN_DYNAMIC)
        return MP_OK;
    for (int32_t i = 0; i < t->n_tensors; i++) {
        tr_tensor *x = &t->t[i];
        if (!planned_tensor(x) || x->first != step || x->data)
            continue;
        x->data = mp_mem_alloc(t->mem, x->bytes, TR_ALIGN, mp_train_cat_kind(x->cat),
                               MP_OWNER_TENSOR(i));
        if (!x->data)
            return mp_fail(err, MP_ERR_NOMEM, "%s: out of memory for %s (%zu bytes)", t->label,
                           x->name, x->bytes);
    }
    return MP_OK;
}

void mp_tr_memory_step_end(mp_trainer *t, int32_t step)
{
    if (t->opt.policy != MP_TRAIN_DYNAMIC)
        return;
    for (int32_t i = 0; i < t->n_tensors; i++) {
        tr_tensor *x = &t->t[i];
        if (planned_tensor(x) && x->data && (step < 0 || x->last == step)) {
            mp_mem_free(t->mem, x->data);
            x->data = NULL;
        }
    }
}

void mp_tr_memory_release(mp_trainer *t)
{
    if (!t->t)
        return;
    mp_tr_memory_step_end(t, -1);
    for (int32_t i = 0; i < t->n_tensors; i++) {
        tr_tensor *x = &t->t[i];
        if (x->persistent && x->data && x->data != x->cdata) {
            mp_mem_free(t->mem, x->data);
            x->data = (float *)x->cdata;
        } else if (planned_tensor(x)) {
            x->data = NULL;
        }
    }
    for (int c = 0; c < MP_TCAT_COUNT; c++) {
        mp_mem_free(t->mem, t->held[c]);
        t->held[c] = NULL;
    }
    mp_mem_free(t->mem, t->arena);
    t->arena = NULL;
}

mp_status mp_trainer_memory(mp_trainer *t, mp_train_memory *out, mp_error *err)
{
    memset(out, 0, sizeof *out);
    out->planner = planner(t)->name;
    out->n_steps = t->n_steps;
    out->n_forward = t->n_nodes;
    out->n_backward = t->n_steps - t->n_nodes - 1;
    out->step_flops = t->flops_step;
    out->forward_flops = t->flops_fwd;
    for (int32_t i = 0; i < t->n_tensors; i++) {
        const tr_tensor *x = &t->t[i];
        if (!x->persistent && (x->is_const || x->first < 0))
            continue;
        uint64_t b = mp_plan_align_up(x->bytes, TR_ALIGN);
        out->held[x->cat] += b;
        out->held_total += b;
        if (x->persistent) {
            out->persistent += b;
            out->alone[x->cat] += b;
            out->at_bound[x->cat] += b;
        }
    }
    uint64_t *off = NULL, total = 0;
    int32_t *idx = NULL, n = 0, step = -1;
    mp_status st = plan(t, -1, &off, &total, &out->lower_bound, &step, &idx, &n, err);
    if (st != MP_OK)
        return st;
    out->lower_bound_step = step;
    out->arena = total;
    out->n_planned = n;
    for (int32_t k = 0; k < n; k++) {
        const tr_tensor *x = &t->t[idx[k]];
        if (x->first <= step && step <= x->last)
            out->at_bound[x->cat] += mp_plan_align_up(x->bytes, TR_ALIGN);
    }
    free(off), free(idx);
    out->planned_total = out->persistent + out->arena;
    for (int c = 0; c < MP_TCAT_COUNT && st == MP_OK; c++) {
        st = plan(t, c, &off, &total, NULL, NULL, &idx, &n, err);
        if (st == MP_OK)
            out->alone[c] += total;
        free(off), free(idx);
    }
    return st;
}
