"""``--command``: any repository's test of a case, git bisect run's exit codes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from lnrepro.shrink.command import verdict_of
from lnrepro.shrink.core import RunVerdict
from tests.harness import assert_one_line_error, lnrepro

# fails (exit 1) on constant data from 3 tiles on; skips (125) at exactly 2 tiles
SCRIPT = """
import json, os, sys
case = json.loads(os.environ["LNREPRO_CASE"])
if case["features"] == 64:
    sys.exit(125)
bad = case["data"]["kind"] == "constant" and case["features"] >= 96
print(f"lnrepro-probe: margin={case['features'] if bad else 0.5}")
sys.exit(1 if bad else 0)
"""


def test_exit_codes_follow_git_bisect_run() -> None:
    assert verdict_of(0, False) is RunVerdict.PASS
    assert verdict_of(1, False) is verdict_of(127, False) is RunVerdict.FAIL
    assert verdict_of(125, False) is verdict_of(124, True) is RunVerdict.SKIP


def test_a_command_shrinks_a_case_it_reads_from_the_environment(tmp_path: Path) -> None:
    script = tmp_path / "probe.py"
    script.write_text(SCRIPT)
    args = [
        "shrink",
        "--test",
        "BugRepro_Deterministic_128Tiles",
        "--command",
        f"{sys.executable} {script}",
        "--json",
        "--record-dir",
        str(tmp_path / "runs"),
    ]
    code, out, err = lnrepro(*args)
    assert code == 1, err
    doc = json.loads(out)
    assert doc["evaluator"] == "command"
    # 96 features fail the command, but the correct kernel's model fails constant data there
    # too (1/96 is not exact in bf16; rstd = 1000): 128 is the smallest reproducer
    assert doc["case"]["features"] == 128 and doc["case"]["data"]["kind"] == "constant"
    assert doc["case"]["seq"] == 1 and doc["margin"] == 128.0  # as the command printed it
    [feat] = [n for n in doc["smaller"] if n["axis"] == "features"]
    assert feat["status"] == "inadmissible" and feat["case"]["features"] == 96
    assert doc["rerun"][0] == "env" and doc["rerun"][2:] == [sys.executable, str(script)]


def test_a_command_killed_by_a_signal_stops_the_search(tmp_path: Path) -> None:
    script = tmp_path / "die.py"
    script.write_text("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n")
    args = [
        "shrink",
        "--test",
        "BugRepro_Deterministic_128Tiles",
        "--command",
        f"{sys.executable} {script}",
        "--record-dir",
        str(tmp_path / "runs"),
    ]
    stopped = lnrepro(*args)
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
    assert_one_line_error(stopped, 5, "128 or more, or a signal")


def test_a_stopped_shrink_resumes_without_running_what_it_judged(tmp_path: Path) -> None:
    """A --command shrink saves each verdict; stopped by its budget, --resume replays them and
    runs only the rest, ending where an uninterrupted shrink ends."""
    count = tmp_path / "count"
    script = tmp_path / "probe.py"
    script.write_text(f"open({str(count)!r}, 'a').write('.')\n" + SCRIPT)
    base = [
        "shrink",
        "--test",
        "BugRepro_Deterministic_128Tiles",
        "--command",
        f"{sys.executable} {script}",
        "--json",
    ]
    code, out, err = lnrepro(*base, "--record-dir", tmp_path / "whole")
    assert code == 1, err
    whole = json.loads(out)
    total = len(count.read_text())
    count.unlink()

    code, out, err = lnrepro(*base, "--record-dir", tmp_path / "cut", "--budget", "12")
    assert code == 1, err
    cut = json.loads(out)
    assert cut["budget_exhausted"] and len(count.read_text()) == 12
    [saved] = (tmp_path / "cut").glob("shrink-*/shrink-state.json")
    code, out, err = lnrepro("shrink", "--resume", saved.parent, "--budget", "600", "--json")
    assert code == 1, err
    done = json.loads(out)
    assert not done["budget_exhausted"] and done["case"] == whole["case"]
    assert len(count.read_text()) == total  # 12 before, the rest after: nothing run twice
    assert done["evaluations"] == whole["evaluations"]
    assert_one_line_error(lnrepro("shrink", "--resume", tmp_path, "--test", "X"), 2)
    assert_one_line_error(lnrepro("shrink", "--resume", tmp_path), 4)  # no saved shrink there
