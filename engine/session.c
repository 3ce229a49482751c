/* The session: loads a model, infers shapes, gives tensors storage, creates operators once,
 * and runs them in order (see session.h for the call sequence).
 *
 * Shape handling: infer_all() walks the operators in execution order. An operator whose
 * inputs all have values known at prepare time (constants, shape arithmetic) is evaluated
 * right there ("folded") and skipped by runs. An operator whose output shape needs a value
 * known only while running is "deferred": its infer, storage and setup happen inside the
 * run. Every tensor carries a version, bumped when its shape or storage changes; an operator
 * is set up again (kernel prepare) only when the versions it last saw have changed. */
#include "session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xnnpack.h>

#include "kernels/kernel.h"

typedef struct node_rt {
    const mp_kernel *kernel;
    bool folded;      /* evaluated at prepare time; runs skip it */
    bool deferred;    /* output shape known only while running */
    bool created;     /* kernel prepare ran at least once */
    uint64_t seen;    /* sum of the versions of its tensors at its last prepare */
} node_rt;

typedef struct tensor_rt {
    uint32_t version;   /* bumped when shape or storage changes */
    bool owned;         /* data allocated by the session (not the model's constant) */
    bool used;          /* read or written by some operator, or a graph input/output */
    bool producer_deferred;
    mp_mem_kind kind;
} tensor_rt;

struct mp_session {
    mp_session_options opt;
    mp_mem *mem;
    pthreadpool_t pool;
    mp_model *model;
    int32_t n_tensors, n_nodes;
    mp_tensor *tensors;
    tensor_rt *trt;
    mp_node *nodes;
    node_rt *nrt;
    mp_tensor **slots; /* node in/out pointer arrays */
    mp_error node_err;
    bool prepared;
    bool shapes_dirty;
};

