/* `memprof inspect`'s text report of a model (see model_report.h). */
#include "reports/model_report.h"

#include "reports/units.h"

#include <jansson.h>

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
    fprintf(f, "tensors     %d (%d constant: %zu bytes used in place; %zu bytes of non-constant tensors)\n",
            m->n_tensors, n_const, m->const_bytes, act);
    fprintf(f, "\ninputs\n");
    for (int32_t i = 0; i < m->n_inputs; i++)
        tensor_line(f, m, m->inputs[i], "  ");
    fprintf(f, "\noutputs\n");
    for (int32_t i = 0; i < m->n_outputs; i++)
        tensor_line(f, m, m->outputs[i], "  ");
    op_counts(f, m);
    int unsupported = 0;
    for (int32_t i = 0; i < m->n_ops; i++) {
        const mp_model_report_op *op = &m->ops[i];
        fprintf(f, "  #%-3d %-22s (", i, op->name);
        for (int32_t j = 0; j < op->n_inputs; j++)
            fprintf(f, j ? " %d" : "%d", op->inputs[j]);
        fprintf(f, ") -> (");
        for (int32_t j = 0; j < op->n_outputs; j++)
            fprintf(f, j ? " %d" : "%d", op->outputs[j]);
        fprintf(f, ")%s\n", op->supported ? "" : "   [not supported by memprof]");
        unsupported += !op->supported;
    }
    if (unsupported)
        fprintf(f, "  %d operator(s) memprof cannot run yet\n", unsupported);
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
    json_object_set_new(root, "n_tensors", json_integer(m->n_tensors));
    json_object_set_new(root, "n_const_tensors", json_integer(n_const));
    for (int32_t i = 0; i < m->n_inputs; i++)
        json_array_append_new(ins, tensor_json(m, m->inputs[i]));
    for (int32_t i = 0; i < m->n_outputs; i++)
        json_array_append_new(outs, tensor_json(m, m->outputs[i]));
    json_object_set_new(root, "inputs", ins);
    json_object_set_new(root, "outputs", outs);
    for (int32_t i = 0; i < m->n_ops; i++) {
        const mp_model_report_op *op = &m->ops[i];
        unsupported += !op->supported;
        json_array_append_new(ops, json_pack("{s:i, s:o, s:o, s:o, s:b}", "index", (int)i,
                                             "name", jstr(op->name), "inputs",
                                             dims(op->n_inputs, op->inputs), "outputs",
                                             dims(op->n_outputs, op->outputs), "supported",
                                             op->supported));
    }
    json_object_set_new(root, "ops", ops);
    json_object_set_new(root, "n_unsupported_ops", json_integer(unsupported));
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
