/* The ncurses front end of `memprof tui` (see screen.h): lays out the header (where the
 * cursor is, the heap and each kind then), the chart of the window (one column per slice
 * of events, stacked by kind), the list of what is alive at the cursor, and a status line;
 * and turns keys into cursor, window and view changes. Everything it shows comes from
 * tui/index.h. */
#include "tui/screen.h"

#include <curses.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reports/text_summary.h"
#include "reports/units.h"

const char *const mp_tui_key_help[] = {
    "Left h / Right l      previous / next event",
    "H / L                 one column left / right",
    "[ p / ] n             previous / next operator start",
    "+ = / -               zoom in / out around the cursor",
    "< , / > .             pan left / right (also Shift-Left / Shift-Right)",
    "Home g / End G        first / last event",
    "P                     jump to the heap peak",
    "k                     kind shown: all stacked, then each kind alone",
    "/ NAME Enter          search a tensor by name (Enter again: next match)",
    "a / f                 that tensor's next allocation / free",
    "Up Down PgUp PgDn     scroll the list of what is alive",
    "?                     this help (any key closes it)",
    "q                     quit",
    NULL};

#define GUTTER 10         /* columns left of the chart (y labels) */
#define QUERY_MAX 128

/* Chart characters and colours per kind (readable without colours). */
static const char k_kind_char[MP_KIND_COUNT] = {'.', '#', '@', '%', '=', '~', ':',
                                                [MP_KIND_VARIABLE] = '$',
                                                [MP_KIND_TRAIN_ACTIVATION] = 'a',
                                                [MP_KIND_TRAIN_TRAINABLE] = 't',
                                                [MP_KIND_TRAIN_BACKPROP] = 'b',
                                                [MP_KIND_TRAIN_GRADIENT] = 'g',
                                                [MP_KIND_TRAIN_OPTIMIZER] = 'o',
                                                [MP_KIND_TRAIN_DISPOSABLE] = 'd',
                                                [MP_KIND_TRAIN_EXTRA] = 'x'};
static const short k_kind_color[MP_KIND_COUNT] = {COLOR_WHITE, COLOR_BLUE, COLOR_RED,
                                                  COLOR_YELLOW, COLOR_MAGENTA, COLOR_GREEN,
                                                  COLOR_CYAN, [MP_KIND_VARIABLE] = COLOR_BLUE,
                                                  [MP_KIND_TRAIN_ACTIVATION] = COLOR_BLUE,
                                                  [MP_KIND_TRAIN_TRAINABLE] = COLOR_YELLOW,
                                                  [MP_KIND_TRAIN_BACKPROP] = COLOR_RED,
                                                  [MP_KIND_TRAIN_GRADIENT] = COLOR_MAGENTA,
                                                  [MP_KIND_TRAIN_OPTIMIZER] = COLOR_GREEN,
                                                  [MP_KIND_TRAIN_DISPOSABLE] = COLOR_WHITE,
                                                  [MP_KIND_TRAIN_EXTRA] = COLOR_CYAN};
/* Stack order, bottom first (heap kinds; const is not heap). */
static const int k_stack[] = {MP_KIND_STATIC, MP_KIND_DYNAMIC, MP_KIND_SCRATCH, MP_KIND_KERNEL,
                              MP_KIND_IO, MP_KIND_ENGINE, MP_KIND_VARIABLE,
                              MP_KIND_TRAIN_ACTIVATION, MP_KIND_TRAIN_TRAINABLE,
                              MP_KIND_TRAIN_BACKPROP, MP_KIND_TRAIN_GRADIENT,
                              MP_KIND_TRAIN_OPTIMIZER, MP_KIND_TRAIN_DISPOSABLE,
                              MP_KIND_TRAIN_EXTRA};
#define N_STACK ((int)(sizeof k_stack / sizeof k_stack[0]))
/* Views cycled by `k`: -1 = every heap kind stacked, then each kind; the training
 * categories (memprof train's traces) only when the trace has them (is_shown_view). */
static const int k_views[] = {-1, MP_KIND_STATIC, MP_KIND_DYNAMIC, MP_KIND_SCRATCH,
                              MP_KIND_KERNEL, MP_KIND_IO, MP_KIND_ENGINE, MP_KIND_VARIABLE,
                              MP_KIND_CONST, MP_KIND_TRAIN_ACTIVATION, MP_KIND_TRAIN_TRAINABLE,
                              MP_KIND_TRAIN_BACKPROP, MP_KIND_TRAIN_GRADIENT,
                              MP_KIND_TRAIN_OPTIMIZER, MP_KIND_TRAIN_DISPOSABLE,
                              MP_KIND_TRAIN_EXTRA};
