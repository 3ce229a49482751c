/* Tests of the FlexBuffers reader (engine/model/flexbuf.c) on hand-built buffers: every scalar
 * type at every byte width, inline and indirect, conversions, a missing key and a null value,
 * and hostile bytes (every truncation, every byte changed, offsets, widths and counts out of
 * range) refused without reading outside the buffer (each case gets a heap copy of exactly its
 * size, so ASan sees any read past it). */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model/flexbuf.h"
#include "tests/util/flex_builder.h"

/* Look key up in the map at the root of buf; asserts the structure is fine. */
static mp_flex_ref lookup(mp_flex_reader *r, const uint8_t *buf, size_t len, const char *key,
                          bool *found)
{
    mp_flex_ref root, v = {0};
    mp_flex_init(r, buf, len);
    assert_true(mp_flex_root(r, &root));
    assert_int_equal(root.type, MP_FLEX_MAP);
    assert_true(mp_flex_map_get(r, &root, key, &v, found));
    return v;
}

static void test_scalars_every_width(void **state)
{
    (void)state;
    static const unsigned widths[4] = {1, 2, 4, 8};
    for (int k = 0; k < 4; k++) {
        unsigned w = widths[k];
        fxb_entry e[] = {
            {"b", MP_FLEX_BOOL, 1, 0, 0},
            {"f", MP_FLEX_FLOAT, 0, -2.5, 0},
            {"i", MP_FLEX_INT, -100, 0, 0},
            {"n", MP_FLEX_NULL, 0, 0, 0},
            {"u", MP_FLEX_UINT, 200, 0, 0},
        };
        int n = w >= 4 ? 5 : 4;
        if (w < 4) /* a float takes 4 or 8 bytes: leave it out of the narrow maps */
            memmove(&e[1], &e[2], sizeof e[0] * 3);
        uint8_t buf[256];
        size_t len = fxb_map(buf, sizeof buf, e, n, w, w);
        mp_flex_reader r;
        bool found;
        int64_t i;
        uint64_t u;
        double d;
        bool b;
        mp_flex_ref v = lookup(&r, buf, len, "i", &found);
        assert_true(found);
        assert_int_equal(v.type, MP_FLEX_INT);
        assert_int_equal(v.parent_width, w);
        assert_true(mp_flex_int(&r, &v, &i));
        assert_int_equal(i, -100);
        assert_true(mp_flex_double(&r, &v, &d));
        assert_true(d == -100.0);
        assert_false(mp_flex_uint(&r, &v, &u)); /* negative */
        assert_non_null(strstr(r.msg, "negative"));
        v = lookup(&r, buf, len, "u", &found);
        assert_true(found && mp_flex_uint(&r, &v, &u) && u == 200);
        assert_true(mp_flex_int(&r, &v, &i) && i == 200);
        v = lookup(&r, buf, len, "b", &found);
        assert_true(found && mp_flex_bool(&r, &v, &b) && b);
        assert_true(mp_flex_int(&r, &v, &i) && i == 1);
        if (w >= 4) {
            v = lookup(&r, buf, len, "f", &found);
            assert_true(found && mp_flex_double(&r, &v, &d) && d == -2.5);
            assert_true(mp_flex_int(&r, &v, &i) && i == -2); /* truncated, as flexbuffers */
            assert_true(mp_flex_bool(&r, &v, &b) && b);
        }
        /* null: found, type null, not a number */
        v = lookup(&r, buf, len, "n", &found);
        assert_true(found);
        assert_int_equal(v.type, MP_FLEX_NULL);
        assert_false(mp_flex_int(&r, &v, &i));
        assert_non_null(strstr(r.msg, "found null"));
        /* missing key: not a fault */
        lookup(&r, buf, len, "nope", &found);
        assert_false(found);
        lookup(&r, buf, len, "", &found);
        assert_false(found);
        size_t count;
        mp_flex_ref root;
        assert_true(mp_flex_root(&r, &root) && mp_flex_map_size(&r, &root, &count));
        assert_int_equal(count, (size_t)n);
    }
}

