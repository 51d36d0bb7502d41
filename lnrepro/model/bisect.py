"""A bisect as data: marks, what one run showed, the steps taken, the answer, the saved state.

Pure types with ``to_json``/``from_json``; the search (:mod:`lnrepro.bisect`) produces them, the
store reads them back, the presenters draw them. The state file and the record of a bisect are the
same document, schema ``lnrepro.bisect/5``; it holds the whole :class:`BisectRequest`, so
``--resume`` continues with every option of the original command.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from lnrepro.model.gtest import Metrics, metrics_from_json
from lnrepro.model.jsonio import Reader
from lnrepro.model.requests import BisectRequest

SCHEMA = "lnrepro.bisect/5"


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


@dataclass(frozen=True)
class Action:
    job: int  # which worktree/device/engine runs it
    sha: str
    kind: ActionKind
    build: BuildKind = BuildKind.BUILD

    def to_json(self) -> dict[str, Any]:
        return {
            "job": self.job,
            "sha": self.sha,
            "kind": self.kind.value,
            "build": self.build.value,
        }

    @classmethod
    def from_json(cls, r: Reader) -> Action:
        return cls(
            r.int("job", 0),
            r.str("sha"),
            r.enum("kind", ActionKind),
            r.enum("build", BuildKind, BuildKind.BUILD),
        )


@dataclass(frozen=True)
class TestObs:
    """One test in one run, as the bisect needs it."""

    __test__ = False

    name: str
    status: str  # PASSED FAILED CRASHED TIMEOUT SKIPPED DISABLED ENV_ERROR
    shapes: tuple[str, ...] = ()
    metric: float | None = None  # the policy's metric, worst over the test's tensors

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "shapes": list(self.shapes),
            "metric": self.metric,
        }

    @classmethod
    def from_json(cls, r: Reader) -> TestObs:
        return cls(r.str("name"), r.str("status"), r.strs("shapes"), r.opt_float("metric"))


@dataclass(frozen=True)
class AttemptObs:
    """One run: a gtest run (``tests``) or a ``--command`` (``exit_code`` only)."""

    exit_code: int
    tests: tuple[TestObs, ...] = ()
    gtest: bool = True
    timed_out: bool = False
    env_error: str | None = None
    cannot_test: str | None = None  # did not build, no tests matched: not a run at all
    crashed_after_tests: bool = False  # every test ended, then the process died (teardown)
    hang: str | None = None  # a hung run's diagnosis key (Diagnosis.key), from its watcher log

    def to_json(self) -> dict[str, Any]:
        return {
            "exit_code": self.exit_code,
            "gtest": self.gtest,
            "timed_out": self.timed_out,
            "env_error": self.env_error,
            "cannot_test": self.cannot_test,
            "crashed_after_tests": self.crashed_after_tests,
            "hang": self.hang,
            "failed": [t.name for t in self.tests if t.status not in ("PASSED", "SKIPPED")],
            "tests": [t.to_json() for t in self.tests],
        }

    @classmethod
    def from_json(cls, r: Reader) -> AttemptObs:
        return cls(
            r.int("exit_code"),
            tuple(TestObs.from_json(t) for t in r.list("tests", default=[])),
            r.bool("gtest", True),
            r.bool("timed_out", False),
            r.opt_str("env_error"),
            r.opt_str("cannot_test"),
            r.bool("crashed_after_tests", False),
            r.opt_str("hang"),
        )


@dataclass(frozen=True)
class Signature:
    """How the bug shows: which tests fail, and in which shapes (or by crashing)."""

    tests: frozenset[str]
    shapes: frozenset[str] = frozenset()
    crash: bool = False
    exit_code: int | None = None  # --command: the code the buggy commit exits with
    hang: bool = False  # the bug is a hang (--on-hang bad): its tests time out
    hang_key: str | None = None  # and the watcher log says where (Diagnosis.key)

    def to_json(self) -> dict[str, Any]:
        return {
            "tests": sorted(self.tests),
            "shapes": sorted(self.shapes),
            "crash": self.crash,
            "exit_code": self.exit_code,
            "hang": self.hang,
            "hang_key": self.hang_key,
        }

    @classmethod
    def from_json(cls, r: Reader) -> Signature:
        return cls(
            frozenset(r.strs("tests")),
            frozenset(r.strs("shapes")),
            r.bool("crash", False),
            r.opt_int("exit_code"),
            r.bool("hang", False),
            r.opt_str("hang_key"),
        )


@dataclass(frozen=True)
class CommitInfo:
    sha: str
    subject: str = ""
    author: str = ""
    date: str = ""
    pr: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "sha": self.sha,
            "subject": self.subject,
            "author": self.author,
            "date": self.date,
            "pr": self.pr,
        }

    @classmethod
    def from_json(cls, r: Reader) -> CommitInfo:
        return cls(
            r.str("sha"),
            r.str("subject", ""),
            r.str("author", ""),
            r.str("date", ""),
            r.opt_int("pr"),
        )


@dataclass(frozen=True)
class StepTest:
    """One test over a step's run: its verdict, passes and worst metrics."""

    __test__ = False

    verdict: str
    passed: int
    runs: int
    worst: Metrics = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "passed": self.passed,
            "runs": self.runs,
            "worst": self.worst,
        }

    @classmethod
    def from_json(cls, r: Reader) -> StepTest:
        return cls(
            r.str("verdict"), r.int("passed", 0), r.int("runs", 0), metrics_from_json(r, "worst")
        )


