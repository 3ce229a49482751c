/* memprof inspect: a model's inputs, outputs, operators and tensors with shapes and bytes. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "engine/kernels/kernel.h"
#include "engine/model/model.h"
#include "reports/model_report.h"

static void help(void)
{
    printf("Usage: memprof inspect MODEL [--no-tensors] [--format text|json] [-o FILE]\n\n"
           "Shows the inputs and outputs (shape, shape signature with -1 for dynamic\n"
           "dimensions), every operator in execution order (flagging operators memprof cannot\n"
           "run), and every tensor with dtype, shape and bytes, plus the constant bytes that\n"
           "are used in place from the file; for a model of several subgraphs, each one\n"
           "with its operators (the ones WHILE and IF call). MODEL is a .tflite file or\n"
           "zoo:NAME.\n\n"
           "Options:\n"
           "  --no-tensors      omit the per-tensor table\n"
           "  --format F        text (default) or json (format memprof-model, docs/json.md)\n"
           "  -o, --output FILE write it there, atomically (default: standard output)\n"
           "  -h, --help        show this help\n\n"
           "Exit codes: 0 ok; 2 usage; 3 a file cannot be read or written; 4 malformed\n"
           "model.\n\n"
           "Example:\n"
           "  memprof inspect zoo:mobilenet_v2 --format json --no-tensors\n\n"
           "More: docs/inspect.md in memprof's sources.\n");
}

static size_t info_bytes(const mp_tensor_info *t)
{
    size_t n;
    if (!mp_shape_elements(t->rank, t->shape, &n))
        return 0;
    return n * mp_dtype_size(t->dtype);
}

_Static_assert(MP_MAX_RANK <= MP_MODEL_REPORT_RANK, "a model's rank fits the report's shapes");

/* What describe() allocates for the report. */
typedef struct described {
    mp_model_report_tensor *tensors;
    mp_model_report_op *ops;             /* every subgraph's operators, one after another */
    mp_model_report_subgraph *subgraphs;
} described;

static mp_model_report_op op_of(const mp_op_info *op)
{
    /* WHILE: cond, body; IF: then, else; CALL_ONCE: its init subgraph alone, and
     * STABLEHLO_COMPOSITE its decomposition; STABLEHLO_CASE: its branches */
    bool calls = op->opcode == MP_OP_WHILE || op->opcode == MP_OP_IF;
    bool once = op->opcode == MP_OP_CALL_ONCE || op->opcode == MP_OP_STABLEHLO_COMPOSITE;
    bool cases = op->opcode == MP_OP_STABLEHLO_CASE && op->opt.shlo;
    return (mp_model_report_op){.name = mp_op_name(op->opcode), .n_inputs = op->n_inputs,
                                .n_outputs = op->n_outputs, .inputs = op->inputs,
                                .outputs = op->outputs,
                                .supported = mp_kernel_find(op->opcode) != NULL,
                                .calls = {calls || once ? op->opt.subgraph_a : -1,
                                          calls ? op->opt.subgraph_b : -1},
                                .n_branches = cases ? op->opt.shlo->n_branches : 0,
                                .branches = cases ? op->opt.shlo->branches : NULL};
}

/* The report's plain description of the model (its arrays in *d, malloc'd; false when out
 * of memory). */
