/* The one option parser of the memprof commands, on getopt_long: a table of options per
 * command, so that every command reads what users type everywhere else: `--runs=3` and
 * `--runs 3`, `-r 3`, `--` to end options, options before or after the positional
 * arguments (GNU permutation), `-h`/`--help`. The options every model-running command
 * shares (--shape, --input, --fill, --shape-at, --memory, --threads, --runs/-r, --warmup/-w,
 * --planner, --in-place) are parsed here once, with the same checks and messages everywhere; a
 * command says which it accepts and sets its own defaults. Usage errors read
 * "memprof CMD: unknown option '--bogus'", "memprof CMD: --runs needs a value". */
#ifndef MP_OPTIONS_H
#define MP_OPTIONS_H

#include <stdbool.h>

#include "cli/call_orders.h"
#include "engine/session.h"

#define MP_MODEL_OPTS_MAX 64 /* --shape, --input and --fill given at most this often each */

/* The shared model options a command accepts. */
enum {
    MP_OPT_SHAPE = 1 << 0,       /* --shape NAME=DIMS (repeatable) */
    MP_OPT_INPUT = 1 << 1,       /* --input NAME=FILE (repeatable) */
    MP_OPT_SHAPE_AT = 1 << 2,    /* --shape-at prepare|run|each-run */
    MP_OPT_MEMORY = 1 << 3,      /* --memory auto|static|dynamic */
    MP_OPT_THREADS = 1 << 4,     /* --threads 1..256 */
    MP_OPT_RUNS = 1 << 5,        /* --runs/-r 1..1000000 */
    MP_OPT_WARMUP = 1 << 6,      /* --warmup/-w 0..1000000 */
    MP_OPT_PLANNER = 1 << 7,     /* --planner NAME */
    MP_OPT_PLANNER_ALL = 1 << 8, /* --planner also takes 'all' (planner left NULL) */
    MP_OPT_PEER = 1 << 9,        /* --peer xnnpack */
    MP_OPT_FILL = 1 << 10,       /* --fill NAME=VALUE (repeatable) */
    MP_OPT_IN_PLACE = 1 << 11,   /* --in-place on|off (RESHAPE and kin share their input) */
};

typedef struct mp_model_opts {
    const char *shapes[MP_MODEL_OPTS_MAX], *inputs[MP_MODEL_OPTS_MAX], *fills[MP_MODEL_OPTS_MAX];
    int n_shapes, n_inputs, n_fills;
    long threads, runs, warmup;
    mp_shape_at at;
    mp_memory_mode mode;
    const char *planner; /* NULL: the default planner (or all, with MP_OPT_PLANNER_ALL) */
    bool peer;           /* --peer xnnpack */
    bool no_in_place;    /* --in-place off */
    unsigned given;      /* MP_OPT_* given on the command line */
} mp_model_opts;

/* What one of a command's own options does with the command's context (spec->ctx). */
typedef enum mp_opt_kind {
    MP_ARG_FLAG = 1, /* no value: the bool at ctx + at becomes true */
    MP_ARG_STRING,   /* a value, kept as is in the const char * at ctx + at */
    MP_ARG_VALUE,    /* a value, handed to spec->take with id */
} mp_opt_kind;

/* One option of a command's own: `--name`, `-letter` (0 for none), its kind, and where it
 * goes (at: offsetof the command's struct; id: for MP_ARG_VALUE). Tables end with {0}. */
typedef struct mp_opt {
    const char *name;
    char letter;
    mp_opt_kind kind;
    size_t at;
    int id;
} mp_opt;

typedef struct mp_cmd_spec {
    const char *cmd;   /* "run": messages read "memprof run: ..." */
    void (*help)(void);
    const mp_opt *opts; /* the command's own options (NULL: none) */
    /* Take MP_ARG_VALUE option id with its value: 0, or a usage error's exit code
     * (printed, e.g. with mp_usage_error). */
    int (*take)(void *ctx, int id, const char *value);
    void *ctx;
    unsigned model;    /* MP_OPT_* accepted */
    mp_model_opts *m;  /* where they go (the caller sets the defaults first) */
    const char **pos;  /* positional arguments, at most max_pos */
    int max_pos;
    const char *pos_hint; /* appended to "unexpected argument 'X'", or NULL */
    const char *missing;  /* the usage error when there is no positional argument, or NULL */
} mp_cmd_spec;

/* Parse argv[1..argc) (argv[0] is the command's name). Returns 0 with *n_pos (n_pos may
 * be NULL) positional arguments in spec->pos; -1 after printing the help (the command ends
 * with exit 0); or a usage error's exit code, printed. */
int mp_opts_parse(const mp_cmd_spec *spec, int argc, char **argv, int *n_pos);

/* Which of the NULL-ended words v is (its index into *out); else the usage error
 * "FLAG takes A, B or C, got 'V'" of cmd. */
int mp_opt_choice(const char *cmd, const char *flag, const char *v, const char *const *words,
                  int *out);
/* --format of a command that writes text or JSON: *json set when v is "json"; else the usage
 * error "--format takes text or json, got 'V'". */
int mp_opt_text_or_json(const char *cmd, const char *v, bool *json);

#endif
