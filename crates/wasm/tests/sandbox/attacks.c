/* Sandbox attacks: each one, chosen by argv[1], tries to reach outside the preopened
 * directory /box (read, create, delete or move something there), and checks that the
 * legitimate in-box operations it makes on the way still work. argv[2] is the host's
 * absolute path of the directory that holds the box (for absolute-path attacks).
 *
 * Every refusal is printed with its errno; anything read is printed, so a leaked secret
 * shows in stdout. The program exits 0 when every escape was refused and every legitimate
 * step worked; the test (sandbox_attacks.rs) also checks the host file system. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <wasi/api.h>

/* The box's preopened descriptor (wasi-libc numbers preopens from 3). */
#define BOX 3

static int failures;
static const char *outer; /* the host path of the box's parent */

/* A step that must fail: print its errno. */
static void refused(const char *what, int result) {
    if (result >= 0) {
        printf("ESCAPED: %s succeeded\n", what);
        failures++;
    } else {
        printf("refused %s: %s\n", what, strerror(errno));
    }
}

/* A step that must fail with `expected`. */
static void refused_with(const char *what, int result, int expected) {
    refused(what, result);
    if (result < 0 && errno != expected) {
        printf("WRONG ERRNO: %s: %s, expected %s\n", what, strerror(errno), strerror(expected));
        failures++;
    }
}

/* A legitimate step that must work. */
static void works(const char *what, int result) {
    if (result < 0) {
        printf("BROKEN: %s: %s\n", what, strerror(errno));
        failures++;
    } else {
        printf("ok %s\n", what);
    }
}

/* A raw WASI call that must fail. */
static void raw_refused(const char *what, __wasi_errno_t e) {
    if (e == 0) {
        printf("ESCAPED: %s succeeded\n", what);
        failures++;
    } else {
        printf("refused %s: wasi errno %u\n", what, (unsigned)e);
    }
}

/* Print what `fd` holds (a leaked secret would show), then close it. */
static void dump(const char *what, int fd) {
    char buf[256];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    buf[n < 0 ? 0 : n] = 0;
    printf("read %s: %s\n", what, buf);
    close(fd);
}

/* Open `path` for reading: it must be refused. */
static void open_refused(const char *path) {
    int fd = open(path, O_RDONLY);
    refused(path, fd);
    if (fd >= 0) dump(path, fd);
}

/* Read the in-box file `path`, which must hold `want`. */
static void read_works(int dir, const char *path, const char *want) {
    int fd = openat(dir, path, O_RDONLY);
    works(path, fd);
    if (fd < 0) return;
    char buf[256];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    buf[n < 0 ? 0 : n] = 0;
    if (strcmp(buf, want) != 0) {
        printf("BROKEN: %s holds \"%s\", expected \"%s\"\n", path, buf, want);
        failures++;
    }
}

/* The attack of the moved handle: hold /box/d open, move it to /box/x, and put the link
 * sub/up (-> ..) where it was, so that the name d now leads to the box's parent. */
static int moved_dir(void) {
    works("mkdir /box/d", mkdir("/box/d", 0755));
    int fd = open("/box/d/mark", O_CREAT | O_WRONLY, 0644);
    works("create /box/d/mark", fd);
    if (fd >= 0) {
        write(fd, "INBOX mark", 10);
        close(fd);
    }
    int dfd = open("/box/d", O_RDONLY | O_DIRECTORY);
    works("open /box/d", dfd);
    works("rename d -> x", rename("/box/d", "/box/x"));
    works("rename sub/up -> d", rename("/box/sub/up", "/box/d"));
    return dfd;
}

static void moved_openat(void) {
    int dfd = moved_dir();
    int fd = openat(dfd, "secret.txt", O_RDONLY);
    refused_with("openat(dfd, secret.txt)", fd, ENOENT);
    if (fd >= 0) dump("secret.txt", fd);
    read_works(dfd, "mark", "INBOX mark");
}

static void moved_openat_dotdot(void) {
    int dfd = moved_dir();
    int fd = openat(dfd, "../secret.txt", O_RDONLY);
    refused_with("openat(dfd, ../secret.txt)", fd, EPERM);
    if (fd >= 0) dump("../secret.txt", fd);
    fd = openat(dfd, "..", O_RDONLY | O_DIRECTORY);
    refused_with("openat(dfd, ..)", fd, EPERM);
    read_works(dfd, "./mark", "INBOX mark");
}

