/* The data island of the HTML report (html_internal.h): a trace's figures as JSON, in
 * columns, for reports/html/report.js to draw, zoom and search. Layout only: every figure
 * comes from the profile, exact (byte counts as integers), never rounded for drawing. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "reports/chart_style.h"
#include "reports/html_internal.h"
#include "reports/html_report.h"
#include "reports/markup.h"

void mp_html_json_str(FILE *f, const char *s)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    while (*s) {
        uint32_t cp;
        size_t len = mp_utf8_next(s, &cp);
        if (cp == '"' || cp == '\\')
            fprintf(f, "\\%c", (char)cp);
        else if (cp < 0x20 || cp == 0x7f || cp == '<' || cp == '>' || cp == '&' ||
                 (cp >= 0x80 && cp < 0xa0))
            fprintf(f, "\\u%04x", (unsigned)cp);
        else if (cp == 0xfffd || cp == 0xfffe || cp == 0xffff)
            fputs("\\ufffd", f); /* invalid UTF-8 decodes as U+FFFD too */
        else
            fwrite(s, 1, len, f);
        s += len;
    }
    fputc('"', f);
}

static void key(FILE *f, const char *k)
{
    fprintf(f, "\"%s\":", k);
}

/* One column of the timeline's points: "name":[v,v,...]. */
#define TL_COLUMN(f, name, tl, fmt, expr)                                                     \
    do {                                                                                      \
        key(f, name);                                                                         \
        fputc('[', f);                                                                        \
        for (size_t i_ = 0; i_ < (tl)->n; i_++) {                                             \
            const mp_tl_point *pt = &(tl)->pts[i_];                                           \
            fprintf(f, i_ ? "," fmt : fmt, (expr));                                           \
        }                                                                                     \
        fputs("],", f);                                                                       \
    } while (0)

static const mp_timeline *pick_timeline(const mp_profile *p, bool *by_step)
{
    *by_step = p->by_step.n > 0 && p->by_step.pts && p->n_steps > 0;
    if (*by_step)
        return &p->by_step;
    if (p->by_event.n > 0 && p->by_event.pts)
        return &p->by_event;
    return NULL;
}

/* At most MP_HTML_POINTS points are embedded (a profile asked for more with --points): runs
 * of consecutive points merge into their highest-heap one (the peak's point wins its run),
 * covering the events and steps of the whole run, as the profile merges events. Returns tl
 * itself when it is small enough, else *tmp (free its pts), NULL when out of memory. */
static const mp_timeline *bounded(const mp_timeline *tl, mp_timeline *tmp)
{
    if (tl->n <= MP_HTML_POINTS)
        return tl;
    size_t per = (tl->n + MP_HTML_POINTS - 1) / MP_HTML_POINTS;
    *tmp = *tl;
    tmp->n = (tl->n + per - 1) / per;
    tmp->pts = malloc(tmp->n * sizeof *tmp->pts);
    if (!tmp->pts)
        return NULL;
    tmp->per_point = tl->per_point * per;
    for (size_t g = 0; g < tmp->n; g++) {
        size_t a = g * per, b = a + per < tl->n ? a + per : tl->n, best = a;
        for (size_t i = a; i < b; i++) {
            if (i == tl->peak) {
                best = i;
                break;
            }
            if (tl->pts[i].heap > tl->pts[best].heap)
                best = i;
        }
        if (tl->peak >= a && tl->peak < b)
            tmp->peak = g;
        mp_tl_point *q = &tmp->pts[g];
        *q = tl->pts[best];
        q->ev_first = tl->pts[a].ev_first;
        q->ev_last = tl->pts[b - 1].ev_last;
        q->step_first = tl->pts[a].step_first;
        q->step_last = tl->pts[b - 1].step_last;
        q->rss = tl->pts[b - 1].rss;
    }
    return tmp;
}

