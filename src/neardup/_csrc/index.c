/* Index kernels: permutation, bucketed table build, batched probe search, self-joins.
 * Port of neardup/_numba/index.py (same conventions: resumable kernels fill caller-given
 * int64 buffers and return (rows written, unit to resume from)). 2-D arrays are row-major:
 * keys/pos are (tables, n), offsets (tables, buckets + 1), rsh/msk/lsh (tables, blocks). */
#include <stdlib.h>

#include "kernels.h"
#include "keyed.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__)
/* one build for every x86-64 CPU: the hot loops get POPCNT (and x86-64-v3/v4) clones chosen
 * at load time by an ifunc resolver (glibc only: musl has no ifunc, so it gets the plain
 * build). The resolver reads CPUID itself; tools/check_cpu_dispatch.py runs every clone
 * under QEMU CPUs. */
#define ND_CLONES __attribute__((target_clones("popcnt", "default")))
#define ND_PERM_CLONES __attribute__((target_clones("arch=x86-64-v3", "popcnt", "default")))
#define ND_X86_DISPATCH /* and explicit run-time choices (__builtin_cpu_supports) below */
#include <immintrin.h>
#else
#define ND_CLONES
#define ND_PERM_CLONES
#endif

/* Pair m into o unless o is full (0): the caller then stops at its resume point and drops
 * the pairs of the unit in progress (from m0 on), so every pair kernel's output is resumable. */
static inline int put_pair(nd_out *o, int64_t m, int64_t a, int64_t b, int64_t d) {
    if (m == o->cap) return 0;
    o->a[m] = a;
    o->b[m] = b;
    o->d[m] = d;
    return 1;
}

/* put_pair in a void pair kernel (m, m0, o and resume in scope): m++, or when o is full, stop
 * the kernel with unit `at` to resume from and without the pairs of the unit in progress. */
#define PUT_OR_STOP(a, b, d, at)             \
    do {                                     \
        if (!put_pair(o, m, a, b, d)) {      \
            *resume = (at);                  \
            o->written = m0;                 \
            return;                          \
        }                                    \
        m++;                                 \
    } while (0)

/* The top `bits` bits of x (0 bits: 0; a shift by 64 is undefined in C). */
static inline int64_t top_bits(uint64_t x, int64_t bits) {
    return bits == 0 ? 0 : (int64_t)(x >> (64 - bits));
}

static inline int64_t popcount(uint64_t x) { return __builtin_popcountll(x); }

static inline uint64_t permute(uint64_t x, const nd_perm *pm, int64_t t) {
    uint64_t out = 0;
    const uint64_t *r = pm->rsh + t * pm->blocks, *m = pm->msk + t * pm->blocks,
                   *l = pm->lsh + t * pm->blocks;
    for (int64_t i = 0; i < pm->blocks; i++) out |= ((x >> r[i]) & m[i]) << l[i];
    return out;
}

static inline int earlier(uint64_t diff, const uint64_t *dedup, int64_t ntab, int64_t t,
                          int64_t radius) {
    for (int64_t u = 0; u < t; u++)
        if (popcount(diff & dedup[t * ntab + u]) <= radius) return 1;
    return 0;
}


static void insertion_u64(uint64_t *a, int64_t n) {
    for (int64_t i = 1; i < n; i++) {
        uint64_t x = a[i];
        int64_t j = i;
        while (j > 0 && a[j - 1] > x) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = x;
    }
}

/* Ascending sort of uint64: quicksort (median of three, smaller side first) with insertion
 * sort below 24 elements, heapsort-free but depth-bounded by recursing on the smaller side. */
void nd_sort_u64(uint64_t *a, int64_t n) {
    while (n > 24) {
        uint64_t x = a[0], y = a[n / 2], z = a[n - 1];
        uint64_t pivot = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
        int64_t i = 0, j = n - 1;
        for (;;) {
            while (a[i] < pivot) i++;
            while (a[j] > pivot) j--;
            if (i >= j) break;
            uint64_t t = a[i];
            a[i] = a[j];
            a[j] = t;
            i++;
            j--;
        }
        int64_t left = j + 1; /* a[0:left] <= pivot <= a[left:n] */
        if (left < n - left) {
            nd_sort_u64(a, left);
            a += left;
            n -= left;
        } else {
            nd_sort_u64(a + left, n - left);
            n = left;
        }
    }
    insertion_u64(a, n);
}

