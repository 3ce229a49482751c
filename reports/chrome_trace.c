/* Chrome Trace Event Format output (see chrome_trace.h): one streaming replay over the
 * events, slices written when they end (so each knows its duration), counters when a live
 * figure changes. */
#include "reports/chrome_trace.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/replay.h"
#include "reports/markup.h"
#include "trace/grow.h"

#define PID 1
#define TID 1

typedef struct open_op {
    int32_t op;
    uint64_t begin_ns;
    uint64_t step;
} open_op;

typedef struct writer {
    FILE *f;
    const mp_trace_meta *meta;
    bool first;              /* no event written yet (no comma before the next) */
    uint64_t t0;             /* time of the first event: counters start at 0 there */
    /* The open phase. */
    bool phase_open;
    int32_t phase_kind;
    uint64_t phase_run, phase_begin;
    uint32_t phase_index;
    /* Open operators, innermost last. */
    open_op *ops;
    size_t n_ops, cap_ops;
    uint64_t steps;          /* OP_BEGINs so far */
    /* Last value written per counter (MP_KIND_COUNT kinds, then the heap); seen: written. */
    uint64_t last[MP_KIND_COUNT + 1];
    bool seen[MP_KIND_COUNT + 1];
} writer;

static void sep(writer *w)
{
    fputs(w->first ? "\n" : ",\n", w->f);
    w->first = false;
}

