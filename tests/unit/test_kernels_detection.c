/* Tests of TFLite_Detection_PostProcess (engine/kernels/detection.c): a hand-computed case
 * (6 anchors, 2 classes and a background column) through fast and regular NMS, the score
 * threshold (>=), max_detections cutting, uint8 and int8 inputs, invariants on random cases;
 * then the operator in a model written with the writer: read back (custom code, raw options,
 * parsed options; faults in the options named), run by a session and by `memprof run`. */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "engine/model/tflite_writer.h"
#include "engine/session.h"
#include "tests/util/flex_builder.h"
#include "tests/util/kernel_harness.h"

/* ---- the hand-computed case -------------------------------------------------------------
 * Scales y = x = 10, h = w = 5. Anchors (y, x, h, w) and the boxes they decode to (ymin, xmin,
 * ymax, xmax); every encoding is 0 (center = anchor center, half size = exp(0) * size / 2)
 * except box 5's (10, -10, 0, 0): center y 10/10*1 + 4 = 5, x -10/10*1 + 8 = 7.
 *   A0 (0.5, 0.5, 1, 1) -> [0, 0, 1, 1]
 *   A1 (0.5, 0.6, 1, 1) -> [0, 0.1, 1, 1.1]    IoU with A0: 0.9 / 1.1 = 0.82 (> 0.5)
 *   A2 (2.5, 2.5, 1, 1) -> [2, 2, 3, 3]
 *   A3 (2.5, 3.0, 1, 1) -> [2, 2.5, 3, 3.5]    IoU with A2: 0.5 / 1.5 = 0.33 (kept)
 *   A4 (5.5, 5.5, 1, 1) -> [5, 5, 6, 6]
 *   A5 (4.0, 8.0, 1, 1) -> [4.5, 6.5, 5.5, 7.5] (no overlap with A4)
 * Scores (background, class 0, class 1), all exact in binary: */
static const float k_anchors[6 * 4] = {0.5f, 0.5f, 1, 1, 0.5f, 0.6f, 1, 1, 2.5f, 2.5f, 1, 1,
                                       2.5f, 3.0f, 1, 1, 5.5f, 5.5f, 1, 1, 4.0f, 8.0f, 1, 1};
static const float k_enc[6 * 4] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                   0, 0, 0, 0, 0, 0, 0, 0, 10, -10, 0, 0};
static const float k_scores[6 * 3] = {
    0, 0.875f, 0.125f,   /* A0: best class 0 */
    0, 0.75f, 0.25f,     /* A1 */
    0, 0.125f, 0.625f,   /* A2: best class 1 */
    0, 0.0625f, 0.5f,    /* A3 */
    0, 0.3125f, 0.25f,   /* A4 */
    0, 0.0f, 0.25f,      /* A5: exactly the 0.25 threshold (kept: >=) */
};
static const float k_boxes[6][4] = {{0, 0, 1, 1},       {0, 0.1f, 1, 1.1f}, {2, 2, 3, 3},
                                    {2, 2.5f, 3, 3.5f}, {5, 5, 6, 6},       {4.5f, 6.5f, 5.5f, 7.5f}};

static mp_detection_options base_options(void)
{
    return (mp_detection_options){.max_detections = 3, .max_classes_per_detection = 1,
                                  .detections_per_class = 100, .num_classes = 2,
                                  .use_regular_nms = false, .score_threshold = 0.25f,
                                  .iou_threshold = 0.5f, .y_scale = 10, .x_scale = 10,
                                  .h_scale = 5, .w_scale = 5};
}

typedef struct det_out {
    mp_tensor *boxes, *classes, *scores, *num;
} det_out;

/* A case on float32 inputs (enc, scores, anchors; anchors constant). */
static det_out det_case(kh_case *c, const mp_detection_options *o, int32_t n, int32_t cb,
                        const float *enc, const float *scores, const float *anchors)
{
    kh_init(c, MP_OP_DETECTION_POSTPROCESS, NULL);
    c->opt.detection = *o;
    mp_tensor *e = kh_input(c, MP_DT_FLOAT32, 3, (int32_t[]){1, n, 4}, NULL);
    mp_tensor *s = kh_input(c, MP_DT_FLOAT32, 3, (int32_t[]){1, n, cb}, NULL);
    kh_input(c, MP_DT_FLOAT32, 2, (int32_t[]){n, 4}, anchors);
    memcpy(e->data, enc, e->bytes);
    memcpy(s->data, scores, s->bytes);
    det_out d = {kh_output(c, MP_DT_FLOAT32), kh_output(c, MP_DT_FLOAT32),
                 kh_output(c, MP_DT_FLOAT32), kh_output(c, MP_DT_FLOAT32)};
    return d;
}

