/* memprof bench: run a model in the static, dynamic and auto memory modes (and, with --peer
 * xnnpack, through XNNPACK's own subgraph runtime), interleaved run by run so that machine
 * noise hits all alike, and print per mode and phase (load, prepare, first run, later runs)
 * mean, median, min, max and geometric mean, the allocations and bytes per run and the
 * peak from each mode's recorded trace, the ratio of each mode to static, and the process's
 * resident memory after each phase next to the recorded bytes. */
#include <pthreadpool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/bench_stats.h"
#include "cli/call_orders.h"
#include "cli/cli.h"
#include "cli/bench_driver.h"
#include "cli/options.h"
#include "peers/xnnpack_runtime.h"
#include "reports/bench_report.h"


static void help(void)
{
    printf("Usage: memprof bench MODEL [options]\n\n"
           "Runs MODEL (a .tflite file or zoo:NAME) in the static, dynamic and auto memory\n"
           "modes, one session each, interleaved run by run so that machine noise hits\n"
           "all alike: each round runs every mode once, in an order (a Williams design)\n"
           "that puts each right after each other one equally often, so that the caches\n"
           "one leaves behind favour none.\n"
           "Prints per mode and phase (load, prepare, first run, later runs) the mean,\n"
           "median, min, max and geometric mean in ms, and the median's ratio to static;\n"
           "from each mode's recorded trace the allocations and bytes allocated in the\n"
           "first run and in the later run that allocated most, and the heap peak; and the\n"
           "process's resident memory (RSS, high-water mark) after each phase next to the\n"
           "bytes the sessions had allocated then. Load and prepare happen once per mode\n"
           "(one sample); every mode runs once (the first run), then --warmup untimed runs,\n"
           "then --runs timed runs. Inputs: raw files or the reference formula (element i\n"
           "of input k is (i*7 + 3 + 13*k) mod 256, scaled per dtype as 'memprof run --help'\n"
           "says), copied in before each run, outside the timing; a run after a shape change\n"
           "is timed with the re-plan and new arena made for it as its input was set.\n\n"
           "Options:\n"
           "  --shape NAME=DIMS    shape of input NAME (or its index); repeat for several\n"
           "  --shape-at WHEN      prepare (default), run or each-run: where in the call\n"
           "                       order the shapes change, as for 'memprof run'\n"
           "  --input NAME=FILE    raw little-endian bytes for input NAME\n"
           "  --fill NAME=VALUE    every element of input NAME is VALUE (see memprof run)\n"
           "  -r, --runs N         timed later runs per mode (default 10)\n"
           "  -w, --warmup N       untimed runs after the first run (default 2)\n"
           "  --threads N          worker threads of every session and the peer (default 1)\n"
           "  --plan-at WHEN       prepare (default) or first-run: when the static and auto\n"
           "                       sessions plan their arena ('memprof run --help')\n"
           "  --peer xnnpack       also run XNNPACK's own subgraph runtime, built from our\n"
           "                       graph, interleaved with the modes (not with each-run);\n"
           "                       a model with an operator it lacks is refused (exit 5)\n"
           "  --no-huge-pages      our sessions keep their arena and XNNPACK's packed\n"
           "                       weights on ordinary pages, as the peer does (to measure\n"
           "                       what the transparent-huge-page pool gains)\n"
           "  --in-place on|off    outputs share an input's arena slot in the planned modes\n"
           "                       (on, default; 'memprof run --help') or not (off)\n"
           "  --format text|json   output format (default text; fields: docs/json.md)\n"
           "  -o, --output PATH    write the output there (atomically) instead of stdout\n"
           "  -h, --help           show this help\n\n"
           "A progress line is shown on stderr when it is a terminal and the bench takes\n"
           "more than a second.\n\n"
           "Exit codes: 0 ok, 2 usage, 3 file, 4 malformed model, 5 unsupported operator\n"
           "(also the peer's), 6 impossible shape, 7 runtime failure.\n\n"
           "Examples:\n"
           "  memprof bench zoo:mobilenet_v2 -r 20 -w 5 --peer xnnpack\n"
           "  memprof bench zoo:mobilenet_v2 -r 20 -w 5 --peer xnnpack --no-huge-pages\n"
           "  memprof bench zoo:mobilenet_v2_dynamic --shape input=1,160,160,3 --threads 2\n"
           "  memprof bench model.tflite --shape x=2,32,32,3 --shape-at run --format json \\\n"
           "      -o bench.json\n\n"
           "More: docs/bench.md and docs/benchmarks.md in memprof's sources.\n");
}

