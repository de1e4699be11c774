"""``http(s)://`` inputs from a real HTTP server on loopback (with Range support, as object
stores and web servers have): the same documents as the local file, read as a stream."""

from __future__ import annotations

import gzip
import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from neardup.io import iter_documents, iter_records

pytest.importorskip("aiohttp")  # fsspec's http file system (neardup[http])

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "sample_news.jsonl"


class _Ranges(http.server.SimpleHTTPRequestHandler):
    """Static files with ``Range: bytes=a-b`` answered 206; counts the body bytes it sent."""

    sent: list[int]

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        path = Path(self.translate_path(self.path))
        data = path.read_bytes() if path.is_file() else None
        if data is None:
            self.send_error(404)
            return
        lo, hi = 0, len(data) - 1
        if (rng := self.headers.get("Range", "")).startswith("bytes="):
            a, _, b = rng[6:].partition("-")
            lo, hi = int(a or 0), min(int(b) if b else hi, hi)
        body = data[lo : hi + 1]
        self.send_response(206 if rng else 200)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Accept-Ranges", "bytes")
        if rng:
            self.send_header("Content-Range", f"bytes {lo}-{hi}/{len(data)}")
        self.end_headers()
        try:
            self.wfile.write(body)
        except ConnectionError:  # the reader closed early (a block it no longer needs)
            return
        self.sent.append(len(body))


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, list[int]]]:
    sent: list[int] = []
    handler = type("H", (_Ranges,), {"sent": sent})
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), lambda *a: handler(*a, directory=str(tmp_path))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", sent
    finally:
        server.shutdown()
        server.server_close()


def _texts(path: str) -> list[str]:
    return [d.text for d in iter_documents(iter_records(path), on_error="fail")]


def test_http_input_equals_local(served: tuple[str, list[int]], tmp_path: Path) -> None:
    url, _ = served
    (tmp_path / "news.jsonl.gz").write_bytes(gzip.compress(SAMPLE.read_bytes()))
    assert _texts(f"{url}/news.jsonl.gz") == _texts(str(SAMPLE))


def test_http_input_is_streamed(served: tuple[str, list[int]], tmp_path: Path) -> None:
    url, sent = served
    rows = [{"id": i, "text": f"document {i} " + "x" * 200} for i in range(120_000)]
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    (tmp_path / "big.jsonl").write_bytes(data)
    records = iter_records(f"{url}/big.jsonl")
    assert next(records)[1] == rows[0]
    assert 0 < sum(sent) < len(data) / 2  # the first row came before the file did
    assert sum(1 for _ in records) == len(rows) - 1
    assert sum(sent) >= len(data)
