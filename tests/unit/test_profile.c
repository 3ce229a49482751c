/* Tests of the profile analyzer (timeline, lifetimes, plan quality, per operator, waste,
 * diff) and of its text and JSON reports.
 *
 * Hand-built traces first: every expected figure is worked out in the comments next to the
 * events. Then real sessions recorded through the engine (zoo models, and the shared models
 * when ../shared/models exists), checked against invariants derived here: the timeline's
 * kinds add up to its heap, its peak is the summary's, arenas are at least their lower
 * bound, planned lifetimes repeat the PLAN events (read from the trace by this file), the
 * JSON parses with the documented fields and the text fits in 80 columns. */
#include "tests/util/testutil.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyzers/baseline.h"
#include "analyzers/profile.h"
#include "analyzers/source.h"
#include "engine/model/reference_input.h"
#include "engine/session.h"
#include "trace/trace.h"
#include "reports/chrome_trace.h"
#include "reports/json_profile.h"
#include "reports/text_profile.h"
#include "tests/util/trace_builder.h"

/* ---- building traces by hand ------------------------------------------------------------ */

/* The small model of trace_builder.h; the tests move its clock (b.t) themselves. */
static mp_tb new_builder(void)
{
    mp_tb b = mp_tb_create(0, 0);
    mp_tb_small_model(&b, "zoo:by_hand");
    return b;
}

static mp_profile profile_of(const mp_trace *tr, size_t max_points)
{
    mp_source *src = mp_source_of_trace(tr);
    assert_non_null(src);
    mp_profile p;
    mp_error err = {0};
    mp_profile_options opt = {.max_points = max_points};
    if (mp_profile_compute(src, &opt, &p, &err) != MP_OK)
        fail_msg("mp_profile_compute: %s", err.msg);
    mp_source_close(src);
    return p;
}

/* ---- the main hand-made session ----------------------------------------------------------
 *
 * load, prepare (arena 2 with slots for t1 and t2; t0's io buffer; op0's kernel buffer; a
 * dynamic buffer for t1 freed again before any run), run 1 and run 2 over the three
 * operators (t3 gets a dynamic buffer from op2 in run 1 and keeps it), teardown.
 * Heap after each event in the comments. */
#define HAND_EVENTS 42

static void hand_session(mp_tb *b, uint64_t t1_bytes, uint64_t t2_bytes, int t3_kind)
{
    mp_tb_phase(b, MP_PHASE_LOAD, 0);                      /* e0   phase 0 */
    mp_tb_alloc(b, 1, 100, MP_KIND_ENGINE, -1, -1);        /* e1   100 */
    mp_tb_alloc(b, 9, 7000, MP_KIND_CONST, -1, -1);        /* e2   100 (mapped, not heap) */
    mp_tb_end(b);                                          /* e3 */
    mp_tb_phase(b, MP_PHASE_PREPARE, 0);                   /* e4   phase 1 */
    mp_tb_alloc(b, 2, 1000, MP_KIND_STATIC, -1, -1);       /* e5   1100: arena */
    mp_tb_plan(b, 2, 1, 0, t1_bytes, 0, 1);                /* e6   t1 [0, t1) ops 0..1 */
    mp_tb_plan(b, 2, 2, 400, t2_bytes, 1, 2);              /* e7   t2 [400, ..) ops 1..2 */
    mp_tb_alloc(b, 3, 64, MP_KIND_IO, 0, -1);              /* e8   1164: t0's buffer */
    mp_tb_alloc(b, 8, 100, MP_KIND_DYNAMIC, 1, -1);        /* e9   1264: never used */
    mp_tb_free(b, 8, 100, MP_KIND_DYNAMIC, 1, -1);         /* e10  1164 */
    mp_tb_alloc(b, 4, 200, MP_KIND_KERNEL, -1, 0);         /* e11  1364: op0's */
    mp_tb_end(b);                                          /* e12 */
    mp_tb_phase(b, MP_PHASE_RUN, 1);                       /* e13  phase 2 */
    mp_tb_op(b, MP_EV_OP_BEGIN, 0);                        /* e14  step 0 */
    mp_tb_alloc(b, 5, 50, MP_KIND_SCRATCH, -1, 0);         /* e15  1414 */
    mp_tb_free(b, 5, 50, MP_KIND_SCRATCH, -1, 0);          /* e16  1364 */
    b->t += 100;
    mp_tb_op(b, MP_EV_OP_END, 0);                          /* e17  op0 took 100 */
    mp_tb_op(b, MP_EV_OP_BEGIN, 1);                        /* e18  step 1 */
    mp_tb_alloc(b, 6, 300, MP_KIND_SCRATCH, -1, 1);        /* e19  1664 PEAK */
    mp_tb_free(b, 6, 300, MP_KIND_SCRATCH, -1, 1);         /* e20  1364 */
    b->t += 10;
    mp_tb_op(b, MP_EV_OP_END, 1);                          /* e21  op1 took 10 */
    mp_tb_op(b, MP_EV_OP_BEGIN, 2);                        /* e22  step 2 */
    mp_tb_alloc(b, 7, 200, t3_kind, 3, 2);                 /* e23  1564: t3's buffer */
    mp_tb_op(b, MP_EV_OP_END, 2);                          /* e24  op2 took 0 */
    mp_tb_end(b);                                          /* e25 */
    mp_tb_phase(b, MP_PHASE_RUN, 2);                       /* e26  phase 3 */
    mp_tb_op(b, MP_EV_OP_BEGIN, 0);                        /* e27  step 3 */
    b->t += 300;
    mp_tb_op(b, MP_EV_OP_END, 0);                          /* e28  op0 took 300 */
    mp_tb_op(b, MP_EV_OP_BEGIN, 1);                        /* e29  step 4 */
    mp_tb_alloc(b, 10, 50, MP_KIND_SCRATCH, -1, 1);        /* e30  1614 */
    mp_tb_free(b, 10, 50, MP_KIND_SCRATCH, -1, 1);         /* e31  1564 */
    mp_tb_op(b, MP_EV_OP_END, 1);                          /* e32 */
    mp_tb_op(b, MP_EV_OP_BEGIN, 2);                        /* e33  step 5 */
    mp_tb_op(b, MP_EV_OP_END, 2);                          /* e34 */
    mp_tb_end(b);                                          /* e35 */
    mp_tb_phase(b, MP_PHASE_TEARDOWN, 0);                  /* e36  phase 4 */
    mp_tb_free(b, 7, 200, t3_kind, 3, 2);                  /* e37  1364 */
    mp_tb_free(b, 4, 200, MP_KIND_KERNEL, -1, 0);          /* e38  1164 */
    mp_tb_free(b, 3, 64, MP_KIND_IO, 0, -1);               /* e39  1100 */
    mp_tb_free(b, 2, 1000, MP_KIND_STATIC, -1, -1);        /* e40  100 */
    mp_tb_end(b);                                          /* e41 */
    assert_int_equal(b->n, HAND_EVENTS);
}

static uint64_t heap_of(const mp_tl_point *pt)
{
    uint64_t h = 0;
    for (int k = 0; k < MP_KIND_COUNT; k++)
        if (k != MP_KIND_CONST)
            h += pt->live[k];
    return h;
}

