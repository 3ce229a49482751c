/* Input text made safe for one-line messages (safe_text.h). */
#include "trace/safe_text.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Length of the valid, shortest-form UTF-8 sequence at s (s[0] >= 0x80), 0 when invalid. */
static size_t utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    size_t n;
    uint32_t cp, min;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2, cp = c & 0x1f, min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3, cp = c & 0x0f, min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4, cp = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) /* also stops at the NUL */
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

const char *mp_safe_text(char *dst, size_t n, const char *src)
{
    const unsigned char *s = (const unsigned char *)(src ? src : "");
    size_t o = 0;
    dst[0] = '\0';
    while (*s) {
        char piece[20];
        size_t take = 1, len;
        unsigned c = *s;
        if (c == '\n' || c == '\r' || c == '\t') {
            len = (size_t)snprintf(piece, sizeof piece, "\\%c", c == '\n' ? 'n' : c == '\r' ? 'r' : 't');
        } else if (c < 0x20 || c == 0x7f) {
            len = (size_t)snprintf(piece, sizeof piece, "\\x%02x", c);
        } else if (c < 0x80) {
            piece[0] = (char)c;
            len = 1;
        } else if ((take = utf8_len(s)) == 0 || (c == 0xc2 && s[1] < 0xa0)) {
            /* invalid, or a C1 control character (U+0080..U+009F) */
            take = c == 0xc2 && s[1] >= 0x80 && s[1] < 0xa0 ? 2 : 1;
            len = 0;
            for (size_t i = 0; i < take; i++)
                len += (size_t)snprintf(piece + len, sizeof piece - len, "\\x%02x", s[i]);
        } else {
            memcpy(piece, s, take);
            len = take;
        }
        if (o + len + 1 > n) { /* no room: end with "..." at the last piece that fits */
            while (o > 0 && o + 4 > n) {
                o--;
                while (o > 0 && ((unsigned char)dst[o] & 0xc0) == 0x80)
                    o--;
            }
            if (o + 4 <= n)
                memcpy(dst + o, "...", 3), o += 3;
            dst[o] = '\0';
            return dst;
        }
        memcpy(dst + o, piece, len);
        o += len;
        dst[o] = '\0';
        s += take;
    }
    return dst;
}
