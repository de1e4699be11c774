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

/* Word-byte and high-bit masks of 64 bytes: bit j of *word is set when p[j] is ASCII and a
 * word character (class 1), bit j of *high when p[j] >= 0x80. tbl[lo] holds bit hi set when
 * byte (hi << 4) | lo is a word character (hi < 8): the AVX2 version looks both nibbles up
 * with pshufb, 32 bytes at a time. */
typedef void (*mask_fn)(const uint8_t *p, const uint8_t *tbl, const uint8_t *cls, uint64_t *word,
                        uint64_t *high);

static void mask64_scalar(const uint8_t *p, const uint8_t *tbl, const uint8_t *cls,
                          uint64_t *word, uint64_t *high) {
    (void)tbl;
    uint64_t w = 0, h = 0;
    for (int j = 0; j < 64; j++) {
        uint8_t b = p[j];
        h |= (uint64_t)(b >> 7) << j;
        w |= (uint64_t)(b < 128 && cls[b] == 1) << j;
    }
    *word = w;
    *high = h;
}

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define ND_HAVE_AVX2_MASK 1
__attribute__((target("avx2"))) static void mask64_avx2(const uint8_t *p, const uint8_t *tbl,
                                                        const uint8_t *cls, uint64_t *word,
                                                        uint64_t *high) {
    (void)cls;
    const __m256i t = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)tbl));
    const __m256i bits = _mm256_setr_epi8(1, 2, 4, 8, 16, 32, 64, -128, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2,
                                          4, 8, 16, 32, 64, -128, 0, 0, 0, 0, 0, 0, 0, 0);
    const __m256i nib = _mm256_set1_epi8(0x0F);
    uint64_t w = 0, h = 0;
    for (int k = 0; k < 2; k++) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(p + 32 * k));
        __m256i a = _mm256_shuffle_epi8(t, _mm256_and_si256(v, nib));
        __m256i b = _mm256_shuffle_epi8(bits, _mm256_and_si256(_mm256_srli_epi16(v, 4), nib));
        __m256i zero = _mm256_cmpeq_epi8(_mm256_and_si256(a, b), _mm256_setzero_si256());
        w |= (uint64_t)(uint32_t)~_mm256_movemask_epi8(zero) << (32 * k);
        h |= (uint64_t)(uint32_t)_mm256_movemask_epi8(v) << (32 * k);
    }
    *word = w;
    *high = h;
}
#endif

typedef struct {
    mask_fn fn;
    uint8_t tbl[16];
} masker;

/* Whether the AVX2 versions may run: the CPU has AVX2 and NEARDUP_NO_SIMD is unset (the
 * tests run the scalar versions through it; read once, every thread reads the same value). */
static int use_avx2(void) {
#ifdef ND_HAVE_AVX2_MASK
    static volatile int ok = -1;
    if (ok < 0) ok = __builtin_cpu_supports("avx2") && getenv("NEARDUP_NO_SIMD") == NULL;
    return ok;
#else
    return 0;
#endif
}

static void masker_init(masker *mk, const uint8_t *cls) {
    memset(mk->tbl, 0, sizeof(mk->tbl));
    for (int b = 0; b < 128; b++)
        if (cls[b] == 1) mk->tbl[b & 15] |= (uint8_t)(1u << (b >> 4));
    mk->fn = mask64_scalar;
#ifdef ND_HAVE_AVX2_MASK
    if (use_avx2()) mk->fn = mask64_avx2;
#endif
}

/* Token spans over a run of ASCII bytes starting in state cur (0 or 1), 64 bytes at a time:
 * with the block's word mask W, tokens start where W has a 1 after a 0 and end where it has
 * a 0 after a 1 (the mispredicted exits of a byte-by-byte scan cost most of the time on
 * English text). A token still open at the end keeps its start in starts[n], as the
 * byte loop did. Stops at the first non-ASCII byte or hi; returns the state. */
