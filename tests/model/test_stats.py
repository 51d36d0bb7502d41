from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lnrepro.model.stats import wilson


def test_known_values() -> None:
    # reference values from the closed form (Wilson 1927), z = 1.96
    lo, hi = wilson(5, 5)
    assert lo == pytest.approx(0.5655, abs=1e-4) and hi == 1.0
    lo, hi = wilson(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)
    lo, hi = wilson(7, 10)
    assert lo == pytest.approx(0.3968, abs=1e-4) and hi == pytest.approx(0.8922, abs=1e-4)


def test_no_trials_is_total_ignorance() -> None:
    assert wilson(0, 0) == (0.0, 1.0)


def test_rejects_impossible_counts() -> None:
    with pytest.raises(ValueError):
        wilson(3, 2)


@given(st.integers(1, 500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_interval_contains_estimate_and_narrows(kn: tuple[int, int]) -> None:
    k, n = kn
    lo, hi = wilson(k, n)
    assert 0.0 <= lo <= k / n <= hi <= 1.0
    lo4, hi4 = wilson(4 * k, 4 * n)
    assert hi4 - lo4 <= hi - lo + 1e-12
