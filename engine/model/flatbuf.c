/* Bounds-checked FlatBuffers reading for the .tflite reader (see flatbuf.h).
 *
 * Every position is a size_t byte index into [0, size). A check is always written as
 * "need `len` bytes at `pos`": pos <= size && len <= size - pos, which cannot overflow. */
#include "engine/model/flatbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the FlatBuffers reader assumes a little-endian host (TensorFlow Lite files are little-endian)"
#endif

void mp_fb_init(mp_fb_reader *r, const void *base, size_t size)
{
    r->base = base;
    r->size = size;
    r->where[0] = '\0';
    r->msg[0] = '\0';
}

void mp_fb_where(mp_fb_reader *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->where, sizeof r->where, fmt, ap);
    va_end(ap);
}

bool mp_fb_fail(mp_fb_reader *r, const char *fmt, ...)
{
    /* Keep the first fault: later ones are usually consequences of it. */
    if (r->msg[0] == '\0') {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->msg, sizeof r->msg, fmt, ap);
        va_end(ap);
    }
    return false;
}

/* "tensor 12 shape" or just "shape" when no context is set. */
static const char *label(const mp_fb_reader *r, const char *name, char *buf, size_t cap)
{
    if (r->where[0])
        snprintf(buf, cap, "%s %s", r->where, name);
    else
        snprintf(buf, cap, "%s", name);
    return buf;
}

/* Whether `len` bytes starting at `pos` lie inside the buffer. */
static bool fits(const mp_fb_reader *r, size_t pos, size_t len)
{
    return pos <= r->size && len <= r->size - pos;
}

static uint16_t rd16(const mp_fb_reader *r, size_t pos)
{
    uint16_t v;
    memcpy(&v, r->base + pos, sizeof v);
    return v;
}

static uint32_t rd32(const mp_fb_reader *r, size_t pos)
{
    uint32_t v;
    memcpy(&v, r->base + pos, sizeof v);
    return v;
}

bool mp_fb_table_at(mp_fb_reader *r, size_t pos, const char *name, mp_fb_table *out)
{
    char lb[160];
    memset(out, 0, sizeof *out);
    if (!fits(r, pos, 4))
        return mp_fb_fail(r, "truncated: %s table at byte %zu past end of file (%zu bytes)",
                       label(r, name, lb, sizeof lb), pos, r->size);
    int32_t soff;
    memcpy(&soff, r->base + pos, sizeof soff);
    /* vtable = table - soffset, computed in 64 bits so neither direction can wrap. */
    int64_t vt = (int64_t)pos - (int64_t)soff;
    if (vt < 0 || (uint64_t)vt > (uint64_t)r->size || !fits(r, (size_t)vt, 4))
        return mp_fb_fail(r, "malformed: %s vtable at byte %lld outside the file (%zu bytes)",
                       label(r, name, lb, sizeof lb), (long long)vt, r->size);
    uint16_t vt_len = rd16(r, (size_t)vt);
    uint16_t len = rd16(r, (size_t)vt + 2);
    if (vt_len < 4 || (vt_len & 1))
        return mp_fb_fail(r, "malformed: %s vtable at byte %lld has invalid size %u",
                       label(r, name, lb, sizeof lb), (long long)vt, vt_len);
    if (!fits(r, (size_t)vt, vt_len))
        return mp_fb_fail(r, "truncated: %s vtable ends at byte %zu past end of file (%zu bytes)",
                       label(r, name, lb, sizeof lb), (size_t)vt + vt_len, r->size);
    if (len < 4)
        return mp_fb_fail(r, "malformed: %s table at byte %zu has invalid size %u",
                       label(r, name, lb, sizeof lb), pos, len);
    if (!fits(r, pos, len))
        return mp_fb_fail(r, "truncated: %s table ends at byte %zu past end of file (%zu bytes)",
                       label(r, name, lb, sizeof lb), pos + len, r->size);
    out->present = true;
    out->pos = pos;
    out->vt = (size_t)vt;
    out->vt_len = vt_len;
    out->len = len;
    return true;
}

bool mp_fb_root(mp_fb_reader *r, mp_fb_table *out)
{
    if (!fits(r, 0, 4))
        return mp_fb_fail(r, "truncated: file is %zu bytes, too short for a root offset", r->size);
    return mp_fb_table_at(r, rd32(r, 0), "root", out);
}

