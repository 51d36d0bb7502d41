"""Reader for ``pytest --junitxml=PATH`` reports: one :class:`TestResult` per pytest node id.

How pytest writes the file (``src/_pytest/junitxml.py``; read in pytest-dev/pytest @03fd05a
and in the pytest 9.2 this project tests against):

* ``<testsuites><testsuite …><testcase classname=… name=… time=…>``; pytest < 5.1 wrote a
  bare ``<testsuite>`` root; merged reports hold several ``testsuite`` elements.
* ``mangle_test_address(nodeid)``: the path's ``/`` become ``.``, ``.py`` is dropped, classes
  follow, and the ``[params]`` stay on ``name`` (``test_m[a[b]]``, ``test_m[p::q]``): so
  ``classname`` is ``tests.ttnn.test_ln.TestK`` and the file/class boundary is lost. Only
  ``junit_family=xunit1`` (and ``legacy``) keeps ``file`` and ``line`` (0-based) attributes;
  ``xunit2``, pytest's default, drops them. The node id is rebuilt from ``file`` when present,
  else from the node ids that were asked for, else from files under the root directory, else
  by taking trailing capitalised segments as classes.
* a failed call: ``<failure message=reprcrash.message>`` with the long report as text
  (pytest ≥ 9 shortens the attribute and ends it with ``[+N more lines; full report in element
  text]``); a setup/teardown error: ``<error message='failed on setup with "…"'>``; a call
  failure *and* a teardown error: two ``testcase`` elements with the same names (merged here
  into one result); a collection error: ``<error message="collection failure">`` on a testcase
  whose ``classname`` is empty and whose ``name`` is the dotted module path; an internal error:
  ``classname="pytest" name="internal"``.
* skip: ``<skipped type="pytest.skip" message=reason>``; xfail: ``<skipped type="pytest.xfail"
  message=reason>``; a strict xpass is a failure ``[XPASS(strict)] reason``; a non-strict xpass
  is written as a plain pass; old versions wrote ``<skipped message="xfail-marked test passes
  unexpectedly">`` for a failed xpass.
* ``junit_logging=all``: ``system-out`` (``Captured Log`` then ``Captured Out``) and
  ``system-err`` (``Captured Err``), for passing tests too unless ``junit_log_passing_tests``
  is false; ``record_property`` adds ``<properties><property name value/>``.

Statuses: any ``failure``/``error`` → FAILED; else ``skipped`` → SKIPPED (an xfail's message is
``xfail: <reason>``); else PASSED. Metrics come from PCC lines in failure/error texts and in
``system-out``/``system-err`` (:mod:`lnrepro.pytests.pcc`) and from numeric ``*pcc`` properties.
"""

from __future__ import annotations

import itertools
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lnrepro.errors import MalformedReport
from lnrepro.model.gtest import Failure, GtestRun, Iteration, TestResult, TestStatus
from lnrepro.model.metrics import UNNAMED
from lnrepro.model.numerics import Comparison
from lnrepro.numerics.messages import read_message
from lnrepro.pytests.pcc import PCC, PccReading, add_readings, parse_output, parse_traceback

_FIX = "pass the file pytest wrote with --junitxml=PATH"
# pytest >= 9 shortens a failure's message attribute and says so on its last line
_SHORTENED = re.compile(r"\n\[(?:\+\d+ more lines?|truncated); full report in element text\]$")
_PY_LOCATION = re.compile(r"^(?P<file>[^\s>].*?):(?P<line>\d+):(?: |$)")
_NATIVE_LOCATION = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)')
_PROPERTY_PCC = re.compile(r"^(?:(?P<tensor>.+?)[_.:])?pcc$", re.IGNORECASE)
_CLASSLIKE = re.compile(r"^[A-Z]")


@dataclass
class JunitReport:
    """What a pytest JUnit report says.

    ``thresholds``: node id → tensor → the required PCC its texts state (rarely: tt-metal's
    helpers do not print it; see :mod:`lnrepro.pytests.pcc`).
    """

    tests: list[TestResult] = field(default_factory=list)
    thresholds: dict[str, dict[str, float]] = field(default_factory=dict)
    global_failures: list[Failure] = field(default_factory=list)
    family: str = "xunit2"  # "xunit1" when testcases carry file/line attributes
    timestamp: str | None = None
    warnings: list[str] = field(default_factory=list)

    def as_run(self, exit_code: int | None = None) -> GtestRun:
        """The report as a one-iteration :class:`GtestRun` (what the console parser returns)."""
        it = Iteration(index=1, started=True, finished=True)
        it.tests = self.tests
        it.global_failures = self.global_failures
        return GtestRun(
            iterations=[it],
            exit_code=exit_code,
            warnings=list(self.warnings),
            saw_gtest_output=bool(self.tests or self.global_failures),
        )


# --- node ids ---------------------------------------------------------------------------------
def _dotted(path: str) -> str:
    return re.sub(r"\.py$", "", path).replace("/", ".")


