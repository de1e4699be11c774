/* The per-pair step of neardup.overlap (align.py + pairs.py's references); plain C. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "overlap_kernels.h"

#define FINE_GROUP 4 /* align.FINE_GROUP */
#define EXTEND 6     /* align.EXTEND */
#define MIN_COVER 50 /* pairs.MIN_COVER */
#define BAND_SHARE 8 /* align.BAND_SHARE */

typedef struct {
    uint64_t h;
    int64_t i;
} hidx;


/* box: qlo, qhi, dlo, dhi, count, strong, the extent of its groups holding a strong seed
 * (sqlo, sqhi, sdlo, sdhi; empty without one); for an open cluster also its last seed's qhi,
 * dlo, dhi (not compared) */
#define FAR ((int64_t)1 << 62)
#define BOX_SCAN 8 /* passage boxes of one pair that each scan every seed (by_range) */
typedef struct {
    int64_t v[13];
} box_t;

static int cmp_box(const void *a, const void *b) {
    const int64_t *x = ((const box_t *)a)->v, *y = ((const box_t *)b)->v;
    for (int k = 0; k < 10; k++)
        if (x[k] != y[k]) return x[k] < y[k] ? -1 : 1;
    return 0;
}

static int near_box(const int64_t *a, const int64_t *b, int64_t gap) {
    return a[0] <= b[1] + gap && b[0] <= a[1] + gap && a[2] <= b[3] + gap && b[2] <= a[3] + gap;
}

/* cmp_box on the source side first (v[2], v[3], then the rest) */
static int cmp_box_d(const void *a, const void *b) {
    const int64_t *x = ((const box_t *)a)->v, *y = ((const box_t *)b)->v;
    static const int order[10] = {2, 3, 0, 1, 4, 5, 6, 7, 8, 9};
    for (int k = 0; k < 10; k++)
        if (x[order[k]] != y[order[k]]) return x[order[k]] < y[order[k]] ? -1 : 1;
    return 0;
}

/* Sort bx[0..n) by cmp: by insertion when they are few (a pair's boxes mostly are: a call of
 * qsort costs more than sorting them), else qsort. Both are stable (glibc's qsort is a merge
 * sort), so equal boxes keep their order either way. */
#define FEW 16
static inline void sort_boxes(box_t *bx, int64_t n, int (*cmp)(const void *, const void *)) {
    if (n > FEW) {
        qsort(bx, (size_t)n, sizeof(box_t), cmp);
        return;
    }
    for (int64_t i = 1; i < n; i++) {
        box_t x = bx[i];
        int64_t j = i;
        while (j > 0 && cmp(&bx[j - 1], &x) > 0) bx[j] = bx[j - 1], j--;
        bx[j] = x;
    }
}

/* align._merge_boxes: keep boxes with count >= min_count and strong >= min_strong, then join
 * the boxes within `gap` (passes until nothing joins), sorted as cmp_box. Returns the new
 * count. What is left is the same whatever the order of the joins (a group only grows, and
 * two boxes near each other stay near: the groups are those of the finest partition whose
 * boxes are pairwise apart), so a pass goes along the side where the boxes spread wider (a
 * short text against a long one: the source side), in start order, and a box joins an earlier
 * one near it; `live` (n slots) lists the earlier ones that still reach a box of the pass: one
 * that ends more than `gap` before the box's start ends before every later start too, and it
 * grows only by a join. Without that list a pass compared every pair (~n^2 / 2 for the 10^5
 * diagonal groups of a 2 * 10^5-character text of five words: 6 s). */
static int64_t merge_boxes(box_t *bx, int64_t n, int64_t gap, int64_t min_count,
                           int64_t min_strong, int64_t *live) {
    int64_t m = 0, lo[2] = {FAR, FAR}, hi[2] = {-FAR, -FAR};
    for (int64_t i = 0; i < n; i++) {
        if (bx[i].v[4] < min_count || bx[i].v[5] < min_strong) continue;
        for (int s = 0; s < 2; s++) {
            if (bx[i].v[2 * s] < lo[s]) lo[s] = bx[i].v[2 * s];
            if (bx[i].v[2 * s + 1] > hi[s]) hi[s] = bx[i].v[2 * s + 1];
        }
        bx[m++] = bx[i];
    }
    n = m;
    int a = hi[1] - lo[1] > hi[0] - lo[0] ? 2 : 0; /* the side of the pass */
    int merged = 1;
    while (merged && n > 1) {
        merged = 0;
        sort_boxes(bx, n, a ? cmp_box_d : cmp_box);
        int64_t k = 0, nl = 0;
        for (int64_t i = 0; i < n; i++) {
            int64_t *b = bx[i].v, kept = 0, t = 0;
            for (; t < nl; t++) {
                int64_t *c = bx[live[t]].v;
                if (c[a + 1] + gap < b[a]) continue; /* ends before this box and later ones */
                live[kept++] = live[t];
                if (near_box(b, c, gap)) {
                    if (b[0] < c[0]) c[0] = b[0];
                    if (b[1] > c[1]) c[1] = b[1];
                    if (b[2] < c[2]) c[2] = b[2];
                    if (b[3] > c[3]) c[3] = b[3];
                    c[4] += b[4], c[5] += b[5];
                    if (b[6] < c[6]) c[6] = b[6];
                    if (b[7] > c[7]) c[7] = b[7];
                    if (b[8] < c[8]) c[8] = b[8];
                    if (b[9] > c[9]) c[9] = b[9];
                    merged = 1;
                    break;
                }
            }
            if (t < nl) { /* joined: keep the rest of the list as it is */
                memmove(live + kept, live + t + 1, sizeof(int64_t) * (size_t)(nl - t - 1));
                nl = kept + nl - t - 1;
            } else {
                nl = kept;
                live[nl++] = k;
                bx[k++] = bx[i];
            }
        }
        n = k;
    }
    if (a) sort_boxes(bx, n, cmp_box);
    return n;
}

