"""One bisect over a real repository: isolated, resumable, one at a time.

* Isolation: every commit is checked out in a dedicated worktree
  (``<git-common-dir>/lnrepro/worktree``), reused across steps and runs so incremental builds and
  ccache pay off. The user's checkout, branch, index, stash and uncommitted work are never touched.
* Test injection: ``--pick`` commits are cherry-picked (uncommitted) and ``--patch`` files applied
  on top of each tested commit; a commit where they do not apply is skipped with the reason.
* State: ``<git-common-dir>/lnrepro/bisect.json``, rewritten atomically after every step;
  ``--resume`` rebuilds the search from it without repeating a finished step. A lock file (with
  the owner's pid; a dead owner's lock is taken over) keeps two bisects off one repository.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from lnrepro.bisect.bayes import BayesSearch, Rates
from lnrepro.bisect.core import Graph, Mark, graph_from_rev_list
from lnrepro.bisect.evidence import Policy, RunOutcome, Signature, classify, learn
from lnrepro.bisect.oracle import Evidence, Oracle
from lnrepro.bisect.strategy import Action, GitSearch, Strategy, mark_of
from lnrepro.doors import gitops, proc
from lnrepro.doors.fsio import atomic_write_text, new_record_dir, write_error
from lnrepro.errors import EndpointsDoNotSeparate, GitError, InputError, UsageError
from lnrepro.model.events import BisectEvents, Events

SCHEMA = "lnrepro.bisect/2"


@dataclass
class Plan:
    """Everything a bisect needs to be repeated (and resumed)."""

    repo: Path
    good: list[str]
    bad: str
    find_fix: bool = False
    first_parent: bool = False
    paths: tuple[str, ...] = ()
    picks: list[str] = field(default_factory=list)
    patches: list[str] = field(default_factory=list)
    confirm: bool = True
    confidence: float | None = None  # the noisy (Bayesian) search, stopping at this posterior
    fail_rates: tuple[float, float] | None = None  # (buggy, clean) when known
    jobs: int = 1
    policy: Policy = field(default_factory=Policy)
    record_dir: str | None = None  # where the bisect's own record (bisect-<stamp>/) is kept

    def to_json(self) -> dict[str, Any]:
        return {"repo": str(self.repo), "good": self.good, "bad": self.bad, "find_fix": self.find_fix,
                "first_parent": self.first_parent, "paths": list(self.paths), "picks": self.picks,
                "patches": self.patches, "confirm": self.confirm, "confidence": self.confidence,
                "fail_rates": list(self.fail_rates) if self.fail_rates else None, "jobs": self.jobs,
                "policy": asdict(self.policy), "record_dir": self.record_dir}  # fmt: skip

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Plan:
        rates = d.get("fail_rates")
        return cls(Path(d["repo"]), list(d["good"]), d["bad"], bool(d["find_fix"]),
                   bool(d["first_parent"]), tuple(d.get("paths", ())), list(d["picks"]),
                   list(d["patches"]), bool(d.get("confirm", True)), d.get("confidence"),
                   (float(rates[0]), float(rates[1])) if rates else None, int(d.get("jobs", 1)),
                   Policy(**d.get("policy", {})), d.get("record_dir"))  # fmt: skip


def state_dir(repo: Path) -> Path:
    return gitops.common_dir(repo) / "lnrepro"


@contextlib.contextmanager
def lock(repo: Path) -> Any:
    """One bisect per repository; a lock whose owner is dead is taken over."""
    path = state_dir(repo) / "bisect.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(2):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            break
        except FileExistsError:
            try:
                pid = int(path.read_text().strip() or "0")
            except (OSError, ValueError):
                pid = 0
            if pid and Path(f"/proc/{pid}").exists() and pid != os.getpid():
                raise UsageError(
                    f"another lnrepro bisect (pid {pid}) is running on {repo}",
                    "wait for it, or stop it; its state survives and --resume continues it",
                ) from None
            path.unlink(missing_ok=True)  # its owner is gone
    else:
        raise UsageError(f"cannot take the bisect lock {path}", "remove it if no bisect runs")
    try:
        os.write(fd, f"{os.getpid()}\n".encode())
        os.close(fd)
        yield
    finally:
        path.unlink(missing_ok=True)


def worktree_path(repo: Path, job: int) -> Path:
    return state_dir(repo) / ("worktree" if job == 0 else f"worktree-{job}")


@dataclass
class Bisect:
    plan: Plan
    oracles: list[Oracle]  # one per job (its own device or Docker engine)
    graph: Graph
    strategy: Strategy
    buggy: str  # the endpoint whose runs teach the bug's signature
    steps: list[dict[str, Any]] = field(default_factory=list)
    result: dict[str, Any] | None = None
    signature: Signature | None = None
    inputs: dict[str, str] = field(default_factory=dict)  # input hash -> a commit tested with it
    record_path: Path | None = (
        None  # <record-dir>/bisect-<stamp>/bisect.json: lnrepro runs lists it
    )

    # ------------------------------------------------------------------ state
    @property
    def state_path(self) -> Path:
        return state_dir(self.plan.repo) / "bisect.json"

    def start_record(self) -> None:
        """A record directory of its own under the plan's record dir (kept after the bisect)."""
        if self.record_path is None and self.plan.record_dir:
            self.record_path = new_record_dir(Path(self.plan.record_dir), "bisect") / "bisect.json"

    def save(self) -> None:
        doc = {
            "schema": SCHEMA,
            "id": self.record_path.parent.name if self.record_path else None,
            "record": str(self.record_path) if self.record_path else None,
            "plan": self.plan.to_json(),
            "oracle": self.oracles[0].describe(),
            "signature": self.signature.to_json() if self.signature else None,
            "steps": self.steps,
            "result": self.result,
        }
        text = json.dumps(doc, indent=1) + "\n"
        for path in (self.state_path, self.record_path):
            if path is None:
                continue
            try:
                atomic_write_text(path, text)
            except OSError as exc:
                raise write_error(path, exc) from None

    # ------------------------------------------------------------------ one action
    def _runs(self) -> int | None:
        """The noisy search decides one run at a time; git's takes the oracle's --repeat."""
        return 1 if self.plan.confidence is not None else None

    def _execute(self, action: Action, events: Events | None) -> tuple[Evidence, dict[str, Any]]:
        """Check out, apply the picks, run the oracle: in the action's own worktree (any thread)."""
        repo = self.plan.repo
        worktree = gitops.ensure_worktree(repo, worktree_path(repo, action.job))
        start = time.monotonic()
        note = gitops.checkout_clean(worktree, action.sha)
        checkout_s = time.monotonic() - start
        problem = None
        for pick in self.plan.picks:
            problem = problem or gitops.apply_pick(worktree, pick)
        for patch in self.plan.patches:
            problem = problem or gitops.apply_patch(worktree, Path(patch))
        prep = {"prepare_s": round(time.monotonic() - start, 3), "checkout_s": round(checkout_s, 3),
                "note": note}  # fmt: skip
        if problem:
            return Evidence((), cannot_test=problem), prep
        # a re-test re-runs: a confirmation, and any commit against itself
        known = (
            None
            if action.kind == "confirm"
            else {k: v for k, v in self.inputs.items() if v != action.sha}
        )
        return self.oracles[action.job].evaluate(worktree, events, self._runs(), known), prep

    def _outcomes(self, action: Action, ev: Evidence) -> list[tuple[RunOutcome, str]]:
        policy = self.plan.policy
        if self.signature is None and action.sha == self.buggy:
            self.signature = next(
                (sig for a in ev.attempts if (sig := learn(a, policy)) is not None), None
            )
        outs = [classify(a, self.signature, policy) for a in ev.attempts]
        if self.plan.find_fix:  # the search's "bad" is the fixed state: passing runs show it
            flip = {RunOutcome.FAIL: RunOutcome.PASS, RunOutcome.PASS: RunOutcome.FAIL}
            outs = [(flip.get(o, o), why) for o, why in outs]
        return outs

    def _record(
        self, action: Action, info: dict[str, Any], ev: Evidence, prep: dict[str, Any],
        events: BisectEvents,
    ) -> Mark:  # fmt: skip
        outs = self._outcomes(action, ev)
        if ev.same_as:
            mark = self.strategy.equate(action, ev.same_as)
        else:
            mark = self.strategy.observe(action, outs, ev.cannot_test)
            if ev.inputs and mark is not Mark.SKIP:
                self.inputs.setdefault(ev.inputs, action.sha)
        if isinstance(self.strategy, BayesSearch):
            fixed = prep["prepare_s"] + (ev.build_s or 0.0)
            self.strategy.learn_costs(action.build, fixed, ev.run_s)
        reason = (
            (
                f"same inputs as {ev.same_as[:12]}: its verdict, not run again"
                if ev.same_as
                else None
            )
            or ev.cannot_test
            or next(
                (why for o, why in outs if mark_of([o]) is mark), outs[0][1] if outs else "no run"
            )
        )
        self.steps.append({**action.to_json(), "subject": info["subject"], **prep, **ev.to_json(),
                           "outcomes": [[o.value, why] for o, why in outs], "mark": mark.value,
                           "reason": reason})  # fmt: skip
        self.save()
        events.step_finished(action.kind, info, mark.value, reason, ev.seconds)
        return mark

    # ------------------------------------------------------------------ the loop
    def run(self, events: BisectEvents) -> dict[str, Any]:
        cands, left = self.strategy.progress()
        events.started(cands, left)
        if max(1, self.plan.jobs) == 1:
            while (a := self.strategy.next_for(0, {})) is not None:
                info = self._started(a, events)
                ev, prep = self._execute(a, events)
                self._record(a, info, ev, prep, events)
                if self.strategy.error:
                    self._endpoints_fail()
        else:
            self._run_jobs(events)
        self.result = self._result()
        self.save()
        return self.result

    def _started(self, a: Action, events: BisectEvents) -> dict[str, Any]:
        info = gitops.commit_info(self.plan.repo, a.sha)
        cands, left = self.strategy.progress()
        events.step_started(a.kind, info, cands, left)
        return info

    def _run_jobs(self, events: BisectEvents) -> None:
        """K jobs, asynchronously: an idle job gets its next action as soon as it finishes.

        Their builds and runs are not drawn, only their verdicts. When the answer is in, the
        actions still in flight are stopped (processes killed, containers removed) and dropped;
        on Ctrl-C or SIGTERM likewise, before the signal propagates.
        """
        jobs = self.plan.jobs
        for job in range(jobs):  # made here, one at a time: git locks the repository to add one
            gitops.ensure_worktree(self.plan.repo, worktree_path(self.plan.repo, job))
        pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="lnrepro-job")
        running: dict[
            int, tuple[Action, Future[tuple[Evidence, dict[str, Any]]], dict[str, Any]]
        ] = {}
        try:
            while True:
                for job in range(jobs):
                    if job in running or self.strategy.done:
                        continue
                    a = self.strategy.next_for(job, {j: r[0].sha for j, r in running.items()})
                    if a is not None:
                        info = self._started(a, events)
                        running[job] = (a, pool.submit(self._execute, a, None), info)
                if not running:
                    break
                finished, _ = wait([r[1] for r in running.values()], return_when=FIRST_COMPLETED)
                ready = sorted(
                    (j for j, r in running.items() if r[1] in finished),
                    key=lambda j: running[j][0].sha != self.buggy,  # the signature's teacher first
                )
                for j in ready:
                    a, fut, info = running.pop(j)
                    ev, prep = fut.result()
                    self._record(a, info, ev, prep, events)
                    if self.strategy.error:
                        self._endpoints_fail()
                if self.strategy.done and running:
                    _stop_all()
                    running.clear()
        except BaseException:
            _stop_all()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
            _reopen()

    def _endpoints_fail(self) -> None:
        self.result = {"error": self.strategy.error}
        self.save()
        raise EndpointsDoNotSeparate(
            f"{self.strategy.error}: the bug does not separate the endpoints",
            "check --good/--bad and the test (or --pick the tests), or pass --no-confirm",
        )

    def _result(self) -> dict[str, Any]:
        repo = self.plan.repo
        r = self.strategy.result()
        kinds = [s["kind"] for s in self.steps]
        base = {
            "kind": "first fixed commit" if self.plan.find_fix else "first bad commit",
            "steps": kinds.count("step"),
            "endpoint_checks": kinds.count("endpoint"),
            "signature": self.signature.to_json() if self.signature else None,
        }
        fb = r.get("first_bad")
        if isinstance(self.strategy, BayesSearch):
            parents = self.graph.parents.get(fb, ()) if fb else ()
            return {**base, **r, "commit": gitops.commit_info(repo, fb) if fb else None,
                    "last_good": parents[0] if parents else None, "last_good_all": list(parents),
                    "confirmed": None, "search": "bayesian",
                    "posterior": [{**p, "subject": gitops.commit_info(repo, p["sha"])["subject"]}
                                  for p in r["posterior"]],
                    "reason": None if fb else f"no commit reached confidence {self.plan.confidence:g}"}  # fmt: skip
        if fb is None:
            return {**base, "first_bad": None, "reason": r["reason"], "search": "git",
                    "candidates": [gitops.commit_info(repo, c) for c in r["candidates"]]}  # fmt: skip
        good = r["last_good_all"]
        return {**base, "first_bad": fb, "commit": gitops.commit_info(repo, fb), "search": "git",
                "last_good": good[0] if good else None, "last_good_all": good,
                "confirmed": r["confirmed"]}  # fmt: skip


