"""Write the command reference's tolerance table and plot from a real `lnrepro tolerance` study, not by hand.

Runs the seeds' tests (the BugRepro and NIGHTLY tests) with 1,000 data draws each (the tests
with the same shape share their draws) and the NIGHTLY shape study with its plot, then puts the
table between docs/commands.md's ``<!-- tolerance:begin -->`` and ``<!-- tolerance:end -->`` markers and
the plot at docs/tolerance-nightly.svg.

    python scripts/tolerance_table.py [--trials 1000] [--check-only]
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lnrepro.emulator.catalogue import CASES  # noqa: E402
from lnrepro.emulator.defects import Era  # noqa: E402
from lnrepro.model.requests import DEFAULT_FILTER  # noqa: E402
from lnrepro.present.plot import tolerance_plot  # noqa: E402
from lnrepro.studies import tolerance as tl  # noqa: E402

BEGIN, END = "<!-- tolerance:begin -->", "<!-- tolerance:end -->"


def main() -> int:
    import fnmatch

    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--trials", type=int, default=1000)
    ns = ap.parse_args()
    names = [
        c.full_name
        for c in CASES
        if any(fnmatch.fnmatchcase(c.full_name, p) for p in DEFAULT_FILTER.split(":"))
    ]
    t0 = time.perf_counter()
    rows = tl.seeds_table(names, trials=ns.trials, alpha=1e-6)
    seconds = time.perf_counter() - t0  # the table's time: the plot's study comes after
    lines = [
        f"{ns.trials} draws per random-data shape; alpha = 1e-6; {os.cpu_count()} cores, {platform.machine()}, "
        f"{seconds:.0f} s in all (`python scripts/tolerance_table.py`).",
        "",
        "| test | its tolerance (rtol, atol) | P(correct kernel passes) | P(shipped kernel fails) | band: atol at rtol 0 (dx / dgamma / dbeta) | P(shipped fails the band) |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        tol = sorted({f"{v[0]:g}, {v[1]:g}" for v in r.tolerance.values()})
        band = " / ".join(f"{r.band_atol_rtol0[t]:.3g}" for t in tl.TENSORS)
        lines.append(
            f"| `{r.test}` | {'; '.join(tol)} | {_p(r.correct_pass)} | {_p(r.shipped_fail)} | {band} | {_p(r.band_power)} |"
        )
    plot_trials = max(ns.trials // 10, 20)
    study = tl.shape_study(
        3 * 273, 8462, trials=plot_trials, models=tuple(tl.MODELS), era=Era.DEC_2025, alpha=1e-6
    )
    (ROOT / "docs").mkdir(exist_ok=True)
    s = study.samples
    tolerance_plot(
        {m: s.get(m, "test", "dx", 0.0) for m in s.data},
        study.plot_lines(),
        f"NIGHTLY shape (819 x 8462), dx: {plot_trials} draws of the test's data "
        f"(the table above: {ns.trials} per shape)",
        "atol needed to pass (dx, rtol 0)",
        ROOT / "docs" / "tolerance-nightly.svg",
    )
    best = study.best
    lines += [
        "",
        "Which data separates each defect from the correct kernel best (NIGHTLY shape, dx): "
        + "; ".join(f"{m}: {k} ({r:.3g}x the band)" for m, (k, r) in best.items())
        + ".",
        "",
        "![dx errors on the NIGHTLY shape](tolerance-nightly.svg)",
    ]
    readme = ROOT / "docs" / "commands.md"
    text = readme.read_text()
    block = BEGIN + "\n" + "\n".join(lines) + "\n" + END
    readme.write_text(
        re.sub(re.escape(BEGIN) + r".*?" + re.escape(END), lambda _m: block, text, flags=re.S)
    )
    print("\n".join(lines))
    return 0


def _p(p: float) -> str:
    if p >= 1 - 1e-12:
        return "1"
    if p <= 1e-12:
        return "0"
    return f"{p:.3g}" if p < 0.999 else f"1 − {1 - p:.1e}"


if __name__ == "__main__":
    raise SystemExit(main())
