/* Tests of what memprof plan shows for a model of several subgraphs
 * (mp_session_subgraph_plan_items and the planners compared on each subgraph's buffers):
 * a WHILE model whose cond and body subgraphs have tensors of known sizes, every subgraph's
 * buffers, lower bound and planners' arenas worked out by hand here; the arenas the session
 * holds added up and checked against the arena blocks a traced run of the same model
 * allocates (the independent figure). A loop whose variable grows has its subgraphs planned
 * at prepare and again while running (the run makes arenas). A CALL_ONCE's init subgraph is planned as its first run
 * plans it and its arena freed again (the trace shows it alive in run 1 only); an IF's
 * branch its constant condition does not take is not planned; a subgraph out of range is
 * refused naming it. */
#include "tests/util/testutil.h"

#include <stdlib.h>
#include <string.h>

#include "engine/memory/plan.h"
#include "engine/memory/plan_compare.h"
#include "engine/model/tflite_writer.h"
#include "engine/session.h"
#include "tests/util/cf_models.h"
#include "trace/trace.h"

/* x is float [L]: 400 B, 448 B in a 64 B slot; i (int32 [1]) and a bool [1] take 64 B. */
enum { L = 100, XS = 448, IS = 64 };

static mp_session *open_static(const mp_test_model *b, mp_trace *tr)
{
    mp_session_options o = {.threads = 1, .mode = MP_MEMORY_STATIC, .trace = tr};
    return mp_test_session(b, &o, "sg.tflite");
}

/* Subgraph k's listing, expected `when`; *arena the session's arena for it. */
static mp_plan_item *list(mp_session *s, int32_t k, int32_t *n, mp_subgraph_when want,
                          uint64_t *arena)
{
    mp_plan_item *items = NULL;
    mp_subgraph_when when;
    mp_error err = {0};
    mp_status st = mp_session_subgraph_plan_items(s, k, &items, n, &when, arena, &err);
    if (st != MP_OK)
        fail_msg("subgraph %d: %s", (int)k, err.msg);
    assert_int_equal(when, want);
    return items;
}

/* Item of tensor t (or NULL). */
static const mp_plan_item *item_of(const mp_plan_item *v, int32_t n, int32_t t)
{
    for (int32_t i = 0; i < n; i++)
        if (v[i].tensor == t)
            return &v[i];
    return NULL;
}

static void expect_item(const mp_plan_item *v, int32_t n, int32_t t, uint64_t bytes,
                        int32_t first, int32_t last)
{
    const mp_plan_item *it = item_of(v, n, t);
    assert_non_null(it);
    assert_int_equal(it->bytes, bytes);
    assert_int_equal(it->first, first);
    assert_int_equal(it->last, last);
}

/* Every planner on the items: the bound, naive, best (the default) and bump's arenas. */
static void expect_planners(const mp_plan_item *v, int32_t n, uint64_t bound, int32_t step,
                            uint64_t naive, uint64_t best)
{
    mp_plan_buf *b = calloc((size_t)n + 1, sizeof *b);
    assert_non_null(b);
    for (int32_t i = 0; i < n; i++)
        b[i] = (mp_plan_buf){v[i].bytes, v[i].first, v[i].last};
    mp_plan_compare c;
    mp_error err = {0};
    assert_int_equal(mp_plan_compare_run(b, n, 64, mp_planner_default(), false, &c, &err), MP_OK);
    assert_int_equal(c.lower_bound, bound);
    assert_int_equal(c.lower_bound_step, step);
    assert_int_equal(c.naive, naive);
    for (int i = 0; i < c.n_res; i++) {
        const mp_plan_result *r = &c.res[i];
        assert_true(r->valid);
        assert_true(r->arena >= bound && r->arena <= naive);
        if (strcmp(r->planner->name, "best") == 0)
            assert_int_equal(r->arena, best);
        if (strcmp(r->planner->name, "bump") == 0)
            assert_int_equal(r->arena, naive);
    }
    mp_plan_compare_free(&c);
    free(b);
}

