/* memprof pipeline: run models as a chain (each model's outputs feeding the next model's
 * inputs, the caller feeding model 1's inputs and the later models' inputs no output feeds),
 * copying or binding at every boundary, and report the copies, the arena(s) and the chain's
 * memory from one trace. The driver is cli/pipeline_driver.c, the report
 * reports/pipeline_report.c. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/source.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "cli/bench_stats.h"
#include "cli/pipeline_driver.h"
#include "cli/run_outputs.h"
#include "engine/memory/plan.h"

#define PIPE_OPTS (MP_OPT_SHAPE | MP_OPT_INPUT | MP_OPT_FILL | MP_OPT_SHAPE_AT | MP_OPT_MEMORY | \
                   MP_OPT_THREADS | MP_OPT_RUNS | MP_OPT_WARMUP | MP_OPT_PLANNER)

static void help(void)
{
    printf("Usage: memprof pipeline MODEL_A MODEL_B [MODEL_C ...] [options]\n\n"
           "Runs the models (.tflite files or zoo:NAME) one after another as a chain: each\n"
           "model's outputs feed the next model's inputs, by position unless --connect says\n"
           "otherwise. The chain's inputs are model 1's and every input of a later model\n"
           "that no output feeds (past the outputs of the model before it, or named by\n"
           "--chain-input): the caller feeds them all, a later model's as K.NAME in\n"
           "--input, --fill and --shape. Every boundary is an edge: the caller's buffers to\n"
           "the chain's inputs, each model's outputs to the inputs they feed, the last\n"
           "model's outputs to the caller. Under --io copy each edge copies as a runtime\n"
           "that always copies inputs in and outputs out does (a chain of N models: 2 x N\n"
           "copies per run); under --io bind a model writes its outputs straight into the\n"
           "buffer the next model reads, and the chain's inputs and last outputs are the\n"
           "caller's buffers: no copy, unless\n"
           "an edge cannot be bound (other dtypes or quantization: converted; other shapes;\n"
           "a caller's buffer misaligned or without XNNPACK's slack; an output whose shape\n"
           "is known only while running; an output that is also an input; an input its\n"
           "model writes in place), in which case it copies once and the report says\n"
           "which edge and why. The report lists every edge with its copies and bytes per\n"
           "run, the arena(s), the heap peak across the chain and per model (one trace\n"
           "records every model), and the chain's times.\n\n"
           "Options:\n"
           "  --connect A.OUT=B.IN  feed input IN of model B from output OUT of model A\n"
           "                       (models numbered from 1 in the order given, A before B;\n"
           "                       OUT and IN a name or an index); repeatable. An output\n"
           "                       may feed several later models (fan-out): under copy it\n"
           "                       is copied out once per run (counted on its first edge)\n"
           "                       and into each reader; under bind every reader is bound\n"
           "                       to the one buffer it is written to, a reader that cannot\n"
           "                       be copying on its own\n"
           "  --chain-input K.IN   input IN of model K (a name or index) is a chain input,\n"
           "                       fed by the caller, even where model K-1's outputs would\n"
           "                       feed it by position; repeatable. An input no output feeds\n"
           "                       is one without it\n"
           "  --io copy|bind       every edge (default copy)\n"
           "  --io E=copy|bind     edge E only (numbered as the report lists them)\n"
           "  --share-arena        plan one arena for the whole chain (the models never run\n"
           "                       at once; a buffer between models lives until its last\n"
           "                       reader): reported against one arena per model and the\n"
           "                       chain's live-set lower bound\n"
           "  --shape NAME=DIMS    shape of chain input NAME (model 1's input NAME, or\n"
           "                       K.NAME: model K's input NAME, a chain input); the chain\n"
           "                       follows it\n"
           "  --shape-at WHEN      prepare (default), run or each-run (see memprof run)\n"
           "  --input NAME=FILE    raw bytes for chain input NAME (NAME or K.NAME as in\n"
           "                       --shape; default: the reference formula of memprof run,\n"
           "                       as memprof run MODEL_K would fill it)\n"
           "  --fill NAME=VALUE    every element of chain input NAME is VALUE (see memprof\n"
           "                       run)\n"
           "  --output-dir DIR     write the chain's outputs (the last model's) as memprof\n"
           "                       run does: output_J.bin and outputs.json\n"
           "  --memory MODE        auto (default), static or dynamic, for every model\n"
           "  --planner NAME       arena planner (default: %s)\n"
           "  --threads N          worker threads per model (default 1)\n"
           "  -r, --runs N         timed runs of the chain (default 1)\n"
           "  -w, --warmup N       runs before them, recorded but not timed (default 0)\n"
           "  --trace FILE.json    save the chain's trace (every model's events, with the\n"
           "                       table of which model each belongs to)\n"
           "  --format F           also the chain's trace as 'memprof report' would write it\n"
           "                       (text, json, svg, html, chrome): to -o PATH, or without\n"
           "                       -o to standard output, alone there unless text (the\n"
           "                       pipeline's own lines then go to standard error)\n"
           "  -o, --output PATH    where --format's report goes (text by default)\n"
           "  --json PATH          the pipeline report as JSON (memprof-pipeline, docs/json.md);\n"
           "                       '-': standard output, alone there\n"
           "  --record on|off      record the trace (default on)\n"
           "  --exact              exact byte counts next to the rounded ones\n"
           "  -h, --help           show this help\n"
           "On a terminal, a progress line on stderr while the runs last (-r, -w).\n\n"
           "Exit codes: 0 ok; 2 usage (a bad --connect or --chain-input, a K.NAME naming no\n"
           "chain input, an input both connected and fed); 3 a file\n"
           "cannot be read or written; 4 malformed model or input file; 5 unsupported\n"
           "operator, or an edge memprof cannot convert; 6 impossible shape (two ends that\n"
           "do not hold as many elements); 7 runtime failure.\n\n"
           "Examples:\n"
           "  memprof split zoo:mobilenet_v2 --at 30 -o mnv2\n"
           "  memprof pipeline mnv2-1.tflite mnv2-2.tflite --io bind --share-arena --runs 20\n"
           "  memprof pipeline a.tflite b.tflite --connect 1.logits=2.0 --io copy\n"
           "  memprof pipeline encoder.tflite decoder.tflite --fill 2.mask=1 --io bind\n"
           "  memprof pipeline backbone.tflite detector.tflite classifier.tflite \\\n"
           "      --connect 1.0=2.0 --connect 1.0=3.0 --io bind\n"
           "  memprof pipeline mnv2-1.tflite mnv2-2.tflite --json - > pipeline.json\n\n"
           "More: docs/pipeline.md in memprof's sources.\n",
           mp_planner_default()->name);
}

typedef struct cmd_args {
    mp_pipe_args p;
    const char *trace_path, *report_path, *json_path;
    int format;
    bool exact;
} cmd_args;

enum { O_IO = 1, O_CONNECT, O_FORMAT, O_RECORD, O_CHAIN_INPUT };

/* One more value of a repeatable option (--connect, --chain-input). */
static int push(const char **list, int *n, const char *flag, const char *v)
{
    if (*n >= MP_PIPE_MAX_CONNECT)
        return mp_usage_error("pipeline", "%s given more than %d times", flag,
                              MP_PIPE_MAX_CONNECT);
    list[(*n)++] = v;
    return 0;
}

