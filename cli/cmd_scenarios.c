/* memprof scenarios: play the five call orders A-E (cli/call_orders.h) with the shapes
 * given, each in a fresh recorded session, and print one table of latency and memory per
 * case (first run, later runs, static, dynamic, peak and duplicated bytes, allocations per
 * run), flagging what a good runtime never does; --strict turns a flag into exit 1. */
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/summary.h"
#include "cli/bench_stats.h"
#include "cli/call_orders.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "reports/units.h"

#define SCENARIO_OPTS (MP_OPT_SHAPE | MP_OPT_MEMORY | MP_OPT_THREADS | MP_OPT_RUNS | \
                       MP_OPT_WARMUP)
#define N_CASES 5

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
           "runs; inputs follow the reference formula ('memprof run --help').\n"
           "A case is flagged 'dup' when a tensor was ever held twice (duplicated bytes),\n"
           "and 'alloc' when a run after the first allocated in a mode that plans (auto,\n"
           "static) although no shape changed before it (every case but D).\n\n"
           "Options:\n"
           "  --shape NAME=DIMS    a shape of input NAME (or its index), e.g. input=1,64,64,3;\n"
           "                       at least one; repeat for a second shape (D, E)\n"
           "  --memory MODE        auto (default), static or dynamic\n"
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
           "  memprof scenarios model.tflite --shape input_1=2,32,32,3 --format json -o s.json\n\n"
           "More: docs/scenarios.md and docs/memory.md in memprof's sources.\n");
}

typedef struct sc_args {
    const char *model, *out_path;
    mp_model_opts m; /* --shape, --memory, -r, -w, --threads */
    bool keep_stale, strict, exact, json;
} sc_args;

/* --format, the one option with a value of its own to check. */
static int take(void *ctx, int id, const char *v)
{
    static const char *const words[] = {"text", "json", NULL};
    int f = 0, rc = mp_opt_choice("scenarios", "--format", v, words, &f);
    (void)id;
    ((sc_args *)ctx)->json = f == 1;
    return rc;
}

