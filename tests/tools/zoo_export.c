/* Write built-in zoo models as .tflite files, for checking them with other TFLite readers
 * (tests/tools/armnn_zoo.sh). Usage: zoo_export OUT_DIR [NAME...] (default: every model). */
#include <stdio.h>
#include <stdlib.h>

#include "engine/model/zoo.h"

static int export_one(const char *dir, const char *name)
{
    void *bytes;
    size_t size;
    mp_error err;
    if (mp_zoo_build(name, &bytes, &size, &err) != MP_OK) {
        fprintf(stderr, "zoo_export: %s\n", err.msg);
        return 1;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.tflite", dir, name);
    FILE *f = fopen(path, "wb");
    int bad = !f || fwrite(bytes, 1, size, f) != size;
    if (f && fclose(f) != 0)
        bad = 1;
    free(bytes);
    if (bad) {
        fprintf(stderr, "zoo_export: cannot write %s\n", path);
        return 1;
    }
    printf("%s %zu bytes\n", path, size);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: zoo_export OUT_DIR [NAME...]\n");
        return 2;
    }
    int bad = 0;
    if (argc == 2)
        for (int i = 0; i < mp_zoo_count(); i++)
            bad |= export_one(argv[1], mp_zoo_entry_at(i)->name);
    for (int i = 2; i < argc; i++)
        bad |= export_one(argv[1], argv[i]);
    return bad;
}
