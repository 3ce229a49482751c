/* Tests of the CI memory gate: baseline figures (analyzers/baseline.c), limits, tolerance and
 * the baseline comparison (analyzers/gate.c), the baseline file, the JUnit report
 * (reports/junit.c), the text of a failure (reports/text_gate.c) and the size parser of the
 * command line (cli/sizes.c, compiled in here).
 *
 * Hand-built traces first, every figure worked out in the comments next to the events. Then
 * a "wider layer": a small MLP written with the tflite writer at two widths, run through the
 * engine: the wider one fails the narrow one's baseline and the tensors that grew are named,
 * with bytes derived here from the shapes. Same model twice, and at 1 and 2 threads: the
 * same baseline file, byte for byte.
 *
 * Run as `test_gate --write-mlp HIDDEN FILE` it writes that MLP as a .tflite file (for the
 * command-line test tests/cli/test_check.sh) instead of running the tests. */
#include "tests/util/testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/baseline.h"
#include "analyzers/gate.h"
#include "analyzers/source.h"
#include "engine/model/reference_input.h"
#include "engine/model/tflite_writer.h"
#include "engine/session.h"
#include "trace/trace.h"
#include "reports/junit.h"
#include "reports/text_gate.h"
#include "tests/util/trace_builder.h"
#include "tests/util/trace_fixtures.h"

#include "cli/sizes.c"

/* ---- building traces by hand ------------------------------------------------------------ */

/* The small model of trace_builder.h, one nanosecond per event. */
static mp_tb new_builder(const char *model)
{
    mp_tb b = mp_tb_create(1, 1);
    mp_tb_small_model(&b, model);
    return b;
}

/* One session by hand; `a_bytes` is tensor "a"'s slot (512 in the narrow model, 1024 in the
 * wide one), the arena being a_bytes + 512.
 *
 *   load     engine 100 (id 1); const "w" 400 (id 2)
 *   prepare  arena 1024+ (id 3): "a" at 0 (a_bytes, ops 0-1), "b" at a_bytes (256, ops 1-2);
 *            io "in" 64 (id 4); kernel buffers of op 0: 2000 (id 5)
 *   run 1    op0: scratch 128 (id 6) allocated and freed
 *            op1: nothing; op2: "out" dynamic 300 (id 7)
 *   teardown everything freed
 *
 * Tensor memory (static + dynamic + scratch + io) over time, narrow model:
 *   after prepare 1024 + 64 = 1088; in op0 + 128 = 1216; in op2 1088 + 300 = 1388 = peak
 * (below the sum of the kinds' own peaks, 1024 + 64 + 128 + 300 = 1516).
 * Heap peak: 1388 + kernel 2000 + engine 100 = 3488. Const: 400.
 * Wide model (a_bytes 1024): arena 1536, peak 1536 + 64 + 300 = 1900, heap 4000. */
static mp_trace *session(const char *model, uint64_t a_bytes)
{
    mp_tb b = new_builder(model);
    uint64_t arena = a_bytes + 512;
    mp_tb_phase(&b, MP_PHASE_LOAD, 0);
    mp_tb_alloc(&b, 1, 100, MP_KIND_ENGINE, -1, -1);
    mp_tb_alloc(&b, 2, 400, MP_KIND_CONST, 4, -1);
    mp_tb_end(&b);
    mp_tb_phase(&b, MP_PHASE_PREPARE, 0);
    mp_tb_alloc(&b, 3, arena, MP_KIND_STATIC, -1, -1);
    mp_tb_plan(&b, 3, 1, 0, a_bytes, 0, 1);
    mp_tb_plan(&b, 3, 2, a_bytes, 256, 1, 2);
    mp_tb_alloc(&b, 4, 64, MP_KIND_IO, 0, -1);
    mp_tb_alloc(&b, 5, 2000, MP_KIND_KERNEL, -1, 0);
    mp_tb_end(&b);
    mp_tb_phase(&b, MP_PHASE_RUN, 1);
    mp_tb_op(&b, MP_EV_OP_BEGIN, 0);
    mp_tb_alloc(&b, 6, 128, MP_KIND_SCRATCH, -1, 0);
    mp_tb_free(&b, 6, 128, MP_KIND_SCRATCH, -1, 0);
    mp_tb_op(&b, MP_EV_OP_END, 0);
    mp_tb_op(&b, MP_EV_OP_BEGIN, 1);
    mp_tb_op(&b, MP_EV_OP_END, 1);
    mp_tb_op(&b, MP_EV_OP_BEGIN, 2);
    mp_tb_alloc(&b, 7, 300, MP_KIND_DYNAMIC, 3, 2);
    mp_tb_op(&b, MP_EV_OP_END, 2);
    mp_tb_end(&b);
    mp_tb_phase(&b, MP_PHASE_TEARDOWN, 0);
    mp_tb_free(&b, 7, 300, MP_KIND_DYNAMIC, 3, -1);
    mp_tb_free(&b, 5, 2000, MP_KIND_KERNEL, -1, 0);
    mp_tb_free(&b, 4, 64, MP_KIND_IO, 0, -1);
    mp_tb_free(&b, 3, arena, MP_KIND_STATIC, -1, -1);
    mp_tb_free(&b, 2, 400, MP_KIND_CONST, 4, -1);
    mp_tb_free(&b, 1, 100, MP_KIND_ENGINE, -1, -1);
    mp_tb_end(&b);
    return b.tr;
}

static void baseline_of(const mp_trace *tr, mp_baseline *out)
{
    mp_source *src = mp_source_of_trace(tr);
    assert_non_null(src);
    mp_error err = {0};
    mp_status st = mp_baseline_compute(src, out, &err);
    if (st != MP_OK)
        fail_msg("%s", err.msg);
    mp_source_close(src);
}

/* A whole text file, NUL-terminated (malloc'd). */
static char *read_text(const char *path)
{
    size_t n = 0;
    char *raw = mp_test_read_file(path, &n);
    assert_non_null(raw);
    char *t = malloc(n + 1);
    assert_non_null(t);
    memcpy(t, raw, n);
    t[n] = 0;
    free(raw);
    return t;
}

