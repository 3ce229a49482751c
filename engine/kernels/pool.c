/* Kernels: pool family (placeholder until implemented). */
#include "kernel.h"

const mp_kernel mp_kernels_pool[] = {{.opcode = -1}};
