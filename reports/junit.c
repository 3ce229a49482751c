/* JUnit XML of memprof check (see junit.h). Text goes through mp_xml_text (markup.h),
 * which escapes markup and replaces control characters and invalid UTF-8. */
#include "reports/junit.h"

#include <inttypes.h>
#include <string.h>

#include "reports/markup.h"
#include "reports/text_gate.h"
#include "reports/units.h"

/* The testcase name of a check: "peak <= limit", "static vs baseline". */
static void case_name(char *buf, size_t n, const mp_gate_check *c)
{
    snprintf(buf, n, "%s %s", mp_figure_name(c->figure),
             c->against == MP_GATE_LIMIT ? "<= limit" : "vs baseline");
}

/* "peak 1.2 MiB (1258291 B) is over the limit 1.0 MiB (1048576 B) by 200.0 KiB" */
static void failure_message(char *buf, size_t n, const mp_gate_check *c, const mp_tolerance *tol)
{
    char v[64], a[64], d[64], t[32];
    mp_fmt_bytes_x(v, sizeof v, c->value, true);
    mp_fmt_bytes_x(a, sizeof a, c->reference, true);
    mp_fmt_bytes(d, sizeof d, c->value > c->allowed ? c->value - c->allowed : 0);
    if (c->against == MP_GATE_LIMIT)
        snprintf(buf, n, "%s %s is over the limit %s by %s", mp_figure_name(c->figure), v, a,
                 d);
    else
        snprintf(buf, n, "%s %s is over the baseline %s (tolerance %s) by %s",
                 mp_figure_name(c->figure), v, a, mp_fmt_tolerance(t, sizeof t, tol, true), d);
}

mp_status mp_report_gate_junit(FILE *f, const char *subject, const mp_baseline *now,
                               const mp_gate_result *r, const mp_tolerance *tol,
                               mp_error *err)
{
    const char *cls = now->model && now->model[0] ? now->model : subject;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f, "<testsuites name=\"memprof\" tests=\"%zu\" failures=\"%zu\" errors=\"0\">\n",
            r->n_checks, r->n_failed);
    fprintf(f, "  <testsuite name=\"memprof\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" "
               "skipped=\"0\">\n", r->n_checks, r->n_failed);
    fprintf(f, "    <properties>\n      <property name=\"subject\" value=\"");
    mp_xml_text(f, subject, 0);
    fprintf(f, "\"/>\n      <property name=\"model\" value=\"");
    mp_xml_text(f, now->model, 0);
    fprintf(f, "\"/>\n      <property name=\"mode\" value=\"");
    mp_xml_text(f, now->mode, 0);
    fprintf(f, "\"/>\n      <property name=\"planner\" value=\"");
    mp_xml_text(f, now->planner, 0);
    fprintf(f, "\"/>\n    </properties>\n");
    for (size_t i = 0; i < r->n_checks; i++) {
        const mp_gate_check *c = &r->checks[i];
        char name[64], msg[320];
        case_name(name, sizeof name, c);
        fprintf(f, "    <testcase classname=\"memprof.");
        mp_xml_text(f, cls, 0);
        fprintf(f, "\" name=\"");
        mp_xml_text(f, name, 0);
        if (c->passed) {
            fprintf(f, "\"/>\n");
            continue;
        }
        failure_message(msg, sizeof msg, c, tol);
        fprintf(f, "\">\n      <failure type=\"%s\" message=\"",
                c->against == MP_GATE_LIMIT ? "limit" : "baseline");
        mp_xml_text(f, msg, 0);
        fprintf(f, "\">");
        mp_xml_text(f, msg, 0);
        /* what grew, tensor by tensor (against a baseline) */
        size_t rows = 0;
        for (size_t j = 0; c->against == MP_GATE_BASELINE && j < r->diff.n_tensors; j++) {
            const mp_gate_change *t = &r->diff.tensors[j];
            if (!(t->b > t->a || (t->in_b && !t->in_a)))
                continue;
            if (rows++ == 0)
                fprintf(f, "&#10;tensors that grew (baseline -&gt; now):");
            if (rows > MP_GATE_TENSORS_TOP) {
                fprintf(f, "&#10;  ... and %zu more", r->diff.n_grown - MP_GATE_TENSORS_TOP);
                break;
            }
            fprintf(f, "&#10;  ");
            mp_xml_text(f, t->name, 0);
            if (t->in_a)
                fprintf(f, ": %" PRIu64 " B -&gt; %" PRIu64 " B", t->a, t->b);
            else
                fprintf(f, ": new, %" PRIu64 " B", t->b);
        }
        fprintf(f, "</failure>\n    </testcase>\n");
    }
    fprintf(f, "  </testsuite>\n</testsuites>\n");
    if (ferror(f))
        return mp_fail(err, MP_ERR_IO, "write error");
    return MP_OK;
}
