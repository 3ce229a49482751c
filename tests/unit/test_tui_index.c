/* Tests of the index behind `memprof tui` (tui/index.c): on a trace built by hand, the heap
 * and each kind at every event, what is alive (largest first) at chosen events, the peak,
 * moving by operator, tensor search and its allocation and free events, the window math and
 * the chart columns (exact and from buckets), every figure worked out in the comments; the
 * same answers whatever the checkpoint interval, from memory or from a saved file; and on
 * real sessions of zoo models, the peak and what is alive there against the summary. */
#include "tests/util/testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/source.h"
#include "analyzers/summary.h"
#include "engine/model/zoo.h"
#include "engine/session.h"
#include "trace/trace.h"
#include "tui/index.h"
#include "tests/util/trace_builder.h"

/* ---- the hand-built trace --------------------------------------------------------------- */

/* Model: t0 "input" -> op0 CONV_2D -> t1 "conv_out" -> op1 RELU6 -> t2 "Relu6"
 *        -> op2 FULLY_CONNECTED -> t3 "out".
 * Events (heap after each one in brackets):
 *   0 load begins                         [0]
 *   1 alloc #1 100 engine, no owner       [100]
 *   2 load ends
 *   3 prepare begins
 *   4 alloc #2 1000 static, no owner: an arena   [1100]
 *   5 plan t1 in #2 at 0, 600 B, ops 0..1
 *   6 plan t2 in #2 at 600, 400 B, ops 1..2
 *   7 alloc #3 50 kernel of op0           [1150]
 *   8 prepare ends
 *   9 run 1 begins
 *  10 alloc #4 200 io of t0               [1350]
 *  11 op0 begins
 *  12 alloc #5 300 scratch of op0         [1650]  <- the peak
 *  13 free #5                             [1350]
 *  14 op0 ends
 *  15 op1 begins   16 op1 ends   17 op2 begins
 *  18 alloc #6 80 dynamic of t3 by op2    [1430]
 *  19 op2 ends     20 run 1 ends
 *  21 run 2 begins 22 op0 begins
 *  23 alloc #7 200 scratch of op0         [1630]
 *  24 free #7                             [1430]
 *  25 op0 ends
 *  26 free #6 (t3)                        [1350]
 *  27 run 2 ends
 *  28 teardown begins
 *  29 free #2 (the arena: t1's and t2's slots die)  [350]
 *  30 free #3 [300]   31 free #4 (t0) [100]   32 free #1 [0]
 *  33 teardown ends */
static const uint64_t k_heap[34] = {0,    100,  100,  100,  1100, 1100, 1100, 1150, 1150,
                                    1150, 1350, 1350, 1650, 1350, 1350, 1350, 1350, 1350,
                                    1430, 1430, 1430, 1430, 1430, 1630, 1430, 1430, 1350,
                                    1350, 1350, 350,  300,  100,  0,    0};

