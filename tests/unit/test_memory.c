/* The memory managers, judged from the trace against figures this file derives on its own.
 *
 * Nothing expected here is copied from the program's output: tensor lifetimes come from the
 * model's operator list (first writer to last reader over the operators that run, model
 * inputs from step 0, model outputs to the last step), tensor sizes from the shapes the
 * session reports (dims product x element size), and the live-set lower bound from a brute
 * force over the steps. The trace is then walked event by event here (not through the
 * analyzers) to see what the engine really allocated; the summary analyzer is checked too.
 *
 * Covered: the five call orders A-E of DESIGN.md (auto mode) on tiny_ic_resnet8_float and
 * tfsupport_dilated_conv, dynamic mode's peak, the keep_stale_arena debug switch's
 * duplicated bytes, plan invariants and mode equivalence on every shared model that runs,
 * and a saved trace read back. */
#include "tests/util/testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyzers/summary.h"
#include "engine/model/ops.h"
#include "engine/model/reference_input.h"
#include "engine/session.h"
#include "trace/trace.h"
#include "reports/text_summary.h"

/* Slot alignment of the static planner and the bytes every arena and every dynamic buffer
 * carries past its end (XNN_EXTRA_BYTES), as documented for the managers. */
#define ALIGN 64
#define EXTRA 16

#define MAX_SHAPES 8
#define MAX_OUTPUTS 16

static uint64_t align_up(uint64_t b)
{
    return (b + ALIGN - 1) / ALIGN * ALIGN;
}

/* ---- lifetimes, derived from the model's operator list ------------------------------- */

typedef struct life {
    int32_t n_tensors, n_ops;
    bool *folded;    /* per operator: computed at prepare (shape arithmetic, constants only) */
    bool *managed;   /* per tensor: gets memory from the managers (not const, not folded) */
    bool *variable;  /* per tensor: is_variable, a block of its own (kind variable), never planned */
    int32_t *first;  /* per tensor: first step (operator index) using it */
    int32_t *last;   /* last step using it */
    /* what the in-place rule needs (life_share): per operator its code, its input count, its
     * first two inputs and its only output (-1: none, or not one output); per tensor
     * whether it is a model input / output */
    int32_t *op_code, *op_n_in, *op_in0, *op_in1, *op_out0;
    bool *io_in, *io_out;
} life;

static bool is_const(const mp_model *m, int32_t t)
{
    return m->tensors[t].data != NULL;
}

/* Whether an operator's output shape depends on the values of inputs after the first (a
 * shape, multiples, begin and size, paddings, an axis, dims, a range): TensorFlow Lite's
 * operators whose output shapes are data as well as shapes. */
static bool shape_from_values(int32_t opcode)
{
    switch (opcode) {
    case MP_OP_RESHAPE: case MP_OP_TILE: case MP_OP_SLICE: case MP_OP_STRIDED_SLICE:
    case MP_OP_PAD: case MP_OP_PADV2: case MP_OP_FILL: case MP_OP_RANGE: case MP_OP_TRANSPOSE:
    case MP_OP_EXPAND_DIMS: case MP_OP_BROADCAST_TO: case MP_OP_SPLIT: case MP_OP_SPLIT_V:
    case MP_OP_MEAN: case MP_OP_SUM: case MP_OP_REDUCE_MAX: case MP_OP_REDUCE_MIN:
    case MP_OP_REDUCE_PROD: case MP_OP_ARG_MAX: case MP_OP_ARG_MIN:
    case MP_OP_SPACE_TO_BATCH_ND: case MP_OP_BATCH_TO_SPACE_ND: case MP_OP_RESIZE_BILINEAR:
        return true;
    default:
        return false;
    }
}

/* An operator is folded when it only reads shapes (SHAPE) of a tensor whose shape is known
 * at prepare, or every input is a constant or the output of a folded operator. A shape is
 * known at prepare unless an operator upstream takes it from a value known only while
 * running (shape_from_values, with such an input not known then). A running operator's
 * tensors live from its first writer
 * (or step 0 for model inputs, whole run for variables) to its last reader (or the last
 * step for model outputs). */
static void life_compute(const mp_model *m, life *L)
{
    L->n_tensors = m->n_tensors;
    L->n_ops = m->n_ops;
    L->folded = calloc((size_t)m->n_ops + 1, sizeof(bool));
    L->managed = calloc((size_t)m->n_tensors + 1, sizeof(bool));
    L->variable = calloc((size_t)m->n_tensors + 1, sizeof(bool));
    assert_non_null(L->variable);
    L->first = calloc((size_t)m->n_tensors + 1, sizeof(int32_t));
    L->last = calloc((size_t)m->n_tensors + 1, sizeof(int32_t));
    L->op_code = calloc((size_t)m->n_ops + 1, sizeof(int32_t));
    L->op_in0 = calloc((size_t)m->n_ops + 1, sizeof(int32_t));
    L->op_in1 = calloc((size_t)m->n_ops + 1, sizeof(int32_t));
    L->op_n_in = calloc((size_t)m->n_ops + 1, sizeof(int32_t));
    L->op_out0 = calloc((size_t)m->n_ops + 1, sizeof(int32_t));
    L->io_in = calloc((size_t)m->n_tensors + 1, sizeof(bool));
    L->io_out = calloc((size_t)m->n_tensors + 1, sizeof(bool));
    assert_true(L->op_code && L->op_in0 && L->op_in1 && L->op_n_in && L->op_out0 && L->io_in &&
                L->io_out);
    for (int32_t i = 0; i < m->n_ops; i++) {
        const mp_op_info *op = &m->ops[i];
        L->op_code[i] = op->opcode;
        L->op_n_in[i] = op->n_inputs;
        L->op_in0[i] = op->n_inputs > 0 ? op->inputs[0] : -1;
        L->op_in1[i] = op->n_inputs > 1 ? op->inputs[1] : -1;
        L->op_out0[i] = op->n_outputs == 1 ? op->outputs[0] : -1;
    }
    for (int32_t i = 0; i < m->n_inputs; i++)
        L->io_in[m->inputs[i]] = true;
    for (int32_t i = 0; i < m->n_outputs; i++)
        L->io_out[m->outputs[i]] = true;
    bool *known = calloc((size_t)m->n_tensors + 1, sizeof(bool)); /* value known at prepare */
    bool *shaped = calloc((size_t)m->n_tensors + 1, sizeof(bool)); /* shape known then */
    assert_non_null(shaped);
    assert_non_null(L->folded);
    assert_non_null(L->managed);
    assert_non_null(L->first);
    assert_non_null(L->last);
    assert_non_null(known);
    int32_t end = m->n_ops > 0 ? m->n_ops - 1 : 0;
    for (int32_t t = 0; t < m->n_tensors; t++) {
        known[t] = is_const(m, t);
        shaped[t] = true; /* constants and model inputs; operators' outputs below */
        for (int32_t i = 0; i < m->n_ops; i++)
            for (int32_t j = 0; j < m->ops[i].n_outputs; j++)
                if (m->ops[i].outputs[j] == t)
                    shaped[t] = false;
        L->first[t] = INT32_MAX;
        L->last[t] = -1;
        if (m->tensors[t].is_variable && !is_const(m, t)) {
            L->first[t] = 0;
            L->last[t] = end;
        }
    }
    for (int32_t i = 0; i < m->n_inputs; i++)
        L->first[m->inputs[i]] = 0;
    for (int32_t i = 0; i < m->n_ops; i++) {
        const mp_op_info *op = &m->ops[i];
        bool all_known = true;
        for (int32_t j = 0; j < op->n_inputs; j++)
            if (op->inputs[j] >= 0 && !known[op->inputs[j]])
                all_known = false;
        bool in_shaped = true, values_known = true;
        for (int32_t j = 0; j < op->n_inputs; j++) {
            int32_t t = op->inputs[j];
            if (t >= 0 && !shaped[t])
                in_shaped = false;
            if (t >= 0 && j > 0 && !known[t])
                values_known = false;
        }
        L->folded[i] = (op->opcode == MP_OP_SHAPE && in_shaped) || all_known;
        bool out_shaped = L->folded[i] ||
                          (in_shaped && (values_known || !shape_from_values(op->opcode)));
        for (int32_t j = 0; j < op->n_outputs; j++)
            shaped[op->outputs[j]] = out_shaped;
        if (L->folded[i]) {
            for (int32_t j = 0; j < op->n_outputs; j++)
                known[op->outputs[j]] = true;
            continue;
        }
        for (int32_t j = 0; j < op->n_inputs + op->n_outputs; j++) {
            int32_t t = j < op->n_inputs ? op->inputs[j] : op->outputs[j - op->n_inputs];
            if (t < 0 || is_const(m, t))
                continue;
            if (i < L->first[t])
                L->first[t] = i;
            if (i > L->last[t])
                L->last[t] = i;
        }
    }
    for (int32_t i = 0; i < m->n_outputs; i++) {
        int32_t t = m->outputs[i];
        if (L->first[t] == INT32_MAX)
            L->first[t] = 0;
        L->last[t] = end;
    }
    for (int32_t t = 0; t < m->n_tensors; t++) {
        if (L->first[t] != INT32_MAX && L->last[t] < L->first[t])
            L->last[t] = L->first[t];
        /* folded outputs are "known" without being constants */
        L->variable[t] = m->tensors[t].is_variable;
        L->managed[t] = !is_const(m, t) && !known[t] && L->first[t] != INT32_MAX &&
                        !L->variable[t];
    }
    free(known);
    free(shaped);
}

