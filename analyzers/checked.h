/* Checked sums for the analyzers. A trace's byte counts and times are integers of up to
 * 2^63-1 (the file format's range), so adding them up can wrap (unsigned: a figure such as
 * "16.0 EiB") or overflow (signed: undefined behaviour). Every sum an analyzer keeps goes
 * through mp_sum_add, which refuses a result beyond MP_SUM_MAX; the analyzer then refuses
 * the trace as malformed (MP_ERR_FORMAT, naming the event), so that every figure it reports
 * also fits a signed 64-bit integer (JSON reports, differences, signed changes). */
#ifndef MP_CHECKED_H
#define MP_CHECKED_H

#include <stdbool.h>
#include <stdint.h>

#define MP_SUM_MAX ((uint64_t)INT64_MAX)

/* *acc += v when the result is at most MP_SUM_MAX; else false and *acc unchanged. */
static inline bool mp_sum_add(uint64_t *acc, uint64_t v)
{
    uint64_t s;
    if (__builtin_add_overflow(*acc, v, &s) || s > MP_SUM_MAX)
        return false;
    *acc = s;
    return true;
}

/* *acc - old + v (old <= *acc), under the same rule. */
static inline bool mp_sum_replace(uint64_t *acc, uint64_t old, uint64_t v)
{
    uint64_t rest = *acc - old;
    if (!mp_sum_add(&rest, v))
        return false;
    *acc = rest;
    return true;
}

#endif
