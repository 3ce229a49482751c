/* memprof scenarios: not written yet (placeholder so that the command table links). */
#include <stdio.h>

#include "cli.h"

int mp_cmd_scenarios(int argc, char **argv)
{
    fprintf(stderr, "memprof scenarios: not available yet\n");
    return MP_EXIT_UNSUPPORTED;
}
