"""``neardup dedup``'s outputs beside ``--out``: the summary (stderr, ``--summary FILE`` as
JSON), the cluster table (``--clusters FILE``) and the report (``--report DIR``).

Every location is checked before any work (:meth:`ExtraOutputs.check`), and the files are
written before a ``--state`` commits (:meth:`ExtraOutputs.write`): an output that cannot be
written fails the run with the state unchanged, so running it again decides the same.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from typing import Any

import click
import numpy as np

from neardup import _fs
from neardup._atomic import atomic_write
from neardup.cli._common import disk_errors, output_path_or_usage_error, usage_error
from neardup.cli.report import cluster_sizes_of, largest_of
from neardup.dedup import Decisions
from neardup.io import ReadStats, open_writer


def summary_record(stats: ReadStats, d: Decisions, seconds: float) -> dict[str, Any]:
    """The run's summary as a JSON-able dict (what stderr shows, and more)."""
    _, sizes = cluster_sizes_of(d)
    clusters = {
        "clusters": int(sizes.size),
        "clusters_with_duplicates": int((sizes > 1).sum()),
        "largest_clusters": [s for _, s in largest_of(d)],
    }
    return record_of(stats, d.counts(), clusters, seconds)


def record_of(
    stats: ReadStats, counts: dict[str, int], clusters: dict[str, Any], seconds: float
) -> dict[str, Any]:
    """The summary from its parts (the Spark engine counts clusters on the cluster)."""
    return {
        "documents": stats.documents,
        **counts,
        "skipped": stats.skipped,
        **clusters,
        "bytes": stats.bytes,
        "seconds": round(seconds, 3),
        "docs_per_second": round(stats.documents / max(seconds, 1e-9), 1),
        "errors": stats.errors[:5],
    }


@dataclass
class ExtraOutputs:
    """``--summary FILE``, ``--clusters FILE`` and ``--report DIR`` of one run."""

    summary: str | None = None
    clusters: str | None = None
    report: str | None = None

    def check(self, inputs: tuple[str, ...]) -> None:
        """Usage errors for a location that cannot be written, before any work is done."""
        for option, path in (("--summary", self.summary), ("--clusters", self.clusters)):
            if path is None:
                continue
            if path == "-":
                raise usage_error(f"{option} needs a file path (stdout carries --out)")
            if option == "--clusters":
                output_path_or_usage_error(path, inputs, option)
            _check_parent(option, path)
        if self.report is not None:
            if _fs.exists(self.report) and not _fs.isdir(self.report):
                raise usage_error(f"--report {self.report!r} is a file; give a directory")
            _check_parent("--report", self.report.rstrip("/") or "/")

    def written(self, out: str) -> dict[str, str]:
        """Where this run writes, by option (``--out -``: stdout; the report's Markdown)."""
        where = {"--out": "stdout" if out == "-" else out}
        for option, path in (("--summary", self.summary), ("--clusters", self.clusters)):
            if path is not None:
                where[option] = path
        if self.report is not None:
            where["--report"] = os.path.join(self.report, "report.md")
        return where

    def want_ids(self, needed: set[int], d: Decisions) -> None:
        """With ``--clusters``: the ids of every member of a cluster with duplicates."""
        if self.clusters is not None and len(d):
            multi = np.flatnonzero(np.bincount(d.cluster_id) > 1)
            members = np.isin(d.cluster_id, multi) | (d.duplicate_of >= 0)
            needed.update(np.flatnonzero(members).tolist())

    def write_engine(self, record: dict[str, Any], members: list[Any] | None) -> None:
        """``--summary`` and ``--clusters`` of a Spark run: ``members`` rows are (position,
        kept position, cluster id, id as JSON) of every member of a cluster with duplicates."""
        if self.summary is not None:
            self._write_summary(record, ())
        if self.clusters is not None:
            rows = members or []
            pos = np.array([r[0] for r in rows], np.int64)
            rep = np.array([r[1] for r in rows], np.int64)
            d = _cluster_view(pos, np.where(rep == pos, -1, rep), [r[2] for r in rows])
            with disk_errors(f"cannot write --clusters {self.clusters}"):
                write_clusters(self.clusters, d, {r[0]: json.loads(r[3]) for r in rows})

    def _write_summary(self, record: dict[str, Any], left: tuple[str, ...]) -> None:
        with (
            disk_errors(f"cannot write --summary {self.summary}", *left),
            atomic_write(self.summary or "", "w", encoding="utf-8") as f,
        ):
            f.write(json.dumps(record, ensure_ascii=False, indent=2) + "\n")

    def write(
        self,
        record: dict[str, Any],
        d: Decisions,
        ids: dict[int, Any],
        extra: Any,
        left: tuple[str, ...] = (),
    ) -> None:
        """Write what was asked for; ``extra`` is ``(examples, stats, seconds, decide
        config)`` for the report. A disk failure is one line naming the output and the cause,
        and saying that ``left`` (outputs not replaced yet) were left as they were."""
        if self.summary is not None:
            self._write_summary(record, left)
        if self.clusters is not None:
            with disk_errors(f"cannot write --clusters {self.clusters}", *left):
                write_clusters(self.clusters, d, ids)
        if self.report is not None:
            with disk_errors(f"cannot write --report {self.report}", *left):
                _write_report(self.report, d, extra)


