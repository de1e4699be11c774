"""Verification sweep: candidates at candidate_k confirmed by a b-bit MinHash verifier.

Writes benchmarks/results/verify_<corpus>.jsonl (one line per config, verifier, candidate_k,
threshold, bucket).

    PYTHONPATH=src python benchmarks/sweep_verify.py --corpus reuters --corpus shopping
"""

from __future__ import annotations

import functools
import json
import time
from pathlib import Path

import click
import numpy as np

from neardup.eval.corpora import load_corpus
from neardup.eval.groundtruth import GroundTruth
from neardup.eval.methods import (
    joined_char_ngrams,
    neardup_fingerprints,
    simhash_candidates,
)
from neardup.eval.metrics import score
from neardup.eval.perturb import BUCKETS, length_bucket
from neardup.verify import MinHashVerifier

CONFIGS = {
    "word-tf": {"analyzer": "word", "weighting": "tf"},
    "shingle2-none": {"analyzer": "shingle", "ngram_size": 2, "weighting": "none"},
    "shingle3-none": {"analyzer": "shingle", "ngram_size": 3, "weighting": "none"},
    "char5-tf": {"analyzer": "char", "ngram_size": 5, "weighting": "tf"},
    "shingle3-none-128": {"analyzer": "shingle", "ngram_size": 3, "weighting": "none", "bits": 128},
    "word-tf-128": {"analyzer": "word", "weighting": "tf", "bits": 128},
    "jchar5-none": {"analyzer": functools.partial(joined_char_ngrams, n=5), "weighting": "none"},
    "jchar4-none": {"analyzer": functools.partial(joined_char_ngrams, n=4), "weighting": "none"},
    "jchar5-none-128": {
        "analyzer": functools.partial(joined_char_ngrams, n=5),
        "weighting": "none",
        "bits": 128,
    },
    "auto-none": {"analyzer": "auto", "weighting": "none"},
    "auto-none-128": {"analyzer": "auto", "weighting": "none", "bits": 128},
}
VERIFIERS = {
    "mh64x8": MinHashVerifier(num_hashes=64, bits=8),
    "mh128x8": MinHashVerifier(num_hashes=128, bits=8),
    "mh32x16": MinHashVerifier(num_hashes=32, bits=16),
    "mh64x8n3": MinHashVerifier(num_hashes=64, bits=8, ngram=3),
    "mh128x8n3": MinHashVerifier(num_hashes=128, bits=8, ngram=3),
    "mh64x8n4": MinHashVerifier(num_hashes=64, bits=8, ngram=4),
}
THRESHOLDS = (0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8)


@click.command()
@click.option("--corpus", "corpora", multiple=True, default=("reuters", "shopping"))
@click.option("--config", "configs", multiple=True, default=tuple(CONFIGS))
@click.option("--verifier", "verifiers", multiple=True, default=("mh64x8", "mh128x8", "mh32x16"))
@click.option("--out", type=click.Path(path_type=Path), default=Path("benchmarks/results"))
def main(
    corpora: tuple[str, ...], configs: tuple[str, ...], verifiers: tuple[str, ...], out: Path
) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for corpus in corpora:
        _, texts = load_corpus(corpus)
        gt = GroundTruth.from_texts(texts)
        buckets = np.array([length_bucket(t) for t in texts])
        sketches = {}
        for vname, v in ((n, VERIFIERS[n]) for n in verifiers):
            t0 = time.perf_counter()
            sketches[vname] = v.sketch_many(texts)
            click.echo(f"{corpus} sketch {vname}: {time.perf_counter() - t0:.1f}s")
        with (out / f"verify_{corpus}.jsonl").open("a") as f:
            for name in configs:
                opts = CONFIGS[name]
                t0 = time.perf_counter()
                fps, empty = neardup_fingerprints(texts, **opts)
                fp_s = time.perf_counter() - t0
                kmax = 24 if opts.get("bits") == 128 else 12
                cand = simhash_candidates(fps, empty, kmax)
                best = (0.0, "")
                for vname, v in ((n, VERIFIERS[n]) for n in verifiers):
                    sk = sketches[vname]
                    cand.sim = v.estimate(sk[cand.i], sk[cand.j])
                    for ck in range(2, kmax + 1, 1 if kmax == 12 else 2):
                        ncand = int((cand.dist <= ck).sum())
                        for th in THRESHOLDS:
                            labels = cand.labels(ck, th)
                            for bucket in ("all", *BUCKETS):
                                sub = None if bucket == "all" else buckets == bucket
                                s = score(labels, gt, sub)
                                row = {
                                    "corpus": corpus,
                                    "config": name,
                                    "verifier": vname,
                                    "candidate_k": ck,
                                    "threshold": th,
                                    "bucket": bucket,
                                    "candidates": ncand,
                                    "fp_seconds": round(fp_s, 2),
                                    **s.as_dict(),
                                }
                                f.write(json.dumps(row) + "\n")
                                if bucket == "all" and s.f1 > best[0]:
                                    best = (
                                        s.f1,
                                        f"{vname} ck={ck} th={th} P={s.precision:.4f} "
                                        f"R={s.recall:.4f} cand={ncand}",
                                    )
                click.echo(f"{corpus:9s} {name:18s} best F1={best[0]:.4f} {best[1]}")


if __name__ == "__main__":
    main()
