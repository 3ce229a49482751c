/* memprof report: analyse a saved trace (timeline, lifetimes, peak, plan quality, per
 * operator, waste) and write it as text, JSON, SVG, HTML or a Chrome trace; or compare two
 * traces. Traces are streamed, so a trace of millions of events is read in bounded memory. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/profile.h"
#include "analyzers/source.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "reports/html_report.h"
#include "reports/json_profile.h"
#include "reports/text_profile.h"

static void help(void)
{
    printf("Usage: memprof report TRACE.json [options]\n"
           "       memprof report BEFORE.json AFTER.json [options]   (compare two traces)\n\n"
           "Analyses a trace saved by 'memprof run --trace' and writes:\n"
           "  text    the run summary, a timeline of the heap, every tensor's lifetime and\n"
           "          manager, plan quality per arena (against the lower bound and naive,\n"
           "          fragmentation), per operator bytes, scratch and time, and waste\n"
           "          (duplicated bytes, blocks never used, copies); 80 columns\n"
           "  json    every figure of the text report (format memprof-report, version 1;\n"
           "          docs/json.md)\n"
           "  svg     a memory timeline stacked by kind, a lifetime chart and the arena\n"
           "          layout, in one SVG document (hover a shape for its tensor)\n"
           "  html    the three charts and every table in one self-contained file\n"
           "  chrome  Chrome trace event JSON for Perfetto or chrome://tracing: operators\n"
           "          as slices nested in their run, a counter track per kind of memory\n"
           "With two traces: what grew and what shrank, per kind of memory and per tensor\n"
           "(text, json as format memprof-diff, or html with both timelines aligned).\n\n"
           "Options:\n"
           "  --format F           text (default), json, svg, html or chrome\n"
           "  -o, --output PATH    write there instead of stdout (atomically: never a\n"
           "                       partial file)\n"
           "  --exact              exact byte counts, and every row of every table (text)\n"
           "  --points N           most points per timeline (default 2000; peaks are kept)\n"
           "  -h, --help           show this help\n\n"
           "Exit codes: 0 ok; 2 usage; 3 a file cannot be read or written; 4 malformed\n"
           "trace (the message names the event, line and field); 7 out of memory.\n\n"
           "Examples:\n"
           "  memprof run zoo:mobilenet_v2 --runs 3 --trace mnv2.json\n"
           "  memprof report mnv2.json\n"
           "  memprof report mnv2.json --format html -o mnv2.html\n"
           "  memprof report before.json after.json\n\n"
           "More: docs/report.md and docs/json.md in memprof's sources.\n");
}

typedef struct report_args {
    const char *traces[2];
    int n_traces;
    const char *out;
    mp_report_format fmt;
    mp_report_opts opts;
} report_args;

enum { O_FORMAT = 1, O_POINTS };

static int take(void *ctx, int id, const char *v)
{
    report_args *a = ctx;
    long n;
    if (id == O_FORMAT) {
        int f = mp_report_format_parse(v);
        if (f < 0)
            return mp_usage_error("report", "--format takes text, json, svg, html or "
                                            "chrome, not '%s'", v);
        a->fmt = (mp_report_format)f;
        return 0;
    }
    if (!mp_parse_int(v, 2, 1000000, &n))
        return mp_usage_error("report", "--points takes 2..1000000, not '%s'", v);
    a->opts.max_points = (size_t)n;
    return 0;
}

static int parse(int argc, char **argv, report_args *a)
{
    static const mp_opt opts[] = {
        {"format", 0, MP_ARG_VALUE, 0, O_FORMAT},
        {"output", 'o', MP_ARG_STRING, offsetof(report_args, out), 0},
        {"exact", 0, MP_ARG_FLAG, offsetof(report_args, opts.exact), 0},
        {"points", 0, MP_ARG_VALUE, 0, O_POINTS}, {0}};
    memset(a, 0, sizeof *a);
    int rc = mp_opts_parse(&(mp_cmd_spec){.cmd = "report", .help = help, .opts = opts,
                                          .take = take, .ctx = a, .pos = a->traces,
                                          .max_pos = 2,
                                          .pos_hint = " (at most two traces)",
                                          .missing = "no TRACE.json given"},
                           argc, argv, &a->n_traces);
    if (rc != 0)
        return rc;
    if (a->n_traces == 2 && a->fmt != MP_FMT_TEXT && a->fmt != MP_FMT_JSON &&
        a->fmt != MP_FMT_HTML)
        return mp_usage_error("report", "two traces are compared as text, json or html only");
    mp_cli_files f = {0};
    for (int t = 0; t < a->n_traces; t++)
        mp_cli_files_in(&f, a->traces[t]);
    mp_cli_files_out(&f, a->out);
    return mp_cli_files_check("report", &f);
}

static int diff(const report_args *a, mp_source *src[2])
{
    mp_error err = {0};
    mp_profile p[2];
    memset(p, 0, sizeof p);
    mp_profile_diff d;
    memset(&d, 0, sizeof d);
    mp_profile_options po = {.max_points = a->opts.max_points};
    if (!po.max_points && a->fmt == MP_FMT_HTML)
        po.max_points = MP_HTML_POINTS;
    int rc = MP_EXIT_OK;
    for (int i = 0; i < 2 && rc == MP_EXIT_OK; i++)
        if (mp_profile_compute(src[i], &po, &p[i], &err) != MP_OK)
            rc = mp_report_error(&err);
    if (rc == MP_EXIT_OK && mp_profile_diff_compute(&p[0], &p[1], &d, &err) != MP_OK)
        rc = mp_report_error(&err);
    if (rc == MP_EXIT_OK) {
        char why[256];
        mp_out out;
        if (!mp_out_open(&out, a->out, why, sizeof why)) {
            fprintf(stderr, "memprof report: cannot write %s: %s\n", a->out, why);
            rc = MP_EXIT_IO;
        } else {
            mp_status st = MP_OK;
            if (a->fmt == MP_FMT_JSON)
                st = mp_report_diff_json(out.f, &p[0], &p[1], &d, &err);
            else if (a->fmt == MP_FMT_HTML)
                mp_report_diff_html(out.f, &p[0], &p[1], &d);
            else
                mp_report_diff_text(out.f, &p[0], &p[1], &d, a->opts.exact);
            if (st != MP_OK) {
                mp_out_abort(&out);
                rc = mp_report_error(&err);
            } else if (!mp_out_commit(&out, why, sizeof why)) {
                fprintf(stderr, "memprof report: cannot write %s: %s\n",
                        a->out ? a->out : "stdout", why);
                rc = MP_EXIT_IO;
            }
        }
    }
    mp_profile_diff_free(&d);
    mp_profile_free(&p[0]);
    mp_profile_free(&p[1]);
    return rc;
}

int mp_cmd_report(int argc, char **argv)
{
    report_args a;
    int rc = parse(argc, argv, &a);
    if (rc != 0)
        return rc < 0 ? MP_EXIT_OK : rc;
    mp_source *src[2] = {NULL, NULL};
    for (int i = 0; i < a.n_traces; i++) {
        mp_error err = {0};
        if (mp_source_open(a.traces[i], &src[i], &err) != MP_OK) {
            rc = mp_report_error(&err);
            break;
        }
    }
    if (rc == MP_EXIT_OK)
        rc = a.n_traces == 2 ? diff(&a, src)
                             : mp_cli_write_report("report", src[0], a.fmt, a.out, &a.opts);
    mp_source_close(src[0]);
    mp_source_close(src[1]);
    return rc;
}
