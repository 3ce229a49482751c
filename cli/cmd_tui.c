/* memprof tui: the interactive terminal timeline of a trace's memory. For a MODEL, runs it
 * the way `memprof run` does (load, shapes, prepare, runs, teardown) with a recorder and
 * shows the recorded trace; for a TRACE saved by `memprof run --trace`, streams it from the
 * file. The index over the events is tui/index.c, the screen and keys tui/screen.c. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/source.h"
#include "cli/call_orders.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "engine/session.h"
#include "tui/index.h"
#include "tui/screen.h"

#define TUI_OPTS (MP_OPT_SHAPE | MP_OPT_SHAPE_AT | MP_OPT_MEMORY | MP_OPT_THREADS | \
                  MP_OPT_RUNS)

static void help(void)
{
    printf("Usage: memprof tui MODEL|TRACE.json [options]\n\n"
           "An interactive timeline of memory in the terminal. For a MODEL (a .tflite file or\n"
           "zoo:NAME) it first runs the model as 'memprof run' does (inputs from the reference\n"
           "formula) and records every allocation; a TRACE.json saved by 'memprof run --trace'\n"
           "is read as is.\n\n"
           "The screen: where the cursor is (event, phase, run, operator, time), the heap\n"
           "and each kind of memory then, and the heap peak; a chart of the heap over the\n"
           "events of the window, one column per slice of events, stacked by kind of memory\n"
           "(each column shows its highest moment: a peak is never averaged away); and\n"
           "what is alive after the cursor's event, largest first.\n\n"
           "Options (MODEL only):\n"
           "  --shape NAME=DIMS    shape of input NAME, e.g. input=1,160,160,3 (repeatable)\n"
           "  --shape-at WHEN      prepare (default), run or each-run, as in 'memprof run'\n"
           "  --memory MODE        auto (default), static or dynamic\n"
           "  --threads N          worker threads (default 1)\n"
           "  -r, --runs N         runs (default 1)\n"
           "  -h, --help           show this help\n\n"
           "Keys:\n");
    for (int i = 0; mp_tui_key_help[i]; i++)
        printf("  %s\n", mp_tui_key_help[i]);
    printf("\nChart characters: # static  @ dynamic  %% scratch  = kernel  ~ io  : engine\n"
           "  . const (mapped, not heap; shown alone with k); colours too where available.\n"
           "A terminal smaller than %dx%d shows \"terminal too small\" until it grows.\n"
           "SIGINT, SIGTERM and SIGHUP restore the terminal before memprof ends.\n\n"
           "Exit codes: 0 ok (q); 2 usage or no terminal; 3 a file cannot be read; 4 malformed\n"
           "model or trace; 5-7 as 'memprof run'.\n\n"
           "Examples:\n"
           "  memprof tui zoo:mobilenet_v2 --runs 3\n"
           "  memprof run zoo:mobilenet_v2 --memory dynamic --trace mnv2.json\n"
           "  memprof tui mnv2.json\n\n"
           "More: docs/tui.md in memprof's sources.\n",
           MP_TUI_MIN_COLS, MP_TUI_MIN_LINES);
}

typedef struct tui_args {
    const char *target;
    mp_model_opts m;         /* --shape, --shape-at, --memory, --threads, --runs */
    bool model_flags;        /* a flag that only applies to a MODEL was given */
} tui_args;

static int parse(int argc, char **argv, tui_args *a)
{
    memset(a, 0, sizeof *a);
    a->m.threads = 1;
    a->m.runs = 1;
    int rc = mp_opts_parse(&(mp_cmd_spec){.cmd = "tui", .help = help, .model = TUI_OPTS,
                                          .m = &a->m, .pos = &a->target, .max_pos = 1,
                                          .missing = "missing MODEL or TRACE"},
                           argc, argv, NULL);
    if (rc != 0)
        return rc;
    a->model_flags = a->m.given != 0;
    return 0;
}

