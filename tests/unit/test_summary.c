/* Tests of the replay core, the summary analyzer and its text report, on traces built by hand
 * (every expected figure is worked out in the comments next to the events). */
#include "tests/util/testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/replay.h"
#include "analyzers/summary.h"
#include "trace/trace.h"
#include "reports/text_summary.h"
#include "reports/units.h"

/* ---- trace builder ------------------------------------------------------------------------ */

typedef struct tb {
    mp_trace *tr;
    uint64_t t;        /* clock: events take it as is; wait() moves it */
    uint32_t phase;    /* phase field of the next events */
    uint32_t n_phases;
    size_t n;          /* events appended so far (= index of the next one) */
} tb;

static mp_event blank(int type)
{
    mp_event e;
    memset(&e, 0, sizeof e);
    e.type = (uint8_t)type;
    e.tensor = e.op = e.op_last = -1;
    return e;
}

static size_t put(tb *b, mp_event e)
{
    e.t_ns = b->t;
    e.phase = b->phase;
    assert_true(mp_trace_append_raw(b->tr, &e));
    return b->n++;
}

static void wait_ns(tb *b, uint64_t ns)
{
    b->t += ns;
}

static size_t alloc_ev(tb *b, int type, uint64_t id, uint64_t bytes, int kind, int32_t tensor,
                       int32_t op, uint64_t aux)
{
    mp_event e = blank(type);
    e.id = id;
    e.bytes = bytes;
    e.kind = (uint8_t)kind;
    e.tensor = tensor;
    e.op = op;
    e.aux = aux;
    return put(b, e);
}

static size_t alloc(tb *b, uint64_t id, uint64_t bytes, int kind, int32_t tensor, int32_t op)
{
    return alloc_ev(b, MP_EV_ALLOC, id, bytes, kind, tensor, op, 0);
}

static size_t free_(tb *b, uint64_t id, uint64_t bytes, int kind, int32_t tensor, int32_t op)
{
    return alloc_ev(b, MP_EV_FREE, id, bytes, kind, tensor, op, 0);
}

static size_t realloc_(tb *b, uint64_t id, uint64_t bytes, uint64_t old, int kind, int32_t tensor,
                       int32_t op)
{
    return alloc_ev(b, MP_EV_REALLOC, id, bytes, kind, tensor, op, old);
}

static size_t plan(tb *b, uint64_t arena, int32_t tensor, uint64_t offset, uint64_t bytes,
                   int32_t first, int32_t last)
{
    mp_event e = blank(MP_EV_PLAN);
    e.kind = MP_KIND_STATIC;
    e.id = arena;
    e.tensor = tensor;
    e.aux = offset;
    e.bytes = bytes;
    e.op = first;
    e.op_last = last;
    return put(b, e);
}

static size_t copy(tb *b, int32_t tensor, uint64_t bytes, int dir)
{
    mp_event e = blank(MP_EV_COPY);
    e.tensor = tensor;
    e.bytes = bytes;
    e.aux = (uint64_t)dir;
    return put(b, e);
}

static size_t phase(tb *b, int kind, uint64_t run)
{
    b->phase = b->n_phases++;
    mp_event e = blank(MP_EV_PHASE_BEGIN);
    e.aux = (uint64_t)kind;
    e.id = run;
    return put(b, e);
}

static size_t phase_end(tb *b)
{
    return put(b, blank(MP_EV_PHASE_END));
}

static size_t op_mark(tb *b, int type, int32_t op)
{
    mp_event e = blank(type);
    e.op = op;
    return put(b, e);
}

/* A model of 4 tensors and 3 operators:
 *   t0 "in" (model input) -> op0 CONV_2D -> t1 "a" -> op1 ADD -> t2 "b" -> op2 SOFTMAX -> t3 "out"
 * t1 and t2 get a longer name when long_names (to test the report's cutting). */
static tb make(bool long_names)
{
    tb b = {0};
    b.tr = mp_trace_create();
    assert_non_null(b.tr);
    b.phase = UINT32_MAX;
    assert_true(mp_trace_alloc_tables(b.tr, 4, 3, 1, 1));
    mp_trace_meta *m = mp_trace_meta_mut(b.tr);
    assert_true(mp_trace_set_str(b.tr, &m->model, "zoo:hand_made"));
    assert_true(mp_trace_set_str(b.tr, &m->mode, "auto"));
    assert_true(mp_trace_set_str(b.tr, &m->planner, "greedy"));
    char longname[300];
    memset(longname, 'x', 200);
    longname[200] = '\0';
    const char *names[4] = {"in", long_names ? longname : "a", long_names ? longname : "b", "out"};
    for (int t = 0; t < 4; t++)
        assert_true(mp_trace_set_str(b.tr, &m->tensors[t].name, names[t]));
    const char *ops[3] = {"CONV_2D", "ADD", "SOFTMAX"};
    for (int32_t o = 0; o < 3; o++) {
        int32_t in = o, out = o + 1;
        assert_true(mp_trace_set_op(b.tr, o, ops[o], 1, &in, 1, &out));
    }
    m->inputs[0] = 0;
    m->outputs[0] = 3;
    return b;
}

static mp_summary compute(const tb *b)
{
    mp_summary s;
    mp_error err = {0};
    mp_status st = mp_summary_compute(b->tr, &s, &err);
    if (st != MP_OK)
        fail_msg("mp_summary_compute: %s", err.msg);
    return s;
}

/* Report into a string; check that no line passes 80 columns (code points). */
static char *render(const tb *b, const mp_summary *s, bool exact)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    mp_report_summary_text(f, b->tr, s, exact);
    fclose(f);
    size_t cols = 0;
    for (const unsigned char *p = (const unsigned char *)buf; *p; p++) {
        if (*p == '\n') {
            cols = 0;
            continue;
        }
        if ((*p & 0xC0) != 0x80)
            cols++;
        if (cols > 80)
            fail_msg("line longer than 80 columns in:\n%s", buf);
    }
    if (getenv("MP_TEST_SHOW")) /* MP_TEST_SHOW=1 prints the reports */
        printf("%s\n", buf);
    return buf;
}

static void assert_contains(const char *text, const char *what)
{
    if (!strstr(text, what))
        fail_msg("'%s' not found in:\n%s", what, text);
}

/* ---- the main hand-made session ------------------------------------------------------------ */

/* load, prepare (arena 3 with three slots), run 1 over three operators, teardown.
 * Returns the index of the peak event. */
