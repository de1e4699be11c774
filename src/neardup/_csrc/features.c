/* Text kernels: UTF-8 bytes -> tokens -> feature keys -> SimHash bit words.
 * A line-by-line port of the numba kernels (neardup/_numba/features.py), which define the
 * fingerprint contract together with features/kernels.py's docstring; tests compare the two. */
#include <stdlib.h>

#include "kernels.h"
#include "xxh3.h"

#define SPACE 32
#define LOW_BITS 0x0101010101010101ULL

static inline int64_t decode(const uint8_t *buf, int64_t i, int64_t hi, int64_t *len) {
    int64_t b0 = buf[i];
    if (b0 < 0x80) {
        *len = 1;
        return b0;
    }
    if (b0 >= 0xF0 && i + 3 < hi) {
        *len = 4;
        return ((b0 & 7) << 18) | (((int64_t)buf[i + 1] & 63) << 12) |
               (((int64_t)buf[i + 2] & 63) << 6) | ((int64_t)buf[i + 3] & 63);
    }
    if (b0 >= 0xE0 && i + 2 < hi) {
        *len = 3;
        return ((b0 & 15) << 12) | (((int64_t)buf[i + 1] & 63) << 6) | ((int64_t)buf[i + 2] & 63);
    }
    if (b0 >= 0xC0 && i + 1 < hi) {
        *len = 2;
        return ((b0 & 31) << 6) | ((int64_t)buf[i + 1] & 63);
    }
    *len = 1;
    return 0xFFFD;
}

static inline int class_of(const uint8_t *cls, int64_t cp) { return cp < 0x110000 ? cls[cp] : 0; }

/* Whether every ASCII byte is a separator (0) or a word character (1): then runs of ASCII
 * go through the branch-free loop below. */
static int ascii_binary(const uint8_t *cls) {
    for (int b = 0; b < 128; b++)
        if (cls[b] > 1) return 0;
    return 1;
}

/* Token spans over a run of ASCII bytes starting in state cur (0 or 1), without a branch per
 * token boundary (the mispredicted exits of a scan loop cost ~2/3 of the time on English
 * text): starts[n] and ends[n] are rewritten at every byte (the last writes before n grows at
 * a word -> separator step are the token's). Stops at the first non-ASCII byte or hi; returns the state. */
static inline int ascii_spans(const uint8_t *buf, int64_t *ip, int64_t hi, const uint8_t *cls,
                              int cur, int64_t *starts, int64_t *ends, int64_t *np) {
    int64_t i = *ip, n = *np, start = cur ? starts[n] : i; /* in a register: no reload */
    for (; i < hi && buf[i] < 128; i++) {
        int c = cls[buf[i]];
        start = cur ? start : i;
        starts[n] = start;
        ends[n] = i;
        n += cur & (c ^ 1);
        cur = c;
    }
    *ip = i;
    *np = n;
    return cur;
}

int64_t nd_token_spans(const uint8_t *buf, int64_t lo, int64_t hi, const uint8_t *cls,
                       int han_single, int64_t *starts, int64_t *ends) {
    int64_t n = 0, i = lo, ln;
    int cur = 0, binary = ascii_binary(cls);
    while (i < hi) {
        if (binary && (cur == 1 || cur == 0)) {
            cur = ascii_spans(buf, &i, hi, cls, cur, starts, ends, &n);
            if (i == hi) break;
        } else if (cur == 1 || cur == 0) {
            while (i < hi && buf[i] < 128 && cls[buf[i]] == cur) i++;
            if (i == hi) break;
        }
        int64_t cp = decode(buf, i, hi, &ln);
        int c = class_of(cls, cp);
        int single = c == 3 || (c == 2 && han_single);
        if (single || c != cur) {
            if (cur != 0) ends[n++] = i;
            if (c == 0) {
                cur = 0;
            } else if (single) {
                starts[n] = i;
                ends[n] = i + ln;
                n++;
                cur = 0;
            } else {
                starts[n] = i;
                cur = c;
            }
        }
        i += ln;
    }
    if (cur != 0) ends[n++] = hi;
    return n;
}

int nd_is_cjk(const uint8_t *buf, int64_t lo, int64_t hi, const uint8_t *cls) {
    int64_t cjk = 0, word = 0, i = lo, ln;
    while (i < hi) {
        if (buf[i] < 128) {
            word += cls[buf[i]] != 0;
            i++;
            continue;
        }
        int64_t cp = decode(buf, i, hi, &ln);
        int c = class_of(cls, cp);
        if (c != 0) {
            word++;
            if (c >= 2 || (0xAC00 <= cp && cp <= 0xD7A3)) cjk++;
        }
        i += ln;
    }
    return cjk > 0 && 3 * cjk >= word;
}