#define N_VIEWS ((int)(sizeof k_views / sizeof k_views[0]))

/* The trace has memory of a training category (a memprof train trace). */
static bool has_training_kinds(const mp_tui_index *m)
{
    for (int k = MP_KIND_TRAIN_ACTIVATION; k < MP_KIND_COUNT; k++)
        if (mp_tui_kind_peak(m, k) > 0)
            return true;
    return false;
}

/* The inference kinds' views are always offered; a training category's when the trace
 * has it. */
static bool is_shown_view(const mp_tui_index *m, int kind)
{
    return kind < MP_KIND_TRAIN_ACTIVATION || mp_tui_kind_peak(m, kind) > 0;
}

static volatile sig_atomic_t g_signal;

static void on_signal(int sig)
{
    g_signal = sig;
}

typedef struct ui {
    mp_tui_index *m;
    const char *title;
    size_t n;
    size_t cursor;
    mp_tui_window win;
    int view;                     /* index in k_views */
    bool help, prompt, color;
    char query[QUERY_MAX];
    size_t qlen;
    char last_query[QUERY_MAX];
    int32_t found;                /* tensor found by the last search, -1 = none */
    mp_tui_tensor_events te;
    char msg[256];
    size_t list_top;
    mp_tui_column *cols;
    int cap_cols;
    mp_error *err;
} ui;

/* ---- text helpers ----------------------------------------------------------------------- */

