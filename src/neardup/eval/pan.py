"""PAN text-alignment measures (Potthast et al., "An Evaluation Framework for Plagiarism
Detection", COLING 2010): character-level precision and recall macro-averaged over
detections and cases, granularity and plagdet.

A case (a labelled copy) and a detection (a passage pair found) are both
``{"id", "span": [start, end], "source_id", "source_span": [start, end]}``: the characters of
``span`` in document ``id`` and of ``source_span`` in ``source_id``. A detection *detects* a
case when they name the same two documents and overlap on both sides; what they share is the
overlap of both sides, counted in characters.

- precision = mean over detections of (characters of it inside detected cases) / its size
- recall = mean over cases of (characters of it inside detections) / its size
- granularity = mean over detected cases of the number of detections that detect it
- plagdet = F1 / log2(1 + granularity)

>>> case = {"id": "b", "span": [0, 100], "source_id": "a", "source_span": [0, 100]}
>>> half = {"id": "b", "span": [0, 50], "source_id": "a", "source_span": [0, 50]}
>>> rest = {"id": "b", "span": [50, 100], "source_id": "a", "source_span": [50, 100]}
>>> s = pan_scores([case], [half, rest])
>>> s.precision, s.recall, s.granularity, round(s.plagdet, 4)
(1.0, 1.0, 2.0, 0.6309)
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from neardup.io.readers import text_lines

__all__ = ["PanScores", "pan_scores", "read_alignments"]

Span = tuple[int, int]


@dataclass(frozen=True)
class PanScores:
    """The PAN measures (see the module docstring) and the counts behind them."""

    precision: float
    recall: float
    granularity: float
    plagdet: float
    cases: int
    detections: int
    detected_cases: int

    def as_dict(self) -> dict[str, Any]:
        """The scores as a JSON-ready dict."""
        return asdict(self)


@dataclass(frozen=True)
class _Item:
    key: tuple[str, str]
    span: Span
    source_span: Span

    @property
    def size(self) -> int:
        return (self.span[1] - self.span[0]) + (self.source_span[1] - self.source_span[0])


def _cut(a: Span, b: Span) -> Span | None:
    lo, hi = max(a[0], b[0]), min(a[1], b[1])
    return (lo, hi) if lo < hi else None


def _union_length(spans: Iterable[Span]) -> int:
    total, end = 0, -1
    for lo, hi in sorted(spans):
        if hi <= end:
            continue
        total += hi - max(lo, end)
        end = hi
    return total


def _item(row: Mapping[str, Any], where: str) -> _Item:
    try:
        span = (int(row["span"][0]), int(row["span"][1]))
        src = (int(row["source_span"][0]), int(row["source_span"][1]))
        key = (json.dumps(row["id"]), json.dumps(row["source_id"]))
    except (KeyError, TypeError, IndexError, ValueError) as exc:
        raise ValueError(
            f"{where}: expected id, span [start, end], source_id, source_span ({exc!r})"
        ) from None
    if span[0] > span[1] or src[0] > src[1]:
        raise ValueError(f"{where}: a span ends before it starts")
    return _Item(key, span, src)


def _covered(item: _Item, others: Sequence[_Item]) -> tuple[int, int]:
    """(characters of ``item`` inside ``others`` that detect it / are detected, count)."""
    left: list[Span] = []
    right: list[Span] = []
    count = 0
    for o in others:
        a, b = _cut(item.span, o.span), _cut(item.source_span, o.source_span)
        if a is not None and b is not None:
            left.append(a)
            right.append(b)
            count += 1
    return _union_length(left) + _union_length(right), count


def pan_scores(
    cases: Iterable[Mapping[str, Any]], detections: Iterable[Mapping[str, Any]]
) -> PanScores:
    """The PAN measures of ``detections`` against ``cases`` (see the module docstring).

    With no detections precision is 0 (1 when there are no cases either); with no cases
    recall is 1.
    """
    s_items = [_item(c, f"case {i}") for i, c in enumerate(cases)]
    r_items = [_item(d, f"detection {i}") for i, d in enumerate(detections)]
    s_by: dict[tuple[str, str], list[_Item]] = defaultdict(list)
    r_by: dict[tuple[str, str], list[_Item]] = defaultdict(list)
    for s in s_items:
        s_by[s.key].append(s)
    for r in r_items:
        r_by[r.key].append(r)
    rec_sum, grains, detected = 0.0, 0, 0
    for s in s_items:
        chars, n = _covered(s, r_by.get(s.key, []))
        rec_sum += chars / s.size if s.size else 1.0
        if n:
            detected += 1
            grains += n
    prec_sum = 0.0
    for r in r_items:
        chars, _ = _covered(r, s_by.get(r.key, []))
        prec_sum += chars / r.size if r.size else 0.0
    recall = rec_sum / len(s_items) if s_items else 1.0
    precision = prec_sum / len(r_items) if r_items else (0.0 if s_items else 1.0)
    granularity = grains / detected if detected else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    plagdet = f1 / math.log2(1 + granularity)
    return PanScores(precision, recall, granularity, plagdet, len(s_items), len(r_items), detected)


def read_alignments(path: str | Path) -> list[dict[str, Any]]:
    """Rows of a JSONL file of cases or detections (``neardup overlap`` output reads as is);
    a bad line raises ``ValueError`` naming it."""
    rows = []
    for where, line in text_lines(path):
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{where}: not JSON ({exc})") from None
        _item(row, where)
        rows.append(row)
    return rows