static void test_hand_peak_and_timeline(void **state)
{
    (void)state;
    mp_tb b = new_builder();
    hand_session(&b, 400, 400, MP_KIND_DYNAMIC);
    mp_profile p = profile_of(b.tr, 0);

    /* Peak 1664 at e19 = engine 100 + arena 1000 + io 64 + kernel 200 + scratch 300, in
     * run 1 (phase 2) inside op 1: the reference run is run 1. */
    assert_int_equal(p.summary.peak_heap, 1664);
    assert_int_equal(p.summary.peak.event, 19);
    assert_int_equal(p.reference_run, 1);
    assert_int_equal(p.reference_phase, 2);
    assert_int_equal(p.n_steps, 6);

    /* By event, 42 events under 2000 points: one point per event, heap after the event. */
    const mp_timeline *te = &p.by_event;
    assert_int_equal(te->per_point, 1);
    assert_int_equal(te->n, HAND_EVENTS);
    assert_int_equal(te->peak, 19);
    assert_int_equal(te->pts[19].heap, 1664);
    assert_int_equal(te->pts[19].live[MP_KIND_SCRATCH], 300);
    assert_int_equal(te->pts[19].live[MP_KIND_CONST], 7000);
    assert_int_equal(te->pts[19].phase_kind, MP_PHASE_RUN);
    assert_int_equal(te->pts[19].run, 1);
    assert_int_equal(te->pts[19].op, 1);
    assert_int_equal(te->pts[10].heap, 1164);
    assert_int_equal(te->pts[23].heap, 1564);
    assert_int_equal(te->pts[23].live[MP_KIND_DYNAMIC], 200);
    assert_int_equal(te->pts[41].heap, 100);
    /* Steps begun: 0 before e14, 1 from e14, 2 from e18, ... 6 from e33. */
    assert_int_equal(te->pts[13].step_last, 0);
    assert_int_equal(te->pts[14].step_first, 1);
    assert_int_equal(te->pts[33].step_first, 6);
    assert_false(te->has_rss);
    for (size_t i = 0; i < te->n; i++) {
        assert_int_equal(heap_of(&te->pts[i]), te->pts[i].heap);
        assert_int_equal(te->pts[i].ev_first, i);
        assert_int_equal(te->pts[i].ev_last, i);
    }

    /* By step: 7 values of "steps begun" (0..6), one point each. The point of step count
     * s holds the highest heap among its events:
     *   0: e0..e13 -> 1364 (e11)    1: e14..e17 -> 1414 (e15)   2: e18..e21 -> 1664 (e19)
     *   3: e22..e26 -> 1564 (e23)   4: e27..e28 -> 1564         5: e29..e32 -> 1614 (e30)
     *   6: e33..e41 -> 1564 (e33) */
    const mp_timeline *ts = &p.by_step;
    static const uint64_t want[7] = {1364, 1414, 1664, 1564, 1564, 1614, 1564};
    assert_int_equal(ts->per_point, 1);
    assert_int_equal(ts->n, 7);
    assert_int_equal(ts->peak, 2);
    for (size_t i = 0; i < 7; i++) {
        assert_int_equal(ts->pts[i].heap, want[i]);
        assert_int_equal(ts->pts[i].step_first, i);
        assert_int_equal(ts->pts[i].step_last, i);
        assert_int_equal(heap_of(&ts->pts[i]), want[i]);
    }
    assert_int_equal(ts->pts[0].ev_first, 0);
    assert_int_equal(ts->pts[0].ev_last, 13);
    assert_int_equal(ts->pts[2].ev_first, 18);
    assert_int_equal(ts->pts[2].ev_last, 21);
    assert_int_equal(ts->pts[0].phase_kind, MP_PHASE_PREPARE);
    assert_int_equal(ts->pts[5].run, 2);
    assert_int_equal(ts->pts[5].op, 1);
    assert_int_equal(ts->pts[6].ev_last, 41);
    mp_profile_free(&p);
    mp_trace_destroy(b.tr);
}

static void test_hand_small_timelines(void **state)
{
    (void)state;
    mp_tb b = new_builder();
    hand_session(&b, 400, 400, MP_KIND_DYNAMIC);
    mp_profile p = profile_of(b.tr, 4);

    /* By event, 4 points: 42 / 4 -> 11 events per point: e0..e10, e11..e21, e22..e32,
     * e33..e41. The peak (e19) is in point 1, exact: 1664, scratch 300. */
    const mp_timeline *te = &p.by_event;
    assert_int_equal(te->per_point, 11);
    assert_int_equal(te->n, 4);
    assert_int_equal(te->peak, 1);
    assert_int_equal(te->pts[1].ev_first, 11);
    assert_int_equal(te->pts[1].ev_last, 21);
    assert_int_equal(te->pts[1].heap, 1664);
    assert_int_equal(te->pts[1].live[MP_KIND_SCRATCH], 300);
    assert_int_equal(te->pts[0].heap, 1264); /* e9 */
    assert_int_equal(te->pts[2].heap, 1614); /* e30 */
    assert_int_equal(te->pts[3].heap, 1564); /* e33 */
    assert_int_equal(te->pts[3].ev_last, 41);

    /* By step, 7 step counts into at most 4 points: the width doubles once (1 -> 2), so
     * the points are step counts 0-1, 2-3, 4-5, 6. Highest heaps: 1414, 1664, 1614, 1564. */
    const mp_timeline *ts = &p.by_step;
    static const uint64_t want[4] = {1414, 1664, 1614, 1564};
    assert_int_equal(ts->per_point, 2);
    assert_int_equal(ts->n, 4);
    assert_int_equal(ts->peak, 1);
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(ts->pts[i].heap, want[i]);
        assert_int_equal(ts->pts[i].step_first, 2 * i);
        assert_int_equal(heap_of(&ts->pts[i]), want[i]);
    }
    assert_int_equal(ts->pts[1].step_last, 3);
    assert_int_equal(ts->pts[1].ev_first, 18);
    assert_int_equal(ts->pts[1].ev_last, 26);
    assert_int_equal(ts->pts[1].op, 1);
    mp_profile_free(&p);

    /* One point: everything merged, the peak kept. */
    p = profile_of(b.tr, 1);
    assert_int_equal(p.by_event.n, 1);
    assert_int_equal(p.by_event.pts[0].heap, 1664);
    assert_int_equal(p.by_event.pts[0].ev_last, 41);
    assert_int_equal(p.by_step.n, 1);
    assert_int_equal(p.by_step.pts[0].heap, 1664);
    assert_int_equal(p.by_step.pts[0].step_first, 0);
    assert_int_equal(p.by_step.pts[0].step_last, 6);
    mp_profile_free(&p);
    mp_trace_destroy(b.tr);
}

