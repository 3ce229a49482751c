/* memprof run's outputs: summaries, times, --output-dir files, the memory report and the
 * trace file (see run_outputs.h). */
#include "cli/run_outputs.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analyzers/source.h"
#include "analyzers/summary.h"
#include "cli/bench_stats.h"
#include "cli/cli.h"
#include "engine/kernels/quant_math.h"
#include "engine/kernels/strings.h"
#include "reports/text_summary.h"

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

/* One scale and zero point on an integer tensor: its values are real numbers
 * scale * (q - zero_point), shown next to the raw integers. */
static bool per_tensor_quantized(const mp_tensor *t, float *scale, int32_t *zero_point)
{
    const mp_quant *q = &t->info->quant;
    if (q->count != 1 || t->dtype == MP_DT_FLOAT32 || t->dtype == MP_DT_FLOAT16)
        return false;
    *scale = q->scale[0];
    *zero_point = q->zero_point ? (int32_t)q->zero_point[0] : 0;
    return true;
}

/* min, max, mean and sum of n values of at(t, i) on one line of f. */
static void print_stats(FILE *f, const mp_tensor *t, size_t n,
                        double (*at)(const mp_tensor *, size_t),
                        const char *label)
{
    double mn = INFINITY, mx = -INFINITY, sum = 0;
    for (size_t i = 0; i < n; i++) {
        double v = at(t, i);
        mn = v < mn ? v : mn;
        mx = v > mx ? v : mx;
        sum += v;
    }
    fprintf(f, "  %smin %.6g  max %.6g  mean %.6g  sum %.6g\n", label, mn, mx, sum / (double)n, sum);
}

static void print_first(FILE *f, const mp_tensor *t, size_t n,
                        double (*at)(const mp_tensor *, size_t),
                        const char *label)
{
    size_t shown = n < 8 ? n : 8;
    fprintf(f, "  %sfirst", label);
    for (size_t i = 0; i < shown; i++)
        fprintf(f, " %.6g", at(t, i));
    fprintf(f, "%s\n", n > shown ? " ..." : "");
}

static double real_at(const mp_tensor *t, size_t i)
{
    float scale;
    int32_t zp;
    if (!per_tensor_quantized(t, &scale, &zp))
        return value_at(t, i);
    return mp_dequantize_f32((int32_t)value_at(t, i), scale, zp);
}

/* Complex outputs (complex64: float32 pairs, complex128: float64 pairs): part 0 the real
 * part, 1 the imaginary one of element i. */
static bool is_complex(const mp_tensor *t)
{
    return t->dtype == MP_DT_COMPLEX64 || t->dtype == MP_DT_COMPLEX128;
}

static double complex_part(const mp_tensor *t, size_t i, int part)
{
    if (t->dtype == MP_DT_COMPLEX64)
        return ((const float *)t->data)[2 * i + (size_t)part];
    return ((const double *)t->data)[2 * i + (size_t)part];
}

static double re_at(const mp_tensor *t, size_t i)
{
    return complex_part(t, i, 0);
}

static double im_at(const mp_tensor *t, size_t i)
{
    return complex_part(t, i, 1);
}

/* min, max, mean and sum of the real and of the imaginary parts, and the first elements as
 * re+im pairs ("1.5-2i"). */
static void print_complex(FILE *f, const mp_tensor *t, size_t n)
{
    print_stats(f, t, n, re_at, "re    ");
    print_stats(f, t, n, im_at, "im    ");
    size_t shown = n < 8 ? n : 8;
    fprintf(f, "  first");
    for (size_t i = 0; i < shown; i++)
        fprintf(f, " %.6g%+.6gi", re_at(t, i), im_at(t, i));
    fprintf(f, "%s\n", n > shown ? " ..." : "");
}

/* A string output: its count and the first strings, quoted, control bytes, quotes and
 * backslashes escaped, each cut at 40 bytes ("..." after it). */
