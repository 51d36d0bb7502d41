"""The shrink search: from a test (failing, flaky or passing) to the loudest, smallest case that
fails every time. Pure: candidates are judged through an injected :class:`Evaluator` (the
emulator in-process, a ``--command``, a checkout's probe) and :class:`Control` (the correct
kernel's model), so the search runs in tests on scripted verdicts.

The order of the criteria is the issue's: deterministic, then loud, then small.

1. **Measure the start** ``start_runs`` times (random data: a fresh draw each run). Its pass rate
   sets the repeats ``k`` (:func:`repeats_for`): a candidate *fails* only when it fails ``k``
   runs in a row, and the correct kernel's model passes it (else it is *inadmissible*: the test
   would ask more than bf16 gives, and would fail on a fixed kernel too).
2. **Loud**: for each data kind, loudest first (constant, few-valued, structured, random), look
   for a failing case on a few probe shapes (the start's, and one row with O(log Wt) feature
   counts: the kernel reduces each row on its own; the small phase then searches the rows from
   wherever the failure is); a one-row probe the correct kernel's model fails is moved to the
   widest smaller feature count the model passes. The first kind that fails anywhere is the
   target.
3. **Small**: with data at least that loud, per axis (features, seq, batch, heads) a binary
   search down the axis's ladder (:mod:`.space`); then every one-step-smaller neighbour is tried,
   and the search moves to any that fails, until none does (1-minimal, as delta debugging's
   ddmin guarantees). A partial last tile is dropped first whenever the failure survives it.
4. Among the target kind's variants at the final shape, the largest margin wins.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum
from statistics import NormalDist
from typing import Protocol

from lnrepro.model.case import (
    TILE,
    Axis,
    Case,
    DataKind,
    DataSpec,
    Judged,
    Neighbour,
    Shape,
    Status,
    data_menu,
)
from lnrepro.model.shrink import ShrinkEvents, StartMeasure
from lnrepro.model.stats import wilson
from lnrepro.shrink import space

MAX_REPEATS = 50
MAX_NEAR = 1024  # feature counts the model checks for an admissible one near a probe


class RunVerdict(str, Enum):
    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"  # could not be tested (exit 125, a timeout)


@dataclass(frozen=True)
class Outcome:
    """One run of one case."""

    verdict: RunVerdict
    margin: float | None = None  # max over tensors of (needed atol / atol); None: not measured
    detail: str = ""


class Evaluator(Protocol):
    """Runs the code under test on a case."""

    @property
    def name(self) -> str: ...

    @property
    def deterministic(self) -> bool:
        """The same inputs always give the same outcome (a model; not a card)."""
        ...

    def evaluate(self, case: Case, draw: int) -> Outcome: ...

    def rerun(self, case: Case) -> list[str]:
        """A command line that runs exactly ``case``."""
        ...

    def why(self, smaller: Case, result: Case) -> str | None:
        """Why ``smaller`` passes where ``result`` fails, when this evaluator can tell."""
        ...


class Control(Protocol):
    """The correct kernel's model: does it pass ``case`` (draw ``draw`` of its data)?"""

    def passes(self, case: Case, draw: int) -> bool: ...


def order(j: Judged) -> tuple[int, int, bool, float]:
    """What makes a case better, first to last: a louder data kind, fewer tiles (rows x Wt),
    whole tiles before a kept partial one, a larger margin."""
    s = j.case.shape
    return (j.case.data.kind.rank, s.rows * s.tiles, s.features % TILE != 0, -(j.margin or 0.0))


class _Budget(Exception):
    """The evaluation budget is spent: stop with the best case so far."""


def repeats_for(runs: int, passes: int, confidence: float) -> int:
    """How many runs in a row a candidate must fail to count as deterministic.

    A candidate as likely to pass as the start (at least the lower end of its pass rate's Wilson
    interval at ``confidence``) must be caught passing at least once with ``confidence``:
    ``(1 - p_lo)^k <= 1 - confidence``. A start that never passed gives no rate: a candidate then
    fails as many runs in a row as the start did.
    """
    if runs <= 0 or passes <= 0:
        return max(1, min(MAX_REPEATS, runs))
    z = NormalDist().inv_cdf((1 + confidence) / 2)
    lo, _ = wilson(passes, runs, z)
    if lo >= 1.0:
        return 1
    k = math.ceil(math.log(1 - confidence) / math.log(1 - lo))
    return max(1, min(MAX_REPEATS, k))