static mp_trace *hand_trace(void)
{
    mp_tb b = mp_tb_create(1000, 1000);
    assert_true(mp_trace_alloc_tables(b.tr, 4, 3, 1, 1));
    mp_trace_meta *m = mp_trace_meta_mut(b.tr);
    assert_true(mp_trace_set_str(b.tr, &m->model, "zoo:by_hand"));
    assert_true(mp_trace_set_str(b.tr, &m->mode, "auto"));
    assert_true(mp_trace_set_str(b.tr, &m->planner, "greedy"));
    m->threads = 1;
    const char *names[4] = {"input", "conv_out", "Relu6", "out"};
    for (int t = 0; t < 4; t++)
        assert_true(mp_trace_set_str(b.tr, &m->tensors[t].name, names[t]));
    const char *ops[3] = {"CONV_2D", "RELU6", "FULLY_CONNECTED"};
    for (int32_t o = 0; o < 3; o++) {
        int32_t in = o, out = o + 1;
        assert_true(mp_trace_set_op(b.tr, o, ops[o], 1, &in, 1, &out));
    }
    m->inputs[0] = 0;
    m->outputs[0] = 3;
    m->process_heap_peak = -1;
    m->allocator_overhead = -1;

    mp_tb_phase(&b, MP_PHASE_LOAD, 0);                                  /* 0 */
    mp_tb_alloc(&b, 1, 100, MP_KIND_ENGINE, -1, -1);                    /* 1 */
    mp_tb_end(&b);                                                      /* 2 */
    mp_tb_phase(&b, MP_PHASE_PREPARE, 0);                               /* 3 */
    mp_tb_alloc(&b, 2, 1000, MP_KIND_STATIC, -1, -1);                   /* 4 */
    mp_tb_emit(&b, MP_EV_PLAN, 2, 600, MP_KIND_STATIC, 1, 0, 1, 0);     /* 5 */
    mp_tb_emit(&b, MP_EV_PLAN, 2, 400, MP_KIND_STATIC, 2, 1, 2, 600);   /* 6 */
    mp_tb_alloc(&b, 3, 50, MP_KIND_KERNEL, -1, 0);                      /* 7 */
    mp_tb_end(&b);                                                      /* 8 */
    mp_tb_phase(&b, MP_PHASE_RUN, 1);                                   /* 9 */
    mp_tb_alloc(&b, 4, 200, MP_KIND_IO, 0, -1);                         /* 10 */
    mp_tb_op(&b, MP_EV_OP_BEGIN, 0);                                    /* 11 */
    mp_tb_alloc(&b, 5, 300, MP_KIND_SCRATCH, -1, 0);                    /* 12 */
    mp_tb_free(&b, 5, 300, MP_KIND_SCRATCH, -1, 0);                     /* 13 */
    mp_tb_op(&b, MP_EV_OP_END, 0);                                      /* 14 */
    mp_tb_op(&b, MP_EV_OP_BEGIN, 1);                                    /* 15 */
    mp_tb_op(&b, MP_EV_OP_END, 1);                                      /* 16 */
    mp_tb_op(&b, MP_EV_OP_BEGIN, 2);                                    /* 17 */
    mp_tb_alloc(&b, 6, 80, MP_KIND_DYNAMIC, 3, 2);                      /* 18 */
    mp_tb_op(&b, MP_EV_OP_END, 2);                                      /* 19 */
    mp_tb_end(&b);                                                      /* 20 */
    mp_tb_phase(&b, MP_PHASE_RUN, 2);                                   /* 21 */
    mp_tb_op(&b, MP_EV_OP_BEGIN, 0);                                    /* 22 */
    mp_tb_alloc(&b, 7, 200, MP_KIND_SCRATCH, -1, 0);                    /* 23 */
    mp_tb_free(&b, 7, 200, MP_KIND_SCRATCH, -1, 0);                     /* 24 */
    mp_tb_op(&b, MP_EV_OP_END, 0);                                      /* 25 */
    mp_tb_free(&b, 6, 80, MP_KIND_DYNAMIC, 3, 2);                       /* 26 */
    mp_tb_end(&b);                                                      /* 27 */
    mp_tb_phase(&b, MP_PHASE_TEARDOWN, 0);                              /* 28 */
    mp_tb_free(&b, 2, 1000, MP_KIND_STATIC, -1, -1);                    /* 29 */
    mp_tb_free(&b, 3, 50, MP_KIND_KERNEL, -1, 0);                       /* 30 */
    mp_tb_free(&b, 4, 200, MP_KIND_IO, 0, -1);                          /* 31 */
    mp_tb_free(&b, 1, 100, MP_KIND_ENGINE, -1, -1);                     /* 32 */
    mp_tb_end(&b);                                                      /* 33 */
    assert_int_equal(b.n, 34);
    return b.tr;
}

typedef struct fixture {
    mp_trace *tr;
    mp_source *src;
    mp_tui_index *m;
} fixture;

static fixture open_hand(const mp_tui_options *o)
{
    fixture f = {0};
    mp_error err = {0};
    f.tr = hand_trace();
    f.src = mp_source_of_trace(f.tr);
    assert_non_null(f.src);
    assert_int_equal(mp_tui_index_build(f.src, o, &f.m, &err), MP_OK);
    return f;
}

static void close_fixture(fixture *f)
{
    mp_tui_index_free(f->m);
    mp_source_close(f->src);
    mp_trace_destroy(f->tr);
}

static mp_tui_at at(mp_tui_index *m, size_t e, int filter)
{
    mp_tui_at a;
    mp_error err = {0};
    assert_int_equal(mp_tui_state_at(m, e, filter, &a, &err), MP_OK);
    return a;
}

static void assert_item(const mp_summary_alive *a, int home, int32_t tensor, uint64_t bytes,
                        int kind)
{
    assert_int_equal(a->home, home);
    assert_int_equal(a->tensor, tensor);
    assert_int_equal(a->bytes, bytes);
    assert_int_equal(a->kind, kind);
}

/* ---- tests ------------------------------------------------------------------------------ */