static void data_timeline(FILE *f, const mp_profile *p)
{
    bool by_step;
    mp_timeline tmp = {0};
    const mp_timeline *tl = pick_timeline(p, &by_step);
    if (tl)
        tl = bounded(tl, &tmp);
    key(f, "tl");
    if (!tl) {
        fputs("null", f);
        return;
    }
    fprintf(f, "{\"by\":\"%s\",\"per\":%" PRIu64 ",\"peak\":%zu,\"nSteps\":%" PRIu64 ",",
            by_step ? "step" : "event", tl->per_point, tl->peak, p->n_steps);
    TL_COLUMN(f, "f", tl, "%" PRIu64, pt->step_first);
    TL_COLUMN(f, "s", tl, "%" PRIu64, pt->step_last);
    TL_COLUMN(f, "e0", tl, "%" PRIu64, pt->ev_first);
    TL_COLUMN(f, "e1", tl, "%" PRIu64, pt->ev_last);
    TL_COLUMN(f, "t", tl, "%" PRIu64, pt->t_ns);
    TL_COLUMN(f, "heap", tl, "%" PRIu64, pt->heap);
    TL_COLUMN(f, "ph", tl, "%" PRId32, pt->phase_kind);
    TL_COLUMN(f, "run", tl, "%" PRIu64, pt->run);
    TL_COLUMN(f, "op", tl, "%" PRId32, pt->op);
    if (tl->has_rss)
        TL_COLUMN(f, "rss", tl, "%" PRIu64, pt->rss);
    key(f, "live");
    fputc('[', f);
    for (int k = 0; k < MP_KIND_COUNT; k++) {
        fputs(k ? ",[" : "[", f);
        for (size_t i = 0; i < tl->n; i++)
            fprintf(f, i ? ",%" PRIu64 : "%" PRIu64, tl->pts[i].live[k]);
        fputc(']', f);
    }
    fputs("]}", f);
    free(tmp.pts);
}

#define COLUMN(f, name, n, fmt, expr)                                                         \
    do {                                                                                      \
        key(f, name);                                                                         \
        fputc('[', f);                                                                        \
        for (size_t i = 0; i < (n); i++)                                                      \
            fprintf(f, i ? "," fmt : fmt, (expr));                                            \
        fputc(']', f);                                                                        \
    } while (0)

static void data_tensors(FILE *f, const mp_profile *p)
{
    const mp_trace_meta *m = p->meta;
    size_t n = p->lifetimes ? p->n_lifetimes : 0;
    const mp_lifetime *l = p->lifetimes;
    key(f, "tensors");
    fputc('{', f);
    key(f, "name");
    fputc('[', f);
    for (size_t i = 0; i < n; i++) {
        if (i)
            fputc(',', f);
        mp_html_json_str(f, l[i].name);
    }
    fputs("],", f);
    COLUMN(f, "index", n, "%" PRId32, l[i].tensor);
    fputc(',', f);
    COLUMN(f, "bytes", n, "%" PRIu64, l[i].bytes);
    fputc(',', f);
    COLUMN(f, "mgr", n, "%u", (unsigned)l[i].manager);
    fputc(',', f);
    COLUMN(f, "first", n, "%" PRId32, l[i].first_op);
    fputc(',', f);
    COLUMN(f, "last", n, "%" PRId32, l[i].last_op);
    fputc(',', f);
    COLUMN(f, "off", n, "%" PRId64, l[i].offset);
    fputc(',', f);
    COLUMN(f, "arena", n, "%" PRIu64, l[i].arena_id);
    fputc(',', f);
    COLUMN(f, "prod", n, "%" PRId32, l[i].producer);
    fputc(',', f);
    COLUMN(f, "cst", n, "%d",
           m && m->tensors && l[i].tensor >= 0 && l[i].tensor < m->n_tensors &&
                   m->tensors[l[i].tensor].is_const
               ? 1
               : 0);
    fputs("},", f);
}

