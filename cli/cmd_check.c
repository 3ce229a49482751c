/* memprof check: a CI memory gate. Runs a model (or reads a saved trace, or a baseline),
 * computes the deterministic figures of analyzers/baseline.h, checks them against limits and
 * against a committed baseline with a tolerance, prints what grew by kind of memory and by
 * tensor, and writes the baseline and a JUnit report. Exit 0 within limits, 1 when a limit
 * or the baseline is exceeded, 2 on any usage or input error. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/baseline.h"
#include "analyzers/gate.h"
#include "analyzers/profile.h"
#include "analyzers/source.h"
#include "cli/call_orders.h"
#include "cli/cli.h"
#include "cli/check_figures.h"
#include "cli/options.h"
#include "engine/memory/plan.h"
#include "engine/model/zoo.h"
#include "engine/session.h"
#include "reports/json_gate.h"
#include "reports/junit.h"
#include "reports/text_gate.h"
#include "cli/sizes.h"

#define CHECK_OPTS (MP_OPT_SHAPE | MP_OPT_MEMORY | MP_OPT_THREADS | MP_OPT_RUNS | \
                    MP_OPT_PLANNER)

static void help(void)
{
    printf("Usage: memprof check MODEL|TRACE|BASELINE [options]\n\n"
           "A memory gate for CI. Runs MODEL (a .tflite file or zoo:NAME: load, prepare,\n"
           "run, recorded) or reads a TRACE saved by 'memprof run --trace' or 'memprof\n"
           "train --trace' (or a BASELINE file), and checks its memory figures against\n"
           "limits and against a baseline. Every gated figure is printed beside the heap\n"
           "peak; on failure it prints what grew, by kind of memory and by tensor.\n\n"
           "Figures (bytes; deterministic: the same model and options give the same bytes\n"
           "on every run, thread count and machine):\n"
           "  tensors   tensor memory: the most static + dynamic + scratch + io bytes live\n"
           "            at once (and a training step's non-persistent categories)\n"
           "  static, dynamic, scratch, io, variable   each kind's own peak\n"
           "  activation, trainable, backprop, gradient, optimizer, disposable, extra\n"
           "            the training categories' own peaks (memprof train --trace)\n"
           "  const     model constants\n"
           "Machine dependent: limits only, never compared with nor written to a baseline:\n"
           "  heap      the heap peak of every kind together: memprof run's Heap peak (plus\n"
           "            a zoo: model's bytes, held on the heap)\n"
           "  rss       the process's peak resident set (VmHWM) while the model ran (a\n"
           "            trace's RSS samples; a trace of memprof train has none)\n"
           "  kernel    XNNPACK's packed weights and buffers   engine  bookkeeping\n\n"
           "Options:\n"
           "  --max-tensors SIZE   limit for tensors (tensor memory)\n"
           "  --max-heap SIZE      limit for heap (the footprint: memprof run's Heap peak)\n"
           "  --max-rss SIZE       limit for rss (the process's peak resident set)\n"
           "  --max FIGURE=SIZE    limit for any figure above; repeatable\n"
           "  --max-peak SIZE      deprecated: the same as --max-tensors (tensor memory,\n"
           "                       not the heap peak: that is --max-heap)\n"
           "  --baseline FILE      compare with a baseline: tensors, static, dynamic,\n"
           "                       scratch, io (and the training categories it holds)\n"
           "                       may not exceed it by more than the tolerance\n"
           "  --tolerance T        a percentage (5%%) or a size (64KiB); default 0\n"
           "  --save-baseline FILE write the figures as a baseline (JSON, sorted keys, one\n"
           "                       figure per line; written whatever the checks' result)\n"
           "  --junit FILE         write the checks as JUnit XML (one testcase per check)\n"
           "  --allow-other-model  accept a --baseline of another model (refused otherwise)\n"
           "  --exact              exact byte counts, and every row of the tables\n"
           "  --format F           the report as text (default) or json (format\n"
           "                       memprof-check, docs/json.md; then nothing else is\n"
           "                       written to standard output)\n"
           "  -o, --output FILE    write the report there, atomically (default: stdout)\n"
           "Running a MODEL (as 'memprof run'; for other call orders record a trace with\n"
           "'memprof run --trace' and check the trace):\n"
           "  --shape NAME=DIMS    shape of input NAME before prepare (once per input)\n"
           "  --memory MODE        auto (default), static or dynamic\n"
           "  --planner NAME       arena planner (default: %s)\n"
           "  --threads N          worker threads (default 1; figures do not depend on it)\n"
           "  -r, --runs N         runs (default 1)\n"
           "  -h, --help           show this help\n\n"
           "SIZE: bytes, or a number with a unit: B, KB, MB, GB (powers of 1000), KiB, MiB,\n"
           "GiB (powers of 1024), in any case, decimals allowed: 12MiB, 800KB, 1.5MiB.\n"
           "Output files are written atomically (never a partial file).\n\n"
           "Exit codes: 0 within every limit and the baseline; 1 a limit or the baseline\n"
           "was exceeded; 2 any error: usage, unreadable or malformed model, trace or\n"
           "baseline, a model that cannot run, a file that cannot be written, a limit on\n"
           "a figure the subject does not have (rss of a trace without RSS samples).\n\n"
           "Examples:\n"
           "  memprof check zoo:mnist_mlp --max-tensors 12MiB --max-heap 1MiB\n"
           "  memprof check model.tflite --save-baseline model.baseline.json\n"
           "  memprof check model.tflite --baseline model.baseline.json --tolerance 2%%\n"
           "  memprof check run.json --baseline model.baseline.json --junit memprof.xml\n"
           "  memprof check train.json --max backprop=64KiB --max optimizer=1MiB\n"
           "  memprof check zoo:mnist_mlp --max-rss 64MiB --format json > check.json\n\n"
           "More: docs/check.md in memprof's sources.\n",
           mp_planner_default()->name);
}

/* --max-peak and --max peak=: deprecated, said once on standard error */
static void deprecated_peak(mp_check_args *a, const char *flag)
{
    if (a->warned_peak)
        return;
    a->warned_peak = true;
    fprintf(stderr, "memprof check: %s is deprecated: tensor memory is --max-tensors, the "
                    "heap peak --max-heap\n", flag);
}

