"""Turn records into documents: pick id, text and timestamp fields, validate, skip or fail.

>>> stats = ReadStats()
>>> rows = [("f:1", {"id": "a", "text": "hello"}), ("f:2", {"id": "b", "text": 3})]
>>> [d.id for d in iter_documents(rows, on_error="skip", stats=stats)], stats.skipped
(['a'], 1)
>>> parse_window("7d"), parse_window("90m"), parse_window("30")
(604800.0, 5400.0, 30.0)
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from neardup.io.readers import InputError, Record, Row

OnError = Literal["fail", "skip"]
_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}
_TIME_FORMATS = ("%d-%b-%Y %H:%M:%S.%f", "%d-%b-%Y %H:%M:%S", "%Y/%m/%d %H:%M:%S", "%Y/%m/%d")


@dataclass(frozen=True, slots=True)
class Document:
    """One input document: ``position`` is its 0-based place among the accepted documents."""

    position: int
    id: Any
    text: str
    timestamp: float | None = None


@dataclass
class ReadStats:
    """Counts kept while reading; ``errors`` holds the first few skip messages."""

    documents: int = 0
    skipped: int = 0
    bytes: int = 0
    errors: list[str] = field(default_factory=list)

    def skip(self, message: str) -> None:
        self.skipped += 1
        if len(self.errors) < 20:
            self.errors.append(message)


def parse_window(value: str | float | int) -> float:
    """Parse a time window such as ``7d``, ``12h``, ``30m``, ``45s``, ``2w`` or seconds.

    >>> parse_window("1.5h")
    5400.0
    """
    if isinstance(value, int | float):
        seconds = float(value)
    else:
        m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*", value.lower())
        if m is None:
            raise ValueError(f"bad window {value!r}: use a number and a unit s/m/h/d/w, e.g. 7d")
        seconds = float(m.group(1)) * _UNITS[m.group(2) or "s"]
    if not seconds > 0 or math.isinf(seconds):
        raise ValueError(f"window must be a positive duration, got {value!r}")
    return seconds


def parse_timestamp(value: Any) -> float:
    """Seconds since the epoch from a number, an ISO 8601 string or a Reuters-style date.

    Naive datetimes are taken as UTC.

    >>> parse_timestamp("1970-01-02"), parse_timestamp(5)
    (86400.0, 5.0)
    >>> parse_timestamp("26-FEB-1987 15:01:01.79")
    541350061.79
    """
    if isinstance(value, bool):
        raise ValueError(f"timestamp must be a number or a date string, got {value!r}")
    if isinstance(value, int | float):
        if not math.isfinite(value):
            raise ValueError(f"timestamp must be finite, got {value!r}")
        return float(value)
    if isinstance(value, dt.datetime):
        return _epoch(value)
    if isinstance(value, dt.date):
        return _epoch(dt.datetime(value.year, value.month, value.day))
    if isinstance(value, str):
        s = value.strip()
        try:
            return float(s)
        except ValueError:
            pass
        try:
            return _epoch(dt.datetime.fromisoformat(s.replace("Z", "+00:00")))
        except ValueError:
            pass
        for fmt in _TIME_FORMATS:
            try:
                return _epoch(dt.datetime.strptime(s.title(), fmt))
            except ValueError:
                continue
    raise ValueError(
        f"cannot read timestamp {value!r}: use epoch seconds or ISO 8601 (2026-11-21T09:00:00Z)"
    )


def _epoch(t: dt.datetime) -> float:
    if t.tzinfo is None:
        t = t.replace(tzinfo=dt.UTC)
    return round(t.timestamp(), 6)


def record_to_document(
    rec: Record,
    position: int,
    where: str,
    *,
    text_field: str = "text",
    id_field: str = "id",
    time_field: str | None = None,
) -> Document:
    """Validate one record; raise :class:`InputError` naming ``where`` when it is unusable.

    A record without the id field gets its position as id.
    """
    if text_field not in rec:
        raise InputError(
            f"{where}: missing text field {text_field!r} (fields: "
            f"{', '.join(map(str, rec)) or 'none'}); use --text-field"
        )
    text = rec[text_field]
    if not isinstance(text, str):
        raise InputError(
            f"{where}: field {text_field!r} must be a string, got {type(text).__name__}"
        )
    ts = None
    if time_field is not None:
        if rec.get(time_field) is None:
            raise InputError(f"{where}: missing time field {time_field!r}")
        try:
            ts = parse_timestamp(rec[time_field])
        except ValueError as exc:
            raise InputError(f"{where}: {exc}") from None
    return Document(position, rec.get(id_field, position), text, ts)


def iter_document_records(
    rows: Iterable[Row],
    *,
    text_field: str = "text",
    id_field: str = "id",
    time_field: str | None = None,
    on_error: OnError = "fail",
    stats: ReadStats | None = None,
) -> Iterator[tuple[Document, Record]]:
    """Yield ``(document, record)`` for valid rows; skip (counting) or raise on bad rows."""
    if on_error not in ("fail", "skip"):
        raise ValueError(f"on_error must be 'fail' or 'skip', got {on_error!r}")
    stats = ReadStats() if stats is None else stats
    for where, rec in rows:
        try:
            if isinstance(rec, InputError):
                raise rec
            doc = record_to_document(
                rec,
                stats.documents,
                where,
                text_field=text_field,
                id_field=id_field,
                time_field=time_field,
            )
        except InputError as exc:
            if on_error == "fail":
                raise
            stats.skip(str(exc))
            continue
        stats.documents += 1
        stats.bytes += len(doc.text.encode("utf-8", "surrogatepass"))
        yield doc, rec


def iter_documents(
    rows: Iterable[Row],
    *,
    text_field: str = "text",
    id_field: str = "id",
    time_field: str | None = None,
    on_error: OnError = "fail",
    stats: ReadStats | None = None,
) -> Iterator[Document]:
    """Yield valid documents from ``(where, record)`` rows; skip or raise on bad rows."""
    for doc, _ in iter_document_records(
        rows,
        text_field=text_field,
        id_field=id_field,
        time_field=time_field,
        on_error=on_error,
        stats=stats,
    ):
        yield doc
