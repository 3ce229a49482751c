/* Tests of the picture renderers: SVG charts, the HTML report and the Chrome trace.
 *
 * Profiles are built by hand here (not computed), so these tests need no analyzer but the
 * replay. SVG and HTML outputs are checked with xmllint (well-formed XML; HTML through its
 * HTML parser too), skipped with a message when xmllint is absent; Chrome traces are parsed
 * with jansson and checked against figures worked out by hand next to the events. */
#include "tests/util/testutil.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyzers/profile.h"
#include "analyzers/source.h"
#include "trace/trace.h"
#include "reports/chrome_trace.h"
#include "reports/html_report.h"
#include "reports/svg_charts.h"
#include "reports/chart_style.h"
#include "reports/markup.h"

/* ---- files and xmllint ---------------------------------------------------------------------- */

static char tmp_dir[256];

static int setup_dir(void **state)
{
    (void)state;
    snprintf(tmp_dir, sizeof tmp_dir, "/tmp/mp_test_charts_XXXXXX");
    if (!mkdtemp(tmp_dir))
        return -1;
    return 0;
}

static int remove_dir(void **state)
{
    (void)state;
    if (getenv("MP_KEEP_CHARTS")) { /* to look at the outputs */
        fprintf(stderr, "outputs kept in %s\n", tmp_dir);
        return 0;
    }
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_dir);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *tmp_path(const char *name)
{
    static char path[16][512];
    static int which;
    which = (which + 1) % 16;
    snprintf(path[which], sizeof path[which], "%s/%s", tmp_dir, name);
    return path[which];
}

static char *slurp(const char *path, size_t *len)
{
    size_t n = 0;
    char *s = mp_test_read_file(path, &n);
    assert_non_null(s);
    char *z = realloc(s, n + 1);
    assert_non_null(z);
    z[n] = '\0';
    if (len)
        *len = n;
    return z;
}

static bool have_xmllint(void)
{
    static int have = -1;
    if (have < 0) {
        have = system("command -v xmllint >/dev/null 2>&1") == 0;
        if (!have)
            fprintf(stderr, "[  SKIP    ] xmllint is absent: well-formedness checks skipped "
                            "(install libxml2-utils)\n");
    }
    return have;
}

/* xmllint accepts path as XML (no message at all); html: also through its HTML parser, whose
 * only messages may be about HTML5 and SVG tags it does not know. */
static void check_xml(const char *path, bool html)
{
    if (!have_xmllint())
        return;
    char cmd[1200];
    const char *log = tmp_path("xmllint.log");
    snprintf(cmd, sizeof cmd, "xmllint --noout '%s' >'%s' 2>&1", path, log);
    int rc = system(cmd);
    size_t n;
    char *out = slurp(log, &n);
    if (rc != 0 || n != 0)
        fail_msg("%s is not well-formed XML:\n%s", path, out);
    free(out);
    if (!html)
        return;
    snprintf(cmd, sizeof cmd, "xmllint --html --noout '%s' 2>&1 | grep 'error' | "
             "grep -v 'HTML parser error : Tag [a-zA-Z]* invalid' >'%s'", path, log);
    rc = system(cmd);
    (void)rc;
    out = slurp(log, &n);
    if (n != 0)
        fail_msg("%s: xmllint --html complains:\n%s", path, out);
    free(out);
    snprintf(cmd, sizeof cmd, "xmllint --html --noout '%s' >/dev/null 2>&1", path);
    assert_int_equal(system(cmd), 0);
}

/* The decoded text of an XPath string expression over path (NULL without xmllint). */
static char *xpath(const char *path, const char *expr)
{
    if (!have_xmllint())
        return NULL;
    char cmd[1200];
    const char *out = tmp_path("xpath.out");
    snprintf(cmd, sizeof cmd, "xmllint --xpath \"%s\" '%s' >'%s' 2>/dev/null", expr, path, out);
    assert_int_equal(system(cmd), 0);
    return slurp(out, NULL);
}

static size_t count_of(const char *s, const char *needle)
{
    size_t n = 0, len = strlen(needle);
    for (const char *p = strstr(s, needle); p; p = strstr(p + len, needle))
        n++;
    return n;
}

/* The chart of class cls inside a document: from its <svg to its </svg> (charts do not nest
 * svg elements). Caller frees. */
static char *chart(const char *doc, const char *cls)
{
    char key[64];
    snprintf(key, sizeof key, "class=\"mp-chart %s\"", cls);
    const char *a = strstr(doc, key);
    assert_non_null(a);
    while (a > doc && strncmp(a, "<svg", 4) != 0)
        a--;
    const char *z = strstr(a, "</svg>");
    assert_non_null(z);
    size_t n = (size_t)(z + 6 - a);
    char *s = malloc(n + 1);
    assert_non_null(s);
    memcpy(s, a, n);
    s[n] = '\0';
    return s;
}

/* Escape as XML text, the obvious way, for ASCII names. */
static void esc(char *dst, size_t n, const char *s)
{
    size_t o = 0;
    for (; *s && o + 8 < n; s++) {
        const char *r = NULL;
        switch (*s) {
        case '&': r = "&amp;"; break;
        case '<': r = "&lt;"; break;
        case '>': r = "&gt;"; break;
        case '"': r = "&quot;"; break;
        case '\'': r = "&#39;"; break;
        }
        if (r) {
            strcpy(dst + o, r);
            o += strlen(r);
        } else {
            dst[o++] = *s;
        }
    }
    dst[o] = '\0';
}

/* The <title> text of every element starting with `open` (e.g. "<rect class=\"bar\""), in
 * order. */
static size_t titles_of(const char *s, const char *open, char ***out)
{
    size_t n = 0;
    char **t = NULL;
    for (const char *p = strstr(s, open); p; p = strstr(p + 1, open)) {
        const char *a = strstr(p, "<title>");
        const char *end = strchr(p, '>');
        assert_non_null(a);
        assert_true(end && a == end + 1); /* the title is the element's first child */
        a += 7;
        const char *z = strstr(a, "</title>");
        assert_non_null(z);
        t = realloc(t, (n + 1) * sizeof *t);
        t[n] = strndup(a, (size_t)(z - a));
        n++;
    }
    *out = t;
    return n;
}

static void free_titles(char **t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(t[i]);
    free(t);
}

static double attr_num(const char *el, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, " %s=\"", name);
    const char *a = strstr(el, key);
    assert_non_null(a);
    return strtod(a + strlen(key), NULL);
}

/* ---- a profile built by hand ------------------------------------------------------------------ */

typedef struct built {
    mp_trace_meta meta;
    mp_trace_tensor *tensors;
    mp_trace_op *ops;
    char **names;            /* every string allocated, to free */
    size_t n_names;
    mp_profile p;
} built;

static char *keep(built *b, const char *s)
{
    b->names = realloc(b->names, (b->n_names + 1) * sizeof *b->names);
    b->names[b->n_names] = strdup(s);
    return b->names[b->n_names++];
}

