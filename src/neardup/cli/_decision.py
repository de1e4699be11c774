"""The decision options of ``dedup``, ``serve`` and ``explain`` (``--k``, ``--no-verify``,
``--threshold``, ``--shingle-size``, ``--cluster-similarity``), declared once, and the
:class:`~neardup.Deduplicator` they name."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import click

from neardup.cli._common import F, usage_error

if TYPE_CHECKING:
    from neardup.dedup import Deduplicator
    from neardup.fingerprint import Fingerprinter


#: the decision options in ``--help`` order: (flag, click.option keywords); the command gets
#: them as one :class:`Decision`, fields in this order
_DECISION_OPTIONS: tuple[tuple[str, dict[str, Any]], ...] = (
    (
        "--k",
        {
            "type": click.IntRange(0, 63),
            "help": "Maximum Hamming distance of a duplicate, searched exactly. Default: no "
            "limit, candidates share a MinHash LSH band and the verifier decides (constant "
            "cost per document); 8 with --no-verify.",
        },
    ),
    (
        "--no-verify",
        {"is_flag": True, "help": "Decide by Hamming distance alone (faster, less accurate)."},
    ),
    (
        "--threshold",
        {
            "type": click.FloatRange(0.0, 1.0),
            "help": "Two documents are duplicates when the Jaccard similarity of their shingle "
            "sets (word N-shingles, or character N-grams for Chinese, N = --shingle-size, "
            "default 4; NFKC, letters and digits), estimated from 192 MinHash values, is at "
            "least this. Default 0.6 (0.8 when a text is under 50 characters).",
        },
    ),
    (
        "--shingle-size",
        {
            "type": click.IntRange(1, 8),
            "help": "Shingle size of --threshold's similarity: word N-shingles, or character "
            "N-grams for Chinese. Default 4. 2 with --threshold 0.64 finds copies with ~10 % "
            "of their words edited (docs/ACCURACY.md); below 3, the LSH bands use 3-shingles.",
        },
    ),
    (
        "--cluster-similarity",
        {
            "callback": lambda ctx, param, value: _cluster_similarity(value),
            "metavar": "FLOAT|none",
            "help": "Every two documents of one cluster are at least this similar (bounded "
            "through their kept document); a document that would loosen a cluster joins its "
            "next candidate, or is kept. Default 0.25 (--threshold when lower); none: star "
            "clusters, as states of format 1 and 2 and older --data directories had.",
        },
    ),
    (
        "--preset",
        {
            "type": click.Choice(["edited"]),
            "help": "A named setting instead of --threshold / --shingle-size: edited = "
            "--shingle-size 2 --threshold 0.64 (copies with ~10 % of their words edited; the "
            "library's Deduplicator(preset='edited'), the same config id).",
        },
    ),
)


def decision_options(func: F) -> F:
    """``--k``, ``--no-verify``, ``--threshold``, ``--shingle-size``,
    ``--cluster-similarity`` and ``--preset``: how dedup decides (``dedup``, ``serve`` and
    ``explain`` offer the same knobs, so that they decide alike). The command receives them as
    one ``decision``."""
    body = func
    names = [flag[2:].replace("-", "_") for flag, _ in _DECISION_OPTIONS]

    @functools.wraps(body)
    def command(*args: Any, **kwargs: Any) -> Any:
        decision = Decision(*(kwargs.pop(name) for name in names))
        return body(*args, decision=decision, **kwargs)

    func = cast(F, command)
    for flag, options in reversed(_DECISION_OPTIONS):
        func = click.option(flag, **options)(func)
    return func


def _cluster_similarity(value: str | None) -> float | str | None:
    """``--cluster-similarity``: a number in [0, 1], or ``none``."""
    if value is None or value == "none":
        return value
    try:
        x = float(value)
    except ValueError:
        x = -1.0
    if not 0.0 <= x <= 1.0:
        raise click.BadParameter(f"{value!r} is not a number in [0, 1] or 'none'")
    return x


@dataclass(frozen=True)
class Decision:
    """The decision options as given: ``--k``, ``--no-verify``, ``--threshold``,
    ``--shingle-size``."""

    k: int | None = None
    no_verify: bool = False
    threshold: float | None = None
    shingle_size: int | None = None
    cluster_similarity: float | str | None = None  # None: the library's "auto"
    preset: str | None = None

    def verifier(self) -> Any:
        """The verifier these options name: ``"default"``, None, or a MinHashVerifier."""
        if self.no_verify:
            if self.threshold is not None or self.shingle_size is not None:
                raise usage_error(
                    "--threshold and --shingle-size set the verifier's similarity; "
                    "--no-verify turns the verifier off: drop one of them"
                )
            if isinstance(self.cluster_similarity, float):
                raise usage_error(
                    "--cluster-similarity bounds the verifier's similarity; --no-verify turns "
                    "the verifier off: drop one of them"
                )
            return None
        if self.shingle_size is None:
            return "default"
        from neardup.verify import MinHashVerifier

        return MinHashVerifier(ngram=self.shingle_size)  # its band rule: band_ngram_


def build_deduplicator(
    fingerprinter: Fingerprinter, decision: Decision, **options: Any
) -> Deduplicator:
    """The Deduplicator of the decision options (and ``options``); a refused combination is a
    usage error."""
    from neardup.dedup import Deduplicator

    verifier = decision.verifier()
    tight: Any = decision.cluster_similarity
    try:
        return Deduplicator(
            fingerprinter=fingerprinter,
            k=decision.k,
            verifier=verifier,
            threshold=decision.threshold,
            cluster_similarity="auto" if tight is None else None if tight == "none" else tight,
            preset=decision.preset,
            **options,
        )
    except (TypeError, ValueError) as exc:
        raise usage_error(str(exc)) from None
