/* Independent measurement of the process heap, for `memprof run`'s "unaccounted" line.
 * heap_probe.c interposes malloc and friends in the memprof executable and keeps the live
 * requested heap bytes and their peak, so the engine allocator's own peak (mem.c) can be
 * compared with everything the process allocated (cpuinfo, pthreadpool, libc, ...).
 * In sanitizer builds the sanitizer owns malloc: no interposer is compiled, the probe is
 * "not available" and the other queries return 0. */
#ifndef MP_HEAP_PROBE_H
#define MP_HEAP_PROBE_H

#include <stdbool.h>
#include <stdint.h>

/* 1 when heap_probe.c compiles its malloc interposer (not under a sanitizer, nor when the
 * build defines it 0: cmake -DMP_HEAP_PROBE=OFF, for a binary whose malloc an outside heap
 * profiler such as heaptrack interposes, scripts/heap_vs_heaptrack.sh). */
#ifndef MP_HEAP_PROBE_ENABLED
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || \
    defined(__SANITIZE_HWADDRESS__)
#define MP_HEAP_PROBE_ENABLED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer) || __has_feature(hwaddress_sanitizer)
#define MP_HEAP_PROBE_ENABLED 0
#endif
#endif
#ifndef MP_HEAP_PROBE_ENABLED
#define MP_HEAP_PROBE_ENABLED 1
#endif
#endif

/* True when the interposer is compiled in AND actually receives this process's malloc calls
 * (false in sanitizer builds, or when a tool such as valgrind replaced our malloc). */
bool mp_heap_probe_available(void);
/* Bytes (as requested by the callers) live in the process heap now. */
uint64_t mp_heap_probe_live(void);
/* Start a new high-water mark: peak := live. */
void mp_heap_probe_reset_peak(void);
/* Highest live value since the last reset (or since process start). */
uint64_t mp_heap_probe_peak(void);

#endif
