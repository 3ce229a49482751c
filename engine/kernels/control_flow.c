/* WHILE, IF, STABLEHLO_COMPOSITE and STABLEHLO_CASE: operators that run other subgraphs of the
 * model (TensorFlow Lite's semantics, schema.fbs WhileOptions / IfOptions /
 * StableHLOCompositeOptions / StablehloCaseOptions),
 * through the session's calls (engine/session_call.h).
 *
 * WHILE: its inputs are the initial values of the loop variables, its outputs their final
 * values (as many, same dtypes). Each iteration runs the cond subgraph on the variables (one
 * bool out: false ends the loop), then the body subgraph on them, whose outputs are the next
 * values. When the body keeps every variable's shape (the body, prepared with the input
 * shapes, gives outputs of the same shapes at prepare), the outputs have the inputs' shapes,
 * are planned like any tensor, and hold the variables while the loop runs. Otherwise shapes
 * may change from one iteration to the next: the outputs' shapes are known only after the
 * loop, so the operator is deferred (MP_ERR_DEFERRED) and runs its loop while the session
 * infers it during the run; the variables then live in blocks of the operator's (kind
 * dynamic, owner this operator: no tensor's home, as a kernel's temporaries), sized again
 * whenever a shape changes, and freed once the run has copied them into the outputs.
 *
 * IF: input 0 is the condition (a bool, one element), the others the chosen branch's inputs;
 * its outputs are the branch's outputs. When both branches give outputs of the same shapes at
 * prepare (or the condition is known then and the branch it picks gives fixed shapes) those are
 * the outputs' shapes; otherwise the operator is deferred and runs the branch while inferred.
 * STABLEHLO_COMPOSITE runs as an IF whose one branch, its decomposition subgraph, is always
 * taken, on all its inputs (TensorFlow Lite's stablehlo_composite.cc: the decomposition is the
 * composite's meaning; its name, version and attributes only name it).
 * STABLEHLO_CASE runs as an IF of N branches: input 0 the branch's index (one int32; outside
 * 0..N-1 the last branch, as the StableHLO spec says), the others the branch's inputs
 * (TensorFlow Lite's stablehlo_case.cc).
 *
 * The trace shows every iteration: the cond and body operators' marks carry the iteration.
 * TensorFlow Lite has no bound on a loop; memprof stops a run whose loops, all together, would
 * go past the session's max_iterations (default MP_WHILE_MAX_ITERATIONS, engine/session.h) with
 * an error naming the operator (docs/memory.md, "Control flow"). */
#include <string.h>

#include "engine/kernels/kernel.h"
#include "engine/session_call.h"

typedef struct cf_state {
    bool ready;      /* infer ran the loop or branch (while running): run only copies */
    bool fixed;      /* the outputs' shapes were known at prepare (planned) */
    int32_t branch;  /* IF: the subgraph whose outputs are ready */
    int32_t n_vals;  /* WHILE with changing shapes: the loop variables between iterations */
    mp_tensor *vals;
    mp_tensor **ptrs;
} cf_state;

static cf_state *state(mp_node *n)
{
    return mp_node_state(n, sizeof(cf_state));
}

/* A subgraph's failure, as the node's error (its message names the subgraph and operator). */
static mp_status call_failed(mp_node *n, mp_status st, const mp_error *e)
{
    *n->err = *e;
    return st;
}

static bool same_shape(const mp_tensor *a, const mp_tensor *b)
{
    return a->rank == b->rank && memcmp(a->dims, b->dims, sizeof(int32_t) * (size_t)a->rank) == 0;
}

static bool all_values_known(const mp_node *n)
{
    for (int32_t j = 0; j < n->n_in; j++)
        if (!n->in[j]->value_known || (n->in[j]->bytes && !n->in[j]->data))
            return false;
    return true;
}