/* Bytes of static (arena) blocks live when run `run` begins, and the most live in it. */
static void arenas_in_run(const mp_trace *tr, uint64_t run, int64_t *at_begin, int64_t *peak)
{
    const mp_event *ev = mp_trace_events(tr);
    int64_t live = 0;
    bool in = false;
    *at_begin = *peak = -1;
    for (size_t k = 0; k < mp_trace_count(tr); k++) {
        const mp_event *e = &ev[k];
        if (e->type == MP_EV_PHASE_BEGIN && e->aux == MP_PHASE_RUN) {
            in = e->id == run;
            if (in)
                *at_begin = *peak = live;
        } else if (e->type == MP_EV_PHASE_END && e->aux == MP_PHASE_RUN) {
            in = false;
        }
        if (e->kind != MP_KIND_STATIC)
            continue;
        if (e->type == MP_EV_ALLOC)
            live += (int64_t)e->bytes;
        else if (e->type == MP_EV_FREE)
            live -= (int64_t)e->bytes;
        else if (e->type == MP_EV_REALLOC)
            live += (int64_t)e->bytes - (int64_t)e->aux;
        if (in && live > *peak)
            *peak = live;
    }
}

/* Arena blocks allocated inside run `run`. */
static int arenas_made_in_run(const mp_trace *tr, uint64_t run)
{
    const mp_event *ev = mp_trace_events(tr);
    bool in = false;
    int count = 0;
    for (size_t k = 0; k < mp_trace_count(tr); k++) {
        if (ev[k].type == MP_EV_PHASE_BEGIN && ev[k].aux == MP_PHASE_RUN)
            in = ev[k].id == run;
        else if (ev[k].type == MP_EV_PHASE_END && ev[k].aux == MP_PHASE_RUN)
            in = false;
        count += in && ev[k].type == MP_EV_ALLOC && ev[k].kind == MP_KIND_STATIC;
    }
    return count;
}

/* WHILE i < 3: i + 1, x * 2 + 1 (x float [100]). */
static void test_while_subgraphs(void **state)
{
    (void)state;
    mp_test_model b = mp_cf_while_model(3, L);
    mp_session *s = open_static(&b, NULL);
    int32_t n;
    uint64_t arena[3];

    /* subgraph 0, main: one op, WHILE (i, x) -> (i_end, x_end); every tensor alive at op 0:
     * bound = naive = 64 + 448 + 64 + 448 = 1024 */
    mp_plan_item *v = list(s, 0, &n, MP_SG_AT_PREPARE, &arena[0]);
    assert_int_equal(n, 4);
    expect_item(v, n, 0, 4, 0, 0);
    expect_item(v, n, 1, 400, 0, 0);
    expect_planners(v, n, 2 * IS + 2 * XS, 0, 2 * IS + 2 * XS, 1024);
    free(v);

    /* subgraph 1, cond: LESS(ci, n) -> go; inputs ci [1], cx [100] (read by nobody: alive
     * at op 0 only), output go (bool [1]); n a constant, not planned: bound = naive =
     * 64 + 448 + 64 = 576 */
    v = list(s, 1, &n, MP_SG_AT_PREPARE, &arena[1]);
    assert_int_equal(n, 3);
    expect_item(v, n, 0, 4, 0, 0);   /* ci */
    expect_item(v, n, 1, 400, 0, 0); /* cx */
    expect_item(v, n, 3, 1, 0, 0);   /* go */
    expect_planners(v, n, 576, 0, 576, 576);
    free(v);

    /* subgraph 2, body: op 0 MUL(bx, two) -> twice, op 1 ADD(twice, one_f) -> bx_next,
     * op 2 ADD(bi, one_i) -> bi_next; tensors bi 0, bx 1, bi_next 2, bx_next 3, the
     * constants 4-6, twice 7. Lifetimes: bi [0,2] (an input, read at op 2), bx [0,0],
     * twice [0,1], bx_next [1,2] and bi_next [2,2] (outputs, alive to the end).
     * Alive: op 0 bi + bx + twice = 64 + 448 + 448 = 960; op 1 bi + twice + bx_next = 960;
     * op 2 bi + bx_next + bi_next = 576. Bound 960 first at op 0; naive 64 * 2 + 448 * 3 =
     * 1472 (bump); best reaches the bound (bx and bx_next share a slot, bi_next takes
     * twice's). */
    v = list(s, 2, &n, MP_SG_AT_PREPARE, &arena[2]);
    assert_int_equal(n, 5);
    expect_item(v, n, 0, 4, 0, 2);
    expect_item(v, n, 1, 400, 0, 0);
    expect_item(v, n, 7, 400, 0, 1);
    expect_item(v, n, 3, 400, 1, 2);
    expect_item(v, n, 2, 4, 2, 2);
    assert_null(item_of(v, n, 5)); /* a constant */
    expect_planners(v, n, 960, 0, 1472, 960);
    free(v);

    /* the session's arenas: the default planner's (best: 1024, 576, 960) and XNNPACK's read
     * slack past each end */
    assert_int_equal(arena[0], 1024 + MP_INPUT_SLACK);
    assert_int_equal(arena[1], 576 + MP_INPUT_SLACK);
    assert_int_equal(arena[2], 960 + MP_INPUT_SLACK);
    uint64_t held = arena[0] + arena[1] + arena[2];
    mp_plan_item *none = NULL;
    mp_subgraph_when when;
    uint64_t a;
    mp_error err = {0};
    assert_int_equal(mp_session_subgraph_plan_items(s, 3, &none, &n, &when, &a, &err), MP_ERR_ARG);
    assert_non_null(strstr(err.msg, "no subgraph 3 (the model has 3)"));
    assert_int_equal(mp_session_subgraph_plan_items(s, -1, &none, &n, &when, &a, &err), MP_ERR_ARG);
    mp_session_destroy(s);

    /* the independent figure: a traced run holds every subgraph's arena at once, from
     * prepare on, no other arena made while it loops */
    mp_trace *tr = mp_trace_create();
    s = open_static(&b, tr);
    int32_t i0 = 0;
    float x[L] = {0};
    mp_test_set_input(s, 0, &i0, sizeof i0);
    mp_test_set_input(s, 1, x, sizeof x);
    mp_test_run(s);
    int64_t at_begin, peak;
    arenas_in_run(tr, 1, &at_begin, &peak);
    assert_int_equal(at_begin, (int64_t)held);
    assert_int_equal(peak, (int64_t)held);
    assert_int_equal(arenas_made_in_run(tr, 1), 0);
    mp_session_destroy(s);
    assert_int_equal(mp_test_trace_live(tr), 0);
    mp_trace_destroy(tr);
    free(b.bytes);
}

