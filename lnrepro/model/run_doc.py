"""``lnrepro.run/5`` as it is written: what :class:`~lnrepro.model.record.RunRecord` and
:class:`~lnrepro.model.record.Attempt` write, defined once with their constraints (msgspec
``Meta``), read and validated by :func:`lnrepro.model.codec.decode`, and the source of
docs/schemas/run.json (``scripts/schemas.py``). Loaded only when a run record is read or
written: ``lnrepro --help`` and ``run --help`` load no msgspec.

What a record derives (an attempt's process entry and ``environment_failed``; the run's
tallies, verdict, why, rerun) is written for readers and derived again on reading. A key an
older record lacks takes its default here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Literal

import msgspec

from lnrepro.model.gtest import Failure, TestResult
from lnrepro.model.hang import Diagnosis
from lnrepro.model.jsonio import JSON
from lnrepro.model.record import SCHEMA, BuildResult, RunState, TestAggregate, Verdict
from lnrepro.model.requests import RunRequest

Count = Annotated[int, msgspec.Meta(ge=0)]
Positive = Annotated[int, msgspec.Meta(ge=1)]
Seconds = Annotated[float, msgspec.Meta(ge=0)]


@dataclass(frozen=True, kw_only=True)
class AttemptDoc:
    """An attempt as ``lnrepro.run/5`` writes it: its tests with the process's own entry, and
    whether the environment ended it (derived). Absent keys take today's defaults (older
    records)."""

    index: Positive
    argv: tuple[str, ...]
    exit_code: int
    timed_out: bool = False
    seconds: Seconds = 0.0
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
