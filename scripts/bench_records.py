"""Measure the record libraries issue 39 weighs: msgspec, pydantic v2 and today's hand code.

(a) the library's import time (a fresh interpreter each time: it is paid by every command that
reads or writes a record, never by ``lnrepro --help``), and (b) encode + decode + validate of a
10,000-step bisect record shaped like ``lnrepro/model/bisect.py``'s (a step: its action, evidence
with one attempt of two tests, per-test summaries, outcomes, mark). Prints a Markdown table.

    .venv/bin/python scripts/bench_records.py [--steps 10000] [--repeat 5]

pydantic is not a dependency of lnrepro: install it beside to run this (``pip install pydantic``).
"""

from __future__ import annotations

import argparse
import builtins
import json
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, TypeVar

import msgspec

from lnrepro.model import jsonio
from lnrepro.model.jsonio import decode_number, dumps, kind_of, loads_text

E = TypeVar("E")


class Mark(str, Enum):
    GOOD = "good"
    BAD = "bad"
    SKIP = "skip"


class RunOutcome(str, Enum):
    PASS = "pass"
    FAIL = "fail"
    CRASH = "crash"


class Status(str, Enum):
    PASSED = "PASSED"
    FAILED = "FAILED"
    CRASHED = "CRASHED"


def doc(steps: int) -> dict[str, Any]:
    """The record as JSON builtins (what every implementation must read and write)."""

    def test(i: int, j: int) -> dict[str, Any]:
        return {
            "name": f"LayerNormBackwardOpTest.Case{j}",
            "status": "FAILED" if (i + j) % 3 == 0 else "PASSED",
            "shapes": ["1x13x1x20", "1x32x1x33"],
            "metric": 1.5 + i / 7 if j else None,
        }

    out = []
    for i in range(steps):
        out.append(
            {
                "sha": f"{i:040x}",
                "kind": "checkout",
                "subject": f"commit number {i}: a change to the kernel",
                "prepare_s": 0.25,
                "checkout_s": 1.5,
                "note": None,
                "seconds": 12.5,
                "build_s": 30.0,
                "run_s": 4.25,
                "cannot_test": None,
                "verdict": "fail",
                "tests": {
                    "LayerNormBackwardOpTest.Case0": {
                        "verdict": "fail",
                        "passed": 0,
                        "runs": 1,
                        "worst": {"dx": 1.5},
                    }
                },
                "attempts": [
                    {
                        "exit_code": 1,
                        "gtest": True,
                        "timed_out": False,
                        "hang": None,
                        "tests": [test(i, 0), test(i, 1)],
                    }
                ],
                "outcomes": [["fail", "dx max_diff=1000"]],
                "mark": "bad" if i % 2 else "good",
                "reason": "the run failed",
            }
        )
    return {"schema": "lnrepro.bisect/6", "good": "a" * 40, "bad": "b" * 40, "steps": out}


# ------------------------------------------------------------------------------ msgspec
class MTest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    name: str
    status: Status
    shapes: list[str]
    metric: float | None


