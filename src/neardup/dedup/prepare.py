"""Per-document inputs of the decide step, computed without any state: fingerprints, the empty
mask, exact-text keys, timestamps, lengths and verifier sketches (a :class:`PreparedBatch`).

Every engine prepares documents with this one function (the library through
:meth:`Deduplicator.prepare <neardup.dedup.pipeline.Deduplicator.prepare>`, Spark per Arrow
batch), so they decide on the same numbers.

>>> from neardup.fingerprint import Fingerprinter
>>> c = prepare_chunk(Fingerprinter(), None, ["a b c d", ""], None, timed=False, n_jobs=1)
>>> c.empty.tolist(), c.lengths.tolist()
([False, True], [7, 0])
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from neardup._backend import C, native
from neardup.dedup.decisions import PreparedBatch
from neardup.dedup.exact import exact_keys
from neardup.features.charclass import char_classes
from neardup.features.normalize import pack_prepared
from neardup.fingerprint import Fingerprinter
from neardup.io.documents import parse_timestamp
from neardup.verify import _MODES as _SKETCH_MODES
from neardup.verify import MinHashVerifier

OVERLAP_MIN = 1024  # texts per prepare() from which the sketch runs on a second thread

Packed = tuple[np.ndarray, np.ndarray]


def prepare_chunk(
    fingerprinter: Any,
    verifier: Any,
    texts: Sequence[str],
    timestamps: Sequence[Any] | None,
    *,
    timed: bool,
    n_jobs: int,
) -> PreparedBatch:
    """The :class:`PreparedBatch` of ``texts``; ``timed``: timestamps are read (a window or
    ``keep='newest'``), so they are required and may not be NaN."""
    texts = list(texts)
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise TypeError(f"texts[{i}] is {type(t).__name__}, expected str")
    # fingerprints, exact keys and MinHash sketches read the same prepared bytes: pack once
    packed = pack_prepared(texts) if native() is not None else None
    minhash = packed is not None and type(verifier) is MinHashVerifier
    every = None  # MinHash sketches of every text (rows of empty texts are dropped below)
    fused = _fused(fingerprinter, verifier, texts, packed) if minhash and n_jobs == 1 else None
    if fused is not None:
        fps, empty, every = fused
    elif minhash and len(texts) >= OVERLAP_MIN and n_jobs == 1:  # (workers fork: no thread)
        # the sketch kernel releases the GIL: on a second core it runs beside fingerprinting
        with ThreadPoolExecutor(1) as pool:
            side = pool.submit(_sketch_all, verifier, packed, texts)
            fps, empty = _fingerprints(fingerprinter, texts, packed, n_jobs)
            every = side.result()
    else:
        fps, empty = _fingerprints(fingerprinter, texts, packed, n_jobs)
        if minhash:
            every = _sketch_all(verifier, packed, texts)
    return PreparedBatch(
        np.asarray(fps, np.uint64),
        empty,
        _keys(texts, empty, packed),
        _timestamps(timestamps, len(texts), timed=timed),
        np.fromiter(map(len, texts), np.int64, len(texts)),
        None if verifier is None else _sketches(verifier, texts, empty, every),
    )


def _fused(fingerprinter: Any, verifier: Any, texts: list[str], packed: Any) -> Any:
    """(fingerprints, empty mask, every text's sketch) from the C ``prepare_batch``, which
    tokenizes each text once for both (issue 24: the two tokenizer passes were a fifth of the
    mixed collection's CPU time); None where it does not apply (the separate kernels then
    give the same values): no extension, a user's fingerprinter, an analyzer or markup.
    Texts whose fingerprint reads segmented Han words (the kernel flags them: a Han
    character, and no char features) get theirs from ``fingerprint_many``."""
    if type(fingerprinter) is not Fingerprinter or native() is None:  # C only
        return None
    if callable(fingerprinter.analyzer) or fingerprinter.markup:
        return None
    buf, off = packed
    n = len(texts)
    fps = np.zeros((n, fingerprinter.bits // 64), dtype=np.uint64)
    empty = np.zeros(n, dtype=bool)
    segment = np.zeros(n, dtype=bool)
    ngrams = np.array(verifier._ngrams(), dtype=np.int64)
    mins = np.empty((n, verifier.num_hashes * ngrams.size), dtype=np.uint64)
    conf = fingerprinter._conf()  # mode .. seed, n_cjk: prepare_batch's arguments in order
    sketch = (_SKETCH_MODES[verifier.mode], ngrams, verifier.seed, verifier._salts())

    def run(lo: int, hi: int) -> None:
        part = (fps[lo:hi], empty[lo:hi], *sketch, mins[lo:hi], segment[lo:hi])
        C.prepare_batch(buf, off[lo : hi + 1], char_classes(), *conf, *part)

    if n >= OVERLAP_MIN:  # the kernel releases the GIL: half the bytes on a second core
        mid = int(np.searchsorted(off, (int(off[0]) + int(off[-1])) // 2))
        with ThreadPoolExecutor(1) as pool:
            side = pool.submit(run, 0, mid)
            run(mid, n)
            side.result()
    else:
        run(0, n)
    if segment.any():
        rows = np.flatnonzero(segment)
        seg_fps, seg_empty = fingerprinter.fingerprint_many(
            [texts[i] for i in rows.tolist()], return_mask=True
        )
        fps[rows] = np.asarray(seg_fps, dtype=np.uint64).reshape(rows.size, -1)
        empty[rows] = seg_empty
    every = verifier._finish(mins, [len(t) for t in texts])
    return (fps[:, 0] if fingerprinter.bits == 64 else fps), empty, every


def _fingerprints(
    fingerprinter: Any, texts: list[str], packed: Packed | None, n_jobs: int
) -> tuple[np.ndarray, np.ndarray]:
    own = type(fingerprinter) is Fingerprinter  # (not a user's duck-typed one)
    if packed is not None and n_jobs == 1 and own:  # prepared bytes packed already
        fps, empty = fingerprinter._fingerprint_packed(texts, packed)
    else:
        fps, empty = fingerprinter.fingerprint_many(texts, return_mask=True, n_jobs=n_jobs)
    return np.asarray(fps), np.asarray(empty, bool)


def _keys(texts: list[str], empty: np.ndarray, packed: Packed | None) -> list[int]:
    """Exact-text keys (xxh3_128 of the normalised text), 0 for texts without features."""
    live = np.flatnonzero(~empty).tolist()
    keys = [0] * len(texts)
    if packed is not None:
        every_key = exact_keys(texts, packed=packed)
        for i in live:
            keys[i] = every_key[i]
    else:
        for i, key in zip(live, exact_keys([texts[i] for i in live]), strict=True):
            keys[i] = key
    return keys


def _timestamps(timestamps: Sequence[Any] | None, n: int, *, timed: bool) -> np.ndarray:
    if timestamps is None:
        if timed:
            raise ValueError("timestamps are required with window=... or keep='newest'")
        return np.full(n, np.nan)
    ts = epoch_seconds(timestamps)
    if ts.shape != (n,):
        raise ValueError(f"got {len(ts)} timestamps for {n} texts")
    check_timestamps(ts, needed=timed)
    return ts


def _sketches(verifier: Any, texts: list[str], empty: np.ndarray, every: Any) -> np.ndarray:
    """Verifier sketches of the texts with features; the rows of the other texts stay 0."""
    rows = np.flatnonzero(~empty)
    if every is not None:
        part = every[rows]
    else:
        part = np.asarray(verifier.sketch_many([texts[i] for i in rows.tolist()]))
    if part.ndim != 2 or part.shape[0] != rows.size:
        raise ValueError(
            f"verifier.sketch_many returned shape {part.shape} for "
            f"{rows.size} texts; expected (n, width)"
        )
    sketches = np.zeros((len(texts), part.shape[1]), dtype=part.dtype)
    sketches[rows] = part
    return sketches


def _sketch_all(verifier: Any, packed: Any, texts: list[str]) -> Any:
    return verifier.sketch_packed(*packed, [len(t) for t in texts])


def epoch_seconds(values: Sequence[Any]) -> np.ndarray:
    """Timestamps as float64 epoch seconds: numbers as they are (None: NaN), dates (ISO 8601
    strings, ``datetime``, Reuters-style dates) read by the CLI's parser
    (:func:`~neardup.io.parse_timestamp`); one it cannot read is refused naming it.

    >>> epoch_seconds([86400, "1970-01-02T00:00:01Z", None]).tolist()
    [86400.0, 86401.0, nan]
    >>> epoch_seconds([1.0, "yesterday"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: timestamps[1]: cannot read timestamp 'yesterday': use epoch seconds or ISO 8601...
    """
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):  # dates: read one by one, as the CLI reads them
        pass
    out = np.full(len(values), np.nan)
    for i, v in enumerate(values):
        try:
            out[i] = np.nan if v is None else parse_timestamp(v)
        except ValueError as exc:
            raise ValueError(f"timestamps[{i}]: {exc}") from None
    return out


def check_timestamps(ts: np.ndarray, *, needed: bool) -> None:
    """Refuse infinite timestamps, and NaN where a window or ``keep='newest'`` reads them (NaN
    is "no timestamp" otherwise): a NaN would never match and an infinity would expire every
    kept document, both silently.

    >>> check_timestamps(np.array([1.0, np.inf]), needed=False)
    Traceback (most recent call last):
    ...
    ValueError: timestamps[1] is inf: give finite epoch seconds (e.g. 1700000000.0)
    """
    bad = np.isinf(ts) | (np.isnan(ts) if needed else False)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"timestamps[{i}] is {float(ts[i])}: give finite epoch seconds (e.g. 1700000000.0)"
        )
