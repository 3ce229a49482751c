/* The model-running options shared by the commands (see model_opts.h). */
#include "cli/model_opts.h"

#include <string.h>

#include "cli/cli.h"

/* Which of MP_OPT_* names o, or 0. */
static unsigned which(unsigned accept, const char *o)
{
    static const struct {
        const char *name;
        unsigned opt;
    } k[] = {{"--shape", MP_OPT_SHAPE},   {"--input", MP_OPT_INPUT},
             {"--shape-at", MP_OPT_SHAPE_AT}, {"--memory", MP_OPT_MEMORY},
             {"--threads", MP_OPT_THREADS}, {"--runs", MP_OPT_RUNS},
             {"--warmup", MP_OPT_WARMUP}};
    if (accept & MP_OPT_SHORT) {
        if (strcmp(o, "-r") == 0)
            return accept & MP_OPT_RUNS;
        if (strcmp(o, "-w") == 0)
            return accept & MP_OPT_WARMUP;
    }
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        if (strcmp(o, k[i].name) == 0)
            return accept & k[i].opt;
    return 0;
}

bool mp_model_opt_is(unsigned accept, const char *o)
{
    return which(accept, o) != 0;
}

int mp_model_opt_take(const char *cmd, unsigned accept, const char *o, const char *v,
                      mp_model_opts *m)
{
    switch (which(accept, o)) {
    case MP_OPT_SHAPE:
        if (m->n_shapes == MP_MODEL_OPTS_MAX || !strchr(v, '='))
            return mp_usage_error(cmd, "--shape takes NAME=DIMS, got '%s'", v);
        m->shapes[m->n_shapes++] = v;
        return 0;
    case MP_OPT_INPUT:
        if (m->n_inputs == MP_MODEL_OPTS_MAX || !strchr(v, '='))
            return mp_usage_error(cmd, "--input takes NAME=FILE, got '%s'", v);
        m->inputs[m->n_inputs++] = v;
        return 0;
    case MP_OPT_SHAPE_AT: {
        int at = mp_shape_at_parse(v);
        if (at < 0)
            return mp_usage_error(cmd, "--shape-at takes prepare, run or each-run, got '%s'", v);
        m->at = (mp_shape_at)at;
        return 0;
    }
    case MP_OPT_MEMORY: {
        int mode = mp_memory_mode_parse(v);
        if (mode < 0)
            return mp_usage_error(cmd, "--memory takes auto, static or dynamic, got '%s'", v);
        m->mode = (mp_memory_mode)mode;
        return 0;
    }
    case MP_OPT_THREADS:
        if (!mp_parse_int(v, 1, 256, &m->threads))
            return mp_usage_error(cmd, "--threads takes 1..256, got '%s'", v);
        return 0;
    case MP_OPT_RUNS:
        if (!mp_parse_int(v, 1, 1000000, &m->runs))
            return mp_usage_error(cmd, "%s takes 1..1000000, got '%s'", o, v);
        return 0;
    case MP_OPT_WARMUP:
        if (!mp_parse_int(v, 0, 1000000, &m->warmup))
            return mp_usage_error(cmd, "%s takes 0..1000000, got '%s'", o, v);
        return 0;
    default:
        return mp_usage_error(cmd, "unknown option '%s'", o);
    }
}
