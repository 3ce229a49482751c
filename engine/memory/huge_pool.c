/* Transparent-huge-page pool of long-lived blocks (see huge_pool.h). */
#include "huge_pool.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

/* At the start of every chunk; every block is preceded by a pointer to its chunk. */
typedef struct chunk {
    mp_hpool *pool; /* NULL once the pool is gone or the chunk is no longer its current one */
    size_t cap, used;
    size_t n_live;
} chunk;

struct mp_hpool {
    chunk *current; /* the shared chunk being carved */
};

#define HEAD 64 /* the chunk header, rounded to a cache line */
#define LINK 16 /* the chunk pointer before each block, keeping 16-byte alignment */

static chunk *chunk_new(mp_hpool *p, size_t cap)
{
    chunk *c = aligned_alloc(MP_HUGE_PAGE, cap);
    if (!c)
        return NULL;
    (void)madvise(c, cap, MADV_HUGEPAGE); /* a hint: THP off leaves plain pages */
    c->pool = p;
    c->cap = cap;
    c->used = HEAD;
    c->n_live = 0;
    return c;
}

mp_hpool *mp_hpool_create(void)
{
    return calloc(1, sizeof(mp_hpool));
}

void mp_hpool_destroy(mp_hpool *p)
{
    if (!p)
        return;
    chunk *c = p->current;
    if (c && c->n_live == 0)
        free(c);
    else if (c)
        c->pool = NULL;
    free(p);
}

static void *carve(chunk *c, size_t need)
{
    char *link = (char *)c + c->used;
    *(chunk **)link = c;
    c->used += need;
    c->n_live++;
    return link + LINK;
}

void *mp_hpool_alloc(mp_hpool *p, size_t bytes, size_t *reserved)
{
    *reserved = 0;
    if (bytes > SIZE_MAX - HEAD - LINK - 2 * MP_HUGE_PAGE)
        return NULL;
    size_t need = (LINK + bytes + 15) & ~(size_t)15;
    if (HEAD + need > MP_HUGE_CHUNK / 2) { /* a chunk of its own */
        size_t cap = (HEAD + need + MP_HUGE_PAGE - 1) & ~(MP_HUGE_PAGE - 1);
        chunk *c = chunk_new(NULL, cap);
        if (!c)
            return NULL;
        *reserved = cap;
        return carve(c, need);
    }
    chunk *c = p->current;
    if (!c || c->used + need > c->cap) { /* (an empty current chunk is never full) */
        chunk *n = chunk_new(p, MP_HUGE_CHUNK);
        if (!n)
            return NULL;
        *reserved = MP_HUGE_CHUNK;
        if (c)
            c->pool = NULL; /* the full chunk goes when its last block does */
        p->current = c = n;
    }
    return carve(c, need);
}

void mp_hpool_free(void *block, size_t *released)
{
    *released = 0;
    if (!block)
        return;
    chunk *c = *(chunk **)((char *)block - LINK);
    if (--c->n_live > 0)
        return;
    if (c->pool) { /* the current chunk: carve it again from the start */
        c->used = HEAD;
        return;
    }
    *released = c->cap;
    free(c);
}
