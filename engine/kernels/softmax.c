/* Kernels: softmax family (placeholder until implemented). */
#include "kernel.h"

const mp_kernel mp_kernels_softmax[] = {{.opcode = -1}};
