/* Bounds-checked read side of FlatBuffers, just enough for the .tflite reader.
 *
 * Nothing here trusts the bytes: every offset, vtable, vector and string is checked to
 * lie inside the buffer (with overflow-safe size_t arithmetic) before it is used, and
 * scalars are read with memcpy so unaligned files never cause unaligned loads. The first
 * fault is described in mp_fb_reader.msg as one line ("truncated: tensor 12 shape vector
 * ends at byte 5000 past end of file (4096 bytes)"); the caller adds the file name.
 *
 * Layout reminder: the root uoffset is at byte 0; a table starts with an soffset to its
 * vtable (vtable = table - soffset); a vtable is [vtable bytes u16, table bytes u16,
 * field offsets u16...] with field k at vtable byte 4 + 2k (0 = absent, default value);
 * offsets to sub-objects are uoffsets relative to the field's own position; a vector is
 * a u32 length then its elements; a string is a u32 length, the bytes, then a NUL. */
#ifndef MP_FLATBUF_H
#define MP_FLATBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct mp_fb_reader {
    const uint8_t *base;
    size_t size;
    char where[96];  /* what is being read, for messages: "tensor 12", "operator 3" */
    char msg[400];   /* first fault, one line, without the file name */
} mp_fb_reader;

typedef struct mp_fb_table {
    bool present;    /* false: the field holding it was absent */
    size_t pos;      /* byte of the table (its soffset) */
    size_t vt;       /* byte of its vtable */
    uint16_t vt_len; /* vtable bytes */
    uint16_t len;    /* table bytes (inline fields) */
} mp_fb_table;

typedef struct mp_fb_vec {
    bool present;    /* false: absent (n is then 0) */
    size_t pos;      /* byte of the first element */
    uint32_t n;      /* element count */
} mp_fb_vec;

/* Start reading `size` bytes at `base` (the caller keeps them alive). */
void mp_fb_init(mp_fb_reader *r, const void *base, size_t size);
/* Set the context named in fault messages (printf-style). */
void mp_fb_where(mp_fb_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Record a fault in r->msg (printf-style); always returns false. */
bool mp_fb_fail(mp_fb_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The root table (uoffset at byte 0). */
bool mp_fb_root(mp_fb_reader *r, mp_fb_table *out);
/* Verify the table whose soffset is at `pos`; `name` is used in messages. */
bool mp_fb_table_at(mp_fb_reader *r, size_t pos, const char *name, mp_fb_table *out);

/* Whether field `id` is present in table t. */
bool mp_fb_has(const mp_fb_reader *r, const mp_fb_table *t, unsigned id);

/* Scalars: *out = the field, or `def` when absent. False when the field lies outside its
 * table or the file. */
bool mp_fb_u8(mp_fb_reader *r, const mp_fb_table *t, unsigned id, uint8_t def, const char *name, uint8_t *out);
bool mp_fb_i8(mp_fb_reader *r, const mp_fb_table *t, unsigned id, int8_t def, const char *name, int8_t *out);
bool mp_fb_bool(mp_fb_reader *r, const mp_fb_table *t, unsigned id, bool def, const char *name, bool *out);
bool mp_fb_i32(mp_fb_reader *r, const mp_fb_table *t, unsigned id, int32_t def, const char *name, int32_t *out);
bool mp_fb_u32(mp_fb_reader *r, const mp_fb_table *t, unsigned id, uint32_t def, const char *name, uint32_t *out);
bool mp_fb_u64(mp_fb_reader *r, const mp_fb_table *t, unsigned id, uint64_t def, const char *name, uint64_t *out);
bool mp_fb_f32(mp_fb_reader *r, const mp_fb_table *t, unsigned id, float def, const char *name, float *out);

/* Sub-table at field `id` (out->present false when absent). */
bool mp_fb_sub_table(mp_fb_reader *r, const mp_fb_table *t, unsigned id, const char *name, mp_fb_table *out);
/* Vector of `elem_size`-byte elements at field `id` (present false, n 0 when absent). */
bool mp_fb_vector(mp_fb_reader *r, const mp_fb_table *t, unsigned id, size_t elem_size, const char *name,
               mp_fb_vec *out);
/* String at field `id`: *s points at its NUL-terminated bytes in the buffer, or is NULL
 * when absent. */
bool mp_fb_string(mp_fb_reader *r, const mp_fb_table *t, unsigned id, const char *name, const char **s,
               uint32_t *len);
/* Element i of a vector of tables (v was verified with elem_size 4). */
bool mp_fb_vec_table(mp_fb_reader *r, const mp_fb_vec *v, uint32_t i, const char *name, mp_fb_table *out);

/* Elements of verified vectors (i < v->n; read with memcpy). */
int32_t mp_fb_vec_i32(const mp_fb_reader *r, const mp_fb_vec *v, uint32_t i);
int64_t mp_fb_vec_i64(const mp_fb_reader *r, const mp_fb_vec *v, uint32_t i);
float mp_fb_vec_f32(const mp_fb_reader *r, const mp_fb_vec *v, uint32_t i);
/* Address of a verified vector's first element inside the buffer. */
const void *mp_fb_vec_data(const mp_fb_reader *r, const mp_fb_vec *v);

#endif
