/* A trace built event by event by hand, for the tests whose expected figures are worked out
 * beside the events (test_profile.c, test_gate.c, test_tui_index.c), and the small model
 * several of them share. */
#ifndef MP_TRACE_BUILDER_H
#define MP_TRACE_BUILDER_H

#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"

typedef struct mp_tb {
    mp_trace *tr;
    uint64_t t;        /* clock of the next event */
    uint64_t tick;     /* added to t after each event (0: the test moves t itself) */
    uint32_t phase;    /* phase field of the next events (UINT32_MAX: outside any phase) */
    uint32_t phases;   /* phase instances begun */
    size_t n;          /* events so far (= the index of the next one) */
} mp_tb;

/* An empty trace (asserted), its clock starting at t0 and moving by tick per event. */
mp_tb mp_tb_create(uint64_t t0, uint64_t tick);

/* Append one event; each returns the event's index. */
size_t mp_tb_emit(mp_tb *b, int type, uint64_t id, uint64_t bytes, int kind, int32_t tensor,
                  int32_t op, int32_t op_last, uint64_t aux);
size_t mp_tb_alloc(mp_tb *b, uint64_t id, uint64_t bytes, int kind, int32_t tensor, int32_t op);
size_t mp_tb_free(mp_tb *b, uint64_t id, uint64_t bytes, int kind, int32_t tensor, int32_t op);
/* Tensor t planned in arena `arena` at offset off, alive for operators first..last. */
size_t mp_tb_plan(mp_tb *b, uint64_t arena, int32_t t, uint64_t off, uint64_t bytes,
                  int32_t first, int32_t last);
/* A phase of kind `kind` (mp_phase_kind) begins (run: the run number), and ends. */
size_t mp_tb_phase(mp_tb *b, int kind, uint64_t run);
size_t mp_tb_end(mp_tb *b);
/* MP_EV_OP_BEGIN or MP_EV_OP_END of operator op. */
size_t mp_tb_op(mp_tb *b, int type, int32_t op);
size_t mp_tb_rss(mp_tb *b, uint64_t rss, uint64_t hwm);

/* The metadata of a small model named `model`: t0 "in" -> op0 CONV_2D -> t1 "a" -> op1 ADD
 * -> t2 "b" -> op2 SOFTMAX -> t3 "out", plus t4 "w", a constant read by op0; mode auto,
 * planner greedy, 1 thread. */
void mp_tb_small_model(mp_tb *b, const char *model);

/* Sessions of the small model whose byte counts add up beyond 2^63-1, which every analysis
 * must refuse as malformed (analyzers/checked.h); returns the index of the event at fault:
 *   0  two slots of 2^62 bytes planned in one arena (the arena's slots: 2^63 bytes)
 *   1  a slot of 20 bytes at offset 2^63-10 (it ends beyond 2^63-1)
 *   2  three blocks of 2^62 bytes, each freed before the next (allocated in all: 2^63 at
 *      the second)
 *   3  two live blocks of 2^62 bytes (the heap: 2^63)
 * All inside a run phase, with the run's operator 0 running. */
#define MP_TB_OVERFLOW_CASES 4
size_t mp_tb_overflow(mp_tb *b, int which);

#endif