static void int_list(FILE *f, const int32_t *v, int32_t n)
{
    fputc('[', f);
    for (int32_t i = 0; v && i < n; i++)
        fprintf(f, i ? ",%" PRId32 : "%" PRId32, v[i]);
    fputc(']', f);
}

static void data_ops(FILE *f, const mp_profile *p)
{
    const mp_trace_meta *m = p->meta;
    size_t n = p->ops ? p->n_ops : 0;
    bool have_meta = m && m->ops;
    key(f, "ops");
    fputc('{', f);
    key(f, "name");
    fputc('[', f);
    for (size_t i = 0; i < n; i++) {
        const char *name = p->ops[i].name;
        if (!name && have_meta && p->ops[i].op >= 0 && p->ops[i].op < m->n_ops)
            name = m->ops[p->ops[i].op].name;
        if (i)
            fputc(',', f);
        mp_html_json_str(f, name);
    }
    fputs("],", f);
    for (int side = 0; side < 2; side++) { /* "in": each operator's inputs, "out": outputs */
        key(f, side ? "out" : "in");
        fputc('[', f);
        for (size_t i = 0; i < n; i++) {
            int32_t o = p->ops[i].op;
            bool ok = have_meta && o >= 0 && o < m->n_ops;
            if (i)
                fputc(',', f);
            if (!ok)
                int_list(f, NULL, 0);
            else if (side)
                int_list(f, m->ops[o].outputs, m->ops[o].n_outputs);
            else
                int_list(f, m->ops[o].inputs, m->ops[o].n_inputs);
        }
        fputs("],", f);
    }
    const mp_op_report *o = p->ops;
    COLUMN(f, "index", n, "%" PRId32, o[i].op);
    fputc(',', f);
    COLUMN(f, "steps", n, "%" PRIu64, o[i].n_exec);
    fputc(',', f);
    COLUMN(f, "time", n, "%" PRIu64, o[i].time_ns);
    fputc(',', f);
    COLUMN(f, "alloc", n, "%" PRIu64, o[i].bytes_alloc);
    fputc(',', f);
    COLUMN(f, "scratch", n, "%" PRIu64, o[i].scratch_bytes);
    fputc(',', f);
    COLUMN(f, "kernel", n, "%" PRIu64, o[i].kernel_bytes);
    fputc(',', f);
    COLUMN(f, "outputs", n, "%" PRIu64, o[i].output_bytes);
    fputs("},", f);
}

static void data_arena(FILE *f, const mp_profile *p)
{
    const mp_arena_report *a = NULL;
    if (p->arenas && p->n_arenas)
        a = p->reference_arena >= 0 && (size_t)p->reference_arena < p->n_arenas
                ? &p->arenas[p->reference_arena]
                : &p->arenas[0];
    key(f, "arena");
    if (!a) {
        fputs("null", f);
        return;
    }
    fprintf(f,
            "{\"id\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"used\":%" PRIu64 ",\"lb\":%" PRIu64
            ",\"lbOp\":%" PRId32 ",\"naive\":%" PRIu64 ",",
            a->id, a->bytes, a->used, a->lower_bound, a->lower_bound_op, a->naive);
    size_t nf = a->free_at_op && a->n_ops > 0 ? (size_t)a->n_ops : 0;
    COLUMN(f, "free", nf, "%" PRIu64, a->free_at_op[i]);
    fputs(",\"slots\":{", f);
    size_t n = a->slots ? a->n_slots : 0;
    const mp_arena_slot *s = a->slots;
    COLUMN(f, "t", n, "%" PRId32, s[i].tensor);
    fputc(',', f);
    COLUMN(f, "off", n, "%" PRIu64, s[i].offset);
    fputc(',', f);
    COLUMN(f, "bytes", n, "%" PRIu64, s[i].bytes);
    fputc(',', f);
    COLUMN(f, "first", n, "%" PRId32, s[i].first_op);
    fputc(',', f);
    COLUMN(f, "last", n, "%" PRId32, s[i].last_op);
    fputc(',', f);
    COLUMN(f, "kind", n, "%u", (unsigned)s[i].kind);
    fputs("}}", f);
}

