/* memprof scenarios: play the five call orders A-E (cli/call_orders.h) with the shapes
 * given, each in a fresh recorded session per memory mode and plan-at policy asked for
 * (--memory all, --plan-at both: interleaved, case by case), and print one table of latency
 * and memory per case (first run, later runs, allocations per run, static, dynamic, peak and
 * duplicated bytes, plans made and reused, arenas made and left unused), flagging what a
 * good runtime never does; --strict turns a flag into exit 1. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/bench_stats.h"
#include "cli/call_orders.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "cli/scenarios_driver.h"
#include "reports/scenarios_report.h"

#define SCENARIO_OPTS (MP_OPT_SHAPE | MP_OPT_THREADS | MP_OPT_RUNS | MP_OPT_WARMUP)
#define N_CASES 5
#define MAX_VARIANTS 5 /* static x2 policies, dynamic, auto x2 */

static void help(void)
{
    printf("Usage: memprof scenarios MODEL --shape NAME=DIMS [--shape NAME=DIMS2 ...] [options]\n\n"
           "Plays the call orders A-E below with the shapes given, each in a\n"
           "fresh session recording every allocation, and prints one table: per case the\n"
           "first run's latency, the later runs' median, static, dynamic, peak and\n"
           "duplicated bytes, and the most allocations of any run after the first.\n"
           "S1, S2... are an input's shapes in the order given; F is the model's own shape:\n"
           "  A  prepare, run...                            (F)\n"
           "  B  set S1, prepare, run...\n"
           "  C  prepare, set S1, run...\n"
           "  D  prepare, then before every run the next of S1, S2... (S1, F with one shape)\n"
           "  E  set S1, prepare, set S2 (F with one shape), run...\n"
           "Every case runs once (the first run), then --warmup runs, then --runs timed\n"
           "runs; inputs follow the reference formula ('memprof run --help'). A run's time\n"
           "includes the work a shape change caused for it (re-plan, new arena), even when\n"
           "it was done as the input was set; its allocations count in it too.\n"
           "A case is flagged 'dup' when a tensor was ever held twice (duplicated bytes),\n"
           "and 'alloc' when a run after the first allocated in a mode that plans (auto,\n"
           "static) although no shape changed before it (every case but D). 'arenas\n"
           "unused' counts arenas freed before any run used them.\n\n"
           "Options:\n"
           "  --shape NAME=DIMS    a shape of input NAME (or its index), e.g. input=1,64,64,3;\n"
           "                       at least one; repeat for a second shape (D, E)\n"
           "  --memory MODE        auto (default), static, dynamic, or all: the three modes\n"
           "                       in one table, case by case (static, dynamic, auto)\n"
           "  --plan-at WHEN       prepare (default), first-run or both: plan the arena at\n"
           "                       prepare, or at the first run when shapes may still\n"
           "                       change; both shows the two side by side\n"
           "  -r, --runs N         timed runs after the first run and warm-up (default 10)\n"
           "  -w, --warmup N       untimed runs after the first run (default 2)\n"
           "  --threads N          worker threads (default 1)\n"
           "  --keep-stale-arena   debug: keep the old arena after a shape change (Samsung\n"
           "                       ONE's behaviour): C, D and E then show duplicated bytes\n"
           "  --strict             exit 1 when any case is flagged\n"
           "  --exact              exact byte counts in the text table\n"
           "  --format text|json   output format (default text; fields: docs/json.md)\n"
           "  -o, --output PATH    write the output there (atomically) instead of stdout\n"
           "  -h, --help           show this help\n\n"
           "Exit codes: 0 ok, 1 a case is flagged (--strict), 2 usage, 3 file, 4 malformed\n"
           "model, 5 unsupported operator, 6 impossible shape, 7 runtime failure.\n\n"
           "Examples:\n"
           "  memprof scenarios model.tflite --shape input_1=2,32,32,3\n"
           "  memprof scenarios zoo:mobilenet_v2_dynamic --shape input=1,160,160,3 \\\n"
           "      --shape input=1,192,192,3 -r 5 --strict\n"
           "  memprof scenarios model.tflite --shape input_1=2,32,32,3 --memory all \\\n"
           "      --plan-at both\n"
           "  memprof scenarios model.tflite --shape input_1=2,32,32,3 --format json -o s.json\n\n"
           "More: docs/scenarios.md and docs/memory.md in memprof's sources.\n");
}