static void built_free(built *b)
{
    for (size_t i = 0; i < b->n_names; i++)
        free(b->names[i]);
    free(b->names);
    free(b->tensors);
    free(b->ops);
    free(b->p.by_step.pts);
    free(b->p.by_event.pts);
    free(b->p.lifetimes);
    for (size_t i = 0; i < b->p.n_arenas; i++) {
        free(b->p.arenas[i].slots);
        free(b->p.arenas[i].free_at_op);
    }
    free(b->p.arenas);
    free(b->p.ops);
    free(b->p.unused);
    free(b->p.summary.alive);
    free(b->p.summary.dups);
    free(b);
}

static built *built_new(int32_t n_tensors, int32_t n_ops)
{
    built *b = calloc(1, sizeof *b);
    assert_non_null(b);
    b->meta.model = keep(b, "zoo:hand_made");
    b->meta.mode = keep(b, "auto");
    b->meta.planner = keep(b, "greedy");
    b->meta.threads = 1;
    b->meta.n_tensors = n_tensors;
    b->meta.n_ops = n_ops;
    b->meta.process_heap_peak = -1;
    b->meta.allocator_overhead = -1;
    b->tensors = calloc((size_t)n_tensors + 1, sizeof *b->tensors);
    b->ops = calloc((size_t)n_ops + 1, sizeof *b->ops);
    b->meta.tensors = b->tensors;
    b->meta.ops = b->ops;
    b->p.meta = &b->meta;
    b->p.reference_run = -1;
    b->p.reference_arena = -1;
    b->p.summary.peak.event = -1;
    b->p.summary.peak.op = -1;
    b->p.summary.peak.phase_kind = -1;
    b->p.summary.dup.event = -1;
    b->p.summary.dup.op = -1;
    b->p.summary.dup.phase_kind = -1;
    return b;
}

/* The small model: tensors 0 "input", 1 "weights" (const), 2 "conv", 3 "relu", 4 "sum",
 * 5 "out"; operators 0 CONV_2D, 1 RELU, 2 ADD, 3 SOFTMAX; two runs.
 * Timeline by step: point 0 is prepare (no step), points 1..8 the eight steps of the two
 * runs; the heap peaks at point 7 (run 2, op 2 ADD): 5000 bytes. */
static const uint64_t heap_of_point[9] = {3000, 1000, 1500, 2500, 2000, 1200, 1700, 5000, 2100};

static built *small_profile(const char *hostile)
{
    built *b = built_new(6, 4);
    const char *tn[6] = {"input", "weights", "conv", "relu", "sum", "out"};
    for (int i = 0; i < 6; i++) {
        b->tensors[i].name = keep(b, i == 3 && hostile ? hostile : tn[i]);
        b->tensors[i].is_const = i == 1;
    }
    const char *on[4] = {"CONV_2D", "RELU", "ADD", "SOFTMAX"};
    for (int i = 0; i < 4; i++)
        b->ops[i].name = keep(b, on[i]);
    mp_profile *p = &b->p;
    p->n_steps = 8;
    p->n_ops = 4;
    p->reference_run = 2;

    mp_timeline *tl = &p->by_step;
    tl->n = 9;
    tl->pts = calloc(9, sizeof *tl->pts);
    tl->per_point = 1;
    tl->has_rss = true;
    for (size_t i = 0; i < 9; i++) {
        mp_tl_point *pt = &tl->pts[i];
        pt->ev_first = i * 3;
        pt->ev_last = i * 3 + 2;
        pt->step_first = i ? i - 1 : 0;
        pt->step_last = i;
        pt->t_ns = 1000 * i;
        pt->heap = heap_of_point[i];
        pt->live[MP_KIND_ENGINE] = 200;
        pt->live[MP_KIND_STATIC] = i ? 3072 < pt->heap - 200 ? 3072 : pt->heap - 200 : 0;
        pt->live[MP_KIND_KERNEL] = pt->heap - 200 - pt->live[MP_KIND_STATIC];
        pt->live[MP_KIND_CONST] = 4096;
        pt->phase_kind = i ? MP_PHASE_RUN : MP_PHASE_PREPARE;
        pt->run = i ? (i <= 4 ? 1 : 2) : 0;
        pt->op = i ? (int32_t)((i - 1) % 4) : -1;
        pt->rss = 6000 + 20 * i;
        pt->rss_hwm = 6160;
    }
    tl->peak = 7;

    p->summary.n_events = 27;
    p->summary.peak_heap = 5000;
    p->summary.peak = (mp_summary_when){.event = 22, .t_ns = 7000, .phase_kind = MP_PHASE_RUN,
                                        .phase = 3, .run = 2, .op = 2, .op_name = on[2]};
    p->summary.kind_peak[MP_KIND_STATIC] = 3072;
    p->summary.kind_peak[MP_KIND_KERNEL] = 1728;
    p->summary.kind_peak[MP_KIND_ENGINE] = 200;
    p->summary.kind_peak[MP_KIND_CONST] = 4096;
    p->summary.const_bytes = 4096;
    p->summary.n_runs = 2;
    p->summary.first_run_ns = 4000;
    p->summary.n_later = 1;
    p->summary.later_median_ns = 3500;
    p->summary.n_alive = 2;
    p->summary.alive = calloc(2, sizeof *p->summary.alive);
    p->summary.alive[0] = (mp_summary_alive){MP_SUMMARY_SLOT, 4, b->tensors[4].name,
                                             MP_KIND_STATIC, 1024, 17, 2, on[2], 0, 0, 0};
    p->summary.alive[1] = (mp_summary_alive){MP_SUMMARY_OWNERLESS, -1, NULL, MP_KIND_ENGINE,
                                             200, 0, -1, NULL, 1, 0, 0};
    p->summary.peak_slots_by_op = true;
    p->summary.n_copy_in = 2;
    p->summary.bytes_copy_in = 2048;

    /* Lifetimes: tensor, first, last, bytes, manager, offset. */
    static const struct { int32_t first, last; uint64_t bytes; uint8_t mgr; int64_t off; } lt[6] =
        {{0, 0, 1024, MP_MGR_ARENA, 0},      {0, 3, 4096, MP_MGR_CONST, -1},
         {0, 1, 1024, MP_MGR_ARENA, 1024},   {1, 2, 1000, MP_MGR_ARENA, 0},
         {2, 3, 1024, MP_MGR_ARENA, 2048},   {3, 3, 40, MP_MGR_IO, -1}};
    p->n_lifetimes = 6;
    p->lifetimes = calloc(6, sizeof *p->lifetimes);
    for (int i = 0; i < 6; i++)
        p->lifetimes[i] = (mp_lifetime){i, b->tensors[i].name, lt[i].first, lt[i].last,
                                        lt[i].bytes, lt[i].mgr, lt[i].off,
                                        lt[i].mgr == MP_MGR_ARENA ? 17 : 0,
                                        i >= 2 ? i - 2 : -1, i >= 2 ? on[i - 2] : NULL, false};

    /* The arena: 4 slots in 3072 bytes; alive per operator: op0 2048, op1 2024, op2 2024,
     * op3 1024, so the lower bound is 2048 (op 0). */
    p->n_arenas = p->n_arenas_total = 1;
    p->reference_arena = 0;
    p->arenas = calloc(1, sizeof *p->arenas);
    mp_arena_report *ar = &p->arenas[0];
    ar->id = 17;
    ar->bytes = 3072;
    ar->used = 3072;
    ar->lower_bound = 2048;
    ar->lower_bound_op = 0;
    ar->naive = 4072;
    ar->runs = 2;
    ar->n_slots = 4;
    ar->slots = calloc(4, sizeof *ar->slots);
    int k = 0;
    for (int i = 0; i < 6; i++)
        if (lt[i].mgr == MP_MGR_ARENA)
            ar->slots[k++] = (mp_arena_slot){i, b->tensors[i].name, (uint64_t)lt[i].off,
                                             lt[i].bytes, lt[i].first, lt[i].last,
                                             MP_KIND_STATIC};
    ar->n_ops = 4;
    ar->free_at_op = calloc(4, sizeof *ar->free_at_op);
    static const uint64_t alive_at[4] = {2048, 2024, 2024, 1024};
    for (int i = 0; i < 4; i++)
        ar->free_at_op[i] = 3072 - alive_at[i];

    p->ops = calloc(4, sizeof *p->ops);
    for (int i = 0; i < 4; i++)
        p->ops[i] = (mp_op_report){i, on[i], 2, 2000, 900, 1100, 1, 64, 64, i == 0 ? 1728 : 0,
                                   lt[i + 2].bytes};
    p->n_unused = 1;
    p->unused_bytes = 512;
    p->n_unused_listed = 1;
    p->unused = calloc(1, sizeof *p->unused);
    p->unused[0] = (mp_unused_block){99, 512, MP_KIND_DYNAMIC, 3, b->tensors[3].name,
                                     MP_PHASE_PREPARE, 5};
    return b;
}

