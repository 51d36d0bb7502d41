"""What a person sees. No token is cut at any width, piped output is plain lines, a
printed command line is one line of shell, compare says what each run was, a tolerance is not
shown as an error, and parse of a huge log prints the failures and the counts."""

from __future__ import annotations

import io
import re
import shlex
from pathlib import Path

import pytest
from rich.console import Console

from lnrepro import options
from lnrepro.envcheck import EnvReport
from lnrepro.envcheck.checks import Result, Status
from lnrepro.model import codec
from lnrepro.model.compare import compare
from lnrepro.model.gtest import Failure, GtestRun, Iteration, TestResult, TestStatus
from lnrepro.model.record import Attempt, RunRecord
from lnrepro.model.requests import EmulatorSpec, RunRequest, TestSpec
from lnrepro.present.console import render_compare, render_env, render_gtest_run, render_run
from lnrepro.present.text import fmt_metrics, worst_text

SUITE = "LayerNormBackwardOpTest"
NAMES = [f"{SUITE}.BugRepro_Deterministic_{n}" for n in ("256Tiles", "8462Features")] + [
    f"{SUITE}.NIGHTLY_MetalLayerNormBw_LargeFeatures_NoL1Fit",
    f"{SUITE}.BugRepro_TightTolerance_8192Features",
]
BOX = set("│┃┏┓┗┛━─┼╇┡┩└┘┌┐")


def terminal(width: int) -> tuple[Console, io.StringIO]:
    buf = io.StringIO()
    c = Console(file=buf, width=width, force_terminal=True, color_system=None, highlight=False)
    return c, buf


def piped() -> tuple[Console, io.StringIO]:
    buf = io.StringIO()
    return Console(file=buf, width=80, force_terminal=False, highlight=False), buf


def whole(token: str, text: str) -> bool:
    """``token`` on one line of ``text``, not inside a longer word or number."""
    return re.search(rf"(?<![\w.]){re.escape(token)}(?![\w]|\.\d)", text) is not None


def a_record(defect: str = "shipped", seed: int | None = None, record_dir: str = "/r") -> RunRecord:
    spec = EmulatorSpec(defect=defect, seed=seed)
    req = RunRequest(
        backend=spec,
        tests=TestSpec(gtest_filter=f"{SUITE}.BugRepro_*:{SUITE}.NIGHTLY_*", repeat=1),
        record_dir=Path(record_dir),
    )
    rec = RunRecord(
        request=req,
        rerun=options.argv(req),
        record_dir=Path(record_dir) / "run-20261127-122708",
        backend=codec.encode(spec),
    )
    tests = []
    for name in NAMES:
        ok = "NIGHTLY" in name
        t = TestResult(
            name=name, status=TestStatus.PASSED if ok else TestStatus.FAILED, duration_ms=515.0
        )
        if "TightTolerance" in name:
            for tensor in ("dx", "dgamma", "dbeta"):
                t.add_metric(tensor, "rtol", 0.01)
                t.add_metric(tensor, "atol", 0.01)
        elif not ok:
            t.add_metric("dx", "max_diff", 1000.0)
            t.add_metric("dx", "mean_diff", 1004.21)
            t.failures.append(
                Failure(file="layernorm_bw_fused_op_test.cpp", line=330, message="dx mismatch")
            )
        tests.append(t)
    rec.attempts.append(
        Attempt(
            index=1,
            argv=["p"],
            exit_code=1,
            timed_out=False,
            seconds=9.2,
            log="attempt-1.log",
            tests=tests,
        )
    )
    return rec


TOKENS = [
    *NAMES,
    "max_diff=1000",
    "mean_diff=1004.21",
    "[21–100%]",
    "rtol=0.01",
    "atol=0.01",
    "run-20261127-122708",
]


@pytest.mark.parametrize("width", [60, 80, 200])
def test_run_table_never_cuts_a_token(width: int) -> None:
    """Was: ``max_dif│f=1000``, ``ff=1004│.21``, ``[21–100│%]``, ``rtol=0.│01`` at 80."""
    c, buf = terminal(width)
    render_run(a_record(), c)
    out = buf.getvalue()
    for token in TOKENS:
        if len(token) <= width:  # a name wider than the terminal: the terminal folds it
            assert whole(token, out), (token, out)
    for line in out.splitlines():  # wider: it ends in a word no wrapped line holds, or the rerun
        assert (
            len(line) <= width
            or len(line.split()[-1]) > width - 4
            or line.startswith("rerun:")
            or line.split()[:2] in (["FAIL", n] for n in NAMES)  # a status stays with its name
        ), line


@pytest.mark.parametrize("width", [60, 80])
def test_compare_is_readable_at_80_columns(width: int) -> None:
    """Was: compare at 80 columns printed one character per line (``P/A/S/S``)."""
    a, b = a_record(), a_record("none", seed=7)
    c, buf = terminal(width)
    render_compare(compare(a, b), a, b, c)
    out = buf.getvalue()
    for token in [*NAMES[:2], "PASS", "FAIL", "same verdict", "1000"]:
        assert whole(token, out), (token, out)
    assert all(len(ln) <= width or len(ln.split()[-1]) > width - 4 for ln in out.splitlines())
    assert len(out.splitlines()) < 12 * len(NAMES)


def test_env_check_keeps_check_ids_and_paths_whole_at_60_columns() -> None:
    """Was: ``hugepages-│mount``, ``/dev/│hugepages-1G``."""
    report = EnvReport(
        "host",
        [
            Result("hugepages-mount", Status.OK, "hugetlbfs pagesize=1G at /dev/hugepages-1G"),
            Result(
                "hugepages-count",
                Status.FAIL,
                "0 x 1 GiB reserved for 1 device(s)",
                "echo 2 | sudo tee /sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages",
            ),
        ],
    )
    for width in (60, 80):
        c, buf = terminal(width)
        render_env(report, c)
        out = buf.getvalue()
        for token in (
            "hugepages-mount",
            "hugepages-count",
            "/dev/hugepages-1G",
            "/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages",
        ):
            assert token in out, (width, token, out)


