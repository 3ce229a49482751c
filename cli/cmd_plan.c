/* memprof plan: lay out a model's tensors (and its kernels' scratch) with every planner and
 * show how each does against the live-set lower bound and against no reuse, where the bound
 * is reached, what planning the scratch apart would cost, and, with --peer xnnpack, how
 * XNNPACK's own runtime plans the same graph. --format json|svg writes the chosen plan. */
#include <inttypes.h>
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/profile.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "engine/memory/plan.h"
#include "engine/session.h"
#include "trace/trace.h"
#include "peers/xnnpack_runtime.h"
#include "reports/svg_charts.h"
#include "reports/units.h"

#define ALIVE_SHOWN 6

static void help(void)
{
    printf("Usage: memprof plan MODEL [options]\n\n"
           "Plans MODEL's tensors (a .tflite file or zoo:NAME) for its input shapes with every\n"
           "planner and prints, per planner: the arena's bytes, its ratio to the live-set\n"
           "lower bound (the most bytes alive at one operator: no plan can be smaller) and to\n"
           "naive (every tensor apart, no reuse), and the planning time (median of repeats).\n"
           "Then where the lower bound is reached (the operator and the tensors alive there),\n"
           "and the kernels' scratch planned with the tensors against planned apart.\n\n"
           "Options:\n"
           "  --shape NAME=DIMS    shape of input NAME (or its index), e.g. input=1,160,160,3\n"
           "  --planner NAME|all   the planner to show (default all); --format json|svg, the\n"
           "                       scratch and the peer sections use this planner's plans\n"
           "                       (with all: the default, %s)\n"
           "  --format F           text (default), json (every figure and the chosen plan's\n"
           "                       slots), svg (the chosen plan's arena layout)\n"
           "  -o, --output PATH    write there instead of stdout (atomically)\n"
           "  --peer xnnpack       also build XNNPACK's subgraph runtime from the model and\n"
           "                       set its workspace beside our arena, counted on the same\n"
           "                       tensors (without and with the model's inputs and outputs)\n"
           "  --threads N          threads of the peer runtime (default 1)\n"
           "  --exact              print exact byte counts next to the rounded ones\n"
           "  -h, --help           show this help\n\n"
           "Exit codes: 0 ok; 2 usage; 3 file; 4 malformed model; 5 unsupported operator\n"
           "(also: the peer refused the model; the rest is still printed); 6 impossible\n"
           "shape; 7 runtime failure.\n\n"
           "Examples:\n"
           "  memprof plan zoo:mobilenet_v2\n"
           "  memprof plan model.tflite --shape input=1,160,160,3 --peer xnnpack\n"
           "  memprof plan zoo:mobilenet_v1 --planner greedy --format svg -o greedy.svg\n\n"
           "More: docs/plan.md in memprof's sources.\n",
           mp_planner_default()->name);
    printf("\nPlanners:\n");
    for (const mp_planner *const *p = mp_planner_list(); *p; p++)
        printf("  %-10s %s\n", (*p)->name, (*p)->about);
}

typedef enum fmt { FMT_TEXT, FMT_JSON, FMT_SVG } fmt;

typedef struct plan_args {
    const char *model, *out;
    mp_model_opts m; /* --shape, --threads, --planner (NULL: all) */
    fmt format;
    bool peer, exact;
} plan_args;

/* --format, the one option with a value of its own to check. */
static int take(void *ctx, int id, const char *v)
{
    static const char *const words[] = {"text", "json", "svg", NULL}; /* as enum fmt */
    int f = 0, rc = mp_opt_choice("plan", "--format", v, words, &f);
    (void)id;
    ((plan_args *)ctx)->format = (fmt)f;
    return rc;
}

