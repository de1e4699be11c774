"""CSV output whose header covers every row, not just the first one.

Rows are spooled as JSON lines to a hidden file beside the output; at close the header is the
union of the rows' fields in order of first appearance (a field first seen at row 9,000 is a
column) and every row is written under it. Cells: strings as they are, numbers in their exact
text (an id 2**64 + 1 stays that integer), booleans ``true``/``false``, null as an empty cell,
lists and objects as JSON text. Lone surrogates (valid JSON escapes, invalid UTF-8) get U+FFFD
and the column is named in :attr:`SpooledCsv.notes` (the CLIs refuse ids holding one as bad
rows when they write CSV: ``record_to_document(utf8_ids=True)``).

>>> import io
>>> w = SpooledCsv(io.BytesIO())
>>> for r in [{"id": 1, "t": "a,b"}, {"id": 2**64 + 1, "x": [1, 2], "t": None}]:
...     w.write(r)
>>> sink = io.BytesIO()
>>> w.finish(sink)
>>> print(sink.getvalue().decode())
id,t,x
1,"a,b",
18446744073709551617,,"[1, 2]"
<BLANKLINE>
"""

from __future__ import annotations

import csv
import io
import json
import re
from typing import IO, Any

Record = dict[str, Any]
_SURROGATE = re.compile("[\ud800-\udfff]")


def _default(obj: Any) -> Any:
    return obj.item() if hasattr(obj, "item") else str(obj)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    return json.dumps(value, ensure_ascii=False, default=_default)


class SpooledCsv:
    """Collects rows (spooled to ``spool``) and writes one CSV file at :meth:`finish`."""

    def __init__(self, spool: IO[bytes]) -> None:
        self.spool = spool
        self.columns: dict[str, None] = {}  # insertion-ordered set
        self.notes: list[str] = []

    def write(self, record: Record) -> None:
        """Append one row."""
        for key in record:
            if key not in self.columns:
                self.columns[key] = None
        line = json.dumps(record, ensure_ascii=True, default=_default)
        self.spool.write(line.encode("ascii") + b"\n")

    def finish(self, raw: IO[bytes]) -> None:
        """Write the header and every spooled row to ``raw`` (UTF-8, ``\\n`` line ends)."""
        cols = list(self.columns)
        text = io.TextIOWrapper(raw, encoding="utf-8", newline="")  # surrogates replaced below
        out = csv.writer(text, lineterminator="\n")
        if cols:
            out.writerow([replace_surrogates(c) for c in cols])
        self.spool.seek(0)
        damaged: dict[str, None] = {}
        for line in self.spool:
            row = json.loads(line)
            cells = [_cell(row.get(c)) for c in cols]
            for k, (c, cell) in enumerate(zip(cols, cells, strict=True)):
                if not cell.isascii() and has_surrogate(cell):
                    damaged[c] = None
                    cells[k] = replace_surrogates(cell)
            out.writerow(cells)
        text.flush()
        text.detach()  # the caller closes ``raw``
        self.notes += [f"column {c!r} has lone surrogates: written as U+FFFD" for c in damaged]
        self.notes += [
            f"column name {c!r} has lone surrogates: written as U+FFFD"
            for c in cols
            if has_surrogate(c)
        ]


def replace_surrogates(s: str) -> str:
    """``s`` with each lone surrogate replaced by U+FFFD (what UTF-8 outputs can hold).

    >>> replace_surrogates("a\\ud800b\\udfff") == "a\\ufffdb\\ufffd"
    True
    """
    return _SURROGATE.sub("\ufffd", s)


def has_surrogate(s: str) -> bool:
    """True when ``s`` holds a lone surrogate (it cannot be written as UTF-8).

    >>> has_surrogate("caf\\u00e9"), has_surrogate("\\ud800")
    (False, True)
    """
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False
