/* memprof check's figures of its subject (see check_figures.h). */
#include "cli/check_figures.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/source.h"
#include "cli/call_orders.h"
#include "cli/cli.h"
#include "engine/model/zoo.h"
#include "engine/session.h"

/* ---- a model: load, prepare, run, recorded --------------------------------------------- */

static void dims_str(const mp_tensor *t, char *buf, size_t n)
{
    size_t o = 0;
    buf[0] = 0;
    for (int32_t d = 0; d < t->rank && o < n; d++)
        o += (size_t)snprintf(buf + o, n - o, "%s%d", d ? "," : "", (int)t->dims[d]);
}

/* The outputs copied out through the session into the caller's own buffers, recorded in the
 * trace as the caller's (trace.h MP_TRACE_CALLER_ID), as memprof run reads them: so that the
 * heap figure is the Heap peak memprof run prints. */
static int read_outputs(mp_session *s, mp_trace *tr)
{
    mp_error err = {0};
    for (int j = 0; j < mp_session_output_count(s); j++) {
        const mp_tensor *t = mp_session_output(s, j);
        mp_event ev = {.type = MP_EV_ALLOC, .bytes = t->bytes, .id = MP_TRACE_CALLER_ID + 1 + j,
                       .tensor = -1, .op = -1, .op_last = -1, .kind = MP_KIND_IO,
                       .align_log2 = 4};
        void *copy = malloc(t->bytes ? t->bytes : 1);
        if (!copy) {
            fprintf(stderr, "memprof check: out of memory for output '%s'\n", t->info->name);
            return MP_EXIT_RUNTIME;
        }
        mp_trace_add(tr, ev);
        mp_status st = mp_session_get_output(s, j, copy, t->bytes, &err);
        ev.type = MP_EV_FREE;
        ev.align_log2 = 0;
        mp_trace_add(tr, ev);
        free(copy);
        if (st != MP_OK)
            return mp_report_error(&err);
    }
    return MP_EXIT_OK;
}

/* Load, shape (one shape per input, before prepare), prepare, run and read the outputs as
 * memprof run does (cli/call_orders.c, the outputs into recorded buffers), note the input
 * shapes, then tear down: the teardown is part of the trace, as in memprof run; the
 * process's resident set is sampled into the trace after prepare, after the runs (paced:
 * mp_trace_rss_sample_run) and after the teardown (the rss figure). */
static int drive(const mp_check_args *a, const mp_session_options *so, const void *bytes,
                 size_t size, mp_baseline_input *ins, int *n_ins)
{
    mp_session *s = NULL;
    mp_shape_args *sp = calloc(1, sizeof *sp);
    mp_cli_inputs *in = calloc(1, sizeof *in);
    int rc = sp && in ? MP_EXIT_OK : MP_EXIT_RUNTIME;
    if (rc != MP_EXIT_OK)
        fprintf(stderr, "memprof check: out of memory\n");
    else
        rc = mp_cli_session_open(a->subject, bytes, size, so, &s, NULL);
    if (rc == MP_EXIT_OK)
        rc = mp_cli_collect_shapes(s, "check", (const char *const *)a->m.shapes, a->m.n_shapes,
                                   sp);
    int n_in = s ? mp_session_input_count(s) : 0;
    for (int k = 0; k < n_in && k < MP_CLI_MAX_INPUTS && rc == MP_EXIT_OK; k++)
        if (sp->n[k] > 1)
            rc = mp_usage_error("check", "--shape: input %d has several shapes; check takes "
                                         "one per input", k);
    if (rc == MP_EXIT_OK)
        rc = mp_cli_play_with(s, sp, MP_SHAPE_AT_PREPARE, a->m.runs, in,
                              &(mp_cli_play_opts){.rss_trace = so->trace, .keep_outputs = true});
    if (rc == MP_EXIT_OK)
        rc = read_outputs(s, so->trace);
    /* the input shapes the figures are of */
    *n_ins = 0;
    for (int k = 0; k < n_in && k < MP_CHECK_MAX_ARGS && rc == MP_EXIT_OK; k++) {
        const mp_tensor *t = mp_session_input(s, k);
        char d[256];
        dims_str(t, d, sizeof d);
        ins[k].name = strdup(t->info->name ? t->info->name : "");
        ins[k].dims = strdup(d);
        (*n_ins)++;
        if (!ins[k].name || !ins[k].dims) {
            fprintf(stderr, "memprof check: out of memory\n");
            rc = MP_EXIT_RUNTIME;
        }
    }
    mp_session_destroy(s);
    if (rc == MP_EXIT_OK)
        mp_trace_rss_sample(so->trace);
    if (in)
        mp_cli_inputs_release(in);
    free(in);
    free(sp);
    return rc;
}

