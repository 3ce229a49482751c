/* The streaming reader of saved traces (trace_reader.h).
 *
 * A small hand-written JSON tokenizer walks the file's outer object. The values before the
 * events (format, version, meta, event_fields, members it does not know) are small: each is
 * cut out of the stream and handed to jansson, which checks its syntax (strings, UTF-8,
 * numbers, repeated keys) and whose tree the metadata is read from. The events are parsed
 * by the tokenizer itself, one array at a time, straight from the read buffer: integers
 * are accumulated digit by digit, every field is checked against its range (trace_format.c)
 * and stored. When "events" comes before a member the reader needs (any member order is
 * valid JSON), opening skips the events, reads the rest, and seeks back. The header's
 * values are read from their jansson trees in trace_header.c. */
#include "trace/trace_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace/files.h"
#include "trace/safe_text.h"
#include "trace/trace_format.h"
#include "trace/trace_reader_internal.h"

/* ---- the tokenizer ----------------------------------------------------------------------- */

#define BUF_SIZE ((size_t)1 << 20)

enum pass_state { AT_START, AFTER_EVENT, DONE, FAILED };
enum value_class { V_INT, V_BIG, V_OTHER }; /* an event element: integer, beyond 64 bits, else */
enum header_key { K_FORMAT, K_VERSION, K_META, K_FIELDS, K_COUNT };
static const char *const header_keys[K_COUNT] = {"format", "version", "meta", "event_fields"};

struct mp_trace_reader {
    char *path;
    int fd;
    mp_trace *tr;       /* holds the metadata */
    bool owns_tr;
    int version;
    bool truncated;
    int col[MP_TFMT_COUNT];                     /* field of each column */
    int64_t lo[MP_TFMT_COUNT], hi[MP_TFMT_COUNT]; /* range of each column */

    /* The events array: offset of its '[', and the line there. */
    uint64_t ev_off, ev_line_start;
    int ev_line;
    bool tail_checked; /* the members after the events were checked when opening */
    bool fresh;        /* at the first event, nothing of the pass read yet */

    /* Keys of the outer object, to refuse a repeated one; the first keys_before_events of
     * them come before the events (the rest are read again on every pass). */
    char **keys;
    size_t n_keys, cap_keys, keys_before_events;

    /* The read buffer: bytes p..e are unread; *e is always 0 (a sentinel). */
    unsigned char *buf, *p, *e;
    uint64_t base;      /* file offset of buf[0] */
    bool eof;
    int read_errno;
    int line;           /* line of p (1-based) */
    uint64_t line_start;/* file offset where that line starts */

    int state;
    size_t index;       /* events yielded in this pass */
    size_t count;       /* events in the file, SIZE_MAX until a pass reached the end */
    mp_error failure;   /* what ended the pass (state FAILED), or opening */

    char *cap;          /* a header value cut out of the stream for jansson */
    size_t cap_len, cap_size;
};

/* Read the next block (only when every byte of the buffer has been consumed). False at the
 * end of the file or on a read error (read_errno). */
static bool refill(mp_trace_reader *r)
{
    if (r->eof)
        return false;
    r->base += (uint64_t)(r->e - r->buf);
    r->p = r->e = r->buf;
    for (;;) {
        ssize_t n = read(r->fd, r->buf, BUF_SIZE);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            r->read_errno = errno;
        if (n <= 0)
            r->eof = true;
        else
            r->e = r->buf + n;
        break;
    }
    *r->e = 0;
    return r->e > r->p;
}

/* The next byte without consuming it, -1 at the end of the file. */
static inline int peek(mp_trace_reader *r)
{
    if (r->p < r->e || refill(r))
        return *r->p;
    return -1;
}

static inline uint64_t offset(const mp_trace_reader *r)
{
    return r->base + (uint64_t)(r->p - r->buf);
}

static inline int column(const mp_trace_reader *r)
{
    return (int)(offset(r) - r->line_start) + 1;
}

/* Consume the byte peek() returned. */
static inline void take(mp_trace_reader *r)
{
    if (*r->p == '\n') {
        r->line++;
        r->line_start = offset(r) + 1;
    }
    r->p++;
}

