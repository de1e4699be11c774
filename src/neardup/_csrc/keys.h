/* Key table kernels (keys.c), declared apart from kernels.h so that the candidate design's C
 * code stays in its own two files. */
#ifndef NEARDUP_KEYS_H
#define NEARDUP_KEYS_H

#include <stdint.h>

int64_t nd_key_lookup(const uint64_t *keys, int64_t nkeys, const int64_t *offsets, int64_t p,
                      const uint64_t *queries, int64_t nq, int64_t *out_q, int64_t *out_at,
                      int64_t cap);
int64_t nd_key_merge(const uint64_t *ak, const uint32_t *aslot, int64_t na, const uint64_t *bk,
                     const uint32_t *bslot, int64_t nb, const uint8_t *dead, uint64_t *outk,
                     uint32_t *outslot);
/* offsets[t] = first row whose key's top p bits are >= t, for t in 0..2**p (keys sorted). */
void nd_key_offsets(const uint64_t *keys, int64_t n, int64_t p, int64_t *offsets);

#endif
