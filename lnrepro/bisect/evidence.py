"""What a run means for the search: the one place that decides it. Pure: no git, no I/O.

Everything the bisect loop, the strategies, the request's checks and the reports need to know
about the *meaning* of a run is here, and only here:

* :func:`classify` — one run against the bug's signature, and why;
* :func:`learn` and :class:`Meaning` — the signature, learned from the buggy endpoint's runs,
  with the rules for a hang's place (two hangs at the same place, or ``--hang-in``; a hang the
  watcher does not place teaches nothing) and the crash policy (``--on-crash``);
* :func:`mark_of` — git's verdict from a step's runs (bad if any shows the bug);
* :class:`Sense` — ``--find-fix``: which way the search looks. The only place good and bad are
  turned around; everything else asks it.
* :class:`Rates` — what the search believes of the fail rates of buggy and clean commits before
  its own runs (Beta priors, or the rates given), ``--rates-from``'s runs added.

A step runs the test one or more times; each run becomes a :class:`RunOutcome`:

* ``FAIL`` — the run shows *the bug's signature*: a test of the signature failing the same way
  (the same failure shape, or the metric over the threshold). The signature is learned from the
  first failing run of the commit known to be buggy (``--bad``, with or without ``--find-fix``;
  the newest commit under PATHS when the search is path-limited): which tests failed, and how.
* ``PASS`` — every test of the signature ran and passed (unrelated failures are recorded).
* ``NOISE`` — anything that says nothing about the bug: an infrastructure or driver error, a hang,
  a crash that is not the signature's, a failure of another shape (``device.is_healthy()``
  instead of ``allclose``) or of another test, a run that never reached the tests. Noise is
  recorded and retried or skipped, never taken as "bad" — the most common cause of wrong
  culprits in syzbot's and mozregression's records.

A failure's *shape* is its first line with numbers masked, so ``max_diff=1001.2`` and
``max_diff=998.7`` are the same shape, and ``Value of: device.is_healthy()`` is another.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from lnrepro.model.bisect import (
    AttemptObs,
    Evidence,
    Mark,
    RunOutcome,
    Signature,
    Step,
    TestObs,
)
from lnrepro.model.requests import (
    BisectRequest,
    EndpointRuns,
    OnCrash,
    OnHang,
    Policy,
    RunOracleSpec,
)

_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|\bnan\b|\binf\b", re.I)


def shape(message: str) -> str:
    """A failure's first non-empty line, numbers masked: what "failing the same way" compares."""
    first = next((ln.strip() for ln in message.splitlines() if ln.strip()), "")
    return _NUMBER.sub("#", first)[:200]


def _over(t: TestObs, policy: Policy) -> bool | None:
    """Whether the test's metric is on the bug's side of the threshold (None: not measured).

    Lower is better by default (``max_diff``: bad when above); with ``higher_is_better`` (a PCC)
    the bug's side is below. NaN is always the bug's side.
    """
    if policy.metric is None or policy.threshold is None or t.metric is None:
        return None
    if t.metric != t.metric:
        return True
    return t.metric < policy.threshold if policy.higher_is_better else t.metric > policy.threshold


def _side(policy: Policy) -> str:
    return "<" if policy.higher_is_better else ">"


