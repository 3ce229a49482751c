/* Tests of the memory planners (plan.h): hand-computed plans, the lower bound, the naive
 * total, the validity check, the registry, and a randomized property test of every planner. */
#include "tests/util/testutil.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/memory/plan.h"

#define B(size, first, last) ((mp_plan_buf){(size), (first), (last)})
#define LEN(a) ((int32_t)(sizeof(a) / sizeof((a)[0])))

static const mp_planner *greedy(void)
{
    const mp_planner *p = mp_planner_find("greedy");
    assert_non_null(p);
    return p;
}

/* Plan with `p` and assert the plan passes mp_plan_check; returns the total. */
static uint64_t plan_ok(const mp_planner *p, const mp_plan_buf *bufs, int32_t n, uint64_t align,
                        uint64_t *offsets)
{
    uint64_t total = 12345; /* garbage: the planner must overwrite it */
    assert_int_equal(p->plan(bufs, n, align, offsets, &total, NULL), MP_OK);
    char why[256];
    if (!mp_plan_check(bufs, n, align, offsets, total, why, sizeof why))
        fail_msg("planner %s: invalid plan: %s", p->name, why);
    return total;
}

static const mp_planner *planner(const char *name)
{
    const mp_planner *p = mp_planner_find(name);
    if (!p)
        fail_msg("no planner '%s'", name);
    return p;
}

/* ---- hand-computed plans ---------------------------------------------------------------- */

static void test_empty(void **state)
{
    (void)state;
    /* Nothing to place: total 0, no step, and the empty plan is valid. */
    uint64_t total = 12345;
    assert_int_equal(greedy()->plan(NULL, 0, 64, NULL, &total, NULL), MP_OK);
    assert_int_equal(total, 0);
    int32_t step = 7;
    assert_int_equal(mp_plan_lower_bound(NULL, 0, 64, &step), 0);
    assert_int_equal(step, -1);
    assert_int_equal(mp_plan_naive(NULL, 0, 64), 0);
    assert_true(mp_plan_check(NULL, 0, 64, NULL, 0, NULL, 0));
}

static void test_one_buffer(void **state)
{
    (void)state;
    /* 100 bytes rounded up to 64 is 128, at offset 0; alive at steps 3..7, first at 3. */
    mp_plan_buf bufs[] = {B(100, 3, 7)};
    uint64_t off[1] = {99};
    assert_int_equal(plan_ok(greedy(), bufs, 1, 64, off), 128);
    assert_int_equal(off[0], 0);
    int32_t step;
    assert_int_equal(mp_plan_lower_bound(bufs, 1, 64, &step), 128);
    assert_int_equal(step, 3);
    assert_int_equal(mp_plan_naive(bufs, 1, 64), 128);
}

static void test_chain(void **state)
{
    (void)state;
    /* a -> b -> c: a=100 over [0,1], b=200 over [1,2], c=50 over [2,3], align 1.
     * Live sums per step: 0: 100, 1: a+b = 300, 2: b+c = 250, 3: 50, so no plan is below 300.
     * Greedy takes b (200) first: offset 0. Then a (100): b is alive with it and there is no
     * gap below b, so a goes at 200. Then c (50): alive with b only (a ended at step 1), so
     * c goes just above b, at 200, sharing a's bytes. Total 300: the optimum. */
    mp_plan_buf bufs[] = {B(100, 0, 1), B(200, 1, 2), B(50, 2, 3)};
    uint64_t off[3];
    assert_int_equal(plan_ok(greedy(), bufs, 3, 1, off), 300);
    assert_int_equal(off[0], 200);
    assert_int_equal(off[1], 0);
    assert_int_equal(off[2], 200);
    int32_t step;
    assert_int_equal(mp_plan_lower_bound(bufs, 3, 1, &step), 300);
    assert_int_equal(step, 1);
    assert_int_equal(mp_plan_naive(bufs, 3, 1), 350);
}

static void test_zero_sized(void **state)
{
    (void)state;
    /* Align 64. The size-0 buffers (0 and 2) take offset 0 and no bytes. Buffer 1 (64 bytes)
     * is placed first at 0; buffer 3 (10 -> 64 bytes) is alive with it at steps 2..3, so it
     * goes at 64. Total 128 = live sum at step 2 (64 + 64), the earliest maximum. */
    mp_plan_buf bufs[] = {B(0, 0, 5), B(64, 0, 5), B(0, 1, 1), B(10, 2, 3)};
    uint64_t off[4];
    assert_int_equal(plan_ok(greedy(), bufs, 4, 64, off), 128);
    assert_int_equal(off[0], 0);
    assert_int_equal(off[1], 0);
    assert_int_equal(off[2], 0);
    assert_int_equal(off[3], 64);
    int32_t step;
    assert_int_equal(mp_plan_lower_bound(bufs, 4, 64, &step), 128);
    assert_int_equal(step, 2);
    assert_int_equal(mp_plan_naive(bufs, 4, 64), 128);

    /* Only empty buffers: everything at 0, total 0, still a valid plan. */
    mp_plan_buf none[] = {B(0, 0, 1), B(0, 0, 1)};
    assert_int_equal(plan_ok(greedy(), none, 2, 64, off), 0);
    assert_int_equal(off[0], 0);
    assert_int_equal(off[1], 0);
    assert_int_equal(mp_plan_lower_bound(none, 2, 64, &step), 0);
    assert_int_equal(step, 0);
}

