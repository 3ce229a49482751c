/* memprof scenarios' output as text and JSON (see scenarios_report.h). */
#include "reports/scenarios_report.h"

#include <jansson.h>
#include <math.h>
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

/* "A    static  prepare  ": the case, its mode and its plan-at policy (22 columns). */
static void row_label(const mp_scenario_case *cs, char *buf, size_t n)
{
    snprintf(buf, n, "%-4c %-7s %-9s", cs->name, cs->mode ? cs->mode : "",
             cs->plan_at ? cs->plan_at : "-");
}

static void fmt_bytes(const mp_scenarios_report *r, char *buf, size_t n, uint64_t v)
{
    if (r->exact)
        snprintf(buf, n, "%llu", (unsigned long long)v);
    else
        mp_fmt_bytes(buf, n, v);
}

static void time_row(FILE *f, const mp_scenarios_report *r, const mp_scenario_case *cs,
                     double div)
{
    char b[3][48], label[48];
    const uint64_t v[3] = {cs->static_bytes, cs->peak_bytes, cs->dup_bytes};
    for (int i = 0; i < 3; i++)
        fmt_bytes(r, b[i], sizeof b[i], v[i]);
    row_label(cs, label, sizeof label);
    mp_text_line(f, "%s %8.3f %8.3f %6llu %10s %10s %10s", label, cs->first_ns / div,
                 cs->later.median_ns / div, (unsigned long long)cs->later_allocs, b[0], b[1],
                 b[2]);
}

static void plan_row(FILE *f, const mp_scenarios_report *r, const mp_scenario_case *cs)
{
    char b[48], label[48];
    fmt_bytes(r, b, sizeof b, cs->dynamic_bytes);
    row_label(cs, label, sizeof label);
    mp_text_line(f, "%s %10s %6llu %6llu %6llu %6llu %s", label, b,
                 (unsigned long long)cs->plans_made, (unsigned long long)cs->plans_reused,
                 (unsigned long long)cs->arenas_made, (unsigned long long)cs->arenas_unused,
                 mp_scenario_flags(cs));
}

void mp_report_scenarios_text(FILE *f, const mp_scenarios_report *r)
{
    mp_text_title(f, "memprof scenarios", r->model);
    mp_text_line(f, "  mode %s, plan at %s, %ld thread%s", r->mode,
                 r->plan_at ? r->plan_at : "default", r->threads, r->threads == 1 ? "" : "s");
    mp_text_line(f, "  per case: first run, %ld warm-up, %ld timed runs", r->warmup, r->runs);
    if (r->keep_stale)
        mp_text_line(f, "  debug: --keep-stale-arena (the old arena kept after a shape change)");
    mp_text_line(f, "%s", "");
    mp_text_line(f, "%-22s %8s %8s %6s %10s %10s %10s", "", "first", "later", "allocs",
                 "static", "peak", "duplicated");
    double fastest = INFINITY, div; /* the time columns' unit from the fastest later median */
    for (int c = 0; c < r->n_cases; c++)
        fastest = fmin(fastest, r->cases[c].later.median_ns);
    const char *unit = mp_time_unit(fastest, &div);
    char run_u[16], med_u[16];
    snprintf(run_u, sizeof run_u, "run %s", unit);
    snprintf(med_u, sizeof med_u, "med. %s", unit);
    mp_text_line(f, "%-22s %8s %8s %6s %10s %10s %10s", "case mode    plan at", run_u, med_u,
                 "/run", "bytes", "bytes", "bytes");
    for (int c = 0; c < r->n_cases; c++)
        time_row(f, r, &r->cases[c], div);
    mp_text_line(f, "%s", "");
    mp_text_line(f, "%-22s %10s %6s %6s %6s %6s", "", "dynamic", "plans", "plans", "arenas",
                 "arenas");
    mp_text_line(f, "%-22s %10s %6s %6s %6s %6s %s", "case mode    plan at", "bytes", "made",
                 "reused", "made", "unused", "flags");
    for (int c = 0; c < r->n_cases; c++)
        plan_row(f, r, &r->cases[c]);
    mp_text_line(f, "%s", "");
    mp_text_line(f, "case calls                                    shapes");
    for (int c = 0; c < r->n_cases; c++) {
        if (c > 0 && r->cases[c - 1].name == r->cases[c].name)
            continue; /* the same case in another mode or policy */
        char sh[512];
        shapes_str(&r->cases[c], sh, sizeof sh);
        mp_text_line(f, "%-4c %-40s %s", r->cases[c].name, r->cases[c].calls, sh);
    }
    mp_text_line(f, "%s", "");
    mp_text_line(f, "run %s: with the work a shape change caused for that run (re-plan, new "
                    "arena).", unit);
    mp_text_line(f, "allocs /run: the most allocations in one run after the first (warm-up "
                    "included).");
    mp_text_line(f, "plans: planner calls, and plans taken from auto mode's cache; arenas "
                    "unused:");
    mp_text_line(f, "freed before any run used them (planned for shapes no run met).");
    mp_text_line(f, "flags: dup = a tensor held twice; alloc = a later run allocated with no "
                    "shape");
    mp_text_line(f, "change before it (D changes shapes before every run: not flagged for it).");
    int n_flagged = 0;
    char which[256] = "";
    for (int c = 0; c < r->n_cases; c++)
        if (r->cases[c].flag_dup || r->cases[c].flag_alloc) {
            size_t l = strlen(which);
            char label[48];
            if (r->n_cases > 5) {
                snprintf(label, sizeof label, "%c %s%s%s", r->cases[c].name, r->cases[c].mode,
                         r->cases[c].plan_at ? "/" : "",
                         r->cases[c].plan_at ? r->cases[c].plan_at : "");
            } else {
                snprintf(label, sizeof label, "%c", r->cases[c].name);
            }
            snprintf(which + l, sizeof which - l, "%s%s", n_flagged ? ", " : "", label);
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
    json_object_set_new(o, "mode", json_string(cs->mode ? cs->mode : ""));
    json_object_set_new(o, "plan_at", cs->plan_at ? json_string(cs->plan_at) : json_null());
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
    mp_json_set_u64(o, "arenas_made", cs->arenas_made);
    mp_json_set_u64(o, "arenas_unused", cs->arenas_unused);
    json_object_set_new(o, "flags", flags);
    return o;
}

static json_t *to_json(const mp_scenarios_report *r)
{
    json_t *root = json_object(), *arr = json_array();
    int n_flagged = 0;
    json_object_set_new(root, "format", json_string("memprof-scenarios"));
    json_object_set_new(root, "version", json_integer(3));
    json_object_set_new(root, "model", json_string(r->model));
    json_object_set_new(root, "mode", json_string(r->mode));
    json_object_set_new(root, "plan_at", json_string(r->plan_at ? r->plan_at : "default"));
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
