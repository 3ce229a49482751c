/* Tests of the trace: the in-memory recorder (engine/trace.c) and saving and reading it as
 * JSON (engine/trace_io.c), including every kind of malformed file the reader must refuse. */
#include "tests/util/testutil.h"

#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace/trace.h"
#include "tests/util/trace_fixtures.h"

static mp_event make_event(int type, uint64_t t_ns, uint64_t bytes, int32_t tensor, int32_t op)
{
    mp_event e;
    memset(&e, 0, sizeof e);
    e.type = (uint8_t)type;
    e.t_ns = t_ns;
    e.bytes = bytes;
    e.tensor = tensor;
    e.op = op;
    e.op_last = -1;
    return e;
}

static void assert_traces_equal(const mp_trace *a, const mp_trace *b)
{
    mp_test_assert_meta_equal(mp_trace_get_meta(a), mp_trace_get_meta(b));
    assert_int_equal(mp_trace_count(a), mp_trace_count(b));
    for (size_t i = 0; i < mp_trace_count(a); i++)
        mp_test_assert_event_equal(&mp_trace_events(a)[i], &mp_trace_events(b)[i], i);
}

static void set_op(mp_trace *tr, int32_t i, const char *name, int32_t n_in, const int32_t *in,
                   int32_t n_out, const int32_t *out)
{
    assert_true(mp_trace_set_op(tr, i, name, n_in, in, n_out, out));
}

/* A small trace with awkward names and every kind of event, extremes included. */
static mp_trace *sample_trace(void)
{
    mp_trace *tr = mp_trace_create();
    assert_non_null(tr);
    mp_trace_meta *m = mp_trace_meta_mut(tr);
    assert_true(
        mp_trace_set_str(tr, &m->model, "dir with \"quotes\"/and\\backslash\nmodel.tflite"));
    assert_true(mp_trace_set_str(tr, &m->mode, "auto"));
    /* planner stays NULL: a missing name must survive too. */
    m->threads = 4;
    m->process_heap_peak = 123456789012;
    m->allocator_overhead = -1;
    assert_true(mp_trace_alloc_tables(tr, 4, 2, 1, 2));
    assert_true(mp_trace_set_str(tr, &m->tensors[0].name, "input:0 \"q\" \\ tab\there"));
    assert_true(mp_trace_set_str(tr, &m->tensors[1].name, "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac "
                                                      "\xf0\x9f\x98\x80 ctl\x01\x1f end"));
    assert_true(mp_trace_set_str(tr, &m->tensors[2].name, ""));
    /* tensors[3].name stays NULL */
    m->tensors[0].dtype = 0;
    m->tensors[1].dtype = 9;
    m->tensors[1].is_const = true;
    m->tensors[2].dtype = 2;
    m->tensors[3].dtype = 17;
    set_op(tr, 0, "CONV_2D", 3, (const int32_t[]){0, 1, -1}, 1, (const int32_t[]){2});
    set_op(tr, 1, "ADD/\u00e9\n", 2, (const int32_t[]){2, 2}, 1, (const int32_t[]){3});
    m->inputs[0] = 0;
    m->outputs[0] = 3;
    m->outputs[1] = 2;

    mp_trace_phase_begin(tr, MP_PHASE_LOAD, 0);
    mp_event a = make_event(MP_EV_ALLOC, 10, 4096, 2, -1);
    a.id = 7;
    a.kind = MP_KIND_DYNAMIC;
    a.align_log2 = 6;
    assert_true(mp_trace_add(tr, a));
    mp_event r = make_event(MP_EV_REALLOC, 11, 8192, 2, 0);
    r.id = 7;
    r.aux = 4096;
    r.kind = MP_KIND_SCRATCH;
    assert_true(mp_trace_add(tr, r));
    mp_trace_phase_end(tr);
    mp_trace_phase_begin(tr, MP_PHASE_RUN, 1);
    mp_trace_plan(tr, 3, 2, 64, 1024, 0, 1);
    mp_trace_copy(tr, 0, 16, MP_COPY_IN);
    mp_trace_op_mark(tr, MP_EV_OP_BEGIN, 1);
    mp_trace_op_mark(tr, MP_EV_OP_END, 1);
    mp_trace_copy(tr, 3, 16, MP_COPY_OUT);
    mp_event f = make_event(MP_EV_FREE, 12, 8192, 2, -1);
    f.id = 7;
    f.kind = MP_KIND_ENGINE;
    assert_true(mp_trace_add(tr, f));
    mp_trace_phase_end(tr);
    /* Extremes, appended raw: largest values, no phase. */
    mp_event x = make_event(MP_EV_ALLOC, INT64_MAX, INT64_MAX, 3, 1);
    x.id = INT64_MAX;
    x.aux = INT64_MAX;
    x.phase = UINT32_MAX;
    x.kind = MP_KIND_COUNT - 1;
    x.align_log2 = 63;
    x.op_last = 1;
    assert_true(mp_trace_append_raw(tr, &x));
    x.phase = UINT32_MAX - 1;
    x.t_ns = x.bytes = x.id = x.aux = 0;
    assert_true(mp_trace_append_raw(tr, &x));
    return tr;
}