enum { O_FORMAT = 1, O_MEMORY, O_PLAN_AT };

/* --format, --memory and --plan-at, the options with a value of their own to check. */
static int take(void *ctx, int id, const char *v)
{
    mp_sc_args *a = ctx;
    if (id == O_MEMORY) {
        static const char *const words[] = {"auto", "static", "dynamic", "all", NULL};
        int m = 0, rc = mp_opt_choice("scenarios", "--memory", v, words, &m);
        a->all_modes = m == 3;
        a->n_modes = 1;
        a->modes[0] = m == 1 ? MP_MEMORY_STATIC : m == 2 ? MP_MEMORY_DYNAMIC : MP_MEMORY_AUTO;
        if (a->all_modes) {
            a->n_modes = 3;
            a->modes[0] = MP_MEMORY_STATIC;
            a->modes[1] = MP_MEMORY_DYNAMIC;
            a->modes[2] = MP_MEMORY_AUTO;
        }
        return rc;
    }
    if (id == O_PLAN_AT) {
        static const char *const words[] = {"prepare", "first-run", "both", NULL};
        int p = 0, rc = mp_opt_choice("scenarios", "--plan-at", v, words, &p);
        a->plan_at_arg = words[p];
        a->n_plans = p == 2 ? 2 : 1;
        a->plans[0] = p == 1 ? MP_PLAN_AT_FIRST_RUN : MP_PLAN_AT_PREPARE;
        a->plans[1] = MP_PLAN_AT_FIRST_RUN;
        return rc;
    }
    static const char *const words[] = {"text", "json", NULL};
    int f = 0, rc = mp_opt_choice("scenarios", "--format", v, words, &f);
    a->json = f == 1;
    return rc;
}

static int parse(int argc, char **argv, mp_sc_args *a)
{
    static const mp_opt opts[] = {
        {"format", 0, MP_ARG_VALUE, 0, O_FORMAT},
        {"memory", 0, MP_ARG_VALUE, 0, O_MEMORY},
        {"plan-at", 0, MP_ARG_VALUE, 0, O_PLAN_AT},
        {"output", 'o', MP_ARG_STRING, offsetof(mp_sc_args, out_path), 0},
        {"keep-stale-arena", 0, MP_ARG_FLAG, offsetof(mp_sc_args, keep_stale), 0},
        {"strict", 0, MP_ARG_FLAG, offsetof(mp_sc_args, strict), 0},
        {"exact", 0, MP_ARG_FLAG, offsetof(mp_sc_args, exact), 0}, {0}};
    memset(a, 0, sizeof *a);
    a->m.threads = 1;
    a->m.runs = 10;
    a->m.warmup = 2;
    a->n_modes = 1;
    a->modes[0] = MP_MEMORY_AUTO;
    a->n_plans = 1;
    a->plans[0] = MP_PLAN_AT_DEFAULT;
    a->plan_at_arg = "default";
    int rc = mp_opts_parse(&(mp_cmd_spec){.cmd = "scenarios", .help = help, .opts = opts,
                                          .take = take, .ctx = a, .model = SCENARIO_OPTS,
                                          .m = &a->m, .pos = &a->model, .max_pos = 1,
                                          .missing = "missing MODEL"},
                           argc, argv, NULL);
    if (rc != 0)
        return rc;
    if (a->m.n_shapes == 0)
        return mp_usage_error("scenarios", "give at least one --shape NAME=DIMS (the shape "
                                           "the cases change to)");
    mp_cli_files f = {0};
    mp_cli_files_in(&f, a->model);
    mp_cli_files_inputs(&f, a->m.inputs, a->m.n_inputs);
    mp_cli_files_out(&f, a->out_path);
    return mp_cli_files_check("scenarios", &f);
}

