"""Pass 2 of ``neardup dedup``: write each input record with its decision.

Two writers: a generic one (any input format; records re-read, parsed and re-serialised) and
a fast one for JSONL in and out, which appends the decision fields to each original line
without parsing it (it parses only the lines whose ids or texts are needed). The fast one
takes the lines pass 1 kept (:class:`LineSpool`, up to a memory budget) instead of reading
and decompressing the input again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

from neardup.cli._common import progress
from neardup.cli.report import largest_of
from neardup.dedup import STATUS_NAMES, Decisions
from neardup.io import (
    Document,
    ReadStats,
    Record,
    _json,
    detect_format,
    detect_output_format,
    open_binary,
    open_writer,
)
from neardup.io.partitions import add_to_line, partition_values, root_of
from neardup.io.readers import skip_bom
from neardup.io.writers import RecordWriter, dumps_utf8

_STATUS_TAIL = {name: f', "status": "{name}"}}\n'.encode() for name in STATUS_NAMES}
OUR_FIELDS = frozenset(
    ("cluster_id", "duplicate_of", "distance", "similarity", "threshold", "status")
)


class LineSpool:
    """Pass 1's raw JSONL lines (right-stripped, blank lines left out), kept for the writer
    while they fit in ``budget`` bytes; past it nothing is kept (``lines`` is None) and the
    writer reads the input again. ``keep`` is the reader's callback (a list's append: no
    Python call per line); :meth:`settle` after each chunk applies the budget. ``conflicts``:
    positions of records that already have a field of ours (those go through the generic
    record writer).

    >>> spool = LineSpool(budget=8)
    >>> spool.keep(b'{"a": 1}'); spool.settle(); spool.lines
    [b'{"a": 1}']
    >>> spool.keep(b'{"b": 2}'); spool.settle(); spool.lines is None
    True
    >>> LineSpool(budget=0).keep is None
    True
    """

    def __init__(self, budget: int = 256 << 20) -> None:
        self.lines: list[bytes] | None = [] if budget > 0 else None
        self.conflicts: set[int] = set()
        self._chunk: list[bytes] = []
        # budget 0 (an input larger than it): no callback, so the reader makes no
        # right-stripped copy of each line only to drop it (~10 % of reading Reuters' rows)
        self.keep: Callable[[bytes], object] | None = self._chunk.append if budget > 0 else None
        self._left = budget

    def settle(self) -> None:
        """Move the lines read since the last call into ``lines`` (or drop all past budget)."""
        if self.lines is not None:
            self._left -= sum(map(len, self._chunk))
            if self._left < 0:
                self.lines = None
            else:
                self.lines += self._chunk
        self._chunk.clear()


class Source(Protocol):
    """What the writers need from a dedup run."""

    inputs: tuple[str, ...]
    roots: tuple[str, ...]
    fmt: str | None
    id_field: str
    text_field: str
    on_error: str
    spool: LineSpool | None

    def documents(self, stats: ReadStats | None = None) -> Iterator[tuple[Document, Record]]: ...


@dataclass
class Plan:
    """Decisions as Python lists plus the ids and examples still to collect."""

    status: list[str]
    distance: list[int]
    similarity: list[float | None]
    threshold: list[float | None]  # the threshold that applied (issue 38)
    cluster: list[int]
    rep: list[int]
    needed: set[int]
    examples: dict[int, list[str]]
    ids: dict[int, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, d: Decisions) -> Plan:
        dup = d.duplicate_of
        show: dict[int, list[str]] = {c: [] for c, _ in largest_of(d)}  # the report's
        return cls(
            d.statuses,
            d.distance.tolist(),
            [None if x != x else round(x, 4) for x in d.similarity.tolist()],  # NaN -> null
            [None if x != x else x for x in d.threshold.tolist()],
            d.cluster_id.tolist(),
            dup.tolist(),
            set(dup[dup >= 0].tolist()),
            show,
        )

    def note(self, p: int, doc_id: Any, text: str | None) -> None:
        if p in self.needed:
            self.ids[p] = doc_id
        c = self.cluster[p]
        if text is not None and c in self.examples and len(self.examples[c]) < 4:
            self.examples[c].append(f"{doc_id}: {text[:160]}")

    def wants(self, p: int) -> bool:
        c = self.cluster[p]
        return p in self.needed or (c in self.examples and len(self.examples[c]) < 4)


def can_write_fast(src: Source, out: str) -> bool:
    """JSONL in and out, and every non-blank line a document (``--on-error fail``)."""
    return (
        src.on_error == "fail"
        and detect_output_format(out) == "jsonl"
        and all(detect_format(p, src.fmt) == "jsonl" for p in src.inputs)
    )


def _lines(src: Source) -> Iterator[bytes]:
    for path in src.inputs:
        root = root_of(path, src.roots)
        values = {} if root is None else partition_values(root, path)
        f = open_binary(path)
        try:
            skip_bom(f)  # as the reader does
            for line in f:
                if not line.isspace():  # == line.strip() on a non-empty line, without the copy
                    yield add_to_line(line.rstrip(), values) if values else line.rstrip()
        finally:
            f.close()


def _record_id(rec: dict[str, Any], id_field: str, p: int) -> Any:
    doc_id = rec.get(id_field)
    return p if doc_id is None else doc_id  # null ids: the position (see io.documents)


def write_fast(src: Source, plan: Plan, out: str, drop: bool, lookahead: bool) -> RecordWriter:
    """JSONL -> JSONL: append the decision fields to each original line; returns the writer,
    its file finished but not yet in place (the caller commits it after the other outputs).

    The hot loop is one ``%`` format per line and one write per 4096 lines; records that
    already hold a field of ours (``src.spool.conflicts``, or lines holding one of their names
    when no spool was kept) or lines that do not end in ``}`` go through the generic record
    writer.
    """
    spool = src.spool
    lines = spool.lines if spool is not None and spool.lines is not None else None
    if lookahead:  # kept documents may come after their duplicates: collect ids first
        _collect_ids(src, plan, lines)
    encoded: dict[int, bytes] = {}  # JSON of each kept document's id, made once
    needed, examples, cluster, rep = plan.needed, plan.examples, plan.cluster, plan.rep
    tails = [_STATUS_TAIL[s] for s in plan.status]
    batch: list[bytes] = []
    with (
        open_writer(out, deferred=True) as writer,
        progress("writing") as advance,
        _Behind(writer.write_jsonl_lines) as behind,
    ):

        def flush() -> None:
            behind.put(batch.copy())
            advance(len(batch))
            batch.clear()

        conflicts = spool.conflicts if spool is not None else None
        for p, line in enumerate(_lines(src) if lines is None else lines):
            c = cluster[p]
            if p in needed or (c in examples and len(examples[c]) < 4):
                rec = _json.loads(line)
                plan.note(p, _record_id(rec, src.id_field, p), rec.get(src.text_field))
            r = rep[p]
            if drop and r >= 0:
                continue
            ours = p in conflicts if conflicts is not None else _names_ours(line)
            if ours or line[-1:] != b"}":
                flush()  # keep the output in input order
                behind.drain()
                writer.write({**_json.loads(line), **_fields(plan, p)})
                advance(1)
                continue
            middle = _KEPT_MIDDLE if r < 0 else _duplicate_middle(plan, p, r, encoded)
            batch.append(
                b'%b, "cluster_id": %d, "duplicate_of": %b%b' % (line[:-1], c, middle, tails[p])
            )
            if len(batch) >= 1024:
                flush()
        flush()
        behind.drain()
    return writer


def _collect_ids(src: Source, plan: Plan, lines: list[bytes] | None) -> None:
    """The ids of the kept documents that duplicates name (``plan.needed``), read before
    writing (``lines``: pass 1's spool, else the input read again)."""
    for p, line in enumerate(_lines(src) if lines is None else lines):
        if p in plan.needed:
            plan.ids[p] = _record_id(_json.loads(line), src.id_field, p)


# the decision fields of a kept document after "duplicate_of": (its line's tail before status)
_KEPT_MIDDLE = b'null, "distance": null, "similarity": null, "threshold": null'


def _duplicate_middle(plan: Plan, p: int, r: int, encoded: dict[int, bytes]) -> bytes:
    """The decision fields of duplicate ``p`` of kept ``r`` after ``"duplicate_of": ``
    (``encoded``: a cache of the kept documents' ids as JSON)."""
    if r not in encoded:
        encoded[r] = dumps_utf8(plan.ids[r])
    return b'%b, "distance": %d, "similarity": %b, "threshold": %b' % (
        encoded[r],
        plan.distance[p],
        b"null" if plan.similarity[p] is None else b"%r" % plan.similarity[p],
        b"null" if plan.threshold[p] is None else b"%r" % plan.threshold[p],
    )


class _Behind:
    """Runs ``write`` on a second thread, one batch behind the caller, in order (issue 24: the
    writing was serial at the end of a run; the write calls release the GIL, so they overlap
    the formatting of the next batch). An error of a write is raised at the next
    :meth:`put` or :meth:`drain`; leaving the ``with`` waits for the last one."""

    def __init__(self, write: Any) -> None:
        self._write = write
        self._pool = ThreadPoolExecutor(1)
        self._pending: Future[None] | None = None

    def __enter__(self) -> _Behind:
        return self

    def put(self, lines: list[bytes]) -> None:
        """Write ``lines`` after the batches put before."""
        self.drain()
        if lines:
            self._pending = self._pool.submit(self._write, lines)

    def drain(self) -> None:
        """Wait until every batch put so far is written."""
        if self._pending is not None:
            pending, self._pending = self._pending, None
            pending.result()

    def __exit__(self, *exc: object) -> None:
        try:
            if exc[0] is None:
                self.drain()
        finally:
            self._pool.shutdown(wait=True)


def _names_ours(line: bytes) -> bool:
    return any(b'"%s"' % name.encode() in line for name in sorted(OUR_FIELDS))


def _fields(plan: Plan, p: int) -> dict[str, Any]:
    r = plan.rep[p]
    kept = r < 0
    return {
        "cluster_id": plan.cluster[p],
        "duplicate_of": None if kept else plan.ids[r],
        "distance": None if kept else plan.distance[p],
        "similarity": None if kept else plan.similarity[p],
        "threshold": None if kept else plan.threshold[p],
        "status": plan.status[p],
    }


def write_generic(src: Source, plan: Plan, out: str, drop: bool, lookahead: bool) -> RecordWriter:
    """Any input format: parse each record again and write it with its decision (returns the
    writer, not yet committed, as :func:`write_fast`)."""
    if lookahead:
        for doc, _ in src.documents(ReadStats()):
            if doc.position in plan.needed:
                plan.ids[doc.position] = doc.id
    with (
        open_writer(
            out,
            type_hints=_type_hints(src, out),
            notes=getattr(src, "notes", None),
            id_columns=(src.id_field, "duplicate_of"),
            deferred=True,
        ) as writer,
        progress("writing") as advance,
    ):
        for doc, rec in src.documents(ReadStats()):
            p = doc.position
            plan.note(p, doc.id, doc.text)
            if drop and plan.rep[p] >= 0:
                continue
            writer.write({**rec, **_fields(plan, p)})
            advance(1)
    return writer


def _type_hints(src: Source, out: str) -> dict[str, Any]:
    """Parquet types for columns that may be all null in the first batch."""
    if detect_output_format(out) != "parquet":
        return {}
    import pyarrow as pa

    first = next(src.documents(ReadStats()), None)
    int_ids = first is not None and isinstance(first[0].id, int)
    return {
        "duplicate_of": pa.int64() if int_ids else pa.string(),
        "distance": pa.int64(),
        "similarity": pa.float64(),
        "threshold": pa.float64(),
    }