/* ---- the recorder ------------------------------------------------------------------ */

static void test_events_recorded_in_order(void **state)
{
    (void)state;
    mp_trace *tr = mp_trace_create();
    assert_non_null(tr);
    assert_true(mp_trace_enabled(tr));
    assert_int_equal(mp_trace_count(tr), 0);
    for (int i = 0; i < 5; i++) {
        mp_event e = make_event(MP_EV_ALLOC, 100 + (uint64_t)i, 1000 * (uint64_t)i, i, i - 1);
        e.id = (uint64_t)i + 1;
        e.kind = (uint8_t)(i % MP_KIND_COUNT);
        e.align_log2 = 4;
        assert_true(mp_trace_add(tr, e));
    }
    assert_int_equal(mp_trace_count(tr), 5);
    const mp_event *ev = mp_trace_events(tr);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(ev[i].type, MP_EV_ALLOC);
        assert_int_equal(ev[i].t_ns, 100 + i);
        assert_int_equal(ev[i].bytes, 1000 * i);
        assert_int_equal(ev[i].tensor, i);
        assert_int_equal(ev[i].op, i - 1);
        assert_int_equal(ev[i].op_last, -1);
        assert_int_equal(ev[i].id, i + 1);
        assert_int_equal(ev[i].kind, i % MP_KIND_COUNT);
        assert_int_equal(ev[i].align_log2, 4);
        assert_int_equal(ev[i].phase, UINT32_MAX);
    }
    /* t_ns 0 is stamped with the clock, which does not go backwards. */
    assert_true(mp_trace_add(tr, make_event(MP_EV_FREE, 0, 0, -1, -1)));
    assert_true(mp_trace_add(tr, make_event(MP_EV_FREE, 0, 0, -1, -1)));
    ev = mp_trace_events(tr);
    assert_true(ev[6].t_ns >= ev[5].t_ns);
    assert_false(mp_trace_truncated(tr));

    mp_trace_plan(tr, 9, 3, 128, 256, 1, 4);
    ev = mp_trace_events(tr);
    assert_int_equal(ev[7].type, MP_EV_PLAN);
    assert_int_equal(ev[7].id, 9);
    assert_int_equal(ev[7].tensor, 3);
    assert_int_equal(ev[7].aux, 128);
    assert_int_equal(ev[7].bytes, 256);
    assert_int_equal(ev[7].op, 1);
    assert_int_equal(ev[7].op_last, 4);
    mp_trace_copy(tr, 2, 64, MP_COPY_OUT);
    ev = mp_trace_events(tr);
    assert_int_equal(ev[8].type, MP_EV_COPY);
    assert_int_equal(ev[8].tensor, 2);
    assert_int_equal(ev[8].bytes, 64);
    assert_int_equal(ev[8].aux, MP_COPY_OUT);
    mp_trace_destroy(tr);
}

static void test_growth_keeps_all_events(void **state)
{
    (void)state;
    const size_t n = 1000000;
    mp_trace *tr = mp_trace_create();
    assert_non_null(tr);
    size_t mem0 = mp_trace_memory(tr);
    for (size_t i = 0; i < n; i++) {
        mp_event e = make_event((int)(i % 2 ? MP_EV_FREE : MP_EV_ALLOC), i + 1, i * 3,
                                (int32_t)(i % 1000), -1);
        e.id = i / 2;
        assert_true(mp_trace_add(tr, e));
    }
    assert_int_equal(mp_trace_count(tr), n);
    assert_false(mp_trace_truncated(tr));
    size_t mem1 = mp_trace_memory(tr);
    assert_true(mem1 > mem0);
    assert_true(mem1 >= n * sizeof(mp_event));
    const mp_event *ev = mp_trace_events(tr);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(ev[i].type, i % 2 ? MP_EV_FREE : MP_EV_ALLOC);
        assert_int_equal(ev[i].t_ns, i + 1);
        assert_int_equal(ev[i].bytes, i * 3);
        assert_int_equal(ev[i].tensor, i % 1000);
        assert_int_equal(ev[i].id, i / 2);
    }
    mp_trace_destroy(tr);
}

