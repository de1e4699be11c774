"""One lock per object around the methods that read or change its state (issue 22).

:func:`thread_safe` is a class decorator: each named method runs holding the object's
re-entrant lock (``threading.RLock``, created on first use), so calls from several threads
run one at a time, each whole, in the order they take the lock. A lock rather than "detect
concurrent use and raise": sharing one index or Deduplicator between request threads is a
normal thing to do, and an uncontended RLock costs well under a microsecond per call (see
benchmarks/README.md, "Thread safety"). The lock is left out when the object is pickled
(Spark ships a Deduplicator to executors) and made afresh on the other side.

>>> @thread_safe("push")
... class Bag:
...     def __init__(self) -> None:
...         self.items: list[int] = []
...     def push(self, x: int) -> int:
...         self.items.append(x)
...         return len(self.items)
>>> bag = Bag(); bag.push(1), bag.push(2), LOCK in bag.__dict__, LOCK in bag.__getstate__()
(1, 2, True, False)
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

C = TypeVar("C", bound=type)
LOCK = "_thread_lock"


def object_lock(obj: Any) -> threading.RLock:
    """The object's lock (made on first use; ``dict.setdefault`` is atomic, so two threads
    asking at once get the same one)."""
    lock: threading.RLock | None = obj.__dict__.get(LOCK)
    if lock is None:
        lock = obj.__dict__.setdefault(LOCK, threading.RLock())
    return lock


def _locked(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        lock = self.__dict__.get(LOCK) or object_lock(self)
        with lock:
            return method(self, *args, **kwargs)

    return run


def _getstate(self: Any) -> dict[str, Any]:
    state = dict(self.__dict__)
    state.pop(LOCK, None)  # a lock cannot be pickled; the copy makes its own
    return state


def thread_safe(*names: str) -> Callable[[C], C]:
    """Class decorator: the methods ``names`` (inherited ones too) hold the object's lock."""

    def wrap(cls: C) -> C:
        for name in names:
            method = getattr(cls, name)
            if isinstance(method, property):
                assert method.fget is not None
                setattr(cls, name, property(_locked(method.fget)))
            else:
                setattr(cls, name, _locked(method))
        if "__getstate__" not in cls.__dict__:
            setattr(cls, "__getstate__", _getstate)  # noqa: B010 (mypy: no method-assign)
        return cls

    return wrap
