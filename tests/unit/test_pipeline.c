/* Pipelines (engine/pipeline.h) over split models (engine/model/model_split.h): MobileNet v2
 * cut into two and three parts gives the whole model's outputs bit for bit in every memory
 * mode, I/O mode and with the shared arena; copies counted from their definition (2 x models
 * under copy, 0 under bind); the chain's arena against the whole model's; edges that cannot
 * bind (a dtype change between two models built here, a misaligned or short caller buffer)
 * copy once and say why; one trace for the chain, each block attributed to its model; an
 * output feeding several later models (fan-out): the split model bit for bit, three models
 * built here checked by hand, its copies counted, one reader copying while the other stays
 * bound, the fanned buffer kept clear until its last reader in the shared arena; a later
 * model's input no output feeds (a chain input): fed by the caller, its values, copies,
 * bindings, fallbacks and shape changes by hand, made one by mp_pipeline_connect_caller, and
 * the refusals; a split model whose second part needs the first part's input and an output
 * of the first part that is also the model's output. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cmocka.h>

#include "engine/memory/plan.h"
#include "engine/model/model_split.h"
#include "engine/model/reference_input.h"
#include "engine/model/tflite_writer.h"
#include "engine/model/zoo.h"
#include "engine/pipeline.h"
#include "tests/util/testutil.h"

typedef struct whole {
    void *out;              /* the whole model's output 0 */
    size_t out_bytes;
    uint64_t arena_bound;   /* its planner total with input and output bound (no slack) */
} whole;

static void *bytes_of(const char *zoo, size_t *size)
{
    void *b = NULL;
    mp_error err = {0};
    assert_int_equal(mp_zoo_build(zoo, &b, size, &err), MP_OK);
    return b;
}

/* Zoo model NAME written to the test folder as FILE. */
static void zoo_to_file(const char *name, const char *file, char path[512])
{
    snprintf(path, 512, "%s", mp_test_tmp_path(file));
    size_t size;
    void *b = bytes_of(name, &size);
    mp_test_write_bytes(path, b, size);
    free(b);
}

