"""Pass 2 of ``neardup dedup``: re-read the input and write each record with its decision.

Two writers: a generic one (any input format; records parsed and re-serialised) and a fast
one for JSONL in and out, which appends the decision fields to each original line without
parsing it (it parses only the lines whose ids or texts are needed).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from neardup.cli._common import progress
from neardup.dedup import STATUS_NAMES, Decisions, largest_clusters
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
from neardup.io.readers import skip_bom
from neardup.io.writers import dumps_utf8

_STATUS_TAIL = {name: f', "status": "{name}"}}\n'.encode() for name in STATUS_NAMES}


class Source(Protocol):
    """What the writers need from a dedup run."""

    inputs: tuple[str, ...]
    fmt: str | None
    id_field: str
    text_field: str
    on_error: str

    def documents(self, stats: ReadStats | None = None) -> Iterator[tuple[Document, Record]]: ...


@dataclass
class Plan:
    """Decisions as Python lists plus the ids and examples still to collect."""

    status: list[str]
    distance: list[int]
    cluster: list[int]
    rep: list[int]
    needed: set[int]
    examples: dict[int, list[str]]
    ids: dict[int, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, d: Decisions) -> Plan:
        dup = d.duplicate_of
        show: dict[int, list[str]] = {c: [] for c, _ in largest_clusters(d.cluster_id, top=5)}
        return cls(
            d.statuses,
            d.distance.tolist(),
            d.cluster_id.tolist(),
            dup.tolist(),
            set(np.unique(dup[dup >= 0]).tolist()),
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
        f = open_binary(path)
        try:
            skip_bom(f)  # as the reader does
            for line in f:
                if line.strip():
                    yield line.rstrip()
        finally:
            f.close()


def _record_id(rec: dict[str, Any], id_field: str, p: int) -> Any:
    doc_id = rec.get(id_field)
    return p if doc_id is None else doc_id  # null ids: the position (see io.documents)


def write_fast(src: Source, plan: Plan, out: str, drop: bool, lookahead: bool) -> None:
    """JSONL -> JSONL: append the decision fields to each original line."""
    if lookahead:  # kept documents may come after their duplicates: collect ids first
        for p, line in enumerate(_lines(src)):
            if p in plan.needed:
                plan.ids[p] = _record_id(_json.loads(line), src.id_field, p)
    encoded: dict[int, bytes] = {}  # JSON of each kept document's id, made once
    with open_writer(out) as writer, progress("writing") as advance:
        for p, line in enumerate(_lines(src)):
            if plan.wants(p):
                rec = _json.loads(line)
                plan.note(p, _record_id(rec, src.id_field, p), rec.get(src.text_field))
            r = plan.rep[p]
            if drop and r >= 0:
                continue
            if (
                b'"cluster_id"' in line
                or b'"duplicate_of"' in line
                or b'"distance"' in line
                or b'"status"' in line
                or not line.endswith(b"}")
            ):
                writer.write({**_json.loads(line), **_fields(plan, p)})
                continue
            if r < 0:
                middle = b'null, "distance": null'
            else:
                if r not in encoded:
                    encoded[r] = dumps_utf8(plan.ids[r])
                middle = encoded[r] + b', "distance": ' + str(plan.distance[p]).encode()
            writer.write_jsonl_line(
                b"".join(
                    (
                        line[:-1],
                        b', "cluster_id": ',
                        str(plan.cluster[p]).encode(),
                        b', "duplicate_of": ',
                        middle,
                        _STATUS_TAIL[plan.status[p]],
                    )
                )
            )
            advance(1)


def _fields(plan: Plan, p: int) -> dict[str, Any]:
    r = plan.rep[p]
    kept = r < 0
    return {
        "cluster_id": plan.cluster[p],
        "duplicate_of": None if kept else plan.ids[r],
        "distance": None if kept else plan.distance[p],
        "status": plan.status[p],
    }


def write_generic(src: Source, plan: Plan, out: str, drop: bool, lookahead: bool) -> None:
    """Any input format: parse each record again and write it with its decision."""
    if lookahead:
        for doc, _ in src.documents(ReadStats()):
            if doc.position in plan.needed:
                plan.ids[doc.position] = doc.id
    with (
        open_writer(
            out, type_hints=_type_hints(src, out), notes=getattr(src, "notes", None)
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


def _type_hints(src: Source, out: str) -> dict[str, Any]:
    """Parquet types for columns that may be all null in the first batch."""
    if detect_output_format(out) != "parquet":
        return {}
    import pyarrow as pa

    first = next(src.documents(ReadStats()), None)
    int_ids = first is not None and isinstance(first[0].id, int)
    return {"duplicate_of": pa.int64() if int_ids else pa.string(), "distance": pa.int64()}
