"""Hive-style partitioned folders (``month=2/part-0.jsonl``): their order and their columns.

A folder is read part by part. Sorting the parts' paths as strings puts ``month=10`` before
``month=2``, and with a time window that silently changes decisions; so parts are sorted in
*natural* order: numbers in names compare as numbers (``part-2`` < ``part-10``), a partition
value that is a number compares by value, dates (``2026-11-02``) compare as dates because their
digit runs do. Both engines (local and Spark) list parts with :func:`part_sort_key`.

Partition columns are kept, as Spark's reader does: ``day=2026-11-02/hour=7/part-0.jsonl`` adds
``"day": "2026-11-02", "hour": 7`` to each record of that part (integers and decimals as
numbers, ``__HIVE_DEFAULT_PARTITION__`` as null, anything else as a string; a record's own
field of the same name wins). So a partition column can be the ``--time-field``.

>>> sorted(["m=10/a", "m=2/a", "m=1.5/a"], key=part_sort_key)
['m=1.5/a', 'm=2/a', 'm=10/a']
>>> partition_values("data", "data/day=2026-11-02/hour=07/part-0.jsonl")
{'day': '2026-11-02', 'hour': 7}
>>> add_to_line(b'{"id": 1, "text": "x"}', {"hour": 7})
b'{"id": 1, "text": "x", "hour": 7}'
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from collections.abc import Iterator
from pathlib import PurePath
from typing import Any

from neardup import _fs

__all__ = [
    "PartOrder",
    "add_to_line",
    "add_to_records",
    "part_sort_key",
    "partition_values",
    "root_of",
]

_HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"
_INT = re.compile(r"[+-]?[0-9]+")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_RUNS = re.compile(r"[0-9]+|[^0-9]+")


def _value(text: str) -> Any:
    """A partition value typed as Spark infers it: int, float, None or the string."""
    if text == _HIVE_NULL:
        return None
    if _INT.fullmatch(text):
        return int(text)
    if _NUMBER.fullmatch(text):
        return float(text)
    return text


def _natural(text: str) -> tuple[tuple[int, int, str], ...]:
    return tuple((0, int(r), "") if r[0].isascii() and r[0].isdigit() else (1, 0, r)
                 for r in _RUNS.findall(text))  # fmt: skip


def _component_key(component: str) -> tuple[Any, ...]:
    name, eq, text = component.partition("=")
    if eq and name:
        value = _value(text)
        if isinstance(value, int | float):
            return (name, 0, float(value), _natural(text))
        return (name, 1, 0.0, _natural(text))
    return ("", 1, 0.0, _natural(component))


def part_sort_key(path: str) -> tuple[tuple[Any, ...], ...]:
    """Sort key of a part's path (relative to its folder): natural order per path component."""
    return tuple(_component_key(c) for c in PurePath(path).parts)


def root_of(part: str, inputs: tuple[str, ...]) -> str | None:
    """The input folder ``part`` was listed from (None when it was given as a file)."""
    for root in inputs:
        if root != "-" and part.startswith(root.rstrip("/") + "/") and _fs.isdir(root):
            return root
    return None


def partition_values(root: str, part: str) -> dict[str, Any]:
    """The ``name=value`` folders between ``root`` and ``part``, typed (see the module docs)."""
    rel = os.path.dirname(part[len(root.rstrip("/")) + 1 :]) if _fs.is_remote(root) else (
        os.path.relpath(os.path.dirname(part), root))  # fmt: skip
    out: dict[str, Any] = {}
    for component in PurePath(rel).parts:
        name, eq, text = component.partition("=")
        if eq and name:
            out[name] = _value(text)
    return out


def add_to_records(rows: Iterator[Any], values: dict[str, Any]) -> Iterator[Any]:
    """``(where, record)`` rows with the partition ``values`` added (the record's own win)."""
    for where, rec in rows:
        if isinstance(rec, dict):
            for name, value in values.items():
                rec.setdefault(name, value)
        yield where, rec


def add_to_line(line: bytes, values: dict[str, Any]) -> bytes:
    """A JSONL line (a JSON object, right-stripped) with the partition ``values`` added, as
    :func:`add_to_records` adds them to its record; lines that are no object stay as they are."""
    body = line.rstrip()
    if not body.endswith(b"}"):
        return line
    missing = values
    if any(f'"{name}"'.encode() in body for name in values):  # maybe its own field: look
        try:
            rec = json.loads(body)
        except ValueError:
            return line
        if not isinstance(rec, dict):
            return line
        missing = {k: v for k, v in values.items() if k not in rec}
    if not missing:
        return line
    extra = json.dumps(missing, ensure_ascii=False)[1:-1].encode()
    head = body[:-1].rstrip()
    return head + (b"" if head.endswith(b"{") else b", ") + extra + b"}"


class PartOrder:
    """Whether the parts of the input come in time order (a note for windowed and --state runs).

    Feed it the part each row comes from (:meth:`at`) and each document's timestamp
    (:meth:`see`); :meth:`note` names the first part that starts before an earlier part ended.

    >>> po = PartOrder()
    >>> for part, ts in [("m=1/a", 10.0), ("m=1/a", 20.0), ("m=2/a", 15.0), ("m=2/a", 30.0)]:
    ...     po.at(part)
    ...     po.see(ts)
    >>> po.note()  # doctest: +ELLIPSIS
    'input parts are not in time order: 1 of 2 parts start before an earlier part ends (m=2/a...'
    """

    def __init__(self) -> None:
        self._part = ""
        self._spans: dict[str, list[float]] = {}  # part -> [first seen min, max], input order

    def at(self, part: str) -> None:
        self._part = part

    def see(self, ts: float | None) -> None:
        if ts is None or ts != ts:
            return
        span = self._spans.get(self._part)
        if span is None:
            self._spans[self._part] = [ts, ts]
        else:
            span[0], span[1] = min(span[0], ts), max(span[1], ts)

    def note(self) -> str | None:
        """A note when some part starts before the parts read earlier end; else None."""
        late: list[tuple[str, float, float]] = []
        newest = -float("inf")
        for part, (lo, hi) in self._spans.items():
            if lo < newest:
                late.append((part, lo, newest))
            newest = max(newest, hi)
        if not late:
            return None
        part, lo, before = late[0]
        return (
            f"input parts are not in time order: {len(late)} of {len(self._spans)} parts start "
            f"before an earlier part ends ({part} starts at {_when(lo)}, earlier parts reach "
            f"{_when(before)}); windows and --state decide in input order, so give the parts "
            "in time order (name them so that they sort by time, e.g. day=2026-11-02)"
        )


def _when(ts: float) -> str:
    try:
        return dt.datetime.fromtimestamp(ts, dt.UTC).isoformat(timespec="seconds")
    except (OverflowError, OSError, ValueError):
        return repr(ts)
