"""Oracles: what a commit's test says, as a :class:`~lnrepro.bisect.core.Mark` and its evidence.

``CommandOracle`` follows ``git bisect run``: exit 0 good, 125 skip, 1–127 bad. A command killed
by a signal (exit ≥ 128) or by the timeout is not an abort here: ``on_crash`` / ``on_hang``
decide (bad or skip), and the record says which happened.

``RunOracle`` asks the pipeline (``lnrepro run``) on the worktree: PASS good, FAIL and FLAKY bad,
CRASH / HANG by the same policy, and everything that says nothing about the kernel — BUILD_FAILED,
ENV_ERROR, NOT_RUN — skip. With ``metric``/``threshold`` the verdict is the metric instead: bad
when the selected tests' worst value exceeds the threshold.
"""

from __future__ import annotations

import shlex
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from lnrepro import proc
from lnrepro.bisect.core import Mark
from lnrepro.errors import OutcomeError
from lnrepro.events import Events


@dataclass(frozen=True)
class Evidence:
    mark: Mark
    reason: str
    detail: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "mark": self.mark.value,
            "reason": self.reason,
            "seconds": round(self.seconds, 3),
            **self.detail,
        }


class Oracle(Protocol):
    def describe(self) -> dict[str, Any]: ...
    def evaluate(self, worktree: Path, events: Events | None = None) -> Evidence: ...


def _policy(name: str) -> Mark:
    return Mark.BAD if name == "bad" else Mark.SKIP


@dataclass(frozen=True)
class CommandOracle:
    argv: tuple[str, ...]
    timeout_s: float | None = None
    on_crash: str = "bad"
    on_hang: str = "skip"

    def describe(self) -> dict[str, Any]:
        return {"oracle": "command", "command": shlex.join(self.argv), "timeout_s": self.timeout_s,
                "on_crash": self.on_crash, "on_hang": self.on_hang}  # fmt: skip

    def evaluate(self, worktree: Path, events: Events | None = None) -> Evidence:
        tail: list[bytes] = []

        def keep(data: bytes) -> None:
            tail.append(data)
            del tail[:-16]

        res = proc.stream(list(self.argv), keep, timeout=self.timeout_s, cwd=worktree)
        out = b"".join(tail).decode("utf-8", "replace").strip().splitlines()[-5:]
        detail = {"exit_code": res.exit_code, "output_tail": out}
        if res.timed_out:
            return Evidence(
                _policy(self.on_hang), f"timed out after {self.timeout_s:g} s", detail, res.seconds
            )
        code = res.exit_code
        if code == 0:
            return Evidence(Mark.GOOD, "exit 0", detail, res.seconds)
        if code == 125:
            return Evidence(Mark.SKIP, "exit 125 (cannot test)", detail, res.seconds)
        if code >= 128:
            return Evidence(
                _policy(self.on_crash), f"killed by signal {code - 128}", detail, res.seconds
            )
        return Evidence(Mark.BAD, f"exit {code}", detail, res.seconds)


@dataclass(frozen=True)
class RunOracle:
    """``lnrepro run`` on the worktree, with the backend options the user gave."""

    backend_opts: Any  # BackendOptions; tt_metal is set to the worktree
    gtest_filter: str
    repeat: int
    timeout_s: float
    record_base: Path
    metric: str | None = None
    threshold: float | None = None
    on_crash: str = "bad"
    on_hang: str = "skip"

    def describe(self) -> dict[str, Any]:
        return {"oracle": "run", "filter": self.gtest_filter, "repeat": self.repeat,
                "timeout_s": self.timeout_s, "metric": self.metric, "threshold": self.threshold,
                "on_crash": self.on_crash, "on_hang": self.on_hang,
                "runner": self.backend_opts.runner, "profile": self.backend_opts.profile}  # fmt: skip

    def evaluate(self, worktree: Path, events: Events | None = None) -> Evidence:
        from lnrepro.backends.factory import make_backend
        from lnrepro.pipeline import run_tests
        from lnrepro.record import Verdict

        start = time.monotonic()
        backend = make_backend(replace(self.backend_opts, tt_metal=worktree, backend="tt-metal"))
        try:
            rec = run_tests(backend, gtest_filter=self.gtest_filter, repeat=self.repeat,
                            timeout_s=self.timeout_s, record_base=self.record_base,
                            events=events)  # fmt: skip
        except OutcomeError as exc:
            return Evidence(
                Mark.SKIP, exc.one_line(), {"verdict": type(exc).__name__}, time.monotonic() - start
            )
        v = rec.verdict
        detail: dict[str, Any] = {
            "verdict": v.value,
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
        secs = time.monotonic() - start
        if not v.about_the_kernel:
            return Evidence(Mark.SKIP, v.value, detail, secs)
        if v is Verdict.CRASH:
            return Evidence(_policy(self.on_crash), "CRASH", detail, secs)
        if v is Verdict.HANG:
            return Evidence(_policy(self.on_hang), "HANG", detail, secs)
        if self.metric is not None and self.threshold is not None:
            worst = max(
                (
                    vals[self.metric]
                    for t in rec.tests
                    for vals in t.worst.values()
                    if self.metric in vals
                ),
                default=None,
            )
            if worst is None:
                return Evidence(Mark.SKIP, f"no {self.metric} was printed", detail, secs)
            mark = Mark.BAD if worst > self.threshold else Mark.GOOD
            return Evidence(
                mark, f"{self.metric}={worst:g} vs threshold {self.threshold:g}", detail, secs
            )
        return Evidence(Mark.GOOD if v is Verdict.PASS else Mark.BAD, v.value, detail, secs)
