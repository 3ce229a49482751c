/* Summary statistics of a set of timings (memprof bench, scenarios and run): mean, median,
 * min, max and geometric mean, computed once here so that every command agrees on them;
 * their JSON form; the order memprof bench's contestants take turns in; and the progress
 * line long commands show on a terminal. */
#ifndef MP_BENCH_STATS_H
#define MP_BENCH_STATS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct mp_stats {
    size_t n;           /* samples (0 = none: every figure is 0) */
    double mean_ns;
    double median_ns;   /* even count: the mean of the two middle samples */
    double min_ns, max_ns;
    double geomean_ns;  /* exp(mean(log x)); a 0 ns sample counts as 1 ns */
} mp_stats;

/* Statistics of ns[0..n). ns is sorted in place (ascending). */
void mp_stats_compute(uint64_t *ns, size_t n, mp_stats *out);

/* a / b, or 0 when b is 0 (a ratio to a baseline that has no figure). */
double mp_stats_ratio(double a, double b);

/* The order contestants take turns in (memprof bench): which of n runs j-th in round r
 * (r = 0, 1, ...). Rows of a Williams design: over a cycle of n rounds (2n when n is odd)
 * each contestant runs right after each other one equally often within the rounds, so that
 * the caches one leaves behind favour nobody (a plain rotation put one contestant after the
 * same other in most rounds). */
int mp_bench_order(int n, long r, int j);

/* {"n", "mean_ms", "median_ms", "min_ms", "max_ms", "geomean_ms"} (milliseconds). */
json_t *mp_stats_json(const mp_stats *st);

/* A progress line on stderr, rewritten in place ('\r'), shown only when stderr is a
 * terminal and the work has taken more than a second so far; cleared by mp_progress_end. */
typedef struct mp_progress {
    bool tty;
    bool shown;
    uint64_t t0_ns, last_ns;
} mp_progress;
void mp_progress_begin(mp_progress *p);
void mp_progress_update(mp_progress *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void mp_progress_end(mp_progress *p);

#endif
