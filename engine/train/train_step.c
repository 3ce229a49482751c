/* The trainer: creation (graph, trace description, memory), the step (forward, loss,
 * backward with each operator's optimizer update right after its backward), the loss
 * functions, the optimizers, and writing the trained model back as .tflite. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xnnpack.h>

#include "engine/memory/plan.h"
#include "engine/model/tflite_writer.h"
#include "engine/train/train_internal.h"

const char *mp_trainer_step_name(const mp_trainer *t, int32_t s, char *buf, size_t n)
{
    if (s < 0 || s >= t->n_steps)
        snprintf(buf, n, "?");
    else if (t->steps[s].node < 0)
        snprintf(buf, n, "loss %s", t->opt.loss == MP_LOSS_CCE ? "CCE" : "MSE");
    else
        snprintf(buf, n, "%s%s", mp_op_name(t->nodes[t->steps[s].node].opcode),
                 t->steps[s].backward ? "'" : "");
    return buf;
}

/* The trace's tables: tensors are the training tensors, operators the steps. */
static bool describe(mp_trainer *t)
{
    mp_trace *tr = t->trace;
    mp_trace_meta *tm = mp_trace_meta_mut(tr);
    if (!mp_trace_alloc_tables(tr, t->n_tensors, t->n_steps, t->model->n_inputs, 1) ||
        !mp_trace_set_str(tr, &tm->model, t->label) ||
        !mp_trace_set_str(tr, &tm->mode, mp_train_policy_name(t->opt.policy)) ||
        !mp_trace_set_str(tr, &tm->planner, t->planner_name))
        return false;
    tm->threads = t->opt.threads;
    for (int32_t i = 0; i < t->n_tensors; i++) {
        tm->tensors[i].dtype = t->t[i].model_index >= 0
                                   ? (int32_t)t->model->tensors[t->t[i].model_index].dtype
                                   : MP_DT_FLOAT32;
        tm->tensors[i].is_const = t->t[i].is_const;
        if (!mp_trace_set_str(tr, &tm->tensors[i].name, t->t[i].name))
            return false;
    }
    for (int32_t s = 0; s < t->n_steps; s++) {
        char name[64];
        int32_t ins[6], outs[3], ni = 0, no = 0;
        const tr_step *st = &t->steps[s];
        if (st->node < 0) {
            ins[ni++] = t->logits;
            if (t->t[t->logits].grad >= 0)
                outs[no++] = t->t[t->logits].grad;
        } else {
            const tr_node *n = &t->nodes[st->node];
            int32_t cand_in[6] = {n->x, n->x2, n->w, n->b, -1, -1};
            int32_t cand_out[3] = {n->y, -1, -1};
            if (st->backward) {
                cand_in[4] = n->dy;
                cand_in[5] = n->y;
                cand_out[0] = n->dx, cand_out[1] = n->dw, cand_out[2] = n->db;
            }
            for (int k = 0; k < 6; k++)
                if (cand_in[k] >= 0)
                    ins[ni++] = cand_in[k];
            for (int k = 0; k < 3; k++)
                if (cand_out[k] >= 0)
                    outs[no++] = cand_out[k];
        }
        mp_trainer_step_name(t, s, name, sizeof name);
        if (!mp_trace_set_op(tr, s, name, ni, ins, no, outs))
            return false;
    }
    memcpy(tm->inputs, t->model->inputs, sizeof(int32_t) * (size_t)t->model->n_inputs);
    tm->outputs[0] = t->out;
    return true;
}

