"""The HTTP surface (FastAPI): routes, bearer token, body limit, JSON errors, metrics.

Bodies are parsed by :mod:`neardup.server.validate` rather than by pydantic models so that every
client error is one JSON message naming the item (``documents[3].timestamp is invalid: ...``).
Blocking work never runs on the event loop: posts and deletes are queued with the service's
decider thread (:mod:`neardup.server.writer`), reads run in the thread pool.
"""

from __future__ import annotations

import hmac
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import orjson
from fastapi import APIRouter, FastAPI, Query, Request, Security
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse
from fastapi.security import HTTPBearer
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from neardup.server import schemas as sc
from neardup.server.docs import PAGE
from neardup.server.metrics import Counter, Histogram, gauge
from neardup.server.posting import as_json, fast_post, post, queued, read_body
from neardup.server.service import Service
from neardup.server.validate import BadRequest, parse_ids

POST_EXAMPLE = {
    "documents": [
        {"id": "wire-1", "text": "Storm hits the coast", "timestamp": "2024-05-01T10:00:00Z"}
    ],
    "dry_run": False,
}


# Declares the token in the OpenAPI document; Guard checks it (also on routes FastAPI lacks).
BEARER = HTTPBearer(
    auto_error=False,
    description="Required on /v1 when the service runs with --token or NEARDUP_TOKEN.",
)
AUTH = [Security(BEARER)]


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _deleted(doc_id: str, done: dict[str, Any] | None) -> dict[str, Any]:
    if done is not None:
        return done
    return {"id": doc_id, "deleted": False, "error": f"no document with id {doc_id!r}"}


def create_app(make_service: Callable[[], Service]) -> FastAPI:
    """The application; ``make_service`` runs at startup (the state is loaded before the
    server listens, so ``/healthz`` answers only when the service can decide)."""
    holder: dict[str, Service] = {}
    requests = Counter("neardup_requests_total", "HTTP requests by route, method and status.")
    latency = Histogram("neardup_request_seconds", "HTTP request latency by route.")

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        holder["s"] = await run_in_threadpool(make_service)
        yield
        await run_in_threadpool(holder["s"].close)

    app = FastAPI(
        title="neardup",
        summary="Near-duplicate decisions for a stream of documents",
        lifespan=lifespan,
        docs_url=None,  # Swagger UI loads from a CDN: blank offline; /docs below is inline
        redoc_url=None,
    )
    _add_docs(app)

    def service() -> Service:
        return holder["s"]

    app.add_middleware(Guard, service=service, requests=requests, latency=latency)
    _add_error_handlers(app)
    app.include_router(_document_routes(service))
    app.include_router(_id_routes(service))
    app.include_router(_cluster_routes(service))
    from neardup.server.overlap import overlap_routes  # here: app.py imports stay as they are

    app.include_router(overlap_routes(service), dependencies=AUTH)
    _add_ops_routes(app, service, requests, latency)
    return app


def _add_error_handlers(app: FastAPI) -> None:
    """Every error is one JSON ``{"error": ...}``; a bug is a logged 500 without a traceback."""

    @app.exception_handler(BadRequest)
    async def bad_request(request: Request, exc: BadRequest) -> JSONResponse:
        return _error(exc.status, exc.message)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return _error(exc.status_code, str(exc.detail))

    @app.exception_handler(Exception)
    async def internal_error(request: Request, exc: Exception) -> JSONResponse:
        # a bug, not the client's: logged with its traceback, answered without one
        logging.getLogger("neardup.server").error("request failed", exc_info=exc)
        return _error(500, f"internal error ({type(exc).__name__}); see the server log")

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()))
        return _error(422, f"{where}: {first.get('msg', 'invalid request')}")


POST_BODY = {
    "content": {
        "application/json": {
            "schema": {"$ref": "#/components/schemas/DocumentsIn"},
            "example": POST_EXAMPLE,
        }
    },
    "required": True,
}


IDS_BODY = {
    "content": {
        "application/json": {
            "schema": {"$ref": "#/components/schemas/IdsIn"},
            "example": {"ids": ["wire-1", "https://example.com/a/1"]},
        }
    },
    "required": True,
}


