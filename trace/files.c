/* Files named by the user, opened safely (see files.h): outputs that never destroy what their
 * path names, inputs that never block, temporaries removed on signals, output-is-input. */
#include "trace/files.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- temporaries removed by signal handlers ------------------------------------------- */

#define MP_FILES_MAX_TMP 32
/* Paths of the temporaries being written; a handler reads them, so each slot is set only
 * once its string is complete, and cleared before its string is freed. */
static char *volatile g_tmp[MP_FILES_MAX_TMP];

static int tmp_register(char *path)
{
    for (int i = 0; i < MP_FILES_MAX_TMP; i++)
        if (!g_tmp[i]) {
            g_tmp[i] = path;
            return i;
        }
    return -1; /* still removed on every normal path; only a signal could leave it */
}

static void tmp_unregister(int slot)
{
    if (slot >= 0 && slot < MP_FILES_MAX_TMP)
        g_tmp[slot] = NULL;
}

void mp_file_remove_temporaries(void)
{
    for (int i = 0; i < MP_FILES_MAX_TMP; i++) {
        char *p = g_tmp[i];
        if (p)
            unlink(p);
    }
}

static void on_signal(int sig)
{
    mp_file_remove_temporaries();
    signal(sig, SIG_DFL);
    raise(sig);
}

void mp_file_install_signal_cleanup(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}

/* ---- paths ---------------------------------------------------------------------------- */

/* "DIR/" of path ("" when it has no slash), joined with name; malloc'd. */
static char *join_dir(const char *path, const char *name)
{
    const char *slash = strrchr(path, '/');
    size_t dl = slash ? (size_t)(slash - path) + 1 : 0;
    size_t nl = strlen(name);
    char *r = malloc(dl + nl + 1);
    if (!r)
        return NULL;
    memcpy(r, path, dl);
    memcpy(r + dl, name, nl + 1);
    return r;
}

/* "." for a path without a slash, else everything before its last slash ("/" for "/x"). */
static char *dir_of(const char *p)
{
    const char *slash = strrchr(p, '/');
    return slash ? strndup(p, (size_t)(slash - p) + (slash == p)) : strdup(".");
}

/* The path that writing `path` should replace: symlinks followed (a dangling one to the
 * path it names), at most 40 of them as the kernel allows. malloc'd; NULL with errno. */
static char *follow_links(const char *path)
{
    char *p = strdup(path);
    for (int hops = 0; p && hops < 40; hops++) {
        struct stat sb;
        if (lstat(p, &sb) != 0 || !S_ISLNK(sb.st_mode))
            return p;
        char link[PATH_MAX];
        ssize_t n = readlink(p, link, sizeof link - 1);
        if (n < 0) {
            free(p);
            return NULL;
        }
        link[n] = 0;
        char *next = link[0] == '/' ? strdup(link) : join_dir(p, link);
        free(p);
        p = next;
    }
    if (p) {
        free(p);
        errno = ELOOP;
    }
    return NULL;
}

void mp_file_set_blocking(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
}

/* ---- outputs -------------------------------------------------------------------------- */

static mp_status out_fail(mp_file_out *o, mp_error *err, const char *path, const char *why)
{
    mp_file_out_abort(o);
    return mp_fail(err, MP_ERR_IO, "cannot write %s: %s", path, why);
}

/* The output's stream over fd (closed on failure). */
static mp_status stream_of(mp_file_out *o, int fd, const char *path, mp_error *err)
{
    o->f = fdopen(fd, "w");
    if (!o->f) {
        int e = errno;
        close(fd);
        return out_fail(o, err, path, strerror(e));
    }
    return MP_OK;
}

/* Write in place to an existing device or FIFO (fd opened non-blocking, then blocking). */
static mp_status open_in_place(mp_file_out *o, const char *path, const struct stat *sb, mp_error *err)
{
    int fd = open(o->target, O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        if (errno == ENXIO && S_ISFIFO(sb->st_mode))
            return out_fail(o, err, path, "a FIFO with no reader");
        return out_fail(o, err, path, strerror(errno));
    }
    mp_file_set_blocking(fd);
    return stream_of(o, fd, path, err);
}

