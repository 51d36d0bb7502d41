"""Oracles: run a commit's test and report every run as data (:class:`AttemptObs`).

What a run *means* — the bug's signature, noise, git's good/bad — is decided by
:mod:`~lnrepro.bisect.evidence` and the strategy, not here.

``CommandOracle`` follows ``git bisect run``: exit 0 pass, 125 cannot test, 1-127 fail; a signal
(exit >= 128) or the timeout is a crash or a hang, which ``--on-crash`` / ``--on-hang`` judge.
``RunOracle`` asks the pipeline (``lnrepro run``) on the worktree: every attempt's tests with
their statuses, failure shapes and metrics; a commit that does not build or runs no tests
cannot be tested.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from lnrepro.bisect.evidence import AttemptObs, TestObs, shape
from lnrepro.doors import proc
from lnrepro.errors import OutcomeError
from lnrepro.model.events import Events


@dataclass(frozen=True)
class Evidence:
    attempts: tuple[AttemptObs, ...]
    cannot_test: str | None = None  # did not build, no tests: not a run at all
    detail: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    build_s: float | None = None  # how long the build took, when there was one
    run_s: float | None = None  # mean seconds of one run
    inputs: str | None = None  # hash of what the tests ran (binary + kernel sources)
    same_as: str | None = None  # a commit already tested with the same inputs: not run again

    def to_json(self) -> dict[str, Any]:
        return {
            "seconds": round(self.seconds, 3),
            "build_s": None if self.build_s is None else round(self.build_s, 3),
            "run_s": None if self.run_s is None else round(self.run_s, 3),
            "cannot_test": self.cannot_test,
            "inputs": self.inputs,
            "same_as": self.same_as,
            "attempts": [a.to_json() for a in self.attempts],
            **self.detail,
        }


class Oracle(Protocol):
    def describe(self) -> dict[str, Any]: ...
    def evaluate(
        self,
        worktree: Path,
        events: Events | None = None,
        runs: int | None = None,
        known: Mapping[str, str] | None = None,
    ) -> Evidence:
        """Test the worktree ``runs`` times (None: the oracle's own --repeat). ``known`` maps
        input hashes to commits already tested: a build matching one is not run again."""
        ...


@dataclass(frozen=True)
class CommandOracle:
    argv: tuple[str, ...]
    timeout_s: float | None = None
    repeat: int = 1

    def describe(self) -> dict[str, Any]:
        return {"oracle": "command", "command": shlex.join(self.argv), "timeout_s": self.timeout_s,
                "repeat": self.repeat}  # fmt: skip

    def evaluate(
        self,
        worktree: Path,
        events: Events | None = None,
        runs: int | None = None,
        known: Mapping[str, str] | None = None,
    ) -> Evidence:
        attempts, tails, total = [], [], 0.0
        for _ in range(runs or self.repeat):
            tail: list[bytes] = []

            def keep(data: bytes, tail: list[bytes] = tail) -> None:
                tail.append(data)
                del tail[:-16]

            res = proc.stream(list(self.argv), keep, timeout=self.timeout_s, cwd=worktree)
            total += res.seconds
            tails.append(b"".join(tail).decode("utf-8", "replace").strip().splitlines()[-5:])
            attempts.append(AttemptObs(res.exit_code, gtest=False, timed_out=res.timed_out))
        n = len(attempts)
        return Evidence(tuple(attempts), detail={"output_tail": tails[-1]}, seconds=total,
                        run_s=total / n)  # fmt: skip


@dataclass(frozen=True)
class RunOracle:
    """``lnrepro run`` on the worktree, with the backend options the user gave."""

    backend_opts: Any  # BackendOptions; tt_metal is set to the worktree
    gtest_filter: str
    repeat: int
    timeout_s: float
    record_base: Path
    metric: str | None = None

    def describe(self) -> dict[str, Any]:
        return {"oracle": "run", "filter": self.gtest_filter, "repeat": self.repeat,
                "timeout_s": self.timeout_s, "metric": self.metric,
                "runner": self.backend_opts.runner, "profile": self.backend_opts.profile}  # fmt: skip

    def evaluate(
        self,
        worktree: Path,
        events: Events | None = None,
        runs: int | None = None,
        known: Mapping[str, str] | None = None,
    ) -> Evidence:
        from lnrepro.run.backends.factory import make_backend
        from lnrepro.run.pipeline import run_tests

        start = time.monotonic()
        backend = make_backend(replace(self.backend_opts, tt_metal=worktree, backend="tt-metal"))
        seen = dict(known or {})

        def same(rec: Any) -> str | None:
            key = ((rec.build or {}).get("inputs") or {}).get("key")
            return f"same inputs as {seen[key][:12]}" if key in seen else None

        try:
            rec = run_tests(backend, gtest_filter=self.gtest_filter, repeat=runs or self.repeat,
                            timeout_s=self.timeout_s, record_base=self.record_base,
                            events=events, after_build=same)  # fmt: skip
        except OutcomeError as exc:
            return Evidence((), cannot_test=exc.one_line(), detail={"verdict": type(exc).__name__},
                            seconds=time.monotonic() - start)  # fmt: skip
        attempts = tuple(
            AttemptObs(
                a.exit_code,
                tuple(
                    TestObs(
                        t.name,
                        t.status.value,
                        tuple(shape(f.message) for f in t.failures),
                        self._metric(t.metrics),
                    )
                    for t in a.run.tests
                ),
                timed_out=a.timed_out,
                env_error=a.env_error,
            )
            for a in rec.attempts
        )
        detail: dict[str, Any] = {
            "verdict": rec.verdict.value,
            "record": str(rec.record_dir),
            "tests": {
                t.name: {
                    "verdict": t.verdict.value,
                    "passed": t.passed,
                    "runs": t.runs,
                    "worst": t.worst,
                }
                for t in rec.tests
            },
        }
        build_s = float(rec.build["seconds"]) if rec.build and "seconds" in rec.build else None
        run_s = sum(a.seconds for a in rec.attempts) / len(rec.attempts) if rec.attempts else None
        key = ((rec.build or {}).get("inputs") or {}).get("key")
        return Evidence(attempts, None, detail, time.monotonic() - start, build_s, run_s, key,
                        seen.get(key) if key and not rec.attempts else None)  # fmt: skip

    def _metric(self, metrics: dict[str, dict[str, float]]) -> float | None:
        if self.metric is None:
            return None
        vals = [v[self.metric] for v in metrics.values() if self.metric in v]
        return max(vals) if vals else None