static void set_msg(ui *u, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void set_msg(ui *u, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(u->msg, sizeof u->msg, fmt, ap);
    va_end(ap);
}

/* Printable ASCII copy of s (others become '?'), cut to width with "..." when longer. */
static void fit(char *dst, size_t n, const char *s, int width)
{
    if (!s)
        s = "?";
    size_t w = width > 0 ? (size_t)width : 0, len = strlen(s), k = 0;
    if (w + 1 < n)
        n = w + 1;
    for (; k + 1 < n && k < len; k++) {
        unsigned char c = (unsigned char)s[k];
        dst[k] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    dst[k] = 0;
    if (k < len && k >= 3)
        memcpy(dst + k - 3, "...", 3);
}

/* Print at (y, x), never past the right edge. */
static void put(int y, int x, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void put(int y, int x, const char *fmt, ...)
{
    char buf[1024], safe[1024];
    if (y < 0 || y >= LINES || x >= COLS)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fit(safe, sizeof safe, buf, COLS - x);
    mvaddstr(y, x, safe);
}

static const char *bytes_str(char *buf, size_t n, uint64_t b)
{
    return mp_fmt_bytes(buf, n, b);
}

static int view_kind(const ui *u)
{
    return k_views[u->view];
}

static int chart_cols(const ui *u)
{
    int w = COLS - GUTTER - 1;
    if (w < 1)
        w = 1;
    return (size_t)w > u->n ? (int)u->n : w;
}

static int chart_rows(void)
{
    int h = (LINES - 9) / 2;
    return h < 3 ? 3 : h;
}

/* ---- drawing ---------------------------------------------------------------------------- */

static void draw_too_small(void)
{
    const char *lines[3] = {"terminal too small", NULL, "q quits"};
    char need[64];
    snprintf(need, sizeof need, "%dx%d, need %dx%d", COLS, LINES, MP_TUI_MIN_COLS,
             MP_TUI_MIN_LINES);
    lines[1] = need;
    for (int i = 0; i < 3 && i < LINES; i++)
        put(i, 0, "%s", lines[i]);
}

static void describe(const ui *u, const mp_summary_alive *a, char *d, size_t n)
{
    const char *kind = mp_kind_label(a->kind);
    char opn[48];
    if (a->op >= 0)
        snprintf(opn, sizeof opn, "op #%" PRId32 " %s", a->op, mp_tui_op_name(u->m, a->op));
    else
        snprintf(opn, sizeof opn, "no producer");
    switch (a->home) {
    case MP_SUMMARY_BLOCK:
        snprintf(d, n, "%s  (%s block, %s)", a->name ? a->name : "?", kind, opn);
        break;
    case MP_SUMMARY_SLOT:
        snprintf(d, n, "%s  (slot in arena %" PRIu64 ", %s)", a->name ? a->name : "?", a->id,
                 opn);
        break;
    case MP_SUMMARY_SCRATCH:
        snprintf(d, n, "scratch of %s  (slot in arena %" PRIu64 ")", opn, a->id);
        break;
    case MP_SUMMARY_OP_BUFFERS:
        snprintf(d, n, "%s buffers of %s  (%" PRIu32 " block%s)", kind, opn, a->n_blocks,
                 a->n_blocks == 1 ? "" : "s");
        break;
    case MP_SUMMARY_OWNERLESS:
        snprintf(d, n, "%s buffers, no owner  (%" PRIu32 " block%s)", kind, a->n_blocks,
                 a->n_blocks == 1 ? "" : "s");
        break;
    case MP_SUMMARY_ARENA_FREE:
        snprintf(d, n, "arena %" PRIu64 ": bytes no alive tensor uses", a->id);
        break;
    case MP_SUMMARY_ARENA:
    {
        char what[96];
        mp_report_arena_contents(a, what, sizeof what);
        snprintf(d, n, "planned arena %" PRIu64 "  (%s)", a->id, what);
        break;
    }
    default:
        snprintf(d, n, "?");
        break;
    }
}

static void kind_attr(const ui *u, int kind, bool on)
{
    if (!u->color)
        return;
    if (on)
        attron(COLOR_PAIR(kind + 1));
    else
        attroff(COLOR_PAIR(kind + 1));
}

static void draw_header(const ui *u, const mp_tui_at *at)
{
    char t[32], b1[32], b2[32], title[256];
    fit(title, sizeof title, u->title, 60);
    int vk = view_kind(u);
    attron(A_REVERSE);
    mvhline(0, 0, ' ', COLS);
    put(0, 0, " memprof tui  %s  %zu events  view: %s", title, u->n,
        vk < 0 ? "all kinds stacked" : mp_kind_label(vk));
    if (COLS > 70)
        put(0, COLS - 16, "? help  q quit");
    attroff(A_REVERSE);

    char phase[32], run[32], op[96];
    snprintf(phase, sizeof phase, "%s", at->phase_kind >= 0 ? mp_phase_label(at->phase_kind)
                                                             : "-");
    if (at->run)
        snprintf(run, sizeof run, "%" PRIu64, at->run);
    else
        snprintf(run, sizeof run, "-");
    if (at->op >= 0)
        snprintf(op, sizeof op, "#%" PRId32 " %s", at->op, mp_tui_op_name(u->m, at->op));
    else
        snprintf(op, sizeof op, "-");
    put(1, 0, "event #%zu of %zu  phase %s  run %s  op %s  t %s  (%s)", at->event, u->n, phase,
        run, op, mp_fmt_ns(t, sizeof t, at->t_ns), mp_ev_type_name(at->type));
    uint64_t peak = mp_tui_peak_heap(u->m);
    size_t pe = mp_tui_peak_event(u->m);
    if (pe == SIZE_MAX)
        put(2, 0, "heap %s (%" PRIu64 " B)  peak: the heap is never above 0",
            bytes_str(b1, sizeof b1, at->heap), at->heap);
    else
        put(2, 0, "heap %s (%" PRIu64 " B)  peak %s (%" PRIu64 " B) at event #%zu%s",
            bytes_str(b1, sizeof b1, at->heap), at->heap, bytes_str(b2, sizeof b2, peak), peak,
            pe, pe == at->event ? "  <- PEAK" : "");
    /* legend with each kind's bytes at the cursor (for a training trace, only the kinds it
     * has, so that its categories fit) */
    bool training = has_training_kinds(u->m);
    int x = 0;
    for (int i = 0; i <= N_STACK && x < COLS; i++) {
        int k = i < N_STACK ? k_stack[i] : MP_KIND_CONST;
        if (training && k != vk && mp_tui_kind_peak(u->m, k) == 0)
            continue;
        char item[64];
        snprintf(item, sizeof item, "%c %s %s", k_kind_char[k], mp_kind_label(k),
                 bytes_str(b1, sizeof b1, at->live[k]));
        bool shown = vk < 0 ? k != MP_KIND_CONST : vk == k;
        if (shown && vk >= 0)
            attron(A_BOLD | A_UNDERLINE);
        kind_attr(u, k, true);
        put(3, x, "%s", item);
        kind_attr(u, k, false);
        attroff(A_BOLD | A_UNDERLINE);
        x += (int)strlen(item) + 2;
    }
}

/* The kind drawn in a cell whose middle is at value mid of a stacked column. */
static int stack_kind_at(const mp_tui_column *c, double mid)
{
    double cum = 0;
    int last = MP_KIND_STATIC;
    for (int i = 0; i < N_STACK; i++) {
        int k = k_stack[i];
        if (c->live[k] == 0)
            continue;
        cum += (double)c->live[k];
        last = k;
        if (mid < cum)
            return k;
    }
    return last;
}

static bool draw_chart(ui *u, int top, int h, int ncols)
{
    if (ncols > u->cap_cols) {
        mp_tui_column *p = realloc(u->cols, (size_t)ncols * sizeof *p);
        if (!p) {
            mp_fail(u->err, MP_ERR_NOMEM, "out of memory drawing the chart");
            return false;
        }
        u->cols = p;
        u->cap_cols = ncols;
    }
    if (mp_tui_columns(u->m, &u->win, ncols, u->cols, u->err) != MP_OK)
        return false;
    int vk = view_kind(u);
    uint64_t ymax = 0;
    for (int c = 0; c < ncols; c++) {
        uint64_t v = vk < 0 ? u->cols[c].heap : u->cols[c].kind_max[vk];
        ymax = v > ymax ? v : ymax;
    }
    if (ymax == 0)
        ymax = 1;
    char b[32];
    put(top, 0, "%9s", bytes_str(b, sizeof b, ymax));
    put(top + h / 2, 0, "%9s", bytes_str(b, sizeof b, ymax / 2));
    put(top + h - 1, 0, "%9s", "0 B");
    int cur = mp_tui_col_of(&u->win, ncols, u->cursor);
    size_t pe = mp_tui_peak_event(u->m);
    int peak_col = pe == SIZE_MAX ? -1 : mp_tui_col_of(&u->win, ncols, pe);
    for (int c = 0; c < ncols; c++) {
        const mp_tui_column *col = &u->cols[c];
        uint64_t v = vk < 0 ? col->heap : col->kind_max[vk];
        int x = GUTTER + c;
        for (int r = 0; r < h; r++) { /* r = 0 is the bottom row */
            double lo = (double)ymax * r / h, mid = (double)ymax * (r + 0.5) / h;
            int y = top + h - 1 - r;
            chtype ch = ' ';
            int k = -1;
            if (col->at != SIZE_MAX && (double)v > lo) {
                k = vk >= 0 ? vk : stack_kind_at(col, mid < (double)v ? mid : (double)v - 0.5);
                ch = (chtype)(unsigned char)k_kind_char[k];
                if (u->color)
                    ch |= COLOR_PAIR(k + 1);
            }
            if (c == cur)
                ch |= A_REVERSE;
            mvaddch(y, x, ch);
        }
        chtype axis = c == cur ? '^' : c == peak_col ? 'P' : '-';
        mvaddch(top + h, x, axis);
    }
    size_t per = u->win.len / (size_t)ncols;
    put(top + h + 1, 0, "window #%zu..#%zu of %zu events, %zu%s per column   ^ cursor%s",
        u->win.first, u->win.first + u->win.len - 1, u->n, per ? per : 1,
        u->win.len % (size_t)ncols ? "+" : "", peak_col >= 0 ? "  P peak" : "");
    return true;
}

static void draw_list(ui *u, const mp_tui_at *at, int top)
{
    int vk = view_kind(u);
    int rows = LINES - 1 - (top + 1);
    if (rows < 0)
        rows = 0;
    if (u->list_top > 0 && u->list_top + (size_t)rows > at->n_alive)
        u->list_top = at->n_alive > (size_t)rows ? at->n_alive - (size_t)rows : 0;
    char op[64] = "";
    bool slots = false;
    for (size_t i = 0; i < at->n_alive; i++)
        slots |= at->alive[i].home == MP_SUMMARY_SLOT || at->alive[i].home == MP_SUMMARY_SCRATCH ||
                 at->alive[i].home == MP_SUMMARY_ARENA_FREE;
    if (slots)
        snprintf(op, sizeof op, "; planned tensors: those live at op #%" PRId32, at->op);
    attron(A_BOLD);
    put(top, 0, "Alive after event #%zu: %zu item%s, largest first (%s%s)%s", at->event,
        at->n_alive, at->n_alive == 1 ? "" : "s", vk < 0 ? "heap kinds" : mp_kind_label(vk),
        vk < 0 ? "" : " only", op);
    attroff(A_BOLD);
    char b[32], d[512];
    for (int i = 0; i < rows && u->list_top + (size_t)i < at->n_alive; i++) {
        const mp_summary_alive *a = &at->alive[u->list_top + (size_t)i];
        describe(u, a, d, sizeof d);
        bool hit = u->found >= 0 && a->tensor == u->found &&
                   (a->home == MP_SUMMARY_BLOCK || a->home == MP_SUMMARY_SLOT);
        if (hit)
            attron(A_REVERSE);
        put(top + 1 + i, 0, "%10s  %s", bytes_str(b, sizeof b, a->bytes), d);
        if (hit)
            attroff(A_REVERSE);
    }
    if (u->list_top + (size_t)rows < at->n_alive && rows > 0)
        put(LINES - 2, COLS - 14, " (more below) ");
}

static void draw_status(const ui *u)
{
    int y = LINES - 1;
    if (u->prompt) {
        put(y, 0, "search tensor: %s", u->query);
        move(y, (int)(15 + u->qlen) < COLS ? (int)(15 + u->qlen) : COLS - 1);
        return;
    }
    if (u->msg[0])
        put(y, 0, "%s", u->msg);
    else
        put(y, 0, "? help  h/l event  [/] operator  +/- zoom  </> pan  P peak  k kind  "
                  "/ search  q quit");
}

static void draw_help(void)
{
    int n = 0, w = 0;
    while (mp_tui_key_help[n]) {
        int l = (int)strlen(mp_tui_key_help[n]);
        w = l > w ? l : w;
        n++;
    }
    w += 4;
    int h = n + 4;
    if (w > COLS)
        w = COLS;
    if (h > LINES)
        h = LINES;
    int y0 = (LINES - h) / 2, x0 = (COLS - w) / 2;
    for (int y = 0; y < h; y++)
        mvhline(y0 + y, x0, ' ', w);
    attron(A_BOLD);
    put(y0, x0, "+%.*s+", w - 2 > 0 ? w - 2 : 0,
        "--------------------------------------------------------------------------------"
        "--------------------------------------------------------------------------------");
    put(y0 + 1, x0 + 2, "memprof tui keys");
    attroff(A_BOLD);
    for (int i = 0; i < n && y0 + 2 + i < y0 + h - 1; i++)
        put(y0 + 2 + i, x0 + 2, "%s", mp_tui_key_help[i]);
    put(y0 + h - 1, x0 + 2, "press any key");
}

static bool draw(ui *u)
{
    erase();
    if (COLS < MP_TUI_MIN_COLS || LINES < MP_TUI_MIN_LINES) {
        draw_too_small();
        refresh();
        return true;
    }
    if (u->n == 0) {
        put(0, 0, "memprof tui  %s: the trace has no events (q quits)", u->title);
        refresh();
        return true;
    }
    int ncols = chart_cols(u), h = chart_rows();
    mp_tui_window_fit(&u->win, u->n, ncols);
    mp_tui_window_follow(&u->win, u->n, u->cursor);
    mp_tui_at at;
    if (mp_tui_state_at(u->m, u->cursor, view_kind(u), &at, u->err) != MP_OK)
        return false;
    draw_header(u, &at);
    if (!draw_chart(u, 4, h, ncols))
        return false;
    draw_list(u, &at, 4 + h + 2);
    if (u->help)
        draw_help();
    draw_status(u);
    refresh();
    return true;
}

/* ---- keys ------------------------------------------------------------------------------- */

static void move_to(ui *u, size_t e)
{
    if (u->n == 0)
        return;
    if (e >= u->n)
        e = u->n - 1;
    if (e != u->cursor)
        u->list_top = 0;
    u->cursor = e;
    mp_tui_window_follow(&u->win, u->n, e);
}

/* Run the search typed at the prompt (an empty query repeats the last one). */
static bool search(ui *u)
{
    const char *q = u->qlen ? u->query : u->last_query;
    if (!q[0]) {
        set_msg(u, "type a tensor name (or part of it) after /");
        return true;
    }
    int32_t after = strcmp(q, u->last_query) == 0 ? u->found : -1;
    int32_t t = mp_tui_find_tensor(u->m, q, after);
    char shown[64];
    fit(shown, sizeof shown, q, 40);
    if (t < 0) {
        set_msg(u, "no tensor name contains '%s'", shown);
        return true;
    }
    if (q != u->last_query)
        snprintf(u->last_query, sizeof u->last_query, "%s", q);
    u->found = t;
    mp_tui_tensor_events_free(&u->te);
    if (mp_tui_tensor_find_events(u->m, t, &u->te, u->err) != MP_OK)
        return false;
    char name[64];
    fit(name, sizeof name, mp_tui_tensor_name(u->m, t), 40);
    if (u->te.n_alloc == 0) {
        set_msg(u, "tensor #%" PRId32 " %s: never allocated (a constant, or folded)", t, name);
        return true;
    }
    move_to(u, mp_tui_next_after(u->te.alloc, u->te.n_alloc, u->cursor));
    set_msg(u, "tensor #%" PRId32 " %s: allocated at #%zu (%zu allocation%s, %zu free%s; "
               "a/f jump)", t, name, u->cursor, u->te.n_alloc,
            u->te.n_alloc == 1 ? "" : "s", u->te.n_free, u->te.n_free == 1 ? "" : "s");
    return true;
}

static bool prompt_key(ui *u, int ch)
{
    if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
        u->prompt = false;
        return search(u);
    }
    if (ch == 27) {
        u->prompt = false;
        set_msg(u, "search cancelled");
    } else if (ch == KEY_BACKSPACE || ch == 127 || ch == 8) {
        if (u->qlen)
            u->query[--u->qlen] = 0;
    } else if (ch >= 32 && ch < 127 && u->qlen + 1 < sizeof u->query) {
        u->query[u->qlen++] = (char)ch;
        u->query[u->qlen] = 0;
    }
    return true;
}

static void jump_tensor(ui *u, bool alloc)
{
    if (u->found < 0) {
        set_msg(u, "search a tensor first: / NAME Enter");
        return;
    }
    const size_t *v = alloc ? u->te.alloc : u->te.free;
    size_t n = alloc ? u->te.n_alloc : u->te.n_free;
    char name[64];
    fit(name, sizeof name, mp_tui_tensor_name(u->m, u->found), 40);
    if (n == 0) {
        set_msg(u, "tensor %s is never %s", name, alloc ? "allocated" : "freed");
        return;
    }
    size_t e = mp_tui_next_after(v, n, u->cursor);
    size_t idx = 0;
    while (idx < n && v[idx] != e)
        idx++;
    move_to(u, e);
    set_msg(u, "tensor %s: %s %zu of %zu, event #%zu", name, alloc ? "allocation" : "free",
            idx + 1, n, e);
}

/* Apply one key; false to quit, and false with err set on an error (see mp_tui_run). */
static bool key(ui *u, int ch, bool *quit)
{
    if (u->help) {
        u->help = false;
        return true;
    }
    if (u->prompt)
        return prompt_key(u, ch);
    if (ch == KEY_RESIZE)
        return true;
    u->msg[0] = 0;
    int ncols = chart_cols(u);
    size_t per = u->win.len / (size_t)(ncols > 0 ? ncols : 1);
    per = per ? per : 1;
    switch (ch) {
    case 'q':
    case 'Q':
        *quit = true;
        break;
    case KEY_LEFT:
    case 'h':
        move_to(u, u->cursor ? u->cursor - 1 : 0);
        break;
    case KEY_RIGHT:
    case 'l':
        move_to(u, u->cursor + 1);
        break;
    case 'H':
        move_to(u, u->cursor > per ? u->cursor - per : 0);
        break;
    case 'L':
        move_to(u, u->cursor + per);
        break;
    case ']':
    case 'n': {
        size_t e = mp_tui_next_op(u->m, u->cursor);
        if (e == SIZE_MAX)
            set_msg(u, "no operator starts after event #%zu", u->cursor);
        else
            move_to(u, e);
        break;
    }
    case '[':
    case 'p': {
        size_t e = mp_tui_prev_op(u->m, u->cursor);
        if (e == SIZE_MAX)
            set_msg(u, "no operator starts before event #%zu", u->cursor);
        else
            move_to(u, e);
        break;
    }
    case '+':
    case '=':
        mp_tui_window_zoom(&u->win, u->n, ncols, u->cursor, +1);
        break;
    case '-':
    case '_':
        mp_tui_window_zoom(&u->win, u->n, ncols, u->cursor, -1);
        break;
    case '<':
    case ',':
    case KEY_SLEFT:
    case '>':
    case '.':
    case KEY_SRIGHT: {
        bool left = ch == '<' || ch == ',' || ch == KEY_SLEFT;
        long step = ncols / 4 > 0 ? ncols / 4 : 1;
        mp_tui_window_pan(&u->win, u->n, ncols, left ? -step : step);
        if (u->cursor < u->win.first)
            move_to(u, u->win.first);
        else if (u->cursor >= u->win.first + u->win.len)
            move_to(u, u->win.first + u->win.len - 1);
        break;
    }
    case KEY_HOME:
    case 'g':
        move_to(u, 0);
        break;
    case KEY_END:
    case 'G':
        move_to(u, u->n ? u->n - 1 : 0);
        break;
    case 'P':
        if (mp_tui_peak_event(u->m) == SIZE_MAX)
            set_msg(u, "the heap is never above 0");
        else
            move_to(u, mp_tui_peak_event(u->m));
        break;
    case 'k':
        do
            u->view = (u->view + 1) % N_VIEWS;
        while (!is_shown_view(u->m, k_views[u->view]));
        u->list_top = 0;
        break;
    case '/':
        u->prompt = true;
        u->qlen = 0;
        u->query[0] = 0;
        break;
    case 'a':
    case 'f':
        jump_tensor(u, ch == 'a');
        break;
    case KEY_UP:
        u->list_top = u->list_top ? u->list_top - 1 : 0;
        break;
    case KEY_DOWN:
        u->list_top++;
        break;
    case KEY_PPAGE:
        u->list_top = u->list_top > 10 ? u->list_top - 10 : 0;
        break;
    case KEY_NPAGE:
        u->list_top += 10;
        break;
    case '?':
        u->help = true;
        break;
    case 12: /* Ctrl-L */
        clearok(curscr, TRUE);
        break;
    default:
        break;
    }
    return true;
}

/* ---- the loop --------------------------------------------------------------------------- */

int mp_tui_run(mp_tui_index *m, const char *title, mp_error *err)
{
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        mp_fail(err, MP_ERR_ARG, "memprof tui needs a terminal (stdin and stdout)");
        return -1;
    }
    const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction sa, old[3];
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal; /* no SA_RESTART: a signal wakes the key loop */
    sigemptyset(&sa.sa_mask);
    g_signal = 0;
    /* installed before ncurses starts, so that it keeps ours instead of its own */
    for (int i = 0; i < 3; i++)
        sigaction(sigs[i], &sa, &old[i]);

    ui u;
    memset(&u, 0, sizeof u);
    u.m = m;
    u.title = title ? title : "";
    u.n = mp_tui_n_events(m);
    u.win = mp_tui_window_all(u.n);
    u.found = -1;
    u.err = err;

    int rc = 0;
    SCREEN *scr = newterm(NULL, stdout, stdin);
    if (!scr) {
        const char *term = getenv("TERM");
        mp_fail(err, MP_ERR_ARG, "cannot drive the terminal (TERM=%s)", term ? term : "unset");
        rc = -1;
    } else {
        cbreak();
        noecho();
        keypad(stdscr, TRUE);
        curs_set(0);
        set_escdelay(25);
        timeout(100);
        if (has_colors() && start_color() == OK) {
            u.color = true;
            short bg = use_default_colors() == OK ? -1 : COLOR_BLACK;
            for (int k = 0; k < MP_KIND_COUNT; k++)
                init_pair((short)(k + 1), k_kind_color[k], bg);
        }
        bool dirty = true, quit = false;
        while (!g_signal && !quit) {
            if (dirty && !draw(&u)) {
                rc = -1;
                break;
            }
            dirty = false;
            int ch = getch();
            if (ch == ERR)
                continue;
            dirty = true;
            if (!key(&u, ch, &quit)) {
                rc = -1;
                break;
            }
        }
        curs_set(1);
        endwin();
        delscreen(scr);
    }
    for (int i = 0; i < 3; i++)
        sigaction(sigs[i], &old[i], NULL);
    mp_tui_tensor_events_free(&u.te);
    free(u.cols);
    if (rc == 0 && g_signal)
        rc = g_signal;
    return rc;
}