static mp_status open_replacing(mp_file_out *o, const char *path, const struct stat *old, mp_error *err)
{
    size_t len = strlen(o->target);
    o->tmp = malloc(len + sizeof ".tmp.XXXXXX");
    if (!o->tmp)
        return out_fail(o, err, path, "out of memory");
    memcpy(o->tmp, o->target, len);
    memcpy(o->tmp + len, ".tmp.XXXXXX", sizeof ".tmp.XXXXXX");
    /* Listed before it exists: mkostemp writes each name it tries into the buffer before
     * creating that file, so a signal at any moment finds the name of what may exist. */
    o->slot = tmp_register(o->tmp);
    int fd = mkostemp(o->tmp, O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        tmp_unregister(o->slot);
        free(o->tmp);
        o->tmp = NULL;
        return out_fail(o, err, path, strerror(e));
    }
    /* mkstemp makes the file private (0600): give it the mode of the file it replaces, or
     * what a new file would get. Should that fail, the output is still written, private. */
    mode_t mode;
    if (old) {
        mode = old->st_mode & 07777;
    } else {
        mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }
    (void)fchmod(fd, mode);
    return stream_of(o, fd, path, err);
}

mp_status mp_file_out_open(mp_file_out *o, const char *path, mp_error *err)
{
    memset(o, 0, sizeof *o);
    o->slot = -1;
    if (!path || strcmp(path, "-") == 0) {
        o->f = stdout;
        return MP_OK;
    }
    o->name = path;
    o->target = follow_links(path);
    if (!o->target)
        return out_fail(o, err, path, strerror(errno));
    struct stat sb;
    if (stat(o->target, &sb) != 0) {
        if (errno != ENOENT)
            return out_fail(o, err, path, strerror(errno));
        return open_replacing(o, path, NULL, err);
    }
    if (S_ISREG(sb.st_mode))
        return open_replacing(o, path, &sb, err);
    if (S_ISCHR(sb.st_mode) || S_ISFIFO(sb.st_mode))
        return open_in_place(o, path, &sb, err);
    return out_fail(o, err, path,
                    S_ISDIR(sb.st_mode) ? "is a directory"
                                        : "not a regular file, character device or FIFO");
}

mp_status mp_file_out_commit(mp_file_out *o, mp_error *err)
{
    if (!o->f)
        return mp_fail(err, MP_ERR_IO, "cannot write %s: not open", o->name ? o->name : "output");
    const char *name = o->name ? o->name : "standard output";
    /* A write that failed earlier (a full disk) left the error flag and data in the buffer:
     * flushing tries again and tells why (EIO when nothing says). */
    int e = 0;
    errno = 0;
    if (fflush(o->f) != 0)
        e = errno ? errno : EIO;
    if (!e && ferror(o->f))
        e = EIO;
    if (o->f == stdout) {
        o->f = NULL;
        if (e) {
            clearerr(stdout);
            return mp_fail(err, MP_ERR_IO, "cannot write %s: %s", name, strerror(e));
        }
        return MP_OK;
    }
    if (!e && o->tmp && fsync(fileno(o->f)) != 0)
        e = errno ? errno : EIO;
    if (fclose(o->f) != 0 && !e)
        e = errno ? errno : EIO;
    o->f = NULL;
    if (!e && o->tmp && rename(o->tmp, o->target) != 0)
        e = errno ? errno : EIO;
    if (e) {
        char msg[600];
        snprintf(msg, sizeof msg, "cannot write %s: %s", name, strerror(e));
        mp_file_out_abort(o);
        return mp_fail(err, MP_ERR_IO, "%s", msg);
    }
    tmp_unregister(o->slot);
    free(o->tmp);
    free(o->target);
    memset(o, 0, sizeof *o);
    o->slot = -1;
    return MP_OK;
}

