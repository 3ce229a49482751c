/* Growing arrays, a generic helper on the trace floor that every library may use (analyzers,
 * reports, the TUI): make room for one more element by doubling the capacity (starting at
 * `first`). On failure the array is left as it was, so a caller can report out of memory
 * without having lost state. */
#ifndef MP_GROW_H
#define MP_GROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

static inline bool mp_grow(void **arr, size_t *cap, size_t n, size_t elem, size_t first)
{
    if (n < *cap)
        return true;
    size_t ncap = *cap ? *cap * 2 : first;
    if (ncap < *cap || ncap > SIZE_MAX / elem)
        return false;
    void *p = realloc(*arr, ncap * elem);
    if (!p)
        return false;
    *arr = p;
    *cap = ncap;
    return true;
}

#endif