static void test_heap_and_peak(void **state)
{
    (void)state;
    fixture f = open_hand(NULL);
    assert_int_equal(mp_tui_n_events(f.m), 34);
    assert_int_equal(mp_tui_peak_heap(f.m), 1650);
    assert_int_equal(mp_tui_peak_event(f.m), 12);
    assert_int_equal(mp_tui_kind_peak(f.m, MP_KIND_STATIC), 1000);
    assert_int_equal(mp_tui_kind_peak(f.m, MP_KIND_DYNAMIC), 80);
    assert_int_equal(mp_tui_kind_peak(f.m, MP_KIND_SCRATCH), 300);
    assert_int_equal(mp_tui_kind_peak(f.m, MP_KIND_KERNEL), 50);
    assert_int_equal(mp_tui_kind_peak(f.m, MP_KIND_IO), 200);
    assert_int_equal(mp_tui_kind_peak(f.m, MP_KIND_ENGINE), 100);
    for (size_t e = 0; e < 34; e++)
        assert_int_equal(at(f.m, e, -1).heap, k_heap[e]);
    mp_tui_at a;
    mp_error err = {0};
    assert_int_equal(mp_tui_state_at(f.m, 34, -1, &a, &err), MP_ERR_ARG);
    /* the same figures agree with the summary */
    mp_summary s;
    assert_int_equal(mp_summary_compute(f.tr, &s, &err), MP_OK);
    assert_int_equal(s.peak_heap, mp_tui_peak_heap(f.m));
    assert_int_equal(s.peak.event, (int64_t)mp_tui_peak_event(f.m));
    mp_summary_free(&s);
    close_fixture(&f);
}

static void test_state_at_events(void **state)
{
    (void)state;
    fixture f = open_hand(NULL);
    /* 12: the peak, inside op0 of run 1. Per kind: static 1000 (the arena), scratch 300,
     * kernel 50, io 200, engine 100. Alive: t1's slot (ops 0..1) 600, the arena's other 400
     * bytes (t2's slot, ops 1..2, is not live at op0), op0's scratch 300, t0's io block 200,
     * the engine's block 100, op0's kernel block 50: 1650 in all. */
    mp_tui_at a = at(f.m, 12, -1);
    assert_int_equal(a.phase_kind, MP_PHASE_RUN);
    assert_int_equal(a.run, 1);
    assert_int_equal(a.op, 0);
    assert_int_equal(a.type, MP_EV_ALLOC);
    assert_int_equal(a.t_ns, 13000);
    assert_int_equal(a.heap, 1650);
    uint64_t want[MP_KIND_COUNT] = {0, 1000, 0, 300, 50, 200, 100};
    for (int k = 0; k < MP_KIND_COUNT; k++)
        assert_int_equal(a.live[k], want[k]);
    assert_int_equal(a.n_alive, 6);
    assert_item(&a.alive[0], MP_SUMMARY_SLOT, 1, 600, MP_KIND_STATIC);
    assert_string_equal(a.alive[0].name, "conv_out");
    assert_int_equal(a.alive[0].op, 0); /* its producer */
    assert_item(&a.alive[1], MP_SUMMARY_ARENA_FREE, -1, 400, MP_KIND_STATIC);
    assert_item(&a.alive[2], MP_SUMMARY_OP_BUFFERS, -1, 300, MP_KIND_SCRATCH);
    assert_int_equal(a.alive[2].op, 0);
    assert_item(&a.alive[3], MP_SUMMARY_BLOCK, 0, 200, MP_KIND_IO);
    assert_string_equal(a.alive[3].name, "input");
    assert_item(&a.alive[4], MP_SUMMARY_OWNERLESS, -1, 100, MP_KIND_ENGINE);
    assert_item(&a.alive[5], MP_SUMMARY_OP_BUFFERS, -1, 50, MP_KIND_KERNEL);
    uint64_t sum = 0;
    for (size_t i = 0; i < a.n_alive; i++)
        sum += a.alive[i].bytes;
    assert_int_equal(sum, a.heap);

    /* 15: op1 begins: both slots live (t1 600, t2 400), nothing of the arena free */
    a = at(f.m, 15, -1);
    assert_int_equal(a.op, 1);
    assert_int_equal(a.heap, 1350);
    assert_int_equal(a.n_alive, 5);
    assert_item(&a.alive[0], MP_SUMMARY_SLOT, 1, 600, MP_KIND_STATIC);
    assert_item(&a.alive[1], MP_SUMMARY_SLOT, 2, 400, MP_KIND_STATIC);
    assert_item(&a.alive[2], MP_SUMMARY_BLOCK, 0, 200, MP_KIND_IO);
    assert_item(&a.alive[3], MP_SUMMARY_OWNERLESS, -1, 100, MP_KIND_ENGINE);
    assert_item(&a.alive[4], MP_SUMMARY_OP_BUFFERS, -1, 50, MP_KIND_KERNEL);

    /* 7: prepare, outside any operator: the arena whole (2 tensors planned) */
    a = at(f.m, 7, -1);
    assert_int_equal(a.phase_kind, MP_PHASE_PREPARE);
    assert_int_equal(a.run, 0);
    assert_int_equal(a.op, -1);
    assert_int_equal(a.heap, 1150);
    assert_int_equal(a.n_alive, 3);
    assert_item(&a.alive[0], MP_SUMMARY_ARENA, -1, 1000, MP_KIND_STATIC);
    assert_int_equal(a.alive[0].n_blocks, 2);
    assert_item(&a.alive[1], MP_SUMMARY_OWNERLESS, -1, 100, MP_KIND_ENGINE);
    assert_item(&a.alive[2], MP_SUMMARY_OP_BUFFERS, -1, 50, MP_KIND_KERNEL);

    /* 18: t3's dynamic block in op2 of run 1; op2 sees t2's slot only */
    a = at(f.m, 18, -1);
    assert_int_equal(a.op, 2);
    assert_int_equal(a.live[MP_KIND_DYNAMIC], 80);
    assert_int_equal(a.n_alive, 6); /* 600 free, t2 400, io 200, engine 100, t3 80, kernel 50 */
    assert_item(&a.alive[0], MP_SUMMARY_ARENA_FREE, -1, 600, MP_KIND_STATIC);
    assert_item(&a.alive[1], MP_SUMMARY_SLOT, 2, 400, MP_KIND_STATIC);
    assert_item(&a.alive[4], MP_SUMMARY_BLOCK, 3, 80, MP_KIND_DYNAMIC);
    assert_string_equal(a.alive[4].name, "out");
    assert_int_equal(a.alive[4].op, 2);

    /* 21: run 2 begins; 33: everything freed, no phase */
    a = at(f.m, 21, -1);
    assert_int_equal(a.phase_kind, MP_PHASE_RUN);
    assert_int_equal(a.run, 2);
    assert_int_equal(a.op, -1);
    a = at(f.m, 33, -1);
    assert_int_equal(a.phase_kind, -1);
    assert_int_equal(a.heap, 0);
    assert_int_equal(a.n_alive, 0);

    /* one kind only: at 12, scratch is op0's 300; static is the slot and the free bytes */
    a = at(f.m, 12, MP_KIND_SCRATCH);
    assert_int_equal(a.n_alive, 1);
    assert_item(&a.alive[0], MP_SUMMARY_OP_BUFFERS, -1, 300, MP_KIND_SCRATCH);
    a = at(f.m, 12, MP_KIND_STATIC);
    assert_int_equal(a.n_alive, 2);
    assert_int_equal(a.alive[0].bytes + a.alive[1].bytes, 1000);
    a = at(f.m, 12, MP_KIND_CONST);
    assert_int_equal(a.n_alive, 0);
    close_fixture(&f);
}

