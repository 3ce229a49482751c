/* Bounds-checked read side of FlexBuffers (the schemaless format TensorFlow Lite custom
 * operators keep their options in), just enough for those options: the root, a map's key
 * lookup, and scalars (int, uint, float, bool; inline or indirect; 1, 2, 4 or 8 bytes).
 *
 * Nothing here trusts the bytes: every offset, width and count is checked against the
 * buffer with overflow-safe size_t arithmetic before it is followed, scalars are read byte
 * by byte (little-endian, any alignment). The first fault is described in
 * mp_flex_reader.msg as one line; the caller adds the file and operator.
 *
 * Layout reminder: the buffer ends with the root value (W bytes), its packed type byte
 * (type << 2 | log2 of the width of what it points to) and W. A value sits in W bytes of its
 * parent; inline scalars are read there, other types store an unsigned offset back
 * (target = position - offset) and the target is read with the packed width. A map's target
 * holds its values (W each) followed by one packed type byte per value; before it, from the
 * target back: its size, the byte width of its keys vector, and the offset to that vector
 * (a vector of offsets to NUL-terminated keys, sorted, its size just before it). */
#ifndef MP_FLEXBUF_H
#define MP_FLEXBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* FlexBuffers value types (flexbuffers.h numbering) memprof reads or names. */
enum {
    MP_FLEX_NULL = 0,
    MP_FLEX_INT = 1,
    MP_FLEX_UINT = 2,
    MP_FLEX_FLOAT = 3,
    MP_FLEX_KEY = 4,
    MP_FLEX_STRING = 5,
    MP_FLEX_INDIRECT_INT = 6,
    MP_FLEX_INDIRECT_UINT = 7,
    MP_FLEX_INDIRECT_FLOAT = 8,
    MP_FLEX_MAP = 9,
    MP_FLEX_VECTOR = 10,
    MP_FLEX_BLOB = 25,
    MP_FLEX_BOOL = 26,
};

typedef struct mp_flex_reader {
    const uint8_t *base;
    size_t size;
    char msg[200]; /* first fault, one line */
} mp_flex_reader;

/* A value: where it sits in its parent and how to read it. */
typedef struct mp_flex_ref {
    size_t pos;            /* byte of the value (inline) or of its offset (others) */
    uint8_t parent_width;  /* bytes at pos: 1, 2, 4 or 8 */
    uint8_t width;         /* bytes of the target of an offset (packed width) */
    uint8_t type;          /* MP_FLEX_* */
} mp_flex_ref;

/* Start reading `size` bytes at `base` (the caller keeps them alive). */
void mp_flex_init(mp_flex_reader *r, const void *base, size_t size);

/* The root value. False (with r->msg) when the buffer is too short or its widths invalid. */
bool mp_flex_root(mp_flex_reader *r, mp_flex_ref *out);

/* Look `key` up in the map v: *found false when the map has no such key (not a fault).
 * False when v is not a map or the map is malformed. */
bool mp_flex_map_get(mp_flex_reader *r, const mp_flex_ref *v, const char *key, mp_flex_ref *out,
                     bool *found);
/* Number of entries of the map v. */
bool mp_flex_map_size(mp_flex_reader *r, const mp_flex_ref *v, size_t *n);

/* Scalars, converted as flexbuffers' As*() do for numbers and booleans: an int or bool as a
 * float, a float truncated to an integer (false when it is not finite or out of range), a
 * number as a bool (non-zero). Null, strings, maps and vectors are faults (MP_FLEX_NULL
 * values too: a caller that wants a default looks at `found` or the type first). */
bool mp_flex_int(mp_flex_reader *r, const mp_flex_ref *v, int64_t *out);
bool mp_flex_uint(mp_flex_reader *r, const mp_flex_ref *v, uint64_t *out);
bool mp_flex_double(mp_flex_reader *r, const mp_flex_ref *v, double *out);
bool mp_flex_bool(mp_flex_reader *r, const mp_flex_ref *v, bool *out);

/* Name of a type for messages ("int", "map", ... "type 17"). */
const char *mp_flex_type_name(uint8_t type, char *buf, size_t cap);

#endif
