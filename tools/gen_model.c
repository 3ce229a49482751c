/* gen_model: writes large synthetic .tflite models for the planning benchmark
 * (scripts/bench_plan.sh --models) and for trying memprof on models of many operators.
 *
 *   chain N: one float input [1,64] and N RELU operators, each reading the previous
 *            one's output: every tensor lives two steps, so any planner needs two slots.
 *   wide N:  N operators over 16 interleaved branches of widths 16 to 256 floats (the
 *            input [1,1] broadcast by an ADD into each): operator s advances branch
 *            s % 16 with a RELU, and every 8th step of a branch is an ADD of its tensor of
 *            8 steps earlier, so that lifetimes overlap in many ways (short ones of 16
 *            steps, skips of 128). Each branch's last tensor is a model output.
 *   while N: three subgraphs: a WHILE over an int32 counter i [1] and a float x [1,64]
 *            (inputs 'i' and 'x'), cond i < N, body i + 1 and x * 2 + 1; outputs x and i.
 *            From i = 0 (the default input) the loop runs N times.
 *   grow N:  as while, but the body makes x one element longer: CONCATENATION(x + 1, [1])
 *            along axis 1, so x ends [1, 64 + N] and the WHILE's outputs are known only
 *            after the loop (deferred: dynamic tensors in every mode).
 *   callonce N: TensorFlow Lite's call_once_mul with N floats (N <= 1000000): subgraph init
 *            (run by a CALL_ONCE in the first run) assigns [1, 2, ..., N] to resource
 *            variable 'var'; the main graph reads it, multiplies it by input 'x' [N], assigns
 *            the product back and outputs it ('y'): with x all 2, run k gives 2^k [1, ..., N].
 *   rfft N:  RFFT2D of input 'x' float32 [2, N] with fft_length [2, N]: output 'y' complex64
 *            [2, N / 2 + 1] (a complex output, for memprof run's summaries).
 *   lstmq N: a full-integer (int8, 8x8_16) UNIDIRECTIONAL_SEQUENCE_LSTM over N time steps
 *            (N <= 100000): input 'x' int8 [N, 1, 4], 8 cells with peephole and layer norm,
 *            projected to 4 outputs 'y' int8 [N, 1, 4], its 5 intermediate tensors.
 *   strings N: a string input 'text' [1] (a sentence) -> SKIP_GRAM (ngram_size N,
 *            max_skip_size 0, include_all_ngrams) -> string output 'ngrams': for every
 *            word, the runs of 1 to N words starting at it, longest first (a model whose
 *            input and output are strings, for memprof run's string inputs).
 *   plus1 N: input 'x' float32 [1, N] -> 'y' = x + 1 (ADD of a constant [1]).
 *   mul N:   inputs 'a' and 'b' float32 [1, N] -> 'p' = a * b (MUL): after plus1 in a
 *            pipeline, b is a chain input (memprof pipeline --fill 2.b=VALUE).
 *   stablehlo N: input 'x' float32 [N] -> STABLEHLO_COMPOSITE "memprof.affine" whose
 *            decomposition (subgraph 1) is STABLEHLO_MULTIPLY by 2 and STABLEHLO_ADD of 1 (on
 *            constants [N]) -> STABLEHLO_PAD with -7, two before and one after -> 'z' [N + 3]
 *            (a model of the operators ai-edge-torch and JAX conversions carry).
 *   case N:  inputs 'i' int32 [1] and 'x' float32 [N] -> STABLEHLO_CASE on i over branches
 *            1: x * 2, 2: x + 10, 3: max(x, 0) (STABLEHLO_MULTIPLY, _ADD, _MAXIMUM on
 *            constants [N]; an index outside 0..2 takes the last) -> 'y' [N].
 *
 * Usage: gen_model chain|wide|while|grow|callonce|rfft|lstmq|strings|plus1|mul|stablehlo|case N FILE   (N >= 1; the file is written whole or
 * not at all) */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model/ops.h"
#include "engine/model/tflite_writer.h"

