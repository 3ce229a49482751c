/* The options every model-running command shares (run, bench, scenarios, check, tui,
 * plan): --shape, --input, --shape-at, --memory, --threads, --runs/-r, --warmup/-w,
 * parsed once here with the same checks and messages. Each command says which it
 * accepts and sets its own defaults; its own options stay in its parser. */
#ifndef MP_MODEL_OPTS_H
#define MP_MODEL_OPTS_H

#include <stdbool.h>

#include "cli/call_orders.h"
#include "engine/session.h"

#define MP_MODEL_OPTS_MAX 64 /* --shape and --input given at most this often each */

enum {
    MP_OPT_SHAPE = 1 << 0,    /* --shape NAME=DIMS (repeatable) */
    MP_OPT_INPUT = 1 << 1,    /* --input NAME=FILE (repeatable) */
    MP_OPT_SHAPE_AT = 1 << 2, /* --shape-at prepare|run|each-run */
    MP_OPT_MEMORY = 1 << 3,   /* --memory auto|static|dynamic */
    MP_OPT_THREADS = 1 << 4,  /* --threads 1..256 */
    MP_OPT_RUNS = 1 << 5,     /* --runs 1..1000000 */
    MP_OPT_WARMUP = 1 << 6,   /* --warmup 0..1000000 */
    MP_OPT_SHORT = 1 << 7,    /* also -r for --runs and -w for --warmup */
};

typedef struct mp_model_opts {
    const char *shapes[MP_MODEL_OPTS_MAX], *inputs[MP_MODEL_OPTS_MAX];
    int n_shapes, n_inputs;
    long threads, runs, warmup;
    mp_shape_at at;
    mp_memory_mode mode;
} mp_model_opts;

/* Whether o is one of the options in `accept` (all of them take a value). */
bool mp_model_opt_is(unsigned accept, const char *o);
/* Take option o (one of `accept`) with value v into m: 0, or the usage error's exit code
 * (printed as cmd's). */
int mp_model_opt_take(const char *cmd, unsigned accept, const char *o, const char *v,
                      mp_model_opts *m);

#endif