typedef struct {
    int64_t qlo, dlo, i;
} ord_t;

static int cmp_ord(const void *a, const void *b) {
    const ord_t *x = a, *y = b;
    if (x->qlo != y->qlo) return x->qlo < y->qlo ? -1 : 1;
    if (x->dlo != y->dlo) return x->dlo < y->dlo ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* Insertion sort (fast on the nearly sorted runs seeds come in). */
static void isort_ord(ord_t *a, int64_t n) {
    for (int64_t i = 1; i < n; i++) {
        ord_t x = a[i];
        int64_t j = i;
        while (j > 0 && cmp_ord(&a[j - 1], &x) > 0) a[j] = a[j - 1], j--;
        a[j] = x;
    }
}

/* Sort by (qlo, dlo, index): the strong seeds [0, m) and the fine ones [m, n) each arrive in
 * query order, so sort each run (nearly linear) and merge them; tmp holds n items. */
static void sort_ord(ord_t *a, int64_t n, int64_t m, ord_t *tmp) {
    if (m > n) m = n;
    isort_ord(a, m);
    isort_ord(a + m, n - m);
    int64_t i = 0, j = m, t = 0;
    while (i < m && j < n) tmp[t++] = cmp_ord(&a[j], &a[i]) < 0 ? a[j++] : a[i++];
    while (i < m) tmp[t++] = a[i++];
    while (j < n) tmp[t++] = a[j++];
    memcpy(a, tmp, sizeof(ord_t) * (size_t)n);
}

/* The open-cluster buckets of clusters(): doubly linked lists of the clusters by their last
 * seed's source start (bucket key / w); nx, pv, head in the caller's scratch. */
typedef struct {
    int64_t *nx, *pv, *head, w;
} buckets_t;

static void bucket_in(buckets_t *B, int64_t j, int64_t key) {
    int64_t b = key / B->w;
    B->pv[j] = -1, B->nx[j] = B->head[b];
    if (B->head[b] >= 0) B->pv[B->head[b]] = j;
    B->head[b] = j;
}

static void bucket_out(buckets_t *B, int64_t j, int64_t key) {
    if (B->pv[j] >= 0) B->nx[B->pv[j]] = B->nx[j];
    else B->head[key / B->w] = B->nx[j];
    if (B->nx[j] >= 0) B->pv[B->nx[j]] = B->pv[j];
}

/* align._clusters on seed boxes bx (count 1, strong 0/1); returns the passage boxes in out
 * (which holds 2k boxes). A seed joins the latest made of the open clusters (those reaching
 * its query start) whose last seed is near it on the source side: the Python reference scans
 * its open list from the end; here the clusters sit in buckets of their last seed's source
 * start, w wide, so a seed looks at the few buckets such a seed can lie in, and a cluster
 * found closed leaves its bucket for good (later seeds start later). Scanning every open
 * cluster cost seeds x open clusters: 10^9 steps for 4 * 10^5 characters of five words. */
static int64_t clusters(const box_t *bx, int64_t k, int64_t strong_k, int64_t near, int64_t gap,
                        box_t *out, ord_t *ord) {
    for (int64_t i = 0; i < k; i++) ord[i] = (ord_t){bx[i].v[0], bx[i].v[2], i};
    sort_ord(ord, k, strong_k, (ord_t *)out);
    int64_t len = 0, top = 0; /* the longest seed and the last start, source side */
    for (int64_t i = 0; i < k; i++) {
        if (bx[i].v[3] - bx[i].v[2] > len) len = bx[i].v[3] - bx[i].v[2];
        if (bx[i].v[2] > top) top = bx[i].v[2];
    }
    /* the scratch after the k clusters: 3k + 1 int64 of the 13k there */
    buckets_t B = {(int64_t *)(out + k), (int64_t *)(out + k) + k, (int64_t *)(out + k) + 2 * k,
                   len + 2 * near + 1};
    if (B.w < top / k + 1) B.w = top / k + 1; /* at most k + 1 buckets */
    int64_t nbk = top / B.w + 1, nd = 0;
    for (int64_t b = 0; b < nbk; b++) B.head[b] = -1;
    for (int64_t t = 0; t < k; t++) {
        const int64_t *s = bx[ord[t].i].v;
        /* a near cluster's last seed starts in [s[2] - near - len, s[3] + near] */
        int64_t lo = s[2] - near - len, best = -1;
        int64_t b1 = (s[3] + near) / B.w < nbk - 1 ? (s[3] + near) / B.w : nbk - 1;
        for (int64_t b = lo > 0 ? lo / B.w : 0; b <= b1; b++) {
            for (int64_t j = B.head[b], nx; j >= 0; j = nx) {
                const int64_t *c = out[j].v;
                nx = B.nx[j];
                if (c[1] + near < s[0]) { /* closed: no later seed starts before s */
                    bucket_out(&B, j, c[11]);
                    continue;
                }
                /* near the cluster's last seed on the source side: a seed off its diagonal
                 * (a short gram repeated nearby) does not stretch the cluster */
                if (j > best && s[2] <= c[12] + near && s[3] >= c[11] - near) best = j;
            }
        }
        if (best >= 0) {
            int64_t *c = out[best].v;
            bucket_out(&B, best, c[11]);
            if (s[1] > c[1]) c[1] = s[1];
            if (s[2] < c[2]) c[2] = s[2];
            if (s[3] > c[3]) c[3] = s[3];
            c[4] += 1, c[5] += s[5];
            c[10] = s[1], c[11] = s[2], c[12] = s[3];
            bucket_in(&B, best, c[11]);
        } else {
            out[nd] = (box_t){{s[0], s[1], s[2], s[3], 1, s[5], 0, 0, 0, 0, s[1], s[2], s[3]}};
            bucket_in(&B, nd, s[2]);
            nd++;
        }
    }
    int64_t *live = (int64_t *)ord; /* free now: k * 3 slots, nd <= k needed */
    for (int64_t j = 0; j < nd; j++) { /* the strong extent: the group, or empty */
        int64_t *c = out[j].v;
        int has = c[5] > 0 || c[4] >= EXTEND;
        c[6] = has ? c[0] : FAR, c[7] = has ? c[1] : -FAR;
        c[8] = has ? c[2] : FAR, c[9] = has ? c[3] : -FAR;
    }
    nd = merge_boxes(out, nd, near, 2, 0, live); /* lone seeds go first */
    /* a group of short grams only (a heavy rewrite's middle) joins within gap when it has
     * FINE_GROUP seeds; what is not joined to a strong seed is dropped */
    int64_t m = 0;
    for (int64_t i = 0; i < nd; i++)
        if (out[i].v[5] >= 1 || out[i].v[4] >= FINE_GROUP) out[m++] = out[i];
    nd = merge_boxes(out, m, gap, 2, 0, live);
    m = 0; /* keep the passages with a strong seed, cut to their strong extent */
    for (int64_t i = 0; i < nd; i++) {
        int64_t *c = out[i].v;
        if (c[5] < 1) continue;
        int64_t *o = out[m++].v;
        int64_t e0 = c[6], e1 = c[7], e2 = c[8], e3 = c[9], n4 = c[4], n5 = c[5];
        o[0] = e0, o[1] = e1, o[2] = e2, o[3] = e3, o[4] = n4, o[5] = n5;
    }
    return m;
}

/* Scratch of ov_query() calls, grown as needed (no allocation per pair), and the query's
 * fine grams in a hash table: qkey/qval (cap slots, qval -1: empty) map a hash to its number
 * in 0..nslot, qslot[i] is fine gram i's number; cnt/head/tail (per number) are the chain of
 * the source window's grams of that hash in one pair (next[j - da]: the next one), touched
 * the numbers whose cnt is to be reset. One ctx per call (the bindings keep one between calls;
 * the kernel runs without the GIL). */
struct ov_ctx {
    int64_t *seeds;
    box_t *bx;
    ord_t *ord;
    void *tmp;
    size_t cap_have, big_have;
    char *keep;
    int64_t keep_cap;
    uint64_t *qkey;
    int64_t *qval, qcap, qalloc, *qslot, *cnt, *head, *tail, *touched, nslot, nf_have;
    int64_t *next, next_cap;
    int64_t *mark, stamp; /* covered(): mark[number] == stamp: the source passage holds it */
    uint64_t bloom[64]; /* the query's fine hashes, a bit each (bits 52-63): most source grams
                         * are not in the query and skip the table */
};
typedef struct ov_ctx ctx_t;

static void ctx_free(ctx_t *c) {
    free(c->seeds), free(c->bx), free(c->ord), free(c->tmp), free(c->keep);
    free(c->qkey), free(c->qval), free(c->qslot), free(c->cnt), free(c->head), free(c->tail);
    free(c->touched), free(c->next), free(c->mark);
    memset(c, 0, sizeof(*c));
}

static int64_t qtab_find(const ctx_t *c, uint64_t key) {
    int64_t i = (int64_t)(key & (uint64_t)(c->qcap - 1)); /* a gram hash: mixed already */
    while (c->qval[i] >= 0 && c->qkey[i] != key) i = (i + 1) & (c->qcap - 1);
    return i;
}

/* The query's fine grams in c's hash table (once per query, for all its sources). */
static int query_table(ctx_t *c, const doc_t *q) {
    int64_t nf = q->nf, cap = 64;
    while (cap < 2 * nf) cap *= 2;
    if (cap > c->qalloc) {
        free(c->qkey), free(c->qval);
        c->qkey = malloc(sizeof(uint64_t) * (size_t)cap);
        c->qval = malloc(sizeof(int64_t) * (size_t)cap);
        c->qalloc = c->qkey && c->qval ? cap : 0;
        if (!c->qalloc) return -1;
    }
    if (nf + 1 > c->nf_have) {
        size_t m = sizeof(int64_t) * (size_t)(2 * nf + 1);
        free(c->qslot), free(c->cnt), free(c->head), free(c->tail), free(c->touched);
        free(c->mark);
        c->qslot = malloc(m), c->cnt = malloc(m), c->head = malloc(m), c->tail = malloc(m);
        c->touched = malloc(m), c->mark = malloc(m);
        int ok = c->qslot && c->cnt && c->head && c->tail && c->touched && c->mark;
        c->nf_have = ok ? 2 * nf + 1 : 0;
        if (!ok) return -1;
    }
    c->qcap = cap; /* the slots in use */
    for (int64_t i = 0; i < cap; i++) c->qval[i] = -1;
    int64_t ns = 0;
    memset(c->bloom, 0, sizeof(c->bloom));
    for (int64_t i = 0; i < nf; i++) {
        c->bloom[q->fhash[i] >> 58] |= 1ULL << ((q->fhash[i] >> 52) & 63);
        int64_t at = qtab_find(c, q->fhash[i]);
        if (c->qval[at] < 0) c->qkey[at] = q->fhash[i], c->qval[at] = ns, c->cnt[ns++] = 0;
        c->qslot[i] = c->qval[at];
    }
    c->nslot = ns;
    for (int64_t v = 0; v < ns; v++) c->mark[v] = 0;
    c->stamp = 0;
    return 0;
}

/* The grams (first[], last[] ascending) lying inside units [lo, hi]: a range [*a, *b). */
static void gram_range(const int64_t *units, const int64_t *first, const int64_t *last,
                       int64_t m, int64_t lo, int64_t hi, int64_t *a, int64_t *b) {
    int64_t l = 0, h = m;
    while (l < h) {
        int64_t mid = (l + h) / 2;
        if (units[first[mid]] < lo) l = mid + 1; else h = mid;
    }
    *a = l;
    h = m;
    while (l < h) {
        int64_t mid = (l + h) / 2;
        if (units[last[mid]] <= hi) l = mid + 1; else h = mid;
    }
    *b = l;
}

/* pairs.fine_seeds: fine-gram seeds within `reach` units of the anchors (rows q_first,
 * q_last, d_first, d_last), appended to seeds[k..]; returns the new row count. The source
 * window's grams are chained per query hash (c's table, query_table), in index order (the
 * order a stable sort by hash gives); then each query gram of the window takes its chain. */
static int64_t fine_seeds(ctx_t *c, const doc_t *q, const doc_t *d, int64_t *seeds, int64_t k,
                          int64_t reach, int64_t fanout, int64_t cap) {
    int64_t aq0 = INT64_MAX, aq1 = INT64_MIN, ad0 = INT64_MAX, ad1 = INT64_MIN;
    for (int64_t i = 0; i < k; i++) {
        const int64_t *s = seeds + 4 * i;
        if (s[0] < aq0) aq0 = s[0];
        if (s[1] > aq1) aq1 = s[1];
        if (s[2] < ad0) ad0 = s[2];
        if (s[3] > ad1) ad1 = s[3];
    }
    int64_t qlo = q->units[aq0] - reach, qhi = q->units[aq1] + reach;
    int64_t dlo = d->units[ad0] - reach, dhi = d->units[ad1] + reach;
    int64_t da, db, a, b;
    gram_range(d->units, d->ffirst, d->flast, d->nf, dlo, dhi, &da, &db);
    int64_t nd = db - da;
    if (!nd || !c->nslot) return k;
    if (nd > c->next_cap) {
        free(c->next);
        c->next = malloc(sizeof(int64_t) * (size_t)nd * 2);
        c->next_cap = c->next ? nd * 2 : 0;
        if (!c->next) return -1;
    }
    int64_t *next = c->next, *cnt = c->cnt, *head = c->head, *tail = c->tail, nt = 0;
    for (int64_t j = da; j < db; j++) {
        uint64_t h = d->fhash[j];
        if (!((c->bloom[h >> 58] >> ((h >> 52) & 63)) & 1)) continue;
        int64_t v = c->qval[qtab_find(c, h)];
        if (v < 0) continue; /* not a gram of the query */
        next[j - da] = -1;
        if (!cnt[v])
            head[v] = j, c->touched[nt++] = v;
        else
            next[tail[v] - da] = j;
        tail[v] = j;
        cnt[v]++;
    }
    int64_t out = k;
    gram_range(q->units, q->ffirst, q->flast, q->nf, qlo, qhi, &a, &b);
    for (int64_t i = a; i < b; i++) {
        int64_t v = c->qslot[i];
        if (!cnt[v] || cnt[v] > fanout) continue;
        for (int64_t j = head[v]; j >= 0 && out < cap; j = next[j - da]) {
            int64_t *s = seeds + 4 * out++;
            s[0] = q->ffirst[i], s[1] = q->flast[i], s[2] = d->ffirst[j], s[3] = d->flast[j];
        }
    }
    for (int64_t t = 0; t < nt; t++) cnt[c->touched[t]] = 0;
    return out;
}

/* Sort uint64 values: insertion sort when short, else LSD radix (tmp holds n values). */
static void sort_u64(uint64_t *a, int64_t n, uint64_t *tmp) {
    if (n < 64) {
        for (int64_t i = 1; i < n; i++) {
            uint64_t x = a[i];
            int64_t j = i;
            while (j > 0 && a[j - 1] > x) a[j] = a[j - 1], j--;
            a[j] = x;
        }
        return;
    }
    int64_t count[256];
    uint64_t *src = a, *dst = tmp;
    for (int shift = 0; shift < 64; shift += 8) {
        memset(count, 0, sizeof(count));
        for (int64_t i = 0; i < n; i++) count[(src[i] >> shift) & 0xFF]++;
        int64_t sum = 0;
        for (int b = 0; b < 256; b++) {
            int64_t c = count[b];
            count[b] = sum;
            sum += c;
        }
        for (int64_t i = 0; i < n; i++) dst[count[(src[i] >> shift) & 0xFF]++] = src[i];
        uint64_t *t = src;
        src = dst, dst = t;
    }
}

/* align.gram_share of the coarse grams inside the two passages, as (num, den). */
static void share(const doc_t *q, const doc_t *d, int64_t q0, int64_t q1, int64_t d0, int64_t d1,
                  uint64_t *qa, uint64_t *da, int64_t *num, int64_t *den) {
    int64_t nq = 0, nd = 0, a, b;
    /* token ranges: the same search over an identity "units" (first/last are tokens) */
    gram_range(q->units, q->cfirst, q->clast, q->nc, q->units[q0], q->units[q1], &a, &b);
    for (int64_t i = a; i < b; i++) qa[nq++] = q->chash[i];
    gram_range(d->units, d->cfirst, d->clast, d->nc, d->units[d0], d->units[d1], &a, &b);
    for (int64_t i = a; i < b; i++) da[nd++] = d->chash[i];
    sort_u64(qa, nq, da + nd);
    sort_u64(da, nd, da + nd);
    int64_t u = 0, hit = 0, j = 0;
    for (int64_t i = 0; i < nq; i++) {
        if (i && qa[i] == qa[i - 1]) continue;
        u++;
        while (j < nd && da[j] < qa[i]) j++;
        if (j < nd && da[j] == qa[i]) hit++;
    }
    *num = hit, *den = u;
}

/* pairs._covered: the tokens of query passage [q0, q1) covered by its fine grams that the
 * source passage [d0, d1), widened by `widen` units, also holds (the source's grams are
 * marked by their number in the query's table, query_table); diff holds q1 - q0 + 1. */
static int64_t covered(ctx_t *c, const doc_t *q, const doc_t *d, int64_t q0, int64_t q1,
                       int64_t d0, int64_t d1, int64_t widen, int64_t *diff) {
    int64_t a, b, da, db, stamp = ++c->stamp;
    gram_range(d->units, d->ffirst, d->flast, d->nf, d->units[d0] - widen, d->units[d1] + widen,
               &da, &db);
    for (int64_t j = da; j < db; j++) {
        uint64_t h = d->fhash[j];
        if (!((c->bloom[h >> 58] >> ((h >> 52) & 63)) & 1)) continue;
        int64_t v = c->qval[qtab_find(c, h)];
        if (v >= 0) c->mark[v] = stamp;
    }
    for (int64_t t = 0; t <= q1 - q0; t++) diff[t] = 0;
    gram_range(q->units, q->ffirst, q->flast, q->nf, q->units[q0], q->units[q1], &a, &b);
    for (int64_t i = a; i < b; i++)
        if (c->mark[c->qslot[i]] == stamp) diff[q->ffirst[i] - q0]++, diff[q->flast[i] - q0]--;
    int64_t run = 0, out = 0;
    for (int64_t t = 0; t < q1 - q0; t++) {
        run += diff[t];
        out += run > 0;
    }
    return out;
}

static int push(found_vec *fv, found_t f) {
    if (fv->n == fv->cap) {
        int64_t cap = fv->cap ? 2 * fv->cap : 16;
        found_t *v = realloc(fv->v, sizeof(found_t) * (size_t)cap);
        if (!v) return -1;
        fv->v = v, fv->cap = cap;
    }
    fv->v[fv->n++] = f;
    return 0;
}

/* align._band: the range of the runs of sorted diagonals (split where two lie > gap apart)
 * holding an eighth of them or more (else the largest), +- near; sorts d[0..n) (tmp holds
 * n more); n >= 1. */
static void band(int64_t *d, int64_t n, int64_t near, int64_t gap, int64_t *tmp, int64_t *lo,
                 int64_t *hi) {
    for (int64_t i = 0; i < n; i++) d[i] ^= INT64_MIN; /* signed order as unsigned */
    sort_u64((uint64_t *)d, n, (uint64_t *)tmp);
    for (int64_t i = 0; i < n; i++) d[i] ^= INT64_MIN;
    int64_t b0 = 0, b1 = 0, start = 0, any = 0, big0 = 0, big1 = 0, size = 0;
    for (int64_t i = 1; i <= n; i++) {
        if (i == n || d[i] - d[i - 1] > gap) {
            if (BAND_SHARE * (i - start) >= n) {
                if (!any) b0 = d[start], any = 1;
                b1 = d[i - 1];
            }
            if (i - start > size) big0 = d[start], big1 = d[i - 1], size = i - start;
            start = i;
        }
    }
    if (!any) b0 = big0, b1 = big1; /* no run holds an eighth: the largest one */
    *lo = b0 - near, *hi = b1 + near;
}

static int64_t qlen(const doc_t *q, const found_t *f) {
    return q->ends[f->q1 - 1] - q->starts[f->q0];
}

/* pairs.dominated: drop the passages of this pair (fv->v[start..]) whose query span lies in
 * another one's that is longer, or as long with a higher score (a part of the query is
 * copied from one place: the lesser match is a repeated phrase). */
static int dominated(ctx_t *c, const doc_t *q, found_vec *fv, int64_t start) {
    int64_t n = fv->n, m = start;
    if (n - start > c->keep_cap) {
        free(c->keep);
        c->keep = malloc((size_t)(n - start) * 2);
        c->keep_cap = c->keep ? (n - start) * 2 : 0;
        if (!c->keep) return -1;
    }
    char *keep = c->keep;
    for (int64_t i = start; i < n; i++) {
        const found_t *f = &fv->v[i];
        int drop = 0;
        for (int64_t j = start; j < n && !drop; j++) {
            const found_t *g = &fv->v[j];
            if (j == i || g->q0 > f->q0 || f->q1 > g->q1) continue;
            int64_t gl = qlen(q, g), fl = qlen(q, f);
            drop = gl > fl || (gl == fl && g->num * f->den > f->num * g->den);
        }
        keep[i - start] = !drop;
    }
    for (int64_t i = start; i < n; i++)
        if (keep[i - start]) fv->v[m++] = fv->v[i];
    fv->n = m;
    return 0;
}

/* Sort a[0..n) by cmp_ord (a total order: one result whatever the algorithm) by insertion, as
 * seeds mostly come nearly sorted (by query position, and a band's source positions follow
 * them); past 8 moves an item, qsort. */
static void sort_few(ord_t *a, int64_t n) {
    int64_t moves = 0, limit = 8 * n;
    for (int64_t i = 1; i < n; i++) {
        ord_t x = a[i];
        int64_t j = i;
        while (j > 0 && cmp_ord(&a[j - 1], &x) > 0) {
            a[j] = a[j - 1], j--;
            if (++moves > limit) { /* not nearly sorted */
                a[j] = x;
                qsort(a, (size_t)n, sizeof(ord_t), cmp_ord);
                return;
            }
        }
        a[j] = x;
    }
}

/* The seeds passage_ends() looks at: all of them (idx NULL: 0..n), or the ones idx[lo..hi)
 * names (those starting inside a box's query or source range, by_range()). */
typedef struct {
    const int64_t *idx;
    int64_t lo, hi;
} span_t;

/* A seed (by value, then by index: the first of equal ones, as a scan in index order finds)
 * before the one at j, -1 none. */
#define BEFORE(v, i, j, col) ((j) < 0 || (v) < seeds[4 * (j) + (col)] || \
                              ((v) == seeds[4 * (j) + (col)] && (i) < (j)))
