/* `memprof inspect`'s report: a model's inputs, outputs, operators, tensors and subgraphs
 * (WHILE / IF), as text or JSON. The
 * command fills the plain description below from the model (reports never read models). */
#ifndef MP_MODEL_REPORT_H
#define MP_MODEL_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define MP_MODEL_REPORT_RANK 8

typedef struct mp_model_report_tensor {
    const char *name;
    const char *dtype;         /* its name ("f32", "i8", ...) */
    int32_t rank;
    int32_t shape[MP_MODEL_REPORT_RANK];
    bool has_signature;        /* signature: the shape with -1 for a free dimension */
    int32_t signature[MP_MODEL_REPORT_RANK];
    size_t bytes;              /* declared shape x element size (0 when not countable) */
    bool is_const;
    int32_t q_count;           /* scales: 0 not quantized, 1 per tensor, more per channel */
    double q_scale;            /* the one scale, when q_count is 1 */
    long long q_zero_point;    /* its zero point */
    int32_t q_dimension;       /* the quantized dimension, when per channel */
} mp_model_report_tensor;

typedef struct mp_model_report_op {
    const char *name;          /* the builtin operator's name */
    int32_t n_inputs, n_outputs;
    const int32_t *inputs, *outputs; /* tensor indices, -1 = omitted */
    bool supported;            /* memprof has a kernel for it */
    int32_t calls[2];          /* subgraphs it calls: WHILE cond, body; IF then, else;
                                  CALL_ONCE init, -1; -1 none */
    int32_t n_branches;        /* STABLEHLO_CASE: its branch subgraphs (calls unused) */
    const int32_t *branches;
} mp_model_report_op;

/* One subgraph of a model of several (the ones WHILE and IF call). */
typedef struct mp_model_report_subgraph {
    const char *name;          /* "" when unnamed */
    int32_t n_tensors, n_inputs, n_outputs, n_ops;
    const int32_t *inputs, *outputs; /* tensor indices within the subgraph */
    const mp_model_report_op *ops;
} mp_model_report_subgraph;

typedef struct mp_model_report {
    const char *path, *description;
    size_t file_bytes, const_bytes;
    size_t dense_bytes;        /* dense copies of sparse constants, held on the heap */
    size_t unpacked_bytes;     /* int4 constants unpacked to int8, held on the heap */
    unsigned version;          /* schema version */
    int32_t n_tensors, n_inputs, n_outputs, n_ops;
    const mp_model_report_tensor *tensors;
    const int32_t *inputs, *outputs; /* tensor indices */
    const mp_model_report_op *ops;
    int32_t n_subgraphs;       /* 1 for most models; subgraph 0 is the one described above */
    const mp_model_report_subgraph *subgraphs; /* n_subgraphs entries, 0 included */
} mp_model_report;

/* The report as `memprof inspect` prints it; with_tensors adds every tensor's line. */
void mp_report_model_text(FILE *f, const mp_model_report *m, bool with_tensors);
/* The same as JSON, format memprof-model (docs/json.md); with_tensors adds "tensors".
 * false when out of memory or the write failed. */
bool mp_report_model_json(FILE *f, const mp_model_report *m, bool with_tensors);

#endif
