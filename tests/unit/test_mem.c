/* Tests of the engine's allocation interface: alignment, per-kind accounting, balance, and
 * the allocation-failure injection (mp_mem_fail_set). */
#include "tests/util/testutil.h"

#include <stdint.h>
#include <string.h>

#include "engine/memory/mem.h"

static void test_alignment_and_accounting(void **state)
{
    (void)state;
    mp_mem *m = mp_mem_create();
    void *a = mp_mem_alloc(m, 100, 0, MP_MEM_STATIC, MP_OWNER_TENSOR(3));
    void *b = mp_mem_alloc(m, 1000, 256, MP_MEM_SCRATCH, MP_OWNER_OP(1));
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal((uintptr_t)a % MP_MEM_ALIGN, 0);
    assert_int_equal((uintptr_t)b % 256, 0);
    const mp_mem_stats *s = mp_mem_get_stats(m);
    assert_int_equal(s->live[MP_MEM_STATIC], 100);
    assert_int_equal(s->live[MP_MEM_SCRATCH], 1000);
    assert_int_equal(s->live_total, 1100);
    mp_mem_free(m, a);
    assert_int_equal(s->live_total, 1000);
    assert_int_equal(s->peak_total, 1100);
    b = mp_mem_realloc(m, b, 10, MP_MEM_SCRATCH, MP_OWNER_OP(1));
    assert_int_equal((uintptr_t)b % 256, 0);
    assert_int_equal(s->live[MP_MEM_SCRATCH], 10);
    mp_mem_free(m, b);
    assert_int_equal(s->live_total, 0);
    assert_int_equal(s->bytes_alloc, s->bytes_free);
    assert_int_equal(s->n_alloc, s->n_free);
    mp_mem_destroy(m);
}

static void test_bad_alignment_refused(void **state)
{
    (void)state;
    mp_mem *m = mp_mem_create();
    assert_null(mp_mem_alloc(m, 8, 48, MP_MEM_ENGINE, MP_OWNER_NONE));
    assert_null(mp_mem_alloc(m, SIZE_MAX - 8, 0, MP_MEM_ENGINE, MP_OWNER_NONE));
    mp_mem_set_max_alloc(m, 1000);
    assert_null(mp_mem_alloc(m, 1001, 0, MP_MEM_KERNEL, MP_OWNER_NONE));
    assert_int_equal(mp_mem_get_stats(m)->n_alloc, 0);
    void *p = mp_mem_alloc(m, 1000, 0, MP_MEM_KERNEL, MP_OWNER_NONE);
    assert_non_null(p);
    mp_mem_free(m, p);
    mp_mem_destroy(m);
}

/* Allocate one 100-byte block: NULL when refused, else freed at once. */
static bool alloc_ok(mp_mem *m)
{
    void *p = mp_mem_alloc(m, 100, 0, MP_MEM_ENGINE, MP_OWNER_NONE);
    mp_mem_free(m, p);
    return p != NULL;
}

static void test_fail_nth_only(void **state)
{
    (void)state;
    mp_mem *m = mp_mem_create();
    mp_mem_fail_set(&(mp_mem_fail){.nth = 3});
    assert_true(alloc_ok(m));
    assert_true(alloc_ok(m));
    assert_false(alloc_ok(m)); /* the 3rd */
    assert_true(alloc_ok(m));  /* later ones succeed */
    assert_int_equal(mp_mem_fail_count(), 4);
    assert_int_equal(mp_mem_fail_bytes(), 300); /* granted: the refused one is not */
    const mp_mem_stats *s = mp_mem_get_stats(m);
    assert_int_equal(s->n_alloc, 3); /* a refused allocation is not accounted */
    assert_int_equal(s->live_total, 0);
    mp_mem_fail_set(NULL);
    mp_mem_destroy(m);
}

static void test_fail_nth_and_later(void **state)
{
    (void)state;
    mp_mem *m = mp_mem_create();
    void *keep = mp_mem_alloc(m, 10, 0, MP_MEM_KERNEL, MP_OWNER_NONE);
    mp_mem_fail_set(&(mp_mem_fail){.nth = 2, .and_later = true});
    assert_true(alloc_ok(m));
    for (int i = 0; i < 5; i++)
        assert_false(alloc_ok(m));
    /* every kind of allocation is refused, and a refused realloc keeps the block whole */
    assert_null(mp_mem_calloc(m, 8, 0, MP_MEM_IO, MP_OWNER_NONE));
    assert_null(mp_mem_alloc_long(m, MP_MEM_HUGE_MIN, 0, MP_MEM_STATIC, MP_OWNER_NONE));
    memset(keep, 7, 10);
    assert_null(mp_mem_realloc(m, keep, 1000, MP_MEM_KERNEL, MP_OWNER_NONE));
    assert_int_equal(mp_mem_size(keep), 10);
    assert_int_equal(((unsigned char *)keep)[9], 7);
    assert_true(mp_mem_fail_now(1));
    mp_mem_fail_set(NULL); /* off: everything succeeds again */
    assert_false(mp_mem_fail_now(1));
    assert_true(alloc_ok(m));
    mp_mem_free(m, keep);
    assert_int_equal(mp_mem_get_stats(m)->live_total, 0);
    mp_mem_destroy(m);
}

static void test_fail_after_bytes(void **state)
{
    (void)state;
    mp_mem *m = mp_mem_create();
    mp_mem_fail_set(&(mp_mem_fail){.max_bytes = 250});
    assert_true(alloc_ok(m));  /* 100 */
    assert_true(alloc_ok(m));  /* 200 */
    assert_false(alloc_ok(m)); /* would be 300 */
    assert_true(mp_mem_fail_now(1)); /* and every later one, however small */
    assert_int_equal(mp_mem_fail_bytes(), 200);
    /* counting only: nothing fails, every allocation is counted */
    mp_mem_fail_set(&(mp_mem_fail){0});
    assert_true(alloc_ok(m));
    assert_int_equal(mp_mem_fail_count(), 0); /* nothing set: nothing counted */
    mp_mem_fail_set(NULL);
    mp_mem_destroy(m);
}

static void test_fail_create(void **state)
{
    (void)state;
    mp_mem_fail_set(&(mp_mem_fail){.nth = 1});
    assert_null(mp_mem_create()); /* the allocator's own record */
    mp_mem_fail_set(&(mp_mem_fail){.nth = 2});
    mp_mem *m = mp_mem_create(); /* without its huge-page pool: long blocks from malloc */
    assert_non_null(m);
    void *p = mp_mem_alloc_long(m, MP_MEM_HUGE_MIN, 0, MP_MEM_STATIC, MP_OWNER_NONE);
    assert_non_null(p);
    mp_mem_free(m, p);
    mp_mem_fail_set(NULL);
    mp_mem_destroy(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alignment_and_accounting),
        cmocka_unit_test(test_bad_alignment_refused),
        cmocka_unit_test(test_fail_nth_only),
        cmocka_unit_test(test_fail_nth_and_later),
        cmocka_unit_test(test_fail_after_bytes),
        cmocka_unit_test(test_fail_create),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
