/* memprof scenarios' output as text and JSON (see scenarios_report.h). */
#include "reports/scenarios_report.h"

#include <jansson.h>
#include <string.h>

#include "reports/units.h"

const char *mp_scenario_flags(const mp_scenario_case *c)
{
    return c->flag_dup && c->flag_alloc ? "dup,alloc" : c->flag_dup ? "dup"
           : c->flag_alloc ? "alloc" : "";
}

/* "input_1 [2,32,32,3] [1,32,32,3]; mask [2,5]" for a case's lists. */
static void shapes_str(const mp_scenario_case *c, char *buf, size_t n)
{
    size_t at = 0;
    buf[0] = 0;
    for (int i = 0; i < c->n_shapes && at < n; i++) {
        const mp_bench_shape *s = &c->shapes[i];
        if (i == 0 || c->shapes[i - 1].input != s->input)
            at += (size_t)snprintf(buf + at, n - at, "%s%s", at ? "; " : "", s->name);
        if (at < n)
            at += (size_t)snprintf(buf + at, n - at, " [");
        for (int d = 0; d < s->rank && at < n; d++)
            at += (size_t)snprintf(buf + at, n - at, d ? ",%d" : "%d", s->dims[d]);
        if (at < n)
            at += (size_t)snprintf(buf + at, n - at, "]");
    }
    if (!buf[0])
        snprintf(buf, n, "the model's own");
}

static void text_row(FILE *f, const mp_scenarios_report *r, const mp_scenario_case *cs)
{
    char b[4][48];
    const uint64_t v[4] = {cs->static_bytes, cs->dynamic_bytes, cs->peak_bytes, cs->dup_bytes};
    for (int i = 0; i < 4; i++) {
        if (r->exact)
            snprintf(b[i], sizeof b[i], "%llu", (unsigned long long)v[i]);
        else
            mp_fmt_bytes(b[i], sizeof b[i], v[i]);
    }
    mp_text_line(f, "%-2c %8.3f %8.3f %10s %10s %10s %10s %5llu %s", cs->name,
                 cs->first_ns / 1e6, cs->later.median_ns / 1e6, b[0], b[1], b[2], b[3],
                 (unsigned long long)cs->later_allocs, mp_scenario_flags(cs));
}

void mp_report_scenarios_text(FILE *f, const mp_scenarios_report *r)
{
    mp_text_title(f, "memprof scenarios", r->model);
    mp_text_line(f, "  mode %s, %ld thread%s; per case: first run, %ld warm-up, %ld timed runs",
                 r->mode, r->threads, r->threads == 1 ? "" : "s", r->warmup, r->runs);
    if (r->keep_stale)
        mp_text_line(f, "  debug: --keep-stale-arena (the old arena kept after a shape change)");
    mp_text_line(f, "%s", "");
    mp_text_line(f, "     first    later     static    dynamic       peak duplicated allocs");
    mp_text_line(f, "case run ms  med. ms      bytes      bytes      bytes      bytes  /run flags");
    for (int c = 0; c < r->n_cases; c++)
        text_row(f, r, &r->cases[c]);
    mp_text_line(f, "%s", "");
    mp_text_line(f, "case calls                                    shapes");
    for (int c = 0; c < r->n_cases; c++) {
        char sh[512];
        shapes_str(&r->cases[c], sh, sizeof sh);
        mp_text_line(f, "%-4c %-40s %s", r->cases[c].name, r->cases[c].calls, sh);
    }
    mp_text_line(f, "%s", "");
    mp_text_line(f, "allocs /run: the most allocations in one run after the first (warm-up "
                    "included).");
    mp_text_line(f, "flags: dup = a tensor held twice; alloc = a later run allocated with no "
                    "shape");
    mp_text_line(f, "change before it (D changes shapes before every run: not flagged for it).");
    int n_flagged = 0;
    char which[64] = "";
    for (int c = 0; c < r->n_cases; c++)
        if (r->cases[c].flag_dup || r->cases[c].flag_alloc) {
            size_t l = strlen(which);
            snprintf(which + l, sizeof which - l, "%s%c", n_flagged ? ", " : "",
                     r->cases[c].name);
            n_flagged++;
        }
    if (n_flagged)
        mp_text_line(f, "flagged: %s", which);
    else
        mp_text_line(f, "flagged: none");
}

