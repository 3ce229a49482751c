/* The JSON of memprof diff on baselines (see json_diff.h). */
#include "reports/json_diff.h"

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

static json_t *side_json(const mp_diff_side *s)
{
    const mp_baseline *b = s->base;
    json_t *o = json_object(), *inputs = json_array();
    for (size_t i = 0; i < b->n_inputs; i++)
        json_array_append_new(inputs, json_pack("{s:o, s:o}", "name", jstr(b->inputs[i].name),
                                                "dims", jstr(b->inputs[i].dims)));
    json_object_set_new(o, "file", jstr(s->path));
    json_object_set_new(o, "kind", json_string(s->trace ? "trace" : "baseline"));
    json_object_set_new(o, "model", jstr(b->model));
    json_object_set_new(o, "sha256", jstr(b->sha256));
    json_object_set_new(o, "mode", jstr(b->mode));
    json_object_set_new(o, "planner", jstr(b->planner));
    json_object_set_new(o, "inputs", inputs);
    json_object_set_new(o, "truncated", json_boolean(b->truncated));
    return o;
}

/* Figures or tensors: {name, a_bytes, b_bytes, change_bytes}, null where a side lacks one;
 * a figure's change is null then (unknown), a tensor's counts the missing side as 0. */
static json_t *changes(const mp_gate_change *c, size_t n, bool figures)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        int64_t d = c[i].b >= c[i].a ? (int64_t)(c[i].b - c[i].a) : -(int64_t)(c[i].a - c[i].b);
        bool known = !figures || (c[i].in_a && c[i].in_b);
        json_array_append_new(
            arr, json_pack("{s:o, s:o, s:o, s:o}", "name", jstr(c[i].name), "a_bytes",
                           c[i].in_a ? ju(c[i].a) : json_null(), "b_bytes",
                           c[i].in_b ? ju(c[i].b) : json_null(), "change_bytes",
                           known ? json_integer((json_int_t)d) : json_null()));
    }
    return arr;
}

mp_status mp_report_baseline_diff_json(FILE *f, const mp_diff_side *a, const mp_diff_side *b,
                                       const mp_baseline_diff *d, mp_error *err)
{
    json_t *root = json_object();
    json_object_set_new(root, "format", json_string(MP_BASELINE_DIFF_FORMAT));
    json_object_set_new(root, "version", json_integer(MP_BASELINE_DIFF_VERSION));
    json_object_set_new(root, "a", side_json(a));
    json_object_set_new(root, "b", side_json(b));
    json_object_set_new(root, "figures", changes(d->figures, d->n_figures, true));
    json_object_set_new(root, "tensors", changes(d->tensors, d->n_tensors, false));
    json_object_set_new(root, "n_tensors_changed", ju(d->n_tensors));
    json_object_set_new(root, "n_tensors_grown", ju(d->n_grown));
    bool ok = json_dumpf(root, f, JSON_INDENT(1) | JSON_PRESERVE_ORDER) == 0 &&
              fputc('\n', f) != EOF;
    json_decref(root);
    return ok ? MP_OK : mp_fail(err, MP_ERR_IO, "diff: cannot write the JSON");
}