static bool describe(const mp_model *m, mp_model_report *r, described *d)
{
    int32_t n_sub = m->n_subgraphs > 1 ? m->n_subgraphs : 1;
    size_t n_ops = 0;
    for (int32_t k = 0; k < n_sub; k++)
        n_ops += (size_t)(k ? mp_model_subgraph(m, k) : m)->n_ops;
    d->tensors = calloc((size_t)m->n_tensors + 1, sizeof *d->tensors);
    d->ops = calloc(n_ops + 1, sizeof *d->ops);
    d->subgraphs = calloc((size_t)n_sub, sizeof *d->subgraphs);
    if (!d->tensors || !d->ops || !d->subgraphs)
        return false;
    for (int32_t i = 0; i < m->n_tensors; i++) {
        const mp_tensor_info *t = &m->tensors[i];
        mp_model_report_tensor *x = &d->tensors[i];
        *x = (mp_model_report_tensor){.name = t->name,
                                      .dtype = t->packed_int4 ? "i4" : mp_dtype_name(t->dtype),
                                      .rank = t->rank, .has_signature = t->has_signature,
                                      .bytes = info_bytes(t), .is_const = t->data != NULL,
                                      .q_count = t->quant.count,
                                      .q_dimension = t->quant.quantized_dimension};
        memcpy(x->shape, t->shape, sizeof(int32_t) * (size_t)t->rank);
        memcpy(x->signature, t->signature, sizeof(int32_t) * (size_t)t->rank);
        if (t->quant.count == 1) {
            x->q_scale = (double)t->quant.scale[0];
            x->q_zero_point = (long long)(t->quant.zero_point ? t->quant.zero_point[0] : 0);
        }
    }
    mp_model_report_op *next = d->ops;
    for (int32_t k = 0; k < n_sub; k++) {
        const mp_model *g = k ? mp_model_subgraph(m, k) : m;
        d->subgraphs[k] = (mp_model_report_subgraph){
            .name = g->subgraph_name ? g->subgraph_name : "", .n_tensors = g->n_tensors,
            .n_inputs = g->n_inputs, .n_outputs = g->n_outputs, .n_ops = g->n_ops,
            .inputs = g->inputs, .outputs = g->outputs, .ops = next};
        for (int32_t i = 0; i < g->n_ops; i++)
            *next++ = op_of(&g->ops[i]);
    }
    *r = (mp_model_report){.path = m->path, .description = m->description,
                           .file_bytes = m->file_bytes, .const_bytes = m->const_bytes,
                           .dense_bytes = m->dense_bytes,
                           .unpacked_bytes = m->unpacked_bytes,
                           .version = m->version, .n_tensors = m->n_tensors,
                           .n_inputs = m->n_inputs, .n_outputs = m->n_outputs,
                           .n_ops = m->n_ops, .tensors = d->tensors, .inputs = m->inputs,
                           .outputs = m->outputs, .ops = d->ops, .n_subgraphs = n_sub,
                           .subgraphs = d->subgraphs};
    return true;
}

typedef struct inspect_args {
    bool no_tensors, json;
    const char *out; /* -o, NULL: stdout */
} inspect_args;

static int take(void *ctx, int id, const char *v)
{
    (void)id;
    return mp_opt_text_or_json("inspect", v, &((inspect_args *)ctx)->json);
}

/* The report in text or JSON to -o or stdout, atomically. */
static int write_report(const inspect_args *a, const mp_model_report *r)
{
    char why[256];
    mp_out o = {.f = stdout};
    /* stdout is written in place (a lost stdout is main's error, exit 3) */
    if (a->out && !mp_out_open(&o, a->out, why, sizeof why)) {
        fprintf(stderr, "memprof inspect: cannot write %s: %s\n", a->out, why);
        return MP_EXIT_IO;
    }
    if (a->json) {
        if (!mp_report_model_json(o.f, r, !a->no_tensors)) {
            if (a->out)
                mp_out_abort(&o);
            fprintf(stderr, "memprof inspect: cannot write the JSON (out of memory)\n");
            return MP_EXIT_RUNTIME;
        }
    } else {
        mp_report_model_text(o.f, r, !a->no_tensors);
    }
    if (!a->out)
        return MP_EXIT_OK;
    if (!mp_out_commit(&o, why, sizeof why)) {
        fprintf(stderr, "memprof inspect: cannot write %s: %s\n", a->out ? a->out : "stdout",
                why);
        return MP_EXIT_IO;
    }
    return MP_EXIT_OK;
}

int mp_cmd_inspect(int argc, char **argv)
{
    const char *path = NULL;
    inspect_args a = {0};
    static const mp_opt opts[] = {
        {"no-tensors", 0, MP_ARG_FLAG, offsetof(inspect_args, no_tensors), 0},
        {"format", 0, MP_ARG_VALUE, 0, 1},
        {"output", 'o', MP_ARG_STRING, offsetof(inspect_args, out), 0},
        {0}};
    int rc = mp_opts_parse(&(mp_cmd_spec){.cmd = "inspect", .help = help, .opts = opts,
                                          .take = take, .ctx = &a, .pos = &path,
                                          .max_pos = 1,
                                          .missing = "missing MODEL"},
                           argc, argv, NULL);
    if (rc != 0)
        return rc < 0 ? MP_EXIT_OK : rc;
    mp_cli_files f = {0};
    mp_cli_files_in(&f, path);
    mp_cli_files_out(&f, a.out);
    if ((rc = mp_cli_files_check("inspect", &f)) != 0)
        return rc;
    mp_model *m = NULL;
    mp_error err = {0};
    mp_status st = mp_model_open(path, &m, &err);
    if (st != MP_OK)
        return mp_report_error(&err);
    mp_model_report r;
    described d = {0};
    if (describe(m, &r, &d)) {
        rc = write_report(&a, &r);
    } else {
        fprintf(stderr, "memprof inspect: out of memory\n");
        rc = MP_EXIT_RUNTIME;
    }
    free(d.tensors);
    free(d.ops);
    free(d.subgraphs);
    mp_model_free(m);
    return rc;
}