#define AFTER(v, i, j, col) ((j) < 0 || (v) > seeds[4 * (j) + (col)] || \
                             ((v) == seeds[4 * (j) + (col)] && (i) < (j)))

/* align._ends: flag (1) the seeds ord[0..m) whose (col, col + 1) range occurs more than
 * once among them; ord is left sorted by that range. */
static void flag_repeats(const int64_t *seeds, ord_t *ord, int64_t m, int col, int64_t *flag) {
    for (int64_t j = 0; j < m; j++) {
        int64_t i = ord[j].i;
        ord[j].qlo = seeds[4 * i + col], ord[j].dlo = seeds[4 * i + col + 1];
    }
    sort_few(ord, m);
    for (int64_t j = 0; j + 1 < m; j++)
        if (ord[j].qlo == ord[j + 1].qlo && ord[j].dlo == ord[j + 1].dlo)
            flag[ord[j].i] = flag[ord[j + 1].i] = 1;
}

/* The passage in box c: the first / last seeds on its diagonals (align._band) whose ranges
 * match one place on each side (align._ends: all of them when none does), extended token by
 * token where both texts agree (align._extend); e = q0, q1, d0, d1. Returns 0 when no seed
 * qualifies (cannot happen: the band holds a strong seed). The seeds of k strong ones and n
 * in all are those of sp (a box's seeds lie in its ranges); dg: 2 n + n scratch (diagonals,
 * band's, flags by seed index), ord: n. */
