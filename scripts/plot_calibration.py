"""Draw the Bayesian bisect's calibration (docs/calibration.svg) from a saved noise run.

    python scripts/bench_bisect.py --only noise --trials 300 --save noise.json
    python scripts/plot_calibration.py noise.json docs/calibration.svg

Left: each ``--confidence`` level at 70%/5% (equal costs, the level written over its point), the
fraction of trials right (Wilson 95% interval) against the mean confidence stated at the stop, rates learned from nothing and with
the endpoints' 20 runs each given. Right: the same trials pooled and binned by the confidence
stated at the stop (the reliability diagram). On the diagonal a search means what it says.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lnrepro.model.stats import wilson

BINS = ((0.8, 0.9), (0.9, 0.95), (0.95, 0.98), (0.98, 0.99), (0.99, 1.01))
MIN_BIN = 20  # trials a bin needs to be drawn (a handful say nothing)
LABELS = {"learned": "rates learned from nothing", "measured": "endpoints' runs given (20 each)"}


def point(rows: list[list[float]]) -> tuple[float, float, float, float, int]:
    """(mean stated, fraction right, its Wilson interval low and high, trials)."""
    k, n = int(sum(r[0] for r in rows)), len(rows)
    lo, hi = wilson(k, n)
    return sum(r[1] for r in rows) / n, k / n, lo, hi, n


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("results", type=Path)
    ap.add_argument("out", type=Path)
    ns = ap.parse_args()
    doc = json.loads(ns.results.read_text())
    import matplotlib

    matplotlib.use("svg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.hashsalt": "lnrepro", "svg.fonttype": "none", "font.size": 9})
    fig, axes = plt.subplots(1, 2, figsize=(9, 4.2), sharey=True)
    styles = {"learned": ("tab:blue", "o"), "measured": ("tab:orange", "s")}
    for ax in axes:
        ax.plot([0.75, 1.0], [0.75, 1.0], color="0.4", lw=1, ls="--", label="stated = right")
        ax.fill_between([0.75, 1.0], [0.73, 0.98], [0.77, 1.02], color="0.85", label="±2 points")
        ax.set_xlim(0.78, 1.0)
        ax.set_ylim(0.78, 1.005)
        ax.set_xlabel("confidence stated at the stop")
        ax.grid(True, color="0.92")
    for prior, levels in doc["calibration"].items():
        color, marker = styles[prior]
        pts = [point(rows) for rows in levels.values()]
        axes[0].errorbar(
            [p[0] for p in pts],
            [p[1] for p in pts],
            yerr=[[p[1] - p[2] for p in pts], [p[3] - p[1] for p in pts]],
            color=color,
            marker=marker,
            ls="-",
            lw=1,
            capsize=3,
            label=LABELS[prior],
        )
        for conf, p in zip(levels, pts, strict=True):
            if prior == "learned":  # which level each point is (the other prior's sit nearby)
                axes[0].annotate(
                    conf,
                    (p[0], p[1]),
                    textcoords="offset points",
                    xytext=(-4, 8),
                    fontsize=7,
                    color=color,
                )
        rows = [r for rs in levels.values() for r in rs]
        binned = [
            point(b) for lo, hi in BINS if len(b := [r for r in rows if lo <= r[1] < hi]) >= MIN_BIN
        ]
        axes[1].errorbar(
            [p[0] for p in binned],
            [p[1] for p in binned],
            yerr=[[p[1] - p[2] for p in binned], [p[3] - p[1] for p in binned]],
            color=color,
            marker=marker,
            ls="-",
            lw=1,
            capsize=3,
            label=LABELS[prior],
        )
    old = doc["equal"]["70%/5%"]["git-bayesect: entropy rule, its stop (rates integrated out)"]
    p = point(old)
    axes[0].errorbar(
        [p[0]],
        [p[1]],
        yerr=[[p[1] - p[2]], [p[3] - p[1]]],
        color="tab:red",
        marker="x",
        capsize=3,
        ls="none",
        label="before: rates integrated out, 0.95",
    )
    axes[0].set_ylabel("fraction of trials right")
    axes[0].set_title("each --confidence level (70%/5%, equal costs)", fontsize=9)
    axes[1].set_title(
        f"all levels pooled, binned by the stated confidence (bins of {MIN_BIN}+)", fontsize=9
    )
    axes[0].legend(loc="lower right", fontsize=7)
    fig.suptitle(
        f"lnrepro bisect --confidence: calibration over {doc['trials']} seeded trials per level "
        f"on {doc['histories']} look-alike histories",
        fontsize=9,
    )
    fig.tight_layout()
    fig.savefig(ns.out, metadata={"Date": None})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
