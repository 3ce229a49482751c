/* A pipeline of models on the public session API: edges, copies or bindings, shape
 * propagation, the shared arena and the chain's trace (see pipeline.h).
 *
 * How an edge moves its bytes (mode, chosen at each sync from what the edge asks and what
 * the two ends allow). A model's output may feed several inputs of later models (fan-out):
 * its edges, one per reader, form a group whose first edge (the owner) holds the group's one
 * buffer G. The writer's output is bound to G (wbound) when it can be (its shape known before
 * running, not also an input) and some edge of the group asks bind; otherwise G is filled by
 * one get_output per run right after the writer ran, counted on the owner edge. Each reader
 * then, right before its model runs:
 *   E_COPY      copy asked: set_input from G (one copy in; under all-copy the group's one
 *               copy out is the owner's); caller -> model set_input; model -> caller
 *               get_output
 *   E_BIND      the reader's input bound to G, which the writer writes: no copy
 *   E_CONVERT   converted from G into buffer B, to which the reader's input is bound (other
 *               dtypes or quantization): one conversion
 *   E_COPY_IN   set_input from G (other shapes; a caller's input buffer that cannot be bound;
 *               a reader input that its model writes, variable state): one copy
 *   E_COPY_OUT  the reader's input bound to G, filled by the copy out (the output's shape
 *               known only while running; an output that is also an input)
 * Readers never write G: a session refuses an operator writing a model input
 * (check_dataflow), and an input that is variable state (written in place) is copied in.
 * Every call on a session is followed by a note of which model the recorder's new events
 * belong to (the journal), from which mp_pipeline_close numbers the chain's trace. */
#include "engine/pipeline.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/kernels/quant_math.h"
#include "engine/memory/plan.h"

enum { E_COPY = 0, E_BIND, E_CONVERT, E_COPY_IN, E_COPY_OUT };

typedef struct edge_rt {
    int mode;
    void *buf;          /* the pipeline's buffer (NULL: none, or in the shared arena) */
    size_t cap;
    void *buf2;         /* E_CONVERT: the reader's side */
    size_t cap2;
    bool in_arena;      /* G is a slot of the shared arena */
    uint64_t arena_off;
    int32_t owner;      /* model-to-model: the group's first edge (itself for others) */
    bool wbound;        /* owner: the writer's output is bound to G */
    void *g;            /* owner: G as placed now (buf, or the arena's slot) */
    size_t gcap;
} edge_rt;

typedef struct seg {
    size_t end;         /* events [previous end, end) belong to model */
    int32_t model;
} seg;

typedef struct src_ref {
    int32_t model, output; /* model -1: the caller's (a chain input) */
    bool named;            /* by mp_pipeline_connect or mp_pipeline_connect_caller, not by
                              position */
} src_ref;

typedef struct chain_in {
    int32_t model, input;  /* chain input c feeds input `input` of model `model` */
} chain_in;

typedef struct caller_buf {
    void *p;
    size_t cap;
} caller_buf;

struct mp_pipeline {
    mp_pipe_options opt;
    char *planner;
    int n;
    mp_session *s[MP_PIPE_MAX_MODELS];
    char *name[MP_PIPE_MAX_MODELS];
    src_ref *src[MP_PIPE_MAX_MODELS];     /* per input of model k >= 1 */
    int n_cin;                            /* the chain's inputs (after resolve) */
    chain_in *cin_at;
    int n_edges;
    mp_pipe_edge *edges;
    edge_rt *ert;
    bool resolved, synced, closed;
    int32_t (*in_shape)[1 + MP_MAX_RANK]; /* the chain inputs' shapes at the last sync */
    caller_buf *cin, *cout;               /* per chain input, output */
    void **own_out;                       /* the pipeline's buffers for outputs without one */
    size_t *own_out_cap;
    char *arena;                          /* share_arena: the chain's arena */
    size_t arena_cap;
    mp_pipe_arena af;
    uint64_t runs;
    seg *segs;
    size_t n_segs, cap_segs;
    bool nomem_journal;
    /* the models' descriptions, kept for the chain's trace after the sessions are gone */
    mp_trace *combined_meta;
};

static char dummy_buf[64] __attribute__((aligned(64)));

const char *mp_pipe_why_name(int why)
{
    static const char *const names[MP_WHY_COUNT] = {"none", "copy", "dtype", "shape",
                                                   "alignment", "slack", "dynamic",
                                                   "passthrough", "writes"};
    return why >= 0 && why < MP_WHY_COUNT ? names[why] : "?";
}

/* ---- the journal ------------------------------------------------------------------------ */

static void note(mp_pipeline *p, int32_t model)
{
    if (!p->opt.trace || p->nomem_journal)
        return;
    size_t end = mp_trace_count(p->opt.trace);
    if (p->n_segs && p->segs[p->n_segs - 1].model == model) {
        p->segs[p->n_segs - 1].end = end;
        return;
    }
    if (p->n_segs && p->segs[p->n_segs - 1].end == end)
        return; /* nothing recorded since */
    if (p->n_segs == p->cap_segs) {
        size_t cap = p->cap_segs ? 2 * p->cap_segs : 64;
        seg *v = realloc(p->segs, cap * sizeof *v);
        if (!v) {
            p->nomem_journal = true;
            return;
        }
        p->segs = v;
        p->cap_segs = cap;
    }
    p->segs[p->n_segs++] = (seg){end, model};
}

/* ---- creating and connecting ------------------------------------------------------------ */

mp_status mp_pipeline_create(const mp_pipe_options *o, int n_models, const char *const *models,
                             mp_pipeline **out, mp_error *err)
{
    *out = NULL;
    if (n_models < 1 || n_models > MP_PIPE_MAX_MODELS)
        return mp_fail(err, MP_ERR_ARG, "a pipeline takes 1 to %d models, got %d",
                       MP_PIPE_MAX_MODELS, n_models);
    mp_pipeline *p = calloc(1, sizeof *p);
    if (!p)
        return mp_fail(err, MP_ERR_NOMEM, "out of memory creating a pipeline");
    p->opt = *o;
    p->planner = o->planner ? strdup(o->planner) : NULL;
    p->opt.planner = p->planner;
    mp_status st = MP_OK;
    for (int k = 0; k < n_models && st == MP_OK; k++) {
        mp_session_options so = {.threads = o->threads, .threadpool = o->threadpool,
                                 .mode = o->mode, .planner = o->planner, .trace = o->trace};
        st = mp_session_create(&so, &p->s[k], err);
        if (st != MP_OK)
            break;
        p->n = k + 1;
        p->name[k] = strdup(models[k]);
        if (!p->name[k]) {
            st = mp_fail(err, MP_ERR_NOMEM, "out of memory creating a pipeline");
            break;
        }
        st = mp_session_load(p->s[k], models[k], err);
        note(p, k);
        /* the chain's trace numbers each model's tensors and operators after the model
         * before's: a model of several subgraphs numbers more than its subgraph 0 holds */
        if (st == MP_OK && mp_session_model(p->s[k])->n_subgraphs > 1)
            st = mp_fail(err, MP_ERR_UNSUPPORTED, "%s: the model has %d subgraphs (WHILE / IF); "
                         "memprof chains single-subgraph models", models[k],
                         (int)mp_session_model(p->s[k])->n_subgraphs);
        if (st == MP_OK && o->share_arena && o->mode != MP_MEMORY_DYNAMIC)
            st = mp_session_use_external_arena(p->s[k], true, err);
        if (st != MP_OK)
            break;
        int ni = mp_session_input_count(p->s[k]);
        p->src[k] = calloc((size_t)ni + 1, sizeof(src_ref));
        if (!p->src[k]) {
            st = mp_fail(err, MP_ERR_NOMEM, "out of memory creating a pipeline");
            break;
        }
        /* by position: model k's input i from model k-1's output i; the inputs past model
         * k-1's outputs are the caller's (chain inputs) */
        for (int i = 0; i < ni; i++)
            p->src[k][i] = k > 0 && i < mp_session_output_count(p->s[k - 1])
                               ? (src_ref){k - 1, i, false}
                               : (src_ref){-1, -1, false};
    }
    if (st == MP_OK) {
        int no = mp_session_output_count(p->s[p->n - 1]);
        p->cout = calloc((size_t)no + 1, sizeof *p->cout);
        p->own_out = calloc((size_t)no + 1, sizeof *p->own_out);
        p->own_out_cap = calloc((size_t)no + 1, sizeof *p->own_out_cap);
        if (!p->cout || !p->own_out || !p->own_out_cap)
            st = mp_fail(err, MP_ERR_NOMEM, "out of memory creating a pipeline");
    }
    if (st != MP_OK) {
        mp_pipeline_close(p, NULL, NULL);
        mp_pipeline_free(p);
        return st;
    }
    *out = p;
    return MP_OK;
}

