/* Kernels: unary family (placeholder until implemented). */
#include "kernel.h"

const mp_kernel mp_kernels_unary[] = {{.opcode = -1}};