/* An input buffer as a caller makes one: page-aligned, with the slack, the reference values. */
static void *make_input(const mp_tensor *t, int k, size_t *cap)
{
    *cap = t->bytes + MP_INPUT_SLACK;
    void *p = mmap(NULL, *cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(p != MAP_FAILED);
    assert_true(mp_reference_input(p, t->dtype, mp_tensor_elements(t), k));
    return p;
}

/* The whole model run alone, on bound buffers, in auto mode. */
static void run_whole(const char *path, whole *w)
{
    mp_error err = {0};
    mp_session *s = NULL;
    mp_session_options so = {.threads = 1};
    assert_int_equal(mp_session_create(&so, &s, &err), MP_OK);
    assert_int_equal(mp_session_load(s, path, &err), MP_OK);
    size_t cap;
    void *in = make_input(mp_session_input(s, 0), 0, &cap);
    const mp_tensor *o = mp_session_output(s, 0);
    w->out_bytes = o->bytes;
    w->out = malloc(o->bytes + 64);
    assert_int_equal(mp_session_set_input_buffer(s, 0, in, cap, &err), MP_OK);
    assert_int_equal(mp_session_set_output_buffer(s, 0, w->out, o->bytes, &err), MP_OK);
    assert_int_equal(mp_session_run(s, &err), MP_OK);
    mp_session_memory mi;
    mp_session_memory_info(s, &mi);
    w->arena_bound = mi.arena_bytes - MP_INPUT_SLACK;
    mp_session_destroy(s);
    munmap(in, cap);
}

/* Split the model at the cuts into files part-1.tflite ... in the test folder. */
static int split_to_files(const char *path, const int32_t *cuts, int n_cuts, const char *tag,
                          char paths[][512])
{
    mp_error err = {0};
    mp_model *m = NULL;
    assert_int_equal(mp_model_open(path, &m, &err), MP_OK);
    mp_split_part parts[MP_SPLIT_MAX_PARTS];
    assert_int_equal(mp_model_split(m, cuts, n_cuts, parts, &err), MP_OK);
    for (int p = 0; p <= n_cuts; p++) {
        char name[64];
        snprintf(name, sizeof name, "%s-%d.tflite", tag, p + 1);
        snprintf(paths[p], 512, "%s", mp_test_tmp_path(name));
        mp_test_write_bytes(paths[p], parts[p].bytes, parts[p].size);
        /* every part is a valid model that loads */
        mp_model *pm = NULL;
        assert_int_equal(mp_model_load_memory(parts[p].bytes, parts[p].size, name, &pm, &err),
                         MP_OK);
        assert_int_equal(pm->n_ops, parts[p].n_ops);
        mp_model_free(pm);
    }
    int n_ops = m->n_ops;
    mp_model_split_free(parts, n_cuts + 1);
    mp_model_free(m);
    return n_ops;
}

typedef struct chain_run {
    uint64_t copies_per_run;
    mp_pipe_arena arena;
    int n_bound_links, n_links;
} chain_run;

/* Run the parts as a pipeline twice, connected as `conn` says (triples from model, output,
 * to model, input; 1-based models as --connect takes them) after the connections by position;
 * its output must equal the whole model's bit for bit. */
static void run_chain_connected(char paths[][512], int n, mp_memory_mode mode, mp_pipe_io io,
                                bool share, const whole *w, chain_run *out,
                                const char *const (*conn)[4], int n_conn)
{
    mp_error err = {0};
    mp_trace *tr = mp_trace_create();
    mp_pipe_options o = {.threads = 1, .mode = mode, .io = io, .share_arena = share, .trace = tr};
    const char *models[MP_PIPE_MAX_MODELS];
    for (int k = 0; k < n; k++)
        models[k] = paths[k];
    mp_pipeline *p = NULL;
    assert_int_equal(mp_pipeline_create(&o, n, models, &p, &err), MP_OK);
    for (int c = 0; c < n_conn; c++)
        assert_int_equal(mp_pipeline_connect(p, atoi(conn[c][0]) - 1, conn[c][1],
                                             atoi(conn[c][2]) - 1, conn[c][3], &err), MP_OK);
    size_t cap;
    void *in = make_input(mp_session_input(mp_pipeline_session(p, 0), 0), 0, &cap);
    void *res = malloc(w->out_bytes + 64);
    assert_int_equal(mp_pipeline_set_input(p, 0, in, cap, &err), MP_OK);
    assert_int_equal(mp_pipeline_set_output(p, 0, res, w->out_bytes, &err), MP_OK);
    assert_int_equal(mp_pipeline_prepare(p, &err), MP_OK);
    for (int r = 0; r < 2; r++) {
        memset(res, 0x55, w->out_bytes);
        if (mp_pipeline_run(p, &err) != MP_OK)
            fail_msg("%s", err.msg);
        assert_memory_equal(res, w->out, w->out_bytes);
    }
    uint64_t copies = 0, copy_events_expected = 0;
    const mp_pipe_edge *e = mp_pipeline_edges(p);
    out->n_bound_links = out->n_links = 0;
    for (int i = 0; i < mp_pipeline_edge_count(p); i++) {
        copies += e[i].copies;
        if (e[i].from_model >= 0 && e[i].to_model >= 0) {
            out->n_links++;
            out->n_bound_links += e[i].bound;
        }
    }
    copy_events_expected = copies;
    out->copies_per_run = copies / 2;
    mp_pipeline_arena(p, &out->arena);
    mp_trace *chain = NULL;
    assert_int_equal(mp_pipeline_close(p, &chain, &err), MP_OK);
    assert_non_null(chain);
    /* one trace: the models one after another, every block and copy attributed */
    const mp_trace_meta *m = mp_trace_get_meta(chain);
    assert_int_equal(m->n_models, n);
    int32_t tensors = 0;
    for (int k = 0; k < n; k++) {
        assert_int_equal(m->models[k].first_tensor, tensors);
        tensors += m->models[k].n_tensors;
    }
    assert_int_equal(m->n_tensors, tensors);
    uint64_t copy_events = 0, live = 0;
    int seen_models = 0;
    for (size_t i = 0; i < mp_trace_count(chain); i++) {
        const mp_event *ev = &mp_trace_events(chain)[i];
        if (ev->type == MP_EV_COPY)
            copy_events++;
        if (ev->type == MP_EV_ALLOC) {
            int32_t k = mp_trace_event_model(m, ev);
            assert_true(k >= 0 && k < n);
            seen_models |= 1 << k;
            if (ev->kind != MP_KIND_CONST)
                live += ev->bytes;
        }
        if (ev->type == MP_EV_FREE && ev->kind != MP_KIND_CONST)
            live -= ev->bytes;
    }
    assert_int_equal(copy_events, copy_events_expected);
    assert_int_equal(seen_models, (1 << n) - 1);
    assert_int_equal(live, 0); /* every block freed: ids matched across the models */
    /* saved and read back with its table */
    const char *tp = mp_test_tmp_path("chain.json");
    assert_int_equal(mp_trace_save(chain, tp, &err), MP_OK);
    mp_trace *back = NULL;
    assert_int_equal(mp_trace_load(tp, &back, &err), MP_OK);
    assert_int_equal(mp_trace_get_meta(back)->n_models, n);
    assert_int_equal(mp_trace_get_meta(back)->models[n - 1].n_ops, m->models[n - 1].n_ops);
    mp_trace_destroy(back);
    mp_trace_destroy(chain);
    mp_pipeline_free(p);
    mp_trace_destroy(tr);
    munmap(in, cap);
    free(res);
}

static void run_chain(char paths[][512], int n, mp_memory_mode mode, mp_pipe_io io, bool share,
                      const whole *w, chain_run *out)
{
    run_chain_connected(paths, n, mode, io, share, w, out, NULL, 0);
}

static void check_model(const char *path, const int32_t *cuts, int n_cuts, const char *tag)
{
    whole w;
    run_whole(path, &w);
    char paths[MP_SPLIT_MAX_PARTS][512];
    split_to_files(path, cuts, n_cuts, tag, paths);
    int n = n_cuts + 1;
    for (int mode = MP_MEMORY_AUTO; mode <= MP_MEMORY_DYNAMIC; mode++)
        for (int io = MP_PIPE_COPY; io <= MP_PIPE_BIND; io++)
            for (int share = 0; share <= 1; share++) {
                chain_run r;
                run_chain(paths, n, (mp_memory_mode)mode, (mp_pipe_io)io, share, &w, &r);
                /* from the definition: each model copies its input in and its output out */
                if (io == MP_PIPE_COPY)
                    assert_int_equal(r.copies_per_run,
                                     2 * (uint64_t)n + 2 * (uint64_t)(r.n_links - (n - 1)));
                else
                    assert_int_equal(r.copies_per_run, 0);
                if (io == MP_PIPE_BIND)
                    assert_int_equal(r.n_bound_links, r.n_links);
                if (share && mode != MP_MEMORY_DYNAMIC) {
                    assert_true(r.arena.planned);
                    assert_true(r.arena.chain_lower_bound <= r.arena.chain_bytes);
                    assert_true(r.arena.chain_bytes <= r.arena.separate_bytes);
                }
                if (share && mode != MP_MEMORY_DYNAMIC && io == MP_PIPE_BIND) {
                    /* the whole model is the bound: one alignment slot per boundary tensor
                     * (each carries MP_INPUT_SLACK) */
                    uint64_t slack = 64 * (uint64_t)r.n_links;
                    assert_true(r.arena.chain_bytes + slack >= w.arena_bound);
                    assert_true(r.arena.chain_bytes <= w.arena_bound + slack);
                }
            }
    free(w.out);
}

/* Operator count of a model. */
static int n_ops_of(const char *path)
{
    mp_error err = {0};
    mp_model *m = NULL;
    assert_int_equal(mp_model_open(path, &m, &err), MP_OK);
    int n = m->n_ops;
    mp_model_free(m);
    return n;
}

static void test_mobilenet_v2_two_and_three(void **state)
{
    (void)state;
    char path[512];
    zoo_to_file("mobilenet_v2", "mnv2.tflite", path);
    int n = n_ops_of(path);
    /* a cut inside a residual block: two tensors cross it (the block's input and its
     * projection), found by trying cuts until a part has two inputs */
    int32_t two[1] = {n / 2};
    check_model(path, two, 1, "mnv2-half");
    int32_t three[2] = {n / 3, 2 * n / 3};
    check_model(path, three, 2, "mnv2-thirds");
}

/* A cut where several tensors cross (a residual connection): still bit for bit. */
static void test_residual_cut(void **state)
{
    (void)state;
    char path[512];
    zoo_to_file("mobilenet_v2", "mnv2r.tflite", path);
    mp_error err = {0};
    mp_model *m = NULL;
    assert_int_equal(mp_model_open(path, &m, &err), MP_OK);
    int32_t cut = -1;
    for (int32_t c = 1; c < m->n_ops && cut < 0; c++) {
        mp_split_part parts[2];
        assert_int_equal(mp_model_split(m, &c, 1, parts, &err), MP_OK);
        if (parts[1].n_inputs >= 2)
            cut = c;
        mp_model_split_free(parts, 2);
    }
    mp_model_free(m);
    assert_true(cut > 0);
    whole w;
    run_whole(path, &w);
    char paths[2][512];
    split_to_files(path, &cut, 1, "mnv2-res", paths);
    chain_run r;
    run_chain(paths, 2, MP_MEMORY_AUTO, MP_PIPE_BIND, true, &w, &r);
    assert_true(r.n_links >= 2);
    assert_int_equal(r.copies_per_run, 0);
    run_chain(paths, 2, MP_MEMORY_STATIC, MP_PIPE_COPY, false, &w, &r);
    assert_int_equal(r.copies_per_run, 2 * 2 + 2 * (uint64_t)(r.n_links - 1));
    free(w.out);
}

/* Shared models split in two, when ../shared is present: bit for bit under bind. */
static void test_shared_models(void **state)
{
    (void)state;
    static const char *const names[] = {"tfsupport_mobilenet_v1_0.25_224_float.tflite",
                                        "tiny_ic_resnet8_float.tflite",
                                        "coral_mobilenet_v1_0.25_128_quant.tflite"};
    if (!mp_test_shared_dir())
        skip();
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s", mp_test_path("models", names[i]));
        FILE *f = fopen(path, "rb");
        if (!f)
            continue;
        fclose(f);
        whole w;
        run_whole(path, &w);
        char paths[2][512];
        int32_t cut = n_ops_of(path) / 2;
        char tag[32];
        snprintf(tag, sizeof tag, "shared%zu", i);
        split_to_files(path, &cut, 1, tag, paths);
        chain_run r;
        run_chain(paths, 2, MP_MEMORY_AUTO, MP_PIPE_BIND, false, &w, &r);
        assert_int_equal(r.copies_per_run, 0);
        run_chain(paths, 2, MP_MEMORY_DYNAMIC, MP_PIPE_COPY, false, &w, &r);
        free(w.out);
    }
}

