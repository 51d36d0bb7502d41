"""``lnrepro tolerance``: which tolerance would have caught the bug, and which data would.

For a test's shape, the emulator's correct (``fixed``) kernel and each defect model run on many
data draws of several kinds; for every output tensor and rtol the *needed atol* of a draw is
``max(|metal - ref| - rtol·|ref|)`` — the smallest atol that passes it. Then:

* the correct kernel's distribution of needed atol: quantiles, and a tail estimate from a
  Gumbel fit (the maximum over many elements is Gumbel-like; method of moments), extrapolated to
  the stated pass probability ``1 - alpha`` — brute force cannot see 1e-6;
* for each rtol, the band's atol: that quantile; each defect's *power* there: the share of its
  draws that need more (so fail);
* which data kind separates a defect from the correct kernel best (the ratio of the defect's
  median needed atol to the correct kernel's band atol).

Data kinds: ``test`` (the test's own distributions, fresh draws: x, dy ~ U(-1, 1), γ ~ U(0, 1)),
``mean-shifted`` (dy ~ U(0, 1): dy·γ has a mean, which double-subtract doubles), ``constant``
(per draw random constants dy, γ ∈ [0.5, 2), x: x̂ = 0, the BugRepro inputs) and ``ramp``
(x a per-row shifted ramp). Pure numpy through the emulator; no I/O.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import msgspec
import numpy as np

from lnrepro.emulator.defects import Defect, Era, parse_defects
from lnrepro.emulator.kernel import KernelConfig, kernels, reference
from lnrepro.model.codec import Real

F32 = np.float32
KINDS = ("test", "mean-shifted", "constant", "ramp")
RTOLS = (0.0, 1e-3, 1e-2, 1e-1)
TENSORS = ("dx", "dgamma", "dbeta")
EULER = 0.5772156649015329
SCHEMA: Literal["lnrepro.tolerance/1"] = "lnrepro.tolerance/1"
MAX_FEATURES = 1 << 20  # a row of a million features
MAX_ELEMENTS = 1 << 24  # rows x features: 16M floats per tensor, several tensors per draw

MODELS: dict[str, frozenset[Defect]] = {
    "double-subtract": frozenset({Defect.DOUBLE_SUBTRACT}),
    "drop-xhat-blocks": frozenset({Defect.DROP_XHAT_BLOCKS}),
    "shipped": frozenset({Defect.DOUBLE_SUBTRACT, Defect.DROP_XHAT_BLOCKS}),
    "overwrite (refuted)": frozenset({Defect.OVERWRITE_DY_GAMMA_SUM}),
}


def draw(kind: str, rows: int, features: int, rng: np.random.Generator) -> tuple[Any, Any, Any]:
    """One draw of (x, dy, gamma) of a data kind, float32, as the host holds it."""
    shape = (rows, features)
    if kind == "constant":
        dy_v, g_v = rng.uniform(0.5, 2.0, 2)
        x_v = rng.uniform(-1, 1)
        return (
            np.full(shape, x_v, F32),
            np.full(shape, dy_v, F32),
            np.full((1, features), g_v, F32),
        )
    if kind == "ramp":
        base = np.linspace(-1, 1, features, dtype=F32)[None, :]
        x = (base + rng.uniform(-0.5, 0.5, (rows, 1))).astype(F32)
        dy = rng.uniform(-1, 1, shape).astype(F32)
        return x, dy, rng.uniform(0, 1, (1, features)).astype(F32)
    x = rng.uniform(-1, 1, shape).astype(F32)
    lo = 0.0 if kind == "mean-shifted" else -1.0
    dy = rng.uniform(lo, 1, shape).astype(F32)
    return x, dy, rng.uniform(0, 1, (1, features)).astype(F32)


def needed_atol(metal: Any, ref: Any, rtol: float) -> float:
    """The smallest atol with which ``allclose(metal, ref, rtol, atol)`` holds (>= 0)."""
    return needed_atols(metal, ref, (rtol,))[0]


def needed_atols(metal: Any, ref: Any, rtols: Sequence[float]) -> list[float]:
    """:func:`needed_atol` for several rtols, the differences computed once."""
    r = np.asarray(ref, dtype=F32)
    diff = np.abs(np.asarray(metal, dtype=F32) - r)
    mag = np.abs(r)
    out = []
    for rtol in rtols:
        v = float(diff.max() if rtol == 0 else (diff - F32(rtol) * mag).max())
        out.append(math.inf if math.isnan(v) else max(v, 0.0))
    return out


@dataclass(frozen=True)
class Gumbel:
    mu: float
    beta: float

    @classmethod
    def fit(cls, sample: Sequence[float]) -> Gumbel:
        a = np.asarray(sample, dtype=np.float64)
        beta = max(float(a.std(ddof=1)) * math.sqrt(6) / math.pi, 1e-30) if len(a) > 1 else 1e-30
        return cls(float(a.mean()) - EULER * beta, beta)

    def quantile(self, p: float) -> float:
        return self.mu - self.beta * math.log(-math.log(p))

    def exceed(self, x: float) -> float:
        """P(X > x)."""
        return -math.expm1(-math.exp(-(x - self.mu) / self.beta))


@dataclass
class Samples:
    """needed atol per draw: [model][kind][tensor][rtol] -> list."""

    data: dict[str, dict[str, dict[str, dict[float, list[float]]]]] = field(default_factory=dict)

    def add(self, model: str, kind: str, tensor: str, rtol: float, value: float) -> None:
        self.data.setdefault(model, {}).setdefault(kind, {}).setdefault(tensor, {}).setdefault(
            rtol, []
        ).append(value)

    def get(self, model: str, kind: str, tensor: str, rtol: float) -> list[float]:
        return self.data[model][kind][tensor][rtol]


def sample(
    rows: int,
    features: int,
    *,
    trials: int,
    models: Sequence[str] = tuple(MODELS),
    kinds: Sequence[str] = KINDS,
    era: Era = Era.DEC_2025,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> Samples:
    """Run the correct kernel and each model on ``trials`` draws of each kind."""
    out = Samples()
    cfgs = {"correct": KernelConfig(defects=frozenset(), era=era)}
    cfgs.update(
        {m: KernelConfig(defects=MODELS.get(m) or parse_defects(m), era=era) for m in models}
    )
    total, done = len(kinds) * trials, 0
    for kind in kinds:
        rng = np.random.default_rng([seed, KINDS.index(kind)])
        for _ in range(trials):
            x, dy, g = draw(kind, rows, features, rng)
            ref = reference(x, dy, g)
            for name, got in zip(cfgs, kernels(x, dy, g, cfgs.values()), strict=True):
                for t in TENSORS:
                    for rtol, v in zip(
                        RTOLS, needed_atols(getattr(got, t), getattr(ref, t), RTOLS), strict=True
                    ):
                        out.add(name, kind, t, rtol, v)
            done += 1
            if progress:
                progress(done, total)
    return out


@dataclass(frozen=True, kw_only=True)
class Band:
    """One tensor at one rtol: the atol the correct kernel passes, and each defect's power."""

    tensor: str
    rtol: float
    atol: Real  # the correct kernel passes with probability >= 1 - alpha (Gumbel tail)
    power: dict[str, float]  # per model: share of its draws that fail at this band
    kind: str  # the data kind the band was measured on


