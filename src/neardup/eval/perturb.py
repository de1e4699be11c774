"""Planted near-copies with controlled, seeded edits.

Edit kinds work on units: whitespace-separated words for alphabetic text, characters for CJK
text. ``rate`` is the fraction of units edited (at least one edit), except for ``move_sentence``
(fraction of sentences moved), ``boilerplate`` (added characters as a fraction of the length),
``rewrap`` (fraction of separators turned into or out of line breaks) and ``width`` (fraction of
eligible characters switched between half- and full-width). ``rewrap`` and ``width`` leave the
NFKC-normalised shingles unchanged: they test normalisation, not robustness.

>>> perturb("one two three four five six seven eight nine ten", "delete", 0.2, seed=1)
'one two three four seven eight nine ten'
>>> perturb("abc", "width", 1.0, seed=0)
'ａｂｃ'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from neardup.features.extract import text_is_cjk

__all__ = ["BUCKETS", "EDIT_KINDS", "PlantedSet", "length_bucket", "perturb", "plant_copies"]

EDIT_KINDS = (
    "insert",
    "delete",
    "substitute",
    "swap",
    "move_sentence",
    "boilerplate",
    "rewrap",
    "width",
)
#: length bucket name -> [min chars, max chars)
BUCKETS: dict[str, tuple[int, float]] = {
    "short": (0, 300),
    "medium": (300, 1000),
    "long": (1000, float("inf")),
}
_BOILER_EN = (
    "Click here to subscribe to our newsletter.",
    "Copyright 2026 Example Media. All rights reserved.",
    "Share this article on social media.",
    "Advertisement",
)
_BOILER_ZH = (
    "本文版权归原作者所有，转载请注明出处。",
    "点击关注我们的公众号。",
    "广告",
    "欢迎分享到朋友圈。",
)
_SENT_RE = re.compile(r"(?<=[.!?。！？])\s*")


def length_bucket(text: str) -> str:
    """Bucket name of a text by its length in characters.

    >>> length_bucket("x" * 299), length_bucket("x" * 300), length_bucket("x" * 1000)
    ('short', 'medium', 'long')
    """
    for name, (lo, hi) in BUCKETS.items():
        if lo <= len(text) < hi:
            return name
    raise AssertionError("unreachable: buckets cover all lengths")


def _units(text: str) -> list[list[str]]:
    if text_is_cjk(text):
        return [[c, ""] for c in text]
    parts = re.split(r"(\s+)", text)
    if parts and parts[0] == "":
        parts = parts[2:] if len(parts) > 1 else []
        lead = re.match(r"\s*", text)
        prefix = lead.group(0) if lead else ""
    else:
        prefix = ""
    out = [[parts[k], parts[k + 1] if k + 1 < len(parts) else ""] for k in range(0, len(parts), 2)]
    if prefix and out:
        out[0][0] = prefix + out[0][0]
    return [u for u in out if u[0] or u[1]]


def _join(units: list[list[str]]) -> str:
    return "".join(w + s for w, s in units)


def _count(rate: float, n: int) -> int:
    return max(1, round(rate * n)) if n else 0


def _edit_units(text: str, kind: str, rate: float, rng: np.random.Generator) -> str:
    units = _units(text)
    n = len(units)
    if n == 0:
        return text
    vocab = [u[0] for u in units]
    k = _count(rate, n)
    sep = "" if text_is_cjk(text) else " "
    if kind == "insert":
        for _ in range(k):
            units.insert(int(rng.integers(0, len(units) + 1)), [vocab[int(rng.integers(n))], sep])
    elif kind == "delete":
        drop = set(rng.choice(n, size=min(k, n), replace=False).tolist())
        units = [u for p, u in enumerate(units) if p not in drop]
    elif kind == "substitute":
        for p in rng.choice(n, size=min(k, n), replace=False).tolist():
            units[p][0] = _other(vocab, units[p][0], rng)
    elif kind == "swap":
        for p in rng.choice(max(n - 1, 1), size=min(k, max(n - 1, 1)), replace=False).tolist():
            if p + 1 < n:
                units[p][0], units[p + 1][0] = units[p + 1][0], units[p][0]
    return _join(units)


def _other(vocab: list[str], word: str, rng: np.random.Generator) -> str:
    for _ in range(8):
        w = vocab[int(rng.integers(len(vocab)))]
        if w != word:
            return w
    return word + "x"


def _move_sentences(text: str, rate: float, rng: np.random.Generator) -> str:
    sents = [s for s in _SENT_RE.split(text) if s]
    if len(sents) < 2:
        return text
    for _ in range(_count(rate, len(sents))):
        s = sents.pop(int(rng.integers(len(sents))))
        sents.insert(int(rng.integers(len(sents) + 1)), s)
    joiner = "" if text_is_cjk(text) else " "
    return joiner.join(sents)


def _boilerplate(text: str, rate: float, rng: np.random.Generator) -> str:
    pool = _BOILER_ZH if text_is_cjk(text) else _BOILER_EN
    budget = max(1, round(rate * len(text)))
    lines: list[str] = []
    while sum(len(x) for x in lines) < budget:
        lines.append(pool[int(rng.integers(len(pool)))])
    head = [x for x in lines if rng.random() < 0.5]
    tail = [x for x in lines if x not in head] if head else lines
    return "\n".join([*head, text, *tail])


def _rewrap(text: str, rate: float, rng: np.random.Generator) -> str:
    if text_is_cjk(text):
        chars = list(text)
        for p in rng.choice(len(chars), size=_count(rate, len(chars)), replace=False).tolist():
            chars[p] = chars[p] + "\n"
        return "".join(chars)
    units = _units(text)
    for p in rng.choice(len(units), size=_count(rate, len(units)), replace=False).tolist():
        if units[p][1]:
            units[p][1] = " " if "\n" in units[p][1] else "\n"
    return _join(units)


def _width(text: str, rate: float, rng: np.random.Generator) -> str:
    chars = list(text)
    eligible = [
        p for p, c in enumerate(chars) if 0x21 <= ord(c) <= 0x7E or 0xFF01 <= ord(c) <= 0xFF5E
    ]
    if not eligible:
        return text
    for p in rng.choice(eligible, size=_count(rate, len(eligible)), replace=False).tolist():
        o = ord(chars[p])
        chars[p] = chr(o + 0xFEE0) if o <= 0x7E else chr(o - 0xFEE0)
    return "".join(chars)


def perturb(text: str, kind: str, rate: float, *, seed: int | np.random.Generator = 0) -> str:
    """A copy of ``text`` with edits of one ``kind`` at ``rate`` (0 < rate <= 1), seeded."""
    if kind not in EDIT_KINDS:
        raise ValueError(f"unknown edit kind {kind!r}; choose one of {EDIT_KINDS}")
    if not 0.0 < rate <= 1.0:
        raise ValueError(f"rate must be in (0, 1], got {rate!r}")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    if kind in ("insert", "delete", "substitute", "swap"):
        return _edit_units(text, kind, rate, rng)
    if kind == "move_sentence":
        return _move_sentences(text, rate, rng)
    if kind == "boilerplate":
        return _boilerplate(text, rate, rng)
    if kind == "rewrap":
        return _rewrap(text, rate, rng)
    return _width(text, rate, rng)


@dataclass(frozen=True)
class PlantedSet:
    """Base texts plus planted copies: ``texts[orig[p]]`` and ``texts[copy[p]]`` form pair p."""

    texts: list[str]
    orig: npt.NDArray[np.int64]
    copy: npt.NDArray[np.int64]
    kind: list[str]
    rate: npt.NDArray[np.float64]
    bucket: list[str]


def plant_copies(
    texts: Sequence[str],
    *,
    per_bucket: int = 100,
    kinds: Sequence[str] = ("insert", "delete", "substitute", "swap"),
    rates: Sequence[float] = (0.01, 0.02, 0.05, 0.1, 0.2),
    seed: int = 0,
) -> PlantedSet:
    """Append one edited copy per (sampled base, kind, rate); ``per_bucket`` bases per bucket."""
    rng = np.random.default_rng(seed)
    out = list(texts)
    orig: list[int] = []
    copy: list[int] = []
    kind_l: list[str] = []
    rate_l: list[float] = []
    bucket_l: list[str] = []
    buckets = np.array([length_bucket(t) for t in texts])
    for name in BUCKETS:
        idx = np.flatnonzero(buckets == name)
        take = rng.choice(idx, size=min(per_bucket, len(idx)), replace=False) if len(idx) else idx
        for base in take.tolist():
            for kind in kinds:
                for rate in rates:
                    out.append(perturb(texts[base], kind, rate, seed=rng))
                    orig.append(base)
                    copy.append(len(out) - 1)
                    kind_l.append(kind)
                    rate_l.append(rate)
                    bucket_l.append(name)
    return PlantedSet(
        out,
        np.array(orig, dtype=np.int64),
        np.array(copy, dtype=np.int64),
        kind_l,
        np.array(rate_l, dtype=np.float64),
        bucket_l,
    )
