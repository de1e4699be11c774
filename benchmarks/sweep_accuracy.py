"""Feature x k sweep of neardup fingerprints on natural near-duplicates (Reuters, shopping reviews).

Writes one JSON line per (corpus, config, k, bucket) to benchmarks/results/sweep_<corpus>.jsonl.

    PYTHONPATH=src python benchmarks/sweep_accuracy.py --corpus reuters --corpus shopping
"""

from __future__ import annotations

import functools
import json
import time
from pathlib import Path
from typing import Any

import click
import numpy as np

from neardup.eval.corpora import load_corpus
from neardup.eval.groundtruth import GroundTruth
from neardup.eval.methods import joined_char_ngrams, neardup_fingerprints, simhash_candidates
from neardup.eval.metrics import score
from neardup.eval.perturb import BUCKETS, length_bucket

CONFIGS: dict[str, dict[str, Any]] = {
    "word-none": {"analyzer": "word", "weighting": "none"},
    "word-tf": {"analyzer": "word", "weighting": "tf"},
    "word-tfidf": {"analyzer": "word", "weighting": "tfidf"},
    "word-tf-stop": {"analyzer": "word", "weighting": "tf", "stopwords": "auto"},
    "word-tfidf-top64": {"analyzer": "word", "weighting": "tfidf", "top_n": 64},
    "shingle2-none": {"analyzer": "shingle", "ngram_size": 2, "weighting": "none"},
    "shingle3-none": {"analyzer": "shingle", "ngram_size": 3, "weighting": "none"},
    "shingle3-tf": {"analyzer": "shingle", "ngram_size": 3, "weighting": "tf"},
    "shingle4-none": {"analyzer": "shingle", "ngram_size": 4, "weighting": "none"},
    "shingle5-none": {"analyzer": "shingle", "ngram_size": 5, "weighting": "none"},
    "char3-tf": {"analyzer": "char", "ngram_size": 3, "weighting": "tf"},
    "char4-tf": {"analyzer": "char", "ngram_size": 4, "weighting": "tf"},
    "char5-tf": {"analyzer": "char", "ngram_size": 5, "weighting": "tf"},
    "char5-none": {"analyzer": "char", "ngram_size": 5, "weighting": "none"},
    "shingle3-none-128": {"analyzer": "shingle", "ngram_size": 3, "weighting": "none", "bits": 128},
    "char5-tf-128": {"analyzer": "char", "ngram_size": 5, "weighting": "tf", "bits": 128},
    "joinedchar5-none": {
        "analyzer": functools.partial(joined_char_ngrams, n=5),
        "weighting": "none",
    },
}


def _options(name: str, texts: list[str]) -> dict[str, Any]:
    opts = dict(CONFIGS[name])
    if opts.get("weighting") == "tfidf":
        from neardup.fingerprint import Fingerprinter

        base = {k: v for k, v in opts.items() if k not in ("weighting", "top_n")}
        opts["idf"] = Fingerprinter(**base).fit_idf(texts)
    return opts


@click.command()
@click.option("--corpus", "corpora", multiple=True, default=("reuters", "shopping"))
@click.option("--config", "configs", multiple=True, default=tuple(CONFIGS))
@click.option("--out", type=click.Path(path_type=Path), default=Path("benchmarks/results"))
def main(corpora: tuple[str, ...], configs: tuple[str, ...], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for corpus in corpora:
        _, texts = load_corpus(corpus)
        gt = GroundTruth.from_texts(texts)
        buckets = np.array([length_bucket(t) for t in texts])
        with (out / f"sweep_{corpus}.jsonl").open("w") as f:
            for name in configs:
                t0 = time.perf_counter()
                opts = _options(name, texts)
                fps, empty = neardup_fingerprints(texts, **opts)
                secs = time.perf_counter() - t0
                kmax = 24 if opts.get("bits") == 128 else 12
                cand = simhash_candidates(fps, empty, kmax)
                for k in range(kmax + 1):
                    labels = cand.labels(k)
                    for bucket in ("all", *BUCKETS):
                        sub = None if bucket == "all" else buckets == bucket
                        s = score(labels, gt, sub)
                        row = {
                            "corpus": corpus,
                            "config": name,
                            "k": k,
                            "bucket": bucket,
                            "fp_seconds": round(secs, 2),
                            **s.as_dict(),
                        }
                        f.write(json.dumps(row) + "\n")
                best = max(range(kmax + 1), key=lambda k: score(cand.labels(k), gt).f1)
                s = score(cand.labels(best), gt)
                click.echo(
                    f"{corpus:9s} {name:18s} fp {secs:6.1f}s best k={best:2d} "
                    f"P={s.precision:.3f} R={s.recall:.3f} F1={s.f1:.3f}"
                )


if __name__ == "__main__":
    main()
