/* Tests of TensorFlow Lite's custom operators AudioSpectrogram and Mfcc (audio.c) and
 * NumericVerify (numeric_verify.c). AudioSpectrogram by hand (a constant signal under a
 * 4-sample Hann window) and against a direct DFT restated here from the definition (periodic
 * Hann window, zero-padding to the next power of two, |X|^2 rounded to float, or its sqrtf)
 * over several channels and frames, strides below, at and above the window; its frame counts
 * at the edges (an input shorter than the window gives no frame). Mfcc by hand (silence: every
 * band at the 1e-12 floor, so only the first DCT coefficient is not 0) and against a
 * reference restated from the definitions (triangular mel bands over the magnitudes, log,
 * DCT-II scaled by sqrt(2 / K)), with the sample rate known only while running. NumericVerify
 * on hand-computed differences for int8, uint8, int16 and float16, and its mismatch refusal.
 * Every refusal with its message (options read from a model too), and a speech-commands-shaped
 * model (float audio [16000, 1] -> AudioSpectrogram(480, 320, squared) -> Mfcc(16000 Hz, 40
 * coefficients) -> conv -> fully connected -> softmax) run through a session: its MFCCs
 * against the references, probabilities finite and summing to 1, static and dynamic modes
 * equal, a sample rate of 0 refused at the run; and by `memprof run` with its inputs from files
 * (without them, the reference inputs' rate 0 refused with exit 2 and a note on --fill; with
 * --fill 1=16000 it runs). */
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

/* ---- references, from the definitions ------------------------------------------------------ */

/* AudioSpectrogram of x [samples, channels] into y [channels, frames, n / 2 + 1]: frame f of
 * channel c is x[f * stride + j][c] times the periodic Hann window 0.5 - 0.5 cos(2 pi j / w),
 * j < w, zero-padded to n, the smallest power of two >= w; P[k] = |sum_j x_j e^{-2 pi i jk/n}|^2
 * computed in double by the plain sum, rounded to float; the magnitude is sqrtf of that. */
static size_t ref_spectrogram(const float *x, size_t samples, size_t channels, size_t w,
                              size_t stride, bool squared, float *y)
{
    size_t n = 1;
    while (n < w)
        n *= 2;
    const size_t bins = n / 2 + 1;
    const size_t frames = samples < w ? 0 : 1 + (samples - w) / stride;
    for (size_t c = 0; c < channels; c++)
        for (size_t f = 0; f < frames; f++)
            for (size_t k = 0; k < bins; k++) {
                double re = 0, im = 0;
                for (size_t j = 0; j < w; j++) {
                    const double hann = 0.5 - 0.5 * cos(2 * M_PI * (double)j / (double)w);
                    const double v = x[(f * stride + j) * channels + c] * hann;
                    const double a = -2 * M_PI * (double)((j * k) % n) / (double)n;
                    re += v * cos(a);
                    im += v * sin(a);
                }
                const float p = (float)(re * re + im * im);
                y[(c * frames + f) * bins + k] = squared ? p : sqrtf(p);
            }
    return frames;
}

/* TensorFlow Lite's mel scale. */
static double ref_mel(double hz)
{
    return 1127.0 * log(1.0 + hz / 700.0);
}

/* Mfcc of `frames` spectrogram frames of `bins` squared magnitudes at `rate` Hz into y
 * (frames x d): the bins used are those from floor(1.5 + lower / h) to floor(upper / h),
 * h = rate / 2 / (bins - 1) Hz apart; band b (b < k) is the triangle on the mel scale rising
 * from edge b - 1 to 1 at edge b and falling to 0 at edge b + 1, where edge e = mel(lower) +
 * (e + 1) (mel(upper) - mel(lower)) / (k + 1) (edge -1 being mel(lower) itself); a band sums
 * sqrt(P) of its bins times the triangle; its log is floored at log(1e-12); then
 * out[i] = sqrt(2 / k) sum_b cos(pi i (b + 0.5) / k) log band[b]. */
static void ref_mfcc(const float *x, size_t frames, size_t bins, double rate, double lower,
                     double upper, int k, int d, float *y)
{
    const double h = rate / 2 / (double)(bins - 1);
    const size_t first = (size_t)(1.5 + lower / h), last = (size_t)(upper / h);
    const double lo = ref_mel(lower), step = (ref_mel(upper) - lo) / (k + 1);
    for (size_t f = 0; f < frames; f++) {
        double band[1024];
        for (int b = 0; b < k; b++) {
            const double left = lo + b * step, peak = lo + (b + 1) * step, right = lo + (b + 2) * step;
            double sum = 0;
            for (size_t i = first; i <= last; i++) {
                const double m = ref_mel((double)i * h);
                double tri = 0;
                if (m > left && m <= peak)
                    tri = (m - left) / (peak - left);
                else if (m > peak && m < right)
                    tri = (right - m) / (right - peak);
                sum += sqrt((double)x[f * bins + i]) * tri;
            }
            band[b] = log(sum > 1e-12 ? sum : 1e-12);
        }
        for (int i = 0; i < d; i++) {
            double s = 0;
            for (int b = 0; b < k; b++)
                s += cos(M_PI * i * (b + 0.5) / k) * band[b];
            y[f * (size_t)d + (size_t)i] = (float)(sqrt(2.0 / k) * s);
        }
    }
}

/* ---- AudioSpectrogram ------------------------------------------------------------------------ */

/* Run AudioSpectrogram on x [samples, channels]; check the output shape [channels, frames,
 * bins] and copy it to y (when not NULL). */
static void run_spec(const float *x, int32_t samples, int32_t channels, int32_t w, int32_t stride,
                     bool squared, int32_t frames, int32_t bins, float *y)
{
    kh_case c;
    kh_init(&c, MP_OP_AUDIO_SPECTROGRAM, NULL);
    c.opt.spec_window = w;
    c.opt.spec_stride = stride;
    c.opt.spec_magnitude_squared = squared;
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){samples, channels}, x);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->rank, 3);
    assert_int_equal(out->dims[0], channels);
    assert_int_equal(out->dims[1], frames);
    assert_int_equal(out->dims[2], bins);
    if (y)
        memcpy(y, out->data, out->bytes);
    kh_free(&c);
}

