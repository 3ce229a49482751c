/* The HTML report of a profile (analyzers/profile.h), `memprof report --format html`: one
 * self-contained file (inline CSS and SVG charts, no network access, a few lines of inline
 * script only to sort tables by a click on a column) with the memory timeline, the tensor
 * lifetimes, the arena layout and tables: what is alive at the peak, lifetimes, arenas and
 * their plan quality, per operator, and waste (duplicated bytes, unused blocks, copies).
 * The file is also well-formed XML (every name escaped by markup.h). */
#ifndef MP_HTML_REPORT_H
#define MP_HTML_REPORT_H

#include <stdio.h>

#include "analyzers/profile.h"

/* Most rows of one table; the rest is counted in a note. */
#define MP_HTML_MAX_ROWS 5000

void mp_report_html(FILE *f, const mp_profile *p);

#endif
