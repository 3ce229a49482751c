/* memprof plan's output as text, JSON and SVG (see plan_report.h). */
#include "reports/plan_report.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/profile.h"
#include "reports/svg_charts.h"
#include "reports/units.h"

#define ALIVE_SHOWN 6

/* Tensor t and operator op of the report's subgraph, by name (meta's tables hold every
 * subgraph's, one after another). */
static const char *tname(const mp_plan_report *r, int32_t t)
{
    if (t < 0 || t > r->meta->n_tensors - 1 - r->tensor_base ||
        !r->meta->tensors[r->tensor_base + t].name)
        return "?";
    return r->meta->tensors[r->tensor_base + t].name;
}

static const char *oname(const mp_plan_report *r, int32_t op)
{
    if (op < 0 || op > r->meta->n_ops - 1 - r->op_base || !r->meta->ops[r->op_base + op].name)
        return "?";
    return r->meta->ops[r->op_base + op].name;
}

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

static const mp_plan_report *g_sort; /* for cmp_bytes_desc (qsort has no context) */

static int cmp_bytes_desc(const void *pa, const void *pb)
{
    uint64_t a = g_sort->items[*(const int32_t *)pa].bytes;
    uint64_t b = g_sort->items[*(const int32_t *)pb].bytes;
    return (a < b) - (a > b);
}

/* The items alive at step, largest first (malloc'd; *n of them). */
static int32_t *alive_at(const mp_plan_report *r, int32_t step, int *n)
{
    int32_t *v = malloc(sizeof *v * ((size_t)r->n_items + 1));
    *n = 0;
    if (!v)
        return NULL;
    for (int32_t i = 0; i < r->n_items; i++)
        if (r->items[i].first <= step && step <= r->items[i].last && r->items[i].bytes > 0)
            v[(*n)++] = i;
    g_sort = r;
    qsort(v, (size_t)*n, sizeof *v, cmp_bytes_desc);
    return v;
}

static void item_label(const mp_plan_report *r, const mp_plan_report_item *it, char *b, size_t n)
{
    if (it->tensor < 0)
        snprintf(b, n, "scratch of op #%" PRId32 " %s", it->op, oname(r, it->op));
    else
        snprintf(b, n, "#%" PRId32 " %.48s", it->tensor, tname(r, it->tensor));
}

static const char *shape_s(const mp_plan_report_input *in, char *buf, size_t n)
{
    return mp_fmt_dims(buf, n, in->rank, in->dims);
}

/* The tensors that take a planned slot in place instead of one of their own. */
static void text_in_place(FILE *f, const mp_plan_report *r)
{
    if (r->n_in_place > 0)
        fprintf(f, "  and %" PRId32 " tensor%s in place in those slots (docs/memory.md, In "
                   "place)\n", r->n_in_place, r->n_in_place == 1 ? "" : "s");
}

static void text_planners(FILE *f, const mp_plan_report *r)
{
    const bool x = r->exact;
    char b1[64];
    fprintf(f, "  %-10s %16s %9s %9s %11s\n", "planner", "arena", "/ bound", "/ naive",
            "time");
    for (int i = 0; i < r->n_res; i++) {
        const mp_plan_report_result *p = &r->res[i];
        char t[32];
        mp_fmt_ns(t, sizeof t, p->time_ns);
        fprintf(f, "  %-10s %16s %9.3f %9.3f %11s%s%s\n", p->name,
                bytes_s(b1, sizeof b1, p->arena, false), ratio(p->arena, r->lower_bound),
                ratio(p->arena, r->naive), t, p->is_default ? "  default" : "",
                p->valid ? "" : "  INVALID");
        if (x)
            fprintf(f, "  %-10s %16" PRIu64 "\n", "", p->arena);
        if (!p->valid)
            fprintf(f, "    invalid plan: %s\n", p->why);
    }
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < r->n_res; i++)
        if (r->res[i].valid && r->res[i].arena < best)
            best = r->res[i].arena;
    if (r->n_res > 1)
        fprintf(f, "  %s\n", best == r->lower_bound ? "the lower bound is reached"
                                                    : "no planner reaches the lower bound");
    for (int i = 0; i < r->n_res; i++) {
        const mp_plan_report_result *p = &r->res[i];
        if (p->cap && p->arena > r->lower_bound)
            fprintf(f, "  %s: %s\n", p->name, p->cap);
    }
}

