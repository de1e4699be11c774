"""Optional dependencies behind extras, imported on use with a message naming the extra.

The core (fingerprints, index, dedup, the ``neardup dedup``/``fingerprint``/``index`` commands)
needs none of them; plots (``--report``) need ``neardup[report]``, the accuracy harness
(``neardup eval``) ``neardup[eval]``.

>>> require("json", "report", "a feature").__name__
'json'
>>> require("no_such_module_xyz", "report", "--report")
Traceback (most recent call last):
...
neardup._extras.MissingExtraError: --report needs no_such_module_xyz: pip install 'neardup[report]'
"""

from __future__ import annotations

import importlib
from types import ModuleType

from neardup.errors import NeardupError


class MissingExtraError(NeardupError, ImportError):
    """An optional dependency is not installed; the message names the extra to install."""


def require(module: str, extra: str, feature: str) -> ModuleType:
    """Import ``module`` for ``feature``, or raise :class:`MissingExtraError` naming ``extra``."""
    try:
        return importlib.import_module(module)
    except ImportError:
        package = module.split(".")[0]
        raise MissingExtraError(
            f"{feature} needs {package}: pip install 'neardup[{extra}]'"
        ) from None
