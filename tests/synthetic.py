"""Synthetic corpora for tests that must run without ../shared: news-like English and Chinese
texts, edited / exact / empty copies, timestamps over several days.

Texts are drawn from Zipf-like vocabularies (frequent words shared by every text, rare words
that make texts distinct), so unrelated texts overlap as real news does; copies are planted
with word or character edits at given rates. Everything is a pure function of ``seed``.

>>> docs = synthetic_corpus(30, seed=1)
>>> len(docs), sorted(docs[0])
(30, ['id', 'kind', 'text', 'ts'])
>>> synthetic_corpus(30, seed=1) == docs
True
"""

from __future__ import annotations

import random
from typing import Any

_EN_VOCAB = [f"w{i}" for i in range(3000)]
_EN_WEIGHTS = [1.0 / (i + 1) ** 0.9 for i in range(len(_EN_VOCAB))]
_HAN = [chr(c) for c in range(0x4E00, 0x4E00 + 2500)]
_HAN_WEIGHTS = [1.0 / (i + 1) ** 0.8 for i in range(len(_HAN))]
DAY = 86400.0


def english_text(rng: random.Random, words: int) -> str:
    """A news-like English text of ``words`` words, with sentence punctuation."""
    toks = rng.choices(_EN_VOCAB, _EN_WEIGHTS, k=words)
    for i in range(12, len(toks), 13):
        toks[i] += "."
    return " ".join(toks).capitalize()


def chinese_text(rng: random.Random, chars: int) -> str:
    """A Chinese text of ``chars`` Han characters, with 。 every ~20 characters."""
    out = rng.choices(_HAN, _HAN_WEIGHTS, k=chars)
    for i in range(19, len(out), 20):
        out[i] += "。"
    return "".join(out)


def edit(text: str, rate: float, rng: random.Random) -> str:
    """Replace about ``rate`` of the words (or Han characters, for text without spaces)."""
    if " " in text:
        words = text.split(" ")
        for _ in range(max(1, round(len(words) * rate))):
            words[rng.randrange(len(words))] = rng.choice(_EN_VOCAB)
        return " ".join(words)
    chars = list(text)
    for _ in range(max(1, round(len(chars) * rate))):
        chars[rng.randrange(len(chars))] = rng.choice(_HAN)
    return "".join(chars)


def synthetic_corpus(n: int, seed: int = 0, days: float = 6.0) -> list[dict[str, Any]]:
    """``n`` documents ``{"id", "text", "ts", "kind"}`` in time order (``ts``: epoch seconds).

    About 55 % originals (English 100-250 words or Chinese 80-400 characters), 25 % edited
    copies of an earlier document (2, 5 or 10 % edits), 10 % exact copies with changed case and
    spacing, 5 % empty texts, 5 % copies of a document more than a day older (for windows).
    ``kind`` says which, for assertions; ids are strings ``d0``, ``d1``, ...
    """
    rng = random.Random(seed)
    docs: list[dict[str, Any]] = []
    t0 = 1_700_000_000.0
    for i in range(n):
        ts = t0 + days * DAY * i / max(n, 1)
        r = rng.random()
        if not docs or r < 0.55:
            zh = rng.random() < 0.35
            text = (
                chinese_text(rng, rng.randint(80, 400))
                if zh
                else english_text(rng, rng.randint(100, 250))
            )
            kind = "original"
        elif r < 0.80:
            text, kind = (
                edit(rng.choice(docs)["text"] or "x", rng.choice([0.02, 0.05, 0.1]), rng),
                "edited",
            )
        elif r < 0.90:
            text, kind = "  " + rng.choice(docs)["text"].upper() + " ", "exact"
        elif r < 0.95:
            text, kind = rng.choice(["", "   ", "!!!"]), "empty"
        else:
            text, kind = docs[rng.randrange(max(1, len(docs) // 3))]["text"], "old-copy"
        docs.append({"id": f"d{i}", "text": text, "ts": ts, "kind": kind})
    return docs


def remix_corpus(n: int, seed: int = 0, pool: int | None = None) -> list[str]:
    """``n`` English documents of 2-4 paragraphs (40-80 words each) drawn from a shared pool of
    ``pool`` (default ``n // 4``) paragraphs: pairs share 0-3 paragraphs, so similarities spread
    over 0.2-0.8 and star clusters would hold members alike in different parts."""
    rng = random.Random(seed)
    paras = [english_text(rng, rng.randint(40, 80)) for _ in range(pool or max(4, n // 4))]
    return ["\n\n".join(rng.sample(paras, rng.randint(2, 4))) for _ in range(n)]


def corpus_or_synthetic(name: str, n: int, seed: int = 0) -> list[str]:
    """``n`` texts of the named real corpus, or (corpora absent: a clean clone) ``n`` texts of
    :func:`synthetic_corpus`, so the tests that use it run either way."""
    from neardup.eval.corpora import CorpusNotFoundError, load_corpus

    try:
        return list(load_corpus(name, n)[1])
    except CorpusNotFoundError:
        return [r["text"] for r in synthetic_corpus(n + n // 10, seed=seed) if r["text"]][:n]
