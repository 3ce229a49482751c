/* Tests of the process heap probe (cli/heap_probe.c, linked into this executable, so its
 * malloc interposer serves this whole process): every allocation entry point is counted by
 * its requested size, frees restore the count, the peak follows, pointers keep their
 * alignment, and threads allocating at once keep the counters exact.
 * Sanitizer builds have no interposer: the test is then skipped (exit 77). */
#include "tests/util/testutil.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/heap_probe.h"
#include "engine/memory/mem.h"

/* Called through volatile pointers: the compiler may neither elide a malloc/free pair nor
 * warn about deliberately absurd sizes. */
static void *(*volatile v_malloc)(size_t) = malloc;
static void *(*volatile v_calloc)(size_t, size_t) = calloc;
static void *(*volatile v_realloc)(void *, size_t) = realloc;
static void (*volatile v_free)(void *) = free;
static int (*volatile v_posix_memalign)(void **, size_t, size_t) = posix_memalign;
static void *(*volatile v_aligned_alloc)(size_t, size_t) = aligned_alloc;
static void *(*volatile v_memalign)(size_t, size_t) = memalign;
static void *(*volatile v_valloc)(size_t) = valloc;
static void *(*volatile v_pvalloc)(size_t) = pvalloc;
static char *(*volatile v_strdup)(const char *) = strdup;

extern void *__libc_malloc(size_t n);

static int64_t delta(uint64_t before)
{
    return (int64_t)(mp_heap_probe_live() - before);
}

static void test_malloc_free(void **state)
{
    (void)state;
    uint64_t l0 = mp_heap_probe_live();
    char *p = v_malloc(1000);
    assert_non_null(p);
    assert_int_equal((uintptr_t)p % 16, 0);
    memset(p, 0xab, 1000);
    assert_int_equal(delta(l0), 1000);
    assert_int_equal(malloc_usable_size(p), 1000);
    v_free(p);
    assert_int_equal(delta(l0), 0);
    v_free(NULL);
    assert_int_equal(delta(l0), 0);
    /* malloc(0) gives a unique pointer counting 0 bytes */
    p = v_malloc(0);
    assert_non_null(p);
    assert_int_equal(delta(l0), 0);
    v_free(p);
}

static void test_peak_tracks_calloc(void **state)
{
    (void)state;
    mp_heap_probe_reset_peak();
    uint64_t l0 = mp_heap_probe_live();
    assert_int_equal(mp_heap_probe_peak(), l0);
    unsigned char *p = v_calloc(1024, 1024);
    assert_non_null(p);
    for (size_t i = 0; i < 1024 * 1024; i += 4093)
        assert_int_equal(p[i], 0);
    assert_int_equal(p[1024 * 1024 - 1], 0);
    assert_int_equal(delta(l0), 1024 * 1024);
    assert_int_equal(mp_heap_probe_peak(), l0 + 1024 * 1024);
    v_free(p);
    assert_int_equal(delta(l0), 0);
    assert_int_equal(mp_heap_probe_peak(), l0 + 1024 * 1024); /* the mark stays */
    mp_heap_probe_reset_peak();
    assert_int_equal(mp_heap_probe_peak(), l0);
}

static void test_realloc_grow_shrink(void **state)
{
    (void)state;
    uint64_t l0 = mp_heap_probe_live();
    char *p = v_realloc(NULL, 100); /* = malloc */
    assert_non_null(p);
    for (int i = 0; i < 100; i++)
        p[i] = (char)i;
    assert_int_equal(delta(l0), 100);
    p = v_realloc(p, 200000); /* growth, glibc likely moves it to mmap */
    assert_non_null(p);
    assert_int_equal(delta(l0), 200000);
    for (int i = 0; i < 100; i++)
        assert_int_equal(p[i], (char)i);
    memset(p + 100, 1, 200000 - 100);
    p = v_realloc(p, 10); /* shrink */
    assert_non_null(p);
    assert_int_equal(delta(l0), 10);
    for (int i = 0; i < 10; i++)
        assert_int_equal(p[i], (char)i);
    assert_null(v_realloc(p, 0)); /* glibc: frees */
    assert_int_equal(delta(l0), 0);
}

