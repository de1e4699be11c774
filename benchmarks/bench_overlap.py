"""Partial-copy benchmark: ``neardup.overlap`` on Clough & Stevenson and on PAN-style sets.

Clough & Stevenson (document level): the 5 source articles are the reference, each of the 95
answers is queried against them; an answer counts as linked when a passage names its task's
source. Reported per class (cut, light, heavy, non).

PAN-style sets (character level, Potthast et al. 2010 measures via ``neardup.eval.pan``):
hosts are 20 Newsgroups posts (English) or People's Daily articles (Chinese); 60 % of them get
one passage of 1-8 sentences from a Reuters article (English) or another People's Daily
article (Chinese), inserted at a sentence boundary, with obfuscation none, light (~5 % word /
character edits) or heavy (~25 % edits and two sentences swapped). Sources and background
documents come before the hosts. The background is cleaned first: documents that share a
passage with another (quoted replies, re-issued wires) are left out, so precision measures
only what the method adds. With ``--raw`` only documents sharing a *long* passage (12 words,
about 20 Han characters: ``CLEAN_RAW``, templates included) are left out: the background keeps
its bylines, datelines, quote headers, signatures and templated wires, as a real collection.
Timing: ``OverlapFinder.find`` vs ``Deduplicator.feed`` on the
same texts, same process.

    flock /tmp/neardup-bench.lock python benchmarks/bench_overlap.py --clough
    flock /tmp/neardup-bench.lock python benchmarks/bench_overlap.py --pan en --hosts 300
    flock /tmp/neardup-bench.lock python benchmarks/bench_overlap.py --pan zh --hosts 300
    python benchmarks/bench_overlap.py --pan en --pan zh --raw --hosts 1000 --background 4000
    python benchmarks/bench_overlap.py --clough-collection --seed 1
    python benchmarks/bench_overlap.py --clough-collection --params '{"sources": "all"}'
    python benchmarks/bench_overlap.py --raw-shares
    neardup overlap reuters21578/docs.jsonl.gz --out rows.jsonl
    python benchmarks/bench_overlap.py --judge rows.jsonl reuters21578/docs.jsonl.gz --seed 3636
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import resource
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from neardup.eval.corpora import corpora_dir
from neardup.eval.pan import pan_scores
from neardup.overlap import OverlapFinder

CORPORA = corpora_dir()
OBFUSCATIONS = ("none", "light", "heavy")
_EN_SENT = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(])")
_ZH_SENT = re.compile(r"(?<=[。！？])")


def _read(rel: str, limit: int | None = None) -> list[dict[str, Any]]:
    out = []
    with gzip.open(CORPORA / rel, "rt", encoding="utf-8") as f:
        for line in f:
            out.append(json.loads(line))
            if limit is not None and len(out) >= limit:
                break
    return out


def clough(params: dict[str, Any]) -> dict[str, Any]:
    """Linked answers per class (document level)."""
    docs = _read("clough_stevenson/docs.jsonl.gz")
    finder = OverlapFinder(**params)
    for d in docs:
        if d["category"] == "orig":
            finder.add(d["text"], d["id"])
    linked: Counter[str] = Counter()
    total: Counter[str] = Counter()
    wrong = 0
    for d in docs:
        if d["category"] == "orig":
            continue
        found = finder.query(d["text"], d["id"])
        total[d["category"]] += 1
        linked[d["category"]] += any(p.source_id == d["source_id"] for p in found)
        wrong += any(p.source_id != d["source_id"] for p in found)
    cl = linked["cut"] + linked["light"]
    return {
        "per_class": {c: f"{linked[c]}/{total[c]}" for c in ("cut", "light", "heavy", "non")},
        "cut+light": f"{cl}/{total['cut'] + total['light']}",
        "linked_to_another_source": wrong,
    }


def clough_collection(params: dict[str, Any], order: str, seed: int) -> dict[str, Any]:
    """Clough & Stevenson as one collection (all 100 texts, no reference) in the corpus's
    ``order``, ``reversed`` or ``shuffled``: an answer is linked when a passage pairs it with
    its task's article as its source or its closest source (``closest_id``), in either
    direction (the article may come after its copies). ``missed``: the copies (cut, light,
    heavy) not linked, by id."""
    docs = _read("clough_stevenson/docs.jsonl.gz")
    if order == "reversed":
        docs = docs[::-1]
    elif order == "shuffled":
        random.Random(seed).shuffle(docs)
    found = OverlapFinder(**params).find([d["text"] for d in docs], [d["id"] for d in docs])
    pairs = {(p.id, p.source_id) for p in found} | {(p.source_id, p.id) for p in found}
    pairs |= {(p.id, p.closest_id) for p in found} | {(p.closest_id, p.id) for p in found}
    linked: Counter[str] = Counter()
    total: Counter[str] = Counter()
    missed: list[str] = []  # the copies not linked to their article, to read
    for d in docs:
        if d["category"] != "orig":
            total[d["category"]] += 1
            hit = (d["id"], d["source_id"]) in pairs
            linked[d["category"]] += hit
            if not hit and d["category"] != "non":
                missed.append(f"{d['id']} ({d['category']})")
    share = {c: round(linked[c] / total[c], 3) for c in ("cut", "light", "heavy", "non")}
    cl = (linked["cut"] + linked["light"]) / (total["cut"] + total["light"])
    out = {"order": order, "linked_share": share, "cut+light": round(cl, 3), "rows": len(found)}
    return {**out, "missed": sorted(missed)}


RAW = {
    "reuters": "reuters21578/docs.jsonl.gz",
    "20news": "20news_bydate/docs.jsonl.gz",
    "peoples_daily": "peoples_daily_199801/articles.jsonl.gz",
}


def raw_shares(params: dict[str, Any]) -> dict[str, Any]:
    """Each raw corpus run whole in input order: documents with a reported passage and
    passage pairs, with the templates kept (before the template rule) and set aside."""
    out = {}
    for name, rel in RAW.items():
        texts = [d["text"] for d in _read(rel)]
        finder = OverlapFinder(**{**params, "templates": "keep"})
        got = list(finder.stream((t, k) for k, t in enumerate(texts)))
        out[name] = {
            "documents": len(texts),
            "with_passage_before": sum(1 for g in got if g),
            "with_passage_after": sum(1 for g in got if any(not p.template for p in g)),
            "pairs_before": sum(len(g) for g in got),
            "pairs_after": sum(1 for g in got for p in g if not p.template),
        }
    return out


def sentences(text: str, zh: bool) -> list[str]:
    """Sentences with their trailing space kept, so joining them gives the text back."""
    if zh:
        return [s for s in _ZH_SENT.split(text) if s]
    out, last = [], 0
    for m in _EN_SENT.finditer(text):
        out.append(text[last : m.end()])
        last = m.end()
    out.append(text[last:])
    return [s for s in out if s]


def _edit(sents: list[str], rate: float, rng: random.Random, zh: bool, vocab: list[str]) -> str:
    """Replace, delete or insert about ``rate`` of the words (characters in Chinese)."""
    out = []
    for s in sents:
        units = list(s) if zh else s.split(" ")
        edited: list[str] = []
        for u in units:
            r = rng.random()
            if r < rate / 3:
                edited.append(rng.choice(vocab))
            elif r < 2 * rate / 3:
                continue
            elif r < rate:
                edited += [u, rng.choice(vocab)]
            else:
                edited.append(u)
        out.append(("" if zh else " ").join(edited))
    return (
        "".join(out)
        if zh
        else "".join(s if s.endswith(" ") else s + " " for s in out).rstrip() + " "
    )


def obfuscate(passage: list[str], how: str, rng: random.Random, zh: bool, vocab: list[str]) -> str:
    """The passage with obfuscation ``how`` applied (see the module docstring)."""
    if how == "none":
        return "".join(passage)
    sents = list(passage)
    if how == "heavy" and len(sents) >= 2:
        i = rng.randrange(len(sents) - 1)
        sents[i], sents[i + 1] = sents[i + 1], sents[i]
    return _edit(sents, 0.05 if how == "light" else 0.25, rng, zh, vocab)


def build_set(
    lang: str,
    hosts_n: int,
    background_n: int,
    seed: int,
    raw: bool = False,
    no_templates: bool = False,
) -> dict[str, Any]:
    """Documents (in order) and cases of one PAN-style set (``no_templates``: the background
    shares no template either, for a measure of what ``--strip`` cuts with templates)."""
    rng = random.Random(seed)
    zh = lang == "zh"
    if zh:
        pool = [d for d in _read("peoples_daily_199801/articles.jsonl.gz") if len(d["text"]) > 300]
        rng.shuffle(pool)
        hosts, sources = pool[:hosts_n], pool[hosts_n : hosts_n + background_n]
    else:
        hosts_all = [d for d in _read("20news_bydate/docs.jsonl.gz") if 400 < len(d["text"]) < 6000]
        rng.shuffle(hosts_all)
        hosts = hosts_all[:hosts_n]
        reuters = [d for d in _read("reuters21578/docs.jsonl.gz") if len(d["text"]) > 600]
        rng.shuffle(reuters)
        sources = reuters[:background_n]
    background = _clean(sources + hosts, zh, raw, no_templates)
    sources = [d for d in sources if d["id"] in background]
    hosts = [d for d in hosts if d["id"] in background]
    vocab = sorted(
        {
            c
            for d in sources[:200]
            for c in (d["text"] if zh else d["text"].split())
            if (c.strip() and ("\u4e00" <= c <= "\u9fff" if zh else c.isalpha()))
        }
    )
    docs = [{"id": d["id"], "text": d["text"]} for d in sources]
    cases: list[dict[str, Any]] = []
    kinds: dict[str, str] = {}
    free = list(range(len(sources)))
    rng.shuffle(free)
    for n, h in enumerate(hosts):
        how = "untouched" if n % 5 < 2 else OBFUSCATIONS[n % 3]
        kinds[h["id"]] = how
        if how == "untouched":
            docs.append({"id": h["id"], "text": h["text"]})
            continue
        src = sources[free.pop()]
        ss = sentences(src["text"], zh)
        k = rng.randint(1, min(8, len(ss)))
        i = rng.randrange(len(ss) - k + 1)
        start = sum(len(s) for s in ss[:i])
        src_span = [start, start + len("".join(ss[i : i + k]).rstrip())]
        piece = obfuscate(ss[i : i + k], how, rng, zh, vocab).rstrip()
        hs = sentences(h["text"], zh)
        j = rng.randrange(len(hs) + 1)
        before = "".join(hs[:j])
        sep = "" if zh or not before or before.endswith((" ", "\n")) else " "
        text = before + sep + piece + ("" if zh else " ") + "".join(hs[j:])
        at = len(before) + len(sep)
        docs.append({"id": h["id"], "text": text})
        cases.append(
            {
                "id": h["id"],
                "span": [at, at + len(piece)],
                "source_id": src["id"],
                "source_span": src_span,
                "obfuscation": how,
            }
        )
    return {"docs": docs, "cases": cases, "kinds": kinds}


# The background is cleaned with a finder more sensitive than any setting measured, and the
# same one for every setting, so that all settings are scored on the same documents: it looks
# up every gram (query_window 1), so the sets do not change with the default's look-ups.
CLEAN = {"ngram": 4, "min_length": 8, "query_window": 1}
# --raw: only documents sharing 12 words (13 word units: 20 Han characters) are left out,
# templates or not (the templates stay in the background, as in a real collection)
CLEAN_RAW = {"ngram": 4, "query_window": 1, "templates": "keep"}


def _clean(
    docs: list[dict[str, Any]], zh: bool, raw: bool = False, no_templates: bool = False
) -> set[str]:
    """Ids of the documents that share no passage with another (the ``CLEAN`` finder; with
    ``raw`` no long passage, ``CLEAN_RAW``; with ``no_templates`` no template either)."""
    params = {**CLEAN_RAW, "min_length": 13 if zh else 12} if raw else CLEAN
    if no_templates:
        params = {**params, "templates": "keep"}
    finder = OverlapFinder(**params)
    found = finder.find([d["text"] for d in docs], ids=[d["id"] for d in docs])
    dirty = {p.id for p in found} | {p.source_id for p in found}
    return {d["id"] for d in docs} - dirty


def pan(
    lang: str,
    hosts_n: int,
    background_n: int,
    seed: int,
    params: dict[str, Any],
    raw: bool = False,
) -> dict[str, Any]:
    """PAN measures per obfuscation, untouched hosts reported, and the cost vs dedup."""
    data = build_set(lang, hosts_n, background_n, seed, raw)
    texts = [d["text"] for d in data["docs"]]
    ids = [d["id"] for d in data["docs"]]
    t_over, found = _timed(lambda: OverlapFinder(**params).find(texts, ids=ids))
    t_dedup, _ = _timed(lambda: _dedup(texts, ids))
    dets = [p.to_dict() for p in found]
    # the two spans of a passage cover corresponding text: shorter / longer side, per passage
    ratios = sorted(
        min(p.span[1] - p.span[0], p.source_span[1] - p.source_span[0])
        / max(p.span[1] - p.span[0], p.source_span[1] - p.source_span[0], 1)
        for p in found
    )
    kinds = data["kinds"]
    out: dict[str, Any] = {"docs": len(texts), "hosts": len(kinds), "cases": len(data["cases"])}
    for how in OBFUSCATIONS:
        cs = [c for c in data["cases"] if c["obfuscation"] == how]
        ds = [d for d in dets if kinds.get(d["id"]) == how]
        out[how] = {
            k: round(v, 4) if isinstance(v, float) else v
            for k, v in pan_scores(cs, ds).as_dict().items()
        }
    untouched = [h for h, k in kinds.items() if k == "untouched"]
    reported = {d["id"] for d in dets}
    out["untouched_reported"] = f"{sum(h in reported for h in untouched)}/{len(untouched)}"
    out["false_detections_outside_hosts"] = sum(1 for d in dets if d["id"] not in kinds)
    if ratios:
        out["span_ratio_p5_p50"] = [
            round(ratios[len(ratios) // 20], 3),
            round(ratios[len(ratios) // 2], 3),
        ]
    out["seconds_overlap"] = round(t_over, 2)
    out["seconds_dedup"] = round(t_dedup, 2)
    out["cost_ratio"] = round(t_over / t_dedup, 2)
    return out


def _dedup(texts: list[str], ids: list[str]) -> Any:
    from neardup import Deduplicator

    return Deduplicator().feed(texts, ids=ids)


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    value = fn()
    return time.perf_counter() - t0, value


def judge_sample(rows_path: str, corpus: str, seed: int, n: int) -> list[dict[str, Any]]:
    """``random.Random(seed).sample`` of ``n`` rows of ``neardup overlap`` output (JSONL at
    ``rows_path``) with the text of both passages, from ``corpus`` (the input, JSONL with
    ``id`` and ``text``, gzip or not): the rows to judge by hand (copied / template / other,
    docs/OVERLAP.md). ``k`` is the row's place in the sample."""
    with open(rows_path, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    sample = random.Random(seed).sample(rows, min(n, len(rows)))
    wanted = {r["id"] for r in sample} | {r["source_id"] for r in sample}
    opener = gzip.open if corpus.endswith(".gz") else open
    texts: dict[Any, str] = {}
    with opener(corpus, "rt", encoding="utf-8") as f:
        for line in f:
            doc = json.loads(line)
            if doc["id"] in wanted:
                texts[doc["id"]] = doc["text"]
    return [
        {
            "k": k,
            "id": r["id"],
            "source_id": r["source_id"],
            "score": r["score"],
            "query": texts[r["id"]][slice(*r["span"])],
            "source": texts[r["source_id"]][slice(*r["source_span"])],
        }
        for k, r in enumerate(sample)
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clough", action="store_true")
    ap.add_argument("--raw-shares", action="store_true", help="Reuters, 20NG, People's Daily")
    ap.add_argument(
        "--clough-collection",
        action="store_true",
        help="Clough & Stevenson as one collection, in corpus, reversed and shuffled order",
    )
    ap.add_argument("--pan", choices=["en", "zh"], action="append", default=[])
    ap.add_argument("--hosts", type=int, default=300)
    ap.add_argument("--background", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--params", default="{}", help="OverlapFinder parameters as JSON")
    ap.add_argument("--raw", action="store_true", help="keep the background's templates")
    ap.add_argument(
        "--judge",
        nargs=2,
        metavar=("ROWS", "CORPUS"),
        help="print --n rows of ROWS drawn with --seed, both passages' text, to judge by hand",
    )
    ap.add_argument("--n", type=int, default=50, help="rows drawn by --judge")
    args = ap.parse_args()
    if args.judge:
        for row in judge_sample(*args.judge, args.seed, args.n):
            print(json.dumps(row, ensure_ascii=False))
        return
    params = json.loads(args.params)
    report: dict[str, Any] = {
        "params": params,
        "load": Path("/proc/loadavg").read_text().split()[:3],
    }
    if args.clough:
        report["clough"] = clough(params)
    if args.raw_shares:
        report["raw_shares"] = raw_shares(params)
    if args.clough_collection:
        report["clough_collection"] = [
            clough_collection(params, order, args.seed)
            for order in ("corpus", "reversed", "shuffled")
        ]
    for lang in args.pan:
        report[f"pan_{lang}"] = pan(lang, args.hosts, args.background, args.seed, params, args.raw)
    report["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    print(json.dumps(report, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
