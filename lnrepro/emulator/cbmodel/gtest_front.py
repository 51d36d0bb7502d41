"""googletest's front end, once, for both of lnrepro's googletest binaries (this model's and the
LayerNorm emulator's, :mod:`lnrepro.emulator.gtest_main`): the filter, the console's markers and
summary, the JSON and XML reports (``--gtest_output=json:PATH`` / ``xml:PATH``, with each test's
``RecordProperty`` pairs) and how the program exits. Each binary keeps its own flags and tests.

Followed from googletest 1.12.1's ``gtest.cc`` (the version Debian ships, checked against its
binaries in tests/gtest): ``PrettyUnitTestResultPrinter`` and ``BriefUnitTestResultPrinter``
(the failed list and its ``"\n%2d FAILED %s\n"`` only without ``--gtest_brief``),
``XmlUnitTestResultPrinter::OutputXmlTestProperties`` and
``JsonUnitTestResultPrinter::TestPropertiesAsJson`` (a test's properties: XML ``<properties>``
after its failures, JSON keys after ``classname``), ``UnitTestOptions::GetAbsolutePathToOutputFile``
(a directory: the program's name, made unique). It lives in this package because the package
uses only the standard library and is shipped whole into the look-alike."""

from __future__ import annotations

import fnmatch
import json
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO, TypeVar
from xml.sax.saxutils import escape, quoteattr

KINDS = ("json", "xml")
Failure = tuple[str, int, str]  # (file, line, message)
GREEN, RED, RESET = "\x1b[0;32m", "\x1b[0;31m", "\x1b[m"
T = TypeVar("T")


class FlagError(Exception):
    """A flag the binary cannot take: one line on stderr, exit 2."""


class Help(Exception):
    """``--help``: the usage on stdout, exit 0."""


class ExitNow(Exception):
    """googletest prints a message and exits 1 (bad sharding variables, an unwritable status file)."""


def matches(name: str, gtest_filter: str) -> bool:
    """googletest's filter: ``POSITIVE[-NEGATIVE]``, each ':'-separated wildcards (* and ?)."""

    def hit(patterns: str) -> bool:
        return any(fnmatch.fnmatchcase(name, p) for p in patterns.split(":") if p)

    pos, _, neg = gtest_filter.partition("-")
    return hit(pos or "*") and not (neg and hit(neg))


def select(items: Iterable[T], gtest_filter: str, name: Callable[[T], str]) -> list[T]:
    """The tests (in order) whose full name passes the filter."""
    return [item for item in items if matches(name(item), gtest_filter)]


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def use_color(color: str, out: TextIO, term: str | None) -> bool:
    """``--gtest_color``: yes/true/t/1, or auto on a terminal that is not dumb."""
    return color in ("yes", "true", "t", "1") or (
        color == "auto" and out.isatty() and (term or "dumb") != "dumb"
    )


