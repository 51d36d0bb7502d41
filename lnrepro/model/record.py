"""The run record: attempts, per-test aggregates, verdicts, typed both ways (schema ``lnrepro.run/5``).

Pure data and pure logic: nothing here runs a process, writes a file or draws. Every rule about
what a run means is derived here, once, on the types:

======================  =====================================================================
PASS / FAIL / FLAKY     every attempt passed / failed / some of each
CRASH / HANG            the test binary died (signal, abort) / was killed at the timeout
ENV_ERROR               the environment, not the kernel, ended the tests: an attempt whose
                        output carries a driver-layer message (no chips, no hugepages…) and
                        whose tests did not run to a verdict
NOT_RUN                 the filter matched nothing (e.g. BugRepro tests absent from a commit)
BUILD_FAILED            the code under test did not build
SKIP                    the test was skipped or disabled every time
======================  =====================================================================

The process's own exit status weighs in: a binary that dies after its last test ended (a
SIGSEGV while closing the device), or exits non-zero although every test passed, gets an entry
of its own, :data:`PROCESS_EXIT`, CRASHED or FAILED with the reason. Such a run is never PASS.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, fields
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal, TypeVar

import msgspec

from lnrepro.hang.model import SCHEMA as HANG_SCHEMA
from lnrepro.hang.model import Diagnosis
from lnrepro.hang.model import upgrade as upgrade_hang
from lnrepro.model import codec
from lnrepro.model.gtest import (
    CrashInfo,
    Failure,
    Metrics,
    TestResult,
    TestStatus,
    add_metric,
    describe_exit,
    split_name,
    worse,
)
from lnrepro.model.jsonio import JSON, Reader
from lnrepro.model.requests import Count, Positive, RunRequest
from lnrepro.model.stats import wilson

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

_T = TypeVar("_T", bound="DataclassInstance")

SCHEMA: Literal["lnrepro.run/5"] = (
    # /5: a Python project's runs (backend python, tests' comparisons, the environment in the
    # fingerprint); /4: a hang's diagnosis, pytest runs, build warnings; /3: typed request
    "lnrepro.run/5"
)
PROCESS_EXIT = "(process exit)"  # the entry for how the test binary itself ended

# Printed by tt-metal's driver layer (UMD) or runtime when the machine or container, not the
# kernel, is wrong. A hugepage *warning* (UMD goes on without them) is not here: tests run after it.
ENV_MESSAGES = (
    "no huge page mount found in /proc/mounts for path",
    "Insufficient NumHugepages",
    "Mapping a hugepage failed",
    "Failed to pin pages for DMA",
    "No chips detected",
    "IOMMU is required for sysmem without hugepages",
    "TT_METAL_HOME is not set",
    "Root Directory is not set",  # the runtime found no root (TT_METAL_RUNTIME_ROOT, cwd)
    "Increase Number of Hugepages",  # UMD's warning: only the environment's if no test finished
)


class EnvScanner:
    """Finds the first driver-layer message in streamed output (across chunk boundaries)."""

    _KEEP = max(len(m) for m in ENV_MESSAGES)

    def __init__(self) -> None:
        self.found: str | None = None
        self._tail = b""
        self._needles = [m.encode() for m in ENV_MESSAGES]

    def feed(self, data: bytes) -> None:
        if self.found is not None:
            return
        window = self._tail + data
        for needle, text in zip(self._needles, ENV_MESSAGES, strict=True):
            if needle in window:
                self.found = text
                return
        self._tail = window[-self._KEEP :]


class Verdict(str, Enum):
    PASS = "PASS"
    FAIL = "FAIL"
    FLAKY = "FLAKY"
    CRASH = "CRASH"
    HANG = "HANG"
    ENV_ERROR = "ENV_ERROR"
    NOT_RUN = "NOT_RUN"
    BUILD_FAILED = "BUILD_FAILED"
    SKIP = "SKIP"

    @property
    def about_the_kernel(self) -> bool:
        """False for outcomes that say nothing about the code under test (a bisect skips them)."""
        return self not in (Verdict.ENV_ERROR, Verdict.NOT_RUN, Verdict.BUILD_FAILED, Verdict.SKIP)

    @property
    def failing(self) -> bool:
        return self in (Verdict.FAIL, Verdict.FLAKY, Verdict.CRASH, Verdict.HANG)


# Verdicts for a whole run, most telling first: a kernel failure outranks a flake, which
# outranks a hang or crash; anything that is not about the kernel outranks them all.
RUN_ORDER = (Verdict.FAIL, Verdict.FLAKY, Verdict.HANG, Verdict.CRASH, Verdict.PASS)
# The order records list verdicts in (headlines, tables)
LISTING_ORDER = (
    Verdict.FAIL,
    Verdict.FLAKY,
    Verdict.CRASH,
    Verdict.HANG,
    Verdict.ENV_ERROR,
    Verdict.PASS,
    Verdict.SKIP,
    Verdict.NOT_RUN,
)


@dataclass(frozen=True, kw_only=True)
class Inputs:
    """Hashes of everything the tests can read after a build: two commits with the same ``key``
    test exactly the same thing, so a bisect may share their verdict (the parts say what went
    into the key)."""

    key: str
    outputs_sha256: str = ""  # the build's outputs
    sources_sha256: str = ""  # the tracked tree, submodule commits and uncommitted changes
    output_files: str = ""  # how many output files were hashed (a count, written as text)
    uncommitted_files: str = ""  # how many files differ from the commit


@dataclass(frozen=True, kw_only=True)
class BuildResult:
    """How the code under test was built, and whether it was."""

    ok: bool
    profile: str | None = None
    log: str = "build.log"
    seconds: float = 0.0  # kept to the millisecond
    tail: tuple[str, ...] = ()  # the failed build's last lines
    command: tuple[str, ...] | None = None  # the command that failed (never empty)
    exit_code: int | None = None
    timed_out: bool = False
    reason: str | None = None  # why it counts as failed when no command did
    inputs: Inputs | None = None
    prebuilt: str | None = None  # an artifact used instead of building
    steps: tuple[str, ...] = ()  # what was done (configure, build target…), in order
    warnings: tuple[str, ...] = ()  # what a person should know about a build that worked

    def __post_init__(self) -> None:
        object.__setattr__(self, "seconds", round(self.seconds, 3))
        if not self.command:
            object.__setattr__(self, "command", None)

    @property
    def first_error(self) -> str:
        """The line of a failed build a person looks for first: the first compiler error."""
        line = next(
            (x for x in self.tail if "error" in x.lower()), self.tail[-1] if self.tail else ""
        )
        return line.strip()[:200]


@dataclass(kw_only=True)
class Attempt:
    """One process (or container) that ran the tests: its exit, its tests, its log."""

    index: int
    argv: list[str]
    exit_code: int
    timed_out: bool
    seconds: float
    log: str  # file name inside the record directory
    tests: list[TestResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    saw_output: bool = True  # printed anything googletest prints
    leftover_processes_killed: int = (
        0  # processes the binary left in its group, killed when it exited
    )
    escaped_processes_killed: int = (
        0  # processes that left its group (setsid) and outlived it, killed
    )
    env_error: str | None = None  # the driver-layer message the output carried, if any
    outside_failures: list[Failure] = field(default_factory=list)  # failures in no test
    extra_files: dict[str, str] = field(default_factory=dict)  # kind -> file (watcher log…)
    hang: Diagnosis | None = None  # what the watcher log says about a hung attempt

    @property
    def environment_failed(self) -> bool:
        """The environment ended this attempt: a driver message, and no test reached a verdict."""
        if not self.env_error:
            return False
        return not any(t.status in (TestStatus.PASSED, TestStatus.FAILED) for t in self.tests)

    @property
    def process_exit(self) -> TestResult | None:
        """How the binary itself ended, when that says more than its tests: a crash after the
        last test, a non-zero exit with every test passed, failures outside any test."""
        if self.timed_out or not self.saw_output or not self.tests:
            return None
        if any(t.status in (TestStatus.CRASHED, TestStatus.TIMEOUT) for t in self.tests):
            return None  # the crash is already a test's
        code = self.exit_code
        if code >= 128 or code < 0:
            _status, crash = describe_exit(code)
            reason = f"the test binary died after its last test ended: {crash.reason}"
            return TestResult(
                name=PROCESS_EXIT,
                status=TestStatus.CRASHED,
                crash=CrashInfo(exit_code=crash.exit_code, signal=crash.signal, reason=reason),
            )
        failed = any(t.status is TestStatus.FAILED for t in self.tests)
        if self.outside_failures or (code != 0 and not failed):
            why = [*self.outside_failures] or [
                Failure(message=f"the test binary exited {code} although every test passed")
            ]
            return TestResult(name=PROCESS_EXIT, status=TestStatus.FAILED, failures=why)
        return None

    @property
    def results(self) -> list[TestResult]:
        """The tests, plus the process's own entry when it has one."""
        pe = self.process_exit
        return [*self.tests, pe] if pe is not None else list(self.tests)

    def document(self) -> AttemptDoc:
        return twin(
            AttemptDoc,
            self,
            seconds=round(self.seconds, 3),
            environment_failed=self.environment_failed,
            tests=tuple(self.results),
        )

    @classmethod
    def from_doc(cls, d: AttemptDoc) -> Attempt:
        # the process's own entry is derived again from the rest
        return twin(cls, d, tests=[t for t in d.tests if t.name != PROCESS_EXIT])