static void free_vals(mp_node *n, cf_state *s)
{
    for (int32_t k = 0; k < s->n_vals && s->vals; k++) {
        mp_mem_free(n->mem, s->vals[k].data);
        s->vals[k].data = NULL;
    }
    mp_mem_free(n->mem, s->vals);
    mp_mem_free(n->mem, s->ptrs);
    s->vals = NULL;
    s->ptrs = NULL;
    s->n_vals = 0;
}

static void cf_release(mp_node *n)
{
    cf_state *s = n->state;
    if (!s)
        return;
    free_vals(n, s);
    mp_mem_free(n->mem, s);
    n->state = NULL;
}

/* Give value v (the loop variable k) the shape and bytes of src: its block sized again when
 * the size changed (kind dynamic, owned by this operator). */
static mp_status store_val(mp_node *n, int32_t k, mp_tensor *v, const mp_tensor *src)
{
    if (!mp_tensor_set_shape(v, src->rank, src->dims))
        return mp_node_fail(n, MP_ERR_SHAPE, "loop variable %d: shape too large", (int)k);
    if (!v->data || mp_mem_size(v->data) != v->bytes) {
        mp_mem_free(n->mem, v->data);
        v->data = mp_mem_alloc(n->mem, v->bytes, 0, MP_MEM_DYNAMIC, MP_OWNER_OP(n->index));
        if (!v->data)
            return mp_node_fail(n, MP_ERR_NOMEM, "out of memory for loop variable %d (%zu bytes)",
                                (int)k, v->bytes);
    }
    if (v->bytes)
        memcpy(v->data, src->data, v->bytes);
    return MP_OK;
}

/* ---- WHILE ------------------------------------------------------------------------------ */

/* Run the loop on the variables v[0..n_in) (updated in place); fixed: their shapes never
 * change (the body gives the shapes it takes). */
static mp_status while_loop(mp_node *n, mp_tensor **v, bool fixed)
{
    int32_t cond = n->opt->subgraph_a, body = n->opt->subgraph_b, nv = n->n_in;
    mp_error e;
    mp_status st;
    uint64_t cap;
    for (uint64_t it = 1;; it++) {
        if (!mp_call_next_iteration(n, &cap))
            return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                                "iteration %llu would make the run's loops go past %llu "
                                "iterations (memprof's cap)",
                                (unsigned long long)it, (unsigned long long)cap);
        st = mp_call_run(n, cond, nv, v, it, &e);
        if (st != MP_OK)
            return call_failed(n, st, &e);
        const mp_tensor *c = mp_call_output(n, cond, 0);
        if (mp_tensor_elements(c) != 1 || !c->data)
            return mp_node_fail(n, MP_ERR_SHAPE, "cond subgraph %d gives %zu elements, not one bool",
                                (int)cond, mp_tensor_elements(c));
        if (!*(const uint8_t *)c->data)
            return MP_OK;
        st = mp_call_run(n, body, nv, v, it, &e);
        if (st != MP_OK)
            return call_failed(n, st, &e);
        for (int32_t k = 0; k < nv; k++) {
            const mp_tensor *o = mp_call_output(n, body, k);
            if (fixed) {
                char a[96], b[96];
                if (!same_shape(o, v[k]))
                    return mp_node_fail(n, MP_ERR_SHAPE,
                                        "body subgraph %d gives loop variable %d the shape %s in "
                                        "iteration %llu; it was planned as %s",
                                        (int)body, (int)k, mp_shape_str(o->rank, o->dims, a, sizeof a),
                                        (unsigned long long)it,
                                        mp_shape_str(v[k]->rank, v[k]->dims, b, sizeof b));
                if (o->bytes && o->data != v[k]->data)
                    memcpy(v[k]->data, o->data, o->bytes);
            } else {
                st = store_val(n, k, v[k], o);
                if (st != MP_OK)
                    return st;
            }
        }
    }
}

