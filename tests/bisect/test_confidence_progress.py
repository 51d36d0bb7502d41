"""A ``--confidence`` bisect's progress says what the search knows: the leading commit's
posterior against the stop, and the runs expected to reach it; not git's candidates and steps,
which rise and fall with noise ("21 left, ~4 steps" after 29 runs tells a person nothing)."""

from __future__ import annotations

import io
import random
import re

from rich.console import Console

from lnrepro.model.bisect import ActionKind, AttemptObs, CommitInfo
from lnrepro.present.console.progress import RichBisectEvents
from tests.bisect.scripted import ScriptedOracle, Steps, index, made_up, request, start
from tests.bisect.test_core import linear

LEADING = re.compile(r"leading (c\d+) at P=(0\.\d\d|1\.00) \(stops at 0\.95\), ~(\d+) runs? to go")


class Said(Steps):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []
        self.out = io.StringIO()
        self.rich = RichBisectEvents(Console(file=self.out, width=80, force_terminal=False))

    def started(self, candidates: int, steps_left: int, note: str = "") -> None:
        self.rich.started(candidates, steps_left, note)

    def step_started(
        self, kind: ActionKind, info: CommitInfo, candidates: int, steps_left: int, note: str = ""
    ) -> None:
        self.rich.step_started(kind, info, candidates, steps_left, note)


def test_the_progress_of_a_noisy_search_is_its_posterior_and_runs_to_go() -> None:
    rnd = random.Random(1)

    def script(sha: str, n: int) -> AttemptObs:
        fails = index(sha) >= 9 and rnd.random() < 0.7
        return AttemptObs(exit_code=1 if fails else 0, gtest=False)

    g = linear(16)
    req = request("c0", "c15", confidence=0.95)
    run = start(made_up(g, req), req, ScriptedOracle(script))
    said = Said()
    run.bisect.run(said)
    lines = [line for line in said.out.getvalue().splitlines() if line.startswith("  ")]
    steps = [line for line in lines if "step " in line and " -> " not in line]
    assert steps, said.out.getvalue()
    assert not any(re.search(r"\(\d+ left, ~\d+ steps\)", line) for line in lines), lines
    first = said.out.getvalue().splitlines()[0]
    assert first.startswith("bisecting: ") and "step(s)" not in first and "runs to go" in first
    found = [LEADING.search(line) for line in steps]
    assert all(found), steps
    ps = [float(m.group(2)) for m in found if m]
    assert max(ps) <= 0.95  # it goes on while the leader is under the stop (2 digits)
    assert found[-1] is not None and found[-1].group(1) == "c9"  # the culprit leads at the end
    assert int(found[-1].group(3)) <= int(found[0].group(3)) if found[0] else True


def test_a_plain_bisect_still_counts_candidates_and_steps() -> None:
    g = linear(16)
    req = request("c0", "c15")
    run = start(
        made_up(g, req),
        req,
        ScriptedOracle(
            lambda sha, n: AttemptObs(exit_code=1 if index(sha) >= 9 else 0, gtest=False)
        ),
    )
    said = Said()
    run.bisect.run(said)
    assert re.search(r"\(\d+ left, ~\d+ steps\)", said.out.getvalue())
