"""The look-alike's ttnn side, run with pytest as a tt-metal developer runs it (no lnrepro): a
LayerNorm test that checks a PCC with tt-metal's helper, and an op under development whose
kernels deadlock over a circular buffer from one merged branch on, writing the watcher log."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lnrepro.hang.watcher.diagnose import diagnose
from lnrepro.hang.watcher.log import parse_file
from tests.conftest import worktree
from tests.lookalike import HANG_KERNEL, HANG_TEST, PCC_TEST, GroundTruth


def pytest_in(
    tree: Path, node: str, *, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            node,
            "-p",
            "no:cacheprovider",
            f"--junitxml={tree.parent / 'report.xml'}",
        ],
        capture_output=True,
        text=True,
        cwd=tree,
        timeout=timeout,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(tree), **(env or {})},
    )


def test_the_pcc_regression_is_one_main_commit(lookalike: GroundTruth, tmp_path: Path) -> None:
    t = lookalike
    assert t.pcc_culprit in t.first_parent
    before = worktree(
        t, tmp_path / "before", t.first_parent[t.first_parent.index(t.pcc_culprit) - 1]
    )
    at = worktree(t, tmp_path / "at", t.pcc_culprit)
    ok = pytest_in(before, PCC_TEST)
    assert ok.returncode == 0, ok.stdout[-2000:]
    pcc = float(ok.stdout.split("PCC: ", 1)[1].split()[0])
    assert pcc > 0.99999
    bad = pytest_in(at, PCC_TEST)
    assert bad.returncode == 1
    # tt-metal's assert_with_pcc: the message is the PCC's str() and nothing else
    line = next(x for x in bad.stdout.splitlines() if x.startswith("E       AssertionError: "))
    value = float(line.split(": ", 1)[1])
    assert 0.999 < value < 0.9999
    assert not (at / "__pycache__").exists()


def _hang(tree: Path, tmp: Path, env: dict[str, str] | None = None) -> Path:
    """Run the fused op's test until the watcher has written two dumps; kill it; the log."""
    logs = tmp / "logs"
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", HANG_TEST, "-p", "no:cacheprovider"],
        cwd=tree,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env={
            **os.environ,
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONPATH": str(tree),
            "TT_METAL_WATCHER": "200ms",
            "TT_METAL_LOGS_PATH": str(logs),
            **(env or {}),
        },
    )
    log = logs / "generated" / "watcher" / "watcher.log"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if log.is_file() and log.read_text().count("completed at") >= 3:
                break
            time.sleep(0.1)
        assert proc.poll() is None, "the test finished: it was meant to hang"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    return log


def test_the_hang_comes_with_a_merged_branch(lookalike: GroundTruth, tmp_path: Path) -> None:
    t = lookalike
    assert t.hang_merge in t.first_parent and t.hang_culprit not in t.first_parent
    before = worktree(
        t, tmp_path / "before", t.first_parent[t.first_parent.index(t.hang_merge) - 1]
    )
    ok = pytest_in(
        before, HANG_TEST, env={"TT_METAL_WATCHER": "1", "TT_METAL_LOGS_PATH": str(tmp_path / "ok")}
    )
    assert ok.returncode == 0, ok.stdout[-2000:]
    at = worktree(t, tmp_path / "at", t.hang_culprit)
    diag = diagnose(parse_file(_hang(at, tmp_path / "h")))
    assert diag.hung and diag.pattern.name == "CONSUMER_STARVED"
    group = diag.groups[0]
    assert group.kernel == HANG_KERNEL and len(group.cores) == 64 and group.waypoint == "CWFW"


def test_the_flaky_hang_is_another_kernels(lookalike: GroundTruth, tmp_path: Path) -> None:
    """$TT_LOOKALIKE_FLAKE=hang=1: a hang at device open, in eltwise's kernels, not the bug's."""
    t = lookalike
    before = worktree(
        t, tmp_path / "before", t.first_parent[t.first_parent.index(t.hang_merge) - 1]
    )
    diag = diagnose(parse_file(_hang(before, tmp_path / "h", {"TT_LOOKALIKE_FLAKE": "hang=1"})))
    assert diag.hung
    assert "eltwise" in (diag.groups[0].kernel or "") and HANG_KERNEL not in diag.key


@pytest.mark.parametrize("flag", ["pcc-ln", "cb-short-read"])
def test_each_defect_lives_in_kernel_source(lookalike: GroundTruth, flag: str) -> None:
    """The defects are in kernel files the op reads at run time (as tt-metal's JIT compiles
    them), so lnrepro's input hash sees them change."""
    t = lookalike
    sha = t.pcc_culprit if flag == "pcc-ln" else t.hang_culprit
    out = subprocess.run(
        ["git", "-C", t.path, "show", "--name-only", "--format=", sha or ""],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert out and all(p.startswith("ttnn/cpp/") and p.endswith(".cpp") for p in out), out