static void test_spectrogram_hand(void **state)
{
    (void)state;
    /* ones under the window [0, 0.5, 1, 0.5] (W = N = 4): X = [2, -1, 0]; two frames of 6
     * samples at stride 2, both alike */
    const float ones[6] = {1, 1, 1, 1, 1, 1};
    float y[6];
    run_spec(ones, 6, 1, 4, 2, true, 2, 3, y);
    assert_memory_equal(y, ((float[]){4, 1, 0, 4, 1, 0}), sizeof y);
    run_spec(ones, 6, 1, 4, 2, false, 2, 3, y);
    assert_memory_equal(y, ((float[]){2, 1, 0, 2, 1, 0}), sizeof y);
    /* W = 3: the window [0, 0.75, 0.75], padded to N = 4; an impulse at sample 1 gives
     * 0.75 e^{-i pi k / 2}: |X|^2 = 0.5625 in each of the 3 bins */
    run_spec((const float[]){0, 1, 0}, 3, 1, 3, 1, true, 1, 3, y);
    for (int k = 0; k < 3; k++)
        assert_true(fabsf(y[k] - 0.5625f) < 1e-7f);
}

static void test_spectrogram_reference(void **state)
{
    (void)state;
    static const struct {
        int32_t samples, channels, w, stride;
        bool squared;
    } k_cases[] = {
        {64, 1, 16, 8, true},    /* power-of-two window, overlapping frames */
        {100, 2, 12, 12, false}, /* padded to 16, adjacent frames, two channels */
        {90, 3, 5, 7, true},     /* padded to 8, gaps between frames, three channels */
        {40, 2, 33, 1, false},   /* padded to 64, stride 1 */
        {480, 1, 480, 320, true}, /* one speech frame (N 512) */
    };
    uint32_t seed = 11;
    for (size_t t = 0; t < sizeof k_cases / sizeof k_cases[0]; t++) {
        const size_t S = (size_t)k_cases[t].samples, C = (size_t)k_cases[t].channels;
        const size_t W = (size_t)k_cases[t].w, st = (size_t)k_cases[t].stride;
        size_t n = 1;
        while (n < W)
            n *= 2;
        const size_t bins = n / 2 + 1, frames = 1 + (S - W) / st;
        float *x = malloc(S * C * sizeof *x), *got = malloc(C * frames * bins * sizeof *got);
        float *want = malloc(C * frames * bins * sizeof *want);
        for (size_t i = 0; i < S * C; i++)
            x[i] = kh_frand(&seed, 1.0f);
        run_spec(x, (int32_t)S, (int32_t)C, (int32_t)W, (int32_t)st, k_cases[t].squared,
                 (int32_t)frames, (int32_t)bins, got);
        assert_int_equal(ref_spectrogram(x, S, C, W, st, k_cases[t].squared, want), frames);
        /* the FFT and the plain sum agree to ~1e-13 relative in double; what is left is the
         * rounding to float (2^-24): judged at 1e-5 of max(|want|, 1), the sums' scale
         * (W terms of magnitude <= 1) */
        kh_expect_close(got, want, C * frames * bins, 1.0);
        free(x);
        free(got);
        free(want);
    }
}

static void test_spectrogram_frames(void **state)
{
    (void)state;
    const float x[20] = {0};
    /* shorter than the window: no frame (TensorFlow Lite's output_height 0), the bins still
     * [2, 0, 9] */
    run_spec(x, 7, 2, 8, 4, true, 0, 5, NULL);
    run_spec(x, 0, 1, 8, 4, true, 0, 5, NULL);
    /* exactly one window; one sample short of a second; the second */
    run_spec(x, 8, 1, 8, 4, true, 1, 5, NULL);
    run_spec(x, 11, 1, 8, 4, true, 1, 5, NULL);
    run_spec(x, 12, 1, 8, 4, true, 2, 5, NULL);
    /* a stride longer than the input after the first window */
    run_spec(x, 20, 1, 8, 100, false, 1, 5, NULL);
}

