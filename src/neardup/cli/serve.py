"""``neardup serve``: run the dedup service (needs ``pip install 'neardup[server]'``)."""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

import click

from neardup.cli._common import (
    build_fingerprinter,
    fingerprinter_options,
    usage_error,
)
from neardup.cli._decision import Decision, build_deduplicator, decision_options
from neardup.io import parse_window

EXAMPLES = """
\b
Examples:
  neardup serve --data ./dedup-data --window 7d
  NEARDUP_TOKEN=s3cret neardup serve --data ./dedup-data --port 8080
  curl -s localhost:8000/v1/documents -H 'content-type: application/json' \\
       -d '{"documents": [{"id": "a", "text": "storm hits the coast"}]}'
"""


@click.command("serve", epilog=EXAMPLES)
@click.option("--data", required=True, help="Data directory (created if missing): neardup.db.")
@click.option("--host", default="127.0.0.1", help="Address to bind.")
@click.option("--port", default=8000, type=click.IntRange(0, 65535))
@click.option("--window", default=None, help="Only documents this close in time match: 7d, 12h.")
@click.option(
    "--retention",
    default=None,
    help="Delete documents older than newest - RETENTION from disk (>= --window).",
)
@click.option(
    "--max-future",
    default="1d",
    help="With --window: refuse (422) timestamps later than this server's clock plus this; "
    "none: no limit (one typo'd year would then move the window and retention).",
)
@decision_options
@click.option(
    "--token",
    default=None,
    envvar="NEARDUP_TOKEN",
    help="Bearer token required on /v1 (also NEARDUP_TOKEN).",
)
@click.option(
    "--token-file",
    type=click.Path(dir_okay=False, exists=True),
    default=None,
    help="Read the bearer token from this file.",
)
@click.option("--store-text", is_flag=True, help="Also store the texts in the database.")
@click.option(
    "--sync",
    "synchronous",
    type=click.Choice(["full", "normal"]),
    default="full",
    help="SQLite synchronous: full survives power loss, normal only process crashes.",
)
@click.option("--max-batch", default=1000, type=click.IntRange(1))
@click.option(
    "--max-body",
    default=16 << 20,
    type=click.IntRange(1),
    help="Request body limit in bytes (413 above it).",
)
@click.option(
    "--snapshot-every",
    default=100_000,
    type=click.IntRange(0),
    help="Snapshot the in-memory state every N documents and at shutdown, so that a restart "
    "loads it instead of rebuilding from every row (0: never).",
)
@click.option(
    "--overlap",
    "overlap",
    multiple=True,
    metavar="KEY=VALUE",
    help="OverlapFinder parameter for POST /v1/overlaps (repeatable), e.g. min_length=12.",
)
@click.option(
    "--log-level",
    # uvicorn's names; an unknown one was a KeyError traceback from inside uvicorn
    type=click.Choice(["critical", "error", "warning", "info", "debug", "trace"], False),
    default="warning",
)
@fingerprinter_options
def serve_command(
    data: str,
    host: str,
    port: int,
    window: str | None,
    retention: str | None,
    max_future: str,
    decision: Decision,
    token: str | None,
    token_file: str | None,
    store_text: bool,
    synchronous: str,
    max_batch: int,
    max_body: int,
    snapshot_every: int,
    overlap: tuple[str, ...],
    log_level: str,
    config_path: str | None,
    idf_path: str | None,
) -> None:
    """Serve near-duplicate decisions over HTTP; SQLite in DATA is the source of truth.

    POST /v1/documents, GET/DELETE /v1/documents/{id} (or ?id=), GET /v1/clusters/{id}, /healthz,
    /metrics, OpenAPI docs at /docs. One worker owns the index and is the only writer.
    """
    try:
        from neardup.server import require_server_extra

        require_server_extra()
    except ImportError as exc:
        raise usage_error(str(exc)) from None
    seconds, keep, future = _window_and_retention(window, retention, max_future)
    token = _token(token, token_file)
    from neardup.server.service import Service, Settings
    from neardup.server.store import ConfigMismatch

    dd = build_deduplicator(build_fingerprinter(config_path, idf_path), decision, window=seconds)
    settings = Settings(
        os.path.abspath(data),
        synchronous.upper(),
        store_text,
        keep,
        max_batch,
        max_body,
        token,
        snapshot_every,
        future,
        _overlap_params(overlap),
    )
    try:  # a bad option combination is a usage error, like in `neardup dedup`
        service = Service(dd, settings)  # loads the state before the port opens
    except (ConfigMismatch, ValueError) as exc:
        raise usage_error(str(exc)) from None
    click.echo(_startup_block(service, host, port), err=True)
    _run(lambda: service, host, port, log_level)


