/* A chain's trace (memprof pipeline) per model: each model's allocations, the peak of its own
 * heap blocks, its copies, and the peak across the chain; computed from the trace alone (its
 * meta.models table says which tensors, operators and blocks belong to which model). */
#ifndef MP_CHAIN_H
#define MP_CHAIN_H

#include <stdint.h>

#include "analyzers/source.h"
#include "trace/status.h"

typedef struct mp_chain_model {
    uint64_t n_alloc, alloc_bytes;   /* heap allocations of its blocks (const excluded) */
    uint64_t peak_bytes;             /* the most heap its own blocks held at once */
    uint64_t copies_in, copies_out;  /* copy events of its tensors */
    uint64_t copy_in_bytes, copy_out_bytes;
} mp_chain_model;

typedef struct mp_chain_figures {
    int32_t n_models;
    mp_chain_model *models;          /* n_models entries (malloc'd: mp_chain_free) */
    uint64_t peak_bytes;             /* the chain's heap peak (every model's blocks) */
    int32_t peak_model;              /* the model whose block made it, -1 = none */
    uint64_t runs;                   /* run phases of the first model */
    uint64_t unattributed;           /* heap blocks no model claims (0 in a chain's trace) */
} mp_chain_figures;

/* Per-model figures of src (a trace with meta.models; one model when it has none). */
mp_status mp_chain_analyze(mp_source *src, mp_chain_figures *out, mp_error *err);
void mp_chain_free(mp_chain_figures *f);

#endif