static size_t session(tb *b)
{
    phase(b, MP_PHASE_LOAD, 0);                    /* e0, phase 0 */
    alloc(b, 1, 5000, MP_KIND_CONST, -1, -1);      /* e1: mapped model, not heap */
    alloc(b, 2, 100, MP_KIND_ENGINE, -1, -1);      /* e2: heap 100 */
    wait_ns(b, 1000);
    phase_end(b);                                  /* e3: load took 1000 ns */
    phase(b, MP_PHASE_PREPARE, 0);                 /* e4, phase 1 */
    alloc(b, 3, 1000, MP_KIND_STATIC, -1, -1);     /* e5: arena, heap 1100 */
    plan(b, 3, 1, 0, 400, 0, 1);                   /* e6: t1 [0,400) ops 0..1 */
    plan(b, 3, 2, 400, 400, 1, 2);                 /* e7: t2 [400,800) ops 1..2 */
    plan(b, 3, 3, 0, 300, 2, 2);                   /* e8: t3 [0,300) op 2 */
    alloc(b, 4, 64, MP_KIND_IO, 0, -1);            /* e9: input buffer of t0, heap 1164 */
    wait_ns(b, 2000);
    phase_end(b);                                  /* e10: prepare took 2000 ns */
    phase(b, MP_PHASE_RUN, 1);                     /* e11, phase 2 */
    op_mark(b, MP_EV_OP_BEGIN, 0);                 /* e12 */
    alloc(b, 5, 200, MP_KIND_KERNEL, -1, 0);       /* e13: heap 1364 */
    alloc(b, 6, 50, MP_KIND_SCRATCH, -1, 0);       /* e14: heap 1414 */
    free_(b, 6, 50, MP_KIND_SCRATCH, -1, 0);       /* e15: heap 1364 */
    op_mark(b, MP_EV_OP_END, 0);                   /* e16 */
    op_mark(b, MP_EV_OP_BEGIN, 1);                 /* e17 */
    alloc(b, 7, 100, MP_KIND_SCRATCH, -1, 1);      /* e18: heap 1464 */
    size_t peak = realloc_(b, 7, 300, 100, MP_KIND_SCRATCH, -1, 1); /* e19: heap 1664 PEAK */
    free_(b, 7, 300, MP_KIND_SCRATCH, -1, 1);      /* e20: heap 1364 */
    op_mark(b, MP_EV_OP_END, 1);                   /* e21 */
    op_mark(b, MP_EV_OP_BEGIN, 2);                 /* e22 */
    alloc(b, 8, 150, MP_KIND_SCRATCH, -1, 2);      /* e23: heap 1514 < 1664 */
    free_(b, 8, 150, MP_KIND_SCRATCH, -1, 2);      /* e24 */
    op_mark(b, MP_EV_OP_END, 2);                   /* e25 */
    wait_ns(b, 5000);
    phase_end(b);                                  /* e26: run 1 took 5000 ns */
    phase(b, MP_PHASE_TEARDOWN, 0);                /* e27, phase 3 */
    free_(b, 5, 200, MP_KIND_KERNEL, -1, 0);       /* e28 */
    free_(b, 4, 64, MP_KIND_IO, 0, -1);            /* e29 */
    free_(b, 3, 1000, MP_KIND_STATIC, -1, -1);     /* e30: arena and its slots die */
    free_(b, 2, 100, MP_KIND_ENGINE, -1, -1);      /* e31: heap 0 */
    free_(b, 1, 5000, MP_KIND_CONST, -1, -1);      /* e32: unmapped */
    wait_ns(b, 300);
    phase_end(b);                                  /* e33: teardown took 300 ns */
    return peak;
}

static void test_peak_and_kinds(void **state)
{
    (void)state;
    tb b = make(false);
    size_t peak = session(&b);
    assert_int_equal(peak, 19);
    mp_summary s = compute(&b);

    assert_int_equal(s.n_events, 34);
    /* Heap peak 1664 = engine 100 + static 1000 + io 64 + kernel 200 + scratch 300 (the
     * realloc of block 7 to 300), first reached at e19, in run 1 (phase 2) inside op 1. */
    assert_int_equal(s.peak_heap, 1664);
    assert_int_equal(s.peak.event, 19);
    assert_int_equal(s.peak.phase_kind, MP_PHASE_RUN);
    assert_int_equal(s.peak.phase, 2);
    assert_int_equal(s.peak.run, 1);
    assert_int_equal(s.peak.op, 1);
    assert_string_equal(s.peak.op_name, "ADD");
    assert_int_equal(s.peak_live[MP_KIND_STATIC], 1000);
    assert_int_equal(s.peak_live[MP_KIND_DYNAMIC], 0);
    assert_int_equal(s.peak_live[MP_KIND_SCRATCH], 300);
    assert_int_equal(s.peak_live[MP_KIND_KERNEL], 200);
    assert_int_equal(s.peak_live[MP_KIND_IO], 64);
    assert_int_equal(s.peak_live[MP_KIND_ENGINE], 100);
    /* Const is mapped: 5000 live at the peak, but never in the heap figures. */
    assert_int_equal(s.peak_live[MP_KIND_CONST], 5000);
    assert_int_equal(s.const_bytes, 5000);
    assert_int_equal(s.kind_peak[MP_KIND_SCRATCH], 300);
    assert_int_equal(s.kind_peak[MP_KIND_STATIC], 1000);
    assert_int_equal(s.static_bytes, 1000);
    assert_int_equal(s.dynamic_bytes, 0);

    /* Time: load 1000, prepare 2000, run 5000, teardown 300; one run, no later ones. */
    assert_int_equal(s.phase_ns[MP_PHASE_LOAD], 1000);
    assert_int_equal(s.phase_ns[MP_PHASE_PREPARE], 2000);
    assert_int_equal(s.phase_ns[MP_PHASE_RUN], 5000);
    assert_int_equal(s.phase_ns[MP_PHASE_TEARDOWN], 300);
    assert_int_equal(s.phase_count[MP_PHASE_SHAPE], 0);
    assert_int_equal(s.n_runs, 1);
    assert_int_equal(s.first_run_ns, 5000);
    assert_int_equal(s.n_later, 0);

    /* Run 1: ALLOC 5, 6, 7, REALLOC 7, ALLOC 8 = 5 allocations, 200+50+100+(300-100)+150 =
     * 700 bytes; frees of 6, 7, 8 = 3, 50+300+150 = 500 bytes. */
    assert_int_equal(s.first_run.run, 1);
    assert_int_equal(s.first_run.n_alloc, 5);
    assert_int_equal(s.first_run.bytes_alloc, 700);
    assert_int_equal(s.first_run.n_free, 3);
    assert_int_equal(s.first_run.bytes_freed, 500);

    /* Balance (heap): ALLOCs 2..8 = 7, one realloc, FREEs 2..8 = 7; allocated
     * 100+1000+64+200+50+100+150 + growth 200 = 1864 = freed 50+300+150+200+64+1000+100. */
    assert_int_equal(s.n_alloc, 7);
    assert_int_equal(s.n_realloc, 1);
    assert_int_equal(s.n_free, 7);
    assert_int_equal(s.bytes_alloc, 1864);
    assert_int_equal(s.bytes_freed, 1864);
    assert_int_equal(s.live_end, 0);
    assert_int_equal(s.live_end_kind[MP_KIND_CONST], 0);

    /* No tensor ever had two homes; no copies; overhead not measured; trace consistent. */
    assert_int_equal(s.dup_bytes, 0);
    assert_int_equal(s.dup.event, -1);
    assert_int_equal(s.n_dups, 0);
    assert_int_equal(s.n_copy_in + s.n_copy_out, 0);
    assert_false(s.unaccounted_measured);
    assert_int_equal(s.n_anomalies, 0);
    assert_false(s.truncated);
    mp_summary_free(&s);
    mp_trace_destroy(b.tr);
}

