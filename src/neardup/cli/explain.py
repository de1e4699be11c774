"""``neardup explain A B``: why two texts are (not) near-duplicates."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

import click

from neardup.cli._common import (
    build_fingerprinter,
    fingerprinter_options,
    usage_error,
)
from neardup.cli._decision import Decision, build_deduplicator, decision_options
from neardup.cli.explain_file import (
    explain_document,
    features,
    is_document_file,
    shingle_lists,
    why,
)
from neardup.dedup.core import verify_pairs
from neardup.fingerprint import hamming

if TYPE_CHECKING:
    from neardup.dedup import Deduplicator

EXAMPLES = """
\b
Examples:
  neardup explain "Oil prices rose on Monday" "Oil prices rose on Tuesday"
  neardup explain story_v1.txt story_v2.txt --top 15
  neardup explain a.txt b.txt --no-verify --k 6
  neardup explain a.txt b.txt --json
  neardup explain news.jsonl story-42 --threshold 0.4   # replay dedup's decision for one id
"""


def _text(arg: str) -> str:
    if os.path.isfile(arg):
        try:
            with open(arg, encoding="utf-8") as f:
                return f.read()
        except UnicodeDecodeError:
            raise usage_error(f"{arg!r} is not UTF-8 text") from None
    return arg


def explain_pair(dd: Deduplicator, a: str, b: str, top: int) -> dict[str, Any]:
    """What ``neardup dedup`` decides for B after A with ``dd``'s configuration, and the numbers
    that decided: candidate or not, the verifier's similarity against its threshold, the
    Hamming distance, the heaviest shared / differing features, and the verifier's shingles
    that the two share and that differ most (``shingles``).

    >>> from neardup import Deduplicator
    >>> a, b = "storm hits the coast at night", "storm hits the coast"
    >>> info = explain_pair(Deduplicator(), a, b, 3)
    >>> info["status"], info["duplicate"], info["candidate"]  # a candidate the verifier refuses
    ('unique', False, True)
    """
    decided = dd.replace().run([a, b])  # a fresh Deduplicator: the decision dedup makes
    status = decided.statuses[1]
    chunk = dd.prepare([a, b])
    out: dict[str, Any] = {
        "duplicate": status in ("duplicate", "exact_duplicate"),
        "status": status,
        "config_id": dd.config_id,
        "candidates": dd.state.candidates.get_config(),
    }
    if chunk.empty.any():
        which = " and ".join(n for n, e in zip("AB", chunk.empty.tolist(), strict=True) if e)
        out.update(candidate=False, distance=None, reason=f"{which} has no features (empty)")
        return out
    i, _, _ = dd.state.candidates.pairs(chunk.fps, chunk.sketches)
    out["candidate"] = bool(len(i)) or status == "exact_duplicate"
    out["distance"] = int(hamming(chunk.fps[0], chunk.fps[1]))
    out["k"] = dd.state.decide_config.radius  # the decision core's parameters (dedup/core.py)
    if dd.verifier is not None and chunk.sketches is not None:
        sa, sb = chunk.sketches[:1], chunk.sketches[1:]
        # the estimated Jaccard similarity and the threshold that applied (short texts: the
        # verifier's short_threshold), as dedup writes them
        sim, need = verify_pairs(dd.verifier, sa, sb, float(dd.state.decide_config.threshold or 0))
        out["similarity"], out["threshold"] = round(float(sim[0]), 4), float(need[0])
    out.update(features(dd.fingerprinter, a, b, top))
    if "similarity" in out:  # the verifier's shingles: what its similarity estimates from
        out["shingles"] = shingle_lists(dd.verifier, a, b, top)
    return out


def _why(info: dict[str, Any]) -> list[str]:
    """The deciding numbers, one per line, in the order dedup applies them."""
    if info["distance"] is None:
        return [info["reason"]]
    if info["status"] == "exact_duplicate":
        return ["the same text after normalisation (NFKC, case, spacing): exact path"]
    design = info["candidates"].get("design", "hamming")
    lines = []
    if design == "minhash-bands":
        found = "share" if info["candidate"] else "share no"
        lines.append(f"candidates: they {found} MinHash LSH band key ({design})")
    else:
        ok = "<=" if info["distance"] <= info["k"] else ">"
        lines.append(f"candidates: Hamming distance {info['distance']} {ok} k={info['k']}")
    if "similarity" in info:
        ok = ">=" if info["similarity"] >= info["threshold"] else "<"
        lines.append(
            f"verifier: estimated Jaccard {info['similarity']} {ok} {info['threshold']} "
            "(the threshold that applied)"
        )
    lines.append(f"Hamming distance of the fingerprints: {info['distance']} / 64 bits")
    return lines


@click.command("explain", epilog=EXAMPLES)
@click.argument("a")
@click.argument("b")
@decision_options
@click.option("--text-field", default="text", help="FILE ID: the text field.")
@click.option("--id-field", default="id", help="FILE ID: the id field.")
@click.option(
    "--top",
    type=click.IntRange(1),
    default=10,
    help="Features to list per group.",
)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@fingerprinter_options
def explain_command(
    a: str,
    b: str,
    decision: Decision,
    text_field: str,
    id_field: str,
    top: int,
    as_json: bool,
    config_path: str | None,
    idf_path: str | None,
) -> None:
    """What `neardup dedup` decides for B after A with the same options (texts, or paths of
    UTF-8 files), the numbers that decided it, and the heaviest shared and differing features.

    `explain FILE ID` (a JSONL, CSV or Parquet file of documents and an id) replays what
    `neardup dedup FILE` with the same options wrote for that document: the kept candidates
    the rule considered, their similarities, the cluster floors and the member that refused,
    and the threshold that applied (no --window or --keep: first seen is kept)."""
    dd = build_deduplicator(
        build_fingerprinter(config_path, idf_path),
        decision,
    )
    if is_document_file(a, b):
        _explain_file(explain_document(dd, a, b, text_field, id_field, top), as_json)
        return
    info = explain_pair(dd, _text(a), _text(b), top)
    if as_json:
        click.echo(json.dumps(info, ensure_ascii=False, indent=2))
        return
    verdict = "DUPLICATE" if info["duplicate"] else "NOT a duplicate"
    click.echo(f"{verdict}: dedup decides B is {info['status']} (config {info['config_id']})")
    for line in _why(info):
        click.echo(f"  {line}")
    _feature_lists(info, "A", "B")


def _feature_lists(info: dict[str, Any], a: str, b: str) -> None:
    for title, key in (
        ("shared", "shared"),
        (f"only in {a}", "only_a"),
        (f"only in {b}", "only_b"),
    ):
        items = info.get(key, [])
        click.echo(f"{title}: " + (", ".join(f"{f} ({w:g})" for f, w in items) or "-"))
    got = info.get("shingles")
    if got:  # the verifier's shingles (what its similarity estimates), occurrences in brackets
        click.echo(
            f"verifier {got['shingle_size']}-shingles: {got['shingles_a']} in {a}, "
            f"{got['shingles_b']} in {b}, exact Jaccard {got['jaccard']}"
        )
        for title, key in (
            ("  shared", "shared"),
            (f"  only in {a}", "only_a"),
            (f"  only in {b}", "only_b"),
        ):
            items = got[key]
            click.echo(f"{title}: " + (" | ".join(f"{s} ({c})" for s, c in items) or "-"))


def _explain_file(info: dict[str, Any], as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(info, ensure_ascii=False, indent=2))
        return
    dup = f" of {info['duplicate_of']}" if info["duplicate"] else ""
    sim = "" if info["similarity"] is None else f" at similarity {info['similarity']}"
    click.echo(f"{info['id']}: dedup wrote {info['status']}{dup}{sim} (config {info['config_id']})")
    for line in why(info):
        click.echo(f"  {line}")
    if "compared_with" in info:  # the fingerprint features against the last candidate
        _feature_lists(info, str(info["compared_with"]), str(info["id"]))
