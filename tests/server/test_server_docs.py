"""``/docs`` renders offline in a real headless browser; ``/openapi.json`` is complete."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import httpx
import pytest

from neardup.server.docs import PAGE

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
        "OverlapIn | OverlapsIn (application/json)",
        "OverlapAnswer (application/json)",
        "HTTPBearer",
    ):
        assert words in dom, (words, dom[-2000:])
    # every body is named ("DeletedMany (application/json)" is, a bare "any" is not)
    assert not re.search(r"(?<![A-Za-z])any(\[\])* \(application/json\)", dom), dom[-2000:]
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


NODE = shutil.which("node")
# the page's own functions, then every operation's request and response bodies as it names them
NAMES = """
const spec = JSON.parse(require("fs").readFileSync(0, "utf8"));
const out = [];
for (const [path, item] of Object.entries(spec.paths))
  for (const [method, op] of Object.entries(item)) {
    if (op.requestBody) out.push([method + " " + path, "request", bodies(op.requestBody.content)]);
    for (const [code, r] of Object.entries(op.responses || {}))
      out.push([method + " " + path, code, bodies(r.content)]);
  }
console.log(JSON.stringify(out));
"""


def test_the_page_names_every_request_and_response_body(server: Server) -> None:
    """The /docs page's schema namer (its own JavaScript, run by node) on the served
    /openapi.json: no body is ``any`` (the overlap body was a ``oneOf`` the namer did not
    know), and every error of a /v1 route is the ``Error`` the service answers."""
    if NODE is None:
        pytest.skip("node is not installed: the page's namer cannot run here")
    script = PAGE.split("<script>", 1)[1]
    assert 'fetch("openapi.json")' in script
    functions = script.split('fetch("openapi.json")', 1)[0]
    spec = httpx.get(server.url + "/openapi.json").text
    run = subprocess.run(
        [NODE, "-e", functions + NAMES], input=spec, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    rows = json.loads(run.stdout)
    named = {(op, what): names for op, what, names in rows}
    assert named["post /v1/overlaps", "request"] == ["OverlapIn | OverlapsIn (application/json)"]
    assert named["post /v1/overlaps", "200"] == ["OverlapAnswer (application/json)"]
    assert named["post /v1/documents", "request"] == ["DocumentsIn (application/json)"]
    for (op, what), names in named.items():
        for n in names:
            parts = n.split(" (")[0].split(" | ")
            assert not any(p.startswith("any") for p in parts), (op, what, n)
        if op.split(" ")[1].startswith("/v1") and what[0] in "45":
            assert names == ["Error (application/json)"], (op, what, names)
    components = json.loads(spec)["components"]["schemas"]
    for n in ("OverlapIn", "OverlapsIn", "OverlapDocumentIn"):
        assert n in components, n


def _refs(node: object) -> list[str]:
    if isinstance(node, dict):
        own = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return own + [r for v in node.values() for r in _refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []
