/* Every planner on every real model: for each zoo model and each shared model memprof can
 * prepare, the buffers its static manager plans (tensors and kernel scratch, from
 * mp_session_plan_items) are laid out by every planner, and each plan must be valid (aligned,
 * inside the arena, no two buffers alive at one operator overlapping: checked here by a
 * sweep of our own, independent of mp_plan_check), at least the live-set lower bound
 * (computed here too), and the default planner never worse than any published one. Skips the
 * shared half with a message when ../shared is absent. */
#include "testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/memory/plan.h"
#include "engine/session.h"

/* The lower bound by brute force: at every step, the aligned bytes of the buffers alive. */
static uint64_t bound_of(const mp_plan_buf *b, int32_t n, uint64_t align)
{
    int32_t steps = 0;
    for (int32_t i = 0; i < n; i++)
        if (b[i].last + 1 > steps)
            steps = b[i].last + 1;
    uint64_t best = 0;
    for (int32_t s = 0; s < steps; s++) {
        uint64_t sum = 0;
        for (int32_t i = 0; i < n; i++)
            if (b[i].first <= s && s <= b[i].last)
                sum += (b[i].size + align - 1) / align * align;
        if (sum > best)
            best = sum;
    }
    return best;
}

/* No two buffers alive at a common step share a byte; all aligned and inside total. */
static void expect_valid(const char *what, const mp_plan_buf *b, int32_t n, uint64_t align,
                         const uint64_t *off, uint64_t total)
{
    for (int32_t i = 0; i < n; i++) {
        if (off[i] % align)
            fail_msg("%s: buffer %d at %llu is not %llu-aligned", what, i,
                     (unsigned long long)off[i], (unsigned long long)align);
        if (off[i] + b[i].size > total)
            fail_msg("%s: buffer %d ends past the arena", what, i);
        for (int32_t j = i + 1; j < n; j++) {
            bool together = b[i].first <= b[j].last && b[j].first <= b[i].last;
            bool overlap = off[i] < off[j] + b[j].size && off[j] < off[i] + b[i].size &&
                           b[i].size > 0 && b[j].size > 0;
            if (together && overlap)
                fail_msg("%s: buffers %d and %d overlap while both alive", what, i, j);
        }
    }
}

/* Plan one model with every planner; false when memprof cannot prepare it. */
static bool check_model(const char *path)
{
    mp_session_options o = {.mode = MP_MEMORY_STATIC};
    mp_session *s = NULL;
    mp_error err = {0};
    assert_int_equal(mp_session_create(&o, &s, &err), MP_OK);
    mp_plan_item *items = NULL;
    int32_t n = 0;
    uint64_t align = 0;
    if (mp_session_load(s, path, &err) != MP_OK ||
        mp_session_plan_items(s, &items, &n, &align, &err) != MP_OK) {
        mp_session_destroy(s);
        return false;
    }
    mp_plan_buf *b = calloc((size_t)n + 1, sizeof *b);
    uint64_t *off = calloc((size_t)n + 1, sizeof *off);
    assert_true(b && off);
    for (int32_t i = 0; i < n; i++)
        b[i] = (mp_plan_buf){items[i].bytes, items[i].first, items[i].last};
    uint64_t bound = bound_of(b, n, align);
    assert_int_equal(mp_plan_lower_bound(b, n, align, NULL), bound);
    uint64_t published = UINT64_MAX, def = 0;
    for (const mp_planner *const *p = mp_planner_list(); *p; p++) {
        uint64_t total = 0;
        assert_int_equal((*p)->plan(b, n, align, off, &total, NULL), MP_OK);
        char what[600];
        snprintf(what, sizeof what, "%s, planner %s", path, (*p)->name);
        expect_valid(what, b, n, align, off, total);
        if (total < bound)
            fail_msg("%s: arena %llu below the lower bound %llu", what,
                     (unsigned long long)total, (unsigned long long)bound);
        if (!strcmp((*p)->name, "greedy") || !strcmp((*p)->name, "firstfit") ||
            !strcmp((*p)->name, "breadth"))
            published = total < published ? total : published;
        if (*p == mp_planner_default())
            def = total;
    }
    if (def > published)
        fail_msg("%s: default planner %llu is worse than a published one (%llu)", path,
                 (unsigned long long)def, (unsigned long long)published);
    free(b);
    free(off);
    free(items);
    mp_session_destroy(s);
    return true;
}

static void test_zoo_models(void **state)
{
    (void)state;
    const char *zoo[] = {"zoo:mnist_mlp", "zoo:mobilenet_v1", "zoo:mobilenet_v2",
                         "zoo:mobilenet_v2_dynamic"};
    for (size_t i = 0; i < sizeof zoo / sizeof zoo[0]; i++)
        assert_true(check_model(zoo[i]));
}

static void test_shared_models(void **state)
{
    (void)state;
    const char *shared = mp_test_shared_dir();
    if (!shared) {
        print_message("  skipped: ../shared is absent\n");
        skip();
    }
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/models", shared);
    DIR *d = opendir(dir);
    if (!d) {
        print_message("  skipped: %s is absent\n", dir);
        skip();
    }
    int planned = 0, seen = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        size_t len = strlen(de->d_name);
        if (len <= 7 || strcmp(de->d_name + len - 7, ".tflite") != 0)
            continue;
        char path[4608]; /* dir + "/" + a d_name of up to 255 bytes */
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        seen++;
        planned += check_model(path);
    }
    closedir(d);
    print_message("  %d of %d shared models planned by every planner\n", planned, seen);
    assert_true(planned > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zoo_models),
        cmocka_unit_test(test_shared_models),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
