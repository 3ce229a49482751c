/* Bounds-checked FlexBuffers reader (see flexbuf.h): custom operator options are file bytes,
 * so every offset is checked against the buffer before it is followed. */
#include "engine/model/flexbuf.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void mp_flex_init(mp_flex_reader *r, const void *base, size_t size)
{
    r->base = base;
    r->size = base ? size : 0;
    r->msg[0] = '\0';
}

static bool flex_fail(mp_flex_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static bool flex_fail(mp_flex_reader *r, const char *fmt, ...)
{
    if (!r->msg[0]) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->msg, sizeof r->msg, fmt, ap);
        va_end(ap);
    }
    return false;
}

static bool valid_width(uint64_t w)
{
    return w == 1 || w == 2 || w == 4 || w == 8;
}

/* Unsigned little-endian integer of w bytes at pos. */
static bool read_u(mp_flex_reader *r, size_t pos, unsigned w, const char *what, uint64_t *out)
{
    *out = 0;
    if (pos > r->size || w > r->size - pos)
        return flex_fail(r, "%s at byte %zu (%u bytes) runs past the end of the %zu-byte options",
                         what, pos, w, r->size);
    uint64_t v = 0;
    for (unsigned k = 0; k < w; k++)
        v |= (uint64_t)r->base[pos + k] << (8 * k);
    *out = v;
    return true;
}

static bool read_i(mp_flex_reader *r, size_t pos, unsigned w, const char *what, int64_t *out)
{
    uint64_t u = 0;
    if (!read_u(r, pos, w, what, &u))
        return false;
    if (w < 8 && (u >> (8 * w - 1)) & 1)
        u |= ~(uint64_t)0 << (8 * w); /* sign-extend */
    int64_t v;
    memcpy(&v, &u, sizeof v);
    *out = v;
    return true;
}

/* Follow the offset of w bytes at pos back to its target. */
static bool deref(mp_flex_reader *r, size_t pos, unsigned w, const char *what, size_t *target)
{
    uint64_t off = 0;
    *target = 0;
    if (!read_u(r, pos, w, what, &off))
        return false;
    if (off > pos)
        return flex_fail(r, "%s at byte %zu points %llu bytes back, before the start of the options",
                         what, pos, (unsigned long long)off);
    *target = pos - (size_t)off;
    return true;
}

static mp_flex_ref make_ref(size_t pos, unsigned parent_width, uint8_t packed)
{
    return (mp_flex_ref){.pos = pos, .parent_width = (uint8_t)parent_width,
                         .width = (uint8_t)(1u << (packed & 3)), .type = (uint8_t)(packed >> 2)};
}

bool mp_flex_root(mp_flex_reader *r, mp_flex_ref *out)
{
    if (r->size < 3)
        return flex_fail(r, "truncated: %zu bytes of options, too short for a FlexBuffer", r->size);
    unsigned w = r->base[r->size - 1];
    if (!valid_width(w))
        return flex_fail(r, "root byte width %u is not 1, 2, 4 or 8", w);
    if (r->size - 2 < w)
        return flex_fail(r, "truncated: the root value needs %u bytes, the options have %zu", w + 2,
                         r->size);
    *out = make_ref(r->size - 2 - w, w, r->base[r->size - 2]);
    return true;
}

const char *mp_flex_type_name(uint8_t type, char *buf, size_t cap)
{
    switch (type) {
    case MP_FLEX_NULL: return "null";
    case MP_FLEX_INT: return "int";
    case MP_FLEX_UINT: return "uint";
    case MP_FLEX_FLOAT: return "float";
    case MP_FLEX_KEY: return "key";
    case MP_FLEX_STRING: return "string";
    case MP_FLEX_INDIRECT_INT: return "indirect int";
    case MP_FLEX_INDIRECT_UINT: return "indirect uint";
    case MP_FLEX_INDIRECT_FLOAT: return "indirect float";
    case MP_FLEX_MAP: return "map";
    case MP_FLEX_VECTOR: return "vector";
    case MP_FLEX_BLOB: return "blob";
    case MP_FLEX_BOOL: return "bool";
    default: snprintf(buf, cap, "type %u", type); return buf;
    }
}

