/* neardup._overlap: the hot loops of partial-copy detection (neardup.overlap), in plain C.
 *
 * Each function here has a Python reference in neardup/overlap (tokens.py: tokenize, grams,
 * winnow; align.py + pairs.py: the per-pair step) and must give the same result bit for bit;
 * tests/overlap/test_kernels.py compares them on random inputs. Without this extension the
 * Python references run (slowly), so results never depend on whether it was built.
 *
 * A *packed* document is one int64 buffer (a bytes object): a header [n, nc, nf], then
 * token starts[n], ends[n], units[n + 1], token hashes[n], coarse grams first[nc], last[nc],
 * hashes[nc], fine grams first[nf], last[nf], hashes[nf] (hashes are uint64 bit patterns). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "keyed.h"

#define P_MUL 0x100000001B3ULL
#define UNKNOWN_FOLD 0xFFFFFFFFu
#define FINE_GROUP 4 /* align.FINE_GROUP */
#define EXTEND 6     /* align.EXTEND */
#define MIN_COVER 50 /* pairs.MIN_COVER */
#define BAND_SHARE 8 /* align.BAND_SHARE */
#define PREFETCH 8   /* look-ups issued ahead in the gram index */

static uint64_t splitmix(uint64_t x) {
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

/* ---------------------------------------------------------------- buffers */

typedef struct {
    Py_buffer b[8];
    int n;
} bufs;

static void release(bufs *bs) {
    for (int i = 0; i < bs->n; i++) PyBuffer_Release(&bs->b[i]);
    bs->n = 0;
}

static void *get(bufs *bs, PyObject *o, Py_ssize_t itemsize, Py_ssize_t min_len, int writable,
                 const char *name, Py_ssize_t *len) {
    Py_buffer *v = &bs->b[bs->n];
    if (PyObject_GetBuffer(o, v, PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0)) < 0) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s must be a C-contiguous%s buffer", name,
                     writable ? " writable" : "");
        return NULL;
    }
    bs->n++;
    if (v->len % itemsize || v->len / itemsize < min_len) {
        PyErr_Format(PyExc_ValueError, "%s: expected at least %zd items of %zd bytes", name,
                     min_len, itemsize);
        return NULL;
    }
    if (len) *len = v->len / itemsize;
    return v->buf;
}

/* ---------------------------------------------------------------- tokens and grams */

/* Tokens of the code points text[0..len) (class table cls: 0 separator, 1 word, 2 Han,
 * 3 single-character script; fold: folded code point, UNKNOWN_FOLD when not computed yet).
 * Returns the token count, or -(cp + 1) for the first code point of a token whose fold is
 * unknown (the caller fills it in and calls again). */
static int64_t tokenize_cps(int kind, const void *data, int64_t len, const uint8_t *cls,
                            const uint32_t *fold, int64_t word_units, int64_t cjk_units,
                            int64_t *starts, int64_t *ends, int64_t *units, uint64_t *hashes) {
    int64_t n = 0, i = 0;
    units[0] = 0;
    while (i < len) {
        uint32_t c = (uint32_t)PyUnicode_READ(kind, data, i);
        uint8_t k = c < 0x110000 ? cls[c] : 0;
        if (k == 0) {
            i++;
            continue;
        }
        int64_t s = i, e = i + 1;
        if (k == 1) {
            while (e < len) {
                uint32_t c2 = (uint32_t)PyUnicode_READ(kind, data, e);
                if (c2 >= 0x110000 || cls[c2] != 1) break;
                e++;
            }
        }
        uint64_t h = 0;
        for (int64_t j = s; j < e; j++) {
            uint32_t cj = (uint32_t)PyUnicode_READ(kind, data, j);
            uint32_t f = fold[cj];
            if (f == UNKNOWN_FOLD) return -(int64_t)cj - 1;
            h = h * P_MUL + f;
        }
        starts[n] = s;
        ends[n] = e;
        hashes[n] = splitmix(h + (uint64_t)(e - s));
        units[n + 1] = units[n] + (k == 1 ? word_units : cjk_units);
        n++;
        i = e;
    }
    return n;
}

/* The grams of at least `size` units (as tokens.grams): gram i covers tokens [first, last). */
static int64_t grams(int64_t n, const int64_t *units, const uint64_t *th, int64_t size,
                     int64_t *first, int64_t *last, uint64_t *gh) {
    int64_t m = 0, stop = 0;
    for (int64_t i = 0; i < n; i++) {
        if (stop < i) stop = i;
        while (stop <= n && units[stop] < units[i] + size) stop++;
        if (stop > n) break;
        uint64_t raw = 0, pw = 1;
        for (int64_t t = i; t < stop; t++) {
            raw += th[t] * pw;
            pw *= P_MUL;
        }
        first[m] = i;
        last[m] = stop;
        gh[m] = splitmix(raw + (uint64_t)(stop - i));
        m++;
    }
    return m;
}

static PyObject *py_prepare(PyObject *self, PyObject *args) {
    PyObject *text, *cls_o, *fold_o;
    Py_ssize_t word_units, cjk_units, coarse, fine;
    bufs bs = {.n = 0};
    if (!PyArg_ParseTuple(args, "UOOnnnn", &text, &cls_o, &fold_o, &word_units, &cjk_units,
                          &coarse, &fine))
        return NULL;
    const uint8_t *cls = get(&bs, cls_o, 1, 0x110000, 0, "cls", NULL);
    if (!cls) goto fail;
    const uint32_t *fold = get(&bs, fold_o, 4, 0x110000, 0, "fold", NULL);
    if (!fold) goto fail;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    int64_t len = PyUnicode_GET_LENGTH(text);
    /* scratch: starts, ends, units (len + 1), hashes, 2 x (first, last, hashes), gram
     * units (len + 1) */
    int64_t *mem = malloc(sizeof(int64_t) * (11 * (size_t)len + 9));
    if (!mem) {
        PyErr_NoMemory();
        goto fail;
    }
    int64_t *st = mem, *en = st + len, *un = en + len, *th = un + len + 1;
    int64_t *cf = th + len, *cl = cf + len, *ch = cl + len;
    int64_t *ff = ch + len, *fl = ff + len, *fh = fl + len;
    int64_t n, nc = 0, nf = 0;
    /* without the GIL (a 10^6-character text is tens of ms that other threads of a server
     * would wait): only the text's own immutable buffer (args hold it), the held tables and
     * this scratch are read or written */
    Py_BEGIN_ALLOW_THREADS
    n = tokenize_cps(kind, data, len, cls, fold, word_units, cjk_units, st, en, un,
                     (uint64_t *)th);
    if (n >= 0) {
        /* grams are sized in gram units (tokens.gram_units): a token's units + 1 */
        int64_t *gu = fh + len;
        for (int64_t i = 0; i <= n; i++) gu[i] = un[i] + i;
        nc = grams(n, gu, (uint64_t *)th, coarse, cf, cl, (uint64_t *)ch);
        nf = grams(n, gu, (uint64_t *)th, fine, ff, fl, (uint64_t *)fh);
    }
    Py_END_ALLOW_THREADS
    if (n < 0) {
        free(mem);
        release(&bs);
        return PyLong_FromLongLong(-n - 1);  /* the code point whose fold is needed */
    }
    int64_t total = 3 + 4 * n + 1 + 3 * nc + 3 * nf;
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(total * 8));
    if (!out) {
        free(mem);
        goto fail;
    }
    int64_t *o = (int64_t *)PyBytes_AS_STRING(out);
    o[0] = n, o[1] = nc, o[2] = nf;
    o += 3;
    const int64_t *parts[] = {st, en, un, th, cf, cl, ch, ff, fl, fh};
    const int64_t sizes[] = {n, n, n + 1, n, nc, nc, nc, nf, nf, nf};
    for (int i = 0; i < 10; i++) {
        memcpy(o, parts[i], sizeof(int64_t) * (size_t)sizes[i]);
        o += sizes[i];
    }
    free(mem);
    release(&bs);
    return out;