void mp_file_out_abort(mp_file_out *o)
{
    if (o->f && o->f != stdout)
        fclose(o->f);
    if (o->tmp) {
        unlink(o->tmp);
        tmp_unregister(o->slot);
        free(o->tmp);
    }
    free(o->target);
    memset(o, 0, sizeof *o);
    o->slot = -1;
}

mp_status mp_file_out_check(const char *path, bool dir, mp_error *err)
{
    if (!path || (!dir && strcmp(path, "-") == 0))
        return MP_OK;
    char *t = follow_links(path);
    if (!t)
        return mp_fail(err, MP_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    struct stat sb;
    const char *why = NULL;
    int e = 0;
    char *folder = NULL; /* the folder that must take new entries */
    if (stat(t, &sb) == 0) {
        if ((S_ISDIR(sb.st_mode) != 0) != dir)
            why = dir ? "not a directory" : "is a directory";
        else if (dir)
            folder = strdup(t);
        else if (S_ISREG(sb.st_mode))
            folder = dir_of(t);
        /* devices and FIFOs are written in place */
    } else if (errno == ENOENT) {
        folder = dir_of(t);
    } else {
        e = errno;
    }
    if (folder) {
        if (stat(folder, &sb) != 0)
            e = errno;
        else if (!S_ISDIR(sb.st_mode))
            why = "its folder is not a directory";
        else if (access(folder, W_OK | X_OK) != 0)
            e = errno;
        free(folder);
    }
    free(t);
    if (why || e)
        return mp_fail(err, MP_ERR_IO, "cannot write %s: %s", path, why ? why : strerror(e));
    return MP_OK;
}

/* ---- inputs --------------------------------------------------------------------------- */

mp_status mp_file_in_open(const char *path, FILE **out, mp_error *err)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return mp_fail(err, MP_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !(S_ISREG(sb.st_mode) || S_ISFIFO(sb.st_mode) || S_ISCHR(sb.st_mode))) {
        int e = errno;
        bool dir = e == 0 && S_ISDIR(sb.st_mode);
        close(fd);
        return mp_fail(err, MP_ERR_IO, "%s: cannot read: %s", path,
                       e ? strerror(e) : dir ? "is a directory" : "not a file");
    }
    /* Reads from here on wait for data as usual; a FIFO whose writer never came reads as
     * empty instead of blocking the open forever. */
    mp_file_set_blocking(fd);
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        int e = errno;
        close(fd);
        return mp_fail(err, MP_ERR_IO, "%s: cannot open: %s", path, strerror(e));
    }
    *out = f;
    return MP_OK;
}

/* ---- output versus input -------------------------------------------------------------- */

/* The absolute form of a path that may not exist yet: its folder resolved, then its name. */
static char *canonical(const char *path)
{
    char *t = follow_links(path);
    if (!t)
        return NULL;
    char *r = realpath(t, NULL);
    if (r) {
        free(t);
        return r;
    }
    const char *slash = strrchr(t, '/');
    char *dir = dir_of(t);
    char *rdir = dir ? realpath(dir, NULL) : NULL;
    const char *base = slash ? slash + 1 : t;
    char *res = NULL;
    if (rdir) {
        size_t n = strlen(rdir) + strlen(base) + 2;
        res = malloc(n);
        if (res)
            snprintf(res, n, "%s/%s", rdir, base);
    }
    free(dir);
    free(rdir);
    free(t);
    return res;
}

bool mp_file_same(const char *in, const char *out)
{
    if (!in || !out || strcmp(in, "-") == 0 || strcmp(out, "-") == 0)
        return false;
    struct stat a, b;
    if (stat(in, &a) == 0 && stat(out, &b) == 0)
        return a.st_dev == b.st_dev && a.st_ino == b.st_ino && !S_ISCHR(a.st_mode);
    char *ca = canonical(in), *cb = canonical(out);
    bool same = ca && cb && strcmp(ca, cb) == 0;
    free(ca);
    free(cb);
    return same;
}
