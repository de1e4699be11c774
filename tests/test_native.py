"""The C extension equals the numba kernels (and xxhash) bit for bit, on random inputs.

The numba kernels are the previous implementation that the golden fingerprints and the
accuracy figures were produced with; the C ones must give the same values everywhere,
including on malformed UTF-8 and for every analyzer, weighting, seed and width. Run with
``NEARDUP_TEST_NUMBA=1`` (CI: once per change to ``_csrc`` or ``_numba``).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.features.charclass import char_classes

if os.environ.get("NEARDUP_TEST_NUMBA") != "1":
    # compiling the numba fallback costs minutes on a cold cache; the C kernels are checked
    # against independent pure-Python references in the default run (test_fingerprint,
    # test_verify, test_hashing, tests/index), this module adds the bit-for-bit fallback check
    pytest.skip(
        "C-vs-numba parity: set NEARDUP_TEST_NUMBA=1 (compiles the numba fallback, minutes)",
        allow_module_level=True,
    )

native: Any = pytest.importorskip("neardup._native")
nb_hash: Any = pytest.importorskip("neardup._numba.hashing")
nb_feat: Any = pytest.importorskip("neardup._numba.features")
nb_verify: Any = pytest.importorskip("neardup._numba.verify")
nb_index: Any = pytest.importorskip("neardup._numba.index")

ALPHABET = st.sampled_from(
    list("abcdefghijklmnopqrstuvwxyz0123456789 ,.!-'\n\t")
    + list("中国人民新闻北京上海经济")
    + list("ひらがなカタカナ한국어éßΩж")
    + ["\U0001f600", "\u3000", "\u200b", "\ud800"]
)
TEXT = st.text(ALPHABET, max_size=120)


def _pack(chunks: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.zeros(len(chunks) + 1, dtype=np.int64)
    np.cumsum([len(c) for c in chunks], out=offsets[1:])
    return np.frombuffer(b"".join(chunks), dtype=np.uint8), offsets


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=5000), seed=st.integers(0, 2**64 - 1))
def test_xxh3_c_equals_xxhash_and_numba(data: bytes, seed: int) -> None:
    buf = np.frombuffer(data + b"pad", dtype=np.uint8)
    want = xxhash.xxh3_64_intdigest(data, seed=seed)
    assert native.xxh3_64(buf, 0, len(data), seed) == want
    assert int(nb_hash.xxh3_64(buf, 0, len(data), np.uint64(seed))) == want


@settings(max_examples=60, deadline=None)
@given(x=st.integers(0, 2**64 - 1))
def test_mix64_c_equals_numba(x: int) -> None:
    assert native.mix64(x) == int(nb_hash.mix64(np.uint64(x)))


CONFIGS = st.fixed_dictionaries(
    {
        "mode": st.integers(0, 3),
        "n": st.integers(1, 5),
        "han_single": st.booleans(),
        "stop": st.booleans(),
        "weighting": st.integers(0, 2),
        "top_n": st.sampled_from([0, 1, 3, 50]),
        "seed": st.sampled_from([0, 1, 2**63 + 5]),
        "words": st.integers(1, 2),
        "n_cjk": st.integers(1, 6),
    }
)


def _fingerprint_args(chunks: list[bytes], cfg: dict[str, Any]) -> tuple[Any, ...]:
    buf, offsets = _pack(chunks)
    rng = np.random.default_rng(len(chunks))
    stop = np.sort(
        np.array([xxhash.xxh3_64_intdigest(w) for w in (b"the", b"a", b"of")], np.uint64)
    )
    idf_keys = np.unique(rng.integers(0, 2**64, 50, dtype=np.uint64))
    idf_vals = rng.random(idf_keys.size) * 5
    return (
        buf,
        offsets,
        char_classes(),
        cfg["mode"],
        cfg["n"],
        cfg["han_single"],
        stop if cfg["stop"] else np.empty(0, np.uint64),
        cfg["weighting"],
        cfg["top_n"],
        idf_keys,
        idf_vals,
        1.5,
        np.uint64(cfg["seed"]),
    )


def _run_fingerprint(kernel: Any, args: tuple[Any, ...], ndoc: int, cfg: dict[str, Any]) -> Any:
    out = np.full((ndoc, cfg["words"]), 7, dtype=np.uint64)
    empty = np.zeros(ndoc, dtype=np.bool_)
    kernel(*args, out, empty, cfg["n_cjk"])
    return out, empty


@settings(max_examples=150, deadline=None)
@given(
    texts=st.lists(TEXT, max_size=6), raw=st.lists(st.binary(max_size=60), max_size=3), cfg=CONFIGS
)
def test_fingerprint_batch_c_equals_numba(texts: list[str], raw: list[bytes], cfg: Any) -> None:
    chunks = [t.encode("utf-8", "surrogatepass") for t in texts] + raw  # raw: malformed UTF-8
    args = _fingerprint_args(chunks, cfg)
    c_out, c_empty = _run_fingerprint(native.fingerprint_batch, args, len(chunks), cfg)
    n_out, n_empty = _run_fingerprint(nb_feat.fingerprint_batch, args, len(chunks), cfg)
    assert c_out.tolist() == n_out.tolist()
    assert c_empty.tolist() == n_empty.tolist()


@settings(max_examples=80, deadline=None)
@given(text=TEXT, han_single=st.booleans(), joined=st.booleans())
def test_token_and_char_kernels_c_equal_numba(text: str, han_single: bool, joined: bool) -> None:
    buf = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    cls = char_classes()
    size = buf.size + 2
    outs = []
    for mod in (native, nb_feat):
        starts, ends = np.zeros(size, np.int64), np.zeros(size, np.int64)
        n = mod.token_spans(buf, 0, buf.size, cls, han_single, starts, ends)
        stream, cps = np.zeros(size, np.uint8), np.zeros(size, np.int64)
        nb, ncp = mod.char_stream(buf, 0, buf.size, cls, stream, cps, joined)
        outs.append(
            (
                n,
                starts[:n].tolist(),
                ends[:n].tolist(),
                bool(mod.is_cjk(buf, 0, buf.size, cls)),
                int(nb),
                int(ncp),
                stream[:nb].tobytes(),
                cps[: ncp + 1].tolist(),
            )
        )
    assert outs[0] == outs[1]


@settings(max_examples=60, deadline=None)
@given(
    keys=st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=40),
    weights=st.lists(st.floats(0, 10, allow_nan=False), min_size=40, max_size=40),
    unit=st.booleans(),
    seed=st.integers(0, 2**64 - 1),
)
def test_simhash_words_c_equals_numba(
    keys: list[int], weights: list[float], unit: bool, seed: int
) -> None:
    k = np.array(keys, np.uint64)
    w = np.array(weights[: len(keys)], np.float64)
    a, b = np.zeros(2, np.uint64), np.zeros(2, np.uint64)
    native.simhash_words(k, w, unit, seed, 2, a)
    nb_feat.simhash_words(k, w, unit, np.uint64(seed), 2, b)
    assert a.tolist() == b.tolist()


@settings(max_examples=100, deadline=None)
@given(
    texts=st.lists(TEXT, max_size=6),
    raw=st.lists(st.binary(max_size=60), max_size=2),
    mode=st.integers(0, 2),
    n=st.integers(1, 6),
    seed=st.integers(0, 2**64 - 1),
    num_hashes=st.integers(1, 40),
)
def test_verifier_kernels_c_equal_numba(
    texts: list[str], raw: list[bytes], mode: int, n: int, seed: int, num_hashes: int
) -> None:
    chunks = [t.encode("utf-8", "surrogatepass") for t in texts] + raw
    buf, offsets = _pack(chunks)
    modes = np.full(len(chunks), mode, np.int8)
    results = []
    for mod in (native, nb_verify):
        flat = np.zeros(buf.size + len(chunks) + 1, np.uint64)
        off = np.zeros(len(chunks) + 1, np.int64)
        size = mod.shingles(buf, offsets, modes, char_classes(), n, seed, flat, off)
        salts = np.random.default_rng(num_hashes).integers(0, 2**64, num_hashes, dtype=np.uint64)
        mins = np.zeros((len(chunks), num_hashes), np.uint64)
        mod.minhash(flat[:size].copy(), off, salts, mins)
        fused = np.zeros_like(mins)
        mod.sketch(buf, offsets, modes, char_classes(), n, seed, salts, fused)
        assert fused.tolist() == mins.tolist()  # the fused kernel: minhash over shingles
        results.append((flat[:size].tolist(), off.tolist(), mins.tolist()))
    assert results[0] == results[1]


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 3000),
    k=st.integers(0, 8),
    blocks=st.integers(1, 10),
    seed=st.integers(0, 2**32 - 1),
    subset=st.booleans(),
)
def test_index_kernels_c_equal_numba(n: int, k: int, blocks: int, seed: int, subset: bool) -> None:
    from neardup.index.design import TableDesign
    from neardup.index.kernels import collect
    from neardup.index.tables import dedup_masks, permutation_arrays, probe_masks

    blocks = max(blocks, min(k + 1, 10))
    design = TableDesign(k=k, blocks=blocks)
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 2**64, max(1, n // 4), dtype=np.uint64)
    fps = base[rng.integers(0, base.size, n)] ^ (
        np.uint64(1) << rng.integers(0, 64, n).astype(np.uint64)
    )
    positions = np.flatnonzero(rng.random(n) < 0.8).astype(np.uint32) if subset else None
    m = n if positions is None else positions.size
    q = min(design.offset_bits(max(m, 1)), 12)
    rsh, msk, lsh = permutation_arrays(design)
    top = min(q, 8)
    tables: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for mod in (native, nb_index):
        keys = np.zeros((design.tables, m), np.uint64)
        pos = np.zeros((design.tables, m), np.uint32)
        offsets = np.zeros((design.tables, (1 << q) + 1), np.uint32)
        for t in range(design.tables):
            starts = np.zeros((1 << top) + 1, np.int64)
            mod.top_counts(fps, positions, rsh, msk, lsh, t, top, starts)
            mod.scatter_top(fps, positions, rsh, msk, lsh, t, top, starts, keys[t], pos[t])
            mod.bucket_segments(keys[t], pos[t], q, top, starts, offsets[t])
        tables.append((keys, pos, offsets))
    assert all(np.array_equal(a, b) for a, b in zip(tables[0], tables[1], strict=True))
    keys, pos, offsets = tables[0]
    r = design.radius_for(k)
    probes = probe_masks(q, r)
    dedup = dedup_masks(design, q)
    alive = (rng.random(n) < 0.9).astype(np.uint8)
    queries = fps[rng.integers(0, n, 50)] ^ np.uint64(3)

    def canon(res: Any) -> list[tuple[int, int, int]]:
        return sorted(zip(*(x.tolist() for x in res), strict=True))

    for radius_args in [
        (
            "search_tables",
            int(queries.size),
            (
                queries,
                k,
                keys,
                pos,
                offsets,
                q,
                rsh,
                msk,
                lsh,
                probes,
                len(probes),
                dedup,
                r,
                alive,
            ),
        ),
        ("scan_range", int(queries.size), (queries, k, fps, 0, n, alive)),
        ("brute_pairs", n, (fps, k)),
        ("join_tables", design.tables << q, (k, keys, pos, offsets, probes, len(probes), dedup, r)),
        ("join_tables_r0", design.tables << q, (k, keys, pos, offsets, dedup, 5)),
    ]:
        name, total, args = radius_args
        got = [
            canon(collect(getattr(mod, name), total, *args, capacity=64))
            for mod in (native, nb_index)
        ]
        assert got[0] == got[1], name


@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 3000), q=st.integers(0, 12), seed=st.integers(0, 2**32 - 1))
def test_sorting_and_pair_kernels_c_equal_numba(n: int, q: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    fps = np.sort(rng.integers(0, 2**64, n, dtype=np.uint64) >> np.uint64(rng.integers(0, 60)))
    offs = [np.zeros((1 << q) + 1, np.uint32) for _ in range(2)]
    native.offsets_from_sorted(fps, q, offs[0])
    nb_index.offsets_from_sorted(fps, q, offs[1])
    assert offs[0].tolist() == offs[1].tolist()
    shuffled = rng.permutation(fps)
    bucket_of = (shuffled >> np.uint64(64 - q)).astype(np.int64) if q else np.zeros(n, np.int64)
    order = np.argsort(bucket_of, kind="stable")
    keys, pos = shuffled[order], order.astype(np.uint32)
    offsets = np.searchsorted(bucket_of[order], np.arange((1 << q) + 1)).astype(np.uint32)
    native.sort_buckets(keys, pos, offsets)
    assert keys.tolist() == sorted(shuffled.tolist())
    assert (shuffled[pos] == keys).all()
    groups = int(rng.integers(1, 20))
    counts = rng.integers(1, 4, groups).astype(np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    perm = rng.permutation(int(starts[-1])).astype(np.int64)
    a = rng.integers(0, groups, 10).astype(np.int64)
    b = rng.integers(0, groups, 10).astype(np.int64)
    dist = rng.integers(1, 5, 10).astype(np.int64)
    total = int((counts[a] * counts[b]).sum() + (counts * (counts - 1) // 2).sum())
    outs = [tuple(np.zeros(total, np.int64) for _ in range(3)) for _ in range(2)]
    native.expand_pairs(a, b, dist, perm, starts, counts, *outs[0])
    nb_index.expand_pairs(a, b, dist, perm, starts, counts, *outs[1])
    assert [x.tolist() for x in outs[0]] == [x.tolist() for x in outs[1]]


def test_the_cli_on_the_numba_fallback_writes_the_c_builds_decisions(tmp_path: Any) -> None:
    """The whole library on the fallback (what an install without a C compiler runs, through
    ``neardup._backend.C``), not only kernel by kernel: the same output bytes."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    sample = root / "examples" / "sample_news.jsonl"
    outputs = []
    for kernels in ("", "numba"):
        out = tmp_path / f"out-{kernels or 'c'}.jsonl"
        env = {**os.environ, "NEARDUP_KERNELS": kernels}
        args = [sys.executable, "-m", "neardup", "dedup", str(sample), "--out", str(out)]
        subprocess.run([*args, "--time-field", "date", "--window", "7d"], env=env, check=True)
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1] and outputs[0].count(b"\n") == 30