static void print_strings(FILE *f, const mp_tensor *t, size_t n)
{
    char why[128];
    if (!mp_str_layout(t->data, t->bytes, n, why, sizeof why)) {
        fprintf(f, "  not a string buffer:%s\n", why);
        return;
    }
    size_t shown = n < 8 ? n : 8;
    fprintf(f, "  strings %zu  first", n);
    for (size_t i = 0; i < shown; i++) {
        size_t len;
        const char *p = mp_str_at(t, (int32_t)i, &len);
        fputs(" \"", f);
        for (size_t c = 0; c < len && c < 40; c++) {
            unsigned char ch = (unsigned char)p[c];
            if (ch == '"' || ch == '\\')
                fprintf(f, "\\%c", ch);
            else if (ch == '\n')
                fputs("\\n", f);
            else if (ch == '\t')
                fputs("\\t", f);
            else if (ch < 0x20 || ch == 0x7f)
                fprintf(f, "\\x%02x", ch);
            else
                fputc(ch, f);
        }
        fprintf(f, "\"%s", len > 40 ? "..." : "");
    }
    fprintf(f, "%s\n", n > shown ? " ..." : "");
}

static void print_output(FILE *f, const mp_tensor *t, int j)
{
    char sh[128];
    size_t n = mp_tensor_elements(t);
    float scale;
    int32_t zp;
    bool quant = per_tensor_quantized(t, &scale, &zp);
    fprintf(f, "output %d  %s  %s %s", j, t->info->name, mp_dtype_name(t->dtype),
           mp_shape_str(t->rank, t->dims, sh, sizeof sh));
    if (quant)
        fprintf(f, "  (scale %.6g, zero point %d)", (double)scale, zp);
    fprintf(f, "\n");
    if (t->dtype == MP_DT_STRING) {
        print_strings(f, t, n);
        return;
    }
    if (n > 0 && is_complex(t)) {
        print_complex(f, t, n);
        return;
    }
    if (n == 0 || isnan(value_at(t, 0)))
        return;
    print_stats(f, t, n, value_at, quant ? "raw   " : "");
    if (quant)
        print_stats(f, t, n, real_at, "real  ");
    print_first(f, t, n, value_at, quant ? "raw   " : "");
    if (quant)
        print_first(f, t, n, real_at, "real  ");
    /* a classifier: one row of more than 5 scores, ranked by their real values */
    if (t->rank >= 1 && n == (size_t)t->dims[t->rank - 1] && n > 5) {
        size_t top[5];
        for (int k = 0; k < 5; k++) {
            size_t best = SIZE_MAX;
            for (size_t i = 0; i < n; i++) {
                bool taken = false;
                for (int q = 0; q < k; q++)
                    taken |= top[q] == i;
                if (!taken && (best == SIZE_MAX || real_at(t, i) > real_at(t, best)))
                    best = i;
            }
            top[k] = best;
        }
        fprintf(f, "  top-5");
        for (int k = 0; k < 5; k++) {
            fprintf(f, "  %zu:%.4g", top[k], real_at(t, top[k]));
            if (quant)
                fprintf(f, " (%.0f)", value_at(t, top[k]));
        }
        fprintf(f, "\n");
    }
}

/* The caller's own heap buffers, in the trace (trace.h MP_TRACE_CALLER_ID): allocated and
 * freed through these so that the reconciliation of the process heap explains them. */
static uint64_t caller_ids;

static void *caller_alloc(mp_trace *tr, size_t bytes, uint64_t *id)
{
    void *p = malloc(bytes ? bytes : 1);
    *id = MP_TRACE_CALLER_ID + ++caller_ids;
    if (p && tr)
        mp_trace_add(tr, (mp_event){.type = MP_EV_ALLOC, .bytes = bytes, .id = *id,
                                    .tensor = -1, .op = -1, .op_last = -1, .kind = MP_KIND_IO,
                                    .align_log2 = 4});
    return p;
}