static int parse(int argc, char **argv, plan_args *a)
{
    static const mp_opt opts[] = {
        {"format", 0, MP_ARG_VALUE, 0, 1},
        {"output", 'o', MP_ARG_STRING, offsetof(plan_args, out), 0},
        {"exact", 0, MP_ARG_FLAG, offsetof(plan_args, exact), 0}, {0}};
    memset(a, 0, sizeof *a);
    a->m.threads = 1;
    int rc = mp_opts_parse(&(mp_cmd_spec){.cmd = "plan", .help = help, .opts = opts,
                                          .take = take, .ctx = a,
                                          .model = MP_OPT_SHAPE | MP_OPT_THREADS | MP_OPT_PEER |
                                                   MP_OPT_PLANNER | MP_OPT_PLANNER_ALL,
                                          .m = &a->m, .pos = &a->model, .max_pos = 1,
                                          .missing = "no MODEL given"},
                           argc, argv, NULL);
    if (rc != 0)
        return rc;
    a->peer = a->m.peer;
    mp_cli_files f = {0};
    mp_cli_files_in(&f, a->model);
    mp_cli_files_out(&f, a->out);
    return mp_cli_files_check("plan", &f);
}

/* ---- planning ------------------------------------------------------------------------------ */

/* A set of buffers to plan: all items, the tensors alone, or the tensors but the model's
 * inputs and outputs. idx[k] is the item of buffer k. */
typedef struct bufset {
    int32_t n;
    mp_plan_buf *bufs;
    int32_t *idx;
} bufset;

typedef enum { SET_ALL, SET_TENSORS, SET_INTERNAL } set_kind;

static bool bufset_make(bufset *b, const mp_plan_item *it, int32_t n, set_kind kind)
{
    b->n = 0;
    b->bufs = malloc(sizeof *b->bufs * ((size_t)n + 1));
    b->idx = malloc(sizeof *b->idx * ((size_t)n + 1));
    if (!b->bufs || !b->idx)
        return false;
    for (int32_t i = 0; i < n; i++) {
        if (kind != SET_ALL && it[i].tensor < 0)
            continue;
        if (kind == SET_INTERNAL && it[i].io)
            continue;
        b->bufs[b->n] = (mp_plan_buf){it[i].bytes, it[i].first, it[i].last};
        b->idx[b->n++] = i;
    }
    return true;
}

static void bufset_free(bufset *b)
{
    free(b->bufs);
    free(b->idx);
}

/* One planner's result on a set. */
typedef struct result {
    const mp_planner *planner;
    uint64_t arena;
    uint64_t time_ns;      /* median planning time */
    int reps;
    bool valid;
    char why[160];
    uint64_t *offsets;     /* per buffer of the set */
} result;

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Plan the set with p, repeating for a median time while less than about 50 ms were
 * spent (once at least, 25 times at most): a slow plan of a large model is made once. */
static mp_status plan_with(const mp_planner *p, const bufset *b, uint64_t align, result *r,
                           mp_error *err)
{
    memset(r, 0, sizeof *r);
    r->planner = p;
    r->offsets = calloc((size_t)b->n + 1, sizeof *r->offsets);
    if (!r->offsets)
        return mp_fail(err, MP_ERR_NOMEM, "out of memory");
    uint64_t times[25], spent = 0;
    int k = 0;
    for (; k < 25 && (k == 0 || spent < 50000000u); k++) {
        uint64_t t0 = mp_now_ns();
        mp_status st = p->plan(b->bufs, b->n, align, r->offsets, &r->arena, NULL);
        times[k] = mp_now_ns() - t0;
        spent += times[k];
        if (st != MP_OK)
            return mp_fail(err, st, "planner '%s': %s", p->name,
                           st == MP_ERR_NOMEM ? "out of memory" : mp_status_name(st));
    }
    qsort(times, (size_t)k, sizeof times[0], cmp_u64);
    r->time_ns = k % 2 ? times[k / 2] : (times[k / 2 - 1] + times[k / 2]) / 2;
    r->reps = k;
    r->valid = mp_plan_check(b->bufs, b->n, align, r->offsets, r->arena, r->why, sizeof r->why);
    return MP_OK;
}

/* A copy of r (its own offsets, n of them) into out; false when memory is short. */
static bool copy_result(const result *r, int32_t n, result *out)
{
    *out = *r;
    out->offsets = malloc(sizeof *out->offsets * ((size_t)n + 1));
    if (out->offsets)
        memcpy(out->offsets, r->offsets, sizeof *out->offsets * (size_t)n);
    return out->offsets != NULL;
}

/* ---- the model ----------------------------------------------------------------------------- */