static void test_alignment(void **state)
{
    (void)state;
    assert_int_equal(mp_plan_align_up(0, 64), 0);
    assert_int_equal(mp_plan_align_up(1, 64), 64);
    assert_int_equal(mp_plan_align_up(10, 64), 64);
    assert_int_equal(mp_plan_align_up(64, 64), 64);
    assert_int_equal(mp_plan_align_up(65, 64), 128);
    assert_int_equal(mp_plan_align_up(10, 1), 10);
    assert_int_equal(mp_plan_align_up(10, 0), 10);
    assert_int_equal(mp_plan_align_up(UINT64_MAX - 3, 64), UINT64_MAX); /* saturates */

    /* 70 and 10 bytes alive together. Align 64: 70 -> 128 at 0, then 10 -> 64 at 128,
     * total 192. Align 1: 70 at 0, 10 at 70, total 80. */
    mp_plan_buf bufs[] = {B(10, 0, 0), B(70, 0, 0)};
    uint64_t off[2];
    assert_int_equal(plan_ok(greedy(), bufs, 2, 64, off), 192);
    assert_int_equal(off[0], 128);
    assert_int_equal(off[1], 0);
    assert_int_equal(mp_plan_naive(bufs, 2, 64), 192);
    assert_int_equal(mp_plan_lower_bound(bufs, 2, 64, NULL), 192);
    assert_int_equal(plan_ok(greedy(), bufs, 2, 1, off), 80);
    assert_int_equal(off[0], 70);
    assert_int_equal(off[1], 0);
}

static void test_best_fit_gap(void **state)
{
    (void)state;
    /* Align 1. Placement order is by size: A, B, C, D, X.
     *   A 300 over [0,1]: offset 0                    -> [0,300)
     *   B 200 over [0,3]: above A                     -> [300,500)
     *   C 150 over [0,1]: above B                     -> [500,650)
     *   D 100 over [0,3]: above C                     -> [650,750)
     *   X  90 over [2,3]: alive with B and D only (A and C end at step 1), so its gaps are
     *      [0,300) (300 bytes) and [500,650) (150 bytes). First fit would take 0; best fit
     *      takes the smaller, 500.
     * Total 750 = the live sum at step 0 (A+B+C+D), the lower bound. Naive: 840. */
    mp_plan_buf bufs[] = {B(300, 0, 1), B(200, 0, 3), B(150, 0, 1), B(100, 0, 3), B(90, 2, 3)};
    uint64_t off[5];
    assert_int_equal(plan_ok(greedy(), bufs, 5, 1, off), 750);
    assert_int_equal(off[0], 0);
    assert_int_equal(off[1], 300);
    assert_int_equal(off[2], 500);
    assert_int_equal(off[3], 650);
    assert_int_equal(off[4], 500);
    int32_t step;
    assert_int_equal(mp_plan_lower_bound(bufs, 5, 1, &step), 750);
    assert_int_equal(step, 0);
    assert_int_equal(mp_plan_naive(bufs, 5, 1), 840);
}

static void test_ties(void **state)
{
    (void)state;
    /* Equal sizes: the earlier first step goes first. Buffer 1 starts at step 0, so it takes
     * offset 0 and buffer 0 (alive with it at step 1) goes above, at 64. */
    mp_plan_buf a[] = {B(64, 1, 2), B(64, 0, 1)};
    uint64_t off[2];
    assert_int_equal(plan_ok(greedy(), a, 2, 64, off), 128);
    assert_int_equal(off[0], 64);
    assert_int_equal(off[1], 0);
    /* Same size and first step: the lower index goes first. */
    mp_plan_buf b[] = {B(64, 0, 1), B(64, 0, 1)};
    assert_int_equal(plan_ok(greedy(), b, 2, 64, off), 128);
    assert_int_equal(off[0], 0);
    assert_int_equal(off[1], 64);
}

