"""``lnrepro shrink`` through the command line: exit codes, --json against its schema, the
rerun line doing what it says, usage errors before anything runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lnrepro.cli import main
from tests.consumers.schemas import errors

SMALL = "BugRepro_Deterministic_2048Features"  # constant data, 100 x 2048: cheap


def test_json_is_the_schemas_and_the_exit_code_says_found(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["shrink", "--test", SMALL, "--json"]) == 1  # a failing case: the kernel is bad
    out = capsys.readouterr().out
    assert errors(out) == []
    doc = json.loads(out)
    assert doc["found"] and doc["case"]["data"]["kind"] == "constant"
    assert doc["rerun"][:2] == ["env", doc["rerun"][1]] and doc["rerun"][1].startswith(
        "LNREPRO_CASE="
    )
    assert doc["evaluations"] >= 1 and doc["source"] is None


def test_the_fixed_kernel_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["shrink", "--test", SMALL, "--kernel-era", "fixed", "--start-runs", "1",
                 "--budget", "40", "--json"]) == 0  # fmt: skip
    doc = json.loads(capsys.readouterr().out)
    assert errors(json.dumps(doc)) == []
    assert not doc["found"] and doc["case"] is None and doc["rerun"] is None


def test_the_rerun_line_runs_exactly_the_case(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["shrink", "--test", SMALL, "--json"]) == 1
    argv = json.loads(capsys.readouterr().out)["rerun"]
    assert argv[0] == "env" and argv[2:4] == ["lnrepro", "run"]
    key, _, value = argv[1].partition("=")
    env = {"PATH": "/usr/bin:/bin", key: value}
    cmd = [sys.executable, "-m", "lnrepro", *argv[3:], "--json", "--record-dir", "runs"]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    [test] = json.loads(done.stdout)["tests"]
    assert test["name"] == "LayerNormBackwardOpTest.LnreproProbe" and test["verdict"] == "FAIL"


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--test", "NoSuchTest"], "is not a test lnrepro models"),
        (["--test", "BugRepro_*"], "matches 7 tests"),
        (["--test", SMALL, "--backend", "local", "--binary", "/bin/true"], "it has no probe"),
        (["--test", SMALL, "--tt-metal", "/tmp", "--command", "true"], "do not go together"),
        (["--test", SMALL, "--confidence", "2"], "--confidence 2 is not from"),
        (["--test", SMALL, "--data", "random"], "--data does not apply"),
        (["--test", SMALL, "--budget", "0"], "--budget 0"),
    ],
)
def test_usage_errors_exit_2_with_one_line(
    args: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["shrink", *args]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1 and "— fix:" in err
