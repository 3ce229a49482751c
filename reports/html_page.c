/* The frame of every HTML page (html_internal.h): head with the embedded style sheet, the
 * header with its links and search box, the detail panel and the embedded script; and the
 * table cells and cards the report and the comparison share. */
#include <inttypes.h>
#include <stdarg.h>

#include "reports/html_assets.h"
#include "reports/html_internal.h"
#include "reports/markup.h"
#include "reports/units.h"

void mp_html_printf(FILE *f, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    mp_xml_text(f, buf, 0);
}

void mp_html_page_open(FILE *f, const char *title, const char *subtitle,
                       const char *const *links, size_t n_links)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n"
          "<title>",
          f);
    mp_xml_text(f, title, 200);
    /* The style sheet and script are plain text to an XML reader too (CDATA, commented out
     * for the browser), so the page stays well-formed XML. */
    fprintf(f, "</title>\n<style>/*<![CDATA[*/\n%s/*]]>*/</style>\n</head>\n<body>\n<header>\n<h1>",
            mp_html_css);
    mp_xml_text(f, title, 200);
    fputs("</h1>\n<p class=\"sub\">", f);
    mp_xml_text(f, subtitle, 0);
    fputs("</p>\n<div class=\"bar\"><nav>", f);
    for (size_t i = 0; i + 1 < 2 * n_links; i += 2) {
        fputs("<a href=\"#", f);
        mp_xml_text(f, links[i], 0);
        fputs("\">", f);
        mp_xml_text(f, links[i + 1], 0);
        fputs("</a>", f);
    }
    fputs("</nav>\n<div class=\"search\"><input id=\"search\" type=\"search\" "
          "placeholder=\"Search tensors and operators\" autocomplete=\"off\" "
          "aria-label=\"Search tensors and operators\"/><ul id=\"search-results\"></ul>"
          "</div></div>\n</header>\n<main>\n",
          f);
}

void mp_html_page_close(FILE *f)
{
    fputs("</main>\n<aside id=\"detail\" hidden=\"hidden\" aria-live=\"polite\"></aside>\n"
          "<footer>memprof report: one self-contained file, no network needed. Drag across "
          "a timeline to zoom, double-click to reset; click a tensor or an operator anywhere "
          "for its details.</footer>\n<script>//<![CDATA[\n",
          f);
    fputs(mp_html_js, f);
    fputs("//]]></script>\n</body>\n</html>\n", f);
}

void mp_html_td_bytes(FILE *f, uint64_t v)
{
    char b[48];
    fprintf(f, "<td class=\"n\" data-v=\"%" PRIu64 "\" title=\"%" PRIu64 " bytes\">%s</td>", v,
            v, mp_fmt_bytes(b, sizeof b, v));
}

void mp_html_td_num(FILE *f, uint64_t v)
{
    fprintf(f, "<td class=\"n\" data-v=\"%" PRIu64 "\">%" PRIu64 "</td>", v, v);
}

/* A name cell: the name (or "#i"), cut at 80 characters, whole in the tooltip. */
void mp_html_td_name(FILE *f, const char *name, int32_t index)
{
    if (!name) {
        fputs("<td class=\"name muted\">", f);
        if (index >= 0)
            fprintf(f, "#%" PRId32, index);
        else
            fputs("-", f);
        fputs("</td>", f);
        return;
    }
    fputs("<td class=\"name\" title=\"", f);
    mp_xml_text(f, name, 400);
    fputs("\">", f);
    mp_xml_text(f, name, 80);
    fputs("</td>", f);
}

void mp_html_table_open(FILE *f, const char *const *cols, size_t n)
{
    fputs("<div class=\"scroll\"><table class=\"sortable\"><thead><tr>", f);
    for (size_t i = 0; i < n; i++) {
        const char *c = cols[i];
        int num = c[0] == '#';
        fprintf(f, "<th%s>", num ? " class=\"n\"" : "");
        mp_xml_text(f, num ? c + 1 : c, 0);
        fputs("</th>", f);
    }
    fputs("</tr></thead><tbody>\n", f);
}

void mp_html_table_close(FILE *f, size_t shown, size_t total)
{
    fputs("</tbody></table></div>\n", f);
    if (shown < total)
        fprintf(f, "<p class=\"muted\">%zu of %zu rows shown.</p>\n", shown, total);
}

void mp_html_card(FILE *f, const char *key, const char *value, const char *detail,
                  const char *cls)
{
    fputs("<div class=\"card\"><div class=\"k\">", f);
    mp_xml_text(f, key, 0);
    fprintf(f, "</div><div class=\"v%s%s\">", cls ? " " : "", cls ? cls : "");
    mp_xml_text(f, value, 0);
    fputs("</div><div class=\"d\">", f);
    mp_xml_text(f, detail, 0);
    fputs("</div></div>\n", f);
}