static void caller_free(mp_trace *tr, void *p, size_t bytes, uint64_t id)
{
    if (p && tr)
        mp_trace_add(tr, (mp_event){.type = MP_EV_FREE, .bytes = bytes, .id = id, .tensor = -1,
                                    .op = -1, .op_last = -1, .kind = MP_KIND_IO});
    free(p);
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
    case MP_DT_FLOAT64: return "float64";
    case MP_DT_COMPLEX64: return "complex64";
    case MP_DT_COMPLEX128: return "complex128";
    default: return mp_dtype_name(dt);
    }
}

int mp_cli_write_outputs(mp_session *s, mp_trace *tr, const char *dir)
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
        float scale;
        int32_t zp;
        if (t->dtype == MP_DT_STRING) {
            json_object_set_new(o, "layout", json_string("tflite-strings"));
            json_object_set_new(o, "strings", json_integer((json_int_t)mp_tensor_elements(t)));
        } else if (per_tensor_quantized(t, &scale, &zp)) {
            json_object_set_new(o, "scale", json_real((double)scale));
            json_object_set_new(o, "zero_point", json_integer(zp));
        }
        json_array_append_new(arr, o);
    }
    if (rc == MP_EXIT_OK) {
        /* the index's text, the caller's buffer (recorded) */
        size_t need = json_dumpb(root, NULL, 0, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
        uint64_t id = 0;
        char *text = need ? caller_alloc(tr, need, &id) : NULL;
        size_t len = text ? json_dumpb(root, text, need, JSON_INDENT(1) | JSON_PRESERVE_ORDER)
                          : 0;
        snprintf(path, sizeof path, "%s/outputs.json", dir);
        if (!text || len != need || !mp_write_file_atomic(path, text, len, why, sizeof why)) {
            fprintf(stderr, "memprof: cannot write %s: %s\n", path, text ? why : "out of memory");
            rc = MP_EXIT_IO;
        }
        caller_free(tr, text, need, id);
    }
    json_decref(root);
    return rc;
}

/* Why output j of a run under --io bind is not in the caller's buffer (NULL: it is). The
 * player (call_orders.c) leaves an output the engine's when it is also an input, when its
 * shape is known only while running, and after a shape change following prepare. */
static const char *unbound_reason(const mp_session *s, const mp_cli_inputs *in, int j)
{
    const mp_model *m = mp_session_model(s);
    const mp_tensor *t = mp_session_output(s, j);
    if (j < MP_CLI_MAX_INPUTS && in->out[j].p && t->data == in->out[j].p)
        return NULL;
    for (int32_t i = 0; i < m->n_inputs; i++)
        if (m->inputs[i] == m->outputs[j])
            return "it is also an input (the bound input holds it)";
    if (mp_session_output_deferred(s, j))
        return "its shape is known only while running (data-dependent)";
    if (in->outputs_unbound)
        return "shapes changed after prepare (--shape-at run, each-run): its size is "
               "known only in the run that plans";
    return "the engine kept it in its own memory";
}

/* Outputs are read where the engine left them; those not in the caller's buffers (all of
 * them with --io copy) are copied out through the session (a recorded copy), as a caller of
 * the API would. */
int mp_cli_print_outputs(FILE *f, mp_session *s, mp_trace *tr, const mp_cli_inputs *in)
{
    const mp_model *m = mp_session_model(s);
    fprintf(f, "model    %s  (%d operators, %d tensors, %zu constant bytes)\n", m->path, m->n_ops,
           m->n_tensors, m->const_bytes);
    for (int k = 0; k < mp_session_input_count(s); k++) {
        const mp_tensor *t = mp_session_input(s, k);
        char sh[128];
        fprintf(f, "input %d  %s  %s %s\n", k, t->info->name, mp_dtype_name(t->dtype),
               mp_shape_str(t->rank, t->dims, sh, sizeof sh));
    }
    for (int j = 0; j < mp_session_output_count(s); j++) {
        const mp_tensor *t = mp_session_output(s, j);
        const char *why = in->bind ? unbound_reason(s, in, j) : NULL;
        if (!in->bind || why) {
            mp_error err = {0};
            uint64_t id;
            void *copy = caller_alloc(tr, t->bytes, &id);
            if (!copy)
                return MP_EXIT_RUNTIME;
            mp_status st = mp_session_get_output(s, j, copy, t->bytes, &err);
            caller_free(tr, copy, t->bytes, id);
            if (st != MP_OK)
                return mp_report_error(&err);
        }
        print_output(f, t, j);
        if (why)
            fprintf(f, "  output %d not bound, copied out: %s\n", j, why);
    }
    return MP_EXIT_OK;
}