/* Two models built here: A (float32 [1,16] -> RELU) and B (uint8 [1,16] scale 1/16 ->
 * DEQUANTIZE -> float32): the edge between them changes dtype. */
static void write_pair(char pa[512], char pb[512])
{
    mp_error err = {0};
    void *bytes;
    size_t size;
    int32_t dims[2] = {1, 16};
    mp_tfw *w = mp_tfw_create();
    int x = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 2, dims, 0, NULL);
    int y = mp_tfw_tensor(w, "y", MP_DT_FLOAT32, 2, dims, 0, NULL);
    mp_tfw_op(w, MP_OP_RELU, 1, &x, 1, &y, NULL);
    mp_tfw_io(w, 1, &x, 1, &y);
    assert_int_equal(mp_tfw_finish(w, &bytes, &size, &err), MP_OK);
    mp_tfw_free(w);
    snprintf(pa, 512, "%s", mp_test_tmp_path("pair-a.tflite"));
    mp_test_write_bytes(pa, bytes, size);
    free(bytes);
    w = mp_tfw_create();
    int q = mp_tfw_tensor(w, "q", MP_DT_UINT8, 2, dims, 0, NULL);
    float scale = 1.0f / 16;
    int64_t zp = 8;
    mp_tfw_tensor_quant(w, q, 1, &scale, &zp, 0);
    int r = mp_tfw_tensor(w, "r", MP_DT_FLOAT32, 2, dims, 0, NULL);
    mp_tfw_op(w, MP_OP_DEQUANTIZE, 1, &q, 1, &r, NULL);
    mp_tfw_io(w, 1, &q, 1, &r);
    assert_int_equal(mp_tfw_finish(w, &bytes, &size, &err), MP_OK);
    mp_tfw_free(w);
    snprintf(pb, 512, "%s", mp_test_tmp_path("pair-b.tflite"));
    mp_test_write_bytes(pb, bytes, size);
    free(bytes);
}

static void test_unbindable_edges(void **state)
{
    (void)state;
    char pa[512], pb[512];
    write_pair(pa, pb);
    const char *models[2] = {pa, pb};
    mp_error err = {0};
    mp_pipe_options o = {.threads = 1, .io = MP_PIPE_BIND};
    mp_pipeline *p = NULL;
    assert_int_equal(mp_pipeline_create(&o, 2, models, &p, &err), MP_OK);
    /* the caller's input one byte off its float alignment */
    size_t cap = 192; /* a multiple of the alignment (aligned_alloc); room for 16 floats, the slack and an offset */
    char *raw = aligned_alloc(64, cap);
    float *in = (float *)(raw + 1);
    float x[16];
    for (int i = 0; i < 16; i++)
        x[i] = (float)(i - 6) / 4; /* multiples of 1/16: exact in the uint8 */
    memcpy(in, x, sizeof x);
    float res[16];
    assert_int_equal(mp_pipeline_set_input(p, 0, in, cap - 1, &err), MP_OK);
    assert_int_equal(mp_pipeline_set_output(p, 0, res, sizeof res, &err), MP_OK);
    for (int r = 0; r < 3; r++)
        if (mp_pipeline_run(p, &err) != MP_OK)
            fail_msg("%s", err.msg);
    for (int i = 0; i < 16; i++) {
        float relu = x[i] > 0 ? x[i] : 0;
        float q = relu * 16 + 8; /* exact */
        if (q > 255)
            q = 255;
        assert_true(res[i] == (q - 8) / 16);
    }
    const mp_pipe_edge *e = mp_pipeline_edges(p);
    assert_int_equal(mp_pipeline_edge_count(p), 3);
    assert_int_equal(e[0].why, MP_WHY_ALIGN);
    assert_false(e[0].bound);
    assert_non_null(strstr(e[0].reason, "aligned"));
    assert_int_equal(e[0].copies, 3);
    assert_int_equal(e[1].why, MP_WHY_DTYPE);
    assert_false(e[1].bound);
    assert_non_null(strstr(e[1].reason, "f32"));
    assert_int_equal(e[1].copies, 3);
    assert_true(e[2].bound);
    assert_int_equal(e[2].copies, 0);
    /* an aligned buffer without XNNPACK's slack: copied, and said so */
    float *in2 = (float *)(raw + 64);
    memcpy(in2, x, sizeof x);
    assert_int_equal(mp_pipeline_set_input(p, 0, in2, 16 * 4, &err), MP_OK);
    assert_int_equal(mp_pipeline_run(p, &err), MP_OK);
    assert_int_equal(e[0].why, MP_WHY_SLACK);
    assert_non_null(strstr(e[0].reason, "slack"));
    /* and with room: bound, no copy */
    assert_int_equal(mp_pipeline_set_input(p, 0, in2, cap - 64, &err), MP_OK);
    uint64_t before = e[0].copies;
    assert_int_equal(mp_pipeline_run(p, &err), MP_OK);
    assert_true(e[0].bound);
    assert_int_equal(e[0].copies, before);
    mp_pipeline_free(p);
    free(raw);
}

/* A model RELU [-1,16] -> [-1,16] (free batch), written to the test folder as NAME. */
static void write_relu(const char *name, char out[512])
{
    mp_error err = {0};
    void *bytes;
    size_t size;
    int32_t dims[2] = {1, 16}, sig[2] = {-1, 16};
    mp_tfw *w = mp_tfw_create();
    int x = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 2, dims, 0, sig);
    int y = mp_tfw_tensor(w, "y", MP_DT_FLOAT32, 2, dims, 0, sig);
    mp_tfw_op(w, MP_OP_RELU, 1, &x, 1, &y, NULL);
    mp_tfw_io(w, 1, &x, 1, &y);
    assert_int_equal(mp_tfw_finish(w, &bytes, &size, &err), MP_OK);
    mp_tfw_free(w);
    snprintf(out, 512, "%s", mp_test_tmp_path(name));
    mp_test_write_bytes(out, bytes, size);
    free(bytes);
}

/* A shape change at the first model after prepare (call orders C and D) propagates along
 * the chain: the second model's input takes the first model's output shape, in every mode,
 * bound or copied, with the shared arena planned again. */
static void test_shape_propagates(void **state)
{
    (void)state;
    char pa[512], pb[512];
    write_relu("relu-a.tflite", pa);
    write_relu("relu-b.tflite", pb);
    const char *models[2] = {pa, pb};
    for (int mode = MP_MEMORY_AUTO; mode <= MP_MEMORY_DYNAMIC; mode++)
        for (int io = MP_PIPE_COPY; io <= MP_PIPE_BIND; io++) {
            mp_error err = {0};
            mp_pipe_options o = {.threads = 1, .mode = (mp_memory_mode)mode,
                                 .io = (mp_pipe_io)io, .share_arena = true};
            mp_pipeline *p = NULL;
            assert_int_equal(mp_pipeline_create(&o, 2, models, &p, &err), MP_OK);
            float in[4 * 16 + 16], res[4 * 16];
            for (int i = 0; i < 4 * 16; i++)
                in[i] = (float)(i % 7) - 3;
            assert_int_equal(mp_pipeline_set_input(p, 0, in, sizeof in, &err), MP_OK);
            assert_int_equal(mp_pipeline_set_output(p, 0, res, sizeof res, &err), MP_OK);
            assert_int_equal(mp_pipeline_prepare(p, &err), MP_OK);
            for (int batch = 1; batch <= 4; batch++) { /* a new shape before every run */
                int32_t dims[2] = {batch, 16};
                assert_int_equal(mp_session_set_input_shape(mp_pipeline_session(p, 0), 0, 2,
                                                            dims, &err), MP_OK);
                assert_int_equal(mp_pipeline_set_input(p, 0, in, sizeof in, &err), MP_OK);
                memset(res, 0, sizeof res);
                if (mp_pipeline_run(p, &err) != MP_OK)
                    fail_msg("%s", err.msg);
                const mp_tensor *t = mp_session_input(mp_pipeline_session(p, 1), 0);
                assert_int_equal(t->dims[0], batch);
                assert_int_equal(mp_pipeline_output_tensor(p, 0)->dims[0], batch);
                for (int i = 0; i < batch * 16; i++)
                    assert_true(res[i] == (in[i] > 0 ? in[i] : 0));
            }
            mp_pipe_arena ar;
            mp_pipeline_arena(p, &ar);
            if (mode != MP_MEMORY_DYNAMIC && io == MP_PIPE_COPY)
                assert_true(ar.plans >= 4); /* planned again for each new shape */
            mp_pipeline_free(p);
        }
}

