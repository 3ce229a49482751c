/* The saved trace format's rules, shared by the writer (trace_io.c) and the reader
 * (trace_reader.c), so that each rule exists once: the event fields and their names, the
 * range of each field, and the checks on events and metadata beyond JSON types. The format
 * itself is described at the top of trace_io.c. Part of the trace floor (trace/), shared by
 * the engine and the analysis; the prefix mp_tfmt_ / MP_TFMT_ is for "trace format". */
#ifndef MP_TRACE_FORMAT_H
#define MP_TRACE_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"

/* The event fields, in the order this writer saves them. */
enum {
    MP_TFMT_TYPE,
    MP_TFMT_T_NS,
    MP_TFMT_PHASE,
    MP_TFMT_KIND,
    MP_TFMT_TENSOR,
    MP_TFMT_OP,
    MP_TFMT_OP_LAST,
    MP_TFMT_BYTES,
    MP_TFMT_ID,
    MP_TFMT_AUX,
    MP_TFMT_ALIGN,
    MP_TFMT_COUNT
};

/* Names of the fields in "event_fields". */
extern const char *const mp_tfmt_field_names[MP_TFMT_COUNT];

/* Smallest and largest value a field may hold in a file. */
typedef struct mp_tfmt_range {
    int64_t lo, hi;
} mp_tfmt_range;

/* Ranges of every field for a trace with metadata m, in a file of format version `version`
 * (1..MP_TRACE_VERSION; event types came with versions). */
void mp_tfmt_field_ranges(const mp_trace_meta *m, int version, mp_tfmt_range r[MP_TFMT_COUNT]);

/* (Inline: the writer and the reader call these for every field of every event.)
 * A field's value as the file writes it (phase UINT32_MAX is -1). False when the value
 * does not fit the file's integers (an unsigned 64-bit value above 2^63-1). */
static inline bool mp_tfmt_get_field(const mp_event *e, int f, int64_t *v)
{
    uint64_t u = 0;
    switch (f) {
    case MP_TFMT_TYPE: *v = e->type; return true;
    case MP_TFMT_PHASE: *v = e->phase == UINT32_MAX ? -1 : (int64_t)e->phase; return true;
    case MP_TFMT_KIND: *v = e->kind; return true;
    case MP_TFMT_TENSOR: *v = e->tensor; return true;
    case MP_TFMT_OP: *v = e->op; return true;
    case MP_TFMT_OP_LAST: *v = e->op_last; return true;
    case MP_TFMT_ALIGN: *v = e->align_log2; return true;
    case MP_TFMT_T_NS: u = e->t_ns; break;
    case MP_TFMT_BYTES: u = e->bytes; break;
    case MP_TFMT_ID: u = e->id; break;
    case MP_TFMT_AUX: u = e->aux; break;
    }
    *v = (int64_t)u;
    return u <= (uint64_t)INT64_MAX;
}

/* Store a value already checked against mp_tfmt_field_ranges(). */
static inline void mp_tfmt_set_field(mp_event *e, int f, int64_t v)
{
    switch (f) {
    case MP_TFMT_TYPE: e->type = (uint8_t)v; break;
    case MP_TFMT_T_NS: e->t_ns = (uint64_t)v; break;
    case MP_TFMT_PHASE: e->phase = v < 0 ? UINT32_MAX : (uint32_t)v; break;
    case MP_TFMT_KIND: e->kind = (uint8_t)v; break;
    case MP_TFMT_TENSOR: e->tensor = (int32_t)v; break;
    case MP_TFMT_OP: e->op = (int32_t)v; break;
    case MP_TFMT_OP_LAST: e->op_last = (int32_t)v; break;
    case MP_TFMT_BYTES: e->bytes = (uint64_t)v; break;
    case MP_TFMT_ID: e->id = (uint64_t)v; break;
    case MP_TFMT_AUX: e->aux = (uint64_t)v; break;
    case MP_TFMT_ALIGN: e->align_log2 = (uint8_t)v; break;
    }
}

/* Checks beyond each field's own range, on fields whose meaning depends on the type.
 * Writes the problem into why and returns false. */
bool mp_tfmt_check_event_aux(const mp_event *e, char *why, size_t n);

/* Everything in the metadata that reading checks beyond JSON types. */
bool mp_tfmt_check_meta(const mp_trace_meta *m, char *why, size_t n);

#endif
