"""``neardup dedup --state DIR``: decide against every document of earlier runs.

The run holds ``DIR``'s writer lock from start to end (a second run on the same state waits;
on an object store it is refused: :mod:`neardup._atomic_remote`),
loads the live version (refusing another configuration), decides this run's documents after
the saved ones, writes the new state version (not yet live: :meth:`RunState.stage`), then the
output, and only then commits the new version: a run that fails or is killed (a full disk
while writing the state or the output included) leaves ``--out`` and the previous state as they
were, and running it again gives the same output. A ``CURRENT`` that is missing or names a
version that is gone is refused (exit 1, the message gives the fix), nothing deleted. Ids that
documents of earlier runs already have are warned about, as ids repeated within a run are.
``duplicate_of`` may name a document of an earlier run (by its saved id); cluster ids and
decisions are those of one run over all the state's inputs in order.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neardup import _fs
from neardup._atomic import (
    CURRENT,
    BrokenDirectoryError,
    DirectoryBusyError,
    atomic_directory,
    holds_other_data,
    read_current,
    read_live,
)
from neardup.cli._common import DataError, disk_errors, usage_error
from neardup.dedup import Decisions, Deduplicator, persist
from neardup.dedup.persist import StateConfigError, StateFormatError
from neardup.dedup.rerun import run_positions


@dataclass
class RunState:
    """The loaded state and where this run's documents start in it."""

    dd: Deduplicator
    path: str
    base: int
    late_before: int
    version: Path
    earlier_ids: dict[int, Any] = field(default_factory=dict)
    staged: bool = False

    def stage(self, out: str = "--out") -> None:
        """Write the new state version now, before the outputs: a state that cannot be written
        (disk full) fails the run (exit 1, one line naming the state and the cause) while
        ``out`` is still as it was. It becomes live when the run ends well."""
        with disk_errors(f"cannot save the state {self.path}", out, self.path):
            persist.write_state(self.dd, self.version)
        self.staged = True

    def this_run(self, decided: Decisions) -> Decisions:
        """This run's decisions (one per input row, as fed) with row numbers for positions;
        an earlier document ``r`` that is ``duplicate_of`` appears as ``n + r`` (its id in
        :attr:`earlier_ids`); see :func:`~neardup.dedup.rerun.run_positions`."""
        out, earlier = run_positions(decided, self.base)
        self.earlier_ids = {len(out) + r: self.dd.state.external_id(r) for r in earlier}
        return out

    def notes(self, rows: int) -> list[str]:
        """The summary's lines about the state (``rows``: documents read by this run)."""
        n = self.dd.n_documents
        out = [f"state: {self.base:,} documents before this run, {n:,} after -> {self.path}"]
        if again := rows - (n - self.base):
            out.append(
                f"already decided: {again:,} documents (same id and text as a document of the "
                "state: its stored decision, not added again)"
            )
        out += self._shared_ids_note()
        late = int(self.dd.describe()["late_documents"]) - self.late_before
        if late:
            out.append(
                f"state: {late:,} documents were older than the state's newest timestamp minus "
                "--window; kept documents older than that had expired for them, as in one run "
                "over all input (feed days in time order)"
            )
        return out

    def _shared_ids_note(self) -> list[str]:
        ids = [self.dd.state.external_id(p) for p in range(self.base, self.dd.n_documents)]
        shared = self.dd.state.shared_ids(ids, self.base) if self.base else []
        if not shared:
            return []
        some = ", ".join(repr(v) for v in shared[:3])
        return [
            f"warning: {len(shared):,} ids of this run were already given to documents of "
            f"earlier runs on this state (e.g. {some}), so duplicate_of is ambiguous for them: "
            "use ids that are unique across runs"
        ]


def _check_directory(path: str) -> None:
    if _fs.is_remote(path):  # a store location: checked by atomic_directory
        try:
            _fs.check_writable(path, "--state")
        except ValueError as exc:
            raise usage_error(str(exc)) from None
        return
    root = Path(_fs.local(path))
    if root.exists() and not root.is_dir():
        raise usage_error(f"--state {str(root)!r} is a file; give a directory")
    if root.is_dir() and holds_other_data(root):
        raise usage_error(
            f"--state {str(root)!r} holds other data (no {CURRENT}); choose another directory"
        )


@contextmanager
def dedup_state(path: str | None, dd: Deduplicator) -> Iterator[RunState | None]:
    """The state of ``path`` for one run (None without ``--state``); committed on success."""
    if path is None:
        yield None
        return
    root = path if _fs.is_remote(path) else Path(_fs.local(path))
    _check_directory(path)
    try:
        with atomic_directory(root) as version:  # checks CURRENT under the lock
            loaded = _load(root, path, dd)
            state = RunState(
                loaded, path, loaded.n_documents, loaded.describe()["late_documents"], version
            )
            try:
                yield state
            except DataError as exc:  # bad input, a failed output: nothing was committed
                raise DataError(state_left(exc.message, path)) from None
            if not state.staged:
                state.stage()
    except (BrokenDirectoryError, DirectoryBusyError) as exc:  # busy: a store's second writer
        raise DataError(f"--state: {exc}") from None


def state_left(message: str, path: str) -> str:
    """``message`` of a run that failed under ``--state``, ending with the state's fate (a
    user's first question) unless it already says what was left.

    >>> state_left("b.jsonl:2: field 'text' must be a string, got int", "st")
    "b.jsonl:2: field 'text' must be a string, got int; the state st was left as it was"
    """
    return message if "left as" in message else f"{message}; the state {path} was left as it was"


def _load(root: str | Path, path: str, dd: Deduplicator) -> Deduplicator:
    """The live version's Deduplicator (``dd`` itself on the first run)."""
    if read_current(root) is None:
        return dd
    try:
        return read_live(
            root, lambda version: persist.read_state(Deduplicator, version, dd, name=path)
        )
    except StateConfigError as exc:
        raise usage_error(str(exc)) from None
    except StateFormatError as exc:
        raise DataError(str(exc)) from None
