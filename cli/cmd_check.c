/* memprof check: not written yet (placeholder so that the command table links). */
#include <stdio.h>

#include "cli.h"

int mp_cmd_check(int argc, char **argv)
{
    fprintf(stderr, "memprof check: not available yet\n");
    return MP_EXIT_UNSUPPORTED;
}
