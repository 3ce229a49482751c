/* Tests of event sources (analyzers/source.h) over saved trace files, i.e. of the engine's
 * streaming trace reader (engine/trace_reader.c): a file source yields exactly the events
 * that were saved, in any valid JSON layout, rewinds, counts, refuses malformed files event
 * by event with messages naming the file, event, line and field, survives every truncation
 * of a file, and gives the same summary as the trace loaded in memory. */
#include "tests/util/testutil.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyzers/source.h"
#include "analyzers/summary.h"
#include "engine/session.h"
#include "trace/trace.h"
#include "tests/util/trace_fixtures.h"

/* ---- random traces ------------------------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rnd(void)
{
    /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717u;
}

/* A value in 0..n-1. */
static uint64_t below(uint64_t n)
{
    return rnd() % n;
}

/* An unsigned field value: small, medium or extreme (up to 2^63-1). */
static uint64_t rnd_u63(void)
{
    switch (below(4)) {
    case 0: return below(100);
    case 1: return below(1u << 30);
    case 2: return (uint64_t)INT64_MAX - below(3);
    default: return rnd() >> 1;
    }
}

/* A trace with n_tensors tensors, n_ops ops and n random events, every one of them valid. */
static mp_trace *random_trace(int32_t n_tensors, int32_t n_ops, size_t n)
{
    mp_trace *tr = mp_trace_create();
    assert_non_null(tr);
    mp_trace_meta *m = mp_trace_meta_mut(tr);
    assert_true(mp_trace_set_str(tr, &m->model, "random \"model\"\n"));
    assert_true(mp_trace_set_str(tr, &m->mode, "dynamic"));
    m->threads = 3;
    m->process_heap_peak = 1000000;
    m->allocator_overhead = 1234;
    assert_true(mp_trace_alloc_tables(tr, n_tensors, n_ops, n_tensors > 0, n_tensors > 0));
    for (int32_t i = 0; i < n_tensors; i++) {
        char name[32];
        snprintf(name, sizeof name, "t%d]\"[,", (int)i); /* brackets inside names */
        assert_true(mp_trace_set_str(tr, &m->tensors[i].name, name));
        m->tensors[i].dtype = (int32_t)below(10);
        m->tensors[i].is_const = below(2);
    }
    for (int32_t i = 0; i < n_ops; i++) {
        int32_t in[2] = {n_tensors ? (int32_t)below((uint64_t)n_tensors) : -1, -1};
        assert_true(mp_trace_set_op(tr, i, "CONV_2D", 2, in, 0, NULL));
    }
    if (n_tensors > 0) {
        m->inputs[0] = 0;
        m->outputs[0] = n_tensors - 1;
    }
    for (size_t i = 0; i < n; i++) {
        mp_event e;
        memset(&e, 0, sizeof e);
        e.type = (uint8_t)below(MP_EV_TYPE_COUNT);
        e.t_ns = rnd_u63();
        e.bytes = rnd_u63();
        e.id = rnd_u63();
        e.aux = e.type == MP_EV_PHASE_BEGIN ? below(MP_PHASE_KIND_COUNT)
                : e.type == MP_EV_COPY      ? below(2)
                                            : rnd_u63();
        e.tensor = (int32_t)below((uint64_t)n_tensors + 1) - 1;
        e.op = (int32_t)below((uint64_t)n_ops + 1) - 1;
        e.op_last = (int32_t)below((uint64_t)n_ops + 1) - 1;
        e.phase = below(8) == 0   ? UINT32_MAX
                  : below(3) == 0 ? UINT32_MAX - 1
                                  : (uint32_t)below(1000);
        e.kind = (uint8_t)below(MP_KIND_COUNT);
        e.align_log2 = (uint8_t)below(64);
        assert_true(mp_trace_append_raw(tr, &e));
    }
    return tr;
}

/* One pass over src must yield exactly tr's events and then end (and stay ended). */
static void assert_pass_equals(mp_source *src, const mp_trace *tr)
{
    mp_error err = {0};
    assert_int_equal(mp_source_rewind(src, &err), MP_OK);
    const mp_event *want = mp_trace_events(tr);
    size_t n = mp_trace_count(tr);
    mp_event ev;
    for (size_t i = 0; i < n; i++) {
        int got = mp_source_next(src, &ev, &err);
        if (got != 1)
            fail_msg("event %zu of %zu: next gave %d (%s)", i, n, got, err.msg);
        mp_test_assert_event_equal(&ev, &want[i], i);
    }
    int got = mp_source_next(src, &ev, &err);
    if (got != 0)
        fail_msg("after %zu events: next gave %d (%s)", n, got, err.msg);
    assert_int_equal(mp_source_next(src, &ev, &err), 0);
    assert_int_equal(mp_source_count(src), n);
}