/* Expected slots: box index (-1: unused slot, all zero), class, score. */
typedef struct slot {
    int box, cls;
    float score;
} slot;

static void expect_slots(const det_out *d, const slot *want, int m, float num)
{
    assert_int_equal(d->boxes->rank, 3);
    assert_int_equal(d->boxes->dims[1], m);
    assert_int_equal(d->classes->dims[1], m);
    assert_int_equal(d->scores->dims[1], m);
    assert_int_equal(d->num->rank, 1);
    assert_int_equal(d->num->dims[0], 1);
    const float *b = d->boxes->data, *c = d->classes->data, *s = d->scores->data;
    for (int i = 0; i < m; i++) {
        const float zero[4] = {0, 0, 0, 0};
        const float *wb = want[i].box >= 0 ? k_boxes[want[i].box] : zero;
        for (int k = 0; k < 4; k++)
            if (fabsf(b[4 * i + k] - wb[k]) > 1e-5f)
                fail_msg("slot %d coordinate %d: %g, expected %g", i, k, (double)b[4 * i + k],
                         (double)wb[k]);
        assert_true(c[i] == (want[i].box >= 0 ? (float)want[i].cls : 0.0f));
        assert_true(s[i] == (want[i].box >= 0 ? want[i].score : 0.0f));
    }
    assert_true(((float *)d->num->data)[0] == num);
}

static void test_fast_nms(void **state)
{
    (void)state;
    kh_case c;
    mp_detection_options o = base_options();
    /* Best scores A0 .875, A1 .75, A2 .625, A3 .5, A4 .3125, A5 .25 (all >= .25). A0 taken,
     * A1 suppressed by it (IoU .82), A2 taken, A3 taken (IoU .33): three, max_detections. */
    det_out d = det_case(&c, &o, 6, 3, k_enc, k_scores, k_anchors);
    kh_expect_ok(&c, kh_run(&c));
    expect_slots(&d, (const slot[]){{0, 0, 0.875f}, {2, 1, 0.625f}, {3, 1, 0.5f}}, 3, 3);
    /* run again over garbage outputs: every slot is written */
    memset(d.boxes->data, 0x7f, d.boxes->bytes);
    kh_expect_ok(&c, kh_rerun(&c, false));
    expect_slots(&d, (const slot[]){{0, 0, 0.875f}, {2, 1, 0.625f}, {3, 1, 0.5f}}, 3, 3);
    kh_free(&c);

    /* max_detections 5, two classes per detection: A0, A2, A3, A4, A5 (A5 at exactly the
     * threshold), each with its classes best first (ties: the lower class). */
    o.max_detections = 5;
    o.max_classes_per_detection = 2;
    d = det_case(&c, &o, 6, 3, k_enc, k_scores, k_anchors);
    kh_expect_ok(&c, kh_run(&c));
    expect_slots(&d,
                 (const slot[]){{0, 0, 0.875f}, {0, 1, 0.125f}, {2, 1, 0.625f}, {2, 0, 0.125f},
                                {3, 1, 0.5f}, {3, 0, 0.0625f}, {4, 0, 0.3125f}, {4, 1, 0.25f},
                                {5, 1, 0.25f}, {5, 0, 0.0f}},
                 10, 5);
    kh_free(&c);

    /* more classes per detection than classes: two slots of four filled per box */
    o.max_detections = 1;
    o.max_classes_per_detection = 4;
    d = det_case(&c, &o, 6, 3, k_enc, k_scores, k_anchors);
    kh_expect_ok(&c, kh_run(&c));
    expect_slots(&d, (const slot[]){{0, 0, 0.875f}, {0, 1, 0.125f}, {-1, 0, 0}, {-1, 0, 0}}, 4, 1);
    kh_free(&c);
}

static void test_score_threshold(void **state)
{
    (void)state;
    kh_case c;
    mp_detection_options o = base_options();
    /* threshold .51: A0 .875, A1 .75, A2 .625 candidates (A3's .5 is below); A1 suppressed:
     * two detections, the rest of the five slots zero */
    o.max_detections = 5;
    o.score_threshold = 0.51f;
    det_out d = det_case(&c, &o, 6, 3, k_enc, k_scores, k_anchors);
    kh_expect_ok(&c, kh_run(&c));
    expect_slots(&d,
                 (const slot[]){{0, 0, 0.875f}, {2, 1, 0.625f}, {-1, 0, 0}, {-1, 0, 0}, {-1, 0, 0}},
                 5, 2);
    kh_free(&c);
    /* above every score: nothing */
    o.score_threshold = 0.9f;
    d = det_case(&c, &o, 6, 3, k_enc, k_scores, k_anchors);
    kh_expect_ok(&c, kh_run(&c));
    expect_slots(&d, (const slot[]){{-1, 0, 0}, {-1, 0, 0}, {-1, 0, 0}, {-1, 0, 0}, {-1, 0, 0}}, 5, 0);
    kh_free(&c);
    /* IoU threshold 0.9: A1 (IoU .82) is no longer suppressed */
    o.score_threshold = 0.25f;
    o.iou_threshold = 0.9f;
    o.max_detections = 2;
    d = det_case(&c, &o, 6, 3, k_enc, k_scores, k_anchors);
    kh_expect_ok(&c, kh_run(&c));
    expect_slots(&d, (const slot[]){{0, 0, 0.875f}, {1, 0, 0.75f}}, 2, 2);
    kh_free(&c);
}

