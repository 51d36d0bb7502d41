"""``compare last last``: both sides are one record, and compare says so (issue 48)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lnrepro.cli.exits import _main


def test_comparing_a_record_with_itself_says_both_sides_are_one_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = str(tmp_path / "runs")
    one = "LayerNormBackwardOpTest.BugRepro_Deterministic_2048Features"
    assert _main(["run", "--filter", one, "--record-dir", runs]) == 1
    [rec] = [p.name for p in (tmp_path / "runs").iterdir()]
    capsys.readouterr()
    assert _main(["compare", "last", "last", "--record-dir", runs]) == 0
    err = capsys.readouterr().err
    assert f"both sides are one record ({rec})" in err, err
    assert _main(["compare", "last", rec, "--record-dir", runs]) == 0
    assert f"both sides are one record ({rec})" in capsys.readouterr().err