#define BRANCHES 16
#define SKIP_EVERY 8

/* stablehlo N (see the top of the file). */
static void stablehlo(mp_tfw *w, int32_t n)
{
    static mp_shlo_options comp = {.name = "memprof.affine", .version = 1};
    static mp_shlo_options pad = {.a = {.n = 1, .v = {2}}, .b = {.n = 1, .v = {1}}, .c = {.n = 1, .v = {0}}};
    static const float minus7 = -7.0f;
    int x = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 1, &n, 0, NULL);
    int y = mp_tfw_tensor(w, "y", MP_DT_FLOAT32, 1, &n, 0, NULL);
    int v = mp_tfw_tensor(w, "minus7", MP_DT_FLOAT32, 0, NULL, mp_tfw_buffer(w, &minus7, sizeof minus7), NULL);
    int z = mp_tfw_tensor(w, "z", MP_DT_FLOAT32, 1, (int32_t[]){n + 3}, 0, NULL);
    mp_op_options o = mp_tfw_options_default();
    o.subgraph_a = 1;
    o.shlo = &comp;
    mp_tfw_op(w, MP_OP_STABLEHLO_COMPOSITE, 1, &x, 1, &y, &o);
    o = mp_tfw_options_default();
    o.shlo = &pad;
    mp_tfw_op(w, MP_OP_STABLEHLO_PAD, 2, (int32_t[]){y, v}, 1, &z, &o);
    mp_tfw_io(w, 1, &x, 1, &z);

    mp_tfw_subgraph(w, "decomposition");
    float *c = malloc(sizeof(float) * (size_t)n);
    if (!c)
        return; /* the writer's finish reports the missing subgraph io */
    for (int32_t k = 0; k < n; k++)
        c[k] = 2.0f;
    int dx = mp_tfw_tensor(w, "dx", MP_DT_FLOAT32, 1, &n, 0, NULL);
    int two = mp_tfw_tensor(w, "two", MP_DT_FLOAT32, 1, &n, mp_tfw_buffer(w, c, sizeof(float) * (size_t)n), NULL);
    for (int32_t k = 0; k < n; k++)
        c[k] = 1.0f;
    int one = mp_tfw_tensor(w, "one", MP_DT_FLOAT32, 1, &n, mp_tfw_buffer(w, c, sizeof(float) * (size_t)n), NULL);
    free(c);
    int p = mp_tfw_tensor(w, "twice", MP_DT_FLOAT32, 1, &n, 0, NULL);
    int dy = mp_tfw_tensor(w, "dy", MP_DT_FLOAT32, 1, &n, 0, NULL);
    mp_tfw_op(w, MP_OP_STABLEHLO_MULTIPLY, 2, (int32_t[]){dx, two}, 1, &p, NULL);
    mp_tfw_op(w, MP_OP_STABLEHLO_ADD, 2, (int32_t[]){p, one}, 1, &dy, NULL);
    mp_tfw_io(w, 1, &dx, 1, &dy);
}

