/* The custom options of the custom operators memprof runs, read at load (TensorFlow Lite
 * reads them in its kernel's Init), one reader per operator behind mp_tfl_read_custom_options:
 * TFLite_Detection_PostProcess's FlexBuffer map of counts, thresholds and box scales. A
 * missing required key or a value out of range is MP_ERR_FORMAT naming the operator and the
 * key. TensorFlow Lite's own custom operators AudioSpectrogram (window_size, stride,
 * magnitude_squared), Mfcc (frequency limits, filterbank and DCT counts, read as integers as
 * there) and NumericVerify (tolerance, log_if_failed) read theirs with the same helpers; an
 * absent boolean is false (flexbuffers' AsBool of null), every number is required. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/model/flexbuf.h"
#include "engine/model/tflite_reader_internal.h"

/* TensorFlow Lite's default detections_per_class (regular NMS). */
#define DETECTIONS_PER_CLASS_DEFAULT 100

typedef struct dp_ctx {
    rd *r;
    int32_t i;
    int32_t code; /* the operator's (messages) */
    mp_flex_reader fx;
    mp_flex_ref map;
} dp_ctx;

static mp_status dp_fail(dp_ctx *c, const char *key, const char *what)
{
    return mp_tfl_fail(c->r, MP_ERR_FORMAT, "operator %d (%s): custom option '%s' %s", c->i,
                       mp_op_name(c->code), key, what);
}

static mp_status dp_flex_fault(dp_ctx *c, const char *key)
{
    return mp_tfl_fail(c->r, MP_ERR_FORMAT, "operator %d (%s): custom option '%s': %s", c->i,
                       mp_op_name(c->code), key, c->fx.msg);
}

/* The value of `key`; *found false (and MP_OK) when absent and !required. */
static mp_status dp_get(dp_ctx *c, const char *key, bool required, mp_flex_ref *v, bool *found)
{
    if (!mp_flex_map_get(&c->fx, &c->map, key, v, found))
        return dp_flex_fault(c, key);
    if (*found && v->type == MP_FLEX_NULL)
        *found = false; /* flexbuffers' IsNull(): the default */
    if (!*found && required)
        return dp_fail(c, key, "is missing");
    return MP_OK;
}

/* A positive count (or the default when absent and def > 0). */
static mp_status dp_count(dp_ctx *c, const char *key, int32_t def, int32_t *out)
{
    mp_flex_ref v;
    bool found;
    int64_t x;
    mp_status st = dp_get(c, key, def <= 0, &v, &found);
    if (st != MP_OK)
        return st;
    if (!found) {
        *out = def;
        return MP_OK;
    }
    if (!mp_flex_int(&c->fx, &v, &x))
        return dp_flex_fault(c, key);
    if (x <= 0 || x > INT32_MAX) {
        char what[64];
        snprintf(what, sizeof what, "is %lld, not a positive count", (long long)x);
        return dp_fail(c, key, what);
    }
    *out = (int32_t)x;
    return MP_OK;
}

static mp_status dp_float(dp_ctx *c, const char *key, float *out)
{
    mp_flex_ref v;
    bool found;
    double d;
    mp_status st = dp_get(c, key, true, &v, &found);
    if (st != MP_OK)
        return st;
    if (!mp_flex_double(&c->fx, &v, &d))
        return dp_flex_fault(c, key);
    *out = (float)d;
    return MP_OK;
}

static mp_status dp_scale(dp_ctx *c, const char *key, float *out)
{
    mp_status st = dp_float(c, key, out);
    if (st == MP_OK && (*out == 0.0f || !isfinite(*out)))
        return dp_fail(c, key, *out == 0.0f ? "is zero (boxes are divided by it)" : "is not finite");
    return st;
}

/* An optional boolean: false when absent. */
static mp_status dp_bool(dp_ctx *c, const char *key, bool *out)
{
    mp_flex_ref v;
    bool found;
    mp_status st = dp_get(c, key, false, &v, &found);
    *out = false;
    if (st == MP_OK && found && !mp_flex_bool(&c->fx, &v, out))
        return dp_flex_fault(c, key);
    return st;
}

/* A required integer in lo..hi (flexbuffers' AsInt64: a float truncated). */
static mp_status dp_int_in(dp_ctx *c, const char *key, int64_t lo, int64_t hi, int64_t *out)
{
    mp_flex_ref v;
    bool found;
    mp_status st = dp_get(c, key, true, &v, &found);
    if (st != MP_OK)
        return st;
    if (!mp_flex_int(&c->fx, &v, out))
        return dp_flex_fault(c, key);
    if (*out < lo || *out > hi) {
        char what[96];
        snprintf(what, sizeof what, "is %lld, outside %lld..%lld", (long long)*out,
                 (long long)lo, (long long)hi);
        return dp_fail(c, key, what);
    }
    return MP_OK;
}

