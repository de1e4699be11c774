"""The HTTP surface of a real ``neardup serve``: errors, auth, idempotency, delete, shutdown."""

from __future__ import annotations

import json
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from tests.server.server_helpers import Server

STORY = (
    "The central bank held interest rates at 4.25 percent on Monday, citing slowing inflation "
    "and a cooling labour market. The governor said further cuts would depend on wage data due "
    "next month and warned that energy prices remain the main risk for the outlook this winter."
)


def test_bad_bodies_get_json_errors_naming_the_item(server: Server) -> None:
    url = server.url + "/v1/documents"
    cases = [
        (b"{not json", 400, "malformed JSON"),
        (b"[1, 2]", 422, "JSON object"),
        (b'{"documents": {}}', 422, "must be a list"),
        (b'{"documents": [{"text": "x"}]}', 422, "documents[0].id is missing"),
        (b'{"documents": [{"id": "a", "text": "x"}, {"id": "b"}]}', 422, "documents[1].text"),
        (b'{"documents": [{"id": "a", "text": 5}]}', 422, "documents[0].text must be a string"),
        (b'{"documents": [{"id": 7, "text": "x"}]}', 422, "documents[0].id must be a string"),
        (
            b'{"documents": [{"id": "a", "text": "x", "timestamp": "soon"}]}',
            422,
            "documents[0].timestamp is invalid",
        ),
        (b'{"documents": [{"id": "a", "text": "x", "timestamp": true}]}', 422, "timestamp"),
        (b'{"documents": [{"id": "a", "text": "x"}, {"id": "a", "text": "y"}]}', 422, "repeats"),
        (b'{"documents": [], "dry_run": "yes"}', 422, "dry_run"),
        (b'{"documents": [], "extra": 1}', 422, "unknown field"),
        (b"\xff\xfe", 400, "malformed JSON"),
    ]
    for body, status, words in cases:
        r = httpx.post(url, content=body, headers={"content-type": "application/json"})
        assert r.status_code == status, (body, r.text)
        assert words in r.json()["error"], (body, r.text)
    assert httpx.get(server.url + "/v1/clusters/abc").status_code == 422
    assert httpx.get(server.url + "/v1/documents/nope").status_code == 404
    assert httpx.delete(server.url + "/v1/documents/nope").status_code == 404
    # nothing above was stored, and the service still answers
    assert server.decide([{"id": "a", "text": STORY}])[0]["status"] == "unique"


def test_body_and_batch_limits(tmp_path: Path) -> None:
    with Server(tmp_path / "d", "--no-verify", "--max-body", "2000", "--max-batch", "3") as s:
        big = s.post([{"id": "a", "text": "x" * 5000}])
        assert big.status_code == 413 and "limit" in big.json()["error"]
        many = s.post([{"id": str(i), "text": "t"} for i in range(4)])
        assert many.status_code == 413 and "split the batch" in many.json()["error"]
        assert s.post([{"id": str(i), "text": "t"} for i in range(3)]).status_code == 200