static int passage_ends(const doc_t *q, const doc_t *d, const int64_t *seeds, const box_t *bx,
                        span_t sp, int64_t k, const int64_t *c, const params_t *p, int64_t *dg,
                        ord_t *ord, int64_t *e) {
    int64_t nd = 0, blo, bhi, m = 0, once = 0;
    for (int64_t t = sp.lo; t < sp.hi; t++) {
        int64_t i = sp.idx ? sp.idx[t] : t;
        const int64_t *x = bx[i].v;
        if (i >= k || x[0] < c[0] || x[1] > c[1] || x[2] < c[2] || x[3] > c[3]) continue;
        dg[nd++] = x[2] - x[0];
    }
    band(dg, nd, p->near, p->gap, dg + nd, &blo, &bhi);
    int64_t *flag = dg + 2 * nd;
    for (int64_t t = sp.lo; t < sp.hi; t++) {
        int64_t i = sp.idx ? sp.idx[t] : t;
        const int64_t *x = bx[i].v;
        if (x[0] < c[0] || x[1] > c[1] || x[2] < c[2] || x[3] > c[3]) continue;
        if (x[2] - x[0] < blo || x[2] - x[0] > bhi) continue;
        ord[m++].i = i, flag[i] = 0;
    }
    flag_repeats(seeds, ord, m, 0, flag);
    flag_repeats(seeds, ord, m, 2, flag);
    for (int64_t j = 0; j < m; j++) once |= !flag[ord[j].i];
    int64_t fq = -1, fd = -1, lq = -1, ld = -1;
    for (int64_t j = 0; j < m; j++) {
        int64_t i = ord[j].i;
        if (once && flag[i]) continue;
        const int64_t *s = seeds + 4 * i;
        if (BEFORE(s[0], i, fq, 0)) fq = i;
        if (BEFORE(s[2], i, fd, 2)) fd = i;
        if (AFTER(s[1], i, lq, 1)) lq = i;
        if (AFTER(s[3], i, ld, 3)) ld = i;
    }
    if (fq < 0) return 0;
    int64_t qi = seeds[4 * fq], di = seeds[4 * fq + 2];
    while (qi > 0 && di > 0 && q->th[qi - 1] == d->th[di - 1]) qi--, di--;
    e[0] = qi;
    qi = seeds[4 * fd], di = seeds[4 * fd + 2];
    while (qi > 0 && di > 0 && q->th[qi - 1] == d->th[di - 1]) qi--, di--;
    e[2] = di;
    qi = seeds[4 * lq + 1], di = seeds[4 * lq + 3];
    while (qi < q->n && di < d->n && q->th[qi] == d->th[di]) qi++, di++;
    e[1] = qi;
    qi = seeds[4 * ld + 1], di = seeds[4 * ld + 3];
    while (qi < q->n && di < d->n && q->th[qi] == d->th[di]) qi++, di++;
    e[3] = di;
    return 1;
}

