"""Margin evidence: what a run's numbers say about which side of the bug its commit is on.

A numerical test that passes still measured how close it came: each compared quantity's share
of its tolerance (``max|got - want| / (atol + rtol·|want|)``, 1 at the edge of failing), or a
metric such as ``max_diff``. At the buggy and the clean endpoint these numbers often differ by
far more than their spread from run to run (issue 47: dx used 10-13% of its tolerance at the
shipped kernel, 2.6-2.8% at the fixed one, the test passing at both), so one run of a commit can
tell its side where its pass/fail verdict tells nothing. Pure: numpy, no I/O.

The verdict is counted as before (the fail rates learned by :mod:`lnrepro.bisect.bayes`); a
margin adds its likelihood *given the verdict*, so nothing is counted twice: a passing run's
margin is compared with the endpoints' passing runs, a failing run's with their failing runs.

* :class:`Density` — one side's distribution of one quantity over its runs of one verdict, on a
  log scale: a Gaussian kernel density estimate mixed with a floor spread a decade around the
  endpoints' margins (weight ``1/(n+2)``, the chance the next run falls where none of ``n``
  did), so no likelihood is ever 0 and one run moves the odds by a bounded factor. Where a
  verdict was seen at one endpoint only, its margins cannot be compared: such a run is told by
  its verdict alone.
* :func:`choose` — from the endpoints' runs, each quantity's separation (the mean leave-one-out
  evidence a run's margin gives for its own side, in nats) and the best one; ``auto`` uses it
  when that is at least :data:`SEPARATES`.
* :class:`MarginModel` — the chosen quantity: a run's log-likelihood on each side, whether it
  matches either side at all (drift: an unrelated numerics change moved it), and the
  information a batch of runs is expected to give (:meth:`MarginModel.channel`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lnrepro.model.requests import Margin

Array = np.ndarray[Any, Any]

LOG_LO, LOG_HI = -12.0, 6.0  # log10 of the margins the floor spreads over (1e-12 to 1e6)
MIN_BANDWIDTH = 0.05  # log10: 12%; a deterministic test repeats its numbers to the last bit
DRIFT_RUNS = 3  # runs of a verdict at each endpoint before a margin can match neither
SEPARATES = 1.5  # nats of mean leave-one-out evidence per run: auto turns margins on
FIRST_LOOK = 2  # runs of each endpoint before a first look: margins that say nothing stop here
LEARN_RUNS = 5  # runs of each endpoint that teach the margins (at most 10 in all, issue 47)
_CLIP = 8.0  # nats: one run's leave-one-out evidence counted at most this far, either way
_BIN = 0.25  # nats: the grid a batch's summed evidence is kept on (:meth:`MarginModel.channel`)
_SPAN = 24.0  # nats: summed evidence beyond this is as decisive as it gets


MarginMode = Margin  # --margin auto|on|off


def log_margin(value: float) -> float:
    """A margin on the scale the densities use: log10, NaN and inf at the top, 0 at the bottom."""
    if value != value or value == math.inf:
        return LOG_HI
    if value <= 0.0:
        return LOG_LO
    return min(max(math.log10(value), LOG_LO), LOG_HI)


@dataclass(frozen=True)
class Density:
    """One side's distribution of one quantity's log10 margin over its runs of one verdict."""

    samples: tuple[float, ...]  # log10 margins
    lo: float = LOG_LO  # where the floor spreads (the endpoints' margins, a decade around)
    hi: float = LOG_HI
    spread: float = 0.0  # the spread within a group, pooled over every group of the quantity

    @property
    def bandwidth(self) -> float:
        """Silverman's rule on the pooled spread, never below :data:`MIN_BANDWIDTH` (one or
        two runs of a group say little of its own spread)."""
        return max(MIN_BANDWIDTH, 1.06 * self.spread * math.pow(max(1, len(self.samples)), -0.2))

    @property
    def floor(self) -> float:
        """The weight of the broad floor: where none of ``n`` runs fell, the next may."""
        return 1.0 / (len(self.samples) + 2)

    def kde(self, x: Array) -> Array:
        """The kernel density alone (no floor) at log10 margins ``x``."""
        xs = np.asarray(x, dtype=float)
        if not self.samples:
            return np.zeros(len(xs))
        s = np.asarray(self.samples)[None, :]
        h = self.bandwidth
        z = (xs[:, None] - s) / h
        out: Array = np.exp(-0.5 * z * z).mean(axis=1) / (h * math.sqrt(2 * math.pi))
        return out

    def logpdf(self, x: Array) -> Array:
        w = self.floor
        out: Array = np.log((1 - w) * self.kde(x) + w / (self.hi - self.lo))
        return out

    def matches(self, x: float) -> bool:
        """Whether ``x`` is more likely one of this side's runs than one from anywhere."""
        w = self.floor
        return bool((1 - w) * self.kde(np.array([x]))[0] > w / (self.hi - self.lo))


