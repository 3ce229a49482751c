/* Human units for reports: bytes as B / KiB / MiB / GiB / TiB and durations as ns / us / ms / s,
 * with one decimal. Shared by every report format that prints for people. */
#ifndef MP_UNITS_H
#define MP_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* "512 B", "1.5 KiB", "12.3 MiB" (the unit is chosen so that the number stays below 1024
 * after rounding). Writes at most n bytes (n >= 16 always suffices) and returns buf. */
const char *mp_fmt_bytes(char *buf, size_t n, uint64_t bytes);
/* The same for a signed amount: "-1.5 KiB". */
const char *mp_fmt_sbytes(char *buf, size_t n, int64_t bytes);
/* "850 ns", "12.5 us", "3.2 ms", "1.5 s". Returns buf. */
const char *mp_fmt_ns(char *buf, size_t n, uint64_t ns);

#endif