/* A larger profile: n tensors over n_ops operators (one run), an arena with every tensor,
 * a timeline of n_pts points. */
static built *big_profile(int32_t n, int32_t n_ops, size_t n_pts)
{
    built *b = built_new(n, n_ops);
    char name[64];
    for (int32_t i = 0; i < n_ops; i++) {
        snprintf(name, sizeof name, "OP_%d", i % 7);
        b->ops[i].name = keep(b, name);
    }
    mp_profile *p = &b->p;
    p->n_ops = (size_t)n_ops;
    p->n_steps = (uint64_t)n_ops;
    p->reference_run = 1;
    p->n_lifetimes = (size_t)n;
    p->lifetimes = calloc((size_t)n, sizeof *p->lifetimes);
    p->n_arenas = p->n_arenas_total = 1;
    p->reference_arena = 0;
    p->arenas = calloc(1, sizeof *p->arenas);
    mp_arena_report *ar = &p->arenas[0];
    ar->slots = calloc((size_t)n, sizeof *ar->slots);
    ar->n_slots = (size_t)n;
    ar->n_ops = n_ops;
    ar->free_at_op = calloc((size_t)n_ops, sizeof *ar->free_at_op);
    uint64_t off = 0;
    for (int32_t i = 0; i < n; i++) {
        snprintf(name, sizeof name, "model/block_%d/conv%d;fused", i / 3, i);
        b->tensors[i].name = keep(b, name);
        int32_t first = (int32_t)((int64_t)i * n_ops / n), last = first + 1 + i % 5;
        if (last >= n_ops)
            last = n_ops - 1;
        uint64_t bytes = 1024u * (uint64_t)(1 + (i * 37) % 200);
        p->lifetimes[i] = (mp_lifetime){i, b->tensors[i].name, first, last, bytes,
                                        MP_MGR_ARENA, (int64_t)(off % 4000000), 1, -1, NULL,
                                        false};
        ar->slots[i] = (mp_arena_slot){i,     b->tensors[i].name, off % 4000000, bytes,
                                       first, last,               MP_KIND_STATIC};
        off += bytes;
    }
    ar->id = 1;
    ar->bytes = ar->used = 4000000 + 210000;
    ar->lower_bound = 3000000;
    ar->naive = off;
    for (int32_t i = 0; i < n_ops; i++)
        ar->free_at_op[i] = (uint64_t)(i * 7919) % ar->bytes;
    mp_timeline *tl = &p->by_step;
    tl->n = n_pts;
    tl->pts = calloc(n_pts, sizeof *tl->pts);
    for (size_t i = 0; i < n_pts; i++) {
        mp_tl_point *pt = &tl->pts[i];
        pt->step_first = i * (size_t)n_ops / n_pts;
        pt->step_last = (i + 1) * (size_t)n_ops / n_pts;
        pt->ev_first = i * 10;
        pt->ev_last = i * 10 + 9;
        pt->live[MP_KIND_STATIC] = ar->bytes;
        pt->live[MP_KIND_DYNAMIC] = (i * 104729) % 1000000;
        pt->live[MP_KIND_SCRATCH] = (i * 7) % 5000;
        pt->heap = pt->live[MP_KIND_STATIC] + pt->live[MP_KIND_DYNAMIC] +
                   pt->live[MP_KIND_SCRATCH];
        pt->phase_kind = MP_PHASE_RUN;
        pt->run = 1;
        pt->op = (int32_t)(pt->step_first % (size_t)n_ops);
        if (pt->heap > tl->pts[tl->peak].heap)
            tl->peak = i;
    }
    p->summary.peak_heap = tl->pts[tl->peak].heap;
    return b;
}

static char *render_svg(const mp_profile *p, const char *file)
{
    const char *path = tmp_path(file);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    mp_report_svg(f, p);
    assert_int_equal(fclose(f), 0);
    check_xml(path, false);
    return slurp(path, NULL);
}

static char *render_html(const mp_profile *p, const char *file)
{
    const char *path = tmp_path(file);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    mp_report_html(f, p);
    assert_int_equal(fclose(f), 0);
    check_xml(path, true);
    return slurp(path, NULL);
}

/* ---- SVG ------------------------------------------------------------------------------------ */

static void test_svg_document(void **state)
{
    (void)state;
    built *b = small_profile(NULL);
    char *doc = render_svg(&b->p, "small.svg");
    assert_true(strncmp(doc, "<?xml", 5) == 0);
    assert_int_equal(count_of(doc, "class=\"mp-chart "), 3);
    assert_non_null(strstr(doc, "zoo:hand_made"));
    /* The three charts are stacked: each starts below the one before. */
    char *t = chart(doc, "timeline"), *l = chart(doc, "lifetimes"), *a = chart(doc, "arena");
    double yt = attr_num(t, "y"), ht = attr_num(t, "height"), yl = attr_num(l, "y");
    double hl = attr_num(l, "height"), ya = attr_num(a, "y");
    assert_true(yt > 0);
    assert_true(fabs(yl - (yt + ht)) < 0.5);
    assert_true(fabs(ya - (yl + hl)) < 0.5);
    assert_true(attr_num(doc, "height") >= ya + attr_num(a, "height") - 0.5);
    free(t);
    free(l);
    free(a);
    free(doc);
    built_free(b);
}