class Seen(str, Enum):
    """What one test did in one attempt, as a test's tally counts it: its status, or ENV_ERROR
    when it crashed or hung in an attempt the environment ended."""

    PASSED = "PASSED"
    FAILED = "FAILED"
    SKIPPED = "SKIPPED"
    DISABLED = "DISABLED"
    CRASHED = "CRASHED"
    TIMEOUT = "TIMEOUT"
    ENV_ERROR = "ENV_ERROR"


NOT_RUNS = (Seen.SKIPPED, Seen.DISABLED)
_SEEN = {s: Seen(s.value) for s in TestStatus}


@dataclass(frozen=True, kw_only=True)
class TestAggregate:
    """One test over every attempt and iteration: its tally, and what the tally says (verdict,
    runs, pass rate and its 95% interval: derived, written for readers of the JSON)."""

    __test__ = False

    name: str
    verdict: Verdict = field(init=False, default=Verdict.SKIP)
    runs: int = field(init=False, default=0)  # every tally but SKIPPED and DISABLED
    passed: int = field(init=False, default=0)
    pass_rate: float | None = field(init=False, default=None)
    pass_rate_ci95: tuple[float, float] = field(init=False, default=(0.0, 1.0))
    statuses: dict[Seen, int] = field(default_factory=dict)  # how many times each was seen
    worst_metrics: Metrics = field(default_factory=dict)

    def __post_init__(self) -> None:
        if any(n < 0 for n in self.statuses.values()):
            raise ValueError(f"{self.name}: a status seen a negative number of times")
        runs = sum(n for s, n in self.statuses.items() if s not in NOT_RUNS)
        passed = self.statuses.get(Seen.PASSED, 0)
        put = object.__setattr__
        put(self, "runs", runs)
        put(self, "passed", passed)
        put(self, "pass_rate", passed / runs if runs else None)
        put(self, "pass_rate_ci95", wilson(passed, runs))
        put(self, "verdict", self._verdict())

    def _verdict(self) -> Verdict:
        if self.runs == 0:
            return Verdict.SKIP
        if self.statuses.get(Seen.ENV_ERROR, 0):
            return Verdict.ENV_ERROR
        if self.statuses.get(Seen.TIMEOUT, 0):
            return Verdict.HANG
        if self.statuses.get(Seen.CRASHED, 0):
            return Verdict.CRASH
        if self.passed == self.runs:
            return Verdict.PASS
        return Verdict.FAIL if self.passed == 0 else Verdict.FLAKY

    @property
    def short(self) -> str:
        """The test without its suite (a pytest node id without its file)."""
        return split_name(self.name)[1] or self.name

    @property
    def worst(self) -> Metrics:
        """The worst value of each metric of each tensor, over every run."""
        return self.worst_metrics

    def worst_of(self, key: str) -> tuple[str, float] | None:
        """The worst value of metric ``key`` over the test's tensors, with the tensor's name."""
        best: tuple[str, float] | None = None
        for tensor, vals in self.worst_metrics.items():
            v = vals.get(key)
            if v is not None and (best is None or worse(key, v, best[1])):
                best = (tensor, v)
        return best