static void test_spectrogram_errors(void **state)
{
    (void)state;
    const float x[16] = {0};
    static const struct {
        int32_t w, stride, rank;
        mp_dtype in_dt, out_dt;
        mp_status want;
        const char *needle;
    } bad[] = {
        {1, 1, 2, MP_DT_FLOAT32, MP_DT_FLOAT32, MP_ERR_FORMAT,
         "window_size 1 and stride 1: a window of at least 2 samples and a stride of at least 1 "
         "are needed"},
        {0, 1, 2, MP_DT_FLOAT32, MP_DT_FLOAT32, MP_ERR_FORMAT, "window_size 0 and stride 1"},
        {4, 0, 2, MP_DT_FLOAT32, MP_DT_FLOAT32, MP_ERR_FORMAT, "window_size 4 and stride 0"},
        {(1 << 20) + 1, 1, 2, MP_DT_FLOAT32, MP_DT_FLOAT32, MP_ERR_UNSUPPORTED,
         "window_size 1048577 is over the 1048576 samples memprof runs"},
        {INT32_MAX, 1, 2, MP_DT_FLOAT32, MP_DT_FLOAT32, MP_ERR_UNSUPPORTED,
         "window_size 2147483647 is over"},
        {4, 1, 1, MP_DT_FLOAT32, MP_DT_FLOAT32, MP_ERR_SHAPE,
         "input 't0' has rank 1; needs rank 2 (samples, channels)"},
        {4, 1, 2, MP_DT_INT16, MP_DT_FLOAT32, MP_ERR_UNSUPPORTED, "'t0'"},
        {4, 1, 2, MP_DT_FLOAT32, MP_DT_INT32, MP_ERR_UNSUPPORTED, "'t1'"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        kh_case c;
        kh_init(&c, MP_OP_AUDIO_SPECTROGRAM, NULL);
        c.opt.spec_window = bad[k].w;
        c.opt.spec_stride = bad[k].stride;
        kh_input(&c, bad[k].in_dt, bad[k].rank, (int32_t[]){8, 2}, x);
        kh_output(&c, bad[k].out_dt);
        kh_expect_error(&c, bad[k].want, bad[k].needle);
        kh_free(&c);
    }
}

/* ---- Mfcc ------------------------------------------------------------------------------------ */

typedef struct mfcc_case {
    int32_t a, frames, bins, rate;
    float lower, upper;
    int32_t k, d;
} mfcc_case;

/* Run Mfcc on spectrogram x [a, frames, bins]; the sample rate constant when rate_const,
 * else known only while running; returns the status (the output [a, frames, d] in y). */
static mp_status run_mfcc(const mfcc_case *m, const float *x, bool rate_const, float *y,
                          char *msg, size_t cap)
{
    kh_case c;
    kh_init(&c, MP_OP_MFCC, NULL);
    c.opt.mfcc_lower_hz = m->lower;
    c.opt.mfcc_upper_hz = m->upper;
    c.opt.mfcc_channels = m->k;
    c.opt.mfcc_dct_count = m->d;
    kh_input(&c, MP_DT_FLOAT32, 3, (int32_t[]){m->a, m->frames, m->bins}, x);
    const int32_t one = 1;
    mp_tensor *rate = kh_input(&c, MP_DT_INT32, 1, &one, rate_const ? &m->rate : NULL);
    if (!rate_const)
        memcpy(rate->data, &m->rate, 4);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    mp_status st = kh_run(&c);
    snprintf(msg, cap, "%s", c.err.msg);
    if (st == MP_OK) {
        assert_int_equal(out->rank, 3);
        assert_int_equal(out->dims[0], m->a);
        assert_int_equal(out->dims[1], m->frames);
        assert_int_equal(out->dims[2], m->d);
        memcpy(y, out->data, out->bytes);
    }
    kh_free(&c);
    return st;
}

static void test_mfcc_silence(void **state)
{
    (void)state;
    /* every band at the floor: out[0] = sqrt(2 / K) K ln(1e-12) = sqrt(2 K) ln(1e-12); the other
     * cosines sum to 0 over the K bands */
    const mfcc_case m = {1, 2, 33, 16000, 20, 4000, 8, 5};
    float x[2 * 33] = {0}, y[10];
    char msg[512];
    assert_int_equal(run_mfcc(&m, x, true, y, msg, sizeof msg), MP_OK);
    const double first = sqrt(16.0) * log(1e-12);
    for (int f = 0; f < 2; f++) {
        assert_true(fabs(y[f * 5] - first) < 1e-5 * fabs(first));
        for (int i = 1; i < 5; i++)
            assert_true(fabsf(y[f * 5 + i]) < 1e-5f);
    }
}

static void test_mfcc_reference(void **state)
{
    (void)state;
    static const mfcc_case k_cases[] = {
        {1, 3, 257, 16000, 20, 4000, 40, 13},   /* the speech-commands defaults */
        {2, 2, 257, 16000, 20, 4000, 40, 40},   /* every coefficient, two audio channels */
        {1, 4, 9, 16, 1, 8, 3, 2},              /* 1 Hz per bin, up to the last bin */
        {1, 2, 65, 8000, 0, 3999, 12, 12},      /* from 0 Hz */
        {3, 1, 129, 44100, 300, 11025, 20, 7},
    };
    uint32_t seed = 5;
    for (size_t t = 0; t < sizeof k_cases / sizeof k_cases[0]; t++) {
        const mfcc_case *m = &k_cases[t];
        const size_t frames = (size_t)m->a * (size_t)m->frames, bins = (size_t)m->bins;
        float *x = malloc(frames * bins * sizeof *x), *got = malloc(frames * (size_t)m->d * 4);
        float *want = malloc(frames * (size_t)m->d * 4);
        for (size_t i = 0; i < frames * bins; i++) {
            const float v = kh_frand(&seed, 3.0f);
            x[i] = v * v; /* squared magnitudes */
        }
        char msg[512];
        for (int rate_const = 0; rate_const < 2; rate_const++) {
            if (run_mfcc(m, x, rate_const, got, msg, sizeof msg) != MP_OK)
                fail_msg("case %zu: %s", t, msg);
            ref_mfcc(x, frames, bins, m->rate, m->lower, m->upper, m->k, m->d, want);
            /* double sums of K logs of magnitude <= 28, rounded to float: 1e-5 of max(|want|,
             * 1) leaves room for the orders of the sums */
            kh_expect_close(got, want, frames * (size_t)m->d, 1.0);
        }
        free(x);
        free(got);
        free(want);
    }
}

static void test_mfcc_errors(void **state)
{
    (void)state;
    float x[2 * 9] = {0}, y[64];
    char msg[512];
    static const struct {
        mfcc_case m;
        bool rate_const;
        mp_status want;
        const char *needle;
    } bad[] = {
        {{1, 2, 9, 0, 1, 8, 3, 2}, false, MP_ERR_ARG, "sample rate 't1' is 0; it must be positive"},
        {{1, 2, 9, -16, 1, 8, 3, 2}, true, MP_ERR_ARG, "sample rate 't1' is -16"},
        /* 1 Hz per bin: 9 Hz is bin 9, past the last (8) */
        {{1, 2, 9, 16, 1, 9, 3, 2}, false, MP_ERR_ARG,
         "upper_frequency_limit 9 Hz is beyond the spectrum: the 9 bins of 't0' at sample rate "
         "16 reach 8 Hz"},
        {{1, 2, 9, 16, 1, 8, 10, 2}, true, MP_ERR_SHAPE,
         "filterbank_channel_count 10 is more than the 9 frequency bins of spectrogram 't0'"},
        {{1, 2, 9, 16, 1, 8, 1025, 2}, true, MP_ERR_UNSUPPORTED,
         "filterbank_channel_count 1025 is over the 1024 channels memprof runs"},
        {{1, 2, 1, 16, 1, 8, 1, 1}, true, MP_ERR_SHAPE,
         "spectrogram 't0' has 1 frequency bins; at least 2 are needed"},
        {{1, 2, 9, 16, 1, 8, 3, 4}, true, MP_ERR_FORMAT,
         "filterbank_channel_count 3 and dct_coefficient_count 4: 1 <= dct_coefficient_count <= "
         "filterbank_channel_count is needed"},
        {{1, 2, 9, 16, 1, 8, 0, 0}, true, MP_ERR_FORMAT, "filterbank_channel_count 0 and"},
        {{1, 2, 9, 16, 8, 8, 3, 2}, true, MP_ERR_FORMAT,
         "frequency limits 8..8 Hz: 0 <= lower < upper is needed"},
        {{1, 2, 9, 16, -1, 8, 3, 2}, true, MP_ERR_FORMAT, "frequency limits -1..8 Hz"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        mp_status st = run_mfcc(&bad[k].m, x, bad[k].rate_const, y, msg, sizeof msg);
        if (st != bad[k].want || !strstr(msg, bad[k].needle))
            fail_msg("case %zu: status %d, message '%s'; expected %d with '%s'", k, st, msg,
                     bad[k].want, bad[k].needle);
        if (strstr(msg, "operator #0 Mfcc") == NULL)
            fail_msg("case %zu: the message does not name the operator: %s", k, msg);
    }
    /* the input's rank and the rate's dtype and size */
    static const struct {
        int32_t rank, rate_len;
        mp_dtype rate_dt;
        mp_status want;
        const char *needle;
    } shapes[] = {
        {2, 1, MP_DT_INT32, MP_ERR_SHAPE, "spectrogram 't0' has rank 2; needs rank 3"},
        {3, 2, MP_DT_INT32, MP_ERR_SHAPE, "sample rate 't1' has 2 elements; needs 1"},
        {3, 1, MP_DT_INT64, MP_ERR_UNSUPPORTED, "sample rate 't1' has dtype i64 (supported: i32)"},
    };
    const int64_t rates[2] = {16, 16};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        kh_case c;
        kh_init(&c, MP_OP_MFCC, NULL);
        c.opt = (mp_op_options){.mfcc_lower_hz = 1, .mfcc_upper_hz = 8, .mfcc_channels = 3,
                                .mfcc_dct_count = 2};
        const int32_t *dims = shapes[k].rank == 3 ? (const int32_t[]){1, 2, 9} : (const int32_t[]){2, 9};
        kh_input(&c, MP_DT_FLOAT32, shapes[k].rank, dims, x);
        kh_input(&c, shapes[k].rate_dt, 1, &shapes[k].rate_len, rates);
        kh_output(&c, MP_DT_FLOAT32);
        kh_expect_error(&c, shapes[k].want, shapes[k].needle);
        kh_free(&c);
    }
}

/* ---- NumericVerify --------------------------------------------------------------------------- */

/* NumericVerify of a 4-element input of dtype dt (scale, zero point; count 0: none) against
 * ref; returns the status, the differences in y. */
static mp_status run_nv(mp_dtype dt, const void *q, float scale, int64_t zp, int qcount,
                        const float *ref, float tol, bool log_if_failed, float *y, char *msg,
                        size_t cap)
{
    kh_case c;
    kh_init(&c, MP_OP_NUMERIC_VERIFY, NULL);
    c.opt.nv_tolerance = tol;
    c.opt.nv_log_if_failed = log_if_failed;
    const int32_t d[2] = {2, 2};
    mp_tensor *in = kh_input(&c, dt, 2, d, q);
    const float scales[1] = {scale};
    const int64_t zps[1] = {zp};
    kh_quant(&c, in, qcount, scales, zps, 0);
    kh_input(&c, MP_DT_FLOAT32, 2, d, ref);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    mp_status st = kh_run(&c);
    snprintf(msg, cap, "%s", c.err.msg);
    if (st == MP_OK) {
        assert_int_equal(out->rank, 2);
        assert_int_equal(out->dims[0], 2);
        assert_int_equal(out->dims[1], 2);
        memcpy(y, out->data, 16);
    }
    kh_free(&c);
    return st;
}

static void test_numeric_verify(void **state)
{
    (void)state;
    float y[4];
    char msg[512];
    /* int8, scale 0.5, zero point -1: q [-1, 3, 10, -128] -> [0, 2, 5.5, -63.5] */
    const int8_t q8[4] = {-1, 3, 10, -128};
    const float ref[4] = {0.1f, 2, 5, -63.4f};
    const float want[4] = {0.0f - 0.1f, 0, 0.5f, -63.5f - -63.4f};
    assert_int_equal(run_nv(MP_DT_INT8, q8, 0.5f, -1, 1, ref, 0.05f, true, y, msg, sizeof msg), MP_OK);
    assert_memory_equal(y, want, sizeof y);
    /* verified: tolerance 1 x scale 0.5 bounds the differences (0.5 is not above it) */
    assert_int_equal(run_nv(MP_DT_INT8, q8, 0.5f, -1, 1, ref, 1.0f, true, y, msg, sizeof msg), MP_OK);
    assert_memory_equal(y, want, sizeof y);
    /* tolerance 0.5 x 0.5 = 0.25 < 0.5: element 2 fails the run */
    assert_int_equal(run_nv(MP_DT_INT8, q8, 0.5f, -1, 1, ref, 0.5f, true, y, msg, sizeof msg),
                     MP_ERR_ARG);
    if (!strstr(msg, "operator #0 NumericVerify: mismatch at element 2: reference 5 is quantized "
                     "to 10 with scale 0.5 and zero point -1: |5 - 5.5| = 0.5 > 0.25 (tolerance "
                     "0.5 of the scale)"))
        fail_msg("unexpected message: %s", msg);
    /* the same without log_if_failed, or with a tolerance below 0.1: only the differences */
    assert_int_equal(run_nv(MP_DT_INT8, q8, 0.5f, -1, 1, ref, 0.5f, false, y, msg, sizeof msg), MP_OK);
    assert_memory_equal(y, want, sizeof y);
    assert_int_equal(run_nv(MP_DT_INT8, q8, 0.5f, -1, 1, ref, 0.09f, true, y, msg, sizeof msg), MP_OK);
    /* uint8, scale 0.25, zero point 128: [128, 129, 0, 255] -> [0, 0.25, -32, 31.75] */
    const uint8_t qu[4] = {128, 129, 0, 255};
    const float ru[4] = {0, 0, -32, 32};
    assert_int_equal(run_nv(MP_DT_UINT8, qu, 0.25f, 128, 1, ru, 2, true, y, msg, sizeof msg), MP_OK);
    assert_memory_equal(y, ((float[]){0, 0.25f, 0, -0.25f}), sizeof y);
    /* int16, scale 2^-10, zero point 0: [1024, -2048, 32767, 0] -> [1, -2, 31.999..., 0] */
    const int16_t q16[4] = {1024, -2048, 32767, 0};
    const float r16[4] = {1, -1, 32, 0.5f};
    assert_int_equal(run_nv(MP_DT_INT16, q16, 1.0f / 1024, 0, 1, r16, 0, false, y, msg, sizeof msg), MP_OK);
    assert_memory_equal(y, ((float[]){0, -1, 32767.0f / 1024 - 32, -0.5f}), sizeof y);
    /* float16 (no quantization: scale 0): 1.5, -2, 65504, 2^-24 */
    const uint16_t qh[4] = {0x3e00, 0xc000, 0x7bff, 0x0001};
    const float rh[4] = {1.5f, -2.5f, 65504, 0};
    assert_int_equal(run_nv(MP_DT_FLOAT16, qh, 0, 0, 0, rh, 0.5f, false, y, msg, sizeof msg), MP_OK);
    assert_memory_equal(y, ((float[]){0, 0.5f, 0, 0x1p-24f}), sizeof y);
    /* verified with scale 0: any difference fails */
    assert_int_equal(run_nv(MP_DT_FLOAT16, qh, 0, 0, 0, rh, 0.5f, true, y, msg, sizeof msg), MP_ERR_ARG);
    if (!strstr(msg, "mismatch at element 1: reference -2.5 is quantized to 0 with scale 0 and "
                     "zero point 0: |-2.5 - -2| = 0.5 > 0 (tolerance 0.5 of the scale)"))
        fail_msg("unexpected message: %s", msg);
}

static void test_numeric_verify_errors(void **state)
{
    (void)state;
    float y[4];
    char msg[512];
    const int8_t q8[4] = {0};
    const float ref[4] = {0}, f[4] = {0};
    /* no quantization; one scale per channel */
    assert_int_equal(run_nv(MP_DT_INT8, q8, 0.5f, 0, 0, ref, 1, true, y, msg, sizeof msg),
                     MP_ERR_UNSUPPORTED);
    if (!strstr(msg, "i8 tensor 't0' has no quantization parameters; one scale and zero point "
                     "are expected"))
        fail_msg("unexpected message: %s", msg);
    /* a float32 input */
    assert_int_equal(run_nv(MP_DT_FLOAT32, f, 0.5f, 0, 1, ref, 1, true, y, msg, sizeof msg),
                     MP_ERR_UNSUPPORTED);
    if (!strstr(msg, "input 't0' has dtype f32 (supported: u8, i8, i16, f16)"))
        fail_msg("unexpected message: %s", msg);
    /* a reference of another size or dtype; a float16 output; per-channel scales */
    static const struct {
        int32_t qcount, ref_len;
        mp_dtype ref_dt, out_dt;
        mp_status want;
        const char *needle;
    } bad[] = {
        {1, 3, MP_DT_FLOAT32, MP_DT_FLOAT32, MP_ERR_SHAPE,
         "reference 't1' [3] has 3 elements; input 't0' [4] has 4"},
        {1, 4, MP_DT_INT8, MP_DT_FLOAT32, MP_ERR_UNSUPPORTED,
         "reference 't1' has dtype i8 (supported: f32)"},
        {1, 4, MP_DT_FLOAT32, MP_DT_FLOAT16, MP_ERR_UNSUPPORTED, "output 't2' is f16; expected f32"},
        {2, 4, MP_DT_FLOAT32, MP_DT_FLOAT32, MP_ERR_UNSUPPORTED, "has one scale per channel"},
    };
    const int32_t d4 = 4;
    const float sc[2] = {1, 1};
    const int64_t zp[2] = {0, 0};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        kh_case c;
        kh_init(&c, MP_OP_NUMERIC_VERIFY, NULL);
        kh_quant(&c, kh_input(&c, MP_DT_INT8, 1, &d4, q8), bad[k].qcount, sc, zp, 0);
        kh_input(&c, bad[k].ref_dt, 1, &bad[k].ref_len, ref);
        kh_output(&c, bad[k].out_dt);
        kh_expect_error(&c, bad[k].want, bad[k].needle);
        kh_free(&c);
    }
}

