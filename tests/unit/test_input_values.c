/* --fill's values (cli/input_values.c): each dtype's range at its edges (accepted at the
 * limit, refused one past it), hexadecimal and negative integers, bool words, non-finite and
 * trailing-garbage numbers refused with their reasons, the bytes written for each dtype
 * worked out by hand, and a string input's TensorFlow Lite buffer laid out by hand. The
 * module is part of the memprof executable, so this test compiles its source in. */
#include "tests/util/testutil.h"

#include <string.h>

#include "cli/input_values.c"

static bool ok(mp_dtype dt, const char *v, mp_fill_value *out)
{
    char why[160];
    return mp_fill_parse(dt, v, out, why, sizeof why);
}

static void expect_refused(mp_dtype dt, const char *v, const char *reason)
{
    mp_fill_value x;
    char why[160] = "";
    assert_false(mp_fill_parse(dt, v, &x, why, sizeof why));
    if (!strstr(why, reason))
        fail_msg("'%s' as %s: reason '%s' lacks '%s'", v, mp_dtype_name(dt), why, reason);
}

static void test_integer_ranges(void **state)
{
    (void)state;
    mp_fill_value v;
    assert_true(ok(MP_DT_INT8, "-128", &v) && v.i == -128);
    assert_true(ok(MP_DT_INT8, "127", &v) && v.i == 127);
    expect_refused(MP_DT_INT8, "128", "not an integer within");
    expect_refused(MP_DT_INT8, "-129", "not an integer within");
    assert_true(ok(MP_DT_UINT8, "255", &v) && v.u == 255);
    assert_true(ok(MP_DT_UINT8, "0xff", &v) && v.u == 255);
    expect_refused(MP_DT_UINT8, "256", "not an integer within");
    expect_refused(MP_DT_UINT8, "-1", "not an integer within"); /* strtoull would wrap it */
    assert_true(ok(MP_DT_INT16, "-32768", &v) && v.i == -32768);
    expect_refused(MP_DT_INT16, "32768", "within");
    assert_true(ok(MP_DT_INT32, "16000", &v) && v.i == 16000);
    assert_true(ok(MP_DT_INT32, "2147483647", &v) && v.i == 2147483647);
    expect_refused(MP_DT_INT32, "2147483648", "within");
    assert_true(ok(MP_DT_INT64, "-9223372036854775808", &v) && v.i == INT64_MIN);
    expect_refused(MP_DT_INT64, "9223372036854775808", "within"); /* ERANGE */
    assert_true(ok(MP_DT_UINT64, "18446744073709551615", &v) && v.u == UINT64_MAX);
    expect_refused(MP_DT_INT32, "12abc", "within");
    expect_refused(MP_DT_INT32, "", "within");
    expect_refused(MP_DT_INT32, "1.5", "within");
}

static void test_float_and_bool(void **state)
{
    (void)state;
    mp_fill_value v;
    assert_true(ok(MP_DT_FLOAT32, "0.25", &v) && v.d == 0.25);
    assert_true(ok(MP_DT_FLOAT32, "-3e38", &v) && v.d == -3e38);
    expect_refused(MP_DT_FLOAT32, "4e38", "not a finite number"); /* beyond FLT_MAX */
    assert_true(ok(MP_DT_FLOAT64, "4e38", &v) && v.d == 4e38);
    expect_refused(MP_DT_FLOAT32, "nan", "not a finite number");
    expect_refused(MP_DT_FLOAT64, "inf", "not a finite number");
    expect_refused(MP_DT_FLOAT32, "0.5x", "not a finite number");
    assert_true(ok(MP_DT_BOOL, "true", &v) && v.i == 1);
    assert_true(ok(MP_DT_BOOL, "0", &v) && v.i == 0);
    expect_refused(MP_DT_BOOL, "2", "not a bool");
    expect_refused(MP_DT_COMPLEX64, "1", "does not fill this dtype");
}

static void test_bytes(void **state)
{
    (void)state;
    mp_fill_value v;
    float f[3];
    assert_true(ok(MP_DT_FLOAT32, "-1.5", &v));
    mp_fill_apply(f, 3, &v);
    assert_true(f[0] == -1.5f && f[1] == -1.5f && f[2] == -1.5f);
    int8_t i8[2];
    assert_true(ok(MP_DT_INT8, "-7", &v));
    mp_fill_apply(i8, 2, &v);
    assert_true(i8[0] == -7 && i8[1] == -7);
    uint8_t b[4] = {9, 9, 9, 9};
    assert_true(ok(MP_DT_BOOL, "true", &v));
    mp_fill_apply(b, 3, &v);
    assert_memory_equal(b, ((uint8_t[]){1, 1, 1, 9}), 4); /* n elements, not one more */
    int32_t r;
    assert_true(ok(MP_DT_INT32, "16000", &v));
    mp_fill_apply(&r, 1, &v);
    assert_int_equal(r, 16000);
    uint16_t u16[2];
    assert_true(ok(MP_DT_UINT16, "65535", &v));
    mp_fill_apply(u16, 2, &v);
    assert_true(u16[0] == 65535 && u16[1] == 65535);
    int64_t i64;
    assert_true(ok(MP_DT_INT64, "-5", &v));
    mp_fill_apply(&i64, 1, &v);
    assert_true(i64 == -5);
}

/* Two copies of "ab": count 2, offsets 16, 18, 20 (4 + 3 * 4 = 16 bytes of head), then
 * "abab": 20 bytes in all. */
static void test_strings(void **state)
{
    (void)state;
    mp_fill_value v;
    assert_true(ok(MP_DT_STRING, "ab", &v));
    assert_int_equal(mp_fill_strings(NULL, 0, 2, &v), 20);
    uint8_t buf[20];
    assert_int_equal(mp_fill_strings(buf, sizeof buf, 2, &v), 20);
    int32_t head[4];
    memcpy(head, buf, sizeof head);
    assert_true(head[0] == 2 && head[1] == 16 && head[2] == 18 && head[3] == 20);
    assert_memory_equal(buf + 16, "abab", 4);
    assert_true(ok(MP_DT_STRING, "", &v));
    assert_int_equal(mp_fill_strings(NULL, 0, 3, &v), 4 + 4 * 4); /* three empty strings */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_integer_ranges),
        cmocka_unit_test(test_float_and_bool),
        cmocka_unit_test(test_bytes),
        cmocka_unit_test(test_strings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
