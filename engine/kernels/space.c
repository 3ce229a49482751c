/* Kernels: DEPTH_TO_SPACE and SPACE_TO_DEPTH (NHWC, block_size), as TensorFlow Lite's
 * reference kernels (depth_to_space.cc, space_to_depth.cc). Pure element movement: any dtype
 * with a fixed element size, quantized output with the input's scale and zero point.
 *
 * DEPTH_TO_SPACE [B,H,W,C] -> [B,H*bs,W*bs,C/(bs*bs)] (C divisible by bs*bs):
 *   out[b][h][w][d] = in[b][h/bs][w/bs][((h%bs)*bs + w%bs) * C/(bs*bs) + d]
 * SPACE_TO_DEPTH [B,H,W,C] -> [B,H/bs,W/bs,C*bs*bs] (H and W divisible by bs):
 *   out[b][h][w][(i*bs + j)*C + c] = in[b][h*bs+i][w*bs+j][c]
 * Either way one run of channels moves as a block per (pixel, i, j). */
#include <string.h>

#include "engine/kernels/kernel.h"
#include "engine/kernels/movement.h"

#define SHAPE_STR(t, buf) mp_shape_str((t)->rank, (t)->dims, (buf), sizeof(buf))

/* The checks both share and the output shape into dims. */
static mp_status space_shape(mp_node *n, int32_t *dims)
{
    mp_status st = mp_node_check_move_io(n, 1);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0];
    int32_t bs = n->opt->block_size;
    char b1[96];
    if (bs < 1)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "block_size %d is not valid (must be >= 1)", bs);
    if (in->rank != 4)
        return mp_node_fail(n, MP_ERR_SHAPE, "input '%s' %s must be NHWC (rank 4)", mp_tname(in),
                            SHAPE_STR(in, b1));
    int64_t b2 = (int64_t)bs * bs;
    if (n->opcode == MP_OP_DEPTH_TO_SPACE) {
        if (in->dims[3] % b2 != 0)
            return mp_node_fail(n, MP_ERR_SHAPE,
                                "channels of '%s' %s are not divisible by block_size^2 = %lld",
                                mp_tname(in), SHAPE_STR(in, b1), (long long)b2);
        int64_t h = (int64_t)in->dims[1] * bs, w = (int64_t)in->dims[2] * bs;
        if (h > INT32_MAX || w > INT32_MAX)
            return mp_node_fail(n, MP_ERR_SHAPE, "output of '%s' %s is too large", mp_tname(in),
                                SHAPE_STR(in, b1));
        dims[0] = in->dims[0];
        dims[1] = (int32_t)h;
        dims[2] = (int32_t)w;
        dims[3] = (int32_t)(in->dims[3] / b2);
    } else {
        if (in->dims[1] % bs != 0 || in->dims[2] % bs != 0)
            return mp_node_fail(n, MP_ERR_SHAPE,
                                "height and width of '%s' %s are not divisible by block_size %d",
                                mp_tname(in), SHAPE_STR(in, b1), bs);
        int64_t c = (int64_t)in->dims[3] * b2;
        if (c > INT32_MAX)
            return mp_node_fail(n, MP_ERR_SHAPE, "output of '%s' %s is too large", mp_tname(in),
                                SHAPE_STR(in, b1));
        dims[0] = in->dims[0];
        dims[1] = in->dims[1] / bs;
        dims[2] = in->dims[2] / bs;
        dims[3] = (int32_t)c;
    }
    return MP_OK;
}

static mp_status space_infer(mp_node *n)
{
    int32_t dims[4];
    mp_status st = space_shape(n, dims);
    if (st != MP_OK)
        return st;
    return mp_node_set_output_shape(n, 4, dims);
}

static mp_status space_run(mp_node *n)
{
    int32_t dims[4];
    mp_status st = space_shape(n, dims);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0];
    mp_tensor *out = n->out[0];
    char b1[96];
    if (out->rank != 4 || memcmp(out->dims, dims, sizeof dims))
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' %s does not match the block size",
                            mp_tname(out), SHAPE_STR(out, b1));
    if (out->bytes == 0)
        return MP_OK;
    const size_t es = mp_dtype_size(in->dtype), bs = (size_t)n->opt->block_size;
    /* name the "space" side (large H, W; channels c) and the "depth" side (small H, W;
     * channels c*bs*bs): depth pixel (y, x) block (i, j) <-> space pixel (y*bs+i, x*bs+j) */
    bool d2s = n->opcode == MP_OP_DEPTH_TO_SPACE;
    const int32_t *sp = d2s ? out->dims : in->dims, *dp = d2s ? in->dims : out->dims;
    const size_t batch = (size_t)dp[0], dh = (size_t)dp[1], dw = (size_t)dp[2];
    const size_t run = (size_t)sp[3] * es;          /* channels of one space pixel */
    const size_t s_row = (size_t)sp[2] * run;       /* one space row */
    const uint8_t *src = in->data;
    uint8_t *dst = out->data;
    for (size_t b = 0; b < batch; b++)
        for (size_t y = 0; y < dh; y++)
            for (size_t x = 0; x < dw; x++) {
                /* the depth pixel's bs*bs runs, in (i, j) order */
                size_t dpix = ((b * dh + y) * dw + x) * bs * bs * run;
                for (size_t i = 0; i < bs; i++) {
                    size_t spix = (b * dh * bs + y * bs + i) * s_row + x * bs * run;
                    for (size_t j = 0; j < bs; j++) {
                        size_t dof = dpix + (i * bs + j) * run, sof = spix + j * run;
                        if (d2s)
                            memcpy(dst + sof, src + dof, run);
                        else
                            memcpy(dst + dof, src + sof, run);
                    }
                }
            }
    return MP_OK;
}

const mp_kernel mp_kernels_space[] = {
    {.opcode = MP_OP_DEPTH_TO_SPACE, .min_inputs = 1, .max_inputs = 1, .n_outputs = 1,
     .infer = space_infer, .run = space_run},
    {.opcode = MP_OP_SPACE_TO_DEPTH, .min_inputs = 1, .max_inputs = 1, .n_outputs = 1,
     .infer = space_infer, .run = space_run},
    {.opcode = -1},
};
