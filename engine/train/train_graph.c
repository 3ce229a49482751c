/* The training graph: from a float32 model, the training tensors (the model's, with the batch
 * in dimension 0, and the derived ones: back-prop, gradients, optimizer variables, extra and
 * disposable temporaries), one node per forward operator with its geometry, and the step
 * timeline (forward, loss, backward of the trainable operators) with every tensor's first and
 * last step on it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/train/train_internal.h"

static const char *const k_cat_names[MP_TCAT_COUNT] = {
    "activation", "trainable", "backprop", "gradient", "optimizer", "disposable", "extra"};

const char *mp_train_cat_name(int cat)
{
    return cat >= 0 && cat < MP_TCAT_COUNT ? k_cat_names[cat] : "?";
}

mp_mem_kind mp_train_cat_kind(int cat)
{
    static const mp_mem_kind kinds[MP_TCAT_COUNT] = {
        MP_MEM_TRAIN_ACTIVATION, MP_MEM_TRAIN_TRAINABLE,  MP_MEM_TRAIN_BACKPROP,
        MP_MEM_TRAIN_GRADIENT,   MP_MEM_TRAIN_OPTIMIZER,  MP_MEM_TRAIN_DISPOSABLE,
        MP_MEM_TRAIN_EXTRA};
    return cat >= 0 && cat < MP_TCAT_COUNT ? kinds[cat] : MP_MEM_ENGINE;
}

const char *mp_train_policy_name(int p)
{
    static const char *const names[] = {"planned", "held", "dynamic"};
    return p >= 0 && p < 3 ? names[p] : "?";
}

int32_t mp_tr_add_tensor(mp_trainer *t, const char *name, mp_train_cat cat, int32_t rank,
                      const int32_t *dims, size_t n)
{
    if (t->n_tensors == t->cap_tensors) {
        int32_t cap = t->cap_tensors ? t->cap_tensors * 2 : 64;
        tr_tensor *nt = realloc(t->t, (size_t)cap * sizeof *nt);
        if (!nt)
            return -1;
        t->t = nt;
        t->cap_tensors = cap;
    }
    tr_tensor *x = &t->t[t->n_tensors];
    memset(x, 0, sizeof *x);
    x->name = strdup(name ? name : "");
    if (!x->name)
        return -1;
    x->model_index = -1;
    x->cat = cat;
    x->rank = rank;
    if (rank > 0)
        memcpy(x->dims, dims, (size_t)rank * sizeof *dims);
    x->n = n;
    x->bytes = n * sizeof(float);
    x->first = x->last = -1;
    x->grad = x->m = x->v = -1;
    return t->n_tensors++;
}

void mp_tr_use(mp_trainer *t, int32_t i, int32_t step)
{
    if (i < 0)
        return;
    tr_tensor *x = &t->t[i];
    if (x->first < 0 || step < x->first)
        x->first = step;
    if (step > x->last)
        x->last = step;
}

/* A derived tensor named "<prefix>:<of's name>" with of's shape. */
static int32_t derived(mp_trainer *t, const char *prefix, int32_t of, mp_train_cat cat)
{
    char name[256];
    snprintf(name, sizeof name, "%s:%s", prefix, t->t[of].name);
    tr_tensor *o = &t->t[of];
    int32_t rank = o->rank, dims[MP_MAX_RANK];
    memcpy(dims, o->dims, sizeof dims);
    return mp_tr_add_tensor(t, name, cat, rank, dims, o->n);
}

static int32_t flat(mp_trainer *t, const char *prefix, int32_t op, const char *what, size_t rows,
                    size_t cols, mp_train_cat cat)
{
    char name[128];
    snprintf(name, sizeof name, "%s:op%d:%s", prefix, (int)op, what);
    int32_t dims[2] = {(int32_t)rows, (int32_t)cols};
    return mp_tr_add_tensor(t, name, cat, 2, dims, rows * cols);
}

