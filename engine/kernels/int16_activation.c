/* 16x8 LOGISTIC, TANH, RELU, RELU6, LEAKY_RELU, ABS, EXP and SOFTMAX (int16.h): TensorFlow
 * Lite's int16 reference kernels (reference_integer_ops Logistic / Tanh and activations.cc's
 * SigmoidPrepare / TanhPrepare, QuantizedReluX, QuantizeLeakyRelu; elementwise.cc's ABS,
 * exp.cc's table; reference_ops SoftmaxInt16 and softmax.cc's Prepare), bit for bit, in plain
 * C.
 *
 * The input (int16, zero point 0) is brought to TensorFlow Lite's table scale, 1 / (3 * 4096)
 * per unit: times 3 when its scale is 2^-12 (the power-of-two case), else times
 * round-down(scale * 3 * 4096 * 2^k) and shifted right by k with rounding, k the smallest
 * shift that lifts that multiplier above 32767 / 2 (at most 31). Its magnitude then indexes
 * a 256-entry table of sigmoid(i / 24) in unsigned 0.16 (512 input steps per entry for
 * LOGISTIC, 256 for TANH, whose tanh(x) = 2 sigmoid(2x) - 1), interpolated linearly in the
 * integers, mirrored for negative inputs, and brought back to the output's Q0.15 (its scale
 * must be 2^-15, zero point 0, as TensorFlow Lite requires). Beyond the table the result
 * saturates. TensorFlow Lite's optimized build takes gemmlowp's fixed-point functions
 * instead for a 2^-12 input; memprof follows the reference kernels. */
#include "engine/kernels/int16.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>

#include "engine/kernels/quant_layout.h"
#include "engine/kernels/quant_math.h"
#include "engine/kernels/quant_tensor.h"

/* TensorFlow Lite's sigmoid_table_uint16: sigmoid(i / 24) in unsigned 0.16, i = 0 .. 255. Its
 * published values (no single rounding of the function reproduces all of them, so they are
 * data here, not computed). */
static const uint16_t k_sigmoid_table[256] = {
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149,
    40794, 41432, 42064, 42688, 43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369,
    47911, 48443, 48964, 49475, 49975, 50464, 50942, 51409, 51865, 52311, 52745, 53169,
    53581, 53983, 54374, 54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433,
    57724, 58007, 58280, 58544, 58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370,
    60565, 60753, 60935, 61110, 61279, 61441, 61599, 61750, 61896, 62036, 62172, 62302,
    62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186, 63279, 63368, 63454, 63536,
    63615, 63691, 63765, 63835, 63903, 63968, 64030, 64090, 64148, 64204, 64257, 64308,
    64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786,
    64816, 64845, 64873, 64900, 64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079,
    65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234, 65246, 65258,
    65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360, 65367,
    65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433,
    65438, 65442, 65445, 65449, 65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474,
    65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491, 65493, 65495, 65497, 65498,
    65500, 65501, 65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513,
    65514, 65515, 65516, 65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522,
    65523, 65523, 65524, 65524, 65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528,
    65528, 65528, 65529, 65529, 65529, 65529, 65530, 65530, 65530, 65530, 65531, 65531,
    65531, 65531, 65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533,
    65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534,
    65534, 65534, 65534, 65535
};

typedef struct i16_sigmoid {
    int32_t mult; /* the input's multiplier to the table scale */
    int shift;    /* then a rounding right shift */
} i16_sigmoid;

static mp_status sigmoid_params(mp_node *n, i16_sigmoid *p)
{
    float si, so;
    mp_status st = mp_i16_activation(n, n->in[0], "input", &si);
    if (st != MP_OK || (st = mp_i16_activation(n, n->out[0], "output", &so)) != MP_OK)
        return st;
    int l2;
    if (!mp_i16_checked_log2(so, &l2) || l2 != -15)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "i16 output '%s' has scale %g; TensorFlow Lite's int16 %s takes "
                            "2^-15 only",
                            mp_tname(n->out[0]), (double)so,
                            n->opcode == MP_OP_TANH ? "TANH" : "LOGISTIC");
    if (mp_i16_checked_log2(si, &l2) && 12 + l2 == 0) { /* Q3.12: times 3 */
        p->mult = 3;
        p->shift = 0;
        return MP_OK;
    }
    double m = (double)si * 4096.0 * 3.0;
    int k = 0;
    while (m <= 32767.0 / 2.0 && k <= 30) {
        k++;
        m *= 2.0;
    }
    if (!(m < 2147483648.0))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "i16 input '%s' has scale %g, beyond what the int16 %s takes",
                            mp_tname(n->in[0]), (double)si,
                            n->opcode == MP_OP_TANH ? "TANH" : "LOGISTIC");
    p->mult = (int32_t)m;
    p->shift = k;
    return MP_OK;
}

