/* Kernel test harness implementation (see kernel_harness.h). */
#include "tests/util/kernel_harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xnnpack.h>

#include "tests/util/testutil.h"
#include "engine/session.h"

void kh_init(kh_case *c, int32_t opcode, pthreadpool_t pool)
{
    memset(c, 0, sizeof *c);
    assert_int_equal(mp_mem_xnn_init(), 0);
    c->mem = mp_mem_create();
    mp_mem_set_current(c->mem, 0);
    c->opt.stride_w = c->opt.stride_h = 1;
    c->opt.dilation_w = c->opt.dilation_h = 1;
    c->opt.depth_multiplier = 1;
    c->opt.beta = 1.0f;
    c->opt.out_type = MP_DT_INT32;
    c->opt.in_data_type = c->opt.out_data_type = -1;
    c->node.index = 0;
    c->node.opcode = opcode;
    c->node.opt = &c->opt;
    c->node.in = c->in;
    c->node.out = c->out;
    c->node.mem = c->mem;
    c->node.pool = pool;
    c->node.err = &c->err;
    c->node.model_path = "test";
    c->kernel = mp_kernel_find(opcode);
}

static mp_tensor *new_tensor(kh_case *c, mp_dtype dt)
{
    assert_true(c->n_tensors < KH_MAX_TENSORS);
    int i = c->n_tensors++;
    mp_tensor *t = &c->tensors[i];
    mp_tensor_info *info = &c->infos[i];
    static const char *names[KH_MAX_TENSORS] = {"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7",
                                                "t8", "t9", "t10", "t11", "t12", "t13", "t14", "t15",
                                                "t16", "t17", "t18", "t19", "t20", "t21", "t22",
                                                "t23", "t24", "t25", "t26", "t27", "t28", "t29",
                                                "t30", "t31"};
    info->name = names[i];
    info->dtype = dt;
    t->index = i;
    t->info = info;
    t->dtype = dt;
    return t;
}

mp_tensor *kh_input(kh_case *c, mp_dtype dt, int32_t rank, const int32_t *dims, const void *data)
{
    mp_tensor *t = new_tensor(c, dt);
    assert_true(mp_tensor_set_shape(t, rank, dims));
    mp_tensor_info *info = (mp_tensor_info *)t->info;
    info->rank = rank;
    if (rank)
        memcpy(info->shape, dims, sizeof(int32_t) * (size_t)rank);
    if (data) {
        t->data = (void *)data;
        t->is_const = true;
        t->value_known = true;
        info->data = data;
        info->data_bytes = t->bytes;
    } else {
        t->data = calloc(1, t->bytes + XNN_EXTRA_BYTES);
    }
    c->in[c->node.n_in++] = t;
    return t;
}

void kh_omit_input(kh_case *c)
{
    c->in[c->node.n_in++] = NULL;
}

mp_tensor *kh_output(kh_case *c, mp_dtype dt)
{
    mp_tensor *t = new_tensor(c, dt);
    c->out[c->node.n_out++] = t;
    return t;
}

void kh_quant(kh_case *c, mp_tensor *t, int32_t count, const float *scale, const int64_t *zp,
              int32_t dim)
{
    (void)c;
    mp_tensor_info *info = (mp_tensor_info *)t->info;
    info->quant.count = count;
    info->quant.scale = scale;
    info->quant.zero_point = zp;
    info->quant.quantized_dimension = dim;
}

mp_status kh_run(kh_case *c)
{
    if (!c->kernel)
        return mp_fail(&c->err, MP_ERR_UNSUPPORTED, "no kernel for opcode %d", c->node.opcode);
    mp_status st = c->kernel->infer(&c->node);
    if (st != MP_OK)
        return st;
    for (int i = 0; i < c->node.n_out; i++) {
        mp_tensor *t = c->out[i];
        free(t->data);
        t->data = calloc(1, t->bytes + XNN_EXTRA_BYTES);
        assert_non_null(t->data);
    }
    /* The session's part: the scratch infer declared, 64-byte aligned, with garbage in it
     * (a kernel may not expect anything there). */
    free(c->node.scratch);
    c->node.scratch = NULL;
    if (c->node.scratch_bytes > 0) {
        size_t n = (c->node.scratch_bytes + 63) / 64 * 64;
        c->node.scratch = aligned_alloc(64, n);
        assert_non_null(c->node.scratch);
        memset(c->node.scratch, 0xA5, n);
    }
    return kh_rerun(c, true);
}

mp_status kh_rerun(kh_case *c, bool reprepare)
{
    mp_status st = MP_OK;
    if (reprepare && c->kernel->prepare)
        st = c->kernel->prepare(&c->node);
    if (st == MP_OK)
        st = c->kernel->run(&c->node);
    return st;
}

