/* memprof diff: not written yet (placeholder so that the command table links). */
#include <stdio.h>

#include "cli.h"

int mp_cmd_diff(int argc, char **argv)
{
    fprintf(stderr, "memprof diff: not available yet\n");
    return MP_EXIT_UNSUPPORTED;
}
