/* Files named by the user, opened safely: outputs written without ever destroying what the
 * path names (atomic replacement only of regular files and new paths; devices, FIFOs and
 * stdout written in place; symlinks followed), inputs opened without blocking, temporaries
 * removed on SIGINT/SIGTERM, and the check that an output does not name an input. */
#ifndef MP_FILES_H
#define MP_FILES_H

#include <stdbool.h>
#include <stdio.h>

#include "trace/status.h"

/* An output being written. Regular files and new paths go to a private temporary
 * ("TARGET.tmp.XXXXXX", created with O_EXCL in the target's folder, mode of the file it
 * replaces or 0666 less the umask) renamed over the target by mp_file_out_commit; a
 * character device or a FIFO (with a reader) is written in place; NULL or "-" is stdout.
 * A symlink is followed to its target (which is then what gets replaced). Directories,
 * block devices and sockets are refused. */
typedef struct mp_file_out {
    FILE *f;
    char *tmp;    /* the temporary, NULL when written in place */
    char *target; /* the path finally written (symlinks resolved); NULL for stdout */
    const char *name; /* the path as given (the caller's string), for messages */
    int slot;     /* the temporary's slot in the signal-cleanup list, -1 when none */
} mp_file_out;

/* Errors: MP_ERR_IO (cannot create, not a writable kind of file, a FIFO without reader). */
mp_status mp_file_out_open(mp_file_out *o, const char *path, mp_error *err);
/* Flush, sync and close; rename the temporary over the target. Every write error that
 * happened (a full disk, a closed pipe) is reported here as MP_ERR_IO; then nothing of the
 * output is left behind (the temporary is removed). stdout is flushed, not closed. */
mp_status mp_file_out_commit(mp_file_out *o, mp_error *err);
/* Give up: close, remove the temporary. Safe on a zeroed or already finished mp_file_out. */
void mp_file_out_abort(mp_file_out *o);

/* Remove every temporary still open (async-signal-safe: for signal handlers). */
void mp_file_remove_temporaries(void);
/* Install handlers for SIGINT, SIGTERM and SIGHUP that remove the temporaries and then end
 * the process by the same signal (exit status 130, 143, 129 in a shell). */
void mp_file_install_signal_cleanup(void);

/* Whether an output could be written at path, checked before any work is done: its folder
 * exists and is writable (or it is stdout, a device or a FIFO); MP_ERR_IO naming why not.
 * With `dir`, path is a folder to write files into (it may be created by the caller). */
mp_status mp_file_out_check(const char *path, bool dir, mp_error *err);

/* Make reads and writes on fd wait again (after an open with O_NONBLOCK, which is how a FIFO
 * without a writer or reader is opened without hanging). */
void mp_file_set_blocking(int fd);

/* Open an input for reading without blocking on a FIFO that has no writer: regular files,
 * FIFOs and character devices are accepted (a FIFO without writer reads as empty),
 * directories and other kinds are refused (MP_ERR_IO, naming the path). */
mp_status mp_file_in_open(const char *path, FILE **out, mp_error *err);

/* True when the output path `out` would write the file `in` names (same device and inode,
 * symlinks followed, or the same resolved path when they do not exist yet). */
bool mp_file_same(const char *in, const char *out);

#endif
