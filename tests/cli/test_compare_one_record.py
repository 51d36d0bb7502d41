"""``compare`` of a record with itself (``last last``, or ``last`` and its id) says both sides
are one record, naming it."""

from __future__ import annotations

from pathlib import Path

from tests.harness import lnrepro


def test_comparing_a_record_with_itself_says_both_sides_are_one_record(tmp_path: Path) -> None:
    runs = str(tmp_path / "runs")
    one = "LayerNormBackwardOpTest.BugRepro_Deterministic_2048Features"
    code, _, err = lnrepro("run", "--filter", one, "--record-dir", runs)
    assert code == 1, err
    [rec] = [p.name for p in (tmp_path / "runs").iterdir()]
    code, _, err = lnrepro("compare", "last", "last", "--record-dir", runs)
    assert code == 0, err
    assert f"both sides are one record ({rec})" in err, err
    code, _, err = lnrepro("compare", "last", rec, "--record-dir", runs)
    assert code == 0, err
    assert f"both sides are one record ({rec})" in err, err
