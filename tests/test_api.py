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
    rec = api.run(
        RunRequest(
            backend=EmulatorSpec(), tests=TestSpec(gtest_filter=flt, repeat=2), record_dir=tmp_path
        ),
        seen,
    )
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
        api.run(
            RunRequest(
                backend=EmulatorSpec(defect="nope"), tests=TestSpec(), record_dir=tmp_path / "runs"
            )
        )
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
        BisectRequest(
            repo=repo,
            good=("main~7",),
            bad="main",
            oracle=CommandOracleSpec(argv=("grep", "-q", "good", "v")),
        )
    )
    assert (
        rec.result is not None
        and rec.result.commit is not None
        and rec.result.commit.subject == "c5"
    )
    assert api.bisect_log(repo).result == rec.result


# ---------------------------------------------------------------------------------- the other commands
# Each command that reads records, judges a machine or studies the emulator is one api function:
# a typed request in, a typed record out, a wrong request refused before anything is written.
import io  # noqa: E402
import json  # noqa: E402

import pytest  # noqa: E402

from lnrepro.errors import InputError, MalformedLog  # noqa: E402
from lnrepro.model.requests import (  # noqa: E402
    CompareRequest,
    EnvCheckRequest,
    ExplainRequest,
    ParseRequest,
    ReportFormat,
    ReportRequest,
    RunsRequest,
    ShowRequest,
    StudyEra,
    ToleranceRequest,
)

FLT = "*BugRepro_Deterministic_2048Features"
SUITE = "LayerNormBackwardOpTest"


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, RunRecord, RunRecord]:
    """The shipped kernel and the fixed one, one test each, saved under one directory."""
    where = tmp_path_factory.mktemp("records")
    bad = api.run(
        RunRequest(backend=EmulatorSpec(), tests=TestSpec(gtest_filter=FLT), record_dir=where)
    )
    good = api.run(
        RunRequest(
            backend=EmulatorSpec(kernel_era="fixed"),
            tests=TestSpec(gtest_filter=FLT),
            record_dir=where,
        )
    )
    return where, bad, good


class Spinner(api.Progress):
    def __init__(self) -> None:
        self.said: list[str] = []

    def started(self, what: str) -> None:
        self.said.append(f"start {what}")

    def update(self, what: str) -> None:
        self.said.append(what)

    def finished(self) -> None:
        self.said.append("done")


def test_runs_show_and_compare_read_what_run_saved(
    two_runs: tuple[Path, RunRecord, RunRecord],
) -> None:
    where, bad, good = two_runs
    entries = api.runs(RunsRequest(record_dir=where))
    assert [e.id for e in entries] == [bad.id, good.id]
    shown = api.show(ShowRequest(ref=bad.id, record_dir=where))
    assert isinstance(shown, RunRecord) and shown.verdict is Verdict.FAIL
    assert api.show(ShowRequest(ref="last", record_dir=where)).id == good.id
    cmp = api.compare(CompareRequest(a=bad.id, b=good.id, record_dir=where))
    assert cmp.a.id == bad.id and cmp.b.id == good.id
    assert [(r.test.split(".")[-1], r.verdict_a, r.verdict_b) for r in cmp.rows] == [
        ("BugRepro_Deterministic_2048Features", "FAIL", "PASS")
    ]
    assert cmp.to_json()["schema"] == "lnrepro.compare/3"


def test_a_record_dir_that_does_not_exist_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as exc:
        api.runs(RunsRequest(record_dir=tmp_path / "nope"))
    assert exc.value.message == f"--record-dir {tmp_path / 'nope'} does not exist"
    assert not (tmp_path / "nope").exists()


