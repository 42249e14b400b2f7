/* Recursion: N-queens counts, Ackermann, Towers of Hanoi, a recursive-descent expression
 * evaluator, permutations in lexicographic order, a recursive flood fill, and deep (but
 * bounded) recursion through function pointers. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int queens(int n, int row, unsigned cols, unsigned d1, unsigned d2) {
    if (row == n) return 1;
    int count = 0;
    for (int c = 0; c < n; c++) {
        unsigned a = 1u << c, b = 1u << (row + c), d = 1u << (row - c + n);
        if ((cols & a) || (d1 & b) || (d2 & d)) continue;
        count += queens(n, row + 1, cols | a, d1 | b, d2 | d);
    }
    return count;
}

static uint32_t ackermann(uint32_t m, uint32_t n) {
    if (m == 0) return n + 1;
    if (n == 0) return ackermann(m - 1, 1);
    return ackermann(m - 1, ackermann(m, n - 1));
}

static uint64_t hanoi_moves;
static uint32_t hanoi_digest;

static void hanoi(int n, int from, int to, int via) {
    if (n == 0) return;
    hanoi(n - 1, from, via, to);
    hanoi_moves++;
    hanoi_digest = hanoi_digest * 31 + (uint32_t)(from * 3 + to);
    hanoi(n - 1, via, to, from);
}

/* expr := term (('+'|'-') term)*; term := factor (('*'|'/'|'%') factor)*;
 * factor := number | '-' factor | '(' expr ')' */
static const char *src;
static long expr(void);

static void skip(void) {
    while (*src == ' ') src++;
}

static long factor(void) {
    skip();
    if (*src == '-') {
        src++;
        return -factor();
    }
    if (*src == '(') {
        src++;
        long v = expr();
        skip();
        if (*src == ')') src++;
        return v;
    }
    long v = 0;
    while (*src >= '0' && *src <= '9') v = v * 10 + (*src++ - '0');
    return v;
}

static long term(void) {
    long v = factor();
    for (;;) {
        skip();
        char op = *src;
        if (op != '*' && op != '/' && op != '%') return v;
        src++;
        long r = factor();
        v = op == '*' ? v * r : r == 0 ? 0 : op == '/' ? v / r : v % r;
    }
}

static long expr(void) {
    long v = term();
    for (;;) {
        skip();
        char op = *src;
        if (op != '+' && op != '-') return v;
        src++;
        long r = term();
        v = op == '+' ? v + r : v - r;
    }
}

static char perm[8];
static int perm_count;

static void permute(char *rest, int depth, int n) {
    if (depth == n) {
        perm_count++;
        if (perm_count <= 3 || perm_count % 1000 == 0) printf("  perm %d: %.*s\n", perm_count, n, perm);
        return;
    }
    for (int i = 0; i < n; i++) {
        if (!rest[i]) continue;
        perm[depth] = rest[i];
        rest[i] = 0;
        permute(rest, depth + 1, n);
        rest[i] = perm[depth];
    }
}

enum { W = 40, H = 20 };
static char grid[H][W + 1];

static int fill(int y, int x) {
    if (y < 0 || y >= H || x < 0 || x >= W || grid[y][x] != '.') return 0;
    grid[y][x] = '~';
    return 1 + fill(y + 1, x) + fill(y - 1, x) + fill(y, x + 1) + fill(y, x - 1);
}

typedef uint64_t (*step_fn)(uint64_t, int);
static uint64_t odd_step(uint64_t acc, int n);

static uint64_t even_step(uint64_t acc, int n) {
    if (n == 0) return acc;
    step_fn next = odd_step;
    return next(acc * 3 + (uint64_t)n, n - 1) ^ 1;
}

static uint64_t odd_step(uint64_t acc, int n) {
    if (n == 0) return acc;
    step_fn next = even_step;
    return next(acc + (uint64_t)n * 7, n - 1) + 1;
}

int main(void) {
    for (int n = 1; n <= 10; n++) printf("queens(%d) = %d\n", n, queens(n, 0, 0, 0, 0));
    for (uint32_t m = 0; m <= 3; m++)
        for (uint32_t n = 0; n <= 4; n++) printf("ackermann(%u, %u) = %u\n", m, n, ackermann(m, n));
    hanoi(20, 1, 3, 2);
    printf("hanoi(20): %llu moves, digest %08x\n", (unsigned long long)hanoi_moves, hanoi_digest);
    const char *exprs[] = {"1 + 2 * 3", "(1 + 2) * 3", "-(4 - 10) * (7 % 4) / 2", "2*(3*(4*(5*(6+1))))", "100 / (5 - 5)"};
    for (size_t i = 0; i < sizeof exprs / sizeof *exprs; i++) {
        src = exprs[i];
        printf("%s = %ld\n", exprs[i], expr());
    }
    char letters[] = "abcdefg";
    permute(letters, 0, 7);
    printf("%d permutations\n", perm_count);
    for (int y = 0; y < H; y++) {
        for (int x = 0; x < W; x++)
            grid[y][x] = (x == 0 || y == 0 || x == W - 1 || y == H - 1 || (x % 7 == 3 && y % 5 != 2) ||
                          (y == 10 && x > 5 && x < 30))
                             ? '#'
                             : '.';
        grid[y][W] = '\0';
    }
    int filled = fill(1, 1);
    printf("flood fill reached %d cells\n", filled);
    for (int y = 8; y < 13; y++) printf("  %s\n", grid[y]);
    printf("mutual recursion: %llu\n", (unsigned long long)even_step(1, 3000));
    return 0;
}
