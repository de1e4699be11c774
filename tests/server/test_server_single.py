"""Issue 38: ``POST /v1/documents`` takes one document object as ``/v1/overlaps`` does, and
``neardup serve`` prints a startup block at the default log level."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.server.server_helpers import Server

TEXT = "The committee approved the new budget for the city's public schools on Tuesday."


def test_one_document_object_is_decided_like_a_batch_of_one(server: Server) -> None:
    url = server.url + "/v1/documents"
    one = httpx.post(url, json={"id": "a", "text": TEXT}, timeout=60)
    assert one.status_code == 200, one.text
    assert one.json() == {**server.decide([{"id": "a", "text": TEXT}])[0], "dry_run": False}
    dry = httpx.post(url, json={"id": "b", "text": TEXT, "dry_run": True}, timeout=60).json()
    assert dry["status"] == "exact_duplicate" and dry["duplicate_of"] == "a" and dry["dry_run"]
    bad = httpx.post(url, json={"text": TEXT}, timeout=60)
    assert bad.status_code == 422 and "document.id is missing" in bad.json()["error"]
    both = httpx.post(url, json={"text": TEXT, "documents": []}, timeout=60)
    assert both.status_code == 422 and "one document" in both.json()["error"]


def test_startup_block_names_address_data_config_auth_and_documents(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with Server(data, "--no-verify") as s:
        s.decide([{"id": "a", "text": TEXT}, {"id": "b", "text": "another text entirely"}])
        config_id = httpx.get(s.url + "/healthz", timeout=10).json().get("config_id")
        s.stop()
        s.proc = None
        s.start()
        log = s.log.read_text("utf-8")
    block = log[log.rindex("neardup serve: ") :]
    assert f"http://127.0.0.1:{s.port}" in block and str(data) in block
    assert "auth:       off" in block and "documents:  2 loaded" in block
    assert config_id is None or config_id in block
    assert "config id:  dd1-" in block


def test_the_rerun_rule_of_the_core_a_known_id_and_text_is_not_stored_again(
    server: Server,
) -> None:
    """The service applies dedup/rerun.py: the same id and text get the stored decision (not
    stored again); a stored id with another text is refused naming it (ids are keys here)."""
    first = server.decide([{"id": "a", "text": TEXT}, {"id": "b", "text": TEXT.upper()}])
    again = server.decide([{"id": "b", "text": TEXT.upper()}, {"id": "c", "text": "new text"}])
    assert again[0] == first[1]
    other = server.post([{"id": "a", "text": TEXT + " Corrected."}])
    assert other.status_code == 409
    assert "documents[0].id 'a' is stored with another text" in other.json()["error"]
    counts = httpx.get(server.url + "/healthz", timeout=10).json()
    assert counts["documents"] == 3
