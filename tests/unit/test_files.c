/* engine/files.c: outputs that never destroy what their path names (symlinks followed, a
 * planted "PATH.tmp.PID" symlink not followed, modes kept, devices and FIFOs written in
 * place, directories refused), inputs that never block on a FIFO, the output-is-input check
 * and the check of an output's folder before any work. Everything happens in a private
 * temporary folder; device nodes are tested by tests/cli/test_files.sh. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "trace/files.h"
#include "tests/util/testutil.h"

static int setup(void **state)
{
    (void)state;
    return mp_test_tmpdir_make("mp-test-files");
}

static int teardown(void **state)
{
    (void)state;
    return mp_test_tmpdir_remove();
}

/* mp_test_tmp_path rotates four buffers; these tests hold more paths at once. */
static const char *P(const char *name)
{
    static char pool[64][600];
    static int next;
    char *b = pool[next++ % 64];
    snprintf(b, sizeof pool[0], "%s", mp_test_tmp_path(name));
    return b;
}

static char *slurp(const char *path)
{
    size_t n;
    char *b = mp_test_read_file(path, &n);
    if (!b)
        return NULL;
    char *s = malloc(n + 1);
    memcpy(s, b, n);
    s[n] = 0;
    free(b);
    return s;
}

static void assert_text(const char *path, const char *want)
{
    char *got = slurp(path);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

static mp_status write_text(const char *path, const char *text, mp_error *err)
{
    mp_file_out o;
    mp_status st = mp_file_out_open(&o, path, err);
    if (st != MP_OK)
        return st;
    fputs(text, o.f);
    return mp_file_out_commit(&o, err);
}

/* No name in the folder but the expected ones: no temporary left behind. */
static void assert_no_temporary(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls -a '%s' | grep -q '\\.tmp\\.'", mp_test_tmpdir());
    assert_int_not_equal(system(cmd), 0);
}

static void test_new_and_replaced(void **state)
{
    (void)state;
    mp_error err = {0};
    const char *p = P("plain.txt");
    assert_int_equal(write_text(p, "one\n", &err), MP_OK);
    assert_text(p, "one\n");
    /* a new file gets 0666 less the umask; a replaced one keeps its mode */
    mode_t mask = umask(022);
    umask(mask);
    struct stat sb;
    assert_int_equal(stat(p, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0666 & ~mask);
    assert_int_equal(chmod(p, 0640), 0);
    assert_int_equal(write_text(p, "two\n", &err), MP_OK);
    assert_text(p, "two\n");
    assert_int_equal(stat(p, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0640);
    assert_no_temporary();
}

/* The old writer used "PATH.tmp.PID" opened without O_EXCL: a symlink planted under that
 * name sent the output into any file the attacker chose. */
static void test_planted_temporary_not_followed(void **state)
{
    (void)state;
    mp_error err = {0};
    const char *victim = P("victim.txt");
    mp_test_write_text(victim, "precious\n");
    const char *out = P("report.txt");
    char planted[600];
    snprintf(planted, sizeof planted, "%s.tmp.%ld", out, (long)getpid());
    assert_int_equal(symlink(victim, planted), 0);
    assert_int_equal(write_text(out, "report\n", &err), MP_OK);
    assert_text(victim, "precious\n");
    assert_text(out, "report\n");
    struct stat sb;
    assert_int_equal(lstat(planted, &sb), 0);
    assert_true(S_ISLNK(sb.st_mode));
    unlink(planted);
    unlink(out);
    unlink(victim);
}

static void test_symlink_followed(void **state)
{
    (void)state;
    mp_error err = {0};
    const char *target = P("target.txt");
    const char *link = P("link.txt");
    mp_test_write_text(target, "old\n");
    /* relative link, as `ln -s target.txt link.txt` makes */
    assert_int_equal(symlink("target.txt", link), 0);
    assert_int_equal(write_text(link, "new\n", &err), MP_OK);
    struct stat sb;
    assert_int_equal(lstat(link, &sb), 0);
    assert_true(S_ISLNK(sb.st_mode));
    assert_text(target, "new\n");
    /* a dangling link: the file it names is created, the link stays */
    const char *dangling = P("dangling.txt");
    assert_int_equal(symlink("made-by-write.txt", dangling), 0);
    assert_int_equal(write_text(dangling, "made\n", &err), MP_OK);
    assert_int_equal(lstat(dangling, &sb), 0);
    assert_true(S_ISLNK(sb.st_mode));
    assert_text(P("made-by-write.txt"), "made\n");
    /* a loop of links is refused */
    const char *la = P("loop-a"), *lb = P("loop-b");
    assert_int_equal(symlink("loop-b", la), 0);
    assert_int_equal(symlink("loop-a", lb), 0);
    assert_int_equal(write_text(la, "x", &err), MP_ERR_IO);
    assert_non_null(strstr(err.msg, "loop-a"));
    assert_no_temporary();
    unlink(la);
    unlink(lb);
    unlink(link);
    unlink(target);
    unlink(dangling);
    unlink(P("made-by-write.txt"));
}

static void test_refused_kinds(void **state)
{
    (void)state;
    mp_error err = {0};
    const char *dir = P("adir");
    assert_int_equal(mkdir(dir, 0755), 0);
    assert_int_equal(write_text(dir, "x", &err), MP_ERR_IO);
    assert_non_null(strstr(err.msg, "is a directory"));
    struct stat sb;
    assert_int_equal(stat(dir, &sb), 0);
    assert_true(S_ISDIR(sb.st_mode));
    /* a folder that does not exist */
    assert_int_equal(write_text(P("no/such/file"), "x", &err), MP_ERR_IO);
    assert_no_temporary();
    rmdir(dir);
}

/* A FIFO is written in place when someone reads it, refused at once when nobody does. */
static void test_fifo_output(void **state)
{
    (void)state;
    mp_error err = {0};
    const char *fifo = P("out.fifo");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    time_t t0 = time(NULL);
    assert_int_equal(write_text(fifo, "x", &err), MP_ERR_IO);
    assert_non_null(strstr(err.msg, "no reader"));
    assert_true(time(NULL) - t0 < 5);
    /* with a reader (opened non-blocking here, read after the write) */
    int rd = open(fifo, O_RDONLY | O_NONBLOCK);
    assert_true(rd >= 0);
    assert_int_equal(write_text(fifo, "through the pipe\n", &err), MP_OK);
    char buf[64] = {0};
    assert_int_equal(read(rd, buf, sizeof buf - 1), 17);
    assert_string_equal(buf, "through the pipe\n");
    close(rd);
    struct stat sb;
    assert_int_equal(lstat(fifo, &sb), 0);
    assert_true(S_ISFIFO(sb.st_mode));
    assert_no_temporary();
    unlink(fifo);
}

static void test_abort_removes_temporary(void **state)
{
    (void)state;
    mp_error err = {0};
    const char *p = P("aborted.txt");
    mp_test_write_text(p, "kept\n");
    mp_file_out o;
    assert_int_equal(mp_file_out_open(&o, p, &err), MP_OK);
    assert_non_null(o.tmp);
    fputs("half", o.f);
    mp_file_remove_temporaries(); /* what a signal handler does */
    assert_int_equal(access(o.tmp, F_OK), -1);
    mp_file_out_abort(&o);
    assert_text(p, "kept\n");
    assert_no_temporary();
    unlink(p);
}

/* An input FIFO with no writer: the open returns at once and reads as empty. */
static void test_fifo_input(void **state)
{
    (void)state;
    mp_error err = {0};
    const char *fifo = P("in.fifo");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    FILE *f = NULL;
    time_t t0 = time(NULL);
    assert_int_equal(mp_file_in_open(fifo, &f, &err), MP_OK);
    assert_int_equal(fgetc(f), EOF);
    assert_true(time(NULL) - t0 < 5);
    fclose(f);
    unlink(fifo);
    const char *dir = P("indir");
    assert_int_equal(mkdir(dir, 0755), 0);
    assert_int_equal(mp_file_in_open(dir, &f, &err), MP_ERR_IO);
    assert_non_null(strstr(err.msg, "directory"));
    assert_null(f);
    rmdir(dir);
    assert_int_equal(mp_file_in_open(P("absent"), &f, &err), MP_ERR_IO);
}

static void test_same_file(void **state)
{
    (void)state;
    const char *a = P("same-a.txt");
    mp_test_write_text(a, "a");
    const char *b = P("same-b.txt");
    mp_test_write_text(b, "b");
    assert_true(mp_file_same(a, a));
    assert_false(mp_file_same(a, b));
    /* through a symlink, a hard link and a path with ./ and .. */
    const char *ln = P("same-link");
    assert_int_equal(symlink("same-a.txt", ln), 0);
    assert_true(mp_file_same(a, ln));
    const char *hard = P("same-hard");
    assert_int_equal(link(a, hard), 0);
    assert_true(mp_file_same(hard, a));
    char dotted[600];
    snprintf(dotted, sizeof dotted, "%s/./sub/../same-a.txt", mp_test_tmpdir());
    assert_int_equal(mkdir(P("sub"), 0755), 0);
    assert_true(mp_file_same(a, dotted));
    /* two outputs not there yet: the same resolved path */
    char n1[600], n2[600];
    snprintf(n1, sizeof n1, "%s/new.txt", mp_test_tmpdir());
    snprintf(n2, sizeof n2, "%s/sub/../new.txt", mp_test_tmpdir());
    assert_true(mp_file_same(n1, n2));
    assert_false(mp_file_same(n1, a));
    assert_false(mp_file_same("-", "-"));
    unlink(ln);
    unlink(hard);
    unlink(a);
    unlink(b);
    rmdir(P("sub"));
}

static void test_out_check(void **state)
{
    (void)state;
    mp_error err = {0};
    assert_int_equal(mp_file_out_check(NULL, false, &err), MP_OK);
    assert_int_equal(mp_file_out_check("-", false, &err), MP_OK);
    assert_int_equal(mp_file_out_check(P("fresh.txt"), false, &err), MP_OK);
    assert_int_equal(mp_file_out_check(P("no/fresh.txt"), false, &err), MP_ERR_IO);
    const char *file = P("afile");
    mp_test_write_text(file, "x");
    /* a file where a folder is wanted, and a file under a file */
    assert_int_equal(mp_file_out_check(file, true, &err), MP_ERR_IO);
    assert_non_null(strstr(err.msg, "not a directory"));
    char under[600];
    snprintf(under, sizeof under, "%s/x", file);
    assert_int_equal(mp_file_out_check(under, false, &err), MP_ERR_IO);
    assert_int_equal(mp_file_out_check(under, true, &err), MP_ERR_IO);
    /* a folder: existing, or to be made in an existing folder */
    assert_int_equal(mp_file_out_check(mp_test_tmpdir(), true, &err), MP_OK);
    assert_int_equal(mp_file_out_check(P("newdir"), true, &err), MP_OK);
    assert_int_equal(mp_file_out_check(mp_test_tmpdir(), false, &err), MP_ERR_IO);
    unlink(file);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_and_replaced),
        cmocka_unit_test(test_planted_temporary_not_followed),
        cmocka_unit_test(test_symlink_followed),
        cmocka_unit_test(test_refused_kinds),
        cmocka_unit_test(test_fifo_output),
        cmocka_unit_test(test_abort_removes_temporary),
        cmocka_unit_test(test_fifo_input),
        cmocka_unit_test(test_same_file),
        cmocka_unit_test(test_out_check),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
