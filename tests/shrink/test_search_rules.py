"""The rules of shrink's search (lnrepro.shrink.core and .space), one by one, on scripted worlds:
how many runs make a case deterministic, how a case is judged, which shapes are probed, how a
case the correct kernel fails is moved to one it passes, the ladders and the one-step-smaller
neighbours, and the words each neighbour is reported with. Pure, in process."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from lnrepro.model.case import TILE, Axis, Case, DataKind, DataSpec, Judged, OpKind, Shape, Status
from lnrepro.model.shrink import ShrinkEvents, StartMeasure
from lnrepro.model.stats import wilson
from lnrepro.shrink import space
from lnrepro.shrink.core import (
    MAX_REPEATS,
    Outcome,
    RunVerdict,
    Search,
    _Budget,
    _status_why,
    order,
    repeats_for,
)
from tests.shrink.test_core import START, TOL, Scripted

CONST = DataSpec(DataKind.CONSTANT, "bugrepro", 1.0, 1.0, 0.5)
RANDOM = DataSpec(DataKind.RANDOM, "uniform")


@dataclass
class Told:
    """An evaluator that says what it is told, run by run; it records every case it ran."""

    verdicts: list[Outcome]
    deterministic: bool = False
    name: str = "told"
    ran: list[tuple[Case, int]] = field(default_factory=list)

    def evaluate(self, case: Case, draw: int) -> Outcome:
        self.ran.append((case, draw))
        return self.verdicts[min(draw, len(self.verdicts) - 1)]

    def rerun(self, case: Case) -> list[str]:
        return ["rerun", case.shape.label]

    def why(self, smaller: Case, result: Case) -> str | None:
        return None


@dataclass
class Model:
    """The correct kernel's model: passes unless ``bad`` says otherwise; counts its checks."""

    bad: Callable[[Case, int], bool] = lambda c, d: False
    seen: list[tuple[Case, int]] = field(default_factory=list)

    def passes(self, case: Case, draw: int) -> bool:
        self.seen.append((case, draw))
        return not self.bad(case, draw)


F = RunVerdict.FAIL
P = RunVerdict.PASS


def case(features: int, data: DataSpec = RANDOM, rows: int = 1) -> Case:
    return Case(Shape(1, rows, 1, features), data, TOL, "T.start")


def searching(verdicts: list[Outcome], control: Model | None = None, repeats: int = 3) -> Search:
    s = Search(START, Told(verdicts), control or Model())  # type: ignore[arg-type]
    s.repeats = repeats
    return s


# ------------------------------------------------------------------------------ repeats
def test_repeats_exactly() -> None:
    assert repeats_for(5, 5, 0.95) == 4
    assert repeats_for(20, 20, 0.95) == 2
    assert repeats_for(100, 100, 0.95) == 1  # Wilson's lower end 0.96: one run catches a pass
    assert repeats_for(10, 3, 0.95) == 27
    assert repeats_for(5, 1, 0.95) == MAX_REPEATS  # rare passes: capped
    assert repeats_for(5, 0, 0.95) == 5
    assert repeats_for(80, 0, 0.95) == MAX_REPEATS
    assert repeats_for(0, 0, 0.95) == 1
    assert repeats_for(-1, 3, 0.95) == 1
    assert repeats_for(5, 5, 0.99) == 9


# ------------------------------------------------------------------------------ judging
def test_a_case_fails_only_when_every_repeat_fails_and_keeps_its_smallest_margin() -> None:
    s = searching([Outcome(F, 5.0, "a"), Outcome(F, 2.0, ""), Outcome(F, 9.0, "c")])
    j = s.judge(case(64))
    assert (j.status, j.margin, j.runs, j.detail) == (Status.FAILS, 2.0, 3, "c")
    assert s.best is j and s.evaluations == 3


def test_a_pass_on_the_first_run_passes_and_a_later_one_is_flaky() -> None:
    j = searching([Outcome(P, 0.5, "ok")]).judge(case(64))
    assert (j.status, j.margin, j.runs, j.detail) == (Status.PASSES, 0.5, 1, "ok")
    s = searching([Outcome(F, 3.0), Outcome(P, 0.1)])
    j = s.judge(case(64))
    assert (j.status, j.margin, j.runs) == (Status.FLAKY, 3.0, 2)
    assert s.best is None