/* Table t's blocks, copied out of the caller's arrays: the kernels store into uint64 outputs
 * that the compiler must assume may alias those arrays (it reloaded every block per element).
 * With `top` < 64 only the blocks that land in the top `top` bits are kept: the bucket of a
 * key needs no other (for the join designs one block of four, so counting costs a shift). */
typedef struct {
    uint64_t r[64], m[64], l[64];
    int64_t n;
} nd_blockset;

static void blocks_of(const nd_perm *pm, int64_t t, int64_t top, nd_blockset *bs) {
    bs->n = 0;
    for (int64_t i = 0; i < pm->blocks; i++) { /* blocks <= 64: get_perm checks it */
        uint64_t r = pm->rsh[t * pm->blocks + i], m = pm->msk[t * pm->blocks + i],
                 l = pm->lsh[t * pm->blocks + i];
        if (m == 0 || (top < 64 && (int64_t)l + 64 - __builtin_clzll(m) <= 64 - top)) continue;
        bs->r[bs->n] = r;
        bs->m[bs->n] = m;
        bs->l[bs->n] = l;
        bs->n++;
    }
}

static inline uint64_t permute_set(uint64_t x, const nd_blockset *bs) {
    uint64_t out = 0;
    for (int64_t i = 0; i < bs->n; i++) out |= ((x >> bs->r[i]) & bs->m[i]) << bs->l[i];
    return out;
}

/* x86-64-v3: BMI2's shlx/shrx; a shift by a variable count is 3 uops on Intel cores without
 * it (1 on AMD's), and the permutation is all variable shifts. */
ND_PERM_CLONES
void nd_top_counts(const uint64_t *fps, const uint32_t *positions, int64_t n, const nd_perm *pm,
                   int64_t t, int64_t top, int64_t *counts) {
    int64_t ng = (int64_t)1 << top;
    nd_blockset bs;
    blocks_of(pm, t, top, &bs);
    for (int64_t g = 0; g <= ng; g++) counts[g] = 0;
    for (int64_t i = 0; i < n; i++) {
        uint64_t x = fps[positions ? positions[i] : (uint64_t)i];
        counts[top_bits(permute_set(x, &bs), top) + 1]++;
    }
    for (int64_t g = 0; g < ng; g++) counts[g + 1] += counts[g];
}

ND_PERM_CLONES
int nd_scatter_top(const uint64_t *fps, const uint32_t *positions, int64_t n, const nd_perm *pm,
                   int64_t t, int64_t top, const int64_t *starts, uint64_t *keys, uint32_t *pos) {
    int64_t ng = (int64_t)1 << top;
    int64_t *nxt = malloc(sizeof(int64_t) * (size_t)(ng + 1));
    if (!nxt) return -1;
    nd_blockset bs;
    blocks_of(pm, t, 64, &bs);
    memcpy(nxt, starts, sizeof(int64_t) * (size_t)(ng + 1));
    for (int64_t i = 0; i < n; i++) {
        uint32_t p = positions ? positions[i] : (uint32_t)i;
        uint64_t key = permute_set(fps[p], &bs);
        int64_t j = nxt[top_bits(key, top)]++;
        keys[j] = key;
        pos[j] = p;
    }
    free(nxt);
    return 0;
}