static uint64_t tensor_bytes(const mp_baseline *b, const char *name)
{
    const mp_baseline_tensor *t = mp_baseline_find(b, name);
    if (!t)
        fail_msg("no tensor '%s' in the baseline", name);
    return t->bytes;
}

/* ---- figures --------------------------------------------------------------------------- */

static void test_figures_by_hand(void **state)
{
    (void)state;
    mp_trace *tr = session("models/by_hand.tflite", 512);
    mp_baseline b;
    baseline_of(tr, &b);
    assert_string_equal(b.model, "by_hand.tflite"); /* the base name: no folder */
    assert_string_equal(b.mode, "auto");
    assert_string_equal(b.planner, "greedy");
    assert_null(b.sha256);
    assert_int_equal(b.fig[MP_FIG_TENSORS], 1388);
    assert_int_equal(b.fig[MP_FIG_STATIC], 1024);
    assert_int_equal(b.fig[MP_FIG_DYNAMIC], 300);
    assert_int_equal(b.fig[MP_FIG_SCRATCH], 128);
    assert_int_equal(b.fig[MP_FIG_IO], 64);
    assert_int_equal(b.fig[MP_FIG_CONST], 400);
    assert_int_equal(b.fig[MP_FIG_KERNEL], 2000);
    assert_int_equal(b.fig[MP_FIG_ENGINE], 100);
    assert_int_equal(b.fig[MP_FIG_HEAP], 3488);
    /* every figure but rss: a trace without RSS samples */
    for (int f = 0; f < MP_FIG_COUNT; f++)
        assert_int_equal(b.has[f], f != MP_FIG_RSS);
    /* tensors of run 1: "a" 512 and "b" 256 (slots), "in" 64 (io), "out" 300 (dynamic),
     * "w" 400 (const), sorted by name */
    assert_int_equal(b.n_tensors, 5);
    const char *order[5] = {"a", "b", "in", "out", "w"};
    for (int i = 0; i < 5; i++)
        assert_string_equal(b.tensors[i].name, order[i]);
    assert_int_equal(tensor_bytes(&b, "a"), 512);
    assert_int_equal(tensor_bytes(&b, "b"), 256);
    assert_int_equal(tensor_bytes(&b, "in"), 64);
    assert_int_equal(tensor_bytes(&b, "out"), 300);
    assert_int_equal(tensor_bytes(&b, "w"), 400);
    assert_null(mp_baseline_find(&b, "nope"));
    mp_baseline_free(&b);
    mp_trace_destroy(tr);
}

/* Unnamed and repeated names get unique keys. */
static void test_tensor_keys(void **state)
{
    (void)state;
    mp_tb bd = new_builder("zoo:keys");
    mp_trace_meta *m = mp_trace_meta_mut(bd.tr);
    assert_true(mp_trace_set_str(bd.tr, &m->tensors[1].name, ""));
    assert_true(mp_trace_set_str(bd.tr, &m->tensors[2].name, "same"));
    assert_true(mp_trace_set_str(bd.tr, &m->tensors[3].name, "same"));
    mp_tb_phase(&bd, MP_PHASE_RUN, 1);
    mp_tb_alloc(&bd, 1, 10, MP_KIND_DYNAMIC, 1, 0);
    mp_tb_alloc(&bd, 2, 20, MP_KIND_DYNAMIC, 2, 1);
    mp_tb_alloc(&bd, 3, 30, MP_KIND_DYNAMIC, 3, 2);
    mp_tb_end(&bd);
    mp_baseline b;
    baseline_of(bd.tr, &b);
    assert_string_equal(b.model, "zoo:keys"); /* zoo names stay whole */
    assert_int_equal(b.n_tensors, 3);
    assert_int_equal(tensor_bytes(&b, "#1"), 10);
    assert_int_equal(tensor_bytes(&b, "same#2"), 20);
    assert_int_equal(tensor_bytes(&b, "same#3"), 30);
    assert_int_equal(b.fig[MP_FIG_TENSORS], 60);
    assert_int_equal(b.fig[MP_FIG_DYNAMIC], 60);
    mp_baseline_free(&b);
    mp_trace_destroy(bd.tr);
}

/* A saved trace read through a file source: the fixture allocates 64 dynamic bytes for "w". */
static void test_figures_of_file(void **state)
{
    (void)state;
    const char *path = mp_test_tmp_path("fixture.json");
    mp_test_write_text(path, mp_test_valid_trace);
    assert_int_equal(mp_file_kind_of(path), MP_FILE_TRACE);
    mp_source *src = NULL;
    mp_error err = {0};
    assert_int_equal(mp_source_open(path, &src, &err), MP_OK);
    mp_baseline b;
    assert_int_equal(mp_baseline_compute(src, &b, &err), MP_OK);
    assert_int_equal(b.fig[MP_FIG_TENSORS], 64);
    assert_int_equal(b.fig[MP_FIG_DYNAMIC], 64);
    assert_int_equal(b.fig[MP_FIG_STATIC], 0);
    assert_string_equal(b.model, "m.tflite");
    mp_baseline_free(&b);
    mp_source_close(src);
    /* a malformed event: the file source's error comes back */
    char *bad = mp_test_valid_trace_with("[0,2,0,2,1,0,-1,64,7,0,6]", "[0,2,0,2,1,0,-1,-64,7,0,6]");
    path = mp_test_tmp_path("bad.json");
    mp_test_write_text(path, bad);
    free(bad);
    assert_int_equal(mp_source_open(path, &src, &err), MP_OK);
    assert_int_equal(mp_baseline_compute(src, &b, &err), MP_ERR_FORMAT);
    assert_int_equal(b.n_tensors, 0);
    mp_baseline_free(&b);
    mp_source_close(src);
}

