/* A trace built event by event by hand (see trace_builder.h). */
#include "tests/util/trace_builder.h"

#include "tests/util/testutil.h"

#include <string.h>

mp_tb mp_tb_create(uint64_t t0, uint64_t tick)
{
    mp_tb b = {0};
    b.tr = mp_trace_create();
    assert_non_null(b.tr);
    b.t = t0;
    b.tick = tick;
    b.phase = UINT32_MAX;
    return b;
}

size_t mp_tb_emit(mp_tb *b, int type, uint64_t id, uint64_t bytes, int kind, int32_t tensor,
                  int32_t op, int32_t op_last, uint64_t aux)
{
    mp_event e;
    memset(&e, 0, sizeof e);
    e.type = (uint8_t)type;
    e.id = id;
    e.bytes = bytes;
    e.kind = (uint8_t)kind;
    e.tensor = tensor;
    e.op = op;
    e.op_last = op_last;
    e.aux = aux;
    e.t_ns = b->t;
    e.phase = b->phase;
    assert_true(mp_trace_append_raw(b->tr, &e));
    b->t += b->tick;
    return b->n++;
}

size_t mp_tb_alloc(mp_tb *b, uint64_t id, uint64_t bytes, int kind, int32_t tensor, int32_t op)
{
    return mp_tb_emit(b, MP_EV_ALLOC, id, bytes, kind, tensor, op, -1, 0);
}

size_t mp_tb_free(mp_tb *b, uint64_t id, uint64_t bytes, int kind, int32_t tensor, int32_t op)
{
    return mp_tb_emit(b, MP_EV_FREE, id, bytes, kind, tensor, op, -1, 0);
}

size_t mp_tb_plan(mp_tb *b, uint64_t arena, int32_t t, uint64_t off, uint64_t bytes,
                  int32_t first, int32_t last)
{
    return mp_tb_emit(b, MP_EV_PLAN, arena, bytes, MP_KIND_STATIC, t, first, last, off);
}

size_t mp_tb_phase(mp_tb *b, int kind, uint64_t run)
{
    b->phase = b->phases++;
    return mp_tb_emit(b, MP_EV_PHASE_BEGIN, run, 0, 0, -1, -1, -1, (uint64_t)kind);
}

size_t mp_tb_end(mp_tb *b)
{
    return mp_tb_emit(b, MP_EV_PHASE_END, 0, 0, 0, -1, -1, -1, 0);
}

size_t mp_tb_op(mp_tb *b, int type, int32_t op)
{
    return mp_tb_emit(b, type, 0, 0, 0, -1, op, -1, 0);
}

size_t mp_tb_rss(mp_tb *b, uint64_t rss, uint64_t hwm)
{
    return mp_tb_emit(b, MP_EV_RSS, 0, rss, 0, -1, -1, -1, hwm);
}

void mp_tb_small_model(mp_tb *b, const char *model)
{
    assert_true(mp_trace_alloc_tables(b->tr, 5, 3, 1, 1));
    mp_trace_meta *m = mp_trace_meta_mut(b->tr);
    assert_true(mp_trace_set_str(b->tr, &m->model, model));
    assert_true(mp_trace_set_str(b->tr, &m->mode, "auto"));
    assert_true(mp_trace_set_str(b->tr, &m->planner, "greedy"));
    m->threads = 1;
    const char *names[5] = {"in", "a", "b", "out", "w"};
    for (int t = 0; t < 5; t++)
        assert_true(mp_trace_set_str(b->tr, &m->tensors[t].name, names[t]));
    m->tensors[4].is_const = true;
    const char *ops[3] = {"CONV_2D", "ADD", "SOFTMAX"};
    for (int32_t o = 0; o < 3; o++) {
        int32_t in[2] = {o, 4}, out = o + 1;
        assert_true(mp_trace_set_op(b->tr, o, ops[o], o == 0 ? 2 : 1, in, 1, &out));
    }
    m->inputs[0] = 0;
    m->outputs[0] = 3;
    m->process_heap_peak = -1;
    m->allocator_overhead = -1;
}

size_t mp_tb_overflow(mp_tb *b, int which)
{
    const uint64_t big = (uint64_t)1 << 62;
    size_t at = SIZE_MAX;
    mp_tb_phase(b, MP_PHASE_RUN, 1);
    mp_tb_op(b, MP_EV_OP_BEGIN, 0);
    switch (which) {
    case 0:
        mp_tb_alloc(b, 1, 64, MP_KIND_STATIC, -1, -1);
        mp_tb_plan(b, 1, 1, 0, big, 0, 1);
        at = mp_tb_plan(b, 1, 2, 0, big, 1, 2);
        break;
    case 1:
        mp_tb_alloc(b, 1, 64, MP_KIND_STATIC, -1, -1);
        at = mp_tb_plan(b, 1, 1, ((uint64_t)1 << 63) - 10, 20, 0, 1);
        break;
    case 2:
        mp_tb_alloc(b, 1, big, MP_KIND_DYNAMIC, 1, 0);
        mp_tb_free(b, 1, big, MP_KIND_DYNAMIC, 1, 0);
        at = mp_tb_alloc(b, 2, big, MP_KIND_DYNAMIC, 1, 0);
        mp_tb_free(b, 2, big, MP_KIND_DYNAMIC, 1, 0);
        mp_tb_alloc(b, 3, big, MP_KIND_DYNAMIC, 1, 0);
        mp_tb_free(b, 3, big, MP_KIND_DYNAMIC, 1, 0);
        break;
    default:
        mp_tb_alloc(b, 1, big, MP_KIND_DYNAMIC, 1, 0);
        at = mp_tb_alloc(b, 2, big, MP_KIND_DYNAMIC, 2, 0);
        break;
    }
    mp_tb_op(b, MP_EV_OP_END, 0);
    mp_tb_end(b);
    return at;
}