static int add_limit(mp_check_args *a, int fig, const char *size, const char *flag)
{
    uint64_t v;
    if (!mp_parse_size(size, &v))
        return mp_usage_error("check", "%s: '%s' is not a size (like 12MiB, 800KB, 4096)",
                              flag, size);
    if (a->n_limits == MP_CHECK_MAX_ARGS)
        return mp_usage_error("check", "more than %d limits", MP_CHECK_MAX_ARGS);
    a->limits[a->n_limits].figure = fig;
    a->limits[a->n_limits++].max = v;
    return 0;
}

enum { O_MAX_PEAK = 1, O_MAX_TENSORS, O_MAX_HEAP, O_MAX_RSS, O_MAX, O_TOLERANCE, O_FORMAT };

static int take(void *ctx, int id, const char *v)
{
    mp_check_args *a = ctx;
    if (id == O_MAX_PEAK) {
        deprecated_peak(a, "--max-peak");
        return add_limit(a, MP_FIG_TENSORS, v, "--max-peak");
    }
    if (id == O_MAX_TENSORS)
        return add_limit(a, MP_FIG_TENSORS, v, "--max-tensors");
    if (id == O_MAX_HEAP)
        return add_limit(a, MP_FIG_HEAP, v, "--max-heap");
    if (id == O_MAX_RSS)
        return add_limit(a, MP_FIG_RSS, v, "--max-rss");
    if (id == O_FORMAT) {
        return mp_opt_text_or_json("check", v, &a->json);
    }
    if (id == O_TOLERANCE) {
        if (!mp_parse_tolerance(v, &a->tol))
            return mp_usage_error("check", "--tolerance takes a percentage (5%%) or a size "
                                           "(64KiB), got '%s'", v);
        return 0;
    }
    const char *eq = strchr(v, '=');
    char name[32];
    size_t n = eq ? (size_t)(eq - v) : 0;
    if (!eq || n >= sizeof name)
        return mp_usage_error("check", "--max takes FIGURE=SIZE, got '%s'", v);
    memcpy(name, v, n);
    name[n] = 0;
    int fig = mp_figure_parse(name);
    if (fig < 0 && strcmp(name, "peak") == 0) {
        deprecated_peak(a, "--max peak=SIZE");
        fig = MP_FIG_TENSORS;
    }
    if (fig < 0) {
        char all[256];
        size_t o = 0;
        for (int f = 0; f < MP_FIG_COUNT && o < sizeof all; f++)
            o += (size_t)snprintf(all + o, sizeof all - o, "%s%s", f ? ", " : "",
                                  mp_figure_name(f));
        return mp_usage_error("check", "--max: no figure '%s' (%s)", name, all);
    }
    return add_limit(a, fig, eq + 1, "--max");
}