/* The loop with variables that may change shape: into blocks of the state, from the inputs. */
static mp_status while_run_dynamic(mp_node *n, cf_state *s)
{
    free_vals(n, s);
    size_t nv = (size_t)n->n_in;
    s->vals = mp_mem_calloc(n->mem, sizeof(mp_tensor) * nv, 0, MP_MEM_KERNEL, MP_OWNER_OP(n->index));
    s->ptrs = mp_mem_calloc(n->mem, sizeof(mp_tensor *) * nv, 0, MP_MEM_KERNEL, MP_OWNER_OP(n->index));
    if (!s->vals || !s->ptrs) {
        free_vals(n, s);
        return mp_node_fail(n, MP_ERR_NOMEM, "out of memory for the loop variables");
    }
    s->n_vals = n->n_in;
    mp_status st = MP_OK;
    for (int32_t k = 0; k < n->n_in && st == MP_OK; k++) {
        s->vals[k].index = -1;
        s->vals[k].info = n->in[k]->info;
        s->vals[k].dtype = n->in[k]->dtype;
        s->vals[k].shape_known = s->vals[k].value_known = true;
        s->ptrs[k] = &s->vals[k];
        st = store_val(n, k, &s->vals[k], n->in[k]);
    }
    if (st == MP_OK)
        st = while_loop(n, s->ptrs, false);
    if (st != MP_OK)
        free_vals(n, s);
    return st;
}

static mp_status while_infer(mp_node *n)
{
    cf_state *s = state(n);
    if (!s)
        return MP_ERR_NOMEM;
    s->ready = false;
    free_vals(n, s);
    if (n->n_out != n->n_in)
        return mp_node_fail(n, MP_ERR_FORMAT, "%d inputs but %d outputs", n->n_in, n->n_out);
    for (int32_t k = 0; k < n->n_out; k++)
        n->out[k]->dtype = n->in[k]->dtype;
    int32_t cond = n->opt->subgraph_a, body = n->opt->subgraph_b;
    mp_error e;
    mp_status st = mp_call_prepare(n, cond, n->n_in, n->in, &e);
    if (st == MP_OK)
        st = mp_call_prepare(n, body, n->n_in, n->in, &e);
    if (st != MP_OK)
        return call_failed(n, st, &e);
    bool fixed = true;
    for (int32_t k = 0; k < n->n_in && fixed; k++)
        fixed = !mp_call_output_deferred(n, body, k) && same_shape(mp_call_output(n, body, k), n->in[k]);
    s->fixed = fixed;
    if (fixed) {
        for (int32_t k = 0; k < n->n_out; k++)
            if (!mp_tensor_set_shape(n->out[k], n->in[k]->rank, n->in[k]->dims))
                return mp_node_fail(n, MP_ERR_SHAPE, "output %d: shape too large", (int)k);
        return MP_OK;
    }
    if (!all_values_known(n))
        return MP_ERR_DEFERRED;
    /* while running: the loop tells the outputs' shapes */
    st = while_run_dynamic(n, s);
    if (st != MP_OK)
        return st;
    for (int32_t k = 0; k < n->n_out; k++)
        if (!mp_tensor_set_shape(n->out[k], s->vals[k].rank, s->vals[k].dims))
            return mp_node_fail(n, MP_ERR_SHAPE, "output %d: shape too large", (int)k);
    s->ready = true;
    return MP_OK;
}

static mp_status while_run(mp_node *n)
{
    cf_state *s = state(n);
    if (!s)
        return MP_ERR_NOMEM;
    mp_status st = MP_OK;
    if (!s->ready && s->fixed) {
        /* the outputs hold the variables */
        for (int32_t k = 0; k < n->n_in; k++)
            if (n->out[k]->bytes && n->out[k]->data != n->in[k]->data)
                memcpy(n->out[k]->data, n->in[k]->data, n->out[k]->bytes);
        return while_loop(n, n->out, true);
    }
    if (!s->ready)
        st = while_run_dynamic(n, s);
    for (int32_t k = 0; k < n->n_out && st == MP_OK; k++) {
        char a[96], b[96];
        if (!same_shape(&s->vals[k], n->out[k]))
            st = mp_node_fail(n, MP_ERR_SHAPE, "loop variable %d ends as %s, its output is %s",
                              (int)k, mp_shape_str(s->vals[k].rank, s->vals[k].dims, a, sizeof a),
                              mp_shape_str(n->out[k]->rank, n->out[k]->dims, b, sizeof b));
        else if (n->out[k]->bytes)
            memcpy(n->out[k]->data, s->vals[k].data, n->out[k]->bytes);
    }
    s->ready = false;
    free_vals(n, s);
    return st;
}

