/* Fixtures shared by the tests of saved traces (see trace_fixtures.h). */
#include "tests/util/trace_fixtures.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/util/testutil.h"

const char mp_test_valid_trace[] =
    "{\"format\":\"memprof-trace\",\"version\":1,\n"
    "\"meta\":{\"model\":\"m.tflite\",\"mode\":\"auto\",\"planner\":\"greedy\",\"threads\":2,"
    "\"process_heap_peak\":-1,\"allocator_overhead\":-1,\n"
    "\"tensors\":[{\"name\":\"in\",\"dtype\":0,\"const\":false},"
    "{\"name\":\"w\",\"dtype\":0,\"const\":true}],\n"
    "\"ops\":[{\"name\":\"ADD\",\"inputs\":[0,1],\"outputs\":[0]}],\n"
    "\"inputs\":[0],\"outputs\":[0]},\n"
    "\"event_fields\":[\"type\",\"t_ns\",\"phase\",\"kind\",\"tensor\",\"op\",\"op_last\","
    "\"bytes\",\"id\",\"aux\",\"align_log2\"],\n"
    "\"events\":[\n"
    "[5,1,0,0,-1,-1,-1,0,1,4,0],\n"
    "[0,2,0,2,1,0,-1,64,7,0,6],\n"
    "[6,3,0,0,-1,-1,-1,0,0,0,0]]}\n";

char *mp_test_valid_trace_with(const char *from, const char *to)
{
    const char *at = strstr(mp_test_valid_trace, from);
    if (!at)
        fail_msg("'%s' is not in the valid trace", from);
    size_t head = (size_t)(at - mp_test_valid_trace);
    size_t n = strlen(mp_test_valid_trace) - strlen(from) + strlen(to) + 1;
    char *s = malloc(n);
    assert_non_null(s);
    snprintf(s, n, "%.*s%s%s", (int)head, mp_test_valid_trace, to, at + strlen(from));
    return s;
}

void mp_test_assert_event_equal(const mp_event *a, const mp_event *b, size_t i)
{
    if (memcmp(a, b, offsetof(mp_event, flags) + 1) == 0) /* no padding before flags */
        return;
    print_message("event %zu differs\n", i); /* then the first field that does fails */
    assert_int_equal(a->type, b->type);
    assert_int_equal(a->t_ns, b->t_ns);
    assert_int_equal(a->phase, b->phase);
    assert_int_equal(a->kind, b->kind);
    assert_int_equal(a->tensor, b->tensor);
    assert_int_equal(a->op, b->op);
    assert_int_equal(a->op_last, b->op_last);
    assert_int_equal(a->bytes, b->bytes);
    assert_int_equal(a->id, b->id);
    assert_int_equal(a->aux, b->aux);
    assert_int_equal(a->align_log2, b->align_log2);
    assert_int_equal(a->flags, b->flags);
}

static void assert_str_equal_or_null(const char *a, const char *b)
{
    if (!a || !b)
        assert_ptr_equal(a, b);
    else
        assert_string_equal(a, b);
}

static void assert_ints_equal(const int32_t *a, const int32_t *b, int32_t n)
{
    for (int32_t i = 0; i < n; i++)
        assert_int_equal(a[i], b[i]);
}

void mp_test_assert_meta_equal(const mp_trace_meta *a, const mp_trace_meta *b)
{
    assert_str_equal_or_null(a->model, b->model);
    assert_str_equal_or_null(a->mode, b->mode);
    assert_str_equal_or_null(a->planner, b->planner);
    assert_int_equal(a->threads, b->threads);
    assert_int_equal(a->process_heap_peak, b->process_heap_peak);
    assert_int_equal(a->allocator_overhead, b->allocator_overhead);
    assert_int_equal(a->n_tensors, b->n_tensors);
    assert_int_equal(a->n_ops, b->n_ops);
    assert_int_equal(a->n_inputs, b->n_inputs);
    assert_int_equal(a->n_outputs, b->n_outputs);
    for (int32_t i = 0; i < a->n_tensors; i++) {
        assert_str_equal_or_null(a->tensors[i].name, b->tensors[i].name);
        assert_int_equal(a->tensors[i].dtype, b->tensors[i].dtype);
        assert_int_equal(a->tensors[i].is_const, b->tensors[i].is_const);
    }
    for (int32_t i = 0; i < a->n_ops; i++) {
        assert_str_equal_or_null(a->ops[i].name, b->ops[i].name);
        assert_int_equal(a->ops[i].n_inputs, b->ops[i].n_inputs);
        assert_int_equal(a->ops[i].n_outputs, b->ops[i].n_outputs);
        assert_ints_equal(a->ops[i].inputs, b->ops[i].inputs, a->ops[i].n_inputs);
        assert_ints_equal(a->ops[i].outputs, b->ops[i].outputs, a->ops[i].n_outputs);
    }
    assert_ints_equal(a->inputs, b->inputs, a->n_inputs);
    assert_ints_equal(a->outputs, b->outputs, a->n_outputs);
}
