/* Event sources: a trace's metadata and its events in order, from memory or streamed from a
 * saved file.
 *
 * Every analysis reads its trace through a source, so that a saved trace of ten million
 * events is analysed in bounded memory: a file source holds the metadata and a read buffer,
 * never the events, and each pass re-reads the file. A memory source walks the events of an
 * mp_trace (the one `memprof run` just recorded, or one read with mp_trace_load).
 *
 * A file source checks the file as strictly as mp_trace_load (trace_io.c) does, event by
 * event as a pass reaches it: a malformed event ends the pass with MP_ERR_FORMAT naming the
 * file, the event (and line) and the field. Analyses finish their first pass before anything
 * is written, so a bad file never leaves a partial output. */
#ifndef MP_SOURCE_H
#define MP_SOURCE_H

#include <stdbool.h>
#include <stddef.h>

#include "trace/status.h"
#include "trace/trace.h"

typedef struct mp_source mp_source;

/* A source over the events of tr (not copied, not owned: tr must outlive the source).
 * NULL when out of memory. */
mp_source *mp_source_of_trace(const mp_trace *tr);

/* Open a saved trace (format of trace_io.c, versions 1..MP_TRACE_VERSION): reads and checks
 * everything before the events (format, version, metadata, event fields) and leaves the
 * source at the first event. MP_ERR_IO when the file cannot be read, MP_ERR_FORMAT when it
 * is not a valid trace. */
mp_status mp_source_open(const char *path, mp_source **out, mp_error *err);

void mp_source_close(mp_source *s);

/* The trace's metadata (valid while the source is open). */
const mp_trace_meta *mp_source_meta(const mp_source *s);

/* The file's path, or "trace" for a memory source (for messages). */
const char *mp_source_name(const mp_source *s);

/* The recorder ran out of memory while recording: the events are a prefix of the session. */
bool mp_source_truncated(const mp_source *s);

/* Start a new pass at the first event. */
mp_status mp_source_rewind(mp_source *s, mp_error *err);

/* The next event of the pass: 1 when *ev holds it, 0 at the end of the events (for a file:
 * the rest of the file was checked too), -1 on error (*err says what; the pass is over). */
int mp_source_next(mp_source *s, mp_event *ev, mp_error *err);

/* Number of events: known for a memory source, and for a file once a pass reached the end;
 * SIZE_MAX before that. */
size_t mp_source_count(const mp_source *s);

#endif
