/* Element movement shared by the kernels that rearrange tensors (TRANSPOSE, STRIDED_SLICE,
 * BATCH_MATMUL's transposed operand copies, DEPTH_TO_SPACE); defined in movement.c. */
#ifndef MP_MOVEMENT_H
#define MP_MOVEMENT_H

#include <stddef.h>
#include <stdint.h>

#include "engine/kernels/kernel.h"

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

/* The checks of an operator that only moves elements: n_in inputs (none omitted), one output of
 * input 0's dtype (a fixed element size) and, quantized, its scale and zero point. */
mp_status mp_node_check_move_io(mp_node *n, int32_t n_in);

/* Step the multi-index idx[0..last) over dims in row-major order (the rows of dimension
 * `last` walked by the caller). */
void mp_index_next(int32_t *idx, const int32_t *dims, int32_t last);

#endif
