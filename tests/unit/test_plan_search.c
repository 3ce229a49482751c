/* Tests of the "search" planner and of the search "best" runs after its heuristics
 * (engine/memory/plan_search.c): small graphs worked out by hand where greedy, firstfit and
 * breadth all miss the optimum and the search finds it; optimality against an independent
 * brute force over offsets; and randomized properties (valid plans, never below the lower
 * bound, never above the heuristics, deterministic). Two brute forces, over offsets and
 * over orders, confirm the optima. */
#include "tests/util/testutil.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/memory/plan.h"

#define B(size, first, last) ((mp_plan_buf){(size), (first), (last)})
#define LEN(a) ((int32_t)(sizeof(a) / sizeof((a)[0])))

static const mp_planner *planner(const char *name)
{
    const mp_planner *p = mp_planner_find(name);
    if (!p)
        fail_msg("no planner '%s'", name);
    return p;
}

/* Plan with p; assert the plan is valid (mp_plan_check and the definition). */
static uint64_t plan_ok(const mp_planner *p, const mp_plan_buf *bufs, int32_t n, uint64_t align,
                        uint64_t *offsets)
{
    uint64_t total = 12345; /* garbage: the planner must overwrite it */
    assert_int_equal(p->plan(bufs, n, align, offsets, &total, NULL), MP_OK);
    char why[256];
    if (!mp_plan_check(bufs, n, align, offsets, total, why, sizeof why))
        fail_msg("planner %s: invalid plan: %s", p->name, why);
    if (!mp_test_plan_valid(bufs, n, align, offsets, total))
        fail_msg("planner %s: plan breaks the definition", p->name);
    return total;
}

/* ---- brute force ------------------------------------------------------------------------ */

/* The smallest total over all plans, by trying every offset of every buffer (depth first,
 * cutting branches that cannot beat the best so far). Offsets step by g, the gcd of the
 * aligned sizes: in any plan every buffer can be slid down until it rests on 0 or on the
 * end of a buffer alive with it, which keeps the plan valid and the total no larger, so
 * some optimal plan has every offset a sum of sizes, a multiple of g. */
typedef struct brute {
    const mp_plan_buf *bufs;
    int32_t n;
    uint64_t align, g, best;
    uint64_t off[16];
} brute;

