/* memprof run: load a model, change shapes where in the call order the flags say, set
 * inputs (files or the reference formula), run it, and print output summaries, times and the
 * memory report of the recorded trace; optionally save the trace and write the outputs as
 * raw files plus a JSON index. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/bench_stats.h"
#include "cli/call_orders.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "cli/run_outputs.h"
#include "engine/memory/plan.h"
#include "engine/model/zoo.h"
#include "engine/session.h"
#include "cli/heap_probe.h"

#define RUN_OPTS (MP_OPT_SHAPE | MP_OPT_INPUT | MP_OPT_FILL | MP_OPT_SHAPE_AT | MP_OPT_MEMORY | \
                  MP_OPT_THREADS | MP_OPT_RUNS | MP_OPT_WARMUP | MP_OPT_PLANNER | MP_OPT_IN_PLACE)

static void help(void)
{
    printf("Usage: memprof run MODEL [options]\n\n"
           "Runs MODEL (a .tflite file or zoo:NAME), recording every allocation of the engine,\n"
           "and prints the outputs' summaries (top-5 classes for classifiers) and a memory\n"
           "report: time per phase, the heap peak per kind of memory and when it happened,\n"
           "the largest tensors alive then, allocations per run, static, dynamic and\n"
           "duplicated bytes, copies, and the heap the trace does not account for.\n"
           "Inputs come from raw files, one value (--fill), or else from the reference\n"
           "formula: element i of input k is b = (i*7 + 3 + 13*k) mod 256, as float32\n"
           "b/255 - 0.5, as uint8 b, as int8 and int16 b - 128, as int32 i mod 7, as bool\n"
           "b mod 2, as a string b's decimal text (\"3\", \"10\", ...).\n"
           "A string input's FILE is a TensorFlow Lite string buffer (int32 count, count + 1\n"
           "int32 offsets from its start, the bytes) when it starts with the input's element\n"
           "count as a little-endian int32 (checked: exit 4 if malformed), else UTF-8 text,\n"
           "one string per line; a rank-1 input's shape becomes [lines].\n\n"
           "Options:\n"
           "  --input NAME=FILE    raw little-endian bytes for input NAME (or its index)\n"
           "  --fill NAME=VALUE    every element of input NAME is VALUE: a number in its\n"
           "                       dtype's range (the stored integer of a quantized input),\n"
           "                       0/1/false/true for bool, text for a string; e.g. a\n"
           "                       sample rate: --fill 1=16000\n"
           "  --shape NAME=DIMS    shape of input NAME, e.g. input=1,160,160,3; repeat it for\n"
           "                       the same input to give several shapes (see --shape-at)\n"
           "  --shape-at WHEN      where in the call order shapes change:\n"
           "                         prepare   before prepare (call orders A, B; default)\n"
           "                         run       after prepare, before the first run (C); with\n"
           "                                   two shapes for an input, the first before\n"
           "                                   prepare and the second after it (E)\n"
           "                         each-run  before every run, cycling through the shapes (D)\n"
           "  --memory MODE        auto (default), static or dynamic (docs/memory.md)\n"
           "  --plan-at WHEN       prepare (default) or first-run: plan the arena at prepare,\n"
           "                       or, when an input's shape may still change, at the first\n"
           "                       run (no arena planned for shapes no run meets; the first\n"
           "                       run then also creates the operators)\n"
           "  --planner NAME       arena planner (default: %s; see the list below)\n"
           "  --io copy|bind       copy inputs in and outputs out (default), or run on the\n"
           "                       caller's buffers: inputs read and outputs written in\n"
           "                       place, no copy; an output that cannot be bound (shapes\n"
           "                       changed after prepare, a shape known only while\n"
           "                       running) is copied out, and a line says which and why\n"
           "  --trace FILE.json    save the trace (every event) as JSON\n"
           "  --format F           instead of the summary, the full report of 'memprof\n"
           "                       report' (text, json, svg, html, chrome); without -o it\n"
           "                       goes to standard output, and with a format other than\n"
           "                       text nothing else does (the other lines go to stderr)\n"
           "  -o, --output PATH    write that report there (text by default; '-': stdout)\n"
           "  --scratch WHERE      kernel scratch planned 'together' with the tensors in the\n"
           "                       arena (default) or 'separate' (one block, the largest)\n"
           "  --in-place on|off    on (default): as TensorFlow Lite, the output of a\n"
           "                       RESHAPE, SQUEEZE, EXPAND_DIMS or BITCAST takes its\n"
           "                       input's arena slot (no copy), and that of an ADD, SUB,\n"
           "                       MUL, DIV, SOFTMAX or DYNAMIC_UPDATE_SLICE the slot of\n"
           "                       an input nobody reads after it; off: every output a\n"
           "                       slot of its own\n"
           "  --record on|off      record the trace (default on; off measures its cost)\n"
           "  --exact              print exact byte counts next to the rounded ones\n"
           "  --output-dir DIR     write output_J.bin (raw little-endian) and outputs.json there\n"
           "  --threads N          worker threads (default 1)\n"
           "  -r, --runs N         timed runs (default 1); prints median, min and mean\n"
           "  -w, --warmup N       runs before them, recorded but not timed (default 0)\n"
           "                       (on a terminal, a progress line on stderr while they run)\n"
           "  --keep-stale-arena   debug: after a shape change keep the old arena and give\n"
           "                       tensors dynamic buffers (Samsung ONE's behaviour), to see\n"
           "                       duplicated bytes\n"
           "  -h, --help           show this help\n"
           "Options take their value as --runs 3 or --runs=3; '--' ends the options.\n\n"
           "Exit codes: 0 ok; 2 usage; 3 a file cannot be read or written; 4 malformed\n"
           "model or input file; 5 unsupported operator or dtype; 6 impossible shape;\n"
           "7 runtime failure (out of memory, backend).\n\n"
           "Examples:\n"
           "  memprof run zoo:mobilenet_v2 --threads 2 --runs 20 --warmup 3\n"
           "  memprof run model.tflite --shape input_1=1,64,64,3 --shape-at run --runs 5\n"
           "  memprof run zoo:mnist_mlp --format json > report.json\n\n"
           "More: docs/run.md and docs/memory.md in memprof's sources.\n",
           mp_planner_default()->name);
    printf("\nPlanners:\n");
    for (const mp_planner *const *p = mp_planner_list(); *p; p++)
        printf("  %-10s %s\n", (*p)->name, (*p)->about);
}

typedef struct run_args {
    const char *model, *outdir, *trace_path;
    mp_model_opts m; /* --input, --shape, --shape-at, --memory, --threads, --runs, --warmup */
    bool bind, record, exact, keep_stale, scratch_separate;
    mp_plan_at plan_at;      /* --plan-at */
    int format;              /* mp_report_format; -1 = the run's own summary */
    const char *report_path; /* -o */
} run_args;

