"""Cost of verification: time and memory of the verified vs the unverified pipeline.

    PYTHONPATH=src python benchmarks/bench_verify_cost.py      # ~1 min on 2 shared cores

Unverified: fingerprints + all_pairs(k=8) + components. Verified: fingerprints +
all_pairs(candidate_k=18) + sketches + similarity + components, with every document sketched
(streaming: a sketch is stored per kept document) or only documents in a candidate pair
(batch). Also the Deduplicator end to end, with and without the verifier. Best of 2 runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial

import click
import numpy as np

from neardup.dedup import Deduplicator
from neardup.dedup.clusters import connected_components
from neardup.eval.corpora import load_corpus
from neardup.eval.harness import (
    DEFAULT_CANDIDATE_K,
    DEFAULT_FINGERPRINTER,
    DEFAULT_K,
    DEFAULT_VERIFIER,
)
from neardup.fingerprint import Fingerprinter
from neardup.index import all_pairs


def best_of(fn: Callable[[], object], runs: int = 2) -> float:
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return min(out)


def unverified(texts: list[str], fp: Fingerprinter) -> None:
    fps = fp.fingerprint_many(texts)
    i, j, _ = all_pairs(fps, DEFAULT_K)
    connected_components(len(texts), i, j)


def verified(texts: list[str], fp: Fingerprinter, lazy: bool) -> None:
    v = DEFAULT_VERIFIER
    fps = fp.fingerprint_many(texts)
    i, j, _ = all_pairs(fps, DEFAULT_CANDIDATE_K)
    if lazy:
        docs, inv = np.unique(np.concatenate([i, j]), return_inverse=True)
        sk = v.sketch_many([texts[d] for d in docs.tolist()])
        a, b = sk[inv[: len(i)]], sk[inv[len(i) :]]
    else:
        sk = v.sketch_many(texts)
        a, b = sk[i], sk[j]
    keep = v.similarity(a, b) >= v.threshold
    connected_components(len(texts), i[keep], j[keep])


def dedup(texts: list[str], fp: Fingerprinter, verify: bool) -> None:
    if verify:
        dd = Deduplicator(
            fingerprinter=fp,
            k=DEFAULT_CANDIDATE_K,
            verifier=DEFAULT_VERIFIER,
            candidate_k=DEFAULT_CANDIDATE_K,
        )
    else:
        dd = Deduplicator(fingerprinter=fp, k=DEFAULT_K)
    dd.run(texts)


@click.command()
@click.option("--corpus", "corpora", multiple=True, default=("reuters", "shopping"))
def main(corpora: tuple[str, ...]) -> None:
    fp = Fingerprinter(**DEFAULT_FINGERPRINTER)
    v = DEFAULT_VERIFIER
    click.echo("| corpus | docs | step | seconds | ratio to unverified |")
    click.echo("|---|---|---|---|---|")
    for corpus in corpora:
        _, texts = load_corpus(corpus)
        n = len(texts)
        steps = {
            "fingerprints only": partial(fp.fingerprint_many, texts),
            "sketches only (all docs)": partial(v.sketch_many, texts),
            f"unverified (k={DEFAULT_K})": partial(unverified, texts, fp),
            f"verified, all docs sketched (candidate_k={DEFAULT_CANDIDATE_K})": partial(
                verified, texts, fp, False
            ),
            "verified, candidate docs sketched": partial(verified, texts, fp, True),
            f"Deduplicator.run unverified (k={DEFAULT_K})": partial(dedup, texts, fp, False),
            "Deduplicator.run verified": partial(dedup, texts, fp, True),
        }
        times = {name: best_of(fn) for name, fn in steps.items()}
        base = times[f"unverified (k={DEFAULT_K})"]
        dbase = times[f"Deduplicator.run unverified (k={DEFAULT_K})"]
        for name, secs in times.items():
            ref = dbase if name.startswith("Deduplicator") else base
            click.echo(f"| {corpus} | {n} | {name} | {secs:.2f} | {secs / ref:.2f} |")
        i, _, _ = all_pairs(fp.fingerprint_many(texts), DEFAULT_CANDIDATE_K)
        click.echo(
            f"| {corpus} | {n} | candidate pairs at {DEFAULT_CANDIDATE_K} | {len(i)} | "
            f"sketch {v.bytes_per_doc} B/doc |"
        )


if __name__ == "__main__":
    main()
