/* The program's arguments and environment: argv after the program name, selected
 * variables with getenv, the whole environment sorted, a computed exit status. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

static int by_text(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv) {
    printf("argc = %d\n", argc);
    int sum = 0;
    for (int i = 1; i < argc; i++) {
        printf("argv[%d] = \"%s\" (%zu bytes)\n", i, argv[i], strlen(argv[i]));
        sum += atoi(argv[i]);
    }
    printf("sum of numeric arguments: %d\n", sum);
    const char *names[] = {"GREETING", "EMPTY", "UNSET_VARIABLE", "COUNT"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        const char *v = getenv(names[i]);
        printf("%s %s%s%s\n", names[i], v ? "= \"" : "is unset", v ? v : "", v ? "\"" : "");
    }
    size_t n = 0;
    while (environ[n]) n++;
    char **sorted = malloc((n + 1) * sizeof *sorted);
    memcpy(sorted, environ, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, by_text);
    printf("%zu variables:\n", n);
    for (size_t i = 0; i < n; i++) printf("  %s\n", sorted[i]);
    free(sorted);
    const char *count = getenv("COUNT");
    int status = (count ? atoi(count) : 0) + argc;
    printf("exiting with %d\n", status);
    fflush(stdout);
    exit(status);
}