def test_a_skip_stops_the_case() -> None:
    j = searching([Outcome(F, 3.0), Outcome(RunVerdict.SKIP, None, "exit 125")]).judge(case(64))
    assert (j.status, j.runs, j.detail, j.margin) == (Status.SKIPPED, 2, "exit 125", 3.0)


def test_unmeasured_runs_leave_the_margin_unknown_or_the_measured_one() -> None:
    j = searching([Outcome(F, None), Outcome(F, 4.0), Outcome(F, None)]).judge(case(64))
    assert (j.status, j.margin) == (Status.FAILS, 4.0)


def test_a_failure_the_correct_kernel_shares_is_inadmissible() -> None:
    model = Model(bad=lambda c, d: d == 1)  # the model fails draw 1 of random data
    s = searching([Outcome(F, 7.0)], model)
    j = s.judge(case(64))
    assert (j.status, j.runs, j.margin) == (Status.INADMISSIBLE, 2, 7.0)
    assert [d for _, d in model.seen] == [0, 1] and s.control_checks == 2
    # data the same every draw is checked once, on draw 0
    model = Model()
    s = searching([Outcome(F, 7.0)], model)
    s.evaluator = Told([Outcome(F, 7.0)], deterministic=False)
    j = s.judge(case(64, CONST))
    assert j.status is Status.FAILS and j.runs == 3 and [d for _, d in model.seen] == [0]


def test_a_judged_case_is_remembered_and_a_remembered_failure_can_become_the_best() -> None:
    s = searching([Outcome(F, 1.0)])
    first = s.judge(case(64))
    assert s.judge(case(64)) is first and s.evaluations == 3
    s.best = None
    assert s.judge(case(64)) is first and s.best is first


def test_a_spent_budget_stops_judging() -> None:
    s = searching([Outcome(F, 1.0)])
    s.budget = 2
    with pytest.raises(_Budget):
        s.judge(case(32))  # 2 of 3 repeats, then the budget
    assert s.evaluations == 2


# ------------------------------------------------------------------------------ the start
def test_a_known_start_is_not_run_again() -> None:
    model = Model()
    s = Search(START, Told([Outcome(F)]), model)  # type: ignore[arg-type]
    m = s.measure_start((10, 3))
    assert (m.runs, m.passes, m.admissible) == (10, 3, True)
    assert s.evaluations == 0 and s.repeats == repeats_for(10, 3, 0.95)
    assert model.seen == [(START, 0)]  # failing runs: the model is asked
    s = Search(START, Told([Outcome(F)]), Model())  # type: ignore[arg-type]
    assert s.measure_start((4, 4)).admissible and s.control_checks == 0  # never failed
    s = Search(START, Told([Outcome(F)]), Model(bad=lambda c, d: True))  # type: ignore[arg-type]
    assert s.measure_start((4, 1)).admissible is False


def test_the_start_is_measured_start_runs_times() -> None:
    ev = Told([Outcome(F), Outcome(P), Outcome(F), Outcome(P), Outcome(P)])
    s = Search(START, ev, Model(), start_runs=5)  # type: ignore[arg-type]
    m = s.measure_start()
    assert (m.runs, m.passes, m.admissible) == (5, 3, True)
    assert s.evaluations == 5 and s.control_checks == 1
    assert s.repeats == repeats_for(5, 3, 0.95)
    # passing every run: the model is not asked
    s = Search(START, Told([Outcome(P)]), Model(), start_runs=4)  # type: ignore[arg-type]
    m = s.measure_start()
    assert (m.runs, m.passes, m.admissible, s.control_checks) == (4, 4, True, 0)
    # the same inputs on a model: one run stands for all
    start = case(64, CONST)
    s = Search(start, Told([Outcome(P)], deterministic=True), Model(), start_runs=5)  # type: ignore[arg-type]
    m = s.measure_start()
    assert (m.runs, m.passes, s.evaluations) == (5, 5, 1)
    s = Search(
        start, Told([Outcome(F)], deterministic=True), Model(bad=lambda c, d: True), start_runs=5
    )  # type: ignore[arg-type]
    m = s.measure_start()
    assert (m.runs, m.passes, s.evaluations, m.admissible) == (5, 0, 1, False)


