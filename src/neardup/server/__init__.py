"""``neardup serve``: the online dedup service (FastAPI + uvicorn, SQLite as the source of truth).

Needs the ``server`` extra (``pip install 'neardup[server]'``); the core library never imports
this package. :mod:`~neardup.server.store` is the SQLite store (the library's state columns),
:mod:`~neardup.server.service` keeps it in step with the library's Deduplicator (every decision
comes from ``Deduplicator.feed``), :mod:`~neardup.server.app` is the HTTP surface.
"""

from __future__ import annotations


def require_server_extra() -> None:
    """Fail with the install command when FastAPI or uvicorn is missing."""
    try:
        import fastapi  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            f"neardup serve needs the server extra ({exc.name} is missing): "
            "pip install 'neardup[server]'"
        ) from None
