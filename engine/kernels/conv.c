/* Kernels: conv family (placeholder until implemented). */
#include "kernel.h"

const mp_kernel mp_kernels_conv[] = {{.opcode = -1}};
