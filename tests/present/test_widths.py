"""What each command shows at 60, 80 and 200 columns and piped: every name, status, date and fix
command whole on its line. Each test failed on the code before its fix."""

from __future__ import annotations

import io
import re
import shlex
from pathlib import Path

import pytest
from rich.console import Console

from lnrepro.doors.store import Entry
from lnrepro.envcheck import EnvReport
from lnrepro.envcheck.checks import Result, Status
from lnrepro.model.gtest import Failure, GtestRun, Iteration, TestResult, TestStatus
from lnrepro.model.listing import ListedState, RecordKind
from lnrepro.model.record import Attempt
from lnrepro.present.console import (
    RichRunEvents,
    render_env,
    render_explain,
    render_gtest_run,
    render_records,
    render_run,
)
from lnrepro.present.markdown import run_markdown
from lnrepro.studies.model_fit import ExplainMeta, ModelFit, Residual, TestFit
from tests.present.test_layout import NAMES, SUITE, a_record, piped, terminal, whole

WIDTHS = [60, 80, 200, None]  # None: piped


def console(width: int | None) -> tuple[Console, io.StringIO]:
    return terminal(width) if width else piped()


# ------------------------------------------------------------------ 5, 12: env-check
MOUNT = (
    "sudo mkdir -p /dev/hugepages-1G && "
    "sudo mount -t hugetlbfs -o pagesize=1G nodev /dev/hugepages-1G"
)


def env_report(container: bool = False) -> EnvReport:
    host = [
        Result("docker", Status.OK, "docker 27.1 reachable"),
        Result(
            "hugepages-mount",
            Status.FAIL,
            "no hugetlbfs mounted at /dev/hugepages-1G",
            "mount hugetlbfs with 1 GiB pages at /dev/hugepages-1G; in a container: "
            "-v /dev/hugepages-1G:/dev/hugepages-1G (lnrepro does)",
            MOUNT,
        ),
    ]
    r = EnvReport("host", host)
    if container:
        r.container = [
            Result("docker", Status.SKIP, "judged on the host"),
            Result("hugepages-mount", Status.OK, "hugetlbfs pagesize=1G at /dev/hugepages-1G"),
        ]
        r.container_command = "docker run --rm img sh -c '<probe>'"
    return r


@pytest.mark.parametrize("width", WIDTHS)
def test_env_check_prints_each_fix_command_on_one_line_of_shell(width: int | None) -> None:
    """Was: ``sudo mount … nodev`` / ``/dev/hugepages-1G; in a container: -v …`` in a cell."""
    c, buf = console(width)
    render_env(env_report(), c)
    lines = buf.getvalue().splitlines()
    (line,) = [ln for ln in lines if ln.startswith("fix hugepages-mount: ")]
    assert line.removeprefix("fix hugepages-mount: ") == MOUNT  # whole, and nothing else on it
    assert shlex.split(line.split(": ", 1)[1])[:3] == ["sudo", "mkdir", "-p"]
    assert any("in a container" in ln for ln in lines if not ln.startswith("fix "))


@pytest.mark.parametrize("width", [60, 80])
def test_env_check_container_labels_both_verdicts_and_shows_the_skip_reason(width: int) -> None:
    """Was: ``OK  SKIP  docker`` (which is the host?), the container's SKIP reason lost."""
    c, buf = terminal(width)
    render_env(env_report(container=True), c)
    out = buf.getvalue()
    assert re.search(r"host OK\s+container SKIP\s+docker", out), out
    assert re.search(r"container: judged\s+on\s+the\s+host", out), out


# ------------------------------------------------------------------ 6: names whole
def test_the_markdown_report_names_tests_whole() -> None:
    """Was: the report's tables said ``NIGHTLY_…`` without ``LayerNormBackwardOpTest.``."""
    md = run_markdown(a_record(), {})
    rows = [ln for ln in md.splitlines() if ln.startswith("| ") and "NIGHTLY" in ln]
    assert rows and all(
        f"| {SUITE}.NIGHTLY_MetalLayerNormBw_LargeFeatures_NoL1Fit |" in r for r in rows
    )


def test_tolerance_names_tests_whole() -> None:
    from lnrepro.studies.tolerance import seeds_table

    name = f"{SUITE}.BugRepro_Deterministic_2048Features"
    (row,) = seeds_table([name], trials=2)
    assert row.test == name


@pytest.mark.parametrize("width", [60, 80])
def test_the_progress_bar_keeps_the_name_and_the_elapsed_time_whole(width: int) -> None:
    """Was: ``attempt 5/30: NIGHTLY_MetalLayerNormBw_LargeFeatures_NoL1F…``, ``11/50 0:00…``."""
    c, buf = terminal(width)
    ev = RichRunEvents(c)
    ev.attempt_started(11, 50, ["x"])
    ev.test_started(NAMES[2])
    c.print(*ev.progress.get_renderables())
    out = buf.getvalue()
    assert "…" not in out and "0/50 0:00:00" in out, out
    assert NAMES[2] in "".join(ln.strip() for ln in out.splitlines()), out


