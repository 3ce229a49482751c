/* Process-wide heap probe: a malloc interposer compiled into the memprof executable, so that
 * `memprof run` can compare the engine allocator's peak (engine/memory/mem.c) with the heap
 * peak of the whole process and report the difference as "unaccounted".
 *
 * How: the executable defines malloc, free, calloc, realloc, reallocarray, posix_memalign,
 * aligned_alloc, memalign, valloc, pvalloc, malloc_usable_size (and C23's free_sized,
 * free_aligned_sized). ELF symbol interposition makes every caller in the process, libc
 * included (strdup, fopen, pthread's TLS, ...), reach them; they forward to glibc's
 * exported __libc_malloc / __libc_calloc / __libc_realloc / __libc_memalign / __libc_free,
 * which needs no dlsym and so cannot recurse during start-up.
 *
 * Design choice: REQUESTED sizes. Each block carries a 16-byte header just before the user
 * pointer: the requested size and a tag (magic << 32 | offset from the raw glibc pointer).
 * mem.c counts requested bytes and reports its own header/alignment room separately
 * (slack_at_peak), so requested sizes compare like with like; malloc_usable_size would add
 * glibc's per-block rounding (up to ~24 bytes per block, more for aligned ones) and show it
 * as "unaccounted". The cost of a header is that EVERY entry point must be wrapped
 * consistently - glibc's own memalign or malloc_usable_size would misread our blocks -
 * hence the full list above. The header is 16 bytes so plain blocks keep glibc's 16-byte
 * alignment; for alignments above 16 the raw block is __libc_memalign(A, A + n) and the user
 * pointer is raw + A. A pointer without our tag (never expected: e.g. from code calling
 * __libc_malloc itself) is forwarded to glibc uncounted instead of being misread.
 *
 * Counters are relaxed atomics: one fetch_add per allocation or free, plus a compare-and-swap
 * only when the peak rises. No locks, no thread-local state. Sanitizer builds compile no
 * interposer (the sanitizer owns malloc); the API then reports "not available" and 0. */
#include "cli/heap_probe.h"

#if MP_HEAP_PROBE_ENABLED

#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* glibc's implementations, exported under these names by libc.so.6 (GLIBC_2.2.5). */
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t nmemb, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);
extern void __libc_free(void *p);

/* C23 additions (glibc >= 2.43 declares them); wrapped so they never see our blocks. */
void free_sized(void *p, size_t size);
void free_aligned_sized(void *p, size_t align, size_t size);

typedef struct hp_hdr {
    uint64_t size; /* bytes requested by the caller */
    uint64_t tag;  /* HP_MAGIC << 32 | (user pointer - raw pointer) */
} hp_hdr;

#define HP_HDR ((size_t)sizeof(hp_hdr))
#define HP_MAGIC 0x6d706870u /* "mphp"; never the high half of a glibc chunk-size word */
#define HP_MAX_ALIGN ((size_t)1 << 31) /* the offset must fit the tag's low 32 bits */
/* malloc(HP_PROBE_SIZE) marks the interposer as live (see mp_heap_probe_available). */
#define HP_PROBE_SIZE ((size_t)28019)

_Static_assert(sizeof(hp_hdr) == 16, "header keeps 16-byte alignment");
_Static_assert(alignof(max_align_t) <= 16, "malloc alignment fits the header");

static _Atomic uint64_t g_live, g_peak;
static atomic_bool g_probe_seen;

static inline void count_alloc(uint64_t n)
{
    uint64_t now = atomic_fetch_add_explicit(&g_live, n, memory_order_relaxed) + n;
    uint64_t pk = atomic_load_explicit(&g_peak, memory_order_relaxed);
    while (now > pk && !atomic_compare_exchange_weak_explicit(&g_peak, &pk, now,
                                                              memory_order_relaxed,
                                                              memory_order_relaxed)) {
    }
}

static inline void count_free(uint64_t n)
{
    atomic_fetch_sub_explicit(&g_live, n, memory_order_relaxed);
}

static inline hp_hdr *hdr_of(void *user)
{
    return (hp_hdr *)((char *)user - HP_HDR);
}

static inline int is_ours(const hp_hdr *h)
{
    return (uint32_t)(h->tag >> 32) == HP_MAGIC;
}

/* Write the header of a fresh raw block and count it; raw may be NULL (failure). */
static inline void *finish(char *raw, size_t offset, size_t n)
{
    if (!raw)
        return NULL;
    char *user = raw + offset;
    hp_hdr *h = hdr_of(user);
    h->size = n;
    h->tag = (uint64_t)HP_MAGIC << 32 | (uint64_t)offset;
    count_alloc(n);
    return user;
}

static size_t page_size(void)
{
    long ps = sysconf(_SC_PAGESIZE);
    return ps > 0 ? (size_t)ps : 4096;
}

/* Block of n bytes aligned to align (a power of two). */
static void *alloc_aligned(size_t align, size_t n)
{
    if (align <= HP_HDR)
        return malloc(n); /* raw + 16 is already 16-aligned */
    if (align > HP_MAX_ALIGN || n > SIZE_MAX - align) {
        errno = ENOMEM;
        return NULL;
    }
    return finish(__libc_memalign(align, align + n), align, n);
}

void *malloc(size_t n)
{
    if (n > SIZE_MAX - HP_HDR) {
        errno = ENOMEM;
        return NULL;
    }
    if (n == HP_PROBE_SIZE)
        atomic_store_explicit(&g_probe_seen, true, memory_order_relaxed);
    return finish(__libc_malloc(HP_HDR + n), HP_HDR, n);
}