static void test_lower_bound_and_naive(void **state)
{
    (void)state;
    /* Align 1: live sums are step 0: 10, 1: 0, 2: 20, 3: 20+30 = 50, 4: 20+5 = 25, 5..9: 5.
     * Maximum 50 at step 3. Naive 10+20+30+5 = 65.
     * Align 16: sizes 16, 32, 32, 16; step 3: 64, step 4: 48. Maximum 64 at step 3; naive 96. */
    mp_plan_buf bufs[] = {B(10, 0, 0), B(20, 2, 4), B(30, 3, 3), B(5, 4, 9)};
    int32_t step = 0;
    assert_int_equal(mp_plan_lower_bound(bufs, 4, 1, &step), 50);
    assert_int_equal(step, 3);
    assert_int_equal(mp_plan_naive(bufs, 4, 1), 65);
    assert_int_equal(mp_plan_lower_bound(bufs, 4, 16, &step), 64);
    assert_int_equal(step, 3);
    assert_int_equal(mp_plan_naive(bufs, 4, 16), 96);

    /* One buffer ends at step 1, the next starts at step 2: never counted together.
     * Both sums are 10: the earliest step (0) is reported. */
    mp_plan_buf seq[] = {B(10, 0, 1), B(10, 2, 3)};
    assert_int_equal(mp_plan_lower_bound(seq, 2, 1, &step), 10);
    assert_int_equal(step, 0);

    /* Ending at step 5 and starting at step 5 are alive together: 10 + 7 = 17 at step 5. */
    mp_plan_buf meet[] = {B(10, 0, 5), B(7, 5, 6)};
    assert_int_equal(mp_plan_lower_bound(meet, 2, 1, &step), 17);
    assert_int_equal(step, 5);

    /* Large step numbers need no step-sized memory: 8 at 1000000, 8+8 at 2000000000. */
    mp_plan_buf far[] = {B(8, 1000000, 2000000000), B(8, 2000000000, INT32_MAX)};
    assert_int_equal(mp_plan_lower_bound(far, 2, 1, &step), 16);
    assert_int_equal(step, 2000000000);
}

/* ---- the other planners, by hand ---------------------------------------------------------- */

static void test_bump(void **state)
{
    (void)state;
    /* Align 64: 100 -> 128, 200 -> 256, 0 -> 0, 50 -> 64, laid out in index order whatever
     * the lifetimes: offsets 0, 128, 384 (the empty one, at the running sum), 384. Total
     * 448 = naive, though the lower bound is 128 + 256 = 384 (steps 1 and 2). */
    mp_plan_buf bufs[] = {B(100, 0, 1), B(200, 1, 2), B(0, 0, 3), B(50, 2, 3)};
    uint64_t off[4];
    assert_int_equal(plan_ok(planner("bump"), bufs, 4, 64, off), 448);
    assert_int_equal(off[0], 0);
    assert_int_equal(off[1], 128);
    assert_int_equal(off[2], 384);
    assert_int_equal(off[3], 384);
    assert_int_equal(mp_plan_naive(bufs, 4, 64), 448);
    assert_int_equal(mp_plan_lower_bound(bufs, 4, 64, NULL), 384);
    uint64_t total = 5;
    assert_int_equal(planner("bump")->plan(NULL, 0, 64, NULL, &total, NULL), MP_OK);
    assert_int_equal(total, 0);
}

static void test_firstfit(void **state)
{
    (void)state;
    /* The graph of test_best_fit_gap, align 1. First use order: A, B, C, D (all at step 0,
     * larger first), then X (step 2).
     *   A 300 [0,1] -> 0; B 200 [0,3] -> 300; C 150 [0,1] -> 500; D 100 [0,3] -> 650.
     *   X  90 [2,3]: alive with B [300,500) and D [650,750); the gaps are [0,300) and
     *      [500,650): first fit takes the lowest, 0 (greedy's best fit took 500).
     * Total 750, the lower bound. */
    mp_plan_buf bufs[] = {B(300, 0, 1), B(200, 0, 3), B(150, 0, 1), B(100, 0, 3), B(90, 2, 3)};
    uint64_t off[5];
    assert_int_equal(plan_ok(planner("firstfit"), bufs, 5, 1, off), 750);
    assert_int_equal(off[0], 0);
    assert_int_equal(off[1], 300);
    assert_int_equal(off[2], 500);
    assert_int_equal(off[3], 650);
    assert_int_equal(off[4], 0);

    /* Order of first use, not of size: c (step 0, 10 bytes) goes before b and a (step 1),
     * and of those the larger, b, first. Align 1. c 10 [0,2] -> 0; b 80 [1,2] -> above c,
     * 10; a 50 [1,1], alive with c [0,10) and b [10,90) -> 90. Total 140 = the live sum at
     * step 1 (10 + 80 + 50). (Greedy by size would give b 0, a 80, c 130.) */
    mp_plan_buf order[] = {B(50, 1, 1), B(80, 1, 2), B(10, 0, 2)};
    uint64_t o[3];
    assert_int_equal(plan_ok(planner("firstfit"), order, 3, 1, o), 140);
    assert_int_equal(o[2], 0);
    assert_int_equal(o[1], 10);
    assert_int_equal(o[0], 90);
}

