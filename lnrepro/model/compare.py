"""Two runs, test by test: verdicts, pass rates, the worst max_diff and PCC, and what changed
(a gtest run and a pytest run alike: the records share one schema)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lnrepro.model.record import RunRecord, TestAggregate

SCHEMA = "lnrepro.compare/2"  # /2: pcc_a, pcc_b


def _num(v: float) -> str:
    return f"{v:.6g}"


@dataclass(frozen=True)
class CompareRow:
    test: str
    verdict_a: str | None
    verdict_b: str | None
    pass_rate_a: float | None
    pass_rate_b: float | None
    max_diff_a: float | None
    max_diff_b: float | None
    change: str
    pcc_a: float | None = None  # the lowest PCC (higher is better)
    pcc_b: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "test": self.test,
            "verdict_a": self.verdict_a,
            "verdict_b": self.verdict_b,
            "pass_rate_a": self.pass_rate_a,
            "pass_rate_b": self.pass_rate_b,
            "max_diff_a": self.max_diff_a,
            "max_diff_b": self.max_diff_b,
            "pcc_a": self.pcc_a,
            "pcc_b": self.pcc_b,
            "change": self.change,
        }


def _max_diff(t: TestAggregate | None) -> float | None:
    m = t.worst_of("max_diff") or t.worst_of("max_abs_diff") if t else None
    return m[1] if m else None


def _pcc(t: TestAggregate | None) -> float | None:
    m = t.worst_of("pcc") if t else None
    return m[1] if m else None


def compare(a: RunRecord, b: RunRecord) -> list[CompareRow]:
    """Per test (in A's order, then B's new ones)."""
    ta = {t.name: t for t in a.tests}
    tb = {t.name: t for t in b.tests}
    rows = []
    for n in [*ta, *(n for n in tb if n not in ta)]:
        x, y = ta.get(n), tb.get(n)
        mx, my = _max_diff(x), _max_diff(y)
        vx = x.verdict.value if x else None
        vy = y.verdict.value if y else None
        change = (
            "only in B"
            if x is None
            else "only in A"
            if y is None
            else (f"{vx} → {vy}" if vx != vy else "same verdict")
        )
        if mx is not None and my is not None and mx != my:
            change += f"; max_diff {_num(mx)} → {_num(my)}"
        px, py = _pcc(x), _pcc(y)
        if px is not None and py is not None and px != py:
            change += f"; pcc {_num(px)} → {_num(py)}"
        rows.append(
            CompareRow(
                n,
                vx,
                vy,
                x.pass_rate if x else None,
                y.pass_rate if y else None,
                mx,
                my,
                change,
                px,
                py,
            )
        )
    return rows


def compare_json(a: RunRecord, b: RunRecord) -> dict[str, Any]:
    return {"schema": SCHEMA, "a": a.id, "b": b.id, "tests": [r.to_json() for r in compare(a, b)]}
