"""One lock per object around the methods that read or change its state (issue 22).

:func:`thread_safe` is a class decorator: each named method runs holding the object's
re-entrant lock (``threading.RLock``, made with the object), so calls from several threads
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
>>> import copy
>>> bag = Bag(); bag.push(1), bag.push(2), LOCK in bag.__getstate__()
(1, 2, False)
>>> twin = copy.deepcopy(bag); twin.push(3), object_lock(twin) is not object_lock(bag)
(3, True)
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

C = TypeVar("C", bound=type)
LOCK = "_thread_lock"


def object_lock(obj: Any) -> threading.RLock:
    """The object's lock."""
    return obj.__dict__[LOCK]  # type: ignore[no-any-return]


def _new_with_lock(cls: type, *args: Any, **kwargs: Any) -> Any:
    """``__new__`` of a thread-safe class: every instance (unpickled ones too) has its lock
    before anything else runs, so a method only reads an attribute (no check, no race)."""
    obj: Any = object.__new__(cls)
    obj.__dict__[LOCK] = threading.RLock()
    return obj


def _locked(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        with self._thread_lock:
            return method(self, *args, **kwargs)

    return run


def _getstate(self: Any) -> dict[str, Any]:
    state = dict(self.__dict__)
    state.pop(LOCK, None)  # a lock cannot be pickled; the copy has its own (from __new__)
    return state


def _setstate(self: Any, state: dict[str, Any]) -> None:
    self.__dict__.update(state)
    self.__dict__.setdefault(LOCK, threading.RLock())  # pickle protocols 0-1 skip __new__


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
        if "__new__" in cls.__dict__:
            raise TypeError(f"{cls.__name__} defines __new__; thread_safe needs its own")
        setattr(cls, "__new__", staticmethod(_new_with_lock))  # noqa: B010 (no method-assign)
        if "__getstate__" not in cls.__dict__:
            setattr(cls, "__getstate__", _getstate)  # noqa: B010
            setattr(cls, "__setstate__", _setstate)  # noqa: B010
        return cls

    return wrap
