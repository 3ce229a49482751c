/* memprof bench's output: per contestant (a memory mode, or the XNNPACK peer) and phase the
 * timing statistics and their ratio to static, the allocations and peak from each mode's
 * trace, and the process's resident memory after each phase; as text or JSON (format
 * memprof-bench, docs/json.md). Also the timing statistics every timing report shares
 * (bench, scenarios, run) and their JSON. The command fills the plain structs below. */
#ifndef MP_BENCH_REPORT_H
#define MP_BENCH_REPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace/status.h"

typedef struct mp_stats {
    size_t n;           /* samples (0 = none: every figure is 0) */
    double mean_ns;
    double median_ns;   /* even count: the mean of the two middle samples */
    double min_ns, max_ns;
    double geomean_ns;  /* exp(mean(log x)); a 0 ns sample counts as 1 ns */
} mp_stats;

/* a / b, or 0 when b is 0 (a ratio to a baseline that has no figure). */
double mp_stats_ratio(double a, double b);
/* {"n", "mean_ms", "median_ms", "min_ms", "max_ms", "geomean_ms"} (milliseconds). */
json_t *mp_stats_json(const mp_stats *st);
/* o[key] = v, as the timing reports write their byte counts. */
void mp_json_set_u64(json_t *o, const char *key, uint64_t v);
/* Write a timing report's document (indented, 9 significant digits, a final newline) and
 * release it; MP_ERR_IO when it cannot be written (root NULL: out of memory). */
mp_status mp_report_timing_json(FILE *f, json_t *root, mp_error *err);

#define MP_BENCH_PHASES 4 /* load, prepare, first run, later runs */

/* One contestant; rows[0] (static) is the baseline of the ratios. */
typedef struct mp_bench_row {
    const char *name;
    bool is_peer;
    mp_stats st[MP_BENCH_PHASES]; /* n 0: the phase does not exist (the peer's load) */
    uint64_t first_allocs, first_bytes, later_allocs, later_bytes, peak;
    uint64_t static_bytes, dynamic_bytes, dup_bytes;                       /* a mode */
    uint64_t workspace, other, live, external, static_copy, run_allocations; /* the peer */
} mp_bench_row;

/* The resident memory after one phase, and the bytes the sessions had allocated then. */
typedef struct mp_bench_rss {
    char label[32];
    uint64_t rss, hwm, recorded;
} mp_bench_rss;

/* One shape given for an input. */
typedef struct mp_bench_shape {
    int input;
    const char *name;
    int rank;
    const int32_t *dims;
} mp_bench_shape;

typedef struct mp_bench_report {
    const char *model;
    long threads, runs, warmup;
    bool huge_pages, peer;
    const char *plan_at;     /* --plan-at as given (NULL: the default, prepare) */
    const char *shape_at;
    const mp_bench_shape *shapes;
    int n_shapes;
    const mp_bench_row *rows;
    int n_rows;
    bool rss_ok; /* /proc/self/status was readable */
    const mp_bench_rss *rss;
    int n_rss;
} mp_bench_report;

void mp_report_bench_text(FILE *f, const mp_bench_report *r);
mp_status mp_report_bench_json(FILE *f, const mp_bench_report *r, mp_error *err);

#endif
