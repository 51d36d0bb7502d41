"""The real bisect loop (:class:`lnrepro.bisect.loop.Bisect`) in process: a scripted workspace
(no git) and scripted evidence (no process), as mozregression's tests drive its Bisector. Each
test asserts the commits tried, in order, the marks and the answer. The harness:
tests/bisect/scripted.py. Where a test needs git's own reading of a history (first-parent,
paths, merge bases), :func:`lnrepro.bisect.loop.commit_range` reads a real repository and the
loop still runs in process.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from lnrepro.bisect import loop
from lnrepro.bisect.core import Graph, Mark
from lnrepro.errors import EndpointsDoNotSeparate
from lnrepro.model.bisect import (
    ActionKind,
    AttemptObs,
    BisectState,
    CommitInfo,
    LostJob,
    RunOutcome,
    TestObs,
)
from lnrepro.model.events import BisectEvents
from lnrepro.model.gtest import TestStatus
from lnrepro.model.requests import OnCrash, OnHang, Policy, RunOracleSpec, TtMetalSpec
from lnrepro.present.markdown import bisect_markdown
from tests.bisect.scripted import (
    ScriptedOracle,
    ScriptedWorkspace,
    bisect,
    exits,
    git,
    index,
    made_up,
    release_history,
    request,
    start,
)
from tests.bisect.test_core import linear
from tests.lookalike import Spec, generate


def test_a_deterministic_culprit_on_a_linear_history() -> None:
    run = bisect(linear(16), exits(lambda c: index(c) >= 9), good="c0", bad="c15")
    r, oracle, events = run.record.result, run.oracle, run.events
    assert r is not None and r.first_bad == "c9" and r.last_good == "c8" and r.confirmed is True
    assert r.commit == CommitInfo(sha="c9", subject="subject of c9")
    # the endpoints, git's midpoints, then the culprit's neighbours re-tested
    assert oracle.tried[:6] == ["c15", "c0", "c7", "c11", "c9", "c8"]
    assert [m for _, _, m in events.marks][:6] == ["bad", "good", "good", "bad", "bad", "good"]
    assert r.steps == 4 and r.endpoint_checks == 2


def merged() -> Graph:
    """c0-c1-c2-c3--m4-c5-c6 with a side branch b1-b2-b3 from c1 merged at m4."""
    order = ("c0", "c1", "c2", "b1", "b2", "c3", "b3", "m4", "c5", "c6")
    parents = {
        "c0": (),
        "c1": ("c0",),
        "c2": ("c1",),
        "b1": ("c1",),
        "b2": ("b1",),
        "c3": ("c2",),
        "b3": ("b2",),
        "m4": ("c3", "b3"),
        "c5": ("m4",),
        "c6": ("c5",),
    }
    return Graph(order, parents)


def test_a_deterministic_culprit_on_a_side_branch_of_a_merged_history() -> None:
    g = merged()
    buggy = {"b2", "b3", "m4", "c5", "c6"}  # the culprit b2 and everything that contains it
    run = bisect(g, exits(lambda c: c in buggy), good="c0", bad="c6")
    r, oracle = run.record.result, run.oracle
    assert r is not None and r.first_bad == "b2" and r.last_good == "b1"
    # 9 candidates: b3 splits them best (4 of them are its ancestors), then b1 of the 4 left,
    # then b2; the culprit and its parent are confirmed
    assert oracle.tried == ["c6", "c0", "b3", "b1", "b2", "b2", "b1"]
    assert r.confirmed is True and r.steps == 3


def test_unbuildable_commits_are_skipped_and_never_tried_again() -> None:
    ws = ScriptedWorkspace(broken={"c11": "the pick does not apply"})
    run = bisect(
        linear(16),
        exits(lambda c: index(c) >= 9),
        good="c0",
        bad="c15",
        ws=ws,
        unbuildable=frozenset({"c7"}),
    )
    r, oracle, events = run.record.result, run.oracle, run.events
    assert r is not None and r.first_bad == "c9"
    skipped = [sha for _, sha, m in events.marks if m == "skip"]
    assert skipped == ["c7", "c11"]
    # c7 does not build: its neighbour c8 instead; c11's pick does not apply: c12 instead
    assert ws.prepared == ["c15", "c0", "c7", "c8", "c11", "c12", "c10", "c9", "c9", "c8"]
    assert oracle.tried == [c for c in ws.prepared if c != "c11"]  # not prepared: not run


def test_skips_hiding_the_culprit_leave_the_candidates() -> None:
    run = bisect(
        linear(10),
        exits(lambda c: index(c) >= 5),
        good="c0",
        bad="c9",
        unbuildable=frozenset({"c4", "c5"}),
    )
    r, oracle = run.record.result, run.oracle
    assert r is not None and r.first_bad is None
    assert oracle.tried == ["c9", "c0", "c4", "c5", "c3", "c6"]
    # as git: the skipped commits and the first bad one after them, any of which may be first
    assert [c.sha for c in r.candidates] == ["c4", "c5", "c6"] and r.reason


def test_a_flaky_culprit_with_confidence() -> None:
    rnd = random.Random(1)
    flaky = {"c": 0}

    def script(sha: str, n: int) -> AttemptObs:
        fails = index(sha) >= 9 and rnd.random() < 0.7
        flaky["c"] += index(sha) >= 9 and not fails
        return AttemptObs(exit_code=1 if fails else 0, gtest=False)

    run = bisect(linear(16), script, good="c0", bad="c15", confidence=0.95)
    r, oracle = run.record.result, run.oracle
    assert r is not None and r.search == "bayesian" and r.first_bad == "c9"
    assert r.confidence is not None and r.confidence >= 0.95
    assert flaky["c"] > 0, "seeded: a buggy commit passed at least once"
    assert len(oracle.tried) > 11  # a pass at a buggy commit cost more runs than a clean search


def test_a_clean_endpoint_that_never_passes_stops_the_flaky_search() -> None:
    """A command that fails at every commit (a script the worktrees cannot reach): git trusts
    --good, but a culprit named beside a clean endpoint that never passed is named with a
    confidence nothing measured. The clean endpoint is run again until it passes; after 8
    failures the endpoints do not separate, one line, and the record says so."""
    run = start(
        made_up(linear(16), request("c0", "c15", confidence=0.95)),
        request("c0", "c15", confidence=0.95),
        ScriptedOracle(exits(lambda c: True)),
    )
    with pytest.raises(EndpointsDoNotSeparate) as exc:
        run.bisect.run(run.events)
    assert exc.value.one_line().startswith(
        "the clean endpoint c0 failed every one of its 8 run(s): the bug does not separate"
    )
    # a --command has no tests to pick: the fix says where it runs instead
    assert "runs in each commit's own worktree" in exc.value.fix and "--pick" not in exc.value.fix
    assert run.oracle.tried.count("c0") == 8 and run.record.result is not None
    assert run.record.result.first_bad is None


def test_a_clean_endpoints_one_failure_costs_a_run_and_the_search_goes_on() -> None:
    """At 5% a clean endpoint's check fails now and then: it is run again until it passes, and
    the culprit is found as before."""
    seen = {"c0": 0}

    def script(sha: str, n: int) -> AttemptObs:
        if sha == "c0":
            seen["c0"] += 1
            return AttemptObs(exit_code=1 if seen["c0"] == 1 else 0, gtest=False)
        return AttemptObs(exit_code=1 if index(sha) >= 9 else 0, gtest=False)

    run = bisect(linear(16), script, good="c0", bad="c15", confidence=0.95)
    r = run.record.result
    assert r is not None and r.first_bad == "c9" and seen["c0"] >= 2
    assert run.oracle.tried[1:3] == ["c0", "c0"]  # checked again before the search


def test_find_fix_flips_good_and_bad() -> None:
    # c0 has the bug, c15 has it fixed: the fix is c10; a passing run is the search's "bad"
    run = bisect(linear(16), exits(lambda c: index(c) < 10), good="c15", bad="c0", find_fix=True)
    r, oracle, events = run.record.result, run.oracle, run.events
    assert (
        r is not None
        and r.first_bad == "c10"
        and r.kind == "first fixed commit"
        and r.last_good == "c9"
    )
    # c7 fails: buggy, the search's "good"; c11 passes: fixed, its "bad"
    assert oracle.tried == ["c15", "c0", "c7", "c11", "c9", "c10", "c10", "c9"]
    # the fixed commits are marked "bad" for the search, the buggy ones "good"
    assert all((m == "bad") == (index(sha) >= 10) for _, sha, m in events.marks if m != "skip")


def test_find_fix_reports_the_fail_rates_of_the_buggy_and_the_clean_commits() -> None:
    """The noisy search learns its rates in its own sense (with --find-fix its "bad" commits
    are the fixed ones, and they "fail" by passing); the result says them in the bug's: the
    buggy commits fail 70% of their runs, the fixed ones never. (They were reported the
    search's way round: buggy 0.90, clean 0.27.)"""
    rnd = random.Random(2)

    def script(sha: str, n: int) -> AttemptObs:
        fails = index(sha) < 10 and rnd.random() < 0.7  # c0..c9 buggy, fixed from c10
        return AttemptObs(exit_code=1 if fails else 0, gtest=False)

    r = bisect(
        linear(16), script, good="c15", bad="c0", find_fix=True, confidence=0.95
    ).record.result
    assert (
        r is not None
        and r.first_bad == "c10"
        and r.kind == "first fixed commit"
        and r.rates is not None
    )
    buggy, clean = r.rates.bad, r.rates.good
    assert 0.55 < buggy < 0.85 and clean < 0.15


BUG = "CONSUMER_STARVED:layernorm_fused_rm.cpp:TRISC0:CWFW"
ELSEWHERE = "CONSUMER_STARVED:writer_binary.cpp:BRISC:CWFW"
REPRO = "LayerNormBackwardOpTest.BugRepro_Deterministic_2048Features"


def hung_at(key: str) -> AttemptObs:
    return AttemptObs(
        exit_code=1,
        tests=(TestObs(name=REPRO, status=TestStatus.TIMEOUT),),
        timed_out=True,
        hang=key,
    )


def test_the_bugs_hang_place_is_the_signature_and_hangs_elsewhere_are_noise() -> None:
    """c6 on hangs at the bug's place; c0..c5 pass, except that c5 first hangs elsewhere (a
    flaky device), and so does the bad endpoint's first run."""

    def script(sha: str, n: int) -> AttemptObs:
        if sha in ("c5", "c11") and n == 0:
            return hung_at(ELSEWHERE)
        return (
            hung_at(BUG)
            if index(sha) >= 6
            else AttemptObs(exit_code=0, tests=(TestObs(name=REPRO, status=TestStatus.PASSED),))
        )

    req = request("c0", "c11", policy=Policy(on_hang=OnHang.BAD))
    run = start(made_up(linear(12), req), req, ScriptedOracle(script))
    r, oracle, b = run.run(), run.oracle, run.bisect
    assert r.first_bad == "c6"
    assert r.signature is not None and r.signature.hang and r.signature.hang_key == BUG
    # the endpoint ran until two hangs agreed on the place: elsewhere, then twice at the bug's
    # c5's hang elsewhere is noise: it runs again and passes
    assert oracle.tried == ["c11", "c11", "c11", "c0", "c5", "c5", "c8", "c6", "c6", "c5"]
    assert [s.mark for s in b.record.steps][:3] == [Mark.SKIP, Mark.SKIP, Mark.BAD]
    first_c5 = next(s for s in b.record.steps if s.action.sha == "c5")
    (outcome, why), *_ = first_c5.outcomes
    assert outcome is RunOutcome.NOISE and "elsewhere" in why and ELSEWHERE in why
    assert first_c5.mark is not Mark.BAD


def test_endpoints_that_do_not_separate_stop_with_the_record() -> None:
    req = request("c0", "c7")
    b = start(made_up(linear(8), req), req, ScriptedOracle(exits(lambda c: False))).bisect
    with pytest.raises(EndpointsDoNotSeparate) as exc:
        b.run(BisectEvents())
    assert exc.value.record is b.record and b.record.state is BisectState.COMPLETE
    assert [s.action.sha for s in b.record.steps] == ["c7"]  # the bad endpoint passed: stop


def test_two_jobs_in_process_share_the_search() -> None:
    req = request("c0", "c31", jobs=2)
    oracle = ScriptedOracle(exits(lambda c: index(c) >= 20))
    run = start(made_up(linear(32), req), req, oracle, oracle)
    r = run.run()
    assert r.first_bad == "c20"
    assert {s.action.job for s in run.record.steps} == {0, 1}


# ---------------------------------------------------------------- --resume: replay, repeat nothing
@pytest.mark.parametrize("after", [1, 3, 6])
def test_an_interrupted_bisect_resumes_from_its_saved_state_repeating_no_step(
    tmp_path: Path, after: int
) -> None:
    """Ctrl-C after ``after`` steps; the state read back (as ``--resume`` reads it) and
    replayed: the rest is exactly what the uninterrupted bisect would have run, nothing twice."""
    req = request("c0", "c15")
    rng = made_up(linear(16), req)
    script = exits(lambda c: index(c) >= 9)
    whole = start(rng, req, ScriptedOracle(script))
    whole.run()

    ws = ScriptedWorkspace(saved=tmp_path / "bisect.json")
    first = start(rng, req, ScriptedOracle(script, interrupt_at=after), ws=ws)
    with pytest.raises(KeyboardInterrupt):
        first.bisect.run(first.events)
    saved = ws.load()
    assert saved.state is BisectState.INTERRUPTED and saved.stop_reason == "interrupted"
    assert len(saved.steps) == after and saved.result is None
    before = list(saved.steps)

    again = start(rng, saved, ScriptedOracle(script), ws=ScriptedWorkspace(saved=ws.saved))
    r = again.run()
    assert r.first_bad == "c9" and r.confirmed is True
    assert again.record.steps[:after] == before  # nothing finished was lost or redone
    assert first.oracle.tried + again.oracle.tried == whole.oracle.tried
    keys = [(s.action.kind, s.sha) for s in again.record.steps]
    assert len(keys) == len(set(keys))


# ---------------------------------------------------------------- the endpoints and merge bases
@pytest.mark.parametrize("command", [False, True], ids=["run", "command"])
def test_endpoints_that_cannot_be_tested_stop_with_the_last_runs_reason(command: bool) -> None:
    """No BugRepro test at the endpoints (nothing to --pick): the bad endpoint cannot be tested;
    the error says so, with that run's reason, and how to go on: --pick the tests for lnrepro's
    run; for a --command (nothing to pick), where the command runs."""
    oracle = RunOracleSpec(backend=TtMetalSpec(checkout=Path("/scripted")))
    req = request("c0", "c15") if command else request("c0", "c15", oracle=oracle)
    run = start(
        made_up(linear(16), req), req, ScriptedOracle(exits(lambda c: True), frozenset({"c15"}))
    )
    with pytest.raises(EndpointsDoNotSeparate) as exc:
        run.bisect.run(run.events)
    line = exc.value.one_line()
    assert line.startswith("the bad endpoint c15 tested skip (last run: the build failed)")
    assert run.oracle.tried == ["c15"]
    assert ("--pick" in line) is not command
    assert ("runs in each commit's own worktree" in line) is command


def test_a_good_off_the_line_is_searched_through_its_merge_base(tmp_path: Path) -> None:
    """As git: a --good that is not an ancestor of --bad (a release tag) is accepted; git's
    merge base joins the search's good commits and is tested before any step."""
    shas = release_history(tmp_path / "r", branch_at=3, fix_on_branch=False)
    repo = tmp_path / "r"
    req = request(git(repo, "rev-parse", "v1").strip(), shas["c9"], repo=repo)
    rng = loop.commit_range(req)
    assert rng.merge_bases == [shas["c3"]] and rng.bottoms == [*req.good, shas["c3"]]
    names = {sha: name for name, sha in shas.items()}
    buggy = {shas[f"c{i}"] for i in range(5, 10)}
    run = start(rng, req, ScriptedOracle(exits(lambda c: c in buggy)))
    r = run.run()
    assert r.first_bad == shas["c5"] and r.confirmed is True
    kinds = [(s.action.kind, names[s.sha]) for s in run.record.steps]
    assert kinds[:3] == [
        (ActionKind.ENDPOINT, "c9"),
        (ActionKind.ENDPOINT, "r1"),
        (ActionKind.MERGE_BASE, "c3"),
    ]


def test_a_bad_merge_base_says_the_bug_was_fixed_on_the_good_side_and_resume_says_it_again(
    tmp_path: Path,
) -> None:
    shas = release_history(tmp_path / "r", branch_at=6, fix_on_branch=True)
    req = request(shas["r1"], shas["c9"], repo=tmp_path / "r")
    rng = loop.commit_range(req)
    assert rng.merge_bases == [shas["c6"]]
    buggy = {shas[f"c{i}"] for i in range(5, 10)}  # r0, r1: fixed on the release branch
    ws = ScriptedWorkspace(saved=tmp_path / "bisect.json")
    run = start(rng, req, ScriptedOracle(exits(lambda c: c in buggy)), ws=ws)
    with pytest.raises(EndpointsDoNotSeparate) as exc:
        run.bisect.run(run.events)
    base = shas["c6"][:12]
    line = exc.value.one_line()
    assert f"the merge base {base} is bad: the bug was fixed between {base} and [" in line
    assert base not in line.split(" and [")[1].split("]")[0]  # the goods, not the base
    assert "--find-fix" in line and exc.value.record is run.record
    saved = ws.load()
    assert saved.result is not None and (saved.result.error or "").startswith("the merge base")
    again = start(rng, saved, ScriptedOracle(exits(lambda c: c in buggy)), ws=ws)
    with pytest.raises(EndpointsDoNotSeparate) as exc2:
        again.bisect.run(again.events)
    assert exc2.value.one_line() == line and again.oracle.tried == []  # said, not re-run


def test_first_parent_and_paths_shape_the_range_the_loop_searches(tmp_path: Path) -> None:
    """git's reading of the look-alike's history, the loop in process: --first-parent takes
    merges as units (the culprit's merge is the answer); PATHS keep only the commits that
    touch them (the culprit itself, in a few steps)."""
    t = generate(tmp_path / "tt-metal", Spec(commits=120, tus=1))
    repo = Path(t.path)
    after = git(repo, "rev-list", "--ancestry-path", f"{t.culprit}..{t.bad}").split()
    buggy = {t.culprit, *after}
    req = request(t.good, t.bad, repo=repo, first_parent=True)
    rng = loop.commit_range(req)
    assert t.culprit not in rng.graph.order and t.culprit_merge in rng.graph.order
    run = start(rng, req, ScriptedOracle(exits(lambda c: c in buggy)))
    assert run.run().first_bad == t.culprit_merge

    req = request(t.good, t.bad, repo=repo, paths=("tt-train/",))
    rng = loop.commit_range(req)
    touching = git(repo, "rev-list", f"{t.good}..{t.bad}", "--", "tt-train/").split()
    assert set(rng.graph.order) - set(rng.bottoms) <= set(touching)
    run = start(rng, req, ScriptedOracle(exits(lambda c: c in buggy)))
    r = run.run()
    assert r.first_bad == t.culprit and r.steps <= 3


# ---------------------------------------------------------------- what a run means
SHAPE_BUG = "Expected: max_diff < #, actual: #"
SHAPE_SICK = "Value of: device.is_healthy()"


def test_failures_of_another_shape_are_noise_and_do_not_mislead_the_search() -> None:
    """Every clean commit's test fails 30% of the time, but as a sick device fails
    (``device.is_healthy()``), not as the bug does: git's search, given these rules, retries
    those as noise and still names the culprit."""
    rnd = random.Random(3)

    def script(sha: str, n: int) -> AttemptObs:
        if index(sha) >= 9:
            return AttemptObs(
                exit_code=1,
                tests=(TestObs(name=REPRO, status=TestStatus.FAILED, shapes=(SHAPE_BUG,)),),
            )
        if rnd.random() < 0.3:
            return AttemptObs(
                exit_code=1,
                tests=(TestObs(name=REPRO, status=TestStatus.FAILED, shapes=(SHAPE_SICK,)),),
            )
        return AttemptObs(exit_code=0, tests=(TestObs(name=REPRO, status=TestStatus.PASSED),))

    run = bisect(linear(16), script, good="c0", bad="c15")
    r = run.record.result
    assert r is not None and r.first_bad == "c9" and r.confirmed is not False
    assert r.signature is not None and r.signature.tests == (REPRO,)
    assert r.signature.shapes == (SHAPE_BUG,)
    noise = [w for s in run.record.steps for o, w in s.outcomes if o is RunOutcome.NOISE]
    assert noise, "seeded: some clean runs fail the other way"
    assert all(SHAPE_SICK in w for w in noise)
    assert all(s.mark is not Mark.BAD for s in run.record.steps if index(s.sha) < 9)


@pytest.mark.parametrize("on_crash", [OnCrash.MATCH, OnCrash.BAD])
def test_a_crash_is_the_bug_only_as_the_crash_policy_says(on_crash: OnCrash) -> None:
    """The bug exits 1; c7 segfaults once (exit 139). By default (match) a crash is the bug
    only when the bug crashes: noise, run again; ``--on-crash bad`` takes it as the bug."""

    def script(sha: str, n: int) -> AttemptObs:
        if sha == "c7" and n == 0:
            return AttemptObs(exit_code=139, gtest=False)
        return AttemptObs(exit_code=1 if index(sha) >= 9 else 0, gtest=False)

    run = bisect(linear(16), script, good="c0", bad="c15", policy=Policy(on_crash=on_crash))
    r = run.record.result
    assert r is not None and r.signature is not None and r.signature.exit_code == 1
    crashed = [s for s in run.record.steps if s.outcomes[0][1] == "killed by signal 11"]
    assert crashed
    if on_crash is OnCrash.MATCH:
        assert r.first_bad == "c9"
        assert all(s.outcomes[0][0] is RunOutcome.NOISE for s in crashed)
    else:
        assert r.first_bad != "c9" and crashed[0].mark is Mark.BAD


def test_find_fix_reports_the_bugs_runs_per_endpoint() -> None:
    """The record keeps a find-fix search's outcomes in the search's sense; the report's table
    of runs per commit says them in the bug's: the buggy --bad fails, the fix passes."""
    run = bisect(linear(8), exits(lambda c: index(c) < 5), good="c7", bad="c0", find_fix=True)
    assert run.record.steps[0].outcomes[0][0] is RunOutcome.FAIL  # c7 passed: the search's bad
    table = bisect_markdown(run.record)
    cells = [ln.split("|") for ln in table.splitlines() if ln.startswith("| <code>c")]
    rows = {c[2].strip(): c[3].strip() for c in cells if len(c) == 6}
    assert rows["--bad"].startswith("1/1 ") and rows["--good"].startswith("0/1 ")
    assert rows["first fixed"].startswith("0/2 ") and rows["last good"].startswith("2/2 ")


# ---------------------------------------------------------------- jobs
def test_a_lost_job_gives_its_commit_back_and_the_other_job_finishes() -> None:
    """Job 1's card host goes down on its first commit: that step judged nothing, so its commit
    goes back to the search and job 0 tests it; the loss is recorded."""
    req = request("c0", "c31", jobs=2)
    script = exits(lambda c: index(c) >= 20)
    job0, job1 = ScriptedOracle(script), ScriptedOracle(script, lost_at=0)
    run = start(made_up(linear(32), req), req, job0, job1)
    r = run.bisect.run(run.events)
    assert r.first_bad == "c20" and len(job1.tried) == 1
    (lost,) = run.record.lost
    assert (
        lost == LostJob(job=1, commit=job1.tried[0], why=lost.why)
        and "stopped answering" in lost.why
    )
    assert {s.action.job for s in run.record.steps} == {0}
    assert job1.tried[0] in job0.tried  # given back, tested by the job still there


def test_with_the_watcher_on_a_hang_it_does_not_place_teaches_no_signature() -> None:
    """--on-hang bad with the watcher on: the bad endpoint hangs, but its log never places the
    hang (no complete dump before the timeout). Three such runs are noise, not the bug's
    signature; the endpoint is skipped and the error says why and what to change."""
    from lnrepro.model.requests import RunOracleSpec, TtMetalSpec

    def script(sha: str, n: int) -> AttemptObs:
        if index(sha) >= 6:
            return AttemptObs(
                exit_code=1, tests=(TestObs(name=REPRO, status=TestStatus.TIMEOUT),), timed_out=True
            )
        return AttemptObs(exit_code=0, tests=(TestObs(name=REPRO, status=TestStatus.PASSED),))

    req = request(
        "c0",
        "c11",
        oracle=RunOracleSpec(backend=TtMetalSpec(checkout=Path("/scripted"), watcher_s=1)),
        policy=Policy(on_hang=OnHang.BAD),
    )
    run = start(made_up(linear(12), req), req, ScriptedOracle(script))
    with pytest.raises(EndpointsDoNotSeparate) as exc:
        run.bisect.run(run.events)
    assert run.record.signature is None and run.oracle.tried == ["c11"] * 3
    assert [s.mark for s in run.record.steps] == [Mark.SKIP] * 3
    assert exc.value.one_line().startswith("the bad endpoint c11 tested skip (last run: a hang")
    assert "does not place" in exc.value.one_line() and "--timeout" in exc.value.one_line()
