"""A bisect as data: marks, what one run showed, the steps taken, the answer, the saved state.

Records defined once (issue 39): each type here is a frozen, keyword-only dataclass with enums
for its closed sets; its JSON (both ways, checked on read) and the JSON Schema
docs/schemas/bisect.json are derived from it by :mod:`lnrepro.model.codec`. The search
(:mod:`lnrepro.bisect`) produces them, the store reads them back, the presenters draw them. The
state file and the record of a bisect are the same document, schema ``lnrepro.bisect/6``; it
holds the whole :class:`BisectRequest`, so ``--resume`` continues with every option of the
original command.

A new field: give it a default (older documents lack it and still read), then run
``python scripts/schemas.py`` and commit the schema it rewrites. Older schemas read through
:func:`upgrade`: ``/3`` and ``/4`` lack only keys that have defaults; ``/2`` is rebuilt by
:func:`upgrade_v2`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import Enum
from pathlib import Path
from typing import Annotated, ClassVar, Literal

import msgspec

from lnrepro.model import codec
from lnrepro.model.codec import Real
from lnrepro.model.gtest import TestStatus
from lnrepro.model.jsonio import JSON, Reader, member
from lnrepro.model.record import Verdict
from lnrepro.model.requests import Count, ResolvedBisect

SCHEMA: Literal["lnrepro.bisect/6"] = "lnrepro.bisect/6"
# Every schema a bisect was saved in; /2 held a plan and an oracle, not the request; /5 lacks
# the margins (issue 47: each attempt's ``margins``, the request's ``margin``, the result's
# ``margin`` and ``drifted``), which read as their defaults.
OLDER_SCHEMAS = ("lnrepro.bisect/2", "lnrepro.bisect/3", "lnrepro.bisect/4", "lnrepro.bisect/5")

Probability = Annotated[float, msgspec.Meta(ge=0.0, le=1.0)]
RealMetrics = dict[str, dict[str, Real]]  # tensor -> metric -> worst value (may be NaN, inf)


class Mark(str, Enum):
    GOOD = "good"
    BAD = "bad"
    SKIP = "skip"


class RunOutcome(str, Enum):
    """One run against the bug's signature (:mod:`lnrepro.bisect.evidence`)."""

    FAIL = "fail"
    PASS = "pass"
    NOISE = "noise"


class ActionKind(str, Enum):
    ENDPOINT = "endpoint"  # --good/--bad tested first
    MERGE_BASE = "merge-base"  # a --good that is not an ancestor of --bad: its merge base, as git
    STEP = "step"  # the search's own pick
    CONFIRM = "confirm"  # the culprit and its parents, re-tested


class BuildKind(str, Enum):
    NONE = "none"  # built in that worktree now
    REBUILD = "rebuild"  # built before (warm ccache)
    BUILD = "build"  # new
    PREBUILT = "prebuilt"  # an artifact, no build


class ResultKind(str, Enum):
    """What the bisect looked for (``--find-fix``: the fix)."""

    FIRST_BAD = "first bad commit"
    FIRST_FIXED = "first fixed commit"


class SearchKind(str, Enum):
    GIT = "git"  # git's halving, a fixed number of runs per commit
    BAYESIAN = "bayesian"  # --confidence: a posterior over the candidates


class BisectState(str, Enum):
    RUNNING = "running"
    COMPLETE = "complete"
    INTERRUPTED = "interrupted"
    ABORTED = "aborted"


@dataclass(frozen=True, kw_only=True)
class Action:
    job: Count = 0  # which worktree/device/engine runs it
    sha: str
    kind: ActionKind
    build: BuildKind = BuildKind.BUILD


@dataclass(frozen=True, kw_only=True)
class TestObs:
    """One test in one run, as the bisect needs it."""

    __test__ = False

    name: str
    status: TestStatus
    shapes: tuple[str, ...] = ()
    metric: Real | None = None  # the policy's metric, worst over the test's tensors


