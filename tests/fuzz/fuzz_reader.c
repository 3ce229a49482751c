/* libFuzzer target for the .tflite reader and shape inference: any bytes must either be
 * refused with an error or produce a model whose every promise holds (indices in range,
 * constant data readable, names NUL-terminated; every subgraph's, and the subgraphs WHILE and IF
 * call exist); a model that loads then goes through the
 * session (shape inference, constant folding, operator creation, one run on zeroed inputs),
 * which must succeed or fail with a one-line error (a run's loops stop after 64 iterations in
 * all). A broken
 * promise traps, so the fuzzer
 * reports it as a crash.
 * Build and run with scripts/fuzz.sh. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "engine/model/model.h"
#include "engine/session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Keeps the walk from being optimised away. */
static volatile uint64_t g_sink;

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

static void walk(const mp_model *m)
{
    uint64_t sum = strlen(m->path) + strlen(m->description) + strlen(m->subgraph_name);
    CHECK(m->n_tensors >= 0 && m->n_ops >= 0);
    CHECK(m->const_bytes <= m->file_bytes);
    for (int32_t i = 0; i < m->n_tensors; i++) {
        const mp_tensor_info *t = &m->tensors[i];
        sum += strlen(t->name);
        CHECK(t->dtype >= 0 && t->dtype < MP_DT_COUNT);
        CHECK(t->rank >= 0 && t->rank <= MP_MAX_RANK);
        for (int32_t k = 0; k < t->rank; k++)
            CHECK(t->shape[k] >= 0 && (t->signature[k] == -1 || t->signature[k] == t->shape[k]));
        if (t->data) {
            /* Touch every constant byte: ASan reports data outside the model bytes. */
            const uint8_t *d = t->data;
            for (size_t k = 0; k < t->data_bytes; k++)
                sum += d[k];
            size_t n, es = mp_dtype_size(t->dtype);
            if (es) {
                CHECK(mp_shape_elements(t->rank, t->shape, &n) && n * es == t->data_bytes);
            }
        }
        for (int32_t k = 0; k < t->quant.count; k++) {
            float s;
            memcpy(&s, &t->quant.scale[k], sizeof s);
            sum += s > 0;
            if (t->quant.zero_point)
                sum += (uint64_t)t->quant.zero_point[k];
        }
        if (t->quant.count > 1)
            CHECK(t->quant.quantized_dimension >= 0 && t->quant.quantized_dimension < t->rank &&
                  t->shape[t->quant.quantized_dimension] == t->quant.count);
    }
    for (int32_t i = 0; i < m->n_ops; i++) {
        const mp_op_info *op = &m->ops[i];
        CHECK(mp_op_name(op->opcode) != NULL && op->opcode != MP_OP_CUSTOM);
        for (int32_t k = 0; k < op->n_inputs; k++)
            CHECK(op->inputs[k] >= -1 && op->inputs[k] < m->n_tensors);
        for (int32_t k = 0; k < op->n_outputs; k++)
            CHECK(op->outputs[k] >= 0 && op->outputs[k] < m->n_tensors);
        for (int32_t k = 0; k < op->n_intermediates; k++)
            CHECK(op->intermediates[k] >= 0 && op->intermediates[k] < m->n_tensors);
        CHECK(op->opt.n_new_shape >= 0 && op->opt.n_new_shape <= MP_MAX_RANK);
        CHECK(op->opt.n_squeeze_dims >= 0 && op->opt.n_squeeze_dims <= MP_MAX_RANK);
        if (op->custom_code)
            sum += strlen(op->custom_code);
    }
    for (int32_t k = 0; k < m->n_inputs; k++)
        CHECK(m->inputs[k] >= 0 && m->inputs[k] < m->n_tensors);
    for (int32_t k = 0; k < m->n_outputs; k++)
        CHECK(m->outputs[k] >= 0 && m->outputs[k] < m->n_tensors);
    g_sink += sum;
}

/* Shape inference and execution. Tensors are capped small (the cap is an ordinary, tested
 * refusal) so that a fuzzed shape cannot make the harness run out of memory, nor out of time:
 * the work of most operators grows with their tensors, and an int8 sequence LSTM over an
 * input of 1.3 MB (327,683 steps) ran 33 s in this instrumented build, past libFuzzer's
 * 25-second timeout (1.2 s in a Release build); 256 KiB bounds such a run to about 7 s. */
static void infer_and_run(const uint8_t *data, size_t size)
{
    mp_session_options so = {.threads = 1, .max_tensor_bytes = 256u << 10, .max_iterations = 64};
    mp_session *s = NULL;
    mp_error err;
    memset(&err, 0, sizeof err);
    CHECK(mp_session_create(&so, &s, &err) == MP_OK);
    mp_status st = mp_session_load_memory(s, data, size, "fuzz.tflite", &err);
    if (st == MP_OK)
        st = mp_session_prepare(s, &err);
    if (st == MP_OK)
        st = mp_session_run(s, &err);
    if (st != MP_OK)
        CHECK(err.msg[0] != '\0' && !strchr(err.msg, '\n'));
    mp_session_destroy(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mp_model *m = NULL;
    mp_error err;
    memset(&err, 0, sizeof err);
    mp_status st = mp_model_load_memory(data, size, "fuzz.tflite", &m, &err);
    if (st == MP_OK) {
        CHECK(m != NULL && m->n_subgraphs >= 1);
        for (int32_t k = 0; k < m->n_subgraphs; k++) {
            const mp_model *g = mp_model_subgraph(m, k);
            CHECK(g != NULL && (k == 0 || (g->n_subgraphs == 0 && !g->impl)));
            walk(g);
            for (int32_t i = 0; i < g->n_ops; i++) { /* calls verified: indices in range */
                const mp_op_info *op = &g->ops[i];
                if (mp_op_calls_subgraphs(op->opcode))
                    CHECK(mp_model_subgraph(m, op->opt.subgraph_a) &&
                          mp_model_subgraph(m, op->opt.subgraph_b));
                const mp_shlo_options *sh = op->opt.shlo; /* builtin_options_2: bounded */
                if (sh) {
                    CHECK(sh->a.n <= MP_SHLO_LIST && sh->b.n <= MP_SHLO_LIST && sh->c.n <= MP_SHLO_LIST &&
                          sh->d.n <= MP_SHLO_LIST && sh->e.n <= MP_SHLO_LIST);
                    if (op->opcode == MP_OP_STABLEHLO_SCATTER || op->opcode == MP_OP_STABLEHLO_REDUCE_WINDOW)
                        CHECK(mp_model_subgraph(m, sh->body) != NULL);
                    for (int32_t q = 0; q < sh->n_branches; q++)
                        CHECK(mp_model_subgraph(m, sh->branches[q]) != NULL);
                }
            }
        }
        mp_model_free(m);
        infer_and_run(data, size);
    } else {
        /* A refusal leaves no model behind and explains itself on one line. */
        CHECK(m == NULL && err.status == st && err.msg[0] != '\0' && !strchr(err.msg, '\n'));
    }
    return 0;
}
