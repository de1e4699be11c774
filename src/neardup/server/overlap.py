"""``POST /v1/overlaps``: the passages a text shares with the stored overlap documents.

A body is one text ``{"text": ..., "id": ..., "store": false}`` (answered with one result) or a
batch ``{"documents": [{"id": ..., "text": ...}, ...], "store": false}`` (answered with
``{"results": [...]}`` in input order). Each result lists the passages of the text found in the
documents stored before it (:meth:`OverlapFinder.query`; with ``store: true``
:meth:`OverlapFinder.add`, so a later document of the same batch finds an earlier one), with
the fields of :meth:`Passage.to_dict`. ``store: true`` needs an ``id`` per text and answers once
the texts are committed (:mod:`neardup.server.overlap_store`). A known id is not stored again:
its stored answer comes back with ``known: true``.

>>> items, store, single = parse_overlaps(b'{"text": "a b c", "id": "x", "store": true}', 10)
>>> items, store, single
([('x', 'a b c')], True, True)
>>> try:
...     parse_overlaps(b'{"text": "a b c", "store": true}', 10)
... except BadRequest as e:
...     print(e.status, e.message)
422 id is missing: store=true needs an id per text (the source_id later passages name)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
from fastapi import APIRouter, Request
from pydantic import BaseModel, RootModel
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from neardup.overlap import OverlapFinder, SeedBudgetError
from neardup.overlap.finder import SEED_FLOOR
from neardup.server import schemas as sc
from neardup.server.posting import read_body
from neardup.server.service import Service
from neardup.server.validate import MAX_ID_LENGTH, BadRequest, document_list

__all__ = ["MAX_TEXT", "overlap_routes", "parse_overlaps"]

MAX_TEXT = 1 << 20  # code points per text: the aligner's time grows with the text


class PassageOut(BaseModel):
    """A passage ``span`` of the text (code points, ``[start, end)``) also found at
    ``source_span`` of the stored document ``source_id``; ``score``: share of its word grams
    found in the source passage; ``position``/``source_position``: places in the finder;
    ``template``: a template of the store (only reported with ``--overlap templates=keep``);
    ``closest_*``: the closest stored source, when ``source_id`` (the earliest) is another."""

    id: str | None
    span: list[int]
    source_id: str
    source_span: list[int]
    score: float
    position: int
    source_position: int
    template: bool = False
    closest_id: str | None = None
    closest_span: list[int] | None = None
    closest_score: float | None = None
    closest_position: int | None = None


class OverlapOut(BaseModel):
    """The passages of one text; ``stored``: it is stored (now, or before when ``known``)."""

    id: str | None
    stored: bool
    known: bool
    passages: list[PassageOut]


class OverlapsOut(BaseModel):
    results: list[OverlapOut]


class OverlapAnswer(RootModel[OverlapOut | OverlapsOut]):
    """One text's result, or ``{"results": [...]}`` for a batch body."""


BODY = {
    "content": {
        "application/json": {
            "schema": {
                "oneOf": [
                    {"$ref": "#/components/schemas/OverlapIn"},
                    {"$ref": "#/components/schemas/OverlapsIn"},
                ]
            },
            "example": {"text": "The committee approved ...", "id": "a-1", "store": True},
        }
    },
    "required": True,
}


