/* Helpers shared by the tests: locating ../shared, skipping when it is absent, reading
 * files, and tolerant float comparison (the oracle input formula is mp_reference_input). */
#ifndef MP_TESTUTIL_H
#define MP_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/model/model.h"

/* Exit code CTest reports as "skipped". */
#define MP_TEST_SKIP 77

/* Path of a shared model ("<shared>/models/<name>.tflite") or NULL when ../shared is absent. */
const char *mp_test_shared_dir(void);
/* Exit 77 with a message naming what is missing when ../shared/models is absent. */
void mp_test_require_shared(void);
/* Join into a static buffer: mp_test_path("models", "x.tflite"). */
const char *mp_test_path(const char *sub, const char *file);
/* Read a whole file (malloc'd; caller frees). NULL when it cannot. */
void *mp_test_read_file(const char *path, size_t *size);
/* Largest |a-b| / max(|b|, floor) over n floats; also reports the index of it. */
double mp_test_max_rel_err(const float *a, const float *b, size_t n, double floor, size_t *at);

#endif
