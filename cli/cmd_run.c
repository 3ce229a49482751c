/* memprof run: load a model, set inputs (files or the reference formula), run it, and print
 * output summaries and times; optionally write the outputs as raw files plus a JSON index. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "engine/model/reference_input.h"
#include "engine/session.h"

#define MAX_ARGS 64

static void help(void)
{
    printf("Usage: memprof run MODEL [options]\n\n"
           "Runs MODEL (a .tflite file or zoo:NAME) and prints each output's summary (top-5\n"
           "classes for classifiers) and the time of each phase. Inputs come from raw files,\n"
           "or else from the reference formula of ../shared/oracle/README.md\n"
           "(b = (i*7 + 3 + 13*k) %% 256; float32 b/255 - 0.5).\n\n"
           "Options:\n"
           "  --input NAME=FILE    raw little-endian bytes for input NAME (or its index)\n"
           "  --shape NAME=DIMS    set input NAME's shape before prepare, e.g. input=1,160,160,3\n"
           "  --output-dir DIR     write output_J.bin (raw little-endian) and outputs.json there\n"
           "  --threads N          worker threads (default 1)\n"
           "  --runs N             timed runs (default 1); prints median, min and mean\n"
           "  --warmup N           untimed runs before them (default 0)\n"
           "  -h, --help           show this help\n\n"
           "Example: memprof run zoo:mobilenet_v2 --threads 2 --runs 20 --warmup 3\n");
}

typedef struct run_args {
    const char *model, *outdir;
    const char *inputs[MAX_ARGS], *shapes[MAX_ARGS];
    int n_inputs, n_shapes;
    long threads, runs, warmup;
} run_args;

static int parse(int argc, char **argv, run_args *a)
{
    memset(a, 0, sizeof *a);
    a->threads = 1;
    a->runs = 1;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (mp_is_help(o)) {
            help();
            return -1;
        }
        if (o[0] != '-') {
            if (a->model)
                return mp_usage_error("run", "unexpected argument '%s'", o);
            a->model = o;
            continue;
        }
        if (!v)
            return mp_usage_error("run", "%s needs a value", o);
        i++;
        if (strcmp(o, "--input") == 0) {
            if (a->n_inputs == MAX_ARGS || !strchr(v, '='))
                return mp_usage_error("run", "--input takes NAME=FILE, got '%s'", v);
            a->inputs[a->n_inputs++] = v;
        } else if (strcmp(o, "--shape") == 0) {
            if (a->n_shapes == MAX_ARGS || !strchr(v, '='))
                return mp_usage_error("run", "--shape takes NAME=DIMS, got '%s'", v);
            a->shapes[a->n_shapes++] = v;
        } else if (strcmp(o, "--output-dir") == 0) {
            a->outdir = v;
        } else if (strcmp(o, "--threads") == 0) {
            if (!mp_parse_int(v, 1, 256, &a->threads))
                return mp_usage_error("run", "--threads takes 1..256, got '%s'", v);
        } else if (strcmp(o, "--runs") == 0) {
            if (!mp_parse_int(v, 1, 1000000, &a->runs))
                return mp_usage_error("run", "--runs takes 1..1000000, got '%s'", v);
        } else if (strcmp(o, "--warmup") == 0) {
            if (!mp_parse_int(v, 0, 1000000, &a->warmup))
                return mp_usage_error("run", "--warmup takes 0..1000000, got '%s'", v);
        } else {
            return mp_usage_error("run", "unknown option '%s'", o);
        }
    }
    if (!a->model)
        return mp_usage_error("run", "missing MODEL");
    return 0;
}

/* Split "NAME=VALUE" and resolve NAME to an input index. */
static int resolve_input(mp_session *s, const char *arg, const char **value, const char *flag)
{
    const char *eq = strrchr(arg, '=');
    char name[512];
    size_t n = (size_t)(eq - arg);
    if (n >= sizeof name)
        n = sizeof name - 1;
    memcpy(name, arg, n);
    name[n] = 0;
    *value = eq + 1;
    int idx = mp_session_find_input(s, name);
    if (idx < 0) {
        fprintf(stderr, "memprof run: %s: the model has no input '%s' (inputs:", flag, name);
        for (int i = 0; i < mp_session_input_count(s); i++)
            fprintf(stderr, " %s", mp_session_input(s, i)->info->name);
        fprintf(stderr, ")\n");
    }
    return idx;
}

