/* memprof bench's output as text and JSON, and the timing statistics' JSON (see
 * bench_report.h). */
#include "reports/bench_report.h"

#include <math.h>
#include <string.h>

#include "reports/units.h"

static const char *const k_phase[MP_BENCH_PHASES] = {"load", "prepare", "first run",
                                                     "later runs"};
static const char *const k_phase_key[MP_BENCH_PHASES] = {"load", "prepare", "first_run",
                                                         "later_runs"};

double mp_stats_ratio(double a, double b)
{
    return b > 0 ? a / b : 0;
}

/* A time in whole nanoseconds (a mean, median or geometric mean rounded to the nearest). */
static json_int_t ns_int(double ns)
{
    return ns > 0 ? (json_int_t)(ns + 0.5) : 0;
}

json_t *mp_stats_json(const mp_stats *st)
{
    return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "n", (json_int_t)st->n, "mean_ns",
                     ns_int(st->mean_ns), "median_ns", ns_int(st->median_ns), "min_ns",
                     ns_int(st->min_ns), "max_ns", ns_int(st->max_ns), "geomean_ns",
                     ns_int(st->geomean_ns));
}

static void shapes_line(FILE *f, const mp_bench_report *r)
{
    char line[512] = "";
    size_t at = 0;
    for (int i = 0; i < r->n_shapes && at < sizeof line; i++) {
        const mp_bench_shape *s = &r->shapes[i];
        at += (size_t)snprintf(line + at, sizeof line - at, "%s%s=[", at ? " " : "", s->name);
        for (int d = 0; d < s->rank && at < sizeof line; d++)
            at += (size_t)snprintf(line + at, sizeof line - at, d ? ",%d" : "%d", s->dims[d]);
        if (at < sizeof line)
            at += (size_t)snprintf(line + at, sizeof line - at, "]");
    }
    if (at)
        mp_text_line(f, "  shapes %s (at %s)", line, r->shape_at);
}

static void text_times(FILE *f, const mp_bench_report *r)
{
    double fastest = INFINITY, div; /* the table's unit from the fastest later-run median */
    for (int i = 0; i < r->n_rows; i++)
        if (r->rows[i].st[MP_BENCH_PHASES - 1].n > 0)
            fastest = fmin(fastest, r->rows[i].st[MP_BENCH_PHASES - 1].median_ns);
    const char *unit = mp_time_unit(fastest, &div);
    mp_text_line(f, "Time, %s          n      mean    median       min       max   geomean  "
                    "/static", unit);
    for (int ph = 0; ph < MP_BENCH_PHASES; ph++) {
        mp_text_line(f, "%s", k_phase[ph]);
        double base = r->rows[0].st[ph].median_ns;
        for (int i = 0; i < r->n_rows; i++) {
            const mp_stats *s = &r->rows[i].st[ph];
            if (s->n == 0) {
                mp_text_line(f, "  %-12s    -  (built from the session's graph)", r->rows[i].name);
                continue;
            }
            mp_text_line(f, "  %-12s %4zu %9.3f %9.3f %9.3f %9.3f %9.3f %7.2f", r->rows[i].name,
                         s->n, s->mean_ns / div, s->median_ns / div, s->min_ns / div,
                         s->max_ns / div, s->geomean_ns / div,
                         mp_stats_ratio(s->median_ns, base));
        }
    }
    mp_text_line(f, "(/static: the median's ratio to static's%s)",
                 r->peer ? "; xnnpack's prepare: creating it" : "");
}