static void test_regular_nms(void **state)
{
    (void)state;
    kh_case c;
    mp_detection_options o = base_options();
    o.use_regular_nms = true;
    o.max_detections = 4;
    o.detections_per_class = 2;
    /* class 0: candidates A0 .875, A1 .75, A4 .3125; A1 suppressed by A0 -> A0, A4.
     * class 1: candidates A2 .625, A3 .5, A1 .25, A4 .25, A5 .25 -> A2, A3 (two per class).
     * best four overall: A0/0 .875, A2/1 .625, A3/1 .5, A4/0 .3125 */
    det_out d = det_case(&c, &o, 6, 3, k_enc, k_scores, k_anchors);
    kh_expect_ok(&c, kh_run(&c));
    expect_slots(&d, (const slot[]){{0, 0, 0.875f}, {2, 1, 0.625f}, {3, 1, 0.5f}, {4, 0, 0.3125f}},
                 4, 4);
    kh_free(&c);
    /* max_detections 3 cuts the last */
    o.max_detections = 3;
    d = det_case(&c, &o, 6, 3, k_enc, k_scores, k_anchors);
    kh_expect_ok(&c, kh_run(&c));
    expect_slots(&d, (const slot[]){{0, 0, 0.875f}, {2, 1, 0.625f}, {3, 1, 0.5f}}, 3, 3);
    kh_free(&c);
    /* 100 per class, six detections: class 1 also keeps A1, A4, A5 at .25 (nothing overlaps
     * them in class 1); the ties come in box order */
    o.max_detections = 6;
    o.detections_per_class = 100;
    d = det_case(&c, &o, 6, 3, k_enc, k_scores, k_anchors);
    kh_expect_ok(&c, kh_run(&c));
    expect_slots(&d,
                 (const slot[]){{0, 0, 0.875f}, {2, 1, 0.625f}, {3, 1, 0.5f}, {4, 0, 0.3125f},
                                {1, 1, 0.25f}, {4, 1, 0.25f}},
                 6, 6);
    kh_free(&c);
    /* no background column: the scores are the classes themselves */
    float no_bg[6 * 2];
    for (int i = 0; i < 6; i++) {
        no_bg[2 * i] = k_scores[3 * i + 1];
        no_bg[2 * i + 1] = k_scores[3 * i + 2];
    }
    o.max_detections = 4;
    o.detections_per_class = 2;
    d = det_case(&c, &o, 6, 2, k_enc, no_bg, k_anchors);
    kh_expect_ok(&c, kh_run(&c));
    expect_slots(&d, (const slot[]){{0, 0, 0.875f}, {2, 1, 0.625f}, {3, 1, 0.5f}, {4, 0, 0.3125f}},
                 4, 4);
    kh_free(&c);
}

/* The same case on quantized inputs: encodings scale 0.5 zero point 128, anchors scale 0.1
 * (uint8), scores scale 1/256 (every score a whole number of 256ths), uint8 or int8. */