def merge_worst(into: Metrics, metrics: Metrics) -> None:
    """Fold ``metrics`` into ``into``, keeping each metric's worst value."""
    for tensor, values in metrics.items():
        for key, value in values.items():
            add_metric(into, tensor, key, value)


def aggregate(attempts: list[Attempt]) -> list[TestAggregate]:
    """Per test, over every attempt and every gtest iteration inside it, in first-seen order.

    A test that crashed or hung in an attempt the environment ended counts as ENV_ERROR there.
    """
    tally: dict[str, Counter[Seen]] = {}
    worst: dict[str, Metrics] = {}
    for a in attempts:
        env = a.environment_failed
        for t in a.results:
            seen = _SEEN[t.status]
            if env and seen in (Seen.CRASHED, Seen.TIMEOUT):
                seen = Seen.ENV_ERROR
            tally.setdefault(t.name, Counter())[seen] += 1
            merge_worst(worst.setdefault(t.name, {}), t.metrics)
    return [
        TestAggregate(name=n, statuses=dict(c), worst_metrics=worst[n]) for n, c in tally.items()
    ]


class RunState(str, Enum):
    RUNNING = "running"
    COMPLETE = "complete"
    INTERRUPTED = "interrupted"  # Ctrl-C, SIGTERM, SIGHUP
    ABORTED = "aborted"  # an error ended it; ``stop_reason`` says which


