"""Bisect under noise: a Bayesian search over the candidate commits. Pure: numpy, no git, no I/O.

The model, after git-bayesect (S. Jain, github.com/hauntsaninja/git_bayesect) and the noisy
binary search of robust-git-bisect and Google's flake-aware culprit finder (Culprit Finder,
"Flake Aware Culprit Finding", ICST 2023): one candidate ``h`` is the first bad commit; every commit
that has ``h`` as an ancestor fails a run with rate ``q_bad``, every other with rate ``q_good``.
Over a DAG "has ``h`` as an ancestor" is git's own reachability, so merges and side branches mean
what they mean to ``git bisect``. The rates are unknown: each has a Beta prior and is integrated
out exactly (the Beta-Binomial marginal), so they are learned from every run, endpoints included;
``Rates.fixed`` gives them instead.

What differs from git-bayesect, and why:

* **Information per minute, not per run.** The next action maximises expected information gain
  (bits of posterior entropy) divided by its cost, with a commit's build cost and run cost kept
  apart: re-running the commit already built in a worktree costs a run; going back to a commit
  built before costs a rebuild from a warm ccache; a new commit costs a build. A new commit is
  valued by its best ``m``-run batch (``I_m / (build + m·run)``), because a build buys several
  cheap runs. On tt-metal (a 30-minute build, a one-minute run) this re-runs far more and builds
  far less than git-bayesect's one-run entropy rule, which ``rule="entropy"`` reproduces.
* **K at once, asynchronously.** ``next_for(job, busy)`` gives an idle device its next action
  while the others run: no job waits for a round to end, a commit in flight is not picked again,
  and one that splits the posterior where an in-flight one does is discounted.
* **A DAG**, not a first-parent line.

The search stops when one commit's *stated* posterior reaches the confidence, and that is the
confidence it reports. With the rates learned, the exact posterior (the rates integrated out per
candidate) is conservative (issue 41: stated 0.9 was right 96% of the time at 70%/5%): each rival
of the culprit gets the rates that suit it best — the commit just above the culprit explains the
culprit's failures with a clean-commit fail rate of 0.2 instead of 0.05, which the few clean runs
seen cannot rule out (E[q^k] >> E[q]^k for a small, uncertain q). :meth:`Posterior.stated` judges
every candidate at shared rates instead, drawn from the rates' Beta posteriors and averaged over:
their uncertainty is kept, the rivals' freedom is not. It is the exact posterior when the rates
are known; ``scripts/bench_bisect.py`` measures its calibration (docs/performance.md). The next
run is still chosen on the exact posterior. ``Rates.with_runs`` starts the rates from runs
measured before the bisect (``--rates-from``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lnrepro.bisect.core import Graph, Mark
from lnrepro.bisect.costs import Costs as Costs  # re-exported: where it always was
from lnrepro.bisect.evidence import Rates, Tally
from lnrepro.bisect.margin_search import (
    MarginEvidence,
    MarginLearning,
    margin_information_of,
    margin_term,
)
from lnrepro.bisect.margins import MarginMode
from lnrepro.bisect.strategy import mark_of, merge_base_error
from lnrepro.model.bisect import (
    Action,
    ActionKind,
    BisectResult,
    BuildKind,
    Candidate,
    LearnedRates,
    ResultKind,
    RunOutcome,
    SearchKind,
)

Array = np.ndarray[Any, Any]

_M = (1, 2, 4, 8, 16)  # batch sizes a new build is valued by
_CHEAP = 5.0  # a clean endpoint's check is worth a preparation of up to this many runs
_DRAWS = 256  # rate pairs the stated posterior averages over (seeded: a replay gives the same)


def _lgamma(x: Array) -> Array:
    out: Array = np.array([math.lgamma(v) for v in np.ravel(x)]).reshape(np.shape(x))
    return out


def _lbeta(a: Array, b: Array) -> Array:
    return _lgamma(a) + _lgamma(b) - _lgamma(a + b)


def _entropy(p: Array) -> float:
    nz = p[p > 0]
    return float(-(nz * np.log2(nz)).sum())


class Posterior:
    """P(h is the first bad commit | runs so far), over the candidates of a (tip, bottoms) range."""

    def __init__(
        self, graph: Graph, tip: str, bottoms: Sequence[str], rates: Rates | None = None
    ) -> None:
        self.graph = graph
        self.rates = rates or Rates()
        good = 0
        for b in bottoms:
            good |= graph.ancestors(b)
        self.hyps: list[str] = graph.members(graph.ancestors(tip) & ~good)
        if not self.hyps:
            raise ValueError("no candidate commits between the endpoints")
        self._pos = np.array([graph.position(h) for h in self.hyps])
        self.index = {h: i for i, h in enumerate(self.hyps)}
        self.fails: dict[str, int] = {}
        self.runs: dict[str, int] = {}
        self._rows: dict[str, Array] = {}
        self._cache: tuple[Array, Array, Array] | None = None
        self._counted: tuple[Array, Array, Array, Array] | None = None
        self._stated: Array | None = None
        self.rivals = True  # stated(): the second pass (False: the leading candidate's rates only)
        self.excluded = np.zeros(len(self.hyps), dtype=bool)
        self.margins = MarginEvidence()  # issue 47: what runs' margins say, with a model

    # ------------------------------------------------------------------ data
    def row(self, sha: str) -> Array:
        """For each candidate h: does ``sha`` contain it (is ``sha`` bad if h is the culprit)?"""
        r = self._rows.get(sha)
        if r is None:
            bits = self.graph.ancestors(sha)
            n = len(self.graph.order)
            raw = np.frombuffer(bits.to_bytes((n + 7) // 8, "little"), dtype=np.uint8)
            r = np.unpackbits(raw, bitorder="little")[:n].astype(bool)[self._pos]
            self._rows[sha] = r
        return r

    def observe(self, sha: str, fails: int, runs: int) -> None:
        if runs <= 0:
            return
        self.fails[sha] = self.fails.get(sha, 0) + fails
        self.runs[sha] = self.runs.get(sha, 0) + runs
        self._cache = self._stated = None

    def observe_margin(self, sha: str, log_bad: float, log_good: float) -> None:
        """One run of ``sha`` whose margin is ``log_bad``/``log_good`` likely on each side."""
        lb, lg = self.margins.ll.get(sha, (0.0, 0.0))
        self.margins.ll[sha], self._cache, self._stated = (lb + log_bad, lg + log_good), None, None

    def equate(self, a: str, b: str) -> None:
        """``a`` and ``b`` test the same thing: no culprit lies between them."""
        between = self.row(a) ^ self.row(b)
        if (self.excluded | between).all():
            return  # it would leave no candidate: the claim is wrong, ignore it
        self.excluded |= between
        self._cache = self._stated = None

    def _counts(self) -> tuple[Array, Array, Array, Array]:
        h = len(self.hyps)
        kb, nb = np.zeros(h), np.zeros(h)
        for sha, n in self.runs.items():
            r = self.row(sha)
            kb += r * self.fails[sha]
            nb += r * n
        k_all, n_all = float(sum(self.fails.values())), float(sum(self.runs.values()))
        return kb, nb, k_all - kb, n_all - nb

    def _compute(self) -> tuple[Array, Array, Array]:
        if self._cache is None:
            kb, nb, kg, ng = self._counted = self._counts()
            r = self.rates
            if r.fixed is not None:
                qb, qg = (min(max(q, 1e-9), 1 - 1e-9) for q in r.fixed)
                ll = (
                    kb * math.log(qb)
                    + (nb - kb) * math.log1p(-qb)
                    + kg * math.log(qg)
                    + (ng - kg) * math.log1p(-qg)
                )
                mb, mg = np.full(len(kb), qb), np.full(len(kb), qg)
            else:
                (ab, bb), (ag, bg) = r.bad, r.good
                ll = (
                    _lbeta(ab + kb, bb + nb - kb)
                    - _lbeta(np.array(ab), np.array(bb))
                    + _lbeta(ag + kg, bg + ng - kg)
                    - _lbeta(np.array(ag), np.array(bg))
                )
                mb, mg = (ab + kb) / (ab + bb + nb), (ag + kg) / (ag + bg + ng)
            ll = np.where(self.excluded, -np.inf, ll + margin_term(self))
            p = np.exp(ll - ll.max())
            self._cache = (p / p.sum(), mb, mg)
        return self._cache

    # ------------------------------------------------------------------ what it says
    def probs(self) -> Array:
        return self._compute()[0]

    def stated(self) -> Array:
        """P(h is the first bad commit) as the search states it: what it stops on and reports.

        The exact posterior (:meth:`probs`) integrates the rates out per candidate, so each rival
        of the culprit gets the rates that suit it best; at a fixed truth that is conservative.
        Here every candidate is judged at shared rates instead, the known-rates posterior averaged
        over rate pairs drawn from the rates' Beta posteriors: first those given the leading
        candidate, which gives a sharp posterior; then (``rivals``) those given each candidate,
        drawn in proportion to that sharp posterior, so the rates' uncertainty still includes
        which commit is the culprit (the first pass alone is overconfident when the rates are
        hard to learn: 50%/5%). Known rates: the exact posterior. Seeded: a replay is the same.
        """
        if self.rates.fixed is not None:
            return self.probs()
        if self._stated is None:
            p = self.probs()
            assert self._counted is not None
            kb, nb, kg, ng = self._counted
            i = int(np.argmax(p))
            rng = np.random.default_rng(41)
            sharp = self._at_drawn_rates(kb[i], nb[i], kg[i], ng[i], rng)
            if self.rivals:
                at = (np.arange(_DRAWS) + 0.5) / _DRAWS  # stratified: each candidate its share
                hs = np.minimum(np.searchsorted(np.cumsum(sharp), at), len(sharp) - 1)
                sharp = self._at_drawn_rates(kb[hs], nb[hs], kg[hs], ng[hs], rng)
            self._stated = sharp
        return self._stated

    def _at_drawn_rates(
        self, kb: Any, nb: Any, kg: Any, ng: Any, rng: np.random.Generator
    ) -> Array:
        """The known-rates posterior averaged over ``_DRAWS`` rate pairs drawn from the Beta
        posteriors of these counts (one candidate's, or one per draw)."""
        c = self._counted
        assert c is not None
        (ab, bb), (ag, bg) = self.rates.bad, self.rates.good
        qb = np.clip(rng.beta(ab + kb, bb + nb - kb, _DRAWS), 1e-9, 1 - 1e-9)
        qg = np.clip(rng.beta(ag + kg, bg + ng - kg, _DRAWS), 1e-9, 1 - 1e-9)
        ll = (
            np.outer(np.log(qb), c[0])
            + np.outer(np.log1p(-qb), c[1] - c[0])
            + np.outer(np.log(qg), c[2])
            + np.outer(np.log1p(-qg), c[3] - c[2])
        )
        ll = np.where(self.excluded[None, :], -np.inf, ll + margin_term(self)[None, :])
        w = np.exp(ll - ll.max(axis=1, keepdims=True))
        out: Array = (w / w.sum(axis=1, keepdims=True)).mean(axis=0)
        return out

    def best(self) -> tuple[str, float]:
        p = self.stated()
        i = int(np.argmax(p))
        return self.hyps[i], float(p[i])

    def p_bad(self, sha: str) -> float:
        """P(``sha`` contains the culprit)."""
        return float(self.probs()[self.row(sha)].sum())

    def rates_now(self) -> tuple[float, float]:
        """The fail rates of buggy and clean commits, as learned so far (posterior means)."""
        p, mb, mg = self._compute()
        return float((p * mb).sum()), float((p * mg).sum())

    def top(self, n: int = 5) -> list[tuple[str, float]]:
        p = self.stated()
        order = np.argsort(-p)[:n]
        return [(self.hyps[i], float(p[i])) for i in order]

    def entropy(self) -> float:
        return _entropy(self.probs())

    # ------------------------------------------------------------------ what a test would tell
    def information(self, shas: Sequence[str], ms: Sequence[int] = _M) -> Array:
        """Expected bits gained by ``m`` more runs of each commit: shape (len(shas), len(ms)).
        With a margin model, each run is valued by its margin (:mod:`lnrepro.bisect.margins`)."""
        if self.margins.model is not None:
            return margin_information_of(self, shas, ms)
        return self.verdict_information(shas, ms)

    def verdict_information(self, shas: Sequence[str], ms: Sequence[int]) -> Array:
        """The same, each run valued by its verdict alone."""
        p, mb, mg = self._compute()
        live = p > 1e-12
        p, mb, mg = p[live], mb[live], mg[live]
        rows = np.stack([self.row(s)[live] for s in shas])
        q = np.where(rows, mb[None, :], mg[None, :])
        lq, l1q = np.log(np.clip(q, 1e-300, None)), np.log(np.clip(1 - q, 1e-300, None))
        h0 = _entropy(p / p.sum())
        out = np.zeros((len(shas), len(ms)))
        for j, m in enumerate(ms):
            expected = np.zeros(len(shas))
            for k in range(m + 1):
                w = p[None, :] * np.exp(math.log(math.comb(m, k)) + k * lq + (m - k) * l1q)
                z = w.sum(axis=1)
                with np.errstate(divide="ignore", invalid="ignore"):
                    wl = np.where(w > 0, w * np.log2(np.where(w > 0, w, 1.0)), 0.0).sum(axis=1)
                    ent = np.where(
                        z > 0, np.log2(np.where(z > 0, z, 1.0)) - wl / np.where(z > 0, z, 1.0), 0.0
                    )
                expected += z * ent
            out[:, j] = h0 - expected
        return np.maximum(out, 0.0)


@dataclass
class BayesSearch(MarginLearning):
    """The noisy search: which commit each job runs next, and when the answer is certain enough."""

    graph: Graph
    tip: str
    bottoms: list[str]
    confidence: float = 0.95
    rates: Rates = field(default_factory=Rates)
    costs: Costs = field(default_factory=Costs)
    rule: str = "cost"  # cost: information per minute; entropy: git-bayesect's per-run rule
    stop: str = "stated"  # stated: Posterior.stated; exact: the rates integrated out per candidate
    max_runs: int = 300
    endpoint_tries: int = 8  # runs (noise aside) of the buggy endpoint before it is not buggy
    noise_limit: int = 3  # noisy runs in a row before a commit is set aside (at least; see below)
    shortlist: int = 24  # commits per job scored in full (the best by one run's information)
    revive_ratio: float = 10.0  # a commit set aside for noise comes back when worth this many
    merge_bases: list[str] = field(default_factory=list)  # must show clean before the search
    prefer: frozenset[str] = frozenset()  # commits with prebuilt artifacts: fetched, not built
    measured: frozenset[str] = frozenset()  # clean endpoints run before (--rates-from): no check
    margin: MarginMode = MarginMode.OFF  # --margin: runs' margins weigh in (issue 47)
    margin_runs: int = 5  # runs of each endpoint that teach the margins
    name: str = "bayesian"

    def __post_init__(self) -> None:
        self.post = Posterior(self.graph, self.tip, self.bottoms, self.rates)
        self.tallies: dict[str, Tally] = {}
        self.untestable: dict[str, str] = {}
        self.set_aside_for_noise: set[str] = set()  # untestable by a noise streak only
        self.current: dict[int, str] = {}  # job -> commit built in its worktree now
        self.built: set[str] = set()
        self.noise_run: dict[str, int] = {}
        self.builds = 0
        self.rebuilds = 0
        self.prebuilt = 0
        self.runs = 0
        self.noise = 0
        self.error: str | None = None
        self.actions = 0  # every observed action, runs or not: a bound no loop can pass
        self._measured: set[str] = set()
        self._start_margins()

    # ------------------------------------------------------------------ status
    def tally(self, sha: str) -> Tally:
        return self.tallies.setdefault(sha, Tally())

    @property
    def done(self) -> bool:
        return (
            self.error is not None
            or self._certain()
            or self.runs + self.noise >= self.max_runs
            or self.actions >= 2 * self.max_runs
        )

    def _certain(self) -> bool:
        return (
            not self._learning()
            and self._endpoints_known()
            and not self._clean_unproven()
            and self._best()[1] >= self.confidence
        )

    def _best(self) -> tuple[str, float]:
        if self.stop == "exact":  # git-bayesect's: conservative when the rates are learned
            p = self.post.probs()
            i = int(np.argmax(p))
            return self.post.hyps[i], float(p[i])
        return self.post.best()

    def _endpoints_known(self) -> bool:
        return self.rates.bug_shown or self.tally(self.tip).fails > 0 or self.margin_on

    def _clean_unproven(self) -> list[str]:
        """Clean endpoints whose every run so far failed: git trusts ``--good``, but one that
        never passed may not be clean (a command that fails at every commit, a test broken at
        both ends), and a culprit named next to it would be named with a confidence nothing
        measured. Each is run again until it passes (the action chooser, before the search)."""
        return [
            b
            for b in self.bottoms
            if (t := self.tally(b)).fails and not t.passes and b not in self.untestable
        ]

    def progress(self) -> tuple[int, int]:
        """Commits holding 95% of the posterior, and about how many bits are still missing."""
        p = np.sort(self.post.probs())[::-1]
        held = int(np.searchsorted(np.cumsum(p), 0.95) + 1)
        return held, max(0, math.ceil(self.post.entropy()))

    def progress_note(self) -> str:
        """The leading commit's posterior against the stop, and the runs expected to reach it.

        Each run that tells the leader from its neighbour (the leader itself, or its parent)
        moves the leader's log-odds by the log of a likelihood ratio, on average the Kullback-
        Leibler divergence between a buggy and a clean commit's outcomes at the fail rates learned
        so far (the smaller of the two directions); the runs to go are the log-odds still missing
        over that. An estimate that moves with each run, as the search does: not git's halving,
        whose candidates rise and fall with noise."""
        sha, p = self._best()
        c = self.confidence
        qb, qg = (min(max(q, 1e-3), 1 - 1e-3) for q in self.post.rates_now())

        def kl(a: float, b: float) -> float:
            return a * math.log(a / b) + (1 - a) * math.log((1 - a) / (1 - b))

        def logit(x: float) -> float:
            x = min(max(x, 1e-9), 1 - 1e-9)
            return math.log(x / (1 - x))

        per_run = min(kl(qb, qg), kl(qg, qb))
        missing = max(0.0, logit(c) - logit(p))
        cap = max(1, self.max_runs - self.runs - self.noise)
        runs = cap if per_run <= 1e-9 else min(cap, max(1, math.ceil(missing / per_run)))
        s = "s" if runs != 1 else ""
        return f"leading {sha[:12]} at P={p:.2f} (stops at {c:g}), ~{runs} run{s} to go"

    # ------------------------------------------------------------------ choosing
    def runs_per_action(self) -> int | None:
        return 1  # one run at a time: each is chosen by what the last one taught

    def _build_kind(self, job: int, sha: str) -> BuildKind:
        if self.current.get(job) == sha:
            return BuildKind.NONE
        if sha in self.prefer:
            return BuildKind.PREBUILT
        return BuildKind.REBUILD if sha in self.built else BuildKind.BUILD

    def _cost(self, kind: BuildKind) -> float:
        if kind is BuildKind.NONE or kind is BuildKind.PREBUILT:
            return self.costs.fetch_s if kind is BuildKind.PREBUILT else 0.0
        return self.costs.rebuild_s if kind is BuildKind.REBUILD else self.costs.build_s

    def next_batch(self, jobs: int = 1) -> list[Action]:
        """Actions for ``jobs`` idle jobs at once (each picked knowing the ones before it)."""
        busy: dict[int, str] = {}
        out = []
        for job in range(jobs):
            a = self.next_for(job, busy)
            if a is None:
                break
            busy[job] = a.sha
            out.append(a)
        return out

    def next_for(self, job: int, busy: Mapping[int, str]) -> Action | None:
        """What idle ``job`` should do next while the others run ``busy``; None when done.

        Jobs run asynchronously: a job that finishes picks again at once, so a 30-minute build on
        one device never holds up the re-runs on another. A commit in flight is not picked twice,
        and a commit that splits the posterior where an in-flight one does is worth less.
        """
        if self.done:
            return None
        for sha in sorted(self.set_aside_for_noise):  # noisier everywhere now: chance, after all
            if self.noise_run[sha] < self.noise_streak_limit(self.noise_run[sha]):
                self.set_aside_for_noise.discard(sha)
                self.untestable.pop(sha, None)
        running = set(busy.values())
        if self._learning():
            return self._learning_action(job, running)
        # the buggy endpoint first, until it shows the bug: its failure is the bug's signature.
        # Not when the runs measured there before (--rates-from) showed it: a run that says
        # nothing about the culprit, 1.4 runs of 23 at 70%/5% (issue 41)
        tip_t = self.tally(self.tip)
        if not self._endpoints_known() and self.tip not in running:
            # runs that tell, not noise: six noisy runs of eight happen at a 35% noise rate, and
            # the bug was never given its chance to show (noise alone ends it too, later)
            if tip_t.runs >= self.endpoint_tries or tip_t.noise >= 3 * self.endpoint_tries:
                self.error = (
                    f"the buggy endpoint showed no failure of the bug in {tip_t.runs} run(s)"
                    + (f" and {tip_t.noise} noisy one(s)" if tip_t.noise else "")
                )
                return None
            return Action(
                job=job,
                sha=self.tip,
                kind=ActionKind.ENDPOINT,
                build=self._build_kind(job, self.tip),
            )
        for m in self.merge_bases:  # as git: a merge base must be tested, and must be clean
            mt = self.tally(m)
            if mt.passes == 0 and m not in self.untestable and m not in running:
                if mt.fails and mt.runs + mt.noise >= self.endpoint_tries:
                    self.error = merge_base_error(
                        m, [b for b in self.bottoms if b not in self.merge_bases]
                    )
                    return None
                return Action(
                    job=job, sha=m, kind=ActionKind.MERGE_BASE, build=self._build_kind(job, m)
                )
        # A clean endpoint that failed every run it had is run again until it passes; after
        # endpoint_tries failures and no pass, the endpoints do not separate (at 70%/5% its first
        # check fails 1 time in 20 and costs about one run more; 8 failures in a row of a clean
        # commit that fails 30% of its runs happen once in 15,000)
        for b in self._clean_unproven():
            if b in running:
                continue
            if self.tally(b).fails >= self.endpoint_tries:
                self.error = (
                    f"the clean endpoint {b[:12]} failed every one of its "
                    f"{self.tally(b).fails} run(s)"
                )
                return None
            return Action(job=job, sha=b, kind=ActionKind.ENDPOINT, build=self._build_kind(job, b))
        # A clean endpoint is checked once when its run teaches the clean fail rate for about
        # the price of a run (a preparation up to a few runs': checkout jitter does not decide):
        # not when the rates are given (it says nothing about the culprit) or were measured
        # there (--rates-from), nor when it needs a build of its own (issue 41: a 30-minute
        # build for one run that cannot show a commit clean when clean commits fail too; git
        # trusts --good). It stays in the pool below either way.
        for b in self.bottoms:
            if (
                self.rates.fixed is None
                and self.tally(b).runs == 0
                and b not in {*self.untestable, *running, *self.measured}
                and self._cost(self._build_kind(job, b)) <= _CHEAP * self.costs.run_s
            ):
                return Action(
                    job=job, sha=b, kind=ActionKind.ENDPOINT, build=self._build_kind(job, b)
                )
        # every candidate and the endpoints: re-running an endpoint teaches the fail rates
        pool = [
            h
            for h in (*self.post.hyps, *self.bottoms)
            if h not in self.untestable and h not in running
        ]
        if self.tip not in self.post.index and self.tip not in running:
            pool.append(self.tip)
        one = self.post.information(pool, (1,))[:, 0] if pool else np.zeros(0)
        if (back := self._revived(running, one)) is not None:
            return Action(
                job=job, sha=back, kind=ActionKind.STEP, build=self._build_kind(job, back)
            )
        if not pool:
            return None
        # worth scoring in full: what this job has built, and the best by one run's information
        keep = {i for i, h in enumerate(pool) if h in self.built}
        keep.update(int(j) for j in np.argsort(-one)[: self.shortlist])
        idx = sorted(i for i in keep if one[i] > 1e-9)
        if not idx:
            return None
        pool = [pool[i] for i in idx]
        ms = (1,) if self.rule == "entropy" else _M
        info = self.post.information(pool, ms)
        pbad = np.array([self.post.p_bad(h) for h in pool])
        overlap = np.ones(len(pool))
        for sha in running:  # in flight: what it will tell is not worth buying twice
            overlap *= 1.0 - np.exp(-np.abs(pbad - self.post.p_bad(sha)) / 0.1)
        scores = [self._score(info[i], job, sha) * overlap[i] for i, sha in enumerate(pool)]
        best = pool[int(np.argmax(self.rescore(pool, scores)))]
        return Action(job=job, sha=best, kind=ActionKind.STEP, build=self._build_kind(job, best))

    def rescore(self, pool: list[str], scores: list[float]) -> list[float]:
        """The scores of the commits worth scoring, as the next action is picked from them: a
        seam where scripts/bench_bisect.py measures other choice rules (a lookahead of two)."""
        return scores

    def _revived(self, running: set[str], one: Array) -> str | None:
        """A commit set aside for its noise that is now the one that can move the answer (the
        culprit or its neighbour, after an unlucky streak): one of its runs is worth
        ``revive_ratio`` times the best testable commit's. It comes back, its streak forgotten;
        without it the search would re-run commits that tell next to nothing until ``max_runs``."""
        aside = [h for h in sorted(self.set_aside_for_noise) if h not in running]
        if not aside:
            return None
        gain = self.post.information(aside, (1,))[:, 0]
        i = int(np.argmax(gain))
        if gain[i] <= self.revive_ratio * max(float(one.max(initial=0.0)), 1e-9):
            return None
        sha = aside[i]
        self.set_aside_for_noise.discard(sha)
        self.untestable.pop(sha, None)
        self.noise_run[sha] = 0
        return sha

    def _score(self, info: Array, job: int, sha: str) -> float:
        if self.rule == "entropy":
            return float(info[0])
        kind = self._build_kind(job, sha)
        fixed = self._cost(kind)
        run = max(self.costs.run_s, 1e-6)
        return max(float(info[j]) / (fixed + m * run) for j, m in enumerate(_M))

    # ------------------------------------------------------------------ learning
    def observe(
        self,
        action: Action,
        outcomes: Iterable[tuple[RunOutcome, str]],
        cannot_test: str | None = None,
        margins: Sequence[Mapping[str, float]] | None = None,
    ) -> Mark:
        """One action's runs' outcomes (the search's sense) and, aligned, their margins."""
        sha = action.sha
        if action.build is BuildKind.BUILD and sha not in self.built:
            self.builds += 1
        elif action.build is BuildKind.PREBUILT:
            self.prebuilt += 1
        elif action.build is not BuildKind.NONE:
            self.rebuilds += 1
        self.actions += 1
        if cannot_test:
            self.untestable[sha] = cannot_test
            self.set_aside_for_noise.discard(sha)
            self.current.pop(action.job, None)
            if self._learning():
                self._decide_margins()
            return Mark.SKIP
        self.built.add(sha)
        self.current[action.job] = sha
        outs = list(outcomes)
        t = self.tally(sha)
        t.add(outs)
        fails = sum(o is RunOutcome.FAIL for o, _ in outs)
        runs = sum(o is not RunOutcome.NOISE for o, _ in outs)
        noisy = len(outs) - runs
        self.runs += runs
        self.noise += noisy
        self.noise_run[sha] = 0 if runs else self.noise_run.get(sha, 0) + noisy
        if self.noise_run[sha] >= self.noise_streak_limit(self.noise_run[sha]):
            self.untestable[sha] = f"{self.noise_run[sha]} noisy runs in a row: " + outs[-1][1]
            self.set_aside_for_noise.add(sha)
        self._observe_margins(sha, outs, margins)
        self.post.observe(sha, fails, runs)
        if self._learning():
            self._decide_margins()
        return mark_of([o for o, _ in outs]) or Mark.SKIP

    def noise_streak_limit(self, streak: int = 0) -> int:
        """Noisy runs in a row before a commit is set aside as untestable: ``noise_limit``, or
        more where runs are noisy everywhere — a streak that the noise seen elsewhere (outside
        this ``streak``) would explain less than once in a thousand. Three in a row at a 35% noise
        rate happen to one commit in 23: a fixed limit would set the culprit aside and leave the
        search nothing to test."""
        noise = self.noise - streak
        rate = (noise + 0.5) / (self.runs + noise + 5.0)  # mostly clean, a priori
        return max(self.noise_limit, math.ceil(math.log(1e-3) / math.log(rate)))

    def equate(self, action: Action, other: str) -> Mark:
        """``action``'s commit built to the same inputs as ``other``: they share observations."""
        if action.build is BuildKind.BUILD and action.sha not in self.built:
            self.builds += 1
        self.built.add(action.sha)
        self.current[action.job] = action.sha
        self.post.equate(action.sha, other)
        self.untestable[action.sha] = f"same inputs as {other[:12]}: its runs count for both"
        self.actions += 1
        t = self.tally(other)
        return mark_of([RunOutcome.FAIL] * t.fails + [RunOutcome.PASS] * t.passes) or Mark.SKIP

    def learn_costs(self, build: BuildKind, fixed_s: float | None, run_s: float | None) -> None:
        """Fold a measured preparation (checkout + build) and run time into the cost model.

        The first measurement of each kind replaces the default; later ones are averaged in.
        """
        seen = self._measured
        attrs = {
            BuildKind.BUILD: "build_s",
            BuildKind.REBUILD: "rebuild_s",
            BuildKind.PREBUILT: "fetch_s",
        }
        if fixed_s is not None and build in attrs:
            attr = attrs[build]
            old = getattr(self.costs, attr)
            setattr(self.costs, attr, fixed_s if attr not in seen else 0.7 * old + 0.3 * fixed_s)
            seen.add(attr)
            if attr == "build_s" and "rebuild_s" not in seen:  # until measured: a warm ccache
                self.costs.rebuild_s = min(self.costs.rebuild_s, self.costs.build_s)
        if run_s is not None:
            old = self.costs.run_s
            self.costs.run_s = run_s if "run_s" not in seen else 0.7 * old + 0.3 * run_s
            seen.add("run_s")

    # ------------------------------------------------------------------ the answer
    def answer(self, kind: str) -> BisectResult:
        best, p = self._best()
        qb, qg = self.post.rates_now()
        first = best if p >= self.confidence and self.error is None else None
        return BisectResult(
            kind=ResultKind(kind),
            search=SearchKind(self.name),
            first_bad=first,
            error=self.error,
            reason=None
            if first
            else (self.error or f"no commit reached confidence {self.confidence:g}"),
            most_likely=best,
            confidence=p,
            wanted_confidence=self.confidence,
            posterior=tuple(Candidate(sha=s, p=q) for s, q in self.post.top(5)),
            rates=LearnedRates(bad=qb, good=qg),
            runs=self.runs,
            noisy_runs=self.noise,
            builds=self.builds,
            rebuilds=self.rebuilds,
            prebuilt=self.prebuilt,
            margin=self.decision.why if self.decision else None,
            drifted=tuple(sorted(self.drifted)),
        )
