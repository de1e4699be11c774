/* Key-table kernels (neardup/index/keytable.py): bucket lookup and run merge.
 * Port of the numba kernels in neardup/_numba/keys.py, same results row for row. */
#include "kernels.h"

/* Rows a with keys[a] == queries[i], scanning bucket top-p(queries[i]): writes up to cap
 * (i, a) pairs in query order and returns how many there are (the caller retries if more);
 * -1 when a visited bucket's offsets leave [0, nkeys] (checked per visit: O(1) a query). */
int64_t nd_key_lookup(const uint64_t *keys, int64_t nkeys, const int64_t *offsets, int64_t p,
                      const uint64_t *queries, int64_t nq, int64_t *out_q, int64_t *out_at,
                      int64_t cap) {
    int64_t c = 0;
    for (int64_t i = 0; i < nq; i++) {
        uint64_t q = queries[i];
        int64_t t = p == 0 ? 0 : (int64_t)(q >> (64 - p));
        int64_t lo = offsets[t], hi = offsets[t + 1];
        if (lo < 0 || hi > nkeys) return -1;
        for (int64_t a = lo; a < hi; a++) {
            if (keys[a] != q) continue;
            if (c < cap) {
                out_q[c] = i;
                out_at[c] = a;
            }
            c++;
        }
    }
    return c;
}

/* Merge two key-sorted runs (ties: a first), dropping rows whose slot is dead. */
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
