/* libFuzzer target for baseline files (memprof check --baseline, memprof diff): any bytes
 * must either be refused with a one-line error, or give a baseline that
 *  - serialises, and whose file parses back to an equal baseline (a round trip) that
 *    serialises to the same bytes again;
 *  - compared with its re-read self shows no change, and compared with an empty baseline
 *    lists every tensor exactly once;
 *  - passes its own gate (every figure against itself, no tolerance), while limits one byte
 *    below each figure fail exactly once per figure above 0;
 *  - goes through the text and JUnit reports of the gate and of the comparison.
 * A broken promise traps, so the fuzzer reports it as a crash. Reports go to /dev/null.
 * Build and run with scripts/fuzz.sh. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/baseline.h"
#include "analyzers/gate.h"
#include "reports/junit.h"
#include "reports/text_gate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

static FILE *g_null;

static bool same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* Equal content, machine-dependent figures included (a file never holds them). */
static bool same_baseline(const mp_baseline *a, const mp_baseline *b)
{
    if (!same_str(a->model, b->model) || !same_str(a->sha256, b->sha256) ||
        !same_str(a->mode, b->mode) || !same_str(a->planner, b->planner) ||
        a->truncated != b->truncated || a->n_inputs != b->n_inputs ||
        a->n_tensors != b->n_tensors)
        return false;
    for (int f = 0; f < MP_FIG_COUNT; f++)
        if (a->has[f] != b->has[f] || (a->has[f] && a->fig[f] != b->fig[f]))
            return false;
    for (size_t i = 0; i < a->n_inputs; i++)
        if (!same_str(a->inputs[i].name, b->inputs[i].name) ||
            !same_str(a->inputs[i].dims, b->inputs[i].dims))
            return false;
    for (size_t i = 0; i < a->n_tensors; i++)
        if (!same_str(a->tensors[i].name, b->tensors[i].name) ||
            a->tensors[i].bytes != b->tensors[i].bytes)
            return false;
    return true;
}

static void check_diff(const mp_baseline *a, const mp_baseline *b)
{
    mp_baseline empty;
    memset(&empty, 0, sizeof empty);
    mp_baseline_diff d;
    mp_error err = {0};
    CHECK(mp_baseline_diff_compute(a, b, &d, &err) == MP_OK);
    CHECK(d.n_tensors == 0 && d.n_grown == 0);
    for (size_t i = 0; i < d.n_figures; i++)
        CHECK(d.figures[i].in_a && d.figures[i].in_b && d.figures[i].a == d.figures[i].b);
    mp_report_baseline_diff_text(g_null, "a.json", a, "b.json", b, &d, false);
    mp_baseline_diff_free(&d);

    CHECK(mp_baseline_diff_compute(&empty, a, &d, &err) == MP_OK);
    CHECK(d.n_tensors == a->n_tensors && d.n_grown <= d.n_tensors);
    mp_report_baseline_diff_text(g_null, "empty.json", &empty, "a.json", a, &d, true);
    mp_baseline_diff_free(&d);
}

static void check_gate(const mp_baseline *now, const mp_baseline *base)
{
    mp_gate_limit lim[MP_FIG_COUNT];
    size_t n_lim = 0, below = 0;
    for (int f = 0; f < MP_FIG_COUNT; f++) {
        if (!now->has[f] || now->fig[f] == 0)
            continue;
        lim[n_lim].figure = f;
        lim[n_lim++].max = now->fig[f] - 1;
        below++;
    }
    mp_gate_options o = {.limits = lim, .n_limits = n_lim, .baseline = base};
    mp_gate_result r;
    mp_error err = {0};
    CHECK(mp_gate_evaluate(now, &o, &r, &err) == MP_OK);
    CHECK(r.n_failed == below && r.has_baseline);
    for (size_t i = 0; i < r.n_checks; i++)
        if (r.checks[i].against == MP_GATE_BASELINE)
            CHECK(r.checks[i].passed && r.checks[i].value == r.checks[i].reference);
    mp_report_gate_text(g_null, "fuzz", now, &o, "base.json", &r, false);
    mp_report_gate_text(g_null, "fuzz", now, &o, "base.json", &r, true);
    CHECK(mp_report_gate_junit(g_null, "fuzz", now, &r, &o.tol, &err) == MP_OK);
    mp_gate_result_free(&r);

    /* A 10% tolerance never makes a baseline check fail that passed without it. */
    o.n_limits = 0;
    o.tol.percent = true;
    o.tol.pct = 10;
    CHECK(mp_gate_evaluate(now, &o, &r, &err) == MP_OK);
    CHECK(r.n_failed == 0);
    mp_gate_result_free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!g_null) {
        g_null = fopen("/dev/null", "w");
        CHECK(g_null != NULL);
    }
    mp_baseline a, b;
    mp_error err = {0};
    mp_status st = mp_baseline_parse((const char *)data, size, "fuzz.json", &a, &err);
    if (st != MP_OK) {
        CHECK(st == MP_ERR_FORMAT || st == MP_ERR_NOMEM);
        CHECK(err.status == st && err.msg[0] != '\0' && !strchr(err.msg, '\n'));
        return 0;
    }
    char *text = mp_baseline_to_json(&a);
    CHECK(text != NULL);
    st = mp_baseline_parse(text, strlen(text), "again.json", &b, &err);
    CHECK(st == MP_OK);
    CHECK(same_baseline(&a, &b));
    char *again = mp_baseline_to_json(&b);
    CHECK(again != NULL && strcmp(text, again) == 0);
    free(again);
    free(text);

    check_diff(&a, &b);
    check_gate(&a, &b);
    mp_baseline_free(&b);
    mp_baseline_free(&a);
    return 0;
}