int nd_bucket_segments(uint64_t *keys, uint32_t *pos, int64_t n, int64_t q, int64_t top,
                       const int64_t *starts, uint32_t *offsets) {
    int64_t ng = (int64_t)1 << top, low = q - top;
    if (low == 0) {
        for (int64_t g = 0; g <= ng; g++) offsets[g] = (uint32_t)starts[g];
        return 0;
    }
    int64_t biggest = 0;
    for (int64_t g = 0; g < ng; g++)
        if (starts[g + 1] - starts[g] > biggest) biggest = starts[g + 1] - starts[g];
    uint64_t *tk = malloc(sizeof(uint64_t) * (size_t)(biggest + 1));
    uint32_t *tp = malloc(sizeof(uint32_t) * (size_t)(biggest + 1));
    int64_t *local = malloc(sizeof(int64_t) * (size_t)(((int64_t)1 << low) + 1));
    if (!tk || !tp || !local) {
        free(tk);
        free(tp);
        free(local);
        return -1;
    }
    int shift2 = (int)(64 - q);
    uint64_t lmask = ((uint64_t)1 << low) - 1;
    int64_t nl = (int64_t)1 << low;
    for (int64_t g = 0; g < ng; g++) {
        int64_t lo = starts[g], m = starts[g + 1] - lo;
        memcpy(tk, keys + lo, sizeof(uint64_t) * (size_t)m);
        memcpy(tp, pos + lo, sizeof(uint32_t) * (size_t)m);
        memset(local, 0, sizeof(int64_t) * (size_t)(nl + 1));
        for (int64_t j = 0; j < m; j++) local[(int64_t)((tk[j] >> shift2) & lmask) + 1]++;
        int64_t base = g << low, acc = lo;
        for (int64_t b = 0; b < nl; b++) {
            offsets[base + b] = (uint32_t)acc;
            acc += local[b + 1];
            local[b + 1] = offsets[base + b];
        }
        for (int64_t j = 0; j < m; j++) {
            int64_t c = (int64_t)((tk[j] >> shift2) & lmask);
            int64_t d = local[c + 1]++;
            keys[d] = tk[j];
            pos[d] = tp[j];
        }
    }
    offsets[(int64_t)1 << q] = (uint32_t)n;
    free(tk);
    free(tp);
    free(local);
    return 0;
}

void nd_offsets_from_sorted(const uint64_t *keys, int64_t n, int64_t q, uint32_t *offsets,
                            int64_t noff) {
    int64_t b = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t c = top_bits(keys[i], q);
        while (b <= c) offsets[b++] = (uint32_t)i;
    }
    while (b < noff) offsets[b++] = (uint32_t)n;
}

#define ND_BLOCK 16 /* queries in flight: their memory loads overlap */

ND_CLONES
int nd_search_tables(int64_t start, const uint64_t *queries, int64_t nq, int64_t k,
                     const nd_tables *tb, const nd_perm *pm, const int64_t *probes,
                     int64_t nprobes, const uint64_t *dedup, int64_t radius, const uint8_t *alive,
                     int64_t nalive, int64_t t_lo, int64_t t_hi, nd_out *o, int64_t *resume) {
    /* tables t_lo..t_hi-1 are probed; `earlier` still counts every table before t, so a pass
     * per table (queries sorted by that table's bucket) finds each match exactly once */
    int64_t ntab = tb->ntab, nkeys = tb->nkeys, nbo = tb->nbuckets + 1, nt = t_hi - t_lo;
    int64_t per = nt * nprobes; /* bucket ranges per query */
    int64_t block = per * ND_BLOCK <= (1 << 16) ? ND_BLOCK : 1;
    uint64_t *pq = malloc(sizeof(uint64_t) * (size_t)(nt * block));
    int64_t *bk = malloc(sizeof(int64_t) * (size_t)(per * block));
    if (!pq || !bk) {
        free(pq);
        free(bk);
        return -1;
    }
    int64_t m = 0;
    *resume = nq;
    for (int64_t q0 = start; q0 < nq; q0 += block) {
        int64_t q1 = q0 + block < nq ? q0 + block : nq;
        /* stage 1: bucket of every (query, table, probe) of the block; prefetch its offsets */
        for (int64_t qi = q0; qi < q1; qi++) {
            for (int64_t t = t_lo; t < t_hi; t++) {
                uint64_t px = permute(queries[qi], pm, t);
                pq[(qi - q0) * nt + t - t_lo] = px;
                int64_t b0 = top_bits(px, tb->q);
                for (int64_t pi = 0; pi < nprobes; pi++) {
                    int64_t b = b0 ^ probes[pi];
                    bk[(qi - q0) * per + (t - t_lo) * nprobes + pi] = b;
                    __builtin_prefetch(tb->offsets + t * nbo + b);
                }
            }
        }
        /* stage 2: the offsets have arrived; prefetch the keys of every range, its first and
         * its last cache line (a bucket of a few keys straddles two lines most of the time,
         * and that second miss would otherwise be paid serially in stage 3) */
        for (int64_t i = 0; i < (q1 - q0) * per; i++) {
            int64_t t = t_lo + (i % per) / nprobes;
            const uint32_t *off = tb->offsets + t * nbo;
            int64_t l = off[bk[i]] < nkeys ? off[bk[i]] : nkeys;
            int64_t h = off[bk[i] + 1] < nkeys ? off[bk[i] + 1] : nkeys;
            __builtin_prefetch(tb->keys + t * nkeys + l);
            if (h - 1 > l) __builtin_prefetch(tb->keys + t * nkeys + h - 1);
        }
        /* stage 3: scan and verify, query by query (resumable at any query) */
        for (int64_t qi = q0; qi < q1; qi++) {
            int64_t m0 = m;
            for (int64_t t = t_lo; t < t_hi; t++) {
                uint64_t px = pq[(qi - q0) * nt + t - t_lo];
                const uint32_t *off = tb->offsets + t * nbo;
                const uint64_t *keys = tb->keys + t * nkeys;
                const uint32_t *pos = tb->pos + t * nkeys;
                for (int64_t pi = 0; pi < nprobes; pi++) {
                    int64_t b = bk[(qi - q0) * per + (t - t_lo) * nprobes + pi];
                    /* clamped: unverified files opened with verify=False must not crash */
                    int64_t lo = off[b] < nkeys ? off[b] : nkeys;
                    int64_t hi = off[b + 1] < nkeys ? off[b + 1] : nkeys;
                    for (int64_t j = lo; j < hi; j++) {
                        uint64_t diff = px ^ keys[j];
                        int64_t d = popcount(diff);
                        if (d > k) continue;
                        if (earlier(diff, dedup, ntab, t, radius)) continue;
                        int64_t p = pos[j];
                        if (p >= nalive || alive[p] == 0) continue;
                        if (!put_pair(o, m, qi, p, d)) {
                            *resume = qi;
                            m = m0;
                            goto done;
                        }
                        m++;
                    }
                }
            }
        }
    }
done:
    free(pq);
    free(bk);
    o->written = m;
    return 0;
}

