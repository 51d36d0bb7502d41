"""Oracles: run a commit's test and report every run as data (:class:`AttemptObs`).

What a run *means* — the bug's signature, noise, git's good/bad — is decided by
:mod:`~lnrepro.bisect.evidence` and the strategy, not here.

``CommandOracle`` follows ``git bisect run``: exit 0 pass, 125 cannot test (at once: no retry
of a command that said so), 1-127 fail; a signal (exit >= 128) or the timeout is a crash or a
hang, which ``--on-crash`` / ``--on-hang`` judge. ``RunOracle`` asks the pipeline (``lnrepro
run``) on the worktree: every attempt's tests with their statuses, failure shapes and metrics; a
commit that does not build, or lacks the requested tests, cannot be tested.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

import msgspec

from lnrepro.bisect.evidence import shape
from lnrepro.doors import proc
from lnrepro.errors import UsageError
from lnrepro.model.bisect import AttemptObs, Evidence, StepTest, TestObs
from lnrepro.model.events import Events
from lnrepro.model.gtest import Metrics
from lnrepro.model.record import RunRecord, Verdict
from lnrepro.model.requests import (
    BisectRequest,
    CommandOracleSpec,
    Policy,
    PythonSpec,
    RunOracleSpec,
    RunRequest,
    TtMetalSpec,
)

SKIP_CODE = 125  # git bisect run: "this commit cannot be tested"


@dataclass(frozen=True, kw_only=True)
class Trial:
    """What the loop asks of an oracle: test one worktree."""

    worktree: Path
    events: Events | None = None
    runs: int | None = None  # how many times; None: the oracle's own --repeat
    # input hashes -> commits already tested: a build matching one is not run again
    known: Mapping[str, str] | None = None
    # the commit's ready build tree, tested instead of a build (when it cannot be used, the
    # commit is built)
    prebuilt: Path | None = None


class Oracle(Protocol):
    def evaluate(self, trial: Trial) -> Evidence:
        """What testing ``trial.worktree`` showed."""
        ...


@dataclass(frozen=True)
class CommandOracle:
    spec: CommandOracleSpec

    def evaluate(self, trial: Trial) -> Evidence:
        attempts: list[AttemptObs] = []
        tail: list[str] = []
        total = 0.0
        for _ in range(trial.runs or self.spec.repeat):
            chunks: list[bytes] = []

            def keep(data: bytes, chunks: list[bytes] = chunks) -> None:
                chunks.append(data)
                del chunks[:-16]

            res = proc.stream(
                list(self.spec.argv), keep, timeout=self.spec.timeout_s, cwd=trial.worktree
            )
            total += res.seconds
            tail = b"".join(chunks).decode("utf-8", "replace").strip().splitlines()[-5:]
            if res.exit_code == SKIP_CODE and not res.timed_out:
                return Evidence(
                    attempts=tuple(attempts),
                    cannot_test=f"the command exited {SKIP_CODE}: it cannot test this commit",
                    seconds=total,
                    output_tail=tuple(tail),
                )
            attempts.append(
                AttemptObs(exit_code=res.exit_code, gtest=False, timed_out=res.timed_out)
            )
        n = len(attempts)
        return Evidence(
            attempts=tuple(attempts),
            seconds=total,
            run_s=total / n if n else None,
            output_tail=tuple(tail),
        )


@dataclass(frozen=True)
class RunOracle:
    """``lnrepro run`` on the worktree: the job's run request with the worktree as checkout."""

    request: RunRequest  # backend: a TtMetalSpec; its checkout is replaced by the worktree
    policy: Policy

    def evaluate(self, trial: Trial) -> Evidence:
        if trial.prebuilt is not None:
            ev = self._evaluate(trial)
            if ev.cannot_test is None:
                return ev
            # an artifact that cannot be used decides nothing: build the commit like any other
            built = self._evaluate(replace(trial, prebuilt=None))
            return replace(
                built,
                seconds=built.seconds + ev.seconds,
                prebuilt_failed=f"{trial.prebuilt}: {ev.cannot_test}",
            )
        return self._evaluate(trial)

    def _evaluate(self, trial: Trial) -> Evidence:
        from lnrepro.run.backends.factory import make_backend
        from lnrepro.run.pipeline import run_tests

        start = time.monotonic()
        worktree, runs, prebuilt = trial.worktree, trial.runs, trial.prebuilt
        spec: TtMetalSpec | PythonSpec
        if isinstance(self.request.backend, PythonSpec):
            spec = msgspec.structs.replace(self.request.backend, project=worktree)
        else:
            assert isinstance(self.request.backend, TtMetalSpec)
            spec = msgspec.structs.replace(
                self.request.backend, checkout=worktree, prebuilt=prebuilt
            )
        tests = (
            self.request.tests
            if runs is None
            else msgspec.structs.replace(self.request.tests, repeat=runs)
        )
        request = replace(self.request, backend=spec, tests=tests)
        seen = dict(trial.known or {})

        def same(rec: RunRecord) -> str | None:
            key = rec.build.inputs.key if rec.build and rec.build.inputs else None
            return f"same inputs as {seen[key][:12]}" if key in seen else None

        rec = run_tests(make_backend(spec), request, events=trial.events, after_build=same)
        key = rec.build.inputs.key if rec.build and rec.build.inputs else None
        build_s = rec.build.seconds if rec.build else None
        base = Evidence(
            seconds=time.monotonic() - start,
            build_s=build_s,
            inputs=key,
            verdict=rec.verdict,
            record=str(rec.record_dir),
            prebuilt=str(prebuilt) if prebuilt is not None else None,
            tests={
                t.name: StepTest(verdict=t.verdict, passed=t.passed, runs=t.runs, worst=t.worst)
                for t in rec.tests
            },
        )
        if key and key in seen and not rec.attempts:
            return replace(base, same_as=seen[key])
        if rec.verdict in (Verdict.BUILD_FAILED, Verdict.NOT_RUN) or rec.incomplete:
            return replace(base, cannot_test=rec.why or (rec.notes[0] if rec.notes else "not run"))
        if prebuilt is not None and rec.verdict is Verdict.ENV_ERROR:  # e.g. it cannot load
            return replace(base, cannot_test=f"the prebuilt tree does not run: {rec.why}")
        attempts = tuple(
            AttemptObs(
                exit_code=a.exit_code,
                tests=tuple(
                    TestObs(
                        name=t.name,
                        status=t.status,
                        shapes=tuple(shape(f.message) for f in t.failures),
                        metric=self._metric(t.metrics),
                    )
                    for t in a.results
                ),
                timed_out=a.timed_out,
                env_error=a.env_error if a.environment_failed else None,
                hang=a.hang.key if a.hang is not None and a.hang.hung else None,
            )
            for a in rec.attempts
        )
        run_s = sum(a.seconds for a in rec.attempts) / len(rec.attempts) if rec.attempts else None
        return replace(base, attempts=attempts, run_s=run_s)

    def _metric(self, metrics: Metrics) -> float | None:
        """The policy's metric, worst over the test's tensors (lowest when higher is better)."""
        m = self.policy.metric
        if m is None:
            return None
        vals = [v[m] for v in metrics.values() if m in v]
        if not vals:
            return None
        if any(v != v for v in vals):
            return float("nan")
        return min(vals) if self.policy.higher_is_better else max(vals)