/* An operator's begin right after the operator before's end (or its phase's begin), and a
 * phase's end right after an operator's end, take that event's time; every other event reads
 * the clock. Explicit small times tell a shared time (equal) from a clock reading (the
 * nanoseconds since the recorder was created: more than a few). */
static void test_marks_share_the_time_before(void **state)
{
    (void)state;
    mp_trace *tr = mp_trace_create();
    assert_non_null(tr);
    assert_true(mp_trace_add(tr, make_event(MP_EV_OP_END, 1, 0, -1, 0)));
    mp_trace_op_mark(tr, MP_EV_OP_BEGIN, 1);                      /* 1: after an end */
    assert_true(mp_trace_add(tr, make_event(MP_EV_PHASE_BEGIN, 2, 0, -1, -1)));
    mp_trace_op_mark(tr, MP_EV_OP_BEGIN, 0);                      /* 3: after a phase begin */
    assert_true(mp_trace_add(tr, make_event(MP_EV_OP_END, 3, 0, -1, 0)));
    mp_trace_phase_end(tr);                                       /* 5: after an end */
    assert_true(mp_trace_add(tr, make_event(MP_EV_OP_END, 4, 0, -1, 0)));
    assert_true(mp_trace_add(tr, make_event(MP_EV_ALLOC, 0, 64, -1, 1)));  /* 7: the clock */
    mp_trace_op_mark(tr, MP_EV_OP_BEGIN, 1);                      /* 8: not after an end */
    assert_true(mp_trace_add(tr, make_event(MP_EV_OP_BEGIN, 5, 0, -1, 2)));
    mp_trace_op_mark(tr, MP_EV_OP_END, 2);                        /* 10: an end never shares */
    assert_true(mp_trace_add(tr, make_event(MP_EV_OP_END, 6, 0, -1, 2)));
    mp_trace_op_mark(tr, MP_EV_OP_END, 3);                        /* 12 */
    assert_true(mp_trace_add(tr, make_event(MP_EV_PHASE_BEGIN, 7, 0, -1, -1)));
    mp_trace_phase_end(tr);                                       /* 14: not after an end */
    assert_int_equal(mp_trace_count(tr), 15);
    const mp_event *ev = mp_trace_events(tr);
    assert_int_equal(ev[1].t_ns, 1);
    assert_int_equal(ev[3].t_ns, 2);
    assert_int_equal(ev[5].t_ns, 3);
    assert_int_equal(ev[5].type, MP_EV_PHASE_END);
    assert_true(ev[7].t_ns > 100);
    assert_true(ev[8].t_ns >= ev[7].t_ns);
    assert_true(ev[10].t_ns > 100);
    assert_true(ev[12].t_ns > 100);
    assert_true(ev[14].t_ns > 100);

    /* A run as the session records it: phase, two operators, phase end. */
    mp_trace_phase_begin(tr, MP_PHASE_RUN, 1);
    for (int32_t op = 0; op < 2; op++) {
        mp_trace_op_mark(tr, MP_EV_OP_BEGIN, op);
        mp_trace_op_mark(tr, MP_EV_OP_END, op);
    }
    mp_trace_phase_end(tr);
    assert_int_equal(mp_trace_count(tr), 21);
    ev = mp_trace_events(tr) + 15;
    assert_int_equal(ev[1].t_ns, ev[0].t_ns); /* begin 0: the phase's begin */
    assert_true(ev[2].t_ns >= ev[1].t_ns);
    assert_int_equal(ev[3].t_ns, ev[2].t_ns); /* begin 1: end 0 */
    assert_true(ev[4].t_ns >= ev[3].t_ns);
    assert_int_equal(ev[5].t_ns, ev[4].t_ns); /* phase end: end 1 */
    for (int i = 0; i < 6; i++)
        assert_int_equal(ev[i].phase, ev[0].phase);
    mp_trace_destroy(tr);
}

