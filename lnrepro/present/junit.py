"""JUnit XML for CI: what Jenkins' xunit plugin accepts, flaky tests as Surefire writes them.

Read from jenkinsci/xunit-plugin ``junit-10.xsd`` (031e285ef3): ``testsuites`` carries only
``name, time, tests, failures, errors`` (no ``skipped``); a ``testcase`` has no ``properties``;
``rerunFailure``/``flakyFailure`` need a ``type``. Maven Surefire's rerun model
(maven-surefire-plugin ``surefire-test-report-3.0.xsd``): a test that failed in some attempts and
passed in others is ONE testcase with a ``flakyFailure`` per failed attempt and no ``failure``; a
test that failed every time has a ``failure`` and a ``rerunFailure`` per further attempt.

lnrepro's verdict stays FLAKY (exit 1): the JUnit says "flaky", the way CI dashboards show it.
A run that says nothing about the kernel (the build failed, nothing matched, the environment
failed) is a testcase ``lnrepro.run`` with an ``error`` saying what happened and where the log is.
Every text goes through :func:`lnrepro.present.escape.xml`.
"""

from __future__ import annotations

import platform
import shlex
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Mapping

from lnrepro.model.bisect import BisectRecord, Mark
from lnrepro.model.gtest import TestResult, TestStatus, split_name
from lnrepro.model.record import Attempt, RunRecord
from lnrepro.present.escape import xml
from lnrepro.present.markdown import log_excerpt
from lnrepro.present.text import first_line, fmt_metrics, short


def _sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: object) -> ET.Element:
    el = ET.SubElement(parent, tag, {k: xml(v) for k, v in attrs.items() if v is not None})
    if text:
        el.text = xml(text)
    return el


def _text(root: ET.Element) -> str:
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _secs(s: float) -> str:
    return f"{max(0.0, s):.3f}"


# one test over the attempts: each run's result and attempt
Runs = list[tuple[TestResult, Attempt]]


def _seconds(t: TestResult, a: Attempt) -> float:
    """A test's time; for one killed or crashed mid-way, the attempt's time not spent elsewhere."""
    if t.duration_ms is not None:
        return t.duration_ms / 1000
    others = sum((x.duration_ms or 0) for x in a.tests if x is not t) / 1000
    return (
        max(0.0, a.seconds - others)
        if t.status in (TestStatus.CRASHED, TestStatus.TIMEOUT)
        else 0.0
    )


def _failure_text(t: TestResult) -> tuple[str, str]:
    msgs = [f.message for f in t.failures] or ([t.crash.reason] if t.crash else [])
    return (first_line(msgs[0], 200) if msgs else t.status.value.lower()), "\n\n".join(msgs)


def _attempt(case: ET.Element, tag: str, t: TestResult, a: Attempt) -> None:
    """One failed attempt as Surefire writes it (``flakyFailure``, ``rerunError``, ...)."""
    msg, text = _failure_text(t)
    el = _sub(case, tag, message=f"attempt {a.index}: {msg}", type=t.status.value)
    _sub(el, "stackTrace", text or msg)