/* Parse the "x,y x,y ..." of the heap outline. */
static size_t outline(const char *svg, double *xs, double *ys, size_t max)
{
    const char *a = strstr(svg, "class=\"heap-outline\"");
    assert_non_null(a);
    a = strstr(a, "points=\"");
    assert_non_null(a);
    a += 8;
    size_t n = 0;
    while (*a != '"' && n < max) {
        char *e;
        xs[n] = strtod(a, &e);
        assert_true(*e == ',');
        ys[n] = strtod(e + 1, &e);
        n++;
        while (*e == ' ')
            e++;
        a = e;
    }
    return n;
}

static void test_timeline_peak_marker(void **state)
{
    (void)state;
    built *b = small_profile(NULL);
    char *doc = render_svg(&b->p, "peak.svg");
    char *t = chart(doc, "timeline");
    double xs[64], ys[64];
    size_t n = outline(t, xs, ys, 64);
    /* Every point drawn as a level segment (two vertices), in order. */
    assert_int_equal(n, 2 * 9);
    size_t top = 0;
    for (size_t i = 0; i < n; i += 2) {
        assert_true(ys[i] == ys[i + 1]);
        assert_true(xs[i] < xs[i + 1]);
        if (ys[i] < ys[top])
            top = i;
        if (i > 0)
            assert_true(heap_of_point[i / 2] < heap_of_point[i / 2 - 1] ? ys[i] > ys[i - 2]
                        : heap_of_point[i / 2] > heap_of_point[i / 2 - 1] ? ys[i] < ys[i - 2]
                                                                          : ys[i] == ys[i - 2]);
    }
    /* The highest segment is point 7's, and the marker stands on it. */
    assert_int_equal(top, 2 * 7);
    const char *pl = strstr(t, "class=\"peak-line\"");
    assert_non_null(pl);
    double px = attr_num(pl, "x1");
    assert_true(px >= xs[top] && px <= xs[top + 1]);
    assert_true(fabs(attr_num(pl, "x2") - px) < 1e-9);
    /* Its label gives the peak's bytes and where it was. */
    const char *lab = strstr(t, "class=\"peak-label\"");
    assert_non_null(lab);
    assert_non_null(strstr(lab, "peak 4.9 KiB"));
    assert_non_null(strstr(lab, "run 2, op #2 ADD"));
    /* The RSS line is drawn; const is left out of the stack. */
    assert_non_null(strstr(t, "class=\"rss\""));
    assert_null(strstr(t, "kind-const"));
    assert_non_null(strstr(t, "class=\"area kind-static\""));
    free(t);
    free(doc);
    built_free(b);
}

static void test_lifetime_and_slot_titles(void **state)
{
    (void)state;
    built *b = small_profile(NULL);
    char *doc = render_svg(&b->p, "titles.svg");
    char *l = chart(doc, "lifetimes"), *a = chart(doc, "arena");
    char **tt;
    /* One bar per tensor but the constant: 5 bars, each title naming it and its bytes. */
    size_t n = titles_of(l, "<rect class=\"bar\"", &tt);
    assert_int_equal(n, 5);
    for (size_t i = 0; i < b->p.n_lifetimes; i++) {
        const mp_lifetime *lt = &b->p.lifetimes[i];
        char want[256], bytes[64];
        esc(want, sizeof want, lt->name);
        strcat(want, "\n");
        snprintf(bytes, sizeof bytes, "(%llu bytes)", (unsigned long long)lt->bytes);
        size_t hits = 0;
        for (size_t k = 0; k < n; k++)
            if (strncmp(tt[k], want, strlen(want)) == 0 && strstr(tt[k], bytes))
                hits++;
        assert_int_equal(hits, lt->manager == MP_MGR_CONST ? 0 : 1);
    }
    /* Sorted by first operator: input, conv (op 0), relu (1), sum (2), out (3). */
    assert_true(strncmp(tt[0], "input\n", 6) == 0);
    assert_true(strncmp(tt[1], "conv\n", 5) == 0);
    assert_true(strncmp(tt[4], "out\n", 4) == 0);
    assert_non_null(strstr(tt[1], "offset 1024 in arena 17"));
    assert_non_null(strstr(tt[1], "alive from op #0 CONV_2D to op #1 RELU"));
    free_titles(tt, n);

    /* One rectangle per slot, each titled with name, bytes and offset. */
    n = titles_of(a, "<rect class=\"slot\"", &tt);
    assert_int_equal(n, 4);
    const mp_arena_report *ar = &b->p.arenas[0];
    for (size_t i = 0; i < ar->n_slots; i++) {
        char want[128], bytes[64], off[64];
        snprintf(want, sizeof want, "%s\n", ar->slots[i].name);
        snprintf(bytes, sizeof bytes, "(%llu bytes)", (unsigned long long)ar->slots[i].bytes);
        snprintf(off, sizeof off, "offset %llu to %llu", (unsigned long long)ar->slots[i].offset,
                 (unsigned long long)(ar->slots[i].offset + ar->slots[i].bytes));
        size_t hits = 0;
        for (size_t k = 0; k < n; k++)
            if (strncmp(tt[k], want, strlen(want)) == 0 && strstr(tt[k], bytes) &&
                strstr(tt[k], off))
                hits++;
        assert_int_equal(hits, 1);
    }
    free_titles(tt, n);
    /* Lower bound (dashed) below the arena's size: y grows downwards. */
    const char *lb = strstr(a, "class=\"lower-bound\""), *as = strstr(a, "class=\"arena-size\"");
    assert_non_null(lb);
    assert_non_null(as);
    assert_non_null(strstr(lb, "stroke-dasharray"));
    assert_true(attr_num(lb, "y1") > attr_num(as, "y1"));
    /* 2048 / 3072 of the way up: both lines against the plot's 0 line. */
    double y0 = attr_num(strstr(a, "class=\"arena-box\""), "y") +
                attr_num(strstr(a, "class=\"arena-box\""), "height");
    double ratio = (y0 - attr_num(lb, "y1")) / (y0 - attr_num(as, "y1"));
    assert_true(fabs(ratio - 2048.0 / 3072.0) < 0.01);
    assert_non_null(strstr(a, "+50.0 %"));
    /* Free bytes per operator: one bar each. */
    assert_int_equal(count_of(a, "<rect class=\"free\""), 4);
    free(l);
    free(a);
    free(doc);
    built_free(b);
}

/* Hostile: markup characters, control characters, invalid UTF-8 (a lone 0xFF, a lead byte
 * without its continuation, an encoded surrogate) and a CDATA end. */
static const char hostile[] = "a&b<c>\"d'e\x01\tf\xff\xc3(g\xed\xa0\x80h]]>\xc3\xa9";
/* What a reader must get back: each bad byte one U+FFFD, the rest as is. */
#define FFFD "\xef\xbf\xbd"
static const char hostile_back[] =
    "a&b<c>\"d'e" FFFD FFFD "f" FFFD FFFD "(g" FFFD FFFD FFFD "h]]>\xc3\xa9";

