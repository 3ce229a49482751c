/* peer_xnnpack_mem: XNNPACK's own subgraph runtime (peers/xnnpack_runtime.h) beside our
 * engine, per model: what XNNPACK allocated for the peer (workspace, operators, packed
 * weights, tables, setup buffers, peak) next to our engine's planned arena and kernel bytes,
 * and with --latency the median time of a run of each.
 *
 *   peer_xnnpack_mem [--threads N] [--runs N] [--warmup N] [--latency] [MODEL...]
 *
 * MODEL is a .tflite path or zoo:NAME; without any, every model in ../shared/models (or
 * $MP_SHARED_DIR/models) that both run. Inputs follow the oracle's reference formula. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/model/reference_input.h"
#include "engine/session.h"
#include "peers/xnnpack_runtime.h"

#ifndef MP_SHARED_DIR_DEFAULT
#define MP_SHARED_DIR_DEFAULT "../shared"
#endif

typedef struct opts {
    int threads, runs, warmup;
    bool latency;
} opts;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static bool feed(mp_session *s, mp_xnn_peer *p)
{
    mp_error err;
    for (int k = 0; k < mp_session_input_count(s); k++) {
        const mp_tensor *x = mp_session_input(s, k);
        void *buf = calloc(x->bytes + 16, 1);
        bool ok = buf && mp_reference_input(buf, x->dtype, mp_tensor_elements(x), k) &&
                  mp_session_set_input(s, k, buf, x->bytes, &err) == MP_OK &&
                  mp_xnn_peer_set_input(p, k, buf, x->bytes, &err) == MP_OK;
        free(buf);
        if (!ok)
            return false;
    }
    return true;
}

static void header(const opts *o)
{
    printf("%-46s %10s %14s %14s %10s %10s %10s %10s %10s %10s | %10s %10s", "model",
           "workspace", "operators", "weights", "tables", "setup", "other", "peak", "subgraph",
           "external", "our arena", "our kernel");
    if (o->latency)
        printf(" | %10s %10s", "peer ms", "our ms");
    printf("\n");
}

/* One model: 0 = measured, 1 = refused by either runtime (reported), 2 = failure. */
static int measure(const char *spec, const char *label, const opts *o)
{
    mp_error err;
    mp_session_options so = {.threads = o->threads};
    mp_session *s = NULL;
    if (mp_session_create(&so, &s, &err) != MP_OK) {
        fprintf(stderr, "%s: %s\n", label, err.msg);
        return 2;
    }
    if (mp_session_load(s, spec, &err) != MP_OK || mp_session_prepare(s, &err) != MP_OK) {
        printf("%-46s our engine refuses: %.110s\n", label, err.msg);
        mp_session_destroy(s);
        return 1;
    }
    mp_xnn_peer_options po = {.threads = o->threads};
    mp_xnn_peer *p = NULL;
    if (mp_xnn_peer_create(s, &po, &p, &err) != MP_OK) {
        printf("%-46s peer refuses: %.140s\n", label, strstr(err.msg, "XNNPACK") ? strstr(err.msg, "XNNPACK") : err.msg);
        mp_session_destroy(s);
        return 1;
    }
    int rc = 0;
    double peer_ms = 0, our_ms = 0;
    if (!feed(s, p) || mp_session_run(s, &err) != MP_OK || mp_xnn_peer_run(p, &err) != MP_OK) {
        fprintf(stderr, "%s: run failed: %s\n", label, err.msg);
        rc = 2;
    } else if (o->latency) {
        int n = o->runs > 0 ? o->runs : 1;
        double *tp = calloc((size_t)n, sizeof(double)), *ts = calloc((size_t)n, sizeof(double));
        for (int i = 0; i < o->warmup; i++) {
            mp_xnn_peer_run(p, &err);
            mp_session_run(s, &err);
        }
        for (int i = 0; i < n && tp && ts; i++) { /* interleaved: same machine state */
            double t0 = now_ms();
            mp_xnn_peer_run(p, &err);
            double t1 = now_ms();
            mp_session_run(s, &err);
            double t2 = now_ms();
            tp[i] = t1 - t0;
            ts[i] = t2 - t1;
        }
        if (tp && ts) {
            peer_ms = median(tp, n);
            our_ms = median(ts, n);
        }
        free(tp);
        free(ts);
    }
    if (rc == 0) {
        mp_xnn_peer_memory m;
        mp_xnn_peer_memory_info(p, &m);
        mp_session_memory sm;
        mp_session_memory_info(s, &sm);
        const mp_mem_stats *st = mp_mem_get_stats(mp_session_mem(s));
        char ops[32], wts[32];
        snprintf(ops, sizeof ops, "%llu/%llu", (unsigned long long)m.operator_bytes,
                 (unsigned long long)m.operator_count);
        snprintf(wts, sizeof wts, "%llu/%llu", (unsigned long long)m.weights_bytes,
                 (unsigned long long)m.weights_count);
        printf("%-46s %10llu %14s %14s %10llu %10llu %10llu %10llu %10llu %10llu | %10llu %10llu",
               label, (unsigned long long)m.workspace_bytes, ops, wts,
               (unsigned long long)m.tables_bytes, (unsigned long long)m.setup_bytes,
               (unsigned long long)m.other_bytes, (unsigned long long)m.peak_bytes,
               (unsigned long long)m.subgraph_bytes, (unsigned long long)m.external_bytes,
               (unsigned long long)sm.arena_bytes,
               (unsigned long long)st->live[MP_MEM_KERNEL]);
        if (o->latency)
            printf(" | %10.3f %10.3f", peer_ms, our_ms);
        printf("%s\n", m.workspace_found ? "" : "  (workspace not identified)");
    }
    mp_xnn_peer_memory fin;
    mp_xnn_peer_destroy(p, &fin);
    if (fin.live_bytes != 0 || fin.bytes_allocated != fin.bytes_freed) {
        fprintf(stderr, "%s: the peer leaked %llu bytes\n", label,
                (unsigned long long)fin.live_bytes);
        rc = 2;
    }
    mp_session_destroy(s);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int main(int argc, char **argv)
{
    opts o = {.threads = 1, .runs = 20, .warmup = 3};
    const char *models[256];
    int n = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            o.threads = atoi(argv[++i]);
        else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
            o.runs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--warmup") == 0 && i + 1 < argc)
            o.warmup = atoi(argv[++i]);
        else if (strcmp(argv[i], "--latency") == 0)
            o.latency = true;
        else if (strcmp(argv[i], "--help") == 0 || argv[i][0] == '-') {
            fprintf(stderr, "usage: %s [--threads N] [--runs N] [--warmup N] [--latency] "
                            "[MODEL...]\n", argv[0]);
            return strcmp(argv[i], "--help") == 0 ? 0 : 2;
        } else if (n < 256)
            models[n++] = argv[i];
    }
    char *owned[256];
    int n_owned = 0;
    if (n == 0) {
        const char *env = getenv("MP_SHARED_DIR");
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/models", env && *env ? env : MP_SHARED_DIR_DEFAULT);
        DIR *d = opendir(dir);
        if (!d) {
            fprintf(stderr, "no models given and %s is absent (set MP_SHARED_DIR)\n", dir);
            return 2;
        }
        struct dirent *e;
        while ((e = readdir(d)) != NULL && n_owned < 256) {
            size_t len = strlen(e->d_name);
            if (len > 7 && strcmp(e->d_name + len - 7, ".tflite") == 0) {
                char *path = malloc(strlen(dir) + len + 2);
                if (!path)
                    break;
                sprintf(path, "%s/%s", dir, e->d_name);
                owned[n_owned++] = path;
            }
        }
        closedir(d);
        qsort(owned, (size_t)n_owned, sizeof owned[0], cmp_str);
        for (int i = 0; i < n_owned; i++)
            models[n++] = owned[i];
    }
    printf("bytes; operators and weights as bytes/blocks; %d thread%s\n", o.threads,
           o.threads == 1 ? "" : "s");
    header(&o);
    int worst = 0;
    for (int i = 0; i < n; i++) {
        const char *slash = strrchr(models[i], '/');
        int rc = measure(models[i], slash ? slash + 1 : models[i], &o);
        if (rc == 2)
            worst = 2;
    }
    for (int i = 0; i < n_owned; i++)
        free(owned[i]);
    return worst;
}
