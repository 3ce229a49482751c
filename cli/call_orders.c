/* The call orders A-E as shape changes at three points, and the caller's input buffers:
 * see call_orders.h. */
#include "cli/call_orders.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cli/bench_stats.h"
#include "engine/kernels/strings.h"
#include "engine/model/reference_input.h"
#include "engine/model/zoo.h"

int mp_shape_at_parse(const char *s)
{
    if (strcmp(s, "prepare") == 0)
        return MP_SHAPE_AT_PREPARE;
    if (strcmp(s, "run") == 0)
        return MP_SHAPE_AT_RUN;
    if (strcmp(s, "each-run") == 0)
        return MP_SHAPE_AT_EACH_RUN;
    return -1;
}

const char *mp_shape_at_name(mp_shape_at at)
{
    return at == MP_SHAPE_AT_RUN ? "run" : at == MP_SHAPE_AT_EACH_RUN ? "each-run" : "prepare";
}

int mp_cli_plan_at_opt(const char *cmd, const char *v, mp_plan_at *out)
{
    int p = mp_plan_at_parse(v);
    if (p <= MP_PLAN_AT_DEFAULT)
        return mp_usage_error(cmd, "--plan-at takes prepare or first-run, got '%s'", v);
    *out = (mp_plan_at)p;
    return 0;
}

mp_status mp_cli_timed_run(mp_session *s, uint64_t *ns, mp_error *err)
{
    mp_status st = mp_session_run(s, err);
    *ns = mp_session_last_run_ns(s);
    return st;
}

int mp_cli_model_bytes(const char *model, void **bytes, size_t *size)
{
    *bytes = NULL;
    *size = 0;
    mp_error err = {0};
    if (strncmp(model, "zoo:", 4) == 0 && mp_zoo_build(model + 4, bytes, size, &err) != MP_OK)
        return mp_report_error(&err);
    return MP_EXIT_OK;
}

int mp_cli_session_open(const char *model, const void *bytes, size_t size,
                        const mp_session_options *so, mp_session **out, uint64_t *load_ns)
{
    mp_error err = {0};
    *out = NULL;
    mp_session *s = NULL;
    if (mp_session_create(so, &s, &err) != MP_OK)
        return mp_report_error(&err);
    uint64_t t0 = mp_now_ns();
    mp_status st = bytes ? mp_session_load_memory(s, bytes, size, model, &err)
                         : mp_session_load(s, model, &err);
    if (load_ns)
        *load_ns = mp_now_ns() - t0;
    if (st != MP_OK) {
        mp_session_destroy(s);
        return mp_report_error(&err);
    }
    *out = s;
    return MP_EXIT_OK;
}

int mp_shape_at_check(const char *cmd, const mp_shape_args *sp, mp_shape_at at)
{
    for (int k = 0; k < MP_CLI_MAX_INPUTS; k++) {
        if (at == MP_SHAPE_AT_PREPARE && sp->n[k] > 1)
            return mp_usage_error(cmd, "--shape: input %d has several shapes; they need "
                                       "--shape-at run or each-run", k);
        if (at == MP_SHAPE_AT_RUN && sp->n[k] > 2)
            return mp_usage_error(cmd, "--shape-at run takes at most two shapes per input "
                                       "(before and after prepare)");
    }
    return MP_EXIT_OK;
}

static int n_inputs(const mp_session *s)
{
    int n = mp_session_input_count(s);
    return n < MP_CLI_MAX_INPUTS ? n : MP_CLI_MAX_INPUTS;
}

int mp_shapes_before_prepare(mp_session *s, const mp_shape_args *sp, mp_shape_at at)
{
    int rc = MP_EXIT_OK;
    for (int k = 0; k < n_inputs(s) && rc == MP_EXIT_OK; k++)
        if (sp->n[k] && (at == MP_SHAPE_AT_PREPARE || (at == MP_SHAPE_AT_RUN && sp->n[k] >= 2)))
            rc = mp_cli_apply_shape(s, sp, k, 0);
    return rc;
}