def job_specs(req: BisectRequest, spec: TtMetalSpec) -> list[TtMetalSpec]:
    """One backend spec per job: its own Docker engine (context) and its own device."""
    jobs, contexts, devices = req.jobs, req.contexts, req.devices
    if not devices and not contexts and jobs > 1 and spec.runner == "docker":
        from lnrepro.run.runners.docker import host_devices

        found = host_devices()[0]
        if 0 < len(found) < jobs:
            raise UsageError(
                f"--jobs {jobs} needs {jobs} devices; this host has {len(found)}",
                f"use --jobs {len(found)}, or add hosts with --docker-context",
            )
        devices = found[:jobs] if found else ()
    return [
        msgspec.structs.replace(
            spec,
            docker_context=contexts[i % len(contexts)] if contexts else spec.docker_context,
            devices=(devices[i],) if devices else spec.devices,
        )
        for i in range(jobs)
    ]


def oracles_for(req: BisectRequest, record_dir: Path) -> list[Oracle]:
    """The oracle of each job, from the request alone (so ``--resume`` rebuilds them exactly)."""
    o = req.oracle
    if isinstance(o, CommandOracleSpec):
        return [CommandOracle(o)] * req.jobs
    assert isinstance(o, RunOracleSpec)
    specs: list[TtMetalSpec | PythonSpec] = (
        [o.backend] * req.jobs
        if isinstance(o.backend, PythonSpec)
        else list(job_specs(req, o.backend))
    )
    return [
        RunOracle(RunRequest(backend=spec, tests=o.tests, record_dir=record_dir), req.policy)
        for spec in specs
    ]