static void text_bound_and_scratch(FILE *f, const mp_plan_report *r)
{
    const bool x = r->exact;
    char b1[64], b2[64], b3[64];
    if (r->lower_bound_step >= 0) {
        int total = 0;
        int32_t *shown = alive_at(r, r->lower_bound_step, &total);
        int n = total < ALIVE_SHOWN ? total : ALIVE_SHOWN;
        fprintf(f, "\nLower bound: %s alive at op #%" PRId32 " %s (%d buffer%s)\n",
                bytes_s(b1, sizeof b1, r->lower_bound, x), r->lower_bound_step,
                oname(r, r->lower_bound_step), total, total == 1 ? "" : "s");
        for (int i = 0; shown && i < n; i++) {
            const mp_plan_report_item *it = &r->items[shown[i]];
            char lab[128];
            item_label(r, it, lab, sizeof lab);
            fprintf(f, "  %12s  %s (ops %" PRId32 "-%" PRId32 ")\n",
                    bytes_s(b1, sizeof b1, it->bytes, x), lab, it->first, it->last);
        }
        if (total > n)
            fprintf(f, "  ... %d more\n", total - n);
        free(shown);
    }
    const mp_plan_report_result *chosen = &r->res[r->chosen];
    fprintf(f, "\nKernel scratch (%s planner)\n", chosen->name);
    if (r->n_scratch == 0) {
        fprintf(f, "  no kernel of this %s needs scratch\n", r->subgraph ? "subgraph" : "model");
        return;
    }
    uint64_t apart = r->tensors_arena + r->scratch_max;
    fprintf(f, "  %" PRId32 " operator%s, largest %s\n", r->n_scratch,
            r->n_scratch == 1 ? "" : "s", bytes_s(b1, sizeof b1, r->scratch_max, x));
    fprintf(f, "  planned together   arena %s\n", bytes_s(b1, sizeof b1, chosen->arena, x));
    fprintf(f, "  planned apart      arena %s + scratch block %s = %s\n",
            bytes_s(b1, sizeof b1, r->tensors_arena, x),
            bytes_s(b2, sizeof b2, r->scratch_max, x), bytes_s(b3, sizeof b3, apart, x));
}

static void text_peer(FILE *f, const mp_plan_report *r)
{
    const bool x = r->exact;
    char b1[64], b2[64], b3[64];
    fprintf(f, "\nPeer: XNNPACK's subgraph runtime (%ld thread%s)\n", r->peer_threads,
            r->peer_threads == 1 ? "" : "s");
    if (!r->peer.ok) {
        fprintf(f, "  refused: %s\n", r->peer.refused);
        return;
    }
    const mp_plan_report_peer *pm = &r->peer;
    uint64_t ours_in = r->internal_arena, ours_io = r->tensors_arena;
    uint64_t xnn_io = pm->workspace + pm->external;
    fprintf(f, "  %-28s %14s %14s %7s\n", "same tensors", "XNNPACK", "memprof", "ratio");
    fprintf(f, "  %-28s %14s %14s %7.3f\n", "without inputs and outputs",
            bytes_s(b1, sizeof b1, pm->workspace, false),
            bytes_s(b2, sizeof b2, ours_in, false), ratio(ours_in, pm->workspace));
    fprintf(f, "  %-28s %14s %14s %7.3f\n", "with inputs and outputs",
            bytes_s(b1, sizeof b1, xnn_io, false), bytes_s(b2, sizeof b2, ours_io, false),
            ratio(ours_io, xnn_io));
    if (x) {
        fprintf(f, "  exact, without / with I/O: XNNPACK %" PRIu64 " / %" PRIu64 "\n",
                pm->workspace, xnn_io);
        fprintf(f, "    memprof %" PRIu64 " / %" PRIu64 ", lower bounds %" PRIu64 " / %" PRIu64
                   "\n", ours_in, ours_io, r->lower_bound_internal, r->lower_bound_tensors);
    }
    fprintf(f, "  XNNPACK keeps inputs and outputs in its caller's buffers (%s); its\n",
            bytes_s(b1, sizeof b1, pm->external, false));
    if (pm->workspace >= r->lower_bound_internal)
        fprintf(f, "  workspace is the lower bound of its tensors + %" PRIu64 " B\n",
                pm->workspace - r->lower_bound_internal);
    else
        fprintf(f, "  workspace is %" PRIu64 " B below our lower bound of its tensors\n",
                r->lower_bound_internal - pm->workspace);
    fprintf(f, "  XNNPACK's other memory: %s (operators %s, weights %s,\n",
            bytes_s(b1, sizeof b1, pm->other, false), bytes_s(b2, sizeof b2, pm->operators, false),
            bytes_s(b3, sizeof b3, pm->weights, false));
    fprintf(f, "  tables %s, setup %s); its peak %s\n", bytes_s(b1, sizeof b1, pm->tables, false),
            bytes_s(b2, sizeof b2, pm->setup, false), bytes_s(b3, sizeof b3, pm->peak, false));
}