static void test_alive_at_peak_in_op(void **state)
{
    (void)state;
    tb b = make(false);
    session(&b);
    mp_summary s = compute(&b);
    /* At e19 inside op 1: slots covering op 1 are t1 (ops 0..1) and t2 (ops 1..2), not t3
     * (op 2). Arena bytes they leave: 1000 - 800 = 200. Largest first, ties by kind of item
     * then index:
     *   400 t1 slot (producer op0), 400 t2 slot (op1), 300 scratch of op1 (1 block),
     *   200 kernel of op0, 200 arena free, 100 engine (no owner), 64 t0 io (model input).
     * They add up to the peak: 1664. */
    assert_true(s.peak_slots_by_op);
    assert_int_equal(s.n_alive, 7);
    const mp_summary_alive *a = s.alive;
    assert_int_equal(a[0].home, MP_SUMMARY_SLOT);
    assert_int_equal(a[0].tensor, 1);
    assert_int_equal(a[0].bytes, 400);
    assert_int_equal(a[0].id, 3);
    assert_int_equal(a[0].kind, MP_KIND_STATIC);
    assert_int_equal(a[0].op, 0);
    assert_string_equal(a[0].op_name, "CONV_2D");
    assert_string_equal(a[0].name, "a");
    assert_int_equal(a[1].home, MP_SUMMARY_SLOT);
    assert_int_equal(a[1].tensor, 2);
    assert_int_equal(a[1].op, 1);
    assert_int_equal(a[2].home, MP_SUMMARY_OP_BUFFERS);
    assert_int_equal(a[2].kind, MP_KIND_SCRATCH);
    assert_int_equal(a[2].op, 1);
    assert_int_equal(a[2].bytes, 300);
    assert_int_equal(a[2].n_blocks, 1);
    assert_int_equal(a[3].home, MP_SUMMARY_OP_BUFFERS);
    assert_int_equal(a[3].kind, MP_KIND_KERNEL);
    assert_int_equal(a[3].op, 0);
    assert_int_equal(a[3].bytes, 200);
    assert_int_equal(a[4].home, MP_SUMMARY_ARENA_FREE);
    assert_int_equal(a[4].bytes, 200);
    assert_int_equal(a[4].id, 3);
    assert_int_equal(a[5].home, MP_SUMMARY_OWNERLESS);
    assert_int_equal(a[5].kind, MP_KIND_ENGINE);
    assert_int_equal(a[5].bytes, 100);
    assert_int_equal(a[6].home, MP_SUMMARY_BLOCK);
    assert_int_equal(a[6].tensor, 0);
    assert_int_equal(a[6].kind, MP_KIND_IO);
    assert_int_equal(a[6].bytes, 64);
    assert_int_equal(a[6].op, -1); /* model input: no producer */
    assert_null(a[6].op_name);
    uint64_t sum = 0;
    for (size_t i = 0; i < s.n_alive; i++)
        sum += a[i].bytes;
    assert_int_equal(sum, s.peak_heap);
    mp_summary_free(&s);
    mp_trace_destroy(b.tr);
}

static void test_alive_at_peak_outside_ops(void **state)
{
    (void)state;
    tb b = make(false);
    phase(&b, MP_PHASE_PREPARE, 0);             /* e0 */
    alloc(&b, 1, 1000, MP_KIND_STATIC, -1, -1); /* e1: arena, heap 1000 */
    plan(&b, 1, 1, 0, 400, 0, 1);               /* e2 */
    plan(&b, 1, 2, 400, 400, 1, 2);             /* e3 */
    plan(&b, 1, 3, 0, 300, 2, 2);               /* e4: shares [0,300) with t1 */
    plan(&b, 1, 3, 100, 250, 2, 2);             /* e5: replaces t3's slot: [100,350) */
    alloc(&b, 2, 30, MP_KIND_ENGINE, -1, -1);   /* e6: heap 1030 = peak, in prepare */
    free_(&b, 2, 30, MP_KIND_ENGINE, -1, -1);   /* e7 */
    phase_end(&b);                              /* e8 */
    free_(&b, 1, 1000, MP_KIND_STATIC, -1, -1); /* e9 (outside any phase) */
    mp_summary s = compute(&b);
    assert_int_equal(s.peak_heap, 1030);
    assert_int_equal(s.peak.event, 6);
    assert_int_equal(s.peak.phase_kind, MP_PHASE_PREPARE);
    assert_int_equal(s.peak.run, 0);
    assert_int_equal(s.peak.op, -1);
    /* Outside operators the arena counts whole: 1000 (3 tensors planned: t3's second PLAN
     * replaced its first), then engine 30. */
    assert_false(s.peak_slots_by_op);
    assert_int_equal(s.n_alive, 2);
    assert_int_equal(s.alive[0].home, MP_SUMMARY_ARENA);
    assert_int_equal(s.alive[0].bytes, 1000);
    assert_int_equal(s.alive[0].id, 1);
    assert_int_equal(s.alive[0].n_blocks, 3);
    assert_int_equal(s.alive[0].tensor, -1);
    assert_int_equal(s.alive[1].home, MP_SUMMARY_OWNERLESS);
    assert_int_equal(s.alive[1].bytes, 30);
    char *text = render(&b, &s, false);
    assert_contains(text, "  (outside operators: planned arenas count whole)");
    assert_contains(text, "1000 B  planned arena 1 (3 tensors planned)");
    free(text);
    assert_int_equal(s.live_end, 0);
    mp_summary_free(&s);
    mp_trace_destroy(b.tr);
}

/* An arena whose slots hold more tensors than they number: t2 in place in t1's slot (meta
 * shares) and op 1's scratch in a slot of its own. Three slots (t1, the scratch, t3), three
 * tensors (t1 and t3 in their own, t2 in t1's), one of them in place, one scratch slot. */
static void test_arena_in_place_and_scratch_counted(void **state)
{
    (void)state;
    tb b = make(false);
    mp_trace_set_shares(b.tr, 2, 1);
    phase(&b, MP_PHASE_PREPARE, 0);             /* e0 */
    alloc(&b, 1, 900, MP_KIND_STATIC, -1, -1);  /* e1: arena */
    plan(&b, 1, 1, 0, 400, 0, 2);               /* e2: t1's slot, t2's lifetime too */
    mp_event e = blank(MP_EV_PLAN);             /* e3: op 1's scratch */
    e.kind = MP_KIND_SCRATCH;
    e.id = 1;
    e.aux = 400;
    e.bytes = 100;
    e.op = e.op_last = 1;
    put(&b, e);
    plan(&b, 1, 3, 500, 400, 2, 2);             /* e4: t3 */
    alloc(&b, 2, 30, MP_KIND_ENGINE, -1, -1);   /* e5: heap 930 = peak, after the plans */
    free_(&b, 2, 30, MP_KIND_ENGINE, -1, -1);   /* e6 */
    phase_end(&b);                              /* e7 */
    free_(&b, 1, 900, MP_KIND_STATIC, -1, -1);  /* e8 */
    mp_summary s = compute(&b);
    assert_int_equal(s.peak_heap, 930);
    assert_int_equal(s.n_alive, 2);
    assert_int_equal(s.alive[0].home, MP_SUMMARY_ARENA);
    assert_int_equal(s.alive[0].n_blocks, 3);
    assert_int_equal(s.alive[0].n_in_place, 1);
    assert_int_equal(s.alive[0].n_scratch, 1);
    char *text = render(&b, &s, false);
    assert_contains(text, "900 B  planned arena 1 (3 tensors in 3 slots, 1 in place, 1 scratch)");
    free(text);
    mp_summary_free(&s);
    mp_trace_destroy(b.tr);
}

