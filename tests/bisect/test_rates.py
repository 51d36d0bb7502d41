"""The fail rates measured before a bisect: run records at the endpoints counted, named with
``--rates-from`` or found in the store, and turned into the search's Beta prior."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lnrepro import options
from lnrepro.bisect.bayes import BayesSearch, Costs, Posterior
from lnrepro.bisect.evidence import Rates
from lnrepro.bisect.rates import counts, describe, endpoint_runs, find, named
from lnrepro.bisect.validate import check_bisect
from lnrepro.doors.fsio import write_json
from lnrepro.errors import UsageError
from lnrepro.model.bisect import RunOutcome
from lnrepro.model.gtest import TestResult, TestStatus
from lnrepro.model.jsonio import Reader
from lnrepro.model.record import Attempt, RunRecord, RunState
from lnrepro.model.requests import (
    BisectRequest,
    CommandOracleSpec,
    EndpointRuns,
    RunOracleSpec,
    RunRequest,
    TestSpec,
    TtMetalSpec,
)
from tests.bisect.test_core import linear

BAD, GOOD, OTHER = "b" * 40, "a" * 40, "c" * 40
FILTER = "*BugRepro*"


def run_record(
    base: Path, name: str, commit: str, statuses: list[TestStatus], filt: str = FILTER
) -> RunRecord:
    """A finished `lnrepro run -n N` at ``commit``: one test, one attempt per status given."""
    req = RunRequest(
        backend=TtMetalSpec(checkout=Path("/src")),
        tests=TestSpec(gtest_filter=filt, repeat=len(statuses)),
        record_dir=base,
    )
    rec = RunRecord(
        request=req,
        rerun=options.argv(req),
        record_dir=base / name,
        state=RunState.COMPLETE,
        fingerprint={"commit": commit},
    )
    for i, s in enumerate(statuses, 1):
        test = TestResult(name="Suite.BugRepro", status=s)
        rec.attempts.append(
            Attempt(
                index=i,
                argv=["t"],
                exit_code=int(s is not TestStatus.PASSED),
                timed_out=False,
                seconds=1.0,
                log="a.log",
                tests=[test],
            )
        )
    write_json(base / name / "record.json", rec.to_json())
    return rec


def request(base: Path, *rates_from: str, command: bool = False) -> BisectRequest:
    oracle = (
        CommandOracleSpec(argv=("true",))
        if command
        else RunOracleSpec(
            backend=TtMetalSpec(checkout=Path("/src")), tests=TestSpec(gtest_filter=FILTER)
        )
    )
    return BisectRequest(
        repo=base,
        good=(GOOD,),
        bad=BAD,
        oracle=oracle,
        confidence=0.95,
        record_dir=base,
        rates_from=rates_from,
    )


F, P, E = TestStatus.FAILED, TestStatus.PASSED, TestStatus.TIMEOUT


def test_counts_are_the_failing_tests_runs_noise_left_out(tmp_path: Path) -> None:
    rec = run_record(tmp_path, "run-1", BAD, [F, F, P, E, TestStatus.CRASHED, P])
    assert counts(rec) == (3, 5)  # a timeout says nothing about the bug; a crash is a failure


def test_named_records_sum_per_endpoint_and_say_where_they_came_from(tmp_path: Path) -> None:
    run_record(tmp_path, "run-1", BAD, [F] * 7 + [P] * 3)
    run_record(tmp_path, "run-2", BAD, [F, P])
    run_record(tmp_path, "run-3", GOOD, [P] * 19 + [F])
    e = named(request(tmp_path, "run-1", "run-2", str(tmp_path / "run-3")))
    assert (e.bad_fails, e.bad_runs, e.good_fails, e.good_runs) == (8, 12, 1, 20)
    assert not e.found and [Path(s).name for s in e.sources] == ["run-1", "run-2", "run-3"]
    line = describe(e)
    assert line.startswith("rates from 3 record(s) (--rates-from): 8/12 failed at --bad, 1/20 at")
    assert line.endswith("\n  run-1, run-2, run-3")


def test_a_run_of_another_commit_is_refused_with_the_fix(tmp_path: Path) -> None:
    run_record(tmp_path, "run-1", OTHER, [F])
    with pytest.raises(UsageError, match="neither --bad") as exc:
        named(request(tmp_path, "run-1"))
    assert "lnrepro run" in exc.value.fix


def test_rates_from_needs_confidence_and_excludes_fixed_rates(tmp_path: Path) -> None:
    run_record(tmp_path, "run-1", BAD, [F])
    req = request(tmp_path, "run-1")
    with pytest.raises(UsageError, match="only applies with --confidence"):  # read nothing
        check_bisect(
            BisectRequest(
                repo=req.repo, good=req.good, bad=req.bad, oracle=req.oracle, rates_from=("run-1",)
            )
        )
    with pytest.raises(UsageError, match="both give the fail rates"):
        check_bisect(
            BisectRequest(
                repo=req.repo,
                good=req.good,
                bad=req.bad,
                oracle=req.oracle,
                confidence=0.9,
                fail_rates=(0.7, 0.05),
                rates_from=("run-1",),
            )
        )


def test_the_endpoints_runs_are_found_when_commit_and_tests_match(tmp_path: Path) -> None:
    run_record(tmp_path, "run-1", BAD, [F] * 14 + [P] * 6)
    run_record(tmp_path, "run-2", GOOD, [P] * 20)
    run_record(tmp_path, "run-3", BAD, [P] * 20, filt="*Other*")  # another test: not counted
    run_record(tmp_path, "run-4", OTHER, [F] * 20)  # another commit: not counted
    e = find(request(tmp_path))
    assert e is not None and e.found
    assert (e.bad_fails, e.bad_runs, e.good_fails, e.good_runs) == (14, 20, 0, 20)
    assert "found in the store" in describe(e)
    # a --command bisect: which test the command runs is unknown, so nothing is assumed
    assert find(request(tmp_path, command=True)) is None


def test_nothing_is_found_without_a_run_at_the_bad_commit(tmp_path: Path) -> None:
    run_record(tmp_path, "run-2", GOOD, [P] * 20)
    assert find(request(tmp_path)) is None
    assert endpoint_runs(request(tmp_path))[1] is None


def test_the_counts_travel_with_the_request_for_resume(tmp_path: Path) -> None:
    req = request(tmp_path, "run-1")
    e = EndpointRuns(
        bad_fails=14, bad_runs=20, good_fails=1, good_runs=20, sources=("/r/run-1",), found=True
    )
    doc = BisectRequest(
        repo=req.repo,
        good=req.good,
        bad=req.bad,
        oracle=req.oracle,
        confidence=0.95,
        rates_from=("run-1",),
        endpoint_runs=e,
    ).to_json()
    back = BisectRequest.from_json(Reader(json.loads(json.dumps(doc)), "state"))
    assert back.endpoint_runs == e and back.rates_from == ("run-1",)
    assert "--rates-from" in options.argv(back) and "run-1" in options.argv(back)


def test_the_prior_is_a_beta_from_the_counts_not_a_point() -> None:
    r = Rates().with_runs((14, 20), (1, 20))
    assert r.bad == (15.0, 7.0) and r.good == (1.5, 23.5) and r.fixed is None
    # it keeps learning: 20 more fails at the tip move the learned rate up
    g = linear(8)
    post = Posterior(g, g.order[-1], [g.order[0]], r)
    before = post.rates_now()[0]
    post.observe(g.order[-1], 20, 20)
    assert post.rates_now()[0] > before + 0.1


def test_measured_rates_shorten_the_search() -> None:
    """The same seeded noisy history, with and without 20 runs per endpoint measured before."""
    import random

    g = linear(64)
    total = {"learned": 0, "measured": 0}
    for t in range(6):
        culprit = g.bit(g.order[random.Random(t).randrange(1, 64)])
        for name, rates in (
            ("learned", Rates()),
            ("measured", Rates().with_runs((14, 20), (1, 20))),
        ):
            rng = random.Random(t)
            s = BayesSearch(
                g, g.order[-1], [g.order[0]], 0.95, rates, Costs(0, 0, 60, 0), rule="entropy"
            )
            while (a := s.next_for(0, {})) is not None:
                q = 0.7 if g.ancestors(a.sha) & culprit else 0.05
                s.observe(a, [(RunOutcome.FAIL if rng.random() < q else RunOutcome.PASS, "")])
            total[name] += s.runs
    assert total["measured"] < 0.85 * total["learned"], total


def test_bisect_rates_from_on_the_command_line(tmp_path: Path) -> None:
    """A --command bisect of a real (tiny) repository: the note on stderr, the counts in the
    record, the rerun line naming the records."""
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
        "HOME": str(tmp_path),
        "PATH": "/usr/bin:/bin",
    }

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, env=env
        ).stdout.strip()

    git("init", "-q")
    shas = []
    for i in range(8):
        (repo / "bug").write_text("1" if i >= 5 else "0")
        (repo / "n").write_text(str(i))
        git("add", "bug", "n")
        git("commit", "-q", "-m", f"c{i}")
        shas.append(git("rev-parse", "HEAD"))
    runs = tmp_path / "runs"
    run_record(runs, "run-bad", shas[-1], [F] * 18 + [P] * 2)
    run_record(runs, "run-good", shas[0], [P] * 20)
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "lnrepro",
            "bisect",
            "--repo",
            str(repo),
            "--good",
            shas[0],
            "--bad",
            shas[-1],
            "--command",
            "grep -q 0 bug",
            "--confidence",
            "0.9",
            "--rates-from",
            "run-bad",
            "--rates-from",
            "run-good",
            "--record-dir",
            str(runs),
            "--json",
        ],
        capture_output=True,
        text=True,
        env={**env, "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"},
        check=False,
    )
    assert "Traceback" not in p.stderr, p.stderr
    assert (
        "rates from 2 record(s) (--rates-from): 18/20 failed at --bad, 0/20 at --good" in p.stderr
    )
    doc = json.loads(p.stdout)
    assert doc["result"]["first_bad"] == shas[5]
    assert doc["request"]["endpoint_runs"]["bad_runs"] == 20
    assert doc["rerun"].count("--rates-from") == 2
    # both endpoints were measured (20 runs each, the bug shown at --bad): neither is checked
    checked = [st["sha"] for st in doc["steps"] if st["kind"] == "endpoint"]
    assert checked == []


def test_the_clean_endpoint_is_checked_only_where_a_run_of_it_teaches_for_a_run() -> None:
    """A clean endpoint's run says nothing about the culprit, and one run cannot show a
    commit clean when clean commits fail too (git trusts --good). It is checked once only where
    it teaches the clean fail rate for the price of a run: not with the rates given or measured
    there, not when it needs a 30-minute build of its own. The buggy endpoint first, unless its
    runs measured before showed the bug (below)."""
    g = linear(16)
    tip, good = g.order[-1], g.order[0]
    cases = (
        (Rates(), Costs(0, 0, 60, 0), frozenset(), True),  # learned, a run costs a run
        (Rates(), Costs(), frozenset(), False),  # learned, but a build first
        (Rates(), Costs(120, 90, 60, 0), frozenset(), True),  # a checkout of two runs: cheap
        (Rates().with_runs((0, 20), (1, 20)), Costs(0, 0, 60, 0), frozenset({good}), False),
        (Rates(fixed=(0.7, 0.05)), Costs(0, 0, 60, 0), frozenset(), False),
    )
    for rates, costs, measured, checked in cases:
        s = BayesSearch(g, tip, [good], 0.95, rates, costs, measured=measured)
        first = s.next_for(0, {})
        assert first is not None and first.sha == tip  # the buggy endpoint still: its signature
        s.observe(first, [(RunOutcome.FAIL, "")])
        second = s.next_for(0, {})
        assert second is not None and (second.sha == good) is checked, (rates, costs)
        assert second.kind.value == ("endpoint" if checked else "step")


def test_the_buggy_endpoint_is_not_checked_when_its_measured_runs_showed_the_bug() -> None:
    """The check the search makes first (the bug shows at --bad) was made by the
    runs measured there (--rates-from): the search starts inside the range, and a bug that
    shows in 30% of runs is not given up on after 8 passes at --bad (6% of searches)."""
    g = linear(16)
    tip, good = g.order[-1], g.order[0]
    shown = Rates().with_runs((6, 20), (0, 20))
    assert shown.bug_shown and not Rates().with_runs((0, 20), (0, 20)).bug_shown
    s = BayesSearch(g, tip, [good], 0.95, shown, Costs(0, 0, 60, 0), measured=frozenset({good}))
    for _ in range(8):  # the buggy endpoint's runs would all pass: the search goes on
        first = s.next_for(0, {})
        assert first is not None and first.kind.value == "step"
        s.observe(first, [(RunOutcome.PASS, "")])
    assert s.error is None
    unseen = BayesSearch(g, tip, [good], 0.95, Rates().with_runs((0, 20), (0, 20)))
    assert (a := unseen.next_for(0, {})) is not None and a.sha == tip  # not shown: checked