static void test_quantized(void **state)
{
    (void)state;
    static const float s_enc[1] = {0.5f}, s_anc[1] = {0.1f}, s_sc[1] = {1.0f / 256};
    static const int64_t z_enc[1] = {128}, z_anc[1] = {0}, z_sc_u8[1] = {0}, z_sc_i8[1] = {-128};
    uint8_t anchors[24];
    for (int i = 0; i < 24; i++)
        anchors[i] = (uint8_t)lrintf(k_anchors[i] * 10);
    for (int pass = 0; pass < 2; pass++) {
        const mp_dtype sdt = pass ? MP_DT_INT8 : MP_DT_UINT8;
        kh_case c;
        mp_detection_options o = base_options();
        for (int regular = 0; regular < 2; regular++) {
            o.use_regular_nms = regular;
            o.max_detections = 4;
            o.detections_per_class = 2;
            kh_init(&c, MP_OP_DETECTION_POSTPROCESS, NULL);
            c.opt.detection = o;
            mp_tensor *e = kh_input(&c, MP_DT_UINT8, 3, (int32_t[]){1, 6, 4}, NULL);
            mp_tensor *s = kh_input(&c, sdt, 3, (int32_t[]){1, 6, 3}, NULL);
            mp_tensor *a = kh_input(&c, MP_DT_UINT8, 2, (int32_t[]){6, 4}, anchors);
            kh_quant(&c, e, 1, s_enc, z_enc, 0);
            kh_quant(&c, s, 1, s_sc, pass ? z_sc_i8 : z_sc_u8, 0);
            kh_quant(&c, a, 1, s_anc, z_anc, 0);
            for (int i = 0; i < 24; i++)
                ((uint8_t *)e->data)[i] = (uint8_t)(128 + lrintf(k_enc[i] * 2));
            for (int i = 0; i < 18; i++) {
                long q = lrintf(k_scores[i] * 256);
                if (pass)
                    ((int8_t *)s->data)[i] = (int8_t)(q - 128);
                else
                    ((uint8_t *)s->data)[i] = (uint8_t)q;
            }
            det_out d = {kh_output(&c, MP_DT_FLOAT32), kh_output(&c, MP_DT_FLOAT32),
                         kh_output(&c, MP_DT_FLOAT32), kh_output(&c, MP_DT_FLOAT32)};
            kh_expect_ok(&c, kh_run(&c));
            if (regular)
                expect_slots(&d,
                             (const slot[]){{0, 0, 0.875f}, {2, 1, 0.625f}, {3, 1, 0.5f}, {4, 0, 0.3125f}},
                             4, 4);
            else /* fast: A0, A2, A3, A4 (A1 suppressed) */
                expect_slots(&d,
                             (const slot[]){{0, 0, 0.875f}, {2, 1, 0.625f}, {3, 1, 0.5f}, {4, 0, 0.3125f}},
                             4, 4);
            kh_free(&c);
        }
    }
}

static float iou(const float *a, const float *b)
{
    float aa = (a[2] - a[0]) * (a[3] - a[1]), ab = (b[2] - b[0]) * (b[3] - b[1]);
    if (aa <= 0 || ab <= 0)
        return 0;
    float h = fminf(a[2], b[2]) - fmaxf(a[0], b[0]), w = fminf(a[3], b[3]) - fmaxf(a[1], b[1]);
    float inter = fmaxf(h, 0) * fmaxf(w, 0);
    return inter / (aa + ab - inter);
}

