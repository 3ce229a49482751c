/* memprof plan: lay out a model's tensors (and its kernels' scratch) with every planner and
 * show how each does against the live-set lower bound and against no reuse, where the bound
 * is reached, what planning the scratch apart would cost, and, with --peer xnnpack, how
 * XNNPACK's own runtime plans the same graph; in a model of several subgraphs, the same for
 * every subgraph and how their arenas add up. --format json|svg writes the chosen plan. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "cli/plan_driver.h"
#include "engine/memory/plan.h"
#include "engine/memory/plan_compare.h"
#include "engine/session.h"
#include "peers/xnnpack_runtime.h"
#include "reports/plan_report.h"
#include "trace/trace.h"

static void help(void)
{
    printf("Usage: memprof plan MODEL [options]\n\n"
           "Plans MODEL's tensors (a .tflite file or zoo:NAME) for its input shapes with every\n"
           "planner and prints, per planner: the arena's bytes, its ratio to the live-set\n"
           "lower bound (the most bytes alive at one operator: no plan can be smaller) and to\n"
           "naive (every tensor apart, no reuse), and the planning time (median of repeats).\n"
           "Then where the lower bound is reached (the operator and the tensors alive there),\n"
           "and the kernels' scratch planned with the tensors against planned apart.\n"
           "A model of several subgraphs (WHILE, IF, CALL_ONCE): the same for every subgraph\n"
           "the session plans, then the model's total (their arenas held at once).\n\n"
           "Options:\n"
           "  --shape NAME=DIMS    shape of input NAME (or its index), e.g. input=1,160,160,3\n"
           "  --planner NAME|all   the planner to show (default all); --format json|svg, the\n"
           "                       scratch and the peer sections use this planner's plans\n"
           "                       (with all: the default, %s)\n"
           "  --in-place on|off    on (default): outputs share an input's slot as the\n"
           "                       session runs them (RESHAPE and kin, and elementwise\n"
           "                       ADD/SUB/MUL/DIV, SOFTMAX and DYNAMIC_UPDATE_SLICE on\n"
           "                       an input nobody reads after; 'memprof run --help');\n"
           "                       off: every output planned in its own slot\n"
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

/* --format, the one option with a value of its own to check. */
static int take(void *ctx, int id, const char *v)
{
    static const char *const words[] = {"text", "json", "svg", NULL}; /* as mp_plan_format */
    int f = 0, rc = mp_opt_choice("plan", "--format", v, words, &f);
    (void)id;
    ((mp_plan_args *)ctx)->format = (mp_plan_format)f;
    return rc;
}

