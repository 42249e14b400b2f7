/* Integer-heavy code: SHA-256 and CRC-32 of generated data, 64-bit multiply, divide and
 * remainder (signed and unsigned, by constants and variables), rotates, bit counts, and
 * 128-bit products built from 64-bit halves. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t ror(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void sha256(const uint8_t *data, size_t len, uint8_t out[32]) {
    uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                     0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    size_t padded = (len + 9 + 63) / 64 * 64;
    for (size_t block = 0; block < padded; block += 64) {
        uint8_t chunk[64];
        for (size_t i = 0; i < 64; i++) {
            size_t at = block + i;
            uint64_t bits = (uint64_t)len * 8;
            chunk[i] = at < len ? data[at] : at == len ? 0x80
                     : at >= padded - 8 ? (uint8_t)(bits >> (8 * (padded - 1 - at))) : 0;
        }
        uint32_t w[64];
        for (int i = 0; i < 16; i++)
            w[i] = (uint32_t)chunk[4 * i] << 24 | (uint32_t)chunk[4 * i + 1] << 16 |
                   (uint32_t)chunk[4 * i + 2] << 8 | chunk[4 * i + 3];
        for (int i = 16; i < 64; i++) {
            uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
            uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16] + s0 + w[i - 7] + s1;
        }
        uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
        for (int i = 0; i < 64; i++) {
            uint32_t t1 = hh + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
            uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
            hh = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
        }
        h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
    }
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 4; j++) out[4 * i + j] = (uint8_t)(h[i] >> (24 - 8 * j));
}

static uint32_t crc32(const uint8_t *p, size_t n) {
    static uint32_t table[256];
    if (!table[1])
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++) c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
            table[i] = c;
        }
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) c = table[(c ^ p[i]) & 0xff] ^ (c >> 8);
    return c ^ 0xffffffffu;
}

static void hex(const char *label, const uint8_t *b, size_t n) {
    printf("%s ", label);
    for (size_t i = 0; i < n; i++) printf("%02x", b[i]);
    printf("\n");
}

/* The high 64 bits of a * b from 32-bit pieces. */
static uint64_t mulhi(uint64_t a, uint64_t b) {
    uint64_t al = (uint32_t)a, ah = a >> 32, bl = (uint32_t)b, bh = b >> 32;
    uint64_t mid1 = ah * bl, mid2 = al * bh, low = al * bl;
    uint64_t carry = ((low >> 32) + (uint32_t)mid1 + (uint32_t)mid2) >> 32;
    return ah * bh + (mid1 >> 32) + (mid2 >> 32) + carry;
}

int main(void) {
    uint8_t digest[32];
    sha256((const uint8_t *)"", 0, digest);
    hex("sha256('')   ", digest, 32);
    sha256((const uint8_t *)"abc", 3, digest);
    hex("sha256('abc')", digest, 32);
    static uint8_t data[100000];
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < sizeof data; i++) {
        x ^= x >> 12; x ^= x << 25; x ^= x >> 27;
        data[i] = (uint8_t)((x * 0x2545f4914f6cdd1dull) >> 56);
    }
    sha256(data, sizeof data, digest);
    hex("sha256(data) ", digest, 32);
    printf("crc32('123456789') = %08x, crc32(data) = %08x\n", crc32((const uint8_t *)"123456789", 9),
           crc32(data, sizeof data));

    uint64_t acc = 1;
    int64_t sacc = -1;
    uint32_t bits = 0, lead = 0, trail = 0;
    for (int i = 1; i <= 2000; i++) {
        uint64_t v = (uint64_t)i * 0x9e3779b97f4a7c15ull;
        uint64_t d = (v >> (i % 61)) | 1;
        acc = acc * 6364136223846793005ull + v / d + v % d + v / 1000003 + (v % 97);
        int64_t s = (int64_t)(v ^ (uint64_t)sacc);
        int64_t sd = (int64_t)(d >> 1) * ((i & 1) ? 1 : -1);
        if (sd == 0 || sd == -1) sd = 7; /* no division by zero, no INT64_MIN / -1 */
        /* Sums wrap in unsigned arithmetic (signed overflow would be undefined). */
        uint64_t terms = (uint64_t)(s / sd) + (uint64_t)(s % sd) + (uint64_t)(s / -13) + (uint64_t)(s % 10);
        sacc = (int64_t)((uint64_t)sacc + terms);
        bits += (uint32_t)__builtin_popcountll(v);
        lead += (uint32_t)__builtin_clzll(d);
        trail += (uint32_t)__builtin_ctzll(v | (1ull << 63));
        acc ^= mulhi(acc, v);
        acc = (acc << (i % 64)) | (acc >> ((64 - i % 64) % 64));
    }
    printf("unsigned mix %016llx, signed mix %lld\n", (unsigned long long)acc, (long long)sacc);
    printf("popcount %u, clz %u, ctz %u\n", bits, lead, trail);
    printf("mulhi(2^64-1, 2^64-1) = %016llx\n", (unsigned long long)mulhi(~0ull, ~0ull));
    int32_t q[] = {INT32_MIN, -7, -1, 0, 1, 7, INT32_MAX};
    for (int i = 0; i < 7; i++)
        printf("%d: /3 %d %%3 %d /-8 %d >>2 %d (u)>>2 %u (i64)*(i64) %lld\n", q[i], q[i] / 3, q[i] % 3,
               q[i] / -8, q[i] >> 2, (uint32_t)q[i] >> 2, (long long)q[i] * q[i]);
    return 0;
}