static void test_file_kind(void **state)
{
    (void)state;
    const char *p = mp_test_tmp_path("kind.bin");
    mp_test_write_bytes(p, "\x1c\0\0\0TFL3\0\0\0\0", 12);
    assert_int_equal(mp_file_kind_of(p), MP_FILE_MODEL);
    mp_test_write_text(p, "  {\n  \"figures\": {}\n}\n");
    assert_int_equal(mp_file_kind_of(p), MP_FILE_JSON);
    mp_test_write_text(p, "hello");
    assert_int_equal(mp_file_kind_of(p), MP_FILE_UNKNOWN);
    mp_test_write_text(p, "");
    assert_int_equal(mp_file_kind_of(p), MP_FILE_UNKNOWN);
    assert_int_equal(mp_file_kind_of(mp_test_tmp_path("absent")), MP_FILE_UNREADABLE);
}

/* ---- the file ------------------------------------------------------------------------------ */

static void test_file_round_trip(void **state)
{
    (void)state;
    mp_trace *tr = session("by_hand.tflite", 512);
    mp_baseline b;
    baseline_of(tr, &b);
    char hex[65];
    mp_sha256_hex("abc", 3, hex);
    assert_true(mp_baseline_set_sha256(&b, hex));
    assert_true(mp_baseline_add_input(&b, "in", "1,4,4,1"));
    char *text = mp_baseline_to_json(&b);
    assert_non_null(text);
    /* sorted keys, one figure per line, no machine-dependent figure */
    const char *expect =
        "{\n"
        "  \"figure_bytes\": {\n"
        "    \"const\": 400,\n"
        "    \"dynamic\": 300,\n"
        "    \"io\": 64,\n"
        "    \"scratch\": 128,\n"
        "    \"static\": 1024,\n"
        "    \"tensors\": 1388\n"
        "  },\n"
        "  \"format\": \"memprof-baseline\",\n"
        "  \"model\": {\n"
        "    \"inputs\": {\n"
        "      \"in\": \"1,4,4,1\"\n"
        "    },\n"
        "    \"mode\": \"auto\",\n"
        "    \"name\": \"by_hand.tflite\",\n"
        "    \"planner\": \"greedy\",\n"
        "    \"sha256\": \"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\"\n"
        "  },\n"
        "  \"tensor_bytes\": {\n"
        "    \"a\": 512,\n"
        "    \"b\": 256,\n"
        "    \"in\": 64,\n"
        "    \"out\": 300,\n"
        "    \"w\": 400\n"
        "  },\n"
        "  \"version\": 3\n"
        "}\n";
    assert_string_equal(text, expect);
    mp_baseline r;
    mp_error err = {0};
    assert_int_equal(mp_baseline_parse(text, strlen(text), "t", &r, &err), MP_OK);
    for (int f = 0; f < MP_FIG_COUNT; f++) {
        /* the optional kinds (all 0 here) are left out, and read as absent */
        assert_int_equal(r.has[f], !mp_figure_machine_dependent(f) && !mp_figure_optional(f));
        if (r.has[f])
            assert_int_equal(r.fig[f], b.fig[f]);
    }
    assert_int_equal(r.n_tensors, b.n_tensors);
    for (size_t i = 0; i < r.n_tensors; i++) {
        assert_string_equal(r.tensors[i].name, b.tensors[i].name);
        assert_int_equal(r.tensors[i].bytes, b.tensors[i].bytes);
    }
    assert_string_equal(r.sha256, b.sha256);
    assert_int_equal(r.n_inputs, 1);
    assert_string_equal(r.inputs[0].dims, "1,4,4,1");
    /* written again from what was read: the same bytes */
    char *again = mp_baseline_to_json(&r);
    assert_string_equal(again, text);
    const char *path = mp_test_tmp_path("b.json");
    mp_test_write_text(path, text);
    mp_baseline_free(&r);
    assert_int_equal(mp_baseline_read(path, &r, &err), MP_OK);
    assert_int_equal(r.fig[MP_FIG_TENSORS], 1388);
    assert_int_equal(mp_file_kind_of(path), MP_FILE_JSON);
    mp_baseline_free(&r);
    free(again);
    free(text);
    mp_baseline_free(&b);
    mp_trace_destroy(tr);
}

typedef struct bad_file {
    const char *text, *says;
} bad_file;

/* Each text is refused as malformed, in one line naming the file and saying `says`, and
 * leaves an empty baseline. */
static void expect_refusals(const bad_file *bad, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        mp_baseline r;
        mp_error err = {0};
        assert_int_equal(mp_baseline_parse(bad[i].text, strlen(bad[i].text), "f.json", &r, &err),
                         MP_ERR_FORMAT);
        if (!strstr(err.msg, bad[i].says) || !strstr(err.msg, "f.json"))
            fail_msg("case %zu: '%s' does not say '%s'", i, err.msg, bad[i].says);
        for (const char *c = err.msg; *c; c++)
            if ((unsigned char)*c < 0x20 || (unsigned char)*c == 0x7f)
                fail_msg("case %zu: control byte 0x%02x in '%s'", i, (unsigned char)*c, err.msg);
        assert_int_equal(r.n_tensors, 0);
        mp_baseline_free(&r);
    }
}

