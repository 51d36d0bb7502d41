"""How a bisect chooses what to test: one protocol, two strategies. Pure: no git, no I/O.

* :class:`GitSearch` — git bisect's rules (:class:`~lnrepro.bisect.core.Search`) with lnrepro's
  manners: the endpoints tested first, the culprit and its parents re-tested after, a (K+1)-ary
  split for K jobs, and runs that are only noise retried before a commit is skipped. With
  ``--repeat N`` a commit is bad when any of its N runs shows the bug's signature.
* :class:`~lnrepro.bisect.bayes.BayesSearch` — ``--confidence``: the noisy search.

Both see the same thing for every action: the runs' outcomes (:mod:`~lnrepro.bisect.evidence`),
already turned around for ``--find-fix`` (where "bad" is the fixed state), or why the commit
cannot be tested. Replaying the recorded observations rebuilds either exactly (``--resume``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from lnrepro.bisect.core import Graph, Mark, Search
from lnrepro.bisect.evidence import RunOutcome


@dataclass(frozen=True)
class Action:
    job: int  # which worktree/device runs it
    sha: str
    kind: str  # endpoint | step | confirm
    build: str = "build"  # none (built there now) | rebuild (built before) | build (new)

    def to_json(self) -> dict[str, Any]:
        return {"job": self.job, "sha": self.sha, "kind": self.kind, "build": self.build}


class Strategy(Protocol):
    error: str | None

    @property
    def done(self) -> bool: ...
    def next_batch(self, jobs: int) -> list[Action]: ...
    def next_for(self, job: int, busy: Mapping[int, str]) -> Action | None: ...
    def observe(
        self,
        action: Action,
        outcomes: Iterable[tuple[RunOutcome, str]],
        cannot_test: str | None = None,
    ) -> Mark: ...
    def equate(self, action: Action, other: str) -> Mark: ...
    def result(self) -> dict[str, Any]: ...
    def progress(self) -> tuple[int, int]: ...  # candidates (or the 95% set), steps left


def mark_of(outcomes: Sequence[RunOutcome]) -> Mark | None:
    """git's verdict from runs: bad if any shows the bug, good if one passed, else none yet."""
    if RunOutcome.FAIL in outcomes:
        return Mark.BAD
    if RunOutcome.PASS in outcomes:
        return Mark.GOOD
    return None


@dataclass
class GitSearch:
    graph: Graph
    tip: str
    bottoms: list[str]
    confirm: bool = True
    retries: int = 2  # re-runs of a commit whose runs were all noise, before it is skipped
    search: Search = field(init=False)
    error: str | None = None

    def __post_init__(self) -> None:
        self.search = Search(self.graph, self.tip, list(self.bottoms))
        self.tested: dict[tuple[str, str], Mark] = {}  # (kind, sha) -> mark
        self.noisy: dict[tuple[str, str], int] = {}

    # ------------------------------------------------------------------ status
    def _ends(self) -> list[tuple[str, Mark]]:
        return [(self.tip, Mark.BAD), *((b, Mark.GOOD) for b in self.bottoms)]

    def _confirms(self) -> list[str]:
        fb = self.search.first_bad()
        return [fb, *self.search.last_good()] if fb else []

    @property
    def done(self) -> bool:
        if self.error:
            return True
        if self.confirm and any(("endpoint", s) not in self.tested for s, _ in self._ends()):
            return False
        if not self.search.done:
            return False
        return not self.confirm or all(("confirm", s) in self.tested for s in self._confirms())

    def progress(self) -> tuple[int, int]:
        return len(self.search.candidates()), self.search.steps_left()

    # ------------------------------------------------------------------ choosing
    def next_batch(self, jobs: int = 1) -> list[Action]:
        if self.done:
            return []
        if self.confirm:
            ends = [s for s, _ in self._ends() if ("endpoint", s) not in self.tested]
            if ends:
                return [Action(i, s, "endpoint") for i, s in enumerate(ends[:jobs])]
        if not self.search.done:
            return [Action(i, s, "step") for i, s in enumerate(self.search.next_batch(jobs))]
        todo = [s for s in self._confirms() if ("confirm", s) not in self.tested]
        return [Action(i, s, "confirm") for i, s in enumerate(todo[:jobs])]

    def next_for(self, job: int, busy: Mapping[int, str]) -> Action | None:
        """Idle ``job``'s next commit while the others test ``busy``: the split point of a
        (len(busy)+1)-ary search that nobody is testing yet."""
        if self.done:
            return None
        running = set(busy.values())
        for a in self.next_batch(len(running) + 1):
            if a.sha not in running:
                return Action(job, a.sha, a.kind)
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
        return self._settle(action, mark or Mark.SKIP)

    def equate(self, action: Action, other: str) -> Mark:
        """``action``'s commit tests exactly what ``other`` did (same inputs): same verdict."""
        mark = self.verdict(other) or Mark.SKIP
        return self._settle(action, mark)

    def verdict(self, sha: str) -> Mark | None:
        """What is known of ``sha``: its mark in the search, or from its endpoint/confirm test."""
        m = self.search.marks.get(sha)
        if m in (Mark.GOOD, Mark.BAD):
            return m
        return next(
            (m for (_, s), m in self.tested.items() if s == sha and m is not Mark.SKIP), None
        )

    def _settle(self, action: Action, mark: Mark) -> Mark:
        key = (action.kind, action.sha)
        self.tested[key] = mark
        if action.kind == "endpoint":
            want = dict(self._ends())[action.sha]
            if mark is not want:
                self.error = (f"the {'bad' if want is Mark.BAD else 'good'} endpoint {action.sha[:12]} "
                              f"tested {mark.value}")  # fmt: skip
        elif action.kind == "step":
            self.search.record(action.sha, mark)
        return mark

    # ------------------------------------------------------------------ the answer
    def result(self) -> dict[str, Any]:
        fb = self.search.first_bad()
        if fb is None:
            return {"first_bad": None, "candidates": self.search.candidates(),
                    "reason": "skipped commits hide which candidate is first"}  # fmt: skip
        good = self.search.last_good()
        confirms = {s: m for (k, s), m in self.tested.items() if k == "confirm"}
        wanted = [(fb, Mark.BAD), *((g, Mark.GOOD) for g in good)]
        got = [(confirms.get(s), w) for s, w in wanted]
        confirmed: bool | None = None  # not re-tested, or a re-test said nothing (noise)
        if any(m in (Mark.GOOD, Mark.BAD) and m is not w for m, w in got):
            confirmed = False  # a re-test contradicts the search
        elif confirms and all(m is w for m, w in got):
            confirmed = True
        return {"first_bad": fb, "last_good_all": good, "confirmed": confirmed}
