"""``neardup overlap --strip`` on the planted PAN-style sets of ``bench_overlap.py`` (its
builders): of the characters removed, the share that was planted copy (precision); of the
planted characters, the share removed (recall); per obfuscation and overall, at the product's
default settings (copies cut, templates kept). ``--strip-templates``: that measure again with
``--strip-templates`` too (``pan_<lang>_strip_templates``); the templates it cuts are not
planted copy, so they count as wrong cuts: the planted truth has no labels for templates, and
the measure does not guess which are right. The cost: ``neardup overlap`` with and without
``--strip`` on the same set (timed in-process; noisy on a loaded machine).

    python benchmarks/bench_strip.py --pan en --pan zh
    python benchmarks/bench_strip.py --pan en --seed 2 --strip-min-length 40
    python benchmarks/bench_strip.py --pan en --pan zh --seed 5 --strip-templates  # both
    python benchmarks/bench_strip.py --pan en --pan zh --seed 5 --no-templates  # see README
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from bench_overlap import OBFUSCATIONS, build_set
from neardup.cli import cli


def _run(set_path: Path, out: Path, *extra: str) -> float:
    t0 = time.perf_counter()
    res = CliRunner().invoke(cli, ["overlap", str(set_path), "--out", str(out), *extra])
    if res.exit_code != 0:
        raise SystemExit(res.output)
    return time.perf_counter() - t0


def _mask(original: str, cleaned: str, spans: list[list[int]]) -> list[bool]:
    """Which characters of ``original`` the cleaned text lost (the --out spans, merged, say
    where; checked against the cleaned text)."""
    gone = [False] * len(original)
    for a, b in spans:
        gone[a:b] = [True] * (b - a)
    kept = "".join(c for c, g in zip(original, gone, strict=True) if not g)
    if kept != cleaned:  # --strip-min-length left some in: find them by alignment
        gone = _align(original, cleaned)
    return gone


def _align(original: str, cleaned: str) -> list[bool]:
    """The removed characters when ``cleaned`` is ``original`` less some stretches (greedy:
    the stretches removed are whole runs, so a left-to-right match is exact enough)."""
    from difflib import SequenceMatcher

    gone = [True] * len(original)
    for block in SequenceMatcher(None, original, cleaned, autojunk=False).get_matching_blocks():
        gone[block.a : block.a + block.size] = [False] * block.size
    return gone


def score(data: dict[str, Any], extra: list[str]) -> dict[str, Any]:
    """The measure on one built set (``data``), ``--strip`` run with the flags ``extra``."""
    docs = data["docs"]
    with tempfile.TemporaryDirectory() as tmp:
        src, out, clean = Path(tmp, "set.jsonl"), Path(tmp, "out.jsonl"), Path(tmp, "clean.jsonl")
        src.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs), "utf-8")
        seconds_overlap = _run(src, out)
        seconds_strip = _run(src, out, "--strip", str(clean), *extra)
        rows = [json.loads(line) for line in out.open("rb")]
        stripped = list(map(json.loads, clean.open("rb")))
    cleaned = {r["id"]: r["text"] for r in stripped}
    spans: dict[str, list[list[int]]] = {}
    for r in rows:
        spans.setdefault(r["id"], []).append(r["span"])
    planted = {c["id"]: c for c in data["cases"]}
    tally = {how: [0, 0, 0, 0] for how in (*OBFUSCATIONS, "untouched", "other")}
    for d in docs:  # [removed, removed and planted, planted, -]
        gone = _mask(d["text"], cleaned[d["id"]], spans.get(d["id"], []))
        case = planted.get(d["id"])
        a, b = case["span"] if case else (0, 0)
        how = case["obfuscation"] if case else data["kinds"].get(d["id"], "other")
        t = tally[how]
        t[0] += sum(gone)
        t[1] += sum(gone[a:b])
        t[2] += b - a
    out_: dict[str, Any] = {"docs": len(docs), "cases": len(planted)}
    # the characters cut as the collection's templates (not planted: against precision)
    out_["template_chars"] = sum(r.get("stripped_template_chars", 0) for r in stripped)
    for how, (removed, hit, total, _) in tally.items():
        out_[how] = {"removed": removed, "planted": total, "hit": hit}
    removed = sum(t[0] for t in tally.values())
    hit = sum(t[1] for t in tally.values())
    total = sum(t[2] for t in tally.values())
    out_["precision"] = round(hit / removed, 4) if removed else 1.0
    out_["recall"] = round(hit / total, 4) if total else 1.0
    for how in OBFUSCATIONS:
        t = tally[how]
        out_[how]["recall"] = round(t[1] / t[2], 4) if t[2] else None
    out_["seconds_overlap"] = round(seconds_overlap, 2)
    out_["seconds_overlap_strip"] = round(seconds_strip, 2)
    return out_


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pan", choices=["en", "zh"], action="append", default=[])
    ap.add_argument("--hosts", type=int, default=300)
    ap.add_argument("--background", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--strip-min-length", type=int, default=None)
    ap.add_argument(
        "--strip-templates",
        action="store_true",
        help="also measure --strip --strip-templates (templates cut count as wrong cuts)",
    )
    ap.add_argument(
        "--no-templates",
        action="store_true",
        help="the background shares no template either (templates count as shared passages "
        "when the set is cleaned), so a template cut outside the plants is an error",
    )
    args = ap.parse_args()
    extra = (
        [] if args.strip_min_length is None else ["--strip-min-length", str(args.strip_min_length)]
    )
    report: dict[str, Any] = {"load": Path("/proc/loadavg").read_text().split()[:3]}
    for lang in args.pan or ["en", "zh"]:
        data = build_set(
            lang, args.hosts, args.background, args.seed, no_templates=args.no_templates
        )
        report[f"pan_{lang}"] = score(data, extra)
        if args.strip_templates:
            report[f"pan_{lang}_strip_templates"] = score(data, [*extra, "--strip-templates"])
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