/* The seed indices 0..n sorted by bx column col (then index) into out, through o (n items). */
static void sorted_by(const box_t *bx, int64_t n, int col, ord_t *o, int64_t *out) {
    for (int64_t i = 0; i < n; i++) o[i] = (ord_t){bx[i].v[col], 0, i};
    sort_few(o, n);
    for (int64_t i = 0; i < n; i++) out[i] = o[i].i;
}

/* The range of by (n seed indices sorted by bx column col) whose column lies in [lo, hi]. */
static void col_range(const box_t *bx, const int64_t *by, int64_t n, int col, int64_t lo,
                      int64_t hi, int64_t *a, int64_t *b) {
    int64_t l = 0, h = n;
    while (l < h) {
        int64_t mid = (l + h) / 2;
        if (bx[by[mid]].v[col] < lo) l = mid + 1; else h = mid;
    }
    *a = l, h = n;
    while (l < h) {
        int64_t mid = (l + h) / 2;
        if (bx[by[mid]].v[col] <= hi) l = mid + 1; else h = mid;
    }
    *b = l;
}

/* The seeds of box c to look at: those starting in its query range or in its source range
 * (byq, byd: the seeds sorted by each), whichever are fewer. Many boxes each scanning every
 * seed cost boxes x seeds (a short text of five words repeated in a long one of them: 5,000
 * boxes x 59,000 seeds, 2 s); the results are the same (ties go to the lower index). */
