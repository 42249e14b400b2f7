/* Text processing on stdin: line, word and character counts, word frequencies in a hash
 * table (top words sorted by count then name), the longest word, a Caesar-shifted and an
 * upper-cased line, and numbers parsed with strtol and formatted with snprintf. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct word {
    char *text;
    int count;
    struct word *next;
};

enum { BUCKETS = 1024 };
static struct word *table[BUCKETS];
static int distinct;

static unsigned hash(const char *s) {
    unsigned h = 5381;
    while (*s) h = h * 33 + (unsigned char)*s++;
    return h % BUCKETS;
}

static void add(const char *s) {
    unsigned h = hash(s);
    for (struct word *w = table[h]; w; w = w->next)
        if (strcmp(w->text, s) == 0) {
            w->count++;
            return;
        }
    struct word *w = malloc(sizeof *w);
    w->text = strdup(s);
    w->count = 1;
    w->next = table[h];
    table[h] = w;
    distinct++;
}

static int by_count(const void *a, const void *b) {
    const struct word *x = *(struct word *const *)a, *y = *(struct word *const *)b;
    if (x->count != y->count) return y->count - x->count;
    return strcmp(x->text, y->text);
}

int main(void) {
    char line[1024];
    int lines = 0, words = 0, chars = 0;
    long number_sum = 0;
    char longest[64] = "";
    while (fgets(line, sizeof line, stdin)) {
        lines++;
        chars += (int)strlen(line);
        if (lines == 1) {
            char shifted[1024], upper[1024];
            size_t i;
            for (i = 0; line[i] && line[i] != '\n'; i++) {
                char c = line[i];
                shifted[i] = isalpha((unsigned char)c)
                                 ? (char)((tolower((unsigned char)c) - 'a' + 13) % 26 + 'a')
                                 : c;
                upper[i] = (char)toupper((unsigned char)c);
            }
            shifted[i] = upper[i] = '\0';
            printf("rot13: %s\nupper: %s\n", shifted, upper);
        }
        for (char *tok = strtok(line, " \t\n.,;:!?\"()"); tok; tok = strtok(NULL, " \t\n.,;:!?\"()")) {
            char *end;
            long v = strtol(tok, &end, 10);
            if (*end == '\0') {
                number_sum += v;
                continue;
            }
            for (char *p = tok; *p; p++) *p = (char)tolower((unsigned char)*p);
            words++;
            add(tok);
            if (strlen(tok) > strlen(longest) && strlen(tok) < sizeof longest) strcpy(longest, tok);
        }
    }
    printf("%d lines, %d words (%d distinct), %d characters\n", lines, words, distinct, chars);
    printf("sum of numbers: %ld\n", number_sum);
    printf("longest word: %s (%zu letters)\n", longest, strlen(longest));
    struct word **all = malloc((size_t)distinct * sizeof *all);
    int n = 0;
    for (int b = 0; b < BUCKETS; b++)
        for (struct word *w = table[b]; w; w = w->next) all[n++] = w;
    qsort(all, (size_t)n, sizeof *all, by_count);
    for (int i = 0; i < n && i < 12; i++) {
        char bar[32];
        int len = all[i]->count < 30 ? all[i]->count : 30;
        memset(bar, '#', (size_t)len);
        bar[len] = '\0';
        char label[48];
        snprintf(label, sizeof label, "%-12s|%4d", all[i]->text, all[i]->count);
        printf("%s %s\n", label, bar);
    }
    free(all);
    return 0;
}