void *calloc(size_t nmemb, size_t size)
{
    size_t n;
    if (__builtin_mul_overflow(nmemb, size, &n) || n > SIZE_MAX - HP_HDR) {
        errno = ENOMEM;
        return NULL;
    }
    return finish(__libc_calloc(1, HP_HDR + n), HP_HDR, n);
}

void free(void *p)
{
    if (!p)
        return;
    hp_hdr *h = hdr_of(p);
    if (!is_ours(h)) {
        __libc_free(p);
        return;
    }
    size_t offset = (size_t)(uint32_t)h->tag;
    count_free(h->size);
    h->tag = 0;
    __libc_free((char *)p - offset);
}

void free_sized(void *p, size_t size)
{
    (void)size;
    free(p);
}

void free_aligned_sized(void *p, size_t align, size_t size)
{
    (void)align;
    (void)size;
    free(p);
}

void *realloc(void *p, size_t n)
{
    if (!p)
        return malloc(n);
    if (n == 0) { /* glibc's behaviour: free and return NULL */
        free(p);
        return NULL;
    }
    hp_hdr *h = hdr_of(p);
    if (!is_ours(h))
        return __libc_realloc(p, n);
    size_t old = h->size;
    if ((size_t)(uint32_t)h->tag != HP_HDR) {
        /* over-aligned block: its raw offset cannot move with glibc's realloc; C only asks
         * realloc for the default alignment, as glibc itself gives */
        void *q = malloc(n);
        if (!q)
            return NULL;
        memcpy(q, p, old < n ? old : n);
        free(p);
        return q;
    }
    if (n > SIZE_MAX - HP_HDR) {
        errno = ENOMEM;
        return NULL;
    }
    char *raw = __libc_realloc((char *)p - HP_HDR, HP_HDR + n);
    if (!raw)
        return NULL; /* the old block is untouched and still counted */
    char *user = raw + HP_HDR;
    hdr_of(user)->size = n; /* the tag moved with the data */
    if (n >= old)
        count_alloc(n - old);
    else
        count_free(old - n);
    return user;
}

void *reallocarray(void *p, size_t nmemb, size_t size)
{
    size_t n;
    if (__builtin_mul_overflow(nmemb, size, &n)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(p, n);
}

void *memalign(size_t align, size_t n)
{
    /* glibc rounds a non-power-of-two alignment up to the next power of two */
    if (align > SIZE_MAX / 2 + 1) {
        errno = EINVAL;
        return NULL;
    }
    size_t a = 1;
    while (a < align)
        a <<= 1;
    return alloc_aligned(a, n);
}

void *aligned_alloc(size_t align, size_t n)
{
    /* C11: an alignment the implementation does not support fails (as glibc >= 2.38) */
    if (align == 0 || (align & (align - 1)) != 0) {
        errno = EINVAL;
        return NULL;
    }
    return alloc_aligned(align, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
    if (align % sizeof(void *) != 0 || (align & (align - 1)) != 0 || align == 0)
        return EINVAL;
    int saved = errno; /* posix_memalign reports through its result, not errno */
    void *p = alloc_aligned(align, n);
    errno = saved;
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

void *valloc(size_t n)
{
    return alloc_aligned(page_size(), n);
}

void *pvalloc(size_t n)
{
    size_t ps = page_size();
    if (n > SIZE_MAX - ps) {
        errno = ENOMEM;
        return NULL;
    }
    size_t rounded = n == 0 ? ps : (n + ps - 1) & ~(ps - 1);
    return alloc_aligned(ps, rounded); /* the caller may use, so we count, whole pages */
}

size_t malloc_usable_size(void *p)
{
    if (!p)
        return 0;
    hp_hdr *h = hdr_of(p);
    if (is_ours(h))
        return (size_t)h->size; /* exactly what was counted: using more would be unseen */
    /* a foreign block (not expected): ask glibc's own function */
    static size_t (*_Atomic libc_usable)(void *);
    size_t (*fn)(void *) = atomic_load_explicit(&libc_usable, memory_order_acquire);
    if (!fn) {
        fn = (size_t(*)(void *))dlsym(RTLD_NEXT, "malloc_usable_size");
        if (!fn)
            return 0;
        atomic_store_explicit(&libc_usable, fn, memory_order_release);
    }
    return fn(p);
}

bool mp_heap_probe_available(void)
{
    /* called through volatile pointers so the compiler cannot elide the pair */
    static void *(*volatile probe_malloc)(size_t) = malloc;
    static void (*volatile probe_free)(void *) = free;
    if (atomic_load_explicit(&g_probe_seen, memory_order_relaxed))
        return true;
    void *p = probe_malloc(HP_PROBE_SIZE);
    probe_free(p);
    return atomic_load_explicit(&g_probe_seen, memory_order_relaxed);
}

uint64_t mp_heap_probe_live(void)
{
    return atomic_load_explicit(&g_live, memory_order_relaxed);
}

void mp_heap_probe_reset_peak(void)
{
    atomic_store_explicit(&g_peak, atomic_load_explicit(&g_live, memory_order_relaxed),
                          memory_order_relaxed);
}

uint64_t mp_heap_probe_peak(void)
{
    /* a reset racing with an allocation can leave peak below live until the next one */
    uint64_t pk = atomic_load_explicit(&g_peak, memory_order_relaxed);
    uint64_t live = atomic_load_explicit(&g_live, memory_order_relaxed);
    return pk > live ? pk : live;
}

#else /* sanitizer build: the sanitizer's malloc is left alone */

bool mp_heap_probe_available(void)
{
    return false;
}

uint64_t mp_heap_probe_live(void)
{
    return 0;
}

void mp_heap_probe_reset_peak(void)
{
}

uint64_t mp_heap_probe_peak(void)
{
    return 0;
}

#endif
