"""docs/SCALE.md's spark-submit recipe on a real standalone cluster (issue 26): a master and a
worker started here on 127.0.0.1 with ``spark-class``, whose own ``python3`` lacks neardup (as
on a fresh cluster); the recipe names the executors' Python (``spark.pyspark.python``) and the
job writes what the local engine writes. One cluster serves every check of this module."""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from neardup.cli import cli

BIN = Path(sys.executable).parent


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _cluster_env() -> dict[str, str]:
    """The nodes' environment: no PYSPARK_PYTHON and this venv off PATH, so the executors'
    default ``python3`` is one without neardup (the failure the recipe must avoid)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_")}
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if Path(p) != BIN)
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    import pyspark

    env["SPARK_HOME"] = str(Path(pyspark.__file__).parent)
    env["SPARK_MASTER_OPTS"] = "-Dspark.master.rest.enabled=false"  # no fixed port 6066
    return env


@pytest.fixture(scope="module")
def master(tmp_path_factory: Any) -> Iterator[str]:
    env, work = _cluster_env(), tmp_path_factory.mktemp("worker")
    spark_class = Path(env["SPARK_HOME"], "bin", "spark-class")
    port, ui = _port(), _port()
    url = f"spark://127.0.0.1:{port}"
    deploy = "org.apache.spark.deploy"
    nodes = [
        [f"{deploy}.master.Master", "--host", "127.0.0.1", "--port", str(port)],
        [f"{deploy}.worker.Worker", "--host", "127.0.0.1", "--cores", "2", "--memory", "2g"],
    ]
    nodes[0] += ["--webui-port", str(ui)]
    nodes[1] += ["--webui-port", str(_port()), "--work-dir", str(work), url]
    procs = []
    try:
        for args in nodes:
            procs.append(
                subprocess.Popen(
                    [str(spark_class), *args],
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                )
            )
        _wait_for_worker(ui)
        yield url
    finally:
        for p in procs:
            os.killpg(p.pid, signal.SIGTERM)
            p.wait(timeout=30)


def _wait_for_worker(ui: int, timeout: float = 120.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=2) as r:
                if json.load(r).get("aliveworkers", 0) >= 1:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise AssertionError("the standalone worker did not register with the master")


def _docs(path: Path) -> None:
    rng = random.Random(9)
    vocab = [f"v{i}" for i in range(800)]
    texts = [" ".join(rng.choices(vocab, k=60)) for _ in range(120)]
    texts += [t.replace(t.split()[3], "changed", 1) for t in texts[:30]] + texts[30:40]
    path.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in enumerate(texts)))


def test_documented_spark_submit_recipe_on_standalone(master: str, tmp_path: Path) -> None:
    src, local, remote = tmp_path / "in.jsonl", tmp_path / "local.jsonl", tmp_path / "spark.jsonl"
    _docs(src)
    r = CliRunner().invoke(cli, ["dedup", str(src), "--out", str(local)])
    assert r.exit_code == 0, r.output
    import neardup.cli.spark_submit as entry

    # the recipe of docs/SCALE.md ("On a standalone cluster")
    env = _cluster_env()
    cmd = [str(Path(env["SPARK_HOME"], "bin", "spark-submit")), "--master", master]
    cmd += ["--conf", f"spark.pyspark.python={sys.executable}"]
    cmd += ["--conf", "spark.neardup.smallJobDocs=0"]  # the executors' plan, not the driver's
    cmd += [entry.__file__, str(src), "--out", str(remote)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert remote.read_bytes() == local.read_bytes()
    # shuffle partitions from the input size, not Spark's 200 (a small job: the cores)
    # spark-submit passes the Python driver's stderr on to its stdout
    lines = (done.stdout + done.stderr).splitlines()
    summary = [ln for ln in lines if ln.startswith("spark: ")]
    assert summary and summary[0].endswith(", 2 shuffle partitions"), summary
