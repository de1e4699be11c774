"""Late documents with a window (issue 22): the streaming library, ``run()``, the local CLI and
the Spark engine decide them alike, and both CLIs count and report them."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from neardup import Deduplicator
from neardup.cli import cli

from tests.spark.test_engine import assert_same

DAY = 86400.0
N_LATE = 150


def late_input(seed: int = 5) -> tuple[list[str], list[float]]:
    """300 synthetic documents one hour apart, then 150 late ones dated next to the first 150
    (100 one-word edits, 50 exact copies): older than the newest minus a one-day window."""
    rng = random.Random(seed)
    vocab = [f"w{i}x{rng.randrange(10**6)}" for i in range(2000)]
    texts = [" ".join(rng.choices(vocab, k=80)) for _ in range(300)]
    ts = [3600.0 * i for i in range(300)]
    for i in range(N_LATE):
        words = texts[i].split()
        if i % 3:
            words[rng.randrange(len(words))] = rng.choice(vocab)
        texts.append(" ".join(words))
        ts.append(ts[i] + 60.0)
    return texts, ts


def test_late_documents_streaming_equals_run_and_spark(spark: Any) -> None:
    texts, ts = late_input()
    ref, info = assert_same(spark, texts, ts, window=DAY)  # Spark == run()
    assert info["late_documents"] == N_LATE
    _, info = assert_same(spark, texts, ts, engine={"small_job_docs": 10**6}, window=DAY)
    assert info["path"] == "driver" and info["late_documents"] == N_LATE
    for chunk in (7, 64, 1000):  # streaming, any chunking == run()
        dd = Deduplicator(window=DAY)
        for i in range(0, len(texts), chunk):
            dd.feed(texts[i : i + chunk], ts[i : i + chunk])
        assert dd.state.decisions().status.tolist() == ref.status.tolist(), chunk
        assert dd.state.decisions().duplicate_of.tolist() == ref.duplicate_of.tolist(), chunk
        assert dd.describe()["late_documents"] == N_LATE
    # the early copies expired before the late ones came: those are not matched
    assert set(ref.statuses[300:]) == {"unique"}


def test_cli_engines_agree_on_late_documents(spark: Any, tmp_path: Path) -> None:
    texts, ts = late_input(seed=6)
    src = tmp_path / "in.jsonl"
    src.write_text(
        "".join(json.dumps({"id": i, "text": t, "t": ts[i]}) + "\n" for i, t in enumerate(texts))
    )
    opts = ["--time-field", "t", "--window", "1d", "--chunk-size", "100"]
    outs = []
    for engine in ("local", "spark"):
        out = tmp_path / f"{engine}.jsonl"
        r = CliRunner().invoke(
            cli, ["dedup", str(src), "--out", str(out), *opts, "--engine", engine]
        )
        assert r.exit_code == 0, r.output
        assert re.search(rf"late documents: {N_LATE}\b", r.output), r.output
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
