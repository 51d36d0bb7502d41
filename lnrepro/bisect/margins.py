"""Margin evidence: what a run's numbers say about which side of the bug its commit is on.

A numerical test that passes still measured how close it came: each compared quantity's share
of its tolerance (``max|got - want| / (atol + rtol·|want|)``, 1 at the edge of failing), or a
metric such as ``max_diff``. At the buggy and the clean endpoint these numbers often differ by
far more than their spread from run to run (issue 47: dx used 10-13% of its tolerance at the
shipped kernel, 2.6-2.8% at the fixed one, the test passing at both), so one run of a commit can
tell its side where its pass/fail verdict tells nothing. Pure: numpy, no I/O.

The verdict is counted as before (the fail rates learned by :mod:`lnrepro.bisect.bayes`); a
margin adds its likelihood *given the verdict*, so nothing is counted twice: a passing run's
margin is compared with the endpoints' passing runs, a failing run's with their failing runs. A
verdict one endpoint never showed (a clean endpoint that did not fail in its runs) is weighed
against :class:`Unseen`. Weighing a run by its margin alone, its verdict dropped, was measured
and not kept: the clean side's floor then speaks for failures it never showed, and a clean
commit's rare failure counts as near proof of the bug (docs/performance.md).

A margin *implies* the verdict when every endpoint run failed exactly when it was over 1 (the
quantity is what the test judges): then it is compared whatever the verdict when deciding
``auto``, its rank test has a level spent on power (:func:`level_of`), and a margin matching
neither side counts for the clean side (:meth:`MarginModel.drift_loglik`).

* :class:`Density` — one side's distribution of one quantity over its runs of one verdict, on a
  log scale: a Gaussian kernel density estimate mixed with a floor spread a decade around the
  endpoints' margins (weight ``1/(n+2)``, the chance the next run falls where none of ``n``
  did), so no likelihood is ever 0 and one run moves the odds by a bounded factor.
* :class:`Unseen` — a verdict one endpoint never showed: half like the other side's runs.
* :func:`choose` — from the endpoints' runs, each quantity's separation (the median leave-one-out
  evidence a run's margin gives for its own side, in nats) and the best one; ``auto`` uses it
  when that is at least :data:`SEPARATES` *and* a rank test (Mann-Whitney, two-sided, exact)
  at :func:`level_of` says the two endpoints' margins differ: margins that carry nothing look
  separated at most that often. :func:`cannot_separate` stops the endpoint runs early once no
  quantity can pass that test in :data:`LEARN_RUNS` runs of each endpoint.
* :class:`MarginModel` — the chosen quantity: a run's log-likelihood on each side, whether it
  matches either side at all (drift: an unrelated numerics change moved it), and the
  information a batch of runs is expected to give (:meth:`MarginModel.channel`).
"""

from __future__ import annotations

import functools
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
SEPARATES = 0.5  # nats of median leave-one-out evidence per run: auto turns margins on
LEVEL = 0.01  # the rank test's level: margins alike at both endpoints pass it at most this often
LEVEL_IMPLIED = 0.1  # its level for a margin that implies the verdict (see :func:`level_of`)
DRIFT_ODDS = 3.0  # a margin matching neither side: this much likelier clean than buggy (implied)
UNSEEN_LIKE = 0.5  # a verdict one side never showed: this share of its margins like the other's
LEAST_RUNS = 3  # runs of each endpoint at the least (the buggy one may take the clean one's)
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