static void moved_open_by_name(void) {
    moved_dir();
    open_refused("/box/d/secret.txt");
    read_works(BOX, "x/mark", "INBOX mark");
}

static void moved_create(void) {
    int dfd = moved_dir();
    int fd = openat(dfd, "created.txt", O_CREAT | O_WRONLY, 0644);
    works("create through dfd (lands in x)", fd);
    if (fd >= 0) close(fd);
}

static void moved_unlinkat(void) {
    int dfd = moved_dir();
    refused("unlinkat(dfd, secret.txt)", unlinkat(dfd, "secret.txt", 0));
    refused("unlinkat(dfd, secretdir)", unlinkat(dfd, "secretdir", AT_REMOVEDIR));
    works("unlinkat(dfd, mark)", unlinkat(dfd, "mark", 0));
}

static void moved_renameat(void) {
    int dfd = moved_dir();
    refused("renameat(dfd, secret.txt, dfd, stolen)",
            renameat(dfd, "secret.txt", dfd, "stolen.txt"));
    refused("renameat(dfd, secret.txt, box, stolen)",
            renameat(dfd, "secret.txt", BOX, "stolen.txt"));
    refused("renameat(dfd, mark, dfd, ../mark)", renameat(dfd, "mark", dfd, "../mark"));
    works("renameat(dfd, mark, box, mark2)", renameat(dfd, "mark", BOX, "mark2"));
}

static void moved_mkdirat(void) {
    int dfd = moved_dir();
    works("mkdirat(dfd, newdir) (lands in x)", mkdirat(dfd, "newdir", 0755));
    refused("mkdirat(dfd, ../newdir)", mkdirat(dfd, "../newdir", 0755));
}

static void moved_symlinkat(void) {
    int dfd = moved_dir();
    works("symlinkat(mark, dfd, lnk) (lands in x)", symlinkat("mark", dfd, "lnk"));
    read_works(dfd, "lnk", "INBOX mark");
    refused("symlinkat(x, dfd, ../lnk)", symlinkat("x", dfd, "../lnk"));
}

static void moved_readlinkat(void) {
    int dfd = moved_dir();
    char buf[256];
    refused("readlinkat(dfd, outlink)", (int)readlinkat(dfd, "outlink", buf, sizeof buf));
    ssize_t n = readlinkat(BOX, "d", buf, sizeof buf - 1);
    works("readlink /box/d (the moved link)", (int)n);
    if (n >= 0) {
        buf[n] = 0;
        printf("d -> %s\n", buf);
    }
}

static void moved_fstatat(void) {
    int dfd = moved_dir();
    struct stat st, x;
    refused("fstatat(dfd, secret.txt)", fstatat(dfd, "secret.txt", &st, 0));
    refused("fstatat(dfd, secretdir)", fstatat(dfd, "secretdir", &st, 0));
    works("fstat(dfd)", fstat(dfd, &st));
    works("stat /box/x", stat("/box/x", &x));
    if (st.st_ino != x.st_ino) {
        printf("BROKEN: dfd is not /box/x\n");
        failures++;
    }
}

static void moved_readdir(void) {
    int dfd = moved_dir();
    DIR *d = fdopendir(dfd);
    works("fdopendir(dfd)", d ? 0 : -1);
    if (!d) return;
    int saw_mark = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        printf("entry %s\n", e->d_name);
        if (strcmp(e->d_name, "secret.txt") == 0 || strcmp(e->d_name, "secretdir") == 0) {
            printf("ESCAPED: listed the box's parent\n");
            failures++;
        }
        saw_mark |= strcmp(e->d_name, "mark") == 0;
    }
    closedir(d);
    works("mark listed", saw_mark ? 0 : -1);
}