/* Offset of field `id` inside the table, 0 when absent. */
static uint16_t field_off(const mp_fb_reader *r, const mp_fb_table *t, unsigned id)
{
    if (!t->present)
        return 0;
    size_t at = 4 + 2 * (size_t)id;
    if (at + 2 > t->vt_len)
        return 0; /* vtable shorter than the schema: field written by an older writer */
    return rd16(r, t->vt + at);
}

bool mp_fb_has(const mp_fb_reader *r, const mp_fb_table *t, unsigned id)
{
    return field_off(r, t, id) != 0;
}

/* Locate field `id` of `width` bytes; *pos = 0 when absent. The table itself was checked
 * to lie in the file, so a field inside it is in the file too. */
static bool field_pos(mp_fb_reader *r, const mp_fb_table *t, unsigned id, size_t width, const char *name,
                      size_t *pos)
{
    uint16_t off = field_off(r, t, id);
    *pos = 0;
    if (off == 0)
        return true;
    if ((size_t)off + width > t->len) {
        char lb[160];
        return mp_fb_fail(r, "malformed: %s field (offset %u, %zu bytes) lies outside its table (%u bytes)",
                       label(r, name, lb, sizeof lb), off, width, t->len);
    }
    *pos = t->pos + off;
    return true;
}

static bool scalar(mp_fb_reader *r, const mp_fb_table *t, unsigned id, size_t width, const char *name,
                   void *out)
{
    size_t pos;
    if (!field_pos(r, t, id, width, name, &pos))
        return false;
    if (pos)
        memcpy(out, r->base + pos, width);
    return true;
}

bool mp_fb_u8(mp_fb_reader *r, const mp_fb_table *t, unsigned id, uint8_t def, const char *name, uint8_t *out)
{
    *out = def;
    return scalar(r, t, id, 1, name, out);
}

bool mp_fb_i8(mp_fb_reader *r, const mp_fb_table *t, unsigned id, int8_t def, const char *name, int8_t *out)
{
    *out = def;
    return scalar(r, t, id, 1, name, out);
}

bool mp_fb_bool(mp_fb_reader *r, const mp_fb_table *t, unsigned id, bool def, const char *name, bool *out)
{
    /* Read as a byte: any non-zero value is true (never load a bool from arbitrary bytes). */
    uint8_t v = def ? 1 : 0;
    if (!scalar(r, t, id, 1, name, &v))
        return false;
    *out = v != 0;
    return true;
}

bool mp_fb_i32(mp_fb_reader *r, const mp_fb_table *t, unsigned id, int32_t def, const char *name, int32_t *out)
{
    *out = def;
    return scalar(r, t, id, 4, name, out);
}

bool mp_fb_u32(mp_fb_reader *r, const mp_fb_table *t, unsigned id, uint32_t def, const char *name, uint32_t *out)
{
    *out = def;
    return scalar(r, t, id, 4, name, out);
}

bool mp_fb_u64(mp_fb_reader *r, const mp_fb_table *t, unsigned id, uint64_t def, const char *name, uint64_t *out)
{
    *out = def;
    return scalar(r, t, id, 8, name, out);
}

bool mp_fb_f32(mp_fb_reader *r, const mp_fb_table *t, unsigned id, float def, const char *name, float *out)
{
    *out = def;
    return scalar(r, t, id, 4, name, out);
}

/* Follow the uoffset stored in field `id`: *target = its destination (0 when absent). */
static bool follow(mp_fb_reader *r, const mp_fb_table *t, unsigned id, const char *name, size_t *target)
{
    size_t pos;
    *target = 0;
    if (!field_pos(r, t, id, 4, name, &pos))
        return false;
    if (!pos)
        return true;
    uint32_t off = rd32(r, pos);
    char lb[160];
    if (off == 0)
        return mp_fb_fail(r, "malformed: %s offset is zero", label(r, name, lb, sizeof lb));
    size_t dest = pos + off; /* pos < size and off < 2^32: no overflow on 64-bit size_t */
    if (dest < pos || !fits(r, dest, 4))
        return mp_fb_fail(r, "truncated: %s offset points to byte %zu past end of file (%zu bytes)",
                       label(r, name, lb, sizeof lb), dest, r->size);
    *target = dest;
    return true;
}

