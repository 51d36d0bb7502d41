"""One bisect over a real repository: the loop that asks the strategy, runs the oracle, records.

* Isolation: every commit is checked out in a worktree of lnrepro's own
  (:class:`~lnrepro.bisect.workspace.GitWorkspace`); the user's checkout, branch, index, stash
  and uncommitted work are never touched. The workspace is injected beside the oracles, so a
  test drives this loop in process with scripted ones.
* Test injection: ``--pick`` commits are cherry-picked (uncommitted) and ``--patch`` files applied
  on top of each tested commit; a commit where they do not apply is skipped with the reason.
* Every step is saved at once (:mod:`~lnrepro.bisect.state`); :meth:`Bisect.replay` rebuilds the
  search from saved steps, the one way ``--resume`` continues without repeating a step.
* ``--jobs K``: K worktrees, asynchronously; a stopped bisect leaves nothing running.
"""

from __future__ import annotations

import contextlib
import signal
from collections import Counter
from collections.abc import Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from pathlib import Path

from lnrepro.bisect import prebuilt
from lnrepro.bisect.core import Graph, Mark, graph_from_rev_list
from lnrepro.bisect.evidence import classify, learn
from lnrepro.bisect.oracle import Oracle
from lnrepro.bisect.strategy import GitSearch, Strategy, mark_of
from lnrepro.bisect.workspace import GitWorkspace, Prep, Workspace
from lnrepro.doors import gitops, proc
from lnrepro.errors import EndpointsDoNotSeparate, EngineLost, LnreproError, Terminated
from lnrepro.model.bisect import (
    Action,
    ActionKind,
    AttemptObs,
    BisectRecord,
    BisectResult,
    BisectState,
    CommitInfo,
    Evidence,
    LostJob,
    RunOutcome,
    SearchKind,
    Signature,
    Step,
)
from lnrepro.model.events import BisectEvents, Events
from lnrepro.model.requests import BisectRequest, OnHang, RunOracleSpec