/* ---- maps ------------------------------------------------------------------------------ */

typedef struct flex_map {
    size_t values;   /* first value; the packed types follow the n values */
    unsigned width;  /* bytes per value */
    size_t n;
    size_t keys;     /* first key offset */
    unsigned key_width;
} flex_map;

static bool open_map(mp_flex_reader *r, const mp_flex_ref *v, flex_map *m)
{
    char tb[24];
    if (v->type != MP_FLEX_MAP)
        return flex_fail(r, "expected a map, found %s", mp_flex_type_name(v->type, tb, sizeof tb));
    size_t p = 0;
    unsigned w = v->width;
    if (!deref(r, v->pos, v->parent_width, "map offset", &p))
        return false;
    if (p < 3 * (size_t)w)
        return flex_fail(r, "map at byte %zu has no room for its header", p);
    uint64_t n = 0, kw = 0;
    size_t k = 0;
    if (!read_u(r, p - w, w, "map size", &n) || !read_u(r, p - 2 * (size_t)w, w, "map key width", &kw) ||
        !deref(r, p - 3 * (size_t)w, w, "map keys offset", &k))
        return false;
    if (!valid_width(kw))
        return flex_fail(r, "map at byte %zu: key byte width %llu is not 1, 2, 4 or 8", p,
                         (unsigned long long)kw);
    /* values (w bytes each) then one type byte each, inside the buffer */
    if (p > r->size || n > (r->size - p) / ((size_t)w + 1))
        return flex_fail(r, "map at byte %zu: %llu entries run past the end of the %zu-byte options",
                         p, (unsigned long long)n, r->size);
    uint64_t kn = 0;
    if (k < kw || !read_u(r, k - (size_t)kw, (unsigned)kw, "map keys size", &kn))
        return flex_fail(r, "map at byte %zu: keys vector at byte %zu has no size", p, k);
    if (kn != n)
        return flex_fail(r, "map at byte %zu has %llu values but %llu keys", p,
                         (unsigned long long)n, (unsigned long long)kn);
    if (k > r->size || n > (r->size - k) / kw)
        return flex_fail(r, "map at byte %zu: %llu keys run past the end of the options", p,
                         (unsigned long long)n);
    *m = (flex_map){.values = p, .width = w, .n = (size_t)n, .keys = k, .key_width = (unsigned)kw};
    return true;
}

bool mp_flex_map_size(mp_flex_reader *r, const mp_flex_ref *v, size_t *n)
{
    flex_map m = {0};
    if (!open_map(r, v, &m))
        return false;
    *n = m.n;
    return true;
}

/* Whether the NUL-terminated key at pos equals `key`: 1 yes, 0 no, -1 fault. */
static int key_equals(mp_flex_reader *r, size_t pos, const char *key)
{
    for (size_t j = 0;; j++) {
        if (pos >= r->size || j >= r->size - pos) {
            flex_fail(r, "map key at byte %zu runs past the end of the options", pos);
            return -1;
        }
        unsigned char c = r->base[pos + j];
        if (c != (unsigned char)key[j])
            return 0;
        if (c == 0)
            return 1;
    }
}

bool mp_flex_map_get(mp_flex_reader *r, const mp_flex_ref *v, const char *key, mp_flex_ref *out,
                     bool *found)
{
    flex_map m = {0};
    *found = false;
    if (!open_map(r, v, &m))
        return false;
    /* Linear: a writer keeps keys sorted, but a file need not, and n is bounded by the size. */
    for (size_t i = 0; i < m.n; i++) {
        size_t kp = 0;
        if (!deref(r, m.keys + i * m.key_width, m.key_width, "map key offset", &kp))
            return false;
        int eq = key_equals(r, kp, key);
        if (eq < 0)
            return false;
        if (eq) {
            *out = make_ref(m.values + i * m.width, m.width, r->base[m.values + m.n * m.width + i]);
            *found = true;
            return true;
        }
    }
    return true;
}

/* ---- scalars --------------------------------------------------------------------------- */

typedef enum { NUM_INT, NUM_UINT, NUM_FLOAT } num_kind;

