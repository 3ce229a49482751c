/* Kernels: convert family (placeholder until implemented). */
#include "kernel.h"

const mp_kernel mp_kernels_convert[] = {{.opcode = -1}};
