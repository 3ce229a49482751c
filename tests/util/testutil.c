/* Implementation of the shared test helpers (see testutil.h). */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *mp_test_shared_dir(void)
{
    static char buf[4096];
    const char *env = getenv("MP_SHARED_DIR");
    snprintf(buf, sizeof buf, "%s", env && *env ? env : MP_SHARED_DIR);
    struct stat st;
    char models[4200];
    snprintf(models, sizeof models, "%s/models", buf);
    if (stat(models, &st) != 0 || !S_ISDIR(st.st_mode))
        return NULL;
    return buf;
}

void mp_test_require_shared(void)
{
    if (!mp_test_shared_dir()) {
        const char *env = getenv("MP_SHARED_DIR");
        printf("SKIP: shared models not found at %s/models (MP_SHARED_DIR chooses the folder)\n",
               env && *env ? env : MP_SHARED_DIR);
        exit(MP_TEST_SKIP);
    }
}

const char *mp_test_path(const char *sub, const char *file)
{
    static char buf[8][4096];
    static int slot;
    char *b = buf[slot++ & 7];
    const char *dir = mp_test_shared_dir();
    snprintf(b, 4096, "%s/%s/%s", dir ? dir : MP_SHARED_DIR, sub, file);
    return b;
}

void *mp_test_read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *p = malloc(n > 0 ? (size_t)n : 1);
    if (p && n > 0 && fread(p, 1, (size_t)n, f) != (size_t)n) {
        free(p);
        p = NULL;
    }
    fclose(f);
    if (p && size)
        *size = (size_t)n;
    return p;
}

double mp_test_max_rel_err(const float *a, const float *b, size_t n, double floor, size_t *at)
{
    double worst = 0;
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        double s = fabs((double)b[i]);
        double e = d / (s > floor ? s : floor);
        if (!(e <= worst)) { /* also catches NaN */
            worst = isnan(e) ? INFINITY : e;
            w = i;
        }
    }
    if (at)
        *at = w;
    return worst;
}
