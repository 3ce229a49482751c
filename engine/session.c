/* The session: loads a model, infers shapes, gives tensors storage, creates operators once,
 * and runs them in order (see session.h for the call sequence).
 *
 * Memory for the tensors comes from the managers in session_memory.c; every public call
 * opens a phase of the trace (load, prepare, shape, io, run K, teardown).
 *
 * Shape handling: infer_all() walks the operators in execution order. An operator whose
 * inputs all have values known at prepare time (constants, shape arithmetic) is evaluated
 * right there ("folded") and skipped by runs. An operator whose output shape needs a value
 * known only while running is "deferred": its infer, storage and setup happen inside the
 * run. Every tensor carries a version, bumped when its shape or storage changes; an operator
 * is set up again (kernel prepare) only when the versions it last saw have changed. */
#include "engine/session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xnnpack.h>

#include "engine/session_internal.h"

const size_t MP_INPUT_SLACK = XNN_EXTRA_BYTES;

const char *mp_memory_mode_name(mp_memory_mode m)
{
    return m == MP_MEMORY_STATIC ? "static" : m == MP_MEMORY_DYNAMIC ? "dynamic" : "auto";
}

int mp_memory_mode_parse(const char *name)
{
    for (int m = MP_MEMORY_AUTO; m <= MP_MEMORY_DYNAMIC; m++)
        if (strcmp(name, mp_memory_mode_name((mp_memory_mode)m)) == 0)
            return m;
    return -1;
}

const char *mp_plan_at_name(mp_plan_at p)
{
    return p == MP_PLAN_AT_PREPARE ? "prepare" : p == MP_PLAN_AT_FIRST_RUN ? "first-run" : "default";
}

int mp_plan_at_parse(const char *name)
{
    for (int p = MP_PLAN_AT_DEFAULT; p <= MP_PLAN_AT_FIRST_RUN; p++)
        if (strcmp(name, mp_plan_at_name((mp_plan_at)p)) == 0)
            return p;
    return -1;
}

/* Both modes plan at prepare unless asked otherwise: planning at the first run makes one
 * arena instead of two in case C, but it also moves the operators' creation (XNNPACK packs
 * weights when an operator is first set up, which needs its tensors' storage) from prepare
 * into the first run, which then costs far more than the re-plan it avoids (docs/memory.md,
 * "Plan at prepare or at the first run", measures both). */
mp_plan_at mp_plan_at_resolve(mp_memory_mode mode, mp_plan_at p)
{
    (void)mode;
    return p != MP_PLAN_AT_DEFAULT ? p : MP_PLAN_AT_PREPARE;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A public call opens a trace phase unless one is open already (prepare called by run
 * stays inside the run). Returns whether this call opened it. */
static bool phase_begin(mp_session *s, mp_phase_kind kind, uint64_t run)
{
    if (s->in_phase)
        return false;
    s->in_phase = true;
    if (s->trace)
        mp_trace_phase_begin(s->trace, kind, run);
    return true;
}

static void phase_end(mp_session *s, bool opened)
{
    if (!opened)
        return;
    s->in_phase = false;
    if (s->trace)
        mp_trace_phase_end(s->trace);
}

mp_status mp_session_create(const mp_session_options *opt, mp_session **out, mp_error *err)
{
    *out = NULL;
    enum xnn_status xs = (enum xnn_status)mp_mem_xnn_init();
    if (xs != xnn_status_success)
        return mp_fail(err, mp_xnn_status(xs), "XNNPACK failed to initialize on this CPU: %s",
                       mp_xnn_status_text(xs));
    mp_session *s = mp_mem_fail_now(sizeof *s) ? NULL : calloc(1, sizeof *s);
    if (!s)
        return mp_fail(err, MP_ERR_NOMEM, "out of memory creating a session");
    if (opt)
        s->opt = *opt;
    s->opt.threads = opt && opt->threads > 0 ? opt->threads : 1;
    s->opt.max_tensor_bytes =
        opt && opt->max_tensor_bytes ? opt->max_tensor_bytes : MP_DEFAULT_MAX_TENSOR;
    if (s->opt.mode > MP_MEMORY_DYNAMIC) {
        int mode = (int)s->opt.mode;
        free(s);
        return mp_fail(err, MP_ERR_ARG, "unknown memory mode %d", mode);
    }
    if ((unsigned)s->opt.plan_at > MP_PLAN_AT_FIRST_RUN) {
        int p = (int)s->opt.plan_at;
        free(s);
        return mp_fail(err, MP_ERR_ARG, "unknown plan-at policy %d", p);
    }
    /* the debug switch reproduces Samsung ONE, which plans at prepare */
    s->plan_at = s->opt.keep_stale_arena && s->opt.plan_at == MP_PLAN_AT_DEFAULT
                     ? MP_PLAN_AT_PREPARE : mp_plan_at_resolve(s->opt.mode, s->opt.plan_at);
    s->planner = s->opt.planner ? mp_planner_find(s->opt.planner) : mp_planner_default();
    if (!s->planner) {
        const char *name = s->opt.planner;
        free(s);
        return mp_fail(err, MP_ERR_ARG, "unknown planner '%s'", name);
    }
    s->opt.planner = NULL; /* the caller's string need not outlive this call */
    s->trace = s->opt.trace;
    s->root = s;
    s->mem = mp_mem_create();
    if (!s->mem) {
        free(s);
        return mp_fail(err, MP_ERR_NOMEM, "out of memory creating a session");
    }
    mp_mem_set_trace(s->mem, s->trace);
    /* no single buffer (XNNPACK's included) may exceed the tensor limit plus slack */
    mp_mem_set_max_alloc(s->mem, s->opt.max_tensor_bytes + 4096);
    mp_mem_set_huge_pages(s->mem, !s->opt.no_huge_pages);
    if (s->opt.threadpool) {
        s->pool = (pthreadpool_t)s->opt.threadpool;
    } else if (s->opt.threads > 1) {
        s->pool_owned = true;
        s->pool = pthreadpool_create((size_t)s->opt.threads);
        if (!s->pool) {
            int threads = s->opt.threads;
            mp_mem_destroy(s->mem);
            free(s);
            return mp_fail(err, MP_ERR_BACKEND, "cannot create a pool of %d threads", threads);
        }
    }
    *out = s;
    return MP_OK;
}

static void release_nodes(mp_session *s)
{
    for (int32_t i = 0; i < s->n_nodes; i++) {
        mp_node *n = &s->nodes[i];
        if (s->nrt[i].kernel && s->nrt[i].kernel->release) {
            mp_mem_set_current(s->mem, i);
            s->nrt[i].kernel->release(n);
        }
        s->nrt[i].created = false;
    }
}

static void unload(mp_session *s)
{
    if (!s->model)
        return;
    mp_ss_children_destroy(s);
    if (s->root == s)
        mp_res_destroy(s); /* the model's resource variables */
    /* attach() may have failed part-way through its tables: then nothing else exists */
    if (s->tensors && s->trt && s->nodes && s->nrt && s->slots) {
        release_nodes(s);
        mp_sm_release_all(s);
    }
    mp_mem_free(s->mem, s->tensors);
    mp_mem_free(s->mem, s->trt);
    mp_mem_free(s->mem, s->nodes);
    mp_mem_free(s->mem, s->nrt);
    mp_mem_free(s->mem, s->slots);
    if (s->root == s) { /* a child's model is a view of the root's */
        mp_model_free(s->model);
        mp_mem_note_model_freed(s->mem);
    }
    s->model = NULL;
    s->tensors = NULL;
    s->nodes = NULL;
    s->trt = NULL;
    s->nrt = NULL;
    s->slots = NULL;
    s->n_tensors = s->n_nodes = 0;
    s->prepared = false;
}

void mp_session_destroy(mp_session *s)
{
    if (!s)
        return;
    mp_mem_set_current(s->mem, -1);
    bool ph = phase_begin(s, MP_PHASE_TEARDOWN, 0);
    unload(s);
    phase_end(s, ph);
    if (s->pool && s->pool_owned)
        pthreadpool_destroy(s->pool);
    mp_mem_set_current(NULL, -1);
    mp_mem_destroy(s->mem);
    free(s);
}

/* Refuse a model with operators memprof has no kernel for, naming each missing one once
 * with the index of its first use. */
static mp_status fail_unsupported(const mp_model *m, mp_error *err)
{
    char list[400] = "";
    size_t len = 0;
    int missing = 0;
    for (int32_t i = 0; i < m->n_ops; i++) {
        int32_t c = m->ops[i].opcode;
        if (mp_kernel_find(c))
            continue;
        bool seen = false;
        for (int32_t j = 0; j < i && !seen; j++)
            seen = m->ops[j].opcode == c;
        if (seen)
            continue;
        if (len < sizeof list)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s #%d %s",
                                    missing ? "," : "", i, mp_op_name(c));
        missing++;
    }
    return mp_fail(err, MP_ERR_UNSUPPORTED, "%s: %s not supported by memprof:%s", m->path,
                   missing > 1 ? "operators are" : "operator is", list);
}

