/* Helpers shared by the subcommands: exit codes, error printing, argument parsing, clock,
 * and atomic file writes. */
#include "cli/cli.h"

#include "trace/files.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int mp_exit_for(mp_status st)
{
    switch (st) {
    case MP_OK: return MP_EXIT_OK;
    case MP_ERR_IO: return MP_EXIT_IO;
    case MP_ERR_FORMAT: return MP_EXIT_FORMAT;
    case MP_ERR_UNSUPPORTED: return MP_EXIT_UNSUPPORTED;
    case MP_ERR_SHAPE: return MP_EXIT_SHAPE;
    case MP_ERR_ARG: return MP_EXIT_USAGE;
    default: return MP_EXIT_RUNTIME;
    }
}

int mp_report_error(const mp_error *err)
{
    fprintf(stderr, "memprof: %s\n", err->msg[0] ? err->msg : mp_status_name(err->status));
    return mp_exit_for(err->status);
}

int mp_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "memprof %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry 'memprof %s --help'.\n", cmd);
    va_end(ap);
    return MP_EXIT_USAGE;
}

bool mp_parse_int(const char *s, long lo, long hi, long *out)
{
    if (!s || !*s)
        return false;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

int mp_parse_dims(const char *s, int32_t *dims, int max)
{
    int rank = 0;
    const char *p = s;
    if (!*p)
        return 0;
    for (;;) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (end == p || errno || v < 1 || v > INT32_MAX || rank >= max)
            return -1;
        dims[rank++] = (int32_t)v;
        if (*end == 0)
            return rank;
        if (*end != ',' && *end != 'x')
            return -1;
        p = end + 1;
    }
}

bool mp_is_help(const char *a)
{
    return strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0;
}

uint64_t mp_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The command line's side of engine/files.c: the reason of its "cannot write PATH: REASON"
 * as the "why" text the commands print after their own "cannot write PATH: ". */
static void reason_of(const mp_error *err, const char *path, char *why, size_t n)
{
    const char *m = err->msg, *pre = "cannot write ";
    if (!path)
        path = "standard output";
    size_t pl = strlen(pre), l = path ? strlen(path) : 0;
    if (path && strncmp(m, pre, pl) == 0 && strncmp(m + pl, path, l) == 0 && strncmp(m + pl + l, ": ", 2) == 0)
        m += pl + l + 2;
    snprintf(why, n, "%s", m);
}

bool mp_out_open(mp_out *o, const char *path, char *why, size_t n)
{
    mp_error err = {0};
    if (mp_file_out_open(&o->fo, path, &err) != MP_OK) {
        o->f = NULL;
        reason_of(&err, path, why, n);
        return false;
    }
    o->f = o->fo.f;
    return true;
}

bool mp_out_commit(mp_out *o, char *why, size_t n)
{
    mp_error err = {0};
    const char *path = o->fo.name;
    o->f = NULL;
    if (mp_file_out_commit(&o->fo, &err) != MP_OK) {
        reason_of(&err, path, why, n);
        return false;
    }
    return true;
}

void mp_out_abort(mp_out *o)
{
    mp_file_out_abort(&o->fo);
    o->f = NULL;
}

bool mp_write_file_atomic(const char *path, const void *bytes, size_t size, char *why, size_t n)
{
    mp_out o;
    if (!mp_out_open(&o, path, why, n))
        return false;
    if (size && fwrite(bytes, 1, size, o.f) != size) {
        snprintf(why, n, "%s", strerror(errno ? errno : EIO));
        mp_out_abort(&o);
        return false;
    }
    return mp_out_commit(&o, why, n);
}

/* ---- outputs that would overwrite inputs -------------------------------------------- */

void mp_cli_files_in(mp_cli_files *f, const char *path)
{
    if (path && strncmp(path, "zoo:", 4) != 0 && f->n_in < MP_CLI_FILES_MAX)
        f->in[f->n_in++] = path;
}

void mp_cli_files_out(mp_cli_files *f, const char *path)
{
    if (path && f->n_out < MP_CLI_FILES_MAX)
        f->out[f->n_out++] = path;
}

void mp_cli_files_inputs(mp_cli_files *f, const char *const *specs, int n)
{
    for (int i = 0; i < n; i++) {
        const char *eq = strchr(specs[i], '=');
        mp_cli_files_in(f, eq ? eq + 1 : specs[i]);
    }
}

/* The files --output-dir writes (cmd_run.c's write_outputs: output_J.bin and outputs.json):
 * does `in` name one of them? */
static bool in_output_dir(const char *dir, const char *in)
{
    const char *slash = strrchr(in, '/');
    const char *base = slash ? slash + 1 : in;
    unsigned j;
    char tail;
    if (strcmp(base, "outputs.json") != 0 && !(sscanf(base, "output_%u.bi%c", &j, &tail) == 2 && tail == 'n'))
        return false;
    size_t n = strlen(dir) + strlen(base) + 2;
    char *p = malloc(n);
    if (!p)
        return false;
    snprintf(p, n, "%s/%s", dir, base);
    bool same = mp_file_same(in, p);
    free(p);
    return same;
}

int mp_cli_files_check(const char *cmd, const mp_cli_files *f)
{
    for (int o = 0; o < f->n_out; o++) {
        for (int i = 0; i < f->n_in; i++)
            if (mp_file_same(f->in[i], f->out[o]))
                return mp_usage_error(cmd, "output %s is the input %s: refusing to overwrite it",
                                      f->out[o], f->in[i]);
        for (int p = 0; p < o; p++)
            if (mp_file_same(f->out[p], f->out[o]))
                return mp_usage_error(cmd, "%s and %s name the same output file", f->out[p],
                                      f->out[o]);
    }
    if (f->out_dir)
        for (int i = 0; i < f->n_in; i++)
            if (in_output_dir(f->out_dir, f->in[i]))
                return mp_usage_error(cmd, "--output-dir %s would overwrite the input %s",
                                      f->out_dir, f->in[i]);
    /* an output that cannot be written is found now, not after the model has run */
    mp_error err = {0};
    for (int o = 0; o < f->n_out; o++)
        if (mp_file_out_check(f->out[o], false, &err) != MP_OK)
            return mp_report_error(&err);
    if (f->out_dir && mp_file_out_check(f->out_dir, true, &err) != MP_OK)
        return mp_report_error(&err);
    return 0;
}
