"""Every renderer takes hostile text as data: whatever a test prints is shown as written."""

from __future__ import annotations

import io
import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from lnrepro.envcheck import EnvReport
from lnrepro.envcheck.checks import Result, Status
from lnrepro.gtest.model import Failure, GtestRun, Iteration, TestResult, TestStatus
from lnrepro.model.record import Attempt, RunRecord
from lnrepro.present.console import (
    gtest_run_markdown,
    md_code,
    render_env,
    render_gtest_run,
    render_run,
)
from lnrepro.present.report import run_markdown

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
    """The number of cell separators (unescaped ``|``) on each table row holding ``marker``."""
    return [len(re.findall(r"(?<!\\)\|", ln)) for ln in md.splitlines() if marker in ln]


def a_run(name: str, message: str) -> GtestRun:
    t = TestResult(name=f"S.{name}", status=TestStatus.FAILED)
    t.failures.append(Failure("f.cpp", 3, message))
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
    rec = RunRecord({"backend": "local", "binary": path}, "*", 1, 10.0, Path("/tmp") / path)
    rec.rerun = ["lnrepro", "run", "--binary", path]
    rec.attempts.append(Attempt(1, [path], 1, False, 0.1, "attempt-1.log", a_run(name, message)))
    c, buf = console()
    render_run(rec.to_json(), c)
    out = buf.getvalue()
    assert name in out and path in out
    # the Observed row: test, verdict, max_diff, mean_diff, first failure (6 separators)
    assert table_rows(run_markdown(rec.to_json()), "| **FAIL** |") == [6]


@settings(max_examples=100, deadline=None)
@given(detail=HOSTILE, remedy=HOSTILE)
def test_env_renderer(detail: str, remedy: str) -> None:
    report = EnvReport("host", [Result("device", Status.FAIL, detail, remedy)])
    c, buf = console()
    render_env(report, c)
    out = buf.getvalue()
    assert detail in out and remedy in out


def test_md_code_holds_backticks() -> None:
    assert md_code("a`b") == "``a`b``"
    assert md_code("`x`") == "`` `x` ``"
    assert md_code("plain") == "`plain`"