typedef struct flex_num {
    num_kind kind;
    int64_t i;
    uint64_t u;
    double d;
} flex_num;

static bool read_float(mp_flex_reader *r, size_t pos, unsigned w, double *out)
{
    uint64_t bits = 0;
    if (w != 4 && w != 8)
        return flex_fail(r, "float at byte %zu has %u bytes (4 or 8 expected)", pos, w);
    if (!read_u(r, pos, w, "float", &bits))
        return false;
    if (w == 4) {
        uint32_t b32 = (uint32_t)bits;
        float f;
        memcpy(&f, &b32, sizeof f);
        *out = f;
    } else {
        memcpy(out, &bits, sizeof *out);
    }
    return true;
}

static bool read_number(mp_flex_reader *r, const mp_flex_ref *v, flex_num *n)
{
    size_t at = v->pos;
    unsigned w = v->parent_width;
    uint8_t type = v->type;
    if (type >= MP_FLEX_INDIRECT_INT && type <= MP_FLEX_INDIRECT_FLOAT) {
        if (!deref(r, v->pos, v->parent_width, "indirect scalar offset", &at))
            return false;
        w = v->width;
        type = (uint8_t)(type - MP_FLEX_INDIRECT_INT + MP_FLEX_INT);
    }
    char tb[24];
    switch (type) {
    case MP_FLEX_INT:
        n->kind = NUM_INT;
        return read_i(r, at, w, "int", &n->i);
    case MP_FLEX_UINT:
    case MP_FLEX_BOOL:
        n->kind = NUM_UINT;
        if (!read_u(r, at, w, type == MP_FLEX_BOOL ? "bool" : "uint", &n->u))
            return false;
        if (type == MP_FLEX_BOOL)
            n->u = n->u != 0;
        return true;
    case MP_FLEX_FLOAT:
        n->kind = NUM_FLOAT;
        return read_float(r, at, w, &n->d);
    default:
        return flex_fail(r, "expected a number or bool, found %s",
                         mp_flex_type_name(v->type, tb, sizeof tb));
    }
}

bool mp_flex_int(mp_flex_reader *r, const mp_flex_ref *v, int64_t *out)
{
    flex_num n = {0};
    if (!read_number(r, v, &n))
        return false;
    switch (n.kind) {
    case NUM_INT: *out = n.i; return true;
    case NUM_UINT:
        if (n.u > (uint64_t)INT64_MAX)
            return flex_fail(r, "unsigned value %llu is out of range", (unsigned long long)n.u);
        *out = (int64_t)n.u;
        return true;
    default:
        if (!isfinite(n.d) || n.d <= -9.2e18 || n.d >= 9.2e18)
            return flex_fail(r, "float value %g is not an integer in range", n.d);
        *out = (int64_t)n.d;
        return true;
    }
}

bool mp_flex_uint(mp_flex_reader *r, const mp_flex_ref *v, uint64_t *out)
{
    flex_num n = {0};
    if (!read_number(r, v, &n))
        return false;
    switch (n.kind) {
    case NUM_UINT: *out = n.u; return true;
    case NUM_INT:
        if (n.i < 0)
            return flex_fail(r, "value %lld is negative", (long long)n.i);
        *out = (uint64_t)n.i;
        return true;
    default:
        if (!isfinite(n.d) || n.d < 0 || n.d >= 1.8e19)
            return flex_fail(r, "float value %g is not an unsigned integer in range", n.d);
        *out = (uint64_t)n.d;
        return true;
    }
}

bool mp_flex_double(mp_flex_reader *r, const mp_flex_ref *v, double *out)
{
    flex_num n = {0};
    if (!read_number(r, v, &n))
        return false;
    *out = n.kind == NUM_INT ? (double)n.i : n.kind == NUM_UINT ? (double)n.u : n.d;
    return true;
}

bool mp_flex_bool(mp_flex_reader *r, const mp_flex_ref *v, bool *out)
{
    flex_num n = {0};
    if (!read_number(r, v, &n))
        return false;
    *out = n.kind == NUM_INT ? n.i != 0 : n.kind == NUM_UINT ? n.u != 0 : n.d != 0;
    return true;
}
