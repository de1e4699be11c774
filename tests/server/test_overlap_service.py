"""``POST /v1/overlaps`` on a real server (127.0.0.1, real SQLite files, kill -9): the passages
are the library's, stored documents survive restarts and crashes, bad input is a 4xx."""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from neardup.overlap import OverlapFinder, SeedBudgetError

from tests.overlap_texts import synthetic
from tests.server.server_helpers import Server

TOKEN = "s3cret"
AUTH = {"authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data = tmp_path_factory.mktemp("ov") / "data"
    with Server(data, "--no-verify", "--max-batch", "5", "--token", TOKEN) as s:
        yield s


def post(server: Server, body: Any, **kw: Any) -> httpx.Response:
    return httpx.post(server.url + "/v1/overlaps", json=body, headers=AUTH, timeout=60, **kw)


def answer(server: Server, body: Any) -> Any:
    r = post(server, body)
    assert r.status_code == 200, r.text
    return r.json()


def library(docs: list[tuple[str, str]], **params: Any) -> list[list[dict[str, Any]]]:
    f = OverlapFinder(**params)
    return [[p.to_dict() for p in f.add(text, i)] for i, text in docs]


def test_passages_equal_the_library_in_order(server: Server) -> None:
    docs = synthetic()
    want = library(docs)
    got = [answer(server, {"text": docs[0][1], "id": docs[0][0], "store": True})]
    got += answer(server, {"documents": [{"id": i, "text": t} for i, t in docs[1:5]],
                           "store": True})["results"]  # fmt: skip
    got += [answer(server, {"text": t, "id": i, "store": True}) for i, t in docs[5:]]
    assert [g["passages"] for g in got] == want
    assert all(g["stored"] and not g["known"] for g in got)
    assert sum(bool(w) for w in want) >= 5  # copies were found, across both scripts
    assert any(p["score"] < 1.0 for w in want for p in w)
    # a query (not stored) is OverlapFinder.query; without an id, passages carry id null
    f = OverlapFinder()
    for i, t in docs:
        f.add(t, i)
    probe = "intro words here " + docs[4][1][10:400] + " and " + docs[3][1][:90]
    expect = [p.to_dict() for p in f.query(probe, "q")]
    assert expect and answer(server, {"text": probe, "id": "q"})["passages"] == expect
    anon = answer(server, {"documents": [{"text": probe}]})["results"][0]
    assert anon["passages"] == [{**p, "id": None} for p in expect]
    assert anon["stored"] is False and len(f) == len(docs)  # the query stored nothing
    assert answer(server, {"text": probe, "id": "q2"})["passages"] == [
        {**p, "id": "q2"} for p in expect
    ]


def test_a_known_id_gets_its_stored_answer_and_is_not_stored_twice(server: Server) -> None:
    text = synthetic(seed=11, n=1)[0][1]
    first = answer(server, {"text": text, "id": "k-1", "store": True})
    again = answer(server, {"text": "something else entirely", "id": "k-1", "store": True})
    assert again == {**first, "known": True}
    copy = answer(server, {"text": "so: " + text, "id": "k-2"})
    assert [p["source_id"] for p in copy["passages"]].count("k-1") == 1  # one k-1, not two


def test_bad_input_is_a_4xx_json_error(server: Server) -> None:
    url = server.url + "/v1/overlaps"
    cases: list[tuple[Any, int, str]] = [
        ({"text": "a", "documents": []}, 422, "the body must be"),
        ({}, 422, "the body must be"),
        ([1, 2], 422, "the body must be"),
        ({"text": 5}, 422, "text must be a string"),
        ({"text": "a", "store": "yes"}, 422, "store must be true or false"),
        ({"text": "a", "store": True}, 422, "id is missing"),
        ({"text": "a", "id": ""}, 422, "id must be a string"),
        ({"text": "a", "id": "x" * 600}, 422, "id must be a string"),
        ({"text": "a", "lang": "en"}, 422, "unknown field"),
        ({"documents": "a"}, 422, "documents must be a list"),
        ({"documents": [{"id": "a"}]}, 422, "documents[0].text is missing"),
        ({"documents": [1]}, 422, "documents[0] must be an object"),
        ({"documents": [{"text": "a", "x": 1}]}, 422, "unknown field"),
        ({"documents": [{"id": "a", "text": "b"}] * 2}, 422, "repeats documents[0].id"),
        ({"documents": [{"text": "a"}], "store": True}, 422, "documents[0].id is missing"),
        ({"documents": [{"text": "a"}] * 6}, 413, "the limit is 5"),
        ({"text": "a" * ((1 << 20) + 1)}, 413, "characters, the limit is"),
    ]
    for body, status, message in cases:
        r = httpx.post(url, json=body, headers=AUTH, timeout=60)
        assert r.status_code == status, (body if len(str(body)) < 200 else "big", r.text)
        assert message in r.json()["error"], r.json()
    r = httpx.post(url, content=b"{nope", headers=AUTH, timeout=60)
    assert r.status_code == 400 and "malformed JSON" in r.json()["error"]
    r = httpx.post(url, json={"text": "a"}, timeout=60)
    assert r.status_code == 401
    big = httpx.post(url, content=b" " * (17 << 20), headers=AUTH, timeout=60)
    assert big.status_code == 413
    spec = httpx.get(server.url + "/openapi.json").json()["paths"]["/v1/overlaps"]["post"]
    assert {"200", "400", "401", "413", "422"} <= set(spec["responses"])


def test_restart_and_kill9_keep_acknowledged_documents(tmp_path: Path) -> None:
    docs = synthetic(seed=3, n=8)
    probe = "new words " + docs[2][1][:200] + " then " + docs[7][1][50:250]
    f = OverlapFinder()
    for i, t in docs:
        f.add(t, i)
    want = [p.to_dict() for p in f.query(probe, "p")]
    assert {p["source_id"] for p in want} >= {"doc-7"}
    with Server(tmp_path / "data", "--no-verify") as s:
        for i, t in docs[:5]:
            answer(s, {"text": t, "id": i, "store": True})
        assert s.stop() == 0  # a clean stop saves the reference
        assert (tmp_path / "data" / "overlap-reference").is_dir()
        s.start()
        answer(s, {"documents": [{"id": i, "text": t} for i, t in docs[5:]], "store": True})
        s.kill()  # acknowledged = committed: the rows are in overlap.sqlite
        s.start()
        assert answer(s, {"text": probe, "id": "p"})["passages"] == want
        again = answer(s, {"text": docs[6][1], "id": "doc-6", "store": True})
        assert again["known"] is True


def _serve(data: Path, *options: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "neardup", "serve", "--data", str(data), "--port", "0"]
    return subprocess.run(
        [*cmd, "--no-verify", *options], capture_output=True, text=True, timeout=120,
        env=os.environ.copy(),
    )  # fmt: skip


def test_other_overlap_parameters_are_refused_naming_both_ids(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with Server(data, "--no-verify") as s:
        answer(s, {"text": synthetic(n=1)[0][1], "id": "a", "store": True})
    done = _serve(data, "--overlap", "min_length=12")
    assert done.returncode == 2, done.stderr
    old, new = OverlapFinder().config_id, OverlapFinder(min_length=12).config_id
    assert old in done.stderr and new in done.stderr
    assert "Traceback" not in done.stderr
    assert "start with the same --overlap options" in done.stderr
    # a store of an earlier neardup (same options, another aligner): said so, not "options"
    db = sqlite3.connect(data / "overlap.sqlite")
    params = json.loads(db.execute("SELECT value FROM meta WHERE key='params'").fetchone()[0])
    del params["query_window"]  # aligner 4 had no such parameter
    with db:
        db.execute("UPDATE meta SET value='ov1-0123456789abcdef' WHERE key='config_id'")
        db.execute("UPDATE meta SET value=? WHERE key='params'", (json.dumps(params),))
    db.close()
    done = _serve(data)
    assert done.returncode == 2 and "ov1-0123456789abcdef" in done.stderr, done.stderr
    assert "in an earlier neardup" in done.stderr and "Traceback" not in done.stderr
    for bad in ("min_length", "min_length=x", "colour=3", "ngram=0"):
        done = _serve(tmp_path / "other", "--overlap", bad)
        assert done.returncode == 2 and "--overlap" in done.stderr, (bad, done.stderr)


def test_concurrent_stores_equal_the_library_in_commit_order(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    docs = synthetic(seed=21, n=18)
    batches = [docs[k : k + 3] for k in range(0, len(docs), 3)]
    with Server(tmp_path / "data", "--no-verify") as s:

        def store(batch: list[tuple[str, str]]) -> list[dict[str, Any]]:
            body = {"documents": [{"id": i, "text": t} for i, t in batch], "store": True}
            return list(answer(s, body)["results"])

        with ThreadPoolExecutor(6) as pool:
            got = {r["id"]: r["passages"] for rs in pool.map(store, batches) for r in rs}
        assert s.stop() == 0
    db = sqlite3.connect(tmp_path / "data" / "overlap.sqlite")
    rows = db.execute("SELECT id, text FROM documents ORDER BY position").fetchall()
    db.close()
    assert sorted(i for i, _ in rows) == sorted(i for i, _ in docs)
    want = dict(zip([i for i, _ in rows], library(rows), strict=True))
    assert got == want
    assert sum(bool(w) for w in want.values()) >= 5


def test_hostile_bodies_are_4xx(server: Server) -> None:
    url = server.url + "/v1/overlaps"
    for raw in (b'{"text": "\\ud800"}', b'{"text": NaN}', b"[" * 5000, b"", b"\xff\xfe"):
        r = httpx.post(url, content=raw, headers={**AUTH, "content-type": "application/json"})
        assert 400 <= r.status_code < 500 and "error" in r.json(), (raw[:20], r.text)


def _stored_then_stopped(data: Path) -> None:
    """Texts in both stores, then a clean stop (snapshot and overlap reference written)."""
    docs = synthetic(seed=5, n=6)
    with Server(data, "--no-verify") as s:
        for i, t in docs:
            answer(s, {"text": t, "id": i, "store": True})
        s.decide([{"id": i, "text": t} for i, t in docs])
        assert s.stop() == 0
    assert (data / "overlap-reference" / "CURRENT").is_file()


def _one_line_exit_2(done: subprocess.CompletedProcess[str], *words: str) -> str:
    """The refusal of a start: exit 2, one line (no traceback) holding ``words``."""
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])
    return lines[0]


def test_overlap_store_without_its_database_is_refused_and_its_reference_kept(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    _stored_then_stopped(data)
    ref = data / "overlap-reference"
    before = {p.relative_to(ref): p.read_bytes() for p in ref.rglob("*") if p.is_file()}
    for p in data.glob("overlap.sqlite*"):
        p.unlink()
    done = _serve(data)
    _one_line_exit_2(done, str(data / "overlap.sqlite"), "deleted or replaced", str(ref), "away")
    # the last copy of the texts is untouched (a start that served would overwrite it)
    after = {p.relative_to(ref): p.read_bytes() for p in ref.rglob("*") if p.is_file()}
    assert after == before
    # the dedup side refuses the same situation with the same rule and words
    for p in data.glob("overlap*"):
        shutil.rmtree(p) if p.is_dir() else p.unlink()
    for p in data.glob("neardup.db*"):
        p.unlink()
    done = _serve(data)
    _one_line_exit_2(done, str(data / "neardup.db"), "deleted or replaced", "snapshot")


@pytest.mark.parametrize("name", ["overlap.sqlite", "neardup.db"])
@pytest.mark.parametrize("damage", ["truncated", "overwritten"])
def test_a_damaged_database_is_one_line_naming_the_file_and_the_fix(
    tmp_path: Path, name: str, damage: str
) -> None:
    data = tmp_path / "data"
    _stored_then_stopped(data)
    path = data / name
    if damage == "truncated":
        with open(path, "r+b") as f:
            f.truncate(path.stat().st_size * 2 // 3)
    else:  # another file's bytes where the database was
        path.write_bytes(b"this is not an SQLite file\n" * 1000)
    done = _serve(data)
    _one_line_exit_2(done, str(path), "is damaged", "restore it from a backup", "--data")


@pytest.mark.parametrize("current", ["v-9\n", None])
def test_a_broken_reference_is_replayed_and_a_clean_stop_still_closes(
    tmp_path: Path, current: str | None
) -> None:
    """``overlap-reference/CURRENT`` naming a gone version (or missing): the store starts from
    its rows, as the dedup side does with such a snapshot, and a clean stop logs one line and
    closes (it was a traceback, "Application shutdown failed", the database left unclosed),
    leaving the reference as it was; restarts keep every stored text."""
    data = tmp_path / "data"
    _stored_then_stopped(data)
    ref = data / "overlap-reference"
    if current is None:
        (ref / "CURRENT").unlink()
    else:
        (ref / "CURRENT").write_text(current)
    before = {p.relative_to(ref): p.read_bytes() for p in ref.rglob("*") if p.is_file()}
    docs = synthetic(seed=5, n=6)  # what _stored_then_stopped stored
    f = OverlapFinder()
    for i, t in docs:
        f.add(t, i)
    probe = "An opening of other words. " + docs[2][1]
    text = "one more stored text, of words of its own"
    more = {"text": text, "id": "more", "store": True}
    for _ in range(2):  # a restart after the logged failure starts from the rows again
        want = [p.to_dict() for p in f.query(probe, "q")]
        with Server(data, "--no-verify") as s:
            assert want and answer(s, {"text": probe, "id": "q"})["passages"] == want
            answer(s, more)  # stored once: the second run's is a known id
            assert s.stop() == 0
        if len(f) == len(docs):
            f.add(text, "more")
    log = Path(f"{data}.log").read_text()
    assert "Traceback" not in log and "shutdown failed" not in log, log[-2000:]
    assert f"could not write the overlap reference in {ref}" in log
    assert "restarts add the stored texts again" in log
    after = {p.relative_to(ref): p.read_bytes() for p in ref.rglob("*") if p.is_file()}
    assert after == before
    rows = sqlite3.connect(data / "overlap.sqlite").execute("SELECT id FROM documents").fetchall()
    assert len(rows) == len(docs) + 1  # the second run's "more" was a known id, not stored again


def _few_words(n_chars: int, vocabulary: int, seed: int) -> str:
    """A text of a few words repeated in random order: every gram recurs, so the aligner
    works hard (seconds at 5x10^5 characters) on it against itself."""
    rng = random.Random(seed)
    words = [
        "".join(rng.choices("abcdefghijklmnop", k=rng.randint(2, 8))) for _ in range(vocabulary)
    ]
    return " ".join(rng.choices(words, k=n_chars // 5))[:n_chars]


def test_a_huge_overlap_query_does_not_stall_other_clients(tmp_path: Path) -> None:
    """While one client's overlap query aligns for seconds, another client's /healthz and
    one-document dedup post are answered before it finishes (the aligner runs without the
    GIL, off the event loop)."""
    # 10^6 characters of 8 words: a second or more of alignment (over the default seed budget, so
    # the budget is raised: the stall, not the refusal, is under test here)
    text = _few_words(1_000_000, 8, seed=9)
    with Server(tmp_path / "data", "--no-verify", "--overlap", "max_seeds_per_gram=1000") as s:
        answer(s, {"text": text, "id": "big", "store": True})
        done: dict[str, Any] = {}

        def big() -> None:
            done["answer"] = httpx.post(
                s.url + "/v1/overlaps", json={"text": text}, headers=AUTH, timeout=600
            )
            done["at"] = time.monotonic()

        worker = threading.Thread(target=big)
        worker.start()
        time.sleep(0.2)  # the body is read and the alignment under way
        answered: list[float] = []
        with httpx.Client(base_url=s.url, timeout=600) as other:
            while worker.is_alive():
                assert other.get("/healthz").json()["status"] == "ok"
                doc = {"id": f"small-{len(answered)}", "text": "one small document"}
                got = other.post("/v1/documents", json={"documents": [doc]})
                assert got.status_code == 200, got.text
                answered.append(time.monotonic())
        worker.join()
    assert done["answer"].status_code == 200 and done["answer"].json()["passages"]
    before = [t for t in answered if t < done["at"]]
    # every round but the one racing the end came back while the big query was running
    assert len(before) >= 3 and len(answered) - len(before) <= 1, (len(before), len(answered))


@pytest.mark.parametrize(
    ("texts", "least"), [("templated", 40), ("datelines", 10), ("reports", 0), ("phrases", 0)]
)
def test_templates_are_set_aside_as_the_library_does(
    tmp_path: Path, texts: str, least: int
) -> None:
    # the store is the collection the templates are learned from: datelines, bylines and
    # signatures set aside by default, reported (flagged) with templates=keep; "datelines":
    # the frame rule (aligner 11), datelines whose city or reporter differs; "reports": a
    # report filled in with other figures (aligner 12); "phrases": a common phrase (aligner 14)
    import tests.overlap_texts as sets

    made = {
        "templated": lambda: sets.templated(n=60),
        "datelines": sets.datelines,
        "phrases": sets.phrases,
    }
    docs = [(str(i), t) for i, t in made.get(texts, sets.reports)()]
    for options in ((), ("--overlap", "templates=keep")):
        params = dict(o.split("=") for o in options[1::2])
        want = library(docs, **params)
        data = tmp_path / f"data{len(options)}"
        with Server(data, "--no-verify", "--token", TOKEN, *options) as s:
            got = [answer(s, {"text": t, "id": i, "store": True}) for i, t in docs]
        assert [g["passages"] for g in got] == want
        flagged = sum(any(p["template"] for p in w) for w in want)  # documents with one
        assert (flagged > least) if options else (flagged == 0 and any(want))


def test_a_text_over_its_seed_budget_is_a_413_naming_the_limit(tmp_path: Path) -> None:
    """A text of two words repeated meets each stored gram's many postings once per
    occurrence (seeds grow with the square of its length): past max_seeds_per_gram it is
    refused with the library's numbers, the limit and the option, before any work; the
    service goes on and a refused batch stores nothing."""
    text, other = _few_words(20_000, 2, seed=3), synthetic(seed=5, n=1)[0][1]
    f = OverlapFinder(max_seeds_per_gram=1, budget="refuse")  # the service's default
    f.add(text, "rep")
    with pytest.raises(SeedBudgetError) as lib:
        f.query(text, "q")
    with Server(tmp_path / "data", "--overlap", "max_seeds_per_gram=1", "--token", TOKEN) as s:
        assert answer(s, {"text": text, "id": "rep", "store": True})["stored"]
        r = post(s, {"text": text, "id": "q"})
        assert r.status_code == 413, r.text
        error = r.json()["error"]
        assert f"text finds {lib.value.seeds:,} seeds" in error
        assert f"limit of {lib.value.limit:,} (max_seeds_per_gram=1 " in error
        assert error.endswith("start the server with --overlap max_seeds_per_gram=N")
        batch = {"documents": [{"id": "ok", "text": other}, {"id": "bad", "text": text}]}
        r = post(s, {**batch, "store": True})
        assert r.status_code == 413 and r.json()["error"].startswith("documents[1].text finds")
        assert httpx.get(s.url + "/healthz", timeout=60).json()["status"] == "ok"
        again = answer(s, {"text": other, "id": "ok", "store": True})
        assert again["stored"] and not again["known"]  # the refused batch stored nothing


def test_sources_are_named_as_the_library_names_them(tmp_path: Path) -> None:
    # the article, its rewrite, copies of the rewrite: the original and the closest source by
    # default, every stored holder with sources=all; the answers are the library's
    from tests.overlap_texts import copy_chain

    docs = copy_chain(copies=3)
    for options in ((), ("--overlap", "sources=all")):
        params = dict(o.split("=") for o in options[1::2])
        want = library(docs, **params)
        with Server(tmp_path / f"d{len(options)}", "--no-verify", "--token", TOKEN, *options) as s:
            got = [answer(s, {"text": t, "id": i, "store": True}) for i, t in docs]
        assert [g["passages"] for g in got] == want
        last = [(p["source_id"], p["closest_id"]) for p in want[-1]]
        assert ("orig", "rewrite") in last
        assert len(last) == (4 if options else 1)


def test_near_copies_and_parts_are_named_as_the_library_names_them(tmp_path: Path) -> None:
    # the original stored last (aligner 10): a whole near copy and a sentence by default, the
    # heavy rewrite of a part too with sources=all; the answers are the library's
    from tests.overlap_texts import article_last

    docs = article_last()
    for options in ((), ("--overlap", "sources=all")):
        want = library(docs, **dict(o.split("=") for o in options[1::2]))
        with Server(tmp_path / f"d{len(options)}", "--no-verify", "--token", TOKEN, *options) as s:
            got = [answer(s, {"text": t, "id": i, "store": True}) for i, t in docs]
        assert [g["passages"] for g in got] == want
        named = {p["source_id"] for p in want[-1]}
        assert named == ({"heavy", "sentence", "whole"} if options else {"sentence", "whole"})


def test_edited_copies_are_named_as_the_library_names_them(tmp_path: Path) -> None:
    # the original stored last after six copies each edited in its own way (aligner 13):
    # the service names each of them, as the library does
    from tests.overlap_texts import edited_copies

    docs = edited_copies()
    want = library(docs)
    with Server(tmp_path / "d", "--no-verify", "--token", TOKEN) as s:
        got = [answer(s, {"text": t, "id": i, "store": True}) for i, t in docs]
    assert [g["passages"] for g in got] == want
    assert {p["source_id"] for p in want[-1]} == {i for i, _ in docs[:-1]}