mp_status mp_trainer_create(const mp_model *m, const char *label, const mp_train_options *opt,
                            mp_trainer **out, mp_error *err)
{
    *out = NULL;
    if (!m || !opt || opt->batch < 1 || opt->threads < 1 || opt->trainable_ops < 0 ||
        !(opt->learning_rate >= 0) || (opt->planner && !mp_planner_find(opt->planner)))
        return mp_fail(err, MP_ERR_ARG, "training options out of range");
    enum xnn_status xs = (enum xnn_status)mp_mem_xnn_init();
    if (xs != xnn_status_success)
        return mp_fail(err, MP_ERR_BACKEND, "XNNPACK failed to initialize (status %d)", (int)xs);
    mp_trainer *t = calloc(1, sizeof *t);
    if (!t)
        return mp_fail(err, MP_ERR_NOMEM, "out of memory");
    t->model = m;
    t->opt = *opt;
    if (t->opt.beta1 == 0)
        t->opt.beta1 = 0.9f;
    if (t->opt.beta2 == 0)
        t->opt.beta2 = 0.999f;
    if (t->opt.epsilon == 0)
        t->opt.epsilon = 1e-7f;
    t->label = strdup(label ? label : m->path);
    t->mem = mp_mem_create();
    t->trace = opt->trace;
    if (!t->label || !t->mem) {
        mp_trainer_destroy(t);
        return mp_fail(err, MP_ERR_NOMEM, "out of memory");
    }
    mp_mem_set_trace(t->mem, t->trace);
    mp_mem_set_current(t->mem, -1);
    if (t->trace)
        mp_trace_phase_begin(t->trace, MP_PHASE_LOAD, 0);
    mp_mem_note_model(t->mem, m->const_bytes, m->heap_bytes);
    mp_status st = mp_tr_build(t, err);
    if (t->trace)
        mp_trace_phase_end(t->trace);
    if (st != MP_OK) {
        mp_trainer_destroy(t);
        return st;
    }
    if (opt->threads > 1 && !(t->pool = pthreadpool_create((size_t)opt->threads))) {
        mp_trainer_destroy(t);
        return mp_fail(err, MP_ERR_BACKEND, "cannot create a pool of %d threads", opt->threads);
    }
    t->planner_name = opt->planner ? opt->planner : mp_planner_default()->name;
    if (t->trace && !describe(t)) {
        mp_trainer_destroy(t);
        return mp_fail(err, MP_ERR_NOMEM, "out of memory describing the trace");
    }
    if (t->trace)
        mp_trace_phase_begin(t->trace, MP_PHASE_PREPARE, 0);
    st = mp_tr_memory_prepare(t, err);
    /* the caller's batch (inputs), the labels and a copy of the output: io */
    t->n_inputs = m->n_inputs;
    t->inputs = (int32_t *)m->inputs;
    t->in_buf = calloc((size_t)m->n_inputs + 1, sizeof *t->in_buf);
    if (st == MP_OK && !t->in_buf)
        st = mp_fail(err, MP_ERR_NOMEM, "out of memory");
    for (int32_t i = 0; st == MP_OK && i < m->n_inputs; i++) {
        const tr_tensor *x = &t->t[m->inputs[i]];
        if (x->is_const || m->tensors[m->inputs[i]].dtype != MP_DT_FLOAT32)
            st = mp_fail(err, MP_ERR_UNSUPPORTED, "%s: input %s is not float32", t->label,
                         x->name);
        else if (!(t->in_buf[i] = mp_mem_calloc(t->mem, x->bytes, TR_ALIGN, MP_MEM_IO,
                                                MP_OWNER_TENSOR(m->inputs[i]))))
            st = mp_fail(err, MP_ERR_NOMEM, "out of memory");
    }
    t->out_n = t->t[t->out].n;
    if (st == MP_OK) {
        t->labels = mp_mem_calloc(t->mem, t->out_n * sizeof(float), TR_ALIGN, MP_MEM_IO,
                                  MP_OWNER_NONE);
        t->out_copy = mp_mem_calloc(t->mem, t->out_n * sizeof(float), TR_ALIGN, MP_MEM_IO,
                                    MP_OWNER_TENSOR(t->out));
        if (!t->labels || !t->out_copy)
            st = mp_fail(err, MP_ERR_NOMEM, "out of memory");
    }
    if (t->trace)
        mp_trace_phase_end(t->trace);
    if (st != MP_OK) {
        mp_trainer_destroy(t);
        return st;
    }
    *out = t;
    return MP_OK;
}

void mp_trainer_destroy(mp_trainer *t)
{
    if (!t)
        return;
    if (t->trace && t->mem)
        mp_trace_phase_begin(t->trace, MP_PHASE_TEARDOWN, 0);
    if (t->mem) {
        mp_tr_memory_release(t);
        for (int32_t i = 0; t->in_buf && i < t->n_inputs; i++)
            mp_mem_free(t->mem, t->in_buf[i]);
        mp_mem_free(t->mem, t->labels);
        mp_mem_free(t->mem, t->out_copy);
        mp_mem_note_model_freed(t->mem);
    }
    if (t->trace && t->mem)
        mp_trace_phase_end(t->trace);
    if (t->pool)
        pthreadpool_destroy(t->pool);
    for (int32_t i = 0; i < t->n_tensors; i++)
        free(t->t[i].name);
    free(t->t);
    free(t->nodes);
    free(t->steps);
    free(t->in_buf);
    free(t->saved_w);
    free(t->label);
    mp_mem_destroy(t->mem);
    free(t);
}

