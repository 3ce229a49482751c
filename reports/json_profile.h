/* JSON output of a profile (format "memprof-report", version 1) and of two profiles
 * compared ("memprof-diff", version 1): every figure of analyzers/profile.h, field by field
 * as the README documents. Built with jansson; names that are not valid UTF-8 have their
 * bad bytes replaced by '?'. */
#ifndef MP_JSON_PROFILE_H
#define MP_JSON_PROFILE_H

#include <jansson.h>
#include <stdio.h>

#include "analyzers/profile.h"
#include "trace/status.h"

#define MP_REPORT_FORMAT "memprof-report"
#define MP_REPORT_VERSION 2
#define MP_DIFF_FORMAT "memprof-diff"
#define MP_DIFF_VERSION 2

/* The document as a jansson value (caller owns it: json_decref), NULL when out of memory. */
json_t *mp_profile_json(const mp_profile *p);
json_t *mp_profile_diff_json(const mp_profile *a, const mp_profile *b, const mp_profile_diff *d);

/* Write the document to f (compact, keys in documented order, one final newline).
 * MP_ERR_NOMEM, or MP_ERR_IO when f cannot be written. */
mp_status mp_report_profile_json(FILE *f, const mp_profile *p, mp_error *err);
mp_status mp_report_diff_json(FILE *f, const mp_profile *a, const mp_profile *b,
                              const mp_profile_diff *d, mp_error *err);

#endif