/* The graph must be in single-assignment execution order: every tensor an operator reads is a
 * constant, a model input, the output of an earlier operator, or a variable tensor in an
 * input where the operator keeps its state (mp_op_state_input); every tensor is written at
 * most once (never a constant or a model input). Kernels size their work from their own
 * outputs' shapes, so a tensor with two writers could be overrun by the first one, and a
 * tensor read before it is written would be read with a shape its writer changes later. */
static mp_status check_dataflow(mp_session *s, const mp_model *m, mp_error *err)
{
    enum { NONE = -1, MODEL_INPUT = -2 };
    int32_t *writer = mp_mem_alloc(s->mem, sizeof(int32_t) * ((size_t)m->n_tensors + 1), 0,
                                   MP_MEM_ENGINE, MP_OWNER_NONE);
    if (!writer)
        return mp_fail(err, MP_ERR_NOMEM, "out of memory loading %s", m->path);
    for (int32_t t = 0; t < m->n_tensors; t++)
        writer[t] = NONE;
    for (int32_t i = 0; i < m->n_inputs; i++)
        writer[m->inputs[i]] = MODEL_INPUT;
    mp_status st = MP_OK;
    for (int32_t i = 0; i < m->n_ops && st == MP_OK; i++) {
        const mp_op_info *op = &m->ops[i];
        const char *name = mp_op_name(op->opcode);
        for (int32_t j = 0; j < op->n_inputs && st == MP_OK; j++) {
            int32_t t = op->inputs[j];
            bool state = m->tensors[t >= 0 ? t : 0].is_variable && mp_op_state_input(op->opcode, j);
            if (t >= 0 && !m->tensors[t].data && !state && writer[t] == NONE)
                st = mp_fail(err, MP_ERR_FORMAT,
                             "%s: operator #%d %s reads tensor %d '%s', which is not a constant, "
                             "not a model input, %snot written by an earlier operator",
                             m->path, i, name, t, m->tensors[t].name,
                             m->tensors[t].is_variable ? "not state this operator keeps, and " : "and ");
        }
        for (int32_t j = 0; j < op->n_outputs && st == MP_OK; j++) {
            int32_t t = op->outputs[j];
            if (m->tensors[t].data || writer[t] != NONE)
                st = mp_fail(err, MP_ERR_FORMAT,
                             "%s: operator #%d %s writes tensor %d '%s', which is already %s",
                             m->path, i, name, t, m->tensors[t].name,
                             m->tensors[t].data ? "a constant"
                             : writer[t] == MODEL_INPUT ? "a model input"
                                                        : "written by an earlier operator");
            else
                writer[t] = i;
        }
    }
    for (int32_t i = 0; i < m->n_outputs && st == MP_OK; i++) {
        int32_t t = m->outputs[i];
        if (writer[t] == NONE && !m->tensors[t].data)
            st = mp_fail(err, MP_ERR_FORMAT,
                         "%s: model output %d '%s' is written by no operator", m->path, i,
                         m->tensors[t].name);
    }
    mp_mem_free(s->mem, writer);
    return st;
}

/* Names of the model's tensors and operators, so that the trace stands on its own: every
 * subgraph's, one after another (trace.h, mp_trace_set_scope); an operator's tensors by their
 * numbers in these tables. */
