/* memprof zoo: list the built-in models, or write one as a .tflite file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "engine/model/zoo.h"

static void help(void)
{
    printf("Usage: memprof zoo list\n"
           "       memprof zoo NAME -o FILE.tflite\n\n"
           "Built-in models with deterministic pseudo-random weights (float32, and\n"
           "mobilenet_v2_int8 quantized as TensorFlow Lite's full-integer post-training\n"
           "quantization writes it), written as real TensorFlow Lite files. 'zoo:NAME' is\n"
           "accepted wherever a model path is.\n\n"
           "Options:\n"
           "  -o, --output FILE   where to write the model (required with NAME)\n"
           "  -h, --help          show this help\n\n"
           "Exit codes: 0 ok; 2 usage (an unknown NAME: the message lists the models); 3 the\n"
           "file cannot be written.\n\n"
           "More: docs/zoo.md in memprof's sources.\n");
}

int mp_cmd_zoo(int argc, char **argv)
{
    const char *name = NULL, *out = NULL;
    static const mp_opt opts[] = {{"output", 'o', MP_ARG_STRING, 0, 0}, {0}};
    int rc = mp_opts_parse(&(mp_cmd_spec){.cmd = "zoo", .help = help, .opts = opts,
                                          .ctx = &out, .pos = &name,
                                          .max_pos = 1,
                                          .missing = "missing 'list' or a model NAME"},
                           argc, argv, NULL);
    if (rc != 0)
        return rc < 0 ? MP_EXIT_OK : rc;
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
