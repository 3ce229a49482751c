/* Tests of the huge-page pool (engine/memory/huge_pool.c) and of the engine's long-lived
 * blocks that use it (mp_mem_alloc_long): blocks are aligned and disjoint, chunks are taken
 * and given back when the arithmetic of their sizes says, the accounting of bytes is the
 * same with the pool as without, and the memory is advised for huge pages. */
#include "tests/util/testutil.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/memory/huge_pool.h"
#include "engine/memory/mem.h"

/* Blocks of 100000 bytes take 16 (the chunk link) + 100000 rounded up to 16 = 100016
 * bytes of a 4 MiB chunk whose first 64 bytes are its header: (4194304 - 64) / 100016 =
 * 41.9, so 41 fit and the 42nd takes a new chunk. */
static void test_pool_chunks(void **state)
{
    (void)state;
    mp_hpool *p = mp_hpool_create();
    assert_non_null(p);
    enum { N = 42, SIZE = 100000 };
    unsigned char *b[N];
    int64_t reserved, total = 0;
    for (int i = 0; i < N; i++) {
        b[i] = mp_hpool_alloc(p, SIZE, &reserved);
        assert_non_null(b[i]);
        assert_int_equal((uintptr_t)b[i] % 16, 0);
        /* the first block and the 42nd take a chunk; the others fit */
        assert_int_equal(reserved, i == 0 || i == 41 ? (int64_t)MP_HUGE_CHUNK : 0);
        total += reserved;
        memset(b[i], i + 1, SIZE);
    }
    for (int i = 0; i < N; i++) /* disjoint: every block kept its own bytes */
        for (size_t k = 0; k < SIZE; k += 4999)
            assert_int_equal(b[i][k], i + 1);
    /* the first chunk is full: it goes back with its last block, not before */
    int64_t released;
    for (int i = 0; i < 40; i++) {
        mp_hpool_free(b[i], &released);
        assert_int_equal(released, 0);
    }
    mp_hpool_free(b[40], &released);
    assert_int_equal(released, -(int64_t)MP_HUGE_CHUNK);
    /* the current chunk is kept (carved again from its start) */
    mp_hpool_free(b[41], &released);
    assert_int_equal(released, 0);
    unsigned char *again = mp_hpool_alloc(p, SIZE, &reserved);
    assert_int_equal(reserved, 0);
    assert_ptr_equal(again, b[41]);
    mp_hpool_free(again, &released);
    assert_int_equal(total, 2 * (int64_t)MP_HUGE_CHUNK);
    mp_hpool_destroy(p);
}

/* A block that would take more than half a chunk (64-byte chunk header, 16-byte link,
 * size rounded to 16) gets a chunk of its own, rounded up to huge pages: 3 MiB -> 4 MiB;
 * 2 MiB - 79 bytes needs 2 MiB + 16 -> 4 MiB; 5 MiB -> 6 MiB. 2 MiB - 80 bytes needs
 * exactly half and shares. A freed own chunk stays as the one spare (the larger of two),
 * which a block that fits takes; one that does not fit gives it back first. */
static void test_pool_own_chunk(void **state)
{
    (void)state;
    mp_hpool *p = mp_hpool_create();
    int64_t held;
    const int64_t mib = 1 << 20;
    void *big = mp_hpool_alloc(p, 3 * mib, &held);
    assert_non_null(big);
    assert_int_equal(held, 4 * mib);
    void *half = mp_hpool_alloc(p, 2 * mib - 80, &held);
    assert_non_null(half);
    assert_int_equal(held, MP_HUGE_CHUNK); /* the first shared chunk */
    void *small = mp_hpool_alloc(p, 1000, &held);
    assert_non_null(small);
    assert_int_equal(held, 0); /* 2 MiB + 1032 of 4 MiB */
    void *over = mp_hpool_alloc(p, 2 * mib - 79, &held);
    assert_non_null(over);
    assert_int_equal(held, 4 * mib);

    mp_hpool_free(big, &held); /* kept as the spare */
    assert_int_equal(held, 0);
    void *again = mp_hpool_alloc(p, 3 * mib + mib / 2, &held); /* fits the spare */
    assert_int_equal(held, 0);
    assert_ptr_equal(again, big);
    mp_hpool_free(again, &held);
    assert_int_equal(held, 0);
    void *five = mp_hpool_alloc(p, 5 * mib, &held); /* the spare goes, 6 MiB comes */
    assert_non_null(five);
    assert_int_equal(held, 6 * mib - 4 * mib);
    memset(five, 7, 5 * mib);
    mp_hpool_free(over, &held); /* no spare: it becomes the spare */
    assert_int_equal(held, 0);
    mp_hpool_free(five, &held); /* the larger stays: the 4 MiB spare goes */
    assert_int_equal(held, -4 * mib);
    void *four = mp_hpool_alloc(p, 4 * mib, &held); /* takes the 6 MiB spare */
    assert_int_equal(held, 0);
    assert_ptr_equal(four, five);

    mp_hpool_destroy(p); /* blocks still out: their chunks stay until they are freed */
    mp_hpool_free(small, &held);
    assert_int_equal(held, 0);
    mp_hpool_free(half, &held);
    assert_int_equal(held, -(int64_t)MP_HUGE_CHUNK);
    mp_hpool_free(four, &held);
    assert_int_equal(held, -6 * mib);
    assert_null(mp_hpool_alloc(NULL, SIZE_MAX - 8, &held)); /* absurd: refused */
}