static int set_inputs(mp_session *s, const run_args *a, const char **files)
{
    int n = mp_session_input_count(s);
    for (int i = 0; i < a->n_inputs; i++) {
        const char *file;
        int idx = resolve_input(s, a->inputs[i], &file, "--input");
        if (idx < 0)
            return MP_EXIT_USAGE;
        if (idx < MAX_ARGS)
            files[idx] = file;
    }
    for (int k = 0; k < n; k++) {
        const mp_tensor *t = mp_session_input(s, k);
        void *buf = malloc(t->bytes ? t->bytes : 1);
        if (!buf) {
            fprintf(stderr, "memprof: out of memory for input '%s'\n", t->info->name);
            return MP_EXIT_RUNTIME;
        }
        if (k < MAX_ARGS && files[k]) {
            FILE *f = fopen(files[k], "rb");
            if (!f) {
                fprintf(stderr, "memprof: cannot read %s: %s\n", files[k], strerror(errno));
                free(buf);
                return MP_EXIT_IO;
            }
            size_t got = fread(buf, 1, t->bytes, f);
            int extra = fgetc(f);
            fclose(f);
            if (got != t->bytes || extra != EOF) {
                char sh[128];
                fprintf(stderr,
                        "memprof: %s: input '%s' %s %s needs exactly %zu bytes; the file has %s\n",
                        files[k], t->info->name, mp_dtype_name(t->dtype),
                        mp_shape_str(t->rank, t->dims, sh, sizeof sh), t->bytes,
                        got < t->bytes ? "fewer" : "more");
                free(buf);
                return MP_EXIT_FORMAT;
            }
        } else if (!mp_reference_input(buf, t->dtype, mp_tensor_elements(t), k)) {
            fprintf(stderr, "memprof: input '%s' has dtype %s: give it with --input\n",
                    t->info->name, mp_dtype_name(t->dtype));
            free(buf);
            return MP_EXIT_USAGE;
        }
        mp_error err = {0};
        mp_status st = mp_session_set_input(s, k, buf, t->bytes, &err);
        free(buf);
        if (st != MP_OK)
            return mp_report_error(&err);
    }
    return MP_EXIT_OK;
}

static double value_at(const mp_tensor *t, size_t i)
{
    switch (t->dtype) {
    case MP_DT_FLOAT32: return ((const float *)t->data)[i];
    case MP_DT_INT32: return ((const int32_t *)t->data)[i];
    case MP_DT_INT64: return (double)((const int64_t *)t->data)[i];
    case MP_DT_UINT8: return ((const uint8_t *)t->data)[i];
    case MP_DT_INT8: return ((const int8_t *)t->data)[i];
    case MP_DT_INT16: return ((const int16_t *)t->data)[i];
    case MP_DT_BOOL: return ((const uint8_t *)t->data)[i];
    default: return NAN;
    }
}