fail:
    release(&bs);
    return NULL;
}

/* tokens.winnow: indices of the rightmost minimum of every window of hashes, ascending. */
static int64_t winnow_core(const uint64_t *h, int64_t n, int64_t window, int64_t *out) {
    int64_t m = 0;
    if (window <= 1) {
        for (int64_t i = 0; i < n; i++) out[m++] = i;
    } else if (n <= window) {
        if (n > 0) {
            int64_t best = n - 1;
            for (int64_t i = n - 2; i >= 0; i--)
                if (h[i] < h[best]) best = i;
            out[m++] = best;
        }
    } else {
        for (int64_t k = 0; k + window <= n; k++) {
            int64_t best = k;
            for (int64_t i = k + 1; i < k + window; i++)
                if (h[i] <= h[best]) best = i;
            if (m == 0 || out[m - 1] != best) out[m++] = best;
        }
    }
    return m;
}

/* winnow(hashes: uint64, window, out: int64) -> count: the rightmost minimum of every window
 * of `window` hashes, each index once, ascending (as tokens.winnow). */
static PyObject *py_winnow(PyObject *self, PyObject *args) {
    PyObject *h_o, *out_o;
    Py_ssize_t window, n, cap;
    bufs bs = {.n = 0};
    if (!PyArg_ParseTuple(args, "OnO", &h_o, &window, &out_o)) return NULL;
    const uint64_t *h = get(&bs, h_o, 8, 0, 0, "hashes", &n);
    if (!h) goto fail;
    int64_t *out = get(&bs, out_o, 8, 0, 1, "out", &cap);
    if (!out) goto fail;
    if (cap < n) {
        PyErr_SetString(PyExc_ValueError, "out must hold len(hashes) items");
        goto fail;
    }
    int64_t m = winnow_core(h, n, window, out);
    release(&bs);
    return PyLong_FromLongLong(m);
fail:
    release(&bs);
    return NULL;
}

/* ---------------------------------------------------------------- the per-pair step */

typedef struct {
    int64_t n, nc, nf;
    const int64_t *starts, *ends, *units;
    const uint64_t *th;
    const int64_t *cfirst, *clast;
    const uint64_t *chash;
    const int64_t *ffirst, *flast;
    const uint64_t *fhash;
} doc_t;

static int unpack(const int64_t *p, int64_t len, doc_t *d) {
    if (len < 3) return -1;
    d->n = p[0], d->nc = p[1], d->nf = p[2];
    if (d->n < 0 || d->nc < 0 || d->nf < 0 || len != 3 + 4 * d->n + 1 + 3 * d->nc + 3 * d->nf)
        return -1;
    p += 3;
    d->starts = p, p += d->n;
    d->ends = p, p += d->n;
    d->units = p, p += d->n + 1;
    d->th = (const uint64_t *)p, p += d->n;
    d->cfirst = p, p += d->nc;
    d->clast = p, p += d->nc;
    d->chash = (const uint64_t *)p, p += d->nc;
    d->ffirst = p, p += d->nf;
    d->flast = p, p += d->nf;
    d->fhash = (const uint64_t *)p;
    return 0;
}

typedef struct {
    int64_t pair;    /* the source's index in the batch */
    int64_t q0, q1, d0, d1;  /* token ranges */
    int64_t num, den;        /* score = num / den */
} found_t;

typedef struct {
    found_t *v;
    int64_t n, cap;
} found_vec;

typedef struct {
    int64_t near, gap, min_units, reach, fanout;
} params_t;

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
        qsort(bx, (size_t)n, sizeof(box_t), a ? cmp_box_d : cmp_box);
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
    if (a) qsort(bx, (size_t)n, sizeof(box_t), cmp_box);
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

/* Scratch of one pairs() call, grown as needed (no allocation per pair), and the query's
 * fine grams in a hash table: qkey/qval (cap slots, qval -1: empty) map a hash to its number
 * in 0..nslot, qslot[i] is fine gram i's number; cnt/head/tail (per number) are the chain of
 * the source window's grams of that hash in one pair (next[j - da]: the next one), touched
 * the numbers whose cnt is to be reset. One ctx per call: the kernel runs without the GIL. */
typedef struct {
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
} ctx_t;

static void ctx_free(ctx_t *c) {
    free(c->seeds), free(c->bx), free(c->ord), free(c->tmp), free(c->keep);
    free(c->qkey), free(c->qval), free(c->qslot), free(c->cnt), free(c->head), free(c->tail);
    free(c->touched), free(c->next), free(c->mark);
    memset(c, 0, sizeof(*c));
}

/* The scratch kept between calls (its pages stay mapped), or `own` (zeroed) when another
 * call holds it (calls run without the GIL); taken and given back with the GIL held. */
static ctx_t kept_ctx;
static int kept_busy;

static ctx_t *take_ctx(ctx_t *own) {
    if (kept_busy) return own;
    kept_busy = 1;
    return &kept_ctx;
}