/* ---- duplicated bytes --------------------------------------------------------------------- */

static void test_duplicated_slot_and_dynamic(void **state)
{
    (void)state;
    tb b = make(false);
    phase(&b, MP_PHASE_PREPARE, 0);              /* e0, phase 0 */
    alloc(&b, 1, 1000, MP_KIND_STATIC, -1, -1);  /* e1: arena */
    plan(&b, 1, 1, 0, 400, 0, 1);                /* e2: t1 slot 400 */
    plan(&b, 1, 2, 400, 300, 1, 2);              /* e3: t2 slot 300 */
    phase_end(&b);                               /* e4 */
    phase(&b, MP_PHASE_SHAPE, 0);                /* e5, phase 1: shape changes, arena kept */
    phase_end(&b);                               /* e6 */
    phase(&b, MP_PHASE_RUN, 1);                  /* e7, phase 2 */
    op_mark(&b, MP_EV_OP_BEGIN, 0);              /* e8 */
    alloc(&b, 2, 600, MP_KIND_DYNAMIC, 1, -1);   /* e9: t1 held twice: dup = slot 400 */
    op_mark(&b, MP_EV_OP_END, 0);                /* e10 */
    op_mark(&b, MP_EV_OP_BEGIN, 1);              /* e11 */
    alloc(&b, 3, 500, MP_KIND_DYNAMIC, 2, -1);   /* e12: t2 too: dup = 400 + 300 = 700 MAX */
    free_(&b, 2, 600, MP_KIND_DYNAMIC, 1, -1);   /* e13: t1 back to one home: dup 300 */
    op_mark(&b, MP_EV_OP_END, 1);                /* e14 */
    phase_end(&b);                               /* e15 */
    phase(&b, MP_PHASE_TEARDOWN, 0);             /* e16 */
    free_(&b, 3, 500, MP_KIND_DYNAMIC, 2, -1);   /* e17 */
    free_(&b, 1, 1000, MP_KIND_STATIC, -1, -1);  /* e18 */
    phase_end(&b);                               /* e19 */
    mp_summary s = compute(&b);
    assert_int_equal(s.dup_bytes, 700);
    assert_int_equal(s.dup.event, 12);
    assert_int_equal(s.dup.phase_kind, MP_PHASE_RUN);
    assert_int_equal(s.dup.run, 1);
    assert_int_equal(s.dup.op, 1);
    assert_int_equal(s.n_dups, 2);
    assert_int_equal(s.dups[0].tensor, 1);
    assert_int_equal(s.dups[0].bytes, 400);
    assert_int_equal(s.dups[0].homes, 2);
    assert_string_equal(s.dups[0].name, "a");
    assert_int_equal(s.dups[1].tensor, 2);
    assert_int_equal(s.dups[1].bytes, 300);
    /* Heap peak 1000 + 600 + 500 = 2100 at e12 too. Inside op 1 both slots are alive (t1's
     * ops 0..1 and t2's ops 1..2 cover op 1), next to both dynamic blocks. */
    assert_int_equal(s.peak_heap, 2100);
    assert_int_equal(s.peak.event, 12);
    assert_int_equal(s.dynamic_bytes, 1100);
    assert_int_equal(s.static_bytes, 1000);
    /* 600 t1 dynamic, 500 t2 dynamic, 400 t1 slot, 300 t2 slot, 300 arena free. */
    assert_int_equal(s.n_alive, 5);
    assert_int_equal(s.alive[0].bytes, 600);
    assert_int_equal(s.alive[0].home, MP_SUMMARY_BLOCK);
    assert_int_equal(s.alive[0].kind, MP_KIND_DYNAMIC);
    assert_int_equal(s.alive[0].op, 0); /* t1's producer */
    assert_int_equal(s.alive[2].home, MP_SUMMARY_SLOT);
    assert_int_equal(s.alive[2].tensor, 1);
    assert_int_equal(s.alive[3].home, MP_SUMMARY_SLOT);
    assert_int_equal(s.alive[4].home, MP_SUMMARY_ARENA_FREE);
    /* Run 1: 2 allocations (1100 bytes), 1 free (600). */
    assert_int_equal(s.first_run.n_alloc, 2);
    assert_int_equal(s.first_run.bytes_alloc, 1100);
    assert_int_equal(s.first_run.n_free, 1);
    assert_int_equal(s.phase_count[MP_PHASE_SHAPE], 1);

    char *text = render(&b, &s, false);
    assert_contains(text, "Duplicated bytes      700 B at most");
    assert_contains(text, "run 1, op #1 ADD (event 12)");
    assert_contains(text, "400 B in 2 homes");
    free(text);
    mp_summary_free(&s);
    mp_trace_destroy(b.tr);
}

static void test_duplicated_newest_home_kept(void **state)
{
    (void)state;
    tb b = make(false);
    alloc(&b, 1, 500, MP_KIND_DYNAMIC, 1, -1);  /* e0: t1 dynamic 500 */
    alloc(&b, 2, 1000, MP_KIND_STATIC, -1, -1); /* e1: arena */
    plan(&b, 2, 1, 0, 400, 0, 1);               /* e2: newer home: dup = the older, 500 */
    plan(&b, 2, 1, 0, 450, 0, 1);               /* e3: replaced slot, still newest: 500 */
    realloc_(&b, 1, 800, 500, MP_KIND_DYNAMIC, 1, -1); /* e4: older home grows: dup 800 */
    free_(&b, 2, 1000, MP_KIND_STATIC, -1, -1); /* e5: slot dies with the arena: dup 0 */
    free_(&b, 1, 800, MP_KIND_DYNAMIC, 1, -1);  /* e6 */
    mp_summary s = compute(&b);
    assert_int_equal(s.dup_bytes, 800);
    assert_int_equal(s.dup.event, 4);
    assert_int_equal(s.dup.phase_kind, -1);
    assert_int_equal(s.dup.phase, UINT32_MAX);
    assert_int_equal(s.n_dups, 1);
    assert_int_equal(s.dups[0].bytes, 800);
    /* Balance: 2 allocs + growth 300 = 1800 allocated, freed 1000 + 800. */
    assert_int_equal(s.bytes_alloc, 1800);
    assert_int_equal(s.bytes_freed, 1800);
    assert_int_equal(s.n_runs, 0);
    mp_summary_free(&s);
    mp_trace_destroy(b.tr);
}

