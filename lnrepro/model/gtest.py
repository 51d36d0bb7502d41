"""Typed records of what a googletest binary did: one per test, per iteration."""

from __future__ import annotations

import signal
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from lnrepro.model.jsonio import Reader

# tensor -> metric name -> value (worst seen in the test)
Metrics = dict[str, dict[str, float]]


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


@dataclass(frozen=True, slots=True)
class Failure:
    """One ``file:line: Failure`` block (or a report's failure element)."""

    __test__ = False

    file: str | None
    line: int | None
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "message": self.message}

    @classmethod
    def from_json(cls, r: Reader) -> Failure:
        return cls(r.opt_str("file"), r.opt_int("line"), r.str("message", ""))


@dataclass(frozen=True, slots=True)
class CrashInfo:
    """Why a test that started never finished."""

    exit_code: int | None
    signal: str | None
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"exit_code": self.exit_code, "signal": self.signal, "reason": self.reason}

    @classmethod
    def from_json(cls, r: Reader) -> CrashInfo:
        return cls(r.opt_int("exit_code"), r.opt_str("signal"), r.str("reason", ""))


@dataclass(slots=True)
class TestResult:
    __test__ = False

    name: str  # as gtest prints it: "Prefix/Suite.Test/0"
    status: TestStatus
    iteration: int = 1
    duration_ms: float | None = None
    failures: list[Failure] = field(default_factory=list)
    metrics: Metrics = field(default_factory=dict)
    param: str | None = None  # ", where GetParam() = ..."
    type_param: str | None = None  # ", where TypeParam = ..."
    skip_message: str | None = None
    crash: CrashInfo | None = None

    @property
    def suite(self) -> str:
        """gtest's ``Suite`` of ``Suite.Test``; a pytest node id's file (and class)."""
        return split_name(self.name)[0]

    @property
    def test(self) -> str:
        return split_name(self.name)[1]

    def add_metric(self, tensor: str, key: str, value: float) -> None:
        add_metric(self.metrics, tensor, key, value)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "suite": self.suite,
            "test": self.test,
            "iteration": self.iteration,
            "status": self.status.value,
            "duration_ms": self.duration_ms,
            "param": self.param,
            "type_param": self.type_param,
            "failures": [f.to_json() for f in self.failures],
            "metrics": self.metrics,
            "skip_message": self.skip_message,
            "crash": self.crash.to_json() if self.crash else None,
        }

    @classmethod
    def from_json(cls, r: Reader) -> TestResult:
        crash = r.opt_obj("crash")
        return cls(
            r.str("name"),
            r.enum("status", TestStatus),
            r.int("iteration", 1),
            r.opt_float("duration_ms"),
            [Failure.from_json(f) for f in r.list("failures", default=[])],
            metrics_from_json(r, "metrics"),
            r.opt_str("param"),
            r.opt_str("type_param"),
            r.opt_str("skip_message"),
            CrashInfo.from_json(crash) if crash is not None else None,
        )


def split_name(name: str) -> tuple[str, str]:
    """``Suite.Test`` at the first dot (gtest: ``Prefix/Suite.Test/0``); a pytest node id
    ``path.py::Class::test[params]`` at its last ``::`` outside the parameters."""
    if "::" in name:
        head = name.split("[", 1)[0]
        cut = head.rfind("::")
        return name[:cut], name[cut + 2 :]
    suite, _, test = name.partition(".")
    return suite, test


def metrics_from_json(r: Reader, key: str) -> Metrics:
    """``{tensor: {metric: number}}`` (non-finite numbers in their JSON encoding)."""
    out: Metrics = {}
    m = r.opt_obj(key)
    if m is None:
        return out
    for tensor, _vals in m.items():
        out[tensor] = {k: v.as_float() for k, v in m.obj(tensor).items()}
    return out


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


@dataclass
class Summary:
    """What the closing lines of an iteration said, where present."""

    ran: int | None = None
    passed: int | None = None
    failed: int | None = None
    skipped: int | None = None
    disabled: int | None = None
    failed_suites: int | None = None
    total_ms: float | None = None

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
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

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "filter": self.gtest_filter,
            "shard": list(self.shard) if self.shard else None,
            "random_seed": self.random_seed,
            "finished": self.finished,
            "summary": self.summary.to_json(),
            "global_failures": [f.to_json() for f in self.global_failures],
            "suite_failures": {k: [f.to_json() for f in v] for k, v in self.suite_failures.items()},
        }


@dataclass
class GtestRun:
    """Everything parsed from one console log (and, optionally, its report)."""

    iterations: list[Iteration] = field(default_factory=list)
    exit_code: int | None = None
    warnings: list[str] = field(default_factory=list)
    saw_gtest_output: bool = False

    @property
    def tests(self) -> list[TestResult]:
        return [t for it in self.iterations for t in it.tests]

    def totals(self) -> dict[str, int]:
        counts = {s.value: 0 for s in TestStatus}
        for t in self.tests:
            counts[t.status.value] += 1
        return counts

    @property
    def ok(self) -> bool:
        return not any(t.status.is_problem for t in self.tests) and not any(
            it.global_failures or it.suite_failures for it in self.iterations
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": "lnrepro.gtest-run/1",
            "exit_code": self.exit_code,
            "iterations": [it.to_json() for it in self.iterations],
            "tests": [t.to_json() for t in self.tests],
            "totals": self.totals(),
            "warnings": list(self.warnings),
        }


_SIGNAL_NAMES = {int(s): s.name for s in signal.Signals}


def describe_exit(code: int | None) -> tuple[TestStatus, CrashInfo]:
    """Classify how a process that left a test unfinished ended.

    Accepts shell-style codes (128+N, 124 from timeout(1)) and Python-style
    negative codes (-N for signal N).
    """
    if code is None:
        return TestStatus.CRASHED, CrashInfo(None, None, "the log ended while the test was running")
    if code == 124:
        return TestStatus.TIMEOUT, CrashInfo(code, "SIGTERM", "killed by timeout(1) (exit 124)")
    sig: int | None = None
    if code < 0:
        sig = -code
    elif code > 128 and (code - 128) in _SIGNAL_NAMES:
        sig = code - 128
    if sig is not None:
        name = _SIGNAL_NAMES.get(sig, f"signal {sig}")
        if sig == signal.SIGKILL:
            return TestStatus.TIMEOUT, CrashInfo(
                code, name, f"killed by SIGKILL (exit {code}): a timeout's kill, or the OOM killer"
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
        return TestStatus.CRASHED, CrashInfo(code, name, f"{reason} (exit {code})")
    if code == 0:
        return TestStatus.CRASHED, CrashInfo(
            code, None, "the process exited 0 while the test was running (exit(0) in the test?)"
        )
    return TestStatus.CRASHED, CrashInfo(
        code,
        None,
        f"the process exited with {code} while the test was running (exit() in the test?)",
    )
