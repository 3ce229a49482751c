/* Kernel: STABLEHLO_RNG_BIT_GENERATOR, after TensorFlow Lite's rng_bit_generator.cc (and
 * XLA's RngBitGenerator): a functional generator, its state in and out.
 *
 * Input initial_state: a uint64 vector. Outputs: output_state (uint64, the input's shape) and
 * output (int32, uint32, int64 or uint64, of the shape the model gives it: the spec's result
 * shape is an attribute, not an input), filled with consecutive 32-bit words of the
 * generator (a 64-bit element takes two, low word first). The state's words (32 bits, low
 * word of each 64 first) are the key (words 0, 1) and the counter:
 * THREEFRY: state u64[2], counter words 2, 3; Threefry2x32-20 gives two words per block.
 * PHILOX and DEFAULT: state u64[2] or u64[3], counter words 2, 3 and then 4, 5 (u64[3]) or
 * 0, 1 again (u64[2]); Philox4x32-10 (random.h) gives four words per block.
 * After each block the counter's word 0 steps by one, carrying into word 1 only. The output
 * state is the key and those two counter words (a u64[3]'s third value unchanged), so a
 * model feeding it back draws the following words. */
#include <stdint.h>
#include <string.h>

#include "engine/kernels/kernel.h"
#include "engine/kernels/random.h"
#include "engine/kernels/stablehlo.h"

/* Threefry2x32 with 20 rounds (Salmon et al., SC 2011; Random123's rotation constants): the
 * two words of counter ctr under key. */
static void threefry2x32_20(const uint32_t ctr[2], const uint32_t key[2], uint32_t out[2])
{
    static const int rot[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
    const uint32_t ks[3] = {key[0], key[1], key[0] ^ key[1] ^ 0x1BD11BDAu};
    uint32_t x0 = ctr[0] + ks[0], x1 = ctr[1] + ks[1];
    for (uint32_t g = 0; g < 5; g++) { /* five groups of four rounds, a key injection after each */
        for (int r = 0; r < 4; r++) {
            const int k = rot[g % 2][r];
            x0 += x1;
            x1 = (x1 << k) | (x1 >> (32 - k));
            x1 ^= x0;
        }
        x0 += ks[(g + 1) % 3];
        x1 += ks[(g + 2) % 3] + g + 1;
    }
    out[0] = x0;
    out[1] = x1;
}

static size_t state_len(const mp_node *n)
{
    return mp_tensor_elements(n->in[0]);
}

static mp_status rng_check(mp_node *n)
{
    const mp_tensor *st = n->in[0];
    const mp_tensor *out = n->out[1];
    const int alg = mp_shlo_opts(n)->rng_algorithm;
    char b[96];
    if (st->dtype != MP_DT_UINT64 || st->rank != 1)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "initial state '%s' must be a uint64 vector, is %s %s",
                            mp_tname(st), mp_dtype_name(st->dtype), mp_shape_str(st->rank, st->dims, b, sizeof b));
    const size_t len = state_len(n);
    if (alg == 2 ? len != 2 : len != 2 && len != 3)
        return mp_node_fail(n, MP_ERR_SHAPE, "initial state '%s' has %zu values; %s takes %s", mp_tname(st), len,
                            alg == 2 ? "THREEFRY" : "PHILOX", alg == 2 ? "2" : "2 or 3");
    if (n->out[0]->dtype != MP_DT_UINT64)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "output state '%s' must be uint64, is %s", mp_tname(n->out[0]),
                            mp_dtype_name(n->out[0]->dtype));
    if (out->dtype != MP_DT_INT32 && out->dtype != MP_DT_UINT32 && out->dtype != MP_DT_INT64 &&
        out->dtype != MP_DT_UINT64)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "output '%s' is %s; it may be int32, uint32, int64 or uint64",
                            mp_tname(out), mp_dtype_name(out->dtype));
    return MP_OK;
}

static mp_status rng_infer(mp_node *n)
{
    mp_status s = MP_OK;
    if (n->n_in != 1 || !n->in[0] || n->n_out != 2 || !n->out[0] || !n->out[1])
        s = mp_node_fail(n, MP_ERR_FORMAT, "it has %d inputs and %d outputs; it takes the state and gives it "
                         "and the bits", (int)n->n_in, (int)n->n_out);
    if (s == MP_OK)
        s = rng_check(n);
    if (s != MP_OK)
        return s;
    /* the bits take the shape the model gives their tensor (the spec's attribute) */
    const mp_tensor_info *ti = n->out[1]->info;
    for (int32_t d = 0; d < ti->rank; d++)
        if (ti->shape[d] < 0 || (ti->has_signature && ti->signature[d] < 0))
            return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' has no fixed shape (dimension %d); the bits' shape is "
                                "the model's", mp_tname(n->out[1]), (int)d);
    if (!mp_tensor_set_shape(n->out[0], n->in[0]->rank, n->in[0]->dims) ||
        !mp_tensor_set_shape(n->out[1], ti->rank, ti->shape))
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s': shape too large", mp_tname(n->out[1]));
    return MP_OK;
}

static mp_status rng_run(mp_node *n)
{
    const int alg = mp_shlo_opts(n)->rng_algorithm;
    const size_t len = state_len(n);
    uint32_t w[6] = {0};
    memcpy(w, n->in[0]->data, len * sizeof(uint64_t)); /* little-endian: low word first */
    const uint32_t key[2] = {w[0], w[1]};
    uint32_t ctr[4] = {w[2], w[3], len == 3 ? w[4] : w[0], len == 3 ? w[5] : w[1]};
    const size_t per = alg == 2 ? 2 : 4;
    size_t words = mp_tensor_elements(n->out[1]) * (mp_dtype_size(n->out[1]->dtype) / 4);
    uint8_t *o = n->out[1]->data;
    for (size_t at = 0; at < words; at += per) {
        uint32_t blk[4];
        if (alg == 2)
            threefry2x32_20(ctr, key, blk);
        else
            mp_philox4x32_10(ctr, key, blk);
        const size_t take = words - at < per ? words - at : per;
        memcpy(o + at * 4, blk, take * 4);
        if (++ctr[0] == 0)
            ++ctr[1];
    }
    uint32_t s[6];
    memcpy(s, w, sizeof s);
    s[0] = key[0];
    s[1] = key[1];
    s[2] = ctr[0];
    s[3] = ctr[1];
    memcpy(n->out[0]->data, s, len * sizeof(uint64_t));
    return MP_OK;
}

const mp_kernel mp_kernels_stablehlo_rng[] = {
    {.opcode = MP_OP_STABLEHLO_RNG_BIT_GENERATOR, .min_inputs = 1, .max_inputs = 1, .n_outputs = 2,
     .infer = rng_infer, .run = rng_run},
    {.opcode = -1},
};
