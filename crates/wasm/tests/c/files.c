/* Files in the working directory: create a directory, write files with stdio and with
 * POSIX calls, read them back, seek and tell, append, rename, stat, list the directory
 * (sorted), remove everything, and report the errors of operations that must fail. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Print an operation's result and, when it failed, its errno by name. Called with the
 * result already computed, so errno is read right after the call. */
static void outcome(const char *what, long result) {
    int e = errno;
    const char *name = e == ENOENT ? "ENOENT" : e == EEXIST ? "EEXIST" : e == ENOTEMPTY ? "ENOTEMPTY"
                     : e == ENOTDIR ? "ENOTDIR" : e == EISDIR ? "EISDIR" : "other";
    printf("%s: %ld%s%s\n", what, result, result < 0 ? " " : "", result < 0 ? name : "");
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void list(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) {
        printf("opendir %s failed\n", dir);
        return;
    }
    char *names[64];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 64)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, by_name);
    printf("%s:", dir);
    for (int i = 0; i < n; i++) {
        char path[256];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (stat(path, &st) == 0)
        {
            if (S_ISDIR(st.st_mode)) printf(" %s(dir)", names[i]);
            else printf(" %s(file %lld)", names[i], (long long)st.st_size);
        }
        free(names[i]);
    }
    printf("\n");
}

int main(void) {
    if (mkdir("work", 0755) != 0) {
        printf("mkdir failed: %s\n", strerror(errno));
        return 1;
    }
    FILE *f = fopen("work/numbers.txt", "w");
    for (int i = 1; i <= 100; i++) fprintf(f, "%d%c", i * i, i % 10 ? ' ' : '\n');
    fclose(f);
    f = fopen("work/numbers.txt", "r");
    long total = 0, count = 0, v;
    while (fscanf(f, "%ld", &v) == 1) {
        total += v;
        count++;
    }
    printf("read %ld numbers, sum %ld\n", count, total);
    fseek(f, 0, SEEK_END);
    printf("size by ftell: %ld\n", ftell(f));
    fseek(f, 10, SEEK_SET);
    char chunk[16] = {0};
    fread(chunk, 1, 12, f);
    printf("bytes 10..22: [%s]\n", chunk);
    fclose(f);

    int fd = open("work/raw.bin", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    unsigned char bytes[256];
    for (int i = 0; i < 256; i++) bytes[i] = (unsigned char)(i * 7);
    outcome("write", write(fd, bytes, sizeof bytes));
    close(fd);
    fd = open("work/raw.bin", O_RDONLY);
    outcome("lseek end", (long)lseek(fd, 0, SEEK_END));
    lseek(fd, 100, SEEK_SET);
    unsigned char back[4];
    long got = (long)read(fd, back, 4);
    printf("read: %ld -> %u %u %u %u\n", got, back[0], back[1], back[2], back[3]);
    got = (long)pread(fd, back, 1, 200);
    printf("pread at 200: %ld -> %u\n", got, back[0]);
    close(fd);

    f = fopen("work/log.txt", "a");
    fputs("first\n", f);
    fclose(f);
    f = fopen("work/log.txt", "a");
    fputs("second\n", f);
    fclose(f);
    f = fopen("work/log.txt", "r");
    char line[64];
    while (fgets(line, sizeof line, f)) printf("log: %s", line);
    fclose(f);

    mkdir("work/sub", 0755);
    rename("work/log.txt", "work/sub/renamed.txt");
    list("work");
    list("work/sub");
    struct stat st;
    long r = stat("work/missing", &st);
    outcome("stat missing", r);
    r = rmdir("work/sub");
    outcome("rmdir non-empty", r);
    r = open("work/nope/x", O_RDONLY);
    outcome("open missing", r);
    r = open("work/raw.bin/x", O_RDONLY);
    outcome("open below a file", r);
    r = mkdir("work", 0755);
    outcome("mkdir existing", r);
    r = open("work/raw.bin", O_WRONLY | O_CREAT | O_EXCL, 0644);
    outcome("exclusive create", r);
    r = unlink("work/sub");
    outcome("unlink a directory", r);
    unlink("work/sub/renamed.txt");
    rmdir("work/sub");
    unlink("work/numbers.txt");
    unlink("work/raw.bin");
    list("work");
    r = rmdir("work");
    outcome("rmdir work", r);
    printf("work exists afterwards: %s\n", stat("work", &st) == 0 ? "yes" : "no");
    return 0;
}
