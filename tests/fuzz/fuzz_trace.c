/* libFuzzer target for saved traces, the files people pass around: any bytes go through the
 * streaming reader (a file source), and a trace that opens goes through everything that
 * reads one: the profile (summary included), every report format (text, JSON, SVG, HTML,
 * Chrome trace; the JSON ones must parse back), two profiles compared, the baseline of
 * `memprof check` (whose file must read back equal) and the TUI's index (states, columns,
 * moving by operator, a tensor's events). Each step must either succeed or fail with a
 * one-line error and the documented status; a broken promise traps, so the fuzzer reports
 * it as a crash. The bytes are handed over as a memory file (memfd), reports go to memory
 * or /dev/null: nothing is written to disk.
 * Build and run with scripts/fuzz.sh. */
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "analyzers/baseline.h"
#include "analyzers/profile.h"
#include "analyzers/source.h"
#include "reports/chrome_trace.h"
#include "reports/html_report.h"
#include "reports/json_profile.h"
#include "reports/svg_charts.h"
#include "reports/text_profile.h"
#include "tui/index.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

static int g_fd = -1;      /* the memory file holding the input */
static char g_path[64];    /* /proc/self/fd/N */
static FILE *g_null;       /* reports nobody reads */

/* A refusal: the documented statuses, and a message on one line. */
static void check_refusal(mp_status st, const mp_error *err)
{
    CHECK(st == MP_ERR_FORMAT || st == MP_ERR_IO || st == MP_ERR_NOMEM);
    CHECK(err->status == st && err->msg[0] != '\0' && !strchr(err->msg, '\n'));
}

/* A JSON report: written to memory, it must be one valid JSON document. */
typedef mp_status (*json_writer)(FILE *f, const void *ctx, mp_error *err);

static void check_json_output(json_writer w, const void *ctx)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    CHECK(f != NULL);
    mp_error err = {0};
    mp_status st = w(f, ctx, &err);
    CHECK(fclose(f) == 0);
    if (st == MP_OK) {
        json_error_t je;
        json_t *root = json_loadb(buf, n, 0, &je);
        CHECK(root != NULL);
        json_decref(root);
    } else {
        CHECK(st == MP_ERR_NOMEM && err.msg[0] != '\0');
    }
    free(buf);
}

static mp_status write_profile_json(FILE *f, const void *p, mp_error *err)
{
    return mp_report_profile_json(f, p, err);
}

static mp_status write_chrome(FILE *f, const void *src, mp_error *err)
{
    return mp_report_chrome((mp_source *)src, f, err);
}

typedef struct diff_ctx {
    const mp_profile *p;
    const mp_profile_diff *d;
} diff_ctx;

static mp_status write_diff_json(FILE *f, const void *ctx, mp_error *err)
{
    const diff_ctx *c = ctx;
    return mp_report_diff_json(f, c->p, c->p, c->d, err);
}

/* Two baselines with the same content. An optional kind (variable, the training categories)
 * is written only when not 0 and a 0 reads as absent: absent and 0 are the same content. */
static bool same_baseline(const mp_baseline *a, const mp_baseline *b)
{
    for (int f = 0; f < MP_FIG_COUNT; f++) {
        if (mp_figure_machine_dependent(f))
            continue;
        if (mp_figure_optional(f)) {
            if ((a->has[f] ? a->fig[f] : 0) != (b->has[f] ? b->fig[f] : 0))
                return false;
        } else if (a->has[f] != b->has[f] || (a->has[f] && a->fig[f] != b->fig[f])) {
            return false;
        }
    }
    if (a->n_tensors != b->n_tensors || a->truncated != b->truncated)
        return false;
    for (size_t i = 0; i < a->n_tensors; i++)
        if (strcmp(a->tensors[i].name, b->tensors[i].name) != 0 ||
            a->tensors[i].bytes != b->tensors[i].bytes)
            return false;
    return true;
}

/* The baseline `memprof check --write-baseline` would save: its file reads back equal. */
static void check_baseline(const mp_profile *p, mp_source *src)
{
    mp_baseline b, back;
    mp_error err = {0};
    mp_status st = mp_baseline_from_profile(p, src, &b, &err);
    if (st != MP_OK) {
        check_refusal(st, &err);
        mp_baseline_free(&b);
        return;
    }
    char *text = mp_baseline_to_json(&b);
    CHECK(text != NULL);
    st = mp_baseline_parse(text, strlen(text), "baseline", &back, &err);
    CHECK(st == MP_OK);
    CHECK(same_baseline(&b, &back));
    free(text);
    mp_baseline_free(&back);
    mp_baseline_free(&b);
}

/* The TUI's index: small checkpoint interval and few buckets, so that checkpoints, bucket
 * merging and the exact and bucketed charts are all reached by small inputs. */