def _document_routes(service: Callable[[], Service]) -> APIRouter:
    """``POST /v1/documents``."""
    router = APIRouter(dependencies=AUTH)

    @router.post(
        "/v1/documents",
        responses=sc.responses(sc.DocumentsOut, 400, 401, 409, 413, 422),
        openapi_extra={"requestBody": POST_BODY},
    )
    async def post_documents(request: Request) -> Any:
        """Decide a batch in input order; durable (committed) before the answer is sent.

        Known ids return their stored decision; ``dry_run`` decides without storing."""
        s = service()
        body = await read_body(request, s.settings.max_body)
        return as_json(await post(s, body))

    return router


_ID_QUERY = Query(alias="id", min_length=1, description="The document id, URL-encoded.")


_Handler = Callable[..., Any]


def _by_id(
    route: Callable[..., Callable[[_Handler], _Handler]],
    act: Callable[[str], Awaitable[Any]],
    model: Any,
    name: str,
    about: str,
    about_query: str,
) -> None:
    """Routes ``name_by_query`` (``/v1/documents?id=``, described by ``about_query``) and
    ``name`` (``/v1/documents/{doc_id}``, ``about``): ``act`` on one document."""

    @route(
        "/v1/documents",
        name=f"{name}_by_query",
        description=about_query,
        responses=sc.responses(model, 401, 404, 422),
    )
    async def by_query(doc_id: str = _ID_QUERY) -> Any:
        return await act(doc_id)

    @route(
        "/v1/documents/{doc_id:path}",
        name=name,
        description=about,
        responses=sc.responses(model, 401, 404, 422),  # else FastAPI's shape, not ours
    )
    async def by_path(doc_id: str) -> Any:
        return await act(doc_id)


def _id_routes(service: Callable[[], Service]) -> APIRouter:
    """``GET``/``DELETE`` of one document, by path or by ``?id=`` (any id: ``a/b``, ``..``, a
    URL; a path segment cannot carry ``.`` or ``..``, clients resolve them away), and the
    batched ``POST /v1/documents/delete``."""
    router = APIRouter(dependencies=AUTH)

    async def get(doc_id: str) -> Any:
        found = await run_in_threadpool(service().get, doc_id)
        return found if found is not None else _error(404, f"no document with id {doc_id!r}")

    async def delete(doc_id: str) -> Any:
        done = (await queued(lambda answer: service().submit_delete([doc_id], answer)))[0]
        return done if done is not None else _error(404, f"no document with id {doc_id!r}")

    _by_id(
        router.get,
        get,
        sc.StoredDocument,
        "get_document",
        about="The stored decision of one document (404 if unknown or deleted).",
        about_query="The stored decision of the document ``?id=`` (404 if unknown or deleted).",
    )
    _by_id(
        router.delete,
        delete,
        sc.Deleted,
        "delete_document",
        about="Forget a document: it no longer attracts duplicates; its cluster keeps its members.",
        about_query="Forget the document ``?id=`` (as ``DELETE /v1/documents/{doc_id}``).",
    )

    @router.post(
        "/v1/documents/delete",
        responses=sc.responses(sc.DeletedMany, 400, 401, 413, 422),
        openapi_extra={"requestBody": IDS_BODY},
    )
    async def delete_documents(request: Request) -> Any:
        """Forget up to the batch limit of documents in one transaction: per id the answer of
        ``DELETE /v1/documents/{id}`` (``deleted: false`` with an ``error`` for an unknown id)."""
        s = service()
        ids = parse_ids(await read_body(request, s.settings.max_body), s.settings.max_batch)
        done = await queued(lambda answer: s.submit_delete(ids, answer))
        return as_json({"results": [_deleted(i, d) for i, d in zip(ids, done, strict=True)]})

    return router


def _cluster_routes(service: Callable[[], Service]) -> APIRouter:
    """``GET /v1/clusters/{cluster_id}``."""
    router = APIRouter(dependencies=AUTH)

    @router.get("/v1/clusters/{cluster_id}", responses=sc.responses(sc.Cluster, 401, 404, 422))
    async def get_cluster(cluster_id: int) -> Any:
        """The stored members of a cluster, in arrival order (deleted ones left out)."""
        found = await run_in_threadpool(service().cluster, cluster_id)
        return found if found is not None else _error(404, f"no cluster {cluster_id}")

    return router


