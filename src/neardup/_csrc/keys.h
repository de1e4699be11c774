/* Key table kernels (keys.c), declared apart from kernels.h so that the candidate design's C
 * code stays in its own two files. */
#ifndef NEARDUP_KEYS_H
#define NEARDUP_KEYS_H

#include <stdint.h>

/* A run of the key table: rows sorted by table key K < 2**(p + shift); row i of bucket t
 * (offsets[t] <= i < offsets[t + 1], t = K >> shift) stores K's low `shift` bits as a tag of
 * `width` bytes (1, 2, 4 or 8) and its slot in `slot_width` bytes (4, or 3: little-endian). */
typedef struct {
    const uint32_t *offsets; /* nbuckets + 1 */
    int64_t nbuckets;
    const void *tags;
    int width;
    int shift;
    const void *slots;
    int slot_width;
    int64_t n;
} nd_key_run;

/* A slot of 4 bytes, or 3 (little-endian: a table of fewer than 2**24 slots). */
static inline uint32_t nd_slot_at(const void *s, int w, int64_t i) {
    if (w == 4) return ((const uint32_t *)s)[i];
    const uint8_t *b = (const uint8_t *)s + 3 * i;
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16;
}

static inline void nd_slot_put(void *s, int w, int64_t i, uint32_t v) {
    if (w == 4) {
        ((uint32_t *)s)[i] = v;
        return;
    }
    uint8_t *b = (uint8_t *)s + 3 * i;
    b[0] = (uint8_t)v;
    b[1] = (uint8_t)(v >> 8);
    b[2] = (uint8_t)(v >> 16);
}

/* Table keys of mix64 band keys: x = mix64^-1(key); K = (x >> 32 << 32) | fmix32(x low 32 bits)
 * when x < 2**bits, else UINT64_MAX (bits < 64); bits == 64: K = key. */
void nd_key_pack(const uint64_t *keys, int64_t n, int bits, uint64_t *out);
int64_t nd_key_lookup(const nd_key_run *run, const uint64_t *queries, int64_t nq, int64_t *out_q,
                      int64_t *out_at, int64_t cap);
/* Merge two runs into `out` (its offsets, tags and slots of `out_slot_width` bytes are
 * written; out->n is a capacity), dropping rows of dead slots; returns the rows written. */
int64_t nd_key_merge(const nd_key_run *a, const nd_key_run *b, const uint8_t *dead,
                     uint32_t *out_offsets, int64_t out_nbuckets, void *out_tags, int out_width,
                     int out_shift, void *out_slots, int out_slot_width);
/* offsets[t] = first row whose key >> shift is >= t, for t in 0..nbuckets (keys sorted). */
void nd_key_offsets(const uint64_t *keys, int64_t n, int shift, uint32_t *offsets,
                    int64_t nbuckets);

#endif
