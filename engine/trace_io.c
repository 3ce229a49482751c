/* Saving a trace as JSON and reading it back (mp_trace_save / mp_trace_load, see trace.h).
 *
 * The saved format, version 2 (version 1 is the same without "rss" events):
 *
 *   {"format":"memprof-trace","version":2,
 *    "meta":{"model":S, "mode":S, "planner":S, "threads":N,
 *            "process_heap_peak":N, "allocator_overhead":N,
 *            "tensors":[{"name":S, "dtype":N, "const":true|false}, ...],
 *            "ops":[{"name":S, "inputs":[N,...], "outputs":[N,...]}, ...],
 *            "inputs":[N,...], "outputs":[N,...]},
 *    "event_fields":["type","t_ns","phase","kind","tensor","op","op_last","bytes","id","aux",
 *                    "align_log2"],
 *    "events":[[...],[...],...]}
 *
 * - S is a string, or null when the recorder holds no name. Names are written as UTF-8:
 *   valid UTF-8 (any non-ASCII text) is kept byte for byte, each byte that is not part of a
 *   valid UTF-8 sequence is written as '?'. Names cannot contain NUL bytes.
 * - threads >= 0; process_heap_peak and allocator_overhead are bytes, -1 = not measured.
 * - dtype is the mp_dtype (TensorFlow Lite TensorType) code, 0..MP_DT_COUNT-1.
 * - Tensor indices (op inputs and outputs, events' "tensor") are -1 (none / omitted) or
 *   0..n-1 into "tensors"; the graph's "inputs" and "outputs" are 0..n-1. Operator indices
 *   (events' "op" and "op_last") are -1 (none) or 0..n-1 into "ops".
 * - Each event is an array of integers, one per name of "event_fields" in that order
 *   (a writer may choose the order; this one always writes the order above):
 *     type        mp_ev_type code, 0..MP_EV_TYPE_COUNT-1
 *     t_ns        nanoseconds since the trace was created
 *     phase       index of the phase instance, -1 = before the first phase
 *     kind        MP_KIND_* code, 0..MP_KIND_COUNT-1
 *     tensor, op, op_last   as above
 *     bytes, id, aux        see mp_ev_type in trace.h; aux of a phase_begin event is an
 *                           mp_phase_kind, aux of a copy event is 0 (in) or 1 (out)
 *     align_log2  log2 of the alignment, 0..63
 *   t_ns, bytes, id and aux are 0..2^63-1 (the range JSON readers such as jansson hold
 *   exactly). The event's reserved "flags" byte is not saved; it reads back as 0.
 * - The file has one event per line, so that it can be read and diffed line by line.
 * - Readers accept versions 1..MP_TRACE_VERSION and ignore members they do not know.
 *
 * Saving is atomic: the trace goes to "<path>.tmp.XXXXXX" in the same folder, which is
 * renamed over path only when everything has been written and synced. Saving refuses a
 * trace that reading would refuse (an index or code out of range), so every saved file
 * reads back, with exactly the events and metadata that were saved. */
#include "trace.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/model.h"

/* ---- the event fields, shared by the writer and the reader ------------------------- */

enum {
    F_TYPE,
    F_T_NS,
    F_PHASE,
    F_KIND,
    F_TENSOR,
    F_OP,
    F_OP_LAST,
    F_BYTES,
    F_ID,
    F_AUX,
    F_ALIGN,
    F_COUNT
};

static const char *const field_names[F_COUNT] = {
    "type", "t_ns", "phase", "kind", "tensor", "op", "op_last", "bytes", "id", "aux",
    "align_log2"};

/* Smallest and largest value a field may hold in a file (and so in a trace being saved). */
typedef struct field_range {
    int64_t lo, hi;
} field_range;