/* ---- RELU, RELU6: TensorFlow Lite's QuantizedReluX on int16 ----------------------------------
 * x scaled by input scale / output scale (float division, then QuantizeMultiplier; the int32
 * MultiplyByQuantizedMultiplier), clamped to [round(0 / s), 32767] or [0, round(6 / s)] with s
 * the output scale. TensorFlow Lite's RELU_N1_TO_1 takes no int16 input. LEAKY_RELU
 * (QuantizeLeakyRelu): x >= 0 scaled the same way, x < 0 by input scale * alpha / output
 * scale (in float), saturated to int16. */

typedef struct i16_relu {
    int32_t mult, lo, hi;
    int shift;
    int32_t alpha_mult; /* LEAKY_RELU: the negative side's multiplier */
    int alpha_shift;
} i16_relu;

static mp_status relu_params(mp_node *n, i16_relu *p)
{
    bool leaky = n->opcode == MP_OP_LEAKY_RELU;
    if (n->opcode != MP_OP_RELU && n->opcode != MP_OP_RELU6 && !leaky)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "input '%s' is i16; of the activations only "
                            "LOGISTIC, TANH, RELU, RELU6 and LEAKY_RELU take int16 inputs",
                            mp_tname(n->in[0]));
    float si, so;
    mp_status st = mp_i16_activation(n, n->in[0], "input", &si);
    if (st != MP_OK || (st = mp_i16_activation(n, n->out[0], "output", &so)) != MP_OK)
        return st;
    if (!mp_quantize_multiplier((double)(si / so), &p->mult, &p->shift) ||
        (leaky && !mp_quantize_multiplier((double)(si * n->opt->alpha / so), &p->alpha_mult,
                                          &p->alpha_shift)))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "input scale %g over output scale %g gives "
                            "no multiplier", (double)si, (double)so);
    p->lo = INT16_MIN;
    p->hi = INT16_MAX;
    if (!leaky)
        mp_activation_range_q(n->opcode == MP_OP_RELU ? MP_ACT_RELU : MP_ACT_RELU6, so, 0,
                              MP_DT_INT16, &p->lo, &p->hi);
    return MP_OK;
}

static bool is_relu(const mp_node *n)
{
    return n->opcode != MP_OP_LOGISTIC && n->opcode != MP_OP_TANH;
}

/* ---- ABS, EXP, LOG, RSQRT, SQRT -------------------------------------------------------------
 * ABS (elementwise.cc): with quantization (zero points 0) |x|, times input / output scale
 * (QuantizeMultiplier of their float quotient, the int32 MultiplyByQuantizedMultiplier) when
 * the two differ, saturated (|-32768| is 32767); without, |x| as int16 (|-32768| wraps to
 * -32768), as AbsInt16EvalImpl. EXP (exp.cc): zero points 0, a 513-entry table of expf over
 * the input's real range in the output's units (TensorFlow Lite's LUTPopulate<int16_t>, in
 * float, built at each run on the stack) read by lut_lookup below. LOG and RSQRT
 * (elementwise.cc, quantized with zero points 0) use the same table of their function: LOG's
 * log x, a value <= 0 giving the output's lowest real value -32768 * output scale; RSQRT's
 * 1 / sqrt x, a value <= 0 giving 32767 * output scale; a negative RSQRT input fails the run.
 * SQRT (SqrtEvalQuantized<int16_t>): sqrtf(input scale * x) / output scale truncated toward
 * zero, clamped; a negative input fails the run. */