static void test_file_errors(void **state)
{
    (void)state;
    mp_baseline r;
    mp_error err = {0};
    const bad_file bad[] = {
        {"{", "line"},
        {"[]", "not a JSON object"},
        {"{\"format\":\"memprof-trace\",\"version\":1}", "not a memprof baseline"},
        {"{\"format\":\"memprof-baseline\",\"version\":4}", "version"},
        {"{\"format\":\"memprof-baseline\",\"version\":1,\"model\":{\"name\":\"m\",\"mode\":\"auto\","
         "\"planner\":\"best\"},\"figures\":{\"peak\":-1},\"tensors\":{}}", "figure 'peak'"},
        {"{\"format\":\"memprof-baseline\",\"version\":1,\"model\":{\"name\":\"m\",\"mode\":\"auto\","
         "\"planner\":\"best\"},\"figures\":{},\"tensors\":{\"x\":\"1\"}}", "tensor 'x'"},
        {"{\"format\":\"memprof-baseline\",\"version\":1,\"model\":{\"name\":1},\"figures\":{},"
         "\"tensors\":{}}", "model 'name'"},
        {"{\"format\":\"memprof-baseline\",\"version\":1,\"model\":{\"name\":\"m\",\"mode\":\"auto\","
         "\"planner\":\"best\"},\"figures\":{}}", "'tensors'"},
    };
    expect_refusals(bad, sizeof bad / sizeof bad[0]);
    /* an unknown figure (of a later version) is ignored */
    const char *later = "{\"format\":\"memprof-baseline\",\"version\":1,\"model\":{\"name\":\"m\","
                        "\"mode\":\"auto\",\"planner\":\"best\"},\"figures\":{\"peak\":5,"
                        "\"future\":7},\"tensors\":{}}";
    assert_int_equal(mp_baseline_parse(later, strlen(later), "f", &r, &err), MP_OK);
    assert_true(r.has[MP_FIG_TENSORS]);
    assert_false(r.has[MP_FIG_STATIC]);
    mp_baseline_free(&r);
    assert_int_equal(mp_baseline_read(mp_test_tmp_path("absent.json"), &r, &err), MP_ERR_IO);
}

/* Messages that quote the file (jansson's "near '...'", a member name) stay on one line:
 * raw newlines, control bytes and invalid UTF-8 are escaped. */
static void test_file_errors_one_line(void **state)
{
    (void)state;
    const bad_file bad[] = {
        {"{\"format\":\"memprof-\\\nbaseline\"}", "near '\"memprof-\\\\n'"},
        {"{\"format\":\"memprof-baseline\",\n\x1b[2J}", "near '\\x1b'"},
        {"{\"format\":\"memprof-baseline\",\"version\":1,\"model\":{\"name\":\"m\","
         "\"mode\":\"auto\",\"planner\":\"best\"},\"figures\":{},"
         "\"tensors\":{\"a\\nb\\u0007\\u0085\":-1}}", "tensor 'a\\nb\\x07\\xc2\\x85'"},
    };
    expect_refusals(bad, sizeof bad / sizeof bad[0]);
}

/* A machine-dependent figure is never written to a baseline file: one in a file (edited by
 * hand) is not read either, so that the baseline reads back from its own file unchanged. */
static void test_file_machine_figures_ignored(void **state)
{
    (void)state;
    const char *text = "{\"format\":\"memprof-baseline\",\"version\":1,\"model\":{\"name\":"
                       "\"m\",\"mode\":\"auto\",\"planner\":\"best\"},\"figures\":{\"peak\":5,"
                       "\"kernel\":7,\"heap\":9},\"tensors\":{}}";
    mp_baseline a, b;
    mp_error err = {0};
    assert_int_equal(mp_baseline_parse(text, strlen(text), "f", &a, &err), MP_OK);
    assert_true(a.has[MP_FIG_TENSORS]);
    assert_false(a.has[MP_FIG_KERNEL]);
    assert_false(a.has[MP_FIG_HEAP]);
    char *again = mp_baseline_to_json(&a);
    assert_non_null(again);
    assert_int_equal(mp_baseline_parse(again, strlen(again), "g", &b, &err), MP_OK);
    for (int f = 0; f < MP_FIG_COUNT; f++) {
        assert_int_equal(a.has[f], b.has[f]);
        assert_int_equal(a.fig[f], b.fig[f]);
    }
    free(again);
    mp_baseline_free(&a);
    mp_baseline_free(&b);
}

/* Inputs are kept in name order, the order a file holds them in (its keys are sorted): a
 * file listing them otherwise reads back equal after a round trip (fuzz_baseline found a
 * file whose inputs came back swapped), and a run's inputs compare one by one with a file's. */
static void test_file_inputs_in_name_order(void **state)
{
    (void)state;
    const char *text = "{\"format\":\"memprof-baseline\",\"version\":1,\"model\":{\"name\":"
                       "\"m\",\"mode\":\"auto\",\"planner\":\"best\",\"inputs\":{\"zeta\":"
                       "\"1,3\",\"alpha\":\"2\",\"mid\":\"4,5\"}},\"figures\":{\"peak\":5},"
                       "\"tensors\":{}}";
    mp_baseline a, b, run;
    mp_error err = {0};
    assert_int_equal(mp_baseline_parse(text, strlen(text), "f", &a, &err), MP_OK);
    assert_int_equal(a.n_inputs, 3);
    const char *names[3] = {"alpha", "mid", "zeta"}, *dims[3] = {"2", "4,5", "1,3"};
    for (int i = 0; i < 3; i++) {
        assert_string_equal(a.inputs[i].name, names[i]);
        assert_string_equal(a.inputs[i].dims, dims[i]);
    }
    char *again = mp_baseline_to_json(&a);
    assert_non_null(again);
    assert_int_equal(mp_baseline_parse(again, strlen(again), "g", &b, &err), MP_OK);
    for (int i = 0; i < 3; i++)
        assert_string_equal(b.inputs[i].name, names[i]);
    /* added in a model's order, as a run adds them */
    memset(&run, 0, sizeof run);
    assert_true(mp_baseline_add_input(&run, "zeta", "1,3"));
    assert_true(mp_baseline_add_input(&run, "alpha", "2"));
    assert_true(mp_baseline_add_input(&run, "mid", "4,5"));
    for (int i = 0; i < 3; i++)
        assert_string_equal(run.inputs[i].name, names[i]);
    free(again);
    mp_baseline_free(&a);
    mp_baseline_free(&b);
    mp_baseline_free(&run);
}

/* ---- the gate ------------------------------------------------------------------------------ */