int mp_shapes_after_prepare(mp_session *s, const mp_shape_args *sp, mp_shape_at at)
{
    int rc = MP_EXIT_OK;
    for (int k = 0; k < n_inputs(s) && rc == MP_EXIT_OK; k++)
        if (sp->n[k] && at == MP_SHAPE_AT_RUN)
            rc = mp_cli_apply_shape(s, sp, k, sp->n[k] - 1);
    return rc;
}

int mp_shapes_before_run(mp_session *s, const mp_shape_args *sp, mp_shape_at at, long r)
{
    int rc = MP_EXIT_OK;
    for (int k = 0; k < n_inputs(s) && rc == MP_EXIT_OK; k++)
        if (sp->n[k] && at == MP_SHAPE_AT_EACH_RUN)
            rc = mp_cli_apply_shape(s, sp, k, (int)(r % sp->n[k]));
    return rc;
}

int mp_cli_inputs_fills(mp_session *s, const char *cmd, const char *const *specs, int n,
                        mp_cli_inputs *in)
{
    for (int i = 0; i < n; i++) {
        const char *value;
        int idx = mp_cli_resolve_input(s, cmd, specs[i], &value, "--fill");
        if (idx < 0 || idx >= MP_CLI_MAX_INPUTS)
            return MP_EXIT_USAGE;
        const mp_tensor *t = mp_session_input(s, idx);
        char why[160];
        if (in->files[idx])
            return mp_usage_error(cmd, "input '%s' is given both --input and --fill",
                                  t->info->name);
        if (!mp_fill_parse(t->dtype, value, &in->fill[idx], why, sizeof why))
            return mp_usage_error(cmd, "--fill for input '%s' (%s): %s", t->info->name,
                                  mp_dtype_name(t->dtype), why);
        in->has_fill[idx] = true;
    }
    return MP_EXIT_OK;
}

void mp_cli_inputs_hint(mp_session *s, const char *cmd, const mp_cli_inputs *in)
{
    int shown = 0;
    for (int k = 0; k < n_inputs(s); k++) {
        if (in->files[k] || in->has_fill[k])
            continue;
        if (shown++ == 0)
            fprintf(stderr, "memprof %s: note: the reference formula gave the values of", cmd);
        fprintf(stderr, "%s '%s'", shown > 1 ? "," : "", mp_session_input(s, k)->info->name);
    }
    if (shown)
        fprintf(stderr, " (see --help); give an input's values with --fill NAME=VALUE or "
                        "--input NAME=FILE\n");
}

int mp_cli_inputs_files(mp_session *s, const char *cmd, const char *const *specs, int n,
                        mp_cli_inputs *in)
{
    for (int i = 0; i < n; i++) {
        const char *file;
        int idx = mp_cli_resolve_input(s, cmd, specs[i], &file, "--input");
        if (idx < 0 || idx >= MP_CLI_MAX_INPUTS)
            return MP_EXIT_USAGE;
        in->files[idx] = file;
    }
    return MP_EXIT_OK;
}

