/* The option parser of every memprof command (see options.h): a command's table and the
 * shared model options turned into getopt_long's, getopt's errors turned into memprof's
 * messages, and the model options checked and stored. */
#include "cli/options.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "engine/memory/plan.h"

#define MAX_OPTS 48
#define FIRST_LONG 256 /* getopt_long's value of entry k is FIRST_LONG + k */
#define ID_HELP (-1)

/* The shared model options: id is the MP_OPT_* bit. */
static const mp_opt k_model[] = {
    {"shape", 0, MP_ARG_VALUE, 0, MP_OPT_SHAPE},   {"input", 0, MP_ARG_VALUE, 0, MP_OPT_INPUT},
    {"shape-at", 0, MP_ARG_VALUE, 0, MP_OPT_SHAPE_AT},
    {"memory", 0, MP_ARG_VALUE, 0, MP_OPT_MEMORY}, {"threads", 0, MP_ARG_VALUE, 0, MP_OPT_THREADS},
    {"runs", 'r', MP_ARG_VALUE, 0, MP_OPT_RUNS},   {"warmup", 'w', MP_ARG_VALUE, 0, MP_OPT_WARMUP},
    {"planner", 0, MP_ARG_VALUE, 0, MP_OPT_PLANNER}, {"peer", 0, MP_ARG_VALUE, 0, MP_OPT_PEER},
    {"fill", 0, MP_ARG_VALUE, 0, MP_OPT_FILL},
    {"in-place", 0, MP_ARG_VALUE, 0, MP_OPT_IN_PLACE},
};

typedef struct entry {
    mp_opt o;
    bool model; /* o.id is an MP_OPT_* bit */
} entry;

typedef struct table {
    entry e[MAX_OPTS];
    int n;
    struct option lo[MAX_OPTS + 1];
    char so[2 * MAX_OPTS + 4];
} table;

static void add(table *t, const mp_opt *o, bool model)
{
    if (t->n == MAX_OPTS)
        return;
    t->e[t->n] = (entry){*o, model};
    bool value = o->kind != MP_ARG_FLAG;
    t->lo[t->n] = (struct option){o->name, value ? required_argument : no_argument, NULL,
                                  FIRST_LONG + t->n};
    if (o->letter) {
        size_t l = strlen(t->so);
        t->so[l++] = o->letter;
        if (value)
            t->so[l++] = ':';
        t->so[l] = 0;
    }
    t->n++;
}

static void build(table *t, const mp_cmd_spec *spec)
{
    memset(t, 0, sizeof *t);
    strcpy(t->so, "-:"); /* non-options returned in order; ':' for a missing value */
    for (const mp_opt *o = spec->opts; o && o->name; o++)
        add(t, o, false);
    for (size_t i = 0; i < sizeof k_model / sizeof k_model[0]; i++)
        if (spec->model & (unsigned)k_model[i].id)
            add(t, &k_model[i], true);
    add(t, &(mp_opt){"help", 'h', MP_ARG_FLAG, 0, ID_HELP}, false);
}

/* The entry getopt_long returned as c (a letter or FIRST_LONG + k), or NULL. */
static const entry *find(const table *t, int c)
{
    if (c >= FIRST_LONG && c < FIRST_LONG + t->n)
        return &t->e[c - FIRST_LONG];
    for (int k = 0; k < t->n; k++)
        if (c > 0 && t->e[k].o.letter == c)
            return &t->e[k];
    return NULL;
}

/* How the user wrote the option: "-r" or "--runs". */
static const char *shown(const entry *e, int c, char *b, size_t n)
{
    if (c < FIRST_LONG)
        snprintf(b, n, "-%c", c);
    else
        snprintf(b, n, "--%s", e->o.name);
    return b;
}

/* Take shared model option `opt` (written as o) with value v into m. */
static int take_model(const char *cmd, unsigned accept, unsigned opt, const char *o,
                      const char *v, mp_model_opts *m)
{
    m->given |= opt;
    switch (opt) {
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
    case MP_OPT_FILL:
        if (m->n_fills == MP_MODEL_OPTS_MAX || !strchr(v, '='))
            return mp_usage_error(cmd, "--fill takes NAME=VALUE, got '%s'", v);
        m->fills[m->n_fills++] = v;
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
    case MP_OPT_PLANNER:
        if ((accept & MP_OPT_PLANNER_ALL) && strcmp(v, "all") == 0) {
            m->planner = NULL;
            return 0;
        }
        if (!mp_planner_find(v))
            return mp_usage_error(cmd, "--planner: no planner '%s' (see --help)", v);
        m->planner = v;
        return 0;
    case MP_OPT_IN_PLACE:
        if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0)
            return mp_usage_error(cmd, "--in-place takes on or off, got '%s'", v);
        m->no_in_place = strcmp(v, "off") == 0;
        return 0;
    case MP_OPT_PEER:
        if (strcmp(v, "xnnpack") != 0)
            return mp_usage_error(cmd, "--peer: the only peer is 'xnnpack', not '%s'", v);
        m->peer = true;
        return 0;
    default:
        return mp_usage_error(cmd, "unknown option '%s'", o);
    }
}

