/* bench_dwconv: DEPTHWISE_CONV_2D on XNNPACK and on the plain-C kernel (engine/kernels/dwconv.c)
 * on the same shapes in one run, and a model run with each (scripts/bench_dwconv.sh).
 *
 *   bench_dwconv [--runs N] [--threads N] [--dtype f32|qs8|qu8|qc8|all] [--set windows|mult]
 *                [--save DIR] [--model PATH] [--model-runs N]
 *
 * Each shape is a one-operator model (tflite_writer) run through a session (static memory),
 * once with every depthwise convolution on XNNPACK (mp_dwconv_set_policy) and once on the C
 * kernel, in float32 and in the three 8-bit kinds (int8 filters with one scale, qs8, or one
 * per channel, qc8; uint8, qu8); per shape: taps, the median of --runs runs in ms, GFLOP/s
 * (2 per multiply-add) of each, their ratio (XNNPACK's time over C's), and the largest
 * difference between the two outputs relative to the output's largest magnitude (for the
 * 8-bit kinds one unit at most: the C kernel requantizes as TensorFlow Lite's reference
 * kernels do, XNNPACK in float). --model: the model's median run
 * time (of --model-runs runs, after warm-up) with the depthwise convolutions on XNNPACK and
 * with the engine's choice (mp_dwconv_wanted), sessions alternating. --set mult: the depth
 * multiplier shapes (k_mult_shapes) instead of the windows; --save DIR: each shape's model
 * written there too (for memprof bench --peer xnnpack, scripts/bench_dwconv_mult.sh). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/kernels/dwconv.h"
#include "engine/model/reference_input.h"
#include "engine/model/tflite_writer.h"
#include "engine/session.h"

typedef struct shape {
    const char *name;
    int32_t n, h, w, c, kh, kw, stride, dil, mult, pad;
} shape;

static const shape k_shapes[] = {
    {"conformer 1-D", 10, 335, 1, 80, 31, 1, 1, 1, 1, MP_PAD_SAME},
    {"1-D", 10, 335, 1, 80, 3, 1, 1, 1, 1, MP_PAD_SAME},
    {"1-D", 10, 335, 1, 80, 4, 1, 1, 1, 1, MP_PAD_SAME},
    {"1-D", 10, 335, 1, 80, 5, 1, 1, 1, 1, MP_PAD_SAME},
    {"1-D", 10, 335, 1, 80, 7, 1, 1, 1, 1, MP_PAD_SAME},
    {"1-D", 10, 335, 1, 80, 9, 1, 1, 1, 1, MP_PAD_SAME},
    {"1-D", 10, 335, 1, 80, 15, 1, 1, 1, 1, MP_PAD_SAME},
    {"1-D", 10, 335, 1, 80, 25, 1, 1, 1, 1, MP_PAD_SAME},
    {"1-D", 10, 335, 1, 80, 26, 1, 1, 1, 1, MP_PAD_SAME},
    {"1-D", 10, 335, 1, 80, 49, 1, 1, 1, 1, MP_PAD_SAME},
    {"2x2", 1, 56, 56, 96, 2, 2, 1, 1, 1, MP_PAD_SAME},
    {"3x3", 1, 56, 56, 96, 3, 3, 1, 1, 1, MP_PAD_SAME},
    {"5x5", 1, 56, 56, 96, 5, 5, 1, 1, 1, MP_PAD_SAME},
    {"ConvNeXt 7x7", 1, 56, 56, 96, 7, 7, 1, 1, 1, MP_PAD_SAME},
    {"7x7 stride 2", 1, 112, 112, 32, 7, 7, 2, 1, 1, MP_PAD_SAME},
    {"3x3 multiplier 2", 1, 56, 56, 48, 3, 3, 1, 1, 2, MP_PAD_SAME},
    {"3x3 dilation 2", 1, 56, 56, 96, 3, 3, 1, 2, 1, MP_PAD_SAME},
    {"5x5 VALID", 1, 56, 56, 96, 5, 5, 1, 1, 1, MP_PAD_VALID},
};

/* --set mult: depth multipliers 1, 2, 4 and 8 on 32 input channels, 3x3 and 5x5, strides 1
 * and 2; each followed by the multiplier-1 convolution of as many output channels (C=64, 128,
 * 256: the same multiply-adds); then 3, a tail of 8 channels, fewer than 16 and 16 */