/* ---- IF --------------------------------------------------------------------------------- */

static bool is_composite(const mp_node *n)
{
    return n->opcode == MP_OP_STABLEHLO_COMPOSITE;
}

/* Inputs before the branch's: IF's condition; none for a COMPOSITE. */
static int32_t if_skip(const mp_node *n)
{
    return is_composite(n) ? 0 : 1;
}

static bool is_case(const mp_node *n)
{
    return n->opcode == MP_OP_STABLEHLO_CASE;
}

/* The subgraphs the operator may run: IF's then and else, COMPOSITE's decomposition, CASE's
 * branches (the reader checked there is at least one). */
static int32_t n_branches(const mp_node *n)
{
    if (is_case(n))
        return n->opt->shlo ? n->opt->shlo->n_branches : 0;
    return is_composite(n) ? 1 : 2;
}

static int32_t branch_at(const mp_node *n, int32_t q)
{
    if (is_case(n))
        return n->opt->shlo->branches[q];
    return q ? n->opt->subgraph_b : n->opt->subgraph_a;
}

static int32_t if_pick(const mp_node *n)
{
    if (is_composite(n))
        return n->opt->subgraph_a;
    if (is_case(n)) { /* the spec's: an index outside 0..N-1 takes the last branch */
        int32_t k, last = n_branches(n) - 1;
        memcpy(&k, n->in[0]->data, sizeof k);
        return branch_at(n, k < 0 || k > last ? last : k);
    }
    return *(const uint8_t *)n->in[0]->data ? n->opt->subgraph_a : n->opt->subgraph_b;
}

static mp_status if_check_cond(mp_node *n)
{
    if (is_composite(n))
        return MP_OK;
    if (is_case(n)) {
        if (n_branches(n) < 1)
            return mp_node_fail(n, MP_ERR_FORMAT, "it has no branches");
        if (n->in[0]->dtype != MP_DT_INT32 || mp_tensor_elements(n->in[0]) != 1)
            return mp_node_fail(n, MP_ERR_SHAPE, "the branch index '%s' must be one int32, it is %s with %zu elements",
                                mp_tname(n->in[0]), mp_dtype_name(n->in[0]->dtype), mp_tensor_elements(n->in[0]));
        return MP_OK;
    }
    if (n->in[0]->dtype != MP_DT_BOOL || mp_tensor_elements(n->in[0]) != 1)
        return mp_node_fail(n, MP_ERR_SHAPE, "the condition '%s' must be one bool, it has %zu elements",
                            mp_tname(n->in[0]), mp_tensor_elements(n->in[0]));
    return MP_OK;
}

/* Branch b's outputs have fixed shapes (known at prepare). */
static bool branch_fixed(const mp_node *n, int32_t b)
{
    for (int32_t k = 0; k < n->n_out; k++)
        if (mp_call_output_deferred(n, b, k))
            return false;
    return true;
}

static mp_status set_outputs_from(mp_node *n, int32_t b)
{
    for (int32_t k = 0; k < n->n_out; k++) {
        const mp_tensor *o = mp_call_output(n, b, k);
        n->out[k]->dtype = o->dtype;
        if (!mp_tensor_set_shape(n->out[k], o->rank, o->dims))
            return mp_node_fail(n, MP_ERR_SHAPE, "output %d: shape too large", (int)k);
    }
    return MP_OK;
}

