/* The search that the "best" and "search" planners (plan_best.c) run after their
 * heuristics: it improves a given plan by searching over placement orders (see planners.h,
 * mp_plan_search_improve). It calls no planner.
 *
 * The placer. Buffers are placed one at a time in some order, each at the lowest offset
 * where it overlaps none of the already placed buffers alive with it (first fit). Every
 * plan can be matched this way: placing the buffers of any valid plan in order of their
 * offsets (ties by index) puts each at or below its offset in that plan, since all its
 * placed neighbours already lie below that offset (they did in the plan, and by induction
 * only moved down). Repeating this until nothing moves gives a plan no larger than the
 * original whose own offset order reproduces it exactly. So some order reaches the
 * optimum, and, from any seed plan, the order of its offsets gives a plan at least as
 * small: the search starts from the heuristics' best plan and can only improve it.
 *
 * Small problems (at most SR_EXACT_MAX buffers that take space): an exact branch and bound
 * over such "offset-ordered" placements. Each step places an unplaced buffer at its first
 * fit, which must not be below the previous buffer's offset (equal only with a higher
 * index), as in the fixed point above. A node is cut when its bound reaches the best total
 * found: all buffers still to place sit at or above the last offset, so at every step
 * the total is at least that offset plus the sizes of the unplaced buffers alive then
 * plus the placed bytes alive then above it. It stops at the lower bound or its share
 * of the work budget; when it finishes, the plan is optimal.
 *
 * Otherwise (or when the exact search ran out of budget): hill climbing over orders, in
 * the spirit of Apache TVM's USMP hill climb. From the seed order, a move takes a buffer
 * that reaches the current total (the "culprit") or any buffer, and moves it just before
 * one of its neighbours placed earlier, or moves that neighbour just after it, or swaps the
 * two. Only the buffers whose earlier neighbours changed are placed again, in order,
 * and then those whose earlier neighbours moved in turn; placing stops as soon as one
 * ends above the current total. A move is kept when the total does not grow (sideways
 * moves let it cross plateaus), else undone. It stops at the lower bound or when the
 * work budget is spent.
 *
 * Deterministic: a fixed-seed generator and budgets counted in units of work (one unit per
 * neighbour looked at, a few nanoseconds), never the clock. Placing a buffer only
 * looks at its neighbours (the buffers alive with it, listed once at the start), so a
 * whole placement costs O(E log d) for E neighbour pairs and degree d. When there are too
 * many pairs to list (over MP_SEARCH_MAX_PAIRS), or the working memory is refused, the plan is
 * left as it was. Working memory comes from mp_mem (kind engine). */
#include <stdlib.h>
#include <string.h>

#include "engine/memory/plan.h"
#include "engine/memory/plan_slots.h"
#include "engine/memory/planners.h"

/* Problems up to this many buffers (of nonzero size) get the exact search first. */
#define SR_EXACT_MAX 32
/* The neighbour lists hold at most this many entries (two per pair; 4 bytes each). */
#define SR_MAX_PAIRS (2 * MP_SEARCH_MAX_PAIRS)

/* The buffers that take space ("items", in index order) and who meets whom. */
typedef struct sr_prob {
    int32_t m;
    int32_t *idx;     /* item -> buffer index */
    uint64_t *size;   /* aligned size */
    int32_t *first, *last;
    int32_t *adj_at;  /* m + 1: the neighbours of item i are adj[adj_at[i], adj_at[i + 1]) */
    int32_t *adj;
    mp_plan_iv *iv;        /* scratch for one placement: max degree entries */
    uint64_t lb;      /* the live-set lower bound */
    uint64_t work;    /* units spent */
    mp_mem *mem;
} sr_prob;

static void *sr_alloc(mp_mem *mem, size_t bytes)
{
    return mp_mem_alloc(mem, bytes ? bytes : 1, 0, MP_MEM_ENGINE, MP_OWNER_NONE);
}

/* splitmix64: a fixed sequence on every platform. */
static uint64_t sr_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint32_t sr_below(uint64_t *state, uint32_t n)
{
    return n ? (uint32_t)(sr_rand(state) % n) : 0;
}

/* ---- the problem ------------------------------------------------------------------------ */