static void moved_utimensat(void) {
    int dfd = moved_dir();
    struct timespec t[2] = {{1, 0}, {1, 0}};
    refused("utimensat(dfd, secret.txt)", utimensat(dfd, "secret.txt", t, 0));
    works("utimensat(dfd, mark)", utimensat(dfd, "mark", t, 0));
    struct stat st;
    works("stat mark", fstatat(dfd, "mark", &st, 0));
    if (st.st_mtime != 1) {
        printf("BROKEN: mark's mtime is %lld\n", (long long)st.st_mtime);
        failures++;
    }
    /* The held (moved) directory's own times, and an open file's, through their handles. */
    struct timespec two[2] = {{2, 0}, {2, 0}};
    works("futimens(dfd)", futimens(dfd, two));
    int fd = openat(dfd, "mark", O_WRONLY);
    works("open mark", fd);
    struct timespec three[2] = {{3, 0}, {3, 0}};
    works("futimens(mark)", futimens(fd, three));
    close(fd);
    struct stat x;
    works("stat /box/x", stat("/box/x", &x));
    works("stat /box/x/mark", stat("/box/x/mark", &st));
    if (x.st_mtime != 2 || st.st_mtime != 3) {
        printf("BROKEN: mtimes %lld and %lld\n", (long long)x.st_mtime, (long long)st.st_mtime);
        failures++;
    }
}

static void moved_linkat(void) {
    int dfd = moved_dir();
    refused("linkat(dfd, secret.txt, box, hl)", linkat(dfd, "secret.txt", BOX, "hl", 0));
    refused("linkat(dfd, mark, dfd, ../hl)", linkat(dfd, "mark", dfd, "../hl", 0));
    works("linkat(dfd, mark, box, hl)", linkat(dfd, "mark", BOX, "hl", 0));
    read_works(BOX, "hl", "INBOX mark");
}

static void moved_raw_calls(void) {
    int dfd = moved_dir();
    __wasi_fd_t fd;
    raw_refused("path_open(dfd, ../secret.txt)",
                __wasi_path_open(dfd, 0, "../secret.txt", 0, __WASI_RIGHTS_FD_READ, 0, 0, &fd));
    raw_refused("path_create_directory(dfd, ../made)",
                __wasi_path_create_directory(dfd, "../made"));
    raw_refused("path_unlink_file(dfd, ../secret.txt)",
                __wasi_path_unlink_file(dfd, "../secret.txt"));
    __wasi_filestat_t st;
    raw_refused("path_filestat_get(dfd, secret.txt)",
                __wasi_path_filestat_get(dfd, 0, "secret.txt", &st));
}

/* Links to absolute directories and files. */
static void abs_dir_open(void) { open_refused("/box/abs/inner.txt"); }
static void abs_file_open(void) { open_refused("/box/absfile"); }

static void abs_dir_create(void) {
    int fd = open("/box/abs/new.txt", O_CREAT | O_WRONLY, 0644);
    refused("create /box/abs/new.txt", fd);
}

static void abs_dir_mkdir(void) { refused("mkdir /box/abs/newdir", mkdir("/box/abs/newdir", 0755)); }
static void abs_dir_unlink(void) { refused("unlink /box/abs/inner.txt", unlink("/box/abs/inner.txt")); }

static void abs_dir_rename(void) {
    refused("rename /box/abs/inner.txt -> /box/stolen",
            rename("/box/abs/inner.txt", "/box/stolen"));
    refused("rename /box/file.txt -> /box/abs/planted",
            rename("/box/file.txt", "/box/abs/planted"));
}

static void abs_dir_stat(void) {
    struct stat st;
    refused("stat /box/abs/inner.txt", stat("/box/abs/inner.txt", &st));
    refused("stat /box/abs", stat("/box/abs", &st));
    works("lstat /box/abs (the link itself)", lstat("/box/abs", &st));
}

static void abs_dir_opendir(void) {
    DIR *d = opendir("/box/abs");
    refused("opendir /box/abs", d ? 0 : -1);
    if (d) closedir(d);
}

static void abs_readlink(void) {
    char buf[256];
    refused_with("readlink /box/abs", (int)readlink("/box/abs", buf, sizeof buf), EPERM);
}

/* Link chains that climb. */
static void chain_climb(void) { open_refused("/box/a/secret.txt"); }
static void chain_two_hops(void) { open_refused("/box/l1"); }
static void chain_in_box(void) { read_works(BOX, "ok1", "INBOX file"); }

static void chain_mkdir(void) {
    refused("mkdir /box/a/made", mkdir("/box/a/made", 0755));
    refused("mkdir /box/b/made", mkdir("/box/b/made", 0755));
}

