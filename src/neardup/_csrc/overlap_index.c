
/* The gram index of neardup.overlap (index.py's reference, GramIndex); plain C.
 *
 * Index: gram hash -> postings (doc, first token, last token) (overlap/index.py documents the
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
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "keyed.h"
#include "overlap_kernels.h"

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

struct ov_index {
    part_t parts[PARTS];
    uint32_t **chunks; /* the arena: chunks of 2**ABITS units; a run never straddles two */
    int64_t nchunks, top, np; /* top: the next free unit */
};

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

ov_index *ov_index_new(void) {
    return calloc(1, sizeof(ov_index));
}

void ov_index_free(ov_index *self) {
    if (!self) return;
    for (int p = 0; p < PARTS; p++) unzeroed(self->parts[p].slots, PART_BYTES(self->parts[p].cap));
    for (int64_t c = 0; c < self->nchunks; c++) unmapped(self->chunks[c], CHUNK_BYTES);
    free(self->chunks);
    free(self);
}

int64_t ov_index_postings(const ov_index *self) {
    return self->np;
}

static inline part_t *part_of(ov_index *self, uint64_t key) {
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
static int64_t find_from(ov_index *self, const part_t *pt, uint64_t key, int64_t i) {
    const uint32_t lo = (uint32_t)key, hi = (uint32_t)(key >> 32);
    while (pt->slots[i].run != NIL && *UNIT(self, pt->slots[i].run + 2) != hi)
        i = lo_probe(pt, lo, next_slot(pt, i));
    return i;
}

static inline int64_t find_slot(ov_index *self, const part_t *pt, uint64_t key) {
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
static uint32_t new_run(ov_index *self, int64_t size, uint32_t next, int64_t count,
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
static inline void prefetch_home(ov_index *self, uint64_t key) {
    const part_t *pt = part_of(self, key);
    if (pt->cap) __builtin_prefetch(&pt->slots[home(pt, (uint32_t)key)]);
}


int ov_index_add(ov_index *self, int64_t doc, const uint64_t *h, const int64_t *f,
                 const int64_t *l, const int64_t *idx, int64_t n) {
    for (int64_t t = 0; t < n; t++) {
        int64_t i = idx ? idx[t] : t;
        if (f[i] < 0 || l[i] > INT32_MAX || f[i] > l[i]) return -2;
    }
    for (int64_t t = 0; t < n && t < AHEAD; t++) prefetch_home(self, h[idx ? idx[t] : t]);
    for (int64_t t = 0; t < n; t++) {
        int64_t i = idx ? idx[t] : t;
        if (t + AHEAD < n) prefetch_home(self, h[idx ? idx[t + AHEAD] : t + AHEAD]);
        part_t *pt = part_of(self, h[i]);
        if (pt->used + 1 > pt->limit && grow_part(pt, (int64_t)(h[i] >> 56)) < 0)
            return -1;
        slot_t *sl = &pt->slots[find_slot(self, pt, h[i])];
        uint32_t u = sl->run;
        int64_t c = u != NIL ? *UNIT(self, u + 1) : 0, b = run_of(c);
        if (c == run_start(b)) { /* the newest run is full (or there is none): a new one */
            if ((u = new_run(self, run_size(b), u, c, (uint32_t)(h[i] >> 32))) == NIL)
                return -1;
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


void ov_group_sizes(const hit_t *hits, int64_t k, int64_t min_seeds, int64_t *nd, int64_t *ns) {
    *nd = 0, *ns = 0;
    for (int64_t a = 0, b; a < k; a = b) {
        for (b = a; b < k && hits[b].doc == hits[a].doc;) b++;
        if (b - a >= min_seeds) ++*nd, *ns += b - a;
    }
}

void ov_group(const hit_t *hits, int64_t k, int64_t min_seeds, const int64_t *f,
              const int64_t *l, int64_t *od, int64_t *ob, int64_t *os) {
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
}

/* Fill hits[0..k) from the newest runs found[0..n) (NIL: none) and return k (-1: no memory).
 * A key's runs go newest first and its postings oldest first, so each run's slice of hits is
 * known in advance; the keys are walked together, one run of each per round with the next
 * asked for, so the misses of a round overlap instead of one chain's following one another. */
static int64_t walk(ov_index *self, const uint32_t *found, int64_t n, hit_t *hits) {
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
static int over_df(ov_index *self, uint32_t u, int64_t c, int64_t max_df) {
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
 * seeds grow with the square of its length (and the per-pair step's work with them). With
 * cap > 0 the grams with more than cap postings are left out too: a text over its budget is
 * looked up again so (at most cap seeds a gram, n * cap in all). */

int ov_index_hits(ov_index *self, const uint64_t *h, int64_t n, int64_t max_df, int64_t max_seeds,
                  int64_t cap, hit_t **hits_out, int64_t *k_out) {
    int64_t total = 0;
    uint32_t *found = malloc(sizeof(uint32_t) * (size_t)(n + 1));
    int64_t *at = malloc(sizeof(int64_t) * (size_t)(n + 1));
    if (!found || !at) {
        free(found);
        free(at);
        return -1;
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
        found[i] = c && (cap <= 0 || c <= cap) && (c <= max_df || !over_df(self, u, c, max_df))
                       ? u
                       : NIL;
        if (found[i] != NIL) total += c;
    }
    free(at);
    if (max_seeds > 0 && total > max_seeds) {
        free(found);
        *k_out = total;
        return 1;
    }
    hit_t *hits = malloc(sizeof(hit_t) * (size_t)(total + 1));
    if (!hits) {
        free(found);
        return -1;
    }
    int64_t k = walk(self, found, n, hits);
    free(found);
    if (k < 0 || sort_hits(&hits, k) < 0) {
        free(hits);
        return -1;
    }
    *hits_out = hits, *k_out = k;
    return 0;
}

int ov_index_arrays(const ov_index *self, uint64_t *oh, int64_t *op) {
    int64_t used = 0, m = 0, r = 0;
    for (int p = 0; p < PARTS; p++) used += self->parts[p].used;
    nd_keyed *live = malloc(sizeof(nd_keyed) * (size_t)(used + 1));
    if (!live) return -1;
    for (int p = 0; p < PARTS; p++)
        for (int64_t i = 0; i < self->parts[p].cap; i++) {
            slot_t s = self->parts[p].slots[i];
            if (s.run != NIL)
                live[m++] = (nd_keyed){(uint64_t)*UNIT(self, s.run + 2) << 32 | s.lo, s.run};
        }
    qsort(live, (size_t)m, sizeof(nd_keyed), nd_cmp_keyed);
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
    return 0;
}


/* ---------------------------------------------------------------- template key counts */

/* templates.TemplateCounts: template key -> documents holding it, one open addressing table
 * of 16-byte slots (a key and its count; count 0: empty), linear probing from the key's low
 * bits (keys are hashes), grown at 3/4 load: 21-43 bytes a key, about the sorted segments' 16
 * and below their merges' peaks. A text counts each of its keys once: its keys are first
 * gathered in a small set (seen, reused). */
typedef struct {
    uint64_t key;
    int64_t count;
} kc_t;

struct ov_counts {
    kc_t *t;
    int64_t cap, n;
    uint64_t *seen; /* a text's distinct keys: open addressing, 0 marks empty (key 0: zero) */
    int64_t seen_cap;
};

ov_counts *ov_counts_new(void) {
    return calloc(1, sizeof(ov_counts));
}

void ov_counts_free(ov_counts *c) {
    if (!c) return;
    free(c->t), free(c->seen);
    free(c);
}

int64_t ov_counts_size(const ov_counts *c) {
    return c->n;
}

/* the slot of key h: where it is, or the empty one where it goes */
static inline int64_t counts_slot(const ov_counts *c, uint64_t h) {
    int64_t mask = c->cap - 1, i = (int64_t)(h & (uint64_t)mask);
    while (c->t[i].count && c->t[i].key != h) i = (i + 1) & mask;
    return i;
}

/* room for `more` keys at most 3/4 of the table full; 0 or -1 (no memory) */
static int counts_room(ov_counts *c, int64_t more) {
    if (4 * (c->n + more) <= 3 * c->cap) return 0;
    int64_t cap = c->cap ? c->cap : 1024;
    while (4 * (c->n + more) > 3 * cap) cap *= 2;
    kc_t *old = c->t, *t = calloc((size_t)cap, sizeof(kc_t));
    if (!t) return -1;
    int64_t old_cap = c->cap;
    c->t = t, c->cap = cap;
    for (int64_t i = 0; i < old_cap; i++)
        if (old[i].count) c->t[counts_slot(c, old[i].key)] = old[i];
    free(old);
    return 0;
}

/* Is h among the text's keys so far (seen, 2^k slots, zero: key 0 seen)? Adds it if not. */
static inline int seen_before(uint64_t *seen, int64_t cap, int *zero, uint64_t h) {
    if (!h) {
        int was = *zero;
        *zero = 1;
        return was;
    }
    int64_t i = (int64_t)(h & (uint64_t)(cap - 1));
    while (seen[i] && seen[i] != h) i = (i + 1) & (cap - 1);
    if (seen[i]) return 1;
    seen[i] = h;
    return 0;
}

/* room in seen for the keys of a text of m keys: its size, or 0 (no memory) */
static int64_t seen_room(ov_counts *c, int64_t m) {
    int64_t cap = 16;
    while (cap < 2 * m) cap *= 2;
    if (cap > c->seen_cap) {
        uint64_t *s = realloc(c->seen, sizeof(uint64_t) * (size_t)cap);
        if (!s) return 0;
        c->seen = s, c->seen_cap = cap;
    }
    return cap;
}

/* count one text's keys h[0..m) (each once; seen_room(c, m) made room) */
static void counts_add_text(ov_counts *c, const uint64_t *h, int64_t m) {
    int64_t cap = seen_room(c, m);
    int zero = 0;
    memset(c->seen, 0, sizeof(uint64_t) * (size_t)cap);
    for (int64_t g = 0; g < m; g++) {
        if (seen_before(c->seen, cap, &zero, h[g])) continue;
        int64_t s = counts_slot(c, h[g]);
        if (!c->t[s].count) c->t[s].key = h[g], c->n++;
        c->t[s].count++;
    }
}

int ov_counts_count(ov_counts *c, const uint64_t *h, const int64_t *off, int64_t nt, int add,
                    int64_t *df) {
    int64_t most = 0;
    for (int64_t t = 0; t < nt; t++)
        if (off[t + 1] - off[t] > most) most = off[t + 1] - off[t];
    if (add && (counts_room(c, off[nt] - off[0]) < 0 || !seen_room(c, most))) return -1;
    for (int64_t t = 0; t < nt; t++) {
        for (int64_t g = off[t]; g < off[t + 1]; g++)
            df[g] = c->cap ? c->t[counts_slot(c, h[g])].count : 0;
        if (add) counts_add_text(c, h + off[t], off[t + 1] - off[t]);
    }
    return 0;
}

int ov_counts_put(ov_counts *c, const uint64_t *h, const int64_t *k, int64_t m) {
    if (counts_room(c, m) < 0) return -1;
    for (int64_t i = 0; i < m; i++) {
        if (k[i] <= 0) continue; /* a key no document holds is no key */
        int64_t s = counts_slot(c, h[i]);
        if (!c->t[s].count) c->t[s].key = h[i], c->n++;
        c->t[s].count += k[i];
    }
    return 0;
}

void ov_counts_arrays(const ov_counts *c, uint64_t *keys, int64_t *counts) {
    for (int64_t i = 0, m = 0; i < c->cap; i++)
        if (c->t[i].count) keys[m] = c->t[i].key, counts[m] = c->t[i].count, m++;
}