static const char *const k_calls[N_CASES] = {
    "prepare, run...",
    "set shape, prepare, run...",
    "prepare, set shape, run...",
    "prepare, new shape before every run",
    "set shape, prepare, other shape, run...",
};

/* The report's rows: each case with its shapes (by input, named from the probe). */
static int write_out(const mp_sc_args *a, mp_session *probe, mp_sc_case *cases, int n_rows)
{
    mp_scenario_case rows[N_CASES * MAX_VARIANTS];
    for (int c = 0; c < n_rows; c++) {
        mp_scenario_case *w = &cases[c].r;
        const mp_shape_args *sp = cases[c].sp;
        w->calls = k_calls[w->name - 'A'];
        w->shape_at = mp_shape_at_name(cases[c].at);
        w->n_shapes = 0;
        for (int k = 0; k < mp_session_input_count(probe) && k < MP_CLI_MAX_INPUTS; k++)
            for (int j = 0; j < sp->n[k] && w->n_shapes < MP_SCENARIO_MAX_SHAPES; j++)
                w->shapes[w->n_shapes++] = (mp_bench_shape){
                    k, mp_session_input(probe, k)->info->name, sp->rank[k][j], sp->dims[k][j]};
        rows[c] = *w;
    }
    mp_scenarios_report r = {.model = a->model, .plan_at = a->plan_at_arg,
                             .mode = a->all_modes ? "all" : mp_memory_mode_name(a->modes[0]),
                             .threads = a->m.threads, .runs = a->m.runs,
                             .warmup = a->m.warmup, .keep_stale = a->keep_stale,
                             .exact = a->exact, .cases = rows, .n_cases = n_rows};
    mp_out o;
    char why[256];
    mp_error err = {0};
    if (!mp_out_open(&o, a->out_path, why, sizeof why)) {
        fprintf(stderr, "memprof scenarios: cannot write %s: %s\n", a->out_path, why);
        return MP_EXIT_IO;
    }
    if (!a->json)
        mp_report_scenarios_text(o.f, &r);
    else if (mp_report_scenarios_json(o.f, &r, &err) != MP_OK) {
        mp_out_abort(&o);
        fprintf(stderr, "memprof scenarios: %s\n", err.msg);
        return MP_EXIT_IO;
    }
    if (!mp_out_commit(&o, why, sizeof why)) {
        fprintf(stderr, "memprof scenarios: cannot write %s: %s\n",
                a->out_path ? a->out_path : "stdout", why);
        return MP_EXIT_IO;
    }
    return MP_EXIT_OK;
}