static void test_no_duplication_when_arena_freed_first(void **state)
{
    (void)state;
    tb b = make(false);
    phase(&b, MP_PHASE_PREPARE, 0);
    alloc(&b, 1, 1000, MP_KIND_STATIC, -1, -1); /* arena */
    plan(&b, 1, 1, 0, 400, 0, 1);
    plan(&b, 1, 2, 400, 400, 1, 2);
    phase_end(&b);
    phase(&b, MP_PHASE_SHAPE, 0);
    free_(&b, 1, 1000, MP_KIND_STATIC, -1, -1); /* the old plan goes: slots die */
    phase_end(&b);
    phase(&b, MP_PHASE_RUN, 1);
    alloc(&b, 2, 600, MP_KIND_DYNAMIC, 1, -1);  /* t1's only home now */
    alloc(&b, 3, 700, MP_KIND_DYNAMIC, 2, -1);
    free_(&b, 2, 600, MP_KIND_DYNAMIC, 1, -1);
    free_(&b, 3, 700, MP_KIND_DYNAMIC, 2, -1);
    phase_end(&b);
    mp_summary s = compute(&b);
    assert_int_equal(s.dup_bytes, 0);
    assert_int_equal(s.n_dups, 0);
    assert_int_equal(s.dup.event, -1);
    assert_int_equal(s.peak_heap, 1300);
    assert_int_equal(s.static_bytes, 1000);
    assert_int_equal(s.dynamic_bytes, 1300);
    char *text = render(&b, &s, false);
    assert_contains(text, "no tensor was held twice");
    free(text);
    mp_summary_free(&s);
    mp_trace_destroy(b.tr);
}

/* ---- runs ------------------------------------------------------------------------------- */

/* Run 1 lasts 100 ns; runs 2.. last the given times. Allocations: run 1 three of 100 (all
 * freed); run 2 one of 50 (freed); run 3 10 and 20, 10 grown to 15 (both freed); others none. */
static void runs_trace(tb *b, const uint64_t *later, size_t n_later)
{
    phase(b, MP_PHASE_RUN, 1);
    for (uint64_t i = 0; i < 3; i++)
        alloc(b, 10 + i, 100, MP_KIND_DYNAMIC, 1, -1);
    for (uint64_t i = 0; i < 3; i++)
        free_(b, 10 + i, 100, MP_KIND_DYNAMIC, 1, -1);
    wait_ns(b, 100);
    phase_end(b);
    for (size_t r = 0; r < n_later; r++) {
        phase(b, MP_PHASE_IO, 0);
        copy(b, 0, 64, MP_COPY_IN);
        phase_end(b);
        phase(b, MP_PHASE_RUN, r + 2);
        if (r == 0) {
            alloc(b, 20, 50, MP_KIND_DYNAMIC, 1, -1);
            free_(b, 20, 50, MP_KIND_DYNAMIC, 1, -1);
        } else if (r == 1) {
            alloc(b, 30, 10, MP_KIND_SCRATCH, -1, 0);
            alloc(b, 31, 20, MP_KIND_SCRATCH, -1, 0);
            realloc_(b, 30, 15, 10, MP_KIND_SCRATCH, -1, 0);
            free_(b, 30, 15, MP_KIND_SCRATCH, -1, 0);
            free_(b, 31, 20, MP_KIND_SCRATCH, -1, 0);
        }
        wait_ns(b, later[r]);
        phase_end(b);
    }
}

static void test_runs_odd_later_count(void **state)
{
    (void)state;
    tb b = make(false);
    const uint64_t later[] = {40, 10, 30};
    runs_trace(&b, later, 3);
    mp_summary s = compute(&b);
    assert_int_equal(s.n_runs, 4);
    assert_int_equal(s.runs[2].run, 3);
    assert_int_equal(s.runs[2].t_ns, 10);
    assert_int_equal(s.first_run_ns, 100);
    assert_int_equal(s.n_later, 3);
    /* sorted 10, 30, 40: median 30, mean 80/3 = 26 (integer ns), min 10, max 40 */
    assert_int_equal(s.later_median_ns, 30);
    assert_int_equal(s.later_mean_ns, 26);
    assert_int_equal(s.later_min_ns, 10);
    assert_int_equal(s.later_max_ns, 40);
    assert_int_equal(s.phase_ns[MP_PHASE_RUN], 180);
    assert_int_equal(s.phase_count[MP_PHASE_RUN], 4);
    /* run 1: 3 allocs, 300 B, 3 frees, 300 B */
    assert_int_equal(s.first_run.n_alloc, 3);
    assert_int_equal(s.first_run.bytes_alloc, 300);
    assert_int_equal(s.first_run.n_free, 3);
    assert_int_equal(s.first_run.bytes_freed, 300);
    /* run 2: 1 alloc 50 B, 1 free 50 B; run 3: 3 (2 + realloc), 10+20+5 = 35 B, 2 frees 35 B;
     * run 4: none. Max per field: 3 allocs, 50 B, 2 frees, 50 B. */
    assert_int_equal(s.runs[2].n_alloc, 3);
    assert_int_equal(s.runs[2].bytes_alloc, 35);
    assert_int_equal(s.runs[2].n_free, 2);
    assert_int_equal(s.runs[2].bytes_freed, 35);
    assert_int_equal(s.later_max.n_alloc, 3);
    assert_int_equal(s.later_max.bytes_alloc, 50);
    assert_int_equal(s.later_max.n_free, 2);
    assert_int_equal(s.later_max.bytes_freed, 50);
    assert_int_equal(s.runs[3].n_alloc, 0);
    /* copies: one in per later run */
    assert_int_equal(s.n_copy_in, 3);
    assert_int_equal(s.bytes_copy_in, 192);
    assert_int_equal(s.phase_count[MP_PHASE_IO], 3);
    mp_summary_free(&s);
    mp_trace_destroy(b.tr);
}

static void test_runs_even_later_count(void **state)
{
    (void)state;
    tb b = make(false);
    const uint64_t later[] = {40, 10, 30, 21};
    runs_trace(&b, later, 4);
    mp_summary s = compute(&b);
    assert_int_equal(s.n_later, 4);
    /* sorted 10, 21, 30, 40: median (21 + 30) / 2 = 25 (rounded down), mean 101/4 = 25 */
    assert_int_equal(s.later_median_ns, 25);
    assert_int_equal(s.later_mean_ns, 25);
    assert_int_equal(s.later_min_ns, 10);
    assert_int_equal(s.later_max_ns, 40);
    char *text = render(&b, &s, false);
    assert_contains(text, "later runs (4)");
    assert_contains(text, "25 ns median, 25 ns mean");
    assert_contains(text, "first (run 1)");
    assert_contains(text, "  allocations         3                 3");
    assert_contains(text, "  bytes allocated     300 B             50 B");
    free(text);
    mp_summary_free(&s);
    mp_trace_destroy(b.tr);
}

/* Runs in any order, one of them repeated: each run number gets one entry (in order of
 * first appearance) that sums the time of all its phases. 100 runs, more than the first
 * size of the summary's index of run numbers, so that it grows. */
