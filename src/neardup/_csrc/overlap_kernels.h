/* Plain C kernels of neardup.overlap (no Python API): tokens, grams and packed documents
 * (overlap_tokens.c), the per-pair step (overlap_pairs.c) and the gram index
 * (overlap_index.c); overlap_module.c binds them to Python as neardup._overlap.
 *
 * Each kernel has a Python reference in neardup/overlap (tokens.py: tokenize, grams, winnow;
 * align.py + pairs.py: the per-pair step; index.py: GramIndex) and must give the same result
 * bit for bit; tests/overlap/test_kernels.py compares them on random inputs. Without the
 * extension the Python references run (slowly), so results never depend on whether it was
 * built.
 *
 * A *packed* document is one int64 buffer (a bytes object): a header [n, nc, nf], then
 * token starts[n], ends[n], units[n + 1], token hashes[n], coarse grams first[nc], last[nc],
 * hashes[nc], fine grams first[nf], last[nf], hashes[nf] (hashes are uint64 bit patterns). */
#ifndef NEARDUP_OVERLAP_KERNELS_H
#define NEARDUP_OVERLAP_KERNELS_H

#include <stdint.h>

/* ---------------------------------------------------------------- overlap_tokens.c */

/* A packed document's arrays (views into its buffer). */
typedef struct {
    int64_t n, nc, nf;
    const int64_t *starts, *ends, *units;
    const uint64_t *th;
    const int64_t *cfirst, *clast;
    const uint64_t *chash;
    const int64_t *ffirst, *flast;
    const uint64_t *fhash;
} doc_t;

/* int64 items of ov_prepare's scratch for a text of len code points */
#define OV_PREPARE_SCRATCH(len) (11 * (size_t)(len) + 9)

/* Tokens and coarse / fine grams of the code points data[0..len) (a str's data of `kind` 1, 2
 * or 4 bytes a code point) in scratch `mem` (OV_PREPARE_SCRATCH items); counts = {n, nc, nf}.
 * Returns n, or -(cp + 1) for the first code point of a token whose fold is unknown
 * (UNKNOWN_FOLD in `fold`: the caller fills it in and calls again). */
int64_t ov_prepare(int kind, const void *data, int64_t len, const uint8_t *cls,
                   const uint32_t *fold, int64_t word_units, int64_t cjk_units, int64_t coarse,
                   int64_t fine, int64_t *mem, int64_t counts[3]);
/* int64 items of the packed document of ov_prepare's counts */
int64_t ov_packed_items(const int64_t counts[3]);
/* Write ov_prepare's result (mem, len, counts) as a packed document to out. */
void ov_pack(const int64_t *mem, int64_t len, const int64_t counts[3], int64_t *out);
/* The arrays of the packed document p[0..len); -1 when it is not one. */
int ov_unpack(const int64_t *p, int64_t len, doc_t *d);
/* tokens.winnow: indices of the rightmost minimum of every window of hashes, each once,
 * ascending, in out (n items); returns their count. */
int64_t ov_winnow(const uint64_t *h, int64_t n, int64_t window, int64_t *out);

/* templates.TemplateBatch's template keys of one text (code points data[0..len), its n tokens
 * [starts, ends) with hashes th): digit[t] = token t holds an ASCII or full-width digit;
 * masked[t] = mask for those, else th[t]; the grams of ngram masked tokens whose hash is a
 * multiple of sample, as tokens.grams hashes them: first, last (token indices + offset) and
 * gh (at most n items each). Returns their count, or -1 (a token outside the text). */
int64_t ov_template_keys(int kind, const void *data, int64_t len, const int64_t *starts,
                         const int64_t *ends, const uint64_t *th, int64_t n, int64_t ngram,
                         uint64_t mask, uint64_t sample, int64_t offset, uint8_t *digit,
                         uint64_t *masked, int64_t *first, int64_t *last, uint64_t *gh);

/* ---------------------------------------------------------------- overlap_pairs.c */

typedef struct {
    int64_t pair;           /* the source's index in the batch */
    int64_t q0, q1, d0, d1; /* token ranges */
    int64_t num, den;       /* score = num / den */
} found_t;

typedef struct {
    found_t *v;
    int64_t n, cap;
} found_vec;

typedef struct {
    int64_t near, gap, min_units, reach, fanout;
} params_t;

/* Scratch of the per-pair step, grown as needed and kept between queries. */
typedef struct ov_ctx ov_ctx;

