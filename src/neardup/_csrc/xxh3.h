/* XXH3-64 (xxHash 0.8 reference algorithm, all lengths, any seed) and the mixers neardup's
 * contract is defined with. Bit-identical to xxhash.xxh3_64_intdigest and to the numba
 * fallback in neardup/_numba/hashing.py; tests check both on random inputs. */
#ifndef NEARDUP_XXH3_H
#define NEARDUP_XXH3_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define ND_P32_1 0x9E3779B1ULL
#define ND_P32_2 0x85EBCA77ULL
#define ND_P32_3 0xC2B2AE3DULL
#define ND_P64_1 0x9E3779B185EBCA87ULL
#define ND_P64_2 0xC2B2AE3D27D4EB4FULL
#define ND_P64_3 0x165667B19E3779F9ULL
#define ND_P64_4 0x85EBCA77C2B2AE63ULL
#define ND_P64_5 0x27D4EB2F165667C5ULL
#define ND_PMX1 0x165667919E3779F9ULL
#define ND_PMX2 0x9FB21C651E98DF25ULL
#define ND_GOLDEN 0x9E3779B97F4A7C15ULL

static const uint8_t ND_SECRET[192] = {
    0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c,
    0xf7, 0x21, 0xad, 0x1c, 0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb,
    0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f, 0xcb, 0x79, 0xe6, 0x4e,
    0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
    0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6,
    0x81, 0x3a, 0x26, 0x4c, 0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb,
    0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3, 0x71, 0x64, 0x48, 0x97,
    0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
    0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7,
    0xc7, 0x0b, 0x4f, 0x1d, 0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31,
    0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64, 0xea, 0xc5, 0xac, 0x83,
    0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
    0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26,
    0x29, 0xd4, 0x68, 0x9e, 0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc,
    0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce, 0x45, 0xcb, 0x3a, 0x8f,
    0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e,};