/* Output or input of session s by name or decimal index; -1 when none. */
static int find_io(mp_session *s, const char *what, bool input)
{
    int n = input ? mp_session_input_count(s) : mp_session_output_count(s);
    for (int i = 0; i < n; i++) {
        const mp_tensor *t = input ? mp_session_input(s, i) : mp_session_output(s, i);
        if (strcmp(t->info->name, what) == 0)
            return i;
    }
    char *end;
    long v = strtol(what, &end, 10);
    return *what && !*end && v >= 0 && v < n ? (int)v : -1;
}

mp_status mp_pipeline_connect(mp_pipeline *p, int from_model, const char *output, int to_model,
                              const char *input, mp_error *err)
{
    if (p->resolved)
        return mp_fail(err, MP_ERR_ARG, "connections are made before the first prepare or "
                       "set_input");
    if (to_model < 1 || to_model >= p->n || from_model < 0 || from_model >= to_model)
        return mp_fail(err, MP_ERR_ARG,
                       "cannot connect model %d to model %d: a model feeds a later one (models "
                       "1..%d)", from_model + 1, to_model + 1, p->n);
    int o = find_io(p->s[from_model], output, false);
    if (o < 0)
        return mp_fail(err, MP_ERR_ARG, "model %d (%s) has no output '%s'", from_model + 1,
                       p->name[from_model], output);
    int i = find_io(p->s[to_model], input, true);
    if (i < 0)
        return mp_fail(err, MP_ERR_ARG, "model %d (%s) has no input '%s'", to_model + 1,
                       p->name[to_model], input);
    const src_ref *was = &p->src[to_model][i];
    if (was->named && was->model < 0)
        return mp_fail(err, MP_ERR_ARG, "model %d input '%s' is a chain input (fed by the "
                       "caller); it cannot also be fed by model %d", to_model + 1,
                       mp_session_input(p->s[to_model], i)->info->name, from_model + 1);
    p->src[to_model][i] = (src_ref){from_model, o, true};
    return MP_OK;
}

mp_status mp_pipeline_connect_caller(mp_pipeline *p, int to_model, const char *input,
                                     mp_error *err)
{
    if (p->resolved)
        return mp_fail(err, MP_ERR_ARG, "connections are made before the first prepare or "
                       "set_input");
    if (to_model < 0 || to_model >= p->n)
        return mp_fail(err, MP_ERR_ARG, "no model %d (models 1..%d)", to_model + 1, p->n);
    int i = find_io(p->s[to_model], input, true);
    if (i < 0)
        return mp_fail(err, MP_ERR_ARG, "model %d (%s) has no input '%s'", to_model + 1,
                       p->name[to_model], input);
    if (to_model == 0)
        return MP_OK; /* model 1's inputs are the caller's already */
    const src_ref *was = &p->src[to_model][i];
    if (was->named && was->model >= 0)
        return mp_fail(err, MP_ERR_ARG, "model %d input '%s' is fed by model %d output '%s'; "
                       "it cannot also be a chain input", to_model + 1,
                       mp_session_input(p->s[to_model], i)->info->name, was->model + 1,
                       mp_session_output(p->s[was->model], was->output)->info->name);
    p->src[to_model][i] = (src_ref){-1, -1, true};
    return MP_OK;
}

/* Input i of model k comes from the caller. */
static bool is_chain_input(const mp_pipeline *p, int k, int i)
{
    return k == 0 || p->src[k][i].model < 0;
}

/* The edges, once: the chain's inputs, the model-to-model edges by reader, the outputs. */
static mp_status resolve(mp_pipeline *p, mp_error *err)
{
    if (p->resolved)
        return MP_OK;
    int n = mp_session_output_count(p->s[p->n - 1]), n_cin = 0;
    for (int k = 0; k < p->n; k++)
        for (int i = 0; i < mp_session_input_count(p->s[k]); i++) {
            n++;
            n_cin += is_chain_input(p, k, i);
        }
    p->edges = calloc((size_t)n + 1, sizeof *p->edges);
    p->ert = calloc((size_t)n + 1, sizeof *p->ert);
    p->cin_at = calloc((size_t)n_cin + 1, sizeof *p->cin_at);
    p->cin = calloc((size_t)n_cin + 1, sizeof *p->cin);
    p->in_shape = calloc((size_t)n_cin + 1, sizeof *p->in_shape);
    if (!p->edges || !p->ert || !p->cin_at || !p->cin || !p->in_shape)
        return mp_fail(err, MP_ERR_NOMEM, "out of memory connecting the pipeline");
    /* the chain's inputs first (edge c is chain input c): model 1's, then the later
     * models' inputs that no output feeds */
    int e = 0;
    for (int k = 0; k < p->n; k++)
        for (int i = 0; i < mp_session_input_count(p->s[k]); i++) {
            if (!is_chain_input(p, k, i))
                continue;
            p->cin_at[e] = (chain_in){k, i};
            p->edges[e] = (mp_pipe_edge){-1, e, k, i, -1, mp_session_model(p->s[k])->inputs[i],
                                         p->opt.io, false, 0, "", 0, 0, 0};
            e++;
        }
    p->n_cin = n_cin;
    for (int k = 1; k < p->n; k++)
        for (int i = 0; i < mp_session_input_count(p->s[k]); i++) {
            src_ref r = p->src[k][i];
            if (r.model < 0)
                continue;
            /* fan-out: the first edge from this output owns the group's buffer */
            p->ert[e].owner = e;
            for (int j = 0; j < e; j++)
                if (p->edges[j].from_model == r.model && p->edges[j].from_output == r.output) {
                    p->ert[e].owner = j;
                    break;
                }
            p->edges[e++] = (mp_pipe_edge){
                r.model, r.output, k, i, mp_session_model(p->s[r.model])->outputs[r.output],
                mp_session_model(p->s[k])->inputs[i], p->opt.io, false, 0, "", 0, 0, 0};
        }
    int last = p->n - 1;
    for (int j = 0; j < mp_session_output_count(p->s[last]); j++)
        p->edges[e++] = (mp_pipe_edge){last, j, -1, j, mp_session_model(p->s[last])->outputs[j],
                                       -1, p->opt.io, false, 0, "", 0, 0, 0};
    p->n_edges = e;
    for (int j = 0; j < e; j++)
        if (p->edges[j].from_model < 0 || p->edges[j].to_model < 0)
            p->ert[j].owner = j;
    p->resolved = true;
    return MP_OK;
}

mp_status mp_pipeline_resolve(mp_pipeline *p, mp_error *err)
{
    if (p->closed)
        return mp_fail(err, MP_ERR_ARG, "the pipeline is closed");
    return resolve(p, err);
}

int mp_pipeline_input_count(const mp_pipeline *p)
{
    return p->resolved ? p->n_cin : 0;
}

bool mp_pipeline_input_at(const mp_pipeline *p, int c, int *model, int *input)
{
    if (!p->resolved || c < 0 || c >= p->n_cin)
        return false;
    *model = p->cin_at[c].model;
    *input = p->cin_at[c].input;
    return true;
}

int mp_pipeline_input_index(const mp_pipeline *p, int model, int input)
{
    for (int c = 0; p->resolved && c < p->n_cin; c++)
        if (p->cin_at[c].model == model && p->cin_at[c].input == input)
            return c;
    return -1;
}

