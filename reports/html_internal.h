/* What the HTML pages share (private to reports/html_*.c): the page's head and end with the
 * embedded style and script, the data island report.js draws from, and table cells. */
#ifndef MP_HTML_INTERNAL_H
#define MP_HTML_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyzers/profile.h"

/* <!DOCTYPE html> up to the opening <main>: title, a subtitle line, the section links (pairs
 * of id and label, n of them) and the search box. */
void mp_html_page_open(FILE *f, const char *title, const char *subtitle,
                       const char *const *links, size_t n_links);
/* The data island: <script type="application/json" id="mp-data">{"page":PAGE,"traces":[,
 * then one mp_html_data_trace per trace (comma-separated by the caller through `first`),
 * then mp_html_data_close. Strings are JSON with < > & written as \u escapes, so the island
 * is plain text to an XML reader and cannot end the script early. */
void mp_html_data_open(FILE *f, const char *page);
void mp_html_data_trace(FILE *f, const mp_profile *p, const char *label, bool first);
void mp_html_data_close(FILE *f);
/* </main>, the detail panel, the footer, the script; </html>. */
void mp_html_page_close(FILE *f);

/* A JSON string (quotes included) safe inside HTML and XML; NULL writes null. */
void mp_html_json_str(FILE *f, const char *s);
/* Text escaped through mp_xml_text after printf formatting. */
void mp_html_printf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Tables: columns named "#label" are numeric (right-aligned). Rows are written by the caller;
 * a note says how many were left out when shown < total. */
void mp_html_table_open(FILE *f, const char *const *cols, size_t n);
void mp_html_table_close(FILE *f, size_t shown, size_t total);
void mp_html_td_bytes(FILE *f, uint64_t v);
void mp_html_td_num(FILE *f, uint64_t v);
void mp_html_td_name(FILE *f, const char *name, int32_t index);
void mp_html_card(FILE *f, const char *key, const char *value, const char *detail,
                  const char *cls);

#endif
