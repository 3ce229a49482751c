/* The StableHLO operators' options (part of the reader, see tflite_reader.c): the Operator
 * table's builtin_options_2, a BuiltinOptions2 union, read into an mp_shlo_options in model
 * memory, every list bounded and every value checked; and, once every subgraph is read, the
 * subgraph those options name but do not call (a REDUCE_WINDOW's or SCATTER's body, whose one
 * operator tells the kernel what to compute, as TensorFlow Lite's kernels find it). The
 * subgraphs called (STABLEHLO_COMPOSITE's decomposition, STABLEHLO_CASE's branches) are
 * checked with WHILE's and IF's in tflite_reader.c. */
#include "engine/model/tflite_reader_internal.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "engine/model/flatbuf.h"
#include "engine/model/model.h"

/* BuiltinOptions2 union types (schema.fbs's union order, 0 = NONE) of the tables read here. */
enum {
    BO2_NONE = 0,
    BO2_SCATTER = 7,
    BO2_PAD = 10,
    BO2_REDUCE_WINDOW = 13,
    BO2_GATHER = 16,
    BO2_DILATE = 18,
    BO2_RNG_BIT_GENERATOR = 19,
    BO2_REDUCE_WINDOW_TFL = 20, /* ReduceWindowOptions (deprecated in the schema) */
    BO2_COMPOSITE = 21,
    BO2_SHIFT_LEFT = 22,
    BO2_CASE = 23,
};

typedef struct opt2_kind {
    int code;
    uint8_t type;
    const char *table;
} opt2_kind;

static const opt2_kind k_kinds[] = {
    {MP_OP_STABLEHLO_SCATTER, BO2_SCATTER, "StablehloScatterOptions"},
    {MP_OP_STABLEHLO_PAD, BO2_PAD, "StablehloPadOptions"},
    {MP_OP_STABLEHLO_REDUCE_WINDOW, BO2_REDUCE_WINDOW, "StablehloReduceWindowOptions"},
    {MP_OP_STABLEHLO_GATHER, BO2_GATHER, "StablehloGatherOptions"},
    {MP_OP_DILATE, BO2_DILATE, "DilateOptions"},
    {MP_OP_STABLEHLO_RNG_BIT_GENERATOR, BO2_RNG_BIT_GENERATOR, "StablehloRngBitGeneratorOptions"},
    {MP_OP_REDUCE_WINDOW, BO2_REDUCE_WINDOW_TFL, "ReduceWindowOptions"},
    {MP_OP_STABLEHLO_COMPOSITE, BO2_COMPOSITE, "StableHLOCompositeOptions"},
    {MP_OP_STABLEHLO_SHIFT_LEFT, BO2_SHIFT_LEFT, "StablehloShiftLeftOptions"},
    {MP_OP_STABLEHLO_CASE, BO2_CASE, "StablehloCaseOptions"},
};

static const opt2_kind *find_kind(int code)
{
    for (size_t k = 0; k < sizeof k_kinds / sizeof k_kinds[0]; k++)
        if (k_kinds[k].code == code)
            return &k_kinds[k];
    return NULL;
}

/* Vector field `id` of int64 values (absent: empty) into l: at most MP_SHLO_LIST values. */
static mp_status read_list(rd *r, int32_t i, int code, const mp_fb_table *t, unsigned id,
                           const char *name, mp_shlo_list *l)
{
    mp_fb_vec v;
    TRY_FB(mp_fb_vector(&r->fb, t, id, 8, name, &v));
    if (v.n > MP_SHLO_LIST)
        return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): %s has %u values, more than %d",
                           i, mp_tfl_op_label(code), name, v.n, MP_SHLO_LIST);
    l->n = (int32_t)v.n;
    for (uint32_t k = 0; k < v.n; k++)
        l->v[k] = mp_fb_vec_i64(&r->fb, &v, k);
    return MP_OK;
}

/* A subgraph index field: >= 0 (its range is checked once every subgraph is read). */
static mp_status read_subgraph_index(rd *r, int32_t i, int code, const mp_fb_table *t, unsigned id,
                                     const char *name, int32_t *out)
{
    TRY_FB(mp_fb_i32(&r->fb, t, id, 0, name, out));
    if (*out < 0)
        return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): %s %d is negative",
                           i, mp_tfl_op_label(code), name, *out);
    return MP_OK;
}