@dataclass(frozen=True, kw_only=True)
class Quantiles:
    """A distribution of needed atol, by four of its quantiles."""

    p50: Real
    p90: Real
    p99: Real
    max: Real


@dataclass(frozen=True, kw_only=True)
class BestKind:
    """The data kind that separates a defect from the correct kernel best."""

    kind: str
    ratio: Real  # the defect's median needed atol over the correct kernel's band atol


def quantiles(values: Sequence[float]) -> dict[str, float]:
    a = np.asarray(values, dtype=np.float64)
    return {
        "p50": float(np.quantile(a, 0.5)),
        "p90": float(np.quantile(a, 0.9)),
        "p99": float(np.quantile(a, 0.99)),
        "max": float(a.max()),
    }


def band_atol(correct: Sequence[float], alpha: float) -> float:
    """The atol the correct kernel passes with 1 - alpha (Gumbel tail), never below what was seen."""
    return max(Gumbel.fit(correct).quantile(1 - alpha), max(correct))


def bands(s: Samples, *, kind: str, alpha: float) -> list[Band]:
    """Per tensor and rtol: the atol the correct kernel passes with 1 - alpha, and the power."""
    out = []
    for t in TENSORS:
        for rtol in RTOLS:
            atol = band_atol(s.get("correct", kind, t, rtol), alpha)
            power = {
                m: float(np.mean(np.asarray(s.get(m, kind, t, rtol)) > atol))
                for m in s.data
                if m != "correct"
            }
            out.append(Band(tensor=t, rtol=rtol, atol=atol, power=power, kind=kind))
    return out


