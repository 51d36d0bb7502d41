"""Build once, run the gtests N times with a timeout each, parse, aggregate: a run record.

This is the oracle every later command (bisect included) asks. It knows nothing of the
command line or of rich: progress goes out through :class:`Events`, the caller renders.

A *backend* says how to build and what command runs the tests:

* :class:`EmulatorBackend` — the built-in numpy emulator (no card, no checkout);
* :class:`LocalBackend` — an existing gtest binary on this machine (e.g. ``ttml_tests``
  on a host with a card), no build;
* the container backend (build tt-metal in a mounted container) plugs in the same way.

Each attempt is its own process, so a crash or hang in attempt 3 costs attempt 3 only.
"""

from __future__ import annotations

import contextlib
import shlex
import shutil
import sys
from collections import Counter
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Protocol

from lnrepro import proc
from lnrepro.errors import (
    EnvironmentProblem,
    LnreproError,
    MalformedReport,
    NoGtestOutput,
    NoTestsMatched,
    Terminated,
)
from lnrepro.fsio import atomic_write_text, new_record_dir, write_error
from lnrepro.gtest.console import ConsoleParser
from lnrepro.gtest.model import GtestRun, Metrics, TestResult, add_metric
from lnrepro.gtest.report import merge, read_report
from lnrepro.metrics import MetricRules
from lnrepro.stats import wilson

DEFAULT_FILTER = "LayerNormBackwardOpTest.BugRepro_*:LayerNormBackwardOpTest.NIGHTLY_*"
DEFAULT_TIMEOUT_S = 1800.0  # tt-metal's own bisect script allows 30 minutes


class Events:
    """Progress callbacks; the default does nothing. Renderers subclass it."""

    def attempt_started(self, index: int, total: int, argv: list[str]) -> None: ...
    def test_started(self, name: str) -> None: ...
    def test_finished(self, result: TestResult) -> None: ...
    def attempt_finished(self, attempt: Attempt) -> None: ...


class Backend(Protocol):
    @property
    def name(self) -> str: ...

    def describe(self) -> dict[str, Any]: ...
    def build(self, events: Events) -> None: ...
    def command(self, gtest_filter: str, report: Path, attempt: int) -> list[str]: ...
    def rerun_args(self) -> list[str]:
        """The ``lnrepro run`` options that select this backend exactly as configured."""
        ...


@dataclass(frozen=True)
class EmulatorBackend:
    """The numpy emulator run as a gtest binary: ``python -m lnrepro.emulator``."""

    defect: str = "shipped"
    block_size: int | None = None
    l1_max_tiles: int | None = None
    bf16_stats: bool = False
    seed: int | None = None  # attempt k uses seed + k - 1: different data, reproducible
    name: str = "emulator"

    def describe(self) -> dict[str, Any]:
        from lnrepro.emulator.kernel import DEFAULT_BLOCK_SIZE, DEFAULT_L1_MAX_TILES

        return {
            "backend": self.name,
            "defect": self.defect,
            "block_size": self.block_size or DEFAULT_BLOCK_SIZE,
            "l1_max_tiles": DEFAULT_L1_MAX_TILES
            if self.l1_max_tiles is None
            else self.l1_max_tiles,
            "bf16_stats": self.bf16_stats,
            "seed": self.seed,
        }

    def build(self, events: Events) -> None:
        return None  # nothing to build

    def rerun_args(self) -> list[str]:
        args = ["--backend", "emulator", "--defect", self.defect]
        if self.block_size is not None:
            args += ["--block-size", str(self.block_size)]
        if self.l1_max_tiles is not None:
            args += ["--l1-max-tiles", str(self.l1_max_tiles)]
        if self.bf16_stats:
            args.append("--bf16-stats")
        if self.seed is not None:
            args += ["--seed", str(self.seed)]
        return args

    def command(self, gtest_filter: str, report: Path, attempt: int) -> list[str]:
        argv = [
            sys.executable, "-m", "lnrepro.emulator",
            f"--gtest_filter={gtest_filter}", f"--gtest_output=json:{report}", "--gtest_color=no",
            f"--emu_defect={self.defect}",
        ]  # fmt: skip
        if self.block_size is not None:
            argv.append(f"--emu_block_size={self.block_size}")
        if self.l1_max_tiles is not None:
            argv.append(f"--emu_l1_max_tiles={self.l1_max_tiles}")
        if self.bf16_stats:
            argv.append("--emu_bf16_stats=1")
        if self.seed is not None:
            argv.append(f"--emu_seed={self.seed + attempt - 1}")
        return argv


