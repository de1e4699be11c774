"""The HTTP surface (FastAPI): routes, bearer token, body limit, JSON errors, metrics.

Bodies are parsed by :mod:`neardup.server.validate` rather than by pydantic models so that every
client error is one JSON message naming the item (``documents[3].timestamp is invalid: ...``).
Blocking work (fingerprinting, SQLite) runs in the thread pool, never on the event loop.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import orjson
from fastapi import APIRouter, FastAPI, Query, Request, Security
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from fastapi.security import HTTPBearer
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from neardup.server import schemas as sc
from neardup.server.docs import PAGE
from neardup.server.metrics import Counter, Histogram, gauge
from neardup.server.service import Answer, Service
from neardup.server.validate import BadRequest, parse_documents, parse_ids

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
        responses=sc.responses(sc.DocumentsOut, 400, 401, 413, 422),
        openapi_extra={"requestBody": POST_BODY},
    )
    async def post_documents(request: Request) -> Any:
        """Decide a batch in input order; durable (committed) before the answer is sent.

        Known ids return their stored decision; ``dry_run`` decides without storing."""
        s = service()
        body = await _read_body(request, s.settings.max_body)
        return _json(await _post(s, body))

    return router


def _id_routes(service: Callable[[], Service]) -> APIRouter:
    """``GET``/``DELETE`` of one document, by path or by ``?id=`` (any id: ``a/b``, ``..``, a
    URL; a path segment cannot carry ``.`` or ``..``, clients resolve them away), and the
    batched ``POST /v1/documents/delete``."""
    router = APIRouter(dependencies=AUTH)
    by_query = Query(alias="id", min_length=1, description="The document id, URL-encoded.")

    async def get(doc_id: str) -> Any:
        found = await run_in_threadpool(service().get, doc_id)
        return found if found is not None else _error(404, f"no document with id {doc_id!r}")

    async def delete(doc_id: str) -> Any:
        done = (await _queued(lambda answer: service().submit_delete([doc_id], answer)))[0]
        return done if done is not None else _error(404, f"no document with id {doc_id!r}")

    @router.get("/v1/documents", responses=sc.responses(sc.StoredDocument, 401, 404, 422))
    async def get_document_by_query(doc_id: str = by_query) -> Any:
        """The stored decision of the document ``?id=`` (404 if unknown or deleted)."""
        return await get(doc_id)

    @router.get("/v1/documents/{doc_id:path}", responses=sc.responses(sc.StoredDocument, 401, 404))
    async def get_document(doc_id: str) -> Any:
        """The stored decision of one document (404 if unknown or deleted)."""
        return await get(doc_id)

    @router.delete("/v1/documents", responses=sc.responses(sc.Deleted, 401, 404, 422))
    async def delete_document_by_query(doc_id: str = by_query) -> Any:
        """Forget the document ``?id=`` (as ``DELETE /v1/documents/{doc_id}``)."""
        return await delete(doc_id)

    @router.delete("/v1/documents/{doc_id:path}", responses=sc.responses(sc.Deleted, 401, 404))
    async def delete_document(doc_id: str) -> Any:
        """Forget a document: it no longer attracts duplicates; its cluster keeps its members."""
        return await delete(doc_id)

    @router.post(
        "/v1/documents/delete",
        responses=sc.responses(sc.DeletedMany, 400, 401, 413, 422),
        openapi_extra={"requestBody": IDS_BODY},
    )
    async def delete_documents(request: Request) -> Any:
        """Forget up to the batch limit of documents in one transaction: per id the answer of
        ``DELETE /v1/documents/{id}`` (``deleted: false`` with an ``error`` for an unknown id)."""
        s = service()
        ids = parse_ids(await _read_body(request, s.settings.max_body), s.settings.max_batch)
        done = await _queued(lambda answer: s.submit_delete(ids, answer))
        return _json({"results": [_deleted(i, d) for i, d in zip(ids, done, strict=True)]})

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
    return path if path in ("/v1/documents", "/healthz", "/metrics", "/docs") else "other"


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
                await _fast_post(self.service(), scope, receive, send_status)
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


async def _fast_post(s: Service, scope: Scope, receive: Receive, send: Send) -> None:
    """``POST /v1/documents`` without FastAPI's routing and dependency layers (the route
    above documents it; this is the same handler): for single-document feeds the framework
    cost more server CPU per request than deciding the document."""
    status, content = 200, b""
    try:
        body, size = [], 0
        limit = s.settings.max_body
        for name, value in scope["headers"]:
            if name == b"content-length" and value.isdigit() and int(value) > limit:
                too_big = f"request body of {value.decode()} bytes, the limit is {limit}"
                raise BadRequest(413, too_big)
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise BadRequest(413, f"request body over the limit of {limit} bytes")
            body.append(chunk)
            if not message.get("more_body", False):
                break
        content = orjson.dumps(await _post(s, b"".join(body)))
    except BadRequest as exc:
        status, content = exc.status, orjson.dumps({"error": exc.message})
    except Exception as exc:  # a bug, not the client's: logged, answered without traceback
        logging.getLogger("neardup.server").error("request failed", exc_info=exc)
        status = 500
        content = orjson.dumps(
            {"error": f"internal error ({type(exc).__name__}); see the server log"}
        )
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(content)).encode()),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": content})


async def _unauthorised(send: Send) -> None:
    body = orjson.dumps({"error": "missing or wrong bearer token"})
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"www-authenticate", b"Bearer"),
    ]
    await send({"type": "http.response.start", "status": 401, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _post(s: Service, body: bytes) -> dict[str, Any]:
    """The answer to a ``POST /v1/documents`` body (``BadRequest`` for a client error)."""
    items, dry_run = parse_documents(
        body, s.settings.max_batch, s.dd.window is not None, s.latest_time()
    )
    results = await _queued(lambda answer: s.submit(items, dry_run, answer))
    return {"results": results, "dry_run": dry_run}


async def _queued(submit: Callable[[Answer], None]) -> Any:
    """Queue a request with the service's decider (no thread-pool hop: it answers from its
    own threads) and wait for its answer."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(value: Any, error: BaseException | None) -> None:
        if future.done():  # the client went away
            return
        future.set_exception(error) if error is not None else future.set_result(value)

    def answer(value: Any, error: BaseException | None) -> None:
        loop.call_soon_threadsafe(settle, value, error)

    submit(answer)
    return await future


def _json(content: Any) -> Response:
    """A JSON response encoded by orjson in one call (FastAPI's default path walks the result
    through ``jsonable_encoder`` first: several ms for a batch of 100 results)."""
    return Response(orjson.dumps(content), media_type="application/json")


async def _read_body(request: Request, limit: int) -> bytes:
    """The request body, refused with 413 as soon as it passes ``limit`` bytes."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BadRequest(413, f"request body of {declared} bytes, the limit is {limit}")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BadRequest(413, f"request body over the limit of {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)
