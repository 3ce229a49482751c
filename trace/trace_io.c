/* Saving a trace as JSON and reading it back (mp_trace_save / mp_trace_load, see trace.h).
 * The format's rules shared by writer and reader are in trace_format.c; the reader itself
 * (a streaming one, also behind analyzers/source.h) is trace_reader.c.
 *
 * The saved format, version 3 (version 2 names the two byte counts of meta
 * "process_heap_peak" and "allocator_overhead"; version 1 is version 2 without "rss" events):
 *
 *   {"format":"memprof-trace","version":3,
 *    "meta":{"model":S, "mode":S, "planner":S, "threads":N,
 *            "process_heap_peak_bytes":N, "allocator_overhead_bytes":N, ["truncated":true,]
 *            "tensors":[{"name":S, "dtype":N, "const":true|false[, "shares":N]}, ...],
 *            "ops":[{"name":S, "inputs":[N,...], "outputs":[N,...]}, ...],
 *            "inputs":[N,...], "outputs":[N,...]},
 *    "event_fields":["type","t_ns","phase","kind","tensor","op","op_last","bytes","id","aux",
 *                    "align_log2"],
 *    "events":[[...],[...],...]}
 *
 * - S is a string, or null when the recorder holds no name. Names are written as UTF-8:
 *   valid UTF-8 (any non-ASCII text) is kept byte for byte, each byte that is not part of a
 *   valid UTF-8 sequence is written as '?'. Names cannot contain NUL bytes.
 * - threads >= 0; process_heap_peak_bytes and allocator_overhead_bytes are bytes, -1 = not
 *   measured. Optional (later additions, absent in older files): process_heap_base_bytes
 *   (the heap live before the measured window; -1 or absent = not measured) and
 *   model_heap_bytes (the model's bytes held on the heap by the caller; absent = 0).
 * - "truncated" (optional, true or false; absent = false): the recorder ran out of memory
 *   while recording, so the events are only a prefix of the session. This writer writes it
 *   only when true. File sources report it (mp_source_truncated); mp_trace_load marks the
 *   trace it returns (mp_trace_truncated).
 * - dtype is the mp_dtype (TensorFlow Lite TensorType) code, 0..MP_TRACE_DTYPE_COUNT-1.
 * - Tensor indices (op inputs and outputs, events' "tensor") are -1 (none / omitted) or
 *   0..n-1 into "tensors" (which, like "ops", holds every subgraph's of a model of several:
 *   trace.h, mp_trace_set_scope); the graph's "inputs" and "outputs" are 0..n-1. Operator indices
 *   (events' "op" and "op_last") are -1 (none) or 0..n-1 into "ops".
 * - Each event is an array of integers, one per name of "event_fields" in that order
 *   (a writer may choose the order; this one always writes the order above):
 *     type        mp_ev_type code, 0..MP_EV_TYPE_COUNT-1
 *     t_ns        nanoseconds since the trace was created
 *     phase       index of the phase instance, -1 = before the first phase
 *     kind        MP_KIND_* code, 0..MP_KIND_COUNT-1
 *     tensor, op, op_last   as above
 *     bytes, id, aux        see mp_ev_type in trace.h; aux of a phase_begin event is an
 *                           mp_phase_kind, aux of a copy event is 0 (in) or 1 (out), aux of
 *                           an op_begin / op_end the WHILE iteration (0 outside loops)
 *     align_log2  log2 of the alignment, 0..63
 *   t_ns, bytes, id and aux are 0..2^63-1 (the range JSON readers such as jansson hold
 *   exactly). The event's reserved "flags" byte is not saved; it reads back as 0.
 * - The file has one event per line, so that it can be read and diffed line by line.
 *   Readers take any JSON layout (whitespace anywhere JSON allows it, members of an object in
 *   any order), but only integers written as JSON integers (no fraction, no exponent) in
 *   integer fields. Object keys are unique (a repeated key is an error).
 * - Readers accept versions 1..MP_TRACE_VERSION and ignore members they do not know.
 *
 * Saving goes through engine/files.c: atomic for a regular file or a new path (a temporary
 * in the same folder, renamed over path only when everything has been written and synced),
 * in place for a device or FIFO, never replacing a symlink or device node. Saving refuses a
 * trace that reading would refuse (an index or code out of range), so every saved file
 * reads back, with exactly the events and metadata that were saved. */
#include "trace/trace.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace/files.h"
#include "trace/trace_format.h"
#include "trace/trace_reader.h"

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

