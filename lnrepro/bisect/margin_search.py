"""The Bayesian search's margin learning (issue 47), kept apart from :mod:`~lnrepro.bisect.bayes`:
the endpoints' runs that teach each quantity's margins, ``--margin``'s decision, and each later
run's margin weighed into the posterior (or flagged as drift). Pure: numpy, no git, no I/O."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from lnrepro.bisect.margins import (
    DRIFT_ODDS,
    LEAST_RUNS,
    MarginDecision,
    MarginMode,
    MarginModel,
    RunMargins,
    cannot_separate,
    decide,
    implies_verdict,
    information,
    overlap,
    samples,
)
from lnrepro.model.bisect import Action, ActionKind, BuildKind, RunOutcome

if TYPE_CHECKING:
    from lnrepro.bisect.bayes import Posterior
    from lnrepro.bisect.evidence import Rates, Tally


Array = np.ndarray[Any, Any]


@dataclass
class MarginEvidence:
    """A posterior's margin evidence: per commit, the summed log-likelihood of its runs' margins
    if it is bad and if it is good; the model that values a run by its margin once chosen."""

    model: MarginModel | None = None
    ll: dict[str, tuple[float, float]] = field(default_factory=dict)
    drifting: set[str] = field(default_factory=set)  # margins that matched neither side
    channels: dict[tuple[object, ...], list[tuple[Array, Array]]] = field(default_factory=dict)


def margin_information_of(post: Posterior, shas: Sequence[str], ms: Sequence[int]) -> Array:
    """``post.information`` with a margin model: each run valued by its verdict and its margin
    (:meth:`~lnrepro.bisect.margins.MarginModel.channel` at the fail rates learned so far); a
    commit flagged for drift by its verdict and, where the margin implies the verdict, what a
    run matching neither side tells; else by its verdict alone."""
    model = post.margins.model
    assert model is not None
    p = post.probs()
    qb, qg = post.rates_now()
    key: tuple[object, ...] = (*ms, round(qb, 2), round(qg, 2))
    channels = post.margins.channels
    if key not in channels:
        channels[key] = model.channel(ms, (qb, qg))
    live = p > 1e-12
    pl = p[live] / p[live].sum()
    drift = [i for i, s in enumerate(shas) if s in post.margins.drifting]
    rest = [i for i in range(len(shas)) if i not in set(drift)]
    out = np.zeros((len(shas), len(ms)))
    if rest:
        rows = np.stack([post.row(shas[i])[live] for i in rest]).astype(float)
        out[rest] = np.stack([information(pl, rows, ch) for ch in channels[key]], axis=1)
    if drift and model.implied:  # if clean, each run matches neither side again
        dkey = ("drift", *key)
        if dkey not in channels:
            channels[dkey] = model.channel(ms, (qb, qg), drifting=True)
        rows = np.stack([post.row(shas[i])[live] for i in drift]).astype(float)
        out[drift] = np.stack([information(pl, rows, ch) for ch in channels[dkey]], axis=1)
    elif drift:  # their margins match neither side: what their verdicts would tell
        out[drift] = post.verdict_information([shas[i] for i in drift], ms)
    return out


def margin_term(post: Posterior) -> Array:
    """Each candidate's log-likelihood of every margin seen (0 without margins)."""
    out = np.zeros(len(post.hyps))
    for sha, (lb, lg) in post.margins.ll.items():
        out += np.where(post.row(sha), lb, lg)
    return out - out.max() if len(out) else out


