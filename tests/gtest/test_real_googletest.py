"""The parser against real output of a real googletest program (Debian's libgtest-dev)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from lnrepro.gtest.console import parse_bytes, parse_chunks
from lnrepro.gtest.reportfile import merge, read_report
from lnrepro.model.gtest import TestStatus
from tests.conftest import need, run_binary

pytestmark = pytest.mark.compiler

NOT_CRASH = "--gtest_filter=-Crash.*"


def statuses(run):  # type: ignore[no-untyped-def]
    return {t.name: t.status for t in run.tests}


def test_default_run_every_shape(gtest_binary: Path) -> None:
    code, out = run_binary(gtest_binary, NOT_CRASH)
    assert code == 1
    run = parse_bytes(out, exit_code=code)
    s = statuses(run)
    assert s["Basic.Passes"] is TestStatus.PASSED
    assert s["Basic.FailsTwice"] is TestStatus.FAILED
    assert s["Basic.Skips"] is TestStatus.SKIPPED
    assert s["Basic.DISABLED_NeverRuns"] is TestStatus.DISABLED
    assert s["Basic.Throws"] is TestStatus.FAILED
    assert s["Basic.ForeignMarkers"] is TestStatus.PASSED
    assert s["Typed/0.SizeIsSmall"] is TestStatus.PASSED
    assert s["Typed/1.SizeIsSmall"] is TestStatus.FAILED
    assert s["Numbers/Param.IsEven/1"] is TestStatus.FAILED
    assert s["SuiteSetup.First"] is TestStatus.SKIPPED
    assert "Fake.Inner" not in s, "a marker printed by a test is not a test"
    assert len(run.iterations) == 1
    it = run.iterations[0]
    assert it.finished and it.summary.ran == 13 and it.summary.passed == 5
    assert it.summary.disabled == 1
    assert it.gtest_filter == "-Crash.*"
    assert list(it.suite_failures) == ["SuiteSetup"]
    assert "device open failed in SetUpTestSuite" in it.suite_failures["SuiteSetup"][0].message
    by = {t.name: t for t in run.tests}
    two = by["Basic.FailsTwice"]
    assert [f.line for f in two.failures] == [31, 33]
    assert two.failures[0].file and two.failures[0].file.endswith("gtest_fixture.cpp")
    assert "first" in two.failures[0].message and "second" in two.failures[1].message
    assert "between failures" not in two.failures[0].message, "logger lines end a failure block"
    assert by["Numbers/Param.IsEven/1"].param == "3"
    assert by["Typed/1.SizeIsSmall"].type_param == "double"
    assert by["Basic.Skips"].skip_message == "no Tenstorrent device"
    thrown = by["Basic.Throws"].failures[0]
    assert thrown.file is None and "kernel blew up" in thrown.message
    assert by["Basic.PrintsMetrics"].metrics == {
        "dx": {"max_diff": 1000.0, "mean_diff": 1004.21, "rtol": 1e-3, "atol": 0.5},
        "(unnamed)": {"max_abs_diff": 1.06631},
    }
    assert run.totals()["FAILED"] == 5
    assert not run.ok


def test_repeat_gives_one_iteration_each(gtest_binary: Path) -> None:
    code, out = run_binary(gtest_binary, "--gtest_filter=Basic.*:Numbers/*", "--gtest_repeat=3")
    run = parse_bytes(out, exit_code=code)
    assert [it.index for it in run.iterations] == [1, 2, 3]
    for it in run.iterations:
        names = [t.name for t in it.tests]
        assert "Basic.FailsTwice" in names and "Numbers/Param.IsEven/2" in names
        assert it.finished


def test_brief_shows_failures_only(gtest_binary: Path) -> None:
    code, out = run_binary(gtest_binary, NOT_CRASH, "--gtest_brief=1")
    run = parse_bytes(out, exit_code=code)
    s = statuses(run)
    assert s["Basic.FailsTwice"] is TestStatus.FAILED
    assert s["Numbers/Param.IsEven/1"] is TestStatus.FAILED
    assert "Basic.Passes" not in s  # brief mode does not print passing tests
    by = {t.name: t for t in run.tests}
    assert [f.line for f in by["Basic.FailsTwice"].failures] == [31, 33]
    assert by["Basic.PrintsMetrics"].metrics["dx"]["max_diff"] == 1000.0


def test_shuffle_and_seed(gtest_binary: Path) -> None:
    code, out = run_binary(gtest_binary, NOT_CRASH, "--gtest_shuffle", "--gtest_random_seed=7")
    run = parse_bytes(out, exit_code=code)
    assert run.iterations[0].random_seed == 7
    assert len(run.tests) == 14


def test_shard_note(gtest_binary: Path) -> None:
    code, out = run_binary(
        gtest_binary, NOT_CRASH, env={"GTEST_TOTAL_SHARDS": "2", "GTEST_SHARD_INDEX": "1"}
    )
    run = parse_bytes(out, exit_code=code)
    assert run.iterations[0].shard == (2, 2)


def test_colour_output_parses_the_same(gtest_binary: Path) -> None:
    _, plain = run_binary(gtest_binary, NOT_CRASH, "--gtest_color=no")
    code, coloured = run_binary(gtest_binary, NOT_CRASH, "--gtest_color=yes")
    assert b"\x1b[" in coloured
    a = parse_bytes(plain, exit_code=code)
    b = parse_bytes(coloured, exit_code=code)
    assert [(t.name, t.status, len(t.failures)) for t in a.tests] == [
        (t.name, t.status, len(t.failures)) for t in b.tests
    ]


@pytest.mark.parametrize(
    ("test", "status", "signal"),
    [
        ("Crash.Segfault", TestStatus.CRASHED, "SIGSEGV"),
        ("Crash.Abort", TestStatus.CRASHED, "SIGABRT"),
        ("Crash.Terminate", TestStatus.CRASHED, "SIGABRT"),
        ("Crash.Exit", TestStatus.CRASHED, None),
    ],
)
def test_crash_is_never_dropped(
    gtest_binary: Path, test: str, status: TestStatus, signal: str | None
) -> None:
    code, out = run_binary(gtest_binary, f"--gtest_filter={test}")
    assert code != 0
    shell_code = 128 - code if code < 0 else code
    for given in (code, shell_code):
        run = parse_bytes(out, exit_code=given)
        [t] = run.tests
        assert t.name == test and t.status is status
        assert t.crash is not None and t.crash.signal == signal
        assert run.warnings, "an unfinished iteration is reported"
    # without an exit status the test is still CRASHED, never PASSED
    [t] = parse_bytes(out).tests
    assert t.status is TestStatus.CRASHED


def test_hang_killed_by_timeout(gtest_binary: Path) -> None:
    need(shutil.which("timeout") is not None, "coreutils timeout is missing")
    code, out = run_binary(gtest_binary, "--gtest_filter=Crash.Hang", wrap=["timeout", "1"])
    assert code == 124
    [t] = parse_bytes(out, exit_code=code).tests
    assert t.status is TestStatus.TIMEOUT
    code, out = run_binary(
        gtest_binary, "--gtest_filter=Crash.Hang", wrap=["timeout", "-s", "KILL", "1"]
    )
    assert code in (137, -9)
    [t] = parse_bytes(out, exit_code=code).tests
    assert t.status is TestStatus.TIMEOUT


@pytest.mark.parametrize("fmt", ["json", "xml"])
def test_reports_agree_with_console(gtest_binary: Path, tmp_path: Path, fmt: str) -> None:
    report = tmp_path / f"r.{fmt}"
    code, out = run_binary(gtest_binary, NOT_CRASH, f"--gtest_output={fmt}:{report}")
    rep = read_report(report)
    console = parse_bytes(out, exit_code=code)
    from_report = {t.name: t.status for t in rep.tests}
    assert from_report == statuses(console)
    merged = merge(console, rep)
    assert not merged.warnings
    # googletest 1.12 leaves suite set-up failures out of the report; the console has them
    assert "SuiteSetup" in merged.iterations[0].suite_failures
    by = {t.name: t for t in merged.tests}
    assert by["Basic.PrintsMetrics"].metrics["dx"]["max_diff"] == 1000.0  # console keeps metrics
    assert by["Numbers/Param.IsEven/1"].param == "3"


def test_brief_console_plus_report_recovers_passes(gtest_binary: Path, tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    code, out = run_binary(
        gtest_binary, NOT_CRASH, "--gtest_brief=1", f"--gtest_output=json:{report}"
    )
    merged = merge(parse_bytes(out, exit_code=code), read_report(report))
    s = statuses(merged)
    assert s["Basic.Passes"] is TestStatus.PASSED
    assert s["Basic.FailsTwice"] is TestStatus.FAILED
    assert len(s) == 14
    assert "Fake.Inner" not in s, "the report shows a marker printed by a test was not a test"


def test_stale_report_is_ignored_with_a_warning(gtest_binary: Path, tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    run_binary(gtest_binary, "--gtest_filter=Basic.Passes", f"--gtest_output=json:{report}")
    doc = json.loads(report.read_text())
    doc["testsuites"][0]["testsuite"][0]["failures"] = [{"failure": "x.cc:1\nboom", "type": ""}]
    report.write_text(json.dumps(doc))
    code, out = run_binary(gtest_binary, "--gtest_filter=Basic.Passes")
    merged = merge(parse_bytes(out, exit_code=code), read_report(report))
    assert merged.tests[0].status is TestStatus.PASSED
    assert any("does not belong" in w for w in merged.warnings)


def test_chunked_real_output_matches_whole(gtest_binary: Path) -> None:
    code, out = run_binary(gtest_binary, NOT_CRASH, "--gtest_repeat=2", "--gtest_color=yes")
    whole = parse_bytes(out, exit_code=code).to_json()
    for size in (1, 7, 64, 4096):
        parts = [out[i : i + size] for i in range(0, len(out), size)]
        assert parse_chunks(parts, exit_code=code).to_json() == whole


def test_crash_in_second_process_of_a_concatenated_log(gtest_binary: Path) -> None:
    _, first = run_binary(gtest_binary, "--gtest_filter=Crash.Segfault")
    code, second = run_binary(gtest_binary, "--gtest_filter=Basic.Passes")
    run = parse_bytes(first + second, exit_code=code)
    assert [(t.iteration, t.name, t.status) for t in run.tests] == [
        (1, "Crash.Segfault", TestStatus.CRASHED),
        (2, "Basic.Passes", TestStatus.PASSED),
    ]
