/* trace_gen: writes a large, realistic saved trace for the scale benchmark
 * (scripts/bench_report.sh).
 *
 * Records a real session of a built-in model through the engine (load, prepare, RUNS runs
 * with an input copy before and an output copy after each, teardown), then repeats the
 * events of its second run (with the copies around it) until the trace holds at least N
 * events: each copy is shifted in time, gets the next run number and phase indices, and
 * new block ids for the blocks it allocates (frees follow their blocks), so the result
 * reads as one long session whose runs all behave like the recorded one. Saved with
 * mp_trace_save, so the file is exactly what `memprof run --trace` writes.
 * Usage: trace_gen OUT.json [N=1000000] [--model zoo:NAME] [--memory auto|static|dynamic] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/session.h"
#include "trace/trace.h"

static int die(const mp_error *err, const char *what)
{
    fprintf(stderr, "trace_gen: %s: %s\n", what, err->msg);
    return 1;
}

/* Record a session of model with `runs` runs into tr. */
static int record(const char *model, mp_memory_mode mode, int runs, mp_trace *tr)
{
    mp_error err = {0};
    mp_session *s = NULL;
    mp_session_options so = {.threads = 1, .mode = mode, .trace = tr};
    if (mp_session_create(&so, &s, &err) != MP_OK)
        return die(&err, "session");
    int rc = 1;
    void *buf = NULL;
    if (mp_session_load(s, model, &err) != MP_OK || mp_session_prepare(s, &err) != MP_OK) {
        rc = die(&err, model);
        goto out;
    }
    for (int r = 0; r < runs; r++) {
        for (int i = 0; i < mp_session_input_count(s); i++) {
            size_t n = mp_session_input(s, i)->bytes;
            free(buf);
            buf = calloc(1, n ? n : 1);
            if (!buf || mp_session_set_input(s, i, buf, n, &err) != MP_OK) {
                rc = die(&err, "set_input");
                goto out;
            }
        }
        if (mp_session_run(s, &err) != MP_OK) {
            rc = die(&err, "run");
            goto out;
        }
        for (int i = 0; i < mp_session_output_count(s); i++) {
            size_t n = mp_session_output(s, i)->bytes;
            free(buf);
            buf = malloc(n ? n : 1);
            if (!buf || mp_session_get_output(s, i, buf, n, &err) != MP_OK) {
                rc = die(&err, "get_output");
                goto out;
            }
        }
    }
    rc = 0;
out:
    free(buf);
    mp_session_destroy(s); /* records the teardown */
    return rc;
}

/* The metadata of `from` into `to`. */
static bool copy_meta(const mp_trace *from, mp_trace *to)
{
    const mp_trace_meta *a = mp_trace_get_meta(from);
    if (!mp_trace_alloc_tables(to, a->n_tensors, a->n_ops, a->n_inputs, a->n_outputs))
        return false;
    mp_trace_meta *b = mp_trace_meta_mut(to);
    bool ok = mp_trace_set_str(to, &b->model, a->model) &&
              mp_trace_set_str(to, &b->mode, a->mode) &&
              mp_trace_set_str(to, &b->planner, a->planner);
    b->threads = a->threads;
    for (int32_t i = 0; ok && i < a->n_tensors; i++) {
        ok = mp_trace_set_str(to, &b->tensors[i].name, a->tensors[i].name);
        b->tensors[i].dtype = a->tensors[i].dtype;
        b->tensors[i].is_const = a->tensors[i].is_const;
    }
    for (int32_t i = 0; ok && i < a->n_ops; i++)
        ok = mp_trace_set_op(to, i, a->ops[i].name, a->ops[i].n_inputs, a->ops[i].inputs,
                             a->ops[i].n_outputs, a->ops[i].outputs);
    if (a->n_inputs)
        memcpy(b->inputs, a->inputs, sizeof(int32_t) * (size_t)a->n_inputs);
    if (a->n_outputs)
        memcpy(b->outputs, a->outputs, sizeof(int32_t) * (size_t)a->n_outputs);
    return ok;
}

/* Index of the PHASE_END closing run number `run`, or SIZE_MAX. */
static size_t run_end(const mp_event *ev, size_t n, uint64_t run)
{
    uint32_t phase = UINT32_MAX;
    for (size_t i = 0; i < n; i++) {
        if (ev[i].type == MP_EV_PHASE_BEGIN && ev[i].aux == MP_PHASE_RUN && ev[i].id == run)
            phase = ev[i].phase;
        else if (ev[i].type == MP_EV_PHASE_END && ev[i].phase == phase)
            return i;
    }
    return SIZE_MAX;
}

typedef struct shift {
    uint64_t t, run, id_span;
    uint32_t phase;
    uint64_t copy; /* block ids allocated now get id + copy * id_span */
} shift;

