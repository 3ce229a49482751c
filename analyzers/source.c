/* Event sources (source.h): a trace in memory, or a saved trace file read as a stream
 * through the engine's trace reader (engine/trace_reader.h, which owns the format). */
#include "analyzers/source.h"

#include <stdint.h>
#include <stdlib.h>

#include "trace/trace_reader.h"

struct mp_source {
    const mp_trace *tr;     /* memory source; NULL for a file source */
    size_t next;            /* memory source: index of the next event */
    mp_trace_reader *rd;    /* file source: the metadata and a read buffer */
};

mp_source *mp_source_of_trace(const mp_trace *tr)
{
    if (!tr)
        return NULL;
    mp_source *s = calloc(1, sizeof *s);
    if (s)
        s->tr = tr;
    return s;
}

mp_status mp_source_open(const char *path, mp_source **out, mp_error *err)
{
    if (!out)
        return mp_fail(err, MP_ERR_ARG, "mp_source_open: no result pointer");
    *out = NULL;
    mp_source *s = calloc(1, sizeof *s);
    if (!s)
        return mp_fail(err, MP_ERR_NOMEM, "%s: out of memory", path ? path : "trace");
    mp_status st = mp_trace_reader_open(path, &s->rd, err);
    if (st != MP_OK) {
        free(s);
        return st;
    }
    *out = s;
    return MP_OK;
}

void mp_source_close(mp_source *s)
{
    if (!s)
        return;
    mp_trace_reader_close(s->rd);
    free(s);
}

const mp_trace_meta *mp_source_meta(const mp_source *s)
{
    return s->rd ? mp_trace_reader_meta(s->rd) : mp_trace_get_meta(s->tr);
}

const char *mp_source_name(const mp_source *s)
{
    return s->rd ? mp_trace_reader_path(s->rd) : "trace";
}

bool mp_source_truncated(const mp_source *s)
{
    return s->rd ? mp_trace_reader_truncated(s->rd) : mp_trace_truncated(s->tr);
}

mp_status mp_source_rewind(mp_source *s, mp_error *err)
{
    if (s->rd)
        return mp_trace_reader_rewind(s->rd, err);
    s->next = 0;
    return MP_OK;
}

int mp_source_next(mp_source *s, mp_event *ev, mp_error *err)
{
    if (s->rd)
        return mp_trace_reader_next(s->rd, ev, err);
    if (s->next >= mp_trace_count(s->tr))
        return 0;
    *ev = mp_trace_events(s->tr)[s->next++];
    return 1;
}

size_t mp_source_count(const mp_source *s)
{
    return s->rd ? mp_trace_reader_count(s->rd) : mp_trace_count(s->tr);
}