static mp_gate_result gate(const mp_baseline *now, const mp_gate_limit *lim, size_t n,
                           const mp_baseline *base, mp_tolerance tol)
{
    mp_gate_options o = {.limits = lim, .n_limits = n, .baseline = base, .tol = tol};
    mp_gate_result r;
    mp_error err = {0};
    assert_int_equal(mp_gate_evaluate(now, &o, &r, &err), MP_OK);
    return r;
}

static void test_limits(void **state)
{
    (void)state;
    mp_trace *tr = session("m.tflite", 512);
    mp_baseline b;
    baseline_of(tr, &b);
    mp_tolerance none = {0};
    /* at the limit passes, one byte below it fails; machine-dependent figures take limits */
    mp_gate_limit lim[4] = {{MP_FIG_TENSORS, 1388}, {MP_FIG_TENSORS, 1387}, {MP_FIG_KERNEL, 1999},
                            {MP_FIG_STATIC, 4096}};
    mp_gate_result r = gate(&b, lim, 4, NULL, none);
    assert_int_equal(r.n_checks, 4);
    assert_int_equal(r.n_failed, 2);
    /* by figure (peak, static, kernel), limits in the order given */
    assert_int_equal(r.checks[0].figure, MP_FIG_TENSORS);
    assert_true(r.checks[0].passed);
    assert_int_equal(r.checks[1].figure, MP_FIG_TENSORS);
    assert_false(r.checks[1].passed);
    assert_int_equal(r.checks[1].value, 1388);
    assert_int_equal(r.checks[1].allowed, 1387);
    assert_int_equal(r.checks[2].figure, MP_FIG_STATIC);
    assert_true(r.checks[2].passed);
    assert_int_equal(r.checks[3].figure, MP_FIG_KERNEL);
    assert_false(r.checks[3].passed);
    assert_int_equal(r.checks[3].against, MP_GATE_LIMIT);
    assert_false(r.has_baseline);
    mp_gate_result_free(&r);
    mp_gate_limit wrong = {MP_FIG_COUNT, 1};
    mp_gate_options o = {.limits = &wrong, .n_limits = 1};
    mp_error err = {0};
    assert_int_equal(mp_gate_evaluate(&b, &o, &r, &err), MP_ERR_ARG);
    mp_baseline_free(&b);
    mp_trace_destroy(tr);
}

static void test_tolerance(void **state)
{
    (void)state;
    mp_tolerance pct = {.percent = true, .pct = 5};
    mp_tolerance bytes = {.bytes = 100};
    mp_tolerance half = {.percent = true, .pct = 0.5};
    assert_int_equal(mp_tolerance_allowed(1000, &pct), 1050);
    assert_int_equal(mp_tolerance_allowed(1001, &pct), 1051);  /* 50.05 rounded down */
    assert_int_equal(mp_tolerance_allowed(1000, &bytes), 1100);
    assert_int_equal(mp_tolerance_allowed(1000, &half), 1005);
    assert_int_equal(mp_tolerance_allowed(UINT64_MAX - 1, &bytes), UINT64_MAX);
    assert_int_equal(mp_tolerance_allowed(7, NULL), 7);
}

/* The wide session against the narrow one's baseline:
 *   peak 1388 -> 1900 (+512), static 1024 -> 1536 (+512); dynamic, scratch, io unchanged;
 *   tensor "a" 512 -> 1024, every other tensor unchanged. */
static void test_baseline_regression(void **state)
{
    (void)state;
    mp_trace *narrow = session("m.tflite", 512), *wide = session("m.tflite", 1024);
    mp_baseline a, b;
    baseline_of(narrow, &a);
    baseline_of(wide, &b);
    assert_int_equal(b.fig[MP_FIG_TENSORS], 1900);
    assert_int_equal(b.fig[MP_FIG_HEAP], 4000);
    mp_tolerance none = {0};
    mp_gate_result r = gate(&b, NULL, 0, &a, none);
    /* peak, static, dynamic, scratch, io against the baseline; kernel and const are not */
    assert_int_equal(r.n_checks, 5);
    assert_int_equal(r.n_failed, 2);
    for (size_t i = 0; i < r.n_checks; i++) {
        assert_int_equal(r.checks[i].against, MP_GATE_BASELINE);
        assert_int_equal(r.checks[i].passed,
                         r.checks[i].figure != MP_FIG_TENSORS && r.checks[i].figure != MP_FIG_STATIC);
    }
    assert_int_equal(r.checks[0].figure, MP_FIG_TENSORS);
    assert_int_equal(r.checks[0].reference, 1388);
    assert_int_equal(r.checks[0].value, 1900);
    assert_true(r.has_baseline);
    assert_int_equal(r.diff.n_tensors, 1);
    assert_int_equal(r.diff.n_grown, 1);
    assert_string_equal(r.diff.tensors[0].name, "a");
    assert_int_equal(r.diff.tensors[0].a, 512);
    assert_int_equal(r.diff.tensors[0].b, 1024);
    /* what the text says: the checks that failed, the kinds and the tensor that grew */
    const char *path = mp_test_tmp_path("gate.txt");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    mp_gate_options o = {.baseline = &a};
    mp_report_gate_text(f, "m.tflite", &b, &o, "base.json", &r, true);
    fclose(f);
    char *text = read_text(path);
    assert_non_null(text);
    assert_non_null(strstr(text, "FAIL: 2 of 5 checks exceeded"));
    assert_non_null(strstr(text, "tensors vs baseline"));
    assert_non_null(strstr(text, "+512"));
    assert_non_null(strstr(text, "Grew by tensor"));
    assert_non_null(strstr(text, "  a "));
    for (char *line = text; *line;) {
        char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        if (len > 80)
            fail_msg("line over 80 columns: %.*s", (int)len, line);
        line += len + (nl != NULL);
    }
    free(text);
    mp_gate_result_free(&r);
    /* a 37% tolerance (peak may reach 1901, static 1402) passes the peak, not static */
    mp_tolerance t37 = {.percent = true, .pct = 37};
    r = gate(&b, NULL, 0, &a, t37);
    assert_int_equal(r.n_failed, 1);
    assert_int_equal(r.checks[1].figure, MP_FIG_STATIC);
    assert_int_equal(r.checks[1].allowed, 1402);
    assert_false(r.checks[1].passed);
    mp_gate_result_free(&r);
    /* 512 bytes of tolerance: both exactly at their allowance, passing */
    mp_tolerance t512 = {.bytes = 512};
    r = gate(&b, NULL, 0, &a, t512);
    assert_int_equal(r.n_failed, 0);
    mp_gate_result_free(&r);
    /* the other way round nothing grew */
    r = gate(&a, NULL, 0, &b, none);
    assert_int_equal(r.n_failed, 0);
    assert_int_equal(r.diff.n_grown, 0);
    assert_int_equal(r.diff.n_tensors, 1);
    mp_gate_result_free(&r);
    mp_baseline_free(&a);
    mp_baseline_free(&b);
    mp_trace_destroy(narrow);
    mp_trace_destroy(wide);
}