typedef struct i16_elem {
    bool quantized, rescale;  /* ABS */
    int32_t mult;
    int shift;
    float si, so;             /* EXP, LOG, RSQRT, SQRT: the scales */
} i16_elem;

static mp_status elem_params(mp_node *n, i16_elem *p)
{
    const mp_tensor *in = n->in[0], *out = n->out[0];
    *p = (i16_elem){.quantized = true};
    if (n->opcode == MP_OP_ABS && in->info->quant.count == 0) {
        p->quantized = false;
        if (out->dtype != MP_DT_INT16)
            return mp_node_fail(n, MP_ERR_UNSUPPORTED, "output '%s' is %s; with i16 input '%s' "
                                "it must be i16", mp_tname(out), mp_dtype_name(out->dtype),
                                mp_tname(in));
        return mp_node_check_same_qparams(n, in, out);
    }
    mp_status st = mp_i16_activation(n, in, "input", &p->si);
    if (st != MP_OK || (st = mp_i16_activation(n, out, "output", &p->so)) != MP_OK)
        return st;
    p->rescale = p->si != p->so;
    if (n->opcode == MP_OP_ABS && p->rescale &&
        !mp_quantize_multiplier((double)(p->si / p->so), &p->mult, &p->shift))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "input scale %g over output scale %g gives "
                            "no multiplier", (double)p->si, (double)p->so);
    return MP_OK;
}

static bool is_elem(const mp_node *n)
{
    return n->opcode == MP_OP_ABS || n->opcode == MP_OP_EXP || n->opcode == MP_OP_LOG ||
           n->opcode == MP_OP_RSQRT || n->opcode == MP_OP_SQRT;
}

mp_status mp_i16_unary_check(mp_node *n)
{
    i16_relu r;
    i16_sigmoid p = {0, 0};
    i16_elem e;
    if (is_elem(n))
        return elem_params(n, &e);
    return is_relu(n) ? relu_params(n, &r) : sigmoid_params(n, &p);
}

/* floor(v / 2^k), k >= 0, without shifting a negative value. */
static inline int64_t floor_shift(int64_t v, int k)
{
    return v >= 0 ? v >> k : ~(~v >> k);
}

/* The table's interpolation at |v| with `bits` input steps per entry (9 LOGISTIC, 8 TANH),
 * scaled by 2^bits; sat beyond the table. */
static inline uint32_t table_at(uint64_t a, int bits, uint32_t sat)
{
    uint64_t uh = a >> bits;
    if (uh >= 255)
        return sat;
    uint32_t ua = k_sigmoid_table[uh], ub = k_sigmoid_table[uh + 1];
    uint32_t ut = (uint32_t)(a & ((1u << bits) - 1));
    return (ua << bits) + ut * (ub - ua);
}

static void lut_populate_f32(float si, float so, float (*f)(float, float), float param,
                             int16_t *lut);
static inline int16_t lut_lookup(int32_t v, const int16_t *lut);

/* The tables' functions; param is what a value <= 0 gives (LOG, RSQRT). */
static float lut_expf(float x, float param) { (void)param; return expf(x); }
static float lut_logf(float x, float param) { return x <= 0.0f ? param : logf(x); }
static float lut_rsqrtf(float x, float param) { return x <= 0.0f ? param : 1.0f / sqrtf(x); }