static void field_ranges(const mp_trace_meta *m, field_range r[F_COUNT])
{
    for (int f = 0; f < F_COUNT; f++)
        r[f] = (field_range){0, INT64_MAX}; /* t_ns, bytes, id, aux */
    r[F_TYPE].hi = MP_EV_TYPE_COUNT - 1;
    r[F_PHASE] = (field_range){-1, (int64_t)UINT32_MAX - 1};
    r[F_KIND].hi = MP_KIND_COUNT - 1;
    r[F_TENSOR] = (field_range){-1, (int64_t)m->n_tensors - 1};
    r[F_OP] = (field_range){-1, (int64_t)m->n_ops - 1};
    r[F_OP_LAST] = r[F_OP];
    r[F_ALIGN].hi = 63;
}

/* A field's value as the file writes it (phase UINT32_MAX is -1). False when the value
 * does not fit the file's integers (an unsigned 64-bit value above 2^63-1). */
static bool get_field(const mp_event *e, int f, int64_t *v)
{
    uint64_t u = 0;
    switch (f) {
    case F_TYPE: *v = e->type; return true;
    case F_PHASE: *v = e->phase == UINT32_MAX ? -1 : (int64_t)e->phase; return true;
    case F_KIND: *v = e->kind; return true;
    case F_TENSOR: *v = e->tensor; return true;
    case F_OP: *v = e->op; return true;
    case F_OP_LAST: *v = e->op_last; return true;
    case F_ALIGN: *v = e->align_log2; return true;
    case F_T_NS: u = e->t_ns; break;
    case F_BYTES: u = e->bytes; break;
    case F_ID: u = e->id; break;
    case F_AUX: u = e->aux; break;
    }
    *v = (int64_t)u;
    return u <= (uint64_t)INT64_MAX;
}

/* Store a value already checked against field_ranges(). */
static void set_field(mp_event *e, int f, int64_t v)
{
    switch (f) {
    case F_TYPE: e->type = (uint8_t)v; break;
    case F_T_NS: e->t_ns = (uint64_t)v; break;
    case F_PHASE: e->phase = v < 0 ? UINT32_MAX : (uint32_t)v; break;
    case F_KIND: e->kind = (uint8_t)v; break;
    case F_TENSOR: e->tensor = (int32_t)v; break;
    case F_OP: e->op = (int32_t)v; break;
    case F_OP_LAST: e->op_last = (int32_t)v; break;
    case F_BYTES: e->bytes = (uint64_t)v; break;
    case F_ID: e->id = (uint64_t)v; break;
    case F_AUX: e->aux = (uint64_t)v; break;
    case F_ALIGN: e->align_log2 = (uint8_t)v; break;
    }
}

/* Checks beyond each field's own range, on fields whose meaning depends on the type.
 * Writes the problem into why and returns false. */
static bool check_event_aux(const mp_event *e, char *why, size_t n)
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
static bool check_meta(const mp_trace_meta *m, char *why, size_t n)
{
    char what[64];
    if (m->threads < 0) {
        snprintf(why, n, "meta.threads is %d, not a non-negative integer", (int)m->threads);
        return false;
    }
    if (m->process_heap_peak < -1) {
        snprintf(why, n, "meta.process_heap_peak is %" PRId64 ", below -1", m->process_heap_peak);
        return false;
    }
    if (m->allocator_overhead < -1) {
        snprintf(why, n, "meta.allocator_overhead is %" PRId64 ", below -1",
                 m->allocator_overhead);
        return false;
    }
    if (m->n_tensors < 0 || m->n_ops < 0 || (m->n_tensors > 0 && !m->tensors) ||
        (m->n_ops > 0 && !m->ops)) {
        snprintf(why, n, "meta has bad table sizes");
        return false;
    }
    for (int32_t i = 0; i < m->n_tensors; i++) {
        if (m->tensors[i].dtype < 0 || m->tensors[i].dtype >= MP_DT_COUNT) {
            snprintf(why, n, "meta.tensors[%d].dtype is %d, outside 0..%d", (int)i,
                     (int)m->tensors[i].dtype, MP_DT_COUNT - 1);
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
    return check_index_list(m->inputs, m->n_inputs, 0, m->n_tensors, "meta.inputs", why, n) &&
           check_index_list(m->outputs, m->n_outputs, 0, m->n_tensors, "meta.outputs", why, n);
}

/* ---- saving --------------------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence starting at s (the rules jansson enforces: no overlong
 * forms, no surrogates, nothing above U+10FFFF), or 0 when the byte at s starts none. */
static size_t utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    size_t n;
    unsigned lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
    } else {
        return 0;
    }
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return n;
}

