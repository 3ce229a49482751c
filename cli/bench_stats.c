/* Summary statistics of timings: see bench_stats.h. */
#include "cli/bench_stats.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

void mp_stats_compute(uint64_t *ns, size_t n, mp_stats *out)
{
    memset(out, 0, sizeof *out);
    if (!ns || n == 0)
        return;
    qsort(ns, n, sizeof ns[0], cmp_u64);
    double sum = 0, logs = 0;
    for (size_t i = 0; i < n; i++) {
        sum += (double)ns[i];
        logs += log(ns[i] ? (double)ns[i] : 1.0);
    }
    out->n = n;
    out->mean_ns = sum / (double)n;
    out->median_ns = n % 2 ? (double)ns[n / 2] : ((double)ns[n / 2 - 1] + (double)ns[n / 2]) / 2;
    out->min_ns = (double)ns[0];
    out->max_ns = (double)ns[n - 1];
    out->geomean_ns = exp(logs / (double)n);
}


int mp_bench_order(int n, long r, int j)
{
    if (n <= 1)
        return 0;
    /* row 0: 0, 1, n-1, 2, n-2, ...; row r adds r (mod n); odd n: rows n..2n-1 reversed */
    long cycle = n % 2 ? 2L * n : n, row = r % cycle;
    if (row >= n)
        j = n - 1 - j;
    int first = j == 0 ? 0 : j % 2 ? (j + 1) / 2 : n - j / 2;
    return (int)((first + row) % n);
}


static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void mp_progress_begin(mp_progress *p)
{
    memset(p, 0, sizeof *p);
    p->tty = isatty(STDERR_FILENO) == 1;
    p->t0_ns = now_ns();
    p->after_ns = 1000000000u;
    const char *env = getenv("MP_PROGRESS_AFTER_MS");
    char *end = NULL;
    long long ms = env && *env ? strtoll(env, &end, 10) : -1;
    if (ms >= 0 && ms <= 3600000 && *end == 0)
        p->after_ns = (uint64_t)ms * 1000000u;
}

/* Whether to draw now: on a terminal, after the first second (p->after_ns), then at most
 * ten times a second. */
static bool due(const mp_progress *p, uint64_t t)
{
    return p->tty && t - p->t0_ns >= p->after_ns && (!p->shown || t - p->last_ns >= 100000000u);
}

static void draw(mp_progress *p, const char *line, uint64_t t)
{
    fprintf(stderr, "\r%-79.79s", line);
    fflush(stderr);
    p->shown = true;
    p->last_ns = t;
}

void mp_progress_update(mp_progress *p, const char *fmt, ...)
{
    uint64_t t = now_ns();
    if (!due(p, t))
        return;
    char line[80];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    draw(p, line, t);
}

void mp_progress_step(mp_progress *p, long done, const char *fmt, ...)
{
    uint64_t t = now_ns();
    if (!due(p, t))
        return;
    char label[64], left[64] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(label, sizeof label, fmt, ap);
    va_end(ap);
    long all = p->total > 0 ? p->total : 1, at = p->base + done;
    at = at < 0 ? 0 : at > all ? all : at;
    if (at > 0) {
        double s = (double)(t - p->t0_ns) / 1e9 * (double)(all - at) / (double)at;
        if (s < 60)
            snprintf(left, sizeof left, ", about %.0f s left", s + 0.5);
        else
            snprintf(left, sizeof left, ", about %ld min %02ld s left", (long)s / 60,
                     (long)s % 60);
    }
    char line[192]; /* label (63) + "  " + a percent (up to 20 digits) + "% done" + left (63) */
    snprintf(line, sizeof line, "%s  %ld%% done%s", label, (long)(100.0 * (double)at / (double)all),
             left);
    draw(p, line, t);
}

void mp_progress_end(mp_progress *p)
{
    if (p->shown) {
        fprintf(stderr, "\r%79s\r", "");
        fflush(stderr);
    }
    p->shown = false;
}
