/* `memprof inspect`'s report of a model, text and JSON (see model_report.h). */
#include "reports/model_report.h"

#include "reports/units.h"

#include <jansson.h>
#include <string.h>

static void tensor_line(FILE *f, const mp_model_report *m, int32_t idx, const char *indent)
{
    const mp_model_report_tensor *t = &m->tensors[idx];
    char shape[128], sig[128];
    fprintf(f, "%s%-4d %-40s %-5s %-18s", indent, idx, t->name, t->dtype,
            mp_fmt_dims(shape, sizeof shape, t->rank, t->shape));
    if (t->has_signature)
        fprintf(f, " sig %-16s", mp_fmt_dims(sig, sizeof sig, t->rank, t->signature));
    fprintf(f, " %10zu B", t->bytes);
    if (t->q_count == 1)
        fprintf(f, "  q scale=%g zp=%lld", t->q_scale, t->q_zero_point);
    else if (t->q_count > 1)
        fprintf(f, "  q per-channel (%d scales, dim %d)", t->q_count, t->q_dimension);
    fprintf(f, "\n");
}

/* The operator codes in first-seen order with their counts. */
static void op_counts(FILE *f, const mp_model_report *m)
{
    enum { MAX_KINDS = 64 };
    const char *names[MAX_KINDS];
    int32_t counts[MAX_KINDS], nk = 0;
    for (int32_t i = 0; i < m->n_ops; i++) {
        int32_t k = 0;
        while (k < nk && names[k] != m->ops[i].name)
            k++;
        if (k == nk && nk < MAX_KINDS) {
            names[nk] = m->ops[i].name;
            counts[nk++] = 0;
        }
        if (k < MAX_KINDS)
            counts[k]++;
    }
    fprintf(f, "\noperators   %d:", m->n_ops);
    for (int32_t k = 0; k < nk; k++)
        fprintf(f, "%s %s x%d", k ? "," : "", names[k], counts[k]);
    fprintf(f, "\n");
}

/* "(0 1 -1)": an operator's or a subgraph's tensor list. */
static void index_list(FILE *f, int32_t n, const int32_t *v)
{
    fputc('(', f);
    for (int32_t j = 0; j < n; j++)
        fprintf(f, j ? " %d" : "%d", (int)v[j]);
    fputc(')', f);
}

/* One operator: "#3   WHILE (0 1) -> (2 3)  cond 1 body 2". */
static void op_line(FILE *f, const mp_model_report_op *op, int32_t i, const char *indent)
{
    fprintf(f, "%s#%-3d %-22s ", indent, (int)i, op->name);
    index_list(f, op->n_inputs, op->inputs);
    fputs(" -> ", f);
    index_list(f, op->n_outputs, op->outputs);
    if (op->n_branches > 0) { /* STABLEHLO_CASE */
        fputs("  branches", f);
        for (int32_t q = 0; q < op->n_branches; q++)
            fprintf(f, " %d", (int)op->branches[q]);
    } else if (op->calls[0] >= 0 && op->calls[1] < 0) /* CALL_ONCE, STABLEHLO_COMPOSITE */
        fprintf(f, "  %s %d", strcmp(op->name, "CALL_ONCE") == 0 ? "init" : "decomposition",
                (int)op->calls[0]);
    else if (op->calls[0] >= 0 && strcmp(op->name, "WHILE") == 0)
        fprintf(f, "  cond %d body %d", (int)op->calls[0], (int)op->calls[1]);
    else if (op->calls[0] >= 0)
        fprintf(f, "  then %d else %d", (int)op->calls[0], (int)op->calls[1]);
    fprintf(f, "%s\n", op->supported ? "" : "   [not supported by memprof]");
}

/* A model of several subgraphs: each with its counts, inputs and outputs, and the operators
 * of the ones WHILE and IF call (subgraph 0's are listed above). */
