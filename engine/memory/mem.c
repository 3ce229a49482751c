/* Implementation of the engine's single allocation interface (see mem.h).
 * Each block carries a small header (requested size, kind, offset to the raw pointer)
 * so that frees are attributed without a lookup table. */
#include "mem.h"

#include <stdlib.h>
#include <string.h>
#include <xnnpack.h>

struct mp_mem {
    mp_mem_stats st;
    size_t max_alloc; /* 0 = unlimited */
};

typedef struct blk_hdr {
    mp_mem *mem; /* the accountant charged at allocation, credited at free */
    size_t bytes;
    uint32_t kind;
    uint32_t shift; /* bytes between the raw malloc pointer and the user pointer */
    uint32_t magic;
    uint32_t align;
} blk_hdr;

#define BLK_MAGIC 0x6d706d31u

static blk_hdr *hdr_of(const void *p)
{
    return (blk_hdr *)((char *)p - sizeof(blk_hdr));
}

mp_mem *mp_mem_create(void)
{
    return calloc(1, sizeof(mp_mem)); /* the accountant itself is not accounted */
}

void mp_mem_set_max_alloc(mp_mem *m, size_t bytes)
{
    m->max_alloc = bytes;
}

void mp_mem_destroy(mp_mem *m)
{
    free(m);
}

static void account_alloc(mp_mem *m, size_t bytes, mp_mem_kind kind)
{
    if (!m)
        return;
    mp_mem_stats *s = &m->st;
    s->live[kind] += bytes;
    if (s->live[kind] > s->peak[kind])
        s->peak[kind] = s->live[kind];
    s->live_total += bytes;
    if (s->live_total > s->peak_total)
        s->peak_total = s->live_total;
    s->n_alloc++;
    s->bytes_alloc += bytes;
}

static void account_free(mp_mem *m, size_t bytes, mp_mem_kind kind)
{
    if (!m)
        return;
    mp_mem_stats *s = &m->st;
    s->live[kind] -= bytes;
    s->live_total -= bytes;
    s->n_free++;
    s->bytes_free += bytes;
}

void *mp_mem_alloc(mp_mem *m, size_t bytes, size_t align, mp_mem_kind kind, mp_owner owner)
{
    (void)owner;
    if (align == 0)
        align = MP_MEM_ALIGN;
    if (align < sizeof(blk_hdr))
        align = sizeof(blk_hdr);
    if ((align & (align - 1)) != 0 || kind >= MP_MEM_KIND_COUNT)
        return NULL;
    if (bytes > SIZE_MAX - align - sizeof(blk_hdr) || (m && m->max_alloc && bytes > m->max_alloc))
        return NULL;
    char *raw = malloc(bytes + align + sizeof(blk_hdr));
    if (!raw)
        return NULL;
    uintptr_t u = ((uintptr_t)raw + sizeof(blk_hdr) + align - 1) & ~(uintptr_t)(align - 1);
    char *p = (char *)u;
    blk_hdr *h = hdr_of(p);
    h->mem = m;
    h->bytes = bytes;
    h->kind = (uint32_t)kind;
    h->shift = (uint32_t)(p - raw);
    h->magic = BLK_MAGIC;
    h->align = (uint32_t)align;
    account_alloc(m, bytes, kind);
    return p;
}

void *mp_mem_calloc(mp_mem *m, size_t bytes, size_t align, mp_mem_kind kind, mp_owner owner)
{
    void *p = mp_mem_alloc(m, bytes, align, kind, owner);
    if (p)
        memset(p, 0, bytes);
    return p;
}

void *mp_mem_realloc(mp_mem *m, void *ptr, size_t bytes, mp_mem_kind kind, mp_owner owner)
{
    if (!ptr)
        return mp_mem_alloc(m, bytes, 0, kind, owner);
    blk_hdr *h = hdr_of(ptr);
    void *q = mp_mem_alloc(m, bytes, h->align, (mp_mem_kind)h->kind, owner);
    if (!q)
        return NULL;
    memcpy(q, ptr, h->bytes < bytes ? h->bytes : bytes);
    mp_mem_free(m, ptr);
    return q;
}

void mp_mem_free(mp_mem *m, void *ptr)
{
    if (!ptr)
        return;
    blk_hdr *h = hdr_of(ptr);
    if (h->magic != BLK_MAGIC)
        abort(); /* not ours: a bug, never input-dependent */
    h->magic = 0;
    (void)m;
    account_free(h->mem, h->bytes, (mp_mem_kind)h->kind);
    free((char *)ptr - h->shift);
}

size_t mp_mem_size(const void *ptr)
{
    return ptr ? hdr_of(ptr)->bytes : 0;
}

void mp_mem_note_mapped(mp_mem *m, uint64_t bytes)
{
    if (m) {
        m->st.live[MP_MEM_CONST] = bytes;
        m->st.peak[MP_MEM_CONST] = bytes;
    }
}

const mp_mem_stats *mp_mem_get_stats(const mp_mem *m)
{
    return &m->st;
}

const char *mp_mem_kind_name(mp_mem_kind kind)
{
    static const char *names[MP_MEM_KIND_COUNT] = {"const", "static", "dynamic", "scratch",
                                                   "kernel", "io", "engine"};
    return kind < MP_MEM_KIND_COUNT ? names[kind] : "?";
}

/* ---- XNNPACK hook ------------------------------------------------------------------ */

static mp_mem *g_current;
static int32_t g_current_op = -1;

void mp_mem_set_current(mp_mem *m, int32_t op)
{
    g_current = m;
    g_current_op = op;
}

static void *xa_alloc(void *ctx, size_t size)
{
    (void)ctx;
    return mp_mem_alloc(g_current, size, 0, MP_MEM_KERNEL, MP_OWNER_OP(g_current_op));
}

static void *xa_realloc(void *ctx, void *p, size_t size)
{
    (void)ctx;
    return mp_mem_realloc(g_current, p, size, MP_MEM_KERNEL, MP_OWNER_OP(g_current_op));
}

static void xa_free(void *ctx, void *p)
{
    (void)ctx;
    mp_mem_free(g_current, p);
}

static void *xa_aligned(void *ctx, size_t align, size_t size)
{
    (void)ctx;
    return mp_mem_alloc(g_current, size, align, MP_MEM_KERNEL, MP_OWNER_OP(g_current_op));
}

int mp_mem_xnn_init(void)
{
    static int done;
    static const struct xnn_allocator alloc = {NULL, xa_alloc, xa_realloc, xa_free, xa_aligned,
                                               xa_free};
    if (done)
        return 0;
    if (xnn_initialize(&alloc) != xnn_status_success)
        return -1;
    done = 1;
    return 0;
}
