/* Gate: limits and baseline checks over a baseline's figures, and baselines compared (see
 * gate.h). */
#include "analyzers/gate.h"

#include <stdlib.h>
#include <string.h>

uint64_t mp_tolerance_allowed(uint64_t base, const mp_tolerance *t)
{
    uint64_t extra = 0;
    if (t && t->percent) {
        double e = (double)base * t->pct / 100.0;
        extra = e >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)e;
    } else if (t) {
        extra = t->bytes;
    }
    return base > UINT64_MAX - extra ? UINT64_MAX : base + extra;
}

/* ---- two baselines ---------------------------------------------------------------------- */

static uint64_t delta(const mp_gate_change *c)
{
    return c->b > c->a ? c->b - c->a : c->a - c->b;
}

static int cmp_change(const void *x, const void *y)
{
    const mp_gate_change *a = x, *b = y;
    uint64_t da = delta(a), db = delta(b);
    if (da != db)
        return da > db ? -1 : 1;
    bool ga = a->b > a->a, gb = b->b > b->a;
    if (ga != gb)
        return ga ? -1 : 1;
    return strcmp(a->name, b->name);
}

mp_status mp_baseline_diff_compute(const mp_baseline *a, const mp_baseline *b,
                                   mp_baseline_diff *out, mp_error *err)
{
    memset(out, 0, sizeof *out);
    for (int f = 0; f < MP_FIG_COUNT; f++) {
        if (!a->has[f] && !b->has[f])
            continue;
        /* an optional kind (a training category) neither side has any of is no change */
        if (mp_figure_optional(f) && !(a->has[f] && a->fig[f]) && !(b->has[f] && b->fig[f]))
            continue;
        mp_gate_change *c = &out->figures[out->n_figures++];
        c->name = mp_figure_name(f);
        c->in_a = a->has[f];
        c->in_b = b->has[f];
        c->a = a->has[f] ? a->fig[f] : 0;
        c->b = b->has[f] ? b->fig[f] : 0;
    }
    size_t cap = a->n_tensors + b->n_tensors;
    out->tensors = calloc(cap ? cap : 1, sizeof *out->tensors);
    if (!out->tensors)
        return mp_fail(err, MP_ERR_NOMEM, "out of memory");
    /* both tensor lists are sorted by name: merge them */
    size_t i = 0, j = 0;
    while (i < a->n_tensors || j < b->n_tensors) {
        int c = i == a->n_tensors   ? 1
                : j == b->n_tensors ? -1
                                    : strcmp(a->tensors[i].name, b->tensors[j].name);
        mp_gate_change ch = {0};
        if (c <= 0) {
            ch.name = a->tensors[i].name;
            ch.in_a = true;
            ch.a = a->tensors[i++].bytes;
        }
        if (c >= 0) {
            ch.name = b->tensors[j].name;
            ch.in_b = true;
            ch.b = b->tensors[j++].bytes;
        }
        if (ch.a != ch.b || ch.in_a != ch.in_b) {
            out->tensors[out->n_tensors++] = ch;
            out->n_grown += ch.b > ch.a || (ch.in_b && !ch.in_a);
        }
    }
    qsort(out->tensors, out->n_tensors, sizeof *out->tensors, cmp_change);
    return MP_OK;
}

void mp_baseline_diff_free(mp_baseline_diff *d)
{
    if (!d)
        return;
    free(d->tensors);
    memset(d, 0, sizeof *d);
}

/* ---- the gate -------------------------------------------------------------------------- */

mp_status mp_gate_evaluate(const mp_baseline *now, const mp_gate_options *o,
                           mp_gate_result *out, mp_error *err)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < o->n_limits; i++)
        if (o->limits[i].figure < 0 || o->limits[i].figure >= MP_FIG_COUNT)
            return mp_fail(err, MP_ERR_ARG, "limit %zu: no figure %d", i, o->limits[i].figure);
    out->checks = calloc(o->n_limits + MP_FIG_COUNT, sizeof *out->checks);
    if (!out->checks)
        return mp_fail(err, MP_ERR_NOMEM, "out of memory");
    const mp_baseline *base = o->baseline;
    for (int f = 0; f < MP_FIG_COUNT; f++) {
        uint64_t v = now->has[f] ? now->fig[f] : 0;
        for (size_t i = 0; i < o->n_limits; i++) {
            if (o->limits[i].figure != f)
                continue;
            mp_gate_check *c = &out->checks[out->n_checks++];
            c->figure = f;
            c->against = MP_GATE_LIMIT;
            c->value = v;
            c->reference = c->allowed = o->limits[i].max;
            c->passed = now->has[f] && v <= c->allowed;
        }
        /* an optional kind only when a side has some (a baseline file has only those) */
        bool some = !mp_figure_optional(f) || v || (base && base->fig[f]);
        if (base && mp_figure_gated_by_default(f) && base->has[f] && now->has[f] && some) {
            mp_gate_check *c = &out->checks[out->n_checks++];
            c->figure = f;
            c->against = MP_GATE_BASELINE;
            c->value = v;
            c->reference = base->fig[f];
            c->allowed = mp_tolerance_allowed(base->fig[f], &o->tol);
            c->passed = v <= c->allowed;
        }
    }
    for (size_t i = 0; i < out->n_checks; i++)
        out->n_failed += !out->checks[i].passed;
    if (base) {
        out->has_baseline = true;
        mp_status st = mp_baseline_diff_compute(base, now, &out->diff, err);
        if (st != MP_OK) {
            mp_gate_result_free(out);
            return st;
        }
    }
    return MP_OK;
}

void mp_gate_result_free(mp_gate_result *r)
{
    if (!r)
        return;
    free(r->checks);
    mp_baseline_diff_free(&r->diff);
    memset(r, 0, sizeof *r);
}