static mp_status unsupported(mp_trainer *t, const tr_node *n, mp_error *err, const char *why)
{
    return mp_fail(err, MP_ERR_UNSUPPORTED, "%s: operator #%d %s: %s", t->label, (int)n->op,
                   mp_op_name(n->opcode), why);
}

static bool act_range(int32_t act, float *lo, float *hi)
{
    *lo = -__builtin_inff();
    *hi = __builtin_inff();
    if (act == MP_ACT_NONE)
        return true;
    if (act == MP_ACT_RELU) {
        *lo = 0;
        return true;
    }
    if (act == MP_ACT_RELU6) {
        *lo = 0;
        *hi = 6;
        return true;
    }
    return false;
}

static bool is_float_act(mp_trainer *t, int32_t i)
{
    return i >= 0 && i < t->model->n_tensors && !t->t[i].is_const &&
           t->model->tensors[i].dtype == MP_DT_FLOAT32;
}

static bool is_float_const(mp_trainer *t, int32_t i)
{
    return i >= 0 && t->t[i].is_const && t->model->tensors[i].dtype == MP_DT_FLOAT32;
}

static void conv_pad(int32_t padding, int32_t in, int32_t out, int32_t k, int32_t s, int32_t d,
                     int32_t *before)
{
    *before = 0;
    if (padding == MP_PAD_SAME) {
        int64_t total = (int64_t)(out - 1) * s + (int64_t)(k - 1) * d + 1 - in;
        *before = total > 0 ? (int32_t)(total / 2) : 0;
    }
}

