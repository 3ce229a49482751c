/* Byte sizes and tolerances on the command line ("12MiB", "800KB", "1.5GiB", "4096", "5%"),
 * for the limits of memprof check. */
#ifndef MP_CLI_SIZES_H
#define MP_CLI_SIZES_H

#include <stdbool.h>
#include <stdint.h>

#include "analyzers/gate.h"

/* A size: a decimal number (at most 6 digits after the point) and an optional unit, case
 * insensitive: B, KB / MB / GB / TB (powers of 1000), KiB / MiB / GiB / TiB (powers of
 * 1024). "1.5MiB" = 1572864. Rounded to the nearest byte; false when malformed or too big. */
bool mp_parse_size(const char *s, uint64_t *out);

/* A tolerance: "5%" (a percentage of the baseline's figure, decimals allowed, 0..1000) or a
 * size as mp_parse_size. */
bool mp_parse_tolerance(const char *s, mp_tolerance *out);

#endif
