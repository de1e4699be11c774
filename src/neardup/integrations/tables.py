"""Dedup and overlap on in-memory tables: a pyarrow Table, a Polars or pandas DataFrame, or a
Hugging Face ``datasets.Dataset``; the same kind of object comes back with columns added.

The decisions are the :class:`~neardup.Deduplicator`'s (fed in row order, as ``neardup
dedup`` feeds it) and the passages the :class:`~neardup.overlap.OverlapFinder`'s (in
time order with ``time``, as ``neardup overlap`` adds them): the columns equal the fields the
CLI writes for the same rows. The input's own columns are not copied (Arrow shares them; new
columns are built as Arrow arrays and handed over as they are).

>>> import pyarrow as pa
>>> t = pa.table({"id": ["a", "b", "c"],
...               "text": ["storm hits the coast", "Storm  hits the coast", "cats"]})
>>> out = dedup_table(t)
>>> out.column("status").to_pylist(), out.column("duplicate_of").to_pylist()
(['unique', 'exact_duplicate', 'unique'], [None, 'a', None])
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from neardup.dedup import Decisions, Deduplicator
from neardup.integrations._frames import (
    Rows,
    all_columns,
    check_new,
    kind_of,
    read_rows,
    with_columns,
)
from neardup.io.documents import EpochUnit
from neardup.overlap import OverlapFinder, Passage
from neardup.overlap.strip import (
    STRIP_TEMPLATES,
    cuts_templates,
    split_templates,
    strip_counted,
)

__all__ = [
    "DEDUP_COLUMNS",
    "STRIP_COLUMNS",
    "DedupBatches",
    "dedup_table",
    "overlap_table",
    "passage_type",
]

#: the columns dedup adds, in the order ``neardup dedup`` writes its fields
DEDUP_COLUMNS = ("cluster_id", "duplicate_of", "distance", "similarity", "status")
#: the fields of one passage: ``neardup overlap``'s output row, less the document's own id
PASSAGE_FIELDS = ("span", "source_id", "source_span", "score", "chars", "closest_id",
                  "closest_span", "closest_score", "template")  # fmt: skip
#: the columns ``overlap_table(strip=True)`` adds
STRIP_COLUMNS = ("passages", "stripped_text", "stripped_chars", "stripped_template_chars")
_FEED_ROWS = 65536  # rows per feed: bounds the transient of fingerprints and sketches


def passage_type(source_id: pa.DataType) -> pa.DataType:
    """The Arrow type of the ``passages`` column, the source ids typed as the ids are.

    >>> passage_type(pa.string()).value_type.names[:5]
    ['span', 'source_id', 'source_span', 'score', 'chars']
    """
    span = pa.list_(pa.int64(), 2)
    fields = [("span", span), ("source_id", source_id), ("source_span", span)]
    fields += [("score", pa.float64()), ("chars", pa.int64()), ("closest_id", source_id)]
    fields += [("closest_span", span), ("closest_score", pa.float64()), ("template", pa.bool_())]
    return pa.list_(pa.struct(fields))


# ---------------------------------------------------------------------------- dedup
class DedupBatches:
    """Dedup decisions batch by batch, against every batch before: a callable for
    ``datasets.Dataset.map(batched=True)`` over one :class:`~neardup.Deduplicator` that
    persists between calls. Each call takes a batch (a pyarrow Table, or ``{column: values}``)
    and returns it with :data:`DEDUP_COLUMNS` added; the decisions equal one
    :func:`dedup_table` call on all the rows in the same order. Map over the Arrow format,
    ``ds.with_format("arrow").map(batches, batched=True)``: the columns come back typed and
    the batch's own columns are not copied (with lists, ``datasets`` types a column by its
    first batch, and a first batch with no duplicate leaves ``duplicate_of`` untyped).

    Keyword arguments: ``text``, ``id``, ``time`` (column names; ``id`` absent or None: row
    positions are the ids, as in the CLI), ``epoch_unit`` (of numeric times), and either
    ``deduplicator`` (e.g. loaded from a state) or the :class:`~neardup.Deduplicator` options.
    Batches are decided as they come, so ``keep`` must be ``first``; run ``map`` in one
    process (no ``num_proc``): each process would hold a Deduplicator of its own.

    >>> dd = DedupBatches(threshold=0.6)
    >>> dd({"text": ["storm hits the coast tonight", "cats"]})["status"]
    ['unique', 'unique']
    >>> dd(pa.table({"text": ["Storm hits the coast tonight!"]})).column("duplicate_of")[0]
    <pyarrow.Int64Scalar: 0>
    """

    def __init__(
        self,
        *,
        text: str = "text",
        id: str | None = "id",
        time: str | None = None,
        epoch_unit: EpochUnit = "s",
        deduplicator: Deduplicator | None = None,
        **options: Any,
    ) -> None:
        if deduplicator is not None and options:
            raise ValueError(
                f"pass either deduplicator= or Deduplicator options, not both (got "
                f"{', '.join(sorted(options))})"
            )
        dd = Deduplicator(**options) if deduplicator is None else deduplicator
        if dd.keep != "first":
            raise ValueError(
                f"keep={dd.keep!r} needs all rows at once: use dedup_table(), or keep='first' "
                "for batches"
            )
        _check_time(dd, time)
        self.deduplicator = dd
        self.names = (text, id, time)
        self.epoch_unit = epoch_unit
        self._kept: dict[int, Any] = {}  # position -> id of the documents kept (duplicate_of)

    def __call__(self, batch: Any) -> Any:
        """``batch`` with the decisions of its rows added: a pyarrow Table (``datasets``'
        Arrow format) gets typed columns appended, a ``{column: values}`` dict lists."""
        arrow = isinstance(batch, pa.Table)
        columns = {n: batch.column(n) for n in batch.column_names} if arrow else batch
        check_new(columns, DEDUP_COLUMNS)
        rows = Rows(columns, self.names, self.epoch_unit, self.deduplicator.n_documents)
        fields = self.decide(rows)
        if not arrow:
            return {**batch, **fields}
        id_type = rows.id_type if self.names[1] in columns else None
        return with_columns(batch, "pyarrow", _arrays(fields, id_type))

    def decide(self, rows: Rows) -> dict[str, list[Any]]:
        """The decision columns of ``rows``, fed after every row before."""
        dd, out = self.deduplicator, _empty_fields()
        for a in range(0, len(rows.texts), _FEED_ROWS):
            b = a + _FEED_ROWS
            base = dd.n_documents
            times = None if rows.times is None else rows.times[a:b]
            d = dd.feed(rows.texts[a:b], times)
            ids = rows.ids[a:b]
            for i, r in enumerate(d.duplicate_of.tolist()):
                if r < 0:
                    self._kept[base + i] = ids[i]
            _extend(out, d, self._id_of)
        return out

    def _id_of(self, position: int) -> Any:
        got = self._kept.get(position, self)
        # documents of a state the Deduplicator was loaded with: its stored ids
        return self.deduplicator.state.external_id(position) if got is self else got


def _check_time(dd: Deduplicator, time: str | None) -> None:
    if time is None and (dd.window is not None or dd.keep == "newest"):
        what = "keep='newest'" if dd.keep == "newest" else "window="
        raise ValueError(f"{what} needs each row's time: pass time='<column>'")


def _empty_fields() -> dict[str, list[Any]]:
    return {name: [] for name in DEDUP_COLUMNS}


def _extend(out: dict[str, list[Any]], d: Decisions, id_of: Any) -> None:
    """Append the fields ``neardup dedup`` writes for decisions ``d`` to ``out``: the kept
    document's id, the distance and similarity (4 decimals) for a duplicate, nulls for a kept
    document."""
    rep = d.duplicate_of.tolist()
    out["cluster_id"] += d.cluster_id.tolist()
    out["duplicate_of"] += [None if r < 0 else id_of(r) for r in rep]
    out["distance"] += [None if r < 0 else x for r, x in zip(rep, d.distance.tolist(), strict=True)]
    sims = d.similarity.tolist()
    out["similarity"] += [
        None if r < 0 or x != x else round(x, 4) for r, x in zip(rep, sims, strict=True)
    ]
    out["status"] += d.statuses


def _read(
    table: Any, names: tuple[str, str | None, str | None], unit: EpochUnit, adds: tuple[str, ...]
) -> tuple[str, Rows]:
    """The kind of ``table`` and its checked rows (``names``: its text, id and time columns),
    once it is known to have none of the columns ``adds`` (what the caller appends)."""
    kind = kind_of(table)
    check_new(all_columns(table, kind), adds)
    return kind, read_rows(table, kind, names, unit)


def dedup_table(
    table: Any,
    text: str = "text",
    id: str | None = "id",
    time: str | None = None,
    *,
    epoch_unit: EpochUnit = "s",
    **options: Any,
) -> Any:
    """``table`` (a pyarrow Table, a Polars or pandas DataFrame, a ``datasets.Dataset``) with
    the dedup decisions of its rows added as columns :data:`DEDUP_COLUMNS`, the same kind of
    object. ``options`` are the :class:`~neardup.Deduplicator`'s (``threshold``, ``k``,
    ``keep``, ``window`` in seconds with ``time``, ...). ``duplicate_of`` holds the kept row's
    id (its position when the table has no ``id`` column), typed as the ids are.
    """
    kind, rows = _read(table, (text, id, time), epoch_unit, DEDUP_COLUMNS)
    dd = Deduplicator(**options)
    _check_time(dd, time)
    if dd.keep == "first":
        fields = DedupBatches(time=time, deduplicator=dd).decide(rows)
    else:  # longest / newest: the whole input, in priority order (as the CLI does)
        fields = _empty_fields()
        _extend(fields, dd.run(rows.texts, rows.times), rows.ids.__getitem__)
    id_type = rows.id_type if id is not None else None
    return with_columns(table, kind, _arrays(fields, id_type))


def _arrays(fields: dict[str, list[Any]], id_type: pa.DataType | None) -> dict[str, pa.Array]:
    """The decision columns as Arrow arrays, ``duplicate_of`` typed as the ids (None: row
    positions, int64)."""
    types = {"cluster_id": pa.int64(), "duplicate_of": id_type or pa.int64(),
             "distance": pa.int64(), "similarity": pa.float64(), "status": pa.string()}  # fmt: skip
    return {n: pa.array(fields[n], type=types[n]) for n in DEDUP_COLUMNS}


# ---------------------------------------------------------------------------- overlap
def overlap_table(
    table: Any,
    text: str = "text",
    id: str | None = "id",
    time: str | None = None,
    *,
    finder: OverlapFinder | None = None,
    add: bool = True,
    epoch_unit: EpochUnit = "s",
    strip: bool = False,
    strip_min_length: int = 0,
    strip_templates: bool = STRIP_TEMPLATES,
    **options: Any,
) -> Any:
    """``table`` with a ``passages`` column added: per row, the list of the passages it
    shares with an earlier row (``time`` order when given, ties in row order; or with the
    documents of ``finder``, e.g. a loaded reference), each a struct of the fields of a
    ``neardup overlap`` output row less the row's own id (``span``, ``source_id``,
    ``source_span``, ``score``, ``chars``, the ``closest_*`` source when another, and
    ``template``: true only for the templates ``templates="keep"`` reports). One row per
    document keeps the table's shape (a filter or a join on its columns still holds); one row
    per passage pair is an explode away
    (``pyarrow.compute.list_flatten``, Polars' ``explode``). ``add=False`` only looks rows up
    in ``finder`` (``neardup overlap --against``). ``strip=True`` also adds ``stripped_text``,
    the text less its passages (merged; stretches under ``strip_min_length`` characters stay),
    and ``stripped_chars``, as ``neardup overlap --strip`` writes them (the text column is
    left as it is): what the ``passages`` column reports goes. With ``strip_templates``
    (``--strip-templates``) the templates set aside go too, and with ``templates="keep"`` those
    it flags; their characters are then counted apart in ``stripped_template_chars``.
    ``options`` are the :class:`~neardup.overlap.OverlapFinder`'s.

    >>> import pyarrow as pa
    >>> words = "one two three four five six seven eight nine ten eleven twelve"
    >>> t = pa.table({"id": [1, 2], "text": [words, "so: " + words]})
    >>> [p["span"] for p in overlap_table(t).column("passages")[1].as_py()]
    [[4, 66]]
    """
    if finder is not None and options:
        raise ValueError(
            f"pass either finder= or OverlapFinder options, not both (got {', '.join(options)})"
        )
    adds = STRIP_COLUMNS if strip else ("passages",)
    kind, rows = _read(table, (text, id, time), epoch_unit, adds)
    finder = OverlapFinder(**options) if finder is None else finder
    cut_templates = strip and cuts_templates(strip_templates, finder.templates)
    found, templates = _passages(finder, rows, add, cut_templates)
    source = rows.id_type if rows.id_type is not None and id is not None else pa.int64()
    cells = [[_passage_cell(p) for p in got] for got in found]
    new = {"passages": pa.array(cells, type=passage_type(source))}
    if strip:
        cut = [
            strip_counted(t, *split_templates(got, aside), strip_min_length)
            for t, got, aside in zip(rows.texts, found, templates, strict=True)
        ]
        new["stripped_text"] = pa.array([c[0] for c in cut], pa.string())
        new["stripped_chars"] = pa.array([c[1] for c in cut], pa.int64())
        if cut_templates:
            new["stripped_template_chars"] = pa.array([c[2] for c in cut], pa.int64())
    return with_columns(table, kind, new)


def _passages(
    finder: OverlapFinder, rows: Rows, add: bool, templates: bool
) -> tuple[list[list[Passage]], list[list[tuple[int, int]] | None]]:
    """Each row's passages, the rows added to ``finder`` in time order (ties: row order),
    and (with ``templates``; else None) the spans of those it set aside as templates."""
    order = list(range(len(rows.texts)))
    if rows.times is not None:
        times = rows.times
        order.sort(key=lambda i: (times[i], i))
    found: list[list[Passage]] = [[] for _ in order]
    spans: list[list[tuple[int, int]] | None] = [None for _ in order]
    aside = finder.record_template_spans() if templates else None
    items = ((rows.texts[i], rows.ids[i]) for i in order)
    for i, got in zip(order, finder.stream(items, add=add), strict=True):
        found[i] = got
        if aside is not None:
            spans[i] = aside.popleft()
    if templates:
        finder.record_template_spans(False)  # a finder passed in is used again
    return found, spans


def _passage_cell(p: Passage) -> dict[str, Any]:
    cell = p.row(template=True)  # the CLI's row, less the document's own id
    del cell["id"]
    return cell