/* A loop whose variable y grows by one element per iteration (from [1, 1]): the WHILE is
 * deferred, so cond and body are planned at prepare for y [1, 1] and again while running. */
static void test_growing_loop(void **state)
{
    (void)state;
    mp_test_model b = mp_cf_grow_model(3);
    mp_session *s = open_static(&b, NULL);
    int32_t n;
    uint64_t arena;
    mp_plan_item *v = list(s, 1, &n, MP_SG_AGAIN, &arena);
    free(v);
    /* body: bi 0, by 1, then one_i 2, one_f 3, tail 4 (constants), plus 5, by2 6, bi2 7;
     * op 0 ADD(by, one_f) -> plus, op 1 CONCATENATION(plus, tail) -> by2, op 2 ADD -> bi2.
     * Every buffer takes one 64 B slot (by, plus [1,1], by2 [1,2], bi, bi2 [1]): bi [0,2],
     * by [0,0], plus [0,1], by2 [1,2], bi2 [2,2]: three alive at every op, bound 192 (first
     * at op 0), naive 320; best reaches the bound (by2 takes by's slot, bi2 plus's). */
    v = list(s, 2, &n, MP_SG_AGAIN, &arena);
    assert_int_equal(n, 5);
    expect_item(v, n, 1, 4, 0, 0);
    expect_item(v, n, 5, 4, 0, 1);
    expect_item(v, n, 6, 8, 1, 2);
    expect_planners(v, n, 3 * IS, 0, 5 * IS, 3 * IS);
    free(v);
    assert_int_equal(arena, 3 * IS + MP_INPUT_SLACK);
    mp_session_destroy(s);

    /* the run plans them again: arenas made inside it (none in the fixed loop's) */
    mp_trace *tr = mp_trace_create();
    s = open_static(&b, tr);
    int32_t i0 = 0;
    float y0 = 0.0f;
    mp_test_set_input(s, 0, &i0, sizeof i0);
    mp_test_set_input(s, 1, &y0, sizeof y0);
    mp_test_run(s);
    assert_true(arenas_made_in_run(tr, 1) > 0);
    mp_session_destroy(s);
    mp_trace_destroy(tr);
    free(b.bytes);
}