static void test_runs_out_of_order(void **state)
{
    (void)state;
    tb b = make(false);
    for (uint64_t r = 100; r >= 1; r--) { /* run r lasts r ns */
        phase(&b, MP_PHASE_RUN, r);
        alloc(&b, r, 10, MP_KIND_DYNAMIC, 1, -1);
        free_(&b, r, 10, MP_KIND_DYNAMIC, 1, -1);
        wait_ns(&b, r);
        phase_end(&b);
    }
    phase(&b, MP_PHASE_RUN, 50); /* run 50 again, 7 ns, one more allocation */
    alloc(&b, 1000, 30, MP_KIND_DYNAMIC, 1, -1);
    wait_ns(&b, 7);
    phase_end(&b);
    mp_summary s = compute(&b);
    assert_int_equal(s.n_runs, 100);
    for (size_t i = 0; i < 100; i++)
        assert_int_equal(s.runs[i].run, 100 - i);
    /* run 50 is the 51st to appear: 50 + 7 ns, 2 allocations of 10 + 30 bytes */
    assert_int_equal(s.runs[50].run, 50);
    assert_int_equal(s.runs[50].t_ns, 57);
    assert_int_equal(s.runs[50].n_alloc, 2);
    assert_int_equal(s.runs[50].bytes_alloc, 40);
    assert_int_equal(s.runs[99].t_ns, 1);
    assert_int_equal(s.first_run_ns, 100);
    /* all run phases: 1 + ... + 100 = 5050, plus 7 */
    assert_int_equal(s.phase_ns[MP_PHASE_RUN], 5057);
    assert_int_equal(s.phase_count[MP_PHASE_RUN], 101);
    mp_summary_free(&s);
    mp_trace_destroy(b.tr);
}

/* ---- copies, leak, unaccounted, anomalies -------------------------------------------------- */

static void test_copies_leak_unaccounted(void **state)
{
    (void)state;
    tb b = make(false);
    mp_trace_meta *m = mp_trace_meta_mut(b.tr);
    m->process_heap_peak = 10000;
    m->allocator_overhead = 500;
    alloc(&b, 1, 4096, MP_KIND_CONST, -1, -1);   /* mapped, never unmapped */
    phase(&b, MP_PHASE_IO, 0);
    alloc(&b, 2, 64, MP_KIND_IO, 0, -1);
    copy(&b, 0, 64, MP_COPY_IN);
    copy(&b, 0, 64, MP_COPY_IN);
    phase_end(&b);
    phase(&b, MP_PHASE_RUN, 1);
    alloc(&b, 3, 128, MP_KIND_DYNAMIC, 2, -1);   /* leaked */
    alloc(&b, 4, 32, MP_KIND_IO, 3, -1);
    phase_end(&b);
    phase(&b, MP_PHASE_IO, 0);
    copy(&b, 3, 32, MP_COPY_OUT);
    free_(&b, 4, 32, MP_KIND_IO, 3, -1);
    free_(&b, 2, 64, MP_KIND_IO, 0, -1);
    phase_end(&b);
    mp_summary s = compute(&b);
    assert_int_equal(s.n_copy_in, 2);
    assert_int_equal(s.bytes_copy_in, 128);
    assert_int_equal(s.n_copy_out, 1);
    assert_int_equal(s.bytes_copy_out, 32);
    /* heap peak 64 + 128 + 32 = 224; allocated 224, freed 96, 128 dynamic still live. */
    assert_int_equal(s.peak_heap, 224);
    assert_int_equal(s.n_alloc, 3);
    assert_int_equal(s.n_free, 2);
    assert_int_equal(s.bytes_alloc, 224);
    assert_int_equal(s.bytes_freed, 96);
    assert_int_equal(s.live_end, 128);
    assert_int_equal(s.live_end_kind[MP_KIND_DYNAMIC], 128);
    assert_int_equal(s.live_end_kind[MP_KIND_CONST], 4096);
    /* 10000 - 224 - 500 */
    assert_true(s.unaccounted_measured);
    assert_int_equal(s.unaccounted, 9276);
    char *text = render(&b, &s, false);
    assert_contains(text, "128 B NOT FREED");
    assert_contains(text, "const still mapped");
    assert_contains(text, "9.1 KiB"); /* 9276 / 1024 = 9.06 */
    assert_contains(text, "Copies in             2 copies, 128 B");
    assert_contains(text, "Copies out            1 copy, 32 B");
    free(text);
    text = render(&b, &s, true);
    assert_contains(text, "9.1 KiB (9276 B)");
    free(text);
    mp_summary_free(&s);
    mp_trace_destroy(b.tr);
}

static void test_anomalies_and_empty(void **state)
{
    (void)state;
    tb b = make(false);
    mp_summary s = compute(&b);
    assert_int_equal(s.n_events, 0);
    assert_int_equal(s.peak.event, -1);
    assert_int_equal(s.n_alive, 0);
    char *text = render(&b, &s, false);
    assert_contains(text, "nothing was allocated");
    free(text);
    mp_summary_free(&s);

    free_(&b, 99, 10, MP_KIND_DYNAMIC, 1, -1);   /* e0: unknown block: ignored */
    alloc(&b, 1, 10, MP_KIND_DYNAMIC, 1, -1);    /* e1 */
    alloc(&b, 1, 20, MP_KIND_DYNAMIC, 1, -1);    /* e2: live id again: ignored */
    plan(&b, 77, 1, 0, 10, 0, 0);                /* e3: no such arena */
    realloc_(&b, 5, 40, 30, MP_KIND_ENGINE, -1, -1); /* e4: unknown: counted as an alloc */
    free_(&b, 1, 10, MP_KIND_DYNAMIC, 1, -1);
    free_(&b, 5, 40, MP_KIND_ENGINE, -1, -1);
    s = compute(&b);
    assert_int_equal(s.n_anomalies, 4);
    assert_string_equal(s.anomaly, "event 0: free of unknown block 99");
    assert_int_equal(s.peak_heap, 50);
    assert_int_equal(s.live_end, 0);
    assert_int_equal(s.bytes_alloc, 50);
    text = render(&b, &s, false);
    assert_contains(text, "4 inconsistent events");
    free(text);
    mp_summary_free(&s);
    mp_trace_destroy(b.tr);

    mp_error err = {0};
    assert_int_equal(mp_summary_compute(NULL, &s, &err), MP_ERR_ARG);
    mp_summary_free(&s);
}

/* ---- the report ------------------------------------------------------------------------- */

static void test_report_text(void **state)
{
    (void)state;
    tb b = make(true); /* 200-character names for t1 and t2 */
    session(&b);
    mp_summary s = compute(&b);
    char *text = render(&b, &s, false);
    assert_contains(text, "memprof summary: zoo:hand_made");
    assert_contains(text, "Heap peak             1.6 KiB"); /* 1664 B */
    assert_contains(text, "run 1, op #1 ADD (event 19)");
    assert_contains(text, "  load                1.0 us");
    assert_contains(text, "  prepare             2.0 us");
    assert_contains(text, "  first run           5.0 us");
    assert_contains(text, "  scratch             300 B");
    assert_contains(text, "4.9 KiB, mapped from the model (not heap)");
    assert_contains(text, "scratch buffers of op #1 ADD (1 block)");
    assert_contains(text, "kernel buffers of op #0 CONV_2D");
    assert_contains(text, "engine buffers, no owner");
    assert_contains(text, "(planned; op #0 CONV_2D)");
    assert_contains(text, "#0 in (io; model input)");
    assert_contains(text, "xxx...");
    assert_contains(text, "every byte allocated has been freed");
    assert_contains(text, "Unaccounted heap      not measured");
    assert_contains(text, "Static bytes          1000 B, peak live");
    free(text);
    text = render(&b, &s, true);
    assert_contains(text, "1.6 KiB (1664 B)");
    assert_contains(text, "  allocated           1.8 KiB (1864 B)");
    assert_contains(text, "  freed               1.8 KiB (1864 B)");
    free(text);
    mp_summary_free(&s);
    mp_trace_destroy(b.tr);
}