# ------------------------------------------------------------------------------ probing
def test_the_probe_shapes_are_the_start_and_one_row_at_a_few_feature_counts() -> None:
    start = Case(Shape(2, 3, 1, 8 * TILE + 5), RANDOM, TOL, "T")
    s = Search(start, Told([Outcome(P)]), Model())  # type: ignore[arg-type]
    feats = [5, 32, 37, 64, 69, 96, 133, 160, 229, 256, 261]
    expected = [start.shape, *(Shape(1, 1, 1, f) for f in feats)]
    assert s.probe_shapes() == expected
    assert space.sparse(list(range(10))) == [0, 1, 2, 4, 8, 9]
    assert space.sparse([7]) == [7]
    assert space.sparse([]) == []


def test_a_one_row_probe_the_correct_kernel_fails_moves_to_the_widest_it_passes() -> None:
    """Shrink's search for a case the correct kernel passes: below the probe, widest first."""
    model = Model(bad=lambda c, d: c.shape.features > 3 * TILE + 5)
    s = Search(START, Scripted(lambda c, d: True), model)  # type: ignore[arg-type]
    s.repeats = 1
    j = s.admissible_near(case(6 * TILE + 5, CONST))
    assert j is not None and j.status is Status.FAILS
    assert j.case.shape == Shape(1, 1, 1, 3 * TILE + 5)
    # checked widest first, each once, then remembered
    widths = [c.shape.features for c, _ in model.seen]
    assert widths[:3] == [5 * TILE + 5, 4 * TILE + 5, 3 * TILE + 5]
    before = s.control_checks
    s.admissible_near(case(6 * TILE + 5, CONST))
    assert s.control_checks == before
    # none passes: None
    s = Search(START, Scripted(lambda c, d: True), Model(bad=lambda c, d: True))  # type: ignore[arg-type]
    assert s.admissible_near(case(3 * TILE, CONST)) is None


def test_the_loud_phase_moves_an_inadmissible_one_row_probe() -> None:
    # everything fails; the model fails constant data above 64 features
    def model_bad(c: Case, d: int) -> bool:
        return c.data.kind is DataKind.CONSTANT and c.shape.features > 64

    s = Search(START, Scripted(lambda c, d: True), Model(bad=model_bad))  # type: ignore[arg-type]
    s.measure_start()
    j = s.loud()
    assert j is not None and j.status is Status.FAILS
    assert j.case.data.kind is DataKind.CONSTANT and j.case.shape.rows == 1
    assert j.case.shape.features <= 64


def test_the_loudest_variant_of_the_kind_with_the_largest_margin_wins() -> None:
    margins = {"bugrepro": 5.0, "different-values": 9.0, "two-valued": 99.0}

    @dataclass
    class ByVariant(Told):
        def evaluate(self, c: Case, draw: int) -> Outcome:
            return Outcome(F, margins.get(c.data.variant))

    s = Search(START, ByVariant([]), Model())  # type: ignore[arg-type]
    first = s.judge(case(64, CONST))
    best = s.loudest_variant(first)
    assert best.case.data.variant == "different-values" and best.margin == 9.0
    # a variant of equal margin does not replace it
    margins["different-values"] = 5.0
    s = Search(START, ByVariant([]), Model())  # type: ignore[arg-type]
    first = s.judge(case(64, CONST))
    assert s.loudest_variant(first) is first