static void give_ctx(ctx_t *c) {
    if (c == &kept_ctx)
        kept_busy = 0;
    else
        ctx_free(c);
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
    qsort(ord, (size_t)m, sizeof(ord_t), cmp_ord);
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
    qsort(o, (size_t)n, sizeof(ord_t), cmp_ord);
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

/* The passages as a list of (source index, span start, span end, source start, source end,
 * num, den) tuples, spans in code points (ds: the sources). */
static PyObject *found_list(const doc_t *q, const doc_t *ds, const found_vec *fv) {
    PyObject *result = PyList_New((Py_ssize_t)fv->n);
    if (!result) return NULL;
    for (int64_t i = 0; i < fv->n; i++) {
        const found_t *f = &fv->v[i];
        const doc_t *d = &ds[f->pair];
        PyObject *t = Py_BuildValue("(LLLLLLL)", (long long)f->pair, (long long)q->starts[f->q0],
                                    (long long)q->ends[f->q1 - 1], (long long)d->starts[f->d0],
                                    (long long)d->ends[f->d1 - 1], (long long)f->num,
                                    (long long)f->den);
        if (!t) {
            Py_DECREF(result);
            return NULL;
        }
        PyList_SET_ITEM(result, i, t);
    }
    return result;
}

/* One query and its sources, checked and unpacked with the GIL held, then run without it:
 * srcs (a tuple, owned) keeps the sources' bytes alive, the buffers the seeds and bounds. */
typedef struct {
    PyObject *q_o, *srcs;
    bufs bs;
    doc_t q, *ds;
    int64_t m, ns;
    const int64_t *seeds, *bounds;
    found_vec fv;
    int rc;
} job_t;

static void job_free(job_t *J) {
    release(&J->bs);
    Py_CLEAR(J->srcs);
    free(J->ds), free(J->fv.v);
    J->ds = NULL, J->fv.v = NULL;
}

/* Check and unpack (query, sources, seeds, bounds); -1 with an exception set. */
static int job_load(job_t *J, PyObject *q_o, PyObject *srcs, PyObject *seeds_o,
                    PyObject *bounds_o) {
    Py_ssize_t qlen, ns, nbnd;
    const int64_t *qp = get(&J->bs, q_o, 8, 3, 0, "query", &qlen);
    if (!qp) return -1;
    J->seeds = get(&J->bs, seeds_o, 8, 0, 0, "seeds", &ns);
    if (!J->seeds) return -1;
    J->bounds = get(&J->bs, bounds_o, 8, 1, 0, "bounds", &nbnd);
    if (!J->bounds) return -1;
    if (unpack(qp, qlen, &J->q) < 0) {
        PyErr_SetString(PyExc_ValueError, "query is not a packed document");
        return -1;
    }
    J->srcs = PySequence_Tuple(srcs);
    if (!J->srcs) return -1;
    Py_ssize_t m = PyTuple_GET_SIZE(J->srcs);
    const int64_t *bounds = J->bounds;
    if (nbnd != m + 1 || ns % 4 || bounds[0] != 0 || bounds[m] != ns / 4) {
        PyErr_SetString(PyExc_ValueError, "bounds must be len(sources) + 1 offsets into seeds");
        return -1;
    }
    J->m = m, J->ns = ns;
    J->ds = malloc(sizeof(doc_t) * (size_t)(m + 1));
    if (!J->ds) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t j = 0; j < m; j++) {
        PyObject *so = PyTuple_GET_ITEM(J->srcs, j);
        if (!PyBytes_Check(so)) {
            PyErr_SetString(PyExc_TypeError, "sources must be packed documents (bytes)");
            return -1;
        }
        Py_ssize_t sl = PyBytes_GET_SIZE(so);
        if (sl % 8 || unpack((const int64_t *)PyBytes_AS_STRING(so), sl / 8, &J->ds[j]) < 0) {
            PyErr_SetString(PyExc_ValueError, "source is not a packed document");
            return -1;
        }
        if (bounds[j] > bounds[j + 1] || bounds[j + 1] > ns / 4) {
            PyErr_SetString(PyExc_ValueError, "bounds must be ascending");
            return -1;
        }
    }
    return 0;
}

/* The passages of a loaded job (no Python objects touched: runs without the GIL). */
static void job_run(ctx_t *c, job_t *J, const params_t *p) {
    J->rc = query_table(c, &J->q);
    for (int64_t j = 0; j < J->m && !J->rc; j++) {
        if (j + 1 < J->m && J->bounds[j + 2] > J->bounds[j + 1]) {
            /* the next source is cold (a cache of documents much larger than the CPU's):
             * ask for the lines around its first seed now */
            const doc_t *n = &J->ds[j + 1];
            int64_t t = J->seeds[4 * J->bounds[j + 1] + 2], g = t < n->nf ? t : n->nf - 1;
            __builtin_prefetch(&n->units[t]);
            __builtin_prefetch(&n->th[t]);
            if (g >= 0) __builtin_prefetch(&n->fhash[g]), __builtin_prefetch(&n->ffirst[g]);
        }
        J->rc = pair(c, &J->q, &J->ds[j], J->seeds + 4 * J->bounds[j],
                     J->bounds[j + 1] - J->bounds[j], p, j, &J->fv);
    }
}

/* The job's passages as found_list, or NULL with the exception of its failure. */
static PyObject *job_result(job_t *J) {
    if (J->rc == -2) {
        PyErr_SetString(PyExc_IndexError, "a seed lies outside its documents");
        return NULL;
    }
    if (J->rc) return PyErr_NoMemory();
    return found_list(&J->q, J->ds, &J->fv);
}

/* pairs(query, sources, seeds, bounds, near, gap, min_units, reach, fanout) -> list of
 * (source index, span start, span end, source start, source end, num, den): the passages of
 * the packed query in each packed source; source j's seeds are rows bounds[j]:bounds[j+1]. */
static PyObject *py_pairs(PyObject *self, PyObject *args) {
    PyObject *q_o, *srcs, *seeds_o, *bounds_o, *result = NULL;
    params_t p;
    job_t J = {.bs = {.n = 0}};
    if (!PyArg_ParseTuple(args, "OO!OOnnnnn", &q_o, &PyList_Type, &srcs, &seeds_o, &bounds_o,
                          &p.near, &p.gap, &p.min_units, &p.reach, &p.fanout))
        return NULL;
    if (job_load(&J, q_o, srcs, seeds_o, bounds_o) == 0) {
        ctx_t own = {0}, *ctx = take_ctx(&own);
        Py_BEGIN_ALLOW_THREADS
        job_run(ctx, &J, &p);
        Py_END_ALLOW_THREADS
        give_ctx(ctx);
        result = job_result(&J);
    }
    job_free(&J);
    return result;
}

/* pairs_many(jobs, near, gap, min_units, reach, fanout) -> [pairs(*job, ...) for job in
 * jobs], each job a (query, sources, seeds, bounds) tuple; all of them run without the GIL,
 * so a Python thread can prepare the next ones meanwhile. */