def _add_ops_routes(
    app: FastAPI, service: Callable[[], Service], requests: Counter, latency: Histogram
) -> None:
    """``/healthz`` and ``/metrics`` (no token: probes and scrapers)."""

    @app.get("/healthz", responses=sc.responses(sc.Health))
    async def healthz() -> Any:
        """Ready: the state is loaded and the store answers."""
        s = service()
        return {
            "status": "ok",
            "documents": sum(s.counts().values()),
            "config_id": s.config_id,
        }

    @app.get("/metrics", response_class=PlainTextResponse)
    async def metrics() -> Any:
        """Prometheus text format: requests, latency, commits, snapshots, documents, memory."""
        return PlainTextResponse(
            _metrics_text(service(), requests, latency),
            media_type="text/plain; version=0.0.4; charset=utf-8",
        )


def _metrics_text(s: Service, requests: Counter, latency: Histogram) -> str:
    counts = s.counts()
    lines = requests.lines() + latency.lines() + s.commit_seconds.lines()
    lines += s.snapshot_seconds.lines() + s.commit_batches.lines() + s.commit_documents.lines()
    lines += gauge("neardup_documents", "Stored documents by status.", counts, "status")
    lines += gauge(
        "neardup_duplicates",
        "Stored duplicates (near and exact).",
        counts["duplicate"] + counts["exact_duplicate"],
    )
    lines += gauge("neardup_index_size", "Kept documents in the in-memory index.", s.index_size())
    lines += gauge("neardup_memory_bytes", "Bytes of the in-memory dedup state.", s.memory_bytes())
    return "\n".join(lines) + "\n"


def _add_docs(app: FastAPI) -> None:
    """``/docs`` (a self-contained page) and an ``/openapi.json`` that names the request body."""
    base = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            sc.add_request_schema(base())  # base() caches the dict it returns
        return app.openapi_schema or {}

    app.openapi = openapi  # type: ignore[method-assign]

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        return HTMLResponse(PAGE)


def _route(path: str) -> str:
    if path == "/v1/documents/delete":
        return path
    for prefix in ("/v1/documents/", "/v1/clusters/"):
        if path.startswith(prefix):
            return prefix + "{id}"
    known = ("/v1/documents", "/v1/overlaps", "/healthz", "/metrics", "/docs")
    return path if path in known else "other"


class Guard:
    """Pure ASGI middleware (no per-request task or stream copies, unlike ``@app.middleware``):
    the bearer token on ``/v1`` (constant-time compare), request counts and latency."""

    def __init__(
        self,
        app: ASGIApp,
        service: Callable[[], Service],
        requests: Counter,
        latency: Histogram,
    ) -> None:
        self.app, self.service = app, service
        self.requests, self.latency = requests, latency

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        route = _route(scope["path"])
        status = [500]

        async def send_status(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = int(message["status"])
            await send(message)

        try:
            if not _authorised(scope, self.service().settings.token):
                await _unauthorised(send_status)
            elif route == "/v1/documents" and scope["method"] == "POST":
                await fast_post(self.service(), scope, receive, send_status)
            else:
                await self.app(scope, receive, send_status)
        finally:
            self.requests.inc(route=route, method=scope["method"], status=str(status[0]))
            self.latency.observe(time.perf_counter() - start, route=route)


def _authorised(scope: Scope, token: str | None) -> bool:
    if token is None or not scope["path"].startswith("/v1"):
        return True
    given = b""
    for name, value in scope["headers"]:
        if name == b"authorization":
            given = value
    scheme, _, value = given.partition(b" ")
    return scheme.lower() == b"bearer" and hmac.compare_digest(value.strip(), token.encode())


async def _unauthorised(send: Send) -> None:
    body = orjson.dumps({"error": "missing or wrong bearer token"})
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"www-authenticate", b"Bearer"),
    ]
    await send({"type": "http.response.start", "status": 401, "headers": headers})
    await send({"type": "http.response.body", "body": body})