typedef struct sr_key {
    int32_t first, item;
} sr_key;

static int sr_key_cmp(const void *a, const void *b)
{
    const sr_key *x = a, *y = b;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    return x->item < y->item ? -1 : x->item > y->item;
}

/* One sweep in order of first step, keeping the items still alive: each new item meets
 * exactly those whose last step is not before its first. With adj NULL it counts each
 * item's neighbours into deg and returns the total (stopping past `cap`); else it fills the
 * lists from the offsets in fill. */
static uint64_t sr_sweep(const sr_prob *p, const sr_key *keys, int32_t *active, int32_t *deg,
                         int32_t *fill, int32_t *adj, uint64_t cap)
{
    int32_t na = 0;
    uint64_t pairs = 0;
    for (int32_t k = 0; k < p->m; k++) {
        int32_t i = keys[k].item;
        int32_t kept = 0;
        for (int32_t a = 0; a < na; a++) {
            int32_t j = active[a];
            if (p->last[j] >= p->first[i])
                active[kept++] = j;
        }
        na = kept;
        if (adj) {
            for (int32_t a = 0; a < na; a++) {
                int32_t j = active[a];
                adj[fill[i]++] = j;
                adj[fill[j]++] = i;
            }
        } else {
            for (int32_t a = 0; a < na; a++)
                deg[active[a]]++;
            deg[i] += na;
            pairs += 2 * (uint64_t)na;
            if (pairs > cap)
                return pairs;
        }
        active[na++] = i;
    }
    return pairs;
}

static void sr_prob_free(sr_prob *p)
{
    mp_mem_free(p->mem, p->idx);
    mp_mem_free(p->mem, p->size);
    mp_mem_free(p->mem, p->first);
    mp_mem_free(p->mem, p->last);
    mp_mem_free(p->mem, p->adj_at);
    mp_mem_free(p->mem, p->adj);
    mp_mem_free(p->mem, p->iv);
    memset(p, 0, sizeof *p);
}

/* The items and their neighbour lists. Returns 0 when done, -1 when it will not search
 * (memory refused or too many pairs; nothing left to free). */
static int sr_prob_init(sr_prob *p, const mp_plan_buf *bufs, int32_t n, uint64_t align,
                        mp_mem *mem)
{
    memset(p, 0, sizeof *p);
    p->mem = mem;
    int32_t m = 0;
    for (int32_t i = 0; i < n; i++)
        m += bufs[i].size > 0;
    p->m = m;
    size_t um = (size_t)m;
    p->idx = sr_alloc(mem, sizeof(int32_t) * um);
    p->size = sr_alloc(mem, sizeof(uint64_t) * um);
    p->first = sr_alloc(mem, sizeof(int32_t) * um);
    p->last = sr_alloc(mem, sizeof(int32_t) * um);
    p->adj_at = sr_alloc(mem, sizeof(int32_t) * (um + 1));
    sr_key *keys = sr_alloc(mem, sizeof(sr_key) * um);
    int32_t *active = sr_alloc(mem, sizeof(int32_t) * um);
    int32_t *fill = sr_alloc(mem, sizeof(int32_t) * um);
    int ok = p->idx && p->size && p->first && p->last && p->adj_at && keys && active && fill;
    if (ok) {
        m = 0;
        for (int32_t i = 0; i < n; i++) {
            if (bufs[i].size == 0)
                continue;
            p->idx[m] = i;
            p->size[m] = mp_plan_align_up(bufs[i].size, align);
            p->first[m] = bufs[i].first;
            p->last[m] = bufs[i].last;
            keys[m] = (sr_key){bufs[i].first, m};
            fill[m] = 0;
            m++;
        }
        qsort(keys, um, sizeof(sr_key), sr_key_cmp);
        uint64_t pairs = sr_sweep(p, keys, active, fill, NULL, NULL, SR_MAX_PAIRS);
        ok = pairs <= SR_MAX_PAIRS;
        int32_t max_deg = 0;
        if (ok) {
            p->adj_at[0] = 0;
            for (int32_t i = 0; i < m; i++) {
                p->adj_at[i + 1] = p->adj_at[i] + fill[i];
                max_deg = fill[i] > max_deg ? fill[i] : max_deg;
                fill[i] = p->adj_at[i];
            }
            p->adj = sr_alloc(mem, sizeof(int32_t) * (size_t)pairs);
            p->iv = sr_alloc(mem, sizeof(mp_plan_iv) * (size_t)max_deg);
            ok = p->adj && p->iv;
        }
        if (ok)
            sr_sweep(p, keys, active, NULL, fill, p->adj, 0);
    }
    mp_mem_free(mem, keys);
    mp_mem_free(mem, active);
    mp_mem_free(mem, fill);
    if (!ok) {
        sr_prob_free(p);
        return -1;
    }
    p->lb = mp_plan_lower_bound(bufs, n, align, NULL);
    return 0;
}