def learn(a: AttemptObs, policy: Policy) -> Signature | None:
    """The signature a buggy commit's run shows, or None when the run shows none.

    With ``--on-hang bad`` a hang can be the bug: the tests that timed out are its signature, and
    where the watcher log or tt-triage says which kernel waits on what, that too; a later timeout of another
    test, or a hang elsewhere, stays noise.
    """
    if a.cannot_test or a.env_error:
        return None
    hung = [t.name for t in a.tests if t.status == "TIMEOUT"]
    if policy.on_hang is OnHang.BAD and policy.hang_in and (a.timed_out or hung):
        if not hang_named(a.hang, policy.hang_in):
            return None  # a hang elsewhere teaches nothing about the bug's
        return Signature(tests=tuple(hung), hang=True, hang_key=a.hang)
    if policy.on_hang is OnHang.BAD and a.gtest and hung:
        return Signature(tests=tuple(hung), hang=True, hang_key=a.hang)
    if policy.on_hang is OnHang.BAD and not a.gtest and a.timed_out:
        return Signature(hang=True)
    if a.timed_out:
        return None
    if not a.gtest:
        if a.exit_code == 0 or a.exit_code == 125:
            return None
        if a.exit_code >= 128:
            return (
                Signature(crash=True, exit_code=a.exit_code)
                if policy.on_crash is not OnCrash.SKIP
                else None
            )
        return Signature(exit_code=a.exit_code)
    if policy.metric is not None:
        over = [t.name for t in a.tests if _over(t, policy)]
        return Signature(tests=tuple(over)) if over else None
    failed = [t for t in a.tests if t.status == "FAILED"]
    if failed:
        return Signature(
            tests=tuple(t.name for t in failed), shapes=tuple(s for t in failed for s in t.shapes)
        )
    crashed = [t for t in a.tests if t.status == "CRASHED"]
    if crashed and policy.on_crash is not OnCrash.SKIP:
        return Signature(tests=tuple(t.name for t in crashed), crash=True)
    return None


def hang_named(key: str | None, text: str) -> bool:
    """``--hang-in TEXT``: the hang diagnosis's key (the watcher's or tt-triage's) names TEXT (case does not matter)."""
    return key is not None and text.strip().lower() in key.lower()


def classify(a: AttemptObs, sig: Signature | None, policy: Policy) -> tuple[RunOutcome, str]:
    """One run's outcome against the signature, and why (the reason goes into the record)."""
    if a.cannot_test:
        return RunOutcome.NOISE, a.cannot_test
    if a.env_error:
        return RunOutcome.NOISE, f"infrastructure: {a.env_error}"
    if not a.gtest:
        return _classify_command(a, sig, policy)
    hung = [t for t in a.tests if t.status == "TIMEOUT"]
    if a.timed_out or hung:
        if policy.on_hang is OnHang.BAD and policy.hang_in:
            where = f"{hung[0].name} hung" if hung else "hang"
            if hang_named(a.hang, policy.hang_in):
                return RunOutcome.FAIL, f"{where} at {a.hang} (--hang-in {policy.hang_in})"
            return (
                RunOutcome.NOISE,
                f"{where} elsewhere: {a.hang or 'no hang diagnosis'} "
                f"(the bug's hang is in {policy.hang_in})",
            )
        if policy.on_hang is OnHang.BAD:
            mine = [t for t in hung if sig is None or not sig.hang or t.name in sig.tests]
            if mine and sig is not None and sig.hang_key and a.hang != sig.hang_key:
                return (
                    RunOutcome.NOISE,
                    f"{mine[0].name} hung elsewhere: {a.hang or 'no hang diagnosis'} "
                    f"(the bug's hang: {sig.hang_key})",
                )
            if mine or (sig is None and a.timed_out):
                return (
                    RunOutcome.FAIL,
                    f"{(mine[0].name + ' hung') if mine else 'hang'}"
                    + (f" at {a.hang}" if a.hang else "")
                    + " (--on-hang bad)",
                )
            return (
                RunOutcome.NOISE,
                f"{hung[0].name if hung else 'the run'} hung (not the signature's tests)",
            )
        return RunOutcome.NOISE, "hang"
    watched = [t for t in a.tests if sig is None or t.name in sig.tests]
    ran = [t for t in watched if t.status not in ("SKIPPED", "DISABLED")]
    if not ran:
        return RunOutcome.NOISE, "the signature's tests did not run"
    if policy.metric is not None:
        if any(_over(t, policy) for t in ran):
            pick = min if policy.higher_is_better else max
            measured = [t.metric for t in ran if t.metric is not None]
            # NaN is the worst value whatever its place (max/min skip it when it comes second)
            nan = any(v != v for v in measured)
            worst = float("nan") if nan else pick(measured, default=float("nan"))
            return (
                RunOutcome.FAIL,
                f"{policy.metric}={worst:g} {_side(policy)} {policy.threshold:g}",
            )
        if all(t.status == "PASSED" or _over(t, policy) is False for t in ran):
            return RunOutcome.PASS, f"{policy.metric} within {policy.threshold:g}"
        return RunOutcome.NOISE, _unrelated(ran)
    for t in ran:
        if t.status == "FAILED" and (
            sig is None or not sig.shapes or set(t.shapes) & set(sig.shapes)
        ):
            return RunOutcome.FAIL, f"{t.name} failed" + (" the same way" if sig else "")
        if t.status == "CRASHED" and (
            policy.on_crash is OnCrash.BAD
            or (policy.on_crash is OnCrash.MATCH and (sig is None or sig.crash))
        ):
            return RunOutcome.FAIL, f"{t.name} crashed"
    if all(t.status == "PASSED" for t in ran):
        others = [t.name for t in a.tests if t not in watched and t.status == "FAILED"]
        return RunOutcome.PASS, "passed" + (f" (unrelated failure: {others[0]})" if others else "")
    return RunOutcome.NOISE, _unrelated(ran)


