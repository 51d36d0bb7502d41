"""The real bisect loop (:class:`lnrepro.bisect.loop.Bisect`) in process: a scripted workspace
(no git) and scripted evidence (no process), as mozregression's tests drive its Bisector. Each
test asserts the commits tried, in order, and the answer."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from lnrepro.bisect import loop
from lnrepro.bisect.core import Graph, Mark
from lnrepro.bisect.oracle import Oracle
from lnrepro.bisect.workspace import Prep, Prepared
from lnrepro.errors import EndpointsDoNotSeparate
from lnrepro.model.bisect import (
    AttemptObs,
    BisectRecord,
    BisectResult,
    BisectState,
    CommitInfo,
    Evidence,
    RunOutcome,
    TestObs,
)
from lnrepro.model.events import BisectEvents, Events
from lnrepro.model.requests import BisectRequest, CommandOracleSpec, OnHang, Policy
from tests.bisect.test_core import linear

Script = Callable[[str, int], AttemptObs]  # (commit, how many runs it had before) -> a run


@dataclass
class ScriptedWorkspace:
    """A tree per commit without git: ``broken`` commits cannot be prepared (a pick that does
    not apply); every save is counted."""

    broken: dict[str, str] = field(default_factory=dict)
    prepared: list[str] = field(default_factory=list)
    saves: list[int] = field(default_factory=list)

    def open(self, jobs: int) -> None: ...

    def prepare(self, job: int, sha: str) -> Prepared:
        self.prepared.append(sha)
        return Prepared(Path("/scripted") / sha, Prep(0.001, 0.001, None), self.broken.get(sha))

    def describe(self, sha: str) -> CommitInfo:
        return CommitInfo(sha, f"subject of {sha}")

    def save(self, record: BisectRecord) -> None:
        self.saves.append(len(record.steps))


@dataclass
class ScriptedOracle:
    """Evidence from a script: the commit is the tree's name; ``unbuildable`` commits build to
    nothing (cannot test)."""

    script: Script
    unbuildable: frozenset[str] = frozenset()
    tried: list[str] = field(default_factory=list)

    def evaluate(
        self,
        worktree: Path,
        events: Events | None = None,
        runs: int | None = None,
        known: object = None,
        prebuilt: Path | None = None,
    ) -> Evidence:
        sha = worktree.name
        before = self.tried.count(sha)
        self.tried.append(sha)
        if sha in self.unbuildable:
            return Evidence(cannot_test="the build failed", seconds=0.01, build_s=0.01)
        attempts = tuple(self.script(sha, before + i) for i in range(runs or 1))
        return Evidence(attempts, seconds=0.01, build_s=0.01, run_s=0.01)


class Steps(BisectEvents):
    def __init__(self) -> None:
        self.marks: list[tuple[str, str, str]] = []

    def step_finished(
        self, kind: str, info: CommitInfo, mark: str, reason: str, seconds: float
    ) -> None:
        self.marks.append((kind, info.sha, mark))


def exits(bad: Callable[[str], bool]) -> Script:
    """``git bisect run``'s protocol: exit 1 on a bad commit, 0 on a good one."""
    return lambda sha, n: AttemptObs(1 if bad(sha) else 0, gtest=False)


def bisect(
    graph: Graph,
    script: Script,
    *,
    good: str,
    bad: str,
    ws: ScriptedWorkspace | None = None,
    unbuildable: frozenset[str] = frozenset(),
    **options: object,
) -> tuple[BisectResult, ScriptedOracle, Steps, ScriptedWorkspace]:
    req = BisectRequest(
        repo=Path("/scripted"),
        good=(good,),
        bad=bad,
        oracle=CommandOracleSpec(argv=("test",)),
        **options,
    )  # type: ignore[arg-type]
    tip, bottoms = loop.ends(req)
    rng = loop.Range(graph, tip, bottoms, [], req.bad)
    oracle, ws, events = ScriptedOracle(script, unbuildable), ws or ScriptedWorkspace(), Steps()
    oracles: list[Oracle] = [oracle]
    b = loop.build(BisectRecord(req), oracles, ws, rng)
    result = b.run(events)
    assert b.record.state is BisectState.COMPLETE
    n = len(b.record.steps)
    assert ws.saves == [*range(1, n + 1), n]  # after every step, and with the answer
    return result, oracle, events, ws


def index(sha: str) -> int:
    return int(sha[1:])