/* Every checkpoint interval, and checkpoints thinned by a tiny budget, give the same
 * answers in any order of queries. */
static void test_checkpoints(void **state)
{
    (void)state;
    const size_t ks[] = {1, 2, 3, 5, 7, 4096};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
        for (int thin = 0; thin < 2; thin++) {
            mp_tui_options o = {.checkpoint_every = ks[i], .checkpoint_budget = thin ? 6 : 0};
            fixture f = open_hand(&o);
            if (thin && ks[i] < 8)
                assert_true(mp_tui_checkpoint_every(f.m) > ks[i]);
            const size_t order[] = {33, 0, 12, 11, 13, 29, 5, 6, 7, 18, 17, 26, 1, 32, 15, 12};
            for (size_t j = 0; j < sizeof order / sizeof order[0]; j++) {
                mp_tui_at a = at(f.m, order[j], -1);
                assert_int_equal(a.heap, k_heap[order[j]]);
            }
            mp_tui_at a = at(f.m, 12, -1);
            assert_int_equal(a.op, 0);
            assert_int_equal(a.run, 1);
            assert_int_equal(a.n_alive, 6);
            a = at(f.m, 16, -1); /* op1 ended: no operator, run 1, the arena whole */
            assert_int_equal(a.op, -1);
            assert_int_equal(a.run, 1);
            assert_item(&a.alive[0], MP_SUMMARY_ARENA, -1, 1000, MP_KIND_STATIC);
            close_fixture(&f);
        }
}

/* The same index from the trace saved to a file and streamed back. */
static void test_from_file(void **state)
{
    (void)state;
    mp_trace *tr = hand_trace();
    mp_error err = {0};
    assert_int_equal(mp_test_tmpdir_make("tui_index"), 0);
    const char *path = mp_test_tmp_path("hand.json");
    assert_int_equal(mp_trace_save(tr, path, &err), MP_OK);
    mp_source *src = NULL;
    assert_int_equal(mp_source_open(path, &src, &err), MP_OK);
    mp_tui_index *m = NULL;
    mp_tui_options o = {.checkpoint_every = 4};
    assert_int_equal(mp_tui_index_build(src, &o, &m, &err), MP_OK);
    assert_int_equal(mp_tui_n_events(m), 34);
    assert_int_equal(mp_tui_peak_event(m), 12);
    for (size_t e = 0; e < 34; e++)
        assert_int_equal(at(m, e, -1).heap, k_heap[e]);
    assert_string_equal(mp_tui_tensor_name(m, 2), "Relu6");
    assert_string_equal(mp_tui_op_name(m, 2), "FULLY_CONNECTED");
    assert_string_equal(mp_tui_op_name(m, 3), "?");
    mp_tui_index_free(m);
    mp_source_close(src);
    /* a malformed file: the error of the source, no model */
    mp_test_write_text(mp_test_tmp_path("bad.json"), "{\"format\":\"memprof-trace\"");
    assert_int_equal(mp_source_open(mp_test_tmp_path("bad.json"), &src, &err), MP_ERR_FORMAT);
    mp_trace_destroy(tr);
    mp_test_tmpdir_remove();
}

