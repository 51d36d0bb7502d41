"""``lnrepro explain``: which kernel model reproduces what a run (or a log) saw.

Every candidate model — a defect set × a kernel era × an arch — runs the observed tests on the
emulator, with the tests' own data, and is scored against the observation, test by test: a
verdict that differs costs 1; each metric the run printed (max_diff, mean_diff, max_abs_diff per
tensor) costs its relative residual |model - observed| / |observed|, capped at 1. Models are
ranked by the total, and the residuals are kept so a person sees *where* a model falls short.

The question people answered by hand over months (#34760 closed, #53215 fixed): which mechanism
explains 1000, 1004.21, 994.62 and 988? Work is shared: a test's result depends only on the
parts of a model that can reach it (on the L1 path dropped blocks do not exist; the partial-tile
hypothesis needs Wormhole, the block path and a partial tile; eras differ by path, block size
and, for ``fixed``, tolerances), so each distinct effective model is computed once per test.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Annotated, Any, Literal

import msgspec

from lnrepro.errors import InputError
from lnrepro.model.codec import Real
from lnrepro.model.gtest import GtestRun
from lnrepro.model.record import RunRecord, Verdict
from lnrepro.model.requests import Count

# what a test showed and what a model computes: anything else is not about the kernel
Outcome = Literal["PASS", "FAIL"]

DEFECT_SETS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "double-subtract + drop-xhat-blocks + drop-partial-tile",
        ("double-subtract", "drop-xhat-blocks", "drop-partial-tile"),
    ),
    ("double-subtract + drop-xhat-blocks (shipped)", ("double-subtract", "drop-xhat-blocks")),
    ("double-subtract", ("double-subtract",)),
    ("drop-xhat-blocks", ("drop-xhat-blocks",)),
    ("overwrite-dy-gamma-sum (reporters', refuted)", ("overwrite-dy-gamma-sum",)),
    ("overwrite-dy-gamma-sum + drop-partial-tile", ("overwrite-dy-gamma-sum", "drop-partial-tile")),
    ("none (fixed kernel)", ()),
)
METRICS = ("max_diff", "mean_diff", "max_abs_diff")
ERAS = ("2025-12", "2025-11", "fixed")  # every model explain scores: era x arch x defect set
ARCHES = ("wormhole_b0", "blackhole")


@dataclass(frozen=True)
class Observed:
    """One test as a run or log saw it: its verdict and the metrics it printed."""

    name: str
    verdict: Outcome  # anything else is not about the kernel and is skipped
    metrics: Mapping[str, Mapping[str, float]] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Residual:
    """One printed metric of one test: what the run saw, what the model computes, and how far
    apart they are (``|model - observed| / |observed|``)."""

    observed: Real
    model: Real
    relative: Real


@dataclass(frozen=True, kw_only=True)
class TestFit:
    """One test under one model: its verdicts and its residuals (``dx.max_diff`` -> ...); its
    ``cost`` (1 for a different verdict, plus each residual capped at 1) follows from them."""

    __test__ = False

    test: str
    observed: Outcome
    model: Outcome
    cost: Real = field(init=False, default=0.0)
    residuals: dict[str, Residual]

    def __post_init__(self) -> None:
        cost = (self.observed != self.model) + sum(
            min(r.relative, 1.0) for r in self.residuals.values()
        )
        object.__setattr__(self, "cost", float(cost))


@dataclass(frozen=True, kw_only=True)
class ModelFit:
    """One candidate model (a defect set x a kernel era x an arch) scored on every test."""

    defects: str
    era: str  # one of ERAS
    arch: str  # one of ARCHES
    cost: Real = field(init=False, default=0.0)  # the tests' costs summed
    verdicts_matched: Count = field(init=False, default=0)
    tests: tuple[TestFit, ...]
    tied: Annotated[int, msgspec.Meta(ge=1)] = 1  # the best: how many fit as well (tie_note)

    def __post_init__(self) -> None:
        object.__setattr__(self, "cost", float(sum(t.cost for t in self.tests)))
        matched = sum(t.observed == t.model for t in self.tests)
        object.__setattr__(self, "verdicts_matched", matched)

    @property
    def rank_key(self) -> tuple[float, int]:
        """Best first; models with the same key fit the observation equally well."""
        return round(self.cost, 9), -self.verdicts_matched

    @property
    def label(self) -> str:
        tie = f", one of {self.tied} models that fit equally well" if self.tied > 1 else ""
        return f"{self.defects} @ {self.era}/{self.arch}{tie}"


@dataclass(frozen=True, kw_only=True)
class ExplainMeta:
    """What a scoring covered: its time, how many models and distinct emulator runs, the tests
    it scored and those the emulator does not model."""

    seconds: float = 0.0
    models: Count = 0
    computed: Count = 0
    tests: tuple[str, ...] = ()
    skipped_tests: tuple[str, ...] = ()


def observed_from_record(rec: RunRecord) -> list[Observed]:
    return [
        Observed(t.name, "PASS" if t.verdict is Verdict.PASS else "FAIL", t.worst)
        for t in rec.tests
        if t.verdict in (Verdict.PASS, Verdict.FAIL, Verdict.FLAKY)
    ]


def observed_from_run(run: GtestRun) -> list[Observed]:
    """From a parsed gtest log (:class:`~lnrepro.model.gtest.GtestRun`): per test, worst over
    iterations; a test that failed in any iteration is FAIL."""
    by: dict[str, tuple[Outcome, dict[str, dict[str, float]]]] = {}
    for t in run.tests:
        status = t.status.value
        if status not in ("PASSED", "FAILED"):
            continue
        verdict, metrics = by.get(t.name, ("PASS", {}))
        if status == "FAILED":
            verdict = "FAIL"
        for tensor, vals in t.metrics.items():
            slot = metrics.setdefault(tensor, {})
            for k, v in vals.items():
                if k in METRICS and (k not in slot or v > slot[k]):
                    slot[k] = v
        by[t.name] = (verdict, metrics)
    return [Observed(n, v, m) for n, (v, m) in by.items()]


def _relative(observed: float, model: float) -> float:
    if math.isnan(observed) or math.isnan(model):
        return 0.0 if math.isnan(observed) and math.isnan(model) else 1.0
    return abs(model - observed) / max(abs(observed), 1e-9)


def check_modelled(observed: Sequence[Observed]) -> None:
    """An input error unless one of the observed tests is one the emulator models (checked
    before any work starts, so a wrong log is one line and nothing else)."""
    from lnrepro.emulator.catalogue import BY_NAME

    if not any(o.name in BY_NAME for o in observed):
        raise InputError(
            "none of the observed tests is one the emulator models",
            "explain needs the LayerNorm backward tests (LayerNormBackwardOpTest.*)",
        )


def explain(
    observed: Sequence[Observed],
    *,
    eras: Iterable[str] = ERAS,
    arches: Iterable[str] = ARCHES,
    on_progress: Callable[[int, int], None] | None = None,
) -> tuple[list[ModelFit], ExplainMeta]:
    """Every candidate model scored on the observed tests, best first; and what was skipped.
    ``on_progress(done, total)`` follows the emulator runs (one per distinct effective model
    and test)."""
    from lnrepro.emulator.catalogue import BY_NAME, Data, DataSource, run_iterations
    from lnrepro.emulator.defects import Arch, Defect, Era
    from lnrepro.emulator.kernel import TILE, KernelConfig

    check_modelled(observed)
    known = [o for o in observed if o.name in BY_NAME]
    skipped = [o.name for o in observed if o.name not in BY_NAME]
    started = time.perf_counter()
    # every model, and per test the effective model that reaches it (the runs' cache key)
    models: list[tuple[str, str, str, list[tuple[Any, ...]]]] = []
    runs: dict[str, dict[tuple[Any, ...], KernelConfig]] = {o.name: {} for o in known}
    for era_name in eras:
        for arch_name in arches:
            for label, names in DEFECT_SETS:
                if era_name == "fixed" and names:
                    continue  # the fixed era is the kernel without its defects
                era, arch = Era(era_name), Arch(arch_name)
                defects = frozenset(Defect(n) for n in names)
                cfg = KernelConfig(defects=defects, era=era, arch=arch)
                keys: list[tuple[Any, ...]] = []
                for o in known:
                    f = BY_NAME[o.name].features
                    block = not cfg.fits_in_l1(f)
                    eff = {d for d in defects if block or d is Defect.DOUBLE_SUBTRACT}
                    if not (arch is Arch.WORMHOLE_B0 and block and f % TILE):
                        eff.discard(Defect.DROP_PARTIAL_TILE)
                    key = (o.name, frozenset(eff), cfg.path(f), era is Era.FIXED)
                    runs[o.name].setdefault(key, KernelConfig(frozenset(eff), era, arch))
                    keys.append(key)
                models.append((label, era_name, arch_name, keys))
    # one emulator iteration per effective model and test (the copied generator makes every
    # iteration the same), a test's inputs and reference once for all its models
    data = DataSource(Data.COPY)
    total, done = sum(len(r) for r in runs.values()), 0
    cache: dict[tuple[Any, ...], tuple[Outcome, dict[str, dict[str, float]]]] = {}
    for name, by_key in runs.items():
        outcomes = run_iterations(BY_NAME[name], list(by_key.values()), data)
        for key, out in zip(by_key, outcomes, strict=True):
            metrics = {
                t.tensor: {
                    "max_diff": t.max_diff,
                    "mean_diff": t.mean_diff,
                    "max_abs_diff": t.max_diff,
                }
                for t in out.tensors
            }
            cache[key] = ("PASS" if out.ok else "FAIL", metrics)
            done += 1
            if on_progress is not None:
                on_progress(done, total)
    fits: list[ModelFit] = []
    for label, era_name, arch_name, keys in models:
        tests = []
        for o, key in zip(known, keys, strict=True):
            verdict, metrics = cache[key]
            res = {}
            for tensor, vals in o.metrics.items():
                for k, v in vals.items():
                    if k in METRICS and tensor in metrics:
                        m, seen = float(metrics[tensor][k]), float(v)
                        res[f"{tensor}.{k}"] = Residual(
                            observed=seen, model=m, relative=_relative(seen, m)
                        )
            tests.append(TestFit(test=o.name, observed=o.verdict, model=verdict, residuals=res))
        fits.append(ModelFit(defects=label, era=era_name, arch=arch_name, tests=tuple(tests)))
    fits.sort(key=lambda m: m.rank_key)
    tied = len(best_tie(fits))
    fits = [replace(f, tied=tied) if i < tied else f for i, f in enumerate(fits)]
    meta = ExplainMeta(
        seconds=round(time.perf_counter() - started, 3),
        models=len(fits),
        computed=len(cache),
        tests=tuple(o.name for o in known),
        skipped_tests=tuple(skipped),
    )
    return fits, meta


def n_models(eras: Sequence[str], arches: Sequence[str]) -> int:
    per = [1 if e == "fixed" else len(DEFECT_SETS) for e in eras]
    return sum(per) * len(arches)


def best_tie(fits: Sequence[ModelFit]) -> list[ModelFit]:
    """The models that fit exactly as well as the best (sorted ``fits``): one when one wins."""
    return [f for f in fits if fits and f.rank_key == fits[0].rank_key]


def _joined(values: Iterable[str]) -> str:
    return ", ".join(dict.fromkeys(values))


def tie_note(fits: Sequence[ModelFit]) -> str | None:
    """When several models fit best equally: that they tie, what they share, and what the
    observed tests cannot tell apart (an era, an arch, a defect these tests never reach)."""
    tie = best_tie(fits)
    if len(tie) < 2:
        return None
    sets = dict(DEFECT_SETS)
    named = [frozenset(sets.get(f.defects, (f.defects,))) for f in tie]
    common, every = frozenset.intersection(*named), frozenset.union(*named)
    apart = []
    if len({f.era for f in tie}) > 1:
        apart.append(f"the kernel eras ({_joined(f.era for f in tie)})")
    if len({f.arch for f in tie}) > 1:
        apart.append(f"the arches ({_joined(f.arch for f in tie)})")
    if len(set(named)) > 1:
        varying = sorted(every - common)
        apart.append(
            f"whether {' or '.join(varying)} is there too"
            if common and varying
            else f"the defect sets ({_joined(f.defects for f in tie)})"
        )
    shared = f"all have {' + '.join(sorted(common))}" if common else "they share no defect"
    return (
        f"{len(tie)} models tie for best (cost {tie[0].cost:.6f}, {tie[0].verdicts_matched}/"
        f"{len(tie[0].tests)} verdicts): {shared}; these tests cannot tell apart "
        f"{'; '.join(apart) or 'them'}."
    )


def ranking_scope(observed: Sequence[Observed], left_out: Sequence[tuple[str, str]]) -> str | None:
    """When tests hung, crashed or were cut off (``left_out``: name and how it ended): that the
    ranking covers only the tests that passed or failed, said before the models are shown. No
    model of the emulator hangs or crashes, so none is scored against those."""
    if not left_out or not observed:
        return None
    outs = ", ".join(f"{name} ({how})" for name, how in dict(left_out).items())
    return (
        f"the models below are ranked on the {len(observed)} test(s) that passed or failed "
        f"({', '.join(o.name for o in observed)}), not on {outs}: the emulator's models "
        "compute numbers, and none of them hangs or crashes"
    )