/* The node of operator op: tensors and geometry, checked. */
static mp_status make_node(mp_trainer *t, int32_t op, tr_node *n, mp_error *err)
{
    const mp_op_info *o = &t->model->ops[op];
    memset(n, 0, sizeof *n);
    n->op = op;
    n->opcode = o->opcode;
    n->opt = &o->opt;
    n->x = n->x2 = n->w = n->b = n->y = -1;
    n->dx = n->dx2 = n->dy = n->dw = n->db = -1;
    n->cols = n->colsb = n->dcols = n->tmp = n->packf = n->packb = -1;
    n->fwd_step = op;
    n->bwd_step = -1;
    if (o->n_outputs != 1 || !is_float_act(t, o->outputs[0]))
        return unsupported(t, n, err, "needs one float32 output");
    n->y = o->outputs[0];
    if (o->n_inputs < 1 || !is_float_act(t, o->inputs[0]))
        return unsupported(t, n, err, "needs a float32 non-constant first input");
    n->x = o->inputs[0];
    const tr_tensor *X = &t->t[n->x], *Y = &t->t[n->y];
    if (!act_range(MP_ACT_NONE, &n->lo, &n->hi))
        return MP_ERR_ARG;
    n->rank = X->rank;
    memcpy(n->in_dims, X->dims, sizeof n->in_dims);
    memcpy(n->out_dims, Y->dims, sizeof n->out_dims);
    switch (o->opcode) {
    case MP_OP_FULLY_CONNECTED: {
        if (o->n_inputs < 2 || !is_float_const(t, o->inputs[1]) || t->t[o->inputs[1]].rank != 2)
            return unsupported(t, n, err, "needs float32 constant [out,in] weights");
        n->w = o->inputs[1];
        n->N = (size_t)t->t[n->w].dims[0];
        n->K = (size_t)t->t[n->w].dims[1];
        if (o->n_inputs > 2 && o->inputs[2] >= 0) {
            if (!is_float_const(t, o->inputs[2]) || t->t[o->inputs[2]].n != n->N)
                return unsupported(t, n, err, "needs a float32 constant bias of out elements");
            n->b = o->inputs[2];
        }
        if (n->K == 0 || X->n % n->K || Y->n != X->n / n->K * n->N)
            return mp_fail(err, MP_ERR_SHAPE, "%s: operator #%d FULLY_CONNECTED: shapes do not "
                           "match its weights", t->label, (int)op);
        n->M = X->n / n->K;
        if (!act_range(o->opt.activation, &n->lo, &n->hi))
            return unsupported(t, n, err, "fused activation other than RELU or RELU6");
        t->flops_fwd += 2 * n->M * n->K * n->N;
        return MP_OK;
    }
    case MP_OP_CONV_2D:
    case MP_OP_DEPTHWISE_CONV_2D: {
        bool dw = o->opcode == MP_OP_DEPTHWISE_CONV_2D;
        if (o->n_inputs < 2 || !is_float_const(t, o->inputs[1]) || t->t[o->inputs[1]].rank != 4 ||
            X->rank != 4 || Y->rank != 4)
            return unsupported(t, n, err, "needs NHWC input and output and float32 constant "
                               "4-d filters");
        n->w = o->inputs[1];
        const tr_tensor *Wt = &t->t[n->w];
        n->B = X->dims[0], n->H = X->dims[1], n->W = X->dims[2], n->C = X->dims[3];
        n->OH = Y->dims[1], n->OW = Y->dims[2], n->OC = Y->dims[3];
        n->kh = Wt->dims[1], n->kw = Wt->dims[2];
        n->sh = o->opt.stride_h, n->sw = o->opt.stride_w;
        n->dh = o->opt.dilation_h, n->dw_ = o->opt.dilation_w;
        if (n->sh < 1 || n->sw < 1 || n->dh < 1 || n->dw_ < 1 || Y->dims[0] != n->B)
            return unsupported(t, n, err, "bad strides, dilations or batch");
        if (dw) {
            if (Wt->dims[0] != 1 || n->C == 0 || Wt->dims[3] != n->OC || n->OC % n->C)
                return mp_fail(err, MP_ERR_SHAPE, "%s: operator #%d DEPTHWISE_CONV_2D: filter "
                               "does not match", t->label, (int)op);
            n->mult = n->OC / n->C;
        } else if (Wt->dims[0] != n->OC || Wt->dims[3] != n->C) {
            return mp_fail(err, MP_ERR_SHAPE, "%s: operator #%d CONV_2D: filter does not match "
                           "the input and output channels", t->label, (int)op);
        }
        if (o->n_inputs > 2 && o->inputs[2] >= 0) {
            if (!is_float_const(t, o->inputs[2]) || t->t[o->inputs[2]].n != (size_t)n->OC)
                return unsupported(t, n, err, "needs a float32 constant bias per channel");
            n->b = o->inputs[2];
        }
        conv_pad(o->opt.padding, n->H, n->OH, n->kh, n->sh, n->dh, &n->pt);
        conv_pad(o->opt.padding, n->W, n->OW, n->kw, n->sw, n->dw_, &n->pl);
        if (!act_range(o->opt.activation, &n->lo, &n->hi))
            return unsupported(t, n, err, "fused activation other than RELU or RELU6");
        n->M = (size_t)n->B * n->OH * n->OW;
        n->K = (size_t)n->kh * n->kw * n->C;
        n->N = (size_t)n->OC;
        n->direct = !dw && n->kh == 1 && n->kw == 1 && n->sh == 1 && n->sw == 1 &&
                    n->OH == n->H && n->OW == n->W;
        t->flops_fwd += dw ? 2 * n->M * n->N * (size_t)n->kh * n->kw : 2 * n->M * n->K * n->N;
        return MP_OK;
    }
    case MP_OP_MAX_POOL_2D:
    case MP_OP_AVERAGE_POOL_2D:
        if (X->rank != 4 || Y->rank != 4 || X->dims[3] != Y->dims[3] || X->dims[0] != Y->dims[0])
            return unsupported(t, n, err, "needs NHWC input and output of equal channels");
        n->B = X->dims[0], n->H = X->dims[1], n->W = X->dims[2], n->C = X->dims[3];
        n->OH = Y->dims[1], n->OW = Y->dims[2], n->OC = n->C;
        n->kh = o->opt.filter_h, n->kw = o->opt.filter_w;
        n->sh = o->opt.stride_h, n->sw = o->opt.stride_w;
        n->dh = n->dw_ = 1;
        if (n->kh < 1 || n->kw < 1 || n->sh < 1 || n->sw < 1)
            return unsupported(t, n, err, "bad filter or strides");
        conv_pad(o->opt.padding, n->H, n->OH, n->kh, n->sh, 1, &n->pt);
        conv_pad(o->opt.padding, n->W, n->OW, n->kw, n->sw, 1, &n->pl);
        if (!act_range(o->opt.activation, &n->lo, &n->hi))
            return unsupported(t, n, err, "fused activation other than RELU or RELU6");
        return MP_OK;
    case MP_OP_MEAN: {
        if (o->n_inputs < 2 || o->inputs[1] < 0 || !t->t[o->inputs[1]].is_const ||
            t->model->tensors[o->inputs[1]].dtype != MP_DT_INT32)
            return unsupported(t, n, err, "needs constant int32 axes");
        const int32_t *ax = t->t[o->inputs[1]].cdata;
        for (size_t k = 0; k < t->t[o->inputs[1]].n; k++) {
            int32_t a = ax[k] < 0 ? ax[k] + X->rank : ax[k];
            if (a < 0 || a >= X->rank)
                return mp_fail(err, MP_ERR_SHAPE, "%s: operator #%d MEAN: axis %d out of range",
                               t->label, (int)op, (int)ax[k]);
            n->axes_mask |= 1u << a;
        }
        size_t kept = 1;
        for (int32_t d = 0; d < X->rank; d++)
            if (!(n->axes_mask >> d & 1))
                kept *= (size_t)X->dims[d];
        if (kept != Y->n)
            return mp_fail(err, MP_ERR_SHAPE, "%s: operator #%d MEAN: output size does not "
                           "match", t->label, (int)op);
        return MP_OK;
    }
    case MP_OP_RESHAPE:
        if (X->n != Y->n)
            return mp_fail(err, MP_ERR_SHAPE, "%s: operator #%d RESHAPE: element counts differ "
                           "at batch %d", t->label, (int)op, t->opt.batch);
        return MP_OK;
    case MP_OP_SOFTMAX:
    case MP_OP_RELU:
    case MP_OP_RELU6:
        if (X->n != Y->n || X->rank < 1)
            return mp_fail(err, MP_ERR_SHAPE, "%s: operator #%d: element counts differ",
                           t->label, (int)op);
        n->N = (size_t)X->dims[X->rank - 1];
        if (o->opcode == MP_OP_SOFTMAX && (n->N == 0 || o->opt.beta <= 0))
            return unsupported(t, n, err, "needs a positive beta and a non-empty last axis");
        return MP_OK;
    case MP_OP_ADD:
    case MP_OP_SUB:
    case MP_OP_MUL:
        if (o->n_inputs != 2 || !is_float_act(t, o->inputs[1]) ||
            t->t[o->inputs[1]].n != X->n || Y->n != X->n)
            return unsupported(t, n, err, "needs two float32 non-constant inputs of one shape "
                               "(no broadcasting)");
        n->x2 = o->inputs[1];
        if (!act_range(o->opt.activation, &n->lo, &n->hi))
            return unsupported(t, n, err, "fused activation other than RELU or RELU6");
        return MP_OK;
    case MP_OP_PAD: {
        if (o->n_inputs < 2 || o->inputs[1] < 0 || !t->t[o->inputs[1]].is_const ||
            t->model->tensors[o->inputs[1]].dtype != MP_DT_INT32 ||
            t->t[o->inputs[1]].n != 2 * (size_t)X->rank || X->rank != Y->rank)
            return unsupported(t, n, err, "needs constant int32 paddings [rank,2]");
        const int32_t *p = t->t[o->inputs[1]].cdata;
        for (int32_t d = 0; d < X->rank; d++) {
            n->pad_before[d] = p[2 * d];
            n->pad_after[d] = p[2 * d + 1];
            if (p[2 * d] < 0 || p[2 * d + 1] < 0 ||
                (d > 0 && X->dims[d] + p[2 * d] + p[2 * d + 1] != Y->dims[d]))
                return mp_fail(err, MP_ERR_SHAPE, "%s: operator #%d PAD: paddings do not match "
                               "the output", t->label, (int)op);
        }
        if (n->pad_before[0] || n->pad_after[0])
            return unsupported(t, n, err, "padding of the batch dimension");
        return MP_OK;
    }
    default:
        return unsupported(t, n, err, "no backward kernel (trainable operators: FULLY_CONNECTED, "
                           "CONV_2D, DEPTHWISE_CONV_2D, MAX_POOL_2D, AVERAGE_POOL_2D, MEAN, "
                           "RESHAPE, SOFTMAX, RELU, RELU6, ADD, SUB, MUL, PAD)");
    }
}