/* Start reading operator i's options: its custom options must be a FlexBuffer map. */
static mp_status dp_open(dp_ctx *c, rd *r, int32_t i, const mp_op_info *op)
{
    *c = (dp_ctx){.r = r, .i = i, .code = op->opcode};
    mp_flex_init(&c->fx, op->custom_options, op->custom_options_size);
    if (!op->custom_options || op->custom_options_size == 0)
        return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s) has no custom options", i,
                           mp_op_name(c->code));
    if (!mp_flex_root(&c->fx, &c->map) || c->map.type != MP_FLEX_MAP) {
        char tb[24];
        return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): custom options are not a FlexBuffer map: %s", i,
                           mp_op_name(c->code),
                           c->fx.msg[0] ? c->fx.msg : mp_flex_type_name(c->map.type, tb, sizeof tb));
    }
    return MP_OK;
}

static mp_status read_detection_options(rd *r, int32_t i, const mp_op_info *op,
                                        mp_detection_options *o)
{
    dp_ctx c;
    TRY(dp_open(&c, r, i, op));
    TRY(dp_count(&c, "max_detections", 0, &o->max_detections));
    TRY(dp_count(&c, "max_classes_per_detection", 0, &o->max_classes_per_detection));
    TRY(dp_count(&c, "detections_per_class", DETECTIONS_PER_CLASS_DEFAULT, &o->detections_per_class));
    TRY(dp_count(&c, "num_classes", 0, &o->num_classes));
    TRY(dp_bool(&c, "use_regular_nms", &o->use_regular_nms));
    TRY(dp_float(&c, "nms_score_threshold", &o->score_threshold));
    if (isnan(o->score_threshold))
        return dp_fail(&c, "nms_score_threshold", "is not a number");
    TRY(dp_float(&c, "nms_iou_threshold", &o->iou_threshold));
    if (!(o->iou_threshold > 0.0f && o->iou_threshold <= 1.0f))
        return dp_fail(&c, "nms_iou_threshold", "is not in (0, 1]");
    TRY(dp_scale(&c, "y_scale", &o->y_scale));
    TRY(dp_scale(&c, "x_scale", &o->x_scale));
    TRY(dp_scale(&c, "h_scale", &o->h_scale));
    TRY(dp_scale(&c, "w_scale", &o->w_scale));
    return MP_OK;
}

/* AudioSpectrogram: a window of at least 2 samples and a stride of at least 1, as TensorFlow
 * Lite's Spectrogram::Initialize takes them. */
static mp_status read_spectrogram_options(rd *r, int32_t i, mp_op_info *op)
{
    dp_ctx c;
    int64_t v;
    TRY(dp_open(&c, r, i, op));
    TRY(dp_int_in(&c, "window_size", 2, INT32_MAX, &v));
    op->opt.spec_window = (int32_t)v;
    TRY(dp_int_in(&c, "stride", 1, INT32_MAX, &v));
    op->opt.spec_stride = (int32_t)v;
    return dp_bool(&c, "magnitude_squared", &op->opt.spec_magnitude_squared);
}

/* Mfcc: the limits and counts TensorFlow Lite's Mfcc::Initialize takes (0 <= lower < upper;
 * 1 <= dct_coefficient_count <= filterbank_channel_count); the sample rate is an input. */
static mp_status read_mfcc_options(rd *r, int32_t i, mp_op_info *op)
{
    dp_ctx c;
    int64_t lower, upper, channels, dct;
    TRY(dp_open(&c, r, i, op));
    TRY(dp_int_in(&c, "lower_frequency_limit", 0, INT32_MAX - 1, &lower));
    TRY(dp_int_in(&c, "upper_frequency_limit", lower + 1, INT32_MAX, &upper));
    TRY(dp_int_in(&c, "filterbank_channel_count", 1, INT32_MAX, &channels));
    TRY(dp_int_in(&c, "dct_coefficient_count", 1, channels, &dct));
    op->opt.mfcc_lower_hz = (float)lower;
    op->opt.mfcc_upper_hz = (float)upper;
    op->opt.mfcc_channels = (int32_t)channels;
    op->opt.mfcc_dct_count = (int32_t)dct;
    return MP_OK;
}

/* NumericVerify: any tolerance (TensorFlow Lite's AsFloat), log_if_failed. */
static mp_status read_numeric_verify_options(rd *r, int32_t i, mp_op_info *op)
{
    dp_ctx c;
    TRY(dp_open(&c, r, i, op));
    TRY(dp_float(&c, "tolerance", &op->opt.nv_tolerance));
    return dp_bool(&c, "log_if_failed", &op->opt.nv_log_if_failed);
}

mp_status mp_tfl_read_custom_options(rd *r, int32_t i, mp_op_info *op)
{
    switch (op->opcode) {
    case MP_OP_DETECTION_POSTPROCESS:
        return read_detection_options(r, i, op, &op->opt.detection);

    case MP_OP_NUMERIC_VERIFY:
        return read_numeric_verify_options(r, i, op);

    case MP_OP_AUDIO_SPECTROGRAM:
        return read_spectrogram_options(r, i, op);

    case MP_OP_MFCC:
        return read_mfcc_options(r, i, op);

    case MP_OP_TRANSPOSE_CONV_BIAS: /* tflite_custom_mediapipe.c */
        return mp_tfl_read_tconv_bias_options(r, i, op);

    case MP_OP_MAX_POOL_ARGMAX:
    case MP_OP_MAX_UNPOOL:
        return mp_tfl_read_mediapipe_pool_options(r, i, op);

    default:
        return MP_OK;
    }
}