/* XXH3 reads and writes little-endian words: a byte swap on big-endian machines only. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define ND_LE64(v) __builtin_bswap64(v)
#define ND_LE32(v) __builtin_bswap32(v)
#else
#define ND_LE64(v) (v)
#define ND_LE32(v) (v)
#endif

static inline uint64_t nd_r64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return ND_LE64(v);
}

static inline uint64_t nd_r32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return ND_LE32(v);
}

static inline void nd_w64(uint8_t *p, uint64_t v) {
    v = ND_LE64(v);
    memcpy(p, &v, 8);
}

static inline uint64_t nd_rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static inline uint64_t nd_fold(uint64_t a, uint64_t b) {
    __uint128_t p = (__uint128_t)a * b;
    return (uint64_t)p ^ (uint64_t)(p >> 64);
}

static inline uint64_t nd_xxh64_avalanche(uint64_t h) {
    h ^= h >> 33;
    h *= ND_P64_2;
    h ^= h >> 29;
    h *= ND_P64_3;
    h ^= h >> 32;
    return h;
}

static inline uint64_t nd_avalanche(uint64_t h) {
    h ^= h >> 37;
    h *= ND_PMX1;
    h ^= h >> 32;
    return h;
}

static inline uint64_t nd_rrmxmx(uint64_t h, uint64_t n) {
    h ^= nd_rotl(h, 49) ^ nd_rotl(h, 24);
    h *= ND_PMX2;
    h ^= (h >> 35) + n;
    h *= ND_PMX2;
    h ^= h >> 28;
    return h;
}

static inline uint64_t nd_mix16(const uint8_t *b, const uint8_t *s, uint64_t seed) {
    return nd_fold(nd_r64(b) ^ (nd_r64(s) + seed), nd_r64(b + 8) ^ (nd_r64(s + 8) - seed));
}

static inline void nd_acc512(uint64_t *acc, const uint8_t *b, const uint8_t *s) {
    for (int lane = 0; lane < 8; lane++) {
        uint64_t v = nd_r64(b + 8 * lane);
        uint64_t key = v ^ nd_r64(s + 8 * lane);
        acc[lane ^ 1] += v;
        acc[lane] += (key & 0xFFFFFFFFULL) * (key >> 32);
    }
}

static uint64_t nd_xxh3_long(const uint8_t *b, size_t n, uint64_t seed) {
    uint8_t custom[192];
    const uint8_t *s = ND_SECRET;
    if (seed != 0) {
        for (int i = 0; i < 12; i++) {
            nd_w64(custom + 16 * i, nd_r64(ND_SECRET + 16 * i) + seed);
            nd_w64(custom + 16 * i + 8, nd_r64(ND_SECRET + 16 * i + 8) - seed);
        }
        s = custom;
    }
    uint64_t acc[8] = {ND_P32_3, ND_P64_1, ND_P64_2, ND_P64_3,
                       ND_P64_4, ND_P32_2, ND_P64_5, ND_P32_1};
    const size_t block_len = 1024;
    size_t nb_blocks = (n - 1) / block_len;
    for (size_t blk = 0; blk < nb_blocks; blk++) {
        const uint8_t *base = b + blk * block_len;
        for (int st = 0; st < 16; st++) nd_acc512(acc, base + st * 64, s + st * 8);
        for (int i = 0; i < 8; i++) {
            uint64_t a = acc[i];
            a ^= a >> 47;
            a ^= nd_r64(s + 128 + 8 * i);
            acc[i] = a * ND_P32_1;
        }
    }
    size_t nb_stripes = ((n - 1) - block_len * nb_blocks) / 64;
    const uint8_t *base = b + nb_blocks * block_len;
    for (size_t st = 0; st < nb_stripes; st++) nd_acc512(acc, base + st * 64, s + st * 8);
    nd_acc512(acc, b + n - 64, s + 192 - 64 - 7);
    uint64_t result = (uint64_t)n * ND_P64_1;
    for (int i = 0; i < 4; i++)
        result += nd_fold(acc[2 * i] ^ nd_r64(s + 11 + 16 * i),
                          acc[2 * i + 1] ^ nd_r64(s + 19 + 16 * i));
    return nd_avalanche(result);
}

/* XXH3-64 of b[0:n] with seed. */
static inline uint64_t nd_xxh3_64(const uint8_t *b, size_t n, uint64_t seed) {
    const uint8_t *s = ND_SECRET;
    if (n <= 16) {
        if (n > 8) {
            uint64_t bf1 = (nd_r64(s + 24) ^ nd_r64(s + 32)) + seed;
            uint64_t bf2 = (nd_r64(s + 40) ^ nd_r64(s + 48)) - seed;
            uint64_t lo = nd_r64(b) ^ bf1;
            uint64_t hi = nd_r64(b + n - 8) ^ bf2;
            uint64_t acc = (uint64_t)n + __builtin_bswap64(lo) + hi + nd_fold(lo, hi);
            return nd_avalanche(acc);
        }
        if (n >= 4) {
            uint64_t sd = seed ^ ((uint64_t)__builtin_bswap32((uint32_t)seed) << 32);
            uint64_t in1 = nd_r32(b);
            uint64_t in2 = nd_r32(b + n - 4);
            uint64_t bf = (nd_r64(s + 8) ^ nd_r64(s + 16)) - sd;
            return nd_rrmxmx((in2 + (in1 << 32)) ^ bf, n);
        }
        if (n > 0) {
            uint64_t c1 = b[0], c2 = b[n >> 1], c3 = b[n - 1];
            uint64_t combined = (c1 << 16) | (c2 << 24) | c3 | ((uint64_t)n << 8);
            uint64_t bf = (nd_r32(s) ^ nd_r32(s + 4)) + seed;
            return nd_xxh64_avalanche(combined ^ bf);
        }
        return nd_xxh64_avalanche(seed ^ (nd_r64(s + 56) ^ nd_r64(s + 64)));
    }
    if (n <= 128) {
        uint64_t acc = (uint64_t)n * ND_P64_1;
        if (n > 32) {
            if (n > 64) {
                if (n > 96) {
                    acc += nd_mix16(b + 48, s + 96, seed);
                    acc += nd_mix16(b + n - 64, s + 112, seed);
                }
                acc += nd_mix16(b + 32, s + 64, seed);
                acc += nd_mix16(b + n - 48, s + 80, seed);
            }
            acc += nd_mix16(b + 16, s + 32, seed);
            acc += nd_mix16(b + n - 32, s + 48, seed);
        }
        acc += nd_mix16(b, s, seed);
        acc += nd_mix16(b + n - 16, s + 16, seed);
        return nd_avalanche(acc);
    }
    if (n <= 240) {
        uint64_t acc = (uint64_t)n * ND_P64_1;
        for (int i = 0; i < 8; i++) acc += nd_mix16(b + 16 * i, s + 16 * i, seed);
        acc = nd_avalanche(acc);
        for (size_t i = 8; i < n / 16; i++) acc += nd_mix16(b + 16 * i, s + 16 * (i - 8) + 3, seed);
        acc += nd_mix16(b + n - 16, s + 136 - 17, seed);
        return nd_avalanche(acc);
    }
    return nd_xxh3_long(b, n, seed);
}

/* splitmix64's finaliser. */
static inline uint64_t nd_mix64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBULL;
    x ^= x >> 31;
    return x;
}

/* Bit word `word` of a feature with key `key` under `seed` (word 0, seed 0: the key). */
static inline uint64_t nd_bit_word(uint64_t key, uint64_t seed, int64_t word) {
    if (seed == 0 && word == 0) return key;
    return nd_mix64(key + (2 * seed + (uint64_t)word) * ND_GOLDEN);
}

#endif