static bool describe_in_trace(mp_session *s)
{
    const mp_model *m = s->model;
    mp_trace_meta *tm = mp_trace_meta_mut(s->trace);
    int32_t n_t = 0, n_ops = 0;
    mp_ss_trace_bases(m, NULL, NULL, &n_t, &n_ops);
    if (!mp_trace_alloc_tables(s->trace, n_t, n_ops, m->n_inputs, m->n_outputs) ||
        !mp_trace_set_str(s->trace, &tm->model, m->path) ||
        !mp_trace_set_str(s->trace, &tm->mode, mp_memory_mode_name(s->opt.mode)) ||
        !mp_trace_set_str(s->trace, &tm->planner, s->planner->name))
        return false;
    tm->threads = s->opt.threads;
    int32_t tb = 0, ob = 0;
    for (int32_t k = 0; k < (m->n_subgraphs > 0 ? m->n_subgraphs : 1); k++) {
        const mp_model *g = mp_model_subgraph(m, k);
        for (int32_t t = 0; t < g->n_tensors; t++) {
            tm->tensors[tb + t].dtype = g->tensors[t].dtype;
            tm->tensors[tb + t].is_const = g->tensors[t].data != NULL && !g->tensors[t].is_variable;
            if (!mp_trace_set_str(s->trace, &tm->tensors[tb + t].name, g->tensors[t].name))
                return false;
        }
        for (int32_t i = 0; i < g->n_ops; i++) {
            const mp_op_info *op = &g->ops[i];
            size_t n_io = (size_t)op->n_inputs + (size_t)op->n_outputs;
            int32_t *io = NULL;
            const int32_t *ins = op->inputs, *outs = op->outputs;
            if (k > 0) { /* renumbered into the tables */
                io = mp_mem_alloc(s->mem, sizeof(int32_t) * (n_io + 1), 0, MP_MEM_ENGINE,
                                  MP_OWNER_NONE);
                if (!io)
                    return false;
                for (size_t j = 0; j < n_io; j++) {
                    int32_t t = j < (size_t)op->n_inputs ? op->inputs[j]
                                                         : op->outputs[j - (size_t)op->n_inputs];
                    io[j] = t >= 0 ? t + tb : -1;
                }
                ins = io;
                outs = io + op->n_inputs;
            }
            bool ok = mp_trace_set_op(s->trace, ob + i, mp_op_name(op->opcode), op->n_inputs, ins,
                                      op->n_outputs, outs);
            mp_mem_free(s->mem, io);
            if (!ok)
                return false;
        }
        tb += g->n_tensors;
        ob += g->n_ops;
    }
    memcpy(tm->inputs, m->inputs, sizeof(int32_t) * (size_t)m->n_inputs);
    memcpy(tm->outputs, m->outputs, sizeof(int32_t) * (size_t)m->n_outputs);
    return true;
}

/* Build the runtime view of a verified model (the root's) or subgraph view (a child's). */
mp_status mp_ss_attach(mp_session *s, mp_model *m, mp_error *err)
{
    bool child = s->root != s;
    s->model = m;
    s->n_tensors = m->n_tensors;
    s->n_nodes = m->n_ops;
    size_t n_slots = 0;
    for (int32_t i = 0; i < m->n_ops; i++)
        n_slots += (size_t)m->ops[i].n_inputs + (size_t)m->ops[i].n_outputs;
    mp_owner own = MP_OWNER_NONE;
    s->tensors = mp_mem_calloc(s->mem, sizeof(mp_tensor) * (size_t)m->n_tensors, 0, MP_MEM_ENGINE, own);
    s->trt = mp_mem_calloc(s->mem, sizeof(tensor_rt) * (size_t)m->n_tensors, 0, MP_MEM_ENGINE, own);
    s->nodes = mp_mem_calloc(s->mem, sizeof(mp_node) * (size_t)m->n_ops, 0, MP_MEM_ENGINE, own);
    s->nrt = mp_mem_calloc(s->mem, sizeof(node_rt) * (size_t)m->n_ops, 0, MP_MEM_ENGINE, own);
    s->slots = mp_mem_calloc(s->mem, sizeof(mp_tensor *) * (n_slots ? n_slots : 1), 0,
                             MP_MEM_ENGINE, own);
    if (!s->tensors || !s->trt || !s->nodes || !s->nrt || !s->slots) {
        mp_status st = mp_fail(err, MP_ERR_NOMEM, "out of memory loading %s", m->path);
        unload(s); /* frees m */
        return st;
    }
    for (int32_t t = 0; t < m->n_tensors; t++)
        s->trt[t].shares = -1;
    for (int32_t i = 0; i < m->n_ops; i++)
        if (!mp_kernel_find(m->ops[i].opcode)) {
            mp_status st = fail_unsupported(m, err);
            unload(s);
            return st;
        }
    mp_status vst = check_dataflow(s, m, err);
    if (vst != MP_OK) {
        unload(s);
        return vst;
    }
    if (!child)
        mp_mem_note_model(s->mem, m->const_bytes, m->heap_bytes);
    for (int32_t t = 0; t < m->n_tensors; t++) {
        const mp_tensor_info *ti = &m->tensors[t];
        mp_tensor *x = &s->tensors[t];
        x->index = t;
        x->info = ti;
        x->dtype = ti->dtype;
        mp_tensor_set_shape(x, ti->rank, ti->shape);
        if (ti->data && !ti->is_variable) { /* a variable's data is its initial value */
            x->data = (void *)ti->data;
            x->is_const = true;
            x->value_known = true;
            if (ti->dtype == MP_DT_STRING) /* sized by its data (the reader checked it) */
                x->bytes = ti->data_bytes;
        }
    }
    for (int32_t i = 0; i < m->n_inputs; i++)
        s->trt[m->inputs[i]].used = true;
    for (int32_t i = 0; i < m->n_outputs; i++)
        s->trt[m->outputs[i]].used = true;
    mp_tensor **slot = s->slots;
    for (int32_t i = 0; i < m->n_ops; i++) {
        const mp_op_info *op = &m->ops[i];
        mp_node *n = &s->nodes[i];
        const mp_kernel *k = mp_kernel_find(op->opcode); /* non-NULL: checked above */
        const char *name = mp_op_name(op->opcode);
        if (op->n_inputs < k->min_inputs || op->n_inputs > k->max_inputs ||
            (k->n_outputs >= 0 ? op->n_outputs != k->n_outputs : op->n_outputs < 1)) {
            mp_status st = mp_fail(err, MP_ERR_FORMAT,
                                   "%s: operator #%d %s has %d inputs and %d outputs "
                                   "(expected %d..%d inputs, %d outputs)",
                                   m->path, i, name, op->n_inputs, op->n_outputs, k->min_inputs,
                                   k->max_inputs, k->n_outputs);
            unload(s);
            return st;
        }
        s->nrt[i].kernel = k;
        n->index = i;
        n->opcode = op->opcode;
        n->opt = &op->opt;
        n->n_in = op->n_inputs;
        n->n_out = op->n_outputs;
        n->in = slot;
        slot += op->n_inputs;
        n->out = slot;
        slot += op->n_outputs;
        n->mem = s->mem;
        n->pool = s->pool;
        n->err = &s->node_err;
        n->model_path = m->path;
        n->session = s;
        n->n_inter = op->n_intermediates;
        n->inter = op->intermediates;
        n->tensor_infos = m->tensors;
        for (int32_t j = 0; j < op->n_inputs; j++) {
            int32_t t = op->inputs[j];
            /* inputs past the mask's 32 (BIDIRECTIONAL_SEQUENCE_LSTM's aux input and
             * weights) are checked by their kernel */
            if (t < 0 && j < 32 && !((k->optional_inputs >> j) & 1u)) {
                mp_status st = mp_fail(err, MP_ERR_FORMAT,
                                       "%s: operator #%d %s: input %d is omitted (-1) but is required",
                                       m->path, i, name, j);
                unload(s);
                return st;
            }
            n->in[j] = t >= 0 ? &s->tensors[t] : NULL;
            if (t >= 0)
                s->trt[t].used = true;
        }
        for (int32_t j = 0; j < op->n_outputs; j++) {
            int32_t t = op->outputs[j];
            n->out[j] = &s->tensors[t];
            s->trt[t].used = true;
        }
    }
    s->shapes_dirty = true;
    s->plan_dirty = true;
    if (child)
        return MP_OK;
    if (s->trace && !describe_in_trace(s)) {
        mp_status st = mp_fail(err, MP_ERR_NOMEM, "out of memory describing %s in the trace",
                               m->path);
        unload(s); /* frees m */
        return st;
    }
    mp_status st = mp_ss_children_create(s, err);
    if (st != MP_OK)
        unload(s); /* frees m and the children made */
    return st;
}

