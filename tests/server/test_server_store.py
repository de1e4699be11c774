"""The store's rows are read and written by column name (issue 37): one row shape per use,
named after the table's columns, whatever order an upgraded table has them in."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from neardup.server.store import NewRow, Store, StoredRow


def _row(position: int, doc_id: str, duplicate_of: int | None) -> NewRow:
    return NewRow(
        position=position,
        id=doc_id,
        timestamp=1.5 * position,
        fingerprint=-(position + 1),  # stored signed
        sketch=None,
        exact_key_hi=position,
        exact_key_lo=-position,
        status=0 if duplicate_of is None else 1,
        duplicate_of=duplicate_of,
        distance=-1 if duplicate_of is None else 3,
        cluster_id=position if duplicate_of is None else duplicate_of,
        searched=1,
        text=None,
        similarity=None if duplicate_of is None else 0.8125,
        threshold=None if duplicate_of is None else 0.5,
    )


def _columns(db: sqlite3.Connection) -> list[str]:
    return [name for (name,) in db.execute("SELECT name FROM pragma_table_info('documents')")]


def test_row_shapes_are_the_table_columns(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "neardup.db"))
    columns = _columns(store.db)
    assert set(NewRow._fields) == set(columns) - {"forgotten"}  # its default: 0
    assert set(StoredRow._fields) <= set(columns)


def test_rows_read_back_by_name_from_an_upgraded_table(tmp_path: Path) -> None:
    """A table of before ``similarity`` and ``threshold`` gets them appended (ALTER TABLE):
    their place in the table differs from a new one's, and every read still names them."""
    path = str(tmp_path / "neardup.db")
    Store(path).db.close()
    db = sqlite3.connect(path)
    db.execute("ALTER TABLE documents DROP COLUMN similarity")
    db.execute("ALTER TABLE documents DROP COLUMN threshold")
    db.close()
    store = Store(path)
    assert _columns(store.db)[-2:] == ["similarity", "threshold"]
    rows = [_row(0, "a", None), _row(1, "b", 0), _row(2, "c", None)]
    with store.transaction():
        store.insert_rows(rows)
    got = store.lookup_ids(["b", "c", "missing"])
    assert got == {"b": rows[1].stored(), "c": rows[2].stored()}
    assert got["b"].duplicate_of == 0 and got["b"].similarity == 0.8125
    assert store.cluster(0) == [rows[0].stored(), rows[1].stored()]
    assert store.exact_keys([1]) == {1: (1 << 64) | ((-1) & ((1 << 64) - 1))}