int mp_cmd_scenarios(int argc, char **argv)
{
    mp_sc_args a;
    int rc = parse(argc, argv, &a);
    if (rc != 0)
        return rc < 0 ? MP_EXIT_OK : rc;

    void *bytes = NULL;
    size_t size = 0;
    mp_session *probe = NULL;
    mp_shape_args *user = calloc(1, sizeof *user), *file = calloc(1, sizeof *file);
    mp_shape_args *sps = calloc(N_CASES, sizeof *sps);
    mp_cli_inputs *in = calloc(1, sizeof *in);
    uint64_t *times = calloc((size_t)a.m.runs, sizeof *times);
    mp_sc_case cases[N_CASES * MAX_VARIANTS];
    /* the variants of every case: each mode, and in a mode that plans each policy */
    mp_memory_mode v_mode[MAX_VARIANTS];
    mp_plan_at v_plan[MAX_VARIANTS];
    int n_var = 0;
    for (int i = 0; i < a.n_modes; i++)
        for (int j = 0; j < (a.modes[i] == MP_MEMORY_DYNAMIC ? 1 : a.n_plans); j++) {
            v_mode[n_var] = a.modes[i];
            v_plan[n_var++] = a.plans[j];
        }
    int n_rows = N_CASES * n_var;
    memset(cases, 0, sizeof cases);
    mp_progress pg;
    mp_progress_begin(&pg);
    if (!user || !file || !sps || !in || !times) {
        fprintf(stderr, "memprof scenarios: out of memory\n");
        rc = MP_EXIT_RUNTIME;
        goto done;
    }
    rc = mp_cli_model_bytes(a.model, &bytes, &size);
    /* a session that only resolves the inputs' names, knows the model's own shapes and
     * checks that every shape given is possible, before any case runs */
    mp_session_options po = {.threads = 1};
    if (rc == MP_EXIT_OK)
        rc = mp_cli_session_open(a.model, bytes, size, &po, &probe, NULL);
    if (rc == MP_EXIT_OK)
        rc = mp_cli_collect_shapes(probe, "scenarios", (const char *const *)a.m.shapes,
                                   a.m.n_shapes, user);
    int n_in = probe ? mp_session_input_count(probe) : 0;
    for (int k = 0; k < n_in && k < MP_CLI_MAX_INPUTS && rc == MP_EXIT_OK; k++) {
        const mp_tensor *t = mp_session_input(probe, k);
        file->n[k] = 1;
        file->rank[k][0] = t->rank;
        memcpy(file->dims[k][0], t->dims, sizeof file->dims[k][0]);
    }
    for (int k = 0; k < n_in && k < MP_CLI_MAX_INPUTS && rc == MP_EXIT_OK; k++)
        for (int j = 0; j < user->n[k] && rc == MP_EXIT_OK; j++)
            rc = mp_cli_apply_shape(probe, user, k, j);
    long per_case = 1 + a.m.warmup + a.m.runs; /* runs of a case, for the progress line */
    pg.total = n_rows * per_case;
    /* interleaved: every mode and policy of case A, then of B, ... */
    for (int row = 0; row < n_rows && rc == MP_EXIT_OK; row++) {
        int c = row / n_var, v = row % n_var;
        mp_sc_case *cs = &cases[row];
        pg.base = row * per_case;
        cs->r.name = (char)('A' + c);
        cs->sp = &sps[c];
        cs->mode = v_mode[v];
        cs->plan_at = v_plan[v];
        mp_scenario_case_shapes(c, user, file, n_in, &sps[c], &cs->at);
        rc = mp_scenario_play(&a, bytes, size, in, cs, times, &pg);
    }
    mp_progress_end(&pg);
    if (rc == MP_EXIT_OK)
        rc = write_out(&a, probe, cases, n_rows);
    if (rc == MP_EXIT_OK && a.strict) {
        for (int c = 0; c < n_rows; c++)
            if (cases[c].r.flag_dup || cases[c].r.flag_alloc) {
                if (n_var > 1)
                    fprintf(stderr, "memprof scenarios: --strict: case %c (%s%s%s) is flagged "
                            "(%s)\n", cases[c].r.name, cases[c].r.mode,
                            cases[c].r.plan_at ? ", plan at " : "",
                            cases[c].r.plan_at ? cases[c].r.plan_at : "",
                            mp_scenario_flags(&cases[c].r));
                else
                    fprintf(stderr, "memprof scenarios: --strict: case %c is flagged (%s)\n",
                            cases[c].r.name, mp_scenario_flags(&cases[c].r));
                rc = MP_EXIT_GATE;
            }
    }
done:
    mp_progress_end(&pg);
    mp_session_destroy(probe);
    if (in)
        mp_cli_inputs_release(in);
    free(in);
    free(times);
    free(sps);
    free(user);
    free(file);
    free(bytes);
    return rc;
}