def test_report_in_each_format(two_runs: tuple[Path, RunRecord, RunRecord]) -> None:
    where, bad, good = two_runs
    md = api.report(ReportRequest(ref=bad.id, record_dir=where))
    assert md.format is ReportFormat.MD and md.record.id == bad.id
    assert "BugRepro_Deterministic_2048Features" in md.text
    doc = api.report(ReportRequest(ref=bad.id, record_dir=where, format=ReportFormat.JSON))
    assert json.loads(doc.text)["id"] == bad.id
    xml = api.report(ReportRequest(ref=good.id, record_dir=where, format=ReportFormat.JUNIT))
    assert xml.text.startswith("<?xml") and 'failures="0"' in xml.text
    with pytest.raises(UsageError) as exc:  # --bisect names a bisect, not a run
        api.report(ReportRequest(ref=bad.id, record_dir=where, bisect=good.id))
    assert exc.value.message == f"--bisect {good.id} is a run record"


def test_parse_a_log_file_and_a_stream(tmp_path: Path) -> None:
    text = (
        f"[ RUN      ] {SUITE}.A\n[       OK ] {SUITE}.A (3 ms)\n"
        f"[ RUN      ] {SUITE}.B\ndx FAILED: max_diff=2.5\n[  FAILED  ] {SUITE}.B (4 ms)\n"
    )
    log = tmp_path / "t.log"
    log.write_text(text)
    run = api.parse(ParseRequest(log=log))
    assert not run.ok and [t.status.value for t in run.tests] == ["PASSED", "FAILED"]
    again = api.parse(ParseRequest(log=None), io.BytesIO(text.encode()))
    assert [t.name for t in again.tests] == [t.name for t in run.tests]
    with pytest.raises(UsageError) as exc:
        api.parse(ParseRequest(log=log, metric_patterns=("(unclosed",)))
    assert exc.value.message.startswith("--metric-pattern '(unclosed'")


def test_explain_a_log_a_run_and_a_hang_text(
    tmp_path: Path, two_runs: tuple[Path, RunRecord, RunRecord]
) -> None:
    log = tmp_path / "seed.log"
    log.write_text(
        f"[ RUN      ] {SUITE}.BugRepro_Deterministic_2048Features\n"
        "dx FAILED: max_diff=1000\n"
        f"[  FAILED  ] {SUITE}.BugRepro_Deterministic_2048Features (10 ms)\n"
    )
    spinner = Spinner()
    found = api.explain(ExplainRequest(ref=str(log)), spinner)
    assert isinstance(found, api.Explanation) and found.source == str(log)
    best = found.fits[0]
    assert best.cost == 0.0 and "double-subtract" in best.defects
    assert spinner.said[0].startswith("start explain: ") and spinner.said[-1] == "done"
    assert found.to_json()["schema"] == "lnrepro.explain/2"
    where, bad, _ = two_runs
    of_run = api.explain(ExplainRequest(ref=bad.id, record_dir=where))
    assert isinstance(of_run, api.Explanation) and of_run.source == bad.id and of_run.fits
    from tests.hang.watcher import pastes

    hang = tmp_path / "watcher.log"
    hang.write_text(pastes.full_log("newest"))
    text = api.explain(ExplainRequest(ref=str(hang)))
    assert isinstance(text, api.HangText)
    assert text.reading.diagnosis.pattern.value == "CONSUMER_STARVED"


def test_explain_refuses_what_it_cannot_read(tmp_path: Path) -> None:
    with pytest.raises(MalformedLog) as exc:
        api.explain(ExplainRequest(ref=str(tmp_path / "nope.log")))
    assert exc.value.message.endswith("nope.log: no such file")
    empty = tmp_path / "empty.log"
    empty.write_text("[==========] Running 0 tests from 0 test suites.\n")
    spinner = Spinner()
    with pytest.raises(InputError) as err:
        api.explain(ExplainRequest(ref=str(empty)), spinner)
    assert "no passed or failed test" in err.value.message and not spinner.said