static mp_status elem_run(mp_node *n, const int16_t *x, int16_t *y, size_t count)
{
    i16_elem p;
    mp_status st = elem_params(n, &p);
    if (st != MP_OK)
        return st;
    if (n->opcode == MP_OP_RSQRT || n->opcode == MP_OP_SQRT)
        for (size_t i = 0; i < count; i++)
            if (x[i] < 0)
                return mp_node_fail(n, MP_ERR_ARG,
                                    "%s is only defined for non-negative values: '%s' element %zu "
                                    "is %d, below its zero point 0",
                                    n->opcode == MP_OP_RSQRT ? "RSQRT" : "SQRT",
                                    mp_tname(n->in[0]), i, x[i]);
    if (n->opcode == MP_OP_SQRT) {
        for (size_t i = 0; i < count; i++) {
            const int32_t v = (int32_t)(sqrtf(p.si * (float)x[i]) / p.so);
            y[i] = (int16_t)(v > INT16_MAX ? INT16_MAX : v);
        }
        return MP_OK;
    }
    if (n->opcode != MP_OP_ABS) {
        int16_t lut[513];
        if (n->opcode == MP_OP_EXP)
            lut_populate_f32(p.si, p.so, lut_expf, 0.0f, lut);
        else if (n->opcode == MP_OP_LOG)
            lut_populate_f32(p.si, p.so, lut_logf, -32768.0f * p.so, lut);
        else
            lut_populate_f32(p.si, p.so, lut_rsqrtf, 32767.0f * p.so, lut);
        for (size_t i = 0; i < count; i++)
            y[i] = lut_lookup(x[i], lut);
        return MP_OK;
    }
    for (size_t i = 0; i < count; i++) {
        int32_t v = x[i] < 0 ? -(int32_t)x[i] : x[i];
        if (!p.quantized) {
            y[i] = (int16_t)(uint16_t)(uint32_t)v; /* 32768 wraps to -32768 */
            continue;
        }
        if (p.rescale)
            v = mp_multiply_by_quantized_multiplier(v, p.mult, p.shift);
        y[i] = (int16_t)(v < INT16_MIN ? INT16_MIN : (v > INT16_MAX ? INT16_MAX : v));
    }
    return MP_OK;
}

mp_status mp_i16_unary_run(mp_node *n)
{
    const mp_tensor *in = n->in[0];
    mp_tensor *out = n->out[0];
    size_t count = mp_tensor_elements(in);
    if (mp_tensor_elements(out) != count)
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' does not hold input '%s''s elements",
                            mp_tname(out), mp_tname(in));
    const int16_t *x = in->data;
    int16_t *y = out->data;
    if (is_elem(n))
        return elem_run(n, x, y, count);
    if (is_relu(n)) {
        i16_relu r = {0, 0, 0, 0, 0, 0};
        mp_status st = relu_params(n, &r);
        if (st != MP_OK)
            return st;
        for (size_t i = 0; i < count; i++) {
            int32_t v = x[i] < 0 && n->opcode == MP_OP_LEAKY_RELU
                            ? mp_multiply_by_quantized_multiplier(x[i], r.alpha_mult,
                                                                  r.alpha_shift)
                            : mp_multiply_by_quantized_multiplier(x[i], r.mult, r.shift);
            y[i] = (int16_t)(v < r.lo ? r.lo : (v > r.hi ? r.hi : v));
        }
        return MP_OK;
    }
    i16_sigmoid p = {0, 0};
    mp_status st = sigmoid_params(n, &p);
    if (st != MP_OK)
        return st;
    const int64_t round = p.shift > 0 ? INT64_C(1) << (p.shift - 1) : 0;
    const bool tanh_op = n->opcode == MP_OP_TANH;
    for (size_t i = 0; i < count; i++) {
        /* 64 bits: a large multiplier (an input scale above 4/3) cannot overflow here */
        int64_t v = floor_shift((int64_t)x[i] * p.mult + round, p.shift);
        uint64_t a = v >= 0 ? (uint64_t)v : (uint64_t)(-(v + 1)) + 1;
        if (tanh_op) {
            int64_t r = table_at(a, 8, 0xFFFFu << 8);
            r = v >= 0 ? r - (1 << 23) + (1 << 7) : -r + (1 << 23) + (1 << 7) - 1;
            y[i] = (int16_t)floor_shift(r, 8);
        } else {
            uint32_t r = table_at(a, 9, 0x7FFFu << 10);
            r = v >= 0 ? r + (1u << 9) : (1u << 25) - r + (1u << 9) - 1;
            y[i] = (int16_t)(r >> 10);
        }
    }
    return MP_OK;
}

