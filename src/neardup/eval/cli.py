"""``neardup eval``: measure accuracy on a named corpus or on your own labelled pairs.

Examples::

    neardup eval --corpus reuters                       # defaults vs baselines
    neardup eval --corpus shopping --method neardup --method minhash-lsh
    neardup eval --pairs labelled.jsonl                 # {"a": ..., "b": ..., "label": 0/1}
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
import numpy as np
import numpy.typing as npt

from neardup.cli._common import input_files
from neardup.eval.harness import (
    DEFAULT_CANDIDATE_K,
    DEFAULT_FINGERPRINTER,
    DEFAULT_VERIFIER,
    METHODS,
    product_params,
    run_method,
)
from neardup.io.readers import text_lines

__all__ = [
    "eval_command",
    "labelled_pairs_report",
    "product_pair_decisions",
    "read_labelled_pairs",
]


def read_labelled_pairs(path: str | Path) -> tuple[list[str], list[str], npt.NDArray[np.bool_]]:
    """Read JSONL lines ``{"a": text, "b": text, "label": 0|1}``; errors name the line."""
    a: list[str] = []
    b: list[str] = []
    labels: list[bool] = []
    for where, line in text_lines(path):
        try:
            rec = json.loads(line)
            ta, tb, lab = rec["a"], rec["b"], rec["label"]
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise click.UsageError(
                f"{where}: expected a JSON object with keys a, b, label ({exc})"
            ) from exc
        if not isinstance(ta, str) or not isinstance(tb, str) or lab not in (0, 1, True, False):
            raise click.UsageError(f"{where}: a and b must be strings and label 0 or 1")
        a.append(ta)
        b.append(tb)
        labels.append(bool(lab))
    if not labels:
        raise click.UsageError(f"{path}: no labelled pairs found")
    return a, b, np.array(labels, dtype=bool)


def _prf(pred: npt.NDArray[np.bool_], truth: npt.NDArray[np.bool_]) -> dict[str, float]:
    tp = int((pred & truth).sum())
    p = tp / int(pred.sum()) if pred.any() else 1.0
    r = tp / int(truth.sum()) if truth.any() else 1.0
    return {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0}


def product_pair_decisions(a: Sequence[str], b: Sequence[str]) -> npt.NDArray[np.bool_]:
    """The product's decision on each pair: ``Deduplicator()`` (eval's configuration) keeps
    ``a[i]`` and decides ``b[i]`` against it (a dry run, ``commit=False``, so pairs do not
    see each other); a duplicate or exact duplicate is True.

    >>> product_pair_decisions(["storm hits the coast", "a b"], ["STORM hits the coast", ""])
    array([ True, False])
    """
    from neardup.dedup import Deduplicator

    dd = Deduplicator(**product_params())
    found = ("duplicate", "exact_duplicate")
    return np.array(
        [dd.feed([x, y], commit=False).statuses[1] in found for x, y in zip(a, b, strict=True)],
        dtype=bool,
    )


def labelled_pairs_report(
    a: Sequence[str], b: Sequence[str], truth: npt.NDArray[np.bool_]
) -> dict[str, Any]:
    """P/R/F1 of the product's decisions on labelled pairs, and the k that maximises F1.

    ``default``: the product's decisions (:func:`product_pair_decisions`, ``Deduplicator()``
    whose ``config_id`` is given). The suggestions are a method sweep of the same fingerprints
    and verifier: a pair is a duplicate when the Hamming distance is <= k (and, verified, the
    verifier confirms); ``candidate_k`` is the library's radius when ``k`` is passed. Texts
    without features are never duplicates.
    """
    from neardup.dedup import Deduplicator
    from neardup.fingerprint import Fingerprinter, hamming

    fp = Fingerprinter(**DEFAULT_FINGERPRINTER)
    fa, ea = fp.fingerprint_many(list(a), return_mask=True)
    fb, eb = fp.fingerprint_many(list(b), return_mask=True)
    dist = np.asarray(hamming(fa, fb), dtype=np.int64)
    sim = DEFAULT_VERIFIER.similarity(
        DEFAULT_VERIFIER.sketch_many(a), DEFAULT_VERIFIER.sketch_many(b)
    )
    valid = ~(np.asarray(ea) | np.asarray(eb))
    confirmed = sim >= DEFAULT_VERIFIER.threshold

    def plain(k: int) -> npt.NDArray[np.bool_]:
        out: npt.NDArray[np.bool_] = valid & (dist <= k)
        return out

    default = _prf(product_pair_decisions(a, b), truth)
    bits = int(DEFAULT_FINGERPRINTER.get("bits", 64))
    best_f1, neg_k = max((_prf(plain(k), truth)["f1"], -k) for k in range(bits // 2 + 1))
    verified = [(_prf(plain(ck) & confirmed, truth)["f1"], -ck) for ck in range(bits // 2 + 1)]
    best_vf1, neg_ck = max(verified)
    return {
        "pairs": len(truth),
        "positives": int(truth.sum()),
        "default": default,
        "config_id": Deduplicator(**product_params()).config_id,
        "candidate_k": DEFAULT_CANDIDATE_K,
        "threshold": DEFAULT_VERIFIER.threshold,
        "suggested_k_unverified": -neg_k,
        "f1_at_suggested_k": best_f1,
        "suggested_candidate_k": -neg_ck,
        "f1_at_suggested_candidate_k": best_vf1,
    }


@click.command("eval")
@click.option(
    "--corpus", help="Named corpus: reuters, shopping, 20news, peoples_daily, clough, ..."
)
@click.option(
    "--pairs",
    "pairs_path",
    callback=input_files,
    help='JSONL of labelled pairs: {"a": text, "b": text, "label": 0/1}.',
)
@click.option(
    "--method",
    "methods",
    multiple=True,
    help=f"Method(s) to run on --corpus (default: all of {', '.join(METHODS)}).",
)
@click.option(
    "--limit",
    type=int,
    default=-1,
    show_default=False,  # -1 means the corpus's own default: said in the help
    help="Documents to load (default: corpus default).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.option(
    "--overlap",
    "overlap_paths",
    nargs=2,
    callback=input_files,
    default=None,
    metavar="CASES DETECTIONS",
    help="Score `neardup overlap` output (DETECTIONS) against labelled passage pairs (CASES: "
    "JSONL with id, span, source_id, source_span) with the PAN measures.",
)
def eval_command(
    corpus: str | None,
    pairs_path: str | None,
    methods: tuple[str, ...],
    limit: int,
    as_json: bool,
    overlap_paths: tuple[str, str] | None,
) -> None:
    """Measure precision, recall, F1 (and ARI) against shingle-Jaccard ground truth.

    Named corpora are gzipped JSONL files read from $NEARDUP_CORPORA (else
    ../shared/corpora beside the project); a corpus of your own is any JSONL with id and
    text: point NEARDUP_CORPORA at its folder. The baselines pypi-simhash and minhash-lsh need
    the anchor libraries (pip install 'neardup[bench]'); without them a default run skips
    them with a note.

    \b
    Examples:
      neardup eval --corpus reuters
      neardup eval --corpus reuters --method neardup --method minhash-lsh
      neardup eval --pairs my_labelled_pairs.jsonl
      neardup eval --overlap cases.jsonl passages.jsonl
    """
    if sum(x is not None for x in (corpus, pairs_path, overlap_paths)) != 1:
        raise click.UsageError(
            "give exactly one of --corpus NAME, --pairs FILE or --overlap CASES DETECTIONS"
        )
    if overlap_paths is not None:
        _score_overlap(*overlap_paths, as_json=as_json)
        return
    if pairs_path is not None:
        a, b, truth = read_labelled_pairs(pairs_path)
        report = labelled_pairs_report(a, b, truth)
        if as_json:
            click.echo(json.dumps(report, indent=2))
            return
        d = report["default"]
        click.echo(
            f"{report['pairs']} pairs ({report['positives']} duplicates); default: the "
            f"product's decisions (Deduplicator(), config {report['config_id']})"
        )
        click.echo(f"precision {d['precision']:.4f}  recall {d['recall']:.4f}  F1 {d['f1']:.4f}")
        click.echo(
            f"suggested candidate_k (verified): {report['suggested_candidate_k']} "
            f"(F1 {report['f1_at_suggested_candidate_k']:.4f}); suggested k without "
            f"verification: {report['suggested_k_unverified']} "
            f"(F1 {report['f1_at_suggested_k']:.4f})"
        )
        return
    _run_corpus(str(corpus), methods or tuple(METHODS), limit, as_json, asked=bool(methods))


def _score_overlap(cases: str, detections: str, *, as_json: bool) -> None:
    """PAN measures of ``detections`` against ``cases`` (bad rows: exit 1, naming the line)."""
    from neardup.eval.pan import pan_scores, read_alignments

    try:
        scores = pan_scores(read_alignments(cases), read_alignments(detections))
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        click.echo(json.dumps(scores.as_dict(), indent=2))
        return
    click.echo(
        f"plagdet {scores.plagdet:.4f}  precision {scores.precision:.4f}  recall "
        f"{scores.recall:.4f}  granularity {scores.granularity:.4f}  ({scores.cases} cases, "
        f"{scores.detections} detections, {scores.detected_cases} detected)"
    )


def _run_corpus(
    corpus: str, methods: tuple[str, ...], limit: int, as_json: bool, *, asked: bool
) -> None:
    from neardup.eval.corpora import CorpusNotFoundError, load_corpus
    from neardup.eval.groundtruth import GroundTruth

    bad = [m for m in methods if m not in METHODS]
    if bad:
        raise click.UsageError(f"unknown method {bad[0]!r}; choose from {', '.join(METHODS)}")
    try:
        _, texts = load_corpus(corpus, limit)
    except (CorpusNotFoundError, ValueError) as exc:
        raise click.UsageError(str(exc)) from exc
    gt = GroundTruth.from_texts(texts)
    rows: list[dict[str, Any]] = []
    for name in methods:
        try:
            r = run_method(name, texts, gt)
        except ImportError as exc:  # an anchor library of the bench extra is missing
            if asked:
                raise click.UsageError(str(exc)) from None
            rows.append({"method": name, "skipped": str(exc)})
            if not as_json:
                click.echo(f"{name:20s} skipped: {exc}")
            continue
        rows.append(
            {"method": name, "seconds": round(r.seconds, 2), "note": r.note, **r.scores.as_dict()}
        )
        if not as_json:
            s = r.scores
            click.echo(
                f"{name:20s} P {s.precision:.4f}  R {s.recall:.4f}  F1 {s.f1:.4f}  "
                f"ARI {s.ari:.4f}  {r.seconds:6.1f}s",
                file=sys.stdout,
            )
    if as_json:
        click.echo(json.dumps({"corpus": corpus, "docs": len(texts), "results": rows}, indent=2))