static void text_memory(FILE *f, const mp_bench_report *r)
{
    char x[3][32];
    mp_text_line(f, "Memory: the first run, the later run that allocated most, the heap peak");
    mp_text_line(f, "  %-9s %15s %21s", "", "allocations", "bytes allocated");
    mp_text_line(f, "  %-9s %7s %7s %10s %10s %10s %8s", "mode", "first", "later", "first",
                 "later", "peak", "/static");
    for (int i = 0; i < r->n_rows; i++) {
        const mp_bench_row *c = &r->rows[i];
        mp_fmt_bytes(x[0], sizeof x[0], c->first_bytes);
        mp_fmt_bytes(x[1], sizeof x[1], c->later_bytes);
        mp_fmt_bytes(x[2], sizeof x[2], c->peak);
        mp_text_line(f, "  %-9s %7llu %7llu %10s %10s %10s %8.2f", c->name,
                     (unsigned long long)c->first_allocs, (unsigned long long)c->later_allocs,
                     x[0], x[1], x[2], mp_stats_ratio((double)c->peak, (double)r->rows[0].peak));
    }
    mp_text_line(f, "(our modes: the heap in each session's trace, peak over its whole life;");
    const mp_bench_row *p = r->peer ? &r->rows[r->n_rows - 1] : NULL;
    if (p) {
        mp_fmt_bytes(x[0], sizeof x[0], p->workspace);
        mp_fmt_bytes(x[1], sizeof x[1], p->other);
        mp_fmt_bytes(x[2], sizeof x[2], p->external + p->static_copy);
        mp_text_line(f, " xnnpack: what XNNPACK allocated; after setup a workspace of %s and",
                     x[0]);
        mp_text_line(f, " %s of weights, operators and tables; beside it, the peer's own",
                     x[1]);
        mp_text_line(f, " input/output buffers and constant copies: %s)", x[2]);
    } else {
        mp_text_line(f, " see 'memprof run' for one mode's whole report)");
    }
}

static void text_rss(FILE *f, const mp_bench_report *r)
{
    char x[4][32];
    if (!r->rss_ok) {
        mp_text_line(f, "Resident memory: /proc/self/status unreadable");
        return;
    }
    mp_text_line(f, "Resident memory after each phase (the whole process: every mode, the");
    mp_text_line(f, "peer and the recorders share it; 'recorded' = heap the sessions and the");
    mp_text_line(f, "peer held then)");
    mp_text_line(f, "  after                        RSS     change        HWM    recorded");
    for (int i = 0; i < r->n_rss; i++) {
        const mp_bench_rss *s = &r->rss[i];
        mp_fmt_bytes(x[0], sizeof x[0], s->rss);
        if (i)
            mp_fmt_sbytes(x[1], sizeof x[1], (int64_t)s->rss - (int64_t)r->rss[i - 1].rss);
        else
            snprintf(x[1], sizeof x[1], "-");
        if (i && x[1][0] != '-')
            memmove(x[1] + 1, x[1], strlen(x[1]) + 1), x[1][0] = '+';
        mp_fmt_bytes(x[2], sizeof x[2], s->hwm);
        mp_fmt_bytes(x[3], sizeof x[3], s->recorded);
        mp_text_line(f, "  %-22s %10s %10s %10s %11s", s->label, x[0], x[1], x[2], x[3]);
    }
}

void mp_report_bench_text(FILE *f, const mp_bench_report *r)
{
    mp_text_title(f, "memprof bench", r->model);
    mp_text_line(f, "  %ld thread%s; per mode: load, prepare, first run, %ld warm-up, %ld timed "
                    "runs", r->threads, r->threads == 1 ? "" : "s", r->warmup, r->runs);
    if (r->plan_at)
        mp_text_line(f, "  static and auto modes plan at %s (--plan-at)",
                     strcmp(r->plan_at, "first-run") == 0 ? "the first run" : r->plan_at);
    if (!r->huge_pages)
        mp_text_line(f, "  --no-huge-pages: arenas and packed weights on ordinary pages");
    shapes_line(f, r);
    mp_text_line(f, "%s", "");
    text_times(f, r);
    mp_text_line(f, "%s", "");
    text_memory(f, r);
    mp_text_line(f, "%s", "");
    text_rss(f, r);
}

void mp_json_set_u64(json_t *o, const char *key, uint64_t v)
{
    json_object_set_new(o, key, json_integer((json_int_t)v));
}