@dataclass(kw_only=True)
class RunRecord:
    """One ``lnrepro run``: the request, how it was built, every attempt, and what it means."""

    request: RunRequest
    record_dir: Path
    rerun: list[str] = field(default_factory=list)  # the line it was made with (options.argv)
    attempts: list[Attempt] = field(default_factory=list)
    state: RunState = RunState.RUNNING
    stop_reason: str | None = None
    build: BuildResult | None = None
    backend: dict[str, JSON] = field(default_factory=dict)  # what the backend resolved to
    fingerprint: dict[str, JSON] = field(default_factory=dict)  # commit, image, host, driver…
    commands: dict[str, JSON] = field(default_factory=dict)  # build and test, as shell lines
    notes: list[str] = field(default_factory=list)  # what a person must know (tests missing…)
    missing: list[str] = field(default_factory=list)  # filter patterns no test matched
    schema: str = SCHEMA  # the schema it was read as (older records load too)

    kind = "run"

    @property
    def id(self) -> str:
        return self.record_dir.name

    @property
    def gtest_filter(self) -> str:
        """What was run: the gtest filter, or the pytest node ids."""
        return self.request.tests.selection

    @property
    def tests(self) -> list[TestAggregate]:
        return aggregate(self.attempts)

    @property
    def verdict(self) -> Verdict:
        return self.verdict_of(self.tests)

    def verdict_of(self, tests: list[TestAggregate]) -> Verdict:
        if self.build is not None and not self.build.ok:
            return Verdict.BUILD_FAILED
        if any(a.environment_failed for a in self.attempts) or any(
            t.verdict is Verdict.ENV_ERROR for t in tests
        ):
            return Verdict.ENV_ERROR
        ran = [t.verdict for t in tests if t.verdict is not Verdict.SKIP]
        if not ran:
            return Verdict.NOT_RUN
        return next(v for v in RUN_ORDER if v in ran)

    @property
    def ok(self) -> bool:
        return self.verdict is Verdict.PASS

    @property
    def incomplete(self) -> bool:
        """Some of the requested tests are not in the program: the run cannot say PASS."""
        return bool(self.missing)

    @property
    def environment_message(self) -> str | None:
        """The driver-layer message of the first attempt the environment ended."""
        return next((a.env_error for a in self.attempts if a.environment_failed), None)

    @property
    def headline(self) -> str:
        counts = Counter(t.verdict for t in self.tests)
        parts = [f"{counts.pop(v)} {v.value}" for v in LISTING_ORDER if v in counts]
        parts += [f"{n} {v.value}" for v, n in counts.items()]
        if self.incomplete:  # never a bare PASS when requested tests were not there
            parts.append(f"{len(self.missing)} requested pattern(s) matched no test")
        return ", ".join(parts) or self.verdict.value

    @property
    def verdict_line(self) -> str:
        """The verdict as a person reads it: an incomplete run says so before anything else."""
        v = self.verdict.value
        if self.incomplete and self.verdict.about_the_kernel:
            return f"INCOMPLETE ({v} on the tests that ran; missing: {', '.join(self.missing)})"
        return v

    @property
    def why(self) -> str | None:
        """For a run that says nothing about the kernel: what happened, in one line."""
        return self.why_of(self.verdict)

    def why_of(self, v: Verdict) -> str | None:
        if v is Verdict.BUILD_FAILED and self.build is not None:
            return f"the build failed: {self.build.reason or self.build.first_error or 'see the build log'}"
        if v is Verdict.ENV_ERROR:
            return f"the environment, not the kernel: the output says {self.environment_message!r}"
        if v is Verdict.NOT_RUN:
            return self.stop_reason or (
                self.notes[0] if self.notes else f"no test matched the filter {self.gtest_filter!r}"
            )
        if self.state is not RunState.COMPLETE:
            return self.stop_reason
        return None

    def document(self) -> RunDoc:
        """The record as ``lnrepro.run/5`` writes it (record.json, ``run --json``, ``show``)."""
        tests = self.tests  # aggregated once per write, not once per field
        verdict = self.verdict_of(tests)
        return twin(
            RunDoc,
            self,
            schema=SCHEMA,  # the record's own may be an older one it was read as
            id=self.id,
            verdict=verdict,
            why=self.why_of(verdict),
            ok=verdict is Verdict.PASS,
            filter=self.gtest_filter,
            repeat=self.request.tests.repeat,
            timeout_s=self.request.tests.timeout_s,
            record_dir=str(self.record_dir),
            tests=tuple(tests),
            attempts=tuple(a.document() for a in self.attempts),
        )

    def to_json(self) -> JSON:
        return codec.encode(self.document())

    @classmethod
    def from_doc(cls, d: RunDoc, record_dir: Path, schema: str = SCHEMA) -> RunRecord:
        """The record a document holds (what it derived, its verdict and tallies, is derived
        again from its attempts)."""
        return twin(
            cls,
            d,
            record_dir=record_dir,
            attempts=[Attempt.from_doc(a) for a in d.attempts],
            schema=schema,
        )

    @classmethod
    def from_json(cls, r: Reader, record_dir: Path) -> RunRecord:
        """A run document of any schema version (/1 and /2 already in /3's shape: the store's
        upgrader), every field checked."""
        schema = r.str("schema", SCHEMA)
        return cls.from_doc(codec.decode(upgrade(r), RunDoc), record_dir, schema)