mp_status mp_session_load(mp_session *s, const char *path, mp_error *err)
{
    if (s->model)
        return mp_fail(err, MP_ERR_ARG, "a model is already loaded in this session");
    bool ph = phase_begin(s, MP_PHASE_LOAD, 0);
    mp_model *m = NULL;
    mp_status st = mp_model_open(path, &m, err);
    if (st == MP_OK)
        st = mp_ss_attach(s, m, err);
    phase_end(s, ph);
    return st;
}

mp_status mp_session_load_memory(mp_session *s, const void *bytes, size_t size, const char *label,
                                 mp_error *err)
{
    if (s->model)
        return mp_fail(err, MP_ERR_ARG, "a model is already loaded in this session");
    bool ph = phase_begin(s, MP_PHASE_LOAD, 0);
    mp_model *m = NULL;
    mp_status st = mp_model_load_memory(bytes, size, label, &m, err);
    if (st == MP_OK)
        st = mp_ss_attach(s, m, err);
    phase_end(s, ph);
    return st;
}

mp_status mp_session_set_input_shape(mp_session *s, int input, int32_t rank, const int32_t *dims,
                                     mp_error *err)
{
    if (!s->model)
        return mp_fail(err, MP_ERR_ARG, "no model loaded");
    if (input < 0 || input >= s->model->n_inputs)
        return mp_fail(err, MP_ERR_ARG, "%s: no input #%d (the model has %d)", s->model->path,
                       input, s->model->n_inputs);
    mp_tensor *t = &s->tensors[s->model->inputs[input]];
    const mp_tensor_info *ti = t->info;
    char a[128], b[128];
    if (rank < 0 || rank > MP_MAX_RANK)
        return mp_fail(err, MP_ERR_SHAPE, "%s: input '%s': rank %d is not supported",
                       s->model->path, ti->name, rank);
    for (int32_t i = 0; i < rank; i++)
        if (dims[i] <= 0)
            return mp_fail(err, MP_ERR_SHAPE, "%s: input '%s': dimension %d is %d (must be >= 1)",
                           s->model->path, ti->name, i, dims[i]);
    if (ti->has_signature) {
        bool ok = rank == ti->rank;
        for (int32_t i = 0; ok && i < rank; i++)
            ok = ti->signature[i] < 0 || ti->signature[i] == dims[i];
        if (!ok)
            return mp_fail(err, MP_ERR_SHAPE,
                           "%s: input '%s': shape %s does not fit its signature %s (-1 = free)",
                           s->model->path, ti->name, mp_shape_str(rank, dims, a, sizeof a),
                           mp_shape_str(ti->rank, ti->signature, b, sizeof b));
    } else if (rank != ti->rank) {
        return mp_fail(err, MP_ERR_SHAPE, "%s: input '%s': shape %s has rank %d, the model's is %d",
                       s->model->path, ti->name, mp_shape_str(rank, dims, a, sizeof a), rank,
                       ti->rank);
    }
    int32_t old_rank = t->rank, old[MP_MAX_RANK];
    memcpy(old, t->dims, sizeof old);
    if (!mp_tensor_set_shape(t, rank, dims))
        return mp_fail(err, MP_ERR_SHAPE, "%s: input '%s': shape %s is too large", s->model->path,
                       ti->name, mp_shape_str(rank, dims, a, sizeof a));
    if (old_rank != rank || memcmp(old, t->dims, sizeof(int32_t) * (size_t)rank) != 0) {
        s->shapes_dirty = true;
        s->trt[t->index].version++;
        /* nothing planned for the old shapes stays allocated */
        bool ph = phase_begin(s, MP_PHASE_SHAPE, 0);
        mp_sm_invalidate(s, false);
        phase_end(s, ph);
    }
    return MP_OK;
}

static uint64_t node_versions(const mp_session *s, const mp_node *n)
{
    uint64_t v = 0;
    for (int32_t j = 0; j < n->n_in; j++)
        if (n->in[j])
            v += s->trt[n->in[j]->index].version + 1;
    for (int32_t j = 0; j < n->n_out; j++)
        v += s->trt[n->out[j]->index].version + 1;
    return v + s->nrt[n->index].scratch_version;
}

/* A kernel sizes its work from its tensors' shapes, and the memory managers sized its
 * outputs and scratch from the shapes infer gave them: once every shape is inferred, each
 * node's inputs must still give exactly those output shapes and no more scratch (a tensor
 * written after a node read it would change them), else the kernel would write past a
 * buffer sized for other shapes. */