/* Skip JSON whitespace; returns the next byte (not consumed) or -1 at the end. */
static inline int skip_ws(mp_trace_reader *r)
{
    for (;;) {
        const unsigned char *p = r->p;
        for (;;) {
            unsigned c = *p;
            if (c == ' ' || c == '\t' || c == '\r') {
                p++;
            } else if (c == '\n') {
                p++;
                r->line++;
                r->line_start = r->base + (uint64_t)(p - r->buf);
            } else {
                break;
            }
        }
        r->p = (unsigned char *)p;
        if (p < r->e)
            return *p;
        if (!refill(r))
            return -1;
    }
}

static mp_status fail(mp_trace_reader *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static mp_status fail_at(mp_trace_reader *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A read error, when one happened: it explains any "unexpected end" that follows. */
static mp_status io_failure(mp_trace_reader *r)
{
    return mp_fail(&r->failure, MP_ERR_IO, "cannot read %s: %s", r->path,
                   strerror(r->read_errno));
}

/* A format error naming the file (escaped as mp_trace_header_fail() does). */
static mp_status fail(mp_trace_reader *r, const char *fmt, ...)
{
    char msg[400], safe[MP_SAFE_TEXT_SIZE(400)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return mp_fail(&r->failure, MP_ERR_FORMAT, "%s: %s", r->path,
                   mp_safe_text(safe, sizeof safe, msg));
}

/* A syntax error at the current position (or the read error that caused it). */
static mp_status fail_at(mp_trace_reader *r, const char *fmt, ...)
{
    if (r->read_errno)
        return io_failure(r);
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return mp_fail(&r->failure, MP_ERR_FORMAT, "%s: line %d column %d: %s", r->path, r->line,
                   column(r), msg);
}

/* ---- values cut out for jansson ---- */

static bool cap_put(mp_trace_reader *r, int c)
{
    if (r->cap_len == r->cap_size) {
        size_t n = r->cap_size ? r->cap_size * 2 : 4096;
        char *p = realloc(r->cap, n);
        if (!p)
            return false;
        r->cap = p;
        r->cap_size = n;
    }
    r->cap[r->cap_len++] = (char)c;
    return true;
}

static mp_status nomem_failure(mp_trace_reader *r)
{
    return mp_fail(&r->failure, MP_ERR_NOMEM, "%s: out of memory while reading the trace",
                   r->path);
}

/* Consume a string (at its opening quote), keeping its bytes when keep. Its contents are
 * checked by whoever reads them (jansson for kept ones). */
static mp_status scan_string(mp_trace_reader *r, bool keep)
{
    bool escaped = false;
    if (keep && !cap_put(r, '"'))
        return nomem_failure(r);
    take(r);
    for (;;) {
        int c = peek(r);
        if (c < 0)
            return fail_at(r, "unexpected end of file in a string");
        if (keep && !cap_put(r, c))
            return nomem_failure(r);
        take(r);
        if (escaped)
            escaped = false;
        else if (c == '\\')
            escaped = true;
        else if (c == '"')
            return MP_OK;
    }
}

static bool is_delimiter(int c)
{
    return c < 0 || c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' ||
           c == '\r';
}

/* Consume one JSON value (its extent only: strings and brackets), keeping its bytes in
 * r->cap when keep. */
static mp_status scan_value(mp_trace_reader *r, bool keep)
{
    r->cap_len = 0;
    int c = peek(r);
    if (c < 0)
        return fail_at(r, "unexpected end of file, a value expected");
    if (c == '"')
        return scan_string(r, keep);
    if (c == '[' || c == '{') {
        size_t depth = 0;
        for (;;) {
            c = peek(r);
            if (c < 0)
                return fail_at(r, "unexpected end of file in an array or object");
            if (c == '"') {
                mp_status st = scan_string(r, keep);
                if (st != MP_OK)
                    return st;
                continue;
            }
            if (keep && !cap_put(r, c))
                return nomem_failure(r);
            take(r);
            if (c == '[' || c == '{')
                depth++;
            else if ((c == ']' || c == '}') && --depth == 0)
                return MP_OK;
        }
    }
    size_t n = 0;
    while (!is_delimiter(c = peek(r))) {
        if (keep && !cap_put(r, c))
            return nomem_failure(r);
        take(r);
        n++;
    }
    return n ? MP_OK : fail_at(r, "a value expected");
}

/* Parse the value in r->cap with jansson; line and col say where it started (for jansson's
 * messages, which count from the start of the value). */
static mp_status parse_cap(mp_trace_reader *r, int line, int col, json_t **out)
{
    json_error_t je;
    *out = json_loadb(r->cap, r->cap_len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je);
    if (*out)
        return MP_OK;
    int l = je.line >= 1 ? line + je.line - 1 : line;
    int c = je.line <= 1 ? col + (je.column > 0 ? je.column - 1 : 0) : je.column;
    return fail(r, "line %d column %d: %s", l, c, je.text);
}

/* A member key of the outer object (at its quote), decoded, and refused when repeated. */
static mp_status read_key(mp_trace_reader *r, char **out)
{
    int line = r->line, col = column(r);
    *out = NULL;
    if (peek(r) != '"')
        return fail_at(r, "a member name (a string) expected");
    mp_status st = scan_value(r, true);
    json_t *k = NULL;
    if (st == MP_OK)
        st = parse_cap(r, line, col, &k);
    if (st != MP_OK)
        return st;
    const char *s = json_string_value(k);
    for (size_t i = 0; i < r->n_keys; i++) {
        if (strcmp(r->keys[i], s) == 0) {
            st = fail(r, "line %d column %d: duplicate object key '%s'", line, col, s);
            json_decref(k);
            return st;
        }
    }
    if (r->n_keys == r->cap_keys) {
        size_t n = r->cap_keys ? r->cap_keys * 2 : 16;
        char **p = realloc(r->keys, n * sizeof *p);
        if (!p) {
            json_decref(k);
            return nomem_failure(r);
        }
        r->keys = p;
        r->cap_keys = n;
    }
    char *copy = strdup(s);
    json_decref(k);
    if (!copy)
        return nomem_failure(r);
    r->keys[r->n_keys++] = copy;
    *out = copy;
    return MP_OK;
}

/* After a key: the ':' and the whitespace around it. */
static mp_status colon(mp_trace_reader *r)
{
    if (skip_ws(r) != ':')
        return fail_at(r, "':' expected");
    take(r);
    skip_ws(r);
    return MP_OK;
}

/* A value cut out, checked by jansson and returned (*out NULL when not wanted). */
static mp_status read_value(mp_trace_reader *r, json_t **out)
{
    int line = r->line, col = column(r);
    json_t *v = NULL;
    mp_status st = scan_value(r, true);
    if (st == MP_OK)
        st = parse_cap(r, line, col, &v);
    if (out)
        *out = v;
    else
        json_decref(v);
    return st;
}

/* After a member's value: ',' (true) or the end of the outer object, which must be the end
 * of the file (false, *st MP_OK), or a syntax error. */
static bool next_member(mp_trace_reader *r, mp_status *st)
{
    int c = skip_ws(r);
    *st = MP_OK;
    if (c == ',') {
        take(r);
        skip_ws(r);
        return true;
    }
    if (c != '}') {
        *st = fail_at(r, "',' or '}' expected");
        return false;
    }
    take(r);
    if (skip_ws(r) >= 0)
        *st = fail_at(r, "end of file expected");
    else if (r->read_errno)
        *st = io_failure(r);
    return false;
}

static void drop_keys(mp_trace_reader *r, size_t keep)
{
    while (r->n_keys > keep)
        free(r->keys[--r->n_keys]);
}

/* The members after the events, up to the end of the file: none may repeat a key, each
 * must be valid JSON. */
static mp_status check_tail(mp_trace_reader *r)
{
    mp_status st;
    drop_keys(r, r->keys_before_events);
    while (next_member(r, &st)) {
        char *key;
        st = read_key(r, &key);
        if (st == MP_OK)
            st = colon(r);
        if (st == MP_OK)
            st = read_value(r, NULL);
        if (st != MP_OK)
            return st;
    }
    return st;
}

/* ---- the events ---- */

/* A malformed number, at its start. */
static mp_status bad_number(mp_trace_reader *r, int line, int col, const char *why)
{
    if (r->read_errno)
        return io_failure(r);
    return fail(r, "line %d column %d: %s", line, col, why);
}

/* A number (at '-' or a digit): *cls V_INT with *v, V_BIG (an integer beyond 64 bits; *v
 * its sign), or V_OTHER (a fraction or an exponent). */
static mp_status parse_number(mp_trace_reader *r, int64_t *v, int *cls)
{
    int line = r->line, col = column(r); /* where the number starts, for messages */
    bool neg = false;
    if (*r->p == '-') {
        neg = true;
        r->p++;
    }
    int c = peek(r);
    if (c < '0' || c > '9')
        return bad_number(r, line, col, "invalid number: a digit expected");
    bool lead0 = c == '0';
    uint64_t mag = 0;
    int nd = 0;
    for (;;) {
        const unsigned char *p = r->p;
        unsigned d;
        while ((d = (unsigned)*p - '0') < 10) {
            mag = mag * 10 + d;
            p++;
            nd++;
        }
        r->p = (unsigned char *)p;
        if (p < r->e || !refill(r))
            break;
    }
    if (lead0 && nd > 1)
        return bad_number(r, line, col, "invalid number: a leading zero");
    c = peek(r);
    if (c == '.' || c == 'e' || c == 'E') {
        if (c == '.') {
            take(r);
            int n = 0;
            while ((c = peek(r)) >= '0' && c <= '9') {
                take(r);
                n++;
            }
            if (!n)
                return bad_number(r, line, col, "invalid number: a digit expected after '.'");
        }
        if (c == 'e' || c == 'E') {
            take(r);
            c = peek(r);
            if (c == '+' || c == '-')
                take(r);
            int n = 0;
            while ((c = peek(r)) >= '0' && c <= '9') {
                take(r);
                n++;
            }
            if (!n)
                return bad_number(r, line, col,
                                  "invalid number: a digit expected in the exponent");
        }
        *cls = V_OTHER;
        return MP_OK;
    }
    if (nd > 19 || mag > (uint64_t)INT64_MAX + (neg ? 1u : 0u)) {
        *cls = V_BIG;
        *v = neg ? -1 : 1;
    } else {
        *cls = V_INT;
        *v = !neg ? (int64_t)mag : mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
    }
    return MP_OK;
}

/* One element of an event array (at its first byte c). */
static mp_status parse_element(mp_trace_reader *r, int c, int64_t *v, int *cls)
{
    if (c == '-' || (c >= '0' && c <= '9'))
        return parse_number(r, v, cls);
    *cls = V_OTHER;
    if (c == '"' || c == '[' || c == '{')
        return scan_value(r, false);
    const char *lit = c == 't' ? "true" : c == 'f' ? "false" : c == 'n' ? "null" : NULL;
    if (!lit)
        return fail_at(r, c < 0 ? "unexpected end of file in an event" : "a value expected");
    for (; *lit; lit++) {
        if (peek(r) != *lit)
            return fail_at(r, "invalid literal");
        take(r);
    }
    return MP_OK;
}

/* An event's problem: "event N (line L): ..." */
static mp_status event_fail(mp_trace_reader *r, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static mp_status event_fail(mp_trace_reader *r, int line, const char *fmt, ...)
{
    char msg[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return fail(r, "event %zu (line %d)%s", r->index, line, msg);
}

/* A field outside its range (or not an integer). */
static mp_status field_fail(mp_trace_reader *r, int line, int k, int cls, int64_t v)
{
    const char *name = mp_tfmt_field_names[r->col[k]];
    int64_t lo = r->lo[k], hi = r->hi[k];
    if (lo == 0 && hi == INT64_MAX)
        return event_fail(r, line, ": field '%s' is not a non-negative integer", name);
    if (cls == V_OTHER)
        return event_fail(r, line, ": field '%s' is not an integer", name);
    if (cls == V_BIG)
        return event_fail(r, line, ": field '%s' is %s, outside %" PRId64 "..%" PRId64, name,
                          v < 0 ? "below -2^63" : "above 2^63-1", lo, hi);
    return event_fail(r, line, ": field '%s' is %" PRId64 ", outside %" PRId64 "..%" PRId64,
                      name, v, lo, hi);
}

/* The common case, fast: an event written without whitespace, every element an integer of
 * at most 18 digits, wholly in the buffer. Reads val[] and consumes the event; false (and
 * nothing consumed) for anything else, which the general parser then handles. The
 * sentinel after the buffer's data stops every loop. */
static inline bool parse_event_fast(mp_trace_reader *r, int64_t val[MP_TFMT_COUNT])
{
    const unsigned char *p = r->p + 1; /* after '[' */
    for (int k = 0; k < MP_TFMT_COUNT; k++) {
        bool neg = *p == '-';
        p += neg;
        unsigned d = (unsigned)*p - '0';
        if (d > 9 || (d == 0 && (unsigned)p[1] - '0' <= 9))
            return false;
        const unsigned char *first = p++;
        uint64_t m = d;
        while ((d = (unsigned)*p - '0') <= 9) {
            m = m * 10 + d;
            p++;
        }
        if (p - first > 18)
            return false;
        val[k] = neg ? -(int64_t)m : (int64_t)m;
        if (*p++ != (k == MP_TFMT_COUNT - 1 ? ']' : ','))
            return false;
    }
    r->p = (unsigned char *)p;
    return true;
}

/* The event at '[' into *ev. */
static mp_status parse_event(mp_trace_reader *r, mp_event *ev)
{
    int64_t val[MP_TFMT_COUNT];
    int cls[MP_TFMT_COUNT];
    int line = r->line, k = 0, c = ']';
    bool fast = parse_event_fast(r, val);
    if (!fast) {
        r->p++; /* '[' */
        c = skip_ws(r);
        if (c == ']')
            r->p++;
        while (c != ']') {
            int64_t v = 0;
            int cl;
            mp_status st = parse_element(r, c, &v, &cl);
            if (st != MP_OK)
                return st;
            if (k < MP_TFMT_COUNT) {
                val[k] = v;
                cls[k] = cl;
            }
            k++;
            c = skip_ws(r);
            if (c == ',') {
                if (k == MP_TFMT_COUNT)
                    break; /* one element too many */
                r->p++;
                c = skip_ws(r);
            } else if (c == ']') {
                r->p++;
            } else {
                return c < 0 ? fail_at(r, "unexpected end of file in event %zu", r->index)
                             : fail_at(r, "',' or ']' expected in event %zu", r->index);
            }
        }
        if (k != MP_TFMT_COUNT || c == ',')
            return event_fail(r, line, " is not an array of %d integers", MP_TFMT_COUNT);
    }
    memset(ev, 0, sizeof *ev);
    for (k = 0; k < MP_TFMT_COUNT; k++) {
        /* in lo..hi, with one comparison */
        if ((!fast && cls[k] != V_INT) ||
            (uint64_t)val[k] - (uint64_t)r->lo[k] > (uint64_t)r->hi[k] - (uint64_t)r->lo[k])
            return field_fail(r, line, k, fast ? V_INT : cls[k], val[k]);
        mp_tfmt_set_field(ev, r->col[k], val[k]);
    }
    char why[160];
    if (!mp_tfmt_check_event_aux(ev, why, sizeof why))
        return event_fail(r, line, ": %s", why);
    return MP_OK;
}

/* The pass is over with the error in r->failure. */
static int pass_failed(mp_trace_reader *r, mp_error *err)
{
    r->state = FAILED;
    if (err)
        *err = r->failure;
    return -1;
}

int mp_trace_reader_next(mp_trace_reader *r, mp_event *ev, mp_error *err)
{
    if (r->state == DONE)
        return 0;
    if (r->state == FAILED)
        return pass_failed(r, err);
    r->fresh = false;
    int c = skip_ws(r);
    bool comma = false;
    if (r->state == AFTER_EVENT) {
        if (c == ',') {
            comma = true;
            r->p++;
            c = skip_ws(r);
        } else if (c != ']') {
            if (c < 0)
                fail_at(r, "unexpected end of file after event %zu", r->index - 1);
            else
                fail_at(r, "',' or ']' expected after event %zu", r->index - 1);
            return pass_failed(r, err);
        }
    }
    if (c == '[') {
        if (parse_event(r, ev) != MP_OK)
            return pass_failed(r, err);
        r->index++;
        r->state = AFTER_EVENT;
        return 1;
    }
    if (c == ']' && !comma) {
        /* the end of the events */
    } else if (c == ']') {
        fail_at(r, "an event expected after ','");
        return pass_failed(r, err);
    } else if (c == '{' || c == '"' || c == '-' || (c >= '0' && c <= '9') || c == 't' ||
               c == 'f' || c == 'n') {
        event_fail(r, r->line, " is not an array of %d integers", MP_TFMT_COUNT);
        return pass_failed(r, err);
    } else {
        fail_at(r, c < 0 ? "unexpected end of file in the events" : "an event expected");
        return pass_failed(r, err);
    }
    r->p++; /* the events' ']' */
    if (!r->tail_checked && check_tail(r) != MP_OK)
        return pass_failed(r, err);
    r->state = DONE;
    r->count = r->index;
    return 0;
}

/* ---- opening, rewinding ---- */

mp_status mp_trace_reader_rewind(mp_trace_reader *r, mp_error *err)
{
    if (r->fresh)
        return MP_OK;
    r->state = FAILED;
    if (lseek(r->fd, (off_t)r->ev_off, SEEK_SET) < 0) {
        mp_status st = mp_fail(&r->failure, MP_ERR_IO, "cannot read %s: %s", r->path,
                               strerror(errno));
        if (err)
            *err = r->failure;
        return st;
    }
    r->base = r->ev_off;
    r->p = r->e = r->buf;
    *r->e = 0;
    r->eof = false;
    r->read_errno = 0;
    r->line = r->ev_line;
    r->line_start = r->ev_line_start;
    if (peek(r) != '[') {
        mp_status st = r->read_errno ? io_failure(r)
                                     : mp_fail(&r->failure, MP_ERR_IO,
                                               "%s: the trace file changed while being read",
                                               r->path);
        if (err)
            *err = r->failure;
        return st;
    }
    r->p++;
    r->state = AT_START;
    r->index = 0;
    r->fresh = true;
    return MP_OK;
}

/* The outer object up to the events (or to its end when a member the reader needs comes
 * after them). vals[] gets the header's values; *events_at the first byte of the events'
 * value (-1 when there is no "events"). */
static mp_status read_header(mp_trace_reader *r, json_t *vals[K_COUNT], int *events_at)
{
    *events_at = -1;
    int c = skip_ws(r);
    if (c == '[')
        return fail(r, "not a memprof trace");
    if (c != '{')
        return fail_at(r, "'{' expected: not a memprof trace");
    take(r);
    c = skip_ws(r);
    if (c == '}') { /* {} */
        take(r);
        if (skip_ws(r) >= 0)
            return fail_at(r, "end of file expected");
        if (r->read_errno)
            return io_failure(r);
        r->tail_checked = true;
        return MP_OK;
    }
    for (;;) {
        char *key;
        mp_status st = read_key(r, &key);
        if (st == MP_OK)
            st = colon(r);
        if (st != MP_OK)
            return st;
        int h = 0;
        while (h < K_COUNT && strcmp(key, header_keys[h]) != 0)
            h++;
        if (h < K_COUNT) {
            st = read_value(r, &vals[h]);
        } else if (strcmp(key, "events") == 0) {
            *events_at = peek(r);
            r->ev_off = offset(r);
            r->ev_line = r->line;
            r->ev_line_start = r->line_start;
            r->keys_before_events = r->n_keys;
            if (vals[K_FORMAT] && vals[K_VERSION] && vals[K_META] && vals[K_FIELDS])
                return MP_OK; /* the usual order: the events come last */
            st = scan_value(r, false);
        } else {
            st = read_value(r, NULL);
        }
        if (st != MP_OK)
            return st;
        if (!next_member(r, &st)) {
            r->tail_checked = true;
            return st;
        }
    }
}

/* The checks of the header's values, in the order of the format's description. */
static mp_status check_header(mp_trace_reader *r, mp_trace_header_loader *ld, json_t *vals[K_COUNT],
                              int events_at)
{
    json_t *v = vals[K_FORMAT];
    if (!json_is_string(v) || strcmp(json_string_value(v), MP_TRACE_FORMAT) != 0)
        return mp_trace_header_fail(ld, "not a memprof trace");
    v = vals[K_VERSION];
    if (!json_is_integer(v) || json_integer_value(v) < 1)
        return mp_trace_header_fail(ld, "version is not a positive integer");
    if (json_integer_value(v) > MP_TRACE_VERSION)
        return mp_trace_header_fail(
            ld, "trace version %" JSON_INTEGER_FORMAT " is newer than this memprof reads (%d)",
            json_integer_value(v), MP_TRACE_VERSION);
    r->version = (int)json_integer_value(v);
    if (!vals[K_META])
        return mp_trace_header_fail(ld, "the trace has no 'meta'");
    if (!vals[K_FIELDS])
        return mp_trace_header_fail(ld, "the trace has no 'event_fields'");
    if (events_at < 0)
        return mp_trace_header_fail(ld, "the trace has no 'events'");
    mp_status st = mp_trace_header_meta(ld, vals[K_META]);
    if (st == MP_OK)
        st = mp_trace_header_fields(ld, vals[K_FIELDS], r->col);
    if (st == MP_OK && events_at != '[')
        st = mp_trace_header_fail(ld, "events is not an array");
    if (st != MP_OK)
        return st;
    r->truncated = ld->truncated;
    mp_tfmt_range rg[MP_TFMT_COUNT];
    mp_tfmt_field_ranges(mp_trace_get_meta(r->tr), r->version, rg);
    for (int k = 0; k < MP_TFMT_COUNT; k++) {
        r->lo[k] = rg[r->col[k]].lo;
        r->hi[k] = rg[r->col[k]].hi;
    }
    return MP_OK;
}

mp_status mp_trace_reader_open(const char *path, mp_trace_reader **out, mp_error *err)
{
    if (!path || !out)
        return mp_fail(err, MP_ERR_ARG, "mp_trace_reader_open: no path or no result pointer");
    *out = NULL;
    /* non-blocking: a FIFO without writer reads as empty instead of hanging the open */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return mp_fail(err, MP_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    mp_file_set_blocking(fd);
    struct stat sb;
    if (fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        close(fd);
        return mp_fail(err, MP_ERR_IO, "cannot read %s: %s", path, strerror(EISDIR));
    }
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size == 0) {
        close(fd);
        return mp_fail(err, MP_ERR_FORMAT, "%s: the file is empty, not a memprof trace", path);
    }
    mp_trace_reader *r = calloc(1, sizeof *r);
    if (r) {
        r->fd = fd;
        r->path = strdup(path);
        r->buf = malloc(BUF_SIZE + 1);
        r->tr = mp_trace_create();
        r->owns_tr = true;
    }
    if (!r || !r->path || !r->buf || !r->tr) {
        if (r)
            r->fd = -1;
        mp_trace_reader_close(r);
        close(fd);
        return mp_fail(err, MP_ERR_NOMEM, "%s: out of memory while reading the trace", path);
    }
    r->p = r->e = r->buf;
    *r->e = 0;
    r->line = 1;
    r->count = SIZE_MAX;
    r->state = FAILED;

    json_t *vals[K_COUNT] = {NULL};
    int events_at = -1;
    mp_trace_header_loader ld = {r->path, &r->failure, r->tr, false};
    mp_status st = read_header(r, vals, &events_at);
    if (st == MP_OK)
        st = check_header(r, &ld, vals, events_at);
    for (int h = 0; h < K_COUNT; h++)
        json_decref(vals[h]);
    free(r->cap);
    r->cap = NULL;
    r->cap_len = r->cap_size = 0;
    if (st == MP_OK) {
        if (r->tail_checked) {
            st = mp_trace_reader_rewind(r, NULL);
        } else {
            r->p++; /* the events' '[' (read_header stopped there) */
            r->state = AT_START;
            r->index = 0;
            r->fresh = true;
        }
    }
    if (st != MP_OK) {
        if (err)
            *err = r->failure;
        mp_trace_reader_close(r);
        return st;
    }
    *out = r;
    return MP_OK;
}

void mp_trace_reader_close(mp_trace_reader *r)
{
    if (!r)
        return;
    if (r->fd >= 0)
        close(r->fd);
    drop_keys(r, 0);
    free(r->keys);
    free(r->cap);
    free(r->buf);
    free(r->path);
    if (r->owns_tr)
        mp_trace_destroy(r->tr);
    free(r);
}

const mp_trace_meta *mp_trace_reader_meta(const mp_trace_reader *r)
{
    return mp_trace_get_meta(r->tr);
}

mp_trace *mp_trace_reader_release_trace(mp_trace_reader *r)
{
    r->owns_tr = false;
    return r->tr;
}

const char *mp_trace_reader_path(const mp_trace_reader *r)
{
    return r->path;
}

int mp_trace_reader_version(const mp_trace_reader *r)
{
    return r->version;
}

bool mp_trace_reader_truncated(const mp_trace_reader *r)
{
    return r->truncated;
}

size_t mp_trace_reader_count(const mp_trace_reader *r)
{
    return r->count;
}