def twin(kind: type[_T], src: DataclassInstance, **derived: object) -> _T:
    """A ``kind`` (a record or its ``*Doc``) made from ``derived`` and every other field ``src``
    shares with it, by name: a record holds lists where its document holds tuples, and back
    (dicts are copied)."""
    shared = {f.name for f in fields(src)} & {f.name for f in fields(kind)}
    return kind(**{n: _flipped(getattr(src, n)) for n in shared - derived.keys()}, **derived)


def _flipped(value: object) -> object:
    if isinstance(value, list):
        return tuple(value)
    if isinstance(value, tuple):
        return list(value)
    return dict(value) if isinstance(value, dict) else value


# ---------------------------------------------------------------------------------- as written
# ``lnrepro.run/5`` as written (record.json, ``run --json``, ``show --json``, ``report --format
# json``; docs/schemas/run.json): what is derived (an attempt's process entry and
# ``environment_failed``; the run's tallies, verdict, why, ok) is written for readers and derived
# again on reading. A key an older record lacks takes its default.
@dataclass(frozen=True, kw_only=True)
class AttemptDoc:
    """An attempt as ``lnrepro.run/5`` writes it: its tests with the process's own entry, and
    whether the environment ended it (derived). Absent keys take today's defaults (older
    records)."""

    index: Positive
    argv: tuple[str, ...]
    exit_code: int
    timed_out: bool = False
    seconds: Annotated[float, msgspec.Meta(ge=0)] = 0.0
    log: str = ""
    saw_output: bool = True
    env_error: str | None = None
    environment_failed: bool = False
    leftover_processes_killed: Count = 0
    escaped_processes_killed: Count = 0
    warnings: tuple[str, ...] = ()
    outside_failures: tuple[Failure, ...] = ()
    extra_files: dict[str, str] = field(default_factory=dict)
    hang: Diagnosis | None = None  # lnrepro.hang/2 (a /1 read is upgraded first)
    tests: tuple[TestResult, ...] = ()


