/* --fill NAME=VALUE: one value for every element of an input (a sample rate, a sequence length,
 * a flag), parsed once for the input's dtype and range-checked, then written at every fill. */
#ifndef MP_CLI_INPUT_VALUES_H
#define MP_CLI_INPUT_VALUES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/model/model.h"

/* A value for one dtype: d for float32 / float64, i for the signed integers and bool, u for
 * the unsigned ones, text for strings. */
typedef struct mp_fill_value {
    mp_dtype dtype;
    double d;
    int64_t i;
    uint64_t u;
    const char *text;
} mp_fill_value;

/* Parse v as a value of dtype dt: a finite number in float32's or float64's range, an
 * integer within the integer dtype's range (decimal, or 0x hexadecimal), 0 / 1 / true /
 * false for bool, any text for a string. False with a one-line reason in why (the caller
 * names the input and the flag). */
bool mp_fill_parse(mp_dtype dt, const char *v, mp_fill_value *out, char *why, size_t cap);

/* Write the value to n elements at dst (a numeric dtype). */
void mp_fill_apply(void *dst, size_t n, const mp_fill_value *v);

/* A string input: the bytes of TensorFlow Lite's string buffer of n copies of v->text
 * (0 when it would not fit an int32 offset), and that buffer written at dst when dst is not
 * NULL and cap is enough. */
size_t mp_fill_strings(void *dst, size_t cap, size_t n, const mp_fill_value *v);

#endif