static json_t *row_memory(const mp_bench_report *r, const mp_bench_row *c)
{
    json_t *mem = json_object();
    mp_json_set_u64(mem, "first_run_allocations", c->first_allocs);
    mp_json_set_u64(mem, "first_run_bytes", c->first_bytes);
    mp_json_set_u64(mem, "later_run_allocations_max", c->later_allocs);
    mp_json_set_u64(mem, "later_run_max_bytes", c->later_bytes);
    mp_json_set_u64(mem, "peak_bytes", c->peak);
    json_object_set_new(mem, "peak_ratio_to_static",
                        json_real(mp_stats_ratio((double)c->peak, (double)r->rows[0].peak)));
    if (c->is_peer) {
        mp_json_set_u64(mem, "workspace_bytes", c->workspace);
        mp_json_set_u64(mem, "other_bytes", c->other);
        mp_json_set_u64(mem, "live_bytes", c->live);
        mp_json_set_u64(mem, "external_bytes", c->external);
        mp_json_set_u64(mem, "static_copy_bytes", c->static_copy);
        mp_json_set_u64(mem, "run_allocations", c->run_allocations);
    } else {
        mp_json_set_u64(mem, "static_bytes", c->static_bytes);
        mp_json_set_u64(mem, "dynamic_bytes", c->dynamic_bytes);
        mp_json_set_u64(mem, "dup_bytes", c->dup_bytes);
    }
    return mem;
}

static json_t *row_json(const mp_bench_report *r, const mp_bench_row *c)
{
    json_t *o = json_object(), *ratio = json_object();
    json_object_set_new(o, "name", json_string(c->name));
    json_object_set_new(o, "kind", json_string(c->is_peer ? "peer" : "memory_mode"));
    for (int ph = 0; ph < MP_BENCH_PHASES; ph++) {
        const mp_stats *s = &c->st[ph];
        json_object_set_new(o, k_phase_key[ph], s->n ? mp_stats_json(s) : json_null());
        json_object_set_new(ratio, k_phase_key[ph],
                            s->n ? json_real(mp_stats_ratio(s->median_ns,
                                                            r->rows[0].st[ph].median_ns))
                                 : json_null());
    }
    json_object_set_new(o, "ratio_to_static", ratio);
    json_object_set_new(o, "memory", row_memory(r, c));
    return o;
}

static json_t *to_json(const mp_bench_report *r)
{
    json_t *root = json_object(), *modes = json_array(), *rss = json_array(),
           *shapes = json_array();
    json_object_set_new(root, "format", json_string("memprof-bench"));
    json_object_set_new(root, "version", json_integer(2));
    json_object_set_new(root, "model", json_string(r->model));
    json_object_set_new(root, "threads", json_integer(r->threads));
    json_object_set_new(root, "runs", json_integer(r->runs));
    json_object_set_new(root, "warmup", json_integer(r->warmup));
    json_object_set_new(root, "huge_pages", json_boolean(r->huge_pages));
    json_object_set_new(root, "shape_at", json_string(r->shape_at));
    for (int i = 0; i < r->n_shapes; i++) {
        const mp_bench_shape *s = &r->shapes[i];
        json_t *d = json_array();
        for (int k = 0; k < s->rank; k++)
            json_array_append_new(d, json_integer(s->dims[k]));
        json_array_append_new(shapes, json_pack("{s:i, s:s, s:o}", "input", s->input, "name",
                                                s->name, "dims", d));
    }
    json_object_set_new(root, "shapes", shapes);
    for (int i = 0; i < r->n_rows; i++)
        json_array_append_new(modes, row_json(r, &r->rows[i]));
    json_object_set_new(root, "modes", modes);
    for (int i = 0; i < r->n_rss; i++)
        json_array_append_new(rss, json_pack("{s:s, s:I, s:I, s:I}", "after", r->rss[i].label,
                                             "rss_bytes", (json_int_t)r->rss[i].rss, "hwm_bytes",
                                             (json_int_t)r->rss[i].hwm, "recorded_bytes",
                                             (json_int_t)r->rss[i].recorded));
    json_object_set_new(root, "rss", rss);
    return root;
}

mp_status mp_report_bench_json(FILE *f, const mp_bench_report *r, mp_error *err)
{
    return mp_report_timing_json(f, to_json(r), err);
}

mp_status mp_report_timing_json(FILE *f, json_t *root, mp_error *err)
{
    size_t fl = JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9);
    int bad = !root || json_dumpf(root, f, fl) != 0;
    json_decref(root);
    if (bad || fputc('\n', f) == EOF)
        return mp_fail(err, MP_ERR_IO, "cannot write the JSON output");
    return MP_OK;
}
