/* memprof diff: what changed between two traces (per kind of memory, the reference arena,
 * every tensor; the comparison of memory report A B) or two baselines, or a baseline and a
 * trace (the figures memprof check compares, and the tensors whose bytes changed); as text
 * or JSON, to standard output or, atomically, to -o FILE. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/baseline.h"
#include "analyzers/gate.h"
#include "analyzers/profile.h"
#include "analyzers/source.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "reports/json_diff.h"
#include "reports/json_profile.h"
#include "reports/text_gate.h"
#include "reports/text_profile.h"

static void help(void)
{
    printf("Usage: memprof diff A B [--exact] [--format text|json] [-o FILE]\n\n"
           "Prints what changed from A (before) to B (after), each a trace saved by\n"
           "'memprof run --trace' or a baseline written by 'memprof check --save-baseline':\n"
           "  two traces    the heap peak, every kind of memory at the peak and at its own\n"
           "                peak, the reference arena, and every tensor whose bytes or\n"
           "                manager changed, largest change first (as 'memprof report A B')\n"
           "  a baseline    the figures 'memprof check' compares (tensors, static, dynamic,\n"
           "  on a side     scratch, io, const; kernel, engine and heap between traces) and\n"
           "                every tensor whose bytes changed, largest change first\n"
           "In 80 columns; a model or its options that differ are noted.\n\n"
           "Options:\n"
           "  --exact              exact byte counts, and every row\n"
           "  --format F           text (default) or json: two traces as memprof-diff (as\n"
           "                       'memprof report A B --format json'), a baseline on a\n"
           "                       side as memprof-baseline-diff (docs/json.md)\n"
           "  -o, --output FILE    write it there, atomically (default: standard output)\n"
           "  -h, --help           show this help\n\n"
           "Exit codes: 0 compared (whether or not anything changed); 2 usage; 3 a file\n"
           "cannot be read or written; 4 a malformed trace or baseline; 7 out of memory.\n\n"
           "Examples:\n"
           "  memprof diff before.json after.json\n"
           "  memprof diff model.baseline.json after.json\n"
           "  memprof diff before.json after.json --format json > diff.json\n\n"
           "More: docs/diff.md in memprof's sources.\n");
}

typedef struct side {
    const char *path;
    mp_file_kind kind;
    mp_source *src;        /* a trace */
    mp_profile prof;       /* a trace's profile */
    bool has_prof;
    mp_baseline base;      /* a baseline, or a trace's figures */
} side;

static int open_side(side *s)
{
    mp_error err = {0};
    s->kind = strncmp(s->path, "zoo:", 4) == 0 ? MP_FILE_MODEL : mp_file_kind_of(s->path);
    switch (s->kind) {
    case MP_FILE_UNREADABLE:
        fprintf(stderr, "memprof diff: cannot read %s: %s\n", s->path, strerror(errno));
        return MP_EXIT_IO;
    case MP_FILE_TRACE:
        if (mp_source_open(s->path, &s->src, &err) != MP_OK)
            return mp_report_error(&err);
        if (mp_profile_compute(s->src, NULL, &s->prof, &err) != MP_OK)
            return mp_report_error(&err);
        s->has_prof = true;
        return MP_EXIT_OK;
    case MP_FILE_JSON:
        if (mp_baseline_read(s->path, &s->base, &err) != MP_OK)
            return mp_report_error(&err);
        return MP_EXIT_OK;
    case MP_FILE_MODEL:
        fprintf(stderr, "memprof diff: %s is a model: compare traces ('memprof run "
                        "--trace') or baselines ('memprof check --save-baseline')\n", s->path);
        return MP_EXIT_USAGE;
    default:
        fprintf(stderr, "memprof diff: %s is not a trace or a baseline\n", s->path);
        return MP_EXIT_FORMAT;
    }
}

typedef struct diff_args {
    bool exact, json;
    const char *out; /* -o, or NULL: stdout */
} diff_args;

