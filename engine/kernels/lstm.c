/* Kernel: LSTM and UNIDIRECTIONAL_SEQUENCE_LSTM (float32), with TensorFlow Lite's semantics
 * (lstm.cc, unidirectional_sequence_lstm.cc, lstm_eval.cc).
 *
 * Inputs (24; 20 without the layer-norm coefficients; -1 = omitted where optional):
 *    0 input: LSTM [batch, n_input]; sequence [time, batch, n_input] when time_major, else
 *      [batch, time, n_input]
 *    1..4  input-to-{input, forget, cell, output} weights [n_cell, n_input] (input: optional)
 *    5..8  recurrent-to-{input, forget, cell, output} weights [n_cell, n_output] (input: opt.)
 *    9..11 cell-to-{input, forget, output} peephole weights [n_cell] (optional)
 *   12..15 {input, forget, cell, output} gate biases [n_cell] (input: optional)
 *   16, 17 projection weights [n_output, n_cell] and bias [n_output] (optional)
 *   18, 19 output state [batch, n_output] and cell state [batch, n_cell]: variable tensors,
 *          read and written in place, so that the state carries over to the next run
 *   20..23 {input, forget, cell, output} layer-norm coefficients [n_cell] (optional)
 * Output 0: the hidden state of every step, in the input's layout ([batch, n_output] for LSTM).
 *
 * Per step, gates i, f, o = sigmoid(.) and g = act(.) of W_x x + W_h h + b (+ peephole w_c * c
 * for i and f with the previous cell state, for o with the new one; with layer norm, the sum
 * without bias is normalized to mean 0, variance 1, scaled by the coefficients, then biased);
 * CIFG (no input-gate weights): i = 1 - f. c = f * c + i * g, clipped to +-cell_clip;
 * h = o * act(c), projected (W_p h + b_p, clipped to +-proj_clip) when there are projection
 * weights. act is the options' activation (TANH in practice).
 *
 * The matrix products run on XNNPACK fully connected operators created once at the first
 * prepare (the gates' weights concatenated and packed, biases fused when there is no layer
 * norm): the input product of every step at once ([time*batch, n_input] rows), the recurrent
 * product per step (reading the output state in place), and the projection (writing it, with
 * its clip as the clamp). The gates and the other temporaries are the node's scratch, planned
 * with the tensors; run allocates nothing. Weights may be float32 or, in hybrid models,
 * int8 / uint8 / float16 (dequantized once); everything else is float32. Refused: the BASIC
 * LSTM kernel, diagonal recurrent weights, quantized (int8) LSTMs. */
#include "engine/kernels/kernel.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <xnnpack.h>

enum {
    L_X = 0,
    L_WX = 1,  /* + gate: input, forget, cell, output */
    L_WH = 5,
    L_PEEP = 9, /* input, forget, output */
    L_BIAS = 12,
    L_PROJ_W = 16,
    L_PROJ_B = 17,
    L_H = 18,
    L_C = 19,
    L_LN = 20,
    L_COUNT = 24
};
enum { G_I = 0, G_F, G_C, G_O, G_COUNT };

/* inputs that may be omitted: input gate, peepholes, projection, layer norm */
#define LSTM_OPTIONAL ((1u << 1) | (1u << 5) | (1u << 9) | (1u << 10) | (1u << 11) | \
                       (1u << 12) | (1u << 16) | (1u << 17) | (1u << 20) | (1u << 21) |  \
                       (1u << 22) | (1u << 23))

typedef struct lstm_geom {
    size_t time, batch, n_input, n_cell, n_output;
    bool cifg, peephole, layer_norm, projection;
    size_t n_gates;                 /* 4, or 3 with CIFG (forget, cell, output) */
    size_t off_gx, off_gh, off_m;   /* scratch layout (bytes) */
    size_t scratch;
} lstm_geom;

typedef struct lstm_state {
    xnn_operator_t op_x, op_h, op_p; /* input, recurrent, projection products */
    lstm_geom g;
    /* float32 views of the vectors run reads (the model's data or dequantized copies) */
    const float *peep[3], *bias[G_COUNT], *ln[G_COUNT];
    void *owned[3 + 2 * G_COUNT];
} lstm_state;

