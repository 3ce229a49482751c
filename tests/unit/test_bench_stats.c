/* The timing statistics of memprof bench, scenarios and run (cli/bench_stats.c): mean,
 * median (odd and even counts), min, max and geometric mean against values worked out by
 * hand, the empty set, a 0 ns sample, ratios, and the JSON form's fields. The module is
 * part of the memprof executable, so this test compiles its source in. */
#include "tests/util/testutil.h"

#include <math.h>

#include "cli/bench_stats.c"

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
    /* whole nanoseconds: the geometric mean sqrt(8) ms rounded to the nearest ns */
    assert_int_equal(json_integer_value(json_object_get(j, "median_ns")), 3000000);
    assert_int_equal(json_integer_value(json_object_get(j, "min_ns")), 2000000);
    assert_int_equal(json_integer_value(json_object_get(j, "max_ns")), 4000000);
    assert_int_equal(json_integer_value(json_object_get(j, "mean_ns")), 3000000);
    assert_int_equal(json_integer_value(json_object_get(j, "geomean_ns")),
                     (json_int_t)llround(sqrt(8) * 1e6));
    assert_int_equal(json_object_size(j), 6);
    json_decref(j);
}

/* The bench's order: over a cycle (n rounds, 2n for odd n) every round runs each
 * contestant once, each holds each place equally often, and each runs right after each
 * other one equally often within rounds: n = 4, 4 rounds of 3 neighbour pairs = 12 = 4 x 3
 * ordered pairs once each; n = 3, 6 rounds of 2 pairs = 12 = 6 ordered pairs twice. */
static void test_order_balanced(void **state)
{
    (void)state;
    for (int n = 1; n <= 6; n++) {
        int cycle = n % 2 ? 2 * n : n;
        int after[6][6] = {{0}}, place[6][6] = {{0}};
        for (int r = 0; r < cycle; r++) {
            int seen[6] = {0};
            for (int j = 0; j < n; j++) {
                int c = mp_bench_order(n, r, j);
                assert_true(c >= 0 && c < n);
                assert_int_equal(seen[c]++, 0);
                place[c][j]++;
                if (j > 0)
                    after[mp_bench_order(n, r, j - 1)][c]++;
            }
        }
        int pairs_each = n % 2 ? 2 : 1, places_each = cycle / n;
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++) {
                assert_int_equal(after[a][b], a == b ? 0 : pairs_each);
                assert_int_equal(place[a][b], places_each);
            }
        /* the next cycle repeats the first */
        for (int j = 0; j < n; j++)
            assert_int_equal(mp_bench_order(n, cycle + 1, j), mp_bench_order(n, 1, j));
    }
    assert_int_equal(mp_bench_order(4, 0, 2), 3); /* row 0: 0, 1, 3, 2 */
    assert_int_equal(mp_bench_order(4, 1, 3), 3); /* row 1: 1, 2, 0, 3 */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_odd),
        cmocka_unit_test(test_even_and_one),
        cmocka_unit_test(test_empty_zero_ratio),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_order_balanced),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