/* Append ev shifted; map[] follows each block id to the id of its latest allocation. */
static bool emit(mp_trace *out, mp_event e, const shift *sh, uint64_t *map, uint64_t max_id)
{
    e.t_ns += sh->t;
    if (e.phase != UINT32_MAX)
        e.phase += sh->phase;
    if (e.type == MP_EV_PHASE_BEGIN && e.id > 0)
        e.id += sh->run;
    if (e.type == MP_EV_ALLOC && e.id <= max_id) {
        map[e.id] = e.id + sh->copy * sh->id_span;
        e.id = map[e.id];
    } else if ((e.type == MP_EV_FREE || e.type == MP_EV_REALLOC || e.type == MP_EV_PLAN) &&
               e.id <= max_id) {
        e.id = map[e.id];
    }
    return mp_trace_append_raw(out, &e);
}

int main(int argc, char **argv)
{
    const char *path = NULL, *model = "zoo:mobilenet_v2";
    size_t want = 1000000;
    mp_memory_mode mode = MP_MEMORY_DYNAMIC;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--model") == 0 && i + 1 < argc) {
            model = argv[++i];
        } else if (strcmp(argv[i], "--memory") == 0 && i + 1 < argc) {
            int m = mp_memory_mode_parse(argv[++i]);
            if (m < 0) {
                fprintf(stderr, "trace_gen: unknown memory mode %s\n", argv[i]);
                return 2;
            }
            mode = (mp_memory_mode)m;
        } else if (!path) {
            path = argv[i];
        } else {
            want = strtoull(argv[i], NULL, 10);
        }
    }
    if (!path) {
        fprintf(stderr, "usage: trace_gen OUT.json [N=1000000] [--model zoo:NAME] "
                        "[--memory auto|static|dynamic]\n");
        return 2;
    }

    mp_trace *rec = mp_trace_create();
    if (!rec || record(model, mode, 3, rec) != 0)
        return 1;
    const mp_event *ev = mp_trace_events(rec);
    size_t n = mp_trace_count(rec);
    /* The repeated block: everything after run 1 up to the end of run 2 (the output copy
     * of run 1, the input copy of run 2, run 2). */
    size_t b0 = run_end(ev, n, 1), b1 = run_end(ev, n, 2);
    if (b0 == SIZE_MAX || b1 == SIZE_MAX) {
        fprintf(stderr, "trace_gen: the recorded session has no runs 1 and 2\n");
        return 1;
    }
    b0++;
    b1++;
    size_t block = b1 - b0, rest = n - block;
    uint64_t max_id = 0;
    uint32_t phases = 0;
    for (size_t i = 0; i < n; i++)
        if (ev[i].type <= MP_EV_PLAN && ev[i].id > max_id)
            max_id = ev[i].id;
    for (size_t i = b0; i < b1; i++)
        phases += ev[i].type == MP_EV_PHASE_BEGIN;
    size_t copies = want > rest ? (want - rest + block - 1) / block : 1;
    if (copies < 1)
        copies = 1;
    uint64_t *map = calloc(max_id + 1, sizeof *map);
    mp_trace *out = mp_trace_create();
    if (!map || !out || !copy_meta(rec, out)) {
        fprintf(stderr, "trace_gen: out of memory\n");
        return 1;
    }
    for (uint64_t id = 0; id <= max_id; id++)
        map[id] = id;
    shift sh = {.id_span = max_id + 1};
    uint64_t dt = ev[b1 < n ? b1 : n - 1].t_ns - ev[b0].t_ns;
    bool ok = true;
    for (size_t i = 0; ok && i < b0; i++)
        ok = emit(out, ev[i], &sh, map, max_id);
    for (size_t c = 0; ok && c < copies; c++) {
        sh.t = c * dt;
        sh.run = c;
        sh.phase = (uint32_t)(c * phases);
        sh.copy = c;
        for (size_t i = b0; ok && i < b1; i++)
            ok = emit(out, ev[i], &sh, map, max_id);
    }
    sh.copy = 0; /* the blocks the rest allocates keep their ids (none repeat) */
    for (size_t i = b1; ok && i < n; i++)
        ok = emit(out, ev[i], &sh, map, max_id);
    if (!ok) {
        fprintf(stderr, "trace_gen: out of memory at %zu events\n", mp_trace_count(out));
        return 1;
    }
    mp_error err = {0};
    if (mp_trace_save(out, path, &err) != MP_OK)
        return die(&err, "save");
    printf("%s: %zu events (%s, %s memory: %zu recorded, run 2 repeated %zu times, %zu runs)\n",
           path, mp_trace_count(out), model, mp_memory_mode_name(mode), n, copies, copies + 2);
    mp_trace_destroy(out);
    mp_trace_destroy(rec);
    free(map);
    return 0;
}