/* Write s as a JSON string (null for NULL), escaping as JSON requires. */
static void write_str(FILE *f, const char *s)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    const unsigned char *p = (const unsigned char *)s;
    putc('"', f);
    while (*p) {
        unsigned c = *p;
        if (c == '"' || c == '\\') {
            putc('\\', f);
            putc((int)c, f);
            p++;
        } else if (c < 0x20) {
            switch (c) {
            case '\n': fputs("\\n", f); break;
            case '\t': fputs("\\t", f); break;
            case '\r': fputs("\\r", f); break;
            case '\b': fputs("\\b", f); break;
            case '\f': fputs("\\f", f); break;
            default: fprintf(f, "\\u%04x", c); break;
            }
            p++;
        } else if (c < 0x80) {
            putc((int)c, f);
            p++;
        } else {
            size_t n = utf8_len(p);
            if (n == 0) {
                putc('?', f);
                p++;
            } else {
                fwrite(p, 1, n, f);
                p += n;
            }
        }
    }
    putc('"', f);
}

static void write_int_list(FILE *f, const int32_t *v, int32_t n)
{
    putc('[', f);
    for (int32_t i = 0; i < n; i++)
        fprintf(f, "%s%d", i ? "," : "", (int)v[i]);
    putc(']', f);
}

static void write_meta(FILE *f, const mp_trace_meta *m)
{
    fputs("\"meta\":{\"model\":", f);
    write_str(f, m->model);
    fputs(",\"mode\":", f);
    write_str(f, m->mode);
    fputs(",\"planner\":", f);
    write_str(f, m->planner);
    fprintf(f, ",\"threads\":%d,\"process_heap_peak\":%" PRId64 ",\"allocator_overhead\":%" PRId64,
            (int)m->threads, m->process_heap_peak, m->allocator_overhead);
    fputs(",\n\"tensors\":[", f);
    for (int32_t i = 0; i < m->n_tensors; i++) {
        fputs(i ? ",\n{\"name\":" : "\n{\"name\":", f);
        write_str(f, m->tensors[i].name);
        fprintf(f, ",\"dtype\":%d,\"const\":%s}", (int)m->tensors[i].dtype,
                m->tensors[i].is_const ? "true" : "false");
    }
    fputs("],\n\"ops\":[", f);
    for (int32_t i = 0; i < m->n_ops; i++) {
        fputs(i ? ",\n{\"name\":" : "\n{\"name\":", f);
        write_str(f, m->ops[i].name);
        fputs(",\"inputs\":", f);
        write_int_list(f, m->ops[i].inputs, m->ops[i].n_inputs);
        fputs(",\"outputs\":", f);
        write_int_list(f, m->ops[i].outputs, m->ops[i].n_outputs);
        putc('}', f);
    }
    fputs("],\n\"inputs\":", f);
    write_int_list(f, m->inputs, m->n_inputs);
    fputs(",\"outputs\":", f);
    write_int_list(f, m->outputs, m->n_outputs);
    putc('}', f);
}

/* Decimal digits of v (which may be negative) at p; returns the end. */
static char *put_int(char *p, int64_t v)
{
    char tmp[24];
    int n = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    if (v < 0)
        *p++ = '-';
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    while (n)
        *p++ = tmp[--n];
    return p;
}

/* The events, one line each. Formatting by hand keeps a million events well under a
 * second; lines are gathered in a buffer and written in large blocks. */
