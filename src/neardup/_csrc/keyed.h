/* A 64-bit key with a 32-bit value, sorted by key: the run builders of the band-key table
 * (index.c) and of the overlap gram index's saved arrays (overlap_index.c), two extension modules,
 * share it here. */
#ifndef ND_KEYED_H
#define ND_KEYED_H

#include <stdint.h>

typedef struct {
    uint64_t key;
    uint32_t val;
} nd_keyed;

static inline int nd_cmp_keyed(const void *a, const void *b) {
    uint64_t x = ((const nd_keyed *)a)->key, y = ((const nd_keyed *)b)->key;
    return (x > y) - (x < y);
}

#endif