@dataclass
class Bisect:
    record: BisectRecord
    oracles: list[Oracle]  # one per job (its own device or Docker engine)
    graph: Graph
    strategy: Strategy
    buggy: str  # the endpoint whose runs teach the bug's signature
    workspace: Workspace  # where a commit's tree is made ready and the record kept
    inputs: dict[str, str] = field(default_factory=dict)  # input hash -> a commit tested with it
    artifacts: dict[str, Path] = field(default_factory=dict)  # --prebuilt: commit -> build tree

    @property
    def request(self) -> BisectRequest:
        return self.record.request

    @property
    def repo(self) -> Path:
        return self.request.repo

    def save(self) -> None:
        self.workspace.save(self.record)

    # ------------------------------------------------------------------ one action
    def _execute(self, action: Action, events: Events | None) -> tuple[Evidence, Prep]:
        """Check out, apply the picks, run the oracle: in the action's own worktree (any thread)."""
        ready = self.workspace.prepare(action.job, action.sha)
        prep = ready.prep
        if ready.problem:
            return Evidence(cannot_test=ready.problem), prep
        # a re-test re-runs: a confirmation, and any commit against itself
        known = (
            None
            if action.kind is ActionKind.CONFIRM
            else {k: v for k, v in self.inputs.items() if v != action.sha}
        )
        runs = self.strategy.runs_per_action()
        tree = self.artifacts.get(action.sha)
        return self.oracles[action.job].evaluate(ready.tree, events, runs, known, tree), prep

    def _outcomes(self, action: Action, ev: Evidence) -> list[tuple[RunOutcome, str]]:
        policy = self.request.policy
        learning = self.record.signature is None and action.sha == self.buggy
        if learning:
            self.record.signature = self._learn(ev)
        once = (
            RunOutcome.NOISE,
            "a hang seen once at the bad endpoint: it must hang there twice at the same place "
            "to be the bug's hang",
        )
        provisional = (
            learning
            and self.record.signature is None
            and policy.on_hang is OnHang.BAD
            and not policy.hang_in
        )
        unplaced = (
            RunOutcome.NOISE,
            "a hang at the bad endpoint that the watcher log does not place (no complete dump "
            "before the timeout?): run again; a longer --timeout lets the watcher write one",
        )

        def provisional_outcome(a: AttemptObs) -> tuple[RunOutcome, str] | None:
            if not provisional:
                return None
            if a.hang:
                return once
            hung = a.timed_out or any(t.status == "TIMEOUT" for t in a.tests)
            return unplaced if hung and self._watched else None

        outs = [
            provisional_outcome(a) or classify(a, self.record.signature, policy)
            for a in ev.attempts
        ]
        if self.request.find_fix:  # the search's "bad" is the fixed state: passing runs show it
            flip = {RunOutcome.FAIL: RunOutcome.PASS, RunOutcome.PASS: RunOutcome.FAIL}
            outs = [(flip.get(o, o), why) for o, why in outs]
        return outs

    def _learn(self, ev: Evidence) -> Signature | None:
        """The bug's signature from the buggy endpoint's runs. A hang the watcher places is the
        bug's only once two hangs there agree on the place (a flaky hang elsewhere, at device
        open say, must not become the signature): until then the hangs are noise and the
        endpoint runs again."""
        policy = self.request.policy
        seen = Counter(
            a.hang
            for s in self.record.steps
            if s.action.sha == self.buggy
            for a in s.evidence.attempts
            if a.hang
        )
        for a in ev.attempts:
            sig = learn(a, policy)
            if sig is None:
                continue
            if sig.hang and not sig.hang_key and self._watched and not policy.hang_in:
                continue  # the watcher is on but did not place this hang: it teaches no place
            if sig.hang_key and not policy.hang_in:
                seen[sig.hang_key] += 1
                if seen[sig.hang_key] < 2:
                    continue
            return sig
        return None

    @property
    def _watched(self) -> bool:
        """The runs write a watcher log (``--watcher``): a hang should come with its place."""
        o = self.request.oracle
        return isinstance(o, RunOracleSpec) and bool(o.backend.watcher_s)

    def _observe(self, action: Action, ev: Evidence, outs: list[tuple[RunOutcome, str]]) -> Mark:
        """Tell the strategy what one action showed (a live step and a replayed one alike)."""
        if ev.same_as:
            return self.strategy.equate(action, ev.same_as)
        mark = self.strategy.observe(action, outs, ev.cannot_test)
        if ev.inputs and mark is not Mark.SKIP:
            self.inputs.setdefault(ev.inputs, action.sha)
        return mark

    def _record(
        self, action: Action, info: CommitInfo, ev: Evidence, prep: Prep, events: BisectEvents
    ) -> Mark:
        outs = self._outcomes(action, ev)
        mark = self._observe(action, ev, outs)
        self.strategy.learn_costs(action.build, prep.seconds + (ev.build_s or 0.0), ev.run_s)
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
        self.record.steps.append(
            Step.of(
                action,
                ev,
                subject=info.subject,
                outcomes=tuple(outs),
                mark=mark,
                reason=reason,
                prepare_s=prep.seconds,
                checkout_s=prep.checkout_s,
                note=prep.note,
            )
        )
        self.save()
        events.step_finished(action.kind, info, mark, reason, ev.seconds)
        return mark

    def replay(self, steps: Iterable[Step]) -> None:
        """Rebuild the search from saved steps; nothing runs (``--resume``)."""
        for s in steps:
            self._observe(s.action, s.evidence, list(s.outcomes))

    # ------------------------------------------------------------------ the loop
    def run(self, events: BisectEvents) -> BisectResult:
        cands, left = self.strategy.progress()
        events.started(cands, left)
        if self.request.endpoint_runs is not None and not self.record.steps:
            from lnrepro.bisect.rates import describe

            events.note(describe(self.request.endpoint_runs))
        self.record.state = BisectState.RUNNING
        if self.strategy.error:  # resumed after the endpoints failed: the same error again
            self._endpoints_fail()
        try:
            if max(1, self.request.jobs) == 1:
                while (a := self.strategy.next_for(0, {})) is not None:
                    info = self._started(a, events)
                    ev, prep = self._execute(a, events)
                    self._record(a, info, ev, prep, events)
                    if self.strategy.error:
                        self._endpoints_fail()
            else:
                self._run_jobs(events)
        except EndpointsDoNotSeparate:
            raise
        except (KeyboardInterrupt, Terminated) as exc:
            self._stopped(
                BisectState.INTERRUPTED,
                "interrupted"
                if isinstance(exc, KeyboardInterrupt)
                else f"interrupted ({signal.Signals(exc.signum).name})",
            )
            raise
        except LnreproError as exc:
            self._stopped(BisectState.ABORTED, exc.one_line())
            raise
        except Exception as exc:
            self._stopped(BisectState.ABORTED, f"{type(exc).__name__}: {exc}")
            raise
        self.record.result = self._result()
        self.record.state = BisectState.COMPLETE
        self.save()
        return self.record.result

    def _stopped(self, st: BisectState, why: str) -> None:
        self.record.state, self.record.stop_reason = st, why
        with contextlib.suppress(LnreproError):
            self.save()

    def _started(self, a: Action, events: BisectEvents) -> CommitInfo:
        info = self.workspace.describe(a.sha)
        cands, left = self.strategy.progress()
        events.step_started(a.kind, info, cands, left)
        return info

    def _run_jobs(self, events: BisectEvents) -> None:
        """K jobs, asynchronously: an idle job gets its next action as soon as it finishes.

        Their builds and runs are not drawn, only their verdicts. When the answer is in, the
        actions still in flight are stopped (processes killed, containers removed) and dropped;
        on Ctrl-C or SIGTERM likewise, before the signal propagates.
        """
        jobs = self.request.jobs
        self.workspace.open(jobs)  # here, one at a time: git locks the repository to add one
        oracle = self.request.oracle
        if isinstance(oracle, RunOracleSpec) and oracle.backend.runner == "docker":
            from lnrepro.doors import container

            container.load_sdk()  # here, not in the jobs' threads at once
        pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="lnrepro-job")
        running: dict[int, tuple[Action, Future[tuple[Evidence, Prep]], CommitInfo]] = {}
        lost: set[int] = set()
        try:
            while True:
                for job in range(jobs):
                    if job in running or job in lost or self.strategy.done:
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
                    try:
                        ev, prep = fut.result()
                    except EngineLost as exc:
                        # that card host is gone: its step judged nothing, so the commit goes
                        # back to the search; the other jobs go on without this one
                        lost.add(j)
                        self.record.lost.append(LostJob(job=j, commit=a.sha, why=exc.one_line()))
                        self.save()
                        events.job_lost(j, info, exc.message)
                        if len(lost) == jobs:
                            raise
                        continue
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
        self.record.result = self._result()
        self.record.state = BisectState.COMPLETE
        self.save()
        skipped = [
            s.reason
            for s in self.record.steps
            if s.action.kind is ActionKind.ENDPOINT and s.mark is Mark.SKIP
        ]
        why = f" (last run: {skipped[-1]})" if skipped else ""
        raise self._with_record(
            EndpointsDoNotSeparate(
                f"{self.strategy.error}{why}: the bug does not separate the endpoints"
                if "merge base" not in (self.strategy.error or "")
                else f"{self.strategy.error}",
                "check --good/--bad and the test (or --pick the tests), or pass --no-confirm"
                if "merge base" not in (self.strategy.error or "")
                else "bisect for the fix instead: --find-fix with the merge base as --bad",
            )
        )

    def _with_record(self, exc: EndpointsDoNotSeparate) -> EndpointsDoNotSeparate:
        exc.record = self.record
        return exc

    def _result(self) -> BisectResult:
        kind = "first fixed commit" if self.request.find_fix else "first bad commit"
        r = self.strategy.answer(kind)
        kinds = [s.action.kind for s in self.record.steps]

        info = self.workspace.describe

        fb = r.first_bad
        parents = self.graph.parents.get(fb, ()) if fb else ()
        last_good_all = r.last_good_all or (
            tuple(parents) if r.search is SearchKind.BAYESIAN else ()
        )
        return replace(
            r,
            commit=info(fb) if fb else None,
            last_good=r.last_good or (last_good_all[0] if last_good_all else None),
            last_good_all=last_good_all,
            steps=kinds.count(ActionKind.STEP),
            endpoint_checks=kinds.count(ActionKind.ENDPOINT) + kinds.count(ActionKind.MERGE_BASE),
            signature=self.record.signature,
            prebuilt=r.prebuilt or sum(1 for s in self.record.steps if s.evidence.prebuilt),
            builds=r.builds
            or sum(
                1
                for s in self.record.steps
                if s.evidence.build_s is not None and not s.evidence.prebuilt
            ),
            candidates=tuple(info(c.sha) for c in r.candidates),
            posterior=tuple(replace(p, subject=info(p.sha).subject) for p in r.posterior),
        )


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


