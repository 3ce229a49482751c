/* .tflite reader (placeholder until implemented). */
#include "model.h"

mp_status mp_model_load_file(const char *path, mp_model **out, mp_error *err)
{
    *out = NULL;
    return mp_fail(err, MP_ERR_UNSUPPORTED, "%s: reader not implemented", path);
}

mp_status mp_model_load_memory(const void *bytes, size_t size, const char *label, mp_model **out,
                               mp_error *err)
{
    (void)bytes; (void)size;
    *out = NULL;
    return mp_fail(err, MP_ERR_UNSUPPORTED, "%s: reader not implemented", label);
}

void mp_model_free(mp_model *m)
{
    (void)m;
}