class MAttempt(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    exit_code: int
    gtest: bool
    timed_out: bool
    hang: str | None
    tests: list[MTest]


class MStepTest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    verdict: str
    passed: int
    runs: int
    worst: dict[str, float]


class MStep(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    sha: str
    kind: str
    subject: str
    prepare_s: float
    checkout_s: float
    note: str | None
    seconds: float
    build_s: float | None
    run_s: float | None
    cannot_test: str | None
    verdict: str | None
    tests: dict[str, MStepTest]
    attempts: list[MAttempt]
    outcomes: list[tuple[RunOutcome, str]]
    mark: Mark
    reason: str


class MRecord(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    schema: str
    good: str
    bad: str
    steps: list[MStep]


def msgspec_trip(text: bytes) -> bytes:
    rec = msgspec.json.decode(text, type=MRecord)
    return msgspec.json.encode(rec)


# ------------------------------------------------------------------------------ hand code
class Reader(jsonio.Reader):
    """lnrepro's Reader with the typed accessors the hand code of issue 39 read records with
    (lnrepro's records are read by codec since; these lived in jsonio then)."""

    __slots__ = ()

    def items(self) -> Iterator[tuple[builtins.str, Reader]]:
        for k in self._dict():
            yield k, self.get(k)

    def elements(self) -> builtins.list[Reader]:
        if not isinstance(self.value, list):
            self.fail(f"should be a list, not {kind_of(self.value)}")
        return [Reader(x, self._source, f"{self.where()}[{i}]") for i, x in enumerate(self.value)]

    def _scalar(self, key: builtins.str, types: tuple[type, ...], name: builtins.str) -> Any:
        v = self._dict().get(key)
        if v is None:
            self.fail(f"is missing (should be {name})", key)
        if (isinstance(v, bool) and bool not in types) or not isinstance(v, types):
            self.fail(f"should be {name}, not {kind_of(v)}", key)
        return v

    def int(self, key: builtins.str) -> builtins.int:
        return int(self._scalar(key, (int,), "an integer"))

    def bool(self, key: builtins.str) -> builtins.bool:
        return bool(self._scalar(key, (bool,), "true or false"))

    def float(self, key: builtins.str) -> builtins.float:
        v = self.opt_float(key)
        if v is None:
            self.fail("is missing (should be a number)", key)
        return v

    def opt_float(self, key: builtins.str) -> builtins.float | None:
        d = self._dict()
        if d.get(key) is None:
            return None
        v = decode_number(d[key])
        if v is None:
            self.fail(f"should be a number, not {kind_of(d[key])}", key)
        return v

    def enum(self, key: builtins.str, kind: type[E]) -> E:
        raw = self.str(key)
        try:
            return kind(raw)  # type: ignore[call-arg]
        except ValueError:
            names = ", ".join(str(getattr(m, "value", m)) for m in kind)  # type: ignore[attr-defined]
            self.fail(f"is {raw!r}, which is not one of {names}", key)

    def strs(self, key: builtins.str) -> tuple[builtins.str, ...]:
        out = []
        for r in [] if self._dict().get(key) is None else self.list(key):
            if not isinstance(r.value, str):
                r.fail(f"should be a string, not {kind_of(r.value)}")
            out.append(r.value)
        return tuple(out)

    def as_str(self) -> builtins.str:
        if not isinstance(self.value, str):
            self.fail(f"should be a string, not {kind_of(self.value)}")
        return self.value

    def as_float(self) -> builtins.float:
        v = decode_number(self.value)
        if v is None:
            self.fail(f"should be a number, not {kind_of(self.value)}")
        return v


@dataclass(frozen=True)
class HTest:
    name: str
    status: Status
    shapes: tuple[str, ...]
    metric: float | None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status.value,
            "shapes": list(self.shapes),
            "metric": self.metric,
        }

    @classmethod
    def from_json(cls, r: Reader) -> HTest:
        return cls(r.str("name"), r.enum("status", Status), r.strs("shapes"), r.opt_float("metric"))


@dataclass(frozen=True)
class HAttempt:
    exit_code: int
    gtest: bool
    timed_out: bool
    hang: str | None
    tests: tuple[HTest, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "exit_code": self.exit_code,
            "gtest": self.gtest,
            "timed_out": self.timed_out,
            "hang": self.hang,
            "tests": [t.to_json() for t in self.tests],
        }

    @classmethod
    def from_json(cls, r: Reader) -> HAttempt:
        return cls(
            r.int("exit_code"),
            r.bool("gtest"),
            r.bool("timed_out"),
            r.opt_str("hang"),
            tuple(HTest.from_json(t) for t in r.list("tests")),
        )


@dataclass(frozen=True)
class HStepTest:
    verdict: str
    passed: int
    runs: int
    worst: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "passed": self.passed,
            "runs": self.runs,
            "worst": self.worst,
        }

    @classmethod
    def from_json(cls, r: Reader) -> HStepTest:
        w = r.obj("worst")
        return cls(
            r.str("verdict"),
            r.int("passed"),
            r.int("runs"),
            {k: v.as_float() for k, v in w.items()},
        )


@dataclass(frozen=True)
class HStep:
    sha: str
    kind: str
    subject: str
    prepare_s: float
    checkout_s: float
    note: str | None
    seconds: float
    build_s: float | None
    run_s: float | None
    cannot_test: str | None
    verdict: str | None
    tests: dict[str, HStepTest]
    attempts: tuple[HAttempt, ...]
    outcomes: tuple[tuple[RunOutcome, str], ...]
    mark: Mark
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {
            "sha": self.sha,
            "kind": self.kind,
            "subject": self.subject,
            "prepare_s": self.prepare_s,
            "checkout_s": self.checkout_s,
            "note": self.note,
            "seconds": self.seconds,
            "build_s": self.build_s,
            "run_s": self.run_s,
            "cannot_test": self.cannot_test,
            "verdict": self.verdict,
            "tests": {k: v.to_json() for k, v in self.tests.items()},
            "attempts": [a.to_json() for a in self.attempts],
            "outcomes": [[o.value, why] for o, why in self.outcomes],
            "mark": self.mark.value,
            "reason": self.reason,
        }

    @classmethod
    def from_json(cls, r: Reader) -> HStep:
        outs = []
        for o in r.list("outcomes"):
            a, b = o.elements()
            outs.append((RunOutcome(a.as_str()), b.as_str()))
        return cls(
            r.str("sha"),
            r.str("kind"),
            r.str("subject"),
            r.float("prepare_s"),
            r.float("checkout_s"),
            r.opt_str("note"),
            r.float("seconds"),
            r.opt_float("build_s"),
            r.opt_float("run_s"),
            r.opt_str("cannot_test"),
            r.opt_str("verdict"),
            {k: HStepTest.from_json(v) for k, v in r.obj("tests").items()},
            tuple(HAttempt.from_json(a) for a in r.list("attempts")),
            tuple(outs),
            r.enum("mark", Mark),
            r.str("reason"),
        )


def hand_trip(text: bytes) -> bytes:
    r = Reader(loads_text(text.decode(), "bench"), "bench")
    steps = [HStep.from_json(s) for s in r.list("steps")]
    out = {
        "schema": r.str("schema"),
        "good": r.str("good"),
        "bad": r.str("bad"),
        "steps": [s.to_json() for s in steps],
    }
    return dumps(out, indent=None).encode()


# ------------------------------------------------------------------------------ pydantic
def pydantic_trip_factory() -> Callable[[bytes], bytes]:
    from pydantic import BaseModel, ConfigDict

    class Base(BaseModel):
        model_config = ConfigDict(extra="forbid", frozen=True)

    class PTest(Base):
        name: str
        status: Status
        shapes: list[str]
        metric: float | None

    class PAttempt(Base):
        exit_code: int
        gtest: bool
        timed_out: bool
        hang: str | None
        tests: list[PTest]

    class PStepTest(Base):
        verdict: str
        passed: int
        runs: int
        worst: dict[str, float]

    class PStep(Base):
        sha: str
        kind: str
        subject: str
        prepare_s: float
        checkout_s: float
        note: str | None
        seconds: float
        build_s: float | None
        run_s: float | None
        cannot_test: str | None
        verdict: str | None
        tests: dict[str, PStepTest]
        attempts: list[PAttempt]
        outcomes: list[tuple[RunOutcome, str]]
        mark: Mark
        reason: str

    class PRecord(Base):
        schema_: str = ""
        good: str
        bad: str
        steps: list[PStep]

    def trip(text: bytes) -> bytes:
        rec = PRecord.model_validate_json(text)
        return rec.model_dump_json().encode()

    return trip


def run_record_text(results: int) -> bytes:
    """lnrepro's own run record (lnrepro.run/5) holding ``results`` test results: 10 attempts of
    results/10 tests, a third failing with a failure block, two metrics each (some infinite)."""
    from pathlib import Path

    from lnrepro.model.gtest import Failure, TestResult, TestStatus
    from lnrepro.model.record import Attempt, RunRecord
    from lnrepro.model.requests import RunRequest

    attempts = []
    for i in range(10):
        tests = []
        for j in range(results // 10):
            bad = (i + j) % 3 == 0
            t = TestResult(
                name=f"LayerNormBackwardOpTest.Case{j}",
                status=TestStatus.FAILED if bad else TestStatus.PASSED,
                duration_ms=12.0,
                failures=[Failure(file="a.cpp", line=j, message="dx FAILED")] if bad else [],
            )
            t.add_metric("dx", "max_diff", 1.5 + j / 7)
            t.add_metric("dx", "max_abs_diff", float("inf") if j % 100 == 0 else 2.0)
            tests.append(t)
        attempts.append(
            Attempt(
                index=i + 1,
                argv=["prog"],
                exit_code=1,
                timed_out=False,
                seconds=1.0,
                log=f"attempt-{i + 1}.log",
                tests=tests,
            )
        )
    rec = RunRecord(
        request=RunRequest(),
        rerun=["lnrepro", "run"],
        record_dir=Path("/tmp/run-x"),
        attempts=attempts,
    )
    return dumps(rec.to_json()).encode()


def run_record_trip(text: bytes) -> bytes:
    """Read a run record as ``lnrepro show`` does, and write it again."""
    from pathlib import Path

    from lnrepro.model.record import RunRecord

    rec = RunRecord.from_json(Reader(loads_text(text.decode(), "r"), "r"), Path("/tmp/run-x"))
    return dumps(rec.to_json()).encode()


def bisect_record_text(steps: int) -> bytes:
    """lnrepro's own bisect record (lnrepro.bisect/6) of ``steps`` steps shaped as :func:`doc`'s:
    an action, one attempt of two tests (a third with a NaN metric), a step test with its worst
    metrics, two outcomes and a mark."""
    from pathlib import Path

    from lnrepro.model.bisect import (
        Action,
        ActionKind,
        AttemptObs,
        BisectRecord,
        Evidence,
        Mark,
        RunOutcome,
        Step,
        StepTest,
        TestObs,
    )
    from lnrepro.model.gtest import TestStatus
    from lnrepro.model.record import Verdict
    from lnrepro.model.requests import BisectRequest, CommandOracleSpec

    def test(i: int, j: int) -> TestObs:
        return TestObs(
            name=f"LayerNormBackwardOpTest.Case{j}",
            status=TestStatus.FAILED if (i + j) % 3 == 0 else TestStatus.PASSED,
            shapes=("1x13x1x20", "1x32x1x33"),
            metric=float("nan") if (i + j) % 3 == 1 else 1.5 + i / 7,
        )

    request = BisectRequest(
        repo=Path("/r"), good=("a" * 40,), bad="b" * 40, oracle=CommandOracleSpec(argv=("t",))
    )
    rec = BisectRecord(request=request)
    for i in range(steps):
        ev = Evidence(
            seconds=12.5,
            build_s=30.0,
            run_s=4.25,
            verdict=Verdict.FAIL,
            tests={
                "LayerNormBackwardOpTest.Case0": StepTest(
                    verdict=Verdict.FAIL, passed=0, runs=1, worst={"dx": {"max_diff": 1.5}}
                )
            },
            attempts=(AttemptObs(exit_code=1, tests=(test(i, 0), test(i, 1))),),
        )
        rec.steps.append(
            Step.of(
                Action(sha=f"{i:040x}", kind=ActionKind.STEP),
                ev,
                subject=f"commit number {i}: a change to the kernel",
                outcomes=((RunOutcome.FAIL, "dx max_diff=1000"), (RunOutcome.NOISE, "timeout")),
                mark=Mark.BAD if i % 2 else Mark.GOOD,
                reason="the run failed",
                prepare_s=0.25,
                checkout_s=1.5,
            )
        )
    return dumps(rec.to_json()).encode()


def bisect_record_trip(text: bytes) -> bytes:
    """Read a bisect record as ``lnrepro show`` and ``--resume`` do, and write it again."""
    from lnrepro.model import bisect

    return dumps(bisect.decode(loads_text(text.decode(), "b"), "b").to_json()).encode()


def import_seconds(module: str, repeat: int) -> list[float]:
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    return [
        float(
            subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True
            ).stdout
        )
        for _ in range(repeat)
    ]


def timed(fn: Callable[[bytes], bytes], text: bytes, repeat: int) -> list[float]:
    fn(text)  # warm up (and check it reads)
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn(text)
        out.append(time.perf_counter() - t)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--results", type=int, default=10_000, help="test results in the run record")
    a = ap.parse_args()
    d = doc(a.steps)
    text = json.dumps(d).encode()
    p = json.loads(text)
    p["schema_"] = p.pop("schema")
    ptext = json.dumps(p).encode()
    print(
        f"{platform.processor() or platform.machine()}, {platform.python_implementation()} "
        f"{platform.python_version()}, {a.steps} steps ({len(text) / 1e6:.1f} MB of JSON), "
        f"best and median of {a.repeat}\n"
    )
    print("| library | import (ms) | round trip (ms) |")
    print("| --- | ---: | ---: |")
    rows: list[tuple[str, str, Callable[[bytes], bytes], bytes]] = [
        ("hand code (json + Reader)", "lnrepro.model.jsonio", hand_trip, text),
        (f"msgspec {msgspec.__version__}", "msgspec", msgspec_trip, text),
    ]
    try:
        import pydantic

        rows.append(
            (f"pydantic {pydantic.VERSION}", "pydantic.main", pydantic_trip_factory(), ptext)
        )
    except ImportError:
        print("(pydantic is not installed: skipped)", file=sys.stderr)
    run_text = run_record_text(a.results)
    rows.append(
        (
            f"lnrepro's run record: {a.results} results ({len(run_text) / 1e6:.1f} MB), read + write",
            "lnrepro.model.record",
            run_record_trip,
            run_text,
        )
    )
    bisect_text = bisect_record_text(a.steps)
    rows.append(
        (
            f"lnrepro's bisect record: {a.steps} steps ({len(bisect_text) / 1e6:.1f} MB), "
            "read + write",
            "lnrepro.model.bisect",
            bisect_record_trip,
            bisect_text,
        )
    )
    for label, module, fn, t in rows:
        imp = import_seconds(module, a.repeat)
        run = timed(fn, t, a.repeat)
        print(
            f"| {label} | {min(imp) * 1e3:.1f} / {statistics.median(imp) * 1e3:.1f} "
            f"| {min(run) * 1e3:.0f} / {statistics.median(run) * 1e3:.0f} |"
        )


if __name__ == "__main__":
    main()