typedef struct plan_ctx {
    const plan_args *a;
    mp_trace *tr;
    mp_session *s;
    const mp_trace_meta *meta;
    mp_plan_item *items;
    int32_t n_items, n_scratch;
    uint64_t align, scratch_max;
    bufset all, tensors, internal;
    uint64_t lb, naive, lb_tensors, lb_internal;
    int32_t lb_step;
    const mp_planner *chosen;      /* the plan drawn or listed */
    result *res;                   /* one per planner shown, on `all` */
    int n_res;
    const result *chosen_res;      /* the chosen planner on `all` (one of res) */
    result tensors_res, internal_res; /* the chosen planner on the other sets */
    /* peer */
    bool peer_ok;
    char peer_why[512];
    mp_xnn_peer_memory peer_mem;
} plan_ctx;

static const char *tname(const plan_ctx *c, int32_t t)
{
    if (t < 0 || t >= c->meta->n_tensors || !c->meta->tensors[t].name)
        return "?";
    return c->meta->tensors[t].name;
}

static const char *oname(const plan_ctx *c, int32_t op)
{
    if (op < 0 || op >= c->meta->n_ops || !c->meta->ops[op].name)
        return "?";
    return c->meta->ops[op].name;
}

static int prepare_model(plan_ctx *c)
{
    const plan_args *a = c->a;
    mp_error err = {0};
    c->tr = mp_trace_create();
    if (!c->tr) {
        fprintf(stderr, "memprof plan: out of memory\n");
        return MP_EXIT_RUNTIME;
    }
    mp_trace_set_enabled(c->tr, false); /* only the metadata (names) is wanted */
    mp_session_options o = {.threads = 1, .mode = MP_MEMORY_STATIC, .trace = c->tr};
    if (mp_session_create(&o, &c->s, &err) != MP_OK || mp_session_load(c->s, a->model, &err) != MP_OK)
        return mp_report_error(&err);
    c->meta = mp_trace_get_meta(c->tr);
    mp_shape_args *sp = calloc(1, sizeof *sp);
    if (!sp) {
        fprintf(stderr, "memprof plan: out of memory\n");
        return MP_EXIT_RUNTIME;
    }
    int rc = mp_cli_collect_shapes(c->s, "plan", a->m.shapes, a->m.n_shapes, sp);
    for (int k = 0; k < MP_CLI_MAX_INPUTS && rc == MP_EXIT_OK; k++) {
        if (sp->n[k] > 1)
            rc = mp_usage_error("plan", "--shape: input %d has several shapes; a plan is for "
                                        "one shape per input", k);
        else if (sp->n[k] == 1)
            rc = mp_cli_apply_shape(c->s, sp, k, 0);
    }
    free(sp);
    if (rc != MP_EXIT_OK)
        return rc;
    if (mp_session_plan_items(c->s, &c->items, &c->n_items, &c->align, &err) != MP_OK)
        return mp_report_error(&err);
    for (int32_t i = 0; i < c->n_items; i++)
        if (c->items[i].tensor < 0) {
            c->n_scratch++;
            if (c->items[i].bytes > c->scratch_max)
                c->scratch_max = c->items[i].bytes;
        }
    return MP_EXIT_OK;
}