enum { O_IO = 1, O_RECORD, O_FORMAT, O_SCRATCH, O_PLAN_AT };

/* One of two words: false or true into *out, or the usage error. */
static int pick(const char *o, const char *v, const char *no, const char *yes, bool *out)
{
    const char *const words[] = {no, yes, NULL};
    int k = *out;
    int rc = mp_opt_choice("run", o, v, words, &k);
    *out = k == 1;
    return rc;
}

static int take(void *ctx, int id, const char *v)
{
    run_args *a = ctx;
    switch (id) {
    case O_IO: return pick("--io", v, "copy", "bind", &a->bind);
    case O_PLAN_AT: return mp_cli_plan_at_opt("run", v, &a->plan_at);
    case O_RECORD: {
        bool off = !a->record;
        int rc = pick("--record", v, "on", "off", &off);
        a->record = !off;
        return rc;
    }
    case O_FORMAT: {
        int f = mp_report_format_parse(v);
        if (f < 0)
            return mp_usage_error("run", "--format takes text, json, svg, html or chrome, "
                                         "got '%s'", v);
        a->format = f;
        return 0;
    }
    default: return pick("--scratch", v, "together", "separate", &a->scratch_separate);
    }
}

static int parse(int argc, char **argv, run_args *a)
{
    static const mp_opt opts[] = {
        {"io", 0, MP_ARG_VALUE, 0, O_IO},
        {"plan-at", 0, MP_ARG_VALUE, 0, O_PLAN_AT},
        {"record", 0, MP_ARG_VALUE, 0, O_RECORD},
        {"trace", 0, MP_ARG_STRING, offsetof(run_args, trace_path), 0},
        {"format", 0, MP_ARG_VALUE, 0, O_FORMAT},
        {"output", 'o', MP_ARG_STRING, offsetof(run_args, report_path), 0},
        {"scratch", 0, MP_ARG_VALUE, 0, O_SCRATCH},
        {"output-dir", 0, MP_ARG_STRING, offsetof(run_args, outdir), 0},
        {"exact", 0, MP_ARG_FLAG, offsetof(run_args, exact), 0},
        {"keep-stale-arena", 0, MP_ARG_FLAG, offsetof(run_args, keep_stale), 0},
        {0}};
    memset(a, 0, sizeof *a);
    a->m.threads = 1;
    a->m.runs = 1;
    a->record = true;
    a->format = -1;
    int rc = mp_opts_parse(&(mp_cmd_spec){.cmd = "run", .help = help, .opts = opts,
                                          .take = take, .ctx = a, .model = RUN_OPTS,
                                          .m = &a->m, .pos = &a->model, .max_pos = 1,
                                          .missing = "missing MODEL"},
                           argc, argv, NULL);
    if (rc != 0)
        return rc;
    if (a->trace_path && !a->record)
        return mp_usage_error("run", "--trace needs --record on");
    if ((a->format >= 0 || a->report_path) && !a->record)
        return mp_usage_error("run", "--format and -o need --record on");
    if (a->report_path && a->format < 0)
        a->format = MP_FMT_TEXT;
    mp_cli_files f = {.out_dir = a->outdir};
    mp_cli_files_in(&f, a->model);
    mp_cli_files_inputs(&f, a->m.inputs, a->m.n_inputs);
    mp_cli_files_out(&f, a->trace_path);
    mp_cli_files_out(&f, a->report_path);
    return mp_cli_files_check("run", &f);
}