static void test_hand_lifetimes(void **state)
{
    (void)state;
    mp_tb b = new_builder();
    hand_session(&b, 400, 400, MP_KIND_DYNAMIC);
    mp_profile p = profile_of(b.tr, 0);
    assert_int_equal(p.n_lifetimes, 5);
    const mp_lifetime *l = p.lifetimes;

    /* t0: io buffer from prepare, live through run 1: from its first operator (0) to the
     * last one begun (2); model input, no producer. */
    assert_int_equal(l[0].manager, MP_MGR_IO);
    assert_int_equal(l[0].bytes, 64);
    assert_int_equal(l[0].first_op, 0);
    assert_int_equal(l[0].last_op, 2);
    assert_int_equal(l[0].offset, -1);
    assert_int_equal(l[0].producer, -1);
    /* t1: slot [0, 400) of arena 2, ops 0..1 as planned; its dynamic buffer of prepare was
     * gone before run 1, so it is not a home. Produced by op0. */
    assert_int_equal(l[1].manager, MP_MGR_ARENA);
    assert_int_equal(l[1].bytes, 400);
    assert_int_equal(l[1].offset, 0);
    assert_int_equal(l[1].arena_id, 2);
    assert_int_equal(l[1].first_op, 0);
    assert_int_equal(l[1].last_op, 1);
    assert_int_equal(l[1].producer, 0);
    assert_string_equal(l[1].producer_name, "CONV_2D");
    assert_string_equal(l[1].name, "a");
    /* t2: slot [400, 800), ops 1..2. */
    assert_int_equal(l[2].manager, MP_MGR_ARENA);
    assert_int_equal(l[2].offset, 400);
    assert_int_equal(l[2].first_op, 1);
    assert_int_equal(l[2].last_op, 2);
    /* t3: dynamic buffer allocated inside op2 (run 1), kept: ops 2..2, 200 bytes. */
    assert_int_equal(l[3].manager, MP_MGR_DYNAMIC);
    assert_int_equal(l[3].bytes, 200);
    assert_int_equal(l[3].first_op, 2);
    assert_int_equal(l[3].last_op, 2);
    assert_int_equal(l[3].producer, 2);
    /* t4: constant, never held. */
    assert_int_equal(l[4].manager, MP_MGR_CONST);
    assert_int_equal(l[4].bytes, 0);
    assert_string_equal(mp_manager_name(MP_MGR_ARENA), "arena");
    assert_string_equal(mp_manager_name(MP_MGR_NONE), "none");
    mp_profile_free(&p);
    mp_trace_destroy(b.tr);
}

static void test_hand_plan_ops_waste(void **state)
{
    (void)state;
    mp_tb b = new_builder();
    hand_session(&b, 400, 400, MP_KIND_DYNAMIC);
    mp_profile p = profile_of(b.tr, 0);

    /* Arena 2: 1000 bytes; slots t1 [0,400) ops 0..1 and t2 [400,800) ops 1..2.
     * Live slot bytes per operator: op0 400, op1 800, op2 400 -> lower bound 800 at op 1;
     * naive 400 + 400 = 800; used 800; free bytes per operator 600, 200, 600 (worst 600,
     * first at op 0). Live from e5 to e40, through runs 1 and 2. */
    assert_int_equal(p.n_arenas_total, 1);
    assert_int_equal(p.n_arenas, 1);
    assert_int_equal(p.reference_arena, 0);
    const mp_arena_report *a = &p.arenas[0];
    assert_int_equal(a->id, 2);
    assert_int_equal(a->bytes, 1000);
    assert_int_equal(a->used, 800);
    assert_int_equal(a->lower_bound, 800);
    assert_int_equal(a->lower_bound_op, 1);
    assert_int_equal(a->naive, 800);
    assert_int_equal(a->alloc_event, 5);
    assert_int_equal(a->free_event, 40);
    assert_int_equal(a->runs, 2);
    assert_true(a->in_reference_run);
    assert_int_equal(a->n_slots, 2);
    assert_int_equal(a->slots[0].tensor, 1);
    assert_int_equal(a->slots[1].tensor, 2);
    assert_int_equal(a->slots[1].offset, 400);
    assert_int_equal(a->n_ops, 3);
    assert_int_equal(a->free_at_op[0], 600);
    assert_int_equal(a->free_at_op[1], 200);
    assert_int_equal(a->free_at_op[2], 600);
    assert_int_equal(a->frag_max, 600);
    assert_int_equal(a->frag_max_op, 0);

    /* Operators. op0: 2 steps of 100 and 300 ns; allocated its kernel buffer (200, owner
     * op0, at prepare) and 50 of scratch: 2 allocations, 250 bytes; scratch 50, kernel 200;
     * output t1 = 400. op1: 2 steps (10, 0 ns); scratch 300 and 50: 2 allocations, 350
     * bytes, scratch peak 300; output t2 = 400. op2: t3's buffer (owner op2): 1 allocation,
     * 200 bytes; output t3 = 200. */
    assert_int_equal(p.n_ops, 3);
    const mp_op_report *o = p.ops;
    assert_string_equal(o[0].name, "CONV_2D");
    assert_int_equal(o[0].n_exec, 2);
    assert_int_equal(o[0].time_ns, 400);
    assert_int_equal(o[0].min_ns, 100);
    assert_int_equal(o[0].max_ns, 300);
    assert_int_equal(o[0].n_alloc, 2);
    assert_int_equal(o[0].bytes_alloc, 250);
    assert_int_equal(o[0].scratch_bytes, 50);
    assert_int_equal(o[0].kernel_bytes, 200);
    assert_int_equal(o[0].output_bytes, 400);
    assert_int_equal(o[1].n_exec, 2);
    assert_int_equal(o[1].time_ns, 10);
    assert_int_equal(o[1].min_ns, 0);
    assert_int_equal(o[1].max_ns, 10);
    assert_int_equal(o[1].n_alloc, 2);
    assert_int_equal(o[1].bytes_alloc, 350);
    assert_int_equal(o[1].scratch_bytes, 300);
    assert_int_equal(o[1].kernel_bytes, 0);
    assert_int_equal(o[1].output_bytes, 400);
    assert_int_equal(o[2].n_alloc, 1);
    assert_int_equal(o[2].bytes_alloc, 200);
    assert_int_equal(o[2].output_bytes, 200);
    /* Allocations not attributed to an operator: engine 100, arena 1000, io 64, t1's
     * buffer 100: the operators' 800 are the rest of the summary's 1864 - 1064. */
    assert_int_equal(p.summary.bytes_alloc, 100 + 1000 + 64 + 100 + 200 + 50 + 300 + 200 + 50);

    /* Waste: t1's dynamic buffer (block 8, 100 bytes) lived e9..e10 in prepare, when no
     * operator ran; every other judged block was live during a step. */
    assert_int_equal(p.n_unused, 1);
    assert_int_equal(p.unused_bytes, 100);
    assert_int_equal(p.n_unused_listed, 1);
    assert_int_equal(p.unused[0].id, 8);
    assert_int_equal(p.unused[0].kind, MP_KIND_DYNAMIC);
    assert_int_equal(p.unused[0].tensor, 1);
    assert_string_equal(p.unused[0].name, "a");
    assert_int_equal(p.unused[0].phase_kind, MP_PHASE_PREPARE);
    assert_int_equal(p.unused[0].alloc_event, 9);
    mp_profile_free(&p);
    mp_trace_destroy(b.tr);
}

/* Call order C: the arena planned at prepare is released by a shape change before any run;
 * the input copy plans again for the new shape. */