static const mp_tensor *in_at(const mp_node *n, int i)
{
    return i < n->n_in ? n->in[i] : NULL;
}

static size_t align64(size_t x)
{
    return (x + 63) & ~(size_t)63;
}

/* Slot of gate k in the concatenated gates (CIFG has no input gate). */
static size_t slot(const lstm_geom *g, int k)
{
    return g->cifg ? (size_t)(k - 1) : (size_t)k;
}

static mp_status check_dims(mp_node *n, int idx, const char *what, int32_t rank, size_t d0,
                            size_t d1)
{
    const mp_tensor *t = in_at(n, idx);
    char s[64];
    bool ok = t->rank == rank && (size_t)t->dims[0] == d0 && (rank < 2 || (size_t)t->dims[1] == d1);
    if (ok)
        return MP_OK;
    if (rank == 1)
        return mp_node_fail(n, MP_ERR_SHAPE, "%s '%s' is %s; expected [%zu]", what, t->info->name,
                            mp_shape_str(t->rank, t->dims, s, sizeof s), d0);
    return mp_node_fail(n, MP_ERR_SHAPE, "%s '%s' is %s; expected [%zu,%zu]", what, t->info->name,
                        mp_shape_str(t->rank, t->dims, s, sizeof s), d0, d1);
}

/* A vector input (peephole, bias, layer norm) must be float32. */
static mp_status check_vector(mp_node *n, int idx, const char *what, size_t n_cell)
{
    const mp_tensor *t = in_at(n, idx);
    if (t->dtype != MP_DT_FLOAT32)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "%s '%s' is %s; expected f32", what,
                            t->info->name, mp_dtype_name(t->dtype));
    return check_dims(n, idx, what, 1, n_cell, 0);
}

static bool weights_dtype(mp_dtype dt)
{
    return dt == MP_DT_FLOAT32 || dt == MP_DT_INT8 || dt == MP_DT_UINT8 || dt == MP_DT_FLOAT16;
}

