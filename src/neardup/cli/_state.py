"""``neardup dedup --state DIR``: decide against every document of earlier runs.

The run holds ``DIR``'s writer lock from start to end (a second run on the same state waits),
loads the live version (refusing another configuration), decides this run's documents after
the saved ones, writes the output, and only then commits the new state version: a run that
fails or is killed leaves the previous state, and running it again gives the same output.
``duplicate_of`` may name a document of an earlier run (by its saved id); cluster ids and
decisions are those of one run over all the state's inputs in order.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from neardup._atomic import CURRENT, LOCK, atomic_directory, current_version, read_current
from neardup.cli._common import DataError, usage_error
from neardup.dedup import Decisions, Deduplicator
from neardup.dedup.persist import StateConfigError, StateFormatError


@dataclass
class RunState:
    """The loaded state and where this run's documents start in it."""

    dd: Deduplicator
    path: str
    base: int
    late_before: int
    earlier_ids: dict[int, Any] = field(default_factory=dict)

    def this_run(self) -> Decisions:
        """This run's decisions with run positions; an earlier document ``r`` that is
        ``duplicate_of`` appears as ``n + r`` (its id in :attr:`earlier_ids`)."""
        d, b = self.dd.decisions(), self.base
        n = self.dd.n_documents - b
        rows = slice(len(d) - n, None)  # decisions() starts at the state's origin
        dup = d.duplicate_of[rows]
        old = (dup >= 0) & (dup < b)
        local = np.where(dup >= b, dup - b, dup)
        local[old] = n + dup[old]
        self.earlier_ids = {n + r: self.dd.external_id(r) for r in np.unique(dup[old]).tolist()}
        return Decisions(
            d.position[rows] - b,
            d.fingerprint[rows],
            d.status[rows],
            local,
            d.distance[rows],
            d.cluster_id[rows],
            d.similarity[rows],
        )

    def notes(self) -> list[str]:
        n = self.dd.n_documents
        out = [f"state: {self.base:,} documents before this run, {n:,} after -> {self.path}"]
        late = int(self.dd.describe()["late_documents"]) - self.late_before
        if late:
            out.append(
                f"state: {late:,} documents were older than the state's newest timestamp minus "
                "--window; kept documents older than that had expired for them, as in one run "
                "over all input (feed days in time order)"
            )
        return out


def _check_directory(root: Path) -> None:
    if root.exists() and not root.is_dir():
        raise usage_error(f"--state {str(root)!r} is a file; give a directory")
    ours = (root / CURRENT).exists() or (root / LOCK).exists()
    if root.is_dir() and any(root.iterdir()) and not ours:
        raise usage_error(
            f"--state {str(root)!r} holds other data (no {CURRENT}); choose another directory"
        )


@contextmanager
def dedup_state(path: str | None, dd: Deduplicator) -> Iterator[RunState | None]:
    """The state of ``path`` for one run (None without ``--state``); committed on success."""
    if path is None:
        yield None
        return
    root = Path(path)
    _check_directory(root)
    with atomic_directory(root) as version:
        loaded = dd
        if read_current(root) is not None:
            try:
                loaded = Deduplicator.read_state(current_version(root), dd, name=path)
            except StateConfigError as exc:
                raise usage_error(str(exc)) from None
            except StateFormatError as exc:
                raise DataError(str(exc)) from None
        state = RunState(loaded, path, loaded.n_documents, loaded.describe()["late_documents"])
        yield state
        loaded.write_state(version)