static void test_breadth(void **state)
{
    (void)state;
    /* The chain of test_chain, align 1: a 100 [0,1], b 200 [1,2], c 50 [2,3]. Breadths:
     * step 0: 100, 1: 300, 2: 250, 3: 50. Step 1 first: b (200) -> 0, a (100) -> above b,
     * 200. Step 2: c, alive with b only -> 200. Total 300, the lower bound. */
    mp_plan_buf chain[] = {B(100, 0, 1), B(200, 1, 2), B(50, 2, 3)};
    uint64_t off[4];
    assert_int_equal(plan_ok(planner("breadth"), chain, 3, 1, off), 300);
    assert_int_equal(off[0], 200);
    assert_int_equal(off[1], 0);
    assert_int_equal(off[2], 200);

    /* Align 1: p 30 [0,0], q 20 [1,1], r 30 [0,1], s 20 [1,1]. Breadths: step 0: p + r = 60,
     * step 1: q + r + s = 70 (the lower bound). Step 1 first, largest first: r -> 0,
     * q -> 30, s -> 50. Step 0: p, alive with r [0,30) only -> 30. Total 70. */
    mp_plan_buf w[] = {B(30, 0, 0), B(20, 1, 1), B(30, 0, 1), B(20, 1, 1)};
    assert_int_equal(plan_ok(planner("breadth"), w, 4, 1, off), 70);
    assert_int_equal(off[0], 30);
    assert_int_equal(off[1], 30);
    assert_int_equal(off[2], 0);
    assert_int_equal(off[3], 50);
}

static void test_conflicts(void **state)
{
    (void)state;
    uint64_t off[5];
    /* The graph where greedy by size leaves a hole (test_greedy_misses): p 30 [0,0],
     * q 20 [1,1], r 30 [0,1], s 20 [1,1], align 1. Conflicts (other buffers met): p 1 (r),
     * q 2 (r, s), r 3, s 2 (q, r). Order: r, q, s (ties: larger, earlier, lower index), p.
     * r -> 0 [0,30); q meets r -> 30 [30,50); s meets q and r -> 50 [50,70); p meets r only:
     * lowest offset free of [0,30) -> 30. Total 70, the lower bound (greedy: 80). */
    mp_plan_buf w[] = {B(30, 0, 0), B(20, 1, 1), B(30, 0, 1), B(20, 1, 1)};
    assert_int_equal(plan_ok(planner("conflicts"), w, 4, 1, off), 70);
    assert_int_equal(off[0], 30);
    assert_int_equal(off[1], 30);
    assert_int_equal(off[2], 0);
    assert_int_equal(off[3], 50);

    /* A 60 [0,1], B 50 [1,3], C 40 [2,2], D 40 [3,4], E 30 [0,4], align 1. Conflicts: A 2
     * (B, E), B 4, C 2 (B, E), D 2 (B, E), E 4. Order: B (4, 50), E (4, 30), A (2, 60),
     * C (2, 40, first step 2), D (2, 40, first step 3). B -> 0; E meets B -> 50; A meets B
     * and E -> 80; C meets B and E (not A, gone after step 1) -> 80; D meets B and E (not C,
     * gone after step 2) -> 80. Total 140 = the lower bound (step 1: A + B + E). A buffer
     * of size 0 takes offset 0 and counts for no one's conflicts. */
    mp_plan_buf v[] = {B(60, 0, 1), B(50, 1, 3), B(40, 2, 2), B(40, 3, 4), B(30, 0, 4)};
    assert_int_equal(mp_plan_lower_bound(v, 5, 1, NULL), 140);
    assert_int_equal(plan_ok(planner("conflicts"), v, 5, 1, off), 140);
    assert_int_equal(off[0], 80);
    assert_int_equal(off[1], 0);
    assert_int_equal(off[2], 80);
    assert_int_equal(off[3], 80);
    assert_int_equal(off[4], 50);
    mp_plan_buf z[] = {B(0, 0, 4), B(10, 0, 0), B(10, 0, 0)};
    assert_int_equal(plan_ok(planner("conflicts"), z, 3, 8, off), 32);
    assert_int_equal(off[0], 0);
    assert_int_equal(off[1], 0);
    assert_int_equal(off[2], 16);
}