static void life_free(life *L)
{
    free(L->folded);
    free(L->managed);
    free(L->variable);
    free(L->first);
    free(L->last);
    free(L->op_code);
    free(L->op_in0);
    free(L->op_in1);
    free(L->op_n_in);
    free(L->op_out0);
    free(L->io_in);
    free(L->io_out);
    memset(L, 0, sizeof *L);
}

static bool alive_at(const life *L, int32_t t, int32_t step)
{
    return L->first[t] <= step && step <= L->last[t];
}

/* Bytes of tensor t in the shape the session reports: dims product x element size. */
static uint64_t shape_bytes(const mp_session *s, int32_t t)
{
    const mp_tensor *x = mp_session_tensor(s, t);
    assert_non_null(x);
    uint64_t n = 1;
    for (int32_t d = 0; d < x->rank; d++)
        n *= (uint64_t)x->dims[d];
    return n * mp_dtype_size(x->dtype);
}

/* Max over steps of the sum of aligned sizes of the tensors of `set` alive there. */
static uint64_t lower_bound(const life *L, const uint64_t *bytes, const bool *set)
{
    uint64_t best = 0;
    for (int32_t step = 0; step < (L->n_ops > 0 ? L->n_ops : 1); step++) {
        uint64_t sum = 0;
        for (int32_t t = 0; t < L->n_tensors; t++)
            if (set[t] && alive_at(L, t, step))
                sum += align_up(bytes[t]);
        if (sum > best)
            best = sum;
    }
    return best;
}

static uint64_t naive_total(const life *L, const uint64_t *bytes, const bool *set)
{
    uint64_t sum = 0;
    for (int32_t t = 0; t < L->n_tensors; t++)
        if (set[t])
            sum += align_up(bytes[t]);
    return sum;
}

/* ---- walking a trace ----------------------------------------------------------------- */

typedef struct blk {
    uint64_t id, bytes;
    uint8_t kind;
} blk;

#define MAX_RUNS 32
#define MAX_ARENAS 64

typedef struct walk {
    /* balance over heap kinds (every kind but CONST) */
    uint64_t n_alloc, n_free, n_realloc, bytes_alloc, bytes_freed, heap_live_end;
    size_t n_live_end;          /* heap blocks still alive at the end */
    uint64_t unknown_frees;     /* FREE / REALLOC of a block never allocated */
    /* static */
    size_t n_arenas;
    uint64_t arena_bytes[MAX_ARENAS], arena_id[MAX_ARENAS];
    int max_static_blocks;      /* STATIC blocks alive at one moment, at most */
    uint64_t static_after_shape;/* STATIC bytes alive at the end of SHAPE phases, at most */
    int n_shape_phases;
    /* dynamic */
    uint64_t n_dynamic_alloc;   /* ALLOC / REALLOC events of kind DYNAMIC */
    uint64_t dynamic_peak;      /* live DYNAMIC bytes, at most */
    /* per run (index = run number) */
    uint64_t run_allocs[MAX_RUNS + 1];     /* heap ALLOC + REALLOC events inside the run */
    uint64_t run_dyn_allocs[MAX_RUNS + 1]; /* of kind DYNAMIC */
    uint64_t n_runs;
    bool *op_ran;               /* per operator (meta.n_ops): an OP_BEGIN was seen in a run */
    int32_t n_ops;
} walk;

static bool heap_kind(uint8_t k)
{
    return k != MP_KIND_CONST;
}

static void walk_trace(const mp_trace *tr, walk *w)
{
    memset(w, 0, sizeof *w);
    const mp_trace_meta *meta = mp_trace_get_meta(tr);
    w->n_ops = meta->n_ops;
    w->op_ran = calloc((size_t)w->n_ops + 1, sizeof(bool));
    assert_non_null(w->op_ran);
    assert_false(mp_trace_truncated(tr));
    size_t cap = 64, n = 0;
    blk *live = malloc(cap * sizeof *live);
    assert_non_null(live);
    uint64_t live_kind[MP_KIND_COUNT] = {0};
    int static_blocks = 0;
    int phase_kind = -1;
    uint64_t run = 0;
    const mp_event *ev = mp_trace_events(tr);
    for (size_t i = 0; i < mp_trace_count(tr); i++) {
        const mp_event *e = &ev[i];
        switch (e->type) {
        case MP_EV_ALLOC: {
            if (n == cap) {
                cap *= 2;
                live = realloc(live, cap * sizeof *live);
                assert_non_null(live);
            }
            live[n++] = (blk){e->id, e->bytes, e->kind};
            live_kind[e->kind] += e->bytes;
            if (heap_kind(e->kind)) {
                w->n_alloc++;
                w->bytes_alloc += e->bytes;
                if (run && run <= MAX_RUNS)
                    w->run_allocs[run]++;
            }
            if (e->kind == MP_KIND_STATIC) {
                if (w->n_arenas < MAX_ARENAS) {
                    w->arena_bytes[w->n_arenas] = e->bytes;
                    w->arena_id[w->n_arenas] = e->id;
                }
                w->n_arenas++;
                static_blocks++;
                if (static_blocks > w->max_static_blocks)
                    w->max_static_blocks = static_blocks;
            }
            if (e->kind == MP_KIND_DYNAMIC) {
                w->n_dynamic_alloc++;
                if (run && run <= MAX_RUNS)
                    w->run_dyn_allocs[run]++;
            }
            break;
        }
        case MP_EV_FREE:
        case MP_EV_REALLOC: {
            size_t j = n;
            while (j > 0 && live[j - 1].id != e->id)
                j--;
            if (j == 0) {
                w->unknown_frees++;
                break;
            }
            blk *b = &live[j - 1];
            if (e->type == MP_EV_FREE) {
                live_kind[b->kind] -= b->bytes;
                if (heap_kind(b->kind)) {
                    w->n_free++;
                    w->bytes_freed += b->bytes;
                }
                if (b->kind == MP_KIND_STATIC)
                    static_blocks--;
                *b = live[--n];
            } else {
                /* bytes = new size, aux = previous size */
                live_kind[b->kind] += e->bytes;
                live_kind[b->kind] -= e->aux;
                if (heap_kind(b->kind)) {
                    w->n_realloc++;
                    if (e->bytes > e->aux)
                        w->bytes_alloc += e->bytes - e->aux;
                    else
                        w->bytes_freed += e->aux - e->bytes;
                    if (run && run <= MAX_RUNS)
                        w->run_allocs[run]++;
                }
                if (b->kind == MP_KIND_DYNAMIC) {
                    w->n_dynamic_alloc++;
                    if (run && run <= MAX_RUNS)
                        w->run_dyn_allocs[run]++;
                }
                b->bytes = e->bytes;
            }
            break;
        }
        case MP_EV_PHASE_BEGIN:
            phase_kind = (int)e->aux;
            run = phase_kind == MP_PHASE_RUN ? e->id : 0;
            if (run > w->n_runs)
                w->n_runs = run;
            break;
        case MP_EV_PHASE_END:
            if (phase_kind == MP_PHASE_SHAPE) {
                w->n_shape_phases++;
                if (live_kind[MP_KIND_STATIC] > w->static_after_shape)
                    w->static_after_shape = live_kind[MP_KIND_STATIC];
            }
            phase_kind = -1;
            run = 0;
            break;
        case MP_EV_OP_BEGIN:
            if (run && e->op >= 0 && e->op < w->n_ops)
                w->op_ran[e->op] = true;
            break;
        default:
            break;
        }
        if (live_kind[MP_KIND_DYNAMIC] > w->dynamic_peak)
            w->dynamic_peak = live_kind[MP_KIND_DYNAMIC];
    }
    for (size_t j = 0; j < n; j++)
        if (heap_kind(live[j].kind)) {
            w->n_live_end++;
            w->heap_live_end += live[j].bytes;
        }
    free(live);
}

