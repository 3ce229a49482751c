/* The HTML report of a profile (analyzers/profile.h), `memprof report --format html`: one
 * self-contained file (inline style and script, the figures embedded as JSON, no network
 * access) with the memory timeline (zoom, pan, the moment under the cursor), the tensor
 * lifetimes, the arena layout, a search over tensor and operator names, a detail panel for
 * the tensor or operator clicked anywhere, and tables: what is alive at the peak, lifetimes,
 * arenas and their plan quality, per operator, and waste (duplicated bytes, unused blocks,
 * copies). The charts are drawn by reports/html/report.js in the browser. The file is also
 * well-formed XML (every name escaped by markup.h, the script in CDATA). */
#ifndef MP_HTML_REPORT_H
#define MP_HTML_REPORT_H

#include <stdio.h>

#include "analyzers/profile.h"

/* Most rows of one table; the rest is counted in a note. */
#define MP_HTML_MAX_ROWS 5000

/* Most timeline points worth embedding: `memprof report --format html` asks the profile for
 * this many when no --points is given (every step of 100 runs of MobileNet v2 fits). */
#define MP_HTML_POINTS 20000

void mp_report_html(FILE *f, const mp_profile *p);

/* Two traces compared (what `memprof report A B` prints), with both timelines on one axis. */
void mp_report_diff_html(FILE *f, const mp_profile *a, const mp_profile *b,
                         const mp_profile_diff *d);

#endif