static void test_diff_tensors(void **state)
{
    (void)state;
    mp_baseline a = {0}, b = {0};
    mp_baseline_tensor ta[3] = {{"gone", 50}, {"same", 10}, {"shrinks", 100}};
    mp_baseline_tensor tb[3] = {{"grows", 0}, {"same", 10}, {"shrinks", 40}};
    mp_baseline_tensor tb2[4] = {{"grows", 60}, {"new", 60}, {"same", 10}, {"shrinks", 40}};
    (void)tb;
    a.tensors = ta;
    a.n_tensors = 3;
    b.tensors = tb2;
    b.n_tensors = 4;
    a.has[MP_FIG_TENSORS] = b.has[MP_FIG_TENSORS] = true;
    b.has[MP_FIG_KERNEL] = true;
    b.fig[MP_FIG_KERNEL] = 9;
    mp_baseline_diff d;
    mp_error err = {0};
    assert_int_equal(mp_baseline_diff_compute(&a, &b, &d, &err), MP_OK);
    /* changes: gone -50, grows new +60, new +60, shrinks -60; largest first, growth first at
     * equal size, then by name */
    assert_int_equal(d.n_tensors, 4);
    assert_int_equal(d.n_grown, 2);
    assert_string_equal(d.tensors[0].name, "grows");
    assert_string_equal(d.tensors[1].name, "new");
    assert_string_equal(d.tensors[2].name, "shrinks");
    assert_string_equal(d.tensors[3].name, "gone");
    assert_false(d.tensors[0].in_a);
    assert_true(d.tensors[3].in_a);
    assert_false(d.tensors[3].in_b);
    /* figures known on a side: peak on both, kernel on b only */
    assert_int_equal(d.n_figures, 2);
    assert_string_equal(d.figures[1].name, "kernel");
    assert_false(d.figures[1].in_a);
    mp_baseline_diff_free(&d);
}

/* ---- JUnit ----------------------------------------------------------------------------- */

static void test_junit(void **state)
{
    (void)state;
    mp_trace *narrow = session("m.tflite", 512), *wide = session("m.tflite", 1024);
    /* a tensor name with markup and a byte that is not UTF-8 */
    mp_trace_meta *m = mp_trace_meta_mut(wide);
    assert_true(mp_trace_set_str(wide, &m->tensors[1].name, "a<&\">\x01\xff"));
    m = mp_trace_meta_mut(narrow);
    assert_true(mp_trace_set_str(narrow, &m->tensors[1].name, "a<&\">\x01\xff"));
    mp_baseline a, b;
    baseline_of(narrow, &a);
    baseline_of(wide, &b);
    mp_gate_limit lim = {MP_FIG_KERNEL, 5000};
    mp_tolerance none = {0};
    mp_gate_result r = gate(&b, &lim, 1, &a, none);
    const char *path = mp_test_tmp_path("junit.xml");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    mp_error err = {0};
    assert_int_equal(mp_report_gate_junit(f, "m&m.tflite", &b, &r, &none, &err), MP_OK);
    fclose(f);
    char *x = read_text(path);
    assert_non_null(x);
    assert_non_null(strstr(x, "<testsuite name=\"memprof\" tests=\"6\" failures=\"2\""));
    assert_non_null(strstr(x, "name=\"kernel &lt;= limit\"/>"));
    assert_non_null(strstr(x, "<failure type=\"baseline\" message=\"tensors 1.9 KiB (1900 B) is "
                              "over the baseline 1.4 KiB (1388 B) (tolerance 0 B) by 512 B\""));
    assert_non_null(strstr(x, "m&amp;m.tflite"));
    assert_null(strstr(x, "\x01"));
    free(x);
    if (system("command -v xmllint >/dev/null 2>&1") == 0) {
        char cmd[512];
        snprintf(cmd, sizeof cmd, "xmllint --noout '%s'", path);
        assert_int_equal(system(cmd), 0);
    } else {
        print_message("xmllint absent: the JUnit file is not validated\n");
    }
    mp_gate_result_free(&r);
    mp_baseline_free(&a);
    mp_baseline_free(&b);
    mp_trace_destroy(narrow);
    mp_trace_destroy(wide);
}

/* ---- sizes (cli/sizes.c) ------------------------------------------------------------------ */

