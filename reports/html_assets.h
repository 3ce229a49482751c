/* The HTML report's script and style sheet (reports/html/report.js and report.css), built
 * into the binary as C strings by cmake/EmbedText.cmake, so that the report is one file. */
#ifndef MP_HTML_ASSETS_H
#define MP_HTML_ASSETS_H

extern const char mp_html_js[];
extern const char mp_html_css[];

#endif