static void test_operators(void **state)
{
    (void)state;
    fixture f = open_hand(NULL);
    /* operators begin at 11, 15, 17 (run 1) and 22 (run 2) */
    assert_int_equal(mp_tui_next_op(f.m, 0), 11);
    assert_int_equal(mp_tui_next_op(f.m, 11), 15);
    assert_int_equal(mp_tui_next_op(f.m, 16), 17);
    assert_int_equal(mp_tui_next_op(f.m, 17), 22);
    assert_int_equal(mp_tui_next_op(f.m, 22), SIZE_MAX);
    assert_int_equal(mp_tui_prev_op(f.m, 0), SIZE_MAX);
    assert_int_equal(mp_tui_prev_op(f.m, 11), SIZE_MAX);
    assert_int_equal(mp_tui_prev_op(f.m, 12), 11);
    assert_int_equal(mp_tui_prev_op(f.m, 22), 17);
    assert_int_equal(mp_tui_prev_op(f.m, 33), 22);
    close_fixture(&f);
}

static void test_search(void **state)
{
    (void)state;
    fixture f = open_hand(NULL);
    /* names: 0 input, 1 conv_out, 2 Relu6, 3 out */
    assert_int_equal(mp_tui_find_tensor(f.m, "Relu6", -1), 2);
    assert_int_equal(mp_tui_find_tensor(f.m, "relu", -1), 2);      /* any case */
    assert_int_equal(mp_tui_find_tensor(f.m, "out", -1), 3);       /* exact before "conv_out" */
    assert_int_equal(mp_tui_find_tensor(f.m, "ou", -1), 1);        /* conv_out, then out */
    assert_int_equal(mp_tui_find_tensor(f.m, "ou", 1), 3);
    assert_int_equal(mp_tui_find_tensor(f.m, "ou", 3), 1);         /* wraps around */
    assert_int_equal(mp_tui_find_tensor(f.m, "zzz", -1), -1);
    assert_int_equal(mp_tui_find_tensor(f.m, "", -1), -1);

    mp_tui_tensor_events te;
    mp_error err = {0};
    /* t1 conv_out: planned at 5, its slot dies with the arena at 29 */
    assert_int_equal(mp_tui_tensor_find_events(f.m, 1, &te, &err), MP_OK);
    assert_int_equal(te.n_alloc, 1);
    assert_int_equal(te.alloc[0], 5);
    assert_int_equal(te.n_free, 1);
    assert_int_equal(te.free[0], 29);
    mp_tui_tensor_events_free(&te);
    /* t3 out: its dynamic block, 18 .. 26 */
    assert_int_equal(mp_tui_tensor_find_events(f.m, 3, &te, &err), MP_OK);
    assert_int_equal(te.n_alloc, 1);
    assert_int_equal(te.alloc[0], 18);
    assert_int_equal(te.n_free, 1);
    assert_int_equal(te.free[0], 26);
    mp_tui_tensor_events_free(&te);
    /* t0 input: its io block, 10 .. 31 */
    assert_int_equal(mp_tui_tensor_find_events(f.m, 0, &te, &err), MP_OK);
    assert_int_equal(te.n_alloc, 1);
    assert_int_equal(te.alloc[0], 10);
    assert_int_equal(te.free[0], 31);
    mp_tui_tensor_events_free(&te);

    const size_t v[2] = {5, 20};
    assert_int_equal(mp_tui_next_after(v, 2, 0), 5);
    assert_int_equal(mp_tui_next_after(v, 2, 5), 20);
    assert_int_equal(mp_tui_next_after(v, 2, 20), 5); /* wraps */
    assert_int_equal(mp_tui_next_after(v, 0, 0), SIZE_MAX);
    close_fixture(&f);
}

