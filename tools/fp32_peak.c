/* fp32_peak: the machine's FP32 peak, measured with a large XNNPACK fully-connected operator,
 * next to a model's end-to-end throughput on our engine (static mode), so that the model's
 * speed reads as a share of what the machine can do.
 *
 *   fp32_peak [--threads N] [--runs N] [--gemm M,K,N] [MODEL]
 *
 * Peak: a fully-connected operator of batch M, K inputs and N outputs does 2*M*K*N floating
 * point operations per run; its median time over --runs runs gives GFLOP/s. XNNPACK's GEMM
 * does not block K, so its speed depends on how the packed weights sit in the caches: the
 * peak is the best of a few large shapes (or of the one --gemm gives). Model: the
 * multiply-accumulates of a run (mp_session_macs: convolutions and fully connected layers,
 * 2 FLOPs each) over its median run time. MODEL defaults to zoo:mobilenet_v2. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pthreadpool.h>
#include <xnnpack.h>

#include "engine/memory/mem.h"
#include "engine/model/reference_input.h"
#include "engine/session.h"

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

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

/* Median seconds of one run of an M x K x N fully-connected operator; < 0 on failure. */
static double gemm_seconds(size_t m, size_t k, size_t n, int threads, int runs)
{
    mp_mem *mem = mp_mem_create();
    float *x = malloc(m * k * sizeof(float) + XNN_EXTRA_BYTES);
    float *w = malloc(k * n * sizeof(float));
    float *y = malloc(m * n * sizeof(float));
    uint64_t *t = calloc((size_t)runs, sizeof *t);
    pthreadpool_t pool = threads > 1 ? pthreadpool_create((size_t)threads) : NULL;
    xnn_operator_t op = NULL;
    double secs = -1;
    if (!mem || !x || !w || !y || !t || (threads > 1 && !pool))
        goto done;
    for (size_t i = 0; i < m * k; i++)
        x[i] = (float)(i % 17) / 17.0f - 0.5f;
    for (size_t i = 0; i < k * n; i++)
        w[i] = (float)(i % 13) / 130.0f - 0.05f;
    mp_mem_set_current(mem, -1); /* XNNPACK's packed weights are counted in mem */
    if (mp_mem_xnn_init() != 0 ||
        xnn_create_fully_connected_nc_f32(k, n, k, n, w, NULL, -INFINITY, INFINITY, 0, &op) !=
            xnn_status_success ||
        xnn_setup_fully_connected_nc_f32(op, m, x, y, pool) != xnn_status_success)
        goto done;
    for (int r = -2; r < runs; r++) { /* two warm-up runs */
        uint64_t t0 = now_ns();
        if (xnn_run_operator(op, pool) != xnn_status_success)
            goto done;
        if (r >= 0)
            t[r] = now_ns() - t0;
    }
    secs = (double)median_ns(t, runs) / 1e9;
done:
    if (op)
        xnn_delete_operator(op);
    if (pool)
        pthreadpool_destroy(pool);
    mp_mem_destroy(mem);
    free(x);
    free(w);
    free(y);
    free(t);
    return secs;
}

/* Median seconds of a run of MODEL in static mode, and its MACs; < 0 on failure. */
static double model_seconds(const char *model, int threads, int runs, uint64_t *macs)
{
    mp_session_options o = {.threads = threads, .mode = MP_MEMORY_STATIC};
    mp_session *s = NULL;
    mp_error err = {0};
    uint64_t *t = calloc((size_t)runs, sizeof *t);
    double secs = -1;
    if (!t || mp_session_create(&o, &s, &err) != MP_OK || mp_session_load(s, model, &err) ||
        mp_session_prepare(s, &err))
        goto done;
    for (int k = 0; k < mp_session_input_count(s); k++) {
        const mp_tensor *in = mp_session_input(s, k);
        void *buf = malloc(in->bytes + 1);
        bool ok = buf && mp_reference_input(buf, in->dtype, mp_tensor_elements(in), k) &&
                  mp_session_set_input(s, k, buf, in->bytes, &err) == MP_OK;
        free(buf);
        if (!ok)
            goto done;
    }
    *macs = mp_session_macs(s);
    for (int r = -3; r < runs; r++) {
        uint64_t t0 = now_ns();
        if (mp_session_run(s, &err) != MP_OK)
            goto done;
        if (r >= 0)
            t[r] = now_ns() - t0;
    }
    secs = (double)median_ns(t, runs) / 1e9;
done:
    if (secs < 0 && err.msg[0])
        fprintf(stderr, "fp32_peak: %s\n", err.msg);
    mp_session_destroy(s);
    free(t);
    return secs;
}

int main(int argc, char **argv)
{
    int threads = 1, runs = 20, n_shapes = 4;
    size_t shapes[][3] = {{512, 2048, 2048}, {4096, 512, 512}, {8192, 1024, 256},
                          {16384, 256, 512}};
    const char *model = "zoo:mobilenet_v2";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--gemm") == 0 && i + 1 < argc) {
            n_shapes = 1;
            if (sscanf(argv[++i], "%zu,%zu,%zu", &shapes[0][0], &shapes[0][1], &shapes[0][2]) != 3)
                shapes[0][0] = 0;
        } else if (argv[i][0] != '-')
            model = argv[i];
        else {
            fprintf(stderr, "usage: fp32_peak [--threads N] [--runs N] [--gemm M,K,N] [MODEL]\n");
            return 2;
        }
    }
    if (threads < 1 || runs < 1 || !shapes[0][0] || !shapes[0][1] || !shapes[0][2]) {
        fprintf(stderr, "fp32_peak: --threads and --runs must be positive, --gemm M,K,N\n");
        return 2;
    }
    /* the model first: the session installs the engine's XNNPACK allocator */
    uint64_t macs = 0;
    double ms = model_seconds(model, threads, runs, &macs);
    if (ms < 0) {
        fprintf(stderr, "fp32_peak: running %s failed\n", model);
        return 7;
    }
    printf("threads %d, median of %d runs\n", threads, runs);
    double peak = 0;
    for (int i = 0; i < n_shapes; i++) {
        size_t m = shapes[i][0], k = shapes[i][1], n = shapes[i][2];
        double gs = gemm_seconds(m, k, n, threads, runs);
        if (gs < 0) {
            fprintf(stderr, "fp32_peak: XNNPACK fully connected %zux%zux%zu failed\n", m, k, n);
            return 7;
        }
        double g = 2.0 * (double)m * (double)k * (double)n / gs / 1e9;
        printf("  fully connected %5zux%4zux%4zu %8.1f GFLOP/s  (%.3f ms)\n", m, k, n, g,
               gs * 1e3);
        if (g > peak)
            peak = g;
    }
    double achieved = 2.0 * (double)macs / ms / 1e9;
    printf("  machine FP32 peak            %8.1f GFLOP/s  (the best of the above)\n", peak);
    printf("  %-28s %8.1f GFLOP/s  (%.1f M multiply-adds in %.3f ms) = %.1f %% of peak\n",
           model, achieved, (double)macs / 1e6, ms * 1e3, 100.0 * achieved / peak);
    return 0;
}