static void write_meta(FILE *f, const mp_trace_meta *m, bool truncated)
{
    fputs("\"meta\":{\"model\":", f);
    write_str(f, m->model);
    fputs(",\"mode\":", f);
    write_str(f, m->mode);
    fputs(",\"planner\":", f);
    write_str(f, m->planner);
    fprintf(f, ",\"threads\":%d,\"process_heap_peak_bytes\":%" PRId64
               ",\"allocator_overhead_bytes\":%" PRId64,
            (int)m->threads, m->process_heap_peak, m->allocator_overhead);
    /* optional (absent: -1 and 0): the heap before the window, the model's heap bytes */
    if (m->process_heap_base >= 0)
        fprintf(f, ",\"process_heap_base_bytes\":%" PRId64, m->process_heap_base);
    if (m->model_heap_bytes > 0)
        fprintf(f, ",\"model_heap_bytes\":%" PRId64, m->model_heap_bytes);
    if (truncated)
        fputs(",\"truncated\":true", f);
    fputs(",\n\"tensors\":[", f);
    for (int32_t i = 0; i < m->n_tensors; i++) {
        fputs(i ? ",\n{\"name\":" : "\n{\"name\":", f);
        write_str(f, m->tensors[i].name);
        fprintf(f, ",\"dtype\":%d,\"const\":%s", (int)m->tensors[i].dtype,
                m->tensors[i].is_const ? "true" : "false");
        if (m->tensors[i].in_place) /* optional: written only for a tensor in place */
            fprintf(f, ",\"shares\":%d", (int)m->tensors[i].shares);
        putc('}', f);
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
    /* a chain's trace (memprof pipeline): which tensors, operators and blocks are whose;
     * optional, written only for several models */
    for (int32_t k = 0; k < m->n_models; k++) {
        const mp_trace_model *x = &m->models[k];
        fputs(k ? ",\n{\"name\":" : ",\n\"models\":[\n{\"name\":", f);
        write_str(f, x->name);
        fprintf(f, ",\"first_tensor\":%d,\"n_tensors\":%d,\"first_op\":%d,\"n_ops\":%d,"
                   "\"first_id\":%" PRIu64 ",\"n_ids\":%" PRIu64 "}",
                (int)x->first_tensor, (int)x->n_tensors, (int)x->first_op, (int)x->n_ops,
                x->first_id, x->n_ids);
        if (k == m->n_models - 1)
            putc(']', f);
    }
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
    enum { BUF = 1 << 16, LINE_MAX_LEN = MP_TFMT_COUNT * 22 + 8 };
    static const int order[MP_TFMT_COUNT] = {
        MP_TFMT_TYPE,    MP_TFMT_T_NS,  MP_TFMT_PHASE, MP_TFMT_KIND, MP_TFMT_TENSOR, MP_TFMT_OP,
        MP_TFMT_OP_LAST, MP_TFMT_BYTES, MP_TFMT_ID,    MP_TFMT_AUX,  MP_TFMT_ALIGN};
    char buf[BUF];
    char *p = buf;
    for (size_t i = 0; i < n; i++) {
        if (p - buf > BUF - LINE_MAX_LEN) {
            fwrite(buf, 1, (size_t)(p - buf), f);
            p = buf;
        }
        *p++ = '[';
        for (int k = 0; k < MP_TFMT_COUNT; k++) {
            int64_t v;
            mp_tfmt_get_field(&ev[i], order[k], &v);
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
    if (!mp_tfmt_check_meta(m, why, n))
        return false;
    mp_tfmt_range r[MP_TFMT_COUNT];
    mp_tfmt_field_ranges(m, MP_TRACE_VERSION, r);
    const mp_event *ev = mp_trace_events(tr);
    size_t count = mp_trace_count(tr);
    for (size_t i = 0; i < count; i++) {
        char aux_why[160];
        for (int f = 0; f < MP_TFMT_COUNT; f++) {
            int64_t v;
            bool fits = mp_tfmt_get_field(&ev[i], f, &v);
            if (!fits || v < r[f].lo || v > r[f].hi) {
                snprintf(why, n, "event %zu: field '%s' is %s%" PRId64 ", outside %" PRId64
                         "..%" PRId64, i, mp_tfmt_field_names[f], fits ? "" : "above ",
                         fits ? v : INT64_MAX, r[f].lo, r[f].hi);
                return false;
            }
        }
        if (!mp_tfmt_check_event_aux(&ev[i], aux_why, sizeof aux_why)) {
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

    mp_file_out out;
    mp_status st = mp_file_out_open(&out, path, err);
    if (st != MP_OK)
        return st;
    FILE *f = out.f;
    fprintf(f, "{\"format\":\"%s\",\"version\":%d,\n", MP_TRACE_FORMAT, MP_TRACE_VERSION);
    write_meta(f, mp_trace_get_meta(tr), mp_trace_truncated(tr));
    fputs(",\n\"event_fields\":[", f);
    for (int k = 0; k < MP_TFMT_COUNT; k++)
        fprintf(f, "%s\"%s\"", k ? "," : "", mp_tfmt_field_names[k]);
    fputs("],\n\"events\":[\n", f);
    write_events(f, mp_trace_events(tr), mp_trace_count(tr));
    fputs("]}\n", f);

    return mp_file_out_commit(&out, err);
}

/* ---- reading -------------------------------------------------------------------------- */

/* The whole trace in memory: the streaming reader's metadata and every event it yields. */
mp_status mp_trace_load(const char *path, mp_trace **out, mp_error *err)
{
    if (!path || !out)
        return mp_fail(err, MP_ERR_ARG, "mp_trace_load: no path or no result pointer");
    *out = NULL;
    mp_error local = {0};
    if (!err)
        err = &local;
    mp_trace_reader *rd = NULL;
    mp_status st = mp_trace_reader_open(path, &rd, err);
    if (st != MP_OK)
        return st;
    mp_trace *tr = mp_trace_reader_release_trace(rd);
    mp_event ev;
    int got;
    while ((got = mp_trace_reader_next(rd, &ev, err)) > 0) {
        if (!mp_trace_append_raw(tr, &ev)) {
            got = -1;
            mp_fail(err, MP_ERR_NOMEM, "%s: out of memory while reading the trace", path);
            break;
        }
    }
    st = got < 0 ? err->status : MP_OK;
    if (st == MP_OK && mp_trace_reader_truncated(rd))
        mp_trace_mark_truncated(tr);
    mp_trace_reader_close(rd);
    if (st != MP_OK) {
        mp_trace_destroy(tr);
        return st;
    }
    *out = tr;
    return MP_OK;
}
