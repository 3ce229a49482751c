/* trace_scan: full passes over a saved trace through a file source (analyzers/source.h),
 * for scripts/bench_report.sh. Prints the events counted, the time of a pass and the rate;
 * a bad file prints the reader's message and exits 1.
 *   trace_scan TRACE.json [PASSES]     PASSES passes (default 1) over the source
 *   trace_scan TRACE.json --summary    mp_summary_compute_source over it (two passes)
 *   trace_scan TRACE.json --load       mp_trace_load (the whole trace in memory) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyzers/source.h"
#include "analyzers/summary.h"

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double now_s(void)
{
    return clock_s(CLOCK_MONOTONIC);
}

/* CPU time of the process (what a pass costs, whatever else the machine is doing). */
static double cpu_s(void)
{
    return clock_s(CLOCK_PROCESS_CPUTIME_ID);
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: trace_scan TRACE.json [PASSES]\n");
        return 2;
    }
    const char *opt = argc == 3 ? argv[2] : "1";
    mp_error err = {0};
    mp_source *src = NULL;
    double t0 = now_s();
    if (strcmp(opt, "--load") == 0) {
        mp_trace *tr = NULL;
        if (mp_trace_load(argv[1], &tr, &err) != MP_OK) {
            fprintf(stderr, "trace_scan: %s\n", err.msg);
            return 1;
        }
        double t = now_s() - t0;
        printf("%s: mp_trace_load %zu events in %.3f s (%.1f ns/event)\n", argv[1],
               mp_trace_count(tr), t, t * 1e9 / (double)(mp_trace_count(tr) + 1));
        mp_trace_destroy(tr);
        return 0;
    }
    if (strcmp(opt, "--summary") == 0) {
        mp_summary s;
        if (mp_source_open(argv[1], &src, &err) != MP_OK ||
            mp_summary_compute_source(src, &s, &err) != MP_OK) {
            fprintf(stderr, "trace_scan: %s\n", err.msg);
            mp_source_close(src);
            return 1;
        }
        double t = now_s() - t0;
        printf("%s: summary of %zu events in %.3f s: %zu runs, heap peak %llu B at event "
               "%lld, %llu allocations, %llu frees, live at end %llu B, %llu anomalies%s%s\n",
               argv[1], s.n_events, t, s.n_runs, (unsigned long long)s.peak_heap,
               (long long)s.peak.event, (unsigned long long)s.n_alloc,
               (unsigned long long)s.n_free, (unsigned long long)s.live_end,
               (unsigned long long)s.n_anomalies, s.n_anomalies ? ": " : "", s.anomaly);
        mp_summary_free(&s);
        mp_source_close(src);
        return 0;
    }
    int passes = atoi(opt);
    if (passes < 1)
        passes = 1;
    if (mp_source_open(argv[1], &src, &err) != MP_OK) {
        fprintf(stderr, "trace_scan: %s\n", err.msg);
        return 1;
    }
    double t_open = now_s() - t0;
    uint64_t sum = 0; /* touch every event so that nothing is optimised away */
    size_t n = 0;
    double t1 = now_s(), c1 = cpu_s();
    for (int p = 0; p < passes; p++) {
        if (mp_source_rewind(src, &err) != MP_OK) {
            fprintf(stderr, "trace_scan: %s\n", err.msg);
            mp_source_close(src);
            return 1;
        }
        mp_event ev;
        int got;
        n = 0;
        while ((got = mp_source_next(src, &ev, &err)) > 0) {
            sum += ev.bytes ^ ev.t_ns;
            n++;
        }
        if (got < 0) {
            fprintf(stderr, "trace_scan: %s\n", err.msg);
            mp_source_close(src);
            return 1;
        }
    }
    double t_pass = (now_s() - t1) / passes, c_pass = (cpu_s() - c1) / passes;
    printf("%s: %zu events (source count %zu), %d tensors, %d ops%s; open %.3f s; a pass: "
           "%.3f s (%.1f ns/event, %.2f M events/s), cpu %.3f s (%.1f ns/event) "
           "(checksum %llx)\n",
           argv[1], n, mp_source_count(src), (int)mp_source_meta(src)->n_tensors,
           (int)mp_source_meta(src)->n_ops, mp_source_truncated(src) ? ", truncated" : "",
           t_open, t_pass, n ? t_pass * 1e9 / (double)n : 0.0,
           t_pass > 0 ? (double)n / t_pass / 1e6 : 0.0, c_pass,
           n ? c_pass * 1e9 / (double)n : 0.0, (unsigned long long)(sum & 0xffff));
    mp_source_close(src);
    return 0;
}