/* ---- fan-out: an output feeding several later models ------------------------------------ */

/* Model 1 of MobileNet v2 cut before operators 18 and 19 writes expanded_conv_4/add (the
 * input of block 5's residual add), which model 2 passes through to model 3; connected
 * straight from model 1 to model 3 as well (--connect 1.0=3.0), that output feeds two models
 * and model 2's passed-through copy feeds nothing. Bit for bit against the whole model in
 * every memory mode, I/O mode and with the shared arena. */
static void test_fan_out_split(void **state)
{
    (void)state;
    char path[512];
    zoo_to_file("mobilenet_v2", "mnv2f.tflite", path);
    whole w;
    run_whole(path, &w);
    char paths[3][512];
    int32_t cuts[2] = {18, 19};
    split_to_files(path, cuts, 2, "mnv2-fan", paths);
    /* the structure the test relies on: model 2 passes model 1's output 0 through */
    mp_error err = {0};
    mp_model *m1 = NULL, *m3 = NULL;
    assert_int_equal(mp_model_open(paths[0], &m1, &err), MP_OK);
    assert_int_equal(mp_model_open(paths[2], &m3, &err), MP_OK);
    assert_string_equal(m1->tensors[m1->outputs[0]].name, m3->tensors[m3->inputs[0]].name);
    assert_int_equal(m1->n_outputs, 2);
    assert_int_equal(m3->n_inputs, 2);
    mp_model_free(m1);
    mp_model_free(m3);
    static const char *const conn[1][4] = {{"1", "0", "3", "0"}};
    for (int mode = MP_MEMORY_AUTO; mode <= MP_MEMORY_DYNAMIC; mode++)
        for (int io = MP_PIPE_COPY; io <= MP_PIPE_BIND; io++)
            for (int share = 0; share <= 1; share++) {
                chain_run r;
                run_chain_connected(paths, 3, (mp_memory_mode)mode, (mp_pipe_io)io, share, &w,
                                    &r, conn, 1);
                /* edges 1.0->2.0, 1.1->2.1, 1.0->3.0, 2.1->3.1 */
                assert_int_equal(r.n_links, 4);
                /* copy: the caller's input in (1); model 1's output 0 out once and into its
                 * two readers (3); 1.1->2.1 and 2.1->3.1 out and in (2 + 2); the chain's
                 * output out (1) */
                assert_int_equal(r.copies_per_run, io == MP_PIPE_COPY ? 9 : 0);
                if (io == MP_PIPE_BIND)
                    assert_int_equal(r.n_bound_links, 4);
                if (share && mode != MP_MEMORY_DYNAMIC) {
                    assert_true(r.arena.planned);
                    assert_true(r.arena.chain_lower_bound <= r.arena.chain_bytes);
                    assert_true(r.arena.chain_bytes <= r.arena.separate_bytes);
                    /* bound: three groups' buffers (model 1's two outputs, model 2's) */
                    assert_int_equal(r.arena.n_boundary, io == MP_PIPE_BIND ? 3 : 0);
                }
            }
    free(w.out);
}

/* A float32 [1,8] tensor (rank 1 [8] when flat). */
static int f32_tensor(mp_tfw *w, const char *name, bool flat)
{
    int32_t dims[2] = {1, 8}, flat_dims[1] = {8};
    return flat ? mp_tfw_tensor(w, name, MP_DT_FLOAT32, 1, flat_dims, 0, NULL)
                : mp_tfw_tensor(w, name, MP_DT_FLOAT32, 2, dims, 0, NULL);
}

static void finish_model(mp_tfw *w, const char *name, char out[512])
{
    mp_error err = {0};
    void *bytes;
    size_t size;
    assert_int_equal(mp_tfw_finish(w, &bytes, &size, &err), MP_OK);
    mp_tfw_free(w);
    snprintf(out, 512, "%s", mp_test_tmp_path(name));
    mp_test_write_bytes(out, bytes, size);
    free(bytes);
}

/* Three models on float32 [1,8]:
 *   model 1  x -> y = x + 1 (output 0), u = x + x (output 1, read by nobody)
 *   model 2  a -> t = a + a, z = t + t                      (z = 4a)
 *   model 3  p, q -> s = q + q, w = s + p                   (w = 2q + p)
 * connected 1.0=2.0, 1.0=3.0, 2.0=3.1: w = 2 * 4y + y = 9 (x + 1). Model 3's p is [8] with
 * P_FLAT (as many elements, another shape), a variable tensor (state) with P_STATE. */
enum { P_SAME, P_FLAT, P_STATE };
static void write_fan(char paths[3][512], int p_kind)
{
    mp_tfw *w = mp_tfw_create();
    float ones[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    int32_t dims[2] = {1, 8};
    int one = mp_tfw_tensor(w, "one", MP_DT_FLOAT32, 2, dims, mp_tfw_buffer(w, ones, sizeof ones),
                            NULL);
    int x = f32_tensor(w, "x", false), y = f32_tensor(w, "y", false), u = f32_tensor(w, "u", false);
    mp_tfw_op(w, MP_OP_ADD, 2, (int32_t[]){x, one}, 1, &y, NULL);
    mp_tfw_op(w, MP_OP_ADD, 2, (int32_t[]){x, x}, 1, &u, NULL);
    mp_tfw_io(w, 1, &x, 2, (int32_t[]){y, u});
    finish_model(w, "fan-1.tflite", paths[0]);
    w = mp_tfw_create();
    int a = f32_tensor(w, "a", false), t = f32_tensor(w, "t", false), z = f32_tensor(w, "z", false);
    mp_tfw_op(w, MP_OP_ADD, 2, (int32_t[]){a, a}, 1, &t, NULL);
    mp_tfw_op(w, MP_OP_ADD, 2, (int32_t[]){t, t}, 1, &z, NULL);
    mp_tfw_io(w, 1, &a, 1, &z);
    finish_model(w, "fan-2.tflite", paths[1]);
    w = mp_tfw_create();
    int p = f32_tensor(w, "p", p_kind == P_FLAT), q = f32_tensor(w, "q", false);
    if (p_kind == P_STATE)
        mp_tfw_tensor_variable(w, p);
    int s = f32_tensor(w, "s", false), o = f32_tensor(w, "w", false);
    mp_tfw_op(w, MP_OP_ADD, 2, (int32_t[]){q, q}, 1, &s, NULL);
    mp_tfw_op(w, MP_OP_ADD, 2, (int32_t[]){s, p}, 1, &o, NULL);
    mp_tfw_io(w, 2, (int32_t[]){p, q}, 1, &o);
    finish_model(w, p_kind == P_FLAT ? "fan-3f.tflite" : p_kind == P_STATE ? "fan-3v.tflite"
                                                                     : "fan-3.tflite", paths[2]);
}

static mp_pipeline *open_fan(char paths[3][512], const mp_pipe_options *o, float *in,
                             float *res)
{
    mp_error err = {0};
    const char *models[3] = {paths[0], paths[1], paths[2]};
    mp_pipeline *p = NULL;
    assert_int_equal(mp_pipeline_create(o, 3, models, &p, &err), MP_OK);
    assert_int_equal(mp_pipeline_connect(p, 0, "y", 2, "p", &err), MP_OK);
    assert_int_equal(mp_pipeline_connect(p, 1, "0", 2, "1", &err), MP_OK);
    assert_int_equal(mp_pipeline_set_input(p, 0, in, 8 * sizeof(float) + MP_INPUT_SLACK, &err),
                     MP_OK);
    assert_int_equal(mp_pipeline_set_output(p, 0, res, 8 * sizeof(float), &err), MP_OK);
    return p;
}

/* Run twice; w = 9 (x + 1) exactly (small multiples of 1/2). */
static void run_fan(mp_pipeline *p, const float *in, float *res)
{
    mp_error err = {0};
    for (int r = 0; r < 2; r++) {
        memset(res, 0x55, 8 * sizeof(float));
        if (mp_pipeline_run(p, &err) != MP_OK)
            fail_msg("%s", err.msg);
        for (int i = 0; i < 8; i++)
            assert_true(res[i] == 9 * (in[i] + 1));
    }
}

static uint64_t copy_events(const mp_trace *tr)
{
    uint64_t n = 0;
    for (size_t i = 0; i < mp_trace_count(tr); i++)
        n += mp_trace_events(tr)[i].type == MP_EV_COPY;
    return n;
}

static bool overlap(const void *a, size_t na, const void *b, size_t nb)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return x < y + nb && y < x + na;
}

