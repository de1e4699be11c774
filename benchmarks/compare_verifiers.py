"""Reuters / reviews F1 of ``Deduplicator``: the default, the defaults before, edited copies.

    flock /tmp/neardup-bench.lock python benchmarks/compare_verifiers.py

Same input, same run, ground truth as ``bench_accuracy.py`` (exact 5-shingle Jaccard: >= 0.8
must merge, >= 0.5 may merge).
"""

from __future__ import annotations

import time

import numpy as np

from neardup.dedup import Deduplicator
from neardup.eval.corpora import load_corpus
from neardup.eval.groundtruth import GroundTruth
from neardup.eval.metrics import score
from neardup.verify import MinHashVerifier

SETTINGS = {  # name: Deduplicator kwargs
    "default (192 values, clusters of mutual duplicates)": {},
    "stop 29-31 default (128 values, star clusters)": {
        "verifier": MinHashVerifier(num_hashes=128),
        "cluster_similarity": None,
    },
    "before issue 20 (short rule under 300 chars)": {
        "verifier": MinHashVerifier(num_hashes=128, short_length=300),
        "cluster_similarity": None,
    },
    "edited-copies setting (--shingle-size 2 --threshold 0.64)": {
        "verifier": MinHashVerifier(ngram=2, band_ngram=3),
        "threshold": 0.64,
    },
}

for corpus in ("reuters", "shopping"):
    texts = load_corpus(corpus)[1]
    gt = GroundTruth.from_texts(texts)
    for name, kwargs in SETTINGS.items():
        t0 = time.perf_counter()
        labels = np.asarray(Deduplicator(**kwargs).run(texts).cluster_id, dtype=np.int64)
        secs = time.perf_counter() - t0
        s = score(labels, gt)
        print(
            f"| {corpus} | {name} | {s.precision:.4f} | {s.recall:.4f} | {s.f1:.4f} | {secs:.1f} |"
        )
