/* The saved trace format's rules (trace_format.h), shared by the writer and the reader. */
#include "trace/trace_format.h"

#include <inttypes.h>
#include <stdio.h>

const char *const mp_tfmt_field_names[MP_TFMT_COUNT] = {
    "type", "t_ns", "phase", "kind", "tensor", "op", "op_last", "bytes", "id", "aux",
    "align_log2"};

void mp_tfmt_field_ranges(const mp_trace_meta *m, int version, mp_tfmt_range r[MP_TFMT_COUNT])
{
    for (int f = 0; f < MP_TFMT_COUNT; f++)
        r[f] = (mp_tfmt_range){0, INT64_MAX}; /* t_ns, bytes, id, aux */
    r[MP_TFMT_TYPE].hi = MP_EV_TYPE_COUNT - 1;
    if (version < 2)
        r[MP_TFMT_TYPE].hi = MP_EV_RSS - 1; /* rss samples came with version 2 */
    r[MP_TFMT_PHASE] = (mp_tfmt_range){-1, (int64_t)UINT32_MAX - 1};
    r[MP_TFMT_KIND].hi = MP_KIND_COUNT - 1;
    r[MP_TFMT_TENSOR] = (mp_tfmt_range){-1, (int64_t)m->n_tensors - 1};
    r[MP_TFMT_OP] = (mp_tfmt_range){-1, (int64_t)m->n_ops - 1};
    r[MP_TFMT_OP_LAST] = r[MP_TFMT_OP];
    r[MP_TFMT_ALIGN].hi = 63;
}

/* Checks beyond each field's own range, on fields whose meaning depends on the type.
 * Writes the problem into why and returns false. */
bool mp_tfmt_check_event_aux(const mp_event *e, char *why, size_t n)
{
    if (e->type == MP_EV_PHASE_BEGIN && e->aux >= MP_PHASE_KIND_COUNT) {
        snprintf(why, n, "phase kind (aux) %" PRIu64 " is outside 0..%d", e->aux,
                 MP_PHASE_KIND_COUNT - 1);
        return false;
    }
    if (e->type == MP_EV_COPY && e->aux != MP_COPY_IN && e->aux != MP_COPY_OUT) {
        snprintf(why, n, "copy direction (aux) %" PRIu64 " is neither 0 (in) nor 1 (out)",
                 e->aux);
        return false;
    }
    return true;
}

/* Check one tensor index list of the metadata: values in lo..n_tensors-1. */
static bool check_index_list(const int32_t *v, int32_t n, int32_t lo, int32_t n_tensors,
                             const char *what, char *why, size_t wn)
{
    if (n < 0 || (n > 0 && !v)) {
        snprintf(why, wn, "%s has a bad length %d", what, (int)n);
        return false;
    }
    for (int32_t i = 0; i < n; i++) {
        if (v[i] < lo || v[i] >= n_tensors) {
            snprintf(why, wn, "%s[%d] is %d, outside %d..%d", what, (int)i, (int)v[i],
                     (int)lo, (int)n_tensors - 1);
            return false;
        }
    }
    return true;
}

/* Everything in the metadata that reading checks beyond JSON types. */
bool mp_tfmt_check_meta(const mp_trace_meta *m, char *why, size_t n)
{
    char what[64];
    if (m->threads < 0) {
        snprintf(why, n, "meta.threads is %d, not a non-negative integer", (int)m->threads);
        return false;
    }
    if (m->process_heap_peak < -1) {
        snprintf(why, n, "meta.process_heap_peak_bytes is %" PRId64 ", below -1", m->process_heap_peak);
        return false;
    }
    if (m->allocator_overhead < -1) {
        snprintf(why, n, "meta.allocator_overhead_bytes is %" PRId64 ", below -1",
                 m->allocator_overhead);
        return false;
    }
    if (m->n_tensors < 0 || m->n_ops < 0 || (m->n_tensors > 0 && !m->tensors) ||
        (m->n_ops > 0 && !m->ops)) {
        snprintf(why, n, "meta has bad table sizes");
        return false;
    }
    for (int32_t i = 0; i < m->n_tensors; i++) {
        if (m->tensors[i].dtype < 0 || m->tensors[i].dtype >= MP_TRACE_DTYPE_COUNT) {
            snprintf(why, n, "meta.tensors[%d].dtype is %d, outside 0..%d", (int)i,
                     (int)m->tensors[i].dtype, MP_TRACE_DTYPE_COUNT - 1);
            return false;
        }
    }
    for (int32_t i = 0; i < m->n_ops; i++) {
        const mp_trace_op *op = &m->ops[i];
        snprintf(what, sizeof what, "meta.ops[%d].inputs", (int)i);
        if (!check_index_list(op->inputs, op->n_inputs, -1, m->n_tensors, what, why, n))
            return false;
        snprintf(what, sizeof what, "meta.ops[%d].outputs", (int)i);
        if (!check_index_list(op->outputs, op->n_outputs, -1, m->n_tensors, what, why, n))
            return false;
    }
    for (int32_t k = 0; k < m->n_models; k++) {
        const mp_trace_model *x = &m->models[k];
        if (x->first_tensor < 0 || x->n_tensors < 0 || x->first_tensor > m->n_tensors - x->n_tensors ||
            x->first_op < 0 || x->n_ops < 0 || x->first_op > m->n_ops - x->n_ops ||
            x->first_id > (uint64_t)INT64_MAX || x->n_ids > (uint64_t)INT64_MAX - x->first_id) {
            snprintf(why, n, "meta.models[%d]: its tensors, operators or block ids are outside "
                             "the trace's tables", (int)k);
            return false;
        }
    }
    return check_index_list(m->inputs, m->n_inputs, 0, m->n_tensors, "meta.inputs", why, n) &&
           check_index_list(m->outputs, m->n_outputs, 0, m->n_tensors, "meta.outputs", why, n);
}
