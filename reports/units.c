/* Human units for reports (see units.h). */
#include "units.h"

#include <inttypes.h>
#include <stdio.h>

const char *mp_fmt_bytes(char *buf, size_t n, uint64_t bytes)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024) {
        snprintf(buf, n, "%" PRIu64 " B", bytes);
        return buf;
    }
    double v = (double)bytes / 1024.0;
    int u = 1;
    /* 1023.96 KiB would print as "1024.0 KiB": move to the next unit instead. */
    while (v >= 1023.95 && u < 6) {
        v /= 1024.0;
        u++;
    }
    snprintf(buf, n, "%.1f %s", v, units[u]);
    return buf;
}

const char *mp_fmt_sbytes(char *buf, size_t n, int64_t bytes)
{
    if (bytes >= 0)
        return mp_fmt_bytes(buf, n, (uint64_t)bytes);
    if (n < 2) {
        if (n == 1)
            buf[0] = '\0';
        return buf;
    }
    buf[0] = '-';
    mp_fmt_bytes(buf + 1, n - 1, (uint64_t)0 - (uint64_t)bytes);
    return buf;
}

const char *mp_fmt_ns(char *buf, size_t n, uint64_t ns)
{
    if (ns < 1000)
        snprintf(buf, n, "%" PRIu64 " ns", ns);
    else if (ns < 999950)
        snprintf(buf, n, "%.1f us", (double)ns / 1e3);
    else if (ns < 999950000)
        snprintf(buf, n, "%.1f ms", (double)ns / 1e6);
    else
        snprintf(buf, n, "%.1f s", (double)ns / 1e9);
    return buf;
}
