/* Tests of the engine's allocation interface: alignment, per-kind accounting, balance. */
#include "testutil.h"

#include <stdint.h>

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alignment_and_accounting),
        cmocka_unit_test(test_bad_alignment_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