static PyObject *py_pairs_many(PyObject *self, PyObject *args) {
    PyObject *jobs_o, *result = NULL;
    params_t p;
    if (!PyArg_ParseTuple(args, "Onnnnn", &jobs_o, &p.near, &p.gap, &p.min_units, &p.reach,
                          &p.fanout))
        return NULL;
    PyObject *jobs = PySequence_Tuple(jobs_o);
    if (!jobs) return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(jobs), loaded = 0;
    job_t *J = calloc((size_t)n + 1, sizeof(job_t));
    if (!J) {
        Py_DECREF(jobs);
        return PyErr_NoMemory();
    }
    for (; loaded < n; loaded++) {
        PyObject *q_o, *srcs, *seeds_o, *bounds_o, *job = PyTuple_GET_ITEM(jobs, loaded);
        if (!PyTuple_Check(job) ||
            !PyArg_ParseTuple(job, "OO!OO", &q_o, &PyList_Type, &srcs, &seeds_o, &bounds_o)) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "a job is (query, sources, seeds, bounds)");
            break;
        }
        if (job_load(&J[loaded], q_o, srcs, seeds_o, bounds_o) < 0) {
            loaded++;
            break;
        }
    }
    if (!PyErr_Occurred()) {
        ctx_t own = {0}, *ctx = take_ctx(&own);
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < n; i++) job_run(ctx, &J[i], &p);
        Py_END_ALLOW_THREADS
        give_ctx(ctx);
        result = PyList_New(n);
        for (Py_ssize_t i = 0; result && i < n; i++) {
            PyObject *r = job_result(&J[i]);
            if (!r) Py_CLEAR(result);
            else PyList_SET_ITEM(result, i, r);
        }
    }
    for (Py_ssize_t i = 0; i < loaded; i++) job_free(&J[i]);
    free(J);
    Py_DECREF(jobs);
    return result;
}


/* ---------------------------------------------------------------- the gram index */

/* Index: gram hash -> postings (doc, first token, last token) (overlap/index.py documents the
 * Python reference, GramIndex). Laid out so that a document costs about the same at 10^5 and
 * 10^6 documents (issue 25; docs/OVERLAP.md "Cost"):
 * - the slot table is cut into PARTS parts by the hash's top bits, each an open addressing
 *   table that grows alone (by half), at its own load (0.6 to 0.9, spread geometrically over
 *   the parts): the growths are spread evenly instead of one stop of the whole table (seconds
 *   at 10^6 documents, with 3x the table's memory while it lasts), and the mean load, so the
 *   probe length and the memory per key, is the same at any size (~0.53);
 * - a slot is 8 bytes (the key's low half and its newest run), 8 a line: a probe of an absent
 *   gram (~97 % of a query's) reads one line, and a growth moves slots without reading keys;
 * - the postings of a key sit in runs of doubling size (new_run), contiguous, in an arena
 *   that never moves: ~log2(c) + 1 lines for c postings; the newest run also holds the key's
 *   count and high half; a hit copies its spans out, so grouping touches no posting;
 * - a query probes AHEAD grams ahead and walks its keys' runs together (walk), so the misses of
 *   the probes and of the runs overlap.
 * - tables and arena chunks are asked to be 2 MiB pages (mapped): with 4 KiB pages the probes
 *   of a 10^6-document index missed the TLB as often as the caches, and its cost per document
 *   was 2.1-2.2x that of a 10^5-document one (1.6-1.7x with them; benchmarks/README.md).
 * Tables and runs are written before they are read (zeroed). The arena holds at most 2**32 - 1
 * units of 4 bytes (~10^9 postings). */
#define NIL 0u /* no run: unit 0 of the arena is never one */
#ifndef AHEAD
#define AHEAD 16 /* probes issued ahead (a probe that misses the TLB and caches takes ~200 ns) */
#endif
#define PARTS 256       /* slot table parts (top 8 bits of the hash) */
#define ABITS 20        /* arena chunks: 2**20 units of 4 bytes (4 MiB) */
#define CHUNK_BYTES (sizeof(uint32_t) << ABITS)
#define MAP_AT ((size_t)1 << 20) /* tables this large are mapped on their own */
#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#endif

/* A slot: the low 32 bits of its key (its home, and a first check) and the key's newest run
 * (NIL: empty); 8 slots a line. */
typedef struct {
    uint32_t lo, run;
} slot_t;

/* The postings of one key sit in runs of 1, 2, 4, .. 128, then 256 postings, newest run first:
 * a run is [older run, the key's count, the key's high 32 bits, then (doc, first, last) per
 * posting] in 4-byte units of the arena, oldest posting first (the count and high bits are
 * read in the newest run: a probe that matches the low bits reads the line of postings it
 * walks next anyway). A chain of c postings is ~log2(c) + 1 runs, each contiguous. */
#define HEAD 3
#define RUN_UNITS(size) (HEAD + 3 * (int64_t)(size))

static inline int64_t run_size(int64_t b) {
    return b < 8 ? (int64_t)1 << b : 256;
}

/* the index (0-based, within the key's postings) of run b's first posting */
static inline int64_t run_start(int64_t b) {
    return b < 8 ? ((int64_t)1 << b) - 1 : 255 + 256 * (b - 8);
}

/* the run holding posting j (0-based) of a key */
static inline int64_t run_of(int64_t j) {
    if (j >= 255) return 8 + (j - 255) / 256;
    return 63 - __builtin_clzll((uint64_t)j + 1);
}

typedef struct {
    slot_t *slots;
    int64_t cap, used, limit; /* grow when used would pass limit */
} part_t;

typedef struct {
    PyObject_HEAD
    part_t parts[PARTS];
    uint32_t **chunks; /* the arena: chunks of 2**ABITS units; a run never straddles two */
    int64_t nchunks, top, np; /* top: the next free unit */
} IndexObject;

#define UNIT(ix, u) (&(ix)->chunks[(u) >> ABITS][(u) & ((1u << ABITS) - 1)])

/* A mapping of `size` bytes on a 2 MiB boundary, asked to be huge pages (when the kernel's
 * transparent huge pages allow it: "madvise" or "always"): at 10^6 documents the tables and the
 * arena span GBs, and with 4 KiB pages a random probe's TLB miss (a page walk, two-dimensional
 * under a hypervisor) cost as much as the probe's line; 2 MiB pages keep the whole index in
 * reach of the TLB. Pages are faulted in on first write (zero-filled by the kernel). */
