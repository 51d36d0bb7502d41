"""Typed records of what a googletest binary did: one per test, per iteration."""

from __future__ import annotations

import signal
from dataclasses import dataclass, field
from enum import Enum
from typing import Literal

from lnrepro.model import codec
from lnrepro.model.codec import Real
from lnrepro.model.jsonio import JSON
from lnrepro.model.numerics import Comparison

# tensor -> metric name -> value (worst seen in the test; non-finite values too)
Metrics = dict[str, dict[str, Real]]


class TestStatus(str, Enum):
    """Outcome of one test in one iteration."""

    __test__ = False  # keep pytest from collecting this enum

    PASSED = "PASSED"
    FAILED = "FAILED"
    SKIPPED = "SKIPPED"
    DISABLED = "DISABLED"
    CRASHED = "CRASHED"  # started and never finished: signal, abort, exit() inside the test
    TIMEOUT = "TIMEOUT"  # started and never finished because it was killed for time

    @property
    def is_problem(self) -> bool:
        return self in (TestStatus.FAILED, TestStatus.CRASHED, TestStatus.TIMEOUT)


@dataclass(frozen=True, slots=True, kw_only=True)
class Failure:
    """One ``file:line: Failure`` block (or a report's failure element)."""

    __test__ = False

    file: str | None = None
    line: int | None = None
    message: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class CrashInfo:
    """Why a test that started never finished."""

    exit_code: int | None = None
    signal: str | None = None
    reason: str = ""


@dataclass(slots=True, kw_only=True)
class TestResult:
    """One test in one iteration. ``suite`` and ``test`` are ``name``'s two parts, derived from
    it (written for readers of the JSON; read back, they are derived again)."""

    __test__ = False

    name: str  # as gtest prints it: "Prefix/Suite.Test/0"
    suite: str = field(init=False, default="")
    test: str = field(init=False, default="")
    iteration: int = 1
    status: TestStatus
    duration_ms: float | None = None
    param: str | None = None  # ", where GetParam() = ..."
    type_param: str | None = None  # ", where TypeParam = ..."
    failures: list[Failure] = field(default_factory=list)
    metrics: Metrics = field(default_factory=dict)
    skip_message: str | None = None
    crash: CrashInfo | None = None
    # what a numerics library's failure message said (torch, numpy, pytest.approx, PCC)
    comparisons: list[Comparison] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.suite, self.test = split_name(self.name)

    def add_metric(self, tensor: str, key: str, value: float) -> None:
        add_metric(self.metrics, tensor, key, value)


def split_name(name: str) -> tuple[str, str]:
    """``Suite.Test`` at the first dot (gtest: ``Prefix/Suite.Test/0``); a pytest node id
    ``path.py::Class::test[params]`` at its last ``::`` outside the parameters."""
    if "::" in name:
        head = name.split("[", 1)[0]
        cut = head.rfind("::")
        return name[:cut], name[cut + 2 :]
    suite, _, test = name.partition(".")
    return suite, test


# Metrics that are better when higher (a Pearson correlation): their worst value is the lowest.
HIGHER_IS_BETTER = frozenset({"pcc"})


def worse(key: str, value: float, than: float) -> bool:
    """Whether ``value`` of metric ``key`` is worse than ``than`` (NaN is always worst)."""
    if value != value:
        return True
    return value < than if key in HIGHER_IS_BETTER else value > than


def add_metric(metrics: Metrics, tensor: str, key: str, value: float) -> None:
    """Keep the worst value of a metric reported several times in one test (the largest
    difference; the lowest PCC)."""
    slot = metrics.setdefault(tensor, {})
    old = slot.get(key)
    if old is None or worse(key, value, old):
        slot[key] = value


@dataclass(kw_only=True)
class Summary:
    """What the closing lines of an iteration said, where present."""

    ran: int | None = None
    passed: int | None = None
    failed: int | None = None
    skipped: int | None = None
    disabled: int | None = None
    failed_suites: int | None = None
    total_ms: float | None = None


@dataclass(kw_only=True)
class Iteration:
    """One ``[==========] Running ...`` block: a --gtest_repeat iteration or one process."""

    index: int
    tests: list[TestResult] = field(default_factory=list)
    summary: Summary = field(default_factory=Summary)
    gtest_filter: str | None = None
    shard: tuple[int, int] | None = None
    random_seed: int | None = None
    global_failures: list[Failure] = field(default_factory=list)
    suite_failures: dict[str, list[Failure]] = field(default_factory=dict)
    started: bool = False  # saw "[==========] Running"
    finished: bool = False  # saw "[==========] N tests ... ran."

    def document(self) -> IterationDoc:
        return IterationDoc(
            index=self.index,
            filter=self.gtest_filter,
            shard=self.shard,
            random_seed=self.random_seed,
            finished=self.finished,
            summary=self.summary,
            global_failures=tuple(self.global_failures),
            suite_failures={k: tuple(v) for k, v in self.suite_failures.items()},
        )


