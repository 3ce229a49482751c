/* The work a shape change causes, and when the arena is planned (issue 19, items 4 and 5),
 * checked from the trace alone (arenas are the blocks PLAN events place tensors in; a run is
 * every phase `run K`), never from the session's own counters:
 *   - call order D in static mode: every run after a shape change allocates its new arena
 *     inside that run, with inputs copied (set_input must re-plan to have somewhere to copy
 *     to) as with inputs bound, and the run's time (mp_session_last_run_ns) covers that work;
 *   - call order C: planning at prepare frees an arena no run used; planning at the first
 *     run makes one arena, used (the default stays prepare: docs/memory.md). */
#include "tests/util/testutil.h"

#include <stdlib.h>
#include <string.h>

#include "engine/model/reference_input.h"
#include "engine/session.h"

#define MODEL "zoo:mobilenet_v2_dynamic" /* input signature [1,-1,-1,3], 224x224 in the file */
#define MAX_RUNS 8
#define MAX_ARENAS 32

static mp_session *open_with(mp_memory_mode mode, mp_plan_at plan_at, mp_trace *tr)
{
    mp_session *s = NULL;
    mp_error err = {0};
    mp_session_options so = {.threads = 1, .mode = mode, .plan_at = plan_at, .trace = tr};
    assert_int_equal(mp_session_create(&so, &s, &err), MP_OK);
    if (mp_session_load(s, MODEL, &err) != MP_OK)
        fail_msg("load %s: %s", MODEL, err.msg);
    return s;
}

static void set_side(mp_session *s, int32_t side)
{
    mp_error err = {0};
    const int32_t dims[4] = {1, side, side, 3};
    if (mp_session_set_input_shape(s, 0, 4, dims, &err) != MP_OK)
        fail_msg("set shape: %s", err.msg);
}

/* The input's data for its current shape: copied in, or bound (buffer kept in *bound). */
static void feed(mp_session *s, bool bind, void **bound)
{
    mp_error err = {0};
    const mp_tensor *t = mp_session_input(s, 0);
    size_t cap = t->bytes + MP_INPUT_SLACK;
    void *buf = calloc(1, cap);
    assert_non_null(buf);
    assert_true(mp_reference_input(buf, t->dtype, mp_tensor_elements(t), 0));
    mp_status st = bind ? mp_session_set_input_buffer(s, 0, buf, cap, &err)
                        : mp_session_set_input(s, 0, buf, t->bytes, &err);
    if (st != MP_OK)
        fail_msg("feed: %s", err.msg);
    if (bind) {
        free(*bound); /* the session now reads the new one */
        *bound = buf;
    } else {
        free(buf);
    }
}

/* What the trace says of arenas and runs. */
typedef struct facts {
    int n_arenas;
    uint64_t arena_id[MAX_ARENAS];
    bool arena_used[MAX_ARENAS];       /* an operator ran between its allocation and its free */
    int arena_allocs_in_run[MAX_RUNS + 1]; /* arenas allocated inside phases `run K` */
    int arena_allocs_elsewhere;        /* arenas allocated in any other phase after prepare */
    uint64_t run_phase_ns[MAX_RUNS + 1]; /* the phases `run K` summed */
} facts;

static int arena_index(const facts *f, uint64_t id)
{
    for (int i = 0; i < f->n_arenas; i++)
        if (f->arena_id[i] == id)
            return i;
    return -1;
}

static void read_trace(const mp_trace *tr, facts *f)
{
    memset(f, 0, sizeof *f);
    const mp_event *ev = mp_trace_events(tr);
    size_t n = mp_trace_count(tr);
    /* arenas: the blocks tensors are planned into */
    for (size_t i = 0; i < n; i++)
        if (ev[i].type == MP_EV_PLAN && arena_index(f, ev[i].id) < 0) {
            assert_true(f->n_arenas < MAX_ARENAS);
            f->arena_id[f->n_arenas++] = ev[i].id;
        }
    int cur_kind = -1;
    uint64_t cur_run = 0, begin_ns = 0;
    bool prepared = false;
    bool live[MAX_ARENAS] = {false};
    for (size_t i = 0; i < n; i++) {
        const mp_event *e = &ev[i];
        if (e->type == MP_EV_PHASE_BEGIN) {
            cur_kind = (int)e->aux;
            cur_run = cur_kind == MP_PHASE_RUN ? e->id : 0;
            begin_ns = e->t_ns;
        } else if (e->type == MP_EV_PHASE_END) {
            if (cur_kind == MP_PHASE_RUN && cur_run <= MAX_RUNS)
                f->run_phase_ns[cur_run] += e->t_ns - begin_ns;
            prepared |= cur_kind == MP_PHASE_PREPARE;
            cur_kind = -1;
        } else if (e->type == MP_EV_OP_BEGIN) {
            for (int a = 0; a < f->n_arenas; a++)
                if (live[a])
                    f->arena_used[a] = true;
        } else if (e->type == MP_EV_ALLOC || e->type == MP_EV_FREE) {
            int a = arena_index(f, e->id);
            if (a < 0)
                continue;
            live[a] = e->type == MP_EV_ALLOC;
            if (e->type == MP_EV_ALLOC && cur_kind == MP_PHASE_RUN && cur_run <= MAX_RUNS)
                f->arena_allocs_in_run[cur_run]++;
            else if (e->type == MP_EV_ALLOC && prepared)
                f->arena_allocs_elsewhere++;
        }
    }
}