static int diff_baselines(side *s, const diff_args *a, FILE *f)
{
    mp_error err = {0};
    for (int i = 0; i < 2; i++)
        if (s[i].kind == MP_FILE_TRACE &&
            mp_baseline_from_profile(&s[i].prof, s[i].src, &s[i].base, &err) != MP_OK)
            return mp_report_error(&err);
    mp_baseline_diff d;
    if (mp_baseline_diff_compute(&s[0].base, &s[1].base, &d, &err) != MP_OK)
        return mp_report_error(&err);
    mp_status st = MP_OK;
    if (a->json) {
        mp_diff_side da = {s[0].path, s[0].kind == MP_FILE_TRACE, &s[0].base},
                     db = {s[1].path, s[1].kind == MP_FILE_TRACE, &s[1].base};
        st = mp_report_baseline_diff_json(f, &da, &db, &d, &err);
    } else {
        mp_report_baseline_diff_text(f, s[0].path, &s[0].base, s[1].path, &s[1].base, &d,
                                     a->exact);
    }
    mp_baseline_diff_free(&d);
    return st == MP_OK ? MP_EXIT_OK : mp_report_error(&err);
}

static int diff_traces(side *s, const diff_args *a, FILE *f)
{
    mp_error err = {0};
    mp_profile_diff d;
    if (mp_profile_diff_compute(&s[0].prof, &s[1].prof, &d, &err) != MP_OK)
        return mp_report_error(&err);
    mp_status st = MP_OK;
    if (a->json)
        st = mp_report_diff_json(f, &s[0].prof, &s[1].prof, &d, &err);
    else
        mp_report_diff_text(f, &s[0].prof, &s[1].prof, &d, a->exact);
    mp_profile_diff_free(&d);
    return st == MP_OK ? MP_EXIT_OK : mp_report_error(&err);
}

/* The comparison, in text or JSON, to -o (atomically: no partial file) or stdout. */
static int write_diff(side *s, const diff_args *a)
{
    char why[256];
    mp_out o = {.f = stdout};
    if (a->out && !mp_out_open(&o, a->out, why, sizeof why)) {
        fprintf(stderr, "memprof diff: cannot write %s: %s\n", a->out, why);
        return MP_EXIT_IO;
    }
    int rc = s[0].has_prof && s[1].has_prof ? diff_traces(s, a, o.f) : diff_baselines(s, a, o.f);
    if (!a->out)
        return rc;
    if (rc != MP_EXIT_OK) {
        mp_out_abort(&o);
        return rc;
    }
    if (!mp_out_commit(&o, why, sizeof why)) {
        fprintf(stderr, "memprof diff: cannot write %s: %s\n", a->out, why);
        return MP_EXIT_IO;
    }
    return MP_EXIT_OK;
}

static int take(void *ctx, int id, const char *v)
{
    (void)id;
    return mp_opt_text_or_json("diff", v, &((diff_args *)ctx)->json);
}

int mp_cmd_diff(int argc, char **argv)
{
    side s[2];
    memset(s, 0, sizeof s);
    diff_args a = {0};
    static const mp_opt opts[] = {{"exact", 0, MP_ARG_FLAG, offsetof(diff_args, exact), 0},
                                  {"format", 0, MP_ARG_VALUE, 0, 1},
                                  {"output", 'o', MP_ARG_STRING, offsetof(diff_args, out), 0},
                                  {0}};
    const char *paths[2] = {NULL, NULL};
    int n = 0;
    int rc = mp_opts_parse(&(mp_cmd_spec){.cmd = "diff", .help = help, .opts = opts,
                                          .take = take, .ctx = &a, .pos = paths,
                                          .max_pos = 2, .pos_hint = " (two files: A B)"},
                           argc, argv, &n);
    if (rc != 0)
        return rc < 0 ? MP_EXIT_OK : rc;
    s[0].path = paths[0];
    s[1].path = paths[1];
    if (n < 2)
        return mp_usage_error("diff", "give two files: A (before) and B (after)");
    mp_cli_files f = {0};
    mp_cli_files_in(&f, paths[0]);
    mp_cli_files_in(&f, paths[1]);
    mp_cli_files_out(&f, a.out);
    if ((rc = mp_cli_files_check("diff", &f)) != 0)
        return rc;
    for (int i = 0; i < 2 && rc == MP_EXIT_OK; i++)
        rc = open_side(&s[i]);
    if (rc == MP_EXIT_OK)
        rc = write_diff(s, &a);
    fflush(stdout);
    for (int i = 0; i < 2; i++) {
        mp_baseline_free(&s[i].base);
        if (s[i].has_prof)
            mp_profile_free(&s[i].prof);
        mp_source_close(s[i].src);
    }
    return rc;
}
