/* A model cut into consecutive parts, each written as a .tflite file (see model_split.h). */
#include "engine/model/model_split.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model/tflite_writer.h"

/* What the cuts need to know of every tensor. */
typedef struct tinfo {
    int32_t producer;    /* the operator writing it, -1 = none */
    int32_t first_use;   /* first operator reading or writing it, INT32_MAX = none */
    int32_t last_read;   /* last operator reading it, -1 = none */
    bool input, output;  /* a model input, output */
} tinfo;

/* Tensor t is made before operator c (or comes from the caller) and needed from c on. */
static bool crosses(const mp_model *m, const tinfo *ti, int32_t t, int32_t c)
{
    const tinfo *x = &ti[t];
    if (m->tensors[t].data || m->tensors[t].is_variable)
        return false;
    bool made = x->input || (x->producer >= 0 && x->producer < c);
    bool needed = x->output || x->last_read >= c;
    return made && needed;
}

/* The tensors crossing cut c, in index order (or the model's inputs / outputs at the ends). */
static int32_t crossing(const mp_model *m, const tinfo *ti, int32_t c, int32_t *out)
{
    if (c == 0) {
        memcpy(out, m->inputs, sizeof(int32_t) * (size_t)m->n_inputs);
        return m->n_inputs;
    }
    if (c == m->n_ops) {
        memcpy(out, m->outputs, sizeof(int32_t) * (size_t)m->n_outputs);
        return m->n_outputs;
    }
    int32_t n = 0;
    for (int32_t t = 0; t < m->n_tensors; t++)
        if (crosses(m, ti, t, c))
            out[n++] = t;
    return n;
}

/* An int4 constant the reader unpacked to int8 (packed_int4) goes back into the part as the
 * file had it: two values to a byte, the first in the low nibble. The buffer's index, or -1. */
static int int4_buffer(mp_tfw *w, const mp_tensor_info *x)
{
    size_t n = x->data_bytes, packed = n / 2 + (n & 1);
    uint8_t *pk = calloc(packed ? packed : 1, 1);
    if (!pk)
        return -1;
    const int8_t *v = x->data;
    for (size_t k = 0; k < n; k++)
        pk[k / 2] |= (uint8_t)(((unsigned)v[k] & 15u) << (k % 2 ? 4 : 0));
    int b = mp_tfw_buffer(w, pk, packed);
    free(pk);
    return b;
}