mp_status mp_pipeline_set_edge_io(mp_pipeline *p, int e, mp_pipe_io io, mp_error *err)
{
    mp_status st = resolve(p, err);
    if (st != MP_OK)
        return st;
    if (e < 0 || e >= p->n_edges)
        return mp_fail(err, MP_ERR_ARG, "no edge %d (the pipeline has %d)", e, p->n_edges);
    if (p->edges[e].io != io) {
        p->edges[e].io = io;
        p->synced = false;
    }
    return MP_OK;
}

/* ---- what an edge may do ---------------------------------------------------------------- */

static size_t elem_size(const mp_tensor *t)
{
    size_t z = mp_dtype_size(t->dtype);
    return z ? z : 1;
}

static bool same_quant(const mp_tensor *a, const mp_tensor *b)
{
    const mp_quant *x = &a->info->quant, *y = &b->info->quant;
    if (x->count != y->count)
        return false;
    for (int32_t i = 0; i < x->count; i++) {
        if (x->scale[i] != y->scale[i])
            return false;
        int64_t zx = x->zero_point ? x->zero_point[i] : 0, zy = y->zero_point ? y->zero_point[i] : 0;
        if (zx != zy)
            return false;
    }
    return x->count <= 1 || x->quantized_dimension == y->quantized_dimension;
}

/* The conversions an edge can make: float32 and per-tensor quantized integers. */
static bool convertible(const mp_tensor *t)
{
    if (t->info->quant.count > 1)
        return false;
    int32_t lo, hi;
    return t->dtype == MP_DT_FLOAT32 ||
           (t->info->quant.count == 1 && mp_quant_dtype_range(t->dtype, &lo, &hi));
}

static float real_at(const mp_tensor *t, const void *data, size_t i)
{
    float scale = t->info->quant.count ? t->info->quant.scale[0] : 1.0f;
    int32_t zp = t->info->quant.count && t->info->quant.zero_point
                     ? (int32_t)t->info->quant.zero_point[0] : 0;
    switch (t->dtype) {
    case MP_DT_FLOAT32: return ((const float *)data)[i];
    case MP_DT_UINT8: return mp_dequantize_f32(((const uint8_t *)data)[i], scale, zp);
    case MP_DT_INT8: return mp_dequantize_f32(((const int8_t *)data)[i], scale, zp);
    case MP_DT_INT16: return mp_dequantize_f32(((const int16_t *)data)[i], scale, zp);
    case MP_DT_INT32: return mp_dequantize_f32(((const int32_t *)data)[i], scale, zp);
    default: return 0.0f;
    }
}

static void store_at(const mp_tensor *t, void *data, size_t i, float x)
{
    if (t->dtype == MP_DT_FLOAT32) {
        ((float *)data)[i] = x;
        return;
    }
    float scale = t->info->quant.scale[0];
    int32_t zp = t->info->quant.zero_point ? (int32_t)t->info->quant.zero_point[0] : 0;
    int32_t lo = 0, hi = 0;
    mp_quant_dtype_range(t->dtype, &lo, &hi);
    int32_t q = mp_quantize_f32(x, scale, zp, lo, hi);
    switch (t->dtype) {
    case MP_DT_UINT8: ((uint8_t *)data)[i] = (uint8_t)q; break;
    case MP_DT_INT8: ((int8_t *)data)[i] = (int8_t)q; break;
    case MP_DT_INT16: ((int16_t *)data)[i] = (int16_t)q; break;
    case MP_DT_INT32: ((int32_t *)data)[i] = q; break;
    default: break;
    }
}

static const mp_tensor *edge_src(const mp_pipeline *p, const mp_pipe_edge *e)
{
    return e->from_model >= 0 ? mp_session_output(p->s[e->from_model], e->from_output) : NULL;
}

static const mp_tensor *edge_dst(const mp_pipeline *p, const mp_pipe_edge *e)
{
    return e->to_model >= 0 ? mp_session_input(p->s[e->to_model], e->to_input) : NULL;
}

static bool output_is_input(mp_session *s, int o)
{
    const mp_model *m = mp_session_model(s);
    for (int32_t i = 0; i < m->n_inputs; i++)
        if (m->inputs[i] == m->outputs[o])
            return true;
    return false;
}

/* Model s writes its input tensor t in place: only variable state (what LSTM, RNN, SVDF
 * keep); the session refuses any operator writing another model input (check_dataflow). */
static bool reader_writes(mp_session *s, int32_t t)
{
    return mp_session_model(s)->tensors[t].is_variable;
}

static bool in_group(const mp_pipeline *p, int ei, int owner)
{
    return p->edges[ei].from_model >= 0 && p->edges[ei].to_model >= 0 &&
           p->ert[ei].owner == owner;
}

static int group_size(const mp_pipeline *p, int owner)
{
    int n = 0;
    for (int ei = owner; ei < p->n_edges; ei++)
        n += in_group(p, ei, owner);
    return n;
}

/* The group's writer writes straight into G: its output's shape is known before running (as
 * far as is known: place_buffers corrects), it is not also an input, and an edge asks bind. */
static bool group_wbound(mp_pipeline *p, int owner)
{
    const mp_pipe_edge *o = &p->edges[owner];
    if (output_is_input(p->s[o->from_model], o->from_output) ||
        mp_session_output_deferred(p->s[o->from_model], o->from_output))
        return false;
    for (int ei = owner; ei < p->n_edges; ei++)
        if (in_group(p, ei, owner) && p->edges[ei].io == MP_PIPE_BIND)
            return true;
    return false;
}

static void set_why(mp_pipe_edge *e, int why, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_why(mp_pipe_edge *e, int why, const char *fmt, ...)
{
    e->why = why;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->reason, sizeof e->reason, fmt, ap);
    va_end(ap);
}

/* Choose a model-to-model edge's mode for the current shapes (the reader's input shape
 * already propagated). */
static mp_status choose_link(mp_pipeline *p, int ei, mp_error *err)
{
    mp_pipe_edge *e = &p->edges[ei];
    edge_rt *r = &p->ert[ei];
    const mp_tensor *a = edge_src(p, e), *b = edge_dst(p, e);
    char sa[128], sb[128];
    mp_shape_str(a->rank, a->dims, sa, sizeof sa);
    mp_shape_str(b->rank, b->dims, sb, sizeof sb);
    bool dyn = mp_session_output_deferred(p->s[e->from_model], e->from_output);
    bool pass = output_is_input(p->s[e->from_model], e->from_output);
    bool conv = a->dtype != b->dtype || !same_quant(a, b);
    if (conv && (!convertible(a) || !convertible(b)))
        return mp_fail(err, MP_ERR_UNSUPPORTED,
                       "model %d output '%s' (%s) cannot feed model %d input '%s' (%s): "
                       "memprof converts float32 and per-tensor quantized integers only",
                       e->from_model + 1, a->info->name, mp_dtype_name(a->dtype), e->to_model + 1,
                       b->info->name, mp_dtype_name(b->dtype));
    if (!dyn && mp_tensor_elements(a) != mp_tensor_elements(b))
        return mp_fail(err, MP_ERR_SHAPE, "model %d output '%s' %s cannot feed model %d input "
                       "'%s' %s: not as many elements", e->from_model + 1, a->info->name, sa,
                       e->to_model + 1, b->info->name, sb);
    if (conv && (dyn || pass))
        return mp_fail(err, MP_ERR_UNSUPPORTED, "model %d output '%s' needs a conversion to "
                       "feed model %d input '%s', and its %s", e->from_model + 1, a->info->name,
                       e->to_model + 1, b->info->name,
                       dyn ? "shape is known only while running" : "is also an input");
    int32_t ow = r->owner;
    bool wb = group_wbound(p, ow);
    p->ert[ow].wbound = wb;
    int readers = group_size(p, ow);
    e->why = MP_WHY_NONE;
    e->reason[0] = 0;
    if (conv) { /* whatever is asked: a byte copy would not do */
        r->mode = E_CONVERT;
        set_why(e, MP_WHY_DTYPE, "%s%s%s to %s%s: converted (one copy)", mp_dtype_name(a->dtype),
                a->info->quant.count ? " quantized" : "", "", mp_dtype_name(b->dtype),
                b->info->quant.count ? " quantized" : "");
        if (a->dtype == b->dtype)
            set_why(e, MP_WHY_DTYPE, "%s with other quantization (scale or zero point): "
                    "requantized (one copy)", mp_dtype_name(a->dtype));
    } else if (e->io == MP_PIPE_COPY) {
        r->mode = E_COPY;
        if (readers == 1)
            set_why(e, MP_WHY_COPY_ASKED, "copy asked: copied out of model %d and into model %d",
                    e->from_model + 1, e->to_model + 1);
        else if (wb)
            set_why(e, MP_WHY_COPY_ASKED, "copy asked: copied into model %d from the buffer "
                    "model %d writes for its bound readers (one copy)", e->to_model + 1,
                    e->from_model + 1);
        else if (ow == ei)
            set_why(e, MP_WHY_COPY_ASKED, "copy asked: copied out of model %d once for its %d "
                    "readers, and into model %d", e->from_model + 1, readers, e->to_model + 1);
        else
            set_why(e, MP_WHY_COPY_ASKED, "copy asked: copied into model %d (the one copy out "
                    "of model %d is edge %d's)", e->to_model + 1, e->from_model + 1, ow);
    } else if (reader_writes(p->s[e->to_model], e->to_tensor)) {
        r->mode = E_COPY_IN;
        set_why(e, MP_WHY_WRITES, "'%s' is state model %d writes in place: copied into it "
                "(one copy)", b->info->name, e->to_model + 1);
    } else if (dyn) {
        r->mode = E_COPY_OUT;
        set_why(e, MP_WHY_DYNAMIC, "the shape of '%s' is known only while model %d runs: "
                "copied out of it (one copy)", a->info->name, e->from_model + 1);
    } else if (pass) {
        r->mode = E_COPY_OUT;
        set_why(e, MP_WHY_PASSTHROUGH, "'%s' is also an input of model %d: copied out of it "
                "(one copy)", a->info->name, e->from_model + 1);
    } else if (!mp_tensor_same_shape(a, b)) {
        r->mode = E_COPY_IN;
        set_why(e, MP_WHY_SHAPE, "shape %s to %s: copied into model %d (one copy)", sa, sb,
                e->to_model + 1);
    } else {
        r->mode = E_BIND;
    }
    if (r->mode == E_COPY_OUT && ow != ei)
        snprintf(e->reason + strlen(e->reason), sizeof e->reason - strlen(e->reason),
                 "; that copy is edge %d's, read here too", ow);
    e->bound = r->mode == E_BIND;
    return MP_OK;
}