static int parse(int argc, char **argv, mp_check_args *a)
{
    static const mp_opt opts[] = {
        {"max-tensors", 0, MP_ARG_VALUE, 0, O_MAX_TENSORS},
        {"max-heap", 0, MP_ARG_VALUE, 0, O_MAX_HEAP},
        {"max-rss", 0, MP_ARG_VALUE, 0, O_MAX_RSS},
        {"max-peak", 0, MP_ARG_VALUE, 0, O_MAX_PEAK},
        {"max", 0, MP_ARG_VALUE, 0, O_MAX},
        {"baseline", 0, MP_ARG_STRING, offsetof(mp_check_args, baseline), 0},
        {"tolerance", 0, MP_ARG_VALUE, 0, O_TOLERANCE},
        {"save-baseline", 0, MP_ARG_STRING, offsetof(mp_check_args, save), 0},
        {"junit", 0, MP_ARG_STRING, offsetof(mp_check_args, junit), 0},
        {"exact", 0, MP_ARG_FLAG, offsetof(mp_check_args, exact), 0},
        {"allow-other-model", 0, MP_ARG_FLAG, offsetof(mp_check_args, other_model), 0},
        {"format", 0, MP_ARG_VALUE, 0, O_FORMAT},
        {"output", 'o', MP_ARG_STRING, offsetof(mp_check_args, out), 0}, {0}};
    memset(a, 0, sizeof *a);
    a->m.threads = 1;
    a->m.runs = 1;
    int rc = mp_opts_parse(&(mp_cmd_spec){.cmd = "check", .help = help, .opts = opts,
                                          .take = take, .ctx = a, .model = CHECK_OPTS,
                                          .m = &a->m, .pos = &a->subject, .max_pos = 1,
                                          .missing = "missing MODEL or TRACE"},
                           argc, argv, NULL);
    if (rc != 0)
        return rc;
    a->model_opts = a->m.given != 0;
    if (!a->n_limits && !a->baseline && !a->save)
        return mp_usage_error("check", "nothing to check: give --max-tensors, --max-heap, "
                                       "--max-rss, --max, --baseline or --save-baseline");
    mp_cli_files f = {0};
    mp_cli_files_in(&f, a->subject);
    mp_cli_files_in(&f, a->baseline);
    mp_cli_files_inputs(&f, a->m.inputs, a->m.n_inputs);
    mp_cli_files_out(&f, a->save);
    mp_cli_files_out(&f, a->junit);
    mp_cli_files_out(&f, a->out);
    return mp_cli_files_check("check", &f);
}

static int write_junit(const mp_check_args *a, const mp_baseline *now, const mp_gate_result *r)
{
    char why[256];
    mp_out out;
    mp_error err = {0};
    if (!mp_out_open(&out, a->junit, why, sizeof why)) {
        fprintf(stderr, "memprof check: cannot write %s: %s\n", a->junit, why);
        return MP_EXIT_IO;
    }
    if (mp_report_gate_junit(out.f, a->subject, now, r, &a->tol, &err) != MP_OK) {
        mp_out_abort(&out);
        fprintf(stderr, "memprof check: cannot write %s: %s\n", a->junit, err.msg);
        return MP_EXIT_IO;
    }
    if (!mp_out_commit(&out, why, sizeof why)) {
        fprintf(stderr, "memprof check: cannot write %s: %s\n", a->junit, why);
        return MP_EXIT_IO;
    }
    return MP_EXIT_OK;
}

/* The checks as text or JSON, to -o or stdout, atomically. */
static int write_report(const mp_check_args *a, const mp_baseline *now, const mp_gate_options *go,
                        const mp_gate_result *r)
{
    char why[256];
    mp_out out = {.f = stdout};
    mp_error err = {0};
    /* stdout is written in place (a lost stdout is main's error, exit 3) */
    if (a->out && !mp_out_open(&out, a->out, why, sizeof why)) {
        fprintf(stderr, "memprof check: cannot write %s: %s\n", a->out, why);
        return MP_EXIT_IO;
    }
    if (a->json) {
        if (mp_report_gate_json(out.f, a->subject, now, go, a->baseline, r, &err) != MP_OK) {
            if (a->out)
                mp_out_abort(&out);
            fprintf(stderr, "memprof check: %s\n", err.msg);
            return MP_EXIT_IO;
        }
    } else {
        mp_report_gate_text(out.f, a->subject, now, go, a->baseline, r, a->exact);
    }
    if (!a->out) {
        fflush(stdout);
        return MP_EXIT_OK;
    }
    if (!mp_out_commit(&out, why, sizeof why)) {
        fprintf(stderr, "memprof check: cannot write %s: %s\n", a->out ? a->out : "stdout", why);
        return MP_EXIT_IO;
    }
    return MP_EXIT_OK;
}

