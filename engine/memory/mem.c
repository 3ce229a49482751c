/* Implementation of the engine's single allocation interface (see mem.h).
 * Each block carries a small header (requested size, kind, owner, block id, offset to the
 * raw pointer) so that frees are attributed and recorded without a lookup table. */
#include "engine/memory/mem.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xnnpack.h>

#include "trace/trace.h"
#include "engine/memory/huge_pool.h"

_Static_assert((int)MP_MEM_CONST == (int)MP_KIND_CONST &&
                   (int)MP_MEM_ENGINE == (int)MP_KIND_ENGINE &&
                   (int)MP_MEM_VARIABLE == (int)MP_KIND_VARIABLE &&
                   (int)MP_MEM_TRAIN_EXTRA == (int)MP_KIND_TRAIN_EXTRA &&
                   (int)MP_MEM_KIND_COUNT == (int)MP_KIND_COUNT,
               "mp_mem_kind and the trace's kinds share one numbering");

/* ---- allocation-failure injection (see mem.h) ---------------------------------------- */

static pthread_once_t g_fail_once = PTHREAD_ONCE_INIT;
static struct {
    mp_mem_fail set;
    bool active;  /* counting at all: a setting, or MP_FAIL_ALLOC=count */
    bool report;  /* MP_FAIL_ALLOC=count: print the counts at exit */
    atomic_uint_fast64_t count, bytes;
    atomic_bool tripped; /* max_bytes reached: every later allocation fails */
} g_fail;

static void fail_report(void)
{
    fprintf(stderr, "mp_fail_alloc: count %" PRIu64 " bytes %" PRIu64 "\n", mp_mem_fail_count(),
            mp_mem_fail_bytes());
}

static bool parse_u64(const char *s, uint64_t *v, const char **end)
{
    char *e;
    if (*s < '0' || *s > '9')
        return false;
    unsigned long long x = strtoull(s, &e, 10);
    *v = (uint64_t)x;
    *end = e;
    return x > 0;
}

static void fail_init(void)
{
    const char *n = getenv("MP_FAIL_ALLOC"), *b = getenv("MP_FAIL_ALLOC_BYTES"), *e = "";
    if (n && *n) {
        if (strcmp(n, "count") == 0) {
            g_fail.report = atexit(fail_report) == 0;
        } else if (parse_u64(n, &g_fail.set.nth, &e) && (*e == 0 || strcmp(e, "+") == 0)) {
            g_fail.set.and_later = *e == '+';
        } else {
            fprintf(stderr, "memprof: MP_FAIL_ALLOC='%s' ignored (N, N+ or count)\n", n);
            g_fail.set.nth = 0;
        }
    }
    if (b && *b && !(parse_u64(b, &g_fail.set.max_bytes, &e) && *e == 0)) {
        fprintf(stderr, "memprof: MP_FAIL_ALLOC_BYTES='%s' ignored (a byte count)\n", b);
        g_fail.set.max_bytes = 0;
    }
    g_fail.active = g_fail.report || g_fail.set.nth || g_fail.set.max_bytes;
}

void mp_mem_fail_set(const mp_mem_fail *f)
{
    pthread_once(&g_fail_once, fail_init); /* the environment, read now, is overridden */
    g_fail.set = f ? *f : (mp_mem_fail){0};
    g_fail.active = g_fail.report || g_fail.set.nth || g_fail.set.max_bytes;
    atomic_store(&g_fail.count, 0);
    atomic_store(&g_fail.bytes, 0);
    atomic_store(&g_fail.tripped, false);
}

uint64_t mp_mem_fail_count(void)
{
    return atomic_load(&g_fail.count);
}

uint64_t mp_mem_fail_bytes(void)
{
    return atomic_load(&g_fail.bytes);
}

bool mp_mem_fail_now(size_t bytes)
{
    pthread_once(&g_fail_once, fail_init);
    if (!g_fail.active)
        return false;
    uint64_t k = atomic_fetch_add(&g_fail.count, 1) + 1;
    const mp_mem_fail *f = &g_fail.set;
    if (f->nth && (k == f->nth || (f->and_later && k > f->nth)))
        return true;
    if (atomic_load(&g_fail.tripped))
        return true;
    uint64_t granted = atomic_fetch_add(&g_fail.bytes, bytes) + bytes;
    if (f->max_bytes && granted > f->max_bytes) {
        atomic_fetch_sub(&g_fail.bytes, bytes);
        atomic_store(&g_fail.tripped, true);
        return true;
    }
    return false;
}