static void test_disabled_records_nothing(void **state)
{
    (void)state;
    mp_trace *tr = mp_trace_create();
    assert_non_null(tr);
    mp_trace_set_enabled(tr, false);
    assert_false(mp_trace_enabled(tr));
    assert_true(mp_trace_add(tr, make_event(MP_EV_ALLOC, 1, 10, -1, -1)));
    mp_trace_phase_begin(tr, MP_PHASE_RUN, 1);
    mp_trace_op_mark(tr, MP_EV_OP_BEGIN, 0);
    mp_trace_plan(tr, 1, 0, 0, 8, 0, 0);
    mp_trace_copy(tr, 0, 8, MP_COPY_IN);
    mp_trace_op_mark(tr, MP_EV_OP_END, 0);
    mp_trace_phase_end(tr);
    assert_int_equal(mp_trace_count(tr), 0);
    assert_int_equal(mp_trace_current_phase(tr), UINT32_MAX);

    mp_trace_set_enabled(tr, true);
    assert_true(mp_trace_enabled(tr));
    assert_true(mp_trace_add(tr, make_event(MP_EV_ALLOC, 1, 10, -1, -1)));
    assert_int_equal(mp_trace_count(tr), 1);
    mp_trace_destroy(tr);
}

static void test_phase_indices(void **state)
{
    (void)state;
    mp_trace *tr = mp_trace_create();
    assert_non_null(tr);
    assert_int_equal(mp_trace_current_phase(tr), UINT32_MAX);
    assert_true(mp_trace_add(tr, make_event(MP_EV_ALLOC, 1, 1, -1, -1)));   /* 0: no phase */
    mp_trace_phase_begin(tr, MP_PHASE_LOAD, 0);                             /* 1 */
    assert_int_equal(mp_trace_current_phase(tr), 0);
    assert_true(mp_trace_add(tr, make_event(MP_EV_ALLOC, 2, 1, -1, -1)));   /* 2 */
    mp_trace_phase_end(tr);                                                 /* 3 */
    mp_trace_phase_begin(tr, MP_PHASE_RUN, 1);                              /* 4 */
    mp_trace_op_mark(tr, MP_EV_OP_BEGIN, 0);                                     /* 5 */
    mp_trace_op_mark(tr, MP_EV_OP_END, 0);                                       /* 6 */
    mp_trace_phase_end(tr);                                                 /* 7 */
    mp_trace_phase_begin(tr, MP_PHASE_RUN, 2);                              /* 8 */
    assert_int_equal(mp_trace_current_phase(tr), 2);
    mp_trace_phase_end(tr);                                                 /* 9 */

    static const uint32_t phase[] = {UINT32_MAX, 0, 0, 0, 1, 1, 1, 1, 2, 2};
    static const int type[] = {MP_EV_ALLOC,     MP_EV_PHASE_BEGIN, MP_EV_ALLOC,
                               MP_EV_PHASE_END, MP_EV_PHASE_BEGIN, MP_EV_OP_BEGIN,
                               MP_EV_OP_END,    MP_EV_PHASE_END,   MP_EV_PHASE_BEGIN,
                               MP_EV_PHASE_END};
    assert_int_equal(mp_trace_count(tr), 10);
    const mp_event *ev = mp_trace_events(tr);
    for (int i = 0; i < 10; i++) {
        assert_int_equal(ev[i].phase, phase[i]);
        assert_int_equal(ev[i].type, type[i]);
    }
    assert_int_equal(ev[1].aux, MP_PHASE_LOAD);
    assert_int_equal(ev[4].aux, MP_PHASE_RUN);
    assert_int_equal(ev[4].id, 1);
    assert_int_equal(ev[8].id, 2);
    assert_int_equal(ev[5].op, 0);
    mp_trace_destroy(tr);
}

static void test_names_and_memory(void **state)
{
    (void)state;
    mp_trace *tr = mp_trace_create();
    assert_non_null(tr);
    size_t mem0 = mp_trace_memory(tr);
    assert_true(mem0 > 0);
    assert_true(mp_trace_alloc_tables(tr, 3, 1, 1, 1));
    mp_trace_meta *m = mp_trace_meta_mut(tr);
    assert_non_null(m->tensors);
    assert_null(m->tensors[0].name);
    assert_true(mp_trace_set_str(tr, &m->tensors[0].name, "a fairly long tensor name"));
    set_op(tr, 0, "CONV_2D", 2, (const int32_t[]){0, 1}, 1, (const int32_t[]){2});
    assert_true(mp_trace_memory(tr) > mem0);
    assert_string_equal(mp_trace_get_meta(tr)->tensors[0].name, "a fairly long tensor name");
    assert_string_equal(mp_ev_type_name(MP_EV_PLAN), "plan");
    assert_string_equal(mp_phase_kind_name(MP_PHASE_TEARDOWN), "teardown");
    assert_string_equal(mp_kind_name(MP_KIND_SCRATCH), "scratch");
    assert_string_equal(mp_ev_type_name(MP_EV_TYPE_COUNT), "?");
    mp_trace_destroy(tr);
}

