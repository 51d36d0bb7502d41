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

import os
import shutil
import tempfile
import time
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

import msgspec

from lnrepro.bisect.evidence import shape
from lnrepro.doors import proc
from lnrepro.errors import MalformedReport, UsageError
from lnrepro.model.bisect import AttemptObs, Evidence, StepTest, TestObs
from lnrepro.model.events import Events
from lnrepro.model.gtest import Metrics, TestResult
from lnrepro.model.record import RunRecord, Verdict
from lnrepro.model.requests import (
    CommandOracleSpec,
    Policy,
    PythonSpec,
    ResolvedBisect,
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


def command_env(reports: Path) -> dict[str, str]:
    """The environment of a ``--command`` run: the user's, with googletest's own
    ``GTEST_OUTPUT`` naming a directory (googletest 1.12.1 gtest.cc, ``UnitTestOptions::
    GetAbsolutePathToOutputFile``: a value ending in "/" is a directory, the file named after the
    program and made unique), so a gtest binary the command runs leaves its JSON report there,
    and its ``RecordProperty`` margins with it; and a pytest the command runs loads lnrepro's
    margin plugin (:mod:`lnrepro.numerics.plugin`, copied there as a module of its own, so the
    project's Python needs no lnrepro) through ``PYTEST_ADDOPTS``. What the user set is kept."""
    from lnrepro.numerics import plugin

    env = dict(os.environ)
    env.setdefault("GTEST_OUTPUT", f"json:{reports}/")
    shutil.copyfile(plugin.__file__, reports / f"{plugin.MODULE}.py")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(reports), env.get("PYTHONPATH")) if p)
    env["PYTEST_ADDOPTS"] = " ".join(
        p for p in (env.get("PYTEST_ADDOPTS"), f"-p {plugin.MODULE}") if p
    )
    env[plugin.ENV] = str(reports / "pytest-margins.jsonl")
    return env


def read_margins(reports: Path) -> dict[str, float]:
    """Every ``<test>/<tensor>`` (gtest) and ``<nodeid>/<file:line>`` (pytest) share of
    tolerance used that the reports in ``reports`` hold (the worst when a test ran more than
    once). A report that cannot be read gives none."""
    from lnrepro.gtest.reportfile import read_report
    from lnrepro.numerics import plugin

    out: dict[str, float] = plugin.read(reports / "pytest-margins.jsonl")
    for path in sorted(reports.glob("*.json")):
        try:
            report = read_report(path)
        except MalformedReport:
            continue
        for key, value in margins_of(report.tests).items():
            if key not in out or not value <= out[key]:
                out[key] = value
    return out


def margins_of(results: Iterable[TestResult]) -> dict[str, float]:
    """``<test>/<tensor>`` -> the share of its tolerance the test used there (``used``)."""
    return {
        f"{t.name}/{tensor}": float(v["used"])
        for t in results
        for tensor, v in t.metrics.items()
        if "used" in v
    }


@dataclass(frozen=True)
class CommandOracle:
    spec: CommandOracleSpec

    def evaluate(self, trial: Trial) -> Evidence:
        attempts: list[AttemptObs] = []
        tail: list[str] = []
        total = 0.0
        for _ in range(trial.runs or self.spec.repeat):
            chunks: deque[bytes] = deque(maxlen=16)
            with tempfile.TemporaryDirectory(prefix="lnrepro-gtest-") as reports:
                res = proc.stream(
                    list(self.spec.argv),
                    chunks.append,
                    timeout=self.spec.timeout_s,
                    cwd=trial.worktree,
                    env=command_env(Path(reports)),
                )
                margins = read_margins(Path(reports))
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
                AttemptObs(
                    exit_code=res.exit_code,
                    gtest=False,
                    timed_out=res.timed_out,
                    margins=margins,
                )
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
                margins=margins_of(a.results),
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


def job_specs(req: ResolvedBisect, spec: TtMetalSpec) -> list[TtMetalSpec]:
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


def oracles_for(req: ResolvedBisect, record_dir: Path) -> list[Oracle]:
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
