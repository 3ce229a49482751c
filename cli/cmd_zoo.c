/* memprof zoo: list the built-in models, or write one as a .tflite file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "engine/model/zoo.h"

static void help(void)
{
    printf("Usage: memprof zoo list\n"
           "       memprof zoo NAME -o FILE.tflite\n\n"
           "Built-in float32 models with deterministic pseudo-random weights, written as real\n"
           "TensorFlow Lite files. 'zoo:NAME' is accepted wherever a model path is.\n\n"
           "Options:\n"
           "  -o, --output FILE   where to write the model (required with NAME)\n"
           "  -h, --help          show this help\n");
}

int mp_cmd_zoo(int argc, char **argv)
{
    const char *name = NULL, *out = NULL;
    for (int i = 1; i < argc; i++) {
        if (mp_is_help(argv[i])) {
            help();
            return MP_EXIT_OK;
        } else if (strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) {
            if (++i >= argc)
                return mp_usage_error("zoo", "%s needs a file name", argv[i - 1]);
            out = argv[i];
        } else if (argv[i][0] == '-') {
            return mp_usage_error("zoo", "unknown option '%s'", argv[i]);
        } else if (!name) {
            name = argv[i];
        } else {
            return mp_usage_error("zoo", "unexpected argument '%s'", argv[i]);
        }
    }
    if (!name)
        return mp_usage_error("zoo", "missing 'list' or a model NAME");
    if (strcmp(name, "list") == 0) {
        for (int i = 0; i < mp_zoo_count(); i++) {
            const mp_zoo_entry *e = mp_zoo_entry_at(i);
            printf("%-22s %s\n", e->name, e->description);
        }
        return MP_EXIT_OK;
    }
    if (!out)
        return mp_usage_error("zoo", "missing -o FILE.tflite for model '%s'", name);
    void *bytes = NULL;
    size_t size = 0;
    mp_error err = {0};
    mp_status st = mp_zoo_build(name, &bytes, &size, &err);
    if (st != MP_OK) {
        if (st == MP_ERR_ARG) /* unknown name: a usage error */
            return mp_usage_error("zoo", "%s", err.msg);
        return mp_report_error(&err);
    }
    char why[256];
    bool ok = mp_write_file_atomic(out, bytes, size, why, sizeof why);
    free(bytes);
    if (!ok) {
        fprintf(stderr, "memprof: cannot write %s: %s\n", out, why);
        return MP_EXIT_IO;
    }
    printf("wrote %s (%zu bytes)\n", out, size);
    return MP_EXIT_OK;
}
