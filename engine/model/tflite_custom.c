/* The custom options of the custom operators memprof runs, read at load (TensorFlow Lite
 * reads them in its kernel's Init), one reader per operator behind mp_tfl_read_custom_options:
 * TFLite_Detection_PostProcess's FlexBuffer map of counts, thresholds and box scales. A
 * missing required key or a value out of range is MP_ERR_FORMAT naming the operator and the
 * key. */
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
    mp_flex_reader fx;
    mp_flex_ref map;
} dp_ctx;

static mp_status dp_fail(dp_ctx *c, const char *key, const char *what)
{
    return mp_tfl_fail(c->r, MP_ERR_FORMAT, "operator %d (%s): custom option '%s' %s", c->i,
                       mp_op_name(MP_OP_DETECTION_POSTPROCESS), key, what);
}

static mp_status dp_flex_fault(dp_ctx *c, const char *key)
{
    return mp_tfl_fail(c->r, MP_ERR_FORMAT, "operator %d (%s): custom option '%s': %s", c->i,
                       mp_op_name(MP_OP_DETECTION_POSTPROCESS), key, c->fx.msg);
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

static mp_status read_detection_options(rd *r, int32_t i, const mp_op_info *op,
                                        mp_detection_options *o)
{
    dp_ctx c = {.r = r, .i = i};
    mp_flex_init(&c.fx, op->custom_options, op->custom_options_size);
    if (!op->custom_options || op->custom_options_size == 0)
        return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s) has no custom options", i,
                           mp_op_name(MP_OP_DETECTION_POSTPROCESS));
    if (!mp_flex_root(&c.fx, &c.map) || c.map.type != MP_FLEX_MAP) {
        char tb[24];
        return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): custom options are not a FlexBuffer map: %s", i,
                           mp_op_name(MP_OP_DETECTION_POSTPROCESS),
                           c.fx.msg[0] ? c.fx.msg : mp_flex_type_name(c.map.type, tb, sizeof tb));
    }
    mp_flex_ref v;
    bool found;
    TRY(dp_count(&c, "max_detections", 0, &o->max_detections));
    TRY(dp_count(&c, "max_classes_per_detection", 0, &o->max_classes_per_detection));
    TRY(dp_count(&c, "detections_per_class", DETECTIONS_PER_CLASS_DEFAULT, &o->detections_per_class));
    TRY(dp_count(&c, "num_classes", 0, &o->num_classes));
    TRY(dp_get(&c, "use_regular_nms", false, &v, &found));
    o->use_regular_nms = false;
    if (found && !mp_flex_bool(&c.fx, &v, &o->use_regular_nms))
        return dp_flex_fault(&c, "use_regular_nms");
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

mp_status mp_tfl_read_custom_options(rd *r, int32_t i, mp_op_info *op)
{
    switch (op->opcode) {
    case MP_OP_DETECTION_POSTPROCESS:
        return read_detection_options(r, i, op, &op->opt.detection);

    case MP_OP_NUMERIC_VERIFY: /* placeholder: options not read yet */
        return MP_OK;

    case MP_OP_AUDIO_SPECTROGRAM: /* placeholder: options not read yet */
        return MP_OK;

    case MP_OP_MFCC: /* placeholder: options not read yet */
        return MP_OK;

    case MP_OP_TRANSPOSE_CONV_BIAS: /* tflite_custom_mediapipe.c */
        return mp_tfl_read_tconv_bias_options(r, i, op);

    case MP_OP_MAX_POOL_ARGMAX:
    case MP_OP_MAX_UNPOOL:
        return mp_tfl_read_mediapipe_pool_options(r, i, op);

    default:
        return MP_OK;
    }
}