static void test_report_top_items(void **state)
{
    (void)state;
    /* 12 groups of operator buffers (3 ops x 4 kinds), of 1000 + 10 i bytes (i = 0..11):
     * the report shows the 8 largest and sums the 4 others: 1000+1010+1020+1030 = 4060. */
    tb b = make(false);
    static const int kinds[4] = {MP_KIND_SCRATCH, MP_KIND_KERNEL, MP_KIND_ENGINE, MP_KIND_IO};
    for (int i = 0; i < 12; i++)
        alloc(&b, (uint64_t)i + 1, 1000 + 10 * (uint64_t)i, kinds[i % 4], -1, i / 4);
    mp_summary s = compute(&b);
    assert_int_equal(s.n_alive, 12);
    assert_int_equal(s.alive[0].bytes, 1110);
    assert_int_equal(s.alive[0].op, 2);
    assert_int_equal(s.alive[0].kind, MP_KIND_IO);
    assert_int_equal(s.live_end, 12 * 1000 + 10 * 66);
    char *text = render(&b, &s, false);
    assert_contains(text, "   1.1 KiB  io buffers of op #2 SOFTMAX (1 block)");
    assert_contains(text, "   4.0 KiB  ... and 4 more");
    assert_contains(text, "12.4 KiB NOT FREED"); /* 12660 B */
    free(text);
    text = render(&b, &s, true);
    assert_contains(text, "   4.0 KiB        (4060 B)  ... and 4 more");
    free(text);
    mp_summary_free(&s);
    mp_trace_destroy(b.tr);
}

static void test_units(void **state)
{
    (void)state;
    char buf[32];
    assert_string_equal(mp_fmt_bytes(buf, sizeof buf, 0), "0 B");
    assert_string_equal(mp_fmt_bytes(buf, sizeof buf, 1023), "1023 B");
    assert_string_equal(mp_fmt_bytes(buf, sizeof buf, 1024), "1.0 KiB");
    assert_string_equal(mp_fmt_bytes(buf, sizeof buf, 1536), "1.5 KiB");
    assert_string_equal(mp_fmt_bytes(buf, sizeof buf, 1048575), "1.0 MiB");
    assert_string_equal(mp_fmt_bytes(buf, sizeof buf, 15u << 20), "15.0 MiB");
    assert_string_equal(mp_fmt_bytes(buf, sizeof buf, 3ull << 30), "3.0 GiB");
    assert_string_equal(mp_fmt_bytes(buf, sizeof buf, UINT64_MAX), "16.0 EiB");
    assert_string_equal(mp_fmt_sbytes(buf, sizeof buf, -1536), "-1.5 KiB");
    assert_string_equal(mp_fmt_sbytes(buf, sizeof buf, INT64_MIN), "-8.0 EiB");
    assert_string_equal(mp_fmt_ns(buf, sizeof buf, 999), "999 ns");
    assert_string_equal(mp_fmt_ns(buf, sizeof buf, 12500), "12.5 us");
    assert_string_equal(mp_fmt_ns(buf, sizeof buf, 3200000), "3.2 ms");
    assert_string_equal(mp_fmt_ns(buf, sizeof buf, 999999999), "1.0 s");
}

