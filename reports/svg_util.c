/* Text escaping, colours and axis ticks shared by the picture renderers (see svg_util.h). */
#include "reports/svg_util.h"

#include <inttypes.h>
#include <stdbool.h>

#include "trace/trace.h"

size_t mp_utf8_next(const char *str, uint32_t *cp)
{
    const unsigned char *s = (const unsigned char *)str;
    unsigned char c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t len;
    uint32_t v, min;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
        v = c & 0x1F;
        min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        v = c & 0x0F;
        min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        v = c & 0x07;
        min = 0x10000;
    } else {
        *cp = 0xFFFD; /* continuation byte, C0, C1 (overlong) or F5..FF */
        return 1;
    }
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) { /* also stops at the NUL */
            *cp = 0xFFFD;
            return 1;
        }
        v = (v << 6) | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) {
        *cp = 0xFFFD;
        return 1;
    }
    *cp = v;
    return len;
}

static void put_utf8(FILE *f, uint32_t cp)
{
    if (cp < 0x80) {
        fputc((int)cp, f);
    } else if (cp < 0x800) {
        fputc((int)(0xC0 | (cp >> 6)), f);
        fputc((int)(0x80 | (cp & 0x3F)), f);
    } else if (cp < 0x10000) {
        fputc((int)(0xE0 | (cp >> 12)), f);
        fputc((int)(0x80 | ((cp >> 6) & 0x3F)), f);
        fputc((int)(0x80 | (cp & 0x3F)), f);
    } else {
        fputc((int)(0xF0 | (cp >> 18)), f);
        fputc((int)(0x80 | ((cp >> 12) & 0x3F)), f);
        fputc((int)(0x80 | ((cp >> 6) & 0x3F)), f);
        fputc((int)(0x80 | (cp & 0x3F)), f);
    }
}

/* Characters that may not appear as themselves in our text: replaced by U+FFFD. */
static bool unfit(uint32_t cp)
{
    return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0xFFFE || cp == 0xFFFF;
}

void mp_xml_text(FILE *f, const char *s, size_t max_chars)
{
    if (!s)
        return;
    size_t total = 0;
    if (max_chars) {
        uint32_t cp;
        for (const char *p = s; *p && total <= max_chars; p += mp_utf8_next(p, &cp))
            total++;
    }
    size_t keep = (max_chars && total > max_chars) ? max_chars - 1 : SIZE_MAX;
    size_t n = 0;
    for (const char *p = s; *p && n < keep; n++) {
        uint32_t cp;
        p += mp_utf8_next(p, &cp);
        if (unfit(cp))
            cp = 0xFFFD;
        switch (cp) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: put_utf8(f, cp); break;
        }
    }
    if (keep != SIZE_MAX)
        put_utf8(f, 0x2026);
}

void mp_json_text(FILE *f, const char *s)
{
    if (!s)
        return;
    for (const char *p = s; *p;) {
        uint32_t cp;
        p += mp_utf8_next(p, &cp);
        if (cp == '"' || cp == '\\') {
            fputc('\\', f);
            fputc((int)cp, f);
        } else if (cp < 0x20 || cp == 0x7F) {
            fprintf(f, "\\u%04" PRIx32, cp);
        } else if (cp == 0xFFFE || cp == 0xFFFF) {
            fputs("\\ufffd", f);
        } else {
            put_utf8(f, cp);
        }
    }
}

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