static void test_indirect(void **state)
{
    (void)state;
    const fxb_entry e[] = {
        {"a", MP_FLEX_INDIRECT_INT, -123456789012LL, 0, 8},
        {"b", MP_FLEX_INDIRECT_UINT, 65000, 0, 2},
        {"c", MP_FLEX_INDIRECT_FLOAT, 0, 0.1, 8},
        {"d", MP_FLEX_INDIRECT_FLOAT, 0, 0.75, 4},
        {"e", MP_FLEX_INDIRECT_INT, -3, 0, 1},
    };
    uint8_t buf[256];
    size_t len = fxb_map(buf, sizeof buf, e, 5, 1, 1);
    mp_flex_reader r;
    bool found;
    int64_t i;
    uint64_t u;
    double d;
    mp_flex_ref v = lookup(&r, buf, len, "a", &found);
    assert_true(found && v.type == MP_FLEX_INDIRECT_INT && v.width == 8);
    assert_true(mp_flex_int(&r, &v, &i));
    assert_true(i == -123456789012LL);
    v = lookup(&r, buf, len, "b", &found);
    assert_true(found && mp_flex_uint(&r, &v, &u) && u == 65000);
    v = lookup(&r, buf, len, "c", &found);
    assert_true(found && mp_flex_double(&r, &v, &d) && d == 0.1);
    v = lookup(&r, buf, len, "d", &found);
    assert_true(found && mp_flex_double(&r, &v, &d) && d == 0.75);
    v = lookup(&r, buf, len, "e", &found);
    assert_true(found && mp_flex_int(&r, &v, &i) && i == -3);
}

static void test_not_a_map(void **state)
{
    (void)state;
    /* root: the int 7 in one byte, packed type INT, width 1 */
    const uint8_t buf[3] = {7, MP_FLEX_INT << 2, 1};
    mp_flex_reader r;
    mp_flex_ref root, v;
    bool found = true;
    int64_t i;
    mp_flex_init(&r, buf, sizeof buf);
    assert_true(mp_flex_root(&r, &root));
    assert_true(mp_flex_int(&r, &root, &i) && i == 7);
    assert_false(mp_flex_map_get(&r, &root, "x", &v, &found));
    assert_false(found);
    assert_non_null(strstr(r.msg, "expected a map, found int"));
    /* a float of 2 bytes is refused */
    const uint8_t f2[4] = {0, 0x3c, MP_FLEX_FLOAT << 2 | 1, 2};
    mp_flex_init(&r, f2, sizeof f2);
    double d;
    assert_true(mp_flex_root(&r, &root));
    assert_false(mp_flex_double(&r, &root, &d));
    assert_non_null(strstr(r.msg, "4 or 8 expected"));
}

/* Read everything reachable from the root of a heap copy of exactly len bytes; the result
 * does not matter, only that nothing outside is read (ASan) and faults have messages. */
static void read_all(const uint8_t *bytes, size_t len)
{
    uint8_t *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    memcpy(copy, bytes, len);
    mp_flex_reader r;
    mp_flex_ref root, v;
    mp_flex_init(&r, copy, len);
    static const char *keys[] = {"b", "f", "i", "n", "u", "a", "zz"};
    if (mp_flex_root(&r, &root)) {
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            bool found = false;
            r.msg[0] = '\0';
            if (!mp_flex_map_get(&r, &root, keys[k], &v, &found)) {
                assert_true(r.msg[0] != '\0');
                continue;
            }
            if (!found)
                continue;
            int64_t i;
            uint64_t u;
            double d;
            bool b;
            (void)mp_flex_int(&r, &v, &i);
            (void)mp_flex_uint(&r, &v, &u);
            (void)mp_flex_double(&r, &v, &d);
            (void)mp_flex_bool(&r, &v, &b);
        }
        size_t n;
        (void)mp_flex_map_size(&r, &root, &n);
    } else {
        assert_true(r.msg[0] != '\0');
    }
    free(copy);
}