/* `..` past the root. */
static void dotdot_open(void) {
    open_refused("/box/../secret.txt");
    open_refused("/box/sub/../../secret.txt");
    __wasi_fd_t fd;
    raw_refused("path_open(box, ../secret.txt)",
                __wasi_path_open(BOX, 0, "../secret.txt", 0, __WASI_RIGHTS_FD_READ, 0, 0, &fd));
    read_works(BOX, "sub/../file.txt", "INBOX file");
}

static void dotdot_mkdir(void) {
    raw_refused("path_create_directory(box, ../made)", __wasi_path_create_directory(BOX, "../made"));
    works("mkdir /box/sub/../made", mkdir("/box/sub/../made", 0755));
}

static void dotdot_rename_out(void) {
    raw_refused("path_rename(box, file.txt, box, ../stolen.txt)",
                __wasi_path_rename(BOX, "file.txt", BOX, "../stolen.txt"));
    raw_refused("path_rename(box, sub, box, ../sub)", __wasi_path_rename(BOX, "sub", BOX, "../sub"));
    read_works(BOX, "file.txt", "INBOX file");
}

static void dotdot_rename_in(void) {
    raw_refused("path_rename(box, ../secret.txt, box, got.txt)",
                __wasi_path_rename(BOX, "../secret.txt", BOX, "got.txt"));
    raw_refused("path_rename(box, ../secretdir, box, gotdir)",
                __wasi_path_rename(BOX, "../secretdir", BOX, "gotdir"));
}

static void dotdot_unlink(void) {
    raw_refused("path_unlink_file(box, ../secret.txt)", __wasi_path_unlink_file(BOX, "../secret.txt"));
    raw_refused("path_remove_directory(box, ../secretdir)",
                __wasi_path_remove_directory(BOX, "../secretdir"));
}

static void dotdot_stat(void) {
    __wasi_filestat_t st;
    raw_refused("path_filestat_get(box, ..)", __wasi_path_filestat_get(BOX, 0, "..", &st));
    raw_refused("path_filestat_get(box, ../secret.txt)",
                __wasi_path_filestat_get(BOX, 1, "../secret.txt", &st));
}

/* Absolute guest paths, given to the host as they are (no preopen prefix matching). */
static void absolute_open(void) {
    char path[512];
    snprintf(path, sizeof path, "%s/secret.txt", outer);
    __wasi_fd_t fd;
    raw_refused("path_open(box, <host path>/secret.txt)",
                __wasi_path_open(BOX, 1, path, 0, __WASI_RIGHTS_FD_READ, 0, 0, &fd));
    raw_refused("path_open(box, /etc/passwd)",
                __wasi_path_open(BOX, 1, "/etc/passwd", 0, __WASI_RIGHTS_FD_READ, 0, 0, &fd));
}

static void absolute_create(void) {
    char path[512];
    snprintf(path, sizeof path, "%s/created.txt", outer);
    __wasi_fd_t fd;
    raw_refused("path_open(box, <host path>/created.txt, CREAT)",
                __wasi_path_open(BOX, 1, path, __WASI_OFLAGS_CREAT, __WASI_RIGHTS_FD_WRITE, 0, 0, &fd));
    snprintf(path, sizeof path, "%s/made", outer);
    raw_refused("path_create_directory(box, <host path>/made)",
                __wasi_path_create_directory(BOX, path));
}

static void absolute_remove(void) {
    char path[512];
    snprintf(path, sizeof path, "%s/secret.txt", outer);
    raw_refused("path_unlink_file(box, <host path>/secret.txt)", __wasi_path_unlink_file(BOX, path));
    snprintf(path, sizeof path, "%s/secretdir", outer);
    raw_refused("path_remove_directory(box, <host path>/secretdir)",
                __wasi_path_remove_directory(BOX, path));
    raw_refused("path_rename(box, <host path>/secretdir, box, got)",
                __wasi_path_rename(BOX, path, BOX, "got"));
}

static void absolute_open_outside_preopen(void) {
    /* wasi-libc refuses paths matching no preopen before asking the host. */
    open_refused("/secret.txt");
    open_refused("/etc/passwd");
}

/* Trailing slashes. */
static void trailing_slash_link(void) {
    open_refused("/box/escape/");
    DIR *d = opendir("/box/escape/");
    refused("opendir /box/escape/", d ? 0 : -1);
    refused("mkdir /box/escape/made/", mkdir("/box/escape/made/", 0755));
    refused("rmdir /box/escape/secretdir/", rmdir("/box/escape/secretdir/"));
}

