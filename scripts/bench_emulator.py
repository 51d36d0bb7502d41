#!/usr/bin/env python3
"""Time one iteration of the NIGHTLY shape (3*273 rows x 8462 features) in the emulator.

Measures, on one core (numpy's elementwise work is single-threaded), the median of N runs of
each stage a test iteration does: draw the test's mt19937 data (uncached: a copied generator
redraws it), float32 reference, kernel model, three allclose comparisons with xtensor's
sequential mean — and the whole iteration (data cached, as a copied generator allows).
Target (issues #3 and #13): well under a second.

Then what ``explain`` does with that shape: 12 models (3 defect sets x 2 eras x 2 arches) on the
same draw, one ``run_iteration`` each against one ``run_iterations`` call, which draws, takes
the reference and prepares the defect-free part of the kernel once.

    python scripts/bench_emulator.py [--runs 5] [--defect shipped]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

import numpy as np

from lnrepro.emulator.catalogue import (
    BY_NAME,
    DataSource,
    make_inputs,
    run_iteration,
    run_iterations,
)
from lnrepro.emulator.defects import PRESETS, Arch, Era, parse_defects
from lnrepro.emulator.kernel import KernelConfig, compare, kernel, reference


def timed(fn, runs: int) -> float:  # type: ignore[no-untyped-def]
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return statistics.median(out)


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--defect", default="shipped")
    args = ap.parse_args()
    case = BY_NAME["LayerNormBackwardOpTest.NIGHTLY_MetalLayerNormBw_LargeFeatures_NoL1Fit"]
    cfg = KernelConfig(defects=parse_defects(args.defect))
    data = DataSource()
    x, dy, g = make_inputs(case, data)
    ref, got = reference(x, dy, g), kernel(x, dy, g, cfg)
    stages = {
        "mt19937 data (uncached)": lambda: make_inputs(case, DataSource()),
        "reference (float32)": lambda: reference(x, dy, g),
        "kernel model": lambda: kernel(x, dy, g, cfg),
        "3 x allclose": lambda: [
            compare(n, getattr(got, n), getattr(ref, n), 1e-3, 0.5)
            for n in ("dx", "dgamma", "dbeta")
        ],
        "whole iteration": lambda: run_iteration(case, cfg, data),
    }
    models = [
        KernelConfig(defects=d, era=e, arch=a)
        for d in (PRESETS["shipped"], parse_defects("double-subtract"), frozenset())
        for e in (Era.NOV_2025, Era.DEC_2025)
        for a in Arch
    ]
    stages[f"{len(models)} models, one by one"] = lambda: [
        run_iteration(case, m, data) for m in models
    ]
    stages[f"{len(models)} models, together"] = lambda: run_iterations(case, models, data)
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cpu(s), Python {platform.python_version()}, numpy {np.__version__}"
    )
    print(
        f"shape: {case.rows} rows x {case.features} features ({case.rows * case.features / 1e6:.1f} M elements), "
        f"defect={args.defect}, median of {args.runs}"
    )
    for name, fn in stages.items():
        print(f"  {name:<24} {timed(fn, args.runs) * 1000:8.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
