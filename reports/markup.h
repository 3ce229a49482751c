/* Markup escaping: the one place that writes text into XML, HTML and JSON (invalid UTF-8,
 * control characters and noncharacters replaced) and decodes UTF-8 tolerantly. Used by the
 * SVG charts, the HTML report, JUnit XML and the Chrome trace. */
#ifndef MP_MARKUP_H
#define MP_MARKUP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Decode one UTF-8 character at s (s[0] != 0): store it in *cp and return the bytes it
 * takes. A byte that does not start a complete, valid, shortest-form sequence (stray
 * continuation, truncated, overlong, surrogate, beyond U+10FFFF) takes 1 byte and decodes
 * as U+FFFD. Never reads past a NUL. */
size_t mp_utf8_next(const char *s, uint32_t *cp);

/* Write s as XML / HTML text or attribute value: & < > " ' as character references,
 * control characters (C0 including tab and newline, DEL, C1), U+FFFE / U+FFFF and invalid
 * UTF-8 as U+FFFD. At most max_chars characters (0 = no limit): a longer text is cut and
 * ends with an ellipsis (U+2026), within max_chars. NULL writes nothing. */
void mp_xml_text(FILE *f, const char *s, size_t max_chars);

/* The same for JSON string contents (no quotes written): " \ and control characters
 * escaped, invalid UTF-8 and U+FFFE / U+FFFF as \ufffd. NULL writes nothing. */
void mp_json_text(FILE *f, const char *s);

#endif
