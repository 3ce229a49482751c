/* Gate: a baseline's figures (baseline.h) checked against limits and against an earlier
 * baseline with a tolerance, for memprof check; and two baselines compared, figure by figure
 * and tensor by tensor, for memprof check's "what grew" and memprof diff. Pure: computes,
 * prints nothing. */
#ifndef MP_GATE_H
#define MP_GATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyzers/baseline.h"
#include "trace/status.h"

/* How much a figure may exceed its baseline: a percentage of it, or bytes. */
typedef struct mp_tolerance {
    bool percent;
    double pct;                   /* percent (0..1000) when percent */
    uint64_t bytes;               /* else */
} mp_tolerance;

/* The most a figure may be over a baseline of `base` (saturating): base + base * pct / 100
 * rounded down, or base + bytes. */
uint64_t mp_tolerance_allowed(uint64_t base, const mp_tolerance *t);

/* A limit: figure (mp_figure) at most max bytes. */
typedef struct mp_gate_limit {
    int figure;
    uint64_t max;
} mp_gate_limit;

typedef struct mp_gate_options {
    const mp_gate_limit *limits;
    size_t n_limits;
    const mp_baseline *baseline;  /* NULL = none */
    mp_tolerance tol;             /* for the baseline checks */
} mp_gate_options;

typedef enum mp_gate_against { MP_GATE_LIMIT = 0, MP_GATE_BASELINE } mp_gate_against;

/* One check: a figure against a limit or its baseline. */
typedef struct mp_gate_check {
    int figure;                   /* mp_figure */
    int against;                  /* mp_gate_against */
    uint64_t value;               /* now */
    uint64_t reference;           /* the limit, or the baseline's figure */
    uint64_t allowed;             /* the limit, or the baseline's figure plus the tolerance */
    bool passed;                  /* value <= allowed */
} mp_gate_check;

/* A figure or a tensor on two sides. */
typedef struct mp_gate_change {
    const char *name;             /* figure name, or tensor name (points into a baseline) */
    bool in_a, in_b;              /* present on that side */
    uint64_t a, b;                /* bytes (0 when absent) */
} mp_gate_change;

typedef struct mp_baseline_diff {
    size_t n_figures;
    mp_gate_change figures[MP_FIG_COUNT]; /* every figure known on a side, in figure order
                                             (an optional kind when a side has some) */
    size_t n_tensors;
    mp_gate_change *tensors;      /* tensors whose bytes differ or that one side lacks: the
                                     largest change first (growth first at equal size, then
                                     by name) */
    size_t n_grown;               /* of which grew (b > a, or new in b) */
} mp_baseline_diff;

/* Compare a (before) and b (after). MP_ERR_NOMEM on failure (*out then empty). */
mp_status mp_baseline_diff_compute(const mp_baseline *a, const mp_baseline *b,
                                   mp_baseline_diff *out, mp_error *err);
void mp_baseline_diff_free(mp_baseline_diff *d);

typedef struct mp_gate_result {
    size_t n_checks;
    mp_gate_check *checks;        /* by figure; for one figure its limits in the order given,
                                     then its baseline check */
    size_t n_failed;
    bool has_baseline;
    mp_baseline_diff diff;        /* baseline -> now (empty without a baseline) */
} mp_gate_result;

/* Check `now`: every limit, and against the baseline every figure gated by default
 * (mp_figure_gated_by_default) that both sides know (a baseline file knows an optional
 * kind when it had some). A limit on a figure `now` lacks fails (memprof check refuses it
 * first).
 * MP_ERR_ARG for a figure out of range, MP_ERR_NOMEM. */
mp_status mp_gate_evaluate(const mp_baseline *now, const mp_gate_options *o,
                           mp_gate_result *out, mp_error *err);
void mp_gate_result_free(mp_gate_result *r);

#endif