def _stop_all() -> None:
    """Kill every process and remove every container the jobs are running now, and let none
    start until the jobs are gone (:func:`_reopen`)."""
    from lnrepro.doors import container

    proc.kill_all(close=True)
    container.remove_all_live(close=True)


def _reopen() -> None:
    from lnrepro.doors import container

    proc.reopen()
    container.reopen()


def build(plan: Plan, oracles: list[Oracle]) -> Bisect:
    """Resolve the plan's refs and build the commit graph and the search."""
    repo = plan.repo
    bad = gitops.resolve(repo, plan.bad)
    goods = [gitops.resolve(repo, g) for g in plan.good]
    # --find-fix: the fixed (new) state plays "bad", the older buggy commits play "good"
    tip, bottoms = (goods[0], [bad]) if plan.find_fix else (bad, goods)
    if plan.find_fix and len(goods) != 1:
        raise UsageError("--find-fix takes one --good (the fixed commit)", "pass a single --good")
    for b in bottoms:
        if not gitops.is_ancestor(repo, b, tip):
            raise GitError(
                f"{b[:12]} is not an ancestor of {tip[:12]}",
                "the older commit must come first: swap --good/--bad, or use --find-fix",
            )
    if plan.paths:  # path-limited, as git: the search's top is the newest commit touching PATHS
        top = gitops.git(repo, "rev-list", "-1", tip, "--", *plan.paths).strip()
        if not top or any(gitops.is_ancestor(repo, top, b) for b in bottoms):
            raise UsageError(
                f"no commit between the endpoints touches {' '.join(plan.paths)}",
                "widen the paths, or drop them",
            )
        tip = top
    lines = gitops.rev_list_parents(
        repo, tip, bottoms, first_parent=plan.first_parent, paths=plan.paths
    )
    graph = graph_from_rev_list([*bottoms, *lines], first_parent=plan.first_parent)
    plan.bad, plan.good = (bad, goods)
    strategy: Strategy
    if plan.confidence is not None:
        rates = Rates(fixed=plan.fail_rates) if plan.fail_rates else Rates()
        if plan.find_fix and plan.fail_rates:  # the search's "bad" (fixed) state passes
            rates = Rates(fixed=(1 - plan.fail_rates[1], 1 - plan.fail_rates[0]))
        strategy = BayesSearch(graph, tip, bottoms, plan.confidence, rates)
    else:
        strategy = GitSearch(graph, tip, bottoms, confirm=plan.confirm)
    return Bisect(plan, oracles, graph, strategy, buggy=bad if plan.find_fix else tip)


