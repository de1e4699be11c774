"""The rows of an in-memory table (pyarrow Table, Polars or pandas DataFrame,
``datasets.Dataset``, or a ``{column: values}`` batch) read and checked, and the same kind of
object given back with Arrow columns appended: what :mod:`neardup.integrations.tables` needs
from each library, in one place."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pyarrow as pa

from neardup._extras import require
from neardup.io import parse_timestamp
from neardup.io.documents import EpochUnit

__all__ = ["Rows", "all_columns", "check_new", "kind_of", "read_rows", "with_columns"]

_KINDS = ("pyarrow", "polars", "pandas", "datasets")


class Rows:
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
def kind_of(table: Any) -> str:
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


def all_columns(table: Any, kind: str) -> dict[str, None]:
    """The column names of ``table`` (a mapping, for the messages of :func:`_missing`)."""
    return dict.fromkeys(_column_names(table, kind))


def check_new(present: Iterable[str], new: Sequence[str]) -> None:
    have = set(present)
    clash = [n for n in new if n in have]
    if clash:
        raise ValueError(
            f"the table already has column(s) {', '.join(clash)} that this adds; drop or "
            "rename them first (e.g. the output of an earlier run)"
        )


def with_columns(table: Any, kind: str, new: dict[str, pa.Array]) -> Any:
    """``table`` with the Arrow arrays ``new`` appended as columns, same kind of object."""
    if kind == "pyarrow":
        for name, array in new.items():
            table = table.append_column(name, array)
        return table
    if kind == "polars":
        pl = require(
            "polars", "tables", "neardup.dedup_table / overlap_table on a Polars DataFrame"
        )
        return table.hstack(pl.from_arrow(pa.table(new)).get_columns())
    if kind == "pandas":
        pd = require(
            "pandas", "tables", "neardup.dedup_table / overlap_table on a pandas DataFrame"
        )
        extra = {
            n: pd.Series(pd.arrays.ArrowExtensionArray(a), index=table.index)
            for n, a in new.items()
        }
        return table.assign(**extra)
    for name, array in new.items():  # datasets: appended to its Arrow table, features kept
        table = table.add_column(name, array)
    return table


def read_rows(
    table: Any, kind: str, names: tuple[str, str | None, str | None], unit: EpochUnit
) -> Rows:
    """The checked rows of ``table`` (``names``: its text, id and time columns)."""
    present = all_columns(table, kind)
    text, _, time = names
    for name, what in ((text, "text"), (time, "time")):
        if name is not None and name not in present:
            raise _missing(present, name, what, what)
    return Rows(_columns(table, kind, names), names, unit)