class MarginLearning:
    """What :class:`~lnrepro.bisect.bayes.BayesSearch` does with runs' margins."""

    tip: str
    bottoms: list[str]
    margin: MarginMode
    margin_runs: int
    rates: Rates
    post: Posterior
    untestable: dict[str, str]
    decision: MarginDecision | None
    _learn: dict[str, list[RunMargins]]
    drifted: dict[str, list[float]]

    def _start_margins(self) -> None:
        self.decision = None  # what the endpoints' margins decided
        self._learn = {self.tip: [], self.bottoms[0]: []}
        self.drifted = {}  # commit -> margins that match neither side
        if self.margin is MarginMode.OFF:
            self.decision = decide(MarginMode.OFF, [], [])
        elif self.margin is MarginMode.AUTO and self.rates.bug_shown:
            # the endpoints were measured before (--rates-from) and the bug failed there: no
            # endpoint runs are spent on margins (they would be runs verdicts alone do not need)
            self.decision = MarginDecision(
                on=False,
                why="--margin auto: off, the endpoints' runs were measured before "
                "(--rates-from) and show the bug: verdicts only",
            )

    def _observe_margins(
        self,
        sha: str,
        outs: Sequence[tuple[RunOutcome, str]],
        margins: Sequence[Mapping[str, float]] | None,
    ) -> None:
        """A learning run's margins kept, a later run's weighed (or flagged as drift)."""
        per_run = list(margins) if margins is not None else [{} for _ in outs]
        per_run += [{} for _ in range(len(outs) - len(per_run))]
        if self._learning() and sha in self._learn:
            self._learn[sha].extend(
                (dict(m), o is RunOutcome.FAIL)
                for (o, _), m in zip(outs, per_run, strict=True)
                if o is not RunOutcome.NOISE
            )
        elif self.margin_on:
            self._weigh_margins(sha, outs, per_run)

    def tally(self, sha: str) -> Tally:
        raise NotImplementedError  # BayesSearch's

    def _build_kind(self, job: int, sha: str) -> BuildKind:
        raise NotImplementedError  # BayesSearch's

    def _learning(self) -> bool:
        """The endpoints' runs are still teaching the margins (``--margin auto|on``)."""
        return self.decision is None

    @property
    def margin_on(self) -> bool:
        return self.decision is not None and self.decision.on

    def _learning_action(self, job: int, running: set[str]) -> Action | None:
        """The next run of an endpoint that teaches the margins: the buggy one first, then in
        turn, ``margin_runs`` of each (runs that said nothing, noise, do not count); the buggy
        one while :meth:`_chasing`."""
        good = self.bottoms[0]
        order = sorted((self.tip, good), key=lambda s: (len(self._learn[s]), s != self.tip))
        if self._chasing():
            order = [self.tip, good]
        for sha in order:
            if sha not in running and sha not in self.untestable:
                return Action(
                    job=job, sha=sha, kind=ActionKind.ENDPOINT, build=self._build_kind(job, sha)
                )
        return None

    def _chasing(self) -> bool:
        """The endpoints share no verdict after 3 runs each (a buggy endpoint that failed every
        run, a clean one that passed every run): the buggy endpoint gets the clean one's
        share of the ``2 * margin_runs`` beyond 3 (where a quantity's margin implies the
        verdict: a margin beside it is not chased), so that its other verdict is seen (7 runs
        all failing at a 70% rate: 1 bisect in 12; 5 runs: 1 in 6). How a buggy commit's pass
        looks is what tells it from a clean one's when its failure is no more than a failure."""
        bad, good = self._learn[self.tip], self._learn[self.bottoms[0]]
        total = 2 * self.margin_runs
        return (
            len(good) >= LEAST_RUNS
            and LEAST_RUNS <= len(bad) < total - LEAST_RUNS
            and not {f for _, f in bad} & {f for _, f in good}
            and any(
                implies_verdict(samples(bad, q), samples(good, q))
                for q in {q for m, _ in bad for q in m}
            )
        )

    def _decide_margins(self) -> None:
        """After each learning run: decide once both endpoints have their runs; at once when
        the buggy endpoint's first run reports no margin at all (nothing to learn); and, with
        ``auto``, as soon as the runs so far show no quantity can pass the rank test in
        ``margin_runs`` of each (margins that carry nothing stop costing endpoint runs)."""
        bad, good = self._learn[self.tip], self._learn[self.bottoms[0]]
        if bad and not any(m for m, _ in bad):
            self.decision = decide(self.margin, [], [])
        elif len(bad) + len(good) >= 2 * self.margin_runs and min(len(bad), len(good)) >= min(
            LEAST_RUNS, self.margin_runs
        ):
            self.decision = decide(self.margin, bad, good)
        elif self.bottoms[0] in self.untestable or self.tip in self.untestable:
            self.decision = decide(self.margin, [], [])
        elif (
            self.margin is MarginMode.AUTO
            and bad
            and good
            and not self._chasing()
            and cannot_separate(bad, good, self.margin_runs)
        ):
            self.decision = overlap(bad, good)
        else:
            return
        if self.decision.on:
            self.post.margins.model = self.decision.model

    def _weigh_margins(
        self,
        sha: str,
        outs: Sequence[tuple[RunOutcome, str]],
        per_run: Sequence[Mapping[str, float]],
    ) -> None:
        """Each run with the chosen quantity adds its margin's likelihood given its verdict
        (counted apart); a margin that matches neither endpoint (drift) is flagged and adds what
        :meth:`~lnrepro.bisect.margins.MarginModel.drift_loglik` says where the margin implies
        the verdict, nothing where it does not."""
        model = self.decision.model if self.decision else None
        assert model is not None
        for (o, _), m in zip(outs, per_run, strict=True):
            if o is RunOutcome.NOISE or (value := m.get(model.quantity)) is None:
                continue
            ll = model.loglik(value, o is RunOutcome.FAIL)
            if ll is None:
                self.drifted.setdefault(sha, []).append(value)
                self.post.margins.drifting.add(sha)
                if not model.implied:
                    continue
                ll = model.drift_loglik()
            self.post.observe_margin(sha, *ll)

    def margin_note(
        self, outs: Sequence[tuple[RunOutcome, str]], per_run: Sequence[Mapping[str, float]]
    ) -> str | None:
        """What a step's runs' margins said, for its "why": the chosen quantity's share of its
        tolerance in each run and the side it is likelier on (``dx used 11%, 11%: buggy-like``),
        where the verdict alone says nothing of a masked bug. None when margins are off."""
        model = self.decision.model if self.decision and self.decision.on else None
        if model is None or len(outs) != len(per_run):
            return None
        from lnrepro.model.metrics import share

        vals, bad, good = [], 0.0, 0.0
        for (o, _), m in zip(outs, per_run, strict=True):
            if o is RunOutcome.NOISE or (value := m.get(model.quantity)) is None:
                continue
            vals.append(share(value))
            ll = model.loglik(value, o is RunOutcome.FAIL)
            if ll is not None:
                bad, good = bad + ll[0], good + ll[1]
        if not vals:
            return None
        side = "buggy-like" if bad > good else "clean-like" if good > bad else "either side"
        return f"{model.quantity.rsplit('/', 1)[-1]} used {', '.join(vals)}: {side}"

    def drift_note(self, sha: str) -> str | None:
        """Why ``sha``'s margins are flagged: they match neither endpoint."""
        vals = self.drifted.get(sha)
        if not vals or self.decision is None or self.decision.model is None:
            return None
        q = self.decision.model.quantity
        return (
            f"drift: {q}={', '.join(f'{v:.3g}' for v in vals[-3:])} matches neither endpoint "
            "(an unrelated numerics change?): "
            + (
                f"counted {DRIFT_ODDS:g}x likelier clean than buggy, not forced to a side"
                if self.decision.model.implied
                else "weighed by its verdict, not forced to a side"
            )
        )
