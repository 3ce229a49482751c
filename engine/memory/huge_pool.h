/* A pool of long-lived blocks on transparent huge pages (used by mem.c).
 *
 * The planned arena and XNNPACK's packed weights are read on every run; between runs other
 * work (another model, the peer in memprof bench, the application) evicts their page-table
 * entries, and with 4 KiB pages a run then pays thousands of page walks. Placed in 2 MiB
 * aligned chunks advised MADV_HUGEPAGE, they need a few hundred times fewer entries.
 *
 * Chunks come from aligned_alloc (so a malloc-level heap measurement still sees them) and
 * are carved by bumping a cursor; a chunk is given back when its last block is freed. A
 * block of more than half a chunk gets a chunk of its own; when it is freed, its chunk is
 * kept as the pool's one spare (the larger one, if there is a spare already) for the next
 * such block, so that an arena given back at a shape change and made again for the new
 * shape finds its pages in place, as malloc's heap would give them. Blocks are never moved
 * or reused in place, so the pool suits blocks that live as long as a prepared session. */
#ifndef MP_HUGE_POOL_H
#define MP_HUGE_POOL_H

#include <stddef.h>
#include <stdint.h>

#define MP_HUGE_PAGE ((size_t)2 << 20)
#define MP_HUGE_CHUNK ((size_t)4 << 20) /* a shared chunk */

typedef struct mp_hpool mp_hpool;

mp_hpool *mp_hpool_create(void);
/* The pool and its spare are freed; a chunk still holding blocks is given back when its
 * last block is. */
void mp_hpool_destroy(mp_hpool *p);
/* `bytes` from the pool, 16-byte aligned, or NULL when the system refuses a chunk.
 * *held = the change in chunk bytes the pool holds from the system (a new chunk: its size;
 * a spare given back on the way: less its size; 0 when none). */
void *mp_hpool_alloc(mp_hpool *p, size_t bytes, int64_t *held);
/* Give a block back; *held = the change in chunk bytes held (0, or minus a chunk's size). */
void mp_hpool_free(void *block, int64_t *held);

#endif