/* ---- the allocator ------------------------------------------------------------------- */

struct mp_mem {
    mp_mem_stats st;
    size_t max_alloc; /* 0 = unlimited */
    mp_trace *trace;  /* NULL = not recording */
    uint64_t next_id;
    uint64_t model_id, model_tables_id, mapped_bytes, model_heap;
    uint64_t slack_live; /* bytes malloc holds beyond live blocks: headers, alignment room,
                          * the huge-page pool's uncarved chunk space */
    mp_hpool *hpool;     /* long-lived blocks on huge pages; NULL = plain malloc */
};

typedef struct blk_hdr {
    mp_mem *mem; /* the accountant charged at allocation, credited at free */
    size_t bytes;
    uint64_t id;
    int32_t tensor, op;
    uint16_t kind;
    uint16_t pooled; /* from the huge-page pool, not malloc */
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
    /* the accountant itself is not accounted (but failures are injected) */
    mp_mem *m = mp_mem_fail_now(sizeof(mp_mem)) ? NULL : calloc(1, sizeof(mp_mem));
    if (m && !mp_mem_fail_now(0))
        m->hpool = mp_hpool_create(); /* NULL: long-lived blocks from malloc */
    return m;
}

void mp_mem_set_huge_pages(mp_mem *m, bool on)
{
    if (on && !m->hpool)
        m->hpool = mp_hpool_create();
    else if (!on && m->hpool) {
        mp_hpool_destroy(m->hpool);
        m->hpool = NULL;
    }
}

void mp_mem_set_max_alloc(mp_mem *m, size_t bytes)
{
    m->max_alloc = bytes;
}

void mp_mem_destroy(mp_mem *m)
{
    if (m)
        mp_hpool_destroy(m->hpool);
    free(m);
}

void mp_mem_set_trace(mp_mem *m, mp_trace *tr)
{
    m->trace = tr;
}

mp_trace *mp_mem_trace(const mp_mem *m)
{
    return m ? m->trace : NULL;
}

static uint8_t log2_of(size_t align)
{
    uint8_t l = 0;
    while (((size_t)1 << l) < align)
        l++;
    return l;
}

static void record(mp_mem *m, int type, const blk_hdr *h, uint64_t prev_bytes)
{
    if (!m || !m->trace)
        return;
    mp_event e;
    memset(&e, 0, sizeof e);
    e.type = (uint8_t)type;
    e.bytes = h->bytes;
    e.id = h->id;
    e.aux = prev_bytes;
    e.tensor = h->tensor;
    e.op = h->op;
    e.op_last = -1;
    e.kind = (uint8_t)h->kind;
    e.align_log2 = log2_of(h->align);
    mp_trace_add(m->trace, e);
}

static void account_alloc(mp_mem *m, size_t bytes, mp_mem_kind kind, size_t slack)
{
    if (!m)
        return;
    mp_mem_stats *s = &m->st;
    s->live[kind] += bytes;
    if (s->live[kind] > s->peak[kind])
        s->peak[kind] = s->live[kind];
    s->live_total += bytes;
    m->slack_live += slack;
    if (s->live_total > s->peak_total) {
        s->peak_total = s->live_total;
        s->slack_at_peak = m->slack_live;
    }
    s->n_alloc++;
    s->bytes_alloc += bytes;
}

static void account_free(mp_mem *m, size_t bytes, mp_mem_kind kind, size_t slack)
{
    if (!m)
        return;
    mp_mem_stats *s = &m->st;
    s->live[kind] -= bytes;
    s->live_total -= bytes;
    m->slack_live -= slack;
    s->n_free++;
    s->bytes_free += bytes;
}

/* Give a block's memory back (its header read already); returns the bytes malloc stops
 * holding beyond the block's own (modulo 2^64, as raw_alloc's slack). */
static size_t raw_release(blk_hdr *h, void *ptr)
{
    char *raw = (char *)ptr - h->shift;
    size_t bytes = h->bytes;
    h->magic = 0;
    if (!h->pooled) {
        size_t slack = (size_t)h->align + sizeof(blk_hdr);
        free(raw);
        return slack;
    }
    int64_t held = 0;
    mp_hpool_free(raw, &held);
    return (size_t)-held - bytes;
}