def parse_overlaps(
    body: bytes, max_batch: int, max_text: int = MAX_TEXT
) -> tuple[list[tuple[str | None, str]], bool, bool]:
    """``(items, store, single)`` of a ``POST /v1/overlaps`` body; ``items`` are ``(id, text)``."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise BadRequest(400, f"malformed JSON: {exc}") from None
    if not isinstance(data, dict) or ("text" in data) == ("documents" in data):
        raise BadRequest(
            422, 'the body must be {"text": ..., "id": ..., "store": ...} or {"documents": [...]}'
        )
    store = data.get("store", False)
    if not isinstance(store, bool):
        raise BadRequest(422, f"store must be true or false, got {store!r}")
    single = "text" in data
    allowed = {"text", "id", "store"} if single else {"documents", "store"}
    unknown = set(data) - allowed
    if unknown:
        raise BadRequest(422, f"unknown field(s) {sorted(unknown)}: expected {sorted(allowed)}")
    if single:
        return [_item("", data, store, max_text)], store, True
    docs = document_list(data, max_batch)
    items = []
    seen: dict[str, int] = {}
    for i, d in enumerate(docs):
        where = f"documents[{i}]"
        if not isinstance(d, dict):
            raise BadRequest(422, f"{where} must be an object with id and text")
        extra = set(d) - {"id", "text"}
        if extra:
            raise BadRequest(422, f"{where} has unknown field(s) {sorted(extra)}")
        item = _item(where + ".", d, store, max_text)
        if item[0] is not None and item[0] in seen:
            raise BadRequest(
                422, f"{where}.id {item[0]!r} repeats documents[{seen[item[0]]}].id: "
                "ids must be unique within a batch"
            )  # fmt: skip
        if item[0] is not None:
            seen[item[0]] = i
        items.append(item)
    return items, store, False


def too_much_work(exc: SeedBudgetError, finder: OverlapFinder, single: bool) -> str:
    """The answer to a text over its seed budget: the numbers, the limit and how to raise it.

    >>> e = SeedBudgetError(2_000_000, 1_048_576)
    >>> e.item = 1
    >>> print(too_much_work(e, OverlapFinder(), single=False))  # doctest: +NORMALIZE_WHITESPACE
    documents[1].text finds 2,000,000 seeds in the stored documents, more than its limit of
    1,048,576 (max_seeds_per_gram=16 per gram of the text, for 65,536 grams at least; a text
    of a few words repeated finds a number that grows with the square of its length):
    shorten it, or start the server with --overlap max_seeds_per_gram=N
    """
    where = "" if single else f"documents[{exc.item}]."
    return (
        f"{where}text finds {exc.seeds:,} seeds in the stored documents, more than its limit "
        f"of {exc.limit:,} (max_seeds_per_gram={finder.max_seeds_per_gram} per gram of the "
        f"text, for {SEED_FLOOR:,} grams at least; a text of a few words repeated finds a "
        "number that grows with the square of its length): shorten it, or start the server "
        "with --overlap max_seeds_per_gram=N"
    )


def _item(where: str, d: dict[str, Any], store: bool, max_text: int) -> tuple[str | None, str]:
    text, doc_id = d.get("text"), d.get("id")
    if "text" not in d:
        raise BadRequest(422, f'{where}text is missing: every document needs a string "text"')
    if not isinstance(text, str):
        raise BadRequest(422, f"{where}text must be a string, got {type(text).__name__}")
    if len(text) > max_text:
        raise BadRequest(
            413, f"{where}text has {len(text):,} characters, the limit is {max_text:,}: split it"
        )
    if doc_id is None:
        if store:
            raise BadRequest(
                422,
                f"{where}id is missing: store=true needs an id per text (the source_id later "
                "passages name)",
            )
        return None, text
    if not isinstance(doc_id, str) or not doc_id or len(doc_id) > MAX_ID_LENGTH:
        raise BadRequest(422, f"{where}id must be a string of 1 to {MAX_ID_LENGTH} characters")
    return doc_id, text


def overlap_routes(service: Callable[[], Service]) -> APIRouter:
    """``POST /v1/overlaps`` (the app adds the bearer token with ``include_router``)."""
    router = APIRouter()

    @router.post(
        "/v1/overlaps",
        responses=sc.responses(OverlapAnswer, 400, 401, 413, 422),
        openapi_extra={"requestBody": BODY},
    )
    async def post_overlaps(request: Request) -> Any:
        """Passages of a text (or a batch) found in the stored overlap documents; with
        ``store: true`` the texts are stored too, durable (committed) before the answer."""
        s = service()
        body = await read_body(request, s.settings.max_body)
        items, store, single = parse_overlaps(body, s.settings.max_batch)
        try:
            results = await run_in_threadpool(s.overlap.run, items, store)
        except SeedBudgetError as exc:
            raise BadRequest(413, too_much_work(exc, s.overlap.finder, single)) from None
        content = results[0] if single else {"results": results}
        return Response(orjson.dumps(content), media_type="application/json")

    return router