# ------------------------------------------------------------------------------ small
def test_the_descent_finds_the_smallest_failing_value_of_a_monotone_axis() -> None:
    s = Search(START, Scripted(lambda c, d: c.shape.batch >= 13), Model())  # type: ignore[arg-type]
    s.repeats = 1
    start = s.judge(s.case(Shape(40, 1, 1, 64), CONST))
    got = s.descend(start, Axis.BATCH)
    assert got.case.shape.batch == 13
    # nothing smaller fails: the case itself
    s = Search(START, Scripted(lambda c, d: c.shape.batch >= 40), Model())  # type: ignore[arg-type]
    s.repeats = 1
    start = s.judge(s.case(Shape(40, 1, 1, 64), CONST))
    assert s.descend(start, Axis.BATCH) is start
    # the smallest value fails: found at once
    s = Search(START, Scripted(lambda c, d: True), Model())  # type: ignore[arg-type]
    s.repeats = 1
    start = s.judge(s.case(Shape(40, 1, 1, 64), CONST))
    assert s.descend(start, Axis.BATCH).case.shape.batch == 1
    assert s.descend(start, Axis.HEADS) is start  # no ladder below 1


def test_the_small_phase_ends_one_minimal() -> None:
    # fails when batch * seq >= 6: the descent alone cannot see that (2, 3) is minimal
    s = Search(
        START,
        Scripted(lambda c, d: c.shape.batch * c.shape.seq >= 6 and c.shape.features >= 64),
        Model(),
    )  # type: ignore[arg-type]
    s.repeats = 1
    start = s.judge(s.case(Shape(5, 7, 1, 64 + 14), CONST))
    got = s.small(start)
    b, q = got.case.shape.batch, got.case.shape.seq
    assert b * q >= 6 and (b - 1) * q < 6 and b * (q - 1) < 6
    assert got.case.shape.features == 64 and s.keep == 0  # the partial tile dropped


def test_a_partial_tile_is_dropped_by_a_neighbour_step_when_the_descent_kept_it() -> None:
    # fails with the partial tile (78) and with 64, not at 46 or 32: keep starts at 14
    fails = {78, 64, 96 + 14}
    s = Search(START, Scripted(lambda c, d: c.shape.features in fails), Model())  # type: ignore[arg-type]
    s.repeats = 1
    got = s.small(s.judge(s.case(Shape(1, 1, 1, 96 + 14), CONST)))
    assert got.case.shape.features == 64 and s.keep == 0


# ------------------------------------------------------------------------------ the boundary
def test_the_boundary_names_each_neighbour_and_why_it_passes() -> None:
    def fails(c: Case, d: int) -> bool:
        return c.shape.features >= 64 and c.shape.batch >= 2

    s = Search(
        START,
        Scripted(fails),
        Model(bad=lambda c, d: c.shape.seq == 1 and c.shape.batch == 2 and c.shape.features == 32),
    )  # type: ignore[arg-type]
    s.repeats = 1
    result = s.judge(s.case(Shape(3, 2, 1, 64), CONST))
    s.boundary(result)
    got = [
        (n.axis, n.step, n.judged.case.shape if n.judged else None, n.why, n.rerun)
        for n in s.smaller
    ]
    assert got == [
        (
            Axis.FEATURES,
            "one tile fewer",
            Shape(3, 2, 1, 32),
            "scripted why",
            ("probe", Shape(3, 2, 1, 32).label),
        ),
        (
            Axis.SEQ,
            "one fewer",
            Shape(3, 1, 1, 64),
            "FAILS: the result is not minimal",
            ("probe", Shape(3, 1, 1, 64).label),
        ),
        (
            Axis.BATCH,
            "one fewer",
            Shape(2, 2, 1, 64),
            "FAILS: the result is not minimal",
            ("probe", Shape(2, 2, 1, 64).label),
        ),
    ]
    assert s.lower_bounds == [Axis.HEADS]


def test_the_words_for_a_neighbour_that_does_not_pass() -> None:
    def j(status: Status, runs: int = 3) -> Judged:
        return Judged(case(32), status, None, runs)

    assert _status_why(j(Status.PASSES)) == ""
    assert _status_why(j(Status.FLAKY, 4)) == "fails only some of its runs (4 run)"
    assert _status_why(j(Status.INADMISSIBLE)) == (
        "fails on the correct kernel's model too: the tolerance asks more than bf16 gives there"
    )
    assert _status_why(j(Status.SKIPPED)) == "could not be tested"
    assert _status_why(j(Status.FAILS)) == "FAILS: the result is not minimal"


