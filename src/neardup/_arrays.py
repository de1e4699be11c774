"""The array types of the kernel contract, named once.

The typed stubs of the C extensions (``_native.pyi``, ``_overlap.pyi``) and the numba mirror
(:mod:`neardup._numba`) declare their arguments with these, so a kernel's C signature and its
fallback's read alike. Type aliases only: nothing here converts or checks an array.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

U8 = npt.NDArray[np.uint8]
I8 = npt.NDArray[np.int8]
U32 = npt.NDArray[np.uint32]
I64 = npt.NDArray[np.int64]
U64 = npt.NDArray[np.uint64]
F64 = npt.NDArray[np.float64]
# a mask: one byte an item (bool, or uint8/int8 0 and 1)
Flags = npt.NDArray[np.bool_] | npt.NDArray[np.uint8] | npt.NDArray[np.int8]
# the tags of a key table run: 2, 4 or 8 bytes an item
Tags = (
    npt.NDArray[np.uint8] | npt.NDArray[np.uint16] | npt.NDArray[np.uint32] | npt.NDArray[np.uint64]
)
Slots = npt.NDArray[np.uint32] | npt.NDArray[np.uint8]  # uint8: 3 bytes a slot
Seed = int | np.integer[Any]  # any integer, taken modulo 2**64
