/* Key table kernels (neardup.index.keytable): key packing, bucket lookup and run merge.
 *
 * A run is (tags, slots) sorted by table key plus direct-address uint32 offsets on the key's
 * top bits; the tag is the rest of the key (the bucket implies the top bits), 1, 2, 4 or 8
 * bytes (1: a run of ~1.6e9 rows or more, where 2**(bits - 8) buckets cost less than a second
 * tag byte a row; issue 39).
 * The lookup is latency-bound at scale (every bucket is a cache miss); it is software-pipelined:
 * while query i's tags are compared, query i + 16's bucket bounds are read (its tags
 * prefetched) and query i + 32's offsets are prefetched, so that ~32 misses are always in
 * flight. (Blocks of 32 queries, offsets then tags, stalled twice a block on the slowest miss:
 * issue 39 measured the pipeline 9-14 % faster on lookups at 10^7 documents, 1.5 GB of table.)
 * Results are identical to the numba kernels in neardup/_numba/keys.py (pairs in query order,
 * then row order). */
#include "keys.h"

#define ND_KEY_AHEAD_OFFSETS 32 /* queries ahead whose offsets are prefetched */
#define ND_KEY_AHEAD_TAGS 16    /* queries ahead whose tags are prefetched */
#define ND_KEY_RING 32          /* > ND_KEY_AHEAD_TAGS, a power of two */

/* modular inverses of splitmix64's multipliers (mix64 in lsh.py / hashing.py) */
#define ND_C1_INV 0x96de1b173f119089ULL
#define ND_C2_INV 0x319642b2d24d8ec3ULL

static inline uint64_t unmix64(uint64_t z) {
    z ^= (z >> 31) ^ (z >> 62);
    z *= ND_C2_INV;
    z ^= (z >> 27) ^ (z >> 54);
    z *= ND_C1_INV;
    z ^= (z >> 30) ^ (z >> 60);
    return z;
}

static inline uint32_t fmix32(uint32_t h) {
    h ^= h >> 16;
    h *= 0x85ebca6bU;
    h ^= h >> 13;
    h *= 0xc2b2ae35U;
    h ^= h >> 16;
    return h;
}

void nd_key_pack(const uint64_t *keys, int64_t n, int bits, uint64_t *out) {
    if (bits >= 64) {
        for (int64_t i = 0; i < n; i++) out[i] = keys[i];
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        uint64_t x = unmix64(keys[i]);
        out[i] = (x >> bits) ? UINT64_MAX : ((x >> 32) << 32) | fmix32((uint32_t)x);
    }
}

static inline uint64_t tag_at(const void *t, int w, int64_t i) {
    return w == 1   ? ((const uint8_t *)t)[i]
           : w == 2 ? ((const uint16_t *)t)[i]
           : w == 4 ? ((const uint32_t *)t)[i]
                    : ((const uint64_t *)t)[i];
}

static inline void tag_put(void *t, int w, int64_t i, uint64_t v) {
    if (w == 1)
        ((uint8_t *)t)[i] = (uint8_t)v;
    else if (w == 2)
        ((uint16_t *)t)[i] = (uint16_t)v;
    else if (w == 4)
        ((uint32_t *)t)[i] = (uint32_t)v;
    else
        ((uint64_t *)t)[i] = v;
}

#define ND_KEY_LOOKUP(NAME, T)                                                                  \
    static int64_t NAME(const nd_key_run *r, const uint64_t *queries, int64_t nq, int64_t *out_q, \
                        int64_t *out_at, int64_t cap) {                                         \
        const T *tags = (const T *)r->tags;                                                     \
        const unsigned shift = (unsigned)r->shift;                                              \
        const uint64_t mask = shift >= 64 ? UINT64_MAX : (((uint64_t)1 << shift) - 1);          \
        const uint64_t nb = (uint64_t)r->nbuckets;                                              \
        const int64_t n = r->n;                                                                 \
        int64_t c = 0;                                                                          \
        int64_t lo[ND_KEY_RING], hi[ND_KEY_RING];                                               \
        /* query j: offsets prefetched at step j - ND_KEY_AHEAD_OFFSETS, its bucket's bounds   \
         * read (and its tags prefetched) at step j - ND_KEY_AHEAD_TAGS, its tags compared at  \
         * step j: the misses of ~ND_KEY_AHEAD_OFFSETS queries are in flight at once */        \
        for (int64_t j = 0; j < nq && j < ND_KEY_AHEAD_OFFSETS; j++) {                          \
            uint64_t t = queries[j] >> shift;                                                   \
            if (t < nb) __builtin_prefetch(r->offsets + t);                                     \
        }                                                                                       \
        for (int64_t j = 0; j < nq && j < ND_KEY_AHEAD_TAGS; j++)                               \
            ND_KEY_BOUNDS(j);                                                                   \
        for (int64_t i = 0; i < nq; i++) {                                                      \
            if (i + ND_KEY_AHEAD_OFFSETS < nq) {                                                \
                uint64_t t = queries[i + ND_KEY_AHEAD_OFFSETS] >> shift;                        \
                if (t < nb) __builtin_prefetch(r->offsets + t);                                 \
            }                                                                                   \
            if (i + ND_KEY_AHEAD_TAGS < nq) ND_KEY_BOUNDS(i + ND_KEY_AHEAD_TAGS);               \
            const T q = (T)(queries[i] & mask);                                                 \
            const int64_t b = i & (ND_KEY_RING - 1);                                            \
            for (int64_t a = lo[b]; a < hi[b]; a++) {                                           \
                if (tags[a] == q) {                                                             \
                    if (c < cap) {                                                              \
                        out_q[c] = i;                                                           \
                        out_at[c] = a;                                                          \
                    }                                                                           \
                    c++;                                                                        \
                }                                                                               \
            }                                                                                   \
        }                                                                                       \
        return c;                                                                               \
    }

