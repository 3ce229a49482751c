/* Every planner on every real model: for each zoo model and each shared model memprof can
 * prepare, the buffers its static manager plans (tensors and kernel scratch, from
 * mp_session_plan_items) are laid out by every planner, and each plan must be valid (aligned,
 * inside the arena, no two buffers alive at one operator overlapping: checked by the
 * definition in testutil, independent of mp_plan_check), at least the live-set lower bound
 * (by its definition too), and the default planner never worse than any published one. Skips the
 * shared half with a message when ../shared is absent. */
#include "tests/util/testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/memory/plan.h"
#include "engine/session.h"

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
    uint64_t bound = mp_test_plan_bound(b, n, align, NULL);
    assert_int_equal(mp_plan_lower_bound(b, n, align, NULL), bound);
    uint64_t published = UINT64_MAX, def = 0;
    for (const mp_planner *const *p = mp_planner_list(); *p; p++) {
        uint64_t total = 0;
        assert_int_equal((*p)->plan(b, n, align, off, &total, NULL), MP_OK);
        char what[600];
        snprintf(what, sizeof what, "%s, planner %s", path, (*p)->name);
        if (!mp_test_plan_valid(b, n, align, off, total))
            fail_msg("%s: invalid plan (misaligned, past the arena, or overlapping)", what);
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
    char **names = NULL;
    int seen = mp_test_shared_model_names(&names);
    if (seen == 0) {
        print_message("  skipped: no shared models (MP_SHARED_DIR chooses the folder)\n");
        skip();
    }
    int planned = 0;
    for (int i = 0; i < seen; i++)
        planned += check_model(mp_test_path("models", names[i]));
    mp_test_free_names(names, seen);
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