static void test_hostile_names(void **state)
{
    (void)state;
    built *b = small_profile(hostile);
    b->ops[1].name = keep(b, "<RELU&>\x02");
    b->meta.model = keep(b, "model \"x\" & <y>\xfe");
    char *doc = render_svg(&b->p, "hostile.svg");
    assert_null(strstr(doc, "a&b"));
    assert_null(strstr(doc, "\x01"));
    char *x = xpath(tmp_path("hostile.svg"),
                    "string(//*[local-name()='rect'][@class='bar'][3]/*[local-name()='title'])");
    if (x) {
        assert_true(strncmp(x, hostile_back, strlen(hostile_back)) == 0);
        assert_true(x[strlen(hostile_back)] == '\n');
        free(x);
    }
    x = xpath(tmp_path("hostile.svg"),
              "string(//*[local-name()='rect'][@class='slot'][2]/*[local-name()='title'])");
    if (x) {
        assert_true(strncmp(x, hostile_back, strlen(hostile_back)) == 0);
        free(x);
    }
    free(doc);
    doc = render_html(&b->p, "hostile.html");
    assert_null(strstr(doc, "a&b"));
    assert_null(strstr(doc, "<RELU"));
    /* in the data island: JSON with < & > as \u escapes, so it cannot end the script */
    assert_non_null(strstr(doc, "\"a\\u0026b\\u003cc\\u003e\\\"d'e\\u0001\\u0009f\\ufffd"));
    free(doc);

    /* The escaper on its own: cut to a number of characters, with an ellipsis. */
    char *buf;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    mp_xml_text(f, "abc\xc3\xa9\xc3\xa9xyz", 5);
    fputc('|', f);
    mp_xml_text(f, "abc", 3);
    fputc('|', f);
    mp_json_text(f, "q\"\\\n\x01\xff");
    fclose(f);
    assert_string_equal(buf, "abc\xc3\xa9\xe2\x80\xa6|abc|q\\\"\\\\\\u000a\\u0001" FFFD);
    free(buf);
    built_free(b);
}

static void test_html_report(void **state)
{
    (void)state;
    built *b = small_profile(NULL);
    char *doc = render_html(&b->p, "small.html");
    assert_true(strncmp(doc, "<!DOCTYPE html>", 15) == 0);
    /* The charts are drawn in the browser (reports/html/report.js, tested in chromium by
     * tests/cli/test_html_browser.sh) from the data island: their places and the data. */
    assert_int_equal(count_of(doc, "<div class=\"timeline\" data-trace=\"0\">"), 1);
    assert_int_equal(count_of(doc, "<div class=\"chart lifetimes\" data-trace=\"0\">"), 1);
    assert_int_equal(count_of(doc, "<div class=\"chart arena\" data-trace=\"0\">"), 1);
    assert_int_equal(count_of(doc, "<script type=\"application/json\" id=\"mp-data\">"), 1);
    assert_non_null(strstr(doc, "\"heap\":["));
    assert_non_null(strstr(doc, "//<![CDATA["));
    assert_null(strstr(doc, "<link"));
    assert_null(strstr(doc, "src="));
    for (size_t i = 0; i < 6; i++) /* every section */
        assert_non_null(strstr(doc, (const char *[]){"id=\"timeline\"", "id=\"peak\"",
                                                      "id=\"lifetimes\"", "id=\"arenas\"",
                                                      "id=\"ops\"", "id=\"waste\""}[i]));
    /* Plan quality: 3072 over a lower bound of 2048 is +50 %, naive 4072 / 3072 = 1.33x. */
    assert_non_null(strstr(doc, "+50.0 %"));
    assert_non_null(strstr(doc, "1.33x"));
    /* Lifetimes table: a row per tensor (the constant too). */
    const char *lt = strstr(doc, "<h3>Every tensor</h3>");
    assert_non_null(lt);
    const char *end = strstr(lt, "</table>");
    char *part = strndup(lt, (size_t)(end - lt));
    assert_int_equal(count_of(part, "<tr") - 1 /* header */, 6);
    free(part);
    free(doc);
    built_free(b);
}

static void test_many_tensors_bounded(void **state)
{
    (void)state;
    /* 500 tensors, 500 operators, 2000 timeline points. */
    built *b = big_profile(500, 500, 2000);
    size_t len;
    char *doc = render_svg(&b->p, "big500.svg");
    len = strlen(doc);
    assert_true(len < 1500000);
    char *l = chart(doc, "lifetimes");
    assert_int_equal(count_of(l, "<rect class=\"bar\""), 500);
    /* Bars at least 1 px high. */
    for (const char *p = strstr(l, "<rect class=\"bar\""); p; p = strstr(p + 1, "<rect class=\"bar\""))
        assert_true(attr_num(p, "height") >= 1.0);
    free(l);
    char *a = chart(doc, "arena");
    assert_int_equal(count_of(a, "<rect class=\"slot\""), 500);
    free(a);
    /* The timeline merges 2000 points into at most a point per pixel. */
    char *t = chart(doc, "timeline");
    double *xs = malloc(8000 * sizeof *xs), *ys = malloc(8000 * sizeof *ys);
    size_t n = outline(t, xs, ys, 8000);
    assert_true(n <= 2 * MP_SVG_WIDTH);
    free(xs);
    free(ys);
    free(t);
    free(doc);
    doc = render_html(&b->p, "big500.html");
    assert_true(strlen(doc) < 2500000);
    free(doc);
    built_free(b);

    /* 20000 tensors and 100000 points: the largest MP_SVG_MAX_SHAPES drawn, the rest noted. */
    b = big_profile(20000, 3000, 100000);
    doc = render_svg(&b->p, "big20k.svg");
    assert_true(strlen(doc) < 4000000);
    l = chart(doc, "lifetimes");
    assert_int_equal(count_of(l, "<rect class=\"bar\""), MP_SVG_MAX_SHAPES);
    assert_non_null(strstr(l, "18000 smallest"));
    free(l);
    a = chart(doc, "arena");
    assert_int_equal(count_of(a, "<rect class=\"slot\""), MP_SVG_MAX_SHAPES);
    assert_true(count_of(a, "<rect class=\"free\"") <= MP_SVG_WIDTH);
    free(a);
    free(doc);
    doc = render_html(&b->p, "big20k.html");
    assert_true(strlen(doc) < 8000000);
    assert_non_null(strstr(doc, "5000 of 20000 rows shown"));
    free(doc);
    built_free(b);
}