/* A saved trace rather than a model: *.json, or a file that starts with '{'. */
static bool is_trace(const char *path)
{
    if (strncmp(path, "zoo:", 4) == 0)
        return false;
    size_t n = strlen(path);
    if (n >= 5 && strcmp(path + n - 5, ".json") == 0)
        return true;
    if (n >= 7 && strcmp(path + n - 7, ".tflite") == 0)
        return false;
    FILE *f = NULL;
    if (mp_file_in_open(path, &f, NULL) != MP_OK)
        return false; /* the model loader reports it */
    int c;
    while ((c = fgetc(f)) == ' ' || c == '\n' || c == '\r' || c == '\t')
        ;
    fclose(f);
    return c == '{';
}

/* Run the model as the flags say, recording into tr (the session is torn down here, so the
 * teardown is in the trace too). */
static int record(const tui_args *a, mp_trace *tr)
{
    void *bytes = NULL;
    size_t size = 0;
    mp_session *s = NULL;
    mp_shape_args *sp = calloc(1, sizeof *sp);
    mp_cli_inputs *in = calloc(1, sizeof *in);
    if (!sp || !in) {
        free(sp);
        free(in);
        fprintf(stderr, "memprof: out of memory\n");
        return MP_EXIT_RUNTIME;
    }
    mp_session_options so = {.threads = (int)a->m.threads, .mode = a->m.mode, .trace = tr};
    int rc = mp_cli_model_bytes(a->target, &bytes, &size);
    if (rc == MP_EXIT_OK)
        rc = mp_cli_session_open(a->target, bytes, size, &so, &s, NULL);
    if (rc == MP_EXIT_OK)
        rc = mp_cli_collect_shapes(s, "tui", (const char *const *)a->m.shapes, a->m.n_shapes, sp);
    if (rc == MP_EXIT_OK)
        rc = mp_shape_at_check("tui", sp, a->m.at);
    if (rc == MP_EXIT_OK)
        rc = mp_cli_play(s, sp, a->m.at, a->m.runs, in);
    mp_session_destroy(s);
    mp_cli_inputs_release(in);
    free(in);
    free(bytes);
    free(sp);
    return rc;
}

int mp_cmd_tui(int argc, char **argv)
{
    tui_args a;
    int rc = parse(argc, argv, &a);
    if (rc != 0)
        return rc < 0 ? MP_EXIT_OK : rc;
    bool trace_file = is_trace(a.target);
    if (trace_file && a.model_flags)
        return mp_usage_error("tui", "--shape, --memory, --threads and --runs apply to a MODEL, "
                                     "not to a saved trace");

    mp_error err = {0};
    mp_trace *tr = NULL;
    mp_source *src = NULL;
    mp_tui_index *m = NULL;
    if (trace_file) {
        if (mp_source_open(a.target, &src, &err) != MP_OK) {
            rc = mp_report_error(&err);
            goto done;
        }
    } else {
        tr = mp_trace_create();
        if (!tr) {
            fprintf(stderr, "memprof: out of memory\n");
            rc = MP_EXIT_RUNTIME;
            goto done;
        }
        rc = record(&a, tr);
        if (rc != MP_EXIT_OK)
            goto done;
        src = mp_source_of_trace(tr);
        if (!src) {
            fprintf(stderr, "memprof: out of memory\n");
            rc = MP_EXIT_RUNTIME;
            goto done;
        }
    }
    if (mp_tui_index_build(src, NULL, &m, &err) != MP_OK) {
        rc = mp_report_error(&err);
        goto done;
    }
    int got = mp_tui_run(m, a.target, &err);
    if (got < 0)
        rc = mp_report_error(&err);
    else if (got > 0) { /* a signal: clean up, then end by it as if it had not been caught */
        mp_tui_index_free(m);
        mp_source_close(src);
        mp_trace_destroy(tr);
        signal(got, SIG_DFL);
        raise(got);
        return 128 + got;
    }
done:
    mp_tui_index_free(m);
    mp_source_close(src);
    mp_trace_destroy(tr);
    return rc;
}
