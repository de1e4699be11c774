"""``POST /v1/documents`` itself: the body read with its limit, parsed, queued with the
service's decider, answered with orjson. The FastAPI route (which documents it in OpenAPI)
and the ASGI guard's fast path (:func:`fast_post`, which skips FastAPI's routing and
dependency layers: for single-document feeds they cost more server CPU per request than
deciding the document) both call :func:`post`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import orjson
from fastapi import Request
from fastapi.responses import Response
from starlette.types import Receive, Scope, Send

from neardup.server.service import Service
from neardup.server.validate import BadRequest, parse_documents
from neardup.server.writer import Answer


async def post(s: Service, body: bytes) -> dict[str, Any]:
    """The answer to a ``POST /v1/documents`` body (``BadRequest`` for a client error): one
    document object is answered with its result alone, as ``/v1/overlaps`` answers one."""
    items, dry_run, single = parse_documents(
        body, s.settings.max_batch, s.dd.window is not None, s.latest_time()
    )
    results = await queued(lambda answer: s.submit(items, dry_run, answer))
    if single:
        return {**results[0], "dry_run": dry_run}
    return {"results": results, "dry_run": dry_run}


async def queued(submit: Callable[[Answer], None]) -> Any:
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


async def fast_post(s: Service, scope: Scope, receive: Receive, send: Send) -> None:
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
        content = orjson.dumps(await post(s, b"".join(body)))
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


def as_json(content: Any) -> Response:
    """A JSON response encoded by orjson in one call (FastAPI's default path walks the result
    through ``jsonable_encoder`` first: several ms for a batch of 100 results)."""
    return Response(orjson.dumps(content), media_type="application/json")


async def read_body(request: Request, limit: int) -> bytes:
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
