"""Pydantic models of the HTTP bodies, for the OpenAPI document only.

The routes parse bodies with :mod:`neardup.server.validate` and encode answers with orjson, so
these models never touch a request: they name the shapes in ``/openapi.json`` and ``/docs``.

>>> sorted(Result.model_fields)
['cluster_id', 'distance', 'duplicate_of', 'id', 'similarity', 'status', 'threshold']
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

Status = Literal["unique", "duplicate", "exact_duplicate", "empty"]


class DocumentIn(BaseModel):
    """One document to decide; ``timestamp`` (ISO 8601 or epoch seconds) is required with
    ``--window``."""

    id: str
    text: str
    timestamp: str | float | None = None


class DocumentsIn(BaseModel):
    """A batch, decided in input order; ``dry_run`` decides without storing."""

    documents: list[DocumentIn]
    dry_run: bool = False


class OverlapIn(BaseModel):
    """One text for ``POST /v1/overlaps``; ``store: true`` adds it (``id`` required) so later
    requests find it."""

    text: str
    id: str | None = None
    store: bool = False


class OverlapDocumentIn(BaseModel):
    id: str | None = None
    text: str


class OverlapsIn(BaseModel):
    """A batch for ``POST /v1/overlaps`` (at most ``--max-batch``), in input order."""

    documents: list[OverlapDocumentIn]
    store: bool = False


class Result(BaseModel):
    """The decision of one document: ``similarity`` the estimated Jaccard that decided,
    ``threshold`` the one that applied (the short-text threshold for a text under
    ``short_length`` characters; null for kept documents, exact copies, and rows stored before
    the field)."""

    id: str
    status: Status
    duplicate_of: str | None
    distance: int | None
    similarity: float | None
    threshold: float | None
    cluster_id: int


class DocumentsOut(BaseModel):
    results: list[Result]
    dry_run: bool


class StoredDocument(Result):
    """A stored decision; ``text`` only with ``--store-text``."""

    timestamp: float | None
    text: str | None = None


class Deleted(BaseModel):
    id: str
    deleted: bool
    was: Status


class IdsIn(BaseModel):
    """Ids to delete in one transaction (at most ``--max-batch``)."""

    ids: list[str]


class DeleteResult(BaseModel):
    """A single delete's answer; ``deleted: false`` with ``error`` for an unknown id."""

    id: str
    deleted: bool
    was: Status | None = None
    error: str | None = None


class DeletedMany(BaseModel):
    results: list[DeleteResult]


class Cluster(BaseModel):
    cluster_id: int
    kept: str | None
    documents: list[Result]


class Health(BaseModel):
    status: str
    documents: int
    config_id: str


class Error(BaseModel):
    error: str


def add_request_schema(spec: dict[str, Any]) -> None:
    """Put the request bodies (and the models they nest) into ``components.schemas`` of
    ``spec``, where the routes' ``$ref`` point; FastAPI does not, since no route declares them
    as a parameter (bodies are parsed by hand)."""
    schemas = spec.setdefault("components", {}).setdefault("schemas", {})
    for model in (DocumentsIn, IdsIn, OverlapIn, OverlapsIn):
        schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
        schemas.update(schema.pop("$defs", {}))
        schemas[model.__name__] = schema


def responses(model: type[BaseModel], *errors: int) -> dict[int | str, dict[str, Any]]:
    """The ``responses=`` of a route: ``model`` for 200 and :class:`Error` for ``errors``."""
    out: dict[int | str, dict[str, Any]] = {200: {"model": model}}
    out.update({code: {"model": Error} for code in errors})
    return out
