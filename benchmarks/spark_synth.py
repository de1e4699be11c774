"""Synthetic corpora with real text statistics and planted copies, for the Spark scale runs.

Documents (deterministic for ``(n, seed)``):

- every real text of Reuters, 20 Newsgroups, the Chinese shopping reviews (all 62,774) and the
  People's Daily paragraphs (about 120,000 texts, natural duplicates included), as many as fit;
- *remixes* to fill the rest: three random contiguous thirds of three documents of one corpus,
  joined (words for English, characters for Chinese), so vocabulary, word order and lengths stay
  real while two remixes rarely share more than a third of their text;
- planted copies: ``edit_rate`` of the documents are an earlier document with about 1 unit in 40
  dropped or replaced by another unit of the same text (at least one), ``copy_rate`` exact copies;
  ``templated`` mode instead writes ``n`` copies of one Reuters story that each differ by one word
  (the hot-key case: every band key shared by nearly all documents).

Written as one Parquet file ``(pos, text, ts)`` with row groups of 16,384 rows::

    PYTHONPATH=src python benchmarks/spark_synth.py --n 100000 \\
        --out /tmp/neardup-spark/synth-1e5.parquet
"""

from __future__ import annotations

import random
from pathlib import Path

import click
import pyarrow as pa
import pyarrow.parquet as pq

from neardup.eval.corpora import load_corpus

CORPORA = {  # name -> language
    "reuters": "en",
    "20news": "en",
    "shopping": "zh",
    "peoples_daily_paragraphs": "zh",
}


def _units(text: str, lang: str) -> list[str]:
    return list(text) if lang == "zh" else text.split()


def _join(units: list[str], lang: str) -> str:
    return "".join(units) if lang == "zh" else " ".join(units)


def _third(rng: random.Random, units: list[str]) -> list[str]:
    size = max(1, len(units) // 3)
    start = rng.randrange(max(1, len(units) - size + 1))
    return units[start : start + size]


def _edit(rng: random.Random, text: str, lang: str) -> str:
    units = _units(text, lang)
    if len(units) < 2:
        return text + ("。" if lang == "zh" else " again")
    for _ in range(max(1, len(units) // 40)):
        i = rng.randrange(len(units))
        if rng.random() < 0.5:
            units.pop(i)
        else:
            units[i] = units[rng.randrange(len(units))]
    return _join(units, lang)


def real_texts() -> list[tuple[str, str]]:
    """``(lang, text)`` of every real text of the four corpora, in corpus order."""
    out: list[tuple[str, str]] = []
    for name, lang in CORPORA.items():
        out += [(lang, t) for t in load_corpus(name, None)[1]]
    return out


def synth(
    n: int, seed: int, edit_rate: float = 0.1, copy_rate: float = 0.03, remix_min: int = 0
) -> list[str]:
    """``n`` texts: real ones, remixes, planted edits and exact copies, shuffled. Remixes draw
    only on texts of at least ``remix_min`` units (words / characters): thirds of very short
    texts are a few characters, and remixes of them collide into near-duplicate families that
    grow with ``n`` squared, which makes the duplicate rate depend on ``n``."""
    rng = random.Random(seed)
    real = real_texts()
    n_plain = n - int(n * edit_rate) - int(n * copy_rate)
    docs = real[:n_plain] if n_plain <= len(real) else list(real)
    by_lang: dict[str, list[list[str]]] = {}
    for lang, text in real:
        if len(units := _units(text, lang)) >= remix_min:
            by_lang.setdefault(lang, []).append(units)
    weights = [len(by_lang["en"]), len(by_lang["zh"])]
    while len(docs) < n_plain:
        lang = rng.choices(["en", "zh"], weights)[0]
        pool = by_lang[lang]
        parts = [_third(rng, pool[rng.randrange(len(pool))]) for _ in range(3)]
        docs.append((lang, _join([u for p in parts for u in p], lang)))
    rng.shuffle(docs)
    texts = [t for _, t in docs]
    langs = [lang for lang, _ in docs]
    for _ in range(int(n * edit_rate)):
        i = rng.randrange(len(texts))
        texts.append(_edit(rng, texts[i], langs[i]))
        langs.append(langs[i])
    for _ in range(int(n * copy_rate)):
        texts.append(texts[rng.randrange(len(texts))])
    tail = texts[n_plain:]
    rng.shuffle(tail)  # copies come after their originals, in random order
    return texts[:n_plain] + tail


def templated(n: int, seed: int) -> list[str]:
    """``n`` copies of one Reuters story, each with one word replaced (all distinct texts)."""
    rng = random.Random(seed)
    base = max(load_corpus("reuters", 2000)[1], key=len).split()[:300]
    vocab = sorted({w for t in load_corpus("reuters", 2000)[1] for w in t.split()})
    out: set[str] = set()
    texts: list[str] = []
    while len(texts) < n:
        words = list(base)
        words[rng.randrange(len(words))] = rng.choice(vocab)
        text = " ".join(words)
        if text not in out:
            out.add(text)
            texts.append(text)
    return texts


def write(texts: list[str], path: Path) -> None:
    """One Parquet file ``(pos, text, ts)`` (``ts`` null), row groups of 16,384 rows."""
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.table(
        {
            "pos": pa.array(range(len(texts)), pa.int64()),
            "text": pa.array(texts, pa.string()),
            "ts": pa.nulls(len(texts), pa.float64()),
        }
    )
    pq.write_table(table, path, row_group_size=16384)


@click.command()
@click.option("--n", "n", type=int, required=True)
@click.option("--seed", default=0, show_default=True)
@click.option("--templated", "is_templated", is_flag=True, help="One story, n one-word edits.")
@click.option(
    "--remix-min",
    default=0,
    show_default=True,
    help="Remix only texts of at least this many words / characters (30: a duplicate rate "
    "that does not grow with --n).",
)
@click.option("--out", type=click.Path(path_type=Path), required=True)
def main(n: int, seed: int, is_templated: bool, remix_min: int, out: Path) -> None:
    texts = templated(n, seed) if is_templated else synth(n, seed, remix_min=remix_min)
    write(texts, out)
    size = sum(len(t.encode()) for t in texts)
    click.echo(f"{out}: {len(texts):,} documents, {size / 1e6:.1f} MB of text")


if __name__ == "__main__":
    main()