/* Graphs where greedy by size leaves a hole and misses the lower bound. */
static void test_greedy_misses(void **state)
{
    (void)state;
    uint64_t off[4];
    /* The second graph of test_breadth: p 30 [0,0], q 20 [1,1], r 30 [0,1], s 20 [1,1],
     * align 1, lower bound 70 (step 1).
     *   greedy (by size; ties earlier first step, then index): p, r, q, s.
     *     p -> 0 [0,30); r -> 30 [30,60); q (alive with r) -> the gap [0,30): 0;
     *     s (alive with q [0,20), r [30,60)): the hole [20,30) is 10 bytes -> 60. Total 80.
     *   firstfit (first use, larger first): p, r, q, s: the same plan, 80.
     *   breadth: 70 (see test_breadth). best: 70, breadth's plan. */
    mp_plan_buf w[] = {B(30, 0, 0), B(20, 1, 1), B(30, 0, 1), B(20, 1, 1)};
    assert_int_equal(mp_plan_lower_bound(w, 4, 1, NULL), 70);
    assert_int_equal(plan_ok(planner("greedy"), w, 4, 1, off), 80);
    assert_int_equal(off[3], 60);
    assert_int_equal(plan_ok(planner("firstfit"), w, 4, 1, off), 80);
    assert_int_equal(plan_ok(planner("breadth"), w, 4, 1, off), 70);
    assert_int_equal(plan_ok(planner("best"), w, 4, 1, off), 70);
    assert_int_equal(off[0], 30);
    assert_int_equal(off[1], 30);
    assert_int_equal(off[2], 0);
    assert_int_equal(off[3], 50);

    /* a 40 [0,0], b 20 [1,2], c 30 [2,2], d 30 [0,1], align 1. Live sums: step 0: 70,
     * 1: 50, 2: 50; lower bound 70.
     *   greedy: a, d (30, first 0), c (30, first 2), b.
     *     a -> 0 [0,40); d -> 40 [40,70); c (alive with neither) -> 0 [0,30);
     *     b [1,2] (alive with c [0,30), d [40,70)): the hole [30,40) is 10 bytes -> 70.
     *     Total 90.
     *   firstfit: a, d (step 0), b (step 1), c (step 2).
     *     a -> 0; d -> 40; b (alive with d) -> 0 [0,20); c (alive with b) -> 20. Total 70.
     *   breadth: step 0 (70): a -> 0, d -> 40; step 1 (50): b -> the gap [0,40): 0;
     *     step 2: c -> 20. Total 70, the same plan.
     *   best: greedy's 90 is above the bound, firstfit's 70 reaches it: firstfit's plan. */
    mp_plan_buf x[] = {B(40, 0, 0), B(20, 1, 2), B(30, 2, 2), B(30, 0, 1)};
    assert_int_equal(mp_plan_lower_bound(x, 4, 1, NULL), 70);
    assert_int_equal(plan_ok(planner("greedy"), x, 4, 1, off), 90);
    assert_int_equal(off[1], 70);
    assert_int_equal(plan_ok(planner("breadth"), x, 4, 1, off), 70);
    assert_int_equal(plan_ok(planner("firstfit"), x, 4, 1, off), 70);
    uint64_t ff[4];
    memcpy(ff, off, sizeof ff);
    assert_int_equal(ff[0], 0);
    assert_int_equal(ff[1], 0);
    assert_int_equal(ff[2], 20);
    assert_int_equal(ff[3], 40);
    assert_int_equal(plan_ok(planner("best"), x, 4, 1, off), 70);
    assert_memory_equal(off, ff, sizeof ff);
}

static void test_best_picks_greedy(void **state)
{
    (void)state;
    /* When greedy already reaches the bound, best returns greedy's plan (test_best_fit_gap:
     * X at 500, where firstfit would put it at 0). */
    mp_plan_buf bufs[] = {B(300, 0, 1), B(200, 0, 3), B(150, 0, 1), B(100, 0, 3), B(90, 2, 3)};
    uint64_t off[5];
    assert_int_equal(plan_ok(planner("best"), bufs, 5, 1, off), 750);
    assert_int_equal(off[4], 500);
    uint64_t total = 5;
    assert_int_equal(planner("best")->plan(NULL, 0, 64, NULL, &total, NULL), MP_OK);
    assert_int_equal(total, 0);
}

/* ---- the check -------------------------------------------------------------------------- */

static void test_check(void **state)
{
    (void)state;
    /* Align 64, every buffer 64 bytes. Buffers 0 [0,2] and 1 [3,4] are never alive together;
     * buffer 2 [2,3] is alive with both. */
    mp_plan_buf bufs[] = {B(64, 0, 2), B(64, 3, 4), B(64, 2, 3)};
    char why[256];

    /* 0 and 1 share bytes [0,64), 2 sits at [64,128): valid. */
    uint64_t good[] = {0, 0, 64};
    assert_true(mp_plan_check(bufs, 3, 64, good, 128, why, sizeof why));
    assert_string_equal(why, "");
    assert_true(mp_plan_check(bufs, 3, 64, good, 128, NULL, 0));

    /* 2 at 0 overlaps 0 (both alive at step 2). */
    uint64_t overlap[] = {0, 64, 0};
    assert_false(mp_plan_check(bufs, 3, 64, overlap, 128, why, sizeof why));
    assert_non_null(strstr(why, "buffers 0 and 2"));
    assert_non_null(strstr(why, "step 2"));
    assert_false(mp_plan_check(bufs, 3, 64, overlap, 128, NULL, 0));

    /* 96 is not a multiple of 64 (though 96+64 fits in 192). */
    uint64_t misaligned[] = {0, 0, 96};
    assert_false(mp_plan_check(bufs, 3, 64, misaligned, 192, why, sizeof why));
    assert_non_null(strstr(why, "buffer 2"));
    assert_non_null(strstr(why, "multiple"));

    /* 1 at 128 ends at 192, past a total of 191 (and of 128 for buffer 2 at 128). */
    uint64_t past[] = {0, 128, 64};
    assert_false(mp_plan_check(bufs, 3, 64, past, 191, why, sizeof why));
    assert_non_null(strstr(why, "buffer 1"));
    assert_non_null(strstr(why, "past total 191"));
    uint64_t past2[] = {0, 0, 128};
    assert_false(mp_plan_check(bufs, 3, 64, past2, 128, why, sizeof why));
    assert_non_null(strstr(why, "buffer 2"));
    /* An offset so large that offset + size wraps is past total too. */
    uint64_t wrap[] = {0, 0, UINT64_MAX - 63};
    assert_false(mp_plan_check(bufs, 3, 64, wrap, 128, why, sizeof why));
    assert_non_null(strstr(why, "buffer 2"));

    /* Sizes as given for overlap: 100-byte buffers at 0 and 100 touch; at 0 and 99 they
     * overlap by one byte. */
    mp_plan_buf two[] = {B(100, 0, 0), B(100, 0, 0)};
    uint64_t touch[] = {0, 100}, one_byte[] = {0, 99};
    assert_true(mp_plan_check(two, 2, 1, touch, 200, why, sizeof why));
    assert_false(mp_plan_check(two, 2, 1, one_byte, 200, why, sizeof why));
    assert_non_null(strstr(why, "buffers 0 and 1"));

    /* A zero-sized buffer never conflicts, even inside another one's bytes. */
    mp_plan_buf zero[] = {B(64, 0, 3), B(0, 1, 2)};
    uint64_t inside[] = {0, 0};
    assert_true(mp_plan_check(zero, 2, 64, inside, 64, why, sizeof why));

    /* A malformed buffer (last before first) is reported. */
    mp_plan_buf bad[] = {B(64, 0, 1), B(64, 3, 2)};
    assert_false(mp_plan_check(bad, 2, 64, good, 128, why, sizeof why));
    assert_non_null(strstr(why, "buffer 1"));
}

