"""``bisect --resume`` takes the ``--record-dir`` the bisect was started with (however it is
written) and refuses another, in one line naming the first; ``--confidence`` takes an explicit
``--repeat 1`` (the default), and refuses ``--repeat 3`` (two ways to handle flakiness)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.harness import assert_one_line_error, lnrepro


def tiny_repo(where: Path, commits: int = 8, bug_from: int = 5) -> list[str]:
    """A repository whose file ``bug`` holds 1 from commit ``bug_from`` on; the shas."""
    where.mkdir()
    git = ["git", "-C", str(where), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    shas = []
    for i in range(commits):
        (where / "bug").write_text("1" if i >= bug_from else "0")
        (where / "n").write_text(str(i))
        subprocess.run([*git, "add", "bug", "n"], check=True)
        subprocess.run([*git, "commit", "-qm", f"c{i}"], check=True)
        shas.append(
            subprocess.run(
                [*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True
            ).stdout.strip()
        )
    return shas


def test_resume_takes_the_record_dir_the_bisect_was_started_with(tmp_path: Path) -> None:
    repo, runs = tmp_path / "repo", tmp_path / "runs"
    shas = tiny_repo(repo)
    start = ["bisect", "--repo", str(repo), "--good", shas[0], "--bad", shas[-1]]
    code, _, err = lnrepro(*start, "--command", "grep -q 0 bug", "--record-dir", runs, "--json")
    assert code == 0, err
    resume = ["bisect", "--repo", str(repo), "--resume", "--json"]
    code, out, err = lnrepro(*resume, "--record-dir", str(runs))
    assert code == 0, err
    assert json.loads(out)["result"]["first_bad"] == shas[5]
    # the same directory, written another way, is the same
    code, _, err = lnrepro(*resume, "--record-dir", f"{tmp_path}/./runs/")
    assert code == 0, err
    # another directory is still a change, and refused
    refused = lnrepro(*resume, "--record-dir", tmp_path / "other")
    # the one it was started with, named
    assert_one_line_error(refused, 2, "--record-dir cannot be changed", str(runs))


def test_confidence_accepts_an_explicit_repeat_1(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shas = tiny_repo(repo)
    argv = ["bisect", "--repo", str(repo), "--good", shas[0], "--bad", shas[-1], "--json"]
    argv += ["--command", "grep -q 0 bug", "--record-dir", str(tmp_path / "runs")]
    code, out, err = lnrepro(*argv, "--confidence", "0.9", "--repeat", "1")
    assert code == 0, err
    assert json.loads(out)["result"]["first_bad"] == shas[5]
    refused = lnrepro(*argv, "--confidence", "0.9", "--repeat", "3")
    assert_one_line_error(refused, 2, "two ways to handle flakiness")