static mp_status lstm_geometry(mp_node *n, lstm_geom *g)
{
    static const char *gate[G_COUNT] = {"input", "forget", "cell", "output"};
    const mp_op_options *o = n->opt;
    bool seq = n->opcode == MP_OP_UNIDIRECTIONAL_SEQUENCE_LSTM;
    char s[64], what[64];
    memset(g, 0, sizeof *g);
    if (!seq && o->lstm_kernel_type != 0)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "the BASIC LSTM kernel is not supported (FULL only)");
    if (seq && o->diagonal_recurrent_tensors)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "diagonal recurrent weights are not supported");
    if ((n->n_in != 20 && n->n_in != 24) || n->n_out != 1)
        return mp_node_fail(n, MP_ERR_FORMAT, "has %d inputs and %d outputs; expected 20 or 24 "
                            "inputs and 1 output", n->n_in, n->n_out);
    for (int i = 0; i < n->n_in; i++)
        if (!n->in[i] && !((LSTM_OPTIONAL >> i) & 1u))
            return mp_node_fail(n, MP_ERR_FORMAT, "input %d is omitted but is required", i);
    const mp_tensor *x = n->in[L_X];
    if (x->dtype != MP_DT_FLOAT32)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "input '%s' is %s; only f32 LSTMs are "
                            "supported", x->info->name, mp_dtype_name(x->dtype));
    if (n->out[0]->dtype != MP_DT_FLOAT32)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "output '%s' is %s; expected f32",
                            n->out[0]->info->name, mp_dtype_name(n->out[0]->dtype));
    int32_t want_rank = seq ? 3 : 2;
    if (x->rank != want_rank)
        return mp_node_fail(n, MP_ERR_SHAPE, "input '%s' is %s; expected rank %d", x->info->name,
                            mp_shape_str(x->rank, x->dims, s, sizeof s), want_rank);
    if (seq) {
        g->time = (size_t)x->dims[o->time_major ? 0 : 1];
        g->batch = (size_t)x->dims[o->time_major ? 1 : 0];
    } else {
        g->time = 1;
        g->batch = (size_t)x->dims[0];
    }
    g->n_input = (size_t)x->dims[want_rank - 1];
    const mp_tensor *wxo = n->in[L_WX + G_O], *who = n->in[L_WH + G_O];
    if (wxo->rank != 2 || who->rank != 2)
        return mp_node_fail(n, MP_ERR_SHAPE, "output gate weights '%s' and '%s' must be matrices",
                            wxo->info->name, who->info->name);
    g->n_cell = (size_t)wxo->dims[0];
    g->n_output = (size_t)who->dims[1];
    if (g->n_cell == 0 || g->n_output == 0)
        return mp_node_fail(n, MP_ERR_SHAPE, "has no cells");

    g->cifg = !n->in[L_WX + G_I];
    g->peephole = in_at(n, L_PEEP + 1) != NULL;
    g->layer_norm = in_at(n, L_LN + G_F) != NULL;
    g->projection = in_at(n, L_PROJ_W) != NULL;
    g->n_gates = g->cifg ? 3 : 4;
    /* which optional inputs go together (TensorFlow Lite's CheckInputTensorDimensions) */
    bool need_i = !g->cifg;
    if ((n->in[L_WH + G_I] != NULL) != need_i || (n->in[L_BIAS + G_I] != NULL) != need_i)
        return mp_node_fail(n, MP_ERR_FORMAT, "input-gate weights, recurrent weights and bias "
                            "must be all present or all omitted (CIFG)");
    if ((in_at(n, L_PEEP + 2) != NULL) != g->peephole ||
        (in_at(n, L_PEEP + 0) != NULL) != (g->peephole && need_i))
        return mp_node_fail(n, MP_ERR_FORMAT, "peephole weights: forget and output (and input "
                            "without CIFG) must be all present or all omitted");
    if ((in_at(n, L_LN + G_C) != NULL) != g->layer_norm ||
        (in_at(n, L_LN + G_O) != NULL) != g->layer_norm ||
        (in_at(n, L_LN + G_I) != NULL) != (g->layer_norm && need_i))
        return mp_node_fail(n, MP_ERR_FORMAT, "layer-norm coefficients: forget, cell and output "
                            "(and input without CIFG) must be all present or all omitted");
    if (in_at(n, L_PROJ_B) && !g->projection)
        return mp_node_fail(n, MP_ERR_FORMAT, "a projection bias without projection weights");
    if (!g->projection && g->n_output != g->n_cell)
        return mp_node_fail(n, MP_ERR_SHAPE, "without projection the output size (%zu) must be "
                            "the number of cells (%zu)", g->n_output, g->n_cell);

    mp_status st = MP_OK;
    for (int k = 0; k < G_COUNT && st == MP_OK; k++) {
        if (k == G_I && g->cifg)
            continue;
        const mp_tensor *wx = n->in[L_WX + k], *wh = n->in[L_WH + k];
        if (!weights_dtype(wx->dtype) || !weights_dtype(wh->dtype))
            return mp_node_fail(n, MP_ERR_UNSUPPORTED, "%s gate weights '%s' (%s) and '%s' (%s): "
                                "expected f32 (or i8, u8, f16 in a hybrid model)", gate[k],
                                wx->info->name, mp_dtype_name(wx->dtype), wh->info->name,
                                mp_dtype_name(wh->dtype));
        if (!wx->is_const || !wh->is_const)
            return mp_node_fail(n, MP_ERR_UNSUPPORTED, "%s gate weights '%s' and '%s' must be "
                                "constant", gate[k], wx->info->name, wh->info->name);
        snprintf(what, sizeof what, "%s gate input weights", gate[k]);
        st = check_dims(n, L_WX + k, what, 2, g->n_cell, g->n_input);
        snprintf(what, sizeof what, "%s gate recurrent weights", gate[k]);
        if (st == MP_OK)
            st = check_dims(n, L_WH + k, what, 2, g->n_cell, g->n_output);
        snprintf(what, sizeof what, "%s gate bias", gate[k]);
        if (st == MP_OK)
            st = check_vector(n, L_BIAS + k, what, g->n_cell);
        snprintf(what, sizeof what, "%s gate layer-norm coefficients", gate[k]);
        if (st == MP_OK && g->layer_norm)
            st = check_vector(n, L_LN + k, what, g->n_cell);
    }
    for (int k = 0; k < 3 && st == MP_OK; k++)
        if (in_at(n, L_PEEP + k))
            st = check_vector(n, L_PEEP + k, "peephole weights", g->n_cell);
    if (st == MP_OK && g->projection) {
        const mp_tensor *pw = n->in[L_PROJ_W];
        if (!weights_dtype(pw->dtype) || !pw->is_const)
            return mp_node_fail(n, MP_ERR_UNSUPPORTED, "projection weights '%s' (%s) must be "
                                "constant f32 (or i8, u8, f16)", pw->info->name,
                                mp_dtype_name(pw->dtype));
        st = check_dims(n, L_PROJ_W, "projection weights", 2, g->n_output, g->n_cell);
        if (st == MP_OK && in_at(n, L_PROJ_B))
            st = check_vector(n, L_PROJ_B, "projection bias", g->n_output);
    }
    if (st != MP_OK)
        return st;
    /* the state: variable tensors of the right shapes, float32 */
    for (int k = 0; k < 2; k++) {
        const mp_tensor *t = n->in[L_H + k];
        const char *name = k ? "cell state" : "output state";
        if (!t->info->is_variable)
            return mp_node_fail(n, MP_ERR_FORMAT, "%s '%s' is not a variable tensor", name,
                                t->info->name);
        if (t->dtype != MP_DT_FLOAT32)
            return mp_node_fail(n, MP_ERR_UNSUPPORTED, "%s '%s' is %s; expected f32", name,
                                t->info->name, mp_dtype_name(t->dtype));
        st = check_dims(n, L_H + k, name, 2, g->batch, k ? g->n_cell : g->n_output);
        if (st != MP_OK)
            return st;
    }
    if (o->activation < MP_ACT_NONE || o->activation > MP_ACT_TANH)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "activation %d is not supported (NONE, RELU, "
                            "RELU_N1_TO_1, RELU6, TANH)", o->activation);
    if (!(o->cell_clip >= 0) || !(o->proj_clip >= 0))
        return mp_node_fail(n, MP_ERR_FORMAT, "negative clip");
    size_t gates = g->n_gates * g->n_cell * sizeof(float);
    g->off_gx = 0;
    g->off_gh = align64(g->time * g->batch * gates);
    g->off_m = g->off_gh + align64(g->batch * gates);
    g->scratch = g->off_m + (g->projection ? align64(g->batch * g->n_cell * sizeof(float)) : 0);
    return MP_OK;
}