static const shape k_mult_shapes[] = {
    {"3x3 M1", 1, 56, 56, 32, 3, 3, 1, 1, 1, MP_PAD_SAME},
    {"3x3 M2", 1, 56, 56, 32, 3, 3, 1, 1, 2, MP_PAD_SAME},
    {"3x3 M1 C=64", 1, 56, 56, 64, 3, 3, 1, 1, 1, MP_PAD_SAME},
    {"3x3 M4", 1, 56, 56, 32, 3, 3, 1, 1, 4, MP_PAD_SAME},
    {"3x3 M1 C=128", 1, 56, 56, 128, 3, 3, 1, 1, 1, MP_PAD_SAME},
    {"3x3 M8", 1, 56, 56, 32, 3, 3, 1, 1, 8, MP_PAD_SAME},
    {"3x3 M1 C=256", 1, 56, 56, 256, 3, 3, 1, 1, 1, MP_PAD_SAME},
    {"3x3 s2 M2", 1, 56, 56, 32, 3, 3, 2, 1, 2, MP_PAD_SAME},
    {"3x3 s2 M4", 1, 56, 56, 32, 3, 3, 2, 1, 4, MP_PAD_SAME},
    {"3x3 s2 M8", 1, 56, 56, 32, 3, 3, 2, 1, 8, MP_PAD_SAME},
    {"5x5 M1", 1, 56, 56, 32, 5, 5, 1, 1, 1, MP_PAD_SAME},
    {"5x5 M2", 1, 56, 56, 32, 5, 5, 1, 1, 2, MP_PAD_SAME},
    {"5x5 M4", 1, 56, 56, 32, 5, 5, 1, 1, 4, MP_PAD_SAME},
    {"5x5 M8", 1, 56, 56, 32, 5, 5, 1, 1, 8, MP_PAD_SAME},
    {"5x5 M1 C=256", 1, 56, 56, 256, 5, 5, 1, 1, 1, MP_PAD_SAME},
    {"5x5 s2 M2", 1, 56, 56, 32, 5, 5, 2, 1, 2, MP_PAD_SAME},
    {"5x5 s2 M4", 1, 56, 56, 32, 5, 5, 2, 1, 4, MP_PAD_SAME},
    {"5x5 s2 M8", 1, 56, 56, 32, 5, 5, 2, 1, 8, MP_PAD_SAME},
    {"3x3 M3", 1, 56, 56, 32, 3, 3, 1, 1, 3, MP_PAD_SAME},
    {"3x3 M2 C=40", 1, 56, 56, 40, 3, 3, 1, 1, 2, MP_PAD_SAME},
    {"3x3 M8 C=3", 1, 112, 112, 3, 3, 3, 1, 1, 8, MP_PAD_SAME},
    {"3x3 M4 C=8", 1, 56, 56, 8, 3, 3, 1, 1, 4, MP_PAD_SAME},
    {"3x3 M16", 1, 28, 28, 32, 3, 3, 1, 1, 16, MP_PAD_SAME},
};

enum { DT_F32, DT_QS8, DT_QU8, DT_QC8, DT_COUNT };
static const char *const k_dt_names[DT_COUNT] = {"f32", "qs8", "qu8", "qc8"};

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t median_ns(uint64_t *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_u64);
    return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

static uint32_t g_seed = 12345;
static uint32_t next_u32(void)
{
    g_seed = g_seed * 1664525u + 1013904223u;
    return g_seed >> 8;
}

