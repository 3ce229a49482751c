/* Private state of the XNNPACK peer, shared by xnnpack_runtime.c (life cycle, runs, memory
 * report) and xnnpack_build.c (our graph -> an XNNPACK subgraph). */
#ifndef MP_PEERS_XNNPACK_INTERNAL_H
#define MP_PEERS_XNNPACK_INTERNAL_H

#include <pthreadpool.h>
#include <xnnpack.h>

#include "peers/xnn_capture.h"
#include "peers/xnnpack_runtime.h"

typedef struct peer_io {
    int32_t tensor;     /* model tensor index */
    uint32_t id;        /* XNNPACK external value id */
    size_t bytes;       /* the tensor's size */
    void *buf;          /* bytes + XNN_EXTRA_BYTES, 64-aligned, owned by the peer */
} peer_io;

struct mp_xnn_peer {
    mp_xc_capture cap;             /* first: its live-list sentinel must not move */
    pthreadpool_t pool;
    bool pool_owned; /* created here, not the caller's opt.threadpool */
    xnn_runtime_t rt;
    int n_in, n_out;
    peer_io *in, *out;
    /* static data the peer made (folded values, zero biases): freed at destroy */
    void **copies;
    int n_copies, cap_copies;
    uint64_t static_copy_bytes;
    /* figures of the built subgraph */
    uint64_t internal_values;
    uint64_t internal_sum16;    /* internal values' sizes rounded up to 16, summed */
    uint64_t internal_largest;  /* the largest internal value, rounded up to 16 */
    uint64_t xnn_nodes;
    uint64_t subgraph_bytes;
    /* the workspace block, by its sequence number in the capture (0 = not found) */
    uint64_t workspace_seq;
    bool workspace_found;
    uint64_t runs, run_allocations;
};

/* Define every value and node of the subgraph from the session's graph and resolved shapes
 * (called inside the capture's build window). Fills p->in / p->out (ids, sizes; no buffers)
 * and the figures above. Errors name the model and operator. */
mp_status mp_xnn_peer_build(mp_xnn_peer *p, const mp_session *s, xnn_subgraph_t *sg_out,
                            mp_error *err);

#endif
