/* memprof check's figures of its subject: a model loaded, shaped (one shape per input,
 * before prepare), prepared, run and torn down with a recorder, as memprof run does, and
 * the deterministic figures of analyzers/baseline.h computed from that trace (with the
 * model's SHA-256 and input shapes); or a saved trace's figures; or a baseline read. */
#ifndef MP_CHECK_FIGURES_H
#define MP_CHECK_FIGURES_H

#include <stdbool.h>
#include <stddef.h>

#include "analyzers/baseline.h"
#include "analyzers/gate.h"
#include "cli/options.h"

#define MP_CHECK_MAX_ARGS 64

typedef struct mp_check_args {
    const char *subject, *baseline, *save, *junit;
    mp_model_opts m; /* --shape, --memory, --planner, --threads, --runs */
    mp_gate_limit limits[MP_CHECK_MAX_ARGS];
    size_t n_limits;
    mp_tolerance tol;
    bool exact, model_opts;
    bool other_model; /* --allow-other-model: a baseline of another model accepted */
    bool json;       /* --format json */
    bool warned_peak; /* --max-peak's deprecation said */
    const char *out; /* -o: the report there (NULL: stdout) */
} mp_check_args;

/* The figures of a->subject into out; errors printed; returns the exit code. */
int mp_check_figures(const mp_check_args *a, mp_baseline *out);

#endif
