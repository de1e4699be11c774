"""Parquet output whose schema covers every row, not just the first batch.

Rows are converted batch by batch (each batch infers its own Arrow types) and spooled as Arrow
IPC streams to a hidden file beside the output; at close the batch schemas are unified (a field
first seen at row 9,000 is a column; ``int`` + ``float`` is ``double``; structs merge) and every
batch is cast to that schema while the Parquet file is written. A column whose values have no
common Arrow type (an id that is an int in one row and a string in another, or an object) is
written as strings (JSON text for non-strings) and named in :attr:`SpooledParquet.notes`; so
is an id column (``id_columns``) of ints and floats (``1`` and ``1.0`` are two ids). The note
of an id column names every kind of value it held, and when one id column is written as
strings, so are the others (``duplicate_of`` compares equal to ``id``).
Strings with lone surrogates (valid JSON escapes, invalid UTF-8) get U+FFFD, also noted.

>>> import io, pyarrow.parquet as pq
>>> sink = io.BytesIO()
>>> w = SpooledParquet(io.BytesIO(), batch_rows=2)
>>> for r in [{"id": 1}, {"id": 2}, {"id": "c", "x": 1.5}]:
...     w.write(r)
>>> w.finish(sink)
>>> pq.read_table(sink).to_pylist()
[{'id': '1', 'x': None}, {'id': '2', 'x': None}, {'id': 'c', 'x': 1.5}]
>>> w.notes
["column 'id' mixes int64 and string values: written as strings"]
>>> w = SpooledParquet(io.BytesIO(), id_columns=("id", "duplicate_of"))
>>> for r in [{"id": 12, "duplicate_of": None}, {"id": "12", "duplicate_of": 12},
...           {"id": 12.0, "duplicate_of": 12}]:
...     w.write(r)
>>> w.finish(sink := io.BytesIO())
>>> pq.read_table(sink).to_pydict()
{'id': ['12', '12', '12.0'], 'duplicate_of': [None, '12', '12']}
>>> w.notes
["column 'id' mixes double, int64 and string values: written as strings (so is 'duplicate_of')"]
"""

from __future__ import annotations

import json
from typing import IO, Any

import pyarrow as pa
import pyarrow.parquet as pq

from neardup.io.csv_out import has_surrogate, replace_surrogates

Record = dict[str, Any]


# the kinds of value an id column can mix, by Python type, as Arrow names them
_KINDS = {int: "int64", float: "double", str: "string", bool: "bool", list: "list", dict: "struct"}


def _json_default(obj: Any) -> Any:
    return obj.item() if hasattr(obj, "item") else str(obj)


def _as_text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=_json_default, sort_keys=True)


def _clean(value: Any) -> Any:
    """Replace lone surrogates in strings (Parquet strings must be valid UTF-8)."""
    if isinstance(value, str):
        return replace_surrogates(value) if has_surrogate(value) else value
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def _writable(t: pa.DataType, nested: bool = False) -> bool:
    # a null type inside a list or struct ([null, null], [{"a": null}]) breaks pyarrow when
    # read back from the spool ("Length spanned by list offsets ... larger than values array",
    # "Struct child array #0 has length smaller than expected"): such columns are written as text
    if pa.types.is_null(t):
        return not nested
    if pa.types.is_struct(t):
        fields = range(t.num_fields)
        return t.num_fields > 0 and all(_writable(t.field(i).type, True) for i in fields)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _writable(t.value_type, True)
    return True


