"""The package's shape: one error root (issue 37)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from types import ModuleType

import neardup
from neardup.errors import NeardupError


def _modules() -> list[ModuleType]:
    names = [m.name for m in pkgutil.walk_packages(neardup.__path__, "neardup.")]
    return [importlib.import_module(name) for name in ["neardup", *names]]


def test_every_exception_class_derives_from_neardup_error() -> None:
    defined = {
        f"{obj.__module__}.{obj.__qualname__}": obj
        for module in _modules()
        for obj in vars(module).values()
        if inspect.isclass(obj)
        and issubclass(obj, BaseException)
        and obj.__module__.startswith("neardup")
    }
    assert len(defined) >= 10  # the walk found the package's errors
    outside = sorted(name for name, cls in defined.items() if not issubclass(cls, NeardupError))
    assert outside == []


def test_errors_are_exported_from_the_package() -> None:
    import neardup.errors as errors

    for name in errors.__all__:
        assert getattr(neardup, name) is getattr(errors, name)
        assert name in neardup.__all__