static int plan_all(plan_ctx *c)
{
    mp_error err = {0};
    if (!bufset_make(&c->all, c->items, c->n_items, SET_ALL) ||
        !bufset_make(&c->tensors, c->items, c->n_items, SET_TENSORS) ||
        !bufset_make(&c->internal, c->items, c->n_items, SET_INTERNAL)) {
        fprintf(stderr, "memprof plan: out of memory\n");
        return MP_EXIT_RUNTIME;
    }
    c->lb = mp_plan_lower_bound(c->all.bufs, c->all.n, c->align, &c->lb_step);
    c->naive = mp_plan_naive(c->all.bufs, c->all.n, c->align);
    c->lb_tensors = mp_plan_lower_bound(c->tensors.bufs, c->tensors.n, c->align, NULL);
    c->lb_internal = mp_plan_lower_bound(c->internal.bufs, c->internal.n, c->align, NULL);
    c->chosen = c->a->m.planner ? mp_planner_find(c->a->m.planner) : mp_planner_default();

    int n = 0;
    for (const mp_planner *const *p = mp_planner_list(); *p; p++)
        n++;
    c->res = calloc((size_t)n + 1, sizeof *c->res);
    if (!c->res) {
        fprintf(stderr, "memprof plan: out of memory\n");
        return MP_EXIT_RUNTIME;
    }
    for (const mp_planner *const *p = mp_planner_list(); *p; p++) {
        if (c->a->m.planner && *p != c->chosen)
            continue;
        if (*p == c->chosen)
            c->chosen_res = &c->res[c->n_res];
        if (plan_with(*p, &c->all, c->align, &c->res[c->n_res++], &err) != MP_OK)
            return mp_report_error(&err);
    }
    /* The other sets only when they differ and are shown: without scratch the tensors are
     * the whole set; without inputs and outputs is for the peer and the JSON. */
    if (c->n_scratch == 0 && !copy_result(c->chosen_res, c->all.n, &c->tensors_res)) {
        fprintf(stderr, "memprof plan: out of memory\n");
        return MP_EXIT_RUNTIME;
    }
    if (c->n_scratch > 0 &&
        plan_with(c->chosen, &c->tensors, c->align, &c->tensors_res, &err) != MP_OK)
        return mp_report_error(&err);
    if ((c->a->peer || c->a->format == FMT_JSON) &&
        plan_with(c->chosen, &c->internal, c->align, &c->internal_res, &err) != MP_OK)
        return mp_report_error(&err);
    return MP_EXIT_OK;
}

static int peer_measure(plan_ctx *c)
{
    mp_error err = {0};
    mp_xnn_peer *p = NULL;
    mp_xnn_peer_options o = {.threads = (int)c->a->m.threads};
    if (mp_xnn_peer_create(c->s, &o, &p, &err) != MP_OK) {
        snprintf(c->peer_why, sizeof c->peer_why, "%s", err.msg);
        /* only a refusal of the model is reported in the output; out of memory or an
         * XNNPACK failure ends the command before anything is written */
        return err.status == MP_ERR_UNSUPPORTED ? MP_EXIT_OK : mp_report_error(&err);
    }
    mp_xnn_peer_memory_info(p, &c->peer_mem);
    mp_xnn_peer_destroy(p, NULL);
    c->peer_ok = true;
    return MP_EXIT_OK;
}

static void free_ctx(plan_ctx *c)
{
    for (int i = 0; i < c->n_res; i++)
        free(c->res[i].offsets);
    free(c->res);
    free(c->tensors_res.offsets);
    free(c->internal_res.offsets);
    bufset_free(&c->all);
    bufset_free(&c->tensors);
    bufset_free(&c->internal);
    free(c->items);
    mp_session_destroy(c->s);
    mp_trace_destroy(c->tr);
}

/* ---- text ---------------------------------------------------------------------------------- */

static const char *bytes_s(char *b, size_t n, uint64_t v, bool exact)
{
    char h[32];
    mp_fmt_bytes(h, sizeof h, v);
    if (exact)
        snprintf(b, n, "%s (%" PRIu64 ")", h, v);
    else
        snprintf(b, n, "%s", h);
    return b;
}

static double ratio(uint64_t a, uint64_t b)
{
    return b ? (double)a / (double)b : 1.0;
}

static const plan_ctx *g_sort_ctx; /* for cmp_bytes_desc (qsort has no context) */

static int cmp_bytes_desc(const void *pa, const void *pb)
{
    uint64_t a = g_sort_ctx->items[*(const int32_t *)pa].bytes;
    uint64_t b = g_sort_ctx->items[*(const int32_t *)pb].bytes;
    return (a < b) - (a > b);
}

/* The items alive at step, largest first (malloc'd; *n of them). */
static int32_t *alive_at(const plan_ctx *c, int32_t step, int *n)
{
    int32_t *v = malloc(sizeof *v * ((size_t)c->n_items + 1));
    *n = 0;
    if (!v)
        return NULL;
    for (int32_t i = 0; i < c->n_items; i++)
        if (c->items[i].first <= step && step <= c->items[i].last && c->items[i].bytes > 0)
            v[(*n)++] = i;
    g_sort_ctx = c;
    qsort(v, (size_t)*n, sizeof *v, cmp_bytes_desc);
    return v;
}

