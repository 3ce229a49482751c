/* Placed slots for the offset planners (see plan_slots.h): the trees over the buffers in
 * order of first step that find the placed buffers alive with a new one (and the waiting
 * ones alive at a step), the first-fit and best-fit scans over them, and the one-at-a-time
 * driver of greedy and firstfit. */
#include "engine/memory/plan_slots.h"

#include <stdlib.h>
#include <string.h>

/* ---- intervals -------------------------------------------------------------------------- */

/* Insertion sort for short runs, else quicksort (median of three) on the shorter side
 * first: this runs for every placement. */
void mp_plan_iv_sort(mp_plan_iv *iv, int32_t k)
{
    while (k > 16) {
        uint64_t a = iv[0].off, b = iv[k / 2].off, c = iv[k - 1].off;
        uint64_t pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        int32_t i = 0, j = k - 1;
        for (;;) {
            while (iv[i].off < pivot)
                i++;
            while (iv[j].off > pivot)
                j--;
            if (i >= j)
                break;
            mp_plan_iv t = iv[i];
            iv[i] = iv[j];
            iv[j] = t;
            i++;
            j--;
        }
        /* iv[0, j] <= pivot <= iv[j + 1, k) */
        int32_t left = j + 1;
        if (left < k - left) {
            mp_plan_iv_sort(iv, left);
            iv += left;
            k -= left;
        } else {
            mp_plan_iv_sort(iv + left, k - left);
            k = left;
        }
    }
    for (int32_t a = 1; a < k; a++) {
        mp_plan_iv t = iv[a];
        int32_t b = a;
        for (; b > 0 && iv[b - 1].off > t.off; b--)
            iv[b] = iv[b - 1];
        iv[b] = t;
    }
}

/* Intervals with equal offsets may come in any order: after the first of them, the others
 * start below the running end, so they never open a gap. Both scans are O(k). */
uint64_t mp_plan_iv_first_fit(const mp_plan_iv *iv, int32_t k, uint64_t size)
{
    uint64_t cur = 0; /* lowest free offset above the intervals seen so far */
    for (int32_t t = 0; t < k; t++) {
        if (iv[t].off >= cur && iv[t].off - cur >= size)
            return cur;
        if (iv[t].end > cur)
            cur = iv[t].end;
    }
    return cur;
}

uint64_t mp_plan_iv_best_fit(const mp_plan_iv *iv, int32_t k, uint64_t size)
{
    uint64_t cur = 0;           /* lowest free offset above the intervals seen so far */
    uint64_t best = UINT64_MAX; /* offset of the best gap found */
    uint64_t best_gap = UINT64_MAX;
    for (int32_t t = 0; t < k; t++) {
        if (iv[t].off >= cur && iv[t].off - cur >= size && iv[t].off - cur < best_gap) {
            best = cur;
            best_gap = iv[t].off - cur;
            if (best_gap == size)
                break; /* an exact fit: no later gap can be better */
        }
        if (iv[t].end > cur)
            cur = iv[t].end;
    }
    return best != UINT64_MAX ? best : cur;
}

/* ---- the trees -------------------------------------------------------------------------- */

/* A leaf holds its buffer's last step while the buffer is in the tree, else NONE; an inner
 * node the largest of its two children. */
#define NONE INT64_MIN

static void tree_set(int64_t *tree, int32_t leaves, int32_t p, int64_t value)
{
    int32_t k = leaves + p;
    tree[k] = value;
    for (k /= 2; k >= 1; k /= 2) {
        int64_t l = tree[2 * k], r = tree[2 * k + 1];
        int64_t v = l > r ? l : r;
        if (tree[k] == v)
            break; /* the ancestors hold the same maxima */
        tree[k] = v;
    }
}

/* The positions below `limit` in node k's range [lo, lo + width) whose leaf is at least
 * `a`, appended to out in order of position. */
static int32_t tree_collect(const int64_t *tree, int32_t k, int32_t lo, int32_t width,
                            int32_t limit, int32_t a, int32_t *out, int32_t n)
{
    if (lo >= limit || tree[k] < a || tree[k] == NONE)
        return n;
    if (width == 1) {
        out[n] = lo;
        return n + 1;
    }
    int32_t half = width / 2;
    n = tree_collect(tree, 2 * k, lo, half, limit, a, out, n);
    return tree_collect(tree, 2 * k + 1, lo + half, half, limit, a, out, n);
}