/* Write operators [lo, hi) with the inputs and outputs given (whole-model indices). */
static mp_status write_part(const mp_model *m, int32_t lo, int32_t hi, int part, int n_parts,
                            const int32_t *ins, int32_t n_in, const int32_t *outs, int32_t n_out,
                            int32_t *map, bool *need, int32_t *io, mp_split_part *p,
                            mp_error *err)
{
    mp_tfw *w = mp_tfw_create();
    if (!w)
        return mp_fail(err, MP_ERR_NOMEM, "out of memory writing part %d of %s", part + 1, m->path);
    for (int32_t t = 0; t < m->n_tensors; t++)
        map[t] = -1;
    /* the tensors it needs, in the whole model's order */
    memset(need, 0, (size_t)m->n_tensors);
    for (int32_t i = 0; i < n_in; i++)
        need[ins[i]] = true;
    for (int32_t i = 0; i < n_out; i++)
        need[outs[i]] = true;
    for (int32_t i = lo; i < hi; i++) {
        const mp_op_info *op = &m->ops[i];
        for (int32_t j = 0; j < op->n_inputs; j++)
            if (op->inputs[j] >= 0)
                need[op->inputs[j]] = true;
        for (int32_t j = 0; j < op->n_outputs; j++)
            need[op->outputs[j]] = true;
    }
    char desc[512];
    snprintf(desc, sizeof desc, "memprof split of %s: part %d of %d, operators %d..%d", m->path,
             part + 1, n_parts, (int)lo, (int)hi - 1);
    mp_tfw_description(w, desc);
    if (m->subgraph_name && *m->subgraph_name)
        mp_tfw_subgraph_name(w, m->subgraph_name);
    for (int32_t t = 0; t < m->n_tensors; t++) {
        if (!need[t])
            continue;
        const mp_tensor_info *x = &m->tensors[t];
        int buf = 0;
        if (x->data && x->packed_int4)
            buf = int4_buffer(w, x);
        else if (x->data)
            buf = mp_tfw_buffer(w, x->data, x->data_bytes);
        if (buf < 0)
            break;
        map[t] = mp_tfw_tensor(w, x->name, x->packed_int4 ? MP_DT_INT4 : x->dtype, x->rank,
                               x->shape, buf, x->has_signature ? x->signature : NULL);
        if (map[t] < 0)
            break;
        if (x->quant.count > 0)
            mp_tfw_tensor_quant(w, map[t], x->quant.count, x->quant.scale, x->quant.zero_point,
                                x->quant.quantized_dimension);
        if (x->is_variable)
            mp_tfw_tensor_variable(w, map[t]);
    }
    for (int32_t i = lo; i < hi; i++) {
        const mp_op_info *op = &m->ops[i];
        int32_t k = 0;
        for (int32_t j = 0; j < op->n_inputs; j++)
            io[k++] = op->inputs[j] >= 0 ? map[op->inputs[j]] : -1;
        for (int32_t j = 0; j < op->n_outputs; j++)
            io[k++] = map[op->outputs[j]];
        mp_tfw_op(w, op->opcode, op->n_inputs, io, op->n_outputs, io + op->n_inputs, &op->opt);
    }
    for (int32_t i = 0; i < n_in; i++)
        io[i] = map[ins[i]];
    for (int32_t i = 0; i < n_out; i++)
        io[n_in + i] = map[outs[i]];
    mp_tfw_io(w, n_in, io, n_out, io + n_in);
    mp_error werr = {0};
    mp_status st = mp_tfw_finish(w, &p->bytes, &p->size, &werr);
    mp_tfw_free(w);
    if (st != MP_OK)
        return mp_fail(err, st, "%s: writing part %d: %s", m->path, part + 1, werr.msg);
    p->first_op = lo;
    p->n_ops = hi - lo;
    p->n_inputs = n_in;
    p->n_outputs = n_out;
    return MP_OK;
}

/* Operators the writer cannot write, and state that a cut would separate from itself. */
static mp_status check_cuttable(const mp_model *m, const int32_t *cuts, int n_cuts, mp_error *err)
{
    for (int32_t i = 0; i < m->n_ops; i++) {
        const mp_op_info *op = &m->ops[i];
        if (op->custom_code || op->n_intermediates > 0)
            return mp_fail(err, MP_ERR_UNSUPPORTED,
                           "%s: operator #%d %s has %s, which memprof split cannot write",
                           m->path, (int)i, mp_op_name(op->opcode),
                           op->custom_code ? "a custom code" : "intermediate tensors");
    }
    for (int32_t t = 0; t < m->n_tensors; t++) {
        if (!m->tensors[t].is_variable)
            continue;
        int first = -1, last = -1; /* parts using it */
        for (int32_t i = 0; i < m->n_ops; i++) {
            const mp_op_info *op = &m->ops[i];
            bool uses = false;
            for (int32_t j = 0; j < op->n_inputs + op->n_outputs; j++)
                uses |= (j < op->n_inputs ? op->inputs[j] : op->outputs[j - op->n_inputs]) == t;
            if (!uses)
                continue;
            int part = 0;
            while (part < n_cuts && i >= cuts[part])
                part++;
            if (first < 0)
                first = part;
            last = part;
        }
        if (first != last)
            return mp_fail(err, MP_ERR_UNSUPPORTED,
                           "%s: variable tensor %d '%s' (state) is used on both sides of a cut",
                           m->path, (int)t, m->tensors[t].name);
    }
    return MP_OK;
}