_NOT_FAILED = (TestStatus.PASSED, TestStatus.SKIPPED)


@dataclass(frozen=True, kw_only=True)
class AttemptObs:
    """One run: a gtest run (``tests``) or a ``--command`` (``exit_code`` only)."""

    exit_code: int
    gtest: bool = True
    timed_out: bool = False
    env_error: str | None = None
    cannot_test: str | None = None  # did not build, no tests matched: not a run at all
    crashed_after_tests: bool = False  # every test ended, then the process died (teardown)
    hang: str | None = None  # a hung run's diagnosis key (Diagnosis.key), from its watcher log
    # the tests that did not pass, for a reader of the JSON: derived from ``tests``, never given
    failed: tuple[str, ...] = field(default=(), init=False)
    tests: tuple[TestObs, ...] = ()
    # each compared quantity ("<test>/<tensor>") -> the share of its tolerance used (1: the
    # edge of failing), passing runs too: what --margin weighs (issue 47)
    margins: dict[str, Real] = field(default_factory=dict)

    def __post_init__(self) -> None:
        failed = tuple(t.name for t in self.tests if t.status not in _NOT_FAILED)
        object.__setattr__(self, "failed", failed)


@dataclass(frozen=True, kw_only=True)
class Signature:
    """How the bug shows: which tests fail, and in which shapes (or by crashing). ``tests`` and
    ``shapes`` are sets, kept sorted (their JSON stays the same from run to run)."""

    tests: tuple[str, ...] = ()
    shapes: tuple[str, ...] = ()
    crash: bool = False
    exit_code: int | None = None  # --command: the code the buggy commit exits with
    hang: bool = False  # the bug is a hang (--on-hang bad): its tests time out
    hang_key: str | None = None  # and the watcher log says where (Diagnosis.key)

    def __post_init__(self) -> None:
        object.__setattr__(self, "tests", tuple(sorted(set(self.tests))))
        object.__setattr__(self, "shapes", tuple(sorted(set(self.shapes))))


@dataclass(frozen=True, kw_only=True)
class CommitInfo:
    sha: str
    subject: str = ""
    author: str = ""
    date: str = ""
    pr: int | None = None


@dataclass(frozen=True, kw_only=True)
class StepTest:
    """One test over a step's run: its verdict, passes and worst metrics."""

    __test__ = False

    verdict: Verdict
    passed: Count = 0
    runs: Count = 0
    worst: RealMetrics = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Evidence:
    """What an oracle saw of one commit: every run, or why it could not test it. Times are kept
    to the millisecond."""

    seconds: float = 0.0
    build_s: float | None = None
    run_s: float | None = None  # mean seconds of one run
    cannot_test: str | None = None  # did not build, no tests, a pick did not apply
    inputs: str | None = None  # hash of everything the tests read
    same_as: str | None = None  # a commit already tested with the same inputs: its verdict
    verdict: Verdict | None = None  # the run's verdict (run oracle)
    record: str | None = None  # the run record's directory (run oracle)
    tests: dict[str, StepTest] = field(default_factory=dict)
    output_tail: tuple[str, ...] = ()  # --command: its last lines
    prebuilt: str | None = None  # the artifact used instead of a build
    prebuilt_failed: str | None = None  # an artifact that could not be used (then it was built)
    attempts: tuple[AttemptObs, ...] = ()

    _MS: ClassVar[tuple[str, ...]] = ("seconds", "build_s", "run_s")  # kept to the millisecond

    def __post_init__(self) -> None:
        for name in self._MS:
            if (v := getattr(self, name)) is not None:
                object.__setattr__(self, name, round(v, 3))


@dataclass(frozen=True, kw_only=True)
class Preparation:
    """The commit made ready in its worktree (checkout, picks, patches)."""

    subject: str = ""
    prepare_s: float = 0.0
    checkout_s: float = 0.0
    note: str | None = None