/* Choose a caller's input edge's mode for the caller's buffer (none yet: bind if asked). */
static void choose_input(mp_pipeline *p, int ei)
{
    mp_pipe_edge *e = &p->edges[ei];
    edge_rt *r = &p->ert[ei];
    const mp_tensor *b = edge_dst(p, e);
    const caller_buf *c = &p->cin[e->from_output];
    e->why = MP_WHY_NONE;
    e->reason[0] = 0;
    r->mode = E_BIND;
    if (e->io == MP_PIPE_COPY) {
        r->mode = E_COPY;
        set_why(e, MP_WHY_COPY_ASKED, "copy asked: copied into model %d", e->to_model + 1);
    } else if (c->p && (uintptr_t)c->p % elem_size(b) != 0) {
        r->mode = E_COPY;
        set_why(e, MP_WHY_ALIGN, "the caller's buffer at %p is not aligned to %zu bytes "
                "(its %s elements): copied in (one copy)", c->p, elem_size(b),
                mp_dtype_name(b->dtype));
    } else if (c->p && c->cap < b->bytes + MP_INPUT_SLACK) {
        r->mode = E_COPY;
        set_why(e, MP_WHY_SLACK, "the caller's buffer holds %zu bytes; binding needs %zu "
                "(its bytes + %zu of XNNPACK slack): copied in (one copy)", c->cap,
                b->bytes + MP_INPUT_SLACK, MP_INPUT_SLACK);
    }
    e->bound = r->mode == E_BIND;
}

/* Choose a chain output edge's mode. */
static void choose_output(mp_pipeline *p, int ei)
{
    mp_pipe_edge *e = &p->edges[ei];
    edge_rt *r = &p->ert[ei];
    const mp_tensor *a = edge_src(p, e);
    const caller_buf *c = &p->cout[e->to_input];
    e->why = MP_WHY_NONE;
    e->reason[0] = 0;
    r->mode = E_BIND;
    if (e->io == MP_PIPE_COPY) {
        r->mode = E_COPY;
        set_why(e, MP_WHY_COPY_ASKED, "copy asked: copied out of model %d", e->from_model + 1);
    } else if (mp_session_output_deferred(p->s[e->from_model], e->from_output)) {
        r->mode = E_COPY;
        set_why(e, MP_WHY_DYNAMIC, "the shape of '%s' is known only while model %d runs: "
                "copied out (one copy)", a->info->name, e->from_model + 1);
    } else if (output_is_input(p->s[e->from_model], e->from_output)) {
        r->mode = E_COPY;
        set_why(e, MP_WHY_PASSTHROUGH, "'%s' is also an input of model %d: copied out (one "
                "copy)", a->info->name, e->from_model + 1);
    } else if (c->p && (uintptr_t)c->p % elem_size(a) != 0) {
        r->mode = E_COPY;
        set_why(e, MP_WHY_ALIGN, "the caller's buffer at %p is not aligned to %zu bytes: "
                "copied out (one copy)", c->p, elem_size(a));
    }
    e->bound = r->mode == E_BIND;
}

/* ---- buffers ---------------------------------------------------------------------------- */

/* The pipeline's buffer of at least `need` bytes, from model k's allocator (kind io, owned by
 * tensor t), kept when big enough. */
static mp_status reserve(mp_pipeline *p, int k, int32_t t, void **buf, size_t *cap, size_t need,
                         mp_error *err)
{
    if (*buf && *cap >= need)
        return MP_OK;
    mp_mem *mem = mp_session_mem(p->s[k]);
    mp_mem_free(mem, *buf);
    *buf = mp_mem_alloc(mem, need, 64, MP_MEM_IO, MP_OWNER_TENSOR(t));
    *cap = *buf ? need : 0;
    note(p, k);
    if (!*buf)
        return mp_fail(err, MP_ERR_NOMEM, "out of memory for a pipeline buffer of %zu bytes", need);
    return MP_OK;
}

static void release(mp_pipeline *p, int k, void **buf, size_t *cap)
{
    if (*buf) {
        mp_mem_free(mp_session_mem(p->s[k]), *buf);
        note(p, k);
    }
    *buf = NULL;
    *cap = 0;
}

/* Where chain output j goes: the caller's buffer, or the pipeline's own. */
static mp_status out_buffer(mp_pipeline *p, int j, size_t bytes, void **buf, size_t *cap,
                            mp_error *err)
{
    if (p->cout[j].p) {
        if (p->cout[j].cap < bytes)
            return mp_fail(err, MP_ERR_ARG, "the caller's buffer for output %d holds %zu bytes; "
                           "it needs %zu", j, p->cout[j].cap, bytes);
        *buf = p->cout[j].p;
        *cap = p->cout[j].cap;
        return MP_OK;
    }
    int last = p->n - 1;
    mp_status st = reserve(p, last, mp_session_model(p->s[last])->outputs[j], &p->own_out[j],
                           &p->own_out_cap[j], bytes + MP_INPUT_SLACK, err);
    *buf = p->own_out[j];
    *cap = p->own_out_cap[j];
    return st;
}

/* ---- the shared arena ------------------------------------------------------------------- */

static int32_t producer_of(const mp_model *m, int32_t t)
{
    for (int32_t i = 0; i < m->n_ops; i++)
        for (int32_t j = 0; j < m->ops[i].n_outputs; j++)
            if (m->ops[i].outputs[j] == t)
                return i;
    return 0;
}

static int32_t last_reader(const mp_model *m, int32_t t)
{
    int32_t last = 0;
    for (int32_t i = 0; i < m->n_outputs; i++) /* read by the caller after the last step */
        if (m->outputs[i] == t && m->n_ops > 0)
            last = m->n_ops - 1;
    for (int32_t i = 0; i < m->n_ops; i++)
        for (int32_t j = 0; j < m->ops[i].n_inputs; j++)
            if (m->ops[i].inputs[j] == t)
                last = i;
    return last;
}