@dataclass(frozen=True)
class LocalBackend:
    """A gtest binary already built on this machine."""

    binary: Path
    extra_args: tuple[str, ...] = ()
    name: str = "local"

    def describe(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "binary": str(self.binary),
            "extra_args": list(self.extra_args),
        }

    def rerun_args(self) -> list[str]:
        return ["--backend", "local", "--binary", str(self.binary)]

    def build(self, events: Events) -> None:
        if not self.binary.is_file():
            raise EnvironmentProblem(
                f"no test binary at {self.binary}",
                "build it first (./build_metal.sh --build-tt-train) or pass --binary",
            )

    def command(self, gtest_filter: str, report: Path, attempt: int) -> list[str]:
        return [str(self.binary), f"--gtest_filter={gtest_filter}", f"--gtest_output=json:{report}",
                "--gtest_color=no", *self.extra_args]  # fmt: skip


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

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "argv": self.argv,
            "exit_code": self.exit_code,
            "timed_out": self.timed_out,
            "seconds": round(self.seconds, 3),
            "log": self.log,
            "leftover_processes_killed": self.leftovers,
            "escaped_processes_killed": self.escaped,
            "warnings": self.run.warnings,
            "tests": [t.to_json() for t in self.run.tests],  # the lnrepro.gtest-run/1 test entries
        }


class Verdict(str, Enum):
    """A test's outcome over all attempts."""

    PASS = "PASS"  # every run passed
    FAIL = "FAIL"  # every run failed
    FLAKY = "FLAKY"  # some passed, some failed
    CRASH = "CRASH"  # at least one run crashed or timed out
    SKIP = "SKIP"  # never ran (skipped or disabled)


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
        if self.statuses.get("CRASHED", 0) or self.statuses.get("TIMEOUT", 0):
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
    """Per test, over every attempt and every gtest iteration inside it, in first-seen order."""
    by: dict[str, TestAggregate] = {}
    for a in attempts:
        for t in a.run.tests:
            agg = by.setdefault(t.name, TestAggregate(t.name))
            agg.statuses[t.status.value] += 1
            for tensor, values in t.metrics.items():
                for key, value in values.items():
                    add_metric(agg.worst, tensor, key, value)
    return list(by.values())


class RunState(str, Enum):
    RUNNING = "running"
    COMPLETE = "complete"
    INTERRUPTED = "interrupted"  # Ctrl-C, SIGTERM, SIGHUP
    ABORTED = "aborted"  # an error ended it; ``stop_reason`` says which


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

    @property
    def rerun_line(self) -> str:
        return shlex.join(self.rerun)

    @property
    def tests(self) -> list[TestAggregate]:
        return aggregate(self.attempts)

    @property
    def ok(self) -> bool:
        return all(t.verdict in (Verdict.PASS, Verdict.SKIP) for t in self.tests)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": "lnrepro.run/1",
            "state": self.state.value,
            "stop_reason": self.stop_reason,
            "rerun": self.rerun,
            "backend": self.backend,
            "filter": self.gtest_filter,
            "repeat": self.repeat,
            "timeout_s": self.timeout_s,
            "record_dir": str(self.record_dir),
            "ok": self.ok,
            "tests": [t.to_json() for t in self.tests],
            "attempts": [a.to_json() for a in self.attempts],
        }


def list_tests(backend: Backend, gtest_filter: str = "*", timeout_s: float = 300.0) -> str:
    """What ``--gtest_list_tests`` prints for the backend's binary (built first if need be)."""
    import os

    backend.build(Events())
    argv = [
        a
        for a in backend.command(gtest_filter, Path(os.devnull), 1)
        if not a.startswith("--gtest_output=")
    ]
    code, out = proc.capture([*argv, "--gtest_list_tests"], timeout=timeout_s)
    if code != 0:
        raise NoGtestOutput(
            f"listing the tests failed (exit {code}): {out.strip()[-200:]}",
            "run the command by hand: " + shlex.join(argv),
        )
    return out


