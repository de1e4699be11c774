"""Ids round-trip exactly: integers beyond 2^53 and beyond 64 bits are never turned into floats
(issue 22: orjson reads integers beyond 64 bits as floats)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from neardup.cli import cli

TEXT = "storm hits the coast tonight, thousands without power in the north of the country"


@pytest.mark.parametrize(
    "big", [2**53 + 1, 2**63 + 3, 2**64 + 1, -(2**63) - 3, 10**30 + 7], ids=str
)
def test_integer_ids_round_trip_in_jsonl(tmp_path: Path, big: int) -> None:
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    rows = [{"id": big, "text": TEXT}, {"id": big + 2, "text": TEXT + "!"}, {"id": 5, "text": TEXT}]
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    r = CliRunner().invoke(cli, ["dedup", str(src), "--out", str(out)])
    assert r.exit_code == 0, r.output
    got = [json.loads(line) for line in out.read_text().splitlines()]
    assert [g["id"] for g in got] == [big, big + 2, 5]
    assert [g["duplicate_of"] for g in got] == [None, big, big]
    assert all(type(g["duplicate_of"]) is int for g in got[1:])
