"""Records and reports, for real: `runs`, `show`, `compare`, `report --format md|json|junit` on
records written by real runs and bisects. The Markdown is read back by a CommonMark parser
(markdown-it-py) and the JUnit by a JUnit consumer (junitparser), never by our own code."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from junitparser import Error, Failure, JUnitXml, Skipped

from lnrepro import options
from lnrepro.model.gtest import CrashInfo, TestResult, TestStatus
from lnrepro.model.gtest import Failure as GFailure
from lnrepro.model.record import Attempt, RunRecord
from lnrepro.model.requests import EmulatorSpec, RunRequest, TestSpec
from tests.conftest import need_toolchain
from tests.harness import lnrepro, lnrepro_process
from tests.lookalike import KERNEL, GroundTruth, Spec, device_env, generate
from tests.present.gfm import Rendered

GIT_FILE_OK = {
    "GIT_CONFIG_COUNT": "1",
    "GIT_CONFIG_KEY_0": "protocol.file.allow",
    "GIT_CONFIG_VALUE_0": "always",
}
SECTIONS = [
    "Component / Area",
    "Issue Type (optional)",
    "Observed",
    "Expected",
    "1. Steps (exact commands)",
    "2. Input data / link or description",
    "3. Frequency",
    "1. Software Versions",
    "2. Hardware Details",
    "Is this a regression?",
    "Regression Details",
    "Logs & Diagnostics",
    "Priority",
    "Impact",
]


def Md(text: str) -> Rendered:
    return Rendered(text)


def check_template(md: Rendered) -> None:
    """The issue body is tt-metal's bug form as GitHub writes it: every submitted field, in order."""
    assert md.headings() == SECTIONS
    assert md.foreign_tags() == []  # nothing from the data became HTML
    assert md.text("Priority").strip() == "None"  # an unanswered dropdown, as GitHub writes it
    assert md.text("Impact").strip() == "No response"  # an empty optional field: _No response_


