"""``--report DIR``: a Markdown report with PNG plots (matplotlib, Agg backend)."""

from __future__ import annotations

import os
from typing import Any

import click
import numpy as np

from neardup._atomic import atomic_write
from neardup._extras import MissingExtraError, require
from neardup.dedup import Decisions, largest_clusters
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


def _plots(out_dir: str, d: Decisions) -> list[str]:
    matplotlib = require("matplotlib", "report", "--report")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    dist = d.distance[d.status == 1]  # near duplicates (exact ones are all at 0)
    fig, ax = plt.subplots(figsize=(6, 3.5))
    top = int(dist.max()) if dist.size else 3
    ax.hist(dist, bins=[i - 0.5 for i in range(top + 2)], color="#4477aa", edgecolor="white")
    ax.set(
        xlabel="Hamming distance to the kept document",
        ylabel="near duplicates",
        title=f"Distances of matched pairs (n={dist.size:,}; exact duplicates excluded)",
    )
    ax.set_xticks(range(top + 1))
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "distance_histogram.png"), dpi=110)
    plt.close(fig)
    written.append("distance_histogram.png")

    sizes = np.bincount(d.cluster_id) if len(d) else np.zeros(0, np.int64)
    counts = np.bincount(sizes) if sizes.size else np.zeros(1, np.int64)
    xs = np.flatnonzero(counts)
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.bar(xs.astype(str), counts[xs], color="#aa7744")
    ax.set_yscale("log")
    ax.set(
        xlabel="cluster size (documents)",
        ylabel="clusters (log scale)",
        title=f"Cluster sizes ({sizes.size:,} clusters)",
    )
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "cluster_sizes.png"), dpi=110)
    plt.close(fig)
    written.append("cluster_sizes.png")
    return written


def write_report(
    out_dir: str, d: Decisions, examples: dict[int, list[str]], stats: ReadStats, seconds: float
) -> str:
    """Write ``report.md`` and the plots into ``out_dir``; returns the report path."""
    os.makedirs(out_dir, exist_ok=True)
    images = _plots(out_dir, d)
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
    for cluster, size in largest_clusters(d.cluster_id, top=5):
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
