"""Text kernels: UTF-8 bytes -> tokens -> feature keys -> SimHash bit words.

The kernels run in C (``_csrc/features.c``) or, without the extension, in numba
(:mod:`neardup._numba.features`); both follow the definitions below bit for bit.

Definitions (the fingerprint contract; the Python mirror in ``extract.py`` follows them):

- A *token* is a maximal run of word characters (class 1), or a maximal run of Han characters
  (class 2; a Han run arrives pre-segmented with spaces, or with ``han_single`` each Han
  character is a token), or one class-3 character. Everything else separates tokens.
- ``word`` features are the tokens minus stop words; ``shingle`` features are ``n`` consecutive
  such tokens joined by one space (a text with fewer than ``n`` tokens yields them all, joined,
  as one feature); ``char`` features are the ``n``-code-point windows of the text with every
  separator run collapsed to one space and the ends trimmed (a shorter text: one feature).
- ``auto`` features: a text whose CJK characters (Han, kana, Hangul syllables, and the other
  class-3 scripts) are at least a third of its word characters gets ``char`` features over its
  word characters only (separators dropped, ``n_cjk``-grams); any other text gets ``shingle``
  features. Short CJK texts rarely share whole words but do share character runs.
- A feature's key is XXH3-64 of its UTF-8 bytes. Weight: ``none`` 1 per distinct feature,
  ``tf`` its count, ``tfidf`` count x idf(key). ``top_n`` keeps the heaviest features (ties:
  smaller key first). Bit ``i`` of word ``j`` is set when the weight of features whose word ``j``
  has bit ``i`` set is more than half the total weight.

Signatures (arrays C-contiguous; ``buf`` uint8, spans and offsets int64, keys uint64):
``token_spans(buf, lo, hi, cls, han_single, starts, ends) -> int``,
``is_cjk(buf, lo, hi, cls) -> bool``,
``char_stream(buf, lo, hi, cls, out, cp_starts, joined=False) -> (bytes, code points)``,
``feature_keys(buf, lo, hi, cls, mode, n, han_single, stop_keys, scratch, starts, ends, keys,
n_cjk=5) -> int``, ``simhash_words(keys, weights, unit, seed, words, out)``,
``fingerprint_batch(buf, offsets, cls, mode, n, han_single, stop_keys, weighting, top_n,
idf_keys, idf_vals, idf_default, seed, out, empty, n_cjk=5)``.
"""

from __future__ import annotations

from neardup._backend import C as _k

WORD_MODE, SHINGLE_MODE, CHAR_MODE, AUTO_MODE = 0, 1, 2, 3
W_NONE, W_TF, W_TFIDF = 0, 1, 2

token_spans = _k.token_spans
is_cjk = _k.is_cjk
char_stream = _k.char_stream
feature_keys = _k.feature_keys
simhash_words = _k.simhash_words
fingerprint_batch = _k.fingerprint_batch