/* The model's tensors with the batch in dimension 0. */
static mp_status model_tensors(mp_trainer *t, mp_error *err)
{
    const mp_model *m = t->model;
    for (int32_t i = 0; i < m->n_tensors; i++) {
        const mp_tensor_info *ti = &m->tensors[i];
        int32_t dims[MP_MAX_RANK];
        memcpy(dims, ti->shape, sizeof dims);
        bool is_const = ti->data != NULL;
        if (!is_const && ti->rank > 0) {
            int64_t d0 = (int64_t)dims[0] * t->opt.batch;
            if (d0 > INT32_MAX)
                return mp_fail(err, MP_ERR_SHAPE, "%s: tensor %s: batch %d too large",
                               t->label, ti->name, t->opt.batch);
            dims[0] = (int32_t)d0;
        }
        size_t n = 0;
        if (!mp_shape_elements(ti->rank, dims, &n) || n > ((size_t)1 << 40))
            return mp_fail(err, MP_ERR_SHAPE, "%s: tensor %s: impossible shape", t->label,
                           ti->name);
        int32_t k = mp_tr_add_tensor(t, ti->name, MP_TCAT_ACTIVATION, ti->rank, dims, n);
        if (k < 0)
            return mp_fail(err, MP_ERR_NOMEM, "out of memory");
        tr_tensor *x = &t->t[k];
        x->model_index = i;
        if (is_const) {
            x->is_const = true;
            x->cdata = ti->data;
            x->data = (float *)ti->data;
            x->bytes = ti->data_bytes;
        } else if (ti->dtype == MP_DT_FLOAT32 && ti->rank == 0) {
            return mp_fail(err, MP_ERR_SHAPE, "%s: tensor %s: a scalar activation has no batch",
                           t->label, ti->name);
        }
    }
    return MP_OK;
}

