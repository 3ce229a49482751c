/* The custom options of MediaPipe's segmentation operators (Convolution2DTransposeBias,
 * MaxPoolingWithArgmax2D, MaxUnpooling2D), read at load. They are not FlexBuffers: MediaPipe
 * reinterprets the bytes as TensorFlow Lite's C structs (builtin_op_data.h), so they are read
 * here field by field, 4-byte little-endian ints:
 *   TfLiteTransposeConvParams  padding, stride_width, stride_height (12 bytes; newer versions
 *                              append fields MediaPipe does not read)
 *   TfLitePoolParams           padding, stride_width, stride_height, filter_width,
 *                              filter_height, activation (24 bytes; then the computed padding,
 *                              which MediaPipe recomputes and so is not read)
 * TfLitePadding is 1 SAME, 2 VALID (0 unknown: refused); TfLiteFusedActivation 0 NONE,
 * 1 RELU, 2 RELU_N1_TO_1, 3 RELU6, 4 TANH, 5 SIGN_BIT, 6 SIGMOID (the same numbers as
 * mp_activation; the pools clamp to the range of the first four only, as MediaPipe does).
 * Short options, a bad enum, a non-positive stride or filter size: MP_ERR_FORMAT naming the
 * operator and the field. */
#include <stdint.h>
#include <stdio.h>

#include "engine/model/tflite_reader_internal.h"

/* The int32 fields of a TfLite*Params struct, in order. */
typedef struct mpp_fields {
    const char *strct;           /* the struct's name, for messages */
    int32_t count;               /* fields read */
    const char *const *names;
} mpp_fields;

static const char *const k_tconv_names[] = {"padding", "stride_width", "stride_height"};
static const char *const k_pool_names[] = {"padding", "stride_width", "stride_height",
                                           "filter_width", "filter_height", "activation"};

static mp_status mpp_fail(rd *r, int32_t i, const mp_op_info *op, const char *field, int32_t v,
                          const char *what)
{
    return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): custom option '%s' is %d, %s", i,
                       mp_tfl_op_label(op->opcode), field, v, what);
}

/* The first f->count int32 fields of the struct, checked (padding SAME or VALID, strides and
 * filter sizes >= 1, a pool's activation 0..6), into op->opt: padding, stride_w, stride_h, then
 * for a pool filter_w, filter_h and activation. */
static mp_status mpp_read(rd *r, int32_t i, mp_op_info *op, const mpp_fields *f)
{
    size_t need = (size_t)f->count * 4;
    if (!op->custom_options || op->custom_options_size == 0)
        return mp_tfl_fail(r, MP_ERR_FORMAT,
                           "operator %d (%s) has no custom options (%s: %zu bytes)", i,
                           mp_tfl_op_label(op->opcode), f->strct, need);
    if (op->custom_options_size < need) {
        size_t have = op->custom_options_size / 4;
        return mp_tfl_fail(r, MP_ERR_FORMAT,
                           "operator %d (%s): custom options are %zu bytes, %s needs %zu: "
                           "'%s' is missing",
                           i, mp_tfl_op_label(op->opcode), op->custom_options_size, f->strct,
                           need, f->names[have]);
    }
    int32_t v[6] = {0};
    for (int32_t k = 0; k < f->count; k++) {
        const uint8_t *p = op->custom_options + 4 * k;
        v[k] = (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                         (uint32_t)p[3] << 24);
    }
    if (v[0] != 1 && v[0] != 2)
        return mpp_fail(r, i, op, f->names[0], v[0], "not SAME (1) or VALID (2)");
    for (int32_t k = 1; k < f->count && k < 5; k++)
        if (v[k] < 1)
            return mpp_fail(r, i, op, f->names[k], v[k], "not positive");
    if (f->count > 5 && (v[5] < 0 || v[5] > 6))
        return mpp_fail(r, i, op, f->names[5], v[5], "not a fused activation (0 to 6)");
    op->opt.padding = v[0] == 1 ? MP_PAD_SAME : MP_PAD_VALID;
    op->opt.stride_w = v[1];
    op->opt.stride_h = v[2];
    if (f->count > 5) {
        op->opt.filter_w = v[3];
        op->opt.filter_h = v[4];
    }
    op->opt.activation = v[5]; /* MP_ACT_NONE for the transposed convolution: it has none */
    return MP_OK;
}

mp_status mp_tfl_read_tconv_bias_options(rd *r, int32_t i, mp_op_info *op)
{
    static const mpp_fields f = {"TfLiteTransposeConvParams", 3, k_tconv_names};
    return mpp_read(r, i, op, &f);
}

mp_status mp_tfl_read_mediapipe_pool_options(rd *r, int32_t i, mp_op_info *op)
{
    static const mpp_fields f = {"TfLitePoolParams", 6, k_pool_names};
    return mpp_read(r, i, op, &f);
}