/* ---- CALL_ONCE ---------------------------------------------------------------------------- */

static int handle(mp_tfw *w, const char *name)
{
    int h = mp_tfw_tensor(w, name, MP_DT_RESOURCE, 0, NULL, 0, NULL);
    mp_op_options o = mp_tfw_options_default();
    o.var_shared_name = "v";
    mp_tfw_op(w, MP_OP_VAR_HANDLE, 0, NULL, 1, &h, &o);
    return h;
}

static int read_var(mp_tfw *w, int h, const char *name)
{
    int t = mp_tfw_tensor(w, name, MP_DT_FLOAT32, 1, (int32_t[]){L}, 0, NULL);
    mp_tfw_op(w, MP_OP_READ_VARIABLE, 1, &h, 1, &t, NULL);
    return t;
}

/* main: CALL_ONCE(init); y = READ_VARIABLE(v) + x (x, y float [100]).
 * init (subgraph 1): r = RANDOM_UNIFORM([100]) (stateful: never folded, planned); s = r + r;
 * v = s. */
static mp_test_model call_once_model(void)
{
    mp_tfw *w = mp_tfw_create();
    mp_op_options o = mp_tfw_options_default();
    o.subgraph_a = 1;
    mp_tfw_op(w, MP_OP_CALL_ONCE, 0, NULL, 0, NULL, &o);
    int x = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 1, (int32_t[]){L}, 0, NULL);
    int r = read_var(w, handle(w, "h"), "read");
    int y = mp_tfw_tensor(w, "y", MP_DT_FLOAT32, 1, (int32_t[]){L}, 0, NULL);
    mp_tfw_op(w, MP_OP_ADD, 2, (int32_t[]){r, x}, 1, &y, NULL);
    mp_tfw_io(w, 1, &x, 1, &y);

    mp_tfw_subgraph(w, "init");
    const int32_t len = L;
    int h = handle(w, "ih");
    int shape = mp_tfw_tensor(w, "shape", MP_DT_INT32, 1, (int32_t[]){1},
                              mp_tfw_buffer(w, &len, sizeof len), NULL);
    int ir = mp_tfw_tensor(w, "r", MP_DT_FLOAT32, 1, (int32_t[]){L}, 0, NULL);
    mp_tfw_op(w, MP_OP_RANDOM_UNIFORM, 1, &shape, 1, &ir, NULL);
    int is = mp_tfw_tensor(w, "s", MP_DT_FLOAT32, 1, (int32_t[]){L}, 0, NULL);
    mp_tfw_op(w, MP_OP_ADD, 2, (int32_t[]){ir, ir}, 1, &is, NULL);
    mp_tfw_op(w, MP_OP_ASSIGN_VARIABLE, 2, (int32_t[]){h, is}, 0, NULL, NULL);
    mp_tfw_io(w, 0, NULL, 0, NULL);
    return mp_test_tfw_finish(w);
}