/* How many buffers (in order of first step) start at or before `step`. */
static int32_t count_started(const mp_plan_slots *s, int32_t step)
{
    int32_t lo = 0, hi = s->m;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (s->firsts[mid] <= step)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The buffers of `tree` whose steps meet [a, b], into s->hits as buffer indices. */
static int32_t query(mp_plan_slots *s, const int64_t *tree, int32_t a, int32_t b)
{
    int32_t limit = count_started(s, b);
    int32_t k = tree_collect(tree, 1, 0, s->leaves, limit, a, s->hits, 0);
    for (int32_t h = 0; h < k; h++)
        s->hits[h] = s->order[s->hits[h]];
    return k;
}

/* ---- slots ------------------------------------------------------------------------------ */

typedef struct by_first {
    int32_t first, idx;
} by_first;

static int i32_cmp(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return x < y ? -1 : x > y;
}

/* Whether more than n^2 / 16 of the pairs of the m buffers (sorted by first step in s)
 * are alive together: each buffer meets the ones started before it that have not ended. */
static int are_dense(const mp_plan_slots *s, int32_t *lasts)
{
    int32_t m = s->m;
    for (int32_t p = 0; p < m; p++)
        lasts[p] = s->bufs[s->order[p]].last;
    qsort(lasts, (size_t)m, sizeof(int32_t), i32_cmp);
    uint64_t pairs = 0;
    int32_t ended = 0;
    for (int32_t p = 0; p < m; p++) {
        for (; ended < m && lasts[ended] < s->firsts[p]; ended++)
            ;
        pairs += (uint64_t)(p > ended ? p - ended : 0);
    }
    return pairs * 16 > (uint64_t)m * (uint64_t)m;
}

static int by_first_cmp(const void *a, const void *b)
{
    const by_first *x = a, *y = b;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static void *take(mp_mem *mem, size_t bytes)
{
    return mp_mem_alloc(mem, bytes ? bytes : 1, 0, MP_MEM_ENGINE, MP_OWNER_NONE);
}

mp_status mp_plan_slots_init(mp_plan_slots *s, const mp_plan_buf *bufs, int32_t n,
                             mp_mem *mem)
{
    memset(s, 0, sizeof *s);
    s->bufs = bufs;
    s->n = n;
    s->mem = mem;
    for (int32_t i = 0; i < n; i++)
        s->m += bufs[i].size > 0;
    s->leaves = 1;
    while (s->leaves < s->m)
        s->leaves *= 2;
    size_t un = (size_t)(n > 0 ? n : 1), um = (size_t)(s->m > 0 ? s->m : 1);
    size_t tree = sizeof(int64_t) * 2 * (size_t)s->leaves;
    by_first *keys = take(mem, sizeof(by_first) * um);
    s->order = take(mem, sizeof(int32_t) * um);
    s->firsts = take(mem, sizeof(int32_t) * um);
    s->at = take(mem, sizeof(int32_t) * un);
    s->placed = take(mem, tree);
    s->waiting = take(mem, tree);
    s->off = take(mem, sizeof(uint64_t) * un);
    s->end = take(mem, sizeof(uint64_t) * un);
    s->iv = take(mem, sizeof(mp_plan_iv) * um);
    s->hits = take(mem, sizeof(int32_t) * um);
    if (!keys || !s->order || !s->firsts || !s->at || !s->placed || !s->waiting || !s->off ||
        !s->end || !s->iv || !s->hits) {
        mp_mem_free(mem, keys);
        mp_plan_slots_free(s);
        return MP_ERR_NOMEM;
    }
    int32_t m = 0;
    for (int32_t i = 0; i < n; i++) {
        s->at[i] = -1;
        s->off[i] = s->end[i] = 0;
        if (bufs[i].size > 0)
            keys[m++] = (by_first){bufs[i].first, i};
    }
    qsort(keys, (size_t)m, sizeof(by_first), by_first_cmp);
    for (int32_t k = 0; k < 2 * s->leaves; k++)
        s->placed[k] = s->waiting[k] = NONE;
    for (int32_t p = 0; p < m; p++) {
        s->order[p] = keys[p].idx;
        s->firsts[p] = keys[p].first;
        s->at[keys[p].idx] = p;
        s->waiting[s->leaves + p] = bufs[keys[p].idx].last;
    }
    for (int32_t k = s->leaves - 1; k >= 1; k--) {
        int64_t l = s->waiting[2 * k], r = s->waiting[2 * k + 1];
        s->waiting[k] = l > r ? l : r;
    }
    s->dense = are_dense(s, s->hits);
    mp_mem_free(mem, keys);
    if (s->dense) {
        s->slot = take(mem, sizeof(mp_plan_slot) * um);
        if (!s->slot) {
            mp_plan_slots_free(s);
            return MP_ERR_NOMEM;
        }
    }
    return MP_OK;
}

void mp_plan_slots_free(mp_plan_slots *s)
{
    void *all[] = {s->order, s->firsts, s->at, s->placed, s->waiting,
                   s->off,   s->end,    s->iv, s->hits,   s->slot};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        mp_mem_free(s->mem, all[i]);
    memset(s, 0, sizeof *s);
}

uint64_t mp_plan_slots_fit(mp_plan_slots *s, uint64_t size, int32_t first, int32_t last,
                           int best_fit)
{
    int32_t k = 0;
    if (s->dense) {
        /* Already in order of offset; a branch-free pass. */
        for (int32_t j = 0; j < s->nslot; j++) {
            const mp_plan_slot *t = &s->slot[j];
            s->iv[k] = (mp_plan_iv){t->off, t->end};
            k += (t->last >= first) & (t->first <= last);
        }
    } else {
        k = query(s, s->placed, first, last);
        for (int32_t h = 0; h < k; h++)
            s->iv[h] = (mp_plan_iv){s->off[s->hits[h]], s->end[s->hits[h]]};
        mp_plan_iv_sort(s->iv, k);
    }
    return best_fit ? mp_plan_iv_best_fit(s->iv, k, size) : mp_plan_iv_first_fit(s->iv, k, size);
}

void mp_plan_slots_place(mp_plan_slots *s, int32_t b, uint64_t off, uint64_t size)
{
    int32_t p = s->at[b];
    const mp_plan_buf *buf = &s->bufs[b];
    s->off[b] = off;
    s->end[b] = off + size;
    tree_set(s->waiting, s->leaves, p, NONE);
    if (!s->dense) {
        tree_set(s->placed, s->leaves, p, buf->last);
        return;
    }
    /* After every slot at or below off. */
    int32_t lo = 0, hi = s->nslot;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (s->slot[mid].off <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    memmove(s->slot + lo + 1, s->slot + lo, sizeof(mp_plan_slot) * (size_t)(s->nslot - lo));
    s->slot[lo] = (mp_plan_slot){off, off + size, buf->first, buf->last};
    s->nslot++;
}

int32_t mp_plan_slots_waiting_at(mp_plan_slots *s, int32_t step)
{
    return query(s, s->waiting, step, step);
}

/* ---- greedy and firstfit ---------------------------------------------------------------- */

int mp_plan_slots_by_size(const void *a, const void *b)
{
    const mp_plan_item *x = a, *y = b;
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

mp_status mp_plan_slots_run(const mp_plan_buf *bufs, int32_t n, uint64_t align,
                            uint64_t *offsets, uint64_t *total, mp_mem *mem,
                            int (*cmp)(const void *, const void *), const uint64_t *rank,
                            int best_fit)
{
    *total = 0;
    if (n <= 0)
        return MP_OK;
    mp_plan_item *items = mp_mem_alloc(mem, sizeof(mp_plan_item) * (size_t)n, 0, MP_MEM_ENGINE,
                                       MP_OWNER_NONE);
    mp_plan_slots slots;
    if (!items || mp_plan_slots_init(&slots, bufs, n, mem) != MP_OK) {
        mp_mem_free(mem, items);
        return MP_ERR_NOMEM;
    }

    int32_t m = 0;
    for (int32_t i = 0; i < n; i++) {
        offsets[i] = 0;
        if (bufs[i].size > 0)
            items[m++] = (mp_plan_item){bufs[i].size, bufs[i].first, i, rank ? rank[i] : 0};
    }
    qsort(items, (size_t)m, sizeof(mp_plan_item), cmp);

    uint64_t top = 0;
    for (int32_t k = 0; k < m; k++) {
        const mp_plan_buf *b = &bufs[items[k].idx];
        uint64_t size = mp_plan_align_up(b->size, align);
        uint64_t off = mp_plan_slots_fit(&slots, size, b->first, b->last, best_fit);
        mp_plan_slots_place(&slots, items[k].idx, off, size);
        offsets[items[k].idx] = off;
        if (off + size > top)
            top = off + size;
    }
    *total = top;

    mp_mem_free(mem, items);
    mp_plan_slots_free(&slots);
    return MP_OK;
}
