/* memprof: entry point. Dispatches to one subcommand per cli/cmd_*.c file, removes output
 * temporaries when interrupted, and makes a lost standard output an error (exit 3). */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <xnnpack.h>

#include "cli/cli.h"

/* Set by cmake/MemprofInstall.cmake: the project's version, and the XNNPACK built against (its
 * Debian package and version when dpkg knew the library). */
#ifndef MP_VERSION
#define MP_VERSION "0.1.0"
#endif
#ifndef MP_XNNPACK_BUILD
#define MP_XNNPACK_BUILD "(build unknown)"
#endif

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *summary;
} k_cmds[] = {
    {"inspect", mp_cmd_inspect, "show a model's inputs, outputs, operators and tensors"},
    {"run", mp_cmd_run, "run a model, record every allocation, print a memory report"},
    {"pipeline", mp_cmd_pipeline, "run models as a chain: copies or zero copy at every boundary"},
    {"split", mp_cmd_split, "cut a model into parts (valid .tflite files) to run as a chain"},
    {"report", mp_cmd_report, "analyse a saved trace: text, json, svg, html or chrome trace"},
    {"plan", mp_cmd_plan, "lay out a model's tensors with every planner, against the bound"},
    {"bench", mp_cmd_bench, "latency of static, dynamic and auto modes side by side (and a peer)"},
    {"scenarios", mp_cmd_scenarios, "the call orders A-E with given shapes: latency and memory table"},
    {"check", mp_cmd_check, "CI gate: fail when peak memory exceeds limits or a baseline"},
    {"diff", mp_cmd_diff, "what changed between two traces or baselines"},
    {"tui", mp_cmd_tui, "interactive terminal timeline of a model's or trace's memory"},
    {"zoo", mp_cmd_zoo, "list or write the built-in models"},
    {"train", mp_cmd_train, "train a model: its training memory by category, held vs planned"},
};

static void usage(FILE *f)
{
    fprintf(f, "memprof: a memory profiler for neural-network inference (TensorFlow Lite models)\n\n"
               "Usage: memprof COMMAND [ARGS...]\n\nCommands:\n");
    for (size_t i = 0; i < sizeof k_cmds / sizeof k_cmds[0]; i++)
        fprintf(f, "  %-10s %s\n", k_cmds[i].name, k_cmds[i].summary);
    fprintf(f, "\nA MODEL is a .tflite file or zoo:NAME for a built-in model (see 'memprof zoo list').\n"
               "Run 'memprof COMMAND --help' for a command's options; 'memprof -V' (--version)\n"
               "prints the version.\n\n"
               "Exit codes: 0 ok, 1 limit exceeded (check), 2 usage error, 3 file cannot be read\n"
               "or written, 4 malformed model or input, 5 unsupported operator or dtype,\n"
               "6 impossible shape, 7 runtime failure (out of memory, backend); ended by\n"
               "SIGINT, SIGTERM or SIGHUP (130, 143, 129 in a shell) after removing temporaries.\n"
               "More: README.md and docs/ (docs/exit-codes.md) in memprof's sources.\n");
}

/* Everything printed reached standard output (a full disk or a closed file shows only
 * now, when the buffer is flushed): else the command failed whatever it returned. */
static int finish_stdout(int rc)
{
    errno = 0;
    bool lost = fflush(stdout) != 0;
    int e = errno;
    if (ferror(stdout))
        lost = true;
    if (fclose(stdout) != 0 && !lost) {
        lost = true;
        e = errno;
    }
    if (!lost)
        return rc;
    fprintf(stderr, "memprof: cannot write standard output: %s\n", strerror(e ? e : EIO));
    return rc == MP_EXIT_OK || rc == MP_EXIT_GATE ? MP_EXIT_IO : rc;
}

static int dispatch(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return MP_EXIT_USAGE;
    }
    if (mp_is_help(argv[1]) || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return MP_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
        /* the XNNPACK this process runs with: the shared object holding its code */
        Dl_info lib;
        bool found = dladdr((void *)xnn_initialize, &lib) != 0 && lib.dli_fname != NULL;
        printf("memprof %s\nXNNPACK %s, loaded from %s\n", MP_VERSION, MP_XNNPACK_BUILD,
               found ? lib.dli_fname : "(unknown)");
        return MP_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof k_cmds / sizeof k_cmds[0]; i++)
        if (strcmp(argv[1], k_cmds[i].name) == 0)
            return k_cmds[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "memprof: unknown %s '%s'\nTry 'memprof --help'.\n",
            argv[1][0] == '-' ? "option" : "command", argv[1]);
    return MP_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    mp_file_install_signal_cleanup();
    return finish_stdout(dispatch(argc, argv));
}