static void subgraphs_text(FILE *f, const mp_model_report *m)
{
    if (m->n_subgraphs <= 1)
        return;
    fprintf(f, "\nsubgraphs   %d (subgraph 0 above; WHILE, IF, CALL_ONCE, STABLEHLO_COMPOSITE and "
               "STABLEHLO_CASE call the others by index)\n", (int)m->n_subgraphs);
    for (int32_t k = 0; k < m->n_subgraphs; k++) {
        const mp_model_report_subgraph *g = &m->subgraphs[k];
        fprintf(f, "  %-3d %-20s %d tensors, %d operators, inputs ", (int)k,
                g->name && g->name[0] ? g->name : "-", (int)g->n_tensors, (int)g->n_ops);
        index_list(f, g->n_inputs, g->inputs);
        fputs(" outputs ", f);
        index_list(f, g->n_outputs, g->outputs);
        fputc('\n', f);
        for (int32_t i = 0; k > 0 && i < g->n_ops; i++)
            op_line(f, &g->ops[i], i, "      ");
    }
}

void mp_report_model_text(FILE *f, const mp_model_report *m, bool with_tensors)
{
    size_t act = 0;
    int32_t n_const = 0;
    for (int32_t i = 0; i < m->n_tensors; i++) {
        if (m->tensors[i].is_const)
            n_const++;
        else
            act += m->tensors[i].bytes;
    }
    fprintf(f, "model       %s (%zu bytes, schema v%u)\n", m->path, m->file_bytes, m->version);
    if (m->description && *m->description)
        fprintf(f, "description %s\n", m->description);
    fprintf(f, "tensors     %d (%d constant: %zu bytes used in place", m->n_tensors, n_const,
            m->const_bytes);
    if (m->dense_bytes > 0)
        fprintf(f, ", %zu bytes densified from sparse tensors on the heap", m->dense_bytes);
    if (m->unpacked_bytes > 0)
        fprintf(f, ", %zu bytes unpacked from int4 to int8 on the heap", m->unpacked_bytes);
    fprintf(f, "; %zu bytes of non-constant tensors)\n", act);
    fprintf(f, "\ninputs\n");
    for (int32_t i = 0; i < m->n_inputs; i++)
        tensor_line(f, m, m->inputs[i], "  ");
    fprintf(f, "\noutputs\n");
    for (int32_t i = 0; i < m->n_outputs; i++)
        tensor_line(f, m, m->outputs[i], "  ");
    op_counts(f, m);
    int unsupported = 0;
    for (int32_t i = 0; i < m->n_ops; i++) {
        op_line(f, &m->ops[i], i, "  ");
        unsupported += !m->ops[i].supported;
    }
    if (unsupported)
        fprintf(f, "  %d operator(s) memprof cannot run yet\n", unsupported);
    subgraphs_text(f, m);
    if (with_tensors) {
        fprintf(f, "\ntensors (index, name, dtype, shape, bytes; * = constant)\n");
        for (int32_t i = 0; i < m->n_tensors; i++)
            tensor_line(f, m, i, m->tensors[i].is_const ? "* " : "  ");
    }
}

/* ---- json ---------------------------------------------------------------------------------- */

static json_t *jstr(const char *s)
{
    json_t *v = s ? json_string(s) : NULL;
    return v ? v : json_null(); /* absent, or not UTF-8 */
}

static json_t *dims(int32_t rank, const int32_t *d)
{
    json_t *a = json_array();
    for (int32_t i = 0; i < rank; i++)
        json_array_append_new(a, json_integer(d[i]));
    return a;
}

static json_t *tensor_json(const mp_model_report *m, int32_t i)
{
    const mp_model_report_tensor *t = &m->tensors[i];
    json_t *o = json_object();
    json_object_set_new(o, "index", json_integer(i));
    json_object_set_new(o, "name", jstr(t->name));
    json_object_set_new(o, "dtype", jstr(t->dtype));
    json_object_set_new(o, "shape", dims(t->rank, t->shape));
    json_object_set_new(o, "signature", t->has_signature ? dims(t->rank, t->signature)
                                                         : json_null());
    json_object_set_new(o, "bytes", json_integer((json_int_t)t->bytes));
    json_object_set_new(o, "const", json_boolean(t->is_const));
    json_t *q = json_null();
    if (t->q_count == 1)
        q = json_pack("{s:f, s:I}", "scale", t->q_scale, "zero_point",
                      (json_int_t)t->q_zero_point);
    else if (t->q_count > 1)
        q = json_pack("{s:i, s:i}", "channels", (int)t->q_count, "dimension",
                      (int)t->q_dimension);
    json_object_set_new(o, "quantization", q);
    return o;
}

