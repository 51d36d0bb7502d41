"""Plain-text pieces every presenter shares: numbers, metrics, a test's one-line why."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lnrepro.model.gtest import Metrics, TestResult, split_name
from lnrepro.model.metrics import UNNAMED

if TYPE_CHECKING:
    from lnrepro.model.bisect import BisectRecord
    from lnrepro.model.record import RunRecord

TOLERANCE_KEYS = ("rtol", "atol")  # the test's bound, read from its assertion: not an error


def fmt_num(value: float | None) -> str:
    return "" if value is None else f"{value:.6g}"


def fmt_pct(value: float | None) -> str:
    return "" if value is None else f"{value:.0%}"


def short(name: str) -> str:
    """A test's name without its suite (``Suite.Test`` -> ``Test``; a pytest node id without
    its file)."""
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


def outside(vals: dict[str, float]) -> str:
    """The one wording of a tolerance a test did not meet (the bound from its failed assertion,
    never an error): ``outside tolerance rtol=… atol=…``."""
    return f"outside tolerance {_bound(vals)}"


NO_VALUE = " (no error value in the log)"


def fmt_metrics(metrics: Metrics) -> str:
    """Each tensor's metrics: what was measured (``max_diff=…``), then the tolerance the test
    compared it with, said to be one (``outside tolerance rtol=… atol=…``); a tensor whose log
    printed no error value says so. The same words as :func:`worst_text` (issue 37's review, 7)."""
    parts = []
    for tensor, values in metrics.items():
        measured = " ".join(
            f"{k}={fmt_num(v)}" for k, v in values.items() if k not in TOLERANCE_KEYS
        )
        if not _bound(values):
            parts.append((tensor, measured))
        elif measured:
            parts.append((tensor, f"{measured} ({outside(values)})"))
        else:
            parts.append((tensor, outside(values) + NO_VALUE))
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
            parts.append((tensor, outside(vals) + NO_VALUE))
    return _joined(parts)


def listed_tests(listing: str) -> list[tuple[str, str]]:
    """``--gtest_list_tests``' two-level listing as whole names (``Suite.Test``, what ``--filter``
    takes), each with its comment (``# GetParam() = 4``) if any, in the listing's order. Lines
    that are not part of the listing (a banner, a log line) are dropped."""
    out: list[tuple[str, str]] = []
    suite = ""
    for raw in listing.splitlines():
        line, _, comment = raw.partition("#")
        name = line.strip()
        if not name:
            continue
        if not raw[:1].isspace():
            suite = name if name.endswith(".") and " " not in name else ""
        elif suite and " " not in name:
            out.append((suite + name, f"# {comment.strip()}" if comment.strip() else ""))
    return out


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
    bits.append(attempts_text(rec))
    return ", ".join(bits)


def attempts_text(rec: RunRecord) -> str:
    """The attempts a run made: "5 of 30 attempt(s)" when it stopped early (Ctrl-C, an error),
    "30 attempt(s)" when it ran them all."""
    asked, done = rec.request.tests.repeat, len(rec.attempts)
    return f"{done} of {asked} attempt(s)" if done < asked else f"{asked} attempt(s)"


def describe_bisect(rec: BisectRecord) -> str:
    """What a bisect was, in one line: its range, repository and how each commit was judged."""
    import shlex

    from lnrepro.model.requests import CommandOracleSpec

    q = rec.request
    good = ", ".join(g[:12] for g in q.good)
    o = q.oracle
    how = (
        f"command {shlex.join(o.argv)}"
        if isinstance(o, CommandOracleSpec)
        else f"run {o.tests.gtest_filter}"
    )
    return f"{good}..{q.bad[:12]} in {q.repo}, {how}, {o.tests.repeat if not isinstance(o, CommandOracleSpec) else o.repeat} attempt(s)"


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