/* case N (see the top of the file). */
static void stablehlo_case(mp_tfw *w, int32_t n)
{
    static const int32_t branches[3] = {1, 2, 3};
    static mp_shlo_options cs = {.n_branches = 3, .branches = branches};
    int i = mp_tfw_tensor(w, "i", MP_DT_INT32, 1, (int32_t[]){1}, 0, NULL);
    int x = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 1, &n, 0, NULL);
    int y = mp_tfw_tensor(w, "y", MP_DT_FLOAT32, 1, &n, 0, NULL);
    mp_op_options o = mp_tfw_options_default();
    o.shlo = &cs;
    mp_tfw_op(w, MP_OP_STABLEHLO_CASE, 2, (int32_t[]){i, x}, 1, &y, &o);
    mp_tfw_io(w, 2, (int32_t[]){i, x}, 1, &y);
    static const struct {
        const char *name;
        int code;
        float c;
    } b[3] = {{"times2", MP_OP_STABLEHLO_MULTIPLY, 2.0f}, {"plus10", MP_OP_STABLEHLO_ADD, 10.0f},
              {"relu", MP_OP_STABLEHLO_MAXIMUM, 0.0f}};
    float *c = malloc(sizeof(float) * (size_t)n);
    if (!c)
        return; /* the writer's finish reports the missing subgraphs */
    for (int k = 0; k < 3; k++) {
        mp_tfw_subgraph(w, b[k].name);
        for (int32_t e = 0; e < n; e++)
            c[e] = b[k].c;
        int bx = mp_tfw_tensor(w, "bx", MP_DT_FLOAT32, 1, &n, 0, NULL);
        int bc = mp_tfw_tensor(w, "bc", MP_DT_FLOAT32, 1, &n, mp_tfw_buffer(w, c, sizeof(float) * (size_t)n), NULL);
        int by = mp_tfw_tensor(w, "by", MP_DT_FLOAT32, 1, &n, 0, NULL);
        mp_tfw_op(w, b[k].code, 2, (int32_t[]){bx, bc}, 1, &by, NULL);
        mp_tfw_io(w, 1, &bx, 1, &by);
    }
    free(c);
}

static int usage(void)
{
    fprintf(stderr, "usage: gen_model chain|wide|while|grow|callonce|rfft|lstmq|strings|plus1|mul|"
                    "stablehlo|case N FILE\n");
    return 2;
}

/* A float tensor [1, width] named after its index. */
static int tensor(mp_tfw *w, int32_t width)
{
    static long count;
    char name[32];
    snprintf(name, sizeof name, "t%ld", count++);
    return mp_tfw_tensor(w, name, MP_DT_FLOAT32, 2, (int32_t[]){1, width}, 0, NULL);
}

static void chain(mp_tfw *w, long n)
{
    int x = tensor(w, 64), in = x;
    for (long i = 0; i < n; i++) {
        int y = tensor(w, 64);
        mp_tfw_op(w, MP_OP_RELU, 1, &x, 1, &y, NULL);
        x = y;
    }
    mp_tfw_io(w, 1, &in, 1, &x);
}

static void wide(mp_tfw *w, long n)
{
    int in = mp_tfw_tensor(w, "input", MP_DT_FLOAT32, 2, (int32_t[]){1, 1}, 0, NULL);
    int cur[BRANCHES], skip[BRANCHES];
    int32_t width[BRANCHES];
    long done = 0;
    /* The first operator of each branch broadcasts the input to its width: ADD(input, a
     * constant of zeros [1, width]). */
    static const float zeros[256];
    for (int b = 0; b < BRANCHES && done < n; b++, done++) {
        width[b] = 16 << (b % 5);
        int z = mp_tfw_tensor(w, "zeros", MP_DT_FLOAT32, 2, (int32_t[]){1, width[b]},
                              mp_tfw_buffer(w, zeros, sizeof(float) * (size_t)width[b]), NULL);
        cur[b] = tensor(w, width[b]);
        mp_tfw_op(w, MP_OP_ADD, 2, (int32_t[]){in, z}, 1, &cur[b], NULL);
        skip[b] = cur[b];
    }
    long step[BRANCHES] = {0};
    for (; done < n; done++) {
        int b = (int)(done % BRANCHES);
        int y = tensor(w, width[b]);
        step[b]++;
        if (step[b] % SKIP_EVERY == 0) {
            mp_tfw_op(w, MP_OP_ADD, 2, (int32_t[]){cur[b], skip[b]}, 1, &y, NULL);
            skip[b] = y;
        } else {
            mp_tfw_op(w, MP_OP_RELU, 1, &cur[b], 1, &y, NULL);
        }
        cur[b] = y;
    }
    int nb = n < BRANCHES ? (int)n : BRANCHES;
    mp_tfw_io(w, 1, &in, nb, cur);
}

static int const_scalar(mp_tfw *w, const char *name, mp_dtype dt, const void *v)
{
    return mp_tfw_tensor(w, name, dt, 1, (int32_t[]){1}, mp_tfw_buffer(w, v, 4), NULL);
}

