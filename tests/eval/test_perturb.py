from __future__ import annotations

import numpy as np
import pytest

from neardup.eval.perturb import EDIT_KINDS, length_bucket, perturb, plant_copies
from neardup.verify import shingle_hashes

EN = " ".join(f"w{i}" for i in range(200))
ZH = "今天天气很好，我们去公园散步123然后回家吃饭。" * 10


@pytest.mark.parametrize("kind", EDIT_KINDS)
@pytest.mark.parametrize("text", [EN, ZH, "Short. Text here! And more."])
def test_deterministic(kind: str, text: str) -> None:
    assert perturb(text, kind, 0.05, seed=7) == perturb(text, kind, 0.05, seed=7)


@pytest.mark.parametrize("rate", [0.01, 0.05, 0.2])
def test_delete_and_insert_rates(rate: float) -> None:
    n = 200
    assert len(perturb(EN, "delete", rate, seed=1).split()) == n - round(rate * n)
    assert len(perturb(EN, "insert", rate, seed=1).split()) == n + round(rate * n)
    assert len(perturb(ZH, "delete", rate, seed=1)) == len(ZH) - round(rate * len(ZH))


@pytest.mark.parametrize("rate", [0.01, 0.05, 0.2])
def test_substitute_rate(rate: float) -> None:
    out = perturb(EN, "substitute", rate, seed=3).split()
    changed = sum(a != b for a, b in zip(EN.split(), out, strict=False))
    assert changed == round(rate * 200)


def test_swap_keeps_multiset() -> None:
    out = perturb(EN, "swap", 0.1, seed=2)
    assert sorted(out.split()) == sorted(EN.split()) and out != EN


def test_at_least_one_edit() -> None:
    assert perturb("a b c", "substitute", 0.01, seed=0) != "a b c"


def test_move_sentence_keeps_sentences() -> None:
    text = "One is here. Two is there! Three is everywhere? Four."
    out = perturb(text, "move_sentence", 0.5, seed=4)
    assert sorted(out.split()) == sorted(text.split())


def test_boilerplate_adds_about_rate() -> None:
    out = perturb(EN, "boilerplate", 0.1, seed=5)
    assert EN in out and 0.1 * len(EN) <= len(out) - len(EN) <= 0.1 * len(EN) + 60


@pytest.mark.parametrize("kind", ["rewrap", "width"])
@pytest.mark.parametrize("text", [EN, ZH])
def test_normalisation_edits_keep_shingles(kind: str, text: str) -> None:
    out = perturb(text, kind, 0.2, seed=6)
    assert out != text
    assert np.array_equal(shingle_hashes(out), shingle_hashes(text))


def test_bad_args() -> None:
    with pytest.raises(ValueError, match="edit kind"):
        perturb("x", "shuffle", 0.1)
    with pytest.raises(ValueError, match="rate"):
        perturb("x", "delete", 0.0)


def test_buckets() -> None:
    assert [length_bucket("x" * n) for n in (0, 299, 300, 999, 1000)] == [
        "short",
        "short",
        "medium",
        "medium",
        "long",
    ]


def test_plant_copies_layout() -> None:
    texts = ["a b c d e f g " * k for k in (5, 60, 200)]
    ps = plant_copies(texts, per_bucket=1, kinds=("delete",), rates=(0.05, 0.1), seed=0)
    assert len(ps.texts) == 3 + 6
    assert ps.copy.tolist() == list(range(3, 9))
    assert sorted(set(ps.bucket)) == ["long", "medium", "short"]
    again = plant_copies(texts, per_bucket=1, kinds=("delete",), rates=(0.05, 0.1), seed=0)
    assert again.texts == ps.texts