void mp_html_data_open(FILE *f, const char *page)
{
    fputs("<script type=\"application/json\" id=\"mp-data\">{\"page\":", f);
    mp_html_json_str(f, page);
    fputs(",\"kinds\":[", f);
    for (int k = 0; k < MP_KIND_COUNT; k++)
        fprintf(f, "%s\"%s\"", k ? "," : "", mp_kind_name(k));
    fputs("],\"kindColors\":[", f);
    for (int k = 0; k < MP_KIND_COUNT; k++)
        fprintf(f, "%s\"%s\"", k ? "," : "", mp_svg_kind_color(k));
    /* stacking order of the timeline, as the SVG's, then any other kind (const is not heap) */
    static const int first[] = {MP_KIND_STATIC, MP_KIND_KERNEL, MP_KIND_ENGINE,
                                MP_KIND_IO,     MP_KIND_DYNAMIC, MP_KIND_SCRATCH};
    fputs("],\"stack\":[", f);
    for (size_t i = 0; i < sizeof first / sizeof first[0]; i++)
        fprintf(f, "%s%d", i ? "," : "", first[i]);
    for (int k = 0; k < MP_KIND_COUNT; k++) {
        bool listed = k == MP_KIND_CONST;
        for (size_t i = 0; i < sizeof first / sizeof first[0]; i++)
            listed = listed || first[i] == k;
        if (!listed)
            fprintf(f, ",%d", k);
    }
    fputs("],\"phases\":[", f);
    for (int k = 0; k < MP_PHASE_KIND_COUNT; k++)
        fprintf(f, "%s\"%s\"", k ? "," : "", mp_phase_kind_name(k));
    fputs("],\"managers\":[", f);
    for (int k = 0; k < MP_MGR_COUNT; k++)
        fprintf(f, "%s\"%s\"", k ? "," : "", mp_svg_manager_label(k));
    fputs("],\"managerColors\":[", f);
    for (int k = 0; k < MP_MGR_COUNT; k++)
        fprintf(f, "%s\"%s\"", k ? "," : "", mp_svg_manager_color(k));
    fputs("],\"traces\":[\n", f);
}

void mp_html_data_trace(FILE *f, const mp_profile *p, const char *label, bool first)
{
    const mp_trace_meta *m = p->meta;
    const mp_summary *s = &p->summary;
    if (!first)
        fputs(",\n", f);
    fputc('{', f);
    key(f, "label");
    mp_html_json_str(f, label);
    fputc(',', f);
    key(f, "model");
    mp_html_json_str(f, m && m->model ? m->model : "trace");
    fputc(',', f);
    key(f, "mode");
    mp_html_json_str(f, m ? m->mode : NULL);
    fputc(',', f);
    key(f, "planner");
    mp_html_json_str(f, m ? m->planner : NULL);
    fprintf(f, ",\"events\":%zu,\"refRun\":%" PRId64 ",", s->n_events, p->reference_run);
    fprintf(f,
            "\"peak\":{\"heap\":%" PRIu64 ",\"event\":%" PRId64 ",\"run\":%" PRIu64
            ",\"op\":%" PRId32 ",\"phase\":%" PRId32 "},\n",
            s->peak_heap, s->peak.event, s->peak.run, s->peak.op, s->peak.phase_kind);
    data_ops(f, p);
    fputc('\n', f);
    data_tensors(f, p);
    fputc('\n', f);
    data_arena(f, p);
    fputs(",\n", f);
    data_timeline(f, p);
    fputc('}', f);
}

void mp_html_data_close(FILE *f)
{
    fputs("]}</script>\n", f);
}
