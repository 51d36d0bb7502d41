"""The bisect loop's seams, scripted: a workspace without git, an oracle without processes.

:class:`~lnrepro.bisect.loop.Bisect` is driven in process as mozregression's tests drive its
Bisector: :func:`start` builds the real loop over a made-up (or git-read) :class:`Range` with a
:class:`ScriptedWorkspace` and one :class:`ScriptedOracle` per job; a test asserts the commits
tried, in order, the marks and the answer.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lnrepro.bisect import loop, state
from lnrepro.bisect.core import Graph
from lnrepro.bisect.evidence import Sense
from lnrepro.bisect.oracle import Oracle
from lnrepro.bisect.workspace import Prep, Prepared
from lnrepro.doors.fsio import write_json
from lnrepro.errors import EngineLost
from lnrepro.model.bisect import (
    AttemptObs,
    BisectRecord,
    BisectResult,
    BisectState,
    CommitInfo,
    Evidence,
)
from lnrepro.model.events import BisectEvents, Events
from lnrepro.model.requests import BisectRequest, CommandOracleSpec

Script = Callable[[str, int], AttemptObs]  # (commit, how many runs it had before) -> a run


@dataclass
class ScriptedWorkspace:
    """A tree per commit without git: ``broken`` commits cannot be prepared (a pick that does
    not apply); every save is counted, and written to ``saved`` (as the state file is) when
    given, so a test can resume from it."""

    broken: dict[str, str] = field(default_factory=dict)
    saved: Path | None = None
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
        if self.saved is not None:
            write_json(self.saved, record.to_json())

    def load(self) -> BisectRecord:
        """The record as ``--resume`` reads it back."""
        assert self.saved is not None
        return state.read(self.saved)


@dataclass
class ScriptedOracle:
    """Evidence from a script: the commit is the tree's name; ``unbuildable`` commits build to
    nothing (cannot test). ``interrupt_at``: Ctrl-C when that many commits have been tried;
    ``lost_at``: that try's engine goes away (a card host down)."""

    script: Script
    unbuildable: frozenset[str] = frozenset()
    interrupt_at: int | None = None
    lost_at: int | None = None
    tried: list[str] = field(default_factory=list)

    def evaluate(
        self,
        worktree: Path,
        events: Events | None = None,
        runs: int | None = None,
        known: Mapping[str, str] | None = None,
        prebuilt: Path | None = None,
    ) -> Evidence:
        if len(self.tried) == self.interrupt_at:
            raise KeyboardInterrupt
        sha = worktree.name
        if len(self.tried) == self.lost_at:
            self.tried.append(sha)
            raise EngineLost("the Docker engine of job 1 stopped answering", "bring it back")
        before = self.tried.count(sha)
        self.tried.append(sha)
        if sha in self.unbuildable:
            return Evidence(cannot_test="the build failed", seconds=0.01, build_s=0.01)
        attempts = tuple(self.script(sha, before + i) for i in range(runs or 1))
        return Evidence(attempts, seconds=0.01, build_s=0.01, run_s=0.01)


class Steps(BisectEvents):
    """The events, as (kind, commit, mark) of every finished step."""

    def __init__(self) -> None:
        self.marks: list[tuple[str, str, str]] = []

    def step_finished(
        self, kind: str, info: CommitInfo, mark: str, reason: str, seconds: float
    ) -> None:
        self.marks.append((kind, info.sha, mark))


def exits(bad: Callable[[str], bool]) -> Script:
    """``git bisect run``'s protocol: exit 1 on a bad commit, 0 on a good one."""
    return lambda sha, n: AttemptObs(1 if bad(sha) else 0, gtest=False)


def request(
    good: str | Sequence[str], bad: str, repo: Path = Path("/scripted"), **options: Any
) -> BisectRequest:
    """A bisect of ``repo`` (a made-up one by default: only the loop reads it), by
    ``--command`` unless ``options`` give another oracle."""
    goods = (good,) if isinstance(good, str) else tuple(good)
    options.setdefault("oracle", CommandOracleSpec(argv=("test",)))
    return BisectRequest(repo=repo, good=goods, bad=bad, **options)


def made_up(graph: Graph, req: BisectRequest, merge_bases: Sequence[str] = ()) -> loop.Range:
    """The range of ``req`` over a made-up graph, as :func:`loop.commit_range` reads git's."""
    tip, bottoms = Sense.of(req).ends(req.good, req.bad)
    return loop.Range(graph, tip, [*bottoms, *merge_bases], list(merge_bases))


@dataclass
class Run:
    """A scripted bisect: the real loop, its oracles (one per job), workspace and events."""

    bisect: loop.Bisect
    oracles: list[ScriptedOracle]
    ws: ScriptedWorkspace
    events: Steps = field(default_factory=Steps)

    @property
    def oracle(self) -> ScriptedOracle:
        return self.oracles[0]

    @property
    def record(self) -> BisectRecord:
        return self.bisect.record

    def run(self) -> BisectResult:
        result = self.bisect.run(self.events)
        assert self.record.state is BisectState.COMPLETE
        n, k = len(self.record.steps), len(self.ws.saves) - 1
        assert self.ws.saves == [*range(n - k + 1, n + 1), n]  # every new step, and the answer
        return result


def start(
    rng: loop.Range,
    req: BisectRequest | BisectRecord,
    *oracles: ScriptedOracle,
    ws: ScriptedWorkspace | None = None,
) -> Run:
    """The real loop over ``rng``: a new bisect of ``req``, or a saved record resumed (its
    steps replayed, nothing run)."""
    record = req if isinstance(req, BisectRecord) else BisectRecord(req)
    ws = ws or ScriptedWorkspace()
    jobs: list[Oracle] = list(oracles)
    b = loop.build(record, jobs, ws, rng)
    b.replay(record.steps)
    return Run(b, list(oracles), ws)


def bisect(
    graph: Graph,
    script: Script,
    *,
    good: str,
    bad: str,
    ws: ScriptedWorkspace | None = None,
    unbuildable: frozenset[str] = frozenset(),
    **options: Any,
) -> Run:
    """One scripted bisect run to its answer (``run.bisect.record.result``)."""
    req = request(good, bad, **options)
    run = start(made_up(graph, req), req, ScriptedOracle(script, unbuildable), ws=ws)
    run.run()
    return run


def index(sha: str) -> int:
    return int(sha[1:])


def git(repo: str | Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout


def release_history(repo: Path, branch_at: int, fix_on_branch: bool) -> dict[str, str]:
    """main c0..c9 with the bug from c5 on; a release branch r0, r1 from c<branch_at>, tagged
    v1 (with the bug fixed in r0 when ``fix_on_branch``). Commit name -> sha."""
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    shas: dict[str, str] = {}

    def commit(name: str) -> None:
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", name)
        shas[name] = git(repo, "rev-parse", "HEAD").strip()

    for i in range(10):
        (repo / "bug").write_text("1\n" if i >= 5 else "0\n")
        (repo / "n").write_text(f"{i}\n")
        commit(f"c{i}")
    git(repo, "checkout", "-q", "-b", "release", shas[f"c{branch_at}"])
    for j in range(2):
        if fix_on_branch and j == 0:
            (repo / "bug").write_text("0\n")
        (repo / "r").write_text(f"{j}\n")
        commit(f"r{j}")
    git(repo, "tag", "v1")
    git(repo, "checkout", "-q", "main")
    return shas