static void loop(mp_tfw *w, long n, bool grow)
{
    const int32_t one = 1, limit = (int32_t)(n > INT32_MAX ? INT32_MAX : n);
    const float two = 2.0f, onef = 1.0f;
    int i0 = mp_tfw_tensor(w, "i", MP_DT_INT32, 1, (int32_t[]){1}, 0, NULL);
    int x0 = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 2, (int32_t[]){1, 64}, 0, NULL);
    int i1 = mp_tfw_tensor(w, "i_end", MP_DT_INT32, 1, (int32_t[]){1}, 0, NULL);
    int x1 = mp_tfw_tensor(w, "x_end", MP_DT_FLOAT32, 2, (int32_t[]){1, 64}, 0, NULL);
    mp_op_options o = mp_tfw_options_default();
    o.subgraph_a = 1;
    o.subgraph_b = 2;
    mp_tfw_op(w, MP_OP_WHILE, 2, (int32_t[]){i0, x0}, 2, (int32_t[]){i1, x1}, &o);
    mp_tfw_io(w, 2, (int32_t[]){i0, x0}, 2, (int32_t[]){x1, i1});

    mp_tfw_subgraph(w, "cond");
    int ci = mp_tfw_tensor(w, "ci", MP_DT_INT32, 1, (int32_t[]){1}, 0, NULL);
    int cx = mp_tfw_tensor(w, "cx", MP_DT_FLOAT32, 2, (int32_t[]){1, 64}, 0, NULL);
    int cn = const_scalar(w, "n", MP_DT_INT32, &limit);
    int cb = mp_tfw_tensor(w, "go", MP_DT_BOOL, 1, (int32_t[]){1}, 0, NULL);
    mp_tfw_op(w, MP_OP_LESS, 2, (int32_t[]){ci, cn}, 1, &cb, NULL);
    mp_tfw_io(w, 2, (int32_t[]){ci, cx}, 1, &cb);

    mp_tfw_subgraph(w, "body");
    int bi = mp_tfw_tensor(w, "bi", MP_DT_INT32, 1, (int32_t[]){1}, 0, NULL);
    int bx = mp_tfw_tensor(w, "bx", MP_DT_FLOAT32, 2, (int32_t[]){1, 64}, 0, NULL);
    int c1 = const_scalar(w, "one_i", MP_DT_INT32, &one);
    int c2 = const_scalar(w, "two", MP_DT_FLOAT32, &two);
    int c3 = const_scalar(w, "one_f", MP_DT_FLOAT32, &onef);
    int t = mp_tfw_tensor(w, "twice", MP_DT_FLOAT32, 2, (int32_t[]){1, 64}, 0, NULL);
    int bx2 = mp_tfw_tensor(w, "bx2", MP_DT_FLOAT32, 2, (int32_t[]){1, grow ? 65 : 64}, 0, NULL);
    int bi2 = mp_tfw_tensor(w, "bi2", MP_DT_INT32, 1, (int32_t[]){1}, 0, NULL);
    if (grow) {
        int tail = mp_tfw_tensor(w, "tail", MP_DT_FLOAT32, 2, (int32_t[]){1, 1},
                                 mp_tfw_buffer(w, &onef, sizeof onef), NULL);
        mp_op_options c = mp_tfw_options_default();
        c.axis = 1;
        mp_tfw_op(w, MP_OP_ADD, 2, (int32_t[]){bx, c3}, 1, &t, NULL);
        mp_tfw_op(w, MP_OP_CONCATENATION, 2, (int32_t[]){t, tail}, 1, &bx2, &c);
    } else {
        mp_tfw_op(w, MP_OP_MUL, 2, (int32_t[]){bx, c2}, 1, &t, NULL);
        mp_tfw_op(w, MP_OP_ADD, 2, (int32_t[]){t, c3}, 1, &bx2, NULL);
    }
    mp_tfw_op(w, MP_OP_ADD, 2, (int32_t[]){bi, c1}, 1, &bi2, NULL);
    mp_tfw_io(w, 2, (int32_t[]){bi, bx}, 2, (int32_t[]){bi2, bx2});
}

