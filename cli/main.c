/* memprof entry point (placeholder until the CLI lands). */
#include <stdio.h>

int main(void)
{
    puts("memprof");
    return 0;
}