static mp_status check_node_shapes(mp_session *s, int32_t i, mp_error *err)
{
    mp_node *n = &s->nodes[i];
    /* the shapes before infer: on the stack for the usual few outputs, else (a SPLIT into
     * many heads) one engine block for this check */
    typedef struct { int32_t rank, dims[MP_MAX_RANK]; } saved_shape;
    saved_shape few[8], *saved = few;
    if ((size_t)n->n_out > sizeof few / sizeof few[0]) {
        saved = mp_mem_alloc(s->mem, sizeof *saved * (size_t)n->n_out, 0, MP_MEM_ENGINE,
                             MP_OWNER_OP(i));
        if (!saved) {
            mp_node_fail(n, MP_ERR_NOMEM, "out of memory checking %d output shapes", n->n_out);
            *err = s->node_err;
            return MP_ERR_NOMEM;
        }
    }
    for (int32_t j = 0; j < n->n_out; j++) {
        saved[j].rank = n->out[j]->rank;
        memcpy(saved[j].dims, n->out[j]->dims, sizeof saved[j].dims);
    }
    size_t scratch = n->scratch_bytes;
    s->node_err.msg[0] = 0;
    mp_status st = s->nrt[i].kernel->infer(n);
    int32_t bad = -1;
    for (int32_t j = 0; j < n->n_out && st == MP_OK && bad < 0; j++)
        if (n->out[j]->rank != saved[j].rank ||
            memcmp(n->out[j]->dims, saved[j].dims, sizeof(int32_t) * (size_t)saved[j].rank) != 0)
            bad = j;
    char now[96] = "", was[96] = "";
    if (bad >= 0) {
        mp_shape_str(n->out[bad]->rank, n->out[bad]->dims, now, sizeof now);
        mp_shape_str(saved[bad].rank, saved[bad].dims, was, sizeof was);
    }
    size_t want = n->scratch_bytes;
    for (int32_t j = 0; j < n->n_out; j++) /* infer changes nothing here */
        mp_tensor_set_shape(n->out[j], saved[j].rank, saved[j].dims);
    if (saved != few)
        mp_mem_free(s->mem, saved);
    n->scratch_bytes = scratch;
    if (st == MP_ERR_DEFERRED)
        return MP_OK; /* checked when it runs: infer again then */
    if (st != MP_OK) {
        *err = s->node_err;
        return st;
    }
    if (bad >= 0)
        st = mp_node_fail(n, MP_ERR_SHAPE, "output '%s' is %s, but its inputs now make it %s",
                          n->out[bad]->info->name, was, now);
    else if (want > scratch)
        st = mp_node_fail(n, MP_ERR_SHAPE, "needs %zu bytes of scratch, %zu were planned", want,
                          scratch);
    if (st != MP_OK)
        *err = s->node_err;
    return st;
}

/* Kernel prepare when the node's tensors changed since its last prepare. */
static mp_status prepare_node(mp_session *s, int32_t i, mp_error *err)
{
    mp_node *n = &s->nodes[i];
    node_rt *r = &s->nrt[i];
    uint64_t v = node_versions(s, n);
    if (r->created && v == r->seen)
        return MP_OK;
    mp_mem_set_current(s->mem, i);
    mp_status st = r->kernel->prepare ? r->kernel->prepare(n) : MP_OK;
    if (st != MP_OK) {
        *err = s->node_err;
        return st;
    }
    r->created = true;
    r->seen = v;
    /* set up while a tensor had no storage (a dynamic tensor between runs): set up again
     * once it has some, even if it comes back at the address it had */
    for (int32_t j = 0; j < n->n_in + n->n_out; j++) {
        const mp_tensor *x = j < n->n_in ? n->in[j] : n->out[j - n->n_in];
        if (x && !x->data)
            r->seen = 0;
    }
    return MP_OK;
}

static bool inputs_known(const mp_session *s, const mp_node *n, bool values)
{
    for (int32_t j = 0; j < n->n_in; j++) {
        const mp_tensor *t = n->in[j];
        if (!t)
            continue;
        if (values ? !t->value_known : (!t->shape_known || s->trt[t->index].producer_deferred))
            return false;
    }
    return true;
}

/* Infer a node's output shapes, remembering the old ones to bump versions on change. */
static mp_status infer_node(mp_session *s, int32_t i, mp_error *err)
{
    mp_node *n = &s->nodes[i];
    int32_t old_rank[64], old_dims[64][MP_MAX_RANK];
    int32_t no = n->n_out < 64 ? n->n_out : 64;
    for (int32_t j = 0; j < no; j++) {
        old_rank[j] = n->out[j]->rank;
        memcpy(old_dims[j], n->out[j]->dims, sizeof old_dims[j]);
    }
    s->node_err.msg[0] = 0;
    mp_status st = s->nrt[i].kernel->infer(n);
    if (st != MP_OK && st != MP_ERR_DEFERRED) {
        *err = s->node_err;
        return st;
    }
    for (int32_t j = 0; j < no; j++)
        if (old_rank[j] != n->out[j]->rank ||
            memcmp(old_dims[j], n->out[j]->dims, sizeof(int32_t) * (size_t)old_rank[j]) != 0)
            s->trt[n->out[j]->index].version++;
    return st;
}

/* Infer every shape and fold what is computable now (folded values get engine storage);
 * then classify every tensor for the memory managers. */
static mp_status infer_all(mp_session *s, mp_error *err)
{
    mp_status st;
    for (int32_t t = 0; t < s->n_tensors; t++) {
        s->trt[t].producer_deferred = false;
        if (!s->tensors[t].is_const)
            s->tensors[t].value_known = false;
    }
    for (int32_t i = 0; i < s->n_nodes; i++) {
        mp_node *n = &s->nodes[i];
        node_rt *r = &s->nrt[i];
        r->folded = r->deferred = false;
        if (!inputs_known(s, n, false)) {
            r->deferred = true;
        } else {
            st = infer_node(s, i, err);
            if (st == MP_ERR_DEFERRED)
                r->deferred = true;
            else if (st != MP_OK)
                return st;
        }
        if (r->deferred) {
            for (int32_t j = 0; j < n->n_out; j++)
                s->trt[n->out[j]->index].producer_deferred = true;
            continue;
        }
        /* constant folding: shape arithmetic, DEQUANTIZE of constant weights, ... */
        /* (never an operator that keeps state outside its tensors: it runs in every run) */
        if (mp_op_stateful(n->opcode) ||
            (!r->kernel->reads_shapes_only && !inputs_known(s, n, true)))
            continue;
        r->folded = true;
        for (int32_t j = 0; j < n->n_out; j++) {
            st = mp_sm_give_own(s, n->out[j]->index, MP_MEM_ENGINE, i, err);
            if (st != MP_OK)
                return st;
        }
        /* inputs of a folded node are constants or folded outputs: already in place */
        st = mp_sm_scratch_own(s, i, err);
        if (st == MP_OK)
            st = prepare_node(s, i, err);
        if (st == MP_OK) {
            mp_mem_set_current(s->mem, i);
            st = r->kernel->run(n);
            if (st != MP_OK)
                *err = s->node_err;
        }
        mp_sm_scratch_free(s, i);
        if (st != MP_OK)
            return st;
        for (int32_t j = 0; j < n->n_out; j++)
            n->out[j]->value_known = true;
    }
    mp_sm_classify(s);
    s->shapes_dirty = false;
    return MP_OK;
}

