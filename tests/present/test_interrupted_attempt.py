"""Ctrl-C in ``lnrepro run -n 30`` (issue 48): the attempt it cut short had its counts only on
the transient bar; they are printed as a line of their own, saying that attempt is not kept."""

from __future__ import annotations

import pytest

from lnrepro.errors import Interrupted
from lnrepro.model.gtest import TestResult, TestStatus
from lnrepro.model.record import Attempt
from lnrepro.present.console.progress import RichRunEvents
from tests.present.test_layout import NAMES, piped, terminal


def _attempts(ev: RichRunEvents, cut_after: int) -> None:
    """Attempt 1 of 30 whole, then attempt 2 until Ctrl-C after ``cut_after`` tests."""
    ev.attempt_started(1, 30, ["x"])
    tests = [TestResult(name=n, status=TestStatus.FAILED) for n in NAMES]
    for t in tests:
        ev.test_finished(t)
    ev.attempt_finished(
        Attempt(
            index=1,
            argv=["x"],
            exit_code=1,
            timed_out=False,
            seconds=1.0,
            log="a-1.log",
            tests=tests,
        )
    )
    ev.attempt_started(2, 30, ["x"])
    for i, n in enumerate(NAMES[:cut_after]):
        ev.test_finished(TestResult(name=n, status=TestStatus.PASSED if i else TestStatus.FAILED))
    raise Interrupted()


@pytest.mark.parametrize("where", ["piped", "terminal"])
def test_ctrl_c_prints_the_cut_attempts_counts(where: str) -> None:
    c, buf = piped() if where == "piped" else terminal(80)
    with pytest.raises(Interrupted), RichRunEvents(c) as ev:
        _attempts(ev, cut_after=3)
    lines = [ln.rstrip() for ln in buf.getvalue().splitlines() if ln.strip()]
    said = "attempt 2/30: interrupted after 3 test(s) (1 failed, 2 passed), not kept"
    assert lines[-1].endswith(said), lines[-3:]  # one line, at 80 columns too
    assert any("attempt 1/30: " in ln for ln in lines), lines


def test_ctrl_c_between_attempts_adds_no_line() -> None:
    c, buf = piped()
    with pytest.raises(Interrupted), RichRunEvents(c) as ev:
        ev.attempt_started(1, 30, ["x"])
        ev.attempt_finished(
            Attempt(
                index=1,
                argv=["x"],
                exit_code=0,
                timed_out=False,
                seconds=1.0,
                log="a-1.log",
                tests=[],
            )
        )
        raise Interrupted()
    assert "interrupted" not in buf.getvalue(), buf.getvalue()