static const char *sg_name(const mp_plan_report *r)
{
    return r->subgraph_name && r->subgraph_name[0] ? r->subgraph_name : "(no name)";
}

/* Subgraph r (of a model of several): when it is planned, then its figures as subgraph 0's. */
static void text_subgraph(FILE *f, const mp_plan_report *r)
{
    const bool x = r->exact;
    char b1[64], b2[64];
    fprintf(f, "\nSubgraph %" PRId32 " %.40s, called by %s\n", r->subgraph, sg_name(r),
            r->called_by ? r->called_by : "no operator");
    if (r->when == MP_PRW_NONE) {
        fprintf(f, "  not planned: no prepare calls it (no operator does, or an IF whose\n"
                   "  constant condition takes the other branch)\n");
        return;
    }
    static const char *const how[] = {
        "", "planned at prepare for its caller's shapes, held until teardown",
        "planned when the first run calls it, freed once it ran",
        ("planned at prepare for its caller's first shapes, and again while\n"
         "  running as they change (its caller's outputs are known only then)")};
    fprintf(f, "  %s\n", how[r->when]);
    fprintf(f, "  %" PRId32 " tensors and %" PRId32 " kernel scratch buffer%s planned\n",
            r->n_items - r->n_scratch, r->n_scratch, r->n_scratch == 1 ? "" : "s");
    text_in_place(f, r);
    fprintf(f, "  lower bound %s, naive (no reuse) %s\n\n",
            bytes_s(b1, sizeof b1, r->lower_bound, x), bytes_s(b2, sizeof b2, r->naive, x));
    text_planners(f, r);
    text_bound_and_scratch(f, r);
}

/* How the subgraphs' arenas add up: those planned at prepare held at once, a CALL_ONCE's
 * added while the first run calls it. */
typedef struct plan_total {
    uint64_t planned, session;         /* held from prepare: the chosen plans, the session's */
    uint64_t run_planned, run_session; /* the largest CALL_ONCE arena, added in the first run */
} plan_total;

static const mp_plan_report *sub_at(const mp_plan_report *r, int32_t k)
{
    return k == 0 ? r : &r->subs[k - 1];
}

static plan_total total_of(const mp_plan_report *r)
{
    plan_total t = {0, 0, 0, 0};
    for (int32_t k = 0; k < r->n_subgraphs; k++) {
        const mp_plan_report *g = sub_at(r, k);
        uint64_t a = g->when != MP_PRW_NONE ? g->res[g->chosen].arena : 0;
        if (g->when == MP_PRW_PREPARE || g->when == MP_PRW_AGAIN) {
            t.planned += a;
            t.session += g->session_arena;
        } else if (g->when == MP_PRW_RUN) {
            t.run_planned = a > t.run_planned ? a : t.run_planned;
            t.run_session = g->session_arena > t.run_session ? g->session_arena : t.run_session;
        }
    }
    return t;
}