static mp_status if_infer(mp_node *n)
{
    cf_state *s = state(n);
    if (!s)
        return MP_ERR_NOMEM;
    s->ready = false;
    mp_status st = if_check_cond(n);
    if (st != MP_OK)
        return st;
    int32_t n_args = n->n_in - if_skip(n);
    mp_tensor *const *args = n->in + if_skip(n);
    mp_error e;
    bool cond_known = is_composite(n) || (n->in[0]->value_known && n->in[0]->data);
    if (cond_known) {
        int32_t pick = if_pick(n);
        st = mp_call_prepare(n, pick, n_args, args, &e);
        if (st != MP_OK)
            return call_failed(n, st, &e);
        if (branch_fixed(n, pick)) {
            s->fixed = true;
            return set_outputs_from(n, pick);
        }
    } else { /* every branch prepared: planned when they all give the same fixed shapes */
        const int32_t nb = n_branches(n), first = branch_at(n, 0);
        for (int32_t q = 0; q < nb && st == MP_OK; q++)
            st = mp_call_prepare(n, branch_at(n, q), n_args, args, &e);
        if (st != MP_OK)
            return call_failed(n, st, &e);
        bool same = true;
        for (int32_t q = 0; q < nb && same; q++) {
            same = branch_fixed(n, branch_at(n, q));
            for (int32_t k = 0; k < n->n_out && same; k++)
                same = same_shape(mp_call_output(n, first, k), mp_call_output(n, branch_at(n, q), k));
        }
        if (same) {
            s->fixed = true;
            return set_outputs_from(n, first);
        }
    }
    s->fixed = false;
    if (!all_values_known(n))
        return MP_ERR_DEFERRED;
    /* while running: the branch tells the outputs' shapes */
    s->branch = if_pick(n);
    st = mp_call_run(n, s->branch, n_args, args, 0, &e);
    if (st != MP_OK)
        return call_failed(n, st, &e);
    s->ready = true;
    return set_outputs_from(n, s->branch);
}

static mp_status if_run(mp_node *n)
{
    cf_state *s = state(n);
    if (!s)
        return MP_ERR_NOMEM;
    mp_status st = if_check_cond(n);
    if (st == MP_OK && !s->ready) {
        mp_error e;
        s->branch = if_pick(n);
        st = mp_call_run(n, s->branch, n->n_in - if_skip(n), n->in + if_skip(n), 0, &e);
        if (st != MP_OK)
            st = call_failed(n, st, &e);
    }
    s->ready = false;
    for (int32_t k = 0; k < n->n_out && st == MP_OK; k++) {
        const mp_tensor *o = mp_call_output(n, s->branch, k);
        char x[96], y[96];
        if (!same_shape(o, n->out[k]))
            st = mp_node_fail(n, MP_ERR_SHAPE, "subgraph %d gives output %d the shape %s; it was planned as %s",
                              (int)s->branch, (int)k, mp_shape_str(o->rank, o->dims, x, sizeof x),
                              mp_shape_str(n->out[k]->rank, n->out[k]->dims, y, sizeof y));
        else if (o->bytes)
            memcpy(n->out[k]->data, o->data, o->bytes);
    }
    return st;
}

const mp_kernel mp_kernels_control_flow[] = {
    {.opcode = MP_OP_WHILE, .min_inputs = 1, .max_inputs = INT32_MAX, .n_outputs = -1,
     .infer = while_infer, .run = while_run, .release = cf_release},
    {.opcode = MP_OP_IF, .min_inputs = 1, .max_inputs = INT32_MAX, .n_outputs = -1,
     .infer = if_infer, .run = if_run, .release = cf_release},
    {.opcode = MP_OP_STABLEHLO_COMPOSITE, .min_inputs = 0, .max_inputs = INT32_MAX, .n_outputs = -1,
     .infer = if_infer, .run = if_run, .release = cf_release},
    {.opcode = MP_OP_STABLEHLO_CASE, .min_inputs = 1, .max_inputs = INT32_MAX, .n_outputs = -1,
     .infer = if_infer, .run = if_run, .release = cf_release},
    {.opcode = -1},
};
