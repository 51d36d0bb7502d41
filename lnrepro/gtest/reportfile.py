"""Readers for googletest's ``--gtest_output=json:`` and ``xml:`` reports, and merging.

googletest quirks handled here:

* ``status``/``result`` pairs: ``RUN``/``COMPLETED`` is pass *or* fail (a failure is a
  non-empty ``failures`` list), ``RUN``/``SKIPPED`` is skipped, ``NOTRUN``/``SUPPRESSED``
  is disabled; older versions have no ``result`` at all.
* times are strings with a unit (``"0.12s"``) in JSON and bare seconds in XML.
* failures outside any test appear as a ``NonTestSuiteFailure`` suite, and suite
  set-up failures as a test case with an empty name.
* the ``skipped`` element exists only from googletest 1.15.
* a crashed run writes no report; a ``--gtest_repeat`` run overwrites it each iteration.
* ``RecordProperty(key, value)`` (googletest 1.12.1 gtest.cc): in JSON each property is a string
  member of the test's object (``TestPropertiesAsJson``); in XML an attribute of ``<testcase>``
  and a ``<property name= value=>`` of its ``<properties>``. Kept for passing tests too, so a
  property named ``<tensor>.<metric>`` with a number (``dx.max_diff``, ``dx.used``) becomes that
  tensor's metric: the margin of a test that passed.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lnrepro.errors import MalformedReport
from lnrepro.model.gtest import Failure, GtestRun, Iteration, TestResult, TestStatus

_FILE_LINE = re.compile(r"^(?P<file>.+?):(?P<line>\d+|\*)$")  # "*": normalised in golden files
_SECONDS = re.compile(r"^\s*(?P<s>\d+(?:\.\d*)?)\s*s?\s*$")


@dataclass
class Report:
    """What a report says: per-test results plus failures that belong to no test."""

    tests: list[TestResult] = field(default_factory=list)
    global_failures: list[Failure] = field(default_factory=list)
    suite_failures: dict[str, list[Failure]] = field(default_factory=dict)
    timestamp: str | None = None


def _seconds_to_ms(value: Any) -> float | None:
    if value is None:
        return None
    m = _SECONDS.match(str(value))
    return float(m.group("s")) * 1000.0 if m else None


def _failure(text: str) -> Failure:
    first, _, rest = text.partition("\n")
    m = _FILE_LINE.match(first)
    if m:
        line = m.group("line")
        return Failure(
            file=m.group("file"),
            line=int(line) if line.isdigit() else None,
            message=rest.rstrip("\n"),
        )
    if first.startswith("unknown file"):
        return Failure(message=rest.rstrip("\n"))
    return Failure(message=text.rstrip("\n"))


def _status(status: str, result: str | None, failed: bool) -> TestStatus:
    status = status.upper()
    result = (result or "").upper()
    if status == "NOTRUN" or result == "SUPPRESSED":
        return TestStatus.DISABLED
    if result == "SKIPPED":
        return TestStatus.SKIPPED
    return TestStatus.FAILED if failed else TestStatus.PASSED


# the members googletest itself writes into a test's JSON object or XML element
_OWN = frozenset(
    [
        "name",
        "file",
        "line",
        "status",
        "result",
        "timestamp",
        "time",
        "classname",
        "failures",
        "skipped",
        "value_param",
        "type_param",
        "skip_message",
    ]
)


def _properties(case: Mapping[str, object]) -> Iterator[tuple[str, str, float]]:
    """``<tensor>.<metric>`` properties with a number: (tensor, metric, value)."""
    for key, value in case.items():
        if key in _OWN or not isinstance(value, str | int | float) or "." not in str(key):
            continue
        tensor, _, metric = str(key).rpartition(".")
        try:
            number = float(value)
        except ValueError:
            continue
        yield tensor, metric, number


def _add(report: Report, suite: str, case: dict[str, Any], failures: list[Failure]) -> None:
    name = str(case.get("name", ""))
    if suite == "NonTestSuiteFailure":
        report.global_failures.extend(failures)
        return
    if not name:  # a failure in SetUpTestSuite/TearDownTestSuite
        report.suite_failures.setdefault(suite, []).extend(failures)
        return
    status = _status(str(case.get("status", "RUN")), case.get("result"), bool(failures))
    res = TestResult(name=f"{suite}.{name}", status=status)
    res.duration_ms = _seconds_to_ms(case.get("time"))
    res.failures = failures
    for tensor, metric, value in _properties(case):
        res.add_metric(tensor, metric, value)
    res.param = case.get("value_param")
    res.type_param = case.get("type_param")
    if status is TestStatus.SKIPPED:
        res.skip_message = case.get("skip_message")
    report.tests.append(res)


def read_json(text: str) -> Report:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MalformedReport(
            f"report is not valid JSON: {exc.msg} at line {exc.lineno}",
            "pass the file googletest wrote with --gtest_output=json:PATH",
        ) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("testsuites"), list):
        raise MalformedReport(
            "JSON report has no 'testsuites' list: not a googletest report",
            "pass the file googletest wrote with --gtest_output=json:PATH",
        )
    report = Report(timestamp=doc.get("timestamp"))
    for suite in doc["testsuites"]:
        if not isinstance(suite, dict):
            continue
        sname = str(suite.get("name", ""))
        for case in suite.get("testsuite", []) or []:
            if not isinstance(case, dict):
                continue
            failures = [
                _failure(str(f.get("failure", "")))
                for f in case.get("failures", []) or []
                if isinstance(f, dict)
            ]
            skipped = case.get("skipped")
            if isinstance(skipped, list) and skipped and isinstance(skipped[0], dict):
                case = {
                    **case,
                    "skip_message": _failure(str(skipped[0].get("message", ""))).message,
                }
            _add(report, sname, case, failures)
    return report


def read_xml(text: str) -> Report:
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise MalformedReport(
            f"report is not valid XML: {exc}",
            "pass the file googletest wrote with --gtest_output=xml:PATH",
        ) from None
    if root.tag != "testsuites":
        raise MalformedReport(
            f"XML report's root is <{root.tag}>, not <testsuites>: not a googletest report",
            "pass the file googletest wrote with --gtest_output=xml:PATH",
        )
    report = Report(timestamp=root.get("timestamp"))
    for suite in root.iter("testsuite"):
        sname = suite.get("name", "")
        for case in suite.iter("testcase"):
            failures = [_failure(f.text or f.get("message") or "") for f in case.iter("failure")]
            attrs: dict[str, Any] = dict(case.attrib)
            for prop in case.iter("property"):
                if prop.get("name") and prop.get("value") is not None:
                    attrs[str(prop.get("name"))] = prop.get("value")
            sk = case.find("skipped")
            if sk is not None:
                attrs["result"] = attrs.get("result") or "skipped"
                attrs["skip_message"] = _failure(sk.text or sk.get("message") or "").message
            _add(report, sname, attrs, failures)
    return report


def read_report(path: Path) -> Report:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise MalformedReport(
            f"no such report: {path}", "check the path; a crashed gtest writes no report"
        ) from None
    except OSError as exc:
        raise MalformedReport(
            f"cannot read report {path}: {exc.strerror}", "check permissions"
        ) from None
    text = data.decode("utf-8", "replace")
    head = text.lstrip()[:1]
    try:
        if head == "{" or path.suffix.lower() == ".json":
            return read_json(text)
        if head == "<" or path.suffix.lower() == ".xml":
            return read_xml(text)
    except (RecursionError, TypeError, AttributeError, ValueError) as exc:
        # nested beyond reason, or fields of the wrong type ("failures": 5, "testsuite": 7)
        raise MalformedReport(
            f"{path} is not shaped like a googletest report ({type(exc).__name__})",
            "pass the file googletest wrote with --gtest_output=json:PATH or xml:PATH",
        ) from None
    raise MalformedReport(
        f"{path} is neither a JSON nor an XML googletest report",
        "pass the file written by --gtest_output=json:PATH or xml:PATH",
    )


def report_as_run(report: Report) -> GtestRun:
    """A report on its own, as a one-iteration run."""
    it = Iteration(index=1, started=True, finished=True)
    it.tests = report.tests
    it.global_failures = report.global_failures
    it.suite_failures = report.suite_failures
    return GtestRun(iterations=[it], saw_gtest_output=True)


def merge(run: GtestRun, report: Report) -> GtestRun:
    """Merge a report into the console's last iteration (the report holds only the last one).

    The report wins for statuses, times and full failure text when it belongs to this
    run; the console keeps what a report cannot know (crashes after the last write,
    printed metrics).  A report that contradicts the console is stale: it is ignored
    and a warning says so.
    """
    if not run.iterations:
        merged = report_as_run(report)
        merged.exit_code = run.exit_code
        merged.warnings = [*run.warnings, "the log held no test results; using the report alone"]
        return merged
    last = run.iterations[-1]
    by_name = {t.name: t for t in report.tests}
    conflicts, matched = [], 0
    for t in last.tests:
        r = by_name.get(t.name)
        if r is None or t.status in (TestStatus.CRASHED, TestStatus.TIMEOUT):
            continue
        matched += 1
        if r.status is not t.status:
            conflicts.append(t.name)
    if conflicts or (last.tests and report.tests and not matched):
        why = f"{len(conflicts)} test(s) differ, e.g. {conflicts[0]}" if conflicts else ""
        run.warnings.append(
            f"the report does not belong to this log ({why or 'no test in common'}); it was ignored"
        )
        return run
    fakes = [
        t.name
        for t in last.tests
        if t.name not in by_name and t.status not in (TestStatus.CRASHED, TestStatus.TIMEOUT)
    ]
    if fakes and report.tests:
        # the report lists every test that ran: these were lines a test printed
        last.tests = [t for t in last.tests if t.name not in fakes]
        run.warnings.append(
            f"ignored {len(fakes)} result line(s) the report does not know, e.g. {fakes[0]}"
        )
    seen = {t.name for t in last.tests}
    for t in last.tests:
        r = by_name.get(t.name)
        if r is None:
            continue
        if r.duration_ms is not None:
            t.duration_ms = r.duration_ms
        if r.failures and len(r.failures) >= len(t.failures):
            t.failures = r.failures
        for tensor, vals in r.metrics.items():  # RecordProperty's: the report alone has them
            for metric, value in vals.items():
                if metric not in t.metrics.get(tensor, {}):
                    t.add_metric(tensor, metric, value)
        t.param = t.param or r.param
        t.type_param = t.type_param or r.type_param
        t.skip_message = t.skip_message or r.skip_message
    for r in report.tests:  # tests the console did not show: brief mode, disabled
        if r.name not in seen:
            r.iteration = last.index
            last.tests.append(r)
    if not last.global_failures:
        last.global_failures = report.global_failures
    for suite, failures in report.suite_failures.items():
        if not last.suite_failures.get(suite):
            last.suite_failures[suite] = failures
    return run