mp_status mp_model_split(const mp_model *m, const int32_t *cuts, int n_cuts, mp_split_part *parts,
                         mp_error *err)
{
    if (m->n_subgraphs > 1)
        return mp_fail(err, MP_ERR_UNSUPPORTED, "%s: the model has %d subgraphs (WHILE / IF); "
                       "memprof splits single-subgraph models", m->path, (int)m->n_subgraphs);
    if (n_cuts < 1 || n_cuts + 1 > MP_SPLIT_MAX_PARTS)
        return mp_fail(err, MP_ERR_ARG, "%s: %d cuts; a split takes 1 to %d", m->path, n_cuts,
                       MP_SPLIT_MAX_PARTS - 1);
    for (int i = 0; i < n_cuts; i++) {
        if (cuts[i] < 1 || cuts[i] >= m->n_ops)
            return mp_fail(err, MP_ERR_ARG,
                           "%s: cannot cut before operator %d: the model has operators 0..%d, "
                           "and a cut goes before one of 1..%d",
                           m->path, (int)cuts[i], (int)m->n_ops - 1, (int)m->n_ops - 1);
        if (i > 0 && cuts[i] <= cuts[i - 1])
            return mp_fail(err, MP_ERR_ARG, "%s: cuts must be increasing (%d after %d)",
                           m->path, (int)cuts[i], (int)cuts[i - 1]);
    }
    mp_status st = check_cuttable(m, cuts, n_cuts, err);
    if (st != MP_OK)
        return st;
    size_t nt = (size_t)m->n_tensors + 1;
    int32_t max_io = 0;
    for (int32_t i = 0; i < m->n_ops; i++)
        if (m->ops[i].n_inputs + m->ops[i].n_outputs > max_io)
            max_io = m->ops[i].n_inputs + m->ops[i].n_outputs;
    tinfo *ti = malloc(sizeof *ti * nt);
    int32_t *map = malloc(sizeof(int32_t) * nt);
    int32_t *ins = malloc(sizeof(int32_t) * (nt + (size_t)m->n_inputs + (size_t)m->n_outputs));
    int32_t *outs = malloc(sizeof(int32_t) * (nt + (size_t)m->n_inputs + (size_t)m->n_outputs));
    size_t n_io = (size_t)max_io + 2 * (nt + (size_t)m->n_inputs + (size_t)m->n_outputs);
    bool *need = malloc(nt);
    int32_t *io = malloc(sizeof(int32_t) * n_io); /* an operator's or the subgraph's lists */
    memset(parts, 0, sizeof *parts * (size_t)(n_cuts + 1));
    if (!ti || !map || !ins || !outs || !need || !io) {
        st = mp_fail(err, MP_ERR_NOMEM, "out of memory splitting %s", m->path);
        goto out;
    }
    for (int32_t t = 0; t < m->n_tensors; t++)
        ti[t] = (tinfo){-1, INT32_MAX, -1, false, false};
    for (int32_t i = 0; i < m->n_inputs; i++)
        ti[m->inputs[i]].input = true;
    for (int32_t i = 0; i < m->n_outputs; i++)
        ti[m->outputs[i]].output = true;
    for (int32_t i = 0; i < m->n_ops; i++) {
        const mp_op_info *op = &m->ops[i];
        for (int32_t j = 0; j < op->n_inputs; j++)
            if (op->inputs[j] >= 0)
                ti[op->inputs[j]].last_read = i;
        for (int32_t j = 0; j < op->n_outputs; j++)
            if (ti[op->outputs[j]].producer < 0)
                ti[op->outputs[j]].producer = i;
    }
    int32_t n_in = crossing(m, ti, 0, ins);
    for (int p = 0; p <= n_cuts && st == MP_OK; p++) {
        int32_t lo = p == 0 ? 0 : cuts[p - 1], hi = p == n_cuts ? m->n_ops : cuts[p];
        int32_t n_out = crossing(m, ti, hi, outs);
        st = write_part(m, lo, hi, p, n_cuts + 1, ins, n_in, outs, n_out, map, need, io,
                        &parts[p], err);
        memcpy(ins, outs, sizeof(int32_t) * (size_t)n_out);
        n_in = n_out;
    }
    if (st != MP_OK)
        mp_model_split_free(parts, n_cuts + 1);
out:
    free(ti);
    free(map);
    free(ins);
    free(outs);
    free(need);
    free(io);
    return st;
}

void mp_model_split_free(mp_split_part *parts, int n_parts)
{
    for (int p = 0; p < n_parts; p++) {
        free(parts[p].bytes);
        parts[p].bytes = NULL;
        parts[p].size = 0;
    }
}