/* Every tensor the node touches has storage (in dynamic mode most get it only in a run). */
static bool node_has_storage(const mp_node *n)
{
    for (int32_t j = 0; j < n->n_in; j++)
        if (n->in[j] && !n->in[j]->data)
            return false;
    for (int32_t j = 0; j < n->n_out; j++)
        if (!n->out[j]->data)
            return false;
    return true;
}

/* An input's shape may still change: a free dimension in its signature, or no signature
 * (then any shape of its rank is accepted). */
static bool shapes_may_change(const mp_session *s)
{
    for (int32_t i = 0; i < s->model->n_inputs; i++) {
        const mp_tensor_info *ti = s->tensors[s->model->inputs[i]].info;
        if (!ti->has_signature && ti->rank > 0)
            return true;
        for (int32_t d = 0; d < ti->rank; d++)
            if (ti->signature[d] < 0)
                return true;
    }
    return false;
}

/* at_prepare: called by mp_session_prepare (not by the run or set_input that needs it),
 * where the FIRST_RUN policy leaves the plan to the first run. */
static mp_status prepare_all(mp_session *s, bool at_prepare, mp_error *err)
{
    mp_status st;
    bool inferred = s->shapes_dirty || !s->prepared;
    if (inferred) {
        st = infer_all(s, err);
        if (st != MP_OK)
            return st;
    }
    bool defer = at_prepare && s->plan_at == MP_PLAN_AT_FIRST_RUN && !s->ext_on &&
                 shapes_may_change(s);
    st = mp_sm_place(s, defer, err);
    if (st != MP_OK)
        return st;
    for (int32_t i = 0; i < s->n_nodes; i++) {
        if (s->nrt[i].folded || s->nrt[i].deferred)
            continue;
        /* once per shape change, not per run: a deferred node is inferred right before it
         * runs, and a re-prepare for new storage (dynamic mode) changes no shape */
        st = inferred ? check_node_shapes(s, i, err) : MP_OK;
        if (st == MP_OK && node_has_storage(&s->nodes[i]))
            st = prepare_node(s, i, err);
        if (st != MP_OK)
            return st;
    }
    s->prepared = true;
    return MP_OK;
}

static bool needs_prepare(const mp_session *s)
{
    return !s->prepared || s->shapes_dirty || s->plan_dirty;
}

mp_status mp_session_prepare(mp_session *s, mp_error *err)
{
    if (!s->model)
        return mp_fail(err, MP_ERR_ARG, "no model loaded");
    bool ph = phase_begin(s, MP_PHASE_PREPARE, 0);
    s->iterations = 0;
    mp_status st = prepare_all(s, true, err);
    phase_end(s, ph);
    return st;
}

static mp_status check_io_index(const mp_session *s, int i, bool input, mp_error *err)
{
    if (!s->model)
        return mp_fail(err, MP_ERR_ARG, "no model loaded");
    int n = input ? s->model->n_inputs : s->model->n_outputs;
    if (i < 0 || i >= n)
        return mp_fail(err, MP_ERR_ARG, "%s: no %s #%d (the model has %d)", s->model->path,
                       input ? "input" : "output", i, n);
    return MP_OK;
}

/* Bind (buf != NULL) or unbind tensor t to a caller's buffer. Which tensors the arena
 * holds changes, so the plan is made again. */
static void bind(mp_session *s, int32_t t, void *buf, size_t capacity)
{
    tensor_rt *r = &s->trt[t];
    bool was_bound = r->home == HOME_CALLER;
    if (buf && was_bound) {
        if (s->tensors[t].data != buf)
            r->version++;
        s->tensors[t].data = buf;
        r->caller_cap = capacity;
        return;
    }
    if (!buf && !was_bound)
        return;
    mp_sm_free_own(s, t);
    mp_sm_invalidate(s, true);
    r->caller_cap = buf ? capacity : 0;
    r->home = buf ? HOME_CALLER : HOME_NONE;
    s->tensors[t].data = buf;
    r->version++;
    if (s->prepared && !s->shapes_dirty)
        mp_sm_classify(s);
}

mp_status mp_session_set_input_buffer(mp_session *s, int input, void *buf, size_t capacity,
                                      mp_error *err)
{
    mp_status st = check_io_index(s, input, true, err);
    if (st != MP_OK)
        return st;
    bind(s, s->model->inputs[input], buf, capacity);
    return MP_OK;
}

mp_status mp_session_set_output_buffer(mp_session *s, int output, void *buf, size_t capacity,
                                       mp_error *err)
{
    mp_status st = check_io_index(s, output, false, err);
    if (st != MP_OK)
        return st;
    int32_t t = s->model->outputs[output];
    for (int32_t i = 0; i < s->model->n_inputs; i++)
        if (s->model->inputs[i] == t)
            return mp_fail(err, MP_ERR_ARG, "%s: output #%d is also an input; bind the input",
                           s->model->path, output);
    bind(s, t, buf, capacity);
    return MP_OK;
}