static int parse(int argc, char **argv, mp_plan_args *a)
{
    static const mp_opt opts[] = {
        {"format", 0, MP_ARG_VALUE, 0, 1},
        {"output", 'o', MP_ARG_STRING, offsetof(mp_plan_args, out), 0},
        {"exact", 0, MP_ARG_FLAG, offsetof(mp_plan_args, exact), 0}, {0}};
    memset(a, 0, sizeof *a);
    a->m.threads = 1;
    int rc = mp_opts_parse(&(mp_cmd_spec){.cmd = "plan", .help = help, .opts = opts,
                                          .take = take, .ctx = a,
                                          .model = MP_OPT_SHAPE | MP_OPT_THREADS | MP_OPT_PEER |
                                                   MP_OPT_PLANNER | MP_OPT_PLANNER_ALL | MP_OPT_IN_PLACE,
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

/* ---- output -------------------------------------------------------------------------------- */

/* The reports' arrays, one per subgraph, freed together. */
typedef struct report_mem {
    mp_plan_report *reps;
    mp_plan_report_item **items;
    mp_plan_report_result **res;
    mp_plan_report_input *inputs;
    int32_t n;
} report_mem;

static void report_mem_free(report_mem *rm)
{
    for (int32_t k = 0; k < rm->n; k++) {
        free(rm->items ? rm->items[k] : NULL);
        free(rm->res ? rm->res[k] : NULL);
    }
    free(rm->reps);
    free(rm->items);
    free(rm->res);
    free(rm->inputs);
}

/* The report's view of subgraph set k's plan (arrays malloc'd into rm), its first tensor
 * and operator in the trace's tables tb and ob. */
static bool fill_set(const mp_plan_ctx *c, report_mem *rm, int32_t k, int32_t tb, int32_t ob)
{
    const mp_plan_set *p = &c->sets[k];
    const mp_model *m = mp_session_model(c->s);
    const mp_model *g = mp_model_subgraph(m, k);
    mp_plan_report *r = &rm->reps[k];
    mp_plan_report_item *items = calloc((size_t)p->n_items + 1, sizeof *items);
    mp_plan_report_result *res = calloc((size_t)p->cmp.n_res + 1, sizeof *res);
    rm->items[k] = items;
    rm->res[k] = res;
    if (!items || !res)
        return false;
    for (int32_t i = 0; i < p->n_items; i++) {
        const mp_plan_item *it = &p->items[i];
        items[i] = (mp_plan_report_item){it->tensor, it->op, it->bytes, it->first, it->last,
                                         it->io};
    }
    for (int i = 0; i < p->cmp.n_res; i++) {
        const mp_plan_result *q = &p->cmp.res[i];
        res[i] = (mp_plan_report_result){q->planner->name, q->planner->cap,
                                         q->planner == mp_planner_default(), q->valid,
                                         q->why, q->arena, q->time_ns};
    }
    *r = (mp_plan_report){
        .model = c->a->model, .meta = mp_trace_get_meta(c->tr), .exact = c->a->exact,
        .items = items, .n_items = p->n_items,
        .n_scratch = p->n_scratch, .n_in_place = p->n_in_place, .align = c->align,
        .scratch_max = p->scratch_max,
        .lower_bound = p->cmp.lower_bound, .naive = p->cmp.naive,
        .lower_bound_tensors = p->lb_tensors, .lower_bound_internal = p->lb_internal,
        .lower_bound_step = p->cmp.res ? p->cmp.lower_bound_step : -1, .res = res,
        .n_res = p->cmp.n_res, .chosen = p->cmp.chosen,
        .chosen_offsets = p->cmp.res ? p->cmp.res[p->cmp.chosen].offsets : NULL,
        .tensors_arena = p->tensors_res.arena, .internal_arena = p->internal_res.arena,
        .subgraph = k, .n_subgraphs = c->n_sets, .subgraph_name = g->subgraph_name,
        .called_by = p->called_by[0] ? p->called_by : NULL, .tensor_base = tb,
        .op_base = ob, .session_arena = p->session_arena,
        .when = p->when == MP_SG_AT_PREPARE ? MP_PRW_PREPARE
                : p->when == MP_SG_AGAIN    ? MP_PRW_AGAIN
                : p->when == MP_SG_AT_RUN   ? MP_PRW_RUN
                                            : MP_PRW_NONE};
    return true;
}

/* The report's view of the plan: every subgraph's, subgraph 0's with the inputs and the
 * peer (arrays malloc'd into rm; report_mem_free frees them). */
static bool fill_report(const mp_plan_ctx *c, report_mem *rm)
{
    const mp_model *m = mp_session_model(c->s);
    rm->n = c->n_sets;
    rm->reps = calloc((size_t)c->n_sets, sizeof *rm->reps);
    rm->items = calloc((size_t)c->n_sets, sizeof *rm->items);
    rm->res = calloc((size_t)c->n_sets, sizeof *rm->res);
    rm->inputs = calloc((size_t)m->n_inputs + 1, sizeof *rm->inputs);
    if (!rm->reps || !rm->items || !rm->res || !rm->inputs)
        return false;
    /* subgraph k's tensors and operators follow those before it in the trace's tables */
    for (int32_t k = 0, tb = 0, ob = 0; k < c->n_sets; k++) {
        if (!fill_set(c, rm, k, tb, ob))
            return false;
        tb += mp_model_subgraph(m, k)->n_tensors;
        ob += mp_model_subgraph(m, k)->n_ops;
    }
    for (int i = 0; i < m->n_inputs; i++) {
        const mp_tensor *t = mp_session_input(c->s, i);
        rm->inputs[i] = (mp_plan_report_input){t->info->name, t->rank, t->dims};
    }
    mp_plan_report *r = &rm->reps[0];
    const mp_xnn_peer_memory *pm = &c->peer_mem;
    r->inputs = rm->inputs;
    r->n_inputs = m->n_inputs;
    r->subs = rm->reps + 1;
    r->has_peer = c->a->peer;
    r->peer_threads = c->a->m.threads;
    r->peer = (mp_plan_report_peer){c->peer_ok, c->peer_why, pm->workspace_bytes,
                                    pm->external_bytes, pm->other_bytes, pm->operator_bytes,
                                    pm->weights_bytes, pm->tables_bytes, pm->setup_bytes,
                                    pm->peak_bytes};
    return true;
}

static int write_out(const mp_plan_ctx *c)
{
    const mp_plan_args *a = c->a;
    report_mem rm;
    memset(&rm, 0, sizeof rm);
    mp_error err = {0};
    mp_out o;
    char why[256];
    int rc = MP_EXIT_OK;
    if (!fill_report(c, &rm)) {
        fprintf(stderr, "memprof plan: out of memory\n");
        rc = MP_EXIT_RUNTIME;
    } else if (!mp_out_open(&o, a->out, why, sizeof why)) {
        fprintf(stderr, "memprof plan: cannot write %s: %s\n", a->out, why);
        rc = MP_EXIT_IO;
    } else {
        const mp_plan_report *r = &rm.reps[0];
        mp_status st = MP_OK;
        if (a->format == MP_PFMT_TEXT)
            mp_report_plan_text(o.f, r);
        else if (a->format == MP_PFMT_JSON)
            st = mp_report_plan_json(o.f, r, &err);
        else
            st = mp_report_plan_svg(o.f, r, &err);
        if (st != MP_OK) {
            mp_out_abort(&o);
            fprintf(stderr, "memprof plan: out of memory writing the output\n");
            rc = MP_EXIT_RUNTIME;
        } else if (!mp_out_commit(&o, why, sizeof why)) {
            fprintf(stderr, "memprof plan: cannot write %s: %s\n", a->out ? a->out : "stdout",
                    why);
            rc = MP_EXIT_IO;
        }
    }
    report_mem_free(&rm);
    return rc;
}

/* ---- main ---------------------------------------------------------------------------------- */

int mp_cmd_plan(int argc, char **argv)
{
    mp_plan_args a;
    int rc = parse(argc, argv, &a);
    if (rc != 0)
        return rc < 0 ? MP_EXIT_OK : rc;
    mp_plan_ctx c;
    memset(&c, 0, sizeof c);
    c.a = &a;
    rc = mp_cli_plan_prepare(&c);
    if (rc == MP_EXIT_OK)
        rc = mp_cli_plan_compare(&c);
    if (rc == MP_EXIT_OK && a.peer)
        rc = mp_cli_plan_peer(&c);
    if (rc == MP_EXIT_OK) {
        rc = write_out(&c);
        if (rc == MP_EXIT_OK && a.peer && !c.peer_ok) {
            fprintf(stderr, "memprof plan: --peer xnnpack: %s\n", c.peer_why);
            rc = MP_EXIT_UNSUPPORTED;
        }
    }
    mp_cli_plan_free(&c);
    return rc;
}