static void test_empty_inputs(void **state)
{
    (void)state;
    /* Nothing at all: no meta, no points, no tensors, no arena. */
    mp_profile p;
    memset(&p, 0, sizeof p);
    p.reference_run = -1;
    p.reference_arena = -1;
    p.summary.peak.event = -1;
    p.summary.peak.op = -1;
    p.summary.peak.phase_kind = -1;
    char *doc = render_svg(&p, "empty.svg");
    assert_int_equal(count_of(doc, "class=\"no-data\""), 3);
    free(doc);
    doc = render_html(&p, "empty.html");
    assert_true(count_of(doc, "No data") + count_of(doc, "no data") >= 3);
    free(doc);
    doc = render_html(NULL, "null.html");
    free(doc);

    /* A trace with one point and zero heap, tensors never held, an arena without slots. */
    built *b = built_new(2, 1);
    b->tensors[0].name = keep(b, "t0");
    b->tensors[1].name = keep(b, "t1");
    b->p.n_ops = 1;
    b->p.by_event.n = 1;
    b->p.by_event.pts = calloc(1, sizeof *b->p.by_event.pts);
    b->p.by_event.pts[0].phase_kind = -1;
    b->p.by_event.pts[0].op = -1;
    b->p.n_lifetimes = 2;
    b->p.lifetimes = calloc(2, sizeof *b->p.lifetimes);
    for (int i = 0; i < 2; i++)
        b->p.lifetimes[i] = (mp_lifetime){i, b->tensors[i].name, -1, -1, 0, MP_MGR_NONE, -1, 0,
                                          -1, NULL, false};
    b->p.n_arenas = 1;
    b->p.arenas = calloc(1, sizeof *b->p.arenas);
    doc = render_svg(&b->p, "zero.svg");
    assert_int_equal(count_of(doc, "class=\"no-data\""), 2); /* lifetimes, arena */
    assert_non_null(strstr(doc, "class=\"heap-outline\""));
    free(doc);
    free(render_html(&b->p, "zero.html"));
    built_free(b);
}

static void test_arena_document(void **state)
{
    (void)state;
    built *b = small_profile(NULL);
    const char *path = tmp_path("plan.svg");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    mp_svg_arena_document(f, &b->p.arenas[0], NULL, NULL);
    assert_int_equal(fclose(f), 0);
    check_xml(path, false);
    char *doc = slurp(path, NULL);
    assert_int_equal(count_of(doc, "<rect class=\"slot\""), 4);
    assert_non_null(strstr(doc, "ops #0 to #1")); /* no meta: operators by index */
    free(doc);

    f = fopen(path, "w");
    mp_svg_arena_document(f, &b->p.arenas[0], &b->meta, "plan & <title>");
    assert_int_equal(fclose(f), 0);
    check_xml(path, false);
    doc = slurp(path, NULL);
    assert_non_null(strstr(doc, "plan &amp; &lt;title&gt;"));
    assert_non_null(strstr(doc, "ops #0 CONV_2D to #1 RELU"));
    free(doc);

    f = fopen(path, "w");
    mp_svg_arena_document(f, NULL, NULL, NULL);
    assert_int_equal(fclose(f), 0);
    check_xml(path, false);
    doc = slurp(path, NULL);
    assert_non_null(strstr(doc, "no data"));
    free(doc);
    built_free(b);
}

static void test_ticks(void **state)
{
    (void)state;
    char buf[32];
    assert_int_equal(mp_nice_step(0, 5), 1);
    assert_int_equal(mp_nice_step(9, 10), 1);
    assert_int_equal(mp_nice_step(100, 8), 20);
    assert_int_equal(mp_nice_step(1000, 10), 100);
    assert_int_equal(mp_nice_bytes_step(5000, 5), 1024);
    assert_int_equal(mp_nice_bytes_step(6 << 20, 5), 2 << 20);
    assert_int_equal(mp_nice_bytes_step(1536 * 1024, 5), 500 * 1024);
    assert_string_equal(mp_svg_fmt_tick(buf, sizeof buf, 1500 * 1024, 500 * 1024), "1500 KiB");
    assert_string_equal(mp_svg_fmt_tick(buf, sizeof buf, 4 << 20, 2 << 20), "4 MiB");
    assert_string_equal(mp_svg_fmt_tick(buf, sizeof buf, 0, 2 << 20), "0");
    assert_string_equal(mp_svg_fmt_tick(buf, sizeof buf, 200, 100), "200 B");
}

/* ---- Chrome trace ------------------------------------------------------------------------------ */

typedef struct tb {
    mp_trace *tr;
    uint32_t phase;
    uint32_t n_phases;
} tb;

static void put(tb *b, int type, uint64_t t, uint64_t id, uint64_t bytes, int kind,
                int32_t op, uint64_t aux)
{
    mp_event e;
    memset(&e, 0, sizeof e);
    e.type = (uint8_t)type;
    e.t_ns = t;
    e.id = id;
    e.bytes = bytes;
    e.kind = (uint8_t)kind;
    e.tensor = -1;
    e.op = op;
    e.op_last = -1;
    e.aux = aux;
    if (type == MP_EV_PHASE_BEGIN)
        b->phase = b->n_phases++;
    e.phase = b->phase;
    assert_true(mp_trace_append_raw(b->tr, &e));
}

#define ALLOC(t, id, bytes, kind) put(&b, MP_EV_ALLOC, t, id, bytes, kind, -1, 0)
#define FREE(t, id, bytes, kind) put(&b, MP_EV_FREE, t, id, bytes, kind, -1, 0)
#define PHASE(t, kind, run) put(&b, MP_EV_PHASE_BEGIN, t, run, 0, 0, -1, kind)
#define PHASE_END(t) put(&b, MP_EV_PHASE_END, t, 0, 0, 0, -1, 0)
#define OP(t, op) put(&b, MP_EV_OP_BEGIN, t, 0, 0, 0, op, 0)
#define OP_END(t, op) put(&b, MP_EV_OP_END, t, 0, 0, 0, op, 0)

/* Expected counter values: (ts in ns, bytes). */
typedef struct cv {
    uint64_t t, v;
} cv;

static uint64_t ns_of(json_t *ts)
{
    assert_true(json_is_number(ts));
    return (uint64_t)llround(json_number_value(ts) * 1000.0);
}

typedef struct slice {
    uint64_t b, e;
    const char *name, *cat;
    int64_t run;
} slice;

static int slice_order(const void *x, const void *y)
{
    const slice *a = x, *b = y;
    if (a->b != b->b)
        return a->b < b->b ? -1 : 1;
    if (a->e != b->e)
        return a->e > b->e ? -1 : 1; /* the longer (parent) first */
    return strcmp(a->cat, b->cat) > 0 ? -1 : strcmp(a->cat, b->cat) < 0; /* phase before op */
}