/* ---- saving and reading -------------------------------------------------------------- */

static void test_save_load_roundtrip(void **state)
{
    (void)state;
    mp_trace *tr = sample_trace();
    const char *path = mp_test_tmp_path("roundtrip.json");
    mp_error err = {0};
    assert_int_equal(mp_trace_save(tr, path, &err), MP_OK);
    assert_int_equal(mp_test_tmpdir_count(), 1); /* no temporary file left */

    mp_trace *back = NULL;
    mp_status st = mp_trace_load(path, &back, &err);
    if (st != MP_OK)
        fail_msg("load: %s", err.msg);
    assert_non_null(back);
    assert_traces_equal(tr, back);
    assert_null(mp_trace_get_meta(back)->planner);
    assert_null(mp_trace_get_meta(back)->tensors[3].name);

    /* The file is ordinary JSON with the documented layout. */
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    assert_non_null(root);
    assert_string_equal(json_string_value(json_object_get(root, "format")), "memprof-trace");
    assert_int_equal(json_integer_value(json_object_get(root, "version")), MP_TRACE_VERSION);
    json_t *fields = json_object_get(root, "event_fields");
    assert_int_equal(json_array_size(fields), 11);
    assert_string_equal(json_string_value(json_array_get(fields, 0)), "type");
    assert_string_equal(json_string_value(json_array_get(fields, 10)), "align_log2");
    assert_int_equal(json_array_size(json_object_get(root, "events")), mp_trace_count(tr));
    json_decref(root);

    /* Saving again replaces the file, still without leftovers. */
    assert_int_equal(mp_trace_save(back, path, &err), MP_OK);
    assert_int_equal(mp_test_tmpdir_count(), 1);
    mp_trace_destroy(back);
    assert_int_equal(mp_trace_load(path, &back, &err), MP_OK);
    assert_traces_equal(tr, back);
    mp_trace_destroy(back);
    mp_trace_destroy(tr);
    unlink(path);
}

static void test_empty_trace_roundtrip(void **state)
{
    (void)state;
    mp_trace *tr = mp_trace_create();
    assert_non_null(tr);
    const char *path = mp_test_tmp_path("empty_trace.json");
    mp_error err = {0};
    assert_int_equal(mp_trace_save(tr, path, &err), MP_OK);
    mp_trace *back = NULL;
    assert_int_equal(mp_trace_load(path, &back, &err), MP_OK);
    assert_traces_equal(tr, back);
    assert_null(mp_trace_get_meta(back)->model);
    mp_trace_destroy(back);
    mp_trace_destroy(tr);
    unlink(path);
}

static void test_invalid_utf8_becomes_question_mark(void **state)
{
    (void)state;
    mp_trace *tr = mp_trace_create();
    assert_non_null(tr);
    mp_trace_meta *m = mp_trace_meta_mut(tr);
    /* a lone continuation byte, a truncated sequence, an overlong form, a surrogate */
    assert_true(mp_trace_set_str(tr, &m->model,
                                 "a\x80" "b\xc3" "c\xc0\xaf" "d\xed\xa0\x80" "e\xff"));
    const char *path = mp_test_tmp_path("utf8.json");
    mp_error err = {0};
    assert_int_equal(mp_trace_save(tr, path, &err), MP_OK);
    mp_trace *back = NULL;
    assert_int_equal(mp_trace_load(path, &back, &err), MP_OK);
    assert_string_equal(mp_trace_get_meta(back)->model, "a?b?c??d???e?");
    mp_trace_destroy(back);
    mp_trace_destroy(tr);
    unlink(path);
}

static void test_large_roundtrip(void **state)
{
    (void)state;
    const size_t n = 200000;
    mp_trace *tr = sample_trace();
    for (size_t i = 0; i < n; i++) {
        mp_event e = make_event((int)(i % MP_EV_TYPE_COUNT), i * 1000 + 1, i * 7, (int32_t)(i % 4),
                                (int32_t)(i % 2));
        if (e.type == MP_EV_PHASE_BEGIN)
            e.aux = i % MP_PHASE_KIND_COUNT;
        else if (e.type == MP_EV_COPY)
            e.aux = i % 2;
        else
            e.aux = i;
        e.id = i / 2;
        e.phase = (uint32_t)(i / 100);
        e.kind = (uint8_t)(i % MP_KIND_COUNT);
        e.align_log2 = (uint8_t)(i % 13);
        assert_true(mp_trace_append_raw(tr, &e));
    }
    const char *path = mp_test_tmp_path("large.json");
    mp_error err = {0};
    assert_int_equal(mp_trace_save(tr, path, &err), MP_OK);
    mp_trace *back = NULL;
    assert_int_equal(mp_trace_load(path, &back, &err), MP_OK);
    assert_traces_equal(tr, back);
    mp_trace_destroy(back);
    mp_trace_destroy(tr);
    unlink(path);
}