static void test_sizes(void **state)
{
    (void)state;
    struct {
        const char *s;
        uint64_t v;
    } ok[] = {
        {"0", 0},          {"4096", 4096},          {"12MiB", 12582912},
        {"800KB", 800000}, {"800kb", 800000},       {"1.5MiB", 1572864},
        {"1.5mib", 1572864}, {"2GiB", 2147483648ull}, {"3GB", 3000000000ull},
        {"1KiB", 1024},    {"7B", 7},               {"0.5KiB", 512},
        {".5KiB", 512},    {"1.000001MB", 1000001}, {"1TiB", 1099511627776ull},
        {"18446744073709551615", UINT64_MAX},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        uint64_t v = 1;
        if (!mp_parse_size(ok[i].s, &v))
            fail_msg("'%s' refused", ok[i].s);
        assert_int_equal(v, ok[i].v);
    }
    const char *bad[] = {"", "MiB", "12XB", "-1", "1.2.3", "12 MiB", "1.1234567MiB",
                         "18446744073709551616", "20000000TiB", "1e6", ".", "5%"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint64_t v;
        if (mp_parse_size(bad[i], &v))
            fail_msg("'%s' accepted", bad[i]);
    }
    assert_false(mp_parse_size(NULL, &(uint64_t){0}));
    mp_tolerance t;
    assert_true(mp_parse_tolerance("5%", &t));
    assert_true(t.percent);
    assert_true(t.pct == 5.0);
    assert_true(mp_parse_tolerance("2.5%", &t));
    assert_true(t.pct == 2.5);
    assert_true(mp_parse_tolerance("64KiB", &t));
    assert_false(t.percent);
    assert_int_equal(t.bytes, 65536);
    assert_true(mp_parse_tolerance("0", &t));
    assert_int_equal(t.bytes, 0);
    const char *tbad[] = {"%", "abc%", "1001%", "-5%", "5%%", "5 %", "x"};
    for (size_t i = 0; i < sizeof tbad / sizeof tbad[0]; i++)
        if (mp_parse_tolerance(tbad[i], &t))
            fail_msg("tolerance '%s' accepted", tbad[i]);
}