static void test_fan_out_by_hand(void **state)
{
    (void)state;
    char paths[3][512];
    write_fan(paths, P_SAME);
    float in[8 + MP_INPUT_SLACK / sizeof(float)], res[8];
    for (int i = 0; i < 8; i++)
        in[i] = (float)i - 3.5f;
    for (int mode = MP_MEMORY_AUTO; mode <= MP_MEMORY_DYNAMIC; mode++)
        for (int io = MP_PIPE_COPY; io <= MP_PIPE_BIND; io++)
            for (int share = 0; share <= 1; share++) {
                mp_trace *tr = mp_trace_create();
                mp_pipe_options o = {.threads = 1, .mode = (mp_memory_mode)mode,
                                     .io = (mp_pipe_io)io, .share_arena = share, .trace = tr};
                mp_pipeline *p = open_fan(paths, &o, in, res);
                uint64_t ev0 = copy_events(tr);
                run_fan(p, in, res);
                /* edges: 0 caller -> 1.x, 1 1.y -> 2.a, 2 1.y -> 3.p, 3 2.z -> 3.q,
                 * 4 3.w -> caller */
                const mp_pipe_edge *e = mp_pipeline_edges(p);
                assert_int_equal(mp_pipeline_edge_count(p), 5);
                assert_int_equal(e[1].from_model, 0);
                assert_int_equal(e[2].from_model, 0);
                assert_int_equal(e[2].from_output, 0);
                assert_int_equal(e[2].to_model, 2);
                assert_int_equal(e[2].to_input, 0);
                if (io == MP_PIPE_COPY) {
                    /* per run: the caller's x in (1); y out once (edge 1) and into its two
                     * readers (one each on edges 1 and 2); z out and in (2); w out (1): 7 */
                    const uint64_t per_run[5] = {1, 2, 1, 2, 1};
                    uint64_t total = 0;
                    for (int i = 0; i < 5; i++) {
                        assert_int_equal(e[i].copies, 2 * per_run[i]);
                        assert_false(e[i].bound);
                        total += e[i].copies;
                    }
                    assert_int_equal(total, 2 * 7);
                    /* the bytes: y 32 out + 32 in on edge 1, 32 in on edge 2 */
                    assert_int_equal(e[1].copy_bytes, 2 * 64);
                    assert_int_equal(e[2].copy_bytes, 2 * 32);
                    assert_non_null(strstr(e[1].reason, "once for its 2 readers"));
                    assert_non_null(strstr(e[2].reason, "edge 1's"));
                    /* the trace records exactly these copies */
                    assert_int_equal(copy_events(tr) - ev0, total);
                } else {
                    for (int i = 0; i < 5; i++) {
                        assert_true(e[i].bound);
                        assert_int_equal(e[i].copies, 0);
                    }
                    assert_int_equal(copy_events(tr) - ev0, 0);
                    /* both readers see the very buffer model 1 writes */
                    mp_session *s1 = mp_pipeline_session(p, 1), *s2 = mp_pipeline_session(p, 2);
                    const void *g = mp_session_input(s1, 0)->data;
                    assert_ptr_equal(g, mp_session_input(s2, 0)->data);
                    assert_ptr_equal(g, mp_session_output(mp_pipeline_session(p, 0), 0)->data);
                    if (share && mode != MP_MEMORY_DYNAMIC) {
                        /* y lives until model 3's last operator reads it: neither model 2's
                         * t nor model 3's s may lie on it */
                        const mp_tensor *t = mp_session_tensor(s1, 1);
                        const mp_tensor *s = mp_session_tensor(s2, 2);
                        assert_string_equal(t->info->name, "t");
                        assert_string_equal(s->info->name, "s");
                        assert_false(overlap(g, 32, t->data, 32));
                        assert_false(overlap(g, 32, s->data, 32));
                        mp_pipe_arena ar;
                        mp_pipeline_arena(p, &ar);
                        /* the live sets, in 64-byte slots (y and z carry the slack: 48 -> 64):
                         * step 0 (model 1) y, u; 1 (t = a + a) y, t; 2 (z = t + t) y, t, z;
                         * 3 (s = q + q) y, z, s; 4 (w = s + p) y, s. The largest: 3 slots;
                         * had y lived to model 2 only, steps 2 and 3 would hold 2 */
                        assert_int_equal(ar.chain_lower_bound, 3 * 64);
                        assert_true(ar.chain_bytes >= ar.chain_lower_bound);
                        assert_int_equal(ar.n_boundary, 2);
                    }
                }
                mp_pipeline_free(p);
                mp_trace_destroy(tr);
            }
}

/* One reader of a fanned output cannot be bound (another shape; copy asked on its edge; an
 * input that is state its model may write in place): it copies once per run, with its
 * reason, while the other reader stays bound. */
static void test_fan_out_one_reader_copies(void **state)
{
    (void)state;
    float in[8 + MP_INPUT_SLACK / sizeof(float)], res[8];
    for (int i = 0; i < 8; i++)
        in[i] = (float)i * 0.5f - 2;
    char flat[3][512], same[3][512], stateful[3][512];
    write_fan(flat, P_FLAT);
    write_fan(same, P_SAME);
    write_fan(stateful, P_STATE);
    for (int mode = MP_MEMORY_AUTO; mode <= MP_MEMORY_DYNAMIC; mode++)
        for (int share = 0; share <= 1; share++)
            for (int variant = 0; variant < 3; variant++) {
                mp_error err = {0};
                mp_pipe_options o = {.threads = 1, .mode = (mp_memory_mode)mode,
                                     .io = MP_PIPE_BIND, .share_arena = share};
                mp_pipeline *p =
                    open_fan(variant == 0 ? flat : variant == 1 ? same : stateful, &o, in, res);
                if (variant == 1)
                    assert_int_equal(mp_pipeline_set_edge_io(p, 2, MP_PIPE_COPY, &err), MP_OK);
                run_fan(p, in, res);
                const mp_pipe_edge *e = mp_pipeline_edges(p);
                assert_true(e[1].bound);
                assert_int_equal(e[1].copies, 0);
                assert_false(e[2].bound);
                assert_int_equal(e[2].copies, 2); /* one per run, into model 3 */
                assert_int_equal(e[2].copy_bytes, 2 * 32);
                if (variant == 1) {
                    assert_int_equal(e[2].why, MP_WHY_COPY_ASKED);
                    assert_non_null(strstr(e[2].reason, "bound readers"));
                } else if (variant == 2) {
                    assert_int_equal(e[2].why, MP_WHY_WRITES);
                    assert_non_null(strstr(e[2].reason, "'p' is state model 3 writes in place"));
                } else {
                    assert_int_equal(e[2].why, MP_WHY_SHAPE);
                    assert_non_null(strstr(e[2].reason, "[1,8] to [8]"));
                }
                assert_true(e[3].bound && e[0].bound && e[4].bound);
                mp_pipeline_free(p);
            }
}