static void test_save_failures_leave_no_file(void **state)
{
    (void)state;
    mp_trace *tr = sample_trace();
    mp_error err = {0};

    const char *path = mp_test_tmp_path("no/such/folder/trace.json");
    assert_int_equal(mp_trace_save(tr, path, &err), MP_ERR_IO);
    assert_non_null(strstr(err.msg, path));
    struct stat st;
    assert_int_not_equal(stat(path, &st), 0);
    assert_int_equal(mp_test_tmpdir_count(), 0);

    /* A trace the reader would refuse is not saved, and an existing file stays as it was. */
    const char *keep = mp_test_tmp_path("keep.json");
    mp_test_write_text(keep, "old");
    mp_event bad = make_event(MP_EV_ALLOC, 1, 1, 4, -1); /* tensor 4 of 4 */
    assert_true(mp_trace_append_raw(tr, &bad));
    memset(&err, 0, sizeof err);
    assert_int_equal(mp_trace_save(tr, keep, &err), MP_ERR_ARG);
    assert_non_null(strstr(err.msg, "tensor"));
    size_t size = 0;
    char *text = mp_test_read_file(keep, &size);
    assert_non_null(text);
    assert_int_equal(size, 3);
    assert_memory_equal(text, "old", 3);
    free(text);
    assert_int_equal(mp_test_tmpdir_count(), 1);
    unlink(keep);
    mp_trace_destroy(tr);
}

/* A write that fails midway (the file size limit, standing in for a full disk) leaves the
 * previous file as it was and no temporary file. */
static void test_failed_write_keeps_old_file(void **state)
{
    (void)state;
    mp_trace *tr = sample_trace();
    for (uint64_t i = 0; i < 10000; i++) {
        mp_event e = make_event(MP_EV_ALLOC, i + 1, i, 0, 0);
        assert_true(mp_trace_append_raw(tr, &e));
    }
    const char *path = mp_test_tmp_path("limited.json");
    mp_test_write_text(path, "old");

    struct rlimit old_limit, limit;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
    limit = old_limit;
    limit.rlim_cur = 4096;
    void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &limit), 0);
    mp_error err = {0};
    mp_status st = mp_trace_save(tr, path, &err);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old_limit), 0);
    signal(SIGXFSZ, old_handler);

    assert_int_equal(st, MP_ERR_IO);
    assert_non_null(strstr(err.msg, path));
    size_t size = 0;
    char *text = mp_test_read_file(path, &size);
    assert_non_null(text);
    assert_int_equal(size, 3);
    free(text);
    assert_int_equal(mp_test_tmpdir_count(), 1);
    unlink(path);
    mp_trace_destroy(tr);
}

static void expect_load_failure(const char *path, mp_status want, const char *want_msg)
{
    static int sentinel;
    mp_trace *tr = (mp_trace *)&sentinel; /* must be reset to NULL on failure */
    mp_error err = {0};
    mp_status st = mp_trace_load(path, &tr, &err);
    if (st != want)
        fail_msg("%s: status %s, expected %s (%s)", path, mp_status_name(st),
                 mp_status_name(want), err.msg);
    assert_null(tr);
    assert_int_equal(err.status, want);
    if (!strstr(err.msg, path))
        fail_msg("message does not name the file: %s", err.msg);
    if (want_msg && !strstr(err.msg, want_msg))
        fail_msg("message \"%s\" lacks \"%s\"", err.msg, want_msg);
}