/* Long-lived blocks: aligned, counted exactly like plain ones; the pool's uncarved chunk
 * space shows as the allocator's slack (what malloc holds beyond the blocks). */
static void test_mem_long_blocks(void **state)
{
    (void)state;
    for (int huge = 0; huge < 2; huge++) {
        mp_mem *m = mp_mem_create();
        mp_mem_set_huge_pages(m, huge);
        const mp_mem_stats *s = mp_mem_get_stats(m);
        void *a = mp_mem_alloc_long(m, (size_t)1 << 20, 64, MP_MEM_KERNEL, MP_OWNER_OP(2));
        assert_non_null(a);
        assert_int_equal((uintptr_t)a % 64, 0);
        /* pooled: a 4 MiB chunk holds the 1 MiB block, 3 MiB is slack; plain: malloc's
         * header and alignment room, under a page */
        if (huge)
            assert_int_equal(s->slack_at_peak, MP_HUGE_CHUNK - ((size_t)1 << 20));
        else
            assert_true(s->slack_at_peak < 4096);
        void *b = mp_mem_alloc_long(m, 5000000, 4096, MP_MEM_STATIC, MP_OWNER_NONE);
        assert_non_null(b);
        /* b's own chunk: 5000000 bytes, 4096 of alignment room and a header round up to
         * 6 MiB: 3 MiB + 6 MiB - 5000000 of slack in all */
        if (huge)
            assert_int_equal(s->slack_at_peak, 3145728 + 6291456 - 5000000);
        void *c = mp_mem_alloc_long(m, 1000, 0, MP_MEM_KERNEL, MP_OWNER_OP(3)); /* small */
        assert_non_null(c);
        assert_int_equal((uintptr_t)b % 4096, 0);
        memset(a, 1, (size_t)1 << 20);
        memset(b, 2, 5000000);
        memset(c, 3, 1000);
        assert_int_equal(s->live[MP_MEM_KERNEL], ((size_t)1 << 20) + 1000);
        assert_int_equal(s->live[MP_MEM_STATIC], 5000000);
        /* a reallocated block keeps its contents and leaves the pool */
        unsigned char *a2 = mp_mem_realloc(m, a, 2000000, MP_MEM_KERNEL, MP_OWNER_OP(2));
        assert_non_null(a2);
        assert_int_equal((uintptr_t)a2 % 64, 0);
        assert_int_equal(a2[0], 1);
        assert_int_equal(a2[(1 << 20) - 1], 1);
        assert_int_equal(((unsigned char *)b)[4999999], 2);
        mp_mem_free(m, a2);
        mp_mem_free(m, b);
        mp_mem_free(m, c);
        assert_int_equal(s->live_total, 0);
        assert_int_equal(s->bytes_alloc, s->bytes_free);
        assert_int_equal(s->n_alloc, s->n_free);
        mp_mem_destroy(m);
    }
}

/* The kernel marks memory advised MADV_HUGEPAGE "THPeligible: 1" in /proc/self/smaps
 * (where transparent huge pages are not disabled): a pooled block's mapping is. */
static int thp_eligible(const void *addr)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return -1;
    char line[512];
    int in = 0, found = -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
            in = (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
        else if (in && strncmp(line, "THPeligible:", 12) == 0)
            found = atoi(line + 12);
    }
    fclose(f);
    return found;
}

static void test_pool_advised(void **state)
{
    (void)state;
    char mode[128] = "";
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (f) {
        if (!fgets(mode, sizeof mode, f))
            mode[0] = 0;
        fclose(f);
    }
    if (!f || strstr(mode, "[never]")) {
        printf("SKIP (partly): transparent huge pages are off here; advice not checked\n");
        return;
    }
    mp_mem *m = mp_mem_create();
    void *a = mp_mem_alloc_long(m, (size_t)1 << 20, 64, MP_MEM_KERNEL, MP_OWNER_NONE);
    assert_non_null(a);
    int e = thp_eligible(a);
    if (e < 0)
        printf("SKIP (partly): this kernel's smaps has no THPeligible field\n");
    else
        assert_int_equal(e, 1);
    mp_mem_free(m, a);
    mp_mem_destroy(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pool_chunks),
        cmocka_unit_test(test_pool_own_chunk),
        cmocka_unit_test(test_mem_long_blocks),
        cmocka_unit_test(test_pool_advised),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