static void test_call_once_subgraph(void **state)
{
    (void)state;
    mp_test_model b = call_once_model();
    mp_session *s = open_static(&b, NULL);
    int32_t n;
    uint64_t arena;
    /* init: ops 0 VAR_HANDLE -> ih (tensor 0), 1 RANDOM_UNIFORM(shape 1) -> r (2), 2 ADD ->
     * s (3), 3 ASSIGN: r [1,2], s [2,3]; nobody reads r after the ADD, so s takes r's slot
     * (in place, docs/memory.md), which then lives from op 1 to op 3: one buffer of 448 */
    mp_plan_item *v = list(s, 1, &n, MP_SG_AT_RUN, &arena);
    assert_int_equal(n, 1);
    expect_item(v, n, 2, 400, 1, 3);
    expect_planners(v, n, XS, 1, XS, XS);
    free(v);
    assert_int_equal(arena, XS + MP_INPUT_SLACK);
    uint64_t main_arena;
    v = list(s, 0, &n, MP_SG_AT_PREPARE, &main_arena);
    free(v);
    mp_session_memory mi;
    mp_session_memory_info(s, &mi);
    assert_int_equal(mi.arena_bytes, main_arena); /* the listing freed init's again */
    mp_session_destroy(s);

    /* the trace: main's arena held from prepare; init's added while run 1 calls it, freed
     * after; run 2 holds main's alone */
    mp_trace *tr = mp_trace_create();
    s = open_static(&b, tr);
    float x[L] = {0}, y[2][L];
    for (int r = 0; r < 2; r++) {
        mp_test_set_input(s, 0, x, sizeof x);
        mp_test_run(s);
        mp_test_get_output(s, 0, y[r], sizeof y[r]);
    }
    /* init ran once: both runs read the same variable */
    assert_memory_equal(y[0], y[1], sizeof y[0]);
    int64_t at_begin, peak;
    arenas_in_run(tr, 1, &at_begin, &peak);
    assert_int_equal(at_begin, (int64_t)main_arena);
    assert_int_equal(peak, (int64_t)(main_arena + arena));
    arenas_in_run(tr, 2, &at_begin, &peak);
    assert_int_equal(peak, (int64_t)main_arena);
    mp_session_destroy(s);
    mp_trace_destroy(tr);
    free(b.bytes);
}

/* ---- IF on a constant condition ----------------------------------------------------------- */

/* main: y = IF(true, x): then (subgraph 1) x * 2, else (subgraph 2) x + 10; x, y float [100]. */
static mp_test_model if_model(void)
{
    mp_tfw *w = mp_tfw_create();
    const uint8_t yes = 1;
    int c = mp_tfw_tensor(w, "c", MP_DT_BOOL, 1, (int32_t[]){1}, mp_tfw_buffer(w, &yes, 1), NULL);
    int x = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 1, (int32_t[]){L}, 0, NULL);
    int y = mp_tfw_tensor(w, "y", MP_DT_FLOAT32, 1, (int32_t[]){L}, 0, NULL);
    mp_op_options o = mp_tfw_options_default();
    o.subgraph_a = 1;
    o.subgraph_b = 2;
    mp_tfw_op(w, MP_OP_IF, 2, (int32_t[]){c, x}, 1, &y, &o);
    mp_tfw_io(w, 1, &x, 1, &y);
    static const char *const names[2] = {"then", "else"};
    for (int k = 0; k < 2; k++) {
        mp_tfw_subgraph(w, names[k]);
        int bx = mp_tfw_tensor(w, "bx", MP_DT_FLOAT32, 1, (int32_t[]){L}, 0, NULL);
        int by = mp_tfw_tensor(w, "by", MP_DT_FLOAT32, 1, (int32_t[]){L}, 0, NULL);
        int cst = mp_cf_const_f32(w, "k", k ? 10.0f : 2.0f);
        mp_tfw_op(w, k ? MP_OP_ADD : MP_OP_MUL, 2, (int32_t[]){bx, cst}, 1, &by, NULL);
        mp_tfw_io(w, 1, &bx, 1, &by);
    }
    return mp_test_tfw_finish(w);
}

static void test_if_branch_not_taken(void **state)
{
    (void)state;
    mp_test_model b = if_model();
    mp_session *s = open_static(&b, NULL);
    int32_t n;
    uint64_t arena;
    /* then: bx and by, both alive at its one op: 448 + 448 */
    mp_plan_item *v = list(s, 1, &n, MP_SG_AT_PREPARE, &arena);
    assert_int_equal(n, 2);
    expect_planners(v, n, 2 * XS, 0, 2 * XS, 2 * XS);
    free(v);
    assert_int_equal(arena, 2 * XS + MP_INPUT_SLACK);
    /* else: the constant condition never takes it */
    v = list(s, 2, &n, MP_SG_NONE, &arena);
    assert_int_equal(n, 0);
    assert_null(v);
    assert_int_equal(arena, 0);
    mp_session_destroy(s);
    free(b.bytes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_while_subgraphs),
        cmocka_unit_test(test_growing_loop),
        cmocka_unit_test(test_call_once_subgraph),
        cmocka_unit_test(test_if_branch_not_taken),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
