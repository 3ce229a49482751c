/* `memprof inspect`'s text report of a model (see model_report.h). */
#include "reports/model_report.h"

#include "reports/units.h"

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