def best_kind(s: Samples, model: str, *, alpha: float, tensor: str = "dx") -> tuple[str, float]:
    """The data kind where ``model``'s median needed atol most exceeds the correct band."""
    best, ratio = KINDS[0], -1.0
    for kind in s.data["correct"]:
        atol = max(Gumbel.fit(s.get("correct", kind, tensor, 0.0)).quantile(1 - alpha), 1e-12)
        r = float(np.median(s.get(model, kind, tensor, 0.0))) / atol
        if r > ratio:
            best, ratio = kind, r
    return best, ratio


# ---------------------------------------------------------------------------------- reference variants
def stats_variants(x: Any) -> dict[str, tuple[Any, Any]]:
    """Per-row (mean, rstd) in float32 by four algorithms (seed 004: the "error" a reference's own
    choice makes): Welford, two-pass, pairwise (numpy's), and a plain sequential sum."""
    x = np.asarray(x, dtype=F32)
    rows, n = x.shape
    eps = F32(1e-6)
    out: dict[str, tuple[Any, Any]] = {}
    mean = np.zeros(rows, F32)
    m2 = np.zeros(rows, F32)
    for k in range(n):  # Welford, column by column (vectorised over rows)
        delta = x[:, k] - mean
        mean = mean + delta / F32(k + 1)
        m2 = m2 + delta * (x[:, k] - mean)
    out["welford"] = (mean, F32(1) / np.sqrt(m2 / F32(n) + eps))
    mean2 = x.sum(axis=1, dtype=F32) / F32(n)
    var2 = ((x - mean2[:, None]) ** 2).sum(axis=1, dtype=F32) / F32(n)
    out["two-pass (pairwise sums)"] = (mean2, F32(1) / np.sqrt(var2 + eps))
    seq = np.cumsum(x, axis=1, dtype=F32)[:, -1] / F32(n)
    seqv = np.cumsum((x - seq[:, None]) ** 2, axis=1, dtype=F32)[:, -1] / F32(n)
    out["two-pass (sequential sums)"] = (seq, F32(1) / np.sqrt(seqv + eps))
    ex2 = (x * x).sum(axis=1, dtype=F32) / F32(n)
    out["one-pass E[x²]-E[x]²"] = (
        mean2,
        F32(1) / np.sqrt(np.maximum(ex2 - mean2 * mean2, 0) + eps),
    )
    import ml_dtypes

    w_mean, w_rstd = out["welford"]
    out["Welford, stored in bf16"] = (  # what a device's bf16 buffers hold
        w_mean.astype(ml_dtypes.bfloat16).astype(F32),
        w_rstd.astype(ml_dtypes.bfloat16).astype(F32),
    )
    return out


@dataclass(frozen=True, kw_only=True)
class VariantSpread:
    """How far one way of computing the reference's statistics lands from Welford's."""

    mean: Real  # max |Δmean|
    rstd_rel: Real  # max |Δrstd| / rstd
    xhat: Real  # max |Δx̂|
    bf16_flips: Real  # the share of x̂'s bf16 roundings that flip


def variant_spread(x: Any) -> dict[str, VariantSpread]:
    """Against Welford: max |Δmean|, max |Δrstd|/rstd, and the share of x̂ = (x - mean)·rstd
    elements whose bf16 rounding flips."""
    import ml_dtypes

    v = stats_variants(x)
    base_m, base_r = v["welford"]
    xh0 = ((x - base_m[:, None]) * base_r[:, None]).astype(F32)
    b0 = xh0.astype(ml_dtypes.bfloat16)
    out = {}
    for name, (m, r) in v.items():
        if name == "welford":
            continue
        xh = ((x - m[:, None]) * r[:, None]).astype(F32)
        out[name] = VariantSpread(
            mean=float(np.abs(m - base_m).max()),
            rstd_rel=float((np.abs(r - base_r) / base_r).max()),
            xhat=float(np.abs(xh - xh0).max()),
            bf16_flips=float(np.mean(xh.astype(ml_dtypes.bfloat16) != b0)),
        )
    return out


