/* Status codes and error messages: part of the trace floor (trace/), shared by the engine,
 * the analyzers, the reports, the TUI and the cli. Public functions return an mp_status and
 * write a human-readable message (naming the file, tensor or operator at fault) into an
 * mp_error supplied by the caller. */
#ifndef MP_STATUS_H
#define MP_STATUS_H

#include <stddef.h>

typedef enum mp_status {
    MP_OK = 0,
    MP_ERR_IO,          /* file cannot be opened, read or mapped */
    MP_ERR_FORMAT,      /* malformed or truncated model file */
    MP_ERR_UNSUPPORTED, /* valid model, but an operator, dtype or feature we do not run */
    MP_ERR_SHAPE,       /* shapes an operator cannot take */
    MP_ERR_ARG,         /* bad argument from the caller (API misuse, bad flag value) */
    MP_ERR_NOMEM,       /* allocation failed */
    MP_ERR_BACKEND,     /* XNNPACK or pthreadpool reported a failure */
    MP_ERR_DEFERRED     /* not an error: a shape depends on data known only while running */
} mp_status;

typedef struct mp_error {
    mp_status status;
    char msg[512];
} mp_error;

/* Record an error (printf-style) and return its status, so callers can write
 * `return mp_fail(err, MP_ERR_FORMAT, "...", ...);`. err may be NULL. */
mp_status mp_fail(mp_error *err, mp_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Short stable name of a status ("format", "unsupported", ...). */
const char *mp_status_name(mp_status st);

#endif
