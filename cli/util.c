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

bool mp_write_file_atomic(const char *path, const void *bytes, size_t size, char *why, size_t n)
{
    size_t len = strlen(path);
    char *tmp = malloc(len + 32);
    if (!tmp) {
        snprintf(why, n, "out of memory");
        return false;
    }
    snprintf(tmp, len + 32, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    bool ok = f != NULL;
    if (ok && size && fwrite(bytes, 1, size, f) != size)
        ok = false;
    if (f && fclose(f) != 0)
        ok = false;
    if (ok && rename(tmp, path) != 0)
        ok = false;
    if (!ok) {
        snprintf(why, n, "%s", strerror(errno));
        unlink(tmp);
    }
    free(tmp);
    return ok;
}