static bool buf_reserve(mp_caller_buf *b, size_t bytes)
{
    size_t need = bytes + MP_INPUT_SLACK;
    if (b->p && b->cap >= need)
        return true;
    if (b->p)
        munmap(b->p, b->cap);
    b->p = mmap(NULL, need, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (b->p == MAP_FAILED) {
        b->p = NULL;
        b->cap = 0;
        return false;
    }
    b->cap = need;
    b->filled = SIZE_MAX;
    return true;
}

/* The bytes of file into b (mapped), in *size. */
static int read_whole(const char *file, const char *name, mp_caller_buf *b, size_t *size)
{
    FILE *f = NULL;
    mp_error err = {0};
    if (mp_file_in_open(file, &f, &err) != MP_OK)
        return mp_report_error(&err);
    long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (n < 0 || fseek(f, 0, SEEK_SET) != 0 || (unsigned long)n > INT32_MAX) {
        fclose(f);
        fprintf(stderr, "memprof: %s: cannot read string input '%s' (not a regular file under "
                        "2 GiB)\n", file, name);
        return MP_EXIT_FORMAT;
    }
    bool ok = buf_reserve(b, (size_t)n) && fread(b->p, 1, (size_t)n, f) == (size_t)n;
    fclose(f);
    if (!ok) {
        fprintf(stderr, "memprof: %s: cannot read string input '%s'\n", file, name);
        return MP_EXIT_RUNTIME;
    }
    *size = (size_t)n;
    return MP_EXIT_OK;
}

/* UTF-8 text of `size` bytes, one string per line (a last line without its newline too;
 * a "\r" before a newline dropped), as a string buffer in b. */
static int lines_to_strings(const char *text, size_t size, const char *name, mp_caller_buf *b,
                            size_t *count)
{
    size_t n = 0, chars = 0, bytes;
    for (size_t i = 0; i < size; n++) {
        const char *nl = memchr(text + i, '\n', size - i);
        size_t e = nl ? (size_t)(nl - text) : size, len = e - i;
        chars += len > 0 && text[e - 1] == '\r' && nl ? len - 1 : len;
        i = nl ? e + 1 : size;
    }
    if (!mp_str_bytes(n, chars, &bytes) || !buf_reserve(b, bytes)) {
        fprintf(stderr, "memprof: input '%s': %zu lines of text do not fit a string buffer\n",
                name, n);
        return MP_EXIT_RUNTIME;
    }
    mp_str_writer w;
    mp_str_begin(&w, b->p, bytes, (int32_t)n);
    for (size_t i = 0; i < size;) {
        const char *nl = memchr(text + i, '\n', size - i);
        size_t e = nl ? (size_t)(nl - text) : size, len = e - i;
        if (len > 0 && text[e - 1] == '\r' && nl)
            len--;
        mp_str_append(&w, text + i, len);
        mp_str_next(&w);
        i = nl ? e + 1 : size;
    }
    b->strings = bytes;
    *count = n;
    return MP_EXIT_OK;
}

/* String input k: its file (a string buffer when it starts with the input's element count
 * as an int32, else lines of text, setting a rank-1 input's shape to their count) or the
 * reference strings. */
static int fill_strings(mp_session *s, mp_cli_inputs *in, int k)
{
    const mp_tensor *t = mp_session_input(s, k);
    mp_caller_buf *b = &in->buf[k];
    size_t elems = mp_tensor_elements(t);
    if (b->p && b->filled == elems)
        return MP_EXIT_OK;
    const char *file = in->files[k];
    if (!file) {
        const mp_fill_value *v = in->has_fill[k] ? &in->fill[k] : NULL;
        size_t need = v ? mp_fill_strings(NULL, 0, elems, v) : mp_reference_strings(NULL, 0, elems, k);
        if (need == 0 || !buf_reserve(b, need)) {
            fprintf(stderr, "memprof: out of memory for input '%s'\n", t->info->name);
            return MP_EXIT_RUNTIME;
        }
        if (v)
            mp_fill_strings(b->p, need, elems, v);
        else
            mp_reference_strings(b->p, need, elems, k);
        b->strings = need;
        b->filled = elems;
        return MP_EXIT_OK;
    }
    mp_caller_buf raw = {0};
    size_t size = 0, count = elems;
    int rc = read_whole(file, t->info->name, &raw, &size);
    int32_t head = -1;
    if (rc == MP_EXIT_OK && size >= 4)
        memcpy(&head, raw.p, 4);
    /* text never starts with the NUL bytes of a small little-endian count: a file that starts
     * with the input's count is a string buffer, checked by the session */
    if (rc == MP_EXIT_OK && head >= 0 && (size_t)head == elems) {
        if (buf_reserve(b, size)) {
            memcpy(b->p, raw.p, size);
            b->strings = size;
        } else {
            rc = MP_EXIT_RUNTIME;
        }
    } else if (rc == MP_EXIT_OK) {
        rc = lines_to_strings(raw.p, size, t->info->name, b, &count);
    }
    if (raw.p)
        munmap(raw.p, raw.cap);
    if (rc != MP_EXIT_OK)
        return rc;
    if (count != elems) {
        mp_error err = {0};
        int32_t d = (int32_t)count;
        if (t->rank != 1 || count > INT32_MAX) {
            char sh[128];
            fprintf(stderr, "memprof: %s: input '%s' %s takes %zu strings; the file has %zu "
                            "lines\n", file, t->info->name,
                    mp_shape_str(t->rank, t->dims, sh, sizeof sh), elems, count);
            return MP_EXIT_FORMAT;
        }
        if (mp_session_set_input_shape(s, k, 1, &d, &err) != MP_OK)
            return mp_report_error(&err);
    }
    b->filled = count;
    return MP_EXIT_OK;
}

int mp_cli_inputs_fill(mp_session *s, mp_cli_inputs *in, int k)
{
    if (mp_session_input(s, k)->dtype == MP_DT_STRING)
        return fill_strings(s, in, k);
    const mp_tensor *t = mp_session_input(s, k);
    mp_caller_buf *b = &in->buf[k];
    if (b->p && b->filled == t->bytes)
        return MP_EXIT_OK;
    if (!buf_reserve(b, t->bytes)) {
        fprintf(stderr, "memprof: out of memory for input '%s'\n", t->info->name);
        return MP_EXIT_RUNTIME;
    }
    const char *file = in->files[k];
    if (file) {
        FILE *f = NULL;
        mp_error err = {0};
        if (mp_file_in_open(file, &f, &err) != MP_OK)
            return mp_report_error(&err);
        size_t got = fread(b->p, 1, t->bytes, f);
        int extra = fgetc(f);
        fclose(f);
        if (got != t->bytes || extra != EOF) {
            char sh[128];
            fprintf(stderr,
                    "memprof: %s: input '%s' %s %s needs exactly %zu bytes; the file has %s\n",
                    file, t->info->name, mp_dtype_name(t->dtype),
                    mp_shape_str(t->rank, t->dims, sh, sizeof sh), t->bytes,
                    got < t->bytes ? "fewer" : "more");
            return MP_EXIT_FORMAT;
        }
    } else if (in->has_fill[k]) {
        mp_fill_apply(b->p, mp_tensor_elements(t), &in->fill[k]);
    } else if (!mp_reference_input(b->p, t->dtype, mp_tensor_elements(t), k)) {
        fprintf(stderr, "memprof: input '%s' has dtype %s, which the reference formula does "
                        "not fill: give it with --input or --fill (and check or view "
                        "the trace of --trace)\n", t->info->name, mp_dtype_name(t->dtype));
        return MP_EXIT_USAGE;
    }
    b->filled = t->bytes;
    return MP_EXIT_OK;
}

/* A stand-in for the outputs' buffers before their sizes are known: binding before prepare
 * keeps the bound outputs out of the first plan; feeding points them at real buffers. */
static char out_placeholder[64] __attribute__((aligned(64)));

/* Bind every output that may be bound: to the placeholder, or to a buffer of its size.
 * With the placeholder, the inputs too: bound after prepare, they would leave the arena
 * planned at prepare (with them inside) to be freed unused and planned again. */
static int bind_outputs(mp_session *s, mp_cli_inputs *in, bool placeholder)
{
    mp_error err = {0};
    for (int k = 0; placeholder && k < n_inputs(s); k++)
        if (mp_session_set_input_buffer(s, k, out_placeholder, 0, &err) != MP_OK)
            return mp_report_error(&err);
    const mp_model *m = mp_session_model(s);
    if (!placeholder && !in->outputs_unbound && mp_session_needs_prepare(s))
        in->outputs_unbound = true;
    for (int j = 0; j < mp_session_output_count(s) && j < MP_CLI_MAX_INPUTS; j++) {
        bool is_input = false;
        for (int32_t i = 0; i < m->n_inputs; i++)
            is_input |= m->inputs[i] == m->outputs[j];
        if (is_input)
            continue;
        const mp_tensor *t = mp_session_output(s, j);
        if (mp_session_output_deferred(s, j)) {
            /* known to be data-dependent only since prepare: bound to the placeholder
             * before it, left to the engine now (the run re-plans once without it) */
            if (!placeholder && t->data == out_placeholder &&
                mp_session_set_output_buffer(s, j, NULL, 0, &err) != MP_OK)
                return mp_report_error(&err);
            continue;
        }
        void *p = out_placeholder;
        size_t cap = 0;
        if (!placeholder && in->outputs_unbound) {
            p = NULL; /* unbinding an output already planned anew changes nothing more */
        } else if (!placeholder) {
            if (!buf_reserve(&in->out[j], t->bytes)) {
                fprintf(stderr, "memprof: out of memory for output '%s'\n", t->info->name);
                return MP_EXIT_RUNTIME;
            }
            p = in->out[j].p;
            cap = in->out[j].cap;
        }
        if (mp_session_set_output_buffer(s, j, p, cap, &err) != MP_OK)
            return mp_report_error(&err);
    }
    return MP_EXIT_OK;
}

int mp_cli_inputs_feed(mp_session *s, mp_cli_inputs *in)
{
    mp_error err = {0};
    for (int k = 0; k < n_inputs(s); k++) {
        int rc = mp_cli_inputs_fill(s, in, k);
        if (rc != MP_EXIT_OK)
            return rc;
        const mp_tensor *t = mp_session_input(s, k);
        size_t bytes = t->dtype == MP_DT_STRING ? in->buf[k].strings : t->bytes;
        mp_status st = in->bind ? mp_session_set_input_buffer(s, k, in->buf[k].p, in->buf[k].cap, &err)
                                : mp_session_set_input(s, k, in->buf[k].p, bytes, &err);
        if (st != MP_OK)
            return mp_report_error(&err);
    }
    return in->bind ? bind_outputs(s, in, false) : MP_EXIT_OK;
}

void mp_cli_inputs_release(mp_cli_inputs *in)
{
    for (int k = 0; k < MP_CLI_MAX_INPUTS; k++) {
        if (in->buf[k].p) {
            munmap(in->buf[k].p, in->buf[k].cap);
            in->buf[k].p = NULL;
        }
        if (in->out[k].p) {
            munmap(in->out[k].p, in->out[k].cap);
            in->out[k].p = NULL;
        }
    }
}

int mp_cli_play(mp_session *s, const mp_shape_args *sp, mp_shape_at at, long runs,
                mp_cli_inputs *in)
{
    return mp_cli_play_with(s, sp, at, runs, in, NULL);
}

int mp_cli_play_with(mp_session *s, const mp_shape_args *sp, mp_shape_at at, long runs,
                     mp_cli_inputs *in, mp_cli_play_opts *o)
{
    mp_cli_play_opts none = {0};
    if (!o)
        o = &none;
    mp_error err = {0};
    int rc = mp_shapes_before_prepare(s, sp, at); /* A/B's shapes, and E's first one */
    if (rc == MP_EXIT_OK && in->bind)
        rc = bind_outputs(s, in, true);
    if (rc != MP_EXIT_OK)
        return rc;
    uint64_t t0 = mp_now_ns();
    if (mp_session_prepare(s, &err) != MP_OK)
        return mp_report_error(&err);
    o->prepare_ns = mp_now_ns() - t0;
    mp_trace_rss_sample(o->rss_trace);
    rc = mp_shapes_after_prepare(s, sp, at); /* C's shape, E's second one */
    uint64_t last_rss = 0;
    for (long r = 0; r < runs && rc == MP_EXIT_OK; r++) {
        rc = mp_shapes_before_run(s, sp, at, r); /* D */
        if (rc == MP_EXIT_OK)
            rc = mp_cli_inputs_feed(s, in);
        if (rc != MP_EXIT_OK)
            break;
        uint64_t dt = 0;
        if (mp_cli_timed_run(s, &dt, &err) != MP_OK)
            return mp_report_error(&err);
        if (o->times && r >= o->warmup)
            o->times[r - o->warmup] = dt;
        mp_trace_rss_sample_run(o->rss_trace, r, runs, &last_rss);
        if (o->progress)
            mp_progress_step(o->progress, r + 1, "run %ld of %ld", r + 1, runs);
    }
    if (o->keep_outputs || (in->bind && !in->outputs_unbound)) /* already in the caller's buffers */
        return rc;
    for (int j = 0; j < mp_session_output_count(s) && rc == MP_EXIT_OK; j++) {
        const mp_tensor *t = mp_session_output(s, j);
        void *copy = malloc(t->bytes ? t->bytes : 1);
        if (!copy) {
            fprintf(stderr, "memprof: out of memory for output '%s'\n", t->info->name);
            return MP_EXIT_RUNTIME;
        }
        if (mp_session_get_output(s, j, copy, t->bytes, &err) != MP_OK)
            rc = mp_report_error(&err);
        free(copy);
    }
    return rc;
}