static void write_events(FILE *f, const mp_event *ev, size_t n)
{
    enum { BUF = 1 << 16, LINE_MAX_LEN = F_COUNT * 22 + 8 };
    static const int order[F_COUNT] = {F_TYPE,    F_T_NS,  F_PHASE, F_KIND, F_TENSOR, F_OP,
                                       F_OP_LAST, F_BYTES, F_ID,    F_AUX,  F_ALIGN};
    char buf[BUF];
    char *p = buf;
    for (size_t i = 0; i < n; i++) {
        if (p - buf > BUF - LINE_MAX_LEN) {
            fwrite(buf, 1, (size_t)(p - buf), f);
            p = buf;
        }
        *p++ = '[';
        for (int k = 0; k < F_COUNT; k++) {
            int64_t v;
            get_field(&ev[i], order[k], &v);
            if (k)
                *p++ = ',';
            p = put_int(p, v);
        }
        *p++ = ']';
        if (i + 1 < n)
            *p++ = ',';
        *p++ = '\n';
    }
    fwrite(buf, 1, (size_t)(p - buf), f);
}

/* Refuse a trace whose file reading would refuse; why says what is wrong. */
static bool check_trace(const mp_trace *tr, char *why, size_t n)
{
    const mp_trace_meta *m = mp_trace_get_meta(tr);
    if (!check_meta(m, why, n))
        return false;
    field_range r[F_COUNT];
    field_ranges(m, r);
    const mp_event *ev = mp_trace_events(tr);
    size_t count = mp_trace_count(tr);
    for (size_t i = 0; i < count; i++) {
        char aux_why[160];
        for (int f = 0; f < F_COUNT; f++) {
            int64_t v;
            bool fits = get_field(&ev[i], f, &v);
            if (!fits || v < r[f].lo || v > r[f].hi) {
                snprintf(why, n, "event %zu: field '%s' is %s%" PRId64 ", outside %" PRId64
                         "..%" PRId64, i, field_names[f], fits ? "" : "above ",
                         fits ? v : INT64_MAX, r[f].lo, r[f].hi);
                return false;
            }
        }
        if (!check_event_aux(&ev[i], aux_why, sizeof aux_why)) {
            snprintf(why, n, "event %zu: %s", i, aux_why);
            return false;
        }
    }
    return true;
}

mp_status mp_trace_save(const mp_trace *tr, const char *path, mp_error *err)
{
    if (!tr || !path)
        return mp_fail(err, MP_ERR_ARG, "mp_trace_save: no trace or no path");
    char why[400];
    if (!check_trace(tr, why, sizeof why))
        return mp_fail(err, MP_ERR_ARG, "cannot save trace to %s: %s", path, why);

    size_t len = strlen(path);
    char *tmp = malloc(len + sizeof ".tmp.XXXXXX");
    if (!tmp)
        return mp_fail(err, MP_ERR_NOMEM, "cannot save trace to %s: out of memory", path);
    memcpy(tmp, path, len);
    memcpy(tmp + len, ".tmp.XXXXXX", sizeof ".tmp.XXXXXX");

    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = errno;
        free(tmp);
        return mp_fail(err, MP_ERR_IO, "cannot write %s: %s", path, strerror(e));
    }
    /* mkstemp makes the file private (0600); a saved trace is an ordinary file. Should
     * that fail, the trace is still saved, only private. */
    (void)fchmod(fd, 0644);
    FILE *f = fdopen(fd, "w");
    if (!f) {
        int e = errno;
        close(fd);
        unlink(tmp);
        free(tmp);
        return mp_fail(err, MP_ERR_IO, "cannot write %s: %s", path, strerror(e));
    }

    fprintf(f, "{\"format\":\"%s\",\"version\":%d,\n", MP_TRACE_FORMAT, MP_TRACE_VERSION);
    write_meta(f, mp_trace_get_meta(tr));
    fputs(",\n\"event_fields\":[", f);
    for (int k = 0; k < F_COUNT; k++)
        fprintf(f, "%s\"%s\"", k ? "," : "", field_names[k]);
    fputs("],\n\"events\":[\n", f);
    write_events(f, mp_trace_events(tr), mp_trace_count(tr));
    fputs("]}\n", f);

    /* Keep the errno of the first call that failed (EIO when it left none). */
    int e = 0;
    if (ferror(f))
        e = errno ? errno : EIO;
    if (fflush(f) != 0 && !e)
        e = errno ? errno : EIO;
    if (!e && fsync(fileno(f)) != 0)
        e = errno ? errno : EIO;
    if (fclose(f) != 0 && !e)
        e = errno ? errno : EIO;
    if (!e && rename(tmp, path) != 0)
        e = errno ? errno : EIO;
    if (e) {
        unlink(tmp);
        free(tmp);
        return mp_fail(err, MP_ERR_IO, "cannot write %s: %s", path, strerror(e));
    }
    free(tmp);
    return MP_OK;
}

