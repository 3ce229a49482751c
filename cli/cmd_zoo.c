/* memprof zoo: list the built-in models, or write one as a .tflite file. */
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "engine/model/zoo.h"

static void help(void)
{
    printf("Usage: memprof zoo list [--format text|json] [-o FILE]\n"
           "       memprof zoo NAME -o FILE.tflite\n\n"
           "Built-in models with deterministic pseudo-random weights (float32, and\n"
           "mobilenet_v2_int8 quantized as TensorFlow Lite's full-integer post-training\n"
           "quantization writes it), written as real TensorFlow Lite files. 'zoo:NAME' is\n"
           "accepted wherever a model path is.\n\n"
           "Options:\n"
           "  -o, --output FILE   where to write the model (required with NAME), or the\n"
           "                      list (default: standard output)\n"
           "  --format F          the list as text (default) or json (format memprof-zoo,\n"
           "                      docs/json.md)\n"
           "  -h, --help          show this help\n\n"
           "Exit codes: 0 ok; 2 usage (an unknown NAME: the message lists the models); 3 the\n"
           "file cannot be written.\n\n"
           "More: docs/zoo.md in memprof's sources.\n");
}

typedef struct zoo_args {
    const char *out;
    bool json, format_given;
} zoo_args;

static int take(void *ctx, int id, const char *v)
{
    (void)id;
    zoo_args *a = ctx;
    a->format_given = true;
    return mp_opt_text_or_json("zoo", v, &a->json);
}

/* The built-in models as text or JSON (format memprof-zoo), to out or stdout, atomically. */
static int list(const char *out, bool json)
{
    char why[256];
    mp_out o = {.f = stdout};
    /* stdout is written in place (a lost stdout is main's error, exit 3) */
    if (out && !mp_out_open(&o, out, why, sizeof why)) {
        fprintf(stderr, "memprof zoo: cannot write %s: %s\n", out, why);
        return MP_EXIT_IO;
    }
    json_t *root = json ? json_pack("{s:s, s:i, s:[]}", "format", "memprof-zoo", "version", 1,
                                    "models")
                        : NULL;
    bool ok = !json || root;
    for (int i = 0; i < mp_zoo_count() && ok; i++) {
        const mp_zoo_entry *e = mp_zoo_entry_at(i);
        if (json)
            ok = json_array_append_new(json_object_get(root, "models"),
                                       json_pack("{s:s, s:s, s:s+}", "name", e->name,
                                                 "description", e->description, "model",
                                                 "zoo:", e->name)) == 0;
        else
            fprintf(o.f, "%-22s %s\n", e->name, e->description);
    }
    if (json && ok)
        ok = json_dumpf(root, o.f, JSON_INDENT(1) | JSON_PRESERVE_ORDER) == 0 &&
             fputc('\n', o.f) != EOF;
    json_decref(root);
    if (!ok) {
        if (out)
            mp_out_abort(&o);
        fprintf(stderr, "memprof zoo: out of memory writing the list\n");
        return MP_EXIT_RUNTIME;
    }
    if (!out)
        return MP_EXIT_OK;
    if (!mp_out_commit(&o, why, sizeof why)) {
        fprintf(stderr, "memprof zoo: cannot write %s: %s\n", out ? out : "stdout", why);
        return MP_EXIT_IO;
    }
    return MP_EXIT_OK;
}

int mp_cmd_zoo(int argc, char **argv)
{
    const char *name = NULL;
    zoo_args a = {0};
    static const mp_opt opts[] = {{"output", 'o', MP_ARG_STRING, offsetof(zoo_args, out), 0},
                                  {"format", 0, MP_ARG_VALUE, 0, 1},
                                  {0}};
    int rc = mp_opts_parse(&(mp_cmd_spec){.cmd = "zoo", .help = help, .opts = opts,
                                          .take = take, .ctx = &a, .pos = &name,
                                          .max_pos = 1,
                                          .missing = "missing 'list' or a model NAME"},
                           argc, argv, NULL);
    if (rc != 0)
        return rc < 0 ? MP_EXIT_OK : rc;
    const char *out = a.out;
    if (strcmp(name, "list") == 0) {
        mp_cli_files f = {0};
        mp_cli_files_out(&f, out);
        if ((rc = mp_cli_files_check("zoo", &f)) != 0)
            return rc;
        return list(out, a.json);
    }
    if (a.format_given)
        return mp_usage_error("zoo", "--format applies to 'zoo list'");
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
