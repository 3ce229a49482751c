/* Kernels: fc family (placeholder until implemented). */
#include "kernel.h"

const mp_kernel mp_kernels_fc[] = {{.opcode = -1}};