def _join(path: str, classes: Sequence[str], name: str) -> str:
    return "::".join([path, *classes, name])


def node_id(
    classname: str,
    name: str,
    file: str | None = None,
    *,
    requested: Iterable[str] = (),
    root: Path | None = None,
) -> str:
    """Rebuild a pytest node id from a testcase's ``classname``/``name`` (and xunit1 ``file``).

    ``requested``: the node ids (or files, directories) pytest was asked to run; they say where
    the module ends in a dotted ``classname`` even when a directory name holds a dot.
    ``root``: pytest's root directory, where a candidate ``a/b.py`` can be looked for.
    """
    if not classname:  # a collection report: name is the dotted module path
        if file:
            return file.replace("\\", "/")
        for rid in requested:
            path = rid.partition("::")[0]
            if path.endswith(".py") and _dotted(path) == name:
                return path
        return name.replace(".", "/") + ".py"
    candidates: list[str] = []
    if file:
        candidates.append(file.replace("\\", "/"))
    candidates.extend(rid.partition("::")[0] for rid in requested)
    for path in candidates:
        if not path.endswith(".py"):
            continue
        d = _dotted(path)
        if classname == d:
            return _join(path, [], name)
        if classname.startswith(d + "."):
            return _join(path, classname[len(d) + 1 :].split("."), name)
    # a requested directory fixes the leading part, dots and all
    prefix, parts = "", classname.split(".")
    for rid in requested:
        path = rid.partition("::")[0].rstrip("/")
        if path and not path.endswith(".py") and classname.startswith(_dotted(path) + "."):
            prefix, parts = path + "/", classname[len(_dotted(path)) + 1 :].split(".")
            break
    if root is not None:
        for i in range(len(parts), 0, -1):
            path = prefix + "/".join(parts[:i]) + ".py"
            if (root / path).is_file():
                return _join(path, parts[i:], name)
    # pytest's default python_classes is "Test*": classes are the trailing capitalised parts
    i = len(parts)
    while i > 1 and _CLASSLIKE.match(parts[i - 1]):
        i -= 1
    return _join(prefix + "/".join(parts[:i]) + ".py", parts[i:], name)


def _params(name: str) -> str | None:
    _head, bracket, rest = name.partition("[")
    return rest[:-1] if bracket and rest.endswith("]") else None


# --- failures ----------------------------------------------------------------------------------
def _location(text: str) -> tuple[str | None, int | None]:
    """The last ``path:line:`` of a pytest report (``File "…", line N`` for --tb=native)."""
    file: str | None = None
    line: int | None = None
    for ln in text.splitlines():
        if ln.startswith("E ") or ln == "E":
            continue
        m = _PY_LOCATION.match(ln) or _NATIVE_LOCATION.match(ln)
        if m:
            file, line = m.group("file"), int(m.group("line"))
    return file, line


def _message(attr: str, text: str) -> str:
    """The failure's message attribute, whole again when pytest shortened it."""
    if not _SHORTENED.search(attr):
        return attr.strip() or _last_exception(text) or text.strip()
    return _last_exception(text) or _SHORTENED.sub("", attr).strip()


def _last_exception(text: str) -> str:
    """The last block of ``E`` lines of a long report, without the ``E`` column."""
    runs = itertools.groupby(text.splitlines(), key=lambda ln: ln.startswith("E ") or ln == "E")
    blocks = [[ln[1:].strip() for ln in run] for is_e, run in runs if is_e]
    return "\n".join(blocks[-1]) if blocks else ""


def _failure(el: ET.Element) -> Failure:
    text = el.text or ""
    file, line = _location(text)
    return Failure(file=file, line=line, message=_message(el.get("message", ""), text))


# --- reading ------------------------------------------------------------------------------------
@dataclass
class _Case:
    result: TestResult
    readings: list[PccReading] = field(default_factory=list)


