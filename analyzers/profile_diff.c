/* Two profiles compared (mp_profile_diff_compute of profile.h): what changed per kind of
 * memory and per tensor, largest change first. */
#include "analyzers/profile.h"

#include <stdlib.h>
#include <string.h>

typedef struct named {
    const char *name; /* NULL or "" = unnamed */
    int32_t index;
} named;

static bool has_name(const char *s)
{
    return s && s[0];
}

static int cmp_named(const void *pa, const void *pb)
{
    const named *a = pa, *b = pb;
    bool na = has_name(a->name), nb = has_name(b->name);
    if (na != nb)
        return na ? -1 : 1;
    if (na) {
        int c = strcmp(a->name, b->name);
        if (c)
            return c;
    }
    return (a->index > b->index) - (a->index < b->index);
}

/* Same key: equal names, or both unnamed with equal indices. */
static int key_cmp(const named *a, const named *b)
{
    bool na = has_name(a->name), nb = has_name(b->name);
    if (na != nb)
        return na ? -1 : 1;
    if (na)
        return strcmp(a->name, b->name);
    return (a->index > b->index) - (a->index < b->index);
}

static named *names_of(const mp_profile *p)
{
    named *v = malloc((p->n_lifetimes + 1) * sizeof *v);
    if (!v)
        return NULL;
    for (size_t i = 0; i < p->n_lifetimes; i++) {
        v[i].name = p->lifetimes[i].name;
        v[i].index = (int32_t)i;
    }
    qsort(v, p->n_lifetimes, sizeof *v, cmp_named);
    return v;
}

static uint64_t change_of(const mp_diff_tensor *t)
{
    return t->bytes_b > t->bytes_a ? t->bytes_b - t->bytes_a : t->bytes_a - t->bytes_b;
}

static int cmp_diff(const void *pa, const void *pb)
{
    const mp_diff_tensor *a = pa, *b = pb;
    uint64_t ca = change_of(a), cb = change_of(b);
    if (ca != cb)
        return ca > cb ? -1 : 1;
    bool ga = a->bytes_b > a->bytes_a, gb = b->bytes_b > b->bytes_a;
    if (ga != gb)
        return ga ? -1 : 1;
    int32_t ia = a->tensor_a >= 0 ? a->tensor_a : a->tensor_b;
    int32_t ib = b->tensor_a >= 0 ? b->tensor_a : b->tensor_b;
    return (ia > ib) - (ia < ib);
}

static uint64_t ref_arena_bytes(const mp_profile *p)
{
    return p->reference_arena >= 0 ? p->arenas[p->reference_arena].bytes : 0;
}

mp_status mp_profile_diff_compute(const mp_profile *a, const mp_profile *b,
                                  mp_profile_diff *out, mp_error *err)
{
    if (!out)
        return mp_fail(err, MP_ERR_ARG, "diff: no output given");
    memset(out, 0, sizeof *out);
    if (!a || !b)
        return mp_fail(err, MP_ERR_ARG, "diff: two profiles are needed");
    out->peak_a = a->summary.peak_heap;
    out->peak_b = b->summary.peak_heap;
    memcpy(out->live_a, a->summary.peak_live, sizeof out->live_a);
    memcpy(out->live_b, b->summary.peak_live, sizeof out->live_b);
    memcpy(out->kind_peak_a, a->summary.kind_peak, sizeof out->kind_peak_a);
    memcpy(out->kind_peak_b, b->summary.kind_peak, sizeof out->kind_peak_b);
    out->arena_a = ref_arena_bytes(a);
    out->arena_b = ref_arena_bytes(b);

    named *na = names_of(a), *nb = names_of(b);
    out->tensors = malloc((a->n_lifetimes + b->n_lifetimes + 1) * sizeof *out->tensors);
    if (!na || !nb || !out->tensors) {
        free(na);
        free(nb);
        mp_profile_diff_free(out);
        return mp_fail(err, MP_ERR_NOMEM, "diff: out of memory");
    }
    size_t i = 0, j = 0;
    while (i < a->n_lifetimes || j < b->n_lifetimes) {
        int c = i == a->n_lifetimes   ? 1
                : j == b->n_lifetimes ? -1
                                      : key_cmp(&na[i], &nb[j]);
        mp_diff_tensor d = {.tensor_a = -1, .tensor_b = -1};
        if (c <= 0) {
            const mp_lifetime *l = &a->lifetimes[na[i++].index];
            d.name = has_name(l->name) ? l->name : NULL;
            d.tensor_a = l->tensor;
            d.bytes_a = l->bytes;
            d.manager_a = l->manager;
        }
        if (c >= 0) {
            const mp_lifetime *l = &b->lifetimes[nb[j++].index];
            if (!d.name)
                d.name = has_name(l->name) ? l->name : NULL;
            d.tensor_b = l->tensor;
            d.bytes_b = l->bytes;
            d.manager_b = l->manager;
        }
        if (d.bytes_a != d.bytes_b || d.manager_a != d.manager_b)
            out->tensors[out->n_tensors++] = d;
    }
    free(na);
    free(nb);
    qsort(out->tensors, out->n_tensors, sizeof *out->tensors, cmp_diff);
    return MP_OK;
}

void mp_profile_diff_free(mp_profile_diff *d)
{
    if (!d)
        return;
    free(d->tensors);
    memset(d, 0, sizeof *d);
}