static void walk_free(walk *w)
{
    free(w->op_ran);
    w->op_ran = NULL;
}

/* Every byte taken was given back, as often as it was taken. */
static void assert_balance(const walk *w, const char *what)
{
    if (w->bytes_alloc != w->bytes_freed || w->n_alloc != w->n_free || w->n_live_end ||
        w->unknown_frees)
        fail_msg("%s: unbalanced: %llu allocs of %llu bytes, %llu frees of %llu bytes, "
                 "%zu blocks (%llu bytes) left, %llu frees of unknown blocks",
                 what, (unsigned long long)w->n_alloc, (unsigned long long)w->bytes_alloc,
                 (unsigned long long)w->n_free, (unsigned long long)w->bytes_freed, w->n_live_end,
                 (unsigned long long)w->heap_live_end, (unsigned long long)w->unknown_frees);
}

/* ---- sessions ------------------------------------------------------------------------ */

static mp_session *open_session(const char *model, mp_memory_mode mode, bool stale, mp_trace *tr,
                                mp_error *err)
{
    mp_session *s = NULL;
    mp_session_options so = {.threads = 1, .mode = mode, .trace = tr, .keep_stale_arena = stale};
    assert_int_equal(mp_session_create(&so, &s, err), MP_OK);
    if (mp_session_load(s, model, err) != MP_OK) {
        mp_session_destroy(s);
        return NULL;
    }
    return s;
}

static mp_session *must_open(const char *model, mp_memory_mode mode, bool stale, mp_trace *tr)
{
    mp_error err = {0};
    mp_session *s = open_session(model, mode, stale, tr, &err);
    if (!s)
        fail_msg("load %s: %s", model, err.msg);
    return s;
}

/* Reference inputs into every input; false when an input's dtype has no formula. */
static bool feed(mp_session *s, mp_error *err)
{
    for (int k = 0; k < mp_session_input_count(s); k++) {
        const mp_tensor *t = mp_session_input(s, k);
        size_t n = 1;
        for (int32_t d = 0; d < t->rank; d++)
            n *= (size_t)t->dims[d];
        void *buf = malloc(t->bytes + 1);
        assert_non_null(buf);
        if (!mp_reference_input(buf, t->dtype, n, k)) {
            free(buf);
            return false;
        }
        mp_status st = mp_session_set_input(s, k, buf, t->bytes, err);
        free(buf);
        if (st != MP_OK)
            fail_msg("set_input %d: %s", k, err->msg);
    }
    return true;
}

static void must_feed(mp_session *s)
{
    mp_error err = {0};
    assert_true(feed(s, &err));
}

static void must_run(mp_session *s)
{
    mp_error err = {0};
    if (mp_session_run(s, &err) != MP_OK)
        fail_msg("run: %s", err.msg);
}

static void must_shape(mp_session *s, const int32_t dims[4])
{
    mp_error err = {0};
    if (mp_session_set_input_shape(s, 0, 4, dims, &err) != MP_OK)
        fail_msg("set_input_shape: %s", err.msg);
}

static void must_prepare(mp_session *s)
{
    mp_error err = {0};
    if (mp_session_prepare(s, &err) != MP_OK)
        fail_msg("prepare: %s", err.msg);
}

/* Copies of every output after a run. */
typedef struct outs {
    int n;
    size_t bytes[MAX_OUTPUTS];
    void *data[MAX_OUTPUTS];
} outs;

static void outs_get(mp_session *s, outs *o)
{
    mp_error err = {0};
    memset(o, 0, sizeof *o);
    o->n = mp_session_output_count(s);
    assert_true(o->n <= MAX_OUTPUTS);
    for (int k = 0; k < o->n; k++) {
        o->bytes[k] = mp_session_output(s, k)->bytes;
        o->data[k] = malloc(o->bytes[k] + 1);
        assert_non_null(o->data[k]);
        if (mp_session_get_output(s, k, o->data[k], o->bytes[k], &err) != MP_OK)
            fail_msg("get_output %d: %s", k, err.msg);
    }
}

static void outs_free(outs *o)
{
    for (int k = 0; k < o->n; k++)
        free(o->data[k]);
    memset(o, 0, sizeof *o);
}

static void assert_outs_equal(const outs *a, const outs *b, const char *what)
{
    assert_int_equal(a->n, b->n);
    for (int k = 0; k < a->n; k++) {
        if (a->bytes[k] != b->bytes[k])
            fail_msg("%s: output %d has %zu bytes, expected %zu", what, k, a->bytes[k],
                     b->bytes[k]);
        if (memcmp(a->data[k], b->data[k], a->bytes[k]) != 0)
            fail_msg("%s: output %d differs from the reference", what, k);
    }
}

static mp_trace *new_trace(void)
{
    mp_trace *tr = mp_trace_create();
    assert_non_null(tr);
    return tr;
}

static void summarize(const mp_trace *tr, mp_summary *sum)
{
    mp_error err = {0};
    if (mp_summary_compute(tr, sum, &err) != MP_OK)
        fail_msg("summary: %s", err.msg);
    assert_int_equal(sum->n_anomalies, 0);
    assert_false(sum->truncated);
}

/* ---- references per shape: a fresh session prepared for it (call order B) ------------- */

typedef struct ref {
    int32_t dims[4];
    outs out;
    uint64_t *bytes;     /* per tensor, from the fresh session's shapes */
    uint64_t lower;      /* lower bound of the managed tensors */
    uint64_t naive;
} ref;

static void ref_make(const char *model, const life *L, const int32_t dims[4], ref *r)
{
    memset(r, 0, sizeof *r);
    memcpy(r->dims, dims, sizeof r->dims);
    mp_session *s = must_open(model, MP_MEMORY_AUTO, false, NULL);
    must_shape(s, dims);
    must_prepare(s);
    must_feed(s);
    must_run(s);
    outs_get(s, &r->out);
    r->bytes = calloc((size_t)L->n_tensors + 1, sizeof(uint64_t));
    assert_non_null(r->bytes);
    for (int32_t t = 0; t < L->n_tensors; t++)
        r->bytes[t] = L->managed[t] ? shape_bytes(s, t) : 0;
    r->lower = lower_bound(L, r->bytes, L->managed);
    r->naive = naive_total(L, r->bytes, L->managed);
    mp_session_destroy(s);
}