static void text_total(FILE *f, const mp_plan_report *r)
{
    const bool x = r->exact;
    char b1[64], b2[64];
    plan_total t = total_of(r);
    fprintf(f, "\nModel total (%s planner): %" PRId32 " subgraphs\n", r->res[r->chosen].name,
            r->n_subgraphs);
    fprintf(f, "  memprof holds the arenas of every subgraph planned at prepare at once,\n"
               "  from prepare to teardown, as TensorFlow Lite does; a CALL_ONCE's only\n"
               "  while the first run calls it.\n");
    fprintf(f, "  %-26s %-9s %16s %16s\n", "subgraph", "planned", "arena", "session holds");
    bool again = false;
    for (int32_t k = 0; k < r->n_subgraphs; k++) {
        const mp_plan_report *g = sub_at(r, k);
        char lab[40];
        snprintf(lab, sizeof lab, "%" PRId32 " %.24s", k, sg_name(g));
        static const char *const when[] = {"never", "prepare", "first run", "prepare*"};
        again |= g->when == MP_PRW_AGAIN;
        if (g->when == MP_PRW_NONE)
            fprintf(f, "  %-26s %-9s %16s %16s\n", lab, when[g->when], "-", "-");
        else
            fprintf(f, "  %-26s %-9s %16s %16s\n", lab, when[g->when],
                    bytes_s(b1, sizeof b1, g->res[g->chosen].arena, x),
                    bytes_s(b2, sizeof b2, g->session_arena, x));
    }
    fprintf(f, "  %-36s %16s %16s\n", "held at once from prepare", bytes_s(b1, sizeof b1, t.planned, x),
            bytes_s(b2, sizeof b2, t.session, x));
    if (t.run_session > 0 || t.run_planned > 0)
        fprintf(f, "  %-36s %16s %16s\n", "in the first run, at most",
                bytes_s(b1, sizeof b1, t.planned + t.run_planned, x),
                bytes_s(b2, sizeof b2, t.session + t.run_session, x));
    fprintf(f, "  session holds: the arenas the session allocates (its planner, and\n"
               "  XNNPACK's read slack past each arena's end)\n");
    if (again)
        fprintf(f, "  * planned again while running, as its caller's shapes change: the run's\n"
                   "    arenas for it differ from the prepare's\n");
}

void mp_report_plan_text(FILE *f, const mp_plan_report *r)
{
    const bool x = r->exact;
    char b1[64], b2[64];
    fprintf(f, "memprof plan: %s\n", r->model);
    for (int i = 0; i < r->n_inputs; i++) {
        char sh[96];
        fprintf(f, "  input %-20.40s %s\n", r->inputs[i].name, shape_s(&r->inputs[i], sh, sizeof sh));
    }
    if (r->n_subgraphs > 1)
        fprintf(f, "  subgraph 0 %.40s of %" PRId32 " (the others and the total follow)\n",
                sg_name(r), r->n_subgraphs);
    fprintf(f, "  %" PRId32 " tensors and %" PRId32 " kernel scratch buffer%s planned, slots "
               "aligned to %" PRIu64 " B\n",
            r->n_items - r->n_scratch, r->n_scratch, r->n_scratch == 1 ? "" : "s", r->align);
    text_in_place(f, r);
    fprintf(f, "  lower bound %s, naive (no reuse) %s\n\n",
            bytes_s(b1, sizeof b1, r->lower_bound, x), bytes_s(b2, sizeof b2, r->naive, x));
    text_planners(f, r);
    text_bound_and_scratch(f, r);
    if (r->has_peer)
        text_peer(f, r);
    for (int32_t k = 1; k < r->n_subgraphs; k++)
        text_subgraph(f, &r->subs[k - 1]);
    if (r->n_subgraphs > 1)
        text_total(f, r);
}

/* ---- json ---------------------------------------------------------------------------------- */

static json_t *jstr(const char *s)
{
    json_t *v = s ? json_string(s) : NULL;
    return v ? v : json_null(); /* names that are not UTF-8 become null */
}

static json_t *result_json(const mp_plan_report *r, const mp_plan_report_result *p)
{
    return json_pack("{s:s, s:I, s:f, s:f, s:I, s:b, s:b, s:s?}", "name", p->name, "arena_bytes",
                     (json_int_t)p->arena, "ratio_to_bound", ratio(p->arena, r->lower_bound),
                     "ratio_to_naive", ratio(p->arena, r->naive), "time_ns",
                     (json_int_t)p->time_ns, "valid", p->valid, "reaches_bound",
                     p->valid && p->arena == r->lower_bound, "cap", p->cap);
}

static json_t *item_json(const mp_plan_report *r, const mp_plan_report_item *it)
{
    return json_pack("{s:i, s:i, s:o}", "tensor", (int)it->tensor, "op", (int)it->op, "name",
                     jstr(it->tensor >= 0 ? tname(r, it->tensor) : NULL));
}

static json_t *inputs_json(const mp_plan_report *r)
{
    json_t *inputs = json_array();
    for (int i = 0; i < r->n_inputs; i++) {
        json_t *dims = json_array();
        for (int32_t d = 0; d < r->inputs[i].rank; d++)
            json_array_append_new(dims, json_integer(r->inputs[i].dims[d]));
        json_array_append_new(inputs, json_pack("{s:o, s:o}", "name", jstr(r->inputs[i].name),
                                                "shape", dims));
    }
    return inputs;
}

