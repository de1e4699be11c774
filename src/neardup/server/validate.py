"""Request bodies: parse and check them, naming the item and the field that is wrong.

>>> parse_documents(b'{"documents": [{"id": "a", "text": "x", "timestamp": 5}]}', 10, False)
([Item(id='a', text='x', timestamp=5.0)], False, False)
>>> try:
...     parse_documents(b'{"documents": [{"id": "a"}]}', 10, False)
... except BadRequest as e:
...     print(e.status, e.message)
422 documents[0].text is missing: every document needs a string "text"
"""

from __future__ import annotations

from typing import Any, NamedTuple

import orjson

from neardup.errors import NeardupError
from neardup.io import parse_timestamp


class BadRequest(NeardupError):
    """A client error: HTTP ``status`` and a one-line ``message``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class Item(NamedTuple):
    id: str
    text: str
    timestamp: float | None


MAX_ID_LENGTH = 512


def document_list(data: dict[str, Any], max_batch: int) -> list[Any]:
    """``data["documents"]``, checked: a list of at most ``max_batch`` items (422 / 413)."""
    docs = data["documents"]
    if not isinstance(docs, list):
        raise BadRequest(422, f"documents must be a list, got {type(docs).__name__}")
    if len(docs) > max_batch:
        raise BadRequest(
            413, f"{len(docs)} documents in one batch, the limit is {max_batch}: split the batch"
        )
    return docs


def parse_documents(
    body: bytes, max_batch: int, need_time: bool, max_time: float | None = None
) -> tuple[list[Item], bool, bool]:
    """The documents of a ``POST /v1/documents`` body, its ``dry_run`` flag and whether it was
    one document object (``{"id", "text", "timestamp", "dry_run"}``, as ``/v1/overlaps`` takes
    one; answered with its result alone); timestamps after ``max_time`` are refused (422).

    >>> parse_documents(b'{"id": "a", "text": "x", "dry_run": true}', 10, False)
    ([Item(id='a', text='x', timestamp=None)], True, True)
    """
    try:  # strict RFC 8259: no NaN, no lone surrogates, no nesting deeper than 1024
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise BadRequest(400, f"malformed JSON: {exc}") from None
    if not isinstance(data, dict) or ("documents" in data) == ("text" in data):
        raise BadRequest(
            422,
            'the body must be a JSON object {"documents": [...]} or one document '
            '{"id": ..., "text": ...}',
        )
    single = "text" in data
    dry_run = data.pop("dry_run", False)
    if not isinstance(dry_run, bool):
        raise BadRequest(422, f"dry_run must be true or false, got {dry_run!r}")
    if single:
        return [_item("document", data, need_time, max_time)], dry_run, True
    docs = document_list(data, max_batch)
    unknown = set(data) - {"documents"}
    if unknown:
        raise BadRequest(422, f"unknown field(s) {sorted(unknown)}: expected documents, dry_run")
    items = [_item(f"documents[{i}]", d, need_time, max_time) for i, d in enumerate(docs)]
    seen: dict[str, int] = {}
    for i, it in enumerate(items):
        if it.id in seen:
            raise BadRequest(
                422,
                f"documents[{i}].id {it.id!r} repeats documents[{seen[it.id]}].id: "
                "ids must be unique within a batch",
            )
        seen[it.id] = i
    return items, dry_run, False


def parse_ids(body: bytes, max_batch: int) -> list[str]:
    """The ids of a ``POST /v1/documents/delete`` body ``{"ids": [...]}``."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise BadRequest(400, f"malformed JSON: {exc}") from None
    if not isinstance(data, dict) or set(data) != {"ids"} or not isinstance(data["ids"], list):
        raise BadRequest(422, 'the body must be a JSON object {"ids": ["id", ...]}')
    ids = data["ids"]
    if len(ids) > max_batch:
        raise BadRequest(413, f"{len(ids)} ids in one request, the limit is {max_batch}: split it")
    for i, x in enumerate(ids):
        if not isinstance(x, str) or not x or len(x) > MAX_ID_LENGTH:
            raise BadRequest(422, f"ids[{i}] must be a string of 1 to {MAX_ID_LENGTH} characters")
    return ids


def _item(where: str, d: Any, need_time: bool, max_time: float | None = None) -> Item:
    if not isinstance(d, dict):
        raise BadRequest(422, f"{where} must be an object with id and text")
    for name in ("id", "text"):
        if name not in d:
            raise BadRequest(
                422, f'{where}.{name} is missing: every document needs a string "{name}"'
            )
        if not isinstance(d[name], str):
            raise BadRequest(422, f"{where}.{name} must be a string, got {type(d[name]).__name__}")
    if not d["id"] or len(d["id"]) > MAX_ID_LENGTH:
        raise BadRequest(422, f"{where}.id must have 1 to {MAX_ID_LENGTH} characters")
    extra = set(d) - {"id", "text", "timestamp"}
    if extra:
        raise BadRequest(422, f"{where} has unknown field(s) {sorted(extra)}")
    ts = d.get("timestamp")
    if ts is None:
        if need_time:
            raise BadRequest(
                422,
                f"{where}.timestamp is missing: the service runs with a --window, "
                "give ISO 8601 or epoch seconds",
            )
        return Item(d["id"], d["text"], None)
    try:
        when = parse_timestamp(ts)
    except (ValueError, OverflowError) as exc:
        raise BadRequest(422, f"{where}.timestamp is invalid: {exc}") from None
    if max_time is not None and when > max_time:
        raise BadRequest(
            422,
            f"{where}.timestamp {ts!r} is more than --max-future after this server's clock: "
            "a typo in the year? fix it (or start the server with a larger --max-future)",
        )
    return Item(d["id"], d["text"], when)
