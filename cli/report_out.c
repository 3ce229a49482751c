/* Report output shared by `memprof report` and `memprof run --format`: the format names,
 * and one function that computes a trace's profile and writes it in a format, atomically
 * (the profile is computed before the output file is opened, and a failure removes it). */
#include <stdio.h>
#include <string.h>

#include "analyzers/profile.h"
#include "cli/cli.h"
#include "reports/chrome_trace.h"
#include "reports/html_report.h"
#include "reports/json_profile.h"
#include "reports/svg_charts.h"
#include "reports/text_profile.h"

static const char *const k_formats[MP_FMT_COUNT] = {"text", "json", "svg", "html", "chrome"};

int mp_report_format_parse(const char *name)
{
    for (int i = 0; i < MP_FMT_COUNT; i++)
        if (strcmp(name, k_formats[i]) == 0)
            return i;
    return -1;
}

int mp_cli_write_report(const char *cmd, mp_source *src, mp_report_format fmt,
                        const char *path, const mp_report_opts *o)
{
    mp_error err = {0};
    mp_profile p;
    memset(&p, 0, sizeof p);
    bool have_profile = false;
    if (fmt != MP_FMT_CHROME) { /* chrome streams the events itself */
        mp_profile_options po = {.max_points = o ? o->max_points : 0};
        if (!po.max_points && fmt == MP_FMT_HTML) /* the page zooms: every step it can */
            po.max_points = MP_HTML_POINTS;
        if (mp_profile_compute(src, &po, &p, &err) != MP_OK)
            return mp_report_error(&err);
        have_profile = true;
    }
    char why[256];
    mp_out out;
    if (!mp_out_open(&out, path, why, sizeof why)) {
        if (have_profile)
            mp_profile_free(&p);
        fprintf(stderr, "memprof %s: cannot write %s: %s\n", cmd, path, why);
        return MP_EXIT_IO;
    }
    mp_status st = MP_OK;
    switch (fmt) {
    case MP_FMT_TEXT:
        mp_report_profile_text(out.f, &p, o && o->exact);
        break;
    case MP_FMT_JSON:
        st = mp_report_profile_json(out.f, &p, &err);
        break;
    case MP_FMT_SVG:
        mp_report_svg(out.f, &p);
        break;
    case MP_FMT_HTML:
        mp_report_html(out.f, &p);
        break;
    case MP_FMT_CHROME:
        st = mp_report_chrome(src, out.f, &err);
        break;
    default:
        st = mp_fail(&err, MP_ERR_ARG, "unknown report format");
        break;
    }
    if (have_profile)
        mp_profile_free(&p);
    if (st != MP_OK) {
        mp_out_abort(&out);
        return mp_report_error(&err);
    }
    if (!mp_out_commit(&out, why, sizeof why)) {
        fprintf(stderr, "memprof %s: cannot write %s: %s\n", cmd, path ? path : "stdout", why);
        return MP_EXIT_IO;
    }
    return MP_EXIT_OK;
}