def test_a_deterministic_culprit_on_a_linear_history() -> None:
    r, oracle, events, _ = bisect(linear(16), exits(lambda c: index(c) >= 9), good="c0", bad="c15")
    assert r.first_bad == "c9" and r.last_good == "c8" and r.confirmed is True
    assert r.commit == CommitInfo("c9", "subject of c9")
    # the endpoints, git's midpoints, then the culprit's neighbours re-tested
    assert oracle.tried[:6] == ["c15", "c0", "c7", "c11", "c9", "c8"]
    assert [m for _, _, m in events.marks][:6] == ["bad", "good", "good", "bad", "bad", "good"]
    assert r.steps == 4 and r.endpoint_checks == 2


def merged() -> Graph:
    """c0-c1-c2-c3--m4-c5-c6 with a side branch b1-b2-b3 from c1 merged at m4."""
    order = ("c0", "c1", "c2", "b1", "b2", "c3", "b3", "m4", "c5", "c6")
    parents = {
        "c0": (),
        "c1": ("c0",),
        "c2": ("c1",),
        "b1": ("c1",),
        "b2": ("b1",),
        "c3": ("c2",),
        "b3": ("b2",),
        "m4": ("c3", "b3"),
        "c5": ("m4",),
        "c6": ("c5",),
    }
    return Graph(order, parents)


def test_a_deterministic_culprit_on_a_side_branch_of_a_merged_history() -> None:
    g = merged()
    buggy = {"b2", "b3", "m4", "c5", "c6"}  # the culprit b2 and everything that contains it
    r, oracle, _, _ = bisect(g, exits(lambda c: c in buggy), good="c0", bad="c6")
    assert r.first_bad == "b2" and r.last_good == "b1"
    # 9 candidates: b3 splits them best (4 of them are its ancestors), then b1 of the 4 left,
    # then b2; the culprit and its parent are confirmed
    assert oracle.tried == ["c6", "c0", "b3", "b1", "b2", "b2", "b1"]
    assert r.confirmed is True and r.steps == 3


def test_unbuildable_commits_are_skipped_and_never_tried_again() -> None:
    ws = ScriptedWorkspace(broken={"c11": "the pick does not apply"})
    r, oracle, events, _ = bisect(
        linear(16),
        exits(lambda c: index(c) >= 9),
        good="c0",
        bad="c15",
        ws=ws,
        unbuildable=frozenset({"c7"}),
    )
    assert r.first_bad == "c9"
    skipped = [sha for _, sha, m in events.marks if m == "skip"]
    assert skipped == ["c7", "c11"]
    # c7 does not build: its neighbour c8 instead; c11's pick does not apply: c12 instead
    assert ws.prepared == ["c15", "c0", "c7", "c8", "c11", "c12", "c10", "c9", "c9", "c8"]
    assert oracle.tried == [c for c in ws.prepared if c != "c11"]  # not prepared: not run


def test_skips_hiding_the_culprit_leave_the_candidates() -> None:
    r, oracle, _, _ = bisect(
        linear(10),
        exits(lambda c: index(c) >= 5),
        good="c0",
        bad="c9",
        unbuildable=frozenset({"c4", "c5"}),
    )
    assert r.first_bad is None
    assert oracle.tried == ["c9", "c0", "c4", "c5", "c3", "c6"]
    # as git: the skipped commits and the first bad one after them, any of which may be first
    assert [c.sha for c in r.candidates] == ["c4", "c5", "c6"] and r.reason


def test_a_flaky_culprit_with_confidence() -> None:
    rnd = random.Random(1)
    flaky = {"c": 0}

    def script(sha: str, n: int) -> AttemptObs:
        fails = index(sha) >= 9 and rnd.random() < 0.7
        flaky["c"] += index(sha) >= 9 and not fails
        return AttemptObs(1 if fails else 0, gtest=False)

    r, oracle, _, _ = bisect(linear(16), script, good="c0", bad="c15", confidence=0.95)
    assert r.search == "bayesian" and r.first_bad == "c9"
    assert r.confidence is not None and r.confidence >= 0.95
    assert flaky["c"] > 0, "seeded: a buggy commit passed at least once"
    assert len(oracle.tried) > 11  # a pass at a buggy commit cost more runs than a clean search


