/* Kernels: layout family (placeholder until implemented). */
#include "kernel.h"

const mp_kernel mp_kernels_layout[] = {{.opcode = -1}};
