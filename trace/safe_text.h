/* Text from an input file made safe to quote in a one-line error message: jansson's error
 * text quotes the input ("... near '<bytes>'"), and a raw newline, control character or
 * invalid UTF-8 there would split the message or mess up the terminal. Used by every reader
 * that embeds input bytes in a message (the trace reader, the baseline reader). */
#ifndef MP_SAFE_TEXT_H
#define MP_SAFE_TEXT_H

#include <stddef.h>

/* Copy src into dst (size n >= 1, always NUL-terminated) with newline, carriage return and
 * tab as \n \r \t, other control characters (C0, DEL, C1) and bytes that are not valid
 * UTF-8 as \xNN (each byte of a C1 character); valid UTF-8 is kept. A text that does not fit
 * is cut at a character boundary and ends with "...". NULL copies as "". Returns dst. */
const char *mp_safe_text(char *dst, size_t n, const char *src);

/* Room for any src of up to len bytes, escaped, with its NUL. */
#define MP_SAFE_TEXT_SIZE(len) (4 * (len) + 4)

#endif