void nd_char_stream(const uint8_t *buf, int64_t lo, int64_t hi, const uint8_t *cls, uint8_t *out,
                    int64_t *cp_starts, int joined, int64_t *nb_out, int64_t *ncp_out) {
    int64_t nb = 0, ncp = 0, i = lo, ln;
    int pending_space = 0;
    while (i < hi) {
        int64_t cp = decode(buf, i, hi, &ln);
        if (class_of(cls, cp) == 0) {
            pending_space = ncp > 0 && !joined;
        } else {
            if (pending_space) {
                cp_starts[ncp++] = nb;
                out[nb++] = SPACE;
                pending_space = 0;
            }
            cp_starts[ncp++] = nb;
            for (int64_t k = 0; k < ln; k++) out[nb + k] = buf[i + k];
            nb += ln;
        }
        i += ln;
    }
    cp_starts[ncp] = nb;
    *nb_out = nb;
    *ncp_out = ncp;
}

static inline int is_member(const uint64_t *keys, int64_t size, uint64_t key) {
    int64_t lo = 0, hi = size; /* searchsorted, left */
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (keys[mid] < key) lo = mid + 1;
        else hi = mid;
    }
    return lo < size && keys[lo] == key;
}

int64_t nd_feature_keys(const uint8_t *buf, int64_t lo, int64_t hi, const uint8_t *cls, int mode,
                        int64_t n, int han_single, const uint64_t *stop_keys, int64_t nstop,
                        uint8_t *scratch, int64_t *starts, int64_t *ends, uint64_t *keys,
                        int64_t n_cjk) {
    int joined = 0;
    if (mode == ND_AUTO_MODE) {
        if (nd_is_cjk(buf, lo, hi, cls)) {
            mode = ND_CHAR_MODE;
            n = n_cjk;
            joined = 1;
        } else {
            mode = ND_SHINGLE_MODE;
        }
    }
    if (mode == ND_CHAR_MODE) {
        int64_t nb, ncp;
        nd_char_stream(buf, lo, hi, cls, scratch, starts, joined, &nb, &ncp);
        if (ncp == 0) return 0;
        if (ncp <= n) {
            keys[0] = nd_xxh3_64(scratch, (size_t)nb, 0);
            return 1;
        }
        for (int64_t k = 0; k < ncp - n + 1; k++)
            keys[k] = nd_xxh3_64(scratch + starts[k], (size_t)(starts[k + n] - starts[k]), 0);
        return ncp - n + 1;
    }
    int64_t ntok = nd_token_spans(buf, lo, hi, cls, han_single, starts, ends);
    int64_t kept = ntok;
    /* unigram keys: words, stop-word filtering, and 1-shingles (which return them as is) */
    if (mode == ND_WORD_MODE || nstop > 0 || n == 1) {
        kept = 0;
        for (int64_t t = 0; t < ntok; t++) {
            uint64_t key = nd_xxh3_64(buf + starts[t], (size_t)(ends[t] - starts[t]), 0);
            if (!is_member(stop_keys, nstop, key)) {
                starts[kept] = starts[t];
                ends[kept] = ends[t];
                keys[kept] = key;
                kept++;
            }
        }
    }
    if (mode == ND_WORD_MODE || kept == 0 || (n == 1 && mode == ND_SHINGLE_MODE)) return kept;
    int64_t width = n < kept ? n : kept;
    for (int64_t k = 0; k < kept - width + 1; k++) {
        int64_t nb = 0;
        for (int64_t t = k; t < k + width; t++) {
            if (t > k) scratch[nb++] = SPACE;
            for (int64_t p = starts[t]; p < ends[t]; p++) scratch[nb++] = buf[p];
        }
        keys[k] = nd_xxh3_64(scratch, (size_t)nb, 0);
    }
    return kept - width + 1;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

typedef struct {
    double w;
    int64_t i;
} weighted;

static int cmp_heavier(const void *a, const void *b) { /* weight desc, then index asc: stable */
    const weighted *x = a, *y = b;
    if (x->w != y->w) return x->w > y->w ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

static int cmp_index(const void *a, const void *b) {
    const weighted *x = a, *y = b;
    return (x->i > y->i) - (x->i < y->i);
}

/* Distinct keys of keys[:m] (sorted) with their weights into uk/w; returns how many. */
int64_t nd_weigh(const uint64_t *keys, int64_t m, int weighting, int64_t top_n,
                 const uint64_t *idf_keys, const double *idf_vals, int64_t nidf, double idf_default,
                 uint64_t *uk, double *w) {
    uint64_t *ks = malloc(sizeof(uint64_t) * (size_t)(m > 0 ? m : 1));
    weighted *order = NULL;
    if (!ks) return -1;
    memcpy(ks, keys, sizeof(uint64_t) * (size_t)m);
    qsort(ks, (size_t)m, sizeof(uint64_t), cmp_u64);
    int64_t u = 0;
    for (int64_t i = 0; i < m; i++) {
        if (u > 0 && ks[i] == uk[u - 1]) {
            w[u - 1] += 1.0;
        } else {
            uk[u] = ks[i];
            w[u++] = 1.0;
        }
    }
    free(ks);
    if (weighting == ND_W_NONE) {
        for (int64_t i = 0; i < u; i++) w[i] = 1.0;
    } else if (weighting == ND_W_TFIDF) {
        for (int64_t i = 0; i < u; i++) {
            int64_t lo = 0, hi = nidf;
            while (lo < hi) {
                int64_t mid = lo + (hi - lo) / 2;
                if (idf_keys[mid] < uk[i]) lo = mid + 1;
                else hi = mid;
            }
            w[i] *= (lo < nidf && idf_keys[lo] == uk[i]) ? idf_vals[lo] : idf_default;
        }
    }
    if (0 < top_n && top_n < u) {
        order = malloc(sizeof(weighted) * (size_t)u);
        if (!order) return -1;
        for (int64_t i = 0; i < u; i++) {
            order[i].w = w[i];
            order[i].i = i;
        }
        qsort(order, (size_t)u, sizeof(weighted), cmp_heavier);
        qsort(order, (size_t)top_n, sizeof(weighted), cmp_index);
        for (int64_t i = 0; i < top_n; i++) { /* order[i].i >= i: in-place select is safe */
            uk[i] = uk[order[i].i];
            w[i] = w[order[i].i];
        }
        u = top_n;
        free(order);
    }
    return u;
}

void nd_simhash_words(const uint64_t *keys, const double *weights, int64_t m, int unit,
                      uint64_t seed, int64_t words, uint64_t *out) {
    for (int64_t j = 0; j < words; j++) {
        uint64_t r = 0;
        if (unit) { /* SWAR byte counters: 8 adds per feature instead of 64 */
            int64_t cnt[64] = {0};
            uint64_t lanes[8] = {0};
            int64_t pending = 0;
            for (int64_t i = 0; i < m; i++) {
                uint64_t h = nd_bit_word(keys[i], seed, j);
                for (int b = 0; b < 8; b++) lanes[b] += (h >> b) & LOW_BITS;
                pending++;
                if (pending == 255 || i == m - 1) {
                    for (int b = 0; b < 8; b++) {
                        uint64_t v = lanes[b];
                        for (int k = 0; k < 8; k++) cnt[8 * k + b] += (int64_t)((v >> (8 * k)) & 0xFF);
                        lanes[b] = 0;
                    }
                    pending = 0;
                }
            }
            for (int b = 0; b < 64; b++)
                if (2 * cnt[b] > m) r |= 1ULL << b;
        } else { /* same summation order as the numba kernel: bit-identical sums */
            double acc[64] = {0};
            double total = 0.0;
            for (int64_t i = 0; i < m; i++) {
                uint64_t h = nd_bit_word(keys[i], seed, j);
                double wt = weights[i];
                total += wt;
                for (int b = 0; b < 64; b++) acc[b] += wt * (double)((h >> b) & 1);
            }
            for (int b = 0; b < 64; b++)
                if (2.0 * acc[b] > total) r |= 1ULL << b;
        }
        out[j] = r;
    }
}

static int64_t distinct_in_place(uint64_t *keys, int64_t m, uint64_t *set_keys, int64_t *set_stamp,
                                 int64_t stamp) {
    int64_t cap = 16;
    while (cap < 2 * m) cap *= 2;
    uint64_t mask = (uint64_t)(cap - 1);
    int64_t u = 0;
    for (int64_t i = 0; i < m; i++) {
        uint64_t k = keys[i];
        int64_t slot = (int64_t)(k & mask);
        while (set_stamp[slot] == stamp && set_keys[slot] != k) slot = (slot + 1) & (cap - 1);
        if (set_stamp[slot] != stamp) {
            set_stamp[slot] = stamp;
            set_keys[slot] = k;
            keys[u++] = k;
        }
    }
    return u;
}

int nd_fingerprint_batch(const uint8_t *buf, const int64_t *offsets, int64_t ndoc,
                         const uint8_t *cls, int mode, int64_t n, int han_single,
                         const uint64_t *stop_keys, int64_t nstop, int weighting, int64_t top_n,
                         const uint64_t *idf_keys, const double *idf_vals, int64_t nidf,
                         double idf_default, uint64_t seed, uint64_t *out, int64_t words,
                         uint8_t *empty, int64_t n_cjk) {
    int64_t longest = 1;
    for (int64_t d = 0; d < ndoc; d++)
        if (offsets[d + 1] - offsets[d] > longest) longest = offsets[d + 1] - offsets[d];
    int64_t set_size = 16;
    while (set_size < 2 * (longest + 2)) set_size *= 2;
    uint8_t *scratch = malloc((size_t)(longest * 2 + 8));
    int64_t *starts = malloc(sizeof(int64_t) * (size_t)(longest + 2));
    int64_t *ends = malloc(sizeof(int64_t) * (size_t)(longest + 2));
    uint64_t *keys = malloc(sizeof(uint64_t) * (size_t)(longest + 2));
    uint64_t *uk = malloc(sizeof(uint64_t) * (size_t)(longest + 2));
    double *w = malloc(sizeof(double) * (size_t)(longest + 2));
    uint64_t *set_keys = malloc(sizeof(uint64_t) * (size_t)set_size);
    int64_t *set_stamp = calloc((size_t)set_size, sizeof(int64_t));
    int rc = -1;
    if (!scratch || !starts || !ends || !keys || !uk || !w || !set_keys || !set_stamp) goto done;
    int linear = weighting == ND_W_TF && top_n == 0;
    int binary = weighting == ND_W_NONE && top_n == 0;
    for (int64_t d = 0; d < ndoc; d++) {
        uint64_t *row = out + d * words;
        int64_t m = nd_feature_keys(buf, offsets[d], offsets[d + 1], cls, mode, n, han_single,
                                    stop_keys, nstop, scratch, starts, ends, keys, n_cjk);
        if (m == 0) {
            empty[d] = 1;
            for (int64_t j = 0; j < words; j++) row[j] = 0;
            continue;
        }
        if (linear) {
            nd_simhash_words(keys, NULL, m, 1, seed, words, row);
        } else if (binary) {
            int64_t u = distinct_in_place(keys, m, set_keys, set_stamp, d + 1);
            nd_simhash_words(keys, NULL, u, 1, seed, words, row);
        } else {
            int64_t u = nd_weigh(keys, m, weighting, top_n, idf_keys, idf_vals, nidf, idf_default,
                                 uk, w);
            if (u < 0) goto done;
            nd_simhash_words(uk, w, u, 0, seed, words, row);
        }
    }
    rc = 0;
done:
    free(scratch);
    free(starts);
    free(ends);
    free(keys);
    free(uk);
    free(w);
    free(set_keys);
    free(set_stamp);
    return rc;
}

/* Length of the whitespace character at buf[i] (Python's str.isspace set), or 0. */
static inline int64_t space_len(const uint8_t *buf, int64_t i, int64_t hi) {
    uint8_t b = buf[i];
    if (b == ' ' || (b >= 0x09 && b <= 0x0D) || (b >= 0x1C && b <= 0x1F)) return 1;
    if (b < 0xC2) return 0;
    if (b == 0xC2 && i + 1 < hi) return (buf[i + 1] == 0x85 || buf[i + 1] == 0xA0) ? 2 : 0;
    if (i + 2 >= hi) return 0;
    uint8_t c = buf[i + 1], d = buf[i + 2];
    if (b == 0xE1) return (c == 0x9A && d == 0x80) ? 3 : 0;
    if (b == 0xE2 && c == 0x80)
        return (d <= 0x8A || d == 0xA8 || d == 0xA9 || d == 0xAF) && d >= 0x80 ? 3 : 0;
    if (b == 0xE2 && c == 0x81) return d == 0x9F ? 3 : 0;
    if (b == 0xE3) return (c == 0x80 && d == 0x80) ? 3 : 0;
    return 0;
}

/* " ".join(text.split()) of each document, on UTF-8 bytes: whitespace runs become one space,
 * ends trimmed. out holds at most len(buf) bytes; out_off gets ndoc + 1 offsets. */
void nd_collapse_spaces(const uint8_t *buf, const int64_t *offsets, int64_t ndoc, uint8_t *out,
                        int64_t *out_off) {
    int64_t nb = 0;
    out_off[0] = 0;
    for (int64_t d = 0; d < ndoc; d++) {
        int64_t i = offsets[d], hi = offsets[d + 1], start = nb;
        int pending = 0;
        while (i < hi) {
            int64_t s = space_len(buf, i, hi);
            if (s) {
                pending = nb > start;
                i += s;
                continue;
            }
            if (pending) {
                out[nb++] = ' ';
                pending = 0;
            }
            out[nb++] = buf[i++];
        }
        out_off[d + 1] = nb;
    }
}