static int take(void *ctx, int id, const char *v)
{
    cmd_args *a = ctx;
    static const char *const io_words[] = {"copy", "bind", NULL};
    int k = 0;
    switch (id) {
    case O_CONNECT:
        return push(a->p.connect, &a->p.n_connect, "--connect", v);
    case O_CHAIN_INPUT:
        return push(a->p.chain_input, &a->p.n_chain_input, "--chain-input", v);
    case O_IO: {
        const char *eq = strchr(v, '=');
        long e;
        if (!eq) {
            int rc = mp_opt_choice("pipeline", "--io", v, io_words, &k);
            a->p.io = (mp_pipe_io)k;
            return rc;
        }
        char num[32];
        snprintf(num, sizeof num, "%.*s", (int)(eq - v), v);
        if (!mp_parse_int(num, 0, 100000, &e) || a->p.n_io_edge >= MP_PIPE_MAX_CONNECT)
            return mp_usage_error("pipeline", "--io takes copy, bind or EDGE=copy|bind, got '%s'",
                                  v);
        int rc = mp_opt_choice("pipeline", "--io", eq + 1, io_words, &k);
        a->p.io_edge[a->p.n_io_edge] = (int)e;
        a->p.io_edge_mode[a->p.n_io_edge++] = (mp_pipe_io)k;
        return rc;
    }
    case O_FORMAT:
        a->format = mp_report_format_parse(v);
        return a->format < 0 ? mp_usage_error("pipeline", "--format takes text, json, svg, html "
                                                          "or chrome, got '%s'", v)
                             : 0;
    default: {
        static const char *const rec[] = {"on", "off", NULL};
        int rc = mp_opt_choice("pipeline", "--record", v, rec, &k);
        a->p.record = k == 0;
        return rc;
    }
    }
}

