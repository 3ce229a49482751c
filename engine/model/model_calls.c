/* The subgraphs an operator calls, whatever options name them: WHILE's cond and body, IF's
 * then and else, CALL_ONCE's init and STABLEHLO_COMPOSITE's decomposition (subgraph_a and
 * subgraph_b), STABLEHLO_CASE's branches (its StableHLO options). One answer for the reader's
 * checks, the session's child subgraphs and the reports. */
#include "engine/model/model.h"

int32_t mp_op_n_callees(const mp_op_info *op)
{
    switch (op->opcode) {
    case MP_OP_WHILE:
    case MP_OP_IF:
        return 2;
    case MP_OP_CALL_ONCE:
    case MP_OP_STABLEHLO_COMPOSITE:
        return 1;
    case MP_OP_STABLEHLO_CASE:
        return op->opt.shlo ? op->opt.shlo->n_branches : 0;
    default:
        return 0;
    }
}

int32_t mp_op_callee(const mp_op_info *op, int32_t q)
{
    if (q < 0 || q >= mp_op_n_callees(op))
        return -1;
    if (op->opcode == MP_OP_STABLEHLO_CASE)
        return op->opt.shlo->branches[q];
    return q == 0 ? op->opt.subgraph_a : op->opt.subgraph_b;
}