static void test_aligned(void **state)
{
    (void)state;
    uint64_t l0 = mp_heap_probe_live();
    void *a = NULL;
    assert_int_equal(v_posix_memalign(&a, 64, 1000), 0);
    assert_non_null(a);
    assert_int_equal((uintptr_t)a % 64, 0);
    memset(a, 0x5a, 1000);
    assert_int_equal(delta(l0), 1000);
    assert_int_equal(malloc_usable_size(a), 1000);

    char *b = v_aligned_alloc(4096, 8192);
    assert_non_null(b);
    assert_int_equal((uintptr_t)b % 4096, 0);
    memset(b, 0x11, 8192);
    assert_int_equal(delta(l0), 1000 + 8192);

    void *c = v_memalign(256, 300);
    assert_non_null(c);
    assert_int_equal((uintptr_t)c % 256, 0);
    memset(c, 0, 300);
    void *d = v_memalign(8, 40); /* small alignments are plain malloc */
    assert_non_null(d);
    assert_int_equal(delta(l0), 1000 + 8192 + 300 + 40);

    size_t ps = (size_t)sysconf(_SC_PAGESIZE);
    void *e = v_valloc(100);
    assert_non_null(e);
    assert_int_equal((uintptr_t)e % ps, 0);
    void *f = v_pvalloc(1); /* counted as the whole page it gives */
    assert_non_null(f);
    assert_int_equal((uintptr_t)f % ps, 0);
    memset(f, 0, ps);
    assert_int_equal(delta(l0), 1000 + 8192 + 300 + 40 + 100 + (int64_t)ps);

    /* realloc of an over-aligned block keeps the content */
    b = v_realloc(b, 10000);
    assert_non_null(b);
    for (int i = 0; i < 8192; i++)
        assert_int_equal((unsigned char)b[i], 0x11);
    assert_int_equal(delta(l0), 1000 + 10000 + 300 + 40 + 100 + (int64_t)ps);

    v_free(a);
    v_free(b);
    v_free(c);
    v_free(d);
    v_free(e);
    v_free(f);
    assert_int_equal(delta(l0), 0);
}

static void test_bad_requests(void **state)
{
    (void)state;
    uint64_t l0 = mp_heap_probe_live();
    volatile size_t huge = SIZE_MAX;
    errno = 0;
    assert_null(v_malloc(huge));
    assert_int_equal(errno, ENOMEM);
    errno = 0;
    assert_null(v_calloc(huge / 2, 3));
    assert_int_equal(errno, ENOMEM);
    void *p = (void *)&l0;
    assert_int_equal(v_posix_memalign(&p, 24, 10), EINVAL); /* not a power of two */
    assert_int_equal(v_posix_memalign(&p, 2, 10), EINVAL);  /* below sizeof(void *) */
    assert_ptr_equal(p, (void *)&l0);                       /* untouched on failure */
    assert_null(v_aligned_alloc(3, 12));
    char *q = v_malloc(50);
    assert_non_null(q);
    assert_null(v_realloc(q, huge)); /* fails, q stays valid and counted */
    assert_int_equal(delta(l0), 50);
    v_free(q);
    assert_int_equal(delta(l0), 0);
}

static void test_libc_internal_allocations(void **state)
{
    (void)state;
    uint64_t l0 = mp_heap_probe_live();
    static const char text[] = "a string duplicated inside glibc";
    char *s = v_strdup(text);
    assert_non_null(s);
    assert_string_equal(s, text);
    assert_int_equal(delta(l0), sizeof text);
    v_free(s);
    assert_int_equal(delta(l0), 0);
    /* asprintf grows its buffer with realloc inside glibc */
    char *t = NULL;
    assert_true(asprintf(&t, "%s %d %s", text, 12345, text) > 0);
    assert_int_equal(delta(l0), strlen(t) + 1);
    free(t);
    assert_int_equal(delta(l0), 0);
}

static void test_foreign_block(void **state)
{
    (void)state;
    /* a block that did not come through the interposer is freed, uncounted, without harm */
    uint64_t l0 = mp_heap_probe_live();
    void *p = __libc_malloc(100);
    assert_non_null(p);
    assert_true(malloc_usable_size(p) >= 100);
    v_free(p);
    assert_int_equal(delta(l0), 0);
}

/* ---- threads ------------------------------------------------------------------------ */

#define N_THREADS 4
#define N_BLOCKS 10000

static pthread_barrier_t g_barrier;
static void *g_blocks[N_THREADS][N_BLOCKS];

static size_t block_size(int t, int i)
{
    return (size_t)((i * 37 + t * 101) % 700) + 1;
}

