/* A chain's trace per model (see chain.h): one replay of the events. */
#include "analyzers/chain.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

mp_status mp_chain_analyze(mp_source *src, mp_chain_figures *out, mp_error *err)
{
    memset(out, 0, sizeof *out);
    out->peak_model = -1;
    const mp_trace_meta *m = mp_source_meta(src);
    int32_t n = m->n_models > 0 ? m->n_models : 1;
    out->models = calloc((size_t)n, sizeof *out->models);
    uint64_t *live = calloc((size_t)n, sizeof *live);
    if (!out->models || !live) {
        free(live);
        mp_chain_free(out);
        return mp_fail(err, MP_ERR_NOMEM, "out of memory analysing the chain");
    }
    out->n_models = n;
    mp_status st = mp_source_rewind(src, err);
    uint64_t total = 0;
    mp_event ev;
    int r = 0;
    while (st == MP_OK && (r = mp_source_next(src, &ev, err)) > 0) {
        int32_t k = m->n_models > 0 ? mp_trace_event_model(m, &ev) : 0;
        /* each model numbers its own runs: the chain ran as often as its models */
        if (ev.type == MP_EV_PHASE_BEGIN && ev.aux == MP_PHASE_RUN && ev.id > out->runs)
            out->runs = ev.id;
        if (ev.type == MP_EV_COPY && k >= 0) {
            mp_chain_model *c = &out->models[k];
            if (ev.aux == MP_COPY_IN) {
                c->copies_in++;
                c->copy_in_bytes += ev.bytes;
            } else {
                c->copies_out++;
                c->copy_out_bytes += ev.bytes;
            }
        }
        bool heap = ev.kind != MP_KIND_CONST;
        if (!heap || (ev.type != MP_EV_ALLOC && ev.type != MP_EV_FREE && ev.type != MP_EV_REALLOC))
            continue;
        if (k < 0) {
            if (ev.type == MP_EV_ALLOC)
                out->unattributed++;
            continue;
        }
        mp_chain_model *c = &out->models[k];
        if (ev.type == MP_EV_ALLOC) {
            c->n_alloc++;
            c->alloc_bytes += ev.bytes;
            live[k] += ev.bytes;
            total += ev.bytes;
        } else if (ev.type == MP_EV_FREE) {
            live[k] -= ev.bytes < live[k] ? ev.bytes : live[k];
            total -= ev.bytes < total ? ev.bytes : total;
        } else { /* realloc: bytes now, aux before */
            live[k] += ev.bytes - (ev.aux < live[k] + ev.bytes ? ev.aux : 0);
            total += ev.bytes - (ev.aux < total + ev.bytes ? ev.aux : 0);
        }
        if (live[k] > c->peak_bytes)
            c->peak_bytes = live[k];
        if (total > out->peak_bytes) {
            out->peak_bytes = total;
            out->peak_model = k;
        }
    }
    free(live);
    if (st == MP_OK && r < 0)
        st = MP_ERR_FORMAT;
    if (st != MP_OK)
        mp_chain_free(out);
    return st;
}

void mp_chain_free(mp_chain_figures *f)
{
    free(f->models);
    f->models = NULL;
    f->n_models = 0;
}
