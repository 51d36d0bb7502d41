"""The documented Python API, used as docs/api.md shows it: public names only, no CLI."""

from __future__ import annotations

import subprocess
from pathlib import Path

from lnrepro import api
from lnrepro.errors import UsageError
from lnrepro.model.events import Events
from lnrepro.model.gtest import TestResult
from lnrepro.model.record import RunRecord, Verdict
from lnrepro.model.requests import (
    BisectRequest,
    CommandOracleSpec,
    EmulatorSpec,
    RunRequest,
    TestSpec,
)


class Seen(Events):
    def __init__(self) -> None:
        self.tests: list[str] = []

    def test_finished(self, result: TestResult) -> None:
        self.tests.append(f"{result.name} {result.status.value}")


def test_run_then_read_the_record_back(tmp_path: Path) -> None:
    seen = Seen()
    flt = "*BugRepro_Deterministic_2048Features:*NIGHTLY*"
    rec = api.run(RunRequest(EmulatorSpec(), TestSpec(flt, repeat=2), tmp_path), seen)
    assert rec.verdict is Verdict.FAIL and len(seen.tests) == 4
    by = {t.short: t for t in rec.tests}
    assert by["BugRepro_Deterministic_2048Features"].worst_of("max_diff") == ("dx", 1000.0)
    assert by["NIGHTLY_MetalLayerNormBw_LargeFeatures_NoL1Fit"].verdict is Verdict.PASS
    from lnrepro.doors.store import load_path

    again = load_path(rec.record_dir / "record.json")
    assert (
        isinstance(again, RunRecord)
        and again.request == rec.request
        and again.verdict is Verdict.FAIL
    )
    assert rec.rerun[:2] == ["lnrepro", "run"]


def test_a_wrong_request_is_refused_before_anything_exists(tmp_path: Path) -> None:
    try:
        api.run(RunRequest(EmulatorSpec(defect="nope"), TestSpec(), tmp_path / "runs"))
    except UsageError as exc:
        assert "unknown defect" in exc.message and exc.fix
    else:
        raise AssertionError("no error")
    assert not (tmp_path / "runs").exists()


def test_bisect_from_python(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    sh = lambda *a: subprocess.run(["git", "-C", str(repo), *a], check=True, capture_output=True)  # noqa: E731
    sh("init", "-q", "-b", "main")
    for i in range(8):
        (repo / "v").write_text("bad\n" if i >= 5 else "good\n")
        (repo / "n").write_text(f"{i}\n")
        sh("add", "v", "n")
        sh("commit", "-q", "-m", f"c{i}")
    rec = api.bisect(
        BisectRequest(repo, ("main~7",), "main", CommandOracleSpec(("grep", "-q", "good", "v")))
    )
    assert (
        rec.result is not None
        and rec.result.commit is not None
        and rec.result.commit.subject == "c5"
    )
    assert api.bisect_log(repo).result == rec.result
