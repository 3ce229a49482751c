/* Error recording helpers for mp_status / mp_error. */
#include "trace/status.h"

#include <stdarg.h>
#include <stdio.h>

mp_status mp_fail(mp_error *err, mp_status st, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->status = st;
    }
    return st;
}

const char *mp_status_name(mp_status st)
{
    switch (st) {
    case MP_OK: return "ok";
    case MP_ERR_IO: return "io";
    case MP_ERR_FORMAT: return "format";
    case MP_ERR_UNSUPPORTED: return "unsupported";
    case MP_ERR_SHAPE: return "shape";
    case MP_ERR_ARG: return "argument";
    case MP_ERR_NOMEM: return "out-of-memory";
    case MP_ERR_BACKEND: return "backend";
    case MP_ERR_DEFERRED: return "deferred";
    }
    return "unknown";
}