static void test_mp_test_valid_trace_loads(void **state)
{
    (void)state;
    const char *path = mp_test_tmp_path("valid.json");
    mp_test_write_text(path, mp_test_valid_trace);
    mp_trace *tr = NULL;
    mp_error err = {0};
    mp_status st = mp_trace_load(path, &tr, &err);
    if (st != MP_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(mp_trace_count(tr), 3);
    const mp_event *e = &mp_trace_events(tr)[1];
    assert_int_equal(e->type, MP_EV_ALLOC);
    assert_int_equal(e->kind, MP_KIND_DYNAMIC);
    assert_int_equal(e->tensor, 1);
    assert_int_equal(e->bytes, 64);
    assert_int_equal(e->id, 7);
    assert_int_equal(e->align_log2, 6);
    assert_string_equal(mp_trace_get_meta(tr)->planner, "greedy");
    assert_true(mp_trace_get_meta(tr)->tensors[1].is_const);
    mp_trace_destroy(tr);
    unlink(path);
}

static void test_bad_files(void **state)
{
    (void)state;
    static const struct {
        const char *from, *to; /* change to mp_test_valid_trace */
        const char *msg;       /* expected in the message */
    } cases[] = {
        {"\"memprof-trace\"", "\"other-trace\"", "not a memprof trace"},
        {"\"format\":\"memprof-trace\",", "", "not a memprof trace"},
        {"\"version\":1", "\"version\":99",
         "trace version 99 is newer than this memprof reads (3)"},
        {"\"version\":1", "\"version\":0", "version"},
        {"\"version\":1", "\"version\":\"1\"", "version"},
        {"[0,2,0,2,1,0,-1,64,", "[0,2,0,2,1,0,-1,\"64\",",
         "event 1 (line 9): field 'bytes' is not a non-negative integer"},
        {"[0,2,0,2,1,0,-1,64,", "[0,2,0,2,1,0,-1,-64,",
         "event 1 (line 9): field 'bytes' is not a non-negative integer"},
        {"[0,2,0,2,1,0,-1,64,", "[0,2,0,2,1,0,-1,6.5,", "event 1 (line 9): field 'bytes'"},
        {"[0,2,0,2,1,0,-1,64,7,0,6]", "[0,2,0,2,1,0,-1,64,7,0]",
         "event 1 (line 9) is not an array of 11"},
        {"[0,2,0,2,1,0,-1,64,7,0,6]", "[0,2,0,2,1,0,-1,64,7,0,6,0]",
         "event 1 (line 9) is not an array"},
        {"[0,2,0,2,1,0,-1,64,7,0,6]", "{}", "event 1 (line 9) is not an array"},
        {"[0,2,0,2,1,", "[0,2,0,2,2,", "event 1 (line 9): field 'tensor' is 2, outside -1..1"},
        {"[0,2,0,2,1,", "[0,2,0,2,-2,", "event 1 (line 9): field 'tensor'"},
        {"[0,2,0,2,1,0,", "[0,2,0,2,1,1,", "event 1 (line 9): field 'op'"},
        {"[0,2,0,2,1,0,-1,", "[0,2,0,2,1,0,5,", "event 1 (line 9): field 'op_last'"},
        {"[0,2,0,2,", "[10,2,0,2,", "event 1 (line 9): field 'type'"},
        /* rss samples (type 9) came with version 2: a version 1 file cannot hold one */
        {"[0,2,0,2,", "[9,2,0,2,", "event 1 (line 9): field 'type'"},
        {"[0,2,0,2,", "[0,2,0,99,", "event 1 (line 9): field 'kind'"},
        {"[0,2,0,2,", "[0,2,-2,2,", "event 1 (line 9): field 'phase'"},
        {"64,7,0,6]", "64,7,0,64]", "event 1 (line 9): field 'align_log2'"},
        {"[0,2,0,2,", "[0,99999999999999999999,0,2,", "line 9"},
        {"[5,1,0,0,-1,-1,-1,0,1,4,0]", "[5,1,0,0,-1,-1,-1,0,1,6,0]",
         "event 0 (line 8): phase kind"},
        {"[6,3,0,0,-1,-1,-1,0,0,0,0]", "[4,3,0,0,0,-1,-1,8,0,2,0]",
         "event 2 (line 10): copy direction"},
        {"\"threads\":2", "\"threads\":\"2\"", "meta.threads is not an integer"},
        {"\"threads\":2", "\"threads\":-3", "meta.threads"},
        {"\"process_heap_peak\":-1", "\"process_heap_peak\":-2", "process_heap_peak"},
        {"\"model\":\"m.tflite\"", "\"model\":5", "meta.model is not a string"},
        {"\"model\":\"m.tflite\",", "", "meta has no 'model'"},
        {"\"dtype\":0,\"const\":false", "\"dtype\":99,\"const\":false", "meta.tensors[0].dtype"},
        {"\"const\":false", "\"const\":0", "meta.tensors[0].const"},
        {"{\"name\":\"in\",", "{\"name\":[],", "meta.tensors[0].name"},
        {"\"inputs\":[0,1]", "\"inputs\":[0,2]", "meta.ops[0].inputs[1] is 2"},
        {"\"inputs\":[0,1]", "\"inputs\":[0,null]", "meta.ops[0].inputs[1]"},
        {"\"outputs\":[0]}]", "\"outputs\":[-5]}]", "meta.ops[0].outputs[0]"},
        {"\"inputs\":[0],", "\"inputs\":[-1],", "meta.inputs[0]"},
        {"\"tensors\":[", "\"tensors\":{\"a\":1},\"x\":[", "meta.tensors is not an array"},
        {"\"meta\":{", "\"meta\":[],\"old\":{", "meta is not an object"},
        {"\"event_fields\":[\"type\",", "\"event_fields\":[\"kind\",", "event_fields"},
        {"\"event_fields\":[\"type\",", "\"event_fields\":[\"tipe\",", "event_fields[0]"},
        {"\"events\":[\n", "\"events\":{},\"x\":[\n", "events is not an array"},
        {"\"version\":1,", "\"version\":1,\"version\":1,", "duplicate"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "bad%02zu.json", i);
        const char *path = mp_test_tmp_path(name);
        char *text = mp_test_valid_trace_with(cases[i].from, cases[i].to);
        mp_test_write_text(path, text);
        free(text);
        expect_load_failure(path, MP_ERR_FORMAT, cases[i].msg);
        unlink(path);
    }
}

static void test_truncated_and_garbage_files(void **state)
{
    (void)state;
    /* A real saved file cut in half. */
    mp_trace *tr = sample_trace();
    const char *full = mp_test_tmp_path("full.json");
    mp_error err = {0};
    assert_int_equal(mp_trace_save(tr, full, &err), MP_OK);
    mp_trace_destroy(tr);
    size_t size = 0;
    char *text = mp_test_read_file(full, &size);
    assert_non_null(text);
    text[size / 2] = '\0';
    const char *half = mp_test_tmp_path("half.json");
    mp_test_write_text(half, text);
    free(text);
    expect_load_failure(half, MP_ERR_FORMAT, "line");
    unlink(half);
    unlink(full);

    const char *path = mp_test_tmp_path("garbage.json");
    mp_test_write_text(path, "this is not JSON at all\n");
    expect_load_failure(path, MP_ERR_FORMAT, "line 1");
    mp_test_write_text(path, "");
    expect_load_failure(path, MP_ERR_FORMAT, "empty");
    mp_test_write_text(path, "[1,2,3]");
    expect_load_failure(path, MP_ERR_FORMAT, "not a memprof trace");
    mp_test_write_text(path, "{\"format\":\"memprof-trace\",\"version\":1} trailing");
    expect_load_failure(path, MP_ERR_FORMAT, "line 1");
    /* A NUL inside a name cannot be held by the trace: refused. */
    text = mp_test_valid_trace_with("\"name\":\"in\"", "\"name\":\"i\\u0000n\"");
    mp_test_write_text(path, text);
    free(text);
    expect_load_failure(path, MP_ERR_FORMAT, NULL);
    unlink(path);

    expect_load_failure(mp_test_tmp_path("missing.json"), MP_ERR_IO, "missing.json");
    expect_load_failure(mp_test_tmpdir(), MP_ERR_IO, NULL); /* a folder */
    assert_int_equal(mp_test_tmpdir_count(), 0);
}

static int make_tmp_dir(void **state)
{
    (void)state;
    return mp_test_tmpdir_make("mp_test_trace");
}

static int remove_tmp_dir(void **state)
{
    (void)state;
    return mp_test_tmpdir_remove();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_events_recorded_in_order),
        cmocka_unit_test(test_growth_keeps_all_events),
        cmocka_unit_test(test_marks_share_the_time_before),
        cmocka_unit_test(test_disabled_records_nothing),
        cmocka_unit_test(test_phase_indices),
        cmocka_unit_test(test_names_and_memory),
        cmocka_unit_test(test_save_load_roundtrip),
        cmocka_unit_test(test_empty_trace_roundtrip),
        cmocka_unit_test(test_invalid_utf8_becomes_question_mark),
        cmocka_unit_test(test_large_roundtrip),
        cmocka_unit_test(test_save_failures_leave_no_file),
        cmocka_unit_test(test_failed_write_keeps_old_file),
        cmocka_unit_test(test_mp_test_valid_trace_loads),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_truncated_and_garbage_files),
    };
    return cmocka_run_group_tests(tests, make_tmp_dir, remove_tmp_dir);
}
