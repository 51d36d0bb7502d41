"""An interrupted run's header counts the attempts it ran of the ones it was asked for ("5 of 30
attempt(s)", never "30 attempt(s)" after 5); a complete run's says its count once."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import msgspec
import pytest

from lnrepro.doors.fsio import write_json
from lnrepro.model.gtest import TestStatus
from lnrepro.model.record import RunState
from tests.bisect.test_rates import BAD, run_record
from tests.harness import lnrepro


def interrupted(base: Path) -> str:
    """A `run -n 30` stopped by Ctrl-C after 5 attempts, as its record says it."""
    rec = run_record(base, "run-1", BAD, [TestStatus.FAILED] * 5)
    tests = msgspec.structs.replace(rec.request.tests, repeat=30)
    rec.request = dataclasses.replace(rec.request, tests=tests)
    rec.state = RunState.INTERRUPTED
    write_json(base / "run-1" / "record.json", rec.to_json())
    return "run-1"


@pytest.mark.parametrize("command", [["show"], ["report"]])
def test_the_header_of_an_interrupted_run_counts_what_ran(
    command: list[str], tmp_path: Path
) -> None:
    rid = interrupted(tmp_path)
    code, out, err = lnrepro(*command, rid, "--record-dir", tmp_path)
    assert code == 0, err
    out = " ".join(out.split())
    assert "30 attempt(s)" not in out.replace("5 of 30 attempt(s)", ""), out
    assert "5 of 30 attempt(s)" in out, out


def test_a_complete_run_says_its_count_once(tmp_path: Path) -> None:
    run_record(tmp_path, "run-1", BAD, [TestStatus.FAILED] * 3)
    code, out, err = lnrepro("show", "run-1", "--record-dir", tmp_path)
    assert code == 0, err
    assert "3 attempt(s)" in out and " of 3 attempt(s)" not in out