static void test_window(void **state)
{
    (void)state;
    /* 34 events on 10 columns: column c covers floor(34c/10) .. floor(34(c+1)/10) - 1 */
    mp_tui_window w = mp_tui_window_all(34);
    assert_int_equal(w.first, 0);
    assert_int_equal(w.len, 34);
    assert_int_equal(mp_tui_col_first(&w, 10, 0), 0);
    assert_int_equal(mp_tui_col_last(&w, 10, 0), 2);
    assert_int_equal(mp_tui_col_first(&w, 10, 1), 3);
    assert_int_equal(mp_tui_col_last(&w, 10, 1), 5);
    assert_int_equal(mp_tui_col_first(&w, 10, 3), 10);
    assert_int_equal(mp_tui_col_last(&w, 10, 3), 12);
    assert_int_equal(mp_tui_col_last(&w, 10, 9), 33);
    for (size_t e = 0; e < 34; e++) {
        int c = mp_tui_col_of(&w, 10, e);
        assert_true(mp_tui_col_first(&w, 10, c) <= e && e <= mp_tui_col_last(&w, 10, c));
    }
    assert_int_equal(mp_tui_col_of(&w, 10, 34), -1);

    /* zoom in around 12: len 17, 12 stays 12*17/34 = 6 events from the left: first 6 */
    mp_tui_window_zoom(&w, 34, 10, 12, +1);
    assert_int_equal(w.first, 6);
    assert_int_equal(w.len, 17);
    assert_int_equal(mp_tui_col_of(&w, 10, 5), -1);
    /* again: 8 is below one event per column, so 10; offset 6*10/17 = 3: first 9 */
    mp_tui_window_zoom(&w, 34, 10, 12, +1);
    assert_int_equal(w.first, 9);
    assert_int_equal(w.len, 10);
    mp_tui_window_zoom(&w, 34, 10, 12, +1); /* no further */
    assert_int_equal(w.len, 10);
    /* out: len 20, offset 3*20/10 = 6: first 6; then the whole trace (40 > 34) */
    mp_tui_window_zoom(&w, 34, 10, 12, -1);
    assert_int_equal(w.first, 6);
    assert_int_equal(w.len, 20);
    mp_tui_window_zoom(&w, 34, 10, 12, -1);
    assert_int_equal(w.first, 0);
    assert_int_equal(w.len, 34);
    /* zoom in at the right end stays inside the trace: cursor 33, len 17 -> first 17 */
    mp_tui_window_zoom(&w, 34, 10, 33, +1);
    assert_int_equal(w.first, 17);
    assert_int_equal(w.len, 17);

    /* pan by columns: 17 events on 10 columns is 1 per column */
    w.first = 6;
    mp_tui_window_pan(&w, 34, 10, 4);
    assert_int_equal(w.first, 10);
    mp_tui_window_pan(&w, 34, 10, 100);
    assert_int_equal(w.first, 17); /* 34 - 17 */
    mp_tui_window_pan(&w, 34, 10, -100);
    assert_int_equal(w.first, 0);
    /* 1000 events, 100 per window on 10 columns: a column is 10 events */
    mp_tui_window big = {500, 100};
    mp_tui_window_pan(&big, 1000, 10, -3);
    assert_int_equal(big.first, 470);

    /* follow: the least scroll that shows the event */
    mp_tui_window f = {0, 10};
    mp_tui_window_follow(&f, 34, 20);
    assert_int_equal(f.first, 11);
    mp_tui_window_follow(&f, 34, 5);
    assert_int_equal(f.first, 5);
    mp_tui_window_follow(&f, 34, 12); /* already shown */
    assert_int_equal(f.first, 5);
    /* fit after a resize: at least one event per column, inside the trace */
    mp_tui_window r = {30, 4};
    mp_tui_window_fit(&r, 34, 10);
    assert_int_equal(r.len, 10);
    assert_int_equal(r.first, 24);
    mp_tui_window s = {0, 3};
    mp_tui_window_fit(&s, 3, 10); /* fewer events than columns: all of them */
    assert_int_equal(s.len, 3);
}

