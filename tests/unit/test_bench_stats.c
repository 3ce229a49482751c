/* The timing statistics of memprof bench, scenarios and run (cli/bench_stats.c): mean,
 * median (odd and even counts), min, max and geometric mean against values worked out by
 * hand, the empty set, a 0 ns sample, ratios, and the JSON form's fields. The module is
 * part of the memprof executable, so this test compiles its source in. */
#include "testutil.h"

#include <math.h>

#include "../../cli/bench_stats.c"

static void test_odd(void **state)
{
    (void)state;
    uint64_t ns[] = {9000, 1000, 3000}; /* sorted: 1000 3000 9000 */
    mp_stats st;
    mp_stats_compute(ns, 3, &st);
    assert_int_equal(st.n, 3);
    assert_true(ns[0] == 1000 && ns[1] == 3000 && ns[2] == 9000);
    assert_true(fabs(st.mean_ns - 13000.0 / 3) < 1e-6);
    assert_true(st.median_ns == 3000);
    assert_true(st.min_ns == 1000 && st.max_ns == 9000);
    assert_true(fabs(st.geomean_ns - 3000) < 1e-6); /* cube root of 1000 * 3000 * 9000 */
}

static void test_even_and_one(void **state)
{
    (void)state;
    uint64_t ns[] = {4, 1, 16, 2}; /* sorted: 1 2 4 16 */
    mp_stats st;
    mp_stats_compute(ns, 4, &st);
    assert_true(st.median_ns == 3); /* (2 + 4) / 2 */
    assert_true(fabs(st.mean_ns - 5.75) < 1e-12);
    assert_true(fabs(st.geomean_ns - pow(2, 1.75)) < 1e-9); /* (1*2*4*16)^(1/4) = 2^(7/4) */
    uint64_t one = 7;
    mp_stats_compute(&one, 1, &st);
    assert_true(st.n == 1 && st.mean_ns == 7 && st.median_ns == 7 && st.min_ns == 7 &&
                st.max_ns == 7 && fabs(st.geomean_ns - 7) < 1e-9);
}

static void test_empty_zero_ratio(void **state)
{
    (void)state;
    mp_stats st;
    mp_stats_compute(NULL, 0, &st);
    assert_true(st.n == 0 && st.mean_ns == 0 && st.median_ns == 0 && st.geomean_ns == 0);
    uint64_t ns[] = {0, 100};
    mp_stats_compute(ns, 2, &st);
    assert_true(fabs(st.geomean_ns - 10) < 1e-9); /* 0 counts as 1 ns: sqrt(1 * 100) */
    assert_true(mp_stats_ratio(3, 2) == 1.5);
    assert_true(mp_stats_ratio(3, 0) == 0);
}

static void test_json(void **state)
{
    (void)state;
    uint64_t ns[] = {2000000, 4000000};
    mp_stats st;
    mp_stats_compute(ns, 2, &st);
    json_t *j = mp_stats_json(&st);
    assert_non_null(j);
    assert_int_equal(json_integer_value(json_object_get(j, "n")), 2);
    assert_true(fabs(json_real_value(json_object_get(j, "median_ms")) - 3.0) < 1e-12);
    assert_true(fabs(json_real_value(json_object_get(j, "min_ms")) - 2.0) < 1e-12);
    assert_true(fabs(json_real_value(json_object_get(j, "max_ms")) - 4.0) < 1e-12);
    assert_true(fabs(json_real_value(json_object_get(j, "mean_ms")) - 3.0) < 1e-12);
    assert_true(fabs(json_real_value(json_object_get(j, "geomean_ms")) - sqrt(8)) < 1e-9);
    assert_int_equal(json_object_size(j), 6);
    json_decref(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_odd),
        cmocka_unit_test(test_even_and_one),
        cmocka_unit_test(test_empty_zero_ratio),
        cmocka_unit_test(test_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
