"""The fail rates a user has measured already: ``lnrepro run`` records at a bisect's endpoints.

A flaky bug is bisected by someone who has run it: ``lnrepro run -n 20`` at the bad commit, and
often at the good one. Those runs are counted (:func:`counts`) and become the Beta prior over the
fail rates of the Bayesian search (:meth:`lnrepro.bisect.bayes.Rates.with_runs`): the search
starts with what is known and keeps learning. Records are named (``--rates-from RUN...``) or found
in the store (:func:`find`): a run record whose commit is one of the endpoints and whose tests are
the bisect's. Reading only.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lnrepro.doors import store
from lnrepro.errors import InputError, UsageError
from lnrepro.model.record import RunRecord, RunState, Seen
from lnrepro.model.requests import (
    DEFAULT_RECORD_DIR,
    BisectRequest,
    CommandOracleSpec,
    EndpointRuns,
    RunOracleSpec,
    TestSpec,
    TtMetalSpec,
)
from lnrepro.options.table import flag

_FAILS = ("FAILED", "CRASHED")  # a run that shows the bug; ENV_ERROR and TIMEOUT are noise


class Flag:
    """The flags these messages name, as the table of options spells them."""

    rates_from = flag(BisectRequest, "rates_from")
    fail_rates = flag(BisectRequest, "fail_rates")
    good = flag(BisectRequest, "good")
    bad = flag(BisectRequest, "bad")
    command = flag(CommandOracleSpec, "argv")
    tt_metal = flag(TtMetalSpec, "checkout")
    pytest = flag(TestSpec, "pytest")
    filter = flag(TestSpec, "gtest_filter")


def counts(run: RunRecord) -> tuple[int, int]:
    """(fails, runs) of the run's test that failed most: the bug's test (noise not counted)."""
    best = (0, 0)
    for t in run.tests:
        fails = sum(t.statuses.get(Seen(s), 0) for s in _FAILS)
        runs = fails + t.statuses.get(Seen.PASSED, 0)
        best = max(best, (fails, runs))
    return best


def bases(req: BisectRequest) -> list[Path]:
    """Where run records are looked for: ``--record-dir``, ``.lnrepro/runs`` here and in the
    repository, and the bisects' own runs inside its ``.git``."""
    out = [req.record_dir] if req.record_dir is not None else []
    out += store.bases_for(DEFAULT_RECORD_DIR, False, req.repo)
    out.append(req.repo / DEFAULT_RECORD_DIR)
    return list(dict.fromkeys(b.absolute() for b in out))


def _fix_for(req: BisectRequest) -> str:
    """What to do instead, in the bisect's own terms: a --command bisect has no `lnrepro run`
    records of its own test, so its fix is the rates themselves."""
    if isinstance(req.oracle, RunOracleSpec):
        return f"name runs of the endpoints (lnrepro run {Flag.tt_metal} . at each of them)"
    return (
        f"{Flag.rates_from} takes lnrepro's own runs (`lnrepro run`) of the endpoints; for a "
        f"{Flag.command} bisect give the rates you measured with {Flag.fail_rates} BAD,GOOD (e.g. "
        f"0.7,0.05), or drop {Flag.rates_from} to learn them"
    )


def _tests_of(tests: object) -> str:
    """The tests a run or a bisect's runs select, as the user wrote them."""
    pytest = getattr(tests, "pytest", ())
    return " ".join(pytest) if pytest else str(getattr(tests, "gtest_filter", ""))


def _same_tests(req: BisectRequest, run: RunRecord) -> bool:
    """``run`` ran the bisect's own tests, its gtest filter or its pytest ids (a --command's
    tests are its own: not known)."""
    o = req.oracle
    if not isinstance(o, RunOracleSpec):
        return True
    mine, theirs = o.tests, run.request.tests
    return (mine.pytest, mine.gtest_filter if not mine.pytest else "") == (
        theirs.pytest,
        theirs.gtest_filter if not theirs.pytest else "",
    )


def _tally(req: BisectRequest, runs: Sequence[RunRecord], found: bool) -> EndpointRuns:
    bf = bn = gf = gn = 0
    sources = []
    for run in runs:
        commit = str(run.fingerprint.get("commit") or "")
        fails, n = counts(run)
        if commit == req.bad:
            bf, bn = bf + fails, bn + n
        elif commit in req.good:
            gf, gn = gf + fails, gn + n
        else:
            raise UsageError(
                f"{Flag.rates_from} {run.id}: it ran commit {commit[:12] or '(unknown)'}, "
                f"which is neither {Flag.bad} {req.bad[:12]} nor {Flag.good}",
                _fix_for(req),
            )
        if not _same_tests(req, run):
            assert isinstance(req.oracle, RunOracleSpec)
            given = Flag.pytest if req.oracle.tests.pytest else Flag.filter
            raise UsageError(
                f"{Flag.rates_from} {run.id}: it ran other tests ({_tests_of(run.request.tests)}) "
                f"than the bisect's ({_tests_of(req.oracle.tests)}): their fail rates are not "
                "the bug's",
                f"name runs with the bisect's own tests, or bisect them (its {given})",
            )
        sources.append(str(run.record_dir))
    return EndpointRuns(
        bad_fails=bf, bad_runs=bn, good_fails=gf, good_runs=gn, sources=tuple(sources), found=found
    )


