/* The hardware's floor for the gram index's look-up (issue 25, benchmarks/README.md "Overlap",
 * Cost): the probe of overlap.c's slot tables alone (256 parts at load 0.53, 8-byte slots,
 * linear probing, the home slot asked for AHEAD probes ahead, 2 MiB pages asked for), absent
 * keys, 227 probes a query as a news-length document's grams. Run it at the slot count of a
 * 10^5-document index (~9x10^6 keys) and of a 10^6-document one (~9x10^7): the ratio of the two
 * is what any index with this access pattern pays on the machine.
 *
 *     cc -O2 -o /tmp/probe_floor benchmarks/probe_floor.c
 *     /tmp/probe_floor 9000000 1 16; /tmp/probe_floor 90000000 1 16   # keys, huge pages, ahead
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

typedef struct {
    uint32_t lo, run;
} slot_t;
typedef struct {
    slot_t *slots;
    int64_t cap;
} part_t;
static part_t parts[256];
static uint64_t state = 88172645463325252ull;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint64_t rnd(void) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return state * 0x2545F4914F6CDD1Dull;
}

static int64_t home(const part_t *pt, uint32_t lo) {
    return (int64_t)(((uint64_t)lo * (uint64_t)pt->cap) >> 32);
}

static void *table(size_t size, int huge) {
    const size_t h = (size_t)2 << 20;
    char *m = mmap(NULL, size + h, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) exit(1);
    char *p = (char *)(((uintptr_t)m + h - 1) & ~(uintptr_t)(h - 1));
#ifdef MADV_HUGEPAGE
    if (huge) madvise(p, size, MADV_HUGEPAGE);
#endif
    memset(p, 0, size);
    return p;
}

int main(int argc, char **argv) {
    if (argc < 4) return fprintf(stderr, "usage: probe_floor KEYS HUGE(0|1) AHEAD\n"), 2;
    const int64_t keys = atol(argv[1]), cap = (int64_t)((double)keys / 256 / 0.53);
    const int huge = atoi(argv[2]), ahead = atoi(argv[3]), n = 227, queries = 20000;
    for (int p = 0; p < 256; p++) parts[p].cap = cap, parts[p].slots = table(8 * (size_t)cap, huge);
    for (int64_t k = 0; k < keys; k++) {
        uint64_t h = rnd();
        part_t *pt = &parts[h >> 56];
        int64_t i = home(pt, (uint32_t)h);
        while (pt->slots[i].run) i = i + 1 < pt->cap ? i + 1 : 0;
        pt->slots[i].lo = (uint32_t)h, pt->slots[i].run = 1;
    }
    uint64_t *h = malloc(8 * (size_t)n * queries);
    for (int64_t i = 0; i < (int64_t)n * queries; i++) h[i] = rnd();
    int64_t found = 0;
    double t0 = now();
    for (int q = 0; q < queries; q++) {
        const uint64_t *hq = h + (int64_t)q * n;
        for (int i = 0; i < n; i++) {
            if (i + ahead < n) {
                const part_t *pa = &parts[hq[i + ahead] >> 56];
                __builtin_prefetch(&pa->slots[home(pa, (uint32_t)hq[i + ahead])]);
            }
            const part_t *pt = &parts[hq[i] >> 56];
            const uint32_t lo = (uint32_t)hq[i];
            int64_t j = home(pt, lo);
            while (pt->slots[j].run && pt->slots[j].lo != lo) j = j + 1 < pt->cap ? j + 1 : 0;
            found += pt->slots[j].run != 0;
        }
    }
    double t1 = now();
    printf("keys %ld, tables %ld MiB, huge pages %d, ahead %d: %.1f ns a probe (%ld found)\n",
           (long)keys, (long)(8 * cap * 256 >> 20), huge, ahead,
           (t1 - t0) / ((double)n * queries) * 1e9, (long)found);
    return 0;
}
