"""Plain-text pieces every presenter shares: numbers, metrics, a test's one-line why."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lnrepro.model.gtest import Metrics, TestResult
from lnrepro.model.metrics import UNNAMED

if TYPE_CHECKING:
    from lnrepro.model.record import RunRecord

DIFF_KEYS = ("max_diff", "max_abs_diff", "mean_diff")
TOLERANCE_KEYS = ("rtol", "atol")  # the test's bound, read from its assertion: not an error


def fmt_num(value: float) -> str:
    return f"{value:.6g}"


def short(name: str) -> str:
    """A test's name without its suite (``Suite.Test`` -> ``Test``; a pytest node id without
    its file)."""
    from lnrepro.model.gtest import split_name

    return split_name(name)[1] or name


def first_line(text: str, width: int = 80) -> str:
    """The first non-blank line, shortened at a space (never inside a word) to ``width``."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    if len(line) <= width:
        return line
    cut = line[: width - 1].rsplit(" ", 1)[0] if " " in line[: width - 1] else line
    return cut.rstrip() + "…" if cut != line else line


def _joined(parts: list[tuple[str, str]]) -> str:
    """``tensor: text`` parts, tensors that say the same text named once (``dx, dgamma: …``)."""
    order: dict[str, list[str]] = {}
    for tensor, text in parts:
        order.setdefault(text, []).append(tensor)
    out = []
    for text, tensors in order.items():
        names = ", ".join(t for t in tensors if t and t != UNNAMED)
        out.append(f"{names}: {text}" if names else text)
    return "; ".join(out)


def _bound(vals: dict[str, float]) -> str:
    return " ".join(f"{k}={fmt_num(vals[k])}" for k in TOLERANCE_KEYS if k in vals)


def fmt_metrics(metrics: Metrics) -> str:
    """Each tensor's metrics: what was measured (``max_diff=…``), then, marked as such, the
    tolerance the test compared it with (``tolerance rtol=… atol=…``), which is not an error."""
    parts = []
    for tensor, values in metrics.items():
        measured = " ".join(
            f"{k}={fmt_num(v)}" for k, v in values.items() if k not in TOLERANCE_KEYS
        )
        bound = _bound(values)
        parts.append((tensor, " ".join(x for x in (measured, bound and f"tolerance {bound}") if x)))
    return _joined(parts)


def worst_text(metrics: Metrics) -> str:
    """The worst errors measured; for a tensor whose log printed none (an ``allclose`` that only
    failed), the tolerance it did not meet, said to be one."""
    parts = []
    for tensor, vals in metrics.items():
        measured = {k: v for k, v in vals.items() if k not in TOLERANCE_KEYS}
        if measured:
            parts.append((tensor, fmt_metrics({UNNAMED: measured})))
        elif _bound(vals):
            parts.append((tensor, f"outside tolerance {_bound(vals)} (no error value in the log)"))
    return _joined(parts)


def describe_run(rec: RunRecord) -> str:
    """What a run was, in one line: backend, defect or commit, era, arch, seed, data, attempts."""
    b = rec.backend
    kind = str(b.get("backend") or rec.request.backend.kind.value)
    bits = [kind]
    if kind == "emulator":
        bits.append(f"defect {b.get('defect') or 'none'}")
        bits += [f"era {b['kernel_era']}"] if b.get("kernel_era") else []
        bits += [str(b["arch"])] if b.get("arch") else []
        bits.append(f"seed {b['seed']}" if b.get("seed") is not None else "seed default")
        bits.append(f"data {b.get('data') or 'copy'}")
    else:
        commit = rec.fingerprint.get("commit")
        if b.get("runner"):
            bits[0] += f"/{b['runner']}"
        bits.append(f"commit {str(commit)[:12]}" if commit else "commit unknown")
        where = b.get("checkout") or b.get("binary")
        bits += [str(where)] if where else []
    bits.append(f"{rec.request.tests.repeat} attempt(s)")
    return ", ".join(bits)


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
