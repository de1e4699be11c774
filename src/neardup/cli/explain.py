"""``neardup explain A B``: why two texts are (not) near-duplicates."""

from __future__ import annotations

import json
import os

import click

from neardup.cli._common import build_fingerprinter, fingerprinter_options, usage_error
from neardup.fingerprint import EmptyTextError, hamming

EXAMPLES = """
\b
Examples:
  neardup explain "Oil prices rose on Monday" "Oil prices rose on Tuesday"
  neardup explain story_v1.txt story_v2.txt --k 3 --top 15
  neardup explain a.txt b.txt --json
"""


def _text(arg: str) -> str:
    if os.path.isfile(arg):
        try:
            with open(arg, encoding="utf-8") as f:
                return f.read()
        except UnicodeDecodeError:
            raise usage_error(f"{arg!r} is not UTF-8 text") from None
    return arg


def explain_pair(fp: object, a: str, b: str, k: int, top: int) -> dict[str, object]:
    """Distance, verdict and top shared / only-in-A / only-in-B features by weight."""
    from neardup.fingerprint import Fingerprinter

    assert isinstance(fp, Fingerprinter)
    fa, fb = fp.features(a), fp.features(b)
    out: dict[str, object] = {
        "config_id": fp.config_id,
        "k": k,
        "features_a": len(fa),
        "features_b": len(fb),
    }
    try:
        da, db = fp.fingerprint(a), fp.fingerprint(b)
    except EmptyTextError as exc:
        out.update(distance=None, duplicate=False, reason=str(exc))
        return out
    d = int(hamming(da, db))
    total = sum(fa.values()) + sum(fb.values())
    shared = sum(min(fa[f], fb[f]) for f in fa.keys() & fb.keys())

    def ranked(feats: dict[str, float], keys: set[str]) -> list[tuple[str, float]]:
        return sorted(((f, round(feats[f], 4)) for f in keys), key=lambda x: (-x[1], x[0]))[:top]

    out.update(
        distance=d,
        duplicate=d <= k,
        bits=fp.bits,
        weighted_overlap=round(2 * shared / total, 4) if total else 0.0,
        shared=ranked(fa, fa.keys() & fb.keys()),
        only_a=ranked(fa, fa.keys() - fb.keys()),
        only_b=ranked(fb, fb.keys() - fa.keys()),
    )
    return out


@click.command("explain", epilog=EXAMPLES)
@click.argument("a")
@click.argument("b")
@click.option("--k", "k", type=click.IntRange(0, 128), default=3, show_default=True)
@click.option(
    "--top",
    type=click.IntRange(1),
    default=10,
    show_default=True,
    help="Features to list per group.",
)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@fingerprinter_options
def explain_command(
    a: str, b: str, k: int, top: int, as_json: bool, config_path: str | None, idf_path: str | None
) -> None:
    """Compare A and B (texts, or paths of UTF-8 files): Hamming distance, verdict at --k,
    and the heaviest shared and differing features."""
    fp = build_fingerprinter(config_path, idf_path)
    info = explain_pair(fp, _text(a), _text(b), k, top)
    if as_json:
        click.echo(json.dumps(info, ensure_ascii=False, indent=2))
        return
    if info["distance"] is None:
        click.echo(f"not comparable: {info['reason']}")
        return
    verdict = "DUPLICATES" if info["duplicate"] else "not duplicates"
    click.echo(
        f"distance {info['distance']} / {info['bits']} bits -> {verdict} at k={k} "
        f"(weighted feature overlap {info['weighted_overlap']})"
    )
    for title, key in (("shared", "shared"), ("only in A", "only_a"), ("only in B", "only_b")):
        items = info[key]
        assert isinstance(items, list)
        click.echo(f"{title}: " + (", ".join(f"{f} ({w:g})" for f, w in items) or "-"))
