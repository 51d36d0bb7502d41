"""A numpy emulator of tt-train's fused LayerNorm backward kernel that behaves as a gtest binary.

``python -m lnrepro.emulator`` (or ``lnrepro-emulator``) is a drop-in for ``ttml_tests`` as far
as the LayerNorm backward tests go; ``kernel`` holds the model and its defects, ``catalogue``
the tests, ``gtest_main`` its googletest flags and run (the front end it shares with
:mod:`.cbmodel` is :mod:`.cbmodel.gtest_front`).
"""

from __future__ import annotations

import os


def main() -> int:
    """The emulator as a process. numpy's BLAS runs on one thread unless the environment names a
    count: one emulator stands in for one device, and runners start many at once (lit's shards,
    gtest-parallel, a bisect's jobs), where a BLAS thread per core only spins. Set before numpy
    loads, as OpenBLAS reads it then; about 0.12 core-s less per process on 2 cores
    (scripts/bench_startup.py)."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from lnrepro.emulator.gtest_main import main as gtest_main

    return gtest_main()
