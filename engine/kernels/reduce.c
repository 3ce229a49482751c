/* Kernels: reduce family (placeholder until implemented). */
#include "kernel.h"

const mp_kernel mp_kernels_reduce[] = {{.opcode = -1}};