# ------------------------------------------------------------------ 8: run -n N's live lines
def attempt(index: int, flaky_fails: bool) -> list[TestResult]:
    out = []
    for name in NAMES:
        bad = "Deterministic" in name or ("TightTolerance" in name and flaky_fails)
        t = TestResult(
            name=name,
            status=TestStatus.FAILED if bad else TestStatus.PASSED,
            duration_ms=5.0,
        )
        if bad:
            t.add_metric("dx", "max_diff", 1000.0)
        out.append(t)
    return out


def test_run_n_prints_a_line_per_attempt_and_only_the_changes() -> None:
    """Was: ``run -n 50`` wrote a PASSED/FAILED line per test per attempt (~400 lines), with
    no attempt number."""
    c, buf = piped()
    with RichRunEvents(c) as ev:
        for i in range(1, 21):
            tests = attempt(i, flaky_fails=i == 7)
            ev.attempt_started(i, 20, ["x"])
            for t in tests:
                ev.test_started(t.name)
                ev.test_finished(t)
            ev.attempt_finished(
                Attempt(
                    index=i,
                    argv=["x"],
                    exit_code=1,
                    timed_out=False,
                    seconds=1.5,
                    log=f"attempt-{i}.log",
                    tests=tests,
                )
            )
    lines = buf.getvalue().splitlines()
    assert all(re.match(r"attempt \d+/20: ", ln) for ln in lines), lines
    counts = [ln for ln in lines if re.match(r"attempt \d+/20: \d+ failed", ln)]
    assert len(counts) == 20 and counts[0] == "attempt 1/20: 2 failed, 2 passed in 1.5 s"
    tests = [ln for ln in lines if ln not in counts]
    assert [ln.split()[:3] for ln in tests] == [
        ["attempt", "1/20:", "FAILED"],
        ["attempt", "1/20:", "FAILED"],  # the first attempt's failures
        ["attempt", "7/20:", "FAILED"],
        ["attempt", "8/20:", "PASSED"],  # a flaky test flips, then back
    ], tests
    assert NAMES[3] in tests[2] and "(was PASSED)" in tests[2] and "(was FAILED)" in tests[3]


# ------------------------------------------------------------------ 9: tolerance shows progress
def test_working_writes_progress_lines_to_a_log() -> None:
    """Was: ``tolerance`` was silent for 72 s when its stderr was not a terminal."""
    from lnrepro.present.console import Working

    c, buf = piped()
    with Working(c, "tolerance: sampling") as w:
        for d in range(1, 4):
            w.update(f"tolerance: {NAMES[2]} draw {d}/3", NAMES[2])
        w.update(f"tolerance: {NAMES[3]} draw 1/3", NAMES[3])
    assert buf.getvalue().splitlines() == [
        "tolerance: sampling",
        f"tolerance: {NAMES[2]} draw 1/3",
        f"tolerance: {NAMES[3]} draw 1/3",
    ]


# ------------------------------------------------------------------ 7: one wording
def test_junit_says_a_tolerance_as_run_does() -> None:
    """Was: JUnit system-out said ``dx, dgamma, dbeta: tolerance rtol=0.01 atol=0.01``."""
    from lnrepro.present.junit import run_junit

    xml = run_junit(a_record(), {})
    assert "outside tolerance rtol=0.01 atol=0.01 (no error value in the log)" in xml
    assert ": tolerance rtol" not in xml


# ------------------------------------------------------------------ 17: runs
def entries() -> list[Entry]:
    out = []
    for i, (defect, seed) in enumerate((("shipped", 1), ("none", 7))):
        rec = a_record(defect, seed=seed, record_dir=f"/r{i}")
        out.append(
            Entry(
                id=f"run-2026112{i}-1200",
                kind=RecordKind.RUN,
                path=Path("/r/record.json"),
                mtime=1.8e9 + i,
                state=ListedState.COMPLETE,
                headline="7 FAIL, 1 PASS",
                where="emulator",
                commit=None,
                record=rec,
            )
        )
    return out


def test_runs_says_what_each_run_was() -> None:
    """Was: every row said ``emulator``; piped, no header and an empty field."""
    c, buf = piped()
    render_records(entries(), c)
    head, *rows = buf.getvalue().splitlines()
    assert head.split("\t") == ["id", "when", "state", "headline", "what"]
    assert len(rows) == 2 and all("" not in r.split("\t") for r in rows)
    assert "defect shipped" in rows[0] and "seed 1" in rows[0] and "1 attempt(s)" in rows[0]
    assert "defect none" in rows[1] and "seed 7" in rows[1]


@pytest.mark.parametrize("width", [60, 80, 200])
def test_runs_keeps_each_date_and_headline_on_one_line(width: int) -> None:
    """Was: at 80, ``2026-11-27`` / ``13:07`` and ``7 FAIL, 1`` / ``PASS`` on two rows."""
    c, buf = terminal(width)
    render_records(entries(), c)
    out = buf.getvalue()
    for e in entries():
        assert re.search(
            rf"{e.id}\W+\d{{4}}-\d\d-\d\d \d\d:\d\d\W+complete\W+7 FAIL, 1 PASS", out
        ), out