static void test_hostile(void **state)
{
    (void)state;
    const fxb_entry e[] = {
        {"a", MP_FLEX_INDIRECT_FLOAT, 0, 3.0, 8},
        {"b", MP_FLEX_BOOL, 0, 0, 0},
        {"f", MP_FLEX_FLOAT, 0, 1.0, 0},
        {"i", MP_FLEX_INT, 42, 0, 0},
    };
    uint8_t buf[256];
    size_t len = fxb_map(buf, sizeof buf, e, 4, 4, 2);
    /* every truncation (the end moves: a different root each time) */
    for (size_t n = 0; n <= len; n++)
        read_all(buf, n);
    /* every byte set to a few hostile values */
    static const uint8_t vals[] = {0, 1, 2, 3, 4, 7, 8, 0x7f, 0x80, 0xfe, 0xff};
    for (size_t p = 0; p < len; p++)
        for (size_t k = 0; k < sizeof vals; k++) {
            uint8_t m[256];
            memcpy(m, buf, len);
            m[p] = vals[k];
            read_all(m, len);
        }
    /* empty and tiny buffers */
    mp_flex_reader r;
    mp_flex_ref root;
    mp_flex_init(&r, NULL, 0);
    assert_false(mp_flex_root(&r, &root));
    assert_non_null(strstr(r.msg, "too short"));
    const uint8_t bad_w[3] = {0, 0, 3};
    mp_flex_init(&r, bad_w, 3);
    assert_false(mp_flex_root(&r, &root));
    assert_non_null(strstr(r.msg, "root byte width 3"));
    const uint8_t big_w[4] = {0, 0, 0, 8};
    mp_flex_init(&r, big_w, 4);
    assert_false(mp_flex_root(&r, &root));
    assert_non_null(strstr(r.msg, "truncated"));
    /* a map offset pointing before the start */
    const uint8_t back[3] = {200, MP_FLEX_MAP << 2, 1};
    mp_flex_ref v;
    bool found;
    mp_flex_init(&r, back, 3);
    assert_true(mp_flex_root(&r, &root));
    assert_false(mp_flex_map_get(&r, &root, "x", &v, &found));
    assert_non_null(strstr(r.msg, "before the start"));
    /* a map claiming a huge size: [keys off][key width][size 0xff] values... */
    uint8_t huge[8] = {0, 1, 0xff, 0, 0, 0, 0, 0};
    huge[5] = 2;                /* root: offset back to byte 3 */
    huge[6] = MP_FLEX_MAP << 2; /* width 1 */
    huge[7] = 1;
    mp_flex_init(&r, huge, 8);
    assert_true(mp_flex_root(&r, &root));
    assert_false(mp_flex_map_get(&r, &root, "x", &v, &found));
    assert_non_null(strstr(r.msg, "past the end"));
    /* keys count differing from the values count */
    uint8_t odd[256];
    memcpy(odd, buf, len);
    mp_flex_init(&r, odd, len);
    assert_true(mp_flex_root(&r, &root));
    size_t n;
    assert_true(mp_flex_map_size(&r, &root, &n) && n == 4);
    /* the keys vector's size sits 4 bytes before the first key offset; find it as the value 4
     * right after the keys (no other 4-byte 4 precedes the map header) and change it */
    for (size_t p = 0; p + 4 <= len; p += 4)
        if (odd[p] == 4 && odd[p + 1] == 0 && odd[p + 2] == 0 && odd[p + 3] == 0) {
            odd[p] = 3;
            break;
        }
    mp_flex_init(&r, odd, len);
    assert_true(mp_flex_root(&r, &root));
    assert_false(mp_flex_map_get(&r, &root, "i", &v, &found));
    assert_non_null(strstr(r.msg, "4 values but 3 keys"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scalars_every_width),
        cmocka_unit_test(test_indirect),
        cmocka_unit_test(test_not_a_map),
        cmocka_unit_test(test_hostile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