static void test_text_fit(void **state)
{
    (void)state;
    char buf[64];
    /* 10 columns fit; 11 keep the first third of 7 (2), "...", the last 5 */
    mp_text_fit_middle(buf, sizeof buf, "abcdefghij", 10);
    assert_string_equal(buf, "abcdefghij");
    mp_text_fit_middle(buf, sizeof buf, "abcdefghijk", 10);
    assert_string_equal(buf, "ab...ghijk");
    mp_text_fit_middle(buf, sizeof buf, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                                        "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 10);
    assert_string_equal(buf, "\xc3\xa9\xc3\xa9...\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");
    mp_text_fit_middle(buf, sizeof buf, "a\tb", 10); /* control characters made safe */
    assert_string_equal(buf, "a?b");
    mp_text_fit(buf, sizeof buf, "abcdefghijk", 10); /* the plain fit cuts the end */
    assert_string_equal(buf, "abcdefg...");

    /* a title with a long path: 80 columns, the file name kept whole */
    char path[160], *text = NULL;
    size_t len = 0;
    memset(path, 'd', 100);
    strcpy(path + 100, "/model.tflite");
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    mp_text_title(f, "memprof bench", path);
    mp_text_title(f, "memprof bench", "short.tflite");
    fclose(f);
    char *nl = strchr(text, '\n');
    assert_non_null(nl);
    assert_int_equal(nl - text, 80);
    assert_memory_equal(nl - 13, "/model.tflite", 13);
    assert_memory_equal(text, "memprof bench: ddd", 18);
    assert_string_equal(nl + 1, "memprof bench: short.tflite\n");
    free(text);
}

/* ---- replay on its own ---------------------------------------------------------------------- */

static void test_replay_many_blocks(void **state)
{
    (void)state;
    /* 100000 blocks allocated, then freed in another order: the table grows and shrinks
     * (backward-shift deletion) and every block stays findable. */
    mp_replay *r = mp_replay_create(4);
    assert_non_null(r);
    const uint64_t n = 100000;
    mp_event e = blank(MP_EV_ALLOC);
    e.kind = MP_KIND_DYNAMIC;
    for (uint64_t i = 0; i < n; i++) {
        e.id = i * 7919;
        e.bytes = i % 100 + 1;
        assert_true(mp_replay_step(r, &e, NULL));
    }
    assert_int_equal(mp_replay_n_blocks(r), n);
    uint64_t expect = 0;
    for (uint64_t i = 0; i < n; i++)
        expect += i % 100 + 1;
    assert_int_equal(mp_replay_heap(r), expect);
    e.type = MP_EV_FREE;
    mp_replay_change c;
    for (uint64_t i = 0; i < n; i += 2) {
        e.id = i * 7919;
        assert_true(mp_replay_step(r, &e, &c));
        assert_int_equal(c.what, MP_REPLAY_FREE);
        assert_int_equal(c.block.bytes, i % 100 + 1);
    }
    for (uint64_t i = 1; i < n; i += 2) {
        const mp_replay_block *blk = mp_replay_find(r, i * 7919);
        assert_non_null(blk);
        assert_int_equal(blk->bytes, i % 100 + 1);
    }
    size_t cursor = 0, seen = 0;
    while (mp_replay_next_block(r, &cursor))
        seen++;
    assert_int_equal(seen, n / 2);
    for (uint64_t i = 1; i < n; i += 2) {
        e.id = i * 7919;
        assert_true(mp_replay_step(r, &e, &c));
    }
    assert_int_equal(mp_replay_heap(r), 0);
    assert_int_equal(mp_replay_n_blocks(r), 0);
    assert_int_equal(mp_replay_n_anomalies(r), 0);
    mp_replay_destroy(r);
}

static void test_replay_training_categories(void **state)
{
    (void)state;
    /* A planned training arena of 1000 bytes with three slots: an activation (100 bytes,
     * operators 0..2), a back-prop tensor (200 bytes, 1..2) and a disposable (50 bytes,
     * operator 2 only), plus an inference-style slot (kind STATIC, 30 bytes, 0..2) that
     * stays static. While operator k runs, the training slots alive at k count as their
     * category and the rest of the arena as static; outside operators the arena counts
     * whole as static; the heap is 1000 throughout. */
    mp_replay *r = mp_replay_create(8);
    mp_event e = blank(MP_EV_ALLOC);
    e.kind = MP_KIND_STATIC;
    e.id = 1;
    e.bytes = 1000;
    assert_true(mp_replay_step(r, &e, NULL));
    struct { int32_t t, first, last; uint64_t bytes; int kind; } slots[] = {
        {0, 0, 2, 100, MP_KIND_TRAIN_ACTIVATION}, {1, 1, 2, 200, MP_KIND_TRAIN_BACKPROP},
        {2, 2, 2, 50, MP_KIND_TRAIN_DISPOSABLE}, {3, 0, 2, 30, MP_KIND_STATIC}};
    uint64_t off = 0;
    for (size_t i = 0; i < sizeof slots / sizeof slots[0]; i++) {
        mp_event p = blank(MP_EV_PLAN);
        p.id = 1;
        p.tensor = slots[i].t;
        p.op = slots[i].first;
        p.op_last = slots[i].last;
        p.bytes = slots[i].bytes;
        p.kind = (uint8_t)slots[i].kind;
        p.aux = off;
        off += slots[i].bytes;
        assert_true(mp_replay_step(r, &p, NULL));
    }
    assert_int_equal(mp_replay_live(r, MP_KIND_STATIC), 1000);
    assert_int_equal(mp_replay_live(r, MP_KIND_TRAIN_ACTIVATION), 0);
    /* expected per operator: activation, backprop, disposable */
    const uint64_t want[3][3] = {{100, 0, 0}, {100, 200, 0}, {100, 200, 50}};
    for (int32_t op = 0; op < 3; op++) {
        mp_event b = blank(MP_EV_OP_BEGIN);
        b.op = op;
        assert_true(mp_replay_step(r, &b, NULL));
        uint64_t moved = want[op][0] + want[op][1] + want[op][2];
        assert_int_equal(mp_replay_live(r, MP_KIND_TRAIN_ACTIVATION), want[op][0]);
        assert_int_equal(mp_replay_live(r, MP_KIND_TRAIN_BACKPROP), want[op][1]);
        assert_int_equal(mp_replay_live(r, MP_KIND_TRAIN_DISPOSABLE), want[op][2]);
        assert_int_equal(mp_replay_live(r, MP_KIND_STATIC), 1000 - moved);
        assert_int_equal(mp_replay_heap(r), 1000);
        mp_event x = blank(MP_EV_OP_END);
        x.op = op;
        assert_true(mp_replay_step(r, &x, NULL));
        assert_int_equal(mp_replay_live(r, MP_KIND_STATIC), 1000);
        assert_int_equal(mp_replay_live(r, MP_KIND_TRAIN_BACKPROP), 0);
    }
    /* an operator running when the arena is freed: nothing is left to attribute */
    mp_event b = blank(MP_EV_OP_BEGIN);
    b.op = 2;
    assert_true(mp_replay_step(r, &b, NULL));
    mp_event f = blank(MP_EV_FREE);
    f.id = 1;
    assert_true(mp_replay_step(r, &f, NULL));
    for (int k = 0; k < MP_KIND_COUNT; k++)
        assert_int_equal(mp_replay_live(r, k), 0);
    mp_replay_destroy(r);
}

static void test_replay_arenas(void **state)
{
    (void)state;
    mp_replay *r = mp_replay_create(4);
    mp_replay_change c;
    mp_event e = blank(MP_EV_ALLOC);
    e.kind = MP_KIND_STATIC;
    for (uint64_t id = 1; id <= 2; id++) { /* two arenas */
        e.id = id;
        e.bytes = 100 * id;
        assert_true(mp_replay_step(r, &e, &c));
    }
    assert_int_equal(mp_replay_n_arenas(r), 2);
    mp_event p = blank(MP_EV_PLAN);
    p.id = 1;
    p.tensor = 2;
    p.bytes = 40;
    assert_true(mp_replay_step(r, &p, &c));
    assert_false(c.replaced);
    p.bytes = 60;
    p.aux = 8;
    assert_true(mp_replay_step(r, &p, &c));
    assert_true(c.replaced);
    assert_int_equal(c.old_slot.bytes, 40);
    p.tensor = 3;
    assert_true(mp_replay_step(r, &p, &c));
    const mp_replay_block *blk = mp_replay_find(r, 1);
    const mp_replay_arena *a = mp_replay_arena_at(r, (size_t)blk->arena);
    assert_int_equal(a->id, 1);
    assert_int_equal(a->n_slots, 2);
    assert_int_equal(a->slots[0].bytes, 60);
    assert_int_equal(a->slots[0].offset, 8);
    /* free arena 1: its two slots die; arena 2 stays findable */
    mp_event f = blank(MP_EV_FREE);
    f.id = 1;
    assert_true(mp_replay_step(r, &f, &c));
    assert_int_equal(c.n_dead_slots, 2);
    assert_int_equal(c.dead_slots[1].tensor, 3);
    assert_int_equal(mp_replay_n_arenas(r), 1);
    blk = mp_replay_find(r, 2);
    assert_int_equal(mp_replay_arena_at(r, (size_t)blk->arena)->id, 2);
    /* an unknown tensor is refused */
    p.id = 2;
    p.tensor = 4;
    assert_true(mp_replay_step(r, &p, &c));
    assert_true(c.anomaly);
    assert_int_equal(c.what, MP_REPLAY_NOTHING);
    mp_replay_destroy(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_peak_and_kinds),
        cmocka_unit_test(test_alive_at_peak_in_op),
        cmocka_unit_test(test_alive_at_peak_outside_ops),
        cmocka_unit_test(test_arena_in_place_and_scratch_counted),
        cmocka_unit_test(test_duplicated_slot_and_dynamic),
        cmocka_unit_test(test_duplicated_newest_home_kept),
        cmocka_unit_test(test_no_duplication_when_arena_freed_first),
        cmocka_unit_test(test_runs_odd_later_count),
        cmocka_unit_test(test_runs_even_later_count),
        cmocka_unit_test(test_runs_out_of_order),
        cmocka_unit_test(test_copies_leak_unaccounted),
        cmocka_unit_test(test_anomalies_and_empty),
        cmocka_unit_test(test_report_text),
        cmocka_unit_test(test_report_top_items),
        cmocka_unit_test(test_units),
        cmocka_unit_test(test_text_fit),
        cmocka_unit_test(test_replay_many_blocks),
        cmocka_unit_test(test_replay_arenas),
        cmocka_unit_test(test_replay_training_categories),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