static void test_call_order_c(void **state)
{
    (void)state;
    mp_tb b = new_builder();
    mp_tb_phase(&b, MP_PHASE_PREPARE, 0);                  /* e0  phase 0 */
    mp_tb_alloc(&b, 20, 1000, MP_KIND_STATIC, -1, -1);     /* e1  arena A */
    mp_tb_plan(&b, 20, 1, 0, 400, 0, 1);                   /* e2 */
    mp_tb_plan(&b, 20, 2, 400, 400, 1, 2);                 /* e3 */
    mp_tb_alloc(&b, 21, 30, MP_KIND_KERNEL, -1, 1);        /* e4  op1's, kept */
    mp_tb_end(&b);                                         /* e5 */
    mp_tb_phase(&b, MP_PHASE_SHAPE, 0);                    /* e6  phase 1 */
    mp_tb_free(&b, 20, 1000, MP_KIND_STATIC, -1, -1);      /* e7  A released, never used */
    mp_tb_end(&b);                                         /* e8 */
    mp_tb_phase(&b, MP_PHASE_IO, 0);                       /* e9  phase 2 */
    mp_tb_alloc(&b, 22, 2000, MP_KIND_STATIC, -1, -1);     /* e10 arena B */
    mp_tb_plan(&b, 22, 1, 0, 800, 0, 1);                   /* e11 */
    mp_tb_plan(&b, 22, 2, 800, 800, 1, 2);                 /* e12 */
    mp_tb_plan(&b, 22, 0, 1600, 300, 0, 0);                /* e13 the input t0 */
    mp_tb_end(&b);                                         /* e14 */
    mp_tb_phase(&b, MP_PHASE_RUN, 1);                      /* e15 phase 3 */
    for (int32_t o = 0; o < 3; o++) {
        mp_tb_op(&b, MP_EV_OP_BEGIN, o);
        mp_tb_op(&b, MP_EV_OP_END, o);
    }                                                   /* e16..e21 */
    mp_tb_end(&b);                                         /* e22 */
    mp_tb_phase(&b, MP_PHASE_TEARDOWN, 0);                 /* e23 */
    mp_tb_free(&b, 22, 2000, MP_KIND_STATIC, -1, -1);      /* e24 */
    mp_tb_free(&b, 21, 30, MP_KIND_KERNEL, -1, 1);         /* e25 */
    mp_tb_end(&b);                                         /* e26 */
    mp_profile p = profile_of(b.tr, 0);

    /* Peak: B 2000 + kernel 30 = 2030 from e10 (io phase): no run holds the peak, so the
     * reference run is the last one, run 1. */
    assert_int_equal(p.summary.peak_heap, 2030);
    assert_int_equal(p.reference_run, 1);
    assert_int_equal(p.reference_phase, 3);
    /* Two arenas. A: lower bound 800 (op 1: 400 + 400), naive 800, used 800, no run.
     * B: lower bound 1600 at op 1 (op0: 800 + 300 = 1100, op1: 1600, op2: 800), naive
     * 1900, used 1900, 1 run, the reference run's. */
    assert_int_equal(p.n_arenas_total, 2);
    assert_int_equal(p.n_arenas, 2);
    assert_int_equal(p.arenas[0].id, 20);
    assert_int_equal(p.arenas[0].runs, 0);
    assert_int_equal(p.arenas[0].lower_bound, 800);
    assert_int_equal(p.arenas[0].free_event, 7);
    assert_false(p.arenas[0].in_reference_run);
    assert_int_equal(p.arenas[1].id, 22);
    assert_int_equal(p.arenas[1].runs, 1);
    assert_int_equal(p.arenas[1].lower_bound, 1600);
    assert_int_equal(p.arenas[1].lower_bound_op, 1);
    assert_int_equal(p.arenas[1].naive, 1900);
    assert_int_equal(p.arenas[1].used, 1900);
    assert_int_equal(p.arenas[1].free_at_op[0], 900);
    assert_int_equal(p.arenas[1].free_at_op[1], 400);
    assert_int_equal(p.arenas[1].free_at_op[2], 1200);
    assert_int_equal(p.arenas[1].frag_max, 1200);
    assert_int_equal(p.arenas[1].frag_max_op, 2);
    assert_true(p.arenas[1].in_reference_run);
    assert_int_equal(p.reference_arena, 1);
    /* Lifetimes come from B. */
    assert_int_equal(p.lifetimes[1].arena_id, 22);
    assert_int_equal(p.lifetimes[1].bytes, 800);
    assert_int_equal(p.lifetimes[0].manager, MP_MGR_ARENA);
    assert_int_equal(p.lifetimes[0].offset, 1600);
    assert_int_equal(p.lifetimes[0].first_op, 0);
    assert_int_equal(p.lifetimes[0].last_op, 0);
    assert_int_equal(p.lifetimes[3].manager, MP_MGR_NONE);
    /* Waste: A, 1000 bytes, allocated in prepare (e1) and freed before any operator ran. */
    assert_int_equal(p.n_unused, 1);
    assert_int_equal(p.unused_bytes, 1000);
    assert_int_equal(p.unused[0].id, 20);
    assert_int_equal(p.unused[0].kind, MP_KIND_STATIC);
    assert_int_equal(p.unused[0].tensor, -1);
    assert_null(p.unused[0].name);
    assert_int_equal(p.unused[0].phase_kind, MP_PHASE_PREPARE);
    assert_int_equal(p.unused[0].alloc_event, 1);

    /* With room for one arena only, the reference run's is the one kept. */
    mp_source *src = mp_source_of_trace(b.tr);
    mp_profile q;
    mp_profile_options opt = {.max_arenas = 1};
    assert_int_equal(mp_profile_compute(src, &opt, &q, NULL), MP_OK);
    assert_int_equal(q.n_arenas_total, 2);
    assert_int_equal(q.n_arenas, 1);
    assert_int_equal(q.arenas[0].id, 22);
    assert_int_equal(q.reference_arena, 0);
    mp_profile_free(&q);
    mp_source_close(src);
    mp_profile_free(&p);
    mp_trace_destroy(b.tr);
}

/* RSS samples: each point carries the last sample at or before its last event. */
static void test_rss_samples(void **state)
{
    (void)state;
    mp_tb b = new_builder();
    mp_tb_phase(&b, MP_PHASE_LOAD, 0);                     /* e0 */
    mp_tb_alloc(&b, 1, 100, MP_KIND_ENGINE, -1, -1);       /* e1  100 */
    mp_tb_rss(&b, 5000, 6000);                             /* e2 */
    mp_tb_alloc(&b, 2, 300, MP_KIND_ENGINE, -1, -1);       /* e3  400 */
    mp_tb_rss(&b, 7000, 7000);                             /* e4 */
    mp_tb_free(&b, 2, 300, MP_KIND_ENGINE, -1, -1);        /* e5  100 */
    mp_tb_rss(&b, 4000, 7500);                             /* e6 */
    mp_tb_end(&b);                                         /* e7 */
    mp_profile p = profile_of(b.tr, 0);
    assert_true(p.by_event.has_rss);
    assert_true(p.by_step.has_rss);
    assert_int_equal(p.n_rss, 3);
    assert_int_equal(p.rss_max, 7000);
    assert_int_equal(p.rss_hwm, 7500);
    assert_int_equal(p.by_event.n, 8);
    assert_int_equal(p.by_event.pts[1].rss, 0);
    assert_int_equal(p.by_event.pts[2].rss, 5000);
    assert_int_equal(p.by_event.pts[2].rss_hwm, 6000);
    assert_int_equal(p.by_event.pts[3].rss, 5000);
    assert_int_equal(p.by_event.pts[5].rss, 7000);
    assert_int_equal(p.by_event.pts[7].rss, 4000);
    assert_int_equal(p.by_event.pts[7].rss_hwm, 7500);
    /* No steps: one by-step point, heap 400 (e3), last sample 4000. */
    assert_int_equal(p.by_step.n, 1);
    assert_int_equal(p.by_step.pts[0].heap, 400);
    assert_int_equal(p.by_step.pts[0].rss, 4000);
    /* No run: no reference run; by event in 3 points (3 events each), the peak in the
     * second (e3..e5), rss after e5 = 7000. */
    assert_int_equal(p.reference_run, -1);
    mp_profile_free(&p);
    p = profile_of(b.tr, 3);
    assert_int_equal(p.by_event.n, 3);
    assert_int_equal(p.by_event.per_point, 3);
    assert_int_equal(p.by_event.peak, 1);
    assert_int_equal(p.by_event.pts[1].heap, 400);
    assert_int_equal(p.by_event.pts[1].rss, 7000);
    assert_int_equal(p.by_event.pts[0].rss, 5000);
    mp_profile_free(&p);
    mp_trace_destroy(b.tr);
}

