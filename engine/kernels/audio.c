/* Kernels: the speech front end of TensorFlow Lite's custom operators AudioSpectrogram and
 * Mfcc (its audio_spectrogram.cc and mfcc.cc over internal/spectrogram.cc,
 * mfcc_mel_filterbank.cc and mfcc_dct.cc; the speech-commands models), plain C in double as
 * there.
 *
 * AudioSpectrogram: input float32 [samples, channels] (channels interleaved), options
 * window_size W (>= 2), stride S (>= 1), magnitude_squared. Each channel is cut into frames of
 * W samples starting every S samples, 1 + (samples - W) / S of them (none when samples < W);
 * a frame is multiplied by the periodic Hann window w[j] = 0.5 - 0.5 cos(2 pi j / W),
 * zero-padded to N, the smallest power of two >= W, and transformed (fft.h). Output float32
 * [channels, frames, N / 2 + 1]: |X[k]|^2 rounded to float32, or with magnitude_squared false
 * the square root (sqrtf) of that float.
 *
 * Mfcc: input float32 [a, frames, bins], a squared-magnitude spectrogram, and the sample rate
 * (int32, one element, read at every run); options lower_frequency_limit and
 * upper_frequency_limit (Hz), filterbank_channel_count K, dct_coefficient_count D (1..K).
 * Per frame: the square root of bins start = floor(1.5 + lower / h) .. end = floor(upper / h),
 * h = rate / 2 / (bins - 1) Hz per bin (DC left out, as HTK); K triangular bands on the mel
 * scale mel(f) = 1127 ln(1 + f / 700), their centres c[0..K] spaced evenly from mel(lower)
 * (excluded) to mel(upper) (c[K], the last band's upper edge): a bin between c[b] and c[b+1]
 * gives its value times (c[b+1] - mel) / (c[b+1] - c[b]) to band b and the rest to band b + 1
 * (c[-1] = mel(lower)); the log of each band, floored at 1e-12; then the DCT
 * out[i] = sqrt(2 / K) sum_j cos(pi i (j + 0.5) / K) logband[j], i < D. Output float32
 * [a, frames, D].
 *
 * Refused, one line naming the operator: a window over MP_SPEC_MAX_WINDOW samples (its FFT
 * scratch); a filterbank of more channels than MP_MFCC_MAX_CHANNELS (its K x D DCT table and
 * steps per frame) or than the spectrogram has bins (bands left without a bin: TensorFlow
 * Lite logs "Missing bands" and runs them at the floor); fewer than 2 bins; a sample rate
 * <= 0 or an upper limit beyond the spectrum (end >= bins, which fails TensorFlow Lite's run
 * too), MP_ERR_ARG as other refused input values, at infer when the rate is a constant, else
 * at the run. Option values TensorFlow Lite cannot initialize with are refused by the reader
 * (tflite_custom.c) and again here for nodes built otherwise.
 * The window, the FFT buffer and its twiddles, the filterbank and the DCT table are the
 * operator's scratch, computed at every run (the sample rate may change between runs). */
#include <math.h>
#include <string.h>

#include "engine/kernels/fft.h"
#include "engine/kernels/kernel.h"

/* The longest window memprof runs: its FFT scratch is (W + 4 N) doubles, N < 2 W. */
#define MP_SPEC_MAX_WINDOW (1 << 20)
/* The most filterbank channels memprof runs: the DCT table holds K x D <= K^2 doubles. */
#define MP_MFCC_MAX_CHANNELS 1024
/* Mel bands are floored here before their log (TensorFlow Lite's kFilterbankFloor). */
#define MFCC_FLOOR 1e-12

/* ---- AudioSpectrogram -------------------------------------------------------------------- */

typedef struct spec_geom {
    size_t window, stride, samples, channels, frames, fft, bins;
    size_t scratch; /* doubles: the window, then the frame (N complex), then the twiddles */
} spec_geom;

