/* Kernels: binary family (placeholder until implemented). */
#include "kernel.h"

const mp_kernel mp_kernels_binary[] = {{.opcode = -1}};