def _case(
    suite: ET.Element, name: str, runs: Runs, rec: RunRecord, logs: Mapping[str, str]
) -> dict[str, int]:
    results = [(t, a) for t, a in runs if t.status not in (TestStatus.SKIPPED, TestStatus.DISABLED)]
    skipped = not results
    times = [_seconds(t, a) for t, a in (results or runs)]
    suite_name, test_name = split_name(name)
    cls = suite_name if test_name else "lnrepro"
    case = _sub(
        suite,
        "testcase",
        name=short(name),
        classname=cls,
        time=_secs(sum(times) / max(1, len(times))),
    )
    counts = {"tests": 1, "failures": 0, "errors": 0, "skipped": 0}
    if skipped:
        t = runs[0][0]
        _sub(case, "skipped", message=t.skip_message or t.status.value.lower())
        counts["skipped"] = 1
        return counts
    bad = [(t, a) for t, a in results if t.status is not TestStatus.PASSED]
    env = [
        (t, a)
        for t, a in bad
        if a.environment_failed and t.status in (TestStatus.CRASHED, TestStatus.TIMEOUT)
    ]
    errors = [(t, a) for t, a in bad if t.status in (TestStatus.CRASHED, TestStatus.TIMEOUT)]
    out: list[str] = []
    for t, a in results:
        line = f"attempt {a.index}, iteration {t.iteration}: {t.status.value} ({_secs(_seconds(t, a))} s)"
        if t.metrics:
            line += f"; {fmt_metrics(t.metrics)}"
        out.append(line)
    if bad:
        _first_t, first_a = bad[0]
        excerpt = log_excerpt(logs.get(first_a.log, ""), name) if name != "(process exit)" else ""
        out += ["", f"log: {rec.record_dir / first_a.log}"] + (["", excerpt] if excerpt else [])
        if first_a.hang is not None and _first_t.status is TestStatus.TIMEOUT:
            out += ["", *first_a.hang.lines()]
    passed = len(results) - len(bad)
    if bad and passed:  # flaky: Surefire's flakyFailure/flakyError, one per failed attempt
        for t, a in bad:
            crashed = t.status in (TestStatus.CRASHED, TestStatus.TIMEOUT)
            _attempt(case, "flakyError" if crashed else "flakyFailure", t, a)
    elif bad:  # every attempt: the first is the failure (or error), the others reruns
        t, a = bad[0]
        msg, text = _failure_text(t)
        # where it hangs (tt-triage's hang_report.py marks such a case failure_type=hang)
        if t.status is TestStatus.TIMEOUT and a.hang is not None:
            msg = f"{msg}; hang: {a.hang.key}"
            text = f"{text or msg}\n\n" + "\n".join(a.hang.lines())
        is_error = bool(errors)
        kind = "ENV_ERROR" if env else t.status.value
        _sub(case, "error" if is_error else "failure", text or msg, message=msg, type=kind)
        for t2, a2 in bad[1:]:
            _attempt(case, "rerunError" if is_error else "rerunFailure", t2, a2)
        counts["errors" if is_error else "failures"] = 1
    _sub(case, "system-out", "\n".join(out))
    return counts


def run_junit(rec: RunRecord, logs: Mapping[str, str] | None = None) -> str:
    """A run: one testcase per test (attempts folded in as reruns or flaky attempts)."""
    logs = logs or {}
    root = ET.Element("testsuites", {"name": xml(f"lnrepro {rec.id}")})
    by: dict[str, Runs] = {}
    for a in rec.attempts:
        for t in a.results:
            by.setdefault(t.name, []).append((t, a))
    suites: dict[str, ET.Element] = {}
    counts: dict[str, Counter[str]] = {}  # per suite, in the order the attributes are written
    seconds: dict[str, float] = {}

    def suite_of(name: str) -> ET.Element:
        if name not in suites:
            s = _sub(root, "testsuite", name=name, hostname=platform.node() or None)
            props = _sub(s, "properties")
            for k, v in (
                ("lnrepro.id", rec.id),
                ("lnrepro.verdict", rec.verdict.value),
                ("lnrepro.why", rec.why),
                ("commit", rec.fingerprint.get("commit")),
                ("backend", rec.backend.get("backend")),
                ("filter", rec.gtest_filter),
                ("rerun", shlex.join(rec.rerun)),
            ):
                if v is not None:
                    _sub(props, "property", name=k, value=v)
            suites[name] = s
            counts[name] = Counter(tests=0, failures=0, errors=0, skipped=0)
            seconds[name] = 0.0
        return suites[name]

    for name, runs in by.items():
        sname = name.split(".", 1)[0] if "." in name else "lnrepro"
        s = suite_of(sname)
        counts[sname].update(_case(s, name, runs, rec, logs))
        seconds[sname] += float(s.findall("testcase")[-1].get("time", "0"))
    if not rec.verdict.about_the_kernel or rec.incomplete:
        s = suite_of("lnrepro")
        case = _sub(
            s,
            "testcase",
            name=rec.verdict.value if not rec.incomplete else "requested tests",
            classname="lnrepro.run",
            time=_secs(rec.build.seconds if rec.build else 0.0),
        )
        why = rec.why or "; ".join(rec.notes) or rec.verdict.value
        _sub(
            case,
            "error",
            why,
            message=first_line(why, 200),
            type=rec.verdict.value if not rec.incomplete else "NOT_RUN",
        )
        detail = []
        if rec.build is not None and not rec.build.ok:
            detail += [
                *rec.build.tail,
                "",
                f"build log: {rec.record_dir / rec.build.log}" if rec.build.log else "",
            ]
        for a in rec.attempts[-1:]:
            tail = logs.get(a.log, "").splitlines()[-30:]
            detail += [*tail, "", f"log: {rec.record_dir / a.log}"]
        detail += [f"record: {rec.record_dir / 'record.json'}"]
        _sub(case, "system-out", "\n".join(x for x in detail if x is not None))
        counts["lnrepro"].update(tests=1, errors=1)
    for name, s in suites.items():
        for k, v in counts[name].items():
            s.set(k, str(v))
        s.set("time", _secs(seconds[name]))
    for k in ("tests", "failures", "errors"):
        root.set(k, str(sum(c[k] for c in counts.values())))
    root.set("time", _secs(sum(seconds.values())))
    return _text(root)