ND_CLONES
void nd_scan_range(int64_t start, const uint64_t *queries, int64_t nq, int64_t k,
                   const uint64_t *fps, int64_t lo, int64_t hi, const uint8_t *alive, nd_out *o,
                   int64_t *resume) {
    int64_t m = 0;
    *resume = nq;
    for (int64_t qi = start; qi < nq; qi++) {
        int64_t m0 = m;
        uint64_t x = queries[qi];
        for (int64_t p = lo; p < hi; p++) {
            int64_t d = popcount(x ^ fps[p]);
            if (d <= k && alive[p] != 0) {
                PUT_OR_STOP(qi, p, d, qi);
            }
        }
    }
    o->written = m;
}

ND_CLONES
void nd_brute_pairs(int64_t start, const uint64_t *fps, int64_t n, int64_t k, nd_out *o,
                    int64_t *resume) {
    int64_t m = 0;
    *resume = n;
    for (int64_t i = start; i < n; i++) {
        int64_t m0 = m;
        for (int64_t j = i + 1; j < n; j++) {
            int64_t d = popcount(fps[i] ^ fps[j]);
            if (d <= k) {
                PUT_OR_STOP(i, j, d, i);
            }
        }
    }
    o->written = m;
}

ND_CLONES
void nd_join_tables(int64_t start, int64_t k, const nd_tables *tb, const int64_t *probes,
                    int64_t nprobes, const uint64_t *dedup, int64_t radius, nd_out *o,
                    int64_t *resume) {
    int64_t ntab = tb->ntab, nb = tb->nbuckets, nbo = nb + 1, nkeys = tb->nkeys;
    int64_t m = 0;
    *resume = ntab * nb;
    for (int64_t unit = start; unit < ntab * nb; unit++) {
        int64_t t = unit / nb, a = unit - t * nb;
        const uint32_t *off = tb->offsets + t * nbo;
        const uint64_t *keys = tb->keys + t * nkeys;
        const uint32_t *pos = tb->pos + t * nkeys;
        int64_t lo_a = off[a], hi_a = off[a + 1];
        if (lo_a == hi_a) continue;
        int64_t m0 = m;
        for (int64_t pi = 0; pi < nprobes; pi++) {
            int64_t b = a ^ probes[pi];
            if (b < a) continue;
            int64_t hi_b = off[b + 1];
            for (int64_t x = lo_a; x < hi_a; x++) {
                uint64_t kx = keys[x];
                int64_t first = b == a ? x + 1 : (int64_t)off[b];
                for (int64_t y = first; y < hi_b; y++) {
                    uint64_t diff = kx ^ keys[y];
                    int64_t d = popcount(diff);
                    if (d > k) continue;
                    if (earlier(diff, dedup, ntab, t, radius)) continue;
                    PUT_OR_STOP(pos[x], pos[y], d, unit);
                }
            }
        }
    }
    o->written = m;
}