Sample = tuple[float, bool]  # (log10 margin, the run failed)


def _spread(groups: Sequence[Sequence[float]]) -> float:
    """The standard deviation within groups, pooled."""
    ss = sum(float(((np.asarray(g) - np.mean(g)) ** 2).sum()) for g in groups if len(g) > 1)
    dof = sum(len(g) - 1 for g in groups if len(g) > 1)
    return math.sqrt(ss / dof) if dof else 0.0


def _span(xs: Sequence[float]) -> tuple[float, float]:
    lo, hi = (min(xs), max(xs)) if xs else (-1.0, 0.0)
    mid = (lo + hi) / 2
    return min(lo - 1.0, mid - 1.5), max(hi + 1.0, mid + 1.5)


def _pair(
    own: Sequence[float], other: Sequence[float], lo: float, hi: float, spread: float
) -> tuple[Density, Density] | None:
    """The densities of one verdict's margins on two sides; None when a side has none (then a
    run of that verdict is told by its verdict alone: its margin looks alike on both sides)."""
    if not own or not other:
        return None
    return Density(tuple(own), lo, hi, spread), Density(tuple(other), lo, hi, spread)


def _groups(bad: Sequence[Sample], good: Sequence[Sample]) -> list[list[float]]:
    return [[x for x, f in side if f == v] for side in (bad, good) for v in (True, False)]


@dataclass(frozen=True)
class Separation:
    quantity: str
    nats: float  # mean leave-one-out evidence a compared run's margin gives for its own side
    bad: tuple[Sample, ...]
    good: tuple[Sample, ...]
    compared: int = 0  # runs whose verdict was seen on both sides: their margins could be

    def describe(self) -> str:
        def rng(v: Sequence[Sample]) -> str:
            xs = [10**x for x, _ in v]
            return f"{min(xs):.3g}-{max(xs):.3g}" if len(xs) > 1 else f"{xs[0]:.3g}"

        return (
            f"{self.quantity}: {rng(self.bad)} at the bad endpoint, {rng(self.good)} at the good "
            f"one ({len(self.bad)}+{len(self.good)} runs; {self.nats:.1f} nats a run)"
        )


def separation(quantity: str, bad: Sequence[Sample], good: Sequence[Sample]) -> Separation:
    """How well ``quantity``'s margin tells the sides apart beyond the verdict: each endpoint
    run's evidence for its own side under densities of the same verdict fitted to the *other*
    runs (leave one out), clipped, averaged over the runs whose verdict was seen on both sides
    (0 with fewer than two such runs: nothing to compare)."""
    lo, hi = _span([x for x, _ in (*bad, *good)])
    spread = _spread(_groups(bad, good))
    ev: list[float] = []
    compared = 0
    for own, other in ((bad, good), (good, bad)):
        for i, (x, failed) in enumerate(own):
            mine = [y for j, (y, f) in enumerate(own) if f == failed and j != i]
            theirs = [y for y, f in other if f == failed]
            pair = _pair(mine, theirs, lo, hi, spread)
            if pair is None:
                continue
            compared += 1
            xs = np.array([x])
            d = float(pair[0].logpdf(xs)[0] - pair[1].logpdf(xs)[0])
            ev.append(min(max(d, -_CLIP), _CLIP))
    nats = sum(ev) / compared if compared >= 2 else 0.0
    return Separation(quantity, nats, tuple(bad), tuple(good), compared)


