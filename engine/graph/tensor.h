/* Runtime tensors: the current shape and storage of every tensor of a session.
 * The model's mp_tensor_info is the file's view; mp_tensor is what kernels read and write
 * (its shape changes when an input shape changes; its data moves when memory is planned). */
#ifndef MP_TENSOR_H
#define MP_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/model/model.h"

typedef struct mp_tensor {
    int32_t index;
    const mp_tensor_info *info; /* name, signature, quantization, constant data */
    mp_dtype dtype;
    int32_t rank;
    int32_t dims[MP_MAX_RANK];
    size_t bytes;               /* elements x dtype size for the current shape */
    void *data;                 /* storage (constant: in the mapped file) */
    bool is_const;              /* data is the model's constant buffer (read-only) */
    bool value_known;           /* data holds the value already at prepare time
                                   (constants, and shape arithmetic computed early) */
    bool shape_known;           /* dims are valid for the current input shapes */
} mp_tensor;

/* Elements in the current shape (product of dims; 1 for rank 0). */
size_t mp_tensor_elements(const mp_tensor *t);
/* Set rank and dims; recompute bytes. Returns false on overflow or negative dims. */
bool mp_tensor_set_shape(mp_tensor *t, int32_t rank, const int32_t *dims);
/* True when both have the same rank and dims. */
bool mp_tensor_same_shape(const mp_tensor *a, const mp_tensor *b);
/* "[1,224,224,3]" into buf. */
const char *mp_shape_str(int32_t rank, const int32_t *dims, char *buf, size_t n);

#endif