# ---------------------------------------------------------------------------------- a shape
@dataclass(frozen=True, kw_only=True)
class ShapeStudy:
    """Everything ``lnrepro tolerance --shape`` reports, computed; renderers only draw it."""

    samples: Samples
    trials: int
    alpha: float
    bands: list[Band]
    best: dict[str, tuple[str, float]]
    variants: dict[str, VariantSpread] | None

    def document(self, shape: str) -> ShapeDoc:
        """``lnrepro tolerance --shape --json``: the study without its raw samples."""
        s = self.samples
        return ShapeDoc(
            shape=shape,
            trials=self.trials,
            alpha=self.alpha,
            quantiles={
                m: {
                    k: {t: Quantiles(**quantiles(s.get(m, k, t, 0.0))) for t in TENSORS}
                    for k in s.data[m]
                }
                for m in s.data
            },
            bands=tuple(self.bands),
            best_kind={m: BestKind(kind=k, ratio=r) for m, (k, r) in self.best.items()},
            reference_variants=self.variants,
        )

    def plot_lines(self) -> dict[str, float]:
        """The tolerances a plot of dx marks: the NIGHTLY test's, the tight tests', the band."""
        dx = next(b for b in self.bands if b.tensor == "dx" and b.rtol == 0.0)
        return {"NIGHTLY atol 0.5": 0.5, "tight atol 0.01": 0.01, f"band {dx.atol:.3g}": dx.atol}


