"""A real ``neardup serve`` in a subprocess on a free 127.0.0.1 port, with real SQLite files."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """Start, stop (SIGTERM), kill (-9) and restart one service over one data directory."""

    def __init__(self, data: Path, *options: str, env: dict[str, str] | None = None) -> None:
        self.data, self.options, self.env = data, list(options), env or {}
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0
        self.log = data.parent / f"{data.name}.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 120.0) -> Server:
        self.port = self.port or free_port()  # a restart keeps the address
        cmd = [
            sys.executable,
            "-m",
            "neardup",
            "serve",
            "--data",
            str(self.data),
            "--port",
            str(self.port),
            *self.options,
        ]
        env = {**os.environ, **self.env}
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited {self.proc.returncode}: {self.log.read_text()}")
            try:
                if httpx.get(self.url + "/healthz", timeout=1.0).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"server not healthy in {timeout} s: {self.log.read_text()}")

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)

    def stop(self) -> int:
        """SIGTERM; returns the exit status."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(60)

    def post(self, docs: list[dict[str, Any]], dry_run: bool = False, **kw: Any) -> httpx.Response:
        return httpx.post(
            self.url + "/v1/documents",
            json={"documents": docs, "dry_run": dry_run},
            timeout=120.0,
            **kw,
        )

    def decide(self, docs: list[dict[str, Any]], dry_run: bool = False) -> list[dict[str, Any]]:
        r = self.post(docs, dry_run)
        assert r.status_code == 200, r.text
        return list(r.json()["results"])

    def __enter__(self) -> Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.kill()
