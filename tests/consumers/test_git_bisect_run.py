"""`git bisect run` with `lnrepro run --bisect-exit-code` as its script, for real (git 2.39).

git's protocol (``git help bisect``, "bisect run"): 0 good, 1-127 but 125 bad, 125 skip, 128 or
more aborts. A commit lnrepro cannot test must be a skip, never "bad", or git names a wrong
culprit; a machine that can test nothing must abort the bisection.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROG = """#!/bin/sh
echo "[==========] Running 1 test from 1 test suite."
echo "[ RUN      ] S.T"
{body}
"""
PASS = 'echo "[       OK ] S.T (1 ms)"\necho "[  PASSED  ] 1 test."\nexit 0'
FAIL = (
    'echo "dx FAILED: max_diff=1000, mean_diff=1004.21"\necho "x.cpp:9: Failure"\n'
    'echo "Value of: dx_close"\necho "[  FAILED  ] S.T (1 ms)"\nexit 1'
)
NO_CHIPS = 'echo "Error: No chips detected in the cluster"\nkill -ABRT $$'


def git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=600
    )


def history(repo: Path, bodies: list[str | None]) -> list[str]:
    """One commit per body: ``prog`` prints it (None: the commit has no ``prog``: untestable)."""
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    shas = []
    for i, body in enumerate(bodies):
        prog = repo / "prog"
        if body is None:
            prog.unlink(missing_ok=True)
        else:
            prog.write_text(PROG.format(body=body))
            prog.chmod(0o755)
        (repo / "n").write_text(f"{i}\n")
        git(repo, "add", "-A")
        assert git(repo, "commit", "-q", "-m", f"c{i}").returncode == 0
        shas.append(git(repo, "rev-parse", "HEAD").stdout.strip())
    return shas


def bisect_run(repo: Path, good: str, bad: str, records: Path) -> subprocess.CompletedProcess[str]:
    git(repo, "bisect", "start", bad, good)
    return git(
        repo,
        "bisect",
        "run",
        sys.executable,
        "-m",
        "lnrepro",
        "run",
        "--backend",
        "local",
        "--binary",
        "prog",
        "--filter",
        "S.*",
        "--bisect-exit-code",
        "--record-dir",
        str(records),
    )


def test_untestable_commits_are_skipped_and_git_names_the_right_culprit(tmp_path: Path) -> None:
    # c0..c3 pass, c4..c7 have no program (untestable), c8 passes, c9.. fail: the culprit is c9
    bodies: list[str | None] = [PASS] * 4 + [None] * 4 + [PASS] + [FAIL] * 7
    shas = history(tmp_path / "r", bodies)
    p = bisect_run(tmp_path / "r", shas[0], shas[-1], tmp_path / "runs")
    assert p.returncode == 0, p.stdout + p.stderr
    assert f"{shas[9]} is the first bad commit" in p.stdout
    log = git(tmp_path / "r", "bisect", "log").stdout
    skipped = {line.split()[-1] for line in log.splitlines() if line.startswith("git bisect skip")}
    assert skipped and skipped <= set(shas[4:8])  # the missing program: skipped, never "bad"


def test_a_missing_program_right_before_the_culprit_is_not_taken_as_bad(tmp_path: Path) -> None:
    """Exactly where an untestable commit read as "bad" made git blame the wrong commit."""
    bodies: list[str | None] = [PASS] * 6 + [None] + [FAIL] * 5
    shas = history(tmp_path / "r", bodies)
    p = bisect_run(tmp_path / "r", shas[0], shas[-1], tmp_path / "runs")
    out = p.stdout + p.stderr
    # git cannot tell c6 (untestable) from c7: it says so, and never names c6 alone
    assert f"{shas[6]} is the first bad commit" not in out
    assert (
        "There are only 'skip'ped commits left to test" in out and shas[7] in out
    ) or f"{shas[7]} is the first bad commit" in out


def test_an_environment_that_can_test_nothing_aborts_the_bisection(tmp_path: Path) -> None:
    shas = history(tmp_path / "r", [NO_CHIPS] * 10)
    p = bisect_run(tmp_path / "r", shas[0], shas[-1], tmp_path / "runs")
    out = p.stdout + p.stderr
    assert p.returncode != 0 and "is the first bad commit" not in out
    assert "bisect run failed" in out and "128" in out  # git's abort, with lnrepro's code
    assert "lnrepro: abort: ENV_ERROR" in out and "No chips detected" in out


def test_a_usage_error_aborts_instead_of_marking_the_commit_bad(tmp_path: Path) -> None:
    shas = history(tmp_path / "r", [PASS] * 3 + [FAIL] * 3)
    repo = tmp_path / "r"
    git(repo, "bisect", "start", shas[-1], shas[0])
    p = git(
        repo,
        "bisect",
        "run",
        sys.executable,
        "-m",
        "lnrepro",
        "run",
        "--backend",
        "local",
        "--binary",
        "prog",
        "--seed",
        "-1",
        "--bisect-exit-code",
    )
    out = p.stdout + p.stderr
    assert "is the first bad commit" not in out and "bisect run failed" in out and "128" in out