#define BENCH_OPTS (MP_OPT_SHAPE | MP_OPT_INPUT | MP_OPT_FILL | MP_OPT_SHAPE_AT | MP_OPT_THREADS | \
                    MP_OPT_RUNS | MP_OPT_WARMUP | MP_OPT_PEER | MP_OPT_IN_PLACE)

/* --format and --plan-at, the options with a value of their own to check. */
static int take(void *ctx, int id, const char *v)
{
    if (id == 2)
        return mp_cli_plan_at_opt("bench", v, &((mp_bench_args *)ctx)->plan_at);
    static const char *const words[] = {"text", "json", NULL};
    int f = 0, rc = mp_opt_choice("bench", "--format", v, words, &f);
    ((mp_bench_args *)ctx)->json = f == 1;
    return rc;
}

static int parse(int argc, char **argv, mp_bench_args *a)
{
    static const mp_opt opts[] = {
        {"format", 0, MP_ARG_VALUE, 0, 1},
        {"plan-at", 0, MP_ARG_VALUE, 0, 2},
        {"output", 'o', MP_ARG_STRING, offsetof(mp_bench_args, out_path), 0},
        {"no-huge-pages", 0, MP_ARG_FLAG, offsetof(mp_bench_args, no_huge_pages), 0}, {0}};
    memset(a, 0, sizeof *a);
    a->m.threads = 1;
    a->m.runs = 10;
    a->m.warmup = 2;
    int rc = mp_opts_parse(&(mp_cmd_spec){.cmd = "bench", .help = help, .opts = opts,
                                          .take = take, .ctx = a, .model = BENCH_OPTS,
                                          .m = &a->m, .pos = &a->model, .max_pos = 1,
                                          .missing = "missing MODEL"},
                           argc, argv, NULL);
    if (rc != 0)
        return rc;
    a->peer = a->m.peer;
    if (a->peer && a->m.at == MP_SHAPE_AT_EACH_RUN)
        return mp_usage_error("bench", "--peer xnnpack needs fixed shapes: XNNPACK's runtime "
                                       "is built for one shape (not --shape-at each-run)");
    mp_cli_files f = {0};
    mp_cli_files_in(&f, a->model);
    mp_cli_files_inputs(&f, a->m.inputs, a->m.n_inputs);
    mp_cli_files_out(&f, a->out_path);
    return mp_cli_files_check("bench", &f);
}