int mp_opt_choice(const char *cmd, const char *flag, const char *v, const char *const *words,
                  int *out)
{
    int n = 0;
    for (; words[n]; n++)
        if (strcmp(v, words[n]) == 0) {
            *out = n;
            return 0;
        }
    char list[160] = "";
    for (int i = 0; i < n; i++) {
        size_t l = strlen(list);
        snprintf(list + l, sizeof list - l, "%s%s", i == 0 ? "" : i + 1 < n ? ", " : " or ",
                 words[i]);
    }
    return mp_usage_error(cmd, "%s takes %s, got '%s'", flag, list, v);
}

/* getopt's '?': an unknown option, or a value given to a flag (--exact=1). */
static int unknown(const mp_cmd_spec *spec, const table *t, char **argv)
{
    const entry *e = optopt ? find(t, optopt) : NULL;
    if (e && optopt >= FIRST_LONG)
        return mp_usage_error(spec->cmd, "--%s takes no value", e->o.name);
    if (optopt > 0 && optopt < FIRST_LONG)
        return mp_usage_error(spec->cmd, "unknown option '-%c'", optopt);
    const char *a = argv[optind - 1];
    size_t n = strcspn(a, "=");
    return mp_usage_error(spec->cmd, "unknown option '%.*s'", (int)n, a);
}

static int positional(const mp_cmd_spec *spec, const char *a, int *n_pos)
{
    if (*n_pos >= spec->max_pos)
        return mp_usage_error(spec->cmd, "unexpected argument '%s'%s", a,
                              spec->pos_hint ? spec->pos_hint : "");
    spec->pos[(*n_pos)++] = a;
    return 0;
}

int mp_opts_parse(const mp_cmd_spec *spec, int argc, char **argv, int *n_pos)
{
    int n_own = 0;
    if (!n_pos)
        n_pos = &n_own;
    table t;
    build(&t, spec);
    *n_pos = 0;
    opterr = 0;
    optind = 0; /* glibc: start over, whatever was parsed before */
    int c, rc = 0;
    char name[64];
    while (rc == 0 && (c = getopt_long(argc, argv, t.so, t.lo, NULL)) != -1) {
        if (c == 1) { /* a positional argument, in order */
            rc = positional(spec, optarg, n_pos);
            continue;
        }
        if (c == '?')
            return unknown(spec, &t, argv);
        const entry *e = find(&t, c == ':' ? optopt : c);
        if (!e)
            return mp_usage_error(spec->cmd, "unknown option '%s'", argv[optind - 1]);
        shown(e, c == ':' ? optopt : c, name, sizeof name);
        if (c == ':')
            return mp_usage_error(spec->cmd, "%s needs a value", name);
        if (e->o.id == ID_HELP) {
            spec->help();
            return -1;
        }
        if (e->model)
            rc = take_model(spec->cmd, spec->model, (unsigned)e->o.id, name, optarg, spec->m);
        else if (e->o.kind == MP_ARG_FLAG)
            *(bool *)((char *)spec->ctx + e->o.at) = true;
        else if (e->o.kind == MP_ARG_STRING)
            *(const char **)((char *)spec->ctx + e->o.at) = optarg;
        else
            rc = spec->take(spec->ctx, e->o.id, optarg);
    }
    for (int i = optind; rc == 0 && i < argc; i++) /* after "--" */
        rc = positional(spec, argv[i], n_pos);
    if (rc == 0 && *n_pos == 0 && spec->missing)
        return mp_usage_error(spec->cmd, "%s", spec->missing);
    return rc;
}

int mp_opt_text_or_json(const char *cmd, const char *v, bool *json)
{
    static const char *const words[] = {"text", "json", NULL};
    int f = 0, rc = mp_opt_choice(cmd, "--format", v, words, &f);
    *json = f == 1;
    return rc;
}