static span_t by_range(const box_t *bx, int64_t n, const int64_t *byq, const int64_t *byd,
                       const int64_t *c) {
    int64_t qa, qb, da, db;
    col_range(bx, byq, n, 0, c[0], c[1], &qa, &qb);
    col_range(bx, byd, n, 2, c[2], c[3], &da, &db);
    return qb - qa <= db - da ? (span_t){byq, qa, qb} : (span_t){byd, da, db};
}

static int scratch(ctx_t *x, size_t cap, size_t big) {
    if (cap > x->cap_have) {
        size_t c = cap * 2;
        free(x->seeds), free(x->bx), free(x->ord);
        x->seeds = malloc(sizeof(int64_t) * 4 * c);
        x->bx = malloc(sizeof(box_t) * 3 * c);
        x->ord = malloc(sizeof(ord_t) * c);
        x->cap_have = x->seeds && x->bx && x->ord ? c : 0;
        if (!x->cap_have) return -1;
    }
    if (big > x->big_have) {
        free(x->tmp);
        x->tmp = malloc(sizeof(hidx) * big * 2);
        x->big_have = x->tmp ? big * 2 : 0;
        if (!x->tmp) return -1;
    }
    return 0;
}

/* One pair: seeds (k strong rows, token ranges) of query q in source d -> passages. */
static int pair(ctx_t *c, const doc_t *q, const doc_t *d, const int64_t *strong, int64_t k,
                const params_t *p, int64_t pair_index, found_vec *fv) {
    if (k == 0) return 0;
    int64_t start = fv->n;
    for (int64_t i = 0; i < k; i++) {
        const int64_t *s = strong + 4 * i;
        if (s[0] < 0 || s[0] >= s[1] || s[1] > q->n || s[2] < 0 || s[2] >= s[3] || s[3] > d->n)
            return -2;
    }
    int64_t cap = k + q->nf * (p->fanout > 0 ? p->fanout : 0) + 1;
    size_t big = (size_t)(cap > q->n + d->n ? cap : q->n + d->n) + (size_t)(d->nf + q->nc + d->nc) + 8;
    /* covered(): the query's tokens + 1 */
    if (scratch(c, (size_t)cap, big) < 0) return -1;
    int64_t *seeds = c->seeds;
    box_t *bx = c->bx;
    memcpy(seeds, strong, sizeof(int64_t) * 4 * (size_t)k);
    int64_t n = fine_seeds(c, q, d, seeds, k, p->reach, p->fanout, cap);
    if (n < 0) return -1;
    for (int64_t i = 0; i < n; i++) {
        const int64_t *s = seeds + 4 * i;
        bx[i] = (box_t){{q->units[s[0]], q->units[s[1]], d->units[s[2]], d->units[s[3]], 1,
                         i < k}};
    }
    box_t *cl = bx + n;
    int64_t nb = clusters(bx, n, k, p->near, p->gap, cl, c->ord);
    /* past a few boxes each looks only at the seeds in its ranges (by_range); the sorted
     * indices go after the boxes (bx holds 6 cap boxes, n + nb are used) */
    int64_t *byq = nb > BOX_SCAN ? (int64_t *)(cl + nb) : NULL, *byd = byq ? byq + n : NULL;
    if (byq) sorted_by(bx, n, 0, c->ord, byq), sorted_by(bx, n, 2, c->ord, byd);
    for (int64_t b = 0; b < nb; b++) {
        int64_t e[4], num, den;
        span_t sp = byq ? by_range(bx, n, byq, byd, cl[b].v) : (span_t){NULL, 0, n};
        if (!passage_ends(q, d, seeds, bx, sp, k, cl[b].v, p, c->tmp, c->ord, e)) continue;
        /* min_units in gram units (tokens.gram_units: units + tokens) */
        if (q->units[e[1]] - q->units[e[0]] + e[1] - e[0] < p->min_units ||
            d->units[e[3]] - d->units[e[2]] + e[3] - e[2] < p->min_units)
            continue;
        if (100 * covered(c, q, d, e[0], e[1], e[2], e[3], p->gap, c->tmp) <
            MIN_COVER * (e[1] - e[0]))
            continue;
        uint64_t *qa = c->tmp, *da = qa + q->nc;
        share(q, d, e[0], e[1], e[2], e[3], qa, da, &num, &den);
        if (push(fv, (found_t){pair_index, e[0], e[1], e[2], e[3], num, den}) < 0) return -1;
    }
    return dominated(c, q, fv, start);
}

