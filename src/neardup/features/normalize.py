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
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from neardup._backend import C, native

_TAG = re.compile(r"<[^<>]{0,2000}>")


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


def _fold_fullwidth(text: str) -> str:
    """Map full-width ASCII forms and U+3000 to ASCII, as NFKC would, but at numpy speed."""
    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    wide = (cps >= 0xFF01) & (cps <= 0xFF5E)
    ideo_space = cps == 0x3000
    if not (wide.any() or ideo_space.any()):
        return text
    cps = cps.copy()
    cps[wide] -= 0xFEE0
    cps[ideo_space] = 0x20
    return cps.tobytes().decode("utf-32-le", "surrogatepass")


def prepare_many(texts: Sequence[str], *, markup: bool = False) -> list[str]:
    """``prepare_text`` of every text, batched: one NFKC quick check and one casefold per batch.

    >>> prepare_many(["Ｆｕｌｌ　ｗｉｄｔｈ", "Straße"])
    ['full width', 'strasse']
    """
    if markup:
        texts = [strip_markup(t) for t in texts]
    out = [t.lower() if t.isascii() else t for t in texts]  # ASCII: lower() == casefold()
    wide = [i for i, t in enumerate(out) if not t.isascii()]
    if not wide:
        return out
    batch = [out[i] for i in wide]
    if any("\x00" in t for t in batch):  # the batch separator must be unused
        folded = [prepare_text(t) for t in batch]
    else:
        joined = _fold_fullwidth("\x00".join(batch))
        if not unicodedata.is_normalized("NFKC", joined):
            joined = "\x00".join(
                p if unicodedata.is_normalized("NFKC", p) else unicodedata.normalize("NFKC", p)
                for p in joined.split("\x00")
            )
        folded = joined.casefold().split("\x00")
    for i, t in zip(wide, folded, strict=True):
        out[i] = t
    return out


_UNSAFE = 0xFFFFFFFF


# blocks without decompositions, case or combining marks (CJK ideographs, Hangul syllables,
# Yi, surrogates, private use): checked in bulk by _plain_blocks, not a character at a time
_PLAIN = ((0x3400, 0x4DC0), (0x4E00, 0xA000), (0xA000, 0xA48D), (0xAC00, 0xD7A4), (0xD800, 0xF900))


def _plain_blocks() -> set[int]:
    """The code points of ``_PLAIN`` when this Python's ``unicodedata`` agrees that each is
    its own NFKC + casefold and combines with nothing (else none: the table checks them)."""
    out: set[int] = set()
    for lo, hi in _PLAIN:
        block = "".join(map(chr, range(lo, hi)))
        if (
            unicodedata.is_normalized("NFKC", block)
            and block.casefold() == block
            and not any(map(unicodedata.combining, block))
            and not any(map(unicodedata.decomposition, block))
        ):
            out.update(range(lo, hi))
    return out


def _secondaries(skip: set[int]) -> set[int]:
    """BMP code points that compose with the character before them in NFC/NFKC: second halves
    of two-character canonical decompositions, and Hangul medial vowels and final consonants.
    (Composites above the BMP combine characters above the BMP, which the C path refuses.)"""
    out = set(range(0x1161, 0x1176)) | set(range(0x11A8, 0x11C3))
    for c in range(0x10000):
        if c not in skip:
            d = unicodedata.decomposition(chr(c))
            if d and d[0] != "<" and d.count(" ") == 1:
                out.add(int(d.split()[1], 16))
    return out


@lru_cache(maxsize=1)
def _nfkc_table() -> tuple[np.ndarray, np.ndarray]:
    """Per BMP code point, ``prepare_text`` of the character alone for the C ``prepare_pack``:
    0 = itself, ``_UNSAFE`` = context matters (the text takes the Python path), else
    ``offset << 5 | length`` of its UTF-8 bytes in the pool. Built from this Python's
    ``unicodedata`` (~10 ms, on the first batch with many non-ASCII texts), so both paths
    follow one rule book.
    """
    plain = _plain_blocks()
    second = _secondaries(plain)
    table = np.zeros(0x10000, dtype=np.uint32)
    pool = bytearray()
    normalize, combining = unicodedata.normalize, unicodedata.combining
    for c in range(0x80, 0x10000):
        if c in plain:
            continue
        ch = chr(c)
        mapped = normalize("NFKC", ch).casefold()
        if combining(ch) or c in second:
            table[c] = _UNSAFE
        elif mapped != ch:
            data = mapped.encode("utf-8", "surrogatepass")
            if len(data) > 31 or any(combining(x) or ord(x) in second for x in mapped):
                table[c] = _UNSAFE
            else:
                table[c] = len(pool) << 5 | len(data)
                pool += data
    return table, np.frombuffer(bytes(pool), dtype=np.uint8)


def pack_prepared(texts: Sequence[str], *, prepared: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``prepare_many`` of the texts (``prepared=True``: the texts as given) as one UTF-8
    buffer plus offsets (int64, ``len + 1``): the input of the C kernels, made once when
    several of them read the same texts.

    >>> buf, off = pack_prepared(["Ａb", "c"])
    >>> buf.tobytes(), off.tolist()
    (b'abc', [0, 2, 3])
    """
    if not prepared and native() is not None:  # C: ~5 ns a character against ~30 (mostly CJK)
        offsets = np.empty(len(texts) + 1, dtype=np.int64)
        batch = texts if type(texts) is list else list(texts)
        wide = sum(not t.isascii() for t in batch)
        # a few non-ASCII texts go through prepare_text rather than pay for the table (~25 ms)
        built = _nfkc_table.cache_info().currsize
        table, pool = _nfkc_table() if wide >= 64 or (wide and built) else _ASCII_ONLY
        data = C.prepare_pack(batch, table, pool, prepare_text, offsets)
        return np.frombuffer(data, dtype=np.uint8), offsets
    norm = texts if prepared else prepare_many(texts)
    encoded = [t.encode("utf-8", "surrogatepass") for t in norm]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    return np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets


_ASCII_ONLY = (np.full(0x10000, _UNSAFE, dtype=np.uint32), np.empty(0, dtype=np.uint8))


def normalize_text(text: str, *, markup: bool = False) -> str:
    """NFKC, case folding and whitespace collapsed to single spaces, stripped.

    Two texts with the same ``normalize_text`` are exact duplicates for neardup.
    """
    # str.split() splits on exactly the characters re's \s matches, about 5x faster than sub
    return " ".join(prepare_text(check_text(text), markup=markup).split())
