"""Methods under evaluation: texts -> cluster labels.

Two kinds, scored alike but not the same thing:

- **the product's decisions** (:func:`decision_labels`): a :class:`~neardup.dedup.Deduplicator`
  at a configuration decides the texts, and each text's label is the ``cluster_id`` it gets --
  the clusters the library and the CLI (``cluster_id`` column) give for the same input and
  configuration (the decide step's cluster rule, keep policy and floor: a duplicate joins a
  kept document's cluster only when the rule admits it, no chaining through duplicates);
- **method sweeps and anchors** (:class:`Candidates`): candidate pairs with a Hamming distance
  (and a verifier similarity) so that one fingerprinting pass can be scored at every k of a
  sweep; labels are connected components of the pairs the core's accept test lets through
  (transitive: a chain of small edits is one cluster). No product surface clusters this way; the
  anchors (PyPI ``simhash``, ``datasketch``) have no decision rule of their own either.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup.dedup.clusters import connected_components
from neardup.dedup.core import DecideConfig, accept
from neardup.index import all_pairs
from neardup.verify import MinHashVerifier, shingle_hashes

__all__ = [
    "Candidates",
    "band_candidates",
    "decision_labels",
    "minhash_lsh",
    "neardup_fingerprints",
    "pypi_simhash_fingerprints",
    "simhash_candidates",
]

IntArr = npt.NDArray[np.int64]


@dataclass
class Candidates:
    """Candidate pairs of ``n`` docs with Hamming distances (and optional verifier similarity).

    For sweeps and anchors: :meth:`labels` are connected components, not the product's clusters
    (those are :func:`decision_labels`).
    """

    n: int
    i: IntArr
    j: IntArr
    dist: IntArr
    sim: npt.NDArray[np.float64] | None = None
    seconds: dict[str, float] = field(default_factory=dict)

    def labels(self, k: int, threshold: float | None = None) -> IntArr:
        """Connected components of the pairs within k (and with verifier similarity >=
        threshold): a method sweep's labels, not the product's decisions."""
        if threshold is not None and self.sim is None:
            raise ValueError("threshold given but these candidates carry no verifier similarity")
        # the decision core's accept test (clusters here: connected components of accepted pairs)
        keep = accept(DecideConfig(k, "first", None, threshold), self.dist, None, None, self.sim)
        return connected_components(self.n, self.i[keep], self.j[keep])


def decision_labels(texts: Sequence[str], **params: Any) -> IntArr:
    """Cluster id per text as the product decides them: ``Deduplicator(**params).run(texts)``.

    The library's public API, so these labels are the library's and the CLI's clusters for the
    same texts and configuration (a duplicate is labelled with its kept document's cluster;
    exact duplicates likewise; empty texts each a cluster of their own).

    >>> decision_labels(["storm hits the coast today", "STORM hits the coast today", ""]).tolist()
    [0, 0, 1]
    """
    from neardup.dedup import Deduplicator

    decisions = Deduplicator(**params).run(list(texts))
    return np.asarray(decisions.cluster_id, dtype=np.int64)


def neardup_fingerprints(
    texts: Sequence[str], **options: Any
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.bool_]]:
    """``(fingerprints, empty_mask)`` from ``neardup.fingerprint.Fingerprinter(**options)``."""
    from neardup.fingerprint import Fingerprinter

    fp = Fingerprinter(**options)
    fps, empty = fp.fingerprint_many(list(texts), return_mask=True)
    return np.asarray(fps), np.asarray(empty, dtype=bool)


def pypi_simhash_fingerprints(
    texts: Sequence[str],
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.bool_]]:
    """Fingerprints of PyPI ``simhash`` (leonsim) with its defaults: ``Simhash(text).value``.

    Its default features are lower-cased character 4-grams of the word characters, md5-hashed.
    """
    fps = np.fromiter((_pypi_simhash_one(t) for t in texts), dtype=np.uint64, count=len(texts))
    return fps, np.zeros(len(texts), dtype=bool)


def _pypi_simhash_one(text: str) -> int:
    Simhash = anchor_module("simhash").Simhash

    try:
        return int(Simhash(text).value)
    except OverflowError:
        # simhash 2.1 with numpy 2 overflows uint8 when one feature repeats > 255 times;
        # same features with counts capped at 255 (affects a handful of degenerate texts)
        from collections import Counter

        counts = Counter(Simhash("")._tokenize(text))
        return int(Simhash({f: min(c, 255) for f, c in counts.items()}).value)


def simhash_candidates(
    fps: np.ndarray,
    empty: np.ndarray,
    k_max: int,
    *,
    texts: Sequence[str] | None = None,
    verifier: MinHashVerifier | None = None,
) -> Candidates:
    """All pairs within ``k_max`` among non-empty docs; verifier similarities when given."""
    t0 = time.perf_counter()
    keep = np.flatnonzero(~np.asarray(empty, dtype=bool))
    i, j, d = all_pairs(fps[keep], k_max)
    i, j = keep[i], keep[j]
    secs = {"pairs": time.perf_counter() - t0}
    sim = None
    if verifier is not None:
        if texts is None:
            raise ValueError("verification needs the texts")
        t1 = time.perf_counter()
        # batch mode: only documents that occur in a candidate pair need a sketch
        docs, inv = np.unique(np.concatenate([i, j]), return_inverse=True)
        sk = verifier.sketch_many([texts[d] for d in docs.tolist()])
        sim = verifier.similarity(sk[inv[: len(i)]], sk[inv[len(i) :]])
        secs["verify"] = time.perf_counter() - t1
    return Candidates(len(fps), i, j, d, sim, secs)


def band_candidates(
    fps: np.ndarray, empty: np.ndarray, texts: Sequence[str], verifier: MinHashVerifier
) -> Candidates:
    """Pairs sharing a MinHash LSH band key (the Deduplicator's default design), verified."""
    from neardup.dedup.candidates import BandCandidates

    t0 = time.perf_counter()
    keep = np.flatnonzero(~np.asarray(empty, dtype=bool))
    sk = np.asarray(verifier.sketch_many([texts[d] for d in keep.tolist()]))
    i, j, d = BandCandidates().pairs(np.asarray(fps, np.uint64)[keep], sk)
    sim = verifier.similarity(sk[i], sk[j])
    secs = {"pairs+verify": time.perf_counter() - t0}
    return Candidates(len(fps), keep[i], keep[j], d, sim, secs)


def anchor_module(name: str) -> Any:
    """Import an anchor library of the ``bench`` extra, or say how to install it."""
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:
        raise ImportError(
            f"the {name!r} baseline needs the anchor libraries: pip install 'neardup[bench]'"
        ) from None


def minhash_lsh(
    texts: Sequence[str], threshold: float = 0.8, num_perm: int = 128, ngram: int = 5
) -> IntArr:
    """Cluster labels by ``datasketch`` MinHashLSH on word 5-shingles / CJK char 5-grams.

    Shingles are our :func:`shingle_hashes` values (so both sides see identical shingles), fed
    to datasketch with an identity hash on their low 32 bits.
    """
    datasketch = anchor_module("datasketch")
    MinHash, MinHashLSH = datasketch.MinHash, datasketch.MinHashLSH

    def low32(x: Any) -> int:
        return int(x) & 0xFFFFFFFF

    lsh = MinHashLSH(threshold=threshold, num_perm=num_perm)
    sigs: list[Any] = []
    for idx, t in enumerate(texts):
        m = MinHash(num_perm=num_perm, hashfunc=low32)
        sh = shingle_hashes(t, ngram)
        if len(sh):
            m.update_batch(sh.tolist())
            lsh.insert(idx, m)
        sigs.append(m if len(sh) else None)
    ei: list[int] = []
    ej: list[int] = []
    for idx, m in enumerate(sigs):
        if m is None:
            continue
        for other in lsh.query(m):
            if other != idx:
                ei.append(idx)
                ej.append(int(other))
    return connected_components(len(texts), ei, ej)


MethodFn = Callable[[Sequence[str]], IntArr]


def joined_char_ngrams(text: str, n: int = 5) -> list[str]:
    """Character n-grams over letters and digits only (punctuation and spaces dropped), NFKC.

    A callable analyzer for ``Fingerprinter(analyzer=...)`` that tests the effect of ignoring
    separators in CJK text (the built-in "char" analyzer keeps one space per separator run).

    >>> joined_char_ngrams("一般！！一般", 3)
    ['一般一', '般一般']
    """
    import unicodedata

    chars = "".join(_WORD_RE.findall(unicodedata.normalize("NFKC", text).casefold()))
    if not chars:
        return []
    if len(chars) <= n:
        return [chars]
    return [chars[p : p + n] for p in range(len(chars) - n + 1)]


_WORD_RE = __import__("re").compile(r"\w+")