static mp_status spec_geometry(mp_node *n, spec_geom *g)
{
    const mp_op_options *o = n->opt;
    const mp_tensor *in = n->in[0];
    if (o->spec_window < 2 || o->spec_stride < 1)
        return mp_node_fail(n, MP_ERR_FORMAT, "window_size %d and stride %d: a window of at "
                            "least 2 samples and a stride of at least 1 are needed",
                            o->spec_window, o->spec_stride);
    if (o->spec_window > MP_SPEC_MAX_WINDOW)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "window_size %d is over the %d samples "
                            "memprof runs", o->spec_window, MP_SPEC_MAX_WINDOW);
    memset(g, 0, sizeof *g);
    g->window = (size_t)o->spec_window;
    g->stride = (size_t)o->spec_stride;
    g->samples = (size_t)in->dims[0];
    g->channels = (size_t)in->dims[1];
    g->frames = g->samples < g->window ? 0 : 1 + (g->samples - g->window) / g->stride;
    for (g->fft = 1; g->fft < g->window; g->fft <<= 1)
        ;
    g->bins = g->fft / 2 + 1;
    /* at most 2^20 + 4 * 2^20 doubles: no overflow */
    g->scratch = g->frames && g->channels ? g->window + 4 * g->fft : 0;
    return MP_OK;
}

static mp_status spec_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 1, 1, 0);
    if (st != MP_OK || (st = mp_node_check_f32_io(n)) != MP_OK)
        return st;
    const mp_tensor *in = n->in[0];
    if (in->rank != 2)
        return mp_node_fail(n, MP_ERR_SHAPE, "input '%s' has rank %d; needs rank 2 (samples, "
                            "channels)", mp_tname(in), in->rank);
    spec_geom g;
    if ((st = spec_geometry(n, &g)) != MP_OK)
        return st;
    const int32_t dims[3] = {(int32_t)g.channels, (int32_t)g.frames, (int32_t)g.bins};
    if ((st = mp_node_set_output_shape(n, 3, dims)) != MP_OK)
        return st;
    n->scratch_bytes = g.scratch * sizeof(double);
    return MP_OK;
}

static mp_status spec_run(mp_node *n)
{
    spec_geom g;
    mp_status st = spec_geometry(n, &g);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0];
    mp_tensor *out = n->out[0];
    if (in->rank != 2 || mp_tensor_elements(in) != g.samples * g.channels)
        return mp_node_fail(n, MP_ERR_SHAPE, "input '%s' is not [samples, channels]",
                            mp_tname(in));
    if (out->rank != 3 || (size_t)out->dims[0] != g.channels ||
        (size_t)out->dims[1] != g.frames || (size_t)out->dims[2] != g.bins)
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' does not have the inferred shape",
                            mp_tname(out));
    if (g.scratch == 0)
        return MP_OK; /* no frame */
    if (!n->scratch || n->scratch_bytes < g.scratch * sizeof(double))
        return mp_node_fail(n, MP_ERR_ARG, "run without the %zu bytes of scratch infer declared",
                            g.scratch * sizeof(double));
    double *window = n->scratch, *z = window + g.window, *tw = z + 2 * g.fft;
    for (size_t j = 0; j < g.window; j++)
        window[j] = 0.5 - 0.5 * cos(2.0 * M_PI * (double)j / (double)g.window);
    mp_fft_twiddles(tw, g.fft);
    const float *x = in->data;
    float *y = out->data;
    const bool squared = n->opt->spec_magnitude_squared;
    for (size_t c = 0; c < g.channels; c++)
        for (size_t f = 0; f < g.frames; f++, y += g.bins) {
            const float *frame = x + f * g.stride * g.channels + c;
            memset(z, 0, 2 * g.fft * sizeof *z);
            for (size_t j = 0; j < g.window; j++)
                z[2 * j] = (double)frame[j * g.channels] * window[j];
            mp_fft_1d(z, g.fft, tw, NULL);
            for (size_t k = 0; k < g.bins; k++) {
                const float p = (float)(z[2 * k] * z[2 * k] + z[2 * k + 1] * z[2 * k + 1]);
                y[k] = squared ? p : sqrtf(p);
            }
        }
    return MP_OK;
}

/* ---- Mfcc -------------------------------------------------------------------------------- */

/* The scratch of one node: doubles (centres K + 1, weights per bin, the DCT table D x K, the
 * bands of a frame K), then int32 (the band below each bin); offsets in elements. */
typedef struct mfcc_layout {
    size_t bins, frames, K, D;
    size_t center, weight, cosine, work, n_doubles, bytes;
} mfcc_layout;

static bool mfcc_add(size_t *at, size_t count, size_t *off)
{
    *off = *at;
    return !__builtin_add_overflow(*at, count, at);
}

