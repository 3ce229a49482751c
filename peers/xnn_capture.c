/* Capture of XNNPACK's allocations for a peer runtime (see xnn_capture.h): header-tagged
 * blocks on a live list, totals, peak and per-phase counts. */
#include "peers/xnn_capture.h"

#include <stdlib.h>
#include <string.h>

#include "engine/memory/mem.h"

#define MP_XC_MAGIC 0x78637031u
#define MP_XC_PLAIN_ALIGN 16 /* what malloc guarantees; XNNPACK's plain blocks may rely on it */

static mp_xc_block *hdr(void *p)
{
    return (mp_xc_block *)((char *)p - sizeof(mp_xc_block));
}

static void link_live(mp_xc_capture *c, mp_xc_block *b)
{
    b->prev = c->live.prev;
    b->next = &c->live;
    c->live.prev->next = b;
    c->live.prev = b;
}

static void unlink_live(mp_xc_block *b)
{
    b->prev->next = b->next;
    b->next->prev = b->prev;
    b->prev = b->next = NULL;
}

static void *block_new(mp_xc_capture *c, size_t bytes, size_t align, bool aligned)
{
    if (align < MP_XC_PLAIN_ALIGN)
        align = MP_XC_PLAIN_ALIGN;
    if ((align & (align - 1)) != 0 || bytes > SIZE_MAX - align - sizeof(mp_xc_block)) {
        c->failures++;
        return NULL;
    }
    size_t need = bytes + align + sizeof(mp_xc_block);
    char *raw = mp_mem_fail_now(bytes) ? NULL : malloc(need);
    bool reserved = false;
    if (!raw && !aligned && c->reserve && need <= c->reserve_cap - c->reserve_used) {
        raw = c->reserve + c->reserve_used;
        c->reserve_used += (need + 15) & ~(size_t)15;
        c->reserve_live++;
        reserved = true;
    }
    if (!raw) {
        c->failures++;
        return NULL;
    }
    uintptr_t u = ((uintptr_t)raw + sizeof(mp_xc_block) + align - 1) & ~(uintptr_t)(align - 1);
    char *p = (char *)u;
    mp_xc_block *b = hdr(p);
    b->bytes = bytes;
    b->seq = ++c->seq;
    b->magic = MP_XC_MAGIC;
    b->shift = (uint32_t)(p - raw);
    b->align = (uint32_t)align;
    b->phase = (uint8_t)c->phase;
    b->aligned = aligned;
    b->reserved = reserved;
    link_live(c, b);
    c->n_live++;
    c->live_bytes += bytes;
    if (c->live_bytes > c->peak_bytes)
        c->peak_bytes = c->live_bytes;
    c->bytes_alloc += bytes;
    c->phase_allocs[c->phase]++;
    c->phase_bytes[c->phase] += bytes;
    return p;
}

static void block_free(mp_xc_capture *c, void *p)
{
    mp_xc_block *b = hdr(p);
    if (b->magic != MP_XC_MAGIC)
        abort(); /* a block the capture did not make: a window was left open or closed early */
    b->magic = 0;
    unlink_live(b);
    c->n_live--;
    c->live_bytes -= b->bytes;
    c->bytes_free += b->bytes;
    if (b->reserved)
        c->reserve_live--; /* its room is not reused: the reserve goes back whole */
    else
        free((char *)p - b->shift);
}

bool mp_xc_reserve(mp_xc_capture *c, size_t bytes)
{
    mp_xc_unreserve(c);
    if (c->reserve)
        return true; /* the old one still holds live blocks: it stays */
    c->reserve = mp_mem_fail_now(bytes) ? NULL : malloc(bytes);
    c->reserve_cap = c->reserve ? bytes : 0;
    c->reserve_used = 0;
    return c->reserve != NULL;
}

void mp_xc_unreserve(mp_xc_capture *c)
{
    if (c->reserve_live > 0)
        return;
    free(c->reserve);
    c->reserve = NULL;
    c->reserve_cap = c->reserve_used = 0;
}

static void *cb_allocate(void *ctx, size_t size)
{
    mp_xc_capture *c = ctx;
    void *p = block_new(c, size, 0, false);
    if (p)
        c->n_alloc++;
    return p;
}

static void *cb_aligned(void *ctx, size_t align, size_t size)
{
    mp_xc_capture *c = ctx;
    void *p = block_new(c, size, align, true);
    if (p)
        c->n_alloc++;
    return p;
}

static void cb_free(void *ctx, void *p)
{
    mp_xc_capture *c = ctx;
    if (!p)
        return;
    block_free(c, p);
    c->n_free++;
}

static void *cb_reallocate(void *ctx, void *p, size_t size)
{
    mp_xc_capture *c = ctx;
    if (!p)
        return cb_allocate(ctx, size);
    mp_xc_block *old = hdr(p);
    if (old->magic != MP_XC_MAGIC)
        abort();
    void *q = block_new(c, size, old->align, old->aligned);
    if (!q)
        return NULL;
    memcpy(q, p, old->bytes < size ? old->bytes : size);
    block_free(c, p);
    c->n_realloc++;
    return q;
}

void *mp_xc_calloc(size_t n, size_t size)
{
    return mp_mem_fail_now(n * size) ? NULL : calloc(n, size);
}

void *mp_xc_realloc(void *p, size_t bytes)
{
    return mp_mem_fail_now(bytes) ? NULL : realloc(p, bytes);
}

void *mp_xc_aligned_zero(size_t align, size_t bytes)
{
    size_t n = (bytes + align - 1) / align * align;
    void *q = mp_mem_fail_now(n) ? NULL : aligned_alloc(align, n);
    if (q)
        memset(q, 0, n);
    return q;
}

void mp_xc_init(mp_xc_capture *c)
{
    memset(c, 0, sizeof *c);
    c->alloc.context = c;
    c->alloc.allocate = cb_allocate;
    c->alloc.reallocate = cb_reallocate;
    c->alloc.deallocate = cb_free;
    c->alloc.aligned_allocate = cb_aligned;
    c->alloc.aligned_deallocate = cb_free;
    c->live.prev = c->live.next = &c->live;
}

void mp_xc_begin(mp_xc_capture *c, mp_xc_phase phase)
{
    c->phase = phase;
    mp_mem_xnn_redirect(&c->alloc);
}

void mp_xc_end(void)
{
    mp_mem_xnn_redirect(NULL);
}

const mp_xc_block *mp_xc_first(const mp_xc_capture *c)
{
    return c->live.next == &c->live ? NULL : c->live.next;
}

const mp_xc_block *mp_xc_next(const mp_xc_capture *c, const mp_xc_block *b)
{
    return b->next == &c->live ? NULL : b->next;
}

size_t mp_xc_operator_size(bool *aligned)
{
    static bool measured, op_aligned;
    static size_t op_size;
    if (!measured) {
        measured = true;
        if (mp_mem_xnn_init() == 0) {
            mp_xc_capture c;
            mp_xc_init(&c);
            xnn_operator_t op = NULL;
            mp_xc_begin(&c, MP_XC_CREATE);
            enum xnn_status st = xnn_create_clamp_nc_f32(1, 1, 1, 0.0f, 1.0f, 0, &op);
            mp_xc_end();
            if (st == xnn_status_success && c.n_live == 1) {
                op_size = mp_xc_first(&c)->bytes;
                op_aligned = mp_xc_first(&c)->aligned;
            }
            mp_xc_begin(&c, MP_XC_DELETE);
            if (op)
                xnn_delete_operator(op);
            mp_xc_end();
        }
    }
    *aligned = op_aligned;
    return op_size;
}