mp_mem *mp_trainer_mem(mp_trainer *t)
{
    return t->mem;
}

float *mp_trainer_input(mp_trainer *t, int i, size_t *n)
{
    if (i < 0 || i >= t->n_inputs)
        return NULL;
    *n = t->t[t->inputs[i]].n;
    return t->in_buf[i];
}

float *mp_trainer_labels(mp_trainer *t, size_t *n)
{
    *n = t->out_n;
    return t->labels;
}

const float *mp_trainer_output(const mp_trainer *t, size_t *n)
{
    *n = t->out_n;
    return t->out_copy;
}

const float *mp_trainer_value(const mp_trainer *t, int32_t i, size_t *n)
{
    if (i < 0 || i >= t->model->n_tensors || !t->t[i].data)
        return NULL;
    *n = t->t[i].n;
    return t->t[i].data;
}

const float *mp_trainer_grad(const mp_trainer *t, int32_t i, size_t *n)
{
    if (i < 0 || i >= t->model->n_tensors || t->t[i].grad < 0 || !t->opt.keep_grads)
        return NULL;
    const tr_tensor *g = &t->t[t->t[i].grad];
    *n = g->n;
    return g->persistent ? g->data : NULL;
}

/* The loss and the back-prop of the logits. */
static double loss(mp_trainer *t, bool grad)
{
    const float *y = t->t[t->out].data, *lab = t->labels;
    memcpy(t->out_copy, y, t->out_n * sizeof(float));
    float *d = grad ? TD(t, t->t[t->logits].grad) : NULL;
    size_t n = t->out_n, B = (size_t)t->opt.batch, row = n / B;
    double L = 0;
    if (t->opt.loss == MP_LOSS_MSE) {
        for (size_t i = 0; i < n; i++) {
            double e = (double)y[i] - lab[i];
            L += e * e;
            if (d)
                d[i] = (float)(2.0 * e / (double)n);
        }
        return L / (double)n;
    }
    for (size_t r = 0; r < B; r++) {
        double sum = 0;
        for (size_t j = 0; j < row; j++) {
            size_t i = r * row + j;
            double p = y[i] > 1e-7f ? y[i] : 1e-7;
            L -= lab[i] * log(p);
            sum += lab[i];
        }
        if (d)
            for (size_t j = 0; j < row; j++) {
                size_t i = r * row + j;
                d[i] = (float)(((double)y[i] * sum - lab[i]) / (double)B);
            }
    }
    return L / (double)B;
}

/* The update of a trainable tensor from its gradient (train.h: SGD, Adam). */
static void update(mp_trainer *t, int32_t wi)
{
    if (wi < 0 || t->opt.keep_grads)
        return;
    tr_tensor *W = &t->t[wi];
    float *w = W->data, *g = TD(t, W->grad), lr = t->opt.learning_rate;
    if (t->opt.optimizer == MP_OPTIM_SGD) {
        for (size_t i = 0; i < W->n; i++)
            w[i] -= lr * g[i];
        return;
    }
    float b1 = t->opt.beta1, b2 = t->opt.beta2, eps = t->opt.epsilon;
    float *m = TD(t, W->m), *v = TD(t, W->v);
    double k = (double)t->adam_t;
    float lr_t = (float)(lr * sqrt(1.0 - pow(b2, k)) / (1.0 - pow(b1, k)));
    for (size_t i = 0; i < W->n; i++) {
        m[i] = b1 * m[i] + (1 - b1) * g[i];
        v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
        w[i] -= lr_t * m[i] / (sqrtf(v[i]) + eps);
    }
}

static mp_status run(mp_trainer *t, bool train, double *L, mp_error *err)
{
    int32_t last = train ? t->n_steps - 1 : t->loss_step;
    mp_status st = MP_OK;
    t->step_no++;
    if (train)
        t->adam_t++;
    if (t->trace)
        mp_trace_phase_begin(t->trace, MP_PHASE_RUN, t->step_no);
    for (int32_t s = 0; s <= last && st == MP_OK; s++) {
        mp_mem_set_current(t->mem, s);
        if (t->trace)
            mp_trace_op_mark(t->trace, MP_EV_OP_BEGIN, s);
        st = mp_tr_memory_step_begin(t, s, err);
        if (st == MP_OK && s == 0)
            for (int32_t i = 0; i < t->n_inputs; i++) {
                tr_tensor *x = &t->t[t->inputs[i]];
                memcpy(x->data, t->in_buf[i], x->bytes);
                if (t->trace)
                    mp_trace_copy(t->trace, t->inputs[i], x->bytes, MP_COPY_IN);
            }
        const tr_step *sp = &t->steps[s];
        if (st != MP_OK) {
        } else if (sp->node < 0) {
            *L = loss(t, train);
        } else if (!sp->backward) {
            st = mp_tr_forward(t, &t->nodes[sp->node], err);
        } else {
            tr_node *n = &t->nodes[sp->node];
            st = mp_tr_backward(t, n, err);
            if (st == MP_OK) {
                update(t, n->w);
                update(t, n->b);
            }
        }
        if (t->trace)
            mp_trace_op_mark(t->trace, MP_EV_OP_END, s);
        mp_tr_memory_step_end(t, s);
    }
    if (!train || st != MP_OK)
        mp_tr_memory_step_end(t, -1);
    mp_mem_set_current(t->mem, -1);
    if (t->trace)
        mp_trace_phase_end(t->trace);
    return st;
}

