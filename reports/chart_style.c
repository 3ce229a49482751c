/* The look of the charts: colours of kinds and managers, the cycled palette and axis ticks
 * in human units (see chart_style.h). */
#include "reports/chart_style.h"

#include <inttypes.h>
#include <stdio.h>

#include "trace/trace.h"

/* ---- colours -------------------------------------------------------------------------------- */

const char *mp_svg_kind_color(int kind)
{
    static const char *c[MP_KIND_COUNT] = {
        [MP_KIND_CONST] = "#F0E442",   /* yellow */
        [MP_KIND_STATIC] = "#0072B2",  /* blue */
        [MP_KIND_DYNAMIC] = "#D55E00", /* vermillion */
        [MP_KIND_SCRATCH] = "#E69F00", /* orange */
        [MP_KIND_KERNEL] = "#009E73",  /* bluish green */
        [MP_KIND_IO] = "#CC79A7",      /* reddish purple */
        [MP_KIND_ENGINE] = "#9A9A9A",  /* grey: bookkeeping */
        [MP_KIND_VARIABLE] = "#56B4E9", /* sky blue: recurrent state */
        /* training categories */
        [MP_KIND_TRAIN_ACTIVATION] = "#0072B2", [MP_KIND_TRAIN_TRAINABLE] = "#F0E442",
        [MP_KIND_TRAIN_BACKPROP] = "#D55E00", [MP_KIND_TRAIN_GRADIENT] = "#E69F00",
        [MP_KIND_TRAIN_OPTIMIZER] = "#CC79A7", [MP_KIND_TRAIN_DISPOSABLE] = "#BBBBBB",
        [MP_KIND_TRAIN_EXTRA] = "#009E73",
    };
    return kind >= 0 && kind < MP_KIND_COUNT ? c[kind] : "#9A9A9A";
}

enum { MGR_COUNT = 6 };

const char *mp_svg_manager_color(int m)
{
    /* Same hues as the kinds they hold: arena = static, dynamic, io, const. */
    static const char *c[MGR_COUNT] = {"#C8C8C8", "#0072B2", "#D55E00",
                                       "#56B4E9", "#CC79A7", "#F0E442"};
    return m >= 0 && m < MGR_COUNT ? c[m] : "#C8C8C8";
}

const char *mp_svg_manager_label(int m)
{
    static const char *n[MGR_COUNT] = {"none", "arena", "dynamic", "own", "io", "const"};
    return m >= 0 && m < MGR_COUNT ? n[m] : "?";
}

const char *mp_svg_cycle_color(size_t i)
{
    static const char *c[10] = {"#4E79A7", "#F28E2B", "#59A14F", "#E15759", "#76B7B2",
                                "#EDC948", "#B07AA1", "#FF9DA7", "#9C755F", "#BAB0AC"};
    return c[i % 10];
}

/* ---- ticks -------------------------------------------------------------------------------- */

uint64_t mp_nice_step(uint64_t max, unsigned target)
{
    if (target == 0)
        target = 1;
    uint64_t raw = max / target + (max % target != 0);
    if (raw <= 1)
        return 1;
    static const uint64_t m[3] = {1, 2, 5};
    for (uint64_t p = 1; p <= UINT64_MAX / 10; p *= 10)
        for (int i = 0; i < 3; i++)
            if (m[i] * p >= raw)
                return m[i] * p;
    return raw;
}

uint64_t mp_nice_bytes_step(uint64_t max, unsigned target)
{
    if (target == 0)
        target = 1;
    uint64_t raw = max / target + (max % target != 0);
    if (raw <= 1)
        return 1;
    static const uint64_t m[9] = {1, 2, 5, 10, 20, 50, 100, 200, 500};
    for (uint64_t u = 1;; u *= 1024) {
        for (int i = 0; i < 9; i++)
            if (m[i] * u >= raw)
                return m[i] * u;
        if (u > UINT64_MAX / 1024 / 1024)
            return raw;
    }
}

const char *mp_svg_fmt_tick(char *buf, size_t n, uint64_t v, uint64_t step)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (v == 0) {
        snprintf(buf, n, "0");
        return buf;
    }
    uint64_t unit = 1;
    int u = 0;
    while (u < 6 && step >= unit * 1024) {
        unit *= 1024;
        u++;
    }
    if (v % unit == 0)
        snprintf(buf, n, "%" PRIu64 " %s", v / unit, units[u]);
    else
        snprintf(buf, n, "%.1f %s", (double)v / (double)unit, units[u]);
    return buf;
}
