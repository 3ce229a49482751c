/* memprof bench's driver: the contestants (the static, dynamic and auto modes, one
 * session each, and XNNPACK's runtime with --peer xnnpack) loaded, prepared and run in
 * turns, the resident memory sampled after each phase, and their figures made once the runs
 * are over (statistics, the allocations and peak of each mode's trace). */
#ifndef MP_BENCH_DRIVER_H
#define MP_BENCH_DRIVER_H

#include <pthreadpool.h>
#include <stdbool.h>
#include <stdint.h>

#include "cli/bench_stats.h"
#include "cli/call_orders.h"
#include "cli/options.h"
#include "engine/session.h"
#include "peers/xnnpack_runtime.h"
#include "reports/bench_report.h"

#define MP_BENCH_MODES 3        /* static, dynamic, auto: mode[0] is the baseline of ratios */
#define MP_BENCH_RSS_STEPS 16

extern const mp_memory_mode mp_bench_modes[MP_BENCH_MODES]; /* static, dynamic, auto */

typedef struct mp_bench_args {
    const char *model, *out_path;
    mp_model_opts m; /* --shape, --input, --shape-at, -r, -w, --threads */
    bool peer, json, no_huge_pages;
    mp_plan_at plan_at; /* --plan-at (DEFAULT: prepare) */
} mp_bench_args;

/* One contestant: a memory mode of ours, or the peer. */
typedef struct mp_contestant {
    const char *name;
    bool is_peer;
    mp_session *s;
    mp_trace *tr;
    mp_xnn_peer *p;
    bool has_load;          /* the peer has no load of its own */
    uint64_t load_ns, prepare_ns, first_ns;
    uint64_t *later;        /* runs samples */
    mp_xnn_peer_memory pm;  /* the peer after its runs */
} mp_contestant;

typedef struct mp_bench {
    const mp_bench_args *a;
    mp_contestant c[MP_BENCH_MODES + 1];
    int n;                  /* contestants: MP_BENCH_MODES, + 1 with the peer */
    mp_bench_row rows[MP_BENCH_MODES + 1]; /* their figures, once the runs are over */
    mp_bench_rss rss[MP_BENCH_RSS_STEPS];
    int n_rss;
    bool rss_ok;
    mp_cli_inputs *in;
    mp_shape_args *sp;
    /* One pool of --threads workers for every session and the peer: they take turns, and
     * the idle workers of separate pools would spin against the running ones (5 to 9 times
     * slower runs at 2 threads on 2 cores). NULL at 1 thread. */
    pthreadpool_t pool;
} mp_bench;

/* Load, prepare and run every contestant (the model from bytes, or its file when NULL);
 * errors printed; returns the exit code. */
int mp_bench_drive(mp_bench *b, const void *bytes, size_t size, mp_progress *pg);
/* b->rows from the runs (the sessions and the peer already destroyed). */
int mp_bench_conclude(mp_bench *b);

#endif