static void trailing_slash_file(void) {
    int fd = open("/box/file.txt/", O_RDONLY);
    refused_with("open /box/file.txt/", fd, ENOTDIR);
    refused("unlink /box/file.txt/", unlink("/box/file.txt/"));
    works("mkdir /box/made/", mkdir("/box/made/", 0755));
    works("rename /box/made/ -> /box/made2/", rename("/box/made/", "/box/made2/"));
    refused_with("rename /box/file.txt/ -> /box/f", rename("/box/file.txt/", "/box/f"), ENOTDIR);
    works("rmdir /box/made2/", rmdir("/box/made2/"));
}

/* Links in intermediate components. */
static void mid_link_out(void) {
    open_refused("/box/sub/upup/secret.txt");
    open_refused("/box/escape/secretdir/inner.txt");
    refused("unlink /box/escape/secret.txt", unlink("/box/escape/secret.txt"));
}

static void mid_link_in(void) {
    read_works(BOX, "insub/file2.txt", "INBOX sub");
    read_works(BOX, "sub/up/file.txt", "INBOX file");
    works("mkdir /box/insub/made", mkdir("/box/insub/made", 0755));
}

/* Renaming out of the box via `..` and links. */
static void rename_out_via_link(void) {
    refused("rename /box/file.txt -> /box/escape/stolen.txt",
            rename("/box/file.txt", "/box/escape/stolen.txt"));
    refused("rename /box/sub -> /box/escape/sub", rename("/box/sub", "/box/escape/sub"));
    refused("rename /box/escape/secret.txt -> /box/got.txt",
            rename("/box/escape/secret.txt", "/box/got.txt"));
    works("rename /box/escape -> /box/escape2 (the link itself)",
          rename("/box/escape", "/box/escape2"));
    open_refused("/box/escape2/secret.txt");
}

/* Hard links out of (and into) the box. */
static void hardlink_out(void) {
    raw_refused("path_link(box, ../secret.txt, box, hl)",
                __wasi_path_link(BOX, 0, "../secret.txt", BOX, "hl"));
    raw_refused("path_link(box, file.txt, box, ../hl)",
                __wasi_path_link(BOX, 0, "file.txt", BOX, "../hl"));
    refused("link /box/escape/secret.txt /box/hl", link("/box/escape/secret.txt", "/box/hl"));
    refused("link /box/file.txt /box/escape/hl", link("/box/file.txt", "/box/escape/hl"));
    works("link /box/file.txt /box/hl", link("/box/file.txt", "/box/hl"));
    read_works(BOX, "hl", "INBOX file");
}

static void hardlink_of_outside_link(void) {
    /* Linking the link /box/absfile makes another link to the same absolute target. */
    works("link /box/absfile /box/hl", link("/box/absfile", "/box/hl"));
    open_refused("/box/hl");
    raw_refused("path_link(box, FOLLOW, absfile, box, hl2)",
                __wasi_path_link(BOX, __WASI_LOOKUPFLAGS_SYMLINK_FOLLOW, "absfile", BOX, "hl2"));
}

/* Links the guest makes itself. */
static void symlink_then_open(void) {
    works("symlink ../secret.txt /box/mine", symlink("../secret.txt", "/box/mine"));
    open_refused("/box/mine");
    works("symlink .. /box/updir", symlink("..", "/box/updir"));
    int fd = open("/box/updir/created.txt", O_CREAT | O_WRONLY, 0644);
    refused("create /box/updir/created.txt", fd);
}

static void symlink_absolute(void) {
    char path[512];
    snprintf(path, sizeof path, "%s/secret.txt", outer);
    refused_with("symlink <host path>/secret.txt /box/mine", symlink(path, "/box/mine"), EPERM);
    refused("symlink /etc /box/etc", symlink("/etc", "/box/etc"));
    refused("symlink x /box/../planted", symlink("x", "/box/../planted"));
}