def run_attempt(
    backend: Backend,
    index: int,
    total: int,
    gtest_filter: str,
    record_dir: Path,
    timeout_s: float | None,
    rules: MetricRules,
    events: Events,
) -> Attempt:
    report = record_dir / f"attempt-{index}.json"
    log_path = record_dir / f"attempt-{index}.log"
    argv = backend.command(gtest_filter, report, index)
    events.attempt_started(index, total, argv)
    parser = ConsoleParser(
        rules, on_test_start=events.test_started, on_test_end=events.test_finished
    )
    try:
        with log_path.open("wb") as log:

            def sink(data: bytes) -> None:
                log.write(data)
                parser.feed(data)

            res = proc.stream(argv, sink, timeout=timeout_s)
    except OSError as exc:
        raise write_error(log_path, exc) from None
    run = parser.close(res.exit_code)
    if res.timed_out:
        run.warnings.append(f"attempt {index} killed after the {timeout_s:g} s timeout")
    if res.leftovers:
        run.warnings.append(
            f"the test binary left {res.leftovers} process(es) running in its group; killed"
        )
    if res.escaped:
        run.warnings.append(
            f"{res.escaped} process(es) escaped the test binary's group (setsid) and were killed"
        )
    if report.is_file() and not res.timed_out:
        try:
            run = merge(run, read_report(report))
        except MalformedReport as exc:  # this attempt's problem: its console output stands
            run.warnings.append(f"report ignored: {exc.message}")
    return Attempt(
        index,
        argv,
        res.exit_code,
        res.timed_out,
        res.seconds,
        log_path.name,
        run,
        res.leftovers,
        res.escaped,
    )


def run_tests(
    backend: Backend,
    *,
    gtest_filter: str = DEFAULT_FILTER,
    repeat: int = 1,
    timeout_s: float | None = DEFAULT_TIMEOUT_S,
    record_base: Path = Path(".lnrepro/runs"),
    rules: MetricRules | None = None,
    events: Events | None = None,
) -> RunRecord:
    """Build, then run the filtered tests ``repeat`` times; write and return the record.

    The record is written after every attempt, so a run that ends early (Ctrl-C, a signal, a
    full disk, an error) keeps every finished attempt and says why it stopped. A run that fails
    before its first attempt leaves no directory behind.
    """
    events = events or Events()
    rules = rules or MetricRules()
    backend.build(events)
    record = RunRecord(
        backend.describe(), gtest_filter, repeat, timeout_s, new_record_dir(record_base, "run")
    )
    record.rerun = ["lnrepro", "run", *backend.rerun_args(), "--filter", gtest_filter]
    if repeat != 1:
        record.rerun += ["--repeat", str(repeat)]
    if timeout_s != DEFAULT_TIMEOUT_S:
        record.rerun += ["--timeout", f"{timeout_s:g}" if timeout_s is not None else "0"]
    try:
        for i in range(1, repeat + 1):
            attempt = run_attempt(
                backend, i, repeat, gtest_filter, record.record_dir, timeout_s, rules, events
            )
            record.attempts.append(attempt)
            write_record(record)
            events.attempt_finished(attempt)
            if not attempt.run.saw_gtest_output and not attempt.timed_out:
                raise NoGtestOutput(
                    f"the test command printed no googletest output (exit {attempt.exit_code}); "
                    f"see {record.record_dir / attempt.log}",
                    "run the command by hand: " + shlex.join(attempt.argv),
                )
        if not any(a.run.tests for a in record.attempts):
            raise NoTestsMatched(
                f"no test matched the filter {gtest_filter!r}",
                "see which tests exist with `lnrepro run --list` and fix --filter",
            )
    except BaseException as exc:
        _stop(record, exc)
        raise
    record.state = RunState.COMPLETE
    write_record(record)
    return record


def _stop(record: RunRecord, exc: BaseException) -> None:
    """Write why the run ended; remove its directory if no attempt finished."""
    if not record.attempts:
        shutil.rmtree(record.record_dir, ignore_errors=True)
        return
    if isinstance(exc, KeyboardInterrupt):
        record.state, record.stop_reason = RunState.INTERRUPTED, "interrupted (Ctrl-C)"
    elif isinstance(exc, Terminated):
        import signal

        name = signal.Signals(exc.signum).name
        record.state, record.stop_reason = RunState.INTERRUPTED, f"interrupted ({name})"
    elif isinstance(exc, LnreproError):
        record.state, record.stop_reason = RunState.ABORTED, exc.one_line()
    else:
        record.state, record.stop_reason = RunState.ABORTED, f"{type(exc).__name__}: {exc}"
    # on a full disk the attempts' own files are all that can be kept
    with contextlib.suppress(LnreproError):
        write_record(record)


def write_record(record: RunRecord) -> Path:
    import json

    path = record.record_dir / "record.json"
    try:
        atomic_write_text(path, json.dumps(record.to_json(), indent=2) + "\n")
    except OSError as exc:
        raise write_error(path, exc) from None
    return path
