/* The terminal side of `memprof tui`: ncurses drawing of the timeline and the key loop, over
 * the index of tui/index.h (which does all the computing). The terminal is always restored:
 * on quit, on an error, and on SIGINT, SIGTERM and SIGHUP (the handlers only set a flag that
 * the key loop, which wakes every 100 ms, acts on). */
#ifndef MP_TUI_SCREEN_H
#define MP_TUI_SCREEN_H

#include "trace/status.h"
#include "tui/index.h"

/* The keys, one line each (NULL-terminated): printed by `memprof tui --help` and shown by
 * the `?` overlay. */
extern const char *const mp_tui_key_help[];

/* Smallest terminal drawn; below it the screen says "terminal too small". */
#define MP_TUI_MIN_COLS 40
#define MP_TUI_MIN_LINES 12

/* Run the interactive timeline of m on the terminal (title: the model or trace shown).
 * Returns 0 after `q`, the signal number after SIGINT, SIGTERM or SIGHUP (the caller
 * re-raises it once it has cleaned up), or -1 on an error (*err says what; the terminal is
 * restored first). */
int mp_tui_run(mp_tui_index *m, const char *title, mp_error *err);

#endif