ov_ctx *ov_ctx_new(void) {
    return calloc(1, sizeof(ov_ctx));
}

void ov_ctx_free(ov_ctx *c) {
    if (!c) return;
    ctx_free(c);
    free(c);
}

int ov_query(ov_ctx *c, const doc_t *q, const doc_t *ds, int64_t m, const int64_t *seeds,
             const int64_t *bounds, const params_t *p, found_vec *fv) {
    int rc = query_table(c, q);
    for (int64_t j = 0; j < m && !rc; j++) {
        if (j + 1 < m && bounds[j + 2] > bounds[j + 1]) {
            /* the next source is cold (a cache of documents much larger than the CPU's):
             * ask for the lines around its first seed now */
            const doc_t *n = &ds[j + 1];
            int64_t t = seeds[4 * bounds[j + 1] + 2], g = t < n->nf ? t : n->nf - 1;
            __builtin_prefetch(&n->units[t]);
            __builtin_prefetch(&n->th[t]);
            if (g >= 0) __builtin_prefetch(&n->fhash[g]), __builtin_prefetch(&n->ffirst[g]);
        }
        rc = pair(c, q, &ds[j], seeds + 4 * bounds[j], bounds[j + 1] - bounds[j], p, j, fv);
    }
    return rc;
}


/* ---------------------------------------------------------------- the template frame test */