@dataclass(frozen=True)
class Unseen:
    """One side's distribution of a verdict it never showed at its endpoint (a clean endpoint
    that did not fail in its 5 runs): where the other side's runs of that verdict fell, half
    like them and half anywhere the verdict allows (over 1 for a failure where the margin
    implies the verdict); elsewhere like the other side (no evidence). So a failure like the
    buggy endpoint's failures counts at most twice as likely buggy as its verdict alone says (it
    cannot tell more: the clean side's failures, if any, were never seen), and a clean commit's
    rare failure is not taken for proof. A run unlike the other side's runs says nothing: it may
    be this side's unseen verdict, or an unrelated numerics change (drift) on the other side."""

    like: Density
    lo: float  # where the verdict allows the margin (log10)
    hi: float
    samples: tuple[float, ...] = ()

    def logpdf(self, x: Array) -> Array:
        xs = np.asarray(x, dtype=float)
        inside = ((xs >= self.lo) & (xs <= self.hi)) / max(self.hi - self.lo, 1e-9)
        w, seen = UNSEEN_LIKE, self.like.logpdf(xs)
        f = self.like.floor
        near = (1 - f) * self.like.kde(xs) > f / (self.like.hi - self.like.lo)
        out: Array = np.where(near, np.log(w * np.exp(seen) + (1 - w) * inside), seen)
        return out

    def matches(self, x: float) -> bool:
        return False  # no run of it was seen: nothing to match


Side = Density | Unseen
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
    own: Sequence[float],
    other: Sequence[float],
    lo: float,
    hi: float,
    spread: float,
    region: tuple[float, float] | None = None,
) -> tuple[Side, Side] | None:
    """The densities of one verdict's margins on two sides. Where one side never showed the
    verdict and ``region`` is given (where the verdict allows the margin), that side's is
    :class:`Unseen`; else None (a run of that verdict is told by its verdict alone)."""
    if own and other:
        return Density(tuple(own), lo, hi, spread), Density(tuple(other), lo, hi, spread)
    if region is None or not (own or other):
        return None
    seen = Density(tuple(own or other), lo, hi, spread)
    unseen = Unseen(seen, *region)
    return (seen, unseen) if own else (unseen, seen)


def _groups(bad: Sequence[Sample], good: Sequence[Sample]) -> list[list[float]]:
    return [[x for x, f in side if f == v] for side in (bad, good) for v in (True, False)]


def implies_verdict(bad: Sequence[Sample], good: Sequence[Sample]) -> bool:
    """Whether every endpoint run failed exactly when its margin was over 1 (log10 over 0): the
    quantity is what the test judges, so its margin carries the verdict too."""
    return all((x > 0.0) == f for x, f in (*bad, *good))


def mann_whitney_u(bad: Sequence[float], good: Sequence[float]) -> float:
    """Pairs (a bad run, a good run) with the bad run's margin the larger, ties a half."""
    return sum(1.0 if b > g else 0.5 if b == g else 0.0 for b in bad for g in good)