def named(req: BisectRequest) -> EndpointRuns:
    """The counts of the records ``--rates-from`` names (ids, prefixes, ``last`` or paths)."""
    runs = [store.load_run(bases(req), ref, _fix_for(req)) for ref in req.rates_from]
    out = _tally(req, runs, found=False)
    if out.bad_runs == 0:
        raise UsageError(
            f"{Flag.rates_from}: no run at {Flag.bad} said pass or fail (only noise, or not run)",
            "name a record of the bad commit whose test ran (lnrepro runs lists them)",
        )
    return out


def matches(req: BisectRequest, run: RunRecord) -> bool:
    """``run`` tested an endpoint with the bisect's own tests (gtest filter or pytest ids)."""
    return (
        isinstance(req.oracle, RunOracleSpec)
        and run.state is RunState.COMPLETE
        and str(run.fingerprint.get("commit") or "") in (req.bad, *req.good)
        and _same_tests(req, run)
    )


def find(req: BisectRequest) -> EndpointRuns | None:
    """The endpoints' runs in the store, when the bisect learns its rates and none are named."""
    if req.confidence is None or req.fail_rates is not None or req.rates_from:
        return None
    runs = []
    for e in store.scan(bases(req)):
        if (
            e.kind != "run"
            or e.state != RunState.COMPLETE.value
            or e.commit not in (req.bad, *req.good)
        ):
            continue
        try:
            run = store.load_path(e.path)
        except InputError:
            continue
        if isinstance(run, RunRecord) and matches(req, run) and counts(run)[1]:
            runs.append(run)
    if not any(str(r.fingerprint.get("commit")) == req.bad for r in runs):
        return None  # the buggy endpoint's rate is the one that matters: without it, learn
    return _tally(req, runs, found=True)


def endpoint_runs(req: BisectRequest) -> tuple[tuple[str, ...], EndpointRuns | None]:
    """The endpoints' runs of a checked ``req`` (its commits full shas): those of --rates-from
    (with ``last`` and prefixes resolved: the rerun line and --resume name these very records),
    or those found in the store. Returns the --rates-from to keep and the counts."""
    if req.rates_from:
        return _resolved(req), named(req)
    return req.rates_from, find(req)


def _resolved(req: BisectRequest) -> tuple[str, ...]:
    """Each ``--rates-from`` as it will name the same record later: a path made absolute, an id,
    a prefix or ``last`` made the record's id (looked up under the same directories)."""
    out = []
    for ref in req.rates_from:
        path = store.resolve(bases(req), ref)
        given = Path(ref).expanduser()
        out.append(str(given.resolve()) if given.exists() else path.parent.name)
    return tuple(out)


def prior(req: BisectRequest) -> str | None:
    """Which prior a Bayesian search started from, and from which records (``show``,
    ``report``); None for a search that is not Bayesian."""
    if req.confidence is None:
        return None
    if req.fail_rates is not None:
        qb, qg = req.fail_rates
        return f"fail rates given ({Flag.fail_rates} {qb:g},{qg:g}), not learned"
    e = req.endpoint_runs
    if e is None or not e.sources:
        return "none measured: the fail rates were learned from the bisect's own runs"
    how = "found in the store" if e.found else Flag.rates_from
    good = f"{e.good_fails}/{e.good_runs} at {Flag.good}" if e.good_runs else f"none at {Flag.good}"
    names = ", ".join(Path(s).name for s in e.sources)
    return f"{e.bad_fails}/{e.bad_runs} failed at {Flag.bad}, {good} ({how}: {names})"


def describe(e: EndpointRuns) -> str:
    """Two lines for the console: where the prior comes from, what it says, which records."""
    how = "found in the store" if e.found else f"({Flag.rates_from})"
    good = f"{e.good_fails}/{e.good_runs} at {Flag.good}" if e.good_runs else f"none at {Flag.good}"
    names = ", ".join(Path(s).name for s in e.sources[:3]) + (" …" if len(e.sources) > 3 else "")
    return (
        f"rates from {len(e.sources)} record(s) {how}: {e.bad_fails}/{e.bad_runs} failed at "
        f"{Flag.bad}, {good}\n  {names}"
    )
