/* Chrome Trace Event Format output, `memprof report --format chrome`: a JSON file that
 * Perfetto (ui.perfetto.dev) and chrome://tracing open.
 *
 * One process (the session) with one thread whose slices are the phases (load, prepare,
 * shape, io, "run N", teardown) with the operators run inside them nested in ("#3 CONV_2D",
 * args: op, run, step), as "X" complete events; counter tracks ("C" events) of the live
 * bytes of each kind of memory and of the heap, emitted at every change (figures from the
 * replay, analyzers/replay.h), RSS samples as a counter, copies as instant events.
 * Timestamps are microseconds with nanosecond decimals ("ts":1234.567).
 *
 * Streams: one replay over the source, memory bounded by the live state (blocks, arenas,
 * open operators), never by the number of events. A source whose event count is unknown
 * (a file not read to its end yet) is first read once to check it, so a malformed file
 * fails before anything is written. */
#ifndef MP_CHROME_TRACE_H
#define MP_CHROME_TRACE_H

#include <stdio.h>

#include "analyzers/source.h"
#include "trace/status.h"

/* Write the events of src (rewound: every pass starts at the first event) to f.
 * MP_ERR_FORMAT / MP_ERR_IO from the source, MP_ERR_NOMEM, MP_ERR_IO when writing f
 * fails, MP_ERR_ARG for a NULL argument. */
mp_status mp_report_chrome(mp_source *src, FILE *f, mp_error *err);

#endif
