"""The integrations' optional libraries: pyarrow tables work without Polars and
datasets; the datatrove steps without datatrove name the extra to install."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(blocked: list[str], code: str) -> subprocess.CompletedProcess[str]:
    prelude = f"import sys\nfor name in {blocked!r}: sys.modules[name] = None\n"
    return subprocess.run(
        [sys.executable, "-c", prelude + code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )


def test_pyarrow_tables_need_no_other_table_library() -> None:
    code = (
        "import neardup, pyarrow as pa\n"
        "t = pa.table({'text': ['a b c d e', 'a b c d e']})\n"
        "print(neardup.dedup_table(t).column('status').to_pylist())\n"
    )
    # (pandas stays: pyarrow itself looks it up in sys.modules and fails on a block)
    res = _run(["polars", "datasets", "datatrove"], code)
    assert res.returncode == 0, res.stderr
    assert "['unique', 'exact_duplicate']" in res.stdout


def test_datatrove_steps_without_datatrove_name_the_extra() -> None:
    res = _run(["datatrove"], "import neardup.integrations.datatrove\n")
    assert res.returncode == 1
    last = res.stderr.strip().splitlines()[-1]
    assert "MissingExtraError" in last and "pip install 'neardup[datatrove]'" in last