def load_state(repo: Path) -> dict[str, Any]:
    path = state_dir(repo) / "bisect.json"
    try:
        doc: dict[str, Any] = json.loads(path.read_text())
    except FileNotFoundError:
        raise InputError(
            f"no bisect to resume in {repo}", "start one with --good and --bad"
        ) from None
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read {path}: {exc}", "remove it and start again") from None
    if doc.get("schema") != SCHEMA:
        raise InputError(f"{path} is not an lnrepro bisect state", "remove it and start again")
    return doc


def resume(repo: Path, make_oracles: Callable[[dict[str, Any], Plan], list[Oracle]]) -> Bisect:
    """The bisect in the state file, with its finished steps replayed (none is repeated)."""
    doc = load_state(repo)
    plan = Plan.from_json(doc["plan"])
    b = build(plan, make_oracles(doc["oracle"], plan))
    b.steps = list(doc["steps"])
    b.signature = Signature.from_json(doc["signature"]) if doc.get("signature") else None
    b.record_path = Path(doc["record"]) if doc.get("record") else None
    for s in b.steps:
        action = Action(int(s.get("job", 0)), s["sha"], s["kind"], s.get("build", "build"))
        outs = [(RunOutcome(o), why) for o, why in s.get("outcomes", [])]
        if s.get("same_as"):
            b.strategy.equate(action, s["same_as"])
            continue
        mark = b.strategy.observe(action, outs, s.get("cannot_test"))
        if s.get("inputs") and mark is not Mark.SKIP:
            b.inputs.setdefault(s["inputs"], s["sha"])
    return b