/* Open path as a source and check it against tr: metadata, two full passes, and a pass
 * broken off halfway then restarted. */
static void check_file_source(const char *path, const mp_trace *tr)
{
    mp_source *src = NULL;
    mp_error err = {0};
    mp_status st = mp_source_open(path, &src, &err);
    if (st != MP_OK)
        fail_msg("open: %s", err.msg);
    assert_string_equal(mp_source_name(src), path);
    assert_false(mp_source_truncated(src));
    assert_int_equal(mp_source_count(src), SIZE_MAX); /* unknown before a pass */
    mp_test_assert_meta_equal(mp_source_meta(src), mp_trace_get_meta(tr));
    assert_pass_equals(src, tr);
    assert_pass_equals(src, tr);
    size_t n = mp_trace_count(tr);
    mp_event ev;
    assert_int_equal(mp_source_rewind(src, &err), MP_OK);
    for (size_t i = 0; i < n / 2; i++)
        assert_int_equal(mp_source_next(src, &ev, &err), 1);
    assert_pass_equals(src, tr);
    mp_source_close(src);

    /* mp_trace_load reads the same file through the same reader. */
    mp_trace *back = NULL;
    st = mp_trace_load(path, &back, &err);
    if (st != MP_OK)
        fail_msg("load: %s", err.msg);
    assert_int_equal(mp_trace_count(back), n);
    for (size_t i = 0; i < n; i++)
        mp_test_assert_event_equal(&mp_trace_events(back)[i], &mp_trace_events(tr)[i], i);
    mp_trace_destroy(back);
}

/* The saved file rewritten by jansson: another layout (indented or compact, keys sorted so
 * that "events" comes before "meta" and "version"), event columns in another order, and
 * unknown members. */
static void rewrite_with_jansson(const char *from, const char *to, size_t flags, bool permute)
{
    json_error_t jerr;
    json_t *root = json_load_file(from, 0, &jerr);
    assert_non_null(root);
    if (permute) {
        /* reverse the columns */
        json_t *fields = json_object_get(root, "event_fields");
        json_t *rev = json_array();
        for (size_t k = json_array_size(fields); k-- > 0;)
            json_array_append(rev, json_array_get(fields, k));
        json_object_set_new(root, "event_fields", rev);
        json_t *events = json_object_get(root, "events");
        size_t i;
        json_t *e;
        json_array_foreach(events, i, e) {
            json_t *r = json_array();
            for (size_t k = json_array_size(e); k-- > 0;)
                json_array_append(r, json_array_get(e, k));
            json_array_set_new(events, i, r);
        }
    }
    json_object_set_new(root, "a_note", json_pack("{s:[i,s,{}],s:n}", "x", 1, "]}", "y"));
    json_object_set_new(root, "zz_after", json_string("events are before me, ] }"));
    json_object_set_new(json_object_get(root, "meta"), "unknown", json_true());
    assert_int_equal(json_dump_file(root, to, flags), 0);
    json_decref(root);
}

static void test_random_traces_roundtrip(void **state)
{
    (void)state;
    /* 0 events, a few, and more than the 1 MiB read buffer holds */
    static const size_t sizes[] = {0, 1, 2, 17, 1000, 60000};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        mp_trace *tr = random_trace((int32_t)(s % 3 == 0 ? 0 : 5 + s), (int32_t)(s % 4 ? 3 : 0),
                                    sizes[s]);
        const char *path = mp_test_tmp_path("random.json");
        mp_error err = {0};
        assert_int_equal(mp_trace_save(tr, path, &err), MP_OK);
        check_file_source(path, tr);
        if (sizes[s] <= 1000) {
            const char *other = mp_test_tmp_path("random_layout.json");
            rewrite_with_jansson(path, other, JSON_INDENT(3) | JSON_SORT_KEYS, false);
            check_file_source(other, tr);
            rewrite_with_jansson(path, other, JSON_COMPACT, true);
            check_file_source(other, tr);
            unlink(other);
        }
        unlink(path);
        mp_trace_destroy(tr);
    }
}

static void test_memory_source(void **state)
{
    (void)state;
    mp_trace *tr = random_trace(4, 2, 100);
    mp_source *src = mp_source_of_trace(tr);
    assert_non_null(src);
    assert_int_equal(mp_source_count(src), 100);
    assert_string_equal(mp_source_name(src), "trace");
    assert_pass_equals(src, tr);
    mp_source_close(src);
    mp_trace_destroy(tr);
}

/* ---- hand-written files ---------------------------------------------------------------- */

/* A small valid trace, version 1, one event per line (event i on line 8 + i). */
/* Open text as a source and pass over it: returns the status of open or of the pass (with
 * the message in err) and the number of events yielded before it ended. */