static mp_status lstm_infer(mp_node *n)
{
    lstm_geom g;
    mp_status st = lstm_geometry(n, &g);
    if (st != MP_OK)
        return st;
    const mp_tensor *x = n->in[L_X];
    int32_t dims[3] = {x->dims[0], x->dims[1], (int32_t)g.n_output};
    if (n->opcode == MP_OP_LSTM)
        dims[1] = (int32_t)g.n_output;
    n->scratch_bytes = g.scratch;
    return mp_node_set_output_shape(n, x->rank, dims);
}

/* The gates' matrices (input ones, or recurrent ones) concatenated in slot order, float32,
 * in a block the caller frees: what XNNPACK packs for one fully connected operator. */
static float *concat_weights(mp_node *n, const lstm_geom *g, int base, size_t cols)
{
    size_t rows = g->n_cell, per = rows * cols;
    float *w = mp_mem_alloc(n->mem, g->n_gates * per * sizeof(float), 0, MP_MEM_KERNEL,
                            MP_OWNER_OP(n->index));
    if (!w) {
        mp_node_fail(n, MP_ERR_NOMEM, "out of memory packing the gate weights");
        return NULL;
    }
    for (int k = g->cifg ? G_F : G_I; k < G_COUNT; k++) {
        const float *v;
        void *owned;
        if (mp_const_as_f32(n, n->in[base + k], &v, &owned) != MP_OK) {
            mp_mem_free(n->mem, w);
            return NULL;
        }
        memcpy(w + slot(g, k) * per, v, per * sizeof(float));
        mp_mem_free(n->mem, owned);
    }
    return w;
}