static inline int ascii_spans(const uint8_t *buf, int64_t *ip, int64_t hi, const uint8_t *cls,
                              const masker *mk, int cur, int64_t *starts, int64_t *ends,
                              int64_t *np) {
    int64_t i = *ip, n = *np, ns = n + cur;
    uint8_t tmp[64];
    while (i < hi) {
        const uint8_t *p = buf + i;
        int64_t len = hi - i;
        if (len < 64) { /* padded with non-ASCII bytes: the run stops at hi */
            memcpy(tmp, p, (size_t)len);
            memset(tmp + len, 0x80, (size_t)(64 - len));
            p = tmp;
        }
        uint64_t word, high;
        mk->fn(p, mk->tbl, cls, &word, &high);
        int run = high ? __builtin_ctzll(high) : 64;
        uint64_t valid = run == 64 ? ~0ULL : (1ULL << run) - 1;
        word &= valid;
        uint64_t prev = (word << 1) | (uint64_t)cur; /* bit j: byte j - 1 is a word byte */
        uint64_t st = word & ~prev, en = ~word & prev & valid;
        for (; st; st &= st - 1) starts[ns++] = i + __builtin_ctzll(st);
        for (; en; en &= en - 1) ends[n++] = i + __builtin_ctzll(en);
        if (run > 0) cur = (int)((word >> (run - 1)) & 1);
        i += run;
        if (run < 64) break;
    }
    *ip = i;
    *np = n;
    return cur;
}