/* The one-operator model of shape s in dtype dt (malloc'd bytes), or NULL. */
static void *shape_model(const shape *s, int dt, size_t *size)
{
    int32_t oc = s->c * s->mult;
    size_t taps = (size_t)s->kh * (size_t)s->kw, nw = taps * (size_t)oc;
    mp_tfw *w = mp_tfw_create();
    void *wbuf = malloc(nw * sizeof(float)), *bbuf = malloc((size_t)oc * sizeof(float));
    float *scales = malloc((size_t)oc * sizeof(float));
    float *bias_s = malloc((size_t)oc * sizeof(float));
    void *bytes = NULL;
    if (!w || !wbuf || !bbuf || !scales || !bias_s)
        goto done;
    mp_dtype adt = dt == DT_F32 ? MP_DT_FLOAT32 : dt == DT_QU8 ? MP_DT_UINT8 : MP_DT_INT8;
    mp_dtype bdt = dt == DT_F32 ? MP_DT_FLOAT32 : MP_DT_INT32;
    for (size_t i = 0; i < nw; i++) {
        if (dt == DT_F32)
            ((float *)wbuf)[i] = (float)(next_u32() % 2001) / 1000.0f - 1.0f;
        else
            ((int8_t *)wbuf)[i] = (int8_t)((int)(next_u32() % 255) - 127);
    }
    for (int32_t i = 0; i < oc; i++) {
        if (dt == DT_F32)
            ((float *)bbuf)[i] = (float)(next_u32() % 201) / 100.0f - 1.0f;
        else
            ((int32_t *)bbuf)[i] = (int32_t)(next_u32() % 2001) - 1000;
        scales[i] = dt == DT_QC8 ? 0.005f + 0.0001f * (float)(i % 50) : 0.01f;
    }
    size_t es = dt == DT_F32 ? 4 : 1;
    int wb = mp_tfw_buffer(w, wbuf, nw * es), bb = mp_tfw_buffer(w, bbuf, (size_t)oc * 4);
    int x = mp_tfw_tensor(w, "x", adt, 4, (int32_t[]){s->n, s->h, s->w, s->c}, 0, NULL);
    int f = mp_tfw_tensor(w, "filter", adt, 4, (int32_t[]){1, s->kh, s->kw, oc}, wb, NULL);
    int b = mp_tfw_tensor(w, "bias", bdt, 1, &oc, bb, NULL);
    int y = mp_tfw_tensor(w, "y", adt, 4, (int32_t[]){1, 1, 1, 1}, 0, NULL);
    if (dt != DT_F32) {
        float in_s = 0.02f, out_s = 0.02f * 0.01f * 127.0f * sqrtf((float)taps) / 4.0f;
        int64_t in_zp = dt == DT_QU8 ? 130 : -3, w_zp = dt == DT_QU8 ? 127 : 0;
        int nb = dt == DT_QC8 ? oc : 1;
        for (int i = 0; i < nb; i++)
            bias_s[i] = in_s * scales[i];
        mp_tfw_tensor_quant(w, x, 1, &in_s, &in_zp, 0);
        mp_tfw_tensor_quant(w, f, nb, scales, dt == DT_QU8 ? &w_zp : NULL, 3);
        mp_tfw_tensor_quant(w, b, nb, bias_s, NULL, 0);
        mp_tfw_tensor_quant(w, y, 1, &out_s, (int64_t[]){dt == DT_QU8 ? 128 : 0}, 0);
        if (dt == DT_QU8) /* uint8 weights around their zero point 127 */
            for (size_t i = 0; i < nw; i++)
                ((uint8_t *)wbuf)[i] = (uint8_t)(((int8_t *)wbuf)[i] + 127);
    }
    mp_op_options o = mp_tfw_options_default();
    o.padding = s->pad;
    o.stride_h = o.stride_w = s->stride;
    o.dilation_h = o.dilation_w = s->dil;
    o.depth_multiplier = s->mult;
    mp_tfw_op(w, MP_OP_DEPTHWISE_CONV_2D, 3, (int32_t[]){x, f, b}, 1, &y, &o);
    mp_tfw_io(w, 1, &x, 1, &y);
    mp_error err = {0};
    if (mp_tfw_finish(w, &bytes, size, &err) != MP_OK) {
        fprintf(stderr, "bench_dwconv: %s\n", err.msg);
        bytes = NULL;
    }
done:
    mp_tfw_free(w);
    free(wbuf);
    free(bbuf);
    free(scales);
    free(bias_s);
    return bytes;
}

/* A prepared static session of the model under `policy` (left set: a run may prepare its
 * operators again, and reads the policy then), its inputs set; NULL on failure. */
static mp_session *open_session(const void *bytes, size_t size, const char *path, int threads,
                                mp_dwconv_policy policy)
{
    mp_session_options o = {.threads = threads, .mode = MP_MEMORY_STATIC};
    mp_session *s = NULL;
    mp_error err = {0};
    mp_dwconv_set_policy(policy);
    bool ok = mp_session_create(&o, &s, &err) == MP_OK &&
              (bytes ? mp_session_load_memory(s, bytes, size, "bench", &err)
                     : mp_session_load(s, path, &err)) == MP_OK &&
              mp_session_prepare(s, &err) == MP_OK;
    for (int k = 0; ok && k < mp_session_input_count(s); k++) {
        const mp_tensor *in = mp_session_input(s, k);
        void *buf = malloc(in->bytes + 1);
        ok = buf && mp_reference_input(buf, in->dtype, mp_tensor_elements(in), k) &&
             mp_session_set_input(s, k, buf, in->bytes, &err) == MP_OK;
        free(buf);
    }
    if (!ok) {
        fprintf(stderr, "bench_dwconv: %s\n", err.msg[0] ? err.msg : "out of memory");
        mp_session_destroy(s);
        return NULL;
    }
    return s;
}

