/* What profile.c and profile_timeline.c share, private to them: the timeline builder that
 * profile.c's pass feeds one moment per event. */
#ifndef MP_PROFILE_INTERNAL_H
#define MP_PROFILE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyzers/profile.h"

/* The state after one event, as a timeline point records it. */
typedef struct mp_tl_moment {
    uint64_t event, steps, t_ns, heap;
    uint64_t live[MP_KIND_COUNT];
    int32_t phase_kind, op;
    uint64_t run;
    uint64_t rss, rss_hwm;
} mp_tl_moment;

typedef struct mp_tl_builder {
    mp_tl_point *pts;
    uint64_t *keys;     /* bucket number of each point */
    size_t n, cap;      /* cap: most points kept (merging when reached) */
    uint64_t per_point;
    bool open;          /* cur holds events */
    mp_tl_point cur;
    uint64_t cur_key;
} mp_tl_builder;

/* Start a builder of at most cap points (merging neighbours when reached), per_point
 * events (or steps) per point to begin with. False when out of memory. */
bool mp_tl_builder_init(mp_tl_builder *b, size_t cap, uint64_t per_point);
void mp_tl_builder_free(mp_tl_builder *b);
/* Add the moment m at x (its event or step number). */
void mp_tl_builder_add(mp_tl_builder *b, uint64_t x, const mp_tl_moment *m);
/* Hand the points over to t, its peak found, and free the builder. */
void mp_tl_builder_finish(mp_tl_builder *b, mp_timeline *t, bool has_rss);

#endif