/* Edge e owns a group whose buffer G is planned in the chain's arena: the writer writes it
 * and a reader is bound to it. */
static bool arena_group(const mp_pipeline *p, int e)
{
    if (p->edges[e].from_model < 0 || p->edges[e].to_model < 0 || p->ert[e].owner != e ||
        !p->ert[e].wbound)
        return false;
    for (int j = e; j < p->n_edges; j++)
        if (in_group(p, j, e) && p->ert[j].mode == E_BIND)
            return true;
    return false;
}

/* One plan for every model's buffers and the bound model-to-model buffers, the models'
 * operators as one sequence of steps; then every session placed in it. */
static mp_status plan_chain(mp_pipeline *p, mp_error *err)
{
    const mp_planner *pl = p->planner ? mp_planner_find(p->planner) : mp_planner_default();
    mp_plan_item *items[MP_PIPE_MAX_MODELS] = {0};
    int32_t n_items[MP_PIPE_MAX_MODELS] = {0}, base[MP_PIPE_MAX_MODELS + 1] = {0};
    uint64_t align = 64;
    mp_status st = MP_OK;
    int32_t n = 0;
    for (int k = 0; k < p->n && st == MP_OK; k++) {
        st = mp_session_plan_items(p->s[k], &items[k], &n_items[k], &align, err);
        note(p, k);
        n += n_items[k];
        base[k + 1] = base[k] + mp_session_model(p->s[k])->n_ops;
    }
    int32_t n_bound = 0;
    for (int e = 0; e < p->n_edges; e++)
        n_bound += arena_group(p, e);
    mp_plan_buf *bufs = calloc((size_t)(n + n_bound) + 1, sizeof *bufs);
    uint64_t *off = calloc((size_t)(n + n_bound) + 1, sizeof *off);
    if (st == MP_OK && (!bufs || !off))
        st = mp_fail(err, MP_ERR_NOMEM, "out of memory planning the chain's arena");
    uint64_t separate = 0, total = 0;
    int32_t m = 0;
    for (int k = 0; k < p->n && st == MP_OK; k++) {
        int32_t first = m;
        for (int32_t i = 0; i < n_items[k]; i++)
            bufs[m++] = (mp_plan_buf){items[k][i].bytes, base[k] + items[k][i].first,
                                      base[k] + items[k][i].last};
        /* the model alone, with its own steps */
        uint64_t t = 0;
        for (int32_t i = first; i < m; i++)
            bufs[i].first -= base[k], bufs[i].last -= base[k];
        if (m > first)
            st = pl->plan(bufs + first, m - first, align, off + first, &t, NULL);
        for (int32_t i = first; i < m; i++)
            bufs[i].first += base[k], bufs[i].last += base[k];
        separate += t;
    }
    /* each bound group's buffer G: from its writer to its last reader in the chain (a bound
     * reader's last operator reading it; a reader copying or converting it, right before its
     * model's first step) */
    uint64_t boundary = 0;
    for (int e = 0; e < p->n_edges && st == MP_OK; e++) {
        if (!arena_group(p, e))
            continue;
        const mp_pipe_edge *x = &p->edges[e];
        const mp_tensor *a = edge_src(p, x);
        int32_t f = base[x->from_model] + producer_of(mp_session_model(p->s[x->from_model]),
                                                      x->from_tensor);
        int32_t l = f;
        for (int j = e; j < p->n_edges; j++) {
            if (!in_group(p, j, e))
                continue;
            const mp_pipe_edge *y = &p->edges[j];
            int32_t at = base[y->to_model];
            if (p->ert[j].mode == E_BIND)
                at += last_reader(mp_session_model(p->s[y->to_model]), y->to_tensor);
            if (at > l)
                l = at;
        }
        bufs[m++] = (mp_plan_buf){a->bytes + MP_INPUT_SLACK, f, l};
        boundary += mp_plan_align_up(a->bytes + MP_INPUT_SLACK, align);
    }
    if (st == MP_OK && m > 0)
        st = pl->plan(bufs, m, align, off, &total, NULL);
    char why[256];
    if (st == MP_OK && m > 0 && !mp_plan_check(bufs, m, align, off, total, why, sizeof why))
        st = mp_fail(err, MP_ERR_BACKEND, "planner '%s' made an invalid chain plan: %s", pl->name,
                     why);
    if (st == MP_OK) {
        p->af = (mp_pipe_arena){true, total, mp_plan_lower_bound(bufs, m, align, NULL),
                                separate + boundary, boundary, m, n_bound, p->af.plans + 1};
        size_t need = (size_t)total + MP_INPUT_SLACK;
        if (!p->arena || p->arena_cap < need) {
            mp_mem *mem0 = mp_session_mem(p->s[0]);
            mp_mem_free(mem0, p->arena);
            p->arena = mp_mem_alloc_long(mem0, need, align, MP_MEM_STATIC, MP_OWNER_NONE);
            p->arena_cap = p->arena ? need : 0;
            note(p, 0);
            if (!p->arena)
                st = mp_fail(err, MP_ERR_NOMEM, "out of memory for the chain's arena of %zu "
                             "bytes", need);
        }
    }
    /* the bound buffers first (the sessions' bindings then point into the arena) */
    int32_t bi = n;
    for (int e = 0; e < p->n_edges && st == MP_OK; e++) {
        if (!arena_group(p, e))
            continue;
        const mp_pipe_edge *x = &p->edges[e];
        edge_rt *r = &p->ert[e];
        release(p, x->from_model, &r->buf, &r->cap);
        r->in_arena = true;
        r->arena_off = off[bi];
        r->g = p->arena + off[bi];
        r->gcap = (size_t)bufs[bi].size;
        bi++;
        st = mp_session_set_output_buffer(p->s[x->from_model], x->from_output, r->g, r->gcap,
                                          err);
        note(p, x->from_model);
        for (int j = e; j < p->n_edges && st == MP_OK; j++) {
            if (!in_group(p, j, e) || p->ert[j].mode != E_BIND)
                continue;
            st = mp_session_set_input_buffer(p->s[p->edges[j].to_model], p->edges[j].to_input,
                                             r->g, r->gcap, err);
            note(p, p->edges[j].to_model);
        }
    }
    int32_t at = 0;
    for (int k = 0; k < p->n && st == MP_OK; k++) {
        st = mp_session_place_arena(p->s[k], p->arena, p->arena_cap, off + at, n_items[k], err);
        note(p, k);
        at += n_items[k];
    }
    for (int k = 0; k < p->n; k++)
        free(items[k]);
    free(bufs);
    free(off);
    return st;
}

/* ---- sync: shapes, modes, bindings, prepare --------------------------------------------- */

static const mp_tensor *chain_input_tensor(const mp_pipeline *p, int c)
{
    return mp_session_input(p->s[p->cin_at[c].model], p->cin_at[c].input);
}

static void remember_shapes(mp_pipeline *p)
{
    for (int c = 0; c < p->n_cin; c++) {
        const mp_tensor *t = chain_input_tensor(p, c);
        p->in_shape[c][0] = t->rank;
        memcpy(p->in_shape[c] + 1, t->dims, sizeof(int32_t) * MP_MAX_RANK);
    }
}

/* A chain input's shape changed on its model's session since the last sync. */
static bool shapes_changed(const mp_pipeline *p)
{
    for (int c = 0; c < p->n_cin; c++) {
        const mp_tensor *t = chain_input_tensor(p, c);
        if (p->in_shape[c][0] != t->rank ||
            memcmp(p->in_shape[c] + 1, t->dims, sizeof(int32_t) * (size_t)t->rank) != 0)
            return true;
    }
    return false;
}

/* Model k's input i takes the shape of the output feeding it (same rank), if it differs. */
static mp_status propagate(mp_pipeline *p, int ei, mp_error *err)
{
    const mp_pipe_edge *e = &p->edges[ei];
    const mp_tensor *a = edge_src(p, e), *b = edge_dst(p, e);
    if (mp_session_output_deferred(p->s[e->from_model], e->from_output) ||
        mp_tensor_same_shape(a, b) || a->rank != b->rank)
        return MP_OK;
    mp_status st = mp_session_set_input_shape(p->s[e->to_model], e->to_input, a->rank, a->dims, err);
    note(p, e->to_model);
    if (st != MP_OK) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        st = mp_fail(err, st, "model %d output '%s' cannot feed model %d input '%s': %s",
                     e->from_model + 1, a->info->name, e->to_model + 1, b->info->name, msg);
    }
    return st;
}

