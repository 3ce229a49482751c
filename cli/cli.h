/* Shared declarations of the memprof command line: exit codes, subcommand entry points and
 * small argument helpers. Each subcommand lives in its own cli/cmd_*.c file. */
#ifndef MP_CLI_H
#define MP_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "trace/files.h"
#include "engine/session.h"
#include "trace/status.h"

/* Documented exit codes (docs/exit-codes.md). */
enum {
    MP_EXIT_OK = 0,
    MP_EXIT_GATE = 1,        /* a limit or baseline was exceeded (memprof check) */
    MP_EXIT_USAGE = 2,       /* bad command line: unknown flag, bad value */
    MP_EXIT_IO = 3,          /* a file cannot be read or written */
    MP_EXIT_FORMAT = 4,      /* malformed model or input file */
    MP_EXIT_UNSUPPORTED = 5, /* valid model memprof cannot run (operator, dtype) */
    MP_EXIT_SHAPE = 6,       /* impossible shape */
    MP_EXIT_RUNTIME = 7      /* out of memory, backend failure */
};

int mp_cmd_inspect(int argc, char **argv);
int mp_cmd_run(int argc, char **argv);
int mp_cmd_pipeline(int argc, char **argv);
int mp_cmd_split(int argc, char **argv);
int mp_cmd_plan(int argc, char **argv);
int mp_cmd_report(int argc, char **argv);
int mp_cmd_zoo(int argc, char **argv);
int mp_cmd_bench(int argc, char **argv);
int mp_cmd_scenarios(int argc, char **argv);
int mp_cmd_check(int argc, char **argv);
int mp_cmd_diff(int argc, char **argv);
int mp_cmd_tui(int argc, char **argv);
int mp_cmd_train(int argc, char **argv);

/* Exit code for an engine status. */
int mp_exit_for(mp_status st);
/* Print "memprof: <msg>" to stderr and return the exit code for st. */
int mp_report_error(const mp_error *err);
/* Print "memprof CMD: <message>\nTry 'memprof CMD --help'." and return MP_EXIT_USAGE. */
int mp_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Parse a positive integer flag value in [lo, hi]. */
bool mp_parse_int(const char *s, long lo, long hi, long *out);
/* Parse "1,224,224,3" (or "1x224x224x3") into dims; returns rank or -1. */
int mp_parse_dims(const char *s, int32_t *dims, int max);
/* True when argv[i] is "-h" or "--help". */
bool mp_is_help(const char *a);

/* ---- shapes.c: input arguments ---------------------------------------------------------- */
#define MP_CLI_MAX_INPUTS 64
#define MP_CLI_MAX_SHAPES 64

/* Split "NAME=VALUE" and resolve NAME (an input's name or index) to an input index; on
 * failure prints which inputs exist and returns -1. */
int mp_cli_resolve_input(mp_session *s, const char *cmd, const char *arg, const char **value,
                         const char *flag);

/* The shapes of repeated --shape NAME=DIMS flags, grouped by input: input k's shapes are
 * dims[k][0..n[k]), in the order given. */
typedef struct mp_shape_args {
    int n[MP_CLI_MAX_INPUTS];
    int rank[MP_CLI_MAX_INPUTS][MP_CLI_MAX_SHAPES];
    int32_t dims[MP_CLI_MAX_INPUTS][MP_CLI_MAX_SHAPES][MP_MAX_RANK];
} mp_shape_args;
int mp_cli_collect_shapes(mp_session *s, const char *cmd, const char *const *specs, int n,
                          mp_shape_args *sp);
/* Set input k's shape number j (modulo its count); prints the error. */
int mp_cli_apply_shape(mp_session *s, const mp_shape_args *sp, int k, int j);

/* ---- report_out.c: report formats ------------------------------------------------------ */
typedef enum mp_report_format {
    MP_FMT_TEXT = 0, MP_FMT_JSON, MP_FMT_SVG, MP_FMT_HTML, MP_FMT_CHROME, MP_FMT_COUNT
} mp_report_format;
typedef struct mp_report_opts {
    bool exact;          /* text: exact bytes, every row */
    size_t max_points;   /* timeline points (0 = the profile's default) */
} mp_report_opts;
/* "text", "json", "svg", "html", "chrome" -> mp_report_format; -1 when unknown. */
int mp_report_format_parse(const char *name);
/* Profile the events of src and write the report in fmt to path (NULL or "-" = stdout),
 * atomically; errors are printed; returns the exit code. */
typedef struct mp_source mp_source;
int mp_cli_write_report(const char *cmd, mp_source *src, mp_report_format fmt,
                        const char *path, const mp_report_opts *o);

/* ---- proc_stat.c ---------------------------------------------------------------------- */
/* Resident set size and its high-water mark of this process, in bytes. */
bool mp_proc_rss(uint64_t *rss, uint64_t *hwm);
/* Record an RSS sample in the trace (nothing when tr is NULL or /proc is unreadable). */
typedef struct mp_trace mp_trace;
void mp_trace_rss_sample(mp_trace *tr);
/* The RSS sample after run r (0-based) of n: taken after the first and the last run, and
 * after the others when MP_RSS_PACE_NS or more passed since *last_ns (the time of the last
 * sample this call took, 0 before any). Reading /proc costs microseconds, more than a small
 * model's run: a sample after every one of 100,000 runs made `memprof run` ten times slower
 * and its trace 100,000 events longer; the high-water mark of the last sample is the run's
 * peak all the same. */
#define MP_RSS_PACE_NS 1000000ull
void mp_trace_rss_sample_run(mp_trace *tr, long r, long n, uint64_t *last_ns);

/* Monotonic clock in nanoseconds. */
uint64_t mp_now_ns(void);

/* An output file, written as engine/files.c does (atomically for regular files and new
 * paths, in place for devices and FIFOs, stdout for NULL or "-"): a failure never leaves a
 * partial file, and a path never has its device node, FIFO or symlink replaced. The "why"
 * texts are the reason only: callers print "cannot write PATH: WHY". */
typedef struct mp_out {
    FILE *f;
    mp_file_out fo;
} mp_out;
bool mp_out_open(mp_out *o, const char *path, char *why, size_t n);
bool mp_out_commit(mp_out *o, char *why, size_t n);
void mp_out_abort(mp_out *o);

/* The files a command reads and writes, so that no output overwrites an input (compared by
 * device and inode, symlinks followed; by resolved path when not there yet) and no two
 * outputs are one file. zoo: models and NULL paths are skipped. */
#define MP_CLI_FILES_MAX 80
typedef struct mp_cli_files {
    const char *in[MP_CLI_FILES_MAX], *out[MP_CLI_FILES_MAX];
    int n_in, n_out;
    const char *out_dir; /* --output-dir: the files it writes are checked too */
} mp_cli_files;
void mp_cli_files_in(mp_cli_files *f, const char *path);
void mp_cli_files_out(mp_cli_files *f, const char *path);
/* The FILEs of --input NAME=FILE specs. */
void mp_cli_files_inputs(mp_cli_files *f, const char *const *specs, int n);
/* 0; or the usage error (printed as cmd's, exit 2) naming the output and the input; or,
 * when an output's folder cannot be written, that error (exit 3), before any work. */
int mp_cli_files_check(const char *cmd, const mp_cli_files *f);

/* Write `bytes` to `path` atomically (temp file + rename): no partial file on failure. */
bool mp_write_file_atomic(const char *path, const void *bytes, size_t size, char *why, size_t n);

#endif