/* Random cases: the invariants of the outputs. */
static void test_random_invariants(void **state)
{
    (void)state;
    uint32_t seed = 12345;
    int kept = 0, regular = 0;
    for (int iter = 0; iter < 300; iter++) {
        int32_t n = 1 + (int32_t)((kh_frand(&seed, 1) + 1) * 60);
        int32_t cls = 1 + (int32_t)((kh_frand(&seed, 1) + 1) * 2.5f);
        int32_t bg = kh_frand(&seed, 1) > 0 ? 1 : 0;
        int32_t cb = cls + bg;
        mp_detection_options o = base_options();
        o.num_classes = cls;
        o.max_detections = 1 + (int32_t)((kh_frand(&seed, 1) + 1) * 5);
        o.max_classes_per_detection = 1 + (int32_t)((kh_frand(&seed, 1) + 1) * 1.5f);
        o.detections_per_class = 1 + (int32_t)((kh_frand(&seed, 1) + 1) * 5);
        o.use_regular_nms = kh_frand(&seed, 1) > 0;
        o.score_threshold = (kh_frand(&seed, 1) + 1) * 0.25f;
        o.iou_threshold = 0.05f + (kh_frand(&seed, 1) + 1) * 0.475f;
        float *enc = malloc(sizeof(float) * 4 * (size_t)n), *anc = malloc(sizeof(float) * 4 * (size_t)n);
        float *sc = malloc(sizeof(float) * (size_t)(n * cb)), *dec = malloc(sizeof(float) * 4 * (size_t)n);
        assert_true(enc && anc && sc && dec);
        float lo = INFINITY, hi = -INFINITY;
        for (int32_t i = 0; i < n; i++) {
            for (int k = 0; k < 4; k++)
                enc[4 * i + k] = kh_frand(&seed, 2);
            anc[4 * i] = (kh_frand(&seed, 1) + 1) / 2;
            anc[4 * i + 1] = (kh_frand(&seed, 1) + 1) / 2;
            anc[4 * i + 2] = 0.05f + (kh_frand(&seed, 1) + 1) * 0.2f;
            anc[4 * i + 3] = 0.05f + (kh_frand(&seed, 1) + 1) * 0.2f;
            double yc = enc[4 * i] / 10.0 * anc[4 * i + 2] + anc[4 * i];
            double xc = enc[4 * i + 1] / 10.0 * anc[4 * i + 3] + anc[4 * i + 1];
            double hh = 0.5 * exp(enc[4 * i + 2] / 5.0) * anc[4 * i + 2];
            double hw = 0.5 * exp(enc[4 * i + 3] / 5.0) * anc[4 * i + 3];
            dec[4 * i] = (float)(yc - hh);
            dec[4 * i + 1] = (float)(xc - hw);
            dec[4 * i + 2] = (float)(yc + hh);
            dec[4 * i + 3] = (float)(xc + hw);
            for (int k = 0; k < 4; k++) {
                lo = fminf(lo, dec[4 * i + k]);
                hi = fmaxf(hi, dec[4 * i + k]);
            }
        }
        for (int32_t i = 0; i < n * cb; i++)
            sc[i] = (kh_frand(&seed, 1) + 1) / 2;
        kh_case c;
        det_out d = det_case(&c, &o, n, cb, enc, sc, anc);
        kh_expect_ok(&c, kh_run(&c));
        const int32_t m = o.max_detections * o.max_classes_per_detection;
        const float *b = d.boxes->data, *cl = d.classes->data, *s = d.scores->data;
        const float num = ((float *)d.num->data)[0];
        assert_true(num >= 0 && num <= (float)o.max_detections && num <= (float)m);
        kept += (int)num;
        regular += o.use_regular_nms;
        /* the slots in use: regular, the first num; fast, the first k of each of num groups */
        const int32_t per = o.use_regular_nms ? 1 : o.max_classes_per_detection;
        const int32_t kk = o.use_regular_nms ? 1 : (per < cls ? per : cls);
        float prev = INFINITY;
        for (int32_t i = 0; i < m; i++) {
            int32_t det = i / per, col = i % per;
            bool used = det < (int32_t)num && col < kk;
            if (!used) {
                for (int k = 0; k < 4; k++)
                    assert_true(b[4 * i + k] == 0);
                assert_true(cl[i] == 0 && s[i] == 0);
                continue;
            }
            assert_true(cl[i] >= 0 && cl[i] < (float)cls && cl[i] == floorf(cl[i]));
            for (int k = 0; k < 4; k++)
                assert_true(b[4 * i + k] >= lo - 1e-6f && b[4 * i + k] <= hi + 1e-6f);
            /* the box is one of the decoded boxes, with that box's score for that class */
            bool match = false;
            for (int32_t j = 0; j < n && !match; j++) {
                bool same = true;
                for (int k = 0; k < 4; k++)
                    same = same && fabsf(b[4 * i + k] - dec[4 * j + k]) <= 1e-6f;
                match = same && sc[j * cb + bg + (int32_t)cl[i]] == s[i];
            }
            assert_true(match);
            if (col == 0) { /* detections by decreasing (best) score, above the threshold */
                assert_true(s[i] <= prev);
                assert_true(s[i] >= o.score_threshold);
                prev = s[i];
            } else {
                assert_true(s[i] <= s[i - 1]);
            }
        }
        /* no two kept boxes (of one class, for regular NMS) overlap above the threshold */
        for (int32_t i = 0; i < m; i += per)
            for (int32_t j = i + per; j < m; j += per) {
                if (i / per >= (int32_t)num || j / per >= (int32_t)num)
                    continue;
                if (o.use_regular_nms && cl[i] != cl[j])
                    continue;
                if (o.use_regular_nms && memcmp(&b[4 * i], &b[4 * j], 16) == 0)
                    fail_msg("iter %d: one box kept twice for class %g", iter, (double)cl[i]);
                assert_true(iou(&b[4 * i], &b[4 * j]) <= o.iou_threshold + 1e-6f);
            }
        kh_free(&c);
        free(enc);
        free(anc);
        free(sc);
        free(dec);
    }
    /* the cases are not degenerate: both kinds of NMS, and detections kept */
    assert_true(regular > 100 && regular < 200);
    assert_true(kept > 600);
}