/* A RESOURCE handle of variable 'var' (VAR_HANDLE) in the current subgraph. */
static int var_handle(mp_tfw *w, const char *name)
{
    int h = mp_tfw_tensor(w, name, MP_DT_RESOURCE, 0, NULL, 0, NULL);
    mp_op_options o = mp_tfw_options_default();
    o.var_shared_name = "var";
    mp_tfw_op(w, MP_OP_VAR_HANDLE, 0, NULL, 1, &h, &o);
    return h;
}

static void call_once_mul(mp_tfw *w, long n)
{
    int32_t d = (int32_t)n;
    int x = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 1, &d, 0, NULL);
    mp_op_options o = mp_tfw_options_default();
    o.subgraph_a = 1;
    mp_tfw_op(w, MP_OP_CALL_ONCE, 0, NULL, 0, NULL, &o);
    int h = var_handle(w, "handle");
    int v = mp_tfw_tensor(w, "value", MP_DT_FLOAT32, 1, &d, 0, NULL);
    mp_tfw_op(w, MP_OP_READ_VARIABLE, 1, &h, 1, &v, NULL);
    int y = mp_tfw_tensor(w, "y", MP_DT_FLOAT32, 1, &d, 0, NULL);
    mp_tfw_op(w, MP_OP_MUL, 2, (int32_t[]){v, x}, 1, &y, NULL);
    mp_tfw_op(w, MP_OP_ASSIGN_VARIABLE, 2, (int32_t[]){h, y}, 0, NULL, NULL);
    mp_tfw_io(w, 1, &x, 1, &y);

    mp_tfw_subgraph(w, "init");
    float *init = malloc(sizeof(float) * (size_t)n);
    for (long i = 0; init && i < n; i++)
        init[i] = (float)(i + 1);
    int hi = var_handle(w, "init_handle");
    /* a failed malloc: buffer -1 makes the writer report the fault */
    int c = mp_tfw_tensor(w, "init_value", MP_DT_FLOAT32, 1, &d,
                          init ? mp_tfw_buffer(w, init, sizeof(float) * (size_t)n) : -1, NULL);
    free(init);
    mp_tfw_op(w, MP_OP_ASSIGN_VARIABLE, 2, (int32_t[]){hi, c}, 0, NULL, NULL);
    mp_tfw_io(w, 0, NULL, 0, NULL);
}

/* A quantized tensor of one scale (zero point 0), constant when data is given. */
static int qtensor(mp_tfw *w, const char *name, mp_dtype dt, int rank, const int32_t *dims,
                   const void *data, size_t bytes, float scale)
{
    int t = mp_tfw_tensor(w, name, dt, rank, dims, data ? mp_tfw_buffer(w, data, bytes) : 0, NULL);
    return mp_tfw_tensor_quant(w, t, 1, &scale, NULL, 0);
}