/* Two sessions of the same model: t1 grows 400 -> 500, t2 shrinks 400 -> 200, t3 moves
 * from a dynamic buffer to an io one of the same size. */
static void test_diff(void **state)
{
    (void)state;
    mp_tb ba = new_builder(), bb = new_builder();
    hand_session(&ba, 400, 400, MP_KIND_DYNAMIC);
    hand_session(&bb, 500, 200, MP_KIND_IO);
    mp_profile a = profile_of(ba.tr, 0), b = profile_of(bb.tr, 0);
    mp_profile_diff d;
    mp_error err = {0};
    assert_int_equal(mp_profile_diff_compute(&a, &b, &d, &err), MP_OK);
    /* Heap peaks are the same (slot sizes do not change the arena block): 1664 both; at the
     * peak (run 1, op 1), t3's buffer does not exist yet in either. Own peaks: dynamic 200
     * (t3) -> 100 (t1's buffer of prepare), io 64 -> 264 (t0 64 + t3 200). */
    assert_int_equal(d.peak_a, 1664);
    assert_int_equal(d.peak_b, 1664);
    assert_int_equal(d.kind_peak_a[MP_KIND_DYNAMIC], 200);
    assert_int_equal(d.kind_peak_b[MP_KIND_DYNAMIC], 100);
    assert_int_equal(d.kind_peak_a[MP_KIND_IO], 64);
    assert_int_equal(d.kind_peak_b[MP_KIND_IO], 264);
    assert_int_equal(d.live_a[MP_KIND_SCRATCH], 300);
    assert_int_equal(d.live_b[MP_KIND_SCRATCH], 300);
    assert_int_equal(d.arena_a, 1000);
    assert_int_equal(d.arena_b, 1000);
    /* Changed tensors, largest change first: t2 -200, t1 +100, t3 0 (manager only). */
    assert_int_equal(d.n_tensors, 3);
    assert_string_equal(d.tensors[0].name, "b");
    assert_int_equal(d.tensors[0].bytes_a, 400);
    assert_int_equal(d.tensors[0].bytes_b, 200);
    assert_string_equal(d.tensors[1].name, "a");
    assert_int_equal(d.tensors[1].tensor_a, 1);
    assert_int_equal(d.tensors[1].tensor_b, 1);
    assert_int_equal(d.tensors[1].bytes_b, 500);
    assert_string_equal(d.tensors[2].name, "out");
    assert_int_equal(d.tensors[2].manager_a, MP_MGR_DYNAMIC);
    assert_int_equal(d.tensors[2].manager_b, MP_MGR_IO);

    /* Text and JSON of the diff. */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    mp_report_diff_text(f, &a, &b, &d, false);
    fclose(f);
    assert_non_null(strstr(buf, "3 changed: 1 grew, 1 shrank"));
    assert_non_null(strstr(buf, "-200 B"));
    if (getenv("MP_TEST_SHOW"))
        printf("%s\n", buf);
    free(buf);
    json_t *j = mp_profile_diff_json(&a, &b, &d);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "format")), "memprof-diff");
    assert_int_equal(json_integer_value(json_object_get(j, "version")), 2);
    json_t *ts = json_object_get(j, "tensors");
    assert_int_equal(json_array_size(ts), 3);
    json_t *t0 = json_array_get(ts, 0);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(t0, "bytes"), "change")),
                     -200);
    json_t *dyn = json_object_get(json_object_get(j, "kinds"), "dynamic");
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(dyn, "own_peak_bytes"), "change")), -100);
    json_decref(j);

    mp_profile_diff_free(&d);
    mp_profile_free(&a);
    mp_profile_free(&b);
    mp_trace_destroy(ba.tr);
    mp_trace_destroy(bb.tr);
}

/* A long synthetic trace: many runs, points bounded, the peak exact. */
static void test_many_events(void **state)
{
    (void)state;
    mp_tb b = new_builder();
    mp_tb_phase(&b, MP_PHASE_PREPARE, 0);
    mp_tb_alloc(&b, 1, 1000, MP_KIND_STATIC, -1, -1);
    mp_tb_plan(&b, 1, 1, 0, 500, 0, 1);
    mp_tb_end(&b);
    const uint64_t runs = 50000, peak_run = 31337;
    for (uint64_t r = 1; r <= runs; r++) {
        mp_tb_phase(&b, MP_PHASE_RUN, r);
        for (int32_t o = 0; o < 3; o++) {
            mp_tb_op(&b, MP_EV_OP_BEGIN, o);
            uint64_t bytes = 10 + (r * 7 + (uint64_t)o) % 50 + (r == peak_run && o == 1 ? 100 : 0);
            mp_tb_alloc(&b, 2, bytes, MP_KIND_SCRATCH, -1, o);
            mp_tb_free(&b, 2, bytes, MP_KIND_SCRATCH, -1, o);
            mp_tb_op(&b, MP_EV_OP_END, o);
        }
        mp_tb_end(&b);
    }
    /* heap peak: 1000 + the largest scratch, of run 31337 at op 1: 10 + (219359+1)%50 + 100
     * = 10 + 10 + 100 = 120 (every other scratch is at most 59). */
    clock_t c0 = clock();
    mp_profile p = profile_of(b.tr, 500);
    double secs = (double)(clock() - c0) / CLOCKS_PER_SEC;
    print_message("  %zu events profiled in %.2f s\n", mp_trace_count(b.tr), secs);
    assert_int_equal(p.summary.peak_heap, 1120);
    assert_int_equal(p.reference_run, (int64_t)peak_run);
    assert_true(p.by_event.n <= 500);
    assert_true(p.by_step.n <= 500 && p.by_step.n >= 250);
    assert_int_equal(p.by_event.pts[p.by_event.peak].heap, 1120);
    assert_int_equal(p.by_step.pts[p.by_step.peak].heap, 1120);
    assert_int_equal(p.by_step.pts[p.by_step.peak].run, peak_run);
    assert_int_equal(p.by_step.pts[p.by_step.peak].op, 1);
    assert_int_equal(p.n_steps, 3 * runs);
    assert_int_equal(p.ops[1].n_exec, runs);
    assert_int_equal(p.ops[1].scratch_bytes, 120);
    assert_int_equal(p.arenas[0].runs, runs);
    /* consecutive points cover consecutive events */
    for (size_t i = 1; i < p.by_step.n; i++)
        assert_int_equal(p.by_step.pts[i].ev_first, p.by_step.pts[i - 1].ev_last + 1);
    for (size_t i = 1; i < p.by_event.n; i++)
        assert_int_equal(p.by_event.pts[i].ev_first, p.by_event.pts[i - 1].ev_last + 1);
    mp_profile_free(&p);
    mp_trace_destroy(b.tr);
}

/* ---- reports ------------------------------------------------------------------------------ */

/* The text report into a string; every line at most 80 columns (code points). */
static char *text_of(const mp_profile *p, bool exact)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    mp_report_profile_text(f, p, exact);
    fclose(f);
    size_t cols = 0, line = 1;
    for (const unsigned char *c = (const unsigned char *)buf; *c; c++) {
        if (*c == '\n') {
            cols = 0;
            line++;
            continue;
        }
        if ((*c & 0xC0) != 0x80)
            cols++;
        if (cols > 80)
            fail_msg("line %zu longer than 80 columns in:\n%s", line, buf);
    }
    return buf;
}