def shape_study(
    rows: int,
    features: int,
    *,
    trials: int,
    models: Sequence[str],
    era: Era,
    alpha: float,
    reference_variants: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> ShapeStudy:
    s = sample(rows, features, trials=trials, models=models, era=era, progress=progress)
    variants = None
    if reference_variants:
        x, _, _ = draw("test", rows, features, np.random.default_rng(0))
        variants = variant_spread(x)
    return ShapeStudy(
        samples=s,
        trials=trials,
        alpha=alpha,
        bands=bands(s, kind="test", alpha=alpha),
        best={m: best_kind(s, m, alpha=alpha) for m in models},
        variants=variants,
    )


# ---------------------------------------------------------------------------------- the seeds' tests
Probability = Annotated[float, msgspec.Meta(ge=0.0, le=1.0)]


@dataclass(frozen=True, kw_only=True)
class ShapeDoc:
    """``lnrepro tolerance --shape --json`` (``lnrepro.tolerance/1``): per model, data kind and
    tensor the needed atol's quantiles; the bands on the test's own data; the data kind that
    separates each defect best; and the reference's own variants (with --reference-variants)."""

    schema: Literal["lnrepro.tolerance/1"] = SCHEMA
    shape: str
    trials: int
    alpha: float
    quantiles: dict[str, dict[str, dict[str, Quantiles]]]  # model -> data kind -> tensor
    bands: tuple[Band, ...]
    best_kind: dict[str, BestKind]  # per defect model
    reference_variants: dict[str, VariantSpread] | None  # by the way it computes the statistics


@dataclass(frozen=True, kw_only=True)
class TestVerdict:
    """One test's own tolerance, judged, and the band that does both jobs on its data."""

    __test__ = False

    test: str
    tolerance: dict[str, tuple[float, float]]  # tensor -> (rtol, atol) as the test has it
    correct_pass: Probability  # P(the correct kernel passes the test as written)
    shipped_fail: Probability  # P(the shipped kernel fails it)
    band_atol_rtol0: dict[str, Real]  # tensor -> atol at rtol 0 the correct kernel passes
    band_power: Probability  # P(the shipped kernel fails the band) on the test's own data
    draws: int


@dataclass(frozen=True, kw_only=True)
class TestsDoc:
    """``lnrepro tolerance --json`` without --shape (``lnrepro.tolerance/1``): each test."""

    __test__ = False

    schema: Literal["lnrepro.tolerance/1"] = SCHEMA
    trials: int
    alpha: float
    tests: tuple[TestVerdict, ...]


# The two documents of ``lnrepro tolerance --json``: one schema, told apart by their fields.
ToleranceDoc = TestsDoc | ShapeDoc


def _margins(s: Samples, model: str, tol: dict[str, tuple[float, float]]) -> Any:
    """Per draw: max over tensors of (needed atol at the test's rtol - the test's atol)."""
    cols = []
    for t, (rtol, atol) in tol.items():
        rt = min(RTOLS, key=lambda r: abs(r - rtol))
        cols.append(np.asarray(s.get(model, "test", t, rt)) - atol)
    return np.max(np.stack(cols), axis=0)


def seeds_table(
    names: Sequence[str],
    *,
    trials: int,
    alpha: float = 1e-6,
    era: Era = Era.DEC_2025,
    seed: int = 0,
    progress: Callable[[str, int, int], None] | None = None,
) -> list[TestVerdict]:
    """The verdict of each named test's own tolerance, and the band that does both jobs."""
    from lnrepro.emulator.catalogue import BY_NAME, DataSource, make_inputs, tolerances

    out = []
    cache: dict[tuple[int, int], Samples] = {}
    for name in names:
        case = BY_NAME[name]
        tol = {t: (r, a) for t, (r, a, _) in tolerances(case, era).items()}
        if case.deterministic:  # constant inputs: one draw says it all
            x, dy, g = make_inputs(case, DataSource())
            ref = reference(x, dy, g)
            models = {"correct": frozenset[Defect](), "shipped": MODELS["shipped"]}
            cfgs = [KernelConfig(defects=d, era=era) for d in models.values()]
            got = dict(zip(models, kernels(x, dy, g, cfgs), strict=True))
            # per model and tensor: the atol needed at rtol 0, and at the test's own rtol
            need = {
                m: {
                    t: needed_atols(getattr(got[m], t), getattr(ref, t), (0.0, tol[t][0]))
                    for t in TENSORS
                }
                for m in models
            }
            ok = {m: all(need[m][t][1] <= tol[t][1] for t in TENSORS) for m in models}
            band = {t: need["correct"][t][0] for t in TENSORS}
            power = float(any(need["shipped"][t][0] > band[t] for t in TENSORS))
            correct_pass, shipped_fail, draws = float(ok["correct"]), float(not ok["shipped"]), 1
        else:
            key = (case.rows, case.features)
            if key not in cache:
                tick = functools.partial(progress, name) if progress is not None else None
                cache[key] = sample(
                    case.rows,
                    case.features,
                    trials=trials,
                    models=("shipped",),
                    kinds=("test",),
                    era=era,
                    seed=seed,
                    progress=tick,
                )
            s = cache[key]
            margins = _margins(s, "correct", tol)
            fit = Gumbel.fit(list(margins))
            correct_pass = (
                1.0 - fit.exceed(0.0) if margins.max() <= 0 else float(np.mean(margins <= 0))
            )
            shipped_fail = float(np.mean(_margins(s, "shipped", tol) > 0))
            band = {t: band_atol(s.get("correct", "test", t, 0.0), alpha) for t in TENSORS}
            fails = np.zeros(trials, dtype=bool)
            for t in TENSORS:
                fails |= np.asarray(s.get("shipped", "test", t, 0.0)) > band[t]
            power, draws = float(fails.mean()), trials
        out.append(
            TestVerdict(
                test=case.full_name,
                tolerance=tol,
                correct_pass=correct_pass,
                shipped_fail=shipped_fail,
                band_atol_rtol0=band,
                band_power=power,
                draws=draws,
            )
        )
    return out


def select_tests(patterns: Sequence[str]) -> list[str]:
    """Modelled tests matching gtest-style ``patterns`` (full or short names); none: the default
    filter's (BugRepro and NIGHTLY)."""
    from lnrepro.emulator.catalogue import CASES
    from lnrepro.model.requests import DEFAULT_FILTER

    pats = list(patterns) or DEFAULT_FILTER.split(":")
    return [c.full_name for c in CASES if any(c.matches(p) for p in pats)]


def check_shape(rows: int, features: int) -> str | None:
    """Why a shape is too large to study here (None when it is fine)."""
    if features > MAX_FEATURES:
        return f"{features} features is more than the largest allowed, {MAX_FEATURES}"
    if rows * features > MAX_ELEMENTS:
        return f"{rows} rows x {features} features is more than the largest allowed, {MAX_ELEMENTS} elements"
    return None