static void print_output(const mp_tensor *t, int j)
{
    char sh[128];
    size_t n = mp_tensor_elements(t);
    printf("output %d  %s  %s %s\n", j, t->info->name, mp_dtype_name(t->dtype),
           mp_shape_str(t->rank, t->dims, sh, sizeof sh));
    if (n == 0 || isnan(value_at(t, 0)))
        return;
    double mn = INFINITY, mx = -INFINITY, sum = 0;
    for (size_t i = 0; i < n; i++) {
        double v = value_at(t, i);
        mn = v < mn ? v : mn;
        mx = v > mx ? v : mx;
        sum += v;
    }
    printf("  min %.6g  max %.6g  mean %.6g  sum %.6g\n", mn, mx, sum / (double)n, sum);
    size_t shown = n < 8 ? n : 8;
    printf("  first");
    for (size_t i = 0; i < shown; i++)
        printf(" %.6g", value_at(t, i));
    printf("%s\n", n > shown ? " ..." : "");
    /* a classifier: one row of more than 5 scores */
    if (t->rank >= 1 && n == (size_t)t->dims[t->rank - 1] && n > 5) {
        size_t top[5];
        for (int k = 0; k < 5; k++) {
            size_t best = SIZE_MAX;
            for (size_t i = 0; i < n; i++) {
                bool taken = false;
                for (int q = 0; q < k; q++)
                    taken |= top[q] == i;
                if (!taken && (best == SIZE_MAX || value_at(t, i) > value_at(t, best)))
                    best = i;
            }
            top[k] = best;
        }
        printf("  top-5");
        for (int k = 0; k < 5; k++)
            printf("  %zu:%.4g", top[k], value_at(t, top[k]));
        printf("\n");
    }
}

static const char *dtype_long(mp_dtype dt)
{
    switch (dt) {
    case MP_DT_FLOAT32: return "float32";
    case MP_DT_INT32: return "int32";
    case MP_DT_UINT8: return "uint8";
    case MP_DT_INT8: return "int8";
    case MP_DT_INT64: return "int64";
    case MP_DT_INT16: return "int16";
    case MP_DT_BOOL: return "bool";
    case MP_DT_FLOAT16: return "float16";
    default: return mp_dtype_name(dt);
    }
}