@dataclass(frozen=True)
class Evidence:
    """What an oracle saw of one commit: every run, or why it could not test it."""

    attempts: tuple[AttemptObs, ...] = ()
    cannot_test: str | None = None  # did not build, no tests, a pick did not apply
    seconds: float = 0.0
    build_s: float | None = None
    run_s: float | None = None  # mean seconds of one run
    inputs: str | None = None  # hash of everything the tests read
    same_as: str | None = None  # a commit already tested with the same inputs: its verdict
    verdict: str | None = None  # the run's verdict (run oracle)
    record: str | None = None  # the run record's directory (run oracle)
    tests: dict[str, StepTest] = field(default_factory=dict)
    output_tail: tuple[str, ...] = ()  # --command: its last lines
    prebuilt: str | None = None  # the artifact used instead of a build
    prebuilt_failed: str | None = None  # an artifact that could not be used (then it was built)

    def to_json(self) -> dict[str, Any]:
        return {
            "seconds": round(self.seconds, 3),
            "build_s": None if self.build_s is None else round(self.build_s, 3),
            "run_s": None if self.run_s is None else round(self.run_s, 3),
            "cannot_test": self.cannot_test,
            "inputs": self.inputs,
            "same_as": self.same_as,
            "verdict": self.verdict,
            "record": self.record,
            "tests": {k: v.to_json() for k, v in self.tests.items()},
            "output_tail": list(self.output_tail),
            "prebuilt": self.prebuilt,
            "prebuilt_failed": self.prebuilt_failed,
            "attempts": [a.to_json() for a in self.attempts],
        }

    @classmethod
    def from_json(cls, r: Reader) -> Evidence:
        tests = r.opt_obj("tests")
        return cls(
            tuple(AttemptObs.from_json(a) for a in r.list("attempts", default=[])),
            r.opt_str("cannot_test"),
            r.float("seconds", 0.0),
            r.opt_float("build_s"),
            r.opt_float("run_s"),
            r.opt_str("inputs"),
            r.opt_str("same_as"),
            r.opt_str("verdict"),
            r.opt_str("record"),
            {k: StepTest.from_json(v) for k, v in tests.items()} if tests else {},
            r.strs("output_tail"),
            r.opt_str("prebuilt"),
            r.opt_str("prebuilt_failed"),
        )