/* Call order D in static mode: prepare at the file's shape, then before every run a new
 * shape (32x32, 48x48, 32x32, ...). Static mode caches no plan, so by the definition of D
 * every run meets a shape the arena was not made for: exactly one arena per run, made in
 * that run, whether the input is copied or bound. */
static void play_d(bool bind, facts *f, uint64_t *run_ns)
{
    mp_trace *tr = mp_trace_create();
    assert_non_null(tr);
    mp_session *s = open_with(MP_MEMORY_STATIC, MP_PLAN_AT_PREPARE, tr);
    mp_error err = {0};
    assert_int_equal(mp_session_prepare(s, &err), MP_OK);
    void *bound = NULL;
    for (int r = 1; r <= 4; r++) {
        set_side(s, r % 2 ? 32 : 48);
        feed(s, bind, &bound);
        if (mp_session_run(s, &err) != MP_OK)
            fail_msg("run %d: %s", r, err.msg);
        run_ns[r] = mp_session_last_run_ns(s);
    }
    mp_session_destroy(s);
    free(bound);
    read_trace(tr, f);
    mp_trace_destroy(tr);
}

static void test_shape_change_work_is_the_runs(void **state)
{
    (void)state;
    facts fc, fb;
    uint64_t ns_c[MAX_RUNS + 1] = {0}, ns_b[MAX_RUNS + 1] = {0};
    play_d(false, &fc, ns_c);
    play_d(true, &fb, ns_b);
    const facts *both[2] = {&fc, &fb};
    const uint64_t *ns[2] = {ns_c, ns_b};
    for (int k = 0; k < 2; k++) {
        const facts *f = both[k];
        const char *io = k ? "bind" : "copy";
        /* one arena at prepare, then one per run */
        assert_int_equal(f->n_arenas, 1 + 4);
        assert_int_equal(f->arena_allocs_elsewhere, 0);
        for (int r = 1; r <= 4; r++) {
            if (f->arena_allocs_in_run[r] != 1)
                fail_msg("--io %s: run %d allocated %d arenas in its phases (expected 1)", io, r,
                         f->arena_allocs_in_run[r]);
            /* the run's time covers all of its phases, the re-plan made at set_input included */
            if (ns[k][r] < f->run_phase_ns[r])
                fail_msg("--io %s: run %d timed %llu ns, its phases took %llu ns", io, r,
                         (unsigned long long)ns[k][r], (unsigned long long)f->run_phase_ns[r]);
        }
    }
    for (int r = 1; r <= 4; r++)
        assert_int_equal(fc.arena_allocs_in_run[r], fb.arena_allocs_in_run[r]);
}

/* Call order C (prepare at the file's shape, then 32x32 before the first run) with the
 * policy given; the facts of its trace. */
static void play_c(mp_memory_mode mode, mp_plan_at plan_at, facts *f, mp_session_memory *mi)
{
    mp_trace *tr = mp_trace_create();
    assert_non_null(tr);
    mp_session *s = open_with(mode, plan_at, tr);
    mp_error err = {0};
    assert_int_equal(mp_session_prepare(s, &err), MP_OK);
    set_side(s, 32);
    void *bound = NULL;
    for (int r = 0; r < 3; r++) {
        feed(s, false, &bound);
        if (mp_session_run(s, &err) != MP_OK)
            fail_msg("run: %s", err.msg);
    }
    mp_session_memory_info(s, mi);
    mp_session_destroy(s);
    read_trace(tr, f);
    mp_trace_destroy(tr);
}