static void lstm_int8(mp_tfw *w, long n)
{
    enum { I = 4, C = 8, O = 4 };
    int8_t wx[C * I], wh[C * O], wp[O * C];
    int16_t peep[C], ln[C];
    int32_t bias[C], pb[O];
    for (int i = 0; i < C * I; i++)
        wx[i] = (int8_t)((i * 37) % 255 - 127);
    for (int i = 0; i < C * O; i++)
        wh[i] = (int8_t)((i * 53 + 11) % 255 - 127);
    for (int i = 0; i < O * C; i++)
        wp[i] = (int8_t)((i * 29 + 5) % 255 - 127);
    for (int i = 0; i < C; i++) {
        peep[i] = (int16_t)(i * 700 - 2400);
        ln[i] = (int16_t)(3000 + i * 150);
        bias[i] = i * 97 - 300;
    }
    for (int i = 0; i < O; i++)
        pb[i] = i * 40 - 60;
    int32_t ins[24], inter[5];
    const int32_t dx[3] = {(int32_t)n, 1, I}, dy[3] = {(int32_t)n, 1, O}, dc = C, dz = 1;
    ins[0] = qtensor(w, "x", MP_DT_INT8, 3, dx, NULL, 0, 1.0f / 128);
    for (int k = 0; k < 4; k++) {
        ins[1 + k] = qtensor(w, "w_x", MP_DT_INT8, 2, (int32_t[]){C, I}, wx, sizeof wx, 0.005f);
        ins[5 + k] = qtensor(w, "w_h", MP_DT_INT8, 2, (int32_t[]){C, O}, wh, sizeof wh, 0.004f);
        ins[12 + k] = mp_tfw_tensor(w, "bias", MP_DT_INT32, 1, &dc,
                                    mp_tfw_buffer(w, bias, sizeof bias), NULL);
        ins[20 + k] = qtensor(w, "ln", MP_DT_INT16, 1, &dc, ln, sizeof ln, 1.0f / 4096);
    }
    for (int k = 0; k < 3; k++)
        ins[9 + k] = qtensor(w, "peephole", MP_DT_INT16, 1, &dc, peep, sizeof peep, 1.0f / 8192);
    ins[16] = qtensor(w, "w_proj", MP_DT_INT8, 2, (int32_t[]){O, C}, wp, sizeof wp, 0.006f);
    ins[17] = mp_tfw_tensor(w, "b_proj", MP_DT_INT32, 1, (int32_t[]){O},
                            mp_tfw_buffer(w, pb, sizeof pb), NULL);
    ins[18] = mp_tfw_tensor_variable(w, qtensor(w, "h", MP_DT_INT8, 2, (int32_t[]){1, O}, NULL,
                                                0, 1.0f / 128));
    ins[19] = mp_tfw_tensor_variable(w, qtensor(w, "c", MP_DT_INT16, 2, (int32_t[]){1, C}, NULL,
                                                0, 1.0f / 2048));
    for (int k = 0; k < 5; k++)
        inter[k] = qtensor(w, "intermediate", k < 4 ? MP_DT_INT16 : MP_DT_INT8, 1, &dz, NULL, 0,
                           k < 4 ? 0.0005f : 1.0f / 128);
    int y = qtensor(w, "y", MP_DT_INT8, 3, dy, NULL, 0, 1.0f / 128);
    mp_op_options o = mp_tfw_options_default();
    o.activation = MP_ACT_TANH;
    o.time_major = true;
    int op = mp_tfw_op(w, MP_OP_UNIDIRECTIONAL_SEQUENCE_LSTM, 24, ins, 1, &y, &o);
    mp_tfw_op_intermediates(w, op, 5, inter);
    mp_tfw_io(w, 1, ins, 1, &y);
}

static void rfft(mp_tfw *w, long n)
{
    const int32_t dx[2] = {2, (int32_t)n}, len[2] = {2, (int32_t)n}, two = 2;
    const int32_t dy[2] = {2, (int32_t)(n / 2 + 1)};
    int x = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 2, dx, 0, NULL);
    int l = mp_tfw_tensor(w, "fft_length", MP_DT_INT32, 1, &two, mp_tfw_buffer(w, len, 8), NULL);
    int y = mp_tfw_tensor(w, "y", MP_DT_COMPLEX64, 2, dy, 0, NULL);
    mp_tfw_op(w, MP_OP_RFFT2D, 2, (int32_t[]){x, l}, 1, &y, NULL);
    mp_tfw_io(w, 1, &x, 1, &y);
}

static void strings(mp_tfw *w, long n)
{
    const int32_t one = 1;
    int x = mp_tfw_tensor(w, "text", MP_DT_STRING, 1, &one, 0, NULL);
    int y = mp_tfw_tensor(w, "ngrams", MP_DT_STRING, 1, &one, 0, NULL);
    mp_op_options o = mp_tfw_options_default();
    o.ngram_size = (int32_t)n;
    o.include_all_ngrams = true;
    mp_tfw_op(w, MP_OP_SKIP_GRAM, 1, &x, 1, &y, &o);
    mp_tfw_io(w, 1, &x, 1, &y);
}