static void ref_free(ref *r)
{
    outs_free(&r->out);
    free(r->bytes);
    r->bytes = NULL;
}

/* ---- the call orders ----------------------------------------------------------------- */

typedef enum { ST_SHAPE, ST_PREPARE, ST_RUN } step_kind;
typedef struct call {
    step_kind k;
    int shape; /* ST_SHAPE: index into the references */
} call;

#define SHAPE(i) {ST_SHAPE, (i)}
#define PREP {ST_PREPARE, 0}
#define RUN {ST_RUN, 0}

typedef struct case_result {
    walk w;
    mp_summary sum;
    mp_session_memory mi;
} case_result;

/* The first reference with the same dims as refs[i] (shapes, not indices, matter). */
static int same_dims_first(const ref *refs, int i)
{
    for (int j = 0; j < i; j++)
        if (memcmp(refs[j].dims, refs[i].dims, sizeof refs[i].dims) == 0)
            return j;
    return i;
}

/* Play `steps` on a fresh auto-mode session (the file's shape is refs[0]'s), setting the
 * reference inputs before every run and comparing every run's outputs with the reference
 * for its shape. Then check against what a good runtime does (DESIGN.md):
 *   - an arena is planned at the first prepare or run after a shape change (or at all), of
 *     exactly lower bound + EXTRA for the shapes then (the default planner reaches the
 *     bound on these models, see the tests); plans for shapes seen before are reused;
 *   - never two arenas alive; none alive after a shape change;
 *   - nothing dynamic, nothing duplicated;
 *   - a run that did not have to plan allocates nothing;
 *   - everything allocated is freed. */
static void play_case(const char *name, const char *model, const ref *refs, const call *steps,
                      int n_steps, case_result *res)
{
    mp_trace *tr = new_trace();
    mp_session *s = must_open(model, MP_MEMORY_AUTO, false, tr);
    int cur = 0, planned = -1, run = 0;
    bool seen[MAX_SHAPES] = {false};
    uint64_t want_arenas[MAX_ARENAS];
    size_t n_want = 0;
    uint64_t want_made = 0, want_reused = 0;
    bool may_alloc[MAX_RUNS + 1] = {false};
    for (int i = 0; i < n_steps; i++) {
        const call *st = &steps[i];
        if (st->k == ST_SHAPE) {
            must_shape(s, refs[st->shape].dims);
            int to = same_dims_first(refs, st->shape);
            if (to != cur) {
                cur = to;
                planned = -1; /* the arena is released right away */
            }
            continue;
        }
        bool plans = planned < 0;
        if (plans) {
            planned = cur;
            want_arenas[n_want++] = refs[cur].lower + EXTRA;
            if (seen[cur])
                want_reused++;
            else
                want_made++;
            seen[cur] = true;
        }
        if (st->k == ST_PREPARE) {
            must_prepare(s);
            continue;
        }
        must_feed(s);
        must_run(s);
        run++;
        assert_true(run <= MAX_RUNS);
        may_alloc[run] = plans;
        outs o;
        outs_get(s, &o);
        char what[96];
        snprintf(what, sizeof what, "%s run %d", name, run);
        assert_outs_equal(&o, &refs[cur].out, what);
        outs_free(&o);
    }
    mp_session_memory_info(s, &res->mi);
    mp_session_destroy(s);

    walk_trace(tr, &res->w);
    const walk *w = &res->w;
    print_message("  %s: arenas", name);
    for (size_t i = 0; i < w->n_arenas && i < MAX_ARENAS; i++)
        print_message(" %llu", (unsigned long long)w->arena_bytes[i]);
    print_message("; allocations per run");
    for (uint64_t r = 1; r <= w->n_runs && r <= MAX_RUNS; r++)
        print_message(" %llu", (unsigned long long)w->run_allocs[r]);
    print_message("; plans made %llu reused %llu\n", (unsigned long long)res->mi.plans_made,
                  (unsigned long long)res->mi.plans_reused);

    if (w->n_arenas != n_want)
        fail_msg("%s: %zu arenas allocated, expected %zu", name, w->n_arenas, n_want);
    for (size_t i = 0; i < n_want; i++)
        if (w->arena_bytes[i] != want_arenas[i])
            fail_msg("%s: arena %zu has %llu bytes, expected lower bound + %d = %llu", name, i,
                     (unsigned long long)w->arena_bytes[i], EXTRA,
                     (unsigned long long)want_arenas[i]);
    if (w->max_static_blocks > 1)
        fail_msg("%s: %d arenas alive at once", name, w->max_static_blocks);
    if (w->static_after_shape != 0)
        fail_msg("%s: %llu static bytes still alive after a shape change", name,
                 (unsigned long long)w->static_after_shape);
    assert_int_equal(w->n_dynamic_alloc, 0);
    assert_int_equal(w->n_runs, (uint64_t)run);
    for (int r = 1; r <= run; r++)
        if (!may_alloc[r] && w->run_allocs[r] != 0)
            fail_msg("%s: run %d allocated %llu times without a shape change", name, r,
                     (unsigned long long)w->run_allocs[r]);
    assert_int_equal(res->mi.plans_made, want_made);
    assert_int_equal(res->mi.plans_reused, want_reused);
    assert_balance(w, name);

    summarize(tr, &res->sum);
    assert_int_equal(res->sum.dup_bytes, 0);
    assert_int_equal(res->sum.dynamic_bytes, 0);
    assert_int_equal(res->sum.live_end, 0);
    uint64_t biggest = 0;
    for (size_t i = 0; i < n_want; i++)
        if (want_arenas[i] > biggest)
            biggest = want_arenas[i];
    assert_int_equal(res->sum.static_bytes, biggest);
    mp_trace_destroy(tr);
}

static void case_free(case_result *res)
{
    walk_free(&res->w);
    mp_summary_free(&res->sum);
}

/* ---- tiny_ic_resnet8_float ----------------------------------------------------------- */

#define RESNET "tiny_ic_resnet8_float.tflite"

static const int32_t resnet_dims[4][4] = {{1, 32, 32, 3}, {1, 32, 32, 3}, {2, 32, 32, 3},
                                          {3, 32, 32, 3}};

typedef struct resnet {
    const char *path;
    life L;
    uint64_t *bytes1;        /* batch-1 bytes of every managed tensor */
    ref refs[4];             /* refs[n] = batch n (refs[0] = the file's shape, batch 1) */
} resnet;

static resnet R;

/* Lifetimes from the operator list, batch-1 sizes; then a fresh session per batch N, in
 * which every managed tensor must have exactly N times its batch-1 bytes, and whose
 * expectation (lower bound) is computed from N x the batch-1 sizes. */
static int resnet_setup(void **state)
{
    (void)state;
    R.path = mp_test_path("models", RESNET);
    mp_session *s = must_open(R.path, MP_MEMORY_AUTO, false, NULL);
    must_prepare(s);
    life_compute(mp_session_model(s), &R.L);
    R.bytes1 = calloc((size_t)R.L.n_tensors + 1, sizeof(uint64_t));
    for (int32_t t = 0; t < R.L.n_tensors; t++)
        R.bytes1[t] = R.L.managed[t] ? shape_bytes(s, t) : 0;
    mp_session_destroy(s);
    for (int n = 0; n <= 3; n++) {
        ref_make(R.path, &R.L, resnet_dims[n], &R.refs[n]);
        int batch = resnet_dims[n][0];
        uint64_t *scaled = calloc((size_t)R.L.n_tensors + 1, sizeof(uint64_t));
        for (int32_t t = 0; t < R.L.n_tensors; t++) {
            scaled[t] = (uint64_t)batch * R.bytes1[t];
            if (R.refs[n].bytes[t] != scaled[t])
                fail_msg("resnet8 batch %d: tensor %d has %llu bytes, not %d x %llu", batch, t,
                         (unsigned long long)R.refs[n].bytes[t], batch,
                         (unsigned long long)R.bytes1[t]);
        }
        R.refs[n].lower = lower_bound(&R.L, scaled, R.L.managed);
        R.refs[n].naive = naive_total(&R.L, scaled, R.L.managed);
        free(scaled);
    }
    return 0;
}