mp_status mp_session_set_input(mp_session *s, int input, const void *data, size_t bytes,
                               mp_error *err)
{
    mp_status st = check_io_index(s, input, true, err);
    if (st != MP_OK)
        return st;
    int32_t ti = s->model->inputs[input];
    mp_tensor *t = &s->tensors[ti];
    if (s->trt[ti].home == HOME_CALLER)
        bind(s, ti, NULL, 0); /* copying replaces the caller's buffer */
    if (needs_prepare(s)) {
        /* Copying needs the input's new storage now: the re-plan and the new arena that a
         * shape change (or a deferred plan) causes are made here, but they are the next
         * run's work, recorded in its phase and timed into it (mp_session_last_run_ns), as
         * they are when the run itself makes them (inputs bound, not copied). */
        uint64_t t0 = now_ns();
        bool rp = phase_begin(s, MP_PHASE_RUN, s->runs + 1);
        st = prepare_all(s, false, err);
        phase_end(s, rp);
        s->pre_run_ns += now_ns() - t0;
    }
    bool ph = phase_begin(s, MP_PHASE_IO, 0);
    /* a string input is as large as the strings set (never planned: session_memory.c) */
    if (st == MP_OK && t->dtype == MP_DT_STRING) {
        st = mp_sm_string_input(s, ti, data, bytes, false, err);
        if (st == MP_OK)
            st = mp_sm_give_own(s, ti, MP_MEM_DYNAMIC, -1, err);
    }
    if (st == MP_OK && !t->data)
        st = mp_sm_give_own(s, ti, MP_MEM_DYNAMIC, -1, err); /* dynamic mode: now it is needed */
    if (st == MP_OK && bytes != t->bytes)
        st = mp_fail(err, MP_ERR_ARG, "%s: input '%s' takes %zu bytes, got %zu", s->model->path,
                     t->info->name, t->bytes, bytes);
    if (st == MP_OK) {
        memcpy(t->data, data, bytes);
        if (s->trace)
            mp_trace_copy(s->trace, ti, bytes, MP_COPY_IN);
        s->trt[ti].was_set = true;
        s->trt[ti].set_version = s->trt[ti].version;
    }
    phase_end(s, ph);
    return st;
}

mp_status mp_session_get_output(mp_session *s, int output, void *dst, size_t bytes,
                                mp_error *err)
{
    mp_status st = check_io_index(s, output, false, err);
    if (st != MP_OK)
        return st;
    int32_t ti = s->model->outputs[output];
    const mp_tensor *t = &s->tensors[ti];
    if (!t->data || s->runs == 0)
        return mp_fail(err, MP_ERR_ARG, "%s: output '%s' has no value before a run",
                       s->model->path, t->info->name);
    if (bytes != t->bytes)
        return mp_fail(err, MP_ERR_ARG, "%s: output '%s' has %zu bytes, got a buffer of %zu",
                       s->model->path, t->info->name, t->bytes, bytes);
    bool ph = phase_begin(s, MP_PHASE_IO, 0);
    memcpy(dst, t->data, bytes);
    if (s->trace)
        mp_trace_copy(s->trace, ti, bytes, MP_COPY_OUT);
    phase_end(s, ph);
    return MP_OK;
}

static mp_status run_nodes(mp_session *s, mp_error *err)
{
    mp_status st = MP_OK;
    if (needs_prepare(s)) {
        st = prepare_all(s, false, err); /* cases C, D and E: plan for the new shapes here */
        if (st != MP_OK)
            return st;
    }
    s->arena_used = true;
    st = mp_sm_check_bound(s, err);
    if (st != MP_OK)
        return st;
    /* An input copied in before something moved its storage (a binding or a shape change
     * that planned the arena again) lost its bytes: refused, never run on garbage. */
    for (int32_t i = 0; i < s->model->n_inputs; i++) {
        int32_t t = s->model->inputs[i];
        const tensor_rt *r = &s->trt[t];
        if (r->was_set && r->home != HOME_CALLER && r->version != r->set_version)
            return mp_fail(err, MP_ERR_ARG,
                           "%s: input '%s' was set before its storage moved (a binding or shape "
                           "change planned the memory again): set it again before the run",
                           s->model->path, s->tensors[t].info->name);
    }
    /* While running every tensor's data exists before its readers run, so a deferred
     * operator's infer may read any input value. */
    for (int32_t i = 0; i < s->model->n_inputs; i++)
        s->tensors[s->model->inputs[i]].value_known = true;
    for (int32_t i = 0; i < s->n_nodes; i++) {
        mp_node *n = &s->nodes[i];
        node_rt *r = &s->nrt[i];
        if (r->folded)
            continue;
        if (s->trace)
            mp_trace_op_mark(s->trace, MP_EV_OP_BEGIN, i);
        if (r->deferred) {
            st = infer_node(s, i, err);
            if (st == MP_ERR_DEFERRED) { /* the kernel's reason, when it gave one */
                st = s->node_err.msg[0]
                         ? s->node_err.status
                         : mp_node_fail(n, MP_ERR_SHAPE, "output shape still unknown while running");
                *err = s->node_err;
            }
            if (st != MP_OK)
                return st;
        }
        st = mp_sm_before_node(s, i, err);
        if (st == MP_OK)
            st = prepare_node(s, i, err);
        if (st != MP_OK)
            return st;
        mp_mem_set_current(s->mem, i);
        st = r->kernel->run(n);
        if (st != MP_OK) {
            *err = s->node_err;
            return st;
        }
        for (int32_t j = 0; j < n->n_out; j++)
            n->out[j]->value_known = true;
        mp_sm_after_node(s, i);
        if (s->trace)
            mp_trace_op_mark(s->trace, MP_EV_OP_END, i);
    }
    return MP_OK;
}

mp_status mp_session_reset_variables(mp_session *s, mp_error *err)
{
    if (!s->model)
        return mp_fail(err, MP_ERR_ARG, "no model loaded");
    if (s->root == s)
        mp_res_reset(s); /* resource variables freed, CALL_ONCE initializes again */
    for (int32_t t = 0; t < s->n_tensors; t++)
        if (s->trt[t].persistent)
            mp_sm_reset_variable(s, t); /* one without a block yet gets its value when placed */
    for (int32_t k = 1; s->subs && k < s->model->n_subgraphs; k++) /* called subgraphs' state */
        if (s->subs[k])
            mp_session_reset_variables(s->subs[k], err);
    return MP_OK;
}

mp_status mp_session_run(mp_session *s, mp_error *err)
{
    if (!s->model)
        return mp_fail(err, MP_ERR_ARG, "no model loaded");
    uint64_t t0 = now_ns();
    bool ph = phase_begin(s, MP_PHASE_RUN, ++s->runs);
    s->iterations = 0;
    mp_status st = run_nodes(s, err);
    phase_end(s, ph);
    s->last_run_ns = now_ns() - t0 + s->pre_run_ns;
    s->pre_run_ns = 0;
    return st;
}