struct mp_session *kh_session(int mode, void *bytes, size_t size, const char *label)
{
    mp_session_options so = {.mode = (mp_memory_mode)mode};
    mp_session *s = NULL;
    mp_error err = {0};
    assert_int_equal(mp_session_create(&so, &s, &err), MP_OK);
    mp_status st = mp_session_load_memory(s, bytes, size, label, &err);
    free(bytes);
    if (st != MP_OK)
        fail_msg("load: %s", err.msg);
    if (mp_session_prepare(s, &err) != MP_OK)
        fail_msg("prepare: %s", err.msg);
    return s;
}

void kh_free(kh_case *c)
{
    if (c->kernel && c->kernel->release)
        c->kernel->release(&c->node);
    free(c->node.scratch);
    for (int i = 0; i < c->n_tensors; i++)
        if (!c->tensors[i].is_const)
            free(c->tensors[i].data);
    const mp_mem_stats *s = mp_mem_get_stats(c->mem);
    assert_int_equal(s->bytes_alloc, s->bytes_free);
    mp_mem_set_current(NULL, -1);
    mp_mem_destroy(c->mem);
}

float kh_frand(uint32_t *seed, float scale)
{
    *seed = *seed * 1664525u + 1013904223u;
    return scale * ((float)((*seed >> 8) & 0xffff) / 32768.0f - 1.0f);
}

int32_t kh_irand(uint32_t *seed, int32_t n)
{
    return (int32_t)((kh_frand(seed, 1.0f) + 1.0f) * 0.5f * (float)n) % n;
}

size_t kh_flat(int32_t rank, const int32_t *dims, const int32_t *idx)
{
    size_t f = 0;
    for (int32_t i = 0; i < rank; i++)
        f = f * (size_t)dims[i] + (size_t)idx[i];
    return f;
}

void kh_next(int32_t rank, const int32_t *dims, int32_t *idx)
{
    for (int32_t d = rank - 1; d >= 0; d--) {
        if (++idx[d] < dims[d])
            return;
        idx[d] = 0;
    }
}

void kh_fill(float *x, size_t n, uint32_t seed, float scale)
{
    for (size_t i = 0; i < n; i++)
        x[i] = kh_frand(&seed, scale);
}

void kh_fill_bytes(mp_tensor *t, unsigned seed)
{
    uint8_t *x = t->data;
    for (size_t i = 0; i < t->bytes; i++)
        x[i] = (uint8_t)(seed + i * 131 + (i >> 3) * 17);
}

size_t kh_bc_offset(const mp_tensor *t, int32_t out_rank, const int32_t *out_dims, size_t flat)
{
    size_t off = 0, stride = 1;
    for (int32_t i = out_rank - 1; i >= 0; i--) {
        size_t coord = flat % (size_t)out_dims[i];
        flat /= (size_t)out_dims[i];
        int32_t j = i - (out_rank - t->rank);
        if (j < 0)
            continue;
        if (t->dims[j] != 1)
            off += coord * stride;
        stride *= (size_t)t->dims[j];
    }
    return off;
}

double kh_ref_act(double x, int act)
{
    switch (act) {
    case MP_ACT_RELU: return x < 0 ? 0 : x;
    case MP_ACT_RELU_N1_TO_1: return x < -1 ? -1 : (x > 1 ? 1 : x);
    case MP_ACT_RELU6: return x < 0 ? 0 : (x > 6 ? 6 : x);
    case MP_ACT_TANH: return tanh(x);
    case MP_ACT_SIGN_BIT: return signbit(x) ? 1.0 : 0.0;
    default: return x;
    }
}

int32_t kh_conv_out_size(int32_t in, int32_t k, int32_t stride, int32_t dil, int32_t padding)
{
    int32_t eff = (k - 1) * dil + 1;
    return padding == MP_PAD_SAME ? (in + stride - 1) / stride : (in - eff) / stride + 1;
}

int32_t kh_conv_pad_before(int32_t in, int32_t k, int32_t stride, int32_t dil, int32_t padding)
{
    int32_t eff = (k - 1) * dil + 1;
    int32_t total = (kh_conv_out_size(in, k, stride, dil, padding) - 1) * stride + eff - in;
    return padding == MP_PAD_SAME && total > 0 ? total / 2 : 0;
}