/* ---- reading -------------------------------------------------------------------------- */

typedef struct loader {
    const char *path;
    mp_error *err;
    mp_trace *tr;
} loader;

static mp_status bad(loader *ld, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A format error naming the file. */
static mp_status bad(loader *ld, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return mp_fail(ld->err, MP_ERR_FORMAT, "%s: %s", ld->path, msg);
}

static mp_status nomem(loader *ld)
{
    return mp_fail(ld->err, MP_ERR_NOMEM, "%s: out of memory while reading the trace", ld->path);
}

/* Member key of obj (named where), which must exist. */
static mp_status member(loader *ld, json_t *obj, const char *where, const char *key,
                        json_t **out)
{
    *out = json_object_get(obj, key);
    if (!*out)
        return bad(ld, "%s has no '%s'", where, key);
    return MP_OK;
}

/* An integer in lo..hi. what names it in the message. */
static mp_status get_int(loader *ld, json_t *v, const char *what, int64_t lo, int64_t hi,
                         int64_t *out)
{
    if (!json_is_integer(v)) {
        if (lo == 0 && hi == INT64_MAX)
            return bad(ld, "%s is not a non-negative integer", what);
        return bad(ld, "%s is not an integer", what);
    }
    json_int_t x = json_integer_value(v);
    if (x < lo || x > hi) {
        if (lo == 0 && hi == INT64_MAX)
            return bad(ld, "%s is not a non-negative integer", what);
        return bad(ld, "%s is %" PRId64 ", outside %" PRId64 "..%" PRId64, what, (int64_t)x,
                   lo, hi);
    }
    *out = (int64_t)x;
    return MP_OK;
}

/* Member key of obj as an integer in lo..hi. */
static mp_status get_int_member(loader *ld, json_t *obj, const char *where, const char *key,
                                int64_t lo, int64_t hi, int64_t *out)
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
static mp_status get_str_member(loader *ld, json_t *obj, const char *where, const char *key,
                                const char **out)
{
    json_t *v;
    mp_status st = member(ld, obj, where, key, &v);
    *out = NULL;
    if (st != MP_OK)
        return st;
    if (json_is_null(v))
        return MP_OK;
    if (!json_is_string(v))
        return bad(ld, "%s.%s is not a string", where, key);
    *out = json_string_value(v);
    return MP_OK;
}

/* Member key of obj as a string or null, copied into *field of the trace's metadata. */
static mp_status copy_str_member(loader *ld, json_t *obj, const char *where, const char *key,
                                 char **field)
{
    const char *s;
    mp_status st = get_str_member(ld, obj, where, key, &s);
    if (st != MP_OK)
        return st;
    return mp_trace_set_str(ld->tr, field, s) ? MP_OK : nomem(ld);
}

/* Member key of obj as an array (of any length). */
static mp_status get_array_member(loader *ld, json_t *obj, const char *where, const char *key,
                                  json_t **out)
{
    mp_status st = member(ld, obj, where, key, out);
    if (st != MP_OK)
        return st;
    if (!json_is_array(*out))
        return bad(ld, "%s.%s is not an array", where, key);
    if (json_array_size(*out) > INT32_MAX)
        return bad(ld, "%s.%s is too long", where, key);
    return MP_OK;
}

/* A JSON array of integers into a new int32 array (*out stays NULL when empty). Ranges
 * against the tensor table are checked later by check_meta. */
static mp_status get_int_list(loader *ld, json_t *arr, const char *what, int32_t **out)
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

static mp_status load_tensors(loader *ld, json_t *arr, mp_trace_meta *m)
{
    for (int32_t i = 0; i < m->n_tensors; i++) {
        char where[48];
        int64_t dtype = 0;
        json_t *t = json_array_get(arr, (size_t)i), *c;
        snprintf(where, sizeof where, "meta.tensors[%d]", (int)i);
        if (!json_is_object(t))
            return bad(ld, "%s is not an object", where);
        mp_status st = copy_str_member(ld, t, where, "name", &m->tensors[i].name);
        if (st == MP_OK)
            st = get_int_member(ld, t, where, "dtype", INT32_MIN, INT32_MAX, &dtype);
        if (st == MP_OK)
            st = member(ld, t, where, "const", &c);
        if (st != MP_OK)
            return st;
        if (!json_is_boolean(c))
            return bad(ld, "%s.const is not true or false", where);
        m->tensors[i].dtype = (int32_t)dtype;
        m->tensors[i].is_const = json_is_true(c);
    }
    return MP_OK;
}

static mp_status load_ops(loader *ld, json_t *arr, mp_trace_meta *m)
{
    for (int32_t i = 0; i < m->n_ops; i++) {
        char where[48], what[64];
        json_t *o = json_array_get(arr, (size_t)i), *ins, *outs;
        int32_t *in_v = NULL, *out_v = NULL;
        const char *name = NULL;
        snprintf(where, sizeof where, "meta.ops[%d]", (int)i);
        if (!json_is_object(o))
            return bad(ld, "%s is not an object", where);
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

static mp_status load_meta(loader *ld, json_t *meta)
{
    json_t *tensors, *ops, *ins, *outs;
    int64_t threads, peak, overhead;
    if (!json_is_object(meta))
        return bad(ld, "meta is not an object");
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
        st = get_int_member(ld, meta, "meta", "process_heap_peak", INT64_MIN, INT64_MAX, &peak);
    if (st == MP_OK)
        st = get_int_member(ld, meta, "meta", "allocator_overhead", INT64_MIN, INT64_MAX,
                            &overhead);
    if (st != MP_OK)
        return st;

    if (!mp_trace_alloc_tables(ld->tr, (int32_t)json_array_size(tensors),
                               (int32_t)json_array_size(ops), (int32_t)json_array_size(ins),
                               (int32_t)json_array_size(outs)))
        return nomem(ld);
    mp_trace_meta *m = mp_trace_meta_mut(ld->tr);
    m->threads = (int32_t)threads;
    m->process_heap_peak = peak;
    m->allocator_overhead = overhead;

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
            return bad(ld, "meta.%s[%d] is not an integer", is_in ? "inputs" : "outputs",
                       (int)k);
        (is_in ? m->inputs : m->outputs)[k] = (int32_t)json_integer_value(v);
    }
    if (st != MP_OK)
        return st;

    char why[300];
    if (!check_meta(m, why, sizeof why))
        return bad(ld, "%s", why);
    return MP_OK;
}

/* "event_fields": every field name exactly once, in any order; col[k] = field of column k. */
static mp_status load_fields(loader *ld, json_t *names, int col[F_COUNT])
{
    bool seen[F_COUNT] = {false};
    if (!json_is_array(names) || json_array_size(names) != F_COUNT)
        return bad(ld, "event_fields is not an array of the %d event field names", F_COUNT);
    for (size_t k = 0; k < F_COUNT; k++) {
        const char *s = json_string_value(json_array_get(names, k));
        int f = 0;
        while (s && f < F_COUNT && strcmp(s, field_names[f]) != 0)
            f++;
        if (!s || f == F_COUNT)
            return bad(ld, "event_fields[%zu] is not an event field name", k);
        if (seen[f])
            return bad(ld, "event_fields names '%s' twice", s);
        seen[f] = true;
        col[k] = f;
    }
    return MP_OK;
}

static mp_status load_events(loader *ld, json_t *events, const int col[F_COUNT],
                             json_int_t version)
{
    field_range r[F_COUNT];
    field_ranges(mp_trace_get_meta(ld->tr), r);
    if (version < 2)
        r[F_TYPE].hi = MP_EV_RSS - 1; /* rss samples came with version 2 */
    size_t n = json_array_size(events);
    for (size_t i = 0; i < n; i++) {
        json_t *a = json_array_get(events, i);
        if (!json_is_array(a) || json_array_size(a) != F_COUNT)
            return bad(ld, "event %zu is not an array of %d integers", i, F_COUNT);
        mp_event ev;
        memset(&ev, 0, sizeof ev);
        for (int k = 0; k < F_COUNT; k++) {
            int f = col[k];
            json_t *v = json_array_get(a, (size_t)k);
            if (!json_is_integer(v) || json_integer_value(v) < r[f].lo ||
                json_integer_value(v) > r[f].hi) {
                char what[64];
                int64_t dummy;
                snprintf(what, sizeof what, "event %zu: field '%s'", i, field_names[f]);
                return get_int(ld, v, what, r[f].lo, r[f].hi, &dummy);
            }
            set_field(&ev, f, (int64_t)json_integer_value(v));
        }
        char why[160];
        if (!check_event_aux(&ev, why, sizeof why))
            return bad(ld, "event %zu: %s", i, why);
        if (!mp_trace_append_raw(ld->tr, &ev))
            return nomem(ld);
    }
    return MP_OK;
}

static mp_status load_root(loader *ld, json_t *root)
{
    json_t *v;
    if (!json_is_object(root))
        return bad(ld, "not a memprof trace");
    v = json_object_get(root, "format");
    if (!json_is_string(v) || strcmp(json_string_value(v), MP_TRACE_FORMAT) != 0)
        return bad(ld, "not a memprof trace");
    v = json_object_get(root, "version");
    json_int_t version = json_is_integer(v) ? json_integer_value(v) : 0;
    if (!json_is_integer(v) || json_integer_value(v) < 1)
        return bad(ld, "version is not a positive integer");
    if (json_integer_value(v) > MP_TRACE_VERSION)
        return bad(ld, "trace version %" JSON_INTEGER_FORMAT
                   " is newer than this memprof reads (%d)", json_integer_value(v),
                   MP_TRACE_VERSION);

    json_t *meta, *fields, *events;
    int col[F_COUNT];
    mp_status st = member(ld, root, "the trace", "meta", &meta);
    if (st == MP_OK)
        st = member(ld, root, "the trace", "event_fields", &fields);
    if (st == MP_OK)
        st = member(ld, root, "the trace", "events", &events);
    if (st == MP_OK)
        st = load_meta(ld, meta);
    if (st == MP_OK)
        st = load_fields(ld, fields, col);
    if (st == MP_OK && !json_is_array(events))
        st = bad(ld, "events is not an array");
    if (st == MP_OK)
        st = load_events(ld, events, col, version);
    return st;
}

mp_status mp_trace_load(const char *path, mp_trace **out, mp_error *err)
{
    if (!path || !out)
        return mp_fail(err, MP_ERR_ARG, "mp_trace_load: no path or no result pointer");
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return mp_fail(err, MP_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size == 0) {
        fclose(f);
        return mp_fail(err, MP_ERR_FORMAT, "%s: the file is empty, not a memprof trace", path);
    }
    json_error_t jerr;
    errno = 0;
    json_t *root = json_loadf(f, JSON_REJECT_DUPLICATES, &jerr);
    int read_err = ferror(f) ? (errno ? errno : EIO) : 0;
    fclose(f);
    if (read_err) {
        json_decref(root);
        return mp_fail(err, MP_ERR_IO, "cannot read %s: %s", path, strerror(read_err));
    }
    if (!root)
        return mp_fail(err, MP_ERR_FORMAT, "%s: line %d column %d: %s", path, jerr.line,
                       jerr.column, jerr.text);

    loader ld = {path, err, mp_trace_create()};
    mp_status st = ld.tr ? load_root(&ld, root) : nomem(&ld);
    json_decref(root);
    if (st != MP_OK) {
        mp_trace_destroy(ld.tr);
        return st;
    }
    *out = ld.tr;
    return MP_OK;
}
