"""Text normalisation: the same rules everywhere a text is compared.

``normalize_text`` is what exact-duplicate detection keys on; ``prepare_text`` is what the
feature kernels read (they treat every non-word character as a separator themselves, so it
skips the whitespace collapse).

>>> normalize_text("  Ｆｕｌｌ-width\\tＴＥＸＴ\\n ")
'full-width text'
>>> strip_markup("<p>Fish &amp; chips</p>")
' Fish & chips '
"""

from __future__ import annotations

import html
import re
import unicodedata

_TAG = re.compile(r"<[^<>]{0,2000}>")
_SPACE = re.compile(r"\s+")


def check_text(text: object) -> str:
    """Return ``text`` if it is a ``str``, else raise ``TypeError`` naming its type."""
    if not isinstance(text, str):
        raise TypeError(
            f"expected a str, got {type(text).__name__}; decode bytes first "
            "(e.g. data.decode('utf-8', errors='replace')) or convert with str()"
        )
    return text


def strip_markup(text: str) -> str:
    """Replace HTML/XML tags by a space and decode character entities."""
    return html.unescape(_TAG.sub(" ", text))


def prepare_text(text: str, *, markup: bool = False) -> str:
    """NFKC + case folding (+ optional markup stripping): the input of the feature kernels."""
    if markup:
        text = strip_markup(text)
    return unicodedata.normalize("NFKC", text).casefold()


def normalize_text(text: str, *, markup: bool = False) -> str:
    """NFKC, case folding and whitespace collapsed to single spaces, stripped.

    Two texts with the same ``normalize_text`` are exact duplicates for neardup.
    """
    return _SPACE.sub(" ", prepare_text(check_text(text), markup=markup)).strip()
