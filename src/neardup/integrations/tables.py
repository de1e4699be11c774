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

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pyarrow as pa

from neardup._extras import require
from neardup.dedup import Decisions, Deduplicator
from neardup.io import parse_timestamp
from neardup.io.documents import EpochUnit
from neardup.overlap import OverlapFinder, Passage
from neardup.overlap.strip import strip_passages

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
PASSAGE_FIELDS = ("span", "source_id", "source_span", "score", "chars")
#: the columns ``overlap_table(strip=True)`` adds
STRIP_COLUMNS = ("passages", "stripped_text", "stripped_chars")
_KINDS = ("pyarrow", "polars", "pandas", "datasets")
_FEED_ROWS = 65536  # rows per feed: bounds the transient of fingerprints and sketches


def passage_type(source_id: pa.DataType) -> pa.DataType:
    """The Arrow type of the ``passages`` column, the source ids typed as the ids are.

    >>> passage_type(pa.string()).value_type.names
    ['span', 'source_id', 'source_span', 'score', 'chars']
    """
    span = pa.list_(pa.int64(), 2)
    fields = [("span", span), ("source_id", source_id), ("source_span", span)]
    return pa.list_(pa.struct([*fields, ("score", pa.float64()), ("chars", pa.int64())]))


class _Rows:
    """The texts, ids and timestamps of a table's rows, checked (errors name the row, counted
    from the first row ever given (``first``: the rows of earlier batches), and the fix)."""

    def __init__(
        self,
        columns: Mapping[str, Sequence[Any]],
        names: tuple[str, str | None, str | None],
        epoch_unit: EpochUnit,
        first: int = 0,
    ) -> None:
        text, ident, time = names
        self.texts: list[str] = _texts(columns, text, first)
        n = len(self.texts)
        self.ids: list[Any] = list(range(first, first + n))  # as the CLI: no id, the position
        self.id_type: pa.DataType | None = None
        if ident is not None and ident in columns:
            self.ids = _values(columns[ident])
            if (row := _first_null(self.ids)) is not None:
                raise ValueError(
                    f"row {first + row}: id column {ident!r} is null; give every row an id, or "
                    "pass id=None to use row positions"
                )
            column = columns[ident]
            if isinstance(column, pa.ChunkedArray | pa.Array):
                self.id_type = column.type
        self.times: list[float] | None = None
        if time is not None:
            self.times = _times(columns, time, epoch_unit, first)


def _values(column: Sequence[Any]) -> list[Any]:
    if isinstance(column, pa.ChunkedArray | pa.Array):
        values: list[Any] = column.to_pylist()
        return values
    return list(column)


def _first_null(values: list[Any]) -> int | None:
    return next((i for i, v in enumerate(values) if v is None), None)


def _missing(columns: Mapping[str, Any], name: str, what: str, option: str) -> ValueError:
    shown = ", ".join(map(str, list(columns)[:20])) or "none"
    return ValueError(f"no {what} column {name!r} (columns: {shown}); pass {option}=...")


def _texts(columns: Mapping[str, Sequence[Any]], name: str, first: int) -> list[str]:
    if name not in columns:
        raise _missing(columns, name, "text", "text")
    texts = _values(columns[name])
    for row, value in enumerate(texts):
        if not isinstance(value, str):
            got = "null" if value is None else type(value).__name__
            raise ValueError(
                f"row {first + row}: text column {name!r} holds {got}, not a string; fill or drop "
                "such rows first"
            )
    return texts


def _times(
    columns: Mapping[str, Sequence[Any]], name: str, unit: EpochUnit, first: int
) -> list[float]:
    if name not in columns:
        raise _missing(columns, name, "time", "time")
    out = []
    for row, value in enumerate(_values(columns[name])):
        if value is None:
            raise ValueError(
                f"row {first + row}: time column {name!r} is null; fill or drop such rows"
            )
        try:
            out.append(parse_timestamp(value, unit))
        except ValueError as exc:
            raise ValueError(f"row {first + row}: time column {name!r}: {exc}") from None
    return out


