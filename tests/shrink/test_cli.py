"""``lnrepro shrink`` through the command line: exit codes, --json against its schema, the
rerun line doing what it says, usage errors before anything runs."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from lnrepro import options
from lnrepro.model.requests import TtMetalSpec
from lnrepro.model.shrink import ShrinkRequest
from tests.consumers.schemas import errors
from tests.harness import assert_one_line_error, lnrepro

SMALL = "BugRepro_Deterministic_2048Features"  # constant data, 100 x 2048: cheap


def test_json_is_the_schemas_and_the_exit_code_says_found() -> None:
    code, out, err = lnrepro("shrink", "--test", SMALL, "--json")
    assert code == 1, err  # a failing case: the kernel is bad
    assert errors(out) == []
    doc = json.loads(out)
    assert doc["found"] and doc["case"]["data"]["kind"] == "constant"
    assert doc["rerun"][:2] == ["env", doc["rerun"][1]] and doc["rerun"][1].startswith(
        "LNREPRO_CASE="
    )
    assert doc["evaluations"] >= 1 and doc["source"] is None


def test_the_fixed_kernel_exits_0() -> None:
    argv = ["--kernel-era", "fixed", "--start-runs", "1", "--budget", "40", "--json"]
    code, out, err = lnrepro("shrink", "--test", SMALL, *argv)
    assert code == 0, err
    doc = json.loads(out)
    assert errors(json.dumps(doc)) == []
    assert not doc["found"] and doc["case"] is None and doc["rerun"] is None


def test_the_rerun_line_runs_exactly_the_case(tmp_path: Path) -> None:
    code, out, err = lnrepro("shrink", "--test", SMALL, "--json")
    assert code == 1, err
    argv = json.loads(out)["rerun"]
    assert argv[0] == "env" and argv[2:4] == ["lnrepro", "run"]
    key, _, value = argv[1].partition("=")
    env = {"PATH": "/usr/bin:/bin", key: value}
    cmd = [sys.executable, "-m", "lnrepro", *argv[3:], "--json", "--record-dir", "runs"]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    [test] = json.loads(done.stdout)["tests"]
    assert test["name"] == "LayerNormBackwardOpTest.LnreproProbe" and test["verdict"] == "FAIL"
    # that run's own record (show, report) reruns the same case: its rerun line carries the
    # environment that selects it (without it, the line finds no test)
    again = json.loads(done.stdout)["rerun"]
    assert again[:2] == argv[:2] and again[2:4] == ["lnrepro", "run"], again
    bare = {"PATH": "/usr/bin:/bin"}  # the case comes from the line itself, not from here
    cmd = [sys.executable, "-m", "lnrepro", *again[3:], "--json"]
    redone = subprocess.run(
        ["env", again[1], *cmd], env=bare, capture_output=True, text=True, cwd=tmp_path
    )
    [test] = json.loads(redone.stdout)["tests"]
    assert test["verdict"] == "FAIL" and json.loads(redone.stdout)["rerun"] == again


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
        (["--test", SMALL, "--budget", "5"], "leaves no run after the start's 5"),
        (["--test", SMALL, "--start-runs", "0"], "--start-runs 0"),
        (["--test", SMALL, "--seed", "-1"], "--seed -1"),
        (["--test", SMALL, "--source", "/"], "is a directory"),
        ([], "needs a test to start from"),
    ],
)
def test_usage_errors_exit_2_with_one_line(args: list[str], needle: str) -> None:
    assert_one_line_error(lnrepro("shrink", *args), 2, needle, "— fix:")


def test_a_run_record_gives_the_test_its_backend_and_pass_rate(tmp_path: Path) -> None:
    runs = str(tmp_path / "runs")
    filt = "*BugRepro_Deterministic_2048Features:*MetalLayerNormBw_OneTile"
    argv = ["--defect", "double-subtract", "--filter", filt, "-n", "2", "--record-dir", runs]
    code, _, err = lnrepro("run", *argv)
    assert code == 1, err
    code, out, err = lnrepro("shrink", "--run", "last", "--record-dir", runs, "--json")
    assert code == 1, err
    doc = json.loads(out)
    req = doc["request"]
    assert req["test"] == "LayerNormBackwardOpTest.BugRepro_Deterministic_2048Features"  # failing
    assert req["backend"]["defect"] == "double-subtract" and req["known_start"] == [2, 0]
    assert doc["start"]["runs"] == 2 and doc["repeats"] == 2  # as many in a row as the run
    # the run's passing test, asked for: shrink starts from a pass
    code, out, err = lnrepro(
        "shrink",
        "--run",
        "last",
        "--test",
        "MetalLayerNormBw_OneTile",
        "--record-dir",
        runs,
        "--json",
    )
    assert code == 1, err
    doc = json.loads(out)
    assert doc["start"]["passes"] == 2 and doc["found"] and doc["case"]["features"] <= 20
    assert_one_line_error(
        lnrepro("shrink", "--run", "last", "--defect", "none", "--record-dir", runs),
        2,
        "--run takes the run's backend; --defect",
    )
    assert_one_line_error(
        lnrepro("shrink", "--run", "last", "--test", "NIGHTLY_*", "--record-dir", runs),
        2,
        "did not run",
    )


def test_a_checkout_shrink_s_rerun_line_keeps_its_timeout() -> None:
    """Before the table, the rerun line wrote --timeout only with --command."""
    req = ShrinkRequest(test=SMALL, backend=TtMetalSpec(checkout=Path("/src/tt-metal")))
    args = options.argv(dataclasses.replace(req, timeout_s=30.0, source_flavour="lookalike"))
    assert args[args.index("--timeout") + 1] == "30"
    assert args[args.index("--source-for") + 1] == "lookalike"
    assert "--timeout" not in options.argv(req)  # the default is left out


def test_resume_refuses_a_new_start(tmp_path: Path) -> None:
    for start in (["--test", SMALL], ["--pytest", "t.py::t"], ["--command", "true"]):
        assert_one_line_error(
            lnrepro("shrink", "--resume", tmp_path, *start),
            2,
            "--resume goes on with the saved request",
            "drop --test, --pytest, --run and --command (only --budget may change)",
        )