def test_find_fix_flips_good_and_bad() -> None:
    # c0 has the bug, c15 has it fixed: the fix is c10; a passing run is the search's "bad"
    r, oracle, events, _ = bisect(
        linear(16), exits(lambda c: index(c) < 10), good="c15", bad="c0", find_fix=True
    )
    assert r.first_bad == "c10" and r.kind == "first fixed commit" and r.last_good == "c9"
    # c7 fails: buggy, the search's "good"; c11 passes: fixed, its "bad"
    assert oracle.tried == ["c15", "c0", "c7", "c11", "c9", "c10", "c10", "c9"]
    # the fixed commits are marked "bad" for the search, the buggy ones "good"
    assert all((m == "bad") == (index(sha) >= 10) for _, sha, m in events.marks if m != "skip")


BUG = "CONSUMER_STARVED:layernorm_fused_rm.cpp:TRISC0:CWFW"
ELSEWHERE = "CONSUMER_STARVED:writer_binary.cpp:BRISC:CWFW"
REPRO = "LayerNormBackwardOpTest.BugRepro_Deterministic_2048Features"


def hung_at(key: str) -> AttemptObs:
    return AttemptObs(1, (TestObs(REPRO, "TIMEOUT"),), timed_out=True, hang=key)


def test_the_bugs_hang_place_is_the_signature_and_hangs_elsewhere_are_noise() -> None:
    """c6 on hangs at the bug's place; c0..c5 pass, except that c5 first hangs elsewhere (a
    flaky device), and so does the bad endpoint's first run."""

    def script(sha: str, n: int) -> AttemptObs:
        if sha in ("c5", "c11") and n == 0:
            return hung_at(ELSEWHERE)
        return hung_at(BUG) if index(sha) >= 6 else AttemptObs(0, (TestObs(REPRO, "PASSED"),))

    req = BisectRequest(
        repo=Path("/scripted"),
        good=("c0",),
        bad="c11",
        oracle=CommandOracleSpec(argv=("test",)),
        policy=Policy(on_hang=OnHang.BAD),
    )
    oracle = ScriptedOracle(script)
    b = loop.build(
        BisectRecord(req),
        [oracle],
        ScriptedWorkspace(),
        loop.Range(linear(12), "c11", ["c0"], [], "c11"),
    )
    r = b.run(Steps())
    assert r.first_bad == "c6"
    assert r.signature is not None and r.signature.hang and r.signature.hang_key == BUG
    # the endpoint ran until two hangs agreed on the place: elsewhere, then twice at the bug's
    # c5's hang elsewhere is noise: it runs again and passes
    assert oracle.tried == ["c11", "c11", "c11", "c0", "c5", "c5", "c8", "c6", "c6", "c5"]
    assert [s.mark for s in b.record.steps][:3] == [Mark.SKIP, Mark.SKIP, Mark.BAD]
    first_c5 = next(s for s in b.record.steps if s.action.sha == "c5")
    (outcome, why), *_ = first_c5.outcomes
    assert outcome is RunOutcome.NOISE and "elsewhere" in why and ELSEWHERE in why
    assert first_c5.mark is not Mark.BAD


def test_endpoints_that_do_not_separate_stop_with_the_record() -> None:
    req = BisectRequest(
        repo=Path("/scripted"), good=("c0",), bad="c7", oracle=CommandOracleSpec(argv=("test",))
    )
    ws = ScriptedWorkspace()
    b = loop.build(
        BisectRecord(req),
        [ScriptedOracle(exits(lambda c: False))],
        ws,
        loop.Range(linear(8), "c7", ["c0"], [], "c7"),
    )
    with pytest.raises(EndpointsDoNotSeparate) as exc:
        b.run(Steps())
    assert exc.value.record is b.record and b.record.state is BisectState.COMPLETE
    assert [s.action.sha for s in b.record.steps] == ["c7"]  # the bad endpoint passed: stop


def test_two_jobs_in_process_share_the_search() -> None:
    req = BisectRequest(
        repo=Path("/scripted"),
        good=("c0",),
        bad="c31",
        oracle=CommandOracleSpec(argv=("test",)),
        jobs=2,
    )
    oracle = ScriptedOracle(exits(lambda c: index(c) >= 20))
    b = loop.build(
        BisectRecord(req),
        [oracle, oracle],
        ScriptedWorkspace(),
        loop.Range(linear(32), "c31", ["c0"], [], "c31"),
    )
    r = b.run(Steps())
    assert r.first_bad == "c20"
    assert {s.action.job for s in b.record.steps} == {0, 1}