static void symlink_in_box(void) {
    works("symlink file.txt /box/mine", symlink("file.txt", "/box/mine"));
    read_works(BOX, "mine", "INBOX file");
    works("symlink sub /box/s", symlink("sub", "/box/s"));
    read_works(BOX, "s/file2.txt", "INBOX sub");
    char buf[64];
    ssize_t n = readlink("/box/mine", buf, sizeof buf - 1);
    works("readlink /box/mine", (int)n);
    if (n >= 0) {
        buf[n] = 0;
        works("readlink gives file.txt", strcmp(buf, "file.txt") == 0 ? 0 : -1);
    }
}

/* O_CREAT through a dangling link whose target is outside. */
static void dangling_creat(void) {
    int fd = open("/box/dangle", O_CREAT | O_WRONLY, 0644);
    refused("create through /box/dangle", fd);
    fd = open("/box/dangleabs", O_CREAT | O_WRONLY, 0644);
    refused("create through /box/dangleabs", fd);
    fd = open("/box/dangle", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    refused("create+truncate through /box/dangle", fd);
}

static void dangling_creat_excl(void) {
    int fd = open("/box/dangle", O_CREAT | O_EXCL | O_WRONLY, 0644);
    refused_with("create exclusively at /box/dangle", fd, EEXIST);
    fd = open("/box/dangle", O_WRONLY | O_NOFOLLOW);
    refused("open /box/dangle O_NOFOLLOW", fd);
}

/* Readdir of a link out and of a moved directory. */
static void readdir_link_out(void) {
    DIR *d = opendir("/box/escape");
    refused("opendir /box/escape", d ? 0 : -1);
    d = opendir("/box/a");
    refused("opendir /box/a", d ? 0 : -1);
    d = opendir("/box/insub");
    works("opendir /box/insub", d ? 0 : -1);
    if (d) closedir(d);
}

/* Handles whose directory moved deeper, then `..` chains through them. */
static void moved_deeper(void) {
    works("mkdir /box/p", mkdir("/box/p", 0755));
    works("mkdir /box/p/q", mkdir("/box/p/q", 0755));
    int q = open("/box/p/q", O_RDONLY | O_DIRECTORY);
    works("open /box/p/q", q);
    works("rename /box/p -> /box/sub/p", rename("/box/p", "/box/sub/p"));
    refused("openat(q, ../../../secret.txt)", openat(q, "../../../secret.txt", O_RDONLY));
    works("mkdirat(q, r)", mkdirat(q, "r", 0755));
    struct stat st;
    works("stat /box/sub/p/q/r", stat("/box/sub/p/q/r", &st));
}

/* Renaming a held directory's parent chain around and replacing it by a link to an
 * absolute directory. */
static void moved_replaced_by_abs_link(void) {
    works("mkdir /box/d", mkdir("/box/d", 0755));
    int dfd = open("/box/d", O_RDONLY | O_DIRECTORY);
    works("rename d -> x", rename("/box/d", "/box/x"));
    works("rename abs -> d", rename("/box/abs", "/box/d"));
    int fd = openat(dfd, "inner.txt", O_RDONLY);
    refused_with("openat(dfd, inner.txt)", fd, ENOENT);
    if (fd >= 0) dump("inner.txt", fd);
    fd = openat(dfd, "planted.txt", O_CREAT | O_WRONLY, 0644);
    works("create through dfd (lands in x)", fd);
    if (fd >= 0) close(fd);
    open_refused("/box/d/inner.txt");
}

/* Descriptors renumbered over the preopen keep their own directory. */
static void renumbered_handle(void) {
    int dfd = moved_dir();
    works("fd_renumber(dfd, box)", __wasi_fd_renumber(dfd, BOX) == 0 ? 0 : -1);
    __wasi_fd_t fd;
    raw_refused("path_open(box (now x), secret.txt)",
                __wasi_path_open(BOX, 0, "secret.txt", 0, __WASI_RIGHTS_FD_READ, 0, 0, &fd));
    raw_refused("path_open(box (now x), ../secret.txt)",
                __wasi_path_open(BOX, 0, "../secret.txt", 0, __WASI_RIGHTS_FD_READ, 0, 0, &fd));
}

/* The host swaps /box/swap for a link out, in a loop; the guest opens through it. */
static void race_swap(void) {
    int inside = 0, refusals = 0;
    for (int i = 0; i < 3000; i++) {
        int fd = open("/box/swap/inner.txt", O_RDONLY);
        if (fd < 0) {
            refusals++;
        } else {
            char buf[64];
            ssize_t n = read(fd, buf, sizeof buf - 1);
            close(fd);
            buf[n < 0 ? 0 : n] = 0;
            if (strstr(buf, "OUTSIDE")) {
                printf("ESCAPED: read %s\n", buf);
                failures++;
            } else {
                inside++;
            }
        }
        fd = open("/box/swap/race_new.txt", O_CREAT | O_WRONLY, 0644);
        if (fd >= 0) close(fd);
        mkdir("/box/swap/race_dir", 0755);
        unlink("/box/swap/inner_victim.txt");
    }
    printf("race: %d in-box reads, %d refused\n", inside, refusals);
}

struct attack {
    const char *name;
    void (*run)(void);
};

static const struct attack attacks[] = {
    {"moved_openat", moved_openat},
    {"moved_openat_dotdot", moved_openat_dotdot},
    {"moved_open_by_name", moved_open_by_name},
    {"moved_create", moved_create},
    {"moved_unlinkat", moved_unlinkat},
    {"moved_renameat", moved_renameat},
    {"moved_mkdirat", moved_mkdirat},
    {"moved_symlinkat", moved_symlinkat},
    {"moved_readlinkat", moved_readlinkat},
    {"moved_fstatat", moved_fstatat},
    {"moved_readdir", moved_readdir},
    {"moved_utimensat", moved_utimensat},
    {"moved_linkat", moved_linkat},
    {"moved_raw_calls", moved_raw_calls},
    {"moved_deeper", moved_deeper},
    {"moved_replaced_by_abs_link", moved_replaced_by_abs_link},
    {"renumbered_handle", renumbered_handle},
    {"abs_dir_open", abs_dir_open},
    {"abs_file_open", abs_file_open},
    {"abs_dir_create", abs_dir_create},
    {"abs_dir_mkdir", abs_dir_mkdir},
    {"abs_dir_unlink", abs_dir_unlink},
    {"abs_dir_rename", abs_dir_rename},
    {"abs_dir_stat", abs_dir_stat},
    {"abs_dir_opendir", abs_dir_opendir},
    {"abs_readlink", abs_readlink},
    {"chain_climb", chain_climb},
    {"chain_two_hops", chain_two_hops},
    {"chain_in_box", chain_in_box},
    {"chain_mkdir", chain_mkdir},
    {"dotdot_open", dotdot_open},
    {"dotdot_mkdir", dotdot_mkdir},
    {"dotdot_rename_out", dotdot_rename_out},
    {"dotdot_rename_in", dotdot_rename_in},
    {"dotdot_unlink", dotdot_unlink},
    {"dotdot_stat", dotdot_stat},
    {"absolute_open", absolute_open},
    {"absolute_create", absolute_create},
    {"absolute_remove", absolute_remove},
    {"absolute_open_outside_preopen", absolute_open_outside_preopen},
    {"trailing_slash_link", trailing_slash_link},
    {"trailing_slash_file", trailing_slash_file},
    {"mid_link_out", mid_link_out},
    {"mid_link_in", mid_link_in},
    {"rename_out_via_link", rename_out_via_link},
    {"hardlink_out", hardlink_out},
    {"hardlink_of_outside_link", hardlink_of_outside_link},
    {"symlink_then_open", symlink_then_open},
    {"symlink_absolute", symlink_absolute},
    {"symlink_in_box", symlink_in_box},
    {"dangling_creat", dangling_creat},
    {"dangling_creat_excl", dangling_creat_excl},
    {"readdir_link_out", readdir_link_out},
    {"race_swap", race_swap},
};

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: attacks NAME HOST-PARENT\n");
        return 2;
    }
    outer = argv[2];
    if (strcmp(argv[1], "list") == 0) {
        for (size_t i = 0; i < sizeof attacks / sizeof attacks[0]; i++) printf("%s\n", attacks[i].name);
        return 0;
    }
    for (size_t i = 0; i < sizeof attacks / sizeof attacks[0]; i++) {
        if (strcmp(attacks[i].name, argv[1]) == 0) {
            attacks[i].run();
            printf("%s: %d failure(s)\n", argv[1], failures);
            return failures != 0;
        }
    }
    fprintf(stderr, "no attack named %s\n", argv[1]);
    return 2;
}