@dataclass(frozen=True, kw_only=True)
class RunDoc:
    """``lnrepro.run/5``: record.json, ``run --json``, ``show --json``, ``report --format json``.
    What is derived (verdict, why, ok, rerun, filter, repeat, timeout_s, tests) is written for
    readers and derived again on reading; absent keys take defaults (older records)."""

    schema: Literal["lnrepro.run/5"] = SCHEMA
    kind: Literal["run"] = "run"
    id: str = ""
    state: RunState = RunState.COMPLETE
    stop_reason: str | None = None
    verdict: Verdict = Verdict.NOT_RUN
    why: str | None = None
    ok: bool = False
    request: RunRequest
    rerun: Annotated[tuple[str, ...], msgspec.Meta(min_length=2)] = ("lnrepro", "run")
    backend: dict[str, JSON] = field(default_factory=dict)  # what the backend resolved to
    build: BuildResult | None = None
    fingerprint: dict[str, JSON] = field(default_factory=dict)  # commit, image, host, driver…
    commands: dict[str, JSON] = field(default_factory=dict)  # build and test, as shell lines
    notes: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    filter: str = ""
    repeat: Positive = 1
    timeout_s: float = 0.0
    record_dir: str = ""
    tests: tuple[TestAggregate, ...] = ()
    attempts: tuple[AttemptDoc, ...] = ()


def upgrade(r: Reader) -> Reader:
    """A /3, /4 or /5 run document in /5's shape: /3 lacks an attempt's hang (None), and a hang
    of ``lnrepro.hang/1`` reads as /2 (:func:`lnrepro.hang.model.upgrade`); /4 lacks the tests'
    ``comparisons`` (none) and the python backend, which it never holds."""
    if not isinstance(r.value, dict):
        r.fail("should be an object")
    doc = {**r.value, "schema": SCHEMA}
    attempts = doc.get("attempts")
    if isinstance(attempts, list) and any(_old_hang(a) for a in attempts):
        at = r.list("attempts")
        doc["attempts"] = [
            {**a, "hang": upgrade_hang(at[i].obj("hang")).value}
            if isinstance(a, dict) and _old_hang(a)
            else a
            for i, a in enumerate(attempts)
        ]
    return r.rewritten(doc)


def _old_hang(attempt: JSON) -> bool:
    if not isinstance(attempt, dict):
        return False
    hang = attempt.get("hang")
    return isinstance(hang, dict) and hang.get("schema") != HANG_SCHEMA