uint64_t mp_session_last_run_ns(const mp_session *s)
{
    return s->last_run_ns;
}

void mp_session_memory_info(const mp_session *s, mp_session_memory *out)
{
    memset(out, 0, sizeof *out);
    out->arena_bytes = s->arena_bytes;
    out->lower_bound = s->arena_lower_bound;
    out->naive_bytes = s->arena_naive;
    out->n_planned = s->n_planned;
    out->plans_made = s->plans_made;
    out->plans_reused = s->plans_reused;
    out->arenas_made = s->arenas_made;
    out->arenas_unused = s->arenas_unused;
    out->plan_at = s->plan_at;
    out->n_scratch = s->n_scratch;
    out->scratch_block = s->scratch_block ? mp_mem_size(s->scratch_block) : 0;
    for (int32_t t = 0; t < s->n_tensors; t++)
        if (s->trt[t].home == HOME_OWN && s->trt[t].kind == MP_MEM_DYNAMIC) {
            out->n_dynamic++;
            out->dynamic_live += mp_mem_size(s->tensors[t].data);
        } else if (s->trt[t].home == HOME_OWN && s->trt[t].kind == MP_MEM_VARIABLE) {
            out->n_variable++;
            out->variable_bytes += mp_mem_size(s->tensors[t].data);
        }
    mp_res_count(s, &out->n_variable, &out->variable_bytes); /* resource variables */
}

mp_status mp_session_plan_items(mp_session *s, mp_plan_item **items, int32_t *n,
                                uint64_t *align, mp_error *err)
{
    *items = NULL;
    *n = 0;
    if (align)
        *align = MP_SLOT_ALIGN;
    if (!s->model)
        return mp_fail(err, MP_ERR_ARG, "no model loaded");
    if (needs_prepare(s)) {
        mp_status st = mp_session_prepare(s, err);
        if (st != MP_OK)
            return st;
    }
    return mp_sm_plan_items(s, items, n, err);
}

mp_status mp_session_use_external_arena(mp_session *s, bool on, mp_error *err)
{
    if (!s->model)
        return mp_fail(err, MP_ERR_ARG, "no model loaded");
    if (on && s->opt.keep_stale_arena)
        return mp_fail(err, MP_ERR_ARG, "%s: keep_stale_arena keeps an arena of the session's "
                       "own; it cannot run in the caller's", s->model->path);
    if (on != s->ext_on) {
        mp_sm_invalidate(s, true); /* neither the own arena nor a layout stays */
        s->ext_on = on;
    }
    return MP_OK;
}

mp_status mp_session_place_arena(mp_session *s, void *base, size_t capacity,
                                 const uint64_t *offsets, int32_t n, mp_error *err)
{
    if (!s->model)
        return mp_fail(err, MP_ERR_ARG, "no model loaded");
    if (!s->ext_on)
        return mp_fail(err, MP_ERR_ARG, "%s: place_arena needs use_external_arena on",
                       s->model->path);
    mp_status st = needs_prepare(s) ? mp_session_prepare(s, err) : MP_OK;
    return st == MP_OK ? mp_sm_set_external(s, base, capacity, offsets, n, err) : st;
}

const mp_model *mp_session_model(const mp_session *s)
{
    return s->model;
}

int mp_session_input_count(const mp_session *s)
{
    return s->model ? s->model->n_inputs : 0;
}

int mp_session_output_count(const mp_session *s)
{
    return s->model ? s->model->n_outputs : 0;
}

const mp_tensor *mp_session_input(const mp_session *s, int i)
{
    return &s->tensors[s->model->inputs[i]];
}

const mp_tensor *mp_session_output(const mp_session *s, int i)
{
    return &s->tensors[s->model->outputs[i]];
}

const mp_tensor *mp_session_tensor(const mp_session *s, int32_t index)
{
    return (index >= 0 && index < s->n_tensors) ? &s->tensors[index] : NULL;
}

int32_t mp_session_shared_slot(const mp_session *s, int32_t index)
{
    return (index >= 0 && index < s->n_tensors) ? s->trt[index].shares : -1;
}

bool mp_session_needs_prepare(const mp_session *s)
{
    /* a plan left to the first run changes no shape: the outputs' sizes are known */
    return s->model && (!s->prepared || s->shapes_dirty || (s->plan_dirty && !s->plan_deferred));
}

bool mp_session_output_deferred(const mp_session *s, int i)
{
    return s->model && i >= 0 && i < s->model->n_outputs &&
           s->trt[s->model->outputs[i]].producer_deferred;
}

int mp_session_find_input(const mp_session *s, const char *name_or_index)
{
    if (!s->model)
        return -1;
    for (int i = 0; i < s->model->n_inputs; i++)
        if (strcmp(s->tensors[s->model->inputs[i]].info->name, name_or_index) == 0)
            return i;
    char *end;
    long v = strtol(name_or_index, &end, 10);
    if (*name_or_index && !*end && v >= 0 && v < s->model->n_inputs)
        return (int)v;
    return -1;
}

mp_mem *mp_session_mem(mp_session *s)
{
    return s->mem;
}

/* ---- for session_subgraph.c: a child runs inside its caller's phase ---- */

mp_status mp_ss_prepare(mp_session *s, mp_error *err)
{
    return needs_prepare(s) ? prepare_all(s, false, err) : MP_OK;
}

mp_status mp_ss_run(mp_session *s, mp_error *err)
{
    return run_nodes(s, err);
}

mp_status mp_ss_set_shape(mp_session *s, int32_t ti, int32_t rank, const int32_t *dims,
                          mp_error *err)
{
    mp_tensor *t = &s->tensors[ti];
    if (t->rank == rank && memcmp(t->dims, dims, sizeof(int32_t) * (size_t)rank) == 0)
        return MP_OK;
    char a[128];
    if (!mp_tensor_set_shape(t, rank, dims))
        return mp_fail(err, MP_ERR_SHAPE, "%s: input '%s': shape %s is too large", s->model->path,
                       t->info->name, mp_shape_str(rank, dims, a, sizeof a));
    s->shapes_dirty = true;
    s->trt[ti].version++;
    mp_sm_invalidate(s, false); /* nothing planned for the old shapes stays allocated */
    return MP_OK;
}

void mp_ss_destroy_child(mp_session *c)
{
    unload(c);
    mp_mem_free(c->mem, c);
}
