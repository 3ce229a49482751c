/* A tiny FlexBuffers writer for tests (header only): one map of scalar entries, inline or
 * indirect, every value slot `w` bytes wide, as the custom options of TFLite_Detection_PostProcess
 * are; and those options from an mp_detection_options. Layout as engine/model/flexbuf.h reads
 * it: keys, indirect values, the keys vector, the map, then the root, its type and width. */
#ifndef MP_FLEX_BUILDER_H
#define MP_FLEX_BUILDER_H

#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "engine/model/flexbuf.h"
#include "engine/model/model.h"

typedef struct fxb_entry {
    const char *key;
    uint8_t type;      /* MP_FLEX_NULL, INT, UINT, FLOAT, BOOL, or INDIRECT_INT/UINT/FLOAT */
    int64_t i;         /* INT, UINT, BOOL */
    double d;          /* FLOAT */
    unsigned width;    /* indirect: bytes of the target (1, 2, 4, 8; floats 4 or 8) */
} fxb_entry;

static inline unsigned fxb_log2(unsigned w)
{
    return w == 1 ? 0 : w == 2 ? 1 : w == 4 ? 2 : 3;
}

static inline void fxb_put(uint8_t *buf, size_t *len, size_t cap, uint64_t v, unsigned w)
{
    assert(*len + w <= cap);
    for (unsigned k = 0; k < w; k++)
        buf[(*len)++] = (uint8_t)(v >> (8 * k));
}

static inline void fxb_align(uint8_t *buf, size_t *len, size_t cap, unsigned w)
{
    while (*len % w)
        fxb_put(buf, len, cap, 0, 1);
}

/* The bits of a scalar in w bytes. */
static inline uint64_t fxb_bits(const fxb_entry *e, uint8_t base_type, unsigned w)
{
    if (base_type == MP_FLEX_FLOAT) {
        if (w == 4) {
            float f = (float)e->d;
            uint32_t b;
            memcpy(&b, &f, 4);
            return b;
        }
        uint64_t b;
        memcpy(&b, &e->d, 8);
        return b;
    }
    return (uint64_t)e->i;
}

/* Write a map of n entries (keys in the given order) with value slots of w bytes and a root
 * of root_w bytes; returns the size. */
static inline size_t fxb_map(uint8_t *buf, size_t cap, const fxb_entry *e, int n, unsigned w,
                             unsigned root_w)
{
    size_t len = 0, key_pos[32], ind_pos[32];
    assert(n <= 32);
    for (int i = 0; i < n; i++) {
        key_pos[i] = len;
        size_t kl = strlen(e[i].key) + 1;
        assert(len + kl <= cap);
        memcpy(buf + len, e[i].key, kl);
        len += kl;
    }
    for (int i = 0; i < n; i++) {
        if (e[i].type < MP_FLEX_INDIRECT_INT || e[i].type > MP_FLEX_INDIRECT_FLOAT)
            continue;
        uint8_t base = (uint8_t)(e[i].type - MP_FLEX_INDIRECT_INT + MP_FLEX_INT);
        fxb_align(buf, &len, cap, e[i].width);
        ind_pos[i] = len;
        fxb_put(buf, &len, cap, fxb_bits(&e[i], base, e[i].width), e[i].width);
    }
    /* keys vector: size, then offsets back to the keys */
    fxb_align(buf, &len, cap, w);
    fxb_put(buf, &len, cap, (uint64_t)n, w);
    size_t keys = len;
    for (int i = 0; i < n; i++)
        fxb_put(buf, &len, cap, len - key_pos[i], w);
    /* map: keys offset, key width, size, values, types */
    size_t field = len;
    fxb_put(buf, &len, cap, field - keys, w);
    fxb_put(buf, &len, cap, w, w);
    fxb_put(buf, &len, cap, (uint64_t)n, w);
    size_t map = len;
    for (int i = 0; i < n; i++) {
        if (e[i].type >= MP_FLEX_INDIRECT_INT && e[i].type <= MP_FLEX_INDIRECT_FLOAT)
            fxb_put(buf, &len, cap, len - ind_pos[i], w);
        else
            fxb_put(buf, &len, cap, fxb_bits(&e[i], e[i].type, w), w);
    }
    for (int i = 0; i < n; i++) {
        bool ind = e[i].type >= MP_FLEX_INDIRECT_INT && e[i].type <= MP_FLEX_INDIRECT_FLOAT;
        fxb_put(buf, &len, cap, (uint64_t)(e[i].type << 2 | fxb_log2(ind ? e[i].width : w)), 1);
    }
    /* root: offset to the map, its packed type, the root width */
    fxb_align(buf, &len, cap, root_w);
    assert(root_w == 8 || len - map < ((uint64_t)1 << (8 * root_w)));
    fxb_put(buf, &len, cap, len - map, root_w);
    fxb_put(buf, &len, cap, (uint64_t)(MP_FLEX_MAP << 2 | fxb_log2(w)), 1);
    fxb_put(buf, &len, cap, root_w, 1);
    return len;
}

