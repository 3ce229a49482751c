/* The process's resident memory, read from /proc/self/status (VmRSS and VmHWM) with plain
 * system calls into a stack buffer: reading it allocates nothing, so samples taken while the
 * heap is measured (memprof run) do not disturb the measurement. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "trace/trace.h"

/* The value in kB of "Key:" in the status text, in bytes; false when absent. */
static bool field_kb(const char *text, const char *key, uint64_t *out)
{
    const char *p = strstr(text, key);
    if (!p)
        return false;
    *out = (uint64_t)strtoull(p + strlen(key), NULL, 10) * 1024;
    return true;
}

bool mp_proc_rss(uint64_t *rss, uint64_t *hwm)
{
    char buf[4096];
    int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    size_t n = 0;
    ssize_t got;
    while (n < sizeof buf - 1 && (got = read(fd, buf + n, sizeof buf - 1 - n)) > 0)
        n += (size_t)got;
    close(fd);
    buf[n] = 0;
    *rss = *hwm = 0;
    return field_kb(buf, "\nVmRSS:", rss) && field_kb(buf, "\nVmHWM:", hwm);
}

void mp_trace_rss_sample(mp_trace *tr)
{
    uint64_t rss, hwm;
    if (tr && mp_proc_rss(&rss, &hwm))
        mp_trace_rss(tr, rss, hwm);
}

void mp_trace_rss_sample_run(mp_trace *tr, long r, long n, uint64_t *last_ns)
{
    if (!tr)
        return;
    uint64_t now = mp_now_ns();
    if (r == 0 || r + 1 >= n || *last_ns == 0 || now - *last_ns >= MP_RSS_PACE_NS) {
        mp_trace_rss_sample(tr);
        *last_ns = now;
    }
}