static json_t *json_of(const mp_profile *p)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    mp_error err = {0};
    assert_int_equal(mp_report_profile_json(f, p, &err), MP_OK);
    fclose(f);
    json_error_t je;
    json_t *j = json_loads(buf, 0, &je);
    if (!j)
        fail_msg("JSON does not parse: %s (line %d)", je.text, je.line);
    free(buf);
    return j;
}

static json_t *get(json_t *o, const char *path)
{
    /* "a.b.c" */
    char key[64];
    const char *p = path;
    while (*p) {
        size_t n = strcspn(p, ".");
        assert_true(n < sizeof key);
        memcpy(key, p, n);
        key[n] = '\0';
        json_t *next = json_object_get(o, key);
        if (!next)
            fail_msg("JSON field '%s' missing (at '%s')", path, key);
        o = next;
        p += n + (p[n] == '.');
    }
    return o;
}

static void check_json_fields(const mp_profile *p)
{
    json_t *j = json_of(p);
    assert_string_equal(json_string_value(get(j, "format")), "memprof-report");
    assert_int_equal(json_integer_value(get(j, "version")), 2);
    static const char *fields[] = {
        "meta.model", "meta.mode", "meta.planner", "meta.threads", "meta.tensors", "meta.ops",
        "meta.events", "meta.steps",
        "summary.time.phases.load.time_ns", "summary.time.phases.run.count", "summary.time.runs",
        "summary.time.first_run_ns", "summary.time.later_runs.median_ns",
        "summary.peak.heap_bytes", "summary.peak.when", "summary.peak.live_bytes.static",
        "summary.peak.kind_peak_bytes.kernel", "summary.peak.const_bytes", "summary.peak.slots_by_op",
        "summary.peak.alive", "summary.allocations_per_run.first_run",
        "summary.allocations_per_run.later_max", "summary.static_bytes",
        "summary.dynamic_bytes", "summary.duplicated.bytes", "summary.duplicated.when",
        "summary.duplicated.tensors", "summary.copies.in.count", "summary.copies.out.bytes",
        "summary.balance.n_alloc", "summary.balance.n_realloc", "summary.balance.n_free",
        "summary.balance.alloc_bytes", "summary.balance.freed_bytes",
        "summary.balance.live_end_bytes", "summary.balance.live_end_kind_bytes.engine", "summary.unaccounted.measured",
        "summary.unaccounted.bytes", "summary.unaccounted.process_heap_peak_bytes",
        "summary.unaccounted.allocator_overhead_bytes", "summary.health.truncated",
        "summary.health.anomalies", "summary.health.first_anomaly",
        "timeline.by_event.per_point", "timeline.by_event.peak", "timeline.by_event.has_rss",
        "timeline.by_event.points", "timeline.by_step.points", "timeline.rss.samples",
        "timeline.rss.max_bytes", "timeline.rss.hwm_bytes", "reference.run", "reference.phase_index",
        "reference.arena", "lifetimes", "arenas.total", "arenas.list", "ops",
        "waste.duplicated_bytes", "waste.unused.bytes", "waste.unused.count",
        "waste.unused.blocks", "waste.copy_in_bytes", "waste.copy_out_bytes", "waste.copies",
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        get(j, fields[i]);
    assert_int_equal(json_integer_value(get(j, "summary.peak.heap_bytes")), p->summary.peak_heap);
    json_t *pts = get(j, "timeline.by_event.points");
    assert_int_equal(json_array_size(pts), p->by_event.n);
    static const char *pt_fields[] = {"ev_first", "ev_last", "step_first", "step_last", "t_ns",
                                      "heap_bytes", "live_bytes.const", "live_bytes.engine", "phase",
                                      "run", "op", "rss_bytes", "rss_hwm_bytes"};
    if (p->by_event.n > 0) {
        json_t *pk = json_array_get(pts, p->by_event.peak);
        for (size_t i = 0; i < sizeof pt_fields / sizeof pt_fields[0]; i++)
            get(pk, pt_fields[i]);
        assert_int_equal(json_integer_value(get(pk, "heap_bytes")), p->summary.peak_heap);
    }
    json_t *lives = get(j, "lifetimes");
    assert_int_equal(json_array_size(lives), p->n_lifetimes);
    static const char *l_fields[] = {"tensor", "name", "first_op", "last_op", "bytes",
                                     "manager", "offset", "arena", "producer", "producer_name"};
    for (size_t t = 0; t < json_array_size(lives); t++)
        for (size_t i = 0; i < sizeof l_fields / sizeof l_fields[0]; i++)
            get(json_array_get(lives, t), l_fields[i]);
    json_t *ar = get(j, "arenas.list");
    assert_int_equal(json_array_size(ar), p->n_arenas);
    static const char *a_fields[] = {"id", "bytes", "used_bytes", "lower_bound_bytes",
                                     "lower_bound_op", "naive_bytes", "alloc_event",
                                     "free_event", "runs", "reference_run", "frag_max_bytes",
                                     "frag_max_op", "free_at_op_bytes", "slots"};
    for (size_t k = 0; k < json_array_size(ar); k++) {
        json_t *a = json_array_get(ar, k);
        for (size_t i = 0; i < sizeof a_fields / sizeof a_fields[0]; i++)
            get(a, a_fields[i]);
        assert_int_equal(json_integer_value(get(a, "lower_bound_bytes")), p->arenas[k].lower_bound);
        json_t *sl = get(a, "slots");
        assert_int_equal(json_array_size(sl), p->arenas[k].n_slots);
        if (json_array_size(sl) > 0) {
            static const char *s_fields[] = {"kind", "tensor", "name", "offset", "bytes",
                                             "first_op", "last_op"};
            for (size_t i = 0; i < sizeof s_fields / sizeof s_fields[0]; i++)
                get(json_array_get(sl, 0), s_fields[i]);
        }
    }
    json_t *ops = get(j, "ops");
    assert_int_equal(json_array_size(ops), p->n_ops);
    static const char *o_fields[] = {"op", "name", "n_exec", "time_ns", "min_ns", "max_ns",
                                     "n_alloc", "alloc_bytes", "scratch_bytes", "kernel_bytes",
                                     "output_bytes"};
    for (size_t k = 0; k < json_array_size(ops); k++)
        for (size_t i = 0; i < sizeof o_fields / sizeof o_fields[0]; i++)
            get(json_array_get(ops, k), o_fields[i]);
    json_t *ub = get(j, "waste.unused.blocks");
    assert_int_equal(json_array_size(ub), p->n_unused_listed);
    if (json_array_size(ub) > 0) {
        static const char *u_fields[] = {"id", "bytes", "kind", "tensor", "name", "phase",
                                         "alloc_event"};
        for (size_t i = 0; i < sizeof u_fields / sizeof u_fields[0]; i++)
            get(json_array_get(ub, 0), u_fields[i]);
    }
    json_decref(j);
}

static void test_hand_reports(void **state)
{
    (void)state;
    mp_tb b = new_builder();
    hand_session(&b, 400, 400, MP_KIND_DYNAMIC);
    /* a name that needs cutting and one that is not UTF-8 */
    mp_trace_meta *m = mp_trace_meta_mut(b.tr);
    char longname[300];
    memset(longname, 'x', 200);
    longname[200] = '\0';
    assert_true(mp_trace_set_str(b.tr, &m->tensors[1].name, longname));
    assert_true(mp_trace_set_str(b.tr, &m->tensors[2].name, "bad\xff\xfe" "name\x01"));
    mp_profile p = profile_of(b.tr, 0);
    for (int exact = 0; exact < 2; exact++) {
        char *t = text_of(&p, exact);
        if (getenv("MP_TEST_SHOW"))
            printf("%s\n", t);
        assert_non_null(strstr(t, "memprof report: zoo:by_hand"));
        assert_non_null(strstr(t, "Heap peak")); /* the summary */
        assert_non_null(strstr(t, "Timeline"));
        assert_non_null(strstr(t, "Lifetimes             run 1"));
        assert_non_null(strstr(t, "Plan quality          1 arena planned"));
        assert_non_null(strstr(t, "lower bound"));
        assert_non_null(strstr(t, "Per operator"));
        assert_non_null(strstr(t, "never used"));
        assert_non_null(strstr(t, exact ? "1664 B" : "1.6 KiB"));
        assert_non_null(strstr(t, "xxx..."));
        free(t);
    }
    check_json_fields(&p);
    json_t *j = json_of(&p);
    json_t *n2 = get(json_array_get(get(j, "lifetimes"), 2), "name");
    assert_string_equal(json_string_value(n2), "bad??name\x01");
    json_t *l3 = json_array_get(get(j, "lifetimes"), 3);
    assert_string_equal(json_string_value(get(l3, "manager")), "dynamic");
    assert_true(json_is_null(get(l3, "offset")));
    assert_int_equal(json_integer_value(get(j, "reference.run")), 1);
    json_decref(j);
    mp_profile_free(&p);
    mp_trace_destroy(b.tr);
}

static void test_empty_trace(void **state)
{
    (void)state;
    mp_tb b = new_builder();
    mp_profile p = profile_of(b.tr, 0);
    assert_int_equal(p.by_event.n, 0);
    assert_int_equal(p.by_step.n, 0);
    assert_int_equal(p.reference_run, -1);
    assert_int_equal(p.n_arenas_total, 0);
    assert_int_equal(p.n_lifetimes, 5);
    free(text_of(&p, false));
    check_json_fields(&p);
    mp_profile_free(&p);
    mp_profile_free(&p); /* freeing twice is safe */
    mp_trace_destroy(b.tr);
    assert_int_equal(mp_profile_compute(NULL, NULL, &p, NULL), MP_ERR_ARG);
    mp_profile_free(&p);
}

/* ---- real sessions ------------------------------------------------------------------------ */

static bool feed(mp_session *s)
{
    for (int k = 0; k < mp_session_input_count(s); k++) {
        const mp_tensor *t = mp_session_input(s, k);
        size_t n = 1;
        for (int32_t d = 0; d < t->rank; d++)
            n *= (size_t)t->dims[d];
        void *buf = calloc(t->bytes + 1, 1);
        assert_non_null(buf);
        bool ok = mp_reference_input(buf, t->dtype, n, k);
        mp_error err = {0};
        if (ok && mp_session_set_input(s, k, buf, t->bytes, &err) != MP_OK)
            ok = false;
        free(buf);
        if (!ok)
            return false;
    }
    return true;
}

/* Record a session: prepare, then `runs` runs (with a shape change to `dims` after prepare
 * when dims is given: call order C). NULL when the model cannot be run here. */
static mp_trace *record(const char *model, mp_memory_mode mode, int runs, const int32_t *dims)
{
    mp_trace *tr = mp_trace_create();
    assert_non_null(tr);
    mp_session *s = NULL;
    mp_error err = {0};
    mp_session_options so = {.threads = 1, .mode = mode, .trace = tr};
    assert_int_equal(mp_session_create(&so, &s, &err), MP_OK);
    bool ok = mp_session_load(s, model, &err) == MP_OK && mp_session_prepare(s, &err) == MP_OK;
    if (ok && dims)
        ok = mp_session_set_input_shape(s, 0, 4, dims, &err) == MP_OK;
    for (int r = 0; ok && r < runs; r++)
        ok = feed(s) && mp_session_run(s, &err) == MP_OK;
    mp_session_destroy(s);
    if (!ok) {
        print_message("  skip: %s\n", err.msg);
        mp_trace_destroy(tr);
        return NULL;
    }
    return tr;
}

/* The last PLAN of each (arena, tensor), read from the events here. */
typedef struct plan_rec {
    uint64_t arena, offset, bytes;
    int32_t tensor, first, last;
} plan_rec;

static void check_invariants(const mp_trace *tr, const char *label)
{
    mp_profile p = profile_of(tr, 0);
    const mp_summary *s = &p.summary;
    assert_int_equal(s->n_anomalies, 0);

    /* Timelines: kinds add up to the heap, the peak point is the summary's peak. */
    const mp_timeline *tls[2] = {&p.by_event, &p.by_step};
    for (int k = 0; k < 2; k++) {
        const mp_timeline *t = tls[k];
        assert_true(t->n > 0 && t->n <= 2000);
        uint64_t max = 0;
        for (size_t i = 0; i < t->n; i++) {
            assert_int_equal(heap_of(&t->pts[i]), t->pts[i].heap);
            if (t->pts[i].heap > max)
                max = t->pts[i].heap;
        }
        if (t->pts[t->peak].heap != s->peak_heap || max != s->peak_heap)
            fail_msg("%s: timeline %d peak %llu, summary %llu", label, k,
                     (unsigned long long)t->pts[t->peak].heap,
                     (unsigned long long)s->peak_heap);
    }
    assert_int_equal(p.by_event.pts[p.by_event.n - 1].ev_last, s->n_events - 1);

    /* Arenas: lower bound <= size, used <= size, lower bound <= naive. */
    for (size_t i = 0; i < p.n_arenas; i++) {
        const mp_arena_report *a = &p.arenas[i];
        if (a->bytes < a->lower_bound || a->used > a->bytes || a->naive < a->lower_bound)
            fail_msg("%s: arena %llu: bytes %llu, used %llu, lower bound %llu, naive %llu",
                     label, (unsigned long long)a->id, (unsigned long long)a->bytes,
                     (unsigned long long)a->used, (unsigned long long)a->lower_bound,
                     (unsigned long long)a->naive);
        for (int32_t o = 0; o < a->n_ops; o++)
            assert_true(a->free_at_op[o] >= a->bytes - a->lower_bound);
    }
    if (p.reference_run >= 0 && p.n_arenas_total > 0)
        assert_true(p.reference_arena >= 0);

    /* Operators: their allocations are part of all allocations; steps add up. */
    uint64_t bytes = 0, steps = 0;
    for (size_t i = 0; i < p.n_ops; i++) {
        bytes += p.ops[i].bytes_alloc;
        steps += p.ops[i].n_exec;
        assert_true(p.ops[i].min_ns <= p.ops[i].max_ns);
    }
    assert_true(bytes <= s->bytes_alloc);
    assert_int_equal(steps, p.n_steps);
    assert_true(p.unused_bytes <= s->bytes_alloc);

    /* Planned lifetimes repeat the last PLAN event of their tensor into their arena; a
     * tensor in place (meta shares) that of the tensor whose slot it shared, its own
     * operators inside the slot's. */
    const mp_event *ev = mp_trace_events(tr);
    size_t n_plans = 0;
    plan_rec *plans = calloc(mp_trace_count(tr) + 1, sizeof *plans);
    assert_non_null(plans);
    for (size_t i = 0; i < mp_trace_count(tr); i++) {
        if (ev[i].type != MP_EV_PLAN || ev[i].tensor < 0)
            continue;
        plan_rec r = {ev[i].id, ev[i].aux, ev[i].bytes, ev[i].tensor, ev[i].op, ev[i].op_last};
        size_t k = 0;
        while (k < n_plans && !(plans[k].arena == r.arena && plans[k].tensor == r.tensor))
            k++;
        plans[k] = r;
        if (k == n_plans)
            n_plans++;
    }
    size_t n_arena = 0;
    for (size_t t = 0; t < p.n_lifetimes; t++) {
        const mp_lifetime *l = &p.lifetimes[t];
        assert_int_equal(l->tensor, (int32_t)t);
        if (l->manager != MP_MGR_ARENA)
            continue;
        n_arena++;
        const mp_trace_tensor *mt = &mp_trace_get_meta(tr)->tensors[t];
        assert_int_equal(l->in_place, mt->in_place);
        int32_t slot_of = l->in_place ? mt->shares : l->tensor;
        size_t k = 0;
        while (k < n_plans && !(plans[k].arena == l->arena_id && plans[k].tensor == slot_of))
            k++;
        if (k == n_plans)
            fail_msg("%s: tensor %zu planned in arena %llu without a PLAN event", label, t,
                     (unsigned long long)l->arena_id);
        assert_int_equal(l->offset, plans[k].offset);
        assert_int_equal(l->bytes, plans[k].bytes);
        if (l->in_place) {
            assert_true(plans[k].first <= l->first_op && l->first_op <= l->last_op &&
                        l->last_op <= plans[k].last);
        } else {
            assert_int_equal(l->first_op, plans[k].first);
            assert_int_equal(l->last_op, plans[k].last);
        }
    }
    free(plans);
    /* In the planned modes the reference arena holds every arena lifetime. */
    if (p.reference_arena >= 0) {
        const mp_arena_report *a = &p.arenas[p.reference_arena];
        size_t tensors = 0;
        for (size_t i = 0; i < a->n_slots; i++)
            tensors += a->slots[i].kind != MP_KIND_SCRATCH;
        assert_true(n_arena >= tensors);
    }

    /* Reports. */
    char *t = text_of(&p, false);
    if (getenv("MP_TEST_SHOW"))
        printf("---- %s\n%s\n", label, t);
    free(t);
    free(text_of(&p, true));
    check_json_fields(&p);
    mp_profile_free(&p);
}

static void test_zoo_invariants(void **state)
{
    (void)state;
    static const char *models[] = {"zoo:mnist_mlp", "zoo:mobilenet_v2"};
    static const mp_memory_mode modes[] = {MP_MEMORY_AUTO, MP_MEMORY_DYNAMIC};
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        for (size_t m = 0; m < 2; m++) {
            mp_trace *tr = record(models[i], modes[m], 3, NULL);
            assert_non_null(tr);
            char label[96];
            snprintf(label, sizeof label, "%s %s", models[i], mp_memory_mode_name(modes[m]));
            check_invariants(tr, label);
            mp_trace_destroy(tr);
        }
    }
    /* mobilenet_v2_dynamic at another size after prepare: call order C */
    static const int32_t dims[4] = {1, 160, 160, 3};
    mp_trace *tr = record("zoo:mobilenet_v2_dynamic", MP_MEMORY_AUTO, 2, dims);
    assert_non_null(tr);
    check_invariants(tr, "zoo:mobilenet_v2_dynamic order C");
    mp_profile p = profile_of(tr, 0);
    /* the arena of prepare was released before any run: never used, and no run in it */
    assert_true(p.n_arenas_total >= 2);
    assert_int_equal(p.arenas[0].runs, 0);
    bool listed = false;
    for (size_t i = 0; i < p.n_unused_listed; i++)
        listed = listed || (p.unused[i].id == p.arenas[0].id &&
                            p.unused[i].bytes == p.arenas[0].bytes);
    assert_true(listed);
    assert_true(p.arenas[p.reference_arena].runs >= 1);
    mp_profile_free(&p);
    mp_trace_destroy(tr);
}