class Printer:
    """The console's markers, as googletest's pretty (or, with ``brief``, brief) printer."""

    def __init__(self, out: TextIO, color: bool, brief: bool, print_time: bool = True) -> None:
        self.out, self.color, self.brief, self.print_time = out, color, brief, print_time

    def marker(self, tag: str, text: str, colour: str = GREEN, always: bool = False) -> None:
        if self.brief and not always:
            return
        if self.color:
            self.out.write(f"{colour}{tag} {RESET}{text}\n")
        else:
            self.out.write(f"{tag} {text}\n")

    def line(self, text: str, always: bool = False) -> None:
        if always or not self.brief:
            self.out.write(text + "\n")

    def time(self, ms: int) -> str:
        return f" ({ms} ms)" if self.print_time else ""

    def filter_note(self, gtest_filter: str) -> None:
        if gtest_filter != "*" and not self.brief:
            self.out.write(f"Note: Google Test filter = {gtest_filter}\n")

    def set_up(self, n_tests: int) -> None:
        suites = plural(1 if n_tests else 0, "test suite")
        self.marker("[==========]", f"Running {plural(n_tests, 'test')} from {suites}.")
        self.marker("[----------]", "Global test environment set-up.")

    def suite_start(self, n_tests: int, suite: str) -> None:
        self.marker("[----------]", f"{plural(n_tests, 'test')} from {suite}")

    def suite_end(self, n_tests: int, suite: str, total_ms: int) -> None:
        self.marker("[----------]", f"{plural(n_tests, 'test')} from {suite} ({total_ms} ms total)")
        self.line("")

    def test_start(self, full_name: str) -> None:
        self.marker("[ RUN      ]", full_name)
        self.out.flush()

    def test_end(self, full_name: str, passed: bool, ms: int) -> None:
        if passed:
            self.marker("[       OK ]", full_name + self.time(ms))
        else:
            self.marker("[  FAILED  ]", full_name + self.time(ms), RED, always=True)
        self.out.flush()

    def tear_down(self, n_tests: int, total_ms: int, n_passed: int, failed: Sequence[str]) -> None:
        """The iteration's summary: what ran, what passed, and (not brief) the failed list."""
        self.marker("[----------]", "Global test environment tear-down")
        ran = f"{plural(n_tests, 'test')} from {plural(1 if n_tests else 0, 'test suite')} ran."
        took = f" ({total_ms} ms total)" if self.print_time else ""
        self.marker("[==========]", ran + took, always=True)
        self.marker("[  PASSED  ]", f"{plural(n_passed, 'test')}.", always=True)
        if failed and not self.brief:
            self.marker("[  FAILED  ]", f"{plural(len(failed), 'test')}, listed below:", RED)
            for name in failed:
                self.marker("[  FAILED  ]", name, RED)
            self.out.write(f"\n{len(failed):2d} FAILED {'TEST' if len(failed) == 1 else 'TESTS'}\n")


def metal_log(out: TextIO, level: str, who: str, text: str, where: str) -> None:
    """A line shaped like tt-metal's logger's, which a real run prints around its tests: the
    time, the level, who logs, the text and where in the source."""
    stamp = datetime.now().strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
    out.write(f"{stamp} | {level:<8} | {who:>15} | {text} ({where})\n")
    out.flush()


def list_tests(out: TextIO, suite: str, names: Sequence[str]) -> None:
    """``--gtest_list_tests``: the suite, then its tests indented (nothing when none pass)."""
    if names:
        out.write(f"{suite}.\n" + "".join(f"  {n}\n" for n in names))


@dataclass(frozen=True)
class Reported:
    """One test as the report shows it."""

    name: str
    file: str
    line: int
    timestamp: float  # when it started (seconds since the epoch)
    ms: int
    failures: Sequence[Failure] = ()
    # googletest's RecordProperty pairs, in the order recorded
    properties: Mapping[str, str] = field(default_factory=dict)


def iso(ts: float) -> str:
    return (
        datetime.fromtimestamp(ts).strftime("%Y-%m-%dT%H:%M:%S.") + f"{int(ts * 1000) % 1000:03d}"
    )