static mp_status read_fields(rd *r, int32_t i, int code, const opt2_kind *k, const mp_fb_table *t,
                             mp_shlo_options *s, mp_op_options *o)
{
    mp_fb_reader *fb = &r->fb;
    uint64_t u64 = 0;
    switch (k->type) {
    case BO2_SCATTER:
        TRY_FB(mp_fb_bool(fb, t, 0, false, "indices_are_sorted", &s->indices_are_sorted));
        TRY(read_list(r, i, code, t, 1, "update_window_dims", &s->a));
        TRY(read_list(r, i, code, t, 2, "inserted_window_dims", &s->b));
        TRY(read_list(r, i, code, t, 3, "scatter_dims_to_operand_dims", &s->c));
        TRY_FB(mp_fb_u64(fb, t, 4, 0, "index_vector_dim", &u64) &&
               mp_fb_bool(fb, t, 5, false, "unique_indices", &s->unique_indices));
        s->index_vector_dim = (int64_t)u64;
        TRY(read_subgraph_index(r, i, code, t, 6, "update_computation_subgraph_index", &s->body));
        break;
    case BO2_PAD:
        TRY(read_list(r, i, code, t, 0, "edge_padding_low", &s->a));
        TRY(read_list(r, i, code, t, 1, "edge_padding_high", &s->b));
        TRY(read_list(r, i, code, t, 2, "interior_padding", &s->c));
        for (int32_t d = 0; d < s->c.n; d++)
            if (s->c.v[d] < 0)
                return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): interior_padding %lld of dimension %d is negative",
                                   i, mp_tfl_op_label(code), (long long)s->c.v[d], (int)d);
        break;
    case BO2_REDUCE_WINDOW:
        TRY(read_list(r, i, code, t, 0, "window_dimensions", &s->a));
        TRY(read_list(r, i, code, t, 1, "window_strides", &s->b));
        TRY(read_list(r, i, code, t, 2, "base_dilations", &s->c));
        TRY(read_list(r, i, code, t, 3, "window_dilations", &s->d));
        TRY(read_list(r, i, code, t, 4, "padding", &s->e));
        TRY(read_subgraph_index(r, i, code, t, 5, "body_subgraph_index", &s->body));
        break;
    case BO2_GATHER:
        TRY(read_list(r, i, code, t, 0, "offset_dims", &s->a));
        TRY(read_list(r, i, code, t, 1, "collapsed_slice_dims", &s->b));
        TRY(read_list(r, i, code, t, 2, "start_index_map", &s->c));
        TRY_FB(mp_fb_u64(fb, t, 3, 0, "index_vector_dim", &u64));
        s->index_vector_dim = (int64_t)u64;
        TRY(read_list(r, i, code, t, 4, "slice_sizes", &s->d));
        TRY_FB(mp_fb_bool(fb, t, 5, false, "indices_are_sorted", &s->indices_are_sorted));
        break;
    case BO2_RNG_BIT_GENERATOR: {
        int8_t alg;
        TRY_FB(mp_fb_i8(fb, t, 0, 0, "algorithm", &alg));
        if (alg < 0 || alg > 2)
            return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): algorithm %d is not valid (DEFAULT, PHILOX or THREEFRY)",
                               i, mp_tfl_op_label(code), alg);
        s->rng_algorithm = alg;
        break;
    }
    case BO2_REDUCE_WINDOW_TFL:
        TRY_FB(mp_fb_i32(fb, t, 0, 0, "reduce_function", &s->reduce_function));
        if (s->reduce_function < 1 || s->reduce_function > 6)
            return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): reduce_function %d is not valid (ADD, MUL, MINIMUM, MAXIMUM, ALL or ANY)",
                               i, mp_tfl_op_label(code), s->reduce_function);
        break;
    case BO2_COMPOSITE: { /* the decomposition is called: subgraph_a and _b, as CALL_ONCE's */
        const char *nm;
        uint32_t nl = 0;
        TRY_FB(mp_fb_string(fb, t, 0, "name", &nm, &nl));
        s->name = mp_tfl_strdup(r->im, nm ? nm : "", nm ? nl : 0);
        if (!s->name)
            return mp_tfl_nomem(r);
        TRY(read_subgraph_index(r, i, code, t, 1, "decomposition_subgraph_index", &o->subgraph_a));
        o->subgraph_b = o->subgraph_a;
        TRY_FB(mp_fb_i32(fb, t, 4, 0, "version", &s->version));
        break;
    }
    case BO2_CASE: {
        mp_fb_vec v;
        TRY_FB(mp_fb_vector(fb, t, 0, 4, "branch_subgraph_indices", &v));
        if (v.n == 0)
            return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s) has no branches", i, mp_tfl_op_label(code));
        if (v.n > MP_MAX_CASE_BRANCHES)
            return mp_tfl_fail(r, MP_ERR_UNSUPPORTED, "operator %d (%s) has %u branches, more than memprof's limit of %d",
                               i, mp_tfl_op_label(code), v.n, MP_MAX_CASE_BRANCHES);
        int32_t *b = mp_tfl_array(r->im, v.n, sizeof(int32_t));
        if (!b)
            return mp_tfl_nomem(r);
        for (uint32_t q = 0; q < v.n; q++) {
            b[q] = mp_fb_vec_i32(fb, &v, q);
            if (b[q] < 0)
                return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): branch %u's subgraph index %d is negative",
                                   i, mp_tfl_op_label(code), q, b[q]);
        }
        s->n_branches = (int32_t)v.n;
        s->branches = b;
        break;
    }
    default: /* DilateOptions, StablehloShiftLeftOptions: no fields */
        break;
    }
    return MP_OK;
}