mp_status mp_session_create(const mp_session_options *opt, mp_session **out, mp_error *err)
{
    *out = NULL;
    if (mp_mem_xnn_init() != 0)
        return mp_fail(err, MP_ERR_BACKEND, "XNNPACK failed to initialize on this CPU");
    mp_session *s = calloc(1, sizeof *s);
    if (!s)
        return mp_fail(err, MP_ERR_NOMEM, "out of memory creating a session");
    s->opt.threads = opt && opt->threads > 0 ? opt->threads : 1;
    s->opt.max_tensor_bytes =
        opt && opt->max_tensor_bytes ? opt->max_tensor_bytes : MP_DEFAULT_MAX_TENSOR;
    s->mem = mp_mem_create();
    if (!s->mem) {
        free(s);
        return mp_fail(err, MP_ERR_NOMEM, "out of memory creating a session");
    }
    /* no single buffer (XNNPACK's included) may exceed the tensor limit plus slack */
    mp_mem_set_max_alloc(s->mem, s->opt.max_tensor_bytes + 4096);
    if (s->opt.threads > 1) {
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

static void free_storage(mp_session *s, int32_t t)
{
    if (s->trt[t].owned) {
        mp_mem_free(s->mem, s->tensors[t].data);
        s->tensors[t].data = NULL;
        s->trt[t].owned = false;
        s->trt[t].version++;
    }
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
    if (s->nodes)
        release_nodes(s);
    for (int32_t t = 0; t < s->n_tensors; t++)
        free_storage(s, t);
    mp_mem_free(s->mem, s->tensors);
    mp_mem_free(s->mem, s->trt);
    mp_mem_free(s->mem, s->nodes);
    mp_mem_free(s->mem, s->nrt);
    mp_mem_free(s->mem, s->slots);
    mp_model_free(s->model);
    s->model = NULL;
    s->tensors = NULL;
    s->nodes = NULL;
    s->n_tensors = s->n_nodes = 0;
    s->prepared = false;
}

void mp_session_destroy(mp_session *s)
{
    if (!s)
        return;
    mp_mem_set_current(s->mem, -1);
    unload(s);
    if (s->pool)
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
 * constant, a model input, a variable (state) tensor or the output of an earlier operator,
 * and every tensor is written
 * at most once (never a constant or a model input). Kernels size their work from their own
 * outputs' shapes, so a tensor with two writers could be overrun by the first one. */
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
            if (t >= 0 && !m->tensors[t].data && !m->tensors[t].is_variable && writer[t] == NONE)
                st = mp_fail(err, MP_ERR_FORMAT,
                             "%s: operator #%d %s reads tensor %d '%s', which is not a constant, "
                             "not a model input, and not written by an earlier operator",
                             m->path, i, name, t, m->tensors[t].name);
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

/* Build the runtime view of a verified model. */
static mp_status attach(mp_session *s, mp_model *m, mp_error *err)
{
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
        unload(s);
        return mp_fail(err, MP_ERR_NOMEM, "out of memory loading %s", m->path);
    }
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
    mp_mem_note_mapped(s->mem, m->const_bytes);
    for (int32_t t = 0; t < m->n_tensors; t++) {
        const mp_tensor_info *ti = &m->tensors[t];
        mp_tensor *x = &s->tensors[t];
        x->index = t;
        x->info = ti;
        x->dtype = ti->dtype;
        mp_tensor_set_shape(x, ti->rank, ti->shape);
        if (ti->data) {
            x->data = (void *)ti->data;
            x->is_const = true;
            x->value_known = true;
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
            op->n_outputs != k->n_outputs) {
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
        for (int32_t j = 0; j < op->n_inputs; j++) {
            int32_t t = op->inputs[j];
            if (t < 0 && !(j < 32 && (k->optional_inputs >> j) & 1u)) {
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
    return MP_OK;
}

mp_status mp_session_load(mp_session *s, const char *path, mp_error *err)
{
    if (s->model)
        return mp_fail(err, MP_ERR_ARG, "a model is already loaded in this session");
    mp_model *m = NULL;
    mp_status st = mp_model_open(path, &m, err);
    if (st != MP_OK)
        return st;
    return attach(s, m, err);
}

mp_status mp_session_load_memory(mp_session *s, const void *bytes, size_t size, const char *label,
                                 mp_error *err)
{
    if (s->model)
        return mp_fail(err, MP_ERR_ARG, "a model is already loaded in this session");
    mp_model *m = NULL;
    mp_status st = mp_model_load_memory(bytes, size, label, &m, err);
    if (st != MP_OK)
        return st;
    return attach(s, m, err);
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
    if (old_rank != rank || memcmp(old, t->dims, sizeof(int32_t) * (size_t)rank) != 0)
        s->shapes_dirty = true;
    return MP_OK;
}

/* Give tensor t storage of its current size (+ XNNPACK's read slack), keeping the present
 * buffer when it is already exactly right. */
static mp_status ensure_storage(mp_session *s, int32_t t, mp_mem_kind kind, mp_error *err)
{
    mp_tensor *x = &s->tensors[t];
    tensor_rt *r = &s->trt[t];
    if (x->is_const)
        return MP_OK;
    if (r->owned && r->kind == kind && mp_mem_size(x->data) == x->bytes + XNN_EXTRA_BYTES)
        return MP_OK;
    free_storage(s, t);
    if (x->bytes > s->opt.max_tensor_bytes) {
        char sh[128];
        return mp_fail(err, MP_ERR_SHAPE, "%s: tensor '%s' %s would need %zu bytes (limit %zu)",
                       s->model->path, x->info->name, mp_shape_str(x->rank, x->dims, sh, sizeof sh),
                       x->bytes, s->opt.max_tensor_bytes);
    }
    x->data = mp_mem_calloc(s->mem, x->bytes + XNN_EXTRA_BYTES, 0, kind, MP_OWNER_TENSOR(t));
    if (!x->data)
        return mp_fail(err, MP_ERR_NOMEM, "%s: out of memory for tensor '%s' (%zu bytes)",
                       s->model->path, x->info->name, x->bytes);
    r->owned = true;
    r->kind = kind;
    r->version++;
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
    return v;
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
    int32_t old_rank[8], old_dims[8][MP_MAX_RANK];
    int32_t no = n->n_out < 8 ? n->n_out : 8;
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

/* Infer every shape; fold what is computable now; give known-shape tensors storage. */
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
        if (r->kernel->reads_shapes_only || inputs_known(s, n, true))
            r->folded = true;
        for (int32_t j = 0; j < n->n_out; j++) {
            st = ensure_storage(s, n->out[j]->index, r->folded ? MP_MEM_ENGINE : MP_MEM_STATIC, err);
            if (st != MP_OK)
                return st;
        }
        if (r->folded) {
            /* inputs of a folded node are constants or folded outputs: already in place */
            st = prepare_node(s, i, err);
            if (st == MP_OK) {
                mp_mem_set_current(s->mem, i);
                st = r->kernel->run(n);
                if (st != MP_OK)
                    *err = s->node_err;
            }
            if (st != MP_OK)
                return st;
            for (int32_t j = 0; j < n->n_out; j++)
                n->out[j]->value_known = true;
        }
    }
    /* graph inputs, and anything still without storage that has a known shape */
    for (int32_t t = 0; t < s->n_tensors; t++) {
        if (!s->trt[t].used || s->tensors[t].is_const || s->trt[t].producer_deferred)
            continue;
        st = ensure_storage(s, t, s->trt[t].owned ? s->trt[t].kind : MP_MEM_STATIC, err);
        if (st != MP_OK)
            return st;
    }
    s->shapes_dirty = false;
    return MP_OK;
}

mp_status mp_session_prepare(mp_session *s, mp_error *err)
{
    if (!s->model)
        return mp_fail(err, MP_ERR_ARG, "no model loaded");
    mp_status st = infer_all(s, err);
    if (st != MP_OK)
        return st;
    for (int32_t i = 0; i < s->n_nodes; i++) {
        if (s->nrt[i].folded || s->nrt[i].deferred)
            continue;
        st = prepare_node(s, i, err);
        if (st != MP_OK)
            return st;
    }
    s->prepared = true;
    return MP_OK;
}

mp_status mp_session_set_input(mp_session *s, int input, const void *data, size_t bytes,
                               mp_error *err)
{
    if (!s->model)
        return mp_fail(err, MP_ERR_ARG, "no model loaded");
    if (input < 0 || input >= s->model->n_inputs)
        return mp_fail(err, MP_ERR_ARG, "%s: no input #%d (the model has %d)", s->model->path,
                       input, s->model->n_inputs);
    if (!s->prepared || s->shapes_dirty) {
        mp_status st = mp_session_prepare(s, err);
        if (st != MP_OK)
            return st;
    }
    mp_tensor *t = &s->tensors[s->model->inputs[input]];
    if (bytes != t->bytes)
        return mp_fail(err, MP_ERR_ARG, "%s: input '%s' takes %zu bytes, got %zu",
                       s->model->path, t->info->name, t->bytes, bytes);
    memcpy(t->data, data, bytes);
    return MP_OK;
}

mp_status mp_session_run(mp_session *s, mp_error *err)
{
    if (!s->model)
        return mp_fail(err, MP_ERR_ARG, "no model loaded");
    mp_status st;
    if (!s->prepared || s->shapes_dirty) {
        st = mp_session_prepare(s, err);
        if (st != MP_OK)
            return st;
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
        if (r->deferred) {
            st = infer_node(s, i, err);
            if (st == MP_ERR_DEFERRED) {
                st = mp_node_fail(n, MP_ERR_SHAPE, "output shape still unknown while running");
                *err = s->node_err;
            }
            if (st != MP_OK)
                return st;
            for (int32_t j = 0; j < n->n_out; j++) {
                st = ensure_storage(s, n->out[j]->index, MP_MEM_DYNAMIC, err);
                if (st != MP_OK)
                    return st;
            }
        }
        st = prepare_node(s, i, err);
        if (st != MP_OK)
            return st;
        st = r->kernel->run(n);
        if (st != MP_OK) {
            *err = s->node_err;
            return st;
        }
        for (int32_t j = 0; j < n->n_out; j++)
            n->out[j]->value_known = true;
    }
    return MP_OK;
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
