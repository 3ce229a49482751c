/* Byte sizes and tolerances on the command line (see sizes.h). */
#include "cli/sizes.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct unit {
    const char *name;
    uint64_t mult;
} unit;

static const unit units[] = {
    {"", 1},
    {"b", 1},
    {"kb", 1000ull},
    {"mb", 1000ull * 1000},
    {"gb", 1000ull * 1000 * 1000},
    {"tb", 1000ull * 1000 * 1000 * 1000},
    {"kib", 1ull << 10},
    {"mib", 1ull << 20},
    {"gib", 1ull << 30},
    {"tib", 1ull << 40},
};

/* Digits before and after an optional point: *ip, *fp (fraction digits *fd, at most 6);
 * returns the end, or NULL when there is no digit or too many. */
static const char *parse_decimal(const char *s, uint64_t *ip, uint64_t *fp, int *fd)
{
    uint64_t i = 0, f = 0;
    int nd = 0, n_frac = 0;
    while (isdigit((unsigned char)*s)) {
        uint64_t d = (uint64_t)(*s++ - '0');
        if (i > UINT64_MAX / 10 || (i == UINT64_MAX / 10 && d > UINT64_MAX % 10))
            return NULL;
        i = i * 10 + d;
        nd++;
    }
    if (*s == '.') {
        s++;
        while (isdigit((unsigned char)*s)) {
            if (n_frac == 6)
                return NULL;
            f = f * 10 + (uint64_t)(*s++ - '0');
            n_frac++;
            nd++;
        }
    }
    if (nd == 0)
        return NULL;
    *ip = i;
    *fp = f;
    *fd = n_frac;
    return s;
}

bool mp_parse_size(const char *s, uint64_t *out)
{
    if (!s)
        return false;
    uint64_t ip, fp;
    int fd;
    const char *end = parse_decimal(s, &ip, &fp, &fd);
    if (!end)
        return false;
    for (size_t k = 0; k < sizeof units / sizeof units[0]; k++) {
        if (strcasecmp(end, units[k].name) != 0)
            continue;
        uint64_t m = units[k].mult, scale = 1;
        for (int d = 0; d < fd; d++)
            scale *= 10;
        if (ip > UINT64_MAX / m)
            return false;
        /* fp < 10^6 and m <= 2^40: fp * m stays below 2^60 */
        uint64_t whole = ip * m, frac = (fp * m + scale / 2) / scale;
        if (whole > UINT64_MAX - frac)
            return false;
        *out = whole + frac;
        return true;
    }
    return false;
}

bool mp_parse_tolerance(const char *s, mp_tolerance *out)
{
    if (!s)
        return false;
    size_t n = strlen(s);
    if (n > 1 && s[n - 1] == '%') {
        uint64_t ip, fp;
        int fd;
        const char *end = parse_decimal(s, &ip, &fp, &fd);
        if (!end || end != s + n - 1 || ip > 1000)
            return false;
        double pct = (double)ip;
        double scale = 1;
        for (int d = 0; d < fd; d++)
            scale *= 10;
        pct += (double)fp / scale;
        if (pct > 1000)
            return false;
        out->percent = true;
        out->pct = pct;
        out->bytes = 0;
        return true;
    }
    uint64_t b;
    if (!mp_parse_size(s, &b))
        return false;
    out->percent = false;
    out->pct = 0;
    out->bytes = b;
    return true;
}