def _seconds_to_ms(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return float(value) * 1000.0
    except ValueError:
        return None


def _read_case(case: ET.Element, nid: str) -> _Case:
    status = TestStatus.PASSED
    failures: list[Failure] = []
    readings: list[PccReading] = []
    skip_message: str | None = None
    comparisons: list[Comparison] = []
    for child in case:
        tag = child.tag
        if tag in ("failure", "error"):
            f = _failure(child)
            failures.append(f)
            comparisons.extend(read_message(child.text or f.message))
            readings.extend(parse_traceback(child.text or "") or parse_output(f.message))
        elif tag == "skipped":
            msg = child.get("message", "")
            if msg == "xfail-marked test passes unexpectedly":
                failures.append(Failure(message=msg))
            elif child.get("type") == "pytest.xfail":
                skip_message = f"xfail: {msg}"
            else:
                skip_message = msg
        elif tag in ("system-out", "system-err"):
            readings.extend(parse_output(child.text or ""))
        elif tag == "properties":
            for prop in child.iter("property"):
                m = _PROPERTY_PCC.match(prop.get("name", ""))
                try:
                    value = float(prop.get("value", ""))
                except ValueError:
                    continue
                if m:
                    readings.append(
                        PccReading(m.group("tensor") or UNNAMED, PCC, value, form="property")
                    )
    if failures:
        status = TestStatus.FAILED
    elif skip_message is not None:
        status = TestStatus.SKIPPED
    result = TestResult(
        name=nid,
        status=status,
        duration_ms=_seconds_to_ms(case.get("time")),
        failures=failures,
        param=_params(case.get("name", "")),
        skip_message=skip_message if status is TestStatus.SKIPPED else None,
        comparisons=comparisons,
    )
    for c in comparisons:  # the counts, greatest differences and tolerances, as metrics
        for key, value in c.metrics().items():
            result.add_metric(c.tensor, key, value)
    return _Case(result, readings)


def _merge(into: _Case, more: _Case) -> None:
    """pytest writes a call failure and a teardown error of one test as two testcases."""
    a, b = into.result, more.result
    a.failures.extend(b.failures)
    a.comparisons.extend(b.comparisons)
    if b.status is TestStatus.FAILED or (
        b.status is TestStatus.SKIPPED and a.status is TestStatus.PASSED
    ):
        a.status = b.status
        a.skip_message = b.skip_message
    if a.status is not TestStatus.SKIPPED:
        a.skip_message = None
    if b.duration_ms is not None:
        a.duration_ms = (a.duration_ms or 0.0) + b.duration_ms
    into.readings.extend(more.readings)


def parse_junit(
    data: bytes | str,
    *,
    requested: Iterable[str] = (),
    root: Path | None = None,
    source: str = "JUnit report",
) -> JunitReport:
    """Read the text of a pytest JUnit XML report. Raises :class:`MalformedReport`."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if not raw.strip():
        raise MalformedReport(
            f"{source} is empty",
            "pytest writes --junitxml when the session ends; rerun it to the end",
        )
    lowered = raw.lower()
    if b"<!doctype" in lowered or b"<!entity" in lowered:
        raise MalformedReport(
            f"{source} declares a DOCTYPE or entities, which lnrepro refuses to read",
            _FIX + " (pytest never writes a DOCTYPE)",
        )
    try:
        root_el = ET.fromstring(raw)
    except ET.ParseError as exc:
        row, col = exc.position
        raise MalformedReport(
            f"{source} is not well-formed XML at line {row}, column {col} (cut off while "
            "pytest was writing it, or not XML)",
            _FIX + "; a pytest killed before the end of its session leaves none or part of one",
        ) from None
    if root_el.tag == "testsuite":
        suites = [root_el]
    elif root_el.tag == "testsuites":
        suites = list(root_el.iter("testsuite"))
    else:
        raise MalformedReport(
            f"{source}'s root element is <{root_el.tag}>, not <testsuites> or <testsuite>: "
            "not a JUnit report",
            _FIX,
        )
    wanted = list(requested)
    report = JunitReport(timestamp=suites[0].get("timestamp") if suites else None)
    cases: dict[str, _Case] = {}
    for suite in suites:
        for case in suite.findall("testcase"):
            classname, name = case.get("classname", ""), case.get("name", "")
            if case.get("file") is not None:
                report.family = "xunit1"
            if classname == "pytest" and name == "internal":
                for child in case:
                    if child.tag in ("error", "failure"):
                        text = (child.text or "").strip()
                        where, lineno = _location(text)
                        last = text.splitlines()[-1] if text else child.get("message", "")
                        report.global_failures.append(
                            Failure(
                                file=where, line=lineno, message=f"pytest internal error: {last}"
                            )
                        )
                continue
            if not classname and not name:
                report.warnings.append("a testcase without classname or name was ignored")
                continue
            nid = node_id(classname, name, case.get("file"), requested=wanted, root=root)
            read = _read_case(case, nid)
            if nid in cases:
                _merge(cases[nid], read)
            else:
                cases[nid] = read
    for nid, c in cases.items():
        thresholds: dict[str, float] = {}
        add_readings(c.result.metrics, thresholds, c.readings)
        if thresholds:
            report.thresholds[nid] = thresholds
        report.tests.append(c.result)
    return report


def read_junit(
    path: Path, *, requested: Iterable[str] = (), root: Path | None = None
) -> JunitReport:
    """Read the JUnit XML file pytest wrote. Raises :class:`MalformedReport`."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise MalformedReport(
            f"no such JUnit report: {path}",
            "check the path; pytest writes --junitxml only when its session ends, so a crashed "
            "or killed pytest leaves none (see its exit code and console log)",
        ) from None
    except IsADirectoryError:
        raise MalformedReport(f"{path} is a directory, not a JUnit report", _FIX) from None
    except OSError as exc:
        raise MalformedReport(
            f"cannot read JUnit report {path}: {exc.strerror}", "check permissions"
        ) from None
    return parse_junit(data, requested=requested, root=root, source=str(path))
