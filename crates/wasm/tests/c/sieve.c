/* Primes: a sieve of Eratosthenes up to 5,000,000, with counts per decade, twin primes, the
 * largest prime gap, and a check of the sieve by trial division on a sample. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_prime_slow(uint32_t n) {
    if (n < 2) return 0;
    for (uint32_t d = 2; d * d <= n; d++)
        if (n % d == 0) return 0;
    return 1;
}

int main(void) {
    enum { LIMIT = 5000000 };
    unsigned char *composite = calloc(LIMIT + 1, 1);
    if (!composite) return 1;
    composite[0] = composite[1] = 1;
    for (uint32_t i = 2; (uint64_t)i * i <= LIMIT; i++)
        if (!composite[i])
            for (uint32_t j = i * i; j <= LIMIT; j += i) composite[j] = 1;
    uint32_t count = 0, twins = 0, last = 0, gap = 0, gap_at = 0;
    uint64_t sum = 0;
    for (uint32_t n = 2, decade = 10; n <= LIMIT; n++) {
        if (!composite[n]) {
            count++;
            sum += n;
            if (last && n - last == 2) twins++;
            if (last && n - last > gap) {
                gap = n - last;
                gap_at = last;
            }
            last = n;
        }
        if (n == decade) {
            printf("primes below %u: %u\n", decade, count);
            decade *= 10;
        }
    }
    printf("primes up to %u: %u (sum %llu)\n", LIMIT, count, (unsigned long long)sum);
    printf("twin prime pairs: %u\n", twins);
    printf("largest gap: %u after %u\n", gap, gap_at);
    printf("largest prime: %u\n", last);
    uint32_t mismatches = 0;
    for (uint32_t n = 0; n <= LIMIT; n += 997)
        if (is_prime_slow(n) != !composite[n]) mismatches++;
    printf("trial division disagrees on %u samples\n", mismatches);
    free(composite);
    return mismatches != 0;
}