mp_status mp_trainer_step(mp_trainer *t, double *L, mp_error *err)
{
    double l = 0;
    mp_status st = run(t, true, &l, err);
    if (L)
        *L = l;
    return st;
}

mp_status mp_trainer_eval(mp_trainer *t, double *L, mp_error *err)
{
    double l = 0;
    mp_status st = run(t, false, &l, err);
    if (L)
        *L = l;
    return st;
}

static uint32_t rng(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

bool mp_trainer_perturb_last(mp_trainer *t, uint32_t seed)
{
    for (int32_t i = t->n_nodes - 1; i >= t->first_trainable; i--) {
        tr_node *n = &t->nodes[i];
        if ((n->opcode != MP_OP_FULLY_CONNECTED && n->opcode != MP_OP_CONV_2D) || n->w < 0)
            continue;
        tr_tensor *W = &t->t[n->w];
        free(t->saved_w);
        t->saved_w = malloc(W->bytes);
        if (!t->saved_w)
            return false;
        memcpy(t->saved_w, W->data, W->bytes);
        t->saved_tensor = n->w;
        double ss = 0;
        for (size_t k = 0; k < W->n; k++)
            ss += (double)W->data[k] * W->data[k];
        float scale = (float)sqrt(3.0 * ss / (double)(W->n ? W->n : 1));
        uint32_t s = seed ? seed : 1;
        for (size_t k = 0; k < W->n; k++)
            W->data[k] = scale * ((float)(rng(&s) >> 8) / 8388608.0f - 1.0f);
        return true;
    }
    return false;
}

void mp_trainer_restore_weights(mp_trainer *t)
{
    if (!t->saved_w)
        return;
    tr_tensor *W = &t->t[t->saved_tensor];
    memcpy(W->data, t->saved_w, W->bytes);
    free(t->saved_w);
    t->saved_w = NULL;
}

mp_status mp_trainer_write_model(const mp_trainer *t, void **bytes, size_t *size, mp_error *err)
{
    const mp_model *m = t->model;
    mp_tfw *w = mp_tfw_create();
    if (!w)
        return mp_fail(err, MP_ERR_NOMEM, "out of memory");
    char desc[256];
    snprintf(desc, sizeof desc, "memprof train: %s", m->description ? m->description : "");
    mp_tfw_description(w, desc);
    if (m->subgraph_name)
        mp_tfw_subgraph_name(w, m->subgraph_name);
    for (int32_t i = 0; i < m->n_tensors; i++) {
        const mp_tensor_info *ti = &m->tensors[i];
        int buf = 0;
        if (ti->data) {
            const void *src = t->t[i].cat == MP_TCAT_TRAINABLE ? t->t[i].data : ti->data;
            buf = mp_tfw_buffer(w, src, ti->data_bytes);
        }
        int k = mp_tfw_tensor(w, ti->name, ti->dtype, ti->rank, ti->shape, buf,
                              ti->has_signature ? ti->signature : NULL);
        if (k >= 0 && ti->quant.count > 0)
            mp_tfw_tensor_quant(w, k, ti->quant.count, ti->quant.scale, ti->quant.zero_point,
                                ti->quant.quantized_dimension);
    }
    for (int32_t i = 0; i < m->n_ops; i++) {
        const mp_op_info *o = &m->ops[i];
        mp_tfw_op(w, o->opcode, o->n_inputs, o->inputs, o->n_outputs, o->outputs, &o->opt);
    }
    mp_tfw_io(w, m->n_inputs, m->inputs, m->n_outputs, m->outputs);
    mp_status st = mp_tfw_finish(w, bytes, size, err);
    mp_tfw_free(w);
    return st;
}