static mp_status source_status(const char *path, mp_error *err, size_t *yielded)
{
    mp_source *src = NULL;
    *yielded = 0;
    mp_status st = mp_source_open(path, &src, err);
    if (st != MP_OK) {
        assert_null(src);
        return st;
    }
    mp_event ev;
    int got;
    while ((got = mp_source_next(src, &ev, err)) > 0)
        (*yielded)++;
    if (got < 0) {
        st = err->status;
        /* the pass is over: it stays over, with the same error */
        mp_error again = {0};
        assert_int_equal(mp_source_next(src, &ev, &again), -1);
        assert_int_equal(again.status, st);
        assert_string_equal(again.msg, err->msg);
        assert_int_equal(mp_source_count(src), SIZE_MAX);
        /* a new pass meets the same problem at the same event */
        size_t n = 0;
        assert_int_equal(mp_source_rewind(src, &again), MP_OK);
        while ((got = mp_source_next(src, &ev, &again)) > 0)
            n++;
        assert_int_equal(got, -1);
        assert_int_equal(n, *yielded);
        assert_string_equal(again.msg, err->msg);
    } else {
        assert_int_equal(mp_source_count(src), *yielded);
    }
    mp_source_close(src);
    return st;
}

static void expect_text(const char *text, mp_status want, const char *want_msg,
                        size_t want_yielded)
{
    const char *path = mp_test_tmp_path("case.json");
    mp_test_write_text(path, text);
    mp_error err = {0};
    size_t yielded;
    mp_status st = source_status(path, &err, &yielded);
    if (st != want)
        fail_msg("status %s, expected %s (%s)\n--- file:\n%s", mp_status_name(st),
                 mp_status_name(want), err.msg, text);
    if (want != MP_OK) {
        if (!strstr(err.msg, path))
            fail_msg("message does not name the file: %s", err.msg);
        if (want_msg && !strstr(err.msg, want_msg))
            fail_msg("message \"%s\" lacks \"%s\"", err.msg, want_msg);
    }
    if (want_yielded != SIZE_MAX && yielded != want_yielded)
        fail_msg("%zu events before the end, expected %zu (%s)", yielded, want_yielded,
                 err.msg);
    /* mp_trace_load agrees */
    mp_trace *tr = NULL;
    mp_error lerr = {0};
    assert_int_equal(mp_trace_load(path, &tr, &lerr), want);
    if (want != MP_OK)
        assert_string_equal(lerr.msg, err.msg);
    mp_trace_destroy(tr);
    unlink(path);
}

static void expect_case(const char *from, const char *to, mp_status want, const char *msg,
                        size_t yielded)
{
    char *text = mp_test_valid_trace_with(from, to);
    expect_text(text, want, msg, yielded);
    free(text);
}

static void test_valid_layouts(void **state)
{
    (void)state;
    expect_text(mp_test_valid_trace, MP_OK, NULL, 3);
    /* whitespace anywhere JSON allows it */
    expect_case("[0,2,0,2,1,0,-1,64,7,0,6]", " [ 0 ,\t2 ,\r\n 0,2,1 ,0 ,-1,64,7,0,6\n\n] ", MP_OK,
                NULL, 3);
    expect_case("\"events\":[\n", "\"events\" :\r\n\t[   ", MP_OK, NULL, 3);
    expect_case("0,0,0,0]]}\n", "0,0,0,0]\n]\n}\n\n\t  \n", MP_OK, NULL, 3);
    /* -0 is the integer 0 */
    expect_case("[0,2,0,2,1,0,-1,64,", "[0,2,-0,2,1,0,-1,-0,", MP_OK, NULL, 3);
    /* no events */
    expect_case("\"events\":[\n", "\"events\":[],\"old_events\":[\n", MP_OK, NULL, 0);
    /* unknown members, before and after the events, of any JSON type */
    expect_case("\"events\":[\n", "\"x\":{\"a\":[1,\"]\",null]},\"events\":[\n", MP_OK, NULL, 3);
    expect_case("0,0,0,0]]}\n", "0,0,0,0]],\"later\":[{\"}\":\"]\"}],\"n\":-1.5e3}\n", MP_OK,
                NULL, 3);
    /* events before everything else: {"events":[...],"format":...,"event_fields":[...]} */
    {
        const char *ev = strstr(mp_test_valid_trace, "\"events\"");
        size_t head_len = (size_t)(ev - mp_test_valid_trace) - 3; /* without '{' and ",\n" */
        size_t ev_len = strlen(ev) - 2;                   /* without "}\n" */
        char *text = malloc(strlen(mp_test_valid_trace) + 8);
        assert_non_null(text);
        sprintf(text, "{%.*s,\n%.*s}\n", (int)ev_len, ev, (int)head_len, mp_test_valid_trace + 1);
        expect_text(text, MP_OK, NULL, 3);
        free(text);
    }
    /* escaped key names are the same keys */
    expect_case("\"events\":[\n", "\"\\u0065vents\":[\n", MP_OK, NULL, 3);
    /* the optional "truncated" member */
    expect_case("\"threads\":2", "\"threads\":2,\"truncated\":false", MP_OK, NULL, 3);
}