/* ns as milliseconds: three decimals from 0.1 ms up, else six (to the nanosecond), so that a
 * model run in microseconds does not print "0.000 ms"; always "X ms" for the scripts that
 * read these lines. */
static const char *ms(char *buf, size_t n, double ns)
{
    snprintf(buf, n, "%.*f ms", ns >= 1e5 ? 3 : 6, ns / 1e6);
    return buf;
}

void mp_cli_print_times(FILE *f, uint64_t *times, long runs, long warmup, long threads, uint64_t t_load,
                        uint64_t t_prepare)
{
    char a[32], b[32], c[32];
    fprintf(f, "time     load %s  prepare %s  first timed run %s  (threads %ld)\n",
            ms(a, sizeof a, (double)t_load), ms(b, sizeof b, (double)t_prepare),
            ms(c, sizeof c, (double)times[0]), threads);
    if (runs > 1) {
        mp_stats st;
        mp_stats_compute(times, (size_t)runs, &st);
        fprintf(f, "runs     %ld (after %ld warm-up): median %s  min %s  mean %s\n", runs, warmup,
                ms(a, sizeof a, (double)st.median_ns), ms(b, sizeof b, (double)st.min_ns),
                ms(c, sizeof c, (double)st.mean_ns));
    }
}

bool mp_cli_report_on_stdout(int format, const char *report_path)
{
    return format > MP_FMT_TEXT && (!report_path || strcmp(report_path, "-") == 0);
}

int mp_cli_run_report(const mp_trace *tr, int format, const char *report_path, bool exact,
                      const char *trace_path)
{
    mp_error err = {0};
    /* a document on stdout (--format json without -o): nothing else there, the other lines
     * go to stderr */
    FILE *f = mp_cli_report_on_stdout(format, report_path) ? stderr : stdout;
    if (format < 0) {
        mp_summary sum;
        if (mp_summary_compute(tr, &sum, &err) != MP_OK)
            return mp_report_error(&err);
        fprintf(f, "\n");
        mp_report_summary_text(f, tr, &sum, exact);
        mp_summary_free(&sum);
    } else {
        /* the full report of `memprof report`, from the trace in memory */
        mp_source *src = mp_source_of_trace(tr);
        if (!src) {
            fprintf(stderr, "memprof run: out of memory\n");
            return MP_EXIT_RUNTIME;
        }
        mp_report_opts o = {.exact = exact};
        bool to_stdout = !report_path || strcmp(report_path, "-") == 0;
        if (to_stdout && f == stdout)
            fprintf(f, "\n");
        fflush(stdout);
        int rc = mp_cli_write_report("run", src, (mp_report_format)format, report_path, &o);
        mp_source_close(src);
        if (rc != MP_EXIT_OK)
            return rc;
        if (!to_stdout)
            fprintf(f, "\nreport   %s\n", report_path);
    }
    size_t n = mp_trace_count(tr);
    fprintf(f, "recorder %zu events, %zu bytes per event (%.1f MiB of events, %.1f KiB of names)\n",
            n, sizeof(mp_event), (double)(n * sizeof(mp_event)) / (1 << 20),
            (double)mp_trace_meta_heap(tr) / 1024);
    if (trace_path) {
        if (mp_trace_save(tr, trace_path, &err) != MP_OK)
            return mp_report_error(&err);
        fprintf(f, "trace    %s (%zu events)\n", trace_path, mp_trace_count(tr));
    }
    return MP_EXIT_OK;
}