static int write_out(const mp_bench *b)
{
    const mp_bench_args *a = b->a;
    mp_bench_shape shapes[64];
    int n_shapes = 0;
    const mp_session *s0 = b->c[0].s;
    for (int k = 0; s0 && k < mp_session_input_count(s0) && k < MP_CLI_MAX_INPUTS; k++)
        for (int j = 0; j < b->sp->n[k] && n_shapes < 64; j++)
            shapes[n_shapes++] = (mp_bench_shape){k, mp_session_input(s0, k)->info->name,
                                                  b->sp->rank[k][j], b->sp->dims[k][j]};
    mp_bench_report r = {.model = a->model, .threads = a->m.threads, .runs = a->m.runs,
                         .warmup = a->m.warmup, .huge_pages = !a->no_huge_pages,
                         .peer = a->peer, .shape_at = mp_shape_at_name(a->m.at),
                         .plan_at = a->plan_at ? mp_plan_at_name(a->plan_at) : NULL,
                         .shapes = shapes, .n_shapes = n_shapes, .rows = b->rows,
                         .n_rows = b->n, .rss_ok = b->rss_ok, .rss = b->rss, .n_rss = b->n_rss};
    mp_out o;
    char why[256];
    mp_error err = {0};
    if (!mp_out_open(&o, a->out_path, why, sizeof why)) {
        fprintf(stderr, "memprof bench: cannot write %s: %s\n", a->out_path, why);
        return MP_EXIT_IO;
    }
    if (!a->json)
        mp_report_bench_text(o.f, &r);
    else if (mp_report_bench_json(o.f, &r, &err) != MP_OK) {
        mp_out_abort(&o);
        fprintf(stderr, "memprof bench: %s\n", err.msg);
        return MP_EXIT_IO;
    }
    if (!mp_out_commit(&o, why, sizeof why)) {
        fprintf(stderr, "memprof bench: cannot write %s: %s\n", a->out_path ? a->out_path : "stdout",
                why);
        return MP_EXIT_IO;
    }
    return MP_EXIT_OK;
}

int mp_cmd_bench(int argc, char **argv)
{
    mp_bench_args a;
    int rc = parse(argc, argv, &a);
    if (rc != 0)
        return rc < 0 ? MP_EXIT_OK : rc;

    mp_bench b;
    memset(&b, 0, sizeof b);
    b.a = &a;
    b.rss_ok = true;
    b.n = MP_BENCH_MODES + (a.peer ? 1 : 0);
    b.in = calloc(1, sizeof *b.in);
    b.sp = calloc(1, sizeof *b.sp);
    void *bytes = NULL;
    size_t size = 0;
    mp_progress pg;
    mp_progress_begin(&pg);
    if (a.m.threads > 1)
        b.pool = pthreadpool_create((size_t)a.m.threads);
    bool oom = !b.in || !b.sp || (a.m.threads > 1 && !b.pool);
    for (int i = 0; i < b.n; i++) {
        mp_contestant *c = &b.c[i];
        c->is_peer = i == MP_BENCH_MODES;
        c->name = c->is_peer ? "xnnpack" : mp_memory_mode_name(mp_bench_modes[i]);
        c->has_load = !c->is_peer;
        c->later = calloc((size_t)a.m.runs, sizeof *c->later);
        if (!c->is_peer)
            c->tr = mp_trace_create();
        oom |= !c->later || (!c->is_peer && !c->tr);
    }
    if (oom) {
        fprintf(stderr, "memprof bench: out of memory\n");
        rc = MP_EXIT_RUNTIME;
        goto done;
    }
    rc = mp_cli_model_bytes(a.model, &bytes, &size);
    if (rc == MP_EXIT_OK)
        rc = mp_bench_drive(&b, bytes, size, &pg);
    mp_progress_end(&pg);
    /* everything ends before the figures are made: the peer first (it reads the auto
     * session's graph), keeping its capture's figures */
    if (a.peer && b.c[MP_BENCH_MODES].p) {
        mp_xnn_peer_memory_info(b.c[MP_BENCH_MODES].p, &b.c[MP_BENCH_MODES].pm);
        mp_xnn_peer_destroy(b.c[MP_BENCH_MODES].p, NULL);
        b.c[MP_BENCH_MODES].p = NULL;
    }
    if (rc == MP_EXIT_OK)
        rc = mp_bench_conclude(&b);
    if (rc == MP_EXIT_OK)
        rc = write_out(&b);
done:
    mp_progress_end(&pg);
    for (int i = 0; i < b.n; i++) {
        mp_contestant *c = &b.c[i];
        if (c->p)
            mp_xnn_peer_destroy(c->p, NULL);
        mp_session_destroy(c->s);
        mp_trace_destroy(c->tr);
        free(c->later);
    }
    if (b.in)
        mp_cli_inputs_release(b.in);
    free(b.in);
    free(b.sp);
    free(bytes);
    if (b.pool)
        pthreadpool_destroy(b.pool);
    return rc;
}
