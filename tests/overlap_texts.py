"""Synthetic texts with partial copies (no corpora): for the overlap service and Spark tests."""

from __future__ import annotations

import random

BOILERPLATE = "subscribe to our newsletter for more stories like this one every day"


def synthetic(seed: int = 7, n: int = 14, boilerplate: str = BOILERPLATE) -> list[tuple[str, str]]:
    """``(id, text)``: random English-like and Chinese texts; later ones copy passages of
    earlier ones (verbatim, with word edits, or twice), and every text ends with ``boilerplate``.

    >>> docs = synthetic(n=3)
    >>> [i for i, _ in docs], all(t.endswith(BOILERPLATE) for _, t in docs)
    (['doc-0', 'doc-1', 'doc-2'], True)
    """
    rng = random.Random(seed)
    vocab = ["".join(rng.choice("abcdefghiklmnoprstu") for _ in range(rng.randint(2, 8)))
             for _ in range(800)]  # fmt: skip
    han = [chr(0x4E00 + rng.randrange(3000)) for _ in range(400)]
    docs: list[tuple[str, str]] = []
    for i in range(n):
        if i % 4 == 3:
            chars = [rng.choice(han) for _ in range(120)]
            text = "".join(chars[:60]) + "。" + "".join(chars[60:]) + "！"
        else:
            text = " ".join(rng.choice(vocab) for _ in range(rng.randint(60, 140)))
        if i >= 2 and i % 2 == 0:
            _, src = docs[rng.randrange(len(docs))]
            a = rng.randrange(max(1, len(src) // 2))
            piece = src[a : a + rng.randint(80, 300)]
            if i % 3 == 0:  # a light rewrite: a few words replaced
                piece = " ".join(rng.choice(vocab) if rng.random() < 0.05 else w
                                 for w in piece.split(" "))  # fmt: skip
            if i % 5 == 0:  # the same passage twice: a gram with two places in this text
                piece = piece + " and again " + piece
            cut = rng.randrange(len(text))
            text = text[:cut] + " " + piece + " " + text[cut:]
        docs.append((f"doc-{i}", text + "\n" + boilerplate))
    return docs