int64_t nd_token_spans(const uint8_t *buf, int64_t lo, int64_t hi, const uint8_t *cls,
                       int han_single, int64_t *starts, int64_t *ends) {
    int64_t n = 0, i = lo, ln;
    int cur = 0, binary = ascii_binary(cls);
    masker mk;
    if (binary) masker_init(&mk, cls);
    while (i < hi) {
        if (binary && (cur == 1 || cur == 0)) {
            cur = ascii_spans(buf, &i, hi, cls, &mk, cur, starts, ends, &n);
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

/* Mostly CJK: CJK characters (class >= 2, Hangul syllables) are at least a third of the word
 * characters. The ASCII bytes are skipped 8 at a time first and counted only when the text
 * has a CJK character at all (English text: one cheap pass). *has_han: whether the text has
 * a Han (class 2) character. */
static int cjk_scan(const uint8_t *buf, int64_t lo, int64_t hi, const uint8_t *cls, int *has_han) {
    int64_t cjk = 0, word = 0, i = lo, ln;
    int han = 0;
    while (i < hi) {
        if (buf[i] < 128) {
            for (uint64_t x; i + 8 <= hi; i += 8) {
                memcpy(&x, buf + i, 8);
                if (x & 0x8080808080808080ULL) break;
            }
            while (i < hi && buf[i] < 128) i++;
            continue;
        }
        int64_t cp = decode(buf, i, hi, &ln);
        int c = class_of(cls, cp);
        if (c != 0) {
            word++;
            han |= c == 2;
            if (c >= 2 || (0xAC00 <= cp && cp <= 0xD7A3)) cjk++;
        }
        i += ln;
    }
    *has_han = han;
    if (cjk == 0) return 0;
    for (i = lo; i < hi;) { /* the ASCII word characters, stepping as the decoder does */
        if (buf[i] < 128) {
            word += cls[buf[i]] != 0;
            i++;
        } else {
            decode(buf, i, hi, &ln);
            i += ln;
        }
    }
    return 3 * cjk >= word;
}

int nd_is_cjk(const uint8_t *buf, int64_t lo, int64_t hi, const uint8_t *cls) {
    int han;
    return cjk_scan(buf, lo, hi, cls, &han);
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

/* Keys of a char-mode text from its char stream (scratch[0:nb], code point starts cps). */
static int64_t char_keys(const uint8_t *scratch, const int64_t *cps, int64_t nb, int64_t ncp,
                         int64_t n, uint64_t *keys) {
    if (ncp == 0) return 0;
    if (ncp <= n) {
        keys[0] = nd_xxh3_64(scratch, (size_t)nb, 0);
        return 1;
    }
    for (int64_t k = 0; k < ncp - n + 1; k++)
        keys[k] = nd_xxh3_64(scratch + cps[k], (size_t)(cps[k + n] - cps[k]), 0);
    return ncp - n + 1;
}

/* Keys of a word/shingle-mode text from its ntok token spans (compacted in place when stop
 * words are dropped). */
static int64_t token_keys(const uint8_t *buf, int mode, int64_t n, const uint64_t *stop_keys,
                          int64_t nstop, uint8_t *scratch, int64_t *starts, int64_t *ends,
                          int64_t ntok, uint64_t *keys) {
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
    return nd_shingle_keys(buf, starts, ends, kept, n, scratch, keys);
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
        return char_keys(scratch, starts, nb, ncp, n, keys);
    }
    int64_t ntok = nd_token_spans(buf, lo, hi, cls, han_single, starts, ends);
    return token_keys(buf, mode, n, stop_keys, nstop, scratch, starts, ends, ntok, keys);
}

/* Keys of the word n-shingles of tokens [starts, ends): XXH3 of the tokens joined by one
 * space. Where the text itself holds the shingle (single spaces between its tokens, the
 * common case in prose), the key is hashed in place; only the other shingles are copied
 * into scratch (the copy was ~half of English fingerprinting). Returns the number of keys. */
int64_t nd_shingle_keys(const uint8_t *buf, const int64_t *starts, const int64_t *ends,
                        int64_t kept, int64_t n, uint8_t *scratch, uint64_t *keys) {
    int64_t width = n < kept ? n : kept;
    int64_t bad = 0; /* gaps in the current window that are not one space */
    for (int64_t t = 0; t + 1 < width; t++)
        bad += !(starts[t + 1] == ends[t] + 1 && buf[ends[t]] == SPACE);
    for (int64_t k = 0; k < kept - width + 1; k++) {
        if (k > 0) { /* slide: drop gap k-1, add gap k+width-2 */
            int64_t t = k - 1, u = k + width - 2;
            if (width > 1) {
                bad -= !(starts[t + 1] == ends[t] + 1 && buf[ends[t]] == SPACE);
                bad += !(starts[u + 1] == ends[u] + 1 && buf[ends[u]] == SPACE);
            }
        }
        int64_t last = k + width - 1;
        if (bad == 0) {
            keys[k] = nd_xxh3_64(buf + starts[k], (size_t)(ends[last] - starts[k]), 0);
            continue;
        }
        int64_t nb = 0;
        for (int64_t t = k; t <= last; t++) {
            if (t > k) scratch[nb++] = SPACE;
            memcpy(scratch + nb, buf + starts[t], (size_t)(ends[t] - starts[t]));
            nb += ends[t] - starts[t];
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

/* Per-batch scratch, sized by the longest document (len + 2 entries; scratch 2 len + 8). */
typedef struct {
    uint8_t *scratch;
    int64_t *starts, *ends, *st2, *en2, *set_stamp;
    uint64_t *keys, *uk, *set_keys, *units, *seg;
    double *w;
} work;

static void work_free(work *wk) {
    void *all[] = {wk->scratch, wk->starts, wk->ends, wk->st2,  wk->en2, wk->set_stamp,
                   wk->keys,    wk->uk,     wk->set_keys, wk->units, wk->seg, wk->w};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) free(all[i]);
}

/* Allocates wk for offsets' documents (the sketch's arrays too when sketch); 0 or -1. */
static int work_alloc(work *wk, const int64_t *offsets, int64_t ndoc, int sketch) {
    int64_t longest = 1;
    for (int64_t d = 0; d < ndoc; d++)
        if (offsets[d + 1] - offsets[d] > longest) longest = offsets[d + 1] - offsets[d];
    int64_t set_size = 16;
    while (set_size < 2 * (longest + 2)) set_size *= 2;
    size_t cap = (size_t)(longest + 2), extra = sketch ? cap : 1;
    memset(wk, 0, sizeof(*wk));
    wk->scratch = malloc((size_t)(longest * 2 + 8));
    wk->starts = malloc(sizeof(int64_t) * cap);
    wk->ends = malloc(sizeof(int64_t) * cap);
    wk->keys = malloc(sizeof(uint64_t) * cap);
    wk->uk = malloc(sizeof(uint64_t) * cap);
    wk->w = malloc(sizeof(double) * cap);
    wk->set_keys = malloc(sizeof(uint64_t) * (size_t)set_size);
    wk->set_stamp = calloc((size_t)set_size, sizeof(int64_t));
    wk->st2 = malloc(sizeof(int64_t) * extra);
    wk->en2 = malloc(sizeof(int64_t) * extra);
    wk->units = malloc(sizeof(uint64_t) * extra);
    wk->seg = malloc(sizeof(uint64_t) * extra);
    if (!wk->scratch || !wk->starts || !wk->ends || !wk->keys || !wk->uk || !wk->w ||
        !wk->set_keys || !wk->set_stamp || !wk->st2 || !wk->en2 || !wk->units || !wk->seg) {
        work_free(wk);
        return -1;
    }
    return 0;
}

/* A document's fingerprint words from its m feature keys (keys is reordered); 0 or -1. */
static int fp_row(const nd_fp_conf *fc, uint64_t *keys, int64_t m, work *wk, int64_t stamp,
                  uint64_t *row, uint8_t *empty) {
    if (m == 0) {
        *empty = 1;
        for (int64_t j = 0; j < fc->words; j++) row[j] = 0;
        return 0;
    }
    if (fc->weighting == ND_W_TF && fc->top_n == 0) {
        nd_simhash_words(keys, NULL, m, 1, fc->seed, fc->words, row);
    } else if (fc->weighting == ND_W_NONE && fc->top_n == 0) {
        int64_t u = distinct_in_place(keys, m, wk->set_keys, wk->set_stamp, stamp);
        nd_simhash_words(keys, NULL, u, 1, fc->seed, fc->words, row);
    } else {
        int64_t u = nd_weigh(keys, m, fc->weighting, fc->top_n, fc->idf_keys, fc->idf_vals,
                             fc->nidf, fc->idf_default, wk->uk, wk->w);
        if (u < 0) return -1;
        nd_simhash_words(wk->uk, wk->w, u, 0, fc->seed, fc->words, row);
    }
    return 0;
}

int nd_fingerprint_batch(const uint8_t *buf, const int64_t *offsets, int64_t ndoc,
                         const uint8_t *cls, int mode, int64_t n, int han_single,
                         const uint64_t *stop_keys, int64_t nstop, int weighting, int64_t top_n,
                         const uint64_t *idf_keys, const double *idf_vals, int64_t nidf,
                         double idf_default, uint64_t seed, uint64_t *out, int64_t words,
                         uint8_t *empty, int64_t n_cjk) {
    nd_fp_conf fc = {.mode = mode, .han_single = han_single, .weighting = weighting, .n = n,
                     .n_cjk = n_cjk, .nstop = nstop, .top_n = top_n, .nidf = nidf, .words = words,
                     .stop_keys = stop_keys, .idf_keys = idf_keys, .idf_vals = idf_vals,
                     .idf_default = idf_default, .seed = seed};
    work wk;
    if (work_alloc(&wk, offsets, ndoc, 0) < 0) return -1;
    int rc = 0;
    for (int64_t d = 0; d < ndoc && rc == 0; d++) {
        int64_t m = nd_feature_keys(buf, offsets[d], offsets[d + 1], cls, mode, n, han_single,
                                    stop_keys, nstop, wk.scratch, wk.starts, wk.ends, wk.keys,
                                    n_cjk);
        rc = fp_row(&fc, wk.keys, m, &wk, d + 1, out + d * words, empty + d);
    }
    work_free(&wk);
    return rc;
}

/* The verifier's units from token spans already made with han_single 0: a token's hash, or in
 * char mode one hash per code point of each token (verify.c's units_of calls it too). */
int64_t nd_units_from_spans(const uint8_t *buf, const int64_t *starts, const int64_t *ends,
                                int64_t ntok, int char_mode, uint64_t seed, uint64_t *units) {
    int64_t u = 0;
    for (int64_t t = 0; t < ntok; t++) {
        if (!char_mode) {
            units[u++] = nd_xxh3_64(buf + starts[t], (size_t)(ends[t] - starts[t]), seed);
            continue;
        }
        int64_t p = starts[t];
        while (p < ends[t]) {
            int64_t q = p + 1;
            while (q < ends[t] && (buf[q] & 0xC0) == 0x80) q++;
            units[u++] = nd_xxh3_64(buf + p, (size_t)(q - p), seed);
            p = q;
        }
    }
    return u;
}

/* The verifier's MinHash minima of one document from its u units (verify.c nd_sketch). */
static void sketch_row(const nd_sk_conf *sc, const uint64_t *units, int64_t u, uint64_t *seg,
                       uint64_t *row) {
    for (int64_t j = 0; j < sc->nng; j++) {
        int64_t range[2] = {0, nd_unit_shingles(units, u, sc->ngrams[j], seg)};
        nd_minhash(seg, range, 1, sc->salts, sc->k, row + j * sc->k);
    }
}

/* Fingerprints and sketch units of one document with one tokenizer pass: the token spans
 * (han_single 0) serve both, and a mostly-CJK text's joined char stream is the
 * concatenation of its tokens, so its code points are the char-mode units (a token never
 * starts with a continuation byte: U+FFFD, which a stray one decodes to, separates). */
static void prepare_doc(const uint8_t *buf, int64_t lo, int64_t hi, const uint8_t *cls,
                        const nd_fp_conf *fc, const nd_sk_conf *sc, work *wk, int64_t *m,
                        int64_t *u, uint8_t *segment) {
    int han = -1, cjk = 0;
    if (fc->mode == ND_AUTO_MODE || sc->mode == 0) cjk = cjk_scan(buf, lo, hi, cls, &han);
    int mode = fc->mode, joined = 0;
    int64_t n = fc->n;
    if (mode == ND_AUTO_MODE) {
        mode = cjk ? ND_CHAR_MODE : ND_SHINGLE_MODE;
        n = cjk ? fc->n_cjk : n;
        joined = cjk;
    }
    int char_units = sc->mode == 2 || (sc->mode == 0 && cjk), shared = 0;
    *segment = 0; /* words of Han runs segmented: the caller's (Python segmenter) */
    if (mode != ND_CHAR_MODE && !fc->han_single) {
        if (han < 0) cjk_scan(buf, lo, hi, cls, &han);
        *segment = (uint8_t)han;
    }
    if (mode == ND_CHAR_MODE) {
        int64_t nb, ncp;
        nd_char_stream(buf, lo, hi, cls, wk->scratch, wk->starts, joined, &nb, &ncp);
        if (joined && char_units && cls[0xFFFD] == 0) {
            int64_t k = 0;
            for (int64_t c = 0, p = 0; p < nb; p = c) {
                for (c = p + 1; c < nb && (wk->scratch[c] & 0xC0) == 0x80;) c++;
                wk->units[k++] = nd_xxh3_64(wk->scratch + p, (size_t)(c - p), sc->seed);
            }
            *u = k;
            shared = 1;
        }
        *m = char_keys(wk->scratch, wk->starts, nb, ncp, n, wk->keys);
    } else {
        int64_t ntok = nd_token_spans(buf, lo, hi, cls, fc->han_single, wk->starts, wk->ends);
        if (fc->han_single == 0) { /* before token_keys compacts the spans */
            *u = nd_units_from_spans(buf, wk->starts, wk->ends, ntok, char_units, sc->seed, wk->units);
            shared = 1;
        }
        *m = token_keys(buf, mode, n, fc->stop_keys, fc->nstop, wk->scratch, wk->starts, wk->ends,
                        ntok, wk->keys);
    }
    if (!shared) { /* the sketch's own spans */
        int64_t k = nd_token_spans(buf, lo, hi, cls, 0, wk->st2, wk->en2);
        *u = nd_units_from_spans(buf, wk->st2, wk->en2, k, char_units, sc->seed, wk->units);
    }
}

/* nd_fingerprint_batch and the verifier's nd_sketch (one block of k minima per shingle size
 * of sc, in order) of the same texts in one pass over each text; 0, or -1 when out of memory.
 * segment[d] = 1: the fingerprint features of text d read Han words (a Han character, and
 * neither char features nor han_single): its fps/empty row is of the unsegmented text, and
 * the caller recomputes it. */
int nd_prepare_batch(const uint8_t *buf, const int64_t *offsets, int64_t ndoc, const uint8_t *cls,
                     const nd_fp_conf *fc, uint64_t *fps, uint8_t *empty, const nd_sk_conf *sc,
                     uint64_t *mins, uint8_t *segment) {
    work wk;
    if (work_alloc(&wk, offsets, ndoc, 1) < 0) return -1;
    int rc = 0;
    for (int64_t d = 0; d < ndoc && rc == 0; d++) {
        int64_t m = 0, u = 0;
        prepare_doc(buf, offsets[d], offsets[d + 1], cls, fc, sc, &wk, &m, &u, segment + d);
        sketch_row(sc, wk.units, u, wk.seg, mins + d * sc->k * sc->nng);
        rc = fp_row(fc, wk.keys, m, &wk, d + 1, fps + d * fc->words, empty + d);
    }
    work_free(&wk);
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

/* Whitespace and high-bit masks of 64 bytes, and the bytes with every ASCII whitespace byte
 * (' ', 0x09-0x0D, 0x1C-0x1F: str.isspace's ASCII set) made ' ' into conv. */
typedef void (*ws_fn)(const uint8_t *p, uint8_t *conv, uint64_t *ws, uint64_t *high);

static inline int ascii_space(uint8_t b) { return b == ' ' || (b >= 0x09 && b <= 0x0D) || (b >= 0x1C && b <= 0x1F); }

static void ws64_scalar(const uint8_t *p, uint8_t *conv, uint64_t *ws, uint64_t *high) {
    uint64_t w = 0, h = 0;
    for (int j = 0; j < 64; j++) {
        uint8_t b = p[j];
        int sp = ascii_space(b);
        h |= (uint64_t)(b >> 7) << j;
        w |= (uint64_t)sp << j;
        conv[j] = sp ? ' ' : b;
    }
    *ws = w;
    *high = h;
}

#ifdef ND_HAVE_AVX2_MASK
__attribute__((target("avx2"))) static void ws64_avx2(const uint8_t *p, uint8_t *conv,
                                                      uint64_t *ws, uint64_t *high) {
    const __m256i sp = _mm256_set1_epi8(' ');
    uint64_t w = 0, h = 0;
    for (int k = 0; k < 2; k++) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(p + 32 * k));
        __m256i a = _mm256_sub_epi8(v, _mm256_set1_epi8(0x09)); /* 0x09-0x0D: a <= 4 */
        __m256i b = _mm256_sub_epi8(v, _mm256_set1_epi8(0x1C)); /* 0x1C-0x1F: b <= 3 */
        __m256i m = _mm256_or_si256(
            _mm256_cmpeq_epi8(v, sp),
            _mm256_or_si256(_mm256_cmpeq_epi8(_mm256_min_epu8(a, _mm256_set1_epi8(4)), a),
                            _mm256_cmpeq_epi8(_mm256_min_epu8(b, _mm256_set1_epi8(3)), b)));
        _mm256_storeu_si256((__m256i *)(conv + 32 * k), _mm256_blendv_epi8(v, sp, m));
        w |= (uint64_t)(uint32_t)_mm256_movemask_epi8(m) << (32 * k);
        h |= (uint64_t)(uint32_t)_mm256_movemask_epi8(v) << (32 * k);
    }
    *ws = w;
    *high = h;
}
#endif

/* " ".join(text.split()) of each document, on UTF-8 bytes: whitespace runs become one space,
 * ends trimmed. out holds at most len(buf) bytes; out_off gets ndoc + 1 offsets.
 * Written eagerly: the first whitespace of a run after some text is a space at once, the
 * others are dropped, and a trailing space is taken back at the end of the document (the
 * same bytes). ASCII goes 64 bytes at a time: whitespace made ' ' with vector compares, the
 * run continuations cut out with memcpy (the byte loop was 0.04 s of the mixed 25 MB). */
void nd_collapse_spaces(const uint8_t *buf, const int64_t *offsets, int64_t ndoc, uint8_t *out,
                        int64_t *out_off) {
    ws_fn ws64 = ws64_scalar;
#ifdef ND_HAVE_AVX2_MASK
    if (use_avx2()) ws64 = ws64_avx2;
#endif
    uint8_t conv[64];
    int64_t nb = 0;
    out_off[0] = 0;
    for (int64_t d = 0; d < ndoc; d++) {
        int64_t i = offsets[d], hi = offsets[d + 1], start = nb;
        while (i < hi) {
            int64_t lim = hi;
            if (i + 64 <= hi) {
                uint64_t ws, high;
                ws64(buf + i, conv, &ws, &high);
                if (!high) {
                    uint64_t carry = nb == start || out[nb - 1] == ' ';
                    uint64_t drop = ws & ((ws << 1) | carry);
                    int64_t pos = 0;
                    for (; drop; drop &= drop - 1) {
                        int64_t j = __builtin_ctzll(drop);
                        memcpy(out + nb, conv + pos, (size_t)(j - pos));
                        nb += j - pos;
                        pos = j + 1;
                    }
                    memcpy(out + nb, conv + pos, (size_t)(64 - pos));
                    nb += 64 - pos;
                    i += 64;
                    continue;
                }
                lim = i + 64; /* this block byte by byte (a character may end past it) */
            }
            while (i < lim) {
                int64_t s = space_len(buf, i, hi);
                if (s) {
                    if (nb > start && out[nb - 1] != ' ') out[nb++] = ' ';
                    i += s;
                    continue;
                }
                out[nb++] = buf[i++];
            }
        }
        if (nb > start && out[nb - 1] == ' ') nb--;
        out_off[d + 1] = nb;
    }
}
