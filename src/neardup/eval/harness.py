"""Run named methods over a corpus and score them: precision, recall, F1, ARI, seconds.

A method is a callable ``texts -> cluster labels`` (one label per text). The ``neardup`` rows
score **the product's decisions** (:func:`neardup_decisions`: a ``Deduplicator`` at that
configuration decides the texts, labels are its ``cluster_id``, as in the library and the CLI):

- ``neardup``: the defaults (``Deduplicator()``: MinHash band candidates, verified, clusters
  bounded by the cluster rule) -- see ``docs/ACCURACY.md``;
- ``neardup-radius``: ``Deduplicator(k=DEFAULT_CANDIDATE_K)`` (exact Hamming radius candidates);
- ``neardup-unverified``: ``Deduplicator(verifier=None)`` (plain SimHash at k=8, star clusters).

The other rows are **method sweeps and anchors**, scored as connected components of accepted
pairs (no decision rule of their own; :func:`neardup_method`):

- ``neardup-components`` / ``neardup-components-radius``: the pairs the defaults' candidates
  and verifier accept, chained transitively (what the product's cluster rule declines to do);
- ``pypi-simhash``: PyPI ``simhash`` default features (``Simhash(text)``), pairs within k=3;
- ``classic``: word unigrams, TF-IDF, k=3; ``text-dedup``: word 3-shingles, unweighted, k=3;
- ``minhash-lsh``: ``datasketch`` MinHashLSH(threshold=0.8, num_perm=128) on 5-shingles.

>>> from neardup.eval.groundtruth import GroundTruth
>>> texts = ["the cat sat on the mat today", "the cat sat on the mat today", "dogs bark"]
>>> r = run_method("text-dedup", texts, GroundTruth.from_texts(texts))
>>> (r.method, r.scores.f1)
('text-dedup', 1.0)
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup.dedup.pipeline import PLAIN_K, VERIFIED_K
from neardup.eval.groundtruth import GroundTruth
from neardup.eval.methods import (
    band_candidates,
    decision_labels,
    minhash_lsh,
    neardup_fingerprints,
    pypi_simhash_fingerprints,
    simhash_candidates,
)
from neardup.eval.metrics import Scores, score
from neardup.verify import MinHashVerifier

__all__ = [
    "DEFAULT_CANDIDATE_K",
    "DEFAULT_FINGERPRINTER",
    "DEFAULT_K",
    "DEFAULT_VERIFIER",
    "METHODS",
    "MethodResult",
    "neardup_decisions",
    "neardup_method",
    "product_params",
    "run_method",
]

IntArr = npt.NDArray[np.int64]
Method = Callable[[Sequence[str]], IntArr]

#: Recommended defaults, chosen by the sweeps in docs/ACCURACY.md: word 3-shingles, or for
#: mostly-CJK text character 5-grams over letters and digits; unweighted; 64 bits.
DEFAULT_FINGERPRINTER: dict[str, Any] = {
    "bits": 64,
    "analyzer": "auto",
    "ngram_size": 3,
    "cjk_ngram_size": 5,
    "weighting": "none",
}
# the library's own defaults (one source of truth): plain k, and the verified candidate radius
DEFAULT_K = PLAIN_K
DEFAULT_CANDIDATE_K = int(os.environ.get("NEARDUP_EVAL_CANDIDATE_K", VERIFIED_K))
DEFAULT_VERIFIER = MinHashVerifier()


@dataclass(frozen=True)
class MethodResult:
    """Scores and wall time of one method on one corpus."""

    method: str
    scores: Scores
    seconds: float
    note: str = ""


def _fit_idf(texts: Sequence[str], options: dict[str, Any]) -> dict[str, Any]:
    if options.get("weighting") != "tfidf" or options.get("idf") is not None:
        return options
    from neardup.fingerprint import Fingerprinter

    base = {k: v for k, v in options.items() if k not in ("weighting", "top_n", "idf")}
    return {**options, "idf": Fingerprinter(**base).fit_idf(texts)}


def _neardup(
    texts: Sequence[str],
    *,
    options: dict[str, Any],
    k: int,
    verifier: MinHashVerifier | None,
    candidate_k: int | None,
) -> IntArr:
    fps, empty = neardup_fingerprints(texts, **_fit_idf(texts, options))
    if verifier is None:
        return simhash_candidates(fps, empty, k).labels(k)
    if candidate_k is None:  # the default design: shared MinHash band, no Hamming limit
        bands = band_candidates(fps, empty, texts, verifier)
        return bands.labels(64, verifier.threshold)
    ck = candidate_k
    cand = simhash_candidates(fps, empty, ck, texts=texts, verifier=verifier)
    return cand.labels(ck, verifier.threshold)  # every candidate is verified


def neardup_method(
    options: dict[str, Any] | None = None,
    *,
    k: int = DEFAULT_K,
    verifier: MinHashVerifier | None = DEFAULT_VERIFIER,
    candidate_k: int | None = DEFAULT_CANDIDATE_K,
) -> Method:
    """A method sweep: Fingerprinter options, k, and optional verification at candidate_k,
    scored as connected components of the accepted pairs (not the product's clusters: those
    are :func:`neardup_decisions`).

    With a verifier, every pair within ``candidate_k`` is a candidate and is accepted only when
    the verifier confirms it (``k`` is then unused); ``candidate_k=None``: pairs sharing a
    MinHash band. ``verifier=None`` gives plain SimHash at ``k``.
    """
    opts = dict(DEFAULT_FINGERPRINTER if options is None else options)
    return functools.partial(
        _neardup, options=opts, k=k, verifier=verifier, candidate_k=candidate_k
    )


def product_params(**params: Any) -> dict[str, Any]:
    """``Deduplicator`` parameters of eval's configuration: the default fingerprinter and
    verifier, then ``params`` (``product_params()`` is ``Deduplicator()``'s configuration).

    >>> sorted(product_params(k=14))
    ['fingerprinter', 'k', 'verifier']
    """
    from neardup.fingerprint import Fingerprinter

    return {
        "fingerprinter": Fingerprinter(**DEFAULT_FINGERPRINTER),
        "verifier": DEFAULT_VERIFIER,
        **params,
    }


def _decide(texts: Sequence[str], **params: Any) -> IntArr:
    return decision_labels(texts, **product_params(**params))


def neardup_decisions(**params: Any) -> Method:
    """The product at a configuration: labels are the ``cluster_id`` of
    ``Deduplicator(**product_params(**params)).run(texts)``, the library's and CLI's clusters."""
    return functools.partial(_decide, **params)


def _pypi_simhash(texts: Sequence[str], k: int = 3) -> IntArr:
    fps, empty = pypi_simhash_fingerprints(texts)
    return simhash_candidates(fps, empty, k).labels(k)


METHODS: dict[str, tuple[Method, str]] = {
    "neardup": (
        neardup_decisions(),
        "the product's decisions with the defaults (Deduplicator(): band candidates, verified)",
    ),
    "neardup-radius": (
        neardup_decisions(k=DEFAULT_CANDIDATE_K),
        f"the product's decisions, Deduplicator(k={DEFAULT_CANDIDATE_K}): radius candidates",
    ),
    "neardup-unverified": (
        neardup_decisions(verifier=None),
        f"the product's decisions, Deduplicator(verifier=None): k={DEFAULT_K}, no verification",
    ),
    "neardup-components": (
        neardup_method(candidate_k=None),
        "sweep: connected components of the defaults' verified band pairs (not the product)",
    ),
    "neardup-components-radius": (
        neardup_method(),
        f"sweep: connected components of verified pairs within Hamming {DEFAULT_CANDIDATE_K}",
    ),
    "pypi-simhash": (
        _pypi_simhash,
        "Simhash(text) fingerprints + exact all-pairs at k=3 (same pairs as SimhashIndex(k=3))",
    ),
    "classic": (
        neardup_method({"analyzer": "word", "weighting": "tfidf"}, k=3, verifier=None),
        "word unigrams, TF-IDF fit on the corpus, 64 bits, k=3",
    ),
    "text-dedup": (
        neardup_method(
            {"analyzer": "shingle", "ngram_size": 3, "weighting": "none"}, k=3, verifier=None
        ),
        "word 3-shingles, unweighted, 64 bits, k=3",
    ),
    "minhash-lsh": (minhash_lsh, "datasketch MinHashLSH(threshold=0.8, num_perm=128), 5-shingles"),
}


def run_method(
    name: str, texts: Sequence[str], gt: GroundTruth, method: Method | None = None
) -> MethodResult:
    """Run a named (or given) method over ``texts`` and score it against ``gt``."""
    note = ""
    if method is None:
        if name not in METHODS:
            raise ValueError(f"unknown method {name!r}; choose one of {sorted(METHODS)}")
        method, note = METHODS[name]
    t0 = time.perf_counter()
    labels = method(texts)
    seconds = time.perf_counter() - t0
    return MethodResult(name, score(labels, gt), seconds, note)
