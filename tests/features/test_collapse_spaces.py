"""The C whitespace collapse behind the exact-duplicate keys (64 bytes at a time since issue
24) against its definition, ``" ".join(text.split())``, byte for byte."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from neardup._backend import native

pytestmark = pytest.mark.skipif(native() is None, reason="C extension not built")

SPACES = (
    " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
OTHER = "abc.-,X09\x00\x01\x1b\x7f\x80é中文ω\u200b"  # \u200b (zero width) is not a space
texts = st.text(alphabet=st.sampled_from(SPACES + OTHER * 3), max_size=300)


def collapse(batch: list[str]) -> list[str]:
    encoded = [t.encode("utf-8", "surrogatepass") for t in batch]
    buf = np.frombuffer(b"xy" + b"".join(encoded), dtype=np.uint8)  # offsets need not start at 0
    offsets = np.cumsum([2] + [len(e) for e in encoded]).astype(np.int64)
    out = np.zeros(buf.size, dtype=np.uint8)
    out_off = np.zeros(offsets.size, dtype=np.int64)
    native().collapse_spaces(buf, offsets, out, out_off)
    data = out.tobytes()
    return [data[a:b].decode("utf-8", "surrogatepass") for a, b in itertools.pairwise(out_off)]


@settings(max_examples=400, deadline=None)
@given(st.lists(texts, max_size=4))
@example(["a" * 63 + "\n\n" + "b" * 70, "  " + "c " * 40 + "\t", " " * 64 + "d" + " " * 64])
@example([" x" * 32 + "\n" + "y  " * 30, "é" + "z " * 40])
def test_collapse_is_split_and_join(batch: list[str]) -> None:
    assert collapse(batch) == [" ".join(t.split()) for t in batch]


def test_scalar_versions_give_the_same_tokens_and_collapse() -> None:
    """NEARDUP_NO_SIMD=1 runs the scalar block classifiers (the only ones without AVX2, e.g.
    on aarch64): tokens and collapsed texts of long mixed texts equal the definitions."""
    import json
    import os
    import random
    import subprocess
    import sys

    rng = random.Random(3)
    pool = list("abcXYZ09 ,.-'\t\n") * 6 + list(SPACES) + list("é中文ω한カ\u0301\x00\x1f")
    batch = ["".join(rng.choice(pool) for _ in range(rng.randrange(300))) for _ in range(60)]
    code = (
        "import json, sys\n"
        "from neardup.features.extract import tokens\n"
        "from tests.features.test_collapse_spaces import collapse\n"
        "batch = json.loads(sys.stdin.read())\n"
        "print(json.dumps([collapse(batch), [tokens(t) for t in batch]]))\n"
    )
    env = {**os.environ, "NEARDUP_NO_SIMD": "1"}
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    out = subprocess.run([sys.executable, "-c", code], input=json.dumps(batch), env=env,
                         capture_output=True, text=True, check=True)  # fmt: skip
    scalar_collapse, scalar_tokens = json.loads(out.stdout)
    from neardup.features.extract import tokens

    assert scalar_collapse == [" ".join(t.split()) for t in batch] == collapse(batch)
    assert scalar_tokens == [tokens(t) for t in batch]