def bisect_junit(rec: BisectRecord) -> str:
    """A bisect: one informational testcase per step, and its ``result``, which fails only when
    the bisect did not name a commit (marking a commit bad is the bisect working)."""
    root = ET.Element("testsuites", {"name": xml(f"lnrepro {rec.id or ''}")})
    suite = _sub(root, "testsuite", name="lnrepro.bisect", hostname=platform.node() or None)
    r = rec.result
    props = _sub(suite, "properties")
    for k, v in (
        ("first_bad", r.first_bad if r else None),
        ("last_good", r.last_good if r else None),
        ("confidence", f"{r.confidence:.6g}" if r and r.confidence is not None else None),
        ("search", r.search.value if r else None),
        ("rerun", shlex.join(rec.rerun)),
    ):
        if v is not None:
            _sub(props, "property", name=k, value=v)
    n = {"failures": 0, "skipped": 0, "errors": 0}
    total_s = 0.0
    for i, s in enumerate(rec.steps, 1):
        case = _sub(
            suite,
            "testcase",
            name=f"{i:03d} {s.sha[:12]} {s.subject}",
            classname=f"bisect.{s.action.kind.value}",
            time=_secs(s.evidence.seconds),
        )
        total_s += s.evidence.seconds
        if s.mark is Mark.SKIP:
            n["skipped"] += 1
            _sub(case, "skipped", message=s.reason)
        outs = ", ".join(f"{o.value}: {why}" for o, why in s.outcomes)
        _sub(
            case,
            "system-out",
            f"mark: {s.mark.value}\nreason: {s.reason}\nruns: {outs or 'none'}"
            + (f"\nrun record: {s.evidence.record}" if s.evidence.record else ""),
        )
    case = _sub(suite, "testcase", name="result", classname="bisect.result", time="0.000")
    if r is None:
        n["errors"] += 1
        _sub(case, "error", message="the bisect has not finished", type="NOT_FINISHED")
    elif not r.first_bad:
        n["failures"] += 1
        why = r.error or r.reason or "no single commit"
        _sub(
            case,
            "failure",
            why + "".join(f"\ncandidate {c.sha} {c.subject}" for c in r.candidates),
            message=first_line(why, 200),
            type="UNDECIDED",
        )
    else:
        _sub(
            case,
            "system-out",
            f"{r.kind.value}: {r.first_bad} {r.commit.subject if r.commit else ''}",
        )
    total = len(suite.findall("testcase"))
    for el, attrs in ((suite, ("failures", "errors", "skipped")), (root, ("failures", "errors"))):
        el.set("tests", str(total))
        for a in attrs:
            el.set(a, str(n[a]))
        el.set("time", _secs(total_s))
    return _text(root)
