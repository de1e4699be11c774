"""numba kernels: the fallback when the C extension ``neardup._native`` is not built.

Each module here mirrors the C kernels in ``neardup/_csrc`` function for function (same
names, same signatures, bit-identical results; ``tests/test_native.py`` checks that on random
inputs). They compile on first call and are cached on disk next to this package. Nothing
imports this package unless the extension is missing, ``NEARDUP_KERNELS=numba`` asks for it,
or a test compares the two paths.
"""