static int figures_of_model(const mp_check_args *a, mp_baseline *out)
{
    mp_error err = {0};
    void *bytes = NULL;
    size_t size = 0;
    int rc = MP_EXIT_OK;
    char sha[65];
    if (strncmp(a->subject, "zoo:", 4) == 0) {
        if (mp_zoo_build(a->subject + 4, &bytes, &size, &err) != MP_OK)
            return mp_report_error(&err);
        mp_sha256_hex(bytes, size, sha);
    } else if (!mp_sha256_file(a->subject, sha)) {
        fprintf(stderr, "memprof check: cannot read %s: %s\n", a->subject, strerror(errno));
        return MP_EXIT_IO;
    }
    mp_trace *tr = mp_trace_create();
    mp_baseline_input ins[MP_CHECK_MAX_ARGS];
    int n_ins = 0;
    memset(ins, 0, sizeof ins);
    mp_session_options so = {.threads = (int)a->m.threads, .mode = a->m.mode,
                             .planner = a->m.planner, .trace = tr};
    if (tr && bytes) /* a zoo: model is built on the heap: heap in the figures, as in run */
        mp_trace_meta_mut(tr)->model_heap_bytes = (int64_t)size;
    bool oom = !tr; /* failures of this function's own allocations */
    rc = tr ? drive(a, &so, bytes, size, ins, &n_ins) : MP_EXIT_RUNTIME;
    if (rc == MP_EXIT_OK) {
        mp_source *src = mp_source_of_trace(tr);
        if (!src)
            oom = true;
        else if (mp_baseline_compute(src, out, &err) != MP_OK)
            rc = mp_report_error(&err);
        mp_source_close(src);
    }
    if (rc == MP_EXIT_OK && !oom && !mp_baseline_set_sha256(out, sha))
        oom = true;
    for (int k = 0; k < n_ins && rc == MP_EXIT_OK && !oom; k++)
        oom = !mp_baseline_add_input(out, ins[k].name, ins[k].dims);
    for (int k = 0; k < n_ins; k++) {
        free(ins[k].name);
        free(ins[k].dims);
    }
    if (oom) {
        fprintf(stderr, "memprof check: out of memory\n");
        rc = MP_EXIT_RUNTIME;
    }
    mp_trace_destroy(tr);
    free(bytes);
    return rc;
}

/* ---- the figures of the subject --------------------------------------------------------- */

int mp_check_figures(const mp_check_args *a, mp_baseline *out)
{
    mp_error err = {0};
    mp_file_kind k = strncmp(a->subject, "zoo:", 4) == 0 ? MP_FILE_MODEL
                                                          : mp_file_kind_of(a->subject);
    size_t len = strlen(a->subject);
    if (k == MP_FILE_UNKNOWN && len > 7 && strcmp(a->subject + len - 7, ".tflite") == 0)
        k = MP_FILE_MODEL; /* the loader says what is wrong with it */
    if (k != MP_FILE_MODEL && a->model_opts)
        return mp_usage_error("check", "--shape, --memory, --planner, --threads and --runs "
                                       "apply to a MODEL, and %s is not one", a->subject);
    switch (k) {
    case MP_FILE_UNREADABLE:
        fprintf(stderr, "memprof check: cannot read %s: %s\n", a->subject, strerror(errno));
        return MP_EXIT_IO;
    case MP_FILE_MODEL:
        return figures_of_model(a, out);
    case MP_FILE_TRACE: {
        mp_source *src = NULL;
        if (mp_source_open(a->subject, &src, &err) != MP_OK)
            return mp_report_error(&err);
        int rc = MP_EXIT_OK;
        if (mp_baseline_compute(src, out, &err) != MP_OK)
            rc = mp_report_error(&err);
        mp_source_close(src);
        return rc;
    }
    case MP_FILE_JSON:
        if (mp_baseline_read(a->subject, out, &err) != MP_OK)
            return mp_report_error(&err);
        return MP_EXIT_OK;
    default:
        fprintf(stderr, "memprof check: %s is not a .tflite model, a trace or a baseline\n",
                a->subject);
        return MP_EXIT_FORMAT;
    }
}

