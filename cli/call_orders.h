/* The call orders A-E of ../shared/DESIGN.md, as shape changes at three points of a
 * session's life (before prepare, after prepare, before each run), and the caller's input
 * buffers (raw files, one value per input, or the reference formula), shared by memprof run, bench and
 * scenarios so that the three commands drive a session the same way.
 *
 *   at PREPARE   every input's first shape before prepare             (A without shapes, B)
 *   at RUN       an input with two shapes: the first before prepare;  (C, E)
 *                every input's last shape after prepare
 *   at EACH_RUN  before run r (0-based) input k gets shape r % n[k]   (D)
 */
#ifndef MP_CALL_ORDERS_H
#define MP_CALL_ORDERS_H

#include <stdbool.h>
#include <stddef.h>

#include "cli/cli.h"
#include "cli/input_values.h"

typedef enum mp_shape_at { MP_SHAPE_AT_PREPARE = 0, MP_SHAPE_AT_RUN, MP_SHAPE_AT_EACH_RUN } mp_shape_at;

/* "prepare", "run", "each-run" -> mp_shape_at; -1 when unknown. And back. */
int mp_shape_at_parse(const char *s);
const char *mp_shape_at_name(mp_shape_at at);

/* --plan-at WHEN of cmd: "prepare" or "first-run" into *out (usage error printed). */
int mp_cli_plan_at_opt(const char *cmd, const char *v, mp_plan_at *out);

/* A built-in model (zoo:NAME) is built once into *bytes (the caller frees it), so that
 * several sessions load it as they would a file; for a file *bytes is NULL. Errors are
 * printed; returns the exit code. */
int mp_cli_model_bytes(const char *model, void **bytes, size_t *size);
/* Create a session with so and load the model (from bytes when not NULL); *load_ns gets
 * the load time. On failure the error is printed and *out is NULL. */
int mp_cli_session_open(const char *model, const void *bytes, size_t size,
                        const mp_session_options *so, mp_session **out, uint64_t *load_ns);

/* Refuse (usage error of cmd) shape lists that `at` cannot play: several shapes for one
 * input at PREPARE, more than two at RUN. */
int mp_shape_at_check(const char *cmd, const mp_shape_args *sp, mp_shape_at at);

/* Apply the shapes due at each point (errors printed; returns the exit code). */
int mp_shapes_before_prepare(mp_session *s, const mp_shape_args *sp, mp_shape_at at);
int mp_shapes_after_prepare(mp_session *s, const mp_shape_args *sp, mp_shape_at at);
int mp_shapes_before_run(mp_session *s, const mp_shape_args *sp, mp_shape_at at, long r);

/* The caller's input buffers. They are mapped, not malloc'ed, so that the heap
 * measurement of a session (memprof run's unaccounted bytes) sees only what the engine
 * allocates. One set may feed several sessions with the same input shapes. */
typedef struct mp_caller_buf {
    void *p;
    size_t cap;    /* mapped bytes (the input's bytes plus MP_INPUT_SLACK) */
    size_t filled; /* bytes of the shape the contents were made for; SIZE_MAX = none */
    size_t strings; /* a string input: the bytes of its string buffer (filled: its count) */
} mp_caller_buf;

typedef struct mp_cli_inputs {
    const char *files[MP_CLI_MAX_INPUTS]; /* raw file per input; NULL = reference formula */
    bool has_fill[MP_CLI_MAX_INPUTS];     /* --fill: every element the value below */
    mp_fill_value fill[MP_CLI_MAX_INPUTS];
    mp_caller_buf buf[MP_CLI_MAX_INPUTS];
    bool bind;                            /* run on the buffers (set_input_buffer), no copy */
    /* with bind, the outputs are written straight into these (set_output_buffer), except an
     * output whose shape is known only while running or that is also an input */
    mp_caller_buf out[MP_CLI_MAX_INPUTS];
    /* the shapes changed after prepare (call orders C, D, E): the outputs' sizes are known
     * only inside the run that plans, so they stay the engine's (binding them later would
     * plan again) */
    bool outputs_unbound;
} mp_cli_inputs;

/* Resolve --input NAME=FILE arguments of cmd into in->files (usage errors printed). */
int mp_cli_inputs_files(mp_session *s, const char *cmd, const char *const *specs, int n,
                        mp_cli_inputs *in);
/* Resolve --fill NAME=VALUE arguments of cmd into in->fill, each value parsed for its input's
 * dtype (usage errors printed: an unknown input, a bad value, an input also given a file). */
int mp_cli_inputs_fills(mp_session *s, const char *cmd, const char *const *specs, int n,
                        mp_cli_inputs *in);
/* After a run refused an input's values (exit 2, the engine's message printed): a note naming
 * the inputs that came from the reference formula and how to give them (--fill, --input). */
void mp_cli_inputs_hint(mp_session *s, const char *cmd, const mp_cli_inputs *in);
/* Make input k's buffer hold its data for the session's current shape of input k. */
int mp_cli_inputs_fill(mp_session *s, mp_cli_inputs *in, int k);
/* Fill and give every input of s its data: copied (set_input), or bound (in->bind, which
 * binds the outputs to buffers of their current size too). */
int mp_cli_inputs_feed(mp_session *s, mp_cli_inputs *in);
/* Unmap the buffers. */
void mp_cli_inputs_release(mp_cli_inputs *in);

/* Run s once; *ns gets the run's time with the work a shape change caused for it before
 * it started (mp_session_last_run_ns), so that --io copy and --io bind time alike. Errors
 * are left in err. */
mp_status mp_cli_timed_run(mp_session *s, uint64_t *ns, mp_error *err);

/* The rest of a call order on a loaded session, untimed (memprof check, memprof tui): the
 * shapes before prepare, prepare, the shapes after it, then `runs` runs, each after its
 * shapes and inputs, and every output copied out once at the end (what a caller does, so
 * that the trace has it). Errors printed; returns the exit code. */
int mp_cli_play(mp_session *s, const mp_shape_args *sp, mp_shape_at at, long runs,
                mp_cli_inputs *in);

/* What memprof run also wants of a call order: the prepare and run times, RSS samples in the
 * trace after prepare and after each run, and the outputs left for the caller to read. */
typedef struct mp_cli_play_opts {
    mp_trace *rss_trace; /* RSS samples go there (NULL: none) */
    long warmup;         /* the first runs are not timed */
    uint64_t *times;     /* the timed runs' times, runs - warmup of them (NULL: none) */
    uint64_t prepare_ns; /* out: the prepare's time */
    bool keep_outputs;   /* do not copy the outputs out at the end */
    struct mp_progress *progress; /* its line after each run (bench_stats.h; NULL: none) */
} mp_cli_play_opts;
/* mp_cli_play with those (o NULL: as mp_cli_play). */
int mp_cli_play_with(mp_session *s, const mp_shape_args *sp, mp_shape_at at, long runs,
                     mp_cli_inputs *in, mp_cli_play_opts *o);

#endif