mp_status mp_tfl_read_options2(rd *r, int32_t i, int code, uint8_t type, const mp_fb_table *t,
                               mp_op_options *o)
{
    const opt2_kind *k = find_kind(code);
    if (!k) {
        /* an operator without a BuiltinOptions2 table of its own carries none we map: the
         * table was structurally checked by the caller */
        return MP_OK;
    }
    if (type != BO2_NONE && type != k->type)
        return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s) carries builtin_options_2 of union type %u, expected %s",
                           i, mp_tfl_op_label(code), type, k->table);
    mp_shlo_options *s = mp_tfl_array(r->im, 1, sizeof *s);
    if (!s)
        return mp_tfl_nomem(r);
    s->body = -1;
    s->body_op = -1;
    s->name = "";
    mp_fb_table none = {0};
    const mp_fb_table *ot = (type == k->type && t->present) ? t : &none;
    mp_fb_where(&r->fb, "operator %d %s", i, k->table);
    TRY(read_fields(r, i, code, k, ot, s, o));
    o->shlo = s;
    return MP_OK;
}

/* ---- subgraphs looked at, not called ------------------------------------------------- */

/* The builtin code a body's operator computes with, the STABLEHLO_ ones mapped to the
 * TensorFlow Lite operator of the same arithmetic; -1 for others. */
static int body_arith(int code)
{
    switch (code) {
    case MP_OP_ADD: case MP_OP_STABLEHLO_ADD: return MP_OP_ADD;
    case MP_OP_MUL: case MP_OP_STABLEHLO_MULTIPLY: return MP_OP_MUL;
    case MP_OP_MAXIMUM: case MP_OP_STABLEHLO_MAXIMUM: return MP_OP_MAXIMUM;
    case MP_OP_MINIMUM: case MP_OP_STABLEHLO_MINIMUM: return MP_OP_MINIMUM;
    case MP_OP_LOGICAL_AND: case MP_OP_STABLEHLO_AND: return MP_OP_LOGICAL_AND;
    case MP_OP_LOGICAL_OR: case MP_OP_STABLEHLO_OR: return MP_OP_LOGICAL_OR;
    default: return -1;
    }
}

/* What body subgraph g computes of its two inputs: one operator of body_arith on them giving
 * the output, or (SCATTER only) no operator and the second input as the output. */
static mp_status body_computation(rd *r, int32_t i, int code, int32_t k, const mp_model *g, int32_t *op_out)
{
    const char *nm = mp_tfl_op_label(code);
    if (g->n_inputs != 2 || g->n_outputs != 1)
        return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): body subgraph %d takes %d inputs and gives %d outputs; "
                           "a body takes 2 and gives 1", i, nm, (int)k, g->n_inputs, g->n_outputs);
    if (g->n_ops == 0 && code == MP_OP_STABLEHLO_SCATTER && g->outputs[0] == g->inputs[1]) {
        *op_out = -1; /* the update replaces the operand's element */
        return MP_OK;
    }
    int arith = g->n_ops == 1 ? body_arith(g->ops[0].opcode) : -1;
    if (arith < 0 || g->ops[0].n_inputs != 2 || g->ops[0].n_outputs != 1 ||
        g->ops[0].outputs[0] != g->outputs[0])
        return mp_tfl_fail(r, MP_ERR_UNSUPPORTED, "operator %d (%s): body subgraph %d is not one ADD, MUL, MAXIMUM, "
                           "MINIMUM, AND or OR of its inputs (what memprof and TensorFlow Lite run)",
                           i, nm, (int)k);
    const int32_t *in = g->ops[0].inputs;
    bool both = (in[0] == g->inputs[0] && in[1] == g->inputs[1]) ||
                (in[0] == g->inputs[1] && in[1] == g->inputs[0]);
    if (!both)
        return mp_tfl_fail(r, MP_ERR_UNSUPPORTED, "operator %d (%s): body subgraph %d's %s does not combine its two inputs",
                           i, nm, (int)k, mp_tfl_op_label(g->ops[0].opcode));
    *op_out = arith;
    return MP_OK;
}

mp_status mp_tfl_check_shlo_calls(rd *r, const mp_model *caller, int32_t i)
{
    const mp_op_info *op = &caller->ops[i];
    mp_shlo_options *s = (mp_shlo_options *)op->opt.shlo;
    const mp_model *m = r->m;
    const char *nm = mp_tfl_op_label(op->opcode);
    if (!s)
        return MP_OK;
    if (op->opcode != MP_OP_STABLEHLO_REDUCE_WINDOW && op->opcode != MP_OP_STABLEHLO_SCATTER)
        return MP_OK;
    if (s->body >= m->n_subgraphs)
        return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): body subgraph %d is out of range (%d subgraphs)",
                           i, nm, s->body, m->n_subgraphs);
    return body_computation(r, i, op->opcode, s->body, mp_model_subgraph(m, s->body), &s->body_op);
}
