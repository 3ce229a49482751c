/* The header of a saved trace, read from the jansson trees the streaming reader cuts out
 * (trace_reader.c): "meta" (model, planner, tensor and operator names, flags) and
 * "event_fields", every value checked against the format (trace_format.h). */
#include "trace/trace_reader_internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/safe_text.h"

/* A format error naming the file. Messages quote the file's own bytes (jansson's "near
 * '...'", a member name): those are escaped, so that a message stays on one line. */
mp_status mp_trace_header_fail(mp_trace_header_loader *ld, const char *fmt, ...)
{
    char msg[400], safe[MP_SAFE_TEXT_SIZE(400)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return mp_fail(ld->err, MP_ERR_FORMAT, "%s: %s", ld->path,
                   mp_safe_text(safe, sizeof safe, msg));
}

static mp_status nomem(mp_trace_header_loader *ld)
{
    return mp_fail(ld->err, MP_ERR_NOMEM, "%s: out of memory while reading the trace", ld->path);
}

/* Member key of obj (named where), which must exist. */
static mp_status member(mp_trace_header_loader *ld, json_t *obj, const char *where, const char *key,
                        json_t **out)
{
    *out = json_object_get(obj, key);
    if (!*out)
        return mp_trace_header_fail(ld, "%s has no '%s'", where, key);
    return MP_OK;
}

/* An integer in lo..hi. what names it in the message. */
static mp_status get_int(mp_trace_header_loader *ld, json_t *v, const char *what, int64_t lo,
                         int64_t hi, int64_t *out)
{
    if (!json_is_integer(v)) {
        if (lo == 0 && hi == INT64_MAX)
            return mp_trace_header_fail(ld, "%s is not a non-negative integer", what);
        return mp_trace_header_fail(ld, "%s is not an integer", what);
    }
    json_int_t x = json_integer_value(v);
    if (x < lo || x > hi) {
        if (lo == 0 && hi == INT64_MAX)
            return mp_trace_header_fail(ld, "%s is not a non-negative integer", what);
        return mp_trace_header_fail(ld, "%s is %" PRId64 ", outside %" PRId64 "..%" PRId64, what,
                                    (int64_t)x, lo, hi);
    }
    *out = (int64_t)x;
    return MP_OK;
}

/* Member key of obj as an integer in lo..hi. */
static mp_status get_int_member(mp_trace_header_loader *ld, json_t *obj, const char *where,
                                const char *key, int64_t lo, int64_t hi, int64_t *out)
{
    json_t *v;
    char what[96];
    mp_status st = member(ld, obj, where, key, &v);
    if (st != MP_OK)
        return st;
    snprintf(what, sizeof what, "%s.%s", where, key);
    return get_int(ld, v, what, lo, hi, out);
}

/* Member key of obj as a string or null (*out NULL); *out lives as long as obj. */
static mp_status get_str_member(mp_trace_header_loader *ld, json_t *obj, const char *where,
                                const char *key, const char **out)
{
    json_t *v;
    mp_status st = member(ld, obj, where, key, &v);
    *out = NULL;
    if (st != MP_OK)
        return st;
    if (json_is_null(v))
        return MP_OK;
    if (!json_is_string(v))
        return mp_trace_header_fail(ld, "%s.%s is not a string", where, key);
    *out = json_string_value(v);
    return MP_OK;
}

/* Member key of obj as a string or null, copied into *field of the trace's metadata. */
static mp_status copy_str_member(mp_trace_header_loader *ld, json_t *obj, const char *where,
                                 const char *key, char **field)
{
    const char *s;
    mp_status st = get_str_member(ld, obj, where, key, &s);
    if (st != MP_OK)
        return st;
    return mp_trace_set_str(ld->tr, field, s) ? MP_OK : nomem(ld);
}

/* Member key of obj as an array (of any length). */
static mp_status get_array_member(mp_trace_header_loader *ld, json_t *obj, const char *where,
                                  const char *key, json_t **out)
{
    mp_status st = member(ld, obj, where, key, out);
    if (st != MP_OK)
        return st;
    if (!json_is_array(*out))
        return mp_trace_header_fail(ld, "%s.%s is not an array", where, key);
    if (json_array_size(*out) > INT32_MAX)
        return mp_trace_header_fail(ld, "%s.%s is too long", where, key);
    return MP_OK;
}

/* A JSON array of integers into a new int32 array (*out stays NULL when empty). Ranges
 * against the tensor table are checked later by check_meta. */
static mp_status get_int_list(mp_trace_header_loader *ld, json_t *arr, const char *what,
                              int32_t **out)
{
    size_t n = json_array_size(arr);
    *out = NULL;
    if (n == 0)
        return MP_OK;
    int32_t *v = malloc(n * sizeof *v);
    if (!v)
        return nomem(ld);
    for (size_t i = 0; i < n; i++) {
        char w[96];
        int64_t x;
        json_t *e = json_array_get(arr, i);
        if (!json_is_integer(e) || json_integer_value(e) < INT32_MIN ||
            json_integer_value(e) > INT32_MAX) {
            snprintf(w, sizeof w, "%s[%zu]", what, i);
            free(v);
            return get_int(ld, e, w, INT32_MIN, INT32_MAX, &x);
        }
        v[i] = (int32_t)json_integer_value(e);
    }
    *out = v;
    return MP_OK;
}

static mp_status load_tensors(mp_trace_header_loader *ld, json_t *arr, mp_trace_meta *m)
{
    for (int32_t i = 0; i < m->n_tensors; i++) {
        char where[48];
        int64_t dtype = 0;
        json_t *t = json_array_get(arr, (size_t)i), *c;
        snprintf(where, sizeof where, "meta.tensors[%d]", (int)i);
        if (!json_is_object(t))
            return mp_trace_header_fail(ld, "%s is not an object", where);
        mp_status st = copy_str_member(ld, t, where, "name", &m->tensors[i].name);
        if (st == MP_OK)
            st = get_int_member(ld, t, where, "dtype", INT32_MIN, INT32_MAX, &dtype);
        if (st == MP_OK)
            st = member(ld, t, where, "const", &c);
        if (st != MP_OK)
            return st;
        if (!json_is_boolean(c))
            return mp_trace_header_fail(ld, "%s.const is not true or false", where);
        m->tensors[i].dtype = (int32_t)dtype;
        m->tensors[i].is_const = json_is_true(c);
        if (json_object_get(t, "shares")) { /* optional: a tensor in place */
            int64_t sh = 0;
            st = get_int_member(ld, t, where, "shares", 0, m->n_tensors - 1, &sh);
            if (st != MP_OK)
                return st;
            if (sh == i)
                return mp_trace_header_fail(ld, "%s.shares names the tensor itself", where);
            m->tensors[i].in_place = true;
            m->tensors[i].shares = (int32_t)sh;
        }
    }
    return MP_OK;
}

/* "models" (optional: a chain's trace, memprof pipeline): which tensors, operators and
 * blocks belong to which model; ranges are checked by mp_tfmt_check_meta. */
static mp_status load_models(mp_trace_header_loader *ld, json_t *meta)
{
    json_t *arr = json_object_get(meta, "models");
    if (!arr)
        return MP_OK;
    if (!json_is_array(arr) || json_array_size(arr) > INT32_MAX)
        return mp_trace_header_fail(ld, "meta.models is not an array");
    size_t n = json_array_size(arr);
    mp_trace_model *v = calloc(n + 1, sizeof *v);
    if (!v)
        return nomem(ld);
    static const char *const keys[] = {"first_tensor", "n_tensors", "first_op", "n_ops",
                                       "first_id", "n_ids"};
    mp_status st = MP_OK;
    for (size_t k = 0; k < n && st == MP_OK; k++) {
        json_t *o = json_array_get(arr, k);
        char where[48];
        snprintf(where, sizeof where, "meta.models[%zu]", k);
        if (!json_is_object(o)) {
            st = mp_trace_header_fail(ld, "%s is not an object", where);
            break;
        }
        const char *name;
        int64_t x[6];
        st = get_str_member(ld, o, where, "name", &name);
        for (int i = 0; i < 6 && st == MP_OK; i++)
            st = get_int_member(ld, o, where, keys[i], 0, i < 4 ? INT32_MAX : INT64_MAX, &x[i]);
        if (st == MP_OK)
            v[k] = (mp_trace_model){(char *)name, (int32_t)x[0], (int32_t)x[1], (int32_t)x[2],
                                    (int32_t)x[3], (uint64_t)x[4], (uint64_t)x[5]};
    }
    if (st == MP_OK && !mp_trace_set_models(ld->tr, (int32_t)n, v))
        st = nomem(ld);
    free(v);
    return st;
}

static mp_status load_ops(mp_trace_header_loader *ld, json_t *arr, mp_trace_meta *m)
{
    for (int32_t i = 0; i < m->n_ops; i++) {
        char where[48], what[64];
        json_t *o = json_array_get(arr, (size_t)i), *ins, *outs;
        int32_t *in_v = NULL, *out_v = NULL;
        const char *name = NULL;
        snprintf(where, sizeof where, "meta.ops[%d]", (int)i);
        if (!json_is_object(o))
            return mp_trace_header_fail(ld, "%s is not an object", where);
        mp_status st = get_array_member(ld, o, where, "inputs", &ins);
        if (st == MP_OK)
            st = get_array_member(ld, o, where, "outputs", &outs);
        if (st == MP_OK)
            st = get_str_member(ld, o, where, "name", &name);
        if (st == MP_OK) {
            snprintf(what, sizeof what, "%s.inputs", where);
            st = get_int_list(ld, ins, what, &in_v);
        }
        if (st == MP_OK) {
            snprintf(what, sizeof what, "%s.outputs", where);
            st = get_int_list(ld, outs, what, &out_v);
        }
        if (st == MP_OK && !mp_trace_set_op(ld->tr, i, name, (int32_t)json_array_size(ins),
                                            in_v, (int32_t)json_array_size(outs), out_v))
            st = nomem(ld);
        free(in_v);
        free(out_v);
        if (st != MP_OK)
            return st;
    }
    return MP_OK;
}

/* A byte count of meta: NAME_bytes (version 3), or NAME in a file of version 1 or 2. */
static const char *bytes_key(json_t *meta, const char *name)
{
    static const char *const now[] = {"process_heap_peak_bytes", "allocator_overhead_bytes"};
    const char *key = strcmp(name, "process_heap_peak") == 0 ? now[0] : now[1];
    return json_object_get(meta, key) || !json_object_get(meta, name) ? key : name;
}

mp_status mp_trace_header_meta(mp_trace_header_loader *ld, json_t *meta)
{
    json_t *tensors, *ops, *ins, *outs;
    int64_t threads, peak, overhead;
    if (!json_is_object(meta))
        return mp_trace_header_fail(ld, "meta is not an object");
    mp_status st = get_array_member(ld, meta, "meta", "tensors", &tensors);
    if (st == MP_OK)
        st = get_array_member(ld, meta, "meta", "ops", &ops);
    if (st == MP_OK)
        st = get_array_member(ld, meta, "meta", "inputs", &ins);
    if (st == MP_OK)
        st = get_array_member(ld, meta, "meta", "outputs", &outs);
    if (st == MP_OK)
        st = get_int_member(ld, meta, "meta", "threads", INT32_MIN, INT32_MAX, &threads);
    if (st == MP_OK)
        st = get_int_member(ld, meta, "meta", bytes_key(meta, "process_heap_peak"), INT64_MIN,
                            INT64_MAX, &peak);
    if (st == MP_OK)
        st = get_int_member(ld, meta, "meta", bytes_key(meta, "allocator_overhead"), INT64_MIN,
                            INT64_MAX, &overhead);
    if (st != MP_OK)
        return st;
    /* optional (later additions; absent in older traces): -1 and 0 */
    int64_t base = -1, model_heap = 0;
    if (json_object_get(meta, "process_heap_base_bytes"))
        st = get_int_member(ld, meta, "meta", "process_heap_base_bytes", -1, INT64_MAX, &base);
    if (st == MP_OK && json_object_get(meta, "model_heap_bytes"))
        st = get_int_member(ld, meta, "meta", "model_heap_bytes", 0, INT64_MAX, &model_heap);
    if (st != MP_OK)
        return st;
    json_t *trunc = json_object_get(meta, "truncated"); /* optional, false when absent */
    if (trunc && !json_is_boolean(trunc))
        return mp_trace_header_fail(ld, "meta.truncated is not true or false");
    ld->truncated = json_is_true(trunc);

    if (!mp_trace_alloc_tables(ld->tr, (int32_t)json_array_size(tensors),
                               (int32_t)json_array_size(ops), (int32_t)json_array_size(ins),
                               (int32_t)json_array_size(outs)))
        return nomem(ld);
    mp_trace_meta *m = mp_trace_meta_mut(ld->tr);
    m->threads = (int32_t)threads;
    m->process_heap_peak = peak;
    m->allocator_overhead = overhead;
    m->process_heap_base = base;
    m->model_heap_bytes = model_heap;

    st = copy_str_member(ld, meta, "meta", "model", &m->model);
    if (st == MP_OK)
        st = copy_str_member(ld, meta, "meta", "mode", &m->mode);
    if (st == MP_OK)
        st = copy_str_member(ld, meta, "meta", "planner", &m->planner);
    if (st == MP_OK)
        st = load_tensors(ld, tensors, m);
    if (st == MP_OK)
        st = load_ops(ld, ops, m);
    for (int32_t i = 0; st == MP_OK && i < m->n_inputs + m->n_outputs; i++) {
        bool is_in = i < m->n_inputs;
        int32_t k = is_in ? i : i - m->n_inputs;
        json_t *v = json_array_get(is_in ? ins : outs, (size_t)k);
        if (!json_is_integer(v) || json_integer_value(v) < INT32_MIN ||
            json_integer_value(v) > INT32_MAX)
            return mp_trace_header_fail(ld, "meta.%s[%d] is not an integer",
                                        is_in ? "inputs" : "outputs", (int)k);
        (is_in ? m->inputs : m->outputs)[k] = (int32_t)json_integer_value(v);
    }
    if (st == MP_OK)
        st = load_models(ld, meta);
    if (st != MP_OK)
        return st;

    char why[300];
    if (!mp_tfmt_check_meta(m, why, sizeof why))
        return mp_trace_header_fail(ld, "%s", why);
    return MP_OK;
}

/* "event_fields": every field name exactly once, in any order; col[k] = field of column k. */
mp_status mp_trace_header_fields(mp_trace_header_loader *ld, json_t *names, int col[MP_TFMT_COUNT])
{
    bool seen[MP_TFMT_COUNT] = {false};
    if (!json_is_array(names) || json_array_size(names) != MP_TFMT_COUNT)
        return mp_trace_header_fail(ld, "event_fields is not an array of the %d event field names",
                                    MP_TFMT_COUNT);
    for (size_t k = 0; k < MP_TFMT_COUNT; k++) {
        const char *s = json_string_value(json_array_get(names, k));
        int f = 0;
        while (s && f < MP_TFMT_COUNT && strcmp(s, mp_tfmt_field_names[f]) != 0)
            f++;
        if (!s || f == MP_TFMT_COUNT)
            return mp_trace_header_fail(ld, "event_fields[%zu] is not an event field name", k);
        if (seen[f])
            return mp_trace_header_fail(ld, "event_fields names '%s' twice", s);
        seen[f] = true;
        col[k] = f;
    }
    return MP_OK;
}
