/* Markup escaping shared by every writer of XML, HTML and JSON text (SVG charts, the HTML
 * report, JUnit, the Chrome trace): see markup.h. */
#include "reports/markup.h"

#include <inttypes.h>
#include <stdbool.h>

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
