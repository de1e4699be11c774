/* Plain C kernels of neardup (no Python API): text features, verifier sketch, index. */
#ifndef NEARDUP_KERNELS_H
#define NEARDUP_KERNELS_H

#include <stdint.h>
#include <string.h>

enum { ND_WORD_MODE = 0, ND_SHINGLE_MODE = 1, ND_CHAR_MODE = 2, ND_AUTO_MODE = 3 };
enum { ND_W_NONE = 0, ND_W_TF = 1, ND_W_TFIDF = 2 };

/* features.c */
int64_t nd_token_spans(const uint8_t *buf, int64_t lo, int64_t hi, const uint8_t *cls,
                       int han_single, int64_t *starts, int64_t *ends);
int nd_is_cjk(const uint8_t *buf, int64_t lo, int64_t hi, const uint8_t *cls);
void nd_char_stream(const uint8_t *buf, int64_t lo, int64_t hi, const uint8_t *cls, uint8_t *out,
                    int64_t *cp_starts, int joined, int64_t *nb_out, int64_t *ncp_out);
int64_t nd_feature_keys(const uint8_t *buf, int64_t lo, int64_t hi, const uint8_t *cls, int mode,
                        int64_t n, int han_single, const uint64_t *stop_keys, int64_t nstop,
                        uint8_t *scratch, int64_t *starts, int64_t *ends, uint64_t *keys,
                        int64_t n_cjk);
int64_t nd_shingle_keys(const uint8_t *buf, const int64_t *starts, const int64_t *ends,
                        int64_t kept, int64_t n, uint8_t *scratch, uint64_t *keys);
int64_t nd_weigh(const uint64_t *keys, int64_t m, int weighting, int64_t top_n,
                 const uint64_t *idf_keys, const double *idf_vals, int64_t nidf, double idf_default,
                 uint64_t *uk, double *w);
void nd_simhash_words(const uint64_t *keys, const double *weights, int64_t m, int unit,
                      uint64_t seed, int64_t words, uint64_t *out);
int nd_fingerprint_batch(const uint8_t *buf, const int64_t *offsets, int64_t ndoc,
                         const uint8_t *cls, int mode, int64_t n, int han_single,
                         const uint64_t *stop_keys, int64_t nstop, int weighting, int64_t top_n,
                         const uint64_t *idf_keys, const double *idf_vals, int64_t nidf,
                         double idf_default, uint64_t seed, uint64_t *out, int64_t words,
                         uint8_t *empty, int64_t n_cjk);
/* A fingerprinter's configuration and a MinHash verifier's (nd_prepare_batch). */
typedef struct {
    int mode, han_single, weighting;
    int64_t n, n_cjk, nstop, top_n, nidf, words;
    const uint64_t *stop_keys, *idf_keys;
    const double *idf_vals;
    double idf_default;
    uint64_t seed;
} nd_fp_conf;

typedef struct {
    int mode; /* the verifier's: 0 auto, 1 word, 2 char */
    const int64_t *ngrams;
    int64_t nng, k;
    uint64_t seed;
    const uint64_t *salts;
} nd_sk_conf;

int nd_prepare_batch(const uint8_t *buf, const int64_t *offsets, int64_t ndoc, const uint8_t *cls,
                     const nd_fp_conf *fc, uint64_t *fps, uint8_t *empty, const nd_sk_conf *sc,
                     uint64_t *mins, uint8_t *segment);
int64_t nd_units_from_spans(const uint8_t *buf, const int64_t *starts, const int64_t *ends,
                            int64_t ntok, int char_mode, uint64_t seed, uint64_t *units);
void nd_collapse_spaces(const uint8_t *buf, const int64_t *offsets, int64_t ndoc, uint8_t *out,
                        int64_t *out_off);

/* verify.c */
int64_t nd_unit_shingles(const uint64_t *units, int64_t u, int64_t n, uint64_t *seg);
int64_t nd_shingles(const uint8_t *buf, int64_t nbuf, const int64_t *offsets, int64_t ndoc,
                    const int8_t *modes, const uint8_t *cls, int64_t n, uint64_t seed,
                    uint64_t *flat, int64_t *out_off);
void nd_minhash(const uint64_t *flat, const int64_t *offsets, int64_t ndoc, const uint64_t *salts,
                int64_t k, uint64_t *out);
int nd_sketch(const uint8_t *buf, const int64_t *offsets, int64_t ndoc, const int8_t *modes,
              const uint8_t *cls, int64_t n, uint64_t seed, const uint64_t *salts, int64_t k,
              uint64_t *out);

/* index.c */
typedef struct {
    const uint64_t *rsh, *msk, *lsh;
    int64_t blocks;
} nd_perm;

typedef struct {
    const uint64_t *keys;
    const uint32_t *pos;
    const uint32_t *offsets;
    int64_t ntab, nkeys, nbuckets, q;
} nd_tables;

typedef struct {
    int64_t *a, *b, *d;
    int64_t cap, written;
} nd_out;

void nd_sort_u64(uint64_t *a, int64_t n);
void nd_top_counts(const uint64_t *fps, const uint32_t *positions, int64_t n, const nd_perm *pm,
                   int64_t t, int64_t top, int64_t *counts);
int nd_scatter_top(const uint64_t *fps, const uint32_t *positions, int64_t n, const nd_perm *pm,
                   int64_t t, int64_t top, const int64_t *starts, uint64_t *keys, uint32_t *pos);
int nd_bucket_segments(uint64_t *keys, uint32_t *pos, int64_t n, int64_t q, int64_t top,
                       const int64_t *starts, uint32_t *offsets);
void nd_offsets_from_sorted(const uint64_t *keys, int64_t n, int64_t q, uint32_t *offsets,
                            int64_t noff);
int nd_search_tables(int64_t start, const uint64_t *queries, int64_t nq, int64_t k,
                     const nd_tables *tb, const nd_perm *pm, const int64_t *probes,
                     int64_t nprobes, const uint64_t *dedup, int64_t radius, const uint8_t *alive,
                     int64_t nalive, int64_t t_lo, int64_t t_hi, nd_out *o, int64_t *resume);
void nd_scan_range(int64_t start, const uint64_t *queries, int64_t nq, int64_t k,
                   const uint64_t *fps, int64_t lo, int64_t hi, const uint8_t *alive, nd_out *o,
                   int64_t *resume);
void nd_brute_pairs(int64_t start, const uint64_t *fps, int64_t n, int64_t k, nd_out *o,
                    int64_t *resume);
void nd_join_tables(int64_t start, int64_t k, const nd_tables *tb, const int64_t *probes,
                    int64_t nprobes, const uint64_t *dedup, int64_t radius, nd_out *o,
                    int64_t *resume);
void nd_join_tables_r0(int64_t start, int64_t k, const nd_tables *tb, const uint64_t *dedup,
                       int64_t hot, nd_out *o, int64_t *resume);
int nd_sort_buckets(uint64_t *keys, uint32_t *pos, const uint32_t *offsets, int64_t nbuckets);
void nd_expand_pairs(const int64_t *a, const int64_t *b, const int64_t *dist, int64_t ne,
                     const int64_t *order, const int64_t *starts, const int64_t *counts,
                     int64_t ng, int64_t *oi, int64_t *oj, int64_t *od);

#endif