static int collect_shapes(mp_session *s, const run_args *a, mp_shape_args *sp)
{
    int rc = mp_cli_collect_shapes(s, "run", (const char *const *)a->m.shapes, a->m.n_shapes, sp);
    return rc == MP_EXIT_OK ? mp_shape_at_check("run", sp, a->m.at) : rc;
}

/* Load, shape, prepare and run as the flags say (the shared player); times[] gets the
 * timed runs. */
static int drive(mp_session *s, mp_trace *tr, const run_args *a, mp_shape_args *sp,
                 const void *zoo_bytes, size_t zoo_size, mp_cli_inputs *in, uint64_t *times,
                 uint64_t *t_load, uint64_t *t_prepare, mp_progress *pg)
{
    mp_error err = {0};
    uint64_t t0 = mp_now_ns();
    mp_status st = zoo_bytes ? mp_session_load_memory(s, zoo_bytes, zoo_size, a->model, &err)
                             : mp_session_load(s, a->model, &err);
    if (st != MP_OK)
        return mp_report_error(&err);
    *t_load = mp_now_ns() - t0;
    mp_trace_rss_sample(tr); /* RSS after each phase, beside the recorded bytes */
    int rc = collect_shapes(s, a, sp);
    if (rc == MP_EXIT_OK)
        rc = mp_cli_inputs_files(s, "run", (const char *const *)a->m.inputs, a->m.n_inputs, in);
    if (rc == MP_EXIT_OK)
        rc = mp_cli_inputs_fills(s, "run", (const char *const *)a->m.fills, a->m.n_fills, in);
    if (rc != MP_EXIT_OK)
        return rc;
    /* the outputs are read (and copied where not bound) by print_outputs */
    mp_cli_play_opts o = {.rss_trace = tr, .warmup = a->m.warmup, .times = times,
                          .keep_outputs = true, .progress = pg};
    pg->total = a->m.warmup + a->m.runs;
    rc = mp_cli_play_with(s, sp, a->m.at, a->m.warmup + a->m.runs, in, &o);
    mp_progress_end(pg);
    if (rc == MP_EXIT_USAGE)
        mp_cli_inputs_hint(s, "run", in);
    *t_prepare = o.prepare_ns;
    return rc;
}