static void check_tui(mp_source *src, const mp_profile *p)
{
    mp_tui_options o = {.checkpoint_every = 8, .max_buckets = 4, .checkpoint_budget = 64,
                        .exact_events = 16};
    mp_tui_index *m = NULL;
    mp_error err = {0};
    mp_status st = mp_tui_index_build(src, &o, &m, &err);
    if (st != MP_OK) {
        /* The profile read the same events: only memory can fail here. */
        CHECK(st == MP_ERR_NOMEM && m == NULL);
        return;
    }
    size_t n = mp_tui_n_events(m);
    CHECK(n == p->summary.n_events);
    CHECK(mp_tui_peak_heap(m) == p->summary.peak_heap);
    if (n > 0) {
        size_t at[4] = {0, n / 2, n - 1, mp_tui_peak_event(m)};
        for (int i = 0; i < 4; i++) {
            if (at[i] >= n)
                continue;
            mp_tui_at s;
            st = mp_tui_state_at(m, at[i], i == 1 ? MP_KIND_STATIC : -1, &s, &err);
            CHECK(st == MP_OK || st == MP_ERR_NOMEM);
            if (st == MP_OK && i == 3)
                CHECK(s.heap == mp_tui_peak_heap(m));
            size_t e = mp_tui_next_op(m, at[i]);
            CHECK(e == SIZE_MAX || (e > at[i] && e < n));
            e = mp_tui_prev_op(m, at[i]);
            CHECK(e == SIZE_MAX || e < at[i]);
        }
        mp_tui_column cols[7];
        mp_tui_window w = mp_tui_window_all(n);
        st = mp_tui_columns(m, &w, 7, cols, &err);
        CHECK(st == MP_OK || st == MP_ERR_NOMEM);
        mp_tui_window_zoom(&w, n, 7, n / 3, 1);
        CHECK(w.first < n && w.len >= 1 && w.len <= n - w.first);
        st = mp_tui_columns(m, &w, 7, cols, &err);
        CHECK(st == MP_OK || st == MP_ERR_NOMEM);
    }
    const mp_trace_meta *meta = mp_tui_meta(m);
    for (int32_t t = 0; t < meta->n_tensors && t < 3; t++) {
        mp_tui_tensor_events te;
        st = mp_tui_tensor_find_events(m, t, &te, &err);
        CHECK(st == MP_OK || st == MP_ERR_NOMEM);
        if (st == MP_OK) {
            for (size_t k = 0; k < te.n_alloc; k++)
                CHECK(te.alloc[k] < n && (k == 0 || te.alloc[k] > te.alloc[k - 1]));
            mp_tui_tensor_events_free(&te);
        }
    }
    mp_tui_index_free(m);
}

static void check_trace(mp_source *src)
{
    mp_profile p;
    mp_error err = {0};
    mp_profile_options po = {.max_points = 16};
    mp_status st = mp_profile_compute(src, &po, &p, &err);
    if (st != MP_OK) {
        check_refusal(st, &err);
        mp_profile_free(&p);
        /* The Chrome trace streams the events itself: it too writes or refuses. */
        st = mp_report_chrome(src, g_null, &err);
        if (st != MP_OK)
            check_refusal(st, &err);
        return;
    }
    CHECK(p.summary.peak_heap >= p.summary.live_end);

    mp_report_profile_text(g_null, &p, false);
    mp_report_profile_text(g_null, &p, true);
    mp_report_svg(g_null, &p);
    mp_report_html(g_null, &p);
    check_json_output(write_profile_json, &p);
    check_json_output(write_chrome, src);

    mp_profile_diff d;
    st = mp_profile_diff_compute(&p, &p, &d, &err);
    CHECK(st == MP_OK || st == MP_ERR_NOMEM);
    if (st == MP_OK) {
        CHECK(d.peak_a == d.peak_b && d.n_tensors == 0);
        mp_report_diff_text(g_null, &p, &p, &d, false);
        diff_ctx c = {&p, &d};
        check_json_output(write_diff_json, &c);
        mp_profile_diff_free(&d);
    }
    check_baseline(&p, src);
    check_tui(src, &p);
    mp_profile_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (g_fd < 0) {
        g_fd = memfd_create("fuzz_trace", 0);
        CHECK(g_fd >= 0);
        snprintf(g_path, sizeof g_path, "/proc/self/fd/%d", g_fd);
        g_null = fopen("/dev/null", "w");
        CHECK(g_null != NULL);
    }
    CHECK(ftruncate(g_fd, 0) == 0);
    for (size_t off = 0; off < size;) {
        ssize_t w = pwrite(g_fd, data + off, size - off, (off_t)off);
        CHECK(w > 0);
        off += (size_t)w;
    }
    mp_source *src = NULL;
    mp_error err = {0};
    mp_status st = mp_source_open(g_path, &src, &err);
    if (st != MP_OK) {
        CHECK(src == NULL);
        check_refusal(st, &err);
        return 0;
    }
    check_trace(src);
    mp_source_close(src);
    return 0;
}