static json_t *plan_json(const mp_plan_report *r)
{
    json_t *slots = json_array();
    for (int32_t k = 0; k < r->n_items; k++) {
        const mp_plan_report_item *it = &r->items[k];
        json_t *s = item_json(r, it);
        json_object_set_new(s, "offset", json_integer((json_int_t)r->chosen_offsets[k]));
        json_object_set_new(s, "bytes", json_integer((json_int_t)it->bytes));
        json_object_set_new(s, "first", json_integer(it->first));
        json_object_set_new(s, "last", json_integer(it->last));
        json_object_set_new(s, "io", json_boolean(it->io));
        json_array_append_new(slots, s);
    }
    json_t *chosen = result_json(r, &r->res[r->chosen]);
    json_object_set_new(chosen, "slots", slots);
    return chosen;
}

static json_t *peer_json(const mp_plan_report *r)
{
    const mp_plan_report_peer *pm = &r->peer;
    if (!pm->ok)
        return json_pack("{s:s, s:s}", "name", "xnnpack", "refused",
                         pm->refused ? pm->refused : "");
    return json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "name", "xnnpack",
                     "workspace_bytes", (json_int_t)pm->workspace, "external_bytes",
                     (json_int_t)pm->external, "other_bytes", (json_int_t)pm->other,
                     "operators_bytes", (json_int_t)pm->operators, "weights_bytes",
                     (json_int_t)pm->weights, "tables_bytes", (json_int_t)pm->tables,
                     "setup_bytes", (json_int_t)pm->setup, "peak_bytes",
                     (json_int_t)pm->peak);
}

static const char *when_word(mp_plan_report_when w)
{
    return w == MP_PRW_PREPARE ? "prepare"
           : w == MP_PRW_AGAIN ? "prepare_and_run"
           : w == MP_PRW_RUN   ? "first_run"
                               : "never";
}

/* The figures of r's buffers, subgraph 0's and every other's alike, set on o: the counts
 * and the bound, then (figures_tail) where it is reached and the planners' results. */
static void figures_head(json_t *o, const mp_plan_report *r)
{
    json_object_set_new(o, "n_tensors", json_integer(r->n_items - r->n_scratch));
    json_object_set_new(o, "n_scratch", json_integer(r->n_scratch));
    json_object_set_new(o, "n_in_place", json_integer(r->n_in_place));
    json_object_set_new(o, "lower_bound_bytes", json_integer((json_int_t)r->lower_bound));
    json_object_set_new(o, "naive_bytes", json_integer((json_int_t)r->naive));
    json_object_set_new(o, "lower_bound_op", json_integer(r->lower_bound_step));
    json_object_set_new(o, "lower_bound_op_name",
                        jstr(r->lower_bound_step >= 0 ? oname(r, r->lower_bound_step) : NULL));
}

static void figures_tail(json_t *o, const mp_plan_report *r)
{
    json_t *alive = json_array();
    for (int32_t i = 0; r->lower_bound_step >= 0 && i < r->n_items; i++) {
        const mp_plan_report_item *it = &r->items[i];
        if (it->first <= r->lower_bound_step && r->lower_bound_step <= it->last && it->bytes > 0) {
            json_t *a = item_json(r, it);
            json_object_set_new(a, "bytes", json_integer((json_int_t)it->bytes));
            json_array_append_new(alive, a);
        }
    }
    json_object_set_new(o, "alive_at_bound", alive);
    json_t *planners = json_array();
    for (int i = 0; i < r->n_res; i++)
        json_array_append_new(planners, result_json(r, &r->res[i]));
    json_object_set_new(o, "planners", planners);
    json_object_set_new(o, "plan", plan_json(r));
    json_object_set_new(o, "scratch",
                        json_pack("{s:I, s:I, s:I}", "largest_bytes", (json_int_t)r->scratch_max,
                                  "apart_arena_bytes", (json_int_t)r->tensors_arena,
                                  "apart_total_bytes",
                                  (json_int_t)(r->tensors_arena + r->scratch_max)));
    json_object_set_new(o, "ours",
                        json_pack("{s:s, s:I, s:I, s:I, s:I}", "planner", r->res[r->chosen].name,
                                  "with_io_bytes", (json_int_t)r->tensors_arena, "without_io_bytes",
                                  (json_int_t)r->internal_arena, "lower_bound_with_io_bytes",
                                  (json_int_t)r->lower_bound_tensors,
                                  "lower_bound_without_io_bytes",
                                  (json_int_t)r->lower_bound_internal));
}

