/* memprof inspect: a model's inputs, outputs, operators and tensors with shapes and bytes. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "engine/kernels/kernel.h"
#include "engine/model/model.h"

static void help(void)
{
    printf("Usage: memprof inspect MODEL [--no-tensors]\n\n"
           "Shows the inputs and outputs (shape, shape signature with -1 for dynamic\n"
           "dimensions), every operator in execution order (flagging operators memprof cannot\n"
           "run), and every tensor with dtype, shape and bytes, plus the constant bytes that\n"
           "are used in place from the file. MODEL is a .tflite file or zoo:NAME.\n\n"
           "Options:\n"
           "  --no-tensors   omit the per-tensor table\n"
           "  -h, --help     show this help\n\n"
           "Exit codes: 0 ok; 2 usage; 3 the file cannot be read; 4 malformed model.\n\n"
           "More: docs/inspect.md in memprof's sources.\n");
}

static size_t info_bytes(const mp_tensor_info *t)
{
    size_t n;
    if (!mp_shape_elements(t->rank, t->shape, &n))
        return 0;
    return n * mp_dtype_size(t->dtype);
}

static void print_tensor_line(const mp_model *m, int32_t idx, const char *indent)
{
    const mp_tensor_info *t = &m->tensors[idx];
    char shape[128], sig[128];
    mp_shape_str(t->rank, t->shape, shape, sizeof shape);
    printf("%s%-4d %-40s %-5s %-18s", indent, idx, t->name, mp_dtype_name(t->dtype), shape);
    if (t->has_signature)
        printf(" sig %-16s", mp_shape_str(t->rank, t->signature, sig, sizeof sig));
    printf(" %10zu B", info_bytes(t));
    if (t->quant.count == 1)
        printf("  q scale=%g zp=%lld", (double)t->quant.scale[0],
               (long long)(t->quant.zero_point ? t->quant.zero_point[0] : 0));
    else if (t->quant.count > 1)
        printf("  q per-channel (%d scales, dim %d)", t->quant.count, t->quant.quantized_dimension);
    printf("\n");
}

int mp_cmd_inspect(int argc, char **argv)
{
    const char *path = NULL;
    bool no_tensors = false;
    static const mp_opt opts[] = {{"no-tensors", 0, MP_ARG_FLAG, 0, 0}, {0}};
    int rc = mp_opts_parse(&(mp_cmd_spec){.cmd = "inspect", .help = help, .opts = opts,
                                          .ctx = &no_tensors, .pos = &path,
                                          .max_pos = 1,
                                          .missing = "missing MODEL"},
                           argc, argv, NULL);
    if (rc != 0)
        return rc < 0 ? MP_EXIT_OK : rc;
    mp_model *m = NULL;
    mp_error err = {0};
    mp_status st = mp_model_open(path, &m, &err);
    if (st != MP_OK)
        return mp_report_error(&err);

    size_t act = 0;
    int32_t n_const = 0;
    for (int32_t i = 0; i < m->n_tensors; i++) {
        if (m->tensors[i].data)
            n_const++;
        else
            act += info_bytes(&m->tensors[i]);
    }
    printf("model       %s (%zu bytes, schema v%u)\n", m->path, m->file_bytes, m->version);
    if (m->description && *m->description)
        printf("description %s\n", m->description);
    printf("tensors     %d (%d constant: %zu bytes used in place; %zu bytes of non-constant tensors)\n",
           m->n_tensors, n_const, m->const_bytes, act);
    printf("\ninputs\n");
    for (int32_t i = 0; i < m->n_inputs; i++)
        print_tensor_line(m, m->inputs[i], "  ");
    printf("\noutputs\n");
    for (int32_t i = 0; i < m->n_outputs; i++)
        print_tensor_line(m, m->outputs[i], "  ");

    /* operator counts in first-seen order */
    int32_t codes[64], counts[64], nc = 0, unsupported = 0;
    for (int32_t i = 0; i < m->n_ops; i++) {
        int32_t c = m->ops[i].opcode, k = 0;
        while (k < nc && codes[k] != c)
            k++;
        if (k == nc && nc < 64) {
            codes[nc] = c;
            counts[nc++] = 0;
        }
        if (k < 64)
            counts[k]++;
        if (!mp_kernel_find(c))
            unsupported++;
    }
    printf("\noperators   %d:", m->n_ops);
    for (int32_t k = 0; k < nc; k++)
        printf("%s %s x%d", k ? "," : "", mp_op_name(codes[k]), counts[k]);
    printf("\n");
    for (int32_t i = 0; i < m->n_ops; i++) {
        const mp_op_info *op = &m->ops[i];
        printf("  #%-3d %-22s (", i, mp_op_name(op->opcode));
        for (int32_t j = 0; j < op->n_inputs; j++)
            printf(j ? " %d" : "%d", op->inputs[j]);
        printf(") -> (");
        for (int32_t j = 0; j < op->n_outputs; j++)
            printf(j ? " %d" : "%d", op->outputs[j]);
        printf(")%s\n", mp_kernel_find(op->opcode) ? "" : "   [not supported by memprof]");
    }
    if (unsupported)
        printf("  %d operator(s) memprof cannot run yet\n", unsupported);
    if (!no_tensors) {
        printf("\ntensors (index, name, dtype, shape, bytes; * = constant)\n");
        for (int32_t i = 0; i < m->n_tensors; i++)
            print_tensor_line(m, i, m->tensors[i].data ? "* " : "  ");
    }
    mp_model_free(m);
    return MP_EXIT_OK;
}