ov_ctx *ov_ctx_new(void); /* NULL: no memory */
void ov_ctx_free(ov_ctx *c);
/* The passages of query q in sources ds[0..m), appended to fv; source j's seeds are rows
 * bounds[j]:bounds[j+1] of seeds (q_first, q_last, d_first, d_last). Returns 0, -1 (no
 * memory) or -2 (a seed lies outside its documents). */
int ov_query(ov_ctx *c, const doc_t *q, const doc_t *ds, int64_t m, const int64_t *seeds,
             const int64_t *bounds, const params_t *p, found_vec *fv);

/* templates._own_units' alignment of a passage's two sides (token hashes q[nq], s[ns]): the
 * blocks of difflib.SequenceMatcher(None, q, s, autojunk=False).get_matching_blocks(), bit for
 * bit; shared[i] (nq items) = 1 where q[i] is in a block of >= ngram tokens. Returns the tokens
 * matched (the blocks' sizes summed), or -1 (no memory). */
int64_t ov_frame(const uint64_t *q, int64_t nq, const uint64_t *s, int64_t ns, int64_t ngram,
                 uint8_t *shared);

/* ---------------------------------------------------------------- overlap_index.c */

/* Gram hash -> postings (doc, first token, last token); see overlap_index.c. */
typedef struct ov_index ov_index;

/* one posting found for query gram q (its spans copied: grouping reads no posting) */
typedef struct {
    int64_t doc, seq, q;
    int32_t first, last;
} hit_t;

ov_index *ov_index_new(void); /* NULL: no memory */
void ov_index_free(ov_index *ix);
int64_t ov_index_postings(const ov_index *ix);
/* Post grams idx[0..n) (all n when idx is NULL) of hashes h, token ranges [f, l) of doc.
 * Returns 0, -1 (no memory) or -2 (token offsets out of range; nothing posted). */
int ov_index_add(ov_index *ix, int64_t doc, const uint64_t *h, const int64_t *f,
                 const int64_t *l, const int64_t *idx, int64_t n);
/* The postings of query grams h[0..n) (skipping grams posted by more than max_df documents,
 * and with cap > 0 grams with more than cap postings), sorted by document, in query-gram then
 * posting order: *hits (freed by the caller) and *k. Returns 0, -1 (no memory) or 1 when
 * max_seeds > 0 and there are more postings than that (*k: their count, nothing copied). */
int ov_index_hits(ov_index *ix, const uint64_t *h, int64_t n, int64_t max_df, int64_t max_seeds,
                  int64_t cap, hit_t **hits, int64_t *k);
/* The documents with >= min_seeds hits and the rows of their hits (ov_group's sizes). */
void ov_group_sizes(const hit_t *hits, int64_t k, int64_t min_seeds, int64_t *nd, int64_t *ns);
/* Those documents (docs[nd]), offsets of their rows (bounds[nd + 1]) and the rows (seeds[4 ns]:
 * q_first, q_last, d_first, d_last; f, l: the query grams' token ranges). */
void ov_group(const hit_t *hits, int64_t k, int64_t min_seeds, const int64_t *f,
              const int64_t *l, int64_t *docs, int64_t *bounds, int64_t *seeds);
/* Every posting: hashes (uint64, ascending) and rows (doc, first, last), postings of one hash in
 * insertion order (ov_index_postings items each). Returns 0 or -1 (no memory). */
int ov_index_arrays(const ov_index *ix, uint64_t *hashes, int64_t *postings);

/* templates.TemplateCounts: template key -> documents holding it (see overlap_index.c). */
typedef struct ov_counts ov_counts;

ov_counts *ov_counts_new(void); /* NULL: no memory */
void ov_counts_free(ov_counts *c);
int64_t ov_counts_size(const ov_counts *c); /* distinct keys */
/* df[g] for keys h[off[0]..off[nt]) of nt texts (text t's: off[t]..off[t+1]): the documents
 * counted before its text; with add each text's keys are counted (once a text) after its own
 * look-ups. Returns 0 or -1 (no memory: nothing counted). */
int ov_counts_count(ov_counts *c, const uint64_t *h, const int64_t *off, int64_t nt, int add,
                    int64_t *df);
/* Add k[i] documents to key h[i], i < m (k[i] <= 0: skipped). Returns 0 or -1 (no memory). */
int ov_counts_put(ov_counts *c, const uint64_t *h, const int64_t *k, int64_t m);
/* Every key and its count (ov_counts_size items each, in table order). */
void ov_counts_arrays(const ov_counts *c, uint64_t *keys, int64_t *counts);

#endif
