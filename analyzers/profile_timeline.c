/* The profile's timelines (see profile.h, profile_internal.h): points holding the
 * highest-heap moment of their events, bucketed by a fixed number of events or by operator
 * steps whose bucket width doubles, merging neighbours, whenever there would be more than
 * the points allowed. */
#include "analyzers/profile_internal.h"

#include <stdlib.h>
#include <string.h>

bool mp_tl_builder_init(mp_tl_builder *b, size_t cap, uint64_t per_point)
{
    memset(b, 0, sizeof *b);
    b->cap = cap ? cap : 1;
    b->per_point = per_point ? per_point : 1;
    b->pts = malloc(b->cap * sizeof *b->pts);
    b->keys = malloc(b->cap * sizeof *b->keys);
    return b->pts && b->keys;
}

void mp_tl_builder_free(mp_tl_builder *b)
{
    free(b->pts);
    free(b->keys);
    memset(b, 0, sizeof *b);
}

/* p then q (consecutive) as one point: the higher heap mp_tl_moment (the earlier on a tie). */
static void tl_merge(mp_tl_point *p, const mp_tl_point *q)
{
    mp_tl_point m = *p;
    if (q->heap > p->heap) {
        m = *q;
        m.ev_first = p->ev_first;
        m.step_first = p->step_first;
    }
    m.ev_last = q->ev_last;
    m.step_last = q->step_last;
    m.rss = q->rss;
    m.rss_hwm = q->rss_hwm;
    *p = m;
}

/* Double the bucket width: neighbours whose keys halve to the same one become one point. */
static void tl_halve(mp_tl_builder *b)
{
    size_t o = 0;
    for (size_t i = 0; i < b->n; i++) {
        uint64_t k = b->keys[i] / 2;
        if (o > 0 && b->keys[o - 1] == k) {
            tl_merge(&b->pts[o - 1], &b->pts[i]);
        } else {
            b->pts[o] = b->pts[i];
            b->keys[o] = k;
            o++;
        }
    }
    b->n = o;
    b->per_point *= 2;
    b->cur_key /= 2;
    if (b->open && b->n > 0 && b->keys[b->n - 1] == b->cur_key) {
        /* the open point joins the last stored one */
        mp_tl_point last = b->pts[--b->n];
        tl_merge(&last, &b->cur);
        b->cur = last;
    }
}

static void tl_flush(mp_tl_builder *b)
{
    if (!b->open)
        return;
    while (b->n == b->cap && b->open)
        tl_halve(b);
    b->pts[b->n] = b->cur;
    b->keys[b->n] = b->cur_key;
    b->n++;
    b->open = false;
}

/* Add the state after one event, whose position on the axis is x (event or step count). */
/* Point p shows moment m: its heap, time, live bytes per kind, phase, run and operator. */
static void tl_take(mp_tl_point *p, const mp_tl_moment *m)
{
    p->heap = m->heap;
    p->t_ns = m->t_ns;
    memcpy(p->live, m->live, sizeof p->live);
    p->phase_kind = m->phase_kind;
    p->run = m->run;
    p->op = m->op;
}

void mp_tl_builder_add(mp_tl_builder *b, uint64_t x, const mp_tl_moment *m)
{
    uint64_t key = x / b->per_point;
    if (b->open && key != b->cur_key) {
        tl_flush(b);
        key = x / b->per_point; /* the width may have doubled */
        if (b->n > 0 && b->keys[b->n - 1] == key) {
            /* still inside the last point after merging: reopen it */
            b->cur = b->pts[--b->n];
            b->open = true;
        }
    }
    mp_tl_point *p = &b->cur;
    if (!b->open) {
        b->open = true;
        b->cur_key = key;
        memset(p, 0, sizeof *p);
        p->ev_first = m->event;
        p->step_first = m->steps;
        tl_take(p, m);
    } else if (m->heap > p->heap) {
        tl_take(p, m);
    }
    p->ev_last = m->event;
    p->step_last = m->steps;
    p->rss = m->rss;
    p->rss_hwm = m->rss_hwm;
}

/* Hand the points over to a timeline (the builder is left empty). */
void mp_tl_builder_finish(mp_tl_builder *b, mp_timeline *t, bool has_rss)
{
    tl_flush(b);
    memset(t, 0, sizeof *t);
    t->n = b->n;
    t->pts = b->pts;
    t->per_point = b->per_point;
    t->has_rss = has_rss;
    b->pts = NULL;
    for (size_t i = 1; i < t->n; i++)
        if (t->pts[i].heap > t->pts[t->peak].heap)
            t->peak = i;
    if (t->n == 0) {
        free(t->pts);
        t->pts = NULL;
    }
    mp_tl_builder_free(b);
}
