"""Conformance over googletest's own golden outputs and expected reports (../shared/corpus).

The corpus is data we may read but not copy; when the folder is absent these tests say so.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lnrepro.gtest.console import parse_bytes, parse_chunks
from lnrepro.gtest.reportfile import read_json, read_report, read_xml
from lnrepro.model.gtest import TestStatus
from tests.conftest import CORPUS


@pytest.fixture(autouse=True)
def _corpus() -> None:
    """The corpus is data a machine keeps beside the checkout, not a tool .ci/run can install: a
    clone placed elsewhere (without $LNREPRO_GTEST_CORPUS) skips these tests, in CI too."""
    if not CORPUS.is_dir():
        pytest.skip(f"corpus folder {CORPUS} is absent (set LNREPRO_GTEST_CORPUS)")


GOLDEN = [
    "googletest-output-test-golden-lin.HEAD.txt",
    "googletest-output-test-golden-lin.release-1.12.1.txt",
]


@pytest.mark.parametrize("name", GOLDEN)
def test_golden_console_counts_match_gtest_summaries(name: str) -> None:
    data = (CORPUS / name).read_bytes()
    run = parse_bytes(data, exit_code=1)
    # the golden file is four programs one after another: colour run, filtered, disabled, sharded
    assert len(run.iterations) == 4
    for it in run.iterations:
        counts = {s: sum(t.status is s for t in it.tests) for s in TestStatus}
        assert it.finished
        assert counts[TestStatus.PASSED] == it.summary.passed
        assert counts[TestStatus.FAILED] == (it.summary.failed or 0)
        assert counts[TestStatus.SKIPPED] == (it.summary.skipped or 0)
        assert not [t for t in it.tests if t.status is TestStatus.CRASHED]
    first = run.iterations[0]
    # "The non-test part of the code is expected to have 2 failures." plus the environment's
    assert len(first.global_failures) >= 2
    assert "TestSuiteThatFailsToSetUp" in first.suite_failures
    by = {t.name: t for t in first.tests}
    assert by["PrintingFailingParams/FailingParamTest.Fails/0"].param == "2"
    assert by["TypedTest/0.Failure"].type_param == "int"
    assert run.iterations[1].gtest_filter == "FatalFailureTest.*:LoggingTest.*"
    assert run.iterations[3].shard == (2, 2)
    assert first.summary.disabled == 1


@pytest.mark.parametrize("name", GOLDEN)
def test_golden_console_chunking_invariant(name: str) -> None:
    data = (CORPUS / name).read_bytes()
    whole = parse_bytes(data).to_json()
    for size in (3, 97, 1000):
        assert (
            parse_chunks([data[i : i + size] for i in range(0, len(data), size)]).to_json() == whole
        )


def test_gmock_output_inside_tests() -> None:
    run = parse_bytes((CORPUS / "gmock_output_test_golden.HEAD.txt").read_bytes())
    assert run.tests, "gMock warnings between markers do not hide the tests"
    assert all(t.status in (TestStatus.PASSED, TestStatus.FAILED) for t in run.tests)
    assert any(t.status is TestStatus.FAILED and t.failures for t in run.tests)


def _pairs(report):  # type: ignore[no-untyped-def]
    return sorted((t.name, t.status) for t in report.tests)


@pytest.mark.parametrize("kind", ["NON_EMPTY", "FILTERED", "NO_TEST"])
def test_json_and_xml_expected_reports_agree(kind: str) -> None:
    j = read_json(
        (CORPUS / f"googletest-json-output-unittest__EXPECTED_{kind}.expected.json").read_text()
    )
    xml_kind = {"FILTERED": "FILTERED_TEST"}.get(kind, kind)
    x = read_xml(
        (CORPUS / f"gtest_xml_output_unittest__EXPECTED_{xml_kind}_XML.expected.xml").read_text()
    )
    assert _pairs(j) == _pairs(x)
    assert len(j.global_failures) == len(x.global_failures)
    assert sorted(j.suite_failures) == sorted(x.suite_failures)


def test_json_report_semantics() -> None:
    rep = read_json(
        (CORPUS / "googletest-json-output-unittest__EXPECTED_NON_EMPTY.expected.json").read_text()
    )
    by = {t.name: t for t in rep.tests}
    assert by["SuccessfulTest.Succeeds"].status is TestStatus.PASSED
    assert by["FailedTest.Fails"].status is TestStatus.FAILED
    assert by["FailedTest.Fails"].failures[0].file == "gtest_xml_output_unittest_.cc"
    assert by["DisabledTest.DISABLED_test_not_run"].status is TestStatus.DISABLED
    assert by["SkippedTest.Skipped"].status is TestStatus.SKIPPED
    assert by["SuccessfulTest.Succeeds"].duration_ms is None  # "*" is not a time
    assert rep.suite_failures, "suite set-up failures are entries with empty names"
    assert any(t.type_param == "int" for t in rep.tests)
    no_test = read_json(
        (CORPUS / "googletest-json-output-unittest__EXPECTED_NO_TEST.expected.json").read_text()
    )
    assert not no_test.tests and len(no_test.global_failures) == 1


@pytest.mark.parametrize("path", sorted(CORPUS.glob("*.expected.*")) if CORPUS.is_dir() else [])
def test_every_expected_report_reads_or_fails_cleanly(path: Path) -> None:
    if path.name.endswith(".txt"):  # the list-output files are regular expressions
        return
    rep = read_report(path)
    assert rep.tests or rep.global_failures or rep.suite_failures
