/* What the trace reader's files share, private to them (trace_reader.c streams the file,
 * trace_header.c reads the header's values from jansson trees): the loader that carries the
 * file's name and the error, and the header readers. Nothing else includes this. */
#ifndef MP_TRACE_READER_INTERNAL_H
#define MP_TRACE_READER_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>

#include "trace/status.h"
#include "trace/trace.h"
#include "trace/trace_format.h"

/* Reading the header's values: where messages go and the trace being filled. */
typedef struct mp_trace_header_loader {
    const char *path;
    mp_error *err;
    mp_trace *tr;
    bool truncated; /* meta.truncated */
} mp_trace_header_loader;

/* A format error naming the file. Messages quote the file's own bytes (jansson's "near
 * '...'", a member name): those are escaped, so that a message stays on one line. */
mp_status mp_trace_header_fail(mp_trace_header_loader *ld, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The "meta" object into ld->tr: tensor and operator tables, inputs, outputs, threads, heap
 * figures, truncated (ld->truncated). */
mp_status mp_trace_header_meta(mp_trace_header_loader *ld, json_t *meta);
/* The "event_fields" array: col[k] is the field (MP_TFMT_*) saved in column k of each event;
 * every field named once. */
mp_status mp_trace_header_fields(mp_trace_header_loader *ld, json_t *names,
                                 int col[MP_TFMT_COUNT]);

#endif
