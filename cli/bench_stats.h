/* Summary statistics of a set of timings (memprof bench, scenarios and run): mean, median,
 * min, max and geometric mean, computed once here so that every command agrees on them
 * (the struct and its JSON are reports/bench_report.h's); the order memprof bench's
 * contestants take turns in; and the progress line long commands show on a terminal. */
#ifndef MP_BENCH_STATS_H
#define MP_BENCH_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reports/bench_report.h" /* mp_stats, mp_stats_ratio, mp_stats_json */

/* Statistics of ns[0..n). ns is sorted in place (ascending). */
void mp_stats_compute(uint64_t *ns, size_t n, mp_stats *out);

/* The order contestants take turns in (memprof bench): which of n runs j-th in round r
 * (r = 0, 1, ...). Rows of a Williams design: over a cycle of n rounds (2n when n is odd)
 * each contestant runs right after each other one equally often within the rounds, so that
 * the caches one leaves behind favour nobody (a plain rotation put one contestant after the
 * same other in most rounds). */
int mp_bench_order(int n, long r, int j);

/* A progress line on stderr, rewritten in place ('\r'), shown only when stderr is a
 * terminal and the work has taken more than a second so far (the environment variable
 * MP_PROGRESS_AFTER_MS sets another delay: 0 draws from the first step, as the tests do);
 * cleared by mp_progress_end. Nothing is written when stderr is not a terminal. The one
 * progress line of every long command (run --runs, bench, scenarios, train, pipeline). */
typedef struct mp_progress {
    bool tty;
    bool shown;
    uint64_t t0_ns, last_ns, after_ns;
    long base, total; /* steps done before the current part, and in all (mp_progress_step) */
} mp_progress;
void mp_progress_begin(mp_progress *p);
void mp_progress_update(mp_progress *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The line "LABEL  N% done, about T left" after p->base + done of p->total steps (the time
 * left extrapolated from the time so far); LABEL from fmt. */
void mp_progress_step(mp_progress *p, long done, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void mp_progress_end(mp_progress *p);

#endif