/* plus1 (x -> x + 1) or mul (a, b -> a * b) on float32 [1, n]. */
static void plus1_or_mul(mp_tfw *w, long n, bool mul)
{
    const int32_t d[2] = {1, (int32_t)n}, one_d = 1;
    const float one = 1.0f;
    if (!mul) {
        int x = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 2, d, 0, NULL);
        int c = mp_tfw_tensor(w, "one", MP_DT_FLOAT32, 1, &one_d,
                              mp_tfw_buffer(w, &one, sizeof one), NULL);
        int y = mp_tfw_tensor(w, "y", MP_DT_FLOAT32, 2, d, 0, NULL);
        mp_tfw_op(w, MP_OP_ADD, 2, (int32_t[]){x, c}, 1, &y, NULL);
        mp_tfw_io(w, 1, &x, 1, &y);
        return;
    }
    int a = mp_tfw_tensor(w, "a", MP_DT_FLOAT32, 2, d, 0, NULL);
    int b = mp_tfw_tensor(w, "b", MP_DT_FLOAT32, 2, d, 0, NULL);
    int p = mp_tfw_tensor(w, "p", MP_DT_FLOAT32, 2, d, 0, NULL);
    mp_tfw_op(w, MP_OP_MUL, 2, (int32_t[]){a, b}, 1, &p, NULL);
    mp_tfw_io(w, 2, (int32_t[]){a, b}, 1, &p);
}

int main(int argc, char **argv)
{
    if (argc != 4)
        return usage();
    char *end;
    long n = strtol(argv[2], &end, 10);
    if (*end || n < 1 || n > 100000000L)
        return usage();
    mp_tfw *w = mp_tfw_create();
    if (!w) {
        fprintf(stderr, "gen_model: out of memory\n");
        return 1;
    }
    if (strcmp(argv[1], "chain") == 0)
        chain(w, n);
    else if (strcmp(argv[1], "wide") == 0)
        wide(w, n);
    else if (strcmp(argv[1], "while") == 0 || strcmp(argv[1], "grow") == 0)
        loop(w, n, argv[1][0] == 'g');
    else if (strcmp(argv[1], "callonce") == 0 && n <= 1000000)
        call_once_mul(w, n);
    else if (strcmp(argv[1], "rfft") == 0 && n <= 1000000)
        rfft(w, n);
    else if (strcmp(argv[1], "lstmq") == 0 && n <= 100000)
        lstm_int8(w, n);
    else if (strcmp(argv[1], "strings") == 0 && n <= 1000)
        strings(w, n);
    else if ((strcmp(argv[1], "plus1") == 0 || strcmp(argv[1], "mul") == 0) && n <= 1000000)
        plus1_or_mul(w, n, argv[1][0] == 'm');
    else if (strcmp(argv[1], "stablehlo") == 0 && n <= 1000000)
        stablehlo(w, (int32_t)n);
    else if (strcmp(argv[1], "case") == 0 && n <= 1000000)
        stablehlo_case(w, (int32_t)n);
    else
        return usage();
    void *bytes = NULL;
    size_t size = 0;
    mp_error err = {0};
    if (mp_tfw_finish(w, &bytes, &size, &err) != MP_OK) {
        fprintf(stderr, "gen_model: %s\n", err.msg);
        mp_tfw_free(w);
        return 1;
    }
    mp_tfw_free(w);
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", argv[3]);
    FILE *f = fopen(tmp, "wb");
    int ok = f && fwrite(bytes, 1, size, f) == size;
    ok = f && fclose(f) == 0 && ok;
    free(bytes);
    if (!ok || rename(tmp, argv[3]) != 0) {
        remove(tmp);
        fprintf(stderr, "gen_model: cannot write %s\n", argv[3]);
        return 1;
    }
    return 0;
}