_EVIDENCE = tuple(f.name for f in fields(Evidence) if f.init)


@dataclass(frozen=True, kw_only=True)
class Step(Evidence, Preparation, Action):
    """One tested commit: what was done (its :class:`Action`), the worktree made ready, what the
    runs showed (its :class:`Evidence`), the mark, and why. One flat JSON object, as it always
    was: the action's and the evidence's fields are the step's own (:meth:`of` builds one from
    them; :attr:`action` and :attr:`evidence` give them back)."""

    outcomes: tuple[tuple[RunOutcome, str], ...] = ()
    mark: Mark
    reason: str = ""

    _MS = (*Evidence._MS, "prepare_s", "checkout_s")

    @classmethod
    def of(
        cls,
        action: Action,
        evidence: Evidence,
        *,
        subject: str,
        outcomes: tuple[tuple[RunOutcome, str], ...],
        mark: Mark,
        reason: str,
        prepare_s: float = 0.0,
        checkout_s: float = 0.0,
        note: str | None = None,
    ) -> Step:
        return cls(
            **vars(action),
            **vars(evidence),
            subject=subject,
            prepare_s=prepare_s,
            checkout_s=checkout_s,
            note=note,
            outcomes=outcomes,
            mark=mark,
            reason=reason,
        )

    @property
    def action(self) -> Action:
        return Action(job=self.job, sha=self.sha, kind=self.kind, build=self.build)

    @property
    def evidence(self) -> Evidence:
        return Evidence(**{n: getattr(self, n) for n in _EVIDENCE})


@dataclass(frozen=True, kw_only=True)
class Candidate:
    """One commit of the Bayesian posterior."""

    sha: str
    p: Probability
    subject: str = ""


@dataclass(frozen=True, kw_only=True)
class LearnedRates:
    """The fail rates a Bayesian search learned: of the buggy commits, of the clean ones."""

    bad: float
    good: float


@dataclass(frozen=True, kw_only=True)
class BisectResult:
    """The answer: a first bad (or fixed) commit with its evidence, candidates, or why not."""

    kind: ResultKind = ResultKind.FIRST_BAD
    search: SearchKind = SearchKind.GIT
    first_bad: str | None = None
    commit: CommitInfo | None = None
    last_good: str | None = None
    last_good_all: tuple[str, ...] = ()
    confirmed: bool | None = None  # git: the culprit and its parents re-tested consistently
    steps: Count = 0
    endpoint_checks: Count = 0
    signature: Signature | None = None
    candidates: tuple[CommitInfo, ...] = ()  # skips hide which of these is first
    reason: str | None = None  # why there is no first_bad
    error: str | None = None  # the endpoints do not separate
    # the Bayesian search
    most_likely: str | None = None
    confidence: float | None = None
    wanted_confidence: float | None = None
    posterior: tuple[Candidate, ...] = ()
    rates: LearnedRates | None = None
    runs: Count = 0
    noisy_runs: Count = 0
    builds: Count = 0
    rebuilds: Count = 0
    prebuilt: Count = 0
    # --margin (issue 47): what the endpoints' margins decided, and why; commits whose margins
    # matched neither endpoint (drift), judged by their verdicts
    margin: str | None = None
    drifted: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class LostJob:
    """A job whose engine stopped answering mid-step: the commit it was testing went back to
    the search, and the job took no more steps in that run (``--resume`` tries it again)."""

    job: Count = 0
    commit: str = ""
    why: str = ""


