"""`neardup eval --corpus NAME` (its first --help example) works without the bench extra: the
anchor baselines are skipped with a note; asking for one names the extra (issue 26)."""

from __future__ import annotations

import gzip
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("scipy")  # the eval extra (ground truth)


def _corpus(root: Path) -> Path:
    """A small reuters-shaped corpus: 40 random texts and an edited copy of ten of them."""
    rng = random.Random(3)
    vocab = [f"w{i}" for i in range(500)]
    texts = [" ".join(rng.choices(vocab, k=80)) for _ in range(40)]
    texts += [t.replace(t.split()[5], "changed", 1) for t in texts[:10]]
    folder = root / "reuters21578"
    folder.mkdir(parents=True)
    with gzip.open(folder / "docs.jsonl.gz", "wt", encoding="utf-8") as f:
        f.writelines(json.dumps({"id": i, "text": t}) + "\n" for i, t in enumerate(texts))
    return root


def _eval(corpora: Path, *args: str) -> subprocess.CompletedProcess[str]:
    code = (
        "import sys\n"
        "sys.modules['datasketch'] = sys.modules['simhash'] = None\n"  # bench extra absent
        "from neardup.cli import main\n"
        "sys.argv = ['neardup', *sys.argv[1:]]\n"
        "main()\n"
    )
    env = {**os.environ, "NEARDUP_CORPORA": str(corpora)}
    return subprocess.run(
        [sys.executable, "-c", code, "eval", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_default_run_skips_missing_anchors(tmp_path: Path) -> None:
    res = _eval(_corpus(tmp_path), "--corpus", "reuters", "--json")
    assert res.returncode == 0, res.stderr
    rows = {r["method"]: r for r in json.loads(res.stdout)["results"]}
    assert "neardup[bench]" in rows["minhash-lsh"]["skipped"]
    assert "neardup[bench]" in rows["pypi-simhash"]["skipped"]
    assert rows["neardup"]["recall"] == 1.0 and rows["neardup"]["precision"] == 1.0
    assert "Traceback" not in res.stderr


def test_asking_for_a_missing_anchor_names_the_extra(tmp_path: Path) -> None:
    res = _eval(_corpus(tmp_path), "--corpus", "reuters", "--method", "minhash-lsh")
    assert res.returncode == 2
    assert "pip install 'neardup[bench]'" in res.stderr and "Traceback" not in res.stderr