/* ---- SOFTMAX ----------------------------------------------------------------------------------
 *
 * Per row: d = x - max scaled by input scale * beta / (10 / 65535) (QuantizeMultiplier, the
 * int32 MultiplyByQuantizedMultiplier) so that [-65535, 0] is [-10, 0], moved to
 * [-32768, 32767] (+ 32767, saturated), exp through a 513-entry table of exp over [-10, 0]
 * (gen_lut: 512 steps, each sample biased by half the rounded error of the interpolated
 * midpoint, plus the end point; TensorFlow Lite's interpolating lookup: entry 256 + v / 128,
 * the slope times v's low 7 bits, rounded); the Q0.15 values summed in 32 bits, normalized
 * by their leading zeros into [1, 2) as Q?.14, 1 / (1 + x) through a second table over
 * [0, 1], and each exp times that reciprocal shifted back to Q0.15, clamped to 0 .. 32767.
 * The output must have scale 1/32768 (within 0.1 %) and zero point 0. Rows are at most 65536
 * long, so the sum stays in 32 bits; the exps are recomputed for the last step instead of
 * being kept (no scratch). */

#define LUT_STEPS 512

static int16_t g_exp_lut[LUT_STEPS + 1], g_recip_lut[LUT_STEPS + 1];
static pthread_once_t g_lut_once = PTHREAD_ONCE_INIT;

static double lut_exp(double x) { return exp(x); }
static double lut_recip(double x) { return 1.0 / (1.0 + x); }

/* TensorFlow Lite's gen_lut for an int16 table of func over [lo, hi], outputs in [-1, 1]. */
static void gen_lut(double (*func)(double), double lo, double hi, int16_t *lut)
{
    const double step = (hi - lo) / LUT_STEPS, half = step / 2, scale = 32768.0;
    for (int i = 0; i < LUT_STEPS; i++) {
        double v = func(lo + i * step), mid = func(lo + i * step + half);
        double next = func(lo + (i + 1) * step);
        double sample = round(v * scale);
        double interp = round((next * scale + round(v * scale)) / 2);
        double bias = round((interp - round(mid * scale)) / 2);
        lut[i] = (int16_t)fmin(fmax(sample - bias, -32768.0), 32767.0);
    }
    lut[LUT_STEPS] = (int16_t)fmin(fmax(round(func(hi) * scale), -32768.0), 32767.0);
}

/* TensorFlow Lite's LUTPopulate<int16_t> (LUTPopulateInt16 in float) for an int16 input of
 * scale si and output of scale so, zero points 0: gen_lut's construction over the input's real
 * range [si * -32768, si * 32767], in float, the values in units of 65536 over the output's
 * real range. */
static void lut_populate_f32(float si, float so, float (*f)(float, float), float param,
                             int16_t *lut)
{
    const float in_min = si * -32768.0f, in_max = si * 32767.0f;
    const float step = (in_max - in_min) / LUT_STEPS, half = step / 2;
    const float inv = 65536.0f / (so * 32767.0f - so * -32768.0f);
    for (int i = 0; i < LUT_STEPS; i++) {
        const float x0 = in_min + (float)i * step;
        const float v = f(x0, param), mid = f(x0 + half, param),
                    next = f(in_min + (float)(i + 1) * step, param);
        const float interp = roundf((next * inv + roundf(v * inv)) / 2);
        const float bias = roundf((interp - roundf(mid * inv)) / 2);
        lut[i] = (int16_t)fminf(fmaxf(roundf(v * inv) - bias, -32768.0f), 32767.0f);
    }
    lut[LUT_STEPS] = (int16_t)fminf(fmaxf(roundf(f(in_max, param) * inv), -32768.0f), 32767.0f);
}

static void init_luts(void)
{
    gen_lut(lut_exp, -10.0, 0.0, g_exp_lut);
    gen_lut(lut_recip, 0.0, 1.0, g_recip_lut);
}

/* TensorFlow Lite's interpolating int16 table lookup. */
static inline int16_t lut_lookup(int32_t v, const int16_t *lut)
{
    int32_t index = 256 + (int32_t)floor_shift(v, 7);
    int32_t offset = (int32_t)((uint32_t)v & 0x7F);
    int32_t base = lut[index], slope = lut[index + 1] - lut[index];
    return (int16_t)(base + (int32_t)floor_shift((int64_t)slope * offset + 64, 7));
}

typedef struct i16_softmax {
    int32_t mult;
    int shift;
    size_t rows, depth;
} i16_softmax;