/* What a pipeline refuses: a caller's input named as a model (-1) to --connect, a model
 * feeding an earlier one. */
static void test_fan_out_refusals(void **state)
{
    (void)state;
    char paths[3][512];
    write_fan(paths, P_SAME);
    const char *models[3] = {paths[0], paths[1], paths[2]};
    mp_error err = {0};
    mp_pipe_options o = {.threads = 1};
    mp_pipeline *p = NULL;
    assert_int_equal(mp_pipeline_create(&o, 3, models, &p, &err), MP_OK);
    assert_int_equal(mp_pipeline_connect(p, -1, "0", 2, "p", &err), MP_ERR_ARG);
    assert_non_null(strstr(err.msg, "a model feeds a later one"));
    assert_int_equal(mp_pipeline_connect(p, 2, "0", 1, "a", &err), MP_ERR_ARG);
    assert_non_null(strstr(err.msg, "cannot connect model 3 to model 2"));
    assert_int_equal(mp_pipeline_connect(p, 0, "nosuch", 2, "p", &err), MP_ERR_ARG);
    assert_non_null(strstr(err.msg, "has no output 'nosuch'"));
    mp_pipeline_free(p);
}

/* ---- chain inputs: a later model's input fed by the caller ------------------------------ */

/* Model 1: x -> y = x + 1; model 2: a, b -> p = a * b (float32 [1,8]). Connected by position,
 * model 1's y feeds model 2's a; model 2's b is fed by nothing, so it is chain input 1. */