static void test_chrome_trace(void **state)
{
    (void)state;
    tb b = {mp_trace_create(), UINT32_MAX, 0};
    assert_non_null(b.tr);
    assert_true(mp_trace_alloc_tables(b.tr, 2, 2, 0, 0));
    mp_trace_meta *m = mp_trace_meta_mut(b.tr);
    assert_true(mp_trace_set_str(b.tr, &m->model, "zoo:chrome \"test\""));
    assert_true(mp_trace_set_str(b.tr, &m->tensors[0].name, "in"));
    assert_true(mp_trace_set_str(b.tr, &m->tensors[1].name, "out\x01\xff"));
    int32_t t0 = 0, t1 = 1;
    assert_true(mp_trace_set_op(b.tr, 0, "CONV_2D", 1, &t0, 1, &t1));
    assert_true(mp_trace_set_op(b.tr, 1, "SOFT\"MAX\\\n\xc3", 1, &t1, 1, &t0));

    PHASE(100, MP_PHASE_LOAD, 0);
    ALLOC(150, 1, 800, MP_KIND_ENGINE);
    PHASE_END(200);
    PHASE(300, MP_PHASE_PREPARE, 0);
    ALLOC(350, 2, 4096, MP_KIND_STATIC);
    put(&b, MP_EV_ALLOC, 370, 3, 1000, MP_KIND_KERNEL, 0, 0);
    PHASE_END(400);
    PHASE(500, MP_PHASE_RUN, 1);
    OP(510, 0);
    ALLOC(520, 4, 64, MP_KIND_SCRATCH);
    FREE(530, 4, 64, MP_KIND_SCRATCH);
    OP_END(540, 0);
    OP(550, 1);
    ALLOC(560, 5, 128, MP_KIND_DYNAMIC);
    OP_END(570, 1);
    {
        mp_event e;
        memset(&e, 0, sizeof e);
        e.type = MP_EV_COPY;
        e.t_ns = 580;
        e.tensor = 1;
        e.op = e.op_last = -1;
        e.bytes = 40;
        e.aux = MP_COPY_OUT;
        e.phase = b.phase;
        assert_true(mp_trace_append_raw(b.tr, &e));
    }
    PHASE_END(600);
    put(&b, MP_EV_RSS, 605, 0, 1000000, 0, -1, 2000000);
    PHASE(700, MP_PHASE_RUN, 2);
    OP(710, 0);
    put(&b, MP_EV_REALLOC, 720, 5, 256, MP_KIND_DYNAMIC, -1, 128);
    OP_END(730, 0);
    OP(740, 1);
    FREE(750, 5, 256, MP_KIND_DYNAMIC);
    OP_END(760, 1);
    OP(770, 0); /* left open: the phase's end closes it */
    PHASE_END(800);
    PHASE(900, MP_PHASE_TEARDOWN, 0);
    FREE(910, 3, 1000, MP_KIND_KERNEL);
    FREE(920, 2, 4096, MP_KIND_STATIC);
    FREE(930, 1, 800, MP_KIND_ENGINE);
    PHASE_END(950);

    mp_source *src = mp_source_of_trace(b.tr);
    assert_non_null(src);
    const char *path = tmp_path("trace.chrome.json");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    mp_error err = {0};
    mp_status st = mp_report_chrome(src, f, &err);
    if (st != MP_OK)
        fail_msg("mp_report_chrome: %s", err.msg);
    assert_int_equal(fclose(f), 0);
    /* Twice over the same source gives the same output (each call rewinds). */
    const char *path2 = tmp_path("trace2.chrome.json");
    f = fopen(path2, "w");
    assert_int_equal(mp_report_chrome(src, f, &err), MP_OK);
    assert_int_equal(fclose(f), 0);
    char *one = slurp(path, NULL), *two = slurp(path2, NULL);
    assert_string_equal(one, two);
    free(one);
    free(two);
    mp_source_close(src);

    /* Through a saved file: the same output; a damaged file fails before writing. */
    const char *saved = tmp_path("trace.json");
    assert_int_equal(mp_trace_save(b.tr, saved, &err), MP_OK);
    assert_int_equal(mp_source_open(saved, &src, &err), MP_OK);
    const char *path3 = tmp_path("trace3.chrome.json");
    f = fopen(path3, "w");
    st = mp_report_chrome(src, f, &err);
    if (st != MP_OK)
        fail_msg("mp_report_chrome (file): %s", err.msg);
    assert_int_equal(fclose(f), 0);
    mp_source_close(src);
    one = slurp(path, NULL);
    two = slurp(path3, NULL);
    /* The saved trace holds invalid UTF-8 in names as '?' (trace_io.c): so must the output. */
    for (char *q = strstr(one, FFFD); q; q = strstr(q + 1, FFFD)) {
        *q = '?';
        memmove(q + 1, q + 3, strlen(q + 3) + 1);
    }
    assert_string_equal(one, two);
    free(one);
    free(two);
    size_t len;
    char *text = slurp(saved, &len);
    char *cut = strrchr(text, '[');          /* the last event's line: break it */
    assert_non_null(cut);
    cut[1] = 'x';
    f = fopen(saved, "w");
    fwrite(text, 1, len, f);
    fclose(f);
    free(text);
    assert_int_equal(mp_source_open(saved, &src, &err), MP_OK);
    f = fopen(path3, "w");
    assert_int_equal(mp_report_chrome(src, f, &err), MP_ERR_FORMAT);
    assert_int_equal(ftell(f), 0);
    fclose(f);
    mp_source_close(src);

    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    if (!root)
        fail_msg("chrome trace does not parse: %s (line %d)", jerr.text, jerr.line);
    assert_string_equal(json_string_value(json_object_get(root, "displayTimeUnit")), "ns");
    json_t *evs = json_object_get(root, "traceEvents");
    assert_true(json_is_array(evs));

    /* Counters per kind, worked out from the events above; each starts with 0 at the first
     * event (100 ns). */
    static const cv engine[] = {{100, 0}, {150, 800}, {930, 0}};
    static const cv stat[] = {{100, 0}, {350, 4096}, {920, 0}};
    static const cv kernel[] = {{100, 0}, {370, 1000}, {910, 0}};
    static const cv scratch[] = {{100, 0}, {520, 64}, {530, 0}};
    static const cv dyn[] = {{100, 0}, {560, 128}, {720, 256}, {750, 0}};
    static const cv heap[] = {{100, 0},    {150, 800},  {350, 4896}, {370, 5896},
                              {520, 5960}, {530, 5896}, {560, 6024}, {720, 6152},
                              {750, 5896}, {910, 4896}, {920, 800},  {930, 0}};
    static const struct { const char *name; const cv *v; size_t n; } want[] = {
        {"engine", engine, 3}, {"static", stat, 3},  {"kernel", kernel, 3},
        {"scratch", scratch, 3}, {"dynamic", dyn, 4}, {"heap", heap, 12},
        {"const", NULL, 0},    {"io", NULL, 0}};
    for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
        size_t k = 0;
        size_t i;
        json_t *e;
        json_array_foreach(evs, i, e) {
            const char *ph = json_string_value(json_object_get(e, "ph"));
            const char *name = json_string_value(json_object_get(e, "name"));
            if (!ph || strcmp(ph, "C") != 0 || strcmp(name, want[w].name) != 0)
                continue;
            assert_true(k < want[w].n);
            assert_int_equal(json_integer_value(json_object_get(e, "pid")), 1);
            assert_int_equal(ns_of(json_object_get(e, "ts")), want[w].v[k].t);
            json_t *v = json_object_get(json_object_get(e, "args"), "bytes");
            assert_true(json_is_integer(v));
            assert_int_equal((uint64_t)json_integer_value(v), want[w].v[k].v);
            k++;
        }
        if (k != want[w].n)
            fail_msg("counter %s: %zu values, want %zu", want[w].name, k, want[w].n);
    }

    /* Slices: all on one thread, properly nested. */
    slice sl[32];
    size_t ns = 0, i;
    json_t *e;
    bool named_process = false, named_thread = false, copy = false, rss = false;
    json_array_foreach(evs, i, e) {
        const char *ph = json_string_value(json_object_get(e, "ph"));
        const char *name = json_string_value(json_object_get(e, "name"));
        assert_non_null(ph);
        assert_non_null(name);
        if (strcmp(ph, "M") == 0) {
            const char *v = json_string_value(json_object_get(json_object_get(e, "args"), "name"));
            if (strcmp(name, "process_name") == 0)
                named_process = strcmp(v, "memprof: zoo:chrome \"test\"") == 0;
            if (strcmp(name, "thread_name") == 0)
                named_thread = true;
        } else if (strcmp(ph, "i") == 0) {
            copy = strcmp(name, "copy out") == 0 && ns_of(json_object_get(e, "ts")) == 580 &&
                   strcmp(json_string_value(json_object_get(json_object_get(e, "args"), "name")),
                          "out\x01" FFFD) == 0; /* JSON keeps control characters */
        } else if (strcmp(ph, "C") == 0) {
            if (strcmp(name, "process") == 0)
                rss = json_integer_value(json_object_get(json_object_get(e, "args"), "rss")) ==
                      1000000; /* the kinds' counters are checked above */
        } else if (strcmp(ph, "X") == 0) {
            assert_true(ns < 32);
            assert_int_equal(json_integer_value(json_object_get(e, "pid")), 1);
            assert_int_equal(json_integer_value(json_object_get(e, "tid")), 1);
            sl[ns].b = ns_of(json_object_get(e, "ts"));
            sl[ns].e = sl[ns].b + ns_of(json_object_get(e, "dur"));
            sl[ns].name = name;
            sl[ns].cat = json_string_value(json_object_get(e, "cat"));
            json_t *run = json_object_get(json_object_get(e, "args"), "run");
            sl[ns].run = run ? json_integer_value(run) : -1;
            ns++;
        } else {
            fail_msg("unexpected event phase %s", ph);
        }
    }
    assert_true(named_process && named_thread && copy && rss);
    /* 5 phases, 2 operators in run 1, 3 in run 2. */
    assert_int_equal(ns, 10);
    qsort(sl, ns, sizeof *sl, slice_order);
    static const struct { uint64_t b, e; const char *name; } order[10] = {
        {100, 200, "load"},     {300, 400, "prepare"},   {500, 600, "run 1"},
        {510, 540, "#0 CONV_2D"}, {550, 570, "#1 SOFT\"MAX\\\n" FFFD},
        {700, 800, "run 2"},    {710, 730, "#0 CONV_2D"}, {740, 760, "#1 SOFT\"MAX\\\n" FFFD},
        {770, 800, "#0 CONV_2D"}, {900, 950, "teardown"}};
    const slice *stack[8];
    size_t depth = 0;
    size_t ops_in_run[3] = {0};
    for (size_t k = 0; k < ns; k++) {
        assert_int_equal(sl[k].b, order[k].b);
        assert_int_equal(sl[k].e, order[k].e);
        assert_string_equal(sl[k].name, order[k].name);
        /* Leave the slices that do not contain this one: they must have ended by then. */
        while (depth > 0 && !(stack[depth - 1]->b <= sl[k].b && sl[k].e <= stack[depth - 1]->e)) {
            assert_true(stack[depth - 1]->e <= sl[k].b);
            depth--;
        }
        if (depth > 0) {
            const slice *parent = stack[depth - 1];
            /* Within its parent; operators inside their run's phase. */
            assert_true(parent->b <= sl[k].b && sl[k].e <= parent->e);
            assert_string_equal(sl[k].cat, "op");
            assert_string_equal(parent->cat, "phase");
            assert_int_equal(sl[k].run, parent->run);
            ops_in_run[sl[k].run]++;
        } else {
            assert_string_equal(sl[k].cat, "phase");
        }
        stack[depth++] = &sl[k];
    }
    assert_int_equal(ops_in_run[1], 2);
    assert_int_equal(ops_in_run[2], 3);
    json_decref(root);
    mp_trace_destroy(b.tr);
}

