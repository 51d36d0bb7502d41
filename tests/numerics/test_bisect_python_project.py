"""``lnrepro bisect --pytest NODEID`` over a Python project's history (tests/pyproject_lookalike):
it names the culprit, skips the commit whose setup fails and the one whose tests do not collect,
and never touches the user's environment; bad input is one line with a documented exit code."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lnrepro.errors import ExitCode
from tests.harness import lnrepro
from tests.pyproject_lookalike import TEST_NODE, make_project


def bisect(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``lnrepro bisect ARGS`` in this process, through the tests' one harness."""
    ran = lnrepro("bisect", *args)
    return ran.code, ran.out, ran.err


def test_bisect_names_the_culprit_and_skips_setup_and_collection_failures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "tinynorm"
    shas = make_project(repo)
    before = subprocess.run(
        [sys.executable, "-m", "pip", "freeze"], capture_output=True, text=True, check=True
    ).stdout
    code, out, err = bisect(
        capsys,
        "--backend", "python", "--pytest", TEST_NODE, "--repo", str(repo),
        "--python", sys.executable, "--setup", "python setup_step.py",
        "--good", shas[0], "--bad", shas[-1], "--json",
    )  # fmt: skip
    assert code == ExitCode.OK, err
    doc = json.loads(out)
    assert doc["result"]["first_bad"] == shas[1], doc["result"]
    marks = {s["sha"]: (s["mark"], s["cannot_test"] or "") for s in doc["steps"]}
    assert (
        marks[shas[2]][0] == "skip" and "--setup python setup_step.py exited 1" in marks[shas[2]][1]
    )
    assert marks[shas[3]][0] == "skip" and "no test matches" in marks[shas[3]][1]
    assert all(m != "bad" for sha, (m, _) in marks.items() if sha in shas[2:4])
    # the setup ran in each step's own environment: the user's packages are as they were
    after = subprocess.run(
        [sys.executable, "-m", "pip", "freeze"], capture_output=True, text=True, check=True
    ).stdout
    assert before == after
    assert (
        subprocess.run(
            ["git", "-C", str(repo), "status", "--porcelain"], capture_output=True, text=True
        ).stdout
        == ""
    )


def test_bisect_with_an_image_runs_each_step_s_worktree_in_its_container(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], python_image: str
) -> None:
    repo = tmp_path / "tinynorm"
    shas = make_project(repo)
    code, out, err = bisect(
        capsys,
        "--backend", "python", "--pytest", TEST_NODE, "--repo", str(repo),
        "--image", python_image, "--good", shas[0], "--bad", shas[1], "--json",
    )  # fmt: skip
    assert code == ExitCode.OK, err
    doc = json.loads(out)
    assert doc["result"]["first_bad"] == shas[1], doc["result"]
    assert doc["request"]["oracle"]["backend"]["python"] is None  # the image's python3, not ours
    for step in doc["steps"]:
        rec = json.loads((Path(step["record"]) / "record.json").read_text())
        assert rec["backend"]["runner"]["image"] == python_image
        # the step's worktree was mounted, and its freeze is the container's (Debian's numpy 1.x)
        assert rec["backend"]["project"] != str(repo)
        assert rec["fingerprint"]["python_env"]["packages"]["numpy"].startswith("1.")


def test_bisect_bad_input_is_one_line_with_its_exit_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "tinynorm"
    shas = make_project(repo)
    common = ("--backend", "python", "--pytest", TEST_NODE, "--python", sys.executable)
    plain = tmp_path / "plain"
    plain.mkdir()
    code, out, err = bisect(capsys, *common, "--repo", str(plain), "--good", "a", "--bad", "b")
    assert code == ExitCode.GIT and out == "" and err.count("\n") == 1, err
    code, out, err = bisect(
        capsys, *common, "--repo", str(repo), "--good", shas[-1], "--bad", shas[0]
    )
    assert code == ExitCode.GIT and "swap --good/--bad" in err and err.count("\n") == 1, err
    code, out, err = bisect(
        capsys, "--backend", "python", "--repo", str(repo), "--good", shas[0], "--bad", shas[-1]
    )
    assert code == ExitCode.USAGE and "--pytest" in err and err.count("\n") == 1, err