static mp_status create_ops(mp_node *n, lstm_state *s)
{
    const lstm_geom *g = &s->g;
    size_t out_c = g->n_gates * g->n_cell;
    mp_owner own = MP_OWNER_OP(n->index);
    float *bias = NULL, *wx = NULL, *wh = NULL;
    mp_status st = MP_OK;
    enum xnn_status xs = xnn_status_success;
    const char *what = "";
    /* float32 views of the vectors run reads */
    for (int k = 0; k < G_COUNT && st == MP_OK; k++) {
        if (k == G_I && g->cifg)
            continue;
        st = mp_const_as_f32(n, n->in[L_BIAS + k], &s->bias[k], &s->owned[k]);
        if (st == MP_OK && g->layer_norm)
            st = mp_const_as_f32(n, n->in[L_LN + k], &s->ln[k], &s->owned[G_COUNT + k]);
    }
    for (int k = 0; k < 3 && st == MP_OK; k++)
        if (in_at(n, L_PEEP + k))
            st = mp_const_as_f32(n, n->in[L_PEEP + k], &s->peep[k], &s->owned[2 * G_COUNT + k]);
    if (st != MP_OK)
        return st;
    wx = concat_weights(n, g, L_WX, g->n_input);
    wh = wx ? concat_weights(n, g, L_WH, g->n_output) : NULL;
    if (!wx || !wh) {
        st = MP_ERR_NOMEM;
        if (n->err->status != MP_OK)
            st = n->err->status;
        goto out;
    }
    if (!g->layer_norm) { /* without layer norm the biases join the input product */
        bias = mp_mem_alloc(n->mem, out_c * sizeof(float), 0, MP_MEM_KERNEL, own);
        if (!bias) {
            st = mp_node_fail(n, MP_ERR_NOMEM, "out of memory packing the gate biases");
            goto out;
        }
        for (int k = g->cifg ? G_F : G_I; k < G_COUNT; k++)
            memcpy(bias + slot(g, k) * g->n_cell, s->bias[k], g->n_cell * sizeof(float));
    }
    what = "create fully connected (input weights)";
    /* (the call before mp_xnn_created reads the handle: arguments have no order) */
    xs = xnn_create_fully_connected_nc_f32(g->n_input, out_c, g->n_input, out_c, wx, bias,
                                           -INFINITY, INFINITY, 0, &s->op_x);
    xs = mp_xnn_created(xs, s->op_x);
    if (xs == xnn_status_success) {
        what = "create fully connected (recurrent weights)";
        xs = xnn_create_fully_connected_nc_f32(g->n_output, out_c, g->n_output, out_c, wh, NULL,
                                               -INFINITY, INFINITY, 0, &s->op_h);
        xs = mp_xnn_created(xs, s->op_h);
    }
    if (xs == xnn_status_success && g->projection) {
        const float *pw = NULL, *pb = NULL;
        void *pw_owned = NULL, *pb_owned = NULL;
        st = mp_const_as_f32(n, n->in[L_PROJ_W], &pw, &pw_owned);
        if (st == MP_OK && in_at(n, L_PROJ_B))
            st = mp_const_as_f32(n, n->in[L_PROJ_B], &pb, &pb_owned);
        float clip = n->opt->proj_clip;
        what = "create fully connected (projection)";
        if (st == MP_OK) {
            xs = xnn_create_fully_connected_nc_f32(g->n_cell, g->n_output, g->n_cell,
                                                   g->n_output, pw, pb,
                                                   clip > 0 ? -clip : -INFINITY,
                                                   clip > 0 ? clip : INFINITY, 0, &s->op_p);
            xs = mp_xnn_created(xs, s->op_p);
        }
        mp_mem_free(n->mem, pw_owned);
        mp_mem_free(n->mem, pb_owned);
    }
    if (st == MP_OK && xs != xnn_status_success)
        st = mp_node_xnn_fail(n, xs, what);
out:
    mp_mem_free(n->mem, wx);
    mp_mem_free(n->mem, wh);
    mp_mem_free(n->mem, bias);
    return st;
}