/* ---- registry and working memory -------------------------------------------------------- */

static void test_registry(void **state)
{
    (void)state;
    const mp_planner *def = mp_planner_default();
    assert_non_null(def);
    assert_string_equal(def->name, "best");
    assert_ptr_equal(mp_planner_find("best"), def);
    assert_non_null(mp_planner_find("greedy"));
    assert_non_null(mp_planner_find("firstfit"));
    assert_non_null(mp_planner_find("breadth"));
    assert_non_null(mp_planner_find("conflicts"));
    assert_non_null(mp_planner_find("bump"));
    assert_null(mp_planner_find("no-such-planner"));
    assert_null(mp_planner_find(""));
    assert_null(mp_planner_find(NULL));

    const mp_planner *const *list = mp_planner_list();
    int count = 0, has_default = 0;
    for (int i = 0; list[i]; i++, count++) {
        assert_non_null(list[i]->name);
        assert_non_null(list[i]->about);
        assert_non_null(list[i]->plan);
        assert_ptr_equal(mp_planner_find(list[i]->name), list[i]); /* names are unique */
        has_default |= list[i] == def;
    }
    assert_true(count >= 1);
    assert_true(has_default);
}

static void test_working_memory(void **state)
{
    (void)state;
    mp_plan_buf bufs[50];
    uint64_t off[50], total;
    for (int i = 0; i < 50; i++)
        bufs[i] = B((uint64_t)(i * 37 % 500), i / 3, i / 3 + i % 5);
    for (const mp_planner *const *p = mp_planner_list(); *p; p++) {
        /* Working memory is charged to the engine kind and all given back. */
        /* "bump" needs none at all (and so cannot run short of it). */
        mp_mem *m = mp_mem_create();
        assert_int_equal((*p)->plan(bufs, 50, 64, off, &total, m), MP_OK);
        const mp_mem_stats *s = mp_mem_get_stats(m);
        bool uses = strcmp((*p)->name, "bump") != 0;
        assert_int_equal(s->n_alloc > 0, uses);
        assert_int_equal(s->peak[MP_MEM_ENGINE] > 0, uses);
        assert_int_equal(s->live_total, 0);
        assert_int_equal(s->n_alloc, s->n_free);
        mp_mem_destroy(m);
        if (!uses)
            continue;

        /* Refused memory is MP_ERR_NOMEM, with nothing left allocated. */
        m = mp_mem_create();
        mp_mem_set_max_alloc(m, 8);
        assert_int_equal((*p)->plan(bufs, 50, 64, off, &total, m), MP_ERR_NOMEM);
        assert_int_equal(mp_mem_get_stats(m)->live_total, 0);
        mp_mem_destroy(m);
    }
}

/* ---- randomized properties -------------------------------------------------------------- */

static uint64_t rng_state;

static uint64_t rnd(void) /* splitmix64: the same sequence on every libc */
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t rnd_below(uint64_t n)
{
    return n ? rnd() % n : 0;
}