/* ---- the options, read from a model ------------------------------------------------------------ */

/* A model of one custom operator `code` with `size` bytes of options: AudioSpectrogram on
 * x [64, 1], Mfcc on s [1, 2, 33] and a rate, NumericVerify on q (int8) [4] and r [4]. */
static void *custom_model(const char *code, const uint8_t *options, size_t size, size_t *len)
{
    mp_tfw *w = mp_tfw_create();
    assert_non_null(w);
    int32_t ins[2], out, n_in = 2;
    if (strcmp(code, "AudioSpectrogram") == 0) {
        ins[0] = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 2, (int32_t[]){64, 1}, 0, NULL);
        out = mp_tfw_tensor(w, "spec", MP_DT_FLOAT32, 3, (int32_t[]){1, 7, 9}, 0, NULL);
        n_in = 1;
    } else if (strcmp(code, "Mfcc") == 0) {
        ins[0] = mp_tfw_tensor(w, "s", MP_DT_FLOAT32, 3, (int32_t[]){1, 2, 33}, 0, NULL);
        ins[1] = mp_tfw_tensor(w, "rate", MP_DT_INT32, 1, (int32_t[]){1}, 0, NULL);
        out = mp_tfw_tensor(w, "mfcc", MP_DT_FLOAT32, 3, (int32_t[]){1, 2, 4}, 0, NULL);
    } else {
        ins[0] = mp_tfw_tensor(w, "q", MP_DT_INT8, 1, (int32_t[]){4}, 0, NULL);
        mp_tfw_tensor_quant(w, ins[0], 1, (const float[]){0.5f}, NULL, 0);
        ins[1] = mp_tfw_tensor(w, "r", MP_DT_FLOAT32, 1, (int32_t[]){4}, 0, NULL);
        out = mp_tfw_tensor(w, "diff", MP_DT_FLOAT32, 1, (int32_t[]){4}, 0, NULL);
    }
    assert_int_equal(mp_tfw_custom_op(w, code, options, size, n_in, ins, 1, &out), 0);
    assert_int_equal(mp_tfw_io(w, n_in, ins, 1, &out), 0);
    void *bytes;
    mp_error err = {0};
    assert_int_equal(mp_tfw_finish(w, &bytes, len, &err), MP_OK);
    mp_tfw_free(w);
    return bytes;
}