bool mp_fb_sub_table(mp_fb_reader *r, const mp_fb_table *t, unsigned id, const char *name, mp_fb_table *out)
{
    size_t dest;
    memset(out, 0, sizeof *out);
    if (!follow(r, t, id, name, &dest))
        return false;
    if (!dest)
        return true;
    return mp_fb_table_at(r, dest, name, out);
}

/* Verify a vector whose length word is at `at`. */
static bool vector_at(mp_fb_reader *r, size_t at, size_t elem_size, const char *name, mp_fb_vec *out)
{
    char lb[160];
    uint32_t n = rd32(r, at); /* caller checked 4 bytes at `at` */
    size_t bytes;
    if (__builtin_mul_overflow((size_t)n, elem_size, &bytes) || !fits(r, at + 4, bytes)) {
        unsigned long long end = (unsigned long long)at + 4 + (unsigned long long)n * elem_size;
        return mp_fb_fail(r, "truncated: %s vector (%u elements) ends at byte %llu past end of file (%zu bytes)",
                       label(r, name, lb, sizeof lb), n, end, r->size);
    }
    out->present = true;
    out->pos = at + 4;
    out->n = n;
    return true;
}

bool mp_fb_vector(mp_fb_reader *r, const mp_fb_table *t, unsigned id, size_t elem_size, const char *name,
               mp_fb_vec *out)
{
    size_t dest;
    memset(out, 0, sizeof *out);
    if (!follow(r, t, id, name, &dest))
        return false;
    if (!dest)
        return true;
    return vector_at(r, dest, elem_size, name, out);
}

bool mp_fb_string(mp_fb_reader *r, const mp_fb_table *t, unsigned id, const char *name, const char **s,
               uint32_t *len)
{
    mp_fb_vec v;
    *s = NULL;
    *len = 0;
    if (!mp_fb_vector(r, t, id, 1, name, &v))
        return false;
    if (!v.present)
        return true;
    /* The terminating NUL must be inside the file and actually be a NUL. */
    char lb[160];
    size_t nul = v.pos + v.n;
    if (!fits(r, nul, 1))
        return mp_fb_fail(r, "truncated: %s string terminator at byte %zu past end of file (%zu bytes)",
                       label(r, name, lb, sizeof lb), nul, r->size);
    if (r->base[nul] != 0)
        return mp_fb_fail(r, "malformed: %s string (%u bytes at byte %zu) is not NUL-terminated",
                       label(r, name, lb, sizeof lb), v.n, v.pos);
    *s = (const char *)(r->base + v.pos);
    *len = v.n;
    return true;
}

bool mp_fb_vec_table(mp_fb_reader *r, const mp_fb_vec *v, uint32_t i, const char *name, mp_fb_table *out)
{
    memset(out, 0, sizeof *out);
    size_t pos = v->pos + 4 * (size_t)i; /* inside the verified vector */
    uint32_t off = rd32(r, pos);
    char lb[160];
    if (off == 0)
        return mp_fb_fail(r, "malformed: %s offset is zero", label(r, name, lb, sizeof lb));
    size_t dest = pos + off;
    if (dest < pos || !fits(r, dest, 4))
        return mp_fb_fail(r, "truncated: %s offset points to byte %zu past end of file (%zu bytes)",
                       label(r, name, lb, sizeof lb), dest, r->size);
    return mp_fb_table_at(r, dest, name, out);
}

int32_t mp_fb_vec_i32(const mp_fb_reader *r, const mp_fb_vec *v, uint32_t i)
{
    int32_t x;
    memcpy(&x, r->base + v->pos + 4 * (size_t)i, sizeof x);
    return x;
}

int64_t mp_fb_vec_i64(const mp_fb_reader *r, const mp_fb_vec *v, uint32_t i)
{
    int64_t x;
    memcpy(&x, r->base + v->pos + 8 * (size_t)i, sizeof x);
    return x;
}

float mp_fb_vec_f32(const mp_fb_reader *r, const mp_fb_vec *v, uint32_t i)
{
    float x;
    memcpy(&x, r->base + v->pos + 4 * (size_t)i, sizeof x);
    return x;
}

const void *mp_fb_vec_data(const mp_fb_reader *r, const mp_fb_vec *v)
{
    return r->base + v->pos;
}
