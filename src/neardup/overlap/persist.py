"""A saved reference collection: the texts, ids, gram index and template counts of an
:class:`OverlapFinder`.

The directory is written through :func:`neardup._atomic.atomic_directory` (a writer lock;
a writer killed at any instant leaves the previous version loadable) as a checksummed bundle of
``.npy`` arrays (:mod:`neardup._persist`, no pickle) whose manifest carries the finder's
parameters and ``config_id``. Loading with a finder of other parameters is refused with a
one-line error naming both ids.

>>> import tempfile, pathlib
>>> from neardup.overlap import OverlapFinder
>>> d = pathlib.Path(tempfile.mkdtemp()) / "ref"
>>> f = OverlapFinder()
>>> _ = f.add("the quick brown fox jumps over the lazy dog near the river bank today", id="s")
>>> f.save(d)
>>> g = OverlapFinder.load(d)
>>> [p.source_id for p in g.query("so the quick brown fox jumps over the lazy dog near the river")]
['s']
>>> OverlapFinder.load(d, OverlapFinder(ngram=5))
Traceback (most recent call last):
...
neardup.overlap.persist.ReferenceConfigError: ...
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

import numpy as np

from neardup._atomic import atomic_directory, current_version
from neardup._params import config_difference
from neardup._persist import JsonColumn, read_bundle, write_bundle
from neardup.errors import ConfigMismatchError, DamagedFileError
from neardup.overlap.templates import TemplateCounts

__all__ = ["ReferenceConfigError", "ReferenceFormatError", "ReferenceMixin"]

FORMAT = "neardup-overlap-reference"
VERSION = 1


class ReferenceFormatError(DamagedFileError):
    """A saved reference is missing, damaged or of another format."""


class ReferenceConfigError(ReferenceFormatError, ConfigMismatchError):
    """A saved reference was built with other parameters than the finder asked for."""


class ReferenceMixin:
    """``save`` / ``load`` for :class:`~neardup.overlap.OverlapFinder` (module docs)."""

    _texts: list[str]
    _ids: list[Any]
    _index: Any
    _template_counts: TemplateCounts

    if TYPE_CHECKING:  # provided by OverlapFinder and FrozenParams

        @property
        def config_id(self) -> str: ...

        def get_params(self) -> dict[str, Any]: ...

        def run_params(self) -> dict[str, Any]: ...

        def replace(self, **changes: Any) -> Self: ...

    def save(self, path: str | os.PathLike[str], *, wait: bool = True) -> None:
        """Write the indexed documents as a new version of directory ``path``."""
        hashes, posts = self._index.arrays()
        texts = JsonColumn.of(self._texts).arrays()
        ids = JsonColumn.of(self._ids).arrays()
        keys, counts = self._template_counts.arrays()
        arrays = {
            "template_keys": keys,
            "template_docs": counts,
            "hashes": hashes,
            "postings": posts,
            "texts_data": texts[0],
            "texts_offsets": texts[1],
            "ids_data": ids[0],
            "ids_offsets": ids[1],
        }
        meta = {"config_id": self.config_id, "params": self.get_params(), "docs": len(self._texts)}
        with atomic_directory(path, wait=wait) as version:
            write_bundle(version, FORMAT, VERSION, meta, arrays)

    @classmethod
    def load(cls, path: str | os.PathLike[str], config: Self | None = None) -> Self:
        """The reference saved in ``path``; ``config``: a finder whose parameters it must
        have (default: the saved ones). Raises :class:`ReferenceFormatError` /
        :class:`ReferenceConfigError`."""
        root = path if isinstance(path, str) else Path(path)  # a str may be a URL (neardup._fs)
        try:
            version = current_version(root)
        except OSError as e:
            raise ReferenceFormatError(
                f"{root} is not a saved overlap reference ({e}); create it with "
                "--save-reference (OverlapFinder.save)"
            ) from None
        meta, arrays = read_bundle(version, FORMAT, VERSION, mmap=False, error=ReferenceFormatError)
        if config is None:
            try:
                config = cls(**meta["params"])
            except (TypeError, ValueError, KeyError) as e:
                raise ReferenceFormatError(f"{root}: bad saved parameters ({e})") from None
        if meta.get("config_id") != config.config_id:
            saved: dict[str, Any] = meta["params"] if isinstance(meta.get("params"), dict) else {}
            # parameters added since a reference was saved take their defaults; both sides as
            # they run (query_window None is 2)
            shown = _run_params(cls, {**cls().get_params(), **saved})
            differ = config_difference(shown, config.run_params())
            why = (
                f"other overlap parameters: use the saved parameters ({shown}) "
                f"or rebuild the reference with --save-reference; {differ}"
                if differ
                else "the same parameters in another neardup version (its tokenizer or aligner "
                "changed): rebuild the reference with --save-reference"
            )
            raise ReferenceConfigError(
                f"{root} was built with config {meta.get('config_id')}, this run uses "
                f"{config.config_id} ({why})"
            )
        finder = config.replace()
        texts = JsonColumn(arrays["texts_data"], arrays["texts_offsets"])
        ids = JsonColumn(arrays["ids_data"], arrays["ids_offsets"])
        texts.check(f"{root} texts", ReferenceFormatError)
        ids.check(f"{root} ids", ReferenceFormatError)
        finder._texts, finder._ids = texts.to_list(), ids.to_list()
        if len(finder._texts) != len(finder._ids) or arrays["postings"].ndim != 2:
            raise ReferenceFormatError(f"{root}: inconsistent arrays; restore or rebuild")
        finder._index = type(finder._index).from_arrays(
            arrays["hashes"], np.asarray(arrays["postings"])
        )
        if "template_keys" not in arrays or arrays["template_keys"].shape != (
            arrays["template_docs"].shape
        ):
            raise ReferenceFormatError(f"{root}: no template counts; rebuild the reference")
        finder._template_counts = TemplateCounts.from_arrays(
            np.asarray(arrays["template_keys"]), np.asarray(arrays["template_docs"])
        )
        return finder


def _run_params(cls: Any, params: dict[str, Any]) -> dict[str, Any]:
    """Saved parameters as they run (the finder's :meth:`run_params`); as saved when they do
    not build a finder (the refusal still names them)."""
    try:
        resolved: dict[str, Any] = cls(**params).run_params()
    except (TypeError, ValueError):
        return params
    return resolved