@dataclass(frozen=True)
class Step:
    """One tested commit: what was done, what the runs showed, the mark, and why."""

    action: Action
    subject: str
    evidence: Evidence
    outcomes: tuple[tuple[RunOutcome, str], ...]
    mark: Mark
    reason: str
    prepare_s: float = 0.0
    checkout_s: float = 0.0
    note: str | None = None

    @property
    def sha(self) -> str:
        return self.action.sha

    def to_json(self) -> dict[str, Any]:
        return {
            **self.action.to_json(),
            "subject": self.subject,
            "prepare_s": round(self.prepare_s, 3),
            "checkout_s": round(self.checkout_s, 3),
            "note": self.note,
            **self.evidence.to_json(),
            "outcomes": [[o.value, why] for o, why in self.outcomes],
            "mark": self.mark.value,
            "reason": self.reason,
        }

    @classmethod
    def from_json(cls, r: Reader) -> Step:
        outs = []
        for o in r.list("outcomes", default=[]):
            pair = o.elements()
            if len(pair) != 2:
                o.fail("should be [outcome, reason]")
            try:
                outs.append((RunOutcome(pair[0].as_str()), pair[1].as_str()))
            except ValueError:
                pair[0].fail(f"is not one of {', '.join(x.value for x in RunOutcome)}")
        return cls(
            Action.from_json(r),
            r.str("subject", ""),
            Evidence.from_json(r),
            tuple(outs),
            r.enum("mark", Mark),
            r.str("reason", ""),
            r.float("prepare_s", 0.0),
            r.float("checkout_s", 0.0),
            r.opt_str("note"),
        )


@dataclass(frozen=True)
class Candidate:
    """One commit of the Bayesian posterior."""

    sha: str
    p: float
    subject: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"sha": self.sha, "p": self.p, "subject": self.subject}

    @classmethod
    def from_json(cls, r: Reader) -> Candidate:
        return cls(r.str("sha"), r.float("p"), r.str("subject", ""))


@dataclass(frozen=True)
class BisectResult:
    """The answer: a first bad (or fixed) commit with its evidence, candidates, or why not."""

    kind: str  # "first bad commit" | "first fixed commit"
    search: str  # git | bayesian
    first_bad: str | None = None
    commit: CommitInfo | None = None
    last_good: str | None = None
    last_good_all: tuple[str, ...] = ()
    confirmed: bool | None = None  # git: the culprit and its parents re-tested consistently
    steps: int = 0
    endpoint_checks: int = 0
    signature: Signature | None = None
    candidates: tuple[CommitInfo, ...] = ()  # skips hide which of these is first
    reason: str | None = None  # why there is no first_bad
    error: str | None = None  # the endpoints do not separate
    # the Bayesian search
    most_likely: str | None = None
    confidence: float | None = None
    wanted_confidence: float | None = None
    posterior: tuple[Candidate, ...] = ()
    rates: tuple[float, float] | None = None  # learned (buggy, clean) fail rates
    runs: int = 0
    noisy_runs: int = 0
    builds: int = 0
    rebuilds: int = 0
    prebuilt: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "search": self.search,
            "first_bad": self.first_bad,
            "commit": self.commit.to_json() if self.commit else None,
            "last_good": self.last_good,
            "last_good_all": list(self.last_good_all),
            "confirmed": self.confirmed,
            "steps": self.steps,
            "endpoint_checks": self.endpoint_checks,
            "signature": self.signature.to_json() if self.signature else None,
            "candidates": [c.to_json() for c in self.candidates],
            "reason": self.reason,
            "error": self.error,
            "most_likely": self.most_likely,
            "confidence": self.confidence,
            "wanted_confidence": self.wanted_confidence,
            "posterior": [p.to_json() for p in self.posterior],
            "rates": {"bad": self.rates[0], "good": self.rates[1]} if self.rates else None,
            "runs": self.runs,
            "noisy_runs": self.noisy_runs,
            "builds": self.builds,
            "rebuilds": self.rebuilds,
            "prebuilt": self.prebuilt,
        }

    @classmethod
    def from_json(cls, r: Reader) -> BisectResult:
        commit, sig, rates = r.opt_obj("commit"), r.opt_obj("signature"), r.opt_obj("rates")
        return cls(
            r.str("kind", "first bad commit"),
            r.str("search", "git"),
            r.opt_str("first_bad"),
            CommitInfo.from_json(commit) if commit else None,
            r.opt_str("last_good"),
            r.strs("last_good_all"),
            r.opt_bool("confirmed"),
            r.int("steps", 0),
            r.int("endpoint_checks", 0),
            Signature.from_json(sig) if sig else None,
            tuple(CommitInfo.from_json(c) for c in r.list("candidates", default=[])),
            r.opt_str("reason"),
            r.opt_str("error"),
            r.opt_str("most_likely"),
            r.opt_float("confidence"),
            r.opt_float("wanted_confidence"),
            tuple(Candidate.from_json(p) for p in r.list("posterior", default=[])),
            (rates.float("bad"), rates.float("good")) if rates else None,
            r.int("runs", 0),
            r.int("noisy_runs", 0),
            r.int("builds", 0),
            r.int("rebuilds", 0),
            r.int("prebuilt", 0),
        )


