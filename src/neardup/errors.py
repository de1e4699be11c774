"""The one root of every error neardup raises on purpose, and its few kinds.

Catch :class:`NeardupError` for all of them, or a kind:

- :class:`BadInputError`: input data or a parameter neardup cannot use (an empty text, a
  malformed row, an unknown format); the message names the item and the fix.
- :class:`ConfigMismatchError`: a saved index, state, reference or service store was made with
  other settings than the ones asked for; the message names what differs.
- :class:`DamagedFileError`: a saved directory or file is missing, truncated, corrupted, edited
  or of another format; the message names the file and says to restore or rebuild it.

The kinds are also ``ValueError``, as the classes they replace were, so existing
``except ValueError`` code keeps working. Errors of one place subclass a kind (and keep the
built-in base they always had: :class:`~neardup._extras.MissingExtraError` is an
``ImportError``, :class:`~neardup.eval.corpora.CorpusNotFoundError` a ``FileNotFoundError``).
This module imports nothing of neardup: every layer may raise these.

>>> from neardup.errors import ConfigMismatchError, NeardupError
>>> issubclass(ConfigMismatchError, NeardupError) and issubclass(ConfigMismatchError, ValueError)
True
>>> try:
...     raise DamagedFileError("idx/manifest.json is truncated; restore or rebuild")
... except NeardupError as e:
...     print(type(e).__name__, e)
DamagedFileError idx/manifest.json is truncated; restore or rebuild
"""

from __future__ import annotations

__all__ = ["BadInputError", "ConfigMismatchError", "DamagedFileError", "NeardupError"]


class NeardupError(Exception):
    """Every error neardup raises on purpose derives from this (module docs)."""


class BadInputError(NeardupError, ValueError):
    """Input data or a parameter neardup cannot use; the message names the item and the fix."""


class ConfigMismatchError(NeardupError, ValueError):
    """Something saved was made with other settings than asked for; the message names them."""


class DamagedFileError(NeardupError, ValueError):
    """A saved directory or file is missing, truncated, corrupted, edited or of another format."""