@dataclass(kw_only=True)
class BisectRecord:
    """A bisect's saved state and record: the request, every step, and the answer when in.
    Not frozen: the loop appends its steps and sets its state and answer as it goes."""

    schema: Literal["lnrepro.bisect/6"] = SCHEMA
    kind: Literal["bisect"] = "bisect"
    id: str | None = None
    record: Path | None = None  # <record dir>/bisect-<stamp>/bisect.json
    state: BisectState = BisectState.RUNNING
    stop_reason: str | None = None
    rerun: tuple[str, ...] = ()  # the command line that starts it again
    request: ResolvedBisect  # checked and resolved: refs full shas, paths absolute
    signature: Signature | None = None
    steps: list[Step] = field(default_factory=list)
    # jobs whose Docker engine stopped answering: their step was dropped, not judged
    lost: list[LostJob] = field(default_factory=list)
    result: BisectResult | None = None

    def to_json(self) -> JSON:
        return codec.encode(self)

    @property
    def headline(self) -> str:
        r = self.result
        if r is None:
            return f"{len(self.steps)} step(s) so far"
        if r.error:
            return f"stopped: {r.error}"
        if r.first_bad:
            subject = r.commit.subject if r.commit else ""
            conf = f" (p={r.confidence:.3f})" if r.confidence is not None else ""
            return f"{r.kind.value} {r.first_bad[:12]}{conf}: {subject}"[:120]
        return f"undecided: {r.reason or 'no single commit'}"


# ---------------------------------------------------------------------------------- JSON
def decode(doc: JSON, source: str) -> BisectRecord:
    """The record a parsed document of any bisect schema holds (``source`` names it in errors),
    every field checked; older schemas are upgraded first (:func:`upgrade`)."""
    return codec.decode(Reader(upgrade(Reader(doc, source)), source), BisectRecord)


def upgrade(r: Reader) -> dict[str, JSON]:
    """A parsed bisect document of an older schema in the current shape. ``/3`` lacks the hang
    keys, ``/4`` the lost jobs and ``/5`` the margins: they take their defaults. A document without ``state`` is
    complete when it has a result."""
    if not isinstance(r.value, dict):
        r.fail("should be an object")
    d: dict[str, JSON] = r.value
    schema = d.get("schema")
    if schema == OLDER_SCHEMAS[0]:
        d = upgrade_v2(d)
    if schema in OLDER_SCHEMAS:
        d = {**d, "schema": SCHEMA}
    if d.get("state") is None:
        state = BisectState.RUNNING if d.get("result") is None else BisectState.COMPLETE
        d = {**d, "state": state.value}
    return d


def upgrade_v2(d: dict[str, JSON]) -> dict[str, JSON]:
    """A /2 bisect document in /3's shape: its plan and oracle become the request."""
    plan, o = member(d, "plan"), member(d, "oracle")
    if o.get("oracle") == "command":
        import shlex

        command = str(o.get("command", ""))
        try:
            argv: list[JSON] = list(shlex.split(command))
        except ValueError:  # unbalanced quotes: the line as one word, as a shell would refuse it
            argv = [command]
        oracle: dict[str, JSON] = {
            "oracle": "command",
            "argv": argv,
            "timeout_s": o.get("timeout_s") or 1800.0,
            "repeat": o.get("repeat", 1),
        }
    else:
        oracle = {
            "oracle": "run",
            "backend": {
                "backend": "tt-metal",
                "checkout": plan.get("repo", ""),
                "runner": o.get("runner", "docker"),
                "profile": o.get("profile"),
            },
            "tests": {
                "filter": o.get("filter", "*"),
                "repeat": o.get("repeat", 1),
                "timeout_s": o.get("timeout_s") or 1800.0,
            },
        }
    request = {
        k: plan.get(k)
        for k in (
            "repo",
            "good",
            "bad",
            "confidence",
            "fail_rates",
            "jobs",
            "picks",
            "patches",
            "find_fix",
            "first_parent",
            "confirm",
            "paths",
            "record_dir",
        )
        if plan.get(k) is not None
    }
    request.update(oracle=oracle, policy=plan.get("policy") or {})
    # /2's top level held the plan and the oracle beside the steps: they are the request now
    return {k: v for k, v in d.items() if k not in ("plan", "oracle")} | {"request": request}
