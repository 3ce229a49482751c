/* Event sources (source.h): a trace in memory, or a saved trace file read as a stream. */
#include "source.h"

#include <stdint.h>
#include <stdlib.h>

struct mp_source {
    const mp_trace *tr; /* memory source; NULL for a file source */
    size_t next;        /* memory source: index of the next event */
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
    *out = NULL;
    return mp_fail(err, MP_ERR_UNSUPPORTED, "%s: streaming trace files is not implemented yet",
                   path);
}

void mp_source_close(mp_source *s)
{
    free(s);
}

const mp_trace_meta *mp_source_meta(const mp_source *s)
{
    return mp_trace_get_meta(s->tr);
}

const char *mp_source_name(const mp_source *s)
{
    (void)s;
    return "trace";
}

bool mp_source_truncated(const mp_source *s)
{
    return mp_trace_truncated(s->tr);
}

mp_status mp_source_rewind(mp_source *s, mp_error *err)
{
    (void)err;
    s->next = 0;
    return MP_OK;
}

int mp_source_next(mp_source *s, mp_event *ev, mp_error *err)
{
    (void)err;
    if (s->next >= mp_trace_count(s->tr))
        return 0;
    *ev = mp_trace_events(s->tr)[s->next++];
    return 1;
}

size_t mp_source_count(const mp_source *s)
{
    return mp_trace_count(s->tr);
}
