"""``run`` says how much of its tolerance a passing test used, per quantity, and ``compare``
shows the margins side by side (issue 47): the emulator's reports, through the real pipeline."""

from __future__ import annotations

from pathlib import Path

import pytest

from lnrepro.cli import main as cli_main


def test_run_and_compare_show_the_margins_of_passing_tests(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs"
    for era in ("2025-12", "fixed"):
        code = cli_main(
            ["run", "--filter", "*OneTile", "--kernel-era", era, "--record-dir", str(runs)]
        )
        assert code == 0
    out = capsys.readouterr().out
    assert (
        "MetalLayerNormBw_OneTile passes, using 50% of its tolerance (dx, worst of 1 run(s))" in out
    )
    assert "dgamma\t2.9%\t0.01443\t0.5\t0.001" in out  # the table, one row per quantity
    a, b = sorted(p.name for p in runs.iterdir())
    assert cli_main(["compare", "--record-dir", str(runs), a, b]) == 0
    out = capsys.readouterr().out
    assert "dx 50% dgamma 3% dbeta 2%\tdx 4% dgamma 3% dbeta 2%" in out
    assert "dx used 50% → 4%" in out


def test_a_failure_far_past_its_tolerance_reads_as_a_multiple_not_millions_of_percent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The bug's dx is 1000 off with atol 0.01: ``100,000×``, not ``10000000%``."""
    runs = tmp_path / "runs"
    argv = ["run", "--filter", "*Deterministic_256Tiles", "--defect", "shipped"]
    assert cli_main([*argv, "--record-dir", str(runs)]) == 1
    out = capsys.readouterr().out
    assert "fails, using 100,000× its tolerance (dx, worst of 1 run(s))" in out
    assert "dx\t100,000×\t1000\t0.01\t0.01" in out
    assert "%" not in "".join(line for line in out.splitlines() if "100,000" in line)


@pytest.mark.parametrize(
    ("used", "text"),
    [(0.113, "11%"), (9.994, "999%"), (10.0, "10×"), (1e5, "100,000×"), (float("inf"), "∞×")],
)
def test_a_share_of_tolerance_is_percent_below_ten_times_and_a_multiple_above(
    used: float, text: str
) -> None:
    from lnrepro.model.metrics import share

    assert share(used) == text