/* Allocate and fill in a block without accounting or recording; from the huge-page pool
 * when `pool` (*slack: the bytes malloc newly holds beyond the block's own, which for a
 * pooled block is the chunk space it took, less its bytes: modulo 2^64). */
static char *raw_alloc(mp_mem *m, size_t bytes, size_t align, mp_mem_kind kind, mp_owner owner,
                       bool pool, size_t *slack)
{
    if (align == 0)
        align = MP_MEM_ALIGN;
    if (align < sizeof(blk_hdr))
        align = sizeof(blk_hdr);
    if ((align & (align - 1)) != 0 || kind >= MP_MEM_KIND_COUNT)
        return NULL;
    if (bytes > SIZE_MAX - align - sizeof(blk_hdr) || (m && m->max_alloc && bytes > m->max_alloc && kind != MP_MEM_STATIC))
        return NULL;
    if (mp_mem_fail_now(bytes))
        return NULL;
    int64_t held = 0;
    pool = pool && m && m->hpool;
    char *raw = pool ? mp_hpool_alloc(m->hpool, bytes + align + sizeof(blk_hdr), &held)
                     : malloc(bytes + align + sizeof(blk_hdr));
    if (!raw) {
        if (m && held) /* the pool gave its spare back before the system refused a chunk */
            m->slack_live += (size_t)held;
        return NULL;
    }
    *slack = pool ? (size_t)held - bytes : align + sizeof(blk_hdr);
    uintptr_t u = ((uintptr_t)raw + sizeof(blk_hdr) + align - 1) & ~(uintptr_t)(align - 1);
    char *p = (char *)u;
    blk_hdr *h = hdr_of(p);
    h->mem = m;
    h->bytes = bytes;
    h->kind = (uint16_t)kind;
    h->pooled = pool;
    h->shift = (uint32_t)(p - raw);
    h->magic = BLK_MAGIC;
    h->align = (uint32_t)align;
    h->tensor = owner.tensor;
    h->op = owner.op;
    h->id = 0;
    return p;
}

static void *alloc_block(mp_mem *m, size_t bytes, size_t align, mp_mem_kind kind,
                         mp_owner owner, bool pool)
{
    size_t slack = 0;
    char *p = raw_alloc(m, bytes, align, kind, owner, pool, &slack);
    if (!p)
        return NULL;
    blk_hdr *h = hdr_of(p);
    h->id = m ? ++m->next_id : 0;
    account_alloc(m, bytes, kind, slack);
    record(m, MP_EV_ALLOC, h, 0);
    return p;
}

void *mp_mem_alloc(mp_mem *m, size_t bytes, size_t align, mp_mem_kind kind, mp_owner owner)
{
    return alloc_block(m, bytes, align, kind, owner, false);
}

void *mp_mem_alloc_long(mp_mem *m, size_t bytes, size_t align, mp_mem_kind kind, mp_owner owner)
{
    return alloc_block(m, bytes, align, kind, owner, bytes >= MP_MEM_HUGE_MIN);
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
    if (h->magic != BLK_MAGIC)
        abort();
    mp_mem *acct = h->mem;
    size_t slack = 0; /* a block that changes size leaves the pool: it is not long-lived */
    char *q = raw_alloc(acct, bytes, h->align, (mp_mem_kind)h->kind,
                        (mp_owner){h->tensor, h->op}, false, &slack);
    if (!q)
        return NULL;
    blk_hdr *g = hdr_of(q);
    g->id = h->id; /* the block keeps its id */
    size_t old = h->bytes;
    memcpy(q, ptr, old < bytes ? old : bytes);
    /* one realloc: the old block's bytes leave, the new ones arrive */
    account_alloc(acct, bytes, (mp_mem_kind)g->kind, slack);
    mp_mem_kind old_kind = (mp_mem_kind)h->kind; /* read before the old block goes */
    account_free(acct, old, old_kind, raw_release(h, ptr));
    if (acct) {
        acct->st.n_alloc--; /* counted as one realloc, not an alloc and a free */
        acct->st.n_free--;
        acct->st.n_realloc++;
    }
    record(acct, MP_EV_REALLOC, g, old);
    return q;
}