/* The pairs within `k` inside one bucket keys[lo:hi] of table t that no earlier table holds,
 * appended to o from row m; the new row count, or -1 when o is full. */
ND_CLONES
static int64_t bucket_pairs_r0(const uint64_t *keys, const uint32_t *pos, int64_t lo, int64_t hi,
                               int64_t k, const uint64_t *dedup, int64_t ntab, int64_t t,
                               nd_out *o, int64_t m) {
    for (int64_t x = lo; x < hi; x++) {
        uint64_t kx = keys[x];
        for (int64_t y = x + 1; y < hi; y++) {
            uint64_t diff = kx ^ keys[y];
            int64_t d = popcount(diff);
            if (d > k) continue;
            if (earlier(diff, dedup, ntab, t, 0)) continue;
            if (!put_pair(o, m, pos[x], pos[y], d)) return -1;
            m++;
        }
    }
    return m;
}

#ifdef ND_X86_DISPATCH
/* bucket_pairs_r0 eight keys at a time (AVX-512 VPOPCNTDQ: xor, popcount and compare of eight
 * keys in three instructions, the tail masked); the hits come out in the same order. Chosen
 * at run time: the popcount clone alone left this CPU-dependent scan scalar. */
__attribute__((target("popcnt,avx512f,avx512vpopcntdq"))) static int64_t bucket_pairs_r0_avx512(
    const uint64_t *keys, const uint32_t *pos, int64_t lo, int64_t hi, int64_t k,
    const uint64_t *dedup, int64_t ntab, int64_t t, nd_out *o, int64_t m) {
    const __m512i kk = _mm512_set1_epi64(k);
    for (int64_t x = lo; x < hi; x++) {
        uint64_t kx = keys[x];
        const __m512i vx = _mm512_set1_epi64((long long)kx);
        for (int64_t y = x + 1; y < hi; y += 8) {
            __mmask8 live = hi - y >= 8 ? (__mmask8)0xFF : (__mmask8)((1u << (hi - y)) - 1);
            __m512i vy = _mm512_maskz_loadu_epi64(live, keys + y);
            __m512i pc = _mm512_popcnt_epi64(_mm512_xor_si512(vx, vy));
            unsigned hit = _mm512_mask_cmple_epu64_mask(live, pc, kk);
            while (hit) {
                int64_t yy = y + __builtin_ctz(hit);
                hit &= hit - 1;
                uint64_t diff = kx ^ keys[yy];
                if (earlier(diff, dedup, ntab, t, 0)) continue;
                if (!put_pair(o, m, pos[x], pos[yy], __builtin_popcountll(diff))) return -1;
                m++;
            }
        }
    }
    return m;
}
#endif

typedef int64_t (*bucket_pairs_fn)(const uint64_t *, const uint32_t *, int64_t, int64_t, int64_t,
                                   const uint64_t *, int64_t, int64_t, nd_out *, int64_t);

static bucket_pairs_fn pick_bucket_pairs_r0(void) {
#ifdef ND_X86_DISPATCH
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vpopcntdq"))
        return bucket_pairs_r0_avx512;
#endif
    return bucket_pairs_r0;
}

void nd_join_tables_r0(int64_t start, int64_t k, const nd_tables *tb, const uint64_t *dedup,
                       int64_t hot, nd_out *o, int64_t *resume) {
    int64_t ntab = tb->ntab, nb = tb->nbuckets, nbo = nb + 1, nkeys = tb->nkeys;
    bucket_pairs_fn scan = pick_bucket_pairs_r0();
    int64_t m = 0;
    *resume = ntab * nb;
    for (int64_t t = start / nb; t < ntab; t++) {
        const uint32_t *off = tb->offsets + t * nbo;
        const uint64_t *keys = tb->keys + t * nkeys;
        const uint32_t *pos = tb->pos + t * nkeys;
        for (int64_t a = (t == start / nb ? start % nb : 0); a < nb; a++) {
            int64_t lo = off[a], hi = off[a + 1];
            if (hi - lo < 2 || hi - lo > hot) continue;
            int64_t next = scan(keys, pos, lo, hi, k, dedup, ntab, t, o, m);
            if (next < 0) { /* full: resume at this bucket, without its pairs */
                *resume = t * nb + a;
                o->written = m;
                return;
            }
            m = next;
        }
    }
    o->written = m;
}