static void test_errors(void **state)
{
    (void)state;
    kh_case c;
    mp_detection_options o = base_options();
    /* a negative anchor height inverts its box */
    float bad[24];
    memcpy(bad, k_anchors, sizeof bad);
    bad[4 * 2 + 2] = -1;
    det_case(&c, &o, 6, 3, k_enc, k_scores, bad);
    kh_expect_error(&c, MP_ERR_ARG, "decoded box 2 is inverted");
    kh_free(&c);
    /* three columns for one class: neither the classes nor one background column more */
    o.num_classes = 1;
    det_case(&c, &o, 6, 3, k_enc, k_scores, k_anchors);
    kh_expect_error(&c, MP_ERR_SHAPE, "3 columns for 1 classes");
    kh_free(&c);
    o = base_options();
    o.iou_threshold = 0;
    det_case(&c, &o, 6, 3, k_enc, k_scores, k_anchors);
    kh_expect_error(&c, MP_ERR_FORMAT, "nms_iou_threshold");
    kh_free(&c);
    /* anchors that do not match the boxes */
    o = base_options();
    kh_init(&c, MP_OP_DETECTION_POSTPROCESS, NULL);
    c.opt.detection = o;
    kh_input(&c, MP_DT_FLOAT32, 3, (int32_t[]){1, 6, 4}, NULL);
    kh_input(&c, MP_DT_FLOAT32, 3, (int32_t[]){1, 6, 3}, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){5, 4}, NULL);
    for (int i = 0; i < 4; i++)
        kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "are not [6, 4]");
    kh_free(&c);
    /* an int32 output */
    kh_init(&c, MP_OP_DETECTION_POSTPROCESS, NULL);
    c.opt.detection = o;
    kh_input(&c, MP_DT_FLOAT32, 3, (int32_t[]){1, 6, 4}, NULL);
    kh_input(&c, MP_DT_FLOAT32, 3, (int32_t[]){1, 6, 3}, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){6, 4}, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    kh_output(&c, MP_DT_INT32);
    kh_output(&c, MP_DT_FLOAT32);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "expected f32");
    kh_free(&c);
}

/* ---- in a model ---------------------------------------------------------------------------- */

/* A model: inputs encodings [1,6,4] and scores [1,6,3], constant anchors, the operator with
 * `options` (size bytes) under custom code `code`, four outputs. */
static void *build_model(const char *code, const uint8_t *options, size_t size, int32_t m,
                         size_t *len)
{
    mp_tfw *w = mp_tfw_create();
    assert_non_null(w);
    int ab = mp_tfw_buffer(w, k_anchors, sizeof k_anchors);
    int32_t e = mp_tfw_tensor(w, "raw_outputs/box_encodings", MP_DT_FLOAT32, 3, (int32_t[]){1, 6, 4}, 0, NULL);
    int32_t s = mp_tfw_tensor(w, "raw_outputs/class_predictions", MP_DT_FLOAT32, 3, (int32_t[]){1, 6, 3}, 0, NULL);
    int32_t a = mp_tfw_tensor(w, "anchors", MP_DT_FLOAT32, 2, (int32_t[]){6, 4}, ab, NULL);
    int32_t ob = mp_tfw_tensor(w, "detection_boxes", MP_DT_FLOAT32, 3, (int32_t[]){1, m, 4}, 0, NULL);
    int32_t oc = mp_tfw_tensor(w, "detection_classes", MP_DT_FLOAT32, 2, (int32_t[]){1, m}, 0, NULL);
    int32_t os = mp_tfw_tensor(w, "detection_scores", MP_DT_FLOAT32, 2, (int32_t[]){1, m}, 0, NULL);
    int32_t on = mp_tfw_tensor(w, "num_detections", MP_DT_FLOAT32, 1, (int32_t[]){1}, 0, NULL);
    const int32_t outs[4] = {ob, oc, os, on};
    assert_int_equal(mp_tfw_custom_op(w, code, options, size, 3, (int32_t[]){e, s, a}, 4, outs), 0);
    assert_int_equal(mp_tfw_io(w, 2, (int32_t[]){e, s}, 4, outs), 0);
    void *bytes;
    mp_error err = {0};
    assert_int_equal(mp_tfw_finish(w, &bytes, len, &err), MP_OK);
    mp_tfw_free(w);
    return bytes;
}