static void write_plus_mul(char paths[2][512])
{
    float ones[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    int32_t dims[2] = {1, 8};
    mp_tfw *w = mp_tfw_create();
    int x = f32_tensor(w, "x", false);
    int one = mp_tfw_tensor(w, "one", MP_DT_FLOAT32, 2, dims, mp_tfw_buffer(w, ones, sizeof ones),
                            NULL);
    int y = f32_tensor(w, "y", false);
    mp_tfw_op(w, MP_OP_ADD, 2, (int32_t[]){x, one}, 1, &y, NULL);
    mp_tfw_io(w, 1, &x, 1, &y);
    finish_model(w, "plus1.tflite", paths[0]);
    w = mp_tfw_create();
    int a = f32_tensor(w, "a", false), b = f32_tensor(w, "b", false), o = f32_tensor(w, "p", false);
    mp_tfw_op(w, MP_OP_MUL, 2, (int32_t[]){a, b}, 1, &o, NULL);
    mp_tfw_io(w, 2, (int32_t[]){a, b}, 1, &o);
    finish_model(w, "mul.tflite", paths[1]);
}

static mp_pipeline *open_plus_mul(char paths[2][512], const mp_pipe_options *o)
{
    mp_error err = {0};
    const char *models[2] = {paths[0], paths[1]};
    mp_pipeline *p = NULL;
    assert_int_equal(mp_pipeline_create(o, 2, models, &p, &err), MP_OK);
    return p;
}

/* x_i = i - 3, b_i = (i + 1) / 2: p_i = (x_i + 1) b_i, exact in float32. */
static void plus_mul_values(float *x, float *b)
{
    for (int i = 0; i < 8; i++) {
        x[i] = (float)i - 3;
        b[i] = (float)(i + 1) / 2;
    }
}

static void test_chain_input_by_hand(void **state)
{
    (void)state;
    char paths[2][512];
    write_plus_mul(paths);
    float x[8 + MP_INPUT_SLACK / sizeof(float)], b[8 + MP_INPUT_SLACK / sizeof(float)], res[8];
    plus_mul_values(x, b);
    for (int mode = MP_MEMORY_AUTO; mode <= MP_MEMORY_DYNAMIC; mode++)
        for (int io = MP_PIPE_COPY; io <= MP_PIPE_BIND; io++)
            for (int share = 0; share <= 1; share++) {
                mp_error err = {0};
                mp_trace *tr = mp_trace_create();
                mp_pipe_options o = {.threads = 1, .mode = (mp_memory_mode)mode,
                                     .io = (mp_pipe_io)io, .share_arena = share, .trace = tr};
                mp_pipeline *p = open_plus_mul(paths, &o);
                assert_int_equal(mp_pipeline_input_count(p), 0); /* not resolved yet */
                assert_int_equal(mp_pipeline_resolve(p, &err), MP_OK);
                /* chain inputs: 0 model 1's x, 1 model 2's b; model 2's a is model 1's y */
                int k = -1, i = -1;
                assert_int_equal(mp_pipeline_input_count(p), 2);
                assert_true(mp_pipeline_input_at(p, 0, &k, &i));
                assert_true(k == 0 && i == 0);
                assert_true(mp_pipeline_input_at(p, 1, &k, &i));
                assert_true(k == 1 && i == 1);
                assert_false(mp_pipeline_input_at(p, 2, &k, &i));
                assert_int_equal(mp_pipeline_input_index(p, 1, 1), 1);
                assert_int_equal(mp_pipeline_input_index(p, 1, 0), -1);
                assert_int_equal(mp_pipeline_set_input(p, 0, x, sizeof x, &err), MP_OK);
                assert_int_equal(mp_pipeline_set_input(p, 1, b, sizeof b, &err), MP_OK);
                assert_int_equal(mp_pipeline_set_output(p, 0, res, sizeof res, &err), MP_OK);
                uint64_t ev0 = copy_events(tr);
                for (int r = 0; r < 2; r++) {
                    memset(res, 0x55, sizeof res);
                    if (mp_pipeline_run(p, &err) != MP_OK)
                        fail_msg("%s", err.msg);
                    for (int j = 0; j < 8; j++)
                        assert_true(res[j] == (x[j] + 1) * b[j]);
                }
                /* edges: 0 caller 0 -> 1.x, 1 caller 1 -> 2.b, 2 1.y -> 2.a, 3 2.p -> caller */
                const mp_pipe_edge *e = mp_pipeline_edges(p);
                assert_int_equal(mp_pipeline_edge_count(p), 4);
                assert_true(e[1].from_model == -1 && e[1].from_output == 1);
                assert_true(e[1].to_model == 1 && e[1].to_input == 1);
                assert_true(e[2].from_model == 0 && e[2].to_model == 1 && e[2].to_input == 0);
                if (io == MP_PIPE_COPY) {
                    /* per run: x in (1), b in (1), y out and in (2), p out (1): 5, of 32 bytes
                     * each */
                    const uint64_t per_run[4] = {1, 1, 2, 1};
                    for (int j = 0; j < 4; j++) {
                        assert_int_equal(e[j].copies, 2 * per_run[j]);
                        assert_int_equal(e[j].copy_bytes, 2 * 32 * per_run[j]);
                        assert_false(e[j].bound);
                    }
                    assert_int_equal(e[1].why, MP_WHY_COPY_ASKED);
                    assert_string_equal(e[1].reason, "copy asked: copied into model 2");
                    assert_int_equal(copy_events(tr) - ev0, 2 * 5);
                } else {
                    for (int j = 0; j < 4; j++) {
                        assert_true(e[j].bound);
                        assert_int_equal(e[j].copies, 0);
                    }
                    assert_int_equal(copy_events(tr) - ev0, 0);
                    /* model 2 reads b where the caller keeps it */
                    assert_ptr_equal(mp_session_input(mp_pipeline_session(p, 1), 1)->data, b);
                }
                /* the chain's trace: its inputs are x and model 2's b */
                mp_trace *chain = NULL;
                assert_int_equal(mp_pipeline_close(p, &chain, &err), MP_OK);
                const mp_trace_meta *m = mp_trace_get_meta(chain);
                assert_int_equal(m->n_inputs, 2);
                assert_string_equal(m->tensors[m->inputs[0]].name, "x");
                assert_string_equal(m->tensors[m->inputs[1]].name, "b");
                assert_true(m->inputs[1] >= m->models[1].first_tensor);
                mp_trace_destroy(chain);
                mp_pipeline_free(p);
                mp_trace_destroy(tr);
            }
}

/* Under bind, a chain input of a later model falls back as model 1's do: a misaligned buffer
 * or one without the slack is copied in (one copy per run, with its reason); with room it is
 * bound again. A new shape of it (on its model's session) is taken at the next run. */
static void test_chain_input_fallbacks(void **state)
{
    (void)state;
    char paths[2][512];
    write_plus_mul(paths);
    for (int share = 0; share <= 1; share++) {
        mp_error err = {0};
        mp_pipe_options o = {.threads = 1, .io = MP_PIPE_BIND, .share_arena = share};
        mp_pipeline *p = open_plus_mul(paths, &o);
        size_t cap = 192;
        char *raw = aligned_alloc(64, cap);
        float x[8 + MP_INPUT_SLACK / sizeof(float)], b[8], res[8];
        plus_mul_values(x, b);
        float *bm = (float *)(raw + 1); /* one byte off */
        memcpy(bm, b, sizeof b);
        assert_int_equal(mp_pipeline_set_input(p, 0, x, sizeof x, &err), MP_OK);
        assert_int_equal(mp_pipeline_set_input(p, 1, bm, cap - 1, &err), MP_OK);
        assert_int_equal(mp_pipeline_set_output(p, 0, res, sizeof res, &err), MP_OK);
        for (int r = 0; r < 3; r++)
            if (mp_pipeline_run(p, &err) != MP_OK)
                fail_msg("%s", err.msg);
        for (int j = 0; j < 8; j++)
            assert_true(res[j] == (x[j] + 1) * b[j]);
        const mp_pipe_edge *e = mp_pipeline_edges(p);
        assert_true(e[0].bound);
        assert_false(e[1].bound);
        assert_int_equal(e[1].why, MP_WHY_ALIGN);
        assert_non_null(strstr(e[1].reason, "not aligned to 4 bytes"));
        assert_int_equal(e[1].copies, 3);
        assert_int_equal(e[1].copy_bytes, 3 * 32);
        assert_true(e[2].bound && e[3].bound);
        /* aligned, without the slack */
        float *ba = (float *)(raw + 64);
        memcpy(ba, b, sizeof b);
        assert_int_equal(mp_pipeline_set_input(p, 1, ba, sizeof b, &err), MP_OK);
        assert_int_equal(mp_pipeline_run(p, &err), MP_OK);
        assert_int_equal(e[1].why, MP_WHY_SLACK);
        assert_int_equal(e[1].copies, 4);
        /* with room: bound, no copy */
        assert_int_equal(mp_pipeline_set_input(p, 1, ba, cap - 64, &err), MP_OK);
        memset(res, 0, sizeof res);
        assert_int_equal(mp_pipeline_run(p, &err), MP_OK);
        assert_true(e[1].bound);
        assert_int_equal(e[1].copies, 4);
        for (int j = 0; j < 8; j++)
            assert_true(res[j] == (x[j] + 1) * b[j]);
        /* b becomes [1,1] (broadcast by MUL): p = (x + 1) * 3 */
        int32_t one[2] = {1, 1};
        assert_int_equal(mp_session_set_input_shape(mp_pipeline_session(p, 1), 1, 2, one, &err),
                         MP_OK);
        ba[0] = 3;
        assert_int_equal(mp_pipeline_set_input(p, 1, ba, cap - 64, &err), MP_OK);
        memset(res, 0, sizeof res);
        if (mp_pipeline_run(p, &err) != MP_OK)
            fail_msg("%s", err.msg);
        for (int j = 0; j < 8; j++)
            assert_true(res[j] == (x[j] + 1) * 3);
        assert_true(e[1].bound);
        mp_pipeline_free(p);
        free(raw);
    }
}

/* mp_pipeline_connect_caller: model 2's a, fed by model 1's y by position, made a chain
 * input (a decoder whose first input is the caller's); model 1's y then feeds nothing. And
 * what is refused. */
static void test_chain_input_connect_caller(void **state)
{
    (void)state;
    char paths[2][512];
    write_plus_mul(paths);
    for (int io = MP_PIPE_COPY; io <= MP_PIPE_BIND; io++) {
        mp_error err = {0};
        mp_pipe_options o = {.threads = 1, .io = (mp_pipe_io)io, .share_arena = true};
        mp_pipeline *p = open_plus_mul(paths, &o);
        assert_int_equal(mp_pipeline_connect_caller(p, 1, "a", &err), MP_OK);
        assert_int_equal(mp_pipeline_connect_caller(p, 0, "x", &err), MP_OK); /* already */
        float x[8 + MP_INPUT_SLACK / sizeof(float)], a[8 + MP_INPUT_SLACK / sizeof(float)],
            b[8 + MP_INPUT_SLACK / sizeof(float)], res[8];
        plus_mul_values(x, b);
        for (int j = 0; j < 8; j++)
            a[j] = (float)(j * j) / 4;
        assert_int_equal(mp_pipeline_set_input(p, 0, x, sizeof x, &err), MP_OK);
        assert_int_equal(mp_pipeline_input_count(p), 3);
        assert_int_equal(mp_pipeline_input_index(p, 1, 0), 1);
        assert_int_equal(mp_pipeline_input_index(p, 1, 1), 2);
        assert_int_equal(mp_pipeline_set_input(p, 1, a, sizeof a, &err), MP_OK);
        assert_int_equal(mp_pipeline_set_input(p, 2, b, sizeof b, &err), MP_OK);
        assert_int_equal(mp_pipeline_set_output(p, 0, res, sizeof res, &err), MP_OK);
        for (int r = 0; r < 2; r++) {
            if (mp_pipeline_run(p, &err) != MP_OK)
                fail_msg("%s", err.msg);
            for (int j = 0; j < 8; j++)
                assert_true(res[j] == a[j] * b[j]);
        }
        /* edges: the three chain inputs and the output; no model-to-model edge */
        assert_int_equal(mp_pipeline_edge_count(p), 4);
        const mp_pipe_edge *e = mp_pipeline_edges(p);
        for (int j = 0; j < 3; j++)
            assert_int_equal(e[j].from_model, -1);
        assert_int_equal(e[3].to_model, -1);
        /* under copy: the three inputs in and p out, per run */
        uint64_t copies = 0;
        for (int j = 0; j < 4; j++)
            copies += e[j].copies;
        assert_int_equal(copies, io == MP_PIPE_COPY ? 2 * 4 : 0);
        /* connected already */
        assert_int_equal(mp_pipeline_connect_caller(p, 1, "b", &err), MP_ERR_ARG);
        assert_non_null(strstr(err.msg, "before the first prepare or set_input"));
        assert_int_equal(mp_pipeline_set_input(p, 3, b, sizeof b, &err), MP_ERR_ARG);
        assert_string_equal(err.msg, "no chain input 3 (the chain has 3)");
        mp_pipeline_free(p);
    }
    mp_error err = {0};
    mp_pipe_options o = {.threads = 1};
    mp_pipeline *p = open_plus_mul(paths, &o);
    assert_int_equal(mp_pipeline_connect_caller(p, 2, "a", &err), MP_ERR_ARG);
    assert_string_equal(err.msg, "no model 3 (models 1..2)");
    assert_int_equal(mp_pipeline_connect_caller(p, 1, "zz", &err), MP_ERR_ARG);
    assert_non_null(strstr(err.msg, "has no input 'zz'"));
    /* an input both connected and the caller's, either way round */
    assert_int_equal(mp_pipeline_connect(p, 0, "y", 1, "a", &err), MP_OK);
    assert_int_equal(mp_pipeline_connect_caller(p, 1, "a", &err), MP_ERR_ARG);
    assert_string_equal(err.msg, "model 2 input 'a' is fed by model 1 output 'y'; it cannot "
                                 "also be a chain input");
    assert_int_equal(mp_pipeline_connect_caller(p, 1, "1", &err), MP_OK);
    assert_int_equal(mp_pipeline_connect(p, 0, "0", 1, "b", &err), MP_ERR_ARG);
    assert_string_equal(err.msg, "model 2 input 'b' is a chain input (fed by the caller); it "
                                 "cannot also be fed by model 1");
    /* a chain input without a buffer */
    float x[8 + MP_INPUT_SLACK / sizeof(float)];
    memset(x, 0, sizeof x);
    assert_int_equal(mp_pipeline_set_input(p, 0, x, sizeof x, &err), MP_OK);
    assert_int_equal(mp_pipeline_run(p, &err), MP_ERR_ARG);
    assert_non_null(strstr(err.msg, "chain input 1 (model 2 input 'b') has no buffer"));
    mp_pipeline_free(p);
}

/* A model x -> y = x + 1, z = y * x with outputs (y, z), split before its MUL: part 2 needs
 * x (part 1's input, passed through as its output) and y (part 1's output, which part 2 also
 * passes through as the model's output y). Run as a chain, it gives y = x + 1 and
 * z = (x + 1) x in every memory mode, I/O mode and with the shared arena. */
static void test_split_needs_earlier_tensors(void **state)
{
    (void)state;
    float ones[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    int32_t dims[2] = {1, 8};
    mp_tfw *w = mp_tfw_create();
    int x = f32_tensor(w, "x", false);
    int one = mp_tfw_tensor(w, "one", MP_DT_FLOAT32, 2, dims, mp_tfw_buffer(w, ones, sizeof ones),
                            NULL);
    int y = f32_tensor(w, "y", false), z = f32_tensor(w, "z", false);
    mp_tfw_op(w, MP_OP_ADD, 2, (int32_t[]){x, one}, 1, &y, NULL);
    mp_tfw_op(w, MP_OP_MUL, 2, (int32_t[]){y, x}, 1, &z, NULL);
    mp_tfw_io(w, 1, &x, 2, (int32_t[]){y, z});
    char whole_path[512], paths[2][512];
    finish_model(w, "xyz.tflite", whole_path);
    int32_t cut = 1;
    split_to_files(whole_path, &cut, 1, "xyz", paths);
    mp_error err = {0};
    mp_model *m1 = NULL, *m2 = NULL;
    assert_int_equal(mp_model_open(paths[0], &m1, &err), MP_OK);
    assert_int_equal(mp_model_open(paths[1], &m2, &err), MP_OK);
    /* part 1: x -> (x, y); part 2: (x, y) -> (y, z) */
    assert_int_equal(m1->n_outputs, 2);
    assert_int_equal(m1->outputs[0], m1->inputs[0]);
    assert_int_equal(m2->n_inputs, 2);
    assert_int_equal(m2->n_outputs, 2);
    assert_string_equal(m2->tensors[m2->outputs[0]].name, "y");
    assert_int_equal(m2->outputs[0], m2->inputs[1]);
    mp_model_free(m1);
    mp_model_free(m2);
    float in[8 + MP_INPUT_SLACK / sizeof(float)];
    for (int i = 0; i < 8; i++)
        in[i] = (float)i / 2 - 2;
    const char *models[2] = {paths[0], paths[1]};
    for (int mode = MP_MEMORY_AUTO; mode <= MP_MEMORY_DYNAMIC; mode++)
        for (int io = MP_PIPE_COPY; io <= MP_PIPE_BIND; io++)
            for (int share = 0; share <= 1; share++) {
                mp_pipe_options o = {.threads = 1, .mode = (mp_memory_mode)mode,
                                     .io = (mp_pipe_io)io, .share_arena = share};
                mp_pipeline *p = NULL;
                assert_int_equal(mp_pipeline_create(&o, 2, models, &p, &err), MP_OK);
                assert_int_equal(mp_pipeline_set_input(p, 0, in, sizeof in, &err), MP_OK);
                assert_int_equal(mp_pipeline_input_count(p), 1);
                for (int r = 0; r < 2; r++) {
                    if (mp_pipeline_run(p, &err) != MP_OK)
                        fail_msg("%s", err.msg);
                    const float *ry = mp_pipeline_output(p, 0), *rz = mp_pipeline_output(p, 1);
                    for (int i = 0; i < 8; i++) {
                        assert_true(ry[i] == in[i] + 1);
                        assert_true(rz[i] == (in[i] + 1) * in[i]);
                    }
                }
                /* under bind the passed-through tensors copy once each, and say why */
                const mp_pipe_edge *e = mp_pipeline_edges(p);
                assert_int_equal(mp_pipeline_edge_count(p), 5);
                if (io == MP_PIPE_BIND) {
                    assert_int_equal(e[1].why, MP_WHY_PASSTHROUGH); /* 1.x -> 2.x */
                    assert_true(e[2].bound);                        /* 1.y -> 2.y */
                    assert_int_equal(e[3].why, MP_WHY_PASSTHROUGH); /* 2.y -> caller */
                    assert_true(e[4].bound);                        /* 2.z -> caller */
                }
                mp_pipeline_free(p);
            }
}

static int setup(void **state)
{
    (void)state;
    return mp_test_tmpdir_make("test_pipeline");
}

static int teardown(void **state)
{
    (void)state;
    return mp_test_tmpdir_remove();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mobilenet_v2_two_and_three),
        cmocka_unit_test(test_residual_cut),
        cmocka_unit_test(test_shared_models),
        cmocka_unit_test(test_unbindable_edges),
        cmocka_unit_test(test_shape_propagates),
        cmocka_unit_test(test_fan_out_split),
        cmocka_unit_test(test_fan_out_by_hand),
        cmocka_unit_test(test_fan_out_one_reader_copies),
        cmocka_unit_test(test_fan_out_refusals),
        cmocka_unit_test(test_chain_input_by_hand),
        cmocka_unit_test(test_chain_input_fallbacks),
        cmocka_unit_test(test_chain_input_connect_caller),
        cmocka_unit_test(test_split_needs_earlier_tensors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