#if defined(MAP_ANONYMOUS)
static void *mapped(size_t size) {
#if defined(MADV_HUGEPAGE)
    const size_t huge = (size_t)2 << 20;
    char *m = mmap(NULL, size + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return NULL;
    char *p = (char *)(((uintptr_t)m + huge - 1) & ~(uintptr_t)(huge - 1));
    if (p > m) munmap(m, (size_t)(p - m)); /* the rest of the mapping, around the aligned part */
    if (m + size + huge > p + size) munmap(p + size, (size_t)(m + size + huge - (p + size)));
    madvise(p, size, MADV_HUGEPAGE);
    return p;
#else
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
#endif
}
static void unmapped(void *p, size_t size) {
    if (p) munmap(p, size);
}
#else
static void *mapped(size_t size) {
    return malloc(size);
}
static void unmapped(void *p, size_t size) {
    (void)size;
    free(p);
}
#endif

/* Zeroed memory, written once now: a first read of a fresh page would map the shared zero page
 * and the first write then fault again (a copy-on-write fault and, with other threads in the
 * process, a TLB shootdown), which made the rehash of a doubling ~5x slower. A large table is
 * mapped on its own (given back whole when it is replaced: no holes left in the heap). */
static void *zeroed(size_t size) {
    void *p = size >= MAP_AT ? mapped(size) : malloc(size);
    if (!p) return NULL;
#if defined(MADV_POPULATE_WRITE)
    if (size >= MAP_AT && madvise(p, size, MADV_POPULATE_WRITE) == 0) return p;
#endif
    memset(p, 0, size);
    return p;
}

static void unzeroed(void *p, size_t size) {
    if (size >= MAP_AT)
        unmapped(p, size);
    else
        free(p);
}

#define PART_BYTES(cap) (sizeof(slot_t) * (size_t)(cap))

/* part p grows (by half) past load thr[p] / 1024: 614 (0.6) .. 920 (0.9), geometric in p */
static int64_t part_thr[PARTS];

static void init_thr(void) {
    double t = 614.4;
    for (int p = 0; p < PARTS; p++, t *= 1.001585103028378) /* 1.5 ** (1 / 256) */
        part_thr[p] = (int64_t)t;
}

static void index_dealloc(IndexObject *self) {
    for (int p = 0; p < PARTS; p++) unzeroed(self->parts[p].slots, PART_BYTES(self->parts[p].cap));
    for (int64_t c = 0; c < self->nchunks; c++) unmapped(self->chunks[c], CHUNK_BYTES);
    free(self->chunks);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static inline part_t *part_of(IndexObject *self, uint64_t key) {
    return &self->parts[key >> 56];
}

/* Keys are gram hashes, splitmix outputs already: the low 32 bits give the home slot (by
 * multiply-shift, for any size), the top 8 the part. */
static inline int64_t home(const part_t *pt, uint32_t lo) {
    return (int64_t)(((uint64_t)lo * (uint64_t)pt->cap) >> 32);
}

static inline int64_t next_slot(const part_t *pt, int64_t i) {
    return i + 1 < pt->cap ? i + 1 : 0;
}

/* from slot i on: the first slot holding a key with these low bits, or the empty one ending
 * the probe; no run is read */
static inline int64_t lo_probe(const part_t *pt, uint32_t lo, int64_t i) {
    for (;; i = next_slot(pt, i)) {
        const slot_t *s = &pt->slots[i];
        if (s->run == NIL || s->lo == lo) return i;
    }
}

/* key's slot, or the empty one where it would go, from lo_probe's answer i */
static int64_t find_from(IndexObject *self, const part_t *pt, uint64_t key, int64_t i) {
    const uint32_t lo = (uint32_t)key, hi = (uint32_t)(key >> 32);
    while (pt->slots[i].run != NIL && *UNIT(self, pt->slots[i].run + 2) != hi)
        i = lo_probe(pt, lo, next_slot(pt, i));
    return i;
}

static inline int64_t find_slot(IndexObject *self, const part_t *pt, uint64_t key) {
    return find_from(self, pt, key, lo_probe(pt, (uint32_t)key, home(pt, (uint32_t)key)));
}

/* the part's table, grown by half; the keys move by their low bits alone */
static int grow_part(part_t *pt, int64_t p) {
    if (!part_thr[0]) init_thr();
    part_t to = {.cap = pt->cap ? pt->cap + pt->cap / 2 : 16};
    to.slots = zeroed(PART_BYTES(to.cap));
    if (!to.slots) return -1;
    to.limit = to.cap * part_thr[p] / 1024, to.used = pt->used;
    for (int64_t i = 0; i < pt->cap; i++) {
        if (pt->slots[i].run == NIL) continue;
        int64_t j = home(&to, pt->slots[i].lo); /* the keys differ: the first empty slot */
        while (to.slots[j].run != NIL) j = next_slot(&to, j);
        to.slots[j] = pt->slots[i];
    }
    unzeroed(pt->slots, PART_BYTES(pt->cap));
    *pt = to;
    return 0;
}

/* a new run of `size` postings of the key with high bits hi, `count` postings so far, whose
 * older run is `next`: its unit, or NIL (no memory) */
static uint32_t new_run(IndexObject *self, int64_t size, uint32_t next, int64_t count,
                        uint32_t hi) {
    const int64_t chunk = (int64_t)1 << ABITS, need = RUN_UNITS(size);
    int64_t at = self->top ? self->top : 1; /* unit 0 stays unused: NIL */
    if (at % chunk + need > chunk) at = (at / chunk + 1) * chunk; /* the rest stays unused */
    if (at + need >= (int64_t)UINT32_MAX) return NIL;
    if (at / chunk >= self->nchunks) {
        int64_t want = at / chunk + 1;
        uint32_t **ch = realloc(self->chunks, sizeof(uint32_t *) * (size_t)want);
        if (!ch) return NIL;
        self->chunks = ch;
        for (; self->nchunks < want; self->nchunks++) /* written before read: not zeroed */
            if (!(ch[self->nchunks] = mapped(CHUNK_BYTES))) return NIL;
    }
    self->top = at + need;
    uint32_t *r = UNIT(self, at);
    r[0] = next, r[1] = (uint32_t)count, r[2] = hi;
    return (uint32_t)at;
}

/* the slot where key's probe starts */
static inline void prefetch_home(IndexObject *self, uint64_t key) {
    const part_t *pt = part_of(self, key);
    if (pt->cap) __builtin_prefetch(&pt->slots[home(pt, (uint32_t)key)]);
}

/* Post grams idx[0..n) (all when idx is NULL) of document doc; -1 with an exception set. */
static int add_core(IndexObject *self, int64_t doc, const uint64_t *h, const int64_t *f,
                    const int64_t *l, const int64_t *idx, int64_t n) {
    for (int64_t t = 0; t < n; t++) {
        int64_t i = idx ? idx[t] : t;
        if (f[i] < 0 || l[i] > INT32_MAX || f[i] > l[i]) {
            PyErr_SetString(PyExc_ValueError, "token offsets out of range");
            return -1;
        }
    }
    for (int64_t t = 0; t < n && t < AHEAD; t++) prefetch_home(self, h[idx ? idx[t] : t]);
    for (int64_t t = 0; t < n; t++) {
        int64_t i = idx ? idx[t] : t;
        if (t + AHEAD < n) prefetch_home(self, h[idx ? idx[t + AHEAD] : t + AHEAD]);
        part_t *pt = part_of(self, h[i]);
        if (pt->used + 1 > pt->limit && grow_part(pt, (int64_t)(h[i] >> 56)) < 0) {
            PyErr_NoMemory();
            return -1;
        }
        slot_t *sl = &pt->slots[find_slot(self, pt, h[i])];
        uint32_t u = sl->run;
        int64_t c = u != NIL ? *UNIT(self, u + 1) : 0, b = run_of(c);
        if (c == run_start(b)) { /* the newest run is full (or there is none): a new one */
            if ((u = new_run(self, run_size(b), u, c, (uint32_t)(h[i] >> 32))) == NIL) {
                PyErr_NoMemory();
                return -1;
            }
            if (!c) pt->used++, sl->lo = (uint32_t)h[i];
            sl->run = u;
        }
        uint32_t *r = UNIT(self, u), *po = r + HEAD + 3 * (c - run_start(b));
        po[0] = (uint32_t)doc, po[1] = (uint32_t)f[i], po[2] = (uint32_t)l[i];
        r[1] = (uint32_t)(c + 1);
        self->np++;
    }
    return 0;
}

static int get_grams(bufs *bs, PyObject *h_o, PyObject *f_o, PyObject *l_o, const uint64_t **h,
                     const int64_t **f, const int64_t **l, Py_ssize_t *n) {
    Py_ssize_t nf, nl;
    *h = get(bs, h_o, 8, 0, 0, "hashes", n);
    if (!*h) return -1;
    *f = get(bs, f_o, 8, 0, 0, "first", &nf);
    if (!*f) return -1;
    *l = get(bs, l_o, 8, 0, 0, "last", &nl);
    if (!*l) return -1;
    if (nf != *n || nl != *n) {
        PyErr_SetString(PyExc_ValueError, "hashes, first and last must have one length");
        return -1;
    }
    return 0;
}

static PyObject *index_add(IndexObject *self, PyObject *args) {
    PyObject *h_o, *f_o, *l_o;
    Py_ssize_t doc, n;
    bufs bs = {.n = 0};
    if (!PyArg_ParseTuple(args, "nOOO", &doc, &h_o, &f_o, &l_o)) return NULL;
    if (doc < 0 || doc > (Py_ssize_t)UINT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "doc must be in [0, 2**32)");
        return NULL;
    }
    const uint64_t *h;
    const int64_t *f, *l;
    if (get_grams(&bs, h_o, f_o, l_o, &h, &f, &l, &n) < 0) goto fail;
    if (add_core(self, doc, h, f, l, NULL, n) < 0) goto fail;
    release(&bs);
    Py_RETURN_NONE;
fail:
    release(&bs);
    return NULL;
}

/* one posting found for query gram q (its spans copied: grouping reads no posting) */
typedef struct {
    int64_t doc, seq, q;
    int32_t first, last;
} hit_t;

static int cmp_hit(const void *a, const void *b) {
    const hit_t *x = a, *y = b;
    if (x->doc != y->doc) return x->doc < y->doc ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Stable sort of the hits by document (they arrive in seq order, so this is the (doc, seq)
 * order of cmp_hit): LSD radix, 8 bits a pass, as many passes as the largest doc needs. */
static int sort_hits(hit_t **hits, int64_t k) {
    if (k < 64) {
        qsort(*hits, (size_t)k, sizeof(hit_t), cmp_hit);
        return 0;
    }
    int64_t top = 0;
    for (int64_t i = 0; i < k; i++)
        if ((*hits)[i].doc > top) top = (*hits)[i].doc;
    hit_t *tmp = malloc(sizeof(hit_t) * (size_t)k);
    if (!tmp) return -1;
    hit_t *src = *hits, *dst = tmp;
    int64_t count[256];
    for (int shift = 0; shift < 64 && (top >> shift); shift += 8) {
        memset(count, 0, sizeof(count));
        for (int64_t i = 0; i < k; i++) count[(src[i].doc >> shift) & 0xFF]++;
        int64_t sum = 0;
        for (int b = 0; b < 256; b++) {
            int64_t c = count[b];
            count[b] = sum;
            sum += c;
        }
        for (int64_t i = 0; i < k; i++) dst[count[(src[i].doc >> shift) & 0xFF]++] = src[i];
        hit_t *t = src;
        src = dst, dst = t;
    }
    *hits = src;
    free(dst);
    return 0;
}

/* The hits (sorted by document) of the documents with >= min_seeds of them, as the bytes
 * (docs, bounds, seeds) that Index.seeds returns. */
static PyObject *grouped(const hit_t *hits, int64_t k, int64_t min_seeds, const int64_t *f,
                         const int64_t *l) {
    int64_t nd = 0, ns = 0;
    for (int64_t a = 0, b; a < k; a = b) {
        for (b = a; b < k && hits[b].doc == hits[a].doc;) b++;
        if (b - a >= min_seeds) nd++, ns += b - a;
    }
    PyObject *docs = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(8 * nd));
    PyObject *bounds = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(8 * (nd + 1)));
    PyObject *seeds = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(32 * ns));
    if (!docs || !bounds || !seeds) {
        Py_XDECREF(docs);
        Py_XDECREF(bounds);
        Py_XDECREF(seeds);
        return NULL;
    }
    int64_t *od = (int64_t *)PyBytes_AS_STRING(docs), *ob = (int64_t *)PyBytes_AS_STRING(bounds);
    int64_t *os = (int64_t *)PyBytes_AS_STRING(seeds);
    int64_t j = 0, r = 0;
    ob[0] = 0;
    for (int64_t a = 0, b; a < k; a = b) {
        for (b = a; b < k && hits[b].doc == hits[a].doc;) b++;
        if (b - a < min_seeds) continue;
        od[j] = hits[a].doc;
        for (int64_t t = a; t < b; t++, r++) {
            int64_t q = hits[t].q;
            os[4 * r] = f[q], os[4 * r + 1] = l[q];
            os[4 * r + 2] = hits[t].first, os[4 * r + 3] = hits[t].last;
        }
        ob[++j] = r;
    }
    return Py_BuildValue("(NNN)", docs, bounds, seeds);
}

