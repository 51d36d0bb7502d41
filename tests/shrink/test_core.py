"""The search core on scripted worlds: no numpy, no process (mozregression's way)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from lnrepro.model.case import Axis, Case, DataKind, DataSpec, Shape, Status, Tolerance
from lnrepro.shrink import space
from lnrepro.shrink.core import Outcome, RunVerdict, Search, repeats_for

TOL = tuple((t, Tolerance(0.01, 0.01)) for t in ("dx", "dgamma", "dbeta"))
START = Case(Shape(3, 273, 1, 8462), DataSpec(DataKind.RANDOM, "uniform"), TOL, "T.start")

Rule = Callable[[Case, int], bool]  # fails?


@dataclass
class Scripted:
    """An evaluator whose verdicts follow a rule; it records every case it ran."""

    fails: Rule
    deterministic: bool = True
    name: str = "scripted"
    ran: list[tuple[Case, int]] = field(default_factory=list)

    def evaluate(self, case: Case, draw: int) -> Outcome:
        self.ran.append((case, draw))
        bad = self.fails(case, draw)
        return Outcome(RunVerdict.FAIL if bad else RunVerdict.PASS, 500.0 if bad else 0.5)

    def rerun(self, case: Case) -> list[str]:
        return ["probe", case.shape.label]

    def why(self, smaller: Case, result: Case) -> str | None:
        return "scripted why" if smaller.shape.features < result.shape.features else None


@dataclass
class Control:
    bad: Rule = lambda c, d: False

    def passes(self, case: Case, draw: int) -> bool:
        return not self.bad(case, draw)


def search(fails: Rule, control: Rule = lambda c, d: False, **kw: object) -> Search:
    s = Search(START, Scripted(fails), Control(control), **kw)  # type: ignore[arg-type]
    s.run()
    return s


def test_repeats_follow_the_starts_pass_rate() -> None:
    assert repeats_for(5, 5, 0.95) == 4  # Wilson lower bound of 5/5 is 0.57: 0.43^4 < 0.05
    assert repeats_for(10, 3, 0.95) > repeats_for(10, 8, 0.95)  # rarer passes need more runs
    assert repeats_for(5, 0, 0.95) == 5  # never passed: as many in a row as the start
    assert repeats_for(5, 5, 0.99) > repeats_for(5, 5, 0.95)


def test_a_block_path_only_bug_ends_at_the_path_boundary() -> None:
    # fails with constant data on > 150 tiles only: the result is 151 tiles, one row
    s = search(lambda c, d: c.shape.tiles > 150 and c.data.kind is DataKind.CONSTANT)
    r = s.best
    assert r is not None and r.status is Status.FAILS
    assert r.case.shape == Shape(1, 1, 1, 151 * 32)
    assert r.case.data.kind is DataKind.CONSTANT
    assert [(n.axis, n.judged.case.shape.features) for n in s.smaller if n.judged] == [
        (Axis.FEATURES, 150 * 32)
    ]
    assert all(n.judged and n.judged.status is Status.PASSES for n in s.smaller)
    assert s.smaller[0].why == "scripted why"
    assert set(s.lower_bounds) == {Axis.SEQ, Axis.BATCH, Axis.HEADS}
    # binary searches, not a walk: far fewer runs than the 265 feature counts
    assert s.evaluations < 120


def test_the_loudest_kind_wins_over_a_smaller_shape() -> None:
    # random data fails everywhere; constant data only from 64 features on
    def fails(c: Case, d: int) -> bool:
        return c.data.kind is DataKind.RANDOM or c.shape.features >= 64

    s = search(fails)
    assert s.best is not None and s.best.case.data.kind is DataKind.CONSTANT
    assert s.best.case.shape.features == 64


def test_a_partial_tile_is_kept_only_while_it_matters() -> None:
    s = search(lambda c, d: c.shape.features % 32 == 14 and c.data.kind is DataKind.CONSTANT)
    assert s.best is not None and s.best.case.shape.features == 14
    s = search(lambda c, d: c.shape.features >= 96 and c.data.kind is DataKind.CONSTANT)
    assert s.best is not None and s.best.case.shape.features == 96  # whole tiles, partial dropped


def test_a_case_the_correct_model_fails_is_not_a_reproducer() -> None:
    # the subject fails everything; the control fails everything but 64 features
    s = search(lambda c, d: True, control=lambda c, d: c.shape.features != 64)
    assert s.best is not None and s.best.case.shape.features == 64
    assert any(j.status is Status.INADMISSIBLE for j in s.cache.values())


def test_flaky_candidates_do_not_count() -> None:
    # random data fails only on even draws: never deterministic; nothing else fails
    s = Search(
        START,
        Scripted(lambda c, d: c.data.kind is DataKind.RANDOM and d % 2 == 0, deterministic=False),
        Control(),
    )  # type: ignore[arg-type]
    assert s.run() is None
    assert any(j.status is Status.FLAKY for j in s.cache.values())
    assert s.repeats >= 2


def test_nothing_fails_says_so() -> None:
    s = search(lambda c, d: False)
    assert s.best is None and not s.smaller and not s.budget_exhausted


def test_a_spent_budget_stops_with_the_best_so_far() -> None:
    s = search(lambda c, d: c.shape.tiles > 150 and c.data.kind is DataKind.CONSTANT, budget=20)
    assert s.budget_exhausted and s.evaluations == 20
    assert s.best is not None and s.best.status is Status.FAILS  # the best so far, kept


def test_identical_inputs_on_a_model_run_once_and_random_data_runs_every_repeat() -> None:
    ev = Scripted(lambda c, d: True)
    s = Search(START, ev, Control(), start_runs=5)  # type: ignore[arg-type]
    s.measure_start()
    const = s.judge(s.case(Shape(1, 1, 1, 32), DataSpec(DataKind.CONSTANT, "bugrepro")))
    rand = s.judge(s.case(Shape(1, 1, 1, 32), DataSpec(DataKind.RANDOM, "uniform")))
    assert const.runs == 1 and rand.runs == s.repeats == 5


@pytest.mark.parametrize(
    ("features", "keep", "expected"),
    [(96, 0, [32, 64]), (78, 14, [14, 46]), (32, 0, [])],
)
def test_feature_ladders(features: int, keep: int, expected: list[int]) -> None:
    assert space.feature_values(features, keep) == expected


def test_neighbours_one_step_smaller() -> None:
    steps = space.neighbours(Shape(2, 1, 1, 78), keep=14)
    assert [(s.axis, s.value) for s in steps] == [
        (Axis.FEATURES, 64),
        (Axis.FEATURES, 46),
        (Axis.BATCH, 1),
    ]
    assert space.neighbours(Shape(1, 1, 1, 32), keep=0) == []


def test_the_order_of_cases_is_loud_then_small_then_whole_tiles_then_margin() -> None:
    from lnrepro.model.case import Judged
    from lnrepro.shrink.core import order

    def j(kind: DataKind, features: int, margin: float, rows: int = 1) -> Judged:
        data = DataSpec(kind, "bugrepro" if kind is DataKind.CONSTANT else "two-valued")
        return Judged(Case(Shape(1, rows, 1, features), data, TOL), Status.FAILS, margin, 1)

    assert order(j(DataKind.CONSTANT, 8192, 2.0)) < order(j(DataKind.FEW_VALUED, 32, 900.0))
    assert order(j(DataKind.CONSTANT, 64, 2.0)) < order(j(DataKind.CONSTANT, 32, 9.0, rows=3))
    assert order(j(DataKind.CONSTANT, 4928, 2.0)) < order(j(DataKind.CONSTANT, 4910, 9.0))
    assert order(j(DataKind.CONSTANT, 32, 9.0)) < order(j(DataKind.CONSTANT, 32, 2.0))