static void test_truncated_member(void **state)
{
    (void)state;
    const char *path = mp_test_tmp_path("truncated.json");
    char *text = mp_test_valid_trace_with("\"threads\":2", "\"threads\":2,\"truncated\":true");
    mp_test_write_text(path, text);
    free(text);
    mp_source *src = NULL;
    mp_error err = {0};
    assert_int_equal(mp_source_open(path, &src, &err), MP_OK);
    assert_true(mp_source_truncated(src));
    mp_source_close(src);
    mp_trace *loaded = NULL;
    assert_int_equal(mp_trace_load(path, &loaded, &err), MP_OK);
    assert_true(mp_trace_truncated(loaded)); /* loading keeps the flag too */
    mp_trace_destroy(loaded);
    mp_test_write_text(path, mp_test_valid_trace);
    assert_int_equal(mp_trace_load(path, &loaded, &err), MP_OK);
    assert_false(mp_trace_truncated(loaded));
    mp_trace_destroy(loaded);
    assert_int_equal(mp_source_open(path, &src, &err), MP_OK);
    assert_false(mp_source_truncated(src));
    mp_source_close(src);
    unlink(path);
    expect_case("\"threads\":2", "\"threads\":2,\"truncated\":1", MP_ERR_FORMAT,
                "meta.truncated is not true or false", 0);

    /* A trace saved while not truncated has no such member. */
    mp_trace *tr = random_trace(2, 1, 3);
    assert_int_equal(mp_trace_save(tr, path, &err), MP_OK);
    size_t size;
    char *saved = mp_test_read_file(path, &size);
    assert_non_null(saved);
    assert_null(memmem(saved, size, "truncated", 9)); /* (the file is not NUL-terminated) */
    free(saved);
    mp_trace_destroy(tr);
    unlink(path);
}