/* A random graph: n buffers over `steps` steps, short and long lifetimes, some empty. */
static void random_graph(mp_plan_buf *bufs, int32_t n, int32_t steps)
{
    static const uint64_t scales[] = {16, 100, 4096, 1 << 20};
    for (int32_t i = 0; i < n; i++) {
        int32_t first = (int32_t)rnd_below((uint64_t)steps);
        int32_t len = rnd_below(2) ? (int32_t)rnd_below(3) : (int32_t)rnd_below((uint64_t)steps);
        int32_t last = first + len < steps ? first + len : steps - 1;
        uint64_t size = rnd_below(20) == 0 ? 0 : 1 + rnd_below(scales[rnd_below(4)]);
        bufs[i] = B(size, first, last);
    }
}

static void test_random_properties(void **state)
{
    (void)state;
    static const uint64_t aligns[] = {1, 8, 64, 256};
    enum { GRAPHS = 200, MAX_N = 300 };
    mp_plan_buf *bufs = malloc(sizeof(mp_plan_buf) * MAX_N);
    uint64_t *off = malloc(sizeof(uint64_t) * MAX_N);
    uint64_t *again = malloc(sizeof(uint64_t) * MAX_N);
    assert_non_null(bufs);
    assert_non_null(off);
    assert_non_null(again);
    rng_state = 20240601;
    int checked_bad = 0, best_at_lb = 0;
    static const char *const heuristics[] = {"greedy", "firstfit", "breadth", "conflicts"};

    for (int g = 0; g < GRAPHS; g++) {
        int32_t n = (int32_t)rnd_below(MAX_N + 1);
        int32_t steps = 1 + (int32_t)rnd_below((uint64_t)n + 1);
        uint64_t align = aligns[rnd_below(4)];
        random_graph(bufs, n, steps);

        int32_t step, bstep;
        uint64_t lb = mp_plan_lower_bound(bufs, n, align, &step);
        uint64_t naive = mp_plan_naive(bufs, n, align);
        assert_int_equal(lb, mp_test_plan_bound(bufs, n, align, &bstep));
        assert_int_equal(step, bstep);

        for (const mp_planner *const *p = mp_planner_list(); *p; p++) {
            uint64_t total = plan_ok(*p, bufs, n, align, off);
            assert_true(mp_test_plan_valid(bufs, n, align, off, total));
            if (total < lb || total > naive)
                fail_msg("graph %d (%s): total %llu outside [%llu, %llu]", g, (*p)->name,
                         (unsigned long long)total, (unsigned long long)lb,
                         (unsigned long long)naive);
            /* Deterministic: the same input gives the same plan. */
            uint64_t total2;
            assert_int_equal((*p)->plan(bufs, n, align, again, &total2, NULL), MP_OK);
            assert_int_equal(total2, total);
            assert_memory_equal(again, off, sizeof(uint64_t) * (size_t)n);
        }

        /* "best" is never larger than the smallest of greedy, firstfit, breadth and conflicts (its
         * search may find smaller; tests/unit/test_plan_search.c tests that part). */
        {
            uint64_t t_min = UINT64_MAX;
            for (int k = 0; k < 4; k++) {
                uint64_t t = plan_ok(planner(heuristics[k]), bufs, n, align, off);
                t_min = t < t_min ? t : t_min;
            }
            uint64_t t_best = plan_ok(planner("best"), bufs, n, align, off);
            if (t_best > (n > 0 ? t_min : 0))
                fail_msg("graph %d: best %llu, min of the heuristics %llu", g,
                         (unsigned long long)t_best, (unsigned long long)t_min);
            assert_true(t_best >= lb);
            best_at_lb += t_best == lb;
        }

        /* The check agrees with the definition on damaged plans: move a few buffers onto
         * other buffers' offsets (or off alignment). */
        if (n >= 2) {
            uint64_t total;
            assert_int_equal(greedy()->plan(bufs, n, align, off, &total, NULL), MP_OK);
            for (int t = 0; t < 10; t++) {
                memcpy(again, off, sizeof(uint64_t) * (size_t)n);
                int moves = 1 + (int)rnd_below(3);
                for (int k = 0; k < moves; k++) {
                    int32_t i = (int32_t)rnd_below((uint64_t)n);
                    again[i] = again[rnd_below((uint64_t)n)] + (rnd_below(8) == 0 ? 1 : 0);
                }
                bool want = mp_test_plan_valid(bufs, n, align, again, total);
                char why[256];
                bool got = mp_plan_check(bufs, n, align, again, total, why, sizeof why);
                if (got != want)
                    fail_msg("graph %d: check says %d, definition says %d (%s)", g, got, want,
                             why);
                checked_bad += !want;
            }
        }
    }
    assert_true(checked_bad > 100); /* the damage did find invalid plans */
    assert_true(best_at_lb > 0);
    free(bufs);
    free(off);
    free(again);
}

static void test_large_graph(void **state)
{
    (void)state;
    enum { N = 1000, STEPS = 400 };
    mp_plan_buf *bufs = malloc(sizeof(mp_plan_buf) * N);
    uint64_t *off = malloc(sizeof(uint64_t) * N);
    assert_non_null(bufs);
    assert_non_null(off);
    rng_state = 777;
    random_graph(bufs, N, STEPS);
    for (const mp_planner *const *p = mp_planner_list(); *p; p++) {
        uint64_t total = plan_ok(*p, bufs, N, 64, off);
        assert_true(total >= mp_plan_lower_bound(bufs, N, 64, NULL));
        assert_true(total <= mp_plan_naive(bufs, N, 64));
    }
    free(bufs);
    free(off);
}