def _unrelated(ran: Sequence[TestObs]) -> str:
    bad = next((t for t in ran if t.status != "PASSED"), None)
    if bad is None:
        return "no verdict"
    if bad.status == "CRASHED":
        return f"{bad.name} crashed (not the signature)"
    return f"{bad.name} failed another way: {bad.shapes[0] if bad.shapes else '?'}"


def _classify_command(
    a: AttemptObs, sig: Signature | None, policy: Policy
) -> tuple[RunOutcome, str]:
    code = a.exit_code
    if a.timed_out:
        return (
            (RunOutcome.FAIL, "timed out (--on-hang bad)")
            if policy.on_hang is OnHang.BAD
            else (RunOutcome.NOISE, "timed out")
        )
    if code == 0:
        return RunOutcome.PASS, "exit 0"
    if code == 125:
        return RunOutcome.NOISE, "exit 125 (cannot test)"
    if code >= 128:
        crash_bad = policy.on_crash is OnCrash.BAD or (
            policy.on_crash is OnCrash.MATCH and (sig is None or sig.crash)
        )
        return (
            RunOutcome.FAIL if crash_bad else RunOutcome.NOISE
        ), f"killed by signal {code - 128}"
    return RunOutcome.FAIL, f"exit {code}"


@dataclass
class Tally:
    """Runs of one commit so far: what the search uses, and the reasons it keeps."""

    fails: int = 0
    passes: int = 0
    noise: int = 0
    reasons: list[str] = field(default_factory=list)

    def add(self, outcomes: Iterable[tuple[RunOutcome, str]]) -> None:
        for o, why in outcomes:
            if o is RunOutcome.FAIL:
                self.fails += 1
            elif o is RunOutcome.PASS:
                self.passes += 1
            else:
                self.noise += 1
            self.reasons.append(why)

    @property
    def runs(self) -> int:
        """Runs that said something about the bug (noise excluded)."""
        return self.fails + self.passes


# ---------------------------------------------------------------------- a step's verdict
def mark_of(outcomes: Sequence[RunOutcome]) -> Mark | None:
    """git's verdict from a step's runs (in the search's sense): bad if any shows the bug, good
    if one passed, else none yet (only noise)."""
    if RunOutcome.FAIL in outcomes:
        return Mark.BAD
    if RunOutcome.PASS in outcomes:
        return Mark.GOOD
    return None


