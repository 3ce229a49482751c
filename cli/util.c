/* Helpers shared by the subcommands: exit codes, error printing, argument parsing, clock,
 * and atomic file writes. */
#include "cli.h"

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

bool mp_out_open(mp_out *o, const char *path, char *why, size_t n)
{
    memset(o, 0, sizeof *o);
    if (!path || strcmp(path, "-") == 0) {
        o->f = stdout;
        return true;
    }
    size_t len = strlen(path);
    o->tmp = malloc(len + 32);
    if (!o->tmp) {
        snprintf(why, n, "out of memory");
        return false;
    }
    snprintf(o->tmp, len + 32, "%s.tmp.%ld", path, (long)getpid());
    o->path = path;
    o->f = fopen(o->tmp, "wb");
    if (!o->f) {
        snprintf(why, n, "%s", strerror(errno));
        free(o->tmp);
        o->tmp = NULL;
        return false;
    }
    return true;
}

bool mp_out_commit(mp_out *o, char *why, size_t n)
{
    if (!o->tmp) { /* stdout */
        bool ok = fflush(o->f) == 0 && !ferror(o->f);
        if (!ok)
            snprintf(why, n, "%s", strerror(errno ? errno : EIO));
        o->f = NULL;
        return ok;
    }
    bool ok = !ferror(o->f);
    errno = 0;
    if (fclose(o->f) != 0)
        ok = false;
    o->f = NULL;
    if (ok && rename(o->tmp, o->path) != 0)
        ok = false;
    if (!ok) {
        snprintf(why, n, "%s", strerror(errno ? errno : EIO));
        unlink(o->tmp);
    }
    free(o->tmp);
    o->tmp = NULL;
    return ok;
}

void mp_out_abort(mp_out *o)
{
    if (o->tmp) {
        if (o->f)
            fclose(o->f);
        unlink(o->tmp);
        free(o->tmp);
    }
    memset(o, 0, sizeof *o);
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