/* Stable insertion sort of m keys (and their positions). */
static void sort_small_insertion(uint64_t *keys, uint32_t *pos, int64_t m) {
    for (int64_t i = 1; i < m; i++) {
        uint64_t kk = keys[i];
        uint32_t p = pos[i];
        int64_t j = i;
        while (j > 0 && keys[j - 1] > kk) {
            keys[j] = keys[j - 1];
            pos[j] = pos[j - 1];
            j--;
        }
        keys[j] = kk;
        pos[j] = p;
    }
}

#ifdef ND_X86_DISPATCH
/* The same order by rank: each key's place is the number of keys below it plus the equal ones
 * before it, m^2 compares without a branch, which GCC vectorises with AVX2. The insertion sort
 * mispredicts about once per key (buckets of ~15 random keys): 9.5 -> 5.2 ms at 10^6 keys;
 * without AVX2 the compares stay scalar and lose (13 ms), so those CPUs keep insertion. */
__attribute__((target("avx2"))) static void sort_small_rank(uint64_t *keys, uint32_t *pos,
                                                            int64_t m) {
    uint64_t k[32];
    uint32_t p[32];
    memcpy(k, keys, sizeof(uint64_t) * (size_t)m);
    memcpy(p, pos, sizeof(uint32_t) * (size_t)m);
    for (int64_t i = 0; i < m; i++) {
        uint64_t x = k[i];
        int64_t r = 0;
        for (int64_t j = 0; j < m; j++) r += (k[j] < x) | ((k[j] == x) & (j < i));
        keys[r] = x;
        pos[r] = p[i];
    }
}
#endif

int nd_sort_buckets(uint64_t *keys, uint32_t *pos, const uint32_t *offsets, int64_t nbuckets) {
    nd_keyed *tmp = NULL;
    int64_t cap = 0;
#ifdef ND_X86_DISPATCH
    __builtin_cpu_init();
    int rank = __builtin_cpu_supports("avx2");
#endif
    for (int64_t b = 0; b < nbuckets; b++) {
        int64_t lo = offsets[b], hi = offsets[b + 1];
        if (hi - lo > 32) { /* order within equal keys is irrelevant to the callers */
            if (hi - lo > cap) {
                free(tmp);
                cap = hi - lo;
                tmp = malloc(sizeof(nd_keyed) * (size_t)cap);
                if (!tmp) return -1;
            }
            for (int64_t i = lo; i < hi; i++) {
                tmp[i - lo].key = keys[i];
                tmp[i - lo].val = pos[i];
            }
            qsort(tmp, (size_t)(hi - lo), sizeof(nd_keyed), nd_cmp_keyed);
            for (int64_t i = lo; i < hi; i++) {
                keys[i] = tmp[i - lo].key;
                pos[i] = tmp[i - lo].val;
            }
            continue;
        }
        if (hi - lo < 2) continue;
#ifdef ND_X86_DISPATCH
        if (rank) {
            sort_small_rank(keys + lo, pos + lo, hi - lo);
            continue;
        }
#endif
        sort_small_insertion(keys + lo, pos + lo, hi - lo);
    }
    free(tmp);
    return 0;
}

void nd_expand_pairs(const int64_t *a, const int64_t *b, const int64_t *dist, int64_t ne,
                     const int64_t *order, const int64_t *starts, const int64_t *counts,
                     int64_t ng, int64_t *oi, int64_t *oj, int64_t *od) {
    int64_t m = 0;
    for (int64_t e = 0; e < ne; e++)
        for (int64_t x = starts[a[e]]; x < starts[a[e] + 1]; x++)
            for (int64_t y = starts[b[e]]; y < starts[b[e] + 1]; y++) {
                int64_t u = order[x], v = order[y];
                oi[m] = u < v ? u : v;
                oj[m] = u < v ? v : u;
                od[m] = dist[e];
                m++;
            }
    for (int64_t g = 0; g < ng; g++) {
        if (counts[g] < 2) continue;
        for (int64_t x = starts[g]; x < starts[g + 1]; x++)
            for (int64_t y = x + 1; y < starts[g + 1]; y++) {
                int64_t u = order[x], v = order[y];
                oi[m] = u < v ? u : v;
                oj[m] = u < v ? v : u;
                od[m] = 0;
                m++;
            }
    }
}
