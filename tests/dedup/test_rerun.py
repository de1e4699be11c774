"""The rerun rule's pieces against brute force (dedup/rerun.py)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from neardup._persist import JsonColumn
from neardup.dedup.rerun import IdPositions, repeats

ids = st.one_of(st.integers(0, 6), st.sampled_from(["a", "b", "c", "é"]))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(ids, max_size=8), max_size=8), st.lists(ids, max_size=6))
def test_id_positions_are_the_last_positions(
    batches: list[list[object]], ask: list[object]
) -> None:
    col = JsonColumn.of([])
    ix = IdPositions(merge_at=3)  # both the sorted base and the recent dict are used
    held: list[object] = []
    for batch in batches:
        col.extend(batch)
        held += batch
        want = [max((i for i, v in enumerate(held) if v == a), default=-1) for a in ask]
        got = ix.lookup(col, 0, ask)
        assert got == want


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(ids, st.integers(0, 2)), max_size=10), st.data())
def test_repeats_match_brute_force(rows: list[tuple[object, int]], data: st.DataObject) -> None:
    stored = data.draw(st.dictionaries(ids, st.tuples(st.integers(0, 50), st.integers(0, 2))))

    def held(asked: list[object]) -> list[tuple[int, int]]:
        return [stored.get(a, (-1, 0)) for a in asked]

    got = repeats([r[0] for r in rows], [r[1] for r in rows], held).tolist()
    for i, (v, k) in enumerate(rows):
        earlier = [j for j in range(i) if rows[j] == (v, k) and got[j] == -1]
        if earlier:
            assert got[i] == -2 - earlier[0]
        elif v in stored and stored[v][1] == k:
            assert got[i] == stored[v][0]
        else:
            assert got[i] == -1