void mp_mem_free(mp_mem *m, void *ptr)
{
    if (!ptr)
        return;
    blk_hdr *h = hdr_of(ptr);
    if (h->magic != BLK_MAGIC)
        abort(); /* not ours: a bug, never input-dependent */
    (void)m;
    mp_mem *acct = h->mem;
    size_t bytes = h->bytes;
    mp_mem_kind kind = (mp_mem_kind)h->kind;
    record(acct, MP_EV_FREE, h, 0);
    account_free(acct, bytes, kind, raw_release(h, ptr));
}

size_t mp_mem_size(const void *ptr)
{
    return ptr ? hdr_of(ptr)->bytes : 0;
}

uint64_t mp_mem_block_id(const void *ptr)
{
    return ptr ? hdr_of(ptr)->id : 0;
}

/* A block that exists outside the allocator: accounted and recorded like one. */
static void note_block(mp_mem *m, int type, uint64_t id, uint64_t bytes, mp_mem_kind kind)
{
    blk_hdr h = {.bytes = bytes, .id = id, .tensor = -1, .op = -1, .kind = kind, .align = 1};
    if (type == MP_EV_ALLOC)
        account_alloc(m, bytes, kind, 0);
    else
        account_free(m, bytes, kind, 0);
    record(m, type, &h, 0);
}

void mp_mem_note_model(mp_mem *m, uint64_t mapped_bytes, uint64_t heap_bytes)
{
    if (!m || m->model_id)
        return;
    m->model_id = ++m->next_id;
    m->model_tables_id = ++m->next_id;
    m->mapped_bytes = mapped_bytes;
    m->model_heap = heap_bytes;
    note_block(m, MP_EV_ALLOC, m->model_id, mapped_bytes, MP_MEM_CONST);
    note_block(m, MP_EV_ALLOC, m->model_tables_id, heap_bytes, MP_MEM_ENGINE);
}

void mp_mem_note_model_freed(mp_mem *m)
{
    if (!m || !m->model_id)
        return;
    note_block(m, MP_EV_FREE, m->model_tables_id, m->model_heap, MP_MEM_ENGINE);
    note_block(m, MP_EV_FREE, m->model_id, m->mapped_bytes, MP_MEM_CONST);
    m->model_id = m->model_tables_id = 0;
}

const mp_mem_stats *mp_mem_get_stats(const mp_mem *m)
{
    return &m->st;
}

const char *mp_mem_kind_name(mp_mem_kind kind)
{
    return mp_kind_name((int)kind);
}

/* ---- XNNPACK hook ------------------------------------------------------------------ */

static mp_mem *g_current;
static int32_t g_current_op = -1;
static const struct xnn_allocator *g_redirect; /* capture hook for peers/ (mem.h) */

void mp_mem_xnn_redirect(const struct xnn_allocator *to)
{
    g_redirect = to;
}

void mp_mem_set_current(mp_mem *m, int32_t op)
{
    g_current = m;
    g_current_op = op;
}

static void *xa_alloc(void *ctx, size_t size)
{
    (void)ctx;
    if (g_redirect)
        return g_redirect->allocate(g_redirect->context, size);
    return mp_mem_alloc(g_current, size, 0, MP_MEM_KERNEL, MP_OWNER_OP(g_current_op));
}

static void *xa_realloc(void *ctx, void *p, size_t size)
{
    (void)ctx;
    if (g_redirect)
        return g_redirect->reallocate(g_redirect->context, p, size);
    return mp_mem_realloc(g_current, p, size, MP_MEM_KERNEL, MP_OWNER_OP(g_current_op));
}

static void xa_free(void *ctx, void *p)
{
    (void)ctx;
    if (g_redirect) {
        g_redirect->deallocate(g_redirect->context, p);
        return;
    }
    mp_mem_free(g_current, p);
}

static void *xa_aligned(void *ctx, size_t align, size_t size)
{
    (void)ctx;
    if (g_redirect)
        return g_redirect->aligned_allocate(g_redirect->context, align, size);
    /* XNNPACK's SIMD memory: packed weights and operators, alive while the session is */
    return mp_mem_alloc_long(g_current, size, align, MP_MEM_KERNEL, MP_OWNER_OP(g_current_op));
}

int mp_mem_xnn_init(void)
{
    static int done;
    static const struct xnn_allocator alloc = {NULL, xa_alloc, xa_realloc, xa_free, xa_aligned,
                                               xa_free};
    if (done)
        return 0;
    enum xnn_status xs = xnn_initialize(&alloc);
    done = xs == xnn_status_success;
    return (int)xs;
}