static void item_label(const plan_ctx *c, const mp_plan_item *it, char *b, size_t n)
{
    if (it->tensor < 0)
        snprintf(b, n, "scratch of op #%" PRId32 " %s", it->op, oname(c, it->op));
    else
        snprintf(b, n, "#%" PRId32 " %.48s", it->tensor, tname(c, it->tensor));
}

static void print_text(FILE *f, const plan_ctx *c)
{
    const bool x = c->a->exact;
    char b1[64], b2[64], b3[64];
    int32_t n_tensors = c->n_items - c->n_scratch;
    fprintf(f, "memprof plan: %s\n", c->a->model);
    const mp_model *m = mp_session_model(c->s);
    for (int i = 0; i < m->n_inputs; i++) {
        const mp_tensor *t = mp_session_input(c->s, i);
        char sh[96];
        fprintf(f, "  input %-20.40s %s\n", t->info->name,
                mp_shape_str(t->rank, t->dims, sh, sizeof sh));
    }
    fprintf(f, "  %" PRId32 " tensors and %" PRId32 " kernel scratch buffer%s planned, slots "
               "aligned to %" PRIu64 " B\n",
            n_tensors, c->n_scratch, c->n_scratch == 1 ? "" : "s", c->align);
    fprintf(f, "  lower bound %s, naive (no reuse) %s\n\n", bytes_s(b1, sizeof b1, c->lb, x),
            bytes_s(b2, sizeof b2, c->naive, x));

    fprintf(f, "  %-10s %16s %9s %9s %11s\n", "planner", "arena", "/ bound", "/ naive",
            "time");
    for (int i = 0; i < c->n_res; i++) {
        const result *r = &c->res[i];
        char t[32];
        mp_fmt_ns(t, sizeof t, r->time_ns);
        bool def = r->planner == mp_planner_default();
        fprintf(f, "  %-10s %16s %9.3f %9.3f %11s%s%s\n", r->planner->name,
                bytes_s(b1, sizeof b1, r->arena, false), ratio(r->arena, c->lb),
                ratio(r->arena, c->naive), t, def ? "  default" : "",
                r->valid ? "" : "  INVALID");
        if (x)
            fprintf(f, "  %-10s %16" PRIu64 "\n", "", r->arena);
        if (!r->valid)
            fprintf(f, "    invalid plan: %s\n", r->why);
    }
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < c->n_res; i++)
        if (c->res[i].valid && c->res[i].arena < best)
            best = c->res[i].arena;
    if (c->n_res > 1)
        fprintf(f, "  %s\n", best == c->lb ? "the lower bound is reached"
                                            : "no planner reaches the lower bound");
    for (int i = 0; i < c->n_res; i++) {
        const result *r = &c->res[i];
        if (r->planner->cap && r->arena > c->lb)
            fprintf(f, "  %s: %s\n", r->planner->name, r->planner->cap);
    }

    if (c->lb_step >= 0) {
        int total = 0;
        int32_t *shown = alive_at(c, c->lb_step, &total);
        int n = total < ALIVE_SHOWN ? total : ALIVE_SHOWN;
        fprintf(f, "\nLower bound: %s alive at op #%" PRId32 " %s (%d buffer%s)\n",
                bytes_s(b1, sizeof b1, c->lb, x), c->lb_step, oname(c, c->lb_step), total,
                total == 1 ? "" : "s");
        for (int i = 0; i < n; i++) {
            const mp_plan_item *it = &c->items[shown[i]];
            char lab[128];
            item_label(c, it, lab, sizeof lab);
            fprintf(f, "  %12s  %s (ops %" PRId32 "-%" PRId32 ")\n",
                    bytes_s(b1, sizeof b1, it->bytes, x), lab, it->first, it->last);
        }
        if (total > n)
            fprintf(f, "  ... %d more\n", total - n);
        free(shown);
    }

    fprintf(f, "\nKernel scratch (%s planner)\n", c->chosen->name);
    if (c->n_scratch == 0) {
        fprintf(f, "  no kernel of this model needs scratch\n");
    } else {
        uint64_t apart = c->tensors_res.arena + c->scratch_max;
        fprintf(f, "  %" PRId32 " operator%s, largest %s\n", c->n_scratch,
                c->n_scratch == 1 ? "" : "s", bytes_s(b1, sizeof b1, c->scratch_max, x));
        fprintf(f, "  planned together   arena %s\n",
                bytes_s(b1, sizeof b1, c->chosen_res->arena, x));
        fprintf(f, "  planned apart      arena %s + scratch block %s = %s\n",
                bytes_s(b1, sizeof b1, c->tensors_res.arena, x),
                bytes_s(b2, sizeof b2, c->scratch_max, x), bytes_s(b3, sizeof b3, apart, x));
    }

    if (!c->a->peer)
        return;
    fprintf(f, "\nPeer: XNNPACK's subgraph runtime (%ld thread%s)\n", c->a->m.threads,
            c->a->m.threads == 1 ? "" : "s");
    if (!c->peer_ok) {
        fprintf(f, "  refused: %s\n", c->peer_why);
        return;
    }
    const mp_xnn_peer_memory *pm = &c->peer_mem;
    uint64_t ours_in = c->internal_res.arena, ours_io = c->tensors_res.arena;
    uint64_t xnn_io = pm->workspace_bytes + pm->external_bytes;
    fprintf(f, "  %-28s %14s %14s %7s\n", "same tensors", "XNNPACK", "memprof", "ratio");
    fprintf(f, "  %-28s %14s %14s %7.3f\n", "without inputs and outputs",
            bytes_s(b1, sizeof b1, pm->workspace_bytes, false),
            bytes_s(b2, sizeof b2, ours_in, false), ratio(ours_in, pm->workspace_bytes));
    fprintf(f, "  %-28s %14s %14s %7.3f\n", "with inputs and outputs",
            bytes_s(b1, sizeof b1, xnn_io, false), bytes_s(b2, sizeof b2, ours_io, false),
            ratio(ours_io, xnn_io));
    if (x) {
        fprintf(f, "  exact, without / with I/O: XNNPACK %" PRIu64 " / %" PRIu64 "\n",
                pm->workspace_bytes, xnn_io);
        fprintf(f, "    memprof %" PRIu64 " / %" PRIu64 ", lower bounds %" PRIu64 " / %" PRIu64
                   "\n", ours_in, ours_io, c->lb_internal, c->lb_tensors);
    }
    fprintf(f, "  XNNPACK keeps inputs and outputs in its caller's buffers (%s); its\n",
            bytes_s(b1, sizeof b1, pm->external_bytes, false));
    if (pm->workspace_bytes >= c->lb_internal)
        fprintf(f, "  workspace is the lower bound of its tensors + %" PRIu64 " B\n",
                pm->workspace_bytes - c->lb_internal);
    else
        fprintf(f, "  workspace is %" PRIu64 " B below our lower bound of its tensors\n",
                c->lb_internal - pm->workspace_bytes);
    fprintf(f, "  XNNPACK's other memory: %s (operators %s, weights %s,\n",
            bytes_s(b1, sizeof b1, pm->other_bytes, false),
            bytes_s(b2, sizeof b2, pm->operator_bytes, false),
            bytes_s(b3, sizeof b3, pm->weights_bytes, false));
    fprintf(f, "  tables %s, setup %s); its peak %s\n",
            bytes_s(b1, sizeof b1, pm->tables_bytes, false),
            bytes_s(b2, sizeof b2, pm->setup_bytes, false),
            bytes_s(b3, sizeof b3, pm->peak_bytes, false));
}

