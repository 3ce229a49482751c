/* Built-in model zoo: standard float32 architectures (an MNIST MLP, MobileNet v1 and v2) and
 * MobileNet v2 quantized to int8 as TensorFlow Lite's post-training quantization writes it,
 * generated as .tflite bytes with deterministic pseudo-random weights, so memprof can be
 * run and tested on realistic graphs without any model file.
 *
 * The weights are not trained: they follow He/Glorot-style scaling from a fixed-seed PRNG,
 * so activations stay in a sane range and the softmax output is a proper distribution,
 * but predictions mean nothing. The same name always builds the same bytes. */
#ifndef MP_ZOO_H
#define MP_ZOO_H

#include <stddef.h>

#include "trace/status.h"

typedef struct mp_zoo_entry {
    const char *name;          /* "mobilenet_v2" */
    const char *description;   /* one line */
} mp_zoo_entry;

/* Number of built-in models, and entry i (NULL when out of range). */
int mp_zoo_count(void);
const mp_zoo_entry *mp_zoo_entry_at(int i);

/* Build the named model. On success *bytes (malloc'd; the caller free()s it) holds a
 * .tflite file of *size bytes. Unknown name: MP_ERR_ARG with the known names in the
 * message; MP_ERR_NOMEM when out of memory. */
mp_status mp_zoo_build(const char *name, void **bytes, size_t *size, mp_error *err);

#endif
