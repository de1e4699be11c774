"""Fingerprinter: text -> weighted features -> 64- or 128-bit SimHash.

>>> fp = Fingerprinter()
>>> a = fp.fingerprint("Oil prices rose sharply on Monday after the OPEC meeting in Vienna.")
>>> b = fp.fingerprint("Oil prices rose sharply on Monday after an OPEC meeting in Vienna.")
>>> 0 <= a < 2**64 and hamming(a, b) <= 10
True
>>> fp.fingerprint_many(["same text", "same text"]).tolist()[0] == fp.fingerprint("same text")
True
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, overload

import numpy as np
import numpy.typing as npt

from neardup._params import FrozenParams
from neardup.errors import BadInputError, ConfigMismatchError
from neardup.features.charclass import char_classes, table_digest
from neardup.features.extract import feature_list, text_is_cjk
from neardup.features.idf import IdfTable
from neardup.features.kernels import (
    AUTO_MODE,
    CHAR_MODE,
    SHINGLE_MODE,
    W_NONE,
    W_TF,
    W_TFIDF,
    WORD_MODE,
    fingerprint_batch,
    is_cjk,
    simhash_words,
)
from neardup.features.normalize import check_text, pack_prepared, prepare_text, strip_markup
from neardup.features.segment import (
    SEGMENTERS,
    Cutter,
    may_contain_han,
    segment_han_runs,
    segmenter,
)
from neardup.features.stopwords import stopwords as resolve_stopwords
from neardup.hashing import key_of

FORMAT_VERSION = 1
ANALYZERS = {"word": WORD_MODE, "shingle": SHINGLE_MODE, "char": CHAR_MODE, "auto": AUTO_MODE}
WEIGHTINGS = {"none": W_NONE, "tf": W_TF, "tfidf": W_TFIDF}
DEFAULT_NGRAM = {"word": 1, "shingle": 3, "char": 5, "auto": 3}
Analyzer = str | Callable[[str], Iterable[str] | Mapping[str, float]]


class EmptyTextError(BadInputError):
    """A text has no features (empty, only spaces or punctuation, all stop words).

    Such a text cannot be fingerprinted: any value would falsely match every other empty text.
    """


@overload
def hamming(a: int, b: int) -> int: ...
@overload
def hamming(a: npt.ArrayLike, b: npt.ArrayLike) -> npt.NDArray[np.unsignedinteger[Any]]: ...
def hamming(a: npt.ArrayLike, b: npt.ArrayLike) -> int | npt.NDArray[np.unsignedinteger[Any]]:
    """Number of differing bits: ints give an int, uint64 arrays give an array (``(n, 2)``
    128-bit rows are summed over their two words).

    >>> hamming(0b1011, 0b0001)
    2
    >>> hamming(np.array([1, 3], dtype=np.uint64), np.uint64(0)).tolist()
    [1, 2]
    """
    if isinstance(a, int) and isinstance(b, int):
        return (a ^ b).bit_count()
    d = np.bitwise_count(np.bitwise_xor(a, b))
    out: npt.NDArray[np.unsignedinteger[Any]] = d.sum(axis=-1) if np.ndim(d) == 2 else d
    return out


@dataclass(kw_only=True, eq=False, repr=False)  # the parameters, written once
class Fingerprinter(FrozenParams):
    """Turn texts into SimHash fingerprints, a pure function of (text, config).

    Parameters (keyword-only):
        bits: 64 or 128. 128-bit values are ``(hi << 64) | lo``; their high half equals the
            64-bit fingerprint of the same config.
        analyzer: ``"auto"`` (word shingles, or for mostly-CJK text character n-grams over the
            word characters), ``"word"`` (tokens), ``"shingle"`` (word n-grams), ``"char"``
            (character n-grams), or a callable ``raw_text -> features | {feature: weight}``.
        ngram_size: n for shingle/char/auto (defaults 3, 5 and 3 words).
        cjk_ngram_size: n of the character n-grams ``"auto"`` uses for CJK text (default 5).
        weighting: ``"none"`` (binary), ``"tf"`` (counts), ``"tfidf"`` (counts x ``idf``).
        idf: an :class:`IdfTable`, required for ``"tfidf"``.
        stopwords: None, ``"en"``, ``"zh"``, ``"auto"`` (both) or your own words.
        top_n: keep only the ``top_n`` heaviest features.
        segmenter: ``"auto"`` (rjieba if installed, else jieba), ``"rjieba"``, ``"jieba"``: Chinese
            word segmentation of Han runs (same cuts either way); None: one token per Han character.
        markup: strip HTML/XML tags and decode entities first.
        seed: 0 <= seed < 2**64; another seed gives an independent fingerprint family.

    Parameters are read-only after construction (they determine :attr:`config_id`); make a
    changed configuration with :meth:`replace`. Resolved values end with ``_``:
    ``ngram_size_`` (the n actually used) and ``stopwords_`` (the stop-word set).

    >>> fp = Fingerprinter()
    >>> fp.replace(stopwords="en").config_id != fp.config_id
    True
    """

    bits: int = 64
    analyzer: Analyzer = "auto"
    ngram_size: int | None = None
    cjk_ngram_size: int = 5
    weighting: str = "none"
    idf: IdfTable | None = None
    stopwords: str | Iterable[str] | None = None
    top_n: int | None = None
    segmenter: str | None = "auto"
    markup: bool = False
    seed: int = 0

    def __post_init__(self) -> None:
        if not (self.stopwords is None or isinstance(self.stopwords, str)):
            self.stopwords = tuple(self.stopwords)  # as given, but it cannot change either
        self._validate()
        self._freeze()

    # -- validation and derived state ------------------------------------------------------
    def _validate(self) -> None:
        if self.bits not in (64, 128):
            raise BadInputError(f"bits must be 64 or 128, got {self.bits!r}")
        if not callable(self.analyzer) and self.analyzer not in ANALYZERS:
            raise BadInputError(
                f"analyzer must be one of {sorted(ANALYZERS)} or a callable, got {self.analyzer!r}"
            )
        if self.weighting not in WEIGHTINGS:
            raise BadInputError(
                f"weighting must be one of {sorted(WEIGHTINGS)}, got {self.weighting!r}"
            )
        if self.weighting == "tfidf" and self.idf is None:
            raise BadInputError(
                "weighting='tfidf' needs idf=IdfTable: fit one with fp.fit_idf(texts) "
                "(or IdfTable.jieba() for Chinese words)"
            )
        if self.idf is not None and not isinstance(self.idf, IdfTable):
            raise TypeError(f"idf must be an IdfTable, got {type(self.idf).__name__}")
        name = self.analyzer if isinstance(self.analyzer, str) else "word"
        n = DEFAULT_NGRAM[name] if self.ngram_size is None else self.ngram_size
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 64:
            raise BadInputError(f"ngram_size must be an int in 1..64, got {self.ngram_size!r}")
        self.ngram_size_ = n
        c = self.cjk_ngram_size
        if isinstance(c, bool) or not isinstance(c, int) or not 1 <= c <= 64:
            raise BadInputError(f"cjk_ngram_size must be an int in 1..64, got {c!r}")
        if self.idf is not None and self.idf.analyzer_ not in (None, self.analyzer_name):
            raise BadInputError(
                f"the IDF table weighs {self.idf.analyzer_!r} features but this Fingerprinter "
                f"makes {self.analyzer_name!r} features; fit a table with fp.fit_idf(texts) "
                "or use the analyzer the table was fitted with"
            )
        if self.top_n is not None and (not isinstance(self.top_n, int) or self.top_n < 1):
            raise BadInputError(f"top_n must be a positive int or None, got {self.top_n!r}")
        if self.segmenter is not None and self.segmenter not in SEGMENTERS:
            raise BadInputError(
                f"segmenter must be one of {SEGMENTERS} or None, got {self.segmenter!r}"
            )
        if not isinstance(self.seed, int) or not 0 <= self.seed < 2**64:
            raise BadInputError(f"seed must be an int in [0, 2**64), got {self.seed!r}")
        self._mode = ANALYZERS.get(name, WORD_MODE)
        self.stopwords_ = resolve_stopwords(self.stopwords)
        self._stop_keys = np.sort(np.array([key_of(w) for w in self.stopwords_], dtype=np.uint64))
        self._segment = self.segmenter is not None and self._mode != CHAR_MODE
        empty_f = np.empty(0, dtype=np.float64)
        self._idf_keys = self.idf.keys_ if self.idf is not None else np.empty(0, dtype=np.uint64)
        self._idf_vals = self.idf.values_ if self.idf is not None else empty_f
        self._idf_default = self.idf.default_ if self.idf is not None else 1.0

    @property
    def analyzer_name(self) -> str:
        """``"word"``, ``"shingle:N"``, ``"char:N"`` or ``"callable"``: what the features are."""
        if callable(self.analyzer):
            return "callable"
        if self.analyzer == "auto":
            return f"auto:{self.ngram_size_}:{self.cjk_ngram_size}"
        return self.analyzer if self.analyzer == "word" else f"{self.analyzer}:{self.ngram_size_}"

    def __repr__(self) -> str:
        return f"Fingerprinter({', '.join(f'{k}={v!r}' for k, v in self.get_config().items())})"

    def _cutter(self) -> Cutter:
        """The segmenter, loaded on the first Han run met (English-only users never load it)."""
        return segmenter(self.segmenter or "auto")

    # -- configuration -----------------------------------------------------------------------
    def get_config(self) -> dict[str, Any]:
        """The JSON-able configuration that determines every fingerprint."""
        if callable(self.analyzer):
            module = getattr(self.analyzer, "__module__", "?")
            analyzer = f"callable:{module}.{getattr(self.analyzer, '__qualname__', '?')}"
        else:
            analyzer = self.analyzer
        stop: str | list[str] | None = (
            self.stopwords
            if self.stopwords is None or isinstance(self.stopwords, str)
            else sorted(self.stopwords_)
        )
        config: dict[str, Any] = {
            "format": FORMAT_VERSION,
            "bits": self.bits,
            "analyzer": analyzer,
            "ngram_size": self.ngram_size_,
            "weighting": self.weighting,
            "idf": self.idf.digest if self.idf is not None else None,
            "stopwords": stop,
            "top_n": self.top_n,
            "segmenter": "jieba" if self._segment else None,
            "markup": self.markup,
            "seed": self.seed,
            "charclass": table_digest(),
        }
        if self.analyzer == "auto":  # only "auto" reads it: other config ids stay as they were
            config["cjk_ngram_size"] = self.cjk_ngram_size
        return config

    @property
    def config_id(self) -> str:
        """Short stable id of the configuration, stored next to every persisted fingerprint."""
        blob = json.dumps(
            self.get_config(), sort_keys=True, separators=(",", ":"), ensure_ascii=False
        )
        return "fp1-" + hashlib.sha256(blob.encode()).hexdigest()[:16]

    @classmethod
    def from_config(
        cls, config: Mapping[str, Any], *, idf: IdfTable | None = None
    ) -> Fingerprinter:
        """Rebuild a Fingerprinter from :meth:`get_config` output (pass the same ``idf`` table)."""
        cfg = dict(config)
        if cfg.pop("format", FORMAT_VERSION) != FORMAT_VERSION:
            raise ConfigMismatchError(
                f"fingerprint format {config.get('format')} is not supported by this neardup"
            )
        if str(cfg.get("analyzer", "")).startswith("callable:"):
            raise BadInputError(
                "a config with a callable analyzer cannot be rebuilt; construct it in code"
            )
        idf_digest = cfg.pop("idf", None)
        if idf_digest is not None and (idf is None or idf.digest != idf_digest):
            raise ConfigMismatchError(
                f"this config needs the IDF table with digest {idf_digest}; "
                "pass idf=IdfTable.load(...)"
            )
        if cfg.pop("charclass", table_digest()) != table_digest():
            raise ConfigMismatchError(
                "config was made with another character table; upgrade or downgrade neardup"
            )
        seg = cfg.pop("segmenter", "jieba")
        return cls(idf=idf, segmenter="auto" if seg else None, **cfg)

    # -- features ------------------------------------------------------------------------------
    def prepare(self, text: str) -> str:
        """Normalised text as the kernels read it (NFKC, case-folded, Han runs segmented)."""
        text = prepare_text(check_text(text), markup=self.markup)
        return self._segmented(text)

    def _segmented(self, text: str) -> str:
        """Segment the Han runs of a prepared text, when its features are words."""
        if not self._segment or text.isascii():
            return text
        if self._mode == AUTO_MODE and text_is_cjk(text):  # char n-grams: no words needed
            return text
        return segment_han_runs(text, self._cutter())

    def feature_list(self, text: str) -> list[str]:
        """Features of ``text`` in order, repeats included, before weighting."""
        if callable(self.analyzer):
            out = self.analyzer(check_text(text))
            return list(out.keys() if isinstance(out, Mapping) else out)
        return feature_list(
            self.prepare(text),
            mode=self._mode,
            n=self.ngram_size_,
            han_single=not self._segment,
            stopwords=self.stopwords_,
            n_cjk=self.cjk_ngram_size,
        )

    def features(self, text: str) -> dict[str, float]:
        """The features that make the fingerprint, with their weights (after ``top_n``)."""
        raw = self.analyzer(check_text(text)) if callable(self.analyzer) else None
        if isinstance(raw, Mapping):
            items = {str(k): float(v) for k, v in raw.items()}
        else:
            feats = list(raw) if raw is not None else self.feature_list(text)
            items = {}
            for f in feats:
                items[f] = items.get(f, 0.0) + 1.0
            for f in items:
                if self.weighting == "none":
                    items[f] = 1.0
                elif self.weighting == "tfidf" and self.idf is not None:
                    items[f] *= self.idf[f]
        if self.top_n is not None and len(items) > self.top_n:
            keyed = sorted(items.items(), key=lambda kv: (-kv[1], key_of(kv[0])))[: self.top_n]
            items = dict(keyed)
        return items

    def fit_idf(self, texts: Iterable[str], *, min_df: int = 1) -> IdfTable:
        """Fit an IDF table on ``texts`` with this analyzer, for ``weighting="tfidf"``."""
        return IdfTable.fit(
            texts, analyzer=self.feature_list, min_df=min_df, analyzer_name=self.analyzer_name
        )

    # -- fingerprints ----------------------------------------------------------------------------
    def fingerprint(self, text: str) -> int:
        """The fingerprint of one text; ``EmptyTextError`` if it has no features."""
        fps, empty = self._compute([check_text(text)])
        if empty[0]:
            raise EmptyTextError(f"text has no features, cannot fingerprint it: {text[:60]!r}")
        return self._to_int(fps[0])

    def fingerprint_features(self, features: Mapping[str, float] | Iterable[str]) -> int:
        """Fingerprint your own features: ``{feature: weight}`` or a list (weights = counts)."""
        if isinstance(features, Mapping):
            items = {str(k): float(v) for k, v in features.items()}
        else:
            items = {}
            for f in features:
                items[str(f)] = items.get(str(f), 0.0) + 1.0
        bad = [k for k, v in items.items() if not math.isfinite(v) or v < 0]
        if bad:
            raise BadInputError(
                f"weight of {bad[0]!r} is {items[bad[0]]}; weights must be finite and >= 0"
            )
        if not items or sum(items.values()) == 0:
            raise EmptyTextError("no features (or all weights zero): nothing to fingerprint")
        keys = np.array([key_of(k) for k in items], dtype=np.uint64)
        out = np.zeros(self.bits // 64, dtype=np.uint64)
        simhash_words(
            keys, np.array(list(items.values())), False, np.uint64(self.seed), out.size, out
        )
        return self._to_int(out)

    @overload
    def fingerprint_many(
        self, texts: Iterable[str], *, return_mask: Literal[False] = ..., n_jobs: int = ...
    ) -> npt.NDArray[np.uint64]: ...
    @overload
    def fingerprint_many(
        self, texts: Iterable[str], *, return_mask: Literal[True], n_jobs: int = ...
    ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.bool_]]: ...
    def fingerprint_many(
        self, texts: Iterable[str], *, return_mask: bool = False, n_jobs: int = 1
    ) -> npt.NDArray[np.uint64] | tuple[npt.NDArray[np.uint64], npt.NDArray[np.bool_]]:
        """Fingerprints of many texts: uint64 ``(n,)``, or ``(n, 2)`` ``[hi, lo]`` for 128 bits.

        Texts without features: with ``return_mask=True`` their rows are 0 and flagged in the
        returned boolean mask; otherwise ``EmptyTextError`` names them. ``n_jobs`` worker
        processes share the work (-1 = all cores; forked on POSIX, so they start warm).
        """
        if isinstance(texts, str | bytes):  # would fingerprint each character
            raise TypeError("texts must be a list of strings, got one string: pass [text]")
        batch = texts if isinstance(texts, Sequence) else list(texts)
        for i, t in enumerate(batch):
            if not isinstance(t, str):
                raise TypeError(f"texts[{i}] is {type(t).__name__}, expected str")
        fps, empty = self._compute(batch, n_jobs=n_jobs)
        result = fps[:, 0] if self.bits == 64 else fps
        if return_mask:
            return result, empty
        if empty.any():
            rows = np.flatnonzero(empty)
            raise EmptyTextError(
                f"{rows.size} text(s) have no features (rows {rows[:10].tolist()}"
                f"{' ...' if rows.size > 10 else ''}); pass return_mask=True to get a mask instead"
            )
        return result

    def _compute(self, texts: Sequence[str], *, n_jobs: int = 1) -> tuple[np.ndarray, np.ndarray]:
        n = len(texts)
        fps = np.zeros((n, self.bits // 64), dtype=np.uint64)
        empty = np.zeros(n, dtype=bool)
        if callable(self.analyzer):
            for i, t in enumerate(texts):
                try:
                    fps[i] = self._split(self.fingerprint_features(self.features(t)))
                except EmptyTextError:
                    empty[i] = True
            return fps, empty
        step = 2048
        chunks = [(lo, min(lo + step, n)) for lo in range(0, n, step)]
        jobs = min(_resolve_jobs(n_jobs), max(len(chunks), 1))  # no texts: no pool
        if jobs == 1:
            for lo, hi in chunks:
                self._run_chunk(texts, lo, hi, fps, empty)
            return fps, empty
        # Normalising and segmenting hold the GIL, so workers are processes (fork: they inherit
        # the compiled kernels and loaded dictionaries instead of loading them again); imported
        # here: ~6 ms of every start-up otherwise, for an option most runs do not use
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
        with ProcessPoolExecutor(jobs, mp_context=ctx) as pool:
            parts = [
                (lo, hi, pool.submit(_fingerprint_part, self, list(texts[lo:hi])))
                for lo, hi in chunks
            ]
            for lo, hi, fut in parts:
                fps[lo:hi], empty[lo:hi] = fut.result()
        return fps, empty

    def _fingerprint_packed(
        self, texts: Sequence[str], packed: tuple[np.ndarray, np.ndarray]
    ) -> tuple[np.ndarray, np.ndarray]:
        """``fingerprint_many(texts, return_mask=True)`` when the caller already holds
        ``pack_prepared(texts)`` (the dedup pipeline: its exact keys and sketches read it):
        chunks slice that buffer instead of normalising and encoding the texts again."""
        if callable(self.analyzer) or self.markup:
            return self.fingerprint_many(texts, return_mask=True)
        n = len(texts)
        fps = np.zeros((n, self.bits // 64), dtype=np.uint64)
        empty = np.zeros(n, dtype=bool)
        for lo in range(0, n, 2048):
            self._run_chunk(texts, lo, min(lo + 2048, n), fps, empty, packed)
        return (fps[:, 0] if self.bits == 64 else fps), empty

    def _from_packed(
        self, texts: Sequence[str], lo: int, hi: int, packed: tuple[np.ndarray, np.ndarray]
    ) -> tuple[np.ndarray, np.ndarray]:
        """This chunk's slice of a packed buffer, Han runs segmented where the features need."""
        buf, off = packed
        chunk = buf[off[lo] : off[hi]]
        return self._segment_packed(texts[lo:hi], chunk, off[lo : hi + 1] - off[lo])

    def _segment_packed(
        self, texts: Sequence[str], buf: np.ndarray, off: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """``buf``/``off`` (prepared ``texts``) with the Han runs of the texts that need
        words segmented: a copy only when one does (mostly-CJK ``auto`` texts never do)."""
        if not self._segment:
            return buf, off
        cut: dict[int, bytes] = {}
        cls = char_classes()
        for i, t in enumerate(texts):
            if t.isascii():
                continue
            lo, hi = int(off[i]), int(off[i + 1])
            data = buf[lo:hi].tobytes()
            if not may_contain_han(data):
                continue
            if self._mode == AUTO_MODE and is_cjk(buf, lo, hi, cls):  # char n-grams: no words
                continue
            text = data.decode("utf-8", "surrogatepass")
            seg = segment_han_runs(text, self._cutter())
            if seg != text:
                cut[i] = seg.encode("utf-8", "surrogatepass")
        if not cut:
            return buf, off
        raw = buf.tobytes()
        parts = [cut.get(i, raw[off[i] : off[i + 1]]) for i in range(len(texts))]
        offsets = np.zeros(len(parts) + 1, dtype=np.int64)
        np.cumsum([len(x) for x in parts], out=offsets[1:])
        return np.frombuffer(b"".join(parts), dtype=np.uint8), offsets

    def _run_chunk(
        self,
        texts: Sequence[str],
        lo: int,
        hi: int,
        fps: np.ndarray,
        empty: np.ndarray,
        packed: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> None:
        if packed is not None:
            buf, offsets = self._from_packed(texts, lo, hi, packed)
        else:
            buf, offsets = self._encoded(texts[lo:hi])
        conf = self._conf()
        fingerprint_batch(
            buf, offsets, char_classes(), *conf[:10], fps[lo:hi], empty[lo:hi], conf[10]
        )

    def _conf(
        self,
    ) -> tuple[int, int, bool, np.ndarray, int, int, np.ndarray, np.ndarray, float, np.uint64, int]:
        """The kernels' configuration arguments (``fingerprint_batch`` from ``mode`` to
        ``seed``, then ``n_cjk``)."""
        return (
            self._mode,
            self.ngram_size_,
            not self._segment,
            self._stop_keys,
            WEIGHTINGS[self.weighting],
            self.top_n or 0,
            self._idf_keys,
            self._idf_vals,
            self._idf_default,
            np.uint64(self.seed),
            self.cjk_ngram_size,
        )

    def _encoded(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        batch = [strip_markup(t) for t in texts] if self.markup else texts
        buf, offsets = pack_prepared(batch)
        return self._segment_packed(texts, buf, offsets)

    def _to_int(self, words: np.ndarray) -> int:
        return int(words[0]) if self.bits == 64 else (int(words[0]) << 64) | int(words[1])

    def _split(self, value: int) -> np.ndarray:
        return np.array(
            [value >> 64, value & (2**64 - 1)] if self.bits == 128 else [value], dtype=np.uint64
        )


def _fingerprint_part(fp: Fingerprinter, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    return fp._compute(texts)


def _resolve_jobs(n_jobs: int) -> int:
    import os

    if n_jobs == -1:
        return os.cpu_count() or 1
    if not isinstance(n_jobs, int) or n_jobs < 1:
        raise BadInputError(f"n_jobs must be a positive int or -1 (all cores), got {n_jobs!r}")
    return n_jobs


__all__ = ["EmptyTextError", "Fingerprinter", "hamming"]