RunMargins = tuple[Mapping[str, float], bool]  # one run: its margins, and whether it failed


def choose(bad_runs: Sequence[RunMargins], good_runs: Sequence[RunMargins]) -> list[Separation]:
    """Every quantity measured in at least two runs of each endpoint, best separating first."""
    names = sorted({q for r, _ in bad_runs for q in r} & {q for r, _ in good_runs for q in r})
    out = []
    for q in names:
        b = [(log_margin(r[q]), f) for r, f in bad_runs if q in r]
        g = [(log_margin(r[q]), f) for r, f in good_runs if q in r]
        if len(b) >= 2 and len(g) >= 2:
            out.append(separation(q, b, g))
    return sorted(out, key=lambda s: (-s.nats, s.quantity))


@dataclass(frozen=True)
class MarginModel:
    """The chosen quantity's margins at each endpoint, per verdict: what a run of it adds to its
    verdict (which the search counts as before)."""

    quantity: str
    bad: tuple[Sample, ...]
    good: tuple[Sample, ...]

    @classmethod
    def of(cls, sep: Separation) -> MarginModel:
        return cls(sep.quantity, sep.bad, sep.good)

    def _pairs(self, failed: bool) -> tuple[Density, Density] | None:
        lo, hi = _span([x for x, _ in (*self.bad, *self.good)])
        spread = _spread(_groups(self.bad, self.good))
        return _pair(
            [x for x, f in self.bad if f == failed],
            [x for x, f in self.good if f == failed],
            lo,
            hi,
            spread,
        )

    def loglik(self, value: float, failed: bool) -> tuple[float, float] | None:
        """(log f_bad, log f_good) of one run's margin given its verdict: (0, 0) where that
        verdict was seen on one side only; None when it matches neither side (drift: the
        margin is not counted, not forced to a side; the verdict still is)."""
        pair = self._pairs(failed)
        if pair is None:
            return 0.0, 0.0
        x = log_margin(value)
        if not pair[0].matches(x) and not pair[1].matches(x):
            # where neither side's runs fell, only the floors speak, and they differ by the
            # number of runs, not by the side: no evidence; drift once both sides had their runs
            judged = min(len(pair[0].samples), len(pair[1].samples)) >= DRIFT_RUNS
            return None if judged else (0.0, 0.0)
        xs = np.array([x])
        return float(pair[0].logpdf(xs)[0]), float(pair[1].logpdf(xs)[0])

    def channel(self, ms: Sequence[int], rates: tuple[float, float]) -> list[tuple[Array, Array]]:
        """For ``m`` runs of one commit: the distribution of their summed evidence (verdict and
        margin) ``log P_bad - log P_good`` if the commit is bad, and if it is good, on a grid of
        :data:`_BIN` nats from -:data:`_SPAN` to +:data:`_SPAN` (the posterior over the
        candidates depends on a commit's runs only through that sum). ``rates``: the fail
        rates of bad and good commits as learned so far."""
        qb, qg = (min(max(q, 1e-6), 1 - 1e-6) for q in rates)
        lo, hi = _span([x for x, _ in (*self.bad, *self.good)])
        x = np.linspace(lo, hi, 400)
        d = x[1] - x[0]
        pbs, pgs = [], []
        for failed, vb, vg in ((True, qb, qg), (False, 1 - qb, 1 - qg)):
            pair = self._pairs(failed)
            if pair is None:
                pbs.append(np.array([vb]))
                pgs.append(np.array([vg]))
                continue
            pb = np.exp(pair[0].logpdf(x)) * d
            pg = np.exp(pair[1].logpdf(x)) * d
            pbs.append(vb * pb / pb.sum())
            pgs.append(vg * pg / pg.sum())
        pb, pg = np.concatenate(pbs), np.concatenate(pgs)
        llr = np.log(pb) - np.log(pg)
        n = round(2 * _SPAN / _BIN) + 1
        idx = np.clip(np.round((llr + _SPAN) / _BIN).astype(int), 0, n - 1)
        one_b, one_g = np.bincount(idx, pb, n), np.bincount(idx, pg, n)
        one_b, one_g = one_b / one_b.sum(), one_g / one_g.sum()
        res: dict[int, tuple[Array, Array]] = {}
        cur_b, cur_g, have = one_b, one_g, 1
        for m in sorted(set(ms)):
            while have < m:
                cur_b = _fold(np.convolve(cur_b, one_b), n)
                cur_g = _fold(np.convolve(cur_g, one_g), n)
                have += 1
            res[m] = (cur_b, cur_g)
        return [res[m] for m in ms]