static int parse(int argc, char **argv, sc_args *a)
{
    static const mp_opt opts[] = {
        {"format", 0, MP_ARG_VALUE, 0, 1},
        {"output", 'o', MP_ARG_STRING, offsetof(sc_args, out_path), 0},
        {"keep-stale-arena", 0, MP_ARG_FLAG, offsetof(sc_args, keep_stale), 0},
        {"strict", 0, MP_ARG_FLAG, offsetof(sc_args, strict), 0},
        {"exact", 0, MP_ARG_FLAG, offsetof(sc_args, exact), 0}, {0}};
    memset(a, 0, sizeof *a);
    a->m.threads = 1;
    a->m.runs = 10;
    a->m.warmup = 2;
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

/* What one case measured. */
typedef struct sc_case {
    char name;                 /* 'A'..'E' */
    mp_shape_args *sp;         /* its shape lists */
    mp_shape_at at;
    uint64_t first_ns;
    mp_stats later;
    uint64_t static_bytes, dynamic_bytes, peak_bytes, dup_bytes;
    uint64_t first_allocs, first_bytes, later_allocs, later_bytes;
    uint64_t plans_made, plans_reused;
    size_t n_runs;
    bool flag_dup, flag_alloc;
} sc_case;

/* The shape lists of each case from the user's lists u and the model's shapes f (one per
 * input: f->n[k] = 1). */
static void case_shapes(int c, const mp_shape_args *u, const mp_shape_args *f, int n_in,
                        mp_shape_args *sp, mp_shape_at *at)
{
    memset(sp->n, 0, sizeof sp->n);
    *at = c == 0 || c == 1 ? MP_SHAPE_AT_PREPARE : c == 3 ? MP_SHAPE_AT_EACH_RUN : MP_SHAPE_AT_RUN;
    for (int k = 0; k < n_in && k < MP_CLI_MAX_INPUTS; k++) {
        if (c == 0 || !u->n[k])
            continue;
        /* the list: S1 [, S2 or F] [, S3...] */
        int want = c == 1 || c == 2 ? 1 : c == 4 ? 2 : (u->n[k] >= 2 ? u->n[k] : 2);
        for (int j = 0; j < want; j++) {
            const mp_shape_args *from = j < u->n[k] ? u : f;
            int jj = j < u->n[k] ? j : 0;
            sp->rank[k][j] = from->rank[k][jj];
            memcpy(sp->dims[k][j], from->dims[k][jj], sizeof sp->dims[k][j]);
        }
        sp->n[k] = want;
    }
}

/* Play one case in a fresh session. */
static int play(const sc_args *a, const void *bytes, size_t size, mp_cli_inputs *in,
                sc_case *cs, uint64_t *times, mp_progress *pg)
{
    mp_error err = {0};
    mp_trace *tr = mp_trace_create();
    if (!tr) {
        fprintf(stderr, "memprof scenarios: out of memory\n");
        return MP_EXIT_RUNTIME;
    }
    mp_session_options so = {.threads = (int)a->m.threads, .mode = a->m.mode, .trace = tr,
                             .keep_stale_arena = a->keep_stale};
    mp_session *s = NULL;
    int rc = mp_cli_session_open(a->model, bytes, size, &so, &s, NULL);
    if (rc == MP_EXIT_OK)
        rc = mp_shapes_before_prepare(s, cs->sp, cs->at);
    if (rc == MP_EXIT_OK && mp_session_prepare(s, &err) != MP_OK)
        rc = mp_report_error(&err);
    if (rc == MP_EXIT_OK)
        rc = mp_shapes_after_prepare(s, cs->sp, cs->at);
    long total = 1 + a->m.warmup + a->m.runs;
    for (long r = 0; r < total && rc == MP_EXIT_OK; r++) {
        mp_progress_update(pg, "scenarios: case %c, run %ld of %ld", cs->name, r + 1, total);
        rc = mp_shapes_before_run(s, cs->sp, cs->at, r);
        if (rc == MP_EXIT_OK)
            rc = mp_cli_inputs_feed(s, in);
        if (rc != MP_EXIT_OK)
            break;
        uint64_t t0 = mp_now_ns();
        if (mp_session_run(s, &err) != MP_OK) {
            rc = mp_report_error(&err);
            break;
        }
        uint64_t dt = mp_now_ns() - t0;
        if (r == 0)
            cs->first_ns = dt;
        else if (r > a->m.warmup)
            times[r - 1 - a->m.warmup] = dt;
    }
    if (rc == MP_EXIT_OK) {
        mp_session_memory mi;
        mp_session_memory_info(s, &mi);
        cs->plans_made = mi.plans_made;
        cs->plans_reused = mi.plans_reused;
    }
    mp_session_destroy(s);
    if (rc == MP_EXIT_OK) {
        mp_summary sum;
        if (mp_summary_compute(tr, &sum, &err) != MP_OK) {
            rc = mp_report_error(&err);
        } else {
            mp_stats_compute(times, (size_t)a->m.runs, &cs->later);
            cs->static_bytes = sum.static_bytes;
            cs->dynamic_bytes = sum.dynamic_bytes;
            cs->peak_bytes = sum.peak_heap;
            cs->dup_bytes = sum.dup_bytes;
            cs->first_allocs = sum.first_run.n_alloc;
            cs->first_bytes = sum.first_run.bytes_alloc;
            cs->later_allocs = sum.later_max.n_alloc;
            cs->later_bytes = sum.later_max.bytes_alloc;
            cs->n_runs = sum.n_runs;
            cs->flag_dup = sum.dup_bytes > 0;
            cs->flag_alloc = a->m.mode != MP_MEMORY_DYNAMIC && cs->name != 'D' &&
                             sum.later_max.n_alloc > 0;
            mp_summary_free(&sum);
        }
    }
    mp_trace_destroy(tr);
    return rc;
}

/* "input_1 [2,32,32,3] [1,32,32,3]; mask [2,5]" for a case's lists. */
static void shapes_str(mp_session *probe, const mp_shape_args *sp, char *buf, size_t n)
{
    size_t at = 0;
    buf[0] = 0;
    for (int k = 0; k < mp_session_input_count(probe) && k < MP_CLI_MAX_INPUTS; k++) {
        if (!sp->n[k])
            continue;
        at += (size_t)snprintf(buf + at, at < n ? n - at : 0, "%s%s", at ? "; " : "",
                               mp_session_input(probe, k)->info->name);
        for (int j = 0; j < sp->n[k] && at < n; j++) {
            char sh[128];
            at += (size_t)snprintf(buf + at, n - at, " %s",
                                   mp_shape_str(sp->rank[k][j], sp->dims[k][j], sh, sizeof sh));
        }
        if (at >= n)
            break;
    }
    if (!buf[0])
        snprintf(buf, n, "the model's own");
}

static const char *flags_str(const sc_case *cs)
{
    return cs->flag_dup && cs->flag_alloc ? "dup,alloc" : cs->flag_dup ? "dup"
           : cs->flag_alloc ? "alloc" : "";
}

static void print_text(FILE *f, const sc_args *a, mp_session *probe, const sc_case *cases)
{
    char b[4][48];
    mp_text_title(f, "memprof scenarios", a->model);
    mp_text_line(f, "  mode %s, %ld thread%s; per case: first run, %ld warm-up, %ld timed runs",
                 mp_memory_mode_name(a->m.mode), a->m.threads, a->m.threads == 1 ? "" : "s",
                 a->m.warmup, a->m.runs);
    if (a->keep_stale)
        mp_text_line(f, "  debug: --keep-stale-arena (the old arena kept after a shape change)");
    mp_text_line(f, "%s", "");
    mp_text_line(f, "     first    later     static    dynamic       peak duplicated allocs");
    mp_text_line(f, "case run ms  med. ms      bytes      bytes      bytes      bytes  /run flags");
    for (int c = 0; c < N_CASES; c++) {
        const sc_case *cs = &cases[c];
        if (a->exact)
            for (int i = 0; i < 4; i++)
                snprintf(b[i], sizeof b[i], "%llu",
                         (unsigned long long)(i == 0   ? cs->static_bytes
                                              : i == 1 ? cs->dynamic_bytes
                                              : i == 2 ? cs->peak_bytes
                                                       : cs->dup_bytes));
        else {
            mp_fmt_bytes(b[0], sizeof b[0], cs->static_bytes);
            mp_fmt_bytes(b[1], sizeof b[1], cs->dynamic_bytes);
            mp_fmt_bytes(b[2], sizeof b[2], cs->peak_bytes);
            mp_fmt_bytes(b[3], sizeof b[3], cs->dup_bytes);
        }
        mp_text_line(f, "%-2c %8.3f %8.3f %10s %10s %10s %10s %5llu %s", cs->name,
                     cs->first_ns / 1e6, cs->later.median_ns / 1e6, b[0], b[1], b[2], b[3],
                     (unsigned long long)cs->later_allocs, flags_str(cs));
    }
    mp_text_line(f, "%s", "");
    mp_text_line(f, "case calls                                    shapes");
    for (int c = 0; c < N_CASES; c++) {
        char sh[512];
        shapes_str(probe, cases[c].sp, sh, sizeof sh);
        mp_text_line(f, "%-4c %-40s %s", cases[c].name, k_calls[c], sh);
    }
    mp_text_line(f, "%s", "");
    mp_text_line(f, "allocs /run: the most allocations in one run after the first (warm-up "
                    "included).");
    mp_text_line(f, "flags: dup = a tensor held twice; alloc = a later run allocated with no "
                    "shape");
    mp_text_line(f, "change before it (D changes shapes before every run: not flagged for it).");
    int n_flagged = 0;
    char which[64] = "";
    for (int c = 0; c < N_CASES; c++)
        if (cases[c].flag_dup || cases[c].flag_alloc) {
            size_t l = strlen(which);
            snprintf(which + l, sizeof which - l, "%s%c", n_flagged ? ", " : "", cases[c].name);
            n_flagged++;
        }
    if (n_flagged)
        mp_text_line(f, "flagged: %s", which);
    else
        mp_text_line(f, "flagged: none");
}

static json_t *shapes_json(mp_session *probe, const mp_shape_args *sp)
{
    json_t *arr = json_array();
    for (int k = 0; k < mp_session_input_count(probe) && k < MP_CLI_MAX_INPUTS; k++) {
        if (!sp->n[k])
            continue;
        json_t *list = json_array();
        for (int j = 0; j < sp->n[k]; j++) {
            json_t *d = json_array();
            for (int i = 0; i < sp->rank[k][j]; i++)
                json_array_append_new(d, json_integer(sp->dims[k][j][i]));
            json_array_append_new(list, d);
        }
        json_array_append_new(arr, json_pack("{s:i, s:s, s:o}", "input", k, "name",
                                             mp_session_input(probe, k)->info->name, "shapes",
                                             list));
    }
    return arr;
}

static json_t *to_json(const sc_args *a, mp_session *probe, const sc_case *cases)
{
    json_t *root = json_object(), *arr = json_array();
    int n_flagged = 0;
    json_object_set_new(root, "format", json_string("memprof-scenarios"));
    json_object_set_new(root, "version", json_integer(1));
    json_object_set_new(root, "model", json_string(a->model));
    json_object_set_new(root, "mode", json_string(mp_memory_mode_name(a->m.mode)));
    json_object_set_new(root, "threads", json_integer(a->m.threads));
    json_object_set_new(root, "runs", json_integer(a->m.runs));
    json_object_set_new(root, "warmup", json_integer(a->m.warmup));
    json_object_set_new(root, "keep_stale_arena", json_boolean(a->keep_stale));
    for (int c = 0; c < N_CASES; c++) {
        const sc_case *cs = &cases[c];
        char name[2] = {cs->name, 0};
        json_t *flags = json_array();
        if (cs->flag_dup)
            json_array_append_new(flags, json_string("dup"));
        if (cs->flag_alloc)
            json_array_append_new(flags, json_string("alloc"));
        n_flagged += cs->flag_dup || cs->flag_alloc;
        json_t *o = json_object();
        json_object_set_new(o, "case", json_string(name));
        json_object_set_new(o, "calls", json_string(k_calls[c]));
        json_object_set_new(o, "shape_at", json_string(mp_shape_at_name(cs->at)));
        json_object_set_new(o, "shapes", shapes_json(probe, cs->sp));
        json_object_set_new(o, "runs", json_integer((json_int_t)cs->n_runs));
        json_object_set_new(o, "first_run_ms", json_real(cs->first_ns / 1e6));
        json_object_set_new(o, "later_runs", mp_stats_json(&cs->later));
        json_object_set_new(o, "static_bytes", json_integer((json_int_t)cs->static_bytes));
        json_object_set_new(o, "dynamic_bytes", json_integer((json_int_t)cs->dynamic_bytes));
        json_object_set_new(o, "peak_bytes", json_integer((json_int_t)cs->peak_bytes));
        json_object_set_new(o, "dup_bytes", json_integer((json_int_t)cs->dup_bytes));
        json_object_set_new(o, "first_run_allocations", json_integer((json_int_t)cs->first_allocs));
        json_object_set_new(o, "first_run_bytes", json_integer((json_int_t)cs->first_bytes));
        json_object_set_new(o, "later_run_allocations_max",
                            json_integer((json_int_t)cs->later_allocs));
        json_object_set_new(o, "later_run_bytes_max", json_integer((json_int_t)cs->later_bytes));
        json_object_set_new(o, "plans_made", json_integer((json_int_t)cs->plans_made));
        json_object_set_new(o, "plans_reused", json_integer((json_int_t)cs->plans_reused));
        json_object_set_new(o, "flags", flags);
        json_array_append_new(arr, o);
    }
    json_object_set_new(root, "cases", arr);
    json_object_set_new(root, "flagged", json_integer(n_flagged));
    return root;
}

static int write_out(const sc_args *a, mp_session *probe, const sc_case *cases)
{
    mp_out o;
    char why[256];
    if (!mp_out_open(&o, a->out_path, why, sizeof why)) {
        fprintf(stderr, "memprof scenarios: cannot write %s: %s\n", a->out_path, why);
        return MP_EXIT_IO;
    }
    if (a->json) {
        json_t *root = to_json(a, probe, cases);
        size_t fl = JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9);
        int bad = !root || json_dumpf(root, o.f, fl) != 0;
        json_decref(root);
        if (bad || fputc('\n', o.f) == EOF) {
            mp_out_abort(&o);
            fprintf(stderr, "memprof scenarios: cannot write the JSON output\n");
            return MP_EXIT_IO;
        }
    } else {
        print_text(o.f, a, probe, cases);
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
    sc_args a;
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
    sc_case cases[N_CASES];
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
    for (int c = 0; c < N_CASES && rc == MP_EXIT_OK; c++) {
        cases[c].name = (char)('A' + c);
        cases[c].sp = &sps[c];
        case_shapes(c, user, file, n_in, &sps[c], &cases[c].at);
        rc = play(&a, bytes, size, in, &cases[c], times, &pg);
    }
    mp_progress_end(&pg);
    if (rc == MP_EXIT_OK)
        rc = write_out(&a, probe, cases);
    if (rc == MP_EXIT_OK && a.strict) {
        for (int c = 0; c < N_CASES; c++)
            if (cases[c].flag_dup || cases[c].flag_alloc) {
                fprintf(stderr, "memprof scenarios: --strict: case %c is flagged (%s)\n",
                        cases[c].name, flags_str(&cases[c]));
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
