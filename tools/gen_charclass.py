"""Regenerate ``src/neardup/data/charclass.bin.zlib``: one class byte per Unicode code point.

Classes: 0 separator, 1 word character (letters, digits, marks), 2 Han ideograph (segmented or
one token per character), 3 a script written without spaces whose characters are single tokens
(kana, Thai, Lao, Khmer, Myanmar). The table is frozen data: tokenisation must not drift with the
``unicodedata`` version of whichever Python runs neardup, so regenerating it changes fingerprints
and needs a new fingerprint format version.

Usage: python tools/gen_charclass.py
"""

from __future__ import annotations

import unicodedata
import zlib
from pathlib import Path

SINGLE_SCRIPTS = ("HIRAGANA", "KATAKANA", "THAI", "LAO", "KHMER", "MYANMAR")


def char_class(cp: int) -> int:
    ch = chr(cp)
    cat = unicodedata.category(ch)
    if cat[0] not in "LNM":
        return 0
    name = unicodedata.name(ch, "")
    if name.startswith(("CJK UNIFIED IDEOGRAPH", "CJK COMPATIBILITY IDEOGRAPH")):
        return 2
    if cat[0] == "L" and name.startswith(SINGLE_SCRIPTS):
        return 3
    return 1


def main() -> None:
    table = bytes(char_class(cp) for cp in range(0x110000))
    out = Path(__file__).resolve().parents[1] / "src" / "neardup" / "data" / "charclass.bin.zlib"
    out.write_bytes(zlib.compress(table, 9))
    print(f"unicode {unicodedata.unidata_version}: wrote {out} ({out.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