def _startup_block(service: Any, host: str, port: int) -> str:
    """What a person starting the service needs to see at any log level (issue 38)."""
    where = f"[{host}]" if ":" in host else host
    stored = sum(service.counts().values())
    auth = "on (bearer token)" if service.settings.token else "off (no --token: local use only)"
    return "\n".join(
        [
            f"neardup serve: http://{where}:{port}  (API docs: /docs, health: /healthz)",
            f"  data:       {service.settings.data}",
            f"  config id:  {service.dd.config_id}",
            f"  auth:       {auth}",
            f"  documents:  {stored:,} loaded",
        ]
    )


def _token(token: str | None, token_file: str | None) -> str | None:
    """``--token`` or the contents of ``--token-file``; an empty token is a usage error."""
    if token_file is not None:
        with open(token_file, encoding="utf-8") as f:
            token = f.read().strip()
    if token is not None and not token:
        raise usage_error("the bearer token is empty")
    return token


def _overlap_params(items: tuple[str, ...]) -> tuple[tuple[str, Any], ...]:
    """``--overlap KEY=VALUE`` items as OverlapFinder parameters; bad ones: a usage error."""
    from neardup.overlap import OverlapFinder

    params: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        number = value.strip()
        try:
            params[key.strip()] = int(number) if number.lstrip("-").isdigit() else float(number)
        except ValueError:
            if number.isalpha():  # a word: templates=keep
                params[key.strip()] = number
            else:
                sep = ""
        if not sep:
            raise usage_error(
                f"--overlap {item!r}: expected KEY=VALUE, e.g. min_length=12 or templates=keep"
            )
    try:
        OverlapFinder(**params)
    except (TypeError, ValueError) as exc:
        raise usage_error(f"--overlap: {exc}") from None
    return tuple(params.items())


def _window_and_retention(
    window: str | None, retention: str | None, max_future: str
) -> tuple[float | None, float | None, float | None]:
    """``--window``, ``--retention`` and ``--max-future`` in seconds (None: not given)."""
    try:
        seconds = None if window is None else parse_window(window)
        keep = None if retention is None else parse_window(retention)
        future = None if max_future.lower() == "none" else parse_window(max_future)
    except ValueError as exc:
        raise usage_error(str(exc)) from None
    if keep is not None and (seconds is None or keep < seconds):
        raise usage_error("--retention needs a --window and must be at least as long")
    return seconds, keep, future


def _run(make: Any, host: str, port: int, log_level: str) -> None:
    import uvicorn

    from neardup.server.app import create_app

    # uvicorn finishes in-flight requests on SIGTERM, then re-raises the signal: exit 0 then.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    config = uvicorn.Config(
        create_app(make),
        host=host,
        port=port,
        workers=1,
        log_level=log_level,
        lifespan="on",
        timeout_graceful_shutdown=30,
    )
    server = uvicorn.Server(config)
    try:
        server.run()
    except SystemExit as exc:
        # uvicorn exits 3 when it cannot bind (its log says why): exit 1 with one line
        if server.started or exc.code in (0, None):
            raise
    if not server.started:
        raise click.ClickException(f"the service did not start on {host}:{port} (see above)")