# ------------------------------------------------------------------------------ the space
def test_ladders_per_axis() -> None:
    shape = Shape(4, 70, 3, 2 * TILE + 7)
    assert space.ladder(Axis.FEATURES, shape, 0) == [32, 64]
    assert space.ladder(Axis.FEATURES, shape, 7) == [7, 39]
    assert space.ladder(Axis.BATCH, shape, 0) == [1, 2, 3]
    assert space.ladder(Axis.HEADS, shape, 0) == [1, 2]
    assert space.ladder(Axis.SEQ, shape, 0) == list(range(1, 70))
    assert space.ladder(Axis.SEQ, shape, 0, tiled_rows=True) == [32, 64]
    assert space.feature_values(64, 0) == [32]
    assert space.feature_values(65, 1) == [1, 33]
    assert space.partial(70) == 6 and space.partial(64) == 0


def test_neighbours_per_axis() -> None:
    steps = space.neighbours(Shape(2, 70, 3, 2 * TILE + 7), keep=7, tiled_rows=True)
    assert [(s.axis, s.value, s.words) for s in steps] == [
        (Axis.FEATURES, 64, "the partial tile dropped"),
        (Axis.FEATURES, 39, "one tile fewer"),
        (Axis.SEQ, 38, "one tile fewer"),
        (Axis.BATCH, 1, "one fewer"),
        (Axis.HEADS, 2, "one fewer"),
    ]
    steps = space.neighbours(Shape(1, 32, 1, 33), keep=1, tiled_rows=True)
    assert [(s.axis, s.value) for s in steps] == [(Axis.FEATURES, 32), (Axis.FEATURES, 1)]
    steps = space.neighbours(Shape(1, 2, 1, 33), keep=1)
    assert [(s.axis, s.value) for s in steps] == [
        (Axis.FEATURES, 32),
        (Axis.FEATURES, 1),
        (Axis.SEQ, 1),
    ]
    # a partial tile alone: nothing to drop, no tile to take
    assert space.neighbours(Shape(1, 1, 1, 7), keep=7) == []
    assert space.neighbours(Shape(1, 33, 1, 32), keep=0, tiled_rows=True)[0].value == 1


def test_lower_bounds_per_axis() -> None:
    lb = space.lower_bound
    assert lb(Shape(1, 1, 1, 32), Axis.FEATURES) and not lb(Shape(1, 1, 1, 33), Axis.FEATURES)
    assert lb(Shape(1, 32, 1, 64), Axis.SEQ, tiled_rows=True)
    assert not lb(Shape(1, 33, 1, 64), Axis.SEQ, tiled_rows=True)
    assert not lb(Shape(1, 32, 1, 64), Axis.SEQ)
    assert lb(Shape(1, 1, 1, 64), Axis.BATCH) and not lb(Shape(2, 1, 1, 64), Axis.BATCH)


# ------------------------------------------------------------------------------ the survivors' rules
@pytest.mark.parametrize("first_failing", [2, 11, 13, 39])
def test_the_descent_finds_every_threshold(first_failing: int) -> None:
    s = Search(START, Scripted(lambda c, d: c.shape.batch >= first_failing), Model())  # type: ignore[arg-type]
    s.repeats = 1
    start = s.judge(s.case(Shape(40, 1, 1, 64), CONST))
    assert s.descend(start, Axis.BATCH).case.shape.batch == first_failing


def test_the_small_phase_moves_on_after_a_neighbour_step() -> None:
    # not monotone: only a neighbour step reaches (3, 4), and only a second round (2, 4)
    failing = {(5, 5), (4, 5), (3, 5), (3, 4), (2, 4)}
    s = Search(
        START,
        Scripted(lambda c, d: (c.shape.batch, c.shape.seq) in failing and c.shape.features == 64),
        Model(),
    )  # type: ignore[arg-type]
    s.repeats = 1
    got = s.small(s.judge(s.case(Shape(5, 5, 1, 64), CONST)))
    assert (got.case.shape.batch, got.case.shape.seq) == (2, 4)