static int resnet_teardown(void **state)
{
    (void)state;
    for (int n = 0; n <= 3; n++)
        ref_free(&R.refs[n]);
    free(R.bytes1);
    life_free(&R.L);
    return 0;
}

/* The model as the brief describes it: one input [N,32,32,3], nothing folded; and the
 * default planner reaches the live-set lower bound at batch 1 (else every arena
 * expectation below would have to be a range). */
static void test_resnet8_figures(void **state)
{
    (void)state;
    mp_session *s = must_open(R.path, MP_MEMORY_AUTO, false, NULL);
    const mp_model *m = mp_session_model(s);
    assert_int_equal(m->n_inputs, 1);
    const mp_tensor_info *in = &m->tensors[m->inputs[0]];
    assert_true(in->has_signature);
    assert_int_equal(in->signature[0], -1);
    for (int32_t i = 0; i < m->n_ops; i++)
        assert_false(R.L.folded[i]);
    assert_int_equal(MP_INPUT_SLACK, EXTRA);
    must_prepare(s);
    mp_session_memory mi;
    mp_session_memory_info(s, &mi);
    print_message("  resnet8: lower bound (batch 1, 2, 3) %llu %llu %llu, naive %llu %llu %llu; "
                  "arena at batch 1 %llu\n",
                  (unsigned long long)R.refs[1].lower, (unsigned long long)R.refs[2].lower,
                  (unsigned long long)R.refs[3].lower, (unsigned long long)R.refs[1].naive,
                  (unsigned long long)R.refs[2].naive, (unsigned long long)R.refs[3].naive,
                  (unsigned long long)mi.arena_bytes);
    assert_int_equal(mi.arena_bytes, R.refs[1].lower + EXTRA);
    mp_session_destroy(s);
}

static void test_resnet8_case_a(void **state)
{
    (void)state;
    const call steps[] = {PREP, RUN, RUN, RUN};
    case_result res;
    play_case("resnet8 A", R.path, R.refs, steps, 4, &res);
    for (int r = 1; r <= 3; r++)
        assert_int_equal(res.w.run_allocs[r], 0);
    case_free(&res);
}

static void test_resnet8_case_b(void **state)
{
    (void)state;
    const call steps[] = {SHAPE(2), PREP, RUN, RUN, RUN};
    case_result res;
    play_case("resnet8 B", R.path, R.refs, steps, 5, &res);
    for (int r = 1; r <= 3; r++)
        assert_int_equal(res.w.run_allocs[r], 0);
    case_free(&res);
}

static void test_resnet8_case_c(void **state)
{
    (void)state;
    const call steps[] = {PREP, SHAPE(2), RUN, RUN, RUN};
    case_result res;
    play_case("resnet8 C", R.path, R.refs, steps, 5, &res);
    assert_int_equal(res.w.n_arenas, 2);
    assert_int_equal(res.w.n_shape_phases, 1);
    for (int r = 2; r <= 3; r++)
        assert_int_equal(res.w.run_allocs[r], 0);
    case_free(&res);
}

static void test_resnet8_case_d(void **state)
{
    (void)state;
    const call steps[] = {PREP,     SHAPE(1), RUN, SHAPE(2), RUN, SHAPE(3), RUN,
                          SHAPE(1), RUN,      SHAPE(2), RUN, SHAPE(3), RUN};
    case_result res;
    play_case("resnet8 D", R.path, R.refs, steps, 13, &res);
    assert_int_equal(res.mi.plans_made, 3);
    assert_int_equal(res.mi.plans_reused, 3);
    assert_int_equal(res.w.n_arenas, 6);
    case_free(&res);
}

static void test_resnet8_case_e(void **state)
{
    (void)state;
    const call steps[] = {SHAPE(2), PREP, SHAPE(3), RUN, RUN, RUN};
    case_result res;
    play_case("resnet8 E", R.path, R.refs, steps, 6, &res);
    assert_int_equal(res.w.n_arenas, 2);
    assert_int_equal(res.w.n_shape_phases, 2);
    for (int r = 2; r <= 3; r++)
        assert_int_equal(res.w.run_allocs[r], 0);
    case_free(&res);
}

/* Dynamic mode, batch 2, two runs. Every managed tensor gets a buffer of (bytes + 16) right
 * before its producer runs (the input: at set_input) and loses it after its last reader,
 * except the model output, which stays until it is produced again or the session ends.
 * While operator i runs, the buffers alive are those of the tensors with first <= i <= last
 * (outputs of i allocated before it runs, inputs freed only after). In run 1 the output
 * (tensor of the last operator) exists only from the last step on, so every step of run 1
 * holds a subset of what the same step of run 2 holds: in run 2 the output buffer of run 1
 * is alive from the start, and its producer (the last operator) finds it already of the
 * right size (or frees it before allocating a new one), so it is never held twice. Between
 * operators and in set_input fewer buffers are alive than at the neighbouring step. Hence
 *     peak = max over steps i of  sum over t alive at i, or a model output, of (bytes + 16). */
static void test_resnet8_dynamic_peak(void **state)
{
    (void)state;
    const life *L = &R.L;
    const uint64_t *b2 = R.refs[2].bytes;
    const mp_model *m;
    uint64_t want = 0;
    mp_trace *tr = new_trace();
    mp_session *s = must_open(R.path, MP_MEMORY_DYNAMIC, false, tr);
    m = mp_session_model(s);
    bool *is_out = calloc((size_t)L->n_tensors + 1, sizeof(bool));
    for (int32_t i = 0; i < m->n_outputs; i++)
        is_out[m->outputs[i]] = true;
    int32_t want_step = -1;
    for (int32_t step = 0; step < L->n_ops; step++) {
        uint64_t sum = 0;
        for (int32_t t = 0; t < L->n_tensors; t++)
            if (L->managed[t] && (alive_at(L, t, step) || is_out[t]))
                sum += b2[t] + EXTRA;
        if (sum > want) {
            want = sum;
            want_step = step;
        }
    }
    must_shape(s, resnet_dims[2]);
    must_prepare(s);
    for (int r = 0; r < 2; r++) {
        must_feed(s);
        must_run(s);
        outs o;
        outs_get(s, &o);
        assert_outs_equal(&o, &R.refs[2].out, "dynamic mode");
        outs_free(&o);
    }
    /* run 1: one buffer per operator output (the input's came with set_input); run 2: all
     * of them but the model output's, still there from run 1 */
    int32_t n_produced = 0, n_outputs_produced = 0;
    for (int32_t i = 0; i < m->n_ops; i++)
        for (int32_t j = 0; j < m->ops[i].n_outputs; j++) {
            n_produced++;
            n_outputs_produced += is_out[m->ops[i].outputs[j]];
        }
    mp_session_destroy(s);
    walk w;
    walk_trace(tr, &w);
    print_message("  resnet8 dynamic batch 2: peak %llu (expected %llu at step %d), dynamic "
                  "allocations in runs %llu %llu\n",
                  (unsigned long long)w.dynamic_peak, (unsigned long long)want, want_step,
                  (unsigned long long)w.run_dyn_allocs[1], (unsigned long long)w.run_dyn_allocs[2]);
    assert_int_equal(w.dynamic_peak, want);
    assert_int_equal(w.n_arenas, 0);
    assert_int_equal(w.run_dyn_allocs[1], (uint64_t)n_produced);
    assert_int_equal(w.run_dyn_allocs[2], (uint64_t)(n_produced - n_outputs_produced));
    assert_balance(&w, "dynamic mode");
    mp_summary sum;
    summarize(tr, &sum);
    assert_int_equal(sum.dynamic_bytes, want);
    assert_int_equal(sum.static_bytes, 0);
    assert_int_equal(sum.dup_bytes, 0);
    mp_summary_free(&sum);
    walk_free(&w);
    free(is_out);
    mp_trace_destroy(tr);
}