static void test_model_read(void **state)
{
    (void)state;
    uint8_t opts[512];
    mp_detection_options o = base_options();
    o.use_regular_nms = true;
    o.detections_per_class = 7;
    size_t olen = fxb_detection(opts, sizeof opts, &o);
    size_t len;
    void *bytes = build_model("TFLite_Detection_PostProcess", opts, olen, 3, &len);
    mp_model *m = NULL;
    mp_error err = {0};
    assert_int_equal(mp_model_load_memory(bytes, len, "det", &m, &err), MP_OK);
    assert_int_equal(m->n_ops, 1);
    const mp_op_info *op = &m->ops[0];
    assert_int_equal(op->opcode, MP_OP_DETECTION_POSTPROCESS);
    assert_string_equal(mp_op_name(op->opcode), "TFLite_Detection_PostProcess");
    assert_string_equal(op->custom_code, "TFLite_Detection_PostProcess");
    assert_int_equal(op->custom_options_size, olen);
    assert_memory_equal(op->custom_options, opts, olen);
    const mp_detection_options *r = &op->opt.detection;
    assert_int_equal(r->max_detections, 3);
    assert_int_equal(r->max_classes_per_detection, 1);
    assert_int_equal(r->detections_per_class, 7);
    assert_int_equal(r->num_classes, 2);
    assert_true(r->use_regular_nms);
    assert_true(r->score_threshold == 0.25f && r->iou_threshold == 0.5f);
    assert_true(r->y_scale == 10 && r->x_scale == 10 && r->h_scale == 5 && r->w_scale == 5);
    mp_model_free(m);
    free(bytes);

    /* defaults: detections_per_class 100, use_regular_nms false when the keys are absent */
    const fxb_entry few[] = {
        {"h_scale", MP_FLEX_FLOAT, 0, 5, 0},
        {"max_classes_per_detection", MP_FLEX_INT, 1, 0, 0},
        {"max_detections", MP_FLEX_INT, 3, 0, 0},
        {"nms_iou_threshold", MP_FLEX_FLOAT, 0, 0.5, 0},
        {"nms_score_threshold", MP_FLEX_FLOAT, 0, 0.25, 0},
        {"num_classes", MP_FLEX_INT, 2, 0, 0},
        {"w_scale", MP_FLEX_FLOAT, 0, 5, 0},
        {"x_scale", MP_FLEX_FLOAT, 0, 10, 0},
        {"y_scale", MP_FLEX_FLOAT, 0, 10, 0},
    };
    olen = fxb_map(opts, sizeof opts, few, 9, 8, 1);
    bytes = build_model("TFLite_Detection_PostProcess", opts, olen, 3, &len);
    assert_int_equal(mp_model_load_memory(bytes, len, "det", &m, &err), MP_OK);
    assert_int_equal(m->ops[0].opt.detection.detections_per_class, 100);
    assert_false(m->ops[0].opt.detection.use_regular_nms);
    mp_model_free(m);
    free(bytes);

    /* faults name the operator and the key */
    struct { const char *key; fxb_entry e; const char *needle; } bad[] = {
        {"max_detections", {"max_detections", MP_FLEX_INT, 0, 0, 0}, "'max_detections' is 0"},
        {"num_classes", {"num_classes", MP_FLEX_INT, -2, 0, 0}, "'num_classes' is -2"},
        {"nms_iou_threshold", {"nms_iou_threshold", MP_FLEX_FLOAT, 0, 1.5, 0}, "'nms_iou_threshold' is not in (0, 1]"},
        {"x_scale", {"x_scale", MP_FLEX_FLOAT, 0, 0, 0}, "'x_scale' is zero"},
        {"y_scale", {"y_scale", MP_FLEX_NULL, 0, 0, 0}, "'y_scale' is missing"},
        {"max_detections", {"zz", MP_FLEX_INT, 1, 0, 0}, "'max_detections' is missing"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        fxb_entry e[9];
        memcpy(e, few, sizeof e);
        for (int i = 0; i < 9; i++)
            if (strcmp(e[i].key, bad[k].key) == 0)
                e[i] = bad[k].e;
        olen = fxb_map(opts, sizeof opts, e, 9, 8, 1);
        bytes = build_model("TFLite_Detection_PostProcess", opts, olen, 3, &len);
        m = NULL;
        assert_int_equal(mp_model_load_memory(bytes, len, "det", &m, &err), MP_ERR_FORMAT);
        assert_null(m);
        if (!strstr(err.msg, bad[k].needle) || !strstr(err.msg, "operator 0 (TFLite_Detection_PostProcess)"))
            fail_msg("case %zu: %s", k, err.msg);
        free(bytes);
    }
    /* no options at all, and options that are not a map */
    bytes = build_model("TFLite_Detection_PostProcess", NULL, 0, 3, &len);
    assert_int_equal(mp_model_load_memory(bytes, len, "det", &m, &err), MP_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "has no custom options"));
    free(bytes);
    bytes = build_model("TFLite_Detection_PostProcess", (const uint8_t[]){7, 4, 1}, 3, 3, &len);
    assert_int_equal(mp_model_load_memory(bytes, len, "det", &m, &err), MP_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "not a FlexBuffer map"));
    free(bytes);
    /* any other custom operator is still refused, naming it; a near miss too */
    static const char *others[] = {"fake-op-double", "TFLite_Detection_PostProcess2", "tflite_detection_postprocess"};
    for (int k = 0; k < 3; k++) {
        bytes = build_model(others[k], opts, olen, 3, &len);
        assert_int_equal(mp_model_load_memory(bytes, len, "det", &m, &err), MP_ERR_UNSUPPORTED);
        char want[96];
        snprintf(want, sizeof want, "custom operator '%s' is not supported", others[k]);
        assert_non_null(strstr(err.msg, want));
        free(bytes);
    }
}

/* The hand case's fast NMS (max_detections 3) as a model file: its bytes and outputs. */
static void *hand_model(size_t *len)
{
    uint8_t opts[512];
    mp_detection_options o = base_options();
    size_t olen = fxb_detection(opts, sizeof opts, &o);
    return build_model("TFLite_Detection_PostProcess", opts, olen, 3, len);
}