/* Median ns of `runs` runs (after two warm-up runs) under `policy`; 0 on failure. */
static uint64_t time_runs(mp_session *s, int runs, mp_dwconv_policy policy)
{
    uint64_t *t = calloc((size_t)runs, sizeof *t), med = 0;
    mp_error err = {0};
    mp_dwconv_set_policy(policy);
    for (int r = -2; t && r < runs; r++) {
        if (mp_session_run(s, &err) != MP_OK) {
            fprintf(stderr, "bench_dwconv: %s\n", err.msg);
            free(t);
            return 0;
        }
        if (r >= 0)
            t[r] = mp_session_last_run_ns(s);
    }
    if (t)
        med = median_ns(t, runs);
    free(t);
    return med;
}

/* Largest |a - b| over the largest |a| of output 0 of two sessions (as floats). */
static double output_diff(mp_session *a, mp_session *b)
{
    const mp_tensor *ya = mp_session_output(a, 0);
    size_t n = mp_tensor_elements(ya), bytes = ya->bytes;
    void *pa = malloc(bytes + 1), *pb = malloc(bytes + 1);
    mp_error err = {0};
    double d = -1, big = 0;
    if (pa && pb && mp_session_get_output(a, 0, pa, bytes, &err) == MP_OK &&
        mp_session_get_output(b, 0, pb, bytes, &err) == MP_OK) {
        d = 0;
        for (size_t i = 0; i < n; i++) {
            double u, v;
            if (ya->dtype == MP_DT_FLOAT32) {
                u = ((const float *)pa)[i];
                v = ((const float *)pb)[i];
            } else if (ya->dtype == MP_DT_UINT8) {
                u = ((const uint8_t *)pa)[i];
                v = ((const uint8_t *)pb)[i];
            } else {
                u = ((const int8_t *)pa)[i];
                v = ((const int8_t *)pb)[i];
            }
            d = fmax(d, fabs(u - v));
            big = fmax(big, fabs(u));
        }
        d = big > 0 ? d / big : d;
    }
    free(pa);
    free(pb);
    return d;
}

/* Write the model of s in dtype dt to DIR/dw_<name>_<dtype>.tflite (spaces as '_'). */
static void save_model(const char *dir, const shape *s, int dt, const void *bytes, size_t size)
{
    char path[512];
    int n = snprintf(path, sizeof path, "%s/dw_%s_%s.tflite", dir, s->name, k_dt_names[dt]);
    for (int i = (int)strlen(dir) + 1; i < n && i < (int)sizeof path; i++)
        path[i] = path[i] == ' ' || path[i] == '=' ? '_' : path[i];
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(bytes, 1, size, f) != size)
        fprintf(stderr, "bench_dwconv: cannot write %s\n", path);
    else
        printf("# wrote %s\n", path);
    if (f)
        fclose(f);
}

static int bench_shapes(const shape *shapes, size_t count, int dt_sel, int threads, int runs,
                        const char *save_dir)
{
    printf("%-18s %-4s %-16s %4s %10s %8s %10s %8s %7s %9s\n", "shape", "dtype", "input",
           "taps", "xnnpack ms", "GFLOP/s", "C ms", "GFLOP/s", "ratio", "max diff");
    for (size_t i = 0; i < count; i++) {
        const shape *s = &shapes[i];
        for (int dt = 0; dt < DT_COUNT; dt++) {
            if (dt_sel >= 0 && dt != dt_sel)
                continue;
            size_t size = 0;
            void *bytes = shape_model(s, dt, &size);
            if (bytes && save_dir)
                save_model(save_dir, s, dt, bytes, size);
            mp_session *sx = bytes ? open_session(bytes, size, NULL, threads, MP_DWCONV_XNNPACK)
                                   : NULL;
            mp_session *sc = sx ? open_session(bytes, size, NULL, threads, MP_DWCONV_C) : NULL;
            free(bytes);
            if (!sx || !sc) {
                mp_session_destroy(sx);
                return 7;
            }
            double macs = (double)mp_session_macs(sx);
            uint64_t tx = time_runs(sx, runs, MP_DWCONV_XNNPACK);
            uint64_t tc = time_runs(sc, runs, MP_DWCONV_C);
            char in[40];
            snprintf(in, sizeof in, "%dx%dx%dx%d", s->n, s->h, s->w, s->c);
            printf("%-18s %-4s %-16s %4d %10.3f %8.2f", s->name, k_dt_names[dt], in,
                   s->kh * s->kw, (double)tx / 1e6, 2 * macs / (double)tx);
            printf(" %10.3f %8.2f %6.1fx %9.2g\n", (double)tc / 1e6, 2 * macs / (double)tc,
                   (double)tx / (double)tc, output_diff(sx, sc));
            fflush(stdout);
            mp_session_destroy(sx);
            mp_session_destroy(sc);
        }
    }
    return 0;
}