@dataclass(frozen=True)
class Range:
    """What a bisect searches: the DAG between the endpoints, with git's merge bases."""

    graph: Graph
    tip: str  # the search's "bad" (the fixed commit with --find-fix)
    bottoms: list[str]  # the search's "good" commits, merge bases included
    merge_bases: list[str]  # of a --good that is not an ancestor of --bad, to be tested first
    buggy: str


def ends(req: BisectRequest) -> tuple[str, list[str]]:
    """The search's "bad" and "good" commits: with --find-fix the fixed (new) state plays "bad",
    the older buggy commit plays "good"."""
    return (req.good[0], [req.bad]) if req.find_fix else (req.bad, list(req.good))


def commit_range(req: BisectRequest) -> Range:
    """The commit graph of a (validated, resolved) request; read from git, nothing written."""
    from lnrepro.errors import UsageError

    repo, bad = req.repo, req.bad
    tip, bottoms = ends(req)
    bases: list[str] = []
    for b in list(bottoms):
        if gitops.is_ancestor(repo, b, tip):
            continue
        for mb in gitops.merge_bases(repo, b, tip):  # as git: "a merge base must be tested"
            if mb not in bases and mb not in bottoms:
                bases.append(mb)
    if req.paths:  # path-limited, as git: the search's top is the newest commit touching PATHS
        top = gitops.git(repo, "rev-list", "-1", tip, "--", *req.paths).strip()
        if not top or any(gitops.is_ancestor(repo, top, b) for b in [*bottoms, *bases]):
            raise UsageError(
                f"no commit between the endpoints touches {' '.join(req.paths)}",
                "widen the paths, or drop them",
            )
        tip = top
    lines = gitops.rev_list_parents(
        repo, tip, [*bottoms, *bases], first_parent=req.first_parent, paths=req.paths
    )
    graph = graph_from_rev_list([*bottoms, *bases, *lines], first_parent=req.first_parent)
    return Range(graph, tip, [*bottoms, *bases], bases, bad if req.find_fix else tip)