/* ---- json ---------------------------------------------------------------------------------- */

static json_t *jstr(const char *s)
{
    json_t *v = s ? json_string(s) : NULL;
    return v ? v : json_null(); /* names that are not UTF-8 become null */
}

static json_t *result_json(const plan_ctx *c, const result *r)
{
    return json_pack("{s:s, s:I, s:f, s:f, s:I, s:b, s:b, s:s?}", "name", r->planner->name,
                     "arena", (json_int_t)r->arena, "ratio_to_bound", ratio(r->arena, c->lb),
                     "ratio_to_naive", ratio(r->arena, c->naive), "time_ns",
                     (json_int_t)r->time_ns, "valid", r->valid, "reaches_bound",
                     r->valid && r->arena == c->lb, "cap", r->planner->cap);
}

static json_t *build_json(const plan_ctx *c)
{
    json_t *root = json_pack("{s:s, s:i, s:o, s:I, s:i, s:i, s:I, s:I, s:i, s:o}", "format",
                             "memprof-plan", "version", 1, "model", jstr(c->a->model),
                             "align", (json_int_t)c->align, "n_tensors",
                             (int)(c->n_items - c->n_scratch), "n_scratch", (int)c->n_scratch,
                             "lower_bound", (json_int_t)c->lb, "naive", (json_int_t)c->naive,
                             "lower_bound_op", (int)c->lb_step, "lower_bound_op_name",
                             jstr(c->lb_step >= 0 ? oname(c, c->lb_step) : NULL));
    if (!root)
        return NULL;
    json_t *inputs = json_array();
    const mp_model *m = mp_session_model(c->s);
    for (int i = 0; i < m->n_inputs; i++) {
        const mp_tensor *t = mp_session_input(c->s, i);
        json_t *dims = json_array();
        for (int32_t d = 0; d < t->rank; d++)
            json_array_append_new(dims, json_integer(t->dims[d]));
        json_array_append_new(inputs, json_pack("{s:o, s:o}", "name", jstr(t->info->name),
                                                "shape", dims));
    }
    json_object_set_new(root, "inputs", inputs);
    json_t *alive = json_array();
    for (int32_t i = 0; c->lb_step >= 0 && i < c->n_items; i++) {
        const mp_plan_item *it = &c->items[i];
        if (it->first <= c->lb_step && c->lb_step <= it->last && it->bytes > 0)
            json_array_append_new(alive, json_pack("{s:i, s:i, s:o, s:I}", "tensor",
                                                   (int)it->tensor, "op", (int)it->op, "name",
                                                   jstr(it->tensor >= 0 ? tname(c, it->tensor)
                                                                        : NULL),
                                                   "bytes", (json_int_t)it->bytes));
    }
    json_object_set_new(root, "alive_at_bound", alive);
    json_t *planners = json_array();
    for (int i = 0; i < c->n_res; i++)
        json_array_append_new(planners, result_json(c, &c->res[i]));
    json_object_set_new(root, "planners", planners);

    json_t *slots = json_array();
    for (int32_t k = 0; k < c->all.n; k++) {
        const mp_plan_item *it = &c->items[c->all.idx[k]];
        json_array_append_new(slots,
                              json_pack("{s:i, s:i, s:o, s:I, s:I, s:i, s:i, s:b}", "tensor",
                                        (int)it->tensor, "op", (int)it->op, "name",
                                        jstr(it->tensor >= 0 ? tname(c, it->tensor) : NULL),
                                        "offset", (json_int_t)c->chosen_res->offsets[k], "bytes",
                                        (json_int_t)it->bytes, "first", (int)it->first, "last",
                                        (int)it->last, "io", it->io));
    }
    json_t *chosen = result_json(c, c->chosen_res);
    json_object_set_new(chosen, "slots", slots);
    json_object_set_new(root, "plan", chosen);

    json_object_set_new(root, "scratch",
                        json_pack("{s:I, s:I, s:I}", "largest", (json_int_t)c->scratch_max,
                                  "apart_arena", (json_int_t)c->tensors_res.arena,
                                  "apart_total",
                                  (json_int_t)(c->tensors_res.arena + c->scratch_max)));
    json_object_set_new(root, "ours",
                        json_pack("{s:s, s:I, s:I, s:I, s:I}", "planner", c->chosen->name,
                                  "with_io",
                                  (json_int_t)c->tensors_res.arena, "without_io",
                                  (json_int_t)c->internal_res.arena, "lower_bound_with_io",
                                  (json_int_t)c->lb_tensors, "lower_bound_without_io",
                                  (json_int_t)c->lb_internal));
    if (c->a->peer) {
        const mp_xnn_peer_memory *pm = &c->peer_mem;
        json_t *peer =
            c->peer_ok
                ? json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "name", "xnnpack",
                            "workspace", (json_int_t)pm->workspace_bytes, "external",
                            (json_int_t)pm->external_bytes, "other", (json_int_t)pm->other_bytes,
                            "operators", (json_int_t)pm->operator_bytes, "weights",
                            (json_int_t)pm->weights_bytes, "tables", (json_int_t)pm->tables_bytes,
                            "setup", (json_int_t)pm->setup_bytes, "peak",
                            (json_int_t)pm->peak_bytes)
                : json_pack("{s:s, s:s}", "name", "xnnpack", "refused", c->peer_why);
        json_object_set_new(root, "peer", peer);
    }
    return root;
}

