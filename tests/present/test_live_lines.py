"""A run's live ``attempt i/N: STATUS NAME`` lines at 80 columns: a long test name is
never folded in its middle among other words; it stands whole, at the start of a line of its
own, where a terminal's fold does no harm. Piped, each stays one line (``grep FAILED`` finds it)."""

from __future__ import annotations

import pytest

from lnrepro.model.gtest import TestResult, TestStatus
from lnrepro.present.console.progress import RichRunEvents
from tests.present.test_layout import NAMES, piped, terminal

LONG = NAMES[2]  # LayerNormBackwardOpTest.NIGHTLY_MetalLayerNormBw_LargeFeatures_NoL1Fit


def flip(ev: RichRunEvents) -> None:
    """Attempt 12 of 20: the long-named test passed in attempt 11 and fails now."""
    ev.attempt_started(11, 20, ["x"])
    ev.test_finished(TestResult(name=LONG, status=TestStatus.PASSED))
    ev.last.update(ev.now)
    ev.attempt_started(12, 20, ["x"])
    t = TestResult(name=LONG, status=TestStatus.FAILED)
    t.add_metric("dx", "max_diff", 1000.0)
    t.add_metric("dx", "mean_diff", 997.2)
    ev.test_finished(t)


@pytest.mark.parametrize("width", [80, 100])
def test_a_long_name_is_whole_on_a_line_of_its_own_at_80_columns(width: int) -> None:
    c, buf = terminal(width)
    flip(RichRunEvents(c))  # not entered: no bar drawn into the buffer
    lines = buf.getvalue().splitlines()
    assert all(len(ln) <= width for ln in lines), lines  # nothing for the terminal to fold
    [at] = [i for i, ln in enumerate(lines) if LONG in ln]
    assert lines[at].strip() == LONG or lines[at].startswith("attempt 12/20: FAILED  " + LONG)
    head = lines[at] if lines[at].startswith("attempt") else lines[at - 1]
    assert head.startswith("attempt 12/20: FAILED"), lines
    assert "(was PASSED)" in buf.getvalue() and "max_diff=1000" in buf.getvalue()


def test_piped_the_line_stays_one_line() -> None:
    c, buf = piped()
    flip(RichRunEvents(c))
    [line] = [ln for ln in buf.getvalue().splitlines() if LONG in ln]
    assert line.startswith(f"attempt 12/20: FAILED  {LONG}  (was PASSED)"), line
