"""Streaming parser for what a googletest binary prints.

Memory stays constant however long the log is: the parser keeps one partial
line, the current test, and at most ``MAX_CAPTURE_LINES`` lines of a failure
message.  Speed comes from never looking at most lines: one compiled regex
finds the few lines that can matter (gtest markers, failure headers, metric
lines) in large buffers, and only those are decoded and interpreted.

Rules that keep it honest on real, noisy logs:

* ANSI colour is stripped per line; codes that straddle a line end (``\\x1b[m``
  at the start of the next line) are stripped too.
* Foreign lines between markers (logger, DPRINT, test stdout) are ignored; a
  marker-looking line printed *by a test* is recognised as foreign when it
  cannot be a real marker (a ``[ RUN ]`` while another test runs, an
  ``[ OK ]`` naming another test).
* End markers (``OK``/``FAILED``/``SKIPPED``) for the running test are accepted
  mid-line, since a test's output without a trailing newline glues the marker
  to it.
* A test that started and never finished is CRASHED (or TIMEOUT, by exit
  status): when the log ends, or when a new iteration or process starts.
* Invalid UTF-8 is replaced, never fatal.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable

from lnrepro.model.gtest import (
    CrashInfo,
    Failure,
    GtestRun,
    Iteration,
    TestResult,
    TestStatus,
    describe_exit,
)
from lnrepro.model.metrics import MetricRules

MAX_CAPTURE_LINES = 40
MAX_CAPTURE_CHARS = 8192
MAX_LINE_BYTES = 1 << 20  # longer lines keep only their tail

_ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b")

# Lines worth decoding. "Repeating all tests" and "YOU HAVE N DISABLED TESTS" need no pass of
# their own: they follow an iteration's closing banner, after which lines are read one by one.
_STRUCTURAL = [
    rb"\[ *(?:RUN|OK|FAILED|SKIPPED|DISABLED|PASSED|=+|-+) *\]",
    rb": (?:Failure|Skipped)",
    rb"Note: ",
]
SUMMARY_TAIL_LINES = 8  # lines read one by one after the last marker of a closing summary

_MARKER = re.compile(
    r"^\[ *(?P<tag>RUN|OK|FAILED|SKIPPED|DISABLED|PASSED|=+|-+) *\] ?(?P<rest>.*)$"
)
# gtest's own RUN line, glued after other output that lacked a newline (or after bad bytes)
_RUN_GLUED = re.compile(r"\[ RUN      \] (?P<rest>\S+)$")
_END_ANYWHERE = re.compile(r"\[ *(?P<tag>OK|FAILED|SKIPPED) *\] (?P<rest>.*)$")
_RESULT = re.compile(
    r"^(?P<name>\S+?)(?:, where (?P<where>.*?))?(?: \((?P<ms>\d+|\?) ms\))?$"  # "?": normalised golden files
)
_FAILURE_HEADER = re.compile(
    r"^(?:(?P<file>.+?):(?P<line>\d+|#)|unknown file): (?P<kind>Failure|Skipped)$"
)
_RUNNING = re.compile(r"^Running (?P<n>\d+) tests? from")
_RAN = re.compile(
    r"^(?P<n>\d+) tests? from \d+ test (?:suites?|cases?) ran\.(?: \((?P<ms>\d+|\?) ms total\))?"
)
_SUITE_START = re.compile(r"^\d+ tests? from (?P<suite>\S+?)(?:, where .*)?$")
_SUITE_END = re.compile(r"^\d+ tests? from (?P<suite>\S+?) \((?:\d+|\?) ms total\)$")
_COUNT = re.compile(r"^(?P<n>\d+) tests?(?:\.|, listed below:)$")
_SUITE_SUMMARY = re.compile(r"^(?P<suite>\S+): SetUpTestSuite or TearDownTestSuite$")
_FILTER = re.compile(r"^Note: Google Test filter = (?P<f>.*)$")
_SHARD = re.compile(r"^Note: This is test shard (?P<k>\d+) of (?P<n>\d+)\.")
_SEED = re.compile(r"^Note: Randomizing tests' orders with a seed of (?P<s>\d+)")
_DISABLED = re.compile(r"YOU HAVE (?P<n>\d+) DISABLED TESTS?")
_FAILED_SUITES = re.compile(r"^ ?(?P<n>\d+) FAILED TEST SUITES?$")
# tt-metal / loguru logger lines never belong to a failure message
_LOGGER = re.compile(r"^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d")


def _ms(text: str | None) -> float | None:
    return float(text) if text and text.isdigit() else None


def _where(result: TestResult, where: str | None) -> None:
    if not where:
        return
    if where.startswith("GetParam() = "):
        result.param = where[len("GetParam() = ") :]
    elif where.startswith("TypeParam = "):
        tp, _, rest = where[len("TypeParam = ") :].partition(" and GetParam() = ")
        result.type_param = tp
        if rest:
            result.param = rest


class ConsoleParser:
    """Feed bytes as they arrive; call :meth:`close` once; read :attr:`run`."""

    def __init__(
        self,
        rules: MetricRules | None = None,
        *,
        on_test_start: Callable[[str], None] | None = None,
        on_test_end: Callable[[TestResult], None] | None = None,
    ) -> None:
        self.rules = rules or MetricRules()
        self._on_start = on_test_start
        self._on_end = on_test_end
        # one pass per literal-led pattern beats one alternation by 10x (see bench_parse.py)
        self._triggers = [re.compile(p) for p in _STRUCTURAL + self.rules.trigger_patterns()]
        self.run = GtestRun()
        self._buf = b""
        self._closed = False
        self._current: TestResult | None = None
        self._suite: str | None = None  # inside "[----------] N tests from S" .. end
        self._in_summary = False
        self._pending_failures: list[Failure] = []
        self._pending_metrics: list[tuple[str, str, float]] = []
        self._capture: list[str] | None = None
        self._capture_header: tuple[str | None, int | None, str] | None = None
        self._capture_chars = 0
        self._linewise = 0  # > 0: read lines one by one (the tail of a closing summary)
        self._texts: dict[str, str] = {}
        self._runs_seen: dict[int, int] = {}  # iteration -> RUN markers, to check gtest's count
        self._glued = 0

    # ------------------------------------------------------------------ input
    def feed(self, data: bytes) -> None:
        if self._closed:
            raise ValueError("parser is closed")
        if not data:
            return
        start = 0
        if self._buf:  # finish the partial line without copying the whole chunk
            nl = data.find(b"\n")
            if nl < 0:
                self._keep(self._buf + data)
                return
            head = self._buf + data[: nl + 1]
            self._buf = b""
            self._scan(head, 0, len(head))
            start = nl + 1
        end = data.rfind(b"\n")
        if end < start:
            self._keep(data[start:])
            return
        self._scan(data, start, end + 1)
        self._keep(data[end + 1 :])

    def _keep(self, partial: bytes) -> None:
        if len(partial) > MAX_LINE_BYTES:  # an endless line: only its tail can matter
            partial = partial[-MAX_LINE_BYTES // 2 :]
        self._buf = partial

    def close(self, exit_code: int | None = None, killed_after: float | None = None) -> GtestRun:
        """The parsed run. ``killed_after``: lnrepro itself killed the process at that timeout
        (seconds), which is then the reason an unfinished test gets (not "timeout(1)")."""
        if self._closed:
            return self.run
        if self._buf:
            self._line(self._buf)
            self._buf = b""
        self._end_capture()
        self._closed = True
        self.run.exit_code = exit_code
        if self._current is not None:
            if killed_after is not None:
                status = TestStatus.TIMEOUT
                crash = CrashInfo(
                    exit_code=exit_code,
                    signal="SIGTERM",
                    reason=f"killed by lnrepro after the {killed_after:g} s timeout (--timeout)",
                )
            else:
                status, crash = describe_exit(exit_code)
            self._finish_unfinished(status, crash)
        self._flush_pending()
        if self._glued:
            self.run.warnings.append(
                f"{self._glued} [ RUN ] marker(s) were glued to other output; recovered"
            )
        for it in self.run.iterations:
            seen = self._runs_seen.get(it.index, 0)
            if it.summary.ran is not None and seen and seen != it.summary.ran:
                self.run.warnings.append(
                    f"iteration {it.index}: googletest says {it.summary.ran} test(s) ran, "
                    f"but the log shows {seen}: some output is garbled or missing"
                )
        if not self.run.saw_gtest_output:
            self.run.warnings.append("no googletest output found")
        elif self.run.iterations and not self.run.iterations[-1].finished:
            it = self.run.iterations[-1]
            if exit_code not in (None, 0) or it.started:
                self.run.warnings.append(
                    f"iteration {it.index} has no closing summary: the process ended early"
                    + (f" (exit {exit_code})" if exit_code is not None else "")
                )
        return self.run

    # --------------------------------------------------------------- scanning
    def _scan(self, data: bytes, begin: int, stop: int) -> None:
        """Interpret the complete lines in ``data[begin:stop]``."""
        rfind = data.rfind
        starts: set[int] = set()
        for rx in self._triggers:
            for m in rx.finditer(data, begin, stop):
                starts.add(rfind(b"\n", begin, m.start()) + 1 or begin)
        candidates = sorted(starts)
        pos = begin
        i = 0
        n = len(candidates)
        find = data.find
        while pos < stop:
            if self._capture is not None or self._linewise:  # every line, for now
                nl = find(b"\n", pos, stop)
                self._line(data[pos:nl])
                pos = nl + 1
                continue
            while i < n and candidates[i] < pos:
                i += 1
            if i == n:
                break
            start = candidates[i]
            nl = find(b"\n", start, stop)
            self._line(data[start:nl])
            pos = nl + 1

    def _line(self, raw: bytes) -> None:
        if b"\x1b" in raw:
            raw = _ANSI.sub(b"", raw)
        text = raw.decode("utf-8", "replace").rstrip("\r\n")
        if self._linewise:
            self._linewise = SUMMARY_TAIL_LINES if text.startswith("[") else self._linewise - 1
        if self._capture is not None:
            if not self._is_boundary(text):
                self._capture_line(text)
                return
            self._end_capture()
        self._interpret(text)

    def _is_boundary(self, text: str) -> bool:
        return bool(
            (text.startswith("[") and _MARKER.match(text))
            or (text.endswith(("Failure", "Skipped")) and _FAILURE_HEADER.match(text))
            or _LOGGER.match(text)
            or text.startswith(("Repeating all tests", "Note: Google Test"))
            or (self._current is not None and _END_ANYWHERE.search(text))
        )

    # ---------------------------------------------------------- interpretation
    def _iteration(self) -> Iteration:
        if not self.run.iterations:
            self.run.iterations.append(Iteration(index=1))
        return self.run.iterations[-1]

    def _new_iteration(self, reason: str) -> Iteration:
        if self._current is not None:
            self._finish_unfinished(
                TestStatus.CRASHED, CrashInfo(reason=f"{reason} while the test was running")
            )
        self._flush_pending()
        self._suite = None
        self._in_summary = False
        self._linewise = 0
        it = Iteration(index=len(self.run.iterations) + 1)
        self.run.iterations.append(it)
        return it

    def _interpret(self, text: str) -> None:
        m = _MARKER.match(text) if text.startswith("[") else None
        if m is not None:
            self.run.saw_gtest_output = True
            self._marker(m.group("tag"), m.group("rest"))
            return
        if self._current is not None:
            e = _END_ANYWHERE.search(text)
            if e is not None and self._end_marker(e.group("tag"), e.group("rest")):
                return
        if self._current is None and "[ RUN " in text:
            g = _RUN_GLUED.search(text)
            if g is not None:
                self.run.saw_gtest_output = True
                self._glued += 1
                self._run_marker(g.group("rest"))
                return
        h = _FAILURE_HEADER.match(text) if text.endswith(("Failure", "Skipped")) else None
        if h is not None:
            self.run.saw_gtest_output = True
            line = h.group("line")
            self._capture = []
            self._capture_chars = 0
            self._capture_header = (
                h.group("file"),
                int(line) if line and line.isdigit() else None,
                h.group("kind"),
            )
            return
        if text.startswith("Repeating all tests"):
            self.run.saw_gtest_output = True
            it = self._iteration()
            if it.started or it.tests or it.finished:
                self._new_iteration("a new iteration started")
            return
        if text.startswith("Note: "):
            self._note(text)
            return
        d = _DISABLED.search(text)
        if d is not None:
            self._iteration().summary.disabled = int(d.group("n"))
            return
        self._metrics(text)

    def _note(self, text: str) -> None:
        f = _FILTER.match(text)
        s = _SHARD.match(text)
        r = _SEED.match(text)
        if not (f or s or r):
            return
        self.run.saw_gtest_output = True
        it = self._iteration()
        if it.started:
            it = self._new_iteration("a new test program started")
        if f:
            it.gtest_filter = f.group("f")
        elif s:
            it.shard = (int(s.group("k")), int(s.group("n")))
        elif r:
            it.random_seed = int(r.group("s"))

    def _metrics(self, text: str) -> None:
        self._pending_metrics.extend(self.rules.extract(text))
        if self._current is not None:
            self._take_pending_metrics(self._current)

    def _take_pending_metrics(self, result: TestResult) -> None:
        """Metrics printed before a test's result belong to it."""
        for tensor, key, value in self._pending_metrics:
            result.add_metric(tensor, key, value)
        self._pending_metrics.clear()

    def _marker(self, tag: str, rest: str) -> None:
        if tag == "RUN":
            self._run_marker(rest)
        elif tag in ("OK", "FAILED", "SKIPPED"):
            if self._current is not None:
                self._end_marker(tag, rest)  # foreign if it names another test
            elif tag == "FAILED":
                self._failed_outside(rest)
            elif tag == "SKIPPED":
                c = _COUNT.match(rest.strip())
                if c is not None:
                    self._iteration().summary.skipped = int(c.group("n"))
                elif not self._in_summary:
                    self._brief_result(TestStatus.SKIPPED, rest)
        elif tag == "DISABLED":
            if self._current is None:
                self._brief_result(TestStatus.DISABLED, rest)
        elif tag == "PASSED":
            c = _COUNT.match(rest)
            if c is not None:
                self._iteration().summary.passed = int(c.group("n"))
        elif tag.startswith("="):
            self._banner(rest)
        else:
            self._suite_line(rest)

    def _run_marker(self, rest: str) -> None:
        if self._current is not None:
            return  # printed by the running test: a real RUN cannot nest
        name = rest.strip()
        if not name or " " in name:
            return
        it = self._iteration()
        if self._in_summary:
            it = self._new_iteration("a new test program started")
        if self._pending_failures:
            self._flush_pending()
        self._current = TestResult(
            name=sys.intern(name), status=TestStatus.CRASHED, iteration=it.index
        )
        self._runs_seen[it.index] = self._runs_seen.get(it.index, 0) + 1
        if self._on_start is not None:
            self._on_start(name)
        self._take_pending_metrics(self._current)

    def _end_marker(self, tag: str, rest: str) -> bool:
        cur = self._current
        assert cur is not None
        r = _RESULT.match(rest.strip())
        if r is None or r.group("name") != cur.name:
            return False
        cur.status = {
            "OK": TestStatus.PASSED,
            "FAILED": TestStatus.FAILED,
            "SKIPPED": TestStatus.SKIPPED,
        }[tag]
        cur.duration_ms = _ms(r.group("ms"))
        _where(cur, r.group("where"))
        self._current = None
        self._record(cur)
        return True

    def _failed_outside(self, rest: str) -> None:
        it = self._iteration()
        rest = rest.strip()
        c = _COUNT.match(rest)
        if c is not None:
            it.summary.failed = int(c.group("n"))
            return
        sm = _SUITE_SUMMARY.match(rest)
        if sm is not None:
            it.suite_failures.setdefault(sm.group("suite"), [])
            return
        if self._in_summary:
            r = _RESULT.match(rest)
            if r is None or r.group("ms") is None:
                return  # the "listed below" list repeats what we already have
            # a timed result is never part of that list: the "ran." line before it was
            # printed by a test (brief mode shows no RUN line to tell us so)
            self._in_summary = False
        self._brief_result(TestStatus.FAILED, rest)

    def _brief_result(self, status: TestStatus, rest: str) -> None:
        """A result line with no RUN line before it: --gtest_brief output."""
        r = _RESULT.match(rest.strip())
        if r is None or not r.group("name") or "." not in r.group("name"):
            return
        it = self._iteration()
        res = TestResult(name=sys.intern(r.group("name")), status=status, iteration=it.index)
        res.duration_ms = _ms(r.group("ms"))
        _where(res, r.group("where"))
        if status is TestStatus.FAILED:
            res.failures.extend(self._pending_failures)
            self._pending_failures.clear()
        self._take_pending_metrics(res)
        self._record(res)

    def _banner(self, rest: str) -> None:
        it = self._iteration()
        if _RUNNING.match(rest):
            if it.started:
                it = self._new_iteration("a new test program started")
            it.started = True
            self._in_summary = False
            return
        ran = _RAN.match(rest)
        if ran is not None:
            if self._current is not None:
                return  # printed by the running test
            self._flush_pending()
            it.finished = True
            it.summary.ran = int(ran.group("n"))
            it.summary.total_ms = _ms(ran.group("ms"))
            self._in_summary = True
            self._linewise = SUMMARY_TAIL_LINES
            self._suite = None

    def _suite_line(self, rest: str) -> None:
        if self._current is not None:
            return
        if rest.startswith("Global test environment"):
            self._flush_pending()
            self._suite = None
            return
        end = _SUITE_END.match(rest)
        if end is not None:
            self._flush_pending()
            self._suite = None
            return
        start = _SUITE_START.match(rest)
        if start is not None:
            self._flush_pending()
            self._suite = start.group("suite")

    # ------------------------------------------------------------ failures
    def _capture_line(self, text: str) -> None:
        assert self._capture is not None
        if len(self._capture) < MAX_CAPTURE_LINES and self._capture_chars < MAX_CAPTURE_CHARS:
            self._capture.append(text)
            self._capture_chars += len(text) + 1
            self._metrics(text)
        else:
            self._end_capture()  # the rest is noise; back to fast scanning

    def _end_capture(self) -> None:
        if self._capture is None or self._capture_header is None:
            return
        lines = self._capture
        while lines and not lines[-1].strip():
            lines.pop()
        file, line, kind = self._capture_header
        # repeated iterations print the same failure text: keep one copy of each
        text = "\n".join(lines)
        message = self._texts.setdefault(text, text)
        file = None if file is None else sys.intern(file)
        self._capture = None
        self._capture_header = None
        if kind == "Skipped":
            if self._current is not None:
                self._current.skip_message = message
            return
        failure = Failure(file=file, line=line, message=message)
        if self._current is not None:
            self._current.failures.append(failure)
        else:
            self._pending_failures.append(failure)

    def _flush_pending(self) -> None:
        """Failures printed outside any test belong to a suite's or the program's set-up."""
        if not self._pending_failures:
            return
        it = self._iteration()
        if self._suite is not None:
            it.suite_failures.setdefault(self._suite, []).extend(self._pending_failures)
        else:
            it.global_failures.extend(self._pending_failures)
        self._pending_failures = []

    def _record(self, result: TestResult) -> None:
        self._iteration().tests.append(result)
        if self._on_end is not None:
            self._on_end(result)

    def _finish_unfinished(self, status: TestStatus, crash: CrashInfo) -> None:
        cur = self._current
        assert cur is not None
        self._end_capture()
        cur.status = status
        cur.crash = crash
        self._current = None
        self._record(cur)


def parse_bytes(
    data: bytes, exit_code: int | None = None, rules: MetricRules | None = None
) -> GtestRun:
    return parse_chunks([data], exit_code, rules)


def parse_chunks(
    chunks: Iterable[bytes], exit_code: int | None = None, rules: MetricRules | None = None
) -> GtestRun:
    p = ConsoleParser(rules)
    for c in chunks:
        p.feed(c)
    return p.close(exit_code)