# ---------------------------------------------------------------------------------- emulator runs
@pytest.fixture(scope="module")
def emulator_runs(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    """Two real emulator runs: the shipped kernel (2 attempts) and the fixed one."""
    cwd = tmp_path_factory.mktemp("records")
    a = lnrepro("run", "-n", "2", "--json", cwd=cwd)
    b = lnrepro("run", "--kernel-era", "fixed", "--json", cwd=cwd)
    return cwd, json.loads(a.stdout), json.loads(b.stdout)


def test_run_json_has_an_id_that_runs_lists_with_a_headline(emulator_runs: Any) -> None:
    cwd, a, b = emulator_runs
    assert a["id"] == Path(a["record_dir"]).name and a["schema"] == "lnrepro.run/5"
    listed = json.loads(lnrepro("runs", "--json", cwd=cwd).stdout)
    assert listed["schema"] == "lnrepro.runs/1"
    byid = {e["id"]: e for e in listed["records"]}
    assert byid[a["id"]]["headline"] == "7 FAIL, 1 PASS" and byid[b["id"]]["headline"] == "8 PASS"
    assert byid[a["id"]]["where"] == "emulator" and byid[a["id"]]["state"] == "complete"
    table = lnrepro("runs", cwd=cwd).stdout
    assert a["id"][:10] in table and "7 FAIL" in table


def test_show_accepts_last_an_id_and_a_prefix(emulator_runs: Any) -> None:
    cwd, a, b = emulator_runs
    assert json.loads(lnrepro("show", "last", "--json", cwd=cwd).stdout)["id"] == b["id"]
    assert json.loads(lnrepro("show", a["id"], "--json", cwd=cwd).stdout)["verdict"] == "FAIL"
    p = lnrepro("show", "run-", cwd=cwd)
    assert (
        p.returncode == 4
        and "matches 2 records" in p.stderr
        and len(p.stderr.strip().splitlines()) == 1
    )
    p = lnrepro("show", "nope", cwd=cwd)
    assert p.returncode == 4 and "no record 'nope'" in p.stderr


def test_markdown_of_an_emulator_run_in_tt_metals_bug_template(emulator_runs: Any) -> None:
    cwd, a, _ = emulator_runs
    md = Md(lnrepro("report", a["id"], cwd=cwd).stdout)
    check_template(md)
    observed = md.tables("Observed")[0]
    assert observed[0] == ["test", "verdict", "max_diff", "mean_diff", "first failure"]
    rows = {r[0]: r for r in observed[1:]}
    assert len(rows) == 8
    assert rows["LayerNormBackwardOpTest.BugRepro_Deterministic_256Tiles"][1] == "FAIL"
    assert rows["LayerNormBackwardOpTest.BugRepro_Deterministic_256Tiles"][2] == "1000 (dx)"
    assert (
        rows["LayerNormBackwardOpTest.NIGHTLY_MetalLayerNormBw_LargeFeatures_NoL1Fit"][1] == "PASS"
    )
    assert md.text("Issue Type (optional)").strip() == "Bad Outputs"
    assert md.text("Is this a regression?").strip() == "Unknown"
    freq = md.tables("3. Frequency")[0]
    assert any(
        r[0] == "LayerNormBackwardOpTest.BugRepro_Deterministic_256Tiles"
        and r[2].startswith("0/2 (0%; 95% CI")
        for r in freq
    )
    (info, cmd), (_, raw) = md.fences("1. Steps (exact commands)")
    assert info == "sh" and cmd.startswith("lnrepro run --backend emulator --kernel-era 2025-12")
    assert "--gtest_filter=" in raw and "--emu_kernel=2025-12" in raw
    logs = md.fences("Logs & Diagnostics")
    assert len(logs) == 7 and all(
        "[ RUN      ] LayerNormBackwardOpTest." in text for _, text in logs
    )
    assert "dx FAILED: max_diff=1000, mean_diff=1004.21" in logs[0][1]
    # the fixed kernel's report says so, and the comparison shows the fix
    rows_cmp = json.loads(lnrepro("compare", a["id"], "last", "--json", cwd=cwd).stdout)["tests"]
    fixed = {r["test"].split(".")[1]: r for r in rows_cmp}
    assert fixed["BugRepro_Deterministic_256Tiles"]["change"].startswith("FAIL → PASS")
    assert fixed["BugRepro_Deterministic_256Tiles"]["max_diff_a"] == 1000
    assert fixed["BugRepro_Deterministic_256Tiles"]["pass_rate_b"] == 1.0
    cmp_md = Md(lnrepro("compare", a["id"], "last", "--markdown", cwd=cwd).stdout)
    (table,) = cmp_md.tables("")
    assert len(table) == 9 and all(len(r) == 8 for r in table)


def test_junit_of_an_emulator_run_read_by_a_junit_consumer(
    emulator_runs: Any, tmp_path: Path
) -> None:
    """One testcase per test; the two failed attempts of a test are its failure and a rerun."""
    from junitparser.xunit2 import JUnitXml as Xunit2

    cwd, a, _ = emulator_runs
    out = tmp_path / "results.xml"
    p = lnrepro("report", a["id"], "--format", "junit", "-o", str(out), cwd=cwd)
    assert p.returncode == 0 and p.stdout == ""
    xml = Xunit2.fromfile(str(out))
    cases = {c.name: c for s in xml for c in s}
    assert len(cases) == 8 and xml.tests == 8 and xml.failures == 7
    first = cases["BugRepro_Deterministic_256Tiles"]
    assert (
        first.classname == "LayerNormBackwardOpTest"
        and first.result[0].message == "Value of: dx_close"
    )
    assert "dx mismatch with deterministic inputs (features=8192)" in first.result[0].text
    (rerun,) = first.rerun_failures()  # attempt 2, as Surefire writes a rerun
    assert rerun.message.startswith("attempt 2:") and rerun.type == "FAILED"
    assert "max_diff=1000" in (first.system_out or "")  # the metrics, per attempt
    assert cases["NIGHTLY_MetalLayerNormBw_LargeFeatures_NoL1Fit"].is_passed
    assert (
        json.loads(lnrepro("report", a["id"], "--format", "json", cwd=cwd).stdout)["id"] == a["id"]
    )


def _record(*attempts: list[TestResult], env: str | None = None) -> RunRecord:
    """A run of these attempts, each exiting as googletest does (1 when a test failed)."""
    req = RunRequest(
        backend=EmulatorSpec(),
        tests=TestSpec(gtest_filter="*", repeat=max(1, len(attempts))),
        record_dir=Path("/r"),
    )
    rec = RunRecord(
        request=req,
        rerun=options.argv(req),
        record_dir=Path("/r/run-x"),
        backend={"backend": "emulator"},
    )
    for i, tests in enumerate(attempts, 1):
        code = (
            134
            if any(t.crash for t in tests)
            else int(any(t.status is TestStatus.FAILED for t in tests))
        )
        rec.attempts.append(
            Attempt(
                index=i,
                argv=["p"],
                exit_code=code,
                timed_out=False,
                seconds=7.0,
                log=f"attempt-{i}.log",
                tests=tests,
                env_error=env,
            )
        )
    return rec


def _t(
    name: str, status: TestStatus, message: str | None = None, reason: str | None = None
) -> TestResult:
    t = TestResult(name=name, status=status)
    if message is not None:
        t.failures.append(GFailure(message=message))
    if reason is not None:
        t.crash = CrashInfo(exit_code=134, signal="SIGABRT", reason=reason)
    return t


def test_junit_marks_crashes_and_hangs_as_errors_with_their_time_and_log() -> None:
    from junitparser.xunit2 import JUnitXml as Xunit2

    from lnrepro.present.junit import run_junit

    rec = _record(
        [
            _t("S.Crashes", TestStatus.CRASHED, reason="aborted: signal SIGABRT"),
            _t("S.Hangs", TestStatus.TIMEOUT, reason="killed by lnrepro after the 5 s timeout"),
            _t("S.Skipped", TestStatus.SKIPPED),
            _t("S.Ansi|<x>&", TestStatus.FAILED, "\x1b[31mred\x1b[0m <&> ]]>"),
        ]
    )
    log = "[ RUN      ] S.Crashes\nabort here\n"
    xml = Xunit2.fromstring(run_junit(rec, {"attempt-1.log": log}))
    cases = {c.name: c for s in xml for c in s}
    crash = cases["Crashes"]
    assert isinstance(crash.result[0], Error) and "SIGABRT" in crash.result[0].message
    assert crash.time > 0 and "abort here" in (crash.system_out or "")  # its time and its log
    assert (
        isinstance(cases["Hangs"].result[0], Error) and cases["Hangs"].result[0].type == "TIMEOUT"
    )
    assert isinstance(cases["Skipped"].result[0], Skipped)
    bad = cases["Ansi|<x>&"].result[0]
    assert isinstance(bad, Failure) and "<&> ]]>" in bad.text and "\x1b" not in bad.text


def test_a_flaky_test_is_one_testcase_with_flaky_failures() -> None:
    from junitparser.xunit2 import JUnitXml as Xunit2

    from lnrepro.present.junit import run_junit

    rec = _record(
        [_t("S.F", TestStatus.FAILED, "boom")],
        [_t("S.F", TestStatus.PASSED)],
        [_t("S.F", TestStatus.FAILED, "boom again")],
    )
    xml = Xunit2.fromstring(run_junit(rec))
    (case,) = [c for s in xml for c in s]
    assert case.name == "F" and case.result == []  # no failure: Surefire's flaky pass
    assert [f.message for f in case.flaky_failures()] == [
        "attempt 1: boom",
        "attempt 3: boom again",
    ]
    assert xml.failures == 0


def test_outcomes_without_tests_are_a_testcase_that_says_what_happened() -> None:
    from junitparser.xunit2 import JUnitXml as Xunit2

    from lnrepro.model.record import BuildResult
    from lnrepro.present.junit import run_junit

    rec = _record()
    rec.build = BuildResult(ok=False, profile="in-tree", tail=("x.cpp:3: error: nope",))
    xml = Xunit2.fromstring(run_junit(rec))
    (case,) = [c for s in xml for c in s]
    assert case.name == "BUILD_FAILED" and isinstance(case.result[0], Error)
    assert "x.cpp:3: error: nope" in case.result[0].message and "build.log" in (
        case.system_out or ""
    )


def test_markdown_holds_hostile_names_and_logs() -> None:
    from lnrepro.present.markdown import run_markdown

    name = "S.T|a`b<script>"
    t = _t(name, TestStatus.FAILED, "```\n|x|")
    t.add_metric("dx", "max_diff", 2.0)
    rec = _record([t])
    log = f"[ RUN      ] {name}\n```\nnot a fence end\n~~~\n[  FAILED  ] {name} (1 ms)\n"
    md = Md(run_markdown(rec, {"attempt-1.log": log}))
    check_template(md)
    rows = md.tables("Observed")[0]
    assert len(rows) == 2 and all(len(r) == 5 for r in rows)
    assert rows[1][0] == "S.T|a`b<script>" and rows[1][1] == "FAIL"  # the pipe split no cell
    ((_, text),) = md.fences("Logs & Diagnostics")
    assert "not a fence end" in text and text.rstrip().endswith("(1 ms)")


# ---------------------------------------------------------------------------------- records on disk
def test_old_partial_and_corrupt_records_are_listed_never_a_crash(
    emulator_runs: Any, tmp_path: Path
) -> None:
    import shutil

    _, a, _ = emulator_runs
    base = tmp_path / ".lnrepro" / "runs"
    base.mkdir(parents=True)
    # a record of schema /1 (no id): loads, its id the directory's name
    old = json.loads(Path(a["record_dir"], "record.json").read_text())
    old["schema"] = "lnrepro.run/1"
    del old["id"]
    (base / "run-20250101-000000").mkdir()
    (base / "run-20250101-000000" / "record.json").write_text(json.dumps(old))
    # an interrupted run, and one cut off while its record was written
    shutil.copytree(a["record_dir"], base / "run-20250101-000001")
    part = json.loads((base / "run-20250101-000001" / "record.json").read_text())
    part.update(state="interrupted", stop_reason="interrupted (SIGTERM)")
    (base / "run-20250101-000001" / "record.json").write_text(json.dumps(part))
    (base / "run-20250101-000002").mkdir()
    (base / "run-20250101-000002" / "record.json").write_text(
        '{"schema": "lnrepro.run/2", "tests": ['
    )
    p = lnrepro("runs", "--json", cwd=tmp_path)
    byid = {e["id"]: e for e in json.loads(p.stdout)["records"]}
    assert byid["run-20250101-000000"]["headline"] == "7 FAIL, 1 PASS"
    assert byid["run-20250101-000001"]["state"] == "interrupted"
    assert (
        byid["run-20250101-000002"]["state"] == "unreadable"
        and "not valid JSON" in byid["run-20250101-000002"]["problem"]
    )
    p = lnrepro("runs", cwd=tmp_path)
    assert p.returncode == 0 and "warning: run-20250101-000002" in p.stderr
    assert (
        json.loads(lnrepro("show", "run-20250101-000000", "--json", cwd=tmp_path).stdout)["id"]
        == "run-20250101-000000"
    )
    p = lnrepro("report", "run-20250101-000002", cwd=tmp_path)
    assert (
        p.returncode == 4
        and "not valid JSON" in p.stderr
        and len(p.stderr.strip().splitlines()) == 1
    )


# ---------------------------------------------------------------------------------- bisect and container
def test_markdown_and_junit_of_a_bisect(tmp_path: Path) -> None:
    t: GroundTruth = generate(tmp_path / "tt-metal", Spec(commits=60, tus=1))
    has_fix = f"grep -q 'zero_dst_reg(dest, kMeanDyGamma);' {KERNEL}"
    p = lnrepro(
        "bisect",
        "--repo",
        t.path,
        "--good",
        t.good,
        "--bad",
        t.bad,
        "--command",
        has_fix,
        "--json",
        cwd=tmp_path,
        env=GIT_FILE_OK,  # the look-alike's submodules are local clones
    )
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    r = {**doc["result"], "id": doc["id"], "steps_taken": doc["steps"]}
    assert r["id"].startswith("bisect-") and r["first_bad"] == t.culprit
    repo = Path(t.path)  # its records are kept inside .git, out of the checkout: found from there
    assert not (repo / ".lnrepro").exists() and not (tmp_path / ".lnrepro").exists()
    listed = {e["id"]: e for e in json.loads(lnrepro("runs", "--json", cwd=repo).stdout)["records"]}
    assert listed[r["id"]]["kind"] == "bisect" and t.culprit[:12] in listed[r["id"]]["headline"]
    md = Md(lnrepro("report", r["id"], cwd=repo).stdout)
    check_template(md)
    details = md.tables("Regression Details")[0]
    assert details[0][:5] == ["#", "kind", "commit", "subject", "mark"]
    assert len(details) - 1 == len(r["steps_taken"])
    assert any(t.culprit[:12] in row[2] and row[4] == "bad" for row in details[1:])
    assert md.text("Is this a regression?").strip() == "Yes" and t.culprit[:12] in md.text(
        "Regression Details"
    )
    (_, ours), (_, git) = md.fences("1. Steps (exact commands)")
    assert ours.startswith("lnrepro bisect --repo") and "--command" in ours
    assert git.startswith(f"git bisect start {t.bad} {t.good}")
    xml = JUnitXml.fromstring(lnrepro("report", r["id"], "--format", "junit", cwd=repo).stdout)
    cases = [c for s in xml for c in s]
    assert len(cases) == len(r["steps_taken"]) + 1  # each step, and the result
    # a bisect that found its commit is a success: marking commits bad is it working
    assert not [c for c in cases if any(isinstance(x, (Failure, Error)) for x in c.result)]
    assert xml.failures == 0 and xml.errors == 0


@pytest.mark.compiler
@pytest.mark.docker
def test_markdown_of_a_lookalike_container_run(
    lookalike_builds: dict[str, Path], toolchain_image: str, fake_card_host: None, tmp_path: Path
) -> None:
    need_toolchain()
    tree = lookalike_builds["bad"]
    env = device_env(tmp_path, tree)
    p = lnrepro_process(
        "run",
        "--tt-metal",
        str(tree),
        "--runner",
        "docker",
        "--image",
        toolchain_image,
        "--filter",
        "*Deterministic_2048Features:*NIGHTLY*",
        "--json",
        cwd=tmp_path,
        env={**GIT_FILE_OK, **env},
        timeout=900,
    )
    assert p.stdout, p.stderr
    doc = json.loads(p.stdout)
    md = Md(lnrepro("report", doc["id"], cwd=tmp_path).stdout)
    check_template(md)
    versions = md.text("1. Software Versions")
    assert doc["fingerprint"]["commit"][:12] in versions and toolchain_image in versions
    hardware = md.text("2. Hardware Details")
    assert "/dev/tenstorrent/0" in hardware
    (_, ours), (_, raw) = md.fences("1. Steps (exact commands)")
    assert ours.startswith("lnrepro run --tt-metal") and "--runner docker" in ours
    assert (
        raw.count("docker run --rm") >= 2
        and "--device /dev/tenstorrent/0:/dev/tenstorrent/0" in raw
    )
    observed = {r[0]: r for r in md.tables("Observed")[0][1:]}
    assert observed["LayerNormBackwardOpTest.BugRepro_Deterministic_2048Features"][1] == "FAIL"
    assert (
        observed["LayerNormBackwardOpTest.NIGHTLY_MetalLayerNormBw_LargeFeatures_NoL1Fit"][1]
        == "PASS"
    )


def test_report_excerpt_in_the_docs_is_what_the_script_writes() -> None:
    root = Path(__file__).resolve().parents[2]
    p = subprocess.run(
        [sys.executable, str(root / "scripts" / "report_excerpt.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
