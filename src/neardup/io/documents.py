"""Turn records into documents: pick id, text and timestamp fields, validate, skip or fail.

Ids: a record whose id field is missing or ``null`` is referred to by its 0-based position
(so a kept document's duplicates never get ``duplicate_of: null``); ids need not be unique, but
:class:`ReadStats` counts the documents that share one so the CLI can warn (``duplicate_of``
is ambiguous for them).

Timestamps: ISO 8601 / date strings, or epoch numbers read in ``epoch_unit`` (``s``, ``ms``,
``us``, or ``auto``: by magnitude, see :func:`parse_timestamp`). Non-finite values and dates
outside years 1..9999 are bad rows (``--on-error``), so every timestamp fits a datetime and
an int64 of microseconds.

>>> stats = ReadStats()
>>> rows = [("f:1", {"id": "a", "text": "hello"}), ("f:2", {"id": "b", "text": 3})]
>>> [d.id for d in iter_documents(rows, on_error="skip", stats=stats)], stats.skipped
(['a'], 1)
>>> parse_window("7d"), parse_window("90m"), parse_window("30s"), parse_window(30)
(604800.0, 5400.0, 30.0, 30.0)
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal, TypedDict, Unpack

import numpy as np

from neardup.io.csv_out import has_surrogate
from neardup.io.readers import InputError, Record, Row

OnError = Literal["fail", "skip"]
EpochUnit = Literal["s", "ms", "us", "auto"]
EPOCH_UNITS: tuple[EpochUnit, ...] = ("s", "ms", "us", "auto")
_EPOCH_SCALE = {"s": 1.0, "ms": 1e-3, "us": 1e-6}
# auto: epoch seconds reach 1e11 only in year 5138, milliseconds 1e14 likewise; so a magnitude
# below 1e11 is seconds, below 1e14 milliseconds, below 1e17 microseconds (any date after 1973)
_AUTO_LIMITS: tuple[tuple[float, EpochUnit], ...] = ((1e11, "s"), (1e14, "ms"), (1e17, "us"))
MIN_TIMESTAMP = -62135596800.0  # 0001-01-01T00:00:00Z
MAX_TIMESTAMP = 253402300799.0  # 9999-12-31T23:59:59Z
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
    """Counts kept while reading; ``errors`` holds the first few skip messages.

    ``reasons`` counts skips by message without its location, so "every row failed the same
    way" shows; ``epoch_units`` counts how numeric timestamps were read; with ``track_ids`` the
    ids are hashed so :meth:`shared_ids` can count the documents whose id is not unique.
    """

    documents: int = 0
    skipped: int = 0
    bytes: int = 0
    errors: list[str] = field(default_factory=list)
    reasons: Counter[str] = field(default_factory=Counter)
    epoch_units: Counter[str] = field(default_factory=Counter)
    positional_ids: int = 0
    track_ids: bool = False
    id_hashes: array[int] = field(default_factory=lambda: array("q"))

    def nothing_read(self) -> str:
        """The message when every row was skipped: the commonest reason and the first error."""
        reason, count = self.reasons.most_common(1)[0] if self.reasons else ("?", 0)
        same = "all of them" if count == self.skipped else f"{count:,} of them"
        return (
            f"all {self.skipped:,} rows were skipped, nothing written; {same}: {reason} "
            f"(first: {self.errors[0] if self.errors else '?'})"
        )

    def skip(self, message: str, where: str = "") -> None:
        self.skipped += 1
        if len(self.errors) < 20:
            self.errors.append(message)
        reason = (
            message[len(where) + 2 :] if where and message.startswith(where + ": ") else message
        )
        if len(self.reasons) < 1000 or reason in self.reasons:
            self.reasons[reason] += 1

    def note_id(self, doc_id: Any) -> None:
        try:
            h = hash((type(doc_id).__name__, doc_id))
        except TypeError:  # dict / list ids
            h = hash(json.dumps(doc_id, sort_keys=True, default=str))
        self.id_hashes.append(h)

    def shared_ids(self) -> tuple[int, int]:
        """(documents whose id another document also has, distinct such ids).

        >>> s = ReadStats(track_ids=True)
        >>> for i in ["a", "b", "a", 1, "1", {"x": 1}, {"x": 1}]:
        ...     s.note_id(i)
        >>> s.shared_ids()
        (4, 2)
        """
        if not self.id_hashes:
            return 0, 0
        _, counts = np.unique(np.frombuffer(self.id_hashes, dtype=np.int64), return_counts=True)
        shared = counts[counts > 1]
        return int(shared.sum()), int(shared.size)


def parse_window(value: str | float | int) -> float:
    """Parse a time window such as ``7d``, ``12h``, ``30m``, ``45s``, ``2w``, or seconds given
    as a number (not a string: ``"7"`` is refused, it might mean days as well as seconds).

    >>> parse_window("1.5h")
    5400.0
    >>> parse_window("7")
    Traceback (most recent call last):
    ValueError: bad window '7': give a unit (s/m/h/d/w): 7d for days? 7s for seconds?
    """
    if isinstance(value, int | float):
        seconds = float(value)
    else:
        m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*", value.lower())
        if m is None:
            raise ValueError(f"bad window {value!r}: use a number and a unit s/m/h/d/w, e.g. 7d")
        if not m.group(2):
            n = m.group(1)
            raise ValueError(
                f"bad window {value!r}: give a unit (s/m/h/d/w): {n}d for days? {n}s for seconds?"
            )
        seconds = float(m.group(1)) * _UNITS[m.group(2)]
    if not seconds > 0 or math.isinf(seconds):
        raise ValueError(f"window must be a positive duration, got {value!r}")
    return seconds


def parse_timestamp(value: Any, epoch_unit: EpochUnit = "s") -> float:
    """Seconds since the epoch from a number, an ISO 8601 string or a Reuters-style date.

    Accepted: ISO 8601 (``2026-11-02``, ``2026-11-02T09:30:00Z``, offsets), compact ISO dates
    (``20261102``, ``20261102093000``: 8 or 14 digits that form a valid date, as strings; as
    numbers only with ``auto``), ``2026/11/02 [09:30:00]``, Reuters' ``26-FEB-1987 15:01:01.79``,
    and epoch numbers. Naive datetimes are taken as UTC. Other numbers (and numeric strings)
    count ``epoch_unit``s; ``auto`` reads a magnitude below 1e11 as seconds, below 1e14 as
    milliseconds, below 1e17 as microseconds (ambiguous only for epoch seconds after the year
    5138).

    >>> parse_timestamp("1970-01-02"), parse_timestamp(5)
    (86400.0, 5.0)
    >>> parse_timestamp("26-FEB-1987 15:01:01.79")
    541350061.79
    >>> parse_timestamp(1700000000000, "auto"), parse_timestamp("1700000000", "auto")
    (1700000000.0, 1700000000.0)
    >>> parse_timestamp("19700102"), parse_timestamp("19700102000001")
    (86400.0, 86401.0)
    >>> parse_timestamp(19700102, "auto"), parse_timestamp(19700102, "s")
    (86400.0, 19700102.0)
    >>> parse_timestamp("nan")
    Traceback (most recent call last):
    ValueError: timestamp 'nan' is not a finite number; fix the value
    """
    return read_timestamp(value, epoch_unit)[0]


def read_timestamp(value: Any, epoch_unit: EpochUnit = "s") -> tuple[float, str | None]:
    """:func:`parse_timestamp` plus the unit a number was read in (None for dates)."""
    if epoch_unit not in EPOCH_UNITS:
        raise ValueError(f"epoch_unit must be one of {', '.join(EPOCH_UNITS)}, got {epoch_unit!r}")
    if isinstance(value, bool):
        raise ValueError(f"timestamp must be a number or a date string, got {value!r}")
    if isinstance(value, int) and epoch_unit == "auto":
        compact = _compact_date(str(value))
        if compact is not None:
            return compact, None
    if isinstance(value, int | float | Decimal):
        return _from_number(value, value, epoch_unit)
    if isinstance(value, dt.datetime):
        return _epoch(value), None
    if isinstance(value, dt.date):
        return _epoch(dt.datetime(value.year, value.month, value.day)), None
    if isinstance(value, str):
        s = value.strip()
        compact = _compact_date(s)
        if compact is not None:
            return compact, None
        try:
            number = float(s)
        except ValueError:
            pass
        else:
            return _from_number(number, value, epoch_unit)
        try:
            return _epoch(dt.datetime.fromisoformat(s.replace("Z", "+00:00"))), None
        except ValueError:
            pass
        for fmt in _TIME_FORMATS:
            try:
                return _epoch(dt.datetime.strptime(s.title(), fmt)), None
            except ValueError:
                continue
    raise ValueError(
        f"cannot read timestamp {value!r}: use epoch seconds or ISO 8601 (2026-11-21T09:00:00Z)"
    )


def _compact_date(s: str) -> float | None:
    """Epoch seconds of ``YYYYMMDD`` / ``YYYYMMDDhhmmss`` (years 1000..9999), None for other
    strings; 8 or 14 digits that are no valid date are refused: such digits are meant as dates
    (epoch seconds of that size would fall in 1970)."""
    if len(s) not in (8, 14) or not s.isdigit() or s[0] == "0":
        return None
    form = "YYYYMMDD" if len(s) == 8 else "YYYYMMDDhhmmss"
    try:
        when = dt.datetime.strptime(s, "%Y%m%d" if len(s) == 8 else "%Y%m%d%H%M%S")
    except ValueError:
        raise ValueError(
            f"timestamp {s!r} looks like a compact date ({form}) but is not a valid one; "
            "fix the value, or give epoch seconds (10 digits) or ISO 8601"
        ) from None
    return _epoch(when)


def _from_number(number: float | int | Decimal, shown: Any, unit: EpochUnit) -> tuple[float, str]:
    x = float(number)
    if not math.isfinite(x):
        raise ValueError(f"timestamp {shown!r} is not a finite number; fix the value")
    if unit == "auto":
        unit = next((u for limit, u in _AUTO_LIMITS if abs(x) < limit), "s")
    seconds = x * _EPOCH_SCALE[unit]
    if not MIN_TIMESTAMP <= seconds <= MAX_TIMESTAMP:
        raise ValueError(
            f"timestamp {shown!r} is out of range as epoch {unit} (years 1..9999); fix the "
            "value, or pass --epoch-unit ms/us if it counts milliseconds/microseconds"
        )
    return seconds, unit


def _epoch(t: dt.datetime) -> float:
    if t.tzinfo is None:
        t = t.replace(tzinfo=dt.UTC)
    seconds = round(t.timestamp(), 6)
    if not MIN_TIMESTAMP <= seconds <= MAX_TIMESTAMP:  # a time zone pushed it past year 9999
        raise ValueError(f"timestamp {t.isoformat()} is out of range (years 1..9999)")
    return seconds


def _future(value: Any, max_time: float) -> str:
    limit = dt.datetime.fromtimestamp(max_time, dt.UTC).strftime("%Y-%m-%d %H:%M")
    return (
        f"timestamp {value!r} is after {limit} UTC (this machine's clock plus --max-future): "
        "a typo in the year? fix the value, or raise --max-future (none: no limit)"
    )


def _field_names(rec: Record) -> str:
    # repr: a field name with a newline must not break the one-line error
    names = [n if n.isprintable() else repr(n) for n in map(str, rec)]
    shown = ", ".join(names[:20]) + (", ..." if len(names) > 20 else "")
    return shown or "none"


def record_to_document(
    rec: Record,
    position: int,
    where: str,
    *,
    text_field: str = "text",
    id_field: str = "id",
    time_field: str | None = None,
    epoch_unit: EpochUnit = "s",
    stats: ReadStats | None = None,
    max_time: float | None = None,
    utf8_ids: bool = False,
) -> Document:
    """Validate one record; raise :class:`InputError` naming ``where`` when it is unusable.

    A record whose id field is missing or null gets its position as id. ``max_time``: later
    timestamps are refused (``--max-future``: a typo in the year would move a time window for
    every later document). ``utf8_ids``: an id with a lone surrogate (a legal JSON escape
    with no UTF-8 form) is refused, for outputs that cannot keep it (CSV, Parquet: ``"\\ud800"``
    and ``"\\udfff"`` would both be written as one replacement character).
    """
    if text_field not in rec:
        raise InputError(
            f"{where}: missing text field {text_field!r} (fields: "
            f"{_field_names(rec)}); use --text-field"
        )
    text = rec[text_field]
    if not isinstance(text, str):
        raise InputError(
            f"{where}: field {text_field!r} must be a string, got {type(text).__name__}"
        )
    ts = None
    if time_field is not None:
        if rec.get(time_field) is None:
            raise InputError(
                f"{where}: missing time field {time_field!r} (fields: "
                f"{_field_names(rec)}); check --time-field"
            )
        try:
            ts, unit = read_timestamp(rec[time_field], epoch_unit)
        except ValueError as exc:
            raise InputError(f"{where}: {exc}") from None
        if unit is not None and stats is not None:
            stats.epoch_units[unit] += 1
        if max_time is not None and ts > max_time:
            raise InputError(f"{where}: {_future(rec[time_field], max_time)}")
    doc_id = rec.get(id_field)
    if doc_id is None:
        doc_id = position
        if stats is not None:
            stats.positional_ids += 1
    elif utf8_ids and not isinstance(doc_id, int | float) and not _has_utf8(doc_id):
        raise InputError(
            f"{where}: id {doc_id!r} holds a lone surrogate (no UTF-8 form), so CSV and "
            "Parquet cannot write it apart from other ids; write JSONL (it keeps the escape) "
            "or fix the id"
        )
    return Document(position, doc_id, text, ts)


def _has_utf8(value: Any) -> bool:
    """Whether ``value`` (an id: a string, or any JSON value) can be written as UTF-8.

    >>> _has_utf8("caf\\u00e9"), _has_utf8("\\ud800"), _has_utf8({"k": ["\\udfff"]})
    (True, False, False)
    """
    if isinstance(value, str):
        return value.isascii() or not has_surrogate(value)
    return not has_surrogate(json.dumps(value, ensure_ascii=False, default=str))


class RecordFields(TypedDict, total=False):
    """Where a record's text, id and time are and how its time is read: the keyword options
    of :func:`record_to_document` (its defaults hold for those not given)."""

    text_field: str
    id_field: str
    time_field: str | None
    epoch_unit: EpochUnit
    max_time: float | None
    utf8_ids: bool


class ReadOptions(RecordFields, total=False):
    """The keyword options of :func:`iter_document_records` and :func:`iter_documents`."""

    on_error: OnError
    stats: ReadStats | None


def iter_document_records(
    rows: Iterable[Row],
    *,
    on_error: OnError = "fail",
    stats: ReadStats | None = None,
    **fields: Unpack[RecordFields],
) -> Iterator[tuple[Document, Record]]:
    """Yield ``(document, record)`` for valid rows; skip (counting) or raise on bad rows.

    ``fields`` go to :func:`record_to_document`."""
    if on_error not in ("fail", "skip"):
        raise ValueError(f"on_error must be 'fail' or 'skip', got {on_error!r}")
    stats = ReadStats() if stats is None else stats
    for where, rec in rows:
        try:
            if isinstance(rec, InputError):
                raise rec
            doc = record_to_document(rec, stats.documents, where, stats=stats, **fields)
        except InputError as exc:
            if on_error == "fail":
                raise
            stats.skip(str(exc), where)
            continue
        if stats.track_ids:
            stats.note_id(doc.id)
        stats.documents += 1
        text = doc.text  # isascii() is O(1) on str: no encode of ASCII texts just to count
        stats.bytes += len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
        yield doc, rec


def iter_documents(rows: Iterable[Row], **options: Unpack[ReadOptions]) -> Iterator[Document]:
    """Yield valid documents from ``(where, record)`` rows; skip or raise on bad rows (the
    options of :func:`iter_document_records`)."""
    for doc, _ in iter_document_records(rows, **options):
        yield doc