static json_t *shapes_json(const mp_scenario_case *c)
{
    json_t *arr = json_array(), *list = NULL;
    for (int i = 0; i < c->n_shapes; i++) {
        const mp_bench_shape *s = &c->shapes[i];
        if (i == 0 || c->shapes[i - 1].input != s->input) {
            list = json_array();
            json_array_append_new(arr, json_pack("{s:i, s:s, s:o}", "input", s->input, "name",
                                                 s->name, "shapes", list));
        }
        json_t *d = json_array();
        for (int k = 0; k < s->rank; k++)
            json_array_append_new(d, json_integer(s->dims[k]));
        json_array_append_new(list, d);
    }
    return arr;
}

static json_t *case_json(const mp_scenario_case *cs)
{
    char name[2] = {cs->name, 0};
    json_t *flags = json_array();
    if (cs->flag_dup)
        json_array_append_new(flags, json_string("dup"));
    if (cs->flag_alloc)
        json_array_append_new(flags, json_string("alloc"));
    json_t *o = json_object();
    json_object_set_new(o, "case", json_string(name));
    json_object_set_new(o, "calls", json_string(cs->calls));
    json_object_set_new(o, "shape_at", json_string(cs->shape_at));
    json_object_set_new(o, "shapes", shapes_json(cs));
    mp_json_set_u64(o, "runs", cs->n_runs);
    mp_json_set_u64(o, "first_run_ns", cs->first_ns);
    json_object_set_new(o, "later_runs", mp_stats_json(&cs->later));
    mp_json_set_u64(o, "static_bytes", cs->static_bytes);
    mp_json_set_u64(o, "dynamic_bytes", cs->dynamic_bytes);
    mp_json_set_u64(o, "peak_bytes", cs->peak_bytes);
    mp_json_set_u64(o, "dup_bytes", cs->dup_bytes);
    mp_json_set_u64(o, "first_run_allocations", cs->first_allocs);
    mp_json_set_u64(o, "first_run_bytes", cs->first_bytes);
    mp_json_set_u64(o, "later_run_allocations_max", cs->later_allocs);
    mp_json_set_u64(o, "later_run_max_bytes", cs->later_bytes);
    mp_json_set_u64(o, "plans_made", cs->plans_made);
    mp_json_set_u64(o, "plans_reused", cs->plans_reused);
    json_object_set_new(o, "flags", flags);
    return o;
}

static json_t *to_json(const mp_scenarios_report *r)
{
    json_t *root = json_object(), *arr = json_array();
    int n_flagged = 0;
    json_object_set_new(root, "format", json_string("memprof-scenarios"));
    json_object_set_new(root, "version", json_integer(2));
    json_object_set_new(root, "model", json_string(r->model));
    json_object_set_new(root, "mode", json_string(r->mode));
    json_object_set_new(root, "threads", json_integer(r->threads));
    json_object_set_new(root, "runs", json_integer(r->runs));
    json_object_set_new(root, "warmup", json_integer(r->warmup));
    json_object_set_new(root, "keep_stale_arena", json_boolean(r->keep_stale));
    for (int c = 0; c < r->n_cases; c++) {
        json_array_append_new(arr, case_json(&r->cases[c]));
        n_flagged += r->cases[c].flag_dup || r->cases[c].flag_alloc;
    }
    json_object_set_new(root, "cases", arr);
    json_object_set_new(root, "flagged", json_integer(n_flagged));
    return root;
}

mp_status mp_report_scenarios_json(FILE *f, const mp_scenarios_report *r, mp_error *err)
{
    return mp_report_timing_json(f, to_json(r), err);
}
