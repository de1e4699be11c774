"""Stop-word lists (English, Chinese) shipped with neardup, plus user lists.

>>> "the" in stopwords("en") and "的" in stopwords("zh")
True
>>> sorted(stopwords(["Foo", "bar"]))
['bar', 'foo']
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from importlib import resources

from neardup.errors import BadInputError
from neardup.features.normalize import prepare_text

BUILTIN = ("en", "zh")


@lru_cache(maxsize=4)
def _builtin(lang: str) -> frozenset[str]:
    text = resources.files("neardup.data").joinpath(f"stopwords-{lang}.txt").read_text("utf-8")
    return frozenset(
        w for line in text.splitlines() if (w := line.strip()) and not w.startswith("#")
    )


def stopwords(spec: str | Iterable[str] | None) -> frozenset[str]:
    """Resolve a stop-word option: None, ``"en"``, ``"zh"``, ``"auto"`` (both) or words.

    User words are normalised like texts (NFKC + case folding) so they match tokens.
    """
    if spec is None:
        return frozenset()
    if isinstance(spec, str):
        if spec == "auto":
            return _builtin("en") | _builtin("zh")
        if spec in BUILTIN:
            return _builtin(spec)
        raise BadInputError(
            f"unknown stop-word list {spec!r}; use 'en', 'zh', 'auto', None or a list of words"
        )
    words = list(spec)
    bad = [w for w in words if not isinstance(w, str)]
    if bad:
        raise TypeError(f"stop words must be str, got {type(bad[0]).__name__}: {bad[0]!r}")
    return frozenset(prepare_text(w).strip() for w in words if w.strip())
