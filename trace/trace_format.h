/* The saved trace format's rules, shared by the writer (trace_io.c) and the reader
 * (trace_reader.c), so that each rule exists once: the event fields and their names, the
 * range of each field, and the checks on events and metadata beyond JSON types. The format
 * itself is described at the top of trace_io.c. Internal to the engine. */
#ifndef MP_TRACE_FORMAT_H
#define MP_TRACE_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"

/* The event fields, in the order this writer saves them. */
enum {
    MP_TF_TYPE,
    MP_TF_T_NS,
    MP_TF_PHASE,
    MP_TF_KIND,
    MP_TF_TENSOR,
    MP_TF_OP,
    MP_TF_OP_LAST,
    MP_TF_BYTES,
    MP_TF_ID,
    MP_TF_AUX,
    MP_TF_ALIGN,
    MP_TF_COUNT
};

/* Names of the fields in "event_fields". */
extern const char *const mp_tf_field_names[MP_TF_COUNT];

/* Smallest and largest value a field may hold in a file. */
typedef struct mp_tf_range {
    int64_t lo, hi;
} mp_tf_range;

/* Ranges of every field for a trace with metadata m, in a file of format version `version`
 * (1..MP_TRACE_VERSION; event types came with versions). */
void mp_tf_field_ranges(const mp_trace_meta *m, int version, mp_tf_range r[MP_TF_COUNT]);

/* (Inline: the writer and the reader call these for every field of every event.)
 * A field's value as the file writes it (phase UINT32_MAX is -1). False when the value
 * does not fit the file's integers (an unsigned 64-bit value above 2^63-1). */
static inline bool mp_tf_get_field(const mp_event *e, int f, int64_t *v)
{
    uint64_t u = 0;
    switch (f) {
    case MP_TF_TYPE: *v = e->type; return true;
    case MP_TF_PHASE: *v = e->phase == UINT32_MAX ? -1 : (int64_t)e->phase; return true;
    case MP_TF_KIND: *v = e->kind; return true;
    case MP_TF_TENSOR: *v = e->tensor; return true;
    case MP_TF_OP: *v = e->op; return true;
    case MP_TF_OP_LAST: *v = e->op_last; return true;
    case MP_TF_ALIGN: *v = e->align_log2; return true;
    case MP_TF_T_NS: u = e->t_ns; break;
    case MP_TF_BYTES: u = e->bytes; break;
    case MP_TF_ID: u = e->id; break;
    case MP_TF_AUX: u = e->aux; break;
    }
    *v = (int64_t)u;
    return u <= (uint64_t)INT64_MAX;
}

/* Store a value already checked against mp_tf_field_ranges(). */
static inline void mp_tf_set_field(mp_event *e, int f, int64_t v)
{
    switch (f) {
    case MP_TF_TYPE: e->type = (uint8_t)v; break;
    case MP_TF_T_NS: e->t_ns = (uint64_t)v; break;
    case MP_TF_PHASE: e->phase = v < 0 ? UINT32_MAX : (uint32_t)v; break;
    case MP_TF_KIND: e->kind = (uint8_t)v; break;
    case MP_TF_TENSOR: e->tensor = (int32_t)v; break;
    case MP_TF_OP: e->op = (int32_t)v; break;
    case MP_TF_OP_LAST: e->op_last = (int32_t)v; break;
    case MP_TF_BYTES: e->bytes = (uint64_t)v; break;
    case MP_TF_ID: e->id = (uint64_t)v; break;
    case MP_TF_AUX: e->aux = (uint64_t)v; break;
    case MP_TF_ALIGN: e->align_log2 = (uint8_t)v; break;
    }
}

/* Checks beyond each field's own range, on fields whose meaning depends on the type.
 * Writes the problem into why and returns false. */
bool mp_tf_check_event_aux(const mp_event *e, char *why, size_t n);

/* Everything in the metadata that reading checks beyond JSON types. */
bool mp_tf_check_meta(const mp_trace_meta *m, char *why, size_t n);

#endif
