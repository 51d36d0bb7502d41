"""Plots people would rather look at than read: matplotlib, an optional extra
(``pip install 'lnrepro[plot]'``), writing SVG or PNG by the file's suffix.

``tolerance_plot``: the distribution of the atol each draw needs to pass (dx, rtol 0), for the
correct kernel and each defect model, on a log x axis with the share of draws on the y axis, and
the tolerances as labelled vertical lines. Labels sit in a legend outside the data, so nothing
overlaps or clips.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lnrepro.errors import EnvironmentProblem, UsageError

FORMATS = (".svg", ".png")


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        plt.rcParams["svg.fonttype"] = "none"  # text stays text in the SVG: searchable, accessible
    except ImportError:
        raise EnvironmentProblem("plots need matplotlib, which is not installed",
                                 "pip install 'lnrepro[plot]' (or pip install matplotlib)") from None  # fmt: skip
    return plt


def check_path(path: Path) -> None:
    if path.suffix.lower() not in FORMATS:
        raise UsageError(
            f"--plot {path}: the name must end in .svg or .png", "e.g. --plot nightly.svg"
        )


def tolerance_plot(
    series: Mapping[str, Sequence[float]],
    lines: Mapping[str, float],
    title: str,
    xlabel: str,
    path: Path,
) -> None:
    """Write the histogram plot to ``path`` (``.svg`` or ``.png``), atomically."""
    import numpy as np

    from lnrepro.doors.fsio import atomic_write_bytes, write_error

    check_path(path)
    plt = _pyplot()
    values = [np.asarray(v, dtype=float) for v in series.values()]
    positive = np.concatenate(
        [v[v > 0] for v in values] + [np.asarray(list(lines.values()), dtype=float)]
    )
    lo = max(float(positive.min()) if positive.size else 1e-9, 1e-9) / 2
    hi = float(positive.max()) * 2 if positive.size else 1.0
    bins = np.logspace(np.log10(lo), np.log10(hi), 60)
    fig, ax = plt.subplots(figsize=(9, 4.5), layout="constrained")
    for name, v in zip(series, values, strict=True):
        counts, edges = np.histogram(np.clip(v, lo, hi), bins=bins)
        ax.stairs(counts / max(len(v), 1), edges, label=name, linewidth=1.8)
    for i, (label, at) in enumerate(lines.items()):
        ax.axvline(at, color="0.3", linestyle=(0, (4, 3)), linewidth=1)
        ax.annotate(label, (at, 1.0), xycoords=("data", "axes fraction"), xytext=(3, -12 - 12 * i),
                    textcoords="offset points", fontsize=8, color="0.25")  # fmt: skip
    ax.set_xscale("log")
    ax.set_xlim(lo, hi)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("share of draws per bin")
    ax.set_title(title, loc="left", fontsize=11)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    ax.grid(True, which="major", alpha=0.25)
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format=path.suffix.lower().lstrip("."), dpi=120)
    plt.close(fig)
    try:
        atomic_write_bytes(path, buf.getvalue())
    except OSError as exc:
        raise write_error(path, exc) from None
