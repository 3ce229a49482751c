/* Element movement shared by the kernels that rearrange tensors (TRANSPOSE, STRIDED_SLICE,
 * BATCH_MATMUL's transposed operand copies); defined in movement.c. */
#ifndef MP_MOVEMENT_H
#define MP_MOVEMENT_H

#include <stddef.h>
#include <stdint.h>

/* Copy `count` elements of es bytes read `stride` bytes apart (negative: backwards) from src
 * into dst, packed. */
void mp_copy_strided(uint8_t *dst, const uint8_t *src, size_t count, ptrdiff_t stride,
                     size_t es);

/* dst = src transposed: output dimension j is input dimension perm[j] (perm a permutation of
 * 0..rank-1, rank <= MP_MAX_RANK, dims the input's), elements of es bytes. Dimensions of size
 * 1 are dropped and runs of dimensions that stay adjacent are merged first, so a transpose
 * that keeps the last dimension copies whole rows. src and dst must not overlap. */
void mp_permute(const void *src, void *dst, int32_t rank, const int32_t *dims,
                const int32_t *perm, size_t es);

#endif
