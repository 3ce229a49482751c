/* Kernels: shape family (placeholder until implemented). */
#include "kernel.h"

const mp_kernel mp_kernels_shape[] = {{.opcode = -1}};