static int bench_model(const char *path, int threads, int runs)
{
    enum { REPEATS = 5 };
    uint64_t tx[REPEATS], tc[REPEATS];
    for (int r = 0; r < REPEATS; r++) {
        mp_session *sx = open_session(NULL, 0, path, threads, MP_DWCONV_XNNPACK);
        tx[r] = sx ? time_runs(sx, runs, MP_DWCONV_XNNPACK) : 0;
        mp_session_destroy(sx);
        mp_session *sc = open_session(NULL, 0, path, threads, MP_DWCONV_AUTO);
        tc[r] = sc ? time_runs(sc, runs, MP_DWCONV_AUTO) : 0;
        mp_session_destroy(sc);
        if (!tx[r] || !tc[r])
            return 7;
    }
    uint64_t mx = median_ns(tx, REPEATS), mc = median_ns(tc, REPEATS);
    printf("%s, threads %d: median of %d sessions' medians of %d runs\n", path, threads,
           REPEATS, runs);
    printf("  depthwise on XNNPACK      %9.3f ms\n", (double)mx / 1e6);
    printf("  depthwise as chosen (C)   %9.3f ms  (%.2fx)\n", (double)mc / 1e6,
           (double)mx / (double)mc);
    return 0;
}

int main(int argc, char **argv)
{
    int threads = 1, runs = 20, model_runs = 10, dt_sel = -1;
    const char *model = NULL, *save_dir = NULL;
    bool mult_set = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--threads") == 0 && v)
            threads = atoi(argv[++i]);
        else if (strcmp(a, "--runs") == 0 && v)
            runs = atoi(argv[++i]);
        else if (strcmp(a, "--model-runs") == 0 && v)
            model_runs = atoi(argv[++i]);
        else if (strcmp(a, "--model") == 0 && v)
            model = argv[++i];
        else if (strcmp(a, "--save") == 0 && v)
            save_dir = argv[++i];
        else if (strcmp(a, "--set") == 0 && v && (strcmp(v, "mult") == 0 || strcmp(v, "windows") == 0))
            mult_set = strcmp(argv[++i], "mult") == 0;
        else if (strcmp(a, "--dtype") == 0 && v) {
            dt_sel = -2;
            for (int d = 0; d < DT_COUNT; d++)
                if (strcmp(v, k_dt_names[d]) == 0)
                    dt_sel = d;
            if (strcmp(v, "all") == 0)
                dt_sel = -1;
            i++;
        } else {
            dt_sel = -3;
            break;
        }
    }
    if (threads < 1 || runs < 1 || model_runs < 1 || dt_sel < -1) {
        fprintf(stderr, "usage: bench_dwconv [--runs N] [--threads N] [--dtype "
                        "f32|qs8|qu8|qc8|all] [--set windows|mult] [--save DIR] [--model PATH] "
                        "[--model-runs N]\n");
        return 2;
    }
    printf("threads %d, median of %d runs per shape\n", threads, runs);
    int rc = mult_set ? bench_shapes(k_mult_shapes, sizeof k_mult_shapes / sizeof *k_mult_shapes,
                                     dt_sel, threads, runs, save_dir)
                      : bench_shapes(k_shapes, sizeof k_shapes / sizeof *k_shapes, dt_sel,
                                     threads, runs, save_dir);
    if (rc == 0 && model)
        rc = bench_model(model, threads, model_runs);
    return rc;
}
