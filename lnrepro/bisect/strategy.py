"""How a bisect chooses what to test: one protocol, two strategies. Pure: no git, no I/O.

* :class:`GitSearch` — git bisect's rules (:class:`~lnrepro.bisect.core.Search`) with lnrepro's
  manners: the endpoints tested first (and, as git does, the merge base of a ``--good`` that is not
  an ancestor of ``--bad``), the culprit and its parents re-tested after, a (K+1)-ary
  split for K jobs, and runs that are only noise retried before a commit is skipped. With
  ``--repeat N`` a commit is bad when any of its N runs shows the bug's signature (``mark_of``).
* :class:`~lnrepro.bisect.bayes.BayesSearch` — ``--confidence``: the noisy search.

Both see the same thing for every action: the runs' outcomes as
:mod:`~lnrepro.bisect.evidence` judged them, already turned around for ``--find-fix`` (where
"bad" is the fixed state), or why the commit cannot be tested; neither judges a run itself. Replaying the recorded observations rebuilds either exactly (``--resume``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from lnrepro.bisect.core import Graph, Mark, Search
from lnrepro.bisect.evidence import (
    mark_of as mark_of,
)  # what runs mean: evidence's (bayes asks here)
from lnrepro.model.bisect import (
    Action,
    ActionKind,
    BisectResult,
    BuildKind,
    CommitInfo,
    ResultKind,
    RunOutcome,
    SearchKind,
)


class Strategy(Protocol):
    """What the bisect loop needs of a search: no isinstance, ever."""

    error: str | None
    name: str  # git | bayesian

    @property
    def done(self) -> bool: ...
    def runs_per_action(self) -> int | None:
        """Runs the oracle makes per action: None for its own ``--repeat``."""
        ...

    def next_batch(self, jobs: int) -> list[Action]: ...
    def next_for(self, job: int, busy: Mapping[int, str]) -> Action | None: ...
    def observe(
        self,
        action: Action,
        outcomes: Iterable[tuple[RunOutcome, str]],
        cannot_test: str | None = None,
    ) -> Mark: ...
    def equate(self, action: Action, other: str) -> Mark: ...
    def learn_costs(self, build: BuildKind, fixed_s: float | None, run_s: float | None) -> None:
        """A measured preparation (checkout + build) and run time (used by cost-aware searches)."""
        ...

    def answer(self, kind: str) -> BisectResult:
        """The result so far, commits named by sha (the loop adds subjects and authors)."""
        ...

    def progress(self) -> tuple[int, int]: ...  # candidates (or the 95% set), steps left
    def progress_note(self) -> str: ...  # its own word on progress ("": the counts say it)


def merge_base_error(sha: str, goods: Sequence[str]) -> str:
    """git's words when a merge base tests bad: the bug was fixed on the good side."""
    return (
        f"the merge base {sha[:12]} is bad: the bug was fixed between {sha[:12]} and "
        f"[{', '.join(g[:12] for g in goods)}]"
    )