def report_text(
    kind: str, suite: str | None, results: Sequence[Reported], started: float, total_ms: int
) -> str:
    """The report of ``kind`` (one of :data:`KINDS`): the suite's tests (no suite: none ran)."""
    failed = sum(1 for r in results if r.failures)
    if kind == "json":
        counts = {
            "tests": len(results),
            "failures": failed,
            "disabled": 0,
            "errors": 0,
            "timestamp": iso(started) + "Z",
            "time": f"{total_ms / 1000:.3f}s",
        }  # one suite: the program's totals and the suite's are the same
        tests = []
        for r in results:
            t: dict[str, Any] = {
                "name": r.name,
                "file": r.file,
                "line": r.line,
                "status": "RUN",
                "result": "COMPLETED",
                "timestamp": iso(r.timestamp) + "Z",
                "time": f"{r.ms / 1000:.3f}s",
                "classname": suite,
                **r.properties,
            }
            if r.failures:
                t["failures"] = [
                    {"failure": f"{f}:{ln}\n{m}", "type": ""} for f, ln, m in r.failures
                ]
            tests.append(t)
        doc = {
            **counts,
            "name": "AllTests",
            "testsuites": [{"name": suite, **counts, "testsuite": tests}] if suite else [],
        }
        return json.dumps(doc, indent=2) + "\n"
    xml = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<testsuites tests="{len(results)}" failures="{failed}" disabled="0" errors="0" '
        f'time="{total_ms / 1000:.3f}" timestamp="{iso(started)}" name="AllTests">',
    ]
    if suite:
        xml.append(
            f'  <testsuite name="{suite}" tests="{len(results)}" failures="{failed}" disabled="0" '
            f'skipped="0" errors="0" time="{total_ms / 1000:.3f}" timestamp="{iso(started)}">'
        )
        for r in results:
            attrs = (
                f'name="{r.name}" file="{r.file}" line="{r.line}" status="run" '
                f'result="completed" time="{r.ms / 1000:.3f}" timestamp="{iso(r.timestamp)}" '
                f'classname="{suite}"'
            )
            if not r.failures and not r.properties:
                xml.append(f"    <testcase {attrs} />")
                continue
            xml.append(f"    <testcase {attrs}>")
            for f, ln, m in r.failures:
                text = f"{f}:{ln}\n{m}"
                xml.append(
                    f'      <failure message={quoteattr(text)} type=""><![CDATA[{escape(text)}]]></failure>'
                )
            if r.properties:
                xml.append("      <properties>")
                xml.extend(
                    f'        <property name="{_attr(k)}" value="{_attr(v)}"/>'
                    for k, v in r.properties.items()
                )
                xml.append("      </properties>")
            xml.append("    </testcase>")
        xml.append("  </testsuite>")
    xml.append("</testsuites>")
    return "\n".join(xml) + "\n"


def _attr(text: str) -> str:
    """googletest's ``EscapeXmlAttribute``: markup and both quotes as entities, a newline as
    ``&#x0A;``."""
    return escape(text, {'"': "&quot;", "'": "&apos;", "\n": "&#x0A;"})


def write_report(
    spec: str,
    suite: str | None,
    results: Sequence[Reported],
    started: float,
    total_ms: int,
    program: str,
) -> None:
    """``--gtest_output=KIND[:PATH]``: the report at PATH (default ``test_detail.KIND``); a
    directory (or a path ending in ``/``) gets the program's name (``program`` when Python runs
    a module), made unique with ``_1``…"""
    kind, _, where = spec.partition(":")
    if kind not in KINDS:
        raise FlagError(f"--gtest_output: unknown format {kind!r} (use json:PATH or xml:PATH)")
    path = Path(where or f"test_detail.{kind}")
    if where.endswith("/") or path.is_dir():
        stem = Path(sys.argv[0]).stem
        stem = program if stem in ("", "__main__", "-c") else stem
        path = path / f"{stem}.{kind}"
        n = 0
        while path.exists():
            n += 1
            path = path.parent / f"{stem}_{n}.{kind}"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(report_text(kind, suite, results, started, total_ms), encoding="utf-8")


def exit_status(
    body: Callable[[], int], usage: str, prog: str, errors: tuple[type[Exception], ...] = ()
) -> int:
    """How a googletest binary ends: ``body``'s status (1 if a test failed), the usage and 0 on
    ``--help``, googletest's message and 1 on :class:`ExitNow`, one line on stderr and 2 on a bad
    flag (:class:`FlagError` or one of ``errors``), 0 on a closed pipe, 130 on Ctrl-C."""
    bad_flag: tuple[type[Exception], ...] = (FlagError, *errors)
    try:
        return body()
    except Help:
        sys.stdout.write(usage)
        return 0
    except ExitNow as exc:
        sys.stdout.write(f"{exc}\n")
        return 1
    except bad_flag as exc:
        sys.stderr.write(f"{prog}: {exc}\n")
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130
