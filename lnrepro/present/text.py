"""Plain-text pieces every presenter shares: numbers, metrics, a test's one-line why."""

from __future__ import annotations

from lnrepro.model.gtest import Metrics, TestResult
from lnrepro.model.metrics import UNNAMED

DIFF_KEYS = ("max_diff", "max_abs_diff", "mean_diff")


def fmt_num(value: float) -> str:
    return f"{value:.6g}"


def short(name: str) -> str:
    """A test's name without its suite (``Suite.Test`` -> ``Test``; a pytest node id without
    its file)."""
    from lnrepro.model.gtest import split_name

    return split_name(name)[1] or name


def first_line(text: str, width: int = 80) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= width else line[: width - 1] + "…"


def fmt_metrics(metrics: Metrics) -> str:
    parts = []
    for tensor, values in metrics.items():
        kv = " ".join(f"{k}={fmt_num(v)}" for k, v in values.items())
        parts.append(f"{tensor}: {kv}" if tensor and tensor != UNNAMED else kv)
    return "; ".join(parts)


def worst_text(metrics: Metrics) -> str:
    """The diffs; for a tensor that printed none, the tolerance it exceeded."""
    parts = []
    for tensor, vals in metrics.items():
        slim = {k: v for k, v in vals.items() if k in DIFF_KEYS}
        if slim:
            parts.append(fmt_metrics({tensor: slim}))
        elif "atol" in vals:
            parts.append(
                f"{tensor}: not within rtol={fmt_num(vals.get('rtol', 0))} atol={fmt_num(vals['atol'])}"
            )
        elif vals:
            parts.append(fmt_metrics({tensor: vals}))
    return "; ".join(parts)


def why(t: TestResult) -> str:
    """A test's one-line reason: its crash, its first failure, or its skip message."""
    if t.crash is not None:
        return t.crash.reason
    if t.failures:
        f = t.failures[0]
        where = f"{f.file.rsplit('/', 1)[-1]}:{f.line}: " if f.file else ""
        more = f" (+{len(t.failures) - 1} more)" if len(t.failures) > 1 else ""
        return where + first_line(f.message) + more
    if t.skip_message:
        return first_line(t.skip_message)
    return ""