static mp_status mfcc_plan(mp_node *n, mfcc_layout *L)
{
    const mp_op_options *o = n->opt;
    const mp_tensor *in = n->in[0];
    if (o->mfcc_channels < 1 || o->mfcc_dct_count < 1 || o->mfcc_dct_count > o->mfcc_channels)
        return mp_node_fail(n, MP_ERR_FORMAT, "filterbank_channel_count %d and "
                            "dct_coefficient_count %d: 1 <= dct_coefficient_count <= "
                            "filterbank_channel_count is needed", o->mfcc_channels,
                            o->mfcc_dct_count);
    if (!(o->mfcc_lower_hz >= 0.0f && o->mfcc_upper_hz > o->mfcc_lower_hz))
        return mp_node_fail(n, MP_ERR_FORMAT, "frequency limits %g..%g Hz: 0 <= lower < upper "
                            "is needed", (double)o->mfcc_lower_hz, (double)o->mfcc_upper_hz);
    if (o->mfcc_channels > MP_MFCC_MAX_CHANNELS)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "filterbank_channel_count %d is over the %d "
                            "channels memprof runs", o->mfcc_channels, MP_MFCC_MAX_CHANNELS);
    memset(L, 0, sizeof *L);
    L->bins = (size_t)in->dims[2];
    L->frames = (size_t)in->dims[0] * (size_t)in->dims[1];
    L->K = (size_t)o->mfcc_channels;
    L->D = (size_t)o->mfcc_dct_count;
    if (L->bins < 2)
        return mp_node_fail(n, MP_ERR_SHAPE, "spectrogram '%s' has %zu frequency bins; at least "
                            "2 are needed", mp_tname(in), L->bins);
    if (L->K > L->bins)
        return mp_node_fail(n, MP_ERR_SHAPE, "filterbank_channel_count %zu is more than the %zu "
                            "frequency bins of spectrogram '%s'", L->K, L->bins, mp_tname(in));
    size_t at = 0, bytes;
    if (!mfcc_add(&at, L->K + 1, &L->center) || !mfcc_add(&at, L->bins, &L->weight) ||
        !mfcc_add(&at, L->K * L->D, &L->cosine) || !mfcc_add(&at, L->K, &L->work) ||
        __builtin_mul_overflow(at, sizeof(double), &bytes) ||
        __builtin_mul_overflow(L->bins, sizeof(int32_t), &L->bytes) ||
        __builtin_add_overflow(L->bytes, bytes, &L->bytes))
        return mp_node_fail(n, MP_ERR_SHAPE, "spectrogram '%s' needs more scratch than can be "
                            "addressed", mp_tname(in));
    L->n_doubles = at;
    return MP_OK;
}

/* The filterbank's first and last bin at `rate`, checked: the rate positive, the upper limit
 * within the spectrum. *hz: Hz per bin. */
static mp_status mfcc_bins(mp_node *n, const mfcc_layout *L, int64_t rate, double *hz,
                           size_t *start, size_t *end)
{
    const mp_tensor *r = n->in[1];
    if (rate <= 0)
        return mp_node_fail(n, MP_ERR_ARG, "sample rate '%s' is %lld; it must be positive",
                            mp_tname(r), (long long)rate);
    *hz = 0.5 * (double)rate / (double)(L->bins - 1);
    const double top = (double)n->opt->mfcc_upper_hz / *hz, bottom = (double)n->opt->mfcc_lower_hz / *hz;
    if (!(top < (double)L->bins))
        return mp_node_fail(n, MP_ERR_ARG, "upper_frequency_limit %g Hz is beyond the "
                            "spectrum: the %zu bins of '%s' at sample rate %lld reach %g Hz",
                            (double)n->opt->mfcc_upper_hz, L->bins, mp_tname(n->in[0]),
                            (long long)rate, 0.5 * (double)rate);
    *end = (size_t)top;
    *start = (size_t)(1.5 + bottom); /* bottom < top < bins */
    return MP_OK;
}

static mp_status mfcc_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 2, 2, 0);
    if (st != MP_OK || (st = mp_node_check_f32_io(n)) != MP_OK)
        return st;
    const mp_tensor *in = n->in[0], *r = n->in[1];
    if (in->rank != 3)
        return mp_node_fail(n, MP_ERR_SHAPE, "spectrogram '%s' has rank %d; needs rank 3",
                            mp_tname(in), in->rank);
    if (r->dtype != MP_DT_INT32)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "sample rate '%s' has dtype %s (supported: "
                            "i32)", mp_tname(r), mp_dtype_name(r->dtype));
    if (mp_tensor_elements(r) != 1)
        return mp_node_fail(n, MP_ERR_SHAPE, "sample rate '%s' has %zu elements; needs 1",
                            mp_tname(r), mp_tensor_elements(r));
    mfcc_layout L;
    if ((st = mfcc_plan(n, &L)) != MP_OK)
        return st;
    if (r->value_known && r->data) { /* a constant rate: refused at once */
        double hz;
        size_t start, end;
        if ((st = mfcc_bins(n, &L, mp_tensor_index_at(r, 0), &hz, &start, &end)) != MP_OK)
            return st;
    }
    const int32_t dims[3] = {in->dims[0], in->dims[1], (int32_t)L.D};
    if ((st = mp_node_set_output_shape(n, 3, dims)) != MP_OK)
        return st;
    n->scratch_bytes = L.frames ? L.bytes : 0;
    return MP_OK;
}