static void test_shared_invariants(void **state)
{
    (void)state;
    char **names = NULL;
    int n = mp_test_shared_model_names(&names);
    if (n == 0) {
        print_message("  skip: no shared models (MP_SHARED_DIR chooses the folder)\n");
        skip();
    }
    int checked = 0;
    for (int i = 0; i < n; i++) {
        const char *path = mp_test_path("models", names[i]);
        for (int m = 0; m < 2; m++) {
            mp_trace *tr = record(path, m ? MP_MEMORY_DYNAMIC : MP_MEMORY_AUTO, 2, NULL);
            if (!tr)
                break; /* not runnable here (said once) */
            check_invariants(tr, names[i]);
            checked++;
            mp_trace_destroy(tr);
        }
    }
    mp_test_free_names(names, n);
    print_message("  %d sessions of %d shared models checked\n", checked, n);
    assert_true(checked > 0);
    /* call order C on resnet8 when present */
    const char *path = mp_test_path("models", "tiny_ic_resnet8_float.tflite");
    static const int32_t dims[4] = {2, 32, 32, 3};
    mp_trace *tr = fopen(path, "rb") ? record(path, MP_MEMORY_AUTO, 3, dims) : NULL;
    if (tr) {
        check_invariants(tr, "resnet8 order C");
        mp_profile p = profile_of(tr, 0);
        assert_true(p.n_unused >= 1);
        assert_int_equal(p.arenas[0].runs, 0);
        mp_profile_free(&p);
        mp_trace_destroy(tr);
    }
}

