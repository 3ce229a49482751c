/* Fixtures shared by the tests of saved traces (test_trace.c, test_source.c): a small valid
 * trace file and variants of it with one piece changed, and field-by-field comparisons of
 * events and metadata. */
#ifndef MP_TRACE_FIXTURES_H
#define MP_TRACE_FIXTURES_H

#include <stddef.h>

#include "trace/trace.h"

/* A small valid saved trace (version 1: 2 tensors, 1 operator, 3 events, one per line). */
extern const char mp_test_valid_trace[];

/* mp_test_valid_trace with the first occurrence of from replaced by to (malloc'd; fails the
 * test when from is not in it). */
char *mp_test_valid_trace_with(const char *from, const char *to);

/* Every field of two events equal (i: the event's index, for the message). */
void mp_test_assert_event_equal(const mp_event *a, const mp_event *b, size_t i);
/* Every field of two trace metadata equal (names may both be NULL). */
void mp_test_assert_meta_equal(const mp_trace_meta *a, const mp_trace_meta *b);

#endif
