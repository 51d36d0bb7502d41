"""Plots people would rather look at than read: matplotlib, an optional extra
(``pip install 'lnrepro[plot]'``), writing SVG or PNG by the file's suffix.

``tolerance_plot``: the distribution of the atol each draw needs to pass (dx, rtol 0) on a log x
axis, the share of draws per bin on the y axis. With a ``correct`` series, each defect model gets
a panel of its own over the correct kernel's distribution (grey), so two models whose errors
coincide (double-subtract and the refuted overwrite) are both seen, not one drawn over the other.
The tolerances are vertical lines in every panel, named in a legend below the panels, so no label
overlaps the data or runs off the figure.
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
        raise EnvironmentProblem(
            "plots need matplotlib, which is not installed",
            "pip install 'lnrepro[plot]' (or pip install matplotlib)",
        ) from None
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
    import io

    import numpy as np

    from lnrepro.doors.fsio import atomic_write_bytes, write_error

    check_path(path)
    plt = _pyplot()
    values = {name: np.asarray(v, dtype=float) for name, v in series.items()}
    positive = np.concatenate(
        [v[v > 0] for v in values.values()] + [np.asarray(list(lines.values()), dtype=float)]
    )
    lo = max(float(positive.min()) if positive.size else 1e-9, 1e-9) / 2
    hi = float(positive.max()) * 2 if positive.size else 1.0
    bins = np.logspace(np.log10(lo), np.log10(hi), 60)

    def share(v: Any) -> tuple[Any, Any]:
        counts, edges = np.histogram(np.clip(v, lo, hi), bins=bins)
        return counts / max(len(v), 1), edges

    base = values.get("correct")
    panels = [n for n in values if n != "correct"] if base is not None else [", ".join(values)]
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    fig, axes = plt.subplots(
        len(panels),
        1,
        sharex=True,
        sharey=True,
        squeeze=False,
        figsize=(9, 1.3 + 1.25 * len(panels)),
        layout="constrained",
    )
    styles = [(0, (4, 3)), (0, (1, 2)), (0, (6, 2, 1, 2)), (0, (8, 4))]
    for row, (ax, name) in enumerate(zip(axes[:, 0], panels, strict=True)):
        if base is not None:
            h, edges = share(base)
            ax.stairs(
                h, edges, fill=True, color="0.82", label="correct kernel" if row == 0 else None
            )
            h, edges = share(values[name])
            ax.stairs(h, edges, color=colors[row % len(colors)], linewidth=1.8)
            ax.text(
                0.005,
                0.93,
                name,
                transform=ax.transAxes,
                va="top",
                fontsize=9,
                zorder=5,
                color=colors[row % len(colors)],
                bbox={"facecolor": "white", "edgecolor": "none", "pad": 1.5},
            )
        else:
            for i, (n, v) in enumerate(values.items()):
                h, edges = share(v)
                ax.stairs(h, edges, color=colors[i % len(colors)], linewidth=1.8, label=n)
        for i, (label, at) in enumerate(lines.items()):
            ax.axvline(
                at,
                color="0.3",
                linestyle=styles[i % len(styles)],
                linewidth=1,
                label=label if row == 0 else None,
            )
        ax.grid(True, which="major", alpha=0.25)
        ax.tick_params(labelsize=8)
    ax = axes[-1, 0]
    ax.set_xscale("log")
    ax.set_xlim(lo, hi)
    ax.set_xlabel(xlabel)
    fig.supylabel("share of draws per bin", fontsize=10)
    fig.suptitle(title, x=0.01, ha="left", fontsize=11)
    fig.legend(loc="outside lower center", ncols=len(lines) + 1, fontsize=8, frameon=False)
    buf = io.BytesIO()
    fmt = path.suffix.lower().lstrip(".")
    # no date in an SVG: the same data writes the same file (docs/tolerance-nightly.svg)
    fig.savefig(buf, format=fmt, dpi=120, metadata={"Date": None} if fmt == "svg" else None)
    plt.close(fig)
    try:
        atomic_write_bytes(path, buf.getvalue())
    except OSError as exc:
        raise write_error(path, exc) from None
