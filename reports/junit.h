/* JUnit XML of memprof check, which CI systems (GitLab, Jenkins, GitHub test reporters)
 * display natively: one testsuite "memprof", one testcase per check (a figure against a
 * limit or against its baseline), a failure element with the message when it failed. No
 * timestamps or host names: the same checks give the same file. */
#ifndef MP_JUNIT_H
#define MP_JUNIT_H

#include <stdbool.h>
#include <stdio.h>

#include "analyzers/gate.h"

/* Write the report of r to f. subject: what was checked (model or trace path), classname of
 * every testcase; now: its figures (for the model name and the tensors named in failures);
 * tol: the tolerance of baseline checks. MP_ERR_IO when f cannot be written. */
mp_status mp_report_gate_junit(FILE *f, const char *subject, const mp_baseline *now,
                               const mp_gate_result *r, const mp_tolerance *tol,
                               mp_error *err);

#endif