static int save_baseline(const mp_check_args *a, const mp_baseline *now)
{
    char why[256];
    char *text = mp_baseline_to_json(now);
    if (!text) {
        fprintf(stderr, "memprof check: out of memory\n");
        return MP_EXIT_RUNTIME;
    }
    bool ok = mp_write_file_atomic(a->save, text, strlen(text), why, sizeof why);
    free(text);
    if (!ok) {
        fprintf(stderr, "memprof check: cannot write %s: %s\n", a->save, why);
        return MP_EXIT_IO;
    }
    /* with a JSON report on stdout, nothing else goes there */
    fprintf(a->json && !a->out ? stderr : stdout, "baseline %s written (%zu tensors)\n", a->save,
            now->n_tensors);
    return MP_EXIT_OK;
}

/* Why the subject lacks figure f (only rss and a baseline's figures can be missing). */
static const char *missing_why(const char *subject, int f)
{
    mp_file_kind k = strncmp(subject, "zoo:", 4) == 0 ? MP_FILE_MODEL : mp_file_kind_of(subject);
    if (k == MP_FILE_JSON)
        return mp_figure_machine_dependent(f) ? "a baseline holds no machine-dependent figure "
                                                "(kernel, engine, heap, rss)"
                                              : "the baseline was written before memprof "
                                                "knew it";
    if (k == MP_FILE_TRACE)
        return "the trace has no RSS samples (memprof run --trace records them, memprof "
               "train --trace does not)";
    return "the process's resident set could not be read (/proc/self/status)";
}

static int check(const mp_check_args *a)
{
    mp_error err = {0};
    mp_baseline now, base;
    memset(&now, 0, sizeof now);
    memset(&base, 0, sizeof base);
    mp_gate_result r;
    memset(&r, 0, sizeof r);
    int rc = MP_EXIT_OK;
    /* the baseline first: a bad file is reported before a long run */
    if (a->baseline && mp_baseline_read(a->baseline, &base, &err) != MP_OK)
        return mp_report_error(&err);
    rc = mp_check_figures(a, &now);
    /* a limit on a figure the subject does not have is an error, not a failure */
    for (size_t i = 0; i < a->n_limits && rc == MP_EXIT_OK; i++) {
        int f = a->limits[i].figure;
        if (now.has[f])
            continue;
        fprintf(stderr, "memprof check: %s has no figure %s: %s\n", a->subject,
                mp_figure_name(f), missing_why(a->subject, f));
        rc = MP_EXIT_USAGE;
    }
    /* a baseline of another model compares nothing meaningful: refused unless asked for */
    if (rc == MP_EXIT_OK && a->baseline && !a->other_model && base.model && now.model &&
        strcmp(base.model, now.model) != 0) {
        fprintf(stderr, "memprof check: %s is the baseline of model %s, not of %s\n"
                        "  (--allow-other-model compares them anyway)\n",
                a->baseline, base.model, now.model);
        rc = MP_EXIT_USAGE;
    }
    mp_gate_options go = {.limits = a->limits, .n_limits = a->n_limits,
                          .baseline = a->baseline ? &base : NULL, .tol = a->tol};
    if (rc == MP_EXIT_OK && mp_gate_evaluate(&now, &go, &r, &err) != MP_OK)
        rc = mp_report_error(&err);
    if (rc == MP_EXIT_OK && (a->json || a->out || r.n_checks || !a->save))
        rc = write_report(a, &now, &go, &r);
    if (rc == MP_EXIT_OK && a->junit)
        rc = write_junit(a, &now, &r);
    if (rc == MP_EXIT_OK && a->save)
        rc = save_baseline(a, &now);
    if (rc == MP_EXIT_OK && r.n_failed)
        rc = MP_EXIT_GATE;
    mp_gate_result_free(&r);
    mp_baseline_free(&now);
    mp_baseline_free(&base);
    return rc;
}

int mp_cmd_check(int argc, char **argv)
{
    mp_check_args a;
    int rc = parse(argc, argv, &a);
    if (rc == 0)
        rc = check(&a);
    else if (rc < 0)
        rc = MP_EXIT_OK;
    /* every error, whatever its kind, is exit 2 here (CI tells "grew" from "broken") */
    return rc == MP_EXIT_OK || rc == MP_EXIT_GATE ? rc : MP_EXIT_USAGE;
}