/* An operator; "calls" (the subgraphs a WHILE or IF calls, CALL_ONCE's or COMPOSITE's one, a
 * CASE's branches) only on those. */
static json_t *op_json(const mp_model_report_op *op, int32_t i)
{
    json_t *o = json_pack("{s:i, s:o, s:o, s:o, s:b}", "index", (int)i, "name", jstr(op->name),
                          "inputs", dims(op->n_inputs, op->inputs), "outputs",
                          dims(op->n_outputs, op->outputs), "supported", op->supported);
    if (o && op->n_branches > 0)
        json_object_set_new(o, "calls", dims(op->n_branches, op->branches));
    else if (o && op->calls[0] >= 0)
        json_object_set_new(o, "calls", dims(op->calls[1] >= 0 ? 2 : 1, op->calls));
    return o;
}

bool mp_report_model_json(FILE *f, const mp_model_report *m, bool with_tensors)
{
    json_t *root = json_object(), *ins = json_array(), *outs = json_array(),
           *ops = json_array();
    int32_t n_const = 0, unsupported = 0;
    for (int32_t i = 0; i < m->n_tensors; i++)
        n_const += m->tensors[i].is_const;
    json_object_set_new(root, "format", json_string("memprof-model"));
    json_object_set_new(root, "version", json_integer(1));
    json_object_set_new(root, "model", jstr(m->path));
    json_object_set_new(root, "description", jstr(m->description));
    json_object_set_new(root, "schema_version", json_integer(m->version));
    json_object_set_new(root, "file_bytes", json_integer((json_int_t)m->file_bytes));
    json_object_set_new(root, "const_bytes", json_integer((json_int_t)m->const_bytes));
    json_object_set_new(root, "dense_bytes", json_integer((json_int_t)m->dense_bytes));
    json_object_set_new(root, "unpacked_bytes", json_integer((json_int_t)m->unpacked_bytes));
    json_object_set_new(root, "n_tensors", json_integer(m->n_tensors));
    json_object_set_new(root, "n_const_tensors", json_integer(n_const));
    for (int32_t i = 0; i < m->n_inputs; i++)
        json_array_append_new(ins, tensor_json(m, m->inputs[i]));
    for (int32_t i = 0; i < m->n_outputs; i++)
        json_array_append_new(outs, tensor_json(m, m->outputs[i]));
    json_object_set_new(root, "inputs", ins);
    json_object_set_new(root, "outputs", outs);
    for (int32_t i = 0; i < m->n_ops; i++) {
        unsupported += !m->ops[i].supported;
        json_array_append_new(ops, op_json(&m->ops[i], i));
    }
    json_object_set_new(root, "ops", ops);
    json_object_set_new(root, "n_unsupported_ops", json_integer(unsupported));
    if (m->n_subgraphs > 1) {
        json_t *subs = json_array();
        for (int32_t k = 0; k < m->n_subgraphs; k++) {
            const mp_model_report_subgraph *g = &m->subgraphs[k];
            json_t *gops = json_array();
            for (int32_t i = 0; i < g->n_ops; i++)
                json_array_append_new(gops, op_json(&g->ops[i], i));
            json_array_append_new(subs, json_pack("{s:i, s:o, s:i, s:o, s:o, s:o}", "index",
                                                  (int)k, "name", jstr(g->name), "n_tensors",
                                                  (int)g->n_tensors, "inputs",
                                                  dims(g->n_inputs, g->inputs), "outputs",
                                                  dims(g->n_outputs, g->outputs), "ops", gops));
        }
        json_object_set_new(root, "subgraphs", subs);
    }
    if (with_tensors) {
        json_t *ts = json_array();
        for (int32_t i = 0; i < m->n_tensors; i++)
            json_array_append_new(ts, tensor_json(m, i));
        json_object_set_new(root, "tensors", ts);
    }
    bool ok = json_dumpf(root, f, JSON_INDENT(1) | JSON_PRESERVE_ORDER) == 0 &&
              fputc('\n', f) != EOF;
    json_decref(root);
    return ok;
}
