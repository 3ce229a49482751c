/* Kernels: resize family (placeholder until implemented). */
#include "kernel.h"

const mp_kernel mp_kernels_resize[] = {{.opcode = -1}};