/* difflib's find_longest_match(alo, ahi, blo, bhi) with no junk: the longest common run of
 * a[alo..ahi) and b[blo..bhi), the earliest in a, then in b (ties as difflib: i, then j
 * ascending, a longer run only); row: bhi - blo + 1 items per row, two rows. */
static void longest_run(const uint64_t *a, const uint64_t *b, int64_t alo, int64_t ahi,
                        int64_t blo, int64_t bhi, int64_t *row, int64_t out[3]) {
    int64_t w = bhi - blo, *prev = row, *cur = row + w + 1;
    int64_t bi = alo, bj = blo, bk = 0;
    memset(prev, 0, sizeof(int64_t) * (size_t)(w + 1));
    cur[0] = 0;
    for (int64_t i = alo; i < ahi; i++) {
        uint64_t x = a[i];
        for (int64_t j = 0; j < w; j++) {
            int64_t k = b[blo + j] == x ? prev[j] + 1 : 0;
            cur[j + 1] = k;
            if (k > bk) bi = i - k + 1, bj = blo + j - k + 1, bk = k;
        }
        int64_t *t = prev;
        prev = cur, cur = t;
    }
    out[0] = bi, out[1] = bj, out[2] = bk;
}

static int cmp_run(const void *x, const void *y) {
    int64_t a = ((const int64_t *)x)[0], b = ((const int64_t *)y)[0];
    return (a > b) - (a < b);
}

int64_t ov_frame(const uint64_t *q, int64_t nq, const uint64_t *s, int64_t ns, int64_t ngram,
                 uint8_t *shared) {
    /* difflib.SequenceMatcher(None, q, s, autojunk=False).get_matching_blocks(): the longest
     * run, then the same on each side of it; at most min(nq, ns) runs and as many ranges */
    int64_t m = nq < ns ? nq : ns, *row = malloc(sizeof(int64_t) * (size_t)(2 * ns + 2));
    int64_t *runs = malloc(sizeof(int64_t) * (size_t)(3 * m + 3));
    int64_t *todo = malloc(sizeof(int64_t) * (size_t)(4 * m + 4));
    if (!row || !runs || !todo) {
        free(row), free(runs), free(todo);
        return -1;
    }
    int64_t nr = 0, nt = 0, matched = 0, r[3];
    todo[nt++] = 0, todo[nt++] = nq, todo[nt++] = 0, todo[nt++] = ns;
    while (nt) {
        nt -= 4;
        int64_t alo = todo[nt], ahi = todo[nt + 1], blo = todo[nt + 2], bhi = todo[nt + 3];
        longest_run(q, s, alo, ahi, blo, bhi, row, r);
        if (!r[2]) continue;
        memcpy(runs + 3 * nr++, r, sizeof r);
        if (alo < r[0] && blo < r[1])
            todo[nt++] = alo, todo[nt++] = r[0], todo[nt++] = blo, todo[nt++] = r[1];
        if (r[0] + r[2] < ahi && r[1] + r[2] < bhi)
            todo[nt++] = r[0] + r[2], todo[nt++] = ahi, todo[nt++] = r[1] + r[2], todo[nt++] = bhi;
    }
    /* runs of disjoint ranges: in q order they are in s order too; adjacent runs are one
     * block (get_matching_blocks joins them) */
    qsort(runs, (size_t)nr, 3 * sizeof(int64_t), cmp_run);
    memset(shared, 0, (size_t)nq);
    for (int64_t k = 0; k < nr;) {
        int64_t i = runs[3 * k], j = runs[3 * k + 1], n = runs[3 * k + 2];
        for (k++; k < nr && runs[3 * k] == i + n && runs[3 * k + 1] == j + n; k++)
            n += runs[3 * k + 2];
        if (n >= ngram) memset(shared + i, 1, (size_t)n);
        matched += n;
    }
    free(row), free(runs), free(todo);
    return matched;
}