def test_piped_tables_are_plain_lines_without_boxes() -> None:
    """Was: piped (``| tee log``), one test per line, no box drawing, no 80-column cut."""
    c, buf = piped()
    render_run(a_record(), c)
    lines = buf.getvalue().splitlines()
    assert not BOX & set("".join(lines))
    for name in NAMES:
        (line,) = [ln for ln in lines if ln.startswith(name + "\t")]
        assert line.split("\t")[1] in ("PASS", "FAIL")
    tight = next(ln for ln in lines if "TightTolerance" in ln)
    assert len(tight) > 80 and "rtol=0.01 atol=0.01" in tight


@pytest.mark.parametrize("width", [60, 80, 200, None])
def test_the_rerun_line_is_one_line_of_shell(width: int | None) -> None:
    """Was: rich wrapped the rerun line with hard newlines; pasting ran half of it."""
    rec = a_record(record_dir="/tmp/" + "a-long-record-directory/" * 8)
    c, buf = terminal(width) if width else piped()
    render_run(rec, c)
    (line,) = [ln for ln in buf.getvalue().splitlines() if ln.startswith("rerun:")]
    assert shlex.split(line.removeprefix("rerun:")) == rec.rerun


def test_junit_rerun_property_quotes_the_filter() -> None:
    """Was: the JUnit ``rerun`` property left the ``*`` in the filter unquoted."""
    import xml.etree.ElementTree as ET

    from lnrepro.present.junit import run_junit

    rec = a_record()
    root = ET.fromstring(run_junit(rec, {}))
    values = {p.get("value") for p in root.iter("property") if p.get("name") == "rerun"}
    assert values and all(v is not None and shlex.split(v) == rec.rerun for v in values)
    assert (
        "shlex.join(record.rerun)"
        in (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text()
    )


def test_compare_says_what_each_run_was() -> None:
    """Was: the header said ``A = run-… (?)``."""
    a, b = a_record(), a_record("none", seed=7)
    c, buf = terminal(200)
    render_compare(compare(a, b), a, b, c)
    head = buf.getvalue().splitlines()[:2]
    assert head[0].startswith(f"A = {a.id}: emulator") and "(?)" not in head[0]
    for words in ("defect shipped", "era 2025-12", "seed default", "data copy"):
        assert words in head[0], head
    assert "defect none" in head[1] and "seed 7" in head[1]


def test_a_tolerance_is_not_shown_as_a_measured_error() -> None:
    """Was: ``dx: rtol=0.01 atol=0.01`` read as an error; it is the test's tolerance."""
    tol = {"dx": {"rtol": 0.01, "atol": 0.01}, "dgamma": {"rtol": 0.01, "atol": 0.01}}
    assert (
        fmt_metrics(tol)
        == "dx, dgamma: outside tolerance rtol=0.01 atol=0.01 (no error value in the log)"
    )
    assert "outside tolerance rtol=0.01 atol=0.01" in worst_text(tol)
    assert "no error value in the log" in worst_text(tol)
    both = {"dx": {"max_diff": 3.5, "rtol": 0.01, "atol": 0.01}}
    assert fmt_metrics(both) == "dx: max_diff=3.5 (outside tolerance rtol=0.01 atol=0.01)"
    assert worst_text(both) == "dx: max_diff=3.5"


def test_parse_of_a_huge_log_prints_the_failures_and_the_counts() -> None:
    """Was: a 200,000-test log printed a 336,000-line table."""
    it = Iteration(index=1, started=True, finished=True)
    for i in range(5000):
        it.tests.append(
            TestResult(name=f"{SUITE}.Case_{i:06d}_NIGHTLY_LargeFeatures", status=TestStatus.PASSED)
        )
    bad = TestResult(
        name=f"{SUITE}.Case_000007_BugRepro", status=TestStatus.FAILED, duration_ms=5.0
    )
    bad.failures.append(Failure(file="f.cpp", line=3, message="dx mismatch"))
    it.tests.insert(7, bad)
    run = GtestRun(iterations=[it], saw_gtest_output=True)
    for c, buf in (terminal(80), piped()):
        render_gtest_run(run, c)
        out = buf.getvalue()
        assert len(out.splitlines()) < 10, out[:2000]
        assert whole(bad.name, out) and "FAILED" in out
        assert "5000 passed, 1 failed" in out and "--all" in out
    c, buf = piped()
    render_gtest_run(run, c, all_tests=True)
    assert sum(ln.startswith(f"{SUITE}.Case_") for ln in buf.getvalue().splitlines()) == 5001


def test_parse_all_of_a_huge_log_is_one_line_per_test_on_a_terminal() -> None:
    """``--all``: past a thousand tests no table is measured or drawn (a rich table of
    200,000 rows was 78 s and 1.1 GB): one line per test, its name whole."""
    it = Iteration(index=1, started=True, finished=True)
    it.tests += [
        TestResult(name=f"{SUITE}.Case_{i:06d}", status=TestStatus.PASSED, duration_ms=1.0)
        for i in range(1500)
    ]
    run = GtestRun(iterations=[it], saw_gtest_output=True)
    c, buf = terminal(60)
    render_gtest_run(run, c, all_tests=True)
    lines = buf.getvalue().splitlines()
    assert lines[1:1501] == [f"PASSED  {SUITE}.Case_{i:06d}  time: 1 ms" for i in range(1500)]
    assert len(lines) == 1502