@dataclass(frozen=True)
class LostJob:
    """A job whose engine stopped answering mid-step: the commit it was testing went back to
    the search, and the job took no more steps in that run (``--resume`` tries it again)."""

    job: int
    commit: str
    why: str

    def to_json(self) -> dict[str, Any]:
        return {"job": self.job, "commit": self.commit, "why": self.why}

    @classmethod
    def from_json(cls, r: Reader) -> LostJob:
        return cls(r.int("job", 0), r.str("commit", ""), r.str("why", ""))


class BisectState(str, Enum):
    RUNNING = "running"
    COMPLETE = "complete"
    INTERRUPTED = "interrupted"
    ABORTED = "aborted"


@dataclass
class BisectRecord:
    """A bisect's saved state and record: the request, every step, and the answer when in."""

    request: BisectRequest  # refs resolved to full shas
    id: str | None = None
    record: Path | None = None  # <record dir>/bisect-<stamp>/bisect.json
    signature: Signature | None = None
    steps: list[Step] = field(default_factory=list)
    result: BisectResult | None = None
    state: BisectState = BisectState.RUNNING
    stop_reason: str | None = None
    rerun: tuple[str, ...] = ()  # the command line that starts it again
    path: Path | None = None  # where this copy was read from (not saved)
    # jobs whose Docker engine stopped answering: their step was dropped, not judged
    lost: list[LostJob] = field(default_factory=list)

    kind = "bisect"

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "kind": self.kind,
            "id": self.id,
            "record": str(self.record) if self.record else None,
            "state": self.state.value,
            "stop_reason": self.stop_reason,
            "rerun": list(self.rerun),
            "request": self.request.to_json(),
            "signature": self.signature.to_json() if self.signature else None,
            "steps": [s.to_json() for s in self.steps],
            "lost": [x.to_json() for x in self.lost],
            "result": self.result.to_json() if self.result else None,
        }

    @classmethod
    def from_json(cls, r: Reader, path: Path | None = None) -> BisectRecord:
        sig, res, rec = r.opt_obj("signature"), r.opt_obj("result"), r.opt_str("record")
        state = r.enum("state", BisectState, BisectState.COMPLETE if res else BisectState.RUNNING)
        return cls(
            BisectRequest.from_json(r.obj("request")),
            r.opt_str("id"),
            Path(rec) if rec else None,
            Signature.from_json(sig) if sig else None,
            [Step.from_json(s) for s in r.list("steps", default=[])],
            BisectResult.from_json(res) if res else None,
            state,
            r.opt_str("stop_reason"),
            r.strs("rerun"),
            path,
            [LostJob.from_json(x) for x in r.list("lost", default=[])],
        )

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
            return f"{r.kind} {r.first_bad[:12]}{conf}: {subject}"[:120]
        return f"undecided: {r.reason or 'no single commit'}"