/* Fill hits[0..k) from the newest runs found[0..n) (NIL: none) and return k (-1: no memory).
 * A key's runs go newest first and its postings oldest first, so each run's slice of hits is
 * known in advance; the keys are walked together, one run of each per round with the next
 * asked for, so the misses of a round overlap instead of one chain's following one another. */
static int64_t walk(IndexObject *self, const uint32_t *found, int64_t n, hit_t *hits) {
    typedef struct {
        uint32_t u;            /* the run */
        int64_t q, b, t, size; /* query gram, run number, hits index of its first, postings */
    } step_t;
    int64_t m = 0, k = 0;
    step_t *act = malloc(sizeof(step_t) * (size_t)(n + 1));
    if (!act) return -1;
    for (int64_t i = 0; i < n; i++) {
        if (found[i] == NIL) continue;
        int64_t c = *UNIT(self, found[i] + 1), b = run_of(c - 1);
        act[m++] = (step_t){found[i], i, b, k + run_start(b), c - run_start(b)};
        k += c;
    }
    while (m) {
        int64_t keep = 0;
        for (int64_t j = 0; j < m; j++) {
            step_t a = act[j];
            const uint32_t *r = UNIT(self, a.u);
            for (int64_t x = 0; x < a.size; x++) {
                const uint32_t *po = r + HEAD + 3 * x;
                hits[a.t + x] = (hit_t){po[0], a.t + x, a.q, (int32_t)po[1], (int32_t)po[2]};
            }
            if (a.b) {
                __builtin_prefetch(UNIT(self, r[0]));
                int64_t b = a.b - 1;
                act[keep++] = (step_t){r[0], a.q, b, a.t - run_size(b), run_size(b)};
            }
        }
        m = keep;
    }
    free(act);
    return k;
}