/* Bounds of query j's bucket into the ring (clamped: malformed offsets cannot make us read
 * outside the tags; a key this run cannot hold, t >= nb, has none), its first tags prefetched. */
#define ND_KEY_BOUNDS(j)                                                                        \
    do {                                                                                        \
        const int64_t jj = (j), b = jj & (ND_KEY_RING - 1);                                     \
        const uint64_t t = queries[jj] >> shift;                                                \
        lo[b] = hi[b] = 0;                                                                      \
        if (t < nb) {                                                                           \
            lo[b] = r->offsets[t];                                                              \
            hi[b] = r->offsets[t + 1] > n ? n : r->offsets[t + 1];                              \
            if (lo[b] < hi[b]) __builtin_prefetch(tags + lo[b]);                                \
        }                                                                                       \
    } while (0)

ND_KEY_LOOKUP(lookup8, uint8_t)
ND_KEY_LOOKUP(lookup16, uint16_t)
ND_KEY_LOOKUP(lookup32, uint32_t)
ND_KEY_LOOKUP(lookup64, uint64_t)

int64_t nd_key_lookup(const nd_key_run *run, const uint64_t *queries, int64_t nq, int64_t *out_q,
                      int64_t *out_at, int64_t cap) {
    if (run->width == 1) return lookup8(run, queries, nq, out_q, out_at, cap);
    if (run->width == 2) return lookup16(run, queries, nq, out_q, out_at, cap);
    if (run->width == 4) return lookup32(run, queries, nq, out_q, out_at, cap);
    return lookup64(run, queries, nq, out_q, out_at, cap);
}

/* The table key of row i of run r, with t the bucket of the previous row (advanced). */
static inline uint64_t key_at(const nd_key_run *r, int64_t i, int64_t *t) {
    while (*t < r->nbuckets && r->offsets[*t + 1] <= i) (*t)++;
    return ((uint64_t)*t << r->shift) | tag_at(r->tags, r->width, i);
}

int64_t nd_key_merge(const nd_key_run *a, const nd_key_run *b, const uint8_t *dead,
                     uint32_t *out_offsets, int64_t out_nbuckets, void *out_tags, int out_width,
                     int out_shift, void *out_slots, int out_slot_width) {
    int64_t i = 0, j = 0, o = 0, ta = 0, tb = 0, to = 0;
    const uint64_t mask = out_shift >= 64 ? UINT64_MAX : (((uint64_t)1 << out_shift) - 1);
    uint64_t ka = i < a->n ? key_at(a, 0, &ta) : 0, kb = j < b->n ? key_at(b, 0, &tb) : 0;
    while (i < a->n || j < b->n) {
        uint64_t k;
        uint32_t s;
        if (j >= b->n || (i < a->n && ka <= kb)) {
            k = ka;
            s = nd_slot_at(a->slots, a->slot_width, i++);
            if (i < a->n) ka = key_at(a, i, &ta);
        } else {
            k = kb;
            s = nd_slot_at(b->slots, b->slot_width, j++);
            if (j < b->n) kb = key_at(b, j, &tb);
        }
        if (dead[s]) continue;
        int64_t bucket = (int64_t)(k >> out_shift);
        while (to <= bucket && to <= out_nbuckets) out_offsets[to++] = (uint32_t)o;
        tag_put(out_tags, out_width, o, k & mask);
        nd_slot_put(out_slots, out_slot_width, o++, s);
    }
    while (to <= out_nbuckets) out_offsets[to++] = (uint32_t)o;
    return o;
}

void nd_key_offsets(const uint64_t *keys, int64_t n, int shift, uint32_t *offsets,
                    int64_t nbuckets) {
    int64_t a = 0;
    for (int64_t t = 0; t <= nbuckets; t++) {
        while (a < n && (int64_t)(keys[a] >> shift) < t) a++;
        offsets[t] = (uint32_t)a;
    }
}