static double mel(double hz)
{
    return 1127.0 * log1p(hz / 700.0);
}

static mp_status mfcc_run(mp_node *n)
{
    mfcc_layout L;
    mp_status st = mfcc_plan(n, &L);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0], *r = n->in[1];
    mp_tensor *out = n->out[0];
    if (mp_tensor_elements(in) != L.frames * L.bins || mp_tensor_elements(r) != 1)
        return mp_node_fail(n, MP_ERR_SHAPE, "inputs do not have the inferred shapes");
    if (out->rank != 3 || out->dims[0] != in->dims[0] || out->dims[1] != in->dims[1] ||
        (size_t)out->dims[2] != L.D)
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' does not have the inferred shape",
                            mp_tname(out));
    double hz;
    size_t start, end;
    if ((st = mfcc_bins(n, &L, mp_tensor_index_at(r, 0), &hz, &start, &end)) != MP_OK)
        return st;
    if (L.frames == 0)
        return MP_OK;
    if (!n->scratch || n->scratch_bytes < L.bytes)
        return mp_node_fail(n, MP_ERR_ARG, "run without the %zu bytes of scratch infer declared",
                            L.bytes);
    double *s = n->scratch;
    double *center = s + L.center, *weight = s + L.weight, *cosine = s + L.cosine;
    double *work = s + L.work;
    int32_t *band = (int32_t *)(s + L.n_doubles);
    const size_t K = L.K, D = L.D;
    /* the filterbank: centres, and each used bin's band below and weight */
    const double mel_low = mel((double)n->opt->mfcc_lower_hz);
    const double spacing = (mel((double)n->opt->mfcc_upper_hz) - mel_low) / (double)(K + 1);
    for (size_t i = 0; i <= K; i++)
        center[i] = mel_low + spacing * (double)(i + 1);
    size_t above = 0; /* the first centre at or above the bin's mel */
    for (size_t i = start; i <= end; i++) {
        const double m = mel((double)i * hz);
        while (above < K && center[above] < m)
            above++;
        band[i] = (int32_t)above - 1;
        const double below = above > 0 ? center[above - 1] : mel_low;
        weight[i] = (center[above] - m) / (center[above] - below);
    }
    /* the DCT table */
    const double norm = sqrt(2.0 / (double)K);
    for (size_t i = 0; i < D; i++)
        for (size_t j = 0; j < K; j++)
            cosine[i * K + j] = norm * cos((double)i * (M_PI / (double)K) * ((double)j + 0.5));
    const float *x = in->data;
    float *y = out->data;
    for (size_t f = 0; f < L.frames; f++, x += L.bins, y += D) {
        memset(work, 0, K * sizeof *work);
        for (size_t i = start; i <= end; i++) {
            const double v = sqrt((double)x[i]), w = v * weight[i];
            const int32_t b = band[i];
            if (b >= 0)
                work[b] += w;
            if ((size_t)(b + 1) < K)
                work[b + 1] += v - w;
        }
        for (size_t j = 0; j < K; j++)
            work[j] = log(work[j] < MFCC_FLOOR ? MFCC_FLOOR : work[j]);
        for (size_t i = 0; i < D; i++) {
            double sum = 0.0;
            for (size_t j = 0; j < K; j++)
                sum += cosine[i * K + j] * work[j];
            y[i] = (float)sum;
        }
    }
    return MP_OK;
}

const mp_kernel mp_kernels_audio[] = {
    {.opcode = MP_OP_AUDIO_SPECTROGRAM, .min_inputs = 1, .max_inputs = 1, .n_outputs = 1,
     .infer = spec_infer, .run = spec_run},
    {.opcode = MP_OP_MFCC, .min_inputs = 2, .max_inputs = 2, .n_outputs = 1,
     .infer = mfcc_infer, .run = mfcc_run},
    {.opcode = -1},
};