@functools.cache
def u_critical(n: int, m: int, level: float = LEVEL) -> int:
    """The largest ``u`` with P(min(U, nm - U) <= u) <= ``level`` for ``n`` and ``m`` runs drawn
    from one distribution (exact: every ordering of the runs equally likely); -1 when even a
    complete separation is not that rare (2+2 runs: 1 in 3)."""
    counts = [[[0] * (n * m + 1) for _ in range(m + 1)] for _ in range(n + 1)]
    for i in range(n + 1):
        for j in range(m + 1):
            if i == 0 or j == 0:
                counts[i][j][0] = 1
                continue
            for u in range(i * j + 1):  # the largest of the i+j is a bad run (adds j) or not
                counts[i][j][u] = (counts[i - 1][j][u - j] if u >= j else 0) + counts[i][j - 1][u]
    total = math.comb(n + m, n)
    acc, best = 0, -1
    for u in range(n * m // 2 + 1):
        acc += counts[n][m][u]
        if 2 * acc / total > level:
            break
        best = u
    return best


def level_of(bad: Sequence[Sample], good: Sequence[Sample]) -> float:
    """The rank test's level for one quantity: :data:`LEVEL` (1 in 100 false separations) for a
    margin measured beside the verdict (it did not fail when the run did, or the reverse): alike
    at both endpoints, it would be weighed as evidence it is not. :data:`LEVEL_IMPLIED` for one
    that implies the verdict: alike at both endpoints, it would mean verdicts alike there too (a
    bug no search can find), so the level is spent on power instead: a clean endpoint's rare
    failure (5% a run: 1 in 4.4 sets of 5 runs) lands among the buggy runs and a strict test
    would turn off the margins that cut a 70%/5% search by two thirds."""
    return LEVEL_IMPLIED if implies_verdict(bad, good) else LEVEL


def rank_separates(bad: Sequence[Sample], good: Sequence[Sample]) -> bool:
    """The rank test at :func:`level_of`: the endpoints' margins differ (either direction)."""
    u = mann_whitney_u([x for x, _ in bad], [x for x, _ in good])
    crit = u_critical(len(bad), len(good), level_of(bad, good))
    return min(u, len(bad) * len(good) - u) <= crit


@dataclass(frozen=True)
class Separation:
    quantity: str
    nats: float  # median leave-one-out evidence a compared run's margin gives for its own side
    bad: tuple[Sample, ...]
    good: tuple[Sample, ...]
    compared: int = 0  # runs whose margins could be compared (see separation())
    implied: bool = False  # the margin implies the verdict: every run is compared, pass or fail
    ranks: bool = True  # the rank test at level_of() says the endpoints' margins differ

    def describe(self) -> str:
        def rng(v: Sequence[Sample]) -> str:
            xs = [10**x for x, _ in v]
            lo, hi = f"{min(xs):.3g}", f"{max(xs):.3g}"
            return lo if lo == hi else f"{lo}-{hi}"  # never "0.113-0.113"

        return (
            f"{self.quantity}: {rng(self.bad)} at the bad endpoint, {rng(self.good)} at the good "
            f"one ({len(self.bad)}+{len(self.good)} runs; {self.nats:.1f} nats a run)"
        )


def separation(
    quantity: str, bad: Sequence[Sample], good: Sequence[Sample], implied: bool | None = None
) -> Separation:
    """How well ``quantity``'s margin tells the sides apart: each endpoint run's evidence for its
    own side under densities fitted to the *other* runs (leave one out), clipped, the median over
    the runs compared (0 with fewer than two; the median: a clean endpoint's one rare failure
    among the buggy runs does not outvote the nine that separate). A margin that implies the
    verdict (:func:`implies_verdict`) is compared whatever the verdict: that it separates the
    sides is what matters (a buggy endpoint that failed 5 runs of 5 against a clean one that
    passed 5 has no verdict in common, and its margins still tell a buggy commit's rare pass
    from a clean one's). One that does not is compared beyond the verdict: under the runs of its own
    verdict, only runs whose verdict was seen on both sides."""
    if implied is None:
        implied = implies_verdict(bad, good)
    lo, hi = _span([x for x, _ in (*bad, *good)])
    spread = _spread(_groups(bad, good))
    ev: list[float] = []
    compared = 0
    for own, other in ((bad, good), (good, bad)):
        for i, (x, failed) in enumerate(own):
            mine = [y for j, (y, f) in enumerate(own) if (implied or f == failed) and j != i]
            theirs = [y for y, f in other if implied or f == failed]
            pair = _pair(mine, theirs, lo, hi, spread)
            if pair is None:
                continue
            compared += 1
            xs = np.array([x])
            d = float(pair[0].logpdf(xs)[0] - pair[1].logpdf(xs)[0])
            ev.append(min(max(d, -_CLIP), _CLIP))
    nats = float(np.median(ev)) if compared >= 2 else 0.0
    ranks = rank_separates(bad, good)
    return Separation(quantity, nats, tuple(bad), tuple(good), compared, implied, ranks)


RunMargins = tuple[Mapping[str, float], bool]  # one run: its margins, and whether it failed


def samples(runs: Sequence[RunMargins], q: str) -> list[Sample]:
    """One quantity's (log10 margin, failed) over the runs that report it."""
    return [(log_margin(r[q]), f) for r, f in runs if q in r]


def choose(bad_runs: Sequence[RunMargins], good_runs: Sequence[RunMargins]) -> list[Separation]:
    """Every quantity measured in at least two runs of each endpoint, best separating first."""
    names = sorted({q for r, _ in bad_runs for q in r} & {q for r, _ in good_runs for q in r})
    out = []
    for q in names:
        b, g = samples(bad_runs, q), samples(good_runs, q)
        if len(b) >= 2 and len(g) >= 2:
            out.append(separation(q, b, g))
    return sorted(out, key=lambda s: (-s.nats, s.quantity))


def cannot_separate(
    bad_runs: Sequence[RunMargins], good_runs: Sequence[RunMargins], runs: int = LEARN_RUNS
) -> bool:
    """Whether no quantity can pass the rank test after ``runs`` runs of each endpoint, whatever
    the runs still to come: a pair of runs ordered against a separation stays so, so when every
    quantity already has more such pairs (in both directions) than the test allows, the
    remaining endpoint runs are not spent (margins that carry nothing cost 4.8 endpoint runs on
    average in scripts/bench_bisect.py, most of which the search on verdicts makes anyway)."""
    names = {q for r, _ in bad_runs for q in r} | {q for r, _ in good_runs for q in r}
    if not names:
        return False
    for q in names:
        bs, gs = samples(bad_runs, q), samples(good_runs, q)
        crit = u_critical(runs, runs, level_of(bs, gs))
        u = mann_whitney_u([x for x, _ in bs], [x for x, _ in gs])
        if min(u, len(bs) * len(gs) - u) <= crit:
            return False
    return True


@dataclass(frozen=True)
class MarginModel:
    """The chosen quantity's margins at each endpoint: what a run of it says of its side."""

    quantity: str
    bad: tuple[Sample, ...]
    good: tuple[Sample, ...]
    implied: bool = False  # the margin implies the verdict: an unseen verdict's region, drift odds

    @classmethod
    def of(cls, sep: Separation) -> MarginModel:
        return cls(sep.quantity, sep.bad, sep.good, sep.implied)

    def _pairs(self, failed: bool) -> tuple[Side, Side] | None:
        lo, hi = _span([x for x, _ in (*self.bad, *self.good)])
        spread = _spread(_groups(self.bad, self.good))
        region = ((0.0, hi) if failed else (lo, 0.0)) if self.implied else (lo, hi)
        return _pair(
            [x for x, f in self.bad if f == failed],
            [x for x, f in self.good if f == failed],
            lo,
            hi,
            spread,
            region,
        )

    def loglik(self, value: float, failed: bool) -> tuple[float, float] | None:
        """(log f_bad, log f_good) of one run's margin given its verdict (a verdict one side
        never showed: :class:`Unseen`); None when it matches neither side's runs (drift: an
        unrelated numerics change moved it; not forced to a side; the verdict still counts)."""
        pair = self._pairs(failed)
        if pair is None:
            return 0.0, 0.0
        x = log_margin(value)
        b, g = pair
        if isinstance(b, Density) and isinstance(g, Density) and not (b.matches(x) or g.matches(x)):
            # where neither side's runs fell, only the floors speak, and they differ by the
            # number of runs, not by the side: no evidence; drift once both sides had their runs
            judged = min(len(b.samples), len(g.samples)) >= DRIFT_RUNS
            return None if judged else (0.0, 0.0)
        xs = np.array([x])
        return float(b.logpdf(xs)[0]), float(g.logpdf(xs)[0])

    def drift_loglik(self) -> tuple[float, float]:
        """(log f_bad, log f_good) of a margin that matches neither side, where the margin
        implies the verdict (else it adds nothing): :data:`DRIFT_ODDS` likelier clean; its
        verdict counts as well. A bug's error dominates an unrelated numerics change (the
        errors add in quadrature: the buggy side hardly moves), a clean commit's small one is
        what such a change moves; so a run unlike the buggy endpoint's is weak evidence of the
        clean side.
        Without it a masked bug's commits between the drift and the culprit cannot be placed:
        their verdicts all pass."""
        return 0.0, math.log(DRIFT_ODDS)

    def channel(
        self, ms: Sequence[int], rates: tuple[float, float], drifting: bool = False
    ) -> list[tuple[Array, Array]]:
        """For ``m`` runs of one commit: the distribution of their summed evidence (verdict and
        margin) ``log P_bad - log P_good`` if the commit is bad, and if it is good, on a grid of
        :data:`_BIN` nats from -:data:`_SPAN` to +:data:`_SPAN` (the posterior over the
        candidates depends on a commit's runs only through that sum). ``rates``: the fail rates
        of bad and good commits as learned so far. ``drifting``: a commit whose margins matched
        neither side: if clean, each run tells its verdict and :meth:`drift_loglik` (where the
        margin implies the verdict)."""
        qb, qg = (min(max(q, 1e-6), 1 - 1e-6) for q in rates)
        lo, hi = _span([x for x, _ in (*self.bad, *self.good)])
        x = np.linspace(lo, hi, 400)
        d = x[1] - x[0]
        pbs, pgs = [], []
        llr_drift: list[float] = []
        for failed, vb, vg in ((True, qb, qg), (False, 1 - qb, 1 - qg)):
            llr_drift.append(math.log(vb / vg) - math.log(DRIFT_ODDS))
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
        one_b: Array = np.bincount(idx, pb, n)
        one_g: Array = np.bincount(idx, pg, n)
        one_b, one_g = one_b / one_b.sum(), one_g / one_g.sum()
        if drifting and self.implied:  # if clean: its verdict, and a margin like neither side's
            dl = np.array(llr_drift)
            di = np.clip(np.round((dl + _SPAN) / _BIN).astype(int), 0, n - 1)
            one_g = np.bincount(di, np.array([qg, 1 - qg]), n)
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
    if mode is MarginMode.AUTO:
        tested = [s for s in seps if s.ranks]
        if not tested:
            return MarginDecision(
                on=False,
                why=f"--margin auto: off, the endpoints' margins overlap (rank test at {LEVEL:g}, "
                f"{LEVEL_IMPLIED:g} where the margin implies the verdict; best "
                f"{best.describe()}): verdicts only",
                separations=tuple(seps),
            )
        best = tested[0]
        if best.nats < SEPARATES:
            return MarginDecision(
                on=False,
                why=f"--margin auto: off, the endpoints' margins do not separate the sides "
                f"(best {best.describe()}; needs {SEPARATES:g}): verdicts only",
                separations=tuple(seps),
            )
    how = (
        "its margin implies the verdict: runs weighed by it alone"
        if best.implied
        else "weighed with the verdict"
    )
    return MarginDecision(
        on=True,
        why=f"--margin {mode.value}: on, {best.describe()}; {how}",
        model=MarginModel.of(best),
        separations=tuple(seps),
    )


def overlap(bad_runs: Sequence[RunMargins], good_runs: Sequence[RunMargins]) -> MarginDecision:
    """``--margin auto``'s early decision when :func:`cannot_separate`: off, and why."""
    return MarginDecision(
        on=False,
        why=f"--margin auto: off, the endpoints' margins overlap after {len(bad_runs)}+"
        f"{len(good_runs)} runs (no quantity can pass a rank test at {LEVEL:g}, "
        f"{LEVEL_IMPLIED:g} where the margin implies the verdict, in {LEARN_RUNS}+{LEARN_RUNS} "
        "runs): verdicts only",
        separations=tuple(choose(bad_runs, good_runs)),
    )