@dataclass
class Search:
    """One shrink. ``run()`` returns the result (None: nothing fails); the counters and the
    neighbours are on the object afterwards."""

    start: Case
    evaluator: Evaluator
    control: Control
    confidence: float = 0.95
    start_runs: int = 5
    budget: int = 600
    seed: int = 0
    events: ShrinkEvents = field(default_factory=ShrinkEvents)

    repeats: int = 1
    evaluations: int = 0
    control_checks: int = 0
    cache: dict[Case, Judged] = field(default_factory=dict)
    admissible: dict[Case, bool] = field(default_factory=dict)
    best: Judged | None = None
    keep: int = 0  # the partial last tile's width while it matters
    smaller: list[Neighbour] = field(default_factory=list)
    lower_bounds: list[Axis] = field(default_factory=list)
    budget_exhausted: bool = False
    measured: StartMeasure | None = None
    known_start: tuple[int, int] | None = None  # (runs, passes) a run measured

    # ------------------------------------------------------------------ running cases
    def _eval(self, case: Case, draw: int) -> Outcome:
        if self.evaluations >= self.budget:
            raise _Budget
        self.evaluations += 1
        return self.evaluator.evaluate(case, draw)

    def _control(self, case: Case, draw: int) -> bool:
        self.control_checks += 1
        return self.control.passes(case, draw)

    def judge(self, case: Case) -> Judged:
        """``case``'s status: fails every one of ``repeats`` runs (and the model passes it)?"""
        if case in self.cache:  # judged before (in this search, or a saved one resumed)
            j = self.cache[case]
            if j.status is Status.FAILS and self._better(j):
                self.best = j
            return j
        runs, margin, detail = 0, None, ""
        status = Status.FAILS
        identical = case.data.same_every_draw and self.evaluator.deterministic
        for draw in range(1 if identical else self.repeats):
            o = self._eval(case, draw)
            runs += 1
            detail = o.detail or detail
            if o.verdict is RunVerdict.SKIP:
                status = Status.SKIPPED
                break
            if o.verdict is RunVerdict.PASS:
                status = Status.PASSES if draw == 0 else Status.FLAKY
                margin = o.margin if draw == 0 else margin
                break
            checked = draw == 0 or not case.data.same_every_draw
            if checked and not self._control(case, draw):
                status = Status.INADMISSIBLE
                margin = o.margin
                break
            if o.margin is not None:
                margin = o.margin if margin is None else min(margin, o.margin)
        j = Judged(case, status, margin, runs, detail)
        self.cache[case] = j
        if status is Status.FAILS and self._better(j):
            self.best = j
        self.events.judged(j, len(self.cache), self.evaluations, self.best)
        return j

    def _better(self, j: Judged) -> bool:
        """``j`` before the best so far, in the search's order (:func:`order`)."""
        return self.best is None or order(j) < order(self.best)

    def case(self, shape: Shape, data: DataSpec) -> Case:
        s = self.start
        return Case(shape, data, s.tolerance, s.origin, op=s.op, pcc=s.pcc)

    @property
    def tiled_rows(self) -> bool:
        return self.start.op.tiled_rows

    def fails_at(self, shape: Shape, rank: int) -> Judged | None:
        """The first data variant (loudest first) of kind rank <= ``rank`` failing at ``shape``."""
        for data in data_menu(self.seed):
            if data.kind.rank <= rank:
                j = self.judge(self.case(shape, data))
                if j.status is Status.FAILS:
                    return j
        return None

    # ------------------------------------------------------------------ the phases
    def measure_start(self, known: tuple[int, int] | None = None) -> StartMeasure:
        """The start's pass rate: ``known`` (runs, passes) as a run measured it, else measured."""
        if known is not None:
            runs, passes = known
            admissible = passes == runs or self._control(self.start, 0)
            self.measured = StartMeasure(self.start, runs, passes, wilson(passes, runs), admissible)
            self.repeats = repeats_for(runs, passes, self.confidence)
            self.events.started(self.measured, self.repeats)
            return self.measured
        passes = 0
        first_fail: Outcome | None = None
        for draw in range(self.start_runs):
            o = self._eval(self.start, draw)
            passes += o.verdict is RunVerdict.PASS
            if o.verdict is RunVerdict.FAIL and first_fail is None:
                first_fail = o
            if self.start.data.same_every_draw and self.evaluator.deterministic:
                passes *= self.start_runs  # the same inputs: every run is this one
                break
        runs = self.start_runs
        admissible = first_fail is None or self._control(self.start, 0)
        self.measured = StartMeasure(self.start, runs, passes, wilson(passes, runs), admissible)
        self.repeats = repeats_for(runs, passes, self.confidence)
        self.events.started(self.measured, self.repeats)
        return self.measured

    def probe_shapes(self) -> list[Shape]:
        s = self.start.shape
        r = space.partial(s.features)
        feats = sorted(
            {
                *space.sparse(space.feature_values(s.features, 0)),
                *space.sparse(space.feature_values(s.features, r)),
                s.features,
            }
        )
        rows = min(s.seq, TILE) if self.tiled_rows else 1  # one row, or one tile of rows
        one_row = [Shape(1, rows, 1, f) for f in feats]
        return list(dict.fromkeys([s, *one_row]))

    def loud(self) -> Judged | None:
        """The loudest kind that fails on some probe shape, and that first failing case."""
        shapes = self.probe_shapes()
        for kind in DataKind:
            self.events.phase(f"looking for {kind.value} data that fails")
            for shape in shapes:
                for data in data_menu(self.seed):
                    if data.kind is kind:
                        j = self.judge(self.case(shape, data))
                        if j.status is Status.INADMISSIBLE and shape.rows == 1:
                            j = self.admissible_near(j.case) or j
                        if j.status is Status.FAILS:
                            return j
        return None

    def admissible_near(self, case: Case) -> Judged | None:
        """The case at the widest feature count below ``case``'s (same ladder) that the correct
        kernel's model passes, judged: where the start's features ask more than bf16 gives with
        this data (constant data at most feature counts: 1/N is truncated to bf16 and rstd =
        1000), a nearby count often does not. Found with the model alone (cheap at one row)."""
        shape = case.shape
        values = space.feature_values(shape.features, space.partial(shape.features))
        for f in reversed(values[-MAX_NEAR:]):
            near = self.case(shape.with_(Axis.FEATURES, f), case.data)
            if self._admissible(near):
                return self.judge(near)
        return None

    def _admissible(self, case: Case) -> bool:
        """The model's verdict on draw 0, remembered (probes scan overlapping ladders)."""
        if case not in self.admissible:
            self.admissible[case] = self._control(case, 0)
        return self.admissible[case]

    def descend(self, cur: Judged, axis: Axis) -> Judged:
        """Binary search down ``axis``: the smallest value that still fails (if it is monotone;
        the neighbour check catches what it is not)."""
        rank = cur.case.data.kind.rank
        values = space.ladder(axis, cur.case.shape, self.keep, self.tiled_rows)
        if not values:
            return cur
        shape = cur.case.shape
        j = self.fails_at(shape.with_(axis, values[0]), rank)
        if j is not None:
            return j
        lo, hi, found = 0, len(values), cur
        while hi - lo > 1:
            mid = (lo + hi) // 2
            j = self.fails_at(shape.with_(axis, values[mid]), rank)
            if j is not None:
                hi, found = mid, j
            else:
                lo = mid
        return found

    def small(self, cur: Judged) -> Judged:
        self.keep = space.partial(cur.case.shape.features)
        while True:
            self.events.phase(f"shrinking {cur.case.shape_label}")
            rank = cur.case.data.kind.rank
            if self.keep and cur.case.shape.features > TILE:  # whole tiles if they fail too
                shape = cur.case.shape
                j = self.fails_at(shape.with_(Axis.FEATURES, shape.features - self.keep), rank)
                if j is not None:
                    cur, self.keep = j, 0
            for axis in space.AXES:
                cur = self.descend(cur, axis)
            moved = False
            for step in space.neighbours(cur.case.shape, self.keep, self.tiled_rows):
                j = self.fails_at(cur.case.shape.with_(step.axis, step.value), rank)
                if j is not None:
                    cur, moved = j, True
                    if step.words == "the partial tile dropped":
                        self.keep = 0
                    break
            if not moved:
                return cur

    def loudest_variant(self, cur: Judged) -> Judged:
        best = cur
        for data in data_menu(self.seed):
            if data.kind is cur.case.data.kind and data != cur.case.data:
                j = self.judge(self.case(cur.case.shape, data))
                if j.status is Status.FAILS and (j.margin or 0.0) > (best.margin or 0.0):
                    best = j
        return best

    def boundary(self, result: Judged) -> None:
        """The one-step-smaller neighbours, judged with the result's own data."""
        shape = result.case.shape
        for step in space.neighbours(shape, self.keep, self.tiled_rows):
            j = self.judge(self.case(shape.with_(step.axis, step.value), result.case.data))
            why = _status_why(j)
            if j.status is Status.PASSES:
                why = self.evaluator.why(j.case, result.case) or why
            self.smaller.append(
                Neighbour(step.axis, step.words, j, why, tuple(self.evaluator.rerun(j.case)))
            )
        self.lower_bounds = [a for a in space.AXES if space.lower_bound(shape, a, self.tiled_rows)]

    def run(self) -> Judged | None:
        try:
            self.measure_start(self.known_start)
            found = self.loud()
            if found is None:
                return None
            result = self.loudest_variant(self.small(found))
            self.boundary(result)
            return result
        except _Budget:
            self.budget_exhausted = True
            return self.best


def _status_why(j: Judged) -> str:
    return {
        Status.PASSES: "",
        Status.FLAKY: f"fails only some of its runs ({j.runs} run)",
        Status.INADMISSIBLE: "fails on the correct kernel's model too: the tolerance asks more "
        "than bf16 gives there",
        Status.SKIPPED: "could not be tested",
        Status.FAILS: "FAILS: the result is not minimal",
    }[j.status]
