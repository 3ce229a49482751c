/* The streaming reader of saved traces (format: top of trace_io.c), part of the trace floor
 * (trace/) shared by the engine and the analysis.
 *
 * Opening reads and checks everything before the events (format, version, metadata, event
 * fields; members in any order), then each call to mp_trace_reader_next parses and checks
 * one event from a 1 MiB read buffer, exactly as strictly as the format asks; after the last
 * event the rest of the file is checked (closing brackets, members after "events", nothing
 * but whitespace at the end). Memory: the metadata and the buffer, never the events. A
 * rewind seeks back to the first event. mp_trace_load and file sources (analyzers/source.h)
 * both read through this, so the format has one reader.
 *
 * Errors are MP_ERR_IO (cannot open or read) or MP_ERR_FORMAT with a message naming the
 * file and what is wrong; an event's problem names the event, its line and the field:
 *   "t.json: event 12 (line 15): field 'bytes' is not a non-negative integer" */
#ifndef MP_TRACE_READER_H
#define MP_TRACE_READER_H

#include <stdbool.h>
#include <stddef.h>

#include "trace/status.h"
#include "trace/trace.h"

typedef struct mp_trace_reader mp_trace_reader;

mp_status mp_trace_reader_open(const char *path, mp_trace_reader **out, mp_error *err);
void mp_trace_reader_close(mp_trace_reader *rd);

/* The metadata, held in an mp_trace without events (valid until close, or for as long as
 * the released trace lives). */
const mp_trace_meta *mp_trace_reader_meta(const mp_trace_reader *rd);
/* Hand the trace holding the metadata to the caller (who destroys it; the reader keeps
 * using its metadata until closed). For mp_trace_load, which appends the events to it. */
mp_trace *mp_trace_reader_release_trace(mp_trace_reader *rd);

const char *mp_trace_reader_path(const mp_trace_reader *rd);
int mp_trace_reader_version(const mp_trace_reader *rd);
/* The saved meta's "truncated" member (false when absent). */
bool mp_trace_reader_truncated(const mp_trace_reader *rd);

/* Back to the first event (a seek; nothing is read when the reader is already there). */
mp_status mp_trace_reader_rewind(mp_trace_reader *rd, mp_error *err);
/* 1: *ev holds the next event; 0: no more events and the rest of the file is valid;
 * -1: error (*err says what). After 0 or -1 the pass is over: further calls return the same
 * until a rewind. */
int mp_trace_reader_next(mp_trace_reader *rd, mp_event *ev, mp_error *err);
/* Events in the file, once a pass has reached the end; SIZE_MAX before. */
size_t mp_trace_reader_count(const mp_trace_reader *rd);

#endif
