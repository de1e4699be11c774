/* Key table kernels (neardup.index.keytable): bucket lookup and run merge.
 *
 * A run is (keys sorted ascending, slots) plus direct-address offsets on the keys' top p bits.
 * The lookup is latency-bound at scale (a run of 10^6 documents x 32 bands is 256 MB of keys,
 * so every bucket is a cache miss); it works on blocks of queries in two stages, prefetching
 * the offsets of the whole block, then the first keys of every bucket, so that up to a block's
 * worth of misses are in flight instead of one. Results are identical to the numba kernels in
 * neardup/_numba/keys.py (pairs in query order, then row order). */
#include "keys.h"

#define ND_KEY_BLOCK 32

int64_t nd_key_lookup(const uint64_t *keys, int64_t nkeys, const int64_t *offsets, int64_t p,
                      const uint64_t *queries, int64_t nq, int64_t *out_q, int64_t *out_at,
                      int64_t cap) {
    const unsigned shift = (unsigned)(64 - p);
    int64_t c = 0;
    int64_t lo[ND_KEY_BLOCK], hi[ND_KEY_BLOCK];
    for (int64_t s = 0; s < nq; s += ND_KEY_BLOCK) {
        int64_t m = nq - s < ND_KEY_BLOCK ? nq - s : ND_KEY_BLOCK;
        for (int64_t i = 0; i < m; i++) __builtin_prefetch(offsets + (queries[s + i] >> shift));
        for (int64_t i = 0; i < m; i++) {
            uint64_t t = queries[s + i] >> shift;
            /* clamped: a malformed offsets array cannot make us read outside keys (checking
             * the whole array per call instead cost O(2**p), the run's size, per lookup) */
            lo[i] = offsets[t] < 0 ? 0 : offsets[t];
            hi[i] = offsets[t + 1] > nkeys ? nkeys : offsets[t + 1];
            if (lo[i] < hi[i]) __builtin_prefetch(keys + lo[i]);
        }
        for (int64_t i = 0; i < m; i++) {
            const uint64_t q = queries[s + i];
            for (int64_t a = lo[i]; a < hi[i]; a++) {
                if (keys[a] == q) {
                    if (c < cap) {
                        out_q[c] = s + i;
                        out_at[c] = a;
                    }
                    c++;
                }
            }
        }
    }
    return c;
}

int64_t nd_key_merge(const uint64_t *ak, const uint32_t *aslot, int64_t na, const uint64_t *bk,
                     const uint32_t *bslot, int64_t nb, const uint8_t *dead, uint64_t *outk,
                     uint32_t *outslot) {
    int64_t i = 0, j = 0, o = 0;
    while (i < na || j < nb) {
        uint64_t k;
        uint32_t s;
        if (j >= nb || (i < na && ak[i] <= bk[j])) {
            k = ak[i];
            s = aslot[i++];
        } else {
            k = bk[j];
            s = bslot[j++];
        }
        if (!dead[s]) {
            outk[o] = k;
            outslot[o++] = s;
        }
    }
    return o;
}

void nd_key_offsets(const uint64_t *keys, int64_t n, int64_t p, int64_t *offsets) {
    const unsigned shift = (unsigned)(64 - p);
    const int64_t nb = (int64_t)1 << p;
    int64_t a = 0;
    for (int64_t t = 0; t <= nb; t++) {
        while (a < n && (int64_t)(keys[a] >> shift) < t) a++;
        offsets[t] = a;
    }
}