/* ---- svg ----------------------------------------------------------------------------------- */

static bool write_svg(FILE *f, const plan_ctx *c)
{
    mp_arena_slot *v = calloc((size_t)c->all.n + 1, sizeof *v);
    if (!v)
        return false;
    for (int32_t k = 0; k < c->all.n; k++) {
        const mp_plan_item *it = &c->items[c->all.idx[k]];
        v[k] = (mp_arena_slot){.tensor = it->tensor,
                               .name = it->tensor >= 0 ? tname(c, it->tensor) : "scratch",
                               .offset = c->chosen_res->offsets[k],
                               .bytes = it->bytes,
                               .first_op = it->first,
                               .last_op = it->last,
                               .kind = it->tensor >= 0 ? MP_KIND_STATIC : MP_KIND_SCRATCH};
    }
    mp_arena_report ar;
    memset(&ar, 0, sizeof ar);
    bool ok = mp_arena_report_layout(&ar, c->chosen_res->arena, v, (size_t)c->all.n,
                                     c->meta->n_ops);
    free(v);
    if (!ok)
        return false;
    ar.lower_bound = c->lb; /* with alignment, as the planners see it */
    ar.lower_bound_op = c->lb_step;
    ar.free_event = UINT64_MAX;
    char title[512];
    snprintf(title, sizeof title, "%s: planner %s, arena %" PRIu64 " bytes (lower bound %" PRIu64
                                  ")",
             c->a->model, c->chosen->name, c->chosen_res->arena, c->lb);
    mp_svg_arena_document(f, &ar, c->meta, title);
    mp_arena_report_free(&ar);
    return true;
}

