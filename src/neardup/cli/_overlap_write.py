"""The output rows of ``neardup overlap``: one per passage pair.

JSONL output without partition columns (the common case) is written as lines formatted here,
byte for byte the lines the shared writer makes from the row dicts (``json.dumps`` of
:func:`row`), about 5x faster (Reuters: 72,775 rows, 0.3 s -> 0.06 s); anything else (CSV,
Parquet, partition columns, an id that needs escapes) goes through the row dicts.

>>> from neardup.overlap import Passage
>>> p = Passage("b", (3, 9), "a", (0, 6), 0.5, 1, 0)
>>> jsonl_lines([p], {}) == [dumps_utf8(row(p)) + b"\\n"]
True
>>> row(p, template=True)["template"], row(p)["closest_id"]  # the closest source: a
(False, None)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from neardup.cli._common import usage_error
from neardup.io import FormatError
from neardup.io.writers import RecordWriter, dumps_utf8, open_writer
from neardup.overlap import Passage

__all__ = ["jsonl_lines", "row", "write_found", "write_rows"]

# the documents' passages (one list per document with any) and its partition columns
DocumentPassages = list[tuple[list[Passage], dict[str, Any]]]


def row(p: Passage, template: bool = False) -> dict[str, Any]:
    """The output row of passage ``p`` (:meth:`Passage.row <neardup.overlap.Passage.row>`)."""
    return p.row(template)


def _json(value: Any) -> str | None:
    """``value`` as the writer writes it inside a row, or None when that depends on the rest
    of the row (an escape: a lone surrogate makes the writer escape the whole row)."""
    b = dumps_utf8(value)
    return None if b"\\u" in b else b.decode("utf-8")


def jsonl_lines(
    got: list[Passage], sources: dict[int, str | None], template: bool = False
) -> list[bytes]:
    """The JSONL lines of one document's passages ``got`` (``sources``: a cache of the source
    ids' JSON by position; ``template``: rows with the ``template`` field)."""
    ident = _json(got[0].id) if got else None
    out = []
    for p in got:
        src = sources.get(p.source_position, "")
        if src == "":
            src = sources[p.source_position] = _json(p.source_id)
        if ident is None or src is None or p.id is not got[0].id or p.closest_span is not None:
            out.append(dumps_utf8(row(p, template)) + b"\n")
            continue
        (a, b), (c, d) = p.span, p.source_span
        score = float.__repr__(p.score)
        tail = (
            (', "template": true}\n' if p.template else ', "template": false}\n')
            if template
            else "}\n"
        )
        out.append(
            f'{{"id": {ident}, "span": [{a}, {b}], "source_id": {src}, "source_span": [{c}, {d}],'
            f' "score": {score}, "chars": {b - a}, "closest_id": null, "closest_span": null,'
            f' "closest_score": null{tail}'.encode()
        )
    return out


def _open(out: str, notes: list[str] | None) -> RecordWriter:
    """The writer of ``out`` (format from its extension; what it had to adapt, such as ids of
    mixed types written as strings in Parquet, goes to ``notes``, as for dedup); an unknown
    format is a usage error."""
    try:
        return open_writer(out, notes=notes, id_columns=("id", "source_id", "closest_id"))
    except FormatError as exc:
        raise usage_error(str(exc)) from None


def write_rows(out: str, rows: Iterable[dict[str, Any]], notes: list[str] | None = None) -> None:
    """Write the row dicts ``rows`` to ``out`` (format from its extension)."""
    with _open(out, notes) as writer:
        for r in rows:
            writer.write(r)


def write_found(
    out: str, found: DocumentPassages, notes: list[str] | None = None, template: bool = False
) -> None:
    """Write the rows of ``found`` to ``out`` (with the ``template`` field when asked): JSONL
    lines formatted here when no document has partition columns, else the row dicts with the
    columns."""
    with _open(out, notes) as writer:
        if writer.fmt != "jsonl" or any(extra for _, extra in found):
            for got, extra in found:
                for p in got:
                    writer.write({**row(p, template), **extra})
            return
        sources: dict[int, str | None] = {}
        batch: list[bytes] = []
        for got, _ in found:
            batch += jsonl_lines(got, sources, template)
            if len(batch) >= 4096:
                writer.write_jsonl_lines(batch)
                batch = []
        writer.write_jsonl_lines(batch)
