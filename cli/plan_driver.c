/* memprof plan's driver (see plan_driver.h). */
#include "cli/plan_driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "engine/model/ops.h"

static int32_t bufs_of(mp_plan_buf *b, const mp_plan_item *it, int32_t n, mp_set_kind kind)
{
    int32_t k = 0;
    for (int32_t i = 0; i < n; i++)
        if ((kind == MP_SET_ALL || it[i].tensor >= 0) && (kind != MP_SET_INTERNAL || !it[i].io))
            b[k++] = (mp_plan_buf){it[i].bytes, it[i].first, it[i].last};
    return k;
}

int mp_cli_plan_prepare(mp_plan_ctx *c)
{
    const mp_plan_args *a = c->a;
    mp_error err = {0};
    c->tr = mp_trace_create();
    if (!c->tr) {
        fprintf(stderr, "memprof plan: out of memory\n");
        return MP_EXIT_RUNTIME;
    }
    mp_trace_set_enabled(c->tr, false); /* only the metadata (names) is wanted */
    mp_session_options o = {.threads = 1, .mode = MP_MEMORY_STATIC, .trace = c->tr,
                             .no_in_place = a->m.no_in_place};
    if (mp_session_create(&o, &c->s, &err) != MP_OK || mp_session_load(c->s, a->model, &err) != MP_OK)
        return mp_report_error(&err);
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
    const mp_model *m = mp_session_model(c->s);
    c->n_sets = m->n_subgraphs > 1 ? m->n_subgraphs : 1;
    c->sets = calloc((size_t)c->n_sets, sizeof *c->sets);
    if (!c->sets) {
        fprintf(stderr, "memprof plan: out of memory\n");
        return MP_EXIT_RUNTIME;
    }
    const mp_trace_meta *meta = mp_trace_get_meta(c->tr);
    for (int32_t k = 0, tb = 0; k < c->n_sets; tb += mp_model_subgraph(m, k)->n_tensors, k++) {
        mp_plan_set *p = &c->sets[k];
        p->subgraph = k;
        mp_status st;
        if (k == 0) {
            mp_session_memory mi;
            st = mp_session_plan_items(c->s, &p->items, &p->n_items, &c->align, &err);
            mp_session_memory_info(c->s, &mi);
            p->when = MP_SG_AT_PREPARE;
            p->session_arena = mi.arena_bytes;
        } else {
            st = mp_session_subgraph_plan_items(c->s, k, &p->items, &p->n_items, &p->when,
                                                &p->session_arena, &err);
        }
        if (st != MP_OK)
            return mp_report_error(&err);
        for (int32_t i = 0; i < p->n_items; i++)
            if (p->items[i].tensor < 0) {
                p->n_scratch++;
                if (p->items[i].bytes > p->scratch_max)
                    p->scratch_max = p->items[i].bytes;
            }
        /* tensors in place in a slot of the plan: the trace's meta says which, as the session
         * placed them (subgraph k's tensors from tb in its tables) */
        for (int32_t t = tb; t < tb + mp_model_subgraph(m, k)->n_tensors && t < meta->n_tensors; t++)
            p->n_in_place += meta->tensors[t].in_place;
    }
    return MP_EXIT_OK;
}