static int unused_arenas(const facts *f)
{
    int n = 0;
    for (int a = 0; a < f->n_arenas; a++)
        n += !f->arena_used[a];
    return n;
}

static void test_plan_at_first_run(void **state)
{
    (void)state;
    facts f;
    mp_session_memory mi;
    for (int m = 0; m < 2; m++) {
        mp_memory_mode mode = m ? MP_MEMORY_AUTO : MP_MEMORY_STATIC;
        /* planned at prepare: the arena for 224x224 is freed when the shape changes, unused */
        play_c(mode, MP_PLAN_AT_PREPARE, &f, &mi);
        assert_int_equal(f.n_arenas, 2);
        assert_int_equal(unused_arenas(&f), 1);
        assert_false(f.arena_used[0]);
        assert_int_equal(mi.arenas_unused, 1);
        assert_int_equal(mi.plans_made, 2);
        /* planned at the first run: one arena, for the shape the runs use */
        play_c(mode, MP_PLAN_AT_FIRST_RUN, &f, &mi);
        assert_int_equal(f.n_arenas, 1);
        assert_int_equal(unused_arenas(&f), 0);
        assert_int_equal(f.arena_allocs_in_run[1], 1);
        assert_int_equal(mi.arenas_made, 1);
        assert_int_equal(mi.arenas_unused, 0);
        assert_int_equal(mi.plans_made, 1);
        assert_int_equal(mi.plan_at, MP_PLAN_AT_FIRST_RUN);
    }
    /* the default is prepare in both modes: first-run's first run creates the operators
     * too (docs/memory.md) */
    play_c(MP_MEMORY_AUTO, MP_PLAN_AT_DEFAULT, &f, &mi);
    assert_int_equal(mi.plan_at, MP_PLAN_AT_PREPARE);
    assert_int_equal(unused_arenas(&f), 1);
    play_c(MP_MEMORY_STATIC, MP_PLAN_AT_DEFAULT, &f, &mi);
    assert_int_equal(mi.plan_at, MP_PLAN_AT_PREPARE);
    assert_int_equal(unused_arenas(&f), 1);
}

/* Plan at the first run, case A (no shape change): prepare allocates no arena, the first
 * run plans one, later runs reuse it and allocate nothing; the outputs' sizes are known
 * after prepare (nothing to re-prepare for them). */
static void test_first_run_case_a(void **state)
{
    (void)state;
    mp_trace *tr = mp_trace_create();
    mp_session *s = open_with(MP_MEMORY_AUTO, MP_PLAN_AT_FIRST_RUN, tr);
    mp_error err = {0};
    set_side(s, 40);
    assert_int_equal(mp_session_prepare(s, &err), MP_OK);
    assert_false(mp_session_needs_prepare(s));
    mp_session_memory mi;
    mp_session_memory_info(s, &mi);
    assert_int_equal(mi.arena_bytes, 0);
    assert_int_equal(mi.arenas_made, 0);
    void *bound = NULL;
    for (int r = 0; r < 3; r++) {
        feed(s, false, &bound);
        assert_int_equal(mp_session_run(s, &err), MP_OK);
    }
    mp_session_memory_info(s, &mi);
    assert_int_equal(mi.arenas_made, 1);
    assert_int_equal(mi.plans_made, 1);
    assert_true(mi.arena_bytes > 0);
    mp_session_destroy(s);
    facts f;
    read_trace(tr, &f);
    assert_int_equal(f.n_arenas, 1);
    assert_int_equal(f.arena_allocs_in_run[1], 1);
    assert_int_equal(f.arena_allocs_in_run[2] + f.arena_allocs_in_run[3], 0);
    mp_trace_destroy(tr);
}

static void test_plan_at_names(void **state)
{
    (void)state;
    assert_int_equal(mp_plan_at_parse("prepare"), MP_PLAN_AT_PREPARE);
    assert_int_equal(mp_plan_at_parse("first-run"), MP_PLAN_AT_FIRST_RUN);
    assert_int_equal(mp_plan_at_parse("later"), -1);
    assert_string_equal(mp_plan_at_name(MP_PLAN_AT_FIRST_RUN), "first-run");
    mp_session *s = NULL;
    mp_error err = {0};
    mp_session_options so = {.plan_at = (mp_plan_at)7};
    assert_int_equal(mp_session_create(&so, &s, &err), MP_ERR_ARG);
    assert_null(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shape_change_work_is_the_runs),
        cmocka_unit_test(test_plan_at_first_run),
        cmocka_unit_test(test_first_run_case_a),
        cmocka_unit_test(test_plan_at_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
