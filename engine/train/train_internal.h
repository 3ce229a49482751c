/* Private state of the training engine, shared by the files of engine/train only: the training
 * tensors (each with a category and a lifetime over the step's timeline), the nodes (one per
 * forward operator, with what its backward reads and writes), and the kernels' entry points. */
#ifndef MP_TRAIN_INTERNAL_H
#define MP_TRAIN_INTERNAL_H

#include <pthreadpool.h>

#include "engine/train/train.h"

#define TR_ALIGN 64

typedef struct tr_tensor {
    char *name;               /* owned */
    int32_t model_index;      /* the model's tensor, -1 for a derived tensor */
    mp_train_cat cat;
    bool is_const;            /* a non-trainable weight used in place from the model */
    bool persistent;          /* trainable, optimizer, kept gradients: allocated whole */
    int32_t rank, dims[MP_MAX_RANK];
    size_t n;                 /* floats (or raw elements for constant non-float tensors) */
    size_t bytes;
    float *data;
    const void *cdata;        /* constant data (model mapping) */
    int32_t first, last;      /* steps that use it (first -1: unused) */
    int32_t grad;             /* a model tensor's back-prop or gradient tensor (-1 none) */
    int32_t m, v;             /* a trainable tensor's optimizer variables (-1 none) */
} tr_tensor;

/* One forward operator. Tensor fields are training tensor indices, -1 = none. */
typedef struct tr_node {
    int32_t op;               /* model operator index */
    int32_t opcode;
    const mp_op_options *opt;
    int32_t x, x2, w, b, y;   /* inputs (x2: second operand of ADD/SUB/MUL), weights, output */
    int32_t dx, dx2, dy, dw, db;
    bool dx_acc, dx2_acc;     /* add into dx (another consumer wrote it first) */
    int32_t cols, colsb;      /* disposable: im2col in the forward, again in the backward */
    int32_t dcols, tmp;       /* disposable: the columns' gradient, a GEMM result to add */
    int32_t packf, packb;     /* disposable: XNNPACK's packed operands (forward, backward) */
    bool trainable;
    bool skip_bwd;            /* SOFTMAX fused into the CCE loss */
    int32_t fwd_step, bwd_step;
    float lo, hi;             /* fused activation's range */
    /* geometry */
    int32_t B, H, W, C, OH, OW, OC, kh, kw, sh, sw, dh, dw_, pt, pl, mult;
    size_t M, K, N;           /* GEMM view: rows, inputs, outputs */
    bool direct;              /* 1x1 stride-1 convolution: X itself is the GEMM input */
    int32_t pad_before[MP_MAX_RANK], pad_after[MP_MAX_RANK];
    int32_t rank;
    int32_t in_dims[MP_MAX_RANK], out_dims[MP_MAX_RANK];
    uint32_t axes_mask;       /* MEAN */
    size_t pack_fwd, pack_bwd;/* bytes of the pools */
} tr_node;

typedef struct tr_step {
    int32_t node;             /* -1: the loss */
    bool backward;
} tr_step;

struct mp_trainer {
    const mp_model *model;
    char *label;
    mp_train_options opt;
    mp_mem *mem;
    mp_trace *trace;
    pthreadpool_t pool;
    int32_t n_tensors, cap_tensors;
    tr_tensor *t;
    int32_t n_nodes;
    tr_node *nodes;
    int32_t first_trainable;  /* first trainable node */
    int32_t n_steps;
    tr_step *steps;
    int32_t loss_step;
    int32_t out;              /* model output tensor (training index) */
    int32_t logits;           /* CCE: the SOFTMAX's input; else the output */
    int32_t n_inputs;
    int32_t *inputs;          /* model input tensors */
    float **in_buf;           /* the caller's batch per input (io) */
    float *labels, *out_copy; /* io */
    size_t out_n;
    float *arena;             /* planned */
    uint64_t arena_bytes, lower_bound;
    int32_t lb_step;
    float *held[MP_TCAT_COUNT];
    int64_t adam_t;
    float *saved_w;           /* mp_trainer_perturb_last */
    int32_t saved_tensor;
    uint64_t step_no;
    const char *planner_name;
    uint64_t flops_fwd, flops_step;
};

/* Bump allocator over a pool tensor, for XNNPACK's allocations during one GEMM. */
typedef struct tr_gemm_pool {
    char *base;
    size_t size, used;
} tr_gemm_pool;

/* Bytes an XNNPACK fully connected operator of these sizes may request (operator, packed
 * weights, alignment), a safe bound for the pool. */
size_t mp_tr_gemm_pool_bytes(size_t in_ch, size_t out_ch);
/* C[M,N] (row stride ldc) = A[M,K] (stride lda) x B^T + bias, clamped to [lo, hi]; B is
 * [N,K] row-major, or [K,N] when b_kn. XNNPACK packs B into the pool. */
mp_status mp_tr_gemm(mp_trainer *t, float *pool, size_t pool_bytes, size_t M, size_t N, size_t K,
                  const float *A, size_t lda, const float *B, bool b_kn, const float *bias,
                  float *C, size_t ldc, float lo, float hi, mp_error *err);

/* dW[N,K] (row stride ldw) = dZ^T A, dZ [M,N] (stride ldz), A [M,K] (stride lda): a blocked
 * C product reading both in place, tasks on the thread pool (NULL: the caller's thread);
 * db[N] (when not NULL) = dZ's column sums, the bias gradient, made while dZ is in cache. */
void mp_tr_gemm_tn(pthreadpool_t pool, size_t M, size_t N, size_t K, const float *dz,
                   size_t ldz, const float *a, size_t lda, float *dw, size_t ldw, float *db);
/* Tests: cap the kernel mp_tr_gemm_tn picks (0 plain C, 1 AVX2, 2 AVX-512, the widest the
 * processor has at most); returns the previous cap. */
int mp_tr_gemm_tn_limit(int level);

/* Kernels (train_kernels.c): forward and backward of node n. */
mp_status mp_tr_forward(mp_trainer *t, tr_node *n, mp_error *err);
mp_status mp_tr_backward(mp_trainer *t, tr_node *n, mp_error *err);

/* Graph (train_graph.c). */
mp_status mp_tr_build(mp_trainer *t, mp_error *err);
int32_t mp_tr_add_tensor(mp_trainer *t, const char *name, mp_train_cat cat, int32_t rank,
                      const int32_t *dims, size_t n);
void mp_tr_use(mp_trainer *t, int32_t tensor, int32_t step);

/* Memory (train_memory.c). */
mp_status mp_tr_memory_prepare(mp_trainer *t, mp_error *err);
mp_status mp_tr_memory_step_begin(mp_trainer *t, int32_t step, mp_error *err);
void mp_tr_memory_step_end(mp_trainer *t, int32_t step);
void mp_tr_memory_release(mp_trainer *t);

static inline float *TD(mp_trainer *t, int32_t i)
{
    return i >= 0 ? t->t[i].data : NULL;
}

#endif