/* ---- main ---------------------------------------------------------------------------------- */

int mp_cmd_plan(int argc, char **argv)
{
    plan_args a;
    int rc = parse(argc, argv, &a);
    if (rc != 0)
        return rc < 0 ? MP_EXIT_OK : rc;
    plan_ctx c;
    memset(&c, 0, sizeof c);
    c.a = &a;
    rc = prepare_model(&c);
    if (rc == MP_EXIT_OK)
        rc = plan_all(&c);
    if (rc == MP_EXIT_OK && a.peer)
        rc = peer_measure(&c);
    if (rc == MP_EXIT_OK) {
        char why[256];
        mp_out o;
        if (!mp_out_open(&o, a.out, why, sizeof why)) {
            fprintf(stderr, "memprof plan: cannot write %s: %s\n", a.out, why);
            rc = MP_EXIT_IO;
        } else {
            bool ok = true;
            if (a.format == FMT_TEXT) {
                print_text(o.f, &c);
            } else if (a.format == FMT_JSON) {
                json_t *j = build_json(&c);
                ok = j && json_dumpf(j, o.f, JSON_INDENT(1) | JSON_PRESERVE_ORDER) == 0;
                fputc('\n', o.f);
                json_decref(j);
            } else {
                ok = write_svg(o.f, &c);
            }
            if (!ok) {
                mp_out_abort(&o);
                fprintf(stderr, "memprof plan: out of memory writing the output\n");
                rc = MP_EXIT_RUNTIME;
            } else if (!mp_out_commit(&o, why, sizeof why)) {
                fprintf(stderr, "memprof plan: cannot write %s: %s\n", a.out ? a.out : "stdout",
                        why);
                rc = MP_EXIT_IO;
            }
        }
        if (rc == MP_EXIT_OK && a.peer && !c.peer_ok) {
            fprintf(stderr, "memprof plan: --peer xnnpack: %s\n", c.peer_why);
            rc = MP_EXIT_UNSUPPORTED;
        }
    }
    free_ctx(&c);
    return rc;
}
