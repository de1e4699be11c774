"""``/docs`` renders offline in a real headless browser; ``/openapi.json`` is complete."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.server.server_helpers import Server

CHROMIUM = next(
    (p for p in ("/usr/bin/chromium", shutil.which("chromium")) if p and os.access(p, os.X_OK)),
    None,
)


def test_docs_page_renders_every_operation_without_external_assets(
    server: Server, tmp_path: Path
) -> None:
    page = httpx.get(server.url + "/docs")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    # no CDN: nothing the page loads lives on another host
    assert "cdn." not in page.text and "src=" not in page.text and "href=" not in page.text
    if CHROMIUM is None:
        pytest.skip("chromium is not installed: the page was checked without rendering")
    run = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--virtual-time-budget=5000",
            "--dump-dom",
            server.url + "/docs",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    dom = run.stdout
    if "<body" not in dom:  # a browser that cannot start here says nothing about the page
        pytest.skip(f"chromium did not render (exit {run.returncode}): {run.stderr[-300:]}")
    # rendered by the inline script from /openapi.json, not present in the static page
    for words in (
        "/v1/documents/{doc_id}",
        "/v1/clusters/{cluster_id}",
        "DocumentsIn (application/json)",
        "DocumentsOut (application/json)",
        "HTTPBearer",
    ):
        assert words in dom, (words, dom[-2000:])
    assert "delete" in dom and "Loading /openapi.json" not in dom


def test_openapi_names_every_response_and_the_bearer_token(server: Server) -> None:
    spec = httpx.get(server.url + "/openapi.json").json()
    schemes = spec["components"]["securitySchemes"]
    assert (schemes["HTTPBearer"]["type"], schemes["HTTPBearer"]["scheme"]) == ("http", "bearer")
    operations = [(p, m, op) for p, item in spec["paths"].items() for m, op in item.items()]
    assert len(operations) >= 6
    for path, method, op in operations:
        ok = op["responses"]["200"]["content"]
        schema = next(iter(ok.values()))["schema"]
        assert schema.get("$ref") or schema.get("type") == "string", (path, method, schema)
        if path.startswith("/v1"):
            assert op["security"] == [{"HTTPBearer": []}], (path, method)
        else:
            assert "security" not in op, (path, method)
    for ref in _refs(spec["paths"]):
        assert ref.split("/")[-1] in spec["components"]["schemas"], ref
    body = spec["paths"]["/v1/documents"]["post"]["requestBody"]["content"]["application/json"]
    assert body["schema"] == {"$ref": "#/components/schemas/DocumentsIn"}


def _refs(node: object) -> list[str]:
    if isinstance(node, dict):
        own = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return own + [r for v in node.values() for r in _refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []
