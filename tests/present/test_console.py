"""Every renderer takes hostile text as data: whatever a test prints is shown as written."""

from __future__ import annotations

import io
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from lnrepro import options
from lnrepro.envcheck import EnvReport
from lnrepro.envcheck.checks import Result, Status
from lnrepro.model.gtest import Failure, GtestRun, Iteration, TestResult, TestStatus
from lnrepro.model.record import Attempt, RunRecord
from lnrepro.model.requests import BinarySpec, RunRequest, TestSpec
from lnrepro.present.console import render_env, render_gtest_run, render_records, render_run
from lnrepro.present.markdown import gtest_run_markdown, run_markdown

# printable text rich would otherwise read as markup: brackets, slashes, backslashes, backticks
HOSTILE = (
    st.lists(
        st.sampled_from([*"ab[]/\\=`|*_ #:.", "[/]", "[bold]", "[link=x]", "\\["]),
        min_size=1,
        max_size=20,
    )
    .map("".join)
    .map(lambda s: s.strip() or "x")
)


def console() -> tuple[Console, io.StringIO]:
    buf = io.StringIO()
    return Console(file=buf, width=400, highlight=False, soft_wrap=True, color_system=None), buf


def table_rows(md: str, marker: str) -> list[int]:
    """The number of cell separators (``|``) on each table row holding ``marker``: data never
    adds one (it is escaped as a character reference)."""
    return [ln.count("|") for ln in md.splitlines() if marker in ln]


def a_run(name: str, message: str) -> GtestRun:
    t = TestResult(name=f"S.{name}", status=TestStatus.FAILED)
    t.failures.append(Failure(file="f.cpp", line=3, message=message))
    t.add_metric(name, "max_diff", 1000.0)
    it = Iteration(index=1, started=True, finished=True)
    it.tests.append(t)
    return GtestRun(iterations=[it], saw_gtest_output=True, warnings=[f"warning about {message}"])


@settings(max_examples=150, deadline=None)
@given(name=HOSTILE, message=HOSTILE)
def test_gtest_run_renderers(name: str, message: str) -> None:
    run = a_run(name, message)
    c, buf = console()
    render_gtest_run(run, c)
    out = buf.getvalue()
    assert f"S.{name}" in out and message in out
    assert table_rows(gtest_run_markdown(run), "**FAILED**") == [7]


@settings(max_examples=100, deadline=None)
@given(name=HOSTILE, message=HOSTILE, path=HOSTILE)
def test_run_renderers(name: str, message: str, path: str) -> None:
    binary = Path("/tmp", "bin", path.replace("/", "_"))
    req = RunRequest(
        backend=BinarySpec(binary=binary),
        tests=TestSpec(gtest_filter="*", repeat=1, timeout_s=10.0),
        record_dir=Path("/tmp"),
    )
    rec = RunRecord(
        request=req,
        rerun=options.argv(req),
        record_dir=Path("/tmp/runs/run-1"),
        backend={"backend": "local", "binary": str(binary)},
    )
    run = a_run(name, message)
    rec.attempts.append(
        Attempt(
            index=1,
            argv=[path],
            exit_code=1,
            timed_out=False,
            seconds=0.1,
            log="attempt-1.log",
            tests=run.tests,
        )
    )
    c, buf = console()
    render_run(rec, c)
    out = buf.getvalue()
    assert name in out and str(binary) in out
    # the Observed row: test, verdict, max_diff, mean_diff, first failure (6 separators)
    assert table_rows(run_markdown(rec), "| **FAIL** |") == [6]


@settings(max_examples=100, deadline=None)
@given(detail=HOSTILE, fix=HOSTILE)
def test_env_renderer(detail: str, fix: str) -> None:
    report = EnvReport("host", [Result("device", Status.FAIL, detail, fix)])
    c, buf = console()
    render_env(report, c)
    out = buf.getvalue()
    assert detail in out and fix in out


def test_runs_table_never_folds_ids_at_80_columns() -> None:
    from lnrepro.doors.store import Entry
    from lnrepro.model.listing import ListedState, RecordKind

    ids = [f"run-20261124-0{i}1500-{i}" for i in range(3)]
    entries = [
        Entry(
            id=i,
            kind=RecordKind.RUN,
            path=Path("/r") / i / "record.json",
            mtime=1.8e9,
            state=ListedState.COMPLETE,
            headline="7 FAIL, 1 PASS " * 4,
            where="tt-metal/docker",
            commit="0123456789abcdef",
        )
        for i in ids
    ]
    buf = io.StringIO()
    render_records(entries, Console(file=buf, width=80, force_terminal=True, color_system=None))
    out = buf.getvalue()
    assert all(i in out for i in ids) and "0123456789ab" in out  # each id on one line, whole
    pipe = io.StringIO()
    render_records(entries, Console(file=pipe, width=80, force_terminal=False))
    lines = pipe.getvalue().splitlines()
    assert lines[0].split("\t")[0] == "id"  # a header line, then one record per line
    assert len(lines) == 4 and [ln.split("\t")[0] for ln in lines[1:]] == ids
