"""IdfTable: inverse document frequencies of features, fitted on your corpus or jieba's.

Smoothed IDF as in scikit-learn: ``idf = ln((1 + N) / (1 + df)) + 1``; a feature the table has
never seen gets ``default`` (for a fitted table the IDF of ``df = 0``; for jieba's table the
median, as jieba does). Saved as plain UTF-8 text, one ``feature<TAB>idf`` line each.

>>> table = IdfTable.fit(["a b", "a c", "a d"], analyzer=str.split)
>>> round(table["a"], 3), round(table["b"], 3), round(table["zzz"], 3)
(1.0, 1.693, 2.386)
"""

from __future__ import annotations

import hashlib
import math
import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from neardup._atomic import atomic_write
from neardup._params import FrozenParams
from neardup.errors import BadInputError
from neardup.features.normalize import prepare_text
from neardup.hashing import key_of

HEADER = "# neardup idf table v1"


class IdfTable(FrozenParams):
    """Feature -> IDF weights, looked up by 64-bit feature key inside the kernels.

    Read-only after construction: its :attr:`digest` is part of the config id of every
    Fingerprinter that uses it. (The key/value arrays stay writable numpy arrays because the
    compiled kernels are specialised on writable arrays; do not write into them.)
    """

    def __init__(
        self,
        idf: Mapping[str, float],
        *,
        default: float,
        n_docs: int | None = None,
        analyzer: str | None = None,
    ):
        values = {str(k): float(v) for k, v in idf.items()}
        bad = [k for k, v in values.items() if not math.isfinite(v) or v < 0]
        if bad:
            raise BadInputError(
                f"IDF of {bad[0]!r} is {values[bad[0]]}; IDF values must be finite, >= 0"
            )
        if not math.isfinite(default) or default < 0:
            raise BadInputError(f"default IDF must be finite and >= 0, got {default}")
        self.idf_: Mapping[str, float] = MappingProxyType(values)
        self.default_ = float(default)
        self.n_docs_ = n_docs
        self.analyzer_ = analyzer  # e.g. "word" or "shingle:3": features the table is about
        keys = np.fromiter((key_of(k) for k in values), dtype=np.uint64, count=len(values))
        vals = np.fromiter(values.values(), dtype=np.float64, count=len(values))
        order = np.argsort(keys, kind="stable")
        self.keys_ = keys[order]
        self.values_ = vals[order]
        self._freeze()

    def get_params(self) -> dict[str, Any]:
        """The constructor's arguments (``idf`` as a read-only mapping)."""
        return {
            "idf": self.idf_,
            "default": self.default_,
            "n_docs": self.n_docs_,
            "analyzer": self.analyzer_,
        }

    @classmethod
    def fit(
        cls,
        texts: Iterable[str],
        *,
        analyzer: Callable[[str], Iterable[str]],
        min_df: int = 1,
        analyzer_name: str | None = None,
    ) -> IdfTable:
        """Fit on ``texts``; ``analyzer`` gives each text's features (``fp.feature_list``).

        ``analyzer_name`` (e.g. ``"shingle:3"``) is recorded so a Fingerprinter with other features
        refuses the table instead of silently weighting nothing.
        """
        df: Counter[str] = Counter()
        n = 0
        for text in texts:
            df.update(set(analyzer(text)))
            n += 1
        if n == 0:
            raise BadInputError("cannot fit an IDF table on no texts; pass at least one document")
        return cls.from_document_frequencies(df, n, min_df=min_df, analyzer=analyzer_name)

    @classmethod
    def from_document_frequencies(
        cls, df: Mapping[str, int], n_docs: int, *, min_df: int = 1, analyzer: str | None = None
    ) -> IdfTable:
        """Build from document frequencies counted elsewhere (e.g. by a distributed job).

        >>> t = IdfTable.from_document_frequencies({"oil": 3, "rare": 1}, 3, min_df=2)
        >>> sorted(t.idf_), round(t["oil"], 3), round(t["rare"], 3)
        (['oil'], 1.0, 2.386)
        """
        idf = {f: math.log((1 + n_docs) / (1 + c)) + 1 for f, c in df.items() if c >= min_df}
        return cls(idf, default=math.log(1 + n_docs) + 1, n_docs=n_docs, analyzer=analyzer)

    @classmethod
    def jieba(cls) -> IdfTable:
        """The Chinese word table shipped with jieba (``jieba/analyse/idf.txt``), default = median.

        Its features are words: use it with ``Fingerprinter(analyzer="word")``.
        """
        text = resources.files("jieba.analyse").joinpath("idf.txt").read_text("utf-8")
        idf: dict[str, float] = {}
        for line in text.splitlines():
            word, _, value = line.strip().rpartition(" ")
            if word:
                idf.setdefault(prepare_text(word), float(value))
        return cls(idf, default=float(np.median(list(idf.values()))), analyzer="word")

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "idf_": dict(self.idf_)}  # a mappingproxy cannot be pickled

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, idf_=MappingProxyType(state["idf_"]))

    def __getitem__(self, feature: str) -> float:
        return self.idf_.get(feature, self.default_)

    def __len__(self) -> int:
        return len(self.idf_)

    def __repr__(self) -> str:
        return f"IdfTable({len(self)} features, default={self.default_:.4g}, digest={self.digest})"

    @property
    def digest(self) -> str:
        """Short content hash; part of the config id of a Fingerprinter using this table."""
        h = hashlib.sha256(self.keys_.tobytes())
        h.update(self.values_.tobytes())
        h.update(f"{self.default_!r}|{self.analyzer_}".encode())
        return h.hexdigest()[:16]

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write UTF-8 text atomically: a header, then ``feature<TAB>idf`` sorted by feature."""
        with atomic_write(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(
                f"{HEADER}\n# n_docs={self.n_docs_ or ''}\tdefault={self.default_!r}"
                f"\tanalyzer={self.analyzer_ or ''}\n"
            )
            for feature in sorted(self.idf_):
                f.write(f"{feature}\t{self.idf_[feature]!r}\n")

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> IdfTable:
        """Read a table written by :meth:`save`; errors name the file and line."""
        p = Path(path)
        try:
            lines = p.read_text(encoding="utf-8").split("\n")
        except FileNotFoundError:
            raise FileNotFoundError(
                f"IDF table {p} does not exist; fit one with `neardup idf fit`"
            ) from None
        except UnicodeDecodeError as e:
            raise BadInputError(
                f"{p}: not UTF-8 text ({e.reason}); is this an IDF table?"
            ) from None
        if not lines or lines[0] != HEADER:
            raise BadInputError(f"{p}:1: expected the header {HEADER!r}; is this an IDF table?")
        meta = dict(part.split("=", 1) for part in lines[1].lstrip("# ").split("\t") if "=" in part)
        idf: dict[str, float] = {}
        for lineno, line in enumerate(lines[2:], start=3):
            if not line:
                continue
            feature, sep, value = line.rpartition("\t")
            try:
                if not sep:
                    raise ValueError
                idf[feature] = float(value)
            except ValueError:
                raise BadInputError(
                    f"{p}:{lineno}: expected 'feature<TAB>idf', got {line[:60]!r}"
                ) from None
        try:
            default = float(meta["default"])
        except (KeyError, ValueError):
            raise BadInputError(f"{p}:2: missing or bad 'default=' in the header line") from None
        n_docs = int(meta["n_docs"]) if meta.get("n_docs") else None
        return cls(idf, default=default, n_docs=n_docs, analyzer=meta.get("analyzer") or None)