/* An empty trace still gives a valid file; a failing output is reported. */
static void test_chrome_empty_and_errors(void **state)
{
    (void)state;
    mp_trace *tr = mp_trace_create();
    mp_source *src = mp_source_of_trace(tr);
    const char *path = tmp_path("empty.chrome.json");
    FILE *f = fopen(path, "w");
    mp_error err = {0};
    assert_int_equal(mp_report_chrome(src, f, &err), MP_OK);
    fclose(f);
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    assert_non_null(root);
    assert_true(json_is_array(json_object_get(root, "traceEvents")));
    json_decref(root);
    assert_int_equal(mp_report_chrome(NULL, stdout, &err), MP_ERR_ARG);
    f = fopen("/dev/full", "w");
    if (f) {
        assert_int_equal(mp_report_chrome(src, f, &err), MP_ERR_IO);
        fclose(f);
    }
    mp_source_close(src);
    mp_trace_destroy(tr);
}

/* Many events through a memory source: the output grows with them, memory does not (the
 * replay keeps only what is live). */
static void test_chrome_many_events(void **state)
{
    (void)state;
    tb b = {mp_trace_create(), UINT32_MAX, 0};
    assert_true(mp_trace_alloc_tables(b.tr, 1, 3, 0, 0));
    for (int32_t o = 0; o < 3; o++)
        assert_true(mp_trace_set_op(b.tr, o, "ADD", 0, NULL, 0, NULL));
    uint64_t t = 1;
    for (uint64_t run = 1; run <= 2000; run++) {
        PHASE(t++, MP_PHASE_RUN, run);
        for (int32_t o = 0; o < 3; o++) {
            OP(t++, o);
            ALLOC(t++, run * 10 + (uint64_t)o, 100, MP_KIND_DYNAMIC);
            FREE(t++, run * 10 + (uint64_t)o, 100, MP_KIND_DYNAMIC);
            OP_END(t++, o);
        }
        PHASE_END(t++);
    }
    mp_source *src = mp_source_of_trace(b.tr);
    const char *path = tmp_path("many.chrome.json");
    FILE *f = fopen(path, "w");
    mp_error err = {0};
    assert_int_equal(mp_report_chrome(src, f, &err), MP_OK);
    fclose(f);
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    assert_non_null(root);
    size_t x = 0, c = 0, i;
    json_t *e;
    json_array_foreach(json_object_get(root, "traceEvents"), i, e) {
        const char *ph = json_string_value(json_object_get(e, "ph"));
        x += strcmp(ph, "X") == 0;
        c += strcmp(ph, "C") == 0;
    }
    assert_int_equal(x, 2000 * 4);
    assert_int_equal(c, 2 * (1 + 2000 * 3 * 2)); /* dynamic and heap: 0, then up and down */
    json_decref(root);
    mp_source_close(src);
    mp_trace_destroy(b.tr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_svg_document),
        cmocka_unit_test(test_timeline_peak_marker),
        cmocka_unit_test(test_lifetime_and_slot_titles),
        cmocka_unit_test(test_hostile_names),
        cmocka_unit_test(test_html_report),
        cmocka_unit_test(test_many_tensors_bounded),
        cmocka_unit_test(test_empty_inputs),
        cmocka_unit_test(test_arena_document),
        cmocka_unit_test(test_ticks),
        cmocka_unit_test(test_chrome_trace),
        cmocka_unit_test(test_chrome_empty_and_errors),
        cmocka_unit_test(test_chrome_many_events),
    };
    return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}
