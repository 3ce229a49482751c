/* The text report of a profile (`memprof report`): header, the run summary of
 * text_summary.c, then the timeline, lifetimes, plan quality per arena, per operator
 * figures, waste; and the text of two profiles compared. Lays out mp_profile and
 * mp_profile_diff (analyzers/profile.h) in at most 80 columns, computing nothing. */
#ifndef MP_TEXT_PROFILE_H
#define MP_TEXT_PROFILE_H

#include <stdbool.h>
#include <stdio.h>

#include "analyzers/profile.h"

/* Rows of the capped tables (all rows with exact). */
#define MP_REPORT_LIFETIMES_TOP 20
#define MP_REPORT_OPS_TOP 12
#define MP_REPORT_ARENAS_TOP 4
#define MP_REPORT_UNUSED_TOP 5
#define MP_REPORT_DIFF_TOP 20
/* Points of the timeline table (the peak is added when not among them). */
#define MP_REPORT_TIMELINE_ROWS 8
/* Columns of the timeline's sparkline. */
#define MP_REPORT_SPARK_COLS 64

/* Write the report of p to f. exact: exact byte counts next to the human units (in
 * tables: exact byte counts instead), and every row of every table. */
void mp_report_profile_text(FILE *f, const mp_profile *p, bool exact);

/* Write the comparison d of profiles a (before) and b (after) to f. */
void mp_report_diff_text(FILE *f, const mp_profile *a, const mp_profile *b,
                         const mp_profile_diff *d, bool exact);

#endif