def why(ev: Evidence, outcomes: Sequence[tuple[RunOutcome, str]], mark: Mark) -> str:
    """The reason a step got ``mark``: a shared verdict, why it could not be tested, or the first
    run that decided it (the first run's reason when none did)."""
    if ev.same_as:
        return f"same inputs as {ev.same_as[:12]}: its verdict, not run again"
    if ev.cannot_test:
        return ev.cannot_test
    decided = (w for o, w in outcomes if mark_of([o]) is mark)
    return next(decided, outcomes[0][1] if outcomes else "no run")


# ---------------------------------------------------------------------- --find-fix
@dataclass(frozen=True)
class Sense:
    """Which way the search looks: the one place ``--find-fix`` turns good and bad around.

    A search (git's, or the Bayesian one) always looks for the first commit of its "bad" side
    above its "good" ones. Without ``--find-fix`` that is the bug's first bad commit. With it, it
    is the first *fixed* commit: the search's "bad" is the fixed, newer ``--good``, its "good" the
    buggy, older ``--bad``, and a *passing* run is what shows its "bad" side. Runs are judged in
    the bug's terms (:func:`classify`); the search sees them, and the record keeps them, turned
    by :meth:`turn` (a report turns them back with it). Rates and counts are turned likewise.
    """

    find_fix: bool = False

    @classmethod
    def of(cls, req: BisectRequest) -> Sense:
        return cls(req.find_fix)

    @property
    def kind(self) -> str:
        """What the search's first "bad" commit is, in the user's words."""
        return "first fixed commit" if self.find_fix else "first bad commit"

    def turn(self, outcome: RunOutcome) -> RunOutcome:
        """A run's outcome from the bug's sense to the search's, and back (its own inverse)."""
        if not self.find_fix or outcome is RunOutcome.NOISE:
            return outcome
        return RunOutcome.PASS if outcome is RunOutcome.FAIL else RunOutcome.FAIL

    def ends(self, good: Sequence[str], bad: str) -> tuple[str, list[str]]:
        """The search's "bad" commit and its "good" ones, from ``--good`` and ``--bad``."""
        return (good[0], [bad]) if self.find_fix else (bad, list(good))

    def buggy(self, tip: str, bottoms: Sequence[str]) -> str:
        """Of the search's ends (its "bad" ``tip``, its "good" ``bottoms``, ``--bad`` first), the
        one known to have the bug: its runs teach the signature."""
        return bottoms[0] if self.find_fix else tip

    def rates(self, rates: tuple[float, float]) -> tuple[float, float]:
        """Fail rates (of the bad side, of the good side) from the bug's sense to the search's,
        and back: with ``--find-fix`` the search's "bad" (fixed) commits "fail" when they pass."""
        bad, good = rates
        return (1 - good, 1 - bad) if self.find_fix else rates

    def counts(self, e: EndpointRuns) -> tuple[tuple[int, int], tuple[int, int]]:
        """The endpoints' measured runs as (fails, runs) of the search's "bad" end and of its
        "good" end (``EndpointRuns`` keeps them in the bug's terms)."""
        bad, good = (e.bad_fails, e.bad_runs), (e.good_fails, e.good_runs)
        if not self.find_fix:
            return bad, good
        return (e.good_runs - e.good_fails, e.good_runs), (e.bad_runs - e.bad_fails, e.bad_runs)