/* Subgraph r (k >= 1): who calls it, when it is planned, its figures when it is. */
static json_t *subgraph_json(const mp_plan_report *r)
{
    json_t *o = json_pack("{s:i, s:o, s:o, s:s, s:I}", "index", (int)r->subgraph, "name",
                          jstr(r->subgraph_name), "called_by", jstr(r->called_by), "planned",
                          when_word(r->when), "session_arena_bytes",
                          (json_int_t)r->session_arena);
    if (o && r->when != MP_PRW_NONE) {
        figures_head(o, r);
        figures_tail(o, r);
    }
    return o;
}

static json_t *total_json(const mp_plan_report *r)
{
    plan_total t = total_of(r);
    return json_pack("{s:s, s:i, s:b, s:I, s:I, s:I, s:I}", "planner", r->res[r->chosen].name,
                     "n_subgraphs", (int)r->n_subgraphs, "held_at_once", true,
                     "prepare_arena_bytes", (json_int_t)t.planned, "prepare_session_bytes",
                     (json_int_t)t.session, "first_run_arena_bytes",
                     (json_int_t)(t.planned + t.run_planned), "first_run_session_bytes",
                     (json_int_t)(t.session + t.run_session));
}

static json_t *build_json(const mp_plan_report *r)
{
    json_t *root = json_pack("{s:s, s:i, s:o, s:I}", "format", "memprof-plan", "version", 3,
                             "model", jstr(r->model), "align_bytes", (json_int_t)r->align);
    if (!root)
        return NULL;
    figures_head(root, r);
    json_object_set_new(root, "inputs", inputs_json(r));
    figures_tail(root, r);
    if (r->has_peer)
        json_object_set_new(root, "peer", peer_json(r));
    json_object_set_new(root, "subgraph_name", jstr(r->subgraph_name));
    json_object_set_new(root, "session_arena_bytes", json_integer((json_int_t)r->session_arena));
    json_t *subs = json_array();
    for (int32_t k = 1; k < r->n_subgraphs; k++)
        json_array_append_new(subs, subgraph_json(&r->subs[k - 1]));
    json_object_set_new(root, "subgraphs", subs);
    json_object_set_new(root, "total", total_json(r));
    return root;
}

mp_status mp_report_plan_json(FILE *f, const mp_plan_report *r, mp_error *err)
{
    json_t *j = build_json(r);
    bool ok = j && json_dumpf(j, f, JSON_INDENT(1) | JSON_PRESERVE_ORDER) == 0;
    fputc('\n', f);
    json_decref(j);
    return ok ? MP_OK : mp_fail(err, MP_ERR_NOMEM, "out of memory writing the plan");
}

/* ---- svg ----------------------------------------------------------------------------------- */

mp_status mp_report_plan_svg(FILE *f, const mp_plan_report *r, mp_error *err)
{
    const mp_plan_report_result *chosen = &r->res[r->chosen];
    mp_arena_slot *v = calloc((size_t)r->n_items + 1, sizeof *v);
    if (!v)
        return mp_fail(err, MP_ERR_NOMEM, "out of memory writing the plan");
    for (int32_t k = 0; k < r->n_items; k++) {
        const mp_plan_report_item *it = &r->items[k];
        v[k] = (mp_arena_slot){.tensor = it->tensor,
                               .name = it->tensor >= 0 ? tname(r, it->tensor) : "scratch",
                               .offset = r->chosen_offsets[k],
                               .bytes = it->bytes,
                               .first_op = it->first,
                               .last_op = it->last,
                               .kind = it->tensor >= 0 ? MP_KIND_STATIC : MP_KIND_SCRATCH};
    }
    mp_arena_report ar;
    memset(&ar, 0, sizeof ar);
    bool ok = mp_arena_report_layout(&ar, chosen->arena, v, (size_t)r->n_items, r->meta->n_ops);
    free(v);
    if (!ok)
        return mp_fail(err, MP_ERR_NOMEM, "out of memory writing the plan");
    ar.lower_bound = r->lower_bound; /* with alignment, as the planners see it */
    ar.lower_bound_op = r->lower_bound_step;
    ar.free_event = UINT64_MAX;
    char title[512];
    snprintf(title, sizeof title, "%s: planner %s, arena %" PRIu64 " bytes (lower bound %" PRIu64
                                  ")",
             r->model, chosen->name, chosen->arena, r->lower_bound);
    mp_svg_arena_document(f, &ar, r->meta, title);
    mp_arena_report_free(&ar);
    return MP_OK;
}
