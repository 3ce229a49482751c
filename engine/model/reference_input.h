/* Deterministic reference inputs: the formula the shared oracle used to make its inputs
 * (../shared/oracle/README.md), so runs without input files are reproducible and comparable. */
#ifndef MP_REFERENCE_INPUT_H
#define MP_REFERENCE_INPUT_H

#include <stddef.h>

#include "engine/model/model.h"

/* Fill n elements of input number k (subgraph input order). Returns false for dtypes the
 * formula does not define (dst untouched). */
bool mp_reference_input(void *dst, mp_dtype dt, size_t n, int k);

#endif