def test_token_required_on_v1(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("s3cret\n")
    with Server(tmp_path / "d", "--no-verify", "--token-file", str(token_file)) as s:
        docs = {"documents": [{"id": "a", "text": STORY}]}
        for headers in (
            {},
            {"Authorization": "Bearer wrong"},
            {"Authorization": "s3cret"},
            {"Authorization": "Basic s3cret"},
        ):
            r = httpx.post(s.url + "/v1/documents", json=docs, headers=headers)
            assert r.status_code == 401 and r.json()["error"], headers
            assert httpx.get(s.url + "/v1/documents/a", headers=headers).status_code == 401
        good = {"Authorization": "Bearer s3cret"}
        assert httpx.post(s.url + "/v1/documents", json=docs, headers=good).status_code == 200
        assert httpx.get(s.url + "/v1/documents/a", headers=good).json()["status"] == "unique"
        assert httpx.get(s.url + "/healthz").status_code == 200  # probes need no token


def test_idempotent_by_id_and_dry_run(server: Server) -> None:
    first = server.decide([{"id": "a", "text": STORY}, {"id": "b", "text": STORY}])
    assert [r["status"] for r in first] == ["unique", "exact_duplicate"]
    again = server.decide([{"id": "a", "text": STORY}, {"id": "b", "text": STORY}])
    assert again == first  # stored decisions, and "a" does not match itself
    dry = server.decide(
        [{"id": "c", "text": STORY}, {"id": "d", "text": "other words here"}], dry_run=True
    )
    assert [(r["status"], r["duplicate_of"]) for r in dry] == [
        ("exact_duplicate", "a"),
        ("unique", None),
    ]
    assert httpx.get(server.url + "/v1/documents/c").status_code == 404
    real = server.decide([{"id": "d", "text": "other words here"}])
    assert real[0] == {**dry[1], "cluster_id": real[0]["cluster_id"]}
    assert real[0]["cluster_id"] == dry[1]["cluster_id"]  # the dry run took no cluster number


def test_delete_forgets_a_kept_document_and_keeps_its_cluster(server: Server) -> None:
    edited = STORY.replace("slowing", "slower")
    server.decide([{"id": "a", "text": STORY}, {"id": "b", "text": edited}])
    cluster = httpx.get(server.url + "/v1/clusters/0").json()
    assert cluster["kept"] == "a" and [d["id"] for d in cluster["documents"]] == ["a", "b"]
    r = httpx.delete(server.url + "/v1/documents/a")
    assert r.status_code == 200 and r.json()["was"] == "unique"
    assert httpx.get(server.url + "/v1/documents/a").status_code == 404
    b = httpx.get(server.url + "/v1/documents/b").json()
    assert b["duplicate_of"] == "a" and b["cluster_id"] == 0  # history stays
    # neither an exact nor a near copy of the deleted document joins it any more
    later = server.decide([{"id": "c", "text": STORY}, {"id": "e", "text": STORY + " Today."}])
    assert later[0]["status"] == "unique" and later[0]["cluster_id"] == 1
    assert later[1]["duplicate_of"] == "c"
    # a deleted id can be posted again: it is a new document
    assert server.decide([{"id": "a", "text": "fresh text about rain"}])[0]["status"] == "unique"


def test_metrics_and_sigterm_exit_zero(tmp_path: Path) -> None:
    s = Server(tmp_path / "d", "--no-verify").start()
    s.decide([{"id": "a", "text": STORY}, {"id": "b", "text": STORY}])
    text = httpx.get(s.url + "/metrics").text
    for name in (
        'neardup_requests_total{method="POST",route="/v1/documents",status="200"} 1',
        'neardup_documents{status="exact_duplicate"} 1',
        "neardup_duplicates 1",
        "neardup_index_size 1",
        "neardup_commit_seconds_count 1",
        'neardup_commit_batches_bucket{le="1"} 1',
        'neardup_commit_documents_bucket{le="1"} 0',
        'neardup_commit_documents_bucket{le="2"} 1',
        'neardup_request_seconds_bucket{route="/v1/documents",le="+Inf"} 1',
    ):
        assert name in text, name
    assert s.stop() == 0
    db = sqlite3.connect(tmp_path / "d" / "neardup.db")
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert db.execute("SELECT count(*) FROM documents").fetchone() == (2,)


@pytest.mark.parametrize(
    ("before", "after"),
    [(["--no-verify"], ["--k", "5"]), (["--threshold", "0.5"], ["--threshold", "0.6001"])],
)
def test_refuses_a_data_directory_written_with_other_settings(
    tmp_path: Path, before: list[str], after: list[str]
) -> None:
    with Server(tmp_path / "d", *before) as s:
        s.decide([{"id": "a", "text": STORY}])
    import subprocess
    import sys

    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "neardup",
            "serve",
            "--data",
            str(tmp_path / "d"),
            *after,
            "--port",
            "0",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2 and "dedup config" in r.stderr and "--data" in r.stderr


def test_sigterm_finishes_the_request_in_flight_then_exits_zero(tmp_path: Path) -> None:
    """A request whose body is still arriving when SIGTERM comes is answered (and stored)."""
    s = Server(tmp_path / "d", "--no-verify").start()
    body = json.dumps({"documents": [{"id": "late", "text": STORY}]}).encode()
    head = (
        f"POST /v1/documents HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", s.port), timeout=60) as conn:
        conn.sendall(head + body[:10])
        time.sleep(0.5)  # the server has the headers: the request is in flight
        assert s.proc is not None
        s.proc.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        assert s.proc.poll() is None  # still draining
        conn.sendall(body[10:])
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
    assert json.loads(answer.split(b"\r\n\r\n", 1)[1])["results"][0]["status"] == "unique"
    assert s.proc.wait(60) == 0
    db = sqlite3.connect(tmp_path / "d" / "neardup.db")
    assert db.execute("SELECT id FROM documents").fetchall() == [("late",)]


def test_token_from_the_environment_and_the_option(tmp_path: Path) -> None:
    docs = {"documents": [{"id": "a", "text": STORY}]}
    env_server = Server(tmp_path / "e", "--no-verify", env={"NEARDUP_TOKEN": "from-env"})
    with env_server as s:
        url = s.url + "/v1/documents"
        assert httpx.post(url, json=docs).status_code == 401
        good = {"Authorization": "Bearer from-env"}
        assert httpx.post(url, json=docs, headers=good).status_code == 200
    with Server(tmp_path / "o", "--no-verify", "--token", "opt") as s:
        r = httpx.get(s.url + "/v1/clusters/0", headers={"Authorization": "bearer opt"})
        assert r.status_code == 404  # authorised (scheme case-insensitive), nothing stored
        assert httpx.get(s.url + "/v1/clusters/0").status_code == 401


