/* memprof run's outputs: the times of its phases and runs, the memory report and trace file of
 * its recorded session, each output's summary (min, max, mean, sum, the first values, a
 * classifier's top 5) printed after the model and inputs (a quantized output's both as raw
 * integers and as real values scale * (q - zero_point), the top 5 ranked by real value), and
 * --output-dir's raw files with their JSON index (outputs.json, format memprof-outputs, with
 * each quantized output's scale and zero point). */
#ifndef MP_RUN_OUTPUTS_H
#define MP_RUN_OUTPUTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/call_orders.h"
#include "engine/session.h"
#include "trace/trace.h"

/* The model, its inputs and every output's summary, on f. An output the run did not write
 * into the caller's buffer (in->bind false, or with --io bind an output that could not be
 * bound) is first copied out through the session (a recorded copy) into a buffer of the
 * caller's, as a caller of the API would; under --io bind one line then names it and says
 * why it was not bound (an output that is also an input, a shape known only while running,
 * shapes changed after prepare). The caller's heap buffers (these copies, outputs.json's
 * text) are recorded in tr (NULL: none) as the caller's own (trace.h MP_TRACE_CALLER_ID).
 * Errors printed; returns the exit code. */
int mp_cli_print_outputs(FILE *f, mp_session *s, mp_trace *tr, const mp_cli_inputs *in);
/* output_J.bin (raw little-endian) and outputs.json in dir, atomically; errors printed;
 * returns the exit code. */
int mp_cli_write_outputs(mp_session *s, mp_trace *tr, const char *dir);

/* "time load ... prepare ... first timed run ..." and, with several runs, their median, min
 * and mean (times[0..runs), sorted in place), on f. */
void mp_cli_print_times(FILE *f, uint64_t *times, long runs, long warmup, long threads, uint64_t t_load,
                        uint64_t t_prepare);
/* Whether run's report is a document (a format other than text) on stdout (no -o, or -o -):
 * then nothing else is printed there (the other lines go to stderr). */
bool mp_cli_report_on_stdout(int format, const char *report_path);
/* The recorded session's memory report: the run summary (format < 0) or `memprof report`'s
 * report in format (mp_report_format) to report_path (NULL or "-": stdout); then the
 * recorder's size and, with trace_path, the trace saved there (those lines on stderr when
 * the report is a document on stdout). Errors printed; returns the exit code. */
int mp_cli_run_report(const mp_trace *tr, int format, const char *report_path, bool exact,
                      const char *trace_path);

#endif
