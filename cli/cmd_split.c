/* memprof split: write a model as consecutive parts, each a valid .tflite file cut before the
 * operators given (engine/model/model_split.h), so that a real model can be run as a chain
 * (memprof pipeline). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "engine/model/model_split.h"

static void help(void)
{
    printf("Usage: memprof split MODEL --at OP [--at OP2 ...] [-o PREFIX]\n\n"
           "Writes MODEL (a .tflite file or zoo:NAME) as consecutive parts, each a valid\n"
           "TensorFlow Lite file, cut before operator OP (its index, as 'memprof inspect'\n"
           "lists them); several --at give several cuts. Every tensor crossing a cut becomes\n"
           "an output of the part before and an input of the part after, in the same order on\n"
           "both sides (the first part takes the model's inputs, the last gives its outputs);\n"
           "constants are copied into each part that reads them; names, shapes, shape\n"
           "signatures and quantization are kept. Running the parts as a chain (memprof\n"
           "pipeline PREFIX-1.tflite PREFIX-2.tflite ...) gives the whole model's outputs bit\n"
           "for bit.\n\n"
           "Options:\n"
           "  --at OP              cut before operator OP (1..operators-1); repeat for more\n"
           "                       parts (in any order)\n"
           "  -o, --output PREFIX  write PREFIX-1.tflite, PREFIX-2.tflite, ... (default: the\n"
           "                       model's file name without .tflite, or NAME for zoo:NAME)\n"
           "  -h, --help           show this help\n"
           "Options take their value as --at 30 or --at=30; '--' ends the options.\n\n"
           "Exit codes: 0 ok; 2 usage (a cut out of range); 3 a file cannot be read or\n"
           "written; 4 malformed model; 5 an operator the writer cannot write (custom, or with\n"
           "intermediate tensors), or state used on both sides of a cut.\n\n"
           "Examples:\n"
           "  memprof split zoo:mobilenet_v2 --at 30 -o mnv2\n"
           "  memprof split model.tflite --at 20 --at 45 -o parts/model\n\n"
           "More: docs/pipeline.md in memprof's sources.\n");
}

typedef struct split_args {
    const char *model, *prefix;
    int32_t cuts[MP_SPLIT_MAX_PARTS];
    int n_cuts;
} split_args;

static int take(void *ctx, int id, const char *v)
{
    (void)id;
    split_args *a = ctx;
    long op;
    if (!mp_parse_int(v, 1, INT32_MAX, &op))
        return mp_usage_error("split", "--at takes an operator index >= 1, got '%s'", v);
    if (a->n_cuts + 1 >= MP_SPLIT_MAX_PARTS)
        return mp_usage_error("split", "--at given more than %d times", MP_SPLIT_MAX_PARTS - 1);
    a->cuts[a->n_cuts++] = (int32_t)op;
    return 0;
}

static int cmp_i32(const void *x, const void *y)
{
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a > b) - (a < b);
}

/* The default prefix: the model's file name without its folder and .tflite. */
static void default_prefix(const char *model, char *out, size_t n)
{
    const char *base = strncmp(model, "zoo:", 4) == 0 ? model + 4 : model;
    const char *slash = strrchr(base, '/');
    if (slash)
        base = slash + 1;
    snprintf(out, n, "%s", base);
    size_t len = strlen(out);
    if (len > 7 && strcmp(out + len - 7, ".tflite") == 0)
        out[len - 7] = 0;
}

static void print_tensors(const mp_model *m, const char *what, int n, const int32_t *idx)
{
    printf("  %-7s", what);
    for (int i = 0; i < n; i++) {
        const mp_tensor_info *t = &m->tensors[idx[i]];
        char sh[128];
        printf("%s %s %s %s", i ? "," : "", t->name, mp_dtype_name(t->dtype),
               mp_shape_str(t->rank, t->shape, sh, sizeof sh));
    }
    printf("\n");
}

int mp_cmd_split(int argc, char **argv)
{
    split_args a = {0};
    static const mp_opt opts[] = {{"at", 0, MP_ARG_VALUE, 0, 1},
                                  {"output", 'o', MP_ARG_STRING, offsetof(split_args, prefix), 0},
                                  {0}};
    int rc = mp_opts_parse(&(mp_cmd_spec){.cmd = "split", .help = help, .opts = opts,
                                          .take = take, .ctx = &a, .pos = &a.model, .max_pos = 1,
                                          .missing = "missing MODEL"},
                           argc, argv, NULL);
    if (rc != 0)
        return rc < 0 ? MP_EXIT_OK : rc;
    if (a.n_cuts == 0)
        return mp_usage_error("split", "missing --at OP (where to cut)");
    qsort(a.cuts, (size_t)a.n_cuts, sizeof a.cuts[0], cmp_i32);
    for (int i = 1; i < a.n_cuts; i++)
        if (a.cuts[i] == a.cuts[i - 1])
            return mp_usage_error("split", "--at %d given twice", (int)a.cuts[i]);
    char prefix[4096];
    if (a.prefix)
        snprintf(prefix, sizeof prefix, "%s", a.prefix);
    else
        default_prefix(a.model, prefix, sizeof prefix);
    int n_parts = a.n_cuts + 1;
    char paths[MP_SPLIT_MAX_PARTS][4200];
    mp_cli_files f = {0};
    mp_cli_files_in(&f, a.model);
    for (int p = 0; p < n_parts; p++) {
        snprintf(paths[p], sizeof paths[p], "%s-%d.tflite", prefix, p + 1);
        mp_cli_files_out(&f, paths[p]);
    }
    rc = mp_cli_files_check("split", &f);
    if (rc != 0)
        return rc;

    mp_error err = {0};
    mp_model *m = NULL;
    if (mp_model_open(a.model, &m, &err) != MP_OK)
        return mp_report_error(&err);
    mp_split_part parts[MP_SPLIT_MAX_PARTS];
    mp_status st = mp_model_split(m, a.cuts, a.n_cuts, parts, &err);
    if (st != MP_OK) {
        mp_model_free(m);
        return st == MP_ERR_ARG ? mp_usage_error("split", "%s", err.msg) : mp_report_error(&err);
    }
    printf("model    %s  (%d operators, %d tensors)\n", m->path, m->n_ops, m->n_tensors);
    rc = MP_EXIT_OK;
    for (int p = 0; p < n_parts && rc == MP_EXIT_OK; p++) {
        char why[256];
        if (!mp_write_file_atomic(paths[p], parts[p].bytes, parts[p].size, why, sizeof why)) {
            fprintf(stderr, "memprof: cannot write %s: %s\n", paths[p], why);
            rc = MP_EXIT_IO;
            break;
        }
        printf("part %d   %s  operators %d..%d  (%zu bytes)\n", p + 1, paths[p],
               (int)parts[p].first_op, (int)(parts[p].first_op + parts[p].n_ops - 1),
               parts[p].size);
        /* the part's own inputs and outputs, read back from what was written */
        mp_model *pm = NULL;
        if (mp_model_load_memory(parts[p].bytes, parts[p].size, paths[p], &pm, &err) != MP_OK) {
            rc = mp_report_error(&err);
            break;
        }
        print_tensors(pm, "inputs", pm->n_inputs, pm->inputs);
        print_tensors(pm, "outputs", pm->n_outputs, pm->outputs);
        mp_model_free(pm);
    }
    mp_model_split_free(parts, n_parts);
    mp_model_free(m);
    return rc;
}
