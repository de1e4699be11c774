"""eval scores the product's decisions: its ``neardup`` rows are the clusters the library and
the CLI give for the same texts and configuration, not connected components of accepted pairs
(issue 37)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.cli import cli
from neardup.dedup import Deduplicator
from neardup.eval.cli import eval_command, product_pair_decisions
from neardup.eval.harness import METHODS, product_params

WORDS = [f"w{i}" for i in range(2000)]


def _edited(words: list[str], *spans: tuple[int, int]) -> str:
    out = list(words)
    for lo, hi in spans:
        out[lo:hi] = ["x" + w for w in out[lo:hi]]
    return " ".join(out)


def _chain() -> list[str]:
    """A, B (15 % of A's words changed), C (B with 15 % more changed): A~B and B~C pass the
    verifier, A and C do not, so components chain all three and the product does not."""
    rng = random.Random(1)
    base = [rng.choice(WORDS) for _ in range(80)]
    a, b, c = " ".join(base), _edited(base, (0, 12)), _edited(base, (0, 12), (40, 52))
    return ["", c, a, b, a, "short one", "", "another text entirely, about the weather"]


def _cli_rows(tmp_path: Path, texts: list[str], args: list[str]) -> list[dict[str, Any]]:
    """``neardup dedup`` of ``texts`` (a real JSONL file in, one out): the output rows."""
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    rows = [{"id": f"d{i}", "text": t} for i, t in enumerate(texts)]
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    res = CliRunner().invoke(cli, ["dedup", str(src), "--out", str(out), *args])
    assert res.exit_code == 0, res.output
    return [json.loads(line) for line in out.read_text("utf-8").splitlines()]


def _cli_clusters(tmp_path: Path, texts: list[str], args: list[str]) -> list[int]:
    return [row["cluster_id"] for row in _cli_rows(tmp_path, texts, args)]


# (eval method, the CLI's options, the library's parameters): one configuration each
CONFIGS = [
    ("neardup", [], {}),
    ("neardup-radius", ["--k", "14"], {"k": 14}),
    ("neardup-unverified", ["--no-verify"], {"verifier": None}),
]


@pytest.mark.parametrize(("method", "cli_args", "params"), CONFIGS)
def test_eval_labels_are_the_library_and_cli_clusters(
    tmp_path: Path, method: str, cli_args: list[str], params: dict[str, object]
) -> None:
    texts = _chain()
    labels = METHODS[method][0](texts).tolist()
    library = Deduplicator(**params).run(texts).cluster_id.tolist()  # type: ignore[arg-type]
    assert labels == library == _cli_clusters(tmp_path, texts, cli_args)


def test_product_does_not_chain_what_components_chain() -> None:
    texts = _chain()
    product = METHODS["neardup"][0](texts)
    components = METHODS["neardup-components"][0](texts)
    a, b, c = 2, 3, 1
    assert components[a] == components[b] == components[c]  # A-B-C chained
    assert product[a] == product[b] == product[4] and product[c] != product[a]


@pytest.mark.parametrize(("method", "_cli", "params"), CONFIGS)
def test_eval_configuration_is_the_product_default(
    method: str, _cli: list[str], params: dict[str, object]
) -> None:
    eval_dd = Deduplicator(**product_params(**params))
    assert eval_dd.config_id == Deduplicator(**params).config_id  # type: ignore[arg-type]


def test_pairs_default_is_the_cli_decision(tmp_path: Path) -> None:
    """``neardup eval --pairs``' default row scores the product's decision on each pair: the
    CLI's status of b in a file [a, b]. The pair 15 bits apart (estimate 0.81) shares a band,
    so the product finds it; a Hamming radius of 14 did not."""
    rng = random.Random(1)
    base = [rng.choice(WORDS) for _ in range(80)]
    a = " ".join(base)
    pairs = [
        (a, _edited(base, (0, 9))),  # 15 bits, estimate 0.81: a duplicate
        (a, _edited(base, (0, 4))),
        (a, _edited(base, (0, 12), (40, 52))),  # estimate 0.44: not one
        ("the cat sat on the mat by the door", "the cat sat on the mat by the window"),
        (a, ""),
    ]
    cli_says = [
        _cli_rows(tmp_path, [x, y], [])[1]["status"] in ("duplicate", "exact_duplicate")
        for x, y in pairs
    ]
    assert cli_says == [True, True, False, False, False]
    xs, ys = [x for x, _ in pairs], [y for _, y in pairs]
    assert product_pair_decisions(xs, ys).tolist() == cli_says
    path = tmp_path / "pairs.jsonl"
    lines = [{"a": x, "b": y, "label": int(d)} for (x, y), d in zip(pairs, cli_says, strict=True)]
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), "utf-8")
    res = CliRunner().invoke(eval_command, ["--pairs", str(path), "--json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.output)
    assert report["default"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    assert report["config_id"] == Deduplicator().config_id


def _refines(fine: npt.NDArray[np.int64], coarse: npt.NDArray[np.int64]) -> bool:
    """Every cluster of ``fine`` lies inside one cluster of ``coarse``."""
    inside: dict[int, int] = {}
    return all(inside.setdefault(int(f), int(c)) == c for f, c in zip(fine, coarse, strict=True))


@st.composite
def _edited_copies(draw: st.DrawFn) -> list[str]:
    bases = [[draw(st.sampled_from(WORDS[:300])) for _ in range(40)] for _ in range(2)]
    texts = []
    for _ in range(draw(st.integers(2, 9))):
        words = list(bases[draw(st.integers(0, 1))])
        for pos in draw(st.lists(st.integers(0, 39), max_size=12)):
            words[pos] = draw(st.sampled_from(WORDS))
        texts.append(" ".join(words))
    return texts


@settings(max_examples=30, deadline=None)
@given(_edited_copies())
def test_product_clusters_refine_components(texts: list[str]) -> None:
    """Brute force: the product's clusters are the library's, and each lies inside one
    connected component of the pairs the same candidates and verifier accept (the cluster
    rule only ever declines a join, it never adds a pair)."""
    product = METHODS["neardup"][0](texts)
    assert product.tolist() == Deduplicator().run(texts).cluster_id.tolist()
    assert _refines(product, METHODS["neardup-components"][0](texts))


def test_reuters_eval_labels_are_the_cli_clusters(tmp_path: Path, reuters: list[str]) -> None:
    labels = METHODS["neardup"][0](reuters).tolist()
    assert labels == Deduplicator().run(reuters).cluster_id.tolist()
    assert labels == _cli_clusters(tmp_path, reuters, [])
