/* The planners compared on one set of buffers (see plan_compare.h). */
#include "engine/memory/plan_compare.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

mp_status mp_plan_measure(const mp_planner *p, const mp_plan_buf *bufs, int32_t n,
                          uint64_t align, mp_plan_result *r, mp_error *err)
{
    memset(r, 0, sizeof *r);
    r->planner = p;
    r->offsets = calloc((size_t)n + 1, sizeof *r->offsets);
    if (!r->offsets)
        return mp_fail(err, MP_ERR_NOMEM, "out of memory");
    uint64_t times[25], spent = 0;
    int k = 0;
    for (; k < 25 && (k == 0 || spent < 50000000u); k++) {
        uint64_t t0 = now_ns();
        mp_status st = p->plan(bufs, n, align, r->offsets, &r->arena, NULL);
        times[k] = now_ns() - t0;
        spent += times[k];
        if (st != MP_OK)
            return mp_fail(err, st, "planner '%s': %s", p->name,
                           st == MP_ERR_NOMEM ? "out of memory" : mp_status_name(st));
    }
    qsort(times, (size_t)k, sizeof times[0], cmp_u64);
    r->time_ns = k % 2 ? times[k / 2] : (times[k / 2 - 1] + times[k / 2]) / 2;
    r->reps = k;
    r->valid = mp_plan_check(bufs, n, align, r->offsets, r->arena, r->why, sizeof r->why);
    return MP_OK;
}

void mp_plan_result_free(mp_plan_result *r)
{
    free(r->offsets);
    r->offsets = NULL;
}

mp_status mp_plan_compare_run(const mp_plan_buf *bufs, int32_t n, uint64_t align,
                              const mp_planner *chosen, bool only, mp_plan_compare *out,
                              mp_error *err)
{
    memset(out, 0, sizeof *out);
    out->lower_bound = mp_plan_lower_bound(bufs, n, align, &out->lower_bound_step);
    out->naive = mp_plan_naive(bufs, n, align);
    int count = 0;
    for (const mp_planner *const *p = mp_planner_list(); *p; p++)
        count++;
    out->res = calloc((size_t)count + 1, sizeof *out->res);
    if (!out->res)
        return mp_fail(err, MP_ERR_NOMEM, "out of memory");
    for (const mp_planner *const *p = mp_planner_list(); *p; p++) {
        if (only && *p != chosen)
            continue;
        if (*p == chosen)
            out->chosen = out->n_res;
        mp_status st = mp_plan_measure(*p, bufs, n, align, &out->res[out->n_res++], err);
        if (st != MP_OK)
            return st;
    }
    return MP_OK;
}

void mp_plan_compare_free(mp_plan_compare *c)
{
    for (int i = 0; i < c->n_res; i++)
        mp_plan_result_free(&c->res[i]);
    free(c->res);
    memset(c, 0, sizeof *c);
}