static void lstm_release(mp_node *n)
{
    lstm_state *s = n->state;
    if (!s)
        return;
    mp_xnn_delete(&s->op_h);
    mp_xnn_delete(&s->op_p);
    for (size_t i = 0; i < sizeof s->owned / sizeof s->owned[0]; i++)
        mp_mem_free(n->mem, s->owned[i]);
    mp_node_free_state(n, &s->op_x);
}

static mp_status lstm_prepare(mp_node *n)
{
    lstm_state *s = n->state;
    if (!s) {
        s = mp_node_state(n, sizeof *s);
        if (!s)
            return MP_ERR_NOMEM;
        mp_status st = lstm_geometry(n, &s->g);
        if (st == MP_OK)
            st = create_ops(n, s);
        if (st != MP_OK) {
            lstm_release(n);
            return st;
        }
    } else {
        /* the weights are constant: only the batch and time can change */
        lstm_geom g;
        mp_status st = lstm_geometry(n, &g);
        if (st != MP_OK)
            return st;
        s->g = g;
    }
    const lstm_geom *g = &s->g;
    char *scratch = n->scratch;
    enum xnn_status xs = xnn_setup_fully_connected_nc_f32(
        s->op_x, g->time * g->batch, n->in[L_X]->data, (float *)(scratch + g->off_gx), n->pool);
    if (xs == xnn_status_success)
        xs = xnn_setup_fully_connected_nc_f32(s->op_h, g->batch, n->in[L_H]->data,
                                              (float *)(scratch + g->off_gh), n->pool);
    if (xs == xnn_status_success && s->op_p)
        xs = xnn_setup_fully_connected_nc_f32(s->op_p, g->batch, (float *)(scratch + g->off_m),
                                              n->in[L_H]->data, n->pool);
    return xs == xnn_status_success ? MP_OK : mp_node_xnn_fail(n, xs, "setup fully connected");
}

static float sigmoidf(float x)
{
    return 1.0f / (1.0f + expf(-x));
}

static float activate(float x, int32_t act)
{
    switch (act) {
    case MP_ACT_RELU:
        return x > 0 ? x : 0;
    case MP_ACT_RELU_N1_TO_1:
        return x < -1 ? -1 : x > 1 ? 1 : x;
    case MP_ACT_RELU6:
        return x < 0 ? 0 : x > 6 ? 6 : x;
    case MP_ACT_TANH:
        return tanhf(x);
    default:
        return x;
    }
}

/* Layer norm of one gate's pre-activations (TensorFlow Lite's MeanStddevNormalization, then
 * the coefficients and the bias). */
static void layer_norm(float *v, size_t n, const float *coef, const float *bias)
{
    double sum = 0, sq = 0;
    for (size_t j = 0; j < n; j++)
        sum += v[j];
    float mean = (float)(sum / (double)n);
    for (size_t j = 0; j < n; j++)
        sq += ((double)v[j] - mean) * ((double)v[j] - mean);
    float inv = 1.0f / sqrtf((float)(sq / (double)n) + 1e-8f);
    for (size_t j = 0; j < n; j++)
        v[j] = (v[j] - mean) * inv * coef[j] + bias[j];
}

/* One gate's pre-activations v (input and recurrent products summed): peephole, layer norm,
 * then sigmoid (cell gate: act). */
