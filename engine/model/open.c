/* Opening a model by its user-facing spec: a .tflite path, or "zoo:NAME" for a built-in one. */
#include <stdlib.h>
#include <string.h>

#include "engine/model/model.h"
#include "engine/model/zoo.h"

mp_status mp_model_open(const char *spec, mp_model **out, mp_error *err)
{
    *out = NULL;
    if (strncmp(spec, "zoo:", 4) != 0)
        return mp_model_load_file(spec, out, err);
    void *bytes = NULL;
    size_t size = 0;
    mp_status st = mp_zoo_build(spec + 4, &bytes, &size, err);
    if (st != MP_OK)
        return st;
    st = mp_model_load_memory(bytes, size, spec, out, err);
    free(bytes);
    return st;
}
