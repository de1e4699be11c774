"""Hostile bodies against a real server: every answer is JSON with a 2xx/4xx status, never a 500,
and the service keeps answering (hypothesis generates the bodies)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.server.server_helpers import Server

ANY_CHAR = st.characters(blacklist_categories=())  # lone surrogates and NULs included
TEXTS = st.text(ANY_CHAR, max_size=40) | st.sampled_from(["", " ", "\x00", "\ud800", "a" * 600])
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.sampled_from([10**400, -(10**400)])
    | st.floats(allow_nan=True, allow_infinity=True)
    | TEXTS
)
VALUES = st.recursive(
    SCALARS, lambda v: st.lists(v, max_size=3) | st.dictionaries(TEXTS, v, max_size=3), max_leaves=8
)
TIMESTAMPS = VALUES | st.sampled_from(["2024-05-01T10:00:00Z", "2024-13-45", "1e30", "-1", "NaN"])
DOCUMENT = st.fixed_dictionaries(
    {"id": TEXTS | VALUES, "text": TEXTS | VALUES},
    optional={"timestamp": TIMESTAMPS, "extra": VALUES},
)
BODY = st.fixed_dictionaries(
    {"documents": st.lists(DOCUMENT | VALUES, max_size=5) | VALUES},
    optional={"dry_run": st.booleans() | VALUES},
)


def encode(value: Any) -> bytes:
    return json.dumps(value, allow_nan=True).encode()  # NaN/Infinity: Python's JSON reads them


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with Server(tmp_path_factory.mktemp("hostile") / "d", "--window", "1d") as s:
        yield s


def check(server: Server, body: bytes) -> None:
    r = httpx.post(
        server.url + "/v1/documents",
        content=body,
        headers={"content-type": "application/json"},
        timeout=60,
    )
    assert r.status_code in (200, 400, 413, 422), (body[:300], r.status_code, r.text[:300])
    answer = r.json()
    if r.status_code == 200:
        docs = json.loads(body)["documents"]
        assert [x["id"] for x in answer["results"]] == [d["id"] for d in docs]
    else:
        assert isinstance(answer["error"], str) and answer["error"], answer


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=BODY)
def test_hostile_structured_bodies(server: Server, body: dict[str, Any]) -> None:
    check(server, encode(body))


@settings(max_examples=40, deadline=None)
@given(raw=st.binary(max_size=200) | VALUES.map(encode))
def test_hostile_raw_bodies(server: Server, raw: bytes) -> None:
    check(server, raw)


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 100_000,
        b'{"documents": ' + b"[" * 50_000 + b"]" * 50_000 + b"}",
        b'{"documents": [{"id": "a", "text": "x", "timestamp": 1e999}]}',
        b'{"documents": [{"id": "\\ud800", "text": "\\udfff lone surrogates", "timestamp": 5}]}',
        b'{"documents": [{"id": "n", "text": "nul \\u0000 inside", "timestamp": 5}]}',
        b'{"documents": [{"id": "a", "text": "x", "timestamp": NaN}]}',
        b"",
        b"null",
    ],
)
def test_known_hostile_bodies(server: Server, body: bytes) -> None:
    check(server, body)
    assert httpx.get(server.url + "/healthz").status_code == 200