def test_the_partial_tile_is_dropped_never_added() -> None:
    fails = {78, 64, 96 + 14, 96 + 28}
    s = Search(START, Scripted(lambda c, d: c.shape.features in fails), Model())  # type: ignore[arg-type]
    s.repeats = 1
    s.small(s.judge(s.case(Shape(1, 1, 1, 96 + 14), CONST)))
    assert max(c.shape.features for c in s.cache) <= 96 + 14


def test_random_data_carries_the_searchs_seed() -> None:
    s = Search(START, Scripted(lambda c, d: c.data.kind is DataKind.RANDOM), Model(), seed=7)  # type: ignore[arg-type]
    s.repeats = 1
    j = s.fails_at(Shape(1, 1, 1, 64), DataKind.RANDOM.rank)
    assert j is not None and j.case.data.seed == 7
    best = s.loudest_variant(j)
    assert {c.data.seed for c in s.cache if c.data.kind is DataKind.RANDOM} == {7}
    assert best.case.data.seed == 7


def test_an_unmeasured_margin_counts_as_zero_for_the_loudest_variant() -> None:
    margins: dict[str, float | None] = {"bugrepro": 0.5, "different-values": None}

    @dataclass
    class ByVariant(Told):
        def evaluate(self, c: Case, draw: int) -> Outcome:
            return Outcome(F, margins[c.data.variant])

    s = Search(START, ByVariant([]), Model())  # type: ignore[arg-type]
    first = s.judge(case(64, CONST))
    assert s.loudest_variant(first) is first  # None is no larger than 0.5
    margins.update({"bugrepro": None, "different-values": 0.25})
    s = Search(START, ByVariant([]), Model())  # type: ignore[arg-type]
    first = s.judge(case(64, CONST))
    assert s.loudest_variant(first).margin == 0.25  # 0.25 is larger than none


def test_a_ttnn_op_shrinks_its_rows_by_whole_tiles() -> None:
    start = Case(Shape(1, 4 * TILE, 1, 3 * TILE), CONST, TOL, "T", op=OpKind.TTNN_LAYER_NORM)
    s = Search(start, Scripted(lambda c, d: c.shape.seq >= 2 * TILE), Model())  # type: ignore[arg-type]
    s.repeats = 1
    got = s.small(s.judge(s.case(start.shape, CONST)))
    assert got.case.shape.seq == 2 * TILE and got.case.shape.features == TILE
    assert all(c.shape.seq % TILE == 0 for c in s.cache)
    s.boundary(got)
    assert [(n.axis, n.judged.case.shape.seq) for n in s.smaller if n.judged] == [(Axis.SEQ, TILE)]
    assert s.lower_bounds == [Axis.FEATURES, Axis.BATCH, Axis.HEADS]
    # the probes: one tile of rows
    assert {p.seq for p in s.probe_shapes()[1:]} == {TILE}


def test_the_admissible_search_asks_the_model_about_draw_zero() -> None:
    model = Model(bad=lambda c, d: d != 0 or c.shape.features > 2 * TILE)
    s = Search(START, Scripted(lambda c, d: True), model)  # type: ignore[arg-type]
    s.repeats = 1
    j = s.admissible_near(case(4 * TILE, CONST))
    assert j is not None and j.case.shape.features == 2 * TILE


# ------------------------------------------------------------------------------ what a user sees
class Recorded(ShrinkEvents):
    """The progress a user is shown, recorded."""

    def __init__(self) -> None:
        self.seen: list[tuple[object, ...]] = []

    def started(self, start: StartMeasure, repeats: int) -> None:
        self.seen.append(("started", start, repeats))

    def phase(self, text: str) -> None:
        self.seen.append(("phase", text))

    def judged(self, j: Judged, candidates: int, evaluations: int, best: Judged | None) -> None:
        self.seen.append(("judged", j.case.shape.features, candidates, evaluations, best))


