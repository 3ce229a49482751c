/* memprof run's outputs: each output's summary (min, max, mean, sum, the first values, a
 * classifier's top 5) printed after the model and inputs, and --output-dir's raw files with
 * their JSON index (outputs.json, format memprof-outputs). */
#ifndef MP_RUN_OUTPUTS_H
#define MP_RUN_OUTPUTS_H

#include <stdbool.h>

#include "engine/session.h"

/* The model, its inputs and every output's summary; with bind false each output is first
 * copied out through the session (a recorded copy), as a caller of the API would. Errors
 * printed; returns the exit code. */
int mp_cli_print_outputs(mp_session *s, bool bind);
/* output_J.bin (raw little-endian) and outputs.json in dir, atomically; errors printed;
 * returns the exit code. */
int mp_cli_write_outputs(mp_session *s, const char *dir);

#endif