def test_tolerance_of_the_tests_and_of_a_shape(tmp_path: Path) -> None:
    spinner = Spinner()
    tests = api.tolerance(ToleranceRequest(tests=("*2048Features",), trials=2), spinner)
    assert isinstance(tests, api.TestsTolerance)
    assert [t.test for t in tests.tests] == [
        "LayerNormBackwardOpTest.BugRepro_Deterministic_2048Features"
    ]
    assert tests.to_json()["schema"] == "lnrepro.tolerance/1"
    assert spinner.said[0] == "start tolerance: sampling" and spinner.said[-1] == "done"
    shape = api.tolerance(
        ToleranceRequest(
            shape="1,32,1,64", trials=2, defects=("shipped",), kernel_era=StudyEra.NOV_2025
        )
    )
    assert isinstance(shape, api.ShapeTolerance) and shape.plot is None
    assert shape.to_json()["shape"] == "1,32,1,64" and list(shape.study.best) == ["shipped"]


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (ToleranceRequest(alpha=0.9), "--alpha 0.9 is not from 1e-12 to 0.5"),
        (ToleranceRequest(defects=("shipped",)), "--defect only applies with --shape"),
        (ToleranceRequest(tests=("x",), shape="1,1,1,32"), "--test and --shape do not go together"),
        (ToleranceRequest(shape="1,2,3"), "--shape '1,2,3' is not B,S,H,F"),
        (ToleranceRequest(shape="1,32,1,64", defects=("nope",)), "--defect: "),
        (ToleranceRequest(tests=("*NoSuchTest",)), "no modelled test matches *NoSuchTest"),
        (ToleranceRequest(trials=1), "--trials 1 is not from 2 to 100000"),
    ],
)
def test_a_wrong_tolerance_request_is_refused_before_sampling(
    request_: ToleranceRequest, message: str
) -> None:
    spinner = Spinner()
    with pytest.raises(UsageError) as exc:
        api.tolerance(request_, spinner)
    assert exc.value.message.startswith(message) and exc.value.fix and not spinner.said


def test_env_check_of_a_sysroot_and_its_wrong_requests(tmp_path: Path) -> None:
    report = api.env_check(EnvCheckRequest(sysroot=tmp_path, min_driver="1.33"))
    ids = {r.id: r.status.value for r in report.results}
    assert report.mode == "sysroot" and report.failed and ids["device"] == "fail"
    for wrong, message in [
        (EnvCheckRequest(sysroot=tmp_path, container=True), "--sysroot and --container"),
        (EnvCheckRequest(image="x:y"), "--image only applies with --container"),
        (EnvCheckRequest(container=True, image="Bad Name"), "--image 'Bad Name' is not"),
        (EnvCheckRequest(min_driver="new"), "--min-driver 'new' is not a version"),
    ]:
        with pytest.raises(UsageError) as exc:
            api.env_check(wrong)
        assert exc.value.message.startswith(message), exc.value.message


def test_the_cli_modules_of_these_commands_only_parse_call_api_and_render() -> None:
    """cli/studies, records, envcheck and parse reach the core through lnrepro.api alone (before,
    they called studies, doors.store, gtest, hangs and envcheck themselves)."""
    import ast

    allowed = ("lnrepro.api", "lnrepro.cli", "lnrepro.model", "lnrepro.errors", "lnrepro.present")
    help_text = {"lnrepro.emulator.defects"}  # DEFECT_NAMES, for --defect's help
    root = Path(api.__file__).parent / "cli"
    wrong = []
    for name in ("studies", "records", "envcheck", "parse"):
        for node in ast.walk(ast.parse((root / f"{name}.py").read_text())):
            if (
                isinstance(node, ast.ImportFrom)
                and node.module
                and node.module.startswith("lnrepro")
            ):
                mods = (
                    [f"lnrepro.{a.name}" for a in node.names]
                    if node.module == "lnrepro"
                    else [node.module]
                )
                wrong += [
                    f"cli/{name}.py:{node.lineno} {m}"
                    for m in mods
                    if not m.startswith(allowed) and m not in help_text
                ]
    assert not wrong, wrong
