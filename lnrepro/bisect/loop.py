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
from collections.abc import Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from lnrepro.bisect import prebuilt
from lnrepro.bisect.core import Graph, Mark, graph_from_rev_list
from lnrepro.bisect.evidence import Meaning, Sense, why
from lnrepro.bisect.oracle import Oracle, Trial
from lnrepro.bisect.strategy import GitSearch, Strategy
from lnrepro.bisect.workspace import GitWorkspace, Prep, Workspace
from lnrepro.doors import gitops, proc
from lnrepro.errors import EndpointsDoNotSeparate, EngineLost, LnreproError, Terminated
from lnrepro.model.bisect import (
    Action,
    ActionKind,
    BisectRecord,
    BisectResult,
    BisectState,
    CommitInfo,
    Evidence,
    LearnedRates,
    LostJob,
    RunOutcome,
    SearchKind,
    Step,
)
from lnrepro.model.events import BisectEvents, Events
from lnrepro.model.requests import (
    CommandOracleSpec,
    Margin,
    ResolvedBisect,
    RunOracleSpec,
    TtMetalSpec,
)

if TYPE_CHECKING:
    from lnrepro.bisect.bayes import BayesSearch


@dataclass
class Bisect:
    record: BisectRecord
    oracles: list[Oracle]  # one per job (its own device or Docker engine)
    graph: Graph
    strategy: Strategy
    meaning: Meaning  # what a run means (signature, hangs, crashes, --find-fix)
    workspace: Workspace  # where a commit's tree is made ready and the record kept
    inputs: dict[str, str] = field(default_factory=dict)  # input hash -> a commit tested with it
    _events: BisectEvents | None = None  # where a live step's notes go (none on replay)
    artifacts: dict[str, Path] = field(default_factory=dict)  # --prebuilt: commit -> build tree

    @property
    def request(self) -> ResolvedBisect:
        return self.record.request

    @property
    def repo(self) -> Path:
        return self.request.repo

    def save(self) -> None:
        self.workspace.save(self.record)

    def _bayes(self) -> BayesSearch | None:
        """The Bayesian search, when it is the strategy (numpy is loaded only then)."""
        return self.strategy if getattr(self.strategy, "name", "") == "bayesian" else None  # type: ignore[return-value]

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
        trial = Trial(worktree=ready.tree, events=events, runs=runs, known=known, prebuilt=tree)
        return self.oracles[action.job].evaluate(trial), prep

    def _observe(self, action: Action, ev: Evidence, outs: list[tuple[RunOutcome, str]]) -> Mark:
        """Tell the strategy what one action showed (a live step and a replayed one alike)."""
        if ev.same_as:
            return self.strategy.equate(action, ev.same_as)
        if (bayes := self._bayes()) is not None:
            margins = [a.margins for a in ev.attempts] if len(ev.attempts) == len(outs) else None
            decided = bayes.decision
            mark = bayes.observe(action, outs, ev.cannot_test, margins=margins)
            if decided is None and bayes.decision is not None and self._events:
                self._events.note(bayes.decision.why)
        else:
            mark = self.strategy.observe(action, outs, ev.cannot_test)
        if ev.inputs and mark is not Mark.SKIP:
            self.inputs.setdefault(ev.inputs, action.sha)
        return mark

    def _record(
        self, action: Action, info: CommitInfo, ev: Evidence, prep: Prep, events: BisectEvents
    ) -> Mark:
        self.record.signature, outs = self.meaning.judge(
            action.sha, ev, self.record.signature, self.record.steps
        )
        self._events = events
        mark = self._observe(action, ev, outs)
        self.strategy.learn_costs(action.build, prep.seconds + (ev.build_s or 0.0), ev.run_s)
        reason = why(ev, outs, mark)
        if (bayes := self._bayes()) is not None:
            said = bayes.margin_note(outs, [a.margins for a in ev.attempts])
            if said:
                reason = f"{reason}; {said}"  # a masked bug's step: its verdict says nothing
            if note := bayes.drift_note(action.sha):
                reason = f"{reason}; {note}"  # flagged in the step, not forced to a side
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
        events.started(*self.strategy.progress(), self.strategy.progress_note())
        if (bayes := self._bayes()) is not None and not self.record.steps:
            d = bayes.decision
            events.note(
                d.why
                if d is not None
                else f"margins: --margin {bayes.margin.value}, learning each quantity's "
                f"margins from {2 * bayes.margin_runs} runs of the endpoints first (fewer when "
                "they cannot separate)"
            )
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
            if self.strategy.error:  # the search stopped at an endpoint (no action left)
                self._endpoints_fail()
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
        note = self.strategy.progress_note()
        if note:
            events.step_started(a.kind, info, cands, left, note)
        else:
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
        if (
            isinstance(oracle, RunOracleSpec)
            and isinstance(oracle.backend, TtMetalSpec)
            and oracle.backend.runner == "docker"
        ):
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
                teacher = self.meaning.buggy  # its runs teach the signature: recorded first
                ready = sorted(
                    (j for j, r in running.items() if r[1] in finished),
                    key=lambda j: running[j][0].sha != teacher,
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
        if "merge base" in (self.strategy.error or ""):
            message = f"{self.strategy.error}"
            fix = "bisect for the fix instead: --find-fix with the merge base as --bad"
        else:
            message = f"{self.strategy.error}{why}: the bug does not separate the endpoints"
            fix = "check --good/--bad and the test (or --pick the tests), or pass --no-confirm"
            if isinstance(self.request.oracle, CommandOracleSpec):  # nothing to pick there
                fix = (
                    "check --good/--bad and the command: it runs in each commit's own worktree, "
                    "not here (name its files by absolute path), or pass --no-confirm"
                )
        exc = EndpointsDoNotSeparate(message, fix)
        exc.record = self.record
        raise exc

    def _result(self) -> BisectResult:
        sense = self.meaning.sense
        r = self.strategy.answer(sense.kind)
        kinds = [s.action.kind for s in self.record.steps]

        info = self.workspace.describe

        fb = r.first_bad
        parents = self.graph.parents.get(fb, ()) if fb else ()
        last_good_all = r.last_good_all or (
            tuple(parents) if r.search is SearchKind.BAYESIAN else ()
        )
        rates = None
        if r.rates:
            bad, good = sense.rates((r.rates.bad, r.rates.good))  # the bug's: buggy, clean
            rates = LearnedRates(bad=bad, good=good)
        return replace(
            r,
            commit=info(fb) if fb else None,
            last_good=r.last_good or (last_good_all[0] if last_good_all else None),
            last_good_all=last_good_all,
            steps=kinds.count(ActionKind.STEP),
            endpoint_checks=kinds.count(ActionKind.ENDPOINT) + kinds.count(ActionKind.MERGE_BASE),
            signature=self.record.signature,
            rates=rates,
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
    # the search's "good" commits (--bad, first, with --find-fix), merge bases last
    bottoms: list[str]
    merge_bases: list[str]  # of a --good that is not an ancestor of --bad, to be tested first


def commit_range(req: ResolvedBisect) -> Range:
    """The commit graph of a (validated, resolved) request; read from git, nothing written."""
    from lnrepro.errors import UsageError

    repo, sense = req.repo, Sense.of(req)
    tip, bottoms = sense.ends(req.good, req.bad)
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
    return Range(graph, tip, [*bottoms, *bases], bases)


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
    sense = Sense.of(req)
    strategy: Strategy
    if req.confidence is not None or req.margin is Margin.ON:
        # numpy's, loaded only by a noisy search: 0.13 s of a git search's 0.5 s process here
        from lnrepro.bisect.bayes import BayesSearch
        from lnrepro.bisect.evidence import Rates

        rates = Rates(fixed=sense.rates(req.fail_rates)) if req.fail_rates else Rates()
        # the endpoints' runs measured before: the rates' prior, and the search's "good" end
        # then needs no check of its own
        measured: list[str] = []
        if (e := req.endpoint_runs) is not None:
            bad, good = sense.counts(e)
            rates = rates.with_runs(bad, good)
            measured = sense.ends(req.good, req.bad)[1] if good[1] > 0 else []
        strategy = BayesSearch(
            rng.graph,
            rng.tip,
            rng.bottoms,
            req.confidence if req.confidence is not None else 0.95,
            rates,
            merge_bases=rng.merge_bases,
            prefer=prefer,
            measured=frozenset(measured if len(measured) == 1 else ()),
            margin=req.margin,
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
    meaning = Meaning.of(req, sense.buggy(rng.tip, rng.bottoms))
    return Bisect(record, oracles, rng.graph, strategy, meaning, workspace, artifacts=artifacts)