static void brute_dfs(brute *s, int32_t k, uint64_t top)
{
    if (top >= s->best)
        return;
    if (k == s->n) {
        s->best = top;
        return;
    }
    const mp_plan_buf *b = &s->bufs[k];
    uint64_t size = mp_plan_align_up(b->size, s->align);
    if (size == 0) {
        s->off[k] = 0;
        brute_dfs(s, k + 1, top);
        return;
    }
    for (uint64_t o = 0; o + size < s->best; o += s->g) {
        bool free = true;
        for (int32_t j = 0; j < k && free; j++) {
            const mp_plan_buf *c = &s->bufs[j];
            uint64_t cs = mp_plan_align_up(c->size, s->align);
            bool meet = b->first <= c->last && c->first <= b->last;
            free = !(meet && cs > 0 && o < s->off[j] + cs && s->off[j] < o + size);
        }
        if (!free)
            continue;
        s->off[k] = o;
        brute_dfs(s, k + 1, top > o + size ? top : o + size);
    }
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* The optimum, knowing a plan of total `upper` exists. */
static uint64_t brute_optimum(const mp_plan_buf *bufs, int32_t n, uint64_t align, uint64_t upper)
{
    brute s = {.bufs = bufs, .n = n, .align = align, .g = 0, .best = upper + 1};
    assert_true(n <= 16);
    for (int32_t i = 0; i < n; i++)
        s.g = gcd(s.g, mp_plan_align_up(bufs[i].size, align));
    if (s.g == 0)
        return 0;
    brute_dfs(&s, 0, 0);
    return s.best;
}

/* The optimum again, another way: every order of the buffers, each placed at the lowest
 * offset free of the buffers already placed and alive with it. (Placing the buffers of an
 * optimal plan in order of their offsets puts each at or below its offset there, so some
 * order reaches the optimum.) Branches that cannot beat the best so far are cut. */
typedef struct orders {
    const mp_plan_buf *bufs;
    int32_t n;
    uint64_t align, best;
    uint64_t off[16];
    bool placed[16];
} orders;

static void orders_dfs(orders *s, int32_t k, uint64_t top)
{
    if (top >= s->best)
        return;
    if (k == s->n) {
        s->best = top;
        return;
    }
    for (int32_t i = 0; i < s->n; i++) {
        if (s->placed[i])
            continue;
        const mp_plan_buf *b = &s->bufs[i];
        uint64_t size = mp_plan_align_up(b->size, s->align), o = 0;
        /* Raise o past every placed neighbour it overlaps until none does. */
        for (bool moved = size > 0; moved;) {
            moved = false;
            for (int32_t j = 0; j < s->n; j++) {
                const mp_plan_buf *c = &s->bufs[j];
                uint64_t cs = mp_plan_align_up(c->size, s->align);
                if (s->placed[j] && cs > 0 && b->first <= c->last && c->first <= b->last &&
                    o < s->off[j] + cs && s->off[j] < o + size) {
                    o = s->off[j] + cs;
                    moved = true;
                }
            }
        }
        s->placed[i] = true;
        s->off[i] = o;
        orders_dfs(s, k + 1, top > o + size ? top : o + size);
        s->placed[i] = false;
    }
}

static uint64_t orders_optimum(const mp_plan_buf *bufs, int32_t n, uint64_t align,
                               uint64_t upper)
{
    orders s = {.bufs = bufs, .n = n, .align = align, .best = upper + 1};
    assert_true(n <= 16);
    orders_dfs(&s, 0, 0);
    return s.best;
}

/* ---- hand-computed graphs --------------------------------------------------------------- */

static void test_registered(void **state)
{
    (void)state;
    const mp_planner *p = planner("search");
    assert_string_equal(p->name, "search");
    assert_non_null(p->about);
    assert_string_equal(mp_planner_default()->name, "best");
    int listed = 0;
    for (const mp_planner *const *q = mp_planner_list(); *q; q++)
        listed += *q == p;
    assert_int_equal(listed, 1);
}

/* A long-lived buffer that every heuristic puts in the middle. */
static void test_long_lived_in_the_middle(void **state)
{
    (void)state;
    /* Align 1. a 30 over [0,2], b 60 over [2,2], c 40 over [0,0], d 30 over [0,0].
     * Live sums: step 0: a + c + d = 100, step 1: a = 30, step 2: a + b = 90. Bound 100.
     *
     * An optimal plan: a at 0 [0,30), c at 30 [30,70), d at 70 [70,100) for step 0, and b at
     * 30 [30,90) at step 2, alive with a only: total 100, the bound. a must lie at an edge
     * of the 100 bytes, else step 0 leaves two holes summing to 70 for c (40) and d (30),
     * which fit only if the holes are exactly 40 and 30, or 30 and 40.
     *
     * greedy (largest first; ties: earlier first step, then lower index): b, c, a, d.
     *   b -> 0 [0,60). c (step 0; not alive with b) -> 0 [0,40). a (alive with b and c) ->
     *   above both, 60 [60,90). d (alive with c [0,40) and a [60,90)): the hole [40,60) is
     *   20 bytes -> 90 [90,120). Total 120.
     * firstfit (order of first use, larger first, then lower index): c, a, d, then b.
     *   c -> 0, a -> 40 [40,70), d -> 70 [70,100); b (alive with a only): the hole [0,40)
     *   is 40 bytes -> 70 [70,130). Total 130.
     * breadth: step 0 (100) before step 2 (90). Step 0's buffers largest first: c, a, d ->
     *   0, 40, 70 as firstfit; then b -> 70 as firstfit. Total 130.
     * search and best: 100. */
    mp_plan_buf bufs[] = {B(30, 0, 2), B(60, 2, 2), B(40, 0, 0), B(30, 0, 0)};
    uint64_t off[4];
    assert_int_equal(mp_plan_lower_bound(bufs, 4, 1, NULL), 100);
    assert_int_equal(plan_ok(planner("greedy"), bufs, 4, 1, off), 120);
    assert_int_equal(off[3], 90);
    assert_int_equal(plan_ok(planner("firstfit"), bufs, 4, 1, off), 130);
    assert_int_equal(off[1], 70);
    assert_int_equal(plan_ok(planner("breadth"), bufs, 4, 1, off), 130);
    assert_int_equal(off[0], 40);
    assert_int_equal(plan_ok(planner("search"), bufs, 4, 1, off), 100);
    /* a sits at an edge (see above), and b, alive with a, fits beside it. */
    assert_true(off[0] == 0 || off[0] == 70);
    assert_int_equal(plan_ok(planner("best"), bufs, 4, 1, off), 100);
    assert_int_equal(brute_optimum(bufs, 4, 1, 120), 100);
}

static void test_long_lived_five(void **state)
{
    (void)state;
    /* Align 1. p 60 [0,1], q 30 [0,0], r 40 [2,2], s 40 [0,2], t 50 [2,2].
     * Live sums: step 0: p + q + s = 130, step 1: p + s = 100, step 2: r + s + t = 130.
     * Bound 130.
     *
     * An optimal plan: s at 0 [0,40); p at 40 [40,100) and q at 100 [100,130) for step 0;
     * t at 40 [40,90) and r at 90 [90,130) for step 2 (p and q are gone by then). Total 130.
     *
     * greedy: p (60), t (50), s (40, step 0), r (40, step 2), q (30).
     *   p -> 0 [0,60). t (not alive with p) -> 0 [0,50). s (alive with both) -> 60
     *   [60,100). r (alive with t [0,50) and s [60,100)): the hole [50,60) is 10 bytes ->
     *   100 [100,140). q (alive with p and s) -> 100 [100,130). Total 140.
     * firstfit: p, s, q (step 0, larger first), then t, r (step 2).
     *   p -> 0, s -> 60 [60,100), q -> 100 [100,130). t (alive with s only): the hole
     *   [0,60) holds it -> 0 [0,50). r (alive with t and s): [50,60) is too small -> 100
     *   [100,140). Total 140.
     * breadth: step 0 (130) before step 2 (130, later), step 1 has nothing new. Step 0:
     *   p, s, q -> 0, 60, 100 as firstfit. Step 2: t, r: the only gap t fits in is [0,60)
     *   -> 0; r -> 100 as firstfit. Total 140.
     * search and best: 130. */
    mp_plan_buf bufs[] = {B(60, 0, 1), B(30, 0, 0), B(40, 2, 2), B(40, 0, 2), B(50, 2, 2)};
    uint64_t off[5];
    assert_int_equal(mp_plan_lower_bound(bufs, 5, 1, NULL), 130);
    assert_int_equal(plan_ok(planner("greedy"), bufs, 5, 1, off), 140);
    assert_int_equal(off[3], 60);
    assert_int_equal(plan_ok(planner("firstfit"), bufs, 5, 1, off), 140);
    assert_int_equal(off[2], 100);
    assert_int_equal(plan_ok(planner("breadth"), bufs, 5, 1, off), 140);
    assert_int_equal(off[4], 0);
    assert_int_equal(plan_ok(planner("search"), bufs, 5, 1, off), 130);
    assert_int_equal(plan_ok(planner("best"), bufs, 5, 1, off), 130);
    assert_int_equal(brute_optimum(bufs, 5, 1, 140), 130);

    /* The same with align 64: p 380, q 150, r 200, s 250, t 300 round up to 384, 192, 256,
     * 256, 320, that is (size above / 10) * 64, and greedy still takes p, t, s, r, q (s is
     * now larger than r). Every total scales by 6.4: 140 -> 896, 130 -> 832. */
    mp_plan_buf big[] = {B(380, 0, 1), B(150, 0, 0), B(200, 2, 2), B(250, 0, 2), B(300, 2, 2)};
    assert_int_equal(mp_plan_lower_bound(big, 5, 64, NULL), 832);
    assert_int_equal(plan_ok(planner("greedy"), big, 5, 64, off), 896);
    assert_int_equal(plan_ok(planner("search"), big, 5, 64, off), 832);
    assert_int_equal(plan_ok(planner("best"), big, 5, 64, off), 832);
}

/* Buffers of size 0, and the cases with nothing to search. */
static void test_degenerate(void **state)
{
    (void)state;
    uint64_t off[6], total = 7;
    assert_int_equal(planner("search")->plan(NULL, 0, 64, NULL, &total, NULL), MP_OK);
    assert_int_equal(total, 0);

    /* test_long_lived_in_the_middle with two empty buffers in between: they take offset 0
     * and the others plan as before, to 100. */
    mp_plan_buf z[] = {B(30, 0, 2), B(0, 0, 2), B(60, 2, 2), B(40, 0, 0), B(0, 1, 1),
                       B(30, 0, 0)};
    assert_int_equal(plan_ok(planner("search"), z, 6, 1, off), 100);
    assert_int_equal(off[1], 0);
    assert_int_equal(off[4], 0);
    assert_int_equal(plan_ok(planner("best"), z, 6, 1, off), 100);

    /* One buffer; only empty buffers. */
    mp_plan_buf one[] = {B(10, 3, 4)};
    assert_int_equal(plan_ok(planner("search"), one, 1, 8, off), 16);
    assert_int_equal(off[0], 0);
    mp_plan_buf none[] = {B(0, 0, 1), B(0, 1, 2)};
    assert_int_equal(plan_ok(planner("search"), none, 2, 8, off), 0);
}

/* ---- optimality against the brute force ------------------------------------------------- */

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

static void test_optimal_small(void **state)
{
    (void)state;
    enum { GRAPHS = 600 };
    static const char *const three[] = {"greedy", "firstfit", "breadth"};
    mp_plan_buf bufs[8];
    uint64_t off[8];
    rng_state = 4242;
    int missed = 0, above_bound = 0;
    for (int g = 0; g < GRAPHS; g++) {
        int32_t n = 3 + (int32_t)rnd_below(6); /* 3..8 buffers */
        int32_t steps = 2 + (int32_t)rnd_below(6);
        uint64_t align = rnd_below(3) == 0 ? 64 : 1;
        uint64_t unit = rnd_below(2) ? 10 : 1;
        for (int32_t i = 0; i < n; i++) {
            int32_t first = (int32_t)rnd_below((uint64_t)steps);
            int32_t last = first + (int32_t)rnd_below((uint64_t)(steps - first));
            /* align 1: 1..5 times 1 or 10; align 64: any size up to 5 * 64 bytes. */
            uint64_t size = align == 1 ? unit * (1 + rnd_below(5)) : 1 + rnd_below(5 * 64);
            if (rnd_below(12) == 0)
                size = 0;
            bufs[i] = B(size, first, last);
        }
        uint64_t lb = mp_plan_lower_bound(bufs, n, align, NULL);
        uint64_t t_min = UINT64_MAX;
        for (int k = 0; k < 3; k++) {
            uint64_t t = plan_ok(planner(three[k]), bufs, n, align, off);
            t_min = t < t_min ? t : t_min;
        }
        uint64_t opt = orders_optimum(bufs, n, align, t_min);
        if (n <= 6)
            assert_int_equal(brute_optimum(bufs, n, align, t_min), opt);
        assert_true(opt >= lb);
        assert_true(opt <= t_min);
        uint64_t t_search = plan_ok(planner("search"), bufs, n, align, off);
        uint64_t t_best = plan_ok(planner("best"), bufs, n, align, off);
        if (t_search != opt || t_best != opt)
            fail_msg("graph %d: optimum %llu, search %llu, best %llu", g,
                     (unsigned long long)opt, (unsigned long long)t_search,
                     (unsigned long long)t_best);
        missed += t_min > opt;
        above_bound += opt > lb;
    }
    /* The heuristics missed the optimum on some of these graphs (the search did not). */
    assert_true(missed > 0);
    (void)above_bound; /* rare at this size: see test_optimum_above_bound */
}

/* Graphs whose optimum is above the live-set lower bound: the search must find a plan no
 * heuristic bound certifies. (Found by a random search for such graphs; the optimum is
 * established here by the two brute forces.) */
static void test_optimum_above_bound(void **state)
{
    (void)state;
    /* The first by hand, align 1. Live sums: step 0: #3 + #4 = 5 + 3 = 8; step 1: #0 + #3
     * + #6 = 2 + 5 + 2 = 9; step 2: #0 + #5 + #6 = 6; step 3: #0 + #1 + #5 + #6 = 8;
     * step 4: #0 + #2 + #5 = 8; step 5: #2 + #7 = 4 + 5 = 9. Bound 9. */
    static const mp_plan_buf g[4][8] = {
        {B(2, 1, 4), B(2, 3, 3), B(4, 4, 5), B(5, 0, 1), B(3, 0, 0), B(2, 2, 4), B(2, 1, 3),
         B(5, 5, 5)},
        {B(4, 5, 5), B(2, 4, 5), B(3, 1, 4), B(2, 2, 5), B(2, 3, 4), B(4, 1, 1), B(1, 0, 3),
         B(3, 2, 2)},
        {B(1, 2, 4), B(3, 2, 3), B(5, 4, 5), B(3, 5, 5), B(2, 3, 4), B(5, 1, 1), B(1, 3, 3),
         B(3, 1, 2)},
        {B(4, 4, 5), B(4, 5, 5), B(3, 0, 0), B(1, 3, 5), B(1, 3, 4), B(2, 2, 4), B(2, 2, 3),
         B(5, 0, 2)},
    };
    assert_int_equal(mp_plan_lower_bound(g[0], 8, 1, NULL), 9);
    uint64_t off[8];
    for (int k = 0; k < 4; k++) {
        uint64_t lb = mp_plan_lower_bound(g[k], 8, 1, NULL);
        uint64_t naive = mp_plan_naive(g[k], 8, 1);
        uint64_t opt = orders_optimum(g[k], 8, 1, naive);
        assert_int_equal(brute_optimum(g[k], 8, 1, naive), opt);
        assert_true(opt > lb);
        assert_int_equal(plan_ok(planner("search"), g[k], 8, 1, off), opt);
        assert_int_equal(plan_ok(planner("best"), g[k], 8, 1, off), opt);
    }
}

/* ---- randomized properties -------------------------------------------------------------- */

/* A random graph: either as in test_plan.c (short and long lifetimes over few steps, sizes
 * on several scales, some empty) or a chain of operators with skip connections. */
static void random_graph(mp_plan_buf *bufs, int32_t n)
{
    if (rnd_below(2)) {
        static const uint64_t scales[] = {16, 100, 4096, 1 << 20};
        int32_t steps = 1 + (int32_t)rnd_below((uint64_t)n + 1);
        for (int32_t i = 0; i < n; i++) {
            int32_t first = (int32_t)rnd_below((uint64_t)steps);
            int32_t len =
                rnd_below(2) ? (int32_t)rnd_below(3) : (int32_t)rnd_below((uint64_t)steps);
            int32_t last = first + len < steps ? first + len : steps - 1;
            uint64_t size = rnd_below(20) == 0 ? 0 : 1 + rnd_below(scales[rnd_below(4)]);
            bufs[i] = B(size, first, last);
        }
        return;
    }
    /* Buffer i is made at step i and read by the next step, sometimes also much later. */
    for (int32_t i = 0; i < n; i++) {
        int32_t last = i + 1;
        if (rnd_below(4) == 0)
            last += 1 + (int32_t)rnd_below(6);
        bufs[i] = B((uint64_t)1 << (6 + rnd_below(12)), i, last);
    }
}

static void test_random_properties(void **state)
{
    (void)state;
    static const uint64_t aligns[] = {1, 8, 64};
    static const char *const three[] = {"greedy", "firstfit", "breadth"};
    enum { GRAPHS = 150, MAX_N = 160 };
    mp_plan_buf *bufs = malloc(sizeof(mp_plan_buf) * MAX_N);
    uint64_t *off = malloc(sizeof(uint64_t) * MAX_N);
    uint64_t *again = malloc(sizeof(uint64_t) * MAX_N);
    assert_non_null(bufs);
    assert_non_null(off);
    assert_non_null(again);
    rng_state = 20250107;
    int improved = 0;
    for (int g = 0; g < GRAPHS; g++) {
        int32_t n = 1 + (int32_t)rnd_below(MAX_N);
        uint64_t align = aligns[rnd_below(3)];
        random_graph(bufs, n);
        uint64_t lb = mp_plan_lower_bound(bufs, n, align, NULL);
        uint64_t t_min = UINT64_MAX;
        for (int k = 0; k < 3; k++) {
            uint64_t t = plan_ok(planner(three[k]), bufs, n, align, off);
            t_min = t < t_min ? t : t_min;
        }
        static const char *const searching[] = {"best", "search"};
        for (int k = 0; k < 2; k++) {
            const mp_planner *p = planner(searching[k]);
            uint64_t t = plan_ok(p, bufs, n, align, off);
            if (t < lb || t > t_min)
                fail_msg("graph %d (%s): total %llu outside [bound %llu, heuristics %llu]", g,
                         p->name, (unsigned long long)t, (unsigned long long)lb,
                         (unsigned long long)t_min);
            improved += k == 0 && t < t_min;
            /* Deterministic: the same input (in another array) gives the same plan. */
            mp_plan_buf *copy = malloc(sizeof(mp_plan_buf) * (size_t)n);
            assert_non_null(copy);
            memcpy(copy, bufs, sizeof(mp_plan_buf) * (size_t)n);
            uint64_t t2 = 0;
            assert_int_equal(p->plan(copy, n, align, again, &t2, NULL), MP_OK);
            assert_int_equal(t2, t);
            assert_memory_equal(again, off, sizeof(uint64_t) * (size_t)n);
            free(copy);
        }
    }
    assert_true(improved > 0); /* best's search found something the heuristics did not */
    free(bufs);
    free(off);
    free(again);
}

/* Working memory is charged to the engine kind and all given back. */
static void test_working_memory(void **state)
{
    (void)state;
    mp_plan_buf bufs[] = {B(60, 0, 1), B(30, 0, 0), B(40, 2, 2), B(40, 0, 2), B(50, 2, 2)};
    uint64_t off[5], total;
    mp_mem *m = mp_mem_create();
    assert_int_equal(planner("search")->plan(bufs, 5, 1, off, &total, m), MP_OK);
    assert_int_equal(total, 130);
    const mp_mem_stats *s = mp_mem_get_stats(m);
    assert_true(s->peak[MP_MEM_ENGINE] > 0);
    assert_int_equal(s->live_total, 0);
    assert_int_equal(s->n_alloc, s->n_free);
    mp_mem_destroy(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registered),
        cmocka_unit_test(test_long_lived_in_the_middle),
        cmocka_unit_test(test_long_lived_five),
        cmocka_unit_test(test_degenerate),
        cmocka_unit_test(test_optimal_small),
        cmocka_unit_test(test_optimum_above_bound),
        cmocka_unit_test(test_random_properties),
        cmocka_unit_test(test_working_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