static void check_hand_outputs(const float *boxes, const float *classes, const float *scores,
                               const float *num)
{
    static const int want_box[3] = {0, 2, 3};
    static const float want_cls[3] = {0, 1, 1}, want_score[3] = {0.875f, 0.625f, 0.5f};
    for (int i = 0; i < 3; i++) {
        for (int k = 0; k < 4; k++)
            assert_true(fabsf(boxes[4 * i + k] - k_boxes[want_box[i]][k]) <= 1e-5f);
        assert_true(classes[i] == want_cls[i] && scores[i] == want_score[i]);
    }
    assert_true(num[0] == 3);
}

static void test_session(void **state)
{
    (void)state;
    size_t len;
    void *bytes = hand_model(&len);
    mp_session *s = NULL;
    mp_error err = {0};
    mp_session_options so = {.threads = 1};
    assert_int_equal(mp_session_create(&so, &s, &err), MP_OK);
    assert_int_equal(mp_session_load_memory(s, bytes, len, "det", &err), MP_OK);
    assert_int_equal(mp_session_prepare(s, &err), MP_OK);
    assert_int_equal(mp_session_set_input(s, 0, k_enc, sizeof k_enc, &err), MP_OK);
    assert_int_equal(mp_session_set_input(s, 1, k_scores, sizeof k_scores, &err), MP_OK);
    for (int run = 0; run < 2; run++) {
        if (mp_session_run(s, &err) != MP_OK)
            fail_msg("%s", err.msg);
        float boxes[12], classes[3], scores[3], num[1];
        assert_int_equal(mp_session_get_output(s, 0, boxes, sizeof boxes, &err), MP_OK);
        assert_int_equal(mp_session_get_output(s, 1, classes, sizeof classes, &err), MP_OK);
        assert_int_equal(mp_session_get_output(s, 2, scores, sizeof scores, &err), MP_OK);
        assert_int_equal(mp_session_get_output(s, 3, num, sizeof num, &err), MP_OK);
        check_hand_outputs(boxes, classes, scores, num);
    }
    mp_session_destroy(s);
    free(bytes);
}

/* `memprof run` on the model file in each memory mode, inputs from files, outputs written by
 * --output-dir and checked. */
static void test_cli_run(void **state)
{
    (void)state;
    size_t len;
    void *bytes = hand_model(&len);
    assert_int_equal(mp_test_tmpdir_make("mp_detection"), 0);
    char model[512], enc[512], sc[512];
    snprintf(model, sizeof model, "%s", mp_test_tmp_path("det.tflite"));
    snprintf(enc, sizeof enc, "%s", mp_test_tmp_path("enc.bin"));
    snprintf(sc, sizeof sc, "%s", mp_test_tmp_path("scores.bin"));
    mp_test_write_bytes(model, bytes, len);
    mp_test_write_bytes(enc, k_enc, sizeof k_enc);
    mp_test_write_bytes(sc, k_scores, sizeof k_scores);
    free(bytes);
    static const char *modes[3] = {"auto", "static", "dynamic"};
    for (int k = 0; k < 3; k++) {
        char cmd[4096];
        snprintf(cmd, sizeof cmd,
                 "'%s/memprof' run '%s' --memory %s --input 0='%s' --input 1='%s' --output-dir '%s' "
                 ">'%s' 2>&1",
                 MP_BINARY_DIR, model, modes[k], enc, sc, mp_test_tmpdir(),
                 mp_test_tmp_path("log.txt"));
        int rc = system(cmd);
        if (!WIFEXITED(rc) || WEXITSTATUS(rc) != 0) {
            size_t n;
            char *log = mp_test_read_file(mp_test_tmp_path("log.txt"), &n);
            fail_msg("memprof run --memory %s failed (%d): %s", modes[k], rc, log ? log : "");
        }
        float *out[4];
        size_t sizes[4];
        for (int j = 0; j < 4; j++) {
            char name[32];
            snprintf(name, sizeof name, "output_%d.bin", j);
            out[j] = mp_test_read_file(mp_test_tmp_path(name), &sizes[j]);
            assert_non_null(out[j]);
        }
        assert_int_equal(sizes[0], 48);
        assert_int_equal(sizes[3], 4);
        check_hand_outputs(out[0], out[1], out[2], out[3]);
        for (int j = 0; j < 4; j++)
            free(out[j]);
    }
    mp_test_tmpdir_remove();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fast_nms),
        cmocka_unit_test(test_score_threshold),
        cmocka_unit_test(test_regular_nms),
        cmocka_unit_test(test_quantized),
        cmocka_unit_test(test_random_invariants),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_model_read),
        cmocka_unit_test(test_session),
        cmocka_unit_test(test_cli_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
