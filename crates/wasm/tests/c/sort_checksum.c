/* Sorting: a pseudo-random array sorted three ways (qsort, merge sort, heap sort), checked
 * against each other, with checksums of the input and the sorted output. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t state = 12345;

static uint32_t next(void) {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return state;
}

static int compare(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static void merge_sort(int32_t *a, int32_t *tmp, size_t n) {
    if (n < 2) return;
    size_t half = n / 2;
    merge_sort(a, tmp, half);
    merge_sort(a + half, tmp, n - half);
    size_t i = 0, j = half, k = 0;
    while (i < half && j < n) tmp[k++] = a[i] <= a[j] ? a[i++] : a[j++];
    while (i < half) tmp[k++] = a[i++];
    while (j < n) tmp[k++] = a[j++];
    memcpy(a, tmp, n * sizeof *a);
}

static void sift_down(int32_t *a, size_t root, size_t n) {
    for (;;) {
        size_t child = 2 * root + 1;
        if (child >= n) return;
        if (child + 1 < n && a[child + 1] > a[child]) child++;
        if (a[root] >= a[child]) return;
        int32_t t = a[root];
        a[root] = a[child];
        a[child] = t;
        root = child;
    }
}

static void heap_sort(int32_t *a, size_t n) {
    for (size_t i = n / 2; i-- > 0;) sift_down(a, i, n);
    for (size_t end = n; end-- > 1;) {
        int32_t t = a[0];
        a[0] = a[end];
        a[end] = t;
        sift_down(a, 0, end);
    }
}

static uint64_t fnv1a(const int32_t *a, size_t n) {
    uint64_t h = 14695981039346656037ull;
    const unsigned char *p = (const unsigned char *)a;
    for (size_t i = 0; i < n * sizeof *a; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

int main(void) {
    enum { N = 200000 };
    int32_t *input = malloc(N * sizeof *input);
    int32_t *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b), *c = malloc(N * sizeof *c);
    int32_t *tmp = malloc(N * sizeof *tmp);
    if (!input || !a || !b || !c || !tmp) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < N; i++) input[i] = (int32_t)(next() % 2000001) - 1000000;
    printf("input checksum %016llx\n", (unsigned long long)fnv1a(input, N));
    memcpy(a, input, N * sizeof *a);
    memcpy(b, input, N * sizeof *b);
    memcpy(c, input, N * sizeof *c);
    qsort(a, N, sizeof *a, compare);
    merge_sort(b, tmp, N);
    heap_sort(c, N);
    int agree = memcmp(a, b, N * sizeof *a) == 0 && memcmp(a, c, N * sizeof *a) == 0;
    size_t inversions = 0, distinct = 1;
    for (size_t i = 1; i < N; i++) {
        if (a[i - 1] > a[i]) inversions++;
        if (a[i - 1] != a[i]) distinct++;
    }
    int64_t sum = 0;
    for (size_t i = 0; i < N; i++) sum += a[i];
    printf("sorts agree: %s\n", agree ? "yes" : "no");
    printf("out of order: %zu, distinct: %zu\n", inversions, distinct);
    printf("min %d, median %d, max %d, sum %lld\n", a[0], a[N / 2], a[N - 1], (long long)sum);
    printf("sorted checksum %016llx\n", (unsigned long long)fnv1a(a, N));
    for (size_t i = 0; i < N; i += N / 8) printf("a[%zu] = %d\n", i, a[i]);
    free(input);
    free(a);
    free(b);
    free(c);
    free(tmp);
    return agree ? 0 : 1;
}