static void test_bad_events(void **state)
{
    (void)state;
    static const struct {
        const char *from, *to; /* change to mp_test_valid_trace */
        const char *msg;       /* expected in the message */
        size_t yielded;        /* events yielded before the error */
    } cases[] = {
        /* fields */
        {"[0,2,0,2,1,0,-1,64,", "[0,2,0,2,1,0,-1,\"64\",",
         "event 1 (line 9): field 'bytes' is not a non-negative integer", 1},
        {"[0,2,0,2,1,0,-1,64,", "[0,2,0,2,1,0,-1,-64,",
         "event 1 (line 9): field 'bytes' is not a non-negative integer", 1},
        {"[0,2,0,2,1,0,-1,64,", "[0,2,0,2,1,0,-1,6.5,",
         "event 1 (line 9): field 'bytes' is not a non-negative integer", 1},
        {"[0,2,0,2,1,0,-1,64,", "[0,2,0,2,1,0,-1,64e0,", "event 1 (line 9): field 'bytes'", 1},
        {"[0,2,0,2,1,0,-1,64,", "[0,2,0,2,1,0,-1,1E+2,", "event 1 (line 9): field 'bytes'", 1},
        {"[0,2,0,2,1,0,-1,64,", "[0,2,0,2,1,0,-1,null,", "event 1 (line 9): field 'bytes'", 1},
        {"[0,2,0,2,1,0,-1,64,", "[0,2,0,2,1,0,-1,[64],", "event 1 (line 9): field 'bytes'", 1},
        {"[0,2,0,2,1,0,-1,64,", "[0,2,0,2,1,0,-1,9223372036854775808,",
         "event 1 (line 9): field 'bytes' is not a non-negative integer", 1},
        {"[0,2,0,2,1,0,-1,64,", "[0,2,0,2,1,0,-1,9223372036854775807,", NULL, 3}, /* fits */
        {"[0,2,0,2,", "[0,99999999999999999999,0,2,", "event 1 (line 9): field 't_ns'", 1},
        {"[0,2,0,2,1,", "[0,2,0,2,2,", "event 1 (line 9): field 'tensor' is 2, outside -1..1", 1},
        {"[0,2,0,2,1,", "[0,2,0,2,-2,", "event 1 (line 9): field 'tensor' is -2, outside -1..1",
         1},
        {"[0,2,0,2,1,", "[0,2,0,2,-99999999999999999999,", "event 1 (line 9): field 'tensor'",
         1},
        {"[0,2,0,2,1,", "[0,2,0,2,true,", "event 1 (line 9): field 'tensor' is not an integer",
         1},
        {"[0,2,0,2,1,0,", "[0,2,0,2,1,1,", "event 1 (line 9): field 'op' is 1, outside -1..0", 1},
        {"[0,2,0,2,1,0,-1,", "[0,2,0,2,1,0,5,", "event 1 (line 9): field 'op_last'", 1},
        {"[0,2,0,2,", "[10,2,0,2,", "event 1 (line 9): field 'type' is 10, outside 0..8", 1},
        /* rss samples (type 9) need version 2 */
        {"[0,2,0,2,", "[9,2,0,2,", "event 1 (line 9): field 'type' is 9, outside 0..8", 1},
        {"[0,2,0,2,", "[0,2,0,99,", "event 1 (line 9): field 'kind'", 1},
        {"[0,2,0,2,", "[0,2,-2,2,", "event 1 (line 9): field 'phase'", 1},
        {"[0,2,0,2,", "[0,2,4294967295,2,", "event 1 (line 9): field 'phase'", 1},
        {"64,7,0,6]", "64,7,0,64]", "event 1 (line 9): field 'align_log2'", 1},
        {"[5,1,0,0,-1,-1,-1,0,1,4,0]", "[5,1,0,0,-1,-1,-1,0,1,6,0]", "event 0 (line 8): phase kind",
         0},
        {"[6,3,0,0,-1,-1,-1,0,0,0,0]", "[4,3,0,0,0,-1,-1,8,0,2,0]",
         "event 2 (line 10): copy direction", 2},
        /* the shape of an event: the count of elements is checked before their values */
        {"[0,2,0,2,1,0,-1,64,7,0,6]", "[0,2,0,2,1,0,-1,64,7,0]",
         "event 1 (line 9) is not an array of 11 integers", 1},
        {"[0,2,0,2,1,0,-1,64,7,0,6]", "[0,\"x\",0,2,1,0,-1,64,7,0]",
         "event 1 (line 9) is not an array of 11 integers", 1},
        {"[0,2,0,2,1,0,-1,64,7,0,6]", "[0,2,0,2,1,0,-1,64,7,0,6,0]",
         "event 1 (line 9) is not an array of 11 integers", 1},
        {"[0,2,0,2,1,0,-1,64,7,0,6]", "[]", "event 1 (line 9) is not an array of 11 integers", 1},
        {"[0,2,0,2,1,0,-1,64,7,0,6]", "{}", "event 1 (line 9) is not an array of 11 integers", 1},
        {"[0,2,0,2,1,0,-1,64,7,0,6]", "7", "event 1 (line 9) is not an array of 11 integers", 1},
        {"[0,2,0,2,1,0,-1,64,7,0,6]", "[\"]\",2,0,2,1,0,-1,64,7,0,6]",
         "event 1 (line 9): field 'type' is not an integer", 1},
        /* JSON syntax */
        {"[0,2,0,2,1,0,-1,64,", "[0,2,0,2,1,0,-1,064,", "line 9 column 17: invalid number", 1},
        {"[0,2,0,2,1,0,-1,64,", "[0,2,0,2,1,0,-1,-,", "line 9", 1},
        {"[0,2,0,2,1,0,-1,64,", "[0,2,0,2,1,0,-1,6.,", "line 9", 1},
        {"[0,2,0,2,1,0,-1,64,", "[0,2,0,2,1,0,-1,1e,", "line 9", 1},
        {"[0,2,0,2,1,0,-1,64,", "[0,2,0,2,1,0,-1,64x,", "line 9", 1},
        {"[0,2,0,2,1,0,-1,64,", "[0,2,0,2,1,0,-1,,", "line 9", 1},
        {"[0,2,0,2,1,0,-1,64,", "[0,2,0,2,1,0,-1,nul,", "line 9", 1},
        {"[0,2,0,2,1,0,-1,64,7,0,6],", "[0,2,0,2,1,0,-1,64,7,0,6]", "line 10", 2},
        {"0,0,0,0]]}\n", "0,0,0,0],]}\n", "line 10", 3},
        {"0,0,0,0]]}\n", "0,0,0,0]]}\n}", "line 11 column 1: end of file expected", 3},
        {"0,0,0,0]]}\n", "0,0,0,0]]\n", "line 11", 3},
        {"0,0,0,0]]}\n", "0,0,0,0]", "line 10", 3},
        {"0,0,0,0]]}\n", "0,0,0,0]],\"x\":}", "line 10", 3},
        {"0,0,0,0]]}\n", "0,0,0,0]],\"x\":[1,}", "line 10", 3},
        {"0,0,0,0]]}\n", "0,0,0,0]],\"x\":1,\"x\":2}", "duplicate", 3},
        {"0,0,0,0]]}\n", "0,0,0,0]],\"meta\":{}}", "duplicate", 3},
        {"0,0,0,0]]}\n", "0,0,0,0]],\"events\":[]}", "duplicate", 3},
        {"0,0,0,0]]}\n", "0,0,0,0]] }garbage", "end of file expected", 3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *msg = cases[i].msg;
        expect_case(cases[i].from, cases[i].to, msg ? MP_ERR_FORMAT : MP_OK, msg,
                    cases[i].yielded);
    }
}

static void test_bad_headers(void **state)
{
    (void)state;
    static const struct {
        const char *from, *to, *msg;
    } cases[] = {
        {"\"memprof-trace\"", "\"other-trace\"", "not a memprof trace"},
        {"\"format\":\"memprof-trace\",", "", "not a memprof trace"},
        {"\"version\":1", "\"version\":4", "trace version 4 is newer than this memprof reads"},
        {"\"version\":1", "\"version\":1.0", "version is not a positive integer"},
        {"\"version\":1,", "", "version is not a positive integer"},
        {"\"version\":1,", "\"version\":1,\"version\":1,", "line 1 column 39: duplicate"},
        {"\"threads\":2", "\"threads\":2,\"threads\":2", "duplicate"},
        {"\"threads\":2", "\"threads\":-3", "meta.threads"},
        {"\"model\":\"m.tflite\",", "", "meta has no 'model'"},
        {"\"name\":\"in\"", "\"name\":\"i\\u0000n\"", "line 3"},
        {"\"name\":\"in\"", "\"name\":\"in", "line"},
        {"\"inputs\":[0,1]", "\"inputs\":[0,2]", "meta.ops[0].inputs[1] is 2"},
        {"\"meta\":{", "\"meta\":[],\"old\":{", "meta is not an object"},
        {"\"event_fields\":[\"type\",", "\"event_fields\":[\"tipe\",", "event_fields[0]"},
        {"\"event_fields\":[\"type\",", "\"event_fields\":[\"kind\",", "event_fields"},
        {"\"events\":[\n", "\"events\":{},\"x\":[\n", "events is not an array"},
        {"\"events\":[\n", "\"evens\":[\n", "the trace has no 'events'"},
        {"\"event_fields\":", "\"fields\":", "the trace has no 'event_fields'"},
        {"\"meta\":{", "\"meta\":{,", "line 2 column 9"},
        {"\"meta\":{", "\"meta\" {", "line 2 column 8: ':' expected"},
        {"{\"format\"", "[{\"format\"", "not a memprof trace"},
        {"{\"format\"", "x{\"format\"", "line 1 column 1"},
        {"{\"format\"", "{format", "line 1 column 2"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_case(cases[i].from, cases[i].to, MP_ERR_FORMAT, cases[i].msg, 0);

    expect_text("", MP_ERR_FORMAT, "empty", 0);
    expect_text("  \n ", MP_ERR_FORMAT, "line 2", 0);
    expect_text("{}", MP_ERR_FORMAT, "not a memprof trace", 0);
    expect_text("{\"format\":\"memprof-trace\",\"version\":1} trailing", MP_ERR_FORMAT,
                "line 1 column 40: end of file expected", 0);

    mp_source *src = NULL;
    mp_error err = {0};
    assert_int_equal(mp_source_open(mp_test_tmp_path("missing.json"), &src, &err), MP_ERR_IO);
    assert_null(src);
    assert_non_null(strstr(err.msg, "missing.json"));
    assert_int_equal(mp_source_open(mp_test_tmpdir(), &src, &err), MP_ERR_IO);
    assert_null(src);
}

/* Every prefix of a saved trace: refused (or, when only whitespace is missing, read), never
 * a crash or a read past the data (ASan builds check that). */
/* jansson's message quotes the bytes near the error: a raw newline, control byte or invalid
 * UTF-8 there is escaped, so that the message stays on one line and prints safely. */
static void test_error_quotes_raw_bytes_escaped(void **state)
{
    (void)state;
    static const struct {
        const char *to, *want;
    } cases[] = {
        {"\"model\":\"m\\\n\"", "near '\"m\\\\n'"},     /* an escaped newline */
        {"\"model\":\"m\\\x1b[2J\"", "near '\"m\\\\x1b'"}, /* a terminal escape */
        {"\"model\":[1,\n\x01]", "near '\\x01'"},          /* a control byte */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *text = mp_test_valid_trace_with("\"model\":\"m.tflite\"", cases[i].to);
        expect_text(text, MP_ERR_FORMAT, cases[i].want, 0);
        const char *path = mp_test_tmp_path("raw.json");
        mp_test_write_text(path, text);
        mp_source *src = NULL;
        mp_error err = {0};
        assert_int_equal(mp_source_open(path, &src, &err), MP_ERR_FORMAT);
        for (const char *c = err.msg; *c; c++)
            if ((unsigned char)*c < 0x20 || (unsigned char)*c == 0x7f ||
                (unsigned char)*c >= 0x80)
                fail_msg("raw byte 0x%02x in \"%s\"", (unsigned char)*c, err.msg);
        unlink(path);
        free(text);
    }
}

static void test_every_truncation(void **state)
{
    (void)state;
    mp_trace *tr = random_trace(3, 2, 6);
    const char *full = mp_test_tmp_path("full.json");
    mp_error err = {0};
    assert_int_equal(mp_trace_save(tr, full, &err), MP_OK);
    size_t size = 0;
    char *text = mp_test_read_file(full, &size);
    assert_non_null(text);
    size_t valid_from = size;
    while (valid_from > 0 && strchr(" \t\r\n", text[valid_from - 1]))
        valid_from--;
    const char *path = mp_test_tmp_path("cut.json");
    for (size_t len = 0; len <= size; len++) {
        mp_test_write_bytes(path, text, len);
        size_t yielded;
        memset(&err, 0, sizeof err);
        mp_status st = source_status(path, &err, &yielded);
        if (len >= valid_from) {
            if (st != MP_OK)
                fail_msg("length %zu of %zu: %s", len, size, err.msg);
            assert_int_equal(yielded, mp_trace_count(tr));
        } else {
            if (st != MP_ERR_FORMAT)
                fail_msg("length %zu of %zu: status %s (%s)", len, size, mp_status_name(st),
                         err.msg);
            assert_non_null(strstr(err.msg, path));
            assert_true(yielded <= mp_trace_count(tr));
        }
        mp_trace *back = NULL;
        assert_int_equal(mp_trace_load(path, &back, &err), st);
        mp_trace_destroy(back);
    }
    free(text);
    unlink(path);
    unlink(full);
    mp_trace_destroy(tr);
}

/* ---- summaries ------------------------------------------------------------------------- */

static void assert_when_equal(const mp_summary_when *a, const mp_summary_when *b)
{
    assert_int_equal(a->event, b->event);
    assert_int_equal(a->t_ns, b->t_ns);
    assert_int_equal(a->phase_kind, b->phase_kind);
    assert_int_equal(a->phase, b->phase);
    assert_int_equal(a->run, b->run);
    assert_int_equal(a->op, b->op);
}

static void assert_summaries_equal(const mp_summary *a, const mp_summary *b)
{
    assert_int_equal(a->n_events, b->n_events);
    for (int k = 0; k < MP_PHASE_KIND_COUNT; k++) {
        assert_int_equal(a->phase_ns[k], b->phase_ns[k]);
        assert_int_equal(a->phase_count[k], b->phase_count[k]);
    }
    assert_int_equal(a->n_runs, b->n_runs);
    for (size_t i = 0; i < a->n_runs; i++) {
        assert_int_equal(a->runs[i].run, b->runs[i].run);
        assert_int_equal(a->runs[i].t_ns, b->runs[i].t_ns);
        assert_int_equal(a->runs[i].n_alloc, b->runs[i].n_alloc);
        assert_int_equal(a->runs[i].bytes_freed, b->runs[i].bytes_freed);
    }
    assert_int_equal(a->later_median_ns, b->later_median_ns);
    assert_int_equal(a->peak_heap, b->peak_heap);
    assert_when_equal(&a->peak, &b->peak);
    for (int k = 0; k < MP_KIND_COUNT; k++) {
        assert_int_equal(a->peak_live[k], b->peak_live[k]);
        assert_int_equal(a->kind_peak[k], b->kind_peak[k]);
        assert_int_equal(a->live_end_kind[k], b->live_end_kind[k]);
    }
    assert_int_equal(a->n_alive, b->n_alive);
    for (size_t i = 0; i < a->n_alive; i++) {
        assert_int_equal(a->alive[i].home, b->alive[i].home);
        assert_int_equal(a->alive[i].tensor, b->alive[i].tensor);
        assert_int_equal(a->alive[i].bytes, b->alive[i].bytes);
        assert_int_equal(a->alive[i].op, b->alive[i].op);
    }
    assert_int_equal(a->first_run.n_alloc, b->first_run.n_alloc);
    assert_int_equal(a->later_max.bytes_alloc, b->later_max.bytes_alloc);
    assert_int_equal(a->dup_bytes, b->dup_bytes);
    assert_when_equal(&a->dup, &b->dup);
    assert_int_equal(a->n_dups, b->n_dups);
    assert_int_equal(a->n_copy_in, b->n_copy_in);
    assert_int_equal(a->bytes_copy_out, b->bytes_copy_out);
    assert_int_equal(a->n_alloc, b->n_alloc);
    assert_int_equal(a->n_realloc, b->n_realloc);
    assert_int_equal(a->n_free, b->n_free);
    assert_int_equal(a->bytes_alloc, b->bytes_alloc);
    assert_int_equal(a->bytes_freed, b->bytes_freed);
    assert_int_equal(a->live_end, b->live_end);
    assert_int_equal(a->unaccounted_measured, b->unaccounted_measured);
    assert_int_equal(a->unaccounted, b->unaccounted);
    assert_int_equal(a->truncated, b->truncated);
    assert_int_equal(a->n_anomalies, b->n_anomalies);
    assert_string_equal(a->anomaly, b->anomaly);
}

/* Record a real session of a built-in model. */
static mp_trace *record_session(const char *model, mp_memory_mode mode, int runs)
{
    mp_trace *tr = mp_trace_create();
    assert_non_null(tr);
    mp_session_options so = {.threads = 1, .mode = mode, .trace = tr};
    mp_session *s = NULL;
    mp_error err = {0};
    assert_int_equal(mp_session_create(&so, &s, &err), MP_OK);
    if (mp_session_load(s, model, &err) != MP_OK || mp_session_prepare(s, &err) != MP_OK)
        fail_msg("%s", err.msg);
    for (int r = 0; r < runs; r++) {
        const mp_tensor *in = mp_session_input(s, 0);
        void *buf = calloc(1, in->bytes);
        assert_non_null(buf);
        assert_int_equal(mp_session_set_input(s, 0, buf, in->bytes, &err), MP_OK);
        free(buf);
        assert_int_equal(mp_session_run(s, &err), MP_OK);
        const mp_tensor *out = mp_session_output(s, 0);
        buf = malloc(out->bytes);
        assert_non_null(buf);
        assert_int_equal(mp_session_get_output(s, 0, buf, out->bytes, &err), MP_OK);
        free(buf);
    }
    mp_session_destroy(s);
    mp_trace_meta *m = mp_trace_meta_mut(tr);
    m->process_heap_peak = 3000000; /* as if measured */
    m->allocator_overhead = 1000;
    return tr;
}

static void test_summary_from_file_equals_loaded(void **state)
{
    (void)state;
    static const mp_memory_mode modes[] = {MP_MEMORY_AUTO, MP_MEMORY_DYNAMIC};
    for (size_t k = 0; k < 2; k++) {
        mp_trace *tr = record_session("zoo:mnist_mlp", modes[k], 4);
        const char *path = mp_test_tmp_path("session.json");
        mp_error err = {0};
        assert_int_equal(mp_trace_save(tr, path, &err), MP_OK);
        mp_trace_destroy(tr);

        mp_trace *loaded = NULL;
        assert_int_equal(mp_trace_load(path, &loaded, &err), MP_OK);
        mp_summary want, got;
        assert_int_equal(mp_summary_compute(loaded, &want, &err), MP_OK);
        mp_source *src = NULL;
        assert_int_equal(mp_source_open(path, &src, &err), MP_OK);
        mp_status st = mp_summary_compute_source(src, &got, &err);
        if (st != MP_OK)
            fail_msg("%s", err.msg);
        assert_true(want.n_events > 20);
        assert_true(want.peak_heap > 0);
        assert_summaries_equal(&got, &want);
        /* and again, on the same source */
        mp_summary again;
        assert_int_equal(mp_summary_compute_source(src, &again, &err), MP_OK);
        assert_summaries_equal(&again, &want);
        mp_summary_free(&again);
        mp_summary_free(&got);
        mp_summary_free(&want);
        mp_source_close(src);
        mp_trace_destroy(loaded);

        /* a bad event at the end: the summary fails with the reader's error */
        size_t size;
        char *text = mp_test_read_file(path, &size);
        assert_non_null(text);
        char *last = memmem(text, size, "\n]}", 3);
        assert_non_null(last);
        char *start = last;
        while (start > text && start[-1] != '\n')
            start--;
        start[0] = '{'; /* the last event is no longer an array */
        mp_test_write_bytes(path, text, size);
        free(text);
        assert_int_equal(mp_source_open(path, &src, &err), MP_OK);
        assert_int_equal(mp_summary_compute_source(src, &got, &err), MP_ERR_FORMAT);
        assert_non_null(strstr(err.msg, "is not an array of 11 integers"));
        assert_non_null(strstr(err.msg, path));
        mp_summary_free(&got);
        mp_source_close(src);
        unlink(path);
    }
}

static int make_tmp_dir(void **state)
{
    (void)state;
    return mp_test_tmpdir_make("mp_test_source");
}

static int remove_tmp_dir(void **state)
{
    (void)state;
    return mp_test_tmpdir_remove();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_traces_roundtrip),
        cmocka_unit_test(test_memory_source),
        cmocka_unit_test(test_valid_layouts),
        cmocka_unit_test(test_truncated_member),
        cmocka_unit_test(test_bad_events),
        cmocka_unit_test(test_bad_headers),
        cmocka_unit_test(test_error_quotes_raw_bytes_escaped),
        cmocka_unit_test(test_every_truncation),
        cmocka_unit_test(test_summary_from_file_equals_loaded),
    };
    return cmocka_run_group_tests(tests, make_tmp_dir, remove_tmp_dir);
}