static mp_status softmax_params(mp_node *n, i16_softmax *p)
{
    if (n->opcode != MP_OP_SOFTMAX)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "input '%s' is i16; LOG_SOFTMAX takes no "
                            "int16 input", mp_tname(n->in[0]));
    float si, so;
    mp_status st = mp_i16_activation(n, n->in[0], "input", &si);
    if (st != MP_OK || (st = mp_i16_activation(n, n->out[0], "output", &so)) != MP_OK)
        return st;
    if (!(fabsf(so - 1.0f / 32768) <= 0.001f / 32768))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "i16 output '%s' has scale %g; TensorFlow Lite's int16 SOFTMAX takes "
                            "1/32768 only",
                            mp_tname(n->out[0]), (double)so);
    const mp_tensor *in = n->in[0];
    if (in->rank < 1)
        return mp_node_fail(n, MP_ERR_SHAPE, "input '%s' is a scalar (rank 0); needs rank >= 1",
                            mp_tname(in));
    p->depth = (size_t)in->dims[in->rank - 1];
    p->rows = p->depth ? mp_tensor_elements(in) / p->depth : 0;
    if (p->depth > 65536)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "input '%s' has rows of %zu; the int16 SOFTMAX sums at most 65536 "
                            "in 32 bits",
                            mp_tname(in), p->depth);
    double real = (double)(si * n->opt->beta) / (10.0 / 65535.0);
    if (!mp_quantize_multiplier(real, &p->mult, &p->shift) || p->mult <= 0)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "input scale %g times beta %g gives no int16 SOFTMAX multiplier",
                            (double)si, (double)n->opt->beta);
    return MP_OK;
}

mp_status mp_i16_softmax_infer(mp_node *n)
{
    i16_softmax p;
    mp_status st = softmax_params(n, &p);
    if (st != MP_OK)
        return st;
    n->scratch_bytes = 0;
    return mp_node_set_output_shape(n, n->in[0]->rank, n->in[0]->dims);
}

/* exp(x - max) of one element: Q0.15 from the exp table. */
static inline int16_t row_exp(const i16_softmax *p, int32_t diff)
{
    int32_t scaled = mp_multiply_by_quantized_multiplier(diff, p->mult, p->shift);
    int64_t sym = (int64_t)scaled + 32767;
    return lut_lookup((int32_t)(sym < -32768 ? -32768 : (sym > 32767 ? 32767 : sym)), g_exp_lut);
}

mp_status mp_i16_softmax_run(mp_node *n)
{
    i16_softmax p;
    mp_status st = softmax_params(n, &p);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0];
    mp_tensor *out = n->out[0];
    if (mp_tensor_elements(out) != mp_tensor_elements(in) || p.rows * p.depth !=
                                                                  mp_tensor_elements(in))
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' does not hold input '%s''s elements",
                            mp_tname(out), mp_tname(in));
    pthread_once(&g_lut_once, init_luts);
    for (size_t r = 0; r < p.rows; r++) {
        const int16_t *x = (const int16_t *)in->data + r * p.depth;
        int16_t *y = (int16_t *)out->data + r * p.depth;
        int32_t mx = INT16_MIN;
        for (size_t j = 0; j < p.depth; j++)
            mx = x[j] > mx ? x[j] : mx;
        uint32_t sum = 0; /* below 65536 * 32768 = 2^31 */
        for (size_t j = 0; j < p.depth; j++)
            sum += (uint32_t)(int32_t)row_exp(&p, x[j] - mx);
        /* the sum's leading zeros (it is at least the largest element's exp, near 32767) */
        int h = sum ? __builtin_clz(sum) : 32;
        if (h < 1)
            h = 1;
        int64_t shifted = (((int64_t)sum << (h - 1)) + (1 << 13)) >> 14;
        int64_t sym = shifted - ((1 << 15) + (1 << 16));
        int16_t recip = lut_lookup((int32_t)(sym < -32768 ? -32768 : (sym > 32767 ? 32767 : sym)),
                                   g_recip_lut);
        int right = 31 - h;
        int64_t round = right > 0 ? INT64_C(1) << (right - 1) : 0;
        for (size_t j = 0; j < p.depth; j++) {
            int64_t v = floor_shift((int64_t)row_exp(&p, x[j] - mx) * recip + round, right);
            y[j] = (int16_t)(v < 0 ? 0 : (v > 32767 ? 32767 : v));
        }
    }
    return MP_OK;
}
