"""`lnrepro shrink` next to a grid search over the same case space, on the emulator.

For each defect the emulator knows (double-subtract and drop-xhat-blocks, in the code and fixed
by #53215; drop-partial-tile, the reports' hypothesis), starting from a test
(``BugRepro_TightTolerance_8462Features`` by default):

* **shrink**: ``lnrepro.shrink.core.Search`` as ``lnrepro shrink`` runs it: its answer, the runs
  of the code under test it took (``evaluations``), and the wall time;
* **grid**: every case of the grid — every data variant x every feature count the shrink
  ladders allow below the start's (whole tiles, and whole tiles plus the start's partial tile) x
  one row — judged with the same rules (the same repeats, the same correct-kernel control), and
  the best chosen by the same criteria (the loudest kind, then the fewest tiles, whole tiles
  before a kept partial one, then the margin). The grid is given one row for free (every answer here has one row; a grid over rows
  too would multiply its cost by the start's B·S·H = 819); shrink searches rows itself.

Both answers should be the same case; the table says whether they are.

    python scripts/bench_shrink.py [--test NAME] [--defects double-subtract,drop-xhat-blocks,drop-partial-tile]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

from lnrepro.model.case import Case, Judged, Shape, Status, data_menu
from lnrepro.model.requests import EmulatorSpec
from lnrepro.model.shrink import ShrinkRequest
from lnrepro.shrink import space
from lnrepro.shrink.core import Search, order
from lnrepro.shrink.emulator import EmulatorEvaluator
from lnrepro.shrink.validate import start_case, validate_shrink

DEFECTS = ("double-subtract", "drop-xhat-blocks", "drop-partial-tile")


@dataclass(frozen=True)
class Outcome:
    case: Case | None
    margin: float | None
    evaluations: int
    seconds: float


def shrink(req: ShrinkRequest) -> Outcome:
    ev = EmulatorEvaluator(req.model)
    t0 = time.perf_counter()
    s = Search(start_case(req), ev, ev, start_runs=req.start_runs, budget=100_000)
    r = s.run()
    return Outcome(
        r.case if r else None, r.margin if r else None, s.evaluations, time.perf_counter() - t0
    )


def grid(req: ShrinkRequest) -> Outcome:
    ev = EmulatorEvaluator(req.model)
    start = start_case(req)
    t0 = time.perf_counter()
    s = Search(start, ev, ev, start_runs=req.start_runs, budget=10**9)
    s.measure_start()  # the same repeats as shrink's
    f = start.shape.features
    feats = sorted({*space.feature_values(f, 0), *space.feature_values(f, space.partial(f)), f})
    best: Judged | None = None
    for data in data_menu(req.seed):
        for features in feats:
            j = s.judge(s.case(Shape(1, 1, 1, features), data))
            if j.status is Status.FAILS and (best is None or order(j) < order(best)):
                best = j
    return Outcome(
        best.case if best else None,
        best.margin if best else None,
        s.evaluations,
        time.perf_counter() - t0,
    )


def label(o: Outcome) -> str:
    if o.case is None:
        return "nothing fails"
    m = f"{o.margin:,.0f}x" if o.margin is not None else "?"
    return f"{o.case.shape.label} {o.case.data.kind.value}/{o.case.data.variant} {m}"


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--test", default="BugRepro_TightTolerance_8462Features")
    ap.add_argument("--defects", default=",".join(DEFECTS))
    ap.add_argument("--start-runs", type=int, default=5)
    a = ap.parse_args()
    print(f"start: {a.test}; emulator 2025-12/wormhole_b0\n")
    print("| defect | shrink: case | runs | s | grid: case | runs | s | same |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for defect in a.defects.split(","):
        req = validate_shrink(
            ShrinkRequest(a.test, EmulatorSpec(defect=defect), start_runs=a.start_runs)
        )
        sh, gr = shrink(req), grid(req)
        same = "yes" if sh.case == gr.case else "no"
        print(
            f"| {defect} | {label(sh)} | {sh.evaluations} | {sh.seconds:.1f} | {label(gr)} | "
            f"{gr.evaluations} | {gr.seconds:.1f} | {same} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
