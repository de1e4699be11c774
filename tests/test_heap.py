"""Large growable arrays live in anonymous maps of their own (issue 39: glibc served them from
holes of its heap and kept their old buffers after each growth until a trim), with the same
contents as a plain array after any sequence of appends."""

from __future__ import annotations

import mmap
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup import _heap
from neardup._growable import Growable


def test_a_large_buffer_has_a_map_of_its_own() -> None:
    g = Growable(np.uint64)
    g.extend(np.arange(_heap.MAP_BYTES // 8 + 1, dtype=np.uint64))
    base = g.data.base
    assert isinstance(base, memoryview) and isinstance(base.obj, mmap.mmap)  # unmapped once freed
    small = Growable(np.int8)
    small.extend([1, 2])
    assert small.data.base is None  # a plain numpy array below MAP_BYTES
    assert int(g.view()[-1]) == _heap.MAP_BYTES // 8 and g.data.flags.writeable


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.lists(st.integers(-(2**31), 2**31 - 1), max_size=700), max_size=12),
    st.sampled_from([np.int32, np.int64, np.uint8]),
    st.sampled_from([None, 3]),
)
def test_same_contents_as_a_plain_array(chunks: list, dtype: type, width: int | None) -> None:
    old, _heap.MAP_BYTES = _heap.MAP_BYTES, 64  # most buffers mapped, small ones not
    try:
        g, ref = Growable(dtype, width), []
        for c in chunks:
            rows = np.array(c, np.int64).astype(dtype)
            rows = rows if width is None else np.repeat(rows[:, None], width, axis=1)
            g.extend(rows)
            ref.append(rows)
            g.writable()[:1] = g.view()[:1]  # written in place, as the state does
        want = np.concatenate(ref) if ref else np.zeros((0,) if width is None else (0, width))
        assert g.view().tolist() == want.tolist() and g.view().dtype == np.dtype(dtype)
    finally:
        _heap.MAP_BYTES = old


def test_a_forked_child_keeps_the_rows_of_the_fork() -> None:
    """The map is private: the parent's later writes do not reach a forked child (the
    service's snapshot writer saves what was there at the fork)."""
    if not hasattr(os, "fork"):
        pytest.skip("no fork")
    g = Growable(np.int64)
    g.extend(np.zeros(_heap.MAP_BYTES // 8 + 1, np.int64))
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: wait for the parent's write, then report what it sees
        os.close(w)
        os.read(r, 1)
        os._exit(int(g.view()[0]))
    os.close(r)
    g.writable()[0] = 7
    os.write(w, b"x")
    os.close(w)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0 and g.view()[0] == 7


PROBE = """
import ctypes, sys
import numpy as np
from neardup._heap import fix_mmap_threshold
NAMES = "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost"
class Info(ctypes.Structure):
    _fields_ = [(f, ctypes.c_size_t) for f in NAMES.split()]
mallinfo2 = ctypes.CDLL(None).mallinfo2
mallinfo2.restype = Info
fixed = fix_mmap_threshold() if sys.argv[1] == "fix" else None
a = np.ones(20 << 20, np.uint8)  # mapped, freed: glibc's dynamic threshold rises to 20 MB
del a
b = np.ones(8 << 20, np.uint8)  # dynamic: from the heap, kept there when freed
print(fixed, mallinfo2().hblkhd >= 8 << 20)
"""


@pytest.mark.parametrize(
    ("how", "env", "want"),
    [("fix", {}, "True True"), ("none", {}, "None False"),
     ("fix", {"MALLOC_MMAP_THRESHOLD_": "33554432"}, "False False")],
)  # fmt: skip
def test_the_fixed_mmap_threshold_maps_large_blocks(how: str, env: dict, want: str) -> None:
    """What the CLI sets at its start: a large block gets a map of its own even after glibc's
    dynamic threshold rose; a threshold the user set is left alone. A child process: the
    setting is process-wide (``import neardup`` alone changes nothing)."""
    import subprocess
    import sys

    if not hasattr(mmap, "MAP_PRIVATE") or _heap._malloc_trim() is None:
        pytest.skip("glibc only")
    run = subprocess.run(
        [sys.executable, "-c", PROBE, how],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        check=True,
    )
    assert run.stdout.split() == want.split(), run.stderr
