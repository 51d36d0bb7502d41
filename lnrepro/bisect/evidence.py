"""Evidence, not noise: what one run of the test says about the bug. Pure: no git, no I/O.

A bisect step runs the test one or more times; each run becomes a :class:`RunOutcome`:

* ``FAIL`` — the run shows *the bug's signature*: a test of the signature failing the same way
  (the same failure shape, or the metric over the threshold). The signature is learned from the
  first failing run of the commit known to be buggy (the ``--bad`` endpoint, or ``--good`` with
  ``--find-fix``): which tests failed, and how.
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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from lnrepro.model.bisect import AttemptObs, RunOutcome, Signature, TestObs
from lnrepro.model.requests import OnCrash, OnHang, Policy

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
            worst = pick((t.metric for t in ran if t.metric is not None), default=float("nan"))
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
