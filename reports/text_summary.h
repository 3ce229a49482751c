/* The text summary `memprof run` prints: time per phase, the heap peak and what is alive
 * then, allocations per run, static / dynamic / duplicated bytes, copies, balance and
 * unaccounted heap. Lays out an mp_summary (analyzers/summary.h) in at most 80 columns. */
#ifndef MP_TEXT_SUMMARY_H
#define MP_TEXT_SUMMARY_H

#include <stdbool.h>
#include <stdio.h>

#include "analyzers/summary.h"
#include "trace/trace.h"

/* How many items of "largest alive at peak" and of "duplicated" are printed. */
#define MP_REPORT_SUMMARY_TOP 8
#define MP_REPORT_SUMMARY_TOP_DUPS 3

/* Write the summary of trace tr to f. exact: also print exact byte counts next to the
 * human units. tr gives the model's description (it may be NULL). */
void mp_report_summary_text(FILE *f, const mp_trace *tr, const mp_summary *s, bool exact);
/* The same from a trace's metadata (m may be NULL), e.g. an mp_source's. */
void mp_report_summary_text_meta(FILE *f, const mp_trace_meta *m, const mp_summary *s,
                                 bool exact);
/* Every section but the two header lines (model; mode, planner, threads, events): for
 * reports that print their own header (text_profile.c). */
void mp_report_summary_body_text(FILE *f, const mp_trace_meta *m, const mp_summary *s,
                                 bool exact);

/* What a whole planned arena (an MP_SUMMARY_ARENA item) holds, for a "largest alive" line
 * here and in the TUI: "56 tensors planned" when every slot is a tensor's own; else, e.g.,
 * "67 tensors in 56 slots, 11 in place" and ", 2 scratch" (operators' scratch slots). */
void mp_report_arena_contents(const mp_summary_alive *a, char *buf, size_t n);

#endif