/* ---- the placer ------------------------------------------------------------------------- */

/* By offset, then by the second field (an item number where sr_climb uses it). */
static int sr_pair_cmp(const void *a, const void *b)
{
    const mp_plan_iv *x = a, *y = b;
    if (x->off != y->off)
        return x->off < y->off ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* The first fit of item b among its neighbours placed before it (pos[j] < pos[b]). */
static uint64_t sr_first_fit(sr_prob *p, int32_t b, const int32_t *pos, const uint64_t *off)
{
    mp_plan_iv *iv = p->iv;
    int32_t k = 0, pb = pos[b];
    int32_t e0 = p->adj_at[b], e1 = p->adj_at[b + 1];
    for (int32_t e = e0; e < e1; e++) {
        int32_t j = p->adj[e];
        if (pos[j] < pb) {
            iv[k].off = off[j];
            iv[k].end = off[j] + p->size[j];
            k++;
        }
    }
    /* Looking at the neighbours, then sorting the placed ones. */
    p->work += (uint64_t)(e1 - e0) + (uint64_t)k * (uint64_t)(k > 1 ? 65 - __builtin_clzll((uint64_t)k) : 1) + 1;
    mp_plan_iv_sort(iv, k);
    return mp_plan_iv_first_fit(iv, k, p->size[b]);
}

/* ---- exact search (small problems) ------------------------------------------------------ */

typedef struct sr_bb {
    sr_prob *p;
    int32_t nsteps;
    uint64_t *alive;   /* per distinct first step: the items alive at it (bit i: item i) */
    int32_t *pos;      /* 0: placed, 1: not (so that sr_first_fit sees the placed ones) */
    uint64_t *off;     /* offsets of the placed items */
    uint64_t best;     /* the best total so far, its offsets in best_off */
    uint64_t *best_off;
    uint64_t budget;   /* stop when p->work passes it */
    int stopped;
} sr_bb;

typedef struct sr_child {
    uint64_t off;
    int32_t item;
} sr_child;

static int sr_child_cmp(const void *a, const void *b)
{
    const sr_child *x = a, *y = b;
    if (x->off != y->off)
        return x->off < y->off ? -1 : 1;
    return x->item < y->item ? -1 : x->item > y->item;
}

static void sr_bb_node(sr_bb *s, uint64_t placed, uint64_t o_last, int32_t i_last,
                       uint64_t top)
{
    sr_prob *p = s->p;
    int32_t m = p->m;
    if (s->stopped)
        return;
    if (p->work > s->budget || s->best <= p->lb) {
        s->stopped = 1;
        return;
    }
    uint64_t all = m == 64 ? ~0ull : (1ull << m) - 1;
    if (placed == all) {
        if (top < s->best) {
            s->best = top;
            memcpy(s->best_off, s->off, sizeof(uint64_t) * (size_t)m);
        }
        return;
    }

    /* The bound: at each step, the last offset, the unplaced bytes alive then and the
     * placed bytes alive then above the last offset. */
    p->work += (uint64_t)s->nsteps * (uint64_t)m;
    for (int32_t t = 0; t < s->nsteps; t++) {
        uint64_t sum = o_last;
        for (uint64_t live = s->alive[t]; live; live &= live - 1) {
            int32_t i = __builtin_ctzll(live);
            if (placed >> i & 1) {
                uint64_t end = s->off[i] + p->size[i];
                uint64_t lo = s->off[i] > o_last ? s->off[i] : o_last;
                sum += end > lo ? end - lo : 0;
            } else {
                sum += p->size[i];
            }
        }
        if (sum >= s->best)
            return;
    }

    sr_child ch[SR_EXACT_MAX];
    int32_t nch = 0;
    for (int32_t i = 0; i < m; i++) {
        if (placed >> i & 1)
            continue;
        uint64_t f = sr_first_fit(p, i, s->pos, s->off);
        if (f < o_last || (f == o_last && i < i_last))
            continue;
        if (f + p->size[i] >= s->best)
            continue;
        ch[nch++] = (sr_child){f, i};
    }
    qsort(ch, (size_t)nch, sizeof(sr_child), sr_child_cmp);
    for (int32_t c = 0; c < nch && !s->stopped; c++) {
        int32_t i = ch[c].item;
        uint64_t end = ch[c].off + p->size[i];
        s->pos[i] = 0;
        s->off[i] = ch[c].off;
        sr_bb_node(s, placed | 1ull << i, ch[c].off, i, end > top ? end : top);
        s->pos[i] = 1;
    }
}

/* Branch and bound from the incumbent (best, best_off). Returns 1 when it finished (the
 * plan in best_off is then optimal), 0 when it stopped early, -1 when memory was refused. */
static int sr_exact(sr_prob *p, uint64_t *best, uint64_t *best_off, uint64_t budget)
{
    int32_t m = p->m;
    sr_bb s = {.p = p, .best = *best, .best_off = best_off, .budget = budget};
    s.alive = sr_alloc(p->mem, sizeof(uint64_t) * (size_t)m);
    s.pos = sr_alloc(p->mem, sizeof(int32_t) * (size_t)m);
    s.off = sr_alloc(p->mem, sizeof(uint64_t) * (size_t)m);
    int done = -1;
    if (s.alive && s.pos && s.off) {
        /* The distinct first steps: the live set at any step is contained in the live set
         * at the latest first step before it. */
        for (int32_t i = 0; i < m; i++) {
            int dup = 0;
            for (int32_t j = 0; j < i && !dup; j++)
                dup = p->first[j] == p->first[i];
            if (dup)
                continue;
            uint64_t live = 0;
            for (int32_t j = 0; j < m; j++) {
                if (p->first[j] <= p->first[i] && p->first[i] <= p->last[j])
                    live |= 1ull << j;
            }
            s.alive[s.nsteps++] = live;
        }
        for (int32_t i = 0; i < m; i++) {
            s.pos[i] = 1;
            s.off[i] = 0;
        }
        sr_bb_node(&s, 0, 0, -1, 0);
        *best = s.best;
        done = !s.stopped || s.best <= p->lb;
    }
    mp_mem_free(p->mem, s.alive);
    mp_mem_free(p->mem, s.pos);
    mp_mem_free(p->mem, s.off);
    return done;
}

/* ---- hill climbing ---------------------------------------------------------------------- */

/* Move the item at position i to position j (the ones between shift by one). */
static void sr_move(int32_t *order, int32_t *pos, int32_t i, int32_t j)
{
    int32_t b = order[i];
    if (i > j) {
        memmove(order + j + 1, order + j, sizeof(int32_t) * (size_t)(i - j));
        for (int32_t k = j + 1; k <= i; k++)
            pos[order[k]] = k;
    } else if (i < j) {
        memmove(order + i, order + i + 1, sizeof(int32_t) * (size_t)(j - i));
        for (int32_t k = i; k < j; k++)
            pos[order[k]] = k;
    }
    order[j] = b;
    pos[b] = j;
}

/* A random neighbour of item b placed before it, or -1. */
static int32_t sr_earlier_neighbour(const sr_prob *p, const int32_t *pos, int32_t b,
                                    uint64_t *rng)
{
    int32_t count = 0, pb = pos[b];
    for (int32_t e = p->adj_at[b]; e < p->adj_at[b + 1]; e++)
        count += pos[p->adj[e]] < pb;
    if (count == 0)
        return -1;
    int32_t pick = (int32_t)sr_below(rng, (uint32_t)count);
    for (int32_t e = p->adj_at[b]; e < p->adj_at[b + 1]; e++) {
        if (pos[p->adj[e]] < pb && pick-- == 0)
            return p->adj[e];
    }
    return -1;
}

/* The climb's state: an order, its placement, and what one move needs. */
typedef struct sr_climb_st {
    int32_t *order, *pos; /* position -> item, item -> position */
    uint64_t *off;        /* by item */
    uint64_t total;       /* the highest end */
    int32_t n_top;        /* how many items end at total */
    int32_t *tops;        /* every item ending at total (and maybe some stale ones) */
    int32_t ntops;
    unsigned char *in_top, *dirty;
    int32_t *heap, nheap; /* positions of the dirty items still to place again */
    int32_t *pushed, npushed;
    int32_t *log_item, nlog; /* the items a move placed elsewhere, and where they were */
    uint64_t *log_off;
} sr_climb_st;

static void sr_climb_free(sr_climb_st *c, mp_mem *mem)
{
    void *all[] = {c->order, c->pos, c->off, c->tops, c->in_top, c->dirty,
                   c->heap, c->pushed, c->log_item, c->log_off};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        mp_mem_free(mem, all[i]);
}

static int sr_climb_init(sr_climb_st *c, int32_t m, mp_mem *mem)
{
    size_t um = (size_t)m;
    memset(c, 0, sizeof *c);
    c->order = sr_alloc(mem, sizeof(int32_t) * um);
    c->pos = sr_alloc(mem, sizeof(int32_t) * um);
    c->off = sr_alloc(mem, sizeof(uint64_t) * um);
    c->tops = sr_alloc(mem, sizeof(int32_t) * um);
    c->in_top = sr_alloc(mem, um);
    c->dirty = sr_alloc(mem, um);
    c->heap = sr_alloc(mem, sizeof(int32_t) * um);
    c->pushed = sr_alloc(mem, sizeof(int32_t) * um);
    c->log_item = sr_alloc(mem, sizeof(int32_t) * um);
    c->log_off = sr_alloc(mem, sizeof(uint64_t) * um);
    if (!c->order || !c->pos || !c->off || !c->tops || !c->in_top || !c->dirty || !c->heap ||
        !c->pushed || !c->log_item || !c->log_off) {
        sr_climb_free(c, mem);
        return -1;
    }
    memset(c->dirty, 0, um);
    return 0;
}

/* The total, n_top and the list of top items, from scratch. */
static void sr_find_tops(const sr_prob *p, sr_climb_st *c)
{
    c->total = 0;
    for (int32_t i = 0; i < p->m; i++) {
        uint64_t end = c->off[i] + p->size[i];
        c->total = end > c->total ? end : c->total;
    }
    c->ntops = 0;
    for (int32_t i = 0; i < p->m; i++) {
        c->in_top[i] = c->off[i] + p->size[i] == c->total;
        if (c->in_top[i])
            c->tops[c->ntops++] = i;
    }
    c->n_top = c->ntops;
}

/* Mark item x to be placed again (a min-heap of positions). */
static void sr_mark(sr_climb_st *c, int32_t x)
{
    if (c->dirty[x])
        return;
    c->dirty[x] = 1;
    c->pushed[c->npushed++] = x;
    int32_t k = c->nheap++, v = c->pos[x];
    while (k > 0 && c->heap[(k - 1) / 2] > v) {
        c->heap[k] = c->heap[(k - 1) / 2];
        k = (k - 1) / 2;
    }
    c->heap[k] = v;
}

static int32_t sr_pop(sr_climb_st *c)
{
    int32_t top = c->heap[0], v = c->heap[--c->nheap], k = 0;
    for (;;) {
        int32_t a = 2 * k + 1;
        if (a >= c->nheap)
            break;
        if (a + 1 < c->nheap && c->heap[a + 1] < c->heap[a])
            a++;
        if (c->heap[a] >= v)
            break;
        c->heap[k] = c->heap[a];
        k = a;
    }
    if (c->nheap > 0)
        c->heap[k] = v;
    return top;
}

/* Mark item z and its neighbours at positions lo..hi: the items whose earlier neighbours
 * a move within lo..hi changed. */
static void sr_mark_moved(sr_prob *p, sr_climb_st *c, int32_t z, int32_t lo, int32_t hi)
{
    sr_mark(c, z);
    for (int32_t e = p->adj_at[z]; e < p->adj_at[z + 1]; e++) {
        int32_t y = p->adj[e];
        if (c->pos[y] >= lo && c->pos[y] <= hi)
            sr_mark(c, y);
    }
    p->work += (uint64_t)(p->adj_at[z + 1] - p->adj_at[z]);
}

/* Place the marked items again in order of position, marking the later neighbours of each
 * one that lands elsewhere. Returns 1 (stopping there) when an end passes the total. */
static int sr_settle(sr_prob *p, sr_climb_st *c)
{
    while (c->nheap > 0) {
        int32_t k = sr_pop(c);
        int32_t x = c->order[k];
        uint64_t o = sr_first_fit(p, x, c->pos, c->off);
        if (o == c->off[x])
            continue;
        uint64_t old_end = c->off[x] + p->size[x], end = o + p->size[x];
        c->log_item[c->nlog] = x;
        c->log_off[c->nlog++] = c->off[x];
        c->off[x] = o;
        c->n_top -= old_end == c->total;
        if (end > c->total)
            return 1;
        c->n_top += end == c->total;
        for (int32_t e = p->adj_at[x]; e < p->adj_at[x + 1]; e++) {
            int32_t y = p->adj[e];
            if (c->pos[y] > k)
                sr_mark(c, y);
        }
        p->work += (uint64_t)(p->adj_at[x + 1] - p->adj_at[x]);
    }
    return 0;
}

/* A random item ending at the total (dropping stale entries of the list). */
static int32_t sr_culprit(const sr_prob *p, sr_climb_st *c, uint64_t *rng)
{
    for (;;) {
        int32_t r = (int32_t)sr_below(rng, (uint32_t)c->ntops);
        int32_t x = c->tops[r];
        if (c->off[x] + p->size[x] == c->total)
            return x;
        c->in_top[x] = 0;
        c->tops[r] = c->tops[--c->ntops];
    }
}

/* Climb from the order of `seed` offsets (ties by item) until the lower bound or the
 * budget. *best and best_off receive the result when it is smaller than *best. Returns 0,
 * or -1 when memory was refused. */
static int sr_climb(sr_prob *p, const uint64_t *seed, uint64_t *best, uint64_t *best_off,
                    uint64_t budget)
{
    int32_t m = p->m;
    sr_climb_st c;
    if (m < 2 || sr_climb_init(&c, m, p->mem) != 0)
        return m < 2 ? 0 : -1;

    /* The seed order: by seed offset, ties by item (the pairs are distinct). */
    mp_plan_iv *pairs = sr_alloc(p->mem, sizeof(mp_plan_iv) * (size_t)m);
    if (!pairs) {
        sr_climb_free(&c, p->mem);
        return -1;
    }
    for (int32_t i = 0; i < m; i++)
        pairs[i] = (mp_plan_iv){seed[i], (uint64_t)i};
    qsort(pairs, (size_t)m, sizeof(mp_plan_iv), sr_pair_cmp);
    for (int32_t k = 0; k < m; k++) {
        c.order[k] = (int32_t)pairs[k].end;
        c.pos[c.order[k]] = k;
    }
    mp_mem_free(p->mem, pairs);
    for (int32_t k = 0; k < m; k++) {
        int32_t b = c.order[k];
        c.off[b] = sr_first_fit(p, b, c.pos, c.off);
    }
    sr_find_tops(p, &c);

    uint64_t rng = 0x6d656d70726f66ull ^ (uint64_t)m; /* fixed seed */
    while (c.total > p->lb && p->work < budget) {
        /* Pick b (the culprit, or any item) and j, one of its neighbours placed before it. */
        uint32_t kind = sr_below(&rng, 8);
        int32_t b = kind < 6 ? sr_culprit(p, &c, &rng) : (int32_t)sr_below(&rng, (uint32_t)m);
        int32_t j = sr_earlier_neighbour(p, c.pos, b, &rng);
        p->work += (uint64_t)(p->adj_at[b + 1] - p->adj_at[b]) + 1;
        if (j < 0)
            continue;
        int32_t pb = c.pos[b], pj = c.pos[j];
        uint64_t total = c.total;
        int32_t n_top = c.n_top;
        if (kind < 4 || kind >= 6) {
            sr_move(c.order, c.pos, pb, pj); /* b just before j */
            sr_mark_moved(p, &c, b, pj, pb);
        } else if (kind == 4) {
            sr_move(c.order, c.pos, pj, pb); /* j just after b */
            sr_mark_moved(p, &c, j, pj, pb);
        } else {
            sr_move(c.order, c.pos, pb, pj); /* swap them */
            sr_move(c.order, c.pos, pj + 1, pb);
            sr_mark_moved(p, &c, b, pj, pb);
            sr_mark_moved(p, &c, j, pj, pb);
        }
        p->work += (uint64_t)(pb - pj) / 4 + 1;

        int over = sr_settle(p, &c);
        int keep = !over; /* sideways moves too: they cross plateaus */
        if (keep && c.n_top == 0) {
            sr_find_tops(p, &c); /* the total went down */
            p->work += (uint64_t)m;
        } else if (keep) {
            for (int32_t l = 0; l < c.nlog; l++) {
                int32_t x = c.log_item[l];
                if (!c.in_top[x] && c.off[x] + p->size[x] == total) {
                    c.in_top[x] = 1;
                    c.tops[c.ntops++] = x;
                }
            }
        } else {
            for (int32_t l = c.nlog - 1; l >= 0; l--)
                c.off[c.log_item[l]] = c.log_off[l];
            c.total = total;
            c.n_top = n_top;
            if (kind < 4 || kind >= 6) {
                sr_move(c.order, c.pos, pj, pb);
            } else if (kind == 4) {
                sr_move(c.order, c.pos, pb, pj);
            } else {
                sr_move(c.order, c.pos, pb, pj); /* j back to pj, b to pj + 1 */
                sr_move(c.order, c.pos, pj + 1, pb);
            }
        }
        for (int32_t k = 0; k < c.npushed; k++)
            c.dirty[c.pushed[k]] = 0;
        c.npushed = c.nheap = c.nlog = 0;
    }

    if (c.total < *best) {
        *best = c.total;
        memcpy(best_off, c.off, sizeof(uint64_t) * (size_t)m);
    }
    sr_climb_free(&c, p->mem);
    return 0;
}

/* ---- entry points ----------------------------------------------------------------------- */

mp_status mp_plan_search_improve(const mp_plan_buf *bufs, int32_t n, uint64_t align,
                                 uint64_t *offsets, uint64_t *total, mp_mem *mem,
                                 uint64_t budget)
{
    if (n <= 0)
        return MP_OK;
    for (int32_t i = 0; i < n; i++) {
        if (bufs[i].last < bufs[i].first)
            return MP_OK; /* malformed: no plan is valid, leave it */
    }
    sr_prob p;
    if (sr_prob_init(&p, bufs, n, align, mem) != 0)
        return MP_OK;
    int32_t m = p.m;
    uint64_t best = *total;
    uint64_t *best_off = sr_alloc(mem, sizeof(uint64_t) * (size_t)m);
    uint64_t *seed = sr_alloc(mem, sizeof(uint64_t) * (size_t)m);
    if (best_off && seed && best > p.lb) {
        for (int32_t i = 0; i < m; i++)
            seed[i] = best_off[i] = offsets[p.idx[i]];
        int done = 0;
        if (m <= SR_EXACT_MAX)
            done = sr_exact(&p, &best, best_off, budget / 2);
        if (done == 0 && best > p.lb) {
            /* Climb from the best plan so far (the exact search's, if it found one). */
            memcpy(seed, best_off, sizeof(uint64_t) * (size_t)m);
            sr_climb(&p, seed, &best, best_off, budget);
        }
        if (best < *total) {
            for (int32_t i = 0; i < n; i++)
                offsets[i] = 0;
            for (int32_t i = 0; i < m; i++)
                offsets[p.idx[i]] = best_off[i];
            *total = best;
        }
    }
    mp_mem_free(mem, best_off);
    mp_mem_free(mem, seed);
    sr_prob_free(&p);
    return MP_OK;
}