/* Whether the key whose newest run is u (c postings) has postings from more than max_df
 * documents. A document's postings of a key are consecutive (documents are added in order), so
 * its documents are counted as changes of doc, newest first, stopping past max_df: no more
 * postings are read than the ones a kept key would give as hits, plus those of max_df + 1
 * documents. */
static int over_df(IndexObject *self, uint32_t u, int64_t c, int64_t max_df) {
    int64_t df = 0, prev = -1, top = run_of(c - 1);
    for (int64_t b = top; b >= 0; b--) {
        const uint32_t *r = UNIT(self, u);
        for (int64_t x = (b == top ? c - run_start(b) : run_size(b)) - 1; x >= 0; x--) {
            int64_t doc = r[HEAD + 3 * x];
            if (doc != prev && ++df > max_df) return 1;
            prev = doc;
        }
        u = r[0];
    }
    return 0;
}

/* seeds(hashes, first, last, max_df, min_seeds[, max_seeds]) -> (docs, bounds, seeds) as
 * bytes of int64: the postings of each query gram (skipping grams posted by more than max_df
 * documents: boilerplate; a text repeating a sentence posts its grams many times, once)
 * grouped by document (ascending), in query-gram then posting order, for the documents with
 * at least min_seeds of them; seeds rows (q_first, q_last, d_first, d_last). With max_seeds
 * > 0 and more postings than that, their count (an int) instead, before any is copied: a text
 * of a few words repeated meets each of its grams' many postings once per occurrence, so its
 * seeds grow with the square of its length (and the per-pair step's work with them). */
/* Index.seeds on the query grams (h, f, l)[0..n). */
static PyObject *seeds_core(IndexObject *self, const uint64_t *h, const int64_t *f,
                            const int64_t *l, int64_t n, int64_t max_df, int64_t min_seeds,
                            int64_t max_seeds) {
    int64_t total = 0;
    uint32_t *found = malloc(sizeof(uint32_t) * (size_t)(n + 1));
    int64_t *at = malloc(sizeof(int64_t) * (size_t)(n + 1));
    if (!found || !at) {
        free(found);
        free(at);
        PyErr_NoMemory();
        return NULL;
    }
    /* the tables are larger than the caches: the slots AHEAD grams on are asked for, then the
     * runs whose low bits matched, all before any is read */
    for (int64_t i = 0; i < n && i < AHEAD; i++) prefetch_home(self, h[i]);
    for (int64_t i = 0; i < n; i++) {
        if (i + AHEAD < n) prefetch_home(self, h[i + AHEAD]);
        const part_t *pt = part_of(self, h[i]);
        int64_t j = pt->cap ? lo_probe(pt, (uint32_t)h[i], home(pt, (uint32_t)h[i])) : -1;
        at[i] = j >= 0 && pt->slots[j].run != NIL ? j : -1;
        if (at[i] >= 0) __builtin_prefetch(UNIT(self, pt->slots[j].run));
    }
    for (int64_t i = 0; i < n; i++) {
        const part_t *pt = part_of(self, h[i]);
        uint32_t u = at[i] >= 0 ? pt->slots[find_from(self, pt, h[i], at[i])].run : NIL;
        int64_t c = u != NIL ? *UNIT(self, u + 1) : 0;
        found[i] = c && (c <= max_df || !over_df(self, u, c, max_df)) ? u : NIL;
        if (found[i] != NIL) total += c;
    }
    free(at);
    if (max_seeds > 0 && total > max_seeds) {
        free(found);
        return PyLong_FromLongLong((long long)total);
    }
    hit_t *hits = malloc(sizeof(hit_t) * (size_t)(total + 1));
    if (!hits) {
        free(found);
        PyErr_NoMemory();
        return NULL;
    }
    int64_t k = walk(self, found, n, hits);
    free(found);
    if (k < 0 || sort_hits(&hits, k) < 0) {
        free(hits);
        PyErr_NoMemory();
        return NULL;
    }
    PyObject *out = grouped(hits, k, min_seeds, f, l);
    free(hits);
    return out;
}

static PyObject *index_seeds(IndexObject *self, PyObject *args) {
    PyObject *h_o, *f_o, *l_o;
    Py_ssize_t max_df, min_seeds, n, max_seeds = 0;
    bufs bs = {.n = 0};
    if (!PyArg_ParseTuple(args, "OOOnn|n", &h_o, &f_o, &l_o, &max_df, &min_seeds, &max_seeds))
        return NULL;
    const uint64_t *h;
    const int64_t *f, *l;
    if (get_grams(&bs, h_o, f_o, l_o, &h, &f, &l, &n) < 0) goto fail;
    PyObject *out = seeds_core(self, h, f, l, n, max_df, min_seeds, max_seeds);
    release(&bs);
    return out;
fail:
    release(&bs);
    return NULL;
}

/* The packed document's coarse grams (a bytes object from prepare), or NULL + TypeError. */
static int packed_doc(PyObject *o, doc_t *d) {
    if (!PyBytes_Check(o) || PyBytes_GET_SIZE(o) % 8 ||
        unpack((const int64_t *)PyBytes_AS_STRING(o), PyBytes_GET_SIZE(o) / 8, d) < 0) {
        PyErr_SetString(PyExc_TypeError, "expected a packed document (bytes from prepare)");
        return -1;
    }
    return 0;
}

/* seeds_packed(packed, max_df, min_seeds, window[, max_seeds]): Index.seeds on the coarse grams of a packed
 * document that winnowing with `window` keeps (at most add_packed's window: a window of grams
 * shared with a posted document has its minimum kept on both sides, so no other gram needs a
 * probe; window 2: 1.5x fewer random probes than every gram, window 4: 2.5x). */
