"""The run record: attempts, per-test aggregates, verdicts, and how it is written.

Pure data and pure logic: nothing here runs a process or draws. A verdict says what a run
means for the kernel under test, and keeps apart what is *not* about the kernel:

======================  =====================================================================
PASS / FAIL / FLAKY     every attempt passed / failed / some of each
CRASH / HANG            the test binary died (signal, abort) / was killed at the timeout
ENV_ERROR               the output carries a driver-layer message (no chips, no hugepages…):
                        the environment failed, not the kernel
NOT_RUN                 the filter matched nothing (e.g. BugRepro tests absent from a commit)
BUILD_FAILED            the code under test did not build
SKIP                    the test was skipped or disabled every time
======================  =====================================================================
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from lnrepro.doors.fsio import atomic_write_text, write_error
from lnrepro.gtest.model import GtestRun, Metrics, add_metric
from lnrepro.model.stats import wilson

SCHEMA = "lnrepro.run/2"  # /2 added "id"; lnrepro.doors.store reads /1 too

# Printed by tt-metal's driver layer (UMD) when the machine or container, not the kernel, is wrong.
ENV_MESSAGES = (
    "no huge page mount found in /proc/mounts for path",
    "Insufficient NumHugepages",
    "Mapping a hugepage failed",
    "Failed to pin pages for DMA",
    "No chips detected",
    "IOMMU is required for sysmem without hugepages",
    "TT_METAL_HOME is not set",
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


@dataclass
class Attempt:
    index: int
    argv: list[str]
    exit_code: int
    timed_out: bool
    seconds: float
    log: str  # file name inside the record directory
    run: GtestRun
    leftovers: int = 0  # processes the binary left in its group, killed when it exited
    escaped: int = 0  # processes that left its group (setsid) and outlived it, killed
    env_error: str | None = None  # the driver-layer message the output carried, if any

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "argv": self.argv,
            "exit_code": self.exit_code,
            "timed_out": self.timed_out,
            "seconds": round(self.seconds, 3),
            "log": self.log,
            "env_error": self.env_error,
            "leftover_processes_killed": self.leftovers,
            "escaped_processes_killed": self.escaped,
            "warnings": self.run.warnings,
            "tests": [t.to_json() for t in self.run.tests],  # the lnrepro.gtest-run/1 test entries
        }


@dataclass
class TestAggregate:
    __test__ = False

    name: str
    statuses: Counter[str] = field(default_factory=Counter)
    worst: Metrics = field(default_factory=dict)

    @property
    def runs(self) -> int:
        return sum(n for s, n in self.statuses.items() if s not in ("SKIPPED", "DISABLED"))

    @property
    def passed(self) -> int:
        return self.statuses.get("PASSED", 0)

    @property
    def interval(self) -> tuple[float, float]:
        return wilson(self.passed, self.runs)

    @property
    def verdict(self) -> Verdict:
        if self.runs == 0:
            return Verdict.SKIP
        if self.statuses.get("ENV_ERROR", 0):
            return Verdict.ENV_ERROR
        if self.statuses.get("TIMEOUT", 0):
            return Verdict.HANG
        if self.statuses.get("CRASHED", 0):
            return Verdict.CRASH
        if self.passed == self.runs:
            return Verdict.PASS
        return Verdict.FAIL if self.passed == 0 else Verdict.FLAKY

    def to_json(self) -> dict[str, Any]:
        lo, hi = self.interval
        return {
            "name": self.name,
            "verdict": self.verdict.value,
            "runs": self.runs,
            "passed": self.passed,
            "pass_rate": self.passed / self.runs if self.runs else None,
            "pass_rate_ci95": [lo, hi],
            "statuses": dict(self.statuses),
            "worst_metrics": self.worst,
        }


def aggregate(attempts: list[Attempt]) -> list[TestAggregate]:
    """Per test, over every attempt and every gtest iteration inside it, in first-seen order.

    A test that crashed or hung in an attempt whose output carried a driver-layer message
    counts as ENV_ERROR there: the environment ended it, not the kernel.
    """
    by: dict[str, TestAggregate] = {}
    for a in attempts:
        for t in a.run.tests:
            agg = by.setdefault(t.name, TestAggregate(t.name))
            status = t.status.value
            if a.env_error and status in ("CRASHED", "TIMEOUT"):
                status = "ENV_ERROR"
            agg.statuses[status] += 1
            for tensor, values in t.metrics.items():
                for key, value in values.items():
                    add_metric(agg.worst, tensor, key, value)
    return list(by.values())


class RunState(str, Enum):
    RUNNING = "running"
    COMPLETE = "complete"
    INTERRUPTED = "interrupted"  # Ctrl-C, SIGTERM, SIGHUP
    ABORTED = "aborted"  # an error ended it; ``stop_reason`` says which


# Verdicts for a whole run, most telling first: a kernel failure outranks a flake, which
# outranks a hang or crash; anything that is not about the kernel outranks them all.
_RUN_ORDER = (Verdict.FAIL, Verdict.FLAKY, Verdict.HANG, Verdict.CRASH, Verdict.PASS)


@dataclass
class RunRecord:
    backend: dict[str, Any]
    gtest_filter: str
    repeat: int
    timeout_s: float | None
    record_dir: Path
    attempts: list[Attempt] = field(default_factory=list)
    state: RunState = RunState.RUNNING
    stop_reason: str | None = None
    rerun: list[str] = field(default_factory=list)  # argv that repeats this run
    build: dict[str, Any] | None = None  # how the code under test was built, and whether it did
    fingerprint: dict[str, Any] = field(default_factory=dict)  # commit, image, host, driver…
    commands: dict[str, Any] = field(default_factory=dict)  # the build and test, as shell lines

    @property
    def rerun_line(self) -> str:
        import shlex

        return shlex.join(self.rerun)

    @property
    def tests(self) -> list[TestAggregate]:
        return aggregate(self.attempts)

    @property
    def verdict(self) -> Verdict:
        return self._verdict(self.tests)

    def _verdict(self, tests: list[TestAggregate]) -> Verdict:
        if self.build is not None and not self.build.get("ok", True):
            return Verdict.BUILD_FAILED
        if any(a.env_error for a in self.attempts) or any(
            t.verdict is Verdict.ENV_ERROR for t in tests
        ):
            return Verdict.ENV_ERROR
        ran = [t.verdict for t in tests if t.verdict is not Verdict.SKIP]
        if not ran:
            return Verdict.NOT_RUN
        return next(v for v in _RUN_ORDER if v in ran)

    @property
    def ok(self) -> bool:
        return self.verdict is Verdict.PASS

    def to_json(self) -> dict[str, Any]:
        tests = self.tests  # aggregated once per write, not once per field
        verdict = self._verdict(tests)
        return {
            "schema": SCHEMA,
            "id": self.record_dir.name,
            "state": self.state.value,
            "stop_reason": self.stop_reason,
            "verdict": verdict.value,
            "rerun": self.rerun,
            "backend": self.backend,
            "build": self.build,
            "fingerprint": self.fingerprint,
            "commands": self.commands,
            "filter": self.gtest_filter,
            "repeat": self.repeat,
            "timeout_s": self.timeout_s,
            "record_dir": str(self.record_dir),
            "ok": verdict is Verdict.PASS,
            "tests": [t.to_json() for t in tests],
            "attempts": [a.to_json() for a in self.attempts],
        }


def write_record(record: RunRecord) -> Path:
    """``record.json``, rewritten atomically (after every attempt, so nothing finished is lost)."""
    path = record.record_dir / "record.json"
    try:
        atomic_write_text(path, json.dumps(record.to_json(), indent=2) + "\n")
    except OSError as exc:
        raise write_error(path, exc) from None
    return path
