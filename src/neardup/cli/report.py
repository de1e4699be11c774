"""``--report DIR``: a Markdown report with PNG plots (matplotlib, Agg backend)."""

from __future__ import annotations

import os
from typing import Any

import click
import numpy as np

from neardup._atomic import atomic_write
from neardup._extras import MissingExtraError, require
from neardup.dedup import Decisions
from neardup.dedup.clusters import run_cluster_sizes
from neardup.dedup.core import DecideConfig
from neardup.io import ReadStats


def check_report_extra(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
    """``--report`` callback: fail before any work when matplotlib (``neardup[report]``) is
    missing, in one line naming the extra."""
    if value is not None:
        try:
            require("matplotlib", "report", "--report")
        except MissingExtraError as exc:
            raise click.UsageError(str(exc)) from None
    return value


def _deciding_plot(ax: Any, d: Decisions, threshold: float | None, radius: int | None) -> str:
    """The value that decided each near duplicate: the verifier's similarity with its
    threshold marked, or (plain SimHash) the Hamming distance with the radius marked."""
    near = d.status == 1  # near duplicates (exact ones are all at similarity 1, distance 0)
    sim = d.similarity[near]
    if threshold is not None and sim.size and not np.isnan(sim).all():
        sim = sim[~np.isnan(sim)]
        lo = min(threshold, float(sim.min())) if sim.size else threshold
        bins = np.linspace(np.floor(lo * 20) / 20, 1.0, 21)
        ax.hist(sim, bins=bins, color="#4477aa", edgecolor="white")
        ax.axvline(threshold, color="#cc3311", linestyle="--", label=f"threshold {threshold:g}")
        ax.legend(loc="upper left")
        ax.set(
            xlabel="similarity to the kept document (the value that decided)",
            title=f"Similarity of near duplicates (n={sim.size:,}; exact duplicates excluded)",
        )
        return "similarity_histogram.png"
    dist = d.distance[near]
    top = max(int(dist.max()) if dist.size else 3, radius or 0)
    ax.hist(dist, bins=[i - 0.5 for i in range(top + 2)], color="#4477aa", edgecolor="white")
    if radius is not None:
        ax.axvline(radius + 0.5, color="#cc3311", linestyle="--", label=f"radius k={radius}")
        ax.legend(loc="upper left")
    ax.set(
        xlabel="Hamming distance to the kept document (the value that decided)",
        title=f"Distances of near duplicates (n={dist.size:,}; exact duplicates excluded)",
    )
    ax.set_xticks(range(top + 1))
    return "distance_histogram.png"


def deciding_figure(d: Decisions, threshold: float | None, radius: int | None) -> tuple[Any, str]:
    """The figure of the values that decided (see :func:`_deciding_plot`) and its file name."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    fig, ax = plt.subplots(figsize=(6, 3.5))
    name = _deciding_plot(ax, d, threshold, radius)
    ax.set_ylabel("near duplicates")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # counts are whole numbers
    fig.tight_layout()
    return fig, name


def cluster_sizes_of(d: Decisions) -> tuple[np.ndarray, np.ndarray]:
    """``(cluster ids, sizes)`` of a run's clusters (the summary's and the plot's); with
    ``--state`` a kept document of an earlier run (``duplicate_of >= len(d)``, see
    RunState.this_run) counts in its cluster."""
    return run_cluster_sizes(d.cluster_id, d.duplicate_of >= len(d))


def largest_of(d: Decisions, top: int = 5) -> list[tuple[int, int]]:
    """``(cluster id, size)`` of the ``top`` largest clusters with duplicates of a run (sizes
    as :func:`cluster_sizes_of`; ties: the older cluster first)."""
    labels, sizes = cluster_sizes_of(d)
    order = np.lexsort((labels, -sizes))[:top]
    return [(int(labels[i]), int(sizes[i])) for i in order if sizes[i] > 1]


def cluster_figure(d: Decisions) -> Any:
    """Clusters with duplicates per size (log scale whose bottom shows a bar of one), titled
    with the summary's count of clusters with duplicates."""
    import matplotlib.pyplot as plt

    _, sizes = cluster_sizes_of(d)
    counts = np.bincount(sizes[sizes > 1]) if (sizes > 1).any() else np.zeros(0, np.int64)
    xs = np.flatnonzero(counts)
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.bar(xs.astype(str), counts[xs], color="#aa7744")
    ax.set_yscale("log")
    ax.set_ylim(0.5, max(2.0, float(counts.max(initial=1)) * 2))  # a bar of 1 has a height
    alone = int((sizes == 1).sum())
    ax.set(
        xlabel="cluster size (documents)",
        ylabel="clusters (log scale)",
        title=f"Cluster sizes: {int((sizes > 1).sum()):,} clusters with duplicates\n"
        f"({alone:,} documents alone, not shown)",
    )
    fig.tight_layout()
    return fig


def _plots(
    out_dir: str, d: Decisions, threshold: float | None = None, radius: int | None = None
) -> list[str]:
    matplotlib = require("matplotlib", "report", "--report")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    fig, name = deciding_figure(d, threshold, radius)
    fig.savefig(os.path.join(out_dir, name), dpi=110)
    plt.close(fig)
    written.append(name)

    fig = cluster_figure(d)
    fig.savefig(os.path.join(out_dir, "cluster_sizes.png"), dpi=110)
    plt.close(fig)
    written.append("cluster_sizes.png")
    return written


def write_report(
    out_dir: str,
    d: Decisions,
    examples: dict[int, list[str]],
    stats: ReadStats,
    seconds: float,
    config: DecideConfig | None = None,
) -> str:
    """Write ``report.md`` and the plots into ``out_dir``; returns the report path.
    ``config`` (the decide step's parameters) marks the threshold or radius that decided."""
    os.makedirs(out_dir, exist_ok=True)
    threshold = None if config is None else config.threshold
    radius = None if config is None else config.radius
    images = _plots(out_dir, d, threshold, radius)
    counts = d.counts()
    lines: list[Any] = [
        "# neardup dedup report",
        "",
        "| documents | unique | duplicates | exact duplicates | empty | skipped | seconds |",
        "|---|---|---|---|---|---|---|",
        f"| {stats.documents:,} | {counts['unique']:,} | {counts['duplicate']:,} | "
        f"{counts['exact_duplicate']:,} | {counts['empty']:,} | {stats.skipped:,} | "
        f"{seconds:.2f} |",
        "",
    ]
    lines += [f"![{name}]({name})\n" for name in images]
    lines += ["## Largest clusters", ""]
    for cluster, size in largest_of(d):
        lines.append(f"### cluster {cluster} ({size} documents)")
        lines += [f"- {text.replace(chr(10), ' ')}" for text in examples.get(cluster, [])]
        lines.append("")
    if stats.errors:
        lines += ["## Skipped rows (first few)", ""] + [f"- {e}" for e in stats.errors] + [""]
    path = os.path.join(out_dir, "report.md")
    # lone surrogates (valid JSON escapes, no UTF-8 form) are shown as \ud800, not a crash
    with atomic_write(path, "w", encoding="utf-8", errors="backslashreplace") as f:
        f.write("\n".join(lines))
    return path