/* ---- long graphs ------------------------------------------------------------------------ */

/* n buffers over `branches` interleaved chains: buffer i is made at step i and read by the
 * next buffer of its chain (step i + branches); with several chains, every 8th buffer of a
 * chain lives 8 times longer (a skip). One chain is a plain chain: each buffer alive for
 * two steps.
 * Sizes cycle through 64, 128 and 192 bytes times the chain's number plus one. */
static void long_graph(mp_plan_buf *bufs, int32_t n, int32_t branches)
{
    for (int32_t i = 0; i < n; i++) {
        int32_t chain = i % branches;
        int32_t len = branches > 1 && (i / branches) % 8 == 0 ? 8 * branches : branches;
        bufs[i] = B((uint64_t)(64 * (1 + i % 3) * (1 + chain)), i, i + len);
    }
}

static int cmp_by_offset(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The plan of a long_graph checked step by step without mp_plan_check: at each step the
 * buffers alive (each starts at its own index) sorted by offset must not overlap, and the
 * total must hold each one and be at least the bytes alive at every step. */
static void assert_long_plan(const mp_plan_buf *bufs, int32_t n, uint64_t align,
                             const uint64_t *off, uint64_t total, const char *name)
{
    int32_t *live = malloc(sizeof(int32_t) * (size_t)n);
    uint64_t *spans = malloc(sizeof(uint64_t) * 2 * (size_t)n);
    assert_non_null(live);
    assert_non_null(spans);
    int32_t nl = 0, steps = bufs[n - 1].last + 1;
    for (int32_t s = 0; s < steps; s++) {
        int32_t kept = 0;
        for (int32_t k = 0; k < nl; k++)
            if (bufs[live[k]].last >= s)
                live[kept++] = live[k];
        nl = kept;
        if (s < n)
            live[nl++] = s;
        uint64_t bytes = 0;
        for (int32_t k = 0; k < nl; k++) {
            uint64_t size = (bufs[live[k]].size + align - 1) / align * align;
            spans[2 * k] = off[live[k]];
            spans[2 * k + 1] = off[live[k]] + size;
            bytes += size;
            if (off[live[k]] % align != 0 || spans[2 * k + 1] > total)
                fail_msg("%s: buffer %d at %llu out of place", name, (int)live[k],
                         (unsigned long long)off[live[k]]);
        }
        if (bytes > total)
            fail_msg("%s: %llu bytes alive at step %d, total %llu", name,
                     (unsigned long long)bytes, (int)s, (unsigned long long)total);
        qsort(spans, (size_t)nl, 2 * sizeof(uint64_t), cmp_by_offset);
        for (int32_t k = 1; k < nl; k++)
            if (spans[2 * k] < spans[2 * k - 1])
                fail_msg("%s: buffers overlap at step %d", name, (int)s);
    }
    free(live);
    free(spans);
}

/* Every planner on a chain of 100000 buffers and on 16 chains of 50000 in all: valid plans
 * at or above the bytes alive at each step (invariants only, never times). */
static void test_long_graphs(void **state)
{
    (void)state;
    static const int32_t shapes[][2] = {{100000, 1}, {50000, 16}};
    for (int g = 0; g < 2; g++) {
        int32_t n = shapes[g][0];
        mp_plan_buf *bufs = malloc(sizeof(mp_plan_buf) * (size_t)n);
        uint64_t *off = malloc(sizeof(uint64_t) * (size_t)n);
        assert_non_null(bufs);
        assert_non_null(off);
        long_graph(bufs, n, shapes[g][1]);
        for (const mp_planner *const *p = mp_planner_list(); *p; p++) {
            uint64_t total = 12345;
            assert_int_equal((*p)->plan(bufs, n, 64, off, &total, NULL), MP_OK);
            assert_long_plan(bufs, n, 64, off, total, (*p)->name);
        }
        free(bufs);
        free(off);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_one_buffer),
        cmocka_unit_test(test_chain),
        cmocka_unit_test(test_zero_sized),
        cmocka_unit_test(test_alignment),
        cmocka_unit_test(test_best_fit_gap),
        cmocka_unit_test(test_ties),
        cmocka_unit_test(test_lower_bound_and_naive),
        cmocka_unit_test(test_bump),
        cmocka_unit_test(test_firstfit),
        cmocka_unit_test(test_breadth),
        cmocka_unit_test(test_conflicts),
        cmocka_unit_test(test_greedy_misses),
        cmocka_unit_test(test_best_picks_greedy),
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_registry),
        cmocka_unit_test(test_working_memory),
        cmocka_unit_test(test_random_properties),
        cmocka_unit_test(test_large_graph),
        cmocka_unit_test(test_long_graphs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