/* The planners on subgraph set p (nothing for one nothing is planned for). */
static int compare_set(mp_plan_ctx *c, mp_plan_set *p)
{
    mp_error err = {0};
    if (p->when == MP_SG_NONE)
        return MP_EXIT_OK;
    for (int k = 0; k < 3; k++) {
        p->bufs[k] = malloc(sizeof *p->bufs[k] * ((size_t)p->n_items + 1));
        if (!p->bufs[k]) {
            fprintf(stderr, "memprof plan: out of memory\n");
            return MP_EXIT_RUNTIME;
        }
        p->n_bufs[k] = bufs_of(p->bufs[k], p->items, p->n_items, (mp_set_kind)k);
    }
    p->lb_tensors = mp_plan_lower_bound(p->bufs[MP_SET_TENSORS], p->n_bufs[MP_SET_TENSORS], c->align,
                                        NULL);
    p->lb_internal = mp_plan_lower_bound(p->bufs[MP_SET_INTERNAL], p->n_bufs[MP_SET_INTERNAL],
                                         c->align, NULL);
    const char *name = c->a->m.planner;
    const mp_planner *chosen = name ? mp_planner_find(name) : mp_planner_default();
    if (mp_plan_compare_run(p->bufs[MP_SET_ALL], p->n_bufs[MP_SET_ALL], c->align, chosen, name != NULL,
                            &p->cmp, &err) != MP_OK)
        return mp_report_error(&err);
    /* The other sets only when they differ and are shown: without scratch the tensors are
     * the whole set; without inputs and outputs is for the peer and the JSON. */
    if (p->n_scratch == 0)
        p->tensors_res.arena = p->cmp.res[p->cmp.chosen].arena;
    else if (mp_plan_measure(chosen, p->bufs[MP_SET_TENSORS], p->n_bufs[MP_SET_TENSORS], c->align,
                             &p->tensors_res, &err) != MP_OK)
        return mp_report_error(&err);
    if ((c->a->peer || c->a->format == MP_PFMT_JSON) &&
        mp_plan_measure(chosen, p->bufs[MP_SET_INTERNAL], p->n_bufs[MP_SET_INTERNAL], c->align,
                        &p->internal_res, &err) != MP_OK)
        return mp_report_error(&err);
    return MP_EXIT_OK;
}

/* Who calls each subgraph: its first caller and how many more, into each set's called_by
 * (empty when none); one pass over every operator. */
static void callers(mp_plan_ctx *c)
{
    const mp_model *m = mp_session_model(c->s);
    int *count = calloc((size_t)c->n_sets, sizeof *count);
    if (!count)
        return; /* names left out, nothing wrong */
    for (int32_t g = 0; g < m->n_subgraphs; g++) {
        const mp_model *sg = mp_model_subgraph(m, g);
        for (int32_t i = 0; i < sg->n_ops; i++) {
            const mp_op_info *op = &sg->ops[i];
            if (!mp_op_calls_subgraphs(op->opcode))
                continue;
            for (int32_t q = 0; q < mp_op_n_callees(op); q++) {
                int32_t k = mp_op_callee(op, q);
                if (k <= 0 || k >= c->n_sets || (q == 1 && k == mp_op_callee(op, 0)))
                    continue; /* CALL_ONCE, COMPOSITE keep their one callee in both */
                if (count[k]++ == 0)
                    snprintf(c->sets[k].called_by, sizeof c->sets[k].called_by,
                             "%s (op #%d of subgraph %d)", mp_op_name(op->opcode), (int)i, (int)g);
            }
        }
    }
    for (int32_t k = 1; k < c->n_sets; k++)
        if (count[k] > 1) {
            size_t l = strlen(c->sets[k].called_by);
            snprintf(c->sets[k].called_by + l, sizeof c->sets[k].called_by - l, " and %d more",
                     count[k] - 1);
        }
    free(count);
}

int mp_cli_plan_compare(mp_plan_ctx *c)
{
    callers(c);
    int rc = MP_EXIT_OK;
    for (int32_t k = 0; k < c->n_sets && rc == MP_EXIT_OK; k++)
        rc = compare_set(c, &c->sets[k]);
    return rc;
}

int mp_cli_plan_peer(mp_plan_ctx *c)
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

void mp_cli_plan_free(mp_plan_ctx *c)
{
    for (int32_t i = 0; c->sets && i < c->n_sets; i++) {
        mp_plan_set *p = &c->sets[i];
        mp_plan_compare_free(&p->cmp);
        mp_plan_result_free(&p->tensors_res);
        mp_plan_result_free(&p->internal_res);
        for (int k = 0; k < 3; k++)
            free(p->bufs[k]);
        free(p->items);
    }
    free(c->sets);
    mp_session_destroy(c->s);
    mp_trace_destroy(c->tr);
}