def build(
    record: BisectRecord,
    oracles: list[Oracle],
    workspace: Workspace | None = None,
    rng: Range | None = None,
) -> Bisect:
    """The bisect for a record: its commit graph and its search (fresh, or for :meth:`replay`).
    By default the repository's own: its range read from git, its worktrees; a test passes a
    scripted ``workspace`` and a made-up ``rng``."""
    req = record.request
    rng = rng or commit_range(req)
    workspace = workspace or GitWorkspace(req.repo, req.picks, req.patches)
    artifacts = prebuilt.find(req.repo, req.prebuilt, rng.graph.order) if req.prebuilt else {}
    prefer = frozenset(artifacts)
    strategy: Strategy
    if req.confidence is not None:
        # numpy's, loaded only by a noisy search: 0.13 s of a git search's 0.5 s process here
        from lnrepro.bisect.bayes import BayesSearch, Rates

        rates = Rates(fixed=req.fail_rates) if req.fail_rates else Rates()
        if req.find_fix and req.fail_rates:  # the search's "bad" (fixed) state passes
            rates = Rates(fixed=(1 - req.fail_rates[1], 1 - req.fail_rates[0]))
        if (e := req.endpoint_runs) is not None:  # measured before: the prior, not a point
            bad, good = (e.bad_fails, e.bad_runs), (e.good_fails, e.good_runs)
            if req.find_fix:  # the search's "bad" is the fixed commit: its passes are its "fails"
                bad, good = (
                    (e.good_runs - e.good_fails, e.good_runs),
                    (e.bad_runs - e.bad_fails, e.bad_runs),
                )
            rates = rates.with_runs(bad, good)
        e = req.endpoint_runs
        measured = [req.bad] if req.find_fix else list(req.good)
        ran = e is not None and (e.bad_runs if req.find_fix else e.good_runs) > 0
        strategy = BayesSearch(
            rng.graph,
            rng.tip,
            rng.bottoms,
            req.confidence,
            rates,
            merge_bases=rng.merge_bases,
            prefer=prefer,
            measured=frozenset(measured if ran and len(measured) == 1 else ()),
        )
    else:
        strategy = GitSearch(
            rng.graph,
            rng.tip,
            rng.bottoms,
            confirm=req.confirm,
            merge_bases=rng.merge_bases,
            prefer=prefer,
        )
    return Bisect(record, oracles, rng.graph, strategy, rng.buggy, workspace, artifacts=artifacts)