/* Bind what binds before the model plans, so that its arena leaves those buffers out: to a
 * placeholder until place_buffers (or plan_chain) gives the buffers their size. */
static mp_status bind_model(mp_pipeline *p, int k, mp_error *err)
{
    mp_status st = MP_OK;
    for (int ei = 0; ei < p->n_edges && st == MP_OK; ei++) {
        const mp_pipe_edge *e = &p->edges[ei];
        edge_rt *r = &p->ert[ei];
        if (e->to_model == k && e->from_model < 0) { /* the caller's input */
            const caller_buf *c = &p->cin[e->from_output];
            bool bind = r->mode == E_BIND && c->p;
            st = mp_session_set_input_buffer(p->s[k], e->to_input, bind ? c->p : NULL,
                                             bind ? c->cap : 0, err);
        } else if (e->to_model == k) { /* the reader's side */
            bool bind = r->mode == E_BIND || r->mode == E_CONVERT || r->mode == E_COPY_OUT;
            st = mp_session_set_input_buffer(p->s[k], e->to_input, bind ? dummy_buf : NULL, 0,
                                             err);
        }
        if (st == MP_OK && e->from_model == k && r->owner == ei &&
            !output_is_input(p->s[k], e->from_output)) {
            bool bind = e->to_model < 0 ? r->mode == E_BIND : group_wbound(p, ei);
            st = mp_session_set_output_buffer(p->s[k], e->from_output, bind ? dummy_buf : NULL,
                                              0, err);
        }
        note(p, k);
    }
    return st;
}

/* The pipeline's buffers at the current sizes, and the sessions' bindings pointed at them. */
static mp_status place_buffers(mp_pipeline *p, mp_error *err)
{
    mp_status st = MP_OK;
    for (int ei = 0; ei < p->n_edges && st == MP_OK; ei++) {
        const mp_pipe_edge *e = &p->edges[ei];
        edge_rt *r = &p->ert[ei];
        if (e->from_model < 0) { /* the caller's input */
            const caller_buf *c = &p->cin[e->from_output];
            if (r->mode == E_BIND && c->p)
                st = mp_session_set_input_buffer(p->s[e->to_model], e->to_input, c->p, c->cap,
                                                 err);
            note(p, e->to_model);
            continue;
        }
        const mp_tensor *a = edge_src(p, e);
        if (e->to_model < 0) { /* the chain's output */
            if (r->mode != E_BIND)
                continue;
            void *buf;
            size_t cap;
            st = out_buffer(p, e->to_input, a->bytes, &buf, &cap, err);
            if (st == MP_OK)
                st = mp_session_set_output_buffer(p->s[e->from_model], e->from_output, buf, cap,
                                                  err);
            note(p, e->from_model);
            continue;
        }
        const mp_tensor *b = edge_dst(p, e);
        edge_rt *o = &p->ert[r->owner];
        if (r->owner == ei && !o->wbound) { /* the writer keeps its output: copied out */
            if (!output_is_input(p->s[e->from_model], e->from_output)) /* else its input's */
                st = mp_session_set_output_buffer(p->s[e->from_model], e->from_output, NULL, 0,
                                                  err);
            note(p, e->from_model);
        } else if (r->owner == ei && !o->in_arena) { /* the writer writes G */
            st = reserve(p, e->from_model, e->from_tensor, &o->buf, &o->cap,
                         a->bytes + MP_INPUT_SLACK, err);
            o->g = o->buf;
            o->gcap = o->cap;
            if (st == MP_OK)
                st = mp_session_set_output_buffer(p->s[e->from_model], e->from_output, o->g,
                                                  o->gcap, err);
            note(p, e->from_model);
        }
        if (st == MP_OK && r->mode == E_BIND && !o->in_arena) {
            st = mp_session_set_input_buffer(p->s[e->to_model], e->to_input, o->g, o->gcap, err);
            note(p, e->to_model);
        }
        if (st == MP_OK && r->mode == E_CONVERT) {
            st = reserve(p, e->to_model, e->to_tensor, &r->buf2, &r->cap2,
                         b->bytes + MP_INPUT_SLACK, err);
            if (st == MP_OK)
                st = mp_session_set_input_buffer(p->s[e->to_model], e->to_input, r->buf2,
                                                 r->cap2, err);
            note(p, e->to_model);
        }
    }
    return st;
}

static mp_status sync(mp_pipeline *p, mp_error *err)
{
    mp_status st = resolve(p, err);
    for (int k = 0; k < p->n && st == MP_OK; k++) {
        for (int ei = 0; ei < p->n_edges && st == MP_OK; ei++) {
            const mp_pipe_edge *e = &p->edges[ei];
            if (e->to_model != k)
                continue;
            if (e->from_model < 0) {
                choose_input(p, ei);
            } else {
                st = propagate(p, ei, err);
                if (st == MP_OK)
                    st = choose_link(p, ei, err);
            }
        }
        for (int ei = 0; ei < p->n_edges && st == MP_OK; ei++)
            if (p->edges[ei].from_model == k && p->edges[ei].to_model < 0)
                choose_output(p, ei);
        if (st == MP_OK)
            st = bind_model(p, k, err);
        if (st == MP_OK) {
            st = mp_session_prepare(p->s[k], err);
            note(p, k);
        }
    }
    for (int ei = 0; ei < p->n_edges; ei++)
        p->ert[ei].in_arena = false;
    if (st == MP_OK && p->opt.share_arena && p->opt.mode != MP_MEMORY_DYNAMIC)
        st = plan_chain(p, err);
    if (st == MP_OK)
        st = place_buffers(p, err);
    if (st == MP_OK) {
        remember_shapes(p);
        p->synced = true;
    }
    return st;
}

mp_status mp_pipeline_prepare(mp_pipeline *p, mp_error *err)
{
    if (p->closed)
        return mp_fail(err, MP_ERR_ARG, "the pipeline is closed");
    return sync(p, err);
}

mp_status mp_pipeline_set_input(mp_pipeline *p, int i, void *buf, size_t capacity, mp_error *err)
{
    if (p->closed)
        return mp_fail(err, MP_ERR_ARG, "the pipeline is closed");
    mp_status st = resolve(p, err);
    if (st != MP_OK)
        return st;
    if (i < 0 || i >= p->n_cin)
        return mp_fail(err, MP_ERR_ARG, "no chain input %d (the chain has %d)", i, p->n_cin);
    caller_buf *c = &p->cin[i];
    bool moved = c->p != buf;
    c->p = buf;
    c->cap = capacity;
    if (!p->synced)
        return MP_OK;
    /* another buffer may change what the edge (edge i: chain input i's) can do */
    const mp_pipe_edge *e = &p->edges[i];
    int was = p->ert[i].mode;
    choose_input(p, i);
    if (p->ert[i].mode != was) {
        p->synced = false;
    } else if (p->ert[i].mode == E_BIND && (moved || buf)) {
        st = mp_session_set_input_buffer(p->s[e->to_model], e->to_input, buf, capacity, err);
        note(p, e->to_model);
    }
    return st;
}

mp_status mp_pipeline_set_output(mp_pipeline *p, int j, void *buf, size_t capacity, mp_error *err)
{
    if (j < 0 || j >= mp_session_output_count(p->s[p->n - 1]))
        return mp_fail(err, MP_ERR_ARG, "no chain output %d (model %d has %d)", j, p->n,
                       mp_session_output_count(p->s[p->n - 1]));
    p->cout[j] = (caller_buf){buf, capacity};
    p->synced = false;
    return MP_OK;
}

/* ---- running ---------------------------------------------------------------------------- */

static void count(mp_pipe_edge *e, uint64_t bytes)
{
    e->copies++;
    e->copy_bytes += bytes;
}

