/* A peer runtime: XNNPACK's own subgraph runtime, built from our engine's graph, so that its
 * memory and latency can be set beside ours on the same model and the same input shapes.
 *
 *   mp_session (loaded, prepared) -> mp_xnn_peer_create -> ([set_input] run [get_output])*
 *   -> mp_xnn_peer_destroy, then the session may go.
 *
 * Building: one XNNPACK value per tensor the peer needs: external values for the model's
 * inputs and outputs (in buffers the peer owns, XNNPACK's "caller buffers"), static values
 * for weights and other constants (the model's data used in place; values the engine folded
 * at prepare, such as shape arithmetic, are copied once by the peer), internal values for
 * the rest (XNNPACK's workspace). One xnn_define_* node per operator; shapes are the
 * session's resolved shapes at the time of the call. An operator, dtype, fused activation or
 * option XNNPACK's subgraph API cannot express is refused with MP_ERR_UNSUPPORTED and
 * "<model>: XNNPACK's subgraph runtime has no equivalent of operator 12 (TANH)..."
 *
 * Operators (float32): CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED (default weights
 * format), ADD, SUB, MUL, DIV (fused RELU, RELU6, RELU_N1_TO_1 as output bounds),
 * AVERAGE_POOL_2D, MAX_POOL_2D, RELU, RELU6, RELU_N1_TO_1, LOGISTIC, SOFTMAX (beta 1),
 * RESHAPE, SQUEEZE, EXPAND_DIMS (static reshape), PAD (constant paddings), MEAN over height
 * and width of a 4D tensor (global average pooling), RESIZE_BILINEAR. Quantized (int8, uint8
 * activations per tensor; int8 filters per tensor or per channel): most of the same, as
 * xnnpack_build.c lists, and QUANTIZE / DEQUANTIZE. Not in this XNNPACK (Debian's 2022
 * build): CONCATENATION, TRANSPOSE, TANH, SLICE, hybrid models, per-channel quantized
 * FULLY_CONNECTED, quantized average pooling over part of the map. Operators the engine
 * folds at prepare are not run by the peer either.
 *
 * Memory: every XNNPACK allocation the peer causes (building, creating, setting up, running,
 * deleting) goes, through mp_mem_xnn_redirect (engine/memory/mem.h), to the peer's own
 * capture, never to the engine's accounting. How the workspace is told apart: see
 * mp_xnn_peer_memory.workspace_bytes.
 *
 * Not thread-safe (the allocator hook is process-global): one peer or session call at a
 * time. The session must outlive the peer and keep its shapes while the peer lives. */
#ifndef MP_PEERS_XNNPACK_RUNTIME_H
#define MP_PEERS_XNNPACK_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/session.h"

typedef struct mp_xnn_peer mp_xnn_peer;

typedef struct mp_xnn_peer_options {
    int threads; /* 1 (or 0) = no thread pool, as mp_session_options.threads */
    void *threadpool; /* a pthreadpool_t to share (not owned), as mp_session_options */
} mp_xnn_peer_options;

/* What the peer's XNNPACK allocations are, after creation and setup. Bytes are what XNNPACK
 * asked for (no allocator overhead). */
typedef struct mp_xnn_peer_memory {
    /* The runtime's workspace: the one buffer holding every internal value. Identified as
     * the last aligned block xnn_create_runtime_v2 allocates that is still alive once the
     * subgraph is deleted (this XNNPACK plans the values, allocates the workspace and then
     * only frees its planning tables), and checked against what it must hold: at least the
     * largest internal value, at most every internal value side by side, each rounded to 16
     * bytes, plus XNN_EXTRA_BYTES (workspace_upper_bound). A graph without internal values
     * gets no workspace (0 bytes). */
    uint64_t workspace_bytes;
    bool workspace_found;          /* identified and within its bound */
    uint64_t workspace_upper_bound;
    uint64_t internal_values;      /* internal values defined (tensors + helper values) */
    /* Other blocks alive after setup, by kind. */
    uint64_t operator_bytes, operator_count; /* xnn_operator objects (size measured once) */
    uint64_t weights_bytes, weights_count;   /* other aligned blocks made at creation: packed
                                                weights, zero buffers */
    uint64_t tables_bytes, tables_count;     /* plain blocks made at creation: the runtime,
                                                its operator and blob tables */
    uint64_t setup_bytes, setup_count;       /* made by xnn_setup_runtime: indirection
                                                buffers and the like */
    uint64_t other_bytes;                    /* everything alive but the workspace */
    uint64_t subgraph_bytes;                 /* the subgraph while defined (freed after create) */
    uint64_t live_bytes, live_count;         /* all blocks alive now */
    uint64_t peak_bytes;                     /* highest live total since the peer began */
    uint64_t n_alloc, n_free, n_realloc;
    uint64_t bytes_allocated, bytes_freed;
    uint64_t run_allocations;                /* blocks allocated while running (expect 0) */
    uint64_t runs;
    /* Outside XNNPACK: the model's inputs and outputs in the peer's buffers (what XNNPACK
     * leaves to its caller), and the peer's copies of folded constants and zero biases. */
    uint64_t external_bytes;
    uint64_t static_copy_bytes;
    uint64_t xnn_nodes;                      /* nodes defined */
} mp_xnn_peer_memory;

/* Build the subgraph from a loaded and prepared session and create, then set up, XNNPACK's
 * runtime. opt may be NULL (1 thread). */
mp_status mp_xnn_peer_create(const mp_session *s, const mp_xnn_peer_options *opt,
                             mp_xnn_peer **out, mp_error *err);
/* Delete the runtime and everything else the peer holds. When final is non-NULL it receives
 * the capture's totals after every XNNPACK block was freed (live_bytes 0 unless leaked). */
void mp_xnn_peer_destroy(mp_xnn_peer *p, mp_xnn_peer_memory *final);

int mp_xnn_peer_input_count(const mp_xnn_peer *p);
int mp_xnn_peer_output_count(const mp_xnn_peer *p);
/* Bytes of input / output i (the session's sizes when the peer was made). */
size_t mp_xnn_peer_input_bytes(const mp_xnn_peer *p, int i);
size_t mp_xnn_peer_output_bytes(const mp_xnn_peer *p, int i);

/* Copy data into input i's buffer (bytes must equal its size). */
mp_status mp_xnn_peer_set_input(mp_xnn_peer *p, int i, const void *data, size_t bytes,
                                mp_error *err);
/* Run the runtime once (xnn_invoke_runtime; external values were set up at creation, in
 * buffers that never move). */
mp_status mp_xnn_peer_run(mp_xnn_peer *p, mp_error *err);
/* Output i of the last run: copy (bytes must equal its size), or a view. */
mp_status mp_xnn_peer_get_output(const mp_xnn_peer *p, int i, void *dst, size_t bytes,
                                 mp_error *err);
const float *mp_xnn_peer_output(const mp_xnn_peer *p, int i);

void mp_xnn_peer_memory_info(const mp_xnn_peer *p, mp_xnn_peer_memory *out);

#endif