def test_far_future_timestamp_refused_and_retention_keeps_the_rest(tmp_path: Path) -> None:
    now = time.time()
    texts = [f"story {i} about the harbour strike and the ferries that stopped at dawn" * 3
             for i in range(5)]  # fmt: skip
    with Server(tmp_path / "d", "--window", "1d", "--retention", "2d") as s:
        first = [{"id": f"a{i}", "text": t, "timestamp": now - 60 + i} for i, t in enumerate(texts)]
        assert s.post(first).status_code == 200
        typo = {"id": "typo", "text": "x y z w", "timestamp": "9999-12-31T00:00:00Z"}
        r = s.post([typo])
        assert r.status_code == 422 and "documents[0].timestamp" in r.json()["error"]
        assert "--max-future" in r.json()["error"]
        again = [{"id": f"b{i}", "text": t, "timestamp": now + i} for i, t in enumerate(texts)]
        got = s.decide(again)
        assert [g["duplicate_of"] for g in got] == [f"a{i}" for i in range(5)]
    with Server(tmp_path / "e", "--window", "1d", "--max-future", "none") as s:
        assert s.post([typo]).status_code == 200  # on request: no limit


def test_batched_delete_answers_like_single_deletes(tmp_path: Path) -> None:
    from tests.synthetic import synthetic_corpus

    rows = [r for r in synthetic_corpus(60, seed=31) if r["text"]][:30]
    docs = [{"id": r["id"], "text": r["text"]} for r in rows]
    ids = [d["id"] for d in docs]
    pick = [ids[0], "nope", ids[5], ids[0], ids[9]]
    answers = {}
    for name, batched in (("single", False), ("batch", True)):
        with Server(tmp_path / name, "--no-verify", "--max-batch", "5") as s:
            for k in range(0, len(docs), 5):
                s.decide(docs[k : k + 5])
            if batched:
                r = httpx.post(s.url + "/v1/documents/delete", json={"ids": pick})
                assert r.status_code == 200, r.text
                got = r.json()["results"]
                too_many = httpx.post(s.url + "/v1/documents/delete", json={"ids": ids[:6]})
                assert too_many.status_code == 413
                bad = httpx.post(s.url + "/v1/documents/delete", json={"ids": [3]})
                assert bad.status_code == 422 and "ids[0]" in bad.json()["error"]
            else:
                got = []
                for i in pick:
                    r = httpx.delete(s.url + f"/v1/documents/{i}")
                    got.append(r.json() if r.status_code == 200 else {"id": i, "deleted": False})
            after = [
                s.decide([{**d, "id": "again-" + d["id"]} for d in docs[k : k + 5]], dry_run=True)
                for k in range(0, len(docs), 5)
            ]
            answers[name] = (
                [{k: v for k, v in g.items() if k != "error"} for g in got],
                after,
                httpx.get(s.url + f"/v1/documents/{ids[5]}").status_code,
            )
    assert answers["batch"] == answers["single"]
    assert answers["batch"][0][0]["deleted"] and not answers["batch"][0][1]["deleted"]
    assert not answers["batch"][0][3]["deleted"]  # the repeat: already deleted
    assert answers["batch"][2] == 404


def _serve(*options: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "neardup", "serve", *options]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def test_bad_options_are_one_line_usage_errors(tmp_path: Path) -> None:
    data = str(tmp_path / "d")
    for options, words in [
        (("--k", "64"), "--k"),
        (("--log-level", "bogus"), "--log-level"),
        (("--window", "soon"), "bad window"),
        (("--retention", "1d"), "--retention"),
        (("--port", "70000"), "--port"),
    ]:
        r = _serve("--data", data, *options)
        assert r.returncode == 2, (options, r.stderr)
        assert "Traceback" not in r.stderr and words in r.stderr, (options, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1, (options, r.stderr)


def test_a_port_in_use_is_one_error_and_exit_1(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = str(busy.getsockname()[1])
        r = _serve("--data", str(tmp_path / "d"), "--no-verify", "--port", port)
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr and f"did not start on 127.0.0.1:{port}" in r.stderr


def test_ids_with_slashes_and_dots_can_be_read_and_deleted(server: Server) -> None:
    ids = ["a/b", "https://example.com/news/1?page=2#top", ".", "..", "../x", "%2F", "a b"]
    docs = [{"id": i, "text": f"{STORY} {n}" * (n + 1)} for n, i in enumerate(ids)]
    server.decide(docs)
    url = server.url + "/v1/documents"
    for i in ids:
        r = httpx.get(url, params={"id": i})
        assert r.status_code == 200 and r.json()["id"] == i, (i, r.text)
    for i in ["a/b", "https://example.com/news/1?page=2#top", "%2F", "a b"]:
        r = httpx.get(url + "/" + quote(i, safe=""))
        assert r.status_code == 200 and r.json()["id"] == i, (i, r.text)
    for i in ids:
        r = httpx.delete(url, params={"id": i})
        assert r.status_code == 200 and r.json()["id"] == i, (i, r.text)
        assert httpx.get(url, params={"id": i}).status_code == 404
    assert httpx.get(url, params={"id": ""}).status_code == 422
    assert httpx.get(url).status_code == 422
    server.decide([{"id": "c/d", "text": STORY + " again"}])
    r = httpx.delete(url + "/" + quote("c/d", safe=""))
    assert r.status_code == 200 and r.json() == {"id": "c/d", "deleted": True, "was": "unique"}
