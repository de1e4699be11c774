"""Read-only configuration: parameters cannot change after construction.

Every fingerprint, sketch, index and dedup state carries the config id of the object that made
it. If a parameter could be reassigned (``fp.stopwords = "en"``) the cached derived state and
the config id would disagree with each other or with what was already stored, and the id would
lie. So the classes that define a configuration (:class:`~neardup.Fingerprinter`,
:class:`~neardup.MinHashVerifier`, :class:`~neardup.Deduplicator`, :class:`~neardup.IdfTable`,
:class:`~neardup.overlap.OverlapFinder`) freeze their public attributes at the end of
construction; a changed configuration is a new object, made with :meth:`FrozenParams.replace`.

Conventions (scikit-learn's): constructor parameters are stored under their own names, as given
(an iterable of stop words is stored as a tuple, so that it cannot change either); values
resolved or learned from them end with ``_`` (``ngram_size_``); a leading ``_`` marks private
working state, which stays writable (a Deduplicator's decisions grow as documents arrive).
Where the parameters are stored as given, a class declares them once, as dataclass fields
(``Fingerprinter`` and ``OverlapFinder``: ``kw_only=True, eq=False, repr=False``, so equal
by identity and hashable as before; ``MinHashVerifier`` a value compared and hashed by value),
and validates, resolves and freezes in ``__post_init__``: the constructor's signature and its
``self.name = name`` lines are not written twice. The Deduplicator stores resolved values
under some parameter names (``k``, ``verifier``) and keeps its own ``__init__``.

>>> class Box(FrozenParams):
...     def __init__(self, *, size: int = 1) -> None:
...         self.size = size
...         self._freeze()
>>> box = Box(size=2)
>>> box.size = 3
Traceback (most recent call last):
...
AttributeError: Box.size is read-only: make a new object with .replace(size=...)
>>> box.replace(size=3).size, box.size
(3, 2)
"""

from __future__ import annotations

import inspect
import json
from typing import Any, Self


class FrozenParams:
    """Mixin: public attributes are read-only once ``_freeze()`` has run (end of ``__init__``).

    Pickling and copying keep working (they restore ``__dict__`` without ``__setattr__``), so
    frozen objects still ship to worker processes and Spark executors.
    """

    def _freeze(self) -> None:
        object.__setattr__(self, "_frozen", True)

    def __setattr__(self, name: str, value: Any) -> None:
        if not name.startswith("_") and self.__dict__.get("_frozen", False):
            # the configuration (and the config id stored with every result) depends on it
            raise AttributeError(
                f"{type(self).__name__}.{name} is read-only: make a new object with "
                f".replace({name}=...)"
            )
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if not name.startswith("_") and self.__dict__.get("_frozen", False):
            raise AttributeError(f"{type(self).__name__}.{name} cannot be deleted")
        object.__delattr__(self, name)

    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        return [p.name for p in list(sig.parameters.values())[1:] if p.kind in kinds]

    def get_params(self) -> dict[str, Any]:
        """The constructor's keyword parameters of this object, as stored."""
        return {name: getattr(self, name) for name in self._param_names()}

    def replace(self, **changes: Any) -> Self:
        """A new object with the same parameters except ``changes`` (validated again).

        For a stateful object (a :class:`~neardup.Deduplicator`) the new one starts empty.
        """
        names = self._param_names()
        unknown = sorted(set(changes) - set(names))
        if unknown:
            raise TypeError(
                f"{type(self).__name__} has no parameter {unknown[0]!r}; parameters: {names}"
            )
        return type(self)(**{**self.get_params(), **changes})


def config_difference(saved: dict[str, Any], current: dict[str, Any]) -> str:
    """The settings two configurations differ in (a ``Deduplicator.state.config``,
    an :class:`~neardup.overlap.OverlapFinder`'s parameters), as ``name: saved -> current``
    (nested settings by dotted name); empty when they name the same settings.

    >>> config_difference({"k": 3, "verifier": {"num_hashes": 128}},
    ...                   {"k": 3, "verifier": {"num_hashes": 192}, "cluster_similarity": 0.5})
    'cluster_similarity: none -> 0.5; verifier.num_hashes: 128 -> 192'
    """

    def flat(d: Any, prefix: str = "") -> dict[str, Any]:
        if not isinstance(d, dict):
            return {prefix: d}
        out: dict[str, Any] = {}
        for k, v in d.items():
            out.update(flat(v, f"{prefix}{k}."))
        return {k.rstrip("."): v for k, v in out.items()}

    a, b = flat(saved), flat(current)
    names = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    return "; ".join(f"{k}: {_shown(a.get(k))} -> {_shown(b.get(k))}" for k in names)


def older_cluster_rule(differ: str, saved_id: str, where: str, fresh: str) -> str | None:
    """The refusal of a dedup state decided by the cluster rule of an older neardup (its
    configuration has no ``cluster_rule``; ``differ``: :func:`config_difference` from it), or
    None for another difference. No option makes this version go on from such a state, so the
    message says to decide its input again into ``fresh``; one wording for the library's
    states and the service's data directories.

    >>> older_cluster_rule("cluster_rule: none -> 2", "dd1-x", "S", "a new one").endswith(
    ...     "cannot go on from it. Decide its input again into a new one")
    True
    >>> older_cluster_rule("k: 3 -> 4", "dd1-x", "S", "a new one") is None
    True
    >>> older_cluster_rule("cluster_rule: none -> 2; k: 3 -> 5", "dd1-x", "S", "x") is None
    True
    """
    # only when the rule is all that differs: with other options too (a state without a
    # verifier has no cluster rule at all), the usual message naming them is the helpful one
    if not differ.startswith("cluster_rule: none -> ") or ";" in differ:
        return None
    return (
        f"{where} holds a dedup state of config {saved_id} ({differ}): it was decided by the "
        "cluster rule of an older neardup, which kept a document every cluster refused (a "
        "lower threshold could find less); this version cannot go on from it. Decide its "
        f"input again into {fresh}"
    )


def _shown(value: Any) -> str:
    return "none" if value is None else json.dumps(value)