mp_status mp_tr_build(mp_trainer *t, mp_error *err)
{
    const mp_model *m = t->model;
    mp_status st = model_tensors(t, err);
    if (st != MP_OK)
        return st;
    if (m->n_ops < 1 || m->n_outputs != 1)
        return mp_fail(err, MP_ERR_UNSUPPORTED, "%s: training needs one output and at least one "
                       "operator", t->label);
    t->nodes = calloc((size_t)m->n_ops, sizeof *t->nodes);
    t->steps = calloc((size_t)m->n_ops * 2 + 1, sizeof *t->steps);
    int32_t *prod = malloc((size_t)m->n_tensors * sizeof *prod);
    if (!t->nodes || !t->steps || !prod) {
        free(prod);
        return mp_fail(err, MP_ERR_NOMEM, "out of memory");
    }
    for (int32_t i = 0; i < m->n_tensors; i++)
        prod[i] = -1;
    t->n_nodes = m->n_ops;
    for (int32_t i = 0; i < m->n_ops && st == MP_OK; i++) {
        st = make_node(t, i, &t->nodes[i], err);
        if (st == MP_OK && prod[t->nodes[i].y] >= 0)
            st = mp_fail(err, MP_ERR_FORMAT, "%s: tensor %s written twice", t->label,
                         t->t[t->nodes[i].y].name);
        if (st == MP_OK)
            prod[t->nodes[i].y] = i;
    }
    if (st != MP_OK) {
        free(prod);
        return st;
    }
    int32_t F = m->n_ops;
    int32_t K = t->opt.trainable_ops;
    t->first_trainable = K <= 0 || K >= F ? 0 : F - K;
    t->out = m->outputs[0];
    if (!is_float_act(t, t->out) || prod[t->out] < 0) {
        free(prod);
        return mp_fail(err, MP_ERR_UNSUPPORTED, "%s: the output must be a float32 tensor an "
                       "operator writes", t->label);
    }
    t->logits = t->out;
    tr_node *last = &t->nodes[prod[t->out]];
    if (t->opt.loss == MP_LOSS_CCE) {
        if (last->opcode != MP_OP_SOFTMAX || last->opt->beta != 1.0f) {
            free(prod);
            return mp_fail(err, MP_ERR_UNSUPPORTED, "%s: --loss cce needs a model ending in "
                           "SOFTMAX (beta 1): the loss fuses it", t->label);
        }
        last->skip_bwd = true;
        t->logits = last->x;
    }
    for (int32_t i = 0; i < F; i++) {
        t->steps[i] = (tr_step){i, false};
        t->nodes[i].trainable = i >= t->first_trainable;
        mp_tr_use(t, t->nodes[i].y, i);
        mp_tr_use(t, t->nodes[i].x, i);
        mp_tr_use(t, t->nodes[i].x2, i);
    }
    t->loss_step = F;
    t->steps[F] = (tr_step){-1, false};
    mp_tr_use(t, t->out, F);
    mp_tr_use(t, t->logits, F);
    for (int32_t i = 0; i < m->n_inputs; i++)
        mp_tr_use(t, m->inputs[i], 0);
    /* the loss writes the back-prop of the logits */
    int32_t s = F + 1;
    if (prod[t->logits] >= t->first_trainable) {
        int32_t g = derived(t, "backprop", t->logits, MP_TCAT_BACKPROP);
        if (g < 0)
            goto nomem;
        t->t[t->logits].grad = g;
        mp_tr_use(t, t->t[t->logits].grad, F);
    }
    for (int32_t i = F - 1; i >= t->first_trainable; i--) {
        tr_node *n = &t->nodes[i];
        if (n->skip_bwd || t->t[n->y].grad < 0)
            continue;
        n->bwd_step = s;
        t->steps[s] = (tr_step){i, true};
        n->dy = t->t[n->y].grad;
        mp_tr_use(t, n->dy, s);
        int32_t ins[2] = {n->x, n->x2};
        for (int k = 0; k < 2; k++) {
            int32_t x = ins[k];
            if (x < 0)
                continue;
            bool is_input = prod[x] < 0;
            if (is_input ? !t->opt.keep_grads : prod[x] < t->first_trainable)
                continue;
            bool acc = t->t[x].grad >= 0;
            if (!acc) {
                int32_t g = derived(t, "backprop", x, MP_TCAT_BACKPROP);
                if (g < 0)
                    goto nomem;
                t->t[x].grad = g;
            }
            *(k ? &n->dx2 : &n->dx) = t->t[x].grad;
            *(k ? &n->dx2_acc : &n->dx_acc) = acc;
            mp_tr_use(t, t->t[x].grad, s);
            if (is_input)
                t->t[t->t[x].grad].persistent = true;
        }
        /* forward values the backward reads */
        bool act = n->lo > -__builtin_inff() || n->hi < __builtin_inff();
        switch (n->opcode) {
        case MP_OP_FULLY_CONNECTED:
        case MP_OP_CONV_2D:
        case MP_OP_DEPTHWISE_CONV_2D:
            mp_tr_use(t, n->x, s);
            break;
        case MP_OP_MAX_POOL_2D:
        case MP_OP_SOFTMAX:
        case MP_OP_RELU:
        case MP_OP_RELU6:
            mp_tr_use(t, n->x, s);
            act = true;
            break;
        case MP_OP_MUL:
            mp_tr_use(t, n->x, s);
            mp_tr_use(t, n->x2, s);
            break;
        default:
            break;
        }
        if (act)
            mp_tr_use(t, n->y, s);
        /* weights, gradients, optimizer variables */
        int32_t wb[2] = {n->w, n->b};
        for (int k = 0; k < 2; k++) {
            int32_t w = wb[k];
            if (w < 0)
                continue;
            /* (derived tensors may move the table: no pointers into it across them) */
            if (t->t[w].cat != MP_TCAT_TRAINABLE) {
                t->t[w].cat = MP_TCAT_TRAINABLE;
                t->t[w].persistent = true;
                int32_t g = derived(t, "gradient", w, MP_TCAT_GRADIENT);
                if (g < 0)
                    goto nomem;
                t->t[w].grad = g;
                if (t->opt.optimizer == MP_OPTIM_ADAM) {
                    int32_t mm = derived(t, "adam_m", w, MP_TCAT_OPTIMIZER);
                    int32_t vv = mm < 0 ? -1 : derived(t, "adam_v", w, MP_TCAT_OPTIMIZER);
                    if (vv < 0)
                        goto nomem;
                    t->t[w].m = mm, t->t[w].v = vv;
                    t->t[mm].persistent = t->t[vv].persistent = true;
                }
                if (t->opt.keep_grads)
                    t->t[t->t[w].grad].persistent = true;
            }
            *(k ? &n->db : &n->dw) = t->t[w].grad;
            mp_tr_use(t, t->t[w].grad, s);
        }
        /* temporaries */
        if (n->opcode == MP_OP_FULLY_CONNECTED || n->opcode == MP_OP_CONV_2D) {
            /* dW = dZ^T A reads both in place (mp_tr_gemm_tn); dX = dZ W on XNNPACK, which
             * packs W into a pool */
            if (n->dx >= 0 && !n->direct && n->opcode == MP_OP_CONV_2D) {
                n->dcols = flat(t, "disposable", i, "dcols", n->M, n->K, MP_TCAT_DISPOSABLE);
                mp_tr_use(t, n->dcols, s);
            } else if (n->dx >= 0 && n->dx_acc) {
                n->tmp = flat(t, "disposable", i, "dX", n->M, n->K, MP_TCAT_DISPOSABLE);
                mp_tr_use(t, n->tmp, s);
            }
            if (n->dx >= 0) {
                n->packb = flat(t, "disposable", i, "packed", 1,
                                (mp_tr_gemm_pool_bytes(n->N, n->K) + 3) / 4, MP_TCAT_DISPOSABLE);
                mp_tr_use(t, n->packb, s);
            }
            t->flops_step += 2 * n->M * n->K * n->N * (n->dx >= 0 ? 2 : 1);
        } else if (n->opcode == MP_OP_DEPTHWISE_CONV_2D) {
            t->flops_step += 2 * n->M * n->N * (size_t)n->kh * n->kw * (n->dx >= 0 ? 2 : 1);
        }
        s++;
    }
    /* forward temporaries, and the columns the weight gradient of a convolution reads */
    for (int32_t i = 0; i < F; i++) {
        tr_node *n = &t->nodes[i];
        if (n->opcode != MP_OP_FULLY_CONNECTED && n->opcode != MP_OP_CONV_2D)
            continue;
        if (n->opcode == MP_OP_CONV_2D && !n->direct) {
            n->cols = flat(t, "disposable", i, "cols", n->M, n->K, MP_TCAT_DISPOSABLE);
            mp_tr_use(t, n->cols, i);
            if (n->bwd_step >= 0) {
                n->colsb = flat(t, "disposable", i, "cols", n->M, n->K, MP_TCAT_DISPOSABLE);
                mp_tr_use(t, n->colsb, n->bwd_step);
            }
        }
        n->packf = flat(t, "disposable", i, "packed_w", 1,
                        (mp_tr_gemm_pool_bytes(n->K, n->N) + 3) / 4, MP_TCAT_DISPOSABLE);
        mp_tr_use(t, n->packf, i);
    }
    free(prod);
    t->n_steps = s;
    t->flops_step += t->flops_fwd;
    return MP_OK;
nomem:
    free(prod);
    return mp_fail(err, MP_ERR_NOMEM, "out of memory");
}