static PyObject *index_seeds_packed(IndexObject *self, PyObject *args) {
    PyObject *o;
    Py_ssize_t max_df, min_seeds, window, max_seeds = 0;
    doc_t d;
    if (!PyArg_ParseTuple(args, "Onnn|n", &o, &max_df, &min_seeds, &window, &max_seeds) ||
        packed_doc(o, &d) < 0)
        return NULL;
    /* one block: the kept indices, then the kept grams' hash, first and last */
    int64_t *keep = malloc(sizeof(int64_t) * (size_t)(4 * d.nc + 4));
    if (!keep) return PyErr_NoMemory();
    int64_t m = winnow_core(d.chash, d.nc, window, keep);
    uint64_t *h = (uint64_t *)(keep + d.nc + 1);
    int64_t *f = keep + 2 * d.nc + 2, *l = keep + 3 * d.nc + 3;
    for (int64_t i = 0; i < m; i++) {
        h[i] = d.chash[keep[i]];
        f[i] = d.cfirst[keep[i]];
        l[i] = d.clast[keep[i]];
    }
    PyObject *out = seeds_core(self, h, f, l, m, max_df, min_seeds, max_seeds);
    free(keep);
    return out;
}

/* add_packed(doc, packed, window): post the winnowed coarse grams of a packed document. */
static PyObject *index_add_packed(IndexObject *self, PyObject *args) {
    PyObject *o;
    Py_ssize_t doc, window;
    doc_t d;
    if (!PyArg_ParseTuple(args, "nOn", &doc, &o, &window) || packed_doc(o, &d) < 0) return NULL;
    if (doc < 0 || doc > (Py_ssize_t)UINT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "doc must be in [0, 2**32)");
        return NULL;
    }
    int64_t *keep = malloc(sizeof(int64_t) * (size_t)(d.nc + 1));
    if (!keep) return PyErr_NoMemory();
    int64_t m = winnow_core(d.chash, d.nc, window, keep);
    int rc = add_core(self, doc, d.chash, d.cfirst, d.clast, keep, m);
    free(keep);
    if (rc < 0) return NULL;
    Py_RETURN_NONE;
}


/* arrays() -> (hashes, postings) as bytes: uint64 sorted, int64 rows (doc, first, last);
 * postings of one hash in insertion order. */
static PyObject *index_arrays(IndexObject *self, PyObject *unused) {
    int64_t used = 0, m = 0;
    for (int p = 0; p < PARTS; p++) used += self->parts[p].used;
    nd_keyed *live = malloc(sizeof(nd_keyed) * (size_t)(used + 1));
    if (!live) return PyErr_NoMemory();
    for (int p = 0; p < PARTS; p++)
        for (int64_t i = 0; i < self->parts[p].cap; i++) {
            slot_t s = self->parts[p].slots[i];
            if (s.run != NIL)
                live[m++] = (nd_keyed){(uint64_t)*UNIT(self, s.run + 2) << 32 | s.lo, s.run};
        }
    qsort(live, (size_t)m, sizeof(nd_keyed), nd_cmp_keyed);
    PyObject *hs = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(8 * self->np));
    PyObject *ps = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(24 * self->np));
    if (!hs || !ps) {
        free(live);
        Py_XDECREF(hs);
        Py_XDECREF(ps);
        return NULL;
    }
    uint64_t *oh = (uint64_t *)PyBytes_AS_STRING(hs);
    int64_t *op = (int64_t *)PyBytes_AS_STRING(ps), r = 0;
    for (int64_t i = 0; i < m; i++) {
        uint32_t u = live[i].val;
        int64_t c = *UNIT(self, u + 1);
        for (int64_t b = run_of(c - 1); b >= 0; b--) { /* newest run first */
            const uint32_t *run = UNIT(self, u);
            for (int64_t x = 0, t = r + run_start(b); x < run_size(b) && t < r + c; x++, t++) {
                oh[t] = live[i].key;
                op[3 * t] = run[HEAD + 3 * x], op[3 * t + 1] = (int32_t)run[HEAD + 1 + 3 * x];
                op[3 * t + 2] = (int32_t)run[HEAD + 2 + 3 * x];
            }
            u = run[0];
        }
        r += c;
    }
    free(live);
    return Py_BuildValue("(NN)", hs, ps);
}

static PyObject *index_len(IndexObject *self, PyObject *unused) {
    return PyLong_FromLongLong(self->np);
}

static PyMethodDef index_methods[] = {
    {"add", (PyCFunction)index_add, METH_VARARGS, "add(doc, hashes, first, last)"},
    {"seeds", (PyCFunction)index_seeds, METH_VARARGS,
     "seeds(hashes, first, last, max_df, min_seeds[, max_seeds]) -> (docs, bounds, seeds) "
     "bytes, or the postings' count when over max_seeds > 0"},
    {"seeds_packed", (PyCFunction)index_seeds_packed, METH_VARARGS,
     "seeds_packed(packed, max_df, min_seeds, window[, max_seeds]) -> (docs, bounds, seeds) "
     "bytes, or the postings' count when over max_seeds > 0"},
    {"add_packed", (PyCFunction)index_add_packed, METH_VARARGS,
     "add_packed(doc, packed, window): post the winnowed coarse grams"},
    {"arrays", (PyCFunction)index_arrays, METH_NOARGS, "arrays() -> (hashes, postings) bytes"},
    {"postings", (PyCFunction)index_len, METH_NOARGS, "postings() -> count"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject IndexType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "neardup._overlap.Index",
    .tp_basicsize = sizeof(IndexObject),
    .tp_dealloc = (destructor)index_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Gram hash -> postings (see overlap.c).",
    .tp_methods = index_methods,
    .tp_new = PyType_GenericNew,
};

static PyMethodDef methods[] = {
    {"prepare", py_prepare, METH_VARARGS,
     "prepare(text, cls, fold, word_units, cjk_units, coarse, fine) -> packed bytes, or the "
     "code point (int) whose fold is missing"},
    {"winnow", py_winnow, METH_VARARGS, "winnow(hashes, window, out) -> count"},
    {"pairs", py_pairs, METH_VARARGS,
     "pairs(query, sources, seeds, bounds, near, gap, min_units, reach, fanout) -> passages"},
    {"pairs_many", py_pairs_many, METH_VARARGS,
     "pairs_many(jobs, near, gap, min_units, reach, fanout) -> [pairs(*job, ...) for job in "
     "jobs] (computed without the GIL)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_overlap", "Kernels of neardup.overlap (see overlap.c).", -1, methods,
    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__overlap(void) {
    if (PyType_Ready(&IndexType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&IndexType);
    if (PyModule_AddObject(m, "Index", (PyObject *)&IndexType) < 0) {
        Py_DECREF(&IndexType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