/* Load a custom_model with options opts (olen bytes); returns the status, the operator's
 * options in *opt (its code checked against `op`). */
static mp_status load_options(const char *code, int32_t op, const uint8_t *opts, size_t olen,
                              mp_op_options *opt, char *msg, size_t cap)
{
    size_t len;
    void *bytes = custom_model(code, opts, olen, &len);
    mp_model *m = NULL;
    mp_error err = {0};
    mp_status st = mp_model_load_memory(bytes, len, "audio", &m, &err);
    free(bytes);
    snprintf(msg, cap, "%s", err.msg);
    if (st == MP_OK) {
        assert_int_equal(m->ops[0].opcode, op);
        *opt = m->ops[0].opt;
        mp_model_free(m);
    }
    return st;
}

/* The same with the n entries e as a FlexBuffer map (8-byte slots; none when n is 0). */
static mp_status load_custom(const char *code, int32_t op, const fxb_entry *e, int n,
                             mp_op_options *opt, char *msg, size_t cap)
{
    uint8_t opts[512];
    const size_t olen = n ? fxb_map(opts, sizeof opts, e, n, 8, 1) : 0;
    return load_options(code, op, opts, olen, opt, msg, cap);
}

static void test_options_read(void **state)
{
    (void)state;
    mp_op_options o = {0};
    char msg[512];
    /* as a converter writes them */
    uint8_t opts[256];
    const mp_op_options want = {.spec_window = 16, .spec_stride = 8,
                                .spec_magnitude_squared = true};
    const size_t olen = fxb_spectrogram(opts, sizeof opts, &want);
    assert_int_equal(load_options("AudioSpectrogram", MP_OP_AUDIO_SPECTROGRAM, opts, olen, &o,
                                  msg, sizeof msg), MP_OK);
    assert_true(o.spec_window == 16 && o.spec_stride == 8 && o.spec_magnitude_squared);
    /* Mfcc's float limits truncated to whole Hz, as AsInt64 */
    const fxb_entry mf[] = {
        {"dct_coefficient_count", MP_FLEX_INT, 4, 0, 0},
        {"filterbank_channel_count", MP_FLEX_INT, 6, 0, 0},
        {"lower_frequency_limit", MP_FLEX_FLOAT, 0, 20.9, 0},
        {"upper_frequency_limit", MP_FLEX_FLOAT, 0, 4000.5, 0},
    };
    assert_int_equal(load_custom("Mfcc", MP_OP_MFCC, mf, 4, &o, msg, sizeof msg), MP_OK);
    assert_true(o.mfcc_lower_hz == 20.0f && o.mfcc_upper_hz == 4000.0f);
    assert_int_equal(o.mfcc_channels, 6);
    assert_int_equal(o.mfcc_dct_count, 4);
    const mp_op_options nv_want = {.nv_tolerance = 5, .nv_log_if_failed = true};
    const size_t nv_len = fxb_numeric_verify(opts, sizeof opts, &nv_want);
    assert_int_equal(load_options("NumericVerify", MP_OP_NUMERIC_VERIFY, opts, nv_len, &o, msg,
                                  sizeof msg), MP_OK);
    assert_true(o.nv_log_if_failed && o.nv_tolerance == 5.0f);
    /* booleans absent: false */
    const fxb_entry spec_min[] = {{"stride", MP_FLEX_INT, 3, 0, 0},
                                  {"window_size", MP_FLEX_INT, 5, 0, 0}};
    assert_int_equal(load_custom("AudioSpectrogram", MP_OP_AUDIO_SPECTROGRAM, spec_min, 2, &o,
                                 msg, sizeof msg), MP_OK);
    assert_true(!o.spec_magnitude_squared && o.spec_window == 5 && o.spec_stride == 3);
    const fxb_entry nv[] = {{"tolerance", MP_FLEX_FLOAT, 0, 5.0, 0}};
    assert_int_equal(load_custom("NumericVerify", MP_OP_NUMERIC_VERIFY, nv, 1, &o, msg,
                                 sizeof msg), MP_OK);
    assert_false(o.nv_log_if_failed);

    /* refusals, each naming the operator and the key */
    static const struct {
        const char *code;
        fxb_entry e[4];
        int n;
        const char *needle;
    } bad[] = {
        {"AudioSpectrogram", {{"stride", MP_FLEX_INT, 3, 0, 0}}, 1,
         "operator 0 (AudioSpectrogram): custom option 'window_size' is missing"},
        {"AudioSpectrogram", {{"stride", MP_FLEX_INT, 3, 0, 0}, {"window_size", MP_FLEX_INT, 1, 0, 0}}, 2,
         "operator 0 (AudioSpectrogram): custom option 'window_size' is 1, outside 2..2147483647"},
        {"AudioSpectrogram", {{"stride", MP_FLEX_INT, 0, 0, 0}, {"window_size", MP_FLEX_INT, 4, 0, 0}}, 2,
         "custom option 'stride' is 0, outside 1..2147483647"},
        {"AudioSpectrogram", {{"stride", MP_FLEX_INT, 1, 0, 0}, {"window_size", MP_FLEX_INT, 1LL << 31, 0, 0}}, 2,
         "custom option 'window_size' is 2147483648, outside 2..2147483647"},
        {"Mfcc", {{"dct_coefficient_count", MP_FLEX_INT, 4, 0, 0},
                  {"filterbank_channel_count", MP_FLEX_INT, 3, 0, 0},
                  {"lower_frequency_limit", MP_FLEX_INT, 20, 0, 0},
                  {"upper_frequency_limit", MP_FLEX_INT, 4000, 0, 0}}, 4,
         "operator 0 (Mfcc): custom option 'dct_coefficient_count' is 4, outside 1..3"},
        {"Mfcc", {{"dct_coefficient_count", MP_FLEX_INT, 1, 0, 0},
                  {"filterbank_channel_count", MP_FLEX_INT, 0, 0, 0},
                  {"lower_frequency_limit", MP_FLEX_INT, 20, 0, 0},
                  {"upper_frequency_limit", MP_FLEX_INT, 4000, 0, 0}}, 4,
         "custom option 'filterbank_channel_count' is 0, outside 1..2147483647"},
        {"Mfcc", {{"dct_coefficient_count", MP_FLEX_INT, 1, 0, 0},
                  {"filterbank_channel_count", MP_FLEX_INT, 3, 0, 0},
                  {"lower_frequency_limit", MP_FLEX_INT, 4000, 0, 0},
                  {"upper_frequency_limit", MP_FLEX_INT, 20, 0, 0}}, 4,
         "custom option 'upper_frequency_limit' is 20, outside 4001..2147483647"},
        {"Mfcc", {{"dct_coefficient_count", MP_FLEX_INT, 1, 0, 0},
                  {"filterbank_channel_count", MP_FLEX_INT, 3, 0, 0},
                  {"lower_frequency_limit", MP_FLEX_FLOAT, 0, -0.5 - 1, 0},
                  {"upper_frequency_limit", MP_FLEX_INT, 20, 0, 0}}, 4,
         "custom option 'lower_frequency_limit' is -1, outside 0..2147483646"},
        {"Mfcc", {{"dct_coefficient_count", MP_FLEX_INT, 1, 0, 0},
                  {"filterbank_channel_count", MP_FLEX_INT, 3, 0, 0},
                  {"upper_frequency_limit", MP_FLEX_INT, 20, 0, 0}}, 3,
         "custom option 'lower_frequency_limit' is missing"},
        {"NumericVerify", {{"log_if_failed", MP_FLEX_BOOL, 1, 0, 0}}, 1,
         "operator 0 (NumericVerify): custom option 'tolerance' is missing"},
        {"NumericVerify", {{"tolerance", MP_FLEX_NULL, 0, 0, 0}}, 1,
         "custom option 'tolerance' is missing"},
        {"NumericVerify", {{0}}, 0, "operator 0 (NumericVerify) has no custom options"},
        {"Mfcc", {{0}}, 0, "operator 0 (Mfcc) has no custom options"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        mp_status st = load_custom(bad[k].code, 0, bad[k].e, bad[k].n, &o, msg, sizeof msg);
        if (st != MP_ERR_FORMAT || !strstr(msg, bad[k].needle))
            fail_msg("case %zu: status %d, message '%s'; expected '%s'", k, st, msg, bad[k].needle);
    }
    /* options that are not a map */
    const uint8_t scalar[3] = {7, MP_FLEX_INT << 2, 1};
    assert_int_equal(load_options("AudioSpectrogram", 0, scalar, 3, &o, msg, sizeof msg),
                     MP_ERR_FORMAT);
    if (!strstr(msg, "operator 0 (AudioSpectrogram): custom options are not a FlexBuffer map: int"))
        fail_msg("unexpected message: %s", msg);
}

/* ---- a speech-commands-shaped model ------------------------------------------------------------ */

#define SR 16000
#define FRAMES 49 /* 1 + (16000 - 480) / 320 */
#define BINS 257  /* 512 / 2 + 1 */
#define COEFFS 40
#define CLASSES 4

/* audio [16000, 1] and rate [1] in; AudioSpectrogram(480, 320, squared) -> spec [1, 49, 257];
 * Mfcc(rate, 20..4000 Hz, 40 channels, 40 coefficients) -> mfcc [1, 49, 40]; RESHAPE ->
 * [1, 49, 40, 1]; CONV_2D 3x3, 2 filters, stride 2, SAME, RELU -> [1, 25, 20, 2]; RESHAPE ->
 * [1, 1000]; FULLY_CONNECTED -> [1, 4]; SOFTMAX -> probs. Outputs probs and mfcc. */
static void *speech_model(size_t *size)
{
    static float filt[2 * 9], bias[2], fcw[CLASSES * 1000], fcb[CLASSES];
    kh_fill(filt, 18, 3, 0.05f);
    kh_fill(bias, 2, 4, 0.1f);
    kh_fill(fcw, CLASSES * 1000, 5, 0.01f);
    kh_fill(fcb, CLASSES, 6, 0.1f);
    const int32_t s4[4] = {1, FRAMES, COEFFS, 1}, s2[2] = {1, 1000};
    mp_tfw *w = mp_tfw_create();
    assert_non_null(w);
    int audio = mp_tfw_tensor(w, "decoded_sample_data", MP_DT_FLOAT32, 2, (int32_t[]){SR, 1}, 0, NULL);
    int rate = mp_tfw_tensor(w, "decoded_sample_data:1", MP_DT_INT32, 1, (int32_t[]){1}, 0, NULL);
    int spec = mp_tfw_tensor(w, "AudioSpectrogram", MP_DT_FLOAT32, 3, (int32_t[]){1, FRAMES, BINS}, 0, NULL);
    int mfcc = mp_tfw_tensor(w, "Mfcc", MP_DT_FLOAT32, 3, (int32_t[]){1, FRAMES, COEFFS}, 0, NULL);
    int shp4 = mp_tfw_tensor(w, "shape4", MP_DT_INT32, 1, (int32_t[]){4}, mp_tfw_buffer(w, s4, 16), NULL);
    int img = mp_tfw_tensor(w, "Reshape", MP_DT_FLOAT32, 4, s4, 0, NULL);
    int fw = mp_tfw_tensor(w, "conv_w", MP_DT_FLOAT32, 4, (int32_t[]){2, 3, 3, 1}, mp_tfw_buffer(w, filt, sizeof filt), NULL);
    int fb = mp_tfw_tensor(w, "conv_b", MP_DT_FLOAT32, 1, (int32_t[]){2}, mp_tfw_buffer(w, bias, sizeof bias), NULL);
    int conv = mp_tfw_tensor(w, "Relu", MP_DT_FLOAT32, 4, (int32_t[]){1, 25, 20, 2}, 0, NULL);
    int shp2 = mp_tfw_tensor(w, "shape2", MP_DT_INT32, 1, (int32_t[]){2}, mp_tfw_buffer(w, s2, 8), NULL);
    int flat = mp_tfw_tensor(w, "Reshape_1", MP_DT_FLOAT32, 2, s2, 0, NULL);
    int ww = mp_tfw_tensor(w, "fc_w", MP_DT_FLOAT32, 2, (int32_t[]){CLASSES, 1000}, mp_tfw_buffer(w, fcw, sizeof fcw), NULL);
    int wb = mp_tfw_tensor(w, "fc_b", MP_DT_FLOAT32, 1, (int32_t[]){CLASSES}, mp_tfw_buffer(w, fcb, sizeof fcb), NULL);
    int logits = mp_tfw_tensor(w, "add_2", MP_DT_FLOAT32, 2, (int32_t[]){1, CLASSES}, 0, NULL);
    int probs = mp_tfw_tensor(w, "labels_softmax", MP_DT_FLOAT32, 2, (int32_t[]){1, CLASSES}, 0, NULL);
    uint8_t so[128], mo[256];
    const mp_op_options spec_opt = {.spec_window = 480, .spec_stride = 320, .spec_magnitude_squared = true};
    const mp_op_options mfcc_opt = {.mfcc_lower_hz = 20, .mfcc_upper_hz = 4000, .mfcc_channels = 40,
                                    .mfcc_dct_count = COEFFS};
    const size_t sl = fxb_spectrogram(so, sizeof so, &spec_opt), ml = fxb_mfcc(mo, sizeof mo, &mfcc_opt);
    mp_tfw_custom_op(w, "AudioSpectrogram", so, sl, 1, &audio, 1, &spec);
    mp_tfw_custom_op(w, "Mfcc", mo, ml, 2, (int32_t[]){spec, rate}, 1, &mfcc);
    mp_op_options o = mp_tfw_options_default();
    mp_tfw_op(w, MP_OP_RESHAPE, 2, (int32_t[]){mfcc, shp4}, 1, &img, &o);
    o.padding = MP_PAD_SAME;
    o.stride_w = o.stride_h = 2;
    o.activation = MP_ACT_RELU;
    mp_tfw_op(w, MP_OP_CONV_2D, 3, (int32_t[]){img, fw, fb}, 1, &conv, &o);
    o = mp_tfw_options_default();
    mp_tfw_op(w, MP_OP_RESHAPE, 2, (int32_t[]){conv, shp2}, 1, &flat, &o);
    mp_tfw_op(w, MP_OP_FULLY_CONNECTED, 3, (int32_t[]){flat, ww, wb}, 1, &logits, &o);
    o.beta = 1.0f;
    mp_tfw_op(w, MP_OP_SOFTMAX, 1, &logits, 1, &probs, &o);
    mp_tfw_io(w, 2, (int32_t[]){audio, rate}, 2, (int32_t[]){probs, mfcc});
    const mp_test_model m = mp_test_tfw_finish(w);
    *size = m.size;
    return m.bytes;
}

/* A second of audio: a 440 Hz tone over low noise, so every band holds energy. */
static void speech_audio(float *x)
{
    uint32_t seed = 17;
    for (int i = 0; i < SR; i++)
        x[i] = 0.5f * (float)sin(2 * M_PI * 440.0 * i / SR) + kh_frand(&seed, 0.05f);
}

static void run_speech(mp_memory_mode mode, void *out[2], size_t sizes[2])
{
    size_t size;
    void *bytes = speech_model(&size);
    mp_session *s = kh_session(mode, bytes, size, "speech");
    float *x = malloc(SR * sizeof *x);
    speech_audio(x);
    const int32_t rate = SR;
    mp_test_set_input(s, 0, x, SR * sizeof *x);
    mp_test_set_input(s, 1, &rate, 4);
    mp_test_run(s);
    const mp_tensor *p = mp_session_output(s, 0), *mf = mp_session_output(s, 1);
    assert_int_equal(p->rank, 2);
    assert_int_equal(p->dims[0], 1);
    assert_int_equal(p->dims[1], CLASSES);
    double sum = 0;
    for (int i = 0; i < CLASSES; i++) {
        const float v = ((const float *)p->data)[i];
        assert_true(isfinite(v) && v >= 0 && v <= 1);
        sum += v;
    }
    assert_true(fabs(sum - 1.0) < 1e-5);
    /* the MFCCs against the references chained: spectrogram, then Mfcc */
    assert_int_equal(mf->rank, 3);
    assert_int_equal(mf->dims[1], FRAMES);
    assert_int_equal(mf->dims[2], COEFFS);
    float *spec = malloc((size_t)FRAMES * BINS * sizeof *spec), *want = malloc(FRAMES * COEFFS * 4);
    assert_int_equal(ref_spectrogram(x, SR, 1, 480, 320, true, spec), FRAMES);
    ref_mfcc(spec, FRAMES, BINS, SR, 20, 4000, 40, COEFFS, want);
    kh_expect_close(mf->data, want, FRAMES * COEFFS, 1.0);
    for (int i = 0; i < 2; i++) {
        const mp_tensor *t = mp_session_output(s, i);
        sizes[i] = t->bytes;
        out[i] = malloc(t->bytes);
        memcpy(out[i], t->data, t->bytes);
    }
    /* a sample rate of 0 fails the next run, naming the operator and the input */
    const int32_t zero = 0;
    mp_test_set_input(s, 1, &zero, 4);
    mp_error err = {0};
    assert_int_equal(mp_session_run(s, &err), MP_ERR_ARG);
    if (!strstr(err.msg, "operator #1 Mfcc: sample rate 'decoded_sample_data:1' is 0; it must be positive"))
        fail_msg("unexpected message: %s", err.msg);
    free(spec);
    free(want);
    free(x);
    mp_session_destroy(s);
}

static void test_speech_model(void **state)
{
    (void)state;
    kh_expect_modes_equal(run_speech, 2);
}

/* The probabilities memprof run --output-dir wrote: CLASSES floats summing to 1. */
static void expect_written_probabilities(void)
{
    size_t n;
    float *p = mp_test_read_file(mp_test_tmp_path("output_0.bin"), &n);
    assert_non_null(p);
    assert_int_equal(n, CLASSES * sizeof(float));
    assert_true(fabs((double)p[0] + p[1] + p[2] + p[3] - 1.0) < 1e-5);
    free(p);
}

/* `memprof run` on the speech model with the audio and the rate from files, in static and
 * dynamic modes: exit 0, the probabilities shown and written (4 floats summing to 1); without
 * input files the reference inputs give the rate 0: refused with exit 2, naming it. */
static void test_speech_cli(void **state)
{
    (void)state;
    size_t size;
    void *bytes = speech_model(&size);
    assert_int_equal(mp_test_tmpdir_make("mp_audio"), 0);
    char model[512], audio[512], rate[512], log[512];
    snprintf(model, sizeof model, "%s", mp_test_tmp_path("speech.tflite"));
    snprintf(audio, sizeof audio, "%s", mp_test_tmp_path("audio.bin"));
    snprintf(rate, sizeof rate, "%s", mp_test_tmp_path("rate.bin"));
    snprintf(log, sizeof log, "%s", mp_test_tmp_path("log.txt"));
    mp_test_write_bytes(model, bytes, size);
    free(bytes);
    float *x = malloc(SR * sizeof *x);
    speech_audio(x);
    mp_test_write_bytes(audio, x, SR * sizeof *x);
    free(x);
    const int32_t sr = SR;
    mp_test_write_bytes(rate, &sr, 4);
    static const char *modes[2] = {"static", "dynamic"};
    char cmd[4096];
    size_t n;
    for (int k = 0; k < 2; k++) {
        snprintf(cmd, sizeof cmd, "'%s/memprof' run '%s' --memory %s --input 0='%s' "
                 "--input 1='%s' --output-dir '%s' >'%s' 2>&1", MP_BINARY_DIR, model, modes[k],
                 audio, rate, mp_test_tmpdir(), log);
        const int rc = system(cmd);
        char *text = mp_test_read_file(log, &n);
        if (!WIFEXITED(rc) || WEXITSTATUS(rc) != 0)
            fail_msg("memprof run --memory %s failed (%d): %s", modes[k], rc, text ? text : "");
        if (!text || !strstr(text, "labels_softmax  f32 [1,4]"))
            fail_msg("the probabilities are not shown as f32 [1,4]: %s", text ? text : "");
        free(text);
        expect_written_probabilities();
    }
    snprintf(cmd, sizeof cmd, "'%s/memprof' run '%s' >'%s' 2>&1", MP_BINARY_DIR, model, log);
    const int rc = system(cmd);
    char *text = mp_test_read_file(log, &n);
    assert_true(WIFEXITED(rc));
    assert_int_equal(WEXITSTATUS(rc), 2);
    if (!text || !strstr(text, "operator #1 Mfcc: sample rate 'decoded_sample_data:1' is 0; it "
                               "must be positive") ||
        !strstr(text, "note: the reference formula gave the values of 'decoded_sample_data', "
                      "'decoded_sample_data:1' (see --help); give an input's values with "
                      "--fill NAME=VALUE"))
        fail_msg("unexpected output: %s", text ? text : "");
    free(text);
    /* the rate as one value on the command line (the audio from the reference formula) */
    snprintf(cmd, sizeof cmd, "'%s/memprof' run '%s' --fill 1=%d --output-dir '%s' >'%s' 2>&1",
             MP_BINARY_DIR, model, SR, mp_test_tmpdir(), log);
    const int rc2 = system(cmd);
    text = mp_test_read_file(log, &n);
    if (!WIFEXITED(rc2) || WEXITSTATUS(rc2) != 0)
        fail_msg("memprof run --fill 1=%d failed (%d): %s", SR, rc2, text ? text : "");
    free(text);
    expect_written_probabilities();
    mp_test_tmpdir_remove();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spectrogram_hand),
        cmocka_unit_test(test_spectrogram_reference),
        cmocka_unit_test(test_spectrogram_frames),
        cmocka_unit_test(test_spectrogram_errors),
        cmocka_unit_test(test_mfcc_silence),
        cmocka_unit_test(test_mfcc_reference),
        cmocka_unit_test(test_mfcc_errors),
        cmocka_unit_test(test_numeric_verify),
        cmocka_unit_test(test_numeric_verify_errors),
        cmocka_unit_test(test_options_read),
        cmocka_unit_test(test_speech_model),
        cmocka_unit_test(test_speech_cli),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