/* Byte counts that add up beyond 2^63-1 (signed overflow in the arena sweeps, allocated
 * sums wrapping to "16.0 EiB" before): the trace is refused as malformed, in one line
 * naming the event, by the profile, the baseline and the Chrome trace alike. */
static void test_overflowing_sizes_refused(void **state)
{
    (void)state;
    for (int which = 0; which < MP_TB_OVERFLOW_CASES; which++) {
        mp_tb b = new_builder();
        size_t at = mp_tb_overflow(&b, which);
        char want[64];
        snprintf(want, sizeof want, "trace: event %zu: ", at);
        mp_source *src = mp_source_of_trace(b.tr);
        assert_non_null(src);
        mp_profile p;
        mp_error err = {0};
        assert_int_equal(mp_profile_compute(src, NULL, &p, &err), MP_ERR_FORMAT);
        if (!strstr(err.msg, want) || !strstr(err.msg, "2^63-1") || strchr(err.msg, '\n'))
            fail_msg("case %d: '%s' does not say '%s...2^63-1'", which, err.msg, want);
        mp_baseline bl;
        memset(&err, 0, sizeof err);
        assert_int_equal(mp_baseline_compute(src, &bl, &err), MP_ERR_FORMAT);
        assert_non_null(strstr(err.msg, want));
        mp_baseline_free(&bl);
        FILE *f = fopen("/dev/null", "w");
        assert_non_null(f);
        memset(&err, 0, sizeof err);
        mp_status st = mp_report_chrome(src, f, &err);
        fclose(f);
        if (which == 2) { /* allocated in all: the Chrome trace keeps no such sum */
            assert_int_equal(st, MP_OK);
        } else {
            assert_int_equal(st, MP_ERR_FORMAT);
            assert_non_null(strstr(err.msg, want));
        }
        mp_source_close(src);
        mp_trace_destroy(b.tr);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_peak_and_timeline),
        cmocka_unit_test(test_hand_small_timelines),
        cmocka_unit_test(test_hand_lifetimes),
        cmocka_unit_test(test_hand_plan_ops_waste),
        cmocka_unit_test(test_call_order_c),
        cmocka_unit_test(test_rss_samples),
        cmocka_unit_test(test_diff),
        cmocka_unit_test(test_many_events),
        cmocka_unit_test(test_hand_reports),
        cmocka_unit_test(test_empty_trace),
        cmocka_unit_test(test_zoo_invariants),
        cmocka_unit_test(test_shared_invariants),
        cmocka_unit_test(test_overflowing_sizes_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
