"""A tt-metal checkout as shrink's evaluator: the probe (:mod:`.probe`) patched onto it and built
once by the run pipeline's backend (its profile, its runner), then each candidate one run of
``ttml_tests --gtest_filter=LnreproShrinkProbe.LayerNormBackward`` with the case in the
environment — no rebuild per candidate. The control stays the emulator's correct kernel.

The probe file stays in the checkout (untracked) so that the rerun lines work; the record says
where it is.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lnrepro.doors.proc import ProcResult
from lnrepro.errors import BuildFailed, EnvironmentProblem
from lnrepro.model.case import ARGS_ENV, CASE_ENV, Case, env_prefixed
from lnrepro.model.events import Events
from lnrepro.run.backends import Backend, Call
from lnrepro.shrink import probe
from lnrepro.shrink.core import Outcome, RunVerdict

_MARGIN = re.compile(re.escape(probe.MARGIN_LINE) + r"(\S+)")


def read_margin(text: str) -> float | None:
    """The margin a probe printed (``lnrepro-probe: margin=<m>``, the gtest probe's and the pytest
    probe's alike): None when it printed none or no number; a NaN margin is infinitely far out."""
    m = _MARGIN.search(text)
    if m is None:
        return None
    try:
        value = float(m.group(1))
    except ValueError:
        return None
    return math.inf if math.isnan(value) else value


@dataclass
class CheckoutProbe:
    backend: Backend
    record_dir: Path
    timeout_s: float
    name: str = "checkout"
    deterministic: bool = False  # a card: every repeat is run
    runs: int = 0
    model_why: Callable[[Case, Case], str | None] | None = None  # the emulator's reading

    def argv(self) -> list[str]:
        return [*self.backend.program(1), f"--gtest_filter={probe.FILTER}"]

    def evaluate(self, case: Case, draw: int) -> Outcome:
        self.runs += 1
        env = {CASE_ENV: case.env_value(), ARGS_ENV: case.args_value()}
        res, text = run_probe(
            self.backend, self.argv(), self.record_dir, self.runs, self.timeout_s, env
        )
        lines = [ln for ln in text.splitlines() if " FAILED: max_diff=" in ln]
        return judge(
            res,
            read_margin(text),
            "; ".join(lines[:3]),
            missing=(
                f"the probe {probe.FILTER} did not report in {self.argv()[0]} (exit {res.exit_code})",
                f"check that {probe.PATH} builds into ttml_tests; its output is in {self.record_dir}",
            ),
        )

    def rerun(self, case: Case) -> list[str]:
        return env_prefixed(case, self.argv(), args=True)

    def why(self, smaller: Case, result: Case) -> str | None:
        """What the emulator's model of the factory says (the checkout's own may differ)."""
        text = self.model_why(smaller, result) if self.model_why else None
        return f"{text} (by the emulator's model of the factory)" if text else None


def run_probe(
    backend: Backend,
    argv: list[str],
    record_dir: Path,
    attempt: int,
    timeout_s: float,
    env: dict[str, str],
) -> tuple[ProcResult, str]:
    """One run of a probe (gtest or pytest) where the tests run: its result and its output."""
    out: list[bytes] = []
    res = backend.execute(
        Call(
            argv=argv,
            record_dir=record_dir,
            attempt=attempt,
            on_output=out.append,
            timeout=timeout_s,
            extra_env=env,
        )
    )
    return res, b"".join(out).decode("utf-8", "replace")


def judge(
    res: ProcResult, margin: float | None, detail: str, *, missing: tuple[str, str]
) -> Outcome:
    """A probe's run (gtest or pytest) as a verdict: a timeout or an exit other than 0 and 1
    skips; ``margin`` is what the probe printed; a probe that printed none is an environment
    problem (``missing``: its message and fix), never a verdict."""
    if res.timed_out:
        return Outcome(RunVerdict.SKIP, None, "timed out")
    if margin is None:
        raise EnvironmentProblem(*missing)
    if res.exit_code not in (0, 1):
        return Outcome(RunVerdict.SKIP, margin, f"exit {res.exit_code}")
    return Outcome(RunVerdict.PASS if res.exit_code == 0 else RunVerdict.FAIL, margin, detail)


def patch_and_build(
    backend: Backend,
    checkout: Path,
    probe_file: tuple[str, str],
    record_dir: Path,
    events: Events,
    *,
    tests: str,
    building: str,
) -> Path:
    """A probe (``probe_file``: its path in the checkout and its text; a gtest's, or a pytest's,
    which needs the build too: ttnn's C++ is what the test imports) written into ``checkout``,
    and the checkout built once; the probe's path. ``tests``: whose tests the checkout must
    hold; ``building``: what a failed build says was built."""
    from lnrepro.doors.fsio import write_text

    path = checkout / probe_file[0]
    if not path.parent.is_dir():
        raise EnvironmentProblem(
            f"{checkout} has no {path.parent.relative_to(checkout)}",
            f"pass the root of a tt-metal checkout with {tests}",
        )
    write_text(path, probe_file[1])
    built = backend.build(record_dir, events)
    if built is not None and not built.ok:
        raise BuildFailed(
            f"building {building} failed" + (f": {built.reason}" if built.reason else ""),
            f"see {record_dir / built.log}",
        )
    return path