/* keep_stale_arena, call order C (prepare at batch 1, shape 2, one run).
 * summary.h: a tensor's homes are its live STATIC/DYNAMIC/IO blocks and its slots in live
 * arenas (a slot lives as long as its arena, whatever its step range); duplicated bytes at a
 * moment = for each tensor with two homes or more, the bytes of all homes but the newest.
 * With the switch the batch-1 arena (its slots' bytes are the PLAN bytes: each tensor's
 * exact batch-1 size) stays alive to the end, and every managed tensor gets a dynamic
 * buffer (newer than its slot) from its producer (the input: set_input) to its last
 * reader (the output: to the end). So at any moment the duplicated bytes are the batch-1
 * bytes of the tensors holding a dynamic buffer, which is at most the set alive at one
 * step i (first <= i <= last); set_input and after the run hold one tensor only. Hence
 *     dup_bytes = max over steps i of  sum over t alive at i of bytes1(t). */
static void stale_case(bool stale, mp_summary *sum, walk *w)
{
    mp_trace *tr = new_trace();
    mp_session *s = must_open(R.path, MP_MEMORY_AUTO, stale, tr);
    must_prepare(s);
    must_shape(s, resnet_dims[2]);
    must_feed(s);
    must_run(s);
    outs o;
    outs_get(s, &o);
    assert_outs_equal(&o, &R.refs[2].out, stale ? "keep_stale_arena" : "case C");
    outs_free(&o);
    mp_session_destroy(s);
    walk_trace(tr, w);
    summarize(tr, sum);
    mp_trace_destroy(tr);
}

static void test_resnet8_stale_arena(void **state)
{
    (void)state;
    const life *L = &R.L;
    uint64_t want = 0;
    for (int32_t step = 0; step < L->n_ops; step++) {
        uint64_t sum = 0;
        for (int32_t t = 0; t < L->n_tensors; t++)
            if (L->managed[t] && alive_at(L, t, step))
                sum += R.bytes1[t];
        if (sum > want)
            want = sum;
    }
    mp_summary sum;
    walk w;
    stale_case(true, &sum, &w);
    print_message("  resnet8 keep_stale_arena: dup_bytes %llu (expected %llu), arenas %zu, "
                  "dynamic allocations %llu\n",
                  (unsigned long long)sum.dup_bytes, (unsigned long long)want, w.n_arenas,
                  (unsigned long long)w.n_dynamic_alloc);
    assert_int_equal(sum.dup_bytes, want);
    assert_int_equal(w.n_arenas, 1); /* the stale one, kept */
    assert_int_equal(w.arena_bytes[0], R.refs[1].lower + EXTRA);
    assert_true(w.n_dynamic_alloc > 0);
    assert_balance(&w, "keep_stale_arena");
    mp_summary_free(&sum);
    walk_free(&w);

    stale_case(false, &sum, &w);
    assert_int_equal(sum.dup_bytes, 0);
    assert_int_equal(w.n_dynamic_alloc, 0);
    assert_balance(&w, "case C");
    mp_summary_free(&sum);
    walk_free(&w);
}

/* ---- tfsupport_dilated_conv ---------------------------------------------------------- */

#define DILATED "tfsupport_dilated_conv.tflite"

static void test_dilated_conv_cases(void **state)
{
    (void)state;
    const char *path = mp_test_path("models", DILATED);
    mp_session *s = must_open(path, MP_MEMORY_AUTO, false, NULL);
    life L;
    life_compute(mp_session_model(s), &L);
    const mp_tensor *in = mp_session_input(s, 0);
    assert_int_equal(in->rank, 4);
    int32_t file_dims[4];
    memcpy(file_dims, in->dims, sizeof file_dims);
    mp_session_destroy(s);
    const int32_t dims[4][4] = {{file_dims[0], file_dims[1], file_dims[2], file_dims[3]},
                                {1, 16, 16, 3},
                                {1, 33, 20, 3},
                                {1, 9, 7, 3}};
    ref refs[4];
    for (int i = 0; i < 4; i++) {
        ref_make(path, &L, dims[i], &refs[i]);
        print_message("  dilated_conv [%d,%d,%d,%d]: lower bound %llu, naive %llu\n", dims[i][0],
                      dims[i][1], dims[i][2], dims[i][3], (unsigned long long)refs[i].lower,
                      (unsigned long long)refs[i].naive);
    }
    int n_folded = 0;
    for (int32_t i = 0; i < L.n_ops; i++)
        n_folded += L.folded[i];
    assert_true(n_folded > 0); /* the shape arithmetic */

    const call a[] = {PREP, RUN, RUN, RUN};
    const call b[] = {SHAPE(1), PREP, RUN, RUN, RUN};
    const call c[] = {PREP, SHAPE(2), RUN, RUN, RUN};
    const call d[] = {PREP, SHAPE(1), RUN, SHAPE(3), RUN, SHAPE(1), RUN, SHAPE(3), RUN};
    struct {
        const char *name;
        const call *steps;
        int n;
    } cases[] = {{"dilated A", a, 4}, {"dilated B", b, 5}, {"dilated C", c, 5}, {"dilated D", d, 9}};
    for (int k = 0; k < 4; k++) {
        case_result res;
        play_case(cases[k].name, path, refs, cases[k].steps, cases[k].n, &res);
        for (int32_t i = 0; i < L.n_ops; i++)
            if (res.w.op_ran[i] == L.folded[i])
                fail_msg("%s: operator %d %s, but this test thinks it is %s", cases[k].name, i,
                         res.w.op_ran[i] ? "ran" : "did not run",
                         L.folded[i] ? "folded" : "not folded");
        if (k < 3)
            for (int r = 2; r <= 3; r++)
                assert_int_equal(res.w.run_allocs[r], 0);
        if (k == 3) {
            assert_int_equal(res.mi.plans_made, 3);   /* file's shape, 16x16, 9x7 */
            assert_int_equal(res.mi.plans_reused, 2); /* 16x16 and 9x7 again */
        }
        case_free(&res);
    }
    for (int i = 0; i < 4; i++)
        ref_free(&refs[i]);
    life_free(&L);
}

/* ---- every shared model -------------------------------------------------------------- */

typedef struct plan_ev {
    int32_t tensor, op, op_last;
    uint64_t offset, bytes;
} plan_ev;

/* One model in one mode with one run: NULL when it does not load, prepare, take reference
 * inputs or run (*why says which); else the trace, with outputs in *o. */
static mp_trace *run_model_once(const char *path, mp_memory_mode mode, outs *o, life *L,
                                uint64_t **bytes, const char **why)
{
    mp_error err = {0};
    mp_trace *tr = new_trace();
    mp_session *s = open_session(path, mode, false, tr, &err);
    *why = NULL;
    if (!s)
        *why = "load";
    else if (mp_session_prepare(s, &err) != MP_OK)
        *why = "prepare";
    else if (!feed(s, &err))
        *why = "input dtype";
    else if (mp_session_run(s, &err) != MP_OK)
        *why = "run";
    if (*why) {
        print_message("  skip %s (%s: %s)\n", strrchr(path, '/') + 1, *why, err.msg);
        mp_session_destroy(s);
        mp_trace_destroy(tr);
        return NULL;
    }
    outs_get(s, o);
    if (L) {
        life_compute(mp_session_model(s), L);
        *bytes = calloc((size_t)L->n_tensors + 1, sizeof(uint64_t));
        assert_non_null(*bytes);
        for (int32_t t = 0; t < L->n_tensors; t++)
            (*bytes)[t] = L->managed[t] ? shape_bytes(s, t) : 0;
    }
    mp_session_destroy(s);
    return tr;
}