/* After model k ran: what its outputs owe their readers. */
static mp_status after_model(mp_pipeline *p, int k, mp_error *err)
{
    mp_status st = MP_OK;
    for (int ei = 0; ei < p->n_edges && st == MP_OK; ei++) {
        mp_pipe_edge *e = &p->edges[ei];
        edge_rt *r = &p->ert[ei];
        if (e->from_model != k)
            continue;
        e->runs++;
        const mp_tensor *a = edge_src(p, e);
        if (e->to_model < 0) { /* the chain's output */
            if (r->mode == E_BIND)
                continue;
            void *buf;
            size_t cap;
            st = out_buffer(p, e->to_input, a->bytes, &buf, &cap, err);
            if (st == MP_OK)
                st = mp_session_get_output(p->s[k], e->from_output, buf, a->bytes, err);
            note(p, k);
            count(e, a->bytes);
            continue;
        }
        if (r->owner != ei || r->wbound)
            continue;
        /* the group's one copy out, read by every reader */
        st = reserve(p, k, e->from_tensor, &r->buf, &r->cap, a->bytes + MP_INPUT_SLACK, err);
        r->g = r->buf;
        r->gcap = r->cap;
        if (st == MP_OK)
            st = mp_session_get_output(p->s[k], e->from_output, r->g, a->bytes, err);
        note(p, k);
        count(e, a->bytes);
    }
    return st;
}

/* Before model k runs: its inputs fed by earlier models take their bytes from the groups'
 * buffers (copied, converted or bound), so that nothing written for model k lies in the
 * arena while models between the writer and model k run. */
static mp_status before_model(mp_pipeline *p, int k, mp_error *err)
{
    mp_status st = MP_OK;
    for (int ei = 0; ei < p->n_edges && st == MP_OK; ei++) {
        mp_pipe_edge *e = &p->edges[ei];
        edge_rt *r = &p->ert[ei];
        if (e->to_model != k || e->from_model < 0 || r->mode == E_BIND)
            continue;
        const edge_rt *o = &p->ert[r->owner];
        mp_session *sb = p->s[k];
        const mp_tensor *a = edge_src(p, e), *b = edge_dst(p, e);
        bool dyn = mp_session_output_deferred(p->s[e->from_model], e->from_output);
        if (r->mode != E_CONVERT && dyn && !mp_tensor_same_shape(a, b) && a->rank == b->rank) {
            st = mp_session_set_input_shape(sb, e->to_input, a->rank, a->dims, err);
            note(p, k);
        }
        if (st != MP_OK)
            break;
        if (r->mode == E_COPY_OUT) {
            st = mp_session_set_input_buffer(sb, e->to_input, o->g, o->gcap, err);
            note(p, k);
        } else if (r->mode == E_CONVERT) {
            size_t n = mp_tensor_elements(b);
            for (size_t i = 0; i < n; i++)
                store_at(b, r->buf2, i, real_at(a, o->g, i));
            if (p->opt.trace)
                mp_trace_copy(p->opt.trace, e->to_tensor, b->bytes, MP_COPY_IN);
            note(p, k);
            count(e, b->bytes);
        } else { /* E_COPY, E_COPY_IN */
            if (b->bytes != a->bytes)
                return mp_fail(err, MP_ERR_SHAPE, "model %d output '%s' (%zu bytes) cannot feed "
                               "model %d input '%s' (%zu bytes): not as many bytes",
                               e->from_model + 1, a->info->name, a->bytes, k + 1, b->info->name,
                               b->bytes);
            st = mp_session_set_input(sb, e->to_input, o->g, b->bytes, err);
            note(p, k);
            count(e, b->bytes);
        }
    }
    return st;
}

/* Before model k runs: its chain inputs from the caller's buffers (copied in right before
 * it, as its inputs fed by earlier models are: in the shared arena, an earlier model's
 * activations may lie where the copy goes). */
static mp_status caller_inputs(mp_pipeline *p, int k, mp_error *err)
{
    mp_status st = MP_OK;
    for (int ei = 0; ei < p->n_cin && st == MP_OK; ei++) {
        mp_pipe_edge *e = &p->edges[ei];
        if (e->to_model != k)
            continue;
        e->runs++;
        const caller_buf *c = &p->cin[e->from_output];
        const mp_tensor *b = edge_dst(p, e);
        if (p->ert[ei].mode != E_BIND) {
            st = mp_session_set_input(p->s[k], e->to_input, c->p, b->bytes, err);
            count(e, b->bytes);
        }
        note(p, k);
    }
    return st;
}

mp_status mp_pipeline_run(mp_pipeline *p, mp_error *err)
{
    if (p->closed)
        return mp_fail(err, MP_ERR_ARG, "the pipeline is closed");
    mp_status st = MP_OK;
    if (!p->synced || (p->resolved && shapes_changed(p)))
        st = sync(p, err);
    for (int c = 0; c < p->n_cin && st == MP_OK; c++) /* every one before any model runs */
        if (!p->cin[c].p)
            st = mp_fail(err, MP_ERR_ARG, "chain input %d (model %d input '%s') has no buffer "
                         "(mp_pipeline_set_input)", c, p->cin_at[c].model + 1,
                         chain_input_tensor(p, c)->info->name);
    for (int k = 0; k < p->n && st == MP_OK; k++) {
        st = caller_inputs(p, k, err);
        if (st == MP_OK)
            st = before_model(p, k, err);
        if (st == MP_OK)
            st = mp_session_run(p->s[k], err);
        note(p, k);
        if (st != MP_OK) {
            char msg[sizeof err->msg];
            snprintf(msg, sizeof msg, "%s", err->msg);
            st = mp_fail(err, st, "model %d: %s", k + 1, msg);
        }
        if (st == MP_OK)
            st = after_model(p, k, err);
    }
    if (st == MP_OK)
        p->runs++;
    return st;
}

const void *mp_pipeline_output(const mp_pipeline *p, int j)
{
    return p->cout[j].p ? p->cout[j].p : p->own_out[j];
}

const mp_tensor *mp_pipeline_output_tensor(const mp_pipeline *p, int j)
{
    return mp_session_output(p->s[p->n - 1], j);
}

int mp_pipeline_model_count(const mp_pipeline *p)
{
    return p->n;
}

mp_session *mp_pipeline_session(mp_pipeline *p, int k)
{
    return k >= 0 && k < p->n && !p->closed ? p->s[k] : NULL;
}

const char *mp_pipeline_model_name(const mp_pipeline *p, int k)
{
    return k >= 0 && k < p->n ? p->name[k] : NULL;
}

int mp_pipeline_edge_count(const mp_pipeline *p)
{
    return p->n_edges;
}

const mp_pipe_edge *mp_pipeline_edges(const mp_pipeline *p)
{
    return p->edges;
}

void mp_pipeline_arena(const mp_pipeline *p, mp_pipe_arena *out)
{
    *out = p->af;
}

uint64_t mp_pipeline_runs(const mp_pipeline *p)
{
    return p->runs;
}

/* ---- the chain's trace ------------------------------------------------------------------ */