static void test_columns(void **state)
{
    (void)state;
    fixture f = open_hand(NULL);
    mp_error err = {0};
    mp_tui_column c[10];
    mp_tui_window w = mp_tui_window_all(34);
    /* exact: column 3 is events 10..12, highest 1650 at 12 with 300 of scratch; column 7 is
     * 23..26: 1630 at 23 (scratch 200, dynamic 80); column 0 is 0..2: 100 at 1 */
    assert_int_equal(mp_tui_columns(f.m, &w, 10, c, &err), MP_OK);
    assert_int_equal(c[3].heap, 1650);
    assert_int_equal(c[3].at, 12);
    assert_int_equal(c[3].live[MP_KIND_SCRATCH], 300);
    assert_int_equal(c[7].heap, 1630);
    assert_int_equal(c[7].at, 23);
    assert_int_equal(c[7].live[MP_KIND_SCRATCH], 200);
    assert_int_equal(c[7].kind_max[MP_KIND_DYNAMIC], 80);
    assert_int_equal(c[0].heap, 100);
    assert_int_equal(c[0].at, 1);
    /* the stack adds up to the heap in every column */
    for (int i = 0; i < 10; i++) {
        uint64_t sum = 0;
        for (int k = 1; k < MP_KIND_COUNT; k++)
            sum += c[i].live[k];
        assert_int_equal(sum, c[i].heap);
    }
    /* columns of a zoomed window: 9..18 on 10 columns, one event each */
    mp_tui_window z = {9, 10};
    assert_int_equal(mp_tui_columns(f.m, &z, 10, c, &err), MP_OK);
    for (int i = 0; i < 10; i++) {
        assert_int_equal(c[i].at, 9 + (size_t)i);
        assert_int_equal(c[i].heap, k_heap[9 + i]);
    }
    close_fixture(&f);

    /* from buckets: at most 8 of them, so B doubles to 8 (34 events: 5 buckets):
     * 0..7 (1150 at 7), 8..15 (1650 at 12), 16..23 (1630 at 23), 24..31 (1430 at 24),
     * 32..33 (0). Two columns (0..16, 17..33), 34 >= 2*2*8 events: column 0 takes the
     * buckets starting at 0, 8 and 16 (1650 at 12), column 1 those at 24 and 32 (1430 at
     * 24: the bucket 16..23 counts in column 0, as documented). */
    mp_tui_options o = {.max_buckets = 8, .exact_events = 1};
    f = open_hand(&o);
    assert_int_equal(mp_tui_bucket_size(f.m), 8);
    assert_int_equal(mp_tui_columns(f.m, &w, 2, c, &err), MP_OK);
    assert_int_equal(c[0].heap, 1650);
    assert_int_equal(c[0].at, 12);
    assert_int_equal(c[0].live[MP_KIND_SCRATCH], 300);
    assert_int_equal(c[0].kind_max[MP_KIND_SCRATCH], 300);
    assert_int_equal(c[0].kind_max[MP_KIND_DYNAMIC], 80); /* 18..23 in bucket 16 */
    assert_int_equal(c[1].heap, 1430);
    assert_int_equal(c[1].at, 24);
    assert_int_equal(c[1].kind_max[MP_KIND_STATIC], 1000);
    /* three columns (0..10, 11..21, 22..33) are below 2B events each: exact again */
    assert_int_equal(mp_tui_columns(f.m, &w, 3, c, &err), MP_OK);
    assert_int_equal(c[0].heap, 1350);
    assert_int_equal(c[0].at, 10);
    assert_int_equal(c[1].heap, 1650);
    assert_int_equal(c[1].at, 12);
    assert_int_equal(c[2].heap, 1630);
    assert_int_equal(c[2].at, 23);
    close_fixture(&f);
}

static void test_empty(void **state)
{
    (void)state;
    mp_trace *tr = mp_trace_create();
    assert_non_null(tr);
    mp_source *src = mp_source_of_trace(tr);
    mp_tui_index *m = NULL;
    mp_error err = {0};
    assert_int_equal(mp_tui_index_build(src, NULL, &m, &err), MP_OK);
    assert_int_equal(mp_tui_n_events(m), 0);
    assert_int_equal(mp_tui_peak_event(m), SIZE_MAX);
    assert_int_equal(mp_tui_peak_heap(m), 0);
    assert_int_equal(mp_tui_next_op(m, 0), SIZE_MAX);
    mp_tui_at a;
    assert_int_equal(mp_tui_state_at(m, 0, -1, &a, &err), MP_ERR_ARG);
    mp_tui_window w = mp_tui_window_all(0);
    mp_tui_column c[4];
    assert_int_equal(mp_tui_columns(m, &w, 4, c, &err), MP_OK);
    assert_int_equal(c[0].at, SIZE_MAX);
    mp_tui_index_free(m);
    mp_source_close(src);
    mp_trace_destroy(tr);
}

/* Live or planned bytes beyond 2^63-1 (analyzers/checked.h): the index is not built, and the
 * error names the event in one line. The sum of everything ever allocated (case 2) is not
 * a figure of the timeline: that trace is shown. */
static void test_overflowing_sizes_refused(void **state)
{
    (void)state;
    for (int which = 0; which < MP_TB_OVERFLOW_CASES; which++) {
        mp_tb b = mp_tb_create(0, 1);
        mp_tb_small_model(&b, "zoo:by_hand");
        size_t at = mp_tb_overflow(&b, which);
        mp_source *src = mp_source_of_trace(b.tr);
        assert_non_null(src);
        mp_tui_index *m = NULL;
        mp_error err = {0};
        mp_status st = mp_tui_index_build(src, NULL, &m, &err);
        if (which == 2) {
            assert_int_equal(st, MP_OK);
            assert_int_equal(mp_tui_peak_heap(m), (uint64_t)1 << 62);
            mp_tui_index_free(m);
        } else {
            char want[64];
            snprintf(want, sizeof want, "trace: event %zu: ", at);
            assert_int_equal(st, MP_ERR_FORMAT);
            assert_null(m);
            if (!strstr(err.msg, want) || !strstr(err.msg, "2^63-1") || strchr(err.msg, '\n'))
                fail_msg("case %d: '%s' does not say '%s...2^63-1'", which, err.msg, want);
        }
        mp_source_close(src);
        mp_trace_destroy(b.tr);
    }
}