# ---------------------------------------------------------------------------- table kinds
def _kind(table: Any) -> str:
    """``pyarrow``, ``polars``, ``pandas`` or ``datasets``: the library of ``table``."""
    module = type(table).__module__.split(".")[0]
    if isinstance(table, pa.Table):
        return "pyarrow"
    if module in _KINDS[1:] and type(table).__name__ in ("DataFrame", "Dataset"):
        return module
    raise TypeError(
        f"expected a pyarrow Table, a Polars or pandas DataFrame or a datasets.Dataset, got "
        f"{type(table).__module__}.{type(table).__name__}"
    )


def _columns(table: Any, kind: str, names: Sequence[str | None]) -> dict[str, pa.ChunkedArray]:
    """The columns ``names`` of ``table`` that it has, as Arrow arrays (no copy where Arrow
    allows: pandas' object columns are converted)."""
    present = set(_column_names(table, kind))
    wanted = [n for n in dict.fromkeys(names) if n is not None and n in present]
    if kind == "pyarrow":
        return {n: table.column(n) for n in wanted}
    if kind == "polars":
        return {n: pa.chunked_array([table.get_column(n).to_arrow()]) for n in wanted}
    if kind == "pandas":
        return {n: pa.chunked_array([pa.array(table[n], from_pandas=True)]) for n in wanted}
    arrow = table.with_format("arrow")  # datasets: its Arrow table, row selections applied
    return {n: arrow[n] for n in wanted}


def _column_names(table: Any, kind: str) -> list[str]:
    if kind == "polars":
        return list(table.columns)
    if kind == "pandas":
        return [str(c) for c in table.columns]
    return list(table.column_names)


def _all_columns(table: Any, kind: str) -> dict[str, None]:
    """The column names of ``table`` (a mapping, for the messages of :func:`_missing`)."""
    return dict.fromkeys(_column_names(table, kind))


def _check_new(present: Iterable[str], new: Sequence[str]) -> None:
    have = set(present)
    clash = [n for n in new if n in have]
    if clash:
        raise ValueError(
            f"the table already has column(s) {', '.join(clash)} that this adds; drop or "
            "rename them first (e.g. the output of an earlier run)"
        )


def _with_columns(table: Any, kind: str, new: dict[str, pa.Array]) -> Any:
    """``table`` with the Arrow arrays ``new`` appended as columns, same kind of object."""
    if kind == "pyarrow":
        for name, array in new.items():
            table = table.append_column(name, array)
        return table
    if kind == "polars":
        pl = require("polars", "tables", "dedup_table on a Polars DataFrame")
        return table.hstack(pl.from_arrow(pa.table(new)).get_columns())
    if kind == "pandas":
        pd = require("pandas", "tables", "dedup_table on a pandas DataFrame")
        extra = {
            n: pd.Series(pd.arrays.ArrowExtensionArray(a), index=table.index)
            for n, a in new.items()
        }
        return table.assign(**extra)
    for name, array in new.items():  # datasets: appended to its Arrow table, features kept
        table = table.add_column(name, array)
    return table