# ------------------------------------------------------------------ 18: status and name together
def test_at_60_columns_every_status_is_on_its_names_line() -> None:
    """Was: names of 56 characters or less went to the line under ``FAIL``."""
    it = Iteration(index=1, started=True, finished=True)
    for name in NAMES:
        t = TestResult(name=name, status=TestStatus.FAILED, duration_ms=5.0)
        t.failures.append(Failure(file="f.cpp", line=3, message="dx mismatch"))
        it.tests.append(t)
    for width in (60, 80):
        c, buf = terminal(width)
        render_gtest_run(GtestRun(iterations=[it], saw_gtest_output=True), c)
        failed = [ln for ln in buf.getvalue().splitlines() if "FAILED" in ln]
        assert sorted(ln.split()[1] for ln in failed) == sorted(NAMES), failed
    c, buf = terminal(60)
    render_run(a_record(), c)
    fails = [ln for ln in buf.getvalue().splitlines() if ln.startswith("FAIL")]
    assert sorted(ln.split()[1] for ln in fails) == sorted(n for n in NAMES if "NIGHTLY" not in n)


# ------------------------------------------------------------------ 19: explain
def fits() -> list[ModelFit]:
    tests = (
        TestFit(
            test=NAMES[0],
            observed="FAIL",
            model="FAIL",
            residuals={
                "dx.max_diff": Residual(observed=1000.0, model=1000.0, relative=3e-6),
                "dx.mean_diff": Residual(observed=1004.21, model=1004.2, relative=3e-6),
            },
        ),
        TestFit(test=NAMES[2], observed="PASS", model="PASS", residuals={}),
    )
    return [ModelFit(defects="double-subtract", era="2025-12", arch="wormhole_b0", tests=tests)]


@pytest.mark.parametrize("width", [200, None])
def test_explain_rows_each_name_their_test_and_cost_has_the_sentences_precision(
    width: int | None,
) -> None:
    """Was: a test's second metric row started with empty fields; cost ``0.0000``."""
    c, buf = console(width)
    meta = ExplainMeta(tests=(*NAMES[:1], *NAMES[2:3]), models=1, seconds=1.0)
    render_explain("run-1", fits(), meta, c)
    out = buf.getvalue()
    assert "0.000006" in out and "0.0000 " not in out and "0.0000\t" not in out
    metric_rows = [ln for ln in out.splitlines() if "dx." in ln]
    assert len(metric_rows) == 2 and all(NAMES[0] in ln for ln in metric_rows), out


# ------------------------------------------------------------------ 22: run --list
LISTING = f"""Running main() from gmock_main.cc
{SUITE}.
  NIGHTLY_MetalLayerNormBw_LargeFeatures_NoL1Fit
  BugRepro_Deterministic_256Tiles
Typed/0.  # TypeParam = float
  Works/1  # GetParam() = 4
"""


def test_run_list_prints_whole_names_one_per_line() -> None:
    """Was: piped, gtest's two-level listing (``Suite.`` then indented test names)."""
    from lnrepro.present.console import render_test_list
    from lnrepro.present.text import listed_tests

    assert listed_tests(LISTING) == [
        (NAMES[2], ""),
        (NAMES[0], ""),
        ("Typed/0.Works/1", "# GetParam() = 4"),
    ]
    c, buf = piped()
    render_test_list(LISTING, c)
    assert buf.getvalue().splitlines() == [NAMES[2], NAMES[0], "Typed/0.Works/1\t# GetParam() = 4"]
    c, buf = terminal(60)
    render_test_list(LISTING, c)
    assert whole(NAMES[2], buf.getvalue())


@pytest.mark.parametrize("width", [60, 80])
def test_a_live_line_keeps_its_status_with_the_name_and_wraps_only_the_metrics(width: int) -> None:
    """Was: the metrics wrap at spaces; the status and the name never part."""
    c, buf = terminal(width)
    ev = RichRunEvents(c)  # not entered: no bar drawn into the buffer
    ev.attempt_started(1, 3, ["x"])
    (t,) = [x for x in attempt(1, flaky_fails=True) if "TightTolerance" in x.name]
    for tensor in ("dx", "dgamma"):
        t.add_metric(tensor, "rtol", 0.01)
        t.add_metric(tensor, "atol", 0.01)
    ev.test_finished(t)
    lines = buf.getvalue().splitlines()
    # the status first; the name whole, with it or (too long for the line) on its own line
    # under it, never folded among other words
    assert lines[0].startswith("attempt 1/3: FAILED"), lines
    assert f"attempt 1/3: FAILED  {t.name}" in lines[0] or lines[1] == f"  {t.name}", lines
    assert all(len(ln) <= width for ln in lines if ln != f"  {t.name}"), lines
    assert whole("max_diff=1000", buf.getvalue()) and whole("rtol=0.01", buf.getvalue())
