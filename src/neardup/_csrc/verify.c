/* The verifier's kernels: shingle hash sets and the MinHash sketch (neardup/verify.py).
 * Port of the numba kernels in neardup/_numba/verify.py; the sketch definition is frozen
 * (docs/ACCURACY.md depends on it) and tests compare both paths bit for bit. */
#include <stdlib.h>

#include "kernels.h"
#include "xxh3.h"

static int64_t units_of(const uint8_t *buf, int64_t lo, int64_t hi, const uint8_t *cls, int mode,
                        uint64_t seed, int64_t *starts, int64_t *ends, uint64_t *units) {
    int64_t spans = nd_token_spans(buf, lo, hi, cls, 0, starts, ends);
    int char_mode = mode == 2 || (mode == 0 && nd_is_cjk(buf, lo, hi, cls));
    return nd_units_from_spans(buf, starts, ends, spans, char_mode, seed, units);
}

/* The shingle hashes of a document's u units into seg: one per window of n units (one window
 * of all units when u <= n); returns how many. */
int64_t nd_unit_shingles(const uint64_t *units, int64_t u, int64_t n, uint64_t *seg) {
    const uint64_t mult = 0x9E3779B97F4A7C15ULL;
    int64_t count = u == 0 ? 0 : (u <= n ? 1 : u - n + 1);
    int64_t width = n < u ? n : u;
    for (int64_t s = 0; s < count; s++) {
        uint64_t acc = units[s];
        for (int64_t j = 1; j < width; j++) acc = acc * mult + units[s + j];
        seg[s] = nd_mix64(acc);
    }
    return count;
}

/* Sorted unique shingle hashes per document into flat (capacity: len(buf) + ndoc + 1) and
 * out_off (ndoc + 1); returns the number of values, or -1 when out of memory. */
int64_t nd_shingles(const uint8_t *buf, int64_t nbuf, const int64_t *offsets, int64_t ndoc,
                    const int8_t *modes, const uint8_t *cls, int64_t n, uint64_t seed,
                    uint64_t *flat, int64_t *out_off) {
    uint64_t *units = malloc(sizeof(uint64_t) * (size_t)(nbuf + 1));
    int64_t *starts = malloc(sizeof(int64_t) * (size_t)(nbuf + 2));
    int64_t *ends = malloc(sizeof(int64_t) * (size_t)(nbuf + 2));
    int64_t pos = 0;
    if (!units || !starts || !ends) {
        pos = -1;
        goto done;
    }
    out_off[0] = 0;
    for (int64_t d = 0; d < ndoc; d++) {
        int64_t u = units_of(buf, offsets[d], offsets[d + 1], cls, modes[d], seed, starts, ends,
                             units);
        uint64_t *seg = flat + pos;
        int64_t count = nd_unit_shingles(units, u, n, seg);
        nd_sort_u64(seg, count);
        int64_t m = 0;
        for (int64_t s = 0; s < count; s++)
            if (s == 0 || seg[s] != seg[m - 1]) seg[m++] = seg[s];
        pos += m;
        out_off[d + 1] = pos;
    }
done:
    free(units);
    free(starts);
    free(ends);
    return pos;
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__)
/* the salt loop vectorises: AVX-512 / AVX2 clones, chosen when the module loads */
#define ND_SIMD_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define ND_SIMD_CLONES
#endif

/* Salts per register block: 32 running minima stay in registers (4 zmm / 8 ymm) while the
 * document's shingles stream past, instead of a load and a store of row[s] per shingle. */
#define ND_MH_BLOCK 32

/* Per document d and salt s: min over its shingles x of mix64(x ^ salts[s]) into out[d, s]. */
ND_SIMD_CLONES
void nd_minhash(const uint64_t *flat, const int64_t *offsets, int64_t ndoc, const uint64_t *salts,
                int64_t k, uint64_t *out) {
    int64_t full = k - k % ND_MH_BLOCK;
    for (int64_t d = 0; d < ndoc; d++) {
        uint64_t *row = out + d * k;
        const uint64_t *lo = flat + offsets[d], *hi = flat + offsets[d + 1];
        for (int64_t b = 0; b < full; b += ND_MH_BLOCK) {
            uint64_t acc[ND_MH_BLOCK], salt[ND_MH_BLOCK];
            for (int s = 0; s < ND_MH_BLOCK; s++) {
                acc[s] = ~0ULL;
                salt[s] = salts[b + s];
            }
            for (const uint64_t *p = lo; p < hi; p++) {
                uint64_t x = *p;
                for (int s = 0; s < ND_MH_BLOCK; s++) {
                    uint64_t z = nd_mix64(x ^ salt[s]);
                    acc[s] = z < acc[s] ? z : acc[s];
                }
            }
            for (int s = 0; s < ND_MH_BLOCK; s++) row[b + s] = acc[s];
        }
        for (int64_t s = full; s < k; s++) row[s] = ~0ULL; /* the last partial block */
        for (const uint64_t *p = lo; p < hi && full < k; p++) {
            uint64_t x = *p;
            for (int64_t s = full; s < k; s++) {
                uint64_t z = nd_mix64(x ^ salts[s]);
                row[s] = z < row[s] ? z : row[s];
            }
        }
    }
}

/* The sketch straight from the text: per document its shingle hashes (as nd_shingles, but
 * neither sorted nor deduplicated: a minimum does not care) go through nd_minhash at once,
 * so no flat array of every document's hashes is written, sorted and read back. Scratch is
 * sized by the longest document. Returns 0, or -1 when out of memory. */
int nd_sketch(const uint8_t *buf, const int64_t *offsets, int64_t ndoc, const int8_t *modes,
              const uint8_t *cls, int64_t n, uint64_t seed, const uint64_t *salts, int64_t k,
              uint64_t *out) {
    int64_t longest = 0;
    for (int64_t d = 0; d < ndoc; d++)
        if (offsets[d + 1] - offsets[d] > longest) longest = offsets[d + 1] - offsets[d];
    size_t cap = (size_t)(longest + 2);
    uint64_t *units = malloc(sizeof(uint64_t) * cap), *seg = malloc(sizeof(uint64_t) * cap);
    int64_t *starts = malloc(sizeof(int64_t) * cap), *ends = malloc(sizeof(int64_t) * cap);
    int rc = 0;
    if (!units || !seg || !starts || !ends) {
        rc = -1;
        goto done;
    }
    for (int64_t d = 0; d < ndoc; d++) {
        int64_t u = units_of(buf, offsets[d], offsets[d + 1], cls, modes[d], seed, starts, ends,
                             units);
        int64_t range[2] = {0, nd_unit_shingles(units, u, n, seg)};
        nd_minhash(seg, range, 1, salts, k, out + d * k);
    }
done:
    free(units);
    free(seg);
    free(starts);
    free(ends);
    return rc;
}