static void finish_gate(const lstm_state *s, int k, float *v, const float *cell, int32_t act)
{
    const lstm_geom *g = &s->g;
    size_t nc = g->n_cell;
    const float *peep = k == G_I ? s->peep[0] : k == G_F ? s->peep[1] : k == G_O ? s->peep[2] : NULL;
    if (peep)
        for (size_t j = 0; j < nc; j++)
            v[j] += peep[j] * cell[j];
    if (g->layer_norm)
        layer_norm(v, nc, s->ln[k], s->bias[k]);
    if (k == G_C)
        for (size_t j = 0; j < nc; j++)
            v[j] = activate(v[j], act);
    else
        for (size_t j = 0; j < nc; j++)
            v[j] = sigmoidf(v[j]);
}

static mp_status lstm_run(mp_node *n)
{
    lstm_state *s = n->state;
    const lstm_geom *g = &s->g;
    if (g->time * g->batch == 0)
        return MP_OK;
    const mp_op_options *o = n->opt;
    int32_t act = o->activation;
    bool time_major = n->opcode == MP_OP_LSTM || o->time_major;
    size_t nc = g->n_cell, no = g->n_output, ng = g->n_gates;
    char *scratch = n->scratch;
    const float *gx = (const float *)(scratch + g->off_gx);
    float *gh = (float *)(scratch + g->off_gh);
    float *mbuf = (float *)(scratch + g->off_m);
    float *h = n->in[L_H]->data, *c = n->in[L_C]->data, *y = n->out[0]->data;
    enum xnn_status xs = xnn_run_operator(s->op_x, n->pool);
    if (xs != xnn_status_success)
        return mp_node_xnn_fail(n, xs, "run fully connected");
    for (size_t t = 0; t < g->time; t++) {
        xs = xnn_run_operator(s->op_h, n->pool); /* gh = W_h h(t-1) */
        if (xs != xnn_status_success)
            return mp_node_xnn_fail(n, xs, "run fully connected");
        for (size_t b = 0; b < g->batch; b++) {
            size_t row = time_major ? t * g->batch + b : b * g->time + t;
            float *v = gh + b * ng * nc, *cb = c + b * nc;
            const float *xr = gx + row * ng * nc;
            for (size_t j = 0; j < ng * nc; j++)
                v[j] += xr[j];
            float *vi = g->cifg ? NULL : v + slot(g, G_I) * nc, *vf = v + slot(g, G_F) * nc;
            float *vc = v + slot(g, G_C) * nc, *vo = v + slot(g, G_O) * nc;
            finish_gate(s, G_F, vf, cb, act);
            if (vi)
                finish_gate(s, G_I, vi, cb, act);
            finish_gate(s, G_C, vc, cb, act);
            float clip = o->cell_clip;
            for (size_t j = 0; j < nc; j++) {
                float in_gate = vi ? vi[j] : 1.0f - vf[j];
                float cj = vf[j] * cb[j] + in_gate * vc[j];
                if (clip > 0)
                    cj = cj < -clip ? -clip : cj > clip ? clip : cj;
                cb[j] = cj;
            }
            finish_gate(s, G_O, vo, cb, act);
            /* gh (h's product) is done with h(t-1): h can take the new values */
            float *m = g->projection ? mbuf + b * nc : h + b * no;
            for (size_t j = 0; j < nc; j++)
                m[j] = vo[j] * activate(cb[j], act);
        }
        if (g->projection) {
            xs = xnn_run_operator(s->op_p, n->pool); /* h = clip(W_p m + b_p) */
            if (xs != xnn_status_success)
                return mp_node_xnn_fail(n, xs, "run fully connected");
        }
        for (size_t b = 0; b < g->batch; b++) {
            size_t row = time_major ? t * g->batch + b : b * g->time + t;
            memcpy(y + row * no, h + b * no, no * sizeof(float));
        }
    }
    return MP_OK;
}

const mp_kernel mp_kernels_lstm[] = {
    {MP_OP_LSTM, LSTM_OPTIONAL, false, 20, 24, 1, lstm_infer, lstm_prepare, lstm_run, lstm_release},
    {MP_OP_UNIDIRECTIONAL_SEQUENCE_LSTM, LSTM_OPTIONAL, false, 20, 24, 1, lstm_infer,
     lstm_prepare, lstm_run, lstm_release},
    {-1, 0, false, 0, 0, 0, NULL, NULL, NULL, NULL},
};