def _fold(p: Array, n: int) -> Array:
    """A convolution of two grids of ``n`` points back onto ``n``, the tails piled at the ends."""
    mid = (n - 1) // 2
    c: Array = p[mid : mid + n].copy()  # the sum's zero sits at index 2*mid of the convolution
    c[0] += p[:mid].sum()
    c[-1] += p[mid + n :].sum()
    return c


def information(p: Array, rows: Array, channel: tuple[Array, Array]) -> Array:
    """Expected bits gained about the culprit by a batch of runs of each commit (``rows``: does
    the commit contain candidate h), the batch's summed evidence distributed as ``channel``.

    A commit's runs multiply the posterior of the candidates it contains by ``P_bad(D)`` and of
    the others by ``P_good(D)``, so the entropy after seeing ``D`` needs only A (the mass it
    contains) and the sums of p·log p inside and outside it."""
    pb, pg = channel
    keep = (pb > 0) | (pg > 0)
    pb, pg = pb[keep], pg[keep]
    with np.errstate(divide="ignore", invalid="ignore"):
        plogp = np.where(p > 0, p * np.log2(np.where(p > 0, p, 1.0)), 0.0)
    h0 = -float(plogp.sum())
    a = (rows * p[None, :]).sum(axis=1)  # (S,)
    e_in = (rows * plogp[None, :]).sum(axis=1)
    e_out = float(plogp.sum()) - e_in
    lpb = np.log2(np.where(pb > 0, pb, 1.0))
    lpg = np.log2(np.where(pg > 0, pg, 1.0))
    z = a[:, None] * pb[None, :] + (1 - a)[:, None] * pg[None, :]  # (S, D)
    lz = np.log2(np.where(z > 0, z, 1.0))
    # Z·H(post | D) = -(Pb (E_in + A log Pb) + Pg (E_out + (1-A) log Pg)) + Z log Z
    zh = (
        -(
            pb[None, :] * (e_in[:, None] + a[:, None] * lpb[None, :])
            + pg[None, :] * (e_out[:, None] + (1 - a)[:, None] * lpg[None, :])
        )
        + z * lz
    )
    out: Array = np.maximum(h0 - zh.sum(axis=1), 0.0)
    return out


@dataclass(frozen=True, kw_only=True)
class MarginDecision:
    """What the endpoints' runs decided about margins, and why (the output's first lines)."""

    on: bool
    why: str
    model: MarginModel | None = None
    separations: tuple[Separation, ...] = ()


def decide(
    mode: MarginMode, bad_runs: Sequence[RunMargins], good_runs: Sequence[RunMargins]
) -> MarginDecision:
    """``--margin``'s decision from the endpoints' runs' margins."""
    if mode is MarginMode.OFF:
        return MarginDecision(on=False, why="--margin off: verdicts only")
    seps = choose(bad_runs, good_runs)
    if not seps:
        return MarginDecision(
            on=False,
            why=f"--margin {mode.value}: the runs report no margin at both endpoints "
            "(a test that prints nothing on a pass gives its verdict only): verdicts only",
        )
    best = seps[0]
    if mode is MarginMode.AUTO and best.nats < SEPARATES:
        return MarginDecision(
            on=False,
            why=f"--margin auto: off, the endpoints' margins do not separate the sides "
            f"(best {best.describe()}; needs {SEPARATES:g}): verdicts only",
            separations=tuple(seps),
        )
    return MarginDecision(
        on=True,
        why=f"--margin {mode.value}: on, {best.describe()}",
        model=MarginModel.of(best),
        separations=tuple(seps),
    )