def test_the_progress_names_each_phase_each_candidate_and_the_start() -> None:
    events = Recorded()
    start = Case(Shape(1, 1, 1, 64), CONST, TOL, "T.start", pcc=0.99)
    s = Search(start, Scripted(lambda c, d: c.shape.features >= 64), Model(), events=events)  # type: ignore[arg-type]
    result = s.run()
    assert result is not None
    # every candidate keeps the start's tolerance, origin, op and PCC threshold
    assert {(c.tolerance, c.origin, c.op, c.pcc) for c in s.cache} == {
        (TOL, "T.start", start.op, 0.99)
    }
    started = events.seen[0]
    assert started[0] == "started" and started[2] == s.repeats
    m = started[1]
    assert (
        isinstance(m, StartMeasure)
        and m.case == start
        and m.pass_rate_interval == wilson(m.passes, m.runs)
    )
    phases = [e[1] for e in events.seen if e[0] == "phase"]
    assert phases[0] == "looking for constant data that fails"
    assert "shrinking 1x1x1x64" in phases or any(p.startswith("shrinking ") for p in phases)
    judged = [e for e in events.seen if e[0] == "judged"]
    assert [e[2] for e in judged] == list(range(1, len(judged) + 1))  # candidates so far
    assert judged[-1][3] == s.evaluations and judged[-1][4] is s.best


def test_a_known_start_reports_its_measure() -> None:
    events = Recorded()
    s = Search(START, Scripted(lambda c, d: False), Model(), events=events)  # type: ignore[arg-type]
    m = s.measure_start((10, 4))
    assert events.seen == [("started", m, s.repeats)]
    assert m.case == START and m.pass_rate_interval == wilson(4, 10)


def test_the_start_asks_the_model_about_draw_zero() -> None:
    model = Model(bad=lambda c, d: d != 0)
    s = Search(START, Told([Outcome(F)]), model, start_runs=3)  # type: ignore[arg-type]
    assert s.measure_start().admissible is True
    s = Search(START, Told([Outcome(F)]), model)  # type: ignore[arg-type]
    assert s.measure_start((3, 1)).admissible is True
    assert {d for _, d in model.seen} == {0}


def test_a_deterministic_evaluator_runs_random_data_every_draw() -> None:
    s = Search(START, Told([Outcome(P)], deterministic=True), Model(), start_runs=4)  # type: ignore[arg-type]
    assert s.measure_start().passes == 4 and s.evaluations == 4


def test_equal_cases_keep_the_first_best() -> None:
    s = searching([Outcome(F, 1.0)], repeats=1)
    first = s.judge(case(64, CONST))
    s.judge(
        Case(
            Shape(1, 1, 1, 64),
            DataSpec(DataKind.CONSTANT, "different-values", 0.5, 2.0, 1.0),
            TOL,
            "T.start",
        )
    )
    assert s.best is first


def test_order_counts_rows_times_tiles_and_an_unmeasured_margin_as_zero() -> None:
    def j(rows: int, features: int, margin: float | None) -> Judged:
        return Judged(Case(Shape(1, rows, 1, features), CONST, TOL), Status.FAILS, margin, 1)

    assert order(j(2, 64, 1.0))[1] == 4
    assert order(j(3, 96, 1.0))[1] == 9
    assert order(j(1, 64, None))[3] == 0.0
    assert order(j(1, 64, None)) > order(j(1, 64, 0.5))


def test_a_two_row_probe_the_model_fails_is_not_moved() -> None:
    # the start itself has two rows: its inadmissible verdict stands (only one-row probes move)
    start = Case(Shape(1, 2, 1, 64), CONST, TOL, "T.start")
    model = Model(bad=lambda c, d: c.shape.rows == 2 or c.shape.features > 32)
    s = Search(start, Scripted(lambda c, d: True), model)  # type: ignore[arg-type]
    s.measure_start()
    j = s.loud()
    assert j is not None and j.case.shape.rows == 1 and j.case.shape.features == 32


def test_repeats_at_the_edges() -> None:
    assert repeats_for(1, 1, 0.95) == 13
    assert repeats_for(1, 0, 0.95) == 1
    assert repeats_for(3, 3, 0.5) == 1