/* The in-place rule (docs/memory.md, "In place"), restated. A tensor of the arena (managed,
 * neither a variable nor dynamic) that is no model input may share a slot; an output that is
 * no model output and has its input's bytes may take its input's slot: the output of a
 * RESHAPE, SQUEEZE, EXPAND_DIMS or BITCAST always (first, for every operator), then in execution order
 * the output of an ADD, SUB, MUL or DIV the slot of its first input (of more than 8 bytes)
 * whose group holds no model output and has no reader after that operator, and the output of
 * a SOFTMAX the slot of its one input, of a DYNAMIC_UPDATE_SLICE that of its operand, on the
 * same terms. A group's slot
 * lives to the last step of any of its tensors. root[t]: the tensor whose slot t uses, or
 * -1. */
static int32_t share_root(const int32_t *up, int32_t t)
{
    while (up[t] >= 0)
        t = up[t];
    return t;
}

static bool share_ok(const life *L, const uint64_t *bytes, const bool *dyn, int32_t i,
                     int32_t a, int32_t b)
{
    return a >= 0 && b >= 0 && a != b && L->managed[a] && L->managed[b] && !dyn[a] && !dyn[b] &&
           !L->io_in[a] && !L->io_in[b] && !L->io_out[b] && bytes[a] == bytes[b] &&
           L->first[b] == i;
}

static void share_join(life *L, int32_t *up, int32_t a, int32_t b)
{
    int32_t ra = share_root(up, a), rb = share_root(up, b);
    if (ra == rb)
        return;
    up[rb] = ra;
    if (L->last[rb] > L->last[ra])
        L->last[ra] = L->last[rb];
}

static void life_share(life *L, const uint64_t *bytes, const bool *dyn, int32_t *root)
{
    for (int32_t t = 0; t < L->n_tensors; t++)
        root[t] = -1;
    for (int32_t i = 0; i < L->n_ops; i++) {
        int32_t c = L->op_code[i];
        if ((c == MP_OP_RESHAPE || c == MP_OP_SQUEEZE || c == MP_OP_EXPAND_DIMS ||
             c == MP_OP_BITCAST) &&
            !L->folded[i] && share_ok(L, bytes, dyn, i, L->op_in0[i], L->op_out0[i]))
            share_join(L, root, L->op_in0[i], L->op_out0[i]);
    }
    for (int32_t i = 0; i < L->n_ops; i++) {
        int32_t c = L->op_code[i], b = L->op_out0[i];
        int n_sh = c == MP_OP_SOFTMAX || c == MP_OP_DYNAMIC_UPDATE_SLICE ? 1 : 2;
        int n_in = c == MP_OP_DYNAMIC_UPDATE_SLICE ? 3 : n_sh;
        if ((c != MP_OP_ADD && c != MP_OP_SUB && c != MP_OP_MUL && c != MP_OP_DIV &&
             c != MP_OP_SOFTMAX && c != MP_OP_DYNAMIC_UPDATE_SLICE) ||
            L->folded[i] || L->op_n_in[i] != n_in)
            continue;
        for (int j = 0; j < n_sh; j++) {
            int32_t a = j == 0 ? L->op_in0[i] : L->op_in1[i];
            if (!share_ok(L, bytes, dyn, i, a, b) || bytes[a] <= 8)
                continue;
            int32_t r = share_root(root, a);
            if (L->io_out[r] || L->last[r] != i)
                continue;
            share_join(L, root, a, b);
            break;
        }
    }
    for (int32_t t = 0; t < L->n_tensors; t++)
        if (root[t] >= 0)
            root[t] = share_root(root, t);
}

static bool lives_meet(const life *L, int32_t a, int32_t b)
{
    return L->first[a] <= L->last[b] && L->first[b] <= L->last[a];
}

static void check_model(const char *path, int *n_checked)
{
    const char *name = strrchr(path, '/') + 1;
    const char *why;
    outs o_auto, o_other;
    life L;
    uint64_t *bytes = NULL;
    mp_trace *tr = run_model_once(path, MP_MEMORY_AUTO, &o_auto, &L, &bytes, &why);
    if (!tr)
        return;
    walk w;
    walk_trace(tr, &w);
    assert_balance(&w, name);
    for (int32_t i = 0; i < L.n_ops; i++)
        if (w.op_ran[i] == L.folded[i])
            fail_msg("%s: operator %d %s, but this test thinks it is %s", name, i,
                     w.op_ran[i] ? "ran" : "did not run", L.folded[i] ? "folded" : "not folded");
    if (w.n_arenas > 1)
        fail_msg("%s: %zu arenas for one prepare and one run", name, w.n_arenas);

    /* the arena's slots */
    size_t n_plan = 0;
    plan_ev *plan = calloc((size_t)L.n_tensors + 1, sizeof *plan);
    bool *planned = calloc((size_t)L.n_tensors + 1, sizeof(bool));
    bool *dyn = calloc((size_t)L.n_tensors + 1, sizeof(bool));
    assert_non_null(plan);
    assert_non_null(planned);
    assert_non_null(dyn);
    const mp_event *ev = mp_trace_events(tr);
    for (size_t i = 0; i < mp_trace_count(tr); i++)
        if (ev[i].type == MP_EV_ALLOC && ev[i].kind == MP_KIND_DYNAMIC && ev[i].tensor >= 0 &&
            ev[i].tensor < L.n_tensors)
            dyn[ev[i].tensor] = true;
    int32_t *root = calloc((size_t)L.n_tensors + 1, sizeof(int32_t));
    assert_non_null(root);
    life_share(&L, bytes, dyn, root);
    uint64_t scratch_sum = 0; /* planned scratch, each slot aligned */
    for (size_t i = 0; i < mp_trace_count(tr); i++) {
        const mp_event *e = &ev[i];
        if (e->type == MP_EV_ALLOC && e->kind == MP_KIND_VARIABLE && e->tensor >= 0 &&
            e->tensor < L.n_tensors)
            assert_true(L.variable[e->tensor]);
        if (e->type != MP_EV_PLAN)
            continue;
        assert_true(w.n_arenas == 1 && e->id == w.arena_id[0]);
        if (e->kind == MP_KIND_SCRATCH && e->tensor < 0) {
            scratch_sum += (e->bytes + ALIGN - 1) / ALIGN * ALIGN;
            continue; /* an operator's scratch (the LSTMs' gates): beside the tensors */
        }
        int32_t t = e->tensor;
        assert_true(t >= 0 && t < L.n_tensors);
        if (!L.managed[t])
            fail_msg("%s: tensor %d planned but not a managed tensor", name, t);
        if (root[t] >= 0)
            fail_msg("%s: tensor %d planned, but it shares tensor %d's slot", name, t, root[t]);
        if (planned[t])
            fail_msg("%s: tensor %d planned twice", name, t);
        planned[t] = true;
        if (e->bytes != bytes[t] || e->op != L.first[t] || e->op_last != L.last[t])
            fail_msg("%s: tensor %d planned with %llu bytes for steps %d..%d; expected %llu "
                     "bytes for %d..%d",
                     name, t, (unsigned long long)e->bytes, e->op, e->op_last,
                     (unsigned long long)bytes[t], L.first[t], L.last[t]);
        if (e->aux % ALIGN != 0)
            fail_msg("%s: tensor %d at offset %llu", name, t, (unsigned long long)e->aux);
        if (e->aux + e->bytes > w.arena_bytes[0] - EXTRA)
            fail_msg("%s: tensor %d at %llu+%llu past the arena's %llu usable bytes", name, t,
                     (unsigned long long)e->aux, (unsigned long long)e->bytes,
                     (unsigned long long)(w.arena_bytes[0] - EXTRA));
        plan[n_plan++] = (plan_ev){t, e->op, e->op_last, e->aux, e->bytes};
    }
    for (size_t i = 0; i < n_plan; i++)
        for (size_t j = i + 1; j < n_plan; j++) {
            const plan_ev *a = &plan[i], *b = &plan[j];
            if (!a->bytes || !b->bytes || !lives_meet(&L, a->tensor, b->tensor))
                continue;
            if (a->offset < b->offset + b->bytes && b->offset < a->offset + a->bytes)
                fail_msg("%s: tensors %d [%llu,+%llu) and %d [%llu,+%llu) overlap while both "
                         "alive",
                         name, a->tensor, (unsigned long long)a->offset,
                         (unsigned long long)a->bytes, b->tensor, (unsigned long long)b->offset,
                         (unsigned long long)b->bytes);
        }
    /* a managed tensor outside the plan must have had a buffer of its own, or share a slot
     * of the plan */
    for (int32_t t = 0; t < L.n_tensors; t++) {
        if (root[t] >= 0 && (!planned[root[t]] || dyn[t]))
            fail_msg("%s: tensor %d shares tensor %d's slot, which is not in the plan", name, t,
                     root[t]);
        if (L.managed[t] && !planned[t] && !dyn[t] && root[t] < 0 && bytes[t] > 0)
            fail_msg("%s: managed tensor %d neither planned nor given a dynamic buffer", name, t);
    }
    if (n_plan > 0) {
        uint64_t lb = lower_bound(&L, bytes, planned);
        uint64_t naive = naive_total(&L, bytes, planned) + scratch_sum;
        uint64_t usable = w.arena_bytes[0] - EXTRA;
        print_message("  %-48s planned %3zu, lower bound %9llu, arena-16 %9llu, naive %9llu\n",
                      name, n_plan, (unsigned long long)lb, (unsigned long long)usable,
                      (unsigned long long)naive);
        if (usable < lb || usable > naive)
            fail_msg("%s: arena of %llu usable bytes outside [lower bound %llu, naive %llu]",
                     name, (unsigned long long)usable, (unsigned long long)lb,
                     (unsigned long long)naive);
    } else {
        print_message("  %-48s nothing planned\n", name);
    }
    free(plan);
    free(planned);
    free(dyn);
    free(root);
    walk_free(&w);
    mp_trace_destroy(tr);

    const mp_memory_mode others[2] = {MP_MEMORY_STATIC, MP_MEMORY_DYNAMIC};
    for (int k = 0; k < 2; k++) {
        tr = run_model_once(path, others[k], &o_other, NULL, NULL, &why);
        if (!tr)
            fail_msg("%s: runs in auto mode but not in %s mode (%s)", name,
                     mp_memory_mode_name(others[k]), why);
        char what[160];
        snprintf(what, sizeof what, "%s, %s mode against auto", name,
                 mp_memory_mode_name(others[k]));
        assert_outs_equal(&o_other, &o_auto, what);
        walk_trace(tr, &w);
        assert_balance(&w, what);
        if (others[k] == MP_MEMORY_DYNAMIC)
            assert_int_equal(w.n_arenas, 0);
        walk_free(&w);
        outs_free(&o_other);
        mp_trace_destroy(tr);
    }
    outs_free(&o_auto);
    free(bytes);
    life_free(&L);
    (*n_checked)++;
}

