"""googletest 1.12's JSON and XML reports (``--gtest_output=json:PATH`` / ``xml:PATH``) of one
suite, for both of lnrepro's googletest binaries: this model's and the LayerNorm emulator's
(:mod:`lnrepro.emulator.gtest_main`). It lives in this package because the package uses only the
standard library and is shipped whole into the look-alike."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from xml.sax.saxutils import escape, quoteattr

KINDS = ("json", "xml")
Failure = tuple[str, int, str]  # (file, line, message)


@dataclass(frozen=True)
class Reported:
    """One test as the report shows it."""

    name: str
    file: str
    line: int
    timestamp: float  # when it started (seconds since the epoch)
    ms: int
    failures: Sequence[Failure] = ()
    # RecordProperty(key, value) calls, in order: googletest keeps the last value of a key
    properties: Sequence[tuple[str, str]] = ()


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
            }
            # googletest 1.12.1 gtest.cc, JsonUnitTestResultPrinter::OutputJsonTestResult ->
            # TestPropertiesAsJson: each property a string member of the test object, after
            # "classname" (before "failures")
            t.update(dict(r.properties))
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
            props = dict(r.properties)
            # googletest 1.12.1 gtest.cc, XmlUnitTestResultPrinter::OutputXmlTestInfo: the
            # properties as attributes after "classname" (TestPropertiesAsXmlAttributes), then,
            # after the failures, a <properties> element (OutputXmlTestProperties)
            attrs += "".join(f" {k}={quoteattr(v)}" for k, v in props.items())
            if not r.failures and not props:
                xml.append(f"    <testcase {attrs} />")
                continue
            xml.append(f"    <testcase {attrs}>")
            for f, ln, m in r.failures:
                text = f"{f}:{ln}\n{m}"
                xml.append(
                    f'      <failure message={quoteattr(text)} type=""><![CDATA[{escape(text)}]]></failure>'
                )
            if props:
                xml.append("      <properties>")
                for k, v in props.items():
                    xml.append(f"        <property name={quoteattr(k)} value={quoteattr(v)}/>")
                xml.append("      </properties>")
            xml.append("    </testcase>")
        xml.append("  </testsuite>")
    xml.append("</testsuites>")
    return "\n".join(xml) + "\n"