static void put_ts(FILE *f, uint64_t ns)
{
    fprintf(f, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
}

static void op_slice_name(writer *w, int32_t op)
{
    fprintf(w->f, "#%" PRId32, op);
    if (w->meta && op >= 0 && op < w->meta->n_ops && w->meta->ops && w->meta->ops[op].name) {
        fputc(' ', w->f);
        mp_json_text(w->f, w->meta->ops[op].name);
    }
}

/* A complete slice from begin to end (a negative span counts as 0). */
static void slice_head(writer *w, const char *cat, uint64_t begin, uint64_t end)
{
    sep(w);
    fprintf(w->f, "{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"cat\":\"%s\",\"ts\":", PID, TID, cat);
    put_ts(w->f, begin);
    fputs(",\"dur\":", w->f);
    put_ts(w->f, end > begin ? end - begin : 0);
}

static void close_op(writer *w, const open_op *o, uint64_t end)
{
    slice_head(w, "op", o->begin_ns, end);
    fputs(",\"name\":\"", w->f);
    op_slice_name(w, o->op);
    fprintf(w->f, "\",\"args\":{\"op\":%" PRId32 ",\"step\":%" PRIu64, o->op, o->step);
    if (w->phase_open && w->phase_kind == MP_PHASE_RUN)
        fprintf(w->f, ",\"run\":%" PRIu64, w->phase_run);
    fputs("}}", w->f);
}

static void close_ops(writer *w, size_t keep, uint64_t end)
{
    while (w->n_ops > keep) {
        w->n_ops--;
        close_op(w, &w->ops[w->n_ops], end);
    }
}

static void close_phase(writer *w, uint64_t end)
{
    if (!w->phase_open)
        return;
    close_ops(w, 0, end);
    slice_head(w, "phase", w->phase_begin, end);
    if (w->phase_kind == MP_PHASE_RUN)
        fprintf(w->f, ",\"name\":\"run %" PRIu64 "\"", w->phase_run);
    else
        fprintf(w->f, ",\"name\":\"%s\"", mp_phase_kind_name(w->phase_kind));
    fprintf(w->f, ",\"args\":{\"phase\":%" PRIu32, w->phase_index);
    if (w->phase_kind == MP_PHASE_RUN)
        fprintf(w->f, ",\"run\":%" PRIu64, w->phase_run);
    fputs("}}", w->f);
    w->phase_open = false;
}

static void counter(writer *w, const char *name, uint64_t ts, uint64_t v)
{
    sep(w);
    fprintf(w->f, "{\"ph\":\"C\",\"pid\":%d,\"name\":\"%s\",\"ts\":", PID, name);
    put_ts(w->f, ts);
    fprintf(w->f, ",\"args\":{\"bytes\":%" PRIu64 "}}", v);
}

/* Write the counters whose value changed (a counter's first write is preceded by a 0 at
 * the first event, so that its track starts there). */
static void counters(writer *w, const mp_replay *r, uint64_t ts)
{
    for (int k = 0; k <= MP_KIND_COUNT; k++) {
        uint64_t v = k < MP_KIND_COUNT ? mp_replay_live(r, k) : mp_replay_heap(r);
        if (w->seen[k] ? v == w->last[k] : v == 0)
            continue;
        const char *name = k < MP_KIND_COUNT ? mp_kind_name(k) : "heap";
        if (!w->seen[k] && ts > w->t0)
            counter(w, name, w->t0, 0);
        counter(w, name, ts, v);
        w->seen[k] = true;
        w->last[k] = v;
    }
}

static void meta_events(writer *w, const mp_trace_meta *m)
{
    sep(w);
    fprintf(w->f, "{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"process_name\","
                  "\"args\":{\"name\":\"memprof: ", PID, TID);
    mp_json_text(w->f, m && m->model ? m->model : "trace");
    fputs("\"}}", w->f);
    sep(w);
    fprintf(w->f, "{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"thread_name\","
                  "\"args\":{\"name\":\"phases and operators\"}}", PID, TID);
    sep(w);
    fprintf(w->f, "{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"process_sort_index\","
                  "\"args\":{\"sort_index\":0}}", PID, TID);
}

static void copy_event(writer *w, const mp_event *ev)
{
    sep(w);
    fprintf(w->f, "{\"ph\":\"i\",\"s\":\"t\",\"pid\":%d,\"tid\":%d,\"cat\":\"copy\",\"ts\":",
            PID, TID);
    put_ts(w->f, ev->t_ns);
    fprintf(w->f, ",\"name\":\"copy %s\",\"args\":{\"bytes\":%" PRIu64 ",\"tensor\":%" PRId32,
            ev->aux == MP_COPY_OUT ? "out" : "in", ev->bytes, ev->tensor);
    const mp_trace_meta *m = w->meta;
    if (m && ev->tensor >= 0 && ev->tensor < m->n_tensors && m->tensors &&
        m->tensors[ev->tensor].name) {
        fputs(",\"name\":\"", w->f);
        mp_json_text(w->f, m->tensors[ev->tensor].name);
        fputc('"', w->f);
    }
    fputs("}}", w->f);
}

static void rss_event(writer *w, const mp_event *ev)
{
    sep(w);
    fprintf(w->f, "{\"ph\":\"C\",\"pid\":%d,\"name\":\"process\",\"ts\":", PID);
    put_ts(w->f, ev->t_ns);
    fprintf(w->f, ",\"args\":{\"rss\":%" PRIu64 ",\"rss_hwm\":%" PRIu64 "}}", ev->bytes, ev->aux);
}

/* Apply what one replay step changed to the slices. */
static bool on_change(writer *w, const mp_event *ev, const mp_replay_change *chg,
                      const mp_replay *r)
{
    if (chg->phase_ended)
        close_phase(w, chg->ended.end_ns);
    switch (chg->what) {
    case MP_REPLAY_PHASE_BEGIN:
        close_ops(w, 0, ev->t_ns); /* operators open outside a phase end with it */
        w->phase_open = true;
        w->phase_kind = (int32_t)ev->aux;
        w->phase_run = ev->aux == MP_PHASE_RUN ? ev->id : 0;
        w->phase_begin = ev->t_ns;
        w->phase_index = mp_replay_where(r)->phase;
        break;
    case MP_REPLAY_OP_BEGIN:
        if (!mp_grow((void **)&w->ops, &w->cap_ops, w->n_ops, sizeof *w->ops, 16))
            return false;
        w->ops[w->n_ops++] = (open_op){ev->op, ev->t_ns, w->steps++};
        break;
    case MP_REPLAY_OP_END: {
        size_t k = w->n_ops;
        while (k > 0 && w->ops[k - 1].op != ev->op)
            k--;
        if (k > 0)
            close_ops(w, k - 1, ev->t_ns);
        break;
    }
    case MP_REPLAY_COPY:
        copy_event(w, ev);
        break;
    case MP_REPLAY_RSS:
        rss_event(w, ev);
        break;
    default:
        break;
    }
    return true;
}

mp_status mp_report_chrome(mp_source *src, FILE *f, mp_error *err)
{
    if (!src || !f)
        return mp_fail(err, MP_ERR_ARG, "chrome trace: no source or no output");
    mp_status st;
    mp_event ev;
    int got;

    /* A file not yet read to its end: check it all before writing anything. */
    if (mp_source_count(src) == SIZE_MAX) {
        if ((st = mp_source_rewind(src, err)) != MP_OK)
            return st;
        while ((got = mp_source_next(src, &ev, err)) == 1) {
        }
        if (got < 0)
            return err ? err->status : MP_ERR_FORMAT;
    }
    if ((st = mp_source_rewind(src, err)) != MP_OK)
        return st;

    const mp_trace_meta *m = mp_source_meta(src);
    mp_replay *r = mp_replay_create(m ? m->n_tensors : 0);
    if (!r)
        return mp_fail(err, MP_ERR_NOMEM, "chrome trace: out of memory");
    writer w;
    memset(&w, 0, sizeof w);
    w.f = f;
    w.meta = m;
    w.first = true;

    fputs("{\"traceEvents\":[", f);
    meta_events(&w, m);

    uint64_t n = 0, last_t = 0;
    mp_replay_change chg;
    st = MP_OK;
    while ((got = mp_source_next(src, &ev, err)) == 1) {
        if (n == 0)
            w.t0 = ev.t_ns;
        n++;
        last_t = ev.t_ns;
        if (!mp_replay_step(r, &ev, &chg)) {
            st = mp_replay_fail(r, mp_source_name(src), "chrome trace", err);
            break;
        }
        if (!on_change(&w, &ev, &chg, r)) {
            st = mp_fail(err, MP_ERR_NOMEM, "chrome trace: out of memory at event %" PRIu64,
                         n - 1);
            break;
        }
        counters(&w, r, ev.t_ns);
    }
    if (got < 0 && st == MP_OK)
        st = err ? err->status : MP_ERR_FORMAT;
    if (st == MP_OK) {
        if (mp_replay_finish(r, &chg))
            close_phase(&w, chg.ended.end_ns);
        close_ops(&w, 0, last_t);
        fputs("\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"format\":\"memprof chrome "
              "trace\",\"model\":\"",
              f);
        mp_json_text(f, m && m->model ? m->model : "");
        fprintf(f, "\",\"events\":%" PRIu64 ",\"anomalies\":%" PRIu64 "}}\n", n,
                mp_replay_n_anomalies(r));
    }
    free(w.ops);
    mp_replay_destroy(r);
    if (st == MP_OK && (fflush(f) != 0 || ferror(f)))
        st = mp_fail(err, MP_ERR_IO, "chrome trace: write failed: %s", strerror(errno));
    return st;
}