# ---------------------------------------------------------------------- a step's runs
@dataclass(frozen=True)
class Meaning:
    """What a step's runs mean for the search, given the request: each run classified against
    the signature (learned here from the buggy endpoint's runs), then turned for ``--find-fix``.

    Hangs at the buggy endpoint are held back until their place is known: with ``--on-hang bad``
    and no ``--hang-in``, one hang there is noise until a second at the same place agrees (a
    flaky hang elsewhere, at device open say, must not become the signature); with the watcher
    on, a hang it does not place is noise too (a longer timeout lets it write its dump).
    """

    policy: Policy
    sense: Sense
    buggy: str  # the endpoint whose runs teach the signature
    watched: bool = False  # the runs write a watcher log (--watcher): a hang comes with a place

    @classmethod
    def of(cls, req: BisectRequest, buggy: str) -> Meaning:
        o = req.oracle
        watched = isinstance(o, RunOracleSpec) and bool(getattr(o.backend, "watcher_s", None))
        return cls(req.policy, Sense.of(req), buggy, watched)

    def judge(
        self, sha: str, ev: Evidence, signature: Signature | None, earlier: Iterable[Step]
    ) -> tuple[Signature | None, list[tuple[RunOutcome, str]]]:
        """The signature after this step (learned now when unknown and ``sha`` is the buggy
        endpoint) and each run's outcome in the search's sense, with why. ``earlier``: the
        steps so far."""
        learning = signature is None and sha == self.buggy
        if learning:
            signature = self._learn(ev, earlier)
        held = learning and signature is None
        outs = [
            (self._held(a) if held else None) or classify(a, signature, self.policy)
            for a in ev.attempts
        ]
        return signature, [(self.sense.turn(o), w) for o, w in outs]

    def _held(self, a: AttemptObs) -> tuple[RunOutcome, str] | None:
        """A run of the buggy endpoint that taught no signature and must not be judged yet."""
        if self.policy.on_hang is not OnHang.BAD or self.policy.hang_in:
            return None
        if a.hang:
            return (
                RunOutcome.NOISE,
                "a hang seen once at the bad endpoint: it must hang there twice at the same "
                "place to be the bug's hang",
            )
        hung = a.timed_out or any(t.status == "TIMEOUT" for t in a.tests)
        if hung and self.watched:
            return (
                RunOutcome.NOISE,
                "a hang at the bad endpoint that the watcher log does not place (no complete "
                "dump before the timeout?): run again; a longer --timeout lets the watcher "
                "write one",
            )
        return None

    def _learn(self, ev: Evidence, earlier: Iterable[Step]) -> Signature | None:
        """The bug's signature from the buggy endpoint's runs (this step's, with the hang
        places of its earlier ones), or None while they show none."""
        policy = self.policy
        seen = Counter(
            a.hang
            for s in earlier
            if s.action.sha == self.buggy
            for a in s.evidence.attempts
            if a.hang
        )
        for a in ev.attempts:
            sig = learn(a, policy)
            if sig is None:
                continue
            if sig.hang and not sig.hang_key and self.watched and not policy.hang_in:
                continue  # the watcher is on but did not place this hang: it teaches no place
            if sig.hang_key and not policy.hang_in:
                seen[sig.hang_key] += 1
                if seen[sig.hang_key] < 2:
                    continue
            return sig
        return None


@dataclass(frozen=True)
class Rates:
    """Beta priors on the fail rates of buggy and clean commits, or the rates themselves."""

    bad: tuple[float, float] = (1.0, 1.0)  # uniform: the bug may show rarely or always
    good: tuple[float, float] = (0.5, 4.5)  # mean 0.1: clean commits mostly pass
    fixed: tuple[float, float] | None = None  # (q_bad, q_good) when known
    bug_shown: bool = False  # the buggy endpoint failed in runs measured before the search

    def with_runs(self, bad: tuple[int, int], good: tuple[int, int]) -> Rates:
        """These priors updated by runs measured before the search (``--rates-from``): ``bad``
        and ``good`` are (fails, runs) of the buggy and the clean endpoint. A Beta prior, not a
        point: 14 fails of 20 still leave the rate between about 0.48 and 0.85. A failure among
        the buggy endpoint's runs is the check the search would make first (``bug_shown``)."""
        (ab, bb), (ag, bg) = self.bad, self.good
        return Rates(
            (ab + bad[0], bb + bad[1] - bad[0]),
            (ag + good[0], bg + good[1] - good[0]),
            self.fixed,
            self.bug_shown or bad[0] > 0,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "bad_prior": list(self.bad),
            "good_prior": list(self.good),
            "fixed": list(self.fixed) if self.fixed else None,
            "bug_shown": self.bug_shown,
        }