static void *thread_main(void *arg)
{
    int t = (int)(intptr_t)arg;
    pthread_barrier_wait(&g_barrier); /* 1: started */
    pthread_barrier_wait(&g_barrier); /* 2: main has read the counters: go */
    for (int i = 0; i < N_BLOCKS; i++) {
        size_t n = block_size(t, i);
        void *p = NULL;
        if (i % 7 == 0) {
            if (posix_memalign(&p, 64, n) != 0)
                p = NULL;
        } else if (i % 5 == 0) {
            p = calloc(1, n);
        } else {
            p = malloc(n);
        }
        if (p)
            memset(p, t, n);
        g_blocks[t][i] = p;
    }
    pthread_barrier_wait(&g_barrier); /* 3: all allocated */
    pthread_barrier_wait(&g_barrier); /* 4: main has looked */
    int u = (t + 1) % N_THREADS;      /* free another thread's blocks */
    for (int i = 0; i < N_BLOCKS; i++)
        free(g_blocks[u][i]);
    pthread_barrier_wait(&g_barrier); /* 5: all freed */
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    pthread_t th[N_THREADS];
    assert_int_equal(pthread_barrier_init(&g_barrier, NULL, N_THREADS + 1), 0);
    for (int t = 0; t < N_THREADS; t++)
        assert_int_equal(pthread_create(&th[t], NULL, thread_main, (void *)(intptr_t)t), 0);
    int64_t total = 0;
    for (int t = 0; t < N_THREADS; t++)
        for (int i = 0; i < N_BLOCKS; i++)
            total += (int64_t)block_size(t, i);
    pthread_barrier_wait(&g_barrier); /* 1: threads exist; their setup is done */
    mp_heap_probe_reset_peak();
    uint64_t l0 = mp_heap_probe_live();
    pthread_barrier_wait(&g_barrier); /* 2: go */
    pthread_barrier_wait(&g_barrier); /* 3 */
    for (int t = 0; t < N_THREADS; t++)
        for (int i = 0; i < N_BLOCKS; i++)
            assert_non_null(g_blocks[t][i]);
    assert_int_equal(delta(l0), total);
    assert_int_equal(mp_heap_probe_peak(), l0 + (uint64_t)total);
    pthread_barrier_wait(&g_barrier); /* 4 */
    pthread_barrier_wait(&g_barrier); /* 5 */
    assert_int_equal(delta(l0), 0);
    for (int t = 0; t < N_THREADS; t++)
        assert_int_equal(pthread_join(th[t], NULL), 0);
    pthread_barrier_destroy(&g_barrier);
}

/* What `memprof run` relies on: the process heap an mp_mem adds is its live bytes plus the
 * slack it reports (headers, alignment room, the huge-page pool's uncarved chunks), so that
 * "unaccounted heap" is the process's own. Checked at the peak, pooled blocks or not. */
static void test_engine_slack_matches_heap(void **state)
{
    (void)state;
    for (int huge = 0; huge < 2; huge++) {
        uint64_t l0 = mp_heap_probe_live();
        mp_mem *m = mp_mem_create();
        mp_mem_set_huge_pages(m, huge);
        uint64_t base = mp_heap_probe_live() - l0; /* the accountant and its pool */
        void *a = mp_mem_alloc_long(m, 300000, 64, MP_MEM_KERNEL, MP_OWNER_NONE);
        void *b = mp_mem_alloc(m, 5000, 0, MP_MEM_ENGINE, MP_OWNER_NONE);
        void *c = mp_mem_alloc_long(m, 3000000, 4096, MP_MEM_STATIC, MP_OWNER_NONE);
        void *d = mp_mem_alloc_long(m, 200000, 0, MP_MEM_KERNEL, MP_OWNER_NONE);
        assert_true(a && b && c && d);
        const mp_mem_stats *s = mp_mem_get_stats(m);
        assert_int_equal(s->peak_total, 3505000);
        assert_int_equal(mp_heap_probe_live() - l0 - base, s->peak_total + s->slack_at_peak);
        mp_mem_free(m, a);
        mp_mem_free(m, b);
        mp_mem_free(m, c);
        mp_mem_free(m, d);
        mp_mem_destroy(m);
        assert_int_equal(mp_heap_probe_live(), l0);
    }
}

int main(void)
{
    if (!mp_heap_probe_available()) {
        printf("SKIP: heap probe not available (%s)\n",
               MP_HEAP_PROBE_ENABLED ? "malloc is not reaching the interposer"
                                     : "sanitizer build: the sanitizer owns malloc");
        return MP_TEST_SKIP;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_malloc_free),
        cmocka_unit_test(test_engine_slack_matches_heap),
        cmocka_unit_test(test_peak_tracks_calloc),
        cmocka_unit_test(test_realloc_grow_shrink),
        cmocka_unit_test(test_aligned),
        cmocka_unit_test(test_bad_requests),
        cmocka_unit_test(test_libc_internal_allocations),
        cmocka_unit_test(test_foreign_block),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
