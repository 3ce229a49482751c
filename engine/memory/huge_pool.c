/* Transparent-huge-page pool of long-lived blocks (see huge_pool.h). */
#include "engine/memory/huge_pool.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

/* At the start of every chunk; every block is preceded by a pointer to its chunk. */
typedef struct chunk {
    mp_hpool *pool;            /* NULL once the pool is gone or no longer carves it */
    struct chunk *prev, *next; /* the pool's own chunks (own = 1) */
    size_t cap, used;
    size_t n_live;
    int own;                   /* holds one block */
} chunk;

struct mp_hpool {
    chunk *current;   /* the shared chunk being carved */
    chunk own;        /* sentinel of the list of live own chunks */
    chunk *spare;     /* an own chunk whose block is gone, kept for the next one */
};

#define HEAD 64 /* the chunk header, rounded to a cache line */
#define LINK 16 /* the chunk pointer before each block, keeping 16-byte alignment */

_Static_assert(sizeof(chunk) <= HEAD, "the chunk header fits its room");

static chunk *chunk_new(mp_hpool *p, size_t cap, int own)
{
    chunk *c = aligned_alloc(MP_HUGE_PAGE, cap);
    if (!c)
        return NULL;
    (void)madvise(c, cap, MADV_HUGEPAGE); /* a hint: THP off leaves plain pages */
    c->pool = p;
    c->prev = c->next = NULL;
    c->cap = cap;
    c->used = HEAD;
    c->n_live = 0;
    c->own = own;
    return c;
}

mp_hpool *mp_hpool_create(void)
{
    mp_hpool *p = calloc(1, sizeof(mp_hpool));
    if (p)
        p->own.prev = p->own.next = &p->own;
    return p;
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
    for (chunk *o = p->own.next; o != &p->own; o = o->next)
        o->pool = NULL; /* given back with their blocks */
    free(p->spare);
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

/* A chunk of its own for a block that needs `cap`: the spare when it is large enough
 * (its pages are already there), else a new one, the spare going back first (never
 * holding two). */
static chunk *own_chunk(mp_hpool *p, size_t cap, int64_t *held)
{
    chunk *c = p->spare;
    if (c && c->cap >= cap) {
        p->spare = NULL;
    } else {
        if (c) {
            *held -= (int64_t)c->cap;
            free(c);
            p->spare = NULL;
        }
        c = chunk_new(p, cap, 1);
        if (!c)
            return NULL;
        *held += (int64_t)cap;
    }
    c->used = HEAD;
    c->next = p->own.next;
    c->prev = &p->own;
    p->own.next->prev = c;
    p->own.next = c;
    return c;
}

void *mp_hpool_alloc(mp_hpool *p, size_t bytes, int64_t *held)
{
    *held = 0;
    if (bytes > SIZE_MAX / 4)
        return NULL;
    size_t need = (LINK + bytes + 15) & ~(size_t)15;
    if (HEAD + need > MP_HUGE_CHUNK / 2) {
        chunk *c = own_chunk(p, (HEAD + need + MP_HUGE_PAGE - 1) & ~(MP_HUGE_PAGE - 1), held);
        return c ? carve(c, need) : NULL;
    }
    chunk *c = p->current;
    if (!c || c->used + need > c->cap) { /* (an empty current chunk is never full) */
        chunk *n = chunk_new(p, MP_HUGE_CHUNK, 0);
        if (!n)
            return NULL;
        *held = (int64_t)MP_HUGE_CHUNK;
        if (c)
            c->pool = NULL; /* the full chunk goes when its last block does */
        p->current = c = n;
    }
    return carve(c, need);
}

void mp_hpool_free(void *block, int64_t *held)
{
    *held = 0;
    if (!block)
        return;
    chunk *c = *(chunk **)((char *)block - LINK);
    if (--c->n_live > 0)
        return;
    mp_hpool *p = c->pool;
    if (p && !c->own) { /* the current chunk: carve it again from the start */
        c->used = HEAD;
        return;
    }
    if (p) { /* an own chunk: the larger of it and the spare stays as the spare */
        c->prev->next = c->next;
        c->next->prev = c->prev;
        c->prev = c->next = NULL;
        chunk *drop = c;
        if (!p->spare || p->spare->cap < c->cap) {
            drop = p->spare;
            p->spare = c;
        }
        if (!drop)
            return;
        c = drop;
    }
    *held = -(int64_t)c->cap;
    free(c);
}
