/* Tokens, grams and packed documents of neardup.overlap (tokens.py's references); plain C. */
#include <stdint.h>
#include <string.h>

#include "overlap_kernels.h"

#define P_MUL 0x100000001B3ULL
#define UNKNOWN_FOLD 0xFFFFFFFFu

static uint64_t splitmix(uint64_t x) {
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

/* code point i of a str's data (PyUnicode_READ: kind 1, 2 or 4 bytes a code point) */
static inline uint32_t cp_at(int kind, const void *data, int64_t i) {
    if (kind == 1) return ((const uint8_t *)data)[i];
    if (kind == 2) return ((const uint16_t *)data)[i];
    return ((const uint32_t *)data)[i];
}

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
        uint32_t c = cp_at(kind, data, i);
        uint8_t k = c < 0x110000 ? cls[c] : 0;
        if (k == 0) {
            i++;
            continue;
        }
        int64_t s = i, e = i + 1;
        if (k == 1) {
            while (e < len) {
                uint32_t c2 = cp_at(kind, data, e);
                if (c2 >= 0x110000 || cls[c2] != 1) break;
                e++;
            }
        }
        uint64_t h = 0;
        for (int64_t j = s; j < e; j++) {
            uint32_t cj = cp_at(kind, data, j);
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

/* The scratch's arrays: starts, ends, units (len + 1), hashes, 2 x (first, last, hashes), gram
 * units (len + 1) */
int64_t ov_prepare(int kind, const void *data, int64_t len, const uint8_t *cls,
                   const uint32_t *fold, int64_t word_units, int64_t cjk_units, int64_t coarse,
                   int64_t fine, int64_t *mem, int64_t counts[3]) {
    int64_t *st = mem, *en = st + len, *un = en + len, *th = un + len + 1;
    int64_t *cf = th + len, *cl = cf + len, *ch = cl + len;
    int64_t *ff = ch + len, *fl = ff + len, *fh = fl + len;
    int64_t n, nc = 0, nf = 0;
    n = tokenize_cps(kind, data, len, cls, fold, word_units, cjk_units, st, en, un,
                     (uint64_t *)th);
    if (n >= 0) {
        /* grams are sized in gram units (tokens.gram_units): a token's units + 1 */
        int64_t *gu = fh + len;
        for (int64_t i = 0; i <= n; i++) gu[i] = un[i] + i;
        nc = grams(n, gu, (uint64_t *)th, coarse, cf, cl, (uint64_t *)ch);
        nf = grams(n, gu, (uint64_t *)th, fine, ff, fl, (uint64_t *)fh);
    }
    counts[0] = n, counts[1] = nc, counts[2] = nf;
    return n;
}

int64_t ov_packed_items(const int64_t counts[3]) {
    return 3 + 4 * counts[0] + 1 + 3 * counts[1] + 3 * counts[2];
}

void ov_pack(const int64_t *mem, int64_t len, const int64_t counts[3], int64_t *o) {
    int64_t n = counts[0], nc = counts[1], nf = counts[2];
    o[0] = n, o[1] = nc, o[2] = nf;
    o += 3;
    const int64_t starts[] = {0, len, 2 * len, 3 * len + 1, 4 * len + 1, 5 * len + 1,
                              6 * len + 1, 7 * len + 1, 8 * len + 1, 9 * len + 1};
    const int64_t sizes[] = {n, n, n + 1, n, nc, nc, nc, nf, nf, nf};
    for (int i = 0; i < 10; i++) {
        memcpy(o, mem + starts[i], sizeof(int64_t) * (size_t)sizes[i]);
        o += sizes[i];
    }
}

int64_t ov_winnow(const uint64_t *h, int64_t n, int64_t window, int64_t *out) {
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

int ov_unpack(const int64_t *p, int64_t len, doc_t *d) {
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

int64_t ov_template_keys(int kind, const void *data, int64_t len, const int64_t *starts,
                         const int64_t *ends, const uint64_t *th, int64_t n, int64_t ngram,
                         uint64_t mask, uint64_t sample, int64_t offset, uint8_t *digit,
                         uint64_t *masked, int64_t *first, int64_t *last, uint64_t *gh) {
    for (int64_t t = 0; t < n; t++) {
        if (starts[t] < 0 || ends[t] > len || starts[t] >= ends[t]) return -1;
        uint8_t d = 0;
        for (int64_t i = starts[t]; i < ends[t] && !d; i++) {
            uint32_t c = cp_at(kind, data, i);
            d = (c - 0x30u < 10u) || (c - 0xFF10u < 10u); /* ASCII, full-width */
        }
        digit[t] = d;
        masked[t] = d ? mask : th[t];
    }
    int64_t m = 0;
    for (int64_t i = 0; i + ngram <= n; i++) {
        uint64_t raw = 0, pw = 1;
        for (int64_t t = i; t < i + ngram; t++) {
            raw += masked[t] * pw;
            pw *= P_MUL;
        }
        uint64_t h = splitmix(raw + (uint64_t)ngram);
        if (h % sample) continue;
        first[m] = offset + i, last[m] = offset + i + ngram, gh[m] = h;
        m++;
    }
    return m;
}