@dataclass
class GitSearch:
    graph: Graph
    tip: str
    bottoms: list[str]
    confirm: bool = True
    retries: int = 2  # re-runs of a commit whose runs were all noise, before it is skipped
    second_chances: int = 2  # rounds of those retries again, for noise skips that hide the answer
    merge_bases: list[str] = field(default_factory=list)  # always tested first, as git does
    prefer: frozenset[str] = frozenset()  # commits with prebuilt artifacts: searched first
    search: Search = field(init=False)
    error: str | None = None
    name: str = "git"

    def __post_init__(self) -> None:
        self.search = Search(self.graph, self.tip, list(self.bottoms), prefer=self.prefer)
        self.tested: dict[tuple[ActionKind, str], Mark] = {}
        self.noisy: dict[tuple[ActionKind, str], int] = {}
        self.noise_skipped: set[str] = set()  # steps skipped because every run was noise
        self.revived: dict[str, int] = {}

    # ------------------------------------------------------------------ status
    def _ends(self) -> list[tuple[str, Mark, ActionKind]]:
        bases = [(m, Mark.GOOD, ActionKind.MERGE_BASE) for m in self.merge_bases]
        if not self.confirm:
            return bases
        goods = [
            (b, Mark.GOOD, ActionKind.ENDPOINT) for b in self.bottoms if b not in self.merge_bases
        ]
        return [(self.tip, Mark.BAD, ActionKind.ENDPOINT), *goods, *bases]

    def _confirms(self) -> list[str]:
        fb = self.search.first_bad()
        return [fb, *self.search.last_good()] if fb else []

    @property
    def done(self) -> bool:
        if self.error:
            return True
        if any((k, s) not in self.tested for s, _, k in self._ends()):
            return False
        if not self.search.done:
            return False
        return not self.confirm or all(
            (ActionKind.CONFIRM, s) in self.tested for s in self._confirms()
        )

    def runs_per_action(self) -> int | None:
        return None

    def progress(self) -> tuple[int, int]:
        return len(self.search.candidates()), self.search.steps_left()

    def progress_note(self) -> str:
        return ""

    # ------------------------------------------------------------------ choosing
    def _build(self, sha: str) -> BuildKind:
        return BuildKind.PREBUILT if sha in self.prefer else BuildKind.BUILD

    def next_batch(self, jobs: int = 1) -> list[Action]:
        if self.done:
            return []
        ends = [(s, k) for s, _, k in self._ends() if (k, s) not in self.tested]
        if ends:
            return [
                Action(job=i, sha=s, kind=k, build=self._build(s))
                for i, (s, k) in enumerate(ends[:jobs])
            ]
        if not self.search.done:
            return [
                Action(job=i, sha=s, kind=ActionKind.STEP, build=self._build(s))
                for i, s in enumerate(self.search.next_batch(jobs))
            ]
        todo = [s for s in self._confirms() if (ActionKind.CONFIRM, s) not in self.tested]
        return [
            Action(job=i, sha=s, kind=ActionKind.CONFIRM, build=self._build(s))
            for i, s in enumerate(todo[:jobs])
        ]

    def next_for(self, job: int, busy: Mapping[int, str]) -> Action | None:
        """Idle ``job``'s next commit while the others test ``busy``: the split point of a
        (len(busy)+1)-ary search that nobody is testing yet."""
        if self.done:
            return None
        running = set(busy.values())
        for a in self.next_batch(len(running) + 1):
            if a.sha not in running:
                return replace(a, job=job)
        return None

    # ------------------------------------------------------------------ learning
    def observe(
        self,
        action: Action,
        outcomes: Iterable[tuple[RunOutcome, str]],
        cannot_test: str | None = None,
    ) -> Mark:
        key = (action.kind, action.sha)
        mark = None if cannot_test else mark_of([o for o, _ in outcomes])
        if mark is None and not cannot_test:  # only noise: try again, a few times
            self.noisy[key] = self.noisy.get(key, 0) + 1
            if self.noisy[key] <= self.retries:
                return Mark.SKIP
            if action.kind is ActionKind.STEP:
                self.noise_skipped.add(action.sha)
        out = self._settle(action, mark or Mark.SKIP)
        self._second_chance()
        return out

    def _second_chance(self) -> None:
        """When skips leave several candidates and some of them were skipped only for noise,
        those are tested again (``second_chances`` more rounds of retries): at a 25% flake rate
        three noisy runs in a row happen to one commit in 64, and it may be the culprit."""
        if not self.search.done or self.search.first_bad() is not None:
            return
        for sha in sorted(self.noise_skipped & set(self.search.candidates())):
            if self.revived.get(sha, 0) < self.second_chances:
                self.revived[sha] = self.revived.get(sha, 0) + 1
                self.noise_skipped.discard(sha)
                self.noisy.pop((ActionKind.STEP, sha), None)
                del self.search.marks[sha]

    def equate(self, action: Action, other: str) -> Mark:
        """``action``'s commit tests exactly what ``other`` did (same inputs): same verdict."""
        out = self._settle(action, self.verdict(other) or Mark.SKIP)
        self._second_chance()
        return out

    def learn_costs(self, build: BuildKind, fixed_s: float | None, run_s: float | None) -> None:
        return None  # git's rule does not weigh costs

    def verdict(self, sha: str) -> Mark | None:
        """What is known of ``sha``: its mark in the search, or from its endpoint/confirm test."""
        m = self.search.marks.get(sha)
        if m in (Mark.GOOD, Mark.BAD):
            return m
        return next(
            (m for (_, s), m in self.tested.items() if s == sha and m is not Mark.SKIP), None
        )

    def _settle(self, action: Action, mark: Mark) -> Mark:
        self.tested[(action.kind, action.sha)] = mark
        if action.kind is ActionKind.MERGE_BASE:
            if mark is Mark.BAD:
                self.error = merge_base_error(
                    action.sha, [b for b in self.bottoms if b not in self.merge_bases]
                )
        elif action.kind is ActionKind.ENDPOINT:
            want = Mark.BAD if action.sha == self.tip else Mark.GOOD
            if mark is not want:
                self.error = (
                    f"the {'bad' if want is Mark.BAD else 'good'} endpoint {action.sha[:12]} "
                    f"tested {mark.value}"
                )
        elif action.kind is ActionKind.STEP:
            self.search.record(action.sha, mark)
        return mark

    # ------------------------------------------------------------------ the answer
    def answer(self, kind: str) -> BisectResult:
        fb = self.search.first_bad()
        if fb is None:
            return BisectResult(
                kind=ResultKind(kind),
                search=SearchKind(self.name),
                error=self.error,
                candidates=tuple(CommitInfo(sha=c) for c in self.search.candidates()),
                reason=self.error or "skipped commits hide which candidate is first",
            )
        good = self.search.last_good()
        confirms = {s: m for (k, s), m in self.tested.items() if k is ActionKind.CONFIRM}
        wanted = [(fb, Mark.BAD), *((g, Mark.GOOD) for g in good)]
        got = [(confirms.get(s), w) for s, w in wanted]
        confirmed: bool | None = None  # not re-tested, or a re-test said nothing (noise)
        if any(m in (Mark.GOOD, Mark.BAD) and m is not w for m, w in got):
            confirmed = False  # a re-test contradicts the search
        elif confirms and all(m is w for m, w in got):
            confirmed = True
        return BisectResult(
            kind=ResultKind(kind),
            search=SearchKind(self.name),
            first_bad=fb,
            last_good=good[0] if good else None,
            last_good_all=tuple(good),
            confirmed=confirmed,
            error=self.error,
        )
