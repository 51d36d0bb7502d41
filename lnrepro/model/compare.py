"""Two runs, test by test: verdicts, pass rates, the worst max_diff and PCC, and what changed
(a gtest run and a pytest run alike: the records share one schema)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from lnrepro.model.codec import Real
from lnrepro.model.metrics import share
from lnrepro.model.record import RunRecord, TestAggregate, Verdict

SCHEMA: Literal["lnrepro.compare/3"] = (
    "lnrepro.compare/3"  # /2: pcc_a, pcc_b; /3: margins_a, margins_b
)


def _num(v: float) -> str:
    return f"{v:.6g}"


@dataclass(frozen=True, kw_only=True)
class CompareRow:
    """One test of two runs side by side (B is the later run)."""

    test: str
    verdict_a: Verdict | None
    verdict_b: Verdict | None
    pass_rate_a: float | None
    pass_rate_b: float | None
    max_diff_a: Real | None
    max_diff_b: Real | None
    pcc_a: Real | None  # the lowest PCC (higher is better)
    pcc_b: Real | None
    change: str
    # each quantity's share of its tolerance used, worst over the runs (issue 47: passes too)
    margins_a: dict[str, Real] = field(default_factory=dict)
    margins_b: dict[str, Real] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class CompareDoc:
    """``lnrepro compare --json``: every test of run ``a`` and run ``b``."""

    schema: Literal["lnrepro.compare/3"] = SCHEMA
    a: str
    b: str
    tests: tuple[CompareRow, ...]
    # what differs in the tests' Python environments: packages, numerics variables, Python
    environment: tuple[str, ...] = ()


def environment_changes(a: RunRecord, b: RunRecord) -> list[str]:
    """What differs between two runs' Python environments (a Python project's runs keep their
    packages and numerics variables in ``fingerprint.python_env``): ``numpy 1.26.4 → 2.0.2``,
    ``NPY_PROMOTION_STATE unset → weak``. Empty when either run kept none."""
    from lnrepro.model.pyenv import differences

    ea, eb = a.fingerprint.get("python_env"), b.fingerprint.get("python_env")
    if not isinstance(ea, dict) or not isinstance(eb, dict):
        return []
    return differences(ea, eb)


def _max_diff(t: TestAggregate | None) -> float | None:
    m = t.worst_of("max_diff") or t.worst_of("max_abs_diff") if t else None
    return m[1] if m else None


def _pcc(t: TestAggregate | None) -> float | None:
    m = t.worst_of("pcc") if t else None
    return m[1] if m else None


def margins(t: TestAggregate | None) -> dict[str, float]:
    """Tensor -> the share of its tolerance used (``used``), worst over the runs."""
    return {k: v["used"] for k, v in t.worst.items() if "used" in v} if t else {}


def compare(a: RunRecord, b: RunRecord) -> list[CompareRow]:
    """Per test (in A's order, then B's new ones)."""
    ta = {t.name: t for t in a.tests}
    tb = {t.name: t for t in b.tests}
    rows = []
    for n in [*ta, *(n for n in tb if n not in ta)]:
        x, y = ta.get(n), tb.get(n)
        mx, my = _max_diff(x), _max_diff(y)
        vx = x.verdict if x else None
        vy = y.verdict if y else None
        change = (
            "only in B"
            if x is None
            else "only in A"
            if y is None
            else (f"{x.verdict.value} → {y.verdict.value}" if vx != vy else "same verdict")
        )
        if mx is not None and my is not None and mx != my:
            change += f"; max_diff {_num(mx)} → {_num(my)}"
        ma, mb = margins(x), margins(y)
        for q in (q for q in ma if q in mb and ma[q] != mb[q]):
            change += f"; {q} used {share(ma[q])} → {share(mb[q])}"
        px, py = _pcc(x), _pcc(y)
        if px is not None and py is not None and px != py:
            change += f"; pcc {_num(px)} → {_num(py)}"
        rows.append(
            CompareRow(
                test=n,
                verdict_a=vx,
                verdict_b=vy,
                pass_rate_a=x.pass_rate if x else None,
                pass_rate_b=y.pass_rate if y else None,
                max_diff_a=mx,
                max_diff_b=my,
                pcc_a=px,
                pcc_b=py,
                change=change,
                margins_a=ma,
                margins_b=mb,
            )
        )
    return rows