class SpooledParquet:
    """Collects rows (spooled to ``spool``) and writes one Parquet file at :meth:`finish`."""

    def __init__(
        self,
        spool: IO[bytes],
        *,
        type_hints: dict[str, Any] | None = None,
        batch_rows: int = 8192,
        id_columns: tuple[str, ...] = (),
    ) -> None:
        self.spool = spool
        self.type_hints = dict(type_hints or {})
        self.batch_rows = batch_rows
        # ids: int and float values (1, 1.0) are two ids, not one double column; the types
        # of value seen in each, for the note
        self._numbers: dict[str, set[type]] = {name: set() for name in id_columns}
        self.notes: list[str] = []
        self._why: dict[str, str] = {}  # columns written as strings: why (made notes at finish)
        self._also: dict[str, list[str]] = {}  # id columns written as strings with another
        self._rows: list[Record] = []
        self._schemas: list[pa.Schema] = []
        self._texts: set[str] = set()  # columns forced to strings
        self._replaced = 0

    def write(self, record: Record) -> None:
        self._rows.append(record)
        if len(self._rows) >= self.batch_rows:
            self._flush()

    def _table(self, rows: list[Record]) -> pa.Table:
        # every key of every row (from_pylist would take the first row's keys only)
        names = list(dict.fromkeys(k for r in rows for k in r))
        try:
            return pa.Table.from_pydict({n: [r.get(n) for r in rows] for n in names})
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError):
            pass
        except UnicodeEncodeError:
            self._replaced += 1
            return self._table([{k: _clean(v) for k, v in r.items()} for r in rows])
        # some column has no common type in this batch: find it and write it as text
        for name in names:
            try:
                pa.array([r.get(name) for r in rows])
            except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError):
                self._force_text(name, "values of several types")
            except UnicodeEncodeError:
                pass
        return self._table([{k: self._cell(k, v) for k, v in r.items()} for r in rows])

    def _cell(self, name: str, value: Any) -> Any:
        return _as_text(value) if name in self._texts else value

    def _force_text(self, name: str, why: str) -> None:
        if name not in self._texts:
            self._texts.add(name)
            self._why[name] = why

    def _ids_as_text(self, names: list[str]) -> None:
        """When one id column is written as strings, write the others present (``names``) so
        too: ids are compared across them (``duplicate_of`` names an ``id``)."""
        forced = [n for n in self._numbers if n in self._texts]
        others = [n for n in self._numbers if n in names and n not in self._texts]
        if forced and others:
            self._texts.update(others)
            self._also[forced[0]] = others

    def _column_notes(self) -> list[str]:
        """The notes of the columns written as strings; an id column's names every kind of
        value it held (``12``, ``"12"``, ``12.0``: double, int64 and string)."""
        notes = []
        for name, why in self._why.items():
            kinds = sorted({_KINDS.get(t, t.__name__) for t in self._numbers.get(name, ())})
            if len(kinds) > 1:
                why = f"{', '.join(kinds[:-1])} and {kinds[-1]} values"
            note = f"column {name!r} mixes {why}: written as strings"
            if also := self._also.get(name):
                verb = "is" if len(also) == 1 else "are"
                note += f" (so {verb} {', '.join(map(repr, also))})"
            notes.append(note)
        return notes

    def _flush(self) -> None:
        if not self._rows:
            return
        rows = self._rows
        for name, seen in self._numbers.items():
            seen.update(type(v) for r in rows if (v := r.get(name)) is not None)
            if int in seen and float in seen:
                self._force_text(name, "int64 and double values")
        if self._texts:
            rows = [{k: self._cell(k, v) for k, v in r.items()} for r in rows]
        table = self._table(rows)
        self._rows = []
        self._schemas.append(table.schema)
        with pa.ipc.new_stream(self.spool, table.schema) as w:
            w.write_table(table)

    def _unified(self) -> pa.Schema:
        while True:
            try:
                schema = pa.unify_schemas(self._schemas, promote_options="permissive")
                break
            except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
                name = self._conflict(str(exc))
                if name is None:  # cannot tell which column: make every clashing one text
                    raise
                types = sorted({str(s.field(name).type) for s in self._schemas if name in s.names})
                self._force_text(name, " and ".join(types) + " values")
                self._schemas = [self._retype(s) for s in self._schemas]
        for f in schema:
            if not _writable(f.type):  # e.g. {} ids: an empty struct has no Parquet form
                self._force_text(f.name, f"{f.type} values (no Parquet form)")
        self._ids_as_text(schema.names)
        fields = [
            pa.field(f.name, pa.string())
            if f.name in self._texts
            else pa.field(f.name, self.type_hints.get(f.name, pa.string()))
            if pa.types.is_null(f.type)
            else f
            for f in schema
        ]
        return pa.schema(fields)

    def _retype(self, schema: pa.Schema) -> pa.Schema:
        return pa.schema(
            [pa.field(f.name, pa.string()) if f.name in self._texts else f for f in schema]
        )

    def _conflict(self, message: str) -> str | None:
        for s in self._schemas:
            for name in s.names:
                if f"Field {name} has incompatible types" in message and name not in self._texts:
                    return str(name)
        return None

    def _cast(self, table: pa.Table, schema: pa.Schema) -> pa.Table:
        columns = []
        for f in schema:
            if f.name not in table.column_names:
                columns.append(pa.nulls(table.num_rows, f.type))
                continue
            col = table.column(f.name)
            if f.name in self._texts and not pa.types.is_string(col.type):
                col = pa.array([_as_text(v) for v in col.to_pylist()], pa.string())
            columns.append(col.cast(f.type))
        return pa.Table.from_arrays(columns, schema=schema)

    def finish(self, out: IO[bytes]) -> None:
        """Write every spooled row to ``out`` as one Parquet file with the unified schema."""
        self._flush()
        if not self._schemas:  # zero rows: still a valid, empty Parquet file
            pq.write_table(pa.table({}), out)
            self._add_notes()
            return
        schema = self._unified()
        self._add_notes()
        self.spool.flush()
        self.spool.seek(0)
        with pq.ParquetWriter(out, schema) as writer:
            for _ in self._schemas:
                table = pa.ipc.open_stream(self.spool).read_all()
                writer.write_table(self._cast(table, schema))

    def _add_notes(self) -> None:
        self.notes += self._column_notes()
        if self._replaced:
            self.notes.append("strings with lone surrogates (invalid Unicode) got U+FFFD")
