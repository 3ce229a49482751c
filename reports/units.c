/* Human units and text-report lines (see units.h). */
#include "reports/units.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "trace/trace.h"

const char *mp_fmt_bytes(char *buf, size_t n, uint64_t bytes)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024) {
        snprintf(buf, n, "%" PRIu64 " B", bytes);
        return buf;
    }
    double v = (double)bytes / 1024.0;
    int u = 1;
    /* 1023.96 KiB would print as "1024.0 KiB": move to the next unit instead. */
    while (v >= 1023.95 && u < 6) {
        v /= 1024.0;
        u++;
    }
    snprintf(buf, n, "%.1f %s", v, units[u]);
    return buf;
}

const char *mp_fmt_sbytes(char *buf, size_t n, int64_t bytes)
{
    if (bytes >= 0)
        return mp_fmt_bytes(buf, n, (uint64_t)bytes);
    if (n < 2) {
        if (n == 1)
            buf[0] = '\0';
        return buf;
    }
    buf[0] = '-';
    mp_fmt_bytes(buf + 1, n - 1, (uint64_t)0 - (uint64_t)bytes);
    return buf;
}

const char *mp_fmt_ns(char *buf, size_t n, uint64_t ns)
{
    if (ns < 1000)
        snprintf(buf, n, "%" PRIu64 " ns", ns);
    else if (ns < 999950)
        snprintf(buf, n, "%.1f us", (double)ns / 1e3);
    else if (ns < 999950000)
        snprintf(buf, n, "%.1f ms", (double)ns / 1e6);
    else
        snprintf(buf, n, "%.1f s", (double)ns / 1e9);
    return buf;
}

const char *mp_time_unit(double fastest_ns, double *div)
{
    bool us = fastest_ns < 1e5;
    *div = us ? 1e3 : 1e6;
    return us ? "us" : "ms";
}

const char *mp_fmt_cell(char *buf, size_t n, uint64_t bytes, bool exact)
{
    if (exact)
        snprintf(buf, n, "%" PRIu64, bytes);
    else
        mp_fmt_bytes(buf, n, bytes);
    return buf;
}

const char *mp_fmt_change(char *buf, size_t n, uint64_t a, uint64_t b, bool exact)
{
    char h[40];
    uint64_t d = b > a ? b - a : a - b;
    if (exact)
        snprintf(h, sizeof h, "%" PRIu64 " B", d);
    else
        mp_fmt_bytes(h, sizeof h, d);
    snprintf(buf, n, "%s%s", d == 0 ? "" : (b > a ? "+" : "-"), h);
    return buf;
}

const char *mp_fmt_bytes_x(char *buf, size_t n, uint64_t bytes, bool exact)
{
    char h[32];
    mp_fmt_bytes(h, sizeof h, bytes);
    if (exact && bytes >= 1024)
        snprintf(buf, n, "%s (%" PRIu64 " B)", h, bytes);
    else
        snprintf(buf, n, "%s", h);
    return buf;
}

/* ---- text lines ------------------------------------------------------------------------- */

static bool utf8_cont(unsigned char c)
{
    return (c & 0xC0) == 0x80;
}

void mp_text_fit(char *dst, size_t n, const char *src, size_t max_cols)
{
    if (!src)
        src = "?";
    size_t cols = 0;
    for (const unsigned char *p = (const unsigned char *)src; *p; p++)
        cols += !utf8_cont(*p);
    size_t keep = cols <= max_cols ? cols : (max_cols > 3 ? max_cols - 3 : 0);
    size_t o = 0, c = 0;
    for (const unsigned char *p = (const unsigned char *)src; *p; p++) {
        if (!utf8_cont(*p)) {
            /* Stop at a character's start: room for it (4 bytes) and "..." remains. */
            if (c == keep || o + 8 >= n)
                break;
            c++;
        } else if (o + 4 >= n) {
            break; /* malformed: a long run of continuation bytes */
        }
        dst[o++] = (*p < 0x20 || *p == 0x7f) ? '?' : (char)*p;
    }
    if (cols > max_cols)
        for (size_t i = 0; i < 3 && c + i < max_cols && o + 1 < n; i++)
            dst[o++] = '.';
    dst[o] = '\0';
}

void mp_text_fit_middle(char *dst, size_t n, const char *src, size_t max_cols)
{
    char safe[1024];
    mp_text_fit(safe, sizeof safe, src, 255); /* control characters made safe */
    size_t cols = 0;
    for (const unsigned char *p = (const unsigned char *)safe; *p; p++)
        cols += !utf8_cont(*p);
    if (cols <= max_cols || max_cols < 4) {
        mp_text_fit(dst, n, safe, max_cols);
        return;
    }
    size_t head = (max_cols - 3) / 3, tail = max_cols - 3 - head, col = 0, o = 0;
    for (const unsigned char *p = (const unsigned char *)safe; *p && o + 8 < n; p++) {
        bool start = !utf8_cont(*p);
        col += start;
        if (col <= head || col > cols - tail) {
            dst[o++] = (char)*p;
        } else if (start && col == head + 1) {
            memcpy(dst + o, "...", 3);
            o += 3;
        }
    }
    dst[o] = '\0';
}

void mp_text_title(FILE *f, const char *what, const char *subject)
{
    char fitted[MP_TEXT_COLS * 4 + 8];
    size_t used = strlen(what) + 2;
    mp_text_fit_middle(fitted, sizeof fitted, subject,
                       used < MP_TEXT_COLS - 8 ? MP_TEXT_COLS - used : 8);
    mp_text_line(f, "%s: %s", what, fitted);
}

void mp_text_line(FILE *f, const char *fmt, ...)
{
    char raw[1024], line[MP_TEXT_COLS * 4 + 8];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    mp_text_fit(line, sizeof line, raw, MP_TEXT_COLS);
    size_t len = strlen(line);
    while (len > 0 && line[len - 1] == ' ')
        line[--len] = '\0';
    fprintf(f, "%s\n", line);
}

const char *mp_phase_label(int kind)
{
    static const char *labels[] = {"load", "prepare", "shape change", "input/output", "run",
                                   "teardown"};
    return kind >= 0 && kind < (int)(sizeof labels / sizeof labels[0]) ? labels[kind] : "?";
}

const char *mp_kind_label(int kind)
{
    static const char *labels[MP_KIND_COUNT] = {"const", "static", "dynamic", "scratch",
                                                "kernel", "io", "engine",
                                                [MP_KIND_VARIABLE] = "variable",
    [MP_KIND_TRAIN_ACTIVATION] = "activation", [MP_KIND_TRAIN_TRAINABLE] = "trainable",
    [MP_KIND_TRAIN_BACKPROP] = "backprop", [MP_KIND_TRAIN_GRADIENT] = "gradient",
    [MP_KIND_TRAIN_OPTIMIZER] = "optimizer", [MP_KIND_TRAIN_DISPOSABLE] = "disposable",
    [MP_KIND_TRAIN_EXTRA] = "extra"};
    return kind >= 0 && kind < MP_KIND_COUNT && labels[kind] ? labels[kind] : "?";
}

const char *mp_fmt_dims(char *buf, size_t n, int32_t rank, const int32_t *dims)
{
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int32_t i = 0; i < rank && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, i ? ",%d" : "%d", (int)dims[i]);
    if (k < n)
        snprintf(buf + k, n - k, "]");
    return buf;
}