def _read(
    table: Any, kind: str, names: tuple[str, str | None, str | None], unit: EpochUnit
) -> _Rows:
    """The checked rows of ``table`` (``names``: its text, id and time columns)."""
    present = _all_columns(table, kind)
    text, _, time = names
    for name, what in ((text, "text"), (time, "time")):
        if name is not None and name not in present:
            raise _missing(present, name, what, what)
    return _Rows(_columns(table, kind, names), names, unit)


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
        self.deduplicator = dd
        self.names = (text, id, time)
        self.epoch_unit = epoch_unit
        self._kept: dict[int, Any] = {}  # position -> id of the documents kept (duplicate_of)

    def __call__(self, batch: Any) -> Any:
        """``batch`` with the decisions of its rows added: a pyarrow Table (``datasets``'
        Arrow format) gets typed columns appended, a ``{column: values}`` dict lists."""
        arrow = isinstance(batch, pa.Table)
        columns = {n: batch.column(n) for n in batch.column_names} if arrow else batch
        _check_new(columns, DEDUP_COLUMNS)
        rows = _Rows(columns, self.names, self.epoch_unit, self.deduplicator.n_documents)
        fields = self.decide(rows)
        if not arrow:
            return {**batch, **fields}
        id_type = rows.id_type if self.names[1] in columns else None
        return _with_columns(batch, "pyarrow", _arrays(fields, id_type))

    def decide(self, rows: _Rows) -> dict[str, list[Any]]:
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
        return self.deduplicator.external_id(position) if got is self else got


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
    kind = _kind(table)
    _check_new(_all_columns(table, kind), DEDUP_COLUMNS)
    rows = _read(table, kind, (text, id, time), epoch_unit)
    dd = Deduplicator(**options)
    if dd.keep == "first":
        fields = DedupBatches(deduplicator=dd).decide(rows)
    else:  # longest / newest: the whole input, in priority order (as the CLI does)
        fields = _empty_fields()
        _extend(fields, dd.run(rows.texts, rows.times), rows.ids.__getitem__)
    id_type = rows.id_type if id is not None else None
    return _with_columns(table, kind, _arrays(fields, id_type))


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
    epoch_unit: EpochUnit = "s",
    finder: OverlapFinder | None = None,
    add: bool = True,
    strip: bool = False,
    strip_min_length: int = 0,
    **options: Any,
) -> Any:
    """``table`` with a ``passages`` column added: per row, the list of the passages it
    shares with an earlier row (``time`` order when given, ties in row order; or with the
    documents of ``finder``, e.g. a loaded reference), each a struct of the fields of a
    ``neardup overlap`` output row less the row's own id (``span``, ``source_id``,
    ``source_span``, ``score``, ``chars``). One row per document keeps the table's shape (a
    filter or a join on its columns still holds); one row per passage pair is an explode away
    (``pyarrow.compute.list_flatten``, Polars' ``explode``). ``add=False`` only looks rows up
    in ``finder`` (``neardup overlap --against``). ``strip=True`` also adds ``stripped_text``,
    the text less its passages (merged; stretches under ``strip_min_length`` characters stay),
    and ``stripped_chars``, as ``neardup overlap --strip`` writes them (the text column is
    left as it is). ``options`` are the :class:`~neardup.overlap.OverlapFinder`'s.

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
    kind = _kind(table)
    _check_new(_all_columns(table, kind), STRIP_COLUMNS if strip else ("passages",))
    rows = _read(table, kind, (text, id, time), epoch_unit)
    found = _passages(OverlapFinder(**options) if finder is None else finder, rows, add)
    source = rows.id_type if rows.id_type is not None and id is not None else pa.int64()
    cells = [[_passage_cell(p) for p in got] for got in found]
    new = {"passages": pa.array(cells, type=passage_type(source))}
    if strip:
        pairs = zip(rows.texts, found, strict=True)
        cut = [strip_passages(t, got, strip_min_length) for t, got in pairs]
        new["stripped_text"] = pa.array([c[0] for c in cut], pa.string())
        new["stripped_chars"] = pa.array([c[1] for c in cut], pa.int64())
    return _with_columns(table, kind, new)


def _passages(finder: OverlapFinder, rows: _Rows, add: bool) -> list[list[Passage]]:
    """Each row's passages, the rows added to ``finder`` in time order (ties: row order)."""
    order = list(range(len(rows.texts)))
    if rows.times is not None:
        times = rows.times
        order.sort(key=lambda i: (times[i], i))
    found: list[list[Passage]] = [[] for _ in order]
    items = ((rows.texts[i], rows.ids[i]) for i in order)
    for i, got in zip(order, finder.stream(items, add=add), strict=True):
        found[i] = got
    return found


def _passage_cell(p: Passage) -> dict[str, Any]:
    return {
        "span": list(p.span),
        "source_id": p.source_id,
        "source_span": list(p.source_span),
        "score": p.score,
        "chars": p.span[1] - p.span[0],
    }
