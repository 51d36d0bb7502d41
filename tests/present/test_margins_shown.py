"""``run`` says how much of its tolerance a passing test used, per quantity, and ``compare``
shows the margins side by side (issue 47): the emulator's reports, through the real pipeline."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.harness import lnrepro


def test_run_and_compare_show_the_margins_of_passing_tests(
    tmp_path: Path,
) -> None:
    runs = tmp_path / "runs"
    outs = []
    for era in ("2025-12", "fixed"):
        ran = lnrepro("run", "--filter", "*OneTile", "--kernel-era", era, "--record-dir", runs)
        assert ran.code == 0, ran.err
        outs.append(ran.out)
    out = "".join(outs)
    assert (
        "MetalLayerNormBw_OneTile passes, using 50% of its tolerance (dx, worst of 1 run(s))" in out
    )
    assert "dgamma\t2.9%\t0.01443\t0.5\t0.001" in out  # the table, one row per quantity
    a, b = sorted(p.name for p in runs.iterdir())
    ran = lnrepro("compare", "--record-dir", runs, a, b)
    assert ran.code == 0, ran.err
    out = ran.out
    assert "dx 50% dgamma 3% dbeta 2%\tdx 4% dgamma 3% dbeta 2%" in out
    assert "dx used 50% → 4%" in out


def test_a_failure_far_past_its_tolerance_reads_as_a_multiple_not_millions_of_percent(
    tmp_path: Path,
) -> None:
    """The bug's dx is 1000 off with atol 0.01: ``100,000×``, not ``10000000%``."""
    runs = tmp_path / "runs"
    argv = ["run", "--filter", "*Deterministic_256Tiles", "--defect", "shipped"]
    ran = lnrepro(*argv, "--record-dir", runs)
    assert ran.code == 1, ran.err
    out = ran.out
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


def test_run_pytest_loads_the_plugin_and_shows_a_passing_comparisons_margin(
    tmp_path: Path,
) -> None:
    """``run --pytest`` loads lnrepro's plugin into the test process (issue 47): a passing numpy
    comparison says how much of its tolerance it used, at its call site; a test that makes no
    comparison lnrepro reads says the verdict is all there is (no googletest advice)."""
    import subprocess
    import sys

    project = tmp_path / "proj"
    project.mkdir()
    (project / "test_x.py").write_text(
        "import numpy as np\n\n"
        "def test_close():\n"
        "    np.testing.assert_allclose(np.ones(4) + 1e-4, np.ones(4), rtol=0, atol=5e-4)\n\n"
        "def test_plain():\n"
        "    assert 1 + 1 == 2\n",
        encoding="utf-8",
    )
    git = ["git", "-C", str(project), "-c", "user.name=t", "-c", "user.email=t@e"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    argv = ["run", "--repo", str(project), "--python", sys.executable]
    argv += ["--pytest", "test_x.py::test_close", "--pytest", "test_x.py::test_plain"]
    ran = lnrepro(*argv, "--record-dir", tmp_path / "runs")
    assert ran.code == 0, ran.err
    out = ran.out
    assert "test_x.py::test_close passes, using 20% of its tolerance (test_x.py:4," in out
    assert "test_x.py:4\t20.0%\t-\t-\t-" in out
    assert "test_x.py::test_plain passed and made no comparison lnrepro reads" in out
    assert "RecordProperty" not in out