void kh_q_act_range(int act, float scale, int32_t zp, int32_t qmin, int32_t qmax, int32_t *lo,
                    int32_t *hi)
{
    *lo = qmin;
    *hi = qmax;
    if (act == MP_ACT_RELU || act == MP_ACT_RELU6)
        *lo = zp > qmin ? zp : qmin;
    if (act == MP_ACT_RELU6) {
        int32_t six = zp + (int32_t)roundf(6.0f / scale);
        *hi = six < qmax ? six : qmax;
    }
    if (act == MP_ACT_RELU_N1_TO_1) {
        int32_t m1 = zp + (int32_t)roundf(-1.0f / scale), p1 = zp + (int32_t)roundf(1.0f / scale);
        *lo = m1 > qmin ? m1 : qmin;
        *hi = p1 < qmax ? p1 : qmax;
    }
}

void kh_expect_close(const float *got, const float *want, size_t n, double lo)
{
    size_t at = 0;
    double e = mp_test_max_rel_err(got, want, n, lo, &at);
    if (e > 1e-5) {
        fprintf(stderr, "mismatch at %zu: got %.7g want %.7g (rel err %g)\n", at,
                (double)got[at], (double)want[at], e);
        fail();
    }
}

void kh_expect_ok(kh_case *c, mp_status st)
{
    if (st != MP_OK) {
        fprintf(stderr, "unexpected failure: %s\n", c->err.msg);
        fail();
    }
}

void kh_expect_fail(kh_case *c, mp_status got, mp_status want, const char *needle)
{
    if (got != want || (needle && !strstr(c->err.msg, needle))) {
        fprintf(stderr, "expected status %d mentioning '%s', got %d: %s\n", want, needle, got,
                c->err.msg);
        fail();
    }
}

void kh_expect_error(kh_case *c, mp_status want, const char *needle)
{
    kh_expect_fail(c, kh_run(c), want, needle);
}

size_t kh_pack_strings(uint8_t *buf, size_t cap, int n, const char *const *s)
{
    size_t pos = 4 * ((size_t)n + 2);
    int32_t v = n;
    assert_true(pos <= cap);
    memcpy(buf, &v, 4);
    for (int i = 0; i < n; i++) {
        v = (int32_t)pos;
        memcpy(buf + 4 + 4 * (size_t)i, &v, 4);
        const size_t len = strlen(s[i]);
        assert_true(pos + len <= cap);
        memcpy(buf + pos, s[i], len);
        pos += len;
    }
    v = (int32_t)pos;
    memcpy(buf + 4 + 4 * (size_t)n, &v, 4);
    return pos;
}

void kh_expect_strings(const void *data, size_t bytes, int n, const char *const *want)
{
    const uint8_t *p = data;
    int32_t count, a, b;
    assert_true(bytes >= 8);
    memcpy(&count, p, 4);
    assert_int_equal(count, n);
    size_t need = 4 * ((size_t)n + 2);
    for (int i = 0; i < n; i++) {
        memcpy(&a, p + 4 + 4 * (size_t)i, 4);
        memcpy(&b, p + 8 + 4 * (size_t)i, 4);
        const size_t len = strlen(want[i]);
        if ((size_t)(b - a) != len || memcmp(p + a, want[i], len) != 0)
            fail_msg("string %d is '%.*s', want '%s'", i, (int)(b - a), (const char *)p + a,
                     want[i]);
        need += len;
    }
    assert_int_equal(bytes, need);
}

void kh_run_single_input(int mode, void *bytes, size_t size, const char *label, const void *in,
                         size_t in_bytes, void **out, size_t *sizes)
{
    kh_run_single_input_n(mode, bytes, size, label, in, in_bytes, 1, out, sizes);
}

void kh_run_single_input_n(int mode, void *bytes, size_t size, const char *label,
                           const void *in, size_t in_bytes, int n_out, void **out, size_t *sizes)
{
    struct mp_session *s = kh_session(mode, bytes, size, label);
    mp_error err = {0};
    assert_int_equal(mp_session_set_input(s, 0, in, in_bytes, &err), MP_OK);
    if (mp_session_run(s, &err) != MP_OK)
        fail_msg("run %s (%s): %s", label, mp_memory_mode_name((mp_memory_mode)mode), err.msg);
    for (int i = 0; i < n_out; i++) {
        const mp_tensor *t = mp_session_output(s, i);
        sizes[i] = t->bytes;
        out[i] = malloc(t->bytes);
        memcpy(out[i], t->data, t->bytes);
    }
    mp_session_destroy(s);
}

void kh_expect_modes_equal(kh_model_run run, int n)
{
    void *a[16], *b[16];
    size_t sa[16], sb[16];
    assert_true(n > 0 && n <= 16);
    run(MP_MEMORY_STATIC, a, sa);
    run(MP_MEMORY_DYNAMIC, b, sb);
    for (int i = 0; i < n; i++) {
        assert_int_equal(sa[i], sb[i]);
        assert_memory_equal(a[i], b[i], sa[i]);
        free(a[i]);
        free(b[i]);
    }
}