int mp_cmd_run(int argc, char **argv)
{
    run_args a;
    int rc = parse(argc, argv, &a);
    if (rc != 0)
        return rc < 0 ? MP_EXIT_OK : rc;

    mp_error err = {0};
    mp_session *s = NULL;
    mp_trace *tr = a.record ? mp_trace_create() : NULL;
    uint64_t *times = calloc((size_t)a.m.runs, sizeof(uint64_t));
    mp_cli_inputs *in = calloc(1, sizeof *in);
    mp_shape_args *sp = calloc(1, sizeof *sp);
    void *zoo_bytes = NULL;
    size_t zoo_size = 0;
    if (!times || !in || !sp || (a.record && !tr)) {
        fprintf(stderr, "memprof: out of memory\n");
        rc = MP_EXIT_RUNTIME;
        goto done;
    }
    mp_session_options so = {.threads = (int)a.m.threads, .mode = a.m.mode,
                             .planner = a.m.planner, .trace = tr, .keep_stale_arena = a.keep_stale,
                             .scratch_separate = a.scratch_separate, .no_in_place = a.m.no_in_place, .plan_at = a.plan_at};
    /* a built-in model is built before the measured window, as a file exists before it */
    if (strncmp(a.model, "zoo:", 4) == 0 &&
        mp_zoo_build(a.model + 4, &zoo_bytes, &zoo_size, &err) != MP_OK) {
        rc = mp_report_error(&err);
        goto done;
    }
    /* the heap measurement window: session creation to teardown */
    uint64_t heap_before = mp_heap_probe_live();
    mp_heap_probe_reset_peak();
    if (mp_session_create(&so, &s, &err) != MP_OK) {
        rc = mp_report_error(&err);
        goto done;
    }
    uint64_t t_load = 0, t_prepare = 0;
    if (in)
        in->bind = a.bind;
    mp_progress pg;
    mp_progress_begin(&pg);
    rc = drive(s, tr, &a, sp, zoo_bytes, zoo_size, in, times, &t_load, &t_prepare, &pg);
    mp_progress_end(&pg);
    /* with a document on stdout (--format json without -o) these lines go to stderr */
    FILE *info = mp_cli_report_on_stdout(a.format, a.report_path) ? stderr : stdout;
    if (rc == MP_EXIT_OK)
        rc = mp_cli_print_outputs(info, s, tr, in);
    if (rc == MP_EXIT_OK) {
        mp_cli_print_times(info, times, a.m.runs, a.m.warmup, a.m.threads, t_load, t_prepare);
        if (a.outdir)
            rc = mp_cli_write_outputs(s, tr, a.outdir);
    }
    uint64_t slack = mp_mem_get_stats(mp_session_mem(s))->slack_at_peak;
    mp_session_destroy(s);
    s = NULL;
    uint64_t heap_peak = mp_heap_probe_peak() - heap_before;
    if (rc != MP_EXIT_OK || !tr)
        goto done;
    if (zoo_bytes) /* the model is the caller's heap, not a mapped file (summary.h) */
        mp_trace_meta_mut(tr)->model_heap_bytes = (int64_t)zoo_size;
    if (mp_heap_probe_available()) {
        mp_trace_meta *meta = mp_trace_meta_mut(tr);
        /* a built-in model's bytes are the caller's heap, live through the whole window */
        meta->process_heap_peak = (int64_t)(heap_peak + zoo_size);
        meta->process_heap_base = (int64_t)(heap_before - zoo_size);
        /* the allocator's headers and alignment room at the peak, and the recorder's
         * names and tables: heap the process holds that is not the engine's */
        meta->allocator_overhead = (int64_t)(slack + mp_trace_meta_heap(tr));
    }
    rc = mp_cli_run_report(tr, a.format, a.report_path, a.exact, a.trace_path);
done:
    mp_session_destroy(s);
    mp_trace_destroy(tr);
    if (in)
        mp_cli_inputs_release(in);
    free(in);
    free(sp);
    free(times);
    free(zoo_bytes);
    return rc;
}
