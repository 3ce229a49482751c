/* The JSON of memprof check (see json_gate.h). */
#include "reports/json_gate.h"

#include <jansson.h>

static json_t *jstr(const char *s)
{
    json_t *v = s ? json_string(s) : NULL;
    return v ? v : json_null(); /* absent, or not UTF-8 */
}

static json_t *ju(uint64_t v)
{
    return json_integer(v > (uint64_t)INT64_MAX ? INT64_MAX : (json_int_t)v);
}

static json_t *side(bool present, uint64_t v)
{
    return present ? ju(v) : json_null();
}

/* The changes from the baseline (a) to now (b): figures, then tensors. */
static json_t *changes(const mp_gate_change *c, size_t n)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        int64_t d = c[i].b >= c[i].a ? (int64_t)(c[i].b - c[i].a) : -(int64_t)(c[i].a - c[i].b);
        json_array_append_new(arr, json_pack("{s:o, s:o, s:o, s:I}", "name", jstr(c[i].name),
                                             "baseline_bytes", side(c[i].in_a, c[i].a),
                                             "now_bytes", side(c[i].in_b, c[i].b),
                                             "change_bytes", (json_int_t)d));
    }
    return arr;
}

mp_status mp_report_gate_json(FILE *f, const char *subject, const mp_baseline *now,
                              const mp_gate_options *o, const char *baseline_path,
                              const mp_gate_result *r, mp_error *err)
{
    json_t *root = json_object(), *figs = json_object(), *checks = json_array();
    for (int k = 0; k < MP_FIG_COUNT; k++)
        if (now->has[k])
            json_object_set_new(figs, mp_figure_name(k), ju(now->fig[k]));
    for (size_t i = 0; i < r->n_checks; i++) {
        const mp_gate_check *c = &r->checks[i];
        json_array_append_new(
            checks, json_pack("{s:s, s:s, s:o, s:o, s:o, s:o, s:b}", "figure",
                              mp_figure_name(c->figure), "against",
                              c->against == MP_GATE_BASELINE ? "baseline" : "limit",
                              "now_bytes", ju(c->value), "reference_bytes", ju(c->reference),
                              "allowed_bytes", ju(c->allowed), "over_bytes",
                              ju(c->value > c->allowed ? c->value - c->allowed : 0), "passed",
                              c->passed));
    }
    json_object_set_new(root, "format", json_string(MP_CHECK_FORMAT));
    json_object_set_new(root, "version", json_integer(MP_CHECK_VERSION));
    json_object_set_new(root, "subject", jstr(subject));
    json_object_set_new(root, "model", json_pack("{s:o, s:o, s:o}", "name", jstr(now->model),
                                                 "mode", jstr(now->mode), "planner",
                                                 jstr(now->planner)));
    json_object_set_new(root, "truncated", json_boolean(now->truncated));
    json_object_set_new(root, "baseline", jstr(baseline_path));
    bool pct = o && o->tol.percent;
    json_object_set_new(root, "tolerance_percent", pct ? json_real(o->tol.pct) : json_null());
    json_object_set_new(root, "tolerance_bytes",
                        o && !pct ? ju(o->tol.bytes) : json_null());
    json_object_set_new(root, "figure_bytes", figs);
    /* the heap figure's parts: memprof run's Heap peak, and a model held on the heap */
    bool heap = now->has[MP_FIG_HEAP];
    json_object_set_new(root, "run_heap_peak_bytes", heap ? ju(now->run_heap_peak) : json_null());
    json_object_set_new(root, "model_heap_bytes", heap ? ju(now->model_heap) : json_null());
    json_object_set_new(root, "checks", checks);
    json_object_set_new(root, "n_checks", ju(r->n_checks));
    json_object_set_new(root, "n_failed", ju(r->n_failed));
    json_object_set_new(root, "result", json_string(r->n_failed ? "fail" : "pass"));
    if (r->has_baseline)
        json_object_set_new(root, "changes",
                            json_pack("{s:o, s:o}", "figures",
                                      changes(r->diff.figures, r->diff.n_figures), "tensors",
                                      changes(r->diff.tensors, r->diff.n_tensors)));
    else
        json_object_set_new(root, "changes", json_null());
    bool ok = root && json_dumpf(root, f, JSON_INDENT(1) | JSON_PRESERVE_ORDER) == 0 &&
              fputc('\n', f) != EOF;
    json_decref(root);
    return ok ? MP_OK : mp_fail(err, MP_ERR_IO, "check: cannot write the JSON");
}