static void test_sha256(void **state)
{
    (void)state;
    char h[65];
    mp_sha256_hex("", 0, h);
    assert_string_equal(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    mp_sha256_hex("abc", 3, h);
    assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    mp_sha256_hex(two, strlen(two), h);
    assert_string_equal(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    char million[1000];
    memset(million, 'a', sizeof million);
    mp_sha256_hex(million, 64, h); /* exactly one block: the padding takes a block of its own */
    assert_string_equal(h, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
    /* a file read in blocks: the two-block message, then 1000 bytes (blocks split unevenly) */
    const char *path = mp_test_tmp_path("sha.bin");
    mp_test_write_text(path, two);
    assert_true(mp_sha256_file(path, h));
    assert_string_equal(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    mp_test_write_bytes(path, million, sizeof million);
    char whole[65];
    mp_sha256_hex(million, sizeof million, whole);
    assert_true(mp_sha256_file(path, h));
    assert_string_equal(h, whole);
    assert_string_equal(h, "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
    assert_false(mp_sha256_file(mp_test_tmp_path("absent.bin"), h));
}

/* ---- a wider layer, through the engine ----------------------------------------------------- */

/* x [1,16] -> FC (hidden, ReLU) "dense/Relu" [1,hidden] -> FC 4 "dense_1/BiasAdd" [1,4]
 * -> SOFTMAX "probs" [1,4]. Weights are small constants (values do not matter here). */
static void *mlp_bytes(int hidden, size_t *size)
{
    mp_tfw *w = mp_tfw_create();
    assert_non_null(w);
    size_t n1 = (size_t)hidden * 16, n2 = 4 * (size_t)hidden;
    float *w1 = calloc(n1, sizeof *w1), *b1 = calloc((size_t)hidden, sizeof *b1),
          *w2 = calloc(n2, sizeof *w2), b2[4] = {0};
    assert_non_null(w1);
    assert_non_null(b1);
    assert_non_null(w2);
    for (size_t i = 0; i < n1; i++)
        w1[i] = (float)((i * 7) % 13) / 64.0f - 0.1f;
    for (size_t i = 0; i < n2; i++)
        w2[i] = (float)((i * 5) % 11) / 64.0f - 0.08f;
    int x = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 2, (int32_t[]){1, 16}, 0, NULL);
    int tw1 = mp_tfw_tensor(w, "dense/MatMul", MP_DT_FLOAT32, 2, (int32_t[]){hidden, 16},
                            mp_tfw_buffer(w, w1, n1 * sizeof *w1), NULL);
    int tb1 = mp_tfw_tensor(w, "dense/BiasAdd/ReadVariableOp", MP_DT_FLOAT32, 1,
                            (int32_t[]){hidden},
                            mp_tfw_buffer(w, b1, (size_t)hidden * sizeof *b1), NULL);
    int h = mp_tfw_tensor(w, "dense/Relu", MP_DT_FLOAT32, 2, (int32_t[]){1, hidden}, 0, NULL);
    int tw2 = mp_tfw_tensor(w, "dense_1/MatMul", MP_DT_FLOAT32, 2, (int32_t[]){4, hidden},
                            mp_tfw_buffer(w, w2, n2 * sizeof *w2), NULL);
    int tb2 = mp_tfw_tensor(w, "dense_1/BiasAdd/ReadVariableOp", MP_DT_FLOAT32, 1,
                            (int32_t[]){4}, mp_tfw_buffer(w, b2, sizeof b2), NULL);
    int logits = mp_tfw_tensor(w, "dense_1/BiasAdd", MP_DT_FLOAT32, 2, (int32_t[]){1, 4}, 0,
                               NULL);
    int probs = mp_tfw_tensor(w, "probs", MP_DT_FLOAT32, 2, (int32_t[]){1, 4}, 0, NULL);
    mp_op_options o = mp_tfw_options_default();
    o.activation = MP_ACT_RELU;
    mp_tfw_op(w, MP_OP_FULLY_CONNECTED, 3, (int32_t[]){x, tw1, tb1}, 1, &h, &o);
    o.activation = MP_ACT_NONE;
    mp_tfw_op(w, MP_OP_FULLY_CONNECTED, 3, (int32_t[]){h, tw2, tb2}, 1, &logits, &o);
    o = mp_tfw_options_default();
    o.beta = 1.0f;
    mp_tfw_op(w, MP_OP_SOFTMAX, 1, &logits, 1, &probs, &o);
    mp_tfw_io(w, 1, &x, 1, &probs);
    void *bytes = NULL;
    mp_error err = {0};
    if (mp_tfw_finish(w, &bytes, size, &err) != MP_OK)
        fail_msg("writer: %s", err.msg);
    mp_tfw_free(w);
    free(w1);
    free(b1);
    free(w2);
    return bytes;
}

/* Load, prepare, run twice (reference inputs), tear down, recorded; the baseline file. */
static char *run_baseline(const void *model, size_t size, int threads, mp_memory_mode mode,
                          mp_baseline *out)
{
    mp_trace *tr = mp_trace_create();
    assert_non_null(tr);
    mp_session_options so = {.threads = threads, .mode = mode, .trace = tr};
    mp_session *s = NULL;
    mp_error err = {0};
    assert_int_equal(mp_session_create(&so, &s, &err), MP_OK);
    if (mp_session_load_memory(s, model, size, "mlp.tflite", &err) != MP_OK ||
        mp_session_prepare(s, &err) != MP_OK)
        fail_msg("%s", err.msg);
    float in[16];
    assert_true(mp_reference_input(in, MP_DT_FLOAT32, 16, 0));
    for (int r = 0; r < 2; r++)
        if (mp_session_set_input(s, 0, in, sizeof in, &err) != MP_OK ||
            mp_session_run(s, &err) != MP_OK)
            fail_msg("%s", err.msg);
    mp_session_destroy(s);
    baseline_of(tr, out);
    char hex[65];
    mp_sha256_hex(model, size, hex);
    assert_true(mp_baseline_set_sha256(out, hex));
    mp_trace_destroy(tr);
    char *text = mp_baseline_to_json(out);
    assert_non_null(text);
    return text;
}

static void test_wider_layer(void **state)
{
    (void)state;
    size_t n32, n64;
    void *m32 = mlp_bytes(32, &n32), *m64 = mlp_bytes(64, &n64);
    for (int mode = MP_MEMORY_AUTO; mode <= MP_MEMORY_DYNAMIC; mode++) {
        mp_baseline a, b, again, threads2;
        char *ta = run_baseline(m32, n32, 1, (mp_memory_mode)mode, &a);
        char *tb = run_baseline(m64, n64, 1, (mp_memory_mode)mode, &b);
        /* deterministic: the same model again, and with 2 threads, give the same file */
        char *tagain = run_baseline(m32, n32, 1, (mp_memory_mode)mode, &again);
        char *t2 = run_baseline(m32, n32, 2, (mp_memory_mode)mode, &threads2);
        assert_string_equal(ta, tagain);
        assert_string_equal(ta, t2);
        /* the hidden activation is 1 x hidden floats: 128 B, then 256 B; an arena slot holds
         * exactly that, a dynamic buffer has XNNPACK's read slack (MP_INPUT_SLACK) more */
        uint64_t slack = mode == MP_MEMORY_DYNAMIC ? MP_INPUT_SLACK : 0;
        assert_int_equal(tensor_bytes(&a, "dense/Relu"), 32 * 4 + slack);
        assert_int_equal(tensor_bytes(&b, "dense/Relu"), 64 * 4 + slack);
        assert_int_equal(tensor_bytes(&a, "x"), 16 * 4 + slack);
        assert_int_equal(tensor_bytes(&b, "dense_1/BiasAdd"), 4 * 4 + slack);
        /* the wider model fails the narrow one's baseline, naming what grew */
        mp_tolerance none = {0};
        mp_gate_result r = gate(&b, NULL, 0, &a, none);
        assert_true(r.n_failed >= 1);
        assert_int_equal(r.checks[0].figure, MP_FIG_TENSORS);
        assert_false(r.checks[0].passed);
        assert_true(b.fig[MP_FIG_TENSORS] > a.fig[MP_FIG_TENSORS]);
        bool named = false;
        for (size_t i = 0; i < r.diff.n_tensors; i++) {
            const mp_gate_change *c = &r.diff.tensors[i];
            if (strcmp(c->name, "dense/Relu") == 0) {
                named = true;
                assert_int_equal(c->a, 128 + slack);
                assert_int_equal(c->b, 256 + slack);
            } else if (strcmp(c->name, "x") == 0 || strcmp(c->name, "probs") == 0 ||
                       strcmp(c->name, "dense_1/BiasAdd") == 0) {
                fail_msg("tensor %s did not change, yet is listed", c->name);
            }
        }
        assert_true(named);
        /* and passes its own */
        mp_gate_result_free(&r);
        r = gate(&again, NULL, 0, &a, none);
        assert_int_equal(r.n_failed, 0);
        assert_int_equal(r.diff.n_tensors, 0);
        mp_gate_result_free(&r);
        free(ta);
        free(tb);
        free(tagain);
        free(t2);
        mp_baseline_free(&a);
        mp_baseline_free(&b);
        mp_baseline_free(&again);
        mp_baseline_free(&threads2);
    }
    free(m32);
    free(m64);
}

static int setup(void **state)
{
    (void)state;
    return mp_test_tmpdir_make("test_gate");
}

static int teardown(void **state)
{
    (void)state;
    return mp_test_tmpdir_remove();
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--write-mlp") == 0) {
        size_t size;
        void *bytes = mlp_bytes(atoi(argv[2]), &size);
        FILE *f = fopen(argv[3], "wb");
        int ok = f && fwrite(bytes, 1, size, f) == size;
        ok = f && fclose(f) == 0 && ok;
        free(bytes);
        return ok ? 0 : 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_figures_by_hand),
        cmocka_unit_test(test_tensor_keys),
        cmocka_unit_test(test_figures_of_file),
        cmocka_unit_test(test_file_kind),
        cmocka_unit_test(test_file_round_trip),
        cmocka_unit_test(test_file_errors),
        cmocka_unit_test(test_file_errors_one_line),
        cmocka_unit_test(test_file_machine_figures_ignored),
        cmocka_unit_test(test_file_inputs_in_name_order),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_tolerance),
        cmocka_unit_test(test_baseline_regression),
        cmocka_unit_test(test_diff_tensors),
        cmocka_unit_test(test_junit),
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_sha256),
        cmocka_unit_test(test_wider_layer),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