static int write_outputs(mp_session *s, const char *dir)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "memprof: cannot create %s: %s\n", dir, strerror(errno));
        return MP_EXIT_IO;
    }
    json_t *root = json_object(), *arr = json_array();
    json_object_set_new(root, "format", json_string("memprof-outputs"));
    json_object_set_new(root, "version", json_integer(1));
    json_object_set_new(root, "model", json_string(mp_session_model(s)->path));
    json_object_set_new(root, "outputs", arr);
    int rc = MP_EXIT_OK;
    char path[4096], why[256];
    for (int j = 0; j < mp_session_output_count(s) && rc == MP_EXIT_OK; j++) {
        const mp_tensor *t = mp_session_output(s, j);
        char file[64];
        snprintf(file, sizeof file, "output_%d.bin", j);
        snprintf(path, sizeof path, "%s/%s", dir, file);
        if (!mp_write_file_atomic(path, t->data, t->bytes, why, sizeof why)) {
            fprintf(stderr, "memprof: cannot write %s: %s\n", path, why);
            rc = MP_EXIT_IO;
            break;
        }
        json_t *o = json_object(), *shape = json_array();
        for (int32_t d = 0; d < t->rank; d++)
            json_array_append_new(shape, json_integer(t->dims[d]));
        json_object_set_new(o, "index", json_integer(j));
        json_object_set_new(o, "name", json_string(t->info->name));
        json_object_set_new(o, "dtype", json_string(dtype_long(t->dtype)));
        json_object_set_new(o, "shape", shape);
        json_object_set_new(o, "bytes", json_integer((json_int_t)t->bytes));
        json_object_set_new(o, "file", json_string(file));
        json_array_append_new(arr, o);
    }
    if (rc == MP_EXIT_OK) {
        char *text = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
        snprintf(path, sizeof path, "%s/outputs.json", dir);
        if (!text || !mp_write_file_atomic(path, text, strlen(text), why, sizeof why)) {
            fprintf(stderr, "memprof: cannot write %s: %s\n", path, text ? why : "out of memory");
            rc = MP_EXIT_IO;
        }
        free(text);
    }
    json_decref(root);
    return rc;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int mp_cmd_run(int argc, char **argv)
{
    run_args a;
    int rc = parse(argc, argv, &a);
    if (rc != 0)
        return rc < 0 ? MP_EXIT_OK : rc;

    mp_error err = {0};
    mp_session *s = NULL;
    mp_session_options so = {.threads = (int)a.threads};
    uint64_t *times = malloc(sizeof(uint64_t) * (size_t)a.runs);
    if (!times || mp_session_create(&so, &s, &err) != MP_OK) {
        free(times);
        return times ? mp_report_error(&err) : MP_EXIT_RUNTIME;
    }
    uint64_t t0 = mp_now_ns();
    if (mp_session_load(s, a.model, &err) != MP_OK) {
        rc = mp_report_error(&err);
        goto out;
    }
    uint64_t t_load = mp_now_ns() - t0;
    for (int i = 0; i < a.n_shapes; i++) {
        const char *dims_s;
        int32_t dims[MP_MAX_RANK];
        int idx = resolve_input(s, a.shapes[i], &dims_s, "--shape");
        if (idx < 0) {
            rc = MP_EXIT_USAGE;
            goto out;
        }
        int rank = mp_parse_dims(dims_s, dims, MP_MAX_RANK);
        if (rank < 0) {
            rc = mp_usage_error("run", "--shape: '%s' is not a list of positive dimensions like 1,224,224,3",
                                dims_s);
            goto out;
        }
        if (mp_session_set_input_shape(s, idx, rank, dims, &err) != MP_OK) {
            rc = mp_report_error(&err);
            goto out;
        }
    }
    t0 = mp_now_ns();
    if (mp_session_prepare(s, &err) != MP_OK) {
        rc = mp_report_error(&err);
        goto out;
    }
    uint64_t t_prepare = mp_now_ns() - t0;
    const char *files[MAX_ARGS] = {0};
    rc = set_inputs(s, &a, files);
    if (rc != MP_EXIT_OK)
        goto out;
    for (long i = 0; i < a.warmup; i++)
        if (mp_session_run(s, &err) != MP_OK) {
            rc = mp_report_error(&err);
            goto out;
        }
    for (long i = 0; i < a.runs; i++) {
        t0 = mp_now_ns();
        if (mp_session_run(s, &err) != MP_OK) {
            rc = mp_report_error(&err);
            goto out;
        }
        times[i] = mp_now_ns() - t0;
    }
    const mp_model *m = mp_session_model(s);
    printf("model    %s  (%d operators, %d tensors, %zu constant bytes)\n", m->path, m->n_ops,
           m->n_tensors, m->const_bytes);
    for (int k = 0; k < mp_session_input_count(s); k++) {
        const mp_tensor *t = mp_session_input(s, k);
        char sh[128];
        printf("input %d  %s  %s %s  (%s)\n", k, t->info->name, mp_dtype_name(t->dtype),
               mp_shape_str(t->rank, t->dims, sh, sizeof sh),
               k < MAX_ARGS && files[k] ? files[k] : "reference formula");
    }
    for (int j = 0; j < mp_session_output_count(s); j++)
        print_output(mp_session_output(s, j), j);
    printf("time     load %.3f ms  prepare %.3f ms  first run %.3f ms  (threads %ld)\n",
           t_load / 1e6, t_prepare / 1e6, times[0] / 1e6, a.threads);
    if (a.runs > 1) {
        double mean = 0;
        for (long i = 0; i < a.runs; i++)
            mean += (double)times[i];
        mean /= (double)a.runs;
        qsort(times, (size_t)a.runs, sizeof times[0], cmp_u64);
        printf("runs     %ld (after %ld warm-up): median %.3f ms  min %.3f ms  mean %.3f ms\n",
               a.runs, a.warmup, times[a.runs / 2] / 1e6, times[0] / 1e6, mean / 1e6);
    }
    if (a.outdir)
        rc = write_outputs(s, a.outdir);
out:
    mp_session_destroy(s);
    free(times);
    return rc;
}