/* The models' tables one after another in a new trace (before the sessions go). */
static mp_status describe_chain(mp_pipeline *p, mp_error *err)
{
    mp_trace *tr = mp_trace_create();
    if (!tr)
        return mp_fail(err, MP_ERR_NOMEM, "out of memory building the chain's trace");
    int32_t nt = 0, no = 0;
    for (int k = 0; k < p->n; k++) {
        nt += mp_session_model(p->s[k])->n_tensors;
        no += mp_session_model(p->s[k])->n_ops;
    }
    const mp_model *last = mp_session_model(p->s[p->n - 1]);
    int32_t tbase[MP_PIPE_MAX_MODELS];
    for (int k = 0, t = 0; k < p->n; t += mp_session_model(p->s[k])->n_tensors, k++)
        tbase[k] = t;
    /* the chain's inputs (model 1's alone when never connected) */
    int32_t n_in = p->resolved ? p->n_cin : mp_session_model(p->s[0])->n_inputs;
    mp_trace_meta *tm = mp_trace_meta_mut(tr);
    const mp_trace_meta *src = mp_trace_get_meta(p->opt.trace);
    char label[1024] = "";
    size_t len = 0;
    for (int k = 0; k < p->n && len < sizeof label; k++)
        len += (size_t)snprintf(label + len, sizeof label - len, "%s%s", k ? " | " : "",
                                p->name[k]);
    mp_trace_model *models = calloc((size_t)p->n, sizeof *models);
    bool ok = models && mp_trace_alloc_tables(tr, nt, no, n_in, last->n_outputs) &&
              mp_trace_set_str(tr, &tm->model, label) &&
              mp_trace_set_str(tr, &tm->mode, src->mode) &&
              mp_trace_set_str(tr, &tm->planner, src->planner);
    tm->threads = src->threads;
    int32_t tb = 0, ob = 0;
    int32_t io[512];
    for (int k = 0; k < p->n && ok; k++) {
        const mp_model *m = mp_session_model(p->s[k]);
        models[k] = (mp_trace_model){p->name[k], tb, m->n_tensors, ob, m->n_ops, 0, 0};
        for (int32_t t = 0; t < m->n_tensors && ok; t++) {
            tm->tensors[tb + t].dtype = m->tensors[t].dtype;
            tm->tensors[tb + t].is_const = m->tensors[t].data != NULL && !m->tensors[t].is_variable;
            int32_t root = mp_session_shared_slot(p->s[k], t); /* in place, in the chain's numbers */
            tm->tensors[tb + t].in_place = root >= 0;
            tm->tensors[tb + t].shares = root >= 0 ? tb + root : 0;
            ok = mp_trace_set_str(tr, &tm->tensors[tb + t].name, m->tensors[t].name);
        }
        for (int32_t i = 0; i < m->n_ops && ok; i++) {
            const mp_op_info *op = &m->ops[i];
            int32_t n_io = op->n_inputs + op->n_outputs;
            int32_t *v = n_io <= 512 ? io : malloc(sizeof(int32_t) * (size_t)n_io);
            ok = v != NULL;
            for (int32_t j = 0; ok && j < n_io; j++) {
                int32_t t = j < op->n_inputs ? op->inputs[j] : op->outputs[j - op->n_inputs];
                v[j] = t >= 0 ? t + tb : -1;
            }
            ok = ok && mp_trace_set_op(tr, ob + i, mp_op_name(op->opcode), op->n_inputs, v,
                                       op->n_outputs, v + op->n_inputs);
            if (v != io)
                free(v);
        }
        if (k == p->n - 1)
            for (int32_t i = 0; i < m->n_outputs; i++)
                tm->outputs[i] = m->outputs[i] + tb;
        tb += m->n_tensors;
        ob += m->n_ops;
    }
    for (int32_t c = 0; c < n_in && ok; c++) {
        chain_in ci = p->resolved ? p->cin_at[c] : (chain_in){0, c};
        tm->inputs[c] = mp_session_model(p->s[ci.model])->inputs[ci.input] + tbase[ci.model];
    }
    ok = ok && mp_trace_set_models(tr, p->n, models);
    free(models);
    if (!ok) {
        mp_trace_destroy(tr);
        return mp_fail(err, MP_ERR_NOMEM, "out of memory building the chain's trace");
    }
    p->combined_meta = tr;
    return MP_OK;
}

static bool is_block_event(int type)
{
    return type == MP_EV_ALLOC || type == MP_EV_FREE || type == MP_EV_REALLOC;
}

/* The recorder's events, each model's tensors, operators and blocks numbered after those of
 * the models before it. */
static mp_status number_events(mp_pipeline *p, mp_error *err)
{
    mp_trace *out = p->combined_meta;
    const mp_trace *tr = p->opt.trace;
    const mp_event *ev = mp_trace_events(tr);
    size_t n = mp_trace_count(tr);
    if (p->nomem_journal)
        return mp_fail(err, MP_ERR_NOMEM, "out of memory noting which model recorded what");
    note(p, p->n - 1); /* anything after the last note: the last model's teardown */
    uint64_t max_id[MP_PIPE_MAX_MODELS] = {0}, id_base[MP_PIPE_MAX_MODELS] = {0};
    size_t s = 0;
    for (size_t i = 0; i < n; i++) {
        while (s + 1 < p->n_segs && i >= p->segs[s].end)
            s++;
        int32_t k = p->n_segs ? p->segs[s].model : 0;
        if (is_block_event(ev[i].type) && ev[i].id > max_id[k])
            max_id[k] = ev[i].id;
    }
    mp_trace_meta *tm = mp_trace_meta_mut(out);
    for (int k = 1; k < p->n; k++)
        id_base[k] = id_base[k - 1] + max_id[k - 1];
    for (int k = 0; k < p->n; k++) {
        tm->models[k].first_id = id_base[k];
        tm->models[k].n_ids = max_id[k];
    }
    s = 0;
    for (size_t i = 0; i < n; i++) {
        while (s + 1 < p->n_segs && i >= p->segs[s].end)
            s++;
        int32_t k = p->n_segs ? p->segs[s].model : 0;
        mp_event e = ev[i];
        const mp_trace_model *md = &tm->models[k];
        if (e.tensor >= 0)
            e.tensor += md->first_tensor;
        if (e.op >= 0)
            e.op += md->first_op;
        if (e.op_last >= 0)
            e.op_last += md->first_op;
        if (is_block_event(e.type) && e.id > 0)
            e.id += id_base[k];
        /* the chain's arena is model 1's block; a model's own arena is its own */
        if (e.type == MP_EV_PLAN && !(p->opt.share_arena && p->opt.mode != MP_MEMORY_DYNAMIC))
            e.id += id_base[k];
        if (!mp_trace_append_raw(out, &e))
            return mp_fail(err, MP_ERR_NOMEM, "out of memory building the chain's trace");
    }
    if (mp_trace_truncated(tr))
        mp_trace_mark_truncated(out);
    return MP_OK;
}

mp_status mp_pipeline_close(mp_pipeline *p, mp_trace **combined, mp_error *err)
{
    mp_error scratch;
    if (!err)
        err = &scratch;
    if (combined)
        *combined = NULL;
    if (p->closed)
        return MP_OK;
    mp_status st = MP_OK;
    if (p->opt.trace && p->n > 0 && p->s[p->n - 1] && mp_session_model(p->s[p->n - 1]) &&
        combined)
        st = describe_chain(p, err);
    for (int ei = 0; ei < p->n_edges; ei++) {
        const mp_pipe_edge *e = &p->edges[ei];
        edge_rt *r = &p->ert[ei];
        if (e->from_model >= 0)
            release(p, e->from_model, &r->buf, &r->cap);
        if (e->to_model >= 0)
            release(p, e->to_model, &r->buf2, &r->cap2);
    }
    int no = p->n > 0 && p->s[p->n - 1] && mp_session_model(p->s[p->n - 1])
                 ? mp_session_output_count(p->s[p->n - 1]) : 0;
    for (int j = 0; p->own_out && j < no; j++)
        release(p, p->n - 1, &p->own_out[j], &p->own_out_cap[j]);
    /* the later models first: the chain's arena is a block of model 1's */
    for (int k = p->n - 1; k >= 1; k--) {
        mp_session_destroy(p->s[k]);
        p->s[k] = NULL;
        note(p, k);
    }
    if (p->arena) {
        mp_mem_free(mp_session_mem(p->s[0]), p->arena);
        p->arena = NULL;
        note(p, 0);
    }
    mp_session_destroy(p->s[0]);
    p->s[0] = NULL;
    note(p, 0);
    p->closed = true;
    if (st == MP_OK && p->combined_meta)
        st = number_events(p, err);
    if (st == MP_OK && combined) {
        *combined = p->combined_meta;
        p->combined_meta = NULL;
    }
    return st;
}

void mp_pipeline_free(mp_pipeline *p)
{
    if (!p)
        return;
    if (!p->closed)
        mp_pipeline_close(p, NULL, NULL);
    mp_trace_destroy(p->combined_meta);
    for (int k = 0; k < MP_PIPE_MAX_MODELS; k++) {
        free(p->name[k]);
        free(p->src[k]);
    }
    free(p->edges);
    free(p->ert);
    free(p->cin_at);
    free(p->in_shape);
    free(p->cin);
    free(p->cout);
    free(p->own_out);
    free(p->own_out_cap);
    free(p->segs);
    free(p->planner);
    free(p);
}