/* TFLite_Detection_PostProcess's options as a converter writes them (keys sorted). */
static inline size_t fxb_detection(uint8_t *buf, size_t cap, const mp_detection_options *o)
{
    const fxb_entry e[] = {
        {"detections_per_class", MP_FLEX_INT, o->detections_per_class, 0, 0},
        {"h_scale", MP_FLEX_FLOAT, 0, o->h_scale, 0},
        {"max_classes_per_detection", MP_FLEX_INT, o->max_classes_per_detection, 0, 0},
        {"max_detections", MP_FLEX_INT, o->max_detections, 0, 0},
        {"nms_iou_threshold", MP_FLEX_FLOAT, 0, o->iou_threshold, 0},
        {"nms_score_threshold", MP_FLEX_FLOAT, 0, o->score_threshold, 0},
        {"num_classes", MP_FLEX_INT, o->num_classes, 0, 0},
        {"use_regular_nms", MP_FLEX_BOOL, o->use_regular_nms, 0, 0},
        {"w_scale", MP_FLEX_FLOAT, 0, o->w_scale, 0},
        {"x_scale", MP_FLEX_FLOAT, 0, o->x_scale, 0},
        {"y_scale", MP_FLEX_FLOAT, 0, o->y_scale, 0},
    };
    return fxb_map(buf, cap, e, (int)(sizeof e / sizeof e[0]), 4, 1);
}

/* The options of TensorFlow Lite's AudioSpectrogram, Mfcc and NumericVerify from o, keys sorted,
 * as a converter writes them from the TensorFlow ops' attributes (Mfcc's frequency limits are
 * float attributes there: written as floats, read truncated to integers). */
static inline size_t fxb_spectrogram(uint8_t *buf, size_t cap, const mp_op_options *o)
{
    const fxb_entry e[] = {
        {"magnitude_squared", MP_FLEX_BOOL, o->spec_magnitude_squared, 0, 0},
        {"stride", MP_FLEX_INT, o->spec_stride, 0, 0},
        {"window_size", MP_FLEX_INT, o->spec_window, 0, 0},
    };
    return fxb_map(buf, cap, e, 3, 4, 1);
}

static inline size_t fxb_mfcc(uint8_t *buf, size_t cap, const mp_op_options *o)
{
    const fxb_entry e[] = {
        {"dct_coefficient_count", MP_FLEX_INT, o->mfcc_dct_count, 0, 0},
        {"filterbank_channel_count", MP_FLEX_INT, o->mfcc_channels, 0, 0},
        {"lower_frequency_limit", MP_FLEX_FLOAT, 0, o->mfcc_lower_hz, 0},
        {"upper_frequency_limit", MP_FLEX_FLOAT, 0, o->mfcc_upper_hz, 0},
    };
    return fxb_map(buf, cap, e, 4, 4, 1);
}

static inline size_t fxb_numeric_verify(uint8_t *buf, size_t cap, const mp_op_options *o)
{
    const fxb_entry e[] = {
        {"log_if_failed", MP_FLEX_BOOL, o->nv_log_if_failed, 0, 0},
        {"tolerance", MP_FLEX_FLOAT, 0, o->nv_tolerance, 0},
    };
    return fxb_map(buf, cap, e, 2, 4, 1);
}

#endif