/* A real session of a zoo model: the peak and what is alive there agree with the summary. */
static void check_zoo(const char *name, mp_memory_mode mode, int runs)
{
    void *bytes = NULL;
    size_t size = 0;
    mp_error err = {0};
    assert_int_equal(mp_zoo_build(name, &bytes, &size, &err), MP_OK);
    mp_trace *tr = mp_trace_create();
    mp_session *s = NULL;
    mp_session_options so = {.threads = 1, .mode = mode, .trace = tr};
    assert_int_equal(mp_session_create(&so, &s, &err), MP_OK);
    assert_int_equal(mp_session_load_memory(s, bytes, size, name, &err), MP_OK);
    assert_int_equal(mp_session_prepare(s, &err), MP_OK);
    for (int r = 0; r < runs; r++) {
        for (int k = 0; k < mp_session_input_count(s); k++) {
            size_t n = mp_session_input(s, k)->bytes;
            void *in = calloc(1, n ? n : 1);
            assert_int_equal(mp_session_set_input(s, k, in, n, &err), MP_OK);
            free(in);
        }
        assert_int_equal(mp_session_run(s, &err), MP_OK);
    }
    mp_session_destroy(s);
    free(bytes);

    mp_summary sum;
    assert_int_equal(mp_summary_compute(tr, &sum, &err), MP_OK);
    mp_source *src = mp_source_of_trace(tr);
    mp_tui_index *m = NULL, *m2 = NULL;
    assert_int_equal(mp_tui_index_build(src, NULL, &m, &err), MP_OK);
    mp_tui_options small = {.checkpoint_every = 16, .max_buckets = 16};
    assert_int_equal(mp_tui_index_build(src, &small, &m2, &err), MP_OK);
    assert_int_equal(mp_tui_n_events(m), mp_trace_count(tr));
    assert_int_equal(mp_tui_peak_heap(m), sum.peak_heap);
    assert_int_equal((int64_t)mp_tui_peak_event(m), sum.peak.event);
    for (int k = 0; k < MP_KIND_COUNT; k++)
        assert_int_equal(mp_tui_kind_peak(m, k), sum.kind_peak[k]);
    mp_tui_at a = at(m, mp_tui_peak_event(m), -1);
    assert_int_equal(a.heap, sum.peak_heap);
    assert_int_equal(a.op, sum.peak.op);
    assert_int_equal(a.run, sum.peak.run);
    assert_int_equal(a.phase_kind, sum.peak.phase_kind);
    assert_int_equal(a.n_alive, sum.n_alive);
    for (size_t i = 0; i < a.n_alive; i++) {
        assert_int_equal(a.alive[i].bytes, sum.alive[i].bytes);
        assert_int_equal(a.alive[i].home, sum.alive[i].home);
        assert_int_equal(a.alive[i].tensor, sum.alive[i].tensor);
    }
    /* the small-checkpoint index answers the same, walking backwards */
    size_t n = mp_tui_n_events(m);
    for (size_t e = n; e-- > 0;) {
        uint64_t h = at(m2, e, -1).heap;
        if (e % 7 == 0 || e == n - 1)
            assert_int_equal(h, at(m, e, -1).heap);
    }
    /* the whole trace in 40 columns (from buckets in m2): the peak in exactly one column */
    mp_tui_column c[40];
    mp_tui_window w = mp_tui_window_all(n);
    int cols = n < 40 ? (int)n : 40, seen = 0;
    assert_int_equal(mp_tui_columns(m2, &w, cols, c, &err), MP_OK);
    for (int i = 0; i < cols; i++) {
        assert_true(c[i].heap <= sum.peak_heap);
        seen += c[i].heap == sum.peak_heap;
    }
    assert_true(seen >= 1);
    mp_tui_index_free(m);
    mp_tui_index_free(m2);
    mp_source_close(src);
    mp_summary_free(&sum);
    mp_trace_destroy(tr);
}

static void test_zoo(void **state)
{
    (void)state;
    check_zoo("mnist_mlp", MP_MEMORY_AUTO, 3);
    check_zoo("mnist_mlp", MP_MEMORY_DYNAMIC, 3);
    check_zoo("mobilenet_v2", MP_MEMORY_AUTO, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_heap_and_peak),
        cmocka_unit_test(test_state_at_events),
        cmocka_unit_test(test_checkpoints),
        cmocka_unit_test(test_from_file),
        cmocka_unit_test(test_operators),
        cmocka_unit_test(test_search),
        cmocka_unit_test(test_window),
        cmocka_unit_test(test_columns),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_overflowing_sizes_refused),
        cmocka_unit_test(test_zoo),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