def _cluster_view(pos: Any, duplicate_of: Any, cluster_id: list[int]) -> Decisions:
    """Decisions holding only what :func:`write_clusters` reads (the other columns blank)."""
    n = len(pos)
    return Decisions(
        position=pos,
        fingerprint=np.zeros(n, np.uint64),
        status=np.zeros(n, np.int8),
        duplicate_of=duplicate_of,
        distance=np.full(n, -1, np.int16),
        cluster_id=np.array(cluster_id, np.int64),
        similarity=np.full(n, np.nan),
        threshold=np.full(n, np.nan),
    )


def _write_report(where: str, d: Decisions, extra: Any) -> None:
    """``--report``: into the folder, or (a URL) into a local one uploaded file by file."""
    from neardup.cli.report import write_report

    if not _fs.is_remote(where):
        write_report(_fs.local(where), d, *extra)
        return
    with tempfile.TemporaryDirectory(prefix="neardup-report-") as tmp:
        report = write_report(tmp, d, *extra)
        names = sorted(os.listdir(tmp), key=lambda n: os.path.join(tmp, n) == report)
        for name in names:  # report.md last: it links the plots
            _fs.upload(os.path.join(tmp, name), _fs.join(where, name))


def _check_parent(option: str, path: str) -> None:
    if _fs.is_remote(path):  # stores have no folders to check; the store is asked at the end
        try:
            _fs.check_writable(path, option)
            _fs.filesystem(path)
        except (ValueError, ImportError) as exc:
            raise usage_error(str(exc)) from None
        return
    path = _fs.local(path)
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise usage_error(f"{option} {path!r}: folder {parent!r} does not exist")
    if not os.access(parent, os.W_OK):
        raise usage_error(f"{option} {path!r}: folder {parent!r} is not writable")
    if os.path.isdir(path) and option != "--report":
        raise usage_error(f"{option} {path!r} is a directory; give a file path")


def write_clusters(path: str, d: Decisions, ids: dict[int, Any]) -> None:
    """One row per cluster with duplicates: ``cluster_id``, ``size``, ``kept_id`` and
    ``members`` (ids, the kept one first, then input order), largest clusters first. ``d``
    may hold only some documents (Spark sends the members of clusters with duplicates); with
    ``--state`` the kept document may come from an earlier run (``ids`` knows it)."""
    pos = d.position
    rep = np.where(d.duplicate_of < 0, pos, d.duplicate_of)
    order = np.lexsort((pos, d.cluster_id))
    clusters, starts, sizes = np.unique(d.cluster_id[order], return_index=True, return_counts=True)
    rows = []
    for c, s, n in zip(clusters.tolist(), starts.tolist(), sizes.tolist(), strict=True):
        members = order[s : s + n]
        kept = int(rep[members[0]])  # every member points at the one kept document
        others = [m for m in pos[members].tolist() if m != kept]
        if others:
            rows.append((c, kept, others))
    rows.sort(key=lambda r: (-len(r[2]), r[0]))
    with open_writer(path) as w:
        for c, kept, others in rows:
            members_ids = [ids[kept]] + [ids[m] for m in others]
            w.write(
                {
                    "cluster_id": c,
                    "size": len(members_ids),
                    "kept_id": ids[kept],
                    "members": members_ids,
                }
            )


def print_summary(record: dict[str, Any]) -> None:
    """The summary lines on stderr."""
    r = record
    lines = [
        f"documents: {r['documents']:,}  unique: {r['unique']:,}  duplicates: "
        f"{r['duplicate']:,}  exact duplicates: {r['exact_duplicate']:,}  empty: "
        f"{r['empty']:,}  skipped: {r['skipped']:,}",
        f"clusters with duplicates: {r['clusters_with_duplicates']:,}  largest: "
        f"{r['largest_clusters']}",
        f"{_size(r['bytes'])} of text in {r['seconds']:.2f} s "
        f"({_size(r['bytes'] / max(r['seconds'], 1e-9))}/s, {r['docs_per_second']:,.0f} docs/s)",
    ]
    lines += [f"skipped: {e}" for e in r["errors"]]
    if r.get("outputs"):
        lines.append(written_line(r["outputs"]))
    click.echo("\n".join(lines), err=True)


def written_line(outputs: dict[str, str]) -> str:
    """The summary line naming where each output went (:meth:`ExtraOutputs.written`)."""
    return "written: " + ", ".join(f"{path} ({option})" for option, path in outputs.items())


def _size(nbytes: float) -> str:
    """Bytes in the unit that keeps the number readable: 9.4 kB, 16.6 MB, 2.9 GB."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if nbytes >= scale:
            return f"{nbytes / scale:,.1f} {unit}"
    return f"{nbytes:,.0f} B"
