/* Runtime tensor helpers: element counts, shape updates, shape formatting. */
#include "engine/graph/tensor.h"

#include <stdio.h>
#include <string.h>

size_t mp_tensor_elements(const mp_tensor *t)
{
    size_t n = 1;
    for (int32_t i = 0; i < t->rank; i++)
        n *= (size_t)t->dims[i];
    return n;
}

bool mp_tensor_set_shape(mp_tensor *t, int32_t rank, const int32_t *dims)
{
    size_t n;
    if (rank < 0 || rank > MP_MAX_RANK || !mp_shape_elements(rank, dims, &n))
        return false;
    size_t es = mp_dtype_size(t->dtype);
    if (es && n > SIZE_MAX / es)
        return false;
    t->rank = rank;
    if (rank)
        memmove(t->dims, dims, sizeof(int32_t) * (size_t)rank);
    t->bytes = n * es;
    t->shape_known = true;
    return true;
}

bool mp_tensor_same_shape(const mp_tensor *a, const mp_tensor *b)
{
    return a->rank == b->rank && memcmp(a->dims, b->dims, sizeof(int32_t) * (size_t)a->rank) == 0;
}

const char *mp_shape_str(int32_t rank, const int32_t *dims, char *buf, size_t n)
{
    size_t k = 0;
    k += (size_t)snprintf(buf + k, n - k, "[");
    for (int32_t i = 0; i < rank && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, i ? ",%d" : "%d", dims[i]);
    if (k < n)
        snprintf(buf + k, n - k, "]");
    return buf;
}