@dataclass(kw_only=True)
class GtestRun:
    """Everything parsed from one console log (and, optionally, its report)."""

    iterations: list[Iteration] = field(default_factory=list)
    exit_code: int | None = None
    warnings: list[str] = field(default_factory=list)
    saw_gtest_output: bool = False

    @property
    def tests(self) -> list[TestResult]:
        return [t for it in self.iterations for t in it.tests]

    def totals(self) -> dict[TestStatus, int]:
        return {s: sum(t.status is s for t in self.tests) for s in TestStatus}

    @property
    def ok(self) -> bool:
        return not any(t.status.is_problem for t in self.tests) and not any(
            it.global_failures or it.suite_failures for it in self.iterations
        )

    def document(self) -> GtestRunDoc:
        """What ``lnrepro parse --json`` writes."""
        return GtestRunDoc(
            exit_code=self.exit_code,
            iterations=tuple(it.document() for it in self.iterations),
            tests=tuple(self.tests),
            totals=self.totals(),
            warnings=tuple(self.warnings),
        )

    def to_json(self) -> JSON:
        return codec.encode(self.document())


@dataclass(frozen=True, kw_only=True)
class IterationDoc:
    """An iteration as ``lnrepro.gtest-run/2`` writes it (its tests are the run's)."""

    index: int
    filter: str | None
    shard: tuple[int, int] | None  # (this shard, of how many)
    random_seed: int | None
    finished: bool
    summary: Summary
    global_failures: tuple[Failure, ...]
    suite_failures: dict[str, tuple[Failure, ...]]


# /2: each test's comparisons (the numerics libraries' messages read, issue 46)
GTEST_RUN_SCHEMA: Literal["lnrepro.gtest-run/2"] = "lnrepro.gtest-run/2"


@dataclass(frozen=True, kw_only=True)
class GtestRunDoc:
    """``lnrepro parse --json`` (``lnrepro.gtest-run/2``): a console log, as typed records."""

    schema: Literal["lnrepro.gtest-run/2"] = GTEST_RUN_SCHEMA
    exit_code: int | None
    iterations: tuple[IterationDoc, ...]
    tests: tuple[TestResult, ...]  # every iteration's, in order
    totals: dict[TestStatus, int]  # tests per status
    warnings: tuple[str, ...]


_SIGNAL_NAMES = {int(s): s.name for s in signal.Signals}


def describe_exit(code: int | None) -> tuple[TestStatus, CrashInfo]:
    """Classify how a process that left a test unfinished ended.

    Accepts shell-style codes (128+N, 124 from timeout(1)) and Python-style
    negative codes (-N for signal N).
    """
    if code is None:
        return TestStatus.CRASHED, CrashInfo(reason="the log ended while the test was running")
    if code == 124:
        return TestStatus.TIMEOUT, CrashInfo(
            exit_code=code, signal="SIGTERM", reason="killed by timeout(1) (exit 124)"
        )
    sig: int | None = None
    if code < 0:
        sig = -code
    elif code > 128 and (code - 128) in _SIGNAL_NAMES:
        sig = code - 128
    if sig is not None:
        name = _SIGNAL_NAMES.get(sig, f"signal {sig}")
        if sig == signal.SIGKILL:
            return TestStatus.TIMEOUT, CrashInfo(
                exit_code=code,
                signal=name,
                reason=f"killed by SIGKILL (exit {code}): a timeout's kill, or the OOM killer",
            )
        reasons: dict[int, str] = {
            signal.SIGSEGV: "segmentation fault",
            signal.SIGABRT: "aborted: abort(), a failed assert or std::terminate",
            signal.SIGBUS: "bus error",
            signal.SIGFPE: "floating-point exception",
            signal.SIGTERM: "terminated",
            signal.SIGINT: "interrupted",
        }
        reason = reasons.get(sig, f"killed by {name}")
        return TestStatus.CRASHED, CrashInfo(
            exit_code=code, signal=name, reason=f"{reason} (exit {code})"
        )
    if code == 0:
        return TestStatus.CRASHED, CrashInfo(
            exit_code=code,
            reason="the process exited 0 while the test was running (exit(0) in the test?)",
        )
    return TestStatus.CRASHED, CrashInfo(
        exit_code=code,
        reason=f"the process exited with {code} while the test was running (exit() in the test?)",
    )