static void test_every_shared_model(void **state)
{
    (void)state;
    char **names = NULL;
    int n = mp_test_shared_model_names(&names);
    int checked = 0;
    for (int i = 0; i < n; i++)
        check_model(mp_test_path("models", names[i]), &checked);
    mp_test_free_names(names, n);
    print_message("  %d of %d shared models checked\n", checked, n);
    assert_true(checked > 0);
}

/* ---- saved traces -------------------------------------------------------------------- */

static char *report_text(const mp_trace *tr)
{
    mp_summary sum;
    summarize(tr, &sum);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    mp_report_summary_text(f, tr, &sum, true);
    fclose(f);
    mp_summary_free(&sum);
    return text;
}

static void check_round_trip(const mp_trace *tr, const char *dir, const char *label)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s.json", dir, label);
    mp_error err = {0};
    if (mp_trace_save(tr, path, &err) != MP_OK)
        fail_msg("save: %s", err.msg);
    mp_trace *back = NULL;
    if (mp_trace_load(path, &back, &err) != MP_OK)
        fail_msg("load: %s", err.msg);
    unlink(path);

    assert_int_equal(mp_trace_count(back), mp_trace_count(tr));
    const mp_event *a = mp_trace_events(tr), *b = mp_trace_events(back);
    for (size_t i = 0; i < mp_trace_count(tr); i++) {
        const mp_event *x = &a[i], *y = &b[i];
        if (x->t_ns != y->t_ns || x->bytes != y->bytes || x->id != y->id || x->aux != y->aux ||
            x->tensor != y->tensor || x->op != y->op || x->op_last != y->op_last ||
            x->phase != y->phase || x->type != y->type || x->kind != y->kind ||
            x->align_log2 != y->align_log2 || x->flags != y->flags)
            fail_msg("%s: event %zu differs after saving and reading back", label, i);
    }
    const mp_trace_meta *ma = mp_trace_get_meta(tr), *mb = mp_trace_get_meta(back);
    assert_int_equal(ma->n_tensors, mb->n_tensors);
    assert_int_equal(ma->n_ops, mb->n_ops);
    assert_string_equal(ma->model, mb->model);
    assert_string_equal(ma->mode, mb->mode);
    for (int32_t t = 0; t < ma->n_tensors; t++) {
        assert_string_equal(ma->tensors[t].name, mb->tensors[t].name);
        assert_int_equal(ma->tensors[t].is_const, mb->tensors[t].is_const);
        assert_int_equal(ma->tensors[t].in_place, mb->tensors[t].in_place);
        if (ma->tensors[t].in_place)
            assert_int_equal(ma->tensors[t].shares, mb->tensors[t].shares);
    }
    char *ta = report_text(tr), *tb = report_text(back);
    if (strcmp(ta, tb) != 0)
        fail_msg("%s: the report differs after saving and reading back:\n%s\n---\n%s", label,
                 ta, tb);
    assert_true(strlen(ta) > 0);
    free(ta);
    free(tb);
    mp_trace_destroy(back);
}

static void test_trace_round_trip(void **state)
{
    (void)state;
    char dir[] = "/tmp/mp_test_memory_XXXXXX";
    assert_non_null(mkdtemp(dir));
    /* call order D (plans made and reused) and the stale arena (duplicated bytes) */
    for (int k = 0; k < 2; k++) {
        mp_trace *tr = new_trace();
        mp_session *s = must_open(R.path, MP_MEMORY_AUTO, k == 1, tr);
        must_prepare(s);
        for (int i = 0; i < (k == 0 ? 4 : 1); i++) {
            must_shape(s, resnet_dims[k == 0 ? 1 + (i + 1) % 3 : 2]);
            must_feed(s);
            must_run(s);
        }
        mp_session_destroy(s);
        check_round_trip(tr, dir, k == 0 ? "order_d" : "stale");
        mp_trace_destroy(tr);
    }
    rmdir(dir);
}

int main(void)
{
    mp_test_require_shared();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resnet8_figures),
        cmocka_unit_test(test_resnet8_case_a),
        cmocka_unit_test(test_resnet8_case_b),
        cmocka_unit_test(test_resnet8_case_c),
        cmocka_unit_test(test_resnet8_case_d),
        cmocka_unit_test(test_resnet8_case_e),
        cmocka_unit_test(test_resnet8_dynamic_peak),
        cmocka_unit_test(test_resnet8_stale_arena),
        cmocka_unit_test(test_trace_round_trip),
        cmocka_unit_test(test_dilated_conv_cases),
        cmocka_unit_test(test_every_shared_model),
    };
    return cmocka_run_group_tests(tests, resnet_setup, resnet_teardown);
}
