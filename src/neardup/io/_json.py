"""Fast JSON parsing for the JSONL paths: orjson, with Python's ``json`` as the rule book.

orjson parses a line several times faster than the stdlib. Where the two disagree, the stdlib
decides: orjson rejects some inputs that ``json.loads`` accepts (lone surrogate escapes,
``NaN``/``Infinity``, ``1e400``), so any line orjson refuses is parsed again by the stdlib;
and orjson reads integers beyond 64 bits as *floats* (an id 18446744073709551617 would come
back as 1.8446744073709552e+19), so a line with a run of 19 or more digits goes to the stdlib
directly. The stdlib either accepts the line or raises the usual
``json.JSONDecodeError`` / ``UnicodeDecodeError`` that callers already report. Results are
therefore exactly ``json.loads(line.decode("utf-8"))``. Without orjson installed, the stdlib
does everything.

>>> loads(b'{"id": 1, "text": "caf\\\\u00e9"}')
{'id': 1, 'text': 'café'}
>>> loads(b'{"big": 123456789012345678901234567890, "s": "\\\\ud800"}')["big"]
123456789012345678901234567890
>>> loads(b'{"id": 18446744073709551617}')["id"]
18446744073709551617
>>> loads(b'{"a": [-9223372036854775809], "b": {"c": 1.5}}')
{'a': [-9223372036854775809], 'b': {'c': 1.5}}
"""

from __future__ import annotations

import json
import re
from typing import Any

try:
    import orjson

    _fast: Any = orjson.loads
    _FastError: type[Exception] = orjson.JSONDecodeError
except ImportError:  # pragma: no cover - orjson is a core dependency
    _fast = None
    _FastError = ValueError

__all__ = ["loads"]

# 19+ digits in a row: an integer orjson may read as a float (beyond 64 bits); a long fraction
# or a digit run inside a string also matches, which only costs the stdlib's speed
_LONG_DIGITS = re.compile(rb"\d{19}")
# values orjson reads exactly as the stdlib does: an integer beyond 64 bits comes back as a
# float, so a record without floats needs no digit scan (the regex costs ~6x orjson)
_EXACT = frozenset((str, int, bool, type(None)))


def _exact(value: Any) -> bool:
    """Whether ``value`` holds no float (strings, ints, bools, nulls in lists and dicts)."""
    stack = [x for x in value.values() if type(x) not in _EXACT] if type(value) is dict else [value]
    while stack:
        v = stack.pop()
        t = type(v)
        if t is dict:
            stack += [x for x in v.values() if type(x) not in _EXACT]
        elif t is list:
            stack += [x for x in v if type(x) not in _EXACT]
        elif t not in _EXACT:
            return False
    return True


def loads(line: bytes) -> Any:
    """``json.loads(line.decode("utf-8"))``, through orjson when it agrees.

    Raises ``json.JSONDecodeError`` for malformed JSON and ``UnicodeDecodeError`` for bytes
    that are not UTF-8, exactly as the stdlib does.
    """
    if _fast is not None:
        try:
            rec = _fast(line)
        except _FastError:
            rec = _FastError  # the stdlib decides: it accepts more, and its errors are ours
        if rec is not _FastError and (_exact(rec) or _LONG_DIGITS.search(line) is None):
            return rec
    return json.loads(line.decode("utf-8"))