static int parse(int argc, char **argv, cmd_args *a)
{
    static const mp_opt opts[] = {
        {"connect", 0, MP_ARG_VALUE, 0, O_CONNECT},
        {"chain-input", 0, MP_ARG_VALUE, 0, O_CHAIN_INPUT},
        {"output-dir", 0, MP_ARG_STRING, offsetof(cmd_args, p.outdir), 0},
        {"io", 0, MP_ARG_VALUE, 0, O_IO},
        {"share-arena", 0, MP_ARG_FLAG, offsetof(cmd_args, p.share_arena), 0},
        {"trace", 0, MP_ARG_STRING, offsetof(cmd_args, trace_path), 0},
        {"format", 0, MP_ARG_VALUE, 0, O_FORMAT},
        {"output", 'o', MP_ARG_STRING, offsetof(cmd_args, report_path), 0},
        {"json", 0, MP_ARG_STRING, offsetof(cmd_args, json_path), 0},
        {"record", 0, MP_ARG_VALUE, 0, O_RECORD},
        {"exact", 0, MP_ARG_FLAG, offsetof(cmd_args, exact), 0},
        {0}};
    memset(a, 0, sizeof *a);
    a->p.m.threads = 1;
    a->p.m.runs = 1;
    a->p.record = true;
    a->format = -1;
    int rc = mp_opts_parse(&(mp_cmd_spec){.cmd = "pipeline", .help = help, .opts = opts,
                                          .take = take, .ctx = a, .model = PIPE_OPTS,
                                          .m = &a->p.m, .pos = a->p.models,
                                          .max_pos = MP_PIPE_MAX_MODELS,
                                          .missing = "missing MODEL_A MODEL_B"},
                           argc, argv, &a->p.n_models);
    if (rc != 0)
        return rc;
    if (a->p.n_models < 2)
        return mp_usage_error("pipeline", "a pipeline needs at least two models");
    if ((a->trace_path || a->format >= 0 || a->report_path) && !a->p.record)
        return mp_usage_error("pipeline", "--trace, --format and -o need --record on");
    if (a->report_path && a->format < 0)
        a->format = MP_FMT_TEXT;
    bool json_out = a->json_path && strcmp(a->json_path, "-") == 0;
    if (json_out && a->format >= 0 && (!a->report_path || strcmp(a->report_path, "-") == 0))
        return mp_usage_error("pipeline", "--json - and --format without -o both want "
                                          "standard output: give one of them a file");
    mp_cli_files f = {.out_dir = a->p.outdir};
    for (int k = 0; k < a->p.n_models; k++)
        mp_cli_files_in(&f, a->p.models[k]);
    mp_cli_files_inputs(&f, a->p.m.inputs, a->p.m.n_inputs);
    mp_cli_files_out(&f, a->trace_path);
    mp_cli_files_out(&f, a->report_path);
    mp_cli_files_out(&f, a->json_path);
    return mp_cli_files_check("pipeline", &f);
}

static int write_json(const char *path, const mp_pipe_report *r)
{
    mp_out o;
    char why[256];
    mp_error err = {0};
    if (!mp_out_open(&o, path, why, sizeof why)) {
        fprintf(stderr, "memprof: cannot write %s: %s\n", path, why);
        return MP_EXIT_IO;
    }
    if (mp_report_pipeline_json(o.f, r, &err) != MP_OK) {
        mp_out_abort(&o);
        return mp_report_error(&err);
    }
    if (!mp_out_commit(&o, why, sizeof why)) {
        fprintf(stderr, "memprof: cannot write %s: %s\n", path, why);
        return MP_EXIT_IO;
    }
    return MP_EXIT_OK;
}

int mp_cmd_pipeline(int argc, char **argv)
{
    cmd_args a;
    int rc = parse(argc, argv, &a);
    if (rc != 0)
        return rc < 0 ? MP_EXIT_OK : rc;
    mp_pipe_result r;
    mp_progress pg;
    mp_progress_begin(&pg);
    a.p.progress = &pg;
    rc = mp_cli_pipeline_drive(&a.p, &r);
    mp_progress_end(&pg);
    if (rc == MP_EXIT_OK && a.trace_path) {
        mp_error err = {0};
        if (mp_trace_save(r.trace, a.trace_path, &err) != MP_OK)
            rc = mp_report_error(&err);
        r.rep.trace_path = a.trace_path;
    }
    /* a document alone on stdout (--json -, --format other than text without -o): the
     * pipeline's lines go to stderr */
    bool doc_out = mp_cli_report_on_stdout(a.format, a.report_path) ||
                   (a.json_path && strcmp(a.json_path, "-") == 0);
    if (rc == MP_EXIT_OK)
        mp_report_pipeline_text(doc_out ? stderr : stdout, &r.rep, a.exact);
    fflush(stdout);
    if (rc == MP_EXIT_OK && a.json_path)
        rc = write_json(a.json_path, &r.rep);
    bool to_file = a.report_path && strcmp(a.report_path, "-") != 0;
    if (rc == MP_EXIT_OK && a.format >= 0) {
        mp_source *src = mp_source_of_trace(r.trace);
        mp_report_opts ro = {.exact = a.exact};
        if (!to_file && !doc_out)
            printf("\n"); /* the text report after the pipeline's lines */
        fflush(stdout);
        rc = src ? mp_cli_write_report("pipeline", src, (mp_report_format)a.format,
                                       a.report_path, &ro)
                 : MP_EXIT_RUNTIME;
        mp_source_close(src);
        if (rc == MP_EXIT_OK && to_file)
            fprintf(doc_out ? stderr : stdout, "report   %s\n", a.report_path);
    }
    mp_cli_pipeline_result_free(&r);
    return rc;
}
