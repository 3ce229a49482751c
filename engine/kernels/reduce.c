/* Kernel: MEAN over the axes given by a constant int32 (or int64) tensor, with keep_dims;
 * any input rank up to MP_MAX_RANK. Axes may be negative and may repeat; an empty axes
 * tensor copies the input.
 *
 * Plain C (XNNPACK has no general mean). Each output is a float32 sum taken in the input's
 * row-major order, then divided by the number of elements reduced: the order and rounding
 * of Arm NN's reference backend, which is the oracle. The shape is reduced to alternating
 * kept / reduced runs of dimensions first, so the common NHWC spatial mean (axes {1,2})
 * becomes [N kept][H*W reduced][C kept]: contiguous per-channel additions into the output
 * row, which the compiler vectorizes. */
#include "engine/kernels/kernel.h"

#include <math.h>
#include <string.h>

/* Mark the reduced dimensions of a rank-`rank` input from the axes tensor. */
static mp_status mean_axes(mp_node *n, const mp_tensor *axes, int32_t rank,
                           bool reduced[MP_MAX_RANK])
{
    memset(reduced, 0, sizeof(bool) * MP_MAX_RANK);
    size_t count = mp_tensor_elements(axes);
    for (size_t i = 0; i < count; i++) {
        int64_t ax = axes->dtype == MP_DT_INT32 ? ((const int32_t *)axes->data)[i]
                                                : ((const int64_t *)axes->data)[i];
        if (ax < -rank || ax >= rank) {
            char s[96];
            return mp_node_fail(n, MP_ERR_SHAPE, "axis %lld in '%s' is out of range for '%s' %s",
                                (long long)ax, axes->info->name, n->in[0]->info->name,
                                mp_shape_str(n->in[0]->rank, n->in[0]->dims, s, sizeof s));
        }
        reduced[ax < 0 ? ax + rank : ax] = true;
    }
    return MP_OK;
}

static mp_status mean_infer(mp_node *n)
{
    if (n->n_in != 2 || n->n_out != 1)
        return mp_node_fail(n, MP_ERR_FORMAT, "expects 2 inputs and 1 output, got %d and %d",
                            n->n_in, n->n_out);
    if (!n->in[0] || !n->in[1] || !n->out[0])
        return mp_node_fail(n, MP_ERR_FORMAT, "an input or the output is omitted (-1)");
    const mp_tensor *in = n->in[0], *axes = n->in[1];
    mp_tensor *out = n->out[0];
    mp_status dst = mp_node_check_f32_io(n);
    if (dst != MP_OK)
        return dst;
    if (axes->dtype != MP_DT_INT32 && axes->dtype != MP_DT_INT64)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "axes '%s' have dtype %s (expected i32)",
                            axes->info->name, mp_dtype_name(axes->dtype));
    if (axes->rank > 1) {
        char s[96];
        return mp_node_fail(n, MP_ERR_SHAPE, "axes '%s' must have rank 0 or 1, not %s",
                            axes->info->name, mp_shape_str(axes->rank, axes->dims, s, sizeof s));
    }
    if (!axes->value_known || !axes->data)
        return MP_ERR_DEFERRED;

    bool reduced[MP_MAX_RANK];
    mp_status st = mean_axes(n, axes, in->rank, reduced);
    if (st != MP_OK)
        return st;
    int32_t dims[MP_MAX_RANK], r = 0;
    for (int32_t i = 0; i < in->rank; i++) {
        if (!reduced[i])
            dims[r++] = in->dims[i];
        else if (n->opt->keep_dims)
            dims[r++] = 1;
    }
    if (!mp_tensor_set_shape(out, r, dims))
        return mp_node_fail(n, MP_ERR_SHAPE, "cannot set the shape of output '%s'",
                            out->info->name);
    return MP_OK;
}

static mp_status mean_prepare(mp_node *n)
{
    (void)n; /* nothing to create: run plans from the current shapes (a few integers) */
    return MP_OK;
}

static mp_status mean_run(mp_node *n)
{
    const mp_tensor *in = n->in[0], *axes = n->in[1];
    bool reduced[MP_MAX_RANK];
    mp_status st = mean_axes(n, axes, in->rank, reduced);
    if (st != MP_OK)
        return st;

    /* Merge the input dimensions into alternating kept / reduced runs (unit dimensions
     * dropped); count what is reduced into each output element. */
    size_t dims[MP_MAX_RANK];
    bool red[MP_MAX_RANK];
    int32_t r = 0;
    size_t count = 1, outputs = 1;
    for (int32_t i = 0; i < in->rank; i++) {
        size_t d = (size_t)in->dims[i];
        if (reduced[i])
            count *= d;
        else
            outputs *= d;
        if (d == 1)
            continue;
        if (r > 0 && red[r - 1] == reduced[i]) {
            dims[r - 1] *= d;
        } else {
            dims[r] = d;
            red[r] = reduced[i];
            r++;
        }
    }
    float *y = n->out[0]->data;
    if (outputs == 0)
        return MP_OK;
    if (count == 0) { /* mean of nothing */
        for (size_t i = 0; i < outputs; i++)
            y[i] = NAN;
        return MP_OK;
    }
    if (r == 0) { /* a single element */
        dims[0] = 1;
        red[0] = false;
        r = 1;
    }
    /* Output strides: kept runs are row-major in the output, reduced runs stride 0. */
    size_t so[MP_MAX_RANK], k = 1;
    for (int32_t i = r - 1; i >= 0; i--) {
        so[i] = red[i] ? 0 : k;
        if (!red[i])
            k *= dims[i];
    }

    memset(y, 0, outputs * sizeof(float));
    const float *x = n->in[0]->data;
    const int32_t last = r - 1;
    const size_t len = dims[last];
    const size_t rows = outputs * count / len;
    size_t idx[MP_MAX_RANK] = {0}, oy = 0;
    for (size_t row = 0; row < rows; row++, x += len) {
        if (red[last]) {
            float acc = y[oy];
            for (size_t i = 0; i < len; i++)
                acc += x[i];
            y[oy] = acc;
        } else {
            float *yr = y + oy;
            for (size_t i = 0; i < len; i++)
                yr[i] += x[i];
        }
        for (int32_t d = last - 1; d >= 0; d--) {
            oy += so[d];
            if (++idx[d] < dims[d])
                break;
            oy -= so[d] * dims[d];
            idx[d] = 0;
        }
    }
    const float div = (float)count;
    for (size_t i = 0; i < outputs; i++)
        y[i] /= div;
    return MP_OK;
}

static void mean_release(mp_node *n)
{
    n->state = NULL; /* no state */
}

const mp_kernel mp_kernels_reduce[] = {
    {.opcode = MP_OP_MEAN,
     .optional_inputs = 0,
     .min_inputs = 2,
     .max_inputs = 2,
     .n_outputs = 1,
     .infer = mean_infer,
     .prepare = mean_prepare,
     .run = mean_run,
     .release = mean_release},
    {.opcode = -1},
};
