/* The engine's limits: the largest models memprof reads and plans, in one place.
 *
 * The model reader (engine/model/tflite_reader.c) refuses a model beyond any of them with
 * MP_ERR_FORMAT (memprof exits 4) and one line naming the limit. They are far above every
 * real model (the largest shared model has about a thousand operators), and low enough
 * that every step after reading stays fast: planning is O(n log n) in the tensors for
 * graphs whose tensors are alive a few at a time (scripts/bench_plan.sh --models plans a
 * chain of 100000 operators in well under a second per planner). */
#ifndef MP_ENGINE_LIMITS_H
#define MP_ENGINE_LIMITS_H

/* Operators in the model's subgraph. */
#define MP_MAX_OPS 500000
/* Tensors in the model's subgraph (constants included). */
#define MP_MAX_TENSORS 1000000
/* Bytes of one tensor as its declared shape gives them (elements times the element size):
 * 4 GiB. */
#define MP_MAX_TENSOR_BYTES (1ull << 32)

#endif
