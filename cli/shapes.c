/* Input arguments shared by the commands that run a model: NAME=VALUE resolved to an input,
 * and --shape NAME=DIMS grouped by input and applied to a session. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

int mp_cli_resolve_input(mp_session *s, const char *cmd, const char *arg, const char **value,
                         const char *flag)
{
    const char *eq = strrchr(arg, '=');
    char name[512];
    size_t n = eq ? (size_t)(eq - arg) : strlen(arg);
    if (n >= sizeof name)
        n = sizeof name - 1;
    memcpy(name, arg, n);
    name[n] = 0;
    *value = eq ? eq + 1 : "";
    int idx = mp_session_find_input(s, name);
    if (idx < 0) {
        fprintf(stderr, "memprof %s: %s: the model has no input '%s' (inputs:", cmd, flag, name);
        for (int i = 0; i < mp_session_input_count(s); i++)
            fprintf(stderr, " %s", mp_session_input(s, i)->info->name);
        fprintf(stderr, ")\n");
    }
    return idx < MP_CLI_MAX_INPUTS ? idx : -1;
}

int mp_cli_collect_shapes(mp_session *s, const char *cmd, const char *const *specs, int n,
                          mp_shape_args *sp)
{
    memset(sp->n, 0, sizeof sp->n);
    for (int i = 0; i < n; i++) {
        const char *dims_s;
        int idx = mp_cli_resolve_input(s, cmd, specs[i], &dims_s, "--shape");
        if (idx < 0)
            return MP_EXIT_USAGE;
        if (sp->n[idx] >= MP_CLI_MAX_SHAPES)
            return mp_usage_error(cmd, "--shape: more than %d shapes for input %d",
                                  MP_CLI_MAX_SHAPES, idx);
        int r = mp_parse_dims(dims_s, sp->dims[idx][sp->n[idx]], MP_MAX_RANK);
        if (r < 0)
            return mp_usage_error(cmd, "--shape: '%s' is not a list of positive dimensions "
                                       "like 1,224,224,3", dims_s);
        sp->rank[idx][sp->n[idx]++] = r;
    }
    return MP_EXIT_OK;
}

int mp_cli_apply_shape(mp_session *s, const mp_shape_args *sp, int k, int j)
{
    mp_error err = {0};
    int c = j % sp->n[k];
    if (mp_session_set_input_shape(s, k, sp->rank[k][c], sp->dims[k][c], &err) != MP_OK)
        return mp_report_error(&err);
    return MP_EXIT_OK;
}
